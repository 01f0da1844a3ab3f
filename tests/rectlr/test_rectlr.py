"""RECTLR (SPEC §4): Plan invariants against SciPy / NetworkX oracles, numba kernels, Controller.

Oracles work on SPEC §4's slot graph (types × slots (w, p < S)) directly: SciPy's
``maximum_bipartite_matching`` gives feasibility and S*, NetworkX ``max_flow_min_cost`` the
least number of moved shards (cost 1 for a type placed at a slot it does not occupy).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_lib.rectlr import (
    Controller,
    Plan,
    failure_sequence_stats,
    phase0_share,
    rectlr,
    rectlr_kernel,
    rectlr_kernel_assign,
    rectlr_kernel_ws,
    rectlr_reference,
    rectlr_workspace,
)
from spare_lib.stacking import consecutive_layout, layout_from_offsets, ruler_layout

CODES = {"fixed": 0, "reordered": 1, "wipeout": 2}


@pytest.fixture(scope="module", autouse=True)
def warm_jit():
    """Compile (or load from cache) every kernel once for this module."""
    lay = ruler_layout(12, 3)
    alive = np.ones(12, bool)
    alive[[0, 5]] = False
    rectlr(lay.stacks, alive, 1)
    s = np.array(lay.stacks)
    rectlr_kernel(s.copy(), alive, 1, np.zeros(12, np.int64))
    rectlr_kernel(s.copy(), alive, 1, np.zeros(12, np.int64), True)
    rectlr_kernel_assign(s.copy(), alive, 1, np.zeros(12, np.int64), np.zeros(12, np.int64))
    ws = rectlr_workspace(s)
    rectlr_kernel_ws(s.copy(), alive, 1, np.zeros(12, np.int64), *ws)
    Controller(lay).fail([0, 5])


# --------------------------------------------------------------------------- oracles

def _slot_graph(stacks, alive, S):
    N, r = stacks.shape
    rows, cols = [], []
    for w in np.flatnonzero(alive):
        for t in stacks[w]:
            for p in range(S):
                rows.append(t)
                cols.append(w * r + p)
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(N, N * r))


def oracle_s_star(stacks, alive, depth) -> int:
    """Least S ≥ depth with a perfect matching types × slots (SciPy), 0 if none up to r."""
    N, r = stacks.shape
    for S in range(depth, r + 1):
        m = maximum_bipartite_matching(_slot_graph(stacks, alive, S), perm_type="column")
        if np.count_nonzero(m >= 0) == N:
            return S
    return 0


def oracle_min_moved(stacks, alive, S) -> int:
    """SPEC §4 Phase 2 network solved by NetworkX: least number of shards moved at depth S."""
    N, r = stacks.shape
    G = nx.DiGraph()
    for t in range(N):
        G.add_edge("s", ("t", t), capacity=1, weight=0)
    for w in np.flatnonzero(alive):
        for p in range(S):
            G.add_edge(("w", int(w), p), "z", capacity=1, weight=0)
            for t in stacks[w]:
                G.add_edge(("t", int(t)), ("w", int(w), p), capacity=1,
                           weight=0 if stacks[w, p] == t else 1)
    flow = nx.max_flow_min_cost(G, "s", "z")
    assert sum(flow["s"].values()) == N
    return int(nx.cost_of_flow(G, flow))


def check_plan(plan: Plan, stacks, alive, depth, *, check_moved_oracle=True) -> None:
    """Every invariant of the issue, against the oracles."""
    stacks = np.asarray(stacks)
    N, r = stacks.shape
    live = {w for w in range(N) if alive[w]}
    wiped = any(not (set(np.flatnonzero(np.any(stacks == t, axis=1))) & live) for t in range(N))
    assert (plan.outcome == "wipeout") == wiped
    if wiped:
        assert plan.depth == 0 and np.all(plan.assignment == -1) and plan.moved == 0
        assert np.array_equal(plan.stacks, stacks) and not plan.patch.any()
        return
    covered = np.unique(stacks[alive, :depth]).size == N
    assert (plan.outcome == "fixed") == covered
    S = plan.depth
    assert S == oracle_s_star(stacks, alive, depth)
    # stacks stay permutations of each group's hosted types; dead groups untouched
    assert np.array_equal(np.sort(plan.stacks, axis=1), np.sort(stacks, axis=1))
    assert np.array_equal(plan.stacks[~alive], stacks[~alive])
    # every type computed exactly once, by a live holder at a position < S*
    a = plan.assignment
    assert a.shape == (N,)
    assert np.all(alive[a])
    assert all(t in plan.stacks[a[t], :S] for t in range(N))
    changed = np.any(plan.stacks[:, :S] != stacks[:, :S], axis=1)
    n_changed = int(np.count_nonzero(plan.stacks[:, :S] != stacks[:, :S]))
    assert plan.moved == n_changed
    if plan.outcome == "fixed":
        assert S == depth and plan.moved == 0 and np.array_equal(plan.stacks, stacks)
        assert not plan.patch.any() and not plan.patch_exact.any()
        return
    if check_moved_oracle:
        assert plan.moved == oracle_min_moved(stacks, alive, S)
    grew = S > depth
    want = np.where(alive, np.where(changed, 1, int(grew)), 0)
    assert np.array_equal(plan.patch, want)
    ex = np.array([sum(1 for p in range(S) if p >= depth or plan.stacks[w, p] != stacks[w, p])
                   if alive[w] else 0 for w in range(N)])
    assert np.array_equal(plan.patch_exact, ex)


def check_kernels(plan: Plan, stacks, alive, depth) -> None:
    """The numba entry points give the Plan's results (same code path, njit-callable)."""
    N = stacks.shape[0]
    s1 = np.array(stacks, dtype=np.int64)
    patch = np.full(N, 7, np.int64)
    code, s_star, moved = rectlr_kernel(s1, alive, depth, patch)
    assert (code, s_star, moved) == (CODES[plan.outcome], plan.depth, plan.moved)
    assert np.array_equal(patch, plan.patch) and np.array_equal(s1, plan.stacks)
    s2 = np.array(stacks, dtype=np.int64)
    assign = np.empty(N, np.int64)
    rectlr_kernel_assign(s2, alive, depth, patch, assign, True)
    assert np.array_equal(patch, plan.patch_exact) and np.array_equal(assign, plan.assignment)
    s3 = np.array(stacks, dtype=np.int64)
    hold_g, tpos, hcnt = rectlr_workspace(s3)
    assert rectlr_kernel_ws(s3, alive, depth, patch, hold_g, tpos, hcnt) == (code, s_star, moved)
    assert np.array_equal(s3, plan.stacks)
    # the workspace stays in sync with the rewritten stacks
    h2, t2, c2 = rectlr_workspace(s3)
    assert np.array_equal(hold_g, h2) and np.array_equal(tpos, t2)


