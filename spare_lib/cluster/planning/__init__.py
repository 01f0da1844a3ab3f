"""Planning: which method, r and checkpoint interval for a cluster, and one verdict.

One pipeline for every mode of ``spare plan`` (:func:`run_plan`): a :class:`PlanRequest` goes
through candidates, evaluation and one verdict, and comes back as one :class:`PlanResult` with
one text and one JSON form.

Modules
-------
request
    :class:`PlanRequest` (cluster, failures, methods, search, evaluation) and
    :class:`TraceFailures` (a fault log as the failure source).
spec
    :class:`ClusterSpec` and :func:`cluster_spec`: the cluster, from its hardware.
fast
    The paper's three methods from the predictive model or the closed forms (Eqs. 2, 5, 7):
    :func:`plan`, :func:`closed_form_point`.
models
    The fast model of every registered method (:func:`~.models.fast_model`).
layouts
    SPARe's layout (ruler, domain-aware, consecutive) in the closed-form planner.
candidates
    The r window per method, the checkpoint intervals, the run length.
evaluation
    Simulating the candidates with common random numbers (:func:`~.evaluation.trial_seed`).
results
    A simulated candidate, a method's choice of r and C with its paired ties.
stats
    Paired Student-t intervals, Holm adjustment, "tied".
verdict
    One verdict over every method.
pipeline
    :func:`run_plan` and :class:`PlanResult`.
printing
    The text report and the JSON (``docs/plan.schema.json``).
traces
    Failures from a real log at the cluster's size (:class:`~.traces.TraceSource`).
strategies
    Notebook 80's drivers: a sweep of every method along one knob, the calibration.
"""

from spare_lib.cluster.planning.fast import (
    ALLREDUCE_CHOICES,
    CKPT_FACTORS,
    LABELS,
    LAYOUTS,
    MAX_WALL_T0,
    METHODS,
    MODELS,
    PLAN_STEPS,
    PREDICT_LAYOUTS,
    REP_PLACEMENTS,
    REP_R,
    SPARE_WINDOW,
    ClosedFormPoint,
    Plan,
    closed_form_point,
    plan,
    rep_r_max,
)
from spare_lib.cluster.planning.pipeline import SCHEMA, PlanResult, run_plan
from spare_lib.cluster.planning.request import PlanRequest, TraceFailures
from spare_lib.cluster.planning.spec import MAX_PLAN_N, RUN_KNOBS, ClusterSpec, cluster_spec

__all__ = ["SCHEMA", "PlanRequest", "PlanResult", "TraceFailures", "run_plan",
           "ALLREDUCE_CHOICES", "CKPT_FACTORS", "LABELS", "LAYOUTS", "MAX_WALL_T0", "METHODS",
           "MODELS", "PLAN_STEPS", "PREDICT_LAYOUTS", "REP_PLACEMENTS", "REP_R", "SPARE_WINDOW",
           "ClosedFormPoint", "ClusterSpec", "MAX_PLAN_N", "RUN_KNOBS", "Plan",
           "closed_form_point", "cluster_spec", "plan", "rep_r_max"]
