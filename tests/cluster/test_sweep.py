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

from spare_lib.cluster import cache_key, example_point, point_seed, run_sweep, sweep

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
