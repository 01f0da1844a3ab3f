"""Which assumption flips the verdict: every strategy planned in one world, and a tornado of the
best SPARe variant against the best other strategy (issue 24, notebook 85, docs/strategies.md).

:func:`world_plan` plans every registered method on one cluster in one failure world with the
planner's pipeline (:func:`~spare_lib.cluster.planning.run_plan`: the fast model's candidates,
simulated trials with common random numbers, paired Student-t intervals, "tied", Holm), so the
notebooks use the same rule as ``spare plan``. :func:`family_ratio` reads a plan's verdict as one
number: the best SPARe variant's TTT over the best non-SPARe variant's, with the paired
t-interval of the per-trial ratios (common random numbers: trial i of both saw the same failures).

:func:`tornado` sets each assumption of :data:`ASSUMPTIONS` at both ends of its range, one at a
time around a base world, and returns that ratio at each end: a ratio above 1 favours the
non-SPARe strategy, below 1 SPARe; the verdict flips where the interval moves across 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from spare_lib.cluster.planning.pipeline import PlanResult, run_plan
from spare_lib.cluster.planning.request import PlanRequest
from spare_lib.cluster.planning.spec import RUN_KNOBS, ClusterSpec
from spare_lib.cluster.planning.stats import CONFIDENCE, _t_interval
from spare_lib.registry.methods import DEFAULT_STRATEGIES, method

#: The tornado's assumptions: name -> (what it is, {end label: ClusterSpec run knobs}), the
#: ranges of issue 24. ``mix_job_share`` ends are failure mixes (see :func:`job_share_mix`).
ASSUMPTIONS: dict[str, tuple[str, dict[str, dict[str, Any]]]] = {
    "rejoin": ("a rejoining group stalls training (blocking) or catches up (non-blocking)",
               {"blocking": {"rejoin_stall_s": None}, "non-blocking": {"rejoin_stall_s": 0.0}}),
    "stall": ("stall per reconfiguration",
              {"0.1 s": {"stall_s": 0.1}, "3 min": {"stall_s": 180.0}}),
    "jitter": ("jitter model", {"unit": {"jitter_model": "unit"},
                                "step": {"jitter_model": "step"},
                                "straggler": {"jitter_model": "straggler"}}),
    "job_share": ("share of job-wide failures", {"0 %": {"job_share": 0.0},
                                                 "5 %": {"job_share": 0.05},
                                                 "15 %": {"job_share": 0.15}}),
    "detect": ("detection time", {"0 min": {"detect_s": 0.0}, "1 min": {"detect_s": 60.0},
                                  "5 min": {"detect_s": 300.0}}),
    "fetch": ("elastic-rebalance's data fetch", {"0 s": {"fetch_s": 0.0},
                                                 "60 s": {"fetch_s": 60.0}}),
    "quorum": ("elastic-drop's quorum min_live", {"none": {"min_live": 0.0},
                                                  "0.9": {"min_live": 0.9}}),
    "allreduce": ("all-reduce after a noticed failure", {"paper": {"allreduce_rule": "paper"},
                                                         "abort": {"allreduce_rule": "abort"}}),
}


def job_share_mix(share: float, detect_s: float | None = None, folder: str | None = None) -> str:
    """A two-class mix (group failures, and a job-wide class of ``share`` of the events) written
    as YAML under ``folder`` (default: a temporary folder); its path, for ``failure_mix``. A share
    of 0 is the paper's mix."""
    import tempfile
    from pathlib import Path

    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share!r}")
    if share == 0.0:
        return "paper"
    d = Path(folder or tempfile.gettempdir()) / "spare-lab-mixes"
    d.mkdir(parents=True, exist_ok=True)
    det = "" if detect_s is None else f", detect_s: {detect_s:g}"
    p = d / f"job_share_{share:g}{'' if detect_s is None else f'_d{detect_s:g}'}.yaml"
    p.write_text(f"name: job-share-{share:g}\nclasses:\n"
                 f"  - {{name: group, share: {1 - share!r}, radius: group}}\n"
                 f"  - {{name: job, share: {share!r}, radius: job{det}}}\n")
    return str(p)


def with_run(spec: ClusterSpec, **run: Any) -> ClusterSpec:
    """``spec`` with run knobs changed (``job_share`` → a :func:`job_share_mix`)."""
    cur = dict(spec.run)
    if "job_share" in run:
        cur["failure_mix"] = job_share_mix(float(run.pop("job_share")))
    for k, v in run.items():
        if k not in RUN_KNOBS:
            raise ValueError(f"run knobs must be among {RUN_KNOBS} or job_share, got {k!r}")
        if v is None:
            cur.pop(k, None)
        else:
            cur[k] = v
    return replace(spec, run=tuple(cur.items()))


