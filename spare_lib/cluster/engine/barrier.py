"""Event-driven barrier: one step's compute phase sampled from its exact distribution (issue 16).

A step's compute phase lasts as long as its slowest live group (SPEC §4.1). The event core's
direct path draws every group's every stack, so its cost grows as N × steps. Here only the
groups whose failure clock can fire during the step are simulated one by one; the barrier of
the others is drawn directly from the distribution of their maximum.

Model (what the core's direct loop does, SPEC §3–4)
----------------------------------------------------
At time t every live group w computes ``nst`` units of ``unit_s`` seconds, unit k taking
``unit_s · J_k``, J_k iid jitter factors N(1, σ²) clipped at ``jit_lo``; w is polled at the
start of each unit. With T_w = J_1 + … + J_nst and P_k = J_1 + … + J_k, w notices a failure
at t + unit_s·P_k for the first k < nst with nf_w ≤ t + unit_s·P_k, and stops (its end time e_w
is that notice time); otherwise e_w = t + unit_s·T_w. The barrier is t̄ = max(t, max_w e_w); then
every live group with nf_w ≤ t̄ notices its failure at t̄ (all-reduce poll).

Exact sampler
-------------
1. Groups with nf_w ≤ t notice at t and compute nothing. Let n be the other live groups.
2. Their n totals are iid with CDF F. Draw the maximum M = F⁻¹(U^{1/n}) and its index A,
   uniform over the n groups and independent of M; given (M, A) the other n − 1 totals are
   iid F truncated to ≤ M (order statistics of an iid continuous sample).
3. Only groups with nf_w ≤ t + unit_s·M ("candidates") can notice a failure during their
   compute or at the all-reduce. Each candidate gets T_w = M if it is A, else a draw of
   F(·)|≤M, F⁻¹(F(M)·V); its unit times follow from T_w by the Gaussian bridge
   J_k | (J_k + … + J_nst = R) ~ N(R/m, σ²(1 − 1/m)) over the m units left (the core's
   bridge), which gives its notice time, if any, and its stack count.
4. Barrier: t + unit_s·M unless A is a candidate that noticed a failure; then the
   non-candidates' maximum is drawn given M, F⁻¹(F(M)·V^{1/n_nc}) over the n_nc of them, and
   t̄ is the largest end time. No further order statistic is needed: non-candidates cannot
   fail, their totals are iid F|≤M given (M, A).
5. All-reduce poll: candidates with nf_w ≤ t̄ (every other group has nf_w > t + unit_s·M ≥ t̄).

F by case (each exact, or the direct path):

* ``nst == 1``: the clipped normal itself, F⁻¹(u) = max(lo, 1 + σ·Φ⁻¹(u)) (any σ; a single
  unit is only polled at its start, so no bridge is needed);
* ``nst ≥ 2`` and 1 − lo > 9σ: the core's own bridge condition, under which the core draws a
  total as N(nst, nst·σ²) (the clip has probability < 1e-19 per unit): F is that normal;
* σ = 0: every unit is exactly ``unit_s``;
* ``nst ≥ 2``, σ > 0 and a clip closer than 9σ: the direct per-group, per-stack loop.

Quantiles use the upper tail Q = 1 − F, with Q(M) = −expm1(log U / n), so M is accurate for
n up to 10⁸ and beyond. Φ⁻¹ is Acklam's rational approximation refined by one Halley step
(|error| < 1e-15 in the tests, against scipy.special.ndtri).

Cost per attempt: one O(N) compare over the live groups (vectorised, no random draws) plus
O(candidates · nst) draws, against O(N · nst) draws for the direct path. The core avoids even
the compare: it keeps the live groups sorted by next failure time (:func:`index_build`; a live
group's clock only changes at a restart or a rejoin), so a step reads the few groups whose
clocks fire before its threshold (:func:`barrier_step_idx`), and a retry whose patch is sparse
touches only the groups with their own unit count (:func:`barrier_step_patch_idx`). Same draws
in the same order, same results as the scanning samplers.

Interface (numba, for the core's compute loop)
----------------------------------------------
``barrier_step(t, nst, unit_s, alive, nf, sigma, jit_lo, rng, fail_w, fail_t, cand)``
    every live group computes ``nst`` units (a first attempt);
``barrier_step_patch(t, nst_w, unit_s, alive, nf, sigma, jit_lo, rng, fail_w, fail_t, cand)``
    live group w computes ``nst_w[w]`` units (a retry's patch compute);
``barrier_direct(...)``, ``barrier_direct_patch(...)``
    the same contract by the direct per-group, per-stack loop (the core's loop, for checks);
``barrier_step_idx(t, nst, unit_s, alive, nf, n_alive, ix_w, ix_key, ix_meta, ...)``,
``barrier_step_patch_idx(t, k0, groups, n_groups, nst_w, xst, sid, unit_s, alive, nf, n_alive,
ix_w, ix_key, ix_meta, ...)``
    :func:`barrier_step` and :func:`barrier_step_patch` with the live groups read from the
    sorted index (:func:`index_buffers`, :func:`index_build`, :func:`index_rejoin`); the patch
    is k0 units for every live group but ``groups[:n_groups]`` (stamped ``xst[w] == sid``),
    which compute ``nst_w[w]``.

All return ``(tbar, n_fail, n_stacks)``: the barrier end time t̄, the number of noticed
failures and the stacks computed (units started). ``fail_w[:n_fail]`` and ``fail_t[:n_fail]``
are the groups that noticed a failure and their notice times (compute-phase notices, then the
all-reduce poll at t̄). ``alive`` and ``nf`` are not modified: the caller marks the groups
dead, renews their clocks from their notice times and calls the method's ``notice`` hook.
``fail_w``, ``fail_t``, ``cand`` are buffers of length N (:func:`barrier_buffers`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from spare_lib._util.normal import norm_isf, norm_ppf
from spare_lib._util.sorting import sort_prefix
from spare_lib.cluster.engine.index import (
    _front_upto,
    _index_front,
    index_buffers,
    index_build,
    index_rejoin,
)
from spare_lib.cluster.engine.methods._common import jitter as _jitter

#: Barrier samplers of :func:`spare_lib.cluster.runs.simulate.simulate` (``barrier=``).
BARRIER_MODES = ("sampled", "direct")

def barrier_buffers(N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three length-N buffers of the samplers: ``(fail_w, fail_t, cand)``."""
    return np.empty(N, np.int64), np.empty(N, np.float64), np.empty(N, np.int64)


