"""The simulated planner: :func:`plan_simulated` confirms or corrects the closed-form r and checkpoint
interval with the discrete-event simulator, run through :func:`spare_lib.cluster.sweep.run_sweep`,
and ends with one :class:`~spare_lib.cluster.verdict.Verdict` over every method.

Common random numbers: trial t of every candidate (any method, r and C) runs with the same seed
:func:`trial_seed` (derived from the cluster and t only) and the same failure stream
(``simulate(..., failure_seed=...)``): every candidate of a trial sees the same failure sequence
per group, so differences between candidates are paired by trial (the verdict's CIs).

Run length: ``steps='auto'`` picks enough committed steps for the closed-form best SPARe and Rep
candidates to expect :data:`MIN_RESTARTS` global restarts per run (at least the paper's 10,000),
and candidates that still averaged fewer restarts are reported (:attr:`SimulatedPlan.warnings`).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.planning import (
    CKPT_FACTORS,
    LABELS,
    MAX_WALL_T0,
    METHODS,
    PLAN_STEPS,
    REP_R,
    SPARE_WINDOW,
    ClusterSpec,
    Plan,
    plan,
)
from spare_lib.cluster.planning_layouts import r_ranges, spare_layout
from spare_lib.cluster.planning_results import (
    SimulatedChoice,
    SimulatedPlan,
    SimulatedPoint,
    _choose,
    _choose_checkpoint,
)
from spare_lib.cluster.verdict import Contender, Verdict, loss_against, verdict

#: A candidate with fewer global restarts per run than this, on average, is flagged: its TTT/T0
#: reflects compute overhead more than failures.
MIN_RESTARTS = 5

#: ``steps='auto'``: at least the paper's 10,000 steps, at most this many.
AUTO_STEPS_MIN, AUTO_STEPS_MAX = 10_000, 200_000



def simulate_plan_point(method: str, N: int, r: int, ckpt_steps: int, steps: int,
                        compute_per_stack_s: float, allreduce_s: float, restart_s: float,
                        checkpoint_s: float, system_mtbf_s: float, n_gpus: int, trial: int,
                        seed: int, max_wall_t0: float = MAX_WALL_T0, weibull_shape: float = 0.78,
                        failure_dist: str = "weibull",
                        failure_seed: int | None = None, domain_size: int = 1,
                        domain_fault_share: float = 0.0, layout: str = "ruler",
                        rep_placement: str = "consecutive") -> dict[str, Any]:
    """One simulated run of a planning candidate (a :func:`~spare_lib.cluster.sweep.run_sweep` point).

    Module-level so the process pool can pickle it. ``trial`` labels the trial; its seed is
    :func:`trial_seed` (the same for every candidate of the trial) and, with common random
    numbers, ``failure_seed`` too. Jitter, shrink 0.1 s and the all-reduce factor 0.5 are the
    preset's. ``domain_size`` and ``domain_fault_share`` are the ClusterConfig's failure domains;
    ``layout`` is SPARe's (:data:`~spare_lib.cluster.planning.LAYOUTS`) and ``rep_placement`` Rep's.

    Returns
    -------
    dict
        ttt_over_t0, availability, overhead, full_restarts, completed.
    """
    from spare_lib.cluster.simulate import simulate

    config = ClusterConfig(steps=int(steps), compute_per_stack_s=float(compute_per_stack_s),
                           allreduce_s=float(allreduce_s), restart_s=float(restart_s),
                           checkpoint_s=float(checkpoint_s), system_mtbf_s=float(system_mtbf_s),
                           n_gpus=int(n_gpus), weibull_shape=float(weibull_shape),
                           failure_dist=str(failure_dist), domain_size=int(domain_size),
                           domain_fault_share=float(domain_fault_share))
    extra: dict[str, Any] = {} if failure_seed is None else {"failure_seed": int(failure_seed)}
    if method == "spare" and layout != "ruler":
        extra["layout"] = spare_layout(int(N), int(r), str(layout), int(domain_size))
    if rep_placement != "consecutive":
        extra["rep_placement"] = str(rep_placement)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # unfinished runs are reported instead
        res = simulate(method, int(N), int(r), int(ckpt_steps), config, seed=int(seed),
                       max_wall_s=float(max_wall_t0) * config.t0_s(), **extra)
    return {"ttt_over_t0": res.ttt_over_t0, "availability": res.availability,
            "overhead": res.overhead, "full_restarts": res.full_restarts,
            "completed": res.completed}


def candidate_rs(closed: Plan, spare_window: int = SPARE_WINDOW,
                 rep_r: Sequence[int] = REP_R) -> dict[str, tuple[int, ...]]:
    """Default candidates simulated by :func:`plan_simulated`.

    SPARe: closed-form r* ± ``spare_window`` clipped to [2, r_max] (the J(r) curve is flat near
    its minimum and the paper's simulated optima lie within 2 of the closed form's); Rep: the
    given ``rep_r`` (default 2..5: beyond r = 5 the overhead r dominates) clipped to [2, N], plus
    the closed-form optimum; CKPT-only: r = 1.
    """
    w = check_int("spare_window", spare_window, lo=0)
    r0 = closed.spare.r
    spare = tuple(range(max(2, r0 - w), min(closed.r_max, r0 + w) + 1))
    N = closed.cluster.N
    reps = {check_int("rep_r", int(r), lo=2) for r in rep_r}
    reps = {r for r in reps if r <= N} | {closed.rep.r}
    return {"spare": spare, "rep": tuple(sorted(reps)), "ckpt": (1,)}


def checkpoint_candidates(c0: int, factors: Sequence[float]) -> tuple[int, ...]:
    """Checkpoint intervals of the stage-2 search: C0 and round(f·C0) ≥ 1 for f in ``factors``.

    >>> checkpoint_candidates(10, CKPT_FACTORS)
    (5, 8, 10, 15, 20)
    """
    c0 = check_int("c0", c0, lo=1)
    fs = [check_positive("checkpoint_factors", float(f)) for f in factors]
    return tuple(sorted({c0} | {max(1, round(f * c0)) for f in fs}))


def trial_seed(spec: ClusterSpec, trial: int, root: int = 0) -> int:
    """Seed of trial ``trial`` for every candidate of a plan: from the cluster, the trial index
    and ``root`` only (never the method, r or C), so candidates share their random numbers."""
    from spare_lib.cluster.sweep import point_seed

    cluster = dataclasses.asdict(spec)
    for k, default in _DOMAIN_DEFAULTS.items():  # seeds of clusters without domains unchanged
        if cluster[k] == default:
            del cluster[k]
    return point_seed({"cluster": cluster, "trial": int(trial)}, root)


_DOMAIN_DEFAULTS = {"domain_size": 1, "domain_fault_share": 0.0}


def restarts_needed_steps(p: Any, min_restarts: int = MIN_RESTARTS) -> int:
    """Steps for ``min_restarts`` expected global restarts: ceil(min_restarts·T_f/step time) of a
    closed-form point (or a :class:`SimulatedPoint`)."""
    tf = p.restart_interval_s
    step = p.step_time_s
    return max(1, math.ceil(min_restarts * tf / step))


#: ``steps='auto'`` resolves the candidates whose closed-form TTT/T0 is within this share of their
#: method's closed-form best (the ones the ranking has to tell apart).
AUTO_NEAR_BEST = 0.05


def auto_steps(closed: Plan, cands: dict[str, tuple[int, ...]],
               min_restarts: int = MIN_RESTARTS) -> tuple[int, str]:
    """Run length for ``steps='auto'`` and a note saying how it was chosen.

    Enough steps for every SPARe and Rep candidate within :data:`AUTO_NEAR_BEST` of its method's
    closed-form best to expect ``min_restarts`` global restarts per run (T_f over the mean step
    time), clipped to [AUTO_STEPS_MIN, AUTO_STEPS_MAX]. CKPT-only restarts every m: never the
    bottleneck.
    """
    pts = []
    for m in ("spare", "rep"):
        if cands.get(m):
            mine = [closed.point(m, r) for r in cands[m]]
            j = min(q.ttt_over_t0 for q in mine)
            pts += [q for q in mine if q.ttt_over_t0 <= (1 + AUTO_NEAR_BEST) * j]
    if not pts:
        return AUTO_STEPS_MIN, f"auto: {AUTO_STEPS_MIN:,} steps (the paper's)"
    need = {(p.method, p.r): restarts_needed_steps(p, min_restarts) for p in pts}
    key = max(need, key=need.get)
    top = closed.point(*key)
    steps = min(max(need[key], AUTO_STEPS_MIN), AUTO_STEPS_MAX)
    src = "model" if closed.model == "predict" else "closed-form"
    who = f"{top.label} r = {top.r} ({src} T_f = {top.restart_interval_s / 3600:.3g} h)"
    scope = f"the candidates within {100 * AUTO_NEAR_BEST:.0f} % of their method's {src} best"
    if need[key] <= AUTO_STEPS_MIN:
        return steps, (f"auto: {steps:,} steps (the paper's), enough for >= {min_restarts} expected "
                       f"restarts per run of {scope}")
    if need[key] > AUTO_STEPS_MAX:
        return steps, (f"auto: {steps:,} steps (the cap; {who} would need {need[key]:,} for "
                       f">= {min_restarts} expected restarts per run)")
    return steps, (f"auto: {steps:,} steps so that {scope} expect >= {min_restarts} restarts per "
                   f"run (the longest need: {who})")


def _check_candidates(name: str, rs: Sequence[int], lo: int, hi: int, N: int) -> tuple[int, ...]:
    out = set()
    for r in rs:
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not lo <= int(r) <= hi:
            raise ValueError(f"{name} must be integers in [{lo}, {hi}] at N = {N}, got {r!r}")
        out.add(int(r))
    return tuple(sorted(out))


def plan_simulated(spec: ClusterSpec, trials: int = 3, *, steps: int | str = "auto", seed: int = 0,
                   model: str = "finite", spare_r: Sequence[int] | None = None,
                   rep_r: Sequence[int] | None = None, include_ckpt: bool = True,
                   spare_window: int = SPARE_WINDOW, max_wall_t0: float = MAX_WALL_T0,
                   checkpoint_factors: Sequence[float] = CKPT_FACTORS,
                   backend: str = "processes", workers: int | None = None,
                   cache_dir: str | None = None, progress: bool = False,
                   min_restarts: int = MIN_RESTARTS, common_failures: bool = True,
                   client: Any = None, layout: str = "ruler",
                   rep_placement: str = "consecutive") -> SimulatedPlan:
    """Simulate every candidate r, then the checkpoint interval at the best r; rank all methods.

    Stage 1: each candidate (method, r) runs ``trials`` times with the closed form's checkpoint
    interval C0 = T_c* in steps; the recommended r is the candidate with the lowest mean TTT/T0
    (candidates within 2 standard errors are reported as tied). Stage 2: at that r, the
    intervals round(f·C0) for f in ``checkpoint_factors`` run ``trials`` times each, and the
    recommended interval is the best of those and C0. Both stages go through
    :func:`spare_lib.cluster.sweep.run_sweep` and :func:`simulate_plan_point`. Trial t of every
    candidate uses :func:`trial_seed` (spec, t, seed) and the same failure stream (common random
    numbers), so the numbers do not depend on the backend or the worker count and the
    :attr:`SimulatedPlan.verdict` compares methods paired by trial.

    Stage 2 is a coordinate step, not a joint grid: the best r hardly moves with C because J(r)
    is flat near its minimum, while the closed-form C can be far from the simulated optimum
    (Eq. 2 charges one T_r per restart, a simulated restart lasts ≈ 2·T_r, and fresh Weibull
    clocks fail early).

    Parameters
    ----------
    spec : ClusterSpec
        The cluster (its ``weibull_shape`` and ``failure_dist`` drive the failures).
    trials : int
        Runs per candidate, ≥ 1 (the paper: 3; ≥ 2 for confidence intervals).
    steps : int or 'auto'
        Committed steps per run; 'auto' (default): :func:`auto_steps`.
    seed : int
        Root seed, ≥ 0.
    model : {'finite', 'paper', 'predict'}
        Fast model of :func:`plan` the candidates and checkpoint intervals come from (the
        library default stays 'finite'; ``spare plan`` uses 'predict').
    spare_r, rep_r : sequence of int or None
        Explicit candidates (SPARe: 2..largest ruler r at N; Rep: 2..N); None:
        :func:`candidate_rs`. An empty sequence skips the method.
    include_ckpt : bool
        Also simulate CKPT-only.
    spare_window : int
        Half-width of the default SPARe window (3).
    max_wall_t0 : float
        Stop a run at this many T0 (CKPT-only in the restart-dominant regime may never finish).
    checkpoint_factors : sequence of float
        Stage-2 multipliers of C0, each > 0 (default :data:`CKPT_FACTORS`: 0.5, 0.75, 1.5, 2);
        empty: no checkpoint search. Methods with no finished stage-1 run are not searched.
    backend, workers, cache_dir, progress, client :
        Passed to :func:`~spare_lib.cluster.sweep.run_sweep` (default: local process pool, no
        cache; ``client``: a Dask client or scheduler address for ``backend='dask'``).
    min_restarts : int
        Candidates with fewer global restarts per run on average are flagged in ``warnings``
        (and 'auto' aims at this many for the closed-form best).
    common_failures : bool
        Pass ``failure_seed`` = the trial seed (common failure streams across candidates); False
        keeps only the common ``seed``.
    layout, rep_placement : str
        SPARe's layout and Rep's replica sets (:func:`plan`); the failure domains are the
        spec's. Explicit ``spare_r`` for which the domain-aware layout does not exist are
        skipped with a warning (ValueError when none exists).

    Returns
    -------
    SimulatedPlan
    """
    import inspect

    from spare_lib.cluster.simulate import simulate
    from spare_lib.cluster.sweep import run_sweep

    trials = check_int("trials", trials, lo=1)
    seed = check_int("seed", seed, lo=0)
    min_restarts = check_int("min_restarts", min_restarts, lo=0)
    max_wall_t0 = check_positive("max_wall_t0", max_wall_t0)
    factors = tuple(check_positive("checkpoint_factors", float(f)) for f in checkpoint_factors)
    closed = plan(spec, model=model, layout=layout, rep_placement=rep_placement,
                  steps=steps if isinstance(steps, int) else PLAN_STEPS)
    N = spec.N
    cands = candidate_rs(closed, spare_window, REP_R if rep_r is None else ())
    on_curve = {p.r for p in closed.curve if p.method == "spare"}
    cands["spare"] = tuple(r for r in cands["spare"] if r in on_curve)
    skipped_note = ()
    if spare_r is not None:
        top = max(closed.r_max, max(closed.skipped_r, default=2))
        cands["spare"] = _check_candidates("spare_r", spare_r, 2, top, N)
        gone = [r for r in cands["spare"] if r not in on_curve]
        if gone and len(gone) == len(cands["spare"]):
            raise ValueError(f"spare_r must be in {r_ranges(sorted(on_curve))} (the r for which "
                             f"layout='{layout}' exists at N = {N} with domain_size = "
                             f"{spec.domain_size}), got {r_ranges(gone)}")
        if gone:
            msg = (f"SPARe r = {r_ranges(gone)} skipped: the {layout} layout does not exist there "
                   f"(N = {N}, D = {spec.domain_size})")
            warnings.warn(msg, UserWarning, stacklevel=2)
            skipped_note = (msg,)
            cands["spare"] = tuple(r for r in cands["spare"] if r not in gone)
    if rep_r is not None:
        cands["rep"] = _check_candidates("rep_r", rep_r, 2, N, N)
    if not include_ckpt:
        cands["ckpt"] = ()
    if not any(cands.values()):
        raise ValueError("spare_r, rep_r and include_ckpt leave no candidate to simulate")
    if steps == "auto":
        steps, steps_note = auto_steps(closed, cands, min_restarts)
        if closed.model == "predict" and steps != closed.steps:
            # the predictive model depends on the run length: plan again for the one simulated
            closed = plan(spec, model=model, layout=layout, rep_placement=rep_placement,
                          steps=steps)
            redo = candidate_rs(closed, spare_window, REP_R if rep_r is None else ())
            if spare_r is None:
                cands["spare"] = tuple(r for r in redo["spare"] if r in on_curve)
            if rep_r is None:
                cands["rep"] = redo["rep"]
    else:
        steps = check_int("steps", steps, lo=1)
        steps_note = f"given: {steps:,} steps"
    crn = common_failures and "failure_seed" in inspect.signature(simulate).parameters
    base = {"N": N, "steps": steps, "compute_per_stack_s": spec.compute_per_stack_s,
            "allreduce_s": spec.allreduce_s, "restart_s": spec.restart_s,
            "checkpoint_s": spec.checkpoint_s, "system_mtbf_s": spec.system_mtbf_s,
            "n_gpus": spec.gpus, "max_wall_t0": max_wall_t0, "weibull_shape": spec.weibull_shape,
            "failure_dist": spec.failure_dist}
    # the new knobs join the points only when set, so existing plans keep their cache keys
    for k, v, default in (("domain_size", spec.domain_size, 1),
                          ("domain_fault_share", spec.domain_fault_share, 0.0),
                          ("layout", layout, "ruler"), ("rep_placement", rep_placement, "consecutive")):
        if v != default:
            base[k] = v
    seeds = [trial_seed(spec, t, seed) for t in range(trials)]

    def run(pairs: list[tuple[str, int, int]], stage: int) -> list[SimulatedPoint]:
        points = [{"method": m, "r": r, "ckpt_steps": c, **base, "trial": t, "seed": seeds[t],
                   **({"failure_seed": seeds[t]} if crn else {})}
                  for m, r, c in pairs for t in range(trials)]
        if not points:
            return []
        df = run_sweep(points, simulate_plan_point, backend=backend, workers=workers,
                       client=client, cache_dir=cache_dir, progress=progress)
        return [_simulated_point(g, closed, stage)
                for _, g in df.groupby(["method", "r", "ckpt_steps"], sort=False)]

    t0 = time.perf_counter()
    stage1 = run([(m, r, closed.point(m, r).checkpoint_steps) for m in METHODS for r in cands[m]], 1)
    bounds = {"spare": (2, closed.r_max), "rep": (2, N), "ckpt": (1, 1)}
    choices = {m: dataclasses.replace(_choose(m, [p for p in stage1 if p.method == m],
                                              getattr(closed, m).r, bounds[m]),
                                      source=closed.source)
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
    sim_v, closed_v, disagree = _verdicts(closed, choices, sim_points, cands)
    return SimulatedPlan(closed=closed, points=tuple(sim_points), spare=s, rep=rp,
                         ckpt=choices["ckpt"], gain_vs_rep=gain,
                         gain_vs_rep_closed_checkpoint=gain_c0, checkpoint_factors=factors,
                         trials=trials, steps=steps, seed=seed, max_wall_t0=max_wall_t0,
                         elapsed_s=elapsed, verdict=sim_v, closed_verdict=closed_v,
                         disagreements=disagree,
                         warnings=skipped_note + _adequacy(sim_points, min_restarts, steps),
                         steps_note=steps_note, crn=crn)


def _verdicts(closed: Plan, choices: dict[str, SimulatedChoice], pts: list[SimulatedPoint],
              cands: dict[str, tuple[int, ...]]) -> tuple[Verdict, Verdict, tuple[str, ...]]:
    """Simulated and closed-form verdicts over the simulated methods, and where they disagree."""
    sim, cf = [], []
    for m in METHODS:
        if not cands[m]:
            continue
        ch = choices[m]
        p = next((q for q in pts if q.method == m and q.r == ch.r
                  and q.checkpoint_steps == ch.checkpoint_steps), None)
        if p is None:
            continue
        sim.append(Contender(m, p.r, p.checkpoint_steps, p.ttt_mean, p.ttt_trials,
                             finished=p.completed == p.trials))
        q = getattr(closed, m)
        cf.append(Contender(m, q.r, q.checkpoint_steps, q.ttt_over_t0))
    src = closed.source
    sim_v, closed_v = verdict(sim, "simulated"), verdict(cf, src)
    out = []
    by = {c.method: c for c in sim}
    ref = by[closed_v.best.method]
    if closed_v.best.method != sim_v.best.method:
        out.append(f"the {src} picks {closed_v.best.label}, the simulation "
                   f"{sim_v.best.label}")
    else:
        head = f"both pick {ref.label}, but the {src}'s margin is outside the simulated CI"
    for x in closed_v.losses:
        s_loss = loss_against(by[x.method], ref)
        if s_loss.lower_bound or ref.finished is False:
            continue
        lo, hi = s_loss.ci_low, s_loss.ci_high
        outside = (not lo <= x.loss <= hi) if lo == lo else (x.loss > 0) != (s_loss.loss > 0)
        if outside:
            if not out and closed_v.best.method == sim_v.best.method:
                out.append(head)
            out.append(f"{x.label} against {ref.label}: {src} {100 * x.loss:+.1f} %, "
                       f"simulated {s_loss.text()}")
    return sim_v, closed_v, tuple(out)


def _adequacy(pts: list[SimulatedPoint], min_restarts: int, steps: int) -> tuple[str, ...]:
    """One warning per method with candidates that averaged < ``min_restarts`` restarts per run."""
    out = []
    for m in METHODS:
        few = [p for p in pts if p.method == m and p.completed == p.trials
               and p.restarts_mean < min_restarts]
        if not few:
            continue
        few.sort(key=lambda p: (p.r, p.checkpoint_steps))
        which = ", ".join(f"r = {p.r}" + (f" C = {p.checkpoint_steps}" if p.stage == 2 else "")
                          + f" ({p.restarts_mean:.1f})" for p in few)
        # steps for min_restarts: from the observed restart rate, or the closed-form T_f if none
        need = [math.ceil(steps * min_restarts / p.restarts_mean) if p.restarts_mean >= 1
                else restarts_needed_steps(p, min_restarts) for p in few
                if p.restart_interval_s == p.restart_interval_s]
        hint = ""
        if need:
            n = max(need)
            n = max(n, steps + 1)
            hint = f"; rerun with --steps {min(n, 10 * AUTO_STEPS_MAX):,} or more"
            if n > 10 * AUTO_STEPS_MAX:
                hint += " (these candidates practically never restart on this cluster)"
        out.append(f"{LABELS[m]} {which}: fewer than {min_restarts} global restarts per run on "
                   f"average, so their TTT/T0 reflects compute overhead more than failures and "
                   f"their ranking is not resolved{hint}")
    return tuple(out)


def _simulated_point(g: Any, closed: Plan, stage: int) -> SimulatedPoint:
    """Statistics of the trials of one (method, r, C) of a sweep frame."""
    method, r = str(g["method"].iloc[0]), int(g["r"].iloc[0])
    cf = closed.point(method, r)
    c_sim = int(g["ckpt_steps"].iloc[0])
    cf_ttt, cf_avail = closed.at_interval(method, r, c_sim)
    g = g.sort_values("trial")
    ttt = g["ttt_over_t0"].to_numpy(dtype=float)
    n = len(ttt)
    std = float(np.std(ttt, ddof=1)) if n > 1 else float("nan")
    return SimulatedPoint(
        method=method, label=LABELS[method], r=r, checkpoint_steps=c_sim,
        trials=n, completed=int(g["completed"].astype(bool).sum()), ttt_mean=float(ttt.mean()),
        ttt_std=std, ttt_min=float(ttt.min()), ttt_max=float(ttt.max()),
        ttt_se=std / math.sqrt(n) if n > 1 else float("nan"),
        availability_mean=float(g["availability"].mean()),
        overhead_mean=float(g["overhead"].mean()),
        restarts_mean=float(g["full_restarts"].mean()),
        closed_form_ttt=cf_ttt, closed_form_availability=cf_avail, stage=stage,
        ttt_trials=tuple(float(x) for x in ttt), restart_interval_s=cf.restart_interval_s,
        step_time_s=cf.step_time_s)


def simulated_frame(sp: SimulatedPlan) -> Any:
    """One row per simulated (method, r, checkpoint interval) of ``sp`` as a DataFrame (for notebooks)."""
    import pandas as pd

    cols = ["label", "stage", "r", "checkpoint_steps", "trials", "completed", "ttt_mean", "ttt_std",
            "ttt_min", "ttt_max", "closed_form_ttt", "availability_mean",
            "closed_form_availability", "overhead_mean", "restarts_mean"]
    return pd.DataFrame([dataclasses.asdict(p) for p in sp.points])[cols]
