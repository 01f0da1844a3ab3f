"""Trace-driven planning (spare_lib.cluster.planning.traces): horizon extension, common random numbers, input
validation, strict JSON, determinism. A small synthetic trace keeps every test well under a second."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from spare_lib.cluster import ClusterConfig, simulate
from spare_lib.cluster.planning.traces import (
    _trial_seeds,
    plan_with_trace,
    simulate_with_trace,
    trace_failures,
)
from spare_lib.failures import FaultTrace

N, GPUS = 8, 16
CANDS = [("spare", 2, 5), ("rep", 2, 5), ("ckpt", 1, 5)]


@pytest.fixture(scope="module")
def trace() -> FaultTrace:
    """40 faults on 16 one-GPU servers over a 2 h window."""
    rng = np.random.default_rng(0)
    f = pd.DataFrame({"node": [f"s{i}" for i in rng.integers(0, 16, 40)],
                      "start_s": np.sort(rng.uniform(0, 7200, 40)), "end_s": np.nan,
                      "cause": None, "domain": None})
    return FaultTrace(f, 16, 7200.0, 1)


@pytest.fixture(scope="module")
def cfg() -> ClusterConfig:
    """100 steps of 61 s: T0 = 6100 s, runs last several T0 on this failure rate."""
    return ClusterConfig(steps=100, compute_per_stack_s=60.0, allreduce_s=1.0, restart_s=120.0,
                         checkpoint_s=5.0, n_gpus=GPUS)


@pytest.fixture(scope="module")
def runs(trace: FaultTrace, cfg: ClusterConfig) -> pd.DataFrame:
    # first horizon 1800 s in chunks of 900 s, far shorter than any run: every run must be extended
    return simulate_with_trace(trace, CANDS, cfg, N, trials=3, seed=7, backend="serial",
                               horizon_s=1800.0, chunk_s=900.0)


def test_prefix_property(trace: FaultTrace) -> None:
    long = trace_failures(trace, GPUS, 2, 9000.0, seed=3, chunk_s=900.0)
    short = trace_failures(trace, GPUS, 2, 2000.0, seed=3, chunk_s=900.0)
    np.testing.assert_array_equal(short, long[long[:, 0] < 2000.0])
    assert long[:, 0].max() > 8100.0 and np.all(np.diff(long[:, 0]) >= 0)
    rnd = trace_failures(trace, GPUS, 2, 9000.0, seed=3, chunk_s=900.0, placement="random")
    np.testing.assert_array_equal(np.sort(rnd[:, 0]), np.sort(long[:, 0]))  # same times, other ids


def test_horizon_extended_when_a_run_outlasts_it(runs: pd.DataFrame) -> None:
    assert (runs["extensions"] > 0).all()
    assert (runs["horizon_s"] > runs["total_s"]).all()  # every run ended inside its failures
    assert (runs["horizon_s"] > 1800.0).all() and runs["completed"].all()
    assert (runs["failures_in_run"] > 0).all()
    assert runs.attrs["first_horizon_s"] == 1800.0


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # simulate warns that the rows ran out
def test_without_extension_the_run_would_stop_failing(trace: FaultTrace, cfg: ClusterConfig,
                                                      runs: pd.DataFrame) -> None:
    """The bug the extension fixes: rows cut at 1800 s leave the rest of the run failure-free."""
    fam, jitter, _ = _trial_seeds(7, 0)
    cut = trace_failures(trace, GPUS, GPUS // N, 1800.0, seed=fam, chunk_s=900.0)
    short = simulate("rep", N, 2, 5, cfg, seed=jitter, failure_trace=cut)
    ok = runs[(runs.method == "rep") & (runs.trial == 0)].iloc[0]
    assert short.total_s < ok["total_s"] and short.full_restarts < ok["full_restarts"]


def test_common_random_numbers(trace: FaultTrace, cfg: ClusterConfig, runs: pd.DataFrame) -> None:
    """Every candidate of trial t replays (a prefix of) the same rows: rerunning each one on the
    trial's longest rows with the trial's jitter seed reproduces it exactly."""
    for t, g in runs.groupby("trial"):
        fam, jitter, _ = _trial_seeds(7, int(t))
        rows = trace_failures(trace, GPUS, GPUS // N, float(g["horizon_s"].max()), seed=fam, chunk_s=900.0)
        for _, row in g.iterrows():
            res = simulate(row["method"], N, int(row["r"]), int(row["ckpt_steps"]), cfg, seed=jitter,
                           failure_trace=rows)
            assert res.total_s == row["total_s"] and res.full_restarts == row["full_restarts"]
    # and the trials differ from one another
    assert runs[runs.method == "spare"]["total_s"].nunique() == 3


def test_deterministic_and_worker_independent(trace: FaultTrace, cfg: ClusterConfig,
                                              runs: pd.DataFrame) -> None:
    again = simulate_with_trace(trace, CANDS, cfg, N, trials=3, seed=7, backend="serial",
                                horizon_s=1800.0, chunk_s=900.0)
    pd.testing.assert_frame_equal(runs, again)
    pooled = simulate_with_trace(trace, CANDS[:1], cfg, N, trials=3, seed=7, workers=2,
                                 horizon_s=1800.0, chunk_s=900.0)
    np.testing.assert_array_equal(pooled["total_s"], runs[runs.method == "spare"]["total_s"])
    other = simulate_with_trace(trace, CANDS[:1], cfg, N, trials=3, seed=8, backend="serial",
                                horizon_s=1800.0, chunk_s=900.0)
    assert not np.array_equal(other["total_s"], pooled["total_s"])


def test_model_failures_without_trace(cfg: ClusterConfig) -> None:
    df = simulate_with_trace(None, CANDS[:2], cfg.with_(system_mtbf_s=600.0), N, trials=2, seed=1,
                             backend="serial")
    assert df["completed"].all() and df["horizon_s"].isna().all()
    assert df.attrs["system_mtbf_s"] == 600.0


def test_plan_strict_json_and_report(trace: FaultTrace, cfg: ClusterConfig) -> None:
    p = plan_with_trace(trace, cfg, N, trials=2, seed=0, backend="serial", checkpoint_factors=(2.0,))
    d = json.loads(json.dumps(p.to_dict(), allow_nan=False))
    assert set(d["choices"]) == {"spare", "rep", "ckpt"}
    assert {g["versus"] for g in d["gains"]} == {"rep", "ckpt"}
    assert all(d["choices"][m]["r"] in d["choices"][m]["tied_r"] for m in d["choices"])
    assert any(pt["stage"] == 2 for pt in d["points"])
    assert p.lines()[0].startswith("Failures:") and "Best:" in p.statement
    one = plan_with_trace(trace, cfg, N, trials=1, backend="serial", spare_r=[2], rep_r=[2],
                          include_ckpt=False, checkpoint_factors=())
    d1 = json.loads(json.dumps(one.to_dict(), allow_nan=False))  # NaN s.e. and CI become null
    assert d1["gains"][0]["ci_low"] is None and d1["choices"]["spare"]["ttt_se"] is None
    g = one.gains[0]
    c = one.choices
    assert g.gain == pytest.approx(1 - c["spare"].ttt_mean / c["rep"].ttt_mean)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"failures_method": "poisson"}, "failures_method"),
    ({"placement": "rack"}, "placement"),
    ({"dist": "pareto"}, "dist"),
    ({"trials": 0}, "trials"),
    ({"seed": -1}, "seed"),
    ({"horizon_s": -5.0}, "horizon_s"),
    ({"chunk_s": 0.0}, "chunk_s"),
    ({"max_wall_t0": 0.0}, "max_wall_t0"),
    ({"gpus_per_server": 0}, "gpus_per_server"),
    ({"tolerance_s": -1.0}, "tolerance_s"),
    ({"layout": "zigzag"}, "layout"),
    ({"backend": "mpi"}, "backend"),
    ({"N": 3}, "N"),
    ({"N": 1}, "N"),
    ({"candidates": [("spare", 99, 5)]}, "candidates r"),
    ({"candidates": [("magic", 2, 5)]}, "candidates"),
    ({"candidates": [("rep", 2, 0)]}, "candidates ckpt_steps"),
    ({"candidates": []}, "candidates"),
    ({"trace": "stepfun"}, "trace"),
    ({"config": "h100"}, "config"),
])
def test_simulate_bad_inputs_name_the_parameter(trace: FaultTrace, cfg: ClusterConfig, kwargs: dict,
                                                name: str) -> None:
    args = {"trace": trace, "candidates": CANDS, "config": cfg, "N": N, "backend": "serial", **kwargs}
    with pytest.raises(ValueError, match=name):
        simulate_with_trace(**args)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"checkpoint": "daily"}, "checkpoint"),
    ({"checkpoint": "paper"}, "checkpoint"),  # N = 8 is not in the paper's table
    ({"checkpoint_factors": (0.0,)}, "checkpoint_factors"),
    ({"spare_r": [9]}, "spare_r"),
    ({"rep_r": [1]}, "rep_r"),
    ({"spare_r": [], "rep_r": [], "include_ckpt": False}, "no candidate"),
    ({"steps": 0}, "steps"),
    ({"spare_window": -1}, "spare_window"),
    ({"failures_method": "x"}, "failures_method"),
])
def test_plan_bad_inputs_name_the_parameter(trace: FaultTrace, cfg: ClusterConfig, kwargs: dict,
                                            name: str) -> None:
    with pytest.raises(ValueError, match=name):
        plan_with_trace(trace, cfg, N, backend="serial", **kwargs)


def test_trace_failures_bad_inputs(trace: FaultTrace) -> None:
    with pytest.raises(ValueError, match="method"):
        trace_failures(trace, GPUS, 2, 100.0, method="x")
    with pytest.raises(ValueError, match="horizon_s"):
        trace_failures(trace, GPUS, 2, 0.0)
    with pytest.raises(ValueError, match="trace"):
        trace_failures(None, GPUS, 2, 100.0)  # type: ignore[arg-type]
