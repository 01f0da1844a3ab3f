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
    finite_float,
    flag_names,
    positive_int,
    print_table,
)

#: ``spare_lib.failures.FORMATS``, ``TIME_UNITS_S``, ``DISTS``, ``METHODS`` and
#: ``spare_lib.cluster.planning.traces.PLACEMENTS``, repeated so that building the parser does not import
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
        given = f" as --{prefix}format {a['format']}" if a["format"] is not None else ""
        raise CliError(f"{flag} {path!r}{given}: {flag_names(msg, _load_names(prefix))}") from None
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


__all__ = ["add_load_args", "add_trace_parser", "load_from_args"]
