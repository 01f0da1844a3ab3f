"""Figures of notebooks 50, 60 and 90: Figs. 6–8 against r, the Phase-0 share, the restart regime, the
explore figure.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spare_lib.cluster.planning import LABELS, Plan
from spare_lib.cluster.regime import LLAMA3_GPUS, restart_time_s, system_mtbf_s
from spare_lib.figures.style import COLUMN_IN, METHOD_STYLE, PAGE_IN


def make_cluster_vs_r(summary: Any, theory: dict[int, dict[str, np.ndarray]] | None,
                      metric: str, ylabel: str, theory_label: str = "theory") -> Any:
    """Figs. 6/7/8: ``metric`` against r, one panel per N, SPARe+CKPT and Rep+CKPT.

    Parameters
    ----------
    summary : DataFrame
        From :func:`summarize_runs` (methods 'spare' and 'rep').
    theory : dict N -> {'r': array, metric: array} or None
        Closed-form line (Eq. 7 / Eq. 2 / Eq. 5) drawn for SPARe.
    metric : str
        'ttt_over_t0', 'availability' or 'overhead'.
    ylabel, theory_label : str
        Axis label and legend entry of the theory line.

    Returns
    -------
    matplotlib.figure.Figure
        Markers = mean over trials, error bars = min–max over trials.
    """
    import matplotlib.pyplot as plt

    Ns = sorted(summary["N"].unique())
    fig, axes = plt.subplots(1, len(Ns), figsize=(PAGE_IN, 2.3), squeeze=False)
    for ax, N in zip(axes[0], Ns, strict=True):
        for m, label in (("spare", "SPARe+CKPT"), ("rep", "Rep+CKPT")):
            sub = summary[(summary.N == N) & (summary.method == m)].sort_values("r")
            if sub.empty:
                continue
            y = sub[metric].to_numpy()
            err = np.vstack([y - sub[f"{metric}_min"].to_numpy(),
                             sub[f"{metric}_max"].to_numpy() - y])
            sty = METHOD_STYLE[label]
            ax.errorbar(sub["r"], y, yerr=err, color=sty["color"], marker=sty["marker"],
                        linestyle=sty["linestyle"], capsize=1.5, label=label)
        if theory is not None and N in theory:
            th = theory[N]
            sty = METHOD_STYLE["theory"]
            ax.plot(th["r"], th[metric], color=sty["color"], linestyle=":", label=theory_label)
        ax.set_title(f"N = {N}")
        ax.set_xlabel("redundancy r")
    axes[0, 0].set_ylabel(ylabel)
    if metric == "ttt_over_t0":
        from matplotlib.ticker import NullFormatter, ScalarFormatter
        for ax in axes[0]:  # r = 2 is an order of magnitude above the optimum: log scale
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_yticks([1, 2, 3, 5, 10, 20, 50])
            ax.set_ylim(bottom=1.0)
    axes[0, 0].legend(loc="best")
    fig.tight_layout()
    return fig


def make_phase0_share(summary: Any) -> Any:
    """Share of SPARe's non-fatal failure events settled by RECTLR phase 0, against r."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.3))
    markers = "os^"
    for i, N in enumerate(sorted(summary["N"].unique())):
        sub = summary[(summary.N == N) & (summary.method == "spare")].sort_values("r")
        ax.plot(sub["r"], 100 * sub["phase0_share"], marker=markers[i % 3], label=f"N = {N}")
    ax.set_xlabel("redundancy r")
    ax.set_ylabel("failure events settled\nby phase 0 (%)")
    ax.set_ylim(0, 100)
    ax.legend()
    fig.tight_layout()
    return fig


