"""Cycle machinery of the predictive model (:mod:`spare_lib.theory.predict`).

A run is a sequence of cycles (training from the last checkpoint until a wipe-out, then a
global restart). This module holds the wipe-out law under Binomial failures, the failure-law
curves of each kind of cycle (first, steady, transient; cached per cluster, independent of the
method and r), one cycle's survival / step time / depth on a τ grid, and the renewal–reward
pieces the run assembly in :func:`~spare_lib.theory.predict.predict` uses.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import gammaln
from scipy.stats import norm

from spare_lib.theory.closed import replication_mu
from spare_lib.theory.finite import mu_finite, survival_finite
from spare_lib.theory.predict_terms import (
    Clock,
    RestartLaw,
    emax_std_normal,
    expected_max_stack_sum,
    failed_fraction,
    phase0_probability,
    restart_law,
)


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
    """Per failure count n = 0..N: log C(N, n), P0(n), depth S(n) = c(n) (r for Rep) and the
    phase-0 probability of the next failure."""
    if method != "spare":  # closed forms, no table needed
        return (method, r)
    n = np.arange(N + 1)
    logc = gammaln(N + 1) - gammaln(n + 1) - gammaln(N - n + 1)
    p0 = _p0_table(method, N, r, layout)
    S = _c(N, n).astype(float) if method == "spare" else np.full(N + 1, float(r))
    # at S = r every survivor computes its whole stack: a failure that does not wipe out is
    # always settled by phase 0
    ph0 = np.where(S >= r, 1.0, phase0_probability(n, N, S))
    for a in (logc, S, ph0):
        a.setflags(write=False)
    return method, r, logc, p0, S, ph0


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


def _binomial_moments(tables, N: int, x: np.ndarray, full: bool = True):
    """Under n ~ Bin(N, x): P_x = E[P0(n)], and E[f(n) | no wipe-out] for f = n, S(n), the
    phase-0 probability and 1{n = 0}. Sums over ±7 s.d. around N·x (outside mass < 1e-11),
    skipping the τ rows whose mass lies where P0 < 1e-14."""
    if tables[0] != "spare":
        return _closed_survival(tables[0], N, tables[1], x, full)
    logc, p0, S_n, ph0_n = tables[2:]
    mean = N * x
    sd = np.sqrt(N * x * (1.0 - x))
    lo = np.clip(np.floor(mean - 7 * sd - 1), 0, N).astype(int)
    # rows whose binomial mass lies where every layout is already wiped out contribute nothing
    rows = np.nonzero(p0[lo] > 1e-14)[0]
    px = np.zeros_like(x)
    moments = [np.zeros_like(x) for _ in range(4)]
    if rows.size:
        xr, lor = x[rows], lo[rows]
        width = int(np.max(np.ceil(14 * sd[rows]))) + 3
        n = lor[:, None] + np.arange(width)[None, :]
        valid = n <= N
        n = np.minimum(n, N)
        xx = np.clip(xr, 1e-300, 1 - 1e-16)[:, None]
        w = np.exp(logc[n] + n * np.log(xx) + (N - n) * np.log1p(-xx)) * p0[n]
        w[~valid] = 0.0
        pr = w.sum(1)
        px[rows] = pr
        if full:
            ws = w / np.maximum(pr, 1e-300)[:, None]
            for out, f in zip(moments, (n, S_n[n], ph0_n[n], n == 0), strict=True):
                out[rows] = (ws * f).sum(1)
    if not full:
        return px
    return (px, *moments)


def _c(N: int, n: np.ndarray) -> np.ndarray:
    return -(-N // np.maximum(N - n, 1))


# ---------------------------------------------------------------------------------------------
# one training cycle (from a restart's end, or from t = 0 with fresh clocks)
# ---------------------------------------------------------------------------------------------

class _Cycle:
    """Survival G(τ) of the uptime and progress V(τ) on a τ grid, with the derived moments."""

    def __init__(self, tau, G, step, depth, events, n_surv, delay):
        self.tau, self.G, self.step, self.depth, self.events = tau, G, step, depth, events
        self.n_surv = n_surv
        self.delay = delay  # wipe-out noticed at the end of the attempt: uptime after the failure
        self.rate = 1.0 / step  # committed steps per wall second (checkpoint time included)
        V = np.concatenate(([0.0], np.cumsum(0.5 * (self.rate[1:] + self.rate[:-1])
                                              * np.diff(tau))))
        self.V = V
        self.U = float(np.trapezoid(G, tau)) + delay

    def with_checkpoints(self, ckpt_per_step: float) -> _Cycle:
        """The same cycle with T_s/C of checkpoint writing added to every committed step."""
        return _Cycle(self.tau, self.G, self.step + ckpt_per_step, self.depth, self.events,
                      self.n_surv, self.delay)


_N_TAU = 96
_N_TAU_LOG = 160
#: Quadrature nodes over the law of the restart's duration (equal-probability bins).
_N_T_NODES = 5


def restart_end_nodes(restart: RestartLaw, N: int, n: int = _N_T_NODES):
    """(weight, T) nodes of the law of the restart's duration T = max over N groups: the
    lattice law F(t)^N split into n bins of equal probability, each at its conditional mean."""
    cdf = np.minimum(np.cumsum(restart.pmf_group), 1.0) ** N
    pmf = np.diff(np.concatenate(([0.0], cdf)))
    t = restart.h * np.arange(pmf.size)
    edges = np.searchsorted(cdf, np.linspace(0.0, 1.0, n + 1)[1:-1])
    out = []
    for a, b in zip(np.concatenate(([0], edges)), np.concatenate((edges, [pmf.size])),
                    strict=True):
        w = float(pmf[a:b].sum())
        if w > 1e-12:
            out.append((w, float(np.sum(pmf[a:b] * t[a:b]) / w)))
    tot = sum(w for w, _ in out)
    return [(w / tot, T) for w, T in out]
#: Restart times t0 < t_eq at which the transient cycle is computed (then interpolated in log t0).
_N_TRANSIENT = 4


def transient_restart_times(clock: Clock) -> list[float]:
    """Restart start times t0 (seconds after the fresh start) of the transient cycles:
    _N_TRANSIENT log-spaced points in [0.05·M, t_eq), M the clock mean."""
    return [float(t) for t in np.geomspace(0.05 * clock.mean_s, clock.t_equilibrium,
                                           _N_TRANSIENT + 1)[:-1]]


class _Curves:
    """Failure law of one kind of cycle on the cluster's τ grid (independent of method and r):
    quadrature nodes (weight, x(τ), per-live-group hazard x'/(1 − x))."""

    def __init__(self, tau: np.ndarray, nodes: list[tuple[float, np.ndarray, np.ndarray]]):
        self.tau, self.nodes = tau, nodes


def _tau_grid(clock: Clock, cfg: Any) -> np.ndarray:
    """τ grid shared by every cycle of a cluster: 0, then log-spaced points from a quarter step
    to the time where a fresh clock has failed with probability 1 − 1e-6 (no layout survives
    that), plus uniform points for the bulk."""
    t_step = cfg.compute_per_stack_s + cfg.allreduce_s
    t_hi = clock.fresh_quantile(1.0 - 1e-6) + 4.0 * clock.mean_s
    t_lo = min(0.25 * t_step, t_hi / 1e4)
    return np.unique(np.concatenate(([0.0], np.geomspace(t_lo, t_hi, _N_TAU_LOG),
                                     np.linspace(0.0, t_hi, _N_TAU)[1:])))


@lru_cache(maxsize=256)
def _curves(N: int, mech: tuple[str, ...], key: tuple, kind: str, t0: float | None) -> tuple:
    """(curves, restart mean) of a cycle kind: 'first' (fresh clocks from t = 0), 'steady'
    (after a restart starting at t0: None = equilibrium ages) or 'none' (no restart windows)."""
    cfg = _Cfg(key)
    clock = Clock(cfg.failure_dist, N * cfg.system_mtbf_s, cfg.weibull_shape)
    tau = _tau_grid(clock, cfg)
    R = float(cfg.restart_s)
    if kind == "steady":  # per-group restart windows: the restart lasts E[max of N windows]
        first_window = "equilibrium" if t0 is None else float(t0)
        R = restart_law(clock, N, cfg.restart_s, first_window=first_window).mean_s
    if "failure_law" not in mech:  # equilibrium exponential clocks: x = 1 − exp(−τ/(N m))
        xs = [(1.0, 1.0 - np.exp(-tau / clock.mean_s))]
    elif kind == "first":
        xs = [(1.0, 1.0 - clock.survival(tau))]
    elif kind == "none":
        xs = [(1.0, 1.0 - clock.eq_survival(tau))]
    else:
        first_window = "equilibrium" if t0 is None else float(t0)
        rl = restart_law(clock, N, cfg.restart_s, first_window=first_window)
        R = rl.mean_s
        # mixture over the restart's duration T (it sets how long the groups wait at the
        # barrier, hence the pre-failures)
        xs = [(w, failed_fraction(clock, tau, restart=rl, restart_s=cfg.restart_s, end_s=T))
              for w, T in restart_end_nodes(rl, N)]
    nodes = []
    for w, x in xs:
        hz = np.maximum(np.gradient(-np.log(np.maximum(1.0 - x, 1e-300)), tau), 0.0)
        x.setflags(write=False)
        nodes.append((w, x, hz))
    return _Curves(tau, nodes), R


def _cycle(method, N, r, cfg, layout, curves: _Curves, mech):
    """One cycle of (method, N, r) under a failure law: survival G(τ), step time, depth."""
    tau = curves.tau
    tables = _n_tables(method, N, r, layout)
    px = np.zeros_like(tau)
    acc = np.zeros((5, tau.size))
    for w, x, hz in curves.nodes:
        px_i, n_i, S_i, ph0_i, n0_i = _binomial_moments(tables, N, x)
        wi = w * px_i
        px += wi
        acc += wi * np.array([n_i, S_i, ph0_i, n0_i, hz * np.maximum(N - n_i, 0.0)])
    n_s, S_s, ph0_s, n0_s, lam = acc / np.maximum(px, 1e-300)
    # drop the far tail where no layout survives (keeps the integrals cheap)
    keep = np.concatenate(([True], px[:-1] > 1e-9))
    tau, px, n_s, S_s, ph0_s, n0_s, lam = (v[keep] for v in (tau, px, n_s, S_s, ph0_s, n0_s,
                                                              lam))
    ta, f, sh = cfg.allreduce_s, cfg.allreduce_fail_factor, cfg.shrink_s
    cs = cfg.compute_per_stack_s
    alive = np.maximum(np.rint(N - n_s), 1).astype(int)
    sig = cfg.jitter_sigma if "barrier" in mech else 0.0
    lo = cfg.jitter_min

    clip_free = sig == 0.0 or norm.cdf((lo - 1.0) / sig) < 1e-15

    def emax(S, n):
        """E[max over n live groups of S jittered stacks] (in stacks)."""
        S = np.broadcast_to(np.asarray(S, dtype=float), n.shape)
        if clip_free:
            return S + sig * np.sqrt(S) * emax_std_normal(n)
        return np.array([expected_max_stack_sum(int(a), int(b), sig, lo)
                         for a, b in zip(S, n, strict=True)])

    if method == "spare":
        S_lo = np.maximum(np.floor(S_s), 1.0)
        frac = np.clip(S_s - S_lo, 0.0, 1.0)
        # compute at the mean depth: interpolate E[max] between the neighbouring integer depths
        comp = cs * ((1 - frac) * emax(S_lo, alive) + frac * emax(S_lo + 1, alive))
    else:
        comp = cs * (r if method == "rep" else 1) * emax(1.0, alive)
    base = comp + ta
    events = np.zeros_like(tau)
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
    delay = float(0.5 * comp[-1] + f * ta) if "failure_events" in mech else 0.0
    return _Cycle(tau, px, step, S_s, events, n_s, delay)


_CFG_FIELDS = ("compute_per_stack_s", "jitter_sigma", "jitter_min", "allreduce_s",
               "allreduce_fail_factor", "restart_s", "shrink_s", "checkpoint_s", "failure_dist",
               "weibull_shape", "system_mtbf_s")


class _Cfg:
    """Hashable snapshot of the config fields the model reads (besides ``steps``)."""

    def __init__(self, key: tuple) -> None:
        for name, v in zip(_CFG_FIELDS, key, strict=True):
            setattr(self, name, v)


#: Accepted spellings of a field (the stall per reconfiguration was called ``shrink_s``).
_ALIASES = {"shrink_s": ("stall_s", "shrink_s")}


def _cfg_key(config: Any) -> tuple:
    """The config fields the model reads, as a hashable tuple (validated)."""
    if float(getattr(config, "domain_fault_share", 0.0) or 0.0) > 0.0:
        raise ValueError("config.domain_fault_share must be 0: the model has independent group "
                         "clocks only (failure domains are not modelled)")
    out = []
    for name in _CFG_FIELDS:
        names = _ALIASES.get(name, (name,))
        found = [n for n in names if hasattr(config, n)]
        if not found:
            raise ValueError(f"config must have attribute {names[0]!r} (see ClusterLike)")
        v = getattr(config, found[0])
        out.append(v if isinstance(v, str) else float(v))
    return tuple(out)


@lru_cache(maxsize=2048)
def _cycles(method: str, N: int, r: int, layout: str, mech: tuple[str, ...], key: tuple):
    """Restart duration, first cycle (fresh clocks), steady cycle (equilibrium ages) and the
    transient cycles after restarts at t0 < t_eq, without checkpoint costs."""
    cfg = _Cfg(key)
    clock = Clock(cfg.failure_dist, N * cfg.system_mtbf_s, cfg.weibull_shape)
    windows, prefail = 1.0, 0.0
    first = _cycle(method, N, r, cfg, layout, _curves(N, mech, key, "first", None)[0], mech)
    if "restart_windows" in mech:
        curves, R = _curves(N, mech, key, "steady", None)
        rl = restart_law(clock, N, cfg.restart_s)
        windows = rl.windows_per_group
        if "failure_law" in mech:
            prefail = float(sum(w * x[0] for w, x, _ in curves.nodes))
    else:
        curves, R = _curves(N, mech, key, "none", None)
        R = float(cfg.restart_s)
    ss = _cycle(method, N, r, cfg, layout, curves, mech)
    # restarts that start before the clocks reach equilibrium (clocks are never reset: at time t0
    # after the fresh start a Weibull clock with k < 1 fails sooner than an equilibrium one;
    # exponential clocks are memoryless, so they need no transient)
    transient: list[tuple[float, float, _Cycle]] = []
    if "failure_law" in mech and "restart_windows" in mech and clock.shape != 1.0:
        for t0 in transient_restart_times(clock):
            c_t, R_t = _curves(N, mech, key, "steady", t0)
            transient.append((t0, R_t, _cycle(method, N, r, cfg, layout, c_t, mech)))
    return R, windows, prefail, first, ss, transient, clock.t_equilibrium


def _progress_stats(cyc: _Cycle, C: int | None, steps: int):
    """Checkpoint epochs and moments of one cycle: (W, EY, EV, E[V²]/2, E[t_f]·EV, τ_end)."""
    tau, G, V = cyc.tau, cyc.G, cyc.V
    Vmax = V[-1]
    if C is not None:
        j = np.arange(1, int(min(Vmax // C, steps // C)) + 1)
        tj = np.interp(j * C, V, tau)
        Gj = np.interp(tj, tau, G)
        W = C * float(Gj.sum())
        EY = float(np.sum(np.diff(np.concatenate(([0.0], tj))) * Gj))
    else:
        W, EY = 0.0, 0.0
    dV = np.gradient(V, tau)
    EV = float(np.trapezoid(G * dV, tau))
    EV2h = float(np.trapezoid(V * G * dV, tau))
    Etf = float(np.trapezoid(tau * G * dV, tau))
    return W, EY, EV, EV2h, Etf


def _time_to(cyc: _Cycle, s: float) -> tuple[float, float]:
    """(wall time to commit s steps in this cycle without a wipe-out, P(no wipe-out by then))."""
    if s >= cyc.V[-1]:
        return float(cyc.tau[-1] + (s - cyc.V[-1]) / cyc.rate[-1]), 0.0
    t = float(np.interp(s, cyc.V, cyc.tau))
    return t, float(np.interp(t, cyc.tau, cyc.G))


def _unit_stats(cyc: _Cycle, C: int | None, steps: int, R: float) -> dict[str, Any]:
    """Summary of one restart (duration R) + training cycle for the run assembly."""
    W, EY, EV, EV2h, Etf = _progress_stats(cyc, C, steps)
    return {"R": R, "U": cyc.U, "W": W, "EY": EY, "s_f": EV2h / max(EV, 1e-300),
            "t_f": Etf / max(EV, 1e-300), "cycle": cyc}


def _interp_units(units, eq_stats, t_abs: float, t_eq: float) -> dict[str, Any]:
    """Unit statistics at restart time t_abs: linear in log t0 between the computed points
    (before the first point: the first point; towards t_eq: the equilibrium values)."""
    pts = [(t0, st) for t0, _, st in units] + [(t_eq, eq_stats)]
    if t_abs <= pts[0][0]:
        return pts[0][1]
    for (ta, sa), (tb, sb) in zip(pts[:-1], pts[1:], strict=True):
        if t_abs <= tb:
            w = np.log(t_abs / ta) / np.log(tb / ta)
            out = {k: (1 - w) * sa[k] + w * sb[k] for k in ("R", "U", "W", "EY", "s_f", "t_f")}
            out["cycle"] = sa["cycle"] if w < 0.5 else sb["cycle"]
            return out
    return eq_stats


def _steady_time(st: dict[str, Any], cyc: _Cycle | None, s: float, C: int | None):
    """(time, restarts, rework) to commit s more steps from a restart's start, every unit alike.

    Renewal–reward: each failed unit costs R + U and yields W checkpointed steps; the final
    unit starts with s_f ~ P(V ≥ s)/E[V] steps left (V = progress before the wipe-out) and lasts
    R + t_f. Without checkpoints: a geometric number of failed attempts at finishing in one cycle.
    """
    if s <= 0:
        return 0.0, 0.0, 0.0
    cyc = st["cycle"] if cyc is None else cyc
    R, U, W = st["R"], st["U"], st["W"]
    t_clean, p_clean = _time_to(cyc, s)
    if C is None or W <= 0:
        p = max(p_clean, 1e-12)
        m_ = cyc.tau <= t_clean
        u_fail = (float(np.trapezoid(cyc.G[m_], cyc.tau[m_])) - t_clean * p_clean) / \
            max(1 - p_clean, 1e-300) + cyc.delay
        n = (1 - p) / p
        return R + t_clean + n * (u_fail + R), n, n * u_fail
    s_f = min(st["s_f"], s)
    t_f = st["t_f"] if s > st["s_f"] else t_clean
    n = max((s - s_f) / W, 0.0)
    return n * (U + R) + R + t_f, n, n * (U - st["EY"])