@njit(cache=True)
def _unit_open(rng):  # pragma: no cover - compiled
    """Uniform on (0, 1]."""
    return 1.0 - rng.random()


@njit(cache=True)
def _bridge(nf_w, t, nst, unit_s, tot, sigma, rng):  # pragma: no cover - compiled
    """Unit times of one group given its total ``tot`` (the core's Gaussian bridge).

    Returns (end time, units started, failed): the group is polled at each unit's start
    (nf_w > t at the first poll is the caller's precondition)."""
    tw = t
    rest = tot
    for k in range(nst):
        if k > 0 and nf_w <= tw:
            return tw, k, True
        m = nst - k
        if m == 1:
            d = rest
        else:
            d = rest / m + sigma * math.sqrt(1.0 - 1.0 / m) * rng.standard_normal()
            rest -= d
        tw += unit_s * d
    return tw, nst, False


@njit(cache=True)
def _fixed_units(nf_w, t, nst, unit_s):  # pragma: no cover - compiled
    """σ = 0: every unit takes exactly ``unit_s``, summed as the core does."""
    tw = t
    for k in range(nst):
        if nf_w <= tw:
            return tw, k, True
        tw += unit_s * 1.0
    return tw, nst, False


@njit(cache=True)
def _direct_units(nf_w, t, nst, unit_s, sigma, jit_lo, bridge, rng):  # pragma: no cover
    """One group's compute by the core's direct loop (bridge when exact, else per unit)."""
    tw = t
    if nst >= 2 and bridge and nf_w > tw:
        tot = nst + sigma * math.sqrt(nst) * rng.standard_normal()
        if nf_w > tw + unit_s * tot:
            return tw + unit_s * tot, nst, False
        return _bridge(nf_w, t, nst, unit_s, tot, sigma, rng)
    for k in range(nst):
        if nf_w <= tw:
            return tw, k, True
        tw += unit_s * _jitter(rng, sigma, jit_lo)
    return tw, nst, False


@njit(cache=True)
def _member(w, k, uniform, nst_w, alive, k0, xst, sid):  # pragma: no cover - compiled
    """Live group w computes k units: every live group (``uniform``), those with nst_w[w] == k
    (dense, ``sid < 0``), or, sparse, nst_w[w] for the groups stamped ``xst[w] == sid`` and k0
    for every other."""
    if not alive[w]:
        return False
    if uniform:
        return True
    if sid >= 0 and xst[w] != sid:
        return k0 == k
    return nst_w[w] == k


