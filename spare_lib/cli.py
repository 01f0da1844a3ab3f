"""The ``spare`` command line.

Subcommands
-----------
plan      recommended r and checkpoint period for a cluster (closed forms; ``--simulate N``
          adds simulated values per candidate r)
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
    from spare_lib.figures.pipeline import run_all
    from spare_lib.figures.registry import update_readme

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


def _finite_float(name: str, allow_zero: bool = False):  # noqa: ANN202 - argparse type factory
    bound = ">= 0" if allow_zero else "> 0"

    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number {bound}, got {text!r}") from None
        if not (v >= 0 if allow_zero else v > 0) or v == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number {bound}, got {text}")
        return v
    return conv


def _factor_list(text: str) -> tuple[float, ...]:
    """``--checkpoint-factors``: comma-separated numbers > 0, or 'none'."""
    if text.strip().lower() in ("none", ""):
        return ()
    try:
        fs = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--checkpoint-factors must be comma-separated numbers > 0 or 'none', got {text!r}") from None
    if not all(f > 0 and f < float("inf") for f in fs):
        raise argparse.ArgumentTypeError(f"--checkpoint-factors must be numbers in (0, inf), got {text!r}")
    return fs


def _print_table(rows: list[dict], columns: list[str]) -> None:
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    print("  ".join(c.rjust(widths[c]) for c in columns))
    for r in rows:
        print("  ".join(str(r.get(c, "")).rjust(widths[c]) for c in columns))


#: Library parameter names -> the ``spare plan`` flags, so errors name the flag the user typed.
_PLAN_FLAGS = {"gpus_per_group": "--gpus-per-group", "gpus": "--gpus",
               "system_mtbf_min": "--system-mtbf-min", "gpu_mtbf_hours": "--gpu-mtbf-hours",
               "restart_min": "--restart-min", "checkpoint_s": "--checkpoint-s",
               "allreduce_s": "--allreduce-s", "step_s": "--step-s", "steps": "--steps",
               "trials": "--simulate", "seed": "--seed",
               "checkpoint_factors": "--checkpoint-factors"}


def _flag_names(message: str) -> str:
    import re

    pattern = r"\b(" + "|".join(sorted(_PLAN_FLAGS, key=len, reverse=True)) + r")\b"
    return re.sub(pattern, lambda m: _PLAN_FLAGS[m.group(1)], message)


def _fmt(v: float, nd: int = 3) -> str:
    return "n/a" if v != v else f"{v:.{nd}f}"


def _print_plan(sp, closed) -> None:  # noqa: ANN001 - SimulatedPlan | None, Plan
    c = closed.cluster
    print(f"Cluster: {c.gpus:,} GPUs / {c.gpus_per_group:,} per group -> N = {c.N} groups; "
          f"system MTBF m = {c.system_mtbf_s / 60:.3g} min; restart T_r = {c.restart_s / 60:.3g} min; "
          f"checkpoint T_s = {c.checkpoint_s:.3g} s; step = {c.step_s:.3g} s "
          f"(compute {c.compute_per_stack_s:.3g} s + all-reduce T_a {c.allreduce_s:.3g} s)")
    print(f"\nClosed forms, model '{closed.model}': {closed.model_note};")
    print("  T_f = mu m, T_c* = T_s + sqrt(T_s^2 + 2 T_s (T_f + T_r)), A* = A(T_c*) (Eq. 2), "
          "TTT/T0 = overhead / A* (Eq. 7)")
    rows = []
    for p in (closed.spare, closed.rep, closed.ckpt):
        rows.append({"method": p.label, "r": p.r, "mu": f"{p.mu:.1f}",
                     "T_f (h)": f"{p.restart_interval_s / 3600:.2f}", "overhead": f"{p.overhead:.3f}",
                     "T_c* (s)": f"{p.checkpoint_period_s:.0f}", "T_c* (steps)": p.checkpoint_steps,
                     "A*": f"{100 * p.availability:.1f}%", "TTT/T0": f"{p.ttt_over_t0:.3f}"})
    _print_table(rows, list(rows[0]))
    print(f"Gain of SPARe+CKPT over Rep+CKPT: {100 * closed.gain_vs_rep:.1f} %, over CKPT-only: "
          f"{100 * closed.gain_vs_ckpt:.1f} % (closed form). Paper's formulas (mu Gamma form, "
          f"Eq. 5): r* = {closed.r_star_paper}; floor(log2 N + 0.833) = {closed.r_star_log2}.")
    if sp is None:
        return
    search = (f"then C = {', '.join(f'{f:g}' for f in sp.checkpoint_factors)} x T_c* steps at the "
              "best r (search 'C')" if sp.checkpoint_factors else "no checkpoint search")
    print(f"\nSimulation ({sp.trials} trials x {sp.steps:,} steps per run, Weibull k = 0.78; "
          f"every candidate r with checkpoints every T_c* steps (search 'r'), {search}; "
          f"seeds point_seed(point, {sp.seed}), runs capped at {sp.max_wall_t0:g} T0; "
          f"{sp.elapsed_s:.0f} s):")
    rows = []
    for q in sp.points:
        unfinished = q.trials - q.completed
        mean = (_fmt(q.ttt_mean) if not unfinished
                else f">= {_fmt(q.ttt_mean, 1)} ({unfinished}/{q.trials} unfinished)")
        rows.append({"method": q.label, "search": "r" if q.stage == 1 else "C", "r": q.r,
                     "C (steps)": q.checkpoint_steps,
                     "TTT/T0 mean": mean, "sd": _fmt(q.ttt_std),
                     "min": _fmt(q.ttt_min), "max": _fmt(q.ttt_max),
                     "A mean": f"{100 * q.availability_mean:.1f}%",
                     "closed TTT/T0": _fmt(q.closed_form_ttt),
                     "closed A*": f"{100 * q.closed_form_availability:.1f}%"})
    _print_table(rows, list(rows[0]))
    print("\nRecommendation from the simulation:")
    for ch in (sp.spare, sp.rep, sp.ckpt):
        print("  " + ch.describe())
    if sp.gain_vs_rep == sp.gain_vs_rep:
        print(f"Gain of SPARe+CKPT over Rep+CKPT (simulated optima): {100 * sp.gain_vs_rep:.1f} %"
              + (f" ({100 * sp.gain_vs_rep_closed_checkpoint:.1f} % with the closed-form checkpoint "
                 "intervals)" if sp.checkpoint_factors else ""))


def _cmd_plan(args: argparse.Namespace) -> int:
    import json

    from spare_lib.cluster.planning import CKPT_FACTORS, cluster_spec, plan
    from spare_lib.cluster.planning_sim import plan_simulated

    try:
        spec = cluster_spec(
            args.gpus, args.gpus_per_group, system_mtbf_min=args.system_mtbf_min,
            gpu_mtbf_hours=args.gpu_mtbf_hours, restart_min=args.restart_min,
            checkpoint_s=args.checkpoint_s, step_s=args.step_s, allreduce_s=args.allreduce_s)
        closed = plan(spec, model=args.model)
        sp = None
        if args.simulate:
            factors = (CKPT_FACTORS if args.checkpoint_factors is None
                       else args.checkpoint_factors)
            sp = plan_simulated(spec, args.simulate, steps=args.steps, seed=args.seed,
                                         model=args.model, workers=args.workers,
                                         checkpoint_factors=factors,
                                         progress=not args.json and sys.stderr.isatty())
    except ValueError as exc:
        raise ValueError(_flag_names(str(exc))) from None
    if args.json:
        print(json.dumps(sp.to_dict() if sp is not None else closed.to_dict(), indent=2))
    else:
        _print_plan(sp, closed)
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    import json

    from spare_lib.cluster.sweep import simulate_point

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
    from spare_lib.cluster.sweep import run_sweep, simulate_point

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
    pl = sub.add_parser(
        "plan", help="recommended r and checkpoint period for a cluster",
        description="Joint optimum of the redundancy r and the checkpoint period for SPARe+CKPT, "
                    "Rep+CKPT and CKPT-only from the closed forms (Eqs. 2, 5, 7); --simulate N "
                    "also simulates every candidate r N times. Defaults: the paper's N = 600 "
                    "configuration of the 600k-H100 cluster. --step-s is compute per stack + "
                    "all-reduce T_a; T_a defaults to N/100 s as in the paper's preset.")
    pl.add_argument("--gpus", type=_positive_int("--gpus", lo=2), default=600_000,
                    help="GPUs of the cluster (default 600000)")
    pl.add_argument("--gpus-per-group", type=_positive_int("--gpus-per-group"), default=1000,
                    help="GPUs per data-parallel group; N = gpus / gpus-per-group (default 1000)")
    mt = pl.add_mutually_exclusive_group()
    mt.add_argument("--system-mtbf-min", type=_finite_float("--system-mtbf-min"), default=None,
                    help="system MTBF m in minutes (default 5)")
    mt.add_argument("--gpu-mtbf-hours", type=_finite_float("--gpu-mtbf-hours"), default=None,
                    help="per-GPU MTBF in hours; m = gpu-mtbf-hours / gpus")
    pl.add_argument("--restart-min", type=_finite_float("--restart-min", allow_zero=True), default=60.0,
                    help="global restart time T_r in minutes (default 60)")
    pl.add_argument("--checkpoint-s", type=_finite_float("--checkpoint-s"), default=2e13 / 340e9,
                    help="checkpoint write time T_s in seconds (default 58.8)")
    pl.add_argument("--step-s", type=_finite_float("--step-s"), default=None,
                    help="failure-free step time = compute per stack + T_a, seconds (default 64 + T_a)")
    pl.add_argument("--allreduce-s", type=_finite_float("--allreduce-s", allow_zero=True), default=None,
                    help="all-reduce time T_a in seconds (default N/100, the paper's preset)")
    pl.add_argument("--model", choices=("finite", "paper"), default="finite",
                    help="SPARe closed form: finite (mu_finite, overhead_finite; default) or paper "
                         "(mu Gamma form, Eq. 5)")
    pl.add_argument("--simulate", type=_positive_int("--simulate"), default=None, metavar="N_TRIALS",
                    help="also simulate every candidate r N_TRIALS times")
    pl.add_argument("--steps", type=_positive_int("--steps"), default=10_000,
                    help="committed steps per simulated run (default 10000)")
    pl.add_argument("--checkpoint-factors", type=_factor_list, default=None, metavar="F,F,...",
                    help="with --simulate: multipliers of the closed-form checkpoint interval also "
                         "simulated at the best r (default 0.5,0.75,1.5,2; 'none': no search)")
    pl.add_argument("--workers", type=_positive_int("--workers"), default=None,
                    help="simulation processes (default: all cores)")
    pl.add_argument("--seed", type=_positive_int("--seed", lo=0), default=0)
    pl.add_argument("--json", action="store_true", help="print JSON")
    pl.set_defaults(func=_cmd_plan)

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
    s.add_argument("--system-mtbf-min", type=_finite_float("--system-mtbf-min"), default=None)
    s.add_argument("--layout", choices=("ruler", "consecutive"), default="ruler")
    s.add_argument("--seed", type=_positive_int("--seed", lo=0), default=0)
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=_cmd_simulate)

    w = sub.add_parser("sweep", help="simulate every point of a CSV/YAML file")
    w.add_argument("file", help="CSV or YAML, one point per row/item "
                                "(keyword arguments of spare_lib.cluster.sweep.simulate_point)")
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
