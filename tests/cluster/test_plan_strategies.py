"""Planning across strategies (spare_lib.cluster.planning.strategies): common random numbers, strict JSON,
the recommendation, bad inputs, and the helpers (paired bootstrap, stall-rule model)."""

from __future__ import annotations

import importlib
import json
import math

import numpy as np
import pytest

from spare_lib.cluster import cluster_spec, h100_600k
from spare_lib.cluster.planning.strategies import (
    EXACT,
    STRATEGIES,
    paired_gain,
    plan_strategies,
    stall_rule_model,
    trial_seeds,
)

# the module, not the function spare_lib.cluster re-exports under the same name
sim_mod = importlib.import_module("spare_lib.cluster.simulate")
SMALL = h100_600k(20, steps=40, rejoin_s=600.0, microbatches=4, system_mtbf_s=120.0)


@pytest.fixture(scope="module")
def small_plan():
    return plan_strategies(SMALL, 20, trials=2, workers=1, seed=3)


#: Designed TTT/T0 of every strategy (fake runs): elastic-drop is the fastest finished strategy,
#: spare+repair the fastest exact one, CKPT-only "faster" still but unfinished (a lower bound).
DESIGNED = {"spare": 3.0, "rep": 4.0, "ckpt": 1.5, "spare+repair": 2.5, "elastic-drop": 2.0,
            "elastic-rebalance": 2.7}


def test_recommendation_is_the_designed_minimum(monkeypatch) -> None:
    """plan_strategies on fake runs whose TTT/T0 is set by design (the larger r, the faster; trial
    t adds 0.002·t): the recommendation, the exact recommendation, each strategy's best r and the
    gains are the designed ones, and an unfinished strategy is never recommended."""
    import dataclasses
    from collections import Counter

    template = sim_mod.simulate("spare", 20, 3, None, SMALL.with_(system_mtbf_s=1e6), seed=1)
    trial = Counter()

    def fake(tasks, **kw):
        out = []
        for t in tasks:
            key = (t["method"], t["r"])
            ttt = DESIGNED[t["method"]] - 0.01 * t["r"] + 0.002 * trial[key]
            trial[key] += 1
            out.append(dataclasses.replace(template, ttt_over_t0=ttt,
                                           completed=t["method"] != "ckpt"))
        return out

    monkeypatch.setattr(sim_mod, "simulate_many", fake)
    p = plan_strategies(SMALL, 20, trials=3, workers=1, seed=3)
    assert p.recommended == "elastic-drop" and p.recommended_exact == "spare+repair"
    assert p.exact_changes_answer
    for s, c in p.best.items():
        rs = [x.r for x in p.candidates if x.strategy == s]
        assert c.r == max(rs)  # the designed best r of each strategy
        assert c.ttt_mean == pytest.approx(DESIGNED[s] - 0.01 * c.r + 0.002)  # mean of 0, 1, 2
    assert not p.best["ckpt"].finished
    for s, (g, lo, hi) in p.gains.items():
        assert g == pytest.approx(1 - p.best["elastic-drop"].ttt_mean / p.best[s].ttt_mean)
        assert lo <= g + 1e-12 and g <= hi + 1e-12


def test_real_plan_is_consistent(small_plan) -> None:
    """On real runs: the recommendation is a finished strategy that no finished strategy beats."""
    p = small_plan
    assert set(p.best) == set(STRATEGIES)
    rec = p.best[p.recommended]
    assert rec.finished and all(rec.ttt_mean <= c.ttt_mean for c in p.best.values() if c.finished)
    assert p.recommended_exact in EXACT
    assert p.exact_changes_answer == (p.recommended != p.recommended_exact)
    assert all(g >= 0 for g, _, _ in p.gains.values())


def test_to_dict_is_strict_json(small_plan) -> None:
    d = small_plan.to_dict()
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["recommended"] == small_plan.recommended
    assert len(back["candidates"]) == len(small_plan.candidates)
    assert small_plan.frame().shape[0] == len(STRATEGIES)


@pytest.fixture
def seen(monkeypatch) -> list:
    """The simulation tasks plan_strategies hands to simulate_many, in order."""
    tasks_seen: list = []
    real = sim_mod.simulate_many

    def spy(tasks, **kw):
        tasks_seen.extend(tasks)
        return real(tasks, **kw)

    monkeypatch.setattr(sim_mod, "simulate_many", spy)
    return tasks_seen


