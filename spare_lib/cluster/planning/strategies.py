"""Recovery strategies across a cluster knob (notebook 80): experiment drivers on the planner.

The planner itself (:func:`spare_lib.cluster.planning.run_plan`, ``spare plan --strategies``)
compares any registered methods on one cluster. This module holds the drivers notebook 80 runs
around it:

* :func:`spec_of`: the planner's :class:`~spare_lib.cluster.planning.ClusterSpec` of a simulator
  :class:`~spare_lib.cluster.ClusterConfig` and N (the strategies' knobs included);
* :func:`sweep_strategies`: every method at its fast-model choice (r*, C) for each value of one
  knob (stall, rejoin time, MTBF, micro-batches, ...), trial t of every method and value with
  the same failure seed;
* :func:`stall_rule_model`: the quick model of the one-stall-per-poll rule;
* :func:`effective_training_time` and :func:`infer_mtbf`: the calibration of notebook 80 (the
  failure rate at which a method reaches a published effective training time).

The model of every strategy is ``docs/strategies.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.planning.models import fast_model
from spare_lib.cluster.planning.spec import RUN_KNOBS, ClusterSpec
from spare_lib.registry.methods import DEFAULT_STRATEGIES, METHODS, check_methods
from spare_lib.registry.methods import method as method_spec

#: The default strategies (the registry's DEFAULT_STRATEGIES: every method but the SPARe-b ones,
#: which ``--strategies all`` adds), every label, the ones whose failed groups rejoin, and the ones
#: that keep the global batch exact (all from the method registry).
STRATEGIES = DEFAULT_STRATEGIES
STRATEGY_LABELS = {n: m.label for n, m in METHODS.items()}
REJOINING = tuple(n for n in STRATEGIES if METHODS[n].rejoins)
EXACT = tuple(n for n in STRATEGIES if METHODS[n].exact_batch)
#: Default cap of a run's wall time in units of T0 (CKPT-only may never finish).
MAX_WALL_T0 = 50.0


def trial_seeds(seed: int, trials: int) -> tuple[int, ...]:
    """Seed of each trial (the same for every candidate): from (seed, t) only, in [0, 2^63)."""
    return tuple(int(np.random.SeedSequence([int(seed), t]).generate_state(1, np.uint64)[0]
                     >> np.uint64(1)) for t in range(trials))


def spec_of(config: ClusterConfig, N: int, model_steps: int | None = None) -> ClusterSpec:
    """The planner's cluster for a simulator config at N groups (its run knobs carried over)."""
    if not isinstance(config, ClusterConfig):
        raise ValueError(f"config must be a ClusterConfig, got {type(config).__name__}")
    N = check_int("N", N, lo=2)
    g = max(1, config.n_gpus // N)
    defaults = ClusterConfig()
    run = tuple((k, getattr(config, k)) for k in RUN_KNOBS
                if getattr(config, k) != getattr(defaults, k))
    return ClusterSpec(gpus=N * g, gpus_per_group=g, system_mtbf_s=config.system_mtbf_s,
                       restart_s=config.restart_s, checkpoint_s=max(config.checkpoint_s, 1e-9),
                       step_s=config.compute_per_stack_s + config.allreduce_s,
                       allreduce_s=config.allreduce_s, weibull_shape=config.weibull_shape,
                       failure_dist=config.failure_dist, domain_size=config.domain_size,
                       domain_fault_share=config.domain_fault_share, run=run)


def stall_rule_model(step_s: float, stall_s: float, mtbf_s: float,
                     stalls_per_event: float = 1.0) -> dict[str, float]:
    """Quick model of the stall rule: one stall per poll that notices failures.

    Failures arrive at rate 1/m; all failures since the previous poll are noticed at the next
    one and share one stall (plus ``stalls_per_event − 1`` more, e.g. ``rejoin_stall_s / stall_s``
    for the rejoin batch of the elastic methods and SPARe+repair: 1 for a blocking rejoin, 0 for
    a non-blocking one). A step of failure-free length L then lasts T with
    T = L + s·n·(1 − e^(−T/m)) (solved by bracketing): the expected failures per poll are
    T/m, so a method with longer steps (SPARe's S̄ ≈ 2 stacks) batches more failures into one
    stall than one with short steps (elastic ≈ 1 + k/N). Retries, rollbacks and the barrier
    jitter are ignored.

    Returns a dict: ``step_s`` (T), ``efficiency`` (L/T), ``failures_per_poll`` (T/m),
    ``stalls_per_failure`` ((1 − e^(−T/m))·n / (T/m)).
    """
    L = check_positive("step_s", step_s)
    s = check_positive("stall_s", stall_s, allow_zero=True)
    m = check_positive("mtbf_s", mtbf_s)
    n = check_positive("stalls_per_event", stalls_per_event, allow_zero=True)
    T = L
    if s * n > 0:  # f(T) = T − L − s·n·(1 − e^(−T/m)) is convex, ≤ 0 at L and ≥ 0 at L + s·n
        from scipy.optimize import brentq
        T = brentq(lambda x: x - L - s * n * (1.0 - math.exp(-x / m)), L, L + s * n, xtol=1e-9)
    return {"step_s": T, "efficiency": L / T, "failures_per_poll": T / m,
            "stalls_per_failure": n * (1.0 - math.exp(-T / m)) / (T / m)}


def sweep_strategies(config: ClusterConfig, N: int, param: str, values: Sequence[Any],
                     strategies: Sequence[str] = STRATEGIES, trials: int = 2, seed: int = 0,
                     workers: int = 2, *, derive: Any = None, max_wall_t0: float = MAX_WALL_T0,
                     model: str = "predict", progress: bool = False) -> Any:
    """Every strategy at its fast-model choice for each value of one config field.

    Parameters
    ----------
    config : ClusterConfig
        Base cluster; ``param`` is replaced by each value (validated by ClusterConfig).
    N : int
    param : str
        A ClusterConfig field, e.g. 'stall_s', 'rejoin_s', 'rejoin_stall_s', 'system_mtbf_s',
        'microbatches'.
    values : sequence
    strategies, trials, seed, workers, max_wall_t0, progress :
        Methods, trials per point, root seed, processes, wall cap (units of T0), progress bar;
        trial t of every strategy and value shares its failure seed (:func:`trial_seeds`).
    derive : callable or None
        ``derive(config) -> config`` applied after the replacement (e.g. to keep another field
        tied to it).
    model : str
        The planner's fast model that picks each method's r and C.

    Returns
    -------
    DataFrame
        One row per (value, strategy, trial): ``value``, strategy, label, r, checkpoint_steps,
        trial, ttt_over_t0, availability, overhead, dropped_sample_fraction, full_restarts,
        stall_share, completed.
    """
    import pandas as pd

    from spare_lib.cluster.runs.simulate import simulate_many

    strategies = check_methods(strategies)
    trials = check_int("trials", trials, lo=1)
    N = check_int("N", N, lo=2)
    if not isinstance(config, ClusterConfig) or not hasattr(config, param):
        raise ValueError(f"param must be a ClusterConfig field, got {param!r}")
    cap = check_positive("max_wall_t0", max_wall_t0)
    seeds = trial_seeds(check_int("seed", seed, lo=0), trials)
    tasks, meta = [], []
    for v in values:
        cfg = config.with_(**{param: v})
        cfg = derive(cfg) if derive is not None else cfg
        fast = fast_model(spec_of(cfg, N), strategies, model, cfg.steps)
        for s in strategies:
            p = fast.best(s)
            for t, fs in enumerate(seeds):
                tasks.append({"method": s, "N": N, "r": p.r, "ckpt_steps": p.checkpoint_steps,
                              "config": cfg, "failure_seed": fs,
                              "max_wall_s": cap * cfg.t0_s()})
                meta.append({"value": v, "strategy": s, "label": method_spec(s).label, "r": p.r,
                             "checkpoint_steps": p.checkpoint_steps, "trial": t})
    res = simulate_many(tasks, seed=seed, workers=check_int("workers", workers, lo=1),
                        progress=progress)
    rows = [m | {"ttt_over_t0": x.ttt_over_t0, "availability": x.availability,
                 "overhead": x.overhead, "dropped_sample_fraction": x.dropped_sample_fraction,
                 "full_restarts": x.full_restarts, "stall_share": x.stall_s / x.total_s,
                 "completed": x.completed} for m, x in zip(meta, res, strict=True)]
    return pd.DataFrame(rows)


def effective_training_time(method: str, N: int, r: int, ckpt_steps: int | None,
                            config: ClusterConfig, trials: int = 2, seed: int = 0,
                            **kwargs: Any) -> float:
    """Effective training time: failure-free wall time / wall time with failures (mean of
    ``trials`` runs with failure seeds :func:`trial_seeds`; the failure-free run replays an empty
    trace). Extra ``kwargs`` go to :func:`~spare_lib.cluster.runs.simulate.simulate`."""
    import warnings

    from spare_lib.cluster.runs.simulate import simulate
    seeds = trial_seeds(check_int("seed", seed, lo=0), check_int("trials", trials, lo=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = simulate(method, N, r, ckpt_steps, config, seed=seed,
                       failure_trace=np.empty((0, 2)), **kwargs).total_s
        tot = [simulate(method, N, r, ckpt_steps, config, seed=fs, failure_seed=fs,
                        **kwargs).total_s for fs in seeds]
    return float(ref / np.mean(tot))


def infer_mtbf(target: float, method: str, N: int, r: int, ckpt_steps: int | None,
               config: ClusterConfig, lo_s: float = 60.0, hi_s: float = 86_400.0,
               trials: int = 2, seed: int = 0, iters: int = 12, **kwargs: Any
               ) -> tuple[float, float]:
    """System MTBF m at which :func:`effective_training_time` equals ``target`` in (0, 1):
    bisection on log m over [lo_s, hi_s] (common failure seeds make the curve monotone in m).

    Returns
    -------
    (m_s, ett)
        The MTBF found and the effective training time measured there.
    """
    target = float(target)
    if not 0.0 < target < 1.0:
        raise ValueError(f"target must be in (0, 1), got {target!r}")
    lo, hi = check_positive("lo_s", lo_s), check_positive("hi_s", hi_s)
    if not lo < hi:
        raise ValueError(f"lo_s must be below hi_s, got {lo_s!r} >= {hi_s!r}")

    def ett(m: float) -> float:
        return effective_training_time(method, N, r, ckpt_steps, config.with_(system_mtbf_s=m),
                                       trials, seed, **kwargs)
    for _ in range(check_int("iters", iters, lo=1)):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if ett(mid) < target else (lo, mid)
    m = math.sqrt(lo * hi)
    return m, ett(m)


__all__ = ["EXACT", "MAX_WALL_T0", "REJOINING", "STRATEGIES", "STRATEGY_LABELS",
           "effective_training_time", "infer_mtbf", "spec_of", "stall_rule_model",
           "sweep_strategies", "trial_seeds"]