# --------------------------------------------------------------------------- strategies

@st.composite
def scenarios(draw, max_n=60):
    kind = draw(st.sampled_from(["ruler", "consecutive", "random"]))
    r = draw(st.integers(1, 6))
    if kind == "ruler":
        from spare_lib.stacking import GOLOMB_RULERS
        N = draw(st.integers(GOLOMB_RULERS[r][-1] + 1, max_n))
        lay = ruler_layout(N, r, allow_overlap=True)
    elif kind == "consecutive":
        lay = consecutive_layout(draw(st.integers(r, max_n)), r)
    else:
        N = draw(st.integers(r, max_n))
        offs = draw(st.lists(st.integers(0, N - 1), min_size=r, max_size=r, unique=True))
        lay = layout_from_offsets(N, offs)
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    stacks = np.array(lay.stacks)
    if draw(st.booleans()):
        stacks = rng.permuted(stacks, axis=1)
    p_dead = draw(st.sampled_from([0.05, 0.2, 0.4, 0.7]))
    alive = rng.random(lay.N) > p_dead
    alive[rng.integers(lay.N)] = True
    depth = draw(st.integers(1, lay.r))
    return stacks, alive, depth


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_rectlr_against_oracles(sc):
    stacks, alive, depth = sc
    plan = rectlr(stacks, alive, depth)
    check_plan(plan, stacks, alive, depth)
    check_kernels(plan, stacks, alive, depth)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["ruler", "consecutive"]), st.integers(2, 6), st.integers(0, 2**31),
       st.integers(1, 3))
