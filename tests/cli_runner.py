"""Run the ``spare`` command in this process or in a subprocess, with the same result type.

:func:`run` calls :func:`spare_lib.cli.main` in process with captured output: no interpreter
start, no imports, no numba cache load per call (a subprocess pays ~1–3 s for those, and the CLI
tests make ~100 calls). It behaves like the command for what the tests read: the exit code
(argparse's ``SystemExit`` included), stdout and stderr as text, warnings printed the way the
command prints them. An exception that escapes ``main`` becomes exit code 1 with its traceback
on stderr, as the interpreter would print it, so "no traceback" assertions still bite.

:func:`run_subprocess` is the real thing, for the few tests whose point is the process: exit
codes and tracebacks as the shell sees them, the first-run compile notice, determinism across
processes.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import traceback
import warnings
from dataclasses import dataclass

SPARE = [sys.executable, "-m", "spare_lib.cli"]


@dataclass(frozen=True)
class Completed:
    """What a finished ``spare`` call returned (the fields of ``subprocess.CompletedProcess``)."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def run(*args: str, timeout: int | None = None) -> Completed:
    """``spare ARGS...`` in this process. ``timeout`` is accepted for symmetry with
    :func:`run_subprocess` and not enforced here (pytest-timeout bounds every test)."""
    from spare_lib.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.simplefilter("default")  # as a fresh interpreter shows them: once per place
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, usage errors
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except Exception:  # what the interpreter would print for an uncaught exception
            traceback.print_exc(file=sys.stderr)
            code = 1
    return Completed(tuple(args), int(code), out.getvalue(), err.getvalue())


def run_subprocess(*args: str, timeout: int = 300, env: dict[str, str] | None = None) -> Completed:
    """``python -m spare_lib.cli ARGS...`` in a new process (bounded by ``timeout`` seconds)."""
    p = subprocess.run([*SPARE, *args], capture_output=True, text=True, timeout=timeout, env=env,
                       stdin=subprocess.DEVNULL)
    return Completed(tuple(args), p.returncode, p.stdout, p.stderr)
