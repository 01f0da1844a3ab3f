"""Validation of the predictive model against simulated runs (notebook 55), and the Eq. 7 gap.

The simulator is the reference. These helpers take simulated runs as plain tables (one row per
run: the point's columns plus ``ttt_over_t0``, ``availability``, ``overhead``) so that this module
stays in the theory layer; the notebook runs :func:`spare_lib.cluster.simulate_many`.

* :func:`paper_grid_points`, :func:`wide_grid_configs`, :func:`r_around` — the grids;
* :func:`point_table` — per point: simulated mean and standard error, the model, Eq. 7 / Eq. 2,
  and the errors;
* :func:`error_summary` — mean and worst |Δ| per grid and method, model and Eq. 7 side by side;
* :func:`r_agreement` — the model's best r against the simulator's best r and its tie set;
* :func:`eq7_waterfall` — the gap between Eq. 7 and the model decomposed into its mechanisms.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from spare_lib.stacking.layout import max_ruler_r
from spare_lib.theory.closed import mu_closed, replication_mu
from spare_lib.theory.predict.model import MECHANISMS, ClusterLike, eq7, predict
from spare_lib.theory.ttt import availability_opt

PAPER_N = (200, 600, 1000)
#: The wider grid of issue 17: system MTBF m, restart T_r, Weibull shape k, N.
WIDE_MTBF_S = (120.0, 300.0, 900.0)
WIDE_RESTART_S = (300.0, 1200.0, 3600.0)
WIDE_SHAPE = (0.6, 0.78, 1.0)
WIDE_N = (200, 1000, 5000)


def paper_grid_points() -> list[dict[str, Any]]:
    """Every (method, N, r) of the paper's Figs. 6–7: N ∈ {200, 600, 1000}, r = 2..max_ruler_r(N),
    SPARe+CKPT and Rep+CKPT (110 points)."""
    return [{"method": m, "N": N, "r": r} for m in ("spare", "rep") for N in PAPER_N
            for r in range(2, max_ruler_r(N) + 1)]


def wide_grid_configs(design: str = "full") -> list[dict[str, Any]]:
    """Cluster settings of the wider grid (m, T_r, k, N).

    'full': all 81 combinations. 'latin': 27 — every (m, T_r, N) with k rotated so that each
    pair of factors still meets in all 9 level combinations (a Latin-square design).
    """
    if design not in ("full", "latin"):
        raise ValueError(f"design must be 'full' or 'latin', got {design!r}")
    rows = []
    for (i, m), (j, tr), (l, N) in itertools.product(enumerate(WIDE_MTBF_S),
                                                     enumerate(WIDE_RESTART_S),
                                                     enumerate(WIDE_N)):
        shapes = WIDE_SHAPE if design == "full" else (WIDE_SHAPE[(i + j + l) % 3],)
        for k in shapes:
            rows.append({"N": N, "system_mtbf_s": m, "restart_s": tr, "weibull_shape": k})
    for i, row in enumerate(rows):
        row["config_id"] = i
    return rows


def r_around(r_best: int, r_min: int, r_max: int, width: int = 3) -> list[int]:
    """``width`` consecutive r centred on r_best, shifted to stay inside [r_min, r_max]."""
    lo = min(max(r_best - width // 2, r_min), max(r_max - width + 1, r_min))
    return list(range(lo, min(lo + width, r_max + 1)))


def _eq2_availability(method: str, N: int, r: int, config: ClusterLike) -> float:
    """The paper's A*(μ·m) (Eq. 2 at its optimal period) with μ of the method."""
    mu = float(mu_closed(N, r)) if method == "spare" else (
        float(replication_mu(N, r)) if method == "rep" else 1.0)
    return float(availability_opt(config.checkpoint_s, mu * config.system_mtbf_s,
                                  config.restart_s))


def point_table(runs: pd.DataFrame, point_cols: Sequence[str],
                config_for: Callable[[pd.Series], ClusterLike], *,
                mu_convention: str = "index") -> pd.DataFrame:
    """Per point: simulated mean ± s.e., the model, Eq. 7 / Eq. 2 and their errors.

    Parameters
    ----------
    runs : DataFrame
        One row per simulated run; columns ``point_cols`` (must include method, N, r, C) and
        ttt_over_t0, availability, overhead.
    point_cols : sequence of str
        Columns identifying a point.
    config_for : callable
        Row of the point table -> the config the runs used.
    mu_convention : str
        Passed to :func:`~spare_lib.theory.predict.eq7` (Eq. 5's ⌊μ⌋).

    Returns
    -------
    DataFrame
        point_cols + n, sim_ttt, sim_ttt_se, model_ttt, eq7_ttt, err_model_pct, err_eq7_pct,
        sim_avail, model_avail, eq2_avail, err_avail_model_pts, err_avail_eq2_pts, sim_overhead,
        model_overhead.
    """
    g = runs.groupby(list(point_cols), sort=False)
    out = g.agg(n=("ttt_over_t0", "size"), sim_ttt=("ttt_over_t0", "mean"),
                sim_ttt_sd=("ttt_over_t0", "std"), sim_avail=("availability", "mean"),
                sim_overhead=("overhead", "mean")).reset_index()
    out["sim_ttt_se"] = out.sim_ttt_sd.fillna(0.0) / np.sqrt(out.n)
    model, eq, avail, eq2, ovh = [], [], [], [], []
    for _, row in out.iterrows():
        cfg = config_for(row)
        C = None if pd.isna(row["C"]) else int(row["C"])
        p = predict(row["method"], int(row["N"]), int(row["r"]), C, cfg)
        model.append(p.ttt_over_t0)
        avail.append(p.availability)
        ovh.append(p.overhead)
        eq.append(eq7(row["method"], int(row["N"]), int(row["r"]), cfg,
                      mu_convention=mu_convention))
        eq2.append(_eq2_availability(row["method"], int(row["N"]), int(row["r"]), cfg))
    out["model_ttt"], out["eq7_ttt"] = model, eq
    out["model_avail"], out["eq2_avail"], out["model_overhead"] = avail, eq2, ovh
    out["err_model_pct"] = 100 * (out.model_ttt / out.sim_ttt - 1)
    out["err_eq7_pct"] = 100 * (out.eq7_ttt / out.sim_ttt - 1)
    out["err_avail_model_pts"] = 100 * (out.model_avail - out.sim_avail)
    out["err_avail_eq2_pts"] = 100 * (out.eq2_avail - out.sim_avail)
    return out.drop(columns="sim_ttt_sd")


