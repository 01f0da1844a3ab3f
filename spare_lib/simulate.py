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

The controller is :func:`spare_lib.rectlr.rectlr_kernel` (numba), called from the numba core.

Example
-------
>>> from spare_lib.cluster import h100_600k
>>> res = simulate("spare", 200, 9, 15, h100_600k(200, steps=300), seed=1)
>>> 1.5 < res.ttt_over_t0 < 6 and 0 < res.availability <= 1
True
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numba import njit

from ._rng import SeedLike, as_seed_sequence
from ._validate import check_int, check_positive
from .cluster import ClusterConfig
from .layout import Layout, make_layout
from .rectlr import rectlr_kernel

METHODS = ("spare", "rep", "ckpt")
#: Paper names of the methods, with and without checkpoints.
METHOD_LABEL = {("spare", True): "SPARe+CKPT", ("spare", False): "SPARe",
                ("rep", True): "Rep+CKPT", ("rep", False): "Rep",
                ("ckpt", True): "CKPT-only", ("ckpt", False): "no protection"}

# Slots of the float / int result arrays of the core.
_F_TOTAL, _F_RESTART, _F_SHRINK, _F_SUM_S, _F_PATCH, _F_CKPT_TIME = range(6)
_N_F = 6
(_I_COMMITS, _I_RESTARTS, _I_MASKED, _I_PHASE0, _I_REORDER, _I_REDONE, _I_CKPT_OK,
 _I_CKPT_FAIL, _I_FAILS, _I_DONE, _I_COMMITTED, _I_ATTEMPTS, _I_STACKS) = range(13)
_N_I = 13
#: How many per-restart failure counts the core records at most (the first ones).
MAX_RESTART_RECORDS = 100_000

_DIST_CODE = {"weibull": 0, "exponential": 1}
_DIST_TRACE = 2


@dataclass(frozen=True)
class SimResult:
    """Outcome of one simulated training run.

    Attributes
    ----------
    method, N, r, ckpt_steps, steps : the run's inputs (ckpt_steps None = no checkpoints).
    total_s : float
        Wall time until the last step is committed and its checkpoint written.
    up_s, down_s : float
        Uptime and downtime (restart + shrink time); ``up_s + down_s == total_s``.
    restart_s, shrink_s, checkpoint_s : float
        Time spent in global restarts, in communicator shrinks and writing checkpoints.
    t0_s : float
        T0 = steps·(compute per stack + T_a).
    ttt_over_t0 : float
        Time-to-train / T0.
    availability : float
        up_s / total_s.
    overhead : float
        Mean stack depth S over all committed steps (including steps later rolled back): stacks
        computed per group per committed step, patch compute excluded (r for Rep, 1 for
        CKPT-only).
    patch_overhead : float
        Patch stacks computed per group per committed step (SPARe retries).
    full_restarts : int
        Global restarts (wipe-outs).
    masked_failures : int
        Group failures absorbed without a restart.
    failures_noticed : int
        Group failures noticed during training (not counting failures inside restart windows).
    phase0_events, reorder_events : int
        Failure events (attempts with ≥ 1 noticed failure) settled by RECTLR phase 0 (the
        current layout still covers every type) or by a reorder with retry; 0 for Rep/CKPT.
    steps_redone : int
        Committed steps lost to rollbacks.
    commits : int
        Step commits including the later rolled-back ones.
    attempts : int
        Step attempts (compute phases), including retries.
    compute_events : int
        Group compute events simulated (one per group per stack for SPARe, one per group per
        attempt for Rep/CKPT-only); with failures, checkpoints and restarts these are the
        simulator's events.
    checkpoints_written, checkpoint_failures : int
        Checkpoints written, and checkpoint writes lost because the leader had failed.
    completed : bool
        False when the run hit ``max_wall_s`` before finishing; totals then cover the elapsed
        time only.
    failures_between_restarts : tuple of int
        For each global restart (the first ``MAX_RESTART_RECORDS``), the failures noticed
        during training since the previous one (its mean estimates μ(N, r) for SPARe with
        exponential clocks).
    """

    method: str
    N: int
    r: int
    ckpt_steps: int | None
    steps: int
    total_s: float
    up_s: float
    down_s: float
    restart_s: float
    shrink_s: float
    checkpoint_s: float
    t0_s: float
    ttt_over_t0: float
    availability: float
    overhead: float
    patch_overhead: float
    full_restarts: int
    masked_failures: int
    failures_noticed: int
    phase0_events: int
    reorder_events: int
    steps_redone: int
    commits: int
    attempts: int
    compute_events: int
    checkpoints_written: int
    checkpoint_failures: int
    completed: bool
    failures_between_restarts: tuple[int, ...]

    @property
    def label(self) -> str:
        """The paper's name of the method (SPARe+CKPT, Rep+CKPT, CKPT-only, SPARe, Rep)."""
        return METHOD_LABEL[(self.method, self.ckpt_steps is not None)]

    @property
    def phase0_share(self) -> float:
        """Share of the non-fatal failure events that RECTLR phase 0 settled (nan if none)."""
        n = self.phase0_events + self.reorder_events
        return self.phase0_events / n if n else float("nan")

    @property
    def restart_share(self) -> float:
        """Share of the wall time spent in global restarts."""
        return self.restart_s / self.total_s if self.total_s > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Scalar fields plus label, phase0_share and restart_share (for tables)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)
             if f.name != "failures_between_restarts"}
        d["label"] = self.label
        d["phase0_share"] = self.phase0_share
        d["restart_share"] = self.restart_share
        return d


