"""SPARe-b against its rivals on one cluster (issue 25 item 5, notebook 82).

:func:`microbatch_plans` plans SPARe+CKPT, the three SPARe-b methods (``spare-b``,
``spare-b+repair``, ``spare-b+drop``), elastic-rebalance and elastic-drop with the planner's
pipeline (:func:`~spare_lib.cluster.planning.sensitivity.world_plan`: the fast model's r and C
per method, simulated trials with common random numbers) at the first fetch time, and
elastic-rebalance alone at every other fetch time ``fetch_s``. The trial seeds of a plan depend
on the cluster, the trial and the root seed only, never on run knobs such as ``fetch_s``
(:func:`~spare_lib.cluster.planning.evaluation.trial_seed`), so trial i of every plan saw the
same failures and the trials pair across plans.

:func:`variant_table` lists every (method, fetch) variant with its mean TTT/T0 and the Student-t
interval of that mean; :func:`microbatch_verdicts` compares each SPARe-b method with each rival
by the paired Student-t interval of the per-trial differences, Holm-adjusted over all the
comparisons of one cluster, and calls it "tied" when the interval covers 0.

**Runs stopped at the wall-clock cap** (``run_cap_t0`` · T0; a restart-dominated world such as
the ``llama3`` mix at 600k GPUs) only give a lower bound on their TTT. A variant with a capped
trial is not ``finished``; its mean is a lower bound and it gets no interval of its mean, and a
comparison that involves it gets no paired interval (it leaves Holm's family): its verdict is
``'capped'`` and ``bound`` says which way the observed mean difference bounds the true one over
the same trials (``'lower'``: only the SPARe-b side was capped, the true difference is at least
``diff_pct``; ``'upper'``: only the rival was capped; ``'none'``: both were, nothing is known
and ``diff_pct`` is nan).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spare_lib.cluster.planning.pipeline import PlanResult
from spare_lib.cluster.planning.sensitivity import with_run, world_plan
from spare_lib.cluster.planning.spec import ClusterSpec
from spare_lib.cluster.planning.stats import (
    CONFIDENCE,
    Comparison,
    _t_interval,
    holm,
    paired_comparison,
)
from spare_lib.registry.methods import method

#: The SPARe-b methods judged, and the rivals planned beside them.
SPARE_B: tuple[str, ...] = ("spare-b", "spare-b+repair", "spare-b+drop")
RIVALS: tuple[str, ...] = ("spare", "elastic-rebalance", "elastic-drop")


def microbatch_plans(spec: ClusterSpec, trials: int, *,
                     fetch_values: Sequence[float] = (0.0, 10.0, 60.0),
                     **plan_kw: Any) -> dict[float, PlanResult]:
    """Plans of :data:`SPARE_B` and :data:`RIVALS` on ``spec`` (module docstring).

    Parameters
    ----------
    spec : ClusterSpec
        The cluster and its run knobs (``microbatches`` = b is shared by SPARe-b and
        elastic-rebalance).
    trials : int
        Simulated trials per candidate, ≥ 2 (a paired interval needs two).
    fetch_values : sequence of float
        Elastic-rebalance's fetch times in s, ≥ 0, no repeats; the first plan has every method.
    **plan_kw
        Passed to :func:`~spare_lib.cluster.planning.sensitivity.world_plan` (``steps``,
        ``seed``, ``workers``, ``quick``...).

    Returns
    -------
    dict fetch_s -> PlanResult
    """
    if int(trials) != trials or trials < 2:
        raise ValueError(f"trials must be an integer >= 2, got {trials!r}")
    fv = [float(f) for f in fetch_values]
    if not fv or min(fv) < 0 or len(set(fv)) != len(fv):
        raise ValueError(f"fetch_values must be distinct times >= 0 s, got {fetch_values!r}")
    out = {}
    for i, f in enumerate(fv):
        ms = (*RIVALS, *SPARE_B) if i == 0 else ("elastic-rebalance",)
        out[f] = world_plan(with_run(spec, fetch_s=f), int(trials), methods=ms, **plan_kw)
    return out


def _label(name: str, fetch: float | None) -> str:
    lab = method(name).label
    return lab if fetch is None else f"{lab} (fetch {fetch:g} s)"


def _variants(plans: dict[float, PlanResult]) -> list[dict[str, Any]]:
    """Every (method, fetch) contender: fetch is None for methods without ``fetch_s``;
    ``completed`` trials (the others hit the cap) and mean ``availability`` from the plan's
    simulated point at the contender's (r, C)."""
    rows = []
    first = next(iter(plans))
    for f, res in plans.items():
        for c in res.verdict.contenders:
            fetch = f if c.method == "elastic-rebalance" else None
            if fetch is None and f != first:
                continue
            p = next((q for q in res.points if (q.method, q.r, q.checkpoint_steps)
                      == (c.method, c.r, c.checkpoint_steps)), None)
            rows.append({"method": c.method, "fetch_s": fetch, "variant": _label(c.method, fetch),
                         "r": c.r, "checkpoint_steps": c.checkpoint_steps, "finished": c.finished,
                         "trials": np.asarray(c.trials, float),
                         "completed": len(c.trials) if p is None else p.completed,
                         "availability": np.nan if p is None else p.availability_mean})
    return rows


