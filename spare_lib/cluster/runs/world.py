"""The failure world of one run: the failure mix's classes, domain and job events, and the seeds
of the class draws and the stragglers, laid out as the event core reads them.

The total failure rate stays 1/m (m = ``system_mtbf_s``): the per-group clocks carry the mix's
group share g (per-group mean N·m/g), domain events arrive at rate q_domain/m and job events at
q_job/m, each a renewal process with the run's failure law. The paper mix (every failure one
group's) keeps ``domain_fault_share`` as before, so the paper world is today's, bit for bit.

Seeds: with ``failure_seed`` every draw here is keyed on it (common random numbers: every method
sees the same domain events, job events, classes and stragglers); otherwise on the run's seed,
without touching the run's generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.engine.clocks import domain_events, event_classes, job_events, trace_rows
from spare_lib.cluster.engine.core import (
    _N_PF,
    _N_PI,
    DIST_EXPONENTIAL,
    DIST_EXPONENTIAL_STREAM,
    DIST_TRACE,
    DIST_WEIBULL,
    DIST_WEIBULL_STREAM,
    JIT_STEP,
    JIT_STRAGGLER,
    JIT_UNIT,
    P_AR_ABORT,
    P_CKPT_EVERY,
    P_DIST,
    P_DOMAIN_SIZE,
    P_JITTER,
    P_MEM_EVERY,
    P_MEM_IDEAL,
    P_REJOIN,
    P_STEPS,
    Q_COMPUTE,
    Q_FAIL_FACTOR,
    Q_FETCH,
    Q_JIT_LO,
    Q_MAX_WALL,
    Q_MEM_RESTART,
    Q_MEM_TS,
    Q_REJOIN_S,
    Q_REJOIN_STALL,
    Q_RESTART,
    Q_SCALE,
    Q_SHAPE,
    Q_SIGMA,
    Q_STALL,
    Q_STRAG_P,
    Q_STRAG_S,
    Q_TA,
    Q_TS,
    REJOIN_FROM_FAILURE,
    REJOIN_FROM_NOTICE,
    REJOIN_OFF,
)

_DIST_CODE = {"weibull": DIST_WEIBULL, "exponential": DIST_EXPONENTIAL}
_DIST_STREAM = {"weibull": DIST_WEIBULL_STREAM, "exponential": DIST_EXPONENTIAL_STREAM}
_JITTER_CODE = {"paper": JIT_UNIT, "unit": JIT_UNIT, "step": JIT_STEP, "straggler": JIT_STRAGGLER}

#: Keys of the seeds derived for the world (never a child index of the run's SeedSequence).
_KEY_DOMAIN, _KEY_CLASS, _KEY_JOB, _KEY_STRAGGLER, _KEY_DRAW = 0xD0, 0xC1A5, 0x10B, 0x51, 0xC1A


def _seed(ss: np.random.SeedSequence, fseed: int | None, key: int) -> np.random.SeedSequence:
    if fseed is not None:
        return np.random.SeedSequence([fseed, key])
    return np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, 1 << 20 | key))


def _u64(seq: np.random.SeedSequence) -> np.uint64:
    return np.uint64(seq.generate_state(1, np.uint64)[0])


@dataclass(frozen=True)
class World:
    """What the core needs about failures besides the per-group law (see the module docstring).

    ``group_share`` is g (the per-group clocks' share of the events); ``trace`` is None or the
    replayed trace's ``(ptr, times, classes)``; the class arrays are per class of
    ``class_names`` (the mix's, plus an implicit ``job (trace)`` class when a trace has job
    events and the mix none).
    """

    class_names: tuple[str, ...]
    detect_s: np.ndarray
    rejoin_s: np.ndarray
    group_cum: np.ndarray
    group_ids: np.ndarray
    group_share: float
    dom_ptr: np.ndarray
    dom_times: np.ndarray
    dom_classes: np.ndarray
    job_times: np.ndarray
    job_classes: np.ndarray
    trace: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    class_seed: np.uint64
    straggler_seed: np.uint64

    def classes_tuple(self, N: int) -> tuple:
        """The core's class tuple (fresh per run: the core writes into its per-group arrays)."""
        tr_cls = self.trace[2] if self.trace is not None and np.any(self.trace[2] >= 0) else \
            np.zeros(0, dtype=np.int64)
        n = N if len(self.class_names) > 1 else 1  # one class: the core never reads them
        return (self.detect_s, self.rejoin_s, self.group_cum, self.group_ids,
                np.zeros(n, np.int64), np.zeros(n, np.int64), self.dom_classes, tr_cls,
                np.zeros(n, np.int64), np.array([self.class_seed], dtype=np.uint64))

    def rejoins(self) -> bool:
        """Some group or domain class lets its groups rejoin (a finite rejoin time)."""
        return bool(np.any(np.isfinite(self.rejoin_s)))


def _class_arrays(config: ClusterConfig) -> tuple[list, list, list, list]:
    mix = config.mix()
    names = [c.name for c in mix.classes]
    det = [config.detect_s if c.detect_s is None else c.detect_s for c in mix.classes]
    rej = [config.rejoin_s if c.rejoin_s is None else c.rejoin_s for c in mix.classes]
    radius = [c.radius for c in mix.classes]
    return names, det, rej, radius


def build_world(config: ClusterConfig, N: int, ss: np.random.SeedSequence, fseed: int | None,
                failure_trace: object, horizon_s: float) -> World:
    """The :class:`World` of a run of N groups (``failure_trace``: a replayed trace, which then
    carries every failure, job events as rows of group −1)."""
    if failure_trace is None and config.domain_fault_share == 0 and \
            config.jitter_model != "straggler" and config.mix().is_paper:
        return _paper_world(config)  # nothing drawn: the same for every run of this config
    return _build_world(config, N, ss, fseed, failure_trace, horizon_s)


@lru_cache(maxsize=256)
def _paper_world(config: ClusterConfig) -> World:
    return _build_world(config, 1, np.random.SeedSequence(0), None, None, 0.0)


def _build_world(config: ClusterConfig, N: int, ss: np.random.SeedSequence, fseed: int | None,
                 failure_trace: object, horizon_s: float) -> World:
    mix = config.mix()
    names, det, rej, radius = _class_arrays(config)
    shares = [c.share for c in mix.classes]
    if mix.is_paper:
        q_dom, q_job = config.domain_fault_share, 0.0
        g_share = 1.0 - q_dom
    else:
        q_dom, q_job, g_share = mix.share("domain"), mix.share("job"), mix.share("group")
    trace = None
    job_t = np.zeros(0, np.float64)
    job_c = np.zeros(0, np.int64)
    draw = _LazyRng(ss, fseed)
    job_ids = [i for i, r in enumerate(radius) if r == "job"]
    if failure_trace is not None:
        ptr, times, tcls, job_t, job_c = trace_rows(failure_trace, N, len(names))
        if job_t.size and not job_ids:  # job rows, and no job class in the mix
            names.append("job (trace)")
            det.append(config.detect_s)
            rej.append(math.inf)
            radius.append("job")
            shares.append(1.0)
            job_ids = [len(names) - 1]
        _check_trace_classes(tcls, job_c, radius)
        need = job_c < 0
        job_c[need] = event_classes(int(need.sum()), np.array(job_ids),
                                    np.array([shares[i] for i in job_ids]), draw)
        trace = (ptr, times, tcls)
    elif q_job > 0:
        job_t = job_events(config, q_job, horizon_s,
                           np.random.default_rng(_seed(ss, fseed, _KEY_JOB)))
        job_c = event_classes(job_t.size, np.array(job_ids),
                              np.array([shares[i] for i in job_ids]), draw)
    dom_ptr, dom_times = np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.float64)
    dom_cls = np.zeros(0, np.int64)
    if failure_trace is None and q_dom > 0:
        dom_rng = np.random.default_rng(ss.spawn(1)[0] if fseed is None else
                                        np.random.SeedSequence([fseed, _KEY_DOMAIN]))
        dom_ptr, dom_times = domain_events(N, config, horizon_s, dom_rng, share=q_dom)
        dom_ids = [i for i, r in enumerate(radius) if r == "domain"] or [0]
        dom_cls = event_classes(dom_times.size, np.array(dom_ids),
                                np.array([shares[i] for i in dom_ids]), draw)
    g_ids = [i for i, r in enumerate(radius) if r == "group"] or [0]
    g_sh = np.array([shares[i] for i in g_ids], dtype=np.float64)
    g_cum = np.cumsum(g_sh) / g_sh.sum() if g_sh.sum() > 0 else np.ones(len(g_ids))
    # the hash seeds only where they are read: several classes, stragglers (no cost otherwise)
    cseed = _u64(_seed(ss, fseed, _KEY_CLASS)) if len(names) > 1 else np.uint64(0)
    sseed = _u64(_seed(ss, fseed, _KEY_STRAGGLER)) if config.jitter_model == "straggler" \
        else np.uint64(0)
    return World(tuple(names), np.array(det, np.float64), np.array(rej, np.float64),
                 np.ascontiguousarray(g_cum), np.array(g_ids, np.int64), g_share, dom_ptr,
                 dom_times, np.ascontiguousarray(dom_cls, np.int64),
                 np.ascontiguousarray(job_t, np.float64), np.ascontiguousarray(job_c, np.int64),
                 trace, cseed, sseed)