# --------------------------------------------------------------------------------------------
# numba core
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# Python driver
# --------------------------------------------------------------------------------------------

def _trace_arrays(failure_trace: object, N: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR form of a failure trace: per-group sorted failure times."""
    arr = np.asarray(failure_trace, dtype=np.float64)
    if arr.size == 0:
        arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"failure_trace must have shape (n, 2) of (time_s, group), got shape "
                         f"{arr.shape}")
    times, groups = arr[:, 0], arr[:, 1]
    if not np.all(np.isfinite(times)) or np.any(times < 0):
        raise ValueError("failure_trace times must be finite and in [0, inf)")
    if np.any(groups != np.round(groups)) or np.any(groups < 0) or np.any(groups >= N):
        raise ValueError(f"failure_trace groups must be integers in [0, N-1] = [0, {N - 1}]")
    g = groups.astype(np.int64)
    order = np.lexsort((times, g))
    ptr = np.zeros(N + 1, dtype=np.int64)
    np.add.at(ptr, g + 1, 1)
    return np.cumsum(ptr), np.ascontiguousarray(times[order])


def _resolve_layout(layout: str | Layout | Sequence[int], N: int, r: int) -> Layout:
    if isinstance(layout, Layout):
        if layout.N != N or layout.r != r:
            raise ValueError(f"layout must have N={N}, r={r}, got {layout!r}")
        return layout
    if isinstance(layout, str):
        return make_layout(N, r, layout)
    from .layout import layout_from_offsets
    lay = layout_from_offsets(N, layout)
    if lay.r != r:
        raise ValueError(f"layout offsets must number r={r}, got {len(lay.offsets)}")
    return lay


def simulate(method: str, N: int, r: int, ckpt_steps: int | None, config: ClusterConfig,
             seed: SeedLike = None, failure_trace: object = None,
             layout: str | Layout | Sequence[int] = "ruler", *, exact_patch: bool = False,
             max_wall_s: float | None = None) -> SimResult:
    """Simulate one training run of SPARe, Rep or CKPT-only on a failing cluster (SPEC §3–5).

    Parameters
    ----------
    method : str
        'spare' (stacking + RECTLR), 'rep' (ceil(N/r) replica sets of r consecutive groups) or
        'ckpt' (CKPT-only: any failure restarts; needs r = 1).
    N : int
        Data-parallel groups, N ≥ 1.
    r : int
        Redundancy, 1 ≤ r ≤ N (SPARe: limited by the layout, e.g. r ≤ 12 at N = 200 for the
        ruler layout).
    ckpt_steps : int or None
        Checkpoint interval C in committed steps (also after the last step); None: no
        checkpoints, a restart rolls back to step 0 (plain SPARe / Rep).
    config : ClusterConfig
        Cluster and failure parameters (e.g. :func:`spare_lib.cluster.h100_600k`).
    seed : int, SeedSequence, Generator or None
        All randomness (failure clocks, jitter) is drawn from one ``np.random.Generator``
        seeded from ``as_seed_sequence(seed)``: the same seed gives an identical result.
    failure_trace : array of shape (n, 2) or None
        Rows (time_s, group) replace the random clocks: group w's next failure after a renewal
        at time t is its first trace time > t (failures while a group is down are absorbed).
        Lets a user replay a real failure log.
    layout : 'ruler', 'consecutive', a Layout or offsets
        SPARe's stacking layout (SPEC §2); ignored by 'rep' and 'ckpt'.
    exact_patch : bool
        False (the paper's simulator): at most one patch stack per survivor per retry. True:
        each survivor recomputes every type of its new first S* positions it did not compute in
        the failed attempt.
    max_wall_s : float or None
        Stop (``completed=False``, with a RuntimeWarning) when the wall clock passes this;
        default 1000·T0.

    Returns
    -------
    SimResult

    Raises
    ------
    ValueError
        On a bad method, N, r, ckpt_steps, config, trace or layout.

    Examples
    --------
    >>> from spare_lib.cluster import h100_600k
    >>> cfg = h100_600k(200, steps=100, jitter_sigma=0.0)
    >>> # no failures: 100 steps of 64 s + 2 s, plus 10 checkpoints of 58.8 s
    >>> round(simulate("spare", 200, 9, 10, cfg, failure_trace=np.empty((0, 2))).total_s, 3)
    7188.235
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(config, ClusterConfig):
        raise ValueError(f"config must be a spare_lib.cluster.ClusterConfig, got "
                         f"{type(config).__name__}")
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    if method == "ckpt" and r != 1:
        raise ValueError(f"r must be 1 for method='ckpt' (CKPT-only has no redundancy), got {r}")
    if ckpt_steps is not None:
        ckpt_steps = check_int("ckpt_steps", ckpt_steps, lo=1)
    T0 = config.t0_s()
    if max_wall_s is None:
        max_wall_s = 1000.0 * T0
    max_wall_s = check_positive("max_wall_s", max_wall_s)

    if method == "spare":
        lay = _resolve_layout(layout, N, r)
        base = np.array(lay.stacks, dtype=np.int64, order="C")  # writable: one signature
        set_of = np.zeros(N, dtype=np.int64)
        n_sets = 1
    else:
        base = np.arange(N, dtype=np.int64).reshape(N, 1)
        set_of = np.arange(N, dtype=np.int64) // r
        n_sets = int(set_of[-1]) + 1

    if failure_trace is not None:
        tr_ptr, tr_times = _trace_arrays(failure_trace, N)
        dist = _DIST_TRACE
    else:
        tr_ptr, tr_times = np.zeros(N + 1, dtype=np.int64), np.zeros(0, dtype=np.float64)
        dist = _DIST_CODE[config.failure_dist]
    if config.failure_dist == "weibull":
        scale = config.weibull_scale_s(N)
    else:
        scale = config.group_mean_s(N)

    rng = np.random.default_rng(as_seed_sequence(seed))
    fout = np.zeros(_N_F, dtype=np.float64)
    iout = np.zeros(_N_I, dtype=np.int64)
    per_restart = np.zeros(MAX_RESTART_RECORDS, dtype=np.int64)
    n_rec = _core(method == "spare", base, set_of, n_sets, float(r), config.steps,
                  0 if ckpt_steps is None else ckpt_steps, bool(exact_patch),
                  config.compute_per_stack_s, config.jitter_sigma, config.jitter_min,
                  config.allreduce_s, config.allreduce_fail_factor, config.restart_s,
                  config.shrink_s, config.checkpoint_s, dist, config.weibull_shape, scale,
                  tr_ptr, tr_times, rng, max_wall_s, fout, iout, per_restart)

    total = float(fout[_F_TOTAL])
    down = float(fout[_F_RESTART] + fout[_F_SHRINK])
    commits = int(iout[_I_COMMITS])
    completed = bool(iout[_I_DONE])
    if not completed:
        warnings.warn(f"simulate({method!r}, N={N}, r={r}, ckpt_steps={ckpt_steps}) stopped at "
                      f"max_wall_s={max_wall_s:.3g} s with {int(iout[_I_COMMITTED])} of "
                      f"{config.steps} steps committed", RuntimeWarning, stacklevel=2)
    if method == "spare":
        overhead = float(fout[_F_SUM_S]) / commits if commits else float("nan")
    else:
        overhead = float(r)
    patch_ovh = float(fout[_F_PATCH]) / (N * commits) if commits else float("nan")
    return SimResult(
        method=method, N=N, r=r, ckpt_steps=ckpt_steps, steps=config.steps,
        total_s=total, up_s=total - down, down_s=down, restart_s=float(fout[_F_RESTART]),
        shrink_s=float(fout[_F_SHRINK]), checkpoint_s=float(fout[_F_CKPT_TIME]), t0_s=T0,
        ttt_over_t0=total / T0, availability=(total - down) / total if total > 0 else 1.0,
        overhead=overhead, patch_overhead=patch_ovh,
        full_restarts=int(iout[_I_RESTARTS]), masked_failures=int(iout[_I_MASKED]),
        failures_noticed=int(iout[_I_FAILS]), phase0_events=int(iout[_I_PHASE0]),
        reorder_events=int(iout[_I_REORDER]), steps_redone=int(iout[_I_REDONE]),
        commits=commits, attempts=int(iout[_I_ATTEMPTS]), compute_events=int(iout[_I_STACKS]),
        checkpoints_written=int(iout[_I_CKPT_OK]), checkpoint_failures=int(iout[_I_CKPT_FAIL]),
        completed=completed,
        failures_between_restarts=tuple(int(x) for x in per_restart[:n_rec]),
    )


# --------------------------------------------------------------------------------------------
# Many runs: through the executor of spare_lib.sweep
# --------------------------------------------------------------------------------------------

def task_seed(seed: SeedLike, index: int) -> np.random.SeedSequence:
    """Seed of task ``index`` of a batch: child ``index`` of the root ``SeedSequence``.

    Depends only on (seed, index), never on the worker that runs the task.
    """
    root = as_seed_sequence(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, int(index)))


def _run_task(args: tuple[dict[str, Any], np.random.SeedSequence]) -> SimResult:
    kwargs, ss = args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return simulate(**kwargs, seed=ss)


def simulate_many(tasks: Sequence[dict[str, Any]], seed: SeedLike = None, workers: int = 2,
                  progress: bool = False, backend: str = "processes",
                  client: Any = None) -> list[SimResult]:
    """Run :func:`simulate` for every task (a dict of its keyword arguments), by default in a pool.

    The tasks run through :func:`spare_lib.sweep.execute`, the executor of
    :func:`~spare_lib.sweep.run_sweep`.

    Parameters
    ----------
    tasks : sequence of dict
        Keyword arguments of :func:`simulate` without ``seed`` (method, N, r, ckpt_steps,
        config, and optionally failure_trace, layout, exact_patch, max_wall_s).
    seed : int, SeedSequence, Generator or None
        Root seed; task i runs with :func:`task_seed` (seed, i), so the results do not depend on
        ``workers`` or ``backend`` (tested) and a task's result does not depend on the other
        tasks.
    workers : int
        Worker processes of the pool (1: run in this process), or of the Dask LocalCluster
        started when ``backend='dask'`` and ``client`` is None.
    progress : bool
        Show a tqdm progress bar.
    backend : {'serial', 'processes', 'dask'}
        'serial' runs in this process; 'processes' is a local spawn-context process pool
        (largest tasks, by N·r, first); 'dask' runs on ``client``.
    client : dask.distributed.Client, str or None
        For 'dask': an existing client or a scheduler address; None starts a LocalCluster.

    Returns
    -------
    list of SimResult
        In task order.
    """
    from .sweep import check_backend, execute

    workers = check_int("workers", workers, lo=1)
    check_backend(backend)
    tasks = [dict(t) for t in tasks]
    for i, t in enumerate(tasks):
        if "seed" in t:
            raise ValueError(f"tasks must not carry a 'seed' (task {i}); pass the root seed")
    root = as_seed_sequence(seed)
    args = [(t, task_seed(root, i)) for i, t in enumerate(tasks)]
    if backend == "processes" and workers == 1:
        backend = "serial"
    order = None
    if backend != "serial":
        # biggest runs first (N·r as a proxy) for a balanced pool
        order = sorted(range(len(tasks)), key=lambda i: -tasks[i]["N"] * tasks[i]["r"])
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(tasks), desc="simulate")
    out: list[SimResult | None] = [None] * len(tasks)

    def done(i: int, res: SimResult) -> None:
        out[i] = res
        if bar is not None:
            bar.update()

    try:
        execute(_run_task, args, backend=backend, client=client, workers=workers, order=order,
                on_done=done)
    finally:
        if bar is not None:
            bar.close()
    return out  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# Theory lines of Figs. 6-8 (SPEC §7, from spare_lib.theory)
