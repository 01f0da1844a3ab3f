"""Numbers in docs/*.md and the README are generated from data/results/ or checked against it."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from spare_lib.config import REPO_ROOT, RESULTS_DIR
from spare_lib.figures.docs_numbers import (
    DOCS,
    TAG,
    NumberTag,
    render,
    stale_numbers,
    untagged_doc_numbers,
)

DEBT = REPO_ROOT / "tests" / "data" / "doc_number_debt.json"


def test_every_tagged_number_in_the_docs_matches_its_results_file():
    stale = stale_numbers()
    assert not stale, "stale numbers in the docs:\n" + "\n".join(stale)


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_untagged_numbers_in_the_docs_only_go_down(path):
    """Decimal numbers of a doc's prose that are neither tagged nor cited: at most the recorded
    debt (tests/data/doc_number_debt.json); lower the entry when you tag some."""
    debt = json.loads(DEBT.read_text())
    n = len(untagged_doc_numbers(path.read_text()))
    allowed = debt.get(path.name, 0)
    assert n <= allowed, (f"{path.name}: {n} untagged decimal numbers, the debt is {allowed}: tag the "
                          "new ones with their source (docs/numbers.md)")


def test_a_perturbed_results_value_makes_its_tagged_number_stale(tmp_path):
    """Copy the results, change one quoted value: the check names the doc, the file and both values."""
    tags = [(p, m) for p in DOCS for m in TAG.finditer(p.read_text())]
    assert tags, "no tagged numbers in the docs"
    path, m = next((p, m) for p, m in tags if NumberTag.parse(m.group("spec")).file.endswith(".csv"))
    tag = NumberTag.parse(m.group("spec"))
    results = tmp_path / "results"
    shutil.copytree(RESULTS_DIR, results)
    df = pd.read_csv(results / tag.file)
    if tag.row.startswith("#"):
        idx = int(tag.row[1:])
    else:
        mask = pd.Series(True, index=df.index)
        for cond in tag.row.split(","):
            col, _, want = cond.partition("=")
            mask &= df[col].astype(str).eq(want) | pd.to_numeric(df[col], errors="coerce").eq(
                pd.to_numeric(want, errors="coerce"))
        idx = df.index[mask][0]
    df.loc[idx, tag.column] = df.loc[idx, tag.column] * 1.1 + 1
    df.to_csv(results / tag.file, index=False)
    stale = stale_numbers((path,), results_dir=results)
    assert any(tag.file in s and "the doc says" in s for s in stale), stale


def test_render_rewrites_the_value_between_the_tags(tmp_path):
    pd.DataFrame({"grid": ["a", "b"], "err": [0.5, 17.40189]}).to_csv(tmp_path / "e.csv", index=False)
    text = "off by <!-- num e.csv grid=b err .2f -->17.8<!-- /num --> %"
    assert render(text, tmp_path) == "off by <!-- num e.csv grid=b err .2f -->17.40<!-- /num --> %"
    (tmp_path / "p.json").write_text(json.dumps({"x/1": {"gain": 0.293}}))
    assert NumberTag.parse("p.json - x/1::gain .1f *100").text(tmp_path) == "29.3"


def test_bad_tags_are_reported_not_skipped(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("<!-- num nothere.csv #0 x -->1.0<!-- /num -->")
    (stale,) = stale_numbers((doc,))
    assert "d.md:1: bad number tag" in stale and "nothere.csv" in stale
    with pytest.raises(ValueError, match="needs 'file row column"):
        NumberTag.parse("only two")


def test_untagged_doc_numbers_skip_code_blocks_tags_and_citations():
    md = ("```console\n$ spare plan\n2.49\n```\nthe paper's 2.49, ours "
          "<!-- num f.csv #0 c -->2.5<!-- /num -->, and 3.14 untagged")
    assert untagged_doc_numbers(md) == ["3.14"]
