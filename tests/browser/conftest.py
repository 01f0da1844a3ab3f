"""Real-browser tests: Playwright for Python driving the operating system's Chromium.

Playwright's own browser download is not used: the browser is Debian's ``chromium`` package
(``.ci/run`` installs it), launched with ``executable_path``; ``SPARE_CHROMIUM`` overrides the
path. Without Playwright or a Chromium every test here is skipped with a one-line reason (pytest
``-ra`` prints it). Servers run on 127.0.0.1 at a free port, in their own process group, and are
stopped by the fixture; requests to any other host are aborted, so a page that tried to reach a
CDN still renders (and the test says which URLs it tried). Screenshots go to
``_build/test-artifacts/`` (gitignored).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from spare_lib.config import REPO_ROOT
from spare_lib.figures.browser import find_chromium

ARTIFACTS = REPO_ROOT / "_build" / "test-artifacts"
#: Generous bounds: the suite runs them next to other tests on 2 shared cores.
TIMEOUT_MS = 120_000
SERVER_START_S = 120.0

@pytest.fixture(scope="session")
def chromium_path() -> str:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("browser tests skipped: playwright is not installed (pip install -e '.[browser]')")
    path = find_chromium()
    if path is None:
        pytest.skip("browser tests skipped: no Chromium found (apt-get install chromium, or set "
                    "SPARE_CHROMIUM)")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def serve(cmd: list[str], port: int, env: dict[str, str], log: Path,
          cwd: Path | None = None) -> Iterator[subprocess.Popen]:
    """Run a server until it listens on 127.0.0.1:``port`` (bounded); stop it afterwards."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while not _listening(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text()[-3000:]
                pytest.fail(f"{cmd[0]} did not start on port {port}:\n{tail}")
            time.sleep(0.3)
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the server and its kernels: our own group
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)


@pytest.fixture
def browser_page(chromium_path: str, request: pytest.FixtureRequest):
    """A Playwright page in headless Chromium; only 127.0.0.1 is reachable."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, headless=True,
                                     args=["--disable-gpu", "--disable-dev-shm-usage"])
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 1400})
            blocked: list[str] = []

            def route(r) -> None:  # noqa: ANN001
                if r.request.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")):
                    r.continue_()
                else:
                    blocked.append(r.request.url)
                    r.abort()

            context.route("**/*", route)
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.blocked_urls = blocked  # type: ignore[attr-defined]
            yield page
            if getattr(request.node, "rep_call_failed", False):  # keep what the browser showed
                with contextlib.suppress(Exception):
                    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-failed.png"),
                                    full_page=True)
        finally:
            browser.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ANN001, ANN201
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call":
        item.rep_call_failed = rep.failed


def wait_changed(locator, before: bytes, timeout_s: float = 60.0) -> bytes:  # noqa: ANN001
    """Poll an element's screenshot until it differs from ``before``; return the new one."""
    deadline = time.monotonic() + timeout_s
    while True:
        now = locator.screenshot()
        if now != before:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(f"the element did not change within {timeout_s:.0f} s")
        time.sleep(0.3)
