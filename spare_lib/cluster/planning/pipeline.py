"""One planning pipeline for every mode: request → candidates → evaluation → one verdict.

:func:`run_plan` takes a :class:`~spare_lib.cluster.planning.request.PlanRequest` — the paper's
three methods or any registered ones, failures from the cluster's law or a fault log, the fast
model alone or with simulated trials — and returns one :class:`PlanResult`:

1. **candidates** (:mod:`.candidates`): the fast model of every method, its r window, its
   checkpoint interval C0 per r, the run length;
2. **evaluation** (:mod:`.evaluation`): with ``trials``, stage 1 simulates every candidate r at
   C0, stage 2 the checkpoint factors at each method's best r, common random numbers across
   every candidate of a trial;
3. **choice** (:mod:`.results`): per method the best r, then the best C, each with its paired
   tie set;
4. **verdict** (:mod:`.verdict`): over the methods, from the simulation when there is one (and
   the model's beside it, with where they disagree), else from the model.

The result has one text form (:mod:`.printing`) and one JSON form (:meth:`PlanResult.to_dict`,
schema ``docs/plan.schema.json``) whatever the mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from spare_lib._util.memory import check_memory
from spare_lib.cluster.planning.candidates import (
    AUTO_STEPS_MAX,
    checkpoint_candidates,
    plan_candidates,
    restarts_needed_steps,
    skipped_notes,
)
from spare_lib.cluster.planning.evaluation import run_stage, trial_seed
from spare_lib.cluster.planning.models import FastModel, fast_model
from spare_lib.cluster.planning.printing import SCHEMA, plan_json
from spare_lib.cluster.planning.request import PlanRequest
from spare_lib.cluster.planning.results import (
    SimulatedChoice,
    SimulatedPoint,
    choose,
    choose_checkpoint,
)
from spare_lib.cluster.planning.spec import ClusterSpec
from spare_lib.cluster.planning.verdict import Contender, Verdict, loss_against, verdict
from spare_lib.cluster.runs.simulate import run_bytes
from spare_lib.registry.methods import method as method_spec


@dataclass(frozen=True)
class PlanResult:
    """What :func:`run_plan` found (every mode).

    Attributes
    ----------
    request : PlanRequest
    fast : FastModel
        The fast model of every method (for the run length planned).
    model_spec : ClusterSpec
        The cluster the fast model saw (with a log: its system MTBF on this cluster).
    candidates : dict method -> tuple of int
        The r simulated (or that the model chose among).
    steps, steps_note : int, str
        Committed steps per simulated run and how they were chosen.
    points : tuple of SimulatedPoint
        Every simulated (method, r, C), in the request's method order, r then C ascending.
    choices : dict method -> SimulatedChoice
        The simulation's pick per method (empty without simulation).
    verdict : Verdict
        The simulation's when simulated, else the model's.
    model_verdict : Verdict
        The fast model's, over the same methods.
    disagreements : tuple of str
        Where the model's ranking falls outside the simulation's intervals.
    warnings, assumptions : tuple of str
        Adequacy and other caveats; defaults that shape the answer.
    crn : bool
        Failure streams common across candidates.
    ceiling : dict or None
        The availability ceiling of the job-wide failures of the plan's failure mix and whether
        it binds (:func:`~spare_lib.cluster.planning.world_model.job_ceiling`); None without
        job-wide failures.
    """

    request: PlanRequest
    fast: FastModel
    model_spec: ClusterSpec
    candidates: dict[str, tuple[int, ...]]
    steps: int
    steps_note: str
    points: tuple[SimulatedPoint, ...] = ()
    choices: dict[str, SimulatedChoice] = field(default_factory=dict)
    verdict: Verdict | None = None
    model_verdict: Verdict | None = None
    disagreements: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    crn: bool = False
    ceiling: dict[str, Any] | None = None

    @property
    def simulated(self) -> bool:
        return bool(self.points)

    @property
    def trials(self) -> int | None:
        return self.request.trials

    def choice(self, name: str) -> SimulatedChoice:
        """The simulation's choice of one method (ValueError if it was not simulated)."""
        if name not in self.choices:
            raise ValueError(f"method must be one of {tuple(self.choices)}, got {name!r}")
        return self.choices[name]

    def to_dict(self) -> dict[str, Any]:
        """The plan as strict-JSON-ready data (``docs/plan.schema.json``)."""
        return plan_json(self)


def _model_contenders(fast: FastModel, methods: tuple[str, ...]) -> list[Contender]:
    out = []
    for name in methods:
        p = fast.best(name)
        out.append(Contender(name, p.r, p.checkpoint_steps, p.ttt_over_t0,
                             finished=math.isfinite(p.ttt_over_t0)))
    return out


