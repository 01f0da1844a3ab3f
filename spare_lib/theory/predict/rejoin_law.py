"""One group's failure law when failed groups rejoin (spare+repair, elastic-drop, elastic-rebalance).

A group of these methods alternates between two phases: alive until its clock fires (the failure
is noticed at the group's next poll), then away for R' = ``rejoin_s`` + the wait for the next step
start, after which it rejoins with the clock the simulator gave it at the notice: renewed from
the notice, failures while it was away absorbed (SPEC §3 and ``docs/strategies.md`` §2). Its
*counted* failures — the ones noticed while it was alive — form a delayed renewal process:

* the first counted failure of a cycle has the law F0 of the cycle's kind: fresh clocks for the
  run's first cycle (F0 = 1 − S(τ)), or, after a global restart, the failed fraction x(τ) of
  :func:`~spare_lib.theory.predict.curves._law_curves` (equilibrium or transient clock ages,
  conditioned on the restart windows, with the groups that fail while waiting at the restart
  barrier as an atom at τ = 0);
* from a notice to the next counted failure the time is D = R + the residual after R of a clock
  started fresh at the notice, G_D(t) = P(D ≤ t) = 1 − R_R(t − R) for t ≥ R (R_t0(y) is
  :meth:`~spare_lib.theory.predict.terms.Clock.no_failure`, the renewal argument of clocks that
  are never reset), 0 below.

So U(τ), the expected counted failures by τ, solves the renewal equation

    U(τ) = F0(τ) + ∫_[0,τ] G_D(τ − s) dU(s),

and, since a group has at most one notice in a window of length R', it is away at τ with
probability a(τ) = U(τ) − U(τ − R') (R' = ∞: a = F0, the groups of SPARe+CKPT). The groups'
clocks are independent, so the groups away at τ are Binomial(N, a(τ)), and those noticed in any
window [τ − w, τ] Binomial(N, U(τ) − U(τ − w)); the cycle model
(:mod:`spare_lib.theory.predict.rejoin`) takes it from there.

U is solved by product integration on a τ grid fine near 0 (the rejoin ramp), at the clock's
scale N·m and out to the run's horizon: the mass of each cell is spread uniformly over it, so
U_i = F0_i + U_0·G_D(τ_i) + Σ_{j ≤ i} (U_j − U_{j−1})·Ḡ_ij with Ḡ_ij the exact mean of G_D(τ_i − s)
over cell j (from the integral of G_D; the kink of G_D at R falls inside cells of the coarse
part of the grid), implicit in U_i only through the cell ending at τ_i (a numba kernel; its
plain oracle is a Monte Carlo of the group process in ``tests/theory/test_predict_rejoin.py``).
The renewal uses R, not R': the wait for the next step start delays a rejoined group's next
counted failure by w ≪ N·m, a relative change of w/(N·m) in U that is left out, while the away
windows themselves use the waits exactly.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit

from spare_lib.theory.predict.curves import _clock, _law_curves, transient_restart_times

#: Points of the G_D table, uniform in log(1 + y/M) on [0, log 81] (as the clock's tables).
_GD_POINTS = 512


@njit(cache=True, nogil=True)
def _ig(t, R, M, dq, q_end, y, cum):  # pragma: no cover - jit
    """∫_0^t G_D: 0 below R, then the cumulative table at y = t − R (linear in log(1 + y/M); past
    the table G_D = 1, so the integral grows by y − y_end)."""
    if t <= R:
        return 0.0
    v = t - R
    q = np.log1p(v / M)
    if q >= q_end:
        return cum[cum.size - 1] + (v - y[y.size - 1])
    x = q / dq
    i = int(x)
    return cum[i] + (x - i) * (cum[i + 1] - cum[i])


@njit(cache=True, nogil=True)
def _renewal_kernel(tau, F0, R, M, dq, y, g, cum, U):  # pragma: no cover - jit
    """Solve U = F0 + G_D * dU on the grid ``tau`` for every row of F0, the mass of each cell
    spread uniformly over the cell, so that its weight is the exact mean of G_D(τ_i − s) over
    it, (IG(τ_i − τ_{j−1}) − IG(τ_i − τ_j))/Δ_j with IG = ∫ G_D; the atom U[:, 0] = F0[:, 0] at
    τ = 0 weighs G_D(τ_i). Oracle: the Monte Carlo of the group process in the tests."""
    m, n = F0.shape
    q_end = dq * (y.size - 1)
    acc = np.empty(m)
    for k in range(m):
        U[k, 0] = F0[k, 0]
    for i in range(1, n):
        # G_D(τ_i) for the atom, by the table of G_D
        t = tau[i]
        g0 = 0.0
        if t > R:
            q = np.log1p((t - R) / M)
            if q >= q_end:
                g0 = g[g.size - 1]
            else:
                x = q / dq
                c = int(x)
                g0 = g[c] + (x - c) * (g[c + 1] - g[c])
        for k in range(m):
            acc[k] = F0[k, i] + U[k, 0] * g0
        gii = 0.0
        hi = _ig(0.0, R, M, dq, q_end, y, cum)  # IG(τ_i − τ_j) for j = i
        for j in range(i, 0, -1):
            lo = _ig(tau[i] - tau[j - 1], R, M, dq, q_end, y, cum)
            w = (lo - hi) / (tau[j] - tau[j - 1])
            hi = lo
            if j == i:
                gii = w
            elif w > 0.0:
                for k in range(m):
                    acc[k] += (U[k, j] - U[k, j - 1]) * w
        for k in range(m):
            U[k, i] = (acc[k] - U[k, i - 1] * gii) / (1.0 - gii)


def rejoin_grid(mean_s: float, rejoin_s: float, horizon_s: float, t_step: float) -> np.ndarray:
    """τ grid of a rejoining cycle: 0; 96 cells over the first 4·R (the rejoin ramp and the
    return of the groups that were dead at the first poll); 192 log-spaced points from a quarter
    step to the horizon; 128 uniform points over the clock's transient (12 (N·m + R)) and 128
    over the whole horizon; R itself."""
    H = float(horizon_s)
    R = float(rejoin_s) if math.isfinite(rejoin_s) else H
    parts = [np.linspace(0.0, min(4.0 * R, H), 97),
             np.geomspace(min(0.25 * t_step, H / 1e4), H, 192),
             np.linspace(0.0, min(12.0 * (mean_s + R), H), 129), np.linspace(0.0, H, 129)]
    if R < H:
        parts.append(np.array([R]))
    tau = np.unique(np.concatenate(parts))
    tau.setflags(write=False)
    return tau


class GroupProcess:
    """U(τ) of one cycle kind on a τ grid: ``U`` (nodes, τ), node weights ``w`` (the law of the
    restart's duration, :func:`~spare_lib.theory.predict.curves.restart_end_nodes`; one node of
    weight 1 for the first cycle), the restart's mean duration ``restart_s`` (0 for the first
    cycle) and the rejoin time R (``inf``: the groups never come back)."""

    def __init__(self, tau: np.ndarray, U: np.ndarray, w: np.ndarray, restart_s: float,
                 rejoin_s: float) -> None:
        self.tau, self.U, self.w = tau, U, w
        self.restart_s, self.rejoin_s = float(restart_s), float(rejoin_s)
        U.setflags(write=False)
        w.setflags(write=False)

    def away(self, rejoin_window_s: float) -> np.ndarray:
        """a(τ) = U(τ) − U(τ − R') (nodes, τ): P(a group is away at τ), R' = the away window."""
        if not math.isfinite(rejoin_window_s):
            return np.clip(self.U, 0.0, 1.0)
        back = np.stack([np.interp(self.tau - rejoin_window_s, self.tau, u, left=0.0)
                         for u in self.U])
        return np.clip(self.U - back, 0.0, 1.0)


#: Cells of [0, R] in the renewal sum of :func:`residual_survival`.
_RESIDUAL_CELLS = 512


def residual_survival(clock, t0: float, y: np.ndarray) -> np.ndarray:  # noqa: ANN001 - a Clock
    """R_t0(y) = P(no failure in (t0, t0 + y]) of a clock started fresh at 0 and never reset.

    R_t0(y) = S(t0 + y) + ∫_0^t0 u(s) S(t0 + y − s) ds, u the renewal density: exact for
    exponential clocks (e^(−y/M)); otherwise the renewal masses of 512 cells of [0, t0] (the
    discrete renewal equation m_j = f_j + Σ_(i<j) m_i f_(j−i), f_j the mass of one inter-failure
    time in cell j) with each renewal at its cell's midpoint; the equilibrium form beyond the
    clock's :attr:`~spare_lib.theory.predict.terms.Clock.t_equilibrium`. Unlike the clock's
    transient table (built for restart times t0 of several means), it keeps its relative
    accuracy in the tail, which the renewal equation of :func:`_solve` sums over many cycles.
    """
    y = np.asarray(y, dtype=float)
    if clock.shape == 1.0:
        return np.exp(-y / clock.mean_s)
    if t0 >= clock.t_equilibrium:
        return clock.eq_survival(y)
    n = _RESIDUAL_CELLS
    h = t0 / n
    f = -np.diff(clock.survival(h * np.arange(n + 1)))
    m = np.empty(n)
    for j in range(n):  # O(n²) = 2.6e5 flops, vectorised per row
        m[j] = f[j] + (m[:j] @ f[j - 1::-1] if j else 0.0)
    mid = h * (np.arange(n) + 0.5)
    out = clock.survival(t0 + y)
    for a in np.array_split(np.arange(y.size), max(1, y.size // 64)):
        out[a] += clock.survival_inplace(np.add.outer(t0 + y[a], -mid)) @ m
    return np.clip(out, 0.0, 1.0)


def _gd_table(clock, rejoin_s: float) -> tuple:  # noqa: ANN001 - a Clock
    """(dq, y, G_D, ∫ G_D) on the uniform grid of q = log(1 + y/M), y = t − R ∈ [0, 80·M]
    (the integral by the trapezoid rule along y); G_D = 1 − :func:`residual_survival`."""
    q = np.linspace(0.0, np.log1p(80.0), _GD_POINTS)
    y = clock.mean_s * np.expm1(q)
    vals = np.maximum.accumulate(1.0 - residual_survival(clock, float(rejoin_s), y))
    cum = np.concatenate(([0.0], np.cumsum(0.5 * (vals[1:] + vals[:-1]) * np.diff(y))))
    return float(q[1] - q[0]), y, np.ascontiguousarray(vals), cum


def _solve(clock, tau: np.ndarray, F0: np.ndarray, rejoin_s: float) -> np.ndarray:  # noqa: ANN001
    """U for the rows of F0 (F0 itself when the groups never rejoin)."""
    F0 = np.ascontiguousarray(np.atleast_2d(F0), dtype=float)
    if not math.isfinite(rejoin_s):
        return F0.copy()
    dq, y, g, cum = _gd_table(clock, rejoin_s)
    U = np.empty_like(F0)
    _renewal_kernel(np.ascontiguousarray(tau), F0, float(rejoin_s), clock.mean_s, dq, y, g, cum,
                    U)
    return U


@lru_cache(maxsize=64)
def first_process(N: int, law: tuple, rejoin_s: float, horizon_s: float) -> GroupProcess:
    """The run's first cycle: every clock fresh at t = 0 (F0 = 1 − S(τ)). ``law`` is the failure
    law key of :func:`~spare_lib.theory.predict.curves._law_key` (its fields: dist, shape, m, T_r,
    compute per stack, T_a, and two mechanism flags)."""
    dist, shape, mtbf, _tr, cs, ta = law[:6]
    clock = _clock(dist, N * mtbf, shape)
    tau = rejoin_grid(clock.mean_s, rejoin_s, horizon_s, cs + ta)
    F0 = 1.0 - clock.survival(tau)
    return GroupProcess(tau, _solve(clock, tau, F0, rejoin_s), np.ones(1), 0.0, rejoin_s)


@lru_cache(maxsize=64)
def restart_processes(N: int, law: tuple, rejoin_s: float, horizon_s: float):
    """Cycles after a global restart: [(t0, GroupProcess)] for the transient restart times t0 of
    :func:`~spare_lib.theory.predict.curves.transient_restart_times` (Weibull clocks), then the
    equilibrium one (t0 = None). F0 is the failed fraction x(τ) of each restart node, read off
    the curves' τ grid (linear interpolation; x = its last value, ≈ 1, beyond it); one solve for
    all the rows."""
    dist, shape, mtbf, _tr, cs, ta = law[:6]
    clock = _clock(dist, N * mtbf, shape)
    tau = rejoin_grid(clock.mean_s, rejoin_s, horizon_s, cs + ta)
    kinds, _eq = _law_curves(N, law)
    t0s: list[float | None] = []
    if clock.shape != 1.0:
        t0s += transient_restart_times(clock)
    t0s.append(None)
    rows, spans, meta = [], [], []
    for t0 in t0s:
        curves, R = kinds[("steady", t0)]
        x = curves.x
        a = len(rows)
        rows += [np.interp(tau, curves.tau, xi) for xi in x]
        spans.append((a, len(rows)))
        meta.append((t0, np.array(curves.w, dtype=float), R))
    U = _solve(clock, tau, np.stack(rows), rejoin_s)
    return [(t0, GroupProcess(tau, U[a:b], w, R, rejoin_s))
            for (t0, w, R), (a, b) in zip(meta, spans, strict=True)]


def clear_caches() -> None:
    """Forget the memoised group processes."""
    first_process.cache_clear()
    restart_processes.cache_clear()
