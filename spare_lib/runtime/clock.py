"""Failure clocks on a time axis, and the thread that SIGKILLs workers when they run out (issue 28).

The scaled-clock emulation (:mod:`.emulation`) needs failures in *model seconds*, with the
simulator's renewal rule (``spare_lib.cluster.core``, SPEC §3): group w's next failure time
``nf[w]`` is absolute; when a failure is noticed at time t, the next one is
:meth:`FailureClock.renew` (w, t). Two clocks:

:class:`TraceClock`
    A replayed trace of rows ``(time_s, group)``: the next failure after a renewal at t is the
    group's first trace time > t, so failures while a group is down are absorbed (the rule of
    ``simulate(failure_trace=...)``). The same trace drives emulation and simulator.
:class:`WeibullClock`
    :class:`~spare_lib.runtime.injector.WeibullInjector`'s law on the time axis: per-group
    Weibull(k) gaps of mean N·m, renewed from the notice time (the simulator's own clocks),
    group w drawing from child w of the seed (as the injector does).

:func:`weibull_trace` draws a trace from the same law (renewal from each failure), long enough
to replay. :class:`Killer` is a thread of the coordinator process: it sleeps until the earliest
armed group's failure time and sends SIGKILL to that group's current process. Nothing else
tells the coordinator: it finds out by EOF on the pipe.

Example
-------
>>> tr = weibull_trace(4, system_mtbf_s=100.0, shape=0.78, horizon_s=2000.0, seed=1)
>>> clk = TraceClock(tr, 4)
>>> t = clk.renew(0, -1.0); bool(t == tr[tr[:, 1] == 0, 0].min())
True
"""

from __future__ import annotations

import heapq
import math
import os
import signal
import threading
import time

import numpy as np

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive


def _group_rng(seed: np.random.SeedSequence, w: int) -> np.random.Generator:
    """Generator of group w: child w of ``seed`` (WeibullInjector's scheme)."""
    return np.random.default_rng(np.random.SeedSequence(seed.entropy,
                                                        spawn_key=(*seed.spawn_key, int(w))))


class FailureClock:
    """Per-group failure clocks in model seconds (base class)."""

    N: int

    def renew(self, w: int, t: float) -> float:
        """Next failure time of group w after a renewal at time t (inf: never)."""
        raise NotImplementedError

    def roll_forward(self, w: int, nf: float, until: float) -> float:
        """``while nf < until: nf = renew(w, nf)``: a dead group's overdue clock brought to
        ``until`` renewal by renewal (the simulator's rule at a restart and at a rejoin)."""
        while nf < until:
            nf = self.renew(w, nf)
        return nf


class TraceClock(FailureClock):
    """A replayed failure trace (rows ``(time_s, group)``), the simulator's replay rule.

    Parameters
    ----------
    trace : array of shape (n, 2)
        Failure times in model seconds (finite, ≥ 0) and groups in [0, N−1].
    N : int
        Groups.
    """

    def __init__(self, trace: object, N: int) -> None:
        self.N = check_int("N", N, lo=1)
        arr = np.asarray(trace, dtype=np.float64)
        if arr.size == 0:
            arr = arr.reshape(0, 2)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"trace must have shape (n, 2) of (time_s, group), got shape "
                             f"{arr.shape}")
        times, groups = arr[:, 0], arr[:, 1]
        if not np.all(np.isfinite(times)) or np.any(times < 0):
            raise ValueError("trace times must be finite and in [0, inf)")
        if np.any(groups != np.round(groups)) or np.any(groups < 0) or np.any(groups >= N):
            raise ValueError(f"trace groups must be integers in [0, N-1] = [0, {N - 1}]")
        g = groups.astype(np.int64)
        self.times = [np.sort(times[g == w]) for w in range(N)]
        self.trace = arr.copy()

    def renew(self, w: int, t: float) -> float:
        ts = self.times[w]
        i = int(np.searchsorted(ts, t, side="right"))
        return float(ts[i]) if i < ts.size else math.inf

    @property
    def end_s(self) -> float:
        """Last failure time of the trace (0 if empty)."""
        return float(self.trace[:, 0].max()) if self.trace.size else 0.0


class WeibullClock(FailureClock):
    """Weibull(k) renewal clocks of mean N·m per group, renewed at the notice time.

    Parameters
    ----------
    N : int
        Groups.
    system_mtbf_s : float
        System MTBF m (model seconds); the per-group mean is N·m, the scale N·m/Γ(1 + 1/k).
    shape : float
        Weibull shape k (0.78 in the paper).
    seed : int, SeedSequence or Generator
        Group w draws from child w of the seed sequence.
    """

    def __init__(self, N: int, system_mtbf_s: float, shape: float = 0.78,
                 seed: SeedLike = 0) -> None:
        self.N = check_int("N", N, lo=1)
        self.system_mtbf_s = check_positive("system_mtbf_s", system_mtbf_s)
        self.shape = check_positive("shape", shape)
        self.scale = self.N * self.system_mtbf_s / math.gamma(1.0 + 1.0 / self.shape)
        ss = as_seed_sequence(seed)
        self._rngs = [_group_rng(ss, w) for w in range(self.N)]

    def renew(self, w: int, t: float) -> float:
        return float(t + self.scale * self._rngs[w].weibull(self.shape))


