"""Hopcroft–Karp for bipartite b-matching, and RECTLR's Phase 1 depth search (SPEC §4).

Problem
-------
Left vertices (shard types) must each be matched to one right vertex (a group, or a slot of a
group); right vertex ``v`` accepts at most ``capacity[v]`` left vertices. In RECTLR's Phase 1 the
right vertices are the surviving groups with capacity S: the slots ``(w, p), p < S`` of one
group are interchangeable for feasibility, so the slot graph of SPEC §4 collapses to a
group graph with capacities (same perfect-matching test, r times fewer right vertices).

Algorithm
---------
Hopcroft & Karp (1973), "An n^{5/2} algorithm for maximum matchings in bipartite graphs",
generalised to right capacities: each phase runs one BFS from all free left vertices to the
nearest right vertex with spare capacity, then vertex-disjoint (on the left) DFS along the
layered graph. Every left vertex or right vertex found to be a dead end is marked and never
re-entered in that phase, so a phase costs O(E + V) and there are O(sqrt(V)) phases:
O(E sqrt(V)) overall, also on chain / ladder graphs (the consecutive layout), where a DFS
without dead-end marks can take exponential time. The DFS is iterative (no recursion limit).
The matching can be warm-started: any valid partial matching is accepted as input and only the
free left vertices are augmented.

Example
-------
>>> import numpy as np
>>> indptr = np.array([0, 2, 3, 4]); indices = np.array([0, 1, 0, 0])
>>> hopcroft_karp(indptr, indices, np.array([2, 1])).tolist()
[1, 0, 0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.rectlr._inputs import _validate_inputs

#: Layer value of a vertex found to be a dead end in the current phase.
_DEAD = -2
#: Layer value of a vertex not reached by the BFS.
_UNSEEN = -1


# --------------------------------------------------------------------------- linked lists
# The left vertices matched to right vertex v form a doubly linked list head[v] -> nxt[...];
# O(1) insertion and removal without a per-vertex capacity bound.

@njit(cache=True)
def _list_add(v, t, head, nxt, prv):
    h = head[v]
    nxt[t] = h
    prv[t] = -1
    if h >= 0:
        prv[h] = t
    head[v] = t


@njit(cache=True)
def _list_remove(v, t, head, nxt, prv):
    p = prv[t]
    n = nxt[t]
    if p >= 0:
        nxt[p] = n
    else:
        head[v] = n
    if n >= 0:
        prv[n] = p
    nxt[t] = -1
    prv[t] = -1


@njit(cache=True)
def _reassign(t, v, match, load, head, nxt, prv):
    """Match left vertex t to right vertex v, unlinking it from its old vertex; return the old
    vertex (-1 if t was free)."""
    old = match[t]
    if old >= 0:
        _list_remove(old, t, head, nxt, prv)
        load[old] -= 1
    _list_add(v, t, head, nxt, prv)
    load[v] += 1
    match[t] = v
    return old


@njit(cache=True)
def build_match_lists(match, n_right, head, nxt, prv, load):
    """Fill the per-right-vertex lists and loads from a left->right ``match`` (-1 = free)."""
    for v in range(n_right):
        head[v] = -1
        load[v] = 0
    for t in range(match.shape[0]):
        nxt[t] = -1
        prv[t] = -1
    for t in range(match.shape[0]):
        v = match[t]
        if v >= 0:
            _list_add(v, t, head, nxt, prv)
            load[v] += 1


@njit(cache=True)
def materialize_list(w, stacks, match, head, nxt, prv, load, lstamp, stamp):
    """Build group w's list of matched types as :func:`build_match_lists` would, once per ``stamp``.

    The list of w is the types t of w's stack row with ``match[t] == w`` (a type is only ever
    matched to a holder), linked from ``head[w]`` in decreasing t order, which is the order the
    head insertions of :func:`build_match_lists` (t ascending) leave. O(r·load[w]); a no-op when
    ``lstamp[w] == stamp`` (the list is already live for this search).
    """
    if lstamp[w] == stamp:
        return
    lstamp[w] = stamp
    r = stacks.shape[1]
    head[w] = -1
    load[w] = 0
    last = -1
    while True:
        best = -1
        for p in range(r):
            t = stacks[w, p]
            if t > last and (best < 0 or t < best) and match[t] == w:
                best = t
        if best < 0:
            return
        _list_add(w, best, head, nxt, prv)
        load[w] += 1
        last = best


@njit(cache=True)
def undo_log(t, match, matchpos, ustamp, ut, um, up, cnt, stamp):
    """Record type t's (match, matchpos) before its first change under ``stamp``.

    ``ut/um/up[:cnt[0]]`` is the log; :func:`undo_all` restores it. Each type is logged once
    per stamp, so the log never exceeds N entries.
    """
    if ustamp[t] != stamp:
        ustamp[t] = stamp
        k = cnt[0]
        ut[k] = t
        um[k] = match[t]
        up[k] = matchpos[t]
        cnt[0] = k + 1


@njit(cache=True)
def undo_all(match, matchpos, ut, um, up, cnt):
    """Restore every logged type's (match, matchpos) and empty the log."""
    for k in range(cnt[0]):
        t = ut[k]
        match[t] = um[k]
        matchpos[t] = up[k]
    cnt[0] = 0


