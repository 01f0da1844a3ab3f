"""Small helpers shared by the failures tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from spare_lib.failures import FaultTrace, load_trace


def _make_trace(starts, nodes=None, n_nodes=None, window_s=None, gpus_per_node=8, ends=None) -> FaultTrace:
    starts = np.asarray(starts, dtype=float)
    nodes = ["n0"] * starts.size if nodes is None else [str(n) for n in nodes]
    ends = starts + 60.0 if ends is None else ends
    f = pd.DataFrame({"node": nodes, "start_s": starts, "end_s": ends, "cause": "GPU", "domain": None})
    return FaultTrace(f, n_nodes or len(set(nodes)), window_s or float(starts.max()), gpus_per_node)


@pytest.fixture(scope="session")
def stepfun_trace():
    return load_trace("stepfun-infinitehbd")


@pytest.fixture(scope="session")
def make_trace():
    """``make_trace(starts, nodes=None, n_nodes=None, window_s=None, gpus_per_node=8, ends=None)``."""
    return _make_trace
