"""Pieces of the event loop (:mod:`.core`) kept out of it: noticing a failure, the jitter model
of one group's compute, the stragglers, the restart windows and a batch of rejoins.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.cluster.engine.barrier import _direct_units
from spare_lib.cluster.engine.eventlog import (
    AT_BARRIER,
    AT_RESTART,
    AT_UNIT,
    EV_JOB,
    EV_NOTICE,
    EV_REJOIN,
    EV_WINDOW_RESET,
    _log,
)
from spare_lib.cluster.engine.methods import dispatch as hooks
from spare_lib.cluster.engine.methods._common import jitter as _jitter
from spare_lib.cluster.engine.renewal import _renew_c, stream_uniform

#: Jitter models of the core (``pi[P_JITTER]``): one draw per unit of work ('paper' and 'unit';
#: they differ in how Rep splits its work, a matter of its state), one factor per group per
#: attempt, and per-unit draws with a persistent slow share of the groups.
JIT_UNIT, JIT_STEP, JIT_STRAGGLER = range(3)


@njit(cache=True)
def _step_units(nf_w, t, nst, unit_s, sigma, jit_lo, rng):  # pragma: no cover - compiled
    """One group's compute with ``jitter_model='step'``: one factor for all its units, drawn
    at its first poll if it passes it; polled at each unit's start."""
    if nst == 0:
        return t, 0, False
    if nf_w <= t:
        return t, 0, True
    j = _jitter(rng, sigma, jit_lo)
    tw = t
    for k in range(nst):
        if k > 0 and nf_w <= tw:
            return tw, k, True
        tw += unit_s * j
    return tw, nst, False


@njit(cache=True)
def _kill(w, at, retry, code, ms, alive, nf, clk, cls, multi, rng, revive, rj_fail, died_epoch,
          epoch, mem_lost, next_revive, acc, ev, where, step, att):  # pragma: no cover
    """A failure of live group w is noticed at time ``at``: it is dead until a restart (or its
    rejoin after its class's rejoin time, counted from ``at`` or, with ``rj_fail``
    (``rejoin_clock='failure'``), from the failure plus its class's detection time), its clock
    renews, the method is told, and its class's detection time is kept (``acc[0]``, the longest
    pending). Returns the in-memory tier's lost flag (group w and a peer both dead in this epoch)
    and the next rejoin time of any group."""
    N = alive.shape[0]
    c = cls[4][w] if multi else 0  # the class of the failure being noticed (before it renews)
    failed_at = nf[w]
    alive[w] = False
    nf[w] = _renew_c(w, at, clk, cls, multi, rng)
    hooks.notice(code, w, retry, ms)
    if revive.shape[0] > 0:
        revive[w] = (failed_at + cls[0][c] if rj_fail else at) + cls[1][c]
        if revive[w] < next_revive:
            next_revive = revive[w]
    if died_epoch.shape[0] > 0:
        mem_lost = mem_lost or died_epoch[(w + 1) % N] == epoch or \
            died_epoch[(w + N - 1) % N] == epoch
        died_epoch[w] = epoch
    if cls[0][c] > acc[0]:
        acc[0] = cls[0][c]
    if ev[0].shape[0] > 0:
        _log(ev, at, EV_NOTICE, step, att, w, float(c), where)
    return mem_lost, next_revive


@njit(cache=True)
def _draw_slow(slow, p, s, sseed, epoch):  # pragma: no cover
    """Stragglers of epoch ``epoch`` (0 at the start, then one per global restart): group w is
    slow (factor 1 + s on its compute) when a hash of (sseed, w, epoch) falls below p."""
    for w in range(slow.shape[0]):
        slow[w] = 1.0 + s if stream_uniform(sseed, w, epoch) <= p else 1.0


@njit(cache=True)
def _compute(jmode, nf_w, t, nst, unit_s, sigma, jit_lo, bridge, rng, slow_w):  # pragma: no cover
    """One group's compute phase under the jitter model (barrier._direct_units for per-unit
    draws, barrier._step_units for one factor; a straggler's units last ``slow_w`` times as
    long)."""
    if jmode == JIT_STEP:
        return _step_units(nf_w, t, nst, unit_s, sigma, jit_lo, rng)
    if jmode == JIT_STRAGGLER:
        return _direct_units(nf_w, t, nst, unit_s * slow_w, sigma, jit_lo, bridge, rng)
    return _direct_units(nf_w, t, nst, unit_s, sigma, jit_lo, bridge, rng)