def weibull_trace(N: int, system_mtbf_s: float, shape: float, horizon_s: float,
                  seed: SeedLike = 0) -> np.ndarray:
    """A failure trace of WeibullInjector's law: per-group Weibull(k) renewals of mean N·m.

    Parameters
    ----------
    N : int
        Groups.
    system_mtbf_s : float
        System MTBF m in (model) seconds.
    shape : float
        Weibull shape k.
    horizon_s : float
        Last time covered (a replayed run must end before it).
    seed : int, SeedSequence or Generator
        Group w draws from child w (the trace does not depend on N's other groups).

    Returns
    -------
    ndarray, shape (n, 2)
        Rows (time_s, group), sorted by time.
    """
    check_positive("horizon_s", horizon_s)
    clk = WeibullClock(N, system_mtbf_s, shape, seed)
    rows: list[tuple[float, int]] = []
    for w in range(clk.N):
        t = clk.renew(w, 0.0)
        while t <= horizon_s:
            rows.append((t, w))
            t = clk.renew(w, t)
    arr = np.array(rows, dtype=np.float64).reshape(-1, 2)
    return arr[np.argsort(arr[:, 0], kind="stable")]


class Killer(threading.Thread):
    """SIGKILLs group w's current process when its clock runs out (a daemon thread).

    Times are wall-clock (``time.monotonic``); the coordinator converts model seconds with its
    scale. :meth:`arm` gives group w a process and a failure time; a group fires at most once
    per arming (then it is disarmed until the coordinator arms it again). Every firing is
    recorded in :attr:`fired` as ``(wall_time, group, pid, due_wall)``.

    For the model's semantics (``overrun='pause'`` of the emulation) the coordinator can
    :meth:`hold` the killer at the end of the phase it is in (no kill due later fires while the
    coordinator is behind that phase end) and :meth:`shift` every pending due time when it
    stops the model clock to catch up.
    """

    def __init__(self) -> None:
        super().__init__(name="spare-killer", daemon=True)
        self._cv = threading.Condition()
        self._heap: list[tuple[float, int, int]] = []
        self._gen: dict[int, int] = {}
        self._pid: dict[int, int] = {}
        self._stopping = False
        self._cap = math.inf
        self.fired: list[tuple[float, int, int, float]] = []

    def arm(self, w: int, pid: int, due_wall: float) -> None:
        """Kill process ``pid`` (group w) at wall time ``due_wall`` (inf: never)."""
        with self._cv:
            g = self._gen.get(w, 0) + 1
            self._gen[w] = g
            self._pid[w] = pid
            if math.isfinite(due_wall):
                heapq.heappush(self._heap, (due_wall, w, g))
            self._cv.notify()

    def disarm(self, w: int) -> None:
        """Group w will not be killed (its process is gone or being replaced)."""
        with self._cv:
            self._gen[w] = self._gen.get(w, 0) + 1
            self._pid.pop(w, None)

    def hold(self, cap_wall: float) -> None:
        """Fire no kill due after wall time ``cap_wall`` until the cap moves (inf: no cap)."""
        with self._cv:
            self._cap = float(cap_wall)
            self._cv.notify()

    def shift(self, delta_wall: float) -> None:
        """Move every pending due time (and the cap) ``delta_wall`` seconds later: the model
        clock stood still that long."""
        with self._cv:
            self._heap = [(d + delta_wall, w, g) for d, w, g in self._heap]
            heapq.heapify(self._heap)
            self._cap += delta_wall
            self._cv.notify()

    def stop(self) -> None:
        """End the thread (idempotent) and wait for it."""
        with self._cv:
            self._stopping = True
            self._cv.notify()
        if self.is_alive():
            self.join(5.0)

    def run(self) -> None:
        with self._cv:
            while not self._stopping:
                while self._heap and self._heap[0][2] != self._gen.get(self._heap[0][1]):
                    heapq.heappop(self._heap)  # stale arming
                if not self._heap:
                    self._cv.wait()
                    continue
                due, w, _g = self._heap[0]
                if due > self._cap:  # held: the coordinator is behind the phase end
                    self._cv.wait()
                    continue
                now = time.monotonic()
                if due > now:
                    self._cv.wait(due - now)
                    continue
                heapq.heappop(self._heap)
                pid = self._pid.pop(w)
                self._gen[w] += 1
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.fired.append((time.monotonic(), w, pid, due))
