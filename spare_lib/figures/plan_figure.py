"""The planner's plot (notebook ``90_explore``, ``make app``): the fast model's curves of a plan.

:func:`make_plan_figure` draws, for every method of a
:class:`~spare_lib.cluster.planning.PlanResult`, the fast model's TTT/T0 (Eq. 7's closed forms
or the predictive model, whichever the plan used) and its availability A* against r, with each
method's optimum starred and the selected r circled; :func:`make_planner_png` renders it to PNG
bytes for the app's image widget. :func:`method_range` and :func:`clip_r` give the r a method's
curve spans.
"""

from __future__ import annotations

import io
import math
from typing import Any

from spare_lib.cluster.planning import PlanResult
from spare_lib.registry.methods import METHODS
from spare_lib.registry.methods import method as method_spec

#: TTT/T0 axis of the curves: at most this many times the best method's (a method that never
#: trains, CKPT-only at 600k GPUs, is named in the legend as off the scale).
Y_SPAN = 6.0

#: Colours of the methods the paper's style (:data:`~spare_lib.figures.style.METHOD_STYLE`) does
#: not name (Okabe–Ito, colour-blind safe).
_EXTRA_STYLE = ({"color": "#009E73", "marker": "D", "linestyle": "-."},
                {"color": "#CC79A7", "marker": "P", "linestyle": "--"},
                {"color": "#E69F00", "marker": "v", "linestyle": ":"},
                {"color": "#56B4E9", "marker": "s", "linestyle": "-."})


def method_range(res: PlanResult, name: str) -> tuple[int, int]:
    """Smallest and largest r on the fast model's curve of method ``name``."""
    rs = [p.r for p in res.fast.curves[name]]
    return min(rs), max(rs)


def clip_r(res: PlanResult, name: str, r: int) -> int:
    """``r`` clipped to the method's curve (:func:`method_range`; r = 1 without redundancy)."""
    lo, hi = method_range(res, name)
    return int(min(max(int(r), lo), hi))


def format_ttt(v: float) -> str:
    """TTT/T0 as the planner prints it: 3 decimals, 4 significant digits from 1000, or inf."""
    return "inf" if not math.isfinite(v) else (f"{v:.3f}" if v < 1000 else f"{v:.4g}")


def make_plan_figure(res: PlanResult, name: str | None = None, r: int | None = None) -> Any:
    """The fast model's TTT/T0 (log scale, at most :data:`Y_SPAN` times the best; a method
    above is named in the legend) and availability A* against r of every method of ``res``:
    stars at each method's optimum, methods without r as horizontal lines, the selected method's
    ``r`` dotted. Returns a matplotlib Figure."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

    from spare_lib.figures.style import METHOD_STYLE, PAGE_IN

    fast = res.fast
    fig, (ax_j, ax_a) = plt.subplots(1, 2, figsize=(PAGE_IN, 2.6))
    finite = [p.ttt_over_t0 for n in res.request.methods for p in fast.curves[n]
              if math.isfinite(p.ttt_over_t0)]
    low = min(finite) if finite else 1.0
    top = min(max(finite), Y_SPAN * low) if finite else 10.0
    for n in res.request.methods:
        best, curve, label = fast.best(n), fast.curves[n], method_spec(n).label
        sty = METHOD_STYLE.get(label, _EXTRA_STYLE[list(METHODS).index(n) % len(_EXTRA_STYLE)])
        if best.ttt_over_t0 > top:
            label += f" (TTT/T0 {format_ttt(best.ttt_over_t0)}, off scale)"
        if not method_spec(n).redundancy:
            for ax, v in ((ax_j, best.ttt_over_t0), (ax_a, 100 * best.availability)):
                if math.isfinite(v):
                    ax.axhline(v, color=sty["color"], linestyle=sty["linestyle"], label=label)
            continue
        rs = [p.r for p in curve]
        for ax, key, scale in ((ax_j, "ttt_over_t0", 1.0), (ax_a, "availability", 100.0)):
            ax.plot(rs, [scale * getattr(p, key) for p in curve], color=sty["color"],
                    marker=sty["marker"], linestyle=sty["linestyle"], markersize=3, label=label)
            ax.plot([best.r], [scale * getattr(best, key)], marker="*", markersize=11,
                    color=sty["color"], markeredgecolor="k", linestyle="none")
    if name is not None and r is not None and method_range(res, name)[1] > 1:
        q = fast.point(name, clip_r(res, name, r))  # the selected point, circled
        for ax, v in ((ax_j, q.ttt_over_t0), (ax_a, 100 * q.availability)):
            ax.axvline(q.r, color="0.5", linestyle=":", linewidth=1)
            ax.plot([q.r], [v], marker="o", markersize=10, markerfacecolor="none",
                    markeredgecolor="k", linestyle="none")
    ax_j.set_yscale("log")
    ax_j.set_ylim(low / 1.05, top * 1.1)
    ax_j.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax_j.yaxis.set_minor_formatter(NullFormatter())
    ticks: list[float] = []
    for t in (1, 1.1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 7, 10, 15, 20, 30, 50, 100):
        if low / 1.05 <= t <= top * 1.1 and (not ticks or t / ticks[-1] >= 1.3):
            ticks.append(t)
    if len(ticks) >= 2:
        ax_j.set_yticks(ticks)
    src = "predictive model" if fast.source == "model" else "closed forms, Eq. 7"
    ax_j.set_ylabel(f"TTT / T0 ({src})")
    ax_a.set_ylabel("availability A* (%)")
    ax_a.set_ylim(0, 100)
    for ax in (ax_j, ax_a):
        ax.set_xlabel("redundancy r")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_a.legend(loc="lower right", fontsize="x-small")
    c, b = res.request.spec, res.verdict.best
    fig.suptitle(f"N = {c.N:,}, m = {res.model_spec.system_mtbf_s / 60:.3g} min, T_r = "
                 f"{c.restart_s / 60:.3g} min, T_s = {c.checkpoint_s:.3g} s: best "
                 f"{b.label} (r = {b.r}, {res.verdict.source})", fontsize="small")
    fig.subplots_adjust(left=0.09, right=0.985, bottom=0.17, top=0.88, wspace=0.28)  # fixed:
    return fig  # a tight layout would cost a draw per redraw


def make_planner_png(res: PlanResult, name: str | None = None, r: int | None = None,
                     dpi: int = 110) -> bytes:
    """PNG of :func:`make_plan_figure` in the paper's style, drawn to bytes (not through the
    notebook's matplotlib backend), so it looks the same in JupyterLab, in Voilà and under
    ``MPLBACKEND=Agg``."""
    import matplotlib.pyplot as plt

    from spare_lib.figures.style import style

    buf = io.BytesIO()
    with style():
        fig = make_plan_figure(res, name, r)
        try:
            fig.savefig(buf, format="png", dpi=dpi, bbox_inches=None)
        finally:
            plt.close(fig)
    return buf.getvalue()


__all__ = ["Y_SPAN", "clip_r", "format_ttt", "make_plan_figure", "make_planner_png",
           "method_range"]
