"""The recovery strategies beyond the paper (issue 13): elastic-drop, elastic-rebalance,
spare+repair, the shared stall rule, the in-memory checkpoint tier, and failure domains.

A plain-Python oracle re-types the model of each method (trace-driven, no jitter) and the
numba core must agree with it exactly; limit tests pin the methods to the paper's ones.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_oracle import oracle

from spare_lib.cluster import ClusterConfig, h100_600k, simulate
from spare_lib.cluster.engine.clocks import domain_events
from spare_lib.theory import c_lower

NO_FAIL = np.empty((0, 2))


def cfg_(**kw: object) -> ClusterConfig:
    base = {"steps": 6, "jitter_sigma": 0.0, "allreduce_s": 40.0, "checkpoint_s": 10.0,
            "restart_s": 500.0}
    base.update(kw)
    return ClusterConfig(**base)  # type: ignore[arg-type]


def _trace(rng: np.random.Generator, N: int, n_fail: int, n_lead: int, horizon: float) -> list:
    tr = [(float(x), int(g)) for x, g in zip(rng.uniform(0, horizon, n_fail),
                                              rng.integers(0, N, n_fail), strict=True)]
    tr += [(float(x), int(g)) for x, g in zip(rng.uniform(0, horizon, n_lead),
                                               rng.integers(0, 2, n_lead), strict=True)]
    return tr


@settings(max_examples=60, deadline=None)
@given(method=st.sampled_from(["elastic-drop", "elastic-rebalance", "spare+repair"]),
       N=st.integers(7, 16), r=st.integers(2, 3), C=st.one_of(st.none(), st.integers(1, 4)),
       steps=st.integers(3, 9), b=st.integers(1, 4), rejoin=st.sampled_from([math.inf, 90.0, 400.0]),
       fetch=st.sampled_from([0.0, 5.0]), rejoin_stall=st.sampled_from([None, 0.0, 3.0]),
       seed=st.integers(0, 2**32 - 1), n_fail=st.integers(0, 25), n_lead=st.integers(0, 8))
def test_new_methods_match_python_oracle(method: str, N: int, r: int, C: int | None, steps: int,
                                         b: int, rejoin: float, fetch: float,
                                         rejoin_stall: float | None, seed: int, n_fail: int,
                                         n_lead: int) -> None:
    """Random failure logs, no jitter: wall time, downtime and counts equal the oracle's."""
    r = r if method == "spare+repair" else 1
    rng = np.random.default_rng(seed)
    trace = _trace(rng, N, n_fail, n_lead, steps * 3 * 64.0 * 2)
    cfg = cfg_(steps=steps, microbatches=b, rejoin_s=rejoin, fetch_s=fetch, rejoin_stall_s=rejoin_stall)
    res = simulate(method, N, r, C, cfg, failure_trace=np.array(trace).reshape(-1, 2))
    ref = oracle(method, N, r, C, cfg, trace)
    assert res.total_s == pytest.approx(ref["total_s"], rel=1e-12)
    assert res.down_s == pytest.approx(ref["down_s"], rel=1e-9, abs=1e-9)
    assert (res.full_restarts, res.masked_failures, res.rejoins) == \
        (ref["full_restarts"], ref["masked_failures"], ref["rejoins"])


# ---------------------------------------------------------------- limits

@pytest.mark.parametrize("seed", [1, 2])
def test_spare_repair_whose_groups_never_get_back_in_time_is_spare(seed: int) -> None:
    """A finite rejoin time longer than the whole run: spare+repair runs its rejoin machinery
    (revive times scheduled for every failed group, the rejoin poll at each step start) but no
    group comes back before the end, so every number equals plain SPARe's. (With rejoin_s = inf
    the core switches the machinery off and runs SPARe's code path itself: no test.)"""
    cfg = h100_600k(200, steps=400)
    b = simulate("spare", 200, 8, 15, cfg, seed=seed)
    a = simulate("spare+repair", 200, 8, 15, cfg.with_(rejoin_s=10 * b.total_s), seed=seed)
    assert b.masked_failures > 0 and a.rejoins == 0
    assert {k: v for k, v in a.__dict__.items() if k != "method"} == \
        {k: v for k, v in b.__dict__.items() if k != "method"}


def test_spare_repair_rejoins_change_the_run() -> None:
    """The converse: with rejoins inside the run, groups do come back and the run differs."""
    cfg = h100_600k(200, steps=400, rejoin_s=600.0)
    a = simulate("spare+repair", 200, 8, 15, cfg, seed=1)
    b = simulate("spare", 200, 8, 15, cfg, seed=1)
    assert a.rejoins > 0 and a.total_s != b.total_s


