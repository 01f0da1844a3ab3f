"""The barrier term of the semi-analytic time-to-train model (:mod:`spare_lib.theory.predict`).

:func:`expected_max_stack_sum`: E[max over n groups of the sum of S jittered stack times],
jitter N(1, σ²) clipped at ``lo`` (exact by numerical integration), and :func:`emax_std_normal`,
E[max of n standard normals], tabulated in log n. Split out of :mod:`.terms` (module size).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.stats import norm

_Z = np.linspace(-9.0, 9.0, 3601)


_LOG_PHI = norm.logcdf(_Z)


def _emax_std_normal_exact(n: float) -> float:
    """E[max of n iid standard normals] = ∫_0^∞ (1 − Φ^n) − ∫_−∞^0 Φ^n (trapezoid, step 0.005)."""
    if n <= 1:
        return 0.0
    cdf_n = np.exp(n * _LOG_PHI)
    dz = _Z[1] - _Z[0]
    pos = _Z >= 0
    neg = _Z <= 0
    return float(np.trapezoid(1.0 - cdf_n[pos], dx=dz) - np.trapezoid(cdf_n[neg], dx=dz))


_EMAX_LOGN = np.linspace(np.log(64.0), np.log(1e8), 300)
_EMAX_TABLE: np.ndarray | None = None
_EMAX_SMALL: np.ndarray | None = None


def emax_std_normal(n: np.ndarray | float) -> np.ndarray:
    """E[max of n iid standard normals], vectorised: exact (integral) for n ≤ 64, linear
    interpolation in log n of the exact values on 300 points above (error < 1e-5). Non-integer
    n below 64 interpolate between the neighbouring integers."""
    global _EMAX_TABLE, _EMAX_SMALL
    if _EMAX_TABLE is None:
        _EMAX_SMALL = np.array([_emax_std_normal_exact(v) for v in range(65)])
        _EMAX_TABLE = np.array([_emax_std_normal_exact(v) for v in np.exp(_EMAX_LOGN)])
    n = np.maximum(np.asarray(n, dtype=float), 1.0)
    small = np.interp(n, np.arange(65), _EMAX_SMALL)
    return np.where(n <= 64, small, np.interp(np.log(n), _EMAX_LOGN, _EMAX_TABLE))


@lru_cache(maxsize=4096)
def _emax_std_normal(n: int) -> float:
    return _emax_std_normal_exact(n)


@lru_cache(maxsize=4096)
def expected_max_stack_sum(S: int, n: int, sigma: float, lo: float = 0.1) -> float:
    """E[max over n groups of J_1 + ... + J_S], J iid N(1, σ²) clipped below at ``lo``.

    The barrier of one compute phase in units of one nominal stack (64 s): every live group
    computes S stacks with its own jitter per stack and the phase lasts as long as the slowest
    group (SPEC §4). Exact up to quadrature: with negligible clipping (P(J < lo) < 1e-15) the sum
    is N(S, Sσ²) and E[max] = S + σ√S·E[max of n standard normals] (integral of 1 − Φ^n);
    otherwise the density of the clipped sum is built by numerical convolution and
    E[max] = ∫ (1 − F^n).

    Examples
    --------
    >>> round(float(expected_max_stack_sum(1, 200, 0.05)), 4)   # +14 % per stack at N=200
    1.1373
    """
    if S < 1 or n < 1:
        raise ValueError(f"S and n must be >= 1, got S={S}, n={n}")
    if sigma == 0.0:
        return float(S)
    p_clip = norm.cdf((lo - 1.0) / sigma)
    if p_clip < 1e-15:
        return S + sigma * np.sqrt(S) * _emax_std_normal(n)
    # clipped case: lattice density of one J, S-fold convolution, then ∫ (1 − F^n)
    h = sigma / 200.0
    hi = 1.0 + 12.0 * sigma
    grid = np.arange(lo, hi + h, h)
    pmf = np.diff(norm.cdf((np.append(grid, grid[-1] + h) - h / 2 - 1.0) / sigma))
    pmf[0] += norm.cdf((lo - h / 2 - 1.0) / sigma)  # the clipped mass (below the first cell)
    tot = pmf.copy()
    for _ in range(S - 1):
        tot = np.convolve(tot, pmf)
    support = S * lo + h * np.arange(tot.size)
    cdf = np.clip(np.cumsum(tot), 0.0, 1.0)
    # E[max] = support[0] + Σ h (1 − F^n) on the lattice
    return float(support[0] + h * np.sum(1.0 - cdf[:-1] ** n))
