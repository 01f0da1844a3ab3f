"""Speed of the time-to-train simulator (issue 6 targets; not a timed test).

1. One SPARe+CKPT run, N=1000, r=9, C=30, 10,000 steps on one core: median over repeats
   (target ≤ 1 s; the paper's SimGrid simulator needs minutes), with events per second.
2. The whole Figs. 6–8 sweep (55 (N, r) points × SPARe+CKPT and Rep+CKPT × trials) on a
   2-process pool (target ≤ 3 min for 3 trials).
3. Peak resident memory of this process and its workers (target ≤ 1 GB).
4. ``--seam``: today's ``simulate`` (the core with methods behind hooks) against the core
   before the method seam (``_core_before_seam.py``), N=1000, r=9, 10,000 steps, interleaved
   repeats in one run (issue 11 target: at most 10 % slower), with a check that both give
   identical outputs.
5. ``--events``: the event log (``simulate(..., events=True)``) off against on, interleaved.

Usage: ``NUMBA_CACHE_DIR=.numba_cache python benchmarks/bench_simulate.py [--repeats 5]
[--trials 3] [--workers 2] [--skip-sweep] [--seam] [--events]``
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


def seam(repeats: int) -> None:
    """Old (pre-seam) and new core, same inputs, interleaved; median time ratio new / old."""
    import _core_before_seam as old
    import numpy as np

    from spare_lib.cluster import core
    from spare_lib.stacking import ruler_layout

    N, r, C = 1000, 9, 30
    cfg = h100_600k(N)
    base = np.array(ruler_layout(N, r).stacks, dtype=np.int64, order="C")
    args = (cfg.steps, C, cfg.compute_per_stack_s, cfg.jitter_sigma, cfg.jitter_min,
            cfg.allreduce_s, cfg.allreduce_fail_factor, cfg.restart_s, cfg.stall_s,
            cfg.checkpoint_s)
    fail = (0, cfg.weibull_shape, cfg.weibull_scale_s(N), np.zeros(N + 1, np.int64),
            np.zeros(0, np.float64))

    def run_old(seed: int) -> tuple:
        fo, io, pr = np.zeros(6), np.zeros(13, np.int64), np.zeros(core.MAX_RESTART_RECORDS, np.int64)
        old._core(True, base, np.zeros(N, np.int64), 1, float(r), args[0], args[1], False,
                  *args[2:], *fail, np.random.default_rng(seed), 1e12, fo, io, pr)
        return fo, io

    def run_new(seed: int) -> tuple:
        res = simulate("spare", N, r, C, cfg, seed=seed)
        return (np.array([res.total_s, res.restart_s, res.stall_s, res.checkpoint_s]),
                np.array([res.commits, res.full_restarts, res.masked_failures, res.phase0_events,
                          res.reorder_events, res.steps_redone, res.attempts, res.compute_events]))

    def old_view(fo: np.ndarray, io: np.ndarray) -> tuple:
        return fo[[0, 1, 2, 5]], io[[0, 1, 2, 3, 4, 5, 11, 12]]

    for f in (run_old, run_new):  # JIT / cache load
        f(0)
    t_old, t_new = [], []
    for i in range(repeats):
        pair = ((run_old, t_old), (run_new, t_new))
        for f, acc in (pair if i % 2 == 0 else pair[::-1]):  # alternate who runs first
            t = time.perf_counter()
            f(100 + i)
            acc.append(time.perf_counter() - t)
        a, b = old_view(*run_old(100 + i)), run_new(100 + i)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), "old and new cores differ"
    mo, mn = statistics.median(t_old), statistics.median(t_new)
    print(f"seam: N=1000 r=9 10,000 steps, median old {mo:.3f} s, new {mn:.3f} s over {repeats} "
          f"interleaved repeats: new/old = {mn / mo:.3f} (target <= 1.10; min/min "
          f"{min(t_new) / min(t_old):.3f}); outputs identical")


def event_log(repeats: int) -> None:
    """``events=False`` against ``events=True`` (issue 28 log), same inputs, interleaved; and
    the paper world against the llama3 mix, to see what the new world costs."""
    cases = [("spare", 1000, 9, 30, "direct"), ("rep", 1000, 3, 10, "direct"),
             ("spare", 20_000, 11, 30, "sampled")]
    for method, N, r, C, barrier in cases:
        cfg = h100_600k(N) if N <= 1000 else h100_600k(N, steps=2000)
        simulate(method, N, r, C, h100_600k(N, steps=50), seed=0, barrier=barrier, events=True)
        t_off, t_on = [], []
        for i in range(repeats):
            pair = ((False, t_off), (True, t_on))
            for ev, acc in (pair if i % 2 == 0 else pair[::-1]):
                t = time.perf_counter()
                res = simulate(method, N, r, C, cfg, seed=100 + i, barrier=barrier, events=ev)
                acc.append(time.perf_counter() - t)
        n_ev = len(res.events) if res.events is not None else 0
        print(f"event log {method} N={N} r={r} ({barrier}, {cfg.steps} steps): median off "
              f"{statistics.median(t_off):.3f} s, on {statistics.median(t_on):.3f} s over "
              f"{repeats} interleaved repeats: on/off = "
              f"{statistics.median(t_on) / statistics.median(t_off):.3f} ({n_ev} events)")


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
    ap.add_argument("--seam", action="store_true", help="old core against new core, then exit")
    ap.add_argument("--events", action="store_true", help="event log off against on, then exit")
    a = ap.parse_args()
    if a.events:
        event_log(max(a.repeats, 5))
        return
    if a.seam:
        seam(max(a.repeats, 7))
        return
    single_run(a.repeats)
    if not a.skip_sweep:
        sweep(a.trials, a.workers)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: this process {own:.0f} MB, largest worker {kids:.0f} MB")


if __name__ == "__main__":
    main()
