"""The scaled-clock emulation's coordinator: the simulator's protocol over real processes.

:class:`Emulator` runs the event loop of ``spare_lib.cluster.core`` (SPEC §3–5, and
``docs/strategies.md`` for the rejoins) with real worker processes on a wall clock scaled by
``spec.scale``. Model time is ``(time.monotonic() − origin) · scale``. Everything the simulator
*charges* (compute units with their jitter, T_a, the stall, T_s, the restart windows, the rejoin
time) is waited out; everything it *decides* is decided here from what really happened:

* a failure is a SIGKILL from :class:`~spare_lib.runtime.clock.Killer` at the clock's time;
  it is *detected* by EOF on the pipe (or a refused send, or a timeout), while the coordinator
  waits for an attempt's answers (the unit-start and barrier polls), at the start of the next
  attempt (failures during T_a, a stall or a checkpoint write), at the leader's checkpoint
  poll, and continuously during a restart window;
* the barrier is the arrival of the last live group's answer;
* RECTLR (``spare_lib.rectlr.Controller``), the replica sets or the live count settle a failed
  attempt (commit, retry with patch, or wipe-out), exactly as the method's hooks do;
* a global restart replaces the dead groups' processes; each group must then get through its
  own window of T_r without failing (a failure restarts that group's window); a group that
  fails after its window, while the others are still in theirs, is noticed at the first poll of
  the next step (the simulator's rule). Then θ is read back from the checkpoint file.

Every event goes to :attr:`Emulator.events` with its wall and model time.
"""

from __future__ import annotations

import math
import os
import time
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Any

import numpy as np

from spare_lib.runtime.clock import FailureClock, Killer
from spare_lib.runtime.emu_pool import EmuPool
from spare_lib.runtime.model import MLPTask, aggregate
from spare_lib.runtime.pool import WorkerProtocolError

#: Outcomes of a failed attempt (the simulator's COMMIT_FIXED / COMMIT_MASKED / RETRY / WIPEOUT).
FIXED, MASKED, REORDERED, WIPEOUT = "fixed", "masked", "reordered", "wipeout"


