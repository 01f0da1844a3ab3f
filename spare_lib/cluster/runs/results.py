"""Result tables of notebooks 50 and 60: runs to a frame, summaries per (method, N, r), the main table,
and the theory lines of Figs. 6–8; :func:`simulate_points`, the runs of notebook 55 §5 and §5b.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.runs.simulate import SimResult, simulate_many


def theory_lines(N: int, r_values: Sequence[int], config: ClusterConfig) -> dict[str, np.ndarray]:
    """Closed-form lines for SPARe over r: Eq. 5 S̄, Eq. 2 A*(μ·m) and Eq. 7 J = S̄/A*.

    Uses :func:`spare_lib.theory.overhead_mean`, :func:`~spare_lib.theory.availability_opt` and
    :func:`~spare_lib.theory.ttt_normalized` with μ = Γ(1+1/r)·N^(1−1/r) (the paper's closed
    form) and the config's m, T_s and T_r.

    Returns
    -------
    dict
        Keys 'r', 'overhead', 'availability', 'ttt_over_t0' (arrays over r).
    """
    from spare_lib import theory
    rs = np.asarray(list(r_values), dtype=np.int64)
    m, ts, tr = config.system_mtbf_s, config.checkpoint_s, config.restart_s
    mu = np.asarray(theory.mu_closed(N, rs), dtype=float)
    return {"r": rs,
            "overhead": np.asarray(theory.overhead_mean(N, rs), dtype=float),
            "availability": np.asarray(theory.availability_opt(ts, mu * m, tr), dtype=float),
            "ttt_over_t0": np.asarray(theory.ttt_normalized(N, rs, m, ts, tr), dtype=float)}


#: The paper's main table (SPEC §8): optimum per N.
PAPER_MAIN_TABLE: dict[int, dict[str, float]] = {
    200: {"spare_ttt": 2.92, "spare_r": 9, "spare_avail": 0.8700,
          "rep_ttt": 6.07, "rep_r": 3, "rep_avail": 0.6174, "gain": 0.519},
    600: {"spare_ttt": 2.49, "spare_r": 8, "spare_avail": 0.9390,
          "rep_ttt": 4.27, "rep_r": 3, "rep_avail": 0.7989, "gain": 0.417},
    1000: {"spare_ttt": 2.34, "spare_r": 9, "spare_avail": 0.9654,
           "rep_ttt": 3.88, "rep_r": 3, "rep_avail": 0.8441, "gain": 0.396},
}


_METRICS = ("ttt_over_t0", "availability", "overhead", "patch_overhead", "phase0_share",
            "restart_share", "full_restarts")


def results_frame(results: Sequence[SimResult]) -> Any:
    """One row per run (:meth:`SimResult.as_dict`), as a pandas DataFrame."""
    import pandas as pd
    return pd.DataFrame([r.as_dict() for r in results])


def simulate_points(points: Sequence[dict[str, Any]], config_for: Any, failure_seeds: Sequence[int],
                    seed: int, workers: int = 2, progress: bool = False,
                    max_wall_t0: float = 50.0) -> Any:
    """Simulate every point once per failure seed (common random numbers across the points).

    Parameters
    ----------
    points : sequence of dict
        Each with method, N, r and C (committed steps between checkpoints) and whatever
        ``config_for`` reads.
    config_for : callable
        Point -> its :class:`~spare_lib.cluster.config.ClusterConfig`.
    failure_seeds : sequence of int
        One run per seed and point (``simulate(failure_seed=...)``), the same for every point.
    seed : int
        Root of the runs' other streams (:func:`~spare_lib.cluster.runs.simulate.simulate_many`).
    workers, progress
        As for :func:`~spare_lib.cluster.runs.simulate.simulate_many`.
    max_wall_t0 : float
        A run stops at this many T0 (``completed`` False).

    Returns
    -------
    DataFrame
        One row per run: the point's keys, ``trial``, ttt_over_t0, availability, overhead,
        full_restarts, dropped_sample_fraction and completed.
    """
    import pandas as pd
    tasks, meta = [], []
    for p in points:
        cfg = config_for(p)
        for trial, fseed in enumerate(failure_seeds):
            tasks.append({"method": p["method"], "N": int(p["N"]), "r": int(p["r"]),
                          "ckpt_steps": int(p["C"]), "config": cfg, "failure_seed": int(fseed),
                          "max_wall_s": max_wall_t0 * cfg.t0_s()})
            meta.append({**p, "trial": trial})
    res = simulate_many(tasks, seed=seed, workers=workers, progress=progress)
    return pd.DataFrame([{**m, "ttt_over_t0": x.ttt_over_t0, "availability": x.availability,
                          "overhead": x.overhead, "full_restarts": x.full_restarts,
                          "dropped_sample_fraction": x.dropped_sample_fraction,
                          "completed": x.completed} for m, x in zip(meta, res, strict=True)])


def summarize_runs(runs: Any) -> Any:
    """Mean, min, max and count over trials of each metric per (method, N, r, ckpt_steps).

    Parameters
    ----------
    runs : DataFrame
        From :func:`results_frame`.

    Returns
    -------
    DataFrame
        Columns ``<metric>`` (mean), ``<metric>_min``, ``<metric>_max``, ``<metric>_std`` and
        ``trials``, for metric in ttt_over_t0, availability, overhead, patch_overhead,
        phase0_share, restart_share, full_restarts.
    """
    df = runs.copy()
    df["ckpt_steps"] = df["ckpt_steps"].fillna(0).astype(int)
    g = df.groupby(["method", "N", "r", "ckpt_steps"], sort=True)
    out = g[list(_METRICS)].mean()
    for suffix, fn in (("min", "min"), ("max", "max"), ("std", "std")):
        part = g[list(_METRICS)].agg(fn)
        part.columns = [f"{c}_{suffix}" for c in part.columns]
        out = out.join(part)
    out["trials"] = g.size()
    return out.reset_index()


def main_table(summary: Any) -> Any:
    """Optimum per N of SPARe+CKPT and Rep+CKPT (lowest mean TTT/T0 over r) beside the paper.

    Returns
    -------
    DataFrame
        One row per N: simulated spare_ttt, spare_r, spare_avail, rep_ttt, rep_r, rep_avail,
        gain = 1 − spare_ttt/rep_ttt, the spread (min–max over trials) of both optima, the
        trial count and the paper's values (``paper_*``).
    """
    import pandas as pd
    rows = []
    for N in sorted(summary["N"].unique()):
        row: dict[str, Any] = {"N": int(N)}
        for m in ("spare", "rep"):
            sub = summary[(summary.N == N) & (summary.method == m)]
            if sub.empty:
                continue
            best = sub.loc[sub["ttt_over_t0"].idxmin()]
            row[f"{m}_ttt"] = best["ttt_over_t0"]
            row[f"{m}_ttt_min"] = best["ttt_over_t0_min"]
            row[f"{m}_ttt_max"] = best["ttt_over_t0_max"]
            row[f"{m}_r"] = int(best["r"])
            row[f"{m}_avail"] = best["availability"]
            row[f"{m}_trials"] = int(best["trials"])
        if "spare_ttt" in row and "rep_ttt" in row:
            row["gain"] = 1.0 - row["spare_ttt"] / row["rep_ttt"]
        for k, v in PAPER_MAIN_TABLE.get(int(N), {}).items():
            row[f"paper_{k}"] = v
        rows.append(row)
    return pd.DataFrame(rows)
