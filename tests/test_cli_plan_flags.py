"""Issue 23 acceptance: every ``spare plan`` flag acts or is refused, in every mode.

Each flag of the ``plan`` parser (aliases included) is given, with a valid non-default value, on
top of the base command line of each mode:

* ``model``: the fast model only; ``simulate``: ``--simulate 2`` on short runs;
* ``strategies``: ``--strategies all``, with and without ``--simulate``;
* ``failures``: ``--failures LOG`` (a small generic CSV written here), with and without
  ``--simulate``.

The outcome is one of

* **acts**: the output changes. The JSON is compared without the keys that only echo the
  request (:data:`ECHO`: the cluster, the seed, the layout names...), so a flag that is merely
  printed back does not count; the execution flags (``--workers``, ``--backend``,
  ``--cache-dir``, ``--progress``), which by design never change the numbers, act when they reach
  the executor (:func:`spare_lib.cluster.runs.sweeps.run_sweep`, spied here);
* **refused**: exit 2 and one line on stderr, ``spare: error: ...``, naming the flag as typed;
* **ignored** (accepted, nothing changes) or **error** (any other exit): never acceptable.

Which flags are refused in which mode is the design of :func:`spare_lib.cli.plan.check_plan_flags`
(:func:`expected`): a simulation flag without ``--simulate``, a method's knob when no requested
method reads it, a log's flag without ``--failures``, a knob the log replaces. Every other flag
must act. (The library bugs this enumeration found, once strict xfails here, are fixed.)

Small and fast: N = 20 groups (200,000 GPUs in groups of 10,000: m = 15 min, so every method
restarts within 150 steps and CKPT-only hits the run cap), 2 trials of 150 steps, serial.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_runner import Completed, run

#: N = 20 groups, m = 15 min from the default per-GPU MTBF (1.8e8 s / 200,000 GPUs).
SMALL = ("--gpus", "200000", "--gpus-per-group", "10000")
#: N = 20 groups for the log (m ~ 15 min from its faults, 10x fewer servers to synthesize).
SMALL_LOG = ("--gpus", "20000", "--gpus-per-group", "1000", "--failures", "{log}")
SIM = ("--simulate", "2", "--plan-steps", "150", "--checkpoint-factors", "none", "--backend",
       "serial")

#: The base command line of each mode (after ``plan``); {log} is the fault log.
MODES: dict[str, tuple[str, ...]] = {
    "model": SMALL,
    "simulate": (*SMALL, *SIM),
    "strategies": (*SMALL, "--strategies", "all"),
    "strategies+simulate": (*SMALL, "--strategies", "all", *SIM),
    "failures": SMALL_LOG,
    "failures+simulate": (*SMALL_LOG, *SIM),
}

#: Keys of ``spare plan --json`` that echo the request (or describe it) rather than answer it.
ECHO = ("schema", "cluster", "failures", "methods", "model", "model_note", "layout",
        "rep_placement", "trials", "seed", "run_cap_t0", "checkpoint_factors", "assumptions")

#: A valid non-default value of every flag (in the modes where the base already sets the flag,
#: :func:`value` gives another one).
VALUES: dict[str, tuple[str, ...]] = {
    "--gpus": ("300000",),
    "--gpus-per-group": ("5000",),
    "--gpu-mtbf-s": ("3.6e8",),
    "--gpu-mtbf-hours": ("100000",),
    "--system-mtbf-s": ("1800",),
    "--system-mtbf-min": ("30",),
    "--restart-s": ("1200",),
    "--restart-min": ("20",),
    "--checkpoint-s": ("30",),
    "--step-s": ("100",),
    "--allreduce-s": ("10",),
    "--allreduce": ("preset",),
    "--model-bytes": ("2e12",),
    "--weibull-shape": ("1.5",),
    "--failure-dist": ("exponential",),
    "--domain-size": ("5",),
    "--domain-fault-share": ("0.2",),
    "--stall-s": ("30",),
    "--rejoin-s": ("60",),
    "--rejoin-min": ("1",),
    "--rejoin-stall-s": ("0",),
    "--rejoin-clock": ("failure",),
    "--microbatches": ("2",),
    "--fetch-s": ("5",),
    "--layout": ("consecutive",),
    "--rep-placement": ("strided",),
    "--strategies": ("all",),
    "--spare-r": ("2..3",),
    "--rep-r": ("3",),
    "--r-window": ("1",),
    "--checkpoint-factors": ("0.5,2",),
    "--model": ("finite",),
    "--simulate": ("1",),
    "--plan-steps": ("100",),
    "--steps": ("100",),
    "--max-trials": ("4",),
    "--min-restarts": ("1",),
    "--run-cap-t0": ("5",),
    "--no-common-failures": (),
    "--seed": ("5",),
    "--workers": ("2",),
    "--backend": ("processes",),
    "--scheduler": ("tcp://127.0.0.1:9",),
    "--cache-dir": ("{dir}/cache",),
    "--failures": ("{log}",),
    "--failures-format": ("titan",),
    "--failures-time-unit": ("min",),
    "--failures-system": ("1",),
    "--failures-gpus-per-node": ("4",),
    "--failures-n-nodes": ("80",),
    "--failures-window-s": ("1.2e7",),
    "--failures-method": ("fitted",),
    "--failures-placement": ("random",),
    "--failures-law": ("exponential",),
    "--failures-tolerance-s": ("100",),
    "--gpus-per-server": ("4",),
    "--failures-checkpoint": ("paper",),
    "--failures-chunk-s": ("3e5",),
    "--failure-mix": ("llama3",),
    "--detect-s": ("60",),
    "--jitter-model": ("step",),
    "--straggler-share": ("0.1",),
    "--straggler-slowdown": ("0.2",),
    "--allreduce-rule": ("abort",),
    "--min-live": ("0.5",),
    "--json": (),
    "--progress": (),
    "--no-progress": (),
}

#: Flags that only act with --simulate (refused without it), as check_plan_flags documents:
#: the fast model reads none of them (Rep's placement is the same closed form, the seed draws
#: nothing, the log's placement, checkpoint rule and chunks shape only the simulated failures).
SIMULATE_ONLY = {"--plan-steps", "--steps", "--max-trials", "--spare-r", "--rep-r", "--r-window",
                 "--checkpoint-factors", "--min-restarts", "--run-cap-t0", "--no-common-failures",
                 "--seed", "--rep-placement", "--failures-placement", "--failures-checkpoint",
                 "--failures-chunk-s", "--workers", "--backend", "--scheduler", "--cache-dir",
                 "--progress", "--no-progress"}
#: Knobs only the methods whose failed groups rejoin read (SPARe+repair, the elastic methods).
REJOIN_ONLY = {"--rejoin-s", "--rejoin-min", "--rejoin-stall-s", "--rejoin-clock", "--microbatches",
               "--fetch-s"}
#: Knobs a fault log replaces (refused with --failures).
LOG_REPLACES = {"--system-mtbf-s", "--system-mtbf-min", "--gpu-mtbf-s", "--gpu-mtbf-hours",
                "--weibull-shape", "--failure-dist", "--domain-size", "--domain-fault-share",
                "--no-common-failures", "--rep-placement", "--cache-dir"}
#: Flags of the fault log (refused without --failures).
LOG_ONLY = {f for f in VALUES if f.startswith("--failures-")} | {"--gpus-per-server"}


EITHER = frozenset({"acts", "refused"})
#: The failure world's knobs (issue 24): each acts or is refused (check_plan_flags decides by
#: mode and methods; the fast model reads some of them and says which it ignores).
WORLD = {"--failure-mix", "--detect-s", "--jitter-model", "--straggler-share",
         "--straggler-slowdown", "--allreduce-rule", "--min-live"}


def expected(flag: str, mode: str) -> frozenset[str]:
    """The outcomes ``flag`` may have in ``mode``: the design of check_plan_flags where it is
    settled, either 'acts' or 'refused' (:data:`EITHER`) where both would meet the acceptance."""
    sim, log, every = "simulate" in mode, mode.startswith("failures"), mode.startswith("strategies")
    refused, acts = frozenset({"refused"}), frozenset({"acts"})
    if flag in SIMULATE_ONLY and not sim:
        return refused
    if flag in REJOIN_ONLY and not every:
        return refused
    if flag in LOG_ONLY and not log:
        return refused
    if flag in LOG_REPLACES and log:
        return refused
    if flag == "--scheduler":  # alone: it needs --backend dask
        return refused
    if flag in ("--failures-law", "--failures-tolerance-s"):  # alone: they need
        return refused  # --failures-method fitted (block-bootstrap replays the log's instants)
    if flag == "--failures-system":  # a generic CSV log has no systems (LANL only)
        return refused
    if flag == "--failures-checkpoint":  # the paper's checkpoint table has no N = 20
        return refused
    if flag == "--failures-format":  # a .csv is read as the generic CSV; this is no Titan log
        return refused
    if flag == "--domain-fault-share":
        return EITHER  # q with D = 1
    if flag in WORLD:
        return EITHER
    return acts


def value(flag: str, mode: str) -> tuple[str, ...]:
    """The tokens after ``flag`` in ``mode`` (another value where the base already sets it)."""
    base = MODES[mode]
    if flag in ("--gpus", "--gpus-per-group"):  # N = 30 and N = 40 groups
        v = int(base[base.index(flag) + 1])
        return (str(v * 3 // 2 if flag == "--gpus" else v // 2),)
    if flag in base:
        return {"--strategies": ("spare,elastic-drop",), "--simulate": ("3",),
                "--plan-steps": ("100",), "--checkpoint-factors": ("0.5,2",),
                "--backend": ("processes",), "--failures": ("{log2}",)}[flag]
    return VALUES[flag]


#: Old spellings of a flag (registry ``old_flags``): given in place of the base's flag.
OLD_SPELLINGS = {"--steps": "--plan-steps"}


def argv(mode: str, flag: str | None, *, as_json: bool = True) -> list[str]:
    """The command line of ``mode`` with ``flag`` given (replacing the base's value; an old
    spelling replaces the base's flag and its value)."""
    args = list(MODES[mode])
    if flag == "--json":
        return args  # the base prints JSON; this case prints text
    if flag in OLD_SPELLINGS and OLD_SPELLINGS[flag] in args:
        i = args.index(OLD_SPELLINGS[flag])
        args[i:i + 2] = [flag, *value(OLD_SPELLINGS[flag], mode)]
    elif flag is not None:
        toks = value(flag, mode)
        if flag in args:
            i = args.index(flag)
            args[i + 1:i + 2] = list(toks)
        else:
            args += [flag, *toks]
    return [*args, "--json"] if as_json else args


# ------------------------------------------------------------------------------ running


class Spy:
    """Records what reaches the executor; runs the simulations serially whatever was asked."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, points: Any, fn: Any, backend: str = "processes", client: Any = None,
                 cache_dir: Any = None, workers: int | None = None, progress: bool = True,
                 **kw: Any) -> Any:
        from spare_lib.cluster.runs import sweeps

        self.calls.append({"backend": backend, "client": client, "workers": workers,
                           "cache_dir": None if cache_dir is None else str(cache_dir),
                           "progress": bool(progress)})
        return sweeps._real_run_sweep(points, fn, backend="serial", cache_dir=cache_dir,
                                      progress=False, **kw)


def write_logs(d: Path) -> dict[str, str]:
    """Two small generic CSV logs (times in s) in ``d``: 200 faults on 50 nodes over ~100 days
    (per-GPU MTBF ~4,800 h at the synthesizer's 8 GPUs per node: m ~ 15 min on SMALL_LOG), with
    pairs of faults 0.5 s and 40 s apart (so a tolerance of 100 s merges one more pair)."""
    out = {"dir": str(d)}
    for key, seed in (("log", 1), ("log2", 2)):
        rng = np.random.default_rng(seed)
        t = np.sort(rng.exponential(0.5 * 86400.0, 200).cumsum())
        nodes = rng.integers(0, 50, 200)
        t[11], t[41] = t[10] + 0.5, t[40] + 40.0
        lines = ["node,start,end"] + [f"n{n},{x:.1f},{x + 1800:.1f}"
                                      for n, x in zip(nodes, t, strict=True)]
        path = d / f"{key}.csv"
        path.write_text("\n".join(lines) + "\n")
        out[key] = str(path)
    return out


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return write_logs(tmp_path_factory.mktemp("plan_flags"))


class _TtyText(io.StringIO):
    """Captured stderr that says it is a terminal (progress bars on by default)."""

    def isatty(self) -> bool:
        return True


def _run(tokens: list[str], subs: dict[str, str], monkeypatch: pytest.MonkeyPatch,
         tty: bool = False) -> tuple[Completed, Spy]:
    """``spare plan TOKENS`` in process, with the executor spied on (and stderr a terminal)."""
    import types

    import cli_runner

    from spare_lib.cluster.runs import sweeps

    spy = Spy()
    monkeypatch.setattr(sweeps, "_real_run_sweep", sweeps.run_sweep, raising=False)
    monkeypatch.setattr(sweeps, "run_sweep", spy)
    if tty:
        monkeypatch.setattr(cli_runner, "io", types.SimpleNamespace(StringIO=_TtyText))
    try:
        p = run("plan", *(t.format(**subs) for t in tokens))
    finally:
        monkeypatch.undo()
    return p, spy


def fingerprint(p: Completed, spy: Spy) -> Any:
    """What a flag may change: the answer (JSON without :data:`ECHO`, or the text) and what
    reached the executor."""
    try:
        d = json.loads(p.stdout)
    except json.JSONDecodeError:
        return ("text", spy.calls)
    return ({k: v for k, v in d.items() if k not in ECHO}, spy.calls)


def error_line(p: Completed) -> str | None:
    """The one ``spare: error:`` line of a refusal (warnings aside), else None."""
    lines = [x for x in p.stderr.strip().splitlines() if not x.startswith("spare: warning:")]
    if p.returncode != 2 or len(lines) != 1 or not lines[0].startswith("spare: error: "):
        return None
    return lines[0]


_BASE: dict[str, Any] = {}


def outcome(mode: str, flag: str, subs: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """'acts', 'refused', 'ignored' or 'error: ...' of ``flag`` in ``mode``.

    ``--no-progress`` turns off what is on by default only on a terminal without --json: that
    case runs in text with stderr a terminal (its base too)."""
    tty = flag == "--no-progress"
    if (mode, tty) not in _BASE:
        p, spy = _run(argv(mode, None, as_json=not tty), subs, monkeypatch, tty)
        assert p.returncode == 0, (mode, p.stderr)
        _BASE[mode, tty] = fingerprint(p, spy)
    p, spy = _run(argv(mode, flag, as_json=not tty), subs, monkeypatch, tty)
    if p.returncode == 0:
        return "acts" if fingerprint(p, spy) != _BASE[mode, tty] else "ignored"
    line = error_line(p)
    if line is not None and re.search(re.escape(flag) + r"(?![\w-])", line):
        return "refused"
    return f"error {p.returncode}: {p.stderr.strip()[-300:]}"


def _cases() -> Iterator[Any]:
    for mode in MODES:
        for flag in VALUES:
            yield pytest.param(mode, flag, id=f"{mode}:{flag}")


# ------------------------------------------------------------------------------ the tests


def test_every_flag_of_spare_plan_is_enumerated():
    """The table above lists exactly the flags of ``spare plan`` (a new flag must join it)."""
    from spare_lib.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["plan"]
    flags = {o for a in sub._actions for o in a.option_strings} - {"-h", "--help"}
    assert flags == set(VALUES)


@pytest.mark.parametrize(("mode", "flag"), list(_cases()))
def test_every_flag_acts_or_is_refused(mode: str, flag: str, logs: dict[str, str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert outcome(mode, flag, logs, monkeypatch) in expected(flag, mode)


# ------------------------------------------------------------------------------ one JSON schema

#: Every mode, and the corners of the verdict: the closed forms, one trial (no interval), a
#: cluster on which no method trains.
SCHEMA_CASES = {**MODES,
                "model finite": (*SMALL, "--model", "finite"),
                "model paper": (*SMALL, "--model", "paper"),
                "one trial": (*SMALL, "--simulate", "1", "--plan-steps", "150",
                              "--checkpoint-factors",
                              "none", "--backend", "serial"),
                "nothing trains": (*SMALL, "--restart-min", "600", "--simulate", "2", "--steps",
                                   "50", "--run-cap-t0", "2", "--checkpoint-factors", "none",
                                   "--backend", "serial", "--strategies", "spare,ckpt")}


@pytest.fixture(scope="module")
def plan_schema() -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "plan.schema.json")
                        .read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.mark.parametrize("case", list(SCHEMA_CASES))
def test_every_mode_json_validates_against_the_schema(case: str, plan_schema: Any,
                                                      logs: dict[str, str]) -> None:
    p = run("plan", *(t.format(**logs) for t in SCHEMA_CASES[case]), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))
    errors = sorted(plan_schema.iter_errors(d), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert {"best", "loss_vs_best"} <= set(d)  # at the top level, in every mode
    assert d["best"] == d["verdict"]["best"] and d["loss_vs_best"] == d["verdict"]["loss_vs_best"]
    assert set(d["loss_vs_best"]) == set(d["methods"])
    assert d["simulated"] == ("--simulate" in SCHEMA_CASES[case])
    if case == "one trial":
        assert all(x["ci_low"] is None for x in d["loss_vs_best"].values())
        assert "no difference is resolved" in d["verdict"]["statement"]
    if case == "nothing trains":
        assert not d["verdict"]["trains"] and "no method trains" in d["verdict"]["statement"]
