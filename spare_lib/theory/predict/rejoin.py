"""Cycles of the methods whose failed groups rejoin: spare+repair, elastic-drop, elastic-rebalance.

What the simulator does (``docs/strategies.md`` §1–5; :mod:`spare_lib.cluster.methods`): a group
noticed dead is away for ``rejoin_s``, then rejoins at the next step start, and each batch of
rejoining groups costs ``rejoin_stall_s``; a global restart happens only on a wipe-out
(spare+repair: a type with no live holder) or when every group is dead (elastic). Per method:

* **spare+repair** — SPARe (the stacking, RECTLR phase 0 or reorder + retry, a whole new layer
  when S grows from 1) whose depth is reset at each rejoin batch: RECTLR from the base stacks on
  the live set, so S = c(k) for k groups away (S = 1 when none is);
* **elastic-drop** — every live group computes one shard; a failure commits the step with the
  live groups (one stall), whose weight is n_alive/N of the global batch, so the run needs more
  commits (its progress is counted in samples, ``steps`` full batches);
* **elastic-rebalance** — with b micro-batches per shard and k groups away each survivor
  computes ⌈b·N/(N − k)⌉ micro-batches of 64/b s (jitter σ√b each, so a shard's spread stays σ);
  a failure loses the dead groups' load, which the survivors recompute in a retry (⌈lost/n⌉
  each, after one stall), and the first attempt after the assignment changed (a failure or a
  rejoin batch) waits ``fetch_s``.

The groups' counted failures come from one group's renewal process with rejoins
(:mod:`.rejoin_law`): U(τ), the expected notices of a group by τ, and hence the groups noticed in
any window [τ − w, τ], Binomial(N, U(τ) − U(τ − w)). Three windows matter
(:func:`~.rejoin_wait.windows`):

* **R + W** — a group noticed at s is away until the first step start after s + R, so it is away
  R + W on average (W the residual of the step-start renewal process, by Little's law the mean
  groups away); with P0(k) the survival of the method (SPARe's layout, or 1{k < N}) and
  q_k = 1 − P0(k + 1)/P0(k), the count of groups away is a chain on k that a live group's
  failure (rate λ_live = U'/(1 − a)) moves up, killed with probability q_k, and a return moves
  down, its rates set so that unkilled it stays Binomial(N, a(τ)) (:mod:`.rejoin_chain`): its
  mass is the cycle's survival, and its law the groups away given that the cycle survived. (A
  set drawn afresh at each τ, hazard λ_live·E[(N − k)·q_k | no wipe-out] under the restricted
  Binomial, overstates the wipe-outs: a cycle that survived has lost the paths close to one.
  Without rejoins the chain cannot come back down and the fresh draw is exact: exp(−∫h) is
  E[P0(n(τ))], the SPARe cycle of :mod:`.cycle`, which this module then uses);
* **R + W_ff** — no group is away when none was noticed since the last one back left, whose
  wait is over failure-free steps: the time share π0 with no group away;
* **the start window** — the batch at a step start takes every group noticed more than R
  before it, so the groups away at a step start were noticed in its last R, less the quiet end
  of the step before (its committing attempt is clean, no poll follows its barrier), plus the
  exposure of the first poll in the window: their depth, live count and phase 0.

The moments given no wipe-out over the first window (mean k, depth, phase 0, P(k = 0)) are the
chain's; over the other two windows they are exact sums over the Binomial restricted to the sets
that do not wipe out (:func:`_moments_kernel`; oracle in the tests); all are mixed over the
nodes of the restart's duration. The step (:func:`~.rejoin_step.step_model`) then runs in two states —
none away (failure-free steps at the base depth, each sojourn opened by the rejoin batch that
emptied the away set and closed by a transition step) and some away (the depth of the groups
away, failure events with their stalls and retries, rejoin batches, fetches) — and commits come
at the rate Σ_state 1/T, so a committed step is the harmonic mean; failures follow the
cumulative hazard over each attempt's exposure. No constant is fitted: every term is a
parameter of the config or a consequence of the mechanism.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit
from scipy.special import gammaln

from spare_lib.theory.predict.curves import _Cfg, _gradient
from spare_lib.theory.predict.cycle import _G_FLOOR, NoTrainingCycle, _Cycle
from spare_lib.theory.predict.rejoin_chain import killed_count_chain
from spare_lib.theory.predict.rejoin_step import step_model
from spare_lib.theory.predict.terms import _c, _p0_table, phase0_probability

#: The methods of this module.
REJOIN_METHODS = ("spare+repair", "elastic-drop", "elastic-rebalance")
#: Rows of the moment tables: k, depth (stacks or micro-batches), phase 0, 1{k = 0}, hazard.
_K, _DEPTH, _PH0, _ZERO, _HAZ = range(5)
_WINDOW_SD = 7.0
_P0_FLOOR = 1e-14


def low_count_survival(p0: np.ndarray, N: int, r: int) -> np.ndarray:
    """SPARe's P0(k) with the few-failure end exact: for k < 3r − 3 by inclusion–exclusion over
    the types whose r holders are all dead, singles and pairs (with the independence condition
    two types share at most one holder, so N·C(r, 2) pairs have a union of 2r − 1 holders and
    the others of 2r, and three types need ≥ 3r − 3 holders: the sum is exact there); above, the
    table ``p0`` (Bethe's, :func:`~spare_lib.theory.finite.survival_finite`) scaled to meet it.

    The saddle-point Bethe table is accurate in the bulk but not near k = r at small N (N = 32,
    r = 4: P0(4) = 1 against 1 − 32/C(32, 4) = 0.99911, and q_k = 1 − P0(k + 1)/P0(k) 16 % low at
    k = 5), where SPARe+repair's groups away spend their time when few are away at once; the
    table of SPARe+CKPT is left as it is (its cycles end in the bulk)."""
    out = np.array(p0, dtype=float)
    k_top = min(3 * r - 4, N)
    if r < 3 or k_top < r:
        return out
    pairs1 = N * r * (r - 1) // 2  # type pairs with one common holder
    pairs2 = N * (N - 1) // 2 - pairs1
    for k in range(r, k_top + 1):
        tot = math.comb(N, k)
        v = 1.0 - N * math.comb(N - r, k - r) / tot
        if k >= 2 * r - 1:
            v += pairs1 * math.comb(N - 2 * r + 1, k - 2 * r + 1) / tot
        if k >= 2 * r:
            v += pairs2 * math.comb(N - 2 * r, k - 2 * r) / tot
        out[k] = v
    if p0[k_top] > 0.0:
        out[k_top + 1:] = p0[k_top + 1:] * (out[k_top] / p0[k_top])
    return np.minimum.accumulate(np.clip(out, 0.0, 1.0))


@lru_cache(maxsize=512)
def _tables(method: str, N: int, r: int, layout: str, b: int) -> tuple:
    """(log C(N, k), P0(k), (N − k)/(k + 1), F, (depth(0), phase 0(0), depth(1)), F/P0) for
    k = 0..N; the rows of F are P0(k) times k, depth(k), phase 0(k) and 1{k = 0}, and
    (N − k)(P0(k) − P0(k + 1)) (the hazard numerator); F/P0 is 0 where P0 = 0. Independent of
    the cluster: cached per (method, N, r, layout, b)."""
    k = np.arange(N + 1)
    logc = gammaln(N + 1) - gammaln(k + 1) - gammaln(N - k + 1)
    F = np.zeros((5, N + 1))
    if method == "spare+repair":
        p0 = np.array(_p0_table("spare", N, r, layout))
        if layout == "ruler":  # the independence condition holds (the consecutive one is exact)
            p0 = low_count_survival(p0, N, r)
        S = _c(N, k).astype(float)
        F[_DEPTH] = S
        F[_PH0] = np.where(S >= r, 1.0, phase0_probability(k, N, S))
    else:
        p0 = (k < N).astype(float)
        F[_DEPTH] = 1.0 if method == "elastic-drop" else -(-b * N // np.maximum(N - k, 1))
    F[_K] = k
    F[_ZERO, 0] = 1.0
    F[:_HAZ] *= p0
    F[_HAZ] = (N - k) * (p0 - np.append(p0[1:], 0.0))
    ratio = (N - k) / (k + 1.0)
    out = (logc, p0, ratio, np.ascontiguousarray(F))
    for a in out:
        a.setflags(write=False)
    # depth and phase 0 with no group away, depth with one away (for the classes of the step)
    tab0 = (float(F[_DEPTH, 0]), float(F[_PH0, 0]), float(F[_DEPTH, 1] / max(p0[1], 1e-300)))
    # the rows of F over P0 (k, depth, phase 0, 1{k = 0}, (N − k)·q_k), for the killed chain
    feats = np.where(p0 > 0.0, F / np.where(p0 > 0.0, p0, 1.0), 0.0)
    feats.setflags(write=False)
    return (*out, tab0, feats)


@njit(cache=True, nogil=True)
def _moments_kernel(x, N, logc, p0, F, ratio, out):  # pragma: no cover - jit
    """For each x[i], k ~ Bin(N, x[i]) over lo..lo + ⌈14 s.d.⌉ + 2 (lo = ⌊N x − 7 s.d. − 1⌋, by
    the recurrence b(k + 1) = b(k)·x/(1 − x)·(N − k)/(k + 1)): out[0] = E[P0(k)], out[1 + j] =
    E[F_j(k)]/E[P0(k)] (0 on rows whose window starts where P0 ≤ 1e-14). Oracle: the plain sums
    over every k in the tests."""
    J = F.shape[0]
    for i in range(x.size):
        xi = x[i]
        sd = np.sqrt(N * xi * (1.0 - xi))
        lo = int(min(max(np.floor(N * xi - _WINDOW_SD * sd - 1.0), 0.0), N))
        for j in range(J + 1):
            out[j, i] = 0.0
        if p0[lo] <= _P0_FLOOR:
            continue
        hi = min(lo + int(np.ceil(2.0 * _WINDOW_SD * sd)) + 2, N)
        xx = min(max(xi, 1e-300), 1.0 - 1e-16)
        rho = xx / (1.0 - xx)
        b = np.exp(logc[lo] + lo * np.log(xx) + (N - lo) * np.log1p(-xx))
        s0 = 0.0
        for k in range(lo, hi + 1):
            s0 += b * p0[k]
            for j in range(J):
                out[1 + j, i] += b * F[j, k]
            b *= rho * ratio[k]
        out[0, i] = s0
        inv = 1.0 / max(s0, 1e-300)
        for j in range(J):
            out[1 + j, i] *= inv


def moments(tables: tuple, N: int, x: np.ndarray) -> np.ndarray:
    """(6, *x.shape): E[P0(k)], then E[k], E[depth], E[phase 0], P(k = 0) and the hazard factor
    E[(N − k) q_k], all given no wipe-out, under k ~ Binomial(N, x)."""
    logc, p0, ratio, F = tables[:4]
    xf = np.ascontiguousarray(x, dtype=float).ravel()
    out = np.empty((F.shape[0] + 1, xf.size))
    _moments_kernel(xf, N, logc, p0, F, ratio, out)
    return out.reshape((F.shape[0] + 1, *np.shape(x)))



def fresh_survival(tables: tuple, N: int, tau: np.ndarray, a: np.ndarray,
                   lam_live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cycle's survival from sets of groups away drawn afresh at each τ: the moments of
    :func:`moments` under Binomial(N, a) (nodes, τ) and G = E[P0(k)] at τ = 0 times
    exp(−∫ λ_live·E[(N − k)·q_k | no wipe-out] dτ) (trapezoids on ``tau``). Exact without
    rejoins; with them, the form :mod:`.rejoin_chain` replaces (it overstates the wipe-outs)."""
    mom = moments(tables, N, a)
    haz = lam_live * mom[1 + _HAZ]
    cum = np.concatenate((np.zeros((a.shape[0], 1)), np.cumsum(
        0.5 * (haz[:, 1:] + haz[:, :-1]) * np.diff(tau), axis=1)), axis=1)
    return mom, mom[0][:, :1] * np.exp(-cum)


def _rejoin_cycle(method: str, N: int, tables: tuple, cfg: _Cfg, rcfg: tuple, proc,
                  waits: tuple[float, float], *, end_floor: float = _G_FLOOR):  # noqa: ANN001
    """One cycle of a rejoining method from its group process: (_Cycle, StepModel, extras).

    ``waits``: the mean wait from a rejoin time to the next step start over every step (it sets
    the mean groups away, by Little's law), over the failure-free steps before the away set
    empties (the wait of the last group back, which sets the share of time with no group away:
    conditioned on no notice in the last R', the steps have no event), and the notice window
    of the groups away at a step start (R less the quiet end of the step before, plus the
    exposure of the first poll in the window: :func:`~.rejoin_model._waits`). The nodes of the
    restart's duration are mixed after the moments (as SPARe's cycles): every moment is weighted
    by w_i·G_i(τ)."""
    rejoin_s = rcfg[0]
    window, window_ff = rejoin_s + waits[0], rejoin_s + waits[1]
    tau = proc.tau
    a = np.minimum(proc.away(window, proc.wait_s), 1.0 - 1e-12)
    u = np.maximum(_gradient(proc.U, tau), 0.0)
    lam_live = u / (1.0 - a)
    if math.isfinite(rejoin_s):  # the away count given the cycle's survival (.rejoin_chain)
        Gi, cond = killed_count_chain(tau, a, proc.U, N, tables[1], tables[5])
        mom = np.concatenate((Gi[None], cond))
    else:  # the groups never come back: the away set is the failed one, drawn afresh exactly
        mom, Gi = fresh_survival(tables, N, tau, a, lam_live)
    if math.isfinite(window) and window_ff != window:
        zero = moments(tables, N, np.minimum(proc.away(window_ff), 1.0 - 1e-12))[1 + _ZERO]
    else:
        zero = mom[1 + _ZERO]
    wi = proc.w[:, None] * Gi
    G = wi.sum(0)
    cut = np.nonzero(G <= end_floor)[0]
    end = int(cut[0]) + 1 if cut.size else tau.size
    if end < 2:
        raise NoTrainingCycle(
            f"no training cycle: for ({method}, N={N}) P(no wipe-out) is already ≤ {_G_FLOOR:g} "
            f"at the first poll of a cycle; the model cannot describe this cluster")
    wn = wi[:, :end] / np.maximum(G[:end], 1e-300)

    def avg(v: np.ndarray) -> np.ndarray:
        return (wn * v[:, :end]).sum(0)

    m = {"k": avg(mom[1 + _K]), "depth": avg(mom[1 + _DEPTH]), "ph0": avg(mom[1 + _PH0])}
    # the hazard of a live group, averaged over the nodes as the rate of failures: weighted by
    # the live groups
    live = np.maximum(N - mom[1 + _K], 0.0)
    lam_live = avg(lam_live * live) / np.maximum(N - m["k"], 1e-12)
    tt = tau[:end]
    if math.isfinite(window):
        def lag(v: np.ndarray) -> np.ndarray:
            return np.interp(tt - window, tt, v, left=0.0)
    else:
        def lag(v: np.ndarray) -> np.ndarray:
            return np.zeros_like(v)
    H = np.concatenate(([0.0], np.cumsum(0.5 * (lam_live[1:] + lam_live[:-1]) * np.diff(tt))))

    def expo(x: np.ndarray) -> np.ndarray:
        """Cumulative hazard of a live group over [τ, τ + x] (linear beyond the grid)."""
        end = tt + x
        over = np.maximum(end - tt[-1], 0.0)  # (≥ 0: H's rounding where it is huge)
        return np.maximum(np.interp(end, tt, H) + over * lam_live[-1] - H, 0.0)

    # the groups away at a step start: noticed in the last R (the batch there took the others)
    if math.isfinite(window):
        ms = moments(tables, N, np.minimum(proc.away(max(waits[2], 0.0)), 1.0 - 1e-12))
    else:
        ms = mom
    m_start = {"k": avg(ms[1 + _K]), "depth": avg(ms[1 + _DEPTH]), "ph0": avg(ms[1 + _PH0]),
               "zero": avg(ms[1 + _ZERO])}
    kk = np.arange(N + 1, dtype=float)
    d_table = tables[3][_DEPTH] / np.maximum(tables[1], 1e-300)

    def depth_of(k: np.ndarray) -> np.ndarray:
        """Depth (stacks, or micro-batches) with k (a mean) groups away: between the integers
        around it."""
        return np.interp(k, kk, d_table)

    st = step_model(method, cfg, rcfg, N, m_start, avg(zero), lam_live, lag, tables[4], expo,
                    depth_of)
    step = st.T / st.weight  # wall time per full step of samples
    delay = float(0.5 * st.comp[-1] + cfg.allreduce_fail_factor * cfg.allreduce_s)
    cyc = _Cycle(tt, G[:end], step, st.depth, st.T - st.comp - cfg.allreduce_s, m["k"], delay)
    extras = {"lam": lam_live * np.maximum(N - m["k"], 0.0), "away": a, "u": u}
    return cyc, st, extras
