"""Phase 2 on a kept workspace (issue 16): lazy per-group lists, undo log, no O(N) per call.

Plain-Python oracles: the per-group list a search builds from a stack row, the undo log, and
the least total cost of the assignment (NetworkX min-cost flow on the group network of SPEC §4);
the tracking search also equals the stateless ``phase2_assign`` match for match.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from spare_lib.rectlr.kernels import _phase0_cover
from spare_lib.rectlr.matching import (
    build_holders,
    build_match_lists,
    extend_zero_cost,
    least_feasible_depth,
    materialize_list,
    undo_all,
    undo_log,
)
from spare_lib.rectlr.mcmf import (
    C_LSTAMP,
    C_RECV,
    C_USTAMP,
    W_DIST,
    W_DONE,
    W_HEAD,
    W_LOAD,
    W_LSTAMP,
    W_NXT,
    W_PAR,
    W_PARJ,
    W_PI,
    W_PIL,
    W_PRV,
    W_RECV,
    W_RSTAMP,
    W_TOUCHED,
    W_UM,
    W_UP,
    W_USTAMP,
    W_UT,
    phase2_assign,
    phase2_assign_ws,
    phase2_workspace,
)
from spare_lib.stacking import make_layout


def _instance(N: int, r: int, kind: str, seed: int):
    """A layout after random deaths, its holder index and the zero-cost warm start at S*."""
    rng = np.random.default_rng(seed)
    stacks = np.array(make_layout(N, r, kind).stacks, dtype=np.int64)
    while True:
        alive = rng.random(N) > rng.uniform(0.02, 0.3)
        S = least_feasible_depth(stacks, alive, 1)
        if S > 0:
            break
    hold_g = np.empty((N, r), np.int64)
    tpos = np.empty((N, r), np.int64)
    hcnt = np.empty(N, np.int64)
    build_holders(stacks, hold_g, tpos, hcnt)
    match = np.empty(N, np.int64)
    matchpos = np.empty(N, np.int64)
    _phase0_cover(stacks, alive, max(1, S - 1), match, matchpos)
    extend_zero_cost(alive, S, hold_g, tpos, hcnt, match, matchpos)
    return stacks, alive, S, hold_g, tpos, hcnt, match, matchpos


def _networkx_cost(stacks, alive, S) -> int:
    """Least number of types placed at a position ≥ S (group network, capacity S per group)."""
    N, r = stacks.shape
    g = nx.DiGraph()
    g.add_node("s", demand=-N)
    g.add_node("z", demand=N)
    for t in range(N):
        g.add_edge("s", ("t", t), capacity=1, weight=0)
    for w in np.flatnonzero(alive):
        g.add_edge(("g", int(w)), "z", capacity=S, weight=0)
        for p in range(r):
            g.add_edge(("t", int(stacks[w, p])), ("g", int(w)), capacity=1, weight=int(p >= S))
    return nx.min_cost_flow_cost(g)


def _run_ws(stacks, alive, S, hold_g, tpos, hcnt, match, matchpos):
    N, r = stacks.shape
    iw, heap = phase2_workspace(N, r)
    cnt = np.zeros(4, np.int64)
    cnt[C_LSTAMP] = 1
    cnt[C_USTAMP] = 1
    free = np.flatnonzero(match < 0).astype(np.int64)
    lists = (iw[W_HEAD], iw[W_NXT], iw[W_PRV], iw[W_LOAD], iw[W_LSTAMP])
    search = (iw[W_PI], iw[W_DIST], iw[W_PAR], iw[W_PARJ], iw[W_DONE], iw[W_TOUCHED], iw[W_PIL])
    log = (iw[W_USTAMP], iw[W_UT], iw[W_UM], iw[W_UP], iw[W_RECV], iw[W_RSTAMP])
    status = phase2_assign_ws(alive, S, stacks, hold_g, tpos, hcnt, match, matchpos, free,
                              free.size, lists, search, log, heap, cnt)
    return status, iw, cnt


@pytest.mark.parametrize("N,r,kind,seed", [(60, 4, "ruler", 1), (200, 6, "ruler", 2),
                                           (120, 5, "consecutive", 3), (300, 9, "ruler", 4),
                                           (90, 3, "consecutive", 5)])
def test_phase2_ws_is_least_cost_and_equals_the_stateless_search(N: int, r: int, kind: str,
                                                                 seed: int) -> None:
    stacks, alive, S, hold_g, tpos, hcnt, match, matchpos = _instance(N, r, kind, seed)
    m0, p0 = match.copy(), matchpos.copy()
    # stateless: lists for all groups up front
    m1, p1 = match.copy(), matchpos.copy()
    head, nxt, prv, load = (np.empty(N, np.int64) for _ in range(4))
    build_match_lists(m1, N, head, nxt, prv, load)
    cost1 = phase2_assign(alive, S, hold_g, tpos, hcnt, m1, p1, head, nxt, prv, load)
    # kept workspace, lists built lazily from the stack rows, changes logged
    status, iw, cnt = _run_ws(stacks, alive, S, hold_g, tpos, hcnt, match, matchpos)
    assert status == 0 and cost1 >= 0
    assert np.array_equal(match, m1) and np.array_equal(matchpos, p1)
    assert int(np.count_nonzero(matchpos >= S)) == cost1 == _networkx_cost(stacks, alive, S)
    # a valid assignment: live holders, positions as indexed, at most S types per group
    assert all(alive[match[t]] and stacks[match[t], matchpos[t]] == t for t in range(N))
    assert np.bincount(match, minlength=N).max() <= S
    # the workspace is left clean; received groups are the groups that gained a type
    assert (iw[W_PI] == 0).all() and (iw[W_DONE] == 0).all() and (iw[W_DIST] > 1 << 59).all()
    gained = {int(match[t]) for t in range(N) if match[t] != m0[t]}
    assert gained <= set(iw[W_RECV, :cnt[C_RECV]].tolist())
    # the undo log gives back the warm start
    undo_all(match, matchpos, iw[W_UT], iw[W_UM], iw[W_UP], cnt)
    assert np.array_equal(match, m0) and np.array_equal(matchpos, p0)


def test_infeasible_depth_returns_minus_one_and_leaves_a_clean_workspace() -> None:
    stacks, alive, S, hold_g, tpos, hcnt, match, matchpos = _instance(120, 4, "ruler", 9)
    if S == 1:
        pytest.skip("no depth below S* to try")
    S_bad = S - 1
    m, p = match.copy(), matchpos.copy()
    m[p >= S_bad] = -1  # a warm start valid at S - 1
    status, iw, cnt = _run_ws(stacks, alive, S_bad, hold_g, tpos, hcnt, m, p)
    assert status == -1
    assert (iw[W_PI] == 0).all() and (iw[W_DONE] == 0).all() and (iw[W_DIST] > 1 << 59).all()


def test_materialize_list_equals_the_rows_matched_types_in_decreasing_order() -> None:
    rng = np.random.default_rng(0)
    N, r = 50, 5
    stacks = np.array(make_layout(N, r, "ruler").stacks, dtype=np.int64)
    match = np.full(N, -1, np.int64)
    for t in range(N):  # each type matched to one of its holders, or free
        holders = np.flatnonzero((stacks == t).any(axis=1))
        match[t] = rng.choice(holders) if rng.random() < 0.8 else -1
    head, nxt, prv, load, lst = (np.zeros(N, np.int64) for _ in range(5))
    for w in range(N):
        materialize_list(w, stacks, match, head, nxt, prv, load, lst, 1)
        got, y = [], head[w]
        while y >= 0:
            got.append(int(y))
            y = nxt[y]
        want = sorted((int(t) for t in stacks[w] if match[t] == w), reverse=True)
        assert got == want and load[w] == len(want) and lst[w] == 1
    h2, n2, p2, l2 = (np.empty(N, np.int64) for _ in range(4))
    build_match_lists(match, N, h2, n2, p2, l2)
    assert np.array_equal(head, h2) and np.array_equal(load, l2)


def test_undo_log_records_each_type_once_per_stamp() -> None:
    match = np.arange(10, dtype=np.int64)
    pos = np.arange(10, dtype=np.int64) * 2
    ust, ut, um, up = (np.zeros(10, np.int64) for _ in range(4))
    cnt = np.zeros(4, np.int64)
    orig = {t: (int(match[t]), int(pos[t])) for t in range(10)}
    for t in (3, 5, 3, 7, 5):
        undo_log(t, match, pos, ust, ut, um, up, cnt, 4)
        match[t] += 100
        pos[t] -= 1
    assert cnt[0] == 3 and ut[:3].tolist() == [3, 5, 7]
    undo_all(match, pos, ut, um, up, cnt)
    assert {t: (int(match[t]), int(pos[t])) for t in range(10)} == orig and cnt[0] == 0