@njit(cache=True)
def _collect(t, th, k, uniform, nst_w, alive, nf, k0, xst, sid, ix_w, ix_key, ix_meta, i0, use_ix,
             cand):  # pragma: no cover - compiled
    """Candidates of a set: its members with t < nf ≤ th, ascending, into ``cand``; returns how
    many. By a scan of every group, or (``use_ix``) from the sorted index's entries from ``i0``
    on (every live member with nf > t sits there)."""
    nc = 0
    if not use_ix:
        for w in range(alive.shape[0]):
            if _member(w, k, uniform, nst_w, alive, k0, xst, sid) and t < nf[w] <= th:
                cand[nc] = w
                nc += 1
        return nc
    L = _front_upto(th, alive, nf, ix_w, ix_key, ix_meta)
    i = i0
    while i < L and ix_key[i] <= th:
        w = ix_w[i]
        if ix_key[i] > t and _member(w, k, uniform, nst_w, alive, k0, xst, sid):
            cand[nc] = w
            nc += 1
        i += 1
    sort_prefix(cand, nc)
    return nc


@njit(cache=True)
def _set_barrier(t, k, unit_s, uniform, nst_w, alive, nf, n, nf_min, sigma, jit_lo, rng,
                 fail_w, fail_t, nfail, cand, k0, xst, sid, ix_w, ix_key, ix_meta, i0,
                 use_ix):  # pragma: no cover - compiled
    """Largest end time of the n groups (live, nf > t, computing k ≥ 1 units) of one set.

    Appends their compute-phase failures to (fail_w, fail_t) from index ``nfail``; the
    candidates examined are left in ``cand`` (their count is returned) for the all-reduce
    poll. Returns (end_max, nfail, stacks, n_cand, threshold): groups not in ``cand`` have
    nf > threshold ≥ end_max. Membership: :func:`_member`; candidates: :func:`_collect` (a scan,
    or the sorted index with ``nf_min = -inf``: no candidate then means nf_min > threshold).
    """
    N = alive.shape[0]
    bridge = sigma > 0.0 and (1.0 - jit_lo) > 9.0 * sigma
    if sigma == 0.0:
        tfin = t
        for _ in range(k):
            tfin += unit_s * 1.0
        nc = 0
        if nf_min <= tfin:
            nc = _collect(t, tfin, k, uniform, nst_w, alive, nf, k0, xst, sid, ix_w, ix_key, ix_meta,
                          i0, use_ix, cand)
        emax = tfin if n > nc else t
        stacks = (n - nc) * k
        for i in range(nc):
            w = cand[i]
            tw, ks, failed = _fixed_units(nf[w], t, k, unit_s)
            stacks += ks
            if failed:
                fail_w[nfail] = w
                fail_t[nfail] = tw
                nfail += 1
            if tw > emax:
                emax = tw
        return emax, nfail, stacks, nc, tfin
    if k >= 2 and not bridge:
        # clipping is not negligible for a sum: the direct loop, every member a candidate
        emax = t
        stacks = 0
        nc = 0
        for w in range(N):
            if _member(w, k, uniform, nst_w, alive, k0, xst, sid) and nf[w] > t:
                cand[nc] = w
                nc += 1
                tw, ks, failed = _direct_units(nf[w], t, k, unit_s, sigma, jit_lo, False, rng)
                stacks += ks
                if failed:
                    fail_w[nfail] = w
                    fail_t[nfail] = tw
                    nfail += 1
                if tw > emax:
                    emax = tw
        return emax, nfail, stacks, nc, np.inf
    # total of k units: N(k, kσ²) (k ≥ 2, the core's bridge) or the clipped normal (k = 1)
    sd = sigma * math.sqrt(k)
    q_m = -math.expm1(math.log(_unit_open(rng)) / n)
    tot_m = k + sd * norm_isf(q_m)
    if k == 1 and tot_m < jit_lo:
        tot_m = jit_lo
    th = t + unit_s * tot_m
    if nf_min > th:
        return th, nfail, n * k, 0, th
    nc = _collect(t, th, k, uniform, nst_w, alive, nf, k0, xst, sid, ix_w, ix_key, ix_meta, i0,
                  use_ix, cand)
    if nc == 0:
        return th, nfail, n * k, 0, th
    if k == 1:
        # one unit, polled only at its start (nf > t): candidates can only fail at the poll
        return th, nfail, n, nc, th
    a = int(rng.random() * n)  # the argmax: cand[a] if a < nc, else a non-candidate
    emax = t
    stacks = (n - nc) * k
    a_failed = False
    for i in range(nc):
        w = cand[i]
        if i == a:
            tot = tot_m
        else:
            tot = k + sd * norm_isf(q_m + (1.0 - q_m) * _unit_open(rng))
        tw, ks, failed = _bridge(nf[w], t, k, unit_s, tot, sigma, rng)
        stacks += ks
        if failed:
            fail_w[nfail] = w
            fail_t[nfail] = tw
            nfail += 1
            if i == a:
                a_failed = True
        if tw > emax:
            emax = tw
    if not a_failed:
        if th > emax:
            emax = th
    elif n > nc:
        n_nc = n - nc
        q2 = q_m + (1.0 - q_m) * (-math.expm1(math.log(_unit_open(rng)) / n_nc))
        e2 = t + unit_s * (k + sd * norm_isf(q2))
        if e2 > emax:
            emax = e2
    return emax, nfail, stacks, nc, th


