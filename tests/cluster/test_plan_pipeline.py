"""The one planning pipeline with simulation (:func:`spare_lib.cluster.planning.run_plan`).

What ``plan_simulated`` (the paper's three methods) and ``plan_strategies`` (every method) were
tested for, now on the one path: the simulated candidates and choices, the checkpoint search,
common random numbers, the verdict over the methods, the run knobs of the strategies, strict
JSON, the same numbers on every backend, and inputs refused with the parameter named. The
notebook-80 drivers around it (:mod:`spare_lib.cluster.planning.strategies`) close the file.
Plans from a fault log are in test_traces.py; the fast model alone in test_planning.py.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math

import pytest

from spare_lib.cluster import h100_600k
from spare_lib.cluster.planning import PlanRequest, cluster_spec, run_plan
from spare_lib.cluster.planning.candidates import checkpoint_candidates
from spare_lib.cluster.planning.evaluation import simulate_plan_point, trial_seed
from spare_lib.cluster.planning.models import fast_model
from spare_lib.cluster.planning.strategies import (
    STRATEGIES,
    closing_row,
    crossings,
    fast_choices,
    spec_of,
    stall_rule_model,
    stall_winners,
    summarize_sweep,
    sweep_strategies,
    trial_seeds,
    versus,
)
from spare_lib.cluster.planning.verdict import Contender, verdict
from spare_lib.figures.explore import simulated_frame
from spare_lib.registry.methods import PAPER_METHODS

# the modules, not the functions spare_lib.cluster re-exports under the same names
sweeps_mod = importlib.import_module("spare_lib.cluster.runs.sweeps")
sim_mod = importlib.import_module("spare_lib.cluster.runs.simulate")


def paper_spec(N: int):
    gpg, step = {200: (3000, 66.0), 600: (1000, 70.0)}[N]
    return cluster_spec(600_000, gpg, system_mtbf_s=300, restart_s=3600, checkpoint_s=58.8,
                        step_s=step, allreduce="preset")


@pytest.fixture
def seen(monkeypatch) -> list:
    """The points run_plan hands to run_sweep, in order."""
    points: list = []
    real = sweeps_mod.run_sweep

    def spy(pts, fn, **kw):
        points.extend(pts)
        return real(pts, fn, **kw)

    monkeypatch.setattr(sweeps_mod, "run_sweep", spy)
    return points


# ------------------------------------------------------------------------------ the paper's methods


def test_plan_small_run_and_common_random_numbers():
    s = paper_spec(200)
    res = run_plan(PlanRequest(s, trials=2, steps=200, seed=5, spare_r=(8, 9), rep_r=(3,),
                               backend="serial", checkpoint_factors=()))
    assert [(p.method, p.r) for p in res.points] == [("spare", 8), ("spare", 9), ("rep", 3),
                                                      ("ckpt", 1)]
    for p in res.points:
        assert p.trials == 2 and p.stage == 1 and len(p.ttt_trials) == 2
        assert p.checkpoint_steps == res.fast.point(p.method, p.r).checkpoint_steps
        assert p.ttt_min <= p.ttt_mean <= p.ttt_max and p.ttt_mean >= 1.0
    # no checkpoint search: every choice keeps the model's interval
    for ch in res.choices.values():
        assert ch.checkpoint_steps == ch.closed_form_checkpoint_steps
        assert ch.ttt == ch.ttt_at_closed_form_checkpoint and "checkpoint every" not in ch.describe()
    assert res.choices["spare"].r in (8, 9) and res.choices["rep"].r == 3
    assert res.choices["ckpt"].r == 1
    # common random numbers: trial t of every candidate runs with trial_seed(spec, t, root), which
    # depends on the cluster and t only, so one run is reproducible on its own
    assert res.crn and trial_seed(s, 0, 5) != trial_seed(s, 1, 5)
    t0 = trial_seed(s, 0, 5)
    point = {"method": "spare", "r": 8, "ckpt_steps": res.points[0].checkpoint_steps, "N": 200,
             "steps": 200, "compute_per_stack_s": 64.0, "allreduce_s": 2.0,
             "restart_s": 3600.0, "checkpoint_s": 58.8, "system_mtbf_s": 300.0,
             "n_gpus": 600_000, "max_wall_t0": 50.0, "trial": 0}
    seeded = simulate_plan_point(**point, seed=t0, failure_seed=t0)
    assert seeded["ttt_over_t0"] == res.points[0].ttt_trials[0] and seeded["completed"]
    # the verdict is the argmin of the choices, in the one JSON form
    fin = {n: c.ttt for n, c in res.choices.items() if c.finished}
    assert res.verdict.best.method == min(fin, key=fin.get) and res.verdict.source == "simulated"
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert d["choices"]["spare"]["summary"].startswith("SPARe+CKPT: simulated r =")
    assert d["best"] == d["verdict"]["best"] and d["best"]["method"] in PAPER_METHODS
    assert set(d["loss_vs_best"]) == set(PAPER_METHODS) and d["cluster"]["N"] == 200
    assert d["model_verdict"]["source"] == "model" and d["simulated"] and d["trials"] == 2


def test_plan_checkpoint_search():
    """Stage 2 simulates round(f·C0) at the stage-1 best r of each finished method and keeps
    the interval with the lowest mean; the verdict compares the kept intervals."""
    res = run_plan(PlanRequest(paper_spec(200), methods=("spare", "rep"), trials=2, steps=300,
                               seed=3, spare_r=(8, 9), rep_r=(3,), backend="serial",
                               checkpoint_factors=(0.5, 2.0)))
    for ch in res.choices.values():
        c0 = res.fast.point(ch.method, ch.r).checkpoint_steps
        at_r = [p for p in res.points if p.method == ch.method and p.r == ch.r]
        assert ch.closed_form_checkpoint_steps == c0
        assert ch.checkpoint_candidates == checkpoint_candidates(c0, (0.5, 2.0))
        assert sorted(p.checkpoint_steps for p in at_r) == list(ch.checkpoint_candidates)
        assert [p.stage for p in at_r if p.checkpoint_steps == c0] == [1]
        best = min(at_r, key=lambda p: p.ttt_mean)
        assert (ch.checkpoint_steps, ch.ttt) == (best.checkpoint_steps, best.ttt_mean)
        assert ch.ttt <= ch.ttt_at_closed_form_checkpoint and ch.checkpoint_steps in ch.checkpoint_tied
        assert "checkpoint every" in ch.describe()
    # the other r of a method are simulated at C0 only
    spare = res.choices["spare"]
    assert [p.stage for p in res.points if p.method == "spare" and p.r != spare.r] == [1]
    v = res.verdict
    other = next(c for n, c in res.choices.items() if n != v.best.method)
    assert v.best.ttt == min(c.ttt for c in res.choices.values())
    assert v.loss(other.method) == pytest.approx(other.ttt / v.best.ttt - 1)
    assert json.loads(json.dumps(res.to_dict()))["checkpoint_factors"] == [0.5, 2.0]
    frame = simulated_frame(res)
    assert len(frame) == len(res.points) and list(frame["stage"]) == [p.stage for p in res.points]


def test_plan_same_on_processes_and_serial():
    """Seeds are derived from the points, so the worker pool gives identical numbers."""
    kw = {"model": "finite", "trials": 2, "steps": 100, "seed": 1, "spare_r": (9,),
          "rep_r": (3,), "methods": ("spare", "rep")}
    a = run_plan(PlanRequest(paper_spec(200), backend="serial", **kw))
    b = run_plan(PlanRequest(paper_spec(200), backend="processes", workers=2, **kw))
    assert a.to_dict() == b.to_dict()  # nan -> None, so equal dicts mean equal numbers


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: PlanRequest(s, trials=0), r"trials must be an integer in \[1, 10000\] or None, got 0"),
        (lambda s: run_plan(PlanRequest(s, model="finite", trials=1, spare_r=(30,))),
         r"spare_r must be integers in \[2, 20\] at N = 600"),
        (lambda s: run_plan(PlanRequest(s, model="finite", trials=1, rep_r=(601,))),
         r"rep_r must be integers in \[2, 600\] at N = 600"),
        (lambda s: PlanRequest(s, trials=1, steps="often"), "steps must be an integer"),
        (lambda s: run_plan(PlanRequest(s, model="finite", trials=1, methods=("spare", "rep"),
                                        spare_r=(), rep_r=())), "leave no candidate"),
        (lambda s: PlanRequest(s, checkpoint_factors=(0.5, 0.0)),
         r"checkpoint_factors must be numbers in \(0, 100\]"),
        (lambda s: PlanRequest("N=600"), "spec must be a ClusterSpec"),
        (lambda s: PlanRequest(s, methods=("spare", "magic")), "method must be one of"),
        (lambda s: PlanRequest(s, methods=("spare", "spare")), "methods must not repeat"),
        (lambda s: PlanRequest(s, methods=()), "methods must be 'all' or a comma list"),
        (lambda s: PlanRequest(s, r_window=-1), r"r_window must be an integer in \[0, 64\]"),
        (lambda s: PlanRequest(s, layout="zigzag"), "layout must be one of"),
        (lambda s: PlanRequest(s, rep_placement="random"), "rep_placement must be one of"),
        (lambda s: PlanRequest(s, model="exact"), "model must be one of"),
        (lambda s: PlanRequest(s, workers=0), "workers must be an integer >= 1"),
        (lambda s: PlanRequest(s, seed=-1), "seed must be an integer in"),
        (lambda s: PlanRequest(s, run_cap_t0=0.0), r"run_cap_t0 must be in \[1, 1000000\], got 0.0"),
        (lambda s: PlanRequest(s, min_restarts=-1), "min_restarts must be an integer in"),
        (lambda s: PlanRequest(s, trace="stepfun"), "trace must be a TraceFailures or None"),
        (lambda s: run_plan(PlanRequest(s, model="finite", trials=1, steps=5, backend="mpi",
                                        methods=("ckpt",))), "backend must be one of"),
    ],
)
def test_validation_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call(paper_spec(600))


# ------------------------------------------------------------------------------ every method

#: N = 20 groups of 30,000 GPUs, m = 2 min: only the elastic methods train (notebook 80's
#: extreme); 40 steps keep it fast.
SMALL = h100_600k(20, steps=40, rejoin_s=600.0, microbatches=4, system_mtbf_s=120.0)


@pytest.fixture(scope="module")
def every_method():
    return run_plan(PlanRequest(spec_of(SMALL, 20), methods=STRATEGIES, trials=2, steps=40,
                                seed=3, backend="serial"))


def test_every_method_verdict_is_the_argmin_of_the_means(every_method):
    res = every_method
    assert set(res.choices) == set(STRATEGIES) == set(res.request.methods)
    fin = {n: c.ttt for n, c in res.choices.items() if c.finished}
    assert fin and res.verdict.best.method == min(fin, key=fin.get)
    for n, c in res.choices.items():  # each method's r is its stage-1 argmin over r
        mine = [p for p in res.points if p.method == n and p.stage == 1]
        pool = [p for p in mine if p.completed == p.trials] or mine  # unfinished: lower bounds
        assert c.ttt_at_closed_form_checkpoint == min(p.ttt_mean for p in pool)
    best = res.verdict.best
    for x in res.verdict.losses:
        c = res.choices[x.method]
        assert x.loss == pytest.approx(c.ttt / best.ttt - 1)
        assert x.lower_bound == (not c.finished)
        if not x.lower_bound:  # a paired (Holm-adjusted) t interval around the loss
            assert x.ci_low <= x.loss <= x.ci_high and x.confidence >= 0.95


def test_every_method_json_is_strict_and_states_assumptions(every_method):
    d = json.loads(json.dumps(every_method.to_dict(), allow_nan=False))
    assert d["methods"] == list(STRATEGIES) and set(d["choices"]) == set(STRATEGIES)
    assert len(d["points"]) == len(every_method.points) and d["best"] == d["verdict"]["best"]
    assert set(d["loss_vs_best"]) == set(STRATEGIES) and set(d["fast"]) == set(STRATEGIES)
    text = " ".join(d["assumptions"])
    assert "failed groups stay dead until the next global restart" in text
    assert "rejoins after rejoin_s = 600 s" in text and "b = 4 micro-batches" in text
    assert simulated_frame(every_method).shape[0] == len(every_method.points)


def test_every_candidate_of_a_trial_gets_the_same_failure_seed(seen) -> None:
    spec = spec_of(SMALL, 20)
    res = run_plan(PlanRequest(spec, methods=("spare", "rep", "elastic-rebalance"), trials=3,
                               steps=40, seed=5, r_window=1, checkpoint_factors=(),
                               backend="serial"))
    seeds = [trial_seed(spec, t, 5) for t in range(3)]
    assert len(set(seeds)) == 3 and res.crn
    assert len(seen) == 3 * len(res.points)
    for p in seen:  # every candidate's trial t has the seed and the failure seed of trial t
        assert p["seed"] == p["failure_seed"] == seeds[p["trial"]]
    assert len({(p["method"], p["r"]) for p in seen}) == len(res.points) > 3
    off = run_plan(dataclasses.replace(res.request, common_failures=False))
    assert not off.crn and off.points != res.points


def test_common_failures_make_runs_repeatable() -> None:
    kw = {"trials": 2, "steps": 40, "seed": 9, "backend": "serial", "checkpoint_factors": ()}
    a = run_plan(PlanRequest(spec_of(SMALL, 20), methods=("spare", "ckpt"), **kw))
    b = run_plan(PlanRequest(spec_of(SMALL, 20), methods=("ckpt", "spare"), **kw))
    for m in ("spare", "ckpt"):
        assert a.choices[m].ttt == b.choices[m].ttt
        assert a.choices[m].r == b.choices[m].r


def _two(spec, **kw):
    return run_plan(PlanRequest(spec, methods=("spare", "elastic-drop"), trials=1, steps=40,
                                backend="serial", checkpoint_factors=(), **kw))


def test_run_knobs_are_passed_through(seen) -> None:
    p = _two(spec_of(SMALL.with_(stall_s=30.0, rejoin_stall_s=0.0), 20))
    assert p.request.spec.knob("stall_s") == 30.0 and p.request.spec.knob("rejoin_stall_s") == 0.0
    assert seen and all(pt["rejoin_stall_s"] == 0.0 and pt["stall_s"] == 30.0 for pt in seen)
    assert p.to_dict()["cluster"]["run"]["rejoin_stall_s"] == 0.0
    assert any("with a 0 s stall per rejoin batch" in a for a in p.assumptions)
    # None keeps the registry's default (None: the rejoin batch pays stall_s)
    seen.clear()
    q = _two(spec_of(SMALL.with_(stall_s=30.0), 20))
    assert q.request.spec.knob("rejoin_stall_s") is None and all("rejoin_stall_s" not in t for t in seen)
    assert any("with a 30 s stall per rejoin batch" in a for a in q.assumptions)
    r = _two(spec_of(SMALL.with_(rejoin_stall_s=5.0), 20))
    assert r.request.spec.knob("rejoin_stall_s") == 5.0
    # a free rejoin batch makes the rejoining method no slower (trial 0 of both)
    assert p.choices["elastic-drop"].ttt <= q.choices["elastic-drop"].ttt + 1e-12


def test_a_knob_spare_does_not_read_leaves_its_runs_alone() -> None:
    p = _two(spec_of(SMALL.with_(stall_s=30.0, rejoin_stall_s=0.0), 20))
    q = _two(spec_of(SMALL.with_(stall_s=30.0), 20))
    assert p.fast.curves["spare"] == q.fast.curves["spare"]  # the same candidates, C0 included
    assert (p.choices["spare"].r, p.choices["spare"].checkpoint_steps) == \
        (q.choices["spare"].r, q.choices["spare"].checkpoint_steps)
    assert p.choices["spare"].ttt == q.choices["spare"].ttt


def test_accepts_a_cluster_spec_with_run_knobs(seen) -> None:
    spec = cluster_spec(20_000, 1000, system_mtbf_s=120, restart_s=600, rejoin_s=300.0)
    res = run_plan(PlanRequest(spec, methods=("spare", "elastic-drop"), trials=1, steps=30,
                               backend="serial"))
    assert res.request.N == 20 and res.steps == 30 and res.steps_note == "given: 30 steps"
    assert spec.knob("rejoin_s") == 300.0 and all(p["rejoin_s"] == 300.0 for p in seen)
    (x,) = res.verdict.losses  # one trial: no interval, and the verdict says nothing is resolved
    assert not x.has_interval and not x.tied
    assert "from one trial per candidate: no interval" in res.verdict.statement


@pytest.mark.parametrize(("make", "name"), [
    (lambda: cluster_spec(20_000, 1000, stall_s=-1.0), r"stall_s must be in \[0, inf\)"),
    (lambda: cluster_spec(20_000, 1000, rejoin_stall_s=-1.0), "rejoin_stall_s must be in"),
    (lambda: cluster_spec(20_000, 1000, microbatches=0), r"microbatches must be an integer in \[1, 4096\]"),
    (lambda: cluster_spec(20_000, 1000, rejoin_s=0.0), r"rejoin_s must be in \(0, inf\]"),
    (lambda: cluster_spec(20_000, 1000, fetch_s=math.nan), "fetch_s must be in"),
    (lambda: cluster_spec(20_000, 1000, jitter=0.1), "run must set knobs among"),
    (lambda: PlanRequest({"N": 20}), "spec must be a ClusterSpec"),
    (lambda: spec_of(SMALL, 1), "N must be"),
])
def test_bad_inputs_name_the_parameter(make, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        make()


def test_spec_of_refuses_what_is_not_a_config() -> None:
    with pytest.raises(ValueError, match="config must be a ClusterConfig, got str"):
        spec_of("h100", 20)


# ------------------------------------------------------------------------------ notebook 80's drivers


def test_sweep_strategies_pairs_trials_across_methods_and_values(monkeypatch) -> None:
    tasks: list = []
    real = sim_mod.simulate_many

    def spy(ts, **kw):
        tasks.extend(ts)
        return real(ts, **kw)

    monkeypatch.setattr(sim_mod, "simulate_many", spy)
    df = sweep_strategies(SMALL, 20, "stall_s", [0.1, 30.0], strategies=("spare", "elastic-drop"),
                          trials=2, seed=4, workers=1)
    assert len(df) == len(tasks) == 2 * 2 * 2
    assert set(df["strategy"]) == {"spare", "elastic-drop"} and set(df["value"]) == {0.1, 30.0}
    seeds = trial_seeds(4, 2)
    assert len(set(seeds)) == 2 and seeds == trial_seeds(4, 2)
    for t, row in zip(tasks, df.itertuples(), strict=True):
        assert t["failure_seed"] == seeds[row.trial] and t["config"].stall_s == row.value
        assert (t["method"], t["r"], t["ckpt_steps"]) == (row.strategy, row.r, row.checkpoint_steps)
    with pytest.raises(ValueError, match="param must be a ClusterConfig field"):
        sweep_strategies(SMALL, 20, "stall_min", [1.0])


def test_stall_rule_model() -> None:
    assert stall_rule_model(70.0, 0.0, 300.0)["efficiency"] == 1.0
    short, long_ = stall_rule_model(70.0, 180.0, 300.0), stall_rule_model(134.0, 180.0, 300.0)
    assert long_["failures_per_poll"] > short["failures_per_poll"]
    assert long_["stalls_per_failure"] < short["stalls_per_failure"] < 1.0
    two = stall_rule_model(70.0, 180.0, 300.0, 2.0)
    assert two["efficiency"] < short["efficiency"]
    T = two["step_s"]
    assert T == pytest.approx(70.0 + 360.0 * (1 - math.exp(-T / 300.0)))
    with pytest.raises(ValueError, match="mtbf_s"):
        stall_rule_model(70.0, 1.0, 0.0)


def test_fast_choices_are_the_fast_models_best_and_the_sweeps_choice() -> None:
    """fast_choices is the point the planner centres its search on (FastModel.best), for every
    model; sweep_strategies runs every method there."""
    for model in ("predict", "finite"):
        got = fast_choices(SMALL, 20, model=model)
        fm = fast_model(spec_of(SMALL, 20), STRATEGIES, model, SMALL.steps)
        assert set(got) == set(STRATEGIES)
        assert all(got[s] == fm.best(s) for s in STRATEGIES)
    df = sweep_strategies(SMALL, 20, "stall_s", [0.1], strategies=("spare", "ckpt"), trials=1, workers=1)
    fc = fast_choices(SMALL, 20, ("spare", "ckpt"))
    for row in df.itertuples():
        assert (row.r, row.checkpoint_steps) == (fc[row.strategy].r, fc[row.strategy].checkpoint_steps)
    with pytest.raises(ValueError, match="model must be one of"):
        fast_choices(SMALL, 20, model="exact")
    with pytest.raises(ValueError, match="config must be a ClusterConfig"):
        fast_choices(spec_of(SMALL, 20), 20)
    with pytest.raises(ValueError, match="method must be one of"):
        fast_choices(SMALL, 20, ("spare", "nope"))


def _runs():
    import pandas as pd

    rows = []
    for N in (10, 20):
        for v in (1.0, 100.0):
            for s, base in (("spare", 2.0), ("spare+repair", 1.8), ("elastic-drop", 1.2),
                            ("elastic-rebalance", 1.5), ("ckpt", 9.0)):
                for t, d in enumerate((-0.1, 0.1)):
                    ttt = base * (1 + (v == 100.0) * (s.startswith("elastic"))) + d
                    rows.append({"N": N, "value": v, "strategy": s, "label": s, "r": 2, "trial": t,
                                 "ttt_over_t0": ttt, "availability": 0.9, "overhead": 1.0,
                                 "dropped_sample_fraction": 0.0, "stall_share": 0.1,
                                 "completed": s != "ckpt"})
    return pd.DataFrame(rows)


def test_summarize_sweep_and_stall_winners_read_the_means() -> None:
    summ = summarize_sweep(_runs())
    one = summ[(summ.N == 10) & (summ.value == 1.0) & (summ.strategy == "spare")].iloc[0]
    assert (one.ttt_over_t0, one.ttt_min, one.ttt_max, one.trials) == (pytest.approx(2.0), 1.9, 2.1, 2)
    assert not summ[summ.strategy == "ckpt"].finished.any() and summ[summ.strategy == "spare"].finished.all()
    w = stall_winners({"blocking": summ}).set_index(["N", "stall (s)"])
    lo, hi = w.loc[(10, 1.0)], w.loc[(10, 100.0)]
    assert lo["best"] == "Elastic-drop+CKPT" and lo["best exact"] == "Elastic-rebalance+CKPT"
    assert lo["SPARe best / elastic best"] == pytest.approx(1.8 / 1.2)
    assert lo["SPARe+CKPT / elastic best"] == pytest.approx(2.0 / 1.2)
    # the elastic methods doubled at the long stall: SPARe+repair is best, CKPT-only (capped) is not
    assert hi["best"] == "SPARe+repair+CKPT" and hi["SPARe best / elastic best"] == pytest.approx(1.8 / 2.4)
    with pytest.raises(ValueError, match="runs must be sweep_strategies frames"):
        summarize_sweep(_runs().drop(columns="N"))


def test_crossings_interpolate_log_linearly() -> None:
    """A power law ratio = (x/x0)^(-a) crosses 1 at x0 exactly, wherever the grid points are."""
    x0, a = 37.0, 0.8
    x = [0.1, 3.0, 20.0, 90.0, 600.0]
    assert crossings(x, [(v / x0) ** (-a) for v in x]) == [pytest.approx(x0, rel=1e-12)]
    assert crossings(x, [2.0] * len(x)) == []
    up_down = crossings([1.0, 10.0, 100.0], [0.5, 2.0, 0.5])
    assert up_down == [pytest.approx(10 ** 0.5), pytest.approx(10 ** 1.5)]
    with pytest.raises(ValueError, match="strictly increasing"):
        crossings([1.0, 1.0], [0.5, 2.0])
    with pytest.raises(ValueError, match="positive finite"):
        crossings([1.0, 2.0], [0.0, 2.0])


class _Plan:
    """What versus() reads of a simulated PlanResult."""

    simulated = True

    def __init__(self, cs):
        self.verdict = verdict(cs)


def test_versus_is_the_paired_t_interval_holm_adjusted() -> None:
    """Oracle: scipy's paired t-test (ttest_rel) at the Holm levels, ranked by its p-values."""
    from scipy import stats

    ref = (2.00, 2.10, 1.95, 2.05, 2.02)
    others = {"elastic-drop": (2.30, 2.35, 2.20, 2.41, 2.28),  # clearly slower than ref
              "rep": (3.1, 3.3, 3.0, 3.2, 3.4),
              "spare+repair": (2.02, 2.05, 2.00, 2.08, 1.98)}  # within noise
    cs = [Contender("spare", 8, 20, sum(ref) / 5, ref)]
    cs += [Contender(m, 1, 10, sum(t) / 5, t) for m, t in others.items()]
    cs.append(Contender("ckpt", 1, 2, 20.0, (20.0,) * 5, finished=False))
    out = {x["method"]: x for x in versus(_Plan(cs))}
    assert set(out) == set(others) | {"ckpt"}
    tests = {m: stats.ttest_rel(t, ref) for m, t in others.items()}
    order = sorted(others, key=lambda m: tests[m].pvalue)
    for rank, m in enumerate(order):
        level = 1 - 0.05 / (len(others) - rank)
        lo, hi = tests[m].confidence_interval(level)
        mean_o = sum(others[m]) / 5
        x = out[m]
        assert x["confidence"] == pytest.approx(level)
        assert (x["ci_low"], x["ci_high"]) == (pytest.approx(lo / mean_o), pytest.approx(hi / mean_o))
        assert x["gain"] == pytest.approx(1 - (sum(ref) / 5) / mean_o)
        assert x["ratio"] == pytest.approx(1 - x["gain"])
        assert x["ratio_ci_low"] == pytest.approx(1 - x["ci_high"])
        assert x["tied"] == (x["ci_low"] <= 0 <= x["ci_high"])
    assert out["spare+repair"]["tied"] and out["spare+repair"]["favours"] == "tied"
    assert out["elastic-drop"]["favours"] == out["rep"]["favours"] == "SPARe+CKPT"
    ck = out["ckpt"]  # stopped at the cap: a lower bound, no interval, and SPARe+CKPT finished
    assert not ck["finished"] and ck["ci_low"] != ck["ci_low"] and ck["favours"] == "SPARe+CKPT"
    with pytest.raises(ValueError, match="ref must be one of"):
        versus(_Plan(cs), ref="elastic-rebalance")
    with pytest.raises(ValueError, match="res must be a simulated PlanResult"):
        versus(object())


