"""Tests of spare_lib.cluster.simulate: the discrete-event time-to-train simulator (SPEC §3–5).

Hand-computed traces pin the timing rules (polls, barrier, shortened all-reduce, shrink,
patch retry, checkpoint leader, restart windows, rollback); statistical tests compare with the
wipe-out sampler.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_oracle import oracle

from spare_lib.cluster import ClusterConfig, SimResult, h100_600k, simulate, simulate_many, task_seed
from spare_lib.stacking import failures_to_wipeout, ruler_layout

NO_FAIL = np.empty((0, 2))


def small_cfg(**kw: object) -> ClusterConfig:
    """No jitter, T_a = 2 s, T_s = 10 s, T_r = 3600 s, shrink 0.1 s, 64 s per stack."""
    base = {"steps": 3, "jitter_sigma": 0.0, "allreduce_s": 2.0, "checkpoint_s": 10.0}
    base.update(kw)
    return ClusterConfig(**base)  # type: ignore[arg-type]


@pytest.fixture(scope="session", autouse=True)
def warm_jit() -> None:
    simulate("spare", 12, 3, 2, small_cfg(), seed=0)
    simulate("rep", 12, 3, 2, small_cfg(), seed=0)


# ---------------------------------------------------------------- failure-free runs

@pytest.mark.parametrize("N", [200, 600, 1000])
def test_failure_free_is_t0(N: int) -> None:
    cfg = h100_600k(N, steps=200, jitter_sigma=0.0)
    res = simulate("spare", N, 9, None, cfg, failure_trace=NO_FAIL)
    assert res.total_s == pytest.approx(cfg.t0_s(), rel=1e-12)
    assert res.t0_s == pytest.approx(200 * (64 + N / 100))
    assert res.ttt_over_t0 == pytest.approx(1.0, rel=1e-12)
    assert res.availability == 1.0 and res.down_s == 0.0 and res.overhead == 1.0
    assert res.full_restarts == 0 and res.failures_noticed == 0 and res.completed


def test_failure_free_with_checkpoints_and_rep() -> None:
    cfg = h100_600k(200, steps=25, jitter_sigma=0.0)
    res = simulate("spare", 200, 9, 10, cfg, failure_trace=NO_FAIL)
    # checkpoints after steps 10, 20 and the last (25)
    assert res.checkpoints_written == 3
    assert res.total_s == pytest.approx(cfg.t0_s() + 3 * cfg.checkpoint_s)
    rep = simulate("rep", 200, 3, None, cfg, failure_trace=NO_FAIL)
    assert rep.total_s == pytest.approx(25 * (3 * 64 + 2)) and rep.overhead == 3.0


def test_jitter_makes_the_barrier_slower() -> None:
    cfg = h100_600k(200, steps=50)
    res = simulate("spare", 200, 9, None, cfg, seed=3, failure_trace=NO_FAIL)
    # barrier = max of 200 draws of 64·N(1, 0.05²): about 64·(1 + 2.75·0.05) ≈ 72.8 s
    per_step = res.total_s / 50
    assert 71.0 < per_step < 77.0


# ---------------------------------------------------------------- hand-computed traces

def test_trace_spare_reorder_and_patch_retry() -> None:
    # N=4, r=2 ruler (0,1): stacks [w, w+1]. Group 1 fails at t=10, noticed at the all-reduce
    # poll after the barrier (64): 0.5·T_a -> 65; RECTLR: types 0,2,3 covered at S=1, type 1
    # only by group 0 at position 1 -> S* = 2, nothing moves, every survivor computes the new
    # layer (patch 1): shrink -> 65.1, +64 -> 129.1, +T_a -> 131.1 (step 1 committed).
    # Steps 2, 3 at S = 2: +130 each -> 391.1.
    res = simulate("spare", 4, 2, None, small_cfg(), failure_trace=[[10.0, 1]])
    assert res.total_s == pytest.approx(391.1)
    assert res.down_s == pytest.approx(0.1) and res.stall_s == pytest.approx(0.1)
    assert (res.reorder_events, res.phase0_events, res.full_restarts) == (1, 0, 0)
    assert res.masked_failures == 1 and res.failures_noticed == 1 and res.attempts == 4
    assert res.overhead == pytest.approx(2.0)  # every commit at S = 2
    assert res.patch_overhead == pytest.approx(3 / (4 * 3))


def test_trace_spare_phase0() -> None:
    # N=4, r=2 at S=2 (after the first failure) a second failure of group 3 is covered by
    # the survivors' first 2 positions? survivors 0,2 hold {0,1},{2,3}: yes -> phase 0.
    # Group 1 at 10 (as above, ends step 1 at 131.1); group 3 fails at 140: step 2 starts at
    # 131.1, group 3's second poll at 195.1 notices it; barrier 259.1, 0.5·T_a -> 260.1,
    # phase 0, shrink -> 260.2 (step 2 committed); step 3 -> 390.2.
    res = simulate("spare", 4, 2, None, small_cfg(), failure_trace=[[10.0, 1], [140.0, 3]])
    assert (res.reorder_events, res.phase0_events) == (1, 1)
    assert res.total_s == pytest.approx(390.2)


def test_trace_ckpt_restart_window_and_rollback() -> None:
    # CKPT-only, N=4, C=1, T_s=10. Step 1: 0 -> 66, checkpoint -> 76. Step 2: group 2's
    # failure at 100 noticed at the barrier (140), 0.5·T_a -> 141, restart at 141. Group 0
    # fails at 1141 inside its window -> its window restarts: restart ends 1141 + 3600 = 4741.
    # Roll back to step 1 (nothing lost); steps 2, 3 at 76 s each -> 4893.
    res = simulate("ckpt", 4, 1, 1, small_cfg(), failure_trace=[[100.0, 2], [1141.0, 0]])
    assert res.total_s == pytest.approx(4893.0)
    assert res.restart_s == pytest.approx(4600.0) and res.down_s == pytest.approx(4600.0)
    assert res.full_restarts == 1 and res.steps_redone == 0 and res.checkpoints_written == 3
    assert res.failures_between_restarts == (1,)


def test_trace_checkpoint_leader_failure() -> None:
    # Leader 0 fails at 65: step 1 (poll at 0 and at the barrier 64) is fine, -> 66; the
    # checkpoint poll notices the failure: not written, no time. Step 2: group 0 is flagged,
    # the others reach 130, 0.5·T_a -> 131 -> CKPT-only restarts: 131 + 3600 = 3731, rollback
    # to step 0 (1 step redone), then 3 steps of 66 + 10 -> 3959.
    res = simulate("ckpt", 4, 1, 1, small_cfg(), failure_trace=[[65.0, 0]])
    assert res.total_s == pytest.approx(3959.0)
    assert res.checkpoint_failures == 1 and res.steps_redone == 1 and res.full_restarts == 1


def test_trace_no_checkpoint_rolls_back_to_zero() -> None:
    res = simulate("ckpt", 4, 1, None, small_cfg(), failure_trace=[[100.0, 2]])
    # step 1 -> 66, step 2 fails -> 131, restart -> 3731, 3 steps -> 3929
    assert res.total_s == pytest.approx(3929.0) and res.steps_redone == 1


def test_dead_group_clock_rolls_forward_at_restart() -> None:
    # Group 2 fails at 100 (noticed at 140) and again at 200 while dead: rolled forward at no
    # cost, so the restart (from 141) is not prolonged. A failure at 3000 inside the window is.
    quiet = simulate("ckpt", 4, 1, 1, small_cfg(), failure_trace=[[100.0, 2], [120.0, 2]])
    assert quiet.restart_s == pytest.approx(3600.0)
    hit = simulate("ckpt", 4, 1, 1, small_cfg(), failure_trace=[[100.0, 2], [3000.0, 2]])
    assert hit.restart_s == pytest.approx(3000.0 + 3600.0 - 141.0)


# ---------------------------------------------------------------- Rep semantics

def test_rep_wipes_out_exactly_when_a_replica_set_dies() -> None:
    cfg = small_cfg(steps=10)
    # sets {0,1}, {2,3}, {4,5}: one failure per set is masked
    masked = simulate("rep", 6, 2, None, cfg, failure_trace=[[10, 0], [200, 2], [400, 5]])
    assert masked.full_restarts == 0 and masked.masked_failures == 3
    # both members of set 0 -> restart
    dead = simulate("rep", 6, 2, None, cfg, failure_trace=[[10, 0], [200, 2], [400, 1]])
    assert dead.full_restarts == 1 and dead.masked_failures == 2
    # last set may be smaller: N=5, r=2 -> sets {0,1},{2,3},{4}; group 4 alone is fatal
    lone = simulate("rep", 5, 2, None, cfg, failure_trace=[[10, 4]])
    assert lone.full_restarts == 1 and lone.masked_failures == 0


@settings(max_examples=25, deadline=None)
@given(N=st.integers(4, 30), r=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       n_fail=st.integers(0, 12))
def test_rep_restart_iff_some_set_dead_random_traces(N: int, r: int, seed: int, n_fail: int) -> None:
    # all failures inside step 1's compute, so they are all noticed in that one attempt
    r = min(r, N)
    rng = np.random.default_rng(seed)
    groups = rng.choice(N, size=min(n_fail, N), replace=False)
    trace = np.column_stack([rng.uniform(1, 60, len(groups)), groups])
    res = simulate("rep", N, r, None, small_cfg(steps=1), failure_trace=trace)
    dead = np.zeros(N, bool)
    dead[groups] = True
    sets = np.arange(N) // r
    set_dead = any(dead[sets == s].all() for s in np.unique(sets))
    assert res.full_restarts == int(set_dead)


# ---------------------------------------------------------------- plain-Python oracle

@settings(max_examples=60, deadline=None)
@given(method=st.sampled_from(["spare", "rep", "ckpt"]), N=st.integers(6, 16),
       r=st.integers(2, 3), C=st.one_of(st.none(), st.integers(1, 4)),
       steps=st.integers(3, 10), seed=st.integers(0, 2**32 - 1), n_fail=st.integers(0, 25),
       n_lead=st.integers(0, 12))
def test_core_matches_python_oracle(method: str, N: int, r: int, C: int | None, steps: int,
                                    seed: int, n_fail: int, n_lead: int) -> None:
    # Random failure logs replayed without jitter: wall time, downtime and all counts must be
    # equal (to float rounding) to the plain-Python model of SPEC §3–5.
    r = 1 if method == "ckpt" else r
    rng = np.random.default_rng(seed)
    horizon = steps * 3 * 64.0 * 2
    trace = [(float(x), int(g)) for x, g in zip(rng.uniform(0, horizon, n_fail),
                                                 rng.integers(0, N, n_fail), strict=True)]
    # extra failures of the low ids, the checkpoint leaders, so that checkpoints get lost
    trace += [(float(x), int(g)) for x, g in zip(rng.uniform(0, horizon, n_lead),
                                                  rng.integers(0, 2, n_lead), strict=True)]
    # a long all-reduce (40 s) leaves room for leader failures between barrier and checkpoint
    cfg = small_cfg(steps=steps, restart_s=500.0, allreduce_s=40.0)
    res = simulate(method, N, r, C, cfg, failure_trace=np.array(trace).reshape(-1, 2))
    ref = oracle(method, N, r, C, cfg, trace)
    assert res.total_s == pytest.approx(ref["total_s"], rel=1e-12)
    assert res.down_s == pytest.approx(ref["down_s"], rel=1e-9, abs=1e-9)
    assert (res.full_restarts, res.masked_failures, res.steps_redone) == \
        (ref["full_restarts"], ref["masked_failures"], ref["steps_redone"])


# ---------------------------------------------------------------- statistics vs the sampler

def test_spare_failures_between_restarts_match_sampler() -> None:
    # Exponential clocks: every noticed failure hits a uniformly random live group, so the
    # failures noticed between restarts follow the failures-to-wipe-out law (μ ≈ 30 at
    # N=200, r=3). Short steps (S·1 s, m = 20 s) keep overshoot (several failures noticed in
    # the wipe-out attempt) rare: bias ≈ 0.05 failures, ≪ the standard error (≈ 0.6).
    # Tolerance: 4 combined standard errors.
    cfg = ClusterConfig(steps=60_000, compute_per_stack_s=1.0, jitter_sigma=0.0, allreduce_s=0.0,
                        restart_s=1.0, checkpoint_s=0.0, failure_dist="exponential",
                        system_mtbf_s=20.0)
    res = simulate("spare", 200, 3, 1, cfg, seed=11)
    sim = np.array(res.failures_between_restarts, dtype=float)
    assert len(sim) > 150
    ref = failures_to_wipeout(ruler_layout(200, 3), 20_000, seed=5).astype(float)
    se = np.sqrt(sim.var(ddof=1) / len(sim) + ref.var(ddof=1) / len(ref))
    assert abs(sim.mean() - ref.mean()) < 4 * se, (sim.mean(), ref.mean(), se)


# ---------------------------------------------------------------- invariants, determinism

@settings(max_examples=24, deadline=None)
@given(method=st.sampled_from(["spare", "rep", "ckpt", "spare+repair", "elastic-drop",
                               "elastic-rebalance"]),
       r=st.integers(2, 4), C=st.one_of(st.none(), st.integers(1, 5)),
       b=st.sampled_from([1, 4]), seed=st.integers(0, 2**32 - 1))
def test_invariants(method: str, r: int, C: int | None, b: int, seed: int) -> None:
    """Accounting identities of every registered method (SPEC §3–5, docs/strategies.md)."""
    r = r if method in ("spare", "rep", "spare+repair") else 1
    # m = 1000 s against ~70-260 s steps: several restarts (or masked failures and rejoins after
    # 600 s for the rejoining methods), yet always finishing
    cfg = h100_600k(40, steps=30, system_mtbf_s=1000.0, restart_s=300.0, rejoin_s=600.0,
                    microbatches=b)
    res = simulate(method, 40, r, C, cfg, seed=seed)
    assert res.completed
    assert res.up_s + res.down_s == pytest.approx(res.total_s)
    assert 0 < res.availability <= 1
    assert res.restart_s >= res.full_restarts * cfg.restart_s - 1e-6
    assert res.total_s >= cfg.steps * 64 * res.overhead * 0.8
    assert len(res.failures_between_restarts) == res.full_restarts
    if method == "elastic-drop":  # a step with dead groups commits fewer samples: more commits
        assert res.commits - res.steps_redone >= cfg.steps
        assert 0 <= res.dropped_sample_fraction < 1
    else:  # every committed step trains the whole global batch
        assert res.commits - res.steps_redone == cfg.steps
        assert res.dropped_sample_fraction == 0
    if method in ("spare", "spare+repair"):
        assert 1.0 <= res.overhead <= r
    if method == "elastic-rebalance":  # ⌈N·b/n_alive⌉/b micro-batch units per survivor, ≥ 1 shard
        assert res.overhead >= 1.0
    if method in ("spare+repair", "elastic-drop", "elastic-rebalance"):
        assert res.rejoins <= res.masked_failures  # a group rejoins only after a masked failure
    else:
        assert res.rejoins == 0


def test_determinism_and_seed_sensitivity() -> None:
    cfg = h100_600k(200, steps=300)
    a = simulate("spare", 200, 9, 15, cfg, seed=42)
    b = simulate("spare", 200, 9, 15, cfg, seed=42)
    c = simulate("spare", 200, 9, 15, cfg, seed=43)
    assert a == b and isinstance(a, SimResult)
    assert a.total_s != c.total_s
    g1 = simulate("rep", 200, 3, 6, cfg, seed=np.random.SeedSequence(7))
    g2 = simulate("rep", 200, 3, 6, cfg, seed=np.random.SeedSequence(7))
    assert g1 == g2


def test_simulate_many_matches_serial_runs() -> None:
    cfg = h100_600k(200, steps=100)
    tasks = [{"method": m, "N": 200, "r": r, "ckpt_steps": 10, "config": cfg}
             for m, r in [("spare", 9), ("rep", 3), ("spare", 5)]]
    many = simulate_many(tasks, seed=3, workers=1)
    assert many[1] == simulate(**tasks[1], seed=task_seed(3, 1))
    assert many[0] != many[2]


def _backend_tasks() -> list[dict]:
    cfg = h100_600k(200, steps=40)
    return [{"method": m, "N": 200, "r": r, "ckpt_steps": 10, "config": cfg}
            for m, r in [("spare", 5), ("rep", 3), ("spare", 9)]]


def test_simulate_many_same_results_on_every_backend() -> None:
    tasks = _backend_tasks()
    serial = simulate_many(tasks, seed=11, backend="serial")
    assert [type(x) for x in serial] == [SimResult] * 3
    assert serial == [simulate(**t, seed=task_seed(11, i)) for i, t in enumerate(tasks)]
    assert simulate_many(tasks, seed=11, workers=2) == serial  # processes, largest first
    assert simulate_many(tasks, seed=11, workers=1) == serial  # in this process


def test_simulate_many_dask_equals_serial() -> None:
    pytest.importorskip("dask.distributed")
    tasks = _backend_tasks()
    serial = simulate_many(tasks, seed=11, backend="serial")
    assert simulate_many(tasks, seed=11, backend="dask", workers=2) == serial


def test_simulate_many_bad_backend_raises() -> None:
    with pytest.raises(ValueError, match=r"backend must be one of \('serial', 'processes', 'dask'\)"):
        simulate_many(_backend_tasks(), seed=1, backend="threads")


def _survivable_failures(N: int, r: int, k: int, seed: int) -> list[int]:
    """k groups whose simultaneous death leaves every shard type a live holder (ruler layout)."""
    offsets = np.array(ruler_layout(N, r).offsets)
    live = np.full(N, r)  # live holders per type; group g holds types (g + o) mod N
    dead: list[int] = []
    for g in np.random.default_rng(seed).permutation(N):
        types = (g + offsets) % N
        if (live[types] >= 2).all():
            live[types] -= 1
            dead.append(int(g))
        if len(dead) == k:
            return dead
    raise AssertionError("not enough survivable failures")


@pytest.mark.parametrize(("k", "strictly"), [(6, False), (110, True)])
def test_exact_patch_costs_at_least_the_capped_one(k: int, strictly: bool) -> None:
    """One failure event (k groups die at the same instant, no jitter, no other failure): both runs
    are identical up to it and differ only in the retry's patch. The capped patch computes at most
    one stack per changed survivor (the paper's simulator), the exact one every newly assigned type:
    the same when the depth S rises by one (k = 6: S 1 → 2), more when it rises by two
    (k = 110 > N/2: S 1 → 3, a survivor computes two new types)."""
    N, r = 200, 9
    cfg = h100_600k(N, steps=50, jitter_sigma=0.0)
    trace = np.array([[70.0 * 10.5, g] for g in _survivable_failures(N, r, k, seed=1)])
    with pytest.warns(RuntimeWarning, match="failure trace ends"):
        capped = simulate("spare", N, r, 15, cfg, seed=5, failure_trace=trace)
    with pytest.warns(RuntimeWarning, match="failure trace ends"):
        exact = simulate("spare", N, r, 15, cfg, seed=5, failure_trace=trace, exact_patch=True)
    assert capped.full_restarts == exact.full_restarts == 0 and capped.masked_failures == k
    assert capped.patch_overhead > 0
    if strictly:
        assert exact.patch_overhead >= 2 * capped.patch_overhead - 1e-12
        assert exact.total_s > capped.total_s
    else:
        assert exact.patch_overhead == capped.patch_overhead and exact.total_s == capped.total_s


def test_max_wall_stops_with_warning() -> None:
    cfg = h100_600k(600, steps=10_000)
    with pytest.warns(RuntimeWarning, match="max_wall_s"):
        res = simulate("ckpt", 600, 1, None, cfg, seed=1, max_wall_s=50_000.0)
    assert not res.completed and res.total_s > 50_000.0


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize(("kwargs", "match"), [
    ({"method": "foo"}, "method"), ({"N": 0}, "N must be"), ({"r": 201}, "r must be"),
    ({"ckpt_steps": 0}, "ckpt_steps"), ({"method": "ckpt", "r": 3}, "r must be 1"),
    ({"config": {"steps": 3}}, "config"), ({"r": 13}, "too small for the r=13"),
    ({"failure_trace": [[1.0, 200]]}, "groups must be integers"),
    ({"failure_trace": [[-1.0, 0]]}, "times must be finite"),
    ({"failure_trace": [1.0, 2.0, 3.0]}, "shape"), ({"layout": "zigzag"}, "kind"),
    ({"max_wall_s": 0}, "max_wall_s"), ({"seed": -1}, "seed"),
])
def test_bad_inputs_raise(kwargs: dict, match: str) -> None:
    args = {"method": "spare", "N": 200, "r": 9, "ckpt_steps": 5, "config": small_cfg()}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate(**args)


# ---------------------------------------------------------------- tables and regime models

def test_summary_and_main_table_pick_the_optimum() -> None:
    import pandas as pd

    from spare_lib.cluster import main_table, summarize_runs
    rows = []
    for m, r, ttt in [("spare", 8, 2.6), ("spare", 9, 2.4), ("spare", 9, 2.6), ("rep", 3, 4.0),
                      ("rep", 4, 4.4)]:
        rows.append({"method": m, "N": 600, "r": r, "ckpt_steps": 10, "ttt_over_t0": ttt,
                     "availability": 0.9, "overhead": 2.0, "patch_overhead": 0.01,
                     "phase0_share": 0.5, "restart_share": 0.05, "full_restarts": 10})
    summ = summarize_runs(pd.DataFrame(rows))
    row = summ[(summ.method == "spare") & (summ.r == 9)].iloc[0]
    assert row.ttt_over_t0 == pytest.approx(2.5) and row.trials == 2
    assert (row.ttt_over_t0_min, row.ttt_over_t0_max) == (2.4, 2.6)
    tab = main_table(summ).iloc[0]
    assert (tab.spare_r, tab.rep_r) == (9, 3)
    assert tab.gain == pytest.approx(1 - 2.5 / 4.0)
    assert tab.paper_spare_ttt == 2.49


def test_regime_models_anchor_points() -> None:
    from spare_lib.cluster import restart_time_s, system_mtbf_s
    assert system_mtbf_s(16_384) / 3600 == pytest.approx(54 * 24 / 419)
    assert system_mtbf_s(600_000) / 60 == pytest.approx(5.07, abs=0.01)
    assert restart_time_s(600_000) == pytest.approx(3600.0)
    assert restart_time_s(0) == pytest.approx(300.0)


def test_theory_lines_follow_spare_lib_theory() -> None:
    from spare_lib import theory
    from spare_lib.cluster import theory_lines
    lines = theory_lines(600, [2, 8, 20], h100_600k(600))
    assert lines["overhead"][2] == pytest.approx(theory.overhead_mean(600, 20))
    assert np.allclose(lines["ttt_over_t0"], lines["overhead"] / lines["availability"])
