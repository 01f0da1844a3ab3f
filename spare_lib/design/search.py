"""The design search (issue 27): group size × method × r × C for a job, from the fast models.

For every valid group size M (powers of two from the smallest that holds the training state,
and the user's list) and share of the fleet, the job becomes a cluster
(:meth:`~spare_lib.design.job.JobSpec.cluster`). With the predictive model (the default) every
method's TTT/T0 over r × C comes from one :func:`~spare_lib.theory.predict.predict_batch` call
per (cluster, method): :data:`C_POINTS` checkpoint intervals geometric in [1, steps] and the
chain on :data:`SEARCH_STATES` states (``benchmarks/bench_design.py`` prints the best plans' gap
to the exact chain per number of states; the knobs ``c_points``, ``chain_states`` and ``refine``
set them). Each (M, method, r) keeps its best C; then the :data:`REFINE` best
plans and every method's best plan at the best group size are re-optimised with the exact model
(:func:`~spare_lib.theory.predict.optimise_checkpoint`, the C that ``spare plan`` picks). With
the closed forms (``model='finite'`` or ``'paper'``) each method's fast model
(:func:`spare_lib.cluster.planning.models.fast_model`) gives its C per r directly.

Each (M, method, r, C) is a :class:`DesignPlan`: days to train, GPU-hours, goodput (T0 / TTT).
The result ranks them, keeps each method's plan per M as ``spare plan`` would pick it on that
cluster (the fewest days; for SPARe layouts whose failed groups rejoin, the smallest r within
``REPAIR_FLAT`` of that, :func:`_pick`), and the Pareto front of days against
GPUs used (a plan is on the front when no other plan trains as fast or faster on as few GPUs or
fewer, one strictly better).

:func:`confirm` simulates the best plans of one group size with common random numbers through
the planner (:func:`spare_lib.cluster.planning.run_plan`), so the verdict follows the planner's
statistics rule (paired Student-t intervals, ties named as ties).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spare_lib.cluster.planning.fast import rep_r_max
from spare_lib.cluster.planning.models import REPAIR_FLAT, fast_model
from spare_lib.cluster.planning.spec import ClusterSpec
from spare_lib.design.job import JobSpec
from spare_lib.registry.knobs import check_knob, knob
from spare_lib.registry.methods import PAPER_METHODS, check_methods
from spare_lib.registry.methods import method as method_spec
from spare_lib.stacking.layout import max_ruler_r
from spare_lib.theory.predict.batch import _valid_r

#: Checkpoint intervals scanned per (method, r) with the predictive model, geometric in [1, steps]
#: (the ``c_points`` knob).
C_POINTS = knob("c_points").default
#: States of the chain over the checkpoint lattice in the search (the ``chain_states`` knob; the
#: exact model: 512).
SEARCH_STATES = knob("chain_states").default
#: Checkpoint intervals per predict_batch call in the search (largest first, see _model_plans).
C_CHUNK = 8
#: Plans re-optimised with the exact model after the search: the ranking's top this many (the
#: ``refine`` knob).
REFINE = knob("refine").default


@dataclass(frozen=True)
class DesignPlan:
    """One (group size, method, r, C) of a job, from the fast model."""

    gpus_per_group: int
    N: int
    gpus_used: int
    method: str
    label: str
    r: int
    checkpoint_steps: int
    ttt_over_t0: float
    #: Share of the wall time outside global restarts (with the predictive model; the closed
    #: forms' A*).
    availability: float
    t0_days: float
    days: float
    gpu_hours: float

    @property
    def goodput(self) -> float:
        """T0 / TTT: the share of the run's wall time that is failure-free progress."""
        return 1.0 / self.ttt_over_t0 if self.ttt_over_t0 > 0 else 0.0

    def row(self) -> dict[str, Any]:
        """The plan as a row of the tables ``spare design`` and the App print (an infinite time
        prints as inf)."""
        return {"days": f"{self.days:.1f}", "GPU-hours (M)": f"{self.gpu_hours / 1e6:.2f}",
                "goodput": f"{100 * self.goodput:.1f}%", "M": self.gpus_per_group, "N": self.N,
                "GPUs": f"{self.gpus_used:,}", "method": self.label, "r": self.r,
                "C": self.checkpoint_steps, "TTT/T0": f"{self.ttt_over_t0:.3f}"}


