"""Per-run cost of SPARe-b against SPARe in the event core (issue 25 item 3).

One process, the paper's world at N = 600 (600k GPUs, m = 5 min, ``h100_600k``), r = 8,
ruler layout, checkpoints every 23 steps, common failure streams. For each repeat the runs are
interleaved (SPARe, SPARe-b at each b, SPARe-b+repair, SPARe-b+drop), each timed on its own
(after one warm-up call per method, so numba's compile is not counted); the script prints every
method's median wall time per run and its ratio to SPARe's median. SPARe-b draws one jitter
factor per micro-batch, so its compute grows with b·S̄_b per group and step against SPARe's S̄.

Usage: ``python benchmarks/bench_spare_b.py [--steps 2000] [--repeats 5]``; say the machine's
load when quoting the figures.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                      ".numba_cache"))

from spare_lib.cluster import h100_600k, simulate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--N", type=int, default=600)
    ap.add_argument("--r", type=int, default=8)
    args = ap.parse_args()
    cfg = h100_600k(args.N, steps=args.steps, rejoin_s=600.0)
    cases = [("spare", "spare", 1), *((f"spare-b b={b}", "spare-b", b) for b in (2, 8, 32)),
             ("spare-b+repair b=8", "spare-b+repair", 8), ("spare-b+drop b=8", "spare-b+drop", 8)]
    times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _name, method, b in cases:  # compile / load the cache once
            simulate(method, args.N, args.r, 23, cfg.with_(microbatches=b, steps=5), seed=0)
        for rep in range(args.repeats):
            for name, method, b in cases:
                t = time.perf_counter()
                simulate(method, args.N, args.r, 23, cfg.with_(microbatches=b), seed=rep,
                         failure_seed=1000 + rep)
                times[name].append(time.perf_counter() - t)
    ref = float(np.median(times["spare"]))
    print(f"N = {args.N}, r = {args.r}, {args.steps} steps, {args.repeats} interleaved repeats "
          f"(load average {os.getloadavg()[0]:.1f})")
    for name, ts in times.items():
        med = float(np.median(ts))
        print(f"{name:>20}: median {med:.3f} s per run, {med / ref:.2f} x SPARe")


if __name__ == "__main__":
    main()
