"""Failure mixes (spare_lib.failures.mix): presets, the YAML format and its errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from spare_lib.failures import failure_mix, load_mix
from spare_lib.failures.mix import LLAMA3_TABLE5, RADII, FailureClass, FailureMix


def test_llama3_preset_is_table5_row_by_row() -> None:
    """Every row of the table is a class; 419 events, shares by count, the radii as mapped."""
    mix = failure_mix("llama3")
    assert sum(row[1] for row in LLAMA3_TABLE5) == 419
    assert [c.name for c in mix.classes] == [row[0] for row in LLAMA3_TABLE5]
    for c, row in zip(mix.classes, LLAMA3_TABLE5, strict=True):
        assert c.share == pytest.approx(row[1] / 419, rel=1e-12) and c.radius == row[2]
    assert mix.share("job") == pytest.approx((54 + 7 + 6 + 2) / 419)
    assert mix.share("domain") == pytest.approx(35 / 419)
    assert sum(mix.share(r) for r in RADII) == pytest.approx(1.0, abs=1e-12)
    assert all(c.detect_s is not None and c.note for c in mix.classes)


def test_paper_preset_is_the_paper() -> None:
    mix = failure_mix("paper")
    assert mix.is_paper and mix.share("group") == 1.0 and len(mix.classes) == 1
    assert not failure_mix("llama3").is_paper


def test_stepfun_preset_counts_the_multi_server_instants() -> None:
    """From the trace (../shared/data/README.md: 529 instants, 30 on several servers)."""
    mix = failure_mix("stepfun")
    assert [c.radius for c in mix.classes] == ["group", "domain"]
    assert mix.share("domain") == pytest.approx(30 / 529)


def test_yaml_counts_and_shares(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text("classes:\n  - {name: a, count: 3, radius: group}\n"
                 "  - {name: b, count: 1, radius: job, detect_s: 60, rejoin_s: .inf}\n")
    mix = load_mix(p)
    assert mix.name == "m" and [c.share for c in mix.classes] == [0.75, 0.25]
    assert mix.classes[1].detect_s == 60 and math.isinf(mix.classes[1].rejoin_s)
    assert mix.classes[0].detect_s is None  # the knob's
    assert failure_mix(str(p)) == mix


@pytest.mark.parametrize(("text", "line", "match"), [
    ("classes:\n  - {name: a, share: 1.0, radius: group, colour: red}\n", 2, "unknown key 'colour'"),
    ("classes:\n  - {name: a, share: 1.0}\n", 2, "must set 'radius'"),
    ("classes:\n  - {name: a, share: 0.5, radius: group}\n  - {name: b, share: 0.4, "
     "radius: job}\n", 2, "must add up to 1"),
    ("classes:\n  - name: a\n    share: 1.0\n    radius: planet\n", 2, "radius of class 'a'"),
    ("classes:\n  - {name: a, share: 1.0, radius: group, detect_s: -1}\n", 2, "detect_s"),
    ("classes:\n  - {name: a, count: 2, radius: group}\n  - {name: b, share: 0.1, "
     "radius: job}\n", 2, "every class sets 'count'"),
    ("name: x\nclasses: [\n", 3, "not valid YAML"),
    ("nom: x\nclasses: []\n", 1, "unknown key 'nom'"),
    ("name: x\n", 1, "must have 'classes'"),
    ("classes:\n  - {name: a, share: 1.0, radius: group}\n  - {name: a, share: 0.0, "
     "radius: job}\n", 2, "distinct"),
])
def test_yaml_errors_name_the_file_and_line(tmp_path: Path, text: str, line: int,
                                            match: str) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ValueError, match=match) as err:
        load_mix(p)
    assert str(err.value).startswith(f"{p}:{line}:"), str(err.value)


def test_bad_mix_names_raise() -> None:
    with pytest.raises(ValueError, match="failure_mix must be one of paper, llama3, stepfun"):
        failure_mix("nowhere.yaml")
    with pytest.raises(ValueError, match="share of class 'x'"):
        FailureClass("x", 1.5, "group")
    with pytest.raises(ValueError, match="must add up to 1"):
        FailureMix("m", (FailureClass("x", 0.5, "group"),))


def test_config_checks_the_mix() -> None:
    from spare_lib.cluster import ClusterConfig

    with pytest.raises(ValueError, match="failure_mix must be one of"):
        ClusterConfig(failure_mix="no-such-mix")
    with pytest.raises(ValueError, match="domain_fault_share must be 0 with failure_mix='llama3'"):
        ClusterConfig(failure_mix="llama3", domain_fault_share=0.1)
    assert ClusterConfig(failure_mix="llama3").mix().name == "llama3"
