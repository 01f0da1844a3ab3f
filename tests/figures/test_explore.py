"""The planner of 90_explore without a browser: its text, its plot and its widget callbacks."""

from __future__ import annotations

import pytest

from spare_lib import theory as th
from spare_lib.cluster import cluster_spec, plan
from spare_lib.cluster.planning import LABELS, METHODS
from spare_lib.figures.explore import (
    DEFAULT_CLUSTER,
    clip_r,
    make_planner_png,
    recommendation_text,
    strategies,
)


@pytest.fixture(scope="module")
def default():
    return plan(cluster_spec(**DEFAULT_CLUSTER))


def test_strategies_come_from_the_library():
    assert strategies() == [(LABELS[m], m) for m in METHODS]


def test_recommendation_text_follows_the_plan(default):
    text = recommendation_text(default, "spare", 5)
    assert "N = 600 groups" in text and "SPARe+CKPT: recommended r = 8," in text
    p5 = default.point("spare", 5)
    assert f"your r = 5: checkpoint every {p5.checkpoint_period_s:.0f} s" in text
    rep = recommendation_text(default, "rep", 3)
    assert f"Rep+CKPT: recommended r = {default.rep.r}," in rep and "your r = 3" in rep
    ckpt = recommendation_text(default, "ckpt", 8)
    assert "CKPT-only: recommended r = 1," in ckpt and "your r" not in ckpt
    with pytest.raises(ValueError, match="strategy"):
        recommendation_text(default, "raid", 3)


def test_clip_r(default):
    assert clip_r(default, "ckpt", 9) == 1
    assert clip_r(default, "spare", 99) == default.r_max and clip_r(default, "rep", 0) == 2


def test_plot_png_changes_with_r(default):
    a, b = make_planner_png(default, "spare", 5), make_planner_png(default, "spare", 9)
    assert a.startswith(b"\x89PNG") and a != b


def test_planner_callbacks_replan_and_simulate():
    pytest.importorskip("ipywidgets")
    from spare_lib.figures.explore import Planner

    pl = Planner(trials=1, steps=50, seed=1)
    c = pl.controls
    assert "recommended r = 8," in pl.recommendation.value
    png = pl.plot.value
    c["gpus_per_group"].value = 3000  # N = 200
    at_200 = plan(cluster_spec(600_000, 3000, checkpoint_s=th.T_S_PAPER, step_s=70.0))
    assert "N = 200 groups" in pl.recommendation.value
    assert f"recommended r = {at_200.spare.r}," in pl.recommendation.value
    assert pl.plot.value != png and c["r"].max == at_200.r_max
    c["gpus_per_group"].value = 400_000  # not two groups: says so, keeps the last plot
    assert "gpus_per_group must be in" in pl.recommendation.value and pl.closed is None
    assert pl.simulate() is None and "fix the inputs" in pl.status.value
    c["gpus_per_group"].value = 3000
    c["strategy"].value = "ckpt"
    assert c["r"].value == 1 and c["r"].disabled
    c["strategy"].value = "rep"
    assert c["r"].value == 8 and not c["r"].disabled  # the r the user had
    sp = pl.simulate()
    assert {p.label for p in sp.points} == {"SPARe+CKPT", "Rep+CKPT"}
    assert any(p.label == "Rep+CKPT" and p.r == 8 for p in sp.points)
    assert pl.status.value.startswith("done: Rep+CKPT at r = 8, N = 200")
