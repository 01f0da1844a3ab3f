"""Mechanism terms of the semi-analytic time-to-train model (:mod:`spare_lib.theory.predict`).

Every function here computes one mechanism of the simulated cluster (SPEC §3–5) from the model's
parameters alone, with no fitted constant:

* :func:`expected_max_stack_sum` — the barrier: E[max over n groups of the sum of S jittered stack
  times], jitter N(1, σ²) clipped at ``lo`` (exact by numerical integration; in
  :mod:`.barrier_max`, re-exported here);
* :func:`restart_law` — the global restart: every group needs its own failure-free window of T_r,
  a failure inside restarts it; the restart ends when the last group is through
  (E[max of N completion times], exact on a lattice of step T_r/``n_h``);
* :func:`failed_fraction` — the failure law of the groups during training: the probability that a
  group has failed τ seconds after the restart ended (renewed Weibull clocks: equilibrium age at
  the restart's start, conditioned on the group's own window, pre-failures while it waits at the
  restart barrier); fresh clocks for the first cycle;
* :func:`phase0_probability` — the chance that RECTLR phase 0 settles a failure event;
* ``_binomial_moments`` — the wipe-out law: with n ~ Binomial(N, x) failed groups,
  P_x = E[P0(n)] (P0 of the layout, :func:`~spare_lib.theory.finite.survival_finite`, or the
  closed forms of Rep / CKPT-only) and E[n], E[S(n)], E[phase 0], P(n = 0) given no wipe-out
  (a numba kernel; its numpy oracle is in the tests).

The clock functions describe one group's renewal process: inter-failure law Weibull(k, λ) with
mean N·m, or exponential with the same mean.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit
from scipy.special import gamma, gammaincc, gammaln

from spare_lib.theory.closed import replication_mu
from spare_lib.theory.finite import mu_finite, survival_finite
from spare_lib.theory.predict.barrier_max import _emax_std_normal as _emax_std_normal  # (re-exported)
from spare_lib.theory.predict.barrier_max import emax_std_normal as emax_std_normal  # (re-exported)
from spare_lib.theory.predict.barrier_max import (  # (re-exported)
    expected_max_stack_sum as expected_max_stack_sum,
)

# ---------------------------------------------------------------------------------------------
# One group's failure clock
# ---------------------------------------------------------------------------------------------

@lru_cache(maxsize=4)
def _transient_grid(n: int) -> np.ndarray:
    """The y grid of :meth:`Clock._transient_table`, in log(1 + y/M)."""
    ys = np.linspace(0.0, np.log1p(80.0), n)
    ys.setflags(write=False)
    return ys


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

    def survival_inplace(self, a: np.ndarray) -> np.ndarray:
        """:meth:`survival` of a float array, overwriting it (for the large matrices of the
        renewal sums): (y/λ)^k as exp(k·log(y/λ)), which numpy vectorises (≈ 2× faster than
        the power; the two agree to a few ulp)."""
        np.maximum(a, 0.0, out=a)
        a *= 1.0 / self.scale
        if self.shape != 1.0:
            with np.errstate(divide="ignore"):
                np.log(a, out=a)
            a *= self.shape
            np.exp(a, out=a)
        np.negative(a, out=a)
        return np.exp(a, out=a)

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
        q = np.log1p(y / self.mean_s)
        ys, vals = self._transient_table(float(t0), float(np.max(q)) if q.size else 0.0)
        return np.interp(q, ys[: vals.size], vals)

    #: Points of the transient table R_t0(y): uniform in log(1 + y/M) on [0, log 81].
    TRANSIENT_POINTS = 400

    def _transient_table(self, t0: float, q_max: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
        """R_t0 on 400 points y ∈ [0, 80·M] (uniform in log(1 + y/M); linear interpolation
        error < 1e-5), memoised per t0 and filled lazily: the rows up to the first point at or
        beyond ``q_max`` = log(1 + y_max/M) (every row is independent of the others, so a
        partial table holds the same values as the full one). Returns (grid, values so far).

        1 − R_t0(y) = [S(t0) − S(t0 + y)] + Σ_s m_s [S(t0 − s) − S(t0 + y − s)] over the lattice
        s < t0 of the renewal measure (:meth:`renewal_masses`); the matrix S(t0 + y − s) is
        evaluated in place and summed against m by a matrix–vector product.
        """
        cache = self.__dict__.setdefault("_tables", {})
        ys = _transient_grid(self.TRANSIENT_POINTS)
        if t0 not in cache:
            h, m = self.renewal_masses()
            i = int(np.floor(t0 / h)) + 1
            a = t0 - h * np.arange(i)
            mi = m[:i]
            cache[t0] = (a, mi, float(self.survival_inplace(a.copy()) @ mi), np.empty(0))
        a, mi, base, vals = cache[t0]
        k = min(int(np.searchsorted(ys, q_max, side="right")) + 1, ys.size)
        if k > vals.size:
            yy = self.mean_s * np.expm1(ys[vals.size:k])
            hit = (self.survival(t0) - self.survival(t0 + yy)) + (
                base - self.survival_inplace(np.add.outer(yy, a)) @ mi)
            vals = np.concatenate((vals, np.clip(1.0 - hit, 0.0, 1.0)))
            cache[t0] = (a, mi, base, vals)
        return ys, vals

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


class NoTrainingCycle(ValueError):
    """The cluster never trains: a cycle is wiped out at its first poll with probability
    ≥ 1 − 1e-9 (groups fail faster than the restart windows let them through), or no restart
    window ever completes, so TTT is unbounded and the model has no cycle to describe."""


def _fresh_windows(clock: Clock, N: int, restart_s: float, n_h: int):
    """The part of :func:`restart_law` that does not depend on the first window, memoised on
    the clock: lattice step h, FFT length L, window edges, P(failure in a fresh window) and the
    transform of D_0 (the completion time from a fresh clock: a geometric sum of failed
    windows, then a clean one)."""
    cache = clock.__dict__.setdefault("_fresh_windows", {})
    key = (N, restart_s, n_h)
    if key not in cache:
        h = restart_s / n_h
        p_fresh = 1.0 - float(clock.survival(restart_s))
        if not p_fresh < 1.0 - 1e-12:  # a fresh window practically never completes
            raise NoTrainingCycle(f"a restart window of T_r = {restart_s:.3g} s completes with "
                                  f"probability {1.0 - p_fresh:.3g}: no restart ends")
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
        f_q = np.fft.rfft(q_fresh)
        f_d0 = np.fft.rfft(ok_fresh) / (1.0 - f_q)  # geometric sum of failed windows
        cache[key] = (h, L, edges, p_fresh, f_d0)
    return cache[key]


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
    return restart_laws(clock, N, restart_s, [first_window], n_h=n_h)[0]


def restart_laws(clock: Clock, N: int, restart_s: float, first_windows, *,
                 n_h: int = 48) -> list[RestartLaw]:
    """:func:`restart_law` for several first windows at once (one batched FFT; the part that
    does not depend on the first window is shared, :func:`_fresh_windows`)."""
    h, L, edges, p_fresh, f_d0 = _fresh_windows(clock, N, float(restart_s), n_h)
    surv_first = np.empty((len(first_windows), edges.size))
    for i, first_window in enumerate(first_windows):
        if first_window == "equilibrium":
            surv_first[i] = clock.eq_survival(edges)
        elif first_window == "fresh":
            surv_first[i] = clock.survival(edges)
        elif isinstance(first_window, (int, float)):
            surv_first[i] = clock.no_failure(float(first_window), edges)
        else:
            raise ValueError(f"first_window must be 'equilibrium', 'fresh' or a time, got "
                             f"{first_window!r}")
    q_first = np.zeros((len(first_windows), L))
    q_first[:, 1:n_h + 1] = -np.diff(surv_first, axis=1)  # first failure in cell i
    pmf_b = np.maximum(np.fft.irfft(np.fft.rfft(q_first, axis=1) * f_d0, L, axis=1), 0.0)
    pmf = pmf_b.copy()
    pmf[:, n_h] += surv_first[:, -1]
    cdf_max = np.minimum(np.cumsum(pmf, axis=1), 1.0) ** N
    mean_max = h * np.sum(1.0 - cdf_max, axis=1)
    out = []
    for i, first_window in enumerate(first_windows):
        ok = float(surv_first[i, -1])
        windows = 1.0 + (1.0 - ok) / max(1.0 - p_fresh, 1e-300)
        law = RestartLaw(h, pmf[i], pmf_b[i], float(mean_max[i]), ok, windows)
        law.cdf_max, law.n_groups = cdf_max[i], N  # the restart's duration (max over N groups)
        law.t0 = None if first_window == "equilibrium" else (
            0.0 if first_window == "fresh" else float(first_window))
        out.append(law)
    return out


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
    return failed_fractions(clock, tau, restart=restart, restart_s=restart_s, ends=[T])[0]


def failed_fractions(clock: Clock, tau: np.ndarray, *, restart: RestartLaw, restart_s: float,
                     ends) -> np.ndarray:
    """:func:`failed_fraction` after the same restart law for several restart durations T
    (``ends``) at once: shape (len(ends), len(tau)) (:func:`failed_fractions_many` of one)."""
    return failed_fractions_many(clock, tau, [restart], [ends], restart_s=restart_s)[0]


def failed_fractions_many(clock: Clock, tau: np.ndarray, restarts, ends_list, *,
                          restart_s: float) -> list[np.ndarray]:
    """:func:`failed_fraction` after several restart laws (sharing the lattice step), each for
    several restart durations T: one (len(ends), len(tau)) array per law.

    The path-b sums Σ_d P_b(d)·S(T + τ − d + T_r) over the completion lattice d ≤ T of every
    (law, T) row form one (rows, τ, d) array, evaluated in place
    (:meth:`Clock.survival_inplace`) and contracted with the masses (zeroed beyond each T).
    """
    tau = np.asarray(tau, dtype=float)
    h = restarts[0].h
    T = np.concatenate([np.asarray(e, dtype=float).reshape(-1) for e in ends_list])
    law_of = np.repeat(np.arange(len(restarts)), [np.size(e) for e in ends_list])
    jT = np.floor(T / h).astype(int)
    n_d = int(jT.max()) + 1
    pb_laws = np.zeros((len(restarts), n_d))
    for i, rl in enumerate(restarts):
        if rl.h != h:
            raise ValueError("the restart laws must share the lattice step h")
        pb_i = rl.pmf_path_b[:n_d]
        pb_laws[i, : pb_i.size] = pb_i
    keep = np.nonzero((pb_laws > 1e-18).any(0))[0]
    d = h * keep
    pb_rows = pb_laws[law_of][:, keep]
    pb = np.where((keep[None, :] <= jT[:, None]) & (pb_rows > 1e-18), pb_rows, 0.0)  # (rows, d)
    s_tr = float(clock.survival(restart_s))
    mat = (T[:, None, None] + restart_s - d[None, None, :]) + tau[None, :, None]
    # (columns of other laws can reach beyond a row's T + T_r: clamped, and their mass is 0)
    alive = np.matmul(clock.survival_inplace(mat), pb[:, :, None])[..., 0] / s_tr
    for i, rl in enumerate(restarts):
        rows = law_of == i
        if rl.first_window_ok > 0:
            alive[rows] += clock.no_failure(getattr(rl, "t0", None),
                                            T[rows, None] + tau[None, :])
        cdf = np.cumsum(rl.pmf_group)
        alive[rows] /= np.minimum(1.0, cdf[np.minimum(jT[rows], cdf.size - 1)])[:, None]
    x = np.clip(1.0 - alive, 0.0, 1.0)
    return np.split(x, np.cumsum([np.size(e) for e in ends_list])[:-1])


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


# ---------------------------------------------------------------------------------------------
# The wipe-out law under Binomial failures: E[P0(n)] and the moments given survival
# ---------------------------------------------------------------------------------------------

@lru_cache(maxsize=512)
def _p0_table(method: str, N: int, r: int, layout: str) -> np.ndarray:
    """SPARe's P0(k) = P(no wipe-out after k failures), k = 0..N (``survival_finite``)."""
    p = survival_finite(N, r, layout).copy()
    p.setflags(write=False)
    return p


