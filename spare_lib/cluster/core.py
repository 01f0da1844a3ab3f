"""Time-to-train discrete-event simulation of SPARe+CKPT, Rep+CKPT and CKPT-only (SPEC §3–6).

One call of :func:`simulate` trains ``config.steps`` committed steps on N data-parallel groups of
a cluster that fails (one renewal failure clock per group, never reset) and returns the wall
time, the up/down split and the event counts as a :class:`SimResult`.

Model (SPEC §3–5, every detail is implemented as written there):

* **Failure clocks.** Group w's next failure time ``nf[w]`` is absolute. A failure is noticed
  only when the group is polled: at the start of each of its stack computes, at the all-reduce
  (after the barrier), at a checkpoint write (the leader only) and continuously during a global
  restart. When noticed at time t, the next failure is at t + X, X ~ Weibull(k)·λ or
  Exp(N·m). A noticed group is dead until the next global restart; its clock keeps running.
* **SPARe step.** Every live group computes its first S stack entries (64 s × a jitter factor
  per entry), a barrier waits for the slowest group, each live group is polled once more, and
  the all-reduce takes T_a (×0.5 if a failure was noticed in this attempt). Failures → the
  controller RECTLR on the survivors: phase 0 (coverage holds: shrink 0.1 s and commit), a
  reorder (shrink, new depth S*, retry the same step with patch compute: at most one stack per
  survivor by default, ``exact_patch=True`` for every missing stack) or a wipe-out (global
  restart).
* **Rep+CKPT.** ceil(N/r) replica sets of r consecutive ids; each group computes r·64 s with
  one jitter draw; a failure is masked (shrink, commit) while every set keeps a live member.
  **CKPT-only** is Rep with r = 1 (any failure → restart).
* **Checkpoint** every C committed steps and after the last one: the leader (lowest live
  group) is polled; if it has failed, the checkpoint is not written and costs nothing, and the
  leader counts as failed in the next attempt's all-reduce; otherwise it costs T_s.
* **Global restart.** Dead groups' overdue clocks are rolled forward renewal by renewal to the
  restart's start (at no cost); each group then needs its own failure-free window of T_r (a
  failure inside restarts the window); the restart ends when the last group is through. All
  groups are revived, the base layout is restored, S = 1, and training rolls back to the last
  written checkpoint (step 0 without checkpoints).

Downtime is restart plus shrink time; compute, all-reduce, checkpoints and redone steps count
as uptime. T0 = steps·(64 s + T_a).

What differs between methods (the compute phase of a group, what a noticed failure does, how a
failed attempt is resolved, the reset at a restart) is asked of the method's hooks through
:mod:`spare_lib.cluster.methods.dispatch`; this loop is the same for every method. SPARe's
controller is :func:`spare_lib.rectlr.rectlr_kernel` (numba), called from SPARe's ``resolve``.

Failure clocks (``dist``): 0 Weibull and 1 exponential drawn from the run's generator; 2 a
replayed trace; 3 Weibull and 4 exponential from *failure streams*: group w's j-th gap comes
from a counter-based hash of (failure_seed, w, j) (splitmix64), so every method and r given the
same failure seed sees the same gap sequence per group (common random numbers).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.cluster.methods import dispatch as hooks
from spare_lib.cluster.methods._common import COMMIT_FIXED, COMPUTE_MULT, DEPTH, RETRY, WIPEOUT
from spare_lib.cluster.methods._common import jitter as _jitter

# Slots of the float / int result arrays of the core.
_F_TOTAL, _F_RESTART, _F_SHRINK, _F_SUM_S, _F_PATCH, _F_CKPT_TIME = range(6)
_N_F = 6
(_I_COMMITS, _I_RESTARTS, _I_MASKED, _I_PHASE0, _I_REORDER, _I_REDONE, _I_CKPT_OK,
 _I_CKPT_FAIL, _I_FAILS, _I_DONE, _I_COMMITTED, _I_ATTEMPTS, _I_STACKS) = range(13)
_N_I = 13
#: How many per-restart failure counts the core records at most (the first ones).
MAX_RESTART_RECORDS = 100_000

#: Failure-clock codes (``dist``) of the core.
DIST_WEIBULL, DIST_EXPONENTIAL, DIST_TRACE, DIST_WEIBULL_STREAM, DIST_EXPONENTIAL_STREAM = range(5)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_ROUND = np.uint64(0xD1B54A32D192ED03)


@njit(cache=True)
def _mix64(z):  # pragma: no cover
    """splitmix64's finaliser (Steele, Lea and Flood 2014): a bijection of uint64."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def stream_uniform(fseed, w, j):  # pragma: no cover
    """Uniform on (0, 1] for gap j of group w under failure seed ``fseed`` (uint64)."""
    z = _mix64(fseed + np.uint64(w + 1) * _GOLDEN)
    z = _mix64(z + np.uint64(j + 1) * _ROUND)
    return (np.float64(z >> np.uint64(11)) + 1.0) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _renew(w, t, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt):  # pragma: no cover
    """Next failure time of group w after a renewal at time t."""
    if dist == DIST_WEIBULL:
        return t + scale * rng.weibull(shape)
    if dist == DIST_EXPONENTIAL:
        return t + rng.exponential(scale)
    if dist == DIST_TRACE:
        c = tr_cur[w]
        end = tr_ptr[w + 1]
        while c < end and tr_times[c] <= t:
            c += 1
        tr_cur[w] = c
        if c < end:
            return tr_times[c]
        return np.inf
    u = stream_uniform(fseed, w, fcnt[w])
    fcnt[w] += 1
    if dist == DIST_WEIBULL_STREAM:
        return t + scale * (-np.log(u)) ** (1.0 / shape)
    return t - scale * np.log(u)


