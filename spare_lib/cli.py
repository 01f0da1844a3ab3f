"""The ``spare`` command line.

Subcommands
-----------
figures   run the notebooks through papermill (full size by default) and refresh README's
          figure table.

User errors print one line naming the flag and the allowed range and exit with code 2.
"""

from __future__ import annotations

import argparse
import sys


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no traceback
        self.exit(2, f"spare: error: {message}\n")


def _cmd_figures(args: argparse.Namespace) -> int:
    from .figures import update_readme
    from .notebooks import run_all

    timings = run_all(smoke=args.smoke, only=args.only, out_dir=args.out_dir)
    if not args.smoke and args.out_dir is None:
        changed = update_readme()
        print(f"[spare figures] README figure table {'updated' if changed else 'unchanged'}")
    total = sum(t for _, t in timings)
    print(f"[spare figures] {len(timings)} notebooks in {total:.0f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``spare`` (exposed for the tests)."""
    p = _Parser(prog="spare", description="spare-lab: SPARe fault-tolerance models, simulation and figures")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    f = sub.add_parser("figures", help="run the notebooks and regenerate every figure")
    f.add_argument("--smoke", action="store_true", help="small sizes; writes to a temp folder")
    f.add_argument("--only", default=None, help="run only notebooks whose name contains this")
    f.add_argument("--out-dir", default=None, help="write figures here instead of figures/")
    f.set_defaults(func=_cmd_figures)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``spare`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:  # user errors: one line, exit 2
        print(f"spare: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
