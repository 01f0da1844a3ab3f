"""Which jitter model reproduces the paper's main table (SPEC §8)? Not a speed benchmark.

For N = 200, 600, 1000 (600k GPUs), SPARe+CKPT at the paper's r* and Rep+CKPT at r = 3 with the
paper's checkpoint intervals, 10,000 steps, under jitter_model = paper, unit, step: mean TTT/T0 and
availability against the paper's table, and the paired difference to 'paper' (the same failure
stream and seed per trial: common random numbers) with a Student-t 95 % interval.

Usage: ``python benchmarks/jitter_models_main_table.py [--trials 3] [--workers 2]``
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from scipy import stats

from spare_lib.cluster import PAPER_MAIN_TABLE, h100_600k, paper_checkpoint_interval, simulate_many

MODELS = ("paper", "unit", "step")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    tasks, keys = [], []
    for N, paper in PAPER_MAIN_TABLE.items():
        for method, r in (("spare", paper["spare_r"]), ("rep", 3)):
            for model in MODELS:
                for t in range(a.trials):
                    tasks.append({"method": method, "N": N, "r": r,
                                  "config": h100_600k(N, jitter_model=model),
                                  "ckpt_steps": paper_checkpoint_interval(method, N, r),
                                  "failure_seed": 1000 + t})
                    keys.append((N, method, model, t))
    # trial t of every model sees the same failure gaps (failure_seed); the jitter draws differ
    res = simulate_many(tasks, seed=2026, workers=a.workers)
    by = {k: x for k, x in zip(keys, res, strict=True)}
    print(f"{'N':>5} {'method':6} {'model':6} {'TTT/T0':>8} {'paper':>6} {'avail':>7} {'paper':>7}"
          f"   diff to 'paper' TTT/T0 (95% t)")
    for N, paper in PAPER_MAIN_TABLE.items():
        for method in ("spare", "rep"):
            ref = [by[(N, method, "paper", t)].ttt_over_t0 for t in range(a.trials)]
            for model in MODELS:
                xs = [by[(N, method, model, t)] for t in range(a.trials)]
                ttt = statistics.fmean(x.ttt_over_t0 for x in xs)
                av = statistics.fmean(x.availability for x in xs)
                d = np.array([x.ttt_over_t0 for x in xs]) - np.array(ref)
                half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)) \
                    if len(d) > 1 else float("nan")
                key = "spare" if method == "spare" else "rep"
                print(f"{N:5d} {method:6} {model:6} {ttt:8.3f} {paper[key + '_ttt']:6.2f} "
                      f"{100 * av:6.2f}% {100 * paper[key + '_avail']:6.2f}%   "
                      f"{d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}]")


if __name__ == "__main__":
    main()
