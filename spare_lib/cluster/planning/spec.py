"""The cluster a plan is for: :class:`ClusterSpec` and :func:`cluster_spec`.

A cluster is described by its hardware — GPUs, GPUs per data-parallel group (hence N groups),
the per-GPU MTBF (or the system MTBF m), the restart time T_r, the checkpoint write time T_s,
the step time and the all-reduce model — every time in seconds, every default from the knob
registry (``docs/knobs.md``), and carries the run knobs of the strategies (stall, rejoin,
micro-batches, fetch) it will be simulated with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spare_lib._util.validate import check_int, check_positive, check_probability
from spare_lib.cluster.config import (
    FAILURE_DISTRIBUTIONS,
    ClusterConfig,
    allreduce_600k_s,
    allreduce_time_s,
)
from spare_lib.registry.knobs import KNOBS

#: ClusterConfig knobs a :class:`ClusterSpec` may carry besides its hardware-derived times.
RUN_KNOBS = ("stall_s", "rejoin_s", "rejoin_clock", "rejoin_stall_s", "microbatches", "fetch_s",
             "jitter_sigma", "allreduce_fail_factor", "failure_mix", "detect_s", "jitter_model",
             "straggler_share", "straggler_slowdown", "allreduce_rule", "min_live")
#: The run knobs of the failure world (issue 24): the mix, detection, jitter model, all-reduce
#: rule and quorum. The simulation applies every one; the fast models see only part of them
#: (:func:`spare_lib.cluster.planning.world_model.model_world`).
WORLD_KNOBS = ("failure_mix", "detect_s", "jitter_model", "straggler_share", "straggler_slowdown",
               "allreduce_rule", "min_live")


#: Largest N the planner takes: its fast models cost O(N) per r (about a minute and 1.4 GB at
#: N = 10⁶ on this project's 2-core machines, 3.5 min and 11 GB at 10⁷).
MAX_PLAN_N = 1_000_000


def _check_group_size(gpus: int, gpus_per_group: Any) -> int:
    """``gpus_per_group`` as an int in [gpus / MAX_PLAN_N, gpus/2]: at least N = 2 groups must
    fit, and at most :data:`MAX_PLAN_N`."""
    gpg = check_int("gpus_per_group", gpus_per_group, lo=1)
    if gpg > gpus // 2:
        raise ValueError(f"gpus_per_group must be in [1, {gpus // 2}] (at least N = 2 groups of "
                         f"gpus_per_group GPUs in gpus = {gpus}), got {gpg}")
    if gpus // gpg > MAX_PLAN_N:
        lo = -(-gpus // MAX_PLAN_N)
        raise ValueError(f"gpus_per_group must be at least {lo} for gpus = {gpus} (the planner "
                         f"takes N = gpus / gpus_per_group <= {MAX_PLAN_N:,} groups; its fast "
                         f"models cost O(N) per r), got {gpg}, N = {gpus // gpg:,}")
    return gpg


@dataclass(frozen=True)
class ClusterSpec:
    """A cluster to plan for; times in seconds (build it with :func:`cluster_spec`).

    Attributes
    ----------
    gpus : int
        GPUs of the cluster.
    gpus_per_group : int
        GPUs M of one data-parallel group (one model replica); N = ⌊gpus / M⌋ groups, the
        leftover GPUs (:attr:`idle_gpus`) stay idle.
    system_mtbf_s : float
        System MTBF m of the whole cluster.
    restart_s : float
        Global restart time T_r (the simulator: every group's failure-free restart window).
    checkpoint_s : float
        Checkpoint write time T_s.
    step_s : float
        Failure-free step time at stack depth 1: compute per stack + T_a.
    allreduce_s : float
        All-reduce time T_a, 0 ≤ T_a < step_s.
    weibull_shape : float
        Weibull shape k of the per-group failure law (0.78); simulation only (the closed forms
        depend on the mean m alone).
    failure_dist : {'weibull', 'exponential'}
        Law of the per-group time between failures; simulation only.
    domain_size : int
        D, groups per failure domain (group g in domain ⌊g/D⌋), 1 ≤ D ≤ N; 1 = no domains.
    domain_fault_share : float
        q in [0, 1], the share of failure events that kill a whole domain (same total rate 1/m;
        :class:`~spare_lib.cluster.ClusterConfig`). With q > 0 and D > 1 SPARe's closed form uses
        ``theory.mu_correlated``; the simulation draws the domain events.
    run : tuple of (str, value)
        Other :class:`~spare_lib.cluster.ClusterConfig` knobs of the run (what the strategies pay
        and do: ``stall_s``, ``rejoin_s``, ``rejoin_stall_s``, ``microbatches``, ``fetch_s``; and
        the failure world of :data:`WORLD_KNOBS`: ``failure_mix``, ``detect_s``,
        ``jitter_model``, ``allreduce_rule``, ``min_live``...), sorted by name; empty: the
        registry's defaults (the paper's world).
    """

    gpus: int
    gpus_per_group: int
    system_mtbf_s: float
    restart_s: float
    checkpoint_s: float
    step_s: float
    allreduce_s: float
    weibull_shape: float = 0.78
    failure_dist: str = "weibull"
    domain_size: int = 1
    domain_fault_share: float = 0.0
    run: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        run = {}
        for k, v in dict(self.run).items():
            if k not in RUN_KNOBS:
                raise ValueError(f"run must set knobs among {RUN_KNOBS}, got {k!r}")
            v = KNOBS[k].check(v)
            if v != KNOBS[k].default:  # a default is no change: the same cluster, the same seeds
                run[k] = v
        object.__setattr__(self, "run", tuple(sorted(run.items())))
        if "failure_mix" in run:
            from spare_lib.failures.mix import failure_mix

            mix = failure_mix(run["failure_mix"])  # a preset or a readable YAML file
            if not mix.is_paper and self.domain_fault_share > 0:
                raise ValueError(f"domain_fault_share must be 0 with failure_mix="
                                 f"{run['failure_mix']!r} (the mix sets the share of domain "
                                 f"events, {mix.share('domain'):g}), got "
                                 f"{self.domain_fault_share:g}")
        gpus = check_int("gpus", self.gpus, lo=2)
        m = _check_group_size(gpus, self.gpus_per_group)
        check_positive("system_mtbf_s", self.system_mtbf_s)
        check_positive("restart_s", self.restart_s, allow_zero=True)
        check_positive("checkpoint_s", self.checkpoint_s)
        step = check_positive("step_s", self.step_s)
        ta = check_positive("allreduce_s", self.allreduce_s, allow_zero=True)
        if ta >= step:
            raise ValueError(f"allreduce_s must be in [0, step_s) = [0, {step:g}) (step = compute "
                             f"+ all-reduce), got {ta:g}")
        check_positive("weibull_shape", self.weibull_shape)
        if self.failure_dist not in FAILURE_DISTRIBUTIONS:
            raise ValueError(f"failure_dist must be one of {FAILURE_DISTRIBUTIONS}, "
                             f"got {self.failure_dist!r}")
        n = gpus // m
        if isinstance(self.domain_size, bool) or not isinstance(self.domain_size, (int, np.integer)) \
                or not 1 <= int(self.domain_size) <= n:
            raise ValueError(f"domain_size must be an integer in [1, N] = [1, {n}], "
                             f"got {self.domain_size!r}")
        check_probability("domain_fault_share", self.domain_fault_share)

    @property
    def correlated(self) -> bool:
        """Failure domains matter: D > 1 and q > 0."""
        return self.domain_size > 1 and self.domain_fault_share > 0

    @property
    def N(self) -> int:
        """Data-parallel groups N = ⌊gpus / gpus_per_group⌋ (:func:`~spare_lib.cluster.cluster_groups`)."""
        return self.gpus // self.gpus_per_group

    @property
    def idle_gpus(self) -> int:
        """GPUs left over when ``gpus_per_group`` does not divide ``gpus`` (they stay idle)."""
        return self.gpus - self.N * self.gpus_per_group

    @property
    def compute_per_stack_s(self) -> float:
        """Compute time of one stack entry: step_s − T_a."""
        return self.step_s - self.allreduce_s

    def step_time_s(self, overhead: float) -> float:
        """Mean failure-free step time at mean stack depth ``overhead``: S̄·compute + T_a."""
        return overhead * self.compute_per_stack_s + self.allreduce_s

    def cluster_config(self, steps: int = 10_000, **overrides: Any) -> ClusterConfig:
        """The simulator's :class:`~spare_lib.cluster.ClusterConfig` for this cluster.

        The failure law is this cluster's; jitter, the shrink time and the all-reduce factor keep
        the 600k-H100 preset's values unless overridden.
        """
        fields = {"steps": steps, "compute_per_stack_s": self.compute_per_stack_s,
                  "allreduce_s": self.allreduce_s, "restart_s": self.restart_s,
                  "checkpoint_s": self.checkpoint_s, "system_mtbf_s": self.system_mtbf_s,
                  "n_gpus": self.gpus, "weibull_shape": self.weibull_shape,
                  "failure_dist": self.failure_dist, "domain_size": self.domain_size,
                  "domain_fault_share": self.domain_fault_share, **dict(self.run)}
        return ClusterConfig(**{**fields, **overrides})

    def knob(self, name: str) -> Any:
        """A run knob of :data:`RUN_KNOBS`: this spec's value, else the registry default."""
        return dict(self.run).get(name, KNOBS[name].default)


