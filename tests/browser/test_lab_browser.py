"""90_explore in JupyterLab in a real browser: open the whole notebook (with the cells the app
leaves out), run all cells, move the r slider, see the selected method's lines and the plot
change."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from spare_lib.figures.app import app_env, prepare_app

from .conftest import ARTIFACTS, TIMEOUT_MS, free_port, serve, wait_changed

pytestmark = pytest.mark.browser


def lab_command(root: Path, port: int) -> list[str]:
    jupyter = Path(sys.executable).parent / "jupyter"
    return [str(jupyter), "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root}",
            "--ServerApp.port_retries=0", "--allow-root", "--LabApp.check_for_updates_class="
            "jupyterlab.NeverCheckForUpdate"]


def test_lab_run_all_then_slider_changes_the_output(browser_page, tmp_path):
    from playwright.sync_api import expect

    page = browser_page
    root = tmp_path / "lab"
    prepare_app(root, smoke=True, app=False)  # the whole notebook, SMOKE = True, outputs in tmp
    env = app_env(smoke=True)
    for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings")):
        env[var] = str(tmp_path / sub)
        os.makedirs(env[var], exist_ok=True)
    notify = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    notify.mkdir(parents=True)  # no "get notified about Jupyter news?" toast over the widgets
    (notify / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    port = free_port()
    with serve(lab_command(root, port), port, env, tmp_path / "lab.log"):
        page.goto(f"http://127.0.0.1:{port}/lab/tree/90_explore.ipynb", timeout=TIMEOUT_MS)
        expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible()
        # the kernel is connected and idle (the status bar says so) before "Run All Cells"
        expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle")

        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()

        rec = page.locator(".spare-recommendation")
        plot = page.locator("img.spare-plot")
        expect(page.locator(".spare-sim-status")).to_contain_text("done:")  # the last cell ran
        expect(rec).to_contain_text("your r = 8:")
        plot.scroll_into_view_if_needed()
        before = plot.screenshot()

        # drag the r slider's handle to the right
        handle = page.locator(".spare-input-r .noUi-handle")
        handle.scroll_into_view_if_needed()
        box = handle.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 45, y, steps=8)
        page.mouse.up()
        readout = page.locator(".spare-input-r .widget-readout")
        expect(readout).not_to_have_text("8")
        r_new = int(readout.inner_text())
        assert r_new > 8
        expect(rec).to_contain_text(f"your r = {r_new}:")
        wait_changed(plot, before)
        page.screenshot(path=str(ARTIFACTS / "lab.png"), full_page=False)
