"""SPARe's hooks (SPEC §4): stacked compute, RECTLR after failures, base layout at a restart.

* work: a live group computes its first S stack entries (a retry: its patch count), each
  64 s × its own jitter; the core polls it at the start of each (see :mod:`..core`).
* resolve: RECTLR (:func:`spare_lib.rectlr.kernels_inc.rectlr_kernel_inc`, the kernel with its
  Phase 0 kept across a failure sequence; bit-identical to ``rectlr_kernel``) on the survivors:
  phase 0 commits (COMMIT_FIXED), a reorder sets S = S* and retries with patch compute (RETRY), no feasible
  depth is a wipe-out (WIPEOUT).
* reset: base stacks, S = 1.
* notice / sampled (the sampled barrier's core): deaths are reported to the kernel as they
  are noticed and the patch of a retry is read sparsely (:func:`spare_retry_plan`), so a
  failure event costs what RECTLR explores, not O(N).
* rejoin (spare+repair): repaired groups are back; RECTLR runs again from the base stacks on
  the new set of live groups, so every rejoined group takes its stack back and S falls to the
  least feasible depth of the groups that are still away.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.cluster.engine.methods._common import (
    COMMIT_FIXED,
    DEPTH,
    EXACT_PATCH,
    RETRY,
    WIPEOUT,
    make_state,
)
from spare_lib.rectlr.kernels import rectlr_kernel
from spare_lib.rectlr.kernels_inc import (
    rectlr_inc_invalidate,
    rectlr_inc_mode,
    rectlr_inc_notice,
    rectlr_inc_patch_plan,
    rectlr_inc_workspace,
    rectlr_kernel_inc,
)


def make_spare_state(base_stacks: np.ndarray, exact_patch: bool) -> tuple:
    """State of a SPARe run: stacks, the patch count per group (``group_i``), S and the patch mode."""
    N = base_stacks.shape[0]
    return make_state(base_stacks, np.zeros(N, dtype=np.int64), np.zeros(1, dtype=np.int64),
                      ints={EXACT_PATCH: int(bool(exact_patch))},
                      ws=rectlr_inc_workspace(np.ascontiguousarray(base_stacks, dtype=np.int64)))


@njit(cache=True, inline="always")
def spare_work(retry, patch_w, depth, mult, compute_s):  # pragma: no cover
    """Group's compute this attempt: its first S stack entries (a retry: its patch count),
    each 64 s × its own jitter."""
    return (patch_w if retry else depth), compute_s


@njit(cache=True)
def spare_resolve(alive, n_alive, ms):  # pragma: no cover
    """RECTLR on the survivors after a failed attempt: COMMIT_FIXED, RETRY or WIPEOUT."""
    stacks, patch, ints = ms[0], ms[2], ms[6]
    hold_g, tpos, hcnt, match, matchpos, seen_alive, st, iw, heap = ms[8]
    outcome, s_star, _moved = rectlr_kernel_inc(stacks, alive, ints[DEPTH], patch, hold_g, tpos,
                                                hcnt, match, matchpos, seen_alive, st, iw, heap,
                                                ints[EXACT_PATCH] != 0)
    if outcome == 2:
        return WIPEOUT
    if outcome == 0:
        return COMMIT_FIXED
    ints[DEPTH] = s_star
    return RETRY


@njit(cache=True)
def spare_reset(ms):  # pragma: no cover
    """Global restart: every group gets its base stack back, S = 1."""
    stacks, base = ms[0], ms[1]
    N, r = base.shape
    for w in range(N):
        for p in range(r):
            stacks[w, p] = base[w, p]
    ms[6][DEPTH] = 1
    rectlr_inc_invalidate(ms[8][6])  # every group is revived with it (restart, rejoin)


@njit(cache=True)
def spare_rejoin(alive, n_alive, ms):  # pragma: no cover
    """spare+repair: groups rejoined. Base stacks, S = 1, then RECTLR on the live groups."""
    spare_reset(ms)
    stacks, patch, ints = ms[0], ms[2], ms[6]
    if n_alive == stacks.shape[0]:
        return
    outcome, s_star, _moved = rectlr_kernel(stacks, alive, 1, patch, False)
    if outcome == 1:
        ints[DEPTH] = s_star
    rectlr_inc_invalidate(ms[8][6])  # the stacks changed outside the incremental kernel


@njit(cache=True)
def spare_sampled(ms):  # pragma: no cover
    """The core runs the sampled barrier: it reports deaths (:func:`spare_notice`) and reads
    the retry's patch through :func:`spare_retry_plan`."""
    rectlr_inc_mode(ms[8][6], True, True)


@njit(cache=True)
def spare_notice(w, retry, ms):  # pragma: no cover
    """A failure of group w is noticed: RECTLR's kept cover learns it (logged mode only)."""
    rectlr_inc_notice(w, ms[8][6], ms[8][7])


@njit(cache=True)
def spare_retry_plan(ms):  # pragma: no cover
    """``(k0, groups, n)``: on the retry every survivor computes k0 stacks except
    ``groups[:n]``, whose patch is in ``group_i``; n < 0: read every group's patch (dense)."""
    return rectlr_inc_patch_plan(ms[8][6], ms[8][7])
