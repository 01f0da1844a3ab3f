"""Shared fixtures. The numba JIT is warmed once per session, not in every test."""

from __future__ import annotations

import os

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..", ".numba_cache"))


@pytest.fixture(scope="session")
def warm_wipeout():
    """Compile (or load from cache) the wipe-out kernel once."""
    from spare_lib.stacking import failures_to_wipeout, ruler_layout

    failures_to_wipeout(ruler_layout(12, 3), 2, seed=0)
    return True