def test_rebalance_b1_without_rejoin_has_sparés_load_c_of_k() -> None:
    """b = 1, no rejoin: after k failures every survivor computes ⌈N/(N−k)⌉ = c(k) shards, the
    counting bound that SPARe's S* attains almost always. Trace: 12 failures one step apart, so
    k passes N/2 and c(k) takes the values 1, 2 and 3; the core's mean load over the committed
    steps equals the mean of c(k) at those steps (the oracle records k per commit)."""
    N, steps = 20, 16
    trace = np.array([[64.0 * 1.5 + 150.0 * i, i] for i in range(12)])
    cfg = cfg_(steps=steps, allreduce_s=2.0, checkpoint_s=0.0, microbatches=1,
               rejoin_s=float("inf"))
    res = simulate("elastic-rebalance", N, 1, None, cfg, failure_trace=trace)
    ref = oracle("elastic-rebalance", N, 1, None, cfg, [tuple(x) for x in trace.tolist()])
    loads = [load for load, _ in ref["loads"]]
    assert loads == [c_lower(N, k) for _, k in ref["loads"]]  # the oracle's load is c(k) ...
    assert set(loads) == {1, 2, 3}
    assert res.full_restarts == 0 and res.commits == len(loads)
    assert res.overhead == pytest.approx(np.mean(loads), rel=1e-12)  # ... and so is the core's
    assert res.total_s == pytest.approx(ref["total_s"], rel=1e-12)


def test_drop_without_stall_and_instant_rejoin_is_failure_free_within_noise() -> None:
    """stall_s = 0 and a rejoin after 1 s: every step commits, at most one step's samples of
    a failed group are lost, so TTT/T0 stays at the failure-free barrier jitter value (within
    1 % over 3 seeds; the per-step barrier max of N jittered groups sets both)."""
    cfg = h100_600k(200, steps=2000, stall_s=0.0, rejoin_s=1.0)
    ref = simulate("elastic-drop", 200, 1, None, cfg, failure_trace=NO_FAIL, seed=0)
    for seed in range(3):
        res = simulate("elastic-drop", 200, 1, None, cfg, seed=seed)
        assert res.completed and res.full_restarts == 0
        assert res.ttt_over_t0 == pytest.approx(ref.ttt_over_t0, rel=0.01)
        assert 0 < res.dropped_sample_fraction < 0.01


def test_ideal_memory_tier_equals_disk_with_the_memory_restart_time() -> None:
    """An in-memory tier that is never lost, written as often and as fast as the disk tier,
    is the disk tier with T_r = mem_restart_s: identical runs."""
    cfg = h100_600k(200, steps=600)
    mem = simulate("spare", 200, 6, None, cfg.with_(mem_ideal=True, mem_checkpoint_s=58.8,
                                                    mem_restart_s=900.0),
                   seed=3, mem_ckpt_steps=14)
    disk = simulate("spare", 200, 6, None, cfg.with_(checkpoint_s=58.8, restart_s=900.0), seed=3)
    disk14 = simulate("spare", 200, 6, 14, cfg.with_(checkpoint_s=58.8, restart_s=900.0), seed=3)
    assert mem.total_s == disk14.total_s and mem.full_restarts == disk14.full_restarts > 0
    assert mem.memory_restarts == mem.full_restarts
    assert disk.total_s != disk14.total_s


def test_memory_tier_falls_back_to_disk_when_a_peer_pair_is_lost() -> None:
    """Groups 0 and 1 (group 0's state sits in group 1's memory) fail in the same epoch: the
    memory copy of group 0 is gone, the restart uses the disk checkpoint (T_r)."""
    cfg = cfg_(steps=6, allreduce_s=2.0, restart_s=500.0, mem_checkpoint_s=1.0,
               mem_restart_s=50.0)
    both = np.array([[200.0, 0], [201.0, 1], [202.0, 2], [203.0, 3]])
    res = simulate("ckpt", 4, 1, 5, cfg, failure_trace=both, mem_ckpt_steps=1)
    assert res.full_restarts >= 1 and res.memory_restarts == 0
    one = np.array([[200.0, 0]])
    res1 = simulate("ckpt", 4, 1, 5, cfg, failure_trace=one, mem_ckpt_steps=1)
    assert res1.full_restarts == 1 and res1.memory_restarts == 1
    assert res1.restart_s == pytest.approx(50.0)


# ---------------------------------------------------------------- one stall rule

@pytest.mark.parametrize(("method", "r"), [("spare", 4), ("spare+repair", 4), ("rep", 2),
                                           ("elastic-drop", 1), ("elastic-rebalance", 1)])
