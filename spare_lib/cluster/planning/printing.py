"""One text form and one JSON form of a plan, whatever the mode.

:func:`plan_lines` gives the report ``spare plan`` prints: the cluster, the failures, the fast
model's table, the simulation's table and per-method choices (when simulated), the warnings,
the assumptions that shape the answer, and the verdict (both verdicts where the model and the
simulation disagree). :func:`plan_json` gives the strict-JSON data of ``spare plan --json``,
with ``best`` and ``loss_vs_best`` at the top in every mode; its schema is
``docs/plan.schema.json`` (:data:`SCHEMA`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from spare_lib.cluster.planning.fast import ClosedFormPoint
from spare_lib.registry.methods import method as method_spec

#: Version of the JSON of every ``spare plan --json`` (``docs/plan.schema.json``).
SCHEMA = "spare-plan/1"


def _big(v: float) -> str:
    """TTT/T0 with 3 decimals, 4 significant digits past 1000, 'inf' for a method that never
    trains."""
    if not math.isfinite(v):
        return "inf"
    return f"{v:.3f}" if v < 1000 else f"{v:.4g}"


def _fmt(v: float, nd: int = 3) -> str:
    return "n/a" if v != v else f"{v:.{nd}f}"


def _table(rows: list[dict[str, Any]]) -> list[str]:
    """Right-aligned text table of ``rows`` (the keys of the first row are the columns)."""
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in cols}
    return (["  ".join(c.rjust(widths[c]) for c in cols)]
            + ["  ".join(str(r.get(c, "")).rjust(widths[c]) for c in cols) for r in rows])


def cluster_line(res: Any) -> str:
    """The first line of a plan: the cluster, N, m, T_r, T_s, the step and its T_a."""
    c = res.request.spec
    extra = []
    if c.idle_gpus:
        extra.append(f"{c.idle_gpus:,} GPUs idle (gpus-per-group does not divide gpus)")
    if c.domain_size > 1 or c.domain_fault_share > 0:
        extra.append(f"failure domains of D = {c.domain_size} groups, q = {c.domain_fault_share:g} "
                     "of failure events are domain events")
    req = res.request
    if req.layout != "ruler" or req.rep_placement != "consecutive":
        extra.append(f"SPARe layout {req.layout}, Rep placement {req.rep_placement}")
    m = res.model_spec.system_mtbf_s
    return (f"Cluster: {c.gpus:,} GPUs / {c.gpus_per_group:,} per group -> N = {c.N} groups; "
            f"system MTBF m = {m / 60:.3g} min; restart T_r = {c.restart_s / 60:.3g} min; "
            f"checkpoint T_s = {c.checkpoint_s:.3g} s; step = {c.step_s:.3g} s "
            f"(compute {c.compute_per_stack_s:.3g} s + all-reduce T_a {c.allreduce_s:.3g} s)"
            + "".join(f"; {x}" for x in extra))


def model_rows(res: Any) -> list[dict[str, str]]:
    """The fast model's table, one row per method at its best r (column name -> text)."""
    rows = []
    for name in res.request.methods:
        p = res.fast.best(name)
        rows.append({"method": p.label, "r": p.r,
                     "mu": "inf" if not math.isfinite(p.mu) else f"{p.mu:.1f}",
                     "T_f (h)": ("inf" if not math.isfinite(p.restart_interval_s)
                                 else f"{p.restart_interval_s / 3600:.2f}"),
                     "overhead": f"{p.overhead:.3f}", "T_c* (s)": f"{p.checkpoint_period_s:.0f}",
                     "T_c* (steps)": p.checkpoint_steps, "A*": f"{100 * p.availability:.1f}%",
                     "TTT/T0": _big(p.ttt_over_t0)})
    return rows