# --------------------------------------------------------------------------- HK phases

@njit(cache=True)
def _hk_bfs(indptr, indices, cap, match, load, head, nxt, tlayer, rlayer, queue):
    """Layer the alternating graph from all free left vertices; return the augmenting layer or -1."""
    n = match.shape[0]
    qt = 0
    for t in range(n):
        if match[t] < 0:
            tlayer[t] = 0
            queue[qt] = t
            qt += 1
        else:
            tlayer[t] = _UNSEEN
    for v in range(rlayer.shape[0]):
        rlayer[v] = _UNSEEN
    limit = -1
    qh = 0
    while qh < qt:
        t = queue[qh]
        qh += 1
        L = tlayer[t]
        if limit >= 0 and L > limit:
            break
        for e in range(indptr[t], indptr[t + 1]):
            v = indices[e]
            if cap[v] == 0 or v == match[t] or rlayer[v] != _UNSEEN:
                continue
            rlayer[v] = L
            if load[v] < cap[v]:
                if limit < 0:
                    limit = L
            elif limit < 0:
                x = head[v]
                while x >= 0:
                    if tlayer[x] == _UNSEEN:
                        tlayer[x] = L + 1
                        queue[qt] = x
                        qt += 1
                    x = nxt[x]
    return limit


@njit(cache=True)
def _hk_dfs(root, limit, indptr, indices, cap, match, load, head, nxt, prv, tlayer, rlayer,
            st_t, st_e, st_x):
    """Iterative layered DFS from free left vertex ``root``; augment and return True on success.

    Frames hold (left vertex, edge cursor, cursor into the matched list of the edge's right
    vertex). Dead ends are marked (left: tlayer=_DEAD, right: rlayer=_DEAD) and not re-entered.
    """
    sp = 0
    st_t[0] = root
    st_e[0] = indptr[root]
    st_x[0] = -2
    while sp >= 0:
        t = st_t[sp]
        L = tlayer[t]
        end = indptr[t + 1]
        pushed = False
        while st_e[sp] < end:
            v = indices[st_e[sp]]
            if st_x[sp] == -2:
                if cap[v] == 0 or v == match[t] or rlayer[v] != L:
                    st_e[sp] += 1
                    continue
                if load[v] < cap[v]:
                    # augment along the stack: frame i's left vertex moves to its edge's vertex
                    for i in range(sp, -1, -1):
                        ti = st_t[i]
                        _reassign(ti, indices[st_e[i]], match, load, head, nxt, prv)
                        tlayer[ti] = _DEAD
                    return True
                if L >= limit:
                    st_e[sp] += 1
                    continue
                st_x[sp] = head[v]
            x = st_x[sp]
            while x >= 0 and tlayer[x] != L + 1:
                x = nxt[x]
            if x < 0:
                rlayer[v] = _DEAD
                st_x[sp] = -2
                st_e[sp] += 1
                continue
            st_x[sp] = nxt[x]
            sp += 1
            st_t[sp] = x
            st_e[sp] = indptr[x]
            st_x[sp] = -2
            pushed = True
            break
        if not pushed:
            tlayer[t] = _DEAD
            sp -= 1
    return False


@njit(cache=True)
def hk_augment(indptr, indices, cap, match, load, head, nxt, prv, tlayer, rlayer, queue,
               st_t, st_e, st_x):
    """Run Hopcroft–Karp phases from the current (valid) matching until it is maximum.

    All arrays are modified in place; ``head/nxt/prv/load`` must be consistent with ``match``
    (see :func:`build_match_lists`). Work arrays: ``tlayer, queue, st_t, st_e, st_x`` of length
    ≥ n_left + 1, ``rlayer`` of length n_right. Returns the number of free left vertices left.
    """
    n = match.shape[0]
    while True:
        limit = _hk_bfs(indptr, indices, cap, match, load, head, nxt, tlayer, rlayer, queue)
        if limit < 0:
            break
        found = 0
        for t in range(n):
            if match[t] < 0 and tlayer[t] == 0:
                if _hk_dfs(t, limit, indptr, indices, cap, match, load, head, nxt, prv, tlayer,
                           rlayer, st_t, st_e, st_x):
                    found += 1
        if found == 0:  # pragma: no cover - BFS found a path, so DFS finds one
            break
    free = 0
    for t in range(n):
        if match[t] < 0:
            free += 1
    return free


