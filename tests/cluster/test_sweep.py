"""Sweeps: same numbers on every backend, resumable cache, validation."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

from spare_lib.cluster import cache_key, example_point, point_seed, run_sweep
from spare_lib.cluster.runs import sweeps as sweep

POINTS = [{"a": a, "b": b} for a in range(4) for b in (0.5, 2.0)]


def test_serial_result_in_input_order_with_point_seeds():
    df = run_sweep(POINTS, example_point, backend="serial", cache_dir=None, progress=False, root_seed=7)
    assert list(df.columns[:3]) == ["a", "b", "seed"]
    assert df[["a", "b"]].to_dict("records") == POINTS
    assert df["seed"].tolist() == [point_seed(p, 7) for p in POINTS]
    assert df["y"].tolist() == [p["a"] * p["b"] + example_point(**p, seed=point_seed(p, 7))["noise"]
                                for p in POINTS]


def test_processes_equal_serial():
    a = run_sweep(POINTS, example_point, backend="serial", cache_dir=None, progress=False, root_seed=3)
    b = run_sweep(pd.DataFrame(POINTS), example_point, backend="processes", cache_dir=None,
                  progress=False, root_seed=3, workers=2)
    pd.testing.assert_frame_equal(a, b)


def test_dask_local_cluster_equals_serial():
    pytest.importorskip("dask.distributed")
    a = run_sweep(POINTS, example_point, backend="serial", cache_dir=None, progress=False, root_seed=5)
    b = run_sweep(POINTS, example_point, backend="dask", cache_dir=None, progress=False, root_seed=5,
                  workers=2)
    pd.testing.assert_frame_equal(a, b)


def test_cache_makes_a_repeat_instant_and_is_keyed_on_the_point(tmp_path, monkeypatch):
    first = run_sweep(POINTS, example_point, backend="serial", cache_dir=tmp_path, progress=False,
                      root_seed=1)
    assert len(list(tmp_path.glob("*.json"))) == len(POINTS)
    # a repeat reads everything from disk: nothing is computed (any call would raise)
    def never(*args, **kwargs):
        raise AssertionError("a cached point was recomputed")

    monkeypatch.setattr(sweep, "_call", never)
    df = run_sweep([{**p, "seed": point_seed(p, 1)} for p in POINTS], example_point, backend="serial",
                   cache_dir=tmp_path, progress=False)
    pd.testing.assert_frame_equal(df, first)
    assert cache_key({"a": 1, "b": 2}, example_point) == cache_key({"b": 2, "a": 1}, example_point)
    assert cache_key({"a": 1, "b": 2}, example_point) != cache_key({"a": 1, "b": 3}, example_point)


def test_killed_sweep_resumes_with_only_missing_points(tmp_path):
    cache = tmp_path / "cache"
    points = [{"a": i, "b": 1.0, "sleep_s": 0.3} for i in range(12)]
    script = textwrap.dedent(f"""
        from spare_lib.cluster import example_point, run_sweep
        run_sweep({points!r}, example_point, backend="serial", cache_dir={str(cache)!r},
                  progress=False, root_seed=2)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(list(cache.glob("*.json"))) < 4:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # killed half-way, no chance to clean up
    finally:
        proc.wait(timeout=30)
    n_cached = len(list(cache.glob("*.json")))
    assert 4 <= n_cached < len(points)

    # Resume: cached points must not be recomputed (their files keep inode and mtime), and only
    # the missing ones are written.
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in cache.glob("*.json")}
    df = run_sweep(points, example_point, backend="serial", cache_dir=cache, progress=False, root_seed=2)
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in cache.glob("*.json")}
    assert {k: after[k] for k in before} == before
    assert len(after) - len(before) == len(points) - n_cached
    assert df["a"].tolist() == list(range(12))
    full = run_sweep(points, example_point, backend="serial", cache_dir=None, progress=False, root_seed=2)
    pd.testing.assert_frame_equal(df, full)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"backend": "threads"}, "backend must be one of"),
        ({"workers": 0}, "workers must be"),
        ({"fn": 3}, "fn must be callable"),
        ({"points": {"a": 1}}, "points must be"),
        ({"points": [1, 2]}, r"points\[0\] must be a dict"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = {"points": POINTS, "fn": example_point, "progress": False, "cache_dir": None, **kwargs}
    with pytest.raises(ValueError, match=match):
        run_sweep(**args)


def _echo(a: float, restart_s: float = 0.0, seed: int = 0) -> dict[str, float]:
    return {"restart_s": 10 * restart_s + 1, "y": a}


def test_results_never_overwrite_point_columns():
    """A result named like a point key becomes out_<key>; the input column keeps its values."""
    pts = [{"a": 1, "restart_s": 1200}, {"a": 2, "restart_s": 3600}]
    df = run_sweep(pts, _echo, backend="serial", cache_dir=None, progress=False)
    assert df["restart_s"].tolist() == [1200, 3600]
    assert df["out_restart_s"].tolist() == [12001, 36001] and df["y"].tolist() == [1, 2]
    # a key absent from every point keeps its name
    df2 = run_sweep([{"a": 1}], _echo, backend="serial", cache_dir=None, progress=False)
    assert "restart_s" in df2.columns and "out_restart_s" not in df2.columns


def test_point_keys_and_validation_name_the_problem():
    keys = sweep.point_keys()
    from dataclasses import fields

    from spare_lib.cluster.config import ClusterConfig

    assert {f.name for f in fields(ClusterConfig)} <= set(keys)
    assert {"method", "N", "r", "ckpt_steps", "seed", "failure_seed", "layout"} <= set(keys)
    with pytest.raises(ValueError, match="unknown key 'restart_min'; valid keys: method, N"):
        sweep.check_point_keys({"method": "spare", "N": 200, "restart_min": 5})
    with pytest.raises(ValueError, match="must set 'N'"):
        sweep.check_point_keys({"method": "spare"})
    with pytest.raises(ValueError, match="exact_patch must be true or false"):
        sweep.validate_point({"method": "spare", "N": 200, "r": 3, "exact_patch": "maybe"})
    with pytest.raises(ValueError, match=r"r must be in \[1, 200\]"):
        sweep.validate_point({"method": "rep", "N": 200, "r": 300})
    sweep.validate_point({"method": "spare", "N": 200.0, "r": 4, "restart_s": 1200, "exact_patch": "true"})


def test_simulate_point_forwards_failure_seed_and_knobs():
    """failure_seed gives every method and r the same failure streams; config and simulate
    knobs pass through; the paper's checkpoint table is used only on the paper's times."""
    kw = {"N": 200, "steps": 30, "seed": 1}
    a = sweep.simulate_point("spare", r=4, failure_seed=7, **kw)
    b = sweep.simulate_point("spare", r=4, failure_seed=7, **kw)
    c = sweep.simulate_point("spare", r=4, failure_seed=8, **kw)
    assert a == b and a != c and a["ckpt_source"] == "paper"
    d = sweep.simulate_point("spare", r=4, restart_s=600.0, weibull_shape=1.0, exact_patch=True,
                             max_wall_s=1e9, **kw)
    assert d["ckpt_source"] == "analytic" and "method" not in d


def test_simulate_points_runs_every_point_per_seed_with_common_failures():
    """One row per (point, seed), points outer, the point's keys kept; the same table twice;
    each run is ``simulate`` with that failure seed and the batch's task seed (task i of the
    batch: point-major order)."""
    from spare_lib.cluster import h100_600k, simulate, simulate_points
    from spare_lib.cluster.runs.simulate import task_seed

    cfg = h100_600k(8, steps=40, system_mtbf_s=1200.0, restart_s=60.0)
    pts = [{"method": "spare", "N": 8, "r": 2, "C": 10, "tag": "a"},
           {"method": "ckpt", "N": 8, "r": 1, "C": 10, "tag": "b"}]
    runs = simulate_points(pts, lambda p: cfg, [11, 12, 13], seed=5, workers=1)
    assert len(runs) == 6 and runs.tag.tolist() == ["a"] * 3 + ["b"] * 3
    assert runs.trial.tolist() == [0, 1, 2] * 2 and runs.completed.all()
    again = simulate_points(pts, lambda p: cfg, [11, 12, 13], seed=5, workers=1)
    assert runs.equals(again)
    one = simulate("ckpt", 8, 1, 10, cfg, failure_seed=12, max_wall_s=50 * cfg.t0_s(),
                   seed=task_seed(5, 4))
    assert runs.ttt_over_t0.iloc[4] == one.ttt_over_t0
