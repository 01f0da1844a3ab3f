"""Speed of the predictive model in a design search (issue 27: ≥ 10⁵ evaluations/s, a default
search of ≥ 10⁴ configurations in ≤ 10 s).

A design search splits a fleet into N data-parallel groups and, per group size, evaluates every
method × r × C. The grid here: the paper's 600k-GPU fleet (:func:`spare_lib.cluster.h100_600k`:
64 s per shard whatever the group size, T_a = N/100 s, m = 5 min, Weibull k = 0.78, T_r = 60
min) with failed groups rejoining after 10 min, 30 s stalls, b = 8; N ∈ {100, 150, 200, 300,
400, 600, 1000, 2000}; every method (SPARe+CKPT and SPARe+repair at r = 2..min(16, largest
ruler r) and 2..8, Rep+CKPT at r = 2..10, CKPT-only, elastic-drop, elastic-rebalance at r = 1);
``--c-points`` checkpoint intervals geometric in [1, steps], 10,000 steps. One evaluation is one
(group size, method, r, C): TTT/T0 from :func:`~spare_lib.theory.predict.predict_batch`.

It times, each the median of ``--repeat`` interleaved runs:

* **cold** — every memo cleared (:func:`~spare_lib.theory.predict.clear_caches`): the failure
  laws' curves, the cycles of every (method, N, r) and their arrays packed for the kernel, then
  the chain for every C (the search a user runs once per job);
* **warm** — the same grid again, the cycles and their packed arrays cached: only the chain over
  the checkpoint lattice for every C, from the block sums of
  :mod:`~spare_lib.theory.predict.blocks` (a second search over C on clusters already seen);
* **warm, coarse chain** — the same with the chain on 64 states instead of 512 (TTT/T0 within
  the printed tolerance of the exact chain; the best plan per method is compared);
* **chain states** — the warm search again with the chain on 128, 32, 16 and 8 states: the rate
  against the gap of each (group size, method)'s best plan to the exact chain's (where the time
  goes: the chain's deposits cost O(states² × laws) per C, the walk along each law's τ grid
  O(grid points); from 64 states down the walk dominates);
* **parts** — the kernel alone on the grid's packed arrays, stopped after each law's progress
  V(τ), after its block sums (``law_blocks``) and in full (the chain), at 512, 64, 16 and 8 states:
  microseconds per evaluation of each part;
* **spare design** — the default search of ``spare design`` (:func:`spare_lib.design.design_search`,
  the paper's three methods, every valid power-of-two group size and fleet share, the pruned C
  scan and the exact re-optimisation of the top plans) for the Llama-3-405B-like job on 16,384
  H100, every memo cleared first: configurations covered, evaluated, CPU seconds and the best
  plan, on the search's default chain and on 8 states (``--chain-states 8``).

The first call in a process also loads (or compiles, on a fresh clone) the numba kernels:
timed once and printed, not counted. The machine is shared: wall and CPU time are printed with
the load average, the verdict is on CPU time (one core's worth) and says which targets are met;
nothing is asserted.

Usage: ``python benchmarks/bench_design.py [--repeat 3] [--c-points 48]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from spare_lib.cluster import h100_600k
from spare_lib.stacking.layout import max_ruler_r
from spare_lib.theory.predict import METHODS, clear_caches, predict_batch
from spare_lib.theory.predict.batch import _batch_kernel, _valid_r
from spare_lib.theory.predict.curves import _Cfg, _cfg_key
from spare_lib.theory.predict.model import MECHANISMS, REJOIN_METHODS
from spare_lib.theory.predict.packed import packed_laws
from spare_lib.theory.predict.rejoin_model import rejoin_key

GROUPS = (100, 150, 200, 300, 400, 600, 1000, 2000)
STEPS = 10_000
TARGET_RATE = 1e5
TARGET_SEARCH_S, TARGET_SEARCH_N = 10.0, 10_000


def design_grid(c_points: int) -> list[tuple[int, object, dict[str, list[int]], list[int]]]:
    """(N, config, r values per method, C values) of every group size."""
    Cs = [int(c) for c in np.unique(np.round(np.geomspace(1, STEPS, c_points)).astype(int))]
    out = []
    for N in GROUPS:
        cfg = h100_600k(N, steps=STEPS, rejoin_s=600.0, stall_s=30.0, microbatches=8)
        r_hi = max_ruler_r(N)
        rs = {"spare": list(range(2, min(16, r_hi) + 1)), "rep": list(range(2, 11)),
              "ckpt": [1], "spare+repair": list(range(2, min(8, r_hi) + 1)),
              "elastic-drop": [1], "elastic-rebalance": [1]}
        out.append((N, cfg, rs, Cs))
    return out


def run_search(grid, max_states: int = 512) -> tuple[int, dict]:  # noqa: ANN001 - the grid
    """Evaluate the whole grid; (evaluations, {(N, method): (r, C, TTT/T0) of the best})."""
    n, best = 0, {}
    for N, cfg, rs, Cs in grid:
        for method in METHODS:
            out = predict_batch((method,), N, rs[method], Cs, cfg, max_states=max_states)[method]
            n += out.ttt_over_t0.size
            best[(N, method)] = out.best()
    return n, best


def time_parts(grid, repeat: int) -> None:  # noqa: ANN001 - the grid
    """Microseconds per evaluation of the kernel's parts (module docstring), CPU time."""
    calls = []
    for N, cfg, rs, Cs in grid:
        key, rcfg = _cfg_key(cfg), rejoin_key(cfg)
        ckpt_s, C_arr = float(_Cfg(key).checkpoint_s), np.asarray(Cs, dtype=np.int64)
        for method in METHODS:
            for r in _valid_r(method, N, rs[method], "ruler"):
                arrays = packed_laws(method, N, r, key, rcfg if method in REJOIN_METHODS else (),
                                     STEPS, "ruler", 0.0, 0.0, MECHANISMS)
                if arrays is not None:
                    calls.append((arrays, ckpt_s, C_arr))
    n = sum(c[2].size for c in calls)
    res = np.empty((3, max(c[2].size for c in calls)))
    for ms in (512, 64, 16, 8):
        us = []
        for stages in (1, 2, 3):
            ts = []
            for _ in range(repeat):
                t = time.process_time()
                for arrays, ckpt_s, Cs in calls:
                    _batch_kernel(*arrays, ckpt_s, Cs, STEPS, ms, res, stages)
                ts.append(time.process_time() - t)
            us.append(1e6 * statistics.median(ts) / n)
        print(f"parts on {ms:3d} states, us per evaluation: progress {us[0]:.1f}, block sums "
              f"{us[1] - us[0]:.1f}, chain {us[2] - us[1]:.1f} (kernel {us[2]:.1f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--c-points", type=int, default=48)
    args = ap.parse_args()
    grid = design_grid(args.c_points)
    t = time.perf_counter()
    predict_batch(("spare", "elastic-drop"), 100, [3], [10], h100_600k(100, rejoin_s=600.0))
    print(f"first call (numba kernels loaded or compiled, tables built): "
          f"{time.perf_counter() - t:.2f} s")
    kinds = ("cold", "warm", "warm, coarse chain")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    cpu: dict[str, list[float]] = {k: [] for k in kinds}
    n_eval, best_exact, best_coarse = 0, {}, {}

    def timed(kind: str, f, *a, **kw):  # noqa: ANN001, ANN202 - callable
        t, c = time.perf_counter(), time.process_time()
        out = f(*a, **kw)
        times[kind].append(time.perf_counter() - t)
        cpu[kind].append(time.process_time() - c)
        return out

    for _ in range(args.repeat):
        clear_caches()
        n_eval, best_exact = timed("cold", run_search, grid)
        timed("warm", run_search, grid)
        _, best_coarse = timed("warm, coarse chain", run_search, grid, max_states=64)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"design grid: {len(GROUPS)} group sizes x {len(METHODS)} methods x r x "
          f"{len(grid[0][3])} C = {n_eval} evaluations; load average {load:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"{'kind':22s} {'wall s':>7s} {'CPU s':>7s} {'evals/wall s':>13s} "
          f"{'evals/CPU s':>12s}  (wall of each run)")
    rates = {}
    for kind, ts in times.items():
        med, med_cpu = statistics.median(ts), statistics.median(cpu[kind])
        rates[kind] = n_eval / med_cpu  # one core's worth: the process's own CPU time
        print(f"{kind:22s} {med:7.2f} {med_cpu:7.2f} {n_eval / med:13.0f} {rates[kind]:12.0f}  "
              f"({', '.join(f'{x:.2f}' for x in ts)})")
    worst = max(abs(best_coarse[k][2] / best_exact[k][2] - 1) for k in best_exact)
    same = sum(best_coarse[k][:2] == best_exact[k][:2] for k in best_exact)
    print(f"coarse chain: best plans' TTT/T0 within {100 * worst:.3f} % of the exact chain; same "
          f"(r, C) at {same} of {len(best_exact)} (group size, method) pairs")
    for ms in (128, 32, 16, 8):
        ts = []
        for _ in range(args.repeat):
            c = time.process_time()
            _, best_ms = run_search(grid, max_states=ms)
            ts.append(time.process_time() - c)
        gap = max(abs(best_ms[k][2] / best_exact[k][2] - 1) for k in best_exact)
        same = sum(best_ms[k][:2] == best_exact[k][:2] for k in best_exact)
        rates[f"warm, chain on {ms} states"] = n_eval / statistics.median(ts)
        print(f"chain on {ms:3d} states: {n_eval / statistics.median(ts):8.0f} evals/CPU s; best "
              f"plans within {100 * gap:.3f} % of the exact chain, same (r, C) at {same} of "
              f"{len(best_exact)}")
    time_parts(grid, args.repeat)
    cold = statistics.median(cpu["cold"])
    met = [k for k, r in rates.items() if r >= TARGET_RATE]
    print(f"verdict (per CPU second: the machine is shared): a cold search of {n_eval} "
          f"configurations in {cold:.1f} s "
          f"({'meets' if cold <= TARGET_SEARCH_S and n_eval >= TARGET_SEARCH_N else 'misses'} "
          f"≤ {TARGET_SEARCH_S:.0f} s for ≥ {TARGET_SEARCH_N}); "
          + "; ".join(f"{k}: {r:.0f}/s ({'meets' if r >= TARGET_RATE else 'misses'} ≥ 1e5/s)"
                      for k, r in rates.items())
          + f". ≥ 1e5/s: {', '.join(met) if met else 'none'}")


def design_default() -> None:
    """Time the default ``spare design`` search, cold (module docstring), on its default chain
    and on 8 states (``--chain-states 8``)."""
    from spare_lib.design import LLAMA3_405B, JobSpec, design_search
    from spare_lib.design.search import SEARCH_STATES

    job = JobSpec(**LLAMA3_405B)
    for states in (SEARCH_STATES, 8):
        clear_caches()
        t, c = time.perf_counter(), time.process_time()
        res = design_search(job, chain_states=states)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        ok = cpu <= TARGET_SEARCH_S and res.searched >= TARGET_SEARCH_N
        print(f"spare design, default search (405B, 16,384 H100, cold, chain on {states} states): "
              f"{res.searched:,} configurations, {res.evaluations:,} evaluated, {cpu:.1f} CPU s "
              f"({wall:.1f} wall s): {'meets' if ok else 'misses'} ≤ {TARGET_SEARCH_S:.0f} s for "
              f"≥ {TARGET_SEARCH_N:,}; best plan {res.best.label} M={res.best.gpus_per_group} "
              f"r={res.best.r} C={res.best.checkpoint_steps}, {res.best.days:.3f} days")


if __name__ == "__main__":
    main()
    design_default()