def test_controller_sequences_against_oracles(kind, r, seed, burst):
    N = 40
    lay = ruler_layout(N, r, allow_overlap=True) if kind == "ruler" else consecutive_layout(N, r)
    ctl = Controller(lay)
    rng = np.random.default_rng(seed)
    for _restart in range(2):
        order = list(rng.permutation(N))
        while True:
            stacks, alive, depth = ctl.stacks.copy(), ctl.alive.copy(), ctl.depth
            k = min(len(order), int(rng.integers(1, burst + 1)))
            groups, order = order[:k], order[k:]
            plan = ctl.fail(groups)
            alive[groups] = False
            check_plan(plan, stacks, alive, depth)
            if plan.outcome == "wipeout":
                assert ctl.wiped and ctl.depth == 0
                with pytest.raises(ValueError, match="restart"):
                    ctl.fail(int(np.flatnonzero(ctl.alive)[0]))
                break
            assert ctl.depth == plan.depth and np.array_equal(ctl.stacks, plan.stacks)
            assert np.array_equal(ctl.alive, alive)
            assert np.array_equal(ctl.assignment, plan.assignment)
        ctl.restart()
        assert ctl.depth == 1 and ctl.alive.all() and np.array_equal(ctl.stacks, lay.stacks)


def test_worked_example_n12_r3():
    lay = ruler_layout(12, 3)
    ctl = Controller(lay)
    p1 = ctl.fail(0)  # type 0 sat only at group 0's level 0: S grows to 2 (c(1) = 2)
    assert (p1.outcome, p1.depth, p1.moved) == ("reordered", 2, 0)
    assert p1.patch.tolist() == [0] + [1] * 11
    p2 = ctl.fail(5)
    assert p2.outcome == "fixed" and p2.depth == 2


def test_reorder_moves_a_shard():
    # N=7, consecutive r=3 at S=1: kill groups 1 and 2; type 2 is then held only by group 0
    # (position 2), so at S*=2 group 0 must pull type 2 into its first two positions.
    lay = consecutive_layout(7, 3)
    alive = np.ones(7, bool)
    alive[[1, 2]] = False
    plan = rectlr(lay.stacks, alive, 1)
    check_plan(plan, lay.stacks, alive, 1)
    assert plan.outcome == "reordered" and plan.depth == 2 and plan.moved >= 1
    assert plan.assignment[2] == 0


