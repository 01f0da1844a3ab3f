"""The design search (issue 27): group size × method × r × C for a job, from the fast models.

For every valid group size M (powers of two from the smallest that holds the training state,
and the user's list), the job becomes a cluster (:meth:`~spare_lib.design.job.JobSpec.cluster`)
and every method's fast model (:func:`spare_lib.cluster.planning.models.fast_model`: the
predictive model where it covers the method, closed forms elsewhere) gives, per r, the
checkpoint interval C that minimises its TTT/T0. Each (M, method, r, C) is a
:class:`DesignPlan`: days to train, GPU-hours, goodput (T0 / TTT). The result ranks them, keeps
each method's best per M, and the Pareto front of days against GPUs used (a plan is on the
front when no other plan trains as fast or faster on as few GPUs or fewer, one strictly better).

:func:`confirm` simulates the best plans of one group size with common random numbers through
the planner (:func:`spare_lib.cluster.planning.run_plan`), so the verdict follows the planner's
statistics rule (paired Student-t intervals, ties named as ties).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spare_lib.cluster.planning.models import fast_model
from spare_lib.design.job import JobSpec
from spare_lib.registry.methods import PAPER_METHODS, check_methods


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
    availability: float
    t0_days: float
    days: float
    gpu_hours: float

    @property
    def goodput(self) -> float:
        """T0 / TTT: the share of the run's wall time that is failure-free progress."""
        return 1.0 / self.ttt_over_t0 if self.ttt_over_t0 > 0 else 0.0


@dataclass(frozen=True)
class DesignResult:
    """Every plan of a search, its skipped group sizes, the ranking and the Pareto front."""

    job: JobSpec
    methods: tuple[str, ...]
    model: str
    plans: tuple[DesignPlan, ...]
    skipped: dict[int, str] = field(default_factory=dict)
    evaluations: int = 0

    @property
    def best(self) -> DesignPlan:
        """The plan with the fewest days (ties: fewer GPU-hours)."""
        if not self.plans:
            raise ValueError("no valid group size: see skipped")
        return min(self.plans, key=lambda p: (p.days, p.gpu_hours))

    def ranked(self, top: int | None = None) -> list[DesignPlan]:
        """Each (group size, groups, method)'s best plan, by days."""
        best: dict[tuple[int, int, str], DesignPlan] = {}
        for p in self.plans:
            k = (p.gpus_per_group, p.N, p.method)
            if k not in best or (p.days, p.gpu_hours) < (best[k].days, best[k].gpu_hours):
                best[k] = p
        out = sorted(best.values(), key=lambda p: (p.days, p.gpu_hours))
        return out if top is None else out[:top]

    def pareto(self) -> list[DesignPlan]:
        """The plans no other plan beats on both days and GPUs used, by GPUs used."""
        pts = sorted(self.ranked(), key=lambda p: (p.gpus_used, p.days))
        front: list[DesignPlan] = []
        for p in pts:
            if math.isfinite(p.days) and (not front or p.days < front[-1].days):
                front.append(p)
        return front


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
                  fleet_shares: Sequence[float] = FLEET_SHARES) -> DesignResult:
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
    """
    methods = check_methods(methods)
    todo = group_sizes(job, extra_sizes) if sizes is None else sorted({int(m) for m in sizes})
    plans: list[DesignPlan] = []
    skipped: dict[int, str] = {}
    evals = 0
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
            fast = fast_model(spec, methods, model, job.steps)
            t0_days = job.steps * spec.step_s / 86_400.0
            gpus = spec.N * M
            for name in methods:
                for p in fast.curves[name]:
                    evals += 1
                    days = t0_days * p.ttt_over_t0
                    plans.append(DesignPlan(M, spec.N, gpus, name, p.label, p.r,
                                            p.checkpoint_steps, p.ttt_over_t0, p.availability,
                                            t0_days, days, days * 24.0 * gpus))
    return DesignResult(job=job, methods=methods, model=model, plans=tuple(plans),
                        skipped=skipped, evaluations=evals)


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
