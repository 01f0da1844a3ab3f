"""Figures of notebook 55: the predictive time-to-train model against the simulator."""

from __future__ import annotations

from typing import Any

import numpy as np

from spare_lib.figures.style import METHOD_STYLE, PAGE_IN

_LABEL = {"spare": "SPARe+CKPT", "rep": "Rep+CKPT"}


def make_predict_vs_sim(points: Any) -> Any:
    """TTT/T0 (top) and availability (bottom) against r on the paper's grid, one column per N.

    ``points``: :func:`spare_lib.theory.predict.validation.point_table` of the paper grid.
    Markers: simulation (mean ± 2 s.e.); solid lines: the model; dotted: Eq. 7 (top) and Eq. 2's
    A* (bottom).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    Ns = sorted(points["N"].unique())
    fig, axes = plt.subplots(2, len(Ns), figsize=(PAGE_IN, 4.2), squeeze=False, sharex="col")
    for j, N in enumerate(Ns):
        for m in ("spare", "rep"):
            sub = points[(points.N == N) & (points.method == m)].sort_values("r")
            if sub.empty:
                continue
            sty = METHOD_STYLE[_LABEL[m]]
            ax = axes[0, j]
            ax.errorbar(sub.r, sub.sim_ttt, yerr=2 * sub.sim_ttt_se, color=sty["color"],
                        marker=sty["marker"], linestyle="none", markersize=3, capsize=1.5,
                        label=f"{_LABEL[m]} sim.")
            ax.plot(sub.r, sub.model_ttt, color=sty["color"], linestyle="-",
                    label=f"{_LABEL[m]} model")
            ax.plot(sub.r, sub.eq7_ttt, color=sty["color"], linestyle=":")
            ax = axes[1, j]
            ax.plot(sub.r, 100 * sub.sim_avail, color=sty["color"], marker=sty["marker"],
                    linestyle="none", markersize=3)
            ax.plot(sub.r, 100 * sub.model_avail, color=sty["color"], linestyle="-")
            ax.plot(sub.r, 100 * sub.eq2_avail, color=sty["color"], linestyle=":")
        axes[0, j].set_title(f"N = {N}")
        axes[1, j].set_xlabel("redundancy r")
        ax = axes[0, j]
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_yticks([2, 3, 5, 10, 20])
    axes[0, 0].set_ylabel("time-to-train / T0")
    axes[1, 0].set_ylabel("availability (%)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    keep = {lab: h for h, lab in zip(handles, labels, strict=True)}
    (eq,) = axes[0, -1].plot([], [], color="#444444", linestyle=":")
    keep["Eq. 7 (top), Eq. 2 A* (bottom)"] = eq
    axes[0, -1].legend(keep.values(), keep.keys(), loc="upper right", fontsize="x-small")
    fig.tight_layout()
    return fig


def make_predict_errors(tables: dict[str, Any]) -> Any:
    """Predicted against simulated TTT/T0 for every grid point: the model and Eq. 7.

    ``tables``: grid name -> point table. Left: scatter on log axes with y = x; right: the
    distribution of |Δ| (%) of the model and of Eq. 7 per grid (box plots).
    """
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(PAGE_IN, 2.8))
    markers = ["o", "s", "D", "^"]
    lo, hi = np.inf, 0.0
    for i, (name, df) in enumerate(tables.items()):
        for m in ("spare", "rep"):
            sub = df[df.method == m]
            sty = METHOD_STYLE[_LABEL[m]]
            ax.scatter(sub.sim_ttt, sub.model_ttt, s=8, marker=markers[i % 4],
                       color=sty["color"], label=f"model, {_LABEL[m]}, {name}")
            ax.scatter(sub.sim_ttt, sub.eq7_ttt, s=8, marker=markers[i % 4], facecolors="none",
                       edgecolors="#999999", linewidths=0.5)
        lo = min(lo, df.sim_ttt.min(), df.eq7_ttt.min())
        hi = max(hi, df.sim_ttt.max(), df.model_ttt.max())
    ax.plot([lo, hi], [lo, hi], color="k", linewidth=0.6)
    ax.scatter([], [], s=8, facecolors="none", edgecolors="#999999", label="Eq. 7 (open)")
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ticks = [t for t in (2, 3, 5, 10, 20, 30, 50) if lo * 0.9 <= t <= hi * 1.1]
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())
        axis.set_ticks(ticks)
    ax.set_xlabel("simulated TTT / T0")
    ax.set_ylabel("predicted TTT / T0")
    ax.legend(fontsize="xx-small", loc="upper left")
    data, labels = [], []
    for name, df in tables.items():
        data += [df.err_model_pct.abs().to_numpy(), df.err_eq7_pct.abs().to_numpy()]
        labels += [f"model\n{name}", f"Eq. 7\n{name}"]
    bx.boxplot(data, showfliers=True, flierprops={"markersize": 2})
    bx.set_xticks(range(1, len(labels) + 1), labels, fontsize="x-small")
    bx.set_yscale("symlog", linthresh=1.0)
    bx.set_ylim(0.0, None)
    bx.yaxis.set_major_formatter(ScalarFormatter())
    bx.set_yticks([0, 1, 3, 10, 30, 100])
    bx.set_ylabel("|error| vs simulation (%)")
    fig.tight_layout()
    return fig


def make_eq7_gap_waterfall(waterfalls: dict[str, Any], sim: dict[str, float]) -> Any:
    """Waterfall from Eq. 7 to the simulation at the paper's optima, one panel per case.

    ``waterfalls``: case label -> :func:`~spare_lib.theory.predict.validation.eq7_waterfall`
    table; ``sim``: case label -> simulated mean TTT/T0 (the last bar, with the residual).
    """
    import matplotlib.pyplot as plt

    n = len(waterfalls)
    fig, axes = plt.subplots(1, n, figsize=(PAGE_IN, 2.9), squeeze=False, sharey=False)
    for ax, (case, wf) in zip(axes[0], waterfalls.items(), strict=True):
        labels = list(wf.step) + ["simulation"]
        vals = list(wf.ttt_over_t0) + [sim[case]]
        base = [0.0] + vals[:-2] + [0.0]
        height = [vals[0]] + [vals[i] - vals[i - 1] for i in range(1, len(vals) - 1)] + \
            [vals[-1]]
        colors = ["#777777"] + ["#009E73" if h >= 0 else "#CC79A7" for h in height[1:-1]] + \
            ["#0072B2"]
        x = np.arange(len(labels))
        ax.bar(x, height, bottom=base, color=colors, width=0.7)
        for i in range(len(vals) - 1):
            ax.plot([i - 0.35, i + 1.35], [vals[i], vals[i]], color="k", linewidth=0.4)
        ax.set_xticks(x, labels, rotation=60, ha="right", fontsize="x-small")
        ax.set_title(case, fontsize="small")
        lo = min(vals) * 0.85
        ax.set_ylim(lo, max(vals) * 1.05)
    axes[0, 0].set_ylabel("time-to-train / T0")
    fig.tight_layout()
    return fig


def make_r_c_star(curves: Any, sims: Any) -> Any:
    """r* and C* from the model against N (left) and against the system MTBF m (right).

    ``curves``: DataFrame with columns sweep ('N' or 'm'), x, method, r_star, C_star (the
    model); ``sims``: DataFrame with the same columns from simulation (best simulated r, and
    the C it ran at), drawn as markers with their tie range (r_lo, r_hi) when given.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(PAGE_IN, 4.2), sharex="col")
    for j, sweep in enumerate(("N", "m")):
        for m in ("spare", "rep"):
            sty = METHOD_STYLE[_LABEL[m]]
            c = curves[(curves.sweep == sweep) & (curves.method == m)].sort_values("x")
            axes[0, j].step(c.x, c.r_star, where="mid", color=sty["color"], label=_LABEL[m])
            axes[1, j].plot(c.x, c.C_star, color=sty["color"])
            s = sims[(sims.sweep == sweep) & (sims.method == m)]
            if not s.empty:
                yerr = None
                if "r_lo" in s:
                    yerr = np.vstack([s.r_star - s.r_lo, s.r_hi - s.r_star])
                axes[0, j].errorbar(s.x, s.r_star, yerr=yerr, color=sty["color"],
                                    marker=sty["marker"], linestyle="none", markersize=4,
                                    capsize=2, markerfacecolor="white")
                axes[1, j].plot(s.x, s.C_star, color=sty["color"], marker=sty["marker"],
                                linestyle="none", markersize=4, markerfacecolor="white")
        axes[1, j].set_xscale("log")
        axes[1, j].set_yscale("log")
    axes[1, 0].set_xlabel("data-parallel groups N")
    axes[1, 1].set_xlabel("system MTBF m (min)")
    axes[0, 0].set_ylabel("optimal redundancy r*")
    axes[1, 0].set_ylabel("optimal checkpoint interval C* (steps)")
    axes[0, 0].legend(loc="upper left", fontsize="x-small")
    axes[0, 1].plot([], [], marker="o", linestyle="none", color="k", markerfacecolor="white",
                    label="simulated best (tie range)")
    axes[0, 1].legend(loc="upper right", fontsize="x-small")
    fig.tight_layout()
    return fig


__all__ = ["make_eq7_gap_waterfall", "make_predict_errors", "make_predict_vs_sim",
           "make_r_c_star"]