# --------------------------------------------------------------------------------------------

def theory_lines(N: int, r_values: Sequence[int], config: ClusterConfig) -> dict[str, np.ndarray]:
    """Closed-form lines for SPARe over r: Eq. 5 S̄, Eq. 2 A*(μ·m) and Eq. 7 J = S̄/A*.

    Uses :func:`spare_lib.theory.overhead_mean`, :func:`~spare_lib.theory.availability_opt` and
    :func:`~spare_lib.theory.ttt_normalized` with μ = Γ(1+1/r)·N^(1−1/r) (the paper's closed
    form) and the config's m, T_s and T_r.

    Returns
    -------
    dict
        Keys 'r', 'overhead', 'availability', 'ttt_over_t0' (arrays over r).
    """
    from . import theory
    rs = np.asarray(list(r_values), dtype=np.int64)
    m, ts, tr = config.system_mtbf_s, config.checkpoint_s, config.restart_s
    mu = np.asarray(theory.mu_closed(N, rs), dtype=float)
    return {"r": rs,
            "overhead": np.asarray(theory.overhead_mean(N, rs), dtype=float),
            "availability": np.asarray(theory.availability_opt(ts, mu * m, tr), dtype=float),
            "ttt_over_t0": np.asarray(theory.ttt_normalized(N, rs, m, ts, tr), dtype=float)}


