"""The ``spare`` command line.

Subcommands
-----------
plan      which method, r and checkpoint period for a cluster (the fast model; ``--simulate N``
          adds simulated trials per candidate); ends with one verdict over every method
design    from a model, a token budget and a GPU fleet: the best group size, method, r and C
simulate  one simulated training run on any cluster (the cluster flags of ``plan``)
sweep     simulate every point of a CSV/YAML file (serial, local processes or Dask)
trace     ``trace summary FILE`` / ``trace fit FILE``: describe a real failure log, fit laws to
          its times between faults (``plan --failures FILE`` plans from it)
figures   run the notebooks through papermill (full size by default) and refresh README's
          figure table
warm      compile the simulator's numba kernels into the cache (``make venv`` runs it)

Every user error prints one line naming the flag and the allowed range and exits with code 2;
warnings are one line too; ``--json`` output is strict JSON (``null`` for missing values).
"""

from __future__ import annotations

import argparse
import sys

from spare_lib.cli.commands import (
    add_figures_parser,
    add_simulate_parser,
    add_sweep_parser,
    add_warm_parser,
)
from spare_lib.cli.common import CliError, flag_names, one_line_warnings
from spare_lib.cli.design import add_design_parser
from spare_lib.cli.plan import add_plan_parser
from spare_lib.cli.trace import add_trace_parser


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no traceback
        self.exit(2, f"spare: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``spare`` (exposed for the tests)."""
    p = _Parser(prog="spare", description="spare-lab: SPARe fault-tolerance models, simulation and figures")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_plan_parser(sub)
    add_design_parser(sub)
    add_simulate_parser(sub)
    add_sweep_parser(sub)
    add_trace_parser(sub)
    add_figures_parser(sub)
    add_warm_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``spare`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    one_line_warnings()
    try:
        return int(args.func(args))
    except (ValueError, OSError) as exc:  # user errors (and unreachable schedulers): one line, exit 2
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not isinstance(exc, CliError):
            msg = flag_names(msg)
        print(f"spare: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("spare: interrupted", file=sys.stderr)
        return 130


__all__ = ["build_parser", "main"]
