"""Figures of notebook 70 (real failure logs): Figs. 6–7 redone from the planner's results.

``make_trace_vs_r`` draws :class:`~spare_lib.cluster.planning.PlanResult` objects as they come
from :func:`~spare_lib.cluster.planning.run_plan`; the tests check that what it draws is the
plan's own numbers (stage-1 points, stars at the choices), nothing recomputed.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from spare_lib.cluster.planning import PlanRequest, cluster_spec, run_plan
from spare_lib.figures.failures import make_trace_vs_r

#: A small cluster that fails often: N = 20 groups, m = 1 min, 10-s steps (a plan in seconds).
SMALL = cluster_spec(160, 8, system_mtbf_s=60.0, restart_s=100.0, checkpoint_s=5.0, step_s=10.0,
                     allreduce_s=1.0)


def _plan(seed: int, factors: tuple[float, ...] = ()) -> object:
    return run_plan(PlanRequest(SMALL, methods=("spare", "rep"), spare_r=(2, 3, 4), rep_r=(2, 3),
                                checkpoint_factors=factors, trials=2, steps=40, seed=seed,
                                workers=1))


@pytest.fixture(scope="module")
def plans() -> dict:
    """Two failure models' plans; the second with a checkpoint search (stage-2 points)."""
    return {"model A": _plan(1), "model B": _plan(2, factors=(0.5, 2.0))}


def _curves(ax) -> dict:
    """label -> (x, y, has error bars) of each errorbar container of an axes."""
    out = {}
    for c in ax.containers:
        x, y = c.lines[0].get_data()
        out[c.get_label()] = (np.asarray(x), np.asarray(y), c.has_yerr)
    return out


def _stars(ax) -> list:
    return [np.column_stack(line.get_data()) for line in ax.get_lines() if line.get_marker() == "*"]


@pytest.mark.parametrize("metric", ["ttt", "availability"])
def test_trace_vs_r_draws_the_plans_stage_one_points_and_stars_at_the_choices(plans, metric):
    assert any(p.stage == 2 for p in plans["model B"].points)  # the stage-2 points exist...
    fig = make_trace_vs_r(plans, metric, "y")
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == list(plans)
    scale = 1.0 if metric == "ttt" else 100.0
    for ax, res in zip(axes, plans.values(), strict=True):
        curves = _curves(ax)
        assert set(curves) == {"SPARe+CKPT", "Rep+CKPT"}
        stars = np.vstack(_stars(ax))
        for name in ("spare", "rep"):
            pts = sorted((p for p in res.points if p.method == name and p.stage == 1),
                         key=lambda p: p.r)  # ...but only stage 1 is drawn, one point per r
            x, y, has_err = curves[pts[0].label]
            assert list(x) == [p.r for p in pts]
            value = [p.ttt_mean if metric == "ttt" else p.availability_mean for p in pts]
            np.testing.assert_allclose(y, scale * np.asarray(value))
            assert has_err == (metric == "ttt")
            best = next(p for p in pts if p.r == res.choice(name).r)
            want = (best.r, scale * (best.ttt_mean if metric == "ttt" else best.availability_mean))
            assert any(np.allclose(s, want) for s in stars), (name, want, stars)
    assert (axes[0].get_yscale() == "log") == (metric == "ttt")
    plt.close(fig)


def test_trace_vs_r_error_bars_are_two_standard_errors(plans):
    fig = make_trace_vs_r({"model A": plans["model A"]}, "ttt", "y")
    res = plans["model A"]
    c = next(c for c in fig.axes[0].containers if c.get_label() == "SPARe+CKPT")
    pts = sorted((p for p in res.points if p.method == "spare"), key=lambda p: p.r)
    segs = c.lines[2][0].get_segments()
    half = [0.5 * (s[1, 1] - s[0, 1]) for s in segs]
    np.testing.assert_allclose(half, [2 * p.ttt_se for p in pts])
    plt.close(fig)


def test_trace_vs_r_refuses_what_it_cannot_draw(plans):
    with pytest.raises(ValueError, match="metric must be 'ttt' or 'availability', got 'tt'"):
        make_trace_vs_r(plans, "tt", "y")
    with pytest.raises(ValueError, match="plans must hold at least one"):
        make_trace_vs_r({}, "ttt", "y")
    model_only = run_plan(PlanRequest(SMALL, methods=("spare", "rep"), steps=40))
    with pytest.raises(ValueError, match="plans must be simulated.*'fast'"):
        make_trace_vs_r({"fast": model_only}, "ttt", "y")