@njit(cache=True)
def _hk_run(indptr, indices, cap, match):
    head, nxt, prv, load, tlayer, rlayer, queue, st_t, st_e, st_x = _hk_workspace(match, cap.shape[0])
    return hk_augment(indptr, indices, cap, match, load, head, nxt, prv, tlayer, rlayer, queue,
                      st_t, st_e, st_x)


@njit(cache=True)
def _hk_workspace(match, m):
    """Match lists built from ``match`` (n left vertices, m right) and the search scratch of
    :func:`hk_augment`: (head, nxt, prv, load, tlayer, rlayer, queue, st_t, st_e, st_x)."""
    n = match.shape[0]
    head = np.empty(m, np.int64)
    nxt = np.empty(n, np.int64)
    prv = np.empty(n, np.int64)
    load = np.empty(m, np.int64)
    build_match_lists(match, m, head, nxt, prv, load)
    return (head, nxt, prv, load, np.empty(n + 1, np.int64), np.empty(m, np.int64),
            np.empty(n + 1, np.int64), np.empty(n + 1, np.int64), np.empty(n + 1, np.int64),
            np.empty(n + 1, np.int64))


def hopcroft_karp(indptr: np.ndarray, indices: np.ndarray, capacity: np.ndarray,
                  match: np.ndarray | None = None) -> np.ndarray:
    """Maximum bipartite b-matching by Hopcroft–Karp with right-vertex capacities.

    Parameters
    ----------
    indptr, indices : ndarray of int
        CSR adjacency of the left vertices: left ``i`` is adjacent to right vertices
        ``indices[indptr[i]:indptr[i+1]]`` (duplicates allowed, harmless).
    capacity : ndarray of int, shape (n_right,)
        Right vertex ``v`` takes at most ``capacity[v] >= 0`` left vertices.
    match : ndarray of int, shape (n_left,), optional
        A valid warm-start matching (-1 = free); only free left vertices are augmented.

    Returns
    -------
    ndarray of int64, shape (n_left,)
        ``match[i]`` = right vertex of left ``i``, or -1; a maximum matching.

    Notes
    -----
    O(E sqrt(V)) time (Hopcroft & Karp 1973) including chain-shaped graphs, thanks to dead-end
    marking; O(V) extra memory.
    """
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    cap = np.ascontiguousarray(capacity, dtype=np.int64)
    if indptr.ndim != 1 or indptr.size < 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        raise ValueError("indptr must be a non-decreasing 1-D array starting at 0")
    n = indptr.size - 1
    if indices.ndim != 1 or indices.size != indptr[-1]:
        raise ValueError(f"indices must be 1-D of length indptr[-1] = {indptr[-1]}, "
                         f"got shape {indices.shape}")
    if cap.ndim != 1 or np.any(cap < 0):
        raise ValueError("capacity must be a 1-D array of non-negative integers")
    m = cap.size
    if indices.size and (indices.min() < 0 or indices.max() >= m):
        raise ValueError(f"indices must lie in [0, n_right-1] = [0, {m - 1}]")
    if match is None:
        mt = np.full(n, -1, dtype=np.int64)
    else:
        mt = np.array(match, dtype=np.int64)
        if mt.shape != (n,):
            raise ValueError(f"match must have shape ({n},), got {mt.shape}")
        used = mt[mt >= 0]
        if used.size and used.max() >= m:
            raise ValueError(f"match entries must be -1 or in [0, {m - 1}]")
        if np.any(np.bincount(used, minlength=m) > cap):
            raise ValueError("match exceeds a right-vertex capacity")
        for i in np.flatnonzero(mt >= 0):
            if mt[i] not in indices[indptr[i]:indptr[i + 1]]:
                raise ValueError(f"match[{i}] = {mt[i]} is not a neighbour of left vertex {i}")
    _hk_run(indptr, indices, cap, mt)
    return mt


# --------------------------------------------------------------------------- RECTLR Phase 1

@njit(cache=True)
def build_holders(stacks, hold_g, tpos, hcnt):
    """Invert the stacks: type t sits at position ``tpos[t, j]`` of group ``hold_g[t, j]``.

    ``hcnt[t]`` = number of holders of t (r for every cyclic layout). O(N·r).
    """
    N, r = stacks.shape
    for t in range(N):
        hcnt[t] = 0
    for w in range(N):
        for p in range(r):
            t = stacks[w, p]
            k = hcnt[t]
            hold_g[t, k] = w
            tpos[t, k] = p
            hcnt[t] = k + 1


