"""The scaled-clock emulation's recovery paths: rejoins, checkpoints, global restarts (issue 28).

A mixin of :class:`spare_lib.runtime.emu_protocol.Emulator` (the attempt loop lives there):

* :meth:`RecoveryMixin._rejoin_batch`: failed groups whose ``rejoin_s`` is up get a fresh
  process, RECTLR re-plans from the base layout, one rejoin stall is paid;
* :meth:`RecoveryMixin._checkpoint`: the leader (lowest live group) is polled, then writes θ to
  disk for T_s; a leader found dead loses the checkpoint (flagged at the next attempt);
* :meth:`RecoveryMixin._restart`: a global restart as ``spare_lib.cluster.engine.core`` models
  it (SPEC §5): dead groups get new processes, every group must get through its own window of
  T_r without failing (a failure inside restarts that group's window), a group that fails after
  its window while others are still in theirs is noticed at the first poll of the next step,
  and θ is read back from the checkpoint file.

When a failure inside a window restarts it is one of the emulation's semantic knobs
(:class:`~spare_lib.runtime.emulation.EmuSemantics` ``window_from``): at the failure (the
simulator) or at its detection (EOF on the pipe, what a real coordinator can do).
"""

from __future__ import annotations

import math
import os
import time
from multiprocessing.connection import wait as mp_wait
from typing import Any

import numpy as np

from spare_lib.runtime.pool import WorkerProtocolError


class RecoveryMixin:
    """Rejoin, checkpoint and restart of :class:`~spare_lib.runtime.emu_protocol.Emulator`."""

    # attributes and helpers of the Emulator (declared for readers and type checkers)
    N: int
    spec: Any
    sem: Any
    alive: np.ndarray
    nf: np.ndarray
    revive: np.ndarray
    count: dict[str, int]

    # ------------------------------------------------------------------ rejoin
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
            self.log("rejoin", w, t=t)
        if self.spare:
            self.ctl.restart()
            dead = [w for w in range(self.N) if not self.alive[w]]
            if dead:
                self.ctl.fail(np.array(dead, dtype=np.int64))
            self._adopt_ctl()
        stall = self.spec.stall_s if self.spec.rejoin_stall_s is None else self.spec.rejoin_stall_s
        self.stall_time += self._phase(stall)

    # ------------------------------------------------------------------ checkpoint
    def _checkpoint(self, theta: np.ndarray, done: bool) -> None:
        while True:
            live = np.flatnonzero(self.alive)
            if live.size == 0:
                return
            leader = int(live[0])
            flagged: list[int] = []
            if leader in self.deferred:  # died after the barrier: the leader poll notices it
                self.deferred.remove(leader)
                self._notice(leader, "leader", flagged, t=self.t_sched)
            self._poll(flagged, "leader", [leader], t=self.t_sched)
            if flagged:
                self.count["fails"] += 1
                self.fails_since += 1
                self.count["ck_fail"] += 1
                self.log("checkpoint", leader, info="lost", t=self.t_sched)
                if not done:
                    self.pending_leader = leader
                    return
                continue  # after the last step the next live group writes it
            t0 = self.t_sched
            self._hold(self.spec.checkpoint_s)
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
                        self._gone(w)
                        self.nf[w] = self.clock.renew(w, t0)
                        self.log("notice", w, info="restart_start", t=t0)
                        continue
                    raise WorkerProtocolError(f"group {w}: unexpected message at a restart")
            else:
                self.nf[w] = self.clock.roll_forward(w, self.nf[w], t0)
        self.revive[:] = math.inf
        self.deferred = []
        window_end = np.full(self.N, t0 + self.spec.restart_s)
        self._hold_at(float(window_end.max()))
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

    def _window_failure(self, w: int, window_end: np.ndarray) -> bool:
        """Group w's process died during the restart: inside its window → the window restarts
        (True), after it → noticed at the next step's first poll (False)."""
        f = float(self.nf[w])  # the failure's time (the clock armed the killer with it)
        t = f if self.sem.window_from == "failure" else self.now()
        self._gone(w)
        if t < window_end[w]:
            self.nf[w] = self.clock.renew(w, t)
            window_end[w] = t + self.spec.restart_s
            self.log("window_reset", w, value=t - f, t=t)
            self._hold_at(float(window_end.max()))
            self._give_process(w)
            return True
        self.alive[w] = False
        self.deferred.append(w)
        self.log("barrier_failure", w, t=t)
        return False

    def _windows(self, window_end: np.ndarray) -> None:
        """Wait until every group got through its window; a failure inside restarts it."""
        while True:
            now_w = time.monotonic()
            inside = [w for w in range(self.N) if self.alive[w] and self.wall(window_end[w]) > now_w]
            if not inside:
                # overrun='pause': failures due by the last window's end are seen before it ends
                late = self._due_eofs(float(window_end.max()))
                if not late:
                    break
                for w in late:
                    self._window_failure(w, window_end)
                continue
            watch = {self.pool.conns[w]: w for w in range(self.N) if self.alive[w]}
            left = min(self.wall(window_end[w]) for w in inside) - now_w
            for c in mp_wait(list(watch), max(0.0, left)):
                w = watch[c]
                try:
                    c.recv()
                except (EOFError, OSError):
                    self._detected(w)
                    self._window_failure(w, window_end)
                    continue
                raise WorkerProtocolError(f"group {w}: unexpected message in a restart window")
        end = float(window_end.max())
        self.sleep_until(end)
        if self.sem.overrun == "pause":
            self._catch_up(end)
        self.t_sched = max(end, self.t_sched)
