"""Figures of notebook 80 (SPARe against the recovery strategies users choose): TTT/T0 of every
strategy along one knob of the cluster, SPARe+CKPT against every other method in the closing
table (paired intervals), the published calibration points, the repair theory.

The builders only draw: the numbers come from
:mod:`spare_lib.cluster.planning.strategies` (:func:`~spare_lib.cluster.planning.strategies.summarize_sweep`,
:func:`~spare_lib.cluster.planning.strategies.versus`). Methods, their order and labels come from
the method registry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spare_lib.figures.style import COLUMN_IN, PAGE_IN
from spare_lib.registry.methods import METHODS

#: One colour, marker and line style per strategy (colour-blind safe, distinct in grayscale); every
#: marker can be drawn filled (finished runs) or open (runs stopped at the wall cap).
STRATEGY_STYLE: dict[str, dict[str, str]] = {
    "spare": {"color": "#0072B2", "marker": "o", "linestyle": "-"},
    "rep": {"color": "#D55E00", "marker": "^", "linestyle": "-"},
    "ckpt": {"color": "#000000", "marker": "X", "linestyle": ":"},
    "spare+repair": {"color": "#56B4E9", "marker": "s", "linestyle": "--"},
    "elastic-drop": {"color": "#009E73", "marker": "D", "linestyle": "-."},
    "elastic-rebalance": {"color": "#CC79A7", "marker": "v", "linestyle": "--"},
    "spare-b": {"color": "#E69F00", "marker": "o", "linestyle": "-"},
    "spare-b+repair": {"color": "#F0E442", "marker": "s", "linestyle": "--"},
    "spare-b+drop": {"color": "#999999", "marker": "D", "linestyle": "-."},
}


def make_strategy_sweep(summary: Any, xlabel: str, x_scale: float = 1.0, log_x: bool = True,
                        ylim: tuple[float, float] | None = (0.9, 30.0), row: str | None = None) -> Any:
    """TTT/T0 of every strategy against one knob, one panel per N (100k and 600k GPUs), and one
    row of panels per value of the column ``row`` if given (e.g. the rejoin assumption).

    Parameters
    ----------
    summary : DataFrame
        From :func:`~spare_lib.cluster.planning.strategies.summarize_sweep`.
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
        for s in METHODS:
            sub = part[(part.N == N) & (part.strategy == s)].sort_values("value")
            if sub.empty:
                continue
            sty = STRATEGY_STYLE[s]
            x = sub["value"].to_numpy(dtype=float) / x_scale
            y = sub["ttt_over_t0"].to_numpy(dtype=float)
            fin = sub["finished"].to_numpy(dtype=bool)
            ax.plot(x, y, color=sty["color"], linestyle=sty["linestyle"], label=METHODS[s].label)
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


def make_versus(rows: Any, ref_label: str = "SPARe+CKPT", panel: str = "rejoin",
                group: str = "stall_s", group_label: str = "stall {:g} s") -> Any:
    """The closing table as intervals: TTT(ref)/TTT(other) for every other method, one panel per
    value of ``panel`` (e.g. the rejoin assumption), one block of rows per value of ``group``
    (e.g. the stall).

    Parameters
    ----------
    rows : DataFrame
        :func:`~spare_lib.cluster.planning.strategies.versus` rows with the ``panel`` and
        ``group`` columns added: ``method``, ``label``, ``ratio``, ``ratio_ci_low``,
        ``ratio_ci_high``, ``tied``, ``finished``.
    ref_label : str
        The reference method's name, for the axis.
    panel, group : str
        Columns; ``group_label`` formats a group's value.

    Returns
    -------
    matplotlib.figure.Figure
        Filled markers: the interval excludes 1; open: tied (the interval covers 1) or no
        interval; a triangle at the left edge: the other method's runs stopped at the wall cap
        (its TTT is a lower bound, so the ratio is an upper bound).
    """
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(rows[panel]))
    groups = list(dict.fromkeys(rows[group]))
    methods = [m for m in METHODS if m in set(rows["method"])]
    n_rows = len(groups) * (len(methods) + 1)
    fig, axes = plt.subplots(1, len(panels), figsize=(PAGE_IN, 0.9 + 0.13 * n_rows),
                             squeeze=False, sharey=True, sharex=True)
    lo_x, hi_x = 0.1, 10.0
    for ax, pv in zip(axes[0], panels, strict=True):
        ticks, labels = [], []
        for gi, gv in enumerate(groups):
            sub = rows[(rows[panel] == pv) & (rows[group] == gv)].set_index("method")
            base = gi * (len(methods) + 1)
            ticks.append(base + (len(methods) - 1) / 2)
            labels.append(group_label.format(gv))
            for j, m in enumerate(methods):
                if m not in sub.index:
                    continue
                x = sub.loc[m]
                y = base + j
                sty = STRATEGY_STYLE[m]
                ratio = float(np.clip(x["ratio"], lo_x, hi_x))
                label = METHODS[m].label if gi == 0 else None
                if not bool(x["finished"]):
                    ax.scatter([ratio], [y], marker="<", color=sty["color"], s=14, zorder=3,
                               label=label)
                    continue
                lo, hi = float(x["ratio_ci_low"]), float(x["ratio_ci_high"])
                if lo == lo:
                    ax.plot([lo, hi], [y, y], color=sty["color"], linewidth=1.2)
                filled = lo == lo and not bool(x["tied"])
                ax.scatter([ratio], [y], marker=sty["marker"], s=14, zorder=3,
                           facecolors=sty["color"] if filled else "white",
                           edgecolors=sty["color"], label=label)
        ax.axvline(1.0, color="#777777", linewidth=0.7, linestyle=":")
        ax.set_xscale("log")
        ax.set_xlim(lo_x, hi_x)
        ax.set_title(str(pv))
        ax.set_xlabel(f"TTT({ref_label}) / TTT(other)")
        ax.set_yticks(ticks)
        ax.set_yticklabels(labels)
    axes[0, 0].invert_yaxis()  # shared: once for every panel
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=6, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
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
           "make_versus"]
