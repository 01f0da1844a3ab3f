"""What a plan found: one simulated candidate, the per-method choice of r and C (with its ties
and its distance from the fast model), and the whole :class:`PlanResult` with its verdict.

Ties are paired: a candidate is tied with its method's best when the 95 % Student-t interval of
their per-trial differences (common random numbers) covers 0
(:func:`spare_lib.cluster.planning.stats.tie_set`); with one trial nothing is tied.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from spare_lib.cluster.planning.stats import tie_set
from spare_lib.registry.methods import method as method_spec


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
    dropped_mean : float
        Mean share of the samples dropped (elastic-drop; 0 for the exact methods).
    extensions : int
        Runs rerun on a longer failure trace (trace mode).
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
    dropped_mean: float = 0.0
    extensions: int = 0


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
        Candidates whose paired 95 % interval against the best covers 0 (stage 1): the
        simulation cannot tell them apart (only the best with one trial).
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
        Intervals at r whose paired 95 % interval against the best covers 0.
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
        flag = "--spare-r" if method_spec(self.method).layout else "--rep-r"
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
            line = (f"{head}; {self.source} r = {self.closed_form_r}: same (r = {tied} tied: paired "
                    "95 % CI covers 0)")
        elif self.ttt_at_closed_form_r != self.ttt_at_closed_form_r:  # nan: r not simulated
            line = (f"{head}; {self.source} r = {self.closed_form_r} differs by {self.delta_r:+d} "
                    f"and was not simulated (not among the candidates; tied: r = {tied})")
        elif self.agrees:
            line = (f"{head}; {self.source} r = {self.closed_form_r} differs by {self.delta_r:+d} "
                    f"but is within noise (r = {tied} tied: paired 95 % CI covers 0; "
                    f"+{100 * self.excess:.1f} % TTT at r = {self.closed_form_r})")
        else:
            line = (f"{head}; {self.source} r = {self.closed_form_r} DIFFERS by {self.delta_r:+d}: "
                    f"its simulated TTT/T0 {self.ttt_at_closed_form_r:.3f} is "
                    f"{100 * self.excess:+.1f} % (tied: r = {tied})")
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
                    f"(tied: C = {ctied})")
        return (f"{line}\n    checkpoint every {c} steps (TTT/T0 {self.ttt:.3f}, "
                f"{100 * (self.ttt / ttt_r - 1):+.1f} % against the {self.source}'s C = {c0}; "
                f"tied: C = {ctied})")


def _finished(p: SimulatedPoint) -> bool:
    return p.completed == p.trials


def best_and_tied(pts: list[SimulatedPoint], key: str) -> tuple[SimulatedPoint, tuple[int, ...]]:
    """The finished point with the lowest mean (any point if none finished) and the ``key``
    ('r' or 'checkpoint_steps') of the points tied with it (paired interval covers 0)."""
    pool = [p for p in pts if _finished(p)] or pts
    best = min(pool, key=lambda p: p.ttt_mean)
    tied = tie_set({getattr(p, key): p.ttt_trials for p in pool}, getattr(best, key),
                   {getattr(p, key): _finished(p) for p in pool})
    return best, tied


def choose_checkpoint(ch: SimulatedChoice, at_r: list[SimulatedPoint]) -> SimulatedChoice:
    """Stage 2: the best checkpoint interval among ``at_r`` (the points of the chosen r)."""
    c0s = [p for p in at_r if p.stage == 1]
    if not c0s:  # the method was not simulated
        return ch
    c0 = c0s[0]
    if ch.finished:
        best, tied = best_and_tied(at_r, "checkpoint_steps")
    else:
        best, tied = c0, (c0.checkpoint_steps,)
    return dataclasses.replace(
        ch, ttt=best.ttt_mean, checkpoint_steps=best.checkpoint_steps,
        closed_form_checkpoint_steps=c0.checkpoint_steps, checkpoint_tied=tied,
        checkpoint_candidates=tuple(sorted(p.checkpoint_steps for p in at_r)),
        ttt_at_closed_form_checkpoint=c0.ttt_mean)


def choose(name: str, pts: list[SimulatedPoint], r_model: int,
           r_bounds: tuple[int, int] = (2, 10**9), source: str = "model") -> SimulatedChoice:
    """Stage 1: the best r of one method among its simulated points (see SimulatedChoice)."""
    nan = float("nan")
    label = method_spec(name).label
    if not pts:
        return SimulatedChoice(method=name, label=label, r=r_model, ttt=nan, tied=(),
                               closed_form_r=r_model, ttt_at_closed_form_r=nan, delta_r=0,
                               excess=nan, agrees=True, finished=False, r_bounds=r_bounds,
                               source=source)
    finished = any(_finished(p) for p in pts)
    best, tied = best_and_tied(pts, "r")
    at_cf = next((p.ttt_mean for p in pts if p.r == r_model), nan)
    return SimulatedChoice(method=name, label=label, r=best.r, ttt=best.ttt_mean,
                           tied=tied, closed_form_r=r_model, ttt_at_closed_form_r=at_cf,
                           delta_r=best.r - r_model, excess=at_cf / best.ttt_mean - 1.0,
                           agrees=r_model in tied, finished=finished,
                           candidates=tuple(p.r for p in pts),
                           checkpoint_steps=best.checkpoint_steps,
                           closed_form_checkpoint_steps=best.checkpoint_steps,
                           checkpoint_tied=(best.checkpoint_steps,),
                           checkpoint_candidates=(best.checkpoint_steps,),
                           ttt_at_closed_form_checkpoint=best.ttt_mean, r_bounds=r_bounds,
                           source=source)


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


__all__ = ["SimulatedChoice", "SimulatedPoint", "best_and_tied", "choose", "choose_checkpoint"]
