"""The simulated planner: :func:`plan_simulated` confirms or corrects the closed-form r and checkpoint
interval with the discrete-event simulator, run through :func:`spare_lib.cluster.sweep.run_sweep`
(seeds derived from each point, so every backend gives the same plan).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.planning import (
    CKPT_FACTORS,
    LABELS,
    MAX_WALL_T0,
    METHODS,
    REP_R,
    SPARE_WINDOW,
    ClusterSpec,
    Plan,
    _clean,
    plan,
)


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
    """One simulated run of a planning candidate (a :func:`~spare_lib.cluster.sweep.run_sweep` point).

    Module-level so the process pool can pickle it. ``trial`` only makes the points of the
    trials of one candidate distinct, hence their seeds (``point_seed``) too. The other cluster
    fields (jitter, Weibull k = 0.78, shrink 0.1 s, all-reduce factor 0.5) are the preset's.

    Returns
    -------
    dict
        ttt_over_t0, availability, overhead, full_restarts, completed.
    """
    from spare_lib.cluster.simulate import simulate

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
    :func:`spare_lib.cluster.sweep.run_sweep` and :func:`simulate_plan_point`; seeds are
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
        Passed to :func:`~spare_lib.cluster.sweep.run_sweep` (default: local process pool, no cache).

    Returns
    -------
    SimulatedPlan
    """
    from spare_lib.cluster.sweep import run_sweep

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
