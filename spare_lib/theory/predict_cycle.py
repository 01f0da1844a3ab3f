"""Cycle machinery of the predictive model (:mod:`spare_lib.theory.predict`).

A run is a sequence of cycles (training from the last checkpoint until a wipe-out, then a
global restart). This module turns the failure-law curves of each kind of cycle (first,
steady, transient: :mod:`spare_lib.theory.predict_curves`) into one cycle's survival, step time
and depth on a τ grid (the wipe-out law under Binomial failures is
:func:`~spare_lib.theory.predict_terms._binomial_moments`), and assembles the run
(:func:`_run_on_lattice`): a chain over the checkpoint lattice — the steps left, in multiples of
C — whose expected time, restarts and rework one forward sweep gives (numba kernels, with the
numpy oracle of the per-cycle arrays in ``tests/theory/test_predict_run.py``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit
from scipy.special import ndtr

from spare_lib.theory.finite import mu_finite as mu_finite  # (re-exported for the tests)
from spare_lib.theory.predict_curves import (
    _TAU_CHUNK,
    _TAU_MARGIN,
    _Cfg,
    _clock,
    _Curves,
    _curves,
    _gradient,
    _gradient_coefficients,
    _law_curves,
    _law_key,
    _tau_grid_cached,
    transient_restart_times,
)
from spare_lib.theory.predict_curves import _cfg_key as _cfg_key  # (re-exported)
from spare_lib.theory.predict_curves import restart_end_nodes as restart_end_nodes  # (re-exported)
from spare_lib.theory.predict_curves import (  # (re-exported)
    restart_end_nodes_many as restart_end_nodes_many,
)
from spare_lib.theory.predict_terms import (
    _binomial_moments,
    _mu_index,
    _n_tables,
    emax_std_normal,
    expected_max_stack_sum,
)
from spare_lib.theory.predict_terms import _p0_table as _p0_table  # (re-exported)

# ---------------------------------------------------------------------------------------------
# one training cycle (from a restart's end, or from t = 0 with fresh clocks)
# ---------------------------------------------------------------------------------------------

class NoTrainingCycle(ValueError):
    """The cluster never trains: a cycle is wiped out at its first poll with probability
    ≥ 1 − 1e-9 (groups fail faster than the restart windows let them through), so TTT is
    unbounded and the model has no cycle to describe."""


class _Cycle:
    """Survival G(τ) of the uptime and progress V(τ) on a τ grid, with the derived moments.

    The grid's spacings and gradient coefficients are kept (and shared with
    :meth:`with_checkpoints`), so the integrals of the warm path (:meth:`trapz`,
    :meth:`gradient`) skip numpy's per-call set-up; same arithmetic as ``np.trapezoid`` and
    ``np.gradient``.
    """

    def __init__(self, tau, G, step, depth, events, n_surv, delay, *, _grid=None, _U=None):
        self.tau, self.G, self.step, self.depth, self.events = tau, G, step, depth, events
        self.n_surv = n_surv
        self.delay = delay  # wipe-out noticed at the end of the attempt: uptime after the failure
        self._grid = _gradient_coefficients(tau) if _grid is None else _grid
        self.dtau = self._grid[0]
        self.rate = 1.0 / step  # committed steps per wall second (checkpoint time included)
        self.V = np.concatenate(([0.0], np.cumsum(0.5 * (self.rate[1:] + self.rate[:-1])
                                                   * self.dtau)))
        self.U = self.trapz(G) + delay if _U is None else _U

    def trapz(self, y: np.ndarray) -> float:
        """∫ y dτ on the cycle's grid (``np.trapezoid(y, tau)``)."""
        return float((self.dtau * (y[1:] + y[:-1]) / 2.0).sum())

    def gradient(self, y: np.ndarray) -> np.ndarray:
        """dy/dτ on the cycle's grid (``np.gradient(y, tau)``)."""
        return _gradient(y, self.tau, self._grid)

    def with_checkpoints(self, ckpt_per_step: float) -> _Cycle:
        """The same cycle with T_s/C of checkpoint writing added to every committed step."""
        return _Cycle(self.tau, self.G, self.step + ckpt_per_step, self.depth, self.events,
                      self.n_surv, self.delay, _grid=self._grid, _U=self.U)


