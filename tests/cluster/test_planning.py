"""Joint optimisation of r and the checkpoint period (spare_lib.cluster.planning)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_lib import theory as th
from spare_lib.cluster import paper_checkpoint_interval, planning, planning_results, planning_sim, verdict
from spare_lib.cluster.config import allreduce_time_s
from spare_lib.figures.cluster import make_explore_figure
from spare_lib.stacking.layout import max_ruler_r

#: The paper's three configurations: (GPUs per group, step time) -> N = 200, 600, 1000.
PAPER = {200: (3000, 66.0), 600: (1000, 70.0), 1000: (600, 74.0)}


def paper_spec(N: int) -> planning.ClusterSpec:
    gpg, step = PAPER[N]
    return planning.cluster_spec(600_000, gpg, system_mtbf_s=300, restart_s=3600, checkpoint_s=58.8,
                                 step_s=step, allreduce="preset")


@pytest.fixture(scope="module")
def paper_plans():
    return {N: planning.plan(paper_spec(N)) for N in PAPER}


@pytest.fixture(scope="session")
def warm_simulator():
    """Compile (or load from the numba cache) the simulator core once."""
    planning_sim.simulate_plan_point("spare", 200, 3, 5, 5, 64.0, 2.0, 3600.0, 58.8, 300.0, 600_000, 0, 1,
                                     failure_seed=1)
    return True


# ------------------------------------------------------------------------------ the cluster

def test_cluster_spec_units_and_preset_split():
    s = paper_spec(600)
    assert (s.N, s.allreduce_s, s.compute_per_stack_s) == (600, 6.0, 64.0)  # T_a = N/100 s
    assert (s.system_mtbf_s, s.restart_s) == (300.0, 3600.0)
    # per-GPU MTBF: m = MTBF_GPU / #GPUs; 50,000 h over 600k GPUs = 5 min
    g = planning.cluster_spec(600_000, 1000, gpu_mtbf_s=1.8e8, step_s=70)
    assert g.system_mtbf_s == pytest.approx(300.0)
    # explicit all-reduce and default step 64 s + T_a
    e = planning.cluster_spec(1024, 8, allreduce_s=0.0, system_mtbf_s=300)
    assert (e.N, e.step_s, e.compute_per_stack_s) == (128, 64.0, 64.0)
    cfg = s.cluster_config(steps=123)
    assert (cfg.steps, cfg.compute_per_stack_s, cfg.allreduce_s, cfg.restart_s) == (123, 64.0, 6.0,
                                                                                      3600.0)
    assert cfg.t0_s() == 123 * 70.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"gpus_per_group": 400_000}, r"gpus_per_group must be in \[1, 300000\]"),
        ({"gpus": 1}, r"gpus must be an integer in \[2, 1e12\]"),
        ({"gpus": 6.5}, r"gpus must be an integer in \[2, 1e12\], got 6.5"),
        ({"system_mtbf_s": 300, "gpu_mtbf_s": 3.6e7}, "not both"),
        ({"system_mtbf_s": 0}, r"system_mtbf_s must be in \[0.001, 1e12\]"),
        ({"gpu_mtbf_s": -1}, r"gpu_mtbf_s must be in \(0, inf\)"),
        ({"restart_s": -1}, r"restart_s must be in \[0, inf\)"),
        ({"checkpoint_s": 0}, r"checkpoint_s must be finite and in \(0, inf\)"),
        ({"step_s": float("nan")}, "step_s must be in"),
        ({"step_s": 5.0, "allreduce": "preset"},
         r"step_s must exceed the default all-reduce time T_a = N/100 = 6 s"),
        ({"step_s": 5.0, "allreduce_s": 5.0}, r"allreduce_s must be in \[0, step_s\)"),
    ],
)
def test_cluster_spec_validation(kwargs, match):
    args = {"gpus": 600_000, "gpus_per_group": 1000, **kwargs}
    with pytest.raises(ValueError, match=match):
        planning.cluster_spec(args.pop("gpus"), args.pop("gpus_per_group"), **args)


def test_leftover_gpus_stay_idle_and_scale_defaults():
    # issue 16: 128 does not divide 10^6 -> N = 7812 groups, 64 GPUs idle; m from the per-GPU
    # MTBF over the working GPUs, T_a from the ring all-reduce model
    cluster_spec = planning.cluster_spec
    s = cluster_spec(1_000_000, 128)  # the defaults: 1.8e8 s per GPU, the ring all-reduce
    assert (s.N, s.idle_gpus) == (7812, 64)
    assert s.system_mtbf_s == pytest.approx(50_000 * 3600 / (7812 * 128))
    assert s.allreduce_s == pytest.approx(allreduce_time_s(7812, 2e13 / 128))
    assert cluster_spec(600_000, 1000).idle_gpus == 0
    # the ring reproduces the paper's T_a at 600k GPUs within 0.4 %
    for gpg, ta in ((3000, 2.0), (1000, 6.0), (600, 10.0)):
        assert cluster_spec(600_000, gpg, allreduce="ring").allreduce_s == pytest.approx(ta, rel=4e-3)
    with pytest.raises(ValueError, match="allreduce must be one of"):
        cluster_spec(600_000, 1000, allreduce="butterfly")
    with pytest.raises(ValueError, match=r"gpus_per_group must be in \[1, 500000\]"):
        cluster_spec(1_000_000, 2_000_000)



@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: planning.closed_form_point(s, "magic", 3), "method must be one of"),
        (lambda s: planning.closed_form_point(s, "spare", 21), r"r must be in \[1, 20\]"),
        (lambda s: planning.closed_form_point(s, "ckpt", 2), r"r must be in \[1, 1\]"),
        (lambda s: planning.closed_form_point(s, "spare", 3, model="exact"), "model must be one of"),
        (lambda s: planning.closed_form_point("N=600", "spare", 3), "spec must be a ClusterSpec"),
        (lambda s: planning.plan(s, r_max=1), r"r_max must be in \[2, 20\]"),
        (lambda s: planning_sim.plan_simulated(s, 0), r"trials must be in \[1, inf\]"),
        (lambda s: planning_sim.plan_simulated(s, 1, spare_r=(30,)),
         r"spare_r must be integers in \[2, 20\] at N = 600"),
        (lambda s: planning_sim.plan_simulated(s, 1, rep_r=(601,)),
         r"rep_r must be integers in \[2, 600\] at N = 600"),
        (lambda s: planning_sim.plan_simulated(s, 1, steps="often"), "steps must be an integer"),
        (lambda s: planning_sim.plan_simulated(s, 1, spare_r=(), rep_r=(), include_ckpt=False),
         "no candidate"),
        (lambda s: planning_sim.plan_simulated(s, 1, checkpoint_factors=(0.5, 0.0)),
         r"checkpoint_factors must be finite and in \(0, inf\)"),
        (lambda s: planning.plan(s).point("spare", 1), "must be a candidate"),
    ],
)
def test_validation_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call(paper_spec(600))


# ------------------------------------------------------------------------------ closed forms

@pytest.mark.parametrize("model", ["finite", "paper"])
@pytest.mark.parametrize("N", [200, 1000])
def test_spare_point_is_eq7_of_theory(N, model):
    """J and A* come from theory (ttt_normalized, availability_opt), not from new formulas."""
    mu_model, ovh_model, _ = planning.MODELS[model]
    for r in (2, 5, 9):
        p = planning.closed_form_point(paper_spec(N), "spare", r, model)
        assert p.ttt_over_t0 == pytest.approx(
            th.ttt_normalized(N, r, 300.0, 58.8, 3600.0, mu_model=mu_model,
                              overhead_model=ovh_model), rel=1e-12)
        assert p.availability == pytest.approx(th.availability_opt(58.8, p.mu * 300.0, 3600.0))


def test_rep_and_ckpt_points_by_hand():
    s = paper_spec(200)
    # CKPT-only: T_f = m = 300 s; T_c* = T_s + sqrt(T_s² + 2 T_s (T_f + T_r))
    c = planning.closed_form_point(s, "ckpt", 1)
    tc = 58.8 + math.sqrt(58.8**2 + 2 * 58.8 * 3900.0)
    a = (1 - 58.8 / tc) * 300.0 / (300.0 + 3600.0 + tc / 2)
    assert c.checkpoint_period_s == pytest.approx(tc, rel=1e-12)
    assert c.availability == pytest.approx(a, rel=1e-12)
    assert c.ttt_over_t0 == pytest.approx(1 / a, rel=1e-12) and round(c.ttt_over_t0, 2) == 15.46
    assert c.checkpoint_steps == round(tc / 66.0)  # step time at depth 1: 64 s + 2 s
    # Rep pairs, N = 200 = 2·100: μ = 4^100 / C(200, 100) (Casanova et al. 2012), overhead 2
    p = planning.closed_form_point(s, "rep", 2)
    assert p.mu == pytest.approx(float(th.replication_pairs_mu_exact(100)), rel=1e-10)
    assert p.overhead == 2.0 and p.step_time_s == 2 * 64.0 + 2.0
    assert p.ttt_over_t0 == pytest.approx(2.0 / th.availability_opt(58.8, p.mu * 300.0, 3600.0))


def test_paper_configs_closed_form_recommendations(paper_plans):
    """What the closed forms truthfully give for the paper's three configurations.

    SPARe: the paper's formulas (μ Γ form, Eq. 5) give r* = 8, 10, 10 (SPEC §7, = the log2 rule
    here); the finite-N forms (mu_finite, overhead_finite: the better estimates of μ and S̄) give
    7, 8, 9 — closer to the paper's simulated 9, 8, 9, and J is flat near the optimum (< 1 %
    between neighbours). Rep+CKPT: the closed form prefers pairs (r = 2) at every N, whereas the
    simulation (and the paper) find r = 3: Eq. 2 charges a restart T_r once, while in the
    simulator every group needs its own failure-free T_r window (≈ 2·T_r per restart) and Weibull
    clocks fail early after a restart, which hurts the frequently restarting r = 2 most.
    """
    assert [paper_plans[N].spare.r for N in PAPER] == [7, 8, 9]
    assert [paper_plans[N].r_star_paper for N in PAPER] == [8, 10, 10]
    assert [paper_plans[N].r_star_paper for N in PAPER] == [th.r_star_numeric(N) for N in PAPER]
    assert [paper_plans[N].r_star_log2 for N in PAPER] == [8, 10, 10]
    assert [planning.plan(paper_spec(N), model="paper").spare.r for N in PAPER] == [8, 10, 10]
    assert [paper_plans[N].rep.r for N in PAPER] == [2, 2, 2]
    assert all(paper_plans[N].ckpt.r == 1 for N in PAPER)
    for N in PAPER:
        j = {p.r: p.ttt_over_t0 for p in paper_plans[N].curve if p.method == "spare"}
        r = paper_plans[N].spare.r
        assert j[r] == min(j.values()) and j[r + 1] / j[r] - 1 < 0.01


def test_paper_configs_closed_form_gain_and_availability(paper_plans):
    """Closed-form gain over Rep+CKPT is 35.7 / 28.9 / 25.4 %, below the paper's simulated
    51.9 / 41.7 / 39.6 % because the closed form is optimistic about Rep (see above); the
    simulated gains are checked in test_cli. SPARe's A* grows with N (μ grows like N^(1-1/r))."""
    gains = [paper_plans[N].gain_vs_rep for N in PAPER]
    assert gains == pytest.approx([0.357, 0.289, 0.254], abs=0.002)
    avail = [paper_plans[N].spare.availability for N in PAPER]
    assert avail == sorted(avail) and 0.8 < avail[0] and avail[-1] < 0.97
    assert all(0.84 < paper_plans[N].gain_vs_ckpt < 0.87 for N in PAPER)


