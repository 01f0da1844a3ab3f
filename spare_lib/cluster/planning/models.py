"""The fast model of every method: TTT/T0, availability and checkpoint interval per (method, r).

The planner searches and explains with a fast model before (or instead of) simulating:

* with ``model='predict'`` (the default) every method is the predictive time-to-train model
  (:mod:`spare_lib.theory.predict`; :attr:`MethodSpec.predict`): SPARe+CKPT, Rep+CKPT and
  CKPT-only through :func:`spare_lib.cluster.planning.fast.plan` (within 0.4 % of the simulator
  on the paper's grid), SPARe+repair, elastic-drop and elastic-rebalance point by point
  (notebook 55 §5);
* with the closed forms (``model='finite'`` or ``'paper'``, or where the predictive model does
  not apply: failure domains, the domain-aware layout) the paper's methods are Eqs. 2, 5, 7 and
  the rejoining methods documented approximations (``docs/strategies.md``):

  - SPARe+repair: J(r) = (S̄_R·c + T_a) / (c + T_a) / A*(T_w(r)) (c the compute of one
    stack; the same step-over-failure-free-step form as the methods below), T_w the mean time
    between wipe-outs with repair
    (:func:`spare_lib.theory.repair.wipeout_with_repair`, repair time ``rejoin_s`` plus half a
    step) and S̄_R = E[c(K)], K ~ Poisson(R/m) groups away;
  - elastic-drop and elastic-rebalance restart only when every group is dead at once (never, in
    practice), so they checkpoint once, at the end; with K ~ Poisson(R/m) groups away, a step of
    elastic-rebalance computes E[⌈b·N/(N−K)⌉]/b shards per survivor, elastic-drop needs
    1/E[(N−K)/N] times the steps, and both lose the stall of every failure (1/m) and rejoin
    batch, and rebalance the fetch after each change of assignment (2/m).

  - SPARe-b (issue 25): SPARe's closed form (Eq. 2 at t_f = μ(N, r)·m) with S̄_b, the
    makespan's global bound Σ_k P0(k)⌈N·b/(N − k)⌉ / (b Σ_k P0(k))
    (:func:`spare_lib.theory.microbatch.sbar_b_global`; a lower bound, within 2 % of the Monte
    Carlo at r ≥ 8, docs/microbatch.md); SPARe-b+repair as SPARe+repair with
    S̄ = E[⌈N·b/(N − K)⌉]/b; SPARe-b+drop the same without wipe-out restarts (a wipe-out drops
    types instead), paying the stall of every failure and rejoin batch, as the elastic methods.
    In a failure world with job-wide failures (``failure_mix``) these run on the world's
    group-local failures and add the job-wide restarts every method pays, with the exponential
    model's checkpoint optimum (:func:`microbatch_curve`), so their C is set for them.

  The paper's three keep Eq. 7, J = S̄/A, which leaves T_a out of the ratio: beside these forms
  it overstates a method with S̄ > 1 by S̄(c + T_a)/(S̄c + T_a) (1.045 at S̄ = 2, c = 64 s,
  T_a = 6 s); the predictive model (the default) has no such difference.
  Like Eq. 7 these ignore the barrier's maximum over N jittered groups (the simulator's ≈ +10
  to +15 % per step); they rank candidates, the simulation decides.

A SPARe layout whose groups rejoin has a TTT/T0 that flattens once wipe-outs are rare (in both
models), so its best r is the smallest within :data:`REPAIR_FLAT` of the minimum: more shard
types per group cost memory and buy nothing there.

Every method's curve is a tuple of :class:`~spare_lib.cluster.planning.fast.ClosedFormPoint`, so
the rest of the planner treats every method alike.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from spare_lib.cluster.config import analytic_checkpoint_interval
from spare_lib.cluster.planning.fast import ClosedFormPoint, Plan, plan
from spare_lib.cluster.planning.spec import ClusterSpec
from spare_lib.registry.methods import method

#: SPARe+repair: smallest r whose TTT/T0 is within this share of the minimum over r.
REPAIR_FLAT = 0.002

#: The note printed for methods the chosen fast model does not cover.
CLOSED_NOTE = ("SPARe+repair, SPARe-b and the elastic methods: closed forms (away groups ~ Poisson(rejoin "
               "time / m); docs/strategies.md), which ignore the barrier's jitter")


def _away_law(spec: ClusterSpec) -> tuple[np.ndarray, np.ndarray]:
    """k = 0..N−1 groups away at a time and their Poisson(R/m) weights, R = the repair time."""
    from scipy.stats import poisson

    N = spec.N
    comp, ta = spec.compute_per_stack_s, spec.allreduce_s
    repair = spec.knob("rejoin_s") + 0.5 * (2 * comp + ta)
    lam = min(repair / spec.system_mtbf_s, float(N)) if math.isfinite(repair) else float(N)
    k = np.arange(N)
    pk = poisson.pmf(k, lam)
    return k, pk / pk.sum()


def _point(spec: ClusterSpec, name: str, r: int, mu: float, t_f: float, overhead: float,
           step: float, C: int, availability: float, ttt: float) -> ClosedFormPoint:
    return ClosedFormPoint(method=name, label=method(name).label, r=r, mu=mu,
                           restart_interval_s=t_f, overhead=overhead, step_time_s=step,
                           checkpoint_period_s=C * step, checkpoint_steps=int(C),
                           availability=availability, ttt_over_t0=ttt)


def repair_curve(spec: ClusterSpec, r_max: int, steps: int,
                 name: str = "spare+repair") -> tuple[ClosedFormPoint, ...]:
    """Closed-form SPARe+repair (method ``name``) for r = 2..r_max (module docstring)."""
    from spare_lib import theory as th
    from spare_lib.theory.repair import wipeout_with_repair

    comp, ta = spec.compute_per_stack_s, spec.allreduce_s
    m = spec.system_mtbf_s
    k, pk = _away_law(spec)
    s_bar = float(np.sum(pk * np.asarray(th.c_lower(spec.N, k), dtype=float)))
    repair = spec.knob("rejoin_s") + 0.5 * (2 * comp + ta)
    cfg = spec.cluster_config(steps)
    out = []
    for r in range(2, r_max + 1):
        tw = wipeout_with_repair(spec.N, r, repair, m).time_s if math.isfinite(repair) \
            else float(th.mu_finite(spec.N, r)) * m
        avail = float(th.availability_opt(spec.checkpoint_s, tw, spec.restart_s))
        step = s_bar * comp + ta
        C = min(analytic_checkpoint_interval(min(tw, 1e15), step, cfg), steps)
        ttt = step / (comp + ta) / avail if avail > 0 else math.inf  # S̄_R once, in the step
        out.append(_point(spec, name, r, tw / m, tw, s_bar, step, C, avail, ttt))
    return tuple(out)


def microbatch_curve(spec: ClusterSpec, r_max: int, steps: int,
                     name: str) -> tuple[ClosedFormPoint, ...]:
    """Closed-form SPARe-b, SPARe-b+repair or SPARe-b+drop for r = 2..r_max (module
    docstring).

    In a failure world other than the paper's (:func:`~.world_model.model_world`: a mix with
    job-wide failures, other rejoin or detection times) the closed form runs on the world's
    group-local failures (the predictive model's view: system MTBF m/q_local, the mix's rejoin
    time, the detection added to the stall) and folds the job-wide failures in
    (:func:`_with_job_failures`), so C is chosen for the restarts every method pays; the paper's
    world takes the same path as before, bit for bit.
    """
    from spare_lib.cluster.planning.world_model import model_world

    w = model_world(spec)
    if not w.overrides and w.job_share <= 0:
        return _microbatch_local(spec, r_max, steps, name)
    run = dict(spec.run)
    run.update({k: v for k, v in w.overrides.items() if k != "system_mtbf_s"})
    local = dataclasses.replace(spec, run=tuple(run.items()), system_mtbf_s=w.overrides.get(
        "system_mtbf_s", spec.system_mtbf_s))
    return tuple(_with_job_failures(local, p, w.job_mtbf_s, w.detect_s, steps,
                                    spec.system_mtbf_s)
                 for p in _microbatch_local(local, r_max, steps, name))


def _with_job_failures(spec: ClusterSpec, p: ClosedFormPoint, job_mtbf_s: float,
                       detect_s: float, steps: int, m_all: float) -> ClosedFormPoint:
    """A SPARe-b point of the group-local closed form with job-wide failures at rate
    ν = 1/``job_mtbf_s`` folded in.

    Restarts come from wipe-outs (mean interval t_w; none for SPARe-b+drop, which drops the
    types instead) and from job-wide failures, at rate λ = 1/t_w + ν, taken as Poisson. A
    restart lasts R = (e^(νT_r) − 1)/ν (a job-wide failure during it starts it again: Eq. J1 of
    :mod:`spare_lib.theory.predict.jobwide` at a fixed T_r) plus the detection wait d of the
    share ν/λ of restarts that are job-wide. A segment of W s of steps and its checkpoint write
    T_s then takes (e^(λ(W + T_s)) − 1)(1/λ + R) on average, so

        A(W) = W / ((e^(λ(W + T_s)) − 1)(1/λ + R)),   λW* = 1 + W₀(−e^(−1 − λT_s))

    (W₀ Lambert's principal branch; W* does not depend on R). Eq. 2's first-order form is not
    used here: it assumes T_c ≪ T_f, and job-wide failures every half hour (600k GPUs, the
    ``llama3`` mix) break it (its T_c* grows with T_r). C = round(W*/step), and SPARe-b+drop
    keeps its stall losses (elastic-drop's form) as a factor of A. ``m_all``: the system MTBF
    of every class, for ``mu`` (failures per restart).
    """
    from scipy.special import lambertw

    from spare_lib.theory.predict.jobwide import job_restart_mean
    from spare_lib.theory.predict.terms import NoTrainingCycle

    nu = 1.0 / job_mtbf_s if math.isfinite(job_mtbf_s) else 0.0
    exact = method(p.method).exact_batch
    t_w = p.restart_interval_s if exact else math.inf
    lam = (1.0 / t_w if math.isfinite(t_w) else 0.0) + nu
    if lam <= 0.0:
        return p
    try:
        restart = job_restart_mean(spec.restart_s, None, nu) + nu / lam * detect_s
    except NoTrainingCycle:  # job-wide failures cut nearly every restart: it never ends
        restart = math.inf
    ts, step = spec.checkpoint_s, p.step_time_s
    w_opt = (1.0 + float(lambertw(-math.exp(-1.0 - lam * ts)).real)) / lam
    C = min(max(1, int(round(w_opt / step))), steps)
    w = C * step
    a = w / (math.expm1(lam * (w + ts)) * (1.0 / lam + restart))
    avail = a if exact else a * p.availability
    comp, ta = spec.compute_per_stack_s, spec.allreduce_s
    ttt = step / (comp + ta) / avail if avail > 0 else math.inf
    return _point(spec, p.method, p.r, 1.0 / (lam * m_all), 1.0 / lam, p.overhead, step, C,
                  avail, ttt)


def _microbatch_local(spec: ClusterSpec, r_max: int, steps: int,
                      name: str) -> tuple[ClosedFormPoint, ...]:
    """:func:`microbatch_curve` of the group-local failures of ``spec`` (the paper's world)."""
    from spare_lib import theory as th
    from spare_lib.theory.microbatch import sbar_b_global

    b = int(spec.knob("microbatches"))
    m = method(name)
    if not m.rejoins:
        out = []
        comp, ta, mtbf = spec.compute_per_stack_s, spec.allreduce_s, spec.system_mtbf_s
        cfg = spec.cluster_config(steps)
        for r in range(2, r_max + 1):
            s_bar = sbar_b_global(spec.N, r, b)
            mu = float(th.mu_finite(spec.N, r))
            step = s_bar * comp + ta
            C = min(analytic_checkpoint_interval(mu * mtbf, step, cfg), steps)
            avail = float(th.availability_opt(spec.checkpoint_s, mu * mtbf, spec.restart_s))
            ttt = step / (comp + ta) / avail if avail > 0 else math.inf
            out.append(_point(spec, name, r, mu, mu * mtbf, s_bar, step, C, avail, ttt))
        return tuple(out)
    k, pk = _away_law(spec)
    s_bar = float(np.sum(pk * np.ceil(b * spec.N / (spec.N - k)))) / b
    curve = repair_curve(spec, r_max, steps, name)
    if m.exact_batch:  # repair: SPARe+repair's wipe-outs with the micro-batch overhead
        return tuple(_rescaled(spec, p, s_bar) for p in curve)
    drop = elastic_point(spec, "elastic-drop", steps)  # no wipe-out restart: the stalls only
    comp, ta = spec.compute_per_stack_s, spec.allreduce_s
    step = s_bar * comp + ta
    ttt = step / (comp + ta) / drop.availability if drop.availability > 0 else math.inf
    return tuple(_point(spec, name, p.r, p.mu, p.restart_interval_s, s_bar, step, steps,
                        drop.availability, ttt) for p in curve)


def _rescaled(spec: ClusterSpec, p: ClosedFormPoint, s_bar: float) -> ClosedFormPoint:
    comp, ta = spec.compute_per_stack_s, spec.allreduce_s
    step = s_bar * comp + ta
    ttt = step / (comp + ta) / p.availability if p.availability > 0 else math.inf
    return _point(spec, p.method, p.r, p.mu, p.restart_interval_s, s_bar, step,
                  p.checkpoint_steps, p.availability, ttt)


def elastic_point(spec: ClusterSpec, name: str, steps: int) -> ClosedFormPoint:
    """Closed-form elastic-drop or elastic-rebalance (module docstring)."""
    N, m = spec.N, spec.system_mtbf_s
    comp, ta = spec.compute_per_stack_s, spec.allreduce_s
    k, pk = _away_law(spec)
    stall = spec.knob("stall_s")
    rj = spec.knob("rejoin_stall_s")
    lost = stall + (stall if rj is None else rj)  # per failure: its stall and its rejoin batch's
    if method(name).exact_batch:  # rebalance: the survivors share the whole batch
        b = int(spec.knob("microbatches"))
        per = np.ceil(b * N / (N - k)) / b
        overhead = float(np.sum(pk * per))
        lost += 2.0 * spec.knob("fetch_s")
        work = overhead * comp + ta
        extra_steps = 1.0
    else:  # drop: the dead groups' samples are lost, so more steps
        overhead = 1.0
        work = comp + ta
        extra_steps = 1.0 / float(np.sum(pk * (N - k) / N))
    avail = max(0.0, 1.0 - lost / m)
    ttt = extra_steps * work / (comp + ta) / avail if avail > 0 else math.inf
    return _point(spec, name, 1, math.inf, math.inf, overhead, work, steps, avail, ttt)


def _flat_r(name: str) -> bool:
    """A SPARe layout whose failed groups rejoin: its TTT/T0 is flat in r once wipe-outs are
    rare (:data:`REPAIR_FLAT`)."""
    m = method(name)
    return m.layout and m.rejoins


@dataclass(frozen=True)
class FastModel:
    """Every requested method's curve, the fast model's best point per method, and the paper
    methods' :class:`~spare_lib.cluster.planning.fast.Plan` (its notes, r*, the predictive
    model's :meth:`at_interval`)."""

    plan: Plan
    methods: tuple[str, ...]
    curves: dict[str, tuple[ClosedFormPoint, ...]]
    notes: tuple[str, ...] = ()
    #: The methods whose curve is the predictive model's (:meth:`at_interval` evaluates it at C).
    modelled: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        """'model' (predictive model) or 'closed form', as messages name it."""
        return self.plan.source

    def best(self, name: str) -> ClosedFormPoint:
        """The method's point with the lowest TTT/T0 (SPARe+repair: the smallest r within
        :data:`REPAIR_FLAT` of it)."""
        curve = self.curves[name]
        j = min(p.ttt_over_t0 for p in curve)
        if _flat_r(name):
            return next(p for p in curve if p.ttt_over_t0 <= (1 + REPAIR_FLAT) * j)
        return min(curve, key=lambda p: p.ttt_over_t0)

    def point(self, name: str, r: int) -> ClosedFormPoint:
        """(method, r) on the curve (a Rep r ≤ N on demand); ValueError otherwise."""
        for p in self.curves[name]:
            if p.r == r:
                return p
        if name in self.modelled:
            return self.plan.point(name, r)
        raise ValueError(f"r must be one of {[p.r for p in self.curves[name]]} for {name}, got {r}")

    def at_interval(self, name: str, r: int, C: int) -> tuple[float, float]:
        """(TTT/T0, availability) at checkpoint interval C: the predictive model at C for the
        methods it covers, the curve's point otherwise."""
        if name in self.modelled:
            return self.plan.at_interval(name, r, C)
        p = self.point(name, r)
        return p.ttt_over_t0, p.availability


def fast_model(spec: ClusterSpec, methods: tuple[str, ...], model: str, steps: int, *,
               layout: str = "ruler", rep_placement: str = "consecutive") -> FastModel:
    """The fast model of ``methods`` on ``spec`` for a run of ``steps`` committed steps."""
    p = plan(spec, model=model, layout=layout, rep_placement=rep_placement, steps=steps)
    curves: dict[str, tuple[ClosedFormPoint, ...]] = {}
    modelled = []
    for name in methods:
        m = method(name)
        if m.paper:  # the methods plan() covers
            curves[name] = tuple(q for q in p.curve if q.method == name)
        elif p.model == "predict" and m.predict:
            rs = range(2, p.r_max + 1) if m.layout else range(1, 2)
            curves[name] = tuple(p.point(name, r) for r in rs)
        elif m.layout and m.microbatch:
            curves[name] = microbatch_curve(spec, p.r_max, steps, name)
        elif m.layout:
            curves[name] = repair_curve(spec, p.r_max, steps, name)
        else:
            curves[name] = (elastic_point(spec, name, steps),)
        if p.model == "predict" and m.predict:
            modelled.append(name)
    closed = [n for n in methods if not method(n).paper and n not in modelled]
    notes = ((CLOSED_NOTE,) if closed else ()) + world_notes(spec, p.model, modelled,
                                                             tuple(methods))
    return FastModel(plan=p, methods=tuple(methods), curves=curves, notes=notes,
                     modelled=tuple(modelled))


def world_notes(spec: ClusterSpec, model: str, modelled: list[str] | tuple[str, ...],
                methods: tuple[str, ...]) -> tuple[str, ...]:
    """What the fast model leaves out of a failure world that is not the paper's, one line
    (:mod:`~spare_lib.cluster.planning.world_model`); () in the paper's world."""
    from spare_lib.cluster.planning.spec import WORLD_KNOBS
    from spare_lib.cluster.planning.world_model import model_world
    from spare_lib.registry.knobs import KNOBS

    # rejoin_clock is a strategy knob that only the simulation carries (world_model)
    given = [k for k in (*WORLD_KNOBS, "rejoin_clock") if spec.knob(k) != KNOBS[k].default]
    if not given:
        return ()
    out = []
    # SPARe-b's closed forms see the world as the predictive model does (microbatch_curve)
    mb = [n for n in methods if n not in modelled and method(n).layout and method(n).microbatch]
    closed = [method(n).label for n in methods if n not in modelled and n not in mb]
    if closed:
        out.append(f"the closed forms of {', '.join(closed)} ignore the failure world "
                   f"({', '.join(given)}); the simulation (--simulate) carries it")
    if modelled or mb:
        w = model_world(spec)
        who = " and ".join(x for x in ("the predictive model" if modelled else "",
                                       "the closed forms of " + ", ".join(method(n).label
                                                                          for n in mb)
                                       if mb else "") if x)
        if w.job_share > 0:
            out.append(f"{who} take{'s' if modelled and not mb else ''} the mix's job-wide "
                       f"failures ({100 * w.job_share:.3g} %) as global restarts every "
                       f"{w.job_mtbf_s / 60:.3g} min on average, detected after "
                       f"{w.detect_s:.3g} s")
        if w.note():
            out.append(w.note())
    return tuple(out)


__all__ = ["CLOSED_NOTE", "world_notes", "REPAIR_FLAT", "FastModel", "elastic_point", "fast_model",
           "microbatch_curve", "repair_curve"]
