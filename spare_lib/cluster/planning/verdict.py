"""One verdict over every method a plan evaluated: which is best, and what the others lose.

A *contender* is a method at its chosen configuration (r, checkpoint interval C) with either a
fast-model TTT/T0 or the per-trial TTT/T0 of its simulated runs. :func:`verdict` ranks them:

* the best contender is the argmin of the (simulated mean or model) TTT/T0 among those whose
  runs all finished (a run stopped at the wall-clock cap only gives a lower bound); when none
  trains (every run stopped at the cap, or the model finds no training cycle) the verdict says
  "no method trains on this cluster";
* every other contender's loss against it, ``TTT/TTT_best − 1``, with, when simulated, the
  paired Student-t interval of the per-trial differences over the best mean, Holm-adjusted when
  the verdict names several comparisons (:mod:`spare_lib.cluster.planning.stats`). A loss whose
  interval covers 0 is **tied**, and a tie is never stated as a win; with one trial there is no
  interval, and the verdict says that nothing is resolved.

Labels and families come from the method registry (:mod:`spare_lib.registry.methods`): the
statement says plainly when no SPARe variant is best.

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

from spare_lib.cluster.planning.stats import CONFIDENCE, holm, paired_comparison
from spare_lib.registry.methods import method as method_spec


def _label(name: str) -> str:
    try:
        return method_spec(name).label
    except ValueError:
        return name


def _is_spare(name: str) -> bool:
    try:
        return method_spec(name).family == "spare"
    except ValueError:
        return False


@dataclass(frozen=True)
class Contender:
    """A method at its chosen configuration.

    Attributes
    ----------
    method : str
        A registered method's name (or any name with its own ``label``).
    r : int
        Redundancy (1 without).
    checkpoint_steps : int or None
        Checkpoint interval C in steps (None: no checkpoints).
    ttt : float
        TTT/T0: the simulated mean, or the fast model's value (inf: never trains).
    trials : tuple of float
        Per-trial TTT/T0 in trial order (paired across contenders); empty for a model.
    finished : bool
        False if a run hit the wall-clock cap (``ttt`` is then a lower bound).
    label : str
        Display name; default the registry's.
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
            object.__setattr__(self, "label", _label(self.method))

    @property
    def trains(self) -> bool:
        """Finished with a finite TTT/T0."""
        return self.finished and math.isfinite(self.ttt)

    def describe(self) -> str:
        """'SPARe+CKPT (r = 8, C = 23 steps)'."""
        c = "no checkpoints" if self.checkpoint_steps is None else f"C = {self.checkpoint_steps} steps"
        return f"{self.label} (r = {self.r}, {c})"


@dataclass(frozen=True)
class Loss:
    """One contender against the best: loss = TTT/TTT_best − 1 with its interval (nan if none)
    at ``confidence`` (Holm-adjusted with several comparisons)."""

    method: str
    label: str
    loss: float
    ci_low: float
    ci_high: float
    lower_bound: bool = False
    confidence: float = CONFIDENCE

    @property
    def has_interval(self) -> bool:
        return self.ci_low == self.ci_low

    @property
    def tied(self) -> bool:
        """The interval covers 0: the simulation cannot tell this method from the best."""
        return (not self.lower_bound) and self.has_interval and self.ci_low <= 0.0 <= self.ci_high

    def text(self) -> str:
        """'+12.3 % (95 % CI +10.1 .. +14.6 %)'; losses past +10,000 % in 3 significant digits
        ('+7.5e+07 %', a method that never finishes)."""
        if not math.isfinite(self.loss):
            return "never trains"
        pct = f"{100 * self.loss:+.1f}" if abs(self.loss) < 100.0 else f"{100 * self.loss:+.3g}"
        head = f"{'>= ' if self.lower_bound else ''}{pct} %"
        if self.has_interval:
            level = f"{100 * self.confidence:.3g} %"
            adj = "" if abs(self.confidence - CONFIDENCE) < 1e-12 else " Holm-adjusted"
            head += (f" ({level}{adj} CI {100 * self.ci_low:+.1f} .. {100 * self.ci_high:+.1f} %"
                     + (", tied" if self.tied else "") + ")")
        return head


