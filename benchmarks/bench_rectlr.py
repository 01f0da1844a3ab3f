"""Speed of RECTLR per failure event: spare_lib vs a SciPy-HK + NetworkX-min-cost-flow version.

Failure sequences to wipe-out (one group per event, random order, from the base layout at S=1)
at N=1000, r=20 and N=10,000, r=26, ruler and consecutive layouts. For every configuration:

* ``Controller`` (incremental, Python API): every event of every sequence is timed;
* the SciPy/NetworkX reference (:func:`spare_lib.rectlr.rectlr_reference`, same three phases on
  SPEC §4's slot graph) on events drawn uniformly from the same sequences (it needs seconds to
  minutes per reordering event, so only a sample), with the Controller's time on the same events;
* the numba kernels the cluster simulator calls (``rectlr_kernel``, stateless; and
  ``rectlr_kernel_ws``, with a kept holder index) along whole sequences at N=1000, r=9 and 20;
* ``rectlr_kernel_inc`` per failure event at N = 10³, 10⁴, 10⁵ (issue 16), as the Python API
  and as the sampled simulator call it.

Prints median and p99 per event and the ratios, all measured in this run. Target (issue 3):
Controller median ≤ 1 ms at N=1000, r=20 and ≥ 50× faster than the reference.

Usage: ``python benchmarks/bench_rectlr.py [--quick]`` (``--quick``: fewer samples, no N=10,000).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                      ".numba_cache"))

from spare_lib.rectlr import (  # noqa: E402
    benchmark_events,
    rectlr_kernel,
    rectlr_kernel_ws,
    rectlr_workspace,
    speed_summary,
)
from spare_lib.rectlr.kernels_inc import (  # noqa: E402
    rectlr_inc_invalidate,
    rectlr_inc_mode,
    rectlr_inc_notice,
    rectlr_inc_patch_plan,
    rectlr_inc_workspace,
    rectlr_kernel_inc,
)
from spare_lib.stacking import make_layout  # noqa: E402


def kernel_sequences(N: int, r: int, n_seq: int, seed: int) -> dict[str, np.ndarray]:
    """Per-call time of the numba kernels along failure sequences (called from Python)."""
    lay = make_layout(N, r, "ruler")
    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {"kernel": [], "kernel_ws": []}
    warm = np.ones(N, bool)
    warm[[0, 1]] = False
    s0 = np.array(lay.stacks, dtype=np.int64)
    rectlr_kernel(s0.copy(), warm, 1, np.zeros(N, np.int64))  # load JIT cache outside timings
    rectlr_kernel_ws(s0.copy(), warm, 1, np.zeros(N, np.int64), *rectlr_workspace(s0))
    for name in out:
        for _ in range(n_seq):
            stacks = np.array(lay.stacks, dtype=np.int64)
            ws = rectlr_workspace(stacks)
            alive = np.ones(N, bool)
            patch = np.zeros(N, np.int64)
            S = 1
            for g in rng.permutation(N):
                alive[g] = False
                t0 = time.perf_counter()
                if name == "kernel":
                    code, s, _m = rectlr_kernel(stacks, alive, S, patch)
                else:
                    code, s, _m = rectlr_kernel_ws(stacks, alive, S, patch, *ws)
                out[name].append(time.perf_counter() - t0)
                if code == 2:
                    break
                S = s
    return {k: np.asarray(v) for k, v in out.items()}


def kernel_inc_events(N: int, r: int, n_events: int, seed: int) -> dict[str, np.ndarray]:
    """Per-event time of the stateless kernel, of ``rectlr_kernel_inc`` (issue 16) as the Python
    API calls it (deaths found by comparing survivor masks, dense patch) and as the sampled
    simulator calls it (deaths reported, sparse patch; the report is timed with the call),
    along the first ``n_events`` random failures (a restart after a wipe-out); checks that the
    three give identical results."""
    lay = make_layout(N, r, "ruler")
    base = np.array(lay.stacks, dtype=np.int64)
    st, st2, st3 = base.copy(), base.copy(), base.copy()
    alive = np.ones(N, bool)
    p1, p2, p3 = np.zeros(N, np.int64), np.zeros(N, np.int64), np.zeros(N, np.int64)
    rectlr_kernel_inc(base.copy(), alive, 1, p2, *rectlr_inc_workspace(base))  # JIT load
    rectlr_kernel(base.copy(), alive, 1, p1)
    ws = rectlr_inc_workspace(st2)
    ws3 = rectlr_inc_workspace(st3)
    rectlr_inc_mode(ws3[6], True, True)
    rng = np.random.default_rng(seed)
    S = 1
    t_k, t_i, t_s, code = [], [], [], []
    for _ in range(n_events):
        g = int(rng.integers(N))
        while not alive[g]:
            g = int(rng.integers(N))
        alive[g] = False
        t0 = time.perf_counter()
        a = rectlr_kernel(st, alive, S, p1)
        t_k.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b = rectlr_kernel_inc(st2, alive, S, p2, *ws)
        t_i.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        rectlr_inc_notice(g, ws3[6], ws3[7])
        c = rectlr_kernel_inc(st3, alive, S, p3, *ws3)
        t_s.append(time.perf_counter() - t0)
        if a != b or a != c or not np.array_equal(st, st2) or not np.array_equal(st, st3) \
                or not np.array_equal(p1, p2):
            raise AssertionError("rectlr_kernel_inc differs from rectlr_kernel")
        if a[0] == 1:
            k0, groups, n = rectlr_inc_patch_plan(ws3[6], ws3[7])
            dense = np.where(alive, k0, 0)
            dense[groups[:n]] = p3[groups[:n]]
            if not np.array_equal(dense, p1):
                raise AssertionError("the sparse patch differs from rectlr_kernel's")
        code.append(a[0])
        S = a[1]
        if a[0] == 2:
            st[:], st2[:], st3[:], alive[:] = base, base, base, True
            rectlr_inc_invalidate(ws3[6])
            S = 1
    return {"stateless": np.asarray(t_k), "inc": np.asarray(t_i), "inc sim": np.asarray(t_s),
            "outcome": np.asarray(code)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer samples, skip N=10,000")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    configs = [(1000, 20, "ruler", 20, 24), (1000, 20, "consecutive", 20, 12),
               (10_000, 26, "ruler", 3, 2), (10_000, 26, "consecutive", 3, 2)]
    if args.quick:
        configs = [(1000, 20, "ruler", 3, 4)]
    print(f"bench_rectlr: {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} CPUs, "
          f"python {sys.version.split()[0]}")
    hdr = (f"{'N':>6} {'r':>3} {'layout':>11} {'events':>7} | {'Ctl med ms':>10} {'Ctl p99 ms':>10}"
           f" | {'ref n':>5} {'ref med ms':>10} {'ref p99 ms':>10} | {'ratio med':>9} "
           f"{'ratio mean':>10} {'paired med':>10}")
    print(hdr)
    print("-" * len(hdr))
    for N, r, kind, n_seq, n_ref in configs:
        lay = make_layout(N, r, kind)
        b = benchmark_events(lay, n_seq, n_ref, seed=args.seed)
        s = speed_summary(b)
        print(f"{N:>6} {r:>3} {kind:>11} {s['events']:>7} | {s['controller_median_ms']:>10.4f} "
              f"{s['controller_p99_ms']:>10.4f} | {s['reference_events']:>5} "
              f"{s.get('reference_median_ms', np.nan):>10.1f} "
              f"{s.get('reference_p99_ms', np.nan):>10.1f} | "
              f"{s.get('ratio_of_medians', np.nan):>9.0f} "
              f"{s.get('ratio_of_means_on_sample', np.nan):>10.0f} "
              f"{s.get('median_paired_ratio', np.nan):>10.0f}", flush=True)
        reo = b["controller_outcome"] == "reordered"
        print(f"{'':>30}  Controller on reordering events only: median "
              f"{1e3 * np.median(b['controller_s'][reo]):.4f} ms, p99 "
              f"{1e3 * np.percentile(b['controller_s'][reo], 99):.4f} ms; Phase 0 share "
              f"{np.mean(b['controller_outcome'][b['controller_outcome'] != 'wipeout'] == 'fixed'):.3f}",
              flush=True)
    print("\nnumba kernels called along whole sequences (what the simulator calls), per call:")
    for N, r in [(1000, 9), (1000, 20)]:
        ks = kernel_sequences(N, r, 2 if args.quick else 10, args.seed)
        for name, t in ks.items():
            per_seq = t.sum() / (2 if args.quick else 10)
            print(f"  N={N} r={r:>2} {name:>9}: calls={t.size:>6} median {1e6 * np.median(t):7.1f} us"
                  f"  mean {1e6 * t.mean():7.1f} us  p99 {1e6 * np.percentile(t, 99):7.1f} us"
                  f"  per sequence to wipe-out {per_seq * 1e3:6.1f} ms", flush=True)
    print("\nissue 16: the simulator's kernel per failure event, stateless vs kept state "
          "(rectlr_kernel_inc, bit-identical; 'inc' as the Python API calls it, 'inc sim' with "
          "reported deaths and a sparse patch, as the sampled simulator does), first failures "
          "of a sequence (target: median <= 0.5 ms at N=1e5, r=17):")
    for N, r, n_ev in [(1000, 9, 3000), (10_000, 13, 1000 if args.quick else 3000),
                       (100_000, 17, 300 if args.quick else 3000)]:
        ke = kernel_inc_events(N, r, n_ev, args.seed)
        for name in ("stateless", "inc", "inc sim"):
            t = ke[name]
            fixed = ke["outcome"] == 0
            print(f"  N={N:>6} r={r:>2} {name:>9}: events={t.size} median {1e3 * np.median(t):8.4f} ms"
                  f"  mean {1e3 * t.mean():8.4f} ms  Phase-0 events median "
                  f"{1e3 * np.median(t[fixed]):8.4f} ms  reorders ({(~fixed).sum()}) median "
                  f"{1e3 * np.median(t[~fixed]) if (~fixed).any() else np.nan:8.3f} ms", flush=True)
    print("\nratio med = median(reference) / median(Controller over all events); ratio mean = "
          "mean ratio on the sampled events; paired med = median over sampled events of "
          "reference/Controller on the same event.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
