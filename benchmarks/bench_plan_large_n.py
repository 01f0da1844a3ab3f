"""Speed of ``spare plan``'s closed forms at large N (issue 12: N = 10⁵ in ≤ 1 s for the forms,
≤ 5 s for the whole command).

For N = 10³, 10⁴, 2·10⁴, 10⁵ it times (a) ``planning.plan`` in-process with cold caches (every
μ and S̄ evaluated once; above ``theory.finite.EXACT_N_MAX`` the consecutive count of r = 2 is
the float closed form instead of big-integer sums) and (b) the command line as a user runs it
(a subprocess, import time included), and prints the times. Not a timed test: the machines are
shared, so the numbers are printed, not asserted.

Usage: ``python benchmarks/bench_plan_large_n.py``
"""

from __future__ import annotations

import subprocess
import sys
import time

CASES = {1000: (1_000_000, 1000), 10_000: (10_000_000, 1000), 20_000: (20_000_000, 1000),
         100_000: (100_000_000, 1000)}


def main() -> None:
    from spare_lib.cluster import planning
    from spare_lib.theory import finite

    print("      N   plan() cold (s)   spare plan CLI (s)   target: forms <= 1 s, command <= 5 s")
    for N, (gpus, per_group) in CASES.items():
        planning._spare_mu_overhead.cache_clear()
        finite._survival_consecutive_fast.cache_clear()
        spec = planning.cluster_spec(gpus, per_group)
        t = time.perf_counter()
        planning.plan(spec)
        forms = time.perf_counter() - t
        cmd = [sys.executable, "-m", "spare_lib.cli", "plan", "--gpus", str(gpus), "--gpus-per-group",
               str(per_group)]
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t
        print(f"{N:>7}   {forms:15.2f}   {wall:18.2f}")


if __name__ == "__main__":
    main()
