"""``make book``: a static HTML site of the notebooks (Sphinx + MyST-NB), readable offline.

The book is staged under ``_build/book/`` and built into ``_build/html/`` (both gitignored):

* the landing page is the README, with the figure table linking to each notebook's page;
* one page per notebook, in reading order (their ``NN_`` prefix); a page shows the executed copy
  that ``make figures`` keeps in ``_build/executed/`` (:data:`~spare_lib.figures.pipeline.EXECUTED_DIR`),
  so nothing is executed twice. Without an executed copy, or when the notebook changed since it was
  executed, the page shows the stripped notebook and says so (and the build prints why);
* every registered figure (:data:`~spare_lib.figures.REGISTRY`) is shown with its caption right
  after the cell that saves it, from the committed full-run PNG in ``figures/``; the widgets of
  ``90_explore`` need a kernel, so its page keeps this static figure and points at ``make app``;
* equations (the sympy derivations print ``$$ ... $$``) are rendered by MathJax 2 copied from the
  ``jupyter-server-mathjax`` package into the site, and the theme's assets ship with it: the build
  and the pages fetch nothing from the network.

Usage: ``python -m spare_lib.figures.book`` (``make book``), then open ``_build/html/index.html``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from spare_lib.config import FIGURES_DIR, REPO_ROOT
from spare_lib.figures.pipeline import EXECUTED_DIR, notebook_paths
from spare_lib.figures.registry import by_notebook

#: Sphinx configuration (conf.py) of the book.
CONF_DIR = REPO_ROOT / "docs" / "book"
#: Staged sources and the built site.
SOURCE_DIR = REPO_ROOT / "_build" / "book"
HTML_DIR = REPO_ROOT / "_build" / "html"

_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_APP_NOTE = (":::{note}\nThe interactive controls of this cell run in a Jupyter kernel: `make app` "
             "serves this notebook as a web app (Voilà), `make lab` opens it in JupyterLab.\n:::")


def _is_injected(cell: dict[str, Any]) -> bool:
    return "injected-parameters" in cell.get("metadata", {}).get("tags", [])


def _cell_sources(nb: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, source) of every cell but papermill's injected parameters."""
    def text(s: Any) -> str:
        return "".join(s) if isinstance(s, list) else str(s)
    return [(c["cell_type"], text(c["source"])) for c in nb["cells"] if not _is_injected(c)]


def pick_notebook(path: Path, executed_dir: Path) -> tuple[dict[str, Any], str]:
    """The notebook a page shows: its executed copy if it is current, else the stripped one.

    Returns
    -------
    (notebook dict, status)
        status is 'executed', 'stripped: no executed copy' or 'stripped: changed since executed'.
    """
    source = json.loads(path.read_text())
    executed = executed_dir / path.name
    if not executed.exists():
        return source, "stripped: no executed copy"
    ran = json.loads(executed.read_text())
    if _cell_sources(ran) != _cell_sources(source):
        return source, "stripped: changed since executed"
    return ran, "executed"


def _src(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


def _markdown(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": _src(text)}


def figure_markdown(spec: Any, figures_dir: Path = FIGURES_DIR, rel_dir: str = "figures") -> str:
    """A MyST figure of a registered figure, captioned with what it reproduces and shows (a
    warning naming the figure instead when ``figures_dir`` has no PNG of it yet)."""
    caption = f"**`{spec.stem}`** ({spec.paper}): {spec.description}"
    if not (Path(figures_dir) / f"{spec.stem}.png").exists():
        return f":::{{warning}}\nFigure not generated yet (run `make figures`): {caption}\n:::"
    return (f":::{{figure}} {rel_dir}/{spec.stem}.png\n:name: fig-{spec.stem}\n:alt: {spec.stem}\n\n"
            f"{caption}\n:::")


def _saves(cell: dict[str, Any], stem: str) -> bool:
    src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return cell["cell_type"] == "code" and (f'"{stem}"' in src or f"'{stem}'" in src)


def stage_notebook(nb: dict[str, Any], stem: str, status: str,
                   figures_dir: Path = FIGURES_DIR) -> dict[str, Any]:
    """The page version of a notebook: no injected parameters, no widget state (it would load
    the widget manager from a CDN), a static note where widgets were, and every registered
    figure of the notebook inserted after the cell that saves it."""
    nb = copy.deepcopy(nb)
    nb.setdefault("metadata", {}).pop("widgets", None)
    specs = by_notebook().get(stem, [])
    cells: list[dict[str, Any]] = []
    placed: set[str] = set()
    for cell in nb["cells"]:
        if _is_injected(cell):
            continue
        after: list[dict[str, Any]] = []
        if cell["cell_type"] == "code":
            outs = cell.get("outputs", [])
            kept = [o for o in outs if _WIDGET_MIME not in o.get("data", {})]
            if len(kept) < len(outs):
                after.append(_markdown(_APP_NOTE))
            mine = [s for s in specs if s.stem not in placed and _saves(cell, s.stem)]
            if mine:  # the committed figure replaces the inline one (if the backend drew one)
                kept = [o for o in kept if "image/png" not in o.get("data", {})]
                after += [_markdown(figure_markdown(s, figures_dir)) for s in mine]
                placed |= {s.stem for s in mine}
            cell["outputs"] = kept
        cells.append(cell)
        cells.extend(after)
    rest = [s for s in specs if s.stem not in placed]
    if rest:
        cells.append(_markdown("## Figures"))
        cells += [_markdown(figure_markdown(s, figures_dir)) for s in rest]
    if status != "executed":
        note = (f":::{{important}}\nThis page shows the notebook without its outputs ({status}): run "
                "`make figures`, then `make book`. The figures are the committed full-run files.\n:::")
        cells.insert(1, _markdown(note))
    nb["cells"] = cells
    return nb


_CSS = """/* spare-lab book: centred display equations (MathJax 2) */
div.math { text-align: center; }
"""

_LOCAL_LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)\s]+)\)")


def landing_page(readme: Path, stems: list[str]) -> tuple[str, list[str]]:
    """index.md from the README: links to notebooks point at their pages; a toctree of the pages.

    Returns
    -------
    (text, local files the page links to, relative to the repository)
    """
    text = readme.read_text()
    text = re.sub(r"\]\(notebooks/(\d\d_[^)/]+)\.ipynb\)", r"](\1.ipynb)", text)
    files = sorted({m for m in _LOCAL_LINK.findall(text)
                    if not m.endswith((".ipynb", ".md")) and (REPO_ROOT / m).is_file()})
    toc = "\n".join(["", "```{toctree}", ":caption: Notebooks", ":maxdepth: 1", "", *stems, "```", ""])
    return text.rstrip("\n") + "\n" + toc, files


def mathjax_dir() -> Path:
    """MathJax 2 of the jupyter-server-mathjax package (served by the site, no CDN)."""
    try:
        import jupyter_server_mathjax
    except ImportError as e:  # pragma: no cover - part of the book extra
        raise RuntimeError("the book needs jupyter-server-mathjax: pip install -e '.[book]'") from e
    return Path(jupyter_server_mathjax.__file__).parent / "static"


def stage(source_dir: Path = SOURCE_DIR, executed_dir: Path = EXECUTED_DIR,
          figures_dir: Path = FIGURES_DIR) -> dict[str, str]:
    """Write the book's sources into ``source_dir``; return notebook stem -> status."""
    source_dir = Path(source_dir)
    if source_dir.exists():
        shutil.rmtree(source_dir)
    (source_dir / "figures").mkdir(parents=True)
    for spec in (s for specs in by_notebook().values() for s in specs):
        png = Path(figures_dir) / f"{spec.stem}.png"
        if png.exists():
            shutil.copy2(png, source_dir / "figures" / png.name)
        else:
            print(f"[spare book] warning: {png} is missing (run `make figures`)", flush=True)
    paths = notebook_paths()
    text, files = landing_page(REPO_ROOT / "README.md", [p.stem for p in paths])
    (source_dir / "index.md").write_text(text)
    for rel in files:
        dest = source_dir / rel
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / rel, dest)
    statuses = {}
    for path in paths:
        nb, status = pick_notebook(path, Path(executed_dir))
        statuses[path.stem] = status
        page = stage_notebook(nb, path.stem, status, figures_dir)
        (source_dir / path.name).write_text(json.dumps(page, indent=1, ensure_ascii=False) + "\n")
    (source_dir / "_static").mkdir(exist_ok=True)
    (source_dir / "_static" / "spare-book.css").write_text(_CSS)
    mj = mathjax_dir()
    for part in ("MathJax.js", "config", "extensions", "fonts", "jax"):
        src, dest = mj / part, source_dir / "_static" / "mathjax" / part
        if src.is_dir():
            shutil.copytree(src, dest)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    return statuses


