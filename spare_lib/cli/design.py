"""``spare design``: from a model, a token budget and a fleet to a plan (issue 27).

Searches group size × method × r × C with the fast models (:func:`spare_lib.design.design_search`)
and prints the best plans (days to train, GPU-hours, goodput, and per plan the group size, N,
method, r and C), the Pareto front of days against GPUs used (``--plot FILE`` draws it) and the
group sizes it skipped and why; ``--simulate K`` confirms the best group size's top plans with
the simulator (common random numbers, the planner's verdict). Every flag is a registry knob
(``docs/knobs.md``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from spare_lib.cli.common import CliError, dump_json, ensure_kernels, flag_names, int_set
from spare_lib.cli.knobs import add_knob_args, knob_given, knob_value

JOB_KNOBS = ("params", "tokens", "gpus", "gpu", "mfu", "tokens_per_step", "seq_tokens",
             "memory_headroom", "storage_bw_bytes_s", "allreduce_bw_bytes_s",
             "allreduce_latency_s", "exposed_allreduce", "restart_s", "gpu_mtbf_s")


#: The scan's knobs (the predictive model's C grid, chain lattice and exact refinement).
SEARCH_KNOBS = ("c_points", "chain_states", "refine")


def add_design_parser(sub: Any) -> None:
    """Register ``spare design``."""
    from spare_lib.cli.plan import _methods_arg

    d = sub.add_parser(
        "design", help="from a model, tokens and a GPU fleet to the best group size, method, r, C",
        description="Search group size x method x r x C for a training job with the fast models "
                    "(the predictive model where it covers a method), print the best plans and "
                    "the Pareto front of days against GPUs used; --simulate K confirms the best "
                    "group size with the simulator. Formulas and sources: docs/design.md.")
    add_knob_args(d, JOB_KNOBS, title="the job and the fleet")
    g = d.add_argument_group("search")
    g.add_argument("--strategies", type=_methods_arg, default=None, metavar="LIST",
                   help="the methods: 'paper' (default), 'all' or a comma list")
    g.add_argument("--group-sizes", dest="group_sizes", type=int_set("--group-sizes"),
                   default=None, metavar="M", help="group sizes to try besides the powers of two")
    add_knob_args(g, ("model", "top") + SEARCH_KNOBS)
    g.add_argument("--simulate", type=int, default=None, metavar="K",
                   help="confirm the best group size's top plans with K simulated trials each")
    g.add_argument("--plot", default=None, metavar="FILE",
                   help="draw the Pareto front (days against GPUs used) into FILE (.pdf/.png)")
    add_knob_args(g, ("seed",))
    d.add_argument("--json", action="store_true", help="print strict JSON")
    d.set_defaults(func=cmd_design)


def job_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~spare_lib.design.JobSpec` of the flags (one-line errors naming the flag)."""
    from spare_lib.design import JobSpec

    for name in ("params", "tokens"):
        if not knob_given(args, name):
            raise CliError(f"--{name} is required (e.g. --params 405e9 --tokens 15.6e12)")
    v = {k: knob_value(args, k) for k in JOB_KNOBS}
    if not knob_given(args, "restart_s"):
        v["restart_s"] = None  # the restart model R(G)
    try:
        job = JobSpec(**v)
    except ValueError as exc:
        raise CliError(flag_names(str(exc))) from None
    if job.min_group_size() > job.gpus // 2:
        raise CliError(f"--params {job.params:g}: the training state ({job.state_bytes / 1e12:.3g} "
                       f"TB at 16 bytes per parameter) needs at least {job.min_group_size():,} GPUs "
                       f"per group at --memory-headroom {job.memory_headroom:g} of "
                       f"{job.device.memory_bytes / 1e9:g} GB, and --gpus {job.gpus:,} holds fewer "
                       "than 2 such groups")
    return job


def _table(rows: list[dict[str, Any]]) -> list[str]:
    from spare_lib.cluster.planning.printing import _table

    return _table(rows)


