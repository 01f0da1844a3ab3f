"""The candidates a plan simulates: r per method, the checkpoint intervals, the run length.

From the fast model (:mod:`spare_lib.cluster.planning.models`) of every requested method:

* a method with a stacking layout (SPARe+CKPT, SPARe+repair): the model's r* ± ``r_window``
  on its curve (the TTT(r) curve is flat near its minimum), or the explicit ``spare_r``;
* a method with redundancy but no layout (Rep+CKPT): ``rep_r`` (default 2..5, beyond which
  the overhead r dominates) clipped to [2, N], plus the model's r;
* every other method: r = 1;
* the checkpoint interval of stage 1 is the model's C at each r; stage 2 tries round(f·C0)
  for f in ``checkpoint_factors`` at each method's best r (:func:`checkpoint_candidates`);
* ``steps='auto'``: enough committed steps for the near-best candidates of the methods whose
  restarts the ranking must resolve (no rejoins, a restart per wipe-out or replica set) to
  expect ``min_restarts`` global restarts per run, at least the paper's 10,000
  (:func:`auto_steps`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.planning.fast import PLAN_STEPS, REP_R
from spare_lib.cluster.planning.layouts import r_ranges
from spare_lib.cluster.planning.models import FastModel, fast_model
from spare_lib.cluster.planning.request import PlanRequest
from spare_lib.registry.methods import method

#: ``steps='auto'``: at least the paper's 10,000 steps, at most this many.
AUTO_STEPS_MIN, AUTO_STEPS_MAX = 10_000, 200_000
#: ``steps='auto'`` resolves the candidates whose model TTT/T0 is within this share of their
#: method's best (the ones the ranking has to tell apart).
AUTO_NEAR_BEST = 0.05


def checkpoint_candidates(c0: int, factors: Sequence[float]) -> tuple[int, ...]:
    """Checkpoint intervals of the stage-2 search: C0 and round(f·C0) ≥ 1 for f in ``factors``.

    >>> checkpoint_candidates(10, (0.5, 0.75, 1.5, 2.0))
    (5, 8, 10, 15, 20)
    """
    c0 = check_int("c0", c0, lo=1)
    fs = [check_positive("checkpoint_factors", float(f)) for f in factors]
    return tuple(sorted({c0} | {max(1, round(f * c0)) for f in fs}))


def restarts_needed_steps(p: Any, min_restarts: int) -> int:
    """Steps for ``min_restarts`` expected global restarts: ceil(min_restarts·T_f/step time) of a
    model point (or a simulated point carrying the model's T_f)."""
    tf, step = p.restart_interval_s, p.step_time_s
    if not (math.isfinite(tf) and math.isfinite(step) and step > 0):
        return AUTO_STEPS_MAX * 10
    return max(1, math.ceil(min_restarts * tf / step))


def _resolves_restarts(name: str) -> bool:
    """Methods whose ranking hinges on their restarts (no rejoins; a restart per wipe-out or per
    dead replica set): the run must be long enough to see several."""
    m = method(name)
    return m.redundancy and not m.rejoins


def auto_steps(fast: FastModel, cands: dict[str, tuple[int, ...]],
               min_restarts: int) -> tuple[int, str]:
    """Run length for ``steps='auto'`` and a note saying how it was chosen (module docstring)."""
    pts = []
    for name, rs in cands.items():
        if rs and _resolves_restarts(name):
            mine = [fast.point(name, r) for r in rs]
            j = min(q.ttt_over_t0 for q in mine)
            pts += [q for q in mine if q.ttt_over_t0 <= (1 + AUTO_NEAR_BEST) * j]
    if not pts:
        return AUTO_STEPS_MIN, f"auto: {AUTO_STEPS_MIN:,} steps (the paper's)"
    need = {(p.method, p.r): restarts_needed_steps(p, min_restarts) for p in pts}
    key = max(need, key=need.get)
    top = fast.point(*key)
    steps = min(max(need[key], AUTO_STEPS_MIN), AUTO_STEPS_MAX)
    src = fast.source if fast.source == "model" else "closed-form"
    who = f"{top.label} r = {top.r} ({src} T_f = {top.restart_interval_s / 3600:.3g} h)"
    scope = f"the candidates within {100 * AUTO_NEAR_BEST:.0f} % of their method's {src} best"
    if need[key] <= AUTO_STEPS_MIN:
        return steps, (f"auto: {steps:,} steps (the paper's), enough for >= {min_restarts} expected "
                       f"restarts per run of {scope}")
    if need[key] > AUTO_STEPS_MAX:
        return steps, (f"auto: {steps:,} steps (the cap; {who} would need {need[key]:,} for "
                       f">= {min_restarts} expected restarts per run)")
    return steps, (f"auto: {steps:,} steps so that {scope} expect >= {min_restarts} restarts per "
                   f"run (the longest need: {who})")


def _check_rs(name: str, rs: Sequence[int], lo: int, hi: int, N: int) -> tuple[int, ...]:
    out = set()
    for r in rs:
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not lo <= int(r) <= hi:
            raise ValueError(f"{name} must be integers in [{lo}, {hi}] at N = {N}, got {r!r}")
        out.add(int(r))
    return tuple(sorted(out))


def default_rs(req: PlanRequest, fast: FastModel, name: str) -> tuple[int, ...]:
    """The default candidates of one method (module docstring)."""
    m = method(name)
    if not m.redundancy:
        return (1,)
    if m.layout:
        w = check_int("r_window", req.r_window, lo=0)
        on_curve = sorted(p.r for p in fast.curves[name])
        r0 = fast.best(name).r
        return tuple(r for r in on_curve if r0 - w <= r <= r0 + w)
    N = req.N
    return tuple(sorted({r for r in REP_R if r <= N} | {fast.best(name).r}))


def _explicit(req: PlanRequest, fast: FastModel, name: str) -> tuple[int, ...] | None:
    """The explicit candidates of one method (``spare_r`` for layout methods, ``rep_r`` for the
    others with redundancy), checked; None when not given."""
    m = method(name)
    N = req.N
    if m.layout and req.spare_r is not None:
        on_curve = {p.r for p in fast.curves[name]}
        top = max(fast.plan.r_max, max(fast.plan.skipped_r, default=2))
        rs = _check_rs("spare_r", req.spare_r, 2, top, N)
        gone = [r for r in rs if r not in on_curve]
        if gone and len(gone) == len(rs):
            raise ValueError(f"spare_r must be in {r_ranges(sorted(on_curve))} (the r for which "
                             f"layout='{req.layout}' exists at N = {N} with domain_size = "
                             f"{req.spec.domain_size}), got {r_ranges(gone)}")
        if gone:
            warnings.warn(f"SPARe r = {r_ranges(gone)} skipped: the {req.layout} layout does not "
                          f"exist there (N = {N}, D = {req.spec.domain_size})", UserWarning,
                          stacklevel=3)
        return tuple(r for r in rs if r in on_curve)
    if m.redundancy and not m.layout and req.rep_r is not None:
        return _check_rs("rep_r", req.rep_r, 2, N, N)
    return None


def candidate_rs(req: PlanRequest, fast: FastModel) -> dict[str, tuple[int, ...]]:
    """Candidates r of every requested method (explicit or default)."""
    out = {}
    for name in req.methods:
        given = _explicit(req, fast, name)
        out[name] = default_rs(req, fast, name) if given is None else given
    if not any(out.values()):
        raise ValueError("spare_r, rep_r and strategies leave no candidate to simulate")
    return out


def skipped_notes(req: PlanRequest, fast: FastModel) -> tuple[str, ...]:
    """One note when explicit SPARe candidates were dropped (layout missing at those r)."""
    if req.spare_r is None or not any(method(n).layout for n in req.methods):
        return ()
    name = next(n for n in req.methods if method(n).layout)
    on_curve = {p.r for p in fast.curves[name]}
    gone = sorted({int(r) for r in req.spare_r} - on_curve)
    if not gone:
        return ()
    return (f"SPARe r = {r_ranges(gone)} skipped: the {req.layout} layout does not exist there "
            f"(N = {req.N}, D = {req.spec.domain_size})",)


def plan_candidates(req: PlanRequest) -> tuple[FastModel, dict[str, tuple[int, ...]], int, str]:
    """The fast model, the candidates r per method, the run length and how it was chosen.

    With ``steps='auto'`` and the predictive model (which depends on the run length) the model
    plans again for the chosen length, and the default candidates follow it.
    """
    first = PLAN_STEPS if req.steps == "auto" else int(req.steps)
    fast = fast_model(req.spec, req.methods, req.model, first, layout=req.layout,
                      rep_placement=req.rep_placement)
    cands = candidate_rs(req, fast)
    if req.steps != "auto":
        return fast, cands, int(req.steps), f"given: {int(req.steps):,} steps"
    steps, note = auto_steps(fast, cands, req.min_restarts)
    if fast.plan.model == "predict" and steps != fast.plan.steps:
        fast = fast_model(req.spec, req.methods, req.model, steps, layout=req.layout,
                          rep_placement=req.rep_placement)
        redo = {n: default_rs(req, fast, n) for n in req.methods}
        for n in req.methods:
            if _explicit(req, fast, n) is None:
                cands[n] = redo[n]
    return fast, cands, steps, note


__all__ = ["AUTO_NEAR_BEST", "AUTO_STEPS_MAX", "AUTO_STEPS_MIN", "auto_steps", "candidate_rs",
           "checkpoint_candidates", "default_rs", "plan_candidates", "restarts_needed_steps",
           "skipped_notes"]
