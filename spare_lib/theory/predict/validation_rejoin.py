"""Validation of the model of the rejoining methods against simulated runs (notebook 55, §5).

The methods whose failed groups rejoin — SPARe+repair, elastic-drop, elastic-rebalance
(:mod:`spare_lib.theory.predict.rejoin`) — on a grid of clusters: N, the system MTBF m, the restart
T_r, the stall per reconfiguration, the rejoin time, blocking or non-blocking rejoin batches, and
for elastic-rebalance the micro-batches b and the data fetch. As :mod:`.validation`, these
helpers take simulated runs as plain tables (one row per run: the point's columns plus
``ttt_over_t0``, ``availability``, ``overhead``, ``full_restarts``, ``dropped_sample_fraction``),
so this module stays in the theory layer; the notebook runs
:func:`spare_lib.cluster.simulate_many` with common random numbers (:func:`trial_failure_seeds`).

* :func:`rejoin_grid_settings` — the grid (every (N, m, stall, rejoin) combination, the other
  knobs rotated so that each pair of factors meets);
* :func:`rejoin_grid_points` — per setting and method the r and C the model picks;
* :func:`rejoin_point_table` — per point: simulated mean and standard error, the model, errors;
* :func:`rejoin_error_summary` — mean and worst |ΔTTT/T0| per method, availability too;
* :func:`repair_diagnosis_settings` and :func:`repair_diagnosis_table` — one factor at a time
  around SPARe+repair's worst point: the clock law, the stall and the rejoin time, with the
  expected restarts of the model against the simulated ones (notebook 55, §5b);
* :func:`away_process_uptime` — the bare away process of SPARe+repair's groups (no steps, no
  stalls), its uptime to a wipe-out against the uptime from the hazard of freshly drawn away sets,
  the way the model weighed them before :mod:`~.rejoin_chain`; :func:`away_process_model`, the
  same two uptimes from the model's terms (notebook 55, §5b).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from spare_lib.stacking.layout import make_layout, max_ruler_r
from spare_lib.theory.predict.curves import _clock, _gradient
from spare_lib.theory.predict.cycle import NoTrainingCycle
from spare_lib.theory.predict.grid import optimise_checkpoint, recommend
from spare_lib.theory.predict.model import ClusterLike, predict
from spare_lib.theory.predict.rejoin import REJOIN_METHODS, _tables, fresh_survival
from spare_lib.theory.predict.rejoin_chain import killed_count_chain
from spare_lib.theory.predict.rejoin_law import GroupProcess, _solve, rejoin_grid

#: Levels of the grid's factors.
REJOIN_N = (32, 200, 1000)
REJOIN_MTBF_S = (120.0, 300.0, 900.0)
REJOIN_STALL_S = (0.1, 30.0, 120.0)
REJOIN_REJOIN_S = (300.0, 600.0, 1800.0)
REJOIN_RESTART_S = (300.0, 1200.0, 3600.0)
REJOIN_B = (1, 8, 32)
REJOIN_FETCH_S = (0.0, 30.0)
#: SPARe+repair's r is searched over 2..this (and the layout's largest r).
REPAIR_R_MAX = 8
#: Points the model puts above this TTT/T0 are not simulated (a cluster that hardly trains; the
#: simulator's runs would stop at their wall-time cap).
TTT_CAP = 20.0
#: The config fields a setting sets (the rest are the 600k preset's at N).
SETTING_FIELDS = ("system_mtbf_s", "stall_s", "rejoin_s", "restart_s", "rejoin_stall_s",
                  "microbatches", "fetch_s")


def rejoin_grid_settings(design: str = "full") -> list[dict[str, Any]]:
    """Cluster settings of the grid.

    'full': all 81 combinations of N, m, stall and rejoin time; in each, the restart T_r, b and
    the fetch are rotated (index sums modulo the levels, a Latin design: every pair of factors
    meets in all level combinations) and the rejoin batch is blocking (``rejoin_stall_s`` None,
    a stall as long as ``stall_s``) or non-blocking (0) by turns. 'smoke': 4 of them.
    """
    if design not in ("full", "smoke"):
        raise ValueError(f"design must be 'full' or 'smoke', got {design!r}")
    rows = []
    for (i, N), (j, m), (k, s), (l, rj) in itertools.product(
            enumerate(REJOIN_N), enumerate(REJOIN_MTBF_S), enumerate(REJOIN_STALL_S),
            enumerate(REJOIN_REJOIN_S)):
        rows.append({"N": N, "system_mtbf_s": m, "stall_s": s, "rejoin_s": rj,
                     "restart_s": REJOIN_RESTART_S[(i + j + k + l) % 3],
                     "microbatches": REJOIN_B[(i + 2 * j + k + 2 * l) % 3],
                     "fetch_s": REJOIN_FETCH_S[(i + j + 2 * k + l) % 2],
                     "rejoin_stall_s": None if (i + j + k + l) % 2 == 0 else 0.0})
    if design == "smoke":
        rows = [rows[t] for t in (13, 40, 58, 67)]
    for c, row in enumerate(rows):
        row["config_id"] = c
    return rows


def trial_failure_seeds(seed: int, trials: int) -> list[int]:
    """The failure seed of each trial (``simulate(failure_seed=...)``), the same for every
    method and setting: common random numbers (as :func:`spare_lib.cluster.strategies.trial_seeds`,
    from (seed, t) only)."""
    return [int(np.random.SeedSequence([int(seed), t]).generate_state(1, np.uint64)[0]
                >> np.uint64(1)) for t in range(int(trials))]


def rejoin_grid_points(settings: Sequence[dict[str, Any]], config_for: Callable[[dict], ClusterLike],
                       methods: Sequence[str] = REJOIN_METHODS) -> list[dict[str, Any]]:
    """The points to simulate: per setting and method the model's choice of r and C.

    SPARe+repair: the model's best r over 2..min(:data:`REPAIR_R_MAX`, largest ruler r) with C
    optimised per r (:func:`~spare_lib.theory.predict.grid.recommend`), and every second setting
    one below it (r ≥ 2), so that the grid also holds points where wipe-outs happen; the elastic
    methods: r = 1 and the model's best C. A point the model finds untrainable
    (:class:`NoTrainingCycle`, or TTT/T0 above :data:`TTT_CAP`) is left out.
    """
    points = []
    for s in settings:
        cfg = config_for(s)
        N = int(s["N"])
        for method in methods:
            try:
                if method == "spare+repair":
                    r_hi = min(REPAIR_R_MAX, max_ruler_r(N))
                    rec = recommend(method, N, cfg, r_values=range(2, r_hi + 1), search="scan")
                    r = max(2, rec.r - int(s["config_id"]) % 2)
                    C = rec.C if r == rec.r else optimise_checkpoint(method, N, r, cfg)[0]
                else:
                    r = 1
                    C = optimise_checkpoint(method, N, 1, cfg)[0]
                if predict(method, N, r, int(C), cfg).ttt_over_t0 > TTT_CAP:
                    continue
            except NoTrainingCycle:
                continue
            points.append({**s, "method": method, "r": r, "C": int(C)})
    return points


def _completed_points(runs: pd.DataFrame, point_cols: Sequence[str]) -> pd.DataFrame:
    """The runs of the points none of whose runs hit the wall-time cap (all of them without a
    ``completed`` column)."""
    if "completed" not in runs:
        return runs
    done = runs.groupby(list(point_cols), sort=False, dropna=False).completed.transform("all")
    return runs[done.astype(bool)]


def rejoin_point_table(runs: pd.DataFrame, point_cols: Sequence[str],
                       config_for: Callable[[pd.Series], ClusterLike]) -> pd.DataFrame:
    """Per point: simulated mean ± s.e., the model and the errors.

    Parameters
    ----------
    runs : DataFrame
        One row per simulated run: ``point_cols`` (with method, N, r, C) and ttt_over_t0,
        availability, overhead, full_restarts, dropped_sample_fraction; with a ``completed``
        column, the points where some run hit its wall-time cap are left out.
    point_cols : sequence of str
        Columns identifying a point.
    config_for : callable
        Row of the point table -> the config the runs used.

    Returns
    -------
    DataFrame
        point_cols + n, sim_ttt, sim_ttt_se, model_ttt, err_model_pct, sim_avail, model_avail,
        err_avail_pts, sim_overhead, model_overhead, sim_restarts, model_restarts, sim_dropped,
        model_dropped.
    """
    runs = _completed_points(runs, point_cols)
    g = runs.groupby(list(point_cols), sort=False, dropna=False)
    out = g.agg(n=("ttt_over_t0", "size"), sim_ttt=("ttt_over_t0", "mean"),
                sim_ttt_sd=("ttt_over_t0", "std"), sim_avail=("availability", "mean"),
                sim_overhead=("overhead", "mean"), sim_restarts=("full_restarts", "mean"),
                sim_dropped=("dropped_sample_fraction", "mean")).reset_index()
    out["sim_ttt_se"] = out.sim_ttt_sd.fillna(0.0) / np.sqrt(out.n)
    cols: dict[str, list[float]] = {k: [] for k in ("model_ttt", "model_avail", "model_overhead",
                                                    "model_restarts", "model_dropped")}
    for _, row in out.iterrows():
        p = predict(row["method"], int(row["N"]), int(row["r"]), int(row["C"]), config_for(row))
        for k, v in (("model_ttt", p.ttt_over_t0), ("model_avail", p.availability),
                     ("model_overhead", p.overhead), ("model_restarts", p.restarts),
                     ("model_dropped", p.dropped_sample_fraction)):
            cols[k].append(v)
    for k, v in cols.items():
        out[k] = v
    out["err_model_pct"] = 100 * (out.model_ttt / out.sim_ttt - 1)
    out["err_avail_pts"] = 100 * (out.model_avail - out.sim_avail)
    return out.drop(columns="sim_ttt_sd")


def rejoin_error_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method (and all together): points, mean and worst |ΔTTT/T0| in %, mean and worst
    |Δavailability| in points, and the worst point's error in standard errors of the simulated
    mean."""
    rows = []
    for method, sub in [("all", table)] + list(table.groupby("method", sort=False)):
        worst = sub.loc[sub.err_model_pct.abs().idxmax()]
        rows.append({
            "method": method, "points": len(sub),
            "ttt_mean_pct": sub.err_model_pct.abs().mean(),
            "ttt_worst_pct": sub.err_model_pct.abs().max(),
            "ttt_worst_in_se": abs(worst.model_ttt - worst.sim_ttt) / max(worst.sim_ttt_se, 1e-12),
            "avail_mean_pts": sub.err_avail_pts.abs().mean(),
            "avail_worst_pts": sub.err_avail_pts.abs().max(),
        })
    return pd.DataFrame(rows)