# --------------------------------------------------------------------------------------------
# Tables and figures of notebooks 50 and 60
# --------------------------------------------------------------------------------------------

#: The paper's main table (SPEC §8): optimum per N.
PAPER_MAIN_TABLE: dict[int, dict[str, float]] = {
    200: {"spare_ttt": 2.92, "spare_r": 9, "spare_avail": 0.8700,
          "rep_ttt": 6.07, "rep_r": 3, "rep_avail": 0.6174, "gain": 0.519},
    600: {"spare_ttt": 2.49, "spare_r": 8, "spare_avail": 0.9390,
          "rep_ttt": 4.27, "rep_r": 3, "rep_avail": 0.7989, "gain": 0.417},
    1000: {"spare_ttt": 2.34, "spare_r": 9, "spare_avail": 0.9654,
           "rep_ttt": 3.88, "rep_r": 3, "rep_avail": 0.8441, "gain": 0.396},
}

_METRICS = ("ttt_over_t0", "availability", "overhead", "patch_overhead", "phase0_share",
            "restart_share", "full_restarts")


def results_frame(results: Sequence[SimResult]) -> Any:
    """One row per run (:meth:`SimResult.as_dict`), as a pandas DataFrame."""
    import pandas as pd
    return pd.DataFrame([r.as_dict() for r in results])


