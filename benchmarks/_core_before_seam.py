"""The event core as it was before the method seam (commit acce17c, ``spare_lib/simulate.py``
``_core``), frozen here for one purpose: ``bench_simulate.py --seam`` times it against today's
core in the same run (issue 11: the seam may cost at most 10 % at N = 1000, r = 9). Same seed,
same numbers: ``bench_simulate.py --seam`` also checks that both return identical outputs.
Not part of the library; do not edit.
"""
# ruff: noqa

import numpy as np
from numba import njit

from spare_lib.rectlr.kernels import rectlr_kernel
# the result slots of that core
_F_TOTAL, _F_RESTART, _F_SHRINK, _F_SUM_S, _F_PATCH, _F_CKPT_TIME = range(6)
(_I_COMMITS, _I_RESTARTS, _I_MASKED, _I_PHASE0, _I_REORDER, _I_REDONE, _I_CKPT_OK,
 _I_CKPT_FAIL, _I_FAILS, _I_DONE, _I_COMMITTED, _I_ATTEMPTS, _I_STACKS) = range(13)

@njit(cache=True)
def _renew(w, t, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur):  # pragma: no cover
    """Next failure time of group w after a renewal at time t."""
    if dist == 0:
        return t + scale * rng.weibull(shape)
    if dist == 1:
        return t + rng.exponential(scale)
    c = tr_cur[w]
    end = tr_ptr[w + 1]
    while c < end and tr_times[c] <= t:
        c += 1
    tr_cur[w] = c
    if c < end:
        return tr_times[c]
    return np.inf


@njit(cache=True)
def _jitter(rng, sigma, lo):  # pragma: no cover
    if sigma == 0.0:
        return 1.0
    j = 1.0 + sigma * rng.standard_normal()
    return j if j > lo else lo


@njit(cache=True)
def _notice(w, t, alive, nf, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur):  # pragma: no cover
    alive[w] = False
    nf[w] = _renew(w, t, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur)