@njit(cache=True, inline="always")
def _add_unseen(w, tbar, fail_w, fail_t, nfail, j0, j1):  # pragma: no cover - compiled
    """Append group w, noticed at t̄, unless it is among fail_w[j0:j1] already."""
    for j in range(j0, j1):
        if fail_w[j] == w:
            return nfail
    fail_w[nfail] = w
    fail_t[nfail] = tbar
    return nfail + 1


@njit(cache=True)
def _poll(alive, nf, tbar, fail_w, fail_t, nfail, cand, nc, n0):  # pragma: no cover
    """All-reduce poll of the candidates cand[:nc] not yet failed (fail_w[n0:nfail])."""
    n1 = nfail
    for i in range(nc):
        w = cand[i]
        if nf[w] <= tbar:
            nfail = _add_unseen(w, tbar, fail_w, fail_t, nfail, n0, n1)
    return nfail


@njit(cache=True)
def _poll_all(alive, nf, tbar, fail_w, fail_t, nfail):  # pragma: no cover
    """All-reduce poll of every live group not already in fail_w[:nfail]."""
    n1 = nfail
    for w in range(alive.shape[0]):
        if alive[w] and nf[w] <= tbar:
            nfail = _add_unseen(w, tbar, fail_w, fail_t, nfail, 0, n1)
    return nfail


@njit(cache=True)
def barrier_step(t, nst, unit_s, alive, nf, sigma, jit_lo, rng, fail_w, fail_t,
                 cand):  # pragma: no cover - compiled
    """One attempt's compute phase, barrier and all-reduce poll, every live group computing
    ``nst`` units of ``unit_s`` s (exact in distribution; see the module docstring).

    Parameters
    ----------
    t : float
        Start of the compute phase.
    nst : int
        Units per live group (SPARe: the depth S; Rep: 1).
    unit_s : float
        Nominal seconds per unit (SPARe: 64 s; Rep: r·64 s).
    alive : bool (N,), nf : float (N,)
        Live groups and their next failure times (not modified).
    sigma, jit_lo : float
        Jitter σ and its lower clip.
    rng : numpy.random.Generator
    fail_w, fail_t, cand : buffers of length N (:func:`barrier_buffers`).

    Returns
    -------
    (tbar, n_fail, n_stacks)
    """
    N = alive.shape[0]
    nfail = 0
    n = 0
    nf_min = np.inf
    for w in range(N):  # O(N) compare, no draws
        if alive[w]:
            x = nf[w]
            if x > t:
                n += 1
                if x < nf_min:
                    nf_min = x
            elif nst > 0:  # polled at its first unit: fails at t
                fail_w[nfail] = w
                fail_t[nfail] = t
                nfail += 1
    n0 = nfail
    tbar = t
    stacks = 0
    nc = 0
    if nst > 0 and n > 0:
        emax, nfail, stacks, nc, _th = _set_barrier(t, nst, unit_s, True, cand, alive, nf, n,
                                                    nf_min, sigma, jit_lo, rng, fail_w, fail_t,
                                                    nfail, cand, 0, cand, -1, cand, fail_t, cand,
                                                    0, False)
        if emax > tbar:
            tbar = emax
    if nst == 0:  # nobody computes: the live groups with nf ≤ t fail at the poll (t̄ = t)
        for w in range(N):
            if alive[w] and nf[w] <= t:
                fail_w[nfail] = w
                fail_t[nfail] = t
                nfail += 1
        return tbar, nfail, 0
    nfail = _poll(alive, nf, tbar, fail_w, fail_t, nfail, cand, nc, n0)
    return tbar, nfail, stacks


