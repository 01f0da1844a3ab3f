"""Every notebook runs in SMOKE mode through papermill, writes every figure it registers and
glues every number its markdown pastes (its last cell, the checks, asserts the prose's claims)."""

from __future__ import annotations

import json

import pytest

from spare_lib.figures import by_notebook
from spare_lib.figures.pipeline import notebook_paths, run_notebook
from spare_lib.figures.prose import glue_keys_in_markdown, glued_keys

NOTEBOOKS = notebook_paths()


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_smoke_writes_registered_figures(path, tmp_path):
    out = tmp_path / "out"
    executed = run_notebook(path, smoke=True, out_dir=out, executed_dir=tmp_path / "executed")
    missing = glue_keys_in_markdown(path) - glued_keys(json.loads(executed.read_text()))
    assert not missing, f"{path.stem}: markdown pastes numbers the run did not glue: {sorted(missing)}"
    promised = by_notebook().get(path.stem, [])
    for spec in promised:
        for ext in ("pdf", "png"):
            f = out / f"{spec.stem}.{ext}"
            assert f.exists() and f.stat().st_size > 0, f"{path.stem} did not write {f.name}"
    written = {p.stem for p in out.glob("*.pdf")}
    unregistered = written - {s.stem for s in promised}
    assert not unregistered, f"{path.stem} saves figures missing from figures.REGISTRY: {unregistered}"
