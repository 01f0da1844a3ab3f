"""One simulated training run (:func:`simulate`) and batches of them (:func:`simulate_many`).

The event loop itself is :mod:`spare_lib.cluster.engine.core` (its docstring states the model, SPEC §3–6);
the methods it runs are registered in :mod:`spare_lib.cluster.engine.methods`. This module validates the
inputs, lays out the arrays the core needs and wraps its outputs in a :class:`SimResult`.

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
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from spare_lib._util.memory import check_memory
from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.engine.core import (
    _F_CKPT_TIME,
    _F_DETECT,
    _F_PATCH,
    _F_RESTART,
    _F_SAMPLES,
    _F_SAMPLES_ALL,
    _F_STALL,
    _F_SUM_S,
    _F_TOTAL,
    _I_ATTEMPTS,
    _I_CKPT_FAIL,
    _I_CKPT_OK,
    _I_COMMITS,
    _I_COMMITTED,
    _I_DONE,
    _I_FAILS,
    _I_JOB,
    _I_MASKED,
    _I_MEM_CKPT_OK,
    _I_MEM_RESTARTS,
    _I_PHASE0,
    _I_REDONE,
    _I_REJOINS,
    _I_REORDER,
    _I_RESTARTS,
    _I_STACKS,
    _N_F,
    _N_I,
    DIRECT,
    MAX_RESTART_RECORDS,
    SAMPLED,
    _core,
)
from spare_lib.cluster.engine.eventlog import event_buffers, events_frame
from spare_lib.cluster.engine.methods import BINDINGS
from spare_lib.cluster.runs.world import build_world, core_params
from spare_lib.registry.methods import METHODS as METHOD_REGISTRY
from spare_lib.registry.methods import method as method_spec
from spare_lib.stacking.domains import domain_aware_layout
from spare_lib.stacking.layout import Layout, make_layout

#: Every method the core runs (:data:`spare_lib.cluster.engine.methods.METHODS`).
METHODS = tuple(METHOD_REGISTRY)
#: The paper's (and this project's) names of the methods, with and without checkpoints.
METHOD_LABEL = {(name, ck): (m.label if ck else m.label_no_ckpt)
                for name, m in METHOD_REGISTRY.items() for ck in (True, False)}




#: ``simulate(barrier=...)``; 'auto' samples the barrier from this N on.
BARRIERS = ("auto", "direct", "sampled")
AUTO_SAMPLED_N = 2000

#: Jitter models the sampled barrier draws exactly (the others run the direct loop).
SAMPLED_JITTER = ("paper", "unit")




def run_bytes(N: int, r: int) -> float:
    """A generous estimate of what one run of N groups at redundancy r allocates: the core's
    per-group arrays, SPARe's stacks and RECTLR's workspaces (holder index, Phase 2 heap), about
    96·r + 800 bytes per group (0.25 GB at N = 10⁵, r = 17; measured 0.2 GB)."""
    return float(N) * (96.0 * r + 800.0)


@dataclass(frozen=True)
class SimResult:
    """Outcome of one simulated training run.

    Attributes
    ----------
    method, N, r, ckpt_steps, steps : the run's inputs (ckpt_steps None = no checkpoints).
    total_s : float
        Wall time until the last step is committed and its checkpoint written.
    up_s, down_s : float
        Uptime and downtime (restart + stall + detection time); ``up_s + down_s == total_s``.
    restart_s, stall_s, checkpoint_s : float
        Time spent in global restarts, in reconfiguration stalls (``ClusterConfig.stall_s``)
        and writing checkpoints (both tiers).
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
    samples : float
        Full steps' worth of samples processed at the end (``steps`` when completed).
    dropped_sample_fraction : float
        Share of the samples of all commits that were dropped (elastic-drop: groups missing
        from a step); 0 for the methods that keep the global batch exact.
    rejoins : int
        Groups that rejoined after ``rejoin_s`` (spare+repair, elastic).
    memory_restarts, memory_checkpoints_written : int
        Global restarts served by the in-memory tier, and in-memory checkpoints written.
    failures_between_restarts : tuple of int
        For each global restart (the first ``MAX_RESTART_RECORDS``), the failures noticed
        during training since the previous one (its mean estimates μ(N, r) for SPARe with
        exponential clocks).
    detect_s : float
        Time every group spent waiting for failures to be detected (``detect_s`` and the
        failure mix's detection times); downtime.
    job_failures : int
        Job-wide failure events noticed during training (the failure mix's ``job`` classes,
        or trace rows of group −1); each is a global restart.
    events : pandas.DataFrame or None
        The event log with ``simulate(..., events=True)`` (columns and kinds:
        :mod:`spare_lib.cluster.engine.eventlog`); None otherwise. Not compared by ``==``.
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
    stall_s: float
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
    samples: float = 0.0
    dropped_sample_fraction: float = 0.0
    rejoins: int = 0
    memory_restarts: int = 0
    memory_checkpoints_written: int = 0
    detect_s: float = 0.0
    job_failures: int = 0
    events: Any = field(default=None, compare=False, repr=False)

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
             if f.name not in ("failures_between_restarts", "events")}
        d["label"] = self.label
        d["phase0_share"] = self.phase0_share
        d["restart_share"] = self.restart_share
        return d






