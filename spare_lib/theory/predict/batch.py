"""The model over a grid of (method, r, C) for one cluster at once, for design searches.

A search over group sizes × methods × r × C evaluates the same cycles many times: the failure
law's curves depend on (N, failure law) only, a method's cycles on (method, N, r, cluster), and
C enters only in the run's chain over the checkpoint lattice
(:mod:`spare_lib.theory.predict.chain`). :func:`predict_batch` builds (or takes from the caches)
each (method, r)'s cycles once, packs their arrays once (cached too), and runs the chain for
every C inside one numba call (:func:`_batch_kernel`), returning arrays. The chain is fed per
block of checkpoints (:mod:`spare_lib.theory.predict.blocks`: closed-form sums per cell of the
cycle's τ grid), so a C costs O(grid + states × blocks a cycle spans) rather than O(steps/C).
With the chain's default lattice (``max_states`` = 512) the numbers are those of
:func:`~spare_lib.theory.predict.predict` up to the order of the sums (tested to 1e-10); a
coarser lattice trades accuracy for speed (``benchmarks/bench_design.py`` prints the gap).

Example
-------
>>> from spare_lib.cluster import h100_600k
>>> out = predict_batch(("spare", "rep"), 600, range(2, 10), (8, 16, 23, 32), h100_600k(600))
>>> out["spare"].best()[:2], out["rep"].best()[:2]
((8, 23), (3, 8))
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from spare_lib.stacking.layout import max_ruler_r
from spare_lib.theory.predict.blocks import chain_blocks, law_blocks, progress
from spare_lib.theory.predict.chain import _MAX_STATES
from spare_lib.theory.predict.curves import _Cfg, _cfg_key
from spare_lib.theory.predict.jobwide import check_job
from spare_lib.theory.predict.model import MECHANISMS, METHODS, REJOIN_METHODS
from spare_lib.theory.predict.packed import packed_laws
from spare_lib.theory.predict.rejoin_model import rejoin_key


@dataclass(frozen=True)
class BatchPrediction:
    """TTT/T0 of one method on one cluster over r × C: ``ttt_over_t0``, ``restarts`` (expected
    global restarts), ``total_s`` and ``restart_time_s`` (expected wall time in global restarts)
    are arrays of shape (len(r), len(C)); inf where the model finds that the cluster never
    trains (:class:`~.cycle.NoTrainingCycle`). C = 0 stands for no checkpoints."""

    method: str
    N: int
    r: np.ndarray
    C: np.ndarray
    ttt_over_t0: np.ndarray
    restarts: np.ndarray
    total_s: np.ndarray
    restart_time_s: np.ndarray

    def best(self) -> tuple[int, int, float]:
        """(r, C, TTT/T0) of the least TTT/T0 (ties: the first, smallest r and C)."""
        i, j = np.unravel_index(int(np.argmin(self.ttt_over_t0)), self.ttt_over_t0.shape)
        return int(self.r[i]), int(self.C[j]), float(self.ttt_over_t0[i, j])


@njit(cache=True, nogil=True)
def _batch_kernel(tau, G, step, off, delay, R, t0, ckpt_s, Cs, steps, max_states, out,
                  stages=3):  # pragma: no cover - jit
    """For every C of ``Cs`` (0: no checkpoints): the run's chain over the laws whose arrays are
    tau/G/step[off[l]:off[l + 1]] (:func:`~.chain._run_on_lattice`'s chain on the coarse
    lattice, from the block sums of :mod:`.blocks`): writes out[:, c] = (time, restarts,
    restart time). ``stages`` < 3 stops each C early, for ``benchmarks/bench_design.py`` to
    time the parts (out is then not written): 1 after the laws' progress, 2 after their block
    sums."""
    L = off.size - 1
    o = np.empty(3)
    cums = []
    Vs = []
    for law in range(L):  # ∫G along each grid: independent of C
        a, b = off[law], off[law + 1]
        cum = np.empty(b - a)
        cum[0] = 0.0
        for k in range(1, b - a):
            cum[k] = cum[k - 1] + 0.5 * (tau[a + k] - tau[a + k - 1]) * (G[a + k] + G[a + k - 1])
        cums.append(cum)
        Vs.append(np.empty(b - a))
    logt0 = np.log(np.maximum(t0, 1e-300))
    # scratch for every C at once: K + 2 ≤ states + 1 coarse states, J // g + 1 ≤ states blocks
    cap = min(max_states, steps) + 2
    S_all = np.empty(L * 3 * cap)  # flat, so that each C's views stay contiguous
    D_all = np.empty(L * 8 * cap)
    work = np.empty((2 * L + 4) * max(cap + 1, L))
    Jl = np.zeros(L, dtype=np.int64)
    for c in range(Cs.size):
        C = Cs[c]
        M = (steps - 1) // C if C > 0 else 0
        ck = ckpt_s / C if C > 0 else 0.0
        g = -(-M // (max_states - 2)) if M + 1 > max_states else 1
        K = M // g
        b0 = M - K * g
        J = 0
        for law in range(L):
            a, b = off[law], off[law + 1]
            V = progress(tau[a:b], step[a:b], ck, Vs[law])
            Jl[law] = min(M, int(V[V.size - 1] // C)) if C > 0 else 0
            J = max(J, Jl[law])
        if stages < 2:
            continue
        nS = K + 2 if b0 > 0 else K + 1
        S = S_all[:L * 3 * nS].reshape((L, 3, nS))
        D = D_all[:L * 8 * (J // g + 1)].reshape((L, 8, J // g + 1))
        for law in range(L):
            a, b = off[law], off[law + 1]
            law_blocks(tau[a:b], G[a:b], Vs[law], cums[law], delay[law], C, steps, M, g, b0,
                       Jl[law], S[law], D[law])
        if stages < 3:
            continue
        chain_blocks(S, D, K, b0, g, R, t0, logt0, o, work)
        for k in range(3):
            out[k, c] = o[k]


def _valid_r(method: str, N: int, r_values: Iterable[int], layout: str) -> list[int]:
    """The r of ``r_values`` the method takes at N (r = 1 only for CKPT-only and the elastic
    methods; the ruler layout's largest r for SPARe)."""
    if method in ("ckpt", "elastic-drop", "elastic-rebalance"):
        return [1]
    hi = max_ruler_r(N) if method in ("spare", "spare+repair") and layout == "ruler" else N
    return sorted({int(r) for r in r_values if 1 <= int(r) <= hi})


def predict_batch(methods: Sequence[str], N: int, r_values: Iterable[int],
                  C_values: Iterable[int | None], config: Any, *, layout: str = "ruler",
                  max_states: int = _MAX_STATES, job_mtbf_s: float = math.inf,
                  detect_s: float = 0.0) -> dict[str, BatchPrediction]:
    """TTT/T0 of every (method, r, C) on one cluster, as arrays.

    Parameters
    ----------
    methods : sequence of str
        Any of :data:`~spare_lib.theory.predict.METHODS`.
    N : int
        Data-parallel groups, N ≥ 2.
    r_values : iterable of int
        Candidate redundancies; each method keeps those it takes (:func:`_valid_r`: r = 1 for
        CKPT-only and the elastic methods, at most the ruler's largest r for the SPARe ones).
    C_values : iterable of int or None
        Checkpoint intervals in committed steps (≥ 1), None for no checkpoints.
    config : ClusterConfig-like
        As for :func:`~spare_lib.theory.predict.predict`.
    layout : {'ruler', 'consecutive'}
        SPARe's layout.
    max_states : int
        States of the chain at most (≥ 8): 512, :func:`~spare_lib.theory.predict.predict`'s;
        fewer is faster and coarser for small C.
    job_mtbf_s, detect_s : float
        Job-wide failures, as for :func:`~spare_lib.theory.predict.predict`.

    Returns
    -------
    dict
        method -> :class:`BatchPrediction`.

    Notes
    -----
    Cost: the cycles of each (method, r) once and their packed arrays (cached across calls,
    like ``predict``'s), then one numba call for all C; ``benchmarks/bench_design.py``
    measures evaluations per second on a design grid.
    """
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise ValueError(f"methods must be among {METHODS}, got {bad}")
    if not isinstance(N, (int, np.integer)) or N < 2:
        raise ValueError(f"N must be an integer >= 2, got {N!r}")
    C_values = list(C_values)
    if not C_values or any(c is not None and (not isinstance(c, (int, np.integer)) or c < 1)
                           for c in C_values):
        raise ValueError(f"C_values must be integers >= 1 or None, got {C_values!r}")
    Cs = [0 if c is None else int(c) for c in C_values]
    if not isinstance(max_states, (int, np.integer)) or max_states < 8:
        raise ValueError(f"max_states must be an integer >= 8, got {max_states!r}")
    C_arr = np.asarray(Cs, dtype=np.int64)
    nu, detect = check_job(job_mtbf_s, detect_s)
    r_values = list(r_values)
    N, steps = int(N), int(config.steps)
    key = _cfg_key(config)
    rcfg = rejoin_key(config) if any(m in REJOIN_METHODS for m in methods) else ()
    cfg = _Cfg(key)
    t0 = steps * (cfg.compute_per_stack_s + cfg.allreduce_s)
    final = np.where(C_arr > 0, cfg.checkpoint_s, 0.0)
    out: dict[str, BatchPrediction] = {}
    for method in methods:
        rs = _valid_r(method, N, r_values, layout)
        ttt = np.full((len(rs), C_arr.size), np.inf)
        restarts = np.full_like(ttt, np.inf)
        total = np.full_like(ttt, np.inf)
        down = np.full_like(ttt, np.inf)
        for i, r in enumerate(rs):
            arrays = packed_laws(method, N, r, key, rcfg if method in REJOIN_METHODS else (),
                                 steps, layout, nu, detect, MECHANISMS)
            if arrays is None:
                continue
            res = np.empty((3, C_arr.size))
            _batch_kernel(*arrays, float(cfg.checkpoint_s), C_arr, steps, int(max_states), res)
            total[i] = res[0] + final
            ttt[i] = total[i] / t0
            restarts[i] = res[1]
            down[i] = res[2]
        out[method] = BatchPrediction(method, N, np.array(rs), C_arr, ttt, restarts, total, down)
    return out
