"""The notebook runner of ``spare figures`` (papermill) on one notebook in smoke mode.

Every notebook is executed once per ``make test``, by nbval, where it also checks that it wrote
each figure it registers and nothing else (``notebooks/conftest.py``). This test covers the other
way notebooks run, :func:`spare_lib.figures.pipeline.run_notebook` with its parameters and its
``OUT_DIR``, on the quickest notebook, with the same figure checks and the glue check (every
number its markdown pastes was glued by the run).
"""

from __future__ import annotations

import json

import pytest

from spare_lib.figures import by_notebook
from spare_lib.figures.pipeline import NOTEBOOK_DIR, run_notebook
from spare_lib.figures.prose import glue_keys_in_markdown, glued_keys

#: The quickest notebook (about 6 s in smoke mode): the pipeline, not the notebook, is tested.
PIPELINE_NOTEBOOK = NOTEBOOK_DIR / "10_stacking_and_wipeout.ipynb"


@pytest.mark.notebook
def test_run_notebook_smoke_writes_registered_figures(tmp_path):
    path = PIPELINE_NOTEBOOK
    out = tmp_path / "out"
    executed = run_notebook(path, smoke=True, out_dir=out, executed_dir=tmp_path / "executed")
    assert executed.exists() and executed.parent == tmp_path / "executed"
    missing = glue_keys_in_markdown(path) - glued_keys(json.loads(executed.read_text()))
    assert not missing, f"{path.stem}: markdown pastes numbers the run did not glue: {sorted(missing)}"
    promised = by_notebook().get(path.stem, [])
    assert promised, f"{path.stem} registers no figure: pick a notebook that does"
    for spec in promised:
        for ext in ("pdf", "png"):
            f = out / f"{spec.stem}.{ext}"
            assert f.exists() and f.stat().st_size > 0, f"{path.stem} did not write {f.name}"
    written = {p.stem for p in out.glob("*.pdf")}
    unregistered = written - {s.stem for s in promised}
    assert not unregistered, f"{path.stem} saves figures missing from figures.REGISTRY: {unregistered}"


def test_a_failing_notebook_does_not_stop_the_others(monkeypatch, capsys):
    """run_all goes on after a notebook's cell raises and names every failure at the end;
    ``spare figures`` then exits 1 with one ``spare: error:`` line per failed notebook."""
    from papermill.exceptions import PapermillExecutionError

    from spare_lib.cli import main
    from spare_lib.figures import pipeline

    ran = []

    def fake(path, smoke, out_dir=None, executed_dir=None, **kw):
        ran.append(path.stem)
        if path.stem.startswith(("20_", "40_")):
            raise PapermillExecutionError(3, 3, "ck.done()", "AssertionError",
                                          "2 of 9 claims fail (smoke run):\n  detail", [])
        return path

    monkeypatch.setattr(pipeline, "run_notebook", fake)
    monkeypatch.setattr(pipeline, "notebook_paths",
                        lambda: [NOTEBOOK_DIR / f"{n}.ipynb" for n in ("10_a", "20_b", "40_c", "50_d")])
    with pytest.raises(pipeline.NotebooksFailed) as e:
        pipeline.run_all(smoke=True)
    assert ran == ["10_a", "20_b", "40_c", "50_d"]
    assert [n for n, _ in e.value.timings] == ran
    assert e.value.failed == [("20_b", "AssertionError: 2 of 9 claims fail (smoke run):"),
                              ("40_c", "AssertionError: 2 of 9 claims fail (smoke run):")]
    ran.clear()
    assert main(["figures", "--smoke"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["spare: error: notebook 20_b failed: AssertionError: 2 of 9 claims fail (smoke run):",
                   "spare: error: notebook 40_c failed: AssertionError: 2 of 9 claims fail (smoke run):"]
