"""Optimisation with the predictive model: the best checkpoint interval C* and redundancy r*.

:func:`optimise_checkpoint` scans C for one (method, N, r); :func:`recommend` scans r as well and
returns a :class:`Recommendation`; :func:`optimum_curve` gives r* and C* along a list of cluster
configurations (e.g. N from 10² to 10⁵, or the system MTBF m). All of it calls
:func:`spare_lib.theory.predict.predict` (≈ 0.5 ms per call at a new C, 4–10 ms on a new
cluster; ``benchmarks/bench_predict.py``).

Example
-------
>>> from spare_lib.cluster import h100_600k
>>> rec = recommend("rep", 600, h100_600k(600))
>>> rec.r
3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spare_lib.stacking.layout import max_ruler_r
from spare_lib.theory.predict.model import ClusterLike, Prediction, predict


def default_r_values(method: str, N: int) -> list[int]:
    """Candidate r: SPARe 2..max_ruler_r(N); Rep 2..min(N, 10); CKPT-only [1]."""
    if method == "spare":
        return list(range(2, max_ruler_r(N) + 1))
    if method == "rep":
        return list(range(2, min(N, 10) + 1))
    if method == "ckpt":
        return [1]
    raise ValueError(f"method must be 'spare', 'rep' or 'ckpt', got {method!r}")


def argmin_int(f, lo: int, hi: int) -> int:
    """argmin of f over the integers lo..hi for a unimodal f (ties: the smaller argument).

    Golden-section search on the integers with memoisation (≈ 1.44·log2(hi − lo) + 4 calls), then
    a check of the two neighbours, so a plateau or a slightly non-unimodal f still lands on a
    local minimum.
    """
    memo: dict[int, float] = {}

    def F(x: int) -> float:
        if x not in memo:
            memo[x] = f(x)
        return memo[x]

    a, b = lo, hi
    g = (np.sqrt(5.0) - 1.0) / 2.0
    while b - a > 3:
        c = int(round(b - g * (b - a)))
        d = int(round(a + g * (b - a)))
        if c == d:
            d = c + 1
        if F(c) <= F(d):
            b = d
        else:
            a = c
    best = min(range(a, b + 1), key=lambda x: (F(x), x))
    while True:  # descend to a local minimum
        nb = [x for x in (best - 1, best + 1) if lo <= x <= hi]
        cand = min(nb, key=lambda x: (F(x), x)) if nb else best
        if F(cand) < F(best):
            best = cand
        else:
            return best


def optimise_checkpoint(method: str, N: int, r: int, config: ClusterLike,
                        C_values: Any = None, **kwargs: Any) -> tuple[int, Prediction]:
    """(C, prediction) with the least predicted TTT/T0.

    ``C_values`` None: 13 geometric values in [1, steps], then a golden-section search between
    the best one's neighbours (checkpoint cost falls as 1/C, rework grows with C); else a scan
    of ``C_values``.
    """
    preds: dict[int, Prediction] = {}

    def f(c: int) -> float:
        if c not in preds:
            preds[c] = predict(method, N, r, int(c), config, **kwargs)
        return preds[c].ttt_over_t0

    if C_values is None:
        # a coarse geometric scan first (TTT(C) can have a second, boundary minimum at C = steps
        # when a wipe-out during the whole run is unlikely), then golden section around the best
        steps = max(int(config.steps), 1)
        grid = np.unique(np.round(np.geomspace(1, steps, 13)).astype(int))
        k = min(range(grid.size), key=lambda i: (f(int(grid[i])), i))
        C = argmin_int(f, int(grid[max(k - 1, 0)]), int(grid[min(k + 1, grid.size - 1)]))
    else:
        C = min((int(c) for c in C_values), key=lambda c: (f(c), c))
    return C, preds[C]


@dataclass(frozen=True)
class Recommendation:
    """Model-optimal (r, C) for one method and cluster; ``per_r`` lists (r, C*(r), TTT/T0) for
    every r evaluated."""

    method: str
    N: int
    r: int
    C: int
    prediction: Prediction
    per_r: tuple[tuple[int, int, float], ...]


def recommend(method: str, N: int, config: ClusterLike, *, r_values: Any = None,
              C_values: Any = None, C: int | None = None, search: str = "golden",
              **kwargs: Any) -> Recommendation:
    """The r (and C) minimising the predicted TTT/T0.

    Parameters
    ----------
    method : {'spare', 'rep', 'ckpt'}
    N : int
    config : ClusterConfig-like
    r_values : iterable of int or None
        Candidates (default :func:`default_r_values`).
    C_values : iterable of int or None
        Checkpoint intervals scanned per r (default: :func:`optimise_checkpoint`'s search).
    C : int or None
        A fixed checkpoint interval for every r instead of optimising it.
    search : {'golden', 'scan'}
        'golden': golden-section search over a contiguous r range (TTT(r) is unimodal in the
        model; ``per_r`` then lists the r evaluated); 'scan': every candidate.
    **kwargs
        Passed to :func:`~spare_lib.theory.predict.predict` (layout, mechanisms, ...).
    """
    results: dict[int, tuple[int, Prediction]] = {}

    def run(r: int) -> float:
        if r not in results:
            if C is not None:
                results[r] = (int(C), predict(method, N, int(r), int(C), config, **kwargs))
            else:
                results[r] = optimise_checkpoint(method, N, int(r), config, C_values, **kwargs)
        return results[r][1].ttt_over_t0

    cands = sorted(int(r) for r in (default_r_values(method, N) if r_values is None
                                    else r_values))
    if not cands:
        raise ValueError("r_values must not be empty")
    if search == "scan" or len(cands) <= 4 or cands != list(range(cands[0], cands[-1] + 1)):
        for r in cands:
            run(r)
        r_best = min(results, key=lambda r: (results[r][1].ttt_over_t0, r))
    else:
        r_best = argmin_int(run, cands[0], cands[-1])
    rows = tuple((r, results[r][0], results[r][1].ttt_over_t0) for r in sorted(results))
    return Recommendation(method, N, r_best, results[r_best][0], results[r_best][1], rows)


def optimum_curve(method: str, configs: list[tuple[int, ClusterLike]], *,
                  r_values: Any = None, **kwargs: Any) -> list[Recommendation]:
    """:func:`recommend` along a list of (N, config) pairs (for r*, C* against N or m)."""
    return [recommend(method, N, cfg, r_values=r_values, **kwargs) for N, cfg in configs]