class _LazyRng:
    """The generator of the event classes, made on first use (most runs never need it)."""

    def __init__(self, ss: np.random.SeedSequence, fseed: int | None) -> None:
        self._args = (ss, fseed)
        self._rng: np.random.Generator | None = None

    def choice(self, *args: Any, **kwargs: Any) -> Any:
        if self._rng is None:
            self._rng = np.random.default_rng(_seed(*self._args, _KEY_DRAW))
        return self._rng.choice(*args, **kwargs)


def _check_trace_classes(tcls: np.ndarray, job_c: np.ndarray, radius: list[str]) -> None:
    for c in np.unique(tcls[tcls >= 0]):
        if radius[c] == "job":
            raise ValueError(f"failure_trace class {c} is a job class; a job event is a row of "
                             f"group -1")
    for c in np.unique(job_c[job_c >= 0]):
        if radius[c] != "job":
            raise ValueError(f"failure_trace class {c} of a job event (group -1) must be a job "
                             f"class, got radius {radius[c]!r}")


def core_params(config: ClusterConfig, bind: Any, spec: Any, ckpt_steps: int | None,
            mem_ckpt_steps: int | None, max_wall_s: float, N: int, world: World, trace: bool,
            streams: bool) -> tuple[np.ndarray, np.ndarray]:
    """The core's int and float parameter arrays (``pi``, ``pf``) of a run."""
    if trace or world.group_share <= 0:  # a trace, or no group clocks (domain and job events)
        dist = DIST_TRACE
    else:
        dist = (_DIST_STREAM if streams else _DIST_CODE)[config.failure_dist]
    g = world.group_share
    group_mean = config.group_mean_s(N) / g if g > 0.0 else np.inf
    if config.failure_dist == "weibull":
        scale = group_mean / math.gamma(1.0 + 1.0 / config.weibull_shape)
    else:
        scale = group_mean
    pi = np.zeros(_N_PI, dtype=np.int64)
    pi[P_STEPS] = config.steps
    pi[P_CKPT_EVERY] = 0 if ckpt_steps is None else ckpt_steps
    pi[P_MEM_EVERY] = 0 if mem_ckpt_steps is None else mem_ckpt_steps
    pi[P_DIST] = dist
    pi[P_REJOIN] = (REJOIN_OFF if not (spec.rejoins and world.rejoins()) else
                    REJOIN_FROM_FAILURE if config.rejoin_clock == "failure" else REJOIN_FROM_NOTICE)
    pi[P_DOMAIN_SIZE] = config.domain_size
    pi[P_MEM_IDEAL] = int(config.mem_ideal)
    pi[P_JITTER] = _JITTER_CODE[config.jitter_model]
    pi[P_AR_ABORT] = int(config.allreduce_rule == "abort")
    pf = np.zeros(_N_PF, dtype=np.float64)
    pf[Q_COMPUTE] = config.compute_per_stack_s
    pf[Q_SIGMA] = bind.unit_sigma(config)  # jitter of one unit of the method's work
    pf[Q_JIT_LO] = config.jitter_min
    pf[Q_TA] = config.allreduce_s
    pf[Q_FAIL_FACTOR] = config.allreduce_fail_factor
    pf[Q_RESTART] = config.restart_s
    pf[Q_STALL] = config.stall_s
    pf[Q_TS] = config.checkpoint_s
    pf[Q_SHAPE] = config.weibull_shape
    pf[Q_SCALE] = scale
    pf[Q_MAX_WALL] = max_wall_s
    pf[Q_REJOIN_S] = config.rejoin_s if math.isfinite(config.rejoin_s) else 0.0
    pf[Q_MEM_TS] = config.mem_checkpoint_s
    pf[Q_MEM_RESTART] = config.mem_restart_s
    pf[Q_FETCH] = config.fetch_s
    pf[Q_REJOIN_STALL] = config.stall_s if config.rejoin_stall_s is None else config.rejoin_stall_s
    pf[Q_STRAG_P] = config.straggler_share
    pf[Q_STRAG_S] = config.straggler_slowdown
    return pi, pf
