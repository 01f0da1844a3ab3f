"""nbval run of the notebooks (``make test``): each notebook also checks the figures it wrote.

Every notebook runs once per ``make test``, here, cell by cell in smoke mode. Before its first
cell, its kernel is pointed at a fresh folder of its own (``SPARE_SMOKE_DIR``, read by
:func:`spare_lib.config.resolve`); after its last cell, one more test item,
``<notebook>::registered figures``, asserts that it wrote a non-empty PDF and PNG of every figure
the registry (:func:`spare_lib.figures.by_notebook`) promises for it, no figure the registry
does not know, and that its cells glued every number its markdown pastes
(:func:`spare_lib.figures.prose.glue_keys_in_markdown`). These checks used to need a second,
papermill execution of every notebook in the unit tests; ``tests/figures/test_notebooks.py``
keeps one papermill run, of the pipeline itself.

Every kernel nbval starts listens on Unix sockets of its own
(:class:`spare_lib.figures.kernels.IpcKernelManager`) instead of TCP ports picked at random, which
another process could take in the moment before the kernel binds them (see that module).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_DIRS: dict[str, Path] = {}
_ROOT: list[Path] = []


class RegisteredFigures(pytest.Item):
    """The figures check of one notebook, run after its cells (same file, same xdist worker)."""

    def __init__(self, *, stem: str, **kw) -> None:  # noqa: ANN003
        super().__init__(**kw)
        self.stem = stem

    def runtest(self) -> None:
        from spare_lib.figures import by_notebook

        base = _DIRS.get(self.stem)
        assert base is not None, f"{self.stem}: its cells did not run before this check"
        out = base / "figures"
        promised = by_notebook().get(self.stem, [])
        for spec in promised:
            for ext in ("pdf", "png"):
                f = out / f"{spec.stem}.{ext}"
                assert f.exists() and f.stat().st_size > 0, f"{self.stem} did not write {f.name}"
        written = {p.stem for p in out.glob("*.pdf")}
        unregistered = written - {s.stem for s in promised}
        assert not unregistered, f"{self.stem} saves figures missing from figures.REGISTRY: {unregistered}"
        from spare_lib.figures.prose import glue_keys_in_markdown

        glued = set()
        for item in self.session.items:
            if item.parent is self.parent and item is not self:
                for o in getattr(item, "test_outputs", None) or []:
                    name = (o.get("metadata") or {}).get("scrapbook", {}).get("name")
                    if name:
                        glued.add(name)
        missing = glue_keys_in_markdown(self.path) - glued
        assert not missing, f"{self.stem}: markdown pastes numbers its cells did not glue: {sorted(missing)}"

    def reportinfo(self):  # noqa: ANN201
        return self.path, None, f"{self.stem}: registered figures"


def pytest_configure(config: pytest.Config) -> None:
    """nbval starts its kernels through ``nbval.kernel.KernelManager``: make that the IPC one."""
    import nbval.kernel

    from spare_lib.figures.kernels import IpcKernelManager

    nbval.kernel.KernelManager = IpcKernelManager


#: Notebooks whose smoke run takes longest under nbval, longest first (from ``make test``'s
#: ``--durations`` on 2 cores). They are handed to the xdist workers first (``--dist loadfile``
#: gives out whole notebooks in collection order), so a long one is not left for the end while
#: the other worker idles. Only the order depends on this list, never a result.
LONGEST_FIRST = ("40_exactness", "80_strategies", "45_live_emulation", "85_production_failures",
                 "95_design", "70_real_failures", "65_scale", "75_correlated_failures")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Append the figures check after the last cell of every collected notebook, and put the
    longest notebooks first (:data:`LONGEST_FIRST`; a notebook's cells keep their order)."""
    out: list[pytest.Item] = []
    for i, item in enumerate(items):
        out.append(item)
        path = Path(str(item.path))
        last = i + 1 == len(items) or Path(str(items[i + 1].path)) != path
        if path.suffix == ".ipynb" and last:
            out.append(RegisteredFigures.from_parent(item.parent, name="registered figures",
                                                     stem=path.stem))
    rank = {stem: i for i, stem in enumerate(LONGEST_FIRST)}
    first = {}  # each file's position in collection order
    for item in out:
        first.setdefault(Path(str(item.path)), len(first))

    def key(item: pytest.Item) -> tuple[int, int]:
        path = Path(str(item.path))
        return rank.get(path.stem, len(rank)), first[path]

    items[:] = sorted(out, key=key)  # stable: cells stay in order within their notebook


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a notebook's first cell (its kernel starts in that cell's setup): its own folder."""
    path = Path(str(item.path))
    if path.suffix != ".ipynb" or path.stem in _DIRS or isinstance(item, RegisteredFigures):
        return
    if not _ROOT:
        _ROOT.append(Path(tempfile.mkdtemp(prefix="spare-nbval-")))
    base = _ROOT[0] / path.stem
    base.mkdir()
    _DIRS[path.stem] = base
    os.environ["SPARE_SMOKE_DIR"] = str(base)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for root in _ROOT:
        shutil.rmtree(root, ignore_errors=True)
