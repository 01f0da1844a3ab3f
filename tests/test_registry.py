"""Issue 23 acceptance: one registry of knobs (:mod:`spare_lib.registry.knobs`) behind the
library and the command line, and one registry of methods.

* **defaults**: every CLI flag's argparse default is None (so a command can tell "given" from
  "absent"), and the value a command uses when the flag is absent is the registry's default;
  ``ClusterConfig``, ``ClusterSpec``, ``cluster_spec``, ``PlanRequest`` and ``TraceFailures``
  default to the registry's values;
* **one name**: no two knobs share a flag, no flag takes minutes or hours unless the registry
  declares that alias, every duration knob is in seconds and ends in ``_s``;
* **docs/knobs.md** is the registry's table (:func:`~spare_lib.registry.knobs.knobs_markdown`).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import run

from spare_lib.cli import build_parser
from spare_lib.registry.knobs import KNOBS, knob, knobs_markdown
from spare_lib.registry.methods import METHODS, PAPER_METHODS

ROOT = Path(__file__).resolve().parents[1]


def _subparsers(p: argparse.ArgumentParser, path: tuple[str, ...] = ()
                ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield (*path, name), sub
                yield from _subparsers(sub, (*path, name))


def _command(name: str) -> argparse.ArgumentParser:
    return dict(_subparsers(build_parser()))[(name,)]


def _alias_flags() -> dict[str, tuple[str, float]]:
    """alias flag -> (knob, factor) for every alias the registry declares."""
    return {a.flag: (k.name, a.factor) for k in KNOBS.values() for a in k.aliases}


def _knob_of(action: argparse.Action) -> str | None:
    """The knob an action sets (its dest, or ``name__unit`` for an alias), else None."""
    name = action.dest.split("__")[0]
    return name if name in KNOBS else None


# ------------------------------------------------------------------------------ defaults


def test_every_spare_plan_flag_defaults_to_none():
    """So that check_plan_flags can tell a given flag from an absent one (--json is a switch of
    the output, not a knob)."""
    bad = {a.option_strings[0]: a.default for a in _command("plan")._actions
           if a.option_strings and a.dest not in ("help", "json") and a.default is not None}
    assert bad == {}


def _knob_flags(cmd: str) -> list[tuple[str, str]]:
    return [(cmd, a.option_strings[0]) for a in _command(cmd)._actions
            if a.option_strings and _knob_of(a)]


@pytest.mark.parametrize(("cmd", "flag"), _knob_flags("plan") + _knob_flags("simulate"))
def test_every_knob_flag_defaults_to_none(cmd, flag):
    (action,) = [a for a in _command(cmd)._actions if flag in a.option_strings]
    assert action.default is None


def test_spare_plan_without_flags_uses_the_registry_defaults():
    from spare_lib.cli.plan import request_from_args
    from spare_lib.cluster.planning import RUN_KNOBS, cluster_spec

    req = request_from_args(build_parser().parse_args(["plan"]))
    assert req.spec == cluster_spec() and req.spec.run == ()
    assert all(req.spec.knob(k) == KNOBS[k].default for k in RUN_KNOBS)
    assert req.methods == PAPER_METHODS and KNOBS["strategies"].default == "paper"
    for field, name in (("r_window", "r_window"), ("layout", "layout"),
                        ("rep_placement", "rep_placement"), ("model", "model"),
                        ("trials", "simulate"), ("steps", "plan_steps"),
                        ("min_restarts", "min_restarts"), ("run_cap_t0", "run_cap_t0"),
                        ("common_failures", "common_failures"), ("seed", "seed"),
                        ("spare_r", "spare_r"), ("rep_r", "rep_r")):
        assert getattr(req, field) == KNOBS[name].default, field
    assert req.checkpoint_factors == tuple(float(x) for x in
                                           KNOBS["checkpoint_factors"].default.split(","))
    assert req.trace is None and KNOBS["failures"].default is None


def test_spare_plan_log_defaults_are_the_registrys(tmp_path):
    """The trace knobs the command fills in when a log is given."""
    from spare_lib.cli.plan import _trace

    log = tmp_path / "log.csv"
    log.write_text("node,start,end\nn1,10,20\nn2,500,530\nn1,900,950\n")
    args = build_parser().parse_args(["plan", "--failures", str(log)])
    t = _trace(args)
    for field, name in (("method", "failures_method"), ("law", "failures_law"),
                        ("placement", "failures_placement"), ("gpus_per_server", "gpus_per_server"),
                        ("tolerance_s", "failures_tolerance_s"), ("chunk_s", "failures_chunk_s"),
                        ("checkpoint_rule", "failures_checkpoint")):
        assert getattr(t, field) == KNOBS[name].default, field
    assert t.horizon_s is None and "failures_horizon_s" not in KNOBS  # derived, not a knob
    assert not t.gpus_per_node_given  # a generic CSV has no GPUs per node: an assumption


def test_spare_simulate_without_flags_uses_the_registry_defaults(monkeypatch):
    from spare_lib.cluster.config import allreduce_time_s
    from spare_lib.cluster.runs import sweeps

    got = {}

    def fake(method, N, r, ckpt, **kw):
        got.update(method=method, N=N, r=r, ckpt=ckpt, **kw)
        return {"completed": True}

    monkeypatch.setattr(sweeps, "simulate_point", fake)
    p = run("simulate", "--json")
    assert p.returncode == 0, p.stderr
    d = {k: KNOBS[k].default for k in KNOBS}
    N = d["gpus"] // d["gpus_per_group"]
    ta = allreduce_time_s(N, d["model_bytes"] / d["gpus_per_group"], d["allreduce"],
                          bw_bytes_s=d["allreduce_bw_bytes_s"], latency_s=d["allreduce_latency_s"])
    for k in ("steps", "compute_per_stack_s", "restart_s", "checkpoint_s", "weibull_shape",
              "failure_dist", "domain_size", "domain_fault_share", "stall_s", "rejoin_s",
              "rejoin_stall_s", "microbatches", "fetch_s", "layout", "rep_placement",
              "exact_patch", "seed"):
        assert got[k] == d[k], k
    assert got["N"] == N and got["n_gpus"] == d["gpus"]
    assert got["system_mtbf_s"] == pytest.approx(d["gpu_mtbf_s"] / d["gpus"])
    assert got["allreduce_s"] == pytest.approx(ta)
    t0 = d["steps"] * (d["compute_per_stack_s"] + ta)
    assert got["max_wall_s"] == pytest.approx(d["max_wall_t0"] * t0)


def test_cluster_config_fields_default_to_the_registry():
    from spare_lib.cluster import ClusterConfig

    for f in dataclasses.fields(ClusterConfig):
        assert f.name in KNOBS and f.default == KNOBS[f.name].default, f.name
    assert ClusterConfig() == ClusterConfig(**{f.name: KNOBS[f.name].default
                                               for f in dataclasses.fields(ClusterConfig)})


def test_cluster_spec_and_plan_request_default_to_the_registry():
    from spare_lib.cluster.config import allreduce_time_s
    from spare_lib.cluster.planning import ClusterSpec, PlanRequest, TraceFailures, cluster_spec

    derived = {"system_mtbf_s", "gpu_mtbf_s", "allreduce_s", "checkpoint_s"}  # None: derived
    # (checked below)
    for name, prm in inspect.signature(cluster_spec).parameters.items():
        if prm.kind is prm.VAR_KEYWORD:
            continue
        if name in derived:
            assert prm.default is None, name
        else:
            assert prm.default == KNOBS[name].default, name
    s = cluster_spec()
    d = {k: KNOBS[k].default for k in KNOBS}
    assert s.system_mtbf_s == pytest.approx(d["gpu_mtbf_s"] / d["gpus"])
    assert s.allreduce_s == pytest.approx(allreduce_time_s(
        s.N, d["model_bytes"] / d["gpus_per_group"], d["allreduce"],
        bw_bytes_s=d["allreduce_bw_bytes_s"], latency_s=d["allreduce_latency_s"]))
    assert s.step_s == pytest.approx(d["compute_per_stack_s"] + s.allreduce_s)
    assert s.checkpoint_s == pytest.approx(d["model_bytes"] / d["checkpoint_bw_bytes_s"])
    assert s.checkpoint_s == pytest.approx(d["checkpoint_s"])  # the knob's default: the same T_s
    for f in dataclasses.fields(ClusterSpec):
        if f.default is not dataclasses.MISSING and f.name != "run":
            assert f.default == KNOBS[f.name].default, f.name
    req = {f.name: f.default for f in dataclasses.fields(PlanRequest)}
    for field, name in (("r_window", "r_window"), ("layout", "layout"),
                        ("rep_placement", "rep_placement"), ("model", "model"),
                        ("trials", "simulate"), ("steps", "plan_steps"),
                        ("min_restarts", "min_restarts"), ("run_cap_t0", "run_cap_t0"),
                        ("common_failures", "common_failures"), ("seed", "seed"),
                        ("spare_r", "spare_r"), ("rep_r", "rep_r")):
        assert req[field] == KNOBS[name].default, field
    assert req["methods"] == PAPER_METHODS
    assert req["checkpoint_factors"] == tuple(float(x) for x in
                                              KNOBS["checkpoint_factors"].default.split(","))
    tf = {f.name: f.default for f in dataclasses.fields(TraceFailures)}
    for field, name in (("method", "failures_method"), ("law", "failures_law"),
                        ("placement", "failures_placement"), ("gpus_per_server", "gpus_per_server"),
                        ("tolerance_s", "failures_tolerance_s"), ("chunk_s", "failures_chunk_s"),
                        ("checkpoint_rule", "failures_checkpoint")):
        assert tf[field] == KNOBS[name].default, field
    assert tf["horizon_s"] is None  # the first horizon: 1.5 x the slowest candidate's model TTT


def test_every_default_is_in_its_own_range():
    for k in KNOBS.values():
        if k.default is not None:
            assert k.check(k.default) == k.default, k.name


# ------------------------------------------------------------------------------ one name


def _flag_owners() -> dict[str, list[str]]:
    """flag (or alias) -> the knobs that declare it."""
    out: dict[str, list[str]] = {}
    for k in KNOBS.values():
        for f in (k.cli_flag, *(a.flag for a in k.aliases)):
            out.setdefault(f, []).append(k.name)
    return out


@pytest.mark.parametrize("flag", sorted(_flag_owners()))
def test_no_two_knobs_share_a_flag(flag):
    assert len(_flag_owners()[flag]) == 1, _flag_owners()[flag]


def test_steps_and_plan_steps_have_one_flag_each():
    """The run length of a config (``steps``, ``spare simulate --steps``) and the planner's
    (``plan_steps``, an integer or 'auto', ``spare plan --plan-steps``) were two knobs behind one
    flag; ``spare plan --steps`` stays as the old spelling of ``--plan-steps``."""
    assert KNOBS["steps"].cli_flag == "--steps" and KNOBS["plan_steps"].cli_flag == "--plan-steps"
    assert KNOBS["plan_steps"].old_flags == ("--steps",)
    assert "--steps" not in _flag_owners()["--plan-steps"]


def _old_flags() -> list[tuple[str, str]]:
    return [(k.name, f) for k in KNOBS.values() for f in k.old_flags]


@pytest.mark.parametrize(("name", "old"), _old_flags())
def test_an_old_spelling_is_its_knob_where_no_other_knob_takes_it(name, old):
    """In every command that takes the knob, its old spelling gives the same value as its flag,
    is reported as typed, is refused together with the flag, and belongs to no other knob of
    that command."""
    from spare_lib.cli.knobs import given_flag, knob_given, knob_value, old_dest

    k = KNOBS[name]
    value = "3" if k.kind in ("int", "float", "str") else k.choices[-1]
    seen = 0
    for path, sub in _subparsers(build_parser()):
        dests = {o: a.dest for a in sub._actions for o in a.option_strings}
        if k.cli_flag not in dests:
            assert dests.get(old, "").split("__")[0] != name, (path, old)
            continue
        seen += 1
        assert dests[old] == old_dest(name, old), (path, old, dests[old])
        new_args = sub.parse_args([k.cli_flag, value])
        old_args = sub.parse_args([old, value])
        assert knob_value(old_args, name) == knob_value(new_args, name), path
        assert knob_given(old_args, name) and given_flag(old_args, name) == old
        assert given_flag(new_args, name) == k.cli_flag
        with pytest.raises(SystemExit):
            sub.parse_args([k.cli_flag, value, old, value])
    assert seen >= 1


_MINUTES_OR_HOURS = re.compile(r"^--[\w-]+-(min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days)$")


def test_no_flag_takes_minutes_or_hours_unless_a_registry_alias():
    aliases = _alias_flags()
    for path, sub in _subparsers(build_parser()):
        for a in sub._actions:
            for flag in a.option_strings:
                if _MINUTES_OR_HOURS.search(flag):
                    assert flag in aliases, (path, flag)
                    assert a.dest.startswith(aliases[flag][0] + "__"), (path, flag)


@pytest.mark.parametrize(("flag", "value"), [(f, "3") for f in sorted(_alias_flags())])
def test_every_alias_is_its_knob_times_the_factor(flag, value):
    from spare_lib.cli.knobs import given_flag, knob_given, knob_value

    name, factor = _alias_flags()[flag]
    args = build_parser().parse_args(["plan", flag, value])
    assert knob_given(args, name) and given_flag(args, name) == flag
    assert knob_value(args, name) == pytest.approx(3 * factor)
    assert knob(name).unit == "s"


def test_every_duration_knob_is_in_seconds_and_ends_in_s():
    for k in KNOBS.values():
        if k.unit == "s":
            assert k.name.endswith("_s"), k.name
        if k.name.endswith("_s"):
            assert k.unit in ("s", "B/s"), (k.name, k.unit)
        for a in k.aliases:
            assert k.unit == "s" and a.factor > 1, (k.name, a.flag)


def test_every_method_knob_names_registered_methods():
    for k in KNOBS.values():
        assert k.methods == ("all",) or set(k.methods) <= set(METHODS), k.name
    for m in METHODS.values():
        assert set(m.knobs) <= set(KNOBS), m.name


def test_the_readme_lists_the_renames():
    readme = (ROOT / "README.md").read_text()
    for old, new in (("--restart-min", "--restart-s"), ("--system-mtbf-min", "--system-mtbf-s"),
                     ("--gpu-mtbf-hours", "--gpu-mtbf-s"), ("--rejoin-min", "--rejoin-s"),
                     ("--spare-window", "--r-window"), ("--strategy-window", "--r-window"),
                     ("--max-wall-t0", "--run-cap-t0"), ("--failures-dist", "--failures-law"),
                     ("--no-ckpt-only", "--strategies spare,rep")):
        assert re.search(re.escape(old) + r".{0,80}" + re.escape(new), readme), (old, new)


# ------------------------------------------------------------------------------ docs/knobs.md


def test_docs_knobs_md_is_the_registrys_table():
    """docs/knobs.md = a short header + knobs_markdown(): regenerate it when a knob changes
    (``python -c "from spare_lib.registry.knobs import knobs_markdown as k; print(k(), end='')"``
    below the header)."""
    text = (ROOT / "docs" / "knobs.md").read_text()
    i = text.index("<!-- knobs:start -->\n| knob | CLI flag (aliases) |")
    assert text[i:] == f"<!-- knobs:start -->\n{knobs_markdown()}<!-- knobs:end -->\n"
    header = text[:i]
    assert header.startswith("# ") and "knobs_markdown" in header and "|" not in header
    assert all(f"`{k.name}`" in text for k in KNOBS.values())