def summarize_runs(runs: Any) -> Any:
    """Mean, min, max and count over trials of each metric per (method, N, r, ckpt_steps).

    Parameters
    ----------
    runs : DataFrame
        From :func:`results_frame`.

    Returns
    -------
    DataFrame
        Columns ``<metric>`` (mean), ``<metric>_min``, ``<metric>_max``, ``<metric>_std`` and
        ``trials``, for metric in ttt_over_t0, availability, overhead, patch_overhead,
        phase0_share, restart_share, full_restarts.
    """
    df = runs.copy()
    df["ckpt_steps"] = df["ckpt_steps"].fillna(0).astype(int)
    g = df.groupby(["method", "N", "r", "ckpt_steps"], sort=True)
    out = g[list(_METRICS)].mean()
    for suffix, fn in (("min", "min"), ("max", "max"), ("std", "std")):
        part = g[list(_METRICS)].agg(fn)
        part.columns = [f"{c}_{suffix}" for c in part.columns]
        out = out.join(part)
    out["trials"] = g.size()
    return out.reset_index()


def main_table(summary: Any) -> Any:
    """Optimum per N of SPARe+CKPT and Rep+CKPT (lowest mean TTT/T0 over r) beside the paper.

    Returns
    -------
    DataFrame
        One row per N: simulated spare_ttt, spare_r, spare_avail, rep_ttt, rep_r, rep_avail,
        gain = 1 − spare_ttt/rep_ttt, the spread (min–max over trials) of both optima, the
        trial count and the paper's values (``paper_*``).
    """
    import pandas as pd
    rows = []
    for N in sorted(summary["N"].unique()):
        row: dict[str, Any] = {"N": int(N)}
        for m in ("spare", "rep"):
            sub = summary[(summary.N == N) & (summary.method == m)]
            if sub.empty:
                continue
            best = sub.loc[sub["ttt_over_t0"].idxmin()]
            row[f"{m}_ttt"] = best["ttt_over_t0"]
            row[f"{m}_ttt_min"] = best["ttt_over_t0_min"]
            row[f"{m}_ttt_max"] = best["ttt_over_t0_max"]
            row[f"{m}_r"] = int(best["r"])
            row[f"{m}_avail"] = best["availability"]
            row[f"{m}_trials"] = int(best["trials"])
        if "spare_ttt" in row and "rep_ttt" in row:
            row["gain"] = 1.0 - row["spare_ttt"] / row["rep_ttt"]
        for k, v in PAPER_MAIN_TABLE.get(int(N), {}).items():
            row[f"paper_{k}"] = v
        rows.append(row)
    return pd.DataFrame(rows)


