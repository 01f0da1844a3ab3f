"""``spare trace summary|fit`` (real failure logs) and the trace-driven ``spare plan --failures``.

The loaders of :mod:`spare_lib.failures` are strict: a malformed file raises ValueError naming the
row and the column, and that message is passed through as the one-line error.
"""

from __future__ import annotations

import argparse
from typing import Any

from spare_lib.cli.common import (
    CliError,
    dump_json,
    ensure_kernels,
    finite_float,
    flag_names,
    positive_int,
    print_table,
    show_progress,
    spec_from_args,
)

#: ``spare_lib.failures.FORMATS``, ``TIME_UNITS_S``, ``DISTS``, ``METHODS`` and
#: ``spare_lib.cluster.traces.PLACEMENTS``, repeated so that building the parser does not import
#: SciPy (a test checks they agree).
FORMATS = ("stepfun", "titan", "lanl", "csv")
TIME_UNITS = ("s", "min", "h", "d")
FIT_DISTS = ("exponential", "weibull", "lognormal", "gamma")
SYNTH_METHODS = ("block-bootstrap", "fitted")
PLACEMENTS = ("contiguous", "random")

#: Trials of ``spare plan --failures`` without ``--simulate`` (the library's default).
DEFAULT_TRACE_TRIALS = 5

_FILE_HELP = ("a fault log (CSV node,start,end[,cause,domain]; StepFun fault_trace.json; Titan "
              "gc_full.csv; LANL .csv.xz), a dataset folder, or a dataset name: "
              "stepfun-infinitehbd, titan-gpu-life, lanl-cfdr")

# ------------------------------------------------------------------------------ loading


def add_load_args(g: Any, prefix: str = "") -> None:
    """Loader flags (``--format`` ... or ``--failures-format`` ... with ``prefix='failures-'``)."""
    g.add_argument(f"--{prefix}format", choices=FORMATS, default=None,
                   help="log format (default: from the file name; a .csv is the generic CSV)")
    g.add_argument(f"--{prefix}time-unit", choices=TIME_UNITS, default=None,
                   help="unit of the generic CSV's start/end times (default s)")
    g.add_argument(f"--{prefix}system", type=positive_int(f"--{prefix}system", lo=0), default=None,
                   help="LANL only: keep this system (default: all systems)")
    g.add_argument(f"--{prefix}gpus-per-node", type=positive_int(f"--{prefix}gpus-per-node"),
                   default=None, help="GPUs per node (default: the dataset's; StepFun 8, Titan 1)")
    g.add_argument(f"--{prefix}n-nodes", type=positive_int(f"--{prefix}n-nodes"), default=None,
                   help="nodes observed, faultless ones included (default: the dataset's; CSV: "
                        "the distinct nodes in the file)")
    g.add_argument(f"--{prefix}window-s", type=finite_float(f"--{prefix}window-s"), default=None,
                   help="observation window in seconds (default: up to the last event)")


def _load_names(prefix: str) -> dict[str, str]:
    return {k: f"--{prefix}{k.replace('_', '-')}" for k in
            ("format", "time_unit", "system", "gpus_per_node", "n_nodes", "window_s")}