@dataclass(frozen=True)
class DesignResult:
    """Every plan of a search, its skipped group sizes, the ranking and the Pareto front."""

    job: JobSpec
    methods: tuple[str, ...]
    model: str
    plans: tuple[DesignPlan, ...]
    skipped: dict[int, str] = field(default_factory=dict)
    evaluations: int = 0
    #: Configurations (cluster, method, r, C) the search covers: the evaluated ones and those
    #: the checkpoint-cost bound excludes (:func:`_model_plans`).
    searched: int = 0
    #: The scan's knobs: ``c_points``, ``chain_states`` and ``refine``.
    search: dict[str, int] = field(default_factory=dict)

    @property
    def best(self) -> DesignPlan:
        """The first plan of :meth:`ranked`: the fewest days (ties: fewer GPU-hours), each
        method's r picked as ``spare plan`` picks it."""
        if not self.plans:
            raise ValueError("no valid group size: see skipped")
        return self.ranked(1)[0]

    def ranked(self, top: int | None = None) -> list[DesignPlan]:
        """Each (group size, groups, method)'s plan as ``spare plan`` would pick it on that
        cluster (:func:`_pick`), by days."""
        by: dict[tuple[int, int, str], list[DesignPlan]] = {}
        for p in self.plans:
            by.setdefault((p.gpus_per_group, p.N, p.method), []).append(p)
        out = sorted((_pick(ps) for ps in by.values()), key=lambda p: (p.days, p.gpu_hours))
        return out if top is None else out[:top]

    def best_line(self) -> str:
        """The one-line summary of the best plan ``spare design`` and the App print."""
        b = self.best
        return (f"Best: {b.label} with groups of {b.gpus_per_group} GPUs (N = {b.N}), r = {b.r}, "
                f"C = {b.checkpoint_steps} steps: {b.days:.1f} days, {b.gpu_hours / 1e6:.2f}M "
                "GPU-hours (model; --simulate K checks it)")

    def pareto(self) -> list[DesignPlan]:
        """The plans no other plan beats on both days and GPUs used, by GPUs used."""
        pts = sorted(self.ranked(), key=lambda p: (p.gpus_used, p.days))
        front: list[DesignPlan] = []
        for p in pts:
            if math.isfinite(p.days) and (not front or p.days < front[-1].days):
                front.append(p)
        return front


def _pick(plans: Sequence[DesignPlan]) -> DesignPlan:
    """One cluster's plan of one method, as ``spare plan`` picks it
    (:meth:`~spare_lib.cluster.planning.models.FastModel.best`): the fewest days (ties: fewer
    GPU-hours); for a SPARe layout whose failed groups rejoin, whose TTT/T0 is flat in r once
    wipe-outs are rare, the smallest r within :data:`REPAIR_FLAT` of that (more shard types per
    group cost memory and buy less than that)."""
    top = min(plans, key=lambda p: (p.days, p.gpu_hours))
    m = method_spec(top.method)
    if not (m.layout and m.rejoins) or not math.isfinite(top.days):
        return top
    near = [p for p in plans if p.days <= (1.0 + REPAIR_FLAT) * top.days]
    return min(near, key=lambda p: (p.r, p.days, p.gpu_hours))


def group_sizes(job: JobSpec, extra: Sequence[int] = ()) -> list[int]:
    """Powers of two from the smallest group that holds the state up to G/2, plus ``extra``."""
    out = set(int(m) for m in extra)
    m = 1
    while m <= job.gpus // 2:
        out.add(m)
        m *= 2
    return sorted(out)


#: Shares of the fleet the search also tries (fewer groups: fewer GPUs, longer steps), so that
#: the Pareto front of days against GPUs used has more than one point.
FLEET_SHARES = (1.0, 0.75, 0.5, 0.25)


