"""SPARe-b's hooks (issue 25): SPARe with b micro-batches per shard, and SPARe-b+drop.

Every group holds the r shard types of its stack (the base layout; nothing is reordered); each
type is cut into b micro-batches. A step's assignment is micro-batch RECTLR's least makespan
(:mod:`spare_lib.rectlr.microbatch`): every type's b micro-batches go to its live holders,
each exactly once, and the busiest survivor computes L* of them. So, unlike SPARe's S* whole
stacks per survivor, nothing is computed twice, and the step costs L*/b shards (S̄_b).

* work: a live group computes its own load Σ_p y[g, p] (a retry: its patch), in micro-batches
  of 64/b s, each with its own jitter (relative spread σ·√b, as elastic-rebalance's, so the b
  micro-batches of a shard have a shard's spread σ; ``jitter_model='step'``: one factor of
  spread σ per attempt). The two counts share the group's int: load in the low 32 bits, patch
  in the high ones.
* notice: the death is logged for the incremental kernel
  (:func:`~spare_lib.rectlr.microbatch_inc.microbatch_kernel_inc`).
* resolve: what the survivors finished in this step is kept (every live group completes its
  attempt; a group that failed loses every micro-batch it computed in the step, as its partial
  gradient dies with it); the next steps' assignment is the incremental least makespan on the
  survivors; the retry's patch is a second least-makespan flow over the lost micro-batches
  (:func:`~spare_lib.rectlr.microbatch_inc.microbatch_patch`). Nothing lost (the failed groups
  had no load): COMMIT_FIXED. A type without a live holder: WIPEOUT, or with ``DROP`` the
  types without a live holder are dropped (:func:`~spare_lib.rectlr.microbatch_inc.
  microbatch_patch_drop`), the covered ones keep exact micro-batch coverage, and commits weigh
  covered types / N (elastic-drop's weighting) until the holders rejoin; fewer covered types
  than ``QUORUM`` restarts.
* delay: 0; it marks a first attempt (the retry flag is the core's).
* rejoin: the least makespan from scratch on the new live set.
* reset: every group alive, a fresh assignment (L* = b: each group b micro-batches).

Which hooks the core asks and when: :mod:`spare_lib.cluster.engine.methods`. The sampled barrier
is not supported (groups compute different loads in a first attempt); the engine runs the direct
loop. b = 1 of ``spare-b`` is SPARe itself (its binding runs :mod:`.spare`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.cluster.engine.methods._common import (
    COMMIT_FIXED,
    COMPUTE_MULT,
    COVERED,
    DEPTH,
    DROP,
    MB_RETRY,
    MICRO,
    QUORUM,
    RETRY,
    WIPEOUT,
    make_state,
)
from spare_lib.rectlr.microbatch import KEPT, MB_WIPEOUT, NV_LIVE, microbatch_workspace
from spare_lib.rectlr.microbatch_inc import (
    microbatch_inc_invalidate,
    microbatch_inc_mode,
    microbatch_inc_notice,
    microbatch_kernel_inc,
    microbatch_patch,
    microbatch_patch_drop,
)

#: The group's int holds its load in the low bits and its retry patch above them.
_SHIFT = 32
_LOW = (1 << _SHIFT) - 1


def make_mb_workspace(base_stacks: np.ndarray) -> tuple:
    """``(step flow, retry flow, done (N, r), zero (N, r), all-live (N,))`` of a SPARe-b run."""
    st = np.ascontiguousarray(base_stacks, dtype=np.int64)
    wa, wb = microbatch_workspace(st), microbatch_workspace(st)
    microbatch_inc_mode(wa[6], True)
    N = st.shape[0]
    return (wa, wb, np.zeros_like(st), np.zeros_like(st), np.ones(N, np.bool_))


def make_spare_mb_state(base_stacks: np.ndarray, microbatches: int, drop: bool = False,
                        quorum: int = 0) -> tuple:
    """State of a SPARe-b run: base stacks, b, drop on wipe-out, the covered-type quorum.

    The stacks are copied into a writable C-contiguous int64 array, the type the event core
    passes: a read-only layout (``ruler_layout(...).stacks``) would make a state of another
    numba type, and every hook called with it would compile once more (12 s here)."""
    base_stacks = np.array(base_stacks, dtype=np.int64, order="C")
    N = base_stacks.shape[0]
    ms = make_state(base_stacks, np.zeros(N, dtype=np.int64), np.zeros(1, dtype=np.int64),
                    ints={DEPTH: microbatches, MICRO: microbatches, DROP: int(bool(drop)),
                          QUORUM: quorum, COVERED: N},
                    floats={COMPUTE_MULT: 1.0 / microbatches},
                    mb=make_mb_workspace(base_stacks))
    spare_mb_reset(ms)
    return ms


@njit(cache=True, inline="always")
def spare_mb_work(retry, g_int, depth, mult, compute_s):  # pragma: no cover
    """This attempt's micro-batches of the group (its load, or its patch on a retry), each
    64/b s × its own jitter."""
    return ((g_int >> _SHIFT) if retry else (g_int & _LOW)), mult * compute_s


@njit(cache=True)
def spare_mb_delay(retry, ms):  # pragma: no cover
    """No fetch (every holder stages its types); a first attempt clears the retry mark."""
    if not retry:
        ms[6][MB_RETRY] = 0
    return 0.0


@njit(cache=True)
def spare_mb_notice(w, retry, ms):  # pragma: no cover
    """Group w has failed: logged for the incremental kernel."""
    wa = ms[9][0]
    microbatch_inc_notice(w, wa[6], wa[7])


@njit(cache=True)
def _loads(ms):  # pragma: no cover
    """The step assignment's load of every group into the low bits of ``group_i``; L is DEPTH."""
    stacks, gi = ms[0], ms[2]
    y = ms[9][0][3]
    N, r = stacks.shape
    for g in range(N):
        s = 0
        for p in range(r):
            s += y[g, p]
        gi[g] = s