def _model_lines(res: Any) -> list[str]:
    plan = res.fast.plan
    predict = plan.model == "predict"
    out = [f"\n{'Predictive model' if predict else 'Closed forms'}, model '{plan.model}': "
           f"{plan.model_note};"]
    out += [f"  {note}" for note in plan.notes + res.fast.notes]
    if res.request.trace is not None:
        out.append(f"  failures from the log {res.request.trace.name!r}: its group failures on this "
                   f"cluster give m = {res.model_spec.system_mtbf_s / 60:.3g} min, the model's m")
    if predict:
        out.append(f"  a run of {plan.steps:,} committed steps; mu = mean failures per restart "
                   "cycle, T_f = mean uptime per cycle, C = argmin of the model's TTT/T0 per r, "
                   "T_c = C x mean step (failure events included)")
    else:
        out.append("  T_f = mu m, T_c* = T_s + sqrt(T_s^2 + 2 T_s (T_f + T_r)), A* = A(T_c*) "
                   "(Eq. 2), TTT/T0 = overhead / A* (Eq. 7)")
    from spare_lib.theory.finite import EXACT_N_MAX

    if res.request.N > EXACT_N_MAX and plan.model == "finite":
        out.append(f"  N > {EXACT_N_MAX}: r = 2 uses the float closed form of the exact count "
                   "(Kaplansky) instead of big-integer sums; r >= 3 the Bethe form as always")
    out += _table(model_rows(res))
    if any(method_spec(n).layout for n in res.request.methods):
        out.append(f"Paper's formulas (mu Gamma form, Eq. 5) over r = 2..{plan.r_max}: r* = "
                   f"{plan.r_star_paper}; floor(log2 N + 0.833) = {plan.r_star_log2}: "
                   f"{plan.r_star_note()}.")
    return out


def _simulation_lines(res: Any) -> list[str]:
    req = res.request
    fs = req.checkpoint_factors
    search = (f"then C = {', '.join(f'{f:g}' for f in fs)} x T_c* steps at the best r (search "
              "'C')" if fs else "no checkpoint search")
    if req.trace is not None:
        law = f"failures from the log {req.trace.name!r} ({req.trace.method})"
    elif req.spec.failure_dist == "weibull":
        law = f"Weibull k = {req.spec.weibull_shape:g}"
    else:
        law = "exponential"
    crn = ("common random numbers across candidates" if res.crn else
           "the same synthesized failures per trial for every candidate" if req.trace is not None
           else "common seeds across candidates")
    out = [f"\nSimulation ({req.trials} trials x {res.steps:,} steps per run [{res.steps_note}], "
           f"{law}; every candidate r with checkpoints every T_c* steps (search 'r'), {search}; "
           f"{crn}, seed {req.seed}; runs capped at {req.run_cap_t0:g} T0):"]
    short = "model" if res.fast.source == "model" else "closed"
    rows = []
    for q in res.points:
        unfinished = q.trials - q.completed
        mean = (_fmt(q.ttt_mean) if not unfinished
                else f">= {_fmt(q.ttt_mean, 1)} ({unfinished}/{q.trials} unfinished)")
        row = {"method": q.label, "search": "r" if q.stage == 1 else "C", "r": q.r,
               "C (steps)": q.checkpoint_steps, "TTT/T0 mean": mean, "sd": _fmt(q.ttt_std),
               "restarts": f"{q.restarts_mean:.1f}", "A mean": f"{100 * q.availability_mean:.1f}%"}
        if any(p.dropped_mean > 0 for p in res.points):
            row["dropped"] = f"{100 * q.dropped_mean:.2f}%"
        row[f"{short} TTT/T0"] = _big(q.closed_form_ttt)
        row[f"{short} A*"] = f"{100 * q.closed_form_availability:.1f}%"
        rows.append(row)
    out += _table(rows)
    out.append(f"\nPer method, simulation against {res.fast.source}:")
    for name in req.methods:
        ch = res.choices.get(name)
        if ch is not None and ch.candidates:
            out += ("  " + ch.describe()).split("\n")
    return out