def design_search(job: JobSpec, methods: Sequence[str] | str = PAPER_METHODS, *,
                  sizes: Sequence[int] | None = None, model: str = "predict",
                  extra_sizes: Sequence[int] = (),
                  fleet_shares: Sequence[float] = FLEET_SHARES, c_points: int = C_POINTS,
                  chain_states: int = SEARCH_STATES, refine: int = REFINE) -> DesignResult:
    """Search group size × method × r × C (module docstring).

    Parameters
    ----------
    job : JobSpec
    methods : sequence of str or 'all'
        Registered methods (default the paper's three).
    sizes : sequence of int or None
        Group sizes to try; None: :func:`group_sizes` (powers of two) plus ``extra_sizes``.
    model : {'predict', 'finite', 'paper'}
        The fast model of the paper's methods.
    fleet_shares : sequence of float
        Shares of the fleet, each in (0, 1], to use: N = ⌊share · G / M⌋ groups.
    c_points : int
        Checkpoint intervals per (method, r) with the predictive model (≥ 2).
    chain_states : int
        States of the chain over the checkpoint lattice in the scan (≥ 8; 512 is the exact
        model's): fewer is faster and coarser for small C. The refined plans use the exact model
        whatever this is.
    refine : int
        Plans of the ranking's top re-optimised with the exact model (≥ 0).

    Returns
    -------
    DesignResult
        ``evaluations`` counts every (cluster, method, r, C) the model evaluated.
    """
    methods = check_methods(methods)
    c_points = check_knob("c_points", c_points)
    chain_states = check_knob("chain_states", chain_states)
    refine = check_knob("refine", refine)
    todo = group_sizes(job, extra_sizes) if sizes is None else sorted({int(m) for m in sizes})
    plans: list[DesignPlan] = []
    skipped: dict[int, str] = {}
    evals = searched = 0
    shares = sorted({float(f) for f in fleet_shares}, reverse=True)
    if not shares or not all(0.0 < f <= 1.0 for f in shares):
        raise ValueError(f"fleet_shares must be numbers in (0, 1], got {list(fleet_shares)!r}")
    for M in todo:
        why = job.why_invalid(M)
        if why:
            skipped[M] = why
            continue
        for n_groups in sorted({max(2, int(f * (job.gpus // M))) for f in shares}, reverse=True):
            if job.why_invalid(M, n_groups):
                continue
            spec = job.cluster(M, n_groups)
            if model == "predict":
                modelled = [m for m in methods if method_spec(m).predict]
                found, n, covered = _model_plans(job, spec, modelled, c_points, chain_states)
                rest = [m for m in methods if m not in modelled]  # SPARe-b: closed forms
                if rest:  # their closed forms do not read the model: 'finite' skips the
                    # predictive model's curves of the paper's methods that fast_model's plan()
                    # would build and these plans would not use
                    more, k = _closed_plans(job, spec, rest, "finite")
                    found, n, covered = found + more, n + k, covered + k
            else:
                found, n = _closed_plans(job, spec, methods, model)
                covered = n
            plans += found
            evals += n
            searched += covered
    res = DesignResult(job=job, methods=methods, model=model, plans=tuple(plans),
                       skipped=skipped, evaluations=evals, searched=searched,
                       search={"c_points": c_points, "chain_states": chain_states,
                               "refine": refine})
    return _refined(res, refine) if model == "predict" and plans else res


def _plan(job: JobSpec, spec: ClusterSpec, name: str, r: int, C: int, ttt: float,
          availability: float) -> DesignPlan:
    t0_days = job.steps * spec.step_s / 86_400.0
    gpus = spec.N * spec.gpus_per_group
    days = t0_days * ttt
    return DesignPlan(spec.gpus_per_group, spec.N, gpus, name, method_spec(name).label, int(r),
                      int(C), float(ttt), float(availability), t0_days, days, days * 24.0 * gpus)


def _r_values(name: str, N: int) -> list[int]:
    """The r the search tries: the ruler's 2..r_max (SPARe layouts), Rep's 2..rep_r_max, 1."""
    m = method_spec(name)
    if not m.redundancy:
        return [1]
    return list(range(2, (max_ruler_r(N) if m.layout else rep_r_max(N)) + 1))


def _model_plans(job: JobSpec, spec: ClusterSpec, methods: Sequence[str], c_points: int,
                 chain_states: int = SEARCH_STATES) -> tuple[list[DesignPlan], int, int]:
    """Each (method, r)'s best C on one cluster from :func:`predict_batch` (module docstring).

    The C grid is evaluated from the largest C down, :data:`C_CHUNK` at a time, and stops at
    the C that can no longer beat the best time found: every checkpoint costs T_s, so
    TTT ≥ T0 + ⌊(steps − 1)/C⌋·T_s, and a C whose bound is not below the method's best total
    so far (over r) cannot give the method's best plan (exact pruning of the method's optimum;
    the small C are the chain's costly ones, O(steps/C)). Each r's plan is its best C among
    those evaluated. Returns (plans, evaluations, configurations covered)."""
    steps = job.steps
    Cs = [int(c) for c in np.unique(np.round(np.geomspace(1, steps, c_points)).astype(int))][::-1]
    cfg = spec.cluster_config(steps=steps)
    t0 = steps * (cfg.compute_per_stack_s + cfg.allreduce_s)
    out, n, covered = [], 0, 0
    for name in methods:
        covered += len(_valid_r(name, spec.N, _r_values(name, spec.N), "ruler")) * len(Cs)
        b, u, left = None, math.inf, Cs
        while left:
            chunk = [C for C in left[:C_CHUNK] if t0 + ((steps - 1) // C) * cfg.checkpoint_s < u]
            if not chunk:
                break
            got = _batch(name, spec.N, chunk, cfg, chain_states)
            b = got if b is None else _merged(b, got)
            u = min(u, float(np.min(got.total_s)) if got.total_s.size else math.inf)
            left = left[C_CHUNK:]
        if b is None:
            continue
        n += b.ttt_over_t0.size
        for i, r in enumerate(b.r):
            j = int(np.argmin(b.ttt_over_t0[i]))
            total = b.total_s[i, j]
            avail = 1.0 - b.restart_time_s[i, j] / total if math.isfinite(total) else 0.0
            out.append(_plan(job, spec, name, int(r), int(b.C[j]), b.ttt_over_t0[i, j], avail))
    return out, n, covered


def _batch(name: str, N: int, Cs: Sequence[int], cfg: Any, chain_states: int) -> Any:
    """One method's :func:`predict_batch` on the search's coarse chain."""
    from spare_lib.theory.predict import predict_batch

    return predict_batch((name,), N, _r_values(name, N), Cs, cfg, max_states=chain_states)[name]


def _merged(a: Any, b: Any) -> Any:
    """Two BatchPredictions of one (method, N, r) on disjoint C, as one (C concatenated)."""
    cat = {f: np.concatenate([getattr(a, f), getattr(b, f)], axis=1)
           for f in ("ttt_over_t0", "restarts", "total_s", "restart_time_s")}
    return dataclasses.replace(a, C=np.concatenate([a.C, b.C]), **cat)


def _closed_plans(job: JobSpec, spec: ClusterSpec, methods: Sequence[str],
                  model: str) -> tuple[list[DesignPlan], int]:
    """Every method's closed-form curve on one cluster (C per r from Eq. 2)."""
    fast = fast_model(spec, tuple(methods), model, job.steps)
    out = [_plan(job, spec, name, p.r, p.checkpoint_steps, p.ttt_over_t0, p.availability)
           for name in methods for p in fast.curves[name]]
    return out, len(out)


def _refined(res: DesignResult, refine: int) -> DesignResult:
    """The ranking's top ``refine`` plans and each method's best at the best group size, with
    C re-optimised by the exact model (:func:`optimise_checkpoint`)."""
    from spare_lib.theory.predict import NoTrainingCycle, optimise_checkpoint

    best = res.best
    todo = {(p.gpus_per_group, p.N, p.method, p.r) for p in res.ranked(refine)}
    todo |= {(p.gpus_per_group, p.N, p.method, p.r) for p in res.ranked()
             if (p.gpus_per_group, p.N) == (best.gpus_per_group, best.N)}
    plans = list(res.plans)
    for i, p in enumerate(plans):
        if (p.gpus_per_group, p.N, p.method, p.r) not in todo or not method_spec(p.method).predict:
            continue
        spec = res.job.cluster(p.gpus_per_group, p.N)
        try:
            C, q = optimise_checkpoint(p.method, p.N, p.r, spec.cluster_config(steps=res.job.steps),
                                       layout="ruler")
        except NoTrainingCycle:
            continue
        plans[i] = _plan(res.job, spec, p.method, p.r, C, q.ttt_over_t0,
                         1.0 - q.restart_total_s / q.total_s)
    return dataclasses.replace(res, plans=tuple(plans), evaluations=res.evaluations + len(todo))


def confirm(result: DesignResult, trials: int, top: int = 3, **request: Any) -> Any:
    """Simulate the best ``top`` methods at the best plan's group size with common random
    numbers (:func:`spare_lib.cluster.planning.run_plan`); returns the PlanResult."""
    from spare_lib.cluster.planning import PlanRequest, run_plan

    best = result.best
    M, N = best.gpus_per_group, best.N
    at_m = [p for p in result.ranked() if p.gpus_per_group == M and p.N == N][:top]
    methods = tuple(dict.fromkeys(p.method for p in at_m))
    req = PlanRequest(result.job.cluster(M, N), methods=methods, model=result.model, trials=trials,
                      steps=result.job.steps, **request)
    return run_plan(req)


__all__ = ["DesignPlan", "DesignResult", "confirm", "design_search", "group_sizes"]
