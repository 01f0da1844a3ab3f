"""One planning pipeline (issue 23): every mode is the same request through the same steps.

* The paper's three methods, alone or among ``--strategies all``, get the same candidates, the
  same runs (common random numbers: the trial seeds depend on the cluster only) and so the
  same choices; the model's verdict over them is the model-only plan's.
* A tie (paired interval covering 0) is never stated as a win; one trial gives no interval.
* Memory and size guards answer in one line before allocating.
"""

from __future__ import annotations

import dataclasses

import pytest

from spare_lib.cluster import PlanRequest, cluster_spec, run_plan
from spare_lib.cluster.planning.verdict import Contender, verdict
from spare_lib.registry.methods import METHODS, PAPER_METHODS

SPEC = dict(gpus=2000, gpus_per_group=100, system_mtbf_s=3000.0, restart_s=600.0,
            checkpoint_s=20.0, step_s=30.0, allreduce="preset")
SIM = dict(trials=2, steps=300, checkpoint_factors=(), backend="serial")


@pytest.fixture(scope="module")
def plans():
    spec = cluster_spec(**SPEC)
    return {"model": run_plan(PlanRequest(spec, steps=SIM["steps"])),
            "paper": run_plan(PlanRequest(spec, **SIM)),
            "all": run_plan(PlanRequest(spec, methods=tuple(METHODS), **SIM))}


def test_the_paper_methods_are_planned_alike_in_every_mode(plans):
    model, paper, every = plans["model"], plans["paper"], plans["all"]
    for name in PAPER_METHODS:
        a, b = paper.choices[name], every.choices[name]
        assert (a.r, a.checkpoint_steps, a.tied) == (b.r, b.checkpoint_steps, b.tied)
        pa = [p for p in paper.points if p.method == name]
        pb = [p for p in every.points if p.method == name]
        assert [(p.r, p.checkpoint_steps, p.ttt_trials) for p in pa] == \
            [(p.r, p.checkpoint_steps, p.ttt_trials) for p in pb]
        assert model.fast.best(name) == paper.fast.best(name)
    assert model.verdict.best.method == paper.model_verdict.best.method
    assert paper.steps == every.steps and paper.crn and every.crn


def test_every_mode_states_its_rejoin_assumption(plans):
    never = "failed groups stay dead until the next global restart (they never rejoin)"
    for key in ("model", "paper"):
        assert any(never in a for a in plans[key].assumptions)
    back = [a for a in plans["all"].assumptions if "rejoins after rejoin_s" in a]
    assert back and "600 s" in back[0]


def test_json_has_best_and_loss_vs_best_at_the_top_in_every_mode(plans):
    for res in plans.values():
        d = res.to_dict()
        assert d["best"] == d["verdict"]["best"] and d["loss_vs_best"] == d["verdict"]["loss_vs_best"]
        assert set(d["loss_vs_best"]) == set(res.request.methods) - (set() if res.simulated else set())


def test_a_tie_is_not_a_win_and_one_trial_has_no_interval():
    a = Contender("spare", 8, 20, 2.00, trials=(2.00, 2.10, 1.90))
    b = Contender("rep", 3, 8, 2.05, trials=(2.20, 1.95, 2.00))
    v = verdict([a, b])
    (loss,) = v.losses
    assert loss.tied and v.statement.startswith("Verdict: tied between SPARe+CKPT and Rep+CKPT")
    one = verdict([dataclasses.replace(a, trials=(2.0,)), dataclasses.replace(b, trials=(2.1,))])
    assert "no interval" in one.statement and not one.losses[0].has_interval


def test_holm_widens_the_intervals_of_several_comparisons():
    best = Contender("spare", 8, 20, 2.0, trials=(2.0, 2.05, 1.95, 2.02))
    others = [Contender(m, 2, 8, 2.3 + i / 10, trials=tuple(t + 0.3 + i / 10 + 0.01 * j
                                                             for j, t in enumerate(best.trials)))
              for i, m in enumerate(("rep", "ckpt", "elastic-drop"))]
    v = verdict([best, *others])
    levels = sorted(x.confidence for x in v.losses)
    assert levels[0] == pytest.approx(0.95) and levels[-1] == pytest.approx(1 - 0.05 / 3)
    alone = verdict([best, others[0]])
    assert alone.losses[0].confidence == pytest.approx(0.95)


def test_no_method_trains_is_an_answer():
    cs = [Contender(m, 1, 1, float("inf"), finished=False) for m in PAPER_METHODS]
    v = verdict(cs, "model")
    assert not v.trains and "no method trains on this cluster" in v.statement


def test_too_large_a_cluster_is_refused_before_allocating():
    with pytest.raises(ValueError, match=r"gpus_per_group must be at least 1000000 for gpus"):
        cluster_spec(10**12, 1000, gpu_mtbf_s=1e20)
    from spare_lib._util.memory import check_memory

    with pytest.raises(ValueError, match="would need about 1e\\+09 GB of memory"):
        check_memory("a run", 1e18)
