"""Micro-batch RECTLR (issue 25): the least makespan L* of b micro-batches per shard type.

Problem
-------
Every group g holds the r shard types ``stacks[g, :]``; each type is split into b
micro-batches. After failures, assign every type's b micro-batches to its live holders,
``x[t, g] ∈ {0..b}``, ``Σ_g x[t, g] = b``, so that the busiest survivor computes as few as
possible: L* = min max_g Σ_t x[t, g]. RECTLR's S* is the case b = 1.

Transportation / max-flow form: source → type t (capacity b), type t → each live holder
(unbounded), holder → sink (capacity L). L is feasible iff the max flow is N·b. By the
max-flow min-cut theorem (Hall's condition with demands) that holds iff b·|T| ≤ L·|N(T)| for
every set T of types, N(T) its live holders, so

    L* = ⌈b·ρ⌉,   ρ = max_T |T| / |N(T)|   (the densest type set; exact),

and S* = ⌈ρ⌉ (b = 1): hence b·(S* − 1) < L* ≤ b·S*. The global bound is ⌈N·b/(N − k)⌉
(T = all types, k dead groups).

Algorithm
---------
Dinic's max flow (Dinic 1970) on the implicit graph, kept as the integer flow ``y[g, p]`` =
micro-batches of type ``stacks[g, p]`` computed by g (residual arcs: type → any live holder;
holder → a type it computes, capacity y; holder → sink, capacity L − load): one BFS from all
types with unassigned micro-batches to the nearest holders with spare capacity, then augmenting
paths along the level graph with current-arc pointers, by their bottleneck. The search over L
starts at the lower bound max(⌈N·b/n_live⌉, b·(S* − 1) + 1, max_t ⌈b/h_t⌉) (h_t live holders
of t) and never decreases L, so the flow is kept while L grows. When the max flow at L falls
short, the last BFS has reached every vertex the residual graph reaches: those types T_R and
holders G_R are a Hall set (every holder in G_R is full, all flow into G_R comes from T_R), so
L jumps to ⌈b·|T_R|/|G_R|⌉ ≤ L* (a Dinkelbach step; it catches every per-component bound in
one cut). Warm start: RECTLR's S* assignment (:func:`spare_lib.rectlr.kernels.rectlr_kernel_assign`)
times b, a flow at L = b·S*, with each holder's excess over the starting L handed back to its
types. Cost: O(E·√V)-ish per Dinic run on E = N·r arcs, a handful of L steps.

Numba kernel contract (for other ``@njit`` code)
------------------------------------------------
``ws = microbatch_workspace(stacks)`` is the tuple ``(hold_g, tpos, hcnt, y, nv, seen, st, iw,
ew)``:

* ``hold_g, tpos, hcnt``: the holder index of :func:`spare_lib.rectlr.kernels.rectlr_workspace`
  (type t sits at position ``tpos[t, j]`` of group ``hold_g[t, j]``);
* ``y`` int64 (N, r): the assignment, ``y[g, p]`` micro-batches of type ``stacks[g, p]`` by g;
* ``nv`` int64 (NV_ROWS, N): rows ``NV_LOAD`` (Σ_p y[g, p]), ``NV_NEED`` (demand of each type:
  b, or the retry's remainder), ``NV_DEM`` (micro-batches of t not yet assigned: 0 after a
  solve), ``NV_LIVE`` (live holders of t);
* ``seen`` bool (N,): the survivors the state was computed for;
* ``st`` int64 (ST_SLOTS,): slots ``ST_*`` (L, b, survivors, valid, modes, counters);
* ``iw`` int64 (IW_ROWS, N + 1): BFS levels, queues, current arcs, path, free list, death log;
* ``ew`` int64 (EW_ROWS, N·r): per-entry stamps and the log of changed entries (moved).

``microbatch_kernel_ws(stacks, alive, b, warm, *ws) -> (outcome, L, s_star)`` solves from
scratch into ``ws`` (outcome 1 'rerouted', or 2 'wipeout' with L = 0 and ``y`` unspecified;
``s_star`` is RECTLR's S* when ``warm``, else 0). :func:`microbatch_kernel` is the allocating
wrapper. The incremental kernel and the retry patch are in :mod:`.microbatch_inc`.

Example
-------
>>> import numpy as np
>>> from spare_lib.stacking import ruler_layout
>>> alive = np.ones(12, bool); alive[0] = False
>>> microbatch_assign(ruler_layout(12, 3), alive, 4).makespan   # ⌈12·4/11⌉ = 5
5
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from spare_lib._util.validate import check_int
from spare_lib.rectlr._inputs import _validate_inputs
from spare_lib.rectlr.kernels import rectlr_kernel_assign
from spare_lib.rectlr.matching import build_holders
from spare_lib.stacking.layout import Layout

MB_OUTCOMES = ("kept", "rerouted", "wipeout")
KEPT, REROUTED, MB_WIPEOUT = 0, 1, 2

#: Rows of ``nv`` (int64, (NV_ROWS, N)).
NV_LOAD, NV_NEED, NV_DEM, NV_LIVE = range(4)
NV_ROWS = 4
#: Rows of ``iw`` (int64, (IW_ROWS, N + 1)): levels of types and groups (-1 unseen, -2 dead
#: end), BFS queues (the visited lists), current arcs, the augmenting path (types, groups, the
#: holder index j of each type → group arc, the position p of each group → type arc), the list
#: of types with unassigned micro-batches and a scratch copy, the logged deaths.
(IW_LT, IW_LG, IW_QT, IW_QG, IW_AT, IW_AG, IW_PT, IW_PG, IW_PJ, IW_PP, IW_FREE, IW_FREE2,
 IW_DLOG) = range(13)
IW_ROWS = 13
#: Rows of ``ew`` (int64, (EW_ROWS, N·r)): stamp of the last call that logged entry g·r + p,
#: logged entries, their values before that call.
EW_STAMP, EW_LOG, EW_OLD = range(3)
EW_ROWS = 3
#: Slots of ``st``: makespan L, micro-batches b, survivors, state valid, holder index stale,
#: deaths logged mode, deaths logged, free types, entries logged, log stamp, warm start, the
#: last call's moved count and Dinkelbach steps.
(ST_L, ST_B, ST_NALIVE, ST_VALID, ST_STALE, ST_LOGGED, ST_NLOG, ST_NFREE, ST_NCHG, ST_STAMP,
 ST_WARM, ST_MOVED, ST_STEPS) = range(13)
ST_SLOTS = 16


# --------------------------------------------------------------------------- workspace

@njit(cache=True)
def microbatch_workspace(stacks):
    """Workspace tuple of the micro-batch kernels (layout in the module docstring); O(N·r)."""
    N, r = stacks.shape
    hold_g = np.empty((N, r), np.int64)
    tpos = np.empty((N, r), np.int64)
    hcnt = np.empty(N, np.int64)
    build_holders(stacks, hold_g, tpos, hcnt)
    y = np.zeros((N, r), np.int64)
    nv = np.zeros((NV_ROWS, N), np.int64)
    seen = np.zeros(N, np.bool_)
    st = np.zeros(ST_SLOTS, np.int64)
    st[ST_WARM] = 1
    iw = np.zeros((IW_ROWS, N + 1), np.int64)
    iw[IW_LT, :] = -1
    iw[IW_LG, :] = -1
    ew = np.zeros((EW_ROWS, N * r), np.int64)
    return hold_g, tpos, hcnt, y, nv, seen, st, iw, ew


@njit(cache=True)
def _log_entry(g, p, r, y, st, ew):
    """Remember y[g, p] before its first change in this call (for ``moved``)."""
    e = g * r + p
    if ew[EW_STAMP, e] != st[ST_STAMP]:
        ew[EW_STAMP, e] = st[ST_STAMP]
        ew[EW_LOG, st[ST_NCHG]] = e
        ew[EW_OLD, st[ST_NCHG]] = y[g, p]
        st[ST_NCHG] += 1


@njit(cache=True)
def _begin_log(st):
    st[ST_STAMP] += 1
    st[ST_NCHG] = 0


@njit(cache=True)
def _moved(y, alive, st, ew):
    """Micro-batches handed to a live holder in this call: Σ max(0, new − old) over the log."""
    r = y.shape[1]
    m = 0
    for i in range(st[ST_NCHG]):
        e = ew[EW_LOG, i]
        g = e // r
        if alive[g]:
            d = y[g, e - g * r] - ew[EW_OLD, i]
            if d > 0:
                m += d
    return m


# --------------------------------------------------------------------------- Dinic

@njit(cache=True)
def _bfs(stacks, alive, L, hold_g, hcnt, y, nv, st, iw):
    """Level graph from the free types; returns (level of the nearest holders with spare
    capacity or -1, types visited, groups visited). With -1 the visited sets are the whole
    residual-reachable set (the Hall set of the Dinkelbach step)."""
    r = stacks.shape[1]
    lt, lg, qt, qg = iw[IW_LT], iw[IW_LG], iw[IW_QT], iw[IW_QG]
    load, dem = nv[NV_LOAD], nv[NV_DEM]
    free = iw[IW_FREE]
    nt = 0
    for i in range(st[ST_NFREE]):
        t = free[i]
        if dem[t] > 0 and lt[t] < 0:
            lt[t] = 0
            qt[nt] = t
            nt += 1
    nsrc = nt
    ng = 0
    found = -1
    h = 0
    while h < nt:
        t = qt[h]
        h += 1
        lvl = lt[t] + 1
        if found >= 0 and lvl > found:
            break
        for j in range(hcnt[t]):
            g = hold_g[t, j]
            if not alive[g] or lg[g] >= 0:
                continue
            lg[g] = lvl
            qg[ng] = g
            ng += 1
            if load[g] < L:
                found = lvl
            elif found < 0:
                for p in range(r):
                    if y[g, p] > 0:
                        t2 = stacks[g, p]
                        if lt[t2] < 0:
                            lt[t2] = lvl + 1
                            qt[nt] = t2
                            nt += 1
    return found, nt, ng, nsrc


@njit(cache=True)
def _reset_levels(nt, ng, iw):
    lt, lg, qt, qg, at, ag = iw[IW_LT], iw[IW_LG], iw[IW_QT], iw[IW_QG], iw[IW_AT], iw[IW_AG]
    for i in range(nt):
        lt[qt[i]] = -1
        at[qt[i]] = 0
    for i in range(ng):
        lg[qg[i]] = -1
        ag[qg[i]] = 0


@njit(cache=True)
def _augment(s, depth, gend, jend, stacks, L, tpos, y, nv, st, iw, ew):
    """Push the bottleneck along the path s = PT[0] → PG[0] → PT[1] → ... → gend."""
    r = stacks.shape[1]
    pt, pg, pj, pp = iw[IW_PT], iw[IW_PG], iw[IW_PJ], iw[IW_PP]
    load, dem = nv[NV_LOAD], nv[NV_DEM]
    d = min(dem[s], L - load[gend])
    for i in range(depth):
        d = min(d, y[pg[i], pp[i]])
    for i in range(depth):
        g = pg[i]
        q = tpos[pt[i], pj[i]]
        _log_entry(g, q, r, y, st, ew)
        _log_entry(g, pp[i], r, y, st, ew)
        y[g, q] += d
        y[g, pp[i]] -= d
    q = tpos[pt[depth], jend]
    _log_entry(gend, q, r, y, st, ew)
    y[gend, q] += d
    load[gend] += d
    dem[s] -= d
    return d


@njit(cache=True)
def _blocking_flow(stacks, alive, L, found, nsrc, hold_g, tpos, hcnt, y, nv, st, iw, ew):
    """Augmenting paths along the level graph (current arcs, dead ends marked -2)."""
    r = stacks.shape[1]
    lt, lg, qt, at, ag = iw[IW_LT], iw[IW_LG], iw[IW_QT], iw[IW_AT], iw[IW_AG]
    pt, pg, pj, pp = iw[IW_PT], iw[IW_PG], iw[IW_PJ], iw[IW_PP]
    load, dem = nv[NV_LOAD], nv[NV_DEM]
    pushed = 0
    for i in range(nsrc):  # the sources come first in the queue
        s = qt[i]
        while dem[s] > 0 and lt[s] == 0:
            depth = 0
            pt[0] = s
            while True:
                t = pt[depth]
                gend = -1
                adv = False
                while at[t] < hcnt[t]:
                    j = at[t]
                    g = hold_g[t, j]
                    if alive[g] and lg[g] == lt[t] + 1:
                        if lg[g] == found:
                            if load[g] < L:
                                gend = g
                                break
                        else:
                            while ag[g] < r:
                                p = ag[g]
                                t2 = stacks[g, p]
                                if y[g, p] > 0 and lt[t2] == lg[g] + 1:
                                    pj[depth] = j
                                    pg[depth] = g
                                    pp[depth] = p
                                    depth += 1
                                    pt[depth] = t2
                                    adv = True
                                    break
                                ag[g] += 1
                            if adv:
                                break
                            lg[g] = -2
                    at[t] += 1
                if gend >= 0:
                    pushed += _augment(s, depth, gend, at[t], stacks, L, tpos, y, nv, st, iw, ew)
                    break
                if not adv:
                    lt[t] = -2
                    if depth == 0:
                        break
                    depth -= 1
                    ag[pg[depth]] += 1
    return pushed


@njit(cache=True)
def _compact_free(st, iw, nv):
    """Drop the types whose micro-batches are all assigned from the free list; Σ of the rest."""
    free, dem = iw[IW_FREE], nv[NV_DEM]
    k = 0
    tot = 0
    for i in range(st[ST_NFREE]):
        t = free[i]
        if dem[t] > 0:
            free[k] = t
            k += 1
            tot += dem[t]
    st[ST_NFREE] = k
    return tot


@njit(cache=True)
def _add_free(t, st, iw, nv):
    """List type t as free (call before raising its NV_DEM from 0)."""
    if nv[NV_DEM, t] == 0:
        iw[IW_FREE, st[ST_NFREE]] = t
        st[ST_NFREE] += 1


@njit(cache=True)
def max_flow_search(stacks, alive, L, hold_g, tpos, hcnt, y, nv, st, iw, ew):
    """Least L' ≥ L at which every free micro-batch is assigned, keeping the flow in ``y``.

    Dinic phases at L; on a failed BFS, the Dinkelbach step L ← ⌈Σ_{T_R} need / |G_R|⌉ on the
    residual-reachable set. ``L`` must be ≤ L* (a lower bound) for the result to be L*.
    Returns L', or 0 if some free type has no live holder (wipe-out).
    """
    need = nv[NV_NEED]
    qt = iw[IW_QT]
    st[ST_STEPS] = 0
    while _compact_free(st, iw, nv) > 0:
        found, nt, ng, nsrc = _bfs(stacks, alive, L, hold_g, hcnt, y, nv, st, iw)
        if found >= 0:
            _blocking_flow(stacks, alive, L, found, nsrc, hold_g, tpos, hcnt, y, nv, st, iw, ew)
            _reset_levels(nt, ng, iw)
            continue
        tot = 0
        for i in range(nt):
            tot += need[qt[i]]
        _reset_levels(nt, ng, iw)
        if ng == 0:
            return 0
        L_new = (tot + ng - 1) // ng
        L = L_new if L_new > L else L + 1  # L_new > L always holds; guard against a loop
        if L > stacks.shape[1] * st[ST_B]:  # above r·b: a free type has no live holder
            return 0
        st[ST_STEPS] += 1
    st[ST_L] = L
    return L


@njit(cache=True)
def max_flow_at(stacks, alive, b, L):
    """Max flow of the feasibility network at a fixed capacity L (Dinic from an empty flow).

    Source → type (b), type → live holder (unbounded), holder → sink (L). L is feasible iff
    the value is N·b. Returns (value, y) with y (N, r) the flow. The tests' NetworkX oracle
    checks this kernel.
    """
    N, r = stacks.shape
    hold_g, tpos, hcnt, y, nv, seen, st, iw, ew = microbatch_workspace(stacks)
    _count_live(alive, hold_g, hcnt, nv, seen, st)
    st[ST_B] = b
    for t in range(N):
        nv[NV_NEED, t] = b
        nv[NV_DEM, t] = b
        iw[IW_FREE, t] = t
    st[ST_NFREE] = N
    while _compact_free(st, iw, nv) > 0:
        found, nt, ng, nsrc = _bfs(stacks, alive, L, hold_g, hcnt, y, nv, st, iw)
        if found >= 0:
            _blocking_flow(stacks, alive, L, found, nsrc, hold_g, tpos, hcnt, y, nv, st, iw, ew)
        _reset_levels(nt, ng, iw)
        if found < 0:
            break
    value = 0
    for t in range(N):
        value += b - nv[NV_DEM, t]
    return value, y


@njit(cache=True)
def trim_to(L, stacks, y, nv, st, iw, ew):
    """Hand every holder's micro-batches beyond L back to their types (deepest positions first)."""
    N, r = stacks.shape
    load, dem = nv[NV_LOAD], nv[NV_DEM]
    for g in range(N):
        p = r - 1
        while load[g] > L:
            if y[g, p] > 0:
                d = min(y[g, p], load[g] - L)
                t = stacks[g, p]
                _add_free(t, st, iw, nv)
                _log_entry(g, p, r, y, st, ew)
                y[g, p] -= d
                load[g] -= d
                dem[t] += d
            p -= 1


