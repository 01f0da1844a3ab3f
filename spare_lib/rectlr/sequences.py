"""RECTLR along random failure sequences: Phase-0 share, S* − c(k), shards moved, and controller timings.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from spare_lib._util.validate import check_int
from spare_lib.rectlr.controller import Controller
from spare_lib.rectlr.kernels import OUTCOMES, WIPEOUT, rectlr_kernel, rectlr_kernel_ws, rectlr_workspace
from spare_lib.rectlr.reference import rectlr_reference
from spare_lib.stacking.layout import Layout


@njit(cache=True)
def _sequences_kernel(base_stacks, orders, burst, use_workspace):
    """Run RECTLR along failure sequences (``burst`` groups per event) until wipe-out.

    Calls :func:`rectlr_kernel_ws` (or the stateless :func:`rectlr_kernel`) from numba, as the
    cluster simulator does.
    """
    n_seq, N = orders.shape
    n_ev = (N + burst - 1) // burst
    code = np.full((n_seq, n_ev), -1, np.int64)
    sstar = np.zeros((n_seq, n_ev), np.int64)
    moved = np.zeros((n_seq, n_ev), np.int64)
    patch = np.zeros((n_seq, n_ev), np.int64)
    kdead = np.zeros((n_seq, n_ev), np.int64)
    depth_before = np.zeros((n_seq, n_ev), np.int64)
    pbuf = np.zeros(N, np.int64)
    for i in range(n_seq):
        stacks = base_stacks.copy()
        hold_g, tpos, hcnt = rectlr_workspace(stacks)
        alive = np.ones(N, np.bool_)
        S = 1
        k = 0
        for e in range(n_ev):
            for _b in range(burst):
                if k < N:
                    alive[orders[i, k]] = False
                    k += 1
            depth_before[i, e] = S
            kdead[i, e] = k
            if use_workspace:
                c, s, m = rectlr_kernel_ws(stacks, alive, S, pbuf, hold_g, tpos, hcnt)
            else:
                c, s, m = rectlr_kernel(stacks, alive, S, pbuf)
            code[i, e] = c
            sstar[i, e] = s
            moved[i, e] = m
            tot = 0
            for w in range(N):
                tot += pbuf[w]
            patch[i, e] = tot
            if c == WIPEOUT:
                break
            S = s
    return code, sstar, moved, patch, kdead, depth_before


def failure_sequence_stats(layout: Layout, n_sequences: int, seed: object = None,
                           burst: int = 1, use_workspace: bool = True):
    """RECTLR along random failure sequences until wipe-out (SPEC §4, §8 last bullet).

    Each sequence kills the groups in a uniformly random order, ``burst`` groups per failure
    event (1: one failure noticed per attempt), starting from the base layout at S = 1, and
    applies RECTLR after every event.

    Parameters
    ----------
    layout : Layout
        Base layout.
    n_sequences : int
        Number of independent sequences (≥ 1).
    seed : int, SeedSequence or Generator
        Randomness of the failure orders.
    burst : int
        Groups failing together per event, 1 ≤ burst ≤ N.
    use_workspace : bool
        Run :func:`rectlr_kernel_ws` (default) or the stateless :func:`rectlr_kernel`; both
        give identical results.

    Returns
    -------
    pandas.DataFrame
        One row per event: ``seq``, ``event``, ``k`` (failed groups so far), ``depth_before``
        (S), ``outcome``, ``s_star``, ``c_k`` (= ceil(N/(N−k)), the lower bound on S*),
        ``moved`` and ``patch`` (stacks recomputed in the retry, capped rule, summed over
        groups).
    """
    import pandas as pd

    from spare_lib._util.rng import as_seed_sequence

    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.stacking.layout.Layout, got {type(layout).__name__}")
    n_sequences = check_int("n_sequences", n_sequences, lo=1)
    burst = check_int("burst", burst, lo=1, hi=layout.N)
    rng = np.random.default_rng(as_seed_sequence(seed))
    N = layout.N
    orders = np.stack([rng.permutation(N) for _ in range(n_sequences)]).astype(np.int64)
    code, sstar, moved, patch, kdead, dbefore = _sequences_kernel(
        np.ascontiguousarray(layout.stacks, dtype=np.int64), orders, burst, bool(use_workspace))
    seq, ev = np.nonzero(code >= 0)
    k = kdead[seq, ev]
    return pd.DataFrame({
        "seq": seq, "event": ev, "k": k, "depth_before": dbefore[seq, ev],
        "outcome": np.array(OUTCOMES)[code[seq, ev]], "s_star": sstar[seq, ev],
        "c_k": -(-N // (N - np.minimum(k, N - 1))), "moved": moved[seq, ev],
        "patch": patch[seq, ev],
    })


def phase0_share(stats) -> float:
    """Share of non-wipe-out failure events settled by Phase 0 in :func:`failure_sequence_stats`."""
    live = stats[stats["outcome"] != "wipeout"]
    return float((live["outcome"] == "fixed").mean()) if len(live) else float("nan")


def benchmark_events(layout: Layout, n_sequences: int, n_reference_events: int,
                     seed: object = None, progress: bool = False) -> dict:
    """Time RECTLR per failure event: Controller vs the SciPy/NetworkX reference, same run.

    Runs ``n_sequences`` random failure sequences to wipe-out through a :class:`Controller`
    (every event timed), then replays them and, at ``n_reference_events`` events drawn
    uniformly from all events, times :func:`rectlr_reference` and the stateless numba
    :func:`rectlr_kernel` on the same state.

    Returns
    -------
    dict
        ``controller_s`` (all events), ``controller_outcome``, and for the sampled events
        ``sample_controller_s``, ``sample_kernel_s``, ``reference_s``, ``sample_outcome``.
    """
    from tqdm.auto import tqdm

    from spare_lib._util.rng import as_seed_sequence

    n_sequences = check_int("n_sequences", n_sequences, lo=1)
    n_reference_events = check_int("n_reference_events", n_reference_events, lo=0)
    rng = np.random.default_rng(as_seed_sequence(seed))
    N = layout.N
    orders = [rng.permutation(N) for _ in range(n_sequences)]
    ctl = Controller(layout)
    # warm-up (JIT cache load, lazy imports) outside the timings
    warm_alive = np.ones(N, bool)
    warm_alive[[0, N // 2]] = False  # N ≥ 2 for any layout worth timing
    rectlr_reference(layout.stacks, warm_alive, 1)
    rectlr_kernel(np.array(layout.stacks, dtype=np.int64), warm_alive, 1, np.zeros(N, np.int64))
    ctl.fail([0, N // 2])
    times, outc, n_ev = [], [], []
    for order in tqdm(orders, desc="controller sequences", disable=not progress):
        ctl.restart()
        for e, g in enumerate(order):
            t0 = time.perf_counter()
            p = ctl.fail(int(g))
            times.append(time.perf_counter() - t0)
            outc.append(p.outcome)
            if p.outcome == "wipeout":
                n_ev.append(e + 1)
                break
    total = int(sum(n_ev))
    pick = np.sort(rng.choice(total, size=min(n_reference_events, total), replace=False))
    starts = np.concatenate([[0], np.cumsum(n_ev)])
    out = {"sample_controller_s": [], "sample_kernel_s": [], "reference_s": [],
           "sample_outcome": []}
    bar = tqdm(total=len(pick), desc="reference events", disable=not progress)
    for s, order in enumerate(orders):
        evs = pick[(pick >= starts[s]) & (pick < starts[s + 1])] - starts[s]
        if evs.size == 0:
            continue
        ctl.restart()
        for e, g in enumerate(order[: evs.max() + 1]):
            if e in evs:
                st, al, d = ctl.stacks, ctl.alive.copy(), ctl.depth
                al[g] = False
                t0 = time.perf_counter()
                ref = rectlr_reference(st, al, d)
                out["reference_s"].append(time.perf_counter() - t0)
                s1 = np.array(st)
                pbuf = np.zeros(N, np.int64)
                t0 = time.perf_counter()
                rectlr_kernel(s1, al, d, pbuf)
                out["sample_kernel_s"].append(time.perf_counter() - t0)
                out["sample_controller_s"].append(times[starts[s] + e])
                out["sample_outcome"].append(ref.outcome)
                bar.update()
            ctl.fail(int(g))
    bar.close()
    res = {k: np.asarray(v) for k, v in out.items()}
    res["controller_s"] = np.asarray(times)
    res["controller_outcome"] = np.asarray(outc)
    return res


def speed_summary(bench: dict) -> dict:
    """Median / p99 per event (ms) and speed-up ratios from :func:`benchmark_events`."""
    c, ref = bench["controller_s"], bench["reference_s"]
    sc, sk = bench["sample_controller_s"], bench["sample_kernel_s"]
    out = {
        "events": int(c.size),
        "controller_median_ms": 1e3 * float(np.median(c)),
        "controller_p99_ms": 1e3 * float(np.percentile(c, 99)),
        "reference_events": int(ref.size),
    }
    if ref.size:
        out.update({
            "reference_median_ms": 1e3 * float(np.median(ref)),
            "reference_p99_ms": 1e3 * float(np.percentile(ref, 99)),
            "kernel_median_ms_on_sample": 1e3 * float(np.median(sk)),
            "ratio_of_medians": float(np.median(ref) / np.median(c)),
            "ratio_of_means_on_sample": float(ref.mean() / sc.mean()),
            "median_paired_ratio": float(np.median(ref / sc)),
        })
    return out