@pytest.mark.parametrize("N", [200, 600, 1000])
def test_checkpoint_steps_reproduce_the_papers_table(paper_plans, N):
    """T_c*/(S̄·64 s + T_a) with the finite-N μ and S̄ lands within 2 steps of the intervals the
    paper ran for SPARe (SPEC §6: 'close to T_c*/step time but no exact rule'), r = 5..10."""
    for r in range(5, 11):
        ours = paper_plans[N].point("spare", r).checkpoint_steps
        assert abs(ours - paper_checkpoint_interval("spare", N, r)) <= 2, (N, r, ours)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_groups=st.integers(2, 300), gpg=st.sampled_from([1, 4, 8, 64]),
       m_min=st.floats(0.5, 600.0), tr_min=st.floats(0.0, 300.0), ts=st.floats(1.0, 600.0),
       compute=st.floats(1.0, 200.0))
def test_plan_invariants(n_groups, gpg, m_min, tr_min, ts, compute):
    """Any cluster: the recommendation minimises J over the candidates, T_c* maximises Eq. 2's
    availability (checked against A at T_c*·(1 ± 5 %)), and the numbers are in range."""
    s = planning.cluster_spec(n_groups * gpg, gpg, system_mtbf_s=60 * m_min, restart_s=60 * tr_min,
                              checkpoint_s=ts, step_s=compute + n_groups / 100, allreduce="preset")
    p = planning.plan(s)
    for m in ("spare", "rep"):
        best = getattr(p, m)
        assert best.ttt_over_t0 == min(q.ttt_over_t0 for q in p.curve if q.method == m)
    for q in p.curve:
        assert 0 < q.availability < 1 and q.ttt_over_t0 >= q.overhead and q.checkpoint_steps >= 1
        tf = q.restart_interval_s
        for f in (0.95, 1.05):
            assert q.availability >= th.availability(q.checkpoint_period_s * f, ts, tf,
                                                     s.restart_s) - 1e-12
    assert p.gain_vs_rep == pytest.approx(1 - p.spare.ttt_over_t0 / p.rep.ttt_over_t0)
    json.dumps(p.to_dict())