@njit(cache=True)
def _core(is_spare, base_stacks, set_of, n_sets, rep_r, steps, ckpt_every, exact_patch,
          compute_s, sigma, jit_lo, ta, fail_factor, restart_len, shrink, ts,
          dist, shape, scale, tr_ptr, tr_times, rng, max_wall,
          fout, iout, per_restart):  # pragma: no cover
    N, r = base_stacks.shape
    # sum-then-bridge sampling of a group's stack times is exact while clipping is negligible
    bridge = sigma > 0.0 and (1.0 - jit_lo) > 9.0 * sigma
    stacks = base_stacks.copy()
    alive = np.ones(N, dtype=np.bool_)
    nf = np.empty(N, dtype=np.float64)
    tr_cur = tr_ptr[:-1].copy()
    patch = np.zeros(N, dtype=np.int64)
    set_live = np.zeros(n_sets, dtype=np.int64)
    for w in range(N):
        nf[w] = _renew(w, -1.0, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur)
        set_live[set_of[w]] += 1
    set_size = set_live.copy()

    t = 0.0
    S = 1
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
            for w in range(N):
                if not alive[w]:
                    continue
                tw = t
                if is_spare:
                    nst = patch[w] if retry else S
                    if nst >= 2 and bridge and nf[w] > tw:
                        # The nst stack times are iid N(1, σ²)·64 s (clipping at 0.1 is more
                        # than 9σ away): draw their sum first; only a group whose clock falls
                        # inside it needs the individual times, drawn from the exact Gaussian
                        # bridge X_k | rest ~ N(rest/m, σ²(1 - 1/m)) over the m left.
                        tot = nst + sigma * np.sqrt(nst) * rng.standard_normal()
                        if nf[w] > tw + compute_s * tot:
                            tw += compute_s * tot
                            n_stacks += nst
                            if retry:
                                patch_stacks += nst
                        else:
                            rest = tot
                            for k in range(nst):
                                if k > 0 and nf[w] <= tw:
                                    _notice(w, tw, alive, nf, dist, shape, scale, rng, tr_ptr,
                                            tr_times, tr_cur)
                                    n_flag += 1
                                    n_new += 1
                                    break
                                m = nst - k
                                if m == 1:
                                    d = rest
                                else:
                                    d = rest / m + sigma * np.sqrt(1.0 - 1.0 / m) * \
                                        rng.standard_normal()
                                    rest -= d
                                tw += compute_s * d
                                n_stacks += 1
                                if retry:
                                    patch_stacks += 1.0
                    else:
                        for _p in range(nst):
                            if nf[w] <= tw:
                                _notice(w, tw, alive, nf, dist, shape, scale, rng, tr_ptr,
                                        tr_times, tr_cur)
                                n_flag += 1
                                n_new += 1
                                break
                            tw += compute_s * _jitter(rng, sigma, jit_lo)
                            n_stacks += 1
                            if retry:
                                patch_stacks += 1.0
                else:
                    if nf[w] <= tw:
                        _notice(w, tw, alive, nf, dist, shape, scale, rng, tr_ptr, tr_times,
                                tr_cur)
                        n_flag += 1
                        n_new += 1
                        set_live[set_of[w]] -= 1
                    else:
                        tw += rep_r * compute_s * _jitter(rng, sigma, jit_lo)
                        n_stacks += 1
                if tw > tbar:
                    tbar = tw
                if alive[w] and nf[w] < min_nf:
                    min_nf = nf[w]
            # barrier (slowest group), then every live group is polled at the all-reduce
            for w in range(N):
                if min_nf > tbar:
                    break  # no live clock has run out: nobody to notice
                if alive[w] and nf[w] <= tbar:
                    _notice(w, tbar, alive, nf, dist, shape, scale, rng, tr_ptr, tr_times,
                            tr_cur)
                    n_flag += 1
                    n_new += 1
                    if not is_spare:
                        set_live[set_of[w]] -= 1
            fails += n_new  # the checkpoint leader was counted when it was noticed
            fails_since += n_new
            t = tbar + (ta * fail_factor if n_flag > 0 else ta)
            if n_flag == 0:
                break  # commit
            if is_spare:
                outcome, s_star, _moved = rectlr_kernel(stacks, alive, S, patch, exact_patch)
                if outcome == 2:
                    wiped = True
                    break
                masked += n_flag
                t += shrink
                shrink_time += shrink
                if outcome == 0:
                    phase0 += 1
                    break  # commit: that attempt's (shortened) all-reduce counts
                reorder += 1
                S = s_star
                retry = True
            else:
                dead = False
                for sid in range(n_sets):
                    if set_live[sid] == 0:
                        dead = True
                        break
                if dead:
                    wiped = True
                    break
                masked += n_flag
                t += shrink
                shrink_time += shrink
                break  # commit
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
                        nf[w] = _renew(w, t0, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur)
                else:
                    while nf[w] < t0:  # roll a dead group's overdue clock forward, no cost
                        nf[w] = _renew(w, nf[w], dist, shape, scale, rng, tr_ptr, tr_times,
                                       tr_cur)
                s = t0
                while nf[w] < s + restart_len:  # failure inside the window: window restarts
                    s = nf[w]
                    nf[w] = _renew(w, s, dist, shape, scale, rng, tr_ptr, tr_times, tr_cur)
                if s + restart_len > tend:
                    tend = s + restart_len
                alive[w] = True
            restart_time += tend - t0
            t = tend
            for w in range(N):
                for p in range(r):
                    stacks[w, p] = base_stacks[w, p]
            for sid in range(n_sets):
                set_live[sid] = set_size[sid]
            S = 1
            redone += committed - last_ckpt
            committed = last_ckpt
            continue
        # ---------------- commit ----------------
        committed += 1
        commits += 1
        sum_s += S
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
                    _notice(leader, t, alive, nf, dist, shape, scale, rng, tr_ptr, tr_times,
                            tr_cur)
                    if not is_spare:
                        set_live[set_of[leader]] -= 1
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
