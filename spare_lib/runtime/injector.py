"""Failure injection: which worker dies when, and the signal that kills it.

A failure kills a whole group (SPEC §3). Here a group is a real worker process and a failure is a
real signal: ``SIGKILL`` (the process vanishes; the coordinator sees EOF on its pipe) or
``SIGSTOP`` (the process hangs; the coordinator sees a timeout, then kills it for good).

*When* is given in protocol phases of one training step (SPEC §4):

==================  =====================================================================
phase               the signal is sent ...
==================  =====================================================================
``before_compute``  before the step's compute requests go out (noticed at the first stack)
``compute``         right after the compute requests went out (the worker is mid-compute)
``partial``         as soon as the coordinator received the worker's first gradient of the
                    attempt (with S ≥ 2 the worker dies between two stack entries)
``allreduce``       after all gradients arrived, before the all-reduce (its work is lost)
``patch``           right after the patch-compute requests of a retry went out (SPARe only;
                    the "drop" mode, which has no retries, applies it at its all-reduce)
==================  =====================================================================

Two injectors: :class:`ScheduleInjector` (an explicit list of ``(step, phase, worker)``, each
event fires once, the first time the run reaches that step and phase: a step redone after a
rollback does not fire it again) and :class:`WeibullInjector` (one renewal clock per group,
Weibull shape k = 0.78, never reset, in units of executed steps; SPEC §3).

Example
-------
>>> inj = ScheduleInjector([(3, "compute", 1), (3, "partial", 4)])
>>> inj.validate(N=6, n_steps=10)
>>> [e.worker for e in inj.due(step=3, tick=3, phase="compute")]
[1]
"""

from __future__ import annotations

import math
import os
import signal as _signal
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from spare_lib._util.rng import SeedLike, as_seed_sequence

PHASES: tuple[str, ...] = ("before_compute", "compute", "partial", "allreduce", "patch")
SIGNALS: tuple[str, ...] = ("kill", "stop")

#: Position of each phase inside one executed step, in step units (Weibull clocks).
PHASE_TIME: dict[str, float] = {"before_compute": 0.0, "compute": 0.2, "partial": 0.4,
                                 "allreduce": 0.6, "patch": 0.8}


@dataclass(frozen=True)
class KillEvent:
    """One injected failure.

    Attributes
    ----------
    step : int
        Training step index (0-based) at which it fires.
    phase : str
        One of :data:`PHASES`.
    worker : int
        Group id w in [0, N−1].
    signal : str
        ``"kill"`` (SIGKILL, detected by EOF) or ``"stop"`` (SIGSTOP, detected by timeout).
    """

    step: int
    phase: str
    worker: int
    signal: str = "kill"

    def __post_init__(self) -> None:
        for name in ("step", "worker"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name} of a kill event must be an integer in [0, inf), "
                                 f"got {v!r}")
        if self.phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, got {self.phase!r}")
        if self.signal not in SIGNALS:
            raise ValueError(f"signal must be one of {SIGNALS}, got {self.signal!r}")


class Injector:
    """Base class: decides which workers get a signal at a (step, tick, phase) of a run.

    ``tick`` counts executed steps including redone ones (it never goes back); ``step`` is the
    step index (it goes back after a rollback to a checkpoint).
    """

    def validate(self, N: int, n_steps: int) -> None:
        """Check the injector against the run size; raise ``ValueError`` before any process starts."""

    def due(self, step: int, tick: int, phase: str) -> list[KillEvent]:
        """Events firing now (each returned once)."""
        return []

    def fresh(self) -> Injector:
        """An unfired copy (same schedule / same seed), so several runs see the same failures."""
        return self


class ScheduleInjector(Injector):
    """An explicit failure schedule: a list of :class:`KillEvent` or ``(step, phase, worker[,
    signal])`` tuples. Each event fires once."""

    def __init__(self, events: Iterable[KillEvent | tuple]) -> None:
        evs = []
        for e in events:
            if isinstance(e, KillEvent):
                evs.append(e)
            elif isinstance(e, (tuple, list)) and len(e) in (3, 4):
                evs.append(KillEvent(*e))
            else:
                raise ValueError("kills must be KillEvent objects or (step, phase, worker[, "
                                 f"signal]) tuples, got {e!r}")
        self.events: tuple[KillEvent, ...] = tuple(evs)
        self._fired = [False] * len(evs)

    def validate(self, N: int, n_steps: int) -> None:
        for e in self.events:
            if e.worker >= N:
                raise ValueError(f"worker of kill event {e} must be in [0, N-1] = [0, {N - 1}], "
                                 f"got {e.worker}")
            if e.step >= n_steps:
                raise ValueError(f"step of kill event {e} must be in [0, n_steps-1] = "
                                 f"[0, {n_steps - 1}], got {e.step}")

    def due(self, step: int, tick: int, phase: str) -> list[KillEvent]:
        out = []
        for i, e in enumerate(self.events):
            if not self._fired[i] and e.step == step and e.phase == phase:
                self._fired[i] = True
                out.append(e)
        return out

    def fresh(self) -> ScheduleInjector:
        return ScheduleInjector(self.events)

    def __repr__(self) -> str:
        return f"ScheduleInjector({len(self.events)} events)"