def make_cluster_vs_r(summary: Any, theory: dict[int, dict[str, np.ndarray]] | None,
                      metric: str, ylabel: str, theory_label: str = "theory") -> Any:
    """Figs. 6/7/8: ``metric`` against r, one panel per N, SPARe+CKPT and Rep+CKPT.

    Parameters
    ----------
    summary : DataFrame
        From :func:`summarize_runs` (methods 'spare' and 'rep').
    theory : dict N -> {'r': array, metric: array} or None
        Closed-form line (Eq. 7 / Eq. 2 / Eq. 5) drawn for SPARe.
    metric : str
        'ttt_over_t0', 'availability' or 'overhead'.
    ylabel, theory_label : str
        Axis label and legend entry of the theory line.

    Returns
    -------
    matplotlib.figure.Figure
        Markers = mean over trials, error bars = min–max over trials.
    """
    import matplotlib.pyplot as plt

    from .plotting import METHOD_STYLE, PAGE_IN
    Ns = sorted(summary["N"].unique())
    fig, axes = plt.subplots(1, len(Ns), figsize=(PAGE_IN, 2.3), squeeze=False)
    for ax, N in zip(axes[0], Ns, strict=True):
        for m, label in (("spare", "SPARe+CKPT"), ("rep", "Rep+CKPT")):
            sub = summary[(summary.N == N) & (summary.method == m)].sort_values("r")
            if sub.empty:
                continue
            y = sub[metric].to_numpy()
            err = np.vstack([y - sub[f"{metric}_min"].to_numpy(),
                             sub[f"{metric}_max"].to_numpy() - y])
            sty = METHOD_STYLE[label]
            ax.errorbar(sub["r"], y, yerr=err, color=sty["color"], marker=sty["marker"],
                        linestyle=sty["linestyle"], capsize=1.5, label=label)
        if theory is not None and N in theory:
            th = theory[N]
            sty = METHOD_STYLE["theory"]
            ax.plot(th["r"], th[metric], color=sty["color"], linestyle=":", label=theory_label)
        ax.set_title(f"N = {N}")
        ax.set_xlabel("redundancy r")
    axes[0, 0].set_ylabel(ylabel)
    if metric == "ttt_over_t0":
        from matplotlib.ticker import NullFormatter, ScalarFormatter
        for ax in axes[0]:  # r = 2 is an order of magnitude above the optimum: log scale
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_yticks([1, 2, 3, 5, 10, 20, 50])
            ax.set_ylim(bottom=1.0)
    axes[0, 0].legend(loc="best")
    fig.tight_layout()
    return fig


def make_phase0_share(summary: Any) -> Any:
    """Share of SPARe's non-fatal failure events settled by RECTLR phase 0, against r."""
    import matplotlib.pyplot as plt

    from .plotting import COLUMN_IN
    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.3))
    markers = "os^"
    for i, N in enumerate(sorted(summary["N"].unique())):
        sub = summary[(summary.N == N) & (summary.method == "spare")].sort_values("r")
        ax.plot(sub["r"], 100 * sub["phase0_share"], marker=markers[i % 3], label=f"N = {N}")
    ax.set_xlabel("redundancy r")
    ax.set_ylabel("failure events settled\nby phase 0 (%)")
    ax.set_ylim(0, 100)
    ax.legend()
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- notebook 50: the regime

