"""The block sums of the chain over the checkpoint lattice (:mod:`spare_lib.theory.predict.blocks`).

The numba kernels of the batch path against plain oracles: :func:`law_blocks` against sums over
every checkpoint by their definitions (numpy interpolation, plain loops), and
:func:`chain_blocks` against the dense backward solve of the renewal equation when every
restart has one law (exponential clocks); against :func:`predict`'s chain otherwise in
``tests/theory/test_predict_batch.py``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from predict_config import cfg600k as cfg

from spare_lib.theory.predict import MECHANISMS, predict_batch
from spare_lib.theory.predict import blocks as Bk
from spare_lib.theory.predict import cycle as P
from spare_lib.theory.predict.curves import _cfg_key
from spare_lib.theory.predict.rejoin_model import rejoin_key, rejoin_laws


def _laws(method, N, r, c):
    if method in ("spare", "rep", "ckpt"):
        R, _, _, first, ss, transient, t_eq = P._cycles(method, N, r, "ruler", MECHANISMS,
                                                        _cfg_key(c))
        return [(0.0, 0.0, first)] + transient + [(t_eq, R, ss)]
    return rejoin_laws(method, N, r, _cfg_key(c), rejoin_key(c), int(c.steps))[0]


def blocks_plain(cyc, C, steps, ck, max_states):
    """The oracle of :func:`Bk.law_blocks`: every checkpoint's survival, time and ∫G by numpy
    interpolation, the interval entries as differences, then the block sums by their weights
    in plain loops. Returns (S (3, states), D (8, blocks), J, g, b0)."""
    tau, G, d = cyc.tau, cyc.G, float(cyc.delay)
    rate = 1.0 / (cyc.step + ck)
    V = np.concatenate(([0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1]) * np.diff(tau))))
    cum = np.concatenate(([0.0], np.cumsum(0.5 * np.diff(tau) * (G[1:] + G[:-1]))))

    def at(v):
        t = float(np.interp(v, V, tau))
        i = min(int(np.searchsorted(tau, t, side="right")) - 1, tau.size - 2)
        g = G[i] + (t - tau[i]) * (G[i + 1] - G[i]) / (tau[i + 1] - tau[i])
        return t, g, cum[i] + 0.5 * (t - tau[i]) * (G[i] + g)

    M = (steps - 1) // C if C else 0
    g = -(-M // (max_states - 2)) if M + 1 > max_states else 1
    K, b0 = M // g, M - (M // g) * g
    J = min(M, int(V[-1] // C)) if C else 0
    tc, Gc, Ic = np.zeros(J + 2), np.zeros(J + 2), np.full(J + 2, cum[-1])
    Gc[0], Ic[0] = 1.0, 0.0
    for j in range(1, J + 1):
        tc[j], Gc[j], Ic[j] = at(j * C)
    I0 = Gc[:-1] - Gc[1:]
    I1 = tc[:-1] * Gc[:-1] - tc[1:] * Gc[1:] + Ic[1:] - Ic[:-1] + d * I0
    nJ = J // g + 1
    D = np.zeros((8, nJ))
    for j in range(J + 1):
        a, b = divmod(j, g)
        for lo, hi, e in ((Bk.DLO, Bk.DHI, 0), (Bk.ELO, Bk.EHI, 1)):
            x = (I0, I1)[e][j]
            D[lo, a] += x * (1.0 - b / g)
            D[hi, a] += x * (b / g)
        if b < b0:
            for lo, hi, e in ((Bk.BLO, Bk.BHI, 0), (Bk.BELO, Bk.BEHI, 1)):
                x = (I0, I1)[e][j]
                D[lo, a] += x * (b0 - b) / b0
                D[hi, a] += x * b / b0
    Bs = K + 1 if b0 else K
    S = np.zeros((3, Bs + 1))
    r0 = steps - M * C if C else steps
    for s in range(Bs + 1):
        m = 0 if s == Bs else b0 + (K - s) * g
        v = r0 + m * C
        tm, gt, Im = (tau[-1], 0.0, cum[-1]) if v >= V[-1] else at(v)
        tcm, Gcm, Icm = (tc[m], Gc[m], Ic[m]) if m <= J + 1 else (0.0, 0.0, cum[-1])
        last = Gcm - gt
        S[:, s] = (Im + d * (1.0 - gt), last, tcm * Gcm - tm * gt + Im - Icm + d * last)
    return S, D, J, g, b0


CASES = [("spare", 600, 8, {}), ("rep", 200, 2, {"steps": 3000}),
         ("spare", 1000, 4, {"steps": 2000, "system_mtbf_s": 120.0, "restart_s": 300.0,
                             "weibull_shape": 0.6}),
         ("spare+repair", 200, 4, {"steps": 3000, "rejoin_s": 600.0, "stall_s": 30.0}),
         ("elastic-rebalance", 200, 1, {"steps": 3000, "rejoin_s": 600.0, "microbatches": 8})]


@pytest.mark.parametrize("method,N,r,kw", CASES)
def test_law_blocks_match_plain_sums_over_every_checkpoint(method, N, r, kw):
    """Every cycle kind, C from 1 to the run, the exact lattice and coarse ones (g > 1 with and
    without a remainder b0): the kernel's per-state and per-block arrays equal the plain sums
    (rtol 1e-9; atol 1e-12 of the largest entry: the closed forms sum in another order)."""
    c = cfg(N, **kw)
    steps = int(c.steps)
    for _, _, cyc in _laws(method, N, r, c):
        cum = np.concatenate(([0.0], np.cumsum(0.5 * np.diff(cyc.tau) * (cyc.G[1:] + cyc.G[:-1]))))
        for C in (1, 3, 7, 23, steps):
            ck = c.checkpoint_s / C
            for states in (512, 40, 8):
                S0, D0, J, g, b0 = blocks_plain(cyc, C, steps, ck, states)
                M = (steps - 1) // C
                V = Bk.progress(cyc.tau, cyc.step, ck, np.empty(cyc.tau.size))
                S = np.empty_like(S0)
                D = np.empty_like(D0)
                Bk.law_blocks(cyc.tau, cyc.G, V, cum, float(cyc.delay), C, steps, M, g, b0, J,
                              S, D)
                np.testing.assert_allclose(S, S0, rtol=1e-9, atol=1e-12 * np.abs(S0).max())
                for rows in ((Bk.DLO, Bk.DHI, Bk.BLO, Bk.BHI), (Bk.ELO, Bk.EHI, Bk.BELO, Bk.BEHI)):
                    want = D0[list(rows)]
                    np.testing.assert_allclose(D[list(rows)], want, rtol=1e-9,
                                               atol=1e-12 * max(np.abs(want).max(), 1.0))


def renewal_solve(first, eq, R, C, steps, ck):
    """Expected (time, restarts) of a run whose restarts all have one law: the dense backward
    solve of X_m = x_m + Σ_{j<m} dG_j X_{m−j} + last_m X_0 on every checkpoint (the oracle of
    ``tests/theory/test_predict_run.py``), from plain numpy interpolation."""
    S, D, J, _, _ = blocks_plain(eq, C, steps, ck, 10**9)
    M = S.shape[1] - 1  # coarse state s is fine state M − s on the exact lattice
    a, last = S[Bk.SA][::-1], S[Bk.SLAST][::-1]
    dG = np.zeros(M + 1)
    dG[:D.shape[1]] = D[Bk.DLO][:M + 1]
    x = np.stack((R + a, np.ones(M + 1)))
    X = np.zeros((2, M + 1))
    X[:, 0] = x[:, 0] / (1.0 - last[0])
    for m in range(1, M + 1):
        acc = x[:, m] + last[m] * X[:, 0] + sum(dG[j] * X[:, m - j] for j in range(1, m))
        X[:, m] = acc / (1.0 - dG[0])
    S1, D1, _, _, _ = blocks_plain(first, C, steps, ck, 10**9)
    d1 = np.zeros(M + 1)
    d1[:D1.shape[1]] = D1[Bk.DLO][:M + 1]
    after = sum(d1[j] * X[:, M - j] for j in range(M)) + S1[Bk.SLAST, 0] * X[:, 0]
    return S1[Bk.SA, 0] + after[0], after[1]


@pytest.mark.parametrize("method,N,r,C,kw", [
    ("spare", 200, 6, 12, {"steps": 1500}),
    ("rep", 200, 2, 4, {"steps": 800, "system_mtbf_s": 120.0, "restart_s": 1200.0}),
    ("spare", 600, 8, 500, {"steps": 400}),
])
def test_chain_blocks_solves_the_renewal_equation_for_one_restart_law(method, N, r, C, kw):
    """Exponential clocks (one restart law): the batch chain on the exact lattice equals the
    dense backward renewal solve (1e-9)."""
    c = cfg(N, failure_dist="exponential", weibull_shape=1.0, **kw)
    laws = _laws(method, N, r, c)
    assert len(laws) == 2
    (_, _, first), (_, R, ss) = laws
    want = renewal_solve(first, ss, R, C, c.steps, c.checkpoint_s / C)
    b = predict_batch((method,), N, [r], [C], c, max_states=10**6)[method]
    assert b.total_s[0, 0] == pytest.approx(want[0] + c.checkpoint_s, rel=1e-9)
    assert b.restarts[0, 0] == pytest.approx(want[1], rel=1e-9, abs=1e-12)


@given(x=st.floats(min_value=1e-9, max_value=1e9, allow_nan=False, allow_infinity=False),
       C=st.integers(min_value=1, max_value=10**6))
def test_last_below_is_the_largest_multiple_below(x, C):
    """_last_below (a product and a correction) is the largest q with q·C < x, ⌈x/C⌉ − 1 in
    exact rational arithmetic; also at x on a multiple of C."""
    for y in (x, float(max(1, round(x / C)) * C)):
        q = Bk._last_below(y, C, 1.0 / C)
        assert q == math.ceil(Fraction(y) / C) - 1, (y, C, q)  # exact rational arithmetic


def test_batch_scratch_does_not_leak_between_C():
    """The batch kernel reuses one scratch for every C: the numbers do not depend on the order of
    the C (bit-identical), nor on which other C share the call."""
    c = cfg(300, steps=4000, rejoin_s=600.0, stall_s=30.0, microbatches=8)
    Cs = [1, 7, 40, 333, 3999, None, 2]
    for method in ("spare", "spare+repair"):
        fwd = predict_batch((method,), 300, [4], Cs, c, max_states=16)[method]
        rev = predict_batch((method,), 300, [4], Cs[::-1], c, max_states=16)[method]
        np.testing.assert_array_equal(fwd.ttt_over_t0, rev.ttt_over_t0[:, ::-1])
        np.testing.assert_array_equal(fwd.restarts, rev.restarts[:, ::-1])
        one = predict_batch((method,), 300, [4], [40], c, max_states=16)[method]
        assert one.ttt_over_t0[0, 0] == fwd.ttt_over_t0[0, 2]
