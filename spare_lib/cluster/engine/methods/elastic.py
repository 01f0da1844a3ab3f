"""Elastic data parallelism (FT-HSDP, TorchFT): drop the failed groups, or rebalance their data.

Both methods keep training after a failure with the live groups only, pay one stall per
reconfiguration (the core charges ``stall_s`` for every attempt with noticed failures and for
every batch of rejoins), and let failed groups rejoin after ``rejoin_s`` (replacement, restart,
catch-up). A global restart happens only when no group is left.

``elastic-drop``
    Each live group computes its own shard (one 64 s compute) per step; a step commits with
    the shards of the groups that are alive at its all-reduce, so its *weight* is the live
    fraction n_live / N of the global batch. The run ends when ``steps`` full steps' worth of
    samples are processed; the dropped-sample fraction is 1 − samples / commits. With a quorum
    (``min_live`` > 0) a failure that leaves fewer than ⌈min_live·N⌉ live groups restarts the
    job from its checkpoint.
``elastic-rebalance``
    The survivors take over the dead groups' data at micro-batch granularity: with b
    micro-batches per shard and k groups away, each survivor computes ⌈N·b/(N−k)⌉ micro-batches
    of 64/b s, so the global batch stays exact (weight 1). A failure noticed during a step
    loses the failed groups' work of that step (their partial gradients die with them); the
    survivors recompute it in a retry of the same step, ⌈lost/(N−k)⌉ micro-batches each. The
    first step after the assignment changes (its first attempt; not the retry that recomputes
    the lost micro-batches) starts with ``fetch_s`` (pulling micro-batches whose data a survivor
    does not stage; 0 = shared storage with prefetch). Jitter is drawn per micro-batch with
    relative spread σ·√b (:func:`spare_lib.cluster.simulate`), so the b micro-batches of one
    shard have the spread σ of a shard: splitting the work does not by itself shorten the
    barrier.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.cluster.engine.methods._common import (
    COMMIT_MASKED,
    COMPUTE_MULT,
    DEPTH,
    FETCH,
    LOST,
    MICRO,
    QUORUM,
    RETRY,
    WIPEOUT,
    make_state,
)


def make_drop_state(N: int, quorum: int = 0) -> tuple:
    """State of an elastic-drop run: one shard per group, and its quorum (fewest live groups it
    trains with; 0: none)."""
    return make_state(np.zeros((N, 1), dtype=np.int64), np.zeros(N, dtype=np.int64),
                      np.zeros(1, dtype=np.int64), ints={QUORUM: quorum})


def make_rebalance_state(N: int, microbatches: int) -> tuple:
    """State of an elastic-rebalance run with b = ``microbatches`` per shard."""
    return make_state(np.zeros((N, 1), dtype=np.int64), np.zeros(N, dtype=np.int64),
                      np.zeros(1, dtype=np.int64),
                      ints={DEPTH: microbatches, MICRO: microbatches},
                      floats={COMPUTE_MULT: 1.0 / microbatches})


@njit(cache=True, inline="always")
def drop_work(retry, g_int, depth, mult, compute_s):  # pragma: no cover
    """One shard of 64 s."""
    return 1, compute_s


@njit(cache=True)
def drop_resolve(alive, n_alive, ms):  # pragma: no cover
    """The step commits with the live groups; an empty cluster, or fewer live groups than the
    quorum, restarts."""
    return COMMIT_MASKED if n_alive > 0 and n_alive >= ms[6][QUORUM] else WIPEOUT


@njit(cache=True)
def drop_weight(n_alive, N):  # pragma: no cover
    """Share of the global batch a commit processes: the live fraction."""
    return n_alive / N


@njit(cache=True, inline="always")
def rebalance_work(retry, g_int, depth, mult, compute_s):  # pragma: no cover
    """⌈N·b/(N−k)⌉ micro-batches of 64/b s (a retry: this group's share of the lost work)."""
    return (g_int if retry else depth), mult * compute_s


@njit(cache=True)
def _rebalance_load(N, b, n_alive):  # pragma: no cover
    return -(-N * b // n_alive)


@njit(cache=True)
def rebalance_notice(w, retry, ms):  # pragma: no cover
    """A failed group's work of this step is lost: its load, plus its patch on a retry."""
    ints = ms[6]
    ints[LOST] += ints[DEPTH] + (ms[2][w] if retry else 0)


@njit(cache=True)
def rebalance_resolve(alive, n_alive, ms):  # pragma: no cover
    """New load for the survivors, and a retry that recomputes the lost micro-batches."""
    ints, patch = ms[6], ms[2]
    if n_alive == 0:
        ints[LOST] = 0
        return WIPEOUT
    N = alive.shape[0]
    share = -(-ints[LOST] // n_alive)
    for w in range(N):
        patch[w] = share if alive[w] else 0
    ints[LOST] = 0
    ints[DEPTH] = _rebalance_load(N, ints[MICRO], n_alive)
    ints[FETCH] = 1
    return RETRY


@njit(cache=True)
def rebalance_rejoin(alive, n_alive, ms):  # pragma: no cover
    """Rejoined groups take back their share: the load falls, the assignment changes."""
    ints = ms[6]
    ints[DEPTH] = _rebalance_load(alive.shape[0], ints[MICRO], n_alive)
    ints[FETCH] = 1


@njit(cache=True)
def rebalance_reset(ms):  # pragma: no cover
    """Global restart: b micro-batches each (one shard), no fetch pending."""
    ints = ms[6]
    ints[DEPTH] = ints[MICRO]
    ints[LOST] = 0
    ints[FETCH] = 0


@njit(cache=True)
def rebalance_delay(retry, fetch_s, ms):  # pragma: no cover
    """``fetch_s`` before the first attempt after the assignment changed (data not staged)."""
    ints = ms[6]
    if retry or ints[FETCH] == 0:
        return 0.0
    ints[FETCH] = 0
    return fetch_s
