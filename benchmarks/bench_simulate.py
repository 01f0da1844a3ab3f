"""Speed of the time-to-train simulator (issue 6 targets; not a timed test).

1. One SPARe+CKPT run, N=1000, r=9, C=30, 10,000 steps on one core: median over repeats
   (target ≤ 1 s; the paper's SimGrid simulator needs minutes), with events per second.
2. The whole Figs. 6–8 sweep (55 (N, r) points × SPARe+CKPT and Rep+CKPT × trials) on a
   2-process pool (target ≤ 3 min for 3 trials).
3. Peak resident memory of this process and its workers (target ≤ 1 GB).

Usage: ``NUMBA_CACHE_DIR=.numba_cache python benchmarks/bench_simulate.py [--repeats 5]
[--trials 3] [--workers 2] [--skip-sweep]``
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from spare_lib.cluster import h100_600k, paper_checkpoint_interval, simulate, simulate_many
from spare_lib.config import PAPER_N
from spare_lib.stacking import max_ruler_r


def single_run(repeats: int) -> None:
    cfg = h100_600k(1000)
    simulate("spare", 1000, 9, 30, h100_600k(1000, steps=50), seed=0)  # JIT / cache load
    times, events = [], []
    for i in range(repeats):
        t = time.perf_counter()
        res = simulate("spare", 1000, 9, 30, cfg, seed=i)
        times.append(time.perf_counter() - t)
        events.append(res.compute_events + res.failures_noticed + res.full_restarts * 1000
                      + res.checkpoints_written)
    med = statistics.median(times)
    print(f"SPARe+CKPT N=1000 r=9 C=30, 10,000 steps: median {med:.3f} s over {repeats} runs "
          f"(min {min(times):.3f}, max {max(times):.3f}); TTT/T0 of the last run "
          f"{res.ttt_over_t0:.3f}")
    print(f"  events per run ≈ {statistics.mean(events):.3g} (group stack computes + failures + "
          f"restart windows + checkpoints) -> {statistics.mean(events) / med:.3g} events/s; "
          f"{res.phase0_events + res.reorder_events + res.full_restarts} RECTLR calls per run")
    rep = []
    for i in range(repeats):
        t = time.perf_counter()
        simulate("rep", 1000, 3, 10, cfg, seed=i)
        rep.append(time.perf_counter() - t)
    print(f"Rep+CKPT N=1000 r=3 C=10: median {statistics.median(rep):.3f} s")


def sweep(trials: int, workers: int) -> None:
    tasks = []
    for N in PAPER_N:
        for r in range(2, max_ruler_r(N) + 1):
            for m in ("spare", "rep"):
                for _ in range(trials):
                    tasks.append({"method": m, "N": N, "r": r, "config": h100_600k(N),
                                  "ckpt_steps": paper_checkpoint_interval(m, N, r)})
    t = time.perf_counter()
    res = simulate_many(tasks, seed=2026, workers=workers)
    dt = time.perf_counter() - t
    ev = sum(x.compute_events + x.failures_noticed for x in res)
    print(f"Figs. 6-8 sweep: {len(tasks)} runs ({len(tasks) // (2 * trials)} points x 2 methods "
          f"x {trials} trials) on {workers} workers: {dt:.1f} s wall, {ev / dt:.3g} events/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-sweep", action="store_true")
    a = ap.parse_args()
    single_run(a.repeats)
    if not a.skip_sweep:
        sweep(a.trials, a.workers)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: this process {own:.0f} MB, largest worker {kids:.0f} MB")


if __name__ == "__main__":
    main()
