"""Shared pieces of the ``spare`` command line: argparse types, the ONE cluster-flag parser every
command uses, error translation (library parameter -> the flag the user typed), strict JSON,
one-line warnings, the output-path check and the first-run JIT announcement.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

#: ``planning.LAYOUTS`` and ``planning.REP_PLACEMENTS``, repeated so that building the parser
#: does not import the simulator (a test checks they agree).
LAYOUTS, REP_PLACEMENTS = ("ruler", "domain-aware", "consecutive"), ("consecutive", "strided")

#: Default cluster of every command: the paper's N = 600 configuration of the 600k-H100 cluster.
DEFAULT_GPUS, DEFAULT_GPUS_PER_GROUP = 600_000, 1000
#: Default per-GPU MTBF, hours: ``cluster.config.GPU_MTBF_S`` / 3600 (m = 5 min at 600k GPUs).
DEFAULT_GPU_MTBF_HOURS = 600_000 * 300.0 / 3600.0
#: ``planning.ALLREDUCE_CHOICES``, repeated for the same reason (a test checks they agree).
ALLREDUCE_CHOICES = ("preset", "ring", "rabenseifner", "tree")


class CliError(ValueError):
    """A user error detected by the command line itself (one line, exit 2)."""


def positive_int(name: str, lo: int = 1):  # noqa: ANN201 - argparse type factory
    """argparse type: an integer >= ``lo``."""
    def conv(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {lo}, got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {lo}, got {v}")
        return v
    return conv


def finite_float(name: str, allow_zero: bool = False):  # noqa: ANN201 - argparse type factory
    """argparse type: a finite number > 0 (or >= 0)."""
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


def probability(name: str):  # noqa: ANN201 - argparse type factory
    """argparse type: a number in [0, 1]."""
    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number in [0, 1], got {text!r}") from None
        if not 0.0 <= v <= 1.0:
            raise argparse.ArgumentTypeError(f"{name} must be a number in [0, 1], got {text}")
        return v
    return conv


def factor_list(text: str) -> tuple[float, ...]:
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


def int_set(name: str):  # noqa: ANN201 - argparse type factory
    """argparse type: '4..12', '4-12', '3,5,8' or a mix ('2,4..6'); 'none' for an empty set."""
    def conv(text: str) -> tuple[int, ...]:
        if text.strip().lower() in ("none", ""):
            return ()
        out: set[int] = set()
        try:
            for part in text.split(","):
                m = re.fullmatch(r"\s*(\d+)\s*(?:(?:\.\.|-)\s*(\d+)\s*)?", part)
                if not m:
                    raise ValueError
                lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
                if hi < lo:
                    raise ValueError
                out.update(range(lo, hi + 1))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be integers like 4..12, 2-5 or 3,5,8 (or 'none'), got {text!r}") from None
        return tuple(sorted(out))
    return conv


def steps_arg(text: str) -> int | str:
    """``--steps``: an integer >= 1 or 'auto'."""
    if text.strip().lower() == "auto":
        return "auto"
    return positive_int("--steps")(text)


def add_cluster_args(p: argparse.ArgumentParser, *, n_flag: bool = False,
                     allreduce: str = "ring") -> None:
    """The cluster flags, the same for every command (``plan``, ``simulate``).

    --gpus, --gpus-per-group (or --N with ``n_flag``), --system-mtbf-min | --gpu-mtbf-hours,
    --restart-min, --checkpoint-s, --step-s, --allreduce-s | --allreduce, --model-bytes,
    --weibull-shape, --failure-dist, --domain-size, --domain-fault-share. Read back with
    :func:`spec_from_args`. ``allreduce`` is the default of --allreduce: 'ring' for the planner
    (any cluster size), 'preset' for ``spare simulate`` (the paper's N/100 s, so its default
    runs are the paper's).
    """
    g = p.add_argument_group("cluster (defaults: the paper's 600k-H100 cluster at N = 600)")
    g.add_argument("--gpus", type=positive_int("--gpus", lo=2), default=DEFAULT_GPUS,
                   help=f"GPUs of the cluster (default {DEFAULT_GPUS})")
    size = g.add_mutually_exclusive_group() if n_flag else g
    size.add_argument("--gpus-per-group", type=positive_int("--gpus-per-group"), default=None,
                      help="GPUs per data-parallel group; N = gpus / gpus-per-group "
                           f"(default {DEFAULT_GPUS_PER_GROUP})")
    if n_flag:
        size.add_argument("--N", type=positive_int("--N", lo=1), default=None,
                          help="data-parallel groups instead of --gpus-per-group (must divide --gpus)")
    mt = g.add_mutually_exclusive_group()
    mt.add_argument("--system-mtbf-min", type=finite_float("--system-mtbf-min"), default=None,
                    help="system MTBF m in minutes (default: from --gpu-mtbf-hours)")
    mt.add_argument("--gpu-mtbf-hours", type=finite_float("--gpu-mtbf-hours"), default=None,
                    help=f"per-GPU MTBF in hours; m = gpu-mtbf-hours / working GPUs (default "
                         f"{DEFAULT_GPU_MTBF_HOURS:g}: m = 5 min at 600k GPUs, scaling as 1/GPUs)")
    g.add_argument("--restart-min", type=finite_float("--restart-min", allow_zero=True), default=60.0,
                   help="global restart time T_r in minutes (default 60)")
    g.add_argument("--checkpoint-s", type=finite_float("--checkpoint-s"), default=2e13 / 340e9,
                   help="checkpoint write time T_s in seconds (default 58.8)")
    g.add_argument("--step-s", type=finite_float("--step-s"), default=None,
                   help="failure-free step time = compute per stack + T_a, seconds (default 64 + T_a)")
    g.add_argument("--allreduce-s", type=finite_float("--allreduce-s", allow_zero=True), default=None,
                   help="all-reduce time T_a in seconds (default: from --allreduce)")
    g.add_argument("--allreduce", choices=ALLREDUCE_CHOICES, default=allreduce,
                   help="how T_a is derived: an alpha-beta all-reduce model among the N groups "
                        "(ring: 1.993 / 5.999 / 10.005 s at the paper's N = 200 / 600 / 1000; "
                        "rabenseifner; tree; docs/scale.md) or the paper's preset N/100 s "
                        f"(default {allreduce})")
    g.add_argument("--model-bytes", type=finite_float("--model-bytes"), default=2e13,
                   help="gradient bytes all-reduced per step (default 2e13, the paper's 10T "
                        "parameters in FP16)")
    g.add_argument("--weibull-shape", type=finite_float("--weibull-shape"), default=None,
                   help="Weibull shape k of the per-group failure law (default 0.78); simulation "
                        "only, the closed forms depend on the mean alone")
    g.add_argument("--failure-dist", choices=("weibull", "exponential"), default=None,
                   help="per-group failure law, same mean m·N (default weibull)")
    g.add_argument("--domain-size", type=positive_int("--domain-size"), default=1, metavar="D",
                   help="groups per failure domain (group g in domain g // D), 1..N (default 1: "
                        "no domains)")
    g.add_argument("--domain-fault-share", type=probability("--domain-fault-share"), default=0.0,
                   metavar="Q", help="share q in [0, 1] of failure events that kill a whole domain "
                                     "(same total rate 1/m; default 0)")


def add_layout_args(p: argparse.ArgumentParser) -> None:
    """--layout (SPARe's) and --rep-placement (Rep's), the same for ``plan`` and ``simulate``."""
    p.add_argument("--layout", choices=LAYOUTS, default="ruler",
                   help="SPARe's stacking layout: Golomb ruler (default), domain-aware (every "
                        "type's r holders in r distinct failure domains; needs N >= r·D) or "
                        "consecutive")
    p.add_argument("--rep-placement", choices=REP_PLACEMENTS, default="consecutive",
                   help="Rep's replica sets: r consecutive groups (default) or groups ceil(N/r) "
                        "apart (across failure domains)")


def spec_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~spare_lib.cluster.planning.ClusterSpec` of the cluster flags."""
    from spare_lib.cluster.planning import cluster_spec

    failure_dist = args.failure_dist or "weibull"
    if failure_dist == "exponential" and args.weibull_shape is not None:
        raise CliError("--weibull-shape does not apply with --failure-dist exponential")
    gpg = args.gpus_per_group
    n = getattr(args, "N", None)
    if n is not None:
        if args.gpus % n or args.gpus // n < 1 or n < 2:
            raise CliError(f"--N must be >= 2 and divide --gpus = {args.gpus}, got {n}")
        gpg = args.gpus // n
    if gpg is None:
        gpg = DEFAULT_GPUS_PER_GROUP
    gpu_mtbf = args.gpu_mtbf_hours
    if gpu_mtbf is None and args.system_mtbf_min is None:
        gpu_mtbf = DEFAULT_GPU_MTBF_HOURS
    return cluster_spec(args.gpus, gpg, system_mtbf_min=args.system_mtbf_min,
                        gpu_mtbf_hours=gpu_mtbf, restart_min=args.restart_min,
                        checkpoint_s=args.checkpoint_s, step_s=args.step_s,
                        allreduce_s=args.allreduce_s, allreduce=args.allreduce,
                        model_bytes=args.model_bytes,
                        weibull_shape=0.78 if args.weibull_shape is None else args.weibull_shape,
                        failure_dist=failure_dist, domain_size=args.domain_size,
                        domain_fault_share=args.domain_fault_share)


#: Library parameter names -> the flags, so errors name what the user typed.
FLAG_NAMES = {"gpus_per_group": "--gpus-per-group", "gpus": "--gpus",
              "system_mtbf_min": "--system-mtbf-min", "gpu_mtbf_hours": "--gpu-mtbf-hours",
              "restart_min": "--restart-min", "checkpoint_s": "--checkpoint-s",
              "allreduce_s": "--allreduce-s", "step_s": "--step-s", "steps": "--steps",
              "trials": "--simulate", "seed": "--seed", "checkpoint_factors": "--checkpoint-factors",
              "spare_r": "--spare-r", "rep_r": "--rep-r", "spare_window": "--spare-window",
              "weibull_shape": "--weibull-shape", "failure_dist": "--failure-dist",
              "max_wall_t0": "--max-wall-t0", "min_restarts": "--min-restarts",
              "ckpt_steps": "--ckpt-steps", "domain_size": "--domain-size",
              "domain_fault_share": "--domain-fault-share", "rep_placement": "--rep-placement",
              "model_bytes": "--model-bytes", "allreduce": "--allreduce"}

#: Python-only phrases of library errors -> what to type on the command line.
_PHRASES = {"(or pass allow_overlap=True)": "(or use --layout consecutive)",
            "allow_overlap=True": "--layout consecutive",
            "layout='domain-aware'": "--layout domain-aware", "layout='ruler'": "--layout ruler",
            "layout='consecutive'": "--layout consecutive"}


def flag_names(message: str, names: dict[str, str] | None = None) -> str:
    """Replace library parameter names in ``message`` by the CLI flags."""
    for k, v in _PHRASES.items():
        message = message.replace(k, v)
    names = FLAG_NAMES if names is None else names
    pattern = r"(?<![-\w])(" + "|".join(sorted(names, key=len, reverse=True)) + r")\b"
    return re.sub(pattern, lambda m: names[m.group(1)], message)


def strict(v: Any) -> Any:
    """nan/inf -> None, numpy scalars -> Python, recursively (for strict JSON)."""
    import numpy as np

    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): strict(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [strict(x) for x in v]
    return v


def dump_json(obj: Any) -> str:
    """Strict JSON (``null`` for nan/inf; ``allow_nan=False`` guarantees it)."""
    import json

    return json.dumps(strict(obj), indent=2, allow_nan=False, default=str)


def print_table(rows: list[dict], columns: list[str]) -> None:
    """Right-aligned text table."""
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    print("  ".join(c.rjust(widths[c]) for c in columns))
    for r in rows:
        print("  ".join(str(r.get(c, "")).rjust(widths[c]) for c in columns))


def one_line_warnings() -> None:
    """Show Python warnings as 'spare: warning: <first line>' (no file path, no category)."""
    import warnings

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
             line: Any = None) -> None:
        print(f"spare: warning: {str(message).splitlines()[0]}", file=sys.stderr)

    warnings.showwarning = show


