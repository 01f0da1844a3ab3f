"""The planner app (``make app``: Voilà on 90_explore) in a real browser.

Changing N (GPUs per group) and r must change the displayed recommendation to what
``spare_lib.cluster.planning.plan`` says for the new inputs, and redraw the plot; the "simulate"
button must run the simulation of the new point.
"""

from __future__ import annotations

import re

import pytest

from spare_lib import theory as th
from spare_lib.cluster import cluster_spec, plan
from spare_lib.figures.app import app_env, prepare_app, voila_command

from .conftest import ARTIFACTS, TIMEOUT_MS, free_port, serve, wait_changed

pytestmark = pytest.mark.browser


def set_readout(page, control: str, value: str) -> None:  # noqa: ANN001
    """Type a value into a slider's editable readout (what a user does for an exact value)."""
    readout = page.locator(f".spare-input-{control} .widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    page.keyboard.press("Enter")


def test_app_recommendation_and_plot_follow_the_inputs(browser_page, tmp_path):
    from playwright.sync_api import expect

    page = browser_page
    nb = prepare_app(tmp_path / "app", smoke=True)
    port = free_port()
    with serve(voila_command(nb, port), port, app_env(smoke=True), tmp_path / "voila.log"):
        page.goto(f"http://127.0.0.1:{port}/", timeout=TIMEOUT_MS)
        rec = page.locator(".spare-recommendation")
        plot = page.locator("img.spare-plot")
        status = page.locator(".spare-sim-status")
        # the notebook's own headless run of the button has finished: the app is ready
        expect(status).to_contain_text("done:")
        expect(rec).to_contain_text("N = 600 groups")
        expect(rec).to_contain_text("SPARe+CKPT: recommended r = 8,")
        before = plot.screenshot()

        # N: 600,000 GPUs in groups of 3000 -> N = 200 (step time stays 70 s)
        box = page.locator(".spare-input-gpus-per-group input")
        box.fill("3000")
        box.press("Enter")
        at_200 = plan(cluster_spec(600_000, 3000, system_mtbf_s=300, restart_s=3600,
                                   checkpoint_s=th.T_S_PAPER, step_s=70.0))
        expect(rec).to_contain_text("N = 200 groups")
        expect(rec).to_contain_text(f"SPARe+CKPT: recommended r = {at_200.spare.r},")
        after_n = wait_changed(plot, before)

        # r: 8 -> 5 on the slider
        set_readout(page, "r", "5")
        p5 = at_200.point("spare", 5)
        expect(rec).to_contain_text(f"your r = 5: checkpoint every {p5.checkpoint_period_s:.0f} s")
        expect(rec).to_contain_text(f"TTT/T0 = {p5.ttt_over_t0:.3f}")
        wait_changed(plot, after_n)

        # the button simulates the new point, with a status line while it runs
        page.locator("button.spare-simulate").click()
        expect(status).to_contain_text("done: SPARe+CKPT at r = 5, N = 200")
        table = page.locator(".spare-sim-output table")
        expect(table).to_contain_text("SPARe+CKPT")
        rows = [re.split(r"\s+", t.strip()) for t in table.locator("tbody tr").all_inner_texts()]
        assert any(r[1:4] == ["SPARe+CKPT", "1", "5"] for r in rows), rows
        page.screenshot(path=str(ARTIFACTS / "app.png"), full_page=True)