@njit(cache=True)
def extend_zero_cost(alive, S, hold_g, tpos, hcnt, match, matchpos):
    """Give every free type a live holder that has it at a position < S, if one exists.

    Starting from a matching that only uses positions < S, the result still does, so no group
    gets more than S types (a group's first S positions hold S distinct types): a valid
    b-matching at depth S that moves nothing. Returns the number of types left free.
    """
    free = 0
    for t in range(match.shape[0]):
        if match[t] < 0 and not cover_in_place(t, alive, S, hold_g, tpos, hcnt, match, matchpos):
            free += 1
    return free


@njit(cache=True)
def has_live_holder(t, alive, hold_g, hcnt):
    """True when some holder of type t is alive (False: t is wiped out)."""
    for j in range(hcnt[t]):
        if alive[hold_g[t, j]]:
            return True
    return False


@njit(cache=True)
def cover_in_place(t, alive, S, hold_g, tpos, hcnt, match, matchpos):
    """Give type t to a live holder that already has it at a position < S (nothing moves).

    Returns True and sets ``match[t]``, ``matchpos[t]`` if such a holder exists; otherwise leaves
    them unchanged and returns False.
    """
    for j in range(hcnt[t]):
        w = hold_g[t, j]
        if alive[w] and tpos[t, j] < S:
            match[t] = w
            matchpos[t] = tpos[t, j]
            return True
    return False


@njit(cache=True)
def phase1_depth(alive, S, hold_g, tpos, hcnt, match, matchpos):
    """RECTLR Phase 1: least depth S* ≥ S at which the survivors can take every type.

    ``match`` must be a valid b-matching at depth S that uses positions < S only (e.g. the
    Phase 0 cover); it is extended in place with zero-cost entries at the starting depth
    max(S, c(k)) (a valid warm start for Phase 2). Hopcroft–Karp then runs on a copy, raising
    the capacity S of every survivor by one whenever no augmenting path is left (the matching
    is kept across depths). Depths below c(k) = ceil(N/(N−k)) are skipped: there, S·(N−k) < N
    slots cannot hold N types. Returns S*, or 0 when some type has no live holder (wipe-out).
    """
    N = match.shape[0]
    n_alive = 0
    for w in range(N):
        if alive[w]:
            n_alive += 1
    if n_alive == 0:
        return 0
    for t in range(N):
        if not has_live_holder(t, alive, hold_g, hcnt):
            return 0
    s = max(S, (N + n_alive - 1) // n_alive)
    free = extend_zero_cost(alive, s, hold_g, tpos, hcnt, match, matchpos)
    if free == 0:
        return s
    r = hold_g.shape[1]
    indptr = np.arange(N + 1, dtype=np.int64) * r
    indices = hold_g.reshape(-1)
    cap = np.zeros(N, np.int64)
    hm = match.copy()
    head, nxt, prv, load, tlayer, rlayer, queue, st_t, st_e, st_x = _hk_workspace(hm, N)
    # rows of hold_g beyond hcnt[t] are never used for cyclic layouts (hcnt == r); for safety
    # pad them with a dead vertex index by capacity 0 (see rectlr input validation).
    while s <= r:
        for w in range(N):
            cap[w] = s if alive[w] else 0
        free = hk_augment(indptr, indices, cap, hm, load, head, nxt, prv, tlayer, rlayer,
                          queue, st_t, st_e, st_x)
        if free == 0:
            return s
        s += 1
    return 0  # pragma: no cover - no wiped type implies S = r is feasible


def least_feasible_depth(stacks: np.ndarray, alive: np.ndarray, depth: int = 1) -> int:
    """S*: the least depth ≥ ``depth`` at which the survivors cover all N types (SPEC §4, Phase 1).

    Parameters
    ----------
    stacks : ndarray, shape (N, r)
        Current stacks (row w = group w's stack).
    alive : ndarray of bool, shape (N,)
        Survivors.
    depth : int
        Current depth S, 1 ≤ S ≤ r.

    Returns
    -------
    int
        S* in [depth, r], or 0 when some type has no live holder (wipe-out). By the counting
        bound S* ≥ c(k) = ceil(N/(N−k)) for k dead groups.
    """
    st, al, S = _validate_inputs(stacks, alive, depth)
    N, r = st.shape
    hold_g = np.empty((N, r), np.int64)
    tpos = np.empty((N, r), np.int64)
    hcnt = np.empty(N, np.int64)
    build_holders(st, hold_g, tpos, hcnt)
    match = np.full(N, -1, np.int64)
    matchpos = np.full(N, -1, np.int64)
    return int(phase1_depth(al, S, hold_g, tpos, hcnt, match, matchpos))