def _adequacy(pts: list[SimulatedPoint], min_restarts: int, steps: int) -> tuple[str, ...]:
    """One warning per method (without rejoins) with candidates that averaged fewer than
    ``min_restarts`` restarts per run: their ranking is not resolved by these runs."""
    out = []
    for name in dict.fromkeys(p.method for p in pts):
        m = method_spec(name)
        if m.rejoins:
            continue
        few = [p for p in pts if p.method == name and p.completed == p.trials
               and p.restarts_mean < min_restarts]
        if not few:
            continue
        few.sort(key=lambda p: (p.r, p.checkpoint_steps))
        which = ", ".join(f"r = {p.r}" + (f" C = {p.checkpoint_steps}" if p.stage == 2 else "")
                          + f" ({p.restarts_mean:.1f})" for p in few)
        need = [math.ceil(steps * min_restarts / p.restarts_mean) if p.restarts_mean >= 1
                else restarts_needed_steps(p, min_restarts) for p in few
                if p.restart_interval_s == p.restart_interval_s]
        hint = ""
        if need:
            n = max(max(need), steps + 1)
            hint = f"; rerun with --plan-steps {min(n, 10 * AUTO_STEPS_MAX):,} or more"
            if n > 10 * AUTO_STEPS_MAX:
                hint += " (these candidates practically never restart on this cluster)"
        out.append(f"{m.label} {which}: fewer than {min_restarts} global restarts per run on "
                   f"average, so their TTT/T0 reflects compute overhead more than failures and "
                   f"their ranking is not resolved{hint}")
    return tuple(out)


def _disagreements(model_v: Verdict, sim_v: Verdict, sim: list[Contender],
                   src: str) -> tuple[str, ...]:
    """Where the model's ranking falls outside the simulated intervals (or picks another best)."""
    out = []
    by = {c.method: c for c in sim}
    ref = by[model_v.best.method]
    head = ""
    if model_v.best.method != sim_v.best.method:
        out.append(f"the {src} picks {model_v.best.label}, the simulation {sim_v.best.label}")
    else:
        head = f"both pick {ref.label}, but the {src}'s margin is outside the simulated CI"
    for x in model_v.losses:
        s_loss = loss_against(by[x.method], ref)
        if s_loss.lower_bound or ref.finished is False or not math.isfinite(x.loss):
            continue
        lo, hi = s_loss.ci_low, s_loss.ci_high
        outside = (not lo <= x.loss <= hi) if lo == lo else (x.loss > 0) != (s_loss.loss > 0)
        if outside:
            if not out and head:
                out.append(head)
            out.append(f"{x.label} against {ref.label}: {src} {100 * x.loss:+.1f} %, "
                       f"simulated {s_loss.text()}")
    return tuple(out)


def _model_spec(req: PlanRequest) -> tuple[ClusterSpec, Any]:
    """The cluster the fast model sees, and the trace source (None without a log)."""
    import dataclasses

    if req.trace is None:
        return req.spec, None
    from spare_lib.cluster.planning.traces import trace_source, trace_system_mtbf

    t = req.trace
    src = trace_source(t.trace, t.method, t.law, t.placement, t.gpus_per_server, t.tolerance_s,
                       t.chunk_s)
    cfg = req.spec.cluster_config()
    m_s = trace_system_mtbf(src, cfg, req.N, trial_seed(req.spec, 0, req.seed))
    return dataclasses.replace(req.spec, system_mtbf_s=m_s), src


def _trace_horizon(req: PlanRequest, fast: FastModel, cands: dict[str, tuple[int, ...]],
                   src: Any, steps: int) -> Any:
    """The trace source with its first horizon: ``HORIZON_MARGIN`` × the slowest candidate's
    model TTT."""
    import dataclasses

    from spare_lib.cluster.planning.traces import HORIZON_MARGIN

    t0 = req.spec.cluster_config(steps).t0_s()
    if req.trace.horizon_s is not None:
        horizon = req.trace.horizon_s
    else:
        slow = max((fast.point(n, r).ttt_over_t0 for n, rs in cands.items() for r in rs),
                   default=1.0)
        slow = slow if math.isfinite(slow) else req.run_cap_t0
        horizon = min(HORIZON_MARGIN * slow, req.run_cap_t0) * t0
    return dataclasses.replace(src, first_chunks=max(1, math.ceil(horizon / src.chunk_s)))