# ------------------------------------------------------------------------------ simulation

def _pt(r: int, mean: float, se: float, method: str = "spare", completed: int = 3):
    return planning_sim.SimulatedPoint(method=method, label=planning.LABELS[method], r=r, checkpoint_steps=10,
                              trials=3, completed=completed, ttt_mean=mean, ttt_std=se * 3**0.5,
                              ttt_min=mean, ttt_max=mean, ttt_se=se, availability_mean=0.9,
                              overhead_mean=2.0, restarts_mean=1.0, closed_form_ttt=2.0,
                              closed_form_availability=0.9)


def test_choice_ties_and_difference_from_closed_form():
    pts = [_pt(7, 2.40, 0.01), _pt(8, 2.35, 0.01), _pt(9, 2.36, 0.01), _pt(10, 2.50, 0.01)]
    same = planning_sim._choose("spare", pts, 8)
    assert (same.r, same.delta_r, same.agrees) == (8, 0, True) and "same" in same.describe()
    # 2.36 − 2.35 = 0.01 < 2·sqrt(2)·0.01: tied; 2.40 − 2.35 = 0.05 > 0.028: not tied
    tied = planning_sim._choose("spare", pts, 9)
    assert tied.tied == (8, 9) and tied.agrees and tied.delta_r == -1
    assert tied.excess == pytest.approx(2.36 / 2.35 - 1) and "within noise" in tied.describe()
    far = planning_sim._choose("spare", pts, 10)
    assert not far.agrees and far.delta_r == -2 and "DIFFERS by -2" in far.describe()
    assert "+6.4 %" in far.describe() and "edge" not in far.describe()
    edge = planning_sim._choose("spare", [_pt(7, 2.3, 0.01), *pts[1:]], 8, (2, 12))
    assert edge.r == 7 and "at the edge of the simulated r window: widen it with --spare-r 4..10" \
        in edge.describe()
    # only actions that exist: r = 2 cannot go lower, r_max cannot go higher
    low = planning_sim._choose("spare", [_pt(2, 2.3, 0.01), _pt(3, 2.4, 0.01), _pt(4, 2.5, 0.01)], 3,
                               (2, 12))
    assert low.r == 2 and "edge" not in low.describe() and low.edge_advice() == ""
    top = planning_sim._choose("rep", [_pt(3, 2.5, 0.01, "rep"), _pt(4, 2.4, 0.01, "rep"),
                                       _pt(5, 2.3, 0.01, "rep")], 3, (2, 5))
    assert top.r == 5 and top.edge_advice() == ""
    up = planning_sim._choose("rep", [_pt(3, 2.5, 0.01, "rep"), _pt(4, 2.4, 0.01, "rep"),
                                      _pt(5, 2.3, 0.01, "rep")], 3, (2, 600))
    assert "--rep-r 3..8" in up.describe()
    # unfinished runs are never preferred; none finished -> said so
    unf = planning_sim._choose("rep", [_pt(2, 1.0, 0.0, "rep", completed=1), _pt(3, 3.0, 0.0, "rep")], 2)
    assert unf.r == 3 and unf.finished
    none = planning_sim._choose("ckpt", [_pt(1, 50.0, 0.0, "ckpt", completed=0)], 1)
    assert not none.finished and "no run finished" in none.describe()