@lru_cache(maxsize=512)
def _mu_index(method: str, N: int, r: int, layout: str) -> float:
    if method == "spare":
        return float(mu_finite(N, r, layout))
    if method == "rep":
        return float(replication_mu(N, r))
    return 1.0


@lru_cache(maxsize=512)
def _n_tables(method: str, N: int, r: int, layout: str) -> tuple[np.ndarray, ...]:
    """Per failure count n = 0..N: log C(N, n), P0(n), depth S(n) = c(n) (r for Rep), the
    phase-0 probability of the next failure and the binomial ratio (N − n)/(n + 1).

    Independent of the cluster: cached per (method, N, r, layout) across configurations.
    """
    if method != "spare":  # closed forms, no table needed
        return (method, r)
    n = np.arange(N + 1)
    logc = gammaln(N + 1) - gammaln(n + 1) - gammaln(N - n + 1)
    p0 = _p0_table(method, N, r, layout)
    S = _c(N, n).astype(float) if method == "spare" else np.full(N + 1, float(r))
    # at S = r every survivor computes its whole stack: a failure that does not wipe out is
    # always settled by phase 0
    ph0 = np.where(S >= r, 1.0, phase0_probability(n, N, S))
    ratio = (N - n) / (n + 1.0)
    for a in (logc, S, ph0, ratio):
        a.setflags(write=False)
    return method, r, logc, p0, S, ph0, ratio


