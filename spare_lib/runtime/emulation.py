"""Scaled-clock emulation: the simulator's protocol with real processes, killed for real (issue 28).

:func:`emulate` runs one training run of SPARe+CKPT, Rep+CKPT, CKPT-only, SPARe+repair or
elastic-drop on N real worker processes, with every duration of the simulator's model divided
by one factor ``scale`` (1,000: 64 s of compute per stack → 64 ms). Workers compute their
stacks for real (the MLP of :mod:`.model`) and wait out the scaled compute time with the
simulator's jitter (one N(1, σ²) factor per unit, clipped at ``jitter_min``; Rep: one unit of
r·64 s). Failures are SIGKILLs on the scaled clock, from a replayed trace (the same one
``simulate(failure_trace=...)`` replays) or from WeibullInjector's law (:mod:`.clock`);
detection is by EOF (or a timeout). The protocol is in :mod:`.emu_protocol`.

The durations come from an :class:`EmulationSpec` (the runtime does not import
``spare_lib.cluster``; :func:`spare_lib.livecheck.emulation_spec` builds one from a
``ClusterConfig``). Results, like the simulator's, are in model seconds; the event log is a
pandas table (:data:`EVENT_COLUMNS`).

:class:`EmuSemantics` chooses three instants where the simulator and a real coordinator
differ: when a failure in an attempt is noticed (the model's poll, or its EOF), when a failure
inside a restart window restarts it (at the failure, or at its detection), and whether the
coordinator's own overruns are model time (slips) or not (a paused clock).
:data:`SEMANTICS` names the two ends: ``"model"`` (the simulator's semantics: the emulation
then replays the model event for event) and ``"real"`` (what this coordinator does).

Example
-------
>>> spec = EmulationSpec(steps=20, compute_per_stack_s=64.0, allreduce_s=6.0,
...                      restart_s=300.0, stall_s=5.0, checkpoint_s=10.0, scale=2000.0)
>>> run = emulate("spare", 8, 3, 5, spec, trace=[(500.0, 2), (900.0, 5)])   # doctest: +SKIP
>>> run.failures_noticed, run.full_restarts                                 # doctest: +SKIP
(2, 0)
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive
from spare_lib.runtime.clock import FailureClock, TraceClock
from spare_lib.runtime.model import MLPTask
from spare_lib.stacking.layout import Layout, make_layout

#: Methods the emulation runs (names of ``spare_lib.cluster.simulate``).
EMU_METHODS: tuple[str, ...] = ("spare", "rep", "ckpt", "spare+repair", "elastic-drop")

#: Columns of :attr:`EmulationRun.events`: wall time since the start (s), model time (s), the
#: event kind, committed steps so far, attempt of the step, group (−1: none), a number and a
#: label (their meaning per kind in :func:`emulate`).
EVENT_COLUMNS: tuple[str, ...] = ("wall_s", "t_s", "kind", "step", "attempt", "group", "value",
                                  "info")


#: Values of the three :class:`EmuSemantics` knobs.
NOTICE_AT, WINDOW_FROM, OVERRUN = ("poll", "detect"), ("failure", "detect"), ("pause", "slip")


@dataclass(frozen=True)
class EmuSemantics:
    """Where the emulation follows the simulator and where a real coordinator (issue 28).

    Attributes
    ----------
    notice_at : {"poll", "detect"}
        A failure noticed in an attempt is noticed (group clock renewed, rejoin time started)
        at the model's poll that notices it (the first of its group's unit starts after it,
        else the barrier: ``spare_lib.cluster`` today) or when the coordinator reads its EOF.
        The barrier then waits for the dead group up to that instant.
    window_from : {"failure", "detect"}
        A failure inside a group's restart window restarts the window of T_r at the failure
        (the simulator) or at its detection.
    overrun : {"pause", "slip"}
        When the coordinator's real work (late answers, detection, hand-over of a process,
        disk) overruns a phase: ``"slip"``, the schedule slips (real time is model time), or
        ``"pause"``, the model clock stops: the failure killer is held at the end of the phase
        the coordinator is in, every failure due by then is seen before the phase ends, and
        the clock resumes when the coordinator has caught up (the simulator: coordination
        and detection take no time).
    """

    notice_at: str = "detect"
    window_from: str = "detect"
    overrun: str = "slip"

    def __post_init__(self) -> None:
        for name, allowed in (("notice_at", NOTICE_AT), ("window_from", WINDOW_FROM),
                              ("overrun", OVERRUN)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")

    @property
    def label(self) -> str:
        """``"model"``, ``"real"`` or the three values joined by "/"."""
        for name, sem in SEMANTICS.items():
            if sem == self:
                return name
        return f"{self.notice_at}/{self.window_from}/{self.overrun}"


#: The two ends: the simulator's semantics, and what a real coordinator does.
SEMANTICS: dict[str, EmuSemantics] = {
    "model": EmuSemantics("poll", "failure", "pause"),
    "real": EmuSemantics("detect", "detect", "slip"),
}


def as_semantics(semantics: EmuSemantics | str) -> EmuSemantics:
    """An :class:`EmuSemantics` from itself or a name of :data:`SEMANTICS`."""
    if isinstance(semantics, EmuSemantics):
        return semantics
    if isinstance(semantics, str) and semantics in SEMANTICS:
        return SEMANTICS[semantics]
    raise ValueError(f"semantics must be an EmuSemantics or one of {tuple(SEMANTICS)}, got "
                     f"{semantics!r}")


@dataclass(frozen=True)
class EmulationSpec:
    """Durations of the simulator's model (model seconds) and the clock's scale.

    Attributes
    ----------
    steps : int
        Steps' worth of samples to commit.
    compute_per_stack_s, allreduce_s, restart_s, stall_s, checkpoint_s : float
        64 s per stack, T_a, T_r, the stall per reconfiguration, T_s (as ``ClusterConfig``).
    jitter_sigma, jitter_min : float
        σ and the lower clip of the per-unit jitter factor N(1, σ²).
    allreduce_fail_factor : float
        Factor on T_a in an attempt with noticed failures.
    rejoin_s : float
        SPARe+repair and elastic-drop: a failed group rejoins this long after it was noticed.
    rejoin_stall_s : float or None
        Stall of one rejoin batch (None: ``stall_s``).
    scale : float
        Model seconds per wall second (every duration is divided by it).
    """

    steps: int
    compute_per_stack_s: float
    allreduce_s: float
    restart_s: float
    stall_s: float
    checkpoint_s: float
    jitter_sigma: float = 0.05
    jitter_min: float = 0.1
    allreduce_fail_factor: float = 0.5
    rejoin_s: float = math.inf
    rejoin_stall_s: float | None = None
    scale: float = 1000.0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, lo=1)
        check_positive("compute_per_stack_s", self.compute_per_stack_s)
        for name in ("allreduce_s", "restart_s", "stall_s", "checkpoint_s", "jitter_sigma"):
            check_positive(name, getattr(self, name), allow_zero=True)
        check_positive("jitter_min", self.jitter_min)
        if not 0.0 <= self.allreduce_fail_factor <= 1.0:
            raise ValueError(f"allreduce_fail_factor must be in [0, 1], got "
                             f"{self.allreduce_fail_factor!r}")
        if not (isinstance(self.rejoin_s, (int, float)) and self.rejoin_s > 0):
            raise ValueError(f"rejoin_s must be in (0, inf], got {self.rejoin_s!r}")
        if self.rejoin_stall_s is not None:
            check_positive("rejoin_stall_s", self.rejoin_stall_s, allow_zero=True)
        check_positive("scale", self.scale)

    def t0_s(self) -> float:
        """T0 = steps · (compute per stack + T_a), model seconds."""
        return self.steps * (self.compute_per_stack_s + self.allreduce_s)


@dataclass
class EmulationRun:
    """Outcome of :func:`emulate`: the simulator's aggregates (model seconds) and the log.

    Attributes
    ----------
    method, N, r, ckpt_steps, steps, scale : the run's inputs.
    semantics : str
        The :class:`EmuSemantics` label.
    total_s, t0_s, ttt_over_t0, availability : float
        Model time to the end, T0, their ratio, and (total − restart − stall) / total.
    restart_s, stall_s, checkpoint_s : float
        Measured model time in global restarts, stalls (failures and rejoin batches) and
        checkpoint writes.
    overhead : float
        S̄: mean stack depth over the commits (r for Rep, 1 for CKPT-only and elastic-drop).
    full_restarts, failures_noticed, masked_failures, commits, attempts, rejoins : int
        As ``SimResult`` (failures inside restart windows are not counted).
    steps_redone, checkpoints_written, checkpoint_failures : int
        As ``SimResult``.
    phase0_events, reorder_events : int
        SPARe's failure events settled by RECTLR phase 0 and by a reorder with retry.
    timed_units, real_shards : int
        Compute units waited out (the simulator's count) and shard gradients really computed.
    boundary_notices : int
        Failures flagged in an attempt although their SIGKILL came after its barrier (the
        coordinator was still processing late answers): the model notices them one attempt
        later. Each is a ``boundary`` event (value: kill time − barrier, model s).
    deferred_late : int
        Groups that answered, then were killed after the scheduled barrier but seen dead only
        at the (late) barrier poll: deferred to the next attempt's first poll, as the model
        notices them (``deferred`` events).
    failures_between_restarts : tuple of int
        Failures noticed between consecutive restarts.
    completed : bool
        False when ``max_wall_s`` stopped the run.
    theta : ndarray
        Final parameters.
    events : DataFrame
        The event log (:data:`EVENT_COLUMNS`), kills included.
    noise : dict of ndarray
        Wall-clock measurements (s): ``barrier_s`` (last answer processed − slowest deadline,
        per attempt), ``worker_late_s`` (a worker's send − its deadline), ``pipe_s`` (receive −
        send), ``detect_s`` (EOF read − SIGKILL, for failures seen while the coordinator
        waits on the pipes: in an attempt and in restart windows), ``kill_late_s`` (SIGKILL −
        due time), ``assign_s`` (giving a group a standby process), ``slip_s`` (overruns that
        became model time) and ``pause_s`` (overruns the paused model clock left out).
    pids : list of int
        Every process started (orphan checks).
    wall_s : float
        Wall-clock duration of the run (set-up included).
    """

    method: str
    N: int
    r: int
    ckpt_steps: int | None
    steps: int
    scale: float
    semantics: str
    total_s: float
    t0_s: float
    ttt_over_t0: float
    availability: float
    restart_s: float
    stall_s: float
    checkpoint_s: float
    overhead: float
    full_restarts: int
    failures_noticed: int
    masked_failures: int
    commits: int
    attempts: int
    rejoins: int
    steps_redone: int
    checkpoints_written: int
    checkpoint_failures: int
    phase0_events: int
    reorder_events: int
    timed_units: int
    real_shards: int
    boundary_notices: int
    deferred_late: int
    failures_between_restarts: tuple[int, ...]
    completed: bool
    theta: np.ndarray = field(repr=False)
    events: Any = field(repr=False)
    noise: dict[str, np.ndarray] = field(repr=False)
    pids: list[int] = field(repr=False)
    wall_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Scalar fields (for tables)."""
        skip = {"theta", "events", "noise", "pids", "failures_between_restarts"}
        return {k: v for k, v in self.__dict__.items() if k not in skip}


class StatelessRectlr:
    """RECTLR as the simulator runs it: :func:`spare_lib.rectlr.rectlr` on the current stacks.

    The simulator's kernel (``rectlr_kernel_inc``) is bit-identical to the stateless
    ``rectlr_kernel``: each failure event is resolved from the current stacks, survivors and
    depth S alone. :class:`spare_lib.rectlr.Controller` keeps its assignment across events and
    can pick a different, equally small reorder (e.g. N = 8, r = 3, failures 6, 7, 3 one event
    each: the third is 'fixed' for the Controller, 'reordered' for ``rectlr``), which changes the
    run's path; so the emulation resolves with this one by default. Same interface as
    ``Controller`` (``restart``, ``fail``, ``stacks``, ``assignment``, ``depth``).

    Parameters
    ----------
    layout : Layout
        The base layout (restored by :meth:`restart`).
    """

    def __init__(self, layout: Layout) -> None:
        if not isinstance(layout, Layout):
            raise ValueError(f"layout must be a Layout, got {type(layout).__name__}")
        self.layout = layout
        self.restart()

    def restart(self) -> None:
        """Global restart: all groups alive, base layout, S = 1."""
        from spare_lib.rectlr import rectlr

        self.stacks = np.array(self.layout.stacks, dtype=np.int64)
        self.alive = np.ones(self.layout.N, dtype=bool)
        self.depth = 1
        self.assignment = np.array(rectlr(self.stacks, self.alive, 1).assignment)

    def fail(self, groups: Any) -> Any:
        """Resolve one failure event (the groups flagged together); return RECTLR's Plan."""
        from spare_lib.rectlr import Plan, rectlr

        gs = np.atleast_1d(np.asarray(groups, dtype=np.int64))
        if gs.size == 0 or not self.alive[gs].all():
            raise ValueError(f"groups must be live groups, got {gs.tolist()}")
        self.alive[gs] = False
        if not self.alive.any():
            self.depth = 0
            none = np.zeros(self.layout.N, np.int64)
            return Plan("wipeout", 0, self.stacks, none - 1, 0, none, none, {})
        plan = rectlr(self.stacks, self.alive, self.depth)
        if plan.outcome == "wipeout":
            self.depth = 0
            return plan
        self.stacks, self.depth = np.array(plan.stacks), int(plan.depth)
        self.assignment = np.array(plan.assignment)
        return plan


def _events_frame(emu: Any) -> Any:
    """The event log with the killer's firings, detection latencies added to ``noise``."""
    import pandas as pd
    rows = list(emu.events)
    kill_late = []
    for wall, w, pid, due in emu.killer.fired:  # model time: the failure's (trace) time
        rows.append((wall - emu.wall0, emu.kill_time.get(pid, math.nan), "kill", -1, -1, int(w),
                     wall - due, str(pid)))
        kill_late.append(wall - due)
    df = pd.DataFrame(rows, columns=list(EVENT_COLUMNS)).sort_values("wall_s", kind="stable")
    noise = {k: np.asarray(v, dtype=float) for k, v in emu.noise.items()}
    noise["kill_late_s"] = np.asarray(kill_late, dtype=float)
    noise["assign_s"] = np.asarray(emu.pool.assign_s, dtype=float)
    return df.reset_index(drop=True), noise


def emulate(method: str, N: int, r: int, ckpt_steps: int | None, spec: EmulationSpec, *,
            trace: object = None, clock: FailureClock | None = None, seed: SeedLike = 0,
            layout: Layout | None = None, task: MLPTask | None = None, lr: float = 0.5,
            exact_patch: bool = False, standby: int | None = None, timeout_s: float = 5.0,
            startup_timeout_s: float = 120.0, max_wall_s: float | None = None,
            run_dir: str | os.PathLike[str] | None = None,
            controller_factory: Callable[[Layout], Any] | None = None,
            nice: int | None = None, semantics: EmuSemantics | str = "real") -> EmulationRun:
    """Emulate one training run on real processes with a scaled clock (see the module docstring).

    Parameters
    ----------
    method : str
        One of :data:`EMU_METHODS`.
    N : int
        Groups (worker processes), N ≥ 2.
    r : int
        Redundancy (SPARe: the layout's r; Rep: replica-set size; 1 for CKPT-only and
        elastic-drop).
    ckpt_steps : int or None
        Checkpoint interval C in commits (also after the last one); None: none.
    spec : EmulationSpec
        Durations and the scale.
    trace : array of shape (n, 2) or None
        Failures ``(time_s, group)`` in model seconds, replayed as the simulator does.
    clock : FailureClock or None
        Another failure clock (e.g. :class:`~spare_lib.runtime.clock.WeibullClock`); exactly
        one of ``trace`` and ``clock``.
    seed : int, SeedSequence or Generator
        Seeds the jitter draws.
    layout : Layout or None
        SPARe's layout (default: the ruler layout of N and r).
    task, lr : MLPTask, float
        What the workers train (default ``MLPTask()``), SGD step.
    exact_patch : bool
        Timed patch units of a retry: RECTLR's ``patch`` (≤ 1 per survivor, the simulator's
        default) or ``patch_exact``. Workers always compute every type they lack for real.
    standby : int or None
        Hot standby processes kept ready (default max(4, N // 2)).
    timeout_s : float
        A worker that has not answered this long after its deadline is declared failed.
    startup_timeout_s : float
        Deadline for starting the processes.
    max_wall_s : float or None
        Stop after this much wall time (default 20·T0 / scale + 60 s).
    run_dir : path or None
        Where the checkpoint file lives (None: a temporary folder, removed afterwards).
    controller_factory : callable or None
        ``Layout -> controller`` (default :class:`StatelessRectlr`, the simulator's
        RECTLR; ``spare_lib.rectlr.Controller`` is the incremental one).
    nice : int or None
        Niceness of the coordinator thread, the killer thread, the forkserver and so every
        worker for the run's duration (restored afterwards), e.g. −5 on a box shared with
        other jobs so that wake-ups are on time; negative values need the privilege to raise
        priority (ignored, with a RuntimeWarning, without it). None: unchanged.
    semantics : EmuSemantics or {"model", "real"}
        Where the run follows the simulator's instants and where a real coordinator's
        (:class:`EmuSemantics`): ``"model"`` replays the simulator's semantics (use it to check
        the protocol event by event), ``"real"`` (default) is what this coordinator does.

    Returns
    -------
    EmulationRun
        Event kinds of ``events``: ``kill`` (value: SIGKILL − due, wall s; info: pid),
        ``spawn`` (value: assignment time, wall s), ``attempt`` (value: live groups),
        ``notice`` (info: where: eof, send, timeout, attempt_start, barrier, leader,
        restart_start, restart_barrier), ``barrier``, ``resolve`` (info: fixed, reordered,
        masked or wipeout; value: S after it), ``stall``, ``commit`` (value: S),
        ``checkpoint`` (info: written or lost), ``restart_begin``, ``window_reset``,
        ``barrier_failure``, ``restart_end`` (value: its length), ``rejoin``, ``slip`` (a
        phase's real work overran it; value: the overrun, model s) and ``boundary`` (see
        ``EmulationRun.boundary_notices``).

    Raises
    ------
    ValueError
        On bad input, before any process starts.
    """
    N, r, ckpt_steps, clock = _check_emulate(method, N, r, ckpt_steps, spec, trace, clock)
    lr = check_positive("lr", lr)
    timeout_s = check_positive("timeout_s", timeout_s)
    startup_timeout_s = check_positive("startup_timeout_s", startup_timeout_s)
    standby, max_wall_s, sem, task = _check_run_limits(N, spec, standby, max_wall_s, semantics,
                                                       task)
    ctl, stacks = _spare_controller(method, N, r, layout, controller_factory)
    from spare_lib.runtime.emu_protocol import Emulator
    t_start = time.monotonic()
    own = run_dir is None
    folder = Path(tempfile.mkdtemp(prefix="spare-emulate-")) if own else Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    emu = Emulator(method, N, r, stacks, spec, clock, ckpt_steps, task, float(lr),
                   as_seed_sequence(seed), timeout_s, standby, startup_timeout_s,
                   bool(exact_patch), folder, ctl, max_wall_s, sem)
    theta = _run_at_niceness(emu, nice, folder if own else None)
    return _result(emu, theta, time.monotonic() - t_start)


def _check_emulate(method: str, N: Any, r: Any, ckpt_steps: Any, spec: Any, trace: object,
                   clock: Any) -> tuple[int, int, int | None, FailureClock]:
    """:func:`emulate`'s method, N, r, C, spec and failure source validated; (N, r, C, clock),
    a trace turned into its clock."""
    if method not in EMU_METHODS:
        raise ValueError(f"method must be one of {EMU_METHODS}, got {method!r}")
    N = check_int("N", N, lo=2)
    r = check_int("r", r, lo=1, hi=N)
    if method in ("ckpt", "elastic-drop") and r != 1:
        raise ValueError(f"r must be 1 for method={method!r}, got {r}")
    if ckpt_steps is not None:
        ckpt_steps = check_int("ckpt_steps", ckpt_steps, lo=1)
    if not isinstance(spec, EmulationSpec):
        raise ValueError(f"spec must be an EmulationSpec, got {type(spec).__name__}")
    if (trace is None) == (clock is None):
        raise ValueError("give exactly one of trace and clock, got "
                         f"trace={'None' if trace is None else 'given'}, "
                         f"clock={'None' if clock is None else 'given'}")
    if clock is None:
        clock = TraceClock(trace, N)
    elif not isinstance(clock, FailureClock) or clock.N != N:
        raise ValueError(f"clock must be a FailureClock for N={N} groups, got {clock!r}")
    return N, r, ckpt_steps, clock


def _check_run_limits(N: int, spec: EmulationSpec, standby: Any, max_wall_s: Any,
                      semantics: Any, task: Any) -> tuple[int, float, EmuSemantics, MLPTask]:
    """(standby, max_wall_s, semantics, task) of :func:`emulate`, validated, defaults filled
    in."""
    standby = max(4, N // 2) if standby is None else check_int("standby", standby, lo=1)
    if max_wall_s is None:
        max_wall_s = 20.0 * spec.t0_s() / spec.scale + 60.0
    max_wall_s = check_positive("max_wall_s", max_wall_s)
    sem = as_semantics(semantics)
    task = MLPTask() if task is None else task
    if not isinstance(task, MLPTask):
        raise ValueError(f"task must be an MLPTask, got {task!r}")
    return standby, max_wall_s, sem, task


def _spare_controller(method: str, N: int, r: int, layout: Layout | None,
                      controller_factory: Callable[[Layout], Any] | None) -> tuple[Any, Any]:
    """(controller, stacks) of the SPARe methods, the controller's kernels compiled before the
    clock starts; (None, None) for the others."""
    if method not in ("spare", "spare+repair"):
        return None, None
    if layout is None:
        layout = make_layout(N, r, "ruler")
    if not isinstance(layout, Layout) or layout.N != N or layout.r != r:
        raise ValueError(f"layout must be a Layout with N={N}, r={r}, got {layout!r}")
    if controller_factory is None:
        controller_factory = StatelessRectlr
    ctl = controller_factory(layout)
    stacks = np.array(layout.stacks)
    warm = controller_factory(layout)  # compile RECTLR's kernels before the clock starts
    warm.fail([0])
    return ctl, stacks


def _run_at_niceness(emu: Any, nice: int | None, remove: Path | None) -> np.ndarray:
    """``emu.run()`` with this thread at niceness ``nice`` (restored afterwards; None:
    unchanged); the emulator is closed and the folder ``remove`` (if any) deleted whatever
    happens."""
    old_nice = os.getpriority(os.PRIO_PROCESS, 0)
    if nice is not None:
        try:  # this thread only (Linux); threads and processes started later inherit it
            os.setpriority(os.PRIO_PROCESS, 0, check_int("nice", nice, lo=-20, hi=19))
        except PermissionError:
            warnings.warn(f"nice={nice} needs the privilege to raise priority; running at "
                          f"{old_nice}", RuntimeWarning, stacklevel=3)
    try:
        return emu.run()
    finally:
        emu.close()
        if nice is not None:
            try:
                os.setpriority(os.PRIO_PROCESS, 0, old_nice)
            except PermissionError:  # pragma: no cover - lowering our priority is always allowed
                pass
        if remove is not None:
            shutil.rmtree(remove, ignore_errors=True)


def _result(emu: Any, theta: np.ndarray, wall_s: float) -> EmulationRun:
    c = emu.count
    total = float(emu.total_s)
    down = emu.restart_time + emu.stall_time
    events, noise = _events_frame(emu)
    if emu.method == "rep":
        overhead = float(emu.r)
    else:
        overhead = emu.sum_s / c["commits"] if c["commits"] else math.nan
    return EmulationRun(
        method=emu.method, N=emu.N, r=emu.r, ckpt_steps=emu.C, steps=emu.spec.steps,
        scale=emu.spec.scale, semantics=emu.sem.label, total_s=total, t0_s=emu.spec.t0_s(),
        ttt_over_t0=total / emu.spec.t0_s(), availability=(total - down) / total if total else 1.0,
        restart_s=emu.restart_time, stall_s=emu.stall_time, checkpoint_s=emu.ckpt_time,
        overhead=overhead, full_restarts=c["restarts"], failures_noticed=c["fails"],
        masked_failures=c["masked"], commits=c["commits"], attempts=c["attempts"],
        rejoins=c["rejoins"], steps_redone=c["redone"], checkpoints_written=c["ck_ok"],
        checkpoint_failures=c["ck_fail"], phase0_events=c["phase0"], reorder_events=c["reorder"],
        timed_units=c["timed_units"], real_shards=c["real_shards"], boundary_notices=c["boundary"],
        deferred_late=c["deferred_late"],
        failures_between_restarts=tuple(emu.per_restart), completed=emu.completed,
        theta=theta, events=events, noise=noise, pids=list(emu.pool.pids), wall_s=wall_s)