@dataclass(frozen=True)
class Verdict:
    """The ranking of :func:`verdict`.

    Attributes
    ----------
    source : str
        'simulated', 'model' or 'closed form'.
    best : Contender
    contenders : tuple of Contender
        Every method evaluated, in the order given.
    losses : tuple of Loss
        One per contender other than the best.
    statement : str
        One plain sentence: the best method, whether it is resolved, whether SPARe is worth it.
    trains : bool
        Some method trains (else the statement says none does).
    """

    source: str
    best: Contender
    contenders: tuple[Contender, ...]
    losses: tuple[Loss, ...] = field(default=())
    statement: str = ""
    trains: bool = True

    def loss(self, method: str) -> float:
        """Loss of ``method`` against the best (0 for the best itself)."""
        if method == self.best.method:
            return 0.0
        for x in self.losses:
            if x.method == method:
                return x.loss
        raise ValueError(f"method must be one of {[c.method for c in self.contenders]}, got {method!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``best`` {method, label, r, checkpoint_steps, ttt_over_t0},
        ``loss_vs_best`` {method: {loss, ci_low, ci_high, confidence, lower_bound, tied}} and
        ``gain_of_best`` {method: 1 − TTT_best / TTT_method} (the paper's gain)."""
        def num(v: float) -> float | None:
            return None if v != v or math.isinf(v) else float(v)

        b = self.best
        out = {"source": self.source, "trains": self.trains,
               "best": {"method": b.method, "label": b.label, "r": b.r,
                        "checkpoint_steps": b.checkpoint_steps, "ttt_over_t0": num(b.ttt)},
               "loss_vs_best": {b.method: {"loss": 0.0, "ci_low": None, "ci_high": None,
                                           "confidence": None, "lower_bound": False,
                                           "tied": False}},
               "statement": self.statement}
        out["gain_of_best"] = {}
        for x in self.losses:
            out["loss_vs_best"][x.method] = {
                "loss": num(x.loss), "ci_low": num(x.ci_low), "ci_high": num(x.ci_high),
                "confidence": x.confidence if x.has_interval else None,
                "lower_bound": x.lower_bound, "tied": x.tied}
            # the paper's time-to-train gain of the best over this method: 1 − TTT_best/TTT
            out["gain_of_best"][x.method] = num(1.0 - 1.0 / (1.0 + x.loss))
        return out

    def lines(self) -> list[str]:
        """The verdict as printed by ``spare plan``."""
        ttt = f"{self.best.ttt:.4g}" if math.isfinite(self.best.ttt) else "inf"
        out = [f"Best ({self.source}): {self.best.describe()}, TTT/T0 {ttt}"]
        for x in self.losses:
            c = next(c for c in self.contenders if c.method == x.method)
            what = "" if x.tied or not math.isfinite(x.loss) else " slower"
            out.append(f"  {c.describe()}: {x.text()}{what}")
        out.append(self.statement)
        return out


def loss_against(c: Contender, ref: Contender, confidence: float = CONFIDENCE) -> Loss:
    """Loss of ``c`` against ``ref`` (TTT/TTT_ref − 1) with the paired interval when both have
    ≥ 2 paired finished trials (else nan bounds)."""
    lo = hi = float("nan")
    if len(c.trials) == len(ref.trials) >= 2 and c.finished and ref.finished:
        cmp = paired_comparison(c.trials, ref.trials, ref.ttt, confidence)
        lo, hi = cmp.ci_low, cmp.ci_high
    loss = c.ttt / ref.ttt - 1.0 if math.isfinite(ref.ttt) and ref.ttt > 0 else float("nan")
    return Loss(method=c.method, label=c.label, loss=loss, ci_low=lo, ci_high=hi,
                lower_bound=not c.finished, confidence=confidence)


def _losses(cs: tuple[Contender, ...], best: Contender) -> list[Loss]:
    """Each other contender's loss; Holm-adjusted intervals when several have one."""
    others = [c for c in cs if c is not best]
    raw = [loss_against(c, best) for c in others]
    paired = [i for i, (c, x) in enumerate(zip(others, raw, strict=True)) if x.has_interval]
    if len(paired) <= 1:
        return raw
    cmps = [paired_comparison(others[i].trials, best.trials, best.ttt) for i in paired]
    adj = holm(cmps, [others[i].trials for i in paired], [best.trials] * len(paired),
               [best.ttt] * len(paired))
    for i, a in zip(paired, adj, strict=True):
        x = raw[i]
        raw[i] = Loss(x.method, x.label, x.loss, a.ci_low, a.ci_high, x.lower_bound, a.confidence)
    return raw


def verdict(contenders: Sequence[Contender], source: str = "simulated") -> Verdict:
    """Rank the contenders (module docstring).

    Parameters
    ----------
    contenders : sequence of Contender
        One per method (distinct ``method`` names), at least one.
    source : str
        'simulated' (trials paired by index give intervals), 'model' or 'closed form' (none).

    Returns
    -------
    Verdict
    """
    cs = tuple(contenders)
    if not cs:
        raise ValueError("contenders must hold at least one method")
    if len({c.method for c in cs}) != len(cs):
        raise ValueError(f"contenders must have distinct methods, got {[c.method for c in cs]}")
    pool = [c for c in cs if c.trains]
    trains = bool(pool)
    pool = pool or [c for c in cs if c.ttt == c.ttt] or list(cs)
    best = min(pool, key=lambda c: c.ttt)
    losses = _losses(cs, best)
    return Verdict(source=source, best=best, contenders=cs, losses=tuple(losses),
                   statement=_statement(best, cs, losses, source, trains), trains=trains)


def _statement(best: Contender, cs: tuple[Contender, ...], losses: list[Loss], source: str,
               trains: bool) -> str:
    """One plain sentence: the best, whether it is resolved, whether SPARe is worth it. A tie
    (interval covering 0) is named as a tie, never as a win."""
    if not trains:
        return ("Verdict: no method trains on this cluster: "
                + ("every candidate's runs stopped at the wall-clock cap" if source == "simulated"
                   else f"the {source} finds no training cycle for any method")
                + ". Failures come faster than a restart and a checkpoint cycle complete: cut the "
                  "restart time T_r or raise the MTBF m.")
    if best.trials and len(best.trials) < 2:
        return (f"Verdict: {best.label} has the lowest mean, from one trial per candidate: no "
                "interval, so no difference is resolved (give --simulate 2 or more).")
    note = "" if source == "simulated" else f" ({source}: no interval; --simulate N checks it)"
    tied = [x for x in losses if x.tied]
    finite = [x for x in losses if x.loss == x.loss and math.isfinite(x.loss)]
    if tied:
        text = (f"Verdict: tied between {best.label} and {_join([x.label for x in tied])}: their "
                f"paired intervals against it cover 0 ({best.label} has the lowest mean); run "
                "more trials (--simulate, --max-trials) or longer runs (--plan-steps) to separate them.")
    elif _is_spare(best.method):
        if not finite:
            return f"Verdict: {best.label}{note}."
        runner = min(finite, key=lambda x: x.loss)
        return (f"Verdict: {best.label}{note}; the next best, {runner.label}, is {runner.text()} "
                "slower.")
    else:
        text = f"Verdict: {best.label}{note}."
    if _is_spare(best.method):
        return text
    spare = [x for x in losses if _is_spare(x.method)]
    if spare:
        x = min(spare, key=lambda y: y.loss if y.loss == y.loss else math.inf)
        if x.tied:
            text += (f" SPARe does not pay off here: {x.label} does no better than "
                     f"{best.label} ({x.text()}).")
        elif math.isfinite(x.loss):
            text += (f" SPARe is the wrong choice on this cluster: {x.label} is {x.text()} "
                     f"slower ({source}).")
    return text


def _join(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


__all__ = ["CONFIDENCE", "Contender", "Loss", "Verdict", "loss_against", "verdict"]