def _resolve_layout(layout: str | Layout | Sequence[int], N: int, r: int) -> Layout:
    if isinstance(layout, Layout):
        if layout.N != N or layout.r != r:
            raise ValueError(f"layout must have N={N}, r={r}, got {layout!r}")
        return layout
    if isinstance(layout, str):
        return make_layout(N, r, layout)
    from spare_lib.stacking.layout import layout_from_offsets
    lay = layout_from_offsets(N, layout)
    if lay.r != r:
        raise ValueError(f"layout offsets must number r={r}, got {len(lay.offsets)}")
    return lay


def simulate(method: str, N: int, r: int, ckpt_steps: int | None, config: ClusterConfig,
             seed: SeedLike = None, failure_trace: object = None,
             layout: str | Layout | Sequence[int] = "ruler", *, exact_patch: bool = False,
             max_wall_s: float | None = None, failure_seed: int | None = None,
             mem_ckpt_steps: int | None = None, rep_placement: str = "consecutive",
             barrier: str = "auto", events: bool = False) -> SimResult:
    """Simulate one training run of SPARe, Rep or CKPT-only on a failing cluster (SPEC §3–5).

    Parameters
    ----------
    method : str
        A method of :data:`spare_lib.registry.methods.METHODS`: 'spare' (stacking + RECTLR),
        'rep' (ceil(N/r) replica sets of r consecutive groups), 'ckpt' (CKPT-only: any failure
        restarts; needs r = 1), 'spare+repair', 'elastic-drop', 'elastic-rebalance'
        (``docs/strategies.md``).
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
    failure_trace : array of shape (n, 2) or (n, 3), or None
        Rows (time_s, group) replace the random clocks (and the failure mix's domain and job
        events): group w's next failure after a renewal at time t is its first trace time > t
        (failures while a group is down are absorbed). A row of group −1 is a job event (every
        group fails: a global restart). A third column gives the failure class (index in
        ``config.mix().classes``; −1: drawn by the classes' shares). Replays a real log.
    layout : 'ruler', 'consecutive', 'domain-aware', a Layout or offsets
        SPARe's stacking layout (SPEC §2; 'domain-aware': r holders of every type in r distinct
        domains of ``config.domain_size`` groups); ignored by the other methods.
    exact_patch : bool
        False (the paper's simulator): at most one patch stack per survivor per retry. True:
        each survivor recomputes every type of its new first S* positions it did not compute in
        the failed attempt.
    max_wall_s : float or None
        Stop (``completed=False``, a RuntimeWarning) past this wall clock; default 1000·T0.
    failure_seed : int or None
        Common random numbers. None (default): failure gaps are drawn from ``seed``'s generator,
        interleaved with the jitter. An int in [0, 2^64): group w's j-th failure gap is a hash
        of (failure_seed, w, j), independent of the method, r and the jitter, so every candidate
        run with the same failure_seed sees the same gap sequence per group (differences
        between candidates are then sharp). Excludes ``failure_trace``.
    barrier : {'auto', 'direct', 'sampled'}
        How the compute phase is drawn. 'direct': every live group's every stack (the paper's
        simulator). 'sampled': the slowest group's time is drawn from its exact distribution and
        only groups whose clocks fire inside the step are drawn one by one
        (:mod:`spare_lib.cluster.engine.barrier`; exact in distribution, other numbers for the same
        seed; cost grows with failures rather than N × steps). 'auto': 'sampled' for N ≥ 2,000,
        'direct' below, so every result at the paper's sizes stays as published. The jitter
        models 'step' and 'straggler' run the direct loop ('sampled' is refused).
    events : bool
        Record the event log (``SimResult.events``, :mod:`~spare_lib.cluster.engine.eventlog`).
    rep_placement : {'consecutive', 'strided'}
        Rep's replica sets: r consecutive groups (SPEC §5) or ⌈N/r⌉ apart (across domains).
    mem_ckpt_steps : int or None
        Interval of the in-memory checkpoint tier in committed steps (costs
        ``config.mem_checkpoint_s``; a restart it serves lasts ``config.mem_restart_s`` per group
        window and rolls back to it); None: disk only.

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
    spec, bind = method_spec(method), BINDINGS[method]
    N, r, ckpt_steps, mem_ckpt_steps, max_wall_s = _check_run(
        method, spec, N, r, ckpt_steps, mem_ckpt_steps, config, max_wall_s)
    stacks = _stacks(spec, layout, N, r, config)
    sampled = _sampled_barrier(barrier, N, config, method, bind)
    ss = as_seed_sequence(seed)
    fseed = _failure_seed(failure_trace, failure_seed, config)
    world = build_world(config, N, ss, fseed, failure_trace, max_wall_s)
    pi, pf = core_params(config, bind, spec, ckpt_steps, mem_ckpt_steps, max_wall_s, N, world,
                         failure_trace is not None, fseed is not None)
    setup = (bind.code_of(config), lambda: bind.state(N, r, config, stacks, exact_patch, rep_placement), pi,
             pf, world, ss, fseed, sampled)
    n_rec, fout, iout, per_restart, ev = _run_logged(setup, N, config.steps, events)
    _warn_unfinished(method, N, r, ckpt_steps, config, max_wall_s, world.trace[1] if
                     failure_trace is not None and world.trace is not None else None, fout, iout)
    return _sim_result(method, N, r, ckpt_steps, config, fout, iout, per_restart[:n_rec],
                       events_frame(ev, world.class_names) if events else None)


def _check_run(method: str, spec: Any, N: Any, r: Any, ckpt_steps: Any, mem_ckpt_steps: Any,
               config: Any, max_wall_s: Any) -> tuple[int, int, int | None, int | None, float]:
    """:func:`simulate`'s N, r, C, in-memory C and wall-clock cap validated (with the config
    and the memory a run needs); the cap defaults to 1000·T0."""
    if not isinstance(config, ClusterConfig):
        raise ValueError(f"config must be a spare_lib.cluster.ClusterConfig, got "
                         f"{type(config).__name__}")
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    if not spec.redundancy and r != 1:
        raise ValueError(f"r must be 1 for method={method!r} (it has no redundancy parameter), "
                         f"got {r}")
    if ckpt_steps is not None:
        ckpt_steps = check_int("ckpt_steps", ckpt_steps, lo=1)
    if mem_ckpt_steps is not None:
        mem_ckpt_steps = check_int("mem_ckpt_steps", mem_ckpt_steps, lo=1)
    if config.domain_size > N:
        raise ValueError(f"domain_size must be in [1, N] = [1, {N}], got {config.domain_size}")
    check_memory(f"simulate({method!r}, N={N}, r={r})", run_bytes(N, r))
    if max_wall_s is None:
        max_wall_s = 1000.0 * config.t0_s()
    return N, r, ckpt_steps, mem_ckpt_steps, check_positive("max_wall_s", max_wall_s)


def _stacks(spec: Any, layout: Any, N: int, r: int, config: ClusterConfig) -> Any:
    """SPARe's stacks of ``layout`` (None for the methods without a layout)."""
    if not spec.layout:
        return None
    if isinstance(layout, str) and layout == "domain-aware":
        layout = domain_aware_layout(N, r, config.domain_size)
    return _resolve_layout(layout, N, r).stacks


