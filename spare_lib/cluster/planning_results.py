"""Results of the simulated planner (:func:`spare_lib.cluster.planning_sim.plan_simulated`): one
simulated candidate, the per-method choice of r and C (with ties and the distance from the closed
form), and the whole plan with its verdict.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spare_lib.cluster.planning import LABELS, METHODS, Plan, _clean
from spare_lib.cluster.verdict import Verdict

#: Flags of ``spare plan`` that set the candidates, for advice that names what the user can type.
CANDIDATE_FLAGS = {"spare": "--spare-r", "rep": "--rep-r"}


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
        The fast model's prediction for this candidate (:meth:`Plan.at_interval`: the
        predictive model at this C, or the closed form at its T_c*).
    ttt_trials : tuple of float
        TTT/T0 per trial, in trial order (paired across candidates by common random numbers).
    restart_interval_s, step_time_s : float
        Closed-form T_f = μ·m and mean step time of this candidate (for run-length advice).
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
    ttt_trials: tuple[float, ...] = ()
    restart_interval_s: float = float("nan")
    step_time_s: float = float("nan")


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
    r_bounds : tuple of int
        Smallest and largest r this method can take at this N (SPARe: 2..largest ruler r; Rep:
        2..N), so that edge advice only suggests candidates that exist.
    source : str
        What ``closed_form_*`` came from, as printed: 'closed form' or 'model' (the predictive
        model, :attr:`Plan.source`).
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
    r_bounds: tuple[int, int] = (2, 10**9)
    source: str = "closed form"

    def edge_advice(self) -> str:
        """'' or the flag that widens the r window past the edge where the best r sits."""
        cands = self.candidates
        if len(cands) <= 2 or self.r not in (min(cands), max(cands)):
            return ""
        lo, hi = min(cands), max(cands)
        flag = CANDIDATE_FLAGS.get(self.method, "the candidate list")
        if self.r == lo and lo > self.r_bounds[0]:
            return (f"at the edge of the simulated r window: widen it with {flag} "
                    f"{max(self.r_bounds[0], lo - 3)}..{hi}")
        if self.r == hi and hi < self.r_bounds[1]:
            return (f"at the edge of the simulated r window: widen it with {flag} "
                    f"{lo}..{min(self.r_bounds[1], hi + 3)}")
        return ""

    def describe(self) -> str:
        """One or two lines: whether, and by how much, simulation and closed form disagree on r
        and (after the checkpoint search) on the checkpoint interval."""
        if not self.finished:
            return (f"{self.label}: no run finished within the wall-clock cap "
                    f"(TTT/T0 > {self.ttt:.3g})")
        ttt_r = self.ttt_at_closed_form_checkpoint
        head = f"{self.label}: simulated r = {self.r} (TTT/T0 {ttt_r:.3f})"
        if self.edge_advice():
            head += f" [{self.edge_advice()}]"
        tied = _ranges(self.tied)
        if self.delta_r == 0:
            line = f"{head}; {self.source} r = {self.closed_form_r}: same (r = {tied} tied within 2 s.e.)"
        elif self.agrees:
            line = (f"{head}; {self.source} r = {self.closed_form_r} differs by {self.delta_r:+d} "
                    f"but is within noise (r = {tied} tied within 2 s.e.; "
                    f"+{100 * self.excess:.1f} % TTT at r = {self.closed_form_r})")
        else:
            line = (f"{head}; {self.source} r = {self.closed_form_r} DIFFERS by {self.delta_r:+d}: "
                    f"its simulated TTT/T0 {self.ttt_at_closed_form_r:.3f} is "
                    f"{100 * self.excess:+.1f} % (tied within 2 s.e.: r = {tied})")
        if len(self.checkpoint_candidates) < 2:
            return line
        c, c0 = self.checkpoint_steps, self.closed_form_checkpoint_steps
        ctied = ", ".join(str(x) for x in self.checkpoint_tied)
        cands = self.checkpoint_candidates
        if len(cands) > 2 and c == max(cands):
            ctied += (" [best C at the edge of the simulated range: add larger factors, e.g. "
                      "--checkpoint-factors 0.5,1.5,2,3,4]")
        elif len(cands) > 2 and c == min(cands) and c > 1:
            ctied += (" [best C at the edge of the simulated range: add smaller factors, e.g. "
                      "--checkpoint-factors 0.25,0.5,0.75,1.5]")
        if c == c0:
            return (f"{line}\n    checkpoint every {c} steps: the {self.source}'s C is the simulated "
                    f"best of C = {', '.join(str(x) for x in self.checkpoint_candidates)} "
                    f"(tied within 2 s.e.: C = {ctied})")
        return (f"{line}\n    checkpoint every {c} steps (TTT/T0 {self.ttt:.3f}, "
                f"{100 * (self.ttt / ttt_r - 1):+.1f} % against the {self.source}'s C = {c0}; "
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
    verdict : Verdict
        Every method simulated, at its recommended r and C: the best (argmin of the simulated
        means among finished ones) and each other's loss with a paired 95 % CI.
    closed_verdict : Verdict
        The same from the closed forms (no CIs).
    disagreements : tuple of str
        Where the closed form's ranking falls outside the simulation's CIs (or picks another
        best): both verdicts are then worth reading.
    warnings : tuple of str
        Statistical adequacy (too few restarts per run) and other caveats, one line each.
    steps_note : str
        How the run length was chosen ('auto: ...' or 'given').
    crn : bool
        Whether the failure streams were common across candidates (``failure_seed``); seeds are
        common in any case.
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
    verdict: Verdict | None = None
    closed_verdict: Verdict | None = None
    disagreements: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    steps_note: str = ""
    crn: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (nan -> None): every field, plus ``best`` and ``loss_vs_best`` of the
        simulated verdict at the top level and the closed form's under ``closed``."""
        d = _clean(dataclasses.asdict(self))
        d["closed"] = self.closed.to_dict()
        for m in METHODS:
            d[m]["summary"] = getattr(self, m).describe()
        if self.verdict is not None:
            v = self.verdict.to_dict()
            d["verdict"] = v
            d["best"], d["loss_vs_best"] = v["best"], v["loss_vs_best"]
        if self.closed_verdict is not None:
            d["closed_verdict"] = self.closed_verdict.to_dict()
        return d


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


def _choose(method: str, pts: list[SimulatedPoint], r_closed: int,
            r_bounds: tuple[int, int] = (2, 10**9)) -> SimulatedChoice:
    """Stage 1: the best r of one method among its simulated points (see SimulatedChoice)."""
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
                           ttt_at_closed_form_checkpoint=best.ttt_mean, r_bounds=r_bounds)


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
