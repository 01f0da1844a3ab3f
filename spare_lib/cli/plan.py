"""``spare plan``: one planner for every mode, ending with one verdict.

Every flag is a knob of the registry (:mod:`spare_lib.registry.knobs`), and every flag either
acts or is refused in one line: a simulation flag without ``--simulate``, a method's knob when
no requested method reads it (``--microbatches`` without elastic-rebalance), a log's flag
without ``--failures``, or a cluster flag the log replaces. ``--strategies`` (the methods) and
``--failures`` (the failure source) are inputs of the one pipeline
(:func:`spare_lib.cluster.planning.run_plan`), not branches.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from spare_lib.cli.common import (
    LAYOUT_KNOBS,
    RUN_FLAG_KNOBS,
    CliError,
    add_cluster_args,
    add_layout_args,
    add_progress_flag,
    add_strategy_args,
    dump_json,
    ensure_kernels,
    factor_list,
    flag_names,
    int_set,
    positive_int,
    show_progress,
    spec_from_args,
)
from spare_lib.cli.knobs import add_knob_args, add_old_flags, given_flag, knob_given, knob_value
from spare_lib.registry.knobs import KNOBS

#: Knobs that only act with --simulate (the fast model reads none of them: Rep's placement is
#: the same closed form, the seed draws nothing, the log's placement, checkpoint rule and
#: chunks shape only the simulated failures).
SIMULATE_ONLY = ("plan_steps", "max_trials", "spare_r", "rep_r", "r_window", "checkpoint_factors",
                 "min_restarts", "run_cap_t0", "common_failures", "seed", "rep_placement",
                 "failures_placement", "failures_checkpoint", "failures_chunk_s")
#: Execution flags (dest names) that only act with --simulate.
EXECUTION = ("workers", "backend", "scheduler", "cache_dir", "progress")
#: Knobs of a fault log (with --failures only).
TRACE_KNOBS = ("failures_format", "failures_time_unit", "failures_system",
               "failures_gpus_per_node", "failures_n_nodes", "failures_window_s",
               "failures_method", "failures_placement", "failures_law", "failures_tolerance_s",
               "gpus_per_server", "failures_checkpoint", "failures_chunk_s")
#: Knobs a fault log replaces, and why (refused with --failures).
NOT_WITH_FAILURES = {
    "system_mtbf_s": "the log sets the failure rate",
    "gpu_mtbf_s": "the log sets the failure rate",
    "weibull_shape": "the log replaces the Weibull model",
    "failure_dist": "the log replaces the failure law (see --failures-law with --failures-method "
                    "fitted)",
    "domain_size": "a log carries its own simultaneous failures; see --failures-placement",
    "domain_fault_share": "a log carries its own simultaneous failures; see --failures-placement",
    "failure_mix": "the log sets which failures occur (its simultaneous faults are domain "
                   "events; see --failures-placement)",
    "common_failures": "every trial replays the same synthesized failures for every candidate",
}


def _methods_arg(text: str) -> tuple[str, ...]:
    from spare_lib.registry.methods import PAPER_METHODS, check_methods

    if text.strip().lower() == "paper":
        return PAPER_METHODS
    try:
        return check_methods(text.strip().lower() if text.strip().lower() == "all" else text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"--strategies must be 'paper', 'all' or a comma list of distinct method names: "
            f"{str(exc).split(', got')[0].split('must be ')[-1]}; got {text!r}") from None


def _steps_arg(flag: str) -> Any:
    """The converter of ``flag`` (``--plan-steps`` or its old spelling ``--steps``): an
    integer in the range of ``steps``, or 'auto'."""
    def steps(text: str) -> int | str:
        if text.strip().lower() == "auto":
            return "auto"
        return KNOBS["steps"].check(_int(text, flag), name=flag)
    return steps


def _int(text: str, flag: str) -> int:
    try:
        v = float(text)
        if not (math.isfinite(v) and v.is_integer()):
            raise ValueError
        return int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{flag} must be an integer or 'auto', got {text!r}") from None


def _typed(name: str, conv: Any) -> Any:
    def f(text: str) -> Any:
        try:
            return conv(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    f.__name__ = name
    return f


def add_plan_parser(sub: Any) -> None:
    """Register ``spare plan``."""
    pl = sub.add_parser(
        "plan", help="recommended method, r and checkpoint period for a cluster",
        description="Which recovery method, which r and which checkpoint interval for a "
                    "cluster, and what each alternative costs, ending with one verdict. The "
                    "fast model (predictive by default) plans every requested method "
                    "(--strategies: the paper's three by default); --simulate N also simulates "
                    "every candidate N times with common random numbers, and the verdict then "
                    "comes from the simulation with paired intervals. --failures FILE takes "
                    "the failures from a real log. Defaults: the paper's N = 600 configuration "
                    "of the 600k-H100 cluster; every knob and its default: docs/knobs.md.")
    add_cluster_args(pl)
    add_strategy_args(pl)
    add_layout_args(pl)
    g = pl.add_argument_group("methods and search")
    g.add_argument("--strategies", type=_methods_arg, default=None, metavar="LIST",
                   help=f"{KNOBS['strategies'].help} (default paper)")
    g.add_argument("--spare-r", dest="spare_r", type=int_set("--spare-r"), default=None,
                   metavar="R", help=KNOBS["spare_r"].help)
    g.add_argument("--rep-r", dest="rep_r", type=int_set("--rep-r"), default=None, metavar="R",
                   help=KNOBS["rep_r"].help)
    add_knob_args(g, ("r_window",))
    g.add_argument("--checkpoint-factors", dest="checkpoint_factors", type=factor_list,
                   default=None, metavar="F,F,...",
                   help=f"{KNOBS['checkpoint_factors'].help} (default 0.5,0.75,1.5,2)")
    e = pl.add_argument_group("evaluation")
    add_knob_args(e, ("model",))
    e.add_argument("--simulate", type=_typed("simulate", lambda t: KNOBS["simulate"].check(
        _int(t, "--simulate"), name="--simulate")), default=None, metavar="N_TRIALS",
        help=KNOBS["simulate"].help)
    steps = e.add_mutually_exclusive_group()
    steps.add_argument(KNOBS["plan_steps"].cli_flag, dest="plan_steps",
                       type=_steps_arg(KNOBS["plan_steps"].cli_flag), default=None,
                       help=f"{KNOBS['plan_steps'].help} (default auto)")
    add_old_flags(steps, KNOBS["plan_steps"], _steps_arg)
    add_knob_args(e, ("max_trials", "min_restarts", "run_cap_t0", "common_failures", "seed"))
    e.add_argument("--workers", type=positive_int("--workers"), default=None,
                   help="simulation processes (default: all cores)")
    e.add_argument("--backend", choices=("processes", "serial", "dask"), default=None,
                   help="where the runs go (default processes)")
    e.add_argument("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
    e.add_argument("--cache-dir", default=None, help="resumable per-run cache (default: none)")
    t = pl.add_argument_group("real failures (--failures FILE: the failures of the simulations "
                              "come from the log)")
    add_knob_args(t, ("failures",))
    add_knob_args(t, TRACE_KNOBS)
    pl.add_argument("--json", action="store_true", help="print strict JSON (docs/plan.schema.json)")
    add_progress_flag(pl)
    pl.set_defaults(func=cmd_plan)


def _given(args: argparse.Namespace, name: str) -> bool:
    if name in KNOBS:
        return knob_given(args, name)
    return getattr(args, name, None) not in (None, False)


def _flag(args: argparse.Namespace, name: str) -> str:
    return given_flag(args, name) if name in KNOBS else "--" + name.replace("_", "-")


def check_plan_flags(args: argparse.Namespace, methods: tuple[str, ...]) -> None:
    """CliError (one line, naming the flag) for every flag that would not act."""
    from spare_lib.registry.methods import method

    if args.simulate is None:
        for name in SIMULATE_ONLY:
            if _given(args, name):
                raise CliError(f"{_flag(args, name)} only applies with --simulate N_TRIALS")
        for name in EXECUTION:
            if getattr(args, name, None) is not None:
                flag = ("--progress" if args.progress else "--no-progress") \
                    if name == "progress" else _flag(args, name)
                raise CliError(f"{flag} only applies with --simulate N_TRIALS")
    for name in RUN_FLAG_KNOBS + LAYOUT_KNOBS + ("spare_r", "rep_r", "r_window"):
        k = KNOBS[name]
        if k.methods != ("all",) and _given(args, name) and not set(k.methods) & set(methods):
            readers = ", ".join(method(m).name for m in k.methods)
            raise CliError(f"{_flag(args, name)} only applies when --strategies includes "
                           f"{readers}")
    if _given(args, "spare_r") and _given(args, "r_window"):
        raise CliError("--r-window sets the default SPARe candidates; it cannot be combined with "
                       "--spare-r")
    if args.scheduler is not None and args.backend != "dask":
        raise CliError("--scheduler needs --backend dask")
    if args.failures is None:
        for name in TRACE_KNOBS:
            if _given(args, name):
                raise CliError(f"{_flag(args, name)} only applies with --failures FILE")
        return
    for name, why in NOT_WITH_FAILURES.items():
        if _given(args, name):
            raise CliError(f"{_flag(args, name)} does not apply with --failures ({why})")
    if knob_value(args, "layout") == "domain-aware":
        raise CliError("--layout must be ruler or consecutive with --failures, got domain-aware")
    if knob_value(args, "rep_placement") != "consecutive":
        raise CliError("--rep-placement must be consecutive with --failures (trace-driven runs "
                       f"place replica sets consecutively), got {knob_value(args, 'rep_placement')}")
    if args.backend == "dask" or args.cache_dir is not None:
        raise CliError(f"{'--backend dask' if args.backend == 'dask' else '--cache-dir'} does not "
                       "apply with --failures (trace-driven runs go to local processes, uncached)")
    for name in ("failures_law", "failures_tolerance_s"):
        if _given(args, name) and knob_value(args, "failures_method") != "fitted":
            raise CliError(f"{_flag(args, name)} only applies with --failures-method fitted "
                           "(block-bootstrap replays the log's own instants)")


def _trace(args: argparse.Namespace) -> Any:
    from spare_lib.cli.trace import load_from_args
    from spare_lib.cluster.planning import TraceFailures

    tr = load_from_args(args.failures, args, "failures-", flag="--failures")
    return TraceFailures(
        tr, name=args.failures, method=knob_value(args, "failures_method"),
        law=knob_value(args, "failures_law"), placement=knob_value(args, "failures_placement"),
        gpus_per_server=knob_value(args, "gpus_per_server"),
        tolerance_s=knob_value(args, "failures_tolerance_s"),
        chunk_s=knob_value(args, "failures_chunk_s"),
        checkpoint_rule=knob_value(args, "failures_checkpoint"),
        gpus_per_node_given=_given(args, "failures_gpus_per_node") or tr.gpus_per_node is not None
        and tr.label in ("stepfun", "titan"))


def request_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~spare_lib.cluster.planning.PlanRequest` of ``spare plan``'s flags."""
    from spare_lib.cluster.planning import CKPT_FACTORS, PlanRequest
    from spare_lib.registry.methods import PAPER_METHODS

    methods = args.strategies or PAPER_METHODS
    check_plan_flags(args, methods)
    spec = spec_from_args(args)
    fs = CKPT_FACTORS if args.checkpoint_factors is None else args.checkpoint_factors
    return PlanRequest(
        spec=spec, methods=methods, trace=None if args.failures is None else _trace(args),
        spare_r=args.spare_r, rep_r=args.rep_r, r_window=knob_value(args, "r_window"),
        checkpoint_factors=tuple(fs), layout=knob_value(args, "layout"),
        rep_placement=knob_value(args, "rep_placement"), model=knob_value(args, "model"),
        trials=args.simulate, max_trials=knob_value(args, "max_trials"),
        steps=knob_value(args, "plan_steps"),
        min_restarts=knob_value(args, "min_restarts"), run_cap_t0=knob_value(args, "run_cap_t0"),
        common_failures=knob_value(args, "common_failures"), seed=knob_value(args, "seed"),
        backend=args.backend or "processes", workers=args.workers, client=args.scheduler,
        cache_dir=args.cache_dir, progress=show_progress(args))


def cmd_plan(args: argparse.Namespace) -> int:
    """Run ``spare plan``."""
    from spare_lib.cluster.planning import run_plan
    from spare_lib.cluster.planning.printing import plan_lines

    try:
        req = request_from_args(args)
        if req.trials is not None and req.backend != "dask":
            ensure_kernels(quiet=args.json)
        res = run_plan(req)
    except CliError:
        raise
    except ValueError as exc:
        raise CliError(flag_names(str(exc))) from None
    if args.json:
        print(dump_json(res.to_dict()))
        return 0
    print("\n".join(plan_lines(res)))
    sys.stdout.flush()
    return 0


__all__ = ["NOT_WITH_FAILURES", "SIMULATE_ONLY", "TRACE_KNOBS", "add_plan_parser",
           "check_plan_flags", "cmd_plan", "request_from_args"]
