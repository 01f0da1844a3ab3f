"""Time-to-train discrete-event simulation of every recovery method (SPEC §3–6, issues 13, 24).

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

The world of issue 24 (every switch at its paper end reproduces the above bit for bit):

* **Failure classes** (a failure mix, :mod:`spare_lib.failures.mix`): every pending failure has
  a class (:mod:`.renewal`) with a detection and a rejoin time. A rejoining group comes back
  after its class's rejoin time.
* **Detection.** After an attempt in which failures are noticed, every group waits the longest
  detection time among them (a checkpoint leader's failure: in the next attempt) before the
  controller runs or the restart begins. Downtime.
* **Job events** (the mix's ``job`` classes, or trace rows of group −1) kill the whole job. One
  is noticed at the first poll at or after it: the start of an attempt or the all-reduce after
  the barrier (where a crashed or hung rank stops every other, whatever the method), then the
  aborted all-reduce (×``allreduce_fail_factor``), its detection time, and a global restart
  from the last written checkpoint, for every method. A checkpoint write (but the last) with a
  job event before it is not written; a job event during a restart starts every group's window
  again.
* **All-reduce rule** ``abort``: a commit after a noticed failure pays a full T_a after the
  stall, on top of the aborted fraction (``paper``: the cut-short all-reduce commits).
* **Jitter models** (``pi[P_JITTER]``): per unit of work (the paper's; Rep's r shards are one
  unit or r units, a matter of its state), one factor per group per attempt
  (:func:`.phases._step_units`), or per unit with a persistent slow share of the groups, drawn
  from a hash of (seed, group, restart count) at the start and at every restart.
* **Quorum** (elastic-drop's state): fewer live groups than ⌈min_live·N⌉ is a wipe-out.
* **Event log**: with buffers of non-zero length every event is appended
  (:mod:`.eventlog`); with empty buffers nothing is, at the cost of one branch.

What differs between methods (the compute phase of a group, what a noticed failure does, how a
failed attempt is resolved, the reset at a restart) is asked of the method's hooks through
:mod:`spare_lib.cluster.engine.methods.dispatch`; this loop is the same for every method. SPARe's
controller is :func:`spare_lib.rectlr.rectlr_kernel` (numba), called from SPARe's ``resolve``.

Failure clocks (``dist``): 0 Weibull and 1 exponential drawn from the run's generator; 2 a
replayed trace; 3 Weibull and 4 exponential from *failure streams*: group w's j-th gap comes
from a counter-based hash of (failure_seed, w, j) (splitmix64), so every method and r given the
same failure seed sees the same gap sequence per group (common random numbers).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.cluster.engine.barrier import (
    barrier_step_idx,
    barrier_step_patch,
    barrier_step_patch_idx,
    index_buffers,
    index_build,
    index_rejoin,
)
from spare_lib.cluster.engine.eventlog import (
    AT_BARRIER,
    AT_LEADER,
    AT_UNIT,
    EV_ATTEMPT,
    EV_CHECKPOINT,
    EV_COMMIT,
    EV_DETECT,
    EV_JOB,
    EV_RESOLVE,
    EV_RESTART_BEGIN,
    EV_RESTART_END,
    EV_STALL,
    _log,
)
from spare_lib.cluster.engine.methods import dispatch as hooks
from spare_lib.cluster.engine.methods._common import COMMIT_FIXED, COMPUTE_MULT, DEPTH, RETRY, WIPEOUT
from spare_lib.cluster.engine.phases import (  # noqa: F401 - JIT_* re-exported
    JIT_STEP,
    JIT_STRAGGLER,
    JIT_UNIT,
    _direct_phase,
    _draw_slow,
    _kill,
    _rejoin_batch,
    _restart_windows,
)
from spare_lib.cluster.engine.renewal import (  # noqa: F401 - re-exported: the core's clock codes
    DIST_EXPONENTIAL,
    DIST_EXPONENTIAL_STREAM,
    DIST_TRACE,
    DIST_WEIBULL,
    DIST_WEIBULL_STREAM,
    _init_clock,
    _next_failure,
    _renew,
    _set_class,
    stream_uniform,
)

# Slots of the float / int result arrays of the core.
(_F_TOTAL, _F_RESTART, _F_STALL, _F_SUM_S, _F_PATCH, _F_CKPT_TIME, _F_SAMPLES,
 _F_SAMPLES_ALL, _F_DETECT) = range(9)
_N_F = 9
(_I_COMMITS, _I_RESTARTS, _I_MASKED, _I_PHASE0, _I_REORDER, _I_REDONE, _I_CKPT_OK,
 _I_CKPT_FAIL, _I_FAILS, _I_DONE, _I_COMMITTED, _I_ATTEMPTS, _I_STACKS, _I_REJOINS,
 _I_MEM_RESTARTS, _I_MEM_CKPT_OK, _I_JOB) = range(17)
_N_I = 17

# Slots of the int / float parameter arrays of the core (built by simulate()).
(P_STEPS, P_CKPT_EVERY, P_MEM_EVERY, P_DIST, P_REJOIN, P_DOMAIN_SIZE, P_MEM_IDEAL, P_JITTER,
 P_AR_ABORT) = range(9)
_N_PI = 9
#: ``pi[P_REJOIN]``: no rejoins, rejoin_s counted from the notice, or from the failure
#: (``rejoin_clock``).
REJOIN_OFF, REJOIN_FROM_NOTICE, REJOIN_FROM_FAILURE = 0, 1, 2
(Q_COMPUTE, Q_SIGMA, Q_JIT_LO, Q_TA, Q_FAIL_FACTOR, Q_RESTART, Q_STALL, Q_TS, Q_SHAPE, Q_SCALE,
 Q_MAX_WALL, Q_REJOIN_S, Q_MEM_TS, Q_MEM_RESTART, Q_FETCH, Q_REJOIN_STALL, Q_STRAG_P,
 Q_STRAG_S) = range(18)
_N_PF = 18


#: How many per-restart failure counts the core records at most (the first ones).
MAX_RESTART_RECORDS = 100_000

#: Barrier modes of the core: every live group's every unit drawn (DIRECT), or the slowest
#: group's time drawn directly (SAMPLED, :mod:`spare_lib.cluster.engine.barrier`).
DIRECT, SAMPLED = 1, 0

@njit(cache=True)
def _core(code, ms, pi, pf, tr_ptr, tr_times, dom_ptr, dom_times, fseed, rng,
          fout, iout, per_restart, barrier_mode, cls, job_t, job_c, sseed,
          ev):  # pragma: no cover
    N = ms[0].shape[0]
    ints = ms[6]
    gi = ms[2]
    flts = ms[7]
    steps = pi[P_STEPS]
    every0 = pi[P_CKPT_EVERY]
    every1 = pi[P_MEM_EVERY]
    dist = pi[P_DIST]
    rejoin_on = pi[P_REJOIN] != 0
    rj_fail = pi[P_REJOIN] == REJOIN_FROM_FAILURE
    dsize = pi[P_DOMAIN_SIZE]
    has_dom = dom_times.shape[0] > 0
    mem_ideal = pi[P_MEM_IDEAL] != 0
    jmode = pi[P_JITTER]
    ar_abort = pi[P_AR_ABORT] != 0
    compute_s = pf[Q_COMPUTE]
    sigma = pf[Q_SIGMA]
    jit_lo = pf[Q_JIT_LO]
    ta = pf[Q_TA]
    fail_factor = pf[Q_FAIL_FACTOR]
    restart_len = pf[Q_RESTART]
    stall = pf[Q_STALL]
    shape = pf[Q_SHAPE]
    scale = pf[Q_SCALE]
    max_wall = pf[Q_MAX_WALL]
    fetch_s = pf[Q_FETCH]
    steps_f = float(steps)
    log_on = ev[0].shape[0] > 0
    cls_det = cls[0]
    # sum-then-bridge sampling of a group's stack times is exact while clipping is negligible
    bridge = sigma > 0.0 and (1.0 - jit_lo) > 9.0 * sigma
    alive = np.ones(N, dtype=np.bool_)
    nf = np.empty(N, dtype=np.float64)
    sampled = barrier_mode == SAMPLED
    fail_w = np.empty(N if sampled else 0, dtype=np.int64)
    fail_t = np.empty(N if sampled else 0, dtype=np.float64)
    cand = np.empty(N if sampled else 0, dtype=np.int64)
    nst_buf = np.zeros(N if sampled else 0, dtype=np.int64)
    # sampled: the live groups sorted by next failure time (barrier.index_build), and the stamps
    # of a sparse retry's groups (hooks.retry_plan)
    ix_w, ix_key, ix_meta = index_buffers(N if sampled else 0)
    xst = np.full(N if sampled else 0, -1, dtype=np.int64)
    sid = 0
    tr_cur = tr_ptr[:-1].copy()
    fcnt = np.zeros(N, dtype=np.int64)
    own = np.empty(N if has_dom else 0, dtype=np.float64)
    dcur = np.zeros(N if has_dom else 0, dtype=np.int64)
    clk = (dist, shape, scale, tr_ptr, tr_times, tr_cur, fseed, fcnt, own, dsize, dom_ptr,
           dom_times, dcur)
    multi = cls_det.shape[0] > 1  # several failure classes: each pending failure has one
    revive = np.full(N if rejoin_on else 0, np.inf)
    next_revive = np.inf
    died_epoch = np.full(N if every1 > 0 else 0, -1, dtype=np.int64)
    # np.int64/np.bool_ rather than bare constants: a variable first defined by a constant is
    # typed Literal[...] on numba's first inference pass, which compiles every callee it reaches
    # once more for that literal type (same results; 14 % of the event core's compile time)
    epoch = np.int64(0)
    mem_lost = np.bool_(False)
    acc = np.zeros(1, dtype=np.float64)  # the longest detection time pending
    slow = np.ones(N if jmode == JIT_STRAGGLER else 0, dtype=np.float64)
    if jmode == JIT_STRAGGLER:
        _draw_slow(slow, pf[Q_STRAG_P], pf[Q_STRAG_S], sseed, np.int64(0))
    n_job = job_t.shape[0]
    jp = 0
    for w in range(N):
        _init_clock(w, clk, rng, nf)
        if multi:
            _set_class(w, np.nan, clk, cls)
    if sampled:
        index_build(alive, nf, ix_w, ix_key, ix_meta)
        hooks.sampled(code, ms)

    t = 0.0
    committed = 0
    samples = 0.0
    samples_all = 0.0
    last_ckpt = 0
    last_samples = 0.0
    last_mem = 0
    last_mem_samples = 0.0
    n_alive = N
    pending_flag = False
    fails_since = 0
    n_rec = 0
    restart_time = 0.0
    stall_time = 0.0
    detect_time = 0.0
    ckpt_time = 0.0
    sum_s = 0.0
    patch_stacks = 0.0
    commits = 0
    restarts = 0
    mem_restarts = 0
    masked = 0
    phase0 = 0
    reorder = 0
    redone = 0
    ck_ok = 0
    ck_fail = 0
    mem_ok = 0
    fails = 0
    job_fails = 0
    attempts = 0
    n_stacks = 0
    rejoins = 0
    done = False

    while not done and t <= max_wall:
        step = committed + 1
        # ---------------- repaired groups rejoin (one reconfiguration, one stall) ----------
        if rejoin_on and next_revive <= t:
            back, next_revive = _rejoin_batch(t, alive, nf, revive, clk, cls, multi, rng,
                                              ev, step)
            n_alive += back
            rejoins += back
            hooks.rejoin(code, alive, n_alive, ms)
            if sampled:
                index_rejoin(alive, nf, ix_w, ix_key, ix_meta)
            if log_on:
                _log(ev, t, EV_STALL, step, attempts, -1, pf[Q_REJOIN_STALL], 1)
            t += pf[Q_REJOIN_STALL]
            stall_time += pf[Q_REJOIN_STALL]
        # ---------------- one step: first attempt, then retries ----------------
        retry = False
        wiped = False
        job_hit = False
        while True:
            attempts += 1
            if log_on:
                _log(ev, t, EV_ATTEMPT, step, attempts, -1, float(n_alive), 1 if retry else 0)
            n_flag = 0
            n_new = 0
            if pending_flag:  # the leader died at the checkpoint write: flagged now
                n_flag += 1
                pending_flag = False
            if jp < n_job and job_t[jp] <= t:  # a job event before the attempt: its first poll
                job_hit = True
                break
            tbar = t
            depth = ints[DEPTH]
            mult = flts[COMPUTE_MULT]
            delay = hooks.delay(code, retry, fetch_s, ms)
            if barrier_mode == SAMPLED:
                # event-driven barrier (spare_lib.cluster.engine.barrier): the slowest group's time is
                # drawn directly; only groups whose clocks fire inside the step are drawn one by
                # one. Exact in distribution; the noticed failures come back in notice order.
                # Live groups come from the index sorted by next failure time; a retry's patch
                # is sparse (k0 units each but for a few groups), so no step scans all N.
                k0, pgroups, n_pg = hooks.retry_plan(code, ms) if retry else (0, gi, -1)
                if retry and n_pg < 0:  # no sparse patch: every group's own count
                    unit_b = compute_s
                    for w in range(N):
                        if alive[w]:
                            nst_buf[w], unit_b = hooks.work(code, True, gi[w], depth, mult,
                                                            compute_s)
                    tbar, nfl, nst_done = barrier_step_patch(t + delay, nst_buf, unit_b, alive, nf,
                                                             sigma, jit_lo, rng, fail_w, fail_t,
                                                             cand)
                elif retry:
                    _k, unit_b = hooks.work(code, True, k0, depth, mult, compute_s)
                    sid += 1
                    for i_g in range(n_pg):
                        xst[pgroups[i_g]] = sid
                    tbar, nfl, nst_done = barrier_step_patch_idx(
                        t + delay, k0, pgroups, n_pg, gi, xst, sid, unit_b, alive, nf, n_alive,
                        ix_w, ix_key, ix_meta, sigma, jit_lo, rng, fail_w, fail_t, cand)
                else:
                    nst0, unit0 = hooks.work(code, False, gi[0], depth, mult, compute_s)
                    tbar, nfl, nst_done = barrier_step_idx(t + delay, nst0, unit0, alive, nf,
                                                           n_alive, ix_w, ix_key, ix_meta, sigma,
                                                           jit_lo, rng, fail_w, fail_t, cand)
                n_stacks += nst_done
                if retry:
                    patch_stacks += nst_done
                for i_f in range(nfl):
                    w = fail_w[i_f]
                    mem_lost, next_revive = _kill(
                        w, fail_t[i_f], retry, code, ms, alive, nf, clk, cls, multi, rng, revive,
                        rj_fail, died_epoch, epoch, mem_lost, next_revive, acc, ev,
                        AT_BARRIER if fail_t[i_f] >= tbar else AT_UNIT, step, attempts)
                    n_alive -= 1
                    n_flag += 1
                    n_new += 1
            else:  # the direct loop: every live group's every unit (phases._direct_phase)
                tbar, nd, ks, mem_lost, next_revive, n_alive = _direct_phase(
                    t, t + delay, code, retry, ms, depth, mult, compute_s, jmode, sigma, jit_lo,
                    bridge, rng, slow, alive, nf, clk, cls, multi, revive, rj_fail, died_epoch,
                    epoch, mem_lost, next_revive, acc, ev, step, attempts, n_alive)
                n_stacks += ks
                if retry:
                    patch_stacks += ks
                n_flag += nd
                n_new += nd
            fails += n_new  # the checkpoint leader was counted when it was noticed
            fails_since += n_new
            if jp < n_job and job_t[jp] <= tbar:  # a job event, noticed at the all-reduce
                t = tbar + ta * fail_factor
                job_hit = True
                break
            t = tbar + (ta * fail_factor if n_flag > 0 else ta)
            if n_flag == 0:
                break  # commit
            if acc[0] > 0.0:  # every group waits for the failures to be detected
                if log_on:
                    _log(ev, t, EV_DETECT, step, attempts, -1, acc[0], 0)
                t += acc[0]
                detect_time += acc[0]
                acc[0] = 0.0
            outcome = hooks.resolve(code, alive, n_alive, ms)
            if log_on:
                _log(ev, t, EV_RESOLVE, step, attempts, -1, float(ints[DEPTH]), outcome)
            if outcome == WIPEOUT:
                wiped = True
                break
            masked += n_flag
            if log_on:
                _log(ev, t, EV_STALL, step, attempts, -1, stall, 0)
            t += stall  # one stall per reconfiguration, whatever the method
            stall_time += stall
            if outcome == RETRY:
                reorder += 1
                retry = True
                continue
            if outcome == COMMIT_FIXED:
                phase0 += 1
            if ar_abort:  # the aborted all-reduce is redone in full by the survivors
                t += ta
            break  # commit: that attempt's (shortened) all-reduce counts
        if job_hit:
            # every job event up to now is noticed at once; its detection time is waited out
            det = acc[0]
            while jp < n_job and job_t[jp] <= t:
                if log_on:
                    _log(ev, t, EV_JOB, step, attempts, -1, job_t[jp], job_c[jp])
                if cls_det[job_c[jp]] > det:
                    det = cls_det[job_c[jp]]
                jp += 1
                job_fails += 1
            if det > 0.0:
                if log_on:
                    _log(ev, t, EV_DETECT, step, attempts, -1, det, 1)
                t += det
                detect_time += det
            wiped = True
        if wiped:
            # ---------------- global restart + rollback ----------------
            acc[0] = 0.0
            if n_rec < per_restart.shape[0]:
                per_restart[n_rec] = fails_since
                n_rec += 1
            fails_since = 0
            restarts += 1
            # the in-memory tier serves the restart unless a group and its peer both died
            use_mem = every1 > 0 and last_mem > last_ckpt and (mem_ideal or not mem_lost)
            window = pf[Q_MEM_RESTART] if use_mem else restart_len
            t0 = t
            if log_on:
                _log(ev, t0, EV_RESTART_BEGIN, step, attempts, -1, window, 1 if job_hit else 0)
            tend, jp = _restart_windows(t0, window, alive, nf, clk, cls, multi, rng, job_t,
                                       jp, ev, step)
            restart_time += tend - t0
            t = tend
            n_alive = N
            if rejoin_on:
                for w in range(N):
                    revive[w] = np.inf
                next_revive = np.inf
            hooks.reset(code, ms)
            if jmode == JIT_STRAGGLER:
                _draw_slow(slow, pf[Q_STRAG_P], pf[Q_STRAG_S], sseed, restarts)
            if sampled:
                index_build(alive, nf, ix_w, ix_key, ix_meta)
            if use_mem:
                mem_restarts += 1
                redone += committed - last_mem
                committed = last_mem
                samples = last_mem_samples
            else:
                redone += committed - last_ckpt
                committed = last_ckpt
                samples = last_samples
                last_mem = last_ckpt
                last_mem_samples = last_samples
            if log_on:
                _log(ev, t, EV_RESTART_END, step, attempts, -1, float(committed),
                     1 if use_mem else 0)
            epoch += 1
            mem_lost = np.bool_(False)
            continue
        # ---------------- commit ----------------
        committed += 1
        commits += 1
        sum_s += hooks.depth(code, ms)
        weight = hooks.weight(code, n_alive, N, ms)
        samples += weight
        samples_all += weight
        if samples >= steps_f:
            done = True
        if log_on:
            _log(ev, t, EV_COMMIT, committed, attempts, -1, float(ints[DEPTH]), 0)
        # checkpoints: the disk tier (every0) and the in-memory tier (every1), same rule:
        # the leader (lowest live group) is polled; a failed leader loses the checkpoint
        for tier in range(2):
            every = every0 if tier == 0 else every1
            if every > 0 and (committed % every == 0 or done):
                cost = pf[Q_TS] if tier == 0 else pf[Q_MEM_TS]
                if not done and jp < n_job and job_t[jp] <= t:
                    # a job event before the write: the job is dead, nothing is written; the
                    # next attempt notices it at its first poll
                    if log_on:
                        _log(ev, t, EV_CHECKPOINT, committed, attempts, -1, float(tier), 1)
                    break
                while True:
                    leader = -1
                    for w in range(N):
                        if alive[w]:
                            leader = w
                            break
                    if leader < 0:
                        break
                    if nf[leader] <= t:  # the leader has failed: checkpoint lost, no time
                        mem_lost, next_revive = _kill(
                            leader, t, np.bool_(False), code, ms, alive, nf, clk, cls, multi, rng, revive,
                            rj_fail, died_epoch, epoch, mem_lost, next_revive, acc, ev, np.int64(AT_LEADER),
                            committed + 1,
                            attempts)
                        n_alive -= 1
                        fails += 1
                        fails_since += 1
                        ck_fail += 1
                        if log_on:
                            _log(ev, t, EV_CHECKPOINT, committed, attempts, leader, float(tier), 1)
                        if not done:
                            pending_flag = True
                            break
                        # after the last step the next live group writes the checkpoint
                    else:
                        if log_on:
                            _log(ev, t, EV_CHECKPOINT, committed, attempts, leader, float(tier), 0)
                        t += cost
                        ckpt_time += cost
                        if tier == 0:
                            last_ckpt = committed
                            last_samples = samples
                            ck_ok += 1
                        else:
                            last_mem = committed
                            last_mem_samples = samples
                            mem_ok += 1
                            epoch += 1
                            mem_lost = np.bool_(False)
                        break
            if pending_flag:
                break
    fout[_F_TOTAL] = t
    fout[_F_RESTART] = restart_time
    fout[_F_STALL] = stall_time
    fout[_F_SUM_S] = sum_s
    fout[_F_PATCH] = patch_stacks
    fout[_F_CKPT_TIME] = ckpt_time
    fout[_F_SAMPLES] = samples
    fout[_F_SAMPLES_ALL] = samples_all
    fout[_F_DETECT] = detect_time
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
    iout[_I_REJOINS] = rejoins
    iout[_I_MEM_RESTARTS] = mem_restarts
    iout[_I_MEM_CKPT_OK] = mem_ok
    iout[_I_JOB] = job_fails
    return n_rec