#: The levels §5b puts against the worst point's: the clock laws, the shortest stall and the
#: shortest rejoin time of the grid.
DIAGNOSIS_CLOCKS = ("weibull", "exponential")


def repair_diagnosis_settings(worst: dict[str, Any]) -> list[dict[str, Any]]:
    """The settings of §5b: SPARe+repair's worst point (its N, r, C and setting) with the clock
    law in :data:`DIAGNOSIS_CLOCKS`, the stall in {grid's shortest, the point's} and the rejoin
    time in {grid's shortest, the point's} (2 × 2 × 2, fewer where the point's level is the
    shortest), each with ``failure_dist`` and a ``diag_id``."""
    keep = ("N", "r", "C", *SETTING_FIELDS)
    missing = [k for k in keep if k not in worst]
    if missing:
        raise ValueError(f"worst must give {keep}, missing {missing}")
    rows = []
    stalls = sorted({min(REJOIN_STALL_S), float(worst["stall_s"])})
    rejoins = sorted({min(REJOIN_REJOIN_S), float(worst["rejoin_s"])})
    for dist, stall, rejoin in itertools.product(DIAGNOSIS_CLOCKS, stalls, rejoins):
        row = {k: worst[k] for k in keep}
        row.update(method="spare+repair", failure_dist=dist, stall_s=stall, rejoin_s=rejoin,
                   diag_id=len(rows))
        rows.append(row)
    return rows


