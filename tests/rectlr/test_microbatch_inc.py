"""Incremental micro-batch RECTLR and the retry patch (issue 25).

Oracles: the stateless kernel (itself checked against ``scipy.optimize.milp`` in
``test_microbatch.py``) event by event along random failure sequences to wipe-out, in both
modes (deaths found by comparing masks, or reported); the patch's makespan against
``scipy.optimize.milp`` on its own integer program (demands R_t).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import Bounds, LinearConstraint, milp

from spare_lib.rectlr.microbatch import microbatch_assign, microbatch_kernel, microbatch_workspace
from spare_lib.rectlr.microbatch_inc import (
    MicrobatchController,
    microbatch_inc_invalidate,
    microbatch_kernel_inc,
    microbatch_retry_patch,
)
from spare_lib.stacking import consecutive_layout, make_layout, ruler_layout


@pytest.mark.parametrize("kind,N,r,b,logged", [("ruler", 40, 4, 8, True),
                                               ("consecutive", 36, 3, 5, False),
                                               ("ruler", 150, 6, 16, True),
                                               ("consecutive", 120, 5, 3, True)])
def test_incremental_equals_stateless_event_by_event(kind: str, N: int, r: int, b: int,
                                                     logged: bool) -> None:
    lay = make_layout(N, r, kind)
    stacks = np.ascontiguousarray(lay.stacks, dtype=np.int64)
    rng = np.random.default_rng(N * r + b)
    n_events = 0
    for _seq in range(6):
        ctl = MicrobatchController(lay, b, logged=logged)
        assert ctl.makespan == b
        for g in rng.permutation(N):
            plan = ctl.fail([int(g)])
            y = np.zeros_like(stacks)
            out, L, _ = microbatch_kernel(stacks, ctl.alive, b, y, True)
            assert plan.makespan == L
            n_events += 1
            if out == 2:
                assert plan.outcome == "wipeout"
                break
            assert plan.outcome in ("kept", "rerouted")
            x = plan.x
            assert np.all(x.sum(axis=1) == b) and np.all(x[:, ~ctl.alive] == 0)
            assert plan.loads.max() == L and plan.moved >= 0
    assert n_events > 6


def test_kernel_inc_detects_revival_and_invalidate() -> None:
    lay = ruler_layout(60, 4)
    stacks = np.ascontiguousarray(lay.stacks, dtype=np.int64)
    ws = microbatch_workspace(stacks)
    alive = np.ones(60, bool)
    assert microbatch_kernel_inc(stacks, alive, 6, *ws)[2] == -1  # first call: from scratch
    alive[[3, 9, 17]] = False
    out, L, moved = microbatch_kernel_inc(stacks, alive, 6, *ws)
    assert out == 1 and L == microbatch_assign(lay, alive, 6).makespan and moved >= 0
    alive[9] = True  # a revival (compare mode): solved from scratch
    out, L, moved = microbatch_kernel_inc(stacks, alive, 6, *ws)
    assert moved == -1 and L == microbatch_assign(lay, alive, 6).makespan
    microbatch_inc_invalidate(ws[6])
    assert microbatch_kernel_inc(stacks, alive, 6, *ws)[2] == -1


def milp_patch(stacks: np.ndarray, alive: np.ndarray, need: np.ndarray) -> int:
    N, r = stacks.shape
    live = np.flatnonzero(alive)
    n_var = live.size * r + 1
    A = np.zeros((N + live.size, n_var))
    for i, g in enumerate(live):
        for p in range(r):
            A[stacks[g, p], i * r + p] = 1.0
        A[N + i, i * r: (i + 1) * r] = 1.0
        A[N + i, -1] = -1.0
    lo = np.concatenate([need, np.full(live.size, -np.inf)])
    hi = np.concatenate([need, np.zeros(live.size)])
    c = np.zeros(n_var)
    c[-1] = 1.0
    res = milp(c, constraints=LinearConstraint(A, lo, hi), integrality=np.ones(n_var),
               bounds=Bounds(0, np.inf))
    assert res.status == 0
    return int(round(res.fun))


@pytest.mark.parametrize("keep_dead_done", [False, True])
def test_retry_patch_is_least_makespan_and_exact(keep_dead_done: bool) -> None:
    rng = np.random.default_rng(11 + keep_dead_done)
    n_checked = 0
    for i in range(80):
        N = int(rng.integers(8, 36))
        r = int(rng.integers(2, 5))
        lay = consecutive_layout(N, r) if i % 2 else ruler_layout(N, r, allow_overlap=True) \
            if N > {2: 1, 3: 3, 4: 6}[r] else consecutive_layout(N, r)
        stacks = np.asarray(lay.stacks)
        b = int(rng.integers(1, 9))
        before = rng.random(N) >= rng.uniform(0.0, 0.3)
        before[0] = True
        step = microbatch_assign(lay, before, b)
        if step.outcome == "wipeout":
            continue
        after = before & (rng.random(N) >= 0.2)
        after[0] = True
        done = (step.counts * rng.random(stacks.shape) ** 0.5).astype(np.int64)
        patch = microbatch_retry_patch(lay, after, b, step.counts, done,
                                       keep_dead_done=keep_dead_done)
        kept = done * (after | keep_dead_done)[:, None]
        xk = np.zeros((N, N), np.int64)
        np.add.at(xk, (stacks.ravel(), np.repeat(np.arange(N), r)), kept.ravel())
        need = b - xk.sum(axis=1)
        if not after[np.asarray(lay.holders)].any(axis=1).all():
            assert patch.outcome == "wipeout"
            continue
        z = patch.x
        assert np.all(z.sum(axis=1) == need) and np.all(z[:, ~after] == 0)  # exactly once
        assert patch.makespan == (z.sum(axis=0).max() if need.sum() else 0)
        assert patch.makespan == (milp_patch(stacks, after, need) if need.sum() else 0)
        lost = step.counts[~after].sum() - (kept[~after].sum() if keep_dead_done else 0)
        assert patch.moved == lost
        n_checked += 1
    assert n_checked >= 40


def test_controller_patch_uses_the_failed_steps_assignment() -> None:
    lay = ruler_layout(40, 4)
    ctl = MicrobatchController(lay, 8)
    before = ctl.plan.counts.copy()
    ctl.fail([5])
    patch = ctl.patch(before)  # every survivor had finished: only group 5's work is redone
    assert patch.counts.sum() == before[5].sum() == 8
    assert patch.makespan == 3  # 8 micro-batches of one type on its 3 live holders: ⌈8/3⌉
    with pytest.raises(ValueError, match="done must be <= counts"):
        ctl.patch(before + 1)
    with pytest.raises(ValueError, match="already dead"):
        ctl.fail([5])