#: A cycle's τ grid ends at the first point where P(no wipe-out) ≤ this (no layout survives).
_G_FLOOR = 1e-9


def _survival_prefix(method, N, r, layout, curves_list: list[_Curves]):
    """Binomial moments of cycles on the τ prefix each keeps: up to and including the first
    point where the mixture P_x ≤ 1e-9 (P_x decreases along τ, so the rest of the grid would be
    dropped anyway); one kernel call for all the cycles' nodes. Returns, per cycle,
    (n kept, node-weighted P_x (nodes, n), moments (4, nodes, n))."""
    tables = _n_tables(method, N, r, layout)
    out: dict[int, tuple] = {}
    if len(curves_list) > 1:
        # the first curve (fresh clocks: cheap) guides where the others' sources start
        out[0] = _survival_prefix(method, N, r, layout, curves_list[:1])[0]
        for c in curves_list[1:]:
            if c.source.filled == 0:
                c.hint = min(c.tau.size, out[0][0] + _TAU_MARGIN)
    todo = [k for k in range(len(curves_list)) if k not in out]
    # start from every point already computed (moments are cheap, filling more x is not)
    n = {k: min(max(c.hint, c.source.filled), c.tau.size) for k, c in enumerate(curves_list)}
    while todo:
        xs = [curves_list[k].x_prefix(n[k]) for k in todo]
        sizes = np.cumsum([x.size for x in xs])[:-1]
        flat = _binomial_moments(tables, N, np.concatenate([x.ravel() for x in xs]))
        parts = [np.split(a, sizes) for a in flat]
        nxt = []
        for j, k in enumerate(todo):
            c = curves_list[k]
            px_i, *mom = (p[j].reshape(xs[j].shape) for p in parts)
            wi = c.w[:, None] * px_i
            cut = np.nonzero(wi.sum(0) <= _G_FLOOR)[0]
            if cut.size or n[k] == c.tau.size:
                end = int(cut[0]) + 1 if cut.size else n[k]
                c.hint = max(c.hint if c.source.used else 0, end + 2)
                c.source.used = True
                out[k] = (end, wi[:, :end], np.stack(mom)[:, :, :end])
            else:
                n[k] = min(c.tau.size, n[k] + _TAU_CHUNK)
                nxt.append(k)
        todo = nxt
    return [out[k] for k in range(len(curves_list))]


def _cycle(method, N, r, cfg, layout, curves: _Curves, mech):
    """One cycle of (method, N, r) under a failure law: survival G(τ), step time, depth
    (:func:`_cycle_batch` of one)."""
    return _cycle_batch(method, N, r, cfg, layout, [curves], mech)[0]


