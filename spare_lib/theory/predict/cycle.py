"""Cycle machinery of the predictive model (:mod:`spare_lib.theory.predict`).

A run is a sequence of cycles (training from the last checkpoint until a wipe-out, then a
global restart). This module turns the failure-law curves of each kind of cycle (first,
steady, transient: :mod:`spare_lib.theory.predict.curves`) into one cycle's survival, step time
and depth on a τ grid (the wipe-out law under Binomial failures is
:func:`~spare_lib.theory.predict.terms._binomial_moments`). The run is assembled from these
cycles by :func:`spare_lib.theory.predict.chain._run_on_lattice`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import ndtr

from spare_lib.theory.finite import mu_finite as mu_finite  # (re-exported for the tests)
from spare_lib.theory.predict.curves import (
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
from spare_lib.theory.predict.curves import _cfg_key as _cfg_key  # (re-exported)
from spare_lib.theory.predict.curves import restart_end_nodes as restart_end_nodes  # (re-exported)
from spare_lib.theory.predict.curves import (  # (re-exported)
    restart_end_nodes_many as restart_end_nodes_many,
)
from spare_lib.theory.predict.terms import NoTrainingCycle as NoTrainingCycle  # (re-exported)
from spare_lib.theory.predict.terms import (
    _binomial_moments,
    _mu_index,
    _n_tables,
    emax_std_normal,
    expected_max_stack_sum,
)
from spare_lib.theory.predict.terms import _p0_table as _p0_table  # (re-exported)

# ---------------------------------------------------------------------------------------------
# one training cycle (from a restart's end, or from t = 0 with fresh clocks)
# ---------------------------------------------------------------------------------------------

class _Cycle:
    """Survival G(τ) of the uptime and progress V(τ) on a τ grid, with the derived moments.

    The grid's spacings and gradient coefficients are kept (and shared with
    :meth:`with_checkpoints`), so the integrals of the warm path (:meth:`trapz`,
    :meth:`gradient`) skip numpy's per-call set-up; same arithmetic as ``np.trapezoid`` and
    ``np.gradient``.
    """

    def __init__(self, tau, G, step, depth, events, n_surv, delay, *, _grid=None, _U=None,
                 fail_rate=None):
        self.tau, self.G, self.step, self.depth, self.events = tau, G, step, depth, events
        self.n_surv = n_surv
        # the live groups' failure rate given no wipe-out, λ(τ) (per second; None where unknown)
        self.fail_rate = fail_rate
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
                      self.n_surv, self.delay, _grid=self._grid, _U=self.U,
                      fail_rate=self.fail_rate)


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
                          _grid=c.source.grid_prefix(end), fail_rate=lam[k, :end]))
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