def _sampled_barrier(barrier: str, N: int, config: ClusterConfig, method: str, bind: Any) -> bool:
    """Whether the run draws the barrier 'sampled' (``barrier`` of :func:`simulate`)."""
    if barrier not in BARRIERS:
        raise ValueError(f"barrier must be one of {BARRIERS}, got {barrier!r}")
    if barrier == "sampled" and not bind.sampled_ok(config):
        raise ValueError(f"barrier must be 'direct' or 'auto' for method={method!r} with "
                         f"microbatches={config.microbatches} (its groups compute different "
                         f"loads, which the sampled barrier does not draw), got 'sampled'")
    if barrier == "sampled" and config.jitter_model not in SAMPLED_JITTER:
        raise ValueError(f"barrier must be 'direct' or 'auto' with jitter_model="
                         f"{config.jitter_model!r} (the sampled barrier draws "
                         f"{' and '.join(SAMPLED_JITTER)} only), got 'sampled'")
    return barrier == "sampled" or (barrier == "auto" and N >= AUTO_SAMPLED_N
                                    and config.jitter_model in SAMPLED_JITTER
                                    and bind.sampled_ok(config))


def _failure_seed(failure_trace: object, failure_seed: int | None,
                  config: ClusterConfig) -> int | None:
    """The common-random-numbers seed, validated against a replayed trace."""
    if failure_trace is not None:
        if failure_seed is not None:
            raise ValueError("failure_seed and failure_trace exclude each other: a replayed trace "
                             "already gives every candidate the same failures")
        if config.domain_fault_share > 0:
            raise ValueError("domain_fault_share must be 0 with failure_trace: a trace carries its "
                             "own simultaneous failures")
        return None
    if failure_seed is not None:
        return check_int("failure_seed", failure_seed, lo=0, hi=2**64 - 1)
    return None


