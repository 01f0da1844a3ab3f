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


def _plan(contenders):
    cs = [SimpleNamespace(method=m, r=r, checkpoint_steps=100, trials=tuple(t), finished=True)
          for m, r, t in contenders]
    return SimpleNamespace(verdict=SimpleNamespace(contenders=cs))


def _fake_plans():
    rng = np.random.default_rng(3)
    base = 1.2 + 0.05 * rng.standard_normal(8)  # the shared failures of trial i
    first = _plan([("spare", 9, base + 0.8), ("elastic-rebalance", 1, base),
                   ("elastic-drop", 1, base + 0.1), ("spare-b", 2, base + 0.3),
                   ("spare-b+repair", 3, base + 0.001 * rng.standard_normal(8)),
                   ("spare-b+drop", 2, base - 0.2)])
    return {0.0: first, 60.0: _plan([("elastic-rebalance", 1, base + 0.4)])}


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
