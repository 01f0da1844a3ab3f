"""Figures of notebook 75 (correlated failures): μ_q against the domain-event share per layout,
Fig. 6 redone under correlated failures, and the optimal redundancy against the share.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spare_lib.figures.style import COLUMN_IN, LAYOUT_STYLE, METHOD_STYLE, PAGE_IN

#: Layouts of the μ_q figure (the paper's three plus the domain-aware one).
DOMAIN_LAYOUT_STYLE: dict[str, dict[str, str]] = {
    "ruler": LAYOUT_STYLE["ruler"],
    "consecutive": LAYOUT_STYLE["consecutive"],
    "domain-aware": {"color": "#CC79A7", "marker": "P", "linestyle": "-"},
    "random": LAYOUT_STYLE["random"],
}

#: The four candidates of the time-to-train comparison (SPARe solid, Rep dashed).
CANDIDATE_STYLE: dict[str, dict[str, str]] = {
    "spare-ruler": METHOD_STYLE["SPARe+CKPT"],
    "spare-domain-aware": DOMAIN_LAYOUT_STYLE["domain-aware"],
    "rep-consecutive": {**METHOD_STYLE["Rep+CKPT"], "linestyle": "--"},
    "rep-strided": {"color": "#E69F00", "marker": "v", "linestyle": "--"},
}

CANDIDATE_LABEL: dict[str, str] = {
    "spare-ruler": "SPARe+CKPT, ruler",
    "spare-domain-aware": "SPARe+CKPT, domain-aware",
    "rep-consecutive": "Rep+CKPT, consecutive sets",
    "rep-strided": "Rep+CKPT, strided sets",
}


def make_mu_q_vs_share(mc: Any, theory: Any | None = None) -> Any:
    """μ_q against the domain-event share q per layout, one column per (N, r, D).

    Parameters
    ----------
    mc : DataFrame
        Monte Carlo: columns N, r, D, layout, q, mu_q, mu_q_se (e.g. from
        :func:`spare_lib.theory.correlated.layout_domain_comparison`).
    theory : DataFrame or None
        Columns N, r, D, layout, q, approx (:func:`~spare_lib.theory.correlated.mu_correlated`),
        drawn as lines; NaN rows (no approximation for the layout) are skipped.

    Returns
    -------
    matplotlib.figure.Figure
        Top row μ_q (log scale, markers = Monte Carlo ± 2 s.e., lines = approximation); bottom
        row μ_q / μ_q(ruler) (Monte Carlo markers, approximation lines).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    configs = list(mc[["N", "r", "D"]].drop_duplicates().itertuples(index=False, name=None))
    fig, axes = plt.subplots(2, len(configs), figsize=(PAGE_IN, 4.2), squeeze=False,
                             sharex=True, gridspec_kw={"height_ratios": [1.4, 1.0]})
    for j, (N, r, D) in enumerate(configs):
        sub = mc[(mc.N == N) & (mc.r == r) & (mc.D == D)]
        ref = sub[sub.layout == "ruler"].set_index("q")["mu_q"]
        th = None if theory is None else theory[(theory.N == N) & (theory.r == r) & (theory.D == D)]
        th_ref = None if th is None else th[th.layout == "ruler"].set_index("q")["approx"]
        top, bot = axes[0, j], axes[1, j]
        for lay, sty in DOMAIN_LAYOUT_STYLE.items():
            s = sub[sub.layout == lay].sort_values("q")
            if s.empty:
                continue
            top.errorbar(s.q, s.mu_q, yerr=2 * s.mu_q_se, color=sty["color"], marker=sty["marker"],
                         linestyle="none", markersize=3.5, capsize=1.5, label=lay)
            bot.plot(s.q, s.mu_q / s.q.map(ref), color=sty["color"], marker=sty["marker"],
                     linestyle="none", markersize=3.5)
            if th is not None:
                t = th[th.layout == lay].sort_values("q").dropna(subset=["approx"])
                if not t.empty:
                    top.plot(t.q, t.approx, color=sty["color"], linestyle=sty["linestyle"],
                             linewidth=1.0)
                    if th_ref is not None and not th_ref.empty:
                        bot.plot(t.q, t.approx / t.q.map(th_ref), color=sty["color"],
                                 linestyle=sty["linestyle"], linewidth=1.0)
        top.set_yscale("log")
        top.yaxis.set_major_formatter(ScalarFormatter())
        top.yaxis.set_minor_formatter(NullFormatter())
        lo, hi = top.get_ylim()
        top.set_yticks([v for v in (2, 5, 10, 20, 50, 100, 200, 500) if lo <= v <= hi])
        top.set_title(f"N = {N}, r = {r}, D = {D}")
        bot.axhline(1.0, color="0.6", linewidth=0.8)
        bot.set_xlabel("share of domain events q")
        bot.set_ylim(0.0, None)
    axes[0, 0].set_ylabel("failure events to\nwipe-out μ_q")
    axes[1, 0].set_ylabel("μ_q / μ_q(ruler)")
    axes[0, 0].legend(loc="lower left", fontsize="small", title="markers: MC, lines: theory",
                      title_fontsize="x-small")
    fig.tight_layout()
    return fig


