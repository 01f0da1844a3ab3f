"""Planning across recovery strategies (issue 13): SPARe against what users actually choose.

:func:`plan_strategies` simulates every strategy of the event core on one cluster — SPARe+CKPT,
Rep+CKPT, CKPT-only, SPARe+repair, elastic-drop and elastic-rebalance (the model of each is
``docs/strategies.md``) — with common random numbers, searches r for the SPARe variants and Rep
in a small window around the closed-form optimum, and recommends one. :func:`sweep_strategies`
runs every strategy at its closed-form choice along one knob of the cluster (stall, rejoin time,
MTBF, micro-batches, ...) for the figures of notebook 80.

Closed-form choices (no simulation):

* SPARe+CKPT, Rep+CKPT, CKPT-only: :func:`spare_lib.cluster.planning.plan` (μ, S̄, T_c*, Eq. 7);
* SPARe+repair: J(r) = S̄_R / A*(T_w(r)) where T_w is the mean time between wipe-outs with repair
  (:func:`spare_lib.theory.repair.wipeout_with_repair`, repair time ``rejoin_s`` plus half a
  step) and S̄_R = E[c(K)], K ~ Poisson(R/m) the groups away (SPARe's S* is c(k) almost always);
  J flattens once wipe-outs are rare, so the choice is the smallest r within
  :data:`REPAIR_FLAT` of the minimum;
* elastic-drop, elastic-rebalance: no r; they restart only when every group is dead at once,
  so their T_f is infinite and the checkpoint interval is the run (one checkpoint at the end).

Common random numbers: trial t of every candidate runs with ``failure_seed`` = the trial's seed
(:func:`trial_seeds`), so every strategy and r sees the same failure gaps per group; the jitter
comes from :func:`~spare_lib.cluster.simulate.simulate_many`'s per-task seeds. The gain of the
best strategy over another is 1 − TTT_best/TTT_other (the paper's "time-to-train gain") with a
95 % bootstrap interval over trials resampled *paired* (:func:`paired_gain`).

Example
-------
>>> from spare_lib.cluster import h100_600k
>>> p = plan_strategies(h100_600k(20, steps=60, rejoin_s=600.0), 20, trials=2, workers=1,
...                     strategies=("spare", "ckpt", "elastic-drop"))
>>> p.recommended in ("spare", "ckpt", "elastic-drop")
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ClusterConfig, analytic_checkpoint_interval
from spare_lib.cluster.methods import METHODS as METHOD_REGISTRY
from spare_lib.cluster.planning import ClusterSpec, Plan, plan, rep_r_max

#: The strategies :func:`plan_strategies` compares by default (every registered method).
STRATEGIES = ("spare", "rep", "ckpt", "spare+repair", "elastic-drop", "elastic-rebalance")
#: Display names.
STRATEGY_LABELS = {"spare": "SPARe+CKPT", "rep": "Rep+CKPT", "ckpt": "CKPT-only",
                   "spare+repair": "SPARe+repair", "elastic-drop": "Elastic-drop",
                   "elastic-rebalance": "Elastic-rebalance"}
#: Strategies whose failed groups rejoin after ``rejoin_s`` (need a finite rejoin time).
REJOINING = tuple(n for n, m in METHOD_REGISTRY.items() if m.rejoins)
#: Strategies that keep the global batch exact (no dropped samples).
EXACT = tuple(n for n, m in METHOD_REGISTRY.items() if m.exact_batch)
#: SPARe+repair: smallest r whose closed-form J is within this share of the minimum over r.
REPAIR_FLAT = 0.002
#: Bootstrap resamples of :func:`paired_gain`, its confidence level, and the default cap of a
#: run's wall time in units of T0 (CKPT-only may never finish).
N_BOOT, CONFIDENCE, MAX_WALL_T0 = 4000, 0.95, 50.0


def trial_seeds(seed: int, trials: int) -> tuple[int, ...]:
    """Seed of each trial (the same for every candidate): from (seed, t) only, in [0, 2^63)."""
    return tuple(int(np.random.SeedSequence([int(seed), t]).generate_state(1, np.uint64)[0]
                     >> np.uint64(1)) for t in range(trials))


def paired_gain(ref: Sequence[float], other: Sequence[float], seed: int = 0,
                n_boot: int = N_BOOT) -> tuple[float, float, float]:
    """Gain of ``ref`` over ``other``, 1 − mean(ref)/mean(other), with a paired bootstrap CI.

    Trials are resampled with replacement *as pairs* (trial t of both sides shares its failures),
    ``n_boot`` times; the interval is the 2.5–97.5 % percentile of the resampled gains. With n
    trials there are only C(2n−1, n) distinct resamples (10 for n = 3): the interval is then
    coarse, and it is (nan, nan) below 2 trials or if a side is not finite.

    Returns
    -------
    (gain, ci_low, ci_high)
        Positive: ``ref`` trains faster.
    """
    a, b = np.asarray(ref, dtype=float), np.asarray(other, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"ref and other must be paired 1-d sequences of equal length, got "
                         f"{a.shape} and {b.shape}")
    gain = 1.0 - a.mean() / b.mean()
    if a.size < 2 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float(gain), math.nan, math.nan
    idx = np.random.default_rng(seed).integers(0, a.size, size=(n_boot, a.size))
    g = 1.0 - a[idx].mean(axis=1) / b[idx].mean(axis=1)
    lo, hi = np.quantile(g, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return float(gain), float(lo), float(hi)


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


def _spec_of(config: ClusterConfig, N: int) -> ClusterSpec:
    g = max(1, config.n_gpus // N)
    return ClusterSpec(gpus=N * g, gpus_per_group=g, system_mtbf_s=config.system_mtbf_s,
                       restart_s=config.restart_s, checkpoint_s=max(config.checkpoint_s, 1e-9),
                       step_s=config.compute_per_stack_s + config.allreduce_s,
                       allreduce_s=config.allreduce_s, weibull_shape=config.weibull_shape,
                       failure_dist=config.failure_dist)


def repair_choice(config: ClusterConfig, N: int, r_max: int) -> list[dict[str, float]]:
    """Closed-form J(r) of SPARe+repair for r = 2..r_max (see the module docstring)."""
    from scipy.stats import poisson

    from spare_lib import theory as th
    from spare_lib.theory.repair import wipeout_with_repair

    comp, ta = config.compute_per_stack_s, config.allreduce_s
    m, ts, tr = config.system_mtbf_s, max(config.checkpoint_s, 1e-9), config.restart_s
    repair = config.rejoin_s + 0.5 * (2 * comp + ta)
    k = np.arange(N)
    pk = poisson.pmf(k, min(repair / m, N))
    s_bar = float(np.sum(pk * np.asarray(th.c_lower(N, k), dtype=float)) / pk.sum())
    out = []
    for r in range(2, r_max + 1):
        tw = wipeout_with_repair(N, r, repair, m).time_s
        avail = float(th.availability_opt(ts, tw, tr))
        step = s_bar * comp + ta
        c = analytic_checkpoint_interval(min(tw, 1e15), step, config)
        out.append({"r": r, "restart_interval_s": tw, "overhead": s_bar, "availability": avail,
                    "ttt_over_t0": s_bar / avail, "checkpoint_steps": c})
    return out


def closed_form_choices(config: ClusterConfig, N: int, strategies: Sequence[str] = STRATEGIES,
                        window: int = 1, closed: Plan | None = None, model: str = "finite"
                        ) -> dict[str, list[tuple[int, int]]]:
    """Candidates (r, checkpoint interval C) per strategy: the closed-form optimum r ± ``window``.

    SPARe and Rep: :func:`~spare_lib.cluster.planning.plan` (r clipped to [2, r_max] and
    [2, :func:`rep_r_max`]); SPARe+repair: :func:`repair_choice`; CKPT-only: r = 1; elastic: r = 1,
    C = the run length. Each candidate's C is the closed-form interval of its own r.
    """
    window = check_int("window", window, lo=0)
    closed = closed if closed is not None else plan(_spec_of(config, N), model=model)
    steps = config.steps
    out: dict[str, list[tuple[int, int]]] = {}
    for s in strategies:
        if s in ("spare", "rep"):
            top = closed.r_max if s == "spare" else rep_r_max(N)
            r0 = getattr(closed, s).r
            rs = range(max(2, r0 - window), min(top, r0 + window) + 1)
            out[s] = [(r, closed.point(s, r).checkpoint_steps) for r in rs]
        elif s == "ckpt":
            out[s] = [(1, closed.ckpt.checkpoint_steps)]
        elif s == "spare+repair":
            curve = repair_choice(config, N, closed.r_max)
            jmin = min(p["ttt_over_t0"] for p in curve)
            r0 = next(p["r"] for p in curve if p["ttt_over_t0"] <= (1 + REPAIR_FLAT) * jmin)
            out[s] = [(p["r"], min(int(p["checkpoint_steps"]), steps)) for p in curve
                      if abs(p["r"] - r0) <= window]
        else:
            out[s] = [(1, steps)]
    return out


def _check_strategies(strategies: Sequence[str]) -> tuple[str, ...]:
    out = (strategies,) if isinstance(strategies, str) else tuple(strategies)
    bad = [s for s in out if s not in STRATEGIES]
    if not out or bad or len(set(out)) != len(out):
        raise ValueError(f"strategies must be distinct names from {STRATEGIES}, got {list(out)!r}")
    return out


def resolve_config(config_or_spec: ClusterConfig | ClusterSpec, N: int | None, steps: int | None,
                   **overrides: Any) -> tuple[ClusterConfig, int]:
    """The simulator config and N of a :class:`ClusterConfig` (N required) or a
    :class:`~spare_lib.cluster.planning.ClusterSpec` (N from it), with ``steps`` and the non-None
    ``overrides`` applied (validated: a bad value raises ValueError naming the field)."""
    if isinstance(config_or_spec, ClusterSpec):
        if N is not None and check_int("N", N, lo=2) != config_or_spec.N:
            raise ValueError(f"N must equal the spec's N = {config_or_spec.N} (or be None), got {N}")
        N = config_or_spec.N
        config = config_or_spec.cluster_config(10_000)
    elif isinstance(config_or_spec, ClusterConfig):
        if N is None:
            raise ValueError("N must be given with a ClusterConfig (it has no group count)")
        N, config = check_int("N", N, lo=2), config_or_spec
    else:
        raise ValueError(f"config_or_spec must be a ClusterConfig or a ClusterSpec, got "
                         f"{type(config_or_spec).__name__}")
    ch = {k: v for k, v in overrides.items() if v is not None}
    if steps is not None:
        ch["steps"] = check_int("steps", steps, lo=1)
    return (config.with_(**ch) if ch else config), N


@dataclass(frozen=True)
class Candidate:
    """One simulated (strategy, r, C) over the trials (per-trial tuples in trial order)."""

    strategy: str
    r: int
    checkpoint_steps: int
    ttt: tuple[float, ...]
    availability: tuple[float, ...]
    overhead: tuple[float, ...]
    dropped: tuple[float, ...]
    restarts: tuple[int, ...]
    stall_s: tuple[float, ...]
    finished: bool

    label = property(lambda self: STRATEGY_LABELS[self.strategy])
    ttt_mean = property(lambda self: float(np.mean(self.ttt)))

    def row(self) -> dict[str, Any]:
        """Means over trials (and the TTT spread) as a flat dict."""
        return {"strategy": self.strategy, "label": self.label, "r": self.r,
                "checkpoint_steps": self.checkpoint_steps, "trials": len(self.ttt),
                "ttt_over_t0": self.ttt_mean, "ttt_min": float(np.min(self.ttt)),
                "ttt_max": float(np.max(self.ttt)),
                "availability": float(np.mean(self.availability)),
                "overhead": float(np.mean(self.overhead)),
                "dropped_sample_fraction": float(np.mean(self.dropped)),
                "full_restarts": float(np.mean(self.restarts)),
                "stall_share": float(np.mean(self.stall_s)), "finished": self.finished}


@dataclass(frozen=True)
class StrategyPlan:
    """Result of :func:`plan_strategies`.

    Attributes
    ----------
    N, steps, trials, seed : int
    config : ClusterConfig
        The simulated cluster (overrides applied).
    strategies, trial_seeds : tuple
        ``failure_seed`` (and trial seed) of each trial, shared by every candidate.
    candidates : tuple of Candidate
        Every simulated (strategy, r, C).
    best : dict strategy -> Candidate
        Each strategy's best candidate (lowest mean TTT/T0 among finished ones).
    recommended : str
        argmin of the best means over strategies (finished runs preferred).
    recommended_exact : str or None
        The same among the strategies that keep the global batch exact (not elastic-drop).
    gains : dict strategy -> (gain, ci_low, ci_high)
        Gain of the recommended strategy over each other: 1 − TTT_rec/TTT_other, paired
        bootstrap 95 % CI.
    elapsed_s : float
    notes : tuple of str
        Unfinished runs, best r at the edge of its window.
    """

    N: int
    steps: int
    trials: int
    seed: int
    config: ClusterConfig
    strategies: tuple[str, ...]
    trial_seeds: tuple[int, ...]
    candidates: tuple[Candidate, ...]
    best: dict[str, Candidate]
    recommended: str
    recommended_exact: str | None
    gains: dict[str, tuple[float, float, float]]
    elapsed_s: float
    notes: tuple[str, ...] = field(default=())

    @property
    def exact_changes_answer(self) -> bool:
        """True when requiring exact training (no dropped samples) changes the recommendation."""
        return self.recommended_exact is not None and self.recommended_exact != self.recommended

    def gain_of(self, ref: str, other: str, seed: int | None = None) -> tuple[float, float, float]:
        """Gain of strategy ``ref``'s best candidate over ``other``'s, with the paired CI."""
        for s in (ref, other):
            if s not in self.best:
                raise ValueError(f"strategy must be one of {tuple(self.best)}, got {s!r}")
        return paired_gain(self.best[ref].ttt, self.best[other].ttt,
                           self.seed if seed is None else seed)

    def frame(self) -> Any:
        """One row per strategy (its best candidate), with the gain of the recommendation."""
        import pandas as pd
        rows = []
        for s in self.strategies:
            row = self.best[s].row()
            g, lo, hi = self.gains.get(s, (0.0, math.nan, math.nan))
            row.update(gain_of_recommended=g, gain_ci_low=lo, gain_ci_high=hi,
                       exact=s in EXACT, recommended=s == self.recommended)
            rows.append(row)
        return pd.DataFrame(rows)

    def statement(self) -> str:
        """One plain paragraph: the recommendation, and whether exact training changes it."""
        b = self.best[self.recommended]
        text = (f"Recommended: {b.label} (r = {b.r}, C = {b.checkpoint_steps} steps), TTT/T0 "
                f"{b.ttt_mean:.3f}.")
        if self.exact_changes_answer:
            e = self.best[self.recommended_exact]  # type: ignore[index]
            text += (f" It drops {100 * float(np.mean(b.dropped)):.2f} % of the samples; among "
                     f"methods that train exactly, {e.label} is best (TTT/T0 {e.ttt_mean:.3f}).")
        return text

    def to_dict(self) -> dict[str, Any]:
        """Strict-JSON dict (NaN and inf -> None)."""
        from dataclasses import asdict
        return _clean({
            "N": self.N, "steps": self.steps, "trials": self.trials, "seed": self.seed,
            "config": asdict(self.config), "strategies": list(self.strategies),
            "trial_seeds": list(self.trial_seeds),
            "candidates": [c.row() | {"ttt_trials": list(c.ttt)} for c in self.candidates],
            "best": {s: c.row() for s, c in self.best.items()},
            "recommended": self.recommended, "recommended_exact": self.recommended_exact,
            "exact_changes_answer": self.exact_changes_answer,
            "gains": {s: {"gain": g, "ci_low": lo, "ci_high": hi}
                      for s, (g, lo, hi) in self.gains.items()},
            "statement": self.statement(), "elapsed_s": self.elapsed_s, "notes": list(self.notes)})


def _clean(v: Any) -> Any:
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def _tasks(config: ClusterConfig, N: int, choices: dict[str, list[tuple[int, int]]],
           seeds: Sequence[int], max_wall_t0: float, extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"method": s, "N": N, "r": r, "ckpt_steps": c, "config": config,
             "failure_seed": fs, "max_wall_s": max_wall_t0 * config.t0_s(), **extra}
            for s, cands in choices.items() for r, c in cands for fs in seeds]


def _collect(results: list[Any], choices: dict[str, list[tuple[int, int]]], trials: int
             ) -> list[Candidate]:
    out, i = [], 0
    for s, cands in choices.items():
        for r, c in cands:
            rs = results[i:i + trials]
            i += trials
            out.append(Candidate(
                strategy=s, r=r, checkpoint_steps=c, ttt=tuple(x.ttt_over_t0 for x in rs),
                availability=tuple(x.availability for x in rs),
                overhead=tuple(x.overhead for x in rs),
                dropped=tuple(x.dropped_sample_fraction for x in rs),
                restarts=tuple(x.full_restarts for x in rs),
                stall_s=tuple(x.stall_s / x.total_s for x in rs),
                finished=all(x.completed for x in rs)))
    return out


def _best(cands: Sequence[Candidate]) -> Candidate:
    pool = [c for c in cands if c.finished] or list(cands)
    return min(pool, key=lambda c: c.ttt_mean)


def plan_strategies(config_or_spec: ClusterConfig | ClusterSpec, N: int | None = None,
                    strategies: Sequence[str] = STRATEGIES, trials: int = 3,
                    steps: int | None = None, seed: int = 0, workers: int = 2, *,
                    stall_s: float | None = None, rejoin_s: float | None = None,
                    rejoin_stall_s: float | None = None, microbatches: int | None = None,
                    fetch_s: float | None = None, window: int = 1, model: str = "finite",
                    mem_ckpt_steps: int | None = None,
                    rep_placement: str = "consecutive", max_wall_t0: float = MAX_WALL_T0,
                    progress: bool = False) -> StrategyPlan:
    """Simulate every strategy on one cluster with common random numbers and recommend one.

    Parameters
    ----------
    config_or_spec : ClusterConfig or ClusterSpec
        The cluster (e.g. ``h100_600k(600, rejoin_s=600.0)`` or ``cluster_spec(...)``).
    N : int or None
        Data-parallel groups; required with a ClusterConfig, must match a ClusterSpec's N.
    strategies : sequence of str
        Subset of :data:`STRATEGIES` (distinct).
    trials : int
        Runs per candidate, ≥ 1 (≥ 2 for confidence intervals).
    steps : int or None
        Committed steps per run (None: the config's; 10,000 for a ClusterSpec).
    seed : int
        Root seed ≥ 0: trial seeds (:func:`trial_seeds`), jitter, bootstrap.
    workers : int
        Processes of :func:`~spare_lib.cluster.simulate.simulate_many` (1: serial).
    stall_s, rejoin_s, microbatches, fetch_s : optional
        Override the config's stall per reconfiguration, rejoin time (must be finite when a
        rejoining strategy is asked for), micro-batches per shard b and data fetch time.
    rejoin_stall_s : float or None
        Override the config's stall per batch of rejoining groups (0: a non-blocking catch-up
        such as FT-HSDP's). None keeps the config's value, whose own None means ``stall_s``.
    window : int
        Half-width of the r search around the closed-form optimum (SPARe, Rep, SPARe+repair).
    model : {'finite', 'paper'}
        Closed-form model of :func:`~spare_lib.cluster.planning.plan`.
    mem_ckpt_steps : int or None
        In-memory checkpoint interval passed to every run (uses the config's mem_* times).
    rep_placement : {'consecutive', 'strided'}
        Rep's replica sets.
    max_wall_t0 : float
        Stop a run at this many T0 (reported as unfinished: its TTT/T0 is a lower bound).
    progress : bool
        Progress bar.

    Returns
    -------
    StrategyPlan
        Cost at N = 600, 10,000 steps, 3 trials, 2 workers: ≈ 15–30 s.

    Raises
    ------
    ValueError
        Naming the parameter, for any bad input.
    """
    from spare_lib.cluster.simulate import simulate_many

    strategies = _check_strategies(strategies)
    trials = check_int("trials", trials, lo=1)
    seed = check_int("seed", seed, lo=0)
    workers = check_int("workers", workers, lo=1)
    window = check_int("window", window, lo=0)
    max_wall_t0 = check_positive("max_wall_t0", max_wall_t0)
    if mem_ckpt_steps is not None:
        mem_ckpt_steps = check_int("mem_ckpt_steps", mem_ckpt_steps, lo=1)
    if rep_placement not in ("consecutive", "strided"):
        raise ValueError(f"rep_placement must be 'consecutive' or 'strided', got {rep_placement!r}")
    config, N = resolve_config(config_or_spec, N, steps, stall_s=stall_s, rejoin_s=rejoin_s,
                               rejoin_stall_s=rejoin_stall_s, microbatches=microbatches,
                               fetch_s=fetch_s)
    need = [s for s in strategies if s in REJOINING]
    if need and not math.isfinite(config.rejoin_s):
        raise ValueError(f"rejoin_s must be finite for {need} (failed groups rejoin after it); "
                         "give rejoin_s=")
    t0 = time.perf_counter()
    choices = closed_form_choices(config, N, strategies, window, model=model)
    seeds = trial_seeds(seed, trials)
    extra: dict[str, Any] = {"rep_placement": rep_placement}
    if mem_ckpt_steps is not None:
        extra["mem_ckpt_steps"] = mem_ckpt_steps
    results = simulate_many(_tasks(config, N, choices, seeds, max_wall_t0, extra), seed=seed,
                            workers=workers, progress=progress)
    cands = _collect(results, choices, trials)
    best = {s: _best([c for c in cands if c.strategy == s]) for s in strategies}
    rec = _best(list(best.values())).strategy
    exact = [best[s] for s in strategies if s in EXACT]
    rec_exact = _best(exact).strategy if exact else None
    gains = {s: paired_gain(best[rec].ttt, best[s].ttt, seed) for s in strategies if s != rec}
    notes = []
    for s in strategies:
        if not best[s].finished:
            notes.append(f"{STRATEGY_LABELS[s]}: some runs stopped at {max_wall_t0:g}·T0; its "
                         "TTT/T0 is a lower bound")
        ends = [r for r, _ in choices[s]]
        b = best[s].r
        if len(ends) > 1 and b in (min(ends), max(ends)) and s != "spare+repair":
            notes.append(f"{STRATEGY_LABELS[s]}: best r = {b} is at the edge of the searched "
                         f"window {min(ends)}..{max(ends)}")
    return StrategyPlan(N=N, steps=config.steps, trials=trials, seed=seed, config=config,
                        strategies=strategies, trial_seeds=seeds, candidates=tuple(cands),
                        best=best, recommended=rec, recommended_exact=rec_exact, gains=gains,
                        elapsed_s=time.perf_counter() - t0, notes=tuple(notes))


def sweep_strategies(config: ClusterConfig, N: int, param: str, values: Sequence[Any],
                     strategies: Sequence[str] = STRATEGIES, trials: int = 2, seed: int = 0,
                     workers: int = 2, *, derive: Any = None, max_wall_t0: float = MAX_WALL_T0,
                     progress: bool = False) -> Any:
    """Every strategy at its closed-form choice (window 0) for each value of one config field.

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
        As :func:`plan_strategies`; trial t of every strategy and value shares its failure seed.
    derive : callable or None
        ``derive(config) -> config`` applied after the replacement (e.g. to keep another field
        tied to it).

    Returns
    -------
    DataFrame
        One row per (value, strategy, trial): ``value``, strategy, label, r, checkpoint_steps,
        trial, ttt_over_t0, availability, overhead, dropped_sample_fraction, full_restarts,
        stall_share, completed.
    """
    import pandas as pd

    from spare_lib.cluster.simulate import simulate_many

    strategies = _check_strategies(strategies)
    trials = check_int("trials", trials, lo=1)
    N = check_int("N", N, lo=2)
    if not isinstance(config, ClusterConfig) or not hasattr(config, param):
        raise ValueError(f"param must be a ClusterConfig field, got {param!r}")
    seeds = trial_seeds(check_int("seed", seed, lo=0), trials)
    tasks, meta = [], []
    for v in values:
        cfg = config.with_(**{param: v})
        cfg = derive(cfg) if derive is not None else cfg
        choices = closed_form_choices(cfg, N, strategies, 0)
        tasks += _tasks(cfg, N, choices, seeds, max_wall_t0, {})
        meta += [{"value": v, "strategy": s, "label": STRATEGY_LABELS[s], "r": r,
                  "checkpoint_steps": c, "trial": t}
                 for s, cands in choices.items() for r, c in cands for t in range(trials)]
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
    trace). Extra ``kwargs`` go to :func:`~spare_lib.cluster.simulate.simulate`."""
    import warnings

    from spare_lib.cluster.simulate import simulate
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


__all__ = ["CONFIDENCE", "EXACT", "MAX_WALL_T0", "REJOINING", "REPAIR_FLAT", "STRATEGIES",
           "STRATEGY_LABELS", "Candidate", "StrategyPlan", "closed_form_choices",
           "effective_training_time", "infer_mtbf", "paired_gain",
           "plan_strategies", "repair_choice", "resolve_config", "stall_rule_model",
           "sweep_strategies", "trial_seeds"]