def load_from_args(path: str, args: argparse.Namespace, prefix: str = "", flag: str = "FILE") -> Any:
    """The :class:`~spare_lib.failures.FaultTrace` of ``path`` and the loader flags; CliError with
    the loader's message (row and column of a malformed file) otherwise."""
    from spare_lib.failures import load_trace

    a = {k: getattr(args, f"{prefix.replace('-', '_')}{k}") for k in
         ("format", "time_unit", "system", "gpus_per_node", "n_nodes", "window_s")}
    try:
        trace = load_trace(path, a["format"], time_unit=a["time_unit"] or "s", system=a["system"],
                           gpus_per_node=a["gpus_per_node"], n_nodes=a["n_nodes"],
                           window_s=a["window_s"])
    except FileNotFoundError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "not found"
        raise CliError(f"{flag} {path!r}: {first} (give a fault log, a dataset folder or a "
                       "dataset name: stepfun-infinitehbd, titan-gpu-life, lanl-cfdr)") from None
    except (ValueError, OSError, EOFError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        from pathlib import Path

        msg = msg.removeprefix(f"{Path(path).name}: ")  # the loaders name the file; so do we
        raise CliError(f"{flag} {path!r}: {flag_names(msg, _load_names(prefix))}") from None
    if a["system"] is not None and trace.label != "lanl":
        raise CliError(f"--{prefix}system is only meaningful for LANL logs, got a {trace.label} log")
    if a["time_unit"] is not None and trace.label != "csv":
        raise CliError(f"--{prefix}time-unit only applies to the generic CSV, got a {trace.label} log")
    return trace


# ------------------------------------------------------------------------------ spare trace


def add_trace_parser(sub: Any) -> None:
    """Register ``spare trace summary`` and ``spare trace fit``."""
    t = sub.add_parser("trace", help="describe and fit real failure logs",
                       description="Real failure logs (spare_lib.failures, docs/failures.md): "
                                   "`summary` prints rates, MTBF, simultaneous faults, gaps, "
                                   "repairs and causes; `fit` fits laws to the times between "
                                   "faults (censored maximum likelihood).")
    tsub = t.add_subparsers(dest="trace_command", required=True, parser_class=type(t))

    s = tsub.add_parser("summary", help="rates, MTBF, simultaneous faults, gaps, repairs, causes",
                        description="Summary statistics of a fault log (spare_lib.failures.summary).")
    s.add_argument("file", metavar="FILE", help=_FILE_HELP)
    add_load_args(s)
    s.add_argument("--tolerance-s", type=finite_float("--tolerance-s", allow_zero=True), default=1.0,
                   help="faults starting within this many seconds form one instant (default 1)")
    s.add_argument("--json", action="store_true", help="print strict JSON (null for missing values)")
    s.set_defaults(func=cmd_trace_summary)

    f = tsub.add_parser("fit", help="fit laws to the times between faults",
                        description="Censored maximum-likelihood fits of the times between faults "
                                    "(spare_lib.failures.fit_interarrival): at system level the gaps "
                                    "between fault instants of the whole log, at node level the gaps "
                                    "per node pooled (faultless nodes censored at the window).")
    f.add_argument("file", metavar="FILE", help=_FILE_HELP)
    add_load_args(f)
    f.add_argument("--level", choices=("system", "node"), default="system",
                   help="gaps between instants of the whole log (default) or per node")
    f.add_argument("--dists", default=",".join(FIT_DISTS), metavar="D,D,...",
                   help=f"laws to fit, comma-separated from {', '.join(FIT_DISTS)} (default: all)")
    f.add_argument("--ci", choices=("bootstrap", "fisher", "none"), default="bootstrap",
                   help="confidence interval of the shape: bootstrap percentile (default), Fisher "
                        "(Wald on log-shape) or none")
    f.add_argument("--boot", type=positive_int("--boot", lo=2), default=None, metavar="N",
                   help="bootstrap resamples (default 200; with --ci bootstrap)")
    f.add_argument("--tolerance-s", type=finite_float("--tolerance-s", allow_zero=True), default=1.0,
                   help="faults starting within this many seconds form one instant (default 1)")
    f.add_argument("--seed", type=positive_int("--seed", lo=0), default=0, help="bootstrap seed (0)")
    f.add_argument("--json", action="store_true", help="print strict JSON (null for missing values)")
    f.set_defaults(func=cmd_trace_fit)


def cmd_trace_summary(args: argparse.Namespace) -> int:
    """Run ``spare trace summary``."""
    from spare_lib.failures import summary

    trace = load_from_args(args.file, args)
    try:
        s = summary(trace, tolerance_s=args.tolerance_s)
    except ValueError as exc:
        raise CliError(flag_names(str(exc), {"tolerance_s": "--tolerance-s"})) from None
    s["source"] = f"{trace.label} ({args.file})"  # what the user typed, not a machine path
    print(dump_json(dict(s)) if args.json else str(s))
    return 0


def _fmt(v: Any, spec: str = ".3g") -> str:
    return "-" if v is None or v != v else format(v, spec)


def cmd_trace_fit(args: argparse.Namespace) -> int:
    """Run ``spare trace fit``."""
    from spare_lib.failures import fit_interarrival

    dists = tuple(d.strip() for d in args.dists.split(",") if d.strip())
    bad = [d for d in dists if d not in FIT_DISTS]
    if not dists or bad:
        raise CliError(f"--dists must be comma-separated laws from {', '.join(FIT_DISTS)}, got "
                       f"{args.dists!r}")
    ci = None if args.ci == "none" else args.ci
    if args.boot is not None and ci != "bootstrap":
        raise CliError(f"--boot only applies with --ci bootstrap, got --ci {args.ci}")
    trace = load_from_args(args.file, args)
    try:
        df = fit_interarrival(trace, level=args.level, dists=dists,
                              n_boot=200 if args.boot is None else args.boot, seed=args.seed,
                              tolerance_s=args.tolerance_s, ci=ci)
    except ValueError as exc:
        raise CliError(flag_names(str(exc), {"tolerance_s": "--tolerance-s", "n_boot": "--boot",
                                             "dists": "--dists", "level": "--level"})) from None
    attrs = dict(df.attrs)
    if args.json:
        print(dump_json({"source": trace.label, "file": args.file, **attrs,
                         "fits": df.to_dict("records")}))
        return 0
    hour = 3600.0
    n_obs, n_cens = int(df["n_obs"].iloc[0]), int(df["n_censored"].iloc[0])
    what = ("gaps between fault instants of the whole log (faults within "
            f"{attrs['tolerance_s']:g} s are one instant)" if args.level == "system"
            else "gaps per node, pooled over nodes (faultless nodes censored at the window)")
    ci_txt = {"bootstrap": f"bootstrap percentile, {attrs.get('n_boot', 0)} resamples, seed {args.seed}",
              "fisher": "Fisher (Wald on log-shape)", None: "none"}[ci]
    print(f"Inter-arrival fits of {trace.label} ({trace.n_nodes} nodes, window "
          f"{trace.window_s / 86400:.1f} d), level {args.level}: {n_obs} {what}, {n_cens} "
          f"right-censored; 95 % CI of the shape: {ci_txt}")
    rows = []
    for rec in df.to_dict("records"):
        lo, hi = rec.get("shape_lo"), rec.get("shape_hi")
        rows.append({"law": rec["dist"], "shape": _fmt(rec["shape"]),
                     "95% CI": "-" if lo is None or lo != lo else f"{lo:.3g}..{hi:.3g}",
                     "scale (h)": _fmt(rec["scale"] / hour), "MTBF (h)": _fmt(rec["mtbf_s"] / hour),
                     "node MTBF (h)": _fmt(rec["mtbf_node_hours"], ",.0f"),
                     "GPU MTBF (h)": _fmt(rec["mtbf_gpu_hours"], ",.0f"),
                     "AIC": _fmt(rec["aic"], ".1f"), "KS": _fmt(rec["ks"], ".3f")})
    print_table(rows, list(rows[0]))
    best = df.loc[df["aic"].idxmin()]
    line = f"Best by AIC: {best['dist']}"
    if best["shape"] == best["shape"]:
        line += f" (shape {best['shape']:.3g})"
    if "weibull" in set(df["dist"]):
        k = float(df.loc[df["dist"] == "weibull", "shape"].iloc[0])
        line += f"; Weibull shape k = {k:.3g} (the paper's model: k = 0.78"
        line += ", decreasing hazard)" if k < 1 else "; here k >= 1, no decreasing hazard)"
    print(line + ". Shapes of lognormal and gamma are sigma and a; exponential has none.")
    if args.level == "node":
        print(f"Dispersion of per-node fault counts: variance/mean = "
              f"{attrs['rate_dispersion']:.3g} (1 for equal-rate Poisson nodes; chi-square p = "
              f"{attrs['dispersion_pvalue']:.3g})")
    return 0


# ------------------------------------------------------------------------------ spare plan --failures


def add_failures_args(pl: argparse.ArgumentParser) -> None:
    """The ``--failures`` flags of ``spare plan``."""
    g = pl.add_argument_group(
        "real failures (with --failures FILE: simulations driven by the log instead of the Weibull "
        "model; --simulate N_TRIALS sets the trials, default 5)")
    g.add_argument("--failures", default=None, metavar="FILE",
                   help="plan from a fault log: " + _FILE_HELP)
    add_load_args(g, "failures-")
    g.add_argument("--failures-method", choices=SYNTH_METHODS, default=None,
                   help="how group failures are synthesized from the log: block-bootstrap "
                        "(default; tiles of the real log, simultaneous faults kept) or fitted "
                        "(compound renewal process fitted to it)")
    g.add_argument("--failures-placement", choices=PLACEMENTS, default=None,
                   help="groups on the servers: contiguous (default; a multi-server fault hits "
                        "neighbouring groups) or random (group ids permuted per trial)")
    g.add_argument("--failures-dist", choices=("weibull", "exponential", "lognormal", "gamma"),
                   default=None, help="law of the gaps with --failures-method fitted (default weibull)")
    g.add_argument("--failures-tolerance-s", type=finite_float("--failures-tolerance-s", allow_zero=True),
                   default=None, help="faults within this many seconds are one instant (default 1)")
    g.add_argument("--gpus-per-server", type=positive_int("--gpus-per-server"), default=None,
                   help="GPUs per server of the planned cluster (default: the log's GPUs per node)")
    g.add_argument("--failures-checkpoint", choices=("closed-form", "paper"), default=None,
                   help="checkpoint interval C0 of the r search: T_c* at the log's system MTBF "
                        "(default) or the paper's table (N = 200, 600, 1000)")
    g.add_argument("--failures-chunk-s", type=finite_float("--failures-chunk-s"), default=None,
                   help="length of each synthesized block of failures (default: the log's window)")
    g.add_argument("--failures-horizon-s", type=finite_float("--failures-horizon-s"), default=None,
                   help="first horizon of each trial's failures (default: 1.5 x the closed-form "
                        "time-to-train of the slowest candidate; runs that outlast it are rerun "
                        "on a longer one)")


#: Flags of ``spare plan`` that only apply with --failures (dest names).
FAILURES_ONLY = ("failures_format", "failures_time_unit", "failures_system", "failures_gpus_per_node",
                 "failures_n_nodes", "failures_window_s", "failures_method", "failures_placement",
                 "failures_dist", "failures_tolerance_s", "gpus_per_server", "failures_checkpoint",
                 "failures_chunk_s", "failures_horizon_s")

#: Flags of ``spare plan`` that do not apply with --failures, and why.
_NOT_WITH_FAILURES = {
    "system_mtbf_min": "the log sets the failure rate",
    "gpu_mtbf_hours": "the log sets the failure rate",
    "weibull_shape": "the log replaces the Weibull model",
    "failure_dist": "the log replaces the failure law (see --failures-dist for --failures-method fitted)",
    "model": "trace-driven plans use the finite-N closed form for their starting points",
    "min_restarts": "not checked for trace-driven runs",
    "no_common_failures": "every trial replays the same synthesized failures for every candidate",
    "cache_dir": "trace-driven runs are not cached",
    "scheduler": "trace-driven runs use local processes or serial",
}


def check_failures_flags(args: argparse.Namespace) -> None:
    """CliError for flags that do not go with (or need) --failures."""
    if args.failures is None:
        given = [n for n in FAILURES_ONLY if getattr(args, n) is not None]
        if given:
            raise CliError(f"--{given[0].replace('_', '-')} only applies with --failures FILE")
        return
    for name, why in _NOT_WITH_FAILURES.items():
        if getattr(args, name) not in (None, False):
            raise CliError(f"--{name.replace('_', '-')} does not apply with --failures ({why})")
    if args.domain_size != 1 or args.domain_fault_share != 0:
        flag = "--domain-size" if args.domain_size != 1 else "--domain-fault-share"
        raise CliError(f"{flag} does not apply with --failures (a log carries its own simultaneous "
                       "failures; see --failures-placement)")
    if args.layout == "domain-aware":
        raise CliError("--layout must be ruler or consecutive with --failures, got domain-aware")
    if args.rep_placement != "consecutive":
        raise CliError("--rep-placement must be consecutive with --failures (trace-driven runs "
                       f"place replica sets consecutively), got {args.rep_placement}")
    if args.backend == "dask":
        raise CliError("--backend must be processes or serial with --failures, got dask")
    if args.failures_dist is not None and args.failures_method != "fitted":
        raise CliError("--failures-dist only applies with --failures-method fitted")


_TRACE_FLAGS = {"trials": "--simulate", "steps": "--steps", "seed": "--seed", "spare_r": "--spare-r",
                "rep_r": "--rep-r", "spare_window": "--spare-window",
                "checkpoint_factors": "--checkpoint-factors", "max_wall_t0": "--max-wall-t0",
                "failures_method": "--failures-method", "method": "--failures-method",
                "placement": "--failures-placement", "dist": "--failures-dist",
                "gpus_per_server": "--gpus-per-server", "tolerance_s": "--failures-tolerance-s",
                "chunk_s": "--failures-chunk-s", "horizon_s": "--failures-horizon-s",
                "checkpoint": "--failures-checkpoint", "workers": "--workers", "backend": "--backend",
                "gpus_per_group": "--gpus-per-group", "gpus": "--gpus"}


def cmd_plan_failures(args: argparse.Namespace) -> int:
    """``spare plan --failures FILE``: r and C per method from simulations driven by the log."""
    from spare_lib.cluster.planning import CKPT_FACTORS, MAX_WALL_T0, SPARE_WINDOW
    from spare_lib.cluster.traces import plan_with_trace

    check_failures_flags(args)
    trials = DEFAULT_TRACE_TRIALS if args.simulate is None else args.simulate
    trace = load_from_args(args.failures, args, "failures-", flag="--failures")
    backend = args.backend or "processes"
    try:
        spec = spec_from_args(args)
        ensure_kernels(quiet=args.json)
        tp = plan_with_trace(
            trace, spec, failures_method=args.failures_method or "block-bootstrap", trials=trials,
            seed=args.seed, steps=None if args.steps in (None, "auto") else args.steps,
            spare_r=args.spare_r, rep_r=args.rep_r, include_ckpt=not args.no_ckpt_only,
            checkpoint=args.failures_checkpoint or "closed-form",
            checkpoint_factors=CKPT_FACTORS if args.checkpoint_factors is None else args.checkpoint_factors,
            spare_window=SPARE_WINDOW if args.spare_window is None else args.spare_window,
            dist=args.failures_dist or "weibull", placement=args.failures_placement or "contiguous",
            gpus_per_server=args.gpus_per_server,
            tolerance_s=1.0 if args.failures_tolerance_s is None else args.failures_tolerance_s,
            chunk_s=args.failures_chunk_s, horizon_s=args.failures_horizon_s,
            max_wall_t0=MAX_WALL_T0 if args.max_wall_t0 is None else args.max_wall_t0,
            layout=args.layout, backend=backend, workers=args.workers, progress=show_progress(args))
    except CliError:
        raise
    except ValueError as exc:
        raise CliError(flag_names(str(exc), _TRACE_FLAGS)) from None
    if args.json:
        print(dump_json({**tp.to_dict(), "layout": args.layout,
                         "best": _best_choice(tp)}))
        return 0
    _print_trace_plan(tp, spec, trace, args)
    return 0


def _best_choice(tp: Any) -> dict[str, Any] | None:
    if not tp.choices:
        return None
    c = min(tp.choices.values(), key=lambda c: (not c.finished, c.ttt_mean))
    return {"method": c.method, "label": c.label, "r": c.r, "checkpoint_steps": c.checkpoint_steps,
            "ttt_over_t0": c.ttt_mean}


def _print_trace_plan(tp: Any, spec: Any, trace: Any, args: argparse.Namespace) -> None:
    print(f"Cluster: {spec.gpus:,} GPUs / {spec.gpus_per_group:,} per group -> N = {spec.N} groups; "
          f"restart T_r = {spec.restart_s / 60:.3g} min; checkpoint T_s = {spec.checkpoint_s:.3g} s; "
          f"step = {spec.step_s:.3g} s (compute {spec.compute_per_stack_s:.3g} s + all-reduce T_a "
          f"{spec.allreduce_s:.3g} s); SPARe layout {args.layout}")
    gps = args.gpus_per_server or trace.gpus_per_node
    print(f"Failures: {trace.label} ({args.failures}: {trace.n_faults} faults on {trace.n_nodes} nodes "
          f"over {trace.window_s / 86400:.1f} d), synthesized onto this cluster's servers"
          + (f" of {gps} GPUs" if gps else "")
          + f" by {args.failures_method or 'block-bootstrap'}, placement "
          f"{args.failures_placement or 'contiguous'}: group failures every "
          f"{tp.system_mtbf_s / 60:.3g} min on average (system MTBF; the Weibull model is not used)")
    factors = ", ".join(f"{f:g}" for f in (args.checkpoint_factors if args.checkpoint_factors
                                           is not None else (0.5, 0.75, 1.5, 2.0)))
    search = f"then C = {factors} x C0 at the best r (search 'C')" if factors else "no checkpoint search"
    default = " (the default without --simulate)" if args.simulate is None else ""
    print(f"\nSimulation ({tp.trials} trials{default} x {tp.steps:,} steps per run; every candidate r at the "
          f"checkpoint interval C0 of the {tp.checkpoint} rule (search 'r'), {search}; trial t of "
          f"every candidate replays the same synthesized failures, seed {tp.seed}; "
          f"{tp.elapsed_s:.0f} s):")
    rows = []
    for q in tp.points:
        unfinished = q.trials - q.completed
        mean = (f"{q.ttt_mean:.3f}" if not unfinished
                else f">= {q.ttt_mean:.1f} ({unfinished}/{q.trials} unfinished)")
        rows.append({"method": q.label, "search": "r" if q.stage == 1 else "C", "r": q.r,
                     "C (steps)": q.checkpoint_steps, "TTT/T0 mean": mean, "s.e.": _fmt(q.ttt_se, ".3f"),
                     "restarts": f"{q.restarts_mean:.1f}",
                     "A mean": f"{100 * q.availability_mean:.1f}%",
                     "closed TTT/T0": _fmt(q.closed_form_ttt, ".3f")})
    print_table(rows, list(rows[0]))
    print()
    print("\n".join(tp.lines()))


__all__ = ["FAILURES_ONLY", "add_failures_args", "add_load_args", "add_trace_parser",
           "check_failures_flags", "cmd_plan_failures", "load_from_args"]
