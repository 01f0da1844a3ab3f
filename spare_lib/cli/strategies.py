"""``spare plan --strategies``: SPARe against the recovery strategies teams use (issue 13).

Simulates every requested strategy (SPARe+CKPT, Rep+CKPT, CKPT-only, SPARe+repair,
elastic-drop, elastic-rebalance) on the cluster of the shared flags with common random numbers
(the same failure gaps for every strategy and r of a trial), and recommends one, with paired
95 % bootstrap CIs on the gain of the best over each other and a note when requiring exact
training (no dropped samples) changes the answer. The model is in docs/strategies.md.
"""

from __future__ import annotations

import argparse
import math
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

#: The strategies of ``--strategies all`` (spare_lib.cluster.strategies.STRATEGIES; kept here so
#: the parser loads fast, a test checks they agree).
STRATEGY_NAMES = ("spare", "rep", "ckpt", "spare+repair", "elastic-drop", "elastic-rebalance")
DEFAULT_TRIALS = 3
#: Flags that act only with --strategies.
STRATEGY_ONLY = ("stall_s", "rejoin_min", "rejoin_stall_s", "microbatches", "fetch_s",
                 "strategy_window")


def strategy_list(text: str) -> tuple[str, ...]:
    """``--strategies``: 'all' or a comma-separated subset of :data:`STRATEGY_NAMES`."""
    if text.strip().lower() == "all":
        return STRATEGY_NAMES
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    bad = [s for s in names if s not in STRATEGY_NAMES]
    if not names or bad or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"--strategies must be 'all' or distinct names from {', '.join(STRATEGY_NAMES)}, "
            f"got {text!r}")
    return names


def add_strategies_args(pl: argparse.ArgumentParser) -> None:
    """The ``--strategies`` flags of ``spare plan``."""
    g = pl.add_argument_group("recovery strategies (with --strategies)")
    g.add_argument("--strategies", type=strategy_list, default=None, metavar="LIST",
                   help="simulate these strategies and recommend one: 'all' or a comma list of "
                        f"{', '.join(STRATEGY_NAMES)} (trials: --simulate, default "
                        f"{DEFAULT_TRIALS})")
    g.add_argument("--stall-s", type=finite_float("--stall-s", allow_zero=True), default=None,
                   help="stall per reconfiguration, paid by every method that continues past a "
                        "failure (default 0.1 s, the paper's shrink; FT-HSDP measured minutes)")
    g.add_argument("--rejoin-min", type=finite_float("--rejoin-min"), default=None,
                   help="time until a failed group rejoins (SPARe+repair, elastic), minutes "
                        "(default 10)")
    g.add_argument("--rejoin-stall-s", type=finite_float("--rejoin-stall-s", allow_zero=True),
                   default=None, help="stall per batch of rejoining groups (default: --stall-s; 0 "
                                      "= non-blocking catch-up as in FT-HSDP)")
    g.add_argument("--microbatches", type=positive_int("--microbatches"), default=None,
                   help="micro-batches per shard b of elastic-rebalance (default 1)")
    g.add_argument("--fetch-s", type=finite_float("--fetch-s", allow_zero=True), default=None,
                   help="elastic-rebalance's data fetch after its assignment changes (default 0)")
    g.add_argument("--strategy-window", type=positive_int("--strategy-window", lo=0), default=None,
                   help="half-width of the r search around the closed-form optimum (default 1)")


def check_strategy_flags(args: argparse.Namespace) -> None:
    """One-line errors for strategy flags given without --strategies, and conflicts."""
    if args.strategies is None:
        given = [n for n in STRATEGY_ONLY if getattr(args, n, None) is not None]
        if given:
            raise CliError(f"--{given[0].replace('_', '-')} only applies with --strategies")
        return
    if getattr(args, "failures", None) is not None:
        raise CliError("--strategies and --failures cannot be combined (plan with a trace is "
                       "for SPARe+CKPT, Rep+CKPT and CKPT-only)")


def _row(c: Any, gain: tuple[float, float, float] | None, recommended: bool) -> dict[str, str]:
    r = c.row()
    g = "recommended" if recommended else (
        "n/a" if gain is None or math.isnan(gain[0]) else
        f"{100 * gain[0]:+.1f} % [{100 * gain[1]:+.1f}, {100 * gain[2]:+.1f}]")
    ttt = f"{r['ttt_over_t0']:.3f}" + ("" if r["finished"] else " (cap)")
    return {"strategy": c.label, "r": str(c.r), "C": str(c.checkpoint_steps), "TTT/T0": ttt,
            "A": f"{100 * r['availability']:.1f}%", "overhead": f"{r['overhead']:.2f}",
            "dropped": f"{100 * r['dropped_sample_fraction']:.2f}%",
            "restarts": f"{r['full_restarts']:.1f}", "gain of the recommended": g}


def cmd_plan_strategies(args: argparse.Namespace) -> int:
    """Run ``spare plan --strategies``."""
    from spare_lib.cluster.strategies import plan_strategies

    trials = DEFAULT_TRIALS if args.simulate is None else args.simulate
    steps = None if args.steps in (None, "auto") else args.steps
    rejoin_s = 600.0 if args.rejoin_min is None else 60.0 * args.rejoin_min
    try:
        spec = spec_from_args(args)
        ensure_kernels(quiet=args.json)
        sp = plan_strategies(
            spec, strategies=args.strategies, trials=trials, steps=steps, seed=args.seed,
            workers=args.workers or 2, stall_s=args.stall_s, rejoin_s=rejoin_s,
            rejoin_stall_s=args.rejoin_stall_s, microbatches=args.microbatches,
            fetch_s=args.fetch_s, window=1 if args.strategy_window is None else args.strategy_window,
            model=args.model or "finite", progress=show_progress(args))
    except ValueError as exc:
        raise CliError(flag_names(str(exc))) from None
    if args.json:
        d = sp.to_dict()
        d["best_per_strategy"] = d.pop("best")
        d["best"] = sp.recommended  # the recommendation, as in every `spare plan --json`
        print(dump_json(d))
        return 0
    c = sp.config
    rejoin_stall = c.stall_s if c.rejoin_stall_s is None else c.rejoin_stall_s
    print(f"Strategies on N = {sp.N} groups ({trials} trials x {sp.steps:,} steps, common random "
          f"numbers; stall {c.stall_s:g} s per failure event and {rejoin_stall:g} s per rejoin, "
          f"rejoin after {c.rejoin_s / 60:g} min, b = {c.microbatches}, fetch {c.fetch_s:g} s; "
          f"{sp.elapsed_s:.0f} s):")
    rows = [_row(sp.best[s], sp.gains.get(s), s == sp.recommended) for s in sp.strategies]
    print_table(rows, list(rows[0]))
    print("gain of the recommended = 1 - its TTT/T0 / the strategy's, paired bootstrap 95 % CI")
    for note in sp.notes:
        print(f"Note: {note}.")
    print(sp.statement())
    if "spare" in sp.strategies and sp.recommended != "spare":
        g, lo, hi = sp.gains["spare"]
        print(f"SPARe+CKPT is not the best choice here: {sp.best[sp.recommended].label} is "
              f"{100 * g:.1f} % faster [{100 * lo:.1f}, {100 * hi:.1f}].")
    return 0
