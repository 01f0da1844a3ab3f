"""``rectlr_kernel_inc`` (issue 16): the stateless kernel's results, bit for bit, with its state kept.

Oracle: the stateless ``rectlr_kernel`` (itself checked against the SciPy/NetworkX reference in
``test_rectlr.py``), in every mode of the incremental kernel: deaths found by comparing
survivor masks or reported one by one, dense or sparse patch, capped or exact patch.
"""

from __future__ import annotations

import numpy as np
import pytest

from spare_lib.rectlr.kernels import rectlr_kernel
from spare_lib.rectlr.kernels_inc import (
    rectlr_inc_invalidate,
    rectlr_inc_mode,
    rectlr_inc_notice,
    rectlr_inc_patch_plan,
    rectlr_inc_workspace,
    rectlr_kernel_inc,
)
from spare_lib.stacking import make_layout


@pytest.mark.parametrize("N,r,kind,batch", [(60, 3, "ruler", 1), (200, 6, "ruler", 3),
                                            (120, 4, "consecutive", 2)])
def test_inc_kernel_equals_stateless_along_sequences_with_restarts(N: int, r: int, kind: str,
                                                                   batch: int) -> None:
    base = np.array(make_layout(N, r, kind).stacks, dtype=np.int64)
    st, st2 = base.copy(), base.copy()
    alive = np.ones(N, bool)
    p1, p2 = np.zeros(N, np.int64), np.zeros(N, np.int64)
    ws = rectlr_inc_workspace(st2)
    rng = np.random.default_rng(N + r)
    S = S2 = 1
    outcomes = set()
    for _ in range(600):
        live = np.flatnonzero(alive)
        alive[rng.choice(live, size=min(batch, live.size), replace=False)] = False
        a = rectlr_kernel(st, alive, S, p1)
        b = rectlr_kernel_inc(st2, alive, S2, p2, *ws)
        assert a == b
        assert np.array_equal(st, st2) and np.array_equal(p1, p2)
        outcomes.add(int(a[0]))
        S, S2 = a[1], b[1]
        if a[0] == 2:  # global restart: base stacks, everyone revived
            st[:], st2[:], alive[:] = base, base, True
            S = S2 = 1
    assert outcomes == {0, 1, 2}


def _dense_patch(p_sparse: np.ndarray, alive: np.ndarray, st: np.ndarray, iw: np.ndarray,
                 outcome: int) -> np.ndarray:
    """The dense patch the sparse mode stands for (dead 0, rewritten groups their own, others k0)."""
    if outcome != 1:
        return np.zeros_like(p_sparse)
    k0, groups, n = rectlr_inc_patch_plan(st, iw)
    out = np.where(alive, k0, 0)
    out[groups[:n]] = p_sparse[groups[:n]]
    assert np.all(np.diff(groups[:n]) > 0)
    return out


@pytest.mark.parametrize("logged,sparse", [(False, True), (True, False), (True, True)])
@pytest.mark.parametrize("N,r,kind,batch,exact", [(60, 3, "ruler", 1, False),
                                                  (200, 6, "ruler", 3, True),
                                                  (120, 4, "consecutive", 2, False),
                                                  (400, 9, "ruler", 1, True)])
def test_inc_kernel_modes_equal_stateless(N: int, r: int, kind: str, batch: int, exact: bool,
                                          logged: bool, sparse: bool) -> None:
    """Deaths reported one by one (logged) and the patch read sparsely give the stateless
    kernel's outcomes, stacks and patches, along sequences with restarts."""
    base = np.array(make_layout(N, r, kind).stacks, dtype=np.int64)
    st, st2 = base.copy(), base.copy()
    alive = np.ones(N, bool)
    p1, p2 = np.zeros(N, np.int64), np.zeros(N, np.int64)
    ws = rectlr_inc_workspace(st2)
    rectlr_inc_mode(ws[6], logged, sparse)
    rng = np.random.default_rng(N + r + 7)
    S = 1
    outcomes = set()
    for _ in range(800):
        live = np.flatnonzero(alive)
        for g in rng.choice(live, size=min(batch, live.size), replace=False):
            alive[g] = False
            rectlr_inc_notice(g, ws[6], ws[7])
        a = rectlr_kernel(st, alive, S, p1, exact)
        b = rectlr_kernel_inc(st2, alive, S, p2, *ws, exact)
        assert a == b and np.array_equal(st, st2)
        want = p1 if a[0] == 1 else np.zeros(N, np.int64)
        got = _dense_patch(p2, alive, ws[6], ws[7], b[0]) if sparse else p2
        assert np.array_equal(got, want)
        outcomes.add(int(a[0]))
        S = a[1]
        if a[0] == 2:  # global restart: base stacks, everyone revived, the kernel told
            st[:], st2[:], alive[:] = base, base, True
            rectlr_inc_invalidate(ws[6])
            S = 1
    assert outcomes == {0, 1, 2}


