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

:func:`plan_simulated` runs the discrete-event simulator (:func:`spare_lib.simulate.simulate`)
for every candidate r at the closed-form checkpoint interval, then for a few multiples of that
interval at the best r, through :func:`spare_lib.sweep.run_sweep` (local process pool, seeds
derived from each point with :func:`spare_lib.sweep.point_seed`). It reports mean and spread per
(method, r, interval), the r and interval recommended by the simulation and how far they are from
the closed form's. The paper's own closed form and simulation disagree on r* (8/10/10 vs 9/8/9).

Example
-------
>>> spec = cluster_spec(600_000, 1000, system_mtbf_min=5, restart_min=60, checkpoint_s=58.8,
...                     step_s=70)
>>> p = plan(spec)
>>> p.spare.r, p.rep.r, round(p.spare.availability, 3)
(8, 2, 0.919)
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from . import theory as th
from ._validate import check_int, check_positive
from .cluster import ClusterConfig, allreduce_600k_s, analytic_checkpoint_interval
from .layout import max_ruler_r

METHODS = ("spare", "rep", "ckpt")
LABELS = {"spare": "SPARe+CKPT", "rep": "Rep+CKPT", "ckpt": "CKPT-only"}
#: Closed-form models of SPARe's μ and S̄: name -> (mu_model, overhead_model, description).
MODELS: dict[str, tuple[str, str, str]] = {
    "finite": ("finite", "finite",
               "mu = theory.mu_finite (finite N, ruler layout; < 0.3 % from Monte Carlo), "
               "S-bar = theory.overhead_finite (renewal-reward, finite-N law of K)"),
    "paper": ("closed", "eq5",
              "mu = theory.mu_closed, Gamma(1+1/r) N^(1-1/r) (the paper's), "
              "S-bar = theory.overhead_mean (Eq. 5)"),
}
#: Default half-width of the SPARe window simulated around the closed-form r*.
SPARE_WINDOW = 3
#: Default Rep+CKPT redundancies simulated (the closed-form optimum is always added).
REP_R = (2, 3, 4, 5)
#: Default wall-clock cap of one simulated run, in units of T0 (CKPT-only may never finish).
MAX_WALL_T0 = 50.0
#: Default multipliers of the closed-form checkpoint interval simulated at the best r (stage 2 of
#: :func:`plan_simulated`).
CKPT_FACTORS = (0.5, 0.75, 1.5, 2.0)