def test_plan_simulated_small_run(warm_simulator):
    s = paper_spec(200)
    sp = planning_sim.plan_simulated(s, 2, steps=200, seed=5, spare_r=(8, 9), rep_r=(3,),
                            backend="serial", checkpoint_factors=())
    assert [(p.method, p.r) for p in sp.points] == [("spare", 8), ("spare", 9), ("rep", 3),
                                                     ("ckpt", 1)]
    for p in sp.points:
        assert p.trials == 2 and p.stage == 1
        assert p.checkpoint_steps == sp.closed.point(p.method, p.r).checkpoint_steps
        assert p.ttt_min <= p.ttt_mean <= p.ttt_max and p.ttt_mean >= 1.0
    # no checkpoint search: the recommendation keeps the closed-form interval
    assert sp.spare.checkpoint_steps == sp.spare.closed_form_checkpoint_steps
    assert sp.gain_vs_rep == sp.gain_vs_rep_closed_checkpoint and "checkpoint every" not in \
        sp.spare.describe()
    assert sp.spare.r in (8, 9) and sp.rep.r == 3 and sp.ckpt.r == 1
    # common random numbers: trial t of every candidate runs with trial_seed(spec, t, root), which
    # depends on the cluster and t only, so one run is reproducible on its own
    assert sp.crn and planning_sim.trial_seed(s, 0, 5) != planning_sim.trial_seed(s, 1, 5)
    t0 = planning_sim.trial_seed(s, 0, 5)
    point = {"method": "spare", "r": 8, "ckpt_steps": sp.points[0].checkpoint_steps, "N": 200,
             "steps": 200, "compute_per_stack_s": 64.0, "allreduce_s": 2.0,
             "restart_s": 3600.0, "checkpoint_s": 58.8, "system_mtbf_s": 300.0,
             "n_gpus": 600_000, "max_wall_t0": planning.MAX_WALL_T0, "trial": 0}
    seeded = planning_sim.simulate_plan_point(**point, seed=t0, failure_seed=t0)
    assert seeded["ttt_over_t0"] == sp.points[0].ttt_trials[0] and seeded["completed"]
    d = json.loads(json.dumps(sp.to_dict(), allow_nan=False))
    assert d["spare"]["summary"].startswith("SPARe+CKPT: simulated r =")
    assert d["best"]["method"] in ("spare", "rep", "ckpt") and set(d["loss_vs_best"]) == {"spare", "rep",
                                                                                          "ckpt"}
    assert d["closed"]["cluster"]["N"] == 200


