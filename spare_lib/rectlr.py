"""RECTLR, SPARe's reordering controller (SPEC §4): fixed check, depth search, min-move reorder.

After failures the survivors (live and not flagged) must still compute every shard type exactly
once. RECTLR decides, in order:

* **Phase 0 (fixed check)** — do the survivors' current first S positions cover all N types?
  Then nothing moves and the step is committed (outcome ``'fixed'``).
* **Phase 1 (depth search)** — the least S* ≥ S at which a perfect b-matching types → survivors
  with capacity S* exists (Hopcroft–Karp, :mod:`spare_lib.matching`). Depths below
  c(k) = ceil(N/(N−k)) are skipped by counting; the matching is kept while S grows. If some
  type has no live holder: ``'wipeout'`` (no depth helps; global restart).
* **Phase 2 (min-move reorder)** — the assignment of types to survivors at depth S* that moves
  the fewest shards into the survivors' first S* positions (min-cost flow,
  :mod:`spare_lib.mcmf`), then the new stacks (outcome ``'reordered'``).

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

Examples
--------
>>> from spare_lib.layout import ruler_layout
>>> ctl = Controller(ruler_layout(12, 3))
>>> ctl.fail([0]).outcome, ctl.depth
('reordered', 2)
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ._validate import check_int
from .layout import Layout
from .matching import (
    build_holders,
    build_match_lists,
    cover_in_place,
    extend_zero_cost,
    has_live_holder,
    phase1_depth,
)
from .mcmf import phase2_assign

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
        moved += m
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
        patch_out[w] = ex if exact_patch else 1
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


# --------------------------------------------------------------------------- Python API

@dataclass(frozen=True, eq=False)
class Plan:
    """RECTLR's decision after a failure event (SPEC §4).

    Attributes
    ----------
    outcome : str
        'fixed' (Phase 0: nothing moves), 'reordered' (Phases 1–2 ran) or 'wipeout'.
    depth : int
        S*: the depth every survivor computes from now on (0 on wipe-out).
    stacks : ndarray, shape (N, r)
        New stacks (row w a permutation of group w's hosted types); unchanged on 'fixed' and
        'wipeout'.
    assignment : ndarray, shape (N,)
        ``assignment[t]`` = the live group that computes type t this step; it holds t at a
        position < S* of ``stacks``. All -1 on wipe-out.
    moved : int
        Shards moved into a survivor's first S* positions (= changed entries there), the least
        possible (Phase 2 optimum).
    patch : ndarray, shape (N,)
        Stacks each group recomputes in the retry (capped at 1 per survivor, SPEC §4).
    patch_exact : ndarray, shape (N,)
        Positions < S* each group must compute that it did not compute in this attempt.
    phase_times_s : dict
        Wall time of 'phase0', 'phase1', 'phase2' in seconds (0 for phases not run).
    """

    outcome: str
    depth: int
    stacks: np.ndarray = field(repr=False)
    assignment: np.ndarray = field(repr=False)
    moved: int
    patch: np.ndarray = field(repr=False)
    patch_exact: np.ndarray = field(repr=False)
    phase_times_s: dict[str, float] = field(default_factory=dict)


def _validate_inputs(stacks: object, alive: object, depth: object
                     ) -> tuple[np.ndarray, np.ndarray, int]:
    st = np.asarray(stacks)
    if st.ndim != 2 or st.shape[0] < 1 or st.shape[1] < 1:
        raise ValueError(f"stacks must be a 2-D (N, r) array with N, r >= 1, got shape {st.shape}")
    if not np.issubdtype(st.dtype, np.integer):
        raise ValueError(f"stacks must hold integers, got dtype {st.dtype}")
    N, r = st.shape
    if r > N:
        raise ValueError(f"stacks must have r <= N, got shape {st.shape}")
    if st.min() < 0 or st.max() >= N:
        raise ValueError(f"stacks entries must be shard types in [0, {N - 1}], "
                         f"got range [{st.min()}, {st.max()}]")
    srt = np.sort(st, axis=1)
    if r > 1 and np.any(srt[:, 1:] == srt[:, :-1]):
        raise ValueError("stacks rows must not repeat a type (a stack is a permutation)")
    counts = np.bincount(st.ravel(), minlength=N)
    if np.any(counts != r):
        t = int(np.flatnonzero(counts != r)[0])
        raise ValueError(f"every type must be held by exactly r = {r} groups, type {t} is held "
                         f"by {counts[t]}")
    al = np.asarray(alive)
    if al.shape != (N,):
        raise ValueError(f"alive must have shape ({N},), got {al.shape}")
    if al.dtype != np.bool_:
        raise ValueError(f"alive must be a boolean mask, got dtype {al.dtype}")
    if not al.any():
        raise ValueError("alive must contain at least one survivor, got all False")
    S = check_int("depth", depth, lo=1, hi=r)
    return np.ascontiguousarray(st, dtype=np.int64), np.ascontiguousarray(al), S


def _run_phases(st: np.ndarray, al: np.ndarray, S: int, hold_g: np.ndarray | None,
                tpos: np.ndarray | None, hcnt: np.ndarray | None, match: np.ndarray,
                matchpos: np.ndarray, free: int, times: dict[str, float]) -> Plan:
    """Phases 1–2 with timings, shared by :func:`rectlr` and :class:`Controller`.

    ``st`` is rewritten in place on 'reordered'; the Plan gets a read-only copy.
    """
    N = st.shape[0]
    zeros = np.zeros(N, np.int64)
    zeros.setflags(write=False)
    if free == 0:
        return Plan("fixed", S, _frozen(st), _frozen(match), 0, zeros, zeros, times)
    t0 = time.perf_counter()
    s_star = int(phase1_depth(al, S, hold_g, tpos, hcnt, match, matchpos))
    times["phase1"] += time.perf_counter() - t0
    if s_star == 0:
        return Plan("wipeout", 0, _frozen(st), _frozen(np.full(N, -1, np.int64)), 0, zeros, zeros,
                    times)
    t0 = time.perf_counter()
    patch_exact = np.zeros(N, np.int64)
    moved = int(_finish_phase2(st, al, S, s_star, hold_g, tpos, hcnt, match, matchpos,
                               patch_exact))
    times["phase2"] = time.perf_counter() - t0
    return Plan("reordered", s_star, _frozen(st), _frozen(match), moved,
                _frozen(np.minimum(patch_exact, 1)), _frozen(patch_exact), times)


def _frozen(a: np.ndarray) -> np.ndarray:
    c = a.copy()
    c.setflags(write=False)
    return c


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


def rectlr(stacks: np.ndarray, alive: np.ndarray, depth: int) -> Plan:
    """Run RECTLR (SPEC §4) on the current stacks after failures.

    Parameters
    ----------
    stacks : ndarray of int, shape (N, r)
        Current stacks, row w = group w's stack (initially ``Layout.stacks``); every type must
        be held by exactly r groups. Not modified.
    alive : ndarray of bool, shape (N,)
        Survivors (live and not flagged); at least one.
    depth : int
        Current depth S, 1 ≤ S ≤ r.

    Returns
    -------
    Plan
        See :class:`Plan`. Phase 0 costs O(N·S); Phases 1–2 O(N·r·sqrt(N)) worst case, in
        practice a few shortest-path searches.

    Raises
    ------
    ValueError
        Wrong shapes or types, a stack that is not a permutation, alive all False, or depth
        outside 1..r.

    Examples
    --------
    >>> from spare_lib.layout import ruler_layout
    >>> lay = ruler_layout(12, 3)
    >>> alive = np.ones(12, bool); alive[[0, 5]] = False
    >>> p = rectlr(lay.stacks, alive, 1)
    >>> p.outcome, p.depth, p.moved
    ('reordered', 2, 0)
    """
    st, al, S = _validate_inputs(stacks, alive, depth)
    st = st.copy()
    N, r = st.shape
    times = {"phase0": 0.0, "phase1": 0.0, "phase2": 0.0}
    t0 = time.perf_counter()
    match = np.empty(N, np.int64)
    matchpos = np.empty(N, np.int64)
    free = int(_phase0_cover(st, al, S, match, matchpos))
    times["phase0"] = time.perf_counter() - t0
    hold_g = tpos = hcnt = None
    if free:
        t0 = time.perf_counter()
        hold_g = np.empty((N, r), np.int64)
        tpos = np.empty((N, r), np.int64)
        hcnt = np.empty(N, np.int64)
        build_holders(st, hold_g, tpos, hcnt)
        times["phase1"] = time.perf_counter() - t0  # index build counted with Phase 1
    plan = _run_phases(st, al, S, hold_g, tpos, hcnt, match, matchpos, free, times)
    return plan


class Controller:
    """RECTLR state kept across a failure sequence (incremental; SPEC §4).

    The controller keeps the stacks, the survivors, the depth S, the holder index and a valid
    assignment of every type to a survivor holding it at a position < S. A failure event
    unassigns only the failed groups' types: Phase 0 costs O(k·S·r) for k failed groups, and
    Phases 1–2 augment from the kept assignment instead of rebuilding it.

    Parameters
    ----------
    layout : Layout
        The base layout (restored by :meth:`restart`).

    Examples
    --------
    >>> from spare_lib.layout import ruler_layout
    >>> ctl = Controller(ruler_layout(12, 3))
    >>> [ctl.fail(g).outcome for g in (0, 5)]
    ['reordered', 'fixed']
    """

    def __init__(self, layout: Layout) -> None:
        if not isinstance(layout, Layout):
            raise ValueError(f"layout must be a spare_lib.layout.Layout, got {type(layout).__name__}")
        self.layout = layout
        N, r = layout.N, layout.r
        self._hold_g = np.empty((N, r), np.int64)
        self._hcnt = np.empty(N, np.int64)
        self._tpos = np.empty((N, r), np.int64)
        build_holders(np.ascontiguousarray(layout.stacks, dtype=np.int64), self._hold_g,
                      self._tpos, self._hcnt)
        self._patch = np.zeros(N, np.int64)
        self.restart()

    def restart(self) -> None:
        """Global restart: all groups alive, base layout, S = 1."""
        lay = self.layout
        N = lay.N
        self._stacks = np.array(lay.stacks, dtype=np.int64)
        self._alive = np.ones(N, np.bool_)
        self._depth = 1
        self._wiped = False
        build_holders(self._stacks, self._hold_g, self._tpos, self._hcnt)
        self._live_holders = self._hcnt.copy()
        self._match = np.empty(N, np.int64)
        self._matchpos = np.empty(N, np.int64)
        free = _phase0_cover(self._stacks, self._alive, 1, self._match, self._matchpos)
        if free:  # a custom layout whose level 0 is not a permutation: start deeper
            self._depth = int(phase1_depth(self._alive, 1, self._hold_g, self._tpos, self._hcnt,
                                           self._match, self._matchpos))
            _finish_phase2(self._stacks, self._alive, 1, self._depth, self._hold_g, self._tpos,
                           self._hcnt, self._match, self._matchpos, self._patch)
        self._snapshot = _frozen(self._stacks)

    # read-only state ------------------------------------------------------------------
    @property
    def stacks(self) -> np.ndarray:
        """Current stacks (read-only)."""
        return self._snapshot

    @property
    def alive(self) -> np.ndarray:
        """Current survivors (a read-only copy)."""
        a = self._alive.copy()
        a.setflags(write=False)
        return a

    @property
    def depth(self) -> int:
        """Current depth S (0 after a wipe-out, until :meth:`restart`)."""
        return 0 if self._wiped else self._depth

    @property
    def assignment(self) -> np.ndarray:
        """Current type -> computing group (a read-only copy)."""
        a = self._match.copy()
        a.setflags(write=False)
        return a

    @property
    def wiped(self) -> bool:
        """True after a wipe-out, until :meth:`restart`."""
        return self._wiped

    def fail(self, groups: int | Iterable[int]) -> Plan:
        """Apply one failure event (one or more groups flagged together) and return the Plan.

        Parameters
        ----------
        groups : int or iterable of int
            Distinct live groups in [0, N−1] that failed in this attempt.

        Raises
        ------
        ValueError
            Empty or repeated groups, a group out of range or already dead, or a controller
            in the wiped-out state (call :meth:`restart`).
        """
        if self._wiped:
            raise ValueError("controller is wiped out; call restart() before more failures")
        N = self.layout.N
        gs = [groups] if isinstance(groups, (int, np.integer)) else list(groups)
        if not gs:
            raise ValueError("groups must name at least one failed group, got none")
        arr = np.empty(len(gs), np.int64)
        for i, g in enumerate(gs):
            g = check_int("groups", g, lo=0, hi=N - 1)
            if not self._alive[g]:
                raise ValueError(f"groups must be live groups, group {g} is already dead")
            arr[i] = g
        if np.unique(arr).size != arr.size:
            raise ValueError(f"groups must be distinct, got {arr.tolist()}")
        S = self._depth
        times = {"phase0": 0.0, "phase1": 0.0, "phase2": 0.0}
        t0 = time.perf_counter()
        code, free = _controller_phase0(arr, self._stacks, self._alive, S, self._hold_g,
                                        self._tpos, self._hcnt, self._match, self._matchpos,
                                        self._live_holders)
        times["phase0"] = time.perf_counter() - t0
        zeros = np.zeros(N, np.int64)
        zeros.setflags(write=False)
        if code == WIPEOUT:
            self._wiped = True
            return Plan("wipeout", 0, self._snapshot, _frozen(np.full(N, -1, np.int64)), 0,
                        zeros, zeros, times)
        if free == 0:
            return Plan("fixed", S, self._snapshot, _frozen(self._match), 0, zeros, zeros, times)
        t0 = time.perf_counter()
        s_star = int(phase1_depth(self._alive, S, self._hold_g, self._tpos, self._hcnt,
                                  self._match, self._matchpos))
        times["phase1"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        patch_exact = np.zeros(N, np.int64)
        moved = int(_finish_phase2(self._stacks, self._alive, S, s_star, self._hold_g, self._tpos,
                                   self._hcnt, self._match, self._matchpos, patch_exact))
        times["phase2"] = time.perf_counter() - t0
        self._depth = s_star
        self._snapshot = _frozen(self._stacks)
        patch_exact.setflags(write=False)
        return Plan("reordered", s_star, self._snapshot, _frozen(self._match), moved,
                    _frozen(np.minimum(patch_exact, 1)), patch_exact, times)


# --------------------------------------------------------------------------- failure sequences

@njit(cache=True)
def _sequences_kernel(base_stacks, orders, burst, use_workspace):
    """Run RECTLR along failure sequences (``burst`` groups per event) until wipe-out.

    Calls :func:`rectlr_kernel_ws` (or the stateless :func:`rectlr_kernel`) from numba, as the
    cluster simulator does.
    """
    n_seq, N = orders.shape
    n_ev = (N + burst - 1) // burst
    code = np.full((n_seq, n_ev), -1, np.int64)
    sstar = np.zeros((n_seq, n_ev), np.int64)
    moved = np.zeros((n_seq, n_ev), np.int64)
    patch = np.zeros((n_seq, n_ev), np.int64)
    kdead = np.zeros((n_seq, n_ev), np.int64)
    depth_before = np.zeros((n_seq, n_ev), np.int64)
    pbuf = np.zeros(N, np.int64)
    for i in range(n_seq):
        stacks = base_stacks.copy()
        hold_g, tpos, hcnt = rectlr_workspace(stacks)
        alive = np.ones(N, np.bool_)
        S = 1
        k = 0
        for e in range(n_ev):
            for _b in range(burst):
                if k < N:
                    alive[orders[i, k]] = False
                    k += 1
            depth_before[i, e] = S
            kdead[i, e] = k
            if use_workspace:
                c, s, m = rectlr_kernel_ws(stacks, alive, S, pbuf, hold_g, tpos, hcnt)
            else:
                c, s, m = rectlr_kernel(stacks, alive, S, pbuf)
            code[i, e] = c
            sstar[i, e] = s
            moved[i, e] = m
            tot = 0
            for w in range(N):
                tot += pbuf[w]
            patch[i, e] = tot
            if c == WIPEOUT:
                break
            S = s
    return code, sstar, moved, patch, kdead, depth_before


def failure_sequence_stats(layout: Layout, n_sequences: int, seed: object = None,
                           burst: int = 1, use_workspace: bool = True):
    """RECTLR along random failure sequences until wipe-out (SPEC §4, §8 last bullet).

    Each sequence kills the groups in a uniformly random order, ``burst`` groups per failure
    event (1: one failure noticed per attempt), starting from the base layout at S = 1, and
    applies RECTLR after every event.

    Parameters
    ----------
    layout : Layout
        Base layout.
    n_sequences : int
        Number of independent sequences (≥ 1).
    seed : int, SeedSequence or Generator
        Randomness of the failure orders.
    burst : int
        Groups failing together per event, 1 ≤ burst ≤ N.
    use_workspace : bool
        Run :func:`rectlr_kernel_ws` (default) or the stateless :func:`rectlr_kernel`; both
        give identical results.

    Returns
    -------
    pandas.DataFrame
        One row per event: ``seq``, ``event``, ``k`` (failed groups so far), ``depth_before``
        (S), ``outcome``, ``s_star``, ``c_k`` (= ceil(N/(N−k)), the lower bound on S*),
        ``moved`` and ``patch`` (stacks recomputed in the retry, capped rule, summed over
        groups).
    """
    import pandas as pd

    from ._rng import as_seed_sequence

    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.layout.Layout, got {type(layout).__name__}")
    n_sequences = check_int("n_sequences", n_sequences, lo=1)
    burst = check_int("burst", burst, lo=1, hi=layout.N)
    rng = np.random.default_rng(as_seed_sequence(seed))
    N = layout.N
    orders = np.stack([rng.permutation(N) for _ in range(n_sequences)]).astype(np.int64)
    code, sstar, moved, patch, kdead, dbefore = _sequences_kernel(
        np.ascontiguousarray(layout.stacks, dtype=np.int64), orders, burst, bool(use_workspace))
    seq, ev = np.nonzero(code >= 0)
    k = kdead[seq, ev]
    return pd.DataFrame({
        "seq": seq, "event": ev, "k": k, "depth_before": dbefore[seq, ev],
        "outcome": np.array(OUTCOMES)[code[seq, ev]], "s_star": sstar[seq, ev],
        "c_k": -(-N // (N - np.minimum(k, N - 1))), "moved": moved[seq, ev],
        "patch": patch[seq, ev],
    })


def phase0_share(stats) -> float:
    """Share of non-wipe-out failure events settled by Phase 0 in :func:`failure_sequence_stats`."""
    live = stats[stats["outcome"] != "wipeout"]
    return float((live["outcome"] == "fixed").mean()) if len(live) else float("nan")


# --------------------------------------------------------------------------- reference

def rectlr_reference(stacks: np.ndarray, alive: np.ndarray, depth: int) -> Plan:
    """The three phases done the straightforward way, with SciPy and NetworkX (for benchmarks).

    Phase 0 by NumPy coverage, Phase 1 by SciPy's ``maximum_bipartite_matching`` on SPEC §4's
    slot graph (types × slots (w, p < S)) for S = depth, depth+1, ..., Phase 2 by NetworkX
    ``min_cost_flow`` (network simplex) on the slot network with demand N. Same Plan semantics
    as :func:`rectlr` (moved-in shards take the slot the flow picked; ``patch_exact`` alike).
    """
    import networkx as nx
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    st, al, S = _validate_inputs(stacks, alive, depth)
    st = st.copy()
    N, r = st.shape
    times = {"phase0": 0.0, "phase1": 0.0, "phase2": 0.0}
    zeros = np.zeros(N, np.int64)
    t0 = time.perf_counter()
    pref = st[al, :S]
    owner = np.repeat(np.flatnonzero(al), S)
    cov = np.full(N, -1, np.int64)
    cov[pref.ravel()[::-1]] = owner[::-1]
    times["phase0"] = time.perf_counter() - t0
    if np.all(cov >= 0):
        return Plan("fixed", S, _frozen(st), _frozen(cov), 0, zeros, zeros.copy(), times)
    t0 = time.perf_counter()
    ws = np.flatnonzero(al)
    s_star = 0
    for s in range(S, r + 1):
        # edge t -> slot (w, p) for every live holder w of t and p < s
        tt = np.repeat(st[ws], s, axis=0).ravel()
        slot = (np.repeat(ws, s * r) * r + np.tile(np.repeat(np.arange(s), r), ws.size))
        g = sp.csr_matrix((np.ones(tt.size), (tt, slot)), shape=(N, N * r))
        m = maximum_bipartite_matching(g, perm_type="column")
        if np.all(m >= 0):
            s_star = s
            break
    times["phase1"] = time.perf_counter() - t0
    if s_star == 0:
        return Plan("wipeout", 0, _frozen(st), _frozen(np.full(N, -1, np.int64)), 0, zeros,
                    zeros.copy(), times)
    t0 = time.perf_counter()
    G = nx.DiGraph()
    G.add_node("s", demand=-N)
    G.add_node("z", demand=N)
    G.add_edges_from((("s", ("t", t)) for t in range(N)), capacity=1, weight=0)
    G.add_edges_from(((("w", int(w), p), "z") for w in ws for p in range(s_star)), capacity=1,
                     weight=0)
    G.add_edges_from((("t", int(t)), ("w", int(w), p), {"capacity": 1, "weight": int(st[w, p] != t)})
                     for w in ws for p in range(s_star) for t in st[w])
    flow = nx.min_cost_flow(G)  # network simplex; flow value N is feasible after Phase 1
    assign = np.full(N, -1, np.int64)
    old = st.copy()
    put: dict[int, dict[int, int]] = {}
    for t in range(N):
        for (_, w, p), f in flow[("t", t)].items():
            if f:
                assign[t] = w
                if old[w, p] != t:
                    put.setdefault(w, {})[p] = t
    patch_exact = np.zeros(N, np.int64)
    moved = 0
    for w in ws:
        new = old[w].copy()
        for p, t in put.get(w, {}).items():
            new[p] = t
        head = set(new[:s_star].tolist())
        tail = [t for t in old[w] if t not in head]
        new[s_star:] = tail
        st[w] = new
        moved += int(np.count_nonzero(new[:s_star] != old[w, :s_star]))
        patch_exact[w] = sum(1 for p in range(s_star) if p >= S or new[p] != old[w, p])
    times["phase2"] = time.perf_counter() - t0
    return Plan("reordered", s_star, _frozen(st), _frozen(assign), moved,
                _frozen(np.minimum(patch_exact, 1)), _frozen(patch_exact), times)


# --------------------------------------------------------------------------- worked example

def worked_example(layout: Layout, failed: Iterable[int], depth: int = 1) -> dict:
    """Everything the reorder illustration draws, for one failure event on ``layout``.

    Returns a dict with ``stacks`` (before), ``alive``, ``depth``, ``uncovered`` (types Phase 0
    finds missing from the survivors' first S positions), ``plan`` (:class:`Plan`) and
    ``phase1_edges`` (type, group) pairs of the Phase 1 graph at S*.
    """
    stacks = np.array(layout.stacks, dtype=np.int64)
    alive = np.ones(layout.N, bool)
    alive[list(failed)] = False
    plan = rectlr(stacks, alive, depth)
    cov = np.zeros(layout.N, bool)
    cov[stacks[alive, :depth].ravel()] = True
    edges = [(int(t), int(w)) for w in np.flatnonzero(alive) for t in stacks[w]]
    return {"stacks": stacks, "alive": alive, "depth": depth,
            "uncovered": np.flatnonzero(~cov), "plan": plan, "phase1_edges": edges}


def _draw_stacks(ax, stacks, alive, S, *, highlight=None, bold=None, red=None, title=""):
    from matplotlib.patches import Rectangle

    N, r = stacks.shape
    for w in range(N):
        for p in range(r):
            inwin = p < S and alive[w]
            face = "#CFE3F2" if inwin else "white"
            if highlight is not None and highlight[w, p]:
                face = "#E69F00"
            ax.add_patch(Rectangle((w - 0.45, p - 0.45), 0.9, 0.9, facecolor=face,
                                   edgecolor="#555555", lw=0.5,
                                   hatch="////" if not alive[w] else None))
            t = int(stacks[w, p])
            color = "#D55E00" if (red is not None and t in red and alive[w]) else "black"
            weight = "bold" if (bold is not None and bold[w, p]) else "normal"
            ax.text(w, p, str(t), ha="center", va="center", fontsize=6, color=color,
                    fontweight=weight)
    ax.axhline(S - 0.5, color="#0072B2", lw=1.0, ls="--")
    ax.set_xlim(-0.6, N - 0.4)
    ax.set_ylim(r - 0.4, -0.6)
    ax.set_xticks(range(N))
    ax.set_yticks(range(r))
    ax.tick_params(length=0)
    ax.grid(False)
    ax.set_xlabel("group w")
    ax.set_ylabel("stack position p")
    ax.set_title(title)


def make_reorder_example(example: dict):
    """Figure: the RECTLR reorder of :func:`worked_example`, before (Phase 0 view) and after.

    Hatched: failed groups; shaded: positions each survivor computes (p < S); red: types
    Phase 0 finds uncovered; orange: shards moved by Phase 2; bold: the assignment.
    """
    import matplotlib.pyplot as plt

    from .plotting import PAGE_IN

    st, alive, S, plan = example["stacks"], example["alive"], example["depth"], example["plan"]
    N, r = st.shape
    fig, axes = plt.subplots(2, 1, figsize=(PAGE_IN * 0.62, 3.2))
    _draw_stacks(axes[0], st, alive, S, red=set(example["uncovered"].tolist()),
                 title=f"before: groups {np.flatnonzero(~alive).tolist()} failed, S={S}; "
                       f"Phase 0 misses types {example['uncovered'].tolist()}")
    bold = np.zeros((N, r), bool)
    for t, w in enumerate(plan.assignment):
        if w >= 0:
            bold[w, int(np.flatnonzero(plan.stacks[w] == t)[0])] = True
    hl = np.zeros((N, r), bool)
    hl[:, : plan.depth] = plan.stacks[:, : plan.depth] != st[:, : plan.depth]
    _draw_stacks(axes[1], plan.stacks, alive, plan.depth, highlight=hl, bold=bold,
                 title=f"after Phase 2: S*={plan.depth}, {plan.moved} shard(s) moved "
                       f"(orange), assignment in bold")
    fig.tight_layout()
    return fig


def make_phase1_graph(example: dict):
    """Figure: the Phase 1 bipartite graph at S* (types above, survivors with capacity S* below).

    Grey: edges type → surviving holder; blue: the assignment Phase 2 chose; orange: the
    assigned edges that needed a move.
    """
    import matplotlib.pyplot as plt

    from .plotting import COLUMN_IN

    st, alive, plan = example["stacks"], example["alive"], example["plan"]
    N = st.shape[0]
    fig, ax = plt.subplots(figsize=(COLUMN_IN * 1.3, 2.0))
    for t, w in example["phase1_edges"]:
        ax.plot([t, w], [1, 0], color="#BBBBBB", lw=0.5, zorder=1)
    for t, w in enumerate(plan.assignment):
        pos = int(np.flatnonzero(st[w] == t)[0])
        moved = pos >= plan.depth
        ax.plot([t, w], [1, 0], color="#E69F00" if moved else "#0072B2",
                lw=1.6 if moved else 1.0, zorder=2)
    ax.scatter(range(N), np.ones(N), s=40, color="white", edgecolor="black", zorder=3)
    for t in range(N):
        ax.text(t, 1.0, str(t), ha="center", va="center", fontsize=5.5, zorder=4)
    cols = ["#999999" if not a else "white" for a in alive]
    ax.scatter(range(N), np.zeros(N), s=40, marker="s", color=cols, edgecolor="black", zorder=3)
    for w in range(N):
        ax.text(w, 0.0, "×" if not alive[w] else str(w), ha="center", va="center", fontsize=5.5,
                zorder=4)
    ax.text(-1.2, 1, "types", ha="right", va="center", fontsize=7)
    ax.text(-1.2, 0, f"groups\n(cap. {plan.depth})", ha="right", va="center", fontsize=7)
    ax.set_xlim(-4.2, N - 0.4)
    ax.set_ylim(-0.25, 1.25)
    ax.axis("off")
    ax.set_title(f"Phase 1 graph at S* = {plan.depth}: a perfect matching exists")
    fig.tight_layout()
    return fig


def make_sequence_stats(stats_by_r: dict):
    """Figure: RECTLR along failure sequences, one column per (N, r) in ``stats_by_r``.

    Rows: share of events settled by Phase 0 vs failed groups k (binned); S* against the bound
    c(k) = ceil(N/(N−k)); moved shards per reordering event.
    """
    import matplotlib.pyplot as plt

    from .plotting import PAGE_IN

    keys = list(stats_by_r)
    fig, axes = plt.subplots(3, len(keys), figsize=(PAGE_IN, 5.0), squeeze=False)
    for j, key in enumerate(keys):
        df = stats_by_r[key]
        live = df[df["outcome"] != "wipeout"]
        N = key[0]
        edges = np.linspace(0, live["k"].max() + 1, 21)
        idx = np.digitize(live["k"], edges) - 1
        share = [np.mean(live["outcome"].to_numpy()[idx == i] == "fixed") if np.any(idx == i)
                 else np.nan for i in range(20)]
        ax = axes[0, j]
        ax.plot(0.5 * (edges[1:] + edges[:-1]), share, marker="o")
        ax.set_ylim(0, 1)
        ax.set_xlabel("failed groups k")
        ax.set_ylabel("share settled by Phase 0")
        ax.set_title(f"N={N}, r={key[1]}: overall {phase0_share(df):.0%} by Phase 0")
        ax = axes[1, j]
        kk = np.arange(live["k"].max() + 1)
        ax.step(kk, -(-N // (N - kk)), where="post", color="#444444", lw=1.0, label="c(k)")
        above = live[live["s_star"] > live["c_k"]]
        mean_s = live.groupby("k")["s_star"].mean()
        ax.plot(mean_s.index, mean_s.to_numpy(), ls="none", marker=".", ms=1.5,
                color="#0072B2", label="S* (mean per k)")
        if len(above):
            ax.plot(above["k"], above["s_star"], ls="none", marker="x", ms=4, color="#D55E00",
                    label="events with S* > c(k)")
        ax.set_xlabel("failed groups k")
        ax.set_ylabel("depth")
        ax.set_title(f"S* = c(k) in {np.mean(live['s_star'] == live['c_k']):.2%} of events")
        ax.legend(loc="upper left")
        ax = axes[2, j]
        mv = live.loc[live["outcome"] == "reordered", "moved"].to_numpy()
        if mv.size:
            bins = np.arange(mv.max() + 2) - 0.5
            ax.hist(mv, bins=bins, color="#D55E00", density=True)
            ax.set_yscale("log")
        ax.set_xlabel("shards moved per reordering event")
        ax.set_ylabel("share (log)")
    fig.tight_layout()
    return fig


def make_phase0_share_by_r(share: dict):
    """Figure: share of failure events settled by Phase 0 vs r; ``share[N] = (r_list, shares)``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    markers = "os^D"
    for i, (N, (rs, sh)) in enumerate(share.items()):
        ax.plot(rs, sh, marker=markers[i % 4], label=f"N={N}")
    ax.axhspan(0.3, 0.5, color="#999999", alpha=0.2, lw=0, label="SPEC §8: 30–50% (r ≥ 5)")
    ax.set_ylim(0, 1)
    ax.set_xlabel("redundancy r")
    ax.set_ylabel("share settled by Phase 0")
    ax.legend()
    return fig


def make_controller_speed(times: dict):
    """Figure: controller time per failure event, ``times[label] = array of seconds``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    labels = list(times)
    data = [np.asarray(times[k]) * 1e3 for k in labels]
    ax.boxplot(data, whis=(1, 99), showfliers=False)
    ax.set_xticks(range(1, len(labels) + 1), labels, rotation=15)
    ax.set_yscale("log")
    ax.set_ylabel("time per failure event (ms)")
    ax.axhline(100, color="#999999", ls=":", lw=1)
    ax.text(0.55, 110, "paper: ≈0.1 s at N≈10³", fontsize=6, color="#555555")
    return fig


# --------------------------------------------------------------------------- speed

def benchmark_events(layout: Layout, n_sequences: int, n_reference_events: int,
                     seed: object = None, progress: bool = False) -> dict:
    """Time RECTLR per failure event: Controller vs the SciPy/NetworkX reference, same run.

    Runs ``n_sequences`` random failure sequences to wipe-out through a :class:`Controller`
    (every event timed), then replays them and, at ``n_reference_events`` events drawn
    uniformly from all events, times :func:`rectlr_reference` and the stateless numba
    :func:`rectlr_kernel` on the same state.

    Returns
    -------
    dict
        ``controller_s`` (all events), ``controller_outcome``, and for the sampled events
        ``sample_controller_s``, ``sample_kernel_s``, ``reference_s``, ``sample_outcome``.
    """
    from tqdm.auto import tqdm

    from ._rng import as_seed_sequence

    n_sequences = check_int("n_sequences", n_sequences, lo=1)
    n_reference_events = check_int("n_reference_events", n_reference_events, lo=0)
    rng = np.random.default_rng(as_seed_sequence(seed))
    N = layout.N
    orders = [rng.permutation(N) for _ in range(n_sequences)]
    ctl = Controller(layout)
    # warm-up (JIT cache load, lazy imports) outside the timings
    warm_alive = np.ones(N, bool)
    warm_alive[[0, N // 2]] = False  # N ≥ 2 for any layout worth timing
    rectlr_reference(layout.stacks, warm_alive, 1)
    rectlr_kernel(np.array(layout.stacks, dtype=np.int64), warm_alive, 1, np.zeros(N, np.int64))
    ctl.fail([0, N // 2])
    times, outc, n_ev = [], [], []
    for order in tqdm(orders, desc="controller sequences", disable=not progress):
        ctl.restart()
        for e, g in enumerate(order):
            t0 = time.perf_counter()
            p = ctl.fail(int(g))
            times.append(time.perf_counter() - t0)
            outc.append(p.outcome)
            if p.outcome == "wipeout":
                n_ev.append(e + 1)
                break
    total = int(sum(n_ev))
    pick = np.sort(rng.choice(total, size=min(n_reference_events, total), replace=False))
    starts = np.concatenate([[0], np.cumsum(n_ev)])
    out = {"sample_controller_s": [], "sample_kernel_s": [], "reference_s": [],
           "sample_outcome": []}
    bar = tqdm(total=len(pick), desc="reference events", disable=not progress)
    for s, order in enumerate(orders):
        evs = pick[(pick >= starts[s]) & (pick < starts[s + 1])] - starts[s]
        if evs.size == 0:
            continue
        ctl.restart()
        for e, g in enumerate(order[: evs.max() + 1]):
            if e in evs:
                st, al, d = ctl.stacks, ctl.alive.copy(), ctl.depth
                al[g] = False
                t0 = time.perf_counter()
                ref = rectlr_reference(st, al, d)
                out["reference_s"].append(time.perf_counter() - t0)
                s1 = np.array(st)
                pbuf = np.zeros(N, np.int64)
                t0 = time.perf_counter()
                rectlr_kernel(s1, al, d, pbuf)
                out["sample_kernel_s"].append(time.perf_counter() - t0)
                out["sample_controller_s"].append(times[starts[s] + e])
                out["sample_outcome"].append(ref.outcome)
                bar.update()
            ctl.fail(int(g))
    bar.close()
    res = {k: np.asarray(v) for k, v in out.items()}
    res["controller_s"] = np.asarray(times)
    res["controller_outcome"] = np.asarray(outc)
    return res


def speed_summary(bench: dict) -> dict:
    """Median / p99 per event (ms) and speed-up ratios from :func:`benchmark_events`."""
    c, ref = bench["controller_s"], bench["reference_s"]
    sc, sk = bench["sample_controller_s"], bench["sample_kernel_s"]
    out = {
        "events": int(c.size),
        "controller_median_ms": 1e3 * float(np.median(c)),
        "controller_p99_ms": 1e3 * float(np.percentile(c, 99)),
        "reference_events": int(ref.size),
    }
    if ref.size:
        out.update({
            "reference_median_ms": 1e3 * float(np.median(ref)),
            "reference_p99_ms": 1e3 * float(np.percentile(ref, 99)),
            "kernel_median_ms_on_sample": 1e3 * float(np.median(sk)),
            "ratio_of_medians": float(np.median(ref) / np.median(c)),
            "ratio_of_means_on_sample": float(ref.mean() / sc.mean()),
            "median_paired_ratio": float(np.median(ref / sc)),
        })
    return out