@njit(cache=True)
def barrier_step_patch(t, nst_w, unit_s, alive, nf, sigma, jit_lo, rng, fail_w, fail_t,
                       cand):  # pragma: no cover - compiled
    """:func:`barrier_step` where live group w computes ``nst_w[w]`` ≥ 0 units (a retry).

    The live groups are split by their unit count; each set's largest end time is sampled
    exactly and independently (the sets are independent), and the barrier is the largest.
    The all-reduce poll covers every live group, including those that computed nothing.
    """
    N = alive.shape[0]
    kmax = 0
    for w in range(N):
        if alive[w] and nst_w[w] > kmax:
            kmax = nst_w[w]
    cnt = np.zeros(kmax + 1, np.int64)
    mins = np.full(kmax + 1, np.inf)
    nfail = 0
    for w in range(N):
        if alive[w]:
            k = nst_w[w]
            x = nf[w]
            if x > t:
                cnt[k] += 1
                if x < mins[k]:
                    mins[k] = x
            elif k > 0:
                fail_w[nfail] = w
                fail_t[nfail] = t
                nfail += 1
    tbar = t
    stacks = 0
    for k in range(1, kmax + 1):
        if cnt[k] == 0:
            continue
        emax, nfail, st, _nc, _th = _set_barrier(t, k, unit_s, False, nst_w, alive, nf, cnt[k],
                                                 mins[k], sigma, jit_lo, rng, fail_w, fail_t,
                                                 nfail, cand, 0, nst_w, -1, cand, fail_t, cand, 0,
                                                 False)
        stacks += st
        if emax > tbar:
            tbar = emax
    nfail = _poll_all(alive, nf, tbar, fail_w, fail_t, nfail)  # O(N) compare
    return tbar, nfail, stacks


@njit(cache=True)
def _poll_idx(alive, nf, tbar, fail_w, fail_t, nfail, ix_w, ix_key, ix_meta,
              h):  # pragma: no cover - compiled
    """:func:`_poll_all` from the index: the live groups with nf ≤ t̄ not in fail_w[:nfail],
    appended in group order."""
    n1 = nfail
    L = _front_upto(tbar, alive, nf, ix_w, ix_key, ix_meta)
    i = h
    while i < L and ix_key[i] <= tbar:
        w = ix_w[i]
        i += 1
        if alive[w]:
            nfail = _add_unseen(w, tbar, fail_w, fail_t, nfail, 0, n1)
    sort_prefix(fail_w[n1:], nfail - n1)
    return nfail


@njit(cache=True)
def barrier_step_idx(t, nst, unit_s, alive, nf, n_alive, ix_w, ix_key, ix_meta, sigma, jit_lo,
                     rng, fail_w, fail_t, cand):  # pragma: no cover - compiled
    """:func:`barrier_step` with the live groups read from the sorted index.

    Same draws in the same order, same results (failures in the same order); ``n_alive`` is
    the number of live groups and (ix_w, ix_key, ix_meta) the index of exactly them
    (:func:`index_build`). Cost: the index entries with nf up to the threshold, not O(N).
    """
    h = _index_front(alive, ix_w, ix_meta)
    L = _front_upto(t, alive, nf, ix_w, ix_key, ix_meta)
    nfail = 0
    i = h
    while i < L and ix_key[i] <= t:  # overdue: polled at their first unit, they fail at t
        w = ix_w[i]
        if alive[w]:
            fail_w[nfail] = w
            fail_t[nfail] = t
            nfail += 1
        i += 1
    sort_prefix(fail_w, nfail)
    n = n_alive - nfail
    if nst == 0:  # nobody computes: the overdue groups fail at the poll (t̄ = t)
        return t, nfail, 0
    n0 = nfail
    tbar = t
    stacks = 0
    nc = 0
    if n > 0:
        emax, nfail, stacks, nc, _th = _set_barrier(t, nst, unit_s, True, cand, alive, nf, n,
                                                    -np.inf, sigma, jit_lo, rng, fail_w, fail_t,
                                                    nfail, cand, 0, cand, -1, ix_w, ix_key,
                                                    ix_meta, i, True)
        if emax > tbar:
            tbar = emax
    nfail = _poll(alive, nf, tbar, fail_w, fail_t, nfail, cand, nc, n0)
    return tbar, nfail, stacks