def test_logged_mode_equals_compare_mode_when_a_rejoin_rewrites_the_stacks() -> None:
    """spare+repair: a rejoin resets the stacks and reorders them outside the kernel. Both modes
    keep the released behaviour there (the holder index stays stale until the next reorder; see
    ``_inc_phase0``), so they agree with each other call for call."""
    N, r = 200, 6
    base = np.array(make_layout(N, r, "ruler").stacks, dtype=np.int64)
    stacks = [base.copy(), base.copy()]
    wss = [rectlr_inc_workspace(s) for s in stacks]
    rectlr_inc_mode(wss[1][6], True, True)
    alive = np.ones(N, bool)
    patch = [np.zeros(N, np.int64), np.zeros(N, np.int64)]
    rng = np.random.default_rng(3)
    S, dead_since = 1, {}
    for ev in range(3000):
        back = [w for w, e in dead_since.items() if ev - e >= 4]
        if back and rng.random() < 0.3:  # spare_rejoin: reset, then RECTLR on the live groups
            for w in back:
                alive[w] = True
                del dead_since[w]
            stacks[0][:] = base
            o, s, _m = rectlr_kernel(stacks[0], alive, 1, patch[0])
            S = s if o == 1 else 1
            stacks[1][:] = stacks[0]
            for ws in wss:
                rectlr_inc_invalidate(ws[6])
        live = np.flatnonzero(alive)
        for g in rng.choice(live, size=min(2, live.size), replace=False):
            alive[g] = False
            dead_since[int(g)] = ev
            rectlr_inc_notice(g, wss[1][6], wss[1][7])
        a = rectlr_kernel_inc(stacks[0], alive, S, patch[0], *wss[0])
        b = rectlr_kernel_inc(stacks[1], alive, S, patch[1], *wss[1])
        assert a == b and np.array_equal(stacks[0], stacks[1])
        assert np.array_equal(_dense_patch(patch[1], alive, wss[1][6], wss[1][7], b[0]),
                              patch[0] if a[0] == 1 else np.zeros(N, np.int64))
        S = a[1]
        if a[0] == 2:
            stacks[0][:], stacks[1][:], alive[:] = base, base, True
            dead_since.clear()
            for ws in wss:
                rectlr_inc_invalidate(ws[6])
            S = 1


@pytest.mark.parametrize("N,r,seed", [(60, 4, 1), (200, 6, 2), (300, 9, 3)])
def test_inc_kernel_equals_stateless_after_rejoins(N: int, r: int, seed: int) -> None:
    """spare+repair: a rejoin resets the stacks to the base layout and reorders them with the
    stateless kernel on the live groups (``methods.spare.spare_rejoin``), outside the
    incremental kernel. After ``rectlr_inc_invalidate`` the incremental kernel must still give
    the stateless kernel's outcomes and stacks on every later death (it once re-covered those
    deaths with the holder index of the stacks before the rejoin)."""
    base = np.array(make_layout(N, r, "ruler").stacks, dtype=np.int64)
    st, st2 = base.copy(), base.copy()
    alive = np.ones(N, bool)
    p1, p2 = np.zeros(N, np.int64), np.zeros(N, np.int64)
    ws = rectlr_inc_workspace(st2)
    rng = np.random.default_rng(seed)
    S = 1
    dead_since: dict[int, int] = {}
    rejoins = 0
    for ev in range(1500):
        back = [w for w, e in dead_since.items() if ev - e >= 5]
        if back and rng.random() < 0.3:  # repaired groups rejoin
            for w in back:
                alive[w] = True
                del dead_since[w]
            st[:] = base
            o, s, _ = rectlr_kernel(st, alive, 1, p1)
            S = s if o == 1 else 1
            st2[:] = st
            rectlr_inc_invalidate(ws[6])
            rejoins += 1
        g = int(rng.choice(np.flatnonzero(alive)))
        alive[g] = False
        dead_since[g] = ev
        a = rectlr_kernel(st, alive, S, p1)
        b = rectlr_kernel_inc(st2, alive, S, p2, *ws)
        assert a == b, f"event {ev}"
        assert np.array_equal(st, st2) and np.array_equal(p1, p2)
        S = a[1]
        if a[0] == 2:
            st[:], st2[:], alive[:] = base, base, True
            dead_since.clear()
            S = 1
    assert rejoins > 50