def verdict_lines(res: Any) -> list[str]:
    """The verdict block that ends a plan: the simulated one if any, else the model's; both when
    they disagree."""
    mv, sv = res.model_verdict, res.verdict
    cap = [] if res.ceiling is None or res.ceiling["binds"] else [res.ceiling["statement"]]
    if not res.simulated:
        return ["", *sv.lines(), *cap, f"({mv.source} only: --simulate N_TRIALS checks it with "
                                       "the simulator)"]
    out = [""]
    if res.disagreements:
        out.append(f"The {mv.source} and the simulation disagree: " + "; ".join(res.disagreements)
                   + ". Both verdicts:")
        out += mv.lines() + [""]
    return out + sv.lines() + cap


def plan_lines(res: Any) -> list[str]:
    """The whole report of ``spare plan`` (module docstring)."""
    out = [cluster_line(res), *_model_lines(res)]
    if res.simulated:
        out += _simulation_lines(res)
    for w in res.warnings:
        if w in res.fast.plan.notes or w in res.fast.notes:
            continue
        out.append(f"Warning: {w}.")
    out.append("\nAssumptions (defaults that shape this answer; docs/knobs.md):")
    out += [f"  - {a}" for a in res.assumptions]
    return out + verdict_lines(res)


def _num(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _num(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_num(x) for x in v]
    try:
        import numpy as np

        if isinstance(v, np.generic):
            return _num(v.item())
    except ImportError:  # pragma: no cover
        pass
    return v


def _point_dict(p: ClosedFormPoint) -> dict[str, Any]:
    return _num(dataclasses.asdict(p))


def plan_json(res: Any) -> dict[str, Any]:
    """The plan as strict-JSON-ready data (``docs/plan.schema.json``)."""
    req = res.request
    spec = req.spec
    cluster = dataclasses.asdict(spec)
    cluster["run"] = dict(spec.run)
    cluster.update(N=spec.N, compute_per_stack_s=spec.compute_per_stack_s, idle_gpus=spec.idle_gpus,
                   model_system_mtbf_s=res.model_spec.system_mtbf_s)
    failures: dict[str, Any] = {"source": "law", "failure_dist": spec.failure_dist,
                                "weibull_shape": spec.weibull_shape}
    if req.trace is not None:
        t = req.trace
        failures = {"source": "trace", "name": t.name, "method": t.method, "law": t.law,
                    "placement": t.placement, "gpus_per_server": t.gpus_per_server,
                    "tolerance_s": t.tolerance_s, "checkpoint_rule": t.checkpoint_rule,
                    "label": getattr(t.trace, "label", "")}
    plan = res.fast.plan
    fast = {n: {**_point_dict(res.fast.best(n)),
                "curve": [_point_dict(p) for p in res.fast.curves[n]]} for n in req.methods}
    v = res.verdict.to_dict()
    d = {
        "schema": SCHEMA, "cluster": cluster, "failures": failures, "methods": list(req.methods),
        "model": plan.model, "model_note": plan.model_note,
        "model_notes": list(plan.notes + res.fast.notes), "fast": fast,
        "r_max": plan.r_max, "r_star_paper": plan.r_star_paper, "r_star_log2": plan.r_star_log2,
        "layout": req.layout, "rep_placement": req.rep_placement,
        "simulated": res.simulated, "trials": req.trials, "steps": res.steps,
        "steps_note": res.steps_note, "seed": req.seed, "crn": res.crn,
        "run_cap_t0": req.run_cap_t0, "checkpoint_factors": list(req.checkpoint_factors),
        "candidates": {n: list(rs) for n, rs in res.candidates.items()},
        "points": [_num(dataclasses.asdict(p)) for p in res.points],
        "choices": {n: {**_num(dataclasses.asdict(ch)), "summary": ch.describe()}
                    for n, ch in res.choices.items()},
        "verdict": v, "model_verdict": res.model_verdict.to_dict(),
        "disagreements": list(res.disagreements), "warnings": list(res.warnings),
        "assumptions": list(res.assumptions),
        "best": v["best"], "loss_vs_best": v["loss_vs_best"],
        "ceiling": res.ceiling,
    }
    return _num(d)


__all__ = ["cluster_line", "model_rows", "plan_json", "plan_lines", "verdict_lines"]
