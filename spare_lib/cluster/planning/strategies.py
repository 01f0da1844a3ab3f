"""Recovery strategies across a cluster knob (notebook 80): experiment drivers on the planner.

The planner itself (:func:`spare_lib.cluster.planning.run_plan`, ``spare plan --strategies``)
compares any registered methods on one cluster. This module holds the drivers notebook 80 runs
around it:

* :func:`spec_of`: the planner's :class:`~spare_lib.cluster.planning.ClusterSpec` of a simulator
  :class:`~spare_lib.cluster.ClusterConfig` and N (the strategies' knobs included);
* :func:`fast_choices`: every method's (r, C) from the fast model the planner searches around
  (:func:`~spare_lib.cluster.planning.models.fast_model`);
* :func:`sweep_strategies`: every method at its fast-model choice for each value of one knob
  (stall, rejoin time, MTBF, micro-batches, ...), trial t of every method and value with the
  same failure seed; :func:`summarize_sweep`, :func:`stall_winners` and :func:`crossings` read
  the sweep;
* :func:`versus` and :func:`closing_row`: one method against every other of a simulated plan,
  with paired Student-t intervals (Holm-adjusted) and "tied" (the closing table);
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
from spare_lib.cluster.planning.fast import ClosedFormPoint
from spare_lib.cluster.planning.models import fast_model
from spare_lib.cluster.planning.spec import RUN_KNOBS, ClusterSpec
from spare_lib.registry.knobs import KNOBS
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


def fast_choices(config: ClusterConfig, N: int, strategies: Sequence[str] = STRATEGIES,
                 model: str = KNOBS["model"].default) -> dict[str, ClosedFormPoint]:
    """Each method's choice of r and checkpoint interval C from the planner's fast model.

    The point :func:`~spare_lib.cluster.planning.run_plan` centres its search on
    (:meth:`~spare_lib.cluster.planning.models.FastModel.best`) for ``config`` at N groups and a
    run of ``config.steps`` committed steps: with ``model='predict'`` (the planner's default) the
    predictive time-to-train model, with ``'finite'`` or ``'paper'`` the closed forms (Eq. 7 for
    SPARe+CKPT and Rep+CKPT, the repair chain for SPARe+repair, for the elastic methods in the
    paper's failure mix one checkpoint at the end: they restart only when every group is dead).

    Parameters
    ----------
    config : ClusterConfig
    N : int
        Data-parallel groups, ≥ 2.
    strategies : sequence of str
        Registered methods.
    model : {'predict', 'finite', 'paper'}

    Returns
    -------
    dict
        Method -> :class:`~spare_lib.cluster.planning.fast.ClosedFormPoint` (``r``,
        ``checkpoint_steps``, ``ttt_over_t0``, ...).
    """
    strategies = check_methods(strategies)
    model = KNOBS["model"].check(model)
    fast = fast_model(spec_of(config, N), strategies, model, config.steps)
    return {s: fast.best(s) for s in strategies}


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
        choice = fast_choices(cfg, N, strategies, model)
        for s in strategies:
            p = choice[s]
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


def summarize_sweep(runs: Any) -> Any:
    """Mean, min and max of TTT/T0 and the other metrics' means per (N, value, strategy) of
    :func:`sweep_strategies` frames (with an ``N`` column added); ``finished``: every trial
    reached its last step within the wall cap."""
    need = {"N", "value", "strategy", "label", "r", "trial", "ttt_over_t0", "availability",
            "overhead", "dropped_sample_fraction", "stall_share", "completed"}
    missing = sorted(need - set(runs.columns))
    if missing:
        raise ValueError(f"runs must be sweep_strategies frames with an N column, missing {missing}")
    g = runs.groupby(["N", "value", "strategy"], sort=False)
    return g.agg(label=("label", "first"), r=("r", "first"), ttt_over_t0=("ttt_over_t0", "mean"),
                 ttt_min=("ttt_over_t0", "min"), ttt_max=("ttt_over_t0", "max"),
                 availability=("availability", "mean"), overhead=("overhead", "mean"),
                 dropped_sample_fraction=("dropped_sample_fraction", "mean"),
                 stall_share=("stall_share", "mean"), finished=("completed", "all"),
                 trials=("trial", "count")).reset_index()


def _family(name: str) -> str:
    return method_spec(name).family


def stall_winners(summaries: Any) -> Any:
    """Per rejoin assumption, N and stall of a stall sweep: the best strategy overall and among
    the exact ones (finished runs only), every strategy's mean TTT/T0, and the best SPARe
    variant's and SPARe+CKPT's TTT over the best elastic method's (> 1: SPARe is slower).

    Parameters
    ----------
    summaries : mapping of str to DataFrame
        Rejoin assumption -> :func:`summarize_sweep` of a stall sweep.
    """
    import pandas as pd

    rows = []
    for mode, summ in summaries.items():
        for (N, v), g in summ.groupby(["N", "value"]):
            g = g.set_index("strategy")
            fin = g[g.finished]
            spare = [n for n in g.index if _family(n) == "spare"]
            elastic = [n for n in g.index if _family(n) == "elastic"]
            if "spare" not in g.index or not elastic or fin.empty:
                raise ValueError(f"summaries must hold SPARe+CKPT, an elastic method and a "
                                 f"finished run at every point, not at N = {N}, value {v}")
            best = fin.ttt_over_t0.idxmin()
            exact = fin[[method_spec(n).exact_batch for n in fin.index]]
            el = g.loc[elastic, "ttt_over_t0"].min()
            row = {"rejoin": mode, "N": N, "stall (s)": v, "best": STRATEGY_LABELS[best],
                   "best TTT/T0": fin.ttt_over_t0.min(),
                   "best exact": STRATEGY_LABELS[exact.ttt_over_t0.idxmin()] if len(exact) else "",
                   **{STRATEGY_LABELS[n]: g.loc[n, "ttt_over_t0"] for n in g.index},
                   "SPARe best / elastic best": g.loc[spare, "ttt_over_t0"].min() / el,
                   "SPARe+CKPT / elastic best": g.loc["spare", "ttt_over_t0"] / el}
            rows.append(row)
    return pd.DataFrame(rows)


def crossings(x: Sequence[float], ratio: Sequence[float]) -> list[float]:
    """Where ``ratio`` (> 0) crosses 1 along x (> 0, increasing): log-linear interpolation of
    log(ratio) against log(x) between neighbouring points of opposite sign.

    >>> [round(c, 6) for c in crossings([1.0, 100.0], [2.0, 0.5])]
    [10.0]
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(ratio, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1 or not (np.all(np.isfinite(xs) & (xs > 0))
                                                   and np.all(np.isfinite(ys) & (ys > 0))):
        raise ValueError("x and ratio must be equal-length sequences of positive finite numbers")
    lx, ly = np.log(xs), np.log(ys)
    if np.any(np.diff(lx) <= 0):
        raise ValueError("x must be strictly increasing")
    return [float(np.exp(lx[i] + (lx[i + 1] - lx[i]) * ly[i] / (ly[i] - ly[i + 1])))
            for i in range(len(lx) - 1) if (ly[i] > 0) != (ly[i + 1] > 0)]


def versus(res: Any, ref: str = "spare") -> list[dict[str, Any]]:
    """``ref`` against every other method of a simulated plan, by paired trials.

    For each other method o: the gain 1 − TTT(ref)/TTT(o) (the paper's time-to-train gain;
    negative: ``ref`` is slower) with the Student-t interval of the per-trial differences
    TTT_t(o) − TTT_t(ref) over the mean TTT(o) (common random numbers: trial t of both saw the
    same failures), Holm-adjusted over the comparisons that have an interval
    (:func:`~spare_lib.cluster.planning.stats.holm`), "tied" when it covers 0. A method whose runs
    stopped at the wall cap has a lower-bound TTT and no interval.

    Parameters
    ----------
    res : PlanResult
        A simulated plan (:func:`~spare_lib.cluster.planning.run_plan` with ``trials``) in which
        ``ref`` was simulated.
    ref : str

    Returns
    -------
    list of dict
        One per other method: ``method``, ``label``, ``r``, ``checkpoint_steps``, ``ttt_over_t0``,
        ``finished``, ``gain``, ``ci_low``, ``ci_high``, ``confidence`` (nan without an
        interval), ``ratio`` = TTT(ref)/TTT(o) = 1 − gain with ``ratio_ci_low`` and
        ``ratio_ci_high`` (the same interval), ``tied``, ``favours`` (``ref``'s label, the
        other's, 'tied' or 'unresolved': one trial, or both stopped at the cap).
    """
    from spare_lib.cluster.planning.stats import holm, paired_comparison

    if getattr(res, "verdict", None) is None or not getattr(res, "simulated", False):
        raise ValueError("res must be a simulated PlanResult (run_plan with trials)")
    cs = {c.method: c for c in res.verdict.contenders}
    if ref not in cs:
        raise ValueError(f"ref must be one of {tuple(cs)}, got {ref!r}")
    a = cs[ref]
    others = [c for n, c in cs.items() if n != ref]
    nan = float("nan")
    cmps = [paired_comparison(c.trials, a.trials, c.ttt) if a.finished and c.finished
            and len(a.trials) == len(c.trials) >= 2 else None for c in others]
    idx = [i for i, x in enumerate(cmps) if x is not None and x.has_interval]
    adj = holm([cmps[i] for i in idx], [others[i].trials for i in idx], [a.trials] * len(idx),
               [others[i].ttt for i in idx])
    out = []
    for i, c in enumerate(others):
        gain = 1.0 - a.ttt / c.ttt if math.isfinite(c.ttt) and c.ttt > 0 else nan
        lo = hi = conf = nan
        if i in idx:
            x = adj[idx.index(i)]
            lo, hi, conf = x.ci_low, x.ci_high, x.confidence
        tied = lo == lo and lo <= 0.0 <= hi
        if lo == lo:
            favours = "tied" if tied else (a.label if gain > 0 else c.label)
        elif a.finished != c.finished:
            favours = a.label if a.finished else c.label
        else:
            favours = "unresolved"
        out.append({"method": c.method, "label": c.label, "r": c.r,
                    "checkpoint_steps": c.checkpoint_steps, "ttt_over_t0": c.ttt,
                    "finished": c.finished, "gain": gain, "ci_low": lo, "ci_high": hi,
                    "confidence": conf, "ratio": 1.0 - gain, "ratio_ci_low": 1.0 - hi,
                    "ratio_ci_high": 1.0 - lo, "tied": bool(tied), "favours": favours})
    return out


def closing_row(res: Any, ref: str = "spare") -> dict[str, Any]:
    """One row of notebook 80's closing table from a simulated plan of every method.

    Columns: ``best`` and ``best_method`` (the verdict's), ``best_ttt_over_t0``,
    ``best_exact`` and ``best_exact_ttt_over_t0`` (the best of the methods that keep the batch
    exact), ``trials``, ``statement`` (the verdict's sentence); per method s: ``r_s``, ``C_s``,
    ``ttt_s``, ``finished_s``; per method other than ``ref``: ``gain_vs_s``,
    ``gain_vs_s_ci_low``, ``gain_vs_s_ci_high``, ``tied_vs_s``, ``favours_vs_s``
    (:func:`versus`); and ``family_*``: the best SPARe variant over the best other method
    (:func:`~spare_lib.cluster.planning.sensitivity.family_ratio`; when one family has no
    finished method, ``family_ratio`` is nan and ``family_favours`` names the family that
    finished, or 'none trains').
    """
    from spare_lib.cluster.planning.sensitivity import family_ratio

    vs = versus(res, ref)
    v = res.verdict
    cs = v.contenders
    exact = [c for c in cs if method_spec(c.method).exact_batch and c.trains]
    be = min(exact, key=lambda c: c.ttt) if exact else None
    row: dict[str, Any] = {
        "best": v.best.label, "best_method": v.best.method, "best_ttt_over_t0": v.best.ttt,
        "best_exact": be.label if be else "", "best_exact_ttt_over_t0": be.ttt if be else math.nan,
        "trials": len(v.best.trials), "statement": v.statement}
    for c in cs:
        row |= {f"r_{c.method}": c.r, f"C_{c.method}": c.checkpoint_steps,
                f"ttt_{c.method}": c.ttt, f"finished_{c.method}": c.finished}
    for x in vs:
        s = x["method"]
        row |= {f"gain_vs_{s}": x["gain"], f"gain_vs_{s}_ci_low": x["ci_low"],
                f"gain_vs_{s}_ci_high": x["ci_high"], f"tied_vs_{s}": x["tied"],
                f"favours_vs_{s}": x["favours"]}
    fin = {_family(c.method) == "spare" for c in cs if c.trials and c.finished}
    if fin == {True, False}:
        fam = family_ratio(res)
    else:  # one family (or none) finished: no ratio, the finished side is faster
        nan = math.nan
        who = "none trains" if not fin else ("SPARe" if True in fin else "other")
        fam = {"spare": "", "other": "", "ratio": nan, "ci_low": nan, "ci_high": nan,
               "tied": False, "favours": who, "trials": len(v.best.trials)}
    row |= {f"family_{k}": val for k, val in fam.items()}
    return row


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


__all__ = ["EXACT", "MAX_WALL_T0", "REJOINING", "STRATEGIES", "STRATEGY_LABELS", "closing_row",
           "crossings", "effective_training_time", "fast_choices", "infer_mtbf", "spec_of",
           "stall_rule_model", "stall_winners", "summarize_sweep", "sweep_strategies",
           "trial_seeds", "versus"]