def cluster_spec(gpus: int = KNOBS["gpus"].default,
                 gpus_per_group: int = KNOBS["gpus_per_group"].default, *,
                 system_mtbf_s: float | None = None,
                 gpu_mtbf_s: float | None = None,
                 restart_s: float = KNOBS["restart_s"].default,
                 checkpoint_s: float | None = None,
                 step_s: float | None = KNOBS["step_s"].default,
                 allreduce_s: float | None = None,
                 allreduce: str = KNOBS["allreduce"].default,
                 model_bytes: float = KNOBS["model_bytes"].default,
                 allreduce_bw_bytes_s: float = KNOBS["allreduce_bw_bytes_s"].default,
                 allreduce_latency_s: float = KNOBS["allreduce_latency_s"].default,
                 checkpoint_bw_bytes_s: float = KNOBS["checkpoint_bw_bytes_s"].default,
                 weibull_shape: float = KNOBS["weibull_shape"].default,
                 failure_dist: str = KNOBS["failure_dist"].default,
                 domain_size: int = KNOBS["domain_size"].default,
                 domain_fault_share: float = KNOBS["domain_fault_share"].default,
                 **run: Any) -> ClusterSpec:
    """Describe a cluster by its hardware; every time in seconds, defaults from the knob registry
    (:data:`spare_lib.registry.knobs.KNOBS`, ``docs/knobs.md``): the paper's 600k-H100 cluster.

    Parameters
    ----------
    gpus : int
        GPUs of the cluster, ≥ 2.
    gpus_per_group : int
        GPUs per data-parallel group, in [1, gpus/2] (N ≥ 2 groups). N = ⌊gpus / M⌋; when M
        does not divide ``gpus`` the leftover GPUs stay idle (:attr:`ClusterSpec.idle_gpus`).
    system_mtbf_s : float or None
        System MTBF m. None: derived, m = gpu_mtbf_s / (N·M) over the N·M working GPUs (a
        failure kills its group; idle GPUs do not count). Excludes ``gpu_mtbf_s``.
    gpu_mtbf_s : float or None
        Per-GPU MTBF; None: the registry's 1.8e8 s (50,000 h: the paper's m = 5 min at 600k GPUs).
    restart_s : float
        Global restart time T_r (≥ 0).
    checkpoint_s : float or None
        Checkpoint write time T_s (≥ 0); None: model_bytes / checkpoint_bw_bytes_s (2e13 B at
        340 GB/s ≈ 58.8 s).
    step_s : float or None
        Failure-free step time (compute per stack + T_a); None: 64 s + T_a.
    allreduce_s : float or None
        All-reduce time T_a, in [0, step_s); None: from ``allreduce``.
    allreduce : {'ring', 'rabenseifner', 'tree', 'preset'}
        How T_a is derived when ``allreduce_s`` is None: the α–β all-reduce models of
        :func:`~spare_lib.cluster.allreduce_time_s` among N groups of ``model_bytes`` / M bytes
        per GPU (the ring gives 1.993 / 5.999 / 10.005 s at the paper's N; docs/scale.md), or
        'preset', the 600k-H100 preset's N/100 s (2 / 6 / 10 s at N = 200 / 600 / 1000;
        meaningless far from 600k GPUs).
    model_bytes, allreduce_bw_bytes_s, allreduce_latency_s : float
        Gradient bytes all-reduced per step, the all-reduce bandwidth per GPU and latency.
    checkpoint_bw_bytes_s : float
        Aggregate checkpoint write bandwidth (T_s when ``checkpoint_s`` is None).
    weibull_shape, failure_dist :
        The per-group failure law of the simulation (same mean either way).
    domain_size, domain_fault_share :
        Failure domains of D groups and the share q of failure events that kill a whole domain
        (:class:`ClusterSpec`); defaults 1 and 0: independent failures.
    **run :
        Run knobs of :data:`RUN_KNOBS` (``stall_s``, ``rejoin_s``, ...); None values are left at
        the registry's default.

    Examples
    --------
    >>> s = cluster_spec(600_000, 3000, system_mtbf_s=300, step_s=66, allreduce="preset")
    >>> s.N, s.allreduce_s, s.compute_per_stack_s
    (200, 2.0, 64.0)
    >>> b = cluster_spec(1_000_000, 128)
    >>> b.N, b.idle_gpus, round(b.system_mtbf_s), round(b.allreduce_s, 1)
    (7812, 64, 180, 47.0)
    """
    gpus = KNOBS["gpus"].check(gpus)
    gpg = _check_group_size(gpus, gpus_per_group)
    N = gpus // gpg
    m = _system_mtbf(system_mtbf_s, gpu_mtbf_s, N * gpg)
    allreduce = KNOBS["allreduce"].check(allreduce)
    model_bytes = KNOBS["model_bytes"].check(model_bytes)
    ta = _allreduce_s(allreduce_s, allreduce, N, model_bytes / gpg, allreduce_bw_bytes_s,
                      allreduce_latency_s)
    if checkpoint_s is None:
        checkpoint_s = model_bytes / KNOBS["checkpoint_bw_bytes_s"].check(checkpoint_bw_bytes_s)
    if step_s is None:
        step_s = KNOBS["compute_per_stack_s"].default + ta
    step_s = KNOBS["step_s"].check(step_s)
    if allreduce_s is None and ta >= step_s:
        what = "N/100" if allreduce == "preset" else f"the {allreduce} all-reduce model"
        raise ValueError(f"step_s must exceed the default all-reduce time T_a = {what} = {ta:g} s; "
                         f"got {step_s:g} (give allreduce_s explicitly)")
    return ClusterSpec(gpus=gpus, gpus_per_group=gpg, system_mtbf_s=m,
                       restart_s=KNOBS["restart_s"].check(restart_s),
                       checkpoint_s=KNOBS["checkpoint_s"].check(checkpoint_s), step_s=step_s,
                       allreduce_s=ta, weibull_shape=KNOBS["weibull_shape"].check(weibull_shape),
                       failure_dist=failure_dist, domain_size=domain_size,
                       domain_fault_share=domain_fault_share,
                       run=tuple((k, v) for k, v in run.items() if v is not None))


