"""Availability, checkpoint period and time-to-train (Eqs. 2 and 7), and the optimal redundancy r*.
"""

from __future__ import annotations

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.stacking.layout import max_ruler_r
from spare_lib.theory.closed import _as_int_array, _pos, _ret, mu_closed
from spare_lib.theory.finite import M_PAPER, T_R_PAPER, T_S_PAPER, mu_finite, overhead_finite, overhead_mean

# ---------------------------------------------------------------------------------------------
# Availability, checkpoint period, time-to-train (Eqs. 2 and 7)
# ---------------------------------------------------------------------------------------------

def availability(T_c: float | np.ndarray, T_s: float | np.ndarray, T_f: float | np.ndarray,
                 T_r: float | np.ndarray) -> float | np.ndarray:
    """Availability at checkpoint period T_c (Eq. 2 model of SPEC §7).

    A(T_c) = (1 − T_s/T_c) · T_f / (T_f + T_r + T_c/2): a fraction T_s/T_c of the up time writes
    checkpoints, and every restart cycle of mean length T_f (time between wipe-outs) costs a
    restart T_r plus, on average, half a checkpoint period of lost work. Seconds throughout.
    """
    Tc = _pos("T_c", T_c)
    Ts = _pos("T_s", T_s, allow_zero=True)
    Tf = _pos("T_f", T_f)
    Tr = _pos("T_r", T_r, allow_zero=True)
    return _ret((1.0 - Ts / Tc) * Tf / (Tf + Tr + Tc / 2.0))


def checkpoint_period_opt(T_s: float | np.ndarray, T_f: float | np.ndarray,
                          T_r: float | np.ndarray) -> float | np.ndarray:
    """Availability-optimal checkpoint period T_c* = T_s + sqrt(T_s² + 2 T_s (T_f + T_r)).

    The positive root of dA/dT_c = 0 for :func:`availability` (derived in
    ``symbolic.derive_checkpoint_period``). For T_s ≪ T_f it tends to Young's
    sqrt(2 T_s (T_f + T_r)).

    Examples
    --------
    >>> round(float(checkpoint_period_opt(60.0, 3600.0, 0.0)), 1)
    720.0
    """
    Ts = _pos("T_s", T_s)
    Tf = _pos("T_f", T_f)
    Tr = _pos("T_r", T_r, allow_zero=True)
    return _ret(Ts + np.sqrt(Ts**2 + 2.0 * Ts * (Tf + Tr)))


def availability_opt(T_s: float | np.ndarray, T_f: float | np.ndarray,
                     T_r: float | np.ndarray) -> float | np.ndarray:
    """A*(T_f) = A(T_c*), the availability at the optimal checkpoint period (Eq. 2)."""
    Tc = checkpoint_period_opt(T_s, T_f, T_r)
    return availability(Tc, T_s, T_f, T_r)


_MU_MODELS = ("closed", "finite")
_OVERHEAD_MODELS = ("eq5", "finite")


def ttt_normalized(N: int, r: int | np.ndarray, m: float = M_PAPER, T_s: float = T_S_PAPER,
                   T_r: float = T_R_PAPER, *, mu_model: str = "closed",
                   overhead_model: str = "eq5") -> float | np.ndarray:
    """Normalised time-to-train J(r) = S̄(N, r) / A*(μ(N, r)·m) (Eq. 7).

    Parameters
    ----------
    N : int
        Number of groups.
    r : int or array
        Redundancy (1 ≤ r ≤ N; r ≥ 3 with ``mu_model='finite'`` needs the ruler condition).
    m : float
        System MTBF in seconds (default 300 s: the paper's 5 min).
    T_s, T_r : float
        Checkpoint write and restart time in seconds (defaults: the 600k-H100 preset, 58.8 s and
        3600 s).
    mu_model : {'closed', 'finite'}
        μ from :func:`mu_closed` (the paper) or :func:`mu_finite` (ruler layout).
    overhead_model : {'eq5', 'finite'}
        S̄ from :func:`overhead_mean` (Eq. 5, with the chosen μ) or :func:`overhead_finite`.
    """
    N = check_int("N", N, lo=1)
    if mu_model not in _MU_MODELS:
        raise ValueError(f"mu_model must be one of {_MU_MODELS}, got {mu_model!r}")
    if overhead_model not in _OVERHEAD_MODELS:
        raise ValueError(f"overhead_model must be one of {_OVERHEAD_MODELS}, got {overhead_model!r}")
    check_positive("m", m)
    r_a = _as_int_array("r", r, 1)
    mu = mu_closed(N, r_a) if mu_model == "closed" else mu_finite(N, r_a)
    if overhead_model == "eq5":
        s_bar = overhead_mean(N, r_a, mu=mu)
    else:
        s_bar = np.vectorize(lambda k: overhead_finite(N, int(k)))(r_a)
    return _ret(np.asarray(s_bar / availability_opt(T_s, np.asarray(mu) * m, T_r)))


def r_star_closed(N: int | np.ndarray) -> int | np.ndarray:
    """Closed-form optimal redundancy r* = ⌊log2 N + γ/ln 2⌋ (γ/ln 2 ≈ 0.8327).

    From μ(N, r*) = N/2 with the Γ form and ln Γ(1 + 1/r) ≈ −γ/r (``symbolic.derive_r_star``).

    Examples
    --------
    >>> [int(r_star_closed(n)) for n in (200, 600, 1000)]
    [8, 10, 10]
    """
    N_a = _as_int_array("N", N, 2)
    out = np.floor(np.log2(N_a) + np.euler_gamma / np.log(2.0)).astype(np.int64)
    return int(out) if np.ndim(out) == 0 else out


def r_star_numeric(N: int, m: float = M_PAPER, T_s: float = T_S_PAPER, T_r: float = T_R_PAPER,
                   *, r_max: int | None = None, mu_model: str = "closed",
                   overhead_model: str = "eq5") -> int:
    """The r in 1..r_max minimising J(r) = S̄(N, r)/A*(μ(N, r)·m) (Eq. 7).

    Parameters
    ----------
    N : int
        Number of groups, N ≥ 2.
    m, T_s, T_r : float
        System MTBF, checkpoint and restart time in seconds; defaults are the paper's preset
        (m = 300 s, T_s = 2e13 B / 340 GB/s ≈ 58.8 s, T_r = 3600 s).
    r_max : int or None
        Largest r considered. None: the usable r of the ruler layout, ``max_ruler_r(N)`` (12,
        20, 26 for N = 200, 600, 1000). Pass a larger value to see the unconstrained optimum of
        the formula (r ≤ N).
    mu_model, overhead_model : str
        As in :func:`ttt_normalized`.

    Examples
    --------
    >>> r_star_numeric(600) in range(2, 21)
    True
    """
    N = check_int("N", N, lo=2)
    if r_max is None:
        r_max = max_ruler_r(N)
    r_max = check_int("r_max", r_max, lo=1, hi=N)
    r = np.arange(1, r_max + 1)
    J = ttt_normalized(N, r, m, T_s, T_r, mu_model=mu_model, overhead_model=overhead_model)
    return int(r[int(np.argmin(J))])
