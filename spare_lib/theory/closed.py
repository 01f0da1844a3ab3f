"""The paper's closed forms for μ and c(k) (SPEC §7), and their replication counterparts (SPEC §5).

Symbols follow the paper: N data-parallel groups, r redundancy, k failures so far, μ(N, r) the
mean number of failures until wipe-out, c(k) the lower bound on the stack depth S* after k
failures. Replication: N groups in ⌊N/r⌋ disjoint sets of r (Ferreira et al. 2011; Casanova et
al. 2012).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
from scipy.special import betaln, gamma, gammaln

from spare_lib._util.validate import check_int


def _as_int_array(name: str, x: object, lo: int) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
        raise ValueError(f"{name} must be integer-valued, got {x!r}")
    arr = arr.astype(np.int64)
    if np.any(arr < lo):
        raise ValueError(f"{name} must be >= {lo}, got {x!r}")
    return arr


def _pos(name: str, v: object, allow_zero: bool = False) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    bad = ~np.isfinite(a) | (a < 0) | ((a == 0) & (not allow_zero))
    if np.any(bad):
        rng = "[0, inf)" if allow_zero else "(0, inf)"
        raise ValueError(f"{name} must be finite and in {rng}, got {v!r}")
    return a


def _ret(a: np.ndarray) -> float | np.ndarray:
    return float(a) if np.ndim(a) == 0 else a


def mu_closed(N: int | np.ndarray, r: int | np.ndarray) -> float | np.ndarray:
    """The paper's closed form of the mean failures to wipe-out.

    μ(N, r) ≈ Γ(1/r)/r · N^(1−1/r) = Γ(1+1/r) · N^(1−1/r)   (SPEC §7).

    Derivation sketch: after k failures a given type is wiped with probability ≈ (k/N)^r; under
    independence P(no wipe-out after k) ≈ exp(−k^r / N^(r−1)); summing over k and replacing the
    sum by an integral gives the Γ form. Asymptotic in N; see ``mu_finite`` for finite N.

    Parameters
    ----------
    N : int or array
        Number of groups, N ≥ 1.
    r : int or array
        Redundancy, 1 ≤ r ≤ N.

    Examples
    --------
    >>> round(float(mu_closed(600, 20)), 1)
    424.2
    """
    N_a = _as_int_array("N", N, 1)
    r_a = _as_int_array("r", r, 1)
    if np.any(r_a > N_a):
        raise ValueError(f"r must be in [1, N], got r={r!r}, N={N!r}")
    out = gamma(1.0 + 1.0 / r_a) * N_a.astype(float) ** (1.0 - 1.0 / r_a)
    return float(out) if np.ndim(out) == 0 else out


def c_lower(N: int | np.ndarray, k: int | np.ndarray) -> int | np.ndarray:
    """Lower bound on the stack depth after k failures: c(k) = ceil(N / (N − k)).

    N types must be computed by N − k survivors, so some survivor computes at least
    ceil(N/(N−k)) of them (SPEC §7); in practice S* = c(k) almost always.

    Parameters
    ----------
    N : int or array
        Number of groups, N ≥ 1.
    k : int or array
        Failed groups so far, 0 ≤ k ≤ N − 1.

    Examples
    --------
    >>> c_lower(600, 0), c_lower(600, 300), c_lower(600, 301)
    (1, 2, 3)
    """
    N_a = _as_int_array("N", N, 1)
    k_a = _as_int_array("k", k, 0)
    if np.any(k_a >= N_a):
        raise ValueError(f"k must be in [0, N-1], got k={k!r}, N={N!r}")
    out = -(-N_a // (N_a - k_a))
    return int(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------------------------------------
# Replication counterparts: N groups in disjoint sets of r (SPEC §5, §7)
# ---------------------------------------------------------------------------------------------

def replication_mu(N: int | np.ndarray, r: int | np.ndarray) -> float | np.ndarray:
    """Mean failures to interruption for ⌊N/r⌋ disjoint replica sets of r (+ one set of N mod r).

    Exact: sets fail independently under Poissonised deaths, so P_x = (1 − x^r)^b (1 − x^s)
    with b = ⌊N/r⌋, s = N mod r (no last factor when s = 0), and μ = (N+1)∫_0^1 P_x dx gives,
    with B the Beta function,

        μ_rep = (N + 1)/r · [B(1/r, b + 1) − B((s + 1)/r, b + 1)·1{s > 0}]
              = (N + 1) Γ(1 + 1/r) Γ(b + 1)/Γ(b + 1 + 1/r)        (r | N).

    For pairs (r = 2, N = 2b) this is 4^b / C(2b, b) (Casanova et al. 2012).

    Examples
    --------
    >>> round(float(replication_mu(4, 2)), 6), round(16 / 6, 6)
    (2.666667, 2.666667)
    """
    N_a, r_a = np.broadcast_arrays(_as_int_array("N", N, 1), _as_int_array("r", r, 1))
    if np.any(r_a > N_a):
        raise ValueError(f"r must be in [1, N], got r={r!r}, N={N!r}")
    b = N_a // r_a
    s = N_a % r_a
    rf = r_a.astype(float)
    full = np.exp(gammaln(1.0 / rf) + gammaln(b + 1.0) - gammaln(b + 1.0 + 1.0 / rf)) / rf
    part = np.where(s > 0, np.exp(betaln((s + 1.0) / rf, b + 1.0)) / rf, 0.0)
    out = (N_a + 1.0) * (full - part)
    return _ret(out)


def replication_pairs_mu_exact(b: int) -> Fraction:
    """4^b / C(2b, b) as an exact fraction: mean failures to interruption of b replica pairs."""
    b = check_int("b", b, lo=1)
    return Fraction(4**b, comb(2 * b, b))


def replication_survival_exact(N: int, r: int) -> np.ndarray:
    """Exact P(no replica set fully dead | k dead), k = 0..N, by counting (integer arithmetic).

    The k-subsets hitting no set fully are the coefficient of x^k in
    ((1 + x)^r − x^r)^b ((1 + x)^s − x^s) (b = ⌊N/r⌋ sets of r, one set of s = N mod r).
    Slow for large N; the test oracle of :func:`replication_mu`.
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    b, s = divmod(N, r)
    poly = [1]
    factors = [r] * b + ([s] if s else [])
    for size in factors:
        f = [comb(size, i) for i in range(size)]  # (1+x)^size − x^size
        new = [0] * (len(poly) + len(f) - 1)
        for i, a in enumerate(poly):
            if a:
                for j, c in enumerate(f):
                    new[i + j] += a * c
        poly = new
    out = np.zeros(N + 1)
    for k, cnt in enumerate(poly):
        out[k] = float(Fraction(cnt, comb(N, k)))
    return out