# --------------------------------------------------------------------------- stateless solve

@njit(cache=True)
def _count_live(alive, hold_g, hcnt, nv, seen, st):
    """Live-holder counts, survivors; True when some type has no live holder (wipe-out)."""
    N = hcnt.shape[0]
    live = nv[NV_LIVE]
    wiped = False
    n = 0
    for w in range(N):
        seen[w] = alive[w]
        if alive[w]:
            n += 1
    for t in range(N):
        c = 0
        for j in range(hcnt[t]):
            if alive[hold_g[t, j]]:
                c += 1
        live[t] = c
        if c == 0:
            wiped = True
    st[ST_NALIVE] = n
    return wiped


@njit(cache=True)
def solve_from_scratch(stacks, alive, b, warm, hold_g, tpos, hcnt, y, nv, seen, st, iw, ew):
    """Stateless solve into the workspace: returns (outcome, L*, S* or 0)."""
    N, r = stacks.shape
    if st[ST_STALE] != 0:
        build_holders(stacks, hold_g, tpos, hcnt)
        st[ST_STALE] = 0
    st[ST_VALID] = 0
    st[ST_B] = b
    st[ST_NLOG] = 0
    _begin_log(st)
    if _count_live(alive, hold_g, hcnt, nv, seen, st):
        return MB_WIPEOUT, 0, 0
    n = st[ST_NALIVE]
    load, need, dem, live = nv[NV_LOAD], nv[NV_NEED], nv[NV_DEM], nv[NV_LIVE]
    lb = (N * b + n - 1) // n
    for t in range(N):
        need[t] = b
        lb = max(lb, (b + live[t] - 1) // live[t])
    for g in range(N):
        load[g] = 0
        for p in range(r):
            y[g, p] = 0
    s_star = 0
    st[ST_NFREE] = 0
    if warm:
        assign = np.empty(N, np.int64)
        s_star = rectlr_kernel_assign(stacks.copy(), alive, 1, np.zeros(N, np.int64), assign)[1]
        lb = max(lb, b * (s_star - 1) + 1)
        for t in range(N):
            g = assign[t]
            for j in range(hcnt[t]):
                if hold_g[t, j] == g:
                    y[g, tpos[t, j]] = b
                    load[g] += b
                    break
        for t in range(N):
            dem[t] = 0
        trim_to(lb, stacks, y, nv, st, iw, ew)
    else:
        for t in range(N):
            dem[t] = b
            iw[IW_FREE, t] = t
        st[ST_NFREE] = N
    L = max_flow_search(stacks, alive, lb, hold_g, tpos, hcnt, y, nv, st, iw, ew)
    if L == 0:
        return MB_WIPEOUT, 0, s_star
    st[ST_VALID] = 1
    st[ST_MOVED] = -1
    return REROUTED, L, s_star


@njit(cache=True)
def microbatch_kernel_ws(stacks, alive, b, warm, hold_g, tpos, hcnt, y, nv, seen, st, iw, ew):
    """Least makespan from scratch into a kept workspace; see the module docstring."""
    return solve_from_scratch(stacks, alive, b, warm, hold_g, tpos, hcnt, y, nv, seen, st, iw,
                              ew)


@njit(cache=True)
def microbatch_kernel(stacks, alive, b, y_out, warm=True):
    """Least makespan in one numba call: writes ``y_out`` (N, r), returns (outcome, L*, S*)."""
    ws = microbatch_workspace(stacks)
    out = solve_from_scratch(stacks, alive, b, warm, *ws)
    y_out[:, :] = ws[3]
    return out


# --------------------------------------------------------------------------- Python API

@dataclass(frozen=True, eq=False)
class MicrobatchPlan:
    """A micro-batch assignment (issue 25).

    Attributes
    ----------
    outcome : str
        'kept' (no live holder's work changed), 'rerouted' or 'wipeout'.
    makespan : int
        L*: micro-batches the busiest survivor computes (0 on wipe-out).
    counts : ndarray, shape (N, r)
        ``counts[g, p]`` micro-batches of type ``stacks[g, p]`` computed by group g.
    stacks : ndarray, shape (N, r)
        The stacks the counts refer to.
    s_star : int
        RECTLR's S* for the same survivors when it was computed (warm start), else 0.
    moved : int
        Micro-batches handed to a live holder that did not compute them before (incremental
        calls; -1 when solved from scratch).
    """

    outcome: str
    makespan: int
    counts: np.ndarray = field(repr=False)
    stacks: np.ndarray = field(repr=False)
    s_star: int = 0
    moved: int = -1

    @property
    def x(self) -> np.ndarray:
        """Dense assignment ``x[t, g]`` (N, N): micro-batches of type t computed by group g."""
        N = self.stacks.shape[0]
        x = np.zeros((N, N), np.int64)
        g = np.repeat(np.arange(N), self.stacks.shape[1])
        np.add.at(x, (self.stacks.ravel(), g), self.counts.ravel())
        return x

    @property
    def loads(self) -> np.ndarray:
        """Micro-batches per group, Σ_p counts[g, p]."""
        return self.counts.sum(axis=1)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


def _as_stacks(layout: Layout | np.ndarray, alive: object) -> tuple[np.ndarray, np.ndarray]:
    stacks = layout.stacks if isinstance(layout, Layout) else layout
    st, al, _ = _validate_inputs(stacks, alive, 1)
    return st, al


def check_microbatches(b: object) -> int:
    """Validate the micro-batches per shard b ≥ 1."""
    return check_int("b", b, lo=1)


def microbatch_assign(layout: Layout | np.ndarray, alive: object, b: int, *,
                      warm: bool = True) -> MicrobatchPlan:
    """Least-makespan assignment of b micro-batches per type to live holders (issue 25).

    Parameters
    ----------
    layout : Layout or ndarray (N, r)
        The layout or its stacks (every type held by exactly r groups).
    alive : bool ndarray (N,)
        Survivors (at least one).
    b : int
        Micro-batches per shard, b ≥ 1. b = 1 gives RECTLR's S*.
    warm : bool
        Start from RECTLR's S* assignment (default) or from an empty flow.

    Returns
    -------
    MicrobatchPlan
        With ``makespan`` = L* = ⌈b·ρ⌉ (module docstring) and the counts; 'wipeout' (makespan 0)
        when some type has no live holder.
    """
    st, al = _as_stacks(layout, alive)
    b = check_microbatches(b)
    y = np.zeros(st.shape, np.int64)
    out, L, s_star = microbatch_kernel(st, al, b, y, bool(warm))
    return MicrobatchPlan(MB_OUTCOMES[int(out)], int(L), _frozen(y), _frozen(st), int(s_star), -1)
