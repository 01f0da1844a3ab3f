"""Speed of the incremental micro-batch RECTLR kernel per failure event (issue 25).

Failure sequences to wipe-out (one group per event, uniformly random order, ruler layout) at
N = 1,000, 10,000 and 100,000, r = 9, b = 16. Every event is one call of
:func:`spare_lib.rectlr.microbatch_inc.microbatch_kernel_inc` in logged mode (the death reported by
``microbatch_inc_notice`` first, as the event core's ``notice`` hook would), timed from Python
(so each figure includes numba's dispatch, a few µs). The first solve (k = 0) is not a failure
event and is not counted. Also the stateless kernel on a sample of the same states, for the
ratio. Prints the median, p90 and p99 per event and the share of events that re-routed.

Target (issue 25): median ≤ 1 ms per event at N = 1,000, r = 9, b = 16.

Usage: ``python benchmarks/bench_microbatch.py [--quick]`` (``--quick``: N = 1,000 and 10,000
only, fewer sequences).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                      ".numba_cache"))

from spare_lib.rectlr.microbatch import microbatch_kernel, microbatch_workspace  # noqa: E402
from spare_lib.rectlr.microbatch_inc import (  # noqa: E402
    microbatch_inc_mode,
    microbatch_inc_notice,
    microbatch_kernel_inc,
)
from spare_lib.stacking import ruler_layout  # noqa: E402


def inc_events(N: int, r: int, b: int, n_seq: int, seed: int, n_stateless: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per-event times (s) of the incremental kernel, outcomes, a sample of the stateless
    kernel's times, and the incremental time on the same sampled events."""
    stacks = np.ascontiguousarray(ruler_layout(N, r).stacks, dtype=np.int64)
    rng = np.random.default_rng(seed)
    times, outs, st_times, inc_same = [], [], [], []
    y = np.zeros_like(stacks)
    for _ in range(n_seq):
        ws = microbatch_workspace(stacks)
        microbatch_inc_mode(ws[6], True)
        alive = np.ones(N, bool)
        microbatch_kernel_inc(stacks, alive, b, *ws)
        order = rng.permutation(N)
        sample = set(rng.choice(N // 4, size=min(n_stateless, N // 4), replace=False).tolist())
        for k, g in enumerate(order):
            alive[g] = False
            t0 = time.perf_counter()
            microbatch_inc_notice(g, ws[6], ws[7])
            out, L, _ = microbatch_kernel_inc(stacks, alive, b, *ws)
            dt = time.perf_counter() - t0
            if out == 2:
                break
            times.append(dt)
            outs.append(out)
            if k in sample:
                t0 = time.perf_counter()
                res = microbatch_kernel(stacks, alive, b, y, True)
                st_times.append(time.perf_counter() - t0)
                inc_same.append(dt)
                assert res[1] == L
    ratio = float(np.median(st_times) / np.median(inc_same)) if st_times else float("nan")
    return np.array(times), np.array(outs), np.array(st_times), ratio


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    r, b = 9, 16
    # warm the JIT cache outside the timings
    inc_events(200, r, b, 1, 0, 2)
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 shared cores)")
    configs = [(1_000, 20), (10_000, 3)] + ([] if args.quick else [(100_000, 1)])
    if args.quick:
        configs = [(1_000, 5), (10_000, 1)]
    print(f"{'N':>7} {'r':>2} {'b':>3} {'events':>7} {'median us':>10} {'p90 us':>8} "
          f"{'p99 us':>8} {'rerouted':>8} {'stateless/inc':>13}")
    for N, n_seq in configs:
        t, o, _, ratio = inc_events(N, r, b, n_seq, seed=N, n_stateless=20 if N <= 10_000 else 5)
        print(f"{N:>7} {r:>2} {b:>3} {t.size:>7} {np.median(t) * 1e6:>10.1f} "
              f"{np.quantile(t, 0.9) * 1e6:>8.1f} {np.quantile(t, 0.99) * 1e6:>8.1f} "
              f"{np.mean(o == 1):>8.3f} {ratio:>13.1f}")
        if N == 1_000:
            verdict = "meets" if np.median(t) <= 1e-3 else "misses"
            print(f"        target median <= 1 ms at N=1000, r=9, b=16: {verdict}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
