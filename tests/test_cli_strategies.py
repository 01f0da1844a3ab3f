"""``spare plan --strategies`` (issue 13), run in process through :func:`cli_runner.run`."""

from __future__ import annotations

import json

import pytest
from cli_runner import run

SMALL = ["--gpus", "120000", "--gpus-per-group", "1000", "--steps", "1500", "--simulate", "2"]



def test_strategies_all_recommends_the_argmin_with_cis() -> None:
    p = run("plan", *SMALL, "--strategies", "all", "--stall-s", "60", "--json")
    assert p.returncode == 0, p.stderr
    assert "NaN" not in p.stdout and "Infinity" not in p.stdout  # strict JSON
    d = json.loads(p.stdout)
    means = {s: c["ttt_over_t0"] for s, c in d["best_per_strategy"].items() if c["finished"]}
    assert d["recommended"] == d["best"] == min(means, key=means.get)
    assert set(d["gains"]) == set(d["strategies"]) - {d["recommended"]}
    assert d["config"]["stall_s"] == 60.0


def test_strategies_text_names_the_recommendation_and_says_when_spare_loses() -> None:
    p = run("plan", *SMALL, "--strategies", "spare,elastic-drop", "--rejoin-stall-s", "0")
    assert p.returncode == 0, p.stderr
    assert "Recommended:" in p.stdout and "paired bootstrap 95 % CI" in p.stdout
    rec = p.stdout.split("Recommended: ", 1)[1].split()[0].rstrip(",.;:")
    assert rec in ("SPARe+CKPT", "Elastic-drop"), p.stdout
    # the sentence appears exactly when SPARe+CKPT is not the recommendation, and names the winner
    says = "SPARe+CKPT is not the best choice here" in p.stdout
    assert says == (rec != "SPARe+CKPT"), p.stdout
    if says:
        assert f"SPARe+CKPT is not the best choice here: {rec} is" in p.stdout


@pytest.mark.parametrize(("args", "flag"), [
    (["--strategies", "spare,warp"], "--strategies"),
    (["--strategies", "spare,spare"], "--strategies"),
    (["--stall-s", "30"], "--stall-s"),
    (["--strategies", "all", "--stall-s", "-1"], "--stall-s"),
    (["--strategies", "all", "--microbatches", "0"], "--microbatches"),
])
def test_strategies_bad_flags_one_line_exit_2(args: list[str], flag: str) -> None:
    p = run("plan", *args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "Traceback" not in p.stderr


def test_cli_strategy_names_match_the_library() -> None:
    from spare_lib.cli.strategies import STRATEGY_NAMES

    from spare_lib.cluster.planning.strategies import STRATEGIES

    assert STRATEGY_NAMES == STRATEGIES


def test_readme_strategies_example_is_what_the_command_prints() -> None:
    """The README's `spare plan --strategies` block is real output (wall time aside)."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = [b for b in re.findall(r"```console\n\$ spare ([^\n]*)\n(.*?)```", readme, re.S)
              if "--strategies" in b[0]]
    assert len(blocks) == 1

    def norm(text: str) -> list[str]:
        text = re.sub(r"; \d+ s\):", "; <t> s):", text)
        return [line.rstrip() for line in text.strip().splitlines()]

    cmd, shown = blocks[0]
    p = run(*cmd.split(), "--workers", "2")
    assert p.returncode == 0, p.stderr
    assert norm(p.stdout) == norm(shown)
