"""Committed result files are reproducible: no wall times, floats at a stated precision, one writer."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from spare_lib._util.results_io import SIG_DIGITS, is_wall_time_key, round_sig, write_results
from spare_lib.config import RESULTS_DIR

RESULT_FILES = sorted(RESULTS_DIR.glob("*.csv")) + sorted(RESULTS_DIR.glob("*.json"))
#: Benchmark outputs: timings are their content, written by benchmarks/, not by `make figures`.
BENCHMARK_FILES = {"scale_runtime.csv"}
_FLOAT = re.compile(r"(?<![\w.])-?(\d+\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _keys(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield f"{path}{k}", k
            yield from _keys(v, f"{path}{k}.")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _keys(v, f"{path}{i}.")


def _digits(token: str) -> int:
    mant = re.split(r"[eE]", token.lstrip("-"))[0].replace(".", "").lstrip("0")
    return len(mant.rstrip("0")) if "." not in token.split("e")[0] else len(mant)


@pytest.mark.parametrize("path", RESULT_FILES, ids=[p.name for p in RESULT_FILES])
def test_no_committed_results_file_has_a_wall_time_column(path):
    if path.name in BENCHMARK_FILES:
        pytest.skip(f"{path.name} is a benchmark's timing table (benchmarks/)")
    if path.suffix == ".csv":
        wall = [c for c in pd.read_csv(path, nrows=0).columns if is_wall_time_key(c)]
    else:
        wall = [p for p, k in _keys(json.loads(path.read_text())) if is_wall_time_key(k)]
    assert not wall, f"{path.name} stores wall times {wall}: write it with write_results"


@pytest.mark.parametrize("path", RESULT_FILES, ids=[p.name for p in RESULT_FILES])
def test_floats_are_written_at_the_stated_precision(path):
    """Every number has at most SIG_DIGITS significant digits (write_results' %.12g)."""
    if path.name in BENCHMARK_FILES:
        pytest.skip(f"{path.name} is written by benchmarks/bench_scale.py")
    text = path.read_text()
    long = [t for t in (m.group(0) for m in _FLOAT.finditer(text)) if "." in t and _digits(t) > SIG_DIGITS]
    assert not long, f"{path.name}: floats with more than {SIG_DIGITS} digits, e.g. {long[:3]}"


def test_write_results_rounds_sorts_and_moves_wall_times_to_the_run_log(tmp_path):
    df = pd.DataFrame({"N": [600, 200], "mu": [64.46209981537879, 1 / 3], "elapsed_s": [8.8, 5.4]})
    log = tmp_path / "run_log.jsonl"
    out = write_results(df, tmp_path / "t.csv", sort_by=["N"], run_log=log)
    assert out.read_text() == "N,mu\n200,0.333333333333\n600,64.4620998154\n"
    entry = json.loads(log.read_text())
    assert entry["file"] == "t.csv" and entry["wall_times"] == {"elapsed_s": [8.8, 5.4]}
    rec = {"a": {"elapsed_s": 3.0, "x": 0.1 + 0.2, "y": float("nan")}, "b": [1, 2.0000000000001]}
    write_results(rec, tmp_path / "r.json", run_log=log)
    assert json.loads((tmp_path / "r.json").read_text()) == {"a": {"x": 0.3, "y": None}, "b": [1, 2.0]}
    assert len(log.read_text().splitlines()) == 2


def test_write_results_output_does_not_depend_on_row_order_or_last_digits(tmp_path):
    a = pd.DataFrame({"k": ["x", "y", "z"], "v": [1.0, 2.0, 3.0]})
    b = a.iloc[[2, 0, 1]].copy()
    b["v"] = b["v"] * (1 + 1e-15)
    pa = write_results(a, tmp_path / "a.csv", sort_by=["k"], run_log=None)
    pb = write_results(b, tmp_path / "b.csv", sort_by=["k"], run_log=None)
    assert pa.read_text() == pb.read_text()


def test_write_results_validates_its_inputs(tmp_path):
    with pytest.raises(ValueError, match="path must end in .csv or .json"):
        write_results(pd.DataFrame({"a": [1]}), tmp_path / "t.txt")
    with pytest.raises(ValueError, match="sort_by names columns"):
        write_results(pd.DataFrame({"a": [1]}), tmp_path / "t.csv", sort_by=["b"])
    assert round_sig(float("inf")) == float("inf")