@njit(cache=True)
def _core(code, ms, steps, ckpt_every, compute_s, sigma, jit_lo, ta, fail_factor, restart_len,
          shrink, ts, dist, shape, scale, tr_ptr, tr_times, fseed, rng, max_wall,
          fout, iout, per_restart):  # pragma: no cover
    N = ms[0].shape[0]
    ints = ms[6]
    gi = ms[2]
    flts = ms[7]
    # sum-then-bridge sampling of a group's stack times is exact while clipping is negligible
    bridge = sigma > 0.0 and (1.0 - jit_lo) > 9.0 * sigma
    alive = np.ones(N, dtype=np.bool_)
    nf = np.empty(N, dtype=np.float64)
    tr_cur = tr_ptr[:-1].copy()
    fcnt = np.zeros(N, dtype=np.int64)
    for w in range(N):
        nf[w] = _renew(w, -1.0, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur, fseed, fcnt)

    t = 0.0
    committed = 0
    last_ckpt = 0
    pending_flag = False
    fails_since = 0
    n_rec = 0
    restart_time = 0.0
    shrink_time = 0.0
    ckpt_time = 0.0
    sum_s = 0.0
    patch_stacks = 0.0
    commits = 0
    restarts = 0
    masked = 0
    phase0 = 0
    reorder = 0
    redone = 0
    ck_ok = 0
    ck_fail = 0
    fails = 0
    attempts = 0
    n_stacks = 0
    done = False

    while not done and t <= max_wall:
        # ---------------- one step: first attempt, then retries ----------------
        retry = False
        wiped = False
        while True:
            attempts += 1
            n_flag = 0
            n_new = 0
            if pending_flag:  # the leader died at the checkpoint write: flagged now
                n_flag += 1
                pending_flag = False
            tbar = t
            min_nf = np.inf
            depth = ints[DEPTH]
            mult = flts[COMPUTE_MULT]
            for w in range(N):
                if not alive[w]:
                    continue
                # the method says how much to compute: nst units of unit_s each (SPARe: its
                # first S stack entries, or its patch on a retry; Rep: one r·64 s compute)
                nst, unit_s = hooks.work(code, retry, gi[w], depth, mult, compute_s)
                nf_w = nf[w]
                tw = t
                failed = False
                if nst >= 2 and bridge and nf_w > tw:
                    # The nst unit times are iid N(1, σ²)·unit_s (clipping at 0.1 is more than
                    # 9σ away): draw their sum first; only a group whose clock falls inside it
                    # needs the individual times, drawn from the exact Gaussian bridge
                    # X_k | rest ~ N(rest/m, σ²(1 - 1/m)) over the m left.
                    tot = nst + sigma * np.sqrt(nst) * rng.standard_normal()
                    if nf_w > tw + unit_s * tot:
                        tw += unit_s * tot
                        n_stacks += nst
                        if retry:
                            patch_stacks += nst
                    else:
                        rest = tot
                        for k in range(nst):
                            if k > 0 and nf_w <= tw:
                                failed = True
                                break
                            m = nst - k
                            if m == 1:
                                d = rest
                            else:
                                d = rest / m + sigma * np.sqrt(1.0 - 1.0 / m) * \
                                    rng.standard_normal()
                                rest -= d
                            tw += unit_s * d
                            n_stacks += 1
                            if retry:
                                patch_stacks += 1.0
                else:
                    for _p in range(nst):
                        if nf_w <= tw:
                            failed = True
                            break
                        tw += unit_s * _jitter(rng, sigma, jit_lo)
                        n_stacks += 1
                        if retry:
                            patch_stacks += 1.0
                if failed:
                    alive[w] = False
                    nf[w] = _renew(w, tw, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur,
                                   fseed, fcnt)
                    hooks.notice(code, w, ms)
                    n_flag += 1
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
                    alive[w] = False
                    nf[w] = _renew(w, tbar, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur,
                                   fseed, fcnt)
                    hooks.notice(code, w, ms)
                    n_flag += 1
                    n_new += 1
            fails += n_new  # the checkpoint leader was counted when it was noticed
            fails_since += n_new
            t = tbar + (ta * fail_factor if n_flag > 0 else ta)
            if n_flag == 0:
                break  # commit
            outcome = hooks.resolve(code, alive, ms)
            if outcome == WIPEOUT:
                wiped = True
                break
            masked += n_flag
            t += shrink
            shrink_time += shrink
            if outcome == RETRY:
                reorder += 1
                retry = True
                continue
            if outcome == COMMIT_FIXED:
                phase0 += 1
            break  # commit: that attempt's (shortened) all-reduce counts
        if wiped:
            # ---------------- global restart + rollback ----------------
            if n_rec < per_restart.shape[0]:
                per_restart[n_rec] = fails_since
                n_rec += 1
            fails_since = 0
            restarts += 1
            t0 = t
            tend = t0
            for w in range(N):
                if alive[w]:
                    if nf[w] <= t0:  # failed unnoticed: noticed at the restart's start
                        nf[w] = _renew(w, t0, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur,
                                       fseed, fcnt)
                else:
                    while nf[w] < t0:  # roll a dead group's overdue clock forward, no cost
                        nf[w] = _renew(w, nf[w], dist, shape, scale, rng, tr_ptr, tr_times,
                                       tr_cur, fseed, fcnt)
                s = t0
                while nf[w] < s + restart_len:  # failure inside the window: window restarts
                    s = nf[w]
                    nf[w] = _renew(w, s, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur,
                                   fseed, fcnt)
                if s + restart_len > tend:
                    tend = s + restart_len
                alive[w] = True
            restart_time += tend - t0
            t = tend
            hooks.reset(code, ms)
            redone += committed - last_ckpt
            committed = last_ckpt
            continue
        # ---------------- commit ----------------
        committed += 1
        commits += 1
        sum_s += ints[DEPTH]
        if committed == steps:
            done = True
        if ckpt_every > 0 and (committed % ckpt_every == 0 or done):
            while True:
                leader = -1
                for w in range(N):
                    if alive[w]:
                        leader = w
                        break
                if leader < 0:
                    break
                if nf[leader] <= t:  # the leader has failed: checkpoint lost, no time
                    alive[leader] = False
                    nf[leader] = _renew(leader, t, dist, shape, scale, rng, tr_ptr, tr_times,
                                        tr_cur, fseed, fcnt)
                    hooks.notice(code, leader, ms)
                    fails += 1
                    fails_since += 1
                    ck_fail += 1
                    if not done:
                        pending_flag = True
                        break
                    # after the last step the next live group writes the checkpoint
                else:
                    t += ts
                    ckpt_time += ts
                    last_ckpt = committed
                    ck_ok += 1
                    break
    fout[_F_TOTAL] = t
    fout[_F_RESTART] = restart_time
    fout[_F_SHRINK] = shrink_time
    fout[_F_SUM_S] = sum_s
    fout[_F_PATCH] = patch_stacks
    fout[_F_CKPT_TIME] = ckpt_time
    iout[_I_COMMITS] = commits
    iout[_I_RESTARTS] = restarts
    iout[_I_MASKED] = masked
    iout[_I_PHASE0] = phase0
    iout[_I_REORDER] = reorder
    iout[_I_REDONE] = redone
    iout[_I_CKPT_OK] = ck_ok
    iout[_I_CKPT_FAIL] = ck_fail
    iout[_I_FAILS] = fails
    iout[_I_DONE] = 1 if done else 0
    iout[_I_COMMITTED] = committed
    iout[_I_ATTEMPTS] = attempts
    iout[_I_STACKS] = n_stacks
    return n_rec
