"""The event-driven barrier sampler (issue 16) against the core's direct per-group loop.

* ``barrier_direct`` equals, draw for draw, a plain-Python re-implementation of the core's
  compute loop and all-reduce poll (same generator stream, same numbers);
* ``barrier_step`` / ``barrier_step_patch`` (sampled) agree in distribution with the direct
  path: two-sample Kolmogorov–Smirnov tests on the step time t̄ − t, the stacks computed, the
  failures noticed and the notice times, at N ∈ {10, 200, 1000}, each at significance level
  α = 0.01 (seeds fixed, so the outcome is deterministic; a failure means the two laws differ
  or the run is in the 1 % tail, and a changed seed tells which);
* σ = 0 (no jitter): sampled and direct give the same numbers.

The TTT/T0 and availability comparison at N = 1000 needs the core wired (``simulate(...,
barrier=...)``): it skips until ``simulate`` has a ``barrier`` parameter.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtri

from spare_lib.cluster.engine.barrier import (
    barrier_buffers,
    barrier_direct,
    barrier_direct_patch,
    barrier_step,
    barrier_step_patch,
    norm_isf,
    norm_ppf,
)

ALPHA = 0.01


def _oracle(t, nst_w, unit_s, alive, nf, sigma, lo, rng):
    """The core's direct loop (compute phase, barrier, all-reduce poll) in plain Python."""
    bridge = sigma > 0.0 and (1.0 - lo) > 9.0 * sigma
    tbar, stacks, fails, min_nf = t, 0, [], math.inf
    dead = set()
    for w in range(len(alive)):
        if not alive[w]:
            continue
        nst, nf_w, tw, failed = int(nst_w[w]), nf[w], t, False
        if nst >= 2 and bridge and nf_w > tw:
            tot = nst + sigma * math.sqrt(nst) * rng.standard_normal()
            if nf_w > tw + unit_s * tot:
                tw += unit_s * tot
                stacks += nst
            else:
                rest = tot
                for k in range(nst):
                    if k > 0 and nf_w <= tw:
                        failed = True
                        break
                    m = nst - k
                    if m == 1:
                        d = rest
                    else:
                        d = rest / m + sigma * math.sqrt(1.0 - 1.0 / m) * rng.standard_normal()
                        rest -= d
                    tw += unit_s * d
                    stacks += 1
        else:
            for _ in range(nst):
                if nf_w <= tw:
                    failed = True
                    break
                j = 1.0 if sigma == 0.0 else 1.0 + sigma * rng.standard_normal()
                tw += unit_s * (j if j > lo else lo)
                stacks += 1
        if failed:
            fails.append((w, tw))
            dead.add(w)
        elif nf_w < min_nf:
            min_nf = nf_w
        tbar = max(tbar, tw)
    for w in range(len(alive)):
        if min_nf > tbar:
            break
        if alive[w] and w not in dead and nf[w] <= tbar:
            fails.append((w, tbar))
    return tbar, fails, stacks


def _scenario(rng, N, mean_gap, lag=10.0, dead_share=0.1):
    """Live groups and next failure times around t = 0 (a few overdue, a few dead)."""
    alive = rng.random(N) >= dead_share
    alive[0] = True
    nf = -lag + rng.exponential(mean_gap, N)
    return alive, nf


def _run(fn, rng_scen, rng_jit, n_samples, N, nst, unit_s, mean_gap, sigma=0.05, lo=0.1,
         patch_max=None):
    """Step times, stacks, failure counts and compute-phase notice times over scenarios."""
    bufs = barrier_buffers(N)
    tb = np.empty(n_samples)
    st = np.empty(n_samples)
    nfl = np.empty(n_samples)
    notice: list[float] = []
    for i in range(n_samples):
        alive, nf = _scenario(rng_scen, N, mean_gap)
        arg = nst if patch_max is None else rng_scen.integers(0, patch_max + 1, N)
        tbar, k, s = fn(0.0, arg, unit_s, alive, nf, sigma, lo, rng_jit, *bufs)
        tb[i], st[i], nfl[i] = tbar, s, k
        notice.extend(t for t in bufs[1][:k] if t < tbar)
    return tb, st, nfl, np.asarray(notice)