def test_every_continuing_method_pays_one_stall_per_reconfiguration(method: str, r: int) -> None:
    """Two failures noticed at the same poll share one stall; a rejoin batch is one more.
    The stall is charged by the core for every method, so stall time = stall_s × (failure
    events + rejoin batches), whatever the method."""
    cfg = cfg_(steps=12, allreduce_s=2.0, stall_s=7.0, rejoin_s=150.0, restart_s=100.0)
    trace = np.array([[100.0, 5], [100.0, 9], [400.0, 3]])  # 5 and 9 noticed at one poll
    res = simulate(method, 16, r, None, cfg, failure_trace=trace)
    assert res.full_restarts == 0
    events = 2  # one poll with two failures, one with one
    batches = 2 if method in ("spare+repair", "elastic-drop", "elastic-rebalance") else 0
    assert res.rejoins == (3 if batches else 0)  # 5 and 9 come back together, then 3
    assert res.stall_s == pytest.approx(7.0 * (events + batches))
    assert res.masked_failures == 3


# ---------------------------------------------------------------- failure domains

@pytest.mark.parametrize("dist", ["weibull", "exponential"])
def test_domain_events_replay_exactly_as_a_trace(dist: str) -> None:
    """q = 1: every failure is a domain event; the run equals the replay of the same events
    expanded to all groups of their domain (the trace path is oracle-tested)."""
    N, D = 60, 7
    cfg = h100_600k(N, steps=300, jitter_sigma=0.0, domain_size=D, domain_fault_share=1.0,
                    failure_dist=dist, system_mtbf_s=4000.0)
    seed = np.random.SeedSequence(5)
    res = simulate("spare", N, 4, 10, cfg, seed=seed)
    ptr, times = domain_events(N, cfg, 1000.0 * cfg.t0_s(), np.random.default_rng(
        np.random.SeedSequence(5).spawn(1)[0]))
    rows = [(t, g) for d in range(len(ptr) - 1) for t in times[ptr[d]:ptr[d + 1]]
            for g in range(d * D, min(N, (d + 1) * D))]
    ref = simulate("spare", N, 4, 10, cfg.with_(domain_fault_share=0.0), seed=0,
                   failure_trace=np.array(rows))
    assert res.total_s == ref.total_s and res.full_restarts == ref.full_restarts > 0


def test_domain_share_keeps_the_total_failure_rate() -> None:
    """With q = 0.3 the noticed failures per unit of up time stay those of q = 0 (domain
    events kill D groups at once, but there are q/(D(1−q)+q)... fewer of them: the per-group
    clocks run at (1 − q)/m and domain events at q/m, D groups each). Tolerance 6 s.d. of
    the Poisson counts."""
    N, D = 600, 10
    base = h100_600k(N, steps=1500, failure_dist="exponential")
    a = simulate("spare", N, 10, 25, base, seed=1)
    b = simulate("spare", N, 10, 25, base.with_(domain_size=D, domain_fault_share=0.3), seed=1)
    rate_a = a.failures_noticed / a.total_s
    rate_b = b.failures_noticed / b.total_s
    expect = rate_a * ((1 - 0.3) + 0.3 * D)  # groups killed per unit time
    assert rate_b == pytest.approx(expect, rel=6 / math.sqrt(b.failures_noticed))


def test_domain_inputs_are_validated() -> None:
    with pytest.raises(ValueError, match="domain_size"):
        simulate("spare", 20, 3, 5, h100_600k(20, steps=5, domain_size=30, domain_fault_share=0.1))
    with pytest.raises(ValueError, match="domain_fault_share"):
        h100_600k(20, domain_fault_share=1.5)


def test_strided_rep_places_replicas_in_distinct_domains() -> None:
    """Strided replica sets (w mod ⌈N/r⌉) keep every set's members ⌈N/r⌉ ≥ D groups apart."""
    from spare_lib.cluster.engine.methods.replication import make_rep_state

    N, r, D = 600, 3, 10
    set_of = make_rep_state(N, r, "strided")[2]
    for s in range(-(-N // r)):
        members = np.flatnonzero(set_of == s)
        assert len(members) == r and len(set(members // D)) == r
    with pytest.raises(ValueError, match="rep_placement"):
        make_rep_state(N, r, "random")


def test_microbatches_do_not_shorten_the_failure_free_barrier() -> None:
    """Jitter per micro-batch has spread σ·√b, so b micro-batches carry a shard's spread: without
    failures elastic-rebalance's TTT/T0 does not fall with b (within 1 %: the barrier maximum
    of 200 groups over 1,000 steps, whose mean has a relative s.e. below 0.1 %)."""
    base = simulate("elastic-rebalance", 200, 1, None, h100_600k(200, steps=1000), seed=0,
                    failure_trace=NO_FAIL)
    for b in (4, 16):
        cfg = h100_600k(200, steps=1000, microbatches=b)
        res = simulate("elastic-rebalance", 200, 1, None, cfg, seed=0, failure_trace=NO_FAIL)
        assert res.ttt_over_t0 == pytest.approx(base.ttt_over_t0, rel=0.01)