def variant_table(plans: dict[float, PlanResult],
                  confidence: float = CONFIDENCE) -> list[dict[str, Any]]:
    """One row per variant: ``method``, ``fetch_s`` (nan where it does not apply), ``variant``,
    ``r``, ``checkpoint_steps``, ``ttt_over_t0`` (mean over the trials; a lower bound when not
    ``finished``), ``ci_low``, ``ci_high`` (Student-t interval of the mean; nan when a trial hit
    the cap), ``ttt_min``, ``ttt_max``, ``trials``, ``finished``, ``completed`` (trials that
    finished), ``availability`` (mean)."""
    rows = []
    for v in _variants(plans):
        t = v.pop("trials")
        ok = t.size >= 2 and v["finished"]
        half = _t_interval(t - t.mean(), confidence)[0] if ok else np.nan
        rows.append({**v, "fetch_s": np.nan if v["fetch_s"] is None else v["fetch_s"],
                     "ttt_over_t0": float(t.mean()), "ci_low": float(t.mean() - half),
                     "ci_high": float(t.mean() + half), "ttt_min": float(t.min()),
                     "ttt_max": float(t.max()), "trials": int(t.size)})
    return rows


def microbatch_verdicts(plans: dict[float, PlanResult]) -> list[dict[str, Any]]:
    """Each SPARe-b method against each rival variant: ``spare_variant``, ``rival``,
    ``diff_pct`` = mean of (TTT_a − TTT_b) over the rival's mean TTT in %, ``ci_low_pct``,
    ``ci_high_pct`` (Holm-adjusted paired Student-t interval; nan when a run hit the cap),
    ``p_value``, ``verdict`` ('tied', which of the two is faster, or 'capped'), ``bound`` (''
    when both finished, else 'lower', 'upper' or 'none': module docstring), ``trials``,
    ``finished`` (both)."""
    vs = _variants(plans)
    pairs = [(a, b) for a in vs if a["method"] in SPARE_B for b in vs if b["method"] in RIVALS]
    if not pairs:
        raise ValueError("the plans must hold a SPARe-b method and a rival")
    xs = [a["trials"] for a, _ in pairs]
    ys = [b["trials"] for _, b in pairs]
    scales = [float(y.mean()) for y in ys]
    comps = holm([_comparison(x, y, s, a["finished"] and b["finished"])
                  for x, y, s, (a, b) in zip(xs, ys, scales, pairs, strict=True)], xs, ys, scales)
    rows = []
    for (a, b), c in zip(pairs, comps, strict=True):
        bound = _bound(a["finished"], b["finished"])
        if bound:
            winner = "capped"
        elif not (c.has_interval and (c.ci_low > 0 or c.ci_high < 0)):
            winner = "tied"
        else:
            winner = f"{a['variant']} faster" if c.mean < 0 else f"{b['variant']} faster"
        rows.append({"method": a["method"], "spare_variant": a["variant"], "rival": b["variant"],
                     "rival_method": b["method"], "fetch_s": b["fetch_s"],
                     "diff_pct": np.nan if bound == "none" else 100 * c.mean,
                     "ci_low_pct": 100 * c.ci_low, "ci_high_pct": 100 * c.ci_high,
                     "p_value": c.p_value, "verdict": winner, "bound": bound, "trials": c.n,
                     "finished": bool(a["finished"] and b["finished"])})
    return rows


def _comparison(x: np.ndarray, y: np.ndarray, scale: float, finished: bool) -> Comparison:
    """The paired comparison of x − y, or, when a run of either hit the cap, its mean difference
    alone (no interval, so :func:`holm` leaves it out of the family)."""
    if finished:
        return paired_comparison(x, y, scale)
    return Comparison(float((x - y).mean()) / scale, np.nan, np.nan, np.nan, int(x.size))


def _bound(a_finished: bool, b_finished: bool) -> str:
    """How the observed mean difference a − b bounds the true one (module docstring)."""
    if a_finished and b_finished:
        return ""
    if b_finished:
        return "lower"
    return "upper" if a_finished else "none"
