"""``spare simulate``, ``spare sweep``, ``spare figures`` and ``spare warm``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from spare_lib.cli.common import (
    FLAG_NAMES,
    LAYOUT_KNOBS,
    RUN_FLAG_KNOBS,
    CliError,
    add_cluster_args,
    add_layout_args,
    add_progress_flag,
    add_strategy_args,
    check_writable,
    dump_json,
    ensure_kernels,
    flag_names,
    positive_int,
    run_overrides,
    show_progress,
    spec_from_args,
)
from spare_lib.cli.knobs import add_knob_args, given_flag, knob_given, knob_value
from spare_lib.registry.knobs import KNOBS

# ------------------------------------------------------------------------------ simulate


def add_simulate_parser(sub: Any) -> None:
    """Register ``spare simulate``."""
    from spare_lib.registry.methods import METHODS

    s = sub.add_parser(
        "simulate", help="one simulated training run on any cluster (default: the paper's)",
        description="One discrete-event training run (all SimResult fields; --json for scripts). "
                    "The cluster and strategy flags are those of `spare plan` (docs/knobs.md); "
                    "the defaults are the paper's 600k-H100 cluster at N = 600.")
    add_cluster_args(s, n_flag=True)
    add_strategy_args(s)
    s.add_argument("--method", choices=tuple(METHODS), default="spare",
                   help="the recovery method (default spare: SPARe+CKPT)")
    s.add_argument("--r", type=positive_int("--r"), default=None,
                   help="redundancy (default 8; methods without redundancy: 1, the only value)")
    ck = s.add_mutually_exclusive_group()
    ck.add_argument("--ckpt-steps", type=positive_int("--ckpt-steps"), default=None,
                    help="checkpoint interval in steps (default: the paper's table on the paper's "
                         "cluster, the analytic optimum otherwise)")
    ck.add_argument("--no-checkpoint", action="store_true",
                    help="plain SPARe / Rep: restarts roll back to step 0")
    add_knob_args(s, ("steps",))
    add_layout_args(s)
    add_knob_args(s, ("exact_patch", "max_wall_t0"))
    add_knob_args(s, ("seed",))
    s.add_argument("--failure-seed", type=positive_int("--failure-seed", lo=0), default=None,
                   help="common failure streams: runs with the same failure seed see the same "
                        "failure gaps per group, whatever the method and r")
    s.add_argument("--json", action="store_true", help="print strict JSON")
    s.set_defaults(func=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    """Run ``spare simulate``."""
    from spare_lib.cluster.runs.sweeps import simulate_point
    from spare_lib.registry.methods import method

    spec_m = method(args.method)
    if not spec_m.redundancy and args.r not in (None, 1):
        raise CliError(f"--r must be 1 with --method {args.method} ({spec_m.label} has no "
                       f"redundancy), got {args.r}")
    if spec_m.family == "checkpoint" and args.no_checkpoint:
        raise CliError(f"--no-checkpoint does not apply to --method {args.method} ({spec_m.label} "
                       "is checkpoints only)")
    for name in RUN_FLAG_KNOBS + LAYOUT_KNOBS + ("exact_patch",):
        k = KNOBS[name]
        if k.methods != ("all",) and knob_given(args, name) and args.method not in k.methods:
            raise CliError(f"{given_flag(args, name)} does not apply to --method {args.method} "
                           f"(read by {', '.join(k.methods)})")
    r = (8 if args.r is None else args.r) if spec_m.redundancy else 1
    ckpt = "none" if args.no_checkpoint else (args.ckpt_steps if args.ckpt_steps is not None else "paper")
    steps = knob_value(args, "steps")
    if args.ckpt_steps is not None and args.ckpt_steps > steps:
        raise CliError(f"--ckpt-steps must be in [1, --steps = {steps}] (a longer interval only "
                       f"writes the final checkpoint; --no-checkpoint writes none), got "
                       f"{args.ckpt_steps}")
    try:
        spec = spec_from_args(args)
        cfg = spec.cluster_config(steps=steps, **run_overrides(args))
        overrides = {k: getattr(cfg, k) for k in (
            "steps", "compute_per_stack_s", "allreduce_s", "restart_s", "checkpoint_s",
            "system_mtbf_s", "n_gpus", "weibull_shape", "failure_dist", "domain_size",
            "domain_fault_share", *RUN_FLAG_KNOBS)}
        layout: Any = knob_value(args, "layout")
        if spec_m.layout and layout == "domain-aware":
            from spare_lib.cluster.planning.layouts import spare_layout

            try:
                layout = spare_layout(spec.N, r, layout, spec.domain_size)
            except ValueError as exc:
                raise CliError(f"--layout domain-aware does not exist for --r {r} at N = {spec.N} "
                               f"with --domain-size {spec.domain_size} (lower --r or --domain-size): "
                               f"{str(exc).splitlines()[0]}") from None
        elif not spec_m.layout:
            layout = "ruler"  # SPARe's layout; ignored by the other methods
        ensure_kernels(quiet=args.json)
        res = simulate_point(args.method, spec.N, r, ckpt, seed=knob_value(args, "seed"), layout=layout,
                             failure_seed=args.failure_seed,
                             exact_patch=bool(knob_value(args, "exact_patch")),
                             max_wall_s=knob_value(args, "max_wall_t0") * cfg.t0_s(),
                             rep_placement=knob_value(args, "rep_placement"), **overrides)
    except CliError:
        raise
    except ValueError as exc:
        raise CliError(flag_names(str(exc), {**FLAG_NAMES, **_SIM_FLAGS})) from None
    res = {"method": args.method, "N": spec.N, "r": r, "layout": knob_value(args, "layout"),
           "rep_placement": knob_value(args, "rep_placement"), "domain_size": spec.domain_size,
           "domain_fault_share": spec.domain_fault_share, **res}
    if not res["completed"]:
        print(f"spare: warning: the run stopped at --max-wall-t0 {knob_value(args, 'max_wall_t0'):g} "
              f"T0 with {res['commits'] - res['steps_redone']} of {res['steps']} steps committed; "
              "TTT/T0 is a lower bound", file=sys.stderr)
    if args.json:
        print(dump_json(res))
    else:
        width = max(len(k) for k in res)
        for k, v in res.items():
            print(f"{k.ljust(width)}  {v:.6g}" if isinstance(v, float) else f"{k.ljust(width)}  {v}")
    return 0


_SIM_FLAGS = {"N": "--N", "r": "--r", "ckpt_steps": "--ckpt-steps", "max_wall_s": "--max-wall-t0"}

# ------------------------------------------------------------------------------ sweep


def _sweep_epilog() -> str:
    from spare_lib.cluster.runs.sweeps import OUT_PREFIX, point_keys

    pk = point_keys()
    width = max(len(k) for k in pk)
    keys = "\n".join(f"  {k.ljust(width)}  {v}" for k, v in pk.items())
    return (f"point keys (CSV columns / YAML mapping keys):\n{keys}\n\n"
            f"Output: the point's columns, then the results; a result whose name is also a point "
            f"key is written as {OUT_PREFIX}<key> (e.g. {OUT_PREFIX}restart_s = total restart time "
            f"of the run, next to the input restart_s = T_r), so inputs are never overwritten.")


def add_sweep_parser(sub: Any) -> None:
    """Register ``spare sweep``."""
    w = sub.add_parser("sweep", help="simulate every point of a CSV/YAML file",
                       description="Simulate every point of a CSV or YAML file (one point per row "
                                   "/ list item, or a 'points:' list) serially, on local "
                                   "processes or on Dask; resumable through a disk cache.",
                       epilog=_sweep_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("file", help="CSV or YAML, one point per row/item (keys below)")
    w.add_argument("--backend", choices=("serial", "processes", "dask"), default="processes")
    w.add_argument("--scheduler", default=None,
                   help="Dask scheduler address (backend dask; fails within 5 s if unreachable)")
    w.add_argument("--workers", type=positive_int("--workers"), default=None)
    w.add_argument("--cache-dir", default=".sweep_cache", help="resumable cache (default .sweep_cache)")
    w.add_argument("--root-seed", type=positive_int("--root-seed", lo=0), default=0,
                   help="seeds are derived from each point and this root")
    w.add_argument("--out", default=None, help="write the result table as CSV (checked before computing)")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    w.set_defaults(func=cmd_sweep)


def load_points(path: str) -> list[dict]:
    """Points of a CSV or YAML file; CliError naming the file, the line and the problem."""
    from spare_lib.cluster.runs.sweeps import check_point_keys

    p = Path(path)
    if not p.exists():
        raise CliError(f"FILE {path!r} does not exist")
    if p.suffix.lower() in (".yml", ".yaml"):
        import yaml

        try:
            data = yaml.safe_load(p.read_text())
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise CliError(f"FILE {path!r}{where}: invalid YAML: {what}") from None
        if isinstance(data, dict) and "points" in data:
            data = data["points"]
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise CliError(f"FILE {path!r} must hold a list of mappings (or a 'points:' list)")
        lines = [f"item {i + 1}" for i in range(len(data))]
    elif p.suffix.lower() == ".csv":
        import pandas as pd

        _check_csv_fields(p, path)
        try:
            df = pd.read_csv(p)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CliError(f"FILE {path!r}: invalid CSV: {msg}") from None
        data = [{k: v for k, v in rec.items() if not (isinstance(v, float) and v != v)}
                for rec in df.to_dict("records")]
        lines = [f"line {i + 2}" for i in range(len(data))]
    else:
        raise CliError(f"FILE must be a .csv, .yml or .yaml file, got {path!r}")
    if not data:
        raise CliError(f"FILE {path!r} holds no points")
    for d, where in zip(data, lines, strict=True):
        try:
            check_point_keys(d, where=f"FILE {path!r} {where}:")
        except ValueError as exc:
            raise CliError(str(exc).replace(": has", " has").replace(": must", " must")) from None
    return data


def _check_csv_fields(p: Path, path: str) -> None:
    """CliError naming the first line whose field count differs from the header's."""
    import csv

    try:
        with p.open(newline="") as fh:
            rows = csv.reader(fh)
            header = next(rows, None)
            if not header:
                raise CliError(f"FILE {path!r}: invalid CSV: empty file (a header row of point keys "
                               "is needed)")
            for row in rows:
                if row and len(row) != len(header):
                    raise CliError(f"FILE {path!r} line {rows.line_num}: invalid CSV: expected "
                                   f"{len(header)} fields (the header's), got {len(row)}")
    except (csv.Error, UnicodeDecodeError) as exc:
        raise CliError(f"FILE {path!r}: invalid CSV: {exc}") from None


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run ``spare sweep``."""
    from spare_lib.cluster.runs.sweeps import run_sweep, simulate_point, validate_point

    if args.scheduler is not None and args.backend != "dask":
        raise CliError("--scheduler needs --backend dask")
    if args.out:
        check_writable(args.out)
    points = load_points(args.file)
    for i, pt in enumerate(points):
        try:
            validate_point(pt)
        except ValueError as exc:
            raise CliError(f"FILE {args.file!r} point {i + 1}: {exc}") from None
    if args.backend != "dask":
        ensure_kernels(quiet=args.quiet)
    client = None
    if args.scheduler is not None:  # connect before computing: fails fast, naming the address
        from spare_lib.cluster.runs.executor import connect

        client = connect(args.scheduler)
    try:
        df = run_sweep(points, simulate_point, backend=args.backend, client=client,
                       cache_dir=args.cache_dir, workers=args.workers, root_seed=args.root_seed,
                       progress=not args.quiet)
    finally:
        if client is not None:
            client.close()
    if "completed" in df.columns and not df["completed"].astype(bool).all():
        n = int((~df["completed"].astype(bool)).sum())
        print(f"spare: warning: {n} of {len(df)} runs stopped at their wall-clock cap (completed = "
              "False; their TTT/T0 is a lower bound)", file=sys.stderr)
    if args.out:
        df.to_csv(args.out, index=False)
        print(f"[spare sweep] {len(df)} points -> {args.out}")
    else:
        cols = [c for c in ("method", "N", "r", "ckpt_steps", "out_ckpt_steps", "seed", "ttt_over_t0",
                            "availability", "overhead", "full_restarts") if c in df.columns]
        print(df[cols].to_string(index=False))
    return 0

# ------------------------------------------------------------------------------ figures, warm


def add_figures_parser(sub: Any) -> None:
    """Register ``spare figures``."""
    f = sub.add_parser("figures", help="run the notebooks and regenerate every figure")
    f.add_argument("--smoke", action="store_true", help="small sizes; writes to a temp folder")
    f.add_argument("--only", default=None, help="run only notebooks whose name contains this")
    f.add_argument("--out-dir", default=None, help="write figures here instead of figures/")
    f.add_argument("--record", action="store_true",
                   help="full runs of the notebooks that measure real processes (45_live_emulation) "
                        "rewrite the committed figures/ and data/results/ (a new record); without "
                        "it they write under _build/measurements/")
    f.set_defaults(func=cmd_figures)


def cmd_figures(args: argparse.Namespace) -> int:
    """Run ``spare figures``."""
    from spare_lib.figures.pipeline import NotebooksFailed, run_all
    from spare_lib.figures.registry import update_readme

    failed: NotebooksFailed | None = None
    if args.record:
        if args.smoke or args.out_dir is not None:
            print("spare: error: --record writes the committed record: not with --smoke or "
                  "--out-dir", file=sys.stderr)
            return 2
        os.environ["SPARE_RECORD"] = "1"  # read by config.resolve in every notebook's kernel
    try:
        timings = run_all(smoke=args.smoke, only=args.only, out_dir=args.out_dir)
    except NotebooksFailed as exc:
        timings, failed = exc.timings, exc
    if not args.smoke and args.out_dir is None:
        changed = update_readme()
        print(f"[spare figures] README figure table {'updated' if changed else 'unchanged'}")
    if failed is not None:
        for name, why in failed.failed:
            print(f"spare: error: notebook {name} failed: {why}", file=sys.stderr)
        return 1
    total = sum(t for _, t in timings)
    print(f"[spare figures] {len(timings)} notebooks in {total:.0f} s")
    return 0


def add_warm_parser(sub: Any) -> None:
    """Register ``spare warm``."""
    w = sub.add_parser("warm", help="compile every numba kernel into the numba cache",
                       description="Compile (or load) every numba kernel of spare_lib once (the "
                                   "simulator's event core, RECTLR, wipe-out sampling, the Monte "
                                   "Carlo and the predictive model), so that later commands, test "
                                   "workers and process pools load them instead of compiling. "
                                   "`make venv` and `make test` run it.")
    w.add_argument("--check", action="store_true",
                   help="then fail (exit 1) if any cache=True kernel of spare_lib is still not in "
                        "the cache, naming it (a kernel without a warm-up call)")
    add_progress_flag(w)
    w.set_defaults(func=cmd_warm)


def cmd_warm(args: argparse.Namespace) -> int:
    """Run ``spare warm``."""
    from spare_lib.cluster.warm import kernels_cached, uncached_kernels, warm_kernels

    was = kernels_cached()
    dt = warm_kernels(workers=2 if (os.cpu_count() or 1) >= 2 else 1)
    print(f"[spare warm] numba kernels {'loaded from the cache' if was else 'compiled and cached'} "
          f"in {dt:.0f} s")
    if args.check:
        missing = uncached_kernels()
        if missing:
            print(f"[spare warm] {len(missing)} kernels have no warm-up call (add one to "
                  f"spare_lib.cluster.warm.WARMUPS): {', '.join(missing)}", file=sys.stderr)
            return 1
        print("[spare warm] every cache=True kernel of spare_lib is in the cache")
    return 0


__all__ = ["add_figures_parser", "add_simulate_parser", "add_sweep_parser", "add_warm_parser",
           "load_points", "show_progress"]