def _closed_survival(method: str, N: int, r: int, x: np.ndarray, full: bool):
    """Rep / CKPT-only: P_x exactly, (1 − x^r)^b (1 − x^s) (b = ⌊N/r⌋ sets of r, one of s) or
    (1 − x)^N, and E[n | no wipe-out] = N x + x(1 − x) d log P_x/dx (exponential tilting)."""
    xx = np.clip(x, 0.0, 1.0 - 1e-16)
    if method == "ckpt":
        logp = N * np.log1p(-xx)
        n_s = np.zeros_like(xx)
    else:
        b, s = divmod(N, r)
        with np.errstate(divide="ignore", invalid="ignore"):
            logp = b * np.log1p(-(xx**r)) + (np.log1p(-(xx**s)) if s else 0.0)
            dlog = -b * r * xx ** (r - 1) / (1 - xx**r)
            if s:
                dlog = dlog - s * xx ** (s - 1) / (1 - xx**s)
        n_s = np.maximum(N * xx + xx * (1 - xx) * dlog, 0.0)
    px = np.exp(logp)
    if not full:
        return px
    S = np.full_like(xx, float(r))
    return px, n_s, S, np.zeros_like(xx), np.where(xx == 0.0, 1.0, (1 - xx) ** N / np.maximum(px, 1e-300))