def make_cluster_ttt_vs_r_correlated(summary: Any, plan: Any | None = None) -> Any:
    """Fig. 6 under correlated failures: TTT/T0 against r, one panel per q, four candidates.

    Parameters
    ----------
    summary : DataFrame
        From :func:`spare_lib.cluster.runs.correlated.summarize_correlated`.
    plan : DataFrame or None
        From :func:`~spare_lib.cluster.runs.correlated.checkpoint_plan`: its J_q (Eq. 7 with μ_q) is
        drawn as a thin dotted line for the SPARe candidates.

    Returns
    -------
    matplotlib.figure.Figure
        Markers = mean over trials, bars = min–max, a star at each candidate's optimum; open
        markers where some trial hit the wall-time cap (a lower bound).
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, NullFormatter, ScalarFormatter

    qs = sorted(summary["q"].unique())
    fig, axes = plt.subplots(1, len(qs), figsize=(PAGE_IN, 2.9), squeeze=False, sharey=True)
    for ax, q in zip(axes[0], qs, strict=True):
        for cand, sty in CANDIDATE_STYLE.items():
            s = summary[np.isclose(summary.q, q) & (summary.candidate == cand)].sort_values("r")
            if s.empty:
                continue
            y = s.ttt_over_t0.to_numpy()
            err = np.vstack([y - s.ttt_over_t0_min.to_numpy(), s.ttt_over_t0_max.to_numpy() - y])
            ax.errorbar(s.r, y, yerr=err, color=sty["color"], marker=sty["marker"],
                        linestyle=sty["linestyle"], markersize=3, capsize=1.2,
                        label=CANDIDATE_LABEL[cand])
            capped = s[s.completed < 1.0]
            ax.plot(capped.r, capped.ttt_over_t0, marker=sty["marker"], markerfacecolor="white",
                    color=sty["color"], linestyle="none", markersize=5, zorder=5)
            b = s.loc[s.ttt_over_t0.idxmin()]
            ax.plot([b.r], [b.ttt_over_t0], marker="*", markersize=10, color=sty["color"],
                    markeredgecolor="k", linestyle="none")
            if plan is not None and cand.startswith("spare"):
                p = plan[np.isclose(plan.q, q) & (plan.candidate == cand)].sort_values("r")
                ax.plot(p.r, p.J_q, color=sty["color"], linestyle=":", linewidth=1.0)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_yticks([2, 3, 5, 10, 20, 50, 100, 200])
        ax.set_ylim(1.8, 1.3 * float(summary.ttt_over_t0_max.max()))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(f"q = {q:g}")
        ax.set_xlabel("redundancy r")
    axes[0, 0].set_ylabel("time-to-train / T0")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize="x-small",
               title="stars: optimum per candidate; open: stopped at the wall-time cap; "
                     "dotted: Eq. 7 with μ_q (SPARe)", title_fontsize="x-small")
    fig.tight_layout(rect=(0.0, 0.11, 1.0, 1.0))
    return fig


def make_r_star_vs_share(rstar: Any, sim_optima: Any | None = None) -> Any:
    """Optimal redundancy against the domain-event share: Eq. 7 with μ_q, and simulated optima.

    Parameters
    ----------
    rstar : DataFrame
        Columns layout ('ruler' or 'domain-aware'), q, r_star (argmin of J_q) and mu_q_at_r_star.
    sim_optima : DataFrame or None
        From :func:`spare_lib.cluster.runs.correlated.correlated_optima`; the SPARe rows are drawn as
        large open markers.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.4))
    for lay in ("ruler", "domain-aware"):
        sty = DOMAIN_LAYOUT_STYLE[lay]
        s = rstar[rstar.layout == lay].sort_values("q")
        ax.plot(s.q, s.r_star, color=sty["color"], marker=sty["marker"], linestyle=sty["linestyle"],
                markersize=3.5, label=f"{lay}: argmin Eq. 7")
        if sim_optima is not None:
            o = sim_optima[sim_optima.candidate == f"spare-{lay}"]
            ax.plot(o.q, o.r, color=sty["color"], marker=sty["marker"], markerfacecolor="white",
                    markersize=8, linestyle="none", label=f"{lay}: simulated optimum")
    ax.set_xlabel("share of domain events q")
    ax.set_ylabel("optimal redundancy r*")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig
