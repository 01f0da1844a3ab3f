"""`make book` in smoke mode: every notebook has a page, every registered figure is on its page,
equations are typeset by the site's own MathJax, and no page loads anything from the network."""

from __future__ import annotations

import json
import re

import pytest

from spare_lib.config import FIGURES_DIR, REPO_ROOT
from spare_lib.figures import REGISTRY
from spare_lib.figures.book import build_book, landing_page, pick_notebook, stage_notebook
from spare_lib.figures.pipeline import NOTEBOOK_DIR, notebook_paths, run_notebook

pytest.importorskip("myst_nb", reason="the book needs the 'book' extra (pip install -e '.[book]')")
pytest.importorskip("jupyter_server_mathjax", reason="the book needs the 'book' extra")

#: Executed in smoke mode for the test: the sympy derivations (equations) and the widgets page.
EXECUTED = ("30_theory", "90_explore")


@pytest.mark.notebook
def test_book_smoke_every_page_every_figure_equations_offline(tmp_path):
    # one build for all the checks (a module fixture would build once per xdist worker)
    for stem in EXECUTED:
        run_notebook(NOTEBOOK_DIR / f"{stem}.ipynb", smoke=True, out_dir=tmp_path / "out",
                     executed_dir=tmp_path / "executed")
    html = tmp_path / "html"
    statuses = build_book(html, source_dir=tmp_path / "src", executed_dir=tmp_path / "executed")

    # every notebook has a page, linked from the landing page and from README's figure table
    assert {s: st for s, st in statuses.items() if s in EXECUTED} == dict.fromkeys(EXECUTED, "executed")
    assert all(st == "stripped: no executed copy" for s, st in statuses.items() if s not in EXECUTED)
    index = (html / "index.html").read_text()
    tables = index.split("<table")[1:]  # the figure table: the one that links notebooks
    table = next((t[:t.index("</table>")] for t in tables if ".html\"" in t.split("</table>")[0]),
                 "")
    readme = (REPO_ROOT / "README.md").read_text()
    for path in notebook_paths():
        assert (html / f"{path.stem}.html").exists(), path.stem
        assert f'href="{path.stem}.html"' in index, f"landing page does not link {path.stem}"
        if f"](notebooks/{path.stem}.ipynb)" in readme:  # README's table is test_hygiene's
            assert f'href="{path.stem}.html"' in table, f"figure table does not link {path.stem}"

    # every registered figure is on its notebook's page (its committed PNG; named in a warning
    # while `make figures` has not made it yet; test_hygiene reports that, and registered
    # figures of notebooks that do not exist)
    stems = {p.stem for p in notebook_paths()}
    for spec in (s for s in REGISTRY if s.notebook in stems):
        page = (html / f"{spec.notebook}.html").read_text()
        if (FIGURES_DIR / f"{spec.stem}.png").exists():
            assert f'src="_images/{spec.stem}.png"' in page, f"{spec.stem} missing from {spec.notebook}"
            assert (html / "_images" / f"{spec.stem}.png").stat().st_size > 0
        else:
            assert spec.stem in page and "Figure not generated yet" in page, spec.stem

    # equations typeset by the site's own MathJax; widgets replaced by a note; nothing remote
    theory = (html / "30_theory.html").read_text()
    assert theory.count('class="math notranslate nohighlight"') >= 5  # sympy's $$ ... $$ outputs
    assert '<script async="async" src="_static/mathjax/MathJax.js' in theory
    assert (html / "_static" / "mathjax" / "MathJax.js").exists()
    explore = (html / "90_explore.html").read_text()
    assert "serves this notebook as a web app" in explore  # the note where the widgets were
    assert "widget-view" not in explore and "embed-amd" not in explore
    for page in html.glob("*.html"):
        remote = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?://[^"]+)"', page.read_text())
        assert not remote, f"{page.name} loads {remote}"


def test_stale_executed_copy_falls_back_to_the_stripped_notebook(tmp_path):
    path = NOTEBOOK_DIR / "90_explore.ipynb"
    assert pick_notebook(path, tmp_path)[1] == "stripped: no executed copy"
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"] = ["# an older version\n"]
    (tmp_path / path.name).write_text(json.dumps(nb))
    shown, status = pick_notebook(path, tmp_path)
    assert status == "stripped: changed since executed" and shown == json.loads(path.read_text())
    page = stage_notebook(shown, path.stem, status)
    text = json.dumps(page)
    assert "make figures" in text and "figures/explore_default.png" in text


def test_landing_page_links_notebook_pages_and_lists_them():
    text, files = landing_page(REPO_ROOT / "README.md", ["10_stacking_and_wipeout", "90_explore"])
    assert "](notebooks/" not in text and "](90_explore.ipynb)" in text
    assert text.rstrip().endswith("90_explore\n```")
    assert "figures/explore_default.png" in files