def test_norm_quantiles_match_scipy() -> None:
    ps = np.concatenate([np.logspace(-300, -1, 300), np.linspace(0.01, 0.99, 197),
                         1 - np.logspace(-15, -1, 50)])
    err = max(abs(norm_ppf(p) - ndtri(p)) / max(1.0, abs(ndtri(p))) for p in ps)
    assert err < 1e-14
    qs = np.logspace(-300, -1e-4, 400)
    assert max(abs(norm_isf(q) + ndtri(q)) / max(1.0, abs(ndtri(q))) for q in qs) < 1e-14


@pytest.mark.parametrize("sigma,nst,patch", [(0.05, 3, False), (0.05, 1, False), (0.0, 4, False),
                                             (0.3, 3, False), (0.05, 0, True)])
def test_direct_is_the_core_loop(sigma: float, nst: int, patch: bool) -> None:
    N = 40
    scen = np.random.default_rng(7)
    for i in range(30):
        alive, nf = _scenario(scen, N, mean_gap=N * 64.0 * 2)
        nst_w = scen.integers(0, 3, N) if patch else np.full(N, nst)
        bufs = barrier_buffers(N)
        r1, r2 = np.random.default_rng(i), np.random.default_rng(i)
        if patch:
            tbar, k, s = barrier_direct_patch(0.0, nst_w, 64.0, alive, nf, sigma, 0.1, r1, *bufs)
        else:
            tbar, k, s = barrier_direct(0.0, nst, 64.0, alive, nf, sigma, 0.1, r1, *bufs)
        o_tbar, o_fails, o_stacks = _oracle(0.0, nst_w, 64.0, alive, nf, sigma, 0.1, r2)
        assert tbar == o_tbar and s == o_stacks
        assert list(zip(bufs[0][:k].tolist(), bufs[1][:k].tolist(), strict=True)) == o_fails


def _ks_all(a: tuple, b: tuple) -> dict[str, float]:
    out = {"step_time": stats.ks_2samp(a[0], b[0]).pvalue,
           "stacks": stats.ks_2samp(a[1], b[1]).pvalue,
           "failures": stats.ks_2samp(a[2], b[2]).pvalue}
    if min(a[3].size, b[3].size) > 20:
        out["notice_time"] = stats.ks_2samp(a[3], b[3]).pvalue
    return out


#: (N, units per group, unit seconds, mean time to the next failure, samples)
KS_CASES = [
    (10, 3, 64.0, 10 * 64.0, 20_000),  # most groups fail: the argmax often fails first
    (200, 2, 64.0, 200 * 64.0 * 0.5, 10_000),
    (1000, 3, 64.0, 1000 * 64.0 * 2, 4_000),
    (200, 1, 3 * 64.0, 200 * 64.0, 10_000),  # Rep: one clipped-normal unit of r·64 s
]


@pytest.mark.parametrize("N,nst,unit_s,gap,n", KS_CASES)
def test_sampled_barrier_matches_direct_in_distribution(N: int, nst: int, unit_s: float,
                                                        gap: float, n: int) -> None:
    a = _run(barrier_direct, np.random.default_rng(1), np.random.default_rng(2), n, N, nst,
             unit_s, gap)
    b = _run(barrier_step, np.random.default_rng(3), np.random.default_rng(4), n, N, nst,
             unit_s, gap)
    p = _ks_all(a, b)
    assert a[2].mean() > 0.05  # failures do happen in the scenario
    assert min(p.values()) > ALPHA, p


@pytest.mark.parametrize("N,sigma", [(10, 0.05), (200, 0.05), (200, 0.2)])
def test_sampled_patch_barrier_matches_direct(N: int, sigma: float) -> None:
    n = 8_000
    a = _run(barrier_direct_patch, np.random.default_rng(21), np.random.default_rng(22), n, N, 0,
             64.0, N * 64.0, sigma=sigma, patch_max=3)
    b = _run(barrier_step_patch, np.random.default_rng(23), np.random.default_rng(24), n, N, 0,
             64.0, N * 64.0, sigma=sigma, patch_max=3)
    p = _ks_all(a, b)
    assert min(p.values()) > ALPHA, p


