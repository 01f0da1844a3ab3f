"""The `spare` command line, exercised as a user would: through subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SPARE = [sys.executable, "-m", "spare_lib.cli"]


def run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*SPARE, *args], capture_output=True, text=True, timeout=timeout)


def test_simulate_json_small_run():
    p = run("simulate", "--method", "spare", "--N", "200", "--r", "9", "--steps", "50", "--seed", "3",
            "--json")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["label"] == "SPARe+CKPT" and res["ckpt_steps"] == 15  # the paper's C at N=200, r=9
    assert res["steps"] == 50 and res["ttt_over_t0"] >= 1.0 and 0 < res["availability"] <= 1


def test_simulate_is_deterministic():
    args = ("simulate", "--method", "rep", "--N", "200", "--r", "3", "--steps", "40", "--seed", "7",
            "--json")
    assert run(*args).stdout == run(*args).stdout


def test_sweep_from_yaml_and_csv(tmp_path):
    y = tmp_path / "points.yaml"
    y.write_text("points:\n  - {method: spare, N: 200, r: 4, steps: 30}\n"
                 "  - {method: ckpt, N: 200, r: 1, steps: 30}\n")
    out = tmp_path / "out.csv"
    p = run("sweep", str(y), "--backend", "serial", "--cache-dir", str(tmp_path / "c"), "--out", str(out),
            "--quiet")
    assert p.returncode == 0, p.stderr
    import pandas as pd

    df = pd.read_csv(out)
    assert df["method"].tolist() == ["spare", "ckpt"] and (df["steps"] == 30).all()
    c = tmp_path / "points.csv"
    df[["method", "N", "r", "steps"]].to_csv(c, index=False)
    p2 = run("sweep", str(c), "--backend", "serial", "--cache-dir", str(tmp_path / "c"), "--quiet")
    assert p2.returncode == 0, p2.stderr
    assert "spare" in p2.stdout and "ckpt" in p2.stdout


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("simulate", "--N", "0"), "--N"),
        (("simulate", "--N", "abc"), "--N"),
        (("simulate", "--steps", "-5"), "--steps"),
        (("simulate", "--system-mtbf-min", "0"), "--system-mtbf-min"),
        (("simulate", "--method", "magic"), "--method"),
        (("simulate", "--N", "200", "--r", "13", "--steps", "5"), "N=200"),
        (("sweep", "/nonexistent/points.csv"), "FILE"),
        (("sweep", "x.csv", "--backend", "mpi"), "--backend"),
        (("figures", "--only", "no_such_notebook"), "--only"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_bad_flags_one_line_error_exit_2(args, flag):
    p = run(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    err = p.stderr.strip().splitlines()
    assert err and err[-1].startswith("spare") and flag in err[-1], p.stderr