def test_versus_with_one_trial_resolves_nothing() -> None:
    cs = [Contender("spare", 8, 20, 2.0, (2.0,)), Contender("elastic-drop", 1, 10, 2.5, (2.5,))]
    (x,) = versus(_Plan(cs))
    assert x["ci_low"] != x["ci_low"] and not x["tied"] and x["favours"] == "unresolved"


def test_closing_row_of_a_plan_of_every_method(every_method) -> None:
    row = closing_row(every_method)
    v = every_method.verdict
    assert row["best_method"] == v.best.method and row["best_ttt_over_t0"] == v.best.ttt
    assert row["trials"] == 2 and row["statement"] == v.statement
    for s in STRATEGIES:
        c = every_method.choices[s]
        assert (row[f"r_{s}"], row[f"C_{s}"]) == (c.r, c.checkpoint_steps)
        if s != "spare":
            assert f"gain_vs_{s}_ci_low" in row and row[f"favours_vs_{s}"]
    exact = [c for c in v.contenders if c.trains and c.method not in ("elastic-drop",)]
    assert row["best_exact_ttt_over_t0"] == min(c.ttt for c in exact)
    # SMALL: only the elastic methods finish, so there is no SPARe-to-other ratio
    assert not any(c.finished for c in v.contenders if c.method.startswith("spare"))
    assert row["family_ratio"] != row["family_ratio"] and row["family_favours"] == "other"