def test_checkpoint_candidates():
    assert planning_sim.checkpoint_candidates(10, (0.5, 0.75, 1.5, 2)) == (5, 8, 10, 15, 20)
    assert planning_sim.checkpoint_candidates(2, (0.1, 0.5, 1.0)) == (1, 2)  # >= 1 and no duplicates
    with pytest.raises(ValueError, match=r"checkpoint_factors must be finite and in \(0, inf\)"):
        planning_sim.checkpoint_candidates(10, (0.5, -1.0))


def test_plan_simulated_checkpoint_search(warm_simulator):
    """Stage 2 simulates round(f·C0) at the stage-1 best r of each finished method and
    recommends the interval with the lowest mean; the gain uses the recommended intervals."""
    s = paper_spec(200)
    sp = planning_sim.plan_simulated(s, 2, steps=300, seed=3, spare_r=(8, 9), rep_r=(3,),
                            include_ckpt=False, backend="serial", checkpoint_factors=(0.5, 2.0))
    for ch in (sp.spare, sp.rep):
        c0 = sp.closed.point(ch.method, ch.r).checkpoint_steps
        at_r = [p for p in sp.points if p.method == ch.method and p.r == ch.r]
        assert ch.closed_form_checkpoint_steps == c0
        assert ch.checkpoint_candidates == planning_sim.checkpoint_candidates(c0, (0.5, 2.0))
        assert sorted(p.checkpoint_steps for p in at_r) == list(ch.checkpoint_candidates)
        assert [p.stage for p in at_r if p.checkpoint_steps == c0] == [1]
        best = min(at_r, key=lambda p: p.ttt_mean)
        assert (ch.checkpoint_steps, ch.ttt) == (best.checkpoint_steps, best.ttt_mean)
        assert ch.ttt <= ch.ttt_at_closed_form_checkpoint and ch.checkpoint_steps in ch.checkpoint_tied
        assert "checkpoint every" in ch.describe()
    # the other r of a method are simulated at C0 only
    assert [p.stage for p in sp.points if p.method == "spare" and p.r != sp.spare.r] == [1]
    assert sp.gain_vs_rep == pytest.approx(1 - sp.spare.ttt / sp.rep.ttt)
    assert sp.gain_vs_rep_closed_checkpoint == pytest.approx(
        1 - sp.spare.ttt_at_closed_form_checkpoint / sp.rep.ttt_at_closed_form_checkpoint)
    assert json.loads(json.dumps(sp.to_dict()))["checkpoint_factors"] == [0.5, 2.0]
    frame = planning_sim.simulated_frame(sp)
    assert len(frame) == len(sp.points) and list(frame["stage"]) == [p.stage for p in sp.points]


