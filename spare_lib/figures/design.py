"""Figures of the design search (issue 27, notebook 95): the Pareto front of days against GPUs."""

from __future__ import annotations

import math
from typing import Any

from spare_lib.figures.strategies import STRATEGY_STYLE
from spare_lib.figures.style import COLUMN_IN
from spare_lib.registry.methods import METHODS

#: One colour and marker per method family (colour-blind safe, distinct in grayscale).
FAMILY_STYLE = {"spare": ("#0072B2", "o"), "replication": ("#D55E00", "^"),
                "checkpoint": ("#000000", "x"), "elastic": ("#009E73", "D")}


def make_design_pareto(result: Any) -> Any:
    """Days to train against GPUs used: each (group size, method)'s best plan, the Pareto front
    joined by a line, the best plan ringed (a :class:`~spare_lib.design.DesignResult`)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 0.8 * COLUMN_IN))
    plans = [p for p in result.ranked() if math.isfinite(p.days)]
    seen = set()
    for p in plans:
        fam = METHODS[p.method].family
        color, marker = FAMILY_STYLE[fam]
        label = None if p.method in seen else p.label
        seen.add(p.method)
        ax.scatter(p.gpus_used, p.days, color=color, marker=marker, s=18, label=label,
                   alpha=0.85)
    front = result.pareto()
    if front:
        ax.plot([p.gpus_used for p in front], [p.days for p in front], color="0.4", lw=0.8,
                zorder=0, label="Pareto front")
        b = result.best
        ax.scatter([b.gpus_used], [b.days], s=90, facecolors="none", edgecolors="0.1", lw=1.0)
    ax.set_xscale("log")
    ax.set_xlabel("GPUs used")
    ax.set_ylabel("days to train")
    ax.legend(fontsize="x-small", frameon=False)
    fig.tight_layout()
    return fig


#: (colour, marker) of every registered method: the project's one style per method
#: (:data:`~spare_lib.figures.strategies.STRATEGY_STYLE`; before, a copy here lacked the SPARe-b
#: methods and notebook 95 failed on them at full size).
METHOD_STYLE = {m: (s["color"], s["marker"]) for m, s in STRATEGY_STYLE.items()}
#: The by-group-size panels show days up to this multiple of the job's best (the rest clipped).
DAYS_SPAN = 8.0


def make_design_by_group_size(results: dict[str, Any]) -> Any:
    """One panel per job: each method's best days to train against the group size M on the
    whole fleet, the job's best plan ringed, days clipped at :data:`DAYS_SPAN` × the best.
    ``results``: title -> :class:`~spare_lib.design.DesignResult`."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(2 * COLUMN_IN, 0.8 * COLUMN_IN),
                             squeeze=False)
    for ax, (title, res) in zip(axes[0], results.items(), strict=True):
        whole = [p for p in res.ranked()
                 if math.isfinite(p.days) and p.N == res.job.gpus // p.gpus_per_group]
        for name in res.methods:
            color, marker = METHOD_STYLE[name]
            pts = sorted((p.gpus_per_group, p.days) for p in whole if p.method == name)
            if pts:
                ax.plot(*zip(*pts, strict=True), color=color, marker=marker, ms=3, lw=0.9,
                        label=METHODS[name].label)
        b = res.best
        ax.scatter([b.gpus_per_group], [b.days], s=80, facecolors="none", edgecolors="0.1")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylim(0.9 * b.days, DAYS_SPAN * b.days)
        ax.set_title(title, fontsize="small")
        ax.set_xlabel("GPUs per group M")
    axes[0][0].set_ylabel(f"days to train (clipped at {DAYS_SPAN:g}× the best)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize="x-small",
               frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def make_design_fronts(results: dict[str, Any]) -> Any:
    """One panel per job: every (group size, fleet share, method)'s best plan (faint) and the
    Pareto front of days against GPUs used (joined, coloured by its method)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, axes = plt.subplots(1, len(results), figsize=(2 * COLUMN_IN, 0.8 * COLUMN_IN),
                             squeeze=False)
    seen: dict[str, Any] = {}
    for ax, (title, res) in zip(axes[0], results.items(), strict=True):
        front = res.pareto()
        for p in res.ranked():
            if math.isfinite(p.days):
                color, marker = METHOD_STYLE[p.method]
                ax.scatter(p.gpus_used, p.days, color=color, marker=marker, s=6, alpha=0.25)
        ax.plot([p.gpus_used for p in front], [p.days for p in front], color="0.3", lw=0.8,
                zorder=1)
        for p in front:
            color, marker = METHOD_STYLE[p.method]
            seen[p.method] = ax.scatter(p.gpus_used, p.days, color=color, marker=marker, s=22,
                                        zorder=2)
        lo, hi = min(p.days for p in front), max(p.days for p in front)
        ax.set_ylim(0.8 * lo, 2.0 * hi)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ticks: list[int] = []
        for t in sorted({p.gpus_used for p in front}):  # at least 15 % apart on the axis
            if not ticks or t > 1.15 * ticks[-1]:
                ticks.append(t)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(ticks, [f"{t / 1000:.0f}k" if t >= 1000 else str(t) for t in ticks],
                      fontsize="x-small")
        ax.set_title(title, fontsize="small")
        ax.set_xlabel("GPUs used")
    axes[0][0].set_ylabel("days to train")
    fig.legend(list(seen.values()), [f"front: {METHODS[m].label}" for m in seen],
               loc="lower center", ncol=min(4, len(seen)), fontsize="x-small", frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


__all__ = ["DAYS_SPAN", "FAMILY_STYLE", "METHOD_STYLE", "make_design_by_group_size",
           "make_design_fronts", "make_design_pareto"]
