"""The numbers in docs/microbatch.md are the committed result tables (issue 25)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from spare_lib.rectlr.microbatch_mc import DOC_BLOCKS, RESULT_FILES, render_doc_tables

ROOT = Path(__file__).resolve().parents[2]


def test_doc_tables_match_the_result_csvs() -> None:
    doc = (ROOT / "docs" / "microbatch.md").read_text()
    for key in RESULT_FILES.values():
        assert (ROOT / "data" / "results" / key).exists()
    for name in DOC_BLOCKS:
        assert f"<!-- {name}:start -->" in doc
    assert render_doc_tables(doc, ROOT / "data" / "results") == doc


def test_acceptance_grid_within_two_percent() -> None:
    """Issue 25's theory acceptance, on the committed full-size table: |theory/MC − 1| ≤ 2 %."""
    import pandas as pd

    df = pd.read_csv(ROOT / "data" / "results" / RESULT_FILES["ruler"])
    assert len(df) == 27 and df.rel_err.abs().max() <= 0.02


def _csv(key: str):  # noqa: ANN202
    import pandas as pd

    return pd.read_csv(ROOT / "data" / "results" / RESULT_FILES[key])


def test_ruler_statements_of_the_doc() -> None:
    df = _csv("ruler")
    big, small = df[df.r >= 8], df[df.r == 4]
    assert (big.frac_states_gt < 0.05).all()
    for _, g in small.groupby("N"):
        assert g.sort_values("b").frac_states_gt.is_monotonic_increasing
    assert (small[(small.N >= 600) & (small.b == 32)].frac_states_gt > 0.5).all()
    excess_mc = small.sbar_mc - small.gbar_mc
    assert ((small.sbar_theory - small.sbar_global) >= 0.5 * excess_mc).all()


def test_layout_statements_of_the_doc() -> None:
    lay, ruler = _csv("layouts"), _csv("ruler")
    cons = lay[lay.layout == "consecutive"]
    assert (cons.rel_err.abs() <= 0.02).all() and (cons.sbar_mc >= cons.gbar_mc + 0.2).all()
    merged = cons.merge(ruler, on=["N", "r", "b"], suffixes=("", "_ruler"))
    assert len(merged) == len(cons) and (merged.sbar_mc > merged.sbar_mc_ruler).all()
    dom = lay[lay.layout == "domain-aware"]
    assert (dom[dom.r == 8].rel_err.abs() <= 0.02).all()
    d4 = dom[(dom.r == 4) & (dom.b >= 8)]
    assert len(d4) == 4 and (d4.rel_err < -0.02).all()
    assert np.allclose(dom[dom.r == 4].sbar_theory, dom[dom.r == 4].sbar_global, rtol=1e-4)


def test_chain_statements_of_the_doc() -> None:
    ch = _csv("chains")
    for kind in ("ruler", "consecutive"):
        g = ch[(ch.layout == kind) & (ch.r == 4)].sort_values("b")
        assert (g.k_p1 < g.mu_mc).all() and g.k_p1.is_monotonic_decreasing
    r8 = ch[(ch.r == 8) & ch.layout.isin(["ruler", "domain-aware"])]
    assert (r8.k_p1_over_mu > 0.75).all() and r8.k_p50.isna().all()
    assert (ch[(ch.layout == "consecutive") & (ch.r == 8)].k_p1_over_mu < 0.5).all()