def make_restart_regime(gpus: np.ndarray, runs: Any) -> Any:
    """Motivation figure: system MTBF, restart time and wall-time share lost to restarts vs #GPUs.

    Parameters
    ----------
    gpus : array
        #GPUs for the model curves.
    runs : DataFrame
        Columns n_gpus, label, restart_share (mean), restart_share_min, restart_share_max.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, axes = plt.subplots(1, 3, figsize=(PAGE_IN, 2.3))
    g = np.asarray(gpus, dtype=float)
    ax = axes[0]
    ax.loglog(g, system_mtbf_s(g) / 60.0, color="k")
    ax.plot([LLAMA3_GPUS], [system_mtbf_s(LLAMA3_GPUS) / 60.0], "o", color="#D55E00",
            label="Llama 3 (16k)")
    ax.plot([600_000], [system_mtbf_s(600_000) / 60.0], "s", color="#0072B2", label="600k")
    ax.set_xlabel("#GPUs")
    ax.set_ylabel("system MTBF (min)")
    ax.legend()
    ax = axes[1]
    ax.semilogx(g, restart_time_s(g) / 60.0, color="k", label="restart R(G)")
    ax.semilogx(g, system_mtbf_s(g) / 60.0, color="k", linestyle=":", label="system MTBF")
    ax.set_ylim(0, max(90.0, float(restart_time_s(g.max()) / 60.0) * 1.05))
    ax.set_xlabel("#GPUs")
    ax.set_ylabel("minutes")
    ax.legend(loc="upper center")
    ax = axes[2]
    for label, sub in runs.groupby("label", sort=False):
        sub = sub.sort_values("n_gpus")
        y = 100 * sub["restart_share"].to_numpy()
        err = 100 * np.vstack([sub["restart_share"] - sub["restart_share_min"],
                               sub["restart_share_max"] - sub["restart_share"]])
        sty = METHOD_STYLE[label]
        ax.errorbar(sub["n_gpus"], y, yerr=err, color=sty["color"], marker=sty["marker"],
                    linestyle=sty["linestyle"], capsize=1.5, label=label)
    ax.set_xscale("log")
    ax.set_xlim(axes[1].get_xlim())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(0, 100)
    ax.set_xlabel("#GPUs")
    ax.set_ylabel("wall time in restarts (%)")
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig


def make_explore_figure(closed: Plan, r: int | None = None) -> Any:
    """J(r) (Eq. 7) and A*(r) (Eq. 2) of SPARe+CKPT and Rep+CKPT, CKPT-only as a line.

    Parameters
    ----------
    closed : Plan
        From :func:`plan`.
    r : int or None
        Selected SPARe redundancy, drawn as a dotted vertical line.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels (TTT/T0 on a log scale, availability in %); the recommended r of each method
        is marked with a star.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, NullFormatter, ScalarFormatter


    fig, (ax_j, ax_a) = plt.subplots(1, 2, figsize=(PAGE_IN, 2.4))
    for m in ("spare", "rep"):
        pts = [p for p in closed.curve if p.method == m]
        best = getattr(closed, m)
        sty = METHOD_STYLE[LABELS[m]]
        rs = [p.r for p in pts]
        for ax, key, scale in ((ax_j, "ttt_over_t0", 1.0), (ax_a, "availability", 100.0)):
            ax.plot(rs, [scale * getattr(p, key) for p in pts], color=sty["color"],
                    marker=sty["marker"], linestyle=sty["linestyle"], markersize=3,
                    label=LABELS[m])
            ax.plot([best.r], [scale * getattr(best, key)], marker="*", markersize=11,
                    color=sty["color"], markeredgecolor="k", linestyle="none")
    sty = METHOD_STYLE["CKPT-only"]
    ax_j.axhline(closed.ckpt.ttt_over_t0, color=sty["color"], linestyle=sty["linestyle"],
                 label="CKPT-only")
    ax_a.axhline(100 * closed.ckpt.availability, color=sty["color"], linestyle=sty["linestyle"],
                 label="CKPT-only")
    if r is not None:
        for ax in (ax_j, ax_a):
            ax.axvline(r, color="0.5", linestyle=":", linewidth=1)
    ax_j.set_yscale("log")
    ax_j.yaxis.set_major_formatter(ScalarFormatter())
    ax_j.yaxis.set_minor_formatter(NullFormatter())
    lo, hi = ax_j.get_ylim()
    ax_j.set_yticks([t for t in (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200) if lo <= t <= hi])
    ax_j.set_ylabel("TTT / T0 (Eq. 7)")
    ax_a.set_ylabel("availability A* (%, Eq. 2)")
    ax_a.set_ylim(0, 100)
    for ax in (ax_j, ax_a):
        ax.set_xlabel("redundancy r")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_a.legend(loc="center right", fontsize="small")
    c = closed.cluster
    fig.suptitle(f"N = {c.N}, m = {c.system_mtbf_s / 60:.3g} min, "
                 f"T_r = {c.restart_s / 60:.3g} min, "
                 f"T_s = {c.checkpoint_s:.3g} s: SPARe r* = {closed.spare.r}, "
                 f"T_c* = {closed.spare.checkpoint_period_s:.0f} s", fontsize="small")
    fig.tight_layout()
    return fig