def _run_logged(setup: tuple, N: int, steps: int, events: bool) -> tuple:
    """:func:`_run_core` with an event log when ``events`` (run again with room for every
    event when the first guess of its length ran over)."""
    out = _run_core(setup, N, 16 * steps + 4 * N + 1024 if events else 0)
    ev = out[4]
    if events and ev[2][0] > ev[0].shape[0]:  # the log ran over: run again with room for all
        out = _run_core(setup, N, int(ev[2][0]) + 64)
    return out


def _run_core(setup: tuple, N: int, capacity: int) -> tuple:
    """One call of the event core from a fresh state and generator (``setup``: the method's
    code, its state builder, the parameter arrays, the world, the run's seed, the failure
    seed and the barrier mode); ``capacity`` rows of event log. Returns (records, float and int results,
    failures per restart, event buffers)."""
    code, state_of, pi, pf, world, ss, fseed, sampled = setup
    if world.trace is not None:
        tr_ptr, tr_times = world.trace[0], world.trace[1]
    else:
        tr_ptr, tr_times = np.zeros(N + 1, dtype=np.int64), np.zeros(0, dtype=np.float64)
    fout = np.zeros(_N_F, dtype=np.float64)
    iout = np.zeros(_N_I, dtype=np.int64)
    per_restart = np.zeros(MAX_RESTART_RECORDS, dtype=np.int64)
    ev = event_buffers(capacity)
    n_rec = _core(code, state_of(), pi, pf, tr_ptr, tr_times, world.dom_ptr, world.dom_times,
                  np.uint64(fseed or 0), np.random.default_rng(ss), fout, iout,
                  per_restart, SAMPLED if sampled else DIRECT, world.classes_tuple(N),
                  world.job_times, world.job_classes, world.straggler_seed, ev)
    return n_rec, fout, iout, per_restart, ev


