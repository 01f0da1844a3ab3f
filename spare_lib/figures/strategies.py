"""Figures of notebook 80 (SPARe against the recovery strategies users choose): TTT/T0 of every
strategy along one knob of the cluster, the published calibration points, the repair theory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spare_lib.cluster.planning.strategies import STRATEGIES, STRATEGY_LABELS
from spare_lib.figures.style import COLUMN_IN, PAGE_IN

#: One colour, marker and line style per strategy (colour-blind safe, distinct in grayscale).
STRATEGY_STYLE: dict[str, dict[str, str]] = {
    "spare": {"color": "#0072B2", "marker": "o", "linestyle": "-"},
    "rep": {"color": "#D55E00", "marker": "^", "linestyle": "-"},
    "ckpt": {"color": "#000000", "marker": "x", "linestyle": ":"},
    "spare+repair": {"color": "#56B4E9", "marker": "s", "linestyle": "--"},
    "elastic-drop": {"color": "#009E73", "marker": "D", "linestyle": "-."},
    "elastic-rebalance": {"color": "#CC79A7", "marker": "v", "linestyle": "--"},
}


def summarize_sweep(runs: Any) -> Any:
    """Mean, min and max of TTT/T0 (and the other metrics' means) per (N, value, strategy) of
    :func:`~spare_lib.cluster.planning.strategies.sweep_strategies` frames (an ``N`` column added)."""
    g = runs.groupby(["N", "value", "strategy"], sort=False)
    out = g.agg(label=("label", "first"), r=("r", "first"), ttt_over_t0=("ttt_over_t0", "mean"),
                ttt_min=("ttt_over_t0", "min"), ttt_max=("ttt_over_t0", "max"),
                availability=("availability", "mean"), overhead=("overhead", "mean"),
                dropped_sample_fraction=("dropped_sample_fraction", "mean"),
                stall_share=("stall_share", "mean"), finished=("completed", "all"),
                trials=("trial", "count")).reset_index()
    return out


def make_strategy_sweep(summary: Any, xlabel: str, x_scale: float = 1.0, log_x: bool = True,
                        ylim: tuple[float, float] | None = (0.9, 30.0), row: str | None = None) -> Any:
    """TTT/T0 of every strategy against one knob, one panel per N (100k and 600k GPUs), and one
    row of panels per value of the column ``row`` if given (e.g. the rejoin assumption).

    Parameters
    ----------
    summary : DataFrame
        From :func:`summarize_sweep`.
    xlabel : str
        Axis label (with its unit).
    x_scale : float
        ``value`` is divided by it (e.g. 60 for seconds -> minutes).
    log_x : bool
        Log-scaled x axis.
    ylim : (float, float) or None
        TTT/T0 range (log scale); runs stopped at the wall-clock cap are drawn as open markers
        (their TTT/T0 is a lower bound) and clipped at the top.
    row : str or None
        Column of ``summary`` whose values (in order of appearance) each get a row of panels,
        named in the panel titles; None: one row.

    Returns
    -------
    matplotlib.figure.Figure
        Lines = mean over trials, shaded band = min–max over trials.
    """
    import matplotlib.pyplot as plt

    Ns = sorted(summary["N"].unique())
    rows = [None] if row is None else list(dict.fromkeys(summary[row]))
    fig, axes = plt.subplots(len(rows), len(Ns), figsize=(PAGE_IN, 2.6 * len(rows)), squeeze=False,
                             sharey=True)
    for ax, (rv, N) in zip(axes.flat, [(rv, N) for rv in rows for N in Ns], strict=True):
        part = summary if rv is None else summary[summary[row] == rv]
        for s in STRATEGIES:
            sub = part[(part.N == N) & (part.strategy == s)].sort_values("value")
            if sub.empty:
                continue
            sty = STRATEGY_STYLE[s]
            x = sub["value"].to_numpy(dtype=float) / x_scale
            y = sub["ttt_over_t0"].to_numpy(dtype=float)
            fin = sub["finished"].to_numpy(dtype=bool)
            ax.plot(x, y, color=sty["color"], linestyle=sty["linestyle"], label=STRATEGY_LABELS[s])
            ax.scatter(x[fin], y[fin], color=sty["color"], marker=sty["marker"], s=12, zorder=3)
            if (~fin).any():
                ax.scatter(x[~fin], y[~fin], facecolors="none", edgecolors=sty["color"],
                           marker=sty["marker"], s=12, zorder=3)
            ax.fill_between(x, sub["ttt_min"], sub["ttt_max"], color=sty["color"], alpha=0.15,
                            linewidth=0)
        ax.set_title(f"N = {N} groups" + ("" if rv is None else f", {rv}"))
        ax.set_xlabel(xlabel)
        if log_x:
            ax.set_xscale("log")
        ax.set_yscale("log")
        if ylim is not None:
            ax.set_ylim(*ylim)
    for ax in axes[:, 0]:
        ax.set_ylabel("time-to-train / T0")
    from matplotlib.ticker import NullFormatter, ScalarFormatter
    for ax in axes.flat:
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_yticks([1, 2, 3, 5, 10, 20])
    axes[0, -1].legend(fontsize=6, loc="upper left", ncol=2)
    fig.tight_layout()
    return fig


def make_calibration(table: Any) -> Any:
    """Published effective training time against the model's, one bar pair per calibration row.

    Parameters
    ----------
    table : DataFrame
        Columns ``case`` (short name), ``published`` and ``model`` (fractions; ``published`` may
        be a lower bound, flagged by a boolean ``published_is_bound``).
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_IN, max(2.4, 0.5 + 0.3 * len(table))))
    y = np.arange(len(table))
    pub = 100 * table["published"].to_numpy(dtype=float)
    mod = 100 * table["model"].to_numpy(dtype=float)
    ax.barh(y - 0.2, pub, height=0.38, color="#999999", label="published")
    ax.barh(y + 0.2, mod, height=0.38, color="#0072B2", label="model (simulated)")
    bound = table.get("published_is_bound")
    for i, (p, m) in enumerate(zip(pub, mod, strict=True)):
        tag = ">" if bound is not None and bool(bound.iloc[i]) else ""
        ax.text(p + 1, i - 0.2, f"{tag}{p:.0f} %", va="center", fontsize=6)
        ax.text(m + 1, i + 0.2, f"{m:.0f} %", va="center", fontsize=6)
    ax.set_yticks(y)
    ax.set_yticklabels(table["case"], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlim(0, 115)
    ax.set_xlabel("effective training time (%)")
    ax.legend(fontsize=6, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def make_repair_theory(table: Any) -> Any:
    """Mean time between wipe-outs of SPARe+repair: simulated (±2 s.e.) against the birth–death
    chain (deterministic-repair correction) and the plain exponential-repair chain.

    Parameters
    ----------
    table : DataFrame
        Columns ``case``, ``sim_h``, ``sim_se_h``, ``theory_h``, ``theory_exp_h``.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.4))
    x = np.arange(len(table))
    ax.errorbar(x, table["sim_h"], yerr=2 * table["sim_se_h"], fmt="o", color="#000000",
                capsize=2, label="simulated (±2 s.e.)")
    ax.scatter(x, table["theory_h"], marker="_", s=120, color="#0072B2",
               label="chain, deterministic repair", zorder=3)
    ax.scatter(x, table["theory_exp_h"], marker="x", s=20, color="#D55E00",
               label="chain, exponential repair", zorder=3)
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels(table["case"], fontsize=5, rotation=20)
    ax.set_ylabel("time between wipe-outs (h)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


__all__ = ["STRATEGY_STYLE", "make_calibration", "make_repair_theory", "make_strategy_sweep",
           "summarize_sweep"]
