"""Notebook 82's driver tables (paired verdicts across plans) and its figure builders."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from spare_lib.cluster.planning.microbatch_plan import (
    microbatch_plans,
    microbatch_verdicts,
    variant_table,
)
from spare_lib.cluster.planning.stats import paired_comparison


def _plan(contenders, capped=()):
    """A fake plan: contenders (method, r, trials); ``capped`` methods had a run stopped at the
    cap (not finished, one trial fewer completed)."""
    cs = [SimpleNamespace(method=m, r=r, checkpoint_steps=100, trials=tuple(t),
                          finished=m not in capped) for m, r, t in contenders]
    pts = [SimpleNamespace(method=c.method, r=c.r, checkpoint_steps=100,
                           completed=len(c.trials) - (not c.finished), availability_mean=0.5)
           for c in cs]
    return SimpleNamespace(verdict=SimpleNamespace(contenders=cs), points=pts)


def _fake_plans(capped=()):
    rng = np.random.default_rng(3)
    base = 1.2 + 0.05 * rng.standard_normal(8)  # the shared failures of trial i
    first = _plan([("spare", 9, base + 0.8), ("elastic-rebalance", 1, base),
                   ("elastic-drop", 1, base + 0.1), ("spare-b", 2, base + 0.3),
                   ("spare-b+repair", 3, base + 0.001 * rng.standard_normal(8)),
                   ("spare-b+drop", 2, base - 0.2)], capped)
    return {0.0: first, 60.0: _plan([("elastic-rebalance", 1, base + 0.4)], capped)}


def test_variants_pair_across_plans_and_skip_repeated_methods():
    rows = variant_table(_fake_plans())
    names = [r["variant"] for r in rows]
    assert names.count("Elastic-rebalance+CKPT (fetch 0 s)") == 1
    assert names.count("Elastic-rebalance+CKPT (fetch 60 s)") == 1
    assert len(rows) == 7
    for r in rows:
        assert r["ci_low"] <= r["ttt_over_t0"] <= r["ci_high"]
        assert r["ttt_min"] <= r["ttt_over_t0"] <= r["ttt_max"]


def test_verdicts_are_paired_holm_and_call_ties():
    vt = pd.DataFrame(microbatch_verdicts(_fake_plans()))
    assert len(vt) == 3 * 4  # three SPARe-b methods x (SPARe, two rebalance fetches, drop)
    row = vt[(vt.method == "spare-b+drop") & (vt.fetch_s == 60.0)].iloc[0]
    assert row.verdict == "SPARe-b+drop+CKPT faster" and row.diff_pct < 0
    row = vt[(vt.method == "spare-b+repair") & (vt.fetch_s == 0.0)].iloc[0]
    assert row.verdict == "tied" and row.ci_low_pct <= 0 <= row.ci_high_pct
    row = vt[(vt.method == "spare-b") & (vt.rival_method == "elastic-drop")].iloc[0]
    assert row.verdict == "Elastic-drop+CKPT faster" and row.ci_low_pct > 0
    # Holm: the comparison with the largest p-value keeps the unadjusted 95 % interval
    p = _fake_plans()
    a = np.asarray(p[0.0].verdict.contenders[4].trials)  # spare-b+repair
    b = np.asarray(p[0.0].verdict.contenders[1].trials)  # elastic-rebalance at fetch 0 s
    raw = paired_comparison(a, b, b.mean())
    tie = vt[(vt.method == "spare-b+repair") & (vt.fetch_s == 0.0)].iloc[0]
    assert tie.diff_pct == pytest.approx(100 * raw.mean)
    assert (tie.ci_low_pct, tie.ci_high_pct) == pytest.approx((100 * raw.ci_low, 100 * raw.ci_high))
    assert tie.p_value == vt.p_value.max()
    assert (vt.bound == "").all() and vt.finished.all()


def test_capped_runs_get_bounds_not_intervals():
    """A variant with a run stopped at the cap has a lower-bound mean: no interval of its mean,
    no paired interval in its comparisons (verdict 'capped', the bound's direction), and Holm's
    family is the comparisons that still have an interval."""
    plans = _fake_plans(capped=("spare-b", "spare"))
    rows = {r["method"]: r for r in variant_table(plans)}
    assert not rows["spare-b"]["finished"] and rows["spare-b"]["completed"] == 7
    assert np.isnan(rows["spare-b"]["ci_low"]) and np.isnan(rows["spare-b"]["ci_high"])
    drop = rows["elastic-drop"]
    assert drop["finished"] and drop["ci_low"] < drop["ttt_over_t0"] < drop["ci_high"]
    vt = pd.DataFrame(microbatch_verdicts(plans))
    capped = vt[(vt.method == "spare-b") | (vt.rival_method == "spare")]
    assert len(capped) == 4 + 2 and (capped.verdict == "capped").all()
    assert capped.ci_low_pct.isna().all() and capped.ci_high_pct.isna().all()
    both = vt[(vt.method == "spare-b") & (vt.rival_method == "spare")].iloc[0]
    assert both.bound == "none" and np.isnan(both.diff_pct)
    low = vt[(vt.method == "spare-b") & (vt.rival_method == "elastic-drop")].iloc[0]
    assert low.bound == "lower" and low.diff_pct > 0  # SPARe-b's TTT is at least this much more
    up = vt[(vt.method == "spare-b+drop") & (vt.rival_method == "spare")].iloc[0]
    assert up.bound == "upper" and up.diff_pct < 0
    done = vt[vt.bound == ""]
    assert len(done) == 12 - 6 and done.ci_low_pct.notna().all()
    # Holm over the six comparisons with an interval: the largest p-value keeps 95 %
    top = done.loc[done.p_value.idxmax()]
    p = _fake_plans()
    a = np.asarray(p[0.0].verdict.contenders[4].trials)
    b = np.asarray(p[0.0].verdict.contenders[1].trials)
    raw = paired_comparison(a, b, b.mean())
    assert (top.method, top.fetch_s) == ("spare-b+repair", 0.0)
    assert (top.ci_low_pct, top.ci_high_pct) == pytest.approx((100 * raw.ci_low, 100 * raw.ci_high))

@pytest.mark.parametrize("kw", [{"trials": 1}, {"trials": 2, "fetch_values": (0.0, 0.0)},
                                {"trials": 2, "fetch_values": (-1.0,)}, {"trials": 2, "fetch_values": ()}])
def test_microbatch_plans_validates(kw):
    from spare_lib.cluster.planning import cluster_spec

    with pytest.raises(ValueError, match="trials|fetch_values"):
        microbatch_plans(cluster_spec(100_000, 1000), **kw)


def test_figure_builders_draw_the_tables():
    import matplotlib

    matplotlib.use("Agg")
    from spare_lib.figures.microbatch import (
        make_microbatch_sbar,
        make_microbatch_ttt,
        make_microbatch_verdict,
    )

    sbar = pd.DataFrame({"r": [4, 4, 8, 8], "b": [2, 8, 2, 8], "sbar_theory": [1.5, 1.3, 1.7, 1.4],
                         "sbar_mc": [1.5, 1.3, 1.7, 1.4], "sbar_mc_se": [0.01] * 4,
                         "sbar_global": [1.4, 1.2, 1.6, 1.3]})
    by_k = pd.DataFrame({"k": [0, 1, 2], "mean_l_over_b": [1.0, 1.1, 1.2],
                         "global_over_b": [1.0, 1.1, 1.1]})
    fig = make_microbatch_sbar(sbar, by_k, pd.DataFrame({"sbar_b": [1.3, 1.35, 1.4]}))
    assert len(fig.axes) == 3
    assert len(fig.axes[0].lines) >= 4
    plans = {100_000: _fake_plans(), 600_000: _fake_plans()}
    table = pd.DataFrame([{"gpus": g, **r} for g, p in plans.items() for r in variant_table(p)])
    fig = make_microbatch_ttt(table)
    assert len(fig.axes) == 2 and len(fig.axes[0].patches) == 7
    vt = pd.DataFrame([{"gpus": g, **r} for g, p in plans.items() for r in microbatch_verdicts(p)])
    fig = make_microbatch_verdict(vt)
    assert len(fig.axes) == 2 and len(fig.axes[1].get_yticklabels()) == 12
    open_ = [ln for ln in fig.axes[0].lines if ln.get_marker() not in ("", "None", "|", "_")
             and ln.get_markerfacecolor() == "white"]
    assert len(open_) == int(((vt.gpus == 100_000) & (vt.verdict == "tied")).sum()) == 1  # ties
    # two worlds: a row of panels per world; capped variants hatched, capped comparisons as
    # open triangles without error bars
    plans = {("paper", 100_000): _fake_plans(), ("paper", 600_000): _fake_plans(),
             ("llama3", 100_000): _fake_plans(), ("llama3", 600_000): _fake_plans(("spare-b",))}
    table = pd.DataFrame([{"world": w, "gpus": g, **r} for (w, g), p in plans.items()
                          for r in variant_table(p)])
    fig = make_microbatch_ttt(table)
    assert len(fig.axes) == 4 and [a.get_title() for a in fig.axes][2] == "100,000 GPUs, llama3 world"
    assert sum(bool(b.get_hatch()) for b in fig.axes[3].patches) == 1
    assert not any(b.get_hatch() for b in fig.axes[0].patches)
    vt = pd.DataFrame([{"world": w, "gpus": g, **r} for (w, g), p in plans.items()
                       for r in microbatch_verdicts(p)])
    fig = make_microbatch_verdict(vt)
    assert len(fig.axes) == 4 and len(fig.axes[3].get_yticklabels()) == 12
    assert len(fig.axes[0].collections) == 12 and len(fig.axes[3].collections) == 12 - 4
    assert sum(ln.get_marker() == ">" for ln in fig.axes[3].lines) == 4  # SPARe-b: lower bounds


def test_docs_block_renders_both_worlds_wins_ties_and_bounds(tmp_path):
    """docs/strategies.md's generated block: one row per (world, size, SPARe-b method), bold
    where the interval excludes 0, plain when tied, a capped comparison as its bound."""
    from spare_lib._util.results_io import write_results
    from spare_lib.figures.doc_tables import microbatch_verdict_table

    plans = {("paper", 100_000): _fake_plans(), ("llama3", 600_000): _fake_plans(("spare-b",))}
    vt = pd.DataFrame([{"world": w, "gpus": g, **r} for (w, g), p in plans.items()
                       for r in microbatch_verdicts(p)])
    write_results(vt, tmp_path / "microbatch_verdicts.csv",
                  sort_by=["world", "gpus", "spare_variant", "rival"], run_log=None)
    lines = microbatch_verdict_table(tmp_path).splitlines()
    assert len(lines) == 2 + 6 and lines[2].startswith("| paper | 100,000 | SPARe-b+CKPT |")
    assert lines[5].startswith("| llama3 | 600,000 | SPARe-b+CKPT |") and lines[5].count("(capped)") == 4
    assert "both capped" not in lines[5]  # SPARe+CKPT finished here
    tie = next(ln for ln in lines if ln.startswith("| paper | 100,000 | SPARe-b+repair"))
    cells = [c.strip() for c in tie.split("|")[4:9]]  # fetch 0, 10 (not planned here), 60 s, drop, SPARe
    assert not cells[0].startswith("**") and cells[1] == "—"
    assert all(c.startswith("**") for c in cells[2:])