def build_book(html_dir: Path = HTML_DIR, source_dir: Path = SOURCE_DIR,
               executed_dir: Path = EXECUTED_DIR, figures_dir: Path = FIGURES_DIR,
               quiet: bool = True) -> dict[str, str]:
    """Stage the sources and run Sphinx (html builder); return notebook stem -> status.

    Raises
    ------
    RuntimeError
        If Sphinx fails (its output is printed).
    """
    statuses = stage(source_dir, executed_dir, figures_dir)
    doctrees = Path(source_dir).parent / (Path(source_dir).name + "-doctrees")
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(CONF_DIR), "-d", str(doctrees),
           "-E", str(source_dir), str(html_dir)]
    if quiet:
        cmd.insert(3, "-q")
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    proc = subprocess.run(cmd, capture_output=quiet, text=True, env=env)
    if proc.returncode != 0:
        if quiet:
            print(proc.stdout, proc.stderr, sep="\n", file=sys.stderr)
        raise RuntimeError(f"sphinx-build failed with exit code {proc.returncode}")
    return statuses


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m spare_lib.figures.book",
                                description="build the static HTML book of the notebooks")
    p.add_argument("--executed-dir", default=str(EXECUTED_DIR),
                   help="executed copies of the notebooks (default: those `make figures` keeps)")
    p.add_argument("--html-dir", default=str(HTML_DIR))
    p.add_argument("--verbose", action="store_true", help="show Sphinx's output")
    p.add_argument("--screenshot", metavar="NOTEBOOK[#SECTION]", default=None,
                   help="then save a picture of this notebook's page (e.g. 80_strategies, or "
                        "80_strategies#what-it-means from a section's id) to "
                        "_build/book_NOTEBOOK.png, in headless Chromium, offline")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    statuses = build_book(Path(args.html_dir), executed_dir=Path(args.executed_dir),
                          quiet=not args.verbose)
    stripped = [s for s, st in statuses.items() if st != "executed"]
    for stem, st in statuses.items():
        print(f"[spare book] {stem}: {st}")
    if stripped:
        print(f"[spare book] {len(stripped)} of {len(statuses)} pages without outputs: run "
              f"`make figures` first to show them executed (copies in {args.executed_dir})")
    index = Path(args.html_dir) / "index.html"
    print(f"[spare book] built in {time.perf_counter() - t0:.0f} s: open {index}")
    if args.screenshot:
        from spare_lib.figures.browser import screenshot_file

        name, _, section = args.screenshot.partition("#")
        page = Path(args.html_dir) / f"{name}.html"
        if not page.exists():
            p.error(f"--screenshot: no page {page.name}; pages: {', '.join(sorted(statuses))}")
        if section and f'id="{section}"' not in page.read_text():
            p.error(f"--screenshot: {page.name} has no section id {section!r}")
        png = REPO_ROOT / "_build" / f"book_{name}.png"
        text = screenshot_file(page, png, fragment=section)
        raw = text.count("{glue")  # a role Sphinx did not resolve would stay as typed
        print(f"[spare book] {page.name} ({statuses.get(name)}): picture in {png}; "
              f"{len(text.split())} words, {raw} unresolved glue roles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
