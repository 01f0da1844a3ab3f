"""The model over a grid of (method, r, C) for one cluster at once, for design searches.

A search over group sizes × methods × r × C evaluates the same cycles many times: the failure
law's curves depend on (N, failure law) only, a method's cycles on (method, N, r, cluster), and
C enters only in the run's chain over the checkpoint lattice
(:mod:`spare_lib.theory.predict.chain`). :func:`predict_batch` builds (or takes from the caches)
each (method, r)'s cycles once and runs the chain for every C inside one numba call
(:func:`_batch_kernel`), returning arrays. With the chain's default lattice (``max_states`` =
512) the numbers are those of :func:`~spare_lib.theory.predict.predict` (tested to 1e-12); a
coarser lattice trades accuracy for speed (128 states: within 1e-4 of TTT/T0 on the paper's
grid, ``benchmarks/bench_design.py``).

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
from spare_lib.theory.predict.chain import _A, _ELAST, _GT, _LAST, _MAX_STATES, _RW, _chain_kernel
from spare_lib.theory.predict.curves import _Cfg, _cfg_key
from spare_lib.theory.predict.cycle import NoTrainingCycle, _cycles
from spare_lib.theory.predict.jobwide import (
    chain_restart_laws,
    check_job,
    laws_with_job_failures,
)
from spare_lib.theory.predict.model import MECHANISMS, METHODS, REJOIN_METHODS
from spare_lib.theory.predict.rejoin_model import rejoin_key, rejoin_laws


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
def _progress(tau, G, step, ckpt):  # pragma: no cover - jit
    """(V, ∫G) along the grid: :func:`~.chain._unit_law_kernel`'s trapezoid sums."""
    n = tau.size
    V = np.empty(n)
    cum = np.empty(n)
    V[0] = 0.0
    cum[0] = 0.0
    for k in range(1, n):
        dt = tau[k] - tau[k - 1]
        V[k] = V[k - 1] + 0.5 * (1.0 / (step[k] + ckpt) + 1.0 / (step[k - 1] + ckpt)) * dt
        cum[k] = cum[k - 1] + 0.5 * dt * (G[k] + G[k - 1])
    return V, cum


