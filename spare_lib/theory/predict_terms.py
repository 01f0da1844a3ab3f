"""Mechanism terms of the semi-analytic time-to-train model (:mod:`spare_lib.theory.predict`).

Every function here computes one mechanism of the simulated cluster (SPEC §3–5) from the model's
parameters alone, with no fitted constant:

* :func:`expected_max_stack_sum` — the barrier: E[max over n groups of the sum of S jittered stack
  times], jitter N(1, σ²) clipped at ``lo`` (exact by numerical integration);
* :func:`restart_law` — the global restart: every group needs its own failure-free window of T_r,
  a failure inside restarts it; the restart ends when the last group is through
  (E[max of N completion times], exact on a lattice of step T_r/``n_h``);
* :func:`failed_fraction` — the failure law of the groups during training: the probability that a
  group has failed τ seconds after the restart ended (renewed Weibull clocks: equilibrium age at
  the restart's start, conditioned on the group's own window, pre-failures while it waits at the
  restart barrier); fresh clocks for the first cycle;
* :func:`phase0_probability` — the chance that RECTLR phase 0 settles a failure event.

The clock functions describe one group's renewal process: inter-failure law Weibull(k, λ) with
mean N·m, or exponential with the same mean.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import gamma, gammaincc
from scipy.stats import norm

# ---------------------------------------------------------------------------------------------
# Barrier: expected maximum of n jittered stack sums
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# One group's failure clock
# ---------------------------------------------------------------------------------------------

class Clock:
    """One group's renewal failure clock: Weibull(k) or exponential inter-failure times, mean M.

    ``survival(y)`` = P(X > y); ``eq_survival(y)`` = P(no failure in the next y seconds) for a
    clock of equilibrium age (stationary renewal process): ∫_y^∞ S(v) dv / M, which for the
    Weibull is the regularised upper incomplete gamma Q(1/k, (y/λ)^k).
    """

    def __init__(self, dist: str, mean_s: float, shape: float = 1.0) -> None:
        if dist not in ("weibull", "exponential"):
            raise ValueError(f"dist must be 'weibull' or 'exponential', got {dist!r}")
        self.dist = dist
        self.mean_s = float(mean_s)
        self.shape = float(shape) if dist == "weibull" else 1.0
        self.scale = self.mean_s / gamma(1.0 + 1.0 / self.shape)

    def survival(self, y: np.ndarray | float) -> np.ndarray:
        y = np.maximum(np.asarray(y, dtype=float), 0.0)
        return np.exp(-((y / self.scale) ** self.shape))

    def eq_survival(self, y: np.ndarray | float) -> np.ndarray:
        y = np.maximum(np.asarray(y, dtype=float), 0.0)
        if self.shape == 1.0:
            return np.exp(-y / self.scale)
        return gammaincc(1.0 / self.shape, (y / self.scale) ** self.shape)

    def no_failure(self, t0: float | None, y: np.ndarray | float) -> np.ndarray:
        """P(no failure in (t0, t0 + y]) for a clock started fresh at time 0 (never reset).

        t0 = 0: the fresh survival S(y); t0 = None or ≥ :attr:`t_equilibrium`: the equilibrium
        form; otherwise the renewal argument R_t(y) = S(t + y) + ∫_0^t u(s) S(t + y − s) ds
        with the renewal measure u of the clock (:meth:`renewal_masses`).
        """
        y = np.asarray(y, dtype=float)
        if t0 is None or t0 >= self.t_equilibrium:
            return self.eq_survival(y)
        if t0 <= 0:
            return self.survival(y)
        ys, vals = self._transient_table(float(t0))
        return np.interp(np.log1p(y / self.mean_s), ys, vals)

    def _transient_table(self, t0: float) -> tuple[np.ndarray, np.ndarray]:
        """R_t0 on 400 points y ∈ [0, 80·M] (uniform in log(1 + y/M); linear interpolation
        error < 1e-5), memoised per t0."""
        cache = self.__dict__.setdefault("_tables", {})
        if t0 not in cache:
            h, m = self.renewal_masses()
            i = int(np.floor(t0 / h)) + 1
            s = h * np.arange(i)
            ys = np.linspace(0.0, np.log1p(80.0), 400)
            yy = self.mean_s * np.expm1(ys)[:, None]
            # 1 − P(a failure in (t0, t0 + y]), written with differences so that y = 0 gives 1
            hit = (self.survival(t0) - self.survival(t0 + yy[:, 0])) + (
                m[:i][None, :] * (self.survival(t0 - s)[None, :]
                                  - self.survival(t0 + yy - s[None, :]))).sum(1)
            cache[t0] = (ys, np.clip(1.0 - hit, 0.0, 1.0))
        return cache[t0]

    #: Beyond this age of the process (in clock means) the equilibrium form is used.
    EQUILIBRIUM_MEANS = 8.0
    RENEWAL_CELLS = 2048

    @property
    def t_equilibrium(self) -> float:
        return self.EQUILIBRIUM_MEANS * self.mean_s

    def renewal_masses(self) -> tuple[float, np.ndarray]:
        """Renewal measure of the fresh-started clock on the lattice i·h of [0, t_eq]: m = q + q * m,
        q the lattice masses of one inter-failure time (FFT, tilted and zero-padded)."""
        if getattr(self, "_ren", None) is None:
            n = self.RENEWAL_CELLS
            h = self.t_equilibrium / n
            cell = -np.diff(self.survival(h * np.arange(n + 1)))
            # the mass of cell ((i−1)h, ih] is split between the lattice points (i−1)h and ih
            q = np.zeros(n)
            q[:-1] += 0.5 * cell[:-1]
            q[1:] += 0.5 * cell[:-1]
            # exponential tilting keeps the (non-decaying) renewal measure from wrapping around
            # the circular FFT convolution: solve for m_i e^(−αi), then undo the tilt
            alpha = 16.0 / n
            tilt = np.exp(-alpha * np.arange(n))
            L = 4 * n
            fq = np.fft.rfft(q * tilt, L)
            m = np.fft.irfft(fq / (1.0 - fq), L)[:n] / tilt
            self._ren = (h, np.maximum(m, 0.0))
        return self._ren

    def fresh_quantile(self, x: float) -> float:
        """τ with P(X ≤ τ) = x (first failure of a fresh clock)."""
        return float(self.scale * (-np.log1p(-x)) ** (1.0 / self.shape))


# ---------------------------------------------------------------------------------------------
# Global restart: per-group failure-free windows
# ---------------------------------------------------------------------------------------------

class RestartLaw:
    """Result of :func:`restart_law` (times in seconds, lattice step ``h``)."""

    def __init__(self, h: float, pmf_group: np.ndarray, pmf_path_b: np.ndarray, mean_s: float,
                 first_window_ok: float, windows_per_group: float) -> None:
        self.h = h
        self.pmf_group = pmf_group
        self.pmf_path_b = pmf_path_b
        self.mean_s = mean_s
        self.first_window_ok = first_window_ok
        self.windows_per_group = windows_per_group


def _window_failure_masses(surv_at: np.ndarray) -> np.ndarray:
    """Masses of 'first failure in cell i' from survival values at the cell edges."""
    return -np.diff(surv_at)


def restart_law(clock: Clock, N: int, restart_s: float, *, n_h: int = 48,
                first_window: str | float = "equilibrium") -> RestartLaw:
    """Law of one group's restart completion time and the mean restart duration E[max over N].

    A group starts its window of T_r at the restart's start; a failure at y < T_r restarts the
    window (from a fresh clock); the group is through after its first failure-free window
    (SPEC §3). With D_0 the completion time from a fresh clock,

        D_0 = T_r            with probability S(T_r),
        D_0 = Y + D_0'       Y = the failure time, when Y < T_r,

    a geometric sum solved exactly on the lattice t = j·h (failure times rounded up to the cell
    end, h = T_r/n_h) with an FFT. The first window starts from the age of the clock at the
    restart's start: ``'equilibrium'`` (stationary renewal process: first failure with survival
    ∫_y^∞ S/M), ``'fresh'``, or a number t0: the restart starts t0 seconds after every clock
    was fresh (:meth:`Clock.no_failure`, the transient of clocks that are never reset).
    Groups are independent, so the restart lasts E[max_w D_w] = Σ_j h·(1 − F(j h)^N).
    """
    h = restart_s / n_h
    p_fresh = 1.0 - float(clock.survival(restart_s))
    # lattice long enough that N·P(D > L) is negligible
    n_win = 3
    if p_fresh > 0:
        n_win = int(np.ceil(np.log(1e-12 / N) / np.log(max(p_fresh, 1e-300)))) + 3
    n_win = int(np.clip(n_win, 3, 400))
    L = 1 << int(np.ceil(np.log2((n_win + 2) * n_h)))
    edges = h * np.arange(n_h + 1)
    q_fresh = np.zeros(L)
    q_fresh[1:n_h + 1] = _window_failure_masses(clock.survival(edges))
    ok_fresh = np.zeros(L)
    ok_fresh[n_h] = clock.survival(restart_s)
    if first_window == "equilibrium":
        surv_first = clock.eq_survival(edges)
    elif first_window == "fresh":
        surv_first = clock.survival(edges)
    elif isinstance(first_window, (int, float)):
        surv_first = clock.no_failure(float(first_window), edges)
    else:
        raise ValueError(f"first_window must be 'equilibrium', 'fresh' or a time, got "
                         f"{first_window!r}")
    q_first = np.zeros(L)
    q_first[1:n_h + 1] = _window_failure_masses(surv_first)
    f_q = np.fft.rfft(q_fresh)
    f_d0 = np.fft.rfft(ok_fresh) / (1.0 - f_q)  # geometric sum of failed windows
    pmf_b = np.maximum(np.fft.irfft(np.fft.rfft(q_first) * f_d0, L), 0.0)
    pmf = pmf_b.copy()
    pmf[n_h] += surv_first[-1]
    cdf = np.minimum(np.cumsum(pmf), 1.0)
    mean_max = float(h * np.sum(1.0 - cdf**N))
    windows = 1.0 + (1.0 - surv_first[-1]) / max(1.0 - p_fresh, 1e-300)
    law = RestartLaw(h, pmf, pmf_b, mean_max, float(surv_first[-1]), windows)
    law.t0 = None if first_window == "equilibrium" else (
        0.0 if first_window == "fresh" else float(first_window))
    return law


# ---------------------------------------------------------------------------------------------
# Failure law during training
# ---------------------------------------------------------------------------------------------

def failed_fraction(clock: Clock, tau: np.ndarray, *, restart: RestartLaw | None,
                    restart_s: float, end_s: float | None = None) -> np.ndarray:
    """x(τ): probability that a group has failed (been noticed dead) τ seconds into training.

    ``restart=None``: the first cycle, every clock fresh at t = 0: x = 1 − S(τ).

    After a global restart of duration T (``end_s``, default the law's mean), a group either got
    through its first window (no failure since the restart's start t0: probability
    R_t0(T + τ) of no failure in (t0, t0 + T + τ], :meth:`Clock.no_failure`) or its last
    window started at a failure at d − T_r, d its completion (it then survives to T + τ with
    S(T + τ − d + T_r)/S(T_r)).
    Groups that fail after their window, while waiting at the restart barrier, are noticed at
    the first poll: they make x(0) > 0. Conditioned on completion by T.
    """
    tau = np.asarray(tau, dtype=float)
    if restart is None:
        return 1.0 - clock.survival(tau)
    T = restart.mean_s if end_s is None else end_s
    h = restart.h
    jT = int(np.floor(T / h))
    d = h * np.arange(jT + 1)
    pb = restart.pmf_path_b[: jT + 1]
    keep = pb > 1e-18
    d, pb = d[keep], pb[keep]
    s_tr = float(clock.survival(restart_s))
    alive_b = (pb[None, :] * clock.survival(T + tau[:, None] - d[None, :] + restart_s)).sum(1)
    t0 = getattr(restart, "t0", None)
    alive = clock.no_failure(t0, T + tau) * (1.0 if restart.first_window_ok > 0 else 0.0) + \
        alive_b / s_tr
    done = min(1.0, float(np.sum(restart.pmf_group[: jT + 1])))
    return np.clip(1.0 - alive / done, 0.0, 1.0)


# ---------------------------------------------------------------------------------------------
# RECTLR phase 0
# ---------------------------------------------------------------------------------------------

def single_cover_share(k: np.ndarray, N: int, S: np.ndarray) -> np.ndarray:
    """Share of the live first-S slots whose type has no other cover (k dead, depth S ≥ 2).

    Counting identity: the (N − k)·S live slots cover all N types, so the covers in excess of one
    per type number S(N − k) − N. Spread over the types as 1 + Binomial(S − 1, θ) with
    θ = (S(N − k) − N)/((S − 1)N) (so the total matches exactly; at S = 2 this is exact whenever no
    type has three covers: 2k types are covered once), a slot holds a singly covered type with
    probability N(1 − θ)^(S−1) / (S(N − k)).
    """
    k = np.asarray(k, dtype=float)
    S = np.maximum(np.asarray(S, dtype=float), 2.0)
    live = np.maximum(N - k, 1.0)
    theta = np.clip((S * live - N) / ((S - 1.0) * N), 0.0, 1.0)
    return np.clip(N * (1.0 - theta) ** (S - 1.0) / (S * live), 0.0, 1.0)


def phase0_probability(k: np.ndarray, N: int, S: np.ndarray) -> np.ndarray:
    """P(one new failure is settled by RECTLR phase 0) with k groups already dead and depth S.

    Phase 0 succeeds when every type in the dying group's first S positions is still covered by
    another survivor's first S positions: p = (1 − s1)^S with s1 the share of slots holding a
    singly covered type (:func:`single_cover_share`), the S slots treated as independent;
    p = 0 at S = 1 (no slack).
    """
    k = np.asarray(k, dtype=float)
    S = np.asarray(S, dtype=float)
    p = (1.0 - single_cover_share(k, N, S)) ** S
    return np.where(S <= 1.0, 0.0, p)
