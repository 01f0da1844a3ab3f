"""RECTLR, SPARe's reordering controller (SPEC §4): fixed check, depth search, min-move reorder.

After failures the survivors (live and not flagged) must still compute every shard type exactly
once. RECTLR decides, in order:

* **Phase 0 (fixed check)** — do the survivors' current first S positions cover all N types?
  Then nothing moves and the step is committed (outcome ``'fixed'``).
* **Phase 1 (depth search)** — the least S* ≥ S at which a perfect b-matching types → survivors
  with capacity S* exists (Hopcroft–Karp, :mod:`spare_lib.rectlr.matching`). Depths below
  c(k) = ceil(N/(N−k)) are skipped by counting; the matching is kept while S grows. If some
  type has no live holder: ``'wipeout'`` (no depth helps; global restart).
* **Phase 2 (min-move reorder)** — the assignment of types to survivors at depth S* that moves
  the fewest shards into the survivors' first S* positions (min-cost flow,
  :mod:`spare_lib.rectlr.mcmf`), then the new stacks (outcome ``'reordered'``).

Stack rewrite (Phase 2) and ``moved``
-------------------------------------
For each survivor w, with old stack ``old`` and assigned types A_w:

1. a type of A_w at an old position p < S* stays at p (cost 0);
2. the other types of A_w ("moved in", cost 1, old positions ≥ S*) take the deepest free
   positions below S* (free = the old entry is not assigned to w), so work already computed at
   positions < S is kept where possible; the free positions not used keep their old entry
   (SPEC: "holes filled with its unassigned hosted types in previous order" — keeping the old
   entry is the order-preserving choice that moves nothing);
3. positions S*..r−1 get the remaining hosted types in their previous order (SPEC §4).

``moved`` = number of (survivor, position < S*) entries that changed = number of shards moved
into a compute window = the min-cost-flow optimum of SPEC §4 (checked against NetworkX in the
tests). Entries at positions ≥ S* may be shuffled by rule 3; they are not computed and not
counted.

Patch (retry of the same step, SPEC §4)
---------------------------------------
``patch[w]`` (capped, as the paper's simulator): 1 for a survivor whose first S* positions
changed (it recomputes one stack, at its earliest changed position), else 1 if S grew
(S* > S, the new layer) else 0; 0 for dead groups and for ``'fixed'``/``'wipeout'``.
Exact variant (``exact_patch=True``): the number of positions p < S* of the new stack whose
type was not computed in this attempt, i.e. p ≥ S or the entry changed (a moved-in type always
comes from a position ≥ S* ≥ S, so it was never computed here).

Numba kernel contract (for other ``@njit`` code)
------------------------------------------------
``rectlr_kernel(stacks, alive, depth, patch_out, exact_patch=False) -> (outcome, s_star, moved)``

* ``stacks``: int64 C-contiguous (N, r), row w = group w's stack (a permutation of the types w
  hosts; every type held by exactly r groups). Modified IN PLACE to the new stacks on
  'reordered'; unchanged on 'fixed'; untouched on 'wipeout'.
* ``alive``: bool (N,), the survivors (live and not flagged).
* ``depth``: int64, current S in 1..r (not checked inside the kernel; the Python API checks).
* ``patch_out``: int64 (N,), written: the capped patch above, or the exact patch when
  ``exact_patch`` is True; all zeros on 'fixed' and 'wipeout'.
* returns int64 triple ``(outcome, s_star, moved)``: outcome 0 = 'fixed' (Phase 0 holds), 1 =
  'reordered' (Phases 1+2 ran; ``moved`` may be 0 when only S grew), 2 = 'wipeout';
  ``s_star`` = depth for 'fixed', S* for 'reordered', 0 for 'wipeout'; ``moved`` as above
  (0 for 'fixed' and 'wipeout').
* :func:`rectlr_kernel_assign` has the same contract plus ``assign_out`` (int64 (N,)): the
  group that computes each type (-1 on wipe-out).
* :func:`rectlr_kernel_ws` ``(stacks, alive, depth, patch_out, hold_g, tpos, hcnt,
  exact_patch=False)``: same contract, with a holder index built once per restart by
  ``hold_g, tpos, hcnt = rectlr_workspace(stacks)`` and kept in sync by the kernel (saves the
  O(N·r) index build, about half the time of a reordering call).
* :func:`~spare_lib.rectlr.kernels_inc.rectlr_kernel_inc` (module :mod:`.kernels_inc`)
  ``(stacks, alive, depth, patch_out, *rectlr_inc_workspace(stacks), exact_patch=False)``: same
  contract and results, with the Phase 0 cover, the Phase 2 search
  arrays and the survivor count kept across a failure sequence, so a call costs what it
  explores instead of O(N). Modes (:func:`rectlr_inc_mode`): deaths reported by
  :func:`rectlr_inc_notice` instead of found by an O(N) compare, and a sparse ``patch_out``
  (:func:`rectlr_inc_patch_plan`). Stacks reset or groups revived outside the kernel:
  :func:`rectlr_inc_invalidate`.

Examples
--------
>>> from spare_lib.rectlr import Controller
>>> from spare_lib.stacking import ruler_layout
>>> ctl = Controller(ruler_layout(12, 3))
>>> ctl.fail([0]).outcome, ctl.depth
('reordered', 2)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.rectlr.matching import (
    build_holders,
    build_match_lists,
    cover_in_place,
    extend_zero_cost,
    has_live_holder,
    phase1_depth,
)
from spare_lib.rectlr.mcmf import (
    phase2_assign,
)

OUTCOMES = ("fixed", "reordered", "wipeout")
FIXED, REORDERED, WIPEOUT = 0, 1, 2


# --------------------------------------------------------------------------- numba kernels

@njit(cache=True)
def _phase0_cover(stacks, alive, S, match, matchpos):
    """Zero-cost cover at depth S: each type -> first survivor with it at a position < S."""
    N = stacks.shape[0]
    for t in range(N):
        match[t] = -1
    free = N
    for w in range(N):
        if not alive[w]:
            continue
        for p in range(S):
            t = stacks[w, p]
            if match[t] < 0:
                match[t] = w
                matchpos[t] = p
                free -= 1
    return free


@njit(cache=True)
def _any_wiped(alive, hold_g, hcnt, match):
    """True when some (still unassigned) type has no live holder."""
    for t in range(match.shape[0]):
        if match[t] < 0 and not has_live_holder(t, alive, hold_g, hcnt):
            return True
    return False


@njit(cache=True)
def _rewrite_row(w, stacks, S, S_star, hold_g, tpos, hcnt, match, matchpos, old, newrow, moved_in,
                 chosen, exact_patch):
    """Rewrite the stack of survivor w, one of whose assigned types sits at a position ≥ S*
    (rules 1–3 of the module docstring); keeps ``tpos`` and ``matchpos`` in sync. ``old``,
    ``newrow``, ``moved_in``, ``chosen`` are scratch arrays of length r. Returns (moved-in
    types, w's patch)."""
    r = stacks.shape[1]
    for p in range(r):
        old[p] = stacks[w, p]
        newrow[p] = old[p]
        chosen[p] = False
    m = 0
    for p in range(S_star, r):
        if match[old[p]] == w:
            moved_in[m] = old[p]
            m += 1
    # the m deepest free positions below S*, filled in old order
    k = m
    for p in range(S_star - 1, -1, -1):
        if k == 0:
            break
        if match[old[p]] != w:
            chosen[p] = True
            k -= 1
    i = 0
    for p in range(S_star):
        if chosen[p]:
            newrow[p] = moved_in[i]
            i += 1
    # tail: displaced types then the old tail minus moved-in types, in previous order
    q = S_star
    for p in range(r):
        if p < S_star:
            if chosen[p]:
                newrow[q] = old[p]
                q += 1
        elif match[old[p]] != w:
            newrow[q] = old[p]
            q += 1
    ex = 0
    for p in range(r):
        t = newrow[p]
        stacks[w, p] = t
        if p < S_star and (p >= S or t != old[p]):
            ex += 1
        if t != old[p]:
            for j in range(hcnt[t]):
                if hold_g[t, j] == w:
                    tpos[t, j] = p
                    break
        if match[t] == w:
            matchpos[t] = p
    return m, (ex if exact_patch else 1)


@njit(cache=True)
def _rewrite_stacks(stacks, alive, S, S_star, hold_g, tpos, hcnt, match, matchpos, head, nxt,
                    patch_out, exact_patch):
    """Phase 2 stack rewrite + patch (see module docstring). Returns ``moved``."""
    N, r = stacks.shape
    old = np.empty(r, np.int64)
    newrow = np.empty(r, np.int64)
    moved_in = np.empty(r, np.int64)
    chosen = np.zeros(r, np.bool_)
    moved = 0
    for w in range(N):
        patch_out[w] = 0
        if not alive[w]:
            continue
        changed = False
        y = head[w]
        while y >= 0:
            if matchpos[y] >= S_star:
                changed = True
                break
            y = nxt[y]
        if not changed:
            if exact_patch:
                patch_out[w] = S_star - S
            else:
                patch_out[w] = 1 if S_star > S else 0
            continue
        m, patch_out[w] = _rewrite_row(w, stacks, S, S_star, hold_g, tpos, hcnt, match, matchpos,
                                       old, newrow, moved_in, chosen, exact_patch)
        moved += m
    return moved


@njit(cache=True)
def _phases12(stacks, alive, S, hold_g, tpos, hcnt, match, matchpos, patch_out, exact_patch):
    """Phase 1 + Phase 2 from a zero-cost partial matching at depth S (no wipe-out).

    Fused fast path: the successive-shortest-path search of Phase 2 is itself an augmenting-path
    feasibility test, so it is run first at the starting depth s0 = max(S, c(k)) (where S* lies
    almost always). Only if some type finds no augmenting path (s0 infeasible) does Hopcroft–
    Karp (Phase 1) search the depths above s0, and Phase 2 runs again at S*. Results are the
    same as Phase 1 then Phase 2 (same warm start, same tie-breaking).
    """
    N = stacks.shape[0]
    n_alive = 0
    for w in range(N):
        if alive[w]:
            n_alive += 1
    s0 = max(S, (N + n_alive - 1) // n_alive)
    extend_zero_cost(alive, s0, hold_g, tpos, hcnt, match, matchpos)
    head = np.empty(N, np.int64)
    nxt = np.empty(N, np.int64)
    prv = np.empty(N, np.int64)
    load = np.empty(N, np.int64)
    m0 = match.copy()
    p0 = matchpos.copy()
    build_match_lists(match, N, head, nxt, prv, load)
    s_star = s0
    if phase2_assign(alive, s0, hold_g, tpos, hcnt, match, matchpos, head, nxt, prv, load) < 0:
        match[:] = m0
        matchpos[:] = p0
        s_star = phase1_depth(alive, S, hold_g, tpos, hcnt, match, matchpos)
        if s_star == 0:
            for w in range(N):
                patch_out[w] = 0
            return WIPEOUT, 0, 0
        extend_zero_cost(alive, s_star, hold_g, tpos, hcnt, match, matchpos)
        build_match_lists(match, N, head, nxt, prv, load)
        phase2_assign(alive, s_star, hold_g, tpos, hcnt, match, matchpos, head, nxt, prv, load)
    moved = _rewrite_stacks(stacks, alive, S, s_star, hold_g, tpos, hcnt, match, matchpos, head,
                            nxt, patch_out, exact_patch)
    return REORDERED, s_star, moved


@njit(cache=True)
def rectlr_kernel_assign(stacks, alive, depth, patch_out, assign_out, exact_patch=False):
    """:func:`rectlr_kernel` that also writes the assignment type -> group into ``assign_out``."""
    N, r = stacks.shape
    matchpos = np.empty(N, np.int64)
    free = _phase0_cover(stacks, alive, depth, assign_out, matchpos)
    if free == 0:
        for w in range(N):
            patch_out[w] = 0
        return FIXED, depth, 0
    hold_g = np.empty((N, r), np.int64)
    tpos = np.empty((N, r), np.int64)
    hcnt = np.empty(N, np.int64)
    build_holders(stacks, hold_g, tpos, hcnt)
    if _any_wiped(alive, hold_g, hcnt, assign_out):
        for w in range(N):
            patch_out[w] = 0
            assign_out[w] = -1
        return WIPEOUT, 0, 0
    return _phases12(stacks, alive, depth, hold_g, tpos, hcnt, assign_out, matchpos, patch_out,
                     exact_patch)


@njit(cache=True)
def rectlr_kernel(stacks, alive, depth, patch_out, exact_patch=False):
    """RECTLR in one numba call; see the module docstring for the exact contract.

    Returns ``(outcome, s_star, moved)``: outcome 0 'fixed', 1 'reordered', 2 'wipeout';
    ``stacks`` is rewritten in place on 'reordered'; ``patch_out`` receives the patch.
    """
    assign = np.empty(stacks.shape[0], np.int64)
    return rectlr_kernel_assign(stacks, alive, depth, patch_out, assign, exact_patch)


@njit(cache=True)
def rectlr_workspace(stacks):
    """Holder index ``(hold_g, tpos, hcnt)`` of ``stacks`` for :func:`rectlr_kernel_ws`.

    ``hold_g[t, j]`` is the j-th group holding type t and ``tpos[t, j]`` the position of t in
    that group's stack; ``hcnt[t]`` the number of holders. Build it once per (re)start; the
    kernel keeps it in sync with the stacks it rewrites. O(N·r).
    """
    N, r = stacks.shape
    hold_g = np.empty((N, r), np.int64)
    tpos = np.empty((N, r), np.int64)
    hcnt = np.empty(N, np.int64)
    build_holders(stacks, hold_g, tpos, hcnt)
    return hold_g, tpos, hcnt


@njit(cache=True)
def rectlr_kernel_ws(stacks, alive, depth, patch_out, hold_g, tpos, hcnt, exact_patch=False):
    """:func:`rectlr_kernel` with a caller-kept holder index (from :func:`rectlr_workspace`).

    Same contract and results; skips the O(N·r) index build of every call. ``tpos`` is updated
    in place whenever the stacks are rewritten, so the workspace stays valid along a failure
    sequence; rebuild it when the stacks are reset (global restart).
    """
    N = stacks.shape[0]
    match = np.empty(N, np.int64)
    matchpos = np.empty(N, np.int64)
    free = _phase0_cover(stacks, alive, depth, match, matchpos)
    if free == 0:
        for w in range(N):
            patch_out[w] = 0
        return FIXED, depth, 0
    if _any_wiped(alive, hold_g, hcnt, match):
        for w in range(N):
            patch_out[w] = 0
        return WIPEOUT, 0, 0
    return _phases12(stacks, alive, depth, hold_g, tpos, hcnt, match, matchpos, patch_out,
                     exact_patch)


@njit(cache=True)
def _controller_phase0(groups, stacks, alive, S, hold_g, tpos, hcnt, match, matchpos,
                       n_live_holders):
    """Incremental Phase 0 for the Controller; state arrays are updated in place.

    Invariant between events: ``match`` assigns every type to a survivor that has it at a
    position < S of its current stack (``matchpos``). A failure unassigns only the types of the
    failed groups and re-covers them from other survivors' first S positions: O(k·S·r) for k
    failed groups. Returns (WIPEOUT, -1) if a type lost its last live holder, else
    (FIXED, number of types left unassigned).
    """
    wiped = False
    for i in range(groups.shape[0]):
        g = groups[i]
        alive[g] = False
        for p in range(stacks.shape[1]):
            t = stacks[g, p]
            n_live_holders[t] -= 1
            if n_live_holders[t] == 0:
                wiped = True
    if wiped:
        return WIPEOUT, -1
    free = 0
    for i in range(groups.shape[0]):
        g = groups[i]
        for p in range(S):
            t = stacks[g, p]
            if match[t] != g:
                continue
            match[t] = -1
            if not cover_in_place(t, alive, S, hold_g, tpos, hcnt, match, matchpos):
                free += 1
    return FIXED, free




@njit(cache=True)
def _finish_phase2(stacks, alive, S, s_star, hold_g, tpos, hcnt, match, matchpos, patch_out):
    N = stacks.shape[0]
    head = np.empty(N, np.int64)
    nxt = np.empty(N, np.int64)
    prv = np.empty(N, np.int64)
    load = np.empty(N, np.int64)
    for t in range(N):
        if match[t] < 0:
            for j in range(hcnt[t]):
                w = hold_g[t, j]
                if alive[w] and tpos[t, j] < s_star:
                    match[t] = w
                    matchpos[t] = tpos[t, j]
                    break
    build_match_lists(match, N, head, nxt, prv, load)
    phase2_assign(alive, s_star, hold_g, tpos, hcnt, match, matchpos, head, nxt, prv, load)
    return _rewrite_stacks(stacks, alive, S, s_star, hold_g, tpos, hcnt, match, matchpos, head,
                           nxt, patch_out, True)
