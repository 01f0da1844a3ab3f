"""Worker processes of the scaled-clock emulation: hot standbys, assignment, reaping (issue 28).

Spawning a worker costs ≈ 10–30 ms on a loaded 2-core box even from a forkserver, which at a
scale of 1,000 is 10–30 s of model time: more than a stall, a checkpoint or an all-reduce. So
the pool keeps *standby* processes (:func:`spare_lib.runtime.worker.standby_main`) started ahead
by a background thread from a forkserver that has numpy and the worker preloaded; giving a
group a process (at the start, after a failure in a restart window, at a rejoin, for the dead
groups of a global restart) is one ``assign`` message and its ``ready`` answer. The time each
assignment takes is recorded (:attr:`EmuPool.assign_s`).

Every process started is in :attr:`EmuPool.pids`; :meth:`EmuPool.close` kills and reaps all
of them, the standbys included, and stops the forkserver, whatever state the run is in.
"""

from __future__ import annotations

import collections
import multiprocessing as mp
import os
import signal
import threading
import time
from dataclasses import asdict
from multiprocessing import forkserver
from typing import Any

from spare_lib.runtime.model import MLPTask
from spare_lib.runtime.pool import WorkerProtocolError, _without_main_reimport
from spare_lib.runtime.worker import standby_main

_ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class EmuPool:
    """Group processes and hot standbys (see the module docstring).

    Parameters
    ----------
    N : int
        Groups.
    task : MLPTask
        The learning problem the workers compute.
    standby : int
        Standby processes kept ready beyond the groups' own.
    startup_timeout_s : float
        Deadline for the first N + standby processes and for any single assignment.
    """

    def __init__(self, N: int, task: MLPTask, standby: int, startup_timeout_s: float) -> None:
        self.N = N
        self.task_kwargs = asdict(task)
        self.target = standby
        self.startup_timeout_s = startup_timeout_s
        self.procs: list[Any] = [None] * N
        self.conns: list[Any] = [None] * N
        self.pids: list[int] = []
        self.assign_s: list[float] = []
        self._ready: collections.deque = collections.deque()
        self._all: list[Any] = []
        self._cv = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.ctx = mp.get_context("forkserver")

    # ------------------------------------------------------------------ start-up
    def start(self) -> None:
        """Start the forkserver and the refill thread; wait for N + standby processes."""
        self.ctx.set_forkserver_preload(["spare_lib.runtime.worker"])
        saved = {k: os.environ.get(k) for k in _ONE_THREAD}
        try:
            for k in _ONE_THREAD:
                os.environ[k] = "1"  # the forkserver and its children: one BLAS thread each
            with _without_main_reimport():
                forkserver.ensure_running()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        first = self.N + self.target
        self._thread = threading.Thread(target=self._refill, args=(first,), daemon=True,
                                        name="spare-standby")
        self._thread.start()
        deadline = time.monotonic() + self.startup_timeout_s
        with self._cv:
            while len(self._ready) < first and self._error is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"{first} standby workers did not start within "
                                       f"startup_timeout_s={self.startup_timeout_s} s")
                self._cv.wait(left)
        if self._error is not None:
            raise RuntimeError("starting standby workers failed") from self._error

    def _spawn_one(self) -> None:
        parent, child = self.ctx.Pipe(duplex=True)
        p = self.ctx.Process(target=standby_main, args=(self.task_kwargs, child),
                             name="spare-standby", daemon=True)
        with _without_main_reimport():  # the child needs the worker module, not __main__
            p.start()
        child.close()
        with self._cv:
            self._all.append(p)
            self.pids.append(p.pid)
        # ready only once it is warm and waiting (its start-up must not overlap training)
        if not parent.poll(self.startup_timeout_s):
            raise RuntimeError(f"a standby worker did not start within startup_timeout_s="
                               f"{self.startup_timeout_s} s")
        msg = parent.recv()
        if msg[0] != "standby":
            raise WorkerProtocolError(f"standby worker: expected a standby message, got {msg!r}")
        with self._cv:
            self._ready.append((p, parent))
            self._cv.notify_all()

    def _refill(self, first: int) -> None:
        want = first
        try:
            while True:
                with self._cv:
                    while not self._closing and len(self._ready) >= want:
                        self._cv.wait()
                    if self._closing:
                        return
                self._spawn_one()
                want = max(self.target, 1) if len(self._ready) >= first else want
        except BaseException as exc:  # noqa: BLE001 - reported to the coordinator
            with self._cv:
                self._error = exc
                self._cv.notify_all()

    # ------------------------------------------------------------------ groups
    def alive(self, w: int) -> bool:
        """Group w has a process the coordinator has not retired."""
        return self.conns[w] is not None

    def assign(self, w: int, held: tuple[int, ...]) -> int:
        """Give group w a standby process hosting ``held``; returns its pid."""
        t0 = time.monotonic()
        deadline = t0 + self.startup_timeout_s
        while True:
            with self._cv:
                while not self._ready and self._error is None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise RuntimeError(f"no standby worker within startup_timeout_s="
                                           f"{self.startup_timeout_s} s")
                    self._cv.notify_all()
                    self._cv.wait(left)
                if self._error is not None:
                    raise RuntimeError("starting standby workers failed") from self._error
                p, conn = self._ready.popleft()
                self._cv.notify_all()  # the refill thread tops the standbys up
            try:
                conn.send(("assign", int(w), tuple(int(t) for t in held)))
                if not conn.poll(max(0.0, deadline - time.monotonic())):
                    raise RuntimeError(f"standby for group {w} did not answer within "
                                       f"startup_timeout_s={self.startup_timeout_s} s")
                msg = conn.recv()
            except (EOFError, OSError):
                conn.close()
                self._reap(p)
                continue  # that standby died (it is never armed: only the OS kills it)
            if msg[0] != "ready" or msg[1] != w:
                raise WorkerProtocolError(f"group {w}: expected a ready message, got {msg!r}")
            self.procs[w], self.conns[w] = p, conn
            self.assign_s.append(time.monotonic() - t0)
            return int(p.pid)

    def retire(self, w: int) -> None:
        """Forget group w's process: close its pipe and SIGKILL it (if it still runs).

        Not joined here: a forkserver child's exit status comes through the forkserver, which
        on a loaded box can take tens of ms to answer; :meth:`close` reaps every process.
        """
        p, c = self.procs[w], self.conns[w]
        self.procs[w] = self.conns[w] = None
        if c is not None:
            c.close()
        if p is not None and p.pid is not None:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    @staticmethod
    def _reap(p: Any) -> None:
        if p.exitcode is None:
            p.join(0.2)
        if p.exitcode is None:
            p.kill()
            p.join(5.0)

    # ------------------------------------------------------------------ shutdown
    def close(self) -> None:
        """Kill and reap every process started (groups and standbys); stop the forkserver."""
        with self._cv:
            self._closing = True
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(10.0)
        for w in range(self.N):
            if self.conns[w] is not None:
                self.conns[w].close()
            self.procs[w] = self.conns[w] = None
        while self._ready:
            _p, c = self._ready.popleft()
            c.close()
        for p in self._all:
            if p.exitcode is None:
                p.kill()
        for p in self._all:
            p.join(5.0)
        stop = getattr(forkserver._forkserver, "_stop", None)  # private; present in 3.9-3.13
        if stop is not None:
            stop()