def _cycle_batch(method, N, r, cfg, layout, curves_list: list[_Curves], mech) -> list[_Cycle]:
    """Cycles of (method, N, r) under several failure laws: survival G(τ), step time, depth.

    Every quantity is elementwise in τ, so the cycles are computed together on a (cycles, τ)
    array padded to the longest kept prefix (the padding is sliced off at the end)."""
    # the far tail where no layout survives is dropped (keeps the integrals cheap)
    pre = _survival_prefix(method, N, r, layout, curves_list)
    ends = [e for e, _, _ in pre]
    if min(ends) < 2:
        raise NoTrainingCycle(
            f"no training cycle: for ({method}, N={N}, r={r}) P(no wipe-out) is already "
            f"≤ {_G_FLOOR:g} at the first poll of a cycle (groups fail faster than the restart "
            f"windows let them through); the model cannot describe this cluster")
    m = max(ends)
    K = len(curves_list)
    rows = np.zeros((6, K, m))  # px, n, S, ph0, n0, λ per cycle, zero beyond each end
    for k, (c, (end, wi, (n_i, S_i, ph0_i, n0_i))) in enumerate(zip(curves_list, pre,
                                                                    strict=True)):
        px = wi.sum(0)
        acc = np.stack([n_i, S_i, ph0_i, n0_i, c.hz_prefix(end) * np.maximum(N - n_i, 0.0)])
        rows[0, k, :end] = px
        rows[1:, k, :end] = (acc * wi).sum(1) / np.maximum(px, 1e-300)
    px, n_s, S_s, ph0_s, n0_s, lam = rows
    ta, f, sh = cfg.allreduce_s, cfg.allreduce_fail_factor, cfg.shrink_s
    cs = cfg.compute_per_stack_s
    alive = np.maximum(np.rint(N - n_s), 1).astype(int)
    sig = cfg.jitter_sigma if "barrier" in mech else 0.0
    lo = cfg.jitter_min

    clip_free = sig == 0.0 or ndtr((lo - 1.0) / sig) < 1e-15

    def emax(S, n):
        """E[max over n live groups of S jittered stacks] (in stacks)."""
        S = np.broadcast_to(np.asarray(S, dtype=float), n.shape)
        if clip_free:
            return S + sig * np.sqrt(S) * emax_std_normal(n)
        return np.array([expected_max_stack_sum(int(a), int(b), sig, lo)
                         for a, b in zip(S.ravel(), n.ravel(), strict=True)]).reshape(n.shape)

    if method == "spare":
        S_lo = np.maximum(np.floor(S_s), 1.0)
        frac = np.clip(S_s - S_lo, 0.0, 1.0)
        # compute at the mean depth: interpolate E[max] between the neighbouring integer depths
        comp = cs * ((1 - frac) * emax(S_lo, alive) + frac * emax(S_lo + 1, alive))
    else:
        comp = cs * (r if method == "rep" else 1) * emax(1.0, alive)
    base = comp + ta
    events = np.zeros_like(px)
    if "failure_events" in mech and method != "ckpt":
        if method == "spare":
            p = np.clip(ph0_s, 0.0, 1.0)
            # retry: patch compute — a whole new layer when S grows (the first failure of a
            # cycle, n = 0), else one stack on each survivor that received a moved type (about
            # as many as the dying group's singly covered types) — then a full all-reduce
            s1 = 1.0 - np.clip(p, 1e-12, 1.0) ** (1.0 / np.maximum(S_s, 1.0))
            moved = np.maximum(S_s * s1 / np.maximum(1.0 - p, 1e-12), 1.0)
            patch = n0_s * cs * emax(1.0, alive) + (1 - n0_s) * cs * emax(1.0, moved)
        wall = base
        for _ in range(2):  # failures arrive per wall second, retries included
            a = lam * wall
            q1 = -np.expm1(-a)  # P(≥ 1 failure in the attempt)
            events = q1 * ((f - 1.0) * ta + sh)
            if method == "spare":
                # phase-0 share of events with J ~ Poisson(a) failures: E[p^J | J ≥ 1]
                p_ph0 = np.where(q1 > 1e-12, (np.exp(-a * (1 - p)) - np.exp(-a)) /
                                 np.maximum(q1, 1e-300), p)
                events = events + q1 * (1 - p_ph0) * (patch + ta)
            wall = base + events
    step = base + events
    out = []
    for k, (c, end) in enumerate(zip(curves_list, ends, strict=True)):
        delay = float(0.5 * comp[k, end - 1] + f * ta) if "failure_events" in mech else 0.0
        out.append(_Cycle(c.tau[:end], px[k, :end], step[k, :end], S_s[k, :end],
                          events[k, :end], n_s[k, :end], delay,
                          _grid=c.source.grid_prefix(end)))
    return out


@lru_cache(maxsize=2048)
def _cycles(method: str, N: int, r: int, layout: str, mech: tuple[str, ...], key: tuple):
    """Restart duration, first cycle (fresh clocks), steady cycle (equilibrium ages) and the
    transient cycles after restarts at t0 < t_eq, without checkpoint costs."""
    cfg = _Cfg(key)
    clock = _clock(cfg.failure_dist, N * cfg.system_mtbf_s, cfg.weibull_shape)
    windows, prefail = 1.0, 0.0
    kinds = [_curves(N, mech, key, "first", None)[0]]
    if "restart_windows" in mech:
        curves, R = _curves(N, mech, key, "steady", None)
        windows = _law_curves(N, _law_key(key, mech))[1].windows_per_group
    else:
        curves, R = _curves(N, mech, key, "none", None)
        R = float(cfg.restart_s)
    kinds.append(curves)
    # restarts that start before the clocks reach equilibrium (clocks are never reset: at time t0
    # after the fresh start a Weibull clock with k < 1 fails sooner than an equilibrium one;
    # exponential clocks are memoryless, so they need no transient)
    t0s, Rts = [], []
    if "failure_law" in mech and "restart_windows" in mech and clock.shape != 1.0:
        for t0 in transient_restart_times(clock):
            c_t, R_t = _curves(N, mech, key, "steady", t0)
            kinds.append(c_t)
            t0s.append(t0)
            Rts.append(R_t)
    first, ss, *cyc_t = _cycle_batch(method, N, r, cfg, layout, kinds, mech)
    transient = list(zip(t0s, Rts, cyc_t, strict=True))
    if "restart_windows" in mech and "failure_law" in mech:  # (after the batch: it fills x)
        prefail = float(np.sum(curves.w * curves.x_prefix(1)[:, 0]))
    return R, windows, prefail, first, ss, transient, clock.t_equilibrium


