"""The step of a rejoining method as rates per second of training (:mod:`.rejoin`).

:func:`step_model` turns the groups away (their moments at a step start, the time share with none
away) and the hazard of a live group into the wall time of a committed step, its stalls, failure
events, depth and weight, from two states — no group away, some — solved as a fixed point
vectorised over the cycle's τ grid.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

from spare_lib.theory.predict.curves import _Cfg
from spare_lib.theory.predict.terms import emax_std_normal

#: Iterations of the state-1 fixed point at most (it stops when T changes by < 1e-10).
_FIXED_POINT_ITERS = 24
#: Terms of a chain of retries summed exactly before its geometric tail.
_CHAIN_TERMS = 24


@njit(cache=True, nogil=True)
def _after_kernel(n, h_r, retry, out):  # pragma: no cover - jit
    """Numba kernel of :func:`after_retry` (oracle: its plain loop in the tests)."""
    for i in range(n.size):
        m = n[i]
        prob = 1.0
        tot = 0.0
        q = 0.0
        for _ in range(_CHAIN_TERMS):
            a = m * h_r[i]
            e2 = -np.expm1(-a)
            prob *= e2
            tot += prob
            q = retry[i] * e2
            prob *= retry[i]
            m = max(m - a / max(e2, 1e-12), 1.0)
            if prob < 1e-12 * tot:
                break  # the rest is below 1e-12 of the sum
        out[i] = tot + prob * q / max(1.0 - q, 1e-12)


def after_retry(n: np.ndarray, h_r: np.ndarray, retry: np.ndarray) -> np.ndarray:
    """Expected event attempts after an event that was retried, with n live groups at the retry
    and a retry's hazard ``h_r`` per live group: the retry is hit with e2(n) = 1 − e^(−n h_r),
    a hit is retried with probability ``retry``, and every event takes its J ~ Poisson given
    J ≥ 1 failures out of the live groups (24 terms, then the geometric tail at the last
    ratio; a numba kernel)."""
    n, h_r, retry = np.broadcast_arrays(*(np.ascontiguousarray(v, dtype=float)
                                          for v in (n, h_r, retry)))
    out = np.empty(n.shape)
    _after_kernel(np.ascontiguousarray(n).ravel(), np.ascontiguousarray(h_r).ravel(),
                  np.ascontiguousarray(retry).ravel(), out.reshape(-1))
    return out


def _units(L: np.ndarray, n: np.ndarray, sigma_unit: float) -> np.ndarray:
    """E[max over n live groups of L jittered units] in units: L + σ_u √L E[max of n normals],
    interpolated between the neighbouring integers when L is a mean (the mixture of the two
    depths). The clip of the jitter at ``jitter_min`` only shortens the lower tail, which the
    maximum of n ≥ 2 groups does not see (σ_u ≤ 0.3: its mean shifts by < 5e-5 per unit)."""
    lo = np.maximum(np.floor(L), 1.0)
    fr = np.clip(L - lo, 0.0, 1.0)
    em = emax_std_normal(n)
    return ((1 - fr) * (lo + sigma_unit * np.sqrt(lo) * em)
            + fr * (lo + 1 + sigma_unit * np.sqrt(lo + 1) * em))


class StepModel:
    """Per-τ step of one method as rates per second of training, from the two states of the
    groups away (none: time share ``pi0``; some).

    State 0 runs failure-free steps of ``T0`` (one unit of the method's base depth) until the
    first notice; each sojourn starts with the rejoin batch that emptied the away set (stall and,
    for elastic-rebalance, a fetch) and ends in a *transition* step, whose remainder after the
    notice (``r01``: the rest of the attempt, a shortened all-reduce, a stall, retries) counts in
    state 1. State 1 runs steps of ``T1`` (depth of the groups away, failure events, the rejoin
    batches that do not empty the away set, fetches). Commits: ``c0`` (failure-free state-0
    steps), ``nu01`` (transitions), ``c1`` (state-1 steps) per second; per committed step:
    ``T`` = 1/(c0 + nu01 + c1), ``stall``, ``events``, ``weight`` (share of the global batch),
    ``depth`` (stacks, or shards for elastic-rebalance), ``comp`` (first compute); ``e1`` P(an
    event in a state-1 step's first attempt), ``q_rj`` P(a rejoin batch at a state-1 step start)
    and, for the wait from a rejoin time to the next step start (:func:`rejoin_wait`), the
    state-1 step's parts ``T1_free`` (compute + T_a), ``ev_cost`` (extra wall time of an event
    step), ``tail`` (from an event attempt's barrier to the next step start), ``x1`` (first
    attempt's exposure), ``units`` (units of compute per group)."""


def _class_one(mom: dict, z: np.ndarray, tab0: tuple) -> dict:
    """Moments given no wipe-out and k ≥ 1: the overall means less the k = 0 term, over
    P(k ≥ 1) (k = 0 has depth(0) and phase 0(0) = ``tab0[:2]``)."""
    nz = np.maximum(1.0 - z, 1e-12)
    d0, p00 = tab0[:2]
    return {"k": np.maximum(mom["k"] / nz, 1.0),
            "depth": np.maximum((mom["depth"] - z * d0) / nz, tab0[2]),
            "ph0": np.clip((mom["ph0"] - z * p00) / nz, 0.0, 1.0), "zero": np.zeros_like(z)}


def _work(method: str, cfg: _Cfg, b: int, N: int, m: dict):
    """(compute, patch of a retry, P(phase 0) of one failure, units) of a state."""
    cs, sig = cfg.compute_per_stack_s, cfg.jitter_sigma
    alive = np.maximum(np.rint(N - m["k"]), 1.0)
    depth = m["depth"]
    one = np.ones_like(alive)
    if method == "spare+repair":
        p = np.clip(m["ph0"], 0.0, 1.0)
        # a retry's patch (as SPARe's, predict.cycle): a whole new layer when S grows from 1
        # (no group away), else one stack on each survivor that received a moved type
        s1 = 1.0 - np.clip(p, 1e-12, 1.0) ** (1.0 / np.maximum(depth, 1.0))
        moved = np.maximum(depth * s1 / np.maximum(1.0 - p, 1e-12), 1.0)
        n0 = m["zero"]
        patch = cs * (n0 * _units(one, alive, sig) + (1 - n0) * _units(one, moved, sig))
        return cs * _units(depth, alive, sig), patch, p, depth
    if method == "elastic-drop":
        return cs * _units(one, alive, sig), np.zeros_like(alive), np.ones_like(alive), one
    su = sig * math.sqrt(b)
    rest = np.maximum(alive - 1.0, 1.0)
    share = np.ceil(depth / rest)  # one failure: its load over the other survivors
    return (cs / b * _units(depth, alive, su), cs / b * _units(share, rest, su),
            np.zeros_like(alive), depth)


def _retry_prob(method: str, p: np.ndarray, a: np.ndarray) -> np.ndarray:
    """P(an event attempt is retried): drop never, rebalance always, spare+repair unless RECTLR
    phase 0 settles all its J ~ Poisson(a) failures (E[p^J | J ≥ 1])."""
    if method == "elastic-drop":
        return np.zeros_like(a)
    if method == "elastic-rebalance":
        return np.ones_like(a)
    e = -np.expm1(-a)
    return 1.0 - np.where(e > 1e-12, (np.exp(-a * (1 - p)) - np.exp(-a)) / np.maximum(e, 1e-300),
                          p)


def _state0(comp0: np.ndarray, u0: np.ndarray, ta: float, pi0: np.ndarray,
            lam_all: np.ndarray, pre0: float) -> tuple:
    """State 0 (no group away): (T0, its unit, ν01 the rate of transitions, the share of T0 in
    compute, c0 the rate of its commits); a failure is noticed at the next poll (a unit start or
    the barrier; the next step's first poll for one during the all-reduce), the sojourn ends at
    that notice, and the transition step pays ``pre0`` (a rejoin stall, a fetch) first."""
    T0 = comp0 + ta
    unit0 = comp0 / np.maximum(u0, 1.0)
    delay0 = (comp0 * unit0 / 2.0 + ta * ta / 2.0) / T0
    nu01 = pi0 / (1.0 / np.maximum(lam_all, 1e-300) + delay0)
    in_comp0 = comp0 / T0
    off0 = in_comp0 * (comp0 / 2.0 + unit0 / 2.0)  # the notice's offset in the interrupted step
    return T0, unit0, nu01, in_comp0, np.maximum(pi0 - nu01 * (pre0 + off0), 0.0) / T0


def _first_failures(expo, n: np.ndarray, x: np.ndarray) -> np.ndarray:  # noqa: ANN001
    """J, the failures of an event attempt (Poisson given J ≥ 1) over exposure x (``expo``: the
    cumulative hazard of a live group over an exposure)."""
    a = n * expo(x)
    return a / np.maximum(-np.expm1(-a), 1e-12)


def _batch_share(lam_lag: np.ndarray, t_free: np.ndarray, parts: tuple, rejoin_s: float,
                 c1: np.ndarray, nu01: np.ndarray, t_tr: np.ndarray) -> np.ndarray:
    """q_rj, the share of state-1 steps that start with a rejoin batch (the comment in
    :func:`step_model`'s loop): the step's length T is ``t_free`` plus each of ``parts``'s
    (probability, duration) two-point parts, ``lam_lag`` the notice hazard one away window
    earlier, ``t_tr`` a transition's length."""
    atoms = [(np.ones_like(t_free), t_free)]
    for p_, d_ in parts:
        atoms = [(w * (1.0 - p_), t) for w, t in atoms] + [(w * p_, t + d_) for w, t in atoms]
    e_T = sum(w * np.exp(-lam_lag * t) for w, t in atoms)
    e_max = sum(w * np.exp(-lam_lag * np.maximum(t, rejoin_s)) for w, t in atoms)
    e_R = np.exp(-lam_lag * rejoin_s)
    q_b = np.clip((1.0 - e_T - e_R + e_max) / np.maximum(1.0 - e_R, 1e-300), 0.0, 1.0)
    batches = c1 * q_b + nu01 * -np.expm1(-lam_lag * np.maximum(t_tr - rejoin_s, 0.0))
    return np.clip((batches - nu01) / np.maximum(c1, 1e-300), 0.0, 1.0)


def _commit_law(method: str, N: int, one: dict, tab0: tuple, k_commit: np.ndarray,
                k_tr: np.ndarray, depth_of, per_commit, b: int) -> tuple:  # noqa: ANN001
    """(depth, weight) per commit: the depth at the groups away when a step commits (``k_commit``
    in state 1, ``k_tr`` after a transition) and elastic-drop's share of the batch."""
    c_like = np.ones_like(k_commit)
    if depth_of is None:
        d_commit, d_tr = one["depth"], np.full_like(c_like, tab0[2])
    else:
        d_commit, d_tr = np.maximum(depth_of(k_commit), one["depth"]), depth_of(k_tr)
    depth = per_commit(np.full_like(c_like, tab0[0]), d_tr, d_commit)
    depth = depth / b if method == "elastic-rebalance" else depth
    if method == "elastic-drop":
        weight = per_commit(c_like, np.clip(1.0 - k_tr / N, 1.0 / N, 1.0),
                            np.clip(1.0 - k_commit / N, 1.0 / N, 1.0))
    else:
        weight = c_like
    return depth, weight


def step_model(method: str, cfg: _Cfg, rcfg: tuple, N: int, mom: dict, pi0: np.ndarray,
               lam_live: np.ndarray, lag, tab0: tuple, expo=None,
               depth_of=None) -> StepModel:  # noqa: ANN001
    """Solve the step of ``method`` on the cycle's τ grid (the module docstring's model).

    ``mom``: the moments given no wipe-out ('k', 'depth', 'ph0', 'zero') of the groups away at a
    step start (noticed in the last R exactly); ``pi0`` the time share with no group away;
    ``lam_live`` a live group's hazard (per second); ``depth_of`` the depth at a (mean) number of
    groups away; ``lag(v)``: v one away window earlier (0 before it), for the rejoin batches;
    ``expo(x)``: a live group's cumulative hazard over an exposure [τ, τ + x] (default λ_live·x),
    so that an attempt's failures follow the hazard over the attempt."""
    if expo is None:
        expo = functools.partial(np.multiply, lam_live)  # λ_live·x
    rejoin_s, s_rj, b, fetch = rcfg
    ta, f, s = cfg.allreduce_s, cfg.allreduce_fail_factor, cfg.shrink_s
    pi0 = np.clip(pi0, 0.0, 1.0)
    zero = {"k": np.zeros_like(pi0), "depth": np.full_like(pi0, tab0[0]),
            "ph0": np.full_like(pi0, tab0[1]), "zero": np.ones_like(pi0)}
    one = _class_one(mom, np.clip(mom["zero"], 0.0, 1.0), tab0)
    comp0, patch0, p0, u0 = _work(method, cfg, b, N, zero)
    comp1, patch1, p1, u1 = _work(method, cfg, b, N, one)
    n1 = np.maximum(N - one["k"], 1.0)  # live groups at a state-1 step's start
    # state 0: a failure is noticed at the next poll (a unit start or the barrier; the next
    # step's first poll for one during the all-reduce); the sojourn ends at that notice
    T0, unit0, nu01, in_comp0, c0 = _state0(comp0, u0, ta, pi0, lam_live * N,
                                            s_rj + (fetch if method == "elastic-rebalance" else 0.0))
    retry0 = _retry_prob(method, p0, N * expo(T0))
    # state 1: the fixed point in the first attempt's exposure, and the rejoin batches that do
    # not empty the away set
    xr1 = f * ta + s + patch1
    x1 = comp1 + ta
    h_r = expo(xr1)  # a retry's hazard per live group
    e21 = -np.expm1(-(np.maximum(n1 - _first_failures(expo, n1, x1), 1.0)) * h_r)
    T1 = x1.copy()
    e1, q_rj, q_fetch, commit_ev = (np.zeros_like(T1) for _ in range(4))
    fetch_on = method == "elastic-rebalance"

    def transition(retry1: np.ndarray) -> tuple:
        """(event attempts, rest after the notice) of a transition step: its first event is
        retried with probability ρ0 (spare+repair's S grows from 1 and rebalance recomputes:
        always; drop: never), and a hit retry is an event of state 1 (retried with ρ1, hit
        again with e2)."""
        more = retry0 * after_retry(n_tr, h_r, retry1)
        retries = retry0 + retry1 * more
        # the rest of the step after the notice: half a compute less half a unit for a notice
        # inside the compute, a whole compute for one at the next step's first poll
        rest = in_comp0 * (comp0 / 2.0 - unit0 / 2.0) + (1.0 - in_comp0) * comp0 + f * ta + s \
            + retry0 * (patch0 + ta) + more * ((f - 1.0) * ta + s) \
            + (retries - retry0) * (patch1 + ta)
        return 1.0 + more, rest

    n_tr = np.maximum(N - _first_failures(expo, np.full_like(T0, float(N)), T0), 1.0)
    h_base = expo(comp1 + ta)
    h_parts = [expo(np.full_like(T0, d_)) for d_ in (s_rj, fetch if fetch_on else 0.0,
                                                      (f - 1.0) * ta + s)]
    retry1 = _retry_prob(method, p1, n1 * expo(x1))
    ev0, r01 = transition(retry1)
    c1 = np.maximum(1.0 - pi0 - nu01 * r01, 0.0) / T1
    ev1 = e1
    for _ in range(_FIXED_POINT_ITERS):
        T_prev = T1
        # P(≥ 1 failure in the first attempt's exposure), over the law of that exposure: a
        # rejoin stall, a fetch and the previous step's committed event (its stall and
        # shortened all-reduce) are there or not (E[e^(−Λ)] of independent two-point parts)
        surv = np.exp(-n1 * h_base)
        for p_, h_ in zip((q_rj, q_fetch, np.minimum(commit_ev, 1.0)), h_parts, strict=True):
            surv = surv * (1.0 - p_ + p_ * np.exp(-n1 * h_))
        e1 = 1.0 - surv
        retry1 = _retry_prob(method, p1, n1 * expo(x1))
        ev1 = e1 * (1.0 + retry1 * after_retry(np.maximum(n1 - _first_failures(expo, n1, x1), 1.0),
                                                  h_r, retry1))
        commit_ev = (1.0 - retry1) * ev1
        if fetch_on:
            q_fetch = 1.0 - (1.0 - e1) * (1.0 - q_rj)
        pre1 = q_rj * s_rj + q_fetch * fetch
        x1 = pre1 + comp1 + ta + commit_ev * ((f - 1.0) * ta + s)
        T1 = pre1 + comp1 + ta + retry1 * ev1 * (patch1 + ta) + ev1 * ((f - 1.0) * ta + s)
        ev0, r01 = transition(retry1)
        c1 = np.maximum(1.0 - pi0 - nu01 * r01, 0.0) / T1
        # rejoin batches: the batch at a step start takes the groups noticed in W_b (length T,
        # the previous step's, ending R before that start); the previous step started in state
        # 1 when a group was noticed in W_s (length R, ending at its start), and both windows
        # start at the same instant, so P(batch | state 1) = P(W_b ∩ W_s notices) / P(W_s) =
        # [1 − E e^(−ΛT) − e^(−ΛR) + E e^(−Λ max(R, T))] / (1 − e^(−ΛR)) over the law of T
        # (1 when steps outlast R, (1 − e^(−ΛT)) / (1 − e^(−ΛR)) when R ≫ T); a transition's
        # successor gets one when the transition outlasts R. The batches that empty the away
        # set start the state-0 sojourns.
        ev_extra = (T1 - pre1 - comp1 - ta) / np.maximum(e1, 1e-12)
        parts = ((q_rj, s_rj), (q_fetch, fetch if fetch_on else 0.0), (e1, ev_extra))
        q_rj = _batch_share(lag(lam_live * n1), comp1 + ta, parts, rejoin_s, c1, nu01, T0 + r01)
        if np.max(np.abs(T1 - T_prev) / T1) < 1e-10:
            break
    st = StepModel()
    st.c0, st.nu01, st.c1, st.pi0, st.T0, st.T1, st.r01 = c0, nu01, c1, pi0, T0, T1, r01
    st.e1, st.q_rj, st.q_fetch = e1, q_rj, q_fetch
    st.T1_free = comp1 + ta
    st.x1, st.units, st.comp1 = x1, u1, comp1
    st.retry1, st.e21, st.patch1 = retry1, e21, patch1
    return _per_commit_terms(st, method, cfg, rcfg, N, one, tab0, depth_of, expo,
                             (ev0, ev1, commit_ev, n1, comp0))


def _per_commit_terms(st: StepModel, method: str, cfg: _Cfg, rcfg: tuple, N: int, one: dict,
                      tab0: tuple, depth_of, expo, v: tuple) -> StepModel:  # noqa: ANN001
    """Fill in ``st``'s per-commit averages of :func:`step_model` (its states' rates c0, ν01,
    c1 and times already set): the commit period T, the stall and event time, the depth and
    weight of a commit (:func:`_commit_law`) and the compute; ``v``: the transition's and
    state 1's event attempts, state 1's committed events, its live groups and state 0's
    compute."""
    ev0, ev1, commit_ev, n1, comp0 = v
    ta, f, s = cfg.allreduce_s, cfg.allreduce_fail_factor, cfg.shrink_s
    s_rj, b = rcfg[1], rcfg[2]
    c0, nu01, c1 = st.c0, st.nu01, st.c1
    c = c0 + nu01 + c1
    st.T = 1.0 / np.maximum(c, 1e-300)

    def per_commit(v0: np.ndarray, vt: np.ndarray, v1: np.ndarray) -> np.ndarray:
        return (c0 * v0 + nu01 * vt + c1 * v1) * st.T

    st.stall = (nu01 * (s_rj + ev0 * s) + c1 * (ev1 * s + st.q_rj * s_rj)) * st.T
    st.events = (nu01 * ev0 + c1 * ev1) * st.T
    # a step commits with the groups away at its start and those its attempts noticed: the
    # failures over its exposure (all of it but the committing attempt's all-reduce and what
    # follows, noticed at the next step's first poll)
    k_commit = one["k"] + n1 * expo(np.maximum(st.T1 - ta - commit_ev * ((f - 1.0) * ta + s),
                                               0.0))
    k_tr = 1.0 + N * expo(np.maximum(st.r01 - ta, 0.0))  # a transition: its event and the rest
    st.depth, st.weight = _commit_law(method, N, one, tab0, k_commit, k_tr, depth_of, per_commit,
                                      b)
    st.comp = per_commit(comp0, comp0, st.comp1)
    return st
