"""Tests of spare_lib.theory: closed forms, finite-N μ, Eq. 5, availability, r*, replication."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from spare_lib import theory as th
from spare_lib.stacking import (
    consecutive_layout,
    failures_to_wipeout,
    layout_from_offsets,
    max_ruler_r,
    ruler_layout,
)


# ------------------------------------------------------------------ exact oracles (brute force)
def _survival_brute(N: int, holders: np.ndarray) -> list[Fraction]:
    """P0(k) by enumerating every k-subset of dead groups (tiny N only)."""
    out = []
    for kk in range(N + 1):
        ok = 0
        for dead in combinations(range(N), kk):
            d = np.zeros(N, bool)
            d[list(dead)] = True
            ok += not d[holders].all(axis=1).any()
        out.append(Fraction(ok, comb(N, kk)))
    return out


@pytest.mark.parametrize("N,r", [(7, 1), (7, 2), (8, 3), (9, 4), (10, 3), (6, 6)])
def test_consecutive_survival_is_exact(N, r):
    brute = _survival_brute(N, consecutive_layout(N, r).holders)
    got = th.survival_finite(N, r, layout="consecutive")
    np.testing.assert_allclose(got, [float(f) for f in brute], rtol=1e-12, atol=1e-15)
    assert th.mu_finite(N, r, layout="consecutive") == pytest.approx(float(sum(brute)), rel=1e-12)


def test_poissonisation_identity_exact_on_small_layout():
    # μ = Σ_k P0(k) = (N+1) ∫ P_x dx, with P_x computed exactly from the brute-force P0.
    N, r = 9, 3
    p0 = [float(f) for f in _survival_brute(N, ruler_layout(N, r, allow_overlap=True).holders)]

    def px(x):
        return sum(comb(N, kk) * x**kk * (1 - x) ** (N - kk) * p0[kk] for kk in range(N + 1))

    val, _ = quad(px, 0, 1, epsabs=1e-13)
    assert (N + 1) * val == pytest.approx(sum(p0), rel=1e-10)


def test_bethe_reduces_to_independence_at_small_x():
    # log P_x / N = −x^r + r(r−1)/2 · x^(2r−1) + O(x^(2r)) (pair term), r = 4: 6x^7.
    x = np.array([0.003, 0.01])
    got = th.bethe_log_survival(x, 4)
    np.testing.assert_allclose(got + x**4, 6 * x**7, rtol=0.02)
    assert th.bethe_log_survival(0.3, 1) == pytest.approx(np.log(0.7))


@given(r=st.integers(2, 12), x=st.floats(0.0, 0.999))
@settings(max_examples=60, deadline=None)
def test_bethe_is_a_log_probability_and_monotone(r, x):
    a, b = th.bethe_log_survival(np.array([x, min(1.0, x + 1e-3)]), r)
    assert a <= 1e-15 and b <= a + 1e-12


# --------------------------------------------------------------- μ against Monte Carlo
@pytest.fixture(scope="module")
def warm(warm_wipeout):
    return warm_wipeout


# Points NOT on the paper's grids (N = 200, 600, 1000). 30 000 trials: s.e. ≤ 0.3 % of μ.
MU_POINTS = [(150, 2), (150, 3), (300, 5), (450, 8), (800, 12), (1500, 4), (400, 2)]


@pytest.mark.parametrize("N,r", MU_POINTS)
def test_mu_finite_matches_monte_carlo(warm, N, r):
    K = failures_to_wipeout(ruler_layout(N, r), 30_000, seed=1000 * N + r)
    mean, se = K.mean(), K.std(ddof=1) / np.sqrt(K.size)
    # mu_finite is an approximation (exact at r = 2): accept 4 s.e. plus a 0.3 % model margin.
    assert abs(th.mu_finite(N, r) - mean) < 4 * se + 0.003 * mean


@pytest.mark.parametrize("N,r", [(150, 3), (300, 6), (500, 12)])
def test_mu_finite_consecutive_matches_monte_carlo(warm, N, r):
    K = failures_to_wipeout(consecutive_layout(N, r), 30_000, seed=7 * N + r)
    se = K.std(ddof=1) / np.sqrt(K.size)
    # exact formula: within 4 standard errors (false-alarm rate 6e-5 per point).
    assert abs(th.mu_finite(N, r, layout="consecutive") - K.mean()) < 4 * se


def test_mu_closed_is_low_at_small_n_and_r2(warm):
    # The Γ form drifts low at finite N: at N = 150, r = 2 it misses by more than 3 %,
    # beyond 10 s.e. of this Monte Carlo (30 000 trials, s.e. 0.3 %).
    K = failures_to_wipeout(ruler_layout(150, 2), 30_000, seed=3)
    assert th.mu_closed(150, 2) < K.mean() * 0.97


def test_survival_finite_sums_to_mu_finite():
    for N, r in ((300, 5), (700, 9)):
        s = th.survival_finite(N, r)
        assert s[0] == 1.0 and s[-1] == 0.0 and np.all(np.diff(s) <= 0)
        assert s.sum() == pytest.approx(th.mu_finite(N, r), rel=2e-3)


def test_mu_finite_vectorised_and_validated():
    v = th.mu_finite(np.array([200, 600]), 5)
    assert v.shape == (2,) and v[0] == pytest.approx(th.mu_finite(200, 5))
    lay = layout_from_offsets(600, [0, 1, 4, 9, 11])
    assert th.mu_finite(600, 5, layout=lay) == pytest.approx(th.mu_finite(600, 5))
    with pytest.raises(ValueError, match="independence"):
        th.mu_finite(100, 12)
    with pytest.raises(ValueError, match="layout"):
        th.mu_finite(100, 3, layout="spiral")
    with pytest.raises(ValueError, match="r must"):
        th.mu_finite(5, 6, layout="consecutive")


# --------------------------------------------------------------- Eq. 5 and overhead
def test_overhead_mean_eq5_by_hand():
    # N = 10, μ = 7.9 -> ⌊μ⌋ = 7 terms: c(0..6) = 1,2,2,2,2,2,3 -> 14/7.
    assert th.overhead_mean(10, 3, mu=7.9) == pytest.approx(14 / 7)
    assert th.overhead_mean(600, 20) == pytest.approx(
        np.mean([th.c_lower(600, kk) for kk in range(int(th.mu_closed(600, 20)))]))
    with pytest.raises(ValueError, match="mu"):
        th.overhead_mean(10, 3, mu=0.5)


def test_overhead_finite_consecutive_against_brute():
    N, r = 9, 3
    p0 = [float(f) for f in _survival_brute(N, consecutive_layout(N, r).holders)]
    c = [th.c_lower(N, kk) for kk in range(N)]
    want = sum(p * ci for p, ci in zip(p0[:N], c, strict=True)) / sum(p0[:N])
    assert th.overhead_finite(N, r, layout="consecutive") == pytest.approx(want, rel=1e-12)


# --------------------------------------------------------------- availability, r*
def test_checkpoint_period_is_the_argmax():
    Ts, Tf, Tr = 58.8, 30_000.0, 3600.0
    Tc = th.checkpoint_period_opt(Ts, Tf, Tr)
    grid = np.linspace(0.5 * Tc, 1.5 * Tc, 2001)
    A = th.availability(grid, Ts, Tf, Tr)
    assert abs(grid[np.argmax(A)] - Tc) <= grid[1] - grid[0]
    assert th.availability_opt(Ts, Tf, Tr) == pytest.approx(A.max(), rel=1e-9)


@given(Ts=st.floats(1, 1e3), Tf=st.floats(10, 1e6), Tr=st.floats(0, 1e4))
@settings(max_examples=50, deadline=None)
def test_availability_opt_is_a_probability_and_beats_neighbours(Ts, Tf, Tr):
    Tc = th.checkpoint_period_opt(Ts, Tf, Tr)
    a = th.availability_opt(Ts, Tf, Tr)
    assert 0 < a < 1
    for f in (0.9, 1.1):
        assert th.availability(f * Tc, Ts, Tf, Tr) <= a + 1e-12


def test_availability_validation():
    with pytest.raises(ValueError, match="T_c"):
        th.availability(0.0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="T_s"):
        th.checkpoint_period_opt(-1.0, 1.0, 1.0)


def test_r_star_closed_paper_values():
    assert [th.r_star_closed(n) for n in (200, 600, 1000)] == [8, 10, 10]
    assert th.r_star_closed(np.array([2, 1024])).tolist() == [1, 10]


def test_r_star_numeric_minimises_ttt():
    for N in (200, 600, 1000):
        rs = th.r_star_numeric(N)
        J = th.ttt_normalized(N, np.arange(1, max_ruler_r(N) + 1))
        assert J[rs - 1] == J.min() and 2 <= rs <= max_ruler_r(N)
    with pytest.raises(ValueError, match="mu_model"):
        th.ttt_normalized(600, 5, mu_model="exact")


def test_ttt_normalized_formula():
    N, r = 600, 8
    mu = th.mu_closed(N, r)
    want = th.overhead_mean(N, r) / th.availability_opt(th.T_S_PAPER, mu * 300.0, 3600.0)
    assert th.ttt_normalized(N, r) == pytest.approx(want)


# --------------------------------------------------------------- replication
@pytest.mark.parametrize("b", [1, 2, 3, 10, 60])
def test_replication_pairs_formula(b):
    exact = th.replication_pairs_mu_exact(b)
    assert th.replication_mu(2 * b, 2) == pytest.approx(float(exact), rel=1e-11)
    assert th.replication_survival_exact(2 * b, 2).sum() == pytest.approx(float(exact), rel=1e-12)


@pytest.mark.parametrize("N,r", [(12, 3), (13, 3), (14, 4), (9, 9), (7, 1), (30, 7)])
def test_replication_mu_exact_against_counting(N, r):
    assert th.replication_mu(N, r) == pytest.approx(th.replication_survival_exact(N, r).sum(),
                                                    rel=1e-11)


def test_replication_small_brute():
    N, r = 7, 3
    holders = np.array([[t // r * r + j for j in range(r) if t // r * r + j < N]
                        + [t // r * r] * (r - len([j for j in range(r) if t // r * r + j < N]))
                        for t in range(N)])
    brute = _survival_brute(N, holders)
    assert th.replication_mu(N, r) == pytest.approx(float(sum(brute)), rel=1e-12)
