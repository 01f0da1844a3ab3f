"""The cluster: configuration and presets, the discrete-event core and its methods, batch runs,
sweeps (local or Dask) and planning (closed-form and simulated).

Modules
-------
config
    :class:`ClusterConfig` and the paper's 600k-H100 preset (SPEC §6).
core, methods
    The numba event loop (SPEC §3–5) and the recovery methods registered with it.
simulate
    :func:`simulate` (one run, a :class:`SimResult`) and :func:`simulate_many` (a batch).
results, regime
    Result tables of notebooks 50/60; the restart-dominant regime of Fig. 1.
executor, sweep
    One executor (serial, processes, Dask) and resumable parameter sweeps.
planning, planning_sim, planning_results, verdict
    ``spare plan``: closed-form (Eqs. 2, 5, 7) and simulated recommendations of r and C, and
    one verdict over every method.
traces
    Planning with real failure traces (synthesized at the cluster's size, common per trial).
warm
    Compiling the simulator's kernels once (``spare warm``).
"""

from spare_lib.cluster.config import (
    FAILURE_DISTRIBUTIONS,
    ClusterConfig,
    allreduce_600k_s,
    analytic_checkpoint_interval,
    h100_600k,
    paper_checkpoint_interval,
)
from spare_lib.cluster.executor import BACKENDS, check_backend, execute
from spare_lib.cluster.planning import (
    ClosedFormPoint,
    ClusterSpec,
    Plan,
    closed_form_point,
    cluster_spec,
    plan,
)
from spare_lib.cluster.planning_results import explore_summary
from spare_lib.cluster.planning_sim import (
    SimulatedPlan,
    candidate_rs,
    checkpoint_candidates,
    plan_simulated,
    simulated_frame,
)
from spare_lib.cluster.regime import restart_time_s, system_mtbf_s
from spare_lib.cluster.results import (
    PAPER_MAIN_TABLE,
    main_table,
    results_frame,
    summarize_runs,
    theory_lines,
)
from spare_lib.cluster.simulate import (
    METHOD_LABEL,
    METHODS,
    SimResult,
    simulate,
    simulate_many,
    task_seed,
)
from spare_lib.cluster.sweep import cache_key, example_point, point_seed, run_sweep, simulate_point
from spare_lib.cluster.traces import plan_with_trace, simulate_with_trace, trace_failures

__all__ = [
    "FAILURE_DISTRIBUTIONS", "ClusterConfig", "allreduce_600k_s", "analytic_checkpoint_interval",
    "h100_600k", "paper_checkpoint_interval", "BACKENDS", "check_backend", "execute",
    "ClosedFormPoint", "ClusterSpec", "Plan", "closed_form_point", "cluster_spec",
    "explore_summary", "plan", "SimulatedPlan", "candidate_rs", "checkpoint_candidates",
    "plan_simulated", "simulated_frame", "restart_time_s", "system_mtbf_s", "PAPER_MAIN_TABLE",
    "main_table", "results_frame", "summarize_runs", "theory_lines", "METHOD_LABEL", "METHODS",
    "SimResult", "simulate", "simulate_many", "task_seed", "cache_key", "example_point",
    "point_seed", "run_sweep", "simulate_point", "plan_with_trace", "simulate_with_trace",
    "trace_failures",
]