def run_plan(req: PlanRequest) -> PlanResult:
    """The plan of ``req`` (module docstring)."""
    spec, src = _model_spec(req)
    mreq = req if spec is req.spec else _with_spec(req, spec)
    fast, cands, steps, note = plan_candidates(mreq)
    model_v = verdict(_model_contenders(fast, req.methods), fast.source)
    base = dict(request=req, fast=fast, model_spec=spec, candidates=cands, steps=steps,
                steps_note=note, model_verdict=model_v, assumptions=req.assumptions(),
                warnings=skipped_notes(mreq, fast) + fast.plan.notes + fast.notes)
    if req.trials is None:
        return _with_ceiling(PlanResult(verdict=model_v, **base))
    if src is not None:
        src = _trace_horizon(req, fast, cands, src, steps)
        if req.trace.checkpoint_rule == "paper":
            fast = _paper_checkpoints(fast, req, cands)
    r_top = max((r for rs in cands.values() for r in rs), default=1)
    check_memory(f"simulating N = {req.N} groups at r = {r_top} on {req.workers or 2} workers",
                 run_bytes(req.N, r_top) * (req.workers or 2))
    seeds = [trial_seed(req.spec, t, req.seed) for t in range(req.trials)]
    stage1 = run_stage(req, fast, [(n, r, fast.point(n, r).checkpoint_steps)
                                   for n in req.methods for r in cands[n]], 1, steps, seeds, src)
    choices = {}
    for n in req.methods:
        lo, hi = method_spec(n).r_range(req.N)
        if method_spec(n).layout:
            hi = max(p.r for p in fast.curves[n])
        choices[n] = choose(n, [p for p in stage1 if p.method == n], fast.best(n).r, (lo, hi),
                            fast.source)
    pairs = []
    if req.checkpoint_factors:
        for n, ch in choices.items():
            if ch.finished and cands[n]:
                c0 = fast.point(n, ch.r).checkpoint_steps
                if c0 < steps:
                    pairs += [(n, ch.r, c) for c in checkpoint_candidates(c0, req.checkpoint_factors)
                              if c != c0]
    stage2 = run_stage(req, fast, pairs, 2, steps, seeds, src)
    order = {n: i for i, n in enumerate(req.methods)}
    pts = sorted(stage1 + stage2, key=lambda p: (order[p.method], p.r, p.checkpoint_steps))
    for n, ch in choices.items():
        choices[n] = choose_checkpoint(ch, [p for p in pts if p.method == n and p.r == ch.r])
    sim = []
    for n in req.methods:
        ch = choices[n]
        p = next((q for q in pts if q.method == n and q.r == ch.r
                  and q.checkpoint_steps == ch.checkpoint_steps), None)
        if p is not None:
            sim.append(Contender(n, p.r, p.checkpoint_steps, p.ttt_mean, p.ttt_trials,
                                 finished=p.completed == p.trials))
    sim, pts, seq_note = _sequential(req, fast, sim, pts, steps, src)
    sim_v = verdict(sim, "simulated")
    model_sim = verdict([c for c in _model_contenders(fast, req.methods)
                         if c.method in {s.method for s in sim}], fast.source)
    crn = req.common_failures and src is None
    warn = base.pop("warnings") + _adequacy(pts, req.min_restarts, steps) + seq_note
    base.update(fast=fast, model_verdict=model_sim)
    return _with_ceiling(PlanResult(**base, points=tuple(pts), choices=choices, verdict=sim_v,
                                    disagreements=_disagreements(model_sim, sim_v, sim,
                                                                 fast.source),
                                    crn=crn, warnings=warn))


def _with_ceiling(res: PlanResult) -> PlanResult:
    """The plan with the ceiling of its job-wide failures (if any) in :attr:`PlanResult.ceiling`
    and, when it binds, named at the end of the verdict's statement
    (:func:`~spare_lib.cluster.planning.world_model.job_ceiling`)."""
    import dataclasses

    from spare_lib.cluster.planning.world_model import job_ceiling

    v = res.verdict
    if v is None or not v.trains:
        best_a = 0.0
    elif res.simulated:
        ch = v.best
        p = next((q for q in res.points if (q.method, q.r, q.checkpoint_steps)
                  == (ch.method, ch.r, ch.checkpoint_steps)), None)
        best_a = p.availability_mean if p is not None else 0.0
    else:
        best_a = res.fast.best(v.best.method).availability
    label = v.best.label if v is not None else ""
    c = job_ceiling(res.model_spec, best_a, label)
    if c is None:
        return res
    out = dataclasses.replace(res, ceiling=c)
    if c["binds"]:
        out = dataclasses.replace(out, verdict=dataclasses.replace(
            v, statement=f"{v.statement} {c['statement']}"))
    return out


