"""Numbers in notebook prose are glued or cited, and every notebook asserts its claims.

docs/numbers.md says how to tag a number; spare_lib.figures.prose holds the machinery.
"""

from __future__ import annotations

import json
import re

import pytest

from spare_lib.figures.pipeline import notebook_paths
from spare_lib.figures.prose import Checks, untagged_in_notebook, untagged_numbers

NOTEBOOKS = notebook_paths()
#: Notebooks whose markdown must carry no untagged decimal number (issue 26: 35 to 90).
PROSE_CHECKED = [p for p in NOTEBOOKS if 35 <= int(p.stem[:2]) <= 99]


@pytest.mark.parametrize("path", PROSE_CHECKED, ids=[p.stem for p in PROSE_CHECKED])
def test_no_untagged_decimal_numbers_in_notebook_markdown(path):
    found = untagged_in_notebook(path)
    assert not found, (f"{path.name}: decimal numbers typed into markdown (cell, number): {found}; "
                       "glue them or cite their source (docs/numbers.md)")


def test_untagged_numbers_tells_computed_from_cited_and_glued():
    md = ("The paper's 2.49 and (paper: 1.13 %); SPEC §3: k = 0.78. We find 2.51,\n"
          "then {glue:text}`ttt` and `r = 0.5` in code, $x = 0.25$ in math, "
          "[a link](docs/v1.2.md), arXiv 2603.00357.\n\n| paper: 2.92 |\n| ours | 2.91 |")
    assert untagged_numbers(md) == ["2.51", "2.91"]


def test_citation_cue_does_not_leak_into_the_next_sentence():
    assert untagged_numbers("As the paper says. Here 3.5 s.") == ["3.5"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_ends_with_a_checks_cell(path):
    cells = json.loads(path.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    last = "".join(code[-1]["source"])
    assert cells[-1] is code[-1], f"{path.name}: the last cell must be the checks cell"
    assert "Checks(cfg.smoke)" in last and ".done()" in last, (
        f"{path.name}: the last cell must assert the prose's claims (Checks(cfg.smoke) ... .done())")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_assertion_only_in_full_mode(path):
    """An `if not cfg.smoke:` block must not hold an assert (give the check a smoke-size form)."""
    for c in json.loads(path.read_text())["cells"]:
        if c["cell_type"] != "code":
            continue
        lines = "".join(c["source"]).split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"(\s*)if not cfg\.smoke\b", line)
            if not m:
                continue
            indent = len(m.group(1))
            for body in lines[i + 1:]:
                if body.strip() and len(body) - len(body.lstrip()) <= indent:
                    break
                assert not re.match(r"\s*(assert\b|ck\.)", body), (
                    f"{path.name}: an assertion only runs in full mode: {body.strip()!r}")


def test_checks_fail_loudly_and_use_the_smoke_bound():
    ck = Checks(smoke=True)
    ck.le("error", 4.0, full=1.0, smoke=5.0, why="smoke noise")
    ck.ge("share", 0.2, full=0.9)
    ck.member("r*", 9, [8, 9])
    with pytest.raises(AssertionError, match=r"1 of 3 claims fail \(smoke run\):\n  share: 0.2 not ≥ 0.9"):
        ck.done()
    full = Checks(smoke=False)
    full.le("error", 4.0, full=1.0, smoke=5.0)
    with pytest.raises(AssertionError, match="error: 4.0 not ≤ 1"):
        full.done()
    ok = Checks(smoke=False)
    ok.between("gain", 0.42, 0.38, 0.54)
    assert ok.done().passed.all()


@pytest.mark.parametrize("text", ["10,000", "0, 0.05, 0.2", "2.46", "{2, 5, 15}", "8/9/9", "−0.3"])
def test_glued_text_is_pasted_as_written(text):
    """MyST-NB literal-evals the text/plain it pastes: a glued "10,000" must not become (10, 0)."""
    variables = pytest.importorskip("myst_nb.core.variables")
    from spare_lib.figures.prose import Number

    assert variables.format_plain_text(repr(Number(None, text)), "") == text
