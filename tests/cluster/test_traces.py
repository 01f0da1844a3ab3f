"""Plans from a real fault log (spare_lib.cluster.planning.traces and the trace path of
run_plan): the prefix property of the synthesized failures, horizon extension, common random
numbers, determinism, strict JSON, the model's m from the log, input validation. A small
synthetic log keeps every test well under a second."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from spare_lib.cluster import simulate
from spare_lib.cluster.planning import PlanRequest, TraceFailures, cluster_spec, run_plan
from spare_lib.cluster.planning.evaluation import simulate_plan_point, trial_seed
from spare_lib.cluster.planning.printing import plan_lines
from spare_lib.cluster.planning.traces import (
    TraceSource,
    trace_failures,
    trace_source,
    trace_system_mtbf,
)
from spare_lib.failures import FaultTrace

N, GPUS = 8, 16
CANDS = [("spare", 2, 5), ("rep", 2, 5), ("ckpt", 1, 5)]
STEPS = 100
#: The first horizon: two chunks of 900 s, far shorter than any run (T0 = 100 x 61 s).
CHUNK_S, FIRST_CHUNKS = 900.0, 2


@pytest.fixture(scope="module")
def trace() -> FaultTrace:
    """40 faults on 16 one-GPU servers over a 2 h window."""
    rng = np.random.default_rng(0)
    f = pd.DataFrame({"node": [f"s{i}" for i in rng.integers(0, 16, 40)],
                      "start_s": np.sort(rng.uniform(0, 7200, 40)), "end_s": np.nan,
                      "cause": None, "domain": None})
    return FaultTrace(f, 16, 7200.0, 1)


@pytest.fixture(scope="module")
def spec():
    """16 GPUs in groups of 2 (N = 8), steps of 60 s + 1 s: T0 = 6100 s for 100 steps."""
    return cluster_spec(GPUS, GPUS // N, restart_s=120, checkpoint_s=5, step_s=61, allreduce_s=1.0)


@pytest.fixture(scope="module")
def cfg(spec):
    return spec.cluster_config(STEPS)


@pytest.fixture(scope="module")
def src(trace) -> TraceSource:
    import dataclasses

    return dataclasses.replace(trace_source(trace, chunk_s=CHUNK_S), first_chunks=FIRST_CHUNKS)


def _point(spec, method: str, r: int, C: int, trial: int, seed: int, src: TraceSource) -> dict:
    return simulate_plan_point(method, N, r, C, STEPS, spec.compute_per_stack_s,
                               spec.allreduce_s, spec.restart_s, spec.checkpoint_s,
                               spec.system_mtbf_s, spec.gpus, trial, seed, trace=src)


@pytest.fixture(scope="module")
def runs(spec, src) -> pd.DataFrame:
    """Every candidate x 3 trials, as the planner runs them (trial t: trial_seed(spec, t, 7))."""
    rows = []
    for t in range(3):
        seed = trial_seed(spec, t, 7)
        for m, r, c in CANDS:
            rows.append({"method": m, "r": r, "ckpt_steps": c, "trial": t, "seed": seed,
                         **_point(spec, m, r, c, t, seed, src)})
    return pd.DataFrame(rows)


def test_prefix_property(trace: FaultTrace) -> None:
    long = trace_failures(trace, GPUS, 2, 9000.0, seed=3, chunk_s=900.0)
    short = trace_failures(trace, GPUS, 2, 2000.0, seed=3, chunk_s=900.0)
    np.testing.assert_array_equal(short, long[long[:, 0] < 2000.0])
    assert long[:, 0].max() > 8100.0 and np.all(np.diff(long[:, 0]) >= 0)
    rnd = trace_failures(trace, GPUS, 2, 9000.0, seed=3, chunk_s=900.0, placement="random")
    np.testing.assert_array_equal(np.sort(rnd[:, 0]), np.sort(long[:, 0]))  # same times, other ids


def test_horizon_extended_when_a_run_outlasts_it(runs: pd.DataFrame, cfg) -> None:
    assert (runs["extensions"] > 0).all() and runs["completed"].all()
    # every run lasted longer than the first horizon, which is why it was extended
    assert (runs["ttt_over_t0"] * cfg.t0_s() > CHUNK_S * FIRST_CHUNKS).all()


def _long_rows(trace, seed: int) -> tuple[np.ndarray, np.random.SeedSequence]:
    fam, jitter = TraceSource.trial_seeds(seed)
    return trace_failures(trace, GPUS, GPUS // N, 400 * CHUNK_S, seed=fam, chunk_s=CHUNK_S), jitter


def test_extended_runs_equal_runs_on_the_trials_long_rows(trace, cfg, runs: pd.DataFrame) -> None:
    """Common random numbers, and extension done right: every candidate of trial t replays (a
    prefix of) the same rows, so rerunning each one on the trial's long rows with the trial's
    jitter seed reproduces it exactly."""
    for seed, g in runs.groupby("seed"):
        rows, jitter = _long_rows(trace, int(seed))
        for _, row in g.iterrows():
            res = simulate(row["method"], N, int(row["r"]), int(row["ckpt_steps"]), cfg,
                           seed=jitter, failure_trace=rows)
            assert res.ttt_over_t0 == row["ttt_over_t0"] and res.full_restarts == row["full_restarts"]
    # and the trials differ from one another
    assert runs[runs.method == "spare"]["ttt_over_t0"].nunique() == 3


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # simulate warns that the rows ran out
def test_without_extension_the_run_would_stop_failing(trace, cfg, runs: pd.DataFrame) -> None:
    """The bug the extension fixes: rows cut at the first horizon leave the rest of the run
    failure-free."""
    ok = runs[(runs.method == "rep") & (runs.trial == 0)].iloc[0]
    fam, jitter = TraceSource.trial_seeds(int(ok["seed"]))
    cut = trace_failures(trace, GPUS, GPUS // N, CHUNK_S * FIRST_CHUNKS, seed=fam, chunk_s=CHUNK_S)
    short = simulate("rep", N, 2, 5, cfg, seed=jitter, failure_trace=cut)
    assert short.ttt_over_t0 < ok["ttt_over_t0"] and short.full_restarts < ok["full_restarts"]


def _plan(spec, trace, **kw):
    t = TraceFailures(trace, name="synthetic", chunk_s=CHUNK_S,
                      horizon_s=kw.pop("horizon_s", CHUNK_S * FIRST_CHUNKS),
                      gpus_per_node_given=kw.pop("gpus_per_node_given", True))
    args = {"trials": 3, "seed": 7, "steps": STEPS, "backend": "serial",
            "checkpoint_factors": (), **kw}
    return run_plan(PlanRequest(spec, trace=t, **args))


def test_plan_with_a_log_is_deterministic_and_worker_independent(spec, trace) -> None:
    a = _plan(spec, trace)
    assert a.to_dict() == _plan(spec, trace).to_dict()
    assert a.to_dict() == _plan(spec, trace, backend="processes", workers=2).to_dict()
    other = _plan(spec, trace, seed=8)
    assert [p.ttt_trials for p in other.points] != [p.ttt_trials for p in a.points]
    assert any(p.extensions > 0 for p in a.points)  # the first horizon of 1800 s was extended


def test_the_models_m_is_the_logs(spec, trace, cfg) -> None:
    res = _plan(spec, trace, trials=1)
    src = trace_source(trace, chunk_s=CHUNK_S)
    m = trace_system_mtbf(src, cfg, N, trial_seed(spec, 0, 7))
    assert res.model_spec.system_mtbf_s == m != spec.system_mtbf_s
    assert res.to_dict()["cluster"]["model_system_mtbf_s"] == m
    assert any(f"give m = {m / 60:.3g} min, the model's m" in x for x in plan_lines(res))


def test_plan_with_a_log_strict_json_and_report(spec, trace) -> None:
    p = _plan(spec, trace, trials=2, seed=0, checkpoint_factors=(2.0,), gpus_per_node_given=False)
    d = json.loads(json.dumps(p.to_dict(), allow_nan=False))
    assert set(d["choices"]) == {"spare", "rep", "ckpt"} == set(d["loss_vs_best"])
    assert all(d["choices"][m]["r"] in d["choices"][m]["tied"] for m in d["choices"])
    assert any(pt["stage"] == 2 for pt in d["points"]) and not d["crn"]
    assert d["failures"] == {"source": "trace", "name": "synthetic", "method": "block-bootstrap",
                             "law": "weibull", "placement": "contiguous", "gpus_per_server": None,
                             "tolerance_s": 1.0, "checkpoint_rule": "closed-form", "label": "trace"}
    text = "\n".join(plan_lines(p))
    assert "failures from the log 'synthetic' (block-bootstrap)" in text
    assert "the same synthesized failures per trial for every candidate" in text
    assert "the log's nodes hold 1 GPUs each" in text  # the default that shapes the answer
    assert text.rstrip().splitlines()[-1].startswith("Verdict: ")
    one = _plan(spec, trace, trials=1, methods=("spare", "rep"), spare_r=(2,), rep_r=(2,))
    d1 = json.loads(json.dumps(one.to_dict(), allow_nan=False))  # NaN s.e. and CI become null
    (x,) = [v for k, v in d1["loss_vs_best"].items() if k != d1["best"]["method"]]
    assert x["ci_low"] is None and x["confidence"] is None and d1["points"][0]["ttt_se"] is None
    c = one.choices
    worse = next(m for m in c if m != one.verdict.best.method)
    assert x["loss"] == pytest.approx(c[worse].ttt / c[one.verdict.best.method].ttt - 1)
    assert "from one trial per candidate: no interval" in one.verdict.statement


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"trace": {"method": "poisson"}}, "failures_method must be one of"),
    ({"trace": {"placement": "rack"}}, "failures_placement must be one of"),
    ({"trace": {"law": "pareto"}}, "failures_law must be one of"),
    ({"trace": {"checkpoint_rule": "daily"}}, "failures_checkpoint must be one of"),
    ({"trace": {"checkpoint_rule": "paper"}},  # N = 8 is not in the paper's table
     r"failures_checkpoint='paper' needs N in \(200, 600, 1000\)"),
    ({"trace": {"chunk_s": 0.0}}, "failures_chunk_s must be"),
    ({"trace": {"tolerance_s": -1.0}}, "failures_tolerance_s must be"),
    ({"trace": {"gpus_per_server": 0}}, "gpus_per_server must be"),
    ({"trace": {"trace": "stepfun"}}, "trace must be a FaultTrace"),
    ({"checkpoint_factors": (0.0,)}, "checkpoint_factors must be"),
    ({"spare_r": (9,)}, r"spare_r must be integers in \[2, 3\] at N = 8"),
    ({"rep_r": (1,)}, r"rep_r must be integers in \[2, 8\] at N = 8"),
    ({"spare_r": (), "rep_r": (), "methods": ("spare", "rep")}, "leave no candidate"),
    ({"steps": 0}, "steps must be an integer"),
    ({"r_window": -1}, "r_window must be"),
    ({"trials": 0}, "trials must be"),
    ({"seed": -1}, "seed must be"),
    ({"backend": "mpi"}, "backend must be one of"),
])
def test_plan_bad_inputs_name_the_parameter(spec, trace, kwargs: dict, name: str) -> None:
    t = {"trace": trace, **kwargs.pop("trace", {})}
    with pytest.raises(ValueError, match=name):
        run_plan(PlanRequest(spec, trace=TraceFailures(**t), **{"trials": 1, "steps": STEPS,
                                                                 "backend": "serial", **kwargs}))


def test_a_negative_first_horizon_is_refused(spec, trace) -> None:
    with pytest.raises(ValueError, match="horizon_s"):
        run_plan(PlanRequest(spec, trace=TraceFailures(trace, horizon_s=-5.0), trials=1,
                             steps=STEPS, backend="serial"))


def test_trace_failures_bad_inputs(trace: FaultTrace) -> None:
    with pytest.raises(ValueError, match="method"):
        trace_failures(trace, GPUS, 2, 100.0, method="x")
    with pytest.raises(ValueError, match="horizon_s"):
        trace_failures(trace, GPUS, 2, 0.0)
    with pytest.raises(ValueError, match="trace"):
        trace_failures(None, GPUS, 2, 100.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="placement"):
        trace_failures(trace, GPUS, 2, 100.0, placement="rack")
