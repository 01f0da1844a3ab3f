"""Run time of one simulated training run against N: direct per-stack loop vs the barrier sampler.

Issue 16 targets (10,000 steps, the paper's failure model, SPARe+CKPT):

* N = 1,000, r = 9: ≤ 0.1 s per run and ≥ 3× faster than ``barrier='direct'`` in this run;
* N = 10⁴: ≤ 1 s per run;
* N = 10⁵, r = 17: ≤ 10 s per run and ≤ 1 GB peak memory.

Both paths run through ``simulate(..., barrier='direct' | 'sampled')`` in this one process,
interleaved per N, so the ratio is measured on the same machine state; for N ≤ 10⁴ the pair is
run ``--repeat`` times (default 3) and the medians are reported, so one scheduling hiccup on a
shared machine does not decide the ratio. T_a is held at 10 s for every N (the cost of the
simulator, not of a longer simulated all-reduce).

Usage: ``python benchmarks/bench_scale.py [--quick] [--csv PATH]`` (``--quick``: N ≤ 10⁴;
``--csv data/results/scale_runtime.csv`` writes the table notebook 65 draws, log-log, as
``figures/scale_runtime_vs_n``).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                      ".numba_cache"))

import numpy as np  # noqa: E402

from spare_lib.cluster import h100_600k, simulate  # noqa: E402


def run_time(N: int, r: int, steps: int, mode: str, seed: int) -> tuple[float, object]:
    """Wall time of one ``simulate`` call (SPARe+CKPT, C = 31 steps ≈ T_c*/step; the interval
    barely changes the cost). T_a is fixed at the paper's N = 1000 value (10 s), so the cost
    measured is the simulator's, not a longer simulated all-reduce."""
    cfg = h100_600k(1000, steps=steps)
    t0 = time.perf_counter()
    res = simulate("spare", N, r, 31, cfg, seed=seed, barrier=mode)
    return time.perf_counter() - t0, res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip N = 10⁵")
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--csv", type=str, default=None,
                    help="write the table here (data/results/scale_runtime.csv is what notebook "
                         "65 draws as scale_runtime_vs_n)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--repeat", type=int, default=3, help="interleaved pairs per N ≤ 10⁴ (median)")
    args = ap.parse_args()
    print(f"bench_scale: {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} CPUs, python "
          f"{sys.version.split()[0]}, {args.steps} steps, SPARe+CKPT, T_a = 10 s")
    t0 = time.perf_counter()
    run_time(100, 5, 50, "sampled", 0)
    run_time(100, 5, 50, "direct", 0)
    print(f"  compile/load of the kernels: {time.perf_counter() - t0:.1f} s (not counted)")
    grid = [(1000, 9), (4000, 12), (10_000, 13), (30_000, 15), (100_000, 17)]
    if args.quick:
        grid = grid[:3]
    rows = []
    print(f"{'N':>7} {'r':>3} {'direct s':>9} {'sampled s':>10} {'ratio':>6} {'failures':>9} "
          f"{'restarts':>8} {'TTT/T0 d':>9} {'TTT/T0 s':>9}")
    for N, r in grid:
        tds, tss = [], []
        resd = None
        for _ in range(max(1, args.repeat) if N <= 10_000 else 1):
            if N <= 30_000:
                td, resd = run_time(N, r, args.steps, "direct", args.seed)
                tds.append(td)
            ts, ress = run_time(N, r, args.steps, "sampled", args.seed)
            tss.append(ts)
        td = float(np.median(tds)) if tds else np.nan
        ts = float(np.median(tss))
        rows.append((N, r, td, ts))
        print(f"{N:>7} {r:>3} {td:>9.3f} {ts:>10.3f} {td / ts:>6.1f} {ress.failures_noticed:>9} "
              f"{ress.full_restarts:>8} "
              f"{resd.ttt_over_t0 if resd else np.nan:>9.3f} {ress.ttt_over_t0:>9.3f}", flush=True)
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    by = {n: (d, s) for n, _r, d, s in rows}
    print("\ntargets (issue 16):")
    d, s = by[1000]
    print(f"  N=1,000 r=9 : sampled {s:.3f} s per run (target ≤ 0.1 s), {d / s:.1f}× the direct "
          f"path (target ≥ 3×): {'OK' if s <= 0.1 and d / s >= 3 else 'MISSED'}")
    print(f"  N=10,000    : sampled {by[10_000][1]:.3f} s (target ≤ 1 s): "
          f"{'OK' if by[10_000][1] <= 1 else 'MISSED'}")
    if 100_000 in by:
        s5 = by[100_000][1]
        print(f"  N=100,000 r=17: sampled {s5:.2f} s (target ≤ 10 s), peak RSS of this process "
              f"{peak_gb:.2f} GB (target ≤ 1 GB): {'OK' if s5 <= 10 and peak_gb <= 1 else 'MISSED'}")
    if args.csv:
        import pandas as pd

        out = Path(args.csv)
        pd.DataFrame({"N": [x[0] for x in rows], "r": [x[1] for x in rows],
                      "direct_s": [round(x[2], 4) for x in rows],
                      "sampled_s": [round(x[3], 4) for x in rows], "steps": args.steps,
                      "peak_rss_gb": round(peak_gb, 3), "cpus": os.cpu_count(),
                      "date": time.strftime("%Y-%m-%d")}).to_csv(out, index=False)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
