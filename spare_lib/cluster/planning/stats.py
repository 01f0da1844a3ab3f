"""The statistics every comparison of the planner uses (one rule for every mode and notebook).

Candidates are compared by their *paired* per-trial differences: with common random numbers
trial t of every candidate sees the same failures, so d_t = TTT_t(a) − TTT_t(b) is far less
noisy than the two means. For n ≥ 2 finished trials, the interval on mean(d) is Student-t with
n − 1 degrees of freedom (a bootstrap over so few trials has only a handful of distinct
resamples: 10 for n = 3); with one trial there is no interval, and the comparison says so. A
comparison is **tied** when its interval covers 0, and nothing is called a win on a tie.

When a verdict names m > 1 comparisons (the best against each other contender), each interval
is Holm-adjusted (Holm 1979): the comparisons are ordered by their paired-t p-values and the
i-th (0-based) gets confidence 1 − α/(m − i), so the ties and wins the verdict states hold
together at family-wise level α = 1 − :data:`CONFIDENCE`.

Example
-------
>>> c = paired_comparison((2.50, 2.52, 2.48), (1.49, 1.52, 1.50))
>>> round(c.mean, 2), c.tied, bool(c.ci_low > 0)
(1.0, False, True)
>>> paired_comparison((1.0,), (1.1,)).ci_low != paired_comparison((1.0,), (1.1,)).ci_low  # nan
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

#: Family-wise confidence of the intervals a verdict states.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Comparison:
    """a − b over paired trials: mean difference, its interval, p-value and level.

    ``mean``, ``ci_low`` and ``ci_high`` are divided by ``scale`` (e.g. b's mean TTT/T0, to read
    as a relative loss); nan bounds: no interval (fewer than 2 paired finite trials).
    """

    mean: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    confidence: float = CONFIDENCE

    @property
    def has_interval(self) -> bool:
        """There are ≥ 2 paired trials, so there is an interval."""
        return self.ci_low == self.ci_low

    @property
    def tied(self) -> bool:
        """The interval covers 0: the trials cannot tell a from b."""
        return self.has_interval and self.ci_low <= 0.0 <= self.ci_high


def _t_interval(d: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """(half-width, p-value, sd) of the Student-t interval of mean(d)."""
    from scipy import stats

    n = len(d)
    sd = float(np.std(d, ddof=1))
    se = sd / math.sqrt(n)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * se
    if se == 0.0:
        p = 0.0 if float(d.mean()) != 0.0 else 1.0
    else:
        p = float(2 * stats.t.sf(abs(float(d.mean())) / se, n - 1))
    return half, p, sd


def paired_comparison(a: Sequence[float], b: Sequence[float], scale: float = 1.0,
                      confidence: float = CONFIDENCE) -> Comparison:
    """The paired comparison of a − b (module docstring); ``scale`` divides the results."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"a and b must be paired 1-d sequences of equal length, got {x.shape} "
                         f"and {y.shape}")
    scale = float(scale)
    d = x - y
    mean = float(d.mean()) / scale
    if len(d) < 2 or not np.all(np.isfinite(d)):
        return Comparison(mean, math.nan, math.nan, math.nan, len(d), confidence)
    half, p, _ = _t_interval(d, confidence)
    m = float(d.mean())
    return Comparison(mean, (m - half) / scale, (m + half) / scale, p, len(d), confidence)


def holm(comparisons: Sequence[Comparison], a: Sequence[Sequence[float]],
         b: Sequence[Sequence[float]], scales: Sequence[float]) -> list[Comparison]:
    """Holm-adjusted intervals of several paired comparisons (a[i] − b[i], scaled by scales[i]).

    With one comparison (or none with an interval) the intervals are unchanged. Otherwise the
    comparisons with an interval are ranked by p-value and the i-th gets confidence
    1 − α/(m − i), α = 1 − :data:`CONFIDENCE`, m the number with an interval.
    """
    out = list(comparisons)
    idx = [i for i, c in enumerate(out) if c.has_interval]
    m = len(idx)
    if m <= 1:
        return out
    alpha = 1.0 - CONFIDENCE
    for rank, i in enumerate(sorted(idx, key=lambda j: out[j].p_value)):
        level = 1.0 - alpha / (m - rank)
        adj = paired_comparison(a[i], b[i], scales[i], level)
        out[i] = replace(adj, p_value=out[i].p_value)
    return out


def tie_set(trials: dict[int, Sequence[float]], best: int, finished: dict[int, bool]) -> tuple[int, ...]:
    """The keys (e.g. r or C) whose paired interval against ``best`` covers 0, with ``best``
    itself; with one trial only ``best`` (there is no interval to call a tie)."""
    ref = trials[best]
    out = [best]
    for k, v in trials.items():
        if k == best or not finished.get(k, True):
            continue
        if paired_comparison(v, ref).tied:
            out.append(k)
    return tuple(sorted(out))


__all__ = ["CONFIDENCE", "Comparison", "holm", "paired_comparison", "tie_set"]
