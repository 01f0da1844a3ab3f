"""Figures of notebook 85 (production failures, issue 24): every strategy in the ``llama3``
failure mix at three cluster sizes, the availability ceiling of job-wide failures against T_r,
and the tornado of the assumptions at 100k and 600k GPUs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spare_lib.figures.strategies import STRATEGY_STYLE
from spare_lib.figures.style import PAGE_IN
from spare_lib.registry.methods import METHODS


def make_production_strategies(table: Any) -> Any:
    """TTT/T0 of every method at its planned (r, C), one panel per cluster size and one group of
    bars per failure world; error bars: the per-trial min and max.

    ``table``: rows with ``gpus``, ``world``, ``method``, ``ttt_over_t0``, ``ttt_min``,
    ``ttt_max``."""
    import matplotlib.pyplot as plt

    sizes = list(dict.fromkeys(table["gpus"]))
    worlds = list(dict.fromkeys(table["world"]))
    fig, axes = plt.subplots(1, len(sizes), figsize=(PAGE_IN, 0.42 * PAGE_IN), squeeze=False,
                             sharey=False)
    methods = [m for m in METHODS if m in set(table["method"])]
    width = 0.8 / max(len(methods), 1)
    for ax, g in zip(axes[0], sizes, strict=True):
        sub = table[table["gpus"] == g]
        for j, m in enumerate(methods):
            rows = sub[sub["method"] == m].set_index("world").reindex(worlds)
            x = np.arange(len(worlds)) - 0.4 + (j + 0.5) * width
            y = rows["ttt_over_t0"].to_numpy(float)
            err = np.vstack([y - rows["ttt_min"].to_numpy(float),
                             rows["ttt_max"].to_numpy(float) - y])
            st = STRATEGY_STYLE[m]
            ax.bar(x, y, width, color=st["color"], label=METHODS[m].label, yerr=err,
                   error_kw={"lw": 0.6, "capsize": 1.5}, edgecolor="white", linewidth=0.3)
        ax.set_xticks(np.arange(len(worlds)), worlds)
        ax.set_yscale("log")
        ax.set_title(f"{g:,} GPUs")
        ax.set_ylabel("TTT / T0")
    axes[0][0].legend(fontsize="x-small", ncol=2, loc="upper left")
    fig.tight_layout()
    return fig


def make_ceiling(curves: Any, points: Any) -> Any:
    """Availability against T_r: the ceiling of job-wide failures for several job shares (lines,
    one panel per cluster) and the simulated availability of the best strategy (markers).

    ``curves``: rows ``gpus``, ``job_share``, ``restart_min``, ``ceiling``; ``points``: rows
    ``gpus``, ``restart_min``, ``availability``, ``label`` (the strategy), ``job_share``."""
    import matplotlib.pyplot as plt

    sizes = list(dict.fromkeys(curves["gpus"]))
    fig, axes = plt.subplots(1, len(sizes), figsize=(PAGE_IN, 0.4 * PAGE_IN), squeeze=False,
                             sharey=True)
    shares = sorted(set(curves["job_share"]))
    styles = ["-", "--", "-.", ":"]
    for ax, g in zip(axes[0], sizes, strict=True):
        for i, q in enumerate(shares):
            c = curves[(curves["gpus"] == g) & (curves["job_share"] == q)]
            ax.plot(c["restart_min"], 100 * c["ceiling"], styles[i % len(styles)], color="0.2",
                    lw=1.0, label=f"ceiling, job share {100 * q:.3g} %")
        p = points[points["gpus"] == g]
        for lab, pp in p.groupby("label", sort=False):
            ax.plot(pp["restart_min"], 100 * pp["availability"], "o", ms=4,
                    color=STRATEGY_STYLE.get(pp["method"].iloc[0], {"color": "C0"})["color"],
                    label=f"{lab} (simulated, llama3 mix)")
        ax.set_xscale("log")
        ax.set_xlabel("restart time T_r (min)")
        ax.set_title(f"{g:,} GPUs")
        ax.set_ylim(0, 100)
    axes[0][0].set_ylabel("availability (%)")
    axes[0][0].legend(fontsize="x-small", loc="lower left")
    fig.tight_layout()
    return fig


def make_tornado(rows: Any) -> Any:
    """Tornado of the assumptions: for each, the best SPARe variant's TTT over the best
    non-SPARe variant's at every end of its range (bars from 1; whiskers: paired t-intervals),
    one panel per cluster size, sorted by size of the effect.

    ``rows``: ``gpus``, ``assumption``, ``end``, ``ratio``, ``ci_low``, ``ci_high``."""
    import matplotlib.pyplot as plt

    sizes = list(dict.fromkeys(rows["gpus"]))
    fig, axes = plt.subplots(1, len(sizes), figsize=(PAGE_IN, 0.5 * PAGE_IN), squeeze=False)
    for ax, g in zip(axes[0], sizes, strict=True):
        sub = rows[rows["gpus"] == g]
        spread = sub.groupby("assumption")["ratio"].agg(lambda s: s.max() - s.min())
        order = list(spread.sort_values().index)
        for y, name in enumerate(order):
            ends = sub[sub["assumption"] == name].sort_values("ratio")
            lo, hi = ends["ratio"].min(), ends["ratio"].max()
            ax.barh(y, hi - lo, left=lo, color="#56B4E9", height=0.6)
            for _, e in ends.iterrows():
                ax.errorbar(e["ratio"], y, xerr=[[max(e["ratio"] - e["ci_low"], 0)],
                                                 [max(e["ci_high"] - e["ratio"], 0)]],
                            fmt="|", color="0.2", lw=0.6, capsize=1.5)
                ax.annotate(str(e["end"]), (e["ratio"], y + 0.32), fontsize=5, ha="center")
        ax.axvline(1.0, color="k", lw=0.8)
        ax.set_yticks(range(len(order)), order)
        ax.set_xlabel("TTT best SPARe / best other")
        ax.set_title(f"{g:,} GPUs")
    fig.tight_layout()
    return fig


def tornado_markdown(rows: Any) -> str:
    """The tornado table of ``docs/strategies.md``: per cluster size and assumption, the ratio
    (best SPARe variant's TTT over the best other's, paired 95 % t-interval) at each end, whom it
    favours there, the size of the effect (spread of the ratio) and whether the verdict flips."""
    from spare_lib.cluster.planning.sensitivity import tornado_table

    lines = ["| GPUs | assumption | ends: ratio [95 % CI] (favours) | size | "
             "verdict changes across the ends |",
             "|---|---|---|---|---|"]
    for g in dict.fromkeys(rows["gpus"]):
        sub = rows[rows["gpus"] == g]
        for t in tornado_table(sub.to_dict("records")):
            ends = sub[sub["assumption"] == t["assumption"]]
            txt = "; ".join(f"{e['end']}: {e['ratio']:.3f} [{e['ci_low']:.3f}, {e['ci_high']:.3f}]"
                            f" ({e['favours']})" for _, e in ends.iterrows())
            lines.append(f"| {int(g):,} | {t['what']} | {txt} | {t['size']:.3f} | "
                         f"{'yes' if t['flips'] else 'no'} |")
    return "\n".join(lines) + "\n"


def render_tornado_block(text: str, results_dir: Any) -> str:
    """``docs/strategies.md``'s ``strategies-tornado`` block from
    ``strategies_tornado.csv`` (notebook 85); unchanged when the file is missing."""
    import re
    from pathlib import Path

    import pandas as pd

    path = Path(results_dir) / "strategies_tornado.csv"
    if not path.exists():
        return text
    block = f"<!-- strategies-tornado:start -->\n{tornado_markdown(pd.read_csv(path))}" \
            "<!-- strategies-tornado:end -->"
    return re.sub(r"<!--\s*strategies-tornado:start\s*-->.*?<!--\s*strategies-tornado:end\s*-->",
                  lambda _m: block, text, flags=re.S)


__all__ = ["make_ceiling", "make_production_strategies", "make_tornado", "render_tornado_block",
           "tornado_markdown"]
