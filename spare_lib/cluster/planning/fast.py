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

The planner around it (:func:`spare_lib.cluster.planning.run_plan`) simulates the candidates and
plans every registered method; the cluster is :class:`~spare_lib.cluster.planning.spec.ClusterSpec`.

Example
-------
>>> from spare_lib.cluster.planning import cluster_spec
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
from spare_lib._util.validate import check_int
from spare_lib.cluster.config import (
    ALLREDUCE_ALGORITHMS,
    analytic_checkpoint_interval,
)
from spare_lib.cluster.planning.layouts import (
    LAYOUTS,
    _domain_notes,
    _spare_mu_overhead_layout,
)
from spare_lib.cluster.planning.spec import ClusterSpec
from spare_lib.registry.methods import METHODS as METHOD_SPECS
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
                "(theory.predict.optimise_checkpoint)"),
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
        if self.model == "predict" and method not in METHODS and method in METHOD_SPECS \
                and METHOD_SPECS[method].predict:  # the model's other methods, on demand
            return closed_form_point(self.cluster, method, r, "predict", self.layout,
                                     self.steps)
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
        q = _predict_at(self.cluster, method, int(r), self.layout if METHOD_SPECS[method].layout
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
    N = spec.N
    if model == "predict" and method in METHOD_SPECS and METHOD_SPECS[method].predict:
        m = METHOD_SPECS[method]
        if spec.domain_fault_share > 0:  # domain events, even of one group (D = 1), are a
            # cluster-wide renewal process, not the model's independent group clocks
            raise ValueError("model='predict' models independent failures only: "
                             "domain_fault_share must be 0 (use model='finite')")
        if m.layout and layout not in PREDICT_LAYOUTS:
            raise ValueError(f"layout must be one of {PREDICT_LAYOUTS} with model='predict', "
                             f"got {layout!r}")
        hi = max_ruler_r(N) if m.layout else (N if m.redundancy else 1)
        r = check_int("r", r, lo=1, hi=hi)
        return _predict_point(spec, method, r, layout if m.layout else "ruler",
                              check_int("steps", steps, lo=1))
    if method not in METHODS:
        allowed = tuple(n for n, m in METHOD_SPECS.items() if m.predict) \
            if model == "predict" else METHODS
        raise ValueError(f"method must be one of {allowed}, got {method!r}")
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
    from spare_lib.theory.predict import NoTrainingCycle, optimise_checkpoint

    try:
        cfg, job = _model_config(spec, steps)
        C, p = optimise_checkpoint(method, spec.N, r, cfg, layout=layout, **job)
    except NoTrainingCycle:  # never trains: every cycle is wiped out at its first poll
        return ClosedFormPoint(method=method, label=METHOD_SPECS[method].label, r=r, mu=1.0,
                               restart_interval_s=0.0, overhead=1.0 if METHOD_SPECS[method].layout
                               else float(r), step_time_s=spec.step_s,
                               checkpoint_period_s=spec.step_s, checkpoint_steps=1,
                               availability=0.0, ttt_over_t0=math.inf)
    return ClosedFormPoint(method=method, label=METHOD_SPECS[method].label, r=r,
                           mu=p.failures_per_cycle,
                           restart_interval_s=p.uptime_s, overhead=p.overhead,
                           step_time_s=p.step_s, checkpoint_period_s=C * p.step_s,
                           checkpoint_steps=int(C), availability=p.availability,
                           ttt_over_t0=p.ttt_over_t0)


@lru_cache(maxsize=4096)
def _predict_at(spec: ClusterSpec, method: str, r: int, layout: str, steps: int,
                C: int) -> Any:
    from spare_lib.theory.predict import predict

    cfg, job = _model_config(spec, steps)
    return predict(method, spec.N, r, C, cfg, layout=layout, **job)


def _model_config(spec: ClusterSpec, steps: int) -> tuple[Any, dict[str, float]]:
    """The predictive model's config of ``spec`` and its job-wide failures
    (:func:`~spare_lib.cluster.planning.world_model.model_world`; the paper's world: the
    cluster's own config and no job-wide failures)."""
    from spare_lib.cluster.planning.world_model import model_world

    w = model_world(spec)
    return spec.cluster_config(steps=steps, **w.overrides), w.job_kwargs


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
    >>> from spare_lib.cluster.planning import cluster_spec
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
    if model == "predict" and (spec.domain_fault_share > 0 or layout not in PREDICT_LAYOUTS):
        why = ("failure domains" if spec.correlated else "domain events" if
               spec.domain_fault_share > 0 else f"the {layout} layout")
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