#: Per-GPU MTBF implied by Llama 3 (419 unexpected interruptions in 54 days on 16,384 GPUs).
LLAMA3_GPUS = 16_384
LLAMA3_INTERRUPTIONS = 419
LLAMA3_DAYS = 54.0
GPU_MTBF_H = LLAMA3_DAYS * 24.0 * LLAMA3_GPUS / LLAMA3_INTERRUPTIONS


def system_mtbf_s(n_gpus: float | np.ndarray, gpu_mtbf_h: float = GPU_MTBF_H
                  ) -> float | np.ndarray:
    """System MTBF m = per-GPU MTBF / #GPUs, in seconds (≈ 5 min at 600k GPUs)."""
    return gpu_mtbf_h * 3600.0 / np.asarray(n_gpus, dtype=float)


#: Restart model R(G) = R0 + a·G + b·G² (seconds): R0 = 5 min of fixed cost (scheduler,
#: process launch), a·G linear (per-GPU initialisation and checkpoint loading, 25 min at 600k),
#: b·G² quadratic (all-to-all communicator set-up, fitted so that R(600k) = 60 min).
RESTART_R0_S = 300.0
RESTART_A_S = 1500.0 / 600_000
RESTART_B_S = (3600.0 - 300.0 - 1500.0) / 600_000**2


def restart_time_s(n_gpus: float | np.ndarray) -> float | np.ndarray:
    """Restart time R(G) = R0 + a·G + b·G² in seconds, anchored at 60 min for 600k GPUs."""
    g = np.asarray(n_gpus, dtype=float)
    return RESTART_R0_S + RESTART_A_S * g + RESTART_B_S * g * g


def make_restart_regime(gpus: np.ndarray, runs: Any) -> Any:
    """Motivation figure: system MTBF, restart time and wall-time share lost to restarts vs #GPUs.

    Parameters
    ----------
    gpus : array
        #GPUs for the model curves.
    runs : DataFrame
        Columns n_gpus, label, restart_share (mean), restart_share_min, restart_share_max.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    from .plotting import METHOD_STYLE, PAGE_IN
    fig, axes = plt.subplots(1, 3, figsize=(PAGE_IN, 2.3))
    g = np.asarray(gpus, dtype=float)
    ax = axes[0]
    ax.loglog(g, system_mtbf_s(g) / 60.0, color="k")
    ax.plot([LLAMA3_GPUS], [system_mtbf_s(LLAMA3_GPUS) / 60.0], "o", color="#D55E00",
            label="Llama 3 (16k)")
    ax.plot([600_000], [system_mtbf_s(600_000) / 60.0], "s", color="#0072B2", label="600k")
    ax.set_xlabel("#GPUs")
    ax.set_ylabel("system MTBF (min)")
    ax.legend()
    ax = axes[1]
    ax.semilogx(g, restart_time_s(g) / 60.0, color="k", label="restart R(G)")
    ax.semilogx(g, system_mtbf_s(g) / 60.0, color="k", linestyle=":", label="system MTBF")
    ax.set_ylim(0, max(90.0, float(restart_time_s(g.max()) / 60.0) * 1.05))
    ax.set_xlabel("#GPUs")
    ax.set_ylabel("minutes")
    ax.legend(loc="upper center")
    ax = axes[2]
    for label, sub in runs.groupby("label", sort=False):
        sub = sub.sort_values("n_gpus")
        y = 100 * sub["restart_share"].to_numpy()
        err = 100 * np.vstack([sub["restart_share"] - sub["restart_share_min"],
                               sub["restart_share_max"] - sub["restart_share"]])
        sty = METHOD_STYLE[label]
        ax.errorbar(sub["n_gpus"], y, yerr=err, color=sty["color"], marker=sty["marker"],
                    linestyle=sty["linestyle"], capsize=1.5, label=label)
    ax.set_xscale("log")
    ax.set_xlim(axes[1].get_xlim())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(0, 100)
    ax.set_xlabel("#GPUs")
    ax.set_ylabel("wall time in restarts (%)")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig
