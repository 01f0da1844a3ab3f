"""Emulation against simulator on the same failure trace (issue 28, notebook 45).

The driver of the check: for each method, one scaled-clock emulation
(:func:`spare_lib.runtime.emulation.emulate`) and ``sim_trials`` runs of
:func:`spare_lib.cluster.simulate` on the *same* trace (``failure_trace=``), the simulator's
trials differing only in their jitter draws (none when σ = 0: then one trial is the answer).
The tables compare TTT/T0, availability, restarts, failures per restart and S̄, and measure
the emulation's own noise floor: what the real machinery adds that the model does not have.

Agreement (the issue's acceptance): ``|emulated − simulated| ≤ max(rel_tol · simulated,
n_se · SE)``, SE the combined standard error sqrt(s²/K + s²) of the simulator's mean over K
jitter trials and of one emulated run with the same jitter law (s: the simulator's standard
deviation over the trials).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster import ClusterConfig, simulate, task_seed
from spare_lib.registry.knobs import ALL, KNOBS
from spare_lib.runtime.clock import weibull_trace
from spare_lib.runtime.emulation import (
    EMU_METHODS,
    EmulationRun,
    EmulationSpec,
    EmuSemantics,
    as_semantics,
    emulate,
)
from spare_lib.runtime.model import MLPTask

#: Metrics compared per method (``SimResult`` / ``EmulationRun`` attribute names).
METRICS: tuple[str, ...] = ("ttt_over_t0", "availability", "full_restarts", "failures_noticed",
                            "overhead", "commits", "attempts", "rejoins")


def emulation_spec(config: ClusterConfig, scale: float) -> EmulationSpec:
    """The :class:`EmulationSpec` of a ``ClusterConfig``: the same durations, one scale.

    Parameters
    ----------
    config : ClusterConfig
        Its steps, compute per stack, jitter, T_a (and fail factor), T_r, stall, T_s, rejoin
        time and rejoin stall are taken as they are.
    scale : float
        Model seconds per wall second (1,000: 64 s of compute → 64 ms).

    Raises
    ------
    ValueError
        If the config uses something the emulation does not model and one of its methods
        reads (failure domains, an in-memory tier; micro-batches and data fetch only where a
        method of :data:`~spare_lib.runtime.emulation.EMU_METHODS` reads them, as the knob
        registry says).
    """
    if not isinstance(config, ClusterConfig):
        raise ValueError(f"config must be a ClusterConfig, got {type(config).__name__}")
    unsupported = {"domain_fault_share": 0.0, "microbatches": 1, "fetch_s": 0.0,
                   "mem_checkpoint_s": 0.0, "mem_restart_s": 0.0}
    for name, neutral in unsupported.items():
        readers = KNOBS[name].methods  # a knob only elastic-rebalance reads changes nothing here
        if readers != ALL and not set(readers) & set(EMU_METHODS):
            continue
        if getattr(config, name) != neutral:
            raise ValueError(f"{name} must be {neutral} for the emulation (not modelled there), "
                             f"got {getattr(config, name)!r}")
    return EmulationSpec(
        steps=config.steps, compute_per_stack_s=config.compute_per_stack_s,
        allreduce_s=config.allreduce_s, restart_s=config.restart_s, stall_s=config.stall_s,
        checkpoint_s=config.checkpoint_s, jitter_sigma=config.jitter_sigma,
        jitter_min=config.jitter_min, allreduce_fail_factor=config.allreduce_fail_factor,
        rejoin_s=config.rejoin_s, rejoin_stall_s=config.rejoin_stall_s,
        scale=check_positive("scale", scale))


def shared_trace(N: int, config: ClusterConfig, horizon_s: float, seed: SeedLike = 0
                 ) -> np.ndarray:
    """One failure trace for every method: per-group Weibull(k) renewals of mean N·m
    (the config's law, WeibullInjector's seeding), rows (time_s, group) up to ``horizon_s``."""
    if config.failure_dist != "weibull":
        raise ValueError(f"failure_dist must be 'weibull' for shared_trace, got "
                         f"{config.failure_dist!r}")
    return weibull_trace(N, config.system_mtbf_s, config.weibull_shape, horizon_s, seed)


def _row(res: Any) -> dict[str, float]:
    out = {m: float(getattr(res, m)) for m in METRICS}
    fbr = res.failures_between_restarts
    out["failures_per_restart"] = float(np.mean(fbr)) if len(fbr) else math.nan
    return out


def run_side_by_side(cases: Sequence[tuple[str, int, int | None]], N: int,
                     config: ClusterConfig, scale: float, trace: np.ndarray, *,
                     seed: SeedLike = 0, sim_trials: int = 20, task: MLPTask | None = None,
                     nice: int | None = None, progress: bool = False,
                     semantics: EmuSemantics | str = "model", sims: dict | None = None
                     ) -> tuple[Any, dict[str, EmulationRun], dict]:
    """Emulate and simulate every case on the same trace.

    Parameters
    ----------
    cases : sequence of (method, r, C)
        Methods of :data:`~spare_lib.runtime.emulation.EMU_METHODS` with their r and
        checkpoint interval C (None: no checkpoints).
    N : int
        Groups.
    config : ClusterConfig
        The simulator's config; the emulation uses :func:`emulation_spec` (config, scale).
    scale : float
        Model seconds per wall second.
    trace : array (n, 2)
        The failure trace both replay (model seconds).
    seed : int, SeedSequence or Generator
        Case i's emulation jitter uses child (i, 0), its simulator trials children (i, 1 + j).
    sim_trials : int
        Simulator trials per case (1 suffices when σ = 0: the replay is then deterministic).
    task : MLPTask or None
        What the workers train.
    nice : int or None
        Priority of the emulation's processes (:func:`~spare_lib.runtime.emulation.emulate`).
    progress : bool
        Show a tqdm bar over the cases.
    semantics : EmuSemantics or {"model", "real"}
        The emulation's semantics (:class:`~spare_lib.runtime.emulation.EmuSemantics`):
        ``"model"`` (default) replays the simulator's instants, so that every difference is
        a protocol difference; ``"real"`` is what the coordinator really does.
    sims : dict or None
        method → list of ``SimResult`` from an earlier call on the same trace and seed
        (reused instead of simulating again).

    Returns
    -------
    table : DataFrame
        One row per case: ``<metric>_emu``, ``<metric>_sim`` (mean over trials) and
        ``<metric>_sim_sd`` for every metric of :data:`METRICS` and failures_per_restart;
        ``per_restart_equal`` (the failures before each restart, emulated against the first
        simulated trial, identical), ``slip_ttt`` (overruns that became model time, in units
        of T0), ``pause_wall_s`` (overruns a paused clock left out), ``emu_wall_s``.
    runs : dict
        method → :class:`EmulationRun`.
    sims : dict
        method → list of ``SimResult``.
    """
    import pandas as pd
    N = check_int("N", N, lo=2)
    sim_trials = check_int("sim_trials", sim_trials, lo=1)
    for method, _r, _c in cases:
        if method not in EMU_METHODS:
            raise ValueError(f"method must be one of {EMU_METHODS}, got {method!r}")
    spec = emulation_spec(config, scale)
    sem = as_semantics(semantics)
    root = as_seed_sequence(seed)
    done = sims
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(cases), desc="emulate + simulate")
    rows, runs, sims = [], {}, {}
    try:
        for i, (method, r, C) in enumerate(cases):
            ss = task_seed(root, i)
            sim = list(done[method]) if done is not None and method in done else []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                for j in range(len(sim), sim_trials):
                    sim.append(simulate(method, N, r, C, config, seed=task_seed(ss, 1 + j),
                                        failure_trace=trace))
            emu = emulate(method, N, r, C, spec, trace=trace, seed=task_seed(ss, 0), task=task,
                          nice=nice, semantics=sem)
            runs[method], sims[method] = emu, sim
            row: dict[str, Any] = {"method": method, "N": N, "r": r, "ckpt_steps": C,
                                   "semantics": sem.label}
            e = _row(emu)
            s = pd.DataFrame([_row(x) for x in sim])
            for k in e:
                row[f"{k}_emu"] = e[k]
                row[f"{k}_sim"] = float(s[k].mean())
                row[f"{k}_sim_sd"] = float(s[k].std(ddof=1)) if len(s) > 1 else 0.0
            row["per_restart_equal"] = (tuple(emu.failures_between_restarts)
                                        == tuple(sim[0].failures_between_restarts))
            row["slip_ttt"] = float(np.sum(emu.noise["slip_s"])) * emu.scale / emu.t0_s
            row["pause_wall_s"] = float(np.sum(emu.noise["pause_s"]))
            row["emu_wall_s"] = emu.wall_s
            row["emu_completed"] = emu.completed
            rows.append(row)
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    return pd.DataFrame(rows), runs, sims


def agreement(table: Any, metric: str = "ttt_over_t0", trials: int | None = None,
              rel_tol: float = 0.03, n_se: float = 3.0) -> Any:
    """The acceptance check per case: within ``rel_tol`` or within ``n_se`` combined SEs.

    Parameters
    ----------
    table : DataFrame
        From :func:`run_side_by_side`.
    metric : str
        A metric of the table.
    trials : int or None
        Simulator trials behind ``<metric>_sim`` (None: infinitely many, SE = s).
    rel_tol, n_se : float
        Tolerances.

    Returns
    -------
    DataFrame
        method, emulated, simulated, diff, rel_diff, se (combined), bound and ``agrees``.
    """
    import pandas as pd
    emu, sim, sd = table[f"{metric}_emu"], table[f"{metric}_sim"], table[f"{metric}_sim_sd"]
    k = math.inf if trials is None else float(trials)
    se = np.sqrt(sd ** 2 / k + sd ** 2)
    bound = np.maximum(rel_tol * sim.abs(), n_se * se)
    diff = emu - sim
    return pd.DataFrame({"method": table["method"], "emulated": emu, "simulated": sim,
                         "diff": diff, "rel_diff": diff / sim, "se": se, "bound": bound,
                         "agrees": diff.abs() <= bound})


def noise_floor(runs: dict[str, EmulationRun]) -> Any:
    """What the real machinery adds, per run: medians and 95th percentiles (wall ms) of the
    barrier overhead, worker lateness, pipe latency, detection latency, kill lateness and
    process assignment, and the barrier overhead summed over the run in units of T0
    (``barrier_ttt``: the part of emulated TTT/T0 the simulator has no term for)."""
    import pandas as pd
    rows = []
    for method, run in runs.items():
        row: dict[str, Any] = {"method": method, "scale": run.scale}
        for key, vals in run.noise.items():
            v = np.asarray(vals, dtype=float)
            row[f"{key}_n"] = int(v.size)
            row[f"{key}_med_ms"] = float(np.median(v)) * 1e3 if v.size else math.nan
            row[f"{key}_p95_ms"] = float(np.percentile(v, 95)) * 1e3 if v.size else math.nan
        b = np.asarray(run.noise["barrier_s"], dtype=float)
        row["barrier_ttt"] = float(np.clip(b, 0, None).sum()) * run.scale / run.t0_s
        rows.append(row)
    return pd.DataFrame(rows)


def restart_table(run: EmulationRun, sim: Any) -> Any:
    """Failures noticed before each restart, emulated against one simulated run (NaN where one
    of them has fewer restarts)."""
    import pandas as pd
    e, s = list(run.failures_between_restarts), list(sim.failures_between_restarts)
    n = max(len(e), len(s))
    pad = lambda x: x + [math.nan] * (n - len(x))  # noqa: E731
    return pd.DataFrame({"restart": np.arange(1, n + 1), "emulated": pad(e), "simulated": pad(s)})