def test_consecutive_ladder_large():
    # Consecutive layout (a ladder graph), every other group dead, scrambled stacks: the
    # b-matching needs long alternating paths. Polynomial HK finishes quickly; checked by
    # validity and the counting bound (an exponential search would not finish).
    N, r = 30_000, 3
    lay = consecutive_layout(N, r)
    rng = np.random.default_rng(5)
    stacks = rng.permuted(np.array(lay.stacks), axis=1)
    alive = np.zeros(N, bool)
    alive[::2] = True
    plan = rectlr(stacks, alive, 1)
    assert plan.outcome == "reordered" and plan.depth == 2  # N/2 survivors: S* ≥ 2, and 2 works
    assert np.all(alive[plan.assignment])
    pos = np.argmax(plan.stacks[plan.assignment] == np.arange(N)[:, None], axis=1)
    assert np.all(plan.stacks[plan.assignment, pos] == np.arange(N)) and np.all(pos < 2)
    assert np.array_equal(np.bincount(plan.assignment, minlength=N)[~alive], np.zeros(N // 2))


@pytest.mark.parametrize("args, match", [
    ((np.zeros(5, np.int64), np.ones(5, bool), 1), "stacks"),
    ((consecutive_layout(5, 2).stacks, np.ones(4, bool), 1), "alive"),
    ((consecutive_layout(5, 2).stacks, np.zeros(5, bool), 1), "alive"),
    ((consecutive_layout(5, 2).stacks, np.ones(5, int), 1), "alive"),
    ((consecutive_layout(5, 2).stacks, np.ones(5, bool), 0), "depth"),
    ((consecutive_layout(5, 2).stacks, np.ones(5, bool), 3), "depth"),
    ((consecutive_layout(5, 2).stacks, np.ones(5, bool), 1.0), "depth"),
    ((np.array([[0, 0], [1, 1]]), np.ones(2, bool), 1), "permutation"),
    ((np.array([[0, 1], [1, 0], [0, 1]]), np.ones(3, bool), 1), "held by exactly"),
    ((np.array([[0, 5], [1, 0]]), np.ones(2, bool), 1), r"\[0, 1\]"),
])
def test_rectlr_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        rectlr(*args)


def test_controller_bad_input():
    with pytest.raises(ValueError, match="layout"):
        Controller(np.zeros((3, 2)))  # type: ignore[arg-type]
    ctl = Controller(ruler_layout(12, 3))
    with pytest.raises(ValueError, match="at least one"):
        ctl.fail([])
    with pytest.raises(ValueError, match="groups"):
        ctl.fail(12)
    with pytest.raises(ValueError, match="distinct"):
        ctl.fail([3, 3])
    ctl.fail(3)
    with pytest.raises(ValueError, match="already dead"):
        ctl.fail([3])
    with pytest.raises(ValueError):
        ctl._alive  # noqa: B018 - private state exists, public views are read-only
        ctl.stacks[0, 0] = 1


def test_failure_sequence_stats_replays_the_python_path():
    # the numba sequence driver calls the kernels from @njit code; replaying the same failure
    # order through the stateless Python API must give identical events (same code, same ties)
    lay = ruler_layout(40, 4)
    a = failure_sequence_stats(lay, 3, seed=7)
    b = failure_sequence_stats(lay, 3, seed=7, use_workspace=False)
    assert a.equals(b)
    c = failure_sequence_stats(lay, 2, seed=7, burst=3)
    assert (c.groupby("seq").k.diff().dropna() == 3).all()
    rng = np.random.default_rng(np.random.SeedSequence(7))
    order = rng.permutation(40)
    stacks, alive, depth = np.array(lay.stacks), np.ones(40, bool), 1
    for row in a[a.seq == 0].itertuples():
        alive[order[row.k - 1]] = False
        plan = rectlr(stacks, alive, depth)
        assert (plan.outcome, plan.depth, plan.moved, int(plan.patch.sum())) == (
            row.outcome, row.s_star, row.moved, row.patch)
        assert row.s_star == 0 or row.s_star >= row.c_k
        stacks, depth = plan.stacks, plan.depth
    assert row.outcome == "wipeout"
    share = phase0_share(a)
    assert 0 < share < 1
    with pytest.raises(ValueError, match="n_sequences"):
        failure_sequence_stats(lay, 0)
    with pytest.raises(ValueError, match="burst"):
        failure_sequence_stats(lay, 1, burst=41)


def test_reference_agrees_with_rectlr():
    lay = ruler_layout(30, 4)
    rng = np.random.default_rng(3)
    for _ in range(5):
        stacks = rng.permuted(np.array(lay.stacks), axis=1)
        alive = rng.random(30) > 0.3
        depth = int(rng.integers(1, 5))
        ref, ours = rectlr_reference(stacks, alive, depth), rectlr(stacks, alive, depth)
        assert (ref.outcome, ref.depth, ref.moved) == (ours.outcome, ours.depth, ours.moved)
        check_plan(ref, stacks, alive, depth, check_moved_oracle=False)
