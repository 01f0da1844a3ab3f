"""``spare plan --strategies`` (issues 13 and 23): every registered method through the one
planner, run in process through :func:`cli_runner.run`."""

from __future__ import annotations

import json

import pytest
from cli_runner import run

SMALL = ["--gpus", "120000", "--gpus-per-group", "1000", "--steps", "1500", "--simulate", "2"]


def test_strategies_all_recommends_the_argmin_with_cis() -> None:
    from spare_lib.registry.methods import METHODS

    p = run("plan", *SMALL, "--strategies", "all", "--json")
    assert p.returncode == 0, p.stderr
    assert "NaN" not in p.stdout and "Infinity" not in p.stdout  # strict JSON
    d = json.loads(p.stdout)
    assert d["methods"] == list(METHODS) and set(d["choices"]) == set(METHODS)
    means = {s: c["ttt"] for s, c in d["choices"].items() if c["finished"]}
    assert d["best"]["method"] == d["verdict"]["best"]["method"] == min(means, key=means.get)
    assert set(d["loss_vs_best"]) == set(METHODS) and d["loss_vs_best"][d["best"]["method"]]["loss"] == 0
    for m, x in d["loss_vs_best"].items():
        if m != d["best"]["method"] and not x["lower_bound"]:
            assert x["ci_low"] <= x["loss"] <= x["ci_high"]  # paired t, Holm-adjusted
            assert x["tied"] == (x["ci_low"] <= 0 <= x["ci_high"])


def test_strategies_text_names_the_best_and_says_when_spare_loses() -> None:
    p = run("plan", *SMALL, "--strategies", "spare,elastic-drop", "--rejoin-stall-s", "0")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.rstrip().splitlines()
    assert any(x.startswith("Best (simulated): ") for x in lines) and "95 % CI" in p.stdout
    assert lines[-1].startswith("Verdict: ")
    best = next(x for x in lines if x.startswith("Best (simulated): "))
    if "Elastic-drop" in best and "tied" not in lines[-1]:
        assert "SPARe is the wrong choice on this cluster" in lines[-1]
    # the rejoin assumption of the method whose groups rejoin is printed with the plan
    assert any("Elastic-drop+CKPT: a failed group rejoins after rejoin_s = 600 s" in x for x in lines)


def test_strategy_knobs_reach_the_plan() -> None:
    args = ["--gpus", "2000", "--gpus-per-group", "100", "--strategies", "elastic-rebalance"]
    p = run("plan", *args, "--stall-s", "60", "--microbatches", "2", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["cluster"]["run"] == {"microbatches": 2, "stall_s": 60.0}
    base = json.loads(run("plan", *args, "--json").stdout)
    assert d["fast"] != base["fast"]


@pytest.mark.parametrize(("args", "flag"), [
    (["--strategies", "spare,warp"], "--strategies"),
    (["--strategies", "spare,spare"], "--strategies"),
    (["--microbatches", "4"], "--microbatches only applies when --strategies includes "
                              "elastic-rebalance"),
    (["--rejoin-min", "5"], "--rejoin-min only applies when --strategies includes"),
    (["--strategies", "all", "--stall-s", "-1"], "--stall-s"),
    (["--strategies", "all", "--microbatches", "0"], "--microbatches"),
])
def test_strategies_bad_flags_one_line_exit_2(args: list[str], flag: str) -> None:
    p = run("plan", *args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in p.stderr


def test_cli_strategy_names_match_the_library() -> None:
    from spare_lib.cli import build_parser
    from spare_lib.cli.plan import request_from_args
    from spare_lib.cluster.planning.strategies import STRATEGIES
    from spare_lib.registry.methods import DEFAULT_STRATEGIES, METHODS, PAPER_METHODS

    assert STRATEGIES == DEFAULT_STRATEGIES == tuple(n for n in METHODS
                                                     if not n.startswith("spare-b"))
    parse = build_parser().parse_args
    common = ["plan", "--gpus", "2000", "--gpus-per-group", "100"]
    assert request_from_args(parse([*common, "--strategies", "all"])).methods == tuple(METHODS)
    assert request_from_args(parse([*common, "--strategies", "paper"])).methods == PAPER_METHODS
    assert request_from_args(parse(common)).methods == PAPER_METHODS
    assert request_from_args(parse([*common, "--strategies", "ckpt,spare"])).methods == ("ckpt", "spare")


@pytest.mark.slow  # reruns the README's full-size example (pytest -m slow)
def test_readme_strategies_example_is_what_the_command_prints() -> None:
    """The README's `spare plan --strategies` block is real output (wall time aside)."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = [b for b in re.findall(r"```console\n\$ spare ([^\n]*)\n(.*?)```", readme, re.S)
              if b[0].startswith("plan --strategies")]
    assert len(blocks) == 1

    def norm(text: str) -> list[str]:
        text = re.sub(r"; \d+ s\):", "; <t> s):", text)
        return [line.rstrip() for line in text.strip().splitlines()]

    cmd, shown = blocks[0]
    p = run(*cmd.split(), "--workers", "2")
    assert p.returncode == 0, p.stderr
    assert norm(p.stdout) == norm(shown)
