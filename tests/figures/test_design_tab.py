"""The App's spare design tab: same inputs, same best plan and command as ``spare design``."""

from __future__ import annotations

import shlex

import pytest
from cli_runner import run

from spare_lib.figures.design_tab import DESIGN_KNOBS, Designer, design_command, design_label
from spare_lib.registry.knobs import KNOBS

SMALL = {"params": 70e9, "tokens": 2e11, "gpus": 1024, "gpu": "h100", "mfu": 0.4,
         "tokens_per_step": 8e6}


def test_labels_are_the_cli_flags_with_the_registry_units():
    for name in DESIGN_KNOBS:
        assert design_label(name).split()[0] == KNOBS[name].cli_flag
    assert design_label("gpus") == "--gpus [GPUs]"


def test_the_tab_prints_what_spare_design_prints():
    d = Designer(SMALL)
    res = d.search()
    assert res is not None
    cmd = design_command(d.values())
    argv = shlex.split(cmd)[1:]
    assert argv[0] == "design"
    p = run(*argv)
    assert p.returncode == 0, p.stderr
    best = [x for x in p.stdout.splitlines() if x.startswith("Best: ")]
    assert best == [res.best_line()]
    assert res.best_line() in d.out.value.replace("&#x27;", "'")
    assert "spare-design-plans" in d.out.value


@pytest.mark.parametrize(("field", "value", "words"), [
    ("mfu", 1.5, "mfu must be in (0, 1]"), ("params", 1e15, "no group size is valid"),
    ("tokens", 0.0, "tokens"),
])
def test_bad_input_shows_one_line_and_no_result(field, value, words):
    d = Designer(SMALL | {field: value})
    assert d.search() is None
    assert "spare-design-error" in d.out.value and words in d.out.value
