"""Speed of the failures-to-wipe-out sampler: numba kernel vs the plain-NumPy reference.

Prints trials/s of ``failures_to_wipeout`` (one worker) and ``failures_to_wipeout_numpy`` for the
ruler layouts N=1000, r=9 and N=600, r=20, and their ratio measured in the same run (best of
three repetitions each, so a busy machine penalises both alike). Target: ratio ≥ 20 at N=1000,
r=9. Runs in well under a minute.

Usage: ``python benchmarks/bench_wipeout.py``
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("NUMBA_CACHE_DIR",
                      os.path.join(os.path.dirname(__file__), "..", ".numba_cache"))

from spare_lib.stacking import (  # noqa: E402
    failures_to_wipeout,
    failures_to_wipeout_numpy,
    ruler_layout,  # noqa: E402
)

CASES = [(1000, 9), (600, 20)]
N_NUMBA = 100_000
N_NUMPY = 2_000
REPEATS = 3


def best_rate(fn, n_trials: int) -> float:
    """Best trials/s over REPEATS runs of ``fn(n_trials)``."""
    best = 0.0
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn(n_trials)
        best = max(best, n_trials / (time.perf_counter() - t0))
    return best


def main() -> None:
    failures_to_wipeout(ruler_layout(12, 3), 2, seed=0)  # JIT warm-up / cache load
    for N, r in CASES:
        lay = ruler_layout(N, r)
        fast = best_rate(lambda n, lay=lay: failures_to_wipeout(lay, n, seed=1), N_NUMBA)
        slow = best_rate(lambda n, lay=lay: failures_to_wipeout_numpy(lay, n, seed=1), N_NUMPY)
        print(f"N={N:5d} r={r:2d}  numba {fast:12,.0f} trials/s   numpy {slow:10,.0f} trials/s"
              f"   ratio {fast / slow:6.1f}x")


if __name__ == "__main__":
    main()
