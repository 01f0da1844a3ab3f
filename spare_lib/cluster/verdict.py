"""One verdict over every method a plan evaluated: which is best, and what the others lose.

A *contender* is a method at its chosen configuration (r, checkpoint interval C) with either a
closed-form TTT/T0 or the per-trial TTT/T0 of its simulated runs. :func:`verdict` ranks them:

* the best contender is the argmin of the (simulated mean or closed-form) TTT/T0, among those
  whose runs all finished (a run stopped at the wall-clock cap only gives a lower bound);
* every other contender's loss against it, ``TTT/TTT_best − 1``, with, when simulated, a 95 %
  confidence interval from the *paired* per-trial differences: with common random numbers
  (trial t of every candidate sees the same failure sequence per group) the differences
  d_t = TTT_t − TTT_best,t are far less noisy than the two means; the interval is the
  Student-t interval of mean(d), divided by the best mean. With one trial, or when either side
  did not finish, there is no interval.

Methods plug in by name: a contender carries its method name, and :data:`METHOD_LABELS` maps
known names to the paper's labels (new methods such as elastic-drop or spare+repair only add a
label, or pass their own). :data:`REDUNDANT` lists the methods that are SPARe; the verdict says
plainly when none of them is best ("SPARe is not worth it here").

Example
-------
>>> a = Contender("spare", 8, 23, ttt=2.5, trials=(2.50, 2.52, 2.48))
>>> b = Contender("ckpt", 1, 11, ttt=1.5, trials=(1.49, 1.52, 1.50))
>>> v = verdict([a, b])
>>> v.best.method, round(v.loss("spare"), 3)
('ckpt', 0.667)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Method name -> label in the paper's wording. New methods register here (or pass ``label``).
METHOD_LABELS: dict[str, str] = {
    "spare": "SPARe+CKPT", "rep": "Rep+CKPT", "ckpt": "CKPT-only",
    "elastic-drop": "Elastic (drop)", "elastic-rebalance": "Elastic (rebalance)",
    "spare+repair": "SPARe+repair",
}

#: Methods that are SPARe (the verdict says when none of them wins).
REDUNDANT_SPARE = ("spare", "spare+repair")

#: Confidence level of the intervals.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Contender:
    """A method at its chosen configuration.

    Attributes
    ----------
    method : str
        Method name ('spare', 'rep', 'ckpt', or any registered later).
    r : int
        Redundancy (1 for CKPT-only).
    checkpoint_steps : int or None
        Checkpoint interval C in steps (None: no checkpoints).
    ttt : float
        TTT/T0: the simulated mean, or the closed form's value.
    trials : tuple of float
        Per-trial TTT/T0 in trial order (paired across contenders); empty for closed forms.
    finished : bool
        False if a run hit the wall-clock cap (``ttt`` is then a lower bound).
    label : str
        Display name; default from :data:`METHOD_LABELS`.
    """

    method: str
    r: int
    checkpoint_steps: int | None
    ttt: float
    trials: tuple[float, ...] = ()
    finished: bool = True
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", METHOD_LABELS.get(self.method, self.method))

    def describe(self) -> str:
        """'SPARe+CKPT r = 8, C = 23 steps'."""
        c = "no checkpoints" if self.checkpoint_steps is None else f"C = {self.checkpoint_steps} steps"
        return f"{self.label} (r = {self.r}, {c})"


@dataclass(frozen=True)
class Loss:
    """One contender against the best: loss = TTT/TTT_best − 1 with its CI (nan if none)."""

    method: str
    label: str
    loss: float
    ci_low: float
    ci_high: float
    lower_bound: bool = False

    @property
    def tied(self) -> bool:
        """The interval includes 0: the simulation cannot tell this method from the best."""
        return (not self.lower_bound) and self.ci_low == self.ci_low and self.ci_low <= 0.0

    def text(self) -> str:
        """'+12.3 % (95 % CI +10.1 .. +14.6 %)'; losses past +10,000 % in 3 significant digits
        ('+7.5e+07 %', a method that never finishes)."""
        pct = f"{100 * self.loss:+.1f}" if abs(self.loss) < 100.0 else f"{100 * self.loss:+.3g}"
        head = f"{'>= ' if self.lower_bound else ''}{pct} %"
        if self.ci_low == self.ci_low:
            head += f" ({100 * CONFIDENCE:.0f} % CI {100 * self.ci_low:+.1f} .. {100 * self.ci_high:+.1f} %)"
        return head


@dataclass(frozen=True)
class Verdict:
    """The ranking of :func:`verdict`.

    Attributes
    ----------
    source : str
        'simulated' or 'closed form'.
    best : Contender
    contenders : tuple of Contender
        Every method evaluated, in the order given.
    losses : tuple of Loss
        One per contender other than the best.
    statement : str
        One plain sentence: the best method, and whether SPARe is worth it.
    """

    source: str
    best: Contender
    contenders: tuple[Contender, ...]
    losses: tuple[Loss, ...] = field(default=())
    statement: str = ""

    def loss(self, method: str) -> float:
        """Loss of ``method`` against the best (0 for the best itself)."""
        if method == self.best.method:
            return 0.0
        for x in self.losses:
            if x.method == method:
                return x.loss
        raise ValueError(f"method must be one of {[c.method for c in self.contenders]}, got {method!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``best`` {method, label, r, checkpoint_steps, ttt_over_t0} and
        ``loss_vs_best`` {method: {loss, ci_low, ci_high, lower_bound, tied}} (nan -> None)."""
        def num(v: float) -> float | None:
            return None if v != v or math.isinf(v) else float(v)

        b = self.best
        out = {"source": self.source,
               "best": {"method": b.method, "label": b.label, "r": b.r,
                        "checkpoint_steps": b.checkpoint_steps, "ttt_over_t0": num(b.ttt)},
               "loss_vs_best": {b.method: {"loss": 0.0, "ci_low": None, "ci_high": None,
                                           "lower_bound": False, "tied": False}},
               "statement": self.statement}
        for x in self.losses:
            out["loss_vs_best"][x.method] = {"loss": num(x.loss), "ci_low": num(x.ci_low),
                                             "ci_high": num(x.ci_high),
                                             "lower_bound": x.lower_bound, "tied": x.tied}
        return out

    def lines(self) -> list[str]:
        """The verdict as printed by ``spare plan``."""
        out = [f"Best ({self.source}): {self.best.describe()}, TTT/T0 {self.best.ttt:.4g}"]
        for x in self.losses:
            c = next(c for c in self.contenders if c.method == x.method)
            tie = "  [tied: not resolved by the simulation]" if x.tied else ""
            out.append(f"  {c.describe()}: {x.text()} slower{tie}")
        out.append(self.statement)
        return out


