"""docs/knobs.md is the knob registry's table (``make docs`` regenerates it)."""

from __future__ import annotations

from spare_lib.config import REPO_ROOT
from spare_lib.figures.docs_numbers import render_knobs_block
from spare_lib.registry.knobs import KNOBS


def test_knobs_doc_is_the_registry() -> None:
    text = (REPO_ROOT / "docs" / "knobs.md").read_text()
    assert render_knobs_block(text) == text, "docs/knobs.md is stale: run make docs"
    for name in ("failure_mix", "detect_s", "jitter_model", "allreduce_rule", "min_live"):
        assert f"| `{name}` | `{KNOBS[name].cli_flag}`" in text
