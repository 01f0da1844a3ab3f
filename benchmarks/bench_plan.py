"""Speed and answers of ``spare plan --simulate 3`` on the paper's three configurations (issue 7).

For N = 200, 600, 1000 (600k GPUs, 3000 / 1000 / 600 per group, step 66 / 70 / 74 s, m = 5 min,
T_r = 60 min, T_s = 58.8 s) it runs the command line exactly as a user would (a subprocess,
``--json``) and prints the wall time against the one-minute target, the recommended r and
checkpoint interval of SPARe+CKPT and Rep+CKPT, and the simulated gain over Rep+CKPT next to the
paper's. Not a timed test: the machines are shared, so the ratio is printed, not asserted.

Usage: ``python benchmarks/bench_plan.py [--trials 3] [--workers 2]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

#: N -> (GPUs per group, step time s, the paper's r*, the paper's gain over Rep+CKPT)
PAPER = {200: (3000, 66, 9, 0.519), 600: (1000, 70, 8, 0.417), 1000: (600, 74, 9, 0.396)}
TARGET_S = 60.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    print(f"spare plan --simulate {a.trials} --workers {a.workers} (target: under {TARGET_S:.0f} s each)")
    print("   N   wall (s)  / target  SPARe r (C)  Rep r (C)   gain  [at the model's C]  paper r*, gain")
    for N, (per_group, step, r_paper, gain_paper) in PAPER.items():
        cmd = [sys.executable, "-m", "spare_lib.cli", "plan", "--gpus", "600000",
               "--gpus-per-group", str(per_group), "--system-mtbf-min", "5", "--restart-min", "60",
               "--checkpoint-s", "58.8", "--step-s", str(step), "--simulate", str(a.trials),
               "--workers", str(a.workers), "--json"]
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        wall = time.perf_counter() - t
        d = json.loads(out)
        s, r = d["spare"], d["rep"]
        print(f"{N:>4}  {wall:9.1f}  {wall / TARGET_S:8.2f}  {s['r']:>7} ({s['checkpoint_steps']:>2})"
              f"  {r['r']:>5} ({r['checkpoint_steps']:>2})  {100 * d['gain_vs_rep']:5.1f}%"
              f"  [{100 * d['gain_vs_rep_closed_checkpoint']:5.1f}%]"
              f"            {r_paper}, {100 * gain_paper:.1f}%")


if __name__ == "__main__":
    main()
