"""Figures of notebook 35 (Monte Carlo validation of μ, S̄, J(r) and r*; layouts compared).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from spare_lib.theory.validation import PAPER_MU_MAX_ERR_PCT, PAPER_OVERHEAD_MAX_ERR_PCT


def _validation_figure(df: pd.DataFrame, value_cols: dict[str, tuple[str, str, str]],
                       mc_col: str, se_col: str, ylabel: str, paper_err: float,
                       err_label: str):
    import matplotlib.pyplot as plt

    from spare_lib.figures.style import PAGE_IN

    Ns = sorted(df["N"].unique())
    fig, axes = plt.subplots(2, len(Ns), figsize=(PAGE_IN, 4.2), sharex="col",
                             gridspec_kw={"height_ratios": [2, 1.3]}, squeeze=False)
    for j, N in enumerate(Ns):
        d = df[df["N"] == N].sort_values("r")
        ax, axe = axes[0, j], axes[1, j]
        ax.errorbar(d["r"], d[mc_col], yerr=2 * d[se_col], fmt="o", ms=3, color="black",
                    label="Monte Carlo (±2 s.e.)", zorder=3)
        for col, (label, color, ls) in value_cols.items():
            ax.plot(d["r"], d[col], ls, color=color, label=label)
            axe.plot(d["r"], d["err_" + col], ls, marker=".", color=color, label=label)
        axe.fill_between(d["r"], -200 * d[se_col] / d[mc_col], 200 * d[se_col] / d[mc_col],
                         color="0.85", lw=0, label="±2 s.e. of MC")
        for s in (-1, 1):
            axe.axhline(s * paper_err, color="0.3", lw=0.8, ls=":",
                        label=f"paper's max {err_label} ({paper_err:.2f} %)" if s > 0 else None)
        axe.axhline(0, color="0.5", lw=0.5)
        ax.set_title(f"N = {N}")
        axe.set_xlabel("redundancy r")
        if j == 0:
            ax.set_ylabel(ylabel)
            axe.set_ylabel("error vs MC (%)")
    axes[0, 0].legend(fontsize="x-small", loc="best")
    axes[1, -1].legend(fontsize="x-small", loc="best")
    fig.align_ylabels(axes[:, 0])
    return fig


def make_mu_validation(df: pd.DataFrame):
    """μ closed form and μ finite vs Monte Carlo over r, panels N; relative errors below."""
    return _validation_figure(
        df, {"mu_closed": ("Γ(1+1/r) N^(1−1/r) (paper)", "#D55E00", "-"),
             "mu_finite": ("finite N (Bethe / exact)", "#0072B2", "--")},
        "mu_mc", "mu_se", "failures to wipe-out μ", PAPER_MU_MAX_ERR_PCT, "error")


def make_overhead_validation(df: pd.DataFrame):
    """S̄ from Eq. 5 and the finite-N renewal form vs Monte Carlo (exact S*), panels N."""
    return _validation_figure(
        df, {"eq5": ("Eq. 5 (μ closed, paper)", "#D55E00", "-"),
             "overhead_finite": ("E[Σc(k)]/E[K], finite N", "#0072B2", "--")},
        "s_bar_mc", "s_bar_se", "mean stack depth S̄", PAPER_OVERHEAD_MAX_ERR_PCT, "error")


def make_ttt_r_star(curves: pd.DataFrame):
    """J(r) for each N with r* closed form (dashed line) and the numeric minima (markers)."""
    import matplotlib.pyplot as plt

    from spare_lib import theory
    from spare_lib.figures.style import PAGE_IN

    Ns = sorted(curves["N"].unique())
    fig, axes = plt.subplots(1, len(Ns), figsize=(PAGE_IN, 2.4), squeeze=False)
    for j, N in enumerate(Ns):
        ax = axes[0, j]
        d = curves[curves["N"] == N].sort_values("r")
        d = d[d["r"] >= 2]
        ax.plot(d["r"], d["J_closed"], "-", color="#D55E00", label="J, μ closed + Eq. 5")
        ax.plot(d["r"], d["J_finite"], "--", color="#0072B2", label="J, finite-N μ and S̄")
        for col, color in (("J_closed", "#D55E00"), ("J_finite", "#0072B2")):
            i = int(np.argmin(d[col].to_numpy()))
            ax.plot(d["r"].iloc[i], d[col].iloc[i], "o", color=color, ms=6, mfc="none")
        rc = int(theory.r_star_closed(N))
        ax.axvline(rc, color="0.3", ls=":", lw=1, label=f"r* closed = {rc}")
        ax.set_title(f"N = {N}")
        ax.set_xlabel("redundancy r")
        ax.set_ylim(top=min(ax.get_ylim()[1], 1.6 * d["J_closed"].min()))
        if j == 0:
            ax.set_ylabel("J(r) = S̄ / A*  (time-to-train / T0)")
        ax.legend(fontsize="x-small")
    return fig


def make_r_star_vs_n(table: pd.DataFrame):
    """r* against N: closed form ⌊log2 N + 0.833⌋ vs the numeric minimum of J."""
    import matplotlib.pyplot as plt

    from spare_lib.figures.style import COLUMN_IN

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.6))
    ax.step(table["N"], table["r_closed"], where="post", color="0.3",
            label="closed ⌊log₂N + γ/ln2⌋")
    ax.plot(table["N"], table["r_numeric"], "o", ms=3, color="#D55E00",
            label="argmin J (μ closed, Eq. 5)")
    ax.plot(table["N"], table["r_numeric_ruler"], "x", ms=4, color="#0072B2",
            label="argmin J, r ≤ usable ruler r")
    for n in (200, 600, 1000):
        ax.axvline(n, color="0.85", lw=0.8, zorder=0)
    ax.set_xscale("log")
    ax.set_xlabel("data-parallel groups N")
    ax.set_ylabel("optimal redundancy r*")
    ax.legend(fontsize="x-small")
    return fig


def make_layout_comparison(df: pd.DataFrame):
    """μ and S̄ vs r for ruler, consecutive, random offsets and disjoint replication."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    from spare_lib.figures.style import LAYOUT_STYLE, PAGE_IN

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(PAGE_IN, 2.6))
    for name in ("ruler", "consecutive", "random", "replication"):
        d = df[df["layout"] == name].sort_values("r")
        st = LAYOUT_STYLE[name]
        label = {"random": "random offsets", "replication": "disjoint replication"}.get(name, name)
        a1.errorbar(d["r"], d["mu_mc"], yerr=2 * d["mu_se"], fmt=st["marker"], ms=3,
                    color=st["color"], label=label + " (MC)")
        if d["mu_theory"].notna().any():
            a1.plot(d["r"], d["mu_theory"], st["linestyle"], color=st["color"], lw=0.8)
        a2.plot(d["r"], d["s_bar_mc"], st["marker"] + st["linestyle"], ms=3, color=st["color"],
                label=label)
    a1.set_xlabel("redundancy r")
    a1.set_ylabel("failures to wipe-out μ")
    a2.set_xlabel("redundancy r")
    a2.set_ylabel("mean stacks per step S̄")
    a2.set_yscale("log")
    a2.set_yticks([2, 3, 5, 10, 20])
    a2.yaxis.set_major_formatter(ScalarFormatter())
    a2.yaxis.set_minor_formatter(NullFormatter())
    a1.legend(fontsize="x-small")
    a2.legend(fontsize="x-small")
    return fig
