"""Notebook 80's figure builders draw what they are given (the numbers come from
spare_lib.cluster.planning.strategies), one style per registered method."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.markers import MarkerStyle  # noqa: E402

from spare_lib.cluster.planning.strategies import summarize_sweep  # noqa: E402
from spare_lib.figures.strategies import (  # noqa: E402
    STRATEGY_STYLE,
    make_strategy_sweep,
    make_versus,
)
from spare_lib.registry.methods import METHODS  # noqa: E402


def test_every_registered_method_has_a_style() -> None:
    assert set(STRATEGY_STYLE) == set(METHODS)
    assert len({s["color"] for s in STRATEGY_STYLE.values()}) == len(METHODS)
    # open markers mean "stopped at the wall cap": every marker must have a face to leave empty
    assert all(MarkerStyle(s["marker"]).is_filled() for s in STRATEGY_STYLE.values())
    # the design figures (notebook 95) draw with the same styles, every method included
    from spare_lib.figures.design import METHOD_STYLE as DESIGN_STYLE

    assert DESIGN_STYLE == {m: (s["color"], s["marker"]) for m, s in STRATEGY_STYLE.items()}


def _versus_rows() -> pd.DataFrame:
    rows = []
    for rejoin in ("blocking rejoin", "non-blocking rejoin"):
        for stall in (0.1, 180.0):
            for m, ratio, tied, fin in (("rep", 0.6, False, True), ("ckpt", 0.2, False, False),
                                        ("spare+repair", 1.0, True, True),
                                        ("elastic-drop", 1.8, False, True),
                                        ("elastic-rebalance", 1.4, False, True)):
                lo, hi = (ratio - 0.05, ratio + 0.05) if fin else (float("nan"),) * 2
                rows.append({"rejoin": rejoin, "stall_s": stall, "method": m,
                             "label": METHODS[m].label, "ratio": ratio, "ratio_ci_low": lo,
                             "ratio_ci_high": hi, "tied": tied, "finished": fin})
    return pd.DataFrame(rows)


def test_make_versus_draws_one_marker_per_comparison_and_an_interval_when_there_is_one() -> None:
    rows = _versus_rows()
    fig = make_versus(rows)
    axes = fig.axes
    assert [a.get_title() for a in axes] == ["blocking rejoin", "non-blocking rejoin"]
    for ax in axes:
        markers = sum(len(c.get_offsets()) for c in ax.collections)
        assert markers == 2 * 5  # two stalls, five methods against SPARe+CKPT
        intervals = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 2
                     and ln.get_xdata()[0] != ln.get_xdata()[1]]
        assert len(intervals) == 2 * 4  # CKPT-only stopped at the cap: no interval
        assert ax.get_xscale() == "log"
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["stall 0.1 s", "stall 180 s"]
    (legend,) = fig.legends
    assert {t.get_text() for t in legend.get_texts()} == {METHODS[m].label for m in set(rows.method)}
    matplotlib.pyplot.close(fig)


def test_make_strategy_sweep_draws_the_summary() -> None:
    runs = pd.DataFrame([{"N": N, "value": v, "strategy": s, "label": METHODS[s].label, "r": 1,
                          "trial": t, "ttt_over_t0": 1.0 + 0.1 * t + (s == "spare"),
                          "availability": 1.0, "overhead": 1.0, "dropped_sample_fraction": 0.0,
                          "stall_share": 0.0, "completed": True}
                         for N in (100, 600) for v in (1.0, 10.0) for s in ("spare", "elastic-drop")
                         for t in (0, 1)])
    summ = summarize_sweep(runs)
    fig = make_strategy_sweep(summ, "stall (s)")
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    spare = next(ln for ln in ax.get_lines() if ln.get_label() == METHODS["spare"].label)
    assert list(spare.get_ydata()) == pytest.approx([2.05, 2.05])
    matplotlib.pyplot.close(fig)