def error_summary(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Mean and worst |Δ| per grid (and per method, and both): TTT/T0 in %, availability in points.

    ``tables``: grid name -> :func:`point_table` output.
    """
    rows = []
    for grid, df in tables.items():
        for method, sub in [("both", df)] + list(df.groupby("method")):
            rows.append({
                "grid": grid, "method": method, "points": len(sub),
                "ttt_model_mean_pct": sub.err_model_pct.abs().mean(),
                "ttt_model_worst_pct": sub.err_model_pct.abs().max(),
                "ttt_eq7_mean_pct": sub.err_eq7_pct.abs().mean(),
                "ttt_eq7_worst_pct": sub.err_eq7_pct.abs().max(),
                "avail_model_mean_pts": sub.err_avail_model_pts.abs().mean(),
                "avail_model_worst_pts": sub.err_avail_model_pts.abs().max(),
                "avail_eq2_mean_pts": sub.err_avail_eq2_pts.abs().mean(),
                "avail_eq2_worst_pts": sub.err_avail_eq2_pts.abs().max(),
            })
    return pd.DataFrame(rows)


def r_agreement(table: pd.DataFrame, group_cols: Sequence[str], *,
                model_r: dict[Any, int] | None = None, z: float = 2.0) -> pd.DataFrame:
    """Does the model pick the simulator's best r (or one within its tie set)?

    Per group (a cluster setting and method): the simulator's best r (least mean TTT/T0) and its
    tie set, the r whose mean lies within z·sqrt(se_best² + se_r²) of the best; the model's
    choice is ``model_r[group]`` when given (its global optimum), else the argmin of model_ttt
    over the group's points.
    """
    rows = []
    for key, sub in table.groupby(list(group_cols), sort=False):
        best = sub.loc[sub.sim_ttt.idxmin()]
        tol = z * np.sqrt(best.sim_ttt_se**2 + sub.sim_ttt_se**2)
        ties = sorted(int(r) for r in sub.r[sub.sim_ttt <= best.sim_ttt + tol])
        mr = model_r[key] if model_r is not None else int(sub.loc[sub.model_ttt.idxmin()].r)
        rec = dict(zip(group_cols, key if isinstance(key, tuple) else (key,), strict=True))
        rec.update({"sim_best_r": int(best.r), "sim_tie_set": ties, "model_r": int(mr),
                    "agree": int(mr) in ties, "exact": int(mr) == int(best.r)})
        rows.append(rec)
    return pd.DataFrame(rows)


#: Waterfall steps: (label, mechanisms switched on). The first step is Eq. 7 itself.
WATERFALL_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("model skeleton", ()),
    ("+ barrier", ("barrier",)),
    ("+ restart windows", ("barrier", "restart_windows")),
    ("+ failure law", ("barrier", "restart_windows", "failure_law")),
    ("+ failure events", MECHANISMS),
)


def eq7_waterfall(method: str, N: int, r: int, C: int, config: ClusterLike, *,
                  mu_convention: str = "index") -> pd.DataFrame:
    """Decompose the gap between Eq. 7 and the model into its mechanisms, switched on in turn.

    Steps: Eq. 7; the model skeleton (finite-N wipe-out law with exponential equilibrium clocks
    — dead groups do not fail again —, restarts of exactly T_r, no jitter, free failure events,
    and the exact checkpoint/rework bookkeeping at the given C, vs Eq. 2's T_c*); + the barrier
    over N jittered groups; + per-group restart windows (≈ 2·T_r, pre-failures); + the failure
    law of never-reset Weibull clocks (fresh first cycle, transient, conditioned windows);
    + failure events (shortened all-reduce, shrink, retries with patch compute) = the model.

    Returns
    -------
    DataFrame
        step, ttt_over_t0, delta (change from the previous step).
    """
    rows = [("Eq. 7", eq7(method, N, r, config, mu_convention=mu_convention))]
    for label, mech in WATERFALL_STEPS:
        rows.append((label, predict(method, N, r, C, config, mechanisms=mech).ttt_over_t0))
    df = pd.DataFrame(rows, columns=["step", "ttt_over_t0"])
    df["delta"] = df.ttt_over_t0.diff().fillna(df.ttt_over_t0.iloc[0])
    return df