def _checkpointed_progress(cyc: _Cycle, C: int | None, steps: int) -> float:
    """Mean checkpointed progress of one cycle (run of ``steps``): C·Σ_j G(τ_j) over its
    checkpoints j·C ≤ min(V_max, steps), τ_j the time of the j-th (0 without checkpoints)."""
    if C is None:
        return 0.0
    tau, G, V = cyc.tau, cyc.G, cyc.V
    j = np.arange(1, int(min(V[-1] // C, steps // C)) + 1)
    return C * float(np.interp(np.interp(j * C, V, tau), tau, G).sum())


def _time_to(cyc: _Cycle, s: float) -> tuple[float, float]:
    """(wall time to commit s steps in this cycle without a wipe-out, P(no wipe-out by then))."""
    if s >= cyc.V[-1]:
        return float(cyc.tau[-1] + (s - cyc.V[-1]) / cyc.rate[-1]), 0.0
    t = float(np.interp(s, cyc.V, cyc.tau))
    return t, float(np.interp(t, cyc.tau, cyc.G))


# ---------------------------------------------------------------------------------------------
# the run: a chain over the states of the checkpoint lattice
# ---------------------------------------------------------------------------------------------

#: Rows of the per-state array of :func:`_unit_law`.
_A, _GT, _RW, _LAST, _ELAST = range(5)
#: Floor of a probability the chain divides by: a unit that (almost) never gets past its first
#: checkpoint, or never finishes the last stretch (TTT then of order 1e12 units, not inf).
_P_FLOOR = 1e-12


@njit(cache=True, nogil=True)
def _unit_law_kernel(tau, G, step, delay, ckpt, C, steps, S, I):  # pragma: no cover - jit
    """Numba kernel of :func:`_unit_law` (oracle: the numpy version in
    ``tests/theory/test_predict_run.py``): fills S (5, M + 1) and I[:, :J + 1] (I zero on
    entry), returns J. ``step`` is the cycle's step time without checkpoints, ``ckpt`` the
    checkpoint time per step; C = 0: no checkpoints (one state, ``steps``)."""
    n = tau.size
    M = S.shape[1] - 1
    # progress V (the trapezoid rule of _Cycle.V) and ∫_0^τ G (that of _Cycle.trapz)
    V = np.empty(n)
    cum = np.empty(n)
    V[0] = 0.0
    cum[0] = 0.0
    for k in range(1, n):
        dt = tau[k] - tau[k - 1]
        V[k] = V[k - 1] + 0.5 * (1.0 / (step[k] + ckpt) + 1.0 / (step[k - 1] + ckpt)) * dt
        cum[k] = cum[k - 1] + 0.5 * dt * (G[k] + G[k - 1])
    J = min(M, int(V[n - 1] // C)) if C > 0 else 0
    # times, survival and ∫G at the M + 1 states' ends and at the checkpoints 1..J (each an
    # increasing sequence: one merge along the grid; linear in V and in τ, as np.interp)
    tm = np.empty(M + 1)
    gt = np.empty(M + 1)
    Im = np.empty(M + 1)
    tc = np.zeros(M + 2)
    Gc = np.zeros(M + 2)
    Ic = np.full(M + 2, cum[n - 1])
    Gc[0] = 1.0
    Ic[0] = 0.0
    r0 = steps - M * C if C > 0 else steps
    for part in range(2):
        k = 0
        cnt = M + 1 if part == 0 else J
        for i in range(cnt):
            v = float(r0 + i * C) if part == 0 else float((i + 1) * C)
            if part == 0 and v >= V[n - 1]:  # beyond the grid (G ≤ 1e-9): never finished
                tm[i] = tau[n - 1]
                gt[i] = 0.0
                Im[i] = cum[n - 1]
                continue
            while k < n - 2 and V[k + 1] <= v:
                k += 1
            t = tau[k] + (v - V[k]) * (tau[k + 1] - tau[k]) / (V[k + 1] - V[k])
            g = G[k] + (t - tau[k]) * (G[k + 1] - G[k]) / (tau[k + 1] - tau[k])
            integ = cum[k] + 0.5 * (t - tau[k]) * (G[k] + g)
            if part == 0:
                tm[i] = t
                gt[i] = g
                Im[i] = integ
            else:
                tc[i + 1] = t
                Gc[i + 1] = g
                Ic[i + 1] = integ
    ck = 0.0  # Σ_{j<m} τ_j dG_j
    for m in range(M + 1):
        dg = Gc[m] - Gc[m + 1]
        fail = 1.0 - gt[m]
        last = Gc[m] - gt[m]
        S[_A, m] = Im[m] + delay * fail
        S[_GT, m] = gt[m]
        S[_LAST, m] = last
        S[_ELAST, m] = tc[m] * Gc[m] - tm[m] * gt[m] + Im[m] - Ic[m] + delay * last
        S[_RW, m] = S[_A, m] - tm[m] * gt[m] - (ck + tc[m] * last)
        ck += tc[m] * dg
        if m <= J:
            I[0, m] = dg
            I[1, m] = (tc[m] * Gc[m] - tc[m + 1] * Gc[m + 1] + Ic[m + 1] - Ic[m]
                       + delay * dg)
    return J


def _unit_law(cyc: _Cycle, C: int | None, steps: int,
              ckpt_per_step: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """One cycle on the checkpoint lattice: how a unit (a restart, then this cycle) started in
    state m ends. A unit starts at a checkpoint, so state m has s_m = r0 + m·C steps to go,
    m = 0..M, M = ⌊(steps − 1)/C⌋, r0 = steps − M·C ∈ [1, C] (C = None: one state, s_0 =
    steps).

    With V(τ) the cycle's progress (``ckpt_per_step`` added to its step time), τ_j its j-th
    checkpoint (V(τ_j) = j·C, τ_0 = 0) and t_m the time it commits s_m steps (V(t_m) = s_m),
    the uptime Y (P(Y > τ) = G(τ); Y = 0 for a wipe-out at the first poll, which is noticed
    ``delay`` after it) ends the cycle

    * with the last step committed: probability G(t_m), after t_m;
    * in a wipe-out between checkpoints j and j + 1 (j < m): probability dG_j = G(τ_j) −
      G(τ_{j+1}) (G(τ_0) := 1), in state m − j;
    * in a wipe-out after its last checkpoint τ_m: probability last_m = G(τ_m) − G(t_m), in
      state 0.

    Returns per state (5, M + 1): a = E[time in the cycle] = ∫_0^{t_m} G + delay·(1 −
    G(t_m)), G(t_m), rw = E[uptime after the last checkpoint; wipe-out] (rework), last_m and
    eLast_m = E[Y + delay; wipe-out after τ_m]; per interval (2, J + 1): dG_j and eJ_j =
    E[Y + delay; τ_j ≤ Y < τ_{j+1}] (J: the last checkpoint on the cycle's grid). Times are
    read off the grid as :func:`_time_to` does (linear in V and in τ; a state beyond the grid,
    where G ≤ 1e-9, is never finished); ∫G is :meth:`_Cycle.trapz` up to t, the last cell cut
    at t. Every entry is linear in the law, so mixing two laws mixes these arrays."""
    M = (steps - 1) // C if C else 0
    S = np.empty((5, M + 1))
    I = np.zeros((2, M + 1))
    J = _unit_law_kernel(cyc.tau, cyc.G, cyc.step, float(cyc.delay), float(ckpt_per_step),
                         int(C or 0), int(steps), S, I)
    return S, I[:, :J + 1]


#: The returns to a state are followed in blocks over which the restart time grows by at most
#: this fraction (the law of a restart is tabulated in log t0, so it hardly changes within a
#: block); typically a block is one visit.
_BLOCK_GROWTH = 0.02


@njit(cache=True, nogil=True)
def _geometric_block(x, n):  # pragma: no cover - jit
    """(Σ q^i, Σ i·q^i over 0 ≤ i < n, q^n) for q = 1 − x ∈ [0, 1), n ≥ 1 or ∞ (stable
    for q near 1: q^n = exp(n·log1p(−x)); the second sum by its series when n·x ≤ 1e-3)."""
    q = 1.0 - x
    if n == np.inf:
        return 1.0 / x, q / (x * x), 0.0
    ln = n * np.log1p(-x) if x < 1.0 else -np.inf
    qn = np.exp(ln)
    g0 = -np.expm1(ln) / x
    if -ln > 1e-3:
        g1 = (q * g0 - n * qn) / x
    else:  # Σ i·(1 − i·x), relative error < 1e-6
        g1 = n * (n - 1.0) / 2.0 - x * n * (n - 1.0) * (2.0 * n - 1.0) / 6.0
    return g0, g1, qn


@njit(cache=True, nogil=True)
def _law_at(t, t0):  # pragma: no cover - jit
    """(A, B, w): the law of a restart starting at t is (1 − w)·law A + w·law B — linear in
    log t0 between the tabulated laws 1..L − 1, the first of them before t0[1], the last (the
    equilibrium law) from t0[L − 1] on."""
    L = t0.size
    if t >= t0[L - 1]:
        return L - 1, L - 1, 0.0
    B = 1
    while B < L - 1 and t0[B] < t:
        B += 1
    A = max(B - 1, 1)
    if A == B or t <= t0[A]:
        return B, B, 0.0
    return A, B, np.log(t / t0[A]) / np.log(t0[B] / t0[A])


@njit(cache=True, nogil=True)
def _scatter(law, k, v, vt, keep_return, ctx, Dlo, Dhi, Elo, Ehi, S, I, pi, th):  # pragma: no cover - jit
    """Deposit the ends of ``v`` visits of state k under ``law`` (``vt``: Σ over them of
    start time + restart) on the arrivals of the states they leave for: arrivals ``pi`` and
    their start times ``th`` (the exit's start + restart + E[uptime] of the interval it ends
    in). ``keep_return``: also the visits that end in state k again (the first cycle's)."""
    g, K, b0, Bs, J = ctx
    f = _fine_index(k, ctx)
    if k == Bs:  # state 0: every wipe-out comes back
        if keep_return:
            pi[k] += v * S[law, _LAST, 0]
            th[k] += vt * S[law, _LAST, 0] + v * S[law, _ELAST, 0]
        return
    pi[Bs] += v * S[law, _LAST, f]  # a wipe-out after the last checkpoint: state 0
    th[Bs] += vt * S[law, _LAST, f] + v * S[law, _ELAST, f]
    # between checkpoints j and j + 1, j = a·g + b: fine state f − j, split between the coarse
    # states k + a and k + a + 1 in proportion to the distance (translation invariant)
    for a in range(min(K - k - 1, J // g) + 1):
        if a > 0 or keep_return:
            pi[k + a] += v * Dlo[law, a]
            th[k + a] += vt * Dlo[law, a] + v * Elo[law, a]
        if g > 1:
            pi[k + a + 1] += v * Dhi[law, a]
            th[k + a + 1] += vt * Dhi[law, a] + v * Ehi[law, a]
    if b0 > 0:  # below the lowest coarse state (fine b0): split between it and state 0
        for b in range(b0):
            j = (K - k) * g + b
            if j > J:
                break
            lo = (b0 - b) / b0
            if k < K or keep_return:
                pi[K] += v * I[law, 0, j] * lo
                th[K] += (vt * I[law, 0, j] + v * I[law, 1, j]) * lo
            pi[Bs] += v * I[law, 0, j] * (1.0 - lo)
            th[Bs] += (vt * I[law, 0, j] + v * I[law, 1, j]) * (1.0 - lo)


@njit(cache=True, nogil=True)
def _fine_index(k, ctx):  # pragma: no cover - jit
    """Fine state (steps left = r0 + C·index) of coarse state k."""
    g, K, b0, Bs, J = ctx
    return 0 if k == Bs else b0 + (K - k) * g


@njit(cache=True, nogil=True)
def _returns(law, k, ctx, Dlo, Elo, S, I):  # pragma: no cover - jit
    """(P, E[uptime + delay; ·]) of a visit of state k under ``law`` ending in state k
    again."""
    g, K, b0, Bs, J = ctx
    if k == Bs:
        return S[law, _LAST, 0], S[law, _ELAST, 0]
    if k < K:
        return Dlo[law, 0], Elo[law, 0]
    q = 0.0
    e = 0.0
    for b in range(min(b0, J + 1)):
        q += I[law, 0, b] * (b0 - b) / b0
        e += I[law, 1, b] * (b0 - b) / b0
    return q, e


@njit(cache=True, nogil=True)
def _chain_kernel(S, I, J, g, R, t0, out):  # pragma: no cover - jit
    """Numba kernel of :func:`_run_on_lattice`.

    S (L, 5, M + 1) and I (L, 2, ≥ J + 1) are the :func:`_unit_law` arrays of the laws on the
    fine lattice (I zero beyond each law's last checkpoint), R (L,) their restart means, t0
    (L,) the restart start times they hold at: law 0 is the first cycle (from t = 0, no
    restart), laws 1..L − 1 restarts at t0[1] < … < t0[L − 1] = t_eq (the last: equilibrium,
    also beyond). The chain runs on the coarse states k = 0..K at fine states M − k·g, plus
    fine state 0 when M is not a multiple of g (g = 1: the fine lattice itself). Writes
    out = (time, restarts, rework, restart time)."""
    L = S.shape[0]
    M = S.shape[2] - 1
    K = M // g
    b0 = M - K * g
    Bs = K + 1 if b0 > 0 else K  # state 0 (fine): the last stretch
    ctx = (g, K, b0, Bs, J)
    nJ = J // g + 1
    Dlo = np.zeros((L, nJ))
    Dhi = np.zeros((L, nJ))
    Elo = np.zeros((L, nJ))
    Ehi = np.zeros((L, nJ))
    for law in range(L):
        for j in range(J + 1):
            a = j // g
            hi = (j - a * g) / g
            Dlo[law, a] += I[law, 0, j] * (1.0 - hi)
            Dhi[law, a] += I[law, 0, j] * hi
            Elo[law, a] += I[law, 1, j] * (1.0 - hi)
            Ehi[law, a] += I[law, 1, j] * hi
    n = Bs + 1
    pi = np.zeros(n)  # arrivals at each state (restarts that start there)
    th = np.zeros(n)  # Σ over arrivals of their start time
    wv = np.zeros(L)  # visits of the current state, per law (the mixture weights)
    wt = np.zeros(L)  # Σ over those visits of (start time + restart)
    # the first cycle, from state M at t = 0
    out[0] = S[0, _A, M]
    out[1] = 0.0
    out[2] = S[0, _RW, M]
    out[3] = 0.0
    _scatter(0, 0, 1.0, 0.0, True, ctx, Dlo, Dhi, Elo, Ehi, S, I, pi, th)
    for k in range(n):
        p = pi[k]
        if p <= 1e-300:
            continue
        f = _fine_index(k, ctx)
        # the arrivals come back to state k after a wipe-out before the first checkpoint
        # (state 0: after any wipe-out); the visits are followed in blocks of constant law,
        # the restart time growing by the mean duration of a visit that comes back
        t = th[k] / p
        mass = p
        wv[:] = 0.0
        wt[:] = 0.0
        last_block = False
        while True:
            A, B, w = _law_at(t, t0)
            r_ = (1.0 - w) * R[A] + w * R[B]
            qa, ea = _returns(A, k, ctx, Dlo, Elo, S, I)
            qb, eb = _returns(B, k, ctx, Dlo, Elo, S, I)
            q = (1.0 - w) * qa + w * qb
            x = max(1.0 - q, _P_FLOOR)
            q = 1.0 - x
            c = r_ + (((1.0 - w) * ea + w * eb) / q if q > 0.0 else 0.0)  # a visit back
            # a block of nb visits (nb = ∞: all the rest, the law no longer changes)
            if last_block or A == L - 1 or L == 2:
                last_block = True
                nb = np.inf
            else:
                nb = max(1.0, np.floor(_BLOCK_GROWTH * t / c)) if c > 0.0 else 1.0
            g0, g1, qn = _geometric_block(x, nb)
            vb = mass * g0
            tb = mass * (t * g0 + c * g1) + vb * r_
            out[0] += vb * (r_ + (1.0 - w) * S[A, _A, f] + w * S[B, _A, f])
            out[1] += vb
            out[2] += vb * ((1.0 - w) * S[A, _RW, f] + w * S[B, _RW, f])
            out[3] += vb * r_
            wv[A] += (1.0 - w) * vb
            wt[A] += (1.0 - w) * tb
            wv[B] += w * vb
            wt[B] += w * tb
            if last_block:
                break
            mass *= qn
            t += nb * c
            if mass <= 1e-15 * p:
                last_block = True
        for law in range(1, L):
            if wv[law] > 0.0:
                _scatter(law, k, wv[law], wt[law], False, ctx, Dlo, Dhi, Elo, Ehi, S, I, pi, th)


#: States of the chain at most. With more checkpoints in a run (C < steps/510), the states
#: are every g-th checkpoint, and a unit that ends between two of them is split between the
#: two in proportion to the distance (its mass, mean steps left and start time are kept; the
#: times and rework of every visit stay those of the exact checkpoints): TTT/T0 within 1e-4
#: of the exact chain on the paper grid (C = 3–32 at 10,000 steps), ≤ 4 ms at C = 1.
_MAX_STATES = 512


def _run_on_lattice(laws: list[tuple[float, float, _Cycle]], C: int | None, steps: int,
                    ckpt_per_step: float = 0.0) -> dict[str, float]:
    """Expected totals of a run: time, restarts, rework (uptime lost after the last
    checkpoint, or since the start of the run, at the wipe-outs) and restart time.

    ``laws``: (t0, R, cycle) — the first cycle (fresh clocks from t = 0; t0 and R ignored),
    then the restart laws (restart mean R, cycle after a restart that starts at t0) in
    increasing t0, the last the equilibrium one at t_eq; the cycles without checkpoint costs
    (``ckpt_per_step`` is added here).

    The run is a chain over the states of the checkpoint lattice (:func:`_unit_law`): the first
    cycle from state M, then restart + cycle units until the last step is committed. A unit
    only stays or moves down, so one sweep from M to 0 gives, per state, the expected arrivals
    (restarts that start there) and their mean start time; the arrivals return a geometric
    number of times (wipe-outs before the first checkpoint) and then leave for the lower
    states or finish. Each visit is a cycle of the law of a restart at the state's mean
    arrival time (linear in log t0 between the laws, as the transient is tabulated), so the
    totals are exact for the chain once the restarts reach t_eq, and for exponential clocks
    (one law) throughout."""
    M = (steps - 1) // C if C else 0
    L = len(laws)
    S = np.empty((L, 5, M + 1))
    I = np.zeros((L, 2, M + 1))
    J = 0
    for k, (_, _, c) in enumerate(laws):
        J = max(J, _unit_law_kernel(c.tau, c.G, c.step, float(c.delay), float(ckpt_per_step),
                                    int(C or 0), int(steps), S[k], I[k]))
    R = np.array([float(r) for _, r, _ in laws])
    t0 = np.array([float(t) for t, _, _ in laws])
    out = np.empty(4)
    _chain_kernel(S, I, J, -(-M // (_MAX_STATES - 2)) if M + 1 > _MAX_STATES else 1, R, t0,
                  out)
    return {"time": float(out[0]), "restarts": float(out[1]), "rework": float(out[2]),
            "restart_time": float(out[3])}


def clear_caches() -> None:
    """Forget every memoised piece of the model (P0 tables, μ, clocks with their renewal and
    transient tables, failure-law curves, cycles, the Bethe root tables of
    :mod:`~spare_lib.theory.finite`): the next :func:`~spare_lib.theory.predict.predict` runs
    cold (benchmarks; nothing else needs it)."""
    from spare_lib.theory import finite

    for f in (_p0_table, _mu_index, _n_tables, _tau_grid_cached, _clock, _law_curves, _cycles,
              finite._survival_consecutive_exact, finite._survival_consecutive_fast,
              finite._bethe_root_table):
        f.cache_clear()
