"""Simulating a plan's candidates: one run per candidate × trial, common random numbers.

Trial t of every candidate (any method, r and C) runs with the same seed
:func:`trial_seed` (derived from the cluster and t only, never from the method, r or C) and,
with the cluster's failure law, the same failure stream (``simulate(..., failure_seed=...)``);
with a fault log, the same synthesized failure rows (children of the trial seed), extended on a
longer horizon when a run outlasts them. Every candidate of a trial thus sees the same failure
sequence per group, and differences between candidates are paired by trial. Runs go through
:func:`spare_lib.cluster.runs.sweeps.run_sweep` (a local process pool by default; the numbers
do not depend on the backend or the worker count).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np

from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.planning.layouts import spare_layout
from spare_lib.cluster.planning.models import FastModel
from spare_lib.cluster.planning.request import PlanRequest
from spare_lib.cluster.planning.results import SimulatedPoint
from spare_lib.cluster.planning.spec import ClusterSpec
from spare_lib.registry.methods import method as method_spec

_SPEC_DEFAULTS = {"domain_size": 1, "domain_fault_share": 0.0}


def trial_seed(spec: ClusterSpec, trial: int, root: int = 0) -> int:
    """Seed of trial ``trial`` for every candidate of a plan: from the cluster, the trial index
    and ``root`` only (never the method, r or C, nor the run knobs of :attr:`ClusterSpec.run`,
    which change what a method pays, not the failures), so candidates share their random
    numbers, and so do plans at two values of a strategy knob."""
    from spare_lib.cluster.runs.sweeps import point_seed

    cluster = dataclasses.asdict(spec)
    del cluster["run"]
    for k, default in _SPEC_DEFAULTS.items():  # seeds of clusters without them unchanged
        if cluster[k] == default:
            del cluster[k]
    return point_seed({"cluster": cluster, "trial": int(trial)}, root)


def _config(steps: int, compute_per_stack_s: float, allreduce_s: float, restart_s: float,
            checkpoint_s: float, system_mtbf_s: float, n_gpus: int, weibull_shape: float,
            failure_dist: str, domain_size: int, domain_fault_share: float,
            run: dict[str, Any]) -> ClusterConfig:
    return ClusterConfig(steps=int(steps), compute_per_stack_s=float(compute_per_stack_s),
                         allreduce_s=float(allreduce_s), restart_s=float(restart_s),
                         checkpoint_s=float(checkpoint_s), system_mtbf_s=float(system_mtbf_s),
                         n_gpus=int(n_gpus), weibull_shape=float(weibull_shape),
                         failure_dist=str(failure_dist), domain_size=int(domain_size),
                         domain_fault_share=float(domain_fault_share), **run)


def simulate_plan_point(method: str, N: int, r: int, ckpt_steps: int, steps: int,
                        compute_per_stack_s: float, allreduce_s: float, restart_s: float,
                        checkpoint_s: float, system_mtbf_s: float, n_gpus: int, trial: int,
                        seed: int, max_wall_t0: float = 50.0, weibull_shape: float = 0.78,
                        failure_dist: str = "weibull", failure_seed: int | None = None,
                        domain_size: int = 1, domain_fault_share: float = 0.0,
                        layout: str = "ruler", rep_placement: str = "consecutive",
                        trace: Any = None, **run: Any) -> dict[str, Any]:
    """One simulated run of a planning candidate (a :func:`~spare_lib.cluster.runs.sweeps.run_sweep`
    point; module level so the process pool can pickle it).

    ``trial`` labels the trial; its seed is :func:`trial_seed` (the same for every candidate of
    the trial) and, with common random numbers, ``failure_seed`` too. ``run`` holds the
    ClusterConfig knobs of the strategies (stall, rejoin, micro-batches, fetch) when given.
    ``trace``: a :class:`~spare_lib.cluster.planning.traces.TraceSource` whose rows for this trial
    replace the failure law (common per trial; the horizon grows when a run outlasts it).

    Returns
    -------
    dict
        ttt_over_t0, availability, overhead, full_restarts, dropped_sample_fraction, completed,
        extensions (trace reruns on a longer horizon).
    """
    from spare_lib.cluster.runs.simulate import simulate

    config = _config(steps, compute_per_stack_s, allreduce_s, restart_s, checkpoint_s,
                     system_mtbf_s, n_gpus, weibull_shape, failure_dist, domain_size,
                     domain_fault_share, run)
    extra: dict[str, Any] = {}
    if method_spec(method).layout and layout != "ruler":
        extra["layout"] = spare_layout(int(N), int(r), str(layout), int(domain_size))
    if rep_placement != "consecutive":
        extra["rep_placement"] = str(rep_placement)
    max_wall_s = float(max_wall_t0) * config.t0_s()
    extensions = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # unfinished runs are reported instead
        if trace is None:
            if failure_seed is not None:
                extra["failure_seed"] = int(failure_seed)
            res = simulate(method, int(N), int(r), int(ckpt_steps), config, seed=int(seed),
                           max_wall_s=max_wall_s, **extra)
        else:
            fam, jitter = trace.trial_seeds(int(seed))
            n_chunks = trace.first_chunks
            while True:
                horizon = n_chunks * trace.chunk_s
                rows = trace.rows(config, int(N), horizon, fam)
                res = simulate(method, int(N), int(r), int(ckpt_steps), config, seed=jitter,
                               max_wall_s=max_wall_s, failure_trace=rows, **extra)
                if res.total_s < horizon or horizon >= max_wall_s:
                    break
                extensions += 1  # the run outlasted its failures: a longer prefix, rerun
                n_chunks = max(n_chunks + 1, math.ceil(1.5 * res.total_s / trace.chunk_s))
    return {"ttt_over_t0": res.ttt_over_t0, "availability": res.availability,
            "overhead": res.overhead, "full_restarts": res.full_restarts,
            "dropped_sample_fraction": res.dropped_sample_fraction,
            "completed": res.completed, "extensions": extensions}


def base_point(req: PlanRequest, spec: ClusterSpec, steps: int) -> dict[str, Any]:
    """The keys every point of a plan shares (knobs at their defaults are left out, so plans
    that do not set them keep their cache keys)."""
    base = {"N": spec.N, "steps": steps, "compute_per_stack_s": spec.compute_per_stack_s,
            "allreduce_s": spec.allreduce_s, "restart_s": spec.restart_s,
            "checkpoint_s": spec.checkpoint_s, "system_mtbf_s": spec.system_mtbf_s,
            "n_gpus": spec.gpus, "max_wall_t0": req.run_cap_t0,
            "weibull_shape": spec.weibull_shape, "failure_dist": spec.failure_dist}
    for k, v, default in (("domain_size", spec.domain_size, 1),
                          ("domain_fault_share", spec.domain_fault_share, 0.0),
                          ("layout", req.layout, "ruler"),
                          ("rep_placement", req.rep_placement, "consecutive")):
        if v != default:
            base[k] = v
    base.update(dict(spec.run))
    return base


def run_stage(req: PlanRequest, fast: FastModel, pairs: list[tuple[str, int, int]], stage: int,
              steps: int, seeds: list[int], trace: Any = None) -> list[SimulatedPoint]:
    """Simulate ``pairs`` (method, r, C) × the trials; one :class:`SimulatedPoint` each."""
    from spare_lib.cluster.runs.sweeps import run_sweep

    if not pairs:
        return []
    crn = req.common_failures and trace is None
    base = base_point(req, req.spec, steps)
    extra = {} if trace is None else {"trace": trace}
    points = [{"method": m, "r": r, "ckpt_steps": c, **base, "trial": t, "seed": seeds[t],
               **({"failure_seed": seeds[t]} if crn else {}), **extra}
              for m, r, c in pairs for t in range(len(seeds))]
    backend = "serial" if (req.backend == "processes" and req.workers == 1) else req.backend
    df = run_sweep(points, simulate_plan_point, backend=backend, workers=req.workers,
                   client=req.client, cache_dir=None if trace is not None else req.cache_dir,
                   progress=req.progress)
    return [simulated_point(g, fast, stage)
            for _, g in df.groupby(["method", "r", "ckpt_steps"], sort=False)]


def simulated_point(g: Any, fast: FastModel, stage: int) -> SimulatedPoint:
    """Statistics of the trials of one (method, r, C) of a sweep frame."""
    name, r = str(g["method"].iloc[0]), int(g["r"].iloc[0])
    cf = fast.point(name, r)
    c_sim = int(g["ckpt_steps"].iloc[0])
    cf_ttt, cf_avail = fast.at_interval(name, r, c_sim)
    g = g.sort_values("trial")
    ttt = g["ttt_over_t0"].to_numpy(dtype=float)
    n = len(ttt)
    std = float(np.std(ttt, ddof=1)) if n > 1 else float("nan")
    return SimulatedPoint(
        method=name, label=method_spec(name).label, r=r, checkpoint_steps=c_sim,
        trials=n, completed=int(g["completed"].astype(bool).sum()), ttt_mean=float(ttt.mean()),
        ttt_std=std, ttt_min=float(ttt.min()), ttt_max=float(ttt.max()),
        ttt_se=std / math.sqrt(n) if n > 1 else float("nan"),
        availability_mean=float(g["availability"].mean()),
        overhead_mean=float(g["overhead"].mean()),
        restarts_mean=float(g["full_restarts"].mean()),
        closed_form_ttt=cf_ttt, closed_form_availability=cf_avail, stage=stage,
        ttt_trials=tuple(float(x) for x in ttt), restart_interval_s=cf.restart_interval_s,
        step_time_s=cf.step_time_s,
        dropped_mean=float(g["dropped_sample_fraction"].mean()),
        extensions=int(g["extensions"].sum()))


__all__ = ["base_point", "run_stage", "simulate_plan_point", "simulated_point", "trial_seed"]
