"""Result tables of notebooks 50 and 60: runs to a frame, summaries per (method, N, r), the main table,
and the theory lines of Figs. 6–8.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.runs.simulate import SimResult


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
