"""``spare design`` (issue 27): text, strict JSON against docs/design.schema.json (which reuses
the planner's $defs), the Pareto plot, and one-line refusals (exit 2) of bad jobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: A small job (70B parameters, 25,000 steps on 1,024 H100): a search of a few seconds.
JOB = ("--params", "70e9", "--tokens", "2e11", "--gpus", "1024", "--tokens-per-step", "8e6")
FAST = ("--group-sizes", "96")


def _validator() -> Draft202012Validator:
    plan = json.loads((DOCS / "plan.schema.json").read_text())
    design = json.loads((DOCS / "design.schema.json").read_text())
    registry = Registry().with_resources(
        [(s["$id"], Resource.from_contents(s)) for s in (plan, design)])
    return Draft202012Validator(design, registry=registry)


def test_design_prints_plans_front_and_best():
    p = run("design", *JOB, *FAST)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "configurations searched" in out and "Best plans" in out and "Pareto front" in out
    assert out.strip().splitlines()[-1].startswith("Best: ")
    assert "skipped: M = 1:" in out  # 70B does not fit one GPU


def test_design_json_follows_its_schema(tmp_path):
    plot = tmp_path / "front.png"
    p = run("design", *JOB, *FAST, "--json", "--plot", str(plot), "--chain-states", "16")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    errors = sorted(_validator().iter_errors(d), key=str)
    assert not errors, errors[0]
    assert d["search"] == {"c_points": 64, "chain_states": 16, "refine": 5}
    assert d["best"]["method"] == d["plans"][0]["method"]
    assert d["evaluations"] <= d["searched"] + 20
    assert plot.stat().st_size > 1000
    # the schema can fail: a plan without its days is refused
    d["plans"][0].pop("days")
    assert list(_validator().iter_errors(d))


@pytest.mark.parametrize(("args", "expect"), [
    (("--params", "1e15", "--tokens", "2e12", "--gpus", "4096"),
     "--params 1e+15: the training state"),
    (("--params", "0", "--tokens", "2e12"), "--params must be"),
    (("--params=-70e9", "--tokens", "2e12"), "--params must be"),
    (("--params", "70e9", "--tokens", "0"), "--tokens must be"),
    (("--params", "70e9", "--tokens", "2e12", "--gpus", "0"), "--gpus must be"),
    (("--params", "70e9", "--tokens", "2e12", "--mfu", "0"), "--mfu must be in (0, 1]"),
    (("--params", "70e9", "--tokens", "2e12", "--mfu", "1.2"), "--mfu must be in (0, 1]"),
    (("--params", "70e9", "--tokens", "2e12", "--mfu=-0.3"), "--mfu must be in (0, 1]"),
    (("--params", "70e9", "--tokens", "2e12", "--tokens-per-step", "0"),
     "--tokens-per-step must be"),
    (("--params", "70e9", "--tokens", "2e12", "--storage-bw-bytes-s", "-1"),
     "--storage-bw-bytes-s must be"),
    (("--tokens", "2e12",), "--params is required"),
    (("--params", "70e9", "--tokens", "2e12", "--simulate", "0"), "--simulate must be"),
    (("--params", "70e9", "--tokens", "2e12", "--gpu", "v100"), "--gpu"),
    (("--params", "70e9", "--tokens", "2e12", "--chain-states", "4"),
     "--chain-states must be an integer in [8, 100000]"),
    (("--params", "70e9", "--tokens", "2e12", "--c-points", "1"),
     "--c-points must be an integer in [2, 100000]"),
    (("--params", "70e9", "--tokens", "2e12", "--refine=-1"),
     "--refine must be an integer in [0, 10000]"),
])
def test_bad_jobs_exit_2_with_one_line_naming_the_flag(args, expect):
    p = run("design", *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 or lines[0].startswith("usage:"), p.stderr
    assert expect in lines[-1], lines[-1]
    assert "Traceback" not in p.stderr


def test_simulate_confirms_with_the_planners_verdict():
    """--simulate K: the best group size's top methods through run_plan (common random numbers);
    the JSON's best and loss_vs_best are the simulation's, and its plan is a spare plan document."""
    p = run("design", "--params", "70e9", "--tokens", "2e10", "--gpus", "1024",
            "--tokens-per-step", "8e6", "--group-sizes", "96", "--simulate", "2", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert not list(_validator().iter_errors(d))
    sim = d["simulation"]
    assert sim["simulated"] and sim["trials"] == 2 and sim["crn"]
    assert d["best"] == sim["best"] and d["loss_vs_best"] == sim["loss_vs_best"]
    assert sim["verdict"]["source"] == "simulated"
    for v in sim["loss_vs_best"].values():  # a loss whose interval covers 0 is a tie, never a win
        if v["ci_low"] is not None and v["ci_low"] <= 0 <= v["ci_high"]:
            assert v["tied"]