@njit(cache=True, nogil=True)
def _unit_law_strided(tau, G, V, cum, delay, C, steps, M, g, b0, S, I):  # pragma: no cover
    """:func:`~.chain._unit_law_kernel` on the states the chain reads when it runs on every
    g-th checkpoint: S[:, m] for m = 0 and m ≡ b0 (mod g) only (the rest of S is not written),
    I[:, :J + 1] (I zero on entry, at least J + 1 wide). The same operations in the same order
    on those entries, so the same numbers (tested against predict()); O(grid + M/g + J) instead
    of O(grid + M). Returns J."""
    n = tau.size
    J = min(M, int(V[n - 1] // C)) if C > 0 else 0
    tc = np.zeros(J + 2)
    Gc = np.zeros(J + 2)
    Ic = np.full(J + 2, cum[n - 1])
    Gc[0] = 1.0
    Ic[0] = 0.0
    k = 0
    for i in range(J):  # the checkpoints 1..J
        v = float((i + 1) * C)
        while k < n - 2 and V[k + 1] <= v:
            k += 1
        t = tau[k] + (v - V[k]) * (tau[k + 1] - tau[k]) / (V[k + 1] - V[k])
        gv = G[k] + (t - tau[k]) * (G[k + 1] - G[k]) / (tau[k + 1] - tau[k])
        tc[i + 1] = t
        Gc[i + 1] = gv
        Ic[i + 1] = cum[k] + 0.5 * (t - tau[k]) * (G[k] + gv)
    pre = np.zeros(J + 3)  # Σ_{j<m} τ_j dG_j, in the kernel's order (zeros beyond J + 1)
    for j in range(J + 2):
        dgj = Gc[j] - (Gc[j + 1] if j + 1 <= J + 1 else 0.0)
        pre[j + 1] = pre[j] + tc[j] * dgj
    for m in range(J + 1):
        dg = Gc[m] - Gc[m + 1]
        I[0, m] = dg
        I[1, m] = tc[m] * Gc[m] - tc[m + 1] * Gc[m + 1] + Ic[m + 1] - Ic[m] + delay * dg
    r0 = steps - M * C if C > 0 else steps
    k = 0
    m = 0
    while m <= M:
        v = float(r0 + m * C)
        if v >= V[n - 1]:  # beyond the grid (G ≤ 1e-9): never finished
            tm = tau[n - 1]
            gt = 0.0
            Im = cum[n - 1]
        else:
            while k < n - 2 and V[k + 1] <= v:
                k += 1
            tm = tau[k] + (v - V[k]) * (tau[k + 1] - tau[k]) / (V[k + 1] - V[k])
            gt = G[k] + (tm - tau[k]) * (G[k + 1] - G[k]) / (tau[k + 1] - tau[k])
            Im = cum[k] + 0.5 * (tm - tau[k]) * (G[k] + gt)
        if m <= J + 1:
            tcm, Gcm, Icm, ck = tc[m], Gc[m], Ic[m], pre[m]
        else:
            tcm, Gcm, Icm, ck = 0.0, 0.0, cum[n - 1], pre[J + 2]
        last = Gcm - gt
        S[_A, m] = Im + delay * (1.0 - gt)
        S[_GT, m] = gt
        S[_LAST, m] = last
        S[_ELAST, m] = tcm * Gcm - tm * gt + Im - Icm + delay * last
        S[_RW, m] = S[_A, m] - tm * gt - (ck + tcm * last)
        m = b0 if m == 0 and b0 > 0 else m + g  # the next state the chain reads
    return J


@njit(cache=True, nogil=True)
def _batch_kernel(tau, G, step, off, delay, R, t0, ckpt_s, Cs, steps, max_states,
                  out):  # pragma: no cover - jit
    """For every C of ``Cs`` (0: no checkpoints): the run's chain over the laws whose arrays are
    tau/G/step[off[l]:off[l + 1]] (:func:`~.chain._run_on_lattice`: the chain kernel itself,
    the unit law on the states it reads): writes out[:, c] = (time, restarts, rework,
    restart time)."""
    L = off.size - 1
    o = np.empty(4)
    for c in range(Cs.size):
        C = Cs[c]
        M = (steps - 1) // C if C > 0 else 0
        ck = ckpt_s / C if C > 0 else 0.0
        g = -(-M // (max_states - 2)) if M + 1 > max_states else 1
        b0 = M - (M // g) * g
        Vs = []
        cums = []
        J = 0
        for law in range(L):
            a, b = off[law], off[law + 1]
            V, cum = _progress(tau[a:b], G[a:b], step[a:b], ck)
            Vs.append(V)
            cums.append(cum)
            if C > 0:
                J = max(J, min(M, int(V[V.size - 1] // C)))
        S = np.empty((L, 5, M + 1))
        I = np.zeros((L, 2, J + 1))
        for law in range(L):
            a, b = off[law], off[law + 1]
            _unit_law_strided(tau[a:b], G[a:b], Vs[law], cums[law], delay[law], C, steps, M, g,
                              b0, S[law], I[law])
        _chain_kernel(S, I, J, g, R, t0, o)
        for k in range(4):
            out[k, c] = o[k]


def _valid_r(method: str, N: int, r_values: Iterable[int], layout: str) -> list[int]:
    """The r of ``r_values`` the method takes at N (r = 1 only for CKPT-only and the elastic
    methods; the ruler layout's largest r for SPARe)."""
    if method in ("ckpt", "elastic-drop", "elastic-rebalance"):
        return [1]
    hi = max_ruler_r(N) if method in ("spare", "spare+repair") and layout == "ruler" else N
    return sorted({int(r) for r in r_values if 1 <= int(r) <= hi})


def _laws(method: str, N: int, r: int, key: tuple, config: Any, steps: int, layout: str):
    """The chain's cycle laws of (method, N, r) on the cluster (cached by the model)."""
    if method in REJOIN_METHODS:
        rcfg = rejoin_key(config)
        if method == "spare+repair" and rcfg[0] == math.inf:
            method = "spare"
        else:
            return rejoin_laws(method, N, r, key, rcfg, steps, layout)[0]
    R, _w, _p, first, ss, transient, t_eq = _cycles(method, N, r, layout, MECHANISMS, key)
    return [(0.0, 0.0, first)] + transient + [(t_eq, R, ss)]


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
    Cost: the cycles of each (method, r) once (cached across calls, like ``predict``'s), then
    one numba call for all C; ``benchmarks/bench_design.py`` measures evaluations per second on
    a design grid.
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
            try:
                laws = _laws(method, N, r, key, config, steps, layout)
            except NoTrainingCycle:
                continue
            if nu > 0.0:
                laws = laws_with_job_failures(laws, nu, detect,
                                              chain_restart_laws(laws, N, MECHANISMS, key))[0]
            cyc = [c for _, _, c in laws]
            off = np.cumsum([0] + [c.tau.size for c in cyc]).astype(np.int64)
            res = np.empty((4, C_arr.size))
            _batch_kernel(np.concatenate([c.tau for c in cyc]), np.concatenate([c.G for c in cyc]),
                          np.concatenate([c.step for c in cyc]), off,
                          np.array([float(c.delay) for c in cyc]),
                          np.array([float(R) for _, R, _ in laws]),
                          np.array([float(t) for t, _, _ in laws]), float(cfg.checkpoint_s),
                          C_arr, steps, int(max_states), res)
            total[i] = res[0] + final
            ttt[i] = total[i] / t0
            restarts[i] = res[1]
            down[i] = res[3]
        out[method] = BatchPrediction(method, N, np.array(rs), C_arr, ttt, restarts, total, down)
    return out