def check_writable(path: str, flag: str = "--out") -> None:
    """CliError unless ``path`` can be created or overwritten (checked before computing)."""
    p = Path(path)
    if p.is_dir():
        raise CliError(f"{flag} {path!r} is a directory, not a file")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise CliError(f"{flag} {path!r}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise CliError(f"{flag} {path!r} cannot be written (permission denied)")


def ensure_kernels(quiet: bool = False) -> None:
    """Compile the simulator kernels in this process first if numba's cache is cold, saying so.

    Compiling once here (~1 min) lets the worker processes load the cache instead of each
    compiling its own copy.
    """
    from spare_lib.cluster.warm import kernels_cached, warm_kernels

    if kernels_cached():
        return
    if not quiet:
        print("spare: compiling the simulator kernels (first run only, ~1-2 min; `make venv` does "
              "this at install) ...", file=sys.stderr, flush=True)
    dt = warm_kernels(("event core",))
    if not quiet:
        print(f"spare: kernels compiled in {dt:.0f} s and cached", file=sys.stderr, flush=True)


def show_progress(args: argparse.Namespace) -> bool:
    """--progress / --no-progress, else: on when stderr is a terminal and not --json."""
    if getattr(args, "progress", None) is not None:
        return bool(args.progress)
    return sys.stderr.isatty() and not getattr(args, "json", False)


def add_progress_flag(p: argparse.ArgumentParser) -> None:
    """--progress / --no-progress (tqdm bars on stderr)."""
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="tqdm progress bars on stderr (default: when stderr is a terminal)")
