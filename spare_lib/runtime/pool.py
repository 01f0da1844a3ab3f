"""The worker pool of the real-process runtime: N spawned worker processes, their pipes, and the
protocol errors. The coordinator (:mod:`spare_lib.runtime.coordinator`) drives it.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from multiprocessing.connection import wait as mp_wait
from typing import Any

from spare_lib.runtime.injector import send_fault
from spare_lib.runtime.model import MLPTask
from spare_lib.runtime.worker import worker_main
from spare_lib.stacking.layout import Layout


class WorkerProtocolError(RuntimeError):
    """A worker answered with something the protocol does not allow (a bug, not a failure)."""


@contextmanager
def _without_main_reimport() -> Iterator[None]:
    """Hide ``__main__``'s file from ``spawn`` while starting workers.

    ``spawn`` re-runs the parent's main script in every child (under pytest that imports pytest,
    ~0.3 s of CPU per worker). The worker's entry point lives in this library, so the child does
    not need ``__main__``; hiding it during the synchronous ``Process.start`` keeps start-up at
    "python + numpy".
    """
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main and k in main.__dict__}
    try:
        if main is not None:
            main.__dict__.pop("__file__", None)
            main.__dict__["__spec__"] = None
        yield
    finally:
        if main is not None:
            main.__dict__.pop("__spec__", None)
            main.__dict__.update(saved)


class _Pool:
    """The N worker processes, their pipes and liveness (as the coordinator knows it)."""

    def __init__(self, layout: Layout, task: MLPTask, shard_delay_s: float,
                 startup_timeout_s: float, timeout_s: float) -> None:
        self.ctx = mp.get_context("spawn")
        self.layout = layout
        self.task_kwargs = asdict(task)
        self.shard_delay_s = shard_delay_s
        self.startup_timeout_s = startup_timeout_s
        self.timeout_s = timeout_s
        N = layout.N
        self.procs: list[Any] = [None] * N
        self.conns: list[Any] = [None] * N
        self.pids: list[int] = []

    def alive(self, w: int) -> bool:
        return self.conns[w] is not None

    def live(self) -> list[int]:
        return [w for w in range(self.layout.N) if self.conns[w] is not None]

    def start(self, workers: list[int]) -> None:
        """Spawn ``workers`` and wait (with a timeout) for each one's ready handshake."""
        pending = {}
        for w in workers:
            parent, child = self.ctx.Pipe(duplex=True)
            held = tuple(int(t) for t in self.layout.stacks[w])
            p = self.ctx.Process(target=worker_main, name=f"spare-worker-{w}", daemon=True,
                                 args=(w, held, self.task_kwargs, self.shard_delay_s, child))
            with _without_main_reimport():
                p.start()
            child.close()  # only the worker holds this end: its death gives us EOF
            self.procs[w], self.conns[w] = p, parent
            self.pids.append(p.pid)
            pending[parent] = w
        deadline = time.monotonic() + self.startup_timeout_s
        while pending:
            remaining = deadline - time.monotonic()
            ready = mp_wait(list(pending), timeout=max(0.0, remaining)) if remaining > 0 else []
            if not ready:
                raise RuntimeError(f"workers {sorted(pending.values())} did not start within "
                                   f"startup_timeout_s={self.startup_timeout_s} s")
            for c in ready:
                w = pending.pop(c)
                try:
                    msg = c.recv()
                except (EOFError, OSError):
                    raise RuntimeError(f"worker {w} died during start-up") from None
                if msg[0] != "ready" or msg[1] != w:
                    raise WorkerProtocolError(f"worker {w}: expected a ready message, got {msg!r}")

    def retire(self, w: int, join_timeout_s: float = 10.0) -> None:
        """Forget worker w as live; make sure its process is gone (kill if needed) and reaped."""
        p, c = self.procs[w], self.conns[w]
        self.conns[w] = None
        if c is not None:
            c.close()
        if p is not None:
            p.join(0.5)
            if p.exitcode is None:
                send_fault(p, "kill", join_timeout_s)
            if p.exitcode is None:  # pragma: no cover - SIGKILL + join should never fail
                p.join(join_timeout_s)
            if p.exitcode is not None:
                p.close()
        self.procs[w] = None

    def stop_all(self) -> None:
        """Ask live workers to exit, then kill and reap whatever is left (never hangs)."""
        for w in self.live():
            try:
                self.conns[w].send(("stop",))
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 0.5  # then SIGKILL: shutting down must not hang
        for w in range(self.layout.N):
            p = self.procs[w]
            if p is not None:
                p.join(max(0.0, deadline - time.monotonic()))
            self.retire(w)

    def kill_all(self) -> None:
        """Kill and reap every worker (global restart)."""
        for w in range(self.layout.N):
            if self.procs[w] is not None:
                send_fault(self.procs[w], "kill")
            self.retire(w)
