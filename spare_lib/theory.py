"""Closed forms of the SPARe paper (SPEC §7), numeric and vectorised over arrays.

Symbols follow the paper: N data-parallel groups, r redundancy, k failures so far, μ(N, r) the
mean number of failures until wipe-out, c(k) the lower bound on the stack depth S* after k
failures.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gamma

from ._validate import check_int


def _as_int_array(name: str, x: object, lo: int) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
        raise ValueError(f"{name} must be integer-valued, got {x!r}")
    arr = arr.astype(np.int64)
    if np.any(arr < lo):
        raise ValueError(f"{name} must be >= {lo}, got {x!r}")
    return arr


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


__all__ = ["mu_closed", "c_lower", "check_int"]
