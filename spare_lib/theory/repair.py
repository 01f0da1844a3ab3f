"""Failures and time to wipe-out of SPARe with repair (spare+repair, beyond the paper).

Without repair a SPARe layout survives μ(N, r) failures on average (:func:`~spare_lib.theory.mu_finite`):
the dead groups pile up until every holder of some type is dead. With repair, a failed group
rejoins after ``repair_s``, so the number of dead groups K stays small and a wipe-out needs all r
holders of one type to be dead inside *overlapping* repair windows.

Model (a birth–death chain with killing)
----------------------------------------
State k = groups currently dead (no wipe-out yet). With exponential clocks of system MTBF m each
live group fails at rate 1/(N·m), so

* a failure arrives at rate a_k = (N − k)/(N·m); it wipes out with probability q_k, else k → k+1;
* a repair arrives at rate b_k = k/R (R = ``repair_s``), k → k − 1.

Given k dead groups the dead set is (close to) a uniform k-subset, so q_k is the hazard of the
no-repair model at its k-th failure. Two forms, used where each is accurate:

* **union bound** (small k, where q_k is tiny): the failing group holds r types; each has r − 1
  other holders, all dead with probability k^(r−1↓)/(N−1)^(r−1↓) (falling factorials), so
  q_k ≈ r·k^(r−1↓)/(N−1)^(r−1↓);
* **finite-N survival** (large k): q_k = 1 − P0(k+1)/P0(k) with P0 from
  :func:`~spare_lib.theory.survival_finite` (ruler layout), which accounts for overlaps and the
  conditioning on survival; the switch is where the union bound reaches :data:`UNION_SWITCH`.

The mean time to absorption from k = 0, T, and the mean number of failures until it, F, solve
two tridiagonal systems (first-step analysis). Without repair (R = ∞) F is Σ_k P0(k) = μ(N, r)
(to 0.1 %: the union bound replaces the survival ratio at small k).

**Deterministic repair.** The chain's repairs are exponential; the simulator's are deterministic
(a group is away exactly ``rejoin_s``). The stationary law of K is Poisson(ρ), ρ = R/m, for any
repair-time law (M/G/∞ insensitivity), so the steady wipe-out rate is the same. What differs is
the ramp after a restart (all groups live): the wipe-out hazard grows as E[K(t)^(r−1↓)], i.e. as
(1 − e^(−t/R))^(r−1) for exponential and (t/R)^(r−1) (t < R) for deterministic repair; the
hazard-free delays they add are R·H_(r−1) and R·(1 − 1/r) (H the harmonic number).
``repair_law='deterministic'`` (default) subtracts the difference R·(H_(r−1) − (r−1)/r) from the
chain's mean time (and that time's failures from F), exact in the rare-event limit.

**Stationary closed form.** When wipe-outs are rare (T ≫ R), the wipe-out rate is
h = Σ_k π_k a_k q_k with π = Poisson(ρ); with the union bound and E[K^(j↓)] = ρ^j,

    h ≈ r·ρ^(r−1) / (m·(N−1)^(r−1↓)),   T ≈ 1/h,   F ≈ T/m,

so every extra unit of r multiplies the time between restarts by ≈ N/ρ.

Example
-------
>>> round(mean_failures_to_wipeout_repair(200, 3, repair_s=math.inf, mtbf_s=300.0)
...       / float(mu_finite(200, 3)), 2)
1.0
>>> w = wipeout_with_repair(600, 4, repair_s=1800.0, mtbf_s=300.0)  # 600k GPUs, 30-min repair
>>> 2e4 < w.time_s / 3600 < 2.5e4  # hours between wipe-outs (no repair: μ·m ≈ 9 h)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.theory.finite import mu_finite, survival_finite

#: The union-bound hazard is used while it is below this; above, the finite-N survival ratio.
UNION_SWITCH = 1e-4

#: Laws of the repair time: the chain's own ('exponential') or the simulator's ('deterministic').
REPAIR_LAWS = ("deterministic", "exponential")


def _falling_ratio(k: np.ndarray, n: int, j: int) -> np.ndarray:
    """k^(j↓) / n^(j↓) elementwise (0 where k < j)."""
    out = np.ones_like(k, dtype=float)
    for i in range(j):
        out *= np.clip(k - i, 0, None) / (n - i)
    return out


def wipeout_hazard(N: int, r: int) -> np.ndarray:
    """q_k, k = 0..N−1: probability that the failure of a live group, with k groups dead and no
    wipe-out yet, wipes out a type (ruler layout).

    Union bound r·k^(r−1↓)/(N−1)^(r−1↓) while it is below :data:`UNION_SWITCH`, then the finite-N
    survival ratio 1 − P0(k+1)/P0(k) (made non-decreasing, at most 1).
    """
    N = check_int("N", N, lo=2)
    r = check_int("r", r, lo=1, hi=N)
    k = np.arange(N, dtype=float)
    if r == 1:
        return np.ones(N)
    union = r * _falling_ratio(k, N - 1, r - 1)
    p0 = survival_finite(N, r)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p0[:-1] > 0, 1.0 - p0[1:] / p0[:-1], 1.0)
    q = np.where(union < UNION_SWITCH, union, ratio)
    return np.clip(np.maximum.accumulate(q), 0.0, 1.0)


@dataclass(frozen=True)
class RepairWipeout:
    """Mean time and failures to wipe-out of SPARe with repair (:func:`wipeout_with_repair`).

    Attributes
    ----------
    N, r : int
    repair_s, mtbf_s : float
        R (time a failed group is away) and the system MTBF m.
    repair_law : str
        'deterministic' or 'exponential' (see the module docstring).
    time_s : float
        Mean time from a restart (all groups live) to the next wipe-out.
    failures : float
        Mean failures noticed until then, the fatal one included (μ with repair).
    time_exponential_s, failures_exponential : float
        The birth–death chain's values (exponential repair), before the ramp correction.
    time_stationary_s : float
        The stationary closed form m·(N−1)^(r−1↓)/(r·ρ^(r−1)), ρ = R/m (inf without repair).
    mu_no_repair : float
        μ(N, r) without repair (:func:`~spare_lib.theory.mu_finite`).
    mean_dead : float
        Mean groups away in steady state, ρ·(1 − ...) ≈ R/m (Poisson occupancy, capped at N).
    """

    N: int
    r: int
    repair_s: float
    mtbf_s: float
    repair_law: str
    time_s: float
    failures: float
    time_exponential_s: float
    failures_exponential: float
    time_stationary_s: float
    mu_no_repair: float
    mean_dead: float


def _solve_chain(N: int, q: np.ndarray, repair_s: float, mtbf_s: float) -> tuple[float, float]:
    """Mean time and failures to absorption from k = 0 of the chain.

    Backward recursion over levels, free of cancellation (the times reach 1e40 when repair is
    fast; a direct tridiagonal solve loses them). For level k ≥ 1 let h_k be the probability of
    a wipe-out before the chain first drops to k − 1, and e_k, f_k the expected time and failures
    until either. With u_k = a_k(1 − q_k) and d_k = b_k + a_k q_k + u_k h_(k+1) (all terms ≥ 0):
    h_k = (a_k q_k + u_k h_(k+1))/d_k, e_k = (1 + u_k e_(k+1))/d_k, f_k = (a_k + u_k f_(k+1))/d_k;
    level 0 has b_0 = 0, so (e_0, f_0) are the answer.
    """
    k = np.arange(N, dtype=float)
    a = (N - k) / (N * mtbf_s)
    b = k / repair_s if math.isfinite(repair_s) else np.zeros(N)
    qq = q.copy()
    qq[-1] = 1.0  # from k = N−1 the next failure kills the last group: always a wipe-out
    h = e = f = 0.0
    for j in range(N - 1, -1, -1):
        u = a[j] * (1.0 - qq[j])
        d = b[j] + a[j] * qq[j] + u * h
        h, e, f = (a[j] * qq[j] + u * h) / d, (1.0 + u * e) / d, (a[j] + u * f) / d
    return float(e), float(f)


def wipeout_with_repair(N: int, r: int, repair_s: float, mtbf_s: float,
                        repair_law: str = "deterministic") -> RepairWipeout:
    """Mean time and failures between wipe-outs of SPARe whose failed groups rejoin after R.

    Parameters
    ----------
    N : int
        Data-parallel groups, ≥ 2.
    r : int
        Redundancy, 1 ≤ r ≤ N (ruler layout).
    repair_s : float
        R > 0: how long a failed group is away (inf: no repair). Compare with the simulator's
        ``rejoin_s`` plus the wait for the next step start (≈ half a step).
    mtbf_s : float
        System MTBF m > 0 (per-group clocks exponential with mean N·m).
    repair_law : {'deterministic', 'exponential'}
        Law of the repair time (see the module docstring); the simulator's is deterministic.

    Returns
    -------
    RepairWipeout
        Cost: one tridiagonal solve of size N, plus :func:`survival_finite` (≈ ms).
    """
    N = check_int("N", N, lo=2)
    r = check_int("r", r, lo=1, hi=N)
    if not (isinstance(repair_s, (int, float)) and repair_s > 0):
        raise ValueError(f"repair_s must be in (0, inf], got {repair_s!r}")
    m = check_positive("mtbf_s", mtbf_s)
    if repair_law not in REPAIR_LAWS:
        raise ValueError(f"repair_law must be one of {REPAIR_LAWS}, got {repair_law!r}")
    q = wipeout_hazard(N, r)
    t_exp, f_exp = _solve_chain(N, q, float(repair_s), m)
    time_s, failures = t_exp, f_exp
    if repair_law == "deterministic" and math.isfinite(repair_s) and r >= 2:
        harmonic = sum(1.0 / j for j in range(1, r))
        shift = min(repair_s * (harmonic - (r - 1) / r), 0.5 * t_exp)
        time_s = t_exp - shift
        failures = max(1.0, f_exp - shift * max(0.0, 1.0 - repair_s / (N * m)) / m)
    if math.isfinite(repair_s):
        rho = repair_s / m
        denom = r * rho ** (r - 1) / (m * float(np.prod([float(N - 1 - i) for i in range(r - 1)])))
        t_stat = 1.0 / denom if denom > 0 else math.inf
        dead = min(float(N), rho)
    else:
        t_stat, dead = math.inf, float("nan")
    return RepairWipeout(N=N, r=r, repair_s=float(repair_s), mtbf_s=m, repair_law=repair_law,
                         time_s=time_s, failures=failures, time_exponential_s=t_exp,
                         failures_exponential=f_exp, time_stationary_s=t_stat,
                         mu_no_repair=float(mu_finite(N, r)), mean_dead=dead)


def mean_failures_to_wipeout_repair(N: int, r: int, repair_s: float, mtbf_s: float,
                                    repair_law: str = "deterministic") -> float:
    """μ with repair: mean failures between wipe-outs (:func:`wipeout_with_repair`)."""
    return wipeout_with_repair(N, r, repair_s, mtbf_s, repair_law).failures


def mean_time_to_wipeout_repair(N: int, r: int, repair_s: float, mtbf_s: float,
                                repair_law: str = "deterministic") -> float:
    """Mean time between wipe-outs in seconds (:func:`wipeout_with_repair`)."""
    return wipeout_with_repair(N, r, repair_s, mtbf_s, repair_law).time_s


__all__ = ["REPAIR_LAWS", "UNION_SWITCH", "RepairWipeout", "mean_failures_to_wipeout_repair",
           "mean_time_to_wipeout_repair", "wipeout_hazard", "wipeout_with_repair"]
