"""Speed of the failure-trace synthesis at paper scale.

Synthesizes one year of group failures for a 600,000-GPU cluster (75,000 servers of 8 GPUs,
data-parallel groups of 1,000 GPUs) from the StepFun trace, with both methods of
``spare_lib.failures.synthesize``, and prints the best of five wall-clock times against the 2 s
target. Also times loading and fitting the real traces, for reference.

Usage: ``python benchmarks/bench_failures.py``
"""

from __future__ import annotations

import time

from spare_lib.failures import fit_interarrival, load_trace, synthesize

TARGET_S = 2.0
N_GPUS, GPUS_PER_GROUP, HORIZON_S = 600_000, 1000, 365 * 86400.0
REPEATS = 5


def best_time(fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    t0 = time.perf_counter()
    trace = load_trace("stepfun-infinitehbd")
    print(f"load StepFun trace: {time.perf_counter() - t0:.3f} s ({trace})")
    for method in ("block-bootstrap", "fitted"):
        dt, out = best_time(lambda m=method: synthesize(trace, N_GPUS, GPUS_PER_GROUP, HORIZON_S, method=m,
                                                        seed=0))
        verdict = "OK" if dt <= TARGET_S else "SLOW"
        print(f"synthesize {method:>15}: {dt:.3f} s for {len(out):,} group failures "
              f"(600k GPUs, 1 year; target {TARGET_S} s, {TARGET_S / dt:.0f}x margin) {verdict}")
    t0 = time.perf_counter()
    fit_interarrival(trace, "system", n_boot=200, seed=0)
    print(f"fit_interarrival(StepFun, system, 4 laws, 200 bootstrap draws): {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
