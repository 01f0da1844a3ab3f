"""SPARe-b, SPARe-b+repair and SPARe-b+drop in the event core (issue 25 item 3).

* b = 1 is SPARe: every golden run of ``spare`` (tests/cluster/data/core_golden.json) is
  reproduced bit for bit by ``spare-b`` with ``microbatches=1``;
* the core equals the plain-Python oracle (``sim_oracle.py``) on random traces with jitter,
  rejoins and wipe-outs, including the dropped samples of SPARe-b+drop;
* the hooks keep the invariants along random failure sequences: every micro-batch of a covered
  type is computed exactly once in a step by a live holder of it, the step's makespan is the
  least one, and a commit's weight is the covered share (≤ 1);
* exact limits: ``min_live=1`` makes SPARe-b+drop SPARe-b+repair, bit for bit.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_oracle import oracle

from spare_lib.cluster import ClusterConfig, h100_600k, simulate

B_METHODS = ("spare-b", "spare-b+repair", "spare-b+drop")
GOLDEN = json.loads((Path(__file__).parent / "data" / "core_golden.json").read_text())


def small_cfg(**kw: object) -> ClusterConfig:
    """T_a = 40 s, T_s = 10 s, T_r = 500 s, 64 s per stack, rejoin after 200 s, b = 4."""
    base = {"steps": 4, "jitter_sigma": 0.0, "allreduce_s": 40.0, "checkpoint_s": 10.0,
            "restart_s": 500.0, "rejoin_s": 200.0, "jitter_min": 0.6, "microbatches": 4}
    base.update(kw)
    return ClusterConfig(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------- b = 1 is SPARe

@pytest.mark.parametrize("entry", [e for e in GOLDEN if e["case"]["method"] == "spare"],
                         ids=lambda e: "N{N}-r{r}-s{seed}".format(**e["case"]))
def test_b1_reproduces_spare_golden_runs_bit_for_bit(entry: dict) -> None:
    """The golden runs of SPARe with ``spare-b`` at b = 1: every recorded field equal."""
    c = dict(entry["case"])
    over = {k: c.pop(k) for k in ("failure_dist", "jitter_sigma") if k in c}
    cfg = h100_600k(c["N"], steps=c.pop("steps"), microbatches=1, **over)
    kw: dict = {k: c.pop(k) for k in ("exact_patch", "layout") if k in c}
    if c.pop("trace", False):
        rng = np.random.default_rng(99)
        kw["failure_trace"] = np.column_stack([np.sort(rng.uniform(0, 3e6, 4000)),
                                               rng.integers(0, c["N"], 4000)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = simulate("spare-b", c["N"], c["r"], c["ckpt_steps"], cfg, seed=c["seed"], **kw)
    got = {k: (v.hex() if isinstance(v, float) else (list(v) if isinstance(v, tuple) else v))
           for k, v in res.__dict__.items()}
    assert got["method"] == "spare-b"
    assert {k: got[k] for k in entry["result"] if k != "method"} == \
        {k: v for k, v in entry["result"].items() if k != "method"}


def test_b1_of_repair_is_spare_repair_with_the_sampled_barrier() -> None:
    """spare-b+repair at b = 1 is spare+repair, also through the sampled barrier."""
    cfg = h100_600k(60, steps=300, system_mtbf_s=200.0, rejoin_s=900.0, microbatches=1)
    for barrier in ("direct", "sampled"):
        a = simulate("spare+repair", 60, 4, 12, cfg, seed=2, failure_seed=7, barrier=barrier)
        b = simulate("spare-b+repair", 60, 4, 12, cfg, seed=2, failure_seed=7, barrier=barrier)
        assert a.reorder_events > 10 and a.rejoins > 10
        assert dataclasses.replace(b, method="spare+repair") == a


# ---------------------------------------------------------------- the oracle

@pytest.mark.parametrize("method", B_METHODS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(N=st.integers(6, 14), r=st.integers(2, 3), C=st.one_of(st.none(), st.integers(1, 3)),
       steps=st.integers(2, 8), seed=st.integers(0, 2**32 - 1), n_fail=st.integers(0, 30),
       b=st.integers(2, 5), sigma=st.sampled_from([0.0, 0.05]),
       jitter=st.sampled_from(["paper", "step", "straggler"]),
       rejoin=st.sampled_from([150.0, 400.0, float("inf")]),
       min_live=st.sampled_from([0.0, 0.5, 0.9]))
def test_core_matches_oracle_with_wipeouts_and_drops(method: str, N: int, r: int, C: int | None,
                                                     steps: int, seed: int, n_fail: int, b: int,
                                                     sigma: float, jitter: str, rejoin: float,
                                                     min_live: float) -> None:
    """Dense random traces (wipe-outs are common at r ≤ 3): wall time, downtime, counts and the
    samples processed (SPARe-b+drop's dropped types) equal the oracle's to float rounding."""
    rng = np.random.default_rng(seed)
    horizon = steps * 3 * 64.0 * 2
    trace = [(float(x), int(g)) for x, g in zip(rng.uniform(0, horizon, n_fail),
                                                 rng.integers(0, N, n_fail), strict=True)]
    trace += [(float(x), 0) for x in rng.uniform(0, horizon, 2)]  # the checkpoint leader
    cfg = small_cfg(steps=steps, microbatches=b, jitter_sigma=sigma, jitter_model=jitter,
                    rejoin_s=rejoin, min_live=min_live, straggler_share=0.3,
                    straggler_slowdown=0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = simulate(method, N, r, C, cfg, seed=seed, failure_trace=np.array(trace))
    ref = oracle(method, N, r, C, cfg, trace, seed=seed)
    assert res.total_s == pytest.approx(ref["total_s"], rel=1e-12)
    assert res.down_s == pytest.approx(ref["down_s"], rel=1e-9, abs=1e-9)
    assert res.samples == pytest.approx(ref["samples"], rel=1e-12)
    assert (res.full_restarts, res.masked_failures, res.steps_redone, res.rejoins) == \
        (ref["full_restarts"], ref["masked_failures"], ref["steps_redone"], ref["rejoins"])


def test_drop_continues_through_a_wipeout_that_restarts_repair() -> None:
    """N = 8, r = 2 (ruler offsets 0, 1: type t on groups t and t − 1): groups 3 and 4 die in
    step 1, so type 3 has no live holder. SPARe-b+repair restarts; SPARe-b+drop commits 7/8 of
    the batch until a holder is back (rejoin after 200 s) and never restarts."""
    cfg = small_cfg(steps=6)
    trace = np.array([[10.0, 3], [20.0, 4], [1e6, 0]])  # (the last: after the run)
    rep = simulate("spare-b+repair", 8, 2, None, cfg, failure_trace=trace)
    drop = simulate("spare-b+drop", 8, 2, None, cfg, failure_trace=trace)
    assert rep.full_restarts == 1 and drop.full_restarts == 0
    assert 0.0 < drop.dropped_sample_fraction < 1.0 and drop.samples >= 6.0
    assert drop.commits > 6  # the dropped eighths are made up by more steps
    ref = oracle("spare-b+drop", 8, 2, None, cfg, [tuple(x) for x in trace])
    assert drop.total_s == pytest.approx(ref["total_s"], rel=1e-12)


# ---------------------------------------------------------------- hooks: invariants

@settings(max_examples=60, deadline=None)
@given(N=st.integers(6, 24), r=st.integers(2, 4), b=st.integers(1, 8),
       drop=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_hooks_compute_every_microbatch_once_on_a_live_holder(N: int, r: int, b: int, drop: bool,
                                                              seed: int) -> None:
    """Random deaths, one or a few per attempt, until a restart: after each resolve the
    survivors' finished micro-batches plus the retry's patch give every covered type exactly b,
    only live holders compute, the step's makespan equals the stateless least makespan of the
    live set (normal mode), and the weight is the covered share."""
    from spare_lib.cluster.engine.methods._common import COVERED, DEPTH, RETRY, WIPEOUT
    from spare_lib.cluster.engine.methods.spare_mb import (
        make_spare_mb_state,
        spare_mb_delay,
        spare_mb_notice,
        spare_mb_resolve,
        spare_mb_weight,
    )
    from spare_lib.rectlr.microbatch import microbatch_assign
    from spare_lib.stacking import max_ruler_r, ruler_layout

    lay = ruler_layout(N, min(r, max_ruler_r(N)))
    ms = make_spare_mb_state(lay.stacks, b, drop=drop)
    rng = np.random.default_rng(seed)
    alive = np.ones(N, dtype=np.bool_)
    retry = False
    for _ in range(3 * N):
        spare_mb_delay(retry, ms)
        live = np.flatnonzero(alive)
        for w in rng.choice(live, size=min(len(live), int(rng.integers(1, 3))), replace=False):
            alive[w] = False
            spare_mb_notice(int(w), retry, ms)
        out = spare_mb_resolve(alive, int(alive.sum()), ms)
        has_live = np.array([alive[np.nonzero(lay.stacks == t)[0]].any() for t in range(N)])
        if out == WIPEOUT:  # a type without a live holder (drop: no group left at all)
            assert not has_live.all() and (not drop or not has_live.any())
            break
        own, z = ms[9][2], ms[9][1][3]
        got = np.zeros(N, dtype=np.int64)
        np.add.at(got, lay.stacks.ravel(), (own + (z if out == RETRY else 0)).ravel())
        assert np.array_equal(got, np.where(has_live, b, 0))
        assert not own[~alive].any() and (out != RETRY or not z[~alive].any())
        assert ms[6][COVERED] == has_live.sum()
        assert spare_mb_weight(int(alive.sum()), N, ms) == has_live.sum() / N <= 1.0
        y = ms[9][0][3]
        assert not y[~alive].any() and y.sum(axis=1).max() == ms[6][DEPTH]
        if has_live.all():
            assert ms[6][DEPTH] == microbatch_assign(lay, alive, b).makespan
        retry = out == RETRY


# ---------------------------------------------------------------- limits and refusals

def test_min_live_one_makes_drop_repair_bit_for_bit() -> None:
    """A quorum of every type: a wipe-out restarts SPARe-b+drop, as SPARe-b+repair."""
    cfg = h100_600k(40, steps=300, system_mtbf_s=150.0, restart_s=600.0, rejoin_s=1800.0,
                    min_live=1.0)
    drop = simulate("spare-b+drop", 40, 3, 9, cfg, seed=3, failure_seed=5)
    rep = simulate("spare-b+repair", 40, 3, 9, cfg, seed=3, failure_seed=5)
    assert rep.full_restarts > 2
    assert dataclasses.replace(drop, method="spare-b+repair") == rep
    looser = simulate("spare-b+drop", 40, 3, 9, cfg.with_(min_live=0.0), seed=3, failure_seed=5)
    assert looser.full_restarts < rep.full_restarts and looser.dropped_sample_fraction > 0


def test_sampled_barrier_is_refused_at_b_above_one() -> None:
    cfg = h100_600k(20, steps=3)
    with pytest.raises(ValueError, match="barrier must be 'direct' or 'auto' for method="):
        simulate("spare-b", 20, 3, 2, cfg, seed=0, barrier="sampled")


def test_microbatch_overhead_is_the_makespan() -> None:
    """S̄ of SPARe-b is L*/b per commit: between the global bound and SPARe's S*."""
    cfg = h100_600k(100, steps=400, system_mtbf_s=120.0, microbatches=8)
    res = simulate("spare-b", 100, 6, 20, cfg, seed=1, failure_seed=2)
    spare = simulate("spare", 100, 6, 20, cfg, seed=1, failure_seed=2)
    assert 1.0 < res.overhead < spare.overhead
