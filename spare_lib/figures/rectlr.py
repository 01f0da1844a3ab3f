"""Figures of notebook 20 (RECTLR): reorder example, Phase-1 graph, sequence statistics, Phase-0 share,
controller speed.
"""

from __future__ import annotations

import numpy as np

from spare_lib.rectlr.sequences import phase0_share


def _draw_stacks(ax, stacks, alive, S, *, highlight=None, bold=None, red=None, title=""):
    from matplotlib.patches import Rectangle

    N, r = stacks.shape
    for w in range(N):
        for p in range(r):
            inwin = p < S and alive[w]
            face = "#CFE3F2" if inwin else "white"
            if highlight is not None and highlight[w, p]:
                face = "#E69F00"
            ax.add_patch(Rectangle((w - 0.45, p - 0.45), 0.9, 0.9, facecolor=face,
                                   edgecolor="#555555", lw=0.5,
                                   hatch="////" if not alive[w] else None))
            t = int(stacks[w, p])
            color = "#D55E00" if (red is not None and t in red and alive[w]) else "black"
            weight = "bold" if (bold is not None and bold[w, p]) else "normal"
            ax.text(w, p, str(t), ha="center", va="center", fontsize=6, color=color,
                    fontweight=weight)
    ax.axhline(S - 0.5, color="#0072B2", lw=1.0, ls="--")
    ax.set_xlim(-0.6, N - 0.4)
    ax.set_ylim(r - 0.4, -0.6)
    ax.set_xticks(range(N))
    ax.set_yticks(range(r))
    ax.tick_params(length=0)
    ax.grid(False)
    ax.set_xlabel("group w")
    ax.set_ylabel("stack position p")
    ax.set_title(title)


def make_reorder_example(example: dict):
    """Figure: the RECTLR reorder of :func:`worked_example`, before (Phase 0 view) and after.

    Hatched: failed groups; shaded: positions each survivor computes (p < S); red: types
    Phase 0 finds uncovered; orange: shards moved by Phase 2; bold: the assignment.
    """
    import matplotlib.pyplot as plt

    from spare_lib.figures.style import PAGE_IN

    st, alive, S, plan = example["stacks"], example["alive"], example["depth"], example["plan"]
    N, r = st.shape
    fig, axes = plt.subplots(2, 1, figsize=(PAGE_IN * 0.62, 3.2))
    _draw_stacks(axes[0], st, alive, S, red=set(example["uncovered"].tolist()),
                 title=f"before: groups {np.flatnonzero(~alive).tolist()} failed, S={S}; "
                       f"Phase 0 misses types {example['uncovered'].tolist()}")
    bold = np.zeros((N, r), bool)
    for t, w in enumerate(plan.assignment):
        if w >= 0:
            bold[w, int(np.flatnonzero(plan.stacks[w] == t)[0])] = True
    hl = np.zeros((N, r), bool)
    hl[:, : plan.depth] = plan.stacks[:, : plan.depth] != st[:, : plan.depth]
    _draw_stacks(axes[1], plan.stacks, alive, plan.depth, highlight=hl, bold=bold,
                 title=f"after Phase 2: S*={plan.depth}, {plan.moved} shard(s) moved "
                       f"(orange), assignment in bold")
    fig.tight_layout()
    return fig


def make_phase1_graph(example: dict):
    """Figure: the Phase 1 bipartite graph at S* (types above, survivors with capacity S* below).

    Grey: edges type → surviving holder; blue: the assignment Phase 2 chose; orange: the
    assigned edges that needed a move.
    """
    import matplotlib.pyplot as plt

    from spare_lib.figures.style import COLUMN_IN

    st, alive, plan = example["stacks"], example["alive"], example["plan"]
    N = st.shape[0]
    fig, ax = plt.subplots(figsize=(COLUMN_IN * 1.3, 2.0))
    for t, w in example["phase1_edges"]:
        ax.plot([t, w], [1, 0], color="#BBBBBB", lw=0.5, zorder=1)
    for t, w in enumerate(plan.assignment):
        pos = int(np.flatnonzero(st[w] == t)[0])
        moved = pos >= plan.depth
        ax.plot([t, w], [1, 0], color="#E69F00" if moved else "#0072B2",
                lw=1.6 if moved else 1.0, zorder=2)
    ax.scatter(range(N), np.ones(N), s=40, color="white", edgecolor="black", zorder=3)
    for t in range(N):
        ax.text(t, 1.0, str(t), ha="center", va="center", fontsize=5.5, zorder=4)
    cols = ["#999999" if not a else "white" for a in alive]
    ax.scatter(range(N), np.zeros(N), s=40, marker="s", color=cols, edgecolor="black", zorder=3)
    for w in range(N):
        ax.text(w, 0.0, "×" if not alive[w] else str(w), ha="center", va="center", fontsize=5.5,
                zorder=4)
    ax.text(-1.2, 1, "types", ha="right", va="center", fontsize=7)
    ax.text(-1.2, 0, f"groups\n(cap. {plan.depth})", ha="right", va="center", fontsize=7)
    ax.set_xlim(-4.2, N - 0.4)
    ax.set_ylim(-0.25, 1.25)
    ax.axis("off")
    ax.set_title(f"Phase 1 graph at S* = {plan.depth}: a perfect matching exists")
    fig.tight_layout()
    return fig


