"""Shared fixtures. The numba JIT is warmed once per session, not in every test."""

from __future__ import annotations

import os

import matplotlib
import pytest
from hypothesis import settings

matplotlib.use("Agg")
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..", ".numba_cache"))

# CI (`CI=true bash .ci/run`) draws the same hypothesis examples on every run, so a red CI is a
# change in the code, not a new random draw (nor a draw that happens to be slow); a local
# `make test` draws new examples each time and keeps any failure it finds in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def warm_wipeout():
    """Compile (or load from cache) the wipe-out kernel once."""
    from spare_lib.stacking import failures_to_wipeout, ruler_layout

    failures_to_wipeout(ruler_layout(12, 3), 2, seed=0)
    return True