def test_choose_checkpoint_prefers_finished_and_reports_ties():
    def at(c: int, mean: float, stage: int, completed: int = 3):
        return dataclasses.replace(_pt(9, mean, 0.01, completed=completed), checkpoint_steps=c,
                                   stage=stage)

    ch = planning_sim._choose("spare", [at(16, 2.50, 1)], 9)
    pts = [at(16, 2.50, 1), at(8, 2.40, 2, completed=2), at(12, 2.46, 2), at(32, 2.47, 2)]
    got = planning_sim._choose_checkpoint(ch, pts)
    # C = 8 did not finish every run: not preferred; 2.47 − 2.46 < 2·sqrt(2)·0.01: tied
    assert (got.checkpoint_steps, got.ttt, got.closed_form_checkpoint_steps) == (12, 2.46, 16)
    assert got.checkpoint_tied == (12, 32) and got.checkpoint_candidates == (8, 12, 16, 32)
    assert got.ttt_at_closed_form_checkpoint == 2.50 and got.r == 9
    assert "checkpoint every 12 steps (TTT/T0 2.460, -1.6 % against the closed form's C = 16" \
        in got.describe()
    edge = planning_sim._choose_checkpoint(ch, [*pts[:3], at(32, 2.30, 2)])
    assert edge.checkpoint_steps == 32 and "edge of the simulated range" in edge.describe()


def test_plan_simulated_same_on_processes_and_serial(warm_simulator):
    """Seeds are derived from the points, so the worker pool gives identical numbers."""
    s = paper_spec(200)
    kw = {"steps": 100, "seed": 1, "spare_r": (9,), "rep_r": (3,), "include_ckpt": False}
    a = planning_sim.plan_simulated(s, 2, backend="serial", **kw)
    b = planning_sim.plan_simulated(s, 2, backend="processes", workers=2, **kw)
    da, db = a.to_dict(), b.to_dict()  # nan -> None, so equal dicts mean equal numbers
    assert da.pop("elapsed_s") > 0 and db.pop("elapsed_s") > 0
    assert da == db


def test_candidate_window():
    p = planning.plan(paper_spec(200))  # r* = 7, r_max = 12
    c = planning_sim.candidate_rs(p)
    assert c == {"spare": (4, 5, 6, 7, 8, 9, 10), "rep": (2, 3, 4, 5), "ckpt": (1,)}
    assert planning_sim.candidate_rs(p, spare_window=10)["spare"] == tuple(range(2, 13))
    assert planning_sim.candidate_rs(p, rep_r=(4,))["rep"] == (2, 4)  # the closed-form optimum is added


@pytest.mark.parametrize("N", [2, 3, 5, 12, 21, 22])
def test_any_n_from_two_plans_and_adapts_the_r_ranges(N):
    """Every N >= 2 plans: SPARe's r runs to the largest ruler at N, Rep's to min(N, ...), and the
    default candidates stay inside those ranges (the 'rep_r must be in [2, 2]' failure)."""
    p = planning.plan(planning.cluster_spec(8 * N, 8))
    assert p.r_max == max_ruler_r(N) and p.rep_r_max == min(N, max(p.r_max, 5))
    c = planning_sim.candidate_rs(p)
    assert all(2 <= r <= p.r_max for r in c["spare"]) and all(2 <= r <= N for r in c["rep"])
    assert p.point("rep", N).r == N  # any Rep r <= N on demand
    assert p.best.ttt_over_t0 == min(q.ttt_over_t0 for q in (p.spare, p.rep, p.ckpt))
    json.dumps(p.to_dict(), allow_nan=False)


