"""Hopcroft–Karp b-matching, Phase 1 depth search and the min-cost-flow kernels.

Oracles: SciPy ``maximum_bipartite_matching`` (sizes, on capacity-expanded graphs) and NetworkX
min-cost flow. Adversarial graphs check that the matching stays polynomial where a DFS without
dead-end marks takes exponential time.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_lib.rectlr.matching import hopcroft_karp, least_feasible_depth
from spare_lib.rectlr.mcmf import min_cost_flow
from spare_lib.stacking import consecutive_layout, ruler_layout


@pytest.fixture(scope="module", autouse=True)
def warm_jit():
    """Compile (or load from cache) the kernels once for this module."""
    hopcroft_karp(np.array([0, 1]), np.array([0]), np.array([1]))
    min_cost_flow(3, np.array([0, 1]), np.array([1, 2]), np.array([1, 1]), np.array([0, 0]), 0, 2)
    least_feasible_depth(ruler_layout(12, 3).stacks, np.ones(12, bool), 1)


def scipy_size(indptr, indices, cap) -> int:
    """Maximum b-matching size via SciPy on the graph with right vertex v split cap[v] times."""
    n = len(indptr) - 1
    start = np.concatenate([[0], np.cumsum(cap)])
    rows, cols = [], []
    for i in range(n):
        for v in set(indices[indptr[i]:indptr[i + 1]].tolist()):
            for c in range(cap[v]):
                rows.append(i)
                cols.append(start[v] + c)
    if start[-1] == 0 or not rows:
        return 0
    g = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, int(start[-1])))
    return int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))


def check_valid(match, indptr, indices, cap):
    for i, v in enumerate(match):
        if v >= 0:
            assert v in indices[indptr[i]:indptr[i + 1]]
    used = match[match >= 0]
    assert np.all(np.bincount(used, minlength=len(cap)) <= cap)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 25), st.integers(1, 25), st.integers(0, 4), st.data())
def test_hk_matches_scipy_size(n_left, n_right, max_cap, data):
    deg = data.draw(st.lists(st.integers(0, 4), min_size=n_left, max_size=n_left))
    indices = np.array(data.draw(st.lists(st.integers(0, n_right - 1), min_size=sum(deg),
                                          max_size=sum(deg))), dtype=np.int64)
    indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    cap = np.array(data.draw(st.lists(st.integers(0, max_cap), min_size=n_right,
                                      max_size=n_right)), dtype=np.int64)
    m = hopcroft_karp(indptr, indices, cap)
    check_valid(m, indptr, indices, cap)
    assert np.count_nonzero(m >= 0) == scipy_size(indptr, indices, cap)
    # warm start from a truncated greedy matching gives the same size
    half = m.copy()
    half[: n_left // 2] = -1
    m2 = hopcroft_karp(indptr, indices, cap, match=half)
    check_valid(m2, indptr, indices, cap)
    assert np.count_nonzero(m2 >= 0) == np.count_nonzero(m >= 0)


def _adversarial_layered(width: int, layers: int):
    """Complete bipartite layers that all dead-end one step before the augmenting layer.

    A chain of length ``layers`` puts the only free right vertex at BFS layer ``layers``; the
    gadget's free left vertices reach that layer through width**layers alternating paths that
    all end at full right vertices matched to dead-end dummies. A layered DFS without dead-end
    marks enumerates them all.
    """
    adj: list[list[int]] = []
    match: list[int] = []
    # gadget right vertices G[i][b] = i*width + b; left T[i][a]
    G = lambda i, b: i * width + b  # noqa: E731
    n_gr = layers * width
    H = lambda i: n_gr + i  # noqa: E731  chain right vertices H_0..H_layers
    n_right = n_gr + layers + 1
    for i in range(layers):
        for a in range(width):
            nb = [G(i, b) for b in range(width)]
            mt = -1
            if i > 0:
                nb.append(G(i - 1, a))
                mt = G(i - 1, a)
            adj.append(nb)
            match.append(mt)
    for b in range(width):  # dummies holding the last gadget layer
        adj.append([G(layers - 1, b)])
        match.append(G(layers - 1, b))
    for i in range(layers + 1):  # chain C_i -> H_i, matched C_{i+1} -> H_i
        nb = [H(i)] + ([H(i - 1)] if i > 0 else [])
        adj.append(nb)
        match.append(H(i - 1) if i > 0 else -1)
    indptr = np.concatenate([[0], np.cumsum([len(a) for a in adj])]).astype(np.int64)
    indices = np.array([v for a in adj for v in a], dtype=np.int64)
    return indptr, indices, np.ones(n_right, np.int64), np.array(match, np.int64)


def test_hk_polynomial_on_adversarial_layers():
    # width 4, 40 layers: 4**40 ≈ 1e24 dead-end paths for a DFS without dead-end marks; with
    # them HK does O(E) work per phase and the test finishes in milliseconds.
    indptr, indices, cap, match = _adversarial_layered(4, 40)
    m = hopcroft_karp(indptr, indices, cap, match=match)
    check_valid(m, indptr, indices, cap)
    assert np.count_nonzero(m < 0) == 4  # only the gadget's roots stay free
    small = _adversarial_layered(3, 5)
    assert np.count_nonzero(hopcroft_karp(*small) >= 0) == scipy_size(*small[:3])


def test_hk_long_ladder():
    # ladder: left i ~ right i, i+1; warm start i -> i+1; left n-1 (adjacent to right n-1 only)
    # is free and right 0 is free: the only augmenting path runs the whole ladder (length n).
    n = 200_000
    adj_len = np.full(n, 2, np.int64)
    adj_len[-1] = 1
    indptr = np.concatenate([[0], np.cumsum(adj_len)]).astype(np.int64)
    indices = np.stack([np.arange(n), np.arange(1, n + 1)], axis=1).ravel()[:-1]
    match = np.arange(1, n + 1, dtype=np.int64)
    match[-1] = -1
    cap = np.ones(n, np.int64)
    m = hopcroft_karp(indptr, indices, cap, match=match)
    check_valid(m, indptr, indices, cap)
    assert np.array_equal(m, np.arange(n))


@pytest.mark.parametrize("bad", [
    dict(indptr=np.array([1, 2]), indices=np.array([0]), capacity=np.array([1])),
    dict(indptr=np.array([0, 1]), indices=np.array([3]), capacity=np.array([1])),
    dict(indptr=np.array([0, 1]), indices=np.array([0]), capacity=np.array([-1])),
    dict(indptr=np.array([0, 1]), indices=np.array([0]), capacity=np.array([1]),
         match=np.array([0, 0])),
    dict(indptr=np.array([0, 0]), indices=np.array([], np.int64), capacity=np.array([1]),
         match=np.array([0])),
])
def test_hk_bad_input(bad):
    with pytest.raises(ValueError):
        hopcroft_karp(**bad)


def slot_s_star(stacks, alive, depth) -> int:
    """Oracle: least S ≥ depth with a perfect SciPy matching of types × slots (w, p < S)."""
    N, r = stacks.shape
    for S in range(depth, r + 1):
        rows, cols = [], []
        for w in np.flatnonzero(alive):
            for p in range(S):
                for t in stacks[w]:
                    rows.append(t)
                    cols.append(w * r + p)
        g = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(N, N * r))
        if np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0) == N:
            return S
    return 0


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["ruler", "consecutive"]), st.integers(2, 5), st.integers(0, 40),
       st.data())
def test_least_feasible_depth_matches_scipy(kind, r, extra, data):
    N = 2 * r + extra + (12 if kind == "ruler" else 0)
    lay = ruler_layout(N, r, allow_overlap=True) if kind == "ruler" else consecutive_layout(N, r)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    stacks = rng.permuted(np.array(lay.stacks), axis=1)
    alive = rng.random(N) > data.draw(st.floats(0.0, 0.7))
    alive[rng.integers(N)] = True
    depth = data.draw(st.integers(1, r))
    assert least_feasible_depth(stacks, alive, depth) == slot_s_star(stacks, alive, depth)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.data())
def test_min_cost_flow_matches_networkx(n, data):
    m = data.draw(st.integers(1, 3 * n))
    tail = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)))
    head = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)))
    cap = np.array(data.draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)))
    cost = np.array(data.draw(st.lists(st.integers(0, 5), min_size=m, max_size=m)))
    flow, total, ef = min_cost_flow(n, tail, head, cap, cost, 0, n - 1)
    assert np.all((0 <= ef) & (ef <= cap))
    bal = np.zeros(n, np.int64)
    np.add.at(bal, tail, ef)
    np.add.at(bal, head, -ef)
    assert bal[0] == flow and bal[n - 1] == -flow and not np.any(bal[1:-1])
    assert total == int(np.sum(ef * cost))
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(n))
    for e in range(m):
        if tail[e] != head[e]:  # self-loops carry no s-t flow; networkx rejects none
            G.add_edge(int(tail[e]), int(head[e]), key=e, capacity=int(cap[e]),
                       weight=int(cost[e]))
    # networkx max_flow_min_cost does not take multigraphs: split parallel edges via midpoints
    H = nx.DiGraph()
    for u, v, k, d in G.edges(keys=True, data=True):
        mid = ("e", k)
        H.add_edge(u, mid, capacity=d["capacity"], weight=d["weight"])
        H.add_edge(mid, v, capacity=d["capacity"], weight=0)
    H.add_nodes_from([0, n - 1])
    fd = nx.max_flow_min_cost(H, 0, n - 1)
    assert flow == sum(fd[0].values()) - sum(fd[u].get(0, 0) for u in H.predecessors(0))
    assert total == nx.cost_of_flow(H, fd)


def test_min_cost_flow_bad_input():
    with pytest.raises(ValueError, match="sink"):
        min_cost_flow(3, np.array([0]), np.array([1]), np.array([1]), np.array([0]), 1, 1)
    with pytest.raises(ValueError, match="cost"):
        min_cost_flow(3, np.array([0]), np.array([1]), np.array([1]), np.array([-1]), 0, 1)
    with pytest.raises(ValueError, match="head"):
        min_cost_flow(3, np.array([0]), np.array([5]), np.array([1]), np.array([0]), 0, 1)
