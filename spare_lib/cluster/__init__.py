"""The cluster: configuration and presets, the simulator's engine, runs and planning.

Subpackages and modules, bottom to top (import-linter keeps each on the ones below it)
-------------------------------------------------------------------------------------
config
    :class:`ClusterConfig`, the paper's 600k-H100 preset (SPEC §6), the all-reduce model and
    :func:`cluster_config` for any cluster; regime: the restart-dominant regime of Fig. 1.
engine
    The numba event loop (SPEC §3–5), its barrier and index of live groups, the failure-clock
    inputs, and the recovery methods registered with it (:mod:`spare_lib.cluster.engine`).
runs
    :func:`simulate`, :func:`simulate_many`, result tables, the executor (serial, processes,
    Dask), resumable sweeps, correlated failures (:mod:`spare_lib.cluster.runs`).
planning
    ``spare plan``: the fast plan (predictive model, closed forms), the simulated plan, the
    strategies' comparison, traces, and one verdict over every method
    (:mod:`spare_lib.cluster.planning`).
warm
    Compiling every numba kernel once (``spare warm``).
"""

from spare_lib.cluster.config import (
    FAILURE_DISTRIBUTIONS,
    ClusterConfig,
    allreduce_600k_s,
    analytic_checkpoint_interval,
    h100_600k,
    paper_checkpoint_interval,
)
from spare_lib.cluster.planning import (
    ClosedFormPoint,
    ClusterSpec,
    Plan,
    PlanRequest,
    PlanResult,
    TraceFailures,
    closed_form_point,
    cluster_spec,
    plan,
    run_plan,
)
from spare_lib.cluster.planning.traces import trace_failures
from spare_lib.cluster.regime import restart_time_s, system_mtbf_s
from spare_lib.cluster.runs.executor import BACKENDS, check_backend, execute
from spare_lib.cluster.runs.results import (
    PAPER_MAIN_TABLE,
    main_table,
    results_frame,
    simulate_points,
    summarize_runs,
    theory_lines,
)
from spare_lib.cluster.runs.simulate import (
    METHOD_LABEL,
    METHODS,
    SimResult,
    simulate,
    simulate_many,
    task_seed,
)
from spare_lib.cluster.runs.sweeps import cache_key, example_point, point_seed, run_sweep, simulate_point

__all__ = [
    "FAILURE_DISTRIBUTIONS", "ClusterConfig", "allreduce_600k_s", "analytic_checkpoint_interval",
    "h100_600k", "paper_checkpoint_interval", "BACKENDS", "check_backend", "execute",
    "ClosedFormPoint", "ClusterSpec", "Plan", "PlanRequest", "PlanResult", "TraceFailures",
    "closed_form_point", "cluster_spec", "plan", "run_plan", "restart_time_s", "system_mtbf_s",
    "PAPER_MAIN_TABLE", "main_table", "results_frame", "simulate_points", "summarize_runs",
    "theory_lines",
    "METHOD_LABEL", "METHODS", "SimResult", "simulate", "simulate_many", "task_seed",
    "cache_key", "example_point", "point_seed", "run_sweep", "simulate_point", "trace_failures",
]
