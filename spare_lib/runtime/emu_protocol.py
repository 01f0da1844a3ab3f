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
  the next step (the simulator's rule). Then θ is read back from the checkpoint file
  (:mod:`.emu_recovery`).

Three instants are a matter of *semantics*, chosen by
:class:`~spare_lib.runtime.emulation.EmuSemantics` (the simulator's, or what a real
coordinator does):

* ``notice_at``: a failure noticed in an attempt is noticed (its group's clock renewed, its
  rejoin time started) at the model's poll (the first unit start after it, or the barrier) or
  when the coordinator sees its EOF;
* ``window_from``: a failure inside a restart window restarts the window at the failure or at
  its detection;
* ``overrun``: when the coordinator's real work (late answers, detection, process hand-over,
  disk) overruns a phase, the schedule ``slip`` s (model time goes on: the real system's cost)
  or the model clock ``pause`` s: the killer is held at the end of the phase the coordinator is
  in, every failure due by then is seen before the phase ends (detection takes no model time),
  and origin and pending kills move later by the overrun (measured in ``noise['pause_s']``).

Every event goes to :attr:`Emulator.events` with its wall and model time.
"""

from __future__ import annotations

import math
import time
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Any

import numpy as np

from spare_lib.runtime.clock import FailureClock, Killer
from spare_lib.runtime.emu_pool import EmuPool
from spare_lib.runtime.emu_recovery import RecoveryMixin
from spare_lib.runtime.model import MLPTask, aggregate
from spare_lib.runtime.pool import WorkerProtocolError

#: Outcomes of a failed attempt (the simulator's COMMIT_FIXED / COMMIT_MASKED / RETRY / WIPEOUT).
FIXED, MASKED, REORDERED, WIPEOUT = "fixed", "masked", "reordered", "wipeout"


class Emulator(RecoveryMixin):
    """One emulated run (built and driven by :func:`spare_lib.runtime.emulation.emulate`)."""

    def __init__(self, method: str, N: int, r: int, stacks: np.ndarray | None, spec: Any,
                 clock: FailureClock, ckpt_steps: int | None, task: MLPTask, lr: float,
                 seed: np.random.SeedSequence, timeout_s: float, standby: int,
                 startup_timeout_s: float, exact_patch: bool, run_dir: Path,
                 controller: Any, max_wall_s: float, semantics: Any) -> None:
        self.method, self.N, self.r, self.spec, self.clock = method, N, r, spec, clock
        self.sem = semantics
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
        self.kill_time: dict[int, float] = {}  # pid → the failure time it was armed with
        self.origin = self.wall0 = 0.0
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
                                              "slip_s": [], "pause_s": [], "detect_s": []}
        self.grid: dict[int, np.ndarray] = {}  # unit starts of each group in this attempt
        self.t_bar = 0.0
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
        or overran it: the schedule slips to now (``overrun='slip'``, logged) or the model clock
        stops until the coordinator has caught up (``'pause'``). Returns the phase's length."""
        start, end = self.t_sched, self.t_sched + dur
        self._hold_at(end)
        if self.sem.overrun == "pause":
            self.sleep_until(end)
            self._catch_up(end)
        else:
            now = self.now()
            if now > end:
                self.noise["slip_s"].append((now - end) / self.spec.scale)
                self.log("slip", value=now - end, t=now)
                end = now
            self.sleep_until(end)
        self.t_sched = end
        return end - start

    # ------------------------------------------------------------------ overrun='pause'
    def _hold(self, dur: float) -> None:
        """The coordinator enters a phase of ``dur`` model seconds from the schedule."""
        self._hold_at(self.t_sched + dur)

    def _hold_at(self, t_end: float) -> None:
        """overrun='pause': no kill due after model time ``t_end`` fires before the coordinator
        has passed it (kills due before fire on time)."""
        if self.sem.overrun == "pause":
            self.killer.hold(self.wall(t_end))

    def _due_eofs(self, t_end: float) -> list[int]:
        """overrun='pause': live groups whose failure is due by ``t_end``, once their EOF can be
        read (waited for, up to ``timeout_s``): detection takes no model time. [] otherwise."""
        if self.sem.overrun != "pause":
            return []
        due = {self.pool.conns[w]: w for w in range(self.N)
               if self.alive[w] and self.pool.conns[w] is not None and self.nf[w] <= t_end}
        if not due:
            return []
        out, deadline = [], time.monotonic() + self.timeout_s
        while due:
            ready = mp_wait(list(due), max(0.0, deadline - time.monotonic()))
            if not ready:
                raise WorkerProtocolError(f"groups {sorted(due.values())}: killed, but no EOF "
                                          f"within timeout_s={self.timeout_s} s")
            for c in ready:
                out.append(due.pop(c))
        return sorted(out)

    def _catch_up(self, t_end: float) -> None:
        """overrun='pause', at the end ``t_end`` of a phase: wait for the EOF of every failure
        due by then, and if the coordinator is behind ``t_end``, stop the model clock for the
        difference (origin and pending kills move later; measured in ``noise['pause_s']``)."""
        self._due_eofs(t_end)
        behind = time.monotonic() - self.wall(t_end)
        if behind > 0:
            self.origin += behind
            self.killer.shift(behind)
            self.noise["pause_s"].append(behind)

    def log(self, kind: str, group: int = -1, value: float = math.nan, info: str = "",
            t: float | None = None) -> None:
        """An event: wall time since the clock started, model time (None: now)."""
        self.events.append((time.monotonic() - self.wall0, self.now() if t is None else t, kind,
                            self.committed, self.attempt, int(group), float(value), info))

    def _arm(self, w: int, pid: int) -> None:
        self.kill_time[pid] = float(self.nf[w])
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
    def _poll_instant(self, w: int) -> float:
        """The model's notice time of group w's failure in this attempt: the first of its unit
        starts at or after the failure (the clock armed the killer with its time), else the
        barrier."""
        f, starts = float(self.nf[w]), self.grid.get(w)
        if starts is not None:
            i = int(np.searchsorted(starts, f, side="left"))
            if i < starts.size:
                return float(starts[i])
        return self.t_bar

    def _notice(self, w: int, how: str, flagged: list[int] | None, t: float | None = None
                ) -> None:
        """A failure of live group w is noticed at model time t (None: in an attempt, the
        model's poll or now, as ``notice_at`` says): dead until a restart (or its rejoin)."""
        if t is None:
            t = self._poll_instant(w) if self.sem.notice_at == "poll" else self.now()
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
              late_eof: list[int] | None = None, t: float | None = None) -> None:
        """Non-blocking check of live groups' pipes: EOF = noticed at this poll's model time
        ``t`` (``notice_at='poll'``; None: now) or when seen (``'detect'``), or, with
        ``late_eof``, left for :meth:`_settle_late`."""
        t = t if self.sem.notice_at == "poll" and t is not None else self.now()
        gs = [w for w in (range(self.N) if groups is None else groups)
              if self.alive[w] and self.pool.conns[w] is not None]
        conns = {self.pool.conns[w]: w for w in gs}
        for c in mp_wait(list(conns), 0) if conns else []:
            w = conns[c]
            try:
                msg = c.recv()
            except (EOFError, OSError):
                if late_eof is None:
                    self._notice(w, how, flagged, t=t)
                else:
                    self._gone(w)
                    late_eof.append(w)
                continue
            if msg[0] == "error":
                raise WorkerProtocolError(msg[1])
            raise WorkerProtocolError(f"group {w}: unexpected message {msg[0]!r} at a poll")

    # ------------------------------------------------------------------ one attempt
    def _timed(self, w: int, retry: bool, patch: np.ndarray | None, done: dict
               ) -> tuple[list[int], np.ndarray]:
        """(real types to compute, model start times of the timed units) of live group w in an
        attempt starting at ``t_sched``; its compute ends at the last start + one unit."""
        sc = self.spec
        real, units, unit_s = self._work(w, retry, patch, done)
        if sc.jitter_sigma > 0 and units:
            jit = np.maximum(sc.jitter_min, 1.0 + sc.jitter_sigma * self.rng.standard_normal(units))
        else:
            jit = np.ones(units)
        self.count["timed_units"] += units
        self.count["real_shards"] += len(real)
        return real, self.t_sched + unit_s * np.concatenate(([0.0], np.cumsum(jit)))

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
        self.grid = {}
        self.log("attempt", value=float(self.alive.sum()), t=t_start)
        self._poll(flagged, "attempt_start", t=t_start)
        ends, pending, work = {}, {}, {}
        for w in np.flatnonzero(self.alive):
            w = int(w)
            real, bounds = self._timed(w, retry, patch, computed.setdefault(w, {}))
            if not real and bounds.size == 1:
                continue  # nothing to do: polled at the barrier only
            self.grid[w], ends[w], work[w] = bounds[:-1], float(bounds[-1]), real
        t_cap = max(ends.values(), default=t_start)
        self._hold_at(t_cap)
        deadline = {w: self.wall(e) for w, e in ends.items()}
        died: dict[int, tuple[str, float]] = {}
        for w, real in work.items():
            try:
                self.pool.conns[w].send(("emu", self.committed, self.attempt, theta, real,
                                         deadline[w]))
                pending[self.pool.conns[w]] = w
            except (OSError, ValueError):
                self._gone(w)
                died[w] = ("send", self.now())
        late_eof: list[int] = []
        self._collect(pending, deadline, computed, died, late_eof)
        t_bar = self._barrier_time(t_start, ends, died)
        self.t_bar = t_bar
        self.sleep_until(t_bar)
        if len(ends) > len(died):  # last answer processed − the barrier
            self.noise["barrier_s"].append(time.monotonic() - self.wall(t_bar))
        if self.sem.overrun == "pause":
            if t_bar > t_cap:  # notice_at='detect': a detection after the last compute end
                self._hold_at(t_bar)  # extends the phase; kills due by the barrier may fire
            self._catch_up(t_bar)
        for w, (how, t_seen) in died.items():  # noticed: at the model's poll, or when seen
            self._notice(w, how, flagged, t=None if self.sem.notice_at == "poll" else t_seen)
        self.log("barrier", t=t_bar)
        self._poll(flagged, "barrier", late_eof=late_eof)
        self._settle_late(late_eof, flagged, t_bar)
        self._label_boundary(flagged, t_bar)
        self.t_sched = t_bar
        sc = self.spec
        self._phase(sc.allreduce_s * (sc.allreduce_fail_factor if flagged else 1.0))
        return flagged

    def _barrier_time(self, t_start: float, ends: dict[int, float],
                      died: dict[int, tuple[str, float]]) -> float:
        """The barrier: the last compute end of the groups that got through; a group that died
        counts up to the model's poll that notices it (the first unit start after its failure,
        else its compute end; ``notice_at='poll'``) or up to its detection (``'detect'``)."""
        last = t_start
        for w, e in ends.items():
            if w not in died:
                last = max(last, e)
            elif self.sem.notice_at == "poll":
                starts = self.grid[w]
                i = int(np.searchsorted(starts, float(self.nf[w]), side="left"))
                last = max(last, float(starts[i]) if i < starts.size else e)
            else:
                last = max(last, died[w][1])
        return last

    def _gone(self, w: int) -> None:
        """Group w's process is dead; whether it is noticed now is decided by the caller."""
        self.killer.disarm(w)
        self.pool.retire(w)

    def _detected(self, w: int) -> None:
        """An EOF read while the coordinator was waiting on the pipes: detection latency
        (EOF read − SIGKILL, wall s) into ``noise['detect_s']``."""
        k = self._last_kill(w)
        if k is not None:
            self.noise["detect_s"].append(time.monotonic() - k)

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

    def _collect(self, pending: dict, deadline: dict, computed: dict,
                 died: dict[int, tuple[str, float]], late_eof: list[int]) -> None:
        """Wait for the answers. A group that dies before answering goes to ``died`` with how
        and when (model s) it was seen (noticed once the barrier is known); one that has
        answered goes to ``late_eof``."""
        while pending:
            watch = {self.pool.conns[w]: w for w in np.flatnonzero(self.alive)
                     if self.pool.conns[w] is not None}
            last = max(deadline[w] for w in pending.values())
            left = last + self.timeout_s - time.monotonic()
            if left <= 0:
                for c, w in list(pending.items()):
                    del pending[c]
                    self._gone(w)
                    died[w] = ("timeout", self.now())
                return
            for c in mp_wait(list(watch), left):
                w = watch[c]
                try:
                    msg = c.recv()
                except (EOFError, OSError):
                    self._detected(w)
                    self._gone(w)
                    if c in pending:
                        pending.pop(c)
                        died[w] = ("eof", self.now())
                    else:  # answered, then died: before or after the barrier? (decided then)
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
            self.log("resolve", value=float(self.depth), info=outcome, t=self.t_sched)
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
        self.wall0 = wall0 = self.origin
        self.t_sched = 0.0
        self._hold_at(0.0)
        for w in range(self.N):
            self.nf[w] = self.clock.renew(w, -1.0)
            self.alive[w] = True
            self._arm(w, pids[w])
        self.completed = False
        while time.monotonic() - wall0 < self.max_wall_s:
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
            self.log("commit", value=float(self.depth), t=self.t_sched)
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
