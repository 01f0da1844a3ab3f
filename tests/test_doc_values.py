"""The computed doc values (data/results/doc_values.json) are what the code computes now."""

from __future__ import annotations

import json
import shutil

import pandas as pd

from spare_lib.config import RESULTS_DIR
from spare_lib.figures.doc_values import DOC_VALUES_FILE, doc_values, stale_doc_values
from spare_lib.figures.docs_numbers import NumberTag, render


def test_committed_doc_values_are_current():
    stale = stale_doc_values()
    assert not stale, "\n".join(stale)


def test_a_perturbed_results_file_makes_its_aggregate_stale(tmp_path):
    """repair::max_abs_error_pct is the largest |error| of repair_theory_vs_sim.csv: raise one
    error above it and the committed doc_values.json no longer matches the code."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS_DIR, results)
    df = pd.read_csv(results / "repair_theory_vs_sim.csv")
    df.loc[0, "error_time"] = df[["error_time", "error_failures"]].abs().to_numpy().max() * 1.1 + 0.01
    df.to_csv(results / "repair_theory_vs_sim.csv", index=False)
    stale = stale_doc_values(results)
    assert len(stale) == 1 and "[repair]" in stale[0] and "run `make docs`" in stale[0], stale


def test_a_missing_file_is_reported(tmp_path):
    assert "missing" in stale_doc_values(tmp_path)[0]


def test_doc_values_are_plain_json_numbers_and_the_stall_model_is_solved():
    """Every section is JSON; the stall-rule step T solves T = L + s·n·(1 − e^(−T/m))."""
    import math

    v = json.loads(json.dumps(doc_values()))
    sr = v["stall_rule"]
    m, s = 60 * sr["mtbf_min"], 60 * sr["stall_min"]
    for key in ("spare", "elastic_blocking"):
        q = sr[key]
        T, L, n = q["step_s"], q["failure_free_step_s"], q["stalls_per_event"]
        assert abs(T - L - s * n * (1 - math.exp(-T / m))) < 1e-6
        assert abs(q["efficiency"] - L / T) < 1e-12 and abs(q["failures_per_poll"] - T / m) < 1e-12
    assert DOC_VALUES_FILE == "doc_values.json"


def test_quoted_tag_fields_name_columns_and_rows_with_spaces(tmp_path):
    pd.DataFrame({"ratio": ["a / b", "c / d"], "crossings (min)": ["none", "2.9"]}).to_csv(
        tmp_path / "x.csv", index=False)
    tag = NumberTag.parse('x.csv "ratio=c / d" "crossings (min)"')
    assert (tag.row, tag.column) == ("ratio=c / d", "crossings (min)")
    text = '<!-- num x.csv "ratio=c / d" "crossings (min)" -->?<!-- /num -->'
    assert render(text, tmp_path) == text.replace("?", "2.9")


def test_every_generated_table_follows_its_results_file(tmp_path):
    """Each doc_tables.BLOCKS table: the committed doc is current, and scaling the first numeric
    column of its results file (beyond the table's rounding) makes the doc stale."""
    import numpy as np

    from spare_lib.config import REPO_ROOT
    from spare_lib.figures.doc_tables import BLOCKS
    from spare_lib.figures.docs_numbers import stale_numbers

    for doc, blocks in BLOCKS.items():
        path = next(p for p in (REPO_ROOT / "docs" / doc, REPO_ROOT / doc) if p.exists())
        assert not [s for s in stale_numbers((path,)) if "generated block" in s], doc
        for block, (file, _fn) in blocks.items():
            assert f"<!-- {block}:start -->" in path.read_text(), (doc, block)
            results = tmp_path / block
            shutil.copytree(RESULTS_DIR, results)
            df = pd.read_csv(results / file)
            col = next(c for c in df.columns if df[c].dtype.kind == "f" and np.isfinite(df[c]).any())
            df[col] = df[col] * 1.5 + 1
            df.to_csv(results / file, index=False)
            stale = stale_numbers((path,), results_dir=results)
            assert any("generated block differs" in s for s in stale), (doc, block, stale)


def test_a_row_label_with_a_comma_is_one_condition(tmp_path):
    pd.DataFrame({"name": ["a, b = 1", "a"], "k": [1, 1], "v": [2.5, 3.5]}).to_csv(
        tmp_path / "y.csv", index=False)
    text = '<!-- num y.csv "name=a, b = 1,k=1" v -->?<!-- /num -->'
    assert render(text, tmp_path) == text.replace("?", "2.5")
