"""Summary statistics and simultaneous-fault instants."""

from __future__ import annotations

import numpy as np
import pytest

from spare_lib.failures import fault_instants, instant_labels, summary


def test_instants_chain_within_tolerance(make_trace):
    tr = make_trace([0.0, 0.5, 1.2, 10.0, 10.0, 30.0], nodes=[0, 1, 2, 3, 3, 4], window_s=100.0)
    inst = fault_instants(tr, tolerance_s=1.0)
    assert inst["size"].tolist() == [3, 2, 1]  # 0 -> 0.5 -> 1.2 chains
    assert inst["n_distinct_nodes"].tolist() == [3, 1, 1]
    assert inst["time_s"].tolist() == [0.0, 10.0, 30.0]
    assert fault_instants(tr, 0.0)["size"].tolist() == [1, 1, 1, 2, 1]
    with pytest.raises(ValueError, match="tolerance_s"):
        fault_instants(tr, -1.0)
    with pytest.raises(ValueError, match="sorted"):
        instant_labels(np.array([2.0, 1.0]), 1.0)


def test_summary_numbers(make_trace):
    day = 86400.0
    tr = make_trace([1 * day, 2 * day, 2 * day, 5 * day], nodes=["a", "b", "c", "a"], n_nodes=10,
                    window_s=10 * day, gpus_per_node=8)
    s = summary(tr)
    assert s["n_faults"] == 4 and s["n_nodes"] == 10 and s["n_nodes_with_faults"] == 3
    assert s["faults_per_node_day"] == pytest.approx(4 / 100)
    assert s["mtbf_node_hours"] == pytest.approx(100 * 24 / 4)
    assert s["mtbf_gpu_hours"] == pytest.approx(8 * 100 * 24 / 4)
    assert s["instant_sizes"] == {1: 2, 2: 1}
    assert s["repair_s"][0.5] == pytest.approx(60.0)
    assert s["causes"] == {"GPU": 4}
    text = str(s)
    assert "per GPU" in text and "sizes 2x1, 1x2" in text  # count x size, as in the data README
    frame = s.to_frame()
    assert {"statistic", "value"} == set(frame.columns)
    assert "gap_s.0.5" in set(frame["statistic"])


def test_summary_stepfun_matches_readme(stepfun_trace):
    s = summary(stepfun_trace, tolerance_s=1.0)
    assert s["n_instants"] == 529
    assert round(s["frac_gaps_below_1h"] * 583) == 159
    assert 44_000 < s["mtbf_gpu_hours"] < 48_000  # README: about 46,000 h
    assert list(s["causes"])[:3] == ["GPU", "Unknown Error", "Stress Test Failure"]