def repair_diagnosis_table(runs: pd.DataFrame, point_cols: Sequence[str],
                           config_for: Callable[[pd.Series], ClusterLike],
                           level: float = 0.95) -> pd.DataFrame:
    """:func:`rejoin_point_table` of §5b's runs, with the simulated expected restarts' Student-t
    interval at ``level`` (``sim_restarts_lo``, ``sim_restarts_hi``; the runs are independent
    draws of one setting) and the model's restarts over the simulated mean
    (``restarts_ratio``)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    out = rejoin_point_table(runs, point_cols, config_for)
    runs = _completed_points(runs, point_cols)  # the runs of out's points, in its order
    sd = runs.groupby(list(point_cols), sort=False, dropna=False).full_restarts.std()
    sd = sd.reset_index(drop=True).fillna(0.0).to_numpy()
    half = stats.t.ppf(0.5 + level / 2, np.maximum(out.n - 1, 1)) * sd / np.sqrt(out.n)
    out["sim_restarts_lo"] = out.sim_restarts - half
    out["sim_restarts_hi"] = out.sim_restarts + half
    out["restarts_ratio"] = out.model_restarts / out.sim_restarts.where(out.sim_restarts > 0)
    return out


def away_process_uptime(N: int, r: int, group_mtbf_s: float, away_s: float, *, reps: int = 20_000,
                        steps_per_away: int = 360, seed: int = 0, s_floor: float = 1e-3,
                        max_steps: int = 100_000) -> dict[str, float]:
    """Mean uptime to a wipe-out of SPARe+repair's bare away process, and the same from the
    hazard of freshly drawn away sets (a Monte Carlo in time steps, plain numpy).

    Each of N groups (the ruler layout of r) fails after an exponential time of mean
    ``group_mtbf_s`` (= N·m) while up, is then away for ``away_s``, and comes back; the cycle is
    wiped out when some type's r holders are all away. No steps, stalls or polls. ``reps``
    replicates of the process run from all groups up, unkilled, in steps of ``away_s /
    steps_per_away``:

    * the killed process's survival S(τ) is the share of replicates never wiped by τ;
    * the fresh-draw hazard h(τ) is the share of the replicates whose away set is not wiping at τ
      that wipe in the next step: the hazard of a surviving set drawn from the unconditioned law
      of the moment, as the model's E[(N − k)·q_k | no wipe-out] weighs the sets of k away
      (:mod:`~spare_lib.theory.predict.rejoin`), without the memory that the cycle survived.

    The run stops when S falls below ``s_floor`` (or at ``max_steps``); the means are the sums
    of S and of exp(−Σ h) over the steps (the tail beyond is cut: ``s_end`` says how much).

    Returns
    -------
    dict
        ``uptime_s`` (killed process), ``fresh_uptime_s`` (fresh draws), ``restart_ratio``
        (uptime_s / fresh_uptime_s: the restart rate of fresh draws over the true one),
        ``s_end`` (S at the last step), ``steps`` and ``horizon_s`` (their time).
    """
    if not (isinstance(N, (int, np.integer)) and isinstance(r, (int, np.integer)) and 1 <= r <= N):
        raise ValueError(f"N and r must be integers with 1 <= r <= N, got N={N!r}, r={r!r}")
    if not (group_mtbf_s > 0 and away_s > 0):
        raise ValueError(f"group_mtbf_s and away_s must be > 0, got {group_mtbf_s!r}, {away_s!r}")
    if reps < 2 or steps_per_away < 1 or not 0 < s_floor < 1:
        raise ValueError(f"reps must be >= 2, steps_per_away >= 1 and s_floor in (0, 1), got "
                         f"{reps!r}, {steps_per_away!r}, {s_floor!r}")
    rng = np.random.default_rng(seed)
    inc = np.zeros((N, N), dtype=np.float32)  # group x type it holds (float: a BLAS product)
    for g, types in enumerate(np.asarray(make_layout(int(N), int(r), "ruler").stacks)):
        inc[g, types] = 1.0
    dt = away_s / steps_per_away
    p_fail = -np.expm1(-dt / group_mtbf_s)
    left = np.zeros((reps, N), dtype=np.int32)  # steps still away

    def wiping(lft: np.ndarray) -> np.ndarray:  # counts of at most N: exact in float32
        return ((lft > 0).astype(np.float32) @ inc > r - 0.5).any(axis=1)

    alive = np.ones(reps, dtype=bool)
    before = np.ones(reps, dtype=bool)  # all up: no set wipes
    up_sum = fresh_sum = log_fresh = 0.0
    s_true, k = 1.0, 0
    while k < max_steps and s_true >= s_floor:
        fail = (left == 0) & (rng.random(left.shape) < p_fail)
        left = np.maximum(left - 1, 0)
        left[fail] = steps_per_away
        after = wiping(left)
        h = (before & after).sum() / max(int(before.sum()), 1)
        log_fresh += math.log1p(-min(h, 1.0 - 1e-15))
        alive &= ~after
        before = ~after
        s_true = float(alive.mean())
        up_sum += s_true
        fresh_sum += math.exp(log_fresh)
        k += 1
    return {"uptime_s": dt * up_sum, "fresh_uptime_s": dt * fresh_sum,
            "restart_ratio": up_sum / fresh_sum if fresh_sum > 0 else math.nan,
            "s_end": s_true, "steps": k, "horizon_s": dt * k}


def away_process_model(N: int, r: int, group_mtbf_s: float, away_s: float,
                       horizon_s: float | None = None) -> dict[str, float]:
    """The model's mean uptime to a wipe-out of :func:`away_process_uptime`'s bare process.

    One group's notices U(τ) by the renewal solve of :mod:`~.rejoin_law` (an exponential clock
    of mean ``group_mtbf_s``, away for exactly ``away_s``, no wait for a step start), its away
    probability a(τ) = U(τ) − U(τ − ``away_s``), then the cycle's survival two ways on the
    ruler layout's P0(k) (:func:`~.rejoin._tables`): the killed count chain of
    :mod:`~.rejoin_chain` (the model) and the hazard of sets drawn afresh at each τ,
    λ_live·E[(N − k)·q_k | no wipe-out] under the restricted Binomial (the model before the
    chain). Each uptime is ∫ G over a grid out to 200 clock means, or up to ``horizon_s`` (the
    time :func:`away_process_uptime` ran: its uptimes are cut there).

    Returns
    -------
    dict
        ``chain_uptime_s``, ``fresh_uptime_s``.
    """
    if not (isinstance(N, (int, np.integer)) and isinstance(r, (int, np.integer)) and 1 <= r <= N):
        raise ValueError(f"N and r must be integers with 1 <= r <= N, got N={N!r}, r={r!r}")
    if not (group_mtbf_s > 0 and away_s > 0):
        raise ValueError(f"group_mtbf_s and away_s must be > 0, got {group_mtbf_s!r}, {away_s!r}")
    if horizon_s is not None and not horizon_s > 0:
        raise ValueError(f"horizon_s must be > 0 or None, got {horizon_s!r}")
    clock = _clock("exponential", float(group_mtbf_s), 1.0)
    tau = rejoin_grid(clock.mean_s, float(away_s), 200.0 * clock.mean_s, away_s / 30.0)
    U = _solve(clock, tau, 1.0 - clock.survival(tau), float(away_s))
    a = np.minimum(GroupProcess(tau, U, np.ones(1), 0.0, float(away_s)).away(float(away_s)),
                   1.0 - 1e-12)
    tables = _tables("spare+repair", int(N), int(r), "ruler", 1)
    G = killed_count_chain(tau, a, U, int(N), tables[1], tables[5])[0][0]  # the one node
    lam = np.maximum(_gradient(U, tau), 0.0) / (1.0 - a)
    fresh = fresh_survival(tables, int(N), tau, a, lam)[1][0]
    if horizon_s is not None:
        cut = np.append(tau[tau < horizon_s], min(horizon_s, tau[-1]))
        G, fresh, tau = np.interp(cut, tau, G), np.interp(cut, tau, fresh), cut
    return {"chain_uptime_s": float(np.trapezoid(G, tau)),
            "fresh_uptime_s": float(np.trapezoid(fresh, tau))}
