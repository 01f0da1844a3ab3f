"""Loaders: the real datasets' known counts, FIFO pairing, and strict errors on bad input."""

from __future__ import annotations

import json
import lzma

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_lib.failures import FaultTrace, fault_instants, load_lifetimes, load_trace


@pytest.fixture(scope="module")
def stepfun():
    return load_trace("stepfun-infinitehbd")


# ------------------------------------------------------------------------------ real data
def test_stepfun_acceptance(stepfun):
    tr = stepfun
    assert tr.n_faults == 584
    assert tr.faults["node"].nunique() == 231
    assert tr.n_nodes == 400 and tr.gpus_per_node == 8
    assert tr.overlaps == 2 and tr.n_open == 0 and tr.skipped == {}
    sizes = fault_instants(tr, tolerance_s=1.0)["size"].value_counts().sort_index().to_dict()
    assert sizes == {1: 499, 2: 20, 3: 5, 4: 2, 6: 1, 8: 2}
    assert tr.faults["cause"].value_counts()["GPU"] == 158
    assert np.all(tr.faults["end_s"] >= tr.faults["start_s"])


def test_stepfun_overrides(stepfun):
    tr = load_trace("stepfun-infinitehbd", n_nodes=231, gpus_per_node=4)
    assert tr.n_nodes == 231 and tr.gpus_per_node == 4
    with pytest.raises(ValueError, match="n_nodes"):
        load_trace("stepfun-infinitehbd", n_nodes=100)


def test_titan_counts():
    tr = load_trace("titan-gpu-life")
    assert tr.n_faults == 6367 and tr.gpus_per_node == 1 and tr.n_nodes == 18_688
    assert tr.skipped == {"placement without failure event": 30976}
    assert tr.faults["cause"].value_counts().to_dict() == {"DBE": 4826, "OTB": 1541}
    assert tr.n_open == tr.n_faults  # Titan has no repair times
    assert tr.faults["domain"].str.match(r"^c\d+-\d+$").all()


def test_lanl_counts():
    one = load_trace("lanl-cfdr", system=20)
    assert one.n_faults == 2478 and one.n_nodes == 512 and one.gpus_per_node is None
    assert one.skipped == {"other system": 23739 - 2478}
    every = load_trace("lanl-cfdr")
    assert every.skipped == {"missing nodenum": 126}
    assert every.n_faults == 23739 - 126
    with pytest.raises(ValueError, match="system must be one of"):
        load_trace("lanl-cfdr", system=99)


def test_lifetimes_table():
    df = load_lifetimes("titan-gpu-life")
    assert len(df) == 30207 and int(df["dead"].sum()) == 5089
    assert set(df["batch"]) == {"old", "new"}


# ------------------------------------------------------------------------------ StepFun format
def _ev(node, t, kind, cls="GPU"):
    return {"node_id": node, "event_time": t, "event_type": kind,
            "fault_type": {"Level": "Hardware Failure", "Class": cls, "Desc": "x"}}


def _write_json(tmp_path, events, name="fault_trace.json"):
    p = tmp_path / name
    p.write_text(json.dumps(events))
    return p


def test_stepfun_fifo_pairing_and_open_faults(tmp_path):
    events = [_ev("a", 0.0, "fault_start", "Fan"), _ev("a", 1.0, "fault_start", "GPU"),
              _ev("a", 2.0, "fault_end"), _ev("a", 3.0, "fault_end"), _ev("b", 4.0, "fault_start")]
    tr = load_trace(_write_json(tmp_path, events))
    f = tr.faults
    assert f["start_s"].tolist() == [0.0, 86400.0, 4 * 86400.0]
    np.testing.assert_array_equal(f["end_s"].to_numpy()[:2], [2 * 86400.0, 3 * 86400.0])
    assert np.isnan(f["end_s"].iloc[2])
    assert f["cause"].tolist() == ["Fan", "GPU", "GPU"]
    assert tr.overlaps == 1 and tr.n_open == 1 and tr.window_s == 4 * 86400.0


@pytest.mark.parametrize(("events", "match"), [
    ([_ev("a", 1.0, "fault_end")], r"row 0, column 'event_type'.*no open fault_start"),
    ([_ev("a", 2.0, "fault_start"), _ev("a", 1.0, "fault_end")], r"row 1, column 'event_time'.*before"),
    ([_ev("a", "noon", "fault_start")], r"row 0, column 'event_time'.*unparseable"),
    ([_ev("a", 1.0, "fault_begin")], r"row 0, column 'event_type'.*unknown"),
    ([{"node_id": "a", "event_type": "fault_start"}], r"row 0, column 'event_time'.*missing"),
    ([], "non-empty"),
])
def test_stepfun_bad_events(tmp_path, events, match):
    with pytest.raises(ValueError, match=match):
        load_trace(_write_json(tmp_path, events))


