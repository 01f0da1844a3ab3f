"""Micro-batch RECTLR (issue 25): least makespan against an integer program, S* and NetworkX.

Oracles: ``scipy.optimize.milp`` on the integer program itself (variables x[g, p] ≥ 0 and L,
Σ_{holders} x = b per type, Σ_p x[g, p] ≤ L per survivor, minimise L); RECTLR's S* kernel for
b = 1; ``networkx.maximum_flow_value`` for the fixed-capacity max-flow kernel.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy.optimize import Bounds, LinearConstraint, milp

from spare_lib.rectlr import rectlr_kernel
from spare_lib.rectlr.microbatch import (
    max_flow_at,
    microbatch_assign,
    microbatch_kernel,
)
from spare_lib.stacking import GOLOMB_RULERS, consecutive_layout, ruler_layout


def milp_makespan(stacks: np.ndarray, alive: np.ndarray, b: int) -> int | None:
    """Integer-program optimum of the makespan (None when infeasible: wipe-out)."""
    N, r = stacks.shape
    live = np.flatnonzero(alive)
    nx_ = live.size * r
    n_var = nx_ + 1
    A = np.zeros((N + live.size, n_var))
    for i, g in enumerate(live):
        for p in range(r):
            A[stacks[g, p], i * r + p] = 1.0
        A[N + i, i * r: (i + 1) * r] = 1.0
        A[N + i, -1] = -1.0
    lo = np.concatenate([np.full(N, b), np.full(live.size, -np.inf)])
    hi = np.concatenate([np.full(N, b), np.zeros(live.size)])
    c = np.zeros(n_var)
    c[-1] = 1.0
    res = milp(c, constraints=LinearConstraint(A, lo, hi), integrality=np.ones(n_var),
               bounds=Bounds(0, np.inf))
    return int(round(res.fun)) if res.status == 0 else None


def _small_layout(rng: np.random.Generator, kind: str):
    r = int(rng.integers(1, 6))
    if kind == "ruler":
        N = int(rng.integers(GOLOMB_RULERS[r][-1] + 1, 41))
        return ruler_layout(N, r, allow_overlap=True)
    N = int(rng.integers(max(r, 2), 41))
    return consecutive_layout(N, r)


def _check_plan(plan, stacks: np.ndarray, alive: np.ndarray, b: int) -> None:
    x = plan.x
    assert np.all(x.sum(axis=1) == b)  # every micro-batch exactly once
    assert np.all(x[:, ~alive] == 0)  # only by live groups
    held = np.zeros_like(x, dtype=bool)
    held[stacks.ravel(), np.repeat(np.arange(stacks.shape[0]), stacks.shape[1])] = True
    assert np.all(x[~held] == 0)  # only by holders
    assert plan.loads.max() == plan.makespan


def test_makespan_equals_milp_on_random_small_cases() -> None:
    rng = np.random.default_rng(2025)
    n_cases = n_wiped = 0
    for i in range(520):
        lay = _small_layout(rng, "ruler" if i % 2 else "consecutive")
        N = lay.N
        alive = rng.random(N) >= rng.uniform(0.0, 0.4)
        if not alive.any():
            alive[rng.integers(N)] = True
        b = int(rng.integers(1, 9))
        ref = milp_makespan(np.asarray(lay.stacks), alive, b)
        warm = microbatch_assign(lay, alive, b)
        cold = microbatch_assign(lay, alive, b, warm=False)
        if ref is None:
            assert warm.outcome == cold.outcome == "wipeout" and warm.makespan == 0
            n_wiped += 1
            continue
        assert warm.makespan == cold.makespan == ref, (lay, np.flatnonzero(~alive), b)
        _check_plan(warm, np.asarray(lay.stacks), alive, b)
        _check_plan(cold, np.asarray(lay.stacks), alive, b)
        n_cases += 1
    assert n_cases >= 300 and n_wiped >= 1
    print(f"milp cases: {n_cases} solved, {n_wiped} wipe-outs")


@pytest.mark.parametrize("kind,N,r", [("ruler", 60, 4), ("consecutive", 50, 3), ("ruler", 200, 8)])
def test_b1_is_rectlr_s_star(kind: str, N: int, r: int) -> None:
    lay = ruler_layout(N, r) if kind == "ruler" else consecutive_layout(N, r)
    rng = np.random.default_rng(N)
    for _ in range(40):
        alive = rng.random(N) >= rng.uniform(0.0, 0.5)
        if not alive.any():
            alive[0] = True
        out, s_star, _ = rectlr_kernel(np.array(lay.stacks), alive, 1, np.zeros(N, np.int64))
        y = np.zeros((N, r), np.int64)
        res = microbatch_kernel(np.array(lay.stacks), alive, 1, y, False)  # cold: no S* inside
        if out == 2:
            assert res[0] == 2
            continue
        assert res[1] == s_star
        for b in (2, 5):  # b·(S* − 1) < L* ≤ b·S*
            L = microbatch_assign(lay, alive, b, warm=False).makespan
            assert b * (s_star - 1) < L <= b * s_star


def _nx_max_flow(stacks: np.ndarray, alive: np.ndarray, b: int, L: int) -> int:
    G = nx.DiGraph()
    N, r = stacks.shape
    for t in range(N):
        G.add_edge("s", ("t", t), capacity=b)
    for g in np.flatnonzero(alive):
        G.add_edge(("g", int(g)), "k", capacity=L)
        for p in range(r):
            G.add_edge(("t", int(stacks[g, p])), ("g", int(g)))  # unbounded
    return int(nx.maximum_flow_value(G, "s", "k"))


def test_max_flow_kernel_equals_networkx() -> None:
    rng = np.random.default_rng(7)
    for i in range(60):
        lay = _small_layout(rng, "ruler" if i % 2 else "consecutive")
        stacks = np.ascontiguousarray(lay.stacks, dtype=np.int64)
        alive = rng.random(lay.N) >= rng.uniform(0.0, 0.6)
        alive[rng.integers(lay.N)] = True
        b = int(rng.integers(1, 9))
        for L in (b, b + 1, 2 * b - 1, 2 * b):
            value, y = max_flow_at(stacks, alive, b, L)
            assert value == _nx_max_flow(stacks, alive, b, L)
            assert y.sum() == value and np.all(y[~alive] == 0) and y.sum(axis=1).max() <= L


@settings(max_examples=60, deadline=None)
@given(N=hst.integers(8, 40), r=hst.integers(2, 5), b=hst.integers(1, 8),
       kind=hst.sampled_from(["ruler", "consecutive"]), seed=hst.integers(0, 2**31 - 1),
       dead_frac=hst.floats(0.0, 0.7))
def test_every_microbatch_computed_once_by_a_live_holder(N: int, r: int, b: int, kind: str,
                                                        seed: int, dead_frac: float) -> None:
    if kind == "ruler" and N <= GOLOMB_RULERS[r][-1]:
        kind = "consecutive"
    lay = ruler_layout(N, r, allow_overlap=True) if kind == "ruler" else consecutive_layout(N, r)
    rng = np.random.default_rng(seed)
    alive = rng.random(N) >= dead_frac
    alive[rng.integers(N)] = True
    plan = microbatch_assign(lay, alive, b)
    if plan.outcome == "wipeout":
        holders_alive = alive[np.asarray(lay.holders)].any(axis=1)
        assert not holders_alive.all()
        return
    _check_plan(plan, np.asarray(lay.stacks), alive, b)
    assert plan.makespan >= -(-N * b // int(alive.sum()))  # the global bound


def test_python_api_validates_inputs() -> None:
    lay = ruler_layout(12, 3)
    alive = np.ones(12, bool)
    with pytest.raises(ValueError, match="b must be"):
        microbatch_assign(lay, alive, 0)
    with pytest.raises(ValueError, match="alive must have shape"):
        microbatch_assign(lay, np.ones(5, bool), 2)
    with pytest.raises(ValueError, match="at least one survivor"):
        microbatch_assign(lay, np.zeros(12, bool), 2)
    with pytest.raises(ValueError, match="stacks"):
        microbatch_assign(np.zeros((3, 4), np.int64), np.ones(3, bool), 2)
