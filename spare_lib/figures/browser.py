"""The operating system's Chromium, driven by Playwright: find it, and take a page's picture.

Playwright's own browser download is not used: the browser is Debian's ``chromium`` package
(``.ci/run`` installs it) or ``SPARE_CHROMIUM``. The browser tests (``tests/browser/``) and
``make book``'s screenshot (:func:`spare_lib.figures.book.main`, ``--screenshot``) share it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome",
               "google-chrome-stable")


def find_chromium() -> str | None:
    """Path of a Chromium: ``SPARE_CHROMIUM``, Debian's binary, or one on PATH; None if none."""
    env = os.environ.get("SPARE_CHROMIUM")
    for c in ((env,) if env else _CANDIDATES):
        path = c if os.path.isabs(c) else shutil.which(c)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def screenshot_file(html: Path, png: Path, *, width: int = 1280, height: int = 1600,
                    fragment: str = "") -> str:
    """Open a local HTML file in headless Chromium with every remote request refused, save a
    picture of ``height`` pixels from its top (or from the element ``#fragment``, a section's
    id) to ``png`` and return the page's visible text.

    Raises
    ------
    RuntimeError
        If Playwright or a Chromium is missing, or the page asked for anything remote (a book
        page must work offline).
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise RuntimeError("the screenshot needs the 'browser' extra: pip install -e '.[browser]'") \
            from exc
    exe = find_chromium()
    if exe is None:
        raise RuntimeError("no Chromium found (apt-get install chromium, or set SPARE_CHROMIUM)")
    remote: list[str] = []

    def route(r) -> None:  # noqa: ANN001 - a Playwright Route
        if r.request.url.startswith(("file://", "data:", "blob:")):
            r.continue_()
        else:
            remote.append(r.request.url)
            r.abort()

    png.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True,
                                     args=["--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_context(viewport={"width": width, "height": height}).new_page()
            page.route("**/*", route)
            page.goto(Path(html).resolve().as_uri() + (f"#{fragment}" if fragment else ""),
                      wait_until="load")
            page.wait_for_timeout(1500)  # MathJax typesets after the load event
            page.screenshot(path=str(png))
            text = page.inner_text("body")
        finally:
            browser.close()
    if remote:
        raise RuntimeError(f"{html.name} asked for remote resources: {remote[:3]}")
    return text


__all__ = ["find_chromium", "screenshot_file"]
