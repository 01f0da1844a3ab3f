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

from spare_lib.cli.knobs import add_knob_args, given_flag, knob_given, knob_value, knob_values
from spare_lib.registry.knobs import KNOBS


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


#: Knobs of the cluster flags every command shares (``plan``, ``simulate``, ``design``).
CLUSTER_KNOBS = ("gpus", "gpus_per_group", "gpu_mtbf_s", "system_mtbf_s", "restart_s",
                 "checkpoint_s", "step_s", "allreduce_s", "allreduce", "model_bytes",
                 "weibull_shape", "failure_dist", "domain_size", "domain_fault_share")
#: Knobs of what the strategies pay and do, shared by ``plan`` and ``simulate``.
STRATEGY_KNOBS = ("stall_s", "rejoin_s", "rejoin_clock", "rejoin_stall_s", "microbatches",
                  "fetch_s")
#: Knobs of the failure world every method faces (issue 24), shared by ``plan`` and ``simulate``.
WORLD_KNOBS = ("failure_mix", "detect_s", "jitter_model", "straggler_share", "straggler_slowdown",
               "allreduce_rule", "min_live")
#: Every run knob a command with the strategy flags passes to the cluster.
RUN_FLAG_KNOBS = STRATEGY_KNOBS + WORLD_KNOBS
#: SPARe's and Rep's layout knobs.
LAYOUT_KNOBS = ("layout", "rep_placement")


def add_cluster_args(p: argparse.ArgumentParser, *, n_flag: bool = False) -> None:
    """The cluster flags, the same for every command, generated from the knob registry
    (:data:`CLUSTER_KNOBS`; ``--N`` instead of ``--gpus-per-group`` with ``n_flag``). Read back
    with :func:`spec_from_args`."""
    g = p.add_argument_group("cluster (defaults: the paper's 600k-H100 cluster at N = 600)")
    add_knob_args(g, ("gpus",))
    size = g.add_mutually_exclusive_group() if n_flag else g
    add_knob_args(size, ("gpus_per_group",))
    if n_flag:
        size.add_argument("--N", type=positive_int("--N", lo=1), default=None,
                          help="data-parallel groups instead of --gpus-per-group (must divide --gpus)")
    add_knob_args(g, CLUSTER_KNOBS[2:])


def add_strategy_args(p: argparse.ArgumentParser) -> None:
    """What the recovery strategies pay and do (:data:`STRATEGY_KNOBS`)."""
    add_knob_args(p, STRATEGY_KNOBS, title="what the strategies pay (every method that continues "
                                           "past a failure pays the stall)")
    add_knob_args(p, WORLD_KNOBS, title="the failure world every method faces (defaults: the "
                                        "paper's; docs/failure_mix.md)")


def add_layout_args(p: argparse.ArgumentParser) -> None:
    """--layout (SPARe's) and --rep-placement (Rep's), the same for ``plan`` and ``simulate``."""
    add_knob_args(p, LAYOUT_KNOBS)


def spec_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~spare_lib.cluster.planning.ClusterSpec` of the cluster flags."""
    from spare_lib.cluster.planning import cluster_spec

    v = knob_values(args, CLUSTER_KNOBS)
    if v["failure_dist"] == "exponential" and knob_given(args, "weibull_shape"):
        raise CliError("--weibull-shape does not apply with --failure-dist exponential")
    if knob_given(args, "gpu_mtbf_s") and knob_given(args, "system_mtbf_s"):
        raise CliError(f"{given_flag(args, 'system_mtbf_s')}: not allowed with "
                       f"{given_flag(args, 'gpu_mtbf_s')} (give the system MTBF or the per-GPU one)")
    n = getattr(args, "N", None)
    if n is not None:
        if n < 2 or v["gpus"] % n:
            raise CliError(f"--N must be >= 2 and divide --gpus = {v['gpus']}, got {n}")
        v["gpus_per_group"] = v["gpus"] // n
    if knob_given(args, "system_mtbf_s"):
        v["gpu_mtbf_s"] = None  # m is given: no per-GPU MTBF
    else:
        v["system_mtbf_s"] = None  # derived from the per-GPU MTBF
    if not knob_given(args, "allreduce_s"):
        v["allreduce_s"] = None  # derived from --allreduce
    if not knob_given(args, "checkpoint_s"):
        v["checkpoint_s"] = None  # T_s = --model-bytes / the checkpoint bandwidth
    if hasattr(args, "stall_s"):  # the commands with the strategy flags: their run knobs
        v.update(knob_values(args, RUN_FLAG_KNOBS, given_only=True))
    for name in ("straggler_share", "straggler_slowdown"):
        if knob_given(args, name) and knob_value(args, "jitter_model") != "straggler":
            raise CliError(f"{given_flag(args, name)} only applies with --jitter-model straggler")
    return cluster_spec(**v)


def run_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The ClusterConfig fields of :data:`RUN_FLAG_KNOBS` (registry defaults where not given)."""
    return knob_values(args, RUN_FLAG_KNOBS)


#: Library parameter names -> the flags, so errors name what the user typed.
FLAG_NAMES = {**{k.name: k.cli_flag for k in KNOBS.values()},
              "steps": "--steps", "trials": "--simulate", "seed": "--seed",
              "checkpoint_factors": "--checkpoint-factors", "spare_r": "--spare-r",
              "rep_r": "--rep-r", "spare_window": "--spare-window", "max_wall_t0": "--max-wall-t0",
              "min_restarts": "--min-restarts", "ckpt_steps": "--ckpt-steps"}

#: Python-only phrases of library errors -> what to type on the command line.
_PHRASES = {"(or pass allow_overlap=True)": "(or use --layout consecutive)",
            "allow_overlap=True": "--layout consecutive",
            "layout='domain-aware'": "--layout domain-aware", "layout='ruler'": "--layout ruler",
            "layout='consecutive'": "--layout consecutive"}


#: What follows a parameter's name in a library message ("steps must be ...", "r=3", "N >= 2").
_AS_PARAMETER = re.compile(r"\s*(?:must\b|=(?!=)|>=|<=|[<>≥≤])")
#: A word before a name that makes it prose ("the model has ...", "a seed").
_PROSE_BEFORE = re.compile(r"\b(?:the|a|an|this|that|its|each|every|per|no|one)\s+$", re.I)


def flag_names(message: str, names: dict[str, str] | None = None) -> str:
    """Replace library parameter names in ``message`` by the CLI flags.

    A name with an underscore (``domain_fault_share``) is a parameter wherever it occurs; a plain
    word that is also a knob's name (``model``, ``steps``, ``seed``, ``N``) only where the
    message uses it as one: followed by "must", "=" or a comparison, not after an article, or
    written ``config.<name>``. A ``config.`` / ``cfg.`` prefix is dropped (the flag names it).
    """
    for k, v in _PHRASES.items():
        message = message.replace(k, v)
    names = FLAG_NAMES if names is None else names
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pattern = re.compile(r"(?<![-\w.])((?:config|cfg)\.)?(" + alt + r")\b(?![-.]\w)")

    def replace(m: re.Match) -> str:
        name = m.group(2)
        if ("_" in name or m.group(1) or _AS_PARAMETER.match(message, m.end())
                and not _PROSE_BEFORE.search(message, 0, m.start())):
            return names[name]
        return m.group(0)

    return pattern.sub(replace, message)


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