def test_every_candidate_of_a_trial_gets_the_same_failure_seed(seen) -> None:
    p = plan_strategies(SMALL, 20, trials=3, workers=1, seed=5, window=1,
                        strategies=("spare", "rep", "elastic-rebalance"))
    seeds = trial_seeds(5, 3)
    assert p.trial_seeds == seeds and len(set(seeds)) == 3
    # tasks are ordered (strategy, r, trial): every candidate's trial t has failure seed seeds[t]
    assert len(seen) == 3 * len(p.candidates)
    for i, t in enumerate(seen):
        assert t["failure_seed"] == seeds[i % 3]
    assert len({(t["method"], t["r"]) for t in seen}) == len(p.candidates) > 3


def test_common_failures_make_runs_repeatable() -> None:
    a = plan_strategies(SMALL, 20, trials=2, workers=1, seed=9, strategies=("spare", "ckpt"))
    b = plan_strategies(SMALL, 20, trials=2, workers=1, seed=9, strategies=("ckpt", "spare"))
    assert a.best["spare"].ttt == b.best["spare"].ttt and a.best["ckpt"].ttt == b.best["ckpt"].ttt


def test_rejoin_stall_is_passed_through(seen) -> None:
    strategies = ("spare", "elastic-drop")
    p = plan_strategies(SMALL, 20, trials=1, workers=1, stall_s=30.0, rejoin_stall_s=0.0,
                        strategies=strategies)
    assert p.config.stall_s == 30.0 and p.config.rejoin_stall_s == 0.0
    assert seen and all(t["config"].rejoin_stall_s == 0.0 for t in seen)
    assert p.to_dict()["config"]["rejoin_stall_s"] == 0.0
    # None keeps the config's value (None there: the rejoin batch pays stall_s)
    seen.clear()
    q = plan_strategies(SMALL, 20, trials=1, workers=1, stall_s=30.0, strategies=strategies)
    assert q.config.rejoin_stall_s is None and all(t["config"].rejoin_stall_s is None for t in seen)
    r = plan_strategies(SMALL.with_(rejoin_stall_s=5.0), 20, trials=1, workers=1,
                        strategies=strategies)
    assert r.config.rejoin_stall_s == 5.0
    # a free rejoin batch makes the rejoining method faster (by ≈ 12 % here); SPARe is unchanged
    assert p.best["elastic-drop"].ttt_mean <= q.best["elastic-drop"].ttt_mean + 1e-12
    assert p.best["spare"].ttt == q.best["spare"].ttt  # SPARe+CKPT never rejoins


def test_accepts_a_cluster_spec() -> None:
    spec = cluster_spec(20_000, 1000, system_mtbf_s=120, restart_s=600)
    p = plan_strategies(spec, trials=1, steps=30, workers=1, rejoin_s=300.0,
                        strategies=("spare", "elastic-drop"))
    assert p.N == 20 and p.steps == 30 and p.config.rejoin_s == 300.0
    assert math.isnan(p.gains[next(iter(p.gains))][1])  # one trial: no interval


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"strategies": ("spare", "magic")}, "strategies"),
    ({"strategies": ("spare", "spare")}, "strategies"),
    ({"strategies": ()}, "strategies"),
    ({"trials": 0}, "trials"),
    ({"workers": 0}, "workers"),
    ({"steps": 0}, "steps"),
    ({"seed": -1}, "seed"),
    ({"window": -1}, "window"),
    ({"stall_s": -1.0}, "stall_s"),
    ({"rejoin_stall_s": -1.0}, "rejoin_stall_s"),
    ({"microbatches": 0}, "microbatches"),
    ({"max_wall_t0": 0.0}, "max_wall_t0"),
    ({"rep_placement": "random"}, "rep_placement"),
    ({"rejoin_s": math.inf, "strategies": ("spare", "elastic-drop")}, "rejoin_s"),
])
def test_bad_inputs_name_the_parameter(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        plan_strategies(SMALL, 20, **kwargs)


def test_bad_cluster_arguments() -> None:
    with pytest.raises(ValueError, match="N must be given"):
        plan_strategies(SMALL)
    with pytest.raises(ValueError, match="config_or_spec"):
        plan_strategies({"N": 20}, 20)
    with pytest.raises(ValueError, match="N must equal"):
        plan_strategies(cluster_spec(20_000, 1000), 30)


def test_paired_gain() -> None:
    g, lo, hi = paired_gain([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])
    assert g == pytest.approx(0.5) and lo == pytest.approx(0.5) and hi == pytest.approx(0.5)
    g, lo, hi = paired_gain([1.0, 1.2, 0.9, 1.1], [1.5, 1.4, 1.6, 1.5], seed=1)
    assert lo < g < hi
    assert all(np.isnan([paired_gain([1.0], [2.0])[1]]))
    with pytest.raises(ValueError, match="paired"):
        paired_gain([1.0, 2.0], [1.0])


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
