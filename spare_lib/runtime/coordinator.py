"""The coordinator: runs SPEC §4's step protocol over real worker processes.

Three modes on the same seed, data and failure schedule:

``"failure_free"``
    No failures. Every group computes stack position 0 (S = 1); the step's gradient is
    (1/N) Σ_t g_t summed in type order.
``"spare"``
    Failures are injected (:mod:`.injector`) and *detected*, not announced: a killed worker shows
    up as EOF on its pipe (or a refused send), a hung one as a timeout (then it is killed, so it
    cannot come back). After the all-reduce poll of an attempt, the flagged groups go to the
    RECTLR ``Controller`` (``spare_lib.rectlr``): ``fixed`` → commit; ``reordered`` → the
    survivors patch-compute the types newly assigned to them and the same step is retried (its
    all-reduce can flag new failures, which re-plan again); ``wipeout`` → every worker is killed
    and respawned, the last checkpoint is *read back from disk* and the steps since are redone.
    Every type's gradient enters the sum exactly once, in type order, so the step's gradient is
    bit-for-bit the failure-free one.
``"drop"``
    What per-step fault-tolerant DDP does: S = 1, a failed group's shard is skipped for that step
    and the gradient is the mean over the surviving groups' types; the failed group is replaced
    by a fresh process before the next step (it rejoins with the current parameters).

Summation order: a real all-reduce sums per-group partial sums in a topology-dependent order;
here the coordinator sums per *type*, in increasing type index (:func:`.model.aggregate`), which
is what makes "exactly equal" a testable claim instead of "equal up to rounding".

Every wait has a timeout (start-up handshake, gradient collection, all-reduce barrier, joins),
and every process started is killed and reaped before :func:`run_training` returns or raises.
(Sends are not timed: a request is ~2 kB and a worker that misses one deadline is killed, so a
pipe buffer, 64 kB, can never fill up.) Failures are injected during steps only; a failure
during a global restart (SPEC §3's restart window) is not modelled here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Any

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.runtime.injector import Injector, KillEvent, as_injector, send_fault
from spare_lib.runtime.model import MLPTask, aggregate
from spare_lib.runtime.pool import WorkerProtocolError, _Pool
from spare_lib.stacking.layout import Layout, make_layout

MODES: tuple[str, ...] = ("failure_free", "spare", "drop")


@dataclass
class TrainingRun:
    """Result of :func:`run_training`.

    Attributes
    ----------
    mode : str
        'failure_free', 'spare' or 'drop'.
    N, r : int
        Groups and redundancy of the layout.
    params : ndarray, shape (n_steps + 1, P)
        θ before step 0 and after every committed step (steps redone after a rollback keep the
        values of their last, committed, execution).
    grads : ndarray, shape (n_steps, P)
        The aggregated gradient each step committed.
    train_loss : ndarray, shape (n_steps,)
        Mean shard loss over the types that entered the step's gradient.
    eval_loss : ndarray, shape (n_steps + 1,)
        Loss on the fixed evaluation set at ``params[i]``.
    n_types : ndarray, shape (n_steps,)
        Shard types in the step's mean (N unless "drop" dropped some).
    depth : ndarray, shape (n_steps,)
        Stack depth S the step committed with.
    n_live : ndarray, shape (n_steps,)
        Live workers when the step committed.
    shards_computed : int
        Gradients of shards computed in total (redundant, patch and redone work included).
    n_faults, n_restarts, n_redone_steps : int
        Injected faults that hit a live worker, global restarts, step executions redone.
    events : list of dict
        Log: ``kind`` in {'fault', 'fault_skipped', 'detected', 'plan', 'restart',
        'checkpoint', 'dropped', 'replaced'} plus ``tick``, ``step`` and details.
    pids : list of int
        Every worker process id this run started (for orphan checks).
    wall_s : float
        Wall-clock time of the run.
    microbatches : int
        Micro-batches b per shard (1: whole shards, the paper's SPARe).
    microbatches_computed : int
        Micro-batch gradients computed in total when b > 1 (lost and patch work included).
    """

    mode: str
    N: int
    r: int
    params: np.ndarray
    grads: np.ndarray
    train_loss: np.ndarray
    eval_loss: np.ndarray
    n_types: np.ndarray
    depth: np.ndarray
    n_live: np.ndarray
    shards_computed: int = 0
    n_faults: int = 0
    n_restarts: int = 0
    n_redone_steps: int = 0
    events: list[dict[str, Any]] = field(default_factory=list, repr=False)
    pids: list[int] = field(default_factory=list, repr=False)
    wall_s: float = 0.0
    microbatches: int = 1
    microbatches_computed: int = 0

    @property
    def n_steps(self) -> int:
        """Number of committed steps."""
        return int(self.grads.shape[0])

    def max_abs_param_diff(self, other: TrainingRun) -> np.ndarray:
        """max_i |θ_i − θ'_i| after every step (length n_steps + 1, index 0 = initial θ)."""
        return np.max(np.abs(self.params - other.params), axis=1)

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        """The logged events of one kind."""
        return [e for e in self.events if e["kind"] == kind]


# ----------------------------------------------------------------------------- coordinator
class _Coordinator:
    def __init__(self, mode: str, layout: Layout, task: MLPTask, n_steps: int, lr: float,
                 injector: Injector, checkpoint_every: int, timeout_s: float,
                 startup_timeout_s: float, shard_delay_s: float, run_dir: Path,
                 controller_factory: Callable[[Layout], Any] | None, progress: bool,
                 microbatches: int = 1, on_wipeout: str = "restart") -> None:
        self.mode, self.layout, self.task = mode, layout, task
        self.N = layout.N
        self.n_steps, self.lr = n_steps, lr
        self.injector = injector
        self.checkpoint_every = checkpoint_every
        self.timeout_s = timeout_s
        self.shard_delay_s = shard_delay_s
        self.ckpt_path = run_dir / "checkpoint.npz"
        self.progress = progress
        self.pool = _Pool(layout, task, shard_delay_s, startup_timeout_s, timeout_s)
        self.controller = None
        self.engine = None  # micro-batch SPARe (issue 25): b > 1, or SPARe+drop at any b
        if mode != "drop" and (microbatches > 1 or on_wipeout == "drop"):
            from spare_lib.runtime.microbatch import MicrobatchEngine  # imports numba kernels
            self.engine = MicrobatchEngine(self, microbatches, on_wipeout)
        elif mode == "spare":
            if controller_factory is None:
                from spare_lib.rectlr import Controller  # the coordinator, never a worker, imports it
                controller_factory = Controller
            self.controller = controller_factory(layout)
        self.events: list[dict[str, Any]] = []
        self.tick = -1
        self.shards_computed = 0
        self.microbatches_computed = 0
        self.n_faults = 0
        self.n_restarts = 0
        self.n_redone = 0
        if self.engine is None:  # the engine set up its own controller state
            self._reset_layout_state()

    # ---------------------------------------------------------------- helpers
    def _log(self, kind: str, step: int, **kw: Any) -> None:
        self.events.append({"kind": kind, "tick": self.tick, "step": step, **kw})

    def _reset_layout_state(self) -> None:
        """Base layout, S = 1, type t computed by the group holding it at position 0 (or the
        controller's initial state, which is the same for the cyclic layouts)."""
        if self.controller is not None:
            self.depth = int(self.controller.depth)
            self.stacks = np.array(self.controller.stacks)
            self.assignment = np.array(self.controller.assignment)
        else:
            self.depth = 1
            self.stacks = np.array(self.layout.stacks)
            self.assignment = np.array(self.layout.holders[:, 0])

    def _write_checkpoint(self, step: int, theta: np.ndarray) -> None:
        tmp = self.ckpt_path.with_name("checkpoint.tmp.npz")
        np.savez(tmp, theta=theta, step=np.int64(step))
        os.replace(tmp, self.ckpt_path)  # atomic: a crash never leaves half a checkpoint
        self._log("checkpoint", step)

    def _read_checkpoint(self) -> tuple[int, np.ndarray]:
        with np.load(self.ckpt_path) as z:
            return int(z["step"]), np.array(z["theta"])

    def _fire(self, step: int, phases: tuple[str, ...], partial: dict[int, str] | None = None
              ) -> None:
        """Deliver the injector's faults due at these phases (partial ones are deferred)."""
        for phase in phases:
            for e in self.injector.due(step, self.tick, phase):
                self._deliver(e, step, partial)

    def _deliver(self, e: KillEvent, step: int, partial: dict[int, str] | None) -> None:
        w = e.worker
        if not self.pool.alive(w):
            self._log("fault_skipped", step, worker=w, phase=e.phase, signal=e.signal)
            return
        if e.phase == "partial" and partial is not None:
            partial[w] = e.signal  # fires when w's first gradient of the attempt arrives
            return
        self._log("fault", step, worker=w, phase=e.phase, signal=e.signal)
        self.n_faults += 1
        send_fault(self.pool.procs[w], e.signal)

    def _detected(self, w: int, step: int, how: str, flagged: set[int]) -> None:
        if w not in flagged:
            flagged.add(w)
            self._log("detected", step, worker=w, how=how)

    def _send_compute(self, requests: dict[int, list[int]], step: int, attempt: int,
                      theta: np.ndarray, flagged: set[int]) -> None:
        for w, types in requests.items():
            if not types or w in flagged:
                continue
            msg = (("compute", step, attempt, theta, [int(t) for t in types]) if self.engine is None
                   else ("compute_mb", step, attempt, theta, self.engine.b, types))
            try:
                self.pool.conns[w].send(msg)
            except (OSError, ValueError):
                self._detected(w, step, "send", flagged)

    def _collect(self, requests: dict[int, list[int]], step: int, attempt: int,
                 computed: dict[int, dict[int, tuple[float, np.ndarray]]],
                 partial: dict[int, str], flagged: set[int]) -> None:
        """Gather the gradients of an attempt; EOF or timeout flags the worker."""
        waiting = {self.pool.conns[w]: w for w, types in requests.items()
                   if types and w not in flagged and self.pool.alive(w)}
        n_max = max((len(t) for t in requests.values()), default=0)

        def on_msg(w: int, msg: tuple) -> bool:
            if msg[1] != step or msg[2] != attempt:
                return False  # stale message of an earlier attempt
            if msg[0] in ("grad", "mgrad"):
                if msg[0] == "grad":
                    computed[w][msg[3]] = (msg[4], msg[5])
                    self.shards_computed += 1
                else:  # micro-batch j = msg[4] of type msg[3]
                    computed[w][(msg[3], msg[4])] = (msg[5], msg[6])
                    self.microbatches_computed += 1
                if w in partial:
                    sig = partial.pop(w)
                    self._log("fault", step, worker=w, phase="partial", signal=sig)
                    self.n_faults += 1
                    send_fault(self.pool.procs[w], sig)
            return msg[0] == "done"

        self._drain(waiting, step, flagged, self.timeout_s + self.shard_delay_s * n_max, on_msg)

    def _allreduce_poll(self, step: int, attempt: int, flagged: set[int]) -> None:
        """The all-reduce as a barrier: every live, unflagged worker must acknowledge."""
        waiting = {}
        for w in self.pool.live():
            if w in flagged:
                continue
            try:
                self.pool.conns[w].send(("allreduce", step, attempt))
                waiting[self.pool.conns[w]] = w
            except (OSError, ValueError):
                self._detected(w, step, "send", flagged)
        self._drain(waiting, step, flagged, self.timeout_s,
                    lambda w, msg: msg[0] == "ack" and msg[1] == step and msg[2] == attempt)

    def _drain(self, waiting: dict, step: int, flagged: set[int], timeout_s: float,
               on_msg: Callable[[int, tuple], bool]) -> None:
        """Receive from ``waiting`` (connection -> worker) until every worker is done or flagged.

        ``on_msg(worker, msg)`` handles one message and returns True when that worker is done.
        EOF flags the worker; past the deadline every worker still waited for is flagged and
        killed (fenced: it cannot come back). Nothing waits longer than ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while waiting:
            remaining = deadline - time.monotonic()
            ready = mp_wait(list(waiting), timeout=remaining) if remaining > 0 else []
            if not ready:
                for w in sorted(waiting.values()):
                    self._detected(w, step, "timeout", flagged)
                    send_fault(self.pool.procs[w], "kill")
                return
            for c in ready:
                w = waiting[c]
                try:
                    msg = c.recv()
                except (EOFError, OSError):
                    del waiting[c]
                    self._detected(w, step, "eof", flagged)
                    continue
                if msg[0] == "error":
                    raise WorkerProtocolError(msg[1])
                if on_msg(w, msg):
                    del waiting[c]

    # ---------------------------------------------------------------- one step, per mode
    def _step_spare(self, step: int, theta: np.ndarray
                    ) -> dict[int, tuple[float, np.ndarray]] | None:
        """SPEC §4 for one step; returns {type: (loss, grad)} or None on wipe-out.

        Attempt 0: every live group computes its first S stack entries, then the all-reduce
        barrier. Each failure event (the groups flagged in one attempt) goes to the controller;
        on 'fixed'/'reordered' the survivors compute the assigned types they lack (none for
        'fixed' after attempt 0: commit at once), then a new barrier (which can flag more).
        """
        self._fire(step, ("before_compute",))
        attempt = 0
        live = self.pool.live()
        requests = {w: [int(t) for t in self.stacks[w, :self.depth]] for w in live}
        computed: dict[int, dict[int, tuple[float, np.ndarray]]] = {w: {} for w in live}
        flagged: set[int] = set()
        partial: dict[int, str] = {}
        self._send_compute(requests, step, attempt, theta, flagged)
        self._fire(step, ("compute",))
        self._fire(step, ("partial",), partial)
        self._collect(requests, step, attempt, computed, partial, flagged)
        self._fire(step, ("allreduce",))
        self._allreduce_poll(step, attempt, flagged)
        if not flagged:
            self._fire(step, ("patch",))  # no retry in this step: noticed at the next poll
        while flagged:
            for w in sorted(flagged):
                self.pool.retire(w)
                computed.pop(w, None)
            if self.controller is None:
                raise RuntimeError(f"worker(s) {sorted(flagged)} failed in a failure-free run "
                                   f"at step {step}")
            plan = self.controller.fail(np.array(sorted(flagged), dtype=np.int64))
            self._log("plan", step, failed=sorted(flagged), outcome=plan.outcome,
                      depth=int(plan.depth), moved=int(plan.moved), attempt=attempt,
                      controller_patch=int(np.sum(plan.patch)),
                      controller_s=float(sum(getattr(plan, "phase_times_s", {}).values())))
            if plan.outcome == "wipeout":
                return None
            self._adopt(plan)
            attempt += 1
            flagged = set()
            live = self.pool.live()
            # patch compute: exactly the assigned types a survivor has not computed this step
            requests = {w: [int(t) for t in self.stacks[w, :self.depth]
                            if self.assignment[t] == w and t not in computed[w]] for w in live}
            n_patch = int(sum(len(v) for v in requests.values()))
            self.events[-1]["patch_shards"] = n_patch
            if n_patch == 0:
                # e.g. 'fixed': the attempt's all-reduce already holds every type: commit
                self._fire(step, ("patch",))  # no retry after all: noticed at the next poll
                break
            self._send_compute(requests, step, attempt, theta, flagged)
            self._fire(step, ("patch",))
            self._collect(requests, step, attempt, computed, partial, flagged)
            self._allreduce_poll(step, attempt, flagged)
        return {t: computed[int(self.assignment[t])][t] for t in range(self.N)}

    def _adopt(self, plan: Any) -> None:
        """Take the controller's plan, after checking it covers every type exactly once."""
        stacks = np.asarray(plan.stacks)
        assignment = np.asarray(plan.assignment)
        S = int(plan.depth)
        for t in range(self.N):
            w = int(assignment[t])
            if not (0 <= w < self.N and self.pool.alive(w) and t in stacks[w, :S]):
                raise RuntimeError(f"controller plan is invalid: type {t} assigned to group {w}, "
                                   f"which is dead or lacks it in its first S*={S} positions")
        self.stacks, self.assignment, self.depth = stacks.copy(), assignment.copy(), S

    def _step_drop(self, step: int, theta: np.ndarray) -> dict[int, tuple[float, np.ndarray]]:
        missing = [w for w in range(self.N) if not self.pool.alive(w)]
        if missing:
            self.pool.start(missing)
            self._log("replaced", step, workers=missing)
        self._fire(step, ("before_compute",))
        live = self.pool.live()
        requests = {w: [int(self.layout.stacks[w, 0])] for w in live}
        computed: dict[int, dict[int, tuple[float, np.ndarray]]] = {w: {} for w in live}
        flagged: set[int] = set()
        partial: dict[int, str] = {}
        self._send_compute(requests, step, 0, theta, flagged)
        self._fire(step, ("compute",))
        self._fire(step, ("partial",), partial)
        self._collect(requests, step, 0, computed, partial, flagged)
        self._fire(step, ("allreduce", "patch"))  # no retries in this mode
        self._allreduce_poll(step, 0, flagged)
        for w in sorted(flagged):
            self.pool.retire(w)
        if flagged:
            lost = sorted(int(self.layout.stacks[w, 0]) for w in flagged)
            self._log("dropped", step, workers=sorted(flagged), types=lost)
        out = {}
        for w in self.pool.live():
            out.update(computed[w])
        if not out:
            raise RuntimeError(f"every worker failed at step {step}: nothing to average")
        return out

    # ---------------------------------------------------------------- the run
    def run(self) -> TrainingRun:
        t0 = time.perf_counter()
        task, N = self.task, self.N
        theta = task.init_params()
        P = theta.size
        params = np.zeros((self.n_steps + 1, P))
        grads = np.zeros((self.n_steps, P))
        train_loss = np.zeros(self.n_steps)
        n_types = np.zeros(self.n_steps, dtype=np.int64)
        depth = np.zeros(self.n_steps, dtype=np.int64)
        n_live = np.zeros(self.n_steps, dtype=np.int64)
        params[0] = theta
        pbar = None
        if self.progress:
            from tqdm.auto import tqdm
            pbar = tqdm(total=self.n_steps, desc=f"{self.mode} (N={N})", leave=False)
        try:
            self.pool.start(list(range(N)))
            self._write_checkpoint(0, theta)
            step = 0
            highest = 0
            while step < self.n_steps:
                self.tick += 1
                if step < highest:
                    self.n_redone += 1
                if self.mode == "drop":
                    contrib = self._step_drop(step, theta)
                elif self.engine is not None:
                    contrib = self.engine.step(step, theta, self.mode == "spare")
                else:
                    contrib = self._step_spare(step, theta)
                if contrib is None:  # wipe-out: global restart from the last checkpoint
                    self.pool.kill_all()
                    if self.engine is not None:
                        self.engine.reset()
                    else:
                        self.controller.restart()
                        self._reset_layout_state()
                    self.pool.start(list(range(N)))
                    ck_step, theta = self._read_checkpoint()
                    self.n_restarts += 1
                    self._log("restart", step, resume_step=ck_step)
                    step = ck_step
                    continue
                types = sorted(contrib)
                g = aggregate({t: contrib[t][1] for t in types}, types)
                loss = [contrib[t][0] for t in types]
                theta = theta - self.lr * g
                grads[step] = g
                params[step + 1] = theta
                train_loss[step] = float(np.sum(loss)) / len(loss)
                n_types[step] = len(types)
                depth[step] = self.depth
                n_live[step] = len(self.pool.live())
                step += 1
                if step > highest:
                    highest = step
                    if pbar is not None:
                        pbar.update(1)
                if step % self.checkpoint_every == 0 or step == self.n_steps:
                    self._write_checkpoint(step, theta)
            self.pool.stop_all()
        finally:
            self.pool.kill_all()
            if pbar is not None:
                pbar.close()
        eval_loss = np.array([task.eval_loss(p) for p in params])
        return TrainingRun(mode=self.mode, N=N, r=self.layout.r, params=params, grads=grads,
                           train_loss=train_loss, eval_loss=eval_loss, n_types=n_types,
                           depth=depth, n_live=n_live, shards_computed=self.shards_computed,
                           n_faults=self.n_faults, n_restarts=self.n_restarts,
                           n_redone_steps=self.n_redone, events=self.events,
                           pids=list(self.pool.pids), wall_s=time.perf_counter() - t0,
                           microbatches=self.engine.b if self.engine is not None else 1,
                           microbatches_computed=self.microbatches_computed)


def run_training(mode: str, layout: Layout | None = None, *, N: int | None = None,
                 r: int | None = None, n_steps: int = 10, lr: float = 0.5,
                 task: MLPTask | None = None, kills: Any = None, checkpoint_every: int = 4,
                 timeout_s: float = 20.0, startup_timeout_s: float = 120.0,
                 shard_delay_s: float = 0.0, run_dir: str | os.PathLike[str] | None = None,
                 controller_factory: Callable[[Layout], Any] | None = None,
                 progress: bool = False, microbatches: int = 1,
                 on_wipeout: str = "restart") -> TrainingRun:
    """Train the MLP data-parallel on N real worker processes, with injected failures.

    Parameters
    ----------
    mode : str
        'failure_free', 'spare' or 'drop' (see the module docstring).
    layout : Layout or None
        Stacking layout (SPEC §2). None: the ruler layout of ``N`` and ``r``.
    N, r : int or None
        Groups and redundancy, used when ``layout`` is None (1 ≤ r ≤ N).
    n_steps : int
        Steps to commit.
    lr : float
        SGD learning rate.
    task : MLPTask or None
        The learning problem (default ``MLPTask()``).
    kills : Injector, list of KillEvent / (step, phase, worker[, signal]) tuples, or None
        The failures. Ignored (must be None) in 'failure_free' mode. A fresh copy is used, so
        the same object can drive several runs.
    checkpoint_every : int
        Checkpoint period C in steps (also written at step 0 and at the end).
    timeout_s : float
        A worker that has not answered this long after a request (plus ``shard_delay_s`` per
        requested shard) is declared failed and killed.
    startup_timeout_s : float
        Deadline for all spawned workers' ready handshakes.
    shard_delay_s : float
        Sleep per computed shard inside the worker (stands in for compute time).
    run_dir : path or None
        Where the checkpoint file lives; None: a temporary folder removed afterwards.
    controller_factory : callable or None
        ``Layout -> controller`` with ``fail(groups) -> Plan`` and ``restart()``;
        default ``spare_lib.rectlr.Controller``.
    progress : bool
        Show a tqdm progress bar over committed steps.
    microbatches : int
        Micro-batches b per shard, 1 ≤ b ≤ ``task.shard_size`` (issue 25). b > 1 runs SPARe at
        micro-batch granularity (:mod:`.microbatch`): exact against the failure-free run with
        the same b. Modes 'failure_free' and 'spare' only.
    on_wipeout : str
        'restart' (from the checkpoint, SPEC §4) or 'drop' (SPARe+drop, mode 'spare' only:
        commit without the uncovered types, replace the dead groups, continue).

    Returns
    -------
    TrainingRun

    Raises
    ------
    ValueError
        On bad input, before any process starts (e.g. r > N, a kill naming worker ≥ N).
    RuntimeError
        If workers cannot start, a failure-free run sees a failure, or "drop" loses every worker.
    """
    layout = _training_layout(mode, layout, N, r)
    n_steps = check_int("n_steps", n_steps, lo=1)
    lr = check_positive("lr", lr)
    checkpoint_every = check_int("checkpoint_every", checkpoint_every, lo=1)
    timeout_s = check_positive("timeout_s", timeout_s)
    startup_timeout_s = check_positive("startup_timeout_s", startup_timeout_s)
    shard_delay_s = check_positive("shard_delay_s", shard_delay_s, allow_zero=True)
    task = MLPTask() if task is None else task
    if not isinstance(task, MLPTask):
        raise ValueError(f"task must be an MLPTask, got {task!r}")
    microbatches = _check_modes(mode, kills, microbatches, on_wipeout, task)
    injector = as_injector(kills)
    injector.validate(layout.N, n_steps)
    own_dir = run_dir is None
    folder = Path(tempfile.mkdtemp(prefix="spare-runtime-")) if own_dir else Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        coord = _Coordinator(mode, layout, task, n_steps, float(lr), injector, checkpoint_every,
                             timeout_s, startup_timeout_s, shard_delay_s, folder,
                             controller_factory, progress, microbatches, on_wipeout)
        return coord.run()
    finally:
        if own_dir:
            shutil.rmtree(folder, ignore_errors=True)


def _training_layout(mode: str, layout: Layout | None, N: Any, r: Any) -> Layout:
    """:func:`run_training`'s mode validated; ``layout``, or the ruler layout of N and r."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if layout is None:
        if N is None or r is None:
            raise ValueError("give either layout or both N and r, got layout=None, "
                             f"N={N!r}, r={r!r}")
        N = check_int("N", N, lo=1)
        r = check_int("r", r, lo=1)
        if r > N:
            raise ValueError(f"r must be in [1, N] = [1, {N}], got {r}")
        return make_layout(N, r, "ruler")
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.stacking.layout.Layout, got {layout!r}")
    return layout


def _check_modes(mode: str, kills: Any, microbatches: Any, on_wipeout: str,
                 task: MLPTask) -> int:
    """:func:`run_training`'s kills, micro-batches b (≤ the shard size) and wipe-out rule."""
    if mode == "failure_free" and kills is not None:
        raise ValueError(f"kills must be None in mode 'failure_free', got {kills!r}")
    microbatches = check_int("microbatches", microbatches, lo=1, hi=task.shard_size)
    if microbatches > 1 and mode == "drop":
        raise ValueError(f"microbatches must be 1 in mode 'drop', got {microbatches}")
    if on_wipeout not in ("restart", "drop"):
        raise ValueError(f"on_wipeout must be one of ('restart', 'drop'), got {on_wipeout!r}")
    if on_wipeout == "drop" and mode != "spare":
        raise ValueError(f"on_wipeout='drop' needs mode 'spare', got mode {mode!r}")
    return microbatches
