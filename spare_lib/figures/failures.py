"""Figures of notebook 70 (real failure logs): inter-arrival fits, simultaneous-fault sizes, per-node
rate dispersion, Titan GPU survival, and Figs. 6–7 redone with trace-driven failures.

Builders take the library's tables and results (:mod:`spare_lib.failures` traces and fits, the
:class:`~spare_lib.cluster.planning.PlanResult` of :func:`~spare_lib.cluster.planning.run_plan`
per failure model) and return a Figure; they compute nothing but what they draw (histograms,
Kaplan–Meier curves via ``scipy.stats.ecdf``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spare_lib.failures import DISTS, FaultTrace, fault_instants
from spare_lib.figures.style import COLUMN_IN, METHOD_STYLE, PAGE_IN

#: Colours of the fitted laws (colour-blind safe, distinct line styles for grayscale).
LAW_STYLE = {"exponential": ("#000000", ":"), "weibull": ("#0072B2", "-"),
             "lognormal": ("#009E73", "--"), "gamma": ("#CC79A7", "-.")}
_DAY = 86400.0
_YEAR = 365.25 * _DAY


def _law(dist: str, shape: float, scale: float) -> Any:
    law, has_shape = DISTS[dist]
    return law(shape, scale=scale) if has_shape else law(scale=scale)


def make_interarrival_fits(traces: Mapping[str, FaultTrace], fits: Mapping[str, Any],
                           tolerance_s: float = 1.0) -> Any:
    """Histogram of the system-level gaps between fault instants (log axis) with the fitted laws.

    Parameters
    ----------
    traces : mapping name -> FaultTrace
        One panel each.
    fits : mapping name -> DataFrame
        :func:`~spare_lib.failures.fit_interarrival` (``level='system'``) of each trace: dist,
        shape, scale, aic.
    tolerance_s : float
        Instants as in the fits.

    Returns
    -------
    matplotlib.figure.Figure
        Density of log10(gap); each law's density transformed to that axis,
        f(x)·x·ln 10, with its Weibull shape k in the legend.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(traces), figsize=(PAGE_IN, 2.4), squeeze=False)
    for ax, (name, tr) in zip(axes[0], traces.items(), strict=True):
        gaps = np.diff(fault_instants(tr, tolerance_s)["time_s"].to_numpy())
        gaps = gaps[gaps > 0] / 3600.0
        u = np.log10(gaps)
        ax.hist(u, bins=40, density=True, color="0.8", edgecolor="0.6", linewidth=0.4)
        grid = np.linspace(u.min() - 0.3, u.max() + 0.3, 300)
        x_s = 10.0 ** grid * 3600.0
        best = fits[name]["aic"].idxmin()
        for i, row in fits[name].iterrows():
            colour, ls = LAW_STYLE[row["dist"]]
            dens = _law(row["dist"], row["shape"], row["scale"]).pdf(x_s) * x_s * np.log(10.0)
            lab = row["dist"] + (f" k={row['shape']:.2f}" if row["dist"] == "weibull" else "")
            ax.plot(grid, dens, color=colour, linestyle=ls, label=lab + (" *" if i == best else ""))
        ax.set_title(f"{name}: {len(gaps)} gaps", fontsize="small")
        ax.set_xlabel("log10(gap between instants / h)")
        ax.legend(fontsize="x-small", loc="upper left")
    axes[0, 0].set_ylabel("density")
    fig.tight_layout()
    return fig