def make_sequence_stats(stats_by_r: dict):
    """Figure: RECTLR along failure sequences, one column per (N, r) in ``stats_by_r``.

    Rows: share of events settled by Phase 0 vs failed groups k (binned); S* against the bound
    c(k) = ceil(N/(N−k)); moved shards per reordering event.
    """
    import matplotlib.pyplot as plt

    from spare_lib.figures.style import PAGE_IN

    keys = list(stats_by_r)
    fig, axes = plt.subplots(3, len(keys), figsize=(PAGE_IN, 5.0), squeeze=False)
    for j, key in enumerate(keys):
        df = stats_by_r[key]
        live = df[df["outcome"] != "wipeout"]
        N = key[0]
        edges = np.linspace(0, live["k"].max() + 1, 21)
        idx = np.digitize(live["k"], edges) - 1
        share = [np.mean(live["outcome"].to_numpy()[idx == i] == "fixed") if np.any(idx == i)
                 else np.nan for i in range(20)]
        ax = axes[0, j]
        ax.plot(0.5 * (edges[1:] + edges[:-1]), share, marker="o")
        ax.set_ylim(0, 1)
        ax.set_xlabel("failed groups k")
        ax.set_ylabel("share settled by Phase 0")
        ax.set_title(f"N={N}, r={key[1]}: overall {phase0_share(df):.0%} by Phase 0")
        ax = axes[1, j]
        kk = np.arange(live["k"].max() + 1)
        ax.step(kk, -(-N // (N - kk)), where="post", color="#444444", lw=1.0, label="c(k)")
        above = live[live["s_star"] > live["c_k"]]
        mean_s = live.groupby("k")["s_star"].mean()
        ax.plot(mean_s.index, mean_s.to_numpy(), ls="none", marker=".", ms=1.5,
                color="#0072B2", label="S* (mean per k)")
        if len(above):
            ax.plot(above["k"], above["s_star"], ls="none", marker="x", ms=4, color="#D55E00",
                    label="events with S* > c(k)")
        ax.set_xlabel("failed groups k")
        ax.set_ylabel("depth")
        ax.set_title(f"S* = c(k) in {np.mean(live['s_star'] == live['c_k']):.2%} of events")
        ax.legend(loc="upper left")
        ax = axes[2, j]
        mv = live.loc[live["outcome"] == "reordered", "moved"].to_numpy()
        if mv.size:
            bins = np.arange(mv.max() + 2) - 0.5
            ax.hist(mv, bins=bins, color="#D55E00", density=True)
            ax.set_yscale("log")
        ax.set_xlabel("shards moved per reordering event")
        ax.set_ylabel("share (log)")
    fig.tight_layout()
    return fig


def make_phase0_share_by_r(share: dict):
    """Figure: share of failure events settled by Phase 0 vs r; ``share[N] = (r_list, shares)``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    markers = "os^D"
    for i, (N, (rs, sh)) in enumerate(share.items()):
        ax.plot(rs, sh, marker=markers[i % 4], label=f"N={N}")
    ax.axhspan(0.3, 0.5, color="#999999", alpha=0.2, lw=0, label="SPEC §8: 30–50% (r ≥ 5)")
    ax.set_ylim(0, 1)
    ax.set_xlabel("redundancy r")
    ax.set_ylabel("share settled by Phase 0")
    ax.legend()
    return fig


def make_controller_speed(times: dict):
    """Figure: controller time per failure event, ``times[label] = array of seconds``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    labels = list(times)
    data = [np.asarray(times[k]) * 1e3 for k in labels]
    ax.boxplot(data, whis=(1, 99), showfliers=False)
    ax.set_xticks(range(1, len(labels) + 1), labels, rotation=15)
    ax.set_yscale("log")
    ax.set_ylabel("time per failure event (ms)")
    ax.axhline(100, color="#999999", ls=":", lw=1)
    ax.text(0.55, 110, "paper: ≈0.1 s at N≈10³", fontsize=6, color="#555555")
    return fig