def _paired_ci(a: Sequence[float], b: Sequence[float], scale: float) -> tuple[float, float]:
    """Student-t CI of mean(a − b)/scale over paired trials (nan, nan for < 2 pairs)."""
    from scipy import stats

    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = len(d)
    if n < 2 or not np.all(np.isfinite(d)):
        return float("nan"), float("nan")
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * float(np.std(d, ddof=1)) / math.sqrt(n)
    m = float(d.mean())
    return (m - half) / scale, (m + half) / scale


def loss_against(c: Contender, ref: Contender) -> Loss:
    """Loss of ``c`` against ``ref`` (TTT/TTT_ref − 1) with the paired CI when both have ≥ 2
    paired finished trials (else nan bounds)."""
    lo = hi = float("nan")
    if len(c.trials) == len(ref.trials) >= 2 and c.finished and ref.finished:
        lo, hi = _paired_ci(c.trials, ref.trials, ref.ttt)
    return Loss(method=c.method, label=c.label, loss=c.ttt / ref.ttt - 1.0, ci_low=lo, ci_high=hi,
                lower_bound=not c.finished)


def verdict(contenders: Sequence[Contender], source: str = "simulated") -> Verdict:
    """Rank the contenders; the best is the argmin of ``ttt`` among the finished ones.

    Parameters
    ----------
    contenders : sequence of Contender
        One per method (distinct ``method`` names), at least one.
    source : str
        'simulated' (trials paired by index give CIs) or 'closed form' (no CIs).

    Returns
    -------
    Verdict
    """
    cs = tuple(contenders)
    if not cs:
        raise ValueError("contenders must hold at least one method")
    if len({c.method for c in cs}) != len(cs):
        raise ValueError(f"contenders must have distinct methods, got {[c.method for c in cs]}")
    pool = [c for c in cs if c.finished and c.ttt == c.ttt] or list(cs)
    best = min(pool, key=lambda c: c.ttt)
    losses = [loss_against(c, best) for c in cs if c is not best]
    return Verdict(source=source, best=best, contenders=cs, losses=tuple(losses),
                   statement=_statement(best, cs, losses, source))


def _statement(best: Contender, cs: tuple[Contender, ...], losses: list[Loss], source: str) -> str:
    spare = [c for c in cs if c.method in REDUNDANT_SPARE]
    tied = [x for x in losses if x.tied]
    if best.method in REDUNDANT_SPARE:
        if not losses:
            return f"Verdict: {best.label}."
        runner = min(losses, key=lambda x: x.loss)
        if runner.tied:
            return (f"Verdict: {best.label}, but not resolved against {runner.label} "
                    f"({runner.text()}): run more trials (--simulate) or longer runs (--steps).")
        return f"Verdict: {best.label}; the next best, {runner.label}, is {runner.text()} slower."
    text = f"Verdict: {best.label}."
    if spare:
        worst = [x for x in losses if x.method in REDUNDANT_SPARE]
        x = min(worst, key=lambda y: y.loss)
        if x.tied:
            text += (f" SPARe does not pay off here: {x.label} is {x.text()} against it, a tie "
                     f"in this {source} run, so the simpler {best.label} is enough.")
        else:
            text += (f" SPARe is the wrong choice on this cluster: {x.label} is {x.text()} "
                     f"slower ({source}).")
    if tied and not any(x.method in REDUNDANT_SPARE for x in tied):
        text += " Tied within noise: " + ", ".join(x.label for x in tied) + "."
    return text


__all__ = ["CONFIDENCE", "METHOD_LABELS", "REDUNDANT_SPARE", "Contender", "Loss", "Verdict",
           "loss_against", "verdict"]