@pytest.mark.parametrize("nst", [1, 3])
def test_no_jitter_sampled_equals_direct(nst: int) -> None:
    N = 300
    scen = np.random.default_rng(5)
    for _ in range(50):
        alive, nf = _scenario(scen, N, mean_gap=N * 64.0)
        b1, b2 = barrier_buffers(N), barrier_buffers(N)
        x = barrier_direct(0.0, nst, 64.0, alive, nf, 0.0, 0.1, np.random.default_rng(0), *b1)
        y = barrier_step(0.0, nst, 64.0, alive, nf, 0.0, 0.1, np.random.default_rng(0), *b2)
        assert x[0] == y[0] and x[1] == y[1] and x[2] == y[2]
        fx = sorted(zip(b1[0][:x[1]].tolist(), b1[1][:x[1]].tolist(), strict=True))
        fy = sorted(zip(b2[0][:y[1]].tolist(), b2[1][:y[1]].tolist(), strict=True))
        assert fx == fy


def test_sampled_is_deterministic_and_leaves_inputs_alone() -> None:
    N = 500
    alive, nf = _scenario(np.random.default_rng(0), N, mean_gap=N * 64.0)
    a0, n0 = alive.copy(), nf.copy()
    outs = []
    for _ in range(2):
        bufs = barrier_buffers(N)
        r = barrier_step(0.0, 3, 64.0, alive, nf, 0.05, 0.1, np.random.default_rng(9), *bufs)
        outs.append((r, bufs[0][:r[1]].tolist(), bufs[1][:r[1]].tolist()))
    assert outs[0] == outs[1]
    assert np.array_equal(alive, a0) and np.array_equal(nf, n0)


# --------------------------------------------------------------------------- wired core

def _simulate_has_barrier() -> bool:
    from spare_lib.cluster.runs.simulate import simulate
    return "barrier" in inspect.signature(simulate).parameters


@pytest.mark.skipif(not _simulate_has_barrier(),
                    reason="simulate() has no barrier= parameter yet (core not wired)")
@pytest.mark.parametrize("r", [3, 9])
def test_wired_core_ttt_and_availability_agree(r: int) -> None:
    """N = 1000, 20 seeds per path: TTT/T0 and availability means within 3 combined s.e."""
    from spare_lib.cluster import h100_600k, paper_checkpoint_interval, simulate_many

    N, seeds = 1000, 20
    base = {"method": "spare", "N": N, "r": r, "config": h100_600k(N, steps=2000),
            "ckpt_steps": paper_checkpoint_interval("spare", N, r)}
    res = {}
    for mode in ("direct", "sampled"):
        tasks = [dict(base, barrier=mode) for _ in range(seeds)]
        res[mode] = simulate_many(tasks, seed=2026 if mode == "direct" else 2027, workers=2)
    for field in ("ttt_over_t0", "availability"):
        x = np.array([getattr(v, field) for v in res["direct"]])
        y = np.array([getattr(v, field) for v in res["sampled"]])
        se = math.hypot(x.std(ddof=1) / math.sqrt(seeds), y.std(ddof=1) / math.sqrt(seeds))
        assert abs(x.mean() - y.mean()) <= 3 * se, (field, x.mean(), y.mean(), se)


@pytest.mark.skipif(not _simulate_has_barrier(),
                    reason="simulate() has no barrier= parameter yet (core not wired)")
def test_wired_core_elastic_rebalance_agrees_on_the_sampled_barrier() -> None:
    """elastic-rebalance (b = 4 micro-batches per shard, jitter σ·√b per micro-batch, rejoins after
    10 min) on the direct per-unit loop and on the sampled barrier, N = 400, 20 seeds per path
    (independent seeds): TTT/T0, availability and the mean per-survivor load within 3 combined
    standard errors (two-sided, about 0.3 % per field under the null)."""
    from spare_lib.cluster import h100_600k, simulate_many

    N, seeds = 400, 20
    base = {"method": "elastic-rebalance", "N": N, "r": 1, "ckpt_steps": None,
            "config": h100_600k(N, steps=1000, microbatches=4, rejoin_s=600.0)}
    res = {}
    for mode in ("direct", "sampled"):
        tasks = [dict(base, barrier=mode) for _ in range(seeds)]
        res[mode] = simulate_many(tasks, seed=2026 if mode == "direct" else 2027, workers=2)
    for field in ("ttt_over_t0", "availability", "overhead"):
        x = np.array([getattr(v, field) for v in res["direct"]])
        y = np.array([getattr(v, field) for v in res["sampled"]])
        se = math.hypot(x.std(ddof=1) / math.sqrt(seeds), y.std(ddof=1) / math.sqrt(seeds))
        assert abs(x.mean() - y.mean()) <= 3 * se, (field, x.mean(), y.mean(), se)
    assert all(v.rejoins > 0 for v in res["sampled"])  # the runs do exercise failures and rejoins
