"""One group's failure law when failed groups rejoin (spare+repair, elastic-drop, elastic-rebalance).

A group of these methods alternates between two phases: alive until its clock fires (the failure
is noticed at the group's next poll), then away until the first step start after its rejoin time
(notice + R, R = ``rejoin_s``), R' = R + that wait on average (SPEC §3 and
``docs/strategies.md`` §2). The event core renews its clock at the notice and absorbs the failures
up to the rejoin time; one that falls in the wait for the step start is not absorbed: the group
comes back failed and is noticed at its first poll. Its *counted* failures — the ones noticed
while it was alive — form a delayed renewal process:

* the first counted failure of a cycle has the law F0 of the cycle's kind: fresh clocks for the
  run's first cycle (F0 = 1 − S(τ)), or, after a global restart, the failed fraction x(τ) of
  :func:`~spare_lib.theory.predict.curves._law_curves` (equilibrium or transient clock ages,
  conditioned on the restart windows, with the groups that fail while waiting at the restart
  barrier as an atom at τ = 0);
* from a notice to the next counted one the time is D = R + max(W, Y), W the wait for the step
  start and Y the residual after R of a clock started fresh at the notice:
  G_D(t) = P(D ≤ t) = P(W ≤ t − R)·(1 − R_R(t − R)) for t ≥ R (R_t0(y) is
  :meth:`~spare_lib.theory.predict.terms.Clock.no_failure`, the renewal argument of clocks that
  are never reset), 0 below.

So U(τ), the expected counted failures by τ, solves the renewal equation

    U(τ) = F0(τ) + ∫_[0,τ] G_D(τ − s) dU(s),

and, since a group has at most one notice per time away, it is away at τ with probability
a(τ) = U(τ) − E[U(τ − R − W)] (R = ∞: a = F0, the groups of SPARe+CKPT). The groups'
clocks are independent, so the groups away at τ are Binomial(N, a(τ)), and those noticed in any
window [τ − w, τ] Binomial(N, U(τ) − U(τ − w)); the cycle model
(:mod:`spare_lib.theory.predict.rejoin`) takes it from there.

U is solved by product integration on a τ grid fine near 0 (the rejoin ramp), at the clock's
scale N·m and out to the run's horizon: the mass of each cell is spread uniformly over it, so
U_i = F0_i + U_0·G_D(τ_i) + Σ_{j ≤ i} (U_j − U_{j−1})·Ḡ_ij with Ḡ_ij the exact mean of G_D(τ_i − s)
over cell j (from the integral of G_D, exact for G_D linear between the points of its table),
implicit in U_i only through the cell ending at τ_i (a numba kernel; its
plain oracle is a Monte Carlo of the group process in ``tests/theory/test_predict_rejoin.py``).
The wait W from the rejoin time to the step start is taken uniform on [0, 2·W̄] (the residual of a
step of fixed length 2·W̄; W̄ the mean wait of the cycle's step law, ``wait_s``, from
:func:`~spare_lib.theory.predict.rejoin_model.rejoin_cycles`), in G_D (G_D(t) = P(W ≤ t − R)·(1 −
R_R(t − R)): a group is counted again only once it is back) and in the away window of
:meth:`GroupProcess.away`. Before, the renewal had every group back at R exactly while the
away window kept it away until R + W̄: a failure in the wait was counted while the group was
still held away, which made a(τ) and the live groups' failure rate too high around the returns,
most after a global restart, whose first poll notices a third of the groups together at a
two-minute system MTBF (``tests/theory/test_predict_rejoin.py`` puts both against a Monte Carlo
of one group with step starts; notebook 55 §5).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit

from spare_lib.theory.predict.curves import _clock, _law_curves, transient_restart_times

#: Points of the G_D table: uniform in log(1 + y/M) on [0, log 81] (as the clock's tables), and
#: uniform over the wait for the next step start.
_GD_POINTS = 512
_GD_WAIT_POINTS = 64


@njit(cache=True, nogil=True)
def _renewal_kernel(tau, F0, R, y, g, cum, U):  # pragma: no cover - jit
    """Solve U = F0 + G_D * dU on the grid ``tau`` for every row of F0, the mass of each cell
    spread uniformly over the cell, so that its weight is the exact mean of G_D(τ_i − s) over
    it, (IG(τ_i − τ_{j−1}) − IG(τ_i − τ_j))/Δ_j with IG = ∫ G_D; the atom U[:, 0] = F0[:, 0] at
    τ = 0 weighs G_D(τ_i). G_D(R + x) is the table (y, g), linear between its points, 0 below
    R and its last value past it; ``cum`` its integral at the points (IG between them exact for
    the linear G_D). Oracle: the Monte Carlo of the group process in the tests."""
    m, n = F0.shape
    acc = np.empty(m)
    for k in range(m):
        U[k, 0] = F0[k, 0]
    for i in range(1, n):
        g0 = 0.0  # G_D(τ_i), for the atom
        v = tau[i] - R
        if v > 0.0:
            if v >= y[y.size - 1]:
                g0 = g[g.size - 1]
            else:
                c = np.searchsorted(y, v, side="right") - 1
                g0 = g[c] + (v - y[c]) * (g[c + 1] - g[c]) / (y[c + 1] - y[c])
        for k in range(m):
            acc[k] = F0[k, i] + U[k, 0] * g0
        gii = 0.0
        hi = 0.0  # IG(τ_i − τ_j) for j = i
        c = 0  # the table's cell of τ_i − τ_(j−1) − R, which grows as j falls
        for j in range(i, 0, -1):
            v = tau[i] - tau[j - 1] - R
            if v <= 0.0:
                lo = 0.0
            elif v >= y[y.size - 1]:
                lo = cum[y.size - 1] + (v - y[y.size - 1]) * g[y.size - 1]
            else:
                while y[c + 1] <= v:
                    c += 1
                d = v - y[c]
                lo = cum[c] + d * g[c] + 0.5 * d * d * (g[c + 1] - g[c]) / (y[c + 1] - y[c])
            w = (lo - hi) / (tau[j] - tau[j - 1])
            hi = lo
            if j == i:
                gii = w
            elif w > 0.0:
                for k in range(m):
                    acc[k] += (U[k, j] - U[k, j - 1]) * w
        for k in range(m):
            U[k, i] = (acc[k] - U[k, i - 1] * gii) / (1.0 - gii)


def rejoin_grid(mean_s: float, rejoin_s: float, horizon_s: float, t_step: float,
                wait_s: float = 0.0) -> np.ndarray:
    """τ grid of a rejoining cycle: 0; 96 cells over the first 4·R (the rejoin ramp and the
    return of the groups that were dead at the first poll); 192 log-spaced points from a quarter
    step to the horizon; 128 uniform points over the clock's transient (12 (N·m + R)) and 128
    over the whole horizon; R itself, and R + 2·``wait_s`` (the last return), without the points
    within 1e-9 of the horizon of another (a cell of ~1e-13 s would make dU/dτ explode)."""
    H = float(horizon_s)
    R = float(rejoin_s) if math.isfinite(rejoin_s) else H
    parts = [np.linspace(0.0, min(4.0 * R, H), 97),
             np.geomspace(min(0.25 * t_step, H / 1e4), H, 192),
             np.linspace(0.0, min(12.0 * (mean_s + R), H), 129), np.linspace(0.0, H, 129)]
    tol = 1e-9 * H
    for x in {R, R + 2.0 * float(wait_s)}:
        if x < H:
            parts = [p[np.abs(p - x) > tol] for p in parts] + [np.array([x])]
    tau = np.unique(np.concatenate(parts))
    tau = tau[np.concatenate(([True], np.diff(tau) > tol))]
    tau.setflags(write=False)
    return tau


class GroupProcess:
    """U(τ) of one cycle kind on a τ grid: ``U`` (nodes, τ), node weights ``w`` (the law of the
    restart's duration, :func:`~spare_lib.theory.predict.curves.restart_end_nodes`; one node of
    weight 1 for the first cycle), the restart's mean duration ``restart_s`` (0 for the first
    cycle), the rejoin time R (``inf``: the groups never come back) and the mean wait from it to
    a group's return, ``wait_s`` (uniform on [0, 2·wait_s])."""

    def __init__(self, tau: np.ndarray, U: np.ndarray, w: np.ndarray, restart_s: float,
                 rejoin_s: float, wait_s: float = 0.0) -> None:
        self.tau, self.U, self.w = tau, U, w
        self.restart_s, self.rejoin_s = float(restart_s), float(rejoin_s)
        self.wait_s = float(wait_s)
        U.setflags(write=False)
        w.setflags(write=False)

    def away(self, rejoin_window_s: float, spread_s: float = 0.0) -> np.ndarray:
        """a(τ) = U(τ) − E[U(τ − R')] (nodes, τ): P(a group is away at τ) when it is away R',
        uniform on [window − spread, window + spread] (spread 0: U(τ) − U(τ − window)); the
        mean of U over the window's law exact for U linear between the grid's points."""
        if not math.isfinite(rejoin_window_s):
            return np.clip(self.U, 0.0, 1.0)
        if spread_s <= 0.0:
            back = np.stack([np.interp(self.tau - rejoin_window_s, self.tau, u, left=0.0)
                             for u in self.U])
            return np.clip(self.U - back, 0.0, 1.0)
        tau = self.tau
        cu = np.concatenate((np.zeros((self.U.shape[0], 1)), np.cumsum(
            0.5 * (self.U[:, 1:] + self.U[:, :-1]) * np.diff(tau), axis=1)), axis=1)

        def antiderivative(x: np.ndarray) -> np.ndarray:  # ∫_0^x U (0 for x ≤ 0)
            i = np.clip(np.searchsorted(tau, x, side="right") - 1, 0, tau.size - 2)
            d = np.clip(x - tau[i], 0.0, None)
            slope = (self.U[:, i + 1] - self.U[:, i]) / (tau[i + 1] - tau[i])
            out = cu[:, i] + d * self.U[:, i] + 0.5 * d * d * slope
            return np.where(x > 0.0, out, 0.0)

        hi = antiderivative(tau - (rejoin_window_s - spread_s))
        lo = antiderivative(tau - (rejoin_window_s + spread_s))
        return np.clip(self.U - (hi - lo) / (2.0 * spread_s), 0.0, 1.0)


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
    memo = clock.__dict__.setdefault("_renewal_masses", {})  # per t0, kept on the clock
    if t0 not in memo:
        f = -np.diff(clock.survival(h * np.arange(n + 1)))
        m = np.empty(n)
        for j in range(n):  # O(n²) = 2.6e5 flops, vectorised per row
            m[j] = f[j] + (m[:j] @ f[j - 1::-1] if j else 0.0)
        m.setflags(write=False)
        memo[t0] = m
    m = memo[t0]
    mid = h * (np.arange(n) + 0.5)
    out = clock.survival(t0 + y)
    for a in np.array_split(np.arange(y.size), max(1, y.size // 64)):
        out[a] += clock.survival_inplace(np.add.outer(t0 + y[a], -mid)) @ m
    return np.clip(out, 0.0, 1.0)


def _gd_table(clock, rejoin_s: float, wait_s: float = 0.0) -> tuple:  # noqa: ANN001 - a Clock
    """(y, G_D(R + y), ∫_0^y G_D(R + x) dx) on y ∈ [0, 80·M] (uniform in log(1 + y/M), and
    uniform over [0, 2·wait_s]): G_D(R + y) = P(W ≤ y)·(1 − R_R(y)), W uniform on
    [0, 2·wait_s] (:func:`residual_survival`; the integral exact for G_D linear between the
    points). Kept on the clock per (R, wait): a cycle's first and restart processes share it."""
    memo = clock.__dict__.setdefault("_gd_tables", {})
    if (rejoin_s, wait_s) not in memo:
        memo[(rejoin_s, wait_s)] = _gd_table_new(clock, rejoin_s, wait_s)
    return memo[(rejoin_s, wait_s)]


def _gd_table_new(clock, rejoin_s: float, wait_s: float) -> tuple:  # noqa: ANN001 - a Clock
    """:func:`_gd_table` computed."""
    y = clock.mean_s * np.expm1(np.linspace(0.0, np.log1p(80.0), _GD_POINTS))
    if wait_s > 0.0:
        y = np.unique(np.concatenate((y, np.linspace(0.0, 2.0 * wait_s, _GD_WAIT_POINTS + 1))))
    vals = np.maximum.accumulate(1.0 - residual_survival(clock, float(rejoin_s), y))
    if wait_s > 0.0:
        vals = vals * np.minimum(y / (2.0 * wait_s), 1.0)
    cum = np.concatenate(([0.0], np.cumsum(0.5 * (vals[1:] + vals[:-1]) * np.diff(y))))
    out = (y, np.ascontiguousarray(vals), cum)
    for a in out:
        a.setflags(write=False)
    return out


def _solve(clock, tau: np.ndarray, F0: np.ndarray, rejoin_s: float,  # noqa: ANN001
           wait_s: float = 0.0) -> np.ndarray:
    """U for the rows of F0 (F0 itself when the groups never rejoin); ``wait_s``: the mean wait
    from the rejoin time to the group's return (the module docstring)."""
    F0 = np.ascontiguousarray(np.atleast_2d(F0), dtype=float)
    if not math.isfinite(rejoin_s):
        return F0.copy()
    y, g, cum = _gd_table(clock, rejoin_s, wait_s)
    U = np.empty_like(F0)
    _renewal_kernel(np.ascontiguousarray(tau), F0, float(rejoin_s), y, g, cum, U)
    return U


@lru_cache(maxsize=64)
def first_process(N: int, law: tuple, rejoin_s: float, horizon_s: float,
                  wait_s: float = 0.0) -> GroupProcess:
    """The run's first cycle: every clock fresh at t = 0 (F0 = 1 − S(τ)). ``law`` is the failure
    law key of :func:`~spare_lib.theory.predict.curves._law_key` (its fields: dist, shape, m, T_r,
    compute per stack, T_a, and two mechanism flags); ``wait_s``: the mean wait from a rejoin
    time to the group's return (the module docstring)."""
    dist, shape, mtbf, _tr, cs, ta = law[:6]
    clock = _clock(dist, N * mtbf, shape)
    tau = rejoin_grid(clock.mean_s, rejoin_s, horizon_s, cs + ta, wait_s)
    F0 = 1.0 - clock.survival(tau)
    return GroupProcess(tau, _solve(clock, tau, F0, rejoin_s, wait_s), np.ones(1), 0.0, rejoin_s,
                        wait_s)


@lru_cache(maxsize=64)
def restart_processes(N: int, law: tuple, rejoin_s: float, horizon_s: float,
                      wait_s: float = 0.0):
    """Cycles after a global restart: [(t0, GroupProcess)] for the transient restart times t0 of
    :func:`~spare_lib.theory.predict.curves.transient_restart_times` (Weibull clocks), then the
    equilibrium one (t0 = None). F0 is the failed fraction x(τ) of each restart node, read off
    the curves' τ grid (linear interpolation; x = its last value, ≈ 1, beyond it); one solve for
    all the rows. ``wait_s`` as for :func:`first_process`."""
    dist, shape, mtbf, _tr, cs, ta = law[:6]
    clock = _clock(dist, N * mtbf, shape)
    tau = rejoin_grid(clock.mean_s, rejoin_s, horizon_s, cs + ta, wait_s)
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
    U = _solve(clock, tau, np.stack(rows), rejoin_s, wait_s)
    return [(t0, GroupProcess(tau, U[a:b], w, R, rejoin_s, wait_s))
            for (t0, w, R), (a, b) in zip(meta, spans, strict=True)]


def clear_caches() -> None:
    """Forget the memoised group processes."""
    first_process.cache_clear()
    restart_processes.cache_clear()
