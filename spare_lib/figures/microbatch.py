"""Figures of notebook 82 (SPARe at micro-batch granularity, issue 25): S̄_b against b and r
with the makespan distribution, and TTT/T0 of the SPARe-b methods against SPARe+CKPT,
elastic-rebalance at several fetch times and elastic-drop, with the paired verdicts.

The builders only draw: every number comes from the tables the notebook computes
(:mod:`spare_lib.cluster.planning.microbatch_plan`, :mod:`spare_lib.rectlr.microbatch_mc`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spare_lib.figures.doc_tables import verdict_bounds
from spare_lib.figures.strategies import STRATEGY_STYLE
from spare_lib.figures.style import PAGE_IN


def _style(method: str) -> dict[str, str]:
    """The method's style of :data:`~spare_lib.figures.strategies.STRATEGY_STYLE` (one per
    registered method)."""
    return STRATEGY_STYLE.get(method) or {
        "color": "0.5", "marker": "o", "linestyle": "-"}


def make_microbatch_sbar(sbar: Any, by_k: Any, per_sequence: Any) -> Any:
    """Left: S̄_b against b, one line per r (theory) with the Monte Carlo markers (± 2 s.e.)
    and the global bound (dotted). Middle: mean L*(k)/b and the global bound g_b(k)/b against
    the failures k at one (N, r, b). Right: histogram of the per-sequence time average of L*/b.

    ``sbar``: rows ``r``, ``b``, ``sbar_theory``, ``sbar_mc``, ``sbar_mc_se``, ``sbar_global``
    (one N); ``by_k``: rows ``k``, ``mean_l_over_b``, ``global_over_b``; ``per_sequence``: rows
    ``sbar_b`` (one per failure sequence); ``by_k.attrs`` may hold ``title``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(PAGE_IN, 0.36 * PAGE_IN))
    ax = axes[0]
    for i, (r, sub) in enumerate(sbar.groupby("r", sort=True)):
        sub = sub.sort_values("b")
        col = f"C{i}"
        ax.plot(sub["b"], sub["sbar_theory"], "-", color=col, lw=1.0, label=f"r = {r}")
        ax.errorbar(sub["b"], sub["sbar_mc"], yerr=2 * sub["sbar_mc_se"], fmt="o", ms=3,
                    color=col, lw=0.8)
        ax.plot(sub["b"], sub["sbar_global"], ":", color=col, lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("micro-batches per shard b")
    ax.set_ylabel("S̄_b (shards per step)")
    ax.legend(fontsize="x-small")
    ax = axes[1]
    ax.plot(by_k["k"], by_k["mean_l_over_b"], "-", color="C0", lw=1.0, label="E[L*(k)]/b")
    ax.plot(by_k["k"], by_k["global_over_b"], ":", color="0.2", lw=1.0, label="⌈Nb/(N−k)⌉/b")
    ax.set_xlabel("failures k")
    ax.set_ylabel("makespan / b")
    ax.legend(fontsize="x-small")
    ax.set_title(by_k.attrs.get("title", ""), fontsize="small")
    ax = axes[2]
    ax.hist(per_sequence["sbar_b"], bins=30, color="C0", alpha=0.8)
    ax.set_xlabel("S̄_b of one failure sequence")
    ax.set_ylabel("sequences")
    fig.tight_layout()
    return fig


def _panels(table: Any, height: float) -> tuple[Any, list[tuple[Any, Any, str]]]:
    """One panel per (world, cluster size): rows are the worlds (in table order; one row when
    the table has no ``world`` column), columns the sizes. Returns the figure and (axis, rows of
    the panel, title) per panel."""
    import matplotlib.pyplot as plt

    worlds = list(dict.fromkeys(table["world"])) if "world" in table else [None]
    sizes = list(dict.fromkeys(table["gpus"]))
    fig, axes = plt.subplots(len(worlds), len(sizes), figsize=(PAGE_IN, height * len(worlds)),
                             squeeze=False)
    out = []
    for i, w in enumerate(worlds):
        for j, g in enumerate(sizes):
            sel = table["gpus"] == g
            if w is not None:
                sel &= table["world"] == w
            title = f"{g:,} GPUs" + ("" if w is None else f", {w} world")
            out.append((axes[i][j], table[sel].reset_index(drop=True), title))
    return fig, out


def make_microbatch_ttt(table: Any) -> Any:
    """TTT/T0 of every variant (method and fetch time) at its planned (r, C), one panel per
    cluster size and failure world; error bars: the 95 % Student-t interval of the mean over the
    trials. A variant with runs stopped at the wall-clock cap (``finished`` False) is hatched,
    without an interval, and labelled '≥': its mean is a lower bound.

    ``table``: rows ``gpus``, ``variant`` (label), ``method``, ``ttt_over_t0``, ``ci_low``,
    ``ci_high``, optionally ``world`` and ``finished``."""
    fig, panels = _panels(table, 0.42 * PAGE_IN)
    for ax, sub, title in panels:
        if sub.empty:
            ax.set_visible(False)
            continue
        y = sub["ttt_over_t0"].to_numpy(float)
        err = np.vstack([y - sub["ci_low"].to_numpy(float), sub["ci_high"].to_numpy(float) - y])
        done = (sub["finished"].astype(bool).to_numpy() if "finished" in sub
                else np.ones(len(sub), bool))
        x = np.arange(len(sub))
        bars = ax.barh(x, y, xerr=np.nan_to_num(err),
                       color=[_style(m)["color"] for m in sub["method"]],
                       edgecolor="0.3", linewidth=0.3, error_kw={"lw": 0.6, "capsize": 1.5})
        for bar, ok, v in zip(bars, done, y, strict=True):
            if not ok:
                bar.set_hatch("////")
                ax.text(v, bar.get_y() + bar.get_height() / 2, " ≥", va="center",
                        fontsize="x-small")
        ax.set_yticks(x, sub["variant"], fontsize="x-small")
        ax.invert_yaxis()
        lo = sub["ci_low"].fillna(sub["ttt_over_t0"])
        ax.set_xlim(left=max(0.0, 0.95 * float(np.nanmin(lo))))
        ax.set_xlabel("TTT / T0")
        ax.set_title(title, fontsize="small")
    fig.tight_layout()
    return fig


def make_microbatch_verdict(verdicts: Any) -> Any:
    """Paired differences of TTT, (SPARe-b variant − rival) / rival mean in %, with their
    Holm-adjusted intervals, one panel per cluster size and failure world; left of 0 the SPARe-b
    variant is faster, an interval across 0 is a tie (open marker). A comparison with runs stopped
    at the cap (``bound`` 'lower' or 'upper') has no interval: an open triangle at its bound,
    pointing where the true difference lies.

    ``verdicts``: rows ``gpus``, ``spare_variant``, ``rival``, ``diff_pct``, ``ci_low_pct``,
    ``ci_high_pct``, ``method`` (the SPARe-b method, for its colour), optionally ``world`` and
    ``bound``."""
    fig, panels = _panels(verdicts, 0.5 * PAGE_IN)
    for ax, sub, title in panels:
        if sub.empty:
            ax.set_visible(False)
            continue
        y = np.arange(len(sub))
        d = sub["diff_pct"].to_numpy(float)
        lo, hi = sub["ci_low_pct"].to_numpy(float), sub["ci_high_pct"].to_numpy(float)
        err = np.vstack([d - lo, hi - d])
        bounds = verdict_bounds(sub).to_numpy(str)
        for i, row in sub.iterrows():
            st = _style(row["method"])
            if bounds[i] in ("lower", "upper"):
                ax.plot(d[i], y[i], ">" if bounds[i] == "lower" else "<", ms=4, mfc="none",
                        color=st["color"], mew=0.8)
                continue
            tied = bool(lo[i] <= 0.0 <= hi[i])
            ax.errorbar(d[i], y[i], xerr=np.nan_to_num(err[:, i:i + 1]), fmt=st["marker"],
                        color=st["color"], ms=3.5, lw=0.8, capsize=1.5, mec="0.2", mew=0.3,
                        mfc="white" if tied else st["color"])
        ax.axvline(0.0, color="0.3", lw=0.6)
        ax.set_yticks(y, [f"{a} − {b}" for a, b in zip(sub["spare_variant"], sub["rival"],
                                                        strict=True)], fontsize="xx-small")
        ax.invert_yaxis()
        ax.set_xlabel("ΔTTT (% of the rival's)")
        ax.set_title(title, fontsize="small")
    fig.tight_layout()
    return fig
