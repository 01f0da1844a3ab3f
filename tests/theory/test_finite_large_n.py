"""The fast path of theory.finite above EXACT_N_MAX agrees with the exact count."""

from __future__ import annotations

import numpy as np
import pytest

from spare_lib.theory import finite


@pytest.mark.parametrize("r", [2, 3, 4])
def test_fast_consecutive_survival_matches_the_exact_count(r):
    N = 2000  # exact (big integers) still quick here
    exact = finite._survival_consecutive_exact(N, r)
    fast = finite._survival_consecutive_fast(N, r)
    tol = 1e-10 if r == 2 else 2e-4  # r = 2: a closed form; r >= 3: saddle point
    assert np.max(np.abs(exact - fast)) < tol
    mu = (N + 1) * finite._integral_01_graded(
        lambda x: np.exp(N * finite._log_lambda_consecutive(np.minimum(x, 1.0), r)))
    assert mu == pytest.approx(exact.sum(), rel=1e-9)  # transfer matrix: exact up to quadrature


def test_paper_n_stays_on_the_exact_path():
    assert finite.EXACT_N_MAX >= 1000
    assert finite._survival_consecutive(1000, 2) is finite._survival_consecutive_exact(1000, 2)


def test_large_n_is_finite_and_ordered():
    N = 100_000
    mus = [finite.mu_finite(N, r) for r in (2, 3, 8)]
    assert all(np.isfinite(mus)) and mus == sorted(mus)
    assert 1.0 < finite.overhead_finite(N, 2) < 2.0
    assert finite.mu_finite(N, 3, "consecutive") > finite.mu_finite(N, 3)  # runs cluster
