"""Figures of the design search (issue 27, notebook 95): the Pareto front of days against GPUs."""

from __future__ import annotations

import math
from typing import Any

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


__all__ = ["FAMILY_STYLE", "make_design_pareto"]
