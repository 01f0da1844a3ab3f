"""A property-based fuzz of the ``spare`` command line (issue 23): random flags and values,
malformed points and failure files, run in process through :func:`spare_lib.cli.main`.

Property: every command line either answers (exit 0) or is refused in one line (exit 2, one
``spare: error:`` line, no traceback); nothing else. The values are drawn from a pool of edge
cases (0, negatives, 1e300, nan, inf, malformed ranges and lists, every method and choice
name) and the files from malformed and valid small ones. A cheap base cluster (N = 8) keeps an
example fast; with ``--simulate`` the fuzz adds a short run length unless it draws one itself,
and leaves out run lengths long enough to take minutes (the run-length and memory guards have
their own tests).

``make test`` runs :func:`test_fuzz_cli` with 200 examples; ``pytest -m slow
tests/test_cli_fuzz.py`` runs the 5,000-example :func:`test_fuzz_cli_long`.
"""

from __future__ import annotations

import os

import pytest
from cli_runner import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

VALUES = ["0", "1", "2", "3", "-1", "0.5", "1e-300", "1e300", "nan", "inf", "-inf", "abc", "",
          "3..5", "2,4", "5..2", "2-3", "none", "auto", "all", "paper", "spare", "rep", "ckpt",
          "spare+repair", "elastic-drop", "elastic-rebalance", "spare,warp", "spare,spare",
          "ruler", "consecutive", "domain-aware", "strided", "weibull", "exponential", "ring",
          "preset", "tree", "finite", "predict", "100", "600", "0.001", "1e9", "closed-form",
          "fitted", "random", "csv", "lanl", "h", "0.5,2", "0.5,abc"]
#: Flags that would make a valid example run for minutes (the fuzz is about inputs, not time).
SLOW = {"1e300", "1e9", "inf"}
BASE = ["--gpus", "800", "--gpus-per-group", "100"]
COMMANDS = ("plan", "simulate", "sweep", "trace")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    out = {
        "good.csv": "node,start,end\n" + "".join(f"n{i % 7},{10 * i},{10 * i + 1}\n"
                                                 for i in range(60)),
        "bad_cols.csv": "node,begin,end\nn1,10,11\n",
        "bad_row.csv": "node,start,end\nn1,10,5\n",
        "empty.csv": "",
        "garbage.yaml": "points:\n  - {method: spare, N: 200\n",
        "good.yaml": "- {method: spare, N: 8, r: 2, steps: 5}\n",
        "unknown.yaml": "- {method: warp, N: 8}\n",
        "keys.csv": "method,N,frobs\nspare,8,1\n",
    }
    paths = {}
    for name, text in out.items():
        p = d / name
        p.write_text(text)
        paths[name] = str(p)
    paths["missing"] = str(d / "no_such_file.csv")
    paths["out.csv"] = str(d / "out.csv")
    paths["cache"] = str(d / "cache")
    paths["missing_dir"] = str(d / "no_such_dir")
    return paths


def _flags(command: str, sub_command: str | None = None) -> list[tuple[str, bool]]:
    """(flag, takes a value) of a command's (or its sub-command's) parser."""
    from spare_lib.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    parser = sub[command]
    if sub_command is not None:
        parser = next(a for a in parser._actions if a.choices and sub_command in a.choices
                      ).choices[sub_command]
    out = []
    for a in parser._actions:
        if not a.option_strings or a.dest == "help":
            continue
        out.append((a.option_strings[-1], a.nargs != 0, a.dest))
    return out


def _valid(dest: str) -> list[str]:
    """Values inside a knob's range (and its choices), so examples also get past the parser."""
    from spare_lib.registry.knobs import KNOBS

    k = KNOBS.get(dest.split("__")[0])
    if k is None:
        return []
    if k.choices:
        return list(k.choices)
    out = []
    for v in (k.default, k.lo, k.hi):
        if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e7:
            out.append(str(int(v)) if k.kind == "int" else f"{v:g}")
    if k.kind in ("int", "float") and k.lo is not None and k.hi is not None and k.hi < 1e7:
        mid = (k.lo + k.hi) / 2
        out.append(str(int(mid)) if k.kind == "int" else f"{mid:g}")
    return out


@st.composite
def command_lines(draw, paths: dict[str, str]) -> list[str]:
    command = draw(st.sampled_from(COMMANDS))
    file_values = [v for k, v in paths.items() if k not in ("out.csv", "cache", "missing_dir")]
    if command == "trace":
        what = draw(st.sampled_from(["summary", "fit"]))
        argv = ["trace", what,
                draw(st.sampled_from(file_values + ["stepfun-infinitehbd", "nonsense"]))]
        pool = _flags("trace", what)
    elif command == "sweep":
        argv = ["sweep", draw(st.sampled_from(file_values)), "--backend", "serial", "--quiet",
                "--cache-dir", paths["cache"]]
        pool = [f for f in _flags("sweep") if f[0] not in ("--backend", "--scheduler", "--workers")]
    else:
        argv = [command, *BASE]
        pool = [f for f in _flags(command) if f[0] not in ("--workers", "--backend", "--scheduler",
                                                            "--progress", "--no-progress")]
    for flag, takes, dest in draw(st.lists(st.sampled_from(pool), max_size=4, unique=True)):
        argv.append(flag)
        if takes:
            if flag == "--failures":
                argv.append(draw(st.sampled_from(file_values + ["stepfun-infinitehbd"])))
            elif flag in ("--out", "--cache-dir", "--plot"):  # only under the test's folder
                argv.append(draw(st.sampled_from([paths["out.csv"], paths["cache"],
                                                  paths["missing_dir"] + "/x.csv"])))
            else:
                valid = _valid(dest)
                pool_v = st.sampled_from(VALUES)
                argv.append(draw(st.one_of(st.sampled_from(valid), pool_v) if valid else pool_v))
    if command in ("plan", "simulate"):
        if "--simulate" in argv and "--steps" not in argv:
            argv += ["--steps", "40", "--checkpoint-factors", "none"]
        if command == "simulate" and "--steps" not in argv:
            argv += ["--steps", "40"]
        if ("--simulate" in argv or command == "simulate") and SLOW & set(argv):
            argv = [a for a in argv if a not in SLOW] or argv
        argv += ["--backend", "serial"] if command == "plan" else []
    return argv


def _check(argv: list[str]) -> None:
    p = run(*argv)
    assert p.returncode in (0, 2), (argv, p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr, (argv, p.stderr[-2000:])
    if p.returncode == 2:
        lines = p.stderr.strip().splitlines()
        assert lines and lines[-1].startswith("spare: error: "), (argv, p.stderr)


def _fuzz(files: dict[str, str], examples: int) -> None:
    @settings(max_examples=examples, deadline=None, derandomize=os.environ.get("SPARE_FUZZ_RANDOM") is None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                     HealthCheck.filter_too_much])
    @given(argv=command_lines(files))
    def prop(argv: list[str]) -> None:
        _check(argv)

    prop()


def test_fuzz_cli(files):
    _fuzz(files, int(os.environ.get("SPARE_FUZZ_EXAMPLES", "200")))


@pytest.mark.slow
@pytest.mark.timeout(7200)
def test_fuzz_cli_long(files):
    """The 5,000-example run (``pytest -m slow tests/test_cli_fuzz.py``)."""
    _fuzz(files, 5000)