def make_instant_sizes(traces: Mapping[str, FaultTrace], tolerance_s: float = 1.0) -> Any:
    """Faults per instant (simultaneous multi-node faults), one bar group per trace, log count axis."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.3))
    colours = ("#0072B2", "#D55E00", "#009E73", "#CC79A7")
    width = 0.8 / max(1, len(traces))
    for i, (name, tr) in enumerate(traces.items()):
        sizes = fault_instants(tr, tolerance_s)["size"].value_counts().sort_index()
        share = 100.0 * (1.0 - sizes.iloc[0] / sizes.sum()) if sizes.index[0] == 1 else 100.0
        ax.bar(np.log2(sizes.index.to_numpy()) + (i - (len(traces) - 1) / 2) * width, sizes.to_numpy(),
               width=width, color=colours[i % 4], label=f"{name} ({share:.1f} % multi-node)")
    ax.set_yscale("log")
    ticks = [1, 2, 4, 8, 16, 32, 64]
    ax.set_xticks(np.log2(ticks), [str(t) for t in ticks])
    ax.set_xlabel("faults in one instant (log2 axis)")
    ax.set_ylabel("instants")
    ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def make_rate_dispersion(traces: Mapping[str, FaultTrace]) -> Any:
    """Share of nodes with at least c faults against c, beside equal-rate Poisson nodes.

    Counts include the nodes that never failed; the legend gives var/mean of the counts (1 for
    equal-rate Poisson nodes).
    """
    import matplotlib.pyplot as plt
    from scipy import stats

    fig, axes = plt.subplots(1, len(traces), figsize=(PAGE_IN, 2.3), squeeze=False)
    for ax, (name, tr) in zip(axes[0], traces.items(), strict=True):
        per = tr.faults["node"].value_counts().to_numpy()
        counts = np.r_[per, np.zeros(tr.n_nodes - per.size, dtype=np.int64)]
        c = np.arange(0, counts.max() + 2)
        emp = np.array([(counts >= k).mean() for k in c])
        m = counts.mean()
        ax.step(c, emp, where="post", color="#D55E00",
                label=f"observed (var/mean {counts.var(ddof=1) / m:.1f})")
        ax.step(c, stats.poisson(m).sf(c - 1), where="post", color="k", linestyle=":",
                label=f"Poisson, mean {m:.2f}")
        ax.set_yscale("log")
        ax.set_ylim(0.5 / tr.n_nodes, 1.5)
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(0, c.max() * 1.1)
        ax.set_title(f"{name}: {tr.n_nodes} nodes", fontsize="small")
        ax.set_xlabel("faults per node c")
        ax.legend(fontsize="x-small")
    axes[0, 0].set_ylabel("share of nodes with ≥ c faults")
    fig.tight_layout()
    return fig


def make_titan_survival(lifetimes: Any, fits: Any, paper_shape: float = 0.78) -> Any:
    """Kaplan–Meier survival of Titan GPU lifetimes (censored) with the censored Weibull fits.

    Parameters
    ----------
    lifetimes : DataFrame
        :func:`~spare_lib.failures.load_lifetimes`: time_s, dead, batch.
    fits : DataFrame
        :func:`~spare_lib.failures.fit_lifetimes` (``by='batch'``): group, shape, scale, shape_lo,
        shape_hi.
    paper_shape : float
        Drawn as a Weibull with this shape and the all-GPU fit's mean, for contrast.
    """
    import matplotlib.pyplot as plt
    from scipy import special, stats

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.6))
    colours = {"all": "#000000", "old": "#D55E00", "new": "#0072B2"}
    t = np.linspace(0.0, lifetimes["time_s"].max(), 300)
    for _, row in fits.iterrows():
        g = row["group"]
        sub = lifetimes if g == "all" else lifetimes[lifetimes["batch"] == g]
        data = stats.CensoredData(uncensored=sub["time_s"][sub["dead"]].to_numpy(),
                                  right=sub["time_s"][~sub["dead"]].to_numpy())
        km = stats.ecdf(data).sf
        col = colours.get(g, "#009E73")
        ax.step(km.quantiles / _YEAR, km.probabilities, where="post", color=col, linewidth=1.0,
                label=f"{g} ({len(sub):,} GPUs) Kaplan–Meier")
        ci = "" if row["shape_lo"] != row["shape_lo"] else f" [{row['shape_lo']:.2f}, {row['shape_hi']:.2f}]"
        ax.plot(t / _YEAR, stats.weibull_min(row["shape"], scale=row["scale"]).sf(t), color=col,
                linestyle="--", linewidth=0.9, label=f"Weibull k = {row['shape']:.2f}{ci}")
    allfit = fits[fits["group"] == "all"].iloc[0]
    mean = allfit["scale"] * special.gamma(1.0 + 1.0 / allfit["shape"])
    scale = mean / special.gamma(1.0 + 1.0 / paper_shape)
    ax.plot(t / _YEAR, stats.weibull_min(paper_shape, scale=scale).sf(t), color="0.5", linestyle=":",
            label=f"paper's k = {paper_shape} (same mean)")
    ax.set_xlabel("time in service (years)")
    ax.set_ylabel("surviving GPUs")
    ax.set_ylim(0.0, 1.02)
    ax.legend(fontsize="xx-small", loc="lower left")
    fig.tight_layout()
    return fig


def make_trace_vs_r(plans: Mapping[str, Any], metric: str, ylabel: str) -> Any:
    """Figs. 6/7 redone: ``metric`` against r, one panel per failure model, one curve per method.

    Parameters
    ----------
    plans : mapping failure model -> PlanResult
        Simulated plans (:func:`~spare_lib.cluster.planning.run_plan` with ``trials``), one
        panel each in the mapping's order. A panel draws the stage-1 points
        (:class:`~spare_lib.cluster.planning.results.SimulatedPoint`: every candidate r at its
        checkpoint interval C0) of each method with redundancy (SPARe+CKPT, Rep+CKPT), and a star
        at each method's choice of r (:attr:`PlanResult.choices`).
    metric : {'ttt', 'availability'}
        'ttt': mean TTT/T0 over the trials with ±2 standard errors, log axis; 'availability':
        mean availability in % (a SimulatedPoint carries the per-trial TTT/T0 only, so no
        error bars).
    ylabel : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    if metric not in ("ttt", "availability"):
        raise ValueError(f"metric must be 'ttt' or 'availability', got {metric!r}")
    if not plans:
        raise ValueError("plans must hold at least one simulated plan, got none")
    fig, axes = plt.subplots(1, len(plans), figsize=(PAGE_IN, 2.5), squeeze=False, sharey=True)
    for ax, (model, res) in zip(axes[0], plans.items(), strict=True):
        if not res.points:
            raise ValueError(f"plans must be simulated (run_plan with trials); {model!r} has no "
                             "simulated points")
        for name in dict.fromkeys(p.method for p in res.points):
            pts = sorted((p for p in res.points if p.method == name and p.stage == 1 and p.r > 1),
                         key=lambda p: p.r)
            if not pts:
                continue
            sty = METHOD_STYLE.get(pts[0].label, {"color": "#009E73", "marker": "d",
                                                  "linestyle": "-"})
            r = [p.r for p in pts]
            if metric == "ttt":
                y = np.array([p.ttt_mean for p in pts])
                err = 2.0 * np.nan_to_num(np.array([p.ttt_se for p in pts]))
            else:
                y, err = 100.0 * np.array([p.availability_mean for p in pts]), None
            ax.errorbar(r, y, yerr=err, color=sty["color"], marker=sty["marker"], markersize=3,
                        linestyle=sty["linestyle"], capsize=1.5, label=pts[0].label)
            best = res.choices[name].r if name in res.choices else None
            star = [i for i, p in enumerate(pts) if p.r == best]
            ax.plot([r[i] for i in star], [y[i] for i in star], marker="*", markersize=11,
                    color=sty["color"], markeredgecolor="k", linestyle="none")
        ax.set_title(model, fontsize="small")
        ax.set_xlabel("redundancy r")
        if metric == "ttt":
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_yticks([2, 3, 5, 10, 20])
    if metric == "availability":
        axes[0, 0].set_ylim(0, 100)
    axes[0, 0].set_ylabel(ylabel)
    axes[0, 0].legend(fontsize="x-small", loc="best")
    fig.tight_layout()
    return fig