def test_stepfun_truncated_and_empty(tmp_path):
    text = json.dumps([_ev("a", 0.0, "fault_start"), _ev("a", 1.0, "fault_end")])
    p = tmp_path / "fault_trace.json"
    p.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match="truncated JSON at line 1, column"):
        load_trace(p)
    p.write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_trace(p)


# ------------------------------------------------------------------------------ Titan format
_TITAN_HEAD = "SN,location,insert,remove,duration,out,event\n"


def _titan(tmp_path, body):
    p = tmp_path / "gc_full.csv"
    p.write_text(_TITAN_HEAD + body)
    return p


def test_titan_small(tmp_path):
    p = _titan(tmp_path, "1,c0-0c0s0n0,2014-01-01 00:00:00,2014-01-02 00:00:00,86400,TRUE,DBE\n"
                         "2,c0-0c0s0n1,2014-01-01 00:00:00,2014-01-03 00:00:00,172800,FALSE,\n"
                         "3,c1-0c0s0n1,,2014-01-01 12:00:00,,,OTB\n")
    tr = load_trace(p)
    assert tr.faults["start_s"].tolist() == [43200.0, 86400.0]
    assert tr.faults["domain"].tolist() == ["c1-0", "c0-0"]
    assert tr.window_s == 2 * 86400.0 and tr.skipped == {"placement without failure event": 1}


@pytest.mark.parametrize(("body", "match"), [
    ("1,c0-0c0s0n0,2014-01-02 00:00:00,2014-01-01 00:00:00,1,TRUE,DBE\n", r"row 2, column 'remove'.*before"),
    ("1,c0-0c0s0n0,2014-01-01 00:00:00,yesterday,1,TRUE,DBE\n", r"row 2, column 'remove'.*unparseable"),
    ("1,c0-0c0s0n0,2014-01-01 00:00:00,2014-01-02 00:00:00,1,TRUE,XID\n", r"row 2, column 'event'.*unknown"),
    ("1,c0-0c0s0n0,2014-01-01 00:00:00,2014-01-02 00:00:00,1,TRUE,DBE\n2,c0-0c0s0n1,2014-01-01 00:0",
     r"row 3, column 'remove'"),
])
def test_titan_bad_rows(tmp_path, body, match):
    with pytest.raises(ValueError, match=match):
        load_trace(_titan(tmp_path, body))


def test_titan_empty_and_missing_column(tmp_path):
    p = tmp_path / "gc_full.csv"
    p.write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_trace(p)
    p.write_text("SN,location,insert\n1,c0-0c0s0n0,2014-01-01 00:00:00\n")
    with pytest.raises(ValueError, match="missing column"):
        load_trace(p)


# ------------------------------------------------------------------------------ LANL format
_LANL_HEAD = "System,nodes,nodenum,Prob Started,Prob Fixed,Hardware,Software\n"


def _lanl(tmp_path, body, compress=True):
    raw = (_LANL_HEAD + body).encode()
    p = tmp_path / ("LA-UR-test.csv.xz" if compress else "LA-UR-test.csv")
    p.write_bytes(lzma.compress(raw) if compress else raw)
    return p


def test_lanl_small(tmp_path):
    p = _lanl(tmp_path, "20,4,1,1/1/2002 0:00,1/1/2002 1:00,Memory,\n"
                        "20,4,2,1/2/2002 0:00,1/2/2002 0:30,,OS\n"
                        "5,2,0,1/3/2002 0:00,1/3/2002 0:10,,\n"
                        "5,2,,1/4/2002 0:00,1/4/2002 0:10,,\n")
    tr = load_trace(p, system=20)
    assert tr.n_nodes == 4 and tr.faults["node"].tolist() == ["1", "2"]
    assert tr.faults["cause"].tolist() == ["Hardware", "Software"]
    assert tr.skipped == {"other system": 2}
    every = load_trace(p)
    assert every.n_nodes == 6 and every.skipped == {"missing nodenum": 1}
    assert every.faults["cause"].iloc[-1] == "Unrecorded"


@pytest.mark.parametrize(("body", "match"), [
    ("20,4,1,1/2/2002 0:00,1/1/2002 0:00,x,\n", r"row 2, column 'Prob Fixed'.*before"),
    ("20,4,1,1/2/2002 0:00,1/3/2002 0:00,x,\n20,4,1,soon,1/3/2002 0:00,x,\n",
     r"row 3, column 'Prob Started'.*unparseable"),
])
def test_lanl_bad_rows(tmp_path, body, match):
    with pytest.raises(ValueError, match=match):
        load_trace(_lanl(tmp_path, body))


