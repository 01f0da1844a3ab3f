"""The ``spare`` command line.

Subcommands
-----------
simulate  one simulated training run (all SimResult fields; ``--json`` for scripts)
sweep     simulate every point of a CSV/YAML file (serial, local processes or Dask)
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


def _positive_int(name: str, lo: int = 1):  # noqa: ANN202 - argparse type factory
    def conv(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {lo}, got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {lo}, got {v}")
        return v
    return conv


def _positive_float(name: str):  # noqa: ANN202 - argparse type factory
    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}") from None
        if not v > 0 or v == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number > 0, got {text}")
        return v
    return conv


def _print_table(rows: list[dict], columns: list[str]) -> None:
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    print("  ".join(c.rjust(widths[c]) for c in columns))
    for r in rows:
        print("  ".join(str(r.get(c, "")).rjust(widths[c]) for c in columns))


def _cmd_simulate(args: argparse.Namespace) -> int:
    import json

    from .sweep import simulate_point

    overrides = {}
    if args.steps is not None:
        overrides["steps"] = args.steps
    if args.failure_dist is not None:
        overrides["failure_dist"] = args.failure_dist
    if args.system_mtbf_min is not None:
        overrides["system_mtbf_s"] = 60.0 * args.system_mtbf_min
    r = 1 if args.method == "ckpt" else args.r
    ckpt = "none" if args.no_checkpoint else (args.ckpt_steps if args.ckpt_steps is not None else "paper")
    res = simulate_point(args.method, args.N, r, ckpt, seed=args.seed, layout=args.layout, **overrides)
    if args.json:
        print(json.dumps(res, indent=2, default=str))
    else:
        width = max(len(k) for k in res)
        for k, v in res.items():
            print(f"{k.ljust(width)}  {v:.6g}" if isinstance(v, float) else f"{k.ljust(width)}  {v}")
    return 0


def _load_points(path: str) -> list[dict]:
    from pathlib import Path

    p = Path(path)
    if not p.exists():
        raise ValueError(f"FILE {path!r} does not exist")
    if p.suffix.lower() in (".yml", ".yaml"):
        import yaml

        data = yaml.safe_load(p.read_text())
        if isinstance(data, dict) and "points" in data:
            data = data["points"]
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise ValueError(f"FILE {path!r} must hold a list of mappings (or a 'points:' list)")
        return data
    if p.suffix.lower() == ".csv":
        import pandas as pd

        df = pd.read_csv(p)
        return [{k: v for k, v in rec.items() if not (isinstance(v, float) and v != v)}
                for rec in df.to_dict("records")]
    raise ValueError(f"FILE must be a .csv, .yml or .yaml file, got {path!r}")


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import run_sweep, simulate_point

    points = _load_points(args.file)
    client = args.scheduler if args.backend == "dask" else None
    df = run_sweep(points, simulate_point, backend=args.backend, client=client,
                   cache_dir=args.cache_dir, workers=args.workers, root_seed=args.root_seed,
                   progress=not args.quiet)
    if args.out:
        df.to_csv(args.out, index=False)
        print(f"[spare sweep] {len(df)} points -> {args.out}")
    else:
        cols = [c for c in ("method", "N", "r", "ckpt_steps", "seed", "ttt_over_t0", "availability",
                            "overhead", "full_restarts") if c in df.columns]
        print(df[cols].to_string(index=False))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``spare`` (exposed for the tests)."""
    p = _Parser(prog="spare", description="spare-lab: SPARe fault-tolerance models, simulation and figures")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    s = sub.add_parser("simulate", help="one simulated training run on the paper's 600k-H100 preset")
    s.add_argument("--method", choices=("spare", "rep", "ckpt"), default="spare")
    s.add_argument("--N", type=_positive_int("--N"), default=600, help="data-parallel groups (default 600)")
    s.add_argument("--r", type=_positive_int("--r"), default=8, help="redundancy (ignored for ckpt)")
    s.add_argument("--ckpt-steps", type=_positive_int("--ckpt-steps"), default=None,
                   help="checkpoint interval in steps (default: the paper's table / analytic optimum)")
    s.add_argument("--no-checkpoint", action="store_true",
                   help="plain SPARe / Rep: restarts roll back to step 0")
    s.add_argument("--steps", type=_positive_int("--steps"), default=None, help="committed steps (10000)")
    s.add_argument("--failure-dist", choices=("weibull", "exponential"), default=None)
    s.add_argument("--system-mtbf-min", type=_positive_float("--system-mtbf-min"), default=None)
    s.add_argument("--layout", choices=("ruler", "consecutive"), default="ruler")
    s.add_argument("--seed", type=_positive_int("--seed", lo=0), default=0)
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=_cmd_simulate)

    w = sub.add_parser("sweep", help="simulate every point of a CSV/YAML file")
    w.add_argument("file", help="CSV or YAML, one point per row/item "
                                "(keyword arguments of spare_lib.sweep.simulate_point)")
    w.add_argument("--backend", choices=("serial", "processes", "dask"), default="processes")
    w.add_argument("--scheduler", default=None, help="Dask scheduler address (backend dask)")
    w.add_argument("--workers", type=_positive_int("--workers"), default=None)
    w.add_argument("--cache-dir", default=".sweep_cache", help="resumable cache (default .sweep_cache)")
    w.add_argument("--root-seed", type=_positive_int("--root-seed", lo=0), default=0,
                   help="seeds are derived from each point and this root")
    w.add_argument("--out", default=None, help="write the result table as CSV")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    w.set_defaults(func=_cmd_sweep)

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