# --------------------------------------------------------------------------------------------
# The cluster
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClusterSpec:
    """A cluster to plan for; times in seconds (build it with :func:`cluster_spec`).

    Attributes
    ----------
    gpus : int
        GPUs of the cluster.
    gpus_per_group : int
        GPUs M of one data-parallel group (one model replica); N = gpus / M.
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
    """

    gpus: int
    gpus_per_group: int
    system_mtbf_s: float
    restart_s: float
    checkpoint_s: float
    step_s: float
    allreduce_s: float

    def __post_init__(self) -> None:
        gpus = check_int("gpus", self.gpus, lo=2)
        m = check_int("gpus_per_group", self.gpus_per_group, lo=1, hi=gpus // 2)
        if gpus % m:
            raise ValueError(f"gpus_per_group must divide gpus = {gpus} (N = gpus / gpus_per_group "
                             f"groups), got {m}")
        check_positive("system_mtbf_s", self.system_mtbf_s)
        check_positive("restart_s", self.restart_s, allow_zero=True)
        check_positive("checkpoint_s", self.checkpoint_s)
        step = check_positive("step_s", self.step_s)
        ta = check_positive("allreduce_s", self.allreduce_s, allow_zero=True)
        if ta >= step:
            raise ValueError(f"allreduce_s must be in [0, step_s) = [0, {step:g}) (step = compute "
                             f"+ all-reduce), got {ta:g}")

    @property
    def N(self) -> int:
        """Data-parallel groups N = gpus / gpus_per_group."""
        return self.gpus // self.gpus_per_group

    @property
    def compute_per_stack_s(self) -> float:
        """Compute time of one stack entry: step_s − T_a."""
        return self.step_s - self.allreduce_s

    def step_time_s(self, overhead: float) -> float:
        """Mean failure-free step time at mean stack depth ``overhead``: S̄·compute + T_a."""
        return overhead * self.compute_per_stack_s + self.allreduce_s

    def cluster_config(self, steps: int = 10_000, **overrides: Any) -> ClusterConfig:
        """The simulator's :class:`~spare_lib.cluster.ClusterConfig` for this cluster.

        Jitter, the Weibull shape (0.78), the shrink time and the all-reduce factor keep the
        600k-H100 preset's values unless overridden.
        """
        return ClusterConfig(steps=steps, compute_per_stack_s=self.compute_per_stack_s,
                             allreduce_s=self.allreduce_s, restart_s=self.restart_s,
                             checkpoint_s=self.checkpoint_s, system_mtbf_s=self.system_mtbf_s,
                             n_gpus=self.gpus, **overrides)


def cluster_spec(gpus: int, gpus_per_group: int, *, system_mtbf_min: float | None = None,
                 gpu_mtbf_hours: float | None = None, restart_min: float = 60.0,
                 checkpoint_s: float = th.T_S_PAPER, step_s: float | None = None,
                 allreduce_s: float | None = None) -> ClusterSpec:
    """Describe a cluster in the units engineers quote; defaults are the paper's 600k-H100 case.

    Parameters
    ----------
    gpus : int
        GPUs of the cluster, ≥ 2.
    gpus_per_group : int
        GPUs per data-parallel group; must divide ``gpus`` and leave N ≥ 2 groups.
    system_mtbf_min : float or None
        System MTBF m in minutes (> 0). Give this or ``gpu_mtbf_hours``; neither: 5 min.
    gpu_mtbf_hours : float or None
        Per-GPU MTBF in hours (> 0); m = gpu_mtbf_hours · 3600 / gpus seconds.
    restart_min : float
        Global restart time T_r in minutes (≥ 0).
    checkpoint_s : float
        Checkpoint write time T_s in seconds (> 0); default 2e13 B at 340 GB/s ≈ 58.8 s.
    step_s : float or None
        Failure-free step time (compute per stack + T_a) in seconds; None: 64 s + T_a.
    allreduce_s : float or None
        All-reduce time T_a in seconds, in [0, step_s); None: N/100 s as the 600k-H100 preset
        (2 / 6 / 10 s at N = 200 / 600 / 1000).

    Examples
    --------
    >>> s = cluster_spec(600_000, 3000, system_mtbf_min=5, step_s=66)
    >>> s.N, s.allreduce_s, s.compute_per_stack_s
    (200, 2.0, 64.0)
    """
    gpus = check_int("gpus", gpus, lo=2)
    gpg = check_int("gpus_per_group", gpus_per_group, lo=1, hi=gpus // 2)
    if gpus % gpg:
        raise ValueError(f"gpus_per_group must divide gpus = {gpus} (N = gpus / gpus_per_group "
                         f"groups), got {gpg}")
    N = gpus // gpg
    if system_mtbf_min is not None and gpu_mtbf_hours is not None:
        raise ValueError("give system_mtbf_min or gpu_mtbf_hours, not both")
    if gpu_mtbf_hours is not None:
        m = check_positive("gpu_mtbf_hours", gpu_mtbf_hours) * 3600.0 / gpus
    else:
        m = 60.0 * check_positive("system_mtbf_min",
                                  5.0 if system_mtbf_min is None else system_mtbf_min)
    ta = allreduce_600k_s(N) if allreduce_s is None else check_positive(
        "allreduce_s", allreduce_s, allow_zero=True)
    if step_s is None:
        step_s = 64.0 + ta
    step_s = check_positive("step_s", step_s)
    if allreduce_s is None and ta >= step_s:
        raise ValueError(f"step_s must exceed the default all-reduce time T_a = N/100 = {ta:g} s; "
                         f"got {step_s:g} (give allreduce_s explicitly)")
    return ClusterSpec(gpus=gpus, gpus_per_group=gpg, system_mtbf_s=m,
                       restart_s=60.0 * check_positive("restart_min", restart_min, allow_zero=True),
                       checkpoint_s=check_positive("checkpoint_s", checkpoint_s), step_s=step_s,
                       allreduce_s=ta)


# --------------------------------------------------------------------------------------------
# Closed forms
# --------------------------------------------------------------------------------------------

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
        'finite' or 'paper' (see :data:`MODELS`); ``model_note`` says which functions were used.
    spare, rep, ckpt : ClosedFormPoint
        The optimum of each method.
    curve : tuple of ClosedFormPoint
        Every candidate evaluated: SPARe r = 2..r_max, Rep r = 2..r_max, CKPT-only.
    r_max : int
        Largest r of the ruler layout at this N (``layout.max_ruler_r``; 12/20/26 at
        N = 200/600/1000).
    gain_vs_rep, gain_vs_ckpt : float
        1 − J(SPARe*)/J(Rep*) and 1 − J(SPARe*)/J(CKPT-only).
    r_star_paper : int
        argmin of the paper's Eq. 7 (μ Γ form, Eq. 5), whatever ``model`` is.
    r_star_log2 : int
        ⌊log2 N + 0.833⌋ (``theory.r_star_closed``).
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

    def point(self, method: str, r: int) -> ClosedFormPoint:
        """The evaluated candidate (method, r); ValueError if it is not in :attr:`curve`."""
        for p in self.curve:
            if p.method == method and p.r == r:
                return p
        raise ValueError(f"(method, r) must be a candidate of this plan, got ({method!r}, {r}); "
                         f"r must be in [2, {self.r_max}] for spare/rep, 1 for ckpt")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (N and compute time added to the cluster)."""
        d = _clean(dataclasses.asdict(self))
        d["cluster"].update(N=self.cluster.N, compute_per_stack_s=self.cluster.compute_per_stack_s)
        return d


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


def closed_form_point(spec: ClusterSpec, method: str, r: int, model: str = "finite"
                      ) -> ClosedFormPoint:
    """Closed-form TTT/T0, availability and checkpoint period of one (method, r).

    Parameters
    ----------
    spec : ClusterSpec
        The cluster.
    method : {'spare', 'rep', 'ckpt'}
        SPARe+CKPT, Rep+CKPT or CKPT-only.
    r : int
        SPARe: 1 ≤ r ≤ ``max_ruler_r(N)`` (ruler layout); Rep: 1 ≤ r ≤ N; CKPT-only: 1.
    model : {'finite', 'paper'}
        SPARe's μ and S̄ (see :data:`MODELS`); Rep and CKPT-only are the same in both.

    Returns
    -------
    ClosedFormPoint
        T_f = μ·m, T_c* = T_s + sqrt(T_s² + 2 T_s (T_f + T_r)), A* = A(T_c*) (Eq. 2) and
        J = S̄/A* (Eq. 7).
    """
    if not isinstance(spec, ClusterSpec):
        raise ValueError(f"spec must be a ClusterSpec (see cluster_spec), "
                         f"got {type(spec).__name__}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    N = spec.N
    if method == "spare":
        r = check_int("r", r, lo=1, hi=max_ruler_r(N))
        mu, overhead = _spare_mu_overhead(N, r, model)
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


def plan(spec: ClusterSpec, model: str = "finite", r_max: int | None = None) -> Plan:
    """Closed-form joint optimum of r and the checkpoint period for SPARe, Rep and CKPT-only.

    For every r the checkpoint period is the availability optimum T_c*(T_f = μ·m) of Eq. 2; the
    recommended r minimises J(r) = S̄(N, r)/A*(μ(N, r)·m) (Eq. 7) over r = 2..r_max (SPARe,
    Rep), CKPT-only has r = 1. Cost: O(r_max) closed-form evaluations (≈ 1 s at N = 1000 the
    first time, cached afterwards).

    Parameters
    ----------
    spec : ClusterSpec
        The cluster (:func:`cluster_spec`).
    model : {'finite', 'paper'}
        'finite' (default, the better estimate: ``mu_finite`` and ``overhead_finite``) or
        'paper' (``mu_closed`` and Eq. 5, the paper's formulas).
    r_max : int or None
        Largest r considered; None: ``max_ruler_r(N)``, the largest r of the ruler layout (12,
        20, 26 at N = 200, 600, 1000). At most ``max_ruler_r(N)``.

    Returns
    -------
    Plan

    Examples
    --------
    >>> p = plan(cluster_spec(600_000, 3000, system_mtbf_min=5, step_s=66))
    >>> p.spare.r, plan(p.cluster, model="paper").spare.r, p.r_star_log2
    (7, 8, 8)
    """
    if not isinstance(spec, ClusterSpec):
        raise ValueError(f"spec must be a ClusterSpec (see cluster_spec), "
                         f"got {type(spec).__name__}")
    _, _, note = _check_model(model)
    N = spec.N
    top = max_ruler_r(N)
    if top < 2:  # pragma: no cover - ClusterSpec guarantees N >= 2
        raise ValueError(f"N = gpus / gpus_per_group must be >= 2 groups, got {N}")
    r_max = top if r_max is None else check_int("r_max", r_max, lo=2, hi=top)
    rs = range(2, r_max + 1)
    spare = [closed_form_point(spec, "spare", r, model) for r in rs]
    rep = [closed_form_point(spec, "rep", r, model) for r in rs]
    ckpt = closed_form_point(spec, "ckpt", 1, model)
    best_s = min(spare, key=lambda p: p.ttt_over_t0)
    best_r = min(rep, key=lambda p: p.ttt_over_t0)
    paper_j = [(_spare_point_j(spec, r, "paper"), r) for r in rs]
    return Plan(cluster=spec, model=model, model_note=note, spare=best_s, rep=best_r, ckpt=ckpt,
                curve=(*spare, *rep, ckpt), r_max=r_max,
                gain_vs_rep=1.0 - best_s.ttt_over_t0 / best_r.ttt_over_t0,
                gain_vs_ckpt=1.0 - best_s.ttt_over_t0 / ckpt.ttt_over_t0,
                r_star_paper=min(paper_j)[1], r_star_log2=int(th.r_star_closed(N)))


def _spare_point_j(spec: ClusterSpec, r: int, model: str) -> float:
    return closed_form_point(spec, "spare", r, model).ttt_over_t0


# --------------------------------------------------------------------------------------------
# Simulation
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SimulatedPoint:
    """Simulated statistics of one (method, r) over its trials.

    Attributes
    ----------
    method, label, r, checkpoint_steps : the candidate and the checkpoint interval C simulated
        (stage 1: the closed form's T_c* in steps).
    stage : int
        1: the search over r at the closed-form C; 2: the search over C at the stage-1 best r.
    trials, completed : int
        Runs, and runs that reached the last step before the wall-clock cap.
    ttt_mean, ttt_std, ttt_min, ttt_max, ttt_se : float
        TTT/T0 over trials (std with ddof=1, s.e. = std/sqrt(trials); nan for one trial). For
        unfinished runs TTT/T0 is a lower bound (the cap).
    availability_mean, overhead_mean, restarts_mean : float
        Mean availability, stacks per group per step and global restarts.
    closed_form_ttt, closed_form_availability : float
        The closed form's prediction for this candidate.
    """

    method: str
    label: str
    r: int
    checkpoint_steps: int
    trials: int
    completed: int
    ttt_mean: float
    ttt_std: float
    ttt_min: float
    ttt_max: float
    ttt_se: float
    availability_mean: float
    overhead_mean: float
    restarts_mean: float
    closed_form_ttt: float
    closed_form_availability: float
    stage: int = 1


@dataclass(frozen=True)
class SimulatedChoice:
    """The simulation's recommendation for one method and its distance from the closed form.

    Attributes
    ----------
    method, label : str
    r : int
        Candidate with the lowest mean simulated TTT/T0 at its closed-form checkpoint interval
        (stage 1, among candidates whose runs all finished).
    ttt : float
        Mean simulated TTT/T0 of the recommendation: r at ``checkpoint_steps``.
    tied : tuple of int
        Candidates whose stage-1 mean is within 2 standard errors of the difference from the
        best (sqrt(se_r² + se_best²)): the simulation cannot tell them apart.
    closed_form_r : int
        The closed form's recommendation.
    ttt_at_closed_form_r : float
        Mean simulated TTT/T0 at ``closed_form_r`` (its closed-form checkpoint interval).
    delta_r : int
        r − closed_form_r.
    excess : float
        ttt_at_closed_form_r / ttt_r − 1, with ttt_r the stage-1 mean at r: what following the
        closed form's r costs in simulation.
    agrees : bool
        closed_form_r is among ``tied``.
    finished : bool
        False if no candidate finished within the wall-clock cap (``ttt`` is then a lower bound).
    candidates : tuple of int
        The r simulated; a best r at the edge of several candidates is flagged by
        :meth:`describe` (the optimum may lie outside the window).
    checkpoint_steps : int
        Recommended checkpoint interval C (steps) at r: the simulated best of the closed-form C
        and the stage-2 intervals; the closed-form C when stage 2 did not run.
    closed_form_checkpoint_steps : int
        The closed form's C at r (T_c* over the mean step time).
    checkpoint_tied : tuple of int
        Intervals at r whose mean is within 2 standard errors of the best.
    checkpoint_candidates : tuple of int
        Intervals simulated at r (one entry: no checkpoint search).
    ttt_at_closed_form_checkpoint : float
        Stage-1 mean at r, i.e. with the closed-form C (``ttt`` ≤ this).
    """

    method: str
    label: str
    r: int
    ttt: float
    tied: tuple[int, ...]
    closed_form_r: int
    ttt_at_closed_form_r: float
    delta_r: int
    excess: float
    agrees: bool
    finished: bool
    candidates: tuple[int, ...] = ()
    checkpoint_steps: int = 0
    closed_form_checkpoint_steps: int = 0
    checkpoint_tied: tuple[int, ...] = ()
    checkpoint_candidates: tuple[int, ...] = ()
    ttt_at_closed_form_checkpoint: float = float("nan")

    def describe(self) -> str:
        """One or two lines: whether, and by how much, simulation and closed form disagree on r
        and (after the checkpoint search) on the checkpoint interval."""
        if not self.finished:
            return (f"{self.label}: no run finished within the wall-clock cap "
                    f"(TTT/T0 > {self.ttt:.3g})")
        ttt_r = self.ttt_at_closed_form_checkpoint
        head = f"{self.label}: simulated r = {self.r} (TTT/T0 {ttt_r:.3f})"
        if len(self.candidates) > 2 and self.r in (min(self.candidates), max(self.candidates)):
            head += " [at the edge of the simulated r window: widen it]"
        tied = _ranges(self.tied)
        if self.delta_r == 0:
            line = f"{head}; closed form r = {self.closed_form_r}: same"
        elif self.agrees:
            line = (f"{head}; closed form r = {self.closed_form_r} differs by {self.delta_r:+d} "
                    f"but is within noise (r = {tied} tied within 2 s.e.; "
                    f"+{100 * self.excess:.1f} % TTT at r = {self.closed_form_r})")
        else:
            line = (f"{head}; closed form r = {self.closed_form_r} DIFFERS by {self.delta_r:+d}: "
                    f"its simulated TTT/T0 {self.ttt_at_closed_form_r:.3f} is "
                    f"{100 * self.excess:+.1f} % (tied within 2 s.e.: r = {tied})")
        if len(self.checkpoint_candidates) < 2:
            return line
        c, c0 = self.checkpoint_steps, self.closed_form_checkpoint_steps
        ctied = ", ".join(str(x) for x in self.checkpoint_tied)
        cands = self.checkpoint_candidates
        if len(cands) > 2 and c in (min(cands), max(cands)):
            ctied += " [best C at the edge of the simulated range]"
        if c == c0:
            return (f"{line}\n    checkpoint every {c} steps: the closed form's C is the simulated "
                    f"best of C = {', '.join(str(x) for x in self.checkpoint_candidates)} "
                    f"(tied within 2 s.e.: C = {ctied})")
        return (f"{line}\n    checkpoint every {c} steps (TTT/T0 {self.ttt:.3f}, "
                f"{100 * (self.ttt / ttt_r - 1):+.1f} % against the closed form's C = {c0}; "
                f"tied within 2 s.e.: C = {ctied})")


@dataclass(frozen=True)
class SimulatedPlan:
    """Closed forms plus simulation of every candidate (:func:`plan_simulated`).

    Attributes
    ----------
    closed : Plan
        The closed-form plan the candidates and checkpoint intervals come from.
    points : tuple of SimulatedPoint
        One per simulated (method, r), SPARe then Rep then CKPT-only, r ascending.
    spare, rep, ckpt : SimulatedChoice
        The simulation's recommendation per method.
    gain_vs_rep : float
        1 − TTT(SPARe recommended)/TTT(Rep recommended), each at its recommended r and checkpoint
        interval.
    gain_vs_rep_closed_checkpoint : float
        The same with both at their stage-1 best r and closed-form checkpoint interval.
    checkpoint_factors : tuple of float
        Multipliers of the closed-form C simulated in stage 2 (empty: no checkpoint search).
    trials, steps, seed : int
        Trials per candidate, committed steps per run, root seed (seeds are
        ``point_seed(point, seed)``).
    max_wall_t0 : float
        Wall-clock cap of a run in units of T0.
    elapsed_s : float
        Wall time of the simulation sweep.
    """

    closed: Plan
    points: tuple[SimulatedPoint, ...]
    spare: SimulatedChoice
    rep: SimulatedChoice
    ckpt: SimulatedChoice
    gain_vs_rep: float
    gain_vs_rep_closed_checkpoint: float
    checkpoint_factors: tuple[float, ...]
    trials: int
    steps: int
    seed: int
    max_wall_t0: float
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (nan -> None)."""
        d = _clean(dataclasses.asdict(self))
        d["closed"] = self.closed.to_dict()
        for m in METHODS:
            d[m]["summary"] = getattr(self, m).describe()
        return d


def simulate_plan_point(method: str, N: int, r: int, ckpt_steps: int, steps: int,
                        compute_per_stack_s: float, allreduce_s: float, restart_s: float,
                        checkpoint_s: float, system_mtbf_s: float, n_gpus: int, trial: int,
                        seed: int, max_wall_t0: float = MAX_WALL_T0) -> dict[str, Any]:
    """One simulated run of a planning candidate (a :func:`~spare_lib.sweep.run_sweep` point).

    Module-level so the process pool can pickle it. ``trial`` only makes the points of the
    trials of one candidate distinct, hence their seeds (``point_seed``) too. The other cluster
    fields (jitter, Weibull k = 0.78, shrink 0.1 s, all-reduce factor 0.5) are the preset's.

    Returns
    -------
    dict
        ttt_over_t0, availability, overhead, full_restarts, completed.
    """
    from .simulate import simulate

    config = ClusterConfig(steps=int(steps), compute_per_stack_s=float(compute_per_stack_s),
                           allreduce_s=float(allreduce_s), restart_s=float(restart_s),
                           checkpoint_s=float(checkpoint_s), system_mtbf_s=float(system_mtbf_s),
                           n_gpus=int(n_gpus))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # unfinished runs are reported instead
        res = simulate(method, int(N), int(r), int(ckpt_steps), config, seed=int(seed),
                       max_wall_s=float(max_wall_t0) * config.t0_s())
    return {"ttt_over_t0": res.ttt_over_t0, "availability": res.availability,
            "overhead": res.overhead, "full_restarts": res.full_restarts,
            "completed": res.completed}


def candidate_rs(closed: Plan, spare_window: int = SPARE_WINDOW,
                 rep_r: Sequence[int] = REP_R) -> dict[str, tuple[int, ...]]:
    """Candidates simulated by :func:`plan_simulated`.

    SPARe: closed-form r* ± ``spare_window`` clipped to [2, r_max] (the J(r) curve is flat near
    its minimum and the paper's simulated optima lie within 2 of the closed form's); Rep: the
    given ``rep_r`` (default 2..5: beyond r = 5 the overhead r dominates) plus the closed-form
    optimum, clipped to [2, min(N, r_max)]; CKPT-only: r = 1.
    """
    w = check_int("spare_window", spare_window, lo=0)
    r0 = closed.spare.r
    spare = tuple(range(max(2, r0 - w), min(closed.r_max, r0 + w) + 1))
    reps = {check_int("rep_r", int(r), lo=2, hi=closed.r_max) for r in rep_r} | {closed.rep.r}
    return {"spare": spare, "rep": tuple(sorted(reps)), "ckpt": (1,)}


def checkpoint_candidates(c0: int, factors: Sequence[float]) -> tuple[int, ...]:
    """Checkpoint intervals of the stage-2 search: C0 and round(f·C0) ≥ 1 for f in ``factors``.

    >>> checkpoint_candidates(10, CKPT_FACTORS)
    (5, 8, 10, 15, 20)
    """
    c0 = check_int("c0", c0, lo=1)
    fs = [check_positive("checkpoint_factors", float(f)) for f in factors]
    return tuple(sorted({c0} | {max(1, round(f * c0)) for f in fs}))


def plan_simulated(spec: ClusterSpec, trials: int = 3, *, steps: int = 10_000, seed: int = 0,
                   model: str = "finite", spare_r: Sequence[int] | None = None,
                   rep_r: Sequence[int] | None = None, include_ckpt: bool = True,
                   spare_window: int = SPARE_WINDOW, max_wall_t0: float = MAX_WALL_T0,
                   checkpoint_factors: Sequence[float] = CKPT_FACTORS,
                   backend: str = "processes", workers: int | None = None,
                   cache_dir: str | None = None, progress: bool = False) -> SimulatedPlan:
    """Simulate every candidate r, then the checkpoint interval at the best r; recommend both.

    Stage 1: each candidate (method, r) runs ``trials`` times with the closed form's checkpoint
    interval C0 = T_c* in steps; the recommended r is the candidate with the lowest mean TTT/T0
    (candidates within 2 standard errors are reported as tied). Stage 2: at that r, the
    intervals round(f·C0) for f in ``checkpoint_factors`` run ``trials`` times each, and the
    recommended interval is the best of those and C0. Both stages go through
    :func:`spare_lib.sweep.run_sweep` and :func:`simulate_plan_point`; seeds are
    ``point_seed(point, seed)``, so the numbers do not depend on the backend or the worker count.

    Stage 2 is a coordinate step, not a joint grid: the best r hardly moves with C because J(r)
    is flat near its minimum, while the closed-form C can be far from the simulated optimum
    (Eq. 2 charges one T_r per restart, a simulated restart lasts ≈ 2·T_r, and fresh Weibull
    clocks fail early).

    Parameters
    ----------
    spec : ClusterSpec
        The cluster.
    trials : int
        Runs per candidate, ≥ 1 (the paper: 3).
    steps : int
        Committed steps per run (the paper: 10,000).
    seed : int
        Root seed, ≥ 0.
    model : {'finite', 'paper'}
        Closed-form model (see :func:`plan`).
    spare_r, rep_r : sequence of int or None
        Explicit candidates; None: :func:`candidate_rs` (SPARe r* ± ``spare_window``, Rep 2..5
        plus the closed-form optimum). An empty sequence skips the method.
    include_ckpt : bool
        Also simulate CKPT-only.
    spare_window : int
        Half-width of the SPARe window (default 3).
    max_wall_t0 : float
        Stop a run at this many T0 (CKPT-only in the restart-dominant regime may never finish).
    checkpoint_factors : sequence of float
        Stage-2 multipliers of C0, each > 0 (default :data:`CKPT_FACTORS`: 0.5, 0.75, 1.5, 2);
        empty: no checkpoint search. Methods with no finished stage-1 run are not searched.
    backend, workers, cache_dir, progress :
        Passed to :func:`~spare_lib.sweep.run_sweep` (default: local process pool, no cache).

    Returns
    -------
    SimulatedPlan
    """
    from .sweep import run_sweep

    trials = check_int("trials", trials, lo=1)
    steps = check_int("steps", steps, lo=1)
    seed = check_int("seed", seed, lo=0)
    max_wall_t0 = check_positive("max_wall_t0", max_wall_t0)
    factors = tuple(check_positive("checkpoint_factors", float(f)) for f in checkpoint_factors)
    closed = plan(spec, model=model)
    cands = candidate_rs(closed, spare_window, REP_R if rep_r is None else ())
    if spare_r is not None:
        cands["spare"] = tuple(sorted({check_int("spare_r", int(r), lo=2, hi=closed.r_max)
                                       for r in spare_r}))
    if rep_r is not None:
        cands["rep"] = tuple(sorted({check_int("rep_r", int(r), lo=2, hi=closed.r_max)
                                     for r in rep_r}))
    if not include_ckpt:
        cands["ckpt"] = ()
    base = {"N": spec.N, "steps": steps, "compute_per_stack_s": spec.compute_per_stack_s,
            "allreduce_s": spec.allreduce_s, "restart_s": spec.restart_s,
            "checkpoint_s": spec.checkpoint_s, "system_mtbf_s": spec.system_mtbf_s,
            "n_gpus": spec.gpus, "max_wall_t0": max_wall_t0}

    def run(pairs: list[tuple[str, int, int]], stage: int) -> list[SimulatedPoint]:
        points = [{"method": m, "r": r, "ckpt_steps": c, **base, "trial": t}
                  for m, r, c in pairs for t in range(trials)]
        if not points:
            return []
        df = run_sweep(points, simulate_plan_point, backend=backend, workers=workers,
                       cache_dir=cache_dir, progress=progress, root_seed=seed)
        return [_simulated_point(g, closed, stage)
                for _, g in df.groupby(["method", "r", "ckpt_steps"], sort=False)]

    t0 = time.perf_counter()
    stage1 = run([(m, r, closed.point(m, r).checkpoint_steps) for m in METHODS for r in cands[m]], 1)
    if not stage1:
        raise ValueError("spare_r, rep_r and include_ckpt leave no candidate to simulate")
    choices = {m: _choose(m, [p for p in stage1 if p.method == m], getattr(closed, m).r)
               for m in METHODS}
    stage2_pairs = []
    if factors:
        for m, ch in choices.items():
            if ch.finished:
                c0 = closed.point(m, ch.r).checkpoint_steps
                stage2_pairs += [(m, ch.r, c) for c in checkpoint_candidates(c0, factors) if c != c0]
    stage2 = run(stage2_pairs, 2)
    elapsed = time.perf_counter() - t0
    for m, ch in choices.items():
        at_r = [p for p in stage1 + stage2 if p.method == m and p.r == ch.r]
        choices[m] = _choose_checkpoint(ch, at_r)

    order = {m: i for i, m in enumerate(METHODS)}
    sim_points = sorted(stage1 + stage2, key=lambda p: (order[p.method], p.r, p.checkpoint_steps))
    s, rp = choices["spare"], choices["rep"]
    both = s.finished and rp.finished
    gain = (1.0 - s.ttt / rp.ttt) if both else float("nan")
    gain_c0 = (1.0 - s.ttt_at_closed_form_checkpoint / rp.ttt_at_closed_form_checkpoint
               if both else float("nan"))
    return SimulatedPlan(closed=closed, points=tuple(sim_points), spare=s, rep=rp,
                         ckpt=choices["ckpt"], gain_vs_rep=gain,
                         gain_vs_rep_closed_checkpoint=gain_c0, checkpoint_factors=factors,
                         trials=trials, steps=steps, seed=seed, max_wall_t0=max_wall_t0,
                         elapsed_s=elapsed)


def _simulated_point(g: Any, closed: Plan, stage: int) -> SimulatedPoint:
    """Statistics of the trials of one (method, r, C) of a sweep frame."""
    method, r = str(g["method"].iloc[0]), int(g["r"].iloc[0])
    cf = closed.point(method, r)
    ttt = g["ttt_over_t0"].to_numpy(dtype=float)
    n = len(ttt)
    std = float(np.std(ttt, ddof=1)) if n > 1 else float("nan")
    return SimulatedPoint(
        method=method, label=LABELS[method], r=r, checkpoint_steps=int(g["ckpt_steps"].iloc[0]),
        trials=n, completed=int(g["completed"].astype(bool).sum()), ttt_mean=float(ttt.mean()),
        ttt_std=std, ttt_min=float(ttt.min()), ttt_max=float(ttt.max()),
        ttt_se=std / math.sqrt(n) if n > 1 else float("nan"),
        availability_mean=float(g["availability"].mean()),
        overhead_mean=float(g["overhead"].mean()),
        restarts_mean=float(g["full_restarts"].mean()),
        closed_form_ttt=cf.ttt_over_t0, closed_form_availability=cf.availability, stage=stage)


def _se(p: SimulatedPoint) -> float:
    return 0.0 if math.isnan(p.ttt_se) else p.ttt_se


def _best_and_tied(pts: list[SimulatedPoint]) -> tuple[SimulatedPoint, list[SimulatedPoint]]:
    """The finished point with the lowest mean (any point if none finished) and the points
    within 2 standard errors of the difference from it."""
    pool = [p for p in pts if p.completed == p.trials] or pts
    best = min(pool, key=lambda p: p.ttt_mean)
    tied = [p for p in pool if p.ttt_mean - best.ttt_mean <= 2.0 * math.hypot(_se(p), _se(best))]
    return best, tied


def _choose_checkpoint(ch: SimulatedChoice, at_r: list[SimulatedPoint]) -> SimulatedChoice:
    """Stage 2 of :func:`plan_simulated`: the best checkpoint interval among ``at_r``."""
    c0s = [p for p in at_r if p.stage == 1]
    if not c0s:  # the method was not simulated
        return ch
    c0 = c0s[0]
    best, tied = _best_and_tied(at_r) if ch.finished else (c0, [c0])
    return dataclasses.replace(
        ch, ttt=best.ttt_mean, checkpoint_steps=best.checkpoint_steps,
        closed_form_checkpoint_steps=c0.checkpoint_steps,
        checkpoint_tied=tuple(sorted(p.checkpoint_steps for p in tied)),
        checkpoint_candidates=tuple(sorted(p.checkpoint_steps for p in at_r)),
        ttt_at_closed_form_checkpoint=c0.ttt_mean)


def _choose(method: str, pts: list[SimulatedPoint], r_closed: int) -> SimulatedChoice:
    nan = float("nan")
    if not pts:
        return SimulatedChoice(method=method, label=LABELS[method], r=r_closed, ttt=nan, tied=(),
                               closed_form_r=r_closed, ttt_at_closed_form_r=nan, delta_r=0,
                               excess=nan, agrees=True, finished=False)
    finished = any(p.completed == p.trials for p in pts)
    best, tied_pts = _best_and_tied(pts)
    tied = tuple(p.r for p in tied_pts)
    at_cf = next((p.ttt_mean for p in pts if p.r == r_closed), nan)
    return SimulatedChoice(method=method, label=LABELS[method], r=best.r, ttt=best.ttt_mean,
                           tied=tied, closed_form_r=r_closed, ttt_at_closed_form_r=at_cf,
                           delta_r=best.r - r_closed, excess=at_cf / best.ttt_mean - 1.0,
                           agrees=r_closed in tied, finished=finished,
                           candidates=tuple(p.r for p in pts),
                           checkpoint_steps=best.checkpoint_steps,
                           closed_form_checkpoint_steps=best.checkpoint_steps,
                           checkpoint_tied=(best.checkpoint_steps,),
                           checkpoint_candidates=(best.checkpoint_steps,),
                           ttt_at_closed_form_checkpoint=best.ttt_mean)


# --------------------------------------------------------------------------------------------
# Helpers: JSON, text, figure
# --------------------------------------------------------------------------------------------

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


def _ranges(rs: Sequence[int]) -> str:
    """(7, 8, 9, 11) -> '7-9, 11'."""
    out: list[str] = []
    rs = sorted(rs)
    i = 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        out.append(str(rs[i]) if i == j else f"{rs[i]}-{rs[j]}")
        i = j + 1
    return ", ".join(out)


def simulated_frame(sp: SimulatedPlan) -> Any:
    """One row per simulated (method, r, checkpoint interval) of ``sp`` as a DataFrame (for notebooks)."""
    import pandas as pd

    cols = ["label", "stage", "r", "checkpoint_steps", "trials", "completed", "ttt_mean", "ttt_std",
            "ttt_min", "ttt_max", "closed_form_ttt", "availability_mean",
            "closed_form_availability", "overhead_mean", "restarts_mean"]
    return pd.DataFrame([dataclasses.asdict(p) for p in sp.points])[cols]


def explore_summary(closed: Plan, r: int | None = None) -> str:
    """A few lines for the explorer: the recommendation and, optionally, the selected SPARe r."""
    c = closed.cluster
    lines = [f"N = {c.N} groups, m = {c.system_mtbf_s / 60:.2f} min, T_r = {c.restart_s / 60:.1f} "
             f"min, T_s = {c.checkpoint_s:.1f} s, step = {c.step_s:.1f} s"]
    for p in (closed.spare, closed.rep, closed.ckpt):
        lines.append(f"{p.label:<10}  r* = {p.r:<2}  T_c* = {p.checkpoint_period_s:7.0f} s "
                     f"({p.checkpoint_steps} steps)  A* = {100 * p.availability:5.1f} %  "
                     f"TTT/T0 = {p.ttt_over_t0:.3f}")
    lines.append(f"gain of SPARe+CKPT over Rep+CKPT: {100 * closed.gain_vs_rep:.1f} % "
                 "(closed form)")
    if r is not None:
        p = closed.point("spare", r)
        lines.append(f"selected SPARe r = {r}: T_c* = {p.checkpoint_period_s:.0f} s "
                     f"({p.checkpoint_steps} steps), A* = {100 * p.availability:.1f} %, "
                     f"TTT/T0 = {p.ttt_over_t0:.3f}")
    return "\n".join(lines)


def make_explore_figure(closed: Plan, r: int | None = None) -> Any:
    """J(r) (Eq. 7) and A*(r) (Eq. 2) of SPARe+CKPT and Rep+CKPT, CKPT-only as a line.

    Parameters
    ----------
    closed : Plan
        From :func:`plan`.
    r : int or None
        Selected SPARe redundancy, drawn as a dotted vertical line.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels (TTT/T0 on a log scale, availability in %); the recommended r of each method
        is marked with a star.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, NullFormatter, ScalarFormatter

    from .plotting import METHOD_STYLE, PAGE_IN

    fig, (ax_j, ax_a) = plt.subplots(1, 2, figsize=(PAGE_IN, 2.4))
    for m in ("spare", "rep"):
        pts = [p for p in closed.curve if p.method == m]
        best = getattr(closed, m)
        sty = METHOD_STYLE[LABELS[m]]
        rs = [p.r for p in pts]
        for ax, key, scale in ((ax_j, "ttt_over_t0", 1.0), (ax_a, "availability", 100.0)):
            ax.plot(rs, [scale * getattr(p, key) for p in pts], color=sty["color"],
                    marker=sty["marker"], linestyle=sty["linestyle"], markersize=3,
                    label=LABELS[m])
            ax.plot([best.r], [scale * getattr(best, key)], marker="*", markersize=11,
                    color=sty["color"], markeredgecolor="k", linestyle="none")
    sty = METHOD_STYLE["CKPT-only"]
    ax_j.axhline(closed.ckpt.ttt_over_t0, color=sty["color"], linestyle=sty["linestyle"],
                 label="CKPT-only")
    ax_a.axhline(100 * closed.ckpt.availability, color=sty["color"], linestyle=sty["linestyle"],
                 label="CKPT-only")
    if r is not None:
        for ax in (ax_j, ax_a):
            ax.axvline(r, color="0.5", linestyle=":", linewidth=1)
    ax_j.set_yscale("log")
    ax_j.yaxis.set_major_formatter(ScalarFormatter())
    ax_j.yaxis.set_minor_formatter(NullFormatter())
    lo, hi = ax_j.get_ylim()
    ax_j.set_yticks([t for t in (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200) if lo <= t <= hi])
    ax_j.set_ylabel("TTT / T0 (Eq. 7)")
    ax_a.set_ylabel("availability A* (%, Eq. 2)")
    ax_a.set_ylim(0, 100)
    for ax in (ax_j, ax_a):
        ax.set_xlabel("redundancy r")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_a.legend(loc="center right", fontsize="small")
    c = closed.cluster
    fig.suptitle(f"N = {c.N}, m = {c.system_mtbf_s / 60:.3g} min, "
                 f"T_r = {c.restart_s / 60:.3g} min, "
                 f"T_s = {c.checkpoint_s:.3g} s: SPARe r* = {closed.spare.r}, "
                 f"T_c* = {closed.spare.checkpoint_period_s:.0f} s", fontsize="small")
    fig.tight_layout()
    return fig


__all__ = [
    "ClosedFormPoint", "ClusterSpec", "LABELS", "METHODS", "MODELS", "Plan", "SimulatedChoice",
    "SimulatedPlan", "SimulatedPoint", "candidate_rs", "closed_form_point", "cluster_spec",
    "explore_summary", "make_explore_figure", "plan", "plan_simulated", "simulate_plan_point",
    "simulated_frame",
]
