"""``rectlr_kernel_inc`` (issue 16): the stateless kernel's results, bit for bit, with Phase 0 kept."""

from __future__ import annotations

import numpy as np
import pytest

from spare_lib.rectlr.kernels import rectlr_inc_workspace, rectlr_kernel, rectlr_kernel_inc
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