def world_plan(spec: ClusterSpec, trials: int, *, methods: Sequence[str] | None = None,
               steps: int | str = "auto", seed: int = 0, workers: int | None = None,
               quick: bool = False, **req: Any) -> PlanResult:
    """Every method (default: all registered) planned on ``spec`` with ``trials`` simulated
    trials (:func:`~spare_lib.cluster.planning.run_plan`). ``quick``: only the fast model's r
    per method and no checkpoint search (a smoke run's size)."""
    ms = DEFAULT_STRATEGIES if methods is None else tuple(methods)
    if quick:
        req = {"r_window": 0, "rep_r": (2,), "checkpoint_factors": (), **req}
    backend = "serial" if workers == 1 else "processes"
    return run_plan(PlanRequest(spec=spec, methods=ms, trials=trials, steps=steps, seed=seed,
                                workers=workers, backend=backend, **req))


def family_ratio(res: PlanResult, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """The best SPARe variant's TTT over the best non-SPARe variant's in a simulated plan.

    Returns
    -------
    dict
        ``spare``, ``other`` (the two methods), ``ratio`` (mean TTT ratio), ``ci_low``,
        ``ci_high`` (paired Student-t interval of the per-trial ratios; nan with < 2 trials),
        ``tied`` (the interval covers 1), ``favours`` ('SPARe', the other's label, or 'tied'),
        ``trials``.
    """
    cs = [c for c in res.verdict.contenders if c.trials and c.finished]
    sp = [c for c in cs if method(c.method).family == "spare"]
    ot = [c for c in cs if method(c.method).family != "spare"]
    if not sp or not ot:
        raise ValueError("the plan must have a finished SPARe and a finished non-SPARe contender")
    a, b = min(sp, key=lambda c: c.ttt), min(ot, key=lambda c: c.ttt)
    q = np.asarray(a.trials, float) / np.asarray(b.trials, float)
    lo = hi = math.nan
    if q.size >= 2:
        half, _, _ = _t_interval(q - 1.0, confidence)
        lo, hi = float(q.mean() - half), float(q.mean() + half)
    tied = bool(q.size < 2 or lo <= 1.0 <= hi)
    favours = "tied" if tied else ("SPARe" if q.mean() < 1 else method(b.method).label)
    return {"spare": a.method, "other": b.method, "ratio": float(q.mean()), "ci_low": lo,
            "ci_high": hi, "tied": tied, "favours": favours, "trials": int(q.size)}


def tornado(spec: ClusterSpec, trials: int, *, assumptions: Mapping[str, Any] | None = None,
            base: Mapping[str, Any] | None = None, **plan_kw: Any) -> list[dict[str, Any]]:
    """The family ratio (:func:`family_ratio`) at every end of every assumption, one at a time
    around ``spec`` with ``base`` run knobs (default: the paper's world).

    Returns
    -------
    list of dict
        One row per (assumption, end): ``assumption``, ``what``, ``end`` and the fields of
        :func:`family_ratio`.
    """
    table = ASSUMPTIONS if assumptions is None else assumptions
    s0 = with_run(spec, **dict(base or {}))
    rows = []
    for name, (what, ends) in table.items():
        for end, knobs in ends.items():
            res = world_plan(with_run(s0, **dict(knobs)), trials, **plan_kw)
            rows.append({"assumption": name, "what": what, "end": end, **family_ratio(res)})
    return rows


def tornado_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per assumption: its ends' ratios, whom it favours at each end, its size (the
    spread of the ratio across its ends) and whether the verdict flips across them."""
    out = []
    names = list(dict.fromkeys(r["assumption"] for r in rows))
    for n in names:
        rs = [r for r in rows if r["assumption"] == n]
        lo, hi = min(rs, key=lambda r: r["ratio"]), max(rs, key=lambda r: r["ratio"])
        flips = len({r["favours"] for r in rs}) > 1
        out.append({"assumption": n, "what": rs[0]["what"],
                    "ends": "; ".join(f"{r['end']}: {r['ratio']:.3f} ({r['favours']})" for r in rs),
                    "favours_spare_at": lo["end"], "size": hi["ratio"] - lo["ratio"],
                    "flips": flips})
    return sorted(out, key=lambda r: -r["size"])


__all__ = ["ASSUMPTIONS", "family_ratio", "job_share_mix", "tornado", "tornado_table",
           "with_run", "world_plan"]