@njit(cache=True)
def _restart_windows(t0, window, alive, nf, clk, cls, multi, rng, job_t, jp, ev,
                     step):  # pragma: no cover
    """A global restart from t0: every group needs its own failure-free window (SPEC §3); a
    job event inside the restart starts every group's window again from its time. Returns
    (end of the restart, index of the first job event after it)."""
    N = alive.shape[0]
    log_on = ev[0].shape[0] > 0
    start = t0
    first = True
    while True:
        tend = start
        for w in range(N):
            if alive[w] or not first:
                if nf[w] <= start:  # failed unnoticed: noticed at the restart's start
                    if log_on:
                        _log(ev, start, EV_NOTICE, step, -1, w,
                             float(cls[4][w] if multi else 0), AT_RESTART)
                    nf[w] = _renew_c(w, start, clk, cls, multi, rng)
            else:
                while nf[w] < start:  # roll a dead group's overdue clock forward, no cost
                    nf[w] = _renew_c(w, nf[w], clk, cls, multi, rng)
            s = start
            while nf[w] < s + window:  # failure inside the window: window restarts
                s = nf[w]
                nf[w] = _renew_c(w, s, clk, cls, multi, rng)
                if log_on:
                    _log(ev, s, EV_WINDOW_RESET, step, -1, w, s + window, 0)
            if s + window > tend:
                tend = s + window
            alive[w] = True
        while jp < job_t.shape[0] and job_t[jp] <= start:
            jp += 1
        if jp < job_t.shape[0] and job_t[jp] < tend:  # a job event during the restart
            start = job_t[jp]
            jp += 1
            first = False
            if log_on:
                _log(ev, start, EV_JOB, step, -1, -1, start, 0)
            continue
        return tend, jp


@njit(cache=True)
def _rejoin_batch(t, alive, nf, revive, clk, cls, multi, rng, ev, step):  # pragma: no cover
    """Repaired groups whose rejoin time has passed are back (failures while they were away
    are absorbed). Returns (groups back, next rejoin time of the others)."""
    N = alive.shape[0]
    next_revive = np.inf
    back = 0
    for w in range(N):
        if alive[w]:
            continue
        if revive[w] <= t:
            while nf[w] < revive[w]:  # failures while it was away are absorbed
                nf[w] = _renew_c(w, nf[w], clk, cls, multi, rng)
            alive[w] = True
            revive[w] = np.inf
            back += 1
            if ev[0].shape[0] > 0:
                _log(ev, t, EV_REJOIN, step, -1, w, 0.0, 0)
        elif revive[w] < next_revive:
            next_revive = revive[w]
    return back, next_revive


@njit(cache=True)
def _direct_phase(t, t0, code, retry, ms, depth, mult, compute_s, jmode, sigma, jit_lo, bridge, rng,
                  slow, alive, nf, clk, cls, multi, revive, rj_fail, died_epoch, epoch, mem_lost,
                  next_revive, acc, ev, step, att, n_alive):  # pragma: no cover
    """One attempt's compute phase by the direct loop (every live group, every unit, from t0),
    the barrier and the all-reduce poll; failures are noticed (``_kill``) as they are found,
    so the draws come in the core's order. Returns (t̄, failures noticed, units started,
    mem_lost, next_revive, live groups)."""
    N = alive.shape[0]
    gi = ms[2]
    tbar = t  # the attempt's start; every group computes from t0 (after a data fetch)
    min_nf = np.inf
    n_new = 0
    stacks = 0
    for w in range(N):
        if not alive[w]:
            continue
        # the method says how much to compute: nst units of unit_s each (SPARe: its first S
        # stack entries, or its patch on a retry; Rep: one r·64 s compute, or r of 64 s)
        nst, unit_s = hooks.work(code, retry, gi[w], depth, mult, compute_s)
        # one group's compute (barrier._direct_units): sum-then-bridge while the clip is
        # negligible, else one jittered draw per unit; polled at each start. Other jitter
        # models: one factor per attempt, or a straggler's slower units
        if jmode == JIT_UNIT:
            tw, ks, failed = _direct_units(nf[w], t0, nst, unit_s, sigma, jit_lo, bridge, rng)
        else:
            tw, ks, failed = _compute(jmode, nf[w], t0, nst, unit_s, sigma, jit_lo, bridge, rng,
                                      slow[w] if jmode == JIT_STRAGGLER else 1.0)
        stacks += ks
        if failed:
            mem_lost, next_revive = _kill(w, tw, retry, code, ms, alive, nf, clk, cls, multi, rng,
                                          revive, rj_fail, died_epoch, epoch, mem_lost,
                                          next_revive, acc, ev, np.int64(AT_UNIT), step, att)
            n_alive -= 1
            n_new += 1
        elif nf[w] < min_nf:
            min_nf = nf[w]
        if tw > tbar:
            tbar = tw
    # barrier (slowest group), then every live group is polled at the all-reduce
    for w in range(N):
        if min_nf > tbar:
            break  # no live clock has run out: nobody to notice
        if alive[w] and nf[w] <= tbar:
            mem_lost, next_revive = _kill(w, tbar, retry, code, ms, alive, nf, clk, cls, multi,
                                          rng, revive, rj_fail, died_epoch, epoch, mem_lost,
                                          next_revive, acc, ev, np.int64(AT_BARRIER), step, att)
            n_alive -= 1
            n_new += 1
    return tbar, n_new, stacks, mem_lost, next_revive, n_alive