def _system_mtbf(system_mtbf_s: float | None, gpu_mtbf_s: float | None, working: int) -> float:
    """m: ``system_mtbf_s``, or the per-GPU MTBF over the ``working`` GPUs (validated)."""
    if system_mtbf_s is not None and gpu_mtbf_s is not None:
        raise ValueError("give system_mtbf_s or gpu_mtbf_s, not both")
    if system_mtbf_s is not None:
        return KNOBS["system_mtbf_s"].check(system_mtbf_s)
    g = KNOBS["gpu_mtbf_s"].check(KNOBS["gpu_mtbf_s"].default if gpu_mtbf_s is None
                                  else gpu_mtbf_s)
    m = g / working
    if not KNOBS["system_mtbf_s"].lo <= m <= KNOBS["system_mtbf_s"].hi:
        raise ValueError(f"gpu_mtbf_s gives a system MTBF m = gpu_mtbf_s / {working} working "
                         f"GPUs = {m:.3g} s, outside {KNOBS['system_mtbf_s'].range_text()} s; "
                         f"got gpu_mtbf_s = {g:g}")
    return m


def _allreduce_s(allreduce_s: float | None, allreduce: str, N: int, bytes_per_gpu: float,
                 bw_bytes_s: float, latency_s: float) -> float:
    """T_a: ``allreduce_s``, the preset N/100 s, or the α–β model ``allreduce``."""
    if allreduce_s is not None:
        return KNOBS["allreduce_s"].check(allreduce_s)
    if allreduce == "preset":
        return allreduce_600k_s(N)
    return allreduce_time_s(N, bytes_per_gpu, allreduce,
                            bw_bytes_s=KNOBS["allreduce_bw_bytes_s"].check(bw_bytes_s),
                            latency_s=KNOBS["allreduce_latency_s"].check(latency_s))


__all__ = ["MAX_PLAN_N", "RUN_KNOBS", "WORLD_KNOBS", "ClusterSpec", "cluster_spec"]