def _warn_unfinished(method: str, N: int, r: int, ckpt_steps: int | None, config: ClusterConfig,
                     max_wall_s: float, tr_times: np.ndarray | None, fout: np.ndarray,
                     iout: np.ndarray) -> None:
    """RuntimeWarnings for a run stopped at ``max_wall_s`` and for one that outlasted its
    failure trace (``tr_times``: the replayed trace's times, None without one)."""
    total = float(fout[_F_TOTAL])
    if not iout[_I_DONE]:
        warnings.warn(f"simulate({method!r}, N={N}, r={r}, ckpt_steps={ckpt_steps}) stopped at "
                      f"max_wall_s={max_wall_s:.3g} s with {int(iout[_I_COMMITTED])} of "
                      f"{config.steps} steps committed", RuntimeWarning, stacklevel=3)
    if tr_times is not None and tr_times.size and total > float(tr_times.max()):
        warnings.warn(f"simulate({method!r}, N={N}, r={r}): the run lasted {total / 86400:.1f} days "
                      f"but the failure trace ends at {float(tr_times.max()) / 86400:.1f} days; no "
                      f"group failed after that (extend the trace, e.g. "
                      f"spare_lib.failures.synthesize with a longer horizon)", RuntimeWarning,
                      stacklevel=3)


def _sim_result(method: str, N: int, r: int, ckpt_steps: int | None, config: ClusterConfig,
                fout: np.ndarray, iout: np.ndarray, per_restart: np.ndarray,
                log: Any) -> SimResult:
    """The :class:`SimResult` of the core's result arrays."""
    T0 = config.t0_s()
    total = float(fout[_F_TOTAL])
    down = float(fout[_F_RESTART] + fout[_F_STALL])
    if fout[_F_DETECT] > 0:
        down += float(fout[_F_DETECT])
    commits = int(iout[_I_COMMITS])
    overhead = float(fout[_F_SUM_S]) / commits if commits else float("nan")
    patch_ovh = float(fout[_F_PATCH]) / (N * commits) if commits else float("nan")
    samples_all = float(fout[_F_SAMPLES_ALL])
    return SimResult(
        method=method, N=N, r=r, ckpt_steps=ckpt_steps, steps=config.steps,
        total_s=total, up_s=total - down, down_s=down, restart_s=float(fout[_F_RESTART]),
        stall_s=float(fout[_F_STALL]), checkpoint_s=float(fout[_F_CKPT_TIME]), t0_s=T0,
        ttt_over_t0=total / T0, availability=(total - down) / total if total > 0 else 1.0,
        overhead=overhead, patch_overhead=patch_ovh,
        full_restarts=int(iout[_I_RESTARTS]), masked_failures=int(iout[_I_MASKED]),
        failures_noticed=int(iout[_I_FAILS]), phase0_events=int(iout[_I_PHASE0]),
        reorder_events=int(iout[_I_REORDER]), steps_redone=int(iout[_I_REDONE]),
        commits=commits, attempts=int(iout[_I_ATTEMPTS]), compute_events=int(iout[_I_STACKS]),
        checkpoints_written=int(iout[_I_CKPT_OK]), checkpoint_failures=int(iout[_I_CKPT_FAIL]),
        completed=bool(iout[_I_DONE]),
        failures_between_restarts=tuple(int(x) for x in per_restart),
        samples=float(fout[_F_SAMPLES]),
        dropped_sample_fraction=1.0 - samples_all / commits if commits else 0.0,
        rejoins=int(iout[_I_REJOINS]), memory_restarts=int(iout[_I_MEM_RESTARTS]),
        memory_checkpoints_written=int(iout[_I_MEM_CKPT_OK]),
        detect_s=float(fout[_F_DETECT]), job_failures=int(iout[_I_JOB]), events=log,
    )


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

    The tasks run through :func:`spare_lib.cluster.runs.executor.execute`, the executor of
    :func:`~spare_lib.cluster.runs.sweeps.run_sweep`.

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
    from spare_lib.cluster.runs.executor import check_backend, execute

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