@njit(cache=True)
def _covered(nv):  # pragma: no cover
    c = 0
    live = nv[NV_LIVE]
    for t in range(live.shape[0]):
        if live[t] > 0:
            c += 1
    return c


@njit(cache=True)
def _assign(alive, ms):  # pragma: no cover
    """The step assignment on the live groups: the incremental least makespan, or with types
    uncovered (drop) the covered types' least makespan. Returns False on a restart."""
    stacks, ints = ms[0], ms[6]
    wa, wb, own, zero, ones = ms[9]
    N = stacks.shape[0]
    b = ints[MICRO]
    if ints[COVERED] == N:
        out, L, _moved = microbatch_kernel_inc(stacks, alive, b, *wa)
        if out != MB_WIPEOUT:
            ints[DEPTH] = L
            _loads(ms)
            return True
        if ints[DROP] == 0:
            return False
    out, L, _lost = microbatch_patch_drop(stacks, alive, b, zero, zero, False, *wa)
    microbatch_inc_invalidate(wa[6])  # wa holds a drop assignment, not a kept flow
    if out == MB_WIPEOUT:
        return False
    ints[COVERED] = _covered(wa[4])
    if ints[COVERED] < ints[QUORUM] or ints[COVERED] == 0:
        return False
    ints[DEPTH] = L
    _loads(ms)
    return True


@njit(cache=True)
def spare_mb_resolve(alive, n_alive, ms):  # pragma: no cover
    """Keep the survivors' finished micro-batches, reassign, patch the lost ones:
    COMMIT_FIXED, RETRY or WIPEOUT."""
    stacks, gi, ints = ms[0], ms[2], ms[6]
    wa, wb, own, zero, ones = ms[9]
    N, r = stacks.shape
    first = ints[MB_RETRY] == 0
    src = wa[3] if first else wb[3]  # what every group was given in this attempt
    for g in range(N):
        for p in range(r):
            if not alive[g]:
                own[g, p] = 0
            elif first:
                own[g, p] = src[g, p]
            else:
                own[g, p] += src[g, p]
    if not _assign(alive, ms):
        return WIPEOUT
    b = ints[MICRO]
    if ints[COVERED] == N:
        out, _lp, _lost = microbatch_patch(stacks, alive, b, own, own, False, *wb)
    else:
        out, _lp, _lost = microbatch_patch_drop(stacks, alive, b, own, own, False, *wb)
    if out == KEPT:  # every micro-batch is done by a survivor: commit
        ints[MB_RETRY] = 0
        return COMMIT_FIXED
    z = wb[3]
    for g in range(N):
        s = 0
        for p in range(r):
            s += z[g, p]
        gi[g] = (gi[g] & _LOW) | (s << _SHIFT)
    ints[MB_RETRY] = 1
    return RETRY


@njit(cache=True)
def spare_mb_rejoin(alive, n_alive, ms):  # pragma: no cover
    """Rejoined groups: the least makespan from scratch on the live groups (types that have a
    live holder again are covered again)."""
    ints = ms[6]
    wa = ms[9][0]
    microbatch_inc_invalidate(wa[6])
    ints[COVERED] = alive.shape[0]
    if not _assign(alive, ms):  # pragma: no cover - rejoins only add live holders
        ints[COVERED] = 0


@njit(cache=True)
def spare_mb_reset(ms):  # pragma: no cover
    """Global restart: every group alive, a fresh assignment (each group b micro-batches)."""
    ints = ms[6]
    wa, wb, own, zero, ones = ms[9]
    microbatch_inc_invalidate(wa[6])
    ints[COVERED] = ones.shape[0]
    ints[MB_RETRY] = 0
    _assign(ones, ms)


@njit(cache=True)
def spare_mb_weight(n_alive, N, ms):  # pragma: no cover
    """Share of the global batch a commit processes: the covered types (1 unless dropped)."""
    return ms[6][COVERED] / N