def _leading_resolved(sim: list[Contender]) -> bool | None:
    """Whether the best's comparison with the runner-up has an interval excluding 0 (None:
    nothing to compare)."""
    v = verdict(sim, "simulated")
    finite = [x for x in v.losses if x.loss == x.loss and math.isfinite(x.loss)
              and not x.lower_bound]
    if not finite:
        return None
    lead = min(finite, key=lambda x: x.loss)
    return lead.has_interval and not lead.tied


def _sequential(req: PlanRequest, fast: FastModel, sim: list[Contender],
                pts: list[SimulatedPoint], steps: int, src: Any
                ) -> tuple[list[Contender], list[SimulatedPoint], tuple[str, ...]]:
    """Sequential trials (``max_trials``): more trials of every method's choice, doubling, with
    the same common random numbers (trials n.. get seeds n..), until the leading pair's paired
    interval excludes 0 or the cap is reached; the note says which. The r and C choices stay
    those of the first trials; the intervals are computed as if the number of trials had been
    fixed in advance (a sequential rule widens them slightly: docs/strategies.md)."""
    import dataclasses

    cap, n = req.max_trials, req.trials
    if not cap or cap <= n or not sim:
        return sim, pts, ()
    while _leading_resolved(sim) is False and n < cap:
        m = min(cap, 2 * n)
        seeds = [trial_seed(req.spec, t, req.seed) for t in range(n, m)]
        more = run_stage(req, fast, [(c.method, c.r, c.checkpoint_steps) for c in sim], 1, steps,
                         seeds, src)
        by = {(q.method, q.r, q.checkpoint_steps): q for q in more}
        new_sim, new_pts = [], list(pts)
        for c in sim:
            q = by[(c.method, c.r, c.checkpoint_steps)]
            trials = c.trials + q.ttt_trials
            new_sim.append(dataclasses.replace(c, trials=trials, ttt=sum(trials) / len(trials),
                                               finished=c.finished and q.completed == q.trials))
            for i, p in enumerate(new_pts):
                if (p.method, p.r, p.checkpoint_steps) == (c.method, c.r, c.checkpoint_steps):
                    new_pts[i] = _merge(p, q)
        sim, pts, n = new_sim, new_pts, m
    state = _leading_resolved(sim)
    if state is None or state:
        return sim, pts, (f"sequential trials: the leading pair is resolved with {n} trials "
                          "per method's choice",)
    return sim, pts, (f"sequential trials: the cap of {cap} trials (--max-trials) was reached "
                      "and the leading pair is still tied",)


def _merge(p: SimulatedPoint, q: SimulatedPoint) -> SimulatedPoint:
    """One point's statistics over the trials of both."""
    import dataclasses

    import numpy as np

    t = np.array(p.ttt_trials + q.ttt_trials)
    n, n1 = len(t), p.trials
    w1 = n1 / n
    std = float(np.std(t, ddof=1)) if n > 1 else float("nan")
    return dataclasses.replace(
        p, trials=n, completed=p.completed + q.completed, ttt_mean=float(t.mean()), ttt_std=std,
        ttt_min=float(t.min()), ttt_max=float(t.max()), ttt_se=std / math.sqrt(n),
        availability_mean=w1 * p.availability_mean + (1 - w1) * q.availability_mean,
        overhead_mean=w1 * p.overhead_mean + (1 - w1) * q.overhead_mean,
        restarts_mean=w1 * p.restarts_mean + (1 - w1) * q.restarts_mean,
        dropped_mean=w1 * p.dropped_mean + (1 - w1) * q.dropped_mean,
        extensions=p.extensions + q.extensions, ttt_trials=tuple(float(x) for x in t))


def _with_spec(req: PlanRequest, spec: ClusterSpec) -> PlanRequest:
    import dataclasses

    return dataclasses.replace(req, spec=spec)


def _paper_checkpoints(fast: FastModel, req: PlanRequest, cands: dict[str, tuple[int, ...]]
                       ) -> FastModel:
    """With a log and ``checkpoint_rule='paper'``: C0 from the paper's table (SPEC §6)."""
    import dataclasses

    from spare_lib.cluster.config import paper_checkpoint_interval

    if req.N not in (200, 600, 1000):
        raise ValueError(f"failures_checkpoint='paper' needs N in (200, 600, 1000) (the paper's "
                         f"table), got {req.N}")
    curves = dict(fast.curves)
    for n, rs in cands.items():
        if method_spec(n).paper and method_spec(n).redundancy:
            table = {r: paper_checkpoint_interval(n, req.N, r) for r in rs}
            curves[n] = tuple(dataclasses.replace(p, checkpoint_steps=table[p.r])
                              if p.r in table else p for p in curves[n])
    return dataclasses.replace(fast, curves=curves)


__all__ = ["SCHEMA", "PlanResult", "fast_model", "run_plan"]