def design_json(res: Any, sim: Any = None) -> dict[str, Any]:
    """Strict-JSON data of a design search, with ``best`` and ``loss_vs_best`` at the top."""
    import dataclasses

    best = res.best
    plans = res.ranked()
    loss = {p.label + f" M={p.gpus_per_group}": {"loss": p.days / best.days - 1.0,
                                                 "ci_low": None, "ci_high": None,
                                                 "confidence": None, "lower_bound": False,
                                                 "tied": False} for p in plans}
    d = {"schema": "spare-design/1", "job": dataclasses.asdict(res.job),
         "methods": list(res.methods), "model": res.model, "steps": res.job.steps,
         "evaluations": res.evaluations, "searched": res.searched, "search": res.search,
         "skipped": {str(k): v for k, v in res.skipped.items()},
         "plans": [dataclasses.asdict(p) | {"goodput": p.goodput} for p in plans],
         "pareto": [dataclasses.asdict(p) | {"goodput": p.goodput} for p in res.pareto()],
         "best": dataclasses.asdict(best) | {"goodput": best.goodput}, "loss_vs_best": loss}
    if sim is not None:
        d["simulation"] = sim.to_dict()
        d["best"], d["loss_vs_best"] = d["simulation"]["best"], d["simulation"]["loss_vs_best"]
    return d


def cmd_design(args: argparse.Namespace) -> int:
    """Run ``spare design``."""
    from spare_lib.design import confirm, design_search
    from spare_lib.registry.methods import PAPER_METHODS

    job = job_from_args(args)
    if args.simulate is not None and args.simulate < 1:
        raise CliError(f"--simulate must be an integer >= 1, got {args.simulate}")
    if args.plot is not None:
        from spare_lib.cli.common import check_writable

        check_writable(args.plot, "--plot")
    try:
        res = design_search(job, args.strategies or PAPER_METHODS, model=knob_value(args, "model"),
                            extra_sizes=args.group_sizes or (),
                            **{k: knob_value(args, k) for k in SEARCH_KNOBS})
        if not res.plans:
            raise CliError("no group size is valid for this job: "
                           + "; ".join(f"{v}" for v in list(res.skipped.values())[:3]))
        sim = None
        if args.simulate is not None:
            ensure_kernels(quiet=args.json)
            sim = confirm(res, args.simulate, seed=knob_value(args, "seed"), backend="processes")
    except CliError:
        raise
    except ValueError as exc:
        raise CliError(flag_names(str(exc))) from None
    if args.plot is not None:
        from spare_lib.figures.design import make_design_pareto
        from spare_lib.figures.style import save_figure_to

        save_figure_to(make_design_pareto(res), args.plot)
    if args.json:
        print(dump_json(design_json(res, sim)))
        return 0
    top = knob_value(args, "top")
    print(f"Job: {job.params:.3g} parameters, {job.tokens:.3g} tokens in {job.steps:,} steps of "
          f"{job.tokens_per_step:.3g} tokens, on {job.gpus:,} {job.device.name} at MFU "
          f"{job.mfu:g} (peak {job.device.peak_flops / 1e12:g} TFLOP/s, "
          f"{job.device.memory_bytes / 1e9:g} GB); {res.searched:,} configurations searched, "
          f"{res.evaluations:,} evaluated by the model (the rest: C whose checkpoint cost alone "
          "exceeds the best time found)")
    print(f"\nBest plans (model '{res.model}'; days = T0 x TTT/T0; goodput = T0 / TTT):")
    print("\n".join(_table([p.row() for p in res.ranked(top)])))
    print("\nPareto front (fewest days for the GPUs used):")
    print("\n".join(_table([p.row() for p in res.pareto()])))
    for _m, why in sorted(res.skipped.items()):
        print(f"skipped: {why}")
    print("\n" + res.best_line())
    if sim is not None:
        from spare_lib.cluster.planning.printing import verdict_lines

        print("\n".join(verdict_lines(sim)))
    sys.stdout.flush()
    return 0


__all__ = ["JOB_KNOBS", "SEARCH_KNOBS", "add_design_parser", "cmd_design", "design_json",
           "job_from_args"]