def test_auto_steps_aims_at_restarts_of_the_near_best():
    p = planning.plan(paper_spec(600))
    cands = planning_sim.candidate_rs(p)
    steps, note = planning_sim.auto_steps(p, cands)
    assert steps == planning_sim.AUTO_STEPS_MIN and note.startswith("auto: 10,000 steps (the paper's)")
    llama = planning.plan(planning.cluster_spec(16384, 128, gpu_mtbf_s=49152 * 3600.0, restart_s=1200,
                                                checkpoint_s=30, step_s=10, allreduce="preset"))
    steps, note = planning_sim.auto_steps(llama, planning_sim.candidate_rs(llama))
    near = [q for q in llama.curve if q.method == "spare"
            and q.ttt_over_t0 <= 1.05 * llama.spare.ttt_over_t0 and q.r <= 5]
    assert steps == max(planning_sim.restarts_needed_steps(q) for q in near) > 10_000
    assert "expect >= 5 restarts per run" in note


def test_adequacy_warns_about_runs_with_few_restarts():
    pts = [dataclasses.replace(_pt(4, 2.0, 0.01), restarts_mean=0.0, restart_interval_s=4e5,
                               step_time_s=20.0),
           dataclasses.replace(_pt(5, 2.0, 0.01), restarts_mean=2.0, restart_interval_s=5e5,
                               step_time_s=20.0),
           dataclasses.replace(_pt(2, 2.0, 0.01, "rep"), restarts_mean=9.0)]
    (w,) = planning_sim._adequacy(pts, 5, 10_000)
    assert w.startswith("SPARe+CKPT r = 4 (0.0), r = 5 (2.0): fewer than 5 global restarts")
    assert "--steps 100,000 or more" in w  # r = 4 from T_f (no restart seen), r = 5 from its rate: 25,000


def _contender(method, ttt_trials, finished=True):
    return verdict.Contender(method, 2, 10, float(np.mean(ttt_trials)), tuple(ttt_trials), finished)


def test_verdict_is_the_argmin_with_paired_cis():
    a = _contender("spare", [2.00, 2.10, 1.90])
    b = _contender("ckpt", [1.50, 1.62, 1.41])
    c = _contender("rep", [1.40, 1.30, 1.50], finished=False)  # capped: never the best
    v = verdict.verdict([a, b, c])
    assert v.best.method == "ckpt" and v.best.ttt == min(a.ttt, b.ttt)
    x = next(x for x in v.losses if x.method == "spare")
    d = np.array(a.trials) - np.array(b.trials)
    half = 4.302652729911275 * d.std(ddof=1) / 3**0.5  # t(0.975, 2)
    assert x.loss == pytest.approx(a.ttt / b.ttt - 1)
    assert (x.ci_low, x.ci_high) == pytest.approx(((d.mean() - half) / b.ttt, (d.mean() + half) / b.ttt))
    assert "SPARe is the wrong choice on this cluster" in v.statement
    y = next(x for x in v.losses if x.method == "rep")
    assert y.lower_bound and y.ci_low != y.ci_low and y.text().startswith(">= ")
    d = v.to_dict()
    assert d["best"]["method"] == "ckpt" and d["loss_vs_best"]["rep"]["ci_low"] is None
    json.dumps(d, allow_nan=False)
    # a tie (CI straddles 0) is said plainly; new methods plug in by name
    t = verdict.verdict([_contender("spare", [1.0, 1.2, 0.9]), _contender("elastic-drop", [1.05, 1.0, 1.1])])
    assert t.best.label in ("SPARe+CKPT", "Elastic (drop)") and t.losses[0].tied
    assert "not resolved" in t.statement or "does not pay off" in t.statement


# ------------------------------------------------------------------------------ explorer

def test_explore_figure_and_summary(paper_plans):
    import matplotlib.pyplot as plt

    p = paper_plans[600]
    fig = make_explore_figure(p, r=12)
    try:
        ax_j, ax_a = fig.axes
        assert ax_j.get_yscale() == "log" and ax_a.get_ylim() == (0.0, 100.0)
        spare_line = ax_j.get_lines()[0]
        assert np.allclose(spare_line.get_ydata(),
                           [q.ttt_over_t0 for q in p.curve if q.method == "spare"])
    finally:
        plt.close(fig)
    text = planning_results.explore_summary(p, r=12)
    assert "SPARe+CKPT  r* = 8" in text and "selected SPARe r = 12" in text
