"""The killed count chain of the rejoining methods (:mod:`spare_lib.theory.predict.rejoin_chain`)
against the matrix exponential of its generator, its limits and its invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import expm

from spare_lib.theory.predict.rejoin import low_count_survival
from spare_lib.theory.predict.rejoin_chain import killed_count_chain
from spare_lib.theory.predict.terms import _p0_table


def _two_state(lam: float, mu: float, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a(τ) and U(τ) of a group failing at rate λ while up and back at rate μ, up at 0."""
    s = lam + mu
    a = lam / s * (1.0 - np.exp(-s * tau))
    U = lam * tau - lam * (lam / s) * (tau - (1.0 - np.exp(-s * tau)) / s)
    return a, U


def _generator(N: int, p0: np.ndarray, lam: float, mu: float) -> np.ndarray:
    """The killed chain's sub-generator on k = 0..N (the killed mass leaves)."""
    Q = np.zeros((N + 1, N + 1))
    for k in range(N + 1):
        if k < N:
            Q[k, k + 1] = lam * (N - k) * (p0[k + 1] / p0[k] if p0[k] > 0 else 0.0)
            Q[k, k] -= lam * (N - k)
        if k > 0:
            Q[k, k - 1] = k * mu
            Q[k, k] -= k * mu
    return Q


def _ruler_p0(N: int, r: int) -> np.ndarray:
    return low_count_survival(np.array(_p0_table("spare", N, r, "ruler")), N, r)


@pytest.mark.parametrize("N,r,m,R", [(32, 5, 120.0, 1800.0), (32, 4, 300.0, 300.0),
                                     (12, 3, 60.0, 600.0)])
def test_chain_matches_the_matrix_exponential(N, r, m, R):
    """Constant rates (a group fails at 1/(N·m) while up, comes back at 1/R): the survival and
    E[k | survived] at 40 times against expm(Q·τ) of the exact generator, on a grid of 4,000
    cells over 40 mean times away. Tolerance 5e-4 relative on G (where G > 1e-6) and 5e-3 on
    the mean count: the cell rates come from the increments of a and U, which is second order
    in the cell (measured: 1e-4 and 1e-5 at N = 32, r = 5)."""
    lam, mu = 1.0 / (N * m), 1.0 / R
    tau = np.linspace(0.0, 40.0 * R, 4001)
    a, U = _two_state(lam, mu, tau)
    p0 = _ruler_p0(N, r)
    G, means = killed_count_chain(tau, a[None], U[None], N, p0, np.arange(N + 1.0)[None])
    Q = _generator(N, p0, lam, mu)
    start = np.zeros(N + 1)
    start[0] = 1.0
    for j in range(100, tau.size, 100):
        p = start @ expm(Q * tau[j])
        if p.sum() > 1e-6:
            assert G[0, j] == pytest.approx(p.sum(), rel=5e-4)
            assert means[0, 0, j] == pytest.approx(p @ np.arange(N + 1) / p.sum(), rel=5e-3)


def test_without_wipe_outs_the_count_stays_binomial():
    """P0 ≡ 1 below N: nothing is killed but the all-away state (Binomial mass ~1e-42 here), so
    G stays 1 within 1e-12 (the chain's window, 8 s.d. about N·a, reflects the moves out of it
    that do not wipe out) and E[k] = N·a(τ) (independent groups), within 1e-3 of N."""
    N = 40
    tau = np.linspace(0.0, 3e4, 2001)
    a, U = _two_state(1e-4, 1e-3, tau)
    p0 = np.ones(N + 1)
    p0[N] = 0.0
    G, means = killed_count_chain(tau, a[None], U[None], N, p0, np.arange(N + 1.0)[None])
    assert np.all(G > 1 - 1e-12)
    np.testing.assert_allclose(means[0, 0], N * a, atol=1e-3 * N)


@settings(max_examples=25, deadline=None)
@given(N=st.integers(6, 60), lam=st.floats(1e-5, 1e-2), mu=st.floats(1e-4, 1e-1),
       a0=st.floats(0.0, 0.5), cut=st.floats(0.2, 0.9))
def test_survival_falls_and_the_means_stay_in_range(N, lam, mu, a0, cut):
    """Any rates, a start with some groups away and a P0 that falls from 1 to 0: G starts at
    E[P0(k)], never rises, stays in [0, 1], and E[k | survived] stays in [0, N]."""
    tau = np.linspace(0.0, 20.0 / mu, 400)
    a, U = _two_state(lam, mu, tau)
    a = a0 + (1 - a0) * a
    k = np.arange(N + 1)
    p0 = np.clip(1.0 - (k - cut * N) / (0.1 * N + 1.0), 0.0, 1.0)
    p0[N] = 0.0
    G, means = killed_count_chain(tau, a[None], U[None], N, p0, k[None].astype(float))
    assert np.all((G >= 0) & (G <= 1 + 1e-12))
    assert np.all(np.diff(G[0]) <= 1e-12)
    assert np.all((means >= -1e-9) & (means <= N + 1e-9))


def test_bad_shapes_are_refused():
    tau = np.linspace(0.0, 1.0, 5)
    with pytest.raises(ValueError, match="shape"):
        killed_count_chain(tau, np.zeros((1, 5)), np.zeros((1, 4)), 4, np.ones(5),
                           np.zeros((1, 5)))


def test_lumped_chain_restart_ratio_of_the_bare_away_process():
    """The figure the module docstring quotes: N = 32, r = 5 (ruler), a group fails at 1/(64
    min) while up and is away 30 min on average (exponential). The killed chain's mean uptime
    from all up (exact: a linear solve) over the fresh-draw one (hazard E[λ(N − k)q_k | no
    wipe-out] under Binomial(N, a(τ))·P0, integrated to 2e6 s) is 1.115 (tolerance 0.002: the
    quadrature's step of 5 s), and :func:`killed_count_chain` on a 50-s grid gives the same
    uptime within 1e-3."""
    from scipy.stats import binom

    N, r = 32, 5
    lam, mu = 1.0 / (N * 120.0), 1.0 / 1800.0
    p0 = _ruler_p0(N, r)
    Q = _generator(N, p0, lam, mu)
    up = np.linalg.solve(-Q, np.ones(N + 1))[0]
    tau = np.linspace(0.0, 2e6, 400_001)
    a, U = _two_state(lam, mu, tau)
    k = np.arange(N + 1)
    q = 1.0 - np.append(p0[1:], 0.0) / np.maximum(p0, 1e-300)
    w = binom.pmf(k[None, :], N, a[:, None]) * p0[None, :]
    h = (w * (lam * (N - k) * q)[None, :]).sum(1) / w.sum(1)
    H = np.concatenate(([0.0], np.cumsum(0.5 * (h[1:] + h[:-1]) * np.diff(tau))))
    fresh = np.trapezoid(np.exp(-H), tau)
    assert up / fresh == pytest.approx(1.115, abs=0.002)
    t2 = np.linspace(0.0, 2e5, 4001)  # G(2e5 s) < 1e-13
    a2, U2 = _two_state(lam, mu, t2)
    G, _ = killed_count_chain(t2, a2[None], U2[None], N, p0, k[None] * 1.0)
    assert np.trapezoid(G[0], t2) == pytest.approx(up, rel=1e-3)