#: Binomial window: ±7 s.d. around N·x (outside mass < 1e-11); rows whose window starts where
#: P0 ≤ _P0_FLOOR contribute nothing (every layout is already wiped out there).
_WINDOW_SD = 7.0
_P0_FLOOR = 1e-14


@njit(cache=True, nogil=True)
def _binomial_moments_kernel(x, N, logc, p0, S_n, ph0_n, ratio, out):  # pragma: no cover - jit
    """Numba kernel of :func:`_binomial_moments` (oracle: the padded numpy sums in
    ``tests/theory/test_predict_fast.py``).

    For each x[i], n ~ Bin(N, x[i]) summed over lo..lo + ⌈14 s.d.⌉ + 2 with
    lo = ⌊N x − 7 s.d. − 1⌋ (the oracle pads every row to the widest window): the pmf by the
    recurrence b(n + 1) = b(n)·ρ·(N − n)/(n + 1), ρ = x/(1 − x), from
    b(lo) = exp(log C(N, lo) + lo log x + (N − lo) log(1 − x)). Writes out[0] = P_x = E[P0(n)],
    out[1..4] = E[n], E[S(n)], E[ph0(n)], E[1{n = 0}] given no wipe-out (0 on skipped rows).
    """
    for i in range(x.size):
        xi = x[i]
        mean = N * xi
        sd = np.sqrt(N * xi * (1.0 - xi))
        lo = int(min(max(np.floor(mean - _WINDOW_SD * sd - 1.0), 0.0), N))
        for j in range(5):
            out[j, i] = 0.0
        if p0[lo] <= _P0_FLOOR:
            continue
        hi = min(lo + int(np.ceil(2.0 * _WINDOW_SD * sd)) + 2, N)
        xx = min(max(xi, 1e-300), 1.0 - 1e-16)
        lx = np.log(xx)
        l1 = np.log1p(-xx)
        rho = xx / (1.0 - xx)
        b = np.exp(logc[lo] + lo * lx + (N - lo) * l1)
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        w0 = b * p0[lo] if lo == 0 else 0.0
        for n in range(lo, hi + 1):
            w = b * p0[n]
            s0 += w
            s1 += w * n
            s2 += w * S_n[n]
            s3 += w * ph0_n[n]
            b *= rho * ratio[n]
        out[0, i] = s0
        inv = 1.0 / max(s0, 1e-300)
        out[1, i] = s1 * inv
        out[2, i] = s2 * inv
        out[3, i] = s3 * inv
        out[4, i] = w0 * inv


def _binomial_moments(tables, N: int, x: np.ndarray, full: bool = True):
    """Under n ~ Bin(N, x): P_x = E[P0(n)], and E[f(n) | no wipe-out] for f = n, S(n), the
    phase-0 probability and 1{n = 0}, for every entry of x (any shape). SPARe: exact sums over
    ±7 s.d. around N·x (outside mass < 1e-11) by :func:`_binomial_moments_kernel`, skipping the
    rows whose mass lies where P0 < 1e-14; Rep / CKPT-only: closed forms."""
    if tables[0] != "spare":
        return _closed_survival(tables[0], N, tables[1], x, full)
    logc, p0, S_n, ph0_n, ratio = tables[2:]
    xf = np.ascontiguousarray(x, dtype=float).ravel()
    out = np.empty((5, xf.size))
    _binomial_moments_kernel(xf, N, logc, p0, S_n, ph0_n, ratio, out)
    out = out.reshape((5, *np.shape(x)))
    return tuple(out) if full else out[0]


def _c(N: int, n: np.ndarray) -> np.ndarray:
    return -(-N // np.maximum(N - n, 1))