def test_lanl_truncated_and_empty(tmp_path):
    p = _lanl(tmp_path, "20,4,1,1/1/2002 0:00,1/1/2002 1:00,Memory,\n" * 50)
    p.write_bytes(p.read_bytes()[:-20])
    with pytest.raises(ValueError, match="truncated or corrupt"):
        load_trace(p)
    p.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        load_trace(p)


# ------------------------------------------------------------------------------ generic CSV
def test_csv_units_and_open_faults(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text("node,start,end,cause\nn1,1,2,GPU\nn2,1.5,,\n")
    tr = load_trace(p, time_unit="h", n_nodes=10, gpus_per_node=8)
    assert tr.faults["start_s"].tolist() == [3600.0, 5400.0]
    assert tr.n_open == 1 and tr.n_nodes == 10 and tr.window_s == 7200.0
    assert tr.faults["cause"].tolist() == ["GPU", None]


@pytest.mark.parametrize(("body", "match"), [
    ("node,start,end\nn1,5,2\n", r"row 2, column 'end'.*before"),
    ("node,start,end\nn1,5,2\n", r"row 2, column 'end'.*before"),
    ("node,start,end\nn1,1,2\nn1,x,2\n", r"row 3, column 'start'.*unparseable"),
    ("node,start,end\nn1,1,2\nn1,", r"row 3, column 'start'"),
    ("node,start\nn1,1\n", "missing column"),
    ("", "empty"),
    ("node,start,end\n", "no fault rows"),
])
def test_csv_bad_input(tmp_path, body, match):
    p = tmp_path / "log.csv"
    p.write_text(body)
    with pytest.raises(ValueError, match=match):
        load_trace(p)


def test_unknown_format_and_bad_options(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text("node,start,end\nn1,1,2\n")
    with pytest.raises(ValueError, match="format must be one of"):
        load_trace(p, format="parquet")
    with pytest.raises(ValueError, match="time_unit must be one of"):
        load_trace(p, time_unit="weeks")
    with pytest.raises(ValueError, match="system is only meaningful"):
        load_trace(p, format="csv", system=3)
    q = tmp_path / "log.txt"
    q.write_text("x")
    with pytest.raises(ValueError, match="cannot infer the format"):
        load_trace(q)
    with pytest.raises(FileNotFoundError):
        load_trace(tmp_path / "nope.csv")


def test_fault_trace_validates():
    f = pd.DataFrame({"node": ["a"], "start_s": [5.0], "end_s": [1.0], "cause": [None], "domain": [None]})
    with pytest.raises(ValueError, match="end_s"):
        FaultTrace(f, 1, 10.0)
    f["end_s"] = 6.0
    with pytest.raises(ValueError, match="start_s"):
        FaultTrace(f, 1, 4.0)
    with pytest.raises(ValueError, match="n_nodes"):
        FaultTrace(f, 0, 10.0)


_node = st.sampled_from(["a", "b", "c", "gpu-7", "x y"])


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(_node, st.floats(0, 1e6, allow_nan=False), st.one_of(
    st.none(), st.floats(0, 1e5, allow_nan=False)), st.sampled_from([None, "GPU", "NIC"])), min_size=1,
    max_size=30), unit=st.sampled_from(["s", "min", "h", "d"]))
def test_csv_round_trip(tmp_path_factory, rows, unit):
    """Writing a trace with ``to_csv`` and reading it back gives the same faults (to float rounding
    of the unit conversion)."""
    f = pd.DataFrame({"node": [r[0] for r in rows], "start_s": [r[1] for r in rows],
                      "end_s": [np.nan if r[2] is None else r[1] + r[2] for r in rows],
                      "cause": [r[3] for r in rows], "domain": None})
    tr = FaultTrace(f, n_nodes=10, window_s=2e6, gpus_per_node=8)
    p = tr.to_csv(tmp_path_factory.mktemp("rt") / "t.csv", time_unit=unit)
    back = load_trace(p, time_unit=unit, n_nodes=10, window_s=2e6, gpus_per_node=8)
    a, b = tr.faults, back.faults
    assert a["node"].tolist() == b["node"].tolist() and a["cause"].tolist() == b["cause"].tolist()
    np.testing.assert_allclose(a["start_s"], b["start_s"], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(a["end_s"], b["end_s"], rtol=1e-12, atol=1e-9)
    assert back.overlaps == tr.overlaps and back.n_open == tr.n_open