class Emulator:
    """One emulated run (built and driven by :func:`spare_lib.runtime.emulation.emulate`)."""

    def __init__(self, method: str, N: int, r: int, stacks: np.ndarray | None, spec: Any,
                 clock: FailureClock, ckpt_steps: int | None, task: MLPTask, lr: float,
                 seed: np.random.SeedSequence, timeout_s: float, standby: int,
                 startup_timeout_s: float, exact_patch: bool, run_dir: Path,
                 controller: Any, max_wall_s: float) -> None:
        self.method, self.N, self.r, self.spec, self.clock = method, N, r, spec, clock
        self.C = ckpt_steps
        self.task, self.lr, self.timeout_s = task, lr, timeout_s
        self.exact_patch, self.max_wall_s = exact_patch, max_wall_s
        self.rng = np.random.default_rng(seed)
        self.spare = method in ("spare", "spare+repair")
        self.rejoins = method in ("spare+repair", "elastic-drop") and math.isfinite(spec.rejoin_s)
        self.ctl = controller
        if self.spare:
            self.base = np.array(stacks, dtype=np.int64)
            self.held = [tuple(int(t) for t in self.base[w]) for w in range(N)]
        elif method == "rep":
            self.held = [tuple(range((w // r) * r, min(N, (w // r + 1) * r))) for w in range(N)]
        else:
            self.held = [(w,) for w in range(N)]
        self.pool = EmuPool(N, task, standby, startup_timeout_s)
        self.killer = Killer()
        self.ckpt_path = run_dir / "checkpoint.npz"
        self.events: list[tuple] = []
        self.origin = 0.0
        self.nf = np.full(N, math.inf)
        self.alive = np.zeros(N, dtype=bool)
        self.revive = np.full(N, math.inf)
        self.deferred: list[int] = []
        self.pending_leader = -1
        c = dict.fromkeys(("commits", "restarts", "masked", "fails", "attempts", "rejoins",
                           "redone", "ck_ok", "ck_fail", "phase0", "reorder", "timed_units",
                           "real_shards", "boundary", "deferred_late"), 0)
        self.count = c
        self.per_restart: list[int] = []
        self.noise: dict[str, list[float]] = {"barrier_s": [], "worker_late_s": [], "pipe_s": [],
                                              "slip_s": []}
        self.t_sched = 0.0
        self.committed, self.samples, self.attempt = 0, 0.0, 0
        self.completed, self.total_s = False, math.nan
        self.fails_since = 0
        self.restart_time = self.stall_time = self.ckpt_time = 0.0
        self.sum_s = 0.0
        self._reset_layout()

    # ------------------------------------------------------------------ clocks and logging
    def now(self) -> float:
        """Model time in seconds."""
        return (time.monotonic() - self.origin) * self.spec.scale

    def wall(self, t_model: float) -> float:
        """``time.monotonic`` value of model time ``t_model``."""
        return self.origin + t_model / self.spec.scale

    def sleep_until(self, t_model: float) -> None:
        left = self.wall(t_model) - time.monotonic()
        if left > 0:
            time.sleep(left)

    def _phase(self, dur: float) -> float:
        """End of a phase of ``dur`` model seconds that started at the scheduled time: its real
        work (done before this call) either fitted (the schedule goes on from the phase's end)
        or overran it (the schedule slips to now, logged). Returns the phase's length."""
        start, end = self.t_sched, self.t_sched + dur
        now = self.now()
        if now > end:
            self.noise["slip_s"].append((now - end) / self.spec.scale)
            self.log("slip", value=now - end, t=now)
            end = now
        self.sleep_until(end)
        self.t_sched = end
        return end - start

    def log(self, kind: str, group: int = -1, value: float = math.nan, info: str = "",
            t: float | None = None) -> None:
        w = time.monotonic() - self.origin
        self.events.append((w, w * self.spec.scale if t is None else t, kind, self.committed,
                            self.attempt, int(group), float(value), info))

    def _arm(self, w: int, pid: int) -> None:
        self.killer.arm(w, pid, self.wall(self.nf[w]) if math.isfinite(self.nf[w]) else math.inf)

    def _give_process(self, w: int) -> None:
        self._arm(w, self.pool.assign(w, self.held[w]))
        self.log("spawn", w, self.pool.assign_s[-1])

    # ------------------------------------------------------------------ method state
    def _reset_layout(self) -> None:
        if self.spare:
            self.ctl.restart()
            self._adopt_ctl()
        else:
            self.depth = self.r if self.method == "rep" else 1

    def _adopt_ctl(self) -> None:
        self.stacks = np.array(self.ctl.stacks)
        self.assignment = np.array(self.ctl.assignment)
        self.depth = int(self.ctl.depth)

    def _work(self, w: int, retry: bool, patch: np.ndarray | None, done: dict) -> tuple:
        """(real types to compute, timed units, unit length in model s) of live group w."""
        c = self.spec.compute_per_stack_s
        if self.spare:
            real = [int(t) for t in self.stacks[w, :self.depth] if int(t) not in done]
            return real, (int(patch[w]) if retry else self.depth), c
        if self.method == "rep":
            return list(self.held[w]), 1, self.r * c
        return [w], 1, c

    # ------------------------------------------------------------------ detection
    def _notice(self, w: int, how: str, flagged: list[int] | None, t: float | None = None
                ) -> None:
        """A failure of live group w is noticed at model time t (None: now): dead until a
        restart (or its rejoin)."""
        t = self.now() if t is None else t
        self.alive[w] = False
        self.killer.disarm(w)
        self.pool.retire(w)
        self.nf[w] = self.clock.renew(w, t)
        if self.rejoins:
            self.revive[w] = t + self.spec.rejoin_s
        if flagged is not None:
            flagged.append(w)
        self.log("notice", w, math.nan, how, t=t)

    def _poll(self, flagged: list[int], how: str, groups: list[int] | None = None,
              late_eof: list[int] | None = None) -> None:
        """Non-blocking check of live groups' pipes: EOF = noticed now (or, with ``late_eof``,
        left for :meth:`_settle_late`)."""
        gs = [w for w in (range(self.N) if groups is None else groups)
              if self.alive[w] and self.pool.conns[w] is not None]
        conns = {self.pool.conns[w]: w for w in gs}
        for c in mp_wait(list(conns), 0) if conns else []:
            w = conns[c]
            try:
                msg = c.recv()
            except (EOFError, OSError):
                if late_eof is None:
                    self._notice(w, how, flagged)
                else:
                    self._gone(w)
                    late_eof.append(w)
                continue
            if msg[0] == "error":
                raise WorkerProtocolError(msg[1])
            raise WorkerProtocolError(f"group {w}: unexpected message {msg[0]!r} at a poll")

    # ------------------------------------------------------------------ one attempt
    def _attempt(self, retry: bool, patch: np.ndarray | None, theta: np.ndarray,
                 computed: dict[int, dict]) -> list[int]:
        """Compute phase, barrier and all-reduce of one attempt; returns the flagged groups."""
        self.count["attempts"] += 1
        flagged: list[int] = []
        if self.pending_leader >= 0:  # died at the checkpoint write: flagged now (counted then)
            flagged.append(self.pending_leader)
            self.pending_leader = -1
        for w in self.deferred:  # failed after the last barrier (or at the restart barrier):
            self.alive[w] = True  # noticed at this attempt's first poll
            self._notice(w, "deferred", flagged, t=self.t_sched)
            self.count["fails"] += 1
            self.fails_since += 1
        self.deferred = []
        t_start = self.t_sched
        self.log("attempt", value=float(self.alive.sum()), t=t_start)
        self._poll(flagged, "attempt_start")
        sc = self.spec
        deadline, pending, dur_of = {}, {}, {}
        for w in np.flatnonzero(self.alive):
            w = int(w)
            real, units, unit_s = self._work(w, retry, patch, computed.setdefault(w, {}))
            if sc.jitter_sigma > 0 and units:
                jit = np.maximum(sc.jitter_min, 1.0 + sc.jitter_sigma * self.rng.standard_normal(units))
                dur = unit_s * float(jit.sum())
            else:
                dur = unit_s * units
            self.count["timed_units"] += units
            self.count["real_shards"] += len(real)
            if not real and units == 0:
                continue  # nothing to do: polled at the barrier only
            deadline[w] = self.wall(t_start + dur)
            dur_of[w] = dur
            try:
                self.pool.conns[w].send(("emu", self.committed, self.attempt, theta, real,
                                         deadline[w]))
                pending[self.pool.conns[w]] = w
            except (OSError, ValueError):
                self._notice(w, "send", flagged)
        late_eof: list[int] = []
        self._collect(pending, deadline, computed, flagged, late_eof)
        # the barrier: the slowest live group's compute end; its gradients travel (pipe) inside
        # the all-reduce that follows, which overruns (slips) only if they arrive after it
        live_ends = [dur_of[w] for w in dur_of if self.alive[w]]
        t_bar = t_start + (max(live_ends) if live_ends else 0.0)
        if live_ends:  # last answer processed − the slowest live group's deadline
            self.noise["barrier_s"].append(time.monotonic() - self.wall(t_bar))
        self.log("barrier", t=t_bar)
        self._poll(flagged, "barrier", late_eof=late_eof)
        self._settle_late(late_eof, flagged, t_bar)
        self._label_boundary(flagged, t_bar)
        self.t_sched = t_bar
        self._phase(sc.allreduce_s * (sc.allreduce_fail_factor if flagged else 1.0))
        return flagged

    def _gone(self, w: int) -> None:
        """Group w's process is dead; whether it is noticed now is decided by the caller."""
        self.killer.disarm(w)
        self.pool.retire(w)

    def _last_kill(self, w: int) -> float | None:
        last = None
        for wall, g, _pid, _due in list(self.killer.fired):
            if g == w:
                last = wall
        return last

    def _settle_late(self, late_eof: list[int], flagged: list[int], t_bar: float) -> None:
        """Groups that answered and then died: killed before the scheduled barrier → noticed
        in this attempt (the barrier poll); after it → the model notices them at the next
        poll, so they are deferred (their gradients of this attempt stand). The coordinator
        only sees them now because it is behind its schedule; the kill time (the harness's
        log, not the protocol's knowledge) says which side of the barrier they are on."""
        for w in late_eof:
            k = self._last_kill(w)
            if k is not None and k > self.wall(t_bar):
                self.deferred.append(w)
                self.count["deferred_late"] += 1
                self.log("deferred", w, (k - self.origin) * self.spec.scale - t_bar, t=t_bar)
            else:
                self._notice(w, "barrier", flagged, t=t_bar)

    def _label_boundary(self, flagged: list[int], t_bar: float) -> None:
        """Count failures flagged in this attempt whose SIGKILL came after its barrier: the model
        notices them at the next attempt; here the coordinator was still late at the barrier
        (answers processed after T_a began). The kill time is the harness's ground truth (the
        killer's log), used for this label only."""
        last = {}
        for wall, w, _pid, _due in list(self.killer.fired):
            last[w] = wall
        for w in flagged:
            k = last.get(w)
            if k is not None and k > self.wall(t_bar):
                self.count["boundary"] += 1
                self.log("boundary", w, (k - self.origin) * self.spec.scale - t_bar, t=t_bar)

    def _collect(self, pending: dict, deadline: dict, computed: dict, flagged: list[int],
                 late_eof: list[int] | None) -> None:
        """Wait for the answers; EOF from a group that has not answered flags it now; one that
        has answered goes to ``late_eof`` (None: flag it too)."""
        while pending:
            watch = {self.pool.conns[w]: w for w in np.flatnonzero(self.alive)
                     if self.pool.conns[w] is not None}
            last = max(deadline[w] for w in pending.values())
            left = last + self.timeout_s - time.monotonic()
            if left <= 0:
                for c, w in list(pending.items()):
                    del pending[c]
                    self._notice(w, "timeout", flagged)
                return
            for c in mp_wait(list(watch), left):
                w = watch[c]
                try:
                    msg = c.recv()
                except (EOFError, OSError):
                    if c in pending or late_eof is None:
                        pending.pop(c, None)
                        self._notice(w, "eof", flagged)
                    else:  # answered, then died: before or after the barrier? (decided then)
                        self._gone(w)
                        late_eof.append(w)
                    continue
                if msg[0] == "error":
                    raise WorkerProtocolError(msg[1])
                if msg[0] != "emu_grads" or msg[1] != self.committed or msg[2] != self.attempt:
                    raise WorkerProtocolError(f"group {w}: unexpected message {msg[:3]!r}")
                for t, loss, g in msg[3]:
                    computed[w][t] = (loss, g)
                pending.pop(c, None)
                self.noise["worker_late_s"].append(msg[4] - deadline[w])
                self.noise["pipe_s"].append(time.monotonic() - msg[4])

    # ------------------------------------------------------------------ resolve
    def _resolve(self, flagged: list[int]) -> tuple[str, np.ndarray | None]:
        n_alive = int(self.alive.sum())
        if self.spare:
            plan = self.ctl.fail(np.array(sorted(flagged), dtype=np.int64))
            if plan.outcome == "wipeout":
                return WIPEOUT, None
            self._adopt_ctl()
            if plan.outcome == "fixed":
                self.count["phase0"] += 1
                return FIXED, None
            self.count["reorder"] += 1
            return REORDERED, np.array(plan.patch_exact if self.exact_patch else plan.patch)
        if self.method in ("rep", "ckpt"):
            for i in range(0, self.N, self.r):
                if not self.alive[i:i + self.r].any():
                    return WIPEOUT, None
            return MASKED, None
        return (MASKED if n_alive > 0 else WIPEOUT), None

    # ------------------------------------------------------------------ a step
    def _step(self, theta: np.ndarray) -> dict[int, tuple] | None:
        """All attempts of one step; the per-type (loss, grad) to commit, or None (wipe-out)."""
        computed: dict[int, dict] = {}
        retry, patch = False, None
        self.attempt = 0
        while True:
            fails_before = self.count["fails"]
            pend = 1 if self.pending_leader >= 0 else 0
            flagged = self._attempt(retry, patch, theta, computed)
            n_new = len(flagged) - pend - (self.count["fails"] - fails_before)
            self.count["fails"] += n_new
            self.fails_since += n_new
            if not flagged:
                break
            outcome, patch = self._resolve(flagged)
            self.log("resolve", value=float(self.depth), info=outcome)
            if outcome == WIPEOUT:
                return None
            self.count["masked"] += len(flagged)
            t0 = self.t_sched
            self.stall_time += self._phase(self.spec.stall_s)
            self.log("stall", value=self.t_sched - t0, t=t0)
            if outcome == REORDERED:
                retry = True
                self.attempt += 1
                continue
            break
        return self._gather(computed)

    def _gather(self, computed: dict[int, dict]) -> dict[int, tuple]:
        live = [int(w) for w in np.flatnonzero(self.alive)]
        out: dict[int, tuple] = {}
        if self.spare:
            for t in range(self.N):
                w = int(self.assignment[t])
                if t not in computed.get(w, {}):
                    raise RuntimeError(f"type {t} assigned to group {w}, which did not compute it")
                out[t] = computed[w][t]
            return out
        for w in live:
            for t, v in computed.get(w, {}).items():
                out.setdefault(t, v)
        if self.method != "elastic-drop" and len(out) != self.N:
            raise RuntimeError(f"commit without every type: {sorted(set(range(self.N)) - set(out))}")
        return out

    # ------------------------------------------------------------------ rejoin, checkpoint
    def _rejoin_batch(self) -> None:
        t = self.t_sched
        back = [w for w in range(self.N) if not self.alive[w] and self.revive[w] <= t]
        if not back:
            return
        for w in back:
            self.nf[w] = self.clock.roll_forward(w, self.nf[w], self.revive[w])
            self.revive[w] = math.inf
            self.alive[w] = True
            self._give_process(w)
            self.count["rejoins"] += 1
            self.log("rejoin", w)
        if self.spare:
            self.ctl.restart()
            dead = [w for w in range(self.N) if not self.alive[w]]
            if dead:
                self.ctl.fail(np.array(dead, dtype=np.int64))
            self._adopt_ctl()
        stall = self.spec.stall_s if self.spec.rejoin_stall_s is None else self.spec.rejoin_stall_s
        self.stall_time += self._phase(stall)

    def _checkpoint(self, theta: np.ndarray, done: bool) -> None:
        while True:
            live = np.flatnonzero(self.alive)
            if live.size == 0:
                return
            leader = int(live[0])
            flagged: list[int] = []
            if leader in self.deferred:  # died after the barrier: the leader poll notices it
                self.deferred.remove(leader)
                self._notice(leader, "leader", flagged)
            self._poll(flagged, "leader", [leader])
            if flagged:
                self.count["fails"] += 1
                self.fails_since += 1
                self.count["ck_fail"] += 1
                self.log("checkpoint", leader, info="lost")
                if not done:
                    self.pending_leader = leader
                    return
                continue  # after the last step the next live group writes it
            t0 = self.t_sched
            tmp = self.ckpt_path.with_name("checkpoint.tmp.npz")
            np.savez(tmp, theta=theta, committed=np.int64(self.committed),
                     samples=np.float64(self.samples))
            os.replace(tmp, self.ckpt_path)
            self.ckpt_time += self._phase(self.spec.checkpoint_s)
            self.count["ck_ok"] += 1
            self.log("checkpoint", leader, info="written", t=t0)
            return

    # ------------------------------------------------------------------ restart
    def _restart(self) -> np.ndarray:
        """Global restart: dead groups replaced, per-group windows of T_r, rollback from disk."""
        self.per_restart.append(self.fails_since)
        self.fails_since = 0
        self.count["restarts"] += 1
        t0 = self.t_sched
        self.log("restart_begin", t=t0)
        for w in range(self.N):
            if self.alive[w]:  # failed unnoticed: noticed at the restart's start (not counted)
                c = self.pool.conns[w]
                if c is None:  # deferred from the wiped attempt: its process is gone
                    self.alive[w] = False
                    self.nf[w] = self.clock.renew(w, t0)
                    self.log("notice", w, info="restart_start", t=t0)
                    continue
                if c.poll(0):
                    try:
                        c.recv()
                    except (EOFError, OSError):
                        self.alive[w] = False
                        self.killer.disarm(w)
                        self.pool.retire(w)
                        self.nf[w] = self.clock.renew(w, t0)
                        self.log("notice", w, info="restart_start", t=t0)
                        continue
                    raise WorkerProtocolError(f"group {w}: unexpected message at a restart")
            else:
                self.nf[w] = self.clock.roll_forward(w, self.nf[w], t0)
        self.revive[:] = math.inf
        self.deferred = []
        window_end = np.full(self.N, t0 + self.spec.restart_s)
        for w in range(self.N):
            if not self.alive[w]:
                self._give_process(w)
                self.alive[w] = True
        self._windows(window_end)
        self.restart_time += self.t_sched - t0
        self.log("restart_end", value=self.t_sched - t0, t=self.t_sched)
        self._reset_layout()
        with np.load(self.ckpt_path) as z:
            theta, ck, samples = np.array(z["theta"]), int(z["committed"]), float(z["samples"])
        self.count["redone"] += self.committed - ck
        self.committed, self.samples = ck, samples
        return theta

    def _windows(self, window_end: np.ndarray) -> None:
        """Wait until every group got through its window; a failure inside restarts it."""
        while True:
            now_w = time.monotonic()
            inside = [w for w in range(self.N) if self.alive[w] and self.wall(window_end[w]) > now_w]
            if not inside:
                break
            watch = {self.pool.conns[w]: w for w in range(self.N) if self.alive[w]}
            left = min(self.wall(window_end[w]) for w in inside) - now_w
            for c in mp_wait(list(watch), max(0.0, left)):
                w = watch[c]
                try:
                    c.recv()
                except (EOFError, OSError):
                    t = self.now()
                    if t < window_end[w]:
                        self.killer.disarm(w)
                        self.pool.retire(w)
                        self.nf[w] = self.clock.renew(w, t)
                        window_end[w] = t + self.spec.restart_s
                        self.log("window_reset", w, t=t)
                        self._give_process(w)
                    else:  # through its window, waiting for the others: noticed next step
                        self.alive[w] = False
                        self.killer.disarm(w)
                        self.pool.retire(w)
                        self.deferred.append(w)
                        self.log("barrier_failure", w, t=t)
                    continue
                raise WorkerProtocolError(f"group {w}: unexpected message in a restart window")
        self.sleep_until(float(window_end.max()))
        self.t_sched = max(float(window_end.max()), self.t_sched)

    # ------------------------------------------------------------------ the run
    def run(self) -> np.ndarray:
        """Train until ``spec.steps`` steps' worth of samples are committed; returns θ."""
        theta = self.task.init_params()
        self.committed, self.samples, self.attempt = 0, 0.0, 0
        np.savez(self.ckpt_path, theta=theta, committed=np.int64(0), samples=np.float64(0.0))
        self.pool.start()
        self.killer.start()
        pids = [self.pool.assign(w, self.held[w]) for w in range(self.N)]
        self.origin = time.monotonic()  # the clock starts once every group has its process
        self.t_sched = 0.0
        for w in range(self.N):
            self.nf[w] = self.clock.renew(w, -1.0)
            self.alive[w] = True
            self._arm(w, pids[w])
        self.completed = False
        while time.monotonic() - self.origin < self.max_wall_s:
            if self.rejoins:
                self._rejoin_batch()
            contrib = self._step(theta)
            if contrib is None:
                theta = self._restart()
                continue
            types = sorted(contrib)
            theta = theta - self.lr * aggregate({t: contrib[t][1] for t in types}, types)
            self.committed += 1
            self.count["commits"] += 1
            self.sum_s += self.depth
            self.samples += (self.alive.sum() / self.N if self.method == "elastic-drop" else 1.0)
            done = self.samples >= self.spec.steps
            self.log("commit", value=float(self.depth))
            if self.C is not None and (self.committed % self.C == 0 or done):
                self._checkpoint(theta, done)
            if done:
                self.completed = True
                break
        self.total_s = self.t_sched
        return theta

    def close(self) -> None:
        """Stop the killer, kill and reap every process (always called)."""
        self.killer.stop()
        self.pool.close()
