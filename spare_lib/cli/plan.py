"""``spare plan``: closed-form (and optionally simulated) plan for a cluster, ending with one verdict."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from spare_lib.cli.common import (
    CliError,
    add_cluster_args,
    add_layout_args,
    add_progress_flag,
    dump_json,
    ensure_kernels,
    factor_list,
    finite_float,
    flag_names,
    int_set,
    positive_int,
    print_table,
    show_progress,
    spec_from_args,
    steps_arg,
)
from spare_lib.cli.strategies import add_strategies_args, check_strategy_flags, cmd_plan_strategies
from spare_lib.cli.trace import add_failures_args, check_failures_flags, cmd_plan_failures

#: Flags that only act with --simulate (error if given without it).
_SIM_ONLY = ("steps", "spare_r", "rep_r", "spare_window", "checkpoint_factors", "workers",
             "backend", "scheduler", "cache_dir", "min_restarts", "max_wall_t0", "no_ckpt_only",
             "no_common_failures")


def add_plan_parser(sub: Any) -> None:
    """Register ``spare plan``."""
    pl = sub.add_parser(
        "plan", help="recommended method, r and checkpoint period for a cluster",
        description="Joint optimum of the redundancy r and the checkpoint period for SPARe+CKPT, "
                    "Rep+CKPT and CKPT-only from the predictive time-to-train model (default) or "
                    "the closed forms (Eqs. 2, 5, 7, --model), ending with one "
                    "verdict over every method; --simulate N also simulates every candidate N "
                    "times (common random numbers across candidates) and the verdict then comes "
                    "from the simulation, with 95 %% CIs. Defaults: the paper's N = 600 "
                    "configuration of the 600k-H100 cluster. --step-s is compute per stack + "
                    "all-reduce T_a; T_a comes from a ring all-reduce model (--allreduce), m "
                    "from a per-GPU MTBF (m = 5 min at 600k GPUs); N = floor(gpus / "
                    "gpus-per-group), leftover GPUs stay idle. Any N >= 2 "
                    "works: SPARe's r runs up to the largest Golomb ruler that fits N, Rep's up "
                    "to N. Failure domains: --domain-size D groups, --domain-fault-share q of the "
                    "failure events kill a whole domain (SPARe's closed form then uses "
                    "mu_correlated); --layout picks SPARe's layout, --rep-placement Rep's replica "
                    "sets. --failures FILE plans from a real fault log instead: simulations driven "
                    "by the log (--simulate N_TRIALS trials, default 5).")
    add_cluster_args(pl)
    add_layout_args(pl)
    pl.add_argument("--model", choices=("predict", "finite", "paper"), default=None,
                    help="fast model behind the plan: predict (default; theory.predict, the "
                         "time-to-train model that agrees with the simulator, r and C its "
                         "argmins), finite (closed forms, Eqs. 2 and 7 with mu_finite and "
                         "overhead_finite) or paper (the paper's closed forms: mu Gamma form, "
                         "Eq. 5)")
    pl.add_argument("--json", action="store_true", help="print strict JSON (null for missing values)")
    s = pl.add_argument_group("simulation (with --simulate)")
    s.add_argument("--simulate", type=positive_int("--simulate"), default=None, metavar="N_TRIALS",
                   help="also simulate every candidate N_TRIALS times (>= 2 for confidence intervals)")
    s.add_argument("--steps", type=steps_arg, default=None,
                   help="committed steps per run, or 'auto' (default): enough for >= --min-restarts "
                        "expected restarts of the near-best candidates, at least 10000")
    s.add_argument("--spare-r", type=int_set("--spare-r"), default=None, metavar="R",
                   help="SPARe candidates, e.g. 4..12 or 3,5,8 ('none': skip SPARe; default: "
                        "closed-form r* +- --spare-window)")
    s.add_argument("--spare-window", type=positive_int("--spare-window", lo=0), default=None,
                   help="half-width of the default SPARe window around the closed-form r* (3)")
    s.add_argument("--rep-r", type=int_set("--rep-r"), default=None, metavar="R",
                   help="Rep+CKPT candidates, e.g. 2..5 ('none': skip Rep; default 2..5 clipped to N, "
                        "plus the closed-form r)")
    s.add_argument("--no-ckpt-only", action="store_true", help="do not simulate CKPT-only")
    s.add_argument("--checkpoint-factors", type=factor_list, default=None, metavar="F,F,...",
                   help="multipliers of the closed-form checkpoint interval also simulated at the "
                        "best r (default 0.5,0.75,1.5,2; 'none': no search)")
    s.add_argument("--min-restarts", type=positive_int("--min-restarts", lo=0), default=None,
                   help="flag candidates with fewer global restarts per run on average (5)")
    s.add_argument("--max-wall-t0", type=finite_float("--max-wall-t0"), default=None,
                   help="stop a run at this many T0 (50; CKPT-only may never finish)")
    s.add_argument("--no-common-failures", action="store_true",
                   help="independent failure streams per candidate (default: common random numbers)")
    s.add_argument("--workers", type=positive_int("--workers"), default=None,
                   help="simulation processes (default: all cores)")
    s.add_argument("--backend", choices=("processes", "serial", "dask"), default=None,
                   help="where the runs go (default processes)")
    s.add_argument("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
    s.add_argument("--cache-dir", default=None, help="resumable per-run cache (default: none)")
    pl.add_argument("--seed", type=positive_int("--seed", lo=0), default=0, help="root seed (0)")
    add_failures_args(pl)
    add_strategies_args(pl)
    add_progress_flag(pl)
    pl.set_defaults(func=cmd_plan)


def _big(v: float) -> str:
    """TTT/T0 with 3 decimals, or 4 significant digits past 1000 (a method that never finishes)."""
    return f"{v:.3f}" if v < 1000 else f"{v:.4g}"


def _fmt(v: float, nd: int = 3) -> str:
    return "n/a" if v != v else f"{v:.{nd}f}"


def _print_closed(closed: Any) -> None:
    from spare_lib.theory.finite import EXACT_N_MAX

    c = closed.cluster
    extra = []
    if c.idle_gpus:
        extra.append(f"{c.idle_gpus:,} GPUs idle (gpus-per-group does not divide gpus)")
    if c.domain_size > 1 or c.domain_fault_share > 0:
        extra.append(f"failure domains of D = {c.domain_size} groups, q = {c.domain_fault_share:g} "
                     "of failure events are domain events")
    if closed.layout != "ruler" or closed.rep_placement != "consecutive":
        extra.append(f"SPARe layout {closed.layout}, Rep placement {closed.rep_placement}")
    print(f"Cluster: {c.gpus:,} GPUs / {c.gpus_per_group:,} per group -> N = {c.N} groups; "
          f"system MTBF m = {c.system_mtbf_s / 60:.3g} min; restart T_r = {c.restart_s / 60:.3g} min; "
          f"checkpoint T_s = {c.checkpoint_s:.3g} s; step = {c.step_s:.3g} s "
          f"(compute {c.compute_per_stack_s:.3g} s + all-reduce T_a {c.allreduce_s:.3g} s)"
          + "".join(f"; {x}" for x in extra))
    predict = closed.model == "predict"
    what = "Predictive model" if predict else "Closed forms"
    print(f"\n{what}, model '{closed.model}': {closed.model_note};")
    for note in closed.notes:
        print(f"  {note}")
    if predict:
        print(f"  a run of {closed.steps:,} committed steps; mu = mean failures per restart cycle, "
              "T_f = mean uptime per cycle, C = argmin of the model's TTT/T0 per r, T_c = C x "
              "mean step (failure events included)")
    else:
        print("  T_f = mu m, T_c* = T_s + sqrt(T_s^2 + 2 T_s (T_f + T_r)), A* = A(T_c*) (Eq. 2), "
              "TTT/T0 = overhead / A* (Eq. 7)")
    if c.N > EXACT_N_MAX and closed.model == "finite":
        print(f"  N > {EXACT_N_MAX}: r = 2 uses the float closed form of the exact count "
              "(Kaplansky) instead of big-integer sums; r >= 3 the Bethe form as always")
    rows = []
    for p in (closed.spare, closed.rep, closed.ckpt):
        rows.append({"method": p.label, "r": p.r, "mu": f"{p.mu:.1f}",
                     "T_f (h)": f"{p.restart_interval_s / 3600:.2f}", "overhead": f"{p.overhead:.3f}",
                     "T_c* (s)": f"{p.checkpoint_period_s:.0f}", "T_c* (steps)": p.checkpoint_steps,
                     "A*": f"{100 * p.availability:.1f}%", "TTT/T0": _big(p.ttt_over_t0)})
    print_table(rows, list(rows[0]))
    print(f"Paper's formulas (mu Gamma form, Eq. 5) over r = 2..{closed.r_max}: r* = "
          f"{closed.r_star_paper}; floor(log2 N + 0.833) = {closed.r_star_log2}: "
          f"{closed.r_star_note()}.")


def _print_simulated(sp: Any) -> None:
    search = (f"then C = {', '.join(f'{f:g}' for f in sp.checkpoint_factors)} x T_c* steps at the "
              "best r (search 'C')" if sp.checkpoint_factors else "no checkpoint search")
    law = (f"Weibull k = {sp.closed.cluster.weibull_shape:g}"
           if sp.closed.cluster.failure_dist == "weibull" else "exponential")
    crn = "common random numbers across candidates" if sp.crn else "common seeds across candidates"
    print(f"\nSimulation ({sp.trials} trials x {sp.steps:,} steps per run [{sp.steps_note}], {law}; "
          f"every candidate r with checkpoints every T_c* steps (search 'r'), {search}; "
          f"{crn}, seed {sp.seed}; runs capped at {sp.max_wall_t0:g} T0; {sp.elapsed_s:.0f} s):")
    rows = []
    short = "model" if sp.closed.model == "predict" else "closed"
    for q in sp.points:
        unfinished = q.trials - q.completed
        mean = (_fmt(q.ttt_mean) if not unfinished
                else f">= {_fmt(q.ttt_mean, 1)} ({unfinished}/{q.trials} unfinished)")
        rows.append({"method": q.label, "search": "r" if q.stage == 1 else "C", "r": q.r,
                     "C (steps)": q.checkpoint_steps, "TTT/T0 mean": mean, "sd": _fmt(q.ttt_std),
                     "restarts": f"{q.restarts_mean:.1f}",
                     "A mean": f"{100 * q.availability_mean:.1f}%",
                     f"{short} TTT/T0": _big(q.closed_form_ttt),
                     f"{short} A*": f"{100 * q.closed_form_availability:.1f}%"})
    print_table(rows, list(rows[0]))
    print(f"\nPer method, simulation against {sp.closed.source}:")
    for ch in (sp.spare, sp.rep, sp.ckpt):
        if ch.candidates:
            print("  " + ch.describe())
    for w in sp.warnings:
        print(f"Warning: {w}.")


def print_verdicts(closed_v: Any, sim_v: Any = None, disagreements: tuple[str, ...] = ()) -> None:
    """The verdict block that ends ``spare plan``: the simulated one if any, else the closed form's;
    both when they disagree."""
    print()
    if sim_v is None:
        print("\n".join(closed_v.lines()))
        print(f"({closed_v.source} only: --simulate N_TRIALS checks it with the simulator)")
        return
    if disagreements:
        print(f"The {closed_v.source} and the simulation disagree: " + "; ".join(disagreements)
              + ". Both verdicts:")
        print("\n".join(closed_v.lines()))
        print()
    print("\n".join(sim_v.lines()))


def _closed_verdict(closed: Any) -> Any:
    from spare_lib.cluster.verdict import Contender, verdict

    return verdict([Contender(p.method, p.r, p.checkpoint_steps, p.ttt_over_t0)
                    for p in (closed.spare, closed.rep, closed.ckpt)], closed.source)


def cmd_plan(args: argparse.Namespace) -> int:
    """Run ``spare plan``."""
    from spare_lib.cluster.planning import (
        CKPT_FACTORS,
        MAX_WALL_T0,
        PLAN_STEPS,
        SPARE_WINDOW,
        plan,
    )
    from spare_lib.cluster.planning_sim import MIN_RESTARTS, plan_simulated

    check_failures_flags(args)
    check_strategy_flags(args)
    if args.failures is not None:
        return cmd_plan_failures(args)
    if args.strategies is not None:
        return cmd_plan_strategies(args)
    args.model = args.model or "predict"
    if not args.simulate:
        given = [n for n in _SIM_ONLY if getattr(args, n) not in (None, False)]
        if given:
            raise CliError(f"--{given[0].replace('_', '-')} only applies with --simulate N_TRIALS")
    if args.spare_r is not None and args.spare_window is not None:
        raise CliError("--spare-window sets the default SPARe candidates; it cannot be combined "
                       "with --spare-r")
    if args.scheduler is not None and args.backend != "dask":
        raise CliError("--scheduler needs --backend dask")
    t0 = time.perf_counter()
    try:
        spec = spec_from_args(args)
        plan_steps = args.steps if isinstance(args.steps, int) else PLAN_STEPS
        closed = plan(spec, model=args.model, layout=args.layout, rep_placement=args.rep_placement,
                      steps=plan_steps)
        if closed.skipped_r:
            from spare_lib.cluster.planning_layouts import r_ranges

            print(f"spare: warning: --layout domain-aware does not exist for SPARe r = "
                  f"{r_ranges(closed.skipped_r)} at N = {spec.N} with --domain-size "
                  f"{spec.domain_size}; those r are skipped", file=sys.stderr)
        sp = None
        if args.simulate:
            backend = args.backend or "processes"
            if backend != "dask":
                ensure_kernels(quiet=args.json)
            sp = plan_simulated(
                spec, args.simulate, steps=args.steps or "auto", seed=args.seed, model=args.model,
                spare_r=args.spare_r, rep_r=args.rep_r, include_ckpt=not args.no_ckpt_only,
                spare_window=SPARE_WINDOW if args.spare_window is None else args.spare_window,
                max_wall_t0=MAX_WALL_T0 if args.max_wall_t0 is None else args.max_wall_t0,
                checkpoint_factors=(CKPT_FACTORS if args.checkpoint_factors is None
                                    else args.checkpoint_factors),
                backend=backend, client=args.scheduler, workers=args.workers,
                cache_dir=args.cache_dir, progress=show_progress(args),
                min_restarts=MIN_RESTARTS if args.min_restarts is None else args.min_restarts,
                common_failures=not args.no_common_failures, layout=args.layout,
                rep_placement=args.rep_placement)
    except CliError:
        raise
    except ValueError as exc:
        raise CliError(flag_names(str(exc))) from None
    closed_v = _closed_verdict(closed)
    if args.json:
        if sp is not None:
            print(dump_json(sp.to_dict()))
        else:
            d = closed.to_dict()
            v = closed_v.to_dict()
            d.update(verdict=v, best=v["best"], loss_vs_best=v["loss_vs_best"],
                     elapsed_s=time.perf_counter() - t0)
            print(dump_json(d))
        return 0
    _print_closed(sp.closed if sp is not None else closed)
    if sp is not None:
        _print_simulated(sp)
        print_verdicts(sp.closed_verdict, sp.verdict, sp.disagreements)
    else:
        print_verdicts(closed_v)
    return 0