class WeibullInjector(Injector):
    """Per-group Weibull renewal clocks in units of executed steps (SPEC §3).

    Parameters
    ----------
    system_mtbf_steps : float
        System MTBF m in steps: the per-group mean time to failure is N·m, the Weibull scale
        N·m / Γ(1 + 1/k).
    shape : float
        Weibull shape k (0.78 in the paper; 1 gives exponential clocks).
    seed : int, SeedSequence or Generator
        Seeds the clocks (group w uses child w of the seed sequence).
    phases : sequence of str
        Phases at which clocks are read; a clock that expired since the last reading fires at
        the next one (a clock expiring inside a step fires at the next phase the run reaches).

    Clocks are never reset; a clock that fires for a worker already dead is rolled forward
    (the event is returned, the coordinator records it as skipped).
    """

    def __init__(self, system_mtbf_steps: float, shape: float = 0.78, seed: SeedLike = 0,
                 phases: Iterable[str] = ("compute", "partial", "allreduce")) -> None:
        if not (math.isfinite(float(system_mtbf_steps)) and system_mtbf_steps > 0):
            raise ValueError("system_mtbf_steps must be finite and in (0, inf), "
                             f"got {system_mtbf_steps!r}")
        if not (math.isfinite(float(shape)) and shape > 0):
            raise ValueError(f"shape must be finite and in (0, inf), got {shape!r}")
        self.phases = tuple(phases)
        for p in self.phases:
            if p not in PHASES:
                raise ValueError(f"phases must be a subset of {PHASES}, got {p!r}")
        if not self.phases:
            raise ValueError("phases must name at least one phase, got an empty sequence")
        self.system_mtbf_steps = float(system_mtbf_steps)
        self.shape = float(shape)
        self.seed = as_seed_sequence(seed)
        self._N: int | None = None
        self._next: np.ndarray | None = None
        self._rngs: list[np.random.Generator] = []

    def validate(self, N: int, n_steps: int) -> None:
        self._N = int(N)
        scale = N * self.system_mtbf_steps / math.gamma(1.0 + 1.0 / self.shape)
        self._scale = scale
        ss = self.seed  # children built explicitly: fresh() copies draw the same clocks
        self._rngs = [np.random.default_rng(np.random.SeedSequence(
            ss.entropy, spawn_key=(*ss.spawn_key, w))) for w in range(N)]
        self._next = np.array([scale * g.weibull(self.shape) for g in self._rngs])

    def due(self, step: int, tick: int, phase: str) -> list[KillEvent]:
        if self._next is None:
            raise RuntimeError("WeibullInjector.validate(N, n_steps) must be called first")
        if phase not in self.phases:
            return []
        now = tick + PHASE_TIME[phase]
        out = []
        for w in np.flatnonzero(self._next <= now):
            out.append(KillEvent(int(step), phase, int(w)))
            while self._next[w] <= now:  # renewal; a second expiry before now is rolled forward
                self._next[w] += self._scale * self._rngs[w].weibull(self.shape)
        return out

    def fresh(self) -> WeibullInjector:
        return WeibullInjector(self.system_mtbf_steps, self.shape, self.seed, self.phases)

    def __repr__(self) -> str:
        return (f"WeibullInjector(system_mtbf_steps={self.system_mtbf_steps}, "
                f"shape={self.shape}, seed={self.seed.entropy})")


def as_injector(kills: Injector | Iterable[KillEvent | tuple] | None) -> Injector:
    """Turn ``None``, a list of events/tuples or an :class:`Injector` into a fresh injector."""
    if kills is None:
        return Injector()
    if isinstance(kills, Injector):
        return kills.fresh()
    return ScheduleInjector(kills)


def send_fault(process, signal: str = "kill", join_timeout_s: float = 10.0) -> None:  # noqa: ANN001
    """Deliver a failure to a worker process.

    ``"kill"`` sends SIGKILL and reaps the process (``join`` with a timeout), so the failure has
    happened before the coordinator continues; ``"stop"`` sends SIGSTOP (the process hangs and
    keeps its pipe open: only a timeout can detect it).
    """
    pid = process.pid
    if pid is None or process.exitcode is not None:
        return
    try:
        os.kill(pid, _signal.SIGKILL if signal == "kill" else _signal.SIGSTOP)
    except ProcessLookupError:
        return
    if signal == "kill":
        process.join(join_timeout_s)
