"""The tornado's pieces (spare_lib.cluster.planning.sensitivity) and its docs table."""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest

from spare_lib.cluster.planning import cluster_spec
from spare_lib.cluster.planning.sensitivity import (
    ASSUMPTIONS,
    family_ratio,
    job_share_mix,
    tornado,
    tornado_table,
    with_run,
    world_plan,
)
from spare_lib.failures.mix import failure_mix
from spare_lib.figures.production import render_tornado_block, tornado_markdown


def test_job_share_mix_and_with_run(tmp_path) -> None:  # noqa: ANN001
    assert job_share_mix(0.0) == "paper"
    m = failure_mix(job_share_mix(0.15, folder=str(tmp_path)))
    assert m.share("job") == pytest.approx(0.15) and m.share("group") == pytest.approx(0.85)
    s = cluster_spec(16_000, 1000)
    s2 = with_run(s, job_share=0.05, stall_s=180.0)
    assert failure_mix(s2.knob("failure_mix")).share("job") == pytest.approx(0.05)
    assert s2.knob("stall_s") == 180.0
    assert with_run(s2, stall_s=None).knob("stall_s") == s.knob("stall_s")
    with pytest.raises(ValueError, match="run knobs must be among"):
        with_run(s, steps=3)
    # every end of every assumption is a valid cluster
    for _what, ends in ASSUMPTIONS.values():
        for knobs in ends.values():
            with_run(s, **knobs)


def test_family_ratio_pairs_the_trials_of_the_two_families() -> None:
    spec = cluster_spec(16_000, 1000, system_mtbf_s=600.0, restart_s=600.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = world_plan(spec, 3, methods=("spare", "ckpt", "elastic-drop"), steps=150, seed=1,
                         workers=1, quick=True)
    fr = family_ratio(res)
    a = next(c for c in res.verdict.contenders if c.method == fr["spare"])
    b = min((c for c in res.verdict.contenders if c.method != "spare"), key=lambda c: c.ttt)
    assert fr["other"] == b.method and fr["trials"] == 3
    assert fr["ratio"] == pytest.approx(sum(x / y for x, y in zip(a.trials, b.trials, strict=True)) / 3)
    assert fr["ci_low"] <= fr["ratio"] <= fr["ci_high"]
    assert fr["tied"] == (fr["ci_low"] <= 1.0 <= fr["ci_high"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = tornado(spec, 2, assumptions={"stall": ASSUMPTIONS["stall"]},
                       methods=("spare", "elastic-drop"), steps=100, seed=1, workers=1,
                       quick=True)
    assert [r["end"] for r in rows] == ["0.1 s", "3 min"]
    assert all(math.isfinite(r["ratio"]) for r in rows)


def _rows() -> pd.DataFrame:
    return pd.DataFrame([
        {"gpus": 600_000, "assumption": "stall", "what": "stall", "end": "0.1 s", "ratio": 1.5,
         "ci_low": 1.4, "ci_high": 1.6, "favours": "Elastic-drop+CKPT"},
        {"gpus": 600_000, "assumption": "stall", "what": "stall", "end": "3 min", "ratio": 0.9,
         "ci_low": 0.85, "ci_high": 0.95, "favours": "SPARe"},
        {"gpus": 600_000, "assumption": "jitter", "what": "jitter", "end": "unit", "ratio": 1.2,
         "ci_low": 0.9, "ci_high": 1.5, "favours": "tied"},
        {"gpus": 600_000, "assumption": "jitter", "what": "jitter", "end": "step", "ratio": 1.25,
         "ci_low": 0.95, "ci_high": 1.55, "favours": "tied"},
    ])


def test_tornado_table_sorts_by_size_and_finds_flips() -> None:
    t = tornado_table(_rows().to_dict("records"))
    assert [r["assumption"] for r in t] == ["stall", "jitter"]
    assert t[0]["flips"] and not t[1]["flips"]
    assert t[0]["size"] == pytest.approx(0.6) and t[0]["favours_spare_at"] == "3 min"


def test_tornado_block_is_rendered_from_the_csv(tmp_path) -> None:  # noqa: ANN001
    _rows().to_csv(tmp_path / "strategies_tornado.csv", index=False)
    text = "a\n<!-- strategies-tornado:start -->\nold\n<!-- strategies-tornado:end -->\nb\n"
    out = render_tornado_block(text, tmp_path)
    assert "old" not in out and tornado_markdown(_rows()) in out and out.endswith("b\n")
    assert "| 600,000 | stall | 0.1 s: 1.500 [1.400, 1.600]" in out and "| yes |" in out
    assert render_tornado_block(text, tmp_path / "none") == text
