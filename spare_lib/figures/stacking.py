"""Figures of notebook 10 (stacking and wipe-out): layouts, a failure sequence, μ against the closed
form, ruler against consecutive.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from spare_lib.figures.style import COLUMN_IN, LAYOUT_STYLE, METHOD_STYLE, PAGE_IN


def _type_cmap(N: int):  # noqa: ANN202 - matplotlib colormap
    import matplotlib.colors as mcolors

    base = mpl.colormaps["tab20"] if N > 10 else mpl.colormaps["tab10"]
    return mcolors.ListedColormap([base(i % base.N) for i in range(N)])


def make_stacking_layouts(layouts: list) -> Figure:
    """Draw stacking layouts side by side: rows = stack level, columns = groups, colour = type.

    Parameters
    ----------
    layouts : list of Layout
        Layouts with the same N (e.g. ruler vs consecutive, N=12, r=3).
    """
    if not layouts:
        raise ValueError("layouts must contain at least one Layout")
    N = layouts[0].N
    cmap = _type_cmap(N)
    fig, axes = plt.subplots(len(layouts), 1, figsize=(COLUMN_IN, 0.9 + 0.45 * sum(L.r for L in layouts)),
                             squeeze=False)
    for ax, lay in zip(axes[:, 0], layouts, strict=True):
        grid = lay.stacks.T  # level × group
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=N - 0.5, aspect="auto")
        for p in range(lay.r):
            for w in range(lay.N):
                ax.text(w, p, f"D{grid[p, w]}", ha="center", va="center", fontsize=5.5,
                        color="white" if grid[p, w] % 2 == 0 else "black")
        ax.set_xticks(range(lay.N))
        ax.set_xticklabels([f"G{w}" for w in range(lay.N)], fontsize=6)
        ax.set_yticks(range(lay.r))
        ax.set_yticklabels([f"level {p}" for p in range(lay.r)])
        ax.grid(False)
        ax.set_title(f"{lay.kind} layout, offsets {{{', '.join(map(str, lay.offsets))}}}")
    axes[-1, 0].set_xlabel("data-parallel group (its stack reads top to bottom)")
    fig.tight_layout()
    return fig


def make_wipeout_sequence(live_counts: np.ndarray, order: np.ndarray, r: int) -> Figure:
    """Live holders per shard type after each failure, until the first wipe-out.

    Parameters
    ----------
    live_counts : ndarray, shape (k + 1, N)
        Row i: number of live holders of each type after i failures (row 0: all r).
    order : ndarray
        The failed groups in order (length ≥ k).
    r : int
        Redundancy (colour scale top).
    """
    k1, N = live_counts.shape
    fig, ax = plt.subplots(figsize=(COLUMN_IN, 0.6 + 0.22 * k1))
    cmap = mpl.colormaps["viridis"].resampled(r + 1)
    im = ax.imshow(live_counts, cmap=cmap, vmin=-0.5, vmax=r + 0.5, aspect="auto")
    wiped = np.argwhere(live_counts[-1] == 0).ravel()
    for t in wiped:
        ax.add_patch(mpl.patches.Rectangle((t - 0.5, k1 - 1.5), 1, 1, fill=False, ec="red", lw=1.5))
    ax.set_yticks(range(k1))
    ax.set_yticklabels(["start"] + [f"{i + 1}: G{order[i]} fails" for i in range(k1 - 1)], fontsize=6)
    ax.set_xticks(range(N))
    ax.set_xticklabels([f"D{t}" for t in range(N)], fontsize=6)
    ax.set_xlabel("shard type")
    ax.grid(False)
    cb = fig.colorbar(im, ax=ax, ticks=range(r + 1), pad=0.02)
    cb.set_label("live holders")
    ax.set_title(f"wipe-out at failure {k1 - 1} (red: type with no live holder)")
    fig.tight_layout()
    return fig


def make_mu_mc_vs_closed_form(table: object, paper_max_err_pct: float = 1.13) -> Figure:
    """μ(N, r): Monte Carlo (mean ± 2 SE) vs the closed form, and the relative error.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns N, r, mu_mc, se_mc, mu_closed (one row per (N, r)).
    paper_max_err_pct : float
        The paper's reported maximum error (drawn as a band).
    """
    Ns = sorted(table["N"].unique())
    fig, axes = plt.subplots(2, len(Ns), figsize=(PAGE_IN, 3.6), sharex="col",
                             gridspec_kw={"height_ratios": [2, 1]}, squeeze=False)
    for i, N in enumerate(Ns):
        d = table[table["N"] == N].sort_values("r")
        ax, axe = axes[0, i], axes[1, i]
        ax.errorbar(d["r"], d["mu_mc"], yerr=2 * d["se_mc"], fmt="o", ms=3,
                    color=LAYOUT_STYLE["ruler"]["color"], label="Monte Carlo (±2 SE)")
        ax.plot(d["r"], d["mu_closed"], color=METHOD_STYLE["theory"]["color"],
                label=r"closed form $\Gamma(1+1/r)\,N^{1-1/r}$")
        ax.set_title(f"N = {N}")
        ax.set_ylabel(r"failures to wipe-out $\mu(N,r)$" if i == 0 else "")
        err = 100 * (d["mu_closed"] - d["mu_mc"]) / d["mu_mc"]
        axe.axhspan(-paper_max_err_pct, paper_max_err_pct, color="0.85", lw=0,
                    label=f"paper: |error| ≤ {paper_max_err_pct}%")
        axe.errorbar(d["r"], err, yerr=200 * d["se_mc"] / d["mu_mc"], fmt="o", ms=3,
                     color=LAYOUT_STYLE["consecutive"]["color"], label="closed form vs MC")
        axe.axhline(0, color="0.3", lw=0.6)
        axe.set_xlabel("redundancy r")
        axe.set_ylabel("relative error (%)" if i == 0 else "")
        axe.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    axes[0, 0].legend(loc="upper left")
    axes[1, 0].legend(loc="lower right", fontsize=6)
    fig.tight_layout()
    return fig


def make_mu_ruler_vs_consecutive(table: object) -> Figure:
    """Mean failures to wipe-out of the ruler and consecutive layouts over r (one N).

    Parameters
    ----------
    table : pandas.DataFrame
        Columns r, kind ('ruler' | 'consecutive'), mu, se; a single N.
    """
    fig, (ax, axr) = plt.subplots(2, 1, figsize=(COLUMN_IN, 3.4), sharex=True,
                                  gridspec_kw={"height_ratios": [2, 1]})
    for kind in ("ruler", "consecutive"):
        d = table[table["kind"] == kind].sort_values("r")
        st = LAYOUT_STYLE[kind]
        ax.errorbar(d["r"], d["mu"], yerr=2 * d["se"], label=kind, **st)
    ax.set_ylabel(r"failures to wipe-out $\mu$")
    ax.legend()
    ru = table[table["kind"] == "ruler"].sort_values("r").set_index("r")
    co = table[table["kind"] == "consecutive"].sort_values("r").set_index("r")
    ratio = 100 * (co["mu"] / ru["mu"] - 1)
    axr.plot(ratio.index, ratio.values, color="0.2", marker="o")
    axr.axhline(0, color="0.5", lw=0.6)
    axr.set_ylabel("consecutive vs\nruler (%)")
    axr.set_xlabel("redundancy r")
    axr.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    if "N" in table:
        ax.set_title(f"N = {int(table['N'].iloc[0])}")
    fig.tight_layout()
    return fig