@njit(cache=True)
def barrier_step_patch_idx(t, k0, groups, n_groups, nst_w, xst, sid, unit_s, alive, nf, n_alive,
                           ix_w, ix_key, ix_meta, sigma, jit_lo, rng, fail_w, fail_t,
                           cand):  # pragma: no cover - compiled
    """:func:`barrier_step_patch` for a sparse patch, from the sorted index.

    Every live group computes ``k0`` units except ``groups[:n_groups]``, which compute
    ``nst_w[w]`` and are stamped ``xst[w] == sid`` by the caller. Same draws in the same order
    and same results as :func:`barrier_step_patch` on the dense counts; cost O(n_groups + index
    entries up to the thresholds) instead of O(N · units).
    """
    h = _index_front(alive, ix_w, ix_meta)
    kmax = k0
    n_exc = 0
    for g in range(n_groups):
        w = groups[g]
        if alive[w]:
            n_exc += 1
            if nst_w[w] > kmax:
                kmax = nst_w[w]
    cnt = np.zeros(kmax + 1, np.int64)  # live groups with nf > t per unit count
    cnt[k0] = n_alive - n_exc
    for g in range(n_groups):
        w = groups[g]
        if alive[w]:
            cnt[nst_w[w]] += 1
    nfail = 0
    L = _front_upto(t, alive, nf, ix_w, ix_key, ix_meta)
    i = h
    while i < L and ix_key[i] <= t:
        w = ix_w[i]
        i += 1
        if not alive[w]:
            continue
        k = nst_w[w] if xst[w] == sid else k0
        cnt[k] -= 1
        if k > 0:
            fail_w[nfail] = w
            fail_t[nfail] = t
            nfail += 1
    sort_prefix(fail_w, nfail)
    tbar = t
    stacks = 0
    for k in range(1, kmax + 1):
        if cnt[k] == 0:
            continue
        emax, nfail, st, _nc, _th = _set_barrier(t, k, unit_s, False, nst_w, alive, nf, cnt[k],
                                                 -np.inf, sigma, jit_lo, rng, fail_w, fail_t,
                                                 nfail, cand, k0, xst, sid, ix_w, ix_key, ix_meta,
                                                 i, True)
        stacks += st
        if emax > tbar:
            tbar = emax
    nfail = _poll_idx(alive, nf, tbar, fail_w, fail_t, nfail, ix_w, ix_key, ix_meta, h)
    return tbar, nfail, stacks


@njit(cache=True)
def barrier_direct_patch(t, nst_w, unit_s, alive, nf, sigma, jit_lo, rng, fail_w, fail_t,
                         cand):  # pragma: no cover - compiled
    """The core's direct loop (every group, every stack), same contract as the samplers."""
    N = alive.shape[0]
    bridge = sigma > 0.0 and (1.0 - jit_lo) > 9.0 * sigma
    tbar = t
    nfail = 0
    stacks = 0
    for w in range(N):
        if not alive[w]:
            continue
        tw, ks, failed = _direct_units(nf[w], t, nst_w[w], unit_s, sigma, jit_lo, bridge, rng)
        stacks += ks
        if failed:
            fail_w[nfail] = w
            fail_t[nfail] = tw
            nfail += 1
        if tw > tbar:
            tbar = tw
    nfail = _poll_all(alive, nf, tbar, fail_w, fail_t, nfail)
    return tbar, nfail, stacks


@njit(cache=True)
def barrier_direct(t, nst, unit_s, alive, nf, sigma, jit_lo, rng, fail_w, fail_t,
                   cand):  # pragma: no cover - compiled
    """:func:`barrier_direct_patch` with every live group computing ``nst`` units."""
    nst_w = np.full(alive.shape[0], nst, np.int64)
    return barrier_direct_patch(t, nst_w, unit_s, alive, nf, sigma, jit_lo, rng, fail_w, fail_t,
                                cand)


__all__ = ["BARRIER_MODES", "barrier_buffers", "barrier_direct", "barrier_direct_patch",
           "barrier_step", "barrier_step_idx", "barrier_step_patch", "barrier_step_patch_idx",
           "index_buffers", "index_build", "index_rejoin", "norm_isf", "norm_ppf"]
