"""Joint optimisation of the redundancy r and the checkpoint period for a cluster (SPEC §7).

Given a cluster description — #GPUs, GPUs per data-parallel group (hence N groups), the system
MTBF m (or a per-GPU MTBF, m = MTBF_GPU / #GPUs), the restart time T_r, the checkpoint write time
T_s and the failure-free step time — :func:`plan` returns, for SPARe+CKPT, Rep+CKPT and
CKPT-only, the redundancy that minimises the predicted time-to-train, the availability-optimal
checkpoint period T_c* (seconds and steps), the predicted availability A* and TTT/T0, all from the
closed forms of :mod:`spare_lib.theory`:

* the mean number of failures between global restarts μ: SPARe ``mu_finite`` (finite-N, < 0.3 %
  from Monte Carlo; default) or the paper's Γ form ``mu_closed``; Rep ``replication_mu`` (exact,
  ⌊N/r⌋ disjoint sets of r); CKPT-only 1;
* the time between restarts T_f = μ·m, T_c* = T_s + sqrt(T_s² + 2 T_s (T_f + T_r)) and
  A* = A(T_c*) (Eq. 2, ``checkpoint_period_opt`` and ``availability_opt``);
* the compute overhead S̄ (SPARe: ``overhead_finite`` by default or the paper's Eq. 5
  ``overhead_mean``; Rep: r; CKPT-only: 1) and J = S̄ / A* (Eq. 7, ``ttt_normalized``).

The step time is split as in the 600k-H100 preset: step_s = compute per stack + T_a, with the
all-reduce time T_a = N/100 s unless given (:func:`spare_lib.cluster.allreduce_600k_s`; exact at
the paper's N = 200, 600, 1000, where step_s = 66, 70, 74 s gives 64 s of compute). Eq. 7 scales
the whole step by S̄ as the paper does; the checkpoint period in steps divides T_c* by the mean
step time at that depth, S̄·compute + T_a.

:func:`plan_simulated` runs the discrete-event simulator (:func:`spare_lib.cluster.runs.simulate.simulate`)
for every candidate r at the closed-form checkpoint interval, then for a few multiples of that
interval at the best r, through :func:`spare_lib.cluster.runs.sweeps.run_sweep` (local process pool, seeds
derived from each point with :func:`spare_lib.cluster.runs.sweeps.point_seed`). It reports mean and spread per
(method, r, interval), the r and interval recommended by the simulation and how far they are from
the closed form's. The paper's own closed form and simulation disagree on r* (8/10/10 vs 9/8/9).

Example
-------
>>> spec = cluster_spec(600_000, 1000, system_mtbf_s=300, restart_s=3600, checkpoint_s=58.8,
...                     step_s=70, allreduce="preset")
>>> p = plan(spec)
>>> p.spare.r, p.rep.r, round(p.spare.availability, 3)
(8, 2, 0.919)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from spare_lib import theory as th
from spare_lib._util.validate import check_int, check_positive, check_probability
from spare_lib.cluster.config import (
    ALLREDUCE_ALGORITHMS,
    FAILURE_DISTRIBUTIONS,
    ClusterConfig,
    allreduce_600k_s,
    allreduce_time_s,
    analytic_checkpoint_interval,
)
from spare_lib.cluster.planning.layouts import (
    LAYOUTS,
    _domain_notes,
    _spare_mu_overhead_layout,
)
from spare_lib.registry.knobs import KNOBS
from spare_lib.stacking.layout import max_ruler_r

METHODS = ("spare", "rep", "ckpt")


#: Rep's replica sets: r consecutive groups, or groups ceil(N/r) apart (across failure domains).
REP_PLACEMENTS = ("consecutive", "strided")


#: How :func:`cluster_spec` derives T_a: the 600k-H100 preset N/100 s or an all-reduce model.
ALLREDUCE_CHOICES = ("preset", *ALLREDUCE_ALGORITHMS)


LABELS = {"spare": "SPARe+CKPT", "rep": "Rep+CKPT", "ckpt": "CKPT-only"}
#: Closed-form models of SPARe's μ and S̄: name -> (mu_model, overhead_model, description).
MODELS: dict[str, tuple[str, str, str]] = {
    "finite": ("finite", "finite",
               "mu = theory.mu_finite (finite N, ruler layout; < 0.3 % from Monte Carlo), "
               "S-bar = theory.overhead_finite (renewal-reward, finite-N law of K)"),
    "paper": ("closed", "eq5",
              "mu = theory.mu_closed, Gamma(1+1/r) N^(1-1/r) (the paper's), "
              "S-bar = theory.overhead_mean (Eq. 5)"),
    "predict": ("predict", "predict",
                "theory.predict, the semi-analytic time-to-train model (barrier over N jittered "
                "groups, restart windows, renewed Weibull clocks, rework, failure events with "
                "patch compute; docs/predictive_model.md); C per r is the model's argmin "
                "(theory.predict_grid.optimise_checkpoint)"),
}
#: SPARe layouts the predictive model covers (the others fall back to the finite closed forms).
PREDICT_LAYOUTS = ("ruler", "consecutive")
#: Run length (committed steps) the predictive model plans for unless told otherwise.
PLAN_STEPS = 10_000


#: Default wall-clock cap of one simulated run, in units of T0 (CKPT-only may never finish).
MAX_WALL_T0 = 50.0


#: Default half-width of the SPARe window simulated around the closed-form r*.
SPARE_WINDOW = 3


#: Default Rep+CKPT redundancies simulated (the closed-form optimum is always added), clipped to
#: [2, N].
REP_R = (2, 3, 4, 5)


def rep_r_max(N: int) -> int:
    """Largest Rep+CKPT r on the closed-form curve: min(N, max(largest ruler r, 5)).

    Any 2 ≤ r ≤ N is a valid replica-set size (``closed_form_point`` and the simulator take it),
    but the curve stops here: Rep's overhead is r, so larger sets never win.
    """
    N = check_int("N", N, lo=2)
    return min(N, max(max_ruler_r(N), 5))


#: Default multipliers of the closed-form checkpoint interval simulated at the best r (stage 2 of
#: :func:`plan_simulated`).
CKPT_FACTORS = (0.5, 0.75, 1.5, 2.0)


#: ClusterConfig knobs a :class:`ClusterSpec` may carry besides its hardware-derived times.
RUN_KNOBS = ("stall_s", "rejoin_s", "rejoin_stall_s", "microbatches", "fetch_s", "jitter_sigma",
             "allreduce_fail_factor")


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
        and do: ``stall_s``, ``rejoin_s``, ``rejoin_stall_s``, ``microbatches``, ``fetch_s``),
        sorted by name; empty: the registry's defaults.
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
        run = dict(self.run)
        for k, v in run.items():
            if k not in RUN_KNOBS:
                raise ValueError(f"run must set knobs among {RUN_KNOBS}, got {k!r}")
            run[k] = KNOBS[k].check(v)
        object.__setattr__(self, "run", tuple(sorted(run.items())))
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
                 checkpoint_s: float = KNOBS["checkpoint_s"].default,
                 step_s: float | None = KNOBS["step_s"].default,
                 allreduce_s: float | None = None,
                 allreduce: str = KNOBS["allreduce"].default,
                 model_bytes: float = KNOBS["model_bytes"].default,
                 allreduce_bw_bytes_s: float = KNOBS["allreduce_bw_bytes_s"].default,
                 allreduce_latency_s: float = KNOBS["allreduce_latency_s"].default,
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
    checkpoint_s : float
        Checkpoint write time T_s (2e13 B at 340 GB/s ≈ 58.8 s).
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
    if system_mtbf_s is not None and gpu_mtbf_s is not None:
        raise ValueError("give system_mtbf_s or gpu_mtbf_s, not both")
    if system_mtbf_s is not None:
        m = KNOBS["system_mtbf_s"].check(system_mtbf_s)
    else:
        g = KNOBS["gpu_mtbf_s"].check(KNOBS["gpu_mtbf_s"].default if gpu_mtbf_s is None
                                      else gpu_mtbf_s)
        m = g / (N * gpg)
        if not KNOBS["system_mtbf_s"].lo <= m <= KNOBS["system_mtbf_s"].hi:
            raise ValueError(f"gpu_mtbf_s gives a system MTBF m = gpu_mtbf_s / {N * gpg} working "
                             f"GPUs = {m:.3g} s, outside {KNOBS['system_mtbf_s'].range_text()} s; "
                             f"got gpu_mtbf_s = {g:g}")
    allreduce = KNOBS["allreduce"].check(allreduce)
    model_bytes = KNOBS["model_bytes"].check(model_bytes)
    if allreduce_s is not None:
        ta = KNOBS["allreduce_s"].check(allreduce_s)
    elif allreduce == "preset":
        ta = allreduce_600k_s(N)
    else:
        ta = allreduce_time_s(N, model_bytes / gpg, allreduce,
                              bw_bytes_s=KNOBS["allreduce_bw_bytes_s"].check(allreduce_bw_bytes_s),
                              latency_s=KNOBS["allreduce_latency_s"].check(allreduce_latency_s))
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


@dataclass(frozen=True)
class ClosedFormPoint:
    """Closed-form prediction for one (method, r) at its optimal checkpoint period.

    Attributes
    ----------
    method, label : str
        'spare' / 'rep' / 'ckpt' and the paper's name (SPARe+CKPT, Rep+CKPT, CKPT-only).
    r : int
        Redundancy (Rep: replica-set size; CKPT-only: 1).
    mu : float
        Mean failures between global restarts μ.
    restart_interval_s : float
        T_f = μ·m, mean time between global restarts.
    overhead : float
        Mean stacks computed per group per step (S̄; r for Rep; 1 for CKPT-only).
    step_time_s : float
        Mean failure-free step time at that overhead, S̄·compute + T_a.
    checkpoint_period_s : float
        T_c* (Eq. 2 optimum).
    checkpoint_steps : int
        max(1, round(T_c* / step_time_s)): the interval the simulator uses.
    availability : float
        A* = A(T_c*) (Eq. 2).
    ttt_over_t0 : float
        J = overhead / A* (Eq. 7).
    """

    method: str
    label: str
    r: int
    mu: float
    restart_interval_s: float
    overhead: float
    step_time_s: float
    checkpoint_period_s: float
    checkpoint_steps: int
    availability: float
    ttt_over_t0: float


@dataclass(frozen=True)
class Plan:
    """Closed-form recommendation for a cluster (:func:`plan`).

    Attributes
    ----------
    cluster : ClusterSpec
    model : str
        'finite', 'paper' or 'predict' (see :data:`MODELS`); ``model_note`` says which
        functions were used.
    spare, rep, ckpt : ClosedFormPoint
        The optimum of each method.
    curve : tuple of ClosedFormPoint
        Every candidate evaluated: SPARe r = 2..r_max, Rep r = 2..rep_r_max, CKPT-only.
    r_max : int
        Largest SPARe r: of the ruler layout at this N (``layout.max_ruler_r``; 12/20/26 at
        N = 200/600/1000; 2 for N ≤ 5); with ``layout='domain-aware'`` the largest r on the curve.
    rep_r_max : int
        Largest Rep r on the curve (:func:`rep_r_max`); :meth:`point` evaluates any r ≤ N.
    gain_vs_rep, gain_vs_ckpt : float
        1 − J(SPARe*)/J(Rep*) and 1 − J(SPARe*)/J(CKPT-only).
    r_star_paper : int
        argmin of the paper's Eq. 7 (μ Γ form, Eq. 5), whatever ``model`` is.
    r_star_log2 : int
        ⌊log2 N + 0.833⌋ (``theory.r_star_closed``).
    layout, rep_placement : str
        SPARe's layout (:data:`LAYOUTS`) and Rep's replica sets (:data:`REP_PLACEMENTS`).
    skipped_r : tuple of int
        SPARe r in 2..r_max left off the curve because the domain-aware layout does not exist.
    notes : tuple of str
        What the closed forms assume about failure domains and the layout (printed by the CLI).
    steps : int
        Committed steps planned for (the predictive model depends on the run length).
    """

    cluster: ClusterSpec
    model: str
    model_note: str
    spare: ClosedFormPoint
    rep: ClosedFormPoint
    ckpt: ClosedFormPoint
    curve: tuple[ClosedFormPoint, ...]
    r_max: int
    gain_vs_rep: float
    gain_vs_ckpt: float
    r_star_paper: int
    r_star_log2: int
    rep_r_max: int = 0
    layout: str = "ruler"
    rep_placement: str = "consecutive"
    skipped_r: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    steps: int = PLAN_STEPS

    def point(self, method: str, r: int) -> ClosedFormPoint:
        """The candidate (method, r) of :attr:`curve`, or a Rep r ≤ N evaluated on demand;
        ValueError for anything else."""
        for p in self.curve:
            if p.method == method and p.r == r:
                return p
        if method == "rep" and isinstance(r, int) and 2 <= r <= self.cluster.N:
            return closed_form_point(self.cluster, "rep", r, self.model, steps=self.steps)
        raise ValueError(f"(method, r) must be a candidate of this plan, got ({method!r}, {r}); "
                         f"r must be in [2, {self.r_max}] for spare, [2, {self.cluster.N}] for rep, "
                         "1 for ckpt")

    def at_interval(self, method: str, r: int, C: int) -> tuple[float, float]:
        """(TTT/T0, availability) of (method, r) checkpointing every C steps: the predictive
        model evaluated at C with ``model='predict'``; the closed forms' optimum otherwise (their
        Eq. 7 value is quoted at T_c*)."""
        p = self.point(method, r)
        if self.model != "predict" or int(C) == p.checkpoint_steps \
                or not math.isfinite(p.ttt_over_t0):
            return p.ttt_over_t0, p.availability
        q = _predict_at(self.cluster, method, int(r), self.layout if method == "spare"
                        else "ruler", self.steps, int(C))
        return q.ttt_over_t0, q.availability

    @property
    def source(self) -> str:
        """How the plan's numbers are named in messages: 'model' (predict) or 'closed form'."""
        return "model" if self.model == "predict" else "closed form"

    @property
    def best(self) -> ClosedFormPoint:
        """The method with the lowest closed-form TTT/T0 (SPARe, Rep or CKPT-only)."""
        return min((self.spare, self.rep, self.ckpt), key=lambda p: p.ttt_over_t0)

    def r_star_note(self) -> str:
        """Why the paper's two r* (argmin of its Eq. 7, and the log2 rule) may differ."""
        a, b = self.r_star_paper, self.r_star_log2
        if a == b:
            return "the two agree"
        why = ["the log2 rule comes from mu(N, r*) ~ N/2 and ignores this cluster's times "
               "(m, T_r, T_s), which Eq. 7 weighs"]
        if b > self.r_max:
            why.append(f"and lies above the largest ruler r at N = {self.cluster.N} "
                       f"(r_max = {self.r_max}), the top of the range Eq. 7 is minimised over")
        return "they differ: " + " ".join(why)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (N and compute time added to the cluster)."""
        d = _clean(dataclasses.asdict(self))
        d["cluster"].update(N=self.cluster.N, compute_per_stack_s=self.cluster.compute_per_stack_s)
        return d


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, np.generic):
        return _clean(v.item())
    return v


def _check_model(model: str) -> tuple[str, str, str]:
    if model not in MODELS:
        raise ValueError(f"model must be one of {tuple(MODELS)}, got {model!r}")
    return MODELS[model]


@lru_cache(maxsize=4096)
def _spare_mu_overhead(N: int, r: int, model: str) -> tuple[float, float]:
    """μ(N, r) and S̄(N, r) of SPARe (ruler layout); cached: they do not depend on times."""
    mu_model, ovh_model, _ = _check_model(model)
    if mu_model == "finite":
        mu = float(th.mu_finite(N, r))
    else:
        mu = float(th.mu_closed(N, r))
    if ovh_model == "finite":
        s_bar = th.overhead_finite(N, r)
    else:
        s_bar = float(th.overhead_mean(N, r, mu=mu))
    return mu, float(s_bar)




def closed_form_point(spec: ClusterSpec, method: str, r: int, model: str = "finite",
                      layout: str = "ruler", steps: int = PLAN_STEPS) -> ClosedFormPoint:
    """Closed-form TTT/T0, availability and checkpoint period of one (method, r).

    Parameters
    ----------
    spec : ClusterSpec
        The cluster.
    method : {'spare', 'rep', 'ckpt'}
        SPARe+CKPT, Rep+CKPT or CKPT-only.
    r : int
        SPARe: 1 ≤ r ≤ ``max_ruler_r(N)`` (ruler layout); Rep: 1 ≤ r ≤ N; CKPT-only: 1.
    model : {'finite', 'paper', 'predict'}
        SPARe's μ and S̄ (see :data:`MODELS`; Rep and CKPT-only are the same in both closed
        forms), or 'predict': the predictive model of ``theory.predict`` for every method, at
        the checkpoint interval that minimises its TTT/T0 (independent failures and the ruler or
        consecutive layout only: ValueError otherwise).
    layout : {'ruler', 'domain-aware', 'consecutive'}
        SPARe's layout. With the ruler and independent failures (q = 0 or D = 1) ``model``
        decides; otherwise μ and S̄ are those of the layout: ``theory.mu_correlated`` and
        ``overhead_correlated`` when ``spec.correlated``, else ``mu_finite`` and
        ``overhead_finite`` of the layout; where neither handles the layout (too many domains
        for the transfer matrix, or two types sharing two holders), μ is a seeded Monte Carlo
        mean (:data:`MC_MU_TRIALS` sequences) and S̄ ``overhead_correlated``. Rep and
        CKPT-only ignore it (and the domains: Rep's μ assumes independent failures; CKPT-only
        restarts at every failure event either way).

    steps : int
        Committed steps of the run (``model='predict'`` only: the first cycle with fresh clocks
        and the final partial cycle depend on it).

    Returns
    -------
    ClosedFormPoint
        T_f = μ·m, T_c* = T_s + sqrt(T_s² + 2 T_s (T_f + T_r)), A* = A(T_c*) (Eq. 2) and
        J = S̄/A* (Eq. 7). With ``model='predict'``: the model's μ (mean failures per restart
        cycle), T_f its mean uptime per steady cycle, S̄ its mean depth, the step time its
        mean committed step (failure events included), C its argmin and C·step time as the
        period, its availability and TTT/T0; TTT/T0 = inf and availability 0 when the model
        finds the cluster never trains (:class:`~spare_lib.theory.predict.NoTrainingCycle`).
    """
    if not isinstance(spec, ClusterSpec):
        raise ValueError(f"spec must be a ClusterSpec (see cluster_spec), "
                         f"got {type(spec).__name__}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    N = spec.N
    if model == "predict":
        if spec.correlated:
            raise ValueError("model='predict' models independent failures only: "
                             "domain_fault_share must be 0 or domain_size 1 (use model='finite')")
        if method == "spare" and layout not in PREDICT_LAYOUTS:
            raise ValueError(f"layout must be one of {PREDICT_LAYOUTS} with model='predict', "
                             f"got {layout!r}")
        hi = max_ruler_r(N) if method == "spare" else (N if method == "rep" else 1)
        r = check_int("r", r, lo=1, hi=hi)
        return _predict_point(spec, method, r, layout if method == "spare" else "ruler",
                              check_int("steps", steps, lo=1))
    if method == "spare":
        r = check_int("r", r, lo=1, hi=max_ruler_r(N))
        if layout == "ruler" and not spec.correlated:
            mu, overhead = _spare_mu_overhead(N, r, model)
        else:
            _check_model(model)
            mu, overhead, _ = _spare_mu_overhead_layout(N, r, layout, int(spec.domain_size),
                                                        float(spec.domain_fault_share))
    elif method == "rep":
        _check_model(model)
        r = check_int("r", r, lo=1, hi=N)
        mu, overhead = float(th.replication_mu(N, r)), float(r)
    else:
        _check_model(model)
        r = check_int("r", r, lo=1, hi=1)
        mu, overhead = 1.0, 1.0
    t_f = mu * spec.system_mtbf_s
    ts, tr = spec.checkpoint_s, spec.restart_s
    tc = float(th.checkpoint_period_opt(ts, t_f, tr))
    avail = float(th.availability_opt(ts, t_f, tr))
    step = spec.step_time_s(overhead)
    c_steps = analytic_checkpoint_interval(t_f, step, spec.cluster_config())
    return ClosedFormPoint(method=method, label=LABELS[method], r=r, mu=mu,
                           restart_interval_s=t_f, overhead=overhead, step_time_s=step,
                           checkpoint_period_s=tc, checkpoint_steps=c_steps, availability=avail,
                           ttt_over_t0=overhead / avail)


@lru_cache(maxsize=4096)
def _predict_point(spec: ClusterSpec, method: str, r: int, layout: str,
                   steps: int) -> ClosedFormPoint:
    from spare_lib.theory.predict import NoTrainingCycle
    from spare_lib.theory.predict_grid import optimise_checkpoint

    try:
        C, p = optimise_checkpoint(method, spec.N, r, spec.cluster_config(steps=steps),
                                   layout=layout)
    except NoTrainingCycle:  # never trains: every cycle is wiped out at its first poll
        return ClosedFormPoint(method=method, label=LABELS[method], r=r, mu=1.0,
                               restart_interval_s=0.0, overhead=float(r) if method != "spare"
                               else 1.0, step_time_s=spec.step_s, checkpoint_period_s=spec.step_s,
                               checkpoint_steps=1, availability=0.0, ttt_over_t0=math.inf)
    return ClosedFormPoint(method=method, label=LABELS[method], r=r, mu=p.failures_per_cycle,
                           restart_interval_s=p.uptime_s, overhead=p.overhead,
                           step_time_s=p.step_s, checkpoint_period_s=C * p.step_s,
                           checkpoint_steps=int(C), availability=p.availability,
                           ttt_over_t0=p.ttt_over_t0)


@lru_cache(maxsize=4096)
def _predict_at(spec: ClusterSpec, method: str, r: int, layout: str, steps: int,
                C: int) -> Any:
    from spare_lib.theory.predict import predict

    return predict(method, spec.N, r, C, spec.cluster_config(steps=steps), layout=layout)


def plan(spec: ClusterSpec, model: str = "finite", r_max: int | None = None, *,
         layout: str = "ruler", rep_placement: str = "consecutive",
         steps: int = PLAN_STEPS) -> Plan:
    """Closed-form joint optimum of r and the checkpoint period for SPARe, Rep and CKPT-only.

    For every r the checkpoint period is the availability optimum T_c*(T_f = μ·m) of Eq. 2; the
    recommended r minimises J(r) = S̄(N, r)/A*(μ(N, r)·m) (Eq. 7) over r = 2..r_max (SPARe,
    Rep), CKPT-only has r = 1. Cost: O(r_max) closed-form evaluations, each O(N) (≈ 0.1 s at
    N = 1000, ≈ 0.5 s at N = 10⁵ the first time, cached afterwards; above N = 2048 the
    consecutive-layout count of ``theory.finite`` switches from exact integers to a float
    closed form (r = 2), see ``theory.finite.EXACT_N_MAX``).

    Parameters
    ----------
    spec : ClusterSpec
        The cluster (:func:`cluster_spec`).
    model : {'finite', 'paper', 'predict'}
        'finite' (default, the better closed form: ``mu_finite`` and ``overhead_finite``),
        'paper' (``mu_closed`` and Eq. 5, the paper's formulas) or 'predict' (the predictive
        model ``theory.predict``, which agrees with the simulator; r and C are its argmins; it
        is what ``spare plan`` uses by default). 'predict' does not model failure domains or
        the domain-aware layout: there the plan falls back to 'finite' and says so in
        :attr:`Plan.notes`.
    r_max : int or None
        Largest SPARe r considered; None: ``max_ruler_r(N)``, the largest r of the ruler layout
        (12, 20, 26 at N = 200, 600, 1000; 2 for N ≤ 5). At most ``max_ruler_r(N)``. Rep runs
        over r = 2..:func:`rep_r_max`.
    layout : {'ruler', 'domain-aware', 'consecutive'}
        SPARe's layout (:func:`closed_form_point`). 'domain-aware' skips the r for which the
        layout does not exist (:attr:`Plan.skipped_r`); ValueError naming ``domain_size`` when
        it exists for none.
    rep_placement : {'consecutive', 'strided'}
        Rep's replica sets; recorded for the simulation (the closed form is the same).
    steps : int
        Committed steps of the run (``model='predict'``).

    Returns
    -------
    Plan

    Examples
    --------
    >>> p = plan(cluster_spec(600_000, 3000, system_mtbf_s=300, step_s=66, allreduce="preset"))
    >>> p.spare.r, plan(p.cluster, model="paper").spare.r, p.r_star_log2
    (7, 8, 8)
    """
    if not isinstance(spec, ClusterSpec):
        raise ValueError(f"spec must be a ClusterSpec (see cluster_spec), "
                         f"got {type(spec).__name__}")
    _, _, note = _check_model(model)
    steps = check_int("steps", steps, lo=1)
    fallback: tuple[str, ...] = ()
    if model == "predict" and (spec.correlated or layout not in PREDICT_LAYOUTS):
        why = ("failure domains" if spec.correlated else f"the {layout} layout")
        fallback = (f"the predictive model does not cover {why}: the 'finite' closed forms "
                    "are used instead",)
        model = "finite"
        note = MODELS[model][2]
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {list(LAYOUTS)}, got {layout!r}")
    if rep_placement not in REP_PLACEMENTS:
        raise ValueError(f"rep_placement must be one of {list(REP_PLACEMENTS)}, got {rep_placement!r}")
    N = spec.N
    top = max_ruler_r(N)
    if top < 2:  # pragma: no cover - ClusterSpec guarantees N >= 2
        raise ValueError(f"N = gpus / gpus_per_group must be >= 2 groups, got {N}")
    r_max = top if r_max is None else check_int("r_max", r_max, lo=2, hi=top)
    rs = range(2, r_max + 1)
    rep_top = rep_r_max(N)
    spare, skipped = [], []
    for r in rs:
        try:
            spare.append(closed_form_point(spec, "spare", r, model, layout, steps))
        except ValueError:
            if layout != "domain-aware":
                raise
            skipped.append(r)
    if not spare:
        D = spec.domain_size
        raise ValueError(f"domain_size must be in [1, {(N - 1) // 2}] for layout='domain-aware' at "
                         f"N = {N} (r >= 2 holders in distinct domains of D groups exist for no r "
                         f"in 2..{r_max}), got {D}")
    r_max = spare[-1].r
    rs = [p.r for p in spare]
    rep = [closed_form_point(spec, "rep", r, model, steps=steps) for r in range(2, rep_top + 1)]
    ckpt = closed_form_point(spec, "ckpt", 1, model, steps=steps)
    best_s = min(spare, key=lambda p: p.ttt_over_t0)
    best_r = min(rep, key=lambda p: p.ttt_over_t0)
    paper_j = [(_spare_point_j(spec, r, "paper"), r) for r in rs]
    return Plan(cluster=spec, model=model, model_note=note, spare=best_s, rep=best_r, ckpt=ckpt,
                curve=(*spare, *rep, ckpt), r_max=r_max,
                gain_vs_rep=1.0 - best_s.ttt_over_t0 / best_r.ttt_over_t0,
                gain_vs_ckpt=1.0 - best_s.ttt_over_t0 / ckpt.ttt_over_t0,
                r_star_paper=min(paper_j)[1], r_star_log2=int(th.r_star_closed(N)),
                rep_r_max=rep_top, layout=layout, rep_placement=rep_placement,
                skipped_r=tuple(skipped), notes=fallback + _domain_notes(spec, layout, rs),
                steps=steps)




def _spare_point_j(spec: ClusterSpec, r: int, model: str) -> float:
    return closed_form_point(spec, "spare", r, model).ttt_over_t0
