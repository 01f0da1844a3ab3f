"""Min-cost max-flow by successive shortest paths with potentials (RECTLR Phase 2, SPEC §4).

Two entry points:

* :func:`min_cost_flow` — a general numba min-cost max-flow on an edge list (successive
  shortest paths, Dijkstra on reduced costs with Johnson potentials; Edmonds & Karp 1972,
  Tomizawa 1971). Costs must be non-negative. O(F · E log V) for flow value F.
* :func:`phase2_assign` — the specialised kernel RECTLR runs: types → survivors with capacity
  S*, cost 0 when the type already sits in the survivor's first S* positions and 1 otherwise.
  This is SPEC §4's slot network (source → type → slot (w, p) → sink, cost 0 iff t is at
  position p of w) with the slots of one group merged: in an optimal slot flow every type
  that already sits at a position p < S* of its group stays at p (moving it there is never
  worse), so both networks have the same optimum and the group network is r times smaller.
  The kernel is warm-started from a zero-cost partial assignment (any assignment that uses
  only cost-0 edges is a min-cost flow for its value, so potentials 0 are valid) and augments
  only the types that are still free, one shortest path each (the Hungarian-method argument:
  the matching stays min-cost for its set of matched types). Dijkstra stops at the sink and
  only the settled vertices' potentials change, so one augmentation costs what it explores.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.rectlr.matching import _reassign, materialize_list, undo_log

_INF = np.int64(1) << np.int64(60)

#: Rows of the Phase-2 workspace ``iw`` (int64, shape (W_ROWS, 2N + 2), :func:`phase2_workspace`):
#: per-group lists (head, load by group; nxt, prv by type) and their build stamps, the Dijkstra
#: arrays by vertex (types 0..N-1, groups N..2N-1, sink 2N), the potentials changed in this call,
#: the groups that received a type, the undo log of (match, matchpos) and the free-type lists.
(W_HEAD, W_NXT, W_PRV, W_LOAD, W_LSTAMP, W_PI, W_DIST, W_PAR, W_PARJ, W_DONE, W_TOUCHED, W_PIL,
 W_RECV, W_RSTAMP, W_USTAMP, W_UT, W_UM, W_UP, W_FREE, W_FREE2, W_LOG, W_CHG) = range(22)
W_ROWS = 22
#: Slots of the counters ``cnt`` of :func:`phase2_assign_ws`: undo-log length, groups received,
#: list stamp, undo stamp.
C_UNDO, C_RECV, C_LSTAMP, C_USTAMP = range(4)


# --------------------------------------------------------------------------- binary heap

@njit(cache=True)
def _heap_push(hk, hv, n, key, val):
    i = n
    hk[i] = key
    hv[i] = val
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] <= hk[i]:
            break
        hk[p], hk[i] = hk[i], hk[p]
        hv[p], hv[i] = hv[i], hv[p]
        i = p
    return n + 1


@njit(cache=True)
def _heap_pop(hk, hv, n):
    key = hk[0]
    val = hv[0]
    n -= 1
    if n > 0:
        hk[0] = hk[n]
        hv[0] = hv[n]
        i = 0
        while True:
            a = 2 * i + 1
            if a >= n:
                break
            b = a + 1
            c = b if (b < n and hk[b] < hk[a]) else a
            if hk[i] <= hk[c]:
                break
            hk[c], hk[i] = hk[i], hk[c]
            hv[c], hv[i] = hv[i], hv[c]
            i = c
    return key, val, n


# --------------------------------------------------------------------------- RECTLR Phase 2

@njit(cache=True)
def _relax(y, nd, x, dist, par, touched, nt, hk, hv, n):
    """Lower dist[y] to nd (< dist[y]) through x and push y; a vertex reached for the first time
    is recorded in ``touched``. Returns the new (nt, heap size)."""
    if dist[y] == _INF:
        touched[nt] = y
        nt += 1
    dist[y] = nd
    par[y] = x
    return nt, _heap_push(hk, hv, n, nd, y)


@njit(cache=True)
def phase2_workspace(N, r):
    """Preallocated arrays of :func:`phase2_assign_ws`: ``(iw, heap)``, built once per run.

    ``iw`` (W_ROWS, 2N+2) with the Dijkstra distances at infinity and every other row at 0
    (potentials, settled flags, stamps); ``heap`` (2, N·r + 2N + 2) the binary heap's keys and
    values. The search leaves them in that state after every call.
    """
    iw = np.zeros((W_ROWS, 2 * N + 2), np.int64)
    iw[W_DIST, :] = _INF
    return iw, np.empty((2, N * r + 2 * N + 2), np.int64)


@njit(cache=True)
def phase2_assign_ws(alive, S, stacks, hold_g, tpos, hcnt, match, matchpos, free, nfree, lists,
                     search, log, heap, cnt):
    """:func:`phase2_assign` on kept arrays: cost O(vertices explored), not O(N).

    Same searches, same tie-breaking, same result as :func:`phase2_assign` started from
    :func:`spare_lib.rectlr.matching.build_match_lists` lists. Arguments:

    * ``free[:nfree]``: the free types, ascending (the order :func:`phase2_assign` scans them);
    * ``lists = (head, nxt, prv, load, lstamp)``: per-group lists of matched types;
    * ``search = (pi, dist, par, parj, done, touched, pil)`` over the 2N + 1 vertices, with
      ``pi`` and ``done`` at 0 and ``dist`` at ``_INF``, as every call leaves them;
    * ``log = (ustamp, ut, um, up, recv, rstamp)``: undo log and groups that received a type;
    * ``heap``: (2, N·r + 2N + 2) keys and values; ``cnt``: counters ``C_*``.

    With ``cnt[C_LSTAMP] > 0`` (tracking, the incremental kernel): a group's list is built from
    its stack row the first time the search touches it
    (:func:`spare_lib.rectlr.matching.materialize_list`, stamp ``cnt[C_LSTAMP]``, which the caller
    advances before each call); every type whose (match, matchpos) changes is logged once per
    ``cnt[C_USTAMP]`` (:func:`spare_lib.rectlr.matching.undo_log`); every group that receives a
    type is listed in ``recv[:cnt[C_RECV]]``. With ``cnt[C_LSTAMP] == 0`` the lists are the
    caller's, complete, and nothing is logged (``stacks`` and ``log`` are not read).

    Returns 0, or -1 if some free type cannot be assigned (infeasible depth; the assignment is
    then partial). The total cost is not computed.
    """
    N = match.shape[0]
    SINK = 2 * N
    head, nxt, prv, load, lst = lists
    pi, dist, par, parj, done, touched, pil = search
    ust, ut, um, up, recv, rst = log
    hk, hv = heap[0], heap[1]
    ls, us = cnt[C_LSTAMP], cnt[C_USTAMP]
    track = ls > 0
    npil = 0
    status = 0
    for i in range(nfree):
        u = free[i]
        if match[u] >= 0:  # pragma: no cover - the free list holds free types only
            continue
        nt = 0
        dist[u] = 0
        touched[nt] = u
        nt += 1
        n = _heap_push(hk, hv, 0, 0, u)
        D = -1
        while n > 0:
            d, x, n = _heap_pop(hk, hv, n)
            if done[x] != 0 or d > dist[x]:
                continue
            done[x] = 1
            if x == SINK:
                D = d
                break
            if x < N:
                for j in range(hcnt[x]):
                    w = hold_g[x, j]
                    if not alive[w] or match[x] == w:
                        continue
                    y = N + w
                    c = 0 if tpos[x, j] < S else 1
                    nd = d + c + pi[x] - pi[y]
                    if nd < dist[y]:
                        nt, n = _relax(y, nd, x, dist, par, touched, nt, hk, hv, n)
                        parj[y] = j
            else:
                w = x - N
                if track:
                    materialize_list(w, stacks, match, head, nxt, prv, load, lst, ls)
                if load[w] < S:
                    nd = d + pi[x] - pi[SINK]
                    if nd < dist[SINK]:
                        nt, n = _relax(SINK, nd, x, dist, par, touched, nt, hk, hv, n)
                y = head[w]
                while y >= 0:
                    c = 0 if matchpos[y] < S else 1
                    nd = d - c + pi[x] - pi[y]
                    if nd < dist[y]:
                        nt, n = _relax(y, nd, x, dist, par, touched, nt, hk, hv, n)
                    y = nxt[y]
        if D >= 0:
            for k in range(nt):
                v = touched[k]
                if done[v] != 0 and dist[v] < D:
                    if pi[v] == 0:  # potentials only fall: first change of v in this call
                        pil[npil] = v
                        npil += 1
                    pi[v] -= D - dist[v]
            x = par[SINK]
            while True:
                t = par[x]
                w = x - N
                if track:
                    undo_log(t, match, matchpos, ust, ut, um, up, cnt, us)
                    if match[t] >= 0:
                        materialize_list(match[t], stacks, match, head, nxt, prv, load, lst, ls)
                    materialize_list(w, stacks, match, head, nxt, prv, load, lst, ls)
                    if rst[w] != ls:
                        rst[w] = ls
                        recv[cnt[C_RECV]] = w
                        cnt[C_RECV] += 1
                old = _reassign(t, w, match, load, head, nxt, prv)
                matchpos[t] = tpos[t, parj[x]]
                if t == u:
                    break
                x = N + old
        for k in range(nt):
            v = touched[k]
            dist[v] = _INF
            done[v] = 0
        if D < 0:
            status = -1
            break
    for k in range(npil):
        pi[pil[k]] = 0
    return status


@njit(cache=True)
def phase2_assign(alive, S, hold_g, tpos, hcnt, match, matchpos, head, nxt, prv, load):
    """Complete a zero-cost partial assignment into a least-cost one at depth S (in place).

    Parameters
    ----------
    alive : bool (N,)
    S : int
        Depth S*: capacity of every survivor; edge (t, w) costs 0 iff t sits at a position < S
        of w's current stack.
    hold_g, tpos, hcnt : int64 (N, r), (N, r), (N,)
        Holders of each type and the type's position in each holder's stack.
    match, matchpos : int64 (N,)
        In: a partial assignment using cost-0 edges only (-1 = free). Out: a perfect
        assignment of least total cost; ``matchpos[t]`` = position of t in its group's stack.
    head, nxt, prv, load : int64
        Per-group lists of assigned types, consistent with ``match`` (see
        :func:`spare_lib.rectlr.matching.build_match_lists`); updated in place.

    Returns
    -------
    int
        Total cost (number of types assigned to a group that holds them at a position ≥ S),
        or -1 if some type cannot be assigned (infeasible depth).
    """
    N = match.shape[0]
    n_nodes = 2 * N + 1
    free = np.empty(N, np.int64)
    nfree = 0
    for t in range(N):
        if match[t] < 0:
            free[nfree] = t
            nfree += 1
    z = np.zeros(1, np.int64)
    search = (np.zeros(n_nodes, np.int64), np.full(n_nodes, _INF, np.int64),
              np.empty(n_nodes, np.int64), np.empty(n_nodes, np.int64),
              np.zeros(n_nodes, np.int64), np.empty(n_nodes, np.int64),
              np.empty(n_nodes, np.int64))
    hcap = N * hold_g.shape[1] + 2 * N + 2
    cnt = np.zeros(4, np.int64)  # C_LSTAMP = 0: the lists are complete, nothing is logged
    status = phase2_assign_ws(alive, S, hold_g, hold_g, tpos, hcnt, match, matchpos, free, nfree,
                              (head, nxt, prv, load, z), search, (z, z, z, z, z, z),
                              np.empty((2, hcap), np.int64), cnt)
    if status < 0:
        return -1
    cost = 0
    for t in range(N):
        if matchpos[t] >= S:
            cost += 1
    return cost


# --------------------------------------------------------------------------- general MCMF

@njit(cache=True)
def _mcmf_kernel(n_nodes, tail, head, cap, cost, s, t):
    m = tail.shape[0]
    # residual arcs 2e (forward) and 2e+1 (backward)
    to = np.empty(2 * m, np.int64)
    rc = np.empty(2 * m, np.int64)
    cs = np.empty(2 * m, np.int64)
    deg = np.zeros(n_nodes + 1, np.int64)
    for e in range(m):
        to[2 * e] = head[e]
        rc[2 * e] = cap[e]
        cs[2 * e] = cost[e]
        to[2 * e + 1] = tail[e]
        rc[2 * e + 1] = 0
        cs[2 * e + 1] = -cost[e]
        deg[tail[e] + 1] += 1
        deg[head[e] + 1] += 1
    for v in range(n_nodes):
        deg[v + 1] += deg[v]
    adj = np.empty(2 * m, np.int64)
    fill = deg[:-1].copy()
    for a in range(2 * m):
        u = tail[a >> 1] if (a & 1) == 0 else head[a >> 1]
        adj[fill[u]] = a
        fill[u] += 1
    pi = np.zeros(n_nodes, np.int64)
    dist = np.empty(n_nodes, np.int64)
    pa = np.empty(n_nodes, np.int64)
    hk = np.empty(2 * m + n_nodes + 1, np.int64)
    hv = np.empty(2 * m + n_nodes + 1, np.int64)
    flow = 0
    total = 0
    while True:
        dist[:] = _INF
        pa[:] = -1
        dist[s] = 0
        n = _heap_push(hk, hv, 0, 0, s)
        while n > 0:
            d, x, n = _heap_pop(hk, hv, n)
            if d > dist[x]:
                continue
            for k in range(deg[x], deg[x + 1]):
                a = adj[k]
                if rc[a] <= 0:
                    continue
                y = to[a]
                nd = d + cs[a] + pi[x] - pi[y]
                if nd < dist[y]:
                    dist[y] = nd
                    pa[y] = a
                    n = _heap_push(hk, hv, n, nd, y)
        if dist[t] >= _INF:
            break
        for v in range(n_nodes):
            if dist[v] < _INF:
                pi[v] += dist[v]
        push = _INF
        y = t
        while y != s:
            a = pa[y]
            push = min(push, rc[a])
            y = to[a ^ 1]
        y = t
        while y != s:
            a = pa[y]
            rc[a] -= push
            rc[a ^ 1] += push
            total += push * cs[a]
            y = to[a ^ 1]
        flow += push
    out = np.empty(m, np.int64)
    for e in range(m):
        out[e] = rc[2 * e + 1]
    return flow, total, out


def min_cost_flow(n_nodes: int, tail: np.ndarray, head: np.ndarray, capacity: np.ndarray,
                  cost: np.ndarray, source: int, sink: int) -> tuple[int, int, np.ndarray]:
    """Min-cost maximum flow from ``source`` to ``sink`` (successive shortest paths).

    Parameters
    ----------
    n_nodes : int
        Number of vertices, labelled 0..n_nodes−1.
    tail, head, capacity, cost : ndarray of int, shape (m,)
        Directed edges tail[e] → head[e] with capacity ≥ 0 and cost ≥ 0.
    source, sink : int
        Distinct vertices.

    Returns
    -------
    (flow, cost, edge_flow)
        Maximum flow value, its least total cost, and the flow on every edge.

    Notes
    -----
    Dijkstra on reduced costs with Johnson potentials; O(F · m log n). Used as a general
    reference; RECTLR runs the specialised :func:`phase2_assign`.

    Examples
    --------
    >>> import numpy as np
    >>> min_cost_flow(4, np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3]), np.array([1, 1, 1, 1]),
    ...               np.array([1, 5, 1, 1]), 0, 3)[:2]
    (2, 8)
    """
    from spare_lib._util.validate import check_int

    n_nodes = check_int("n_nodes", n_nodes, lo=2)
    source = check_int("source", source, lo=0, hi=n_nodes - 1)
    sink = check_int("sink", sink, lo=0, hi=n_nodes - 1)
    if source == sink:
        raise ValueError(f"sink must differ from source, got both = {source}")
    arrs = [np.ascontiguousarray(a, dtype=np.int64) for a in (tail, head, capacity, cost)]
    m = arrs[0].shape
    for name, a in zip(("tail", "head", "capacity", "cost"), arrs, strict=True):
        if a.ndim != 1 or a.shape != m:
            raise ValueError(f"{name} must be 1-D with the shape of tail {m}, got {a.shape}")
    for name, a in zip(("tail", "head"), arrs[:2], strict=True):
        if a.size and (a.min() < 0 or a.max() >= n_nodes):
            raise ValueError(f"{name} entries must lie in [0, {n_nodes - 1}]")
    for name, a in zip(("capacity", "cost"), arrs[2:], strict=True):
        if a.size and a.min() < 0:
            raise ValueError(f"{name} must be non-negative, got min {a.min()}")
    flow, total, ef = _mcmf_kernel(n_nodes, *arrs, source, sink)
    return int(flow), int(total), ef
