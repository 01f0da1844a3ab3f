"""The count of groups away, killed at a wipe-out: the away set's law given that the cycle survived.

The fresh-draw form of :mod:`spare_lib.theory.predict.rejoin` weighs the k groups away at τ as
Binomial(N, a(τ)) restricted to the sets that do not wipe out (weights ∝ P0(k)), and the
cycle survives with the hazard h(τ) = λ_live(τ)·E[(N − k)·q_k | no wipe-out]. That is the law of
a set drawn afresh at τ. A cycle that has survived to τ has already lost the paths that passed
close to a wipe-out, so its away count is lower than the restricted Binomial's (the
quasi-stationary law of the killed process), and its hazard lower. Notebook 55 §5b measures the
gap on the bare away process (``validation_rejoin.away_process_uptime``): fresh draws give a
restart rate about 1.11 times the true one at N = 32, r = 5, a 64-minute group MTBF and a
30-minute time away.

This module keeps that memory with a Markov chain on the count k ∈ {0, …, N} of groups away,
killed at a wipe-out:

* a live group fails at rate β(τ) = λ_live(τ), so k → k + 1 at rate β·(N − k); the new set
  wipes out with probability q_k = 1 − P0(k + 1)/P0(k) (the chain is killed), else survives;
* an away group comes back at rate δ(τ), so k → k − 1 at rate δ·k.

In a grid cell [τ_j, τ_(j+1)] the rates are constant: β = ΔU/(Δτ·(1 − ā)) (ΔU a group's
notices in the cell, ā the mean of a over it) and δ = max(ΔU − Δa, 0)/(Δτ·ā) (the returns of the
cell over the time away), so without the killing each group is a two-state chain whose away
probability follows a(τ), and k stays Binomial(N, a(τ)) (independent groups) to second order
in the cell. With the killing the chain's mass over k is the law of the count *and* the cycle's
survival: G(τ) = Σ_k p(k, τ) and E[f(k) | survived] = Σ_k p(k, τ)·f(k)/G(τ). The start is
p(k, 0) = Binomial(N, a(0))·P0(k) (the groups dead at the first poll), as in the fresh form.

Given k, the set is taken uniform over the k-sets that do not wipe out (the lumped chain); its
memory is in the count only. That is enough for the effect measured on the bare away process:
with constant rates (exponential times away) the lumped chain's restart rate from fresh draws
is 1.115 times its own, against the full set process's 1.114 with fixed times away
(``tests/theory/test_predict_rejoin_chain.py`` computes the first and checks the chain against
the matrix exponential of its generator).

Numerics: per cell, ⌈0.5·Δτ·(β + δ)⌉ sub-steps (at most 16) of TR-BDF2 (L-stable, second
order) on the tridiagonal generator (Thomas' algorithm), over the window of 8 s.d. of the
unkilled Binomial at both ends of the cell, capped at the last k with P0(k) > 1e-14. The cycle
grids of :mod:`~.rejoin_law` are fine enough that more sub-steps change nothing that matters:
at the points of notebook 55's grid and §5b, 32 sub-steps per unit of Δτ·(β + δ) (at most
1,024) move TTT/T0 by at most 3e-5 relative.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Sub-steps of a cell per unit of a group's rate (β + δ)·Δτ, and their bounds.
_SUBSTEPS_PER_RATE = 0.5
_MAX_SUBSTEPS = 16
_WINDOW_SD = 8.0
_P0_FLOOR = 1e-14
#: A node's chain stops once its mass (the survival) is below this: the cycle model cuts the
#: cycle where the mixed survival falls below 1e-9 (:data:`~.cycle._G_FLOOR`).
_G_STOP = 1e-30
#: Sub-steps of a cell past which backward Euler replaces TR-BDF2 when a stage goes negative.
_POSITIVE_CAP = 4096
#: TR-BDF2's first stage (γ = 2 − √2: L-stable, second order).
_GAMMA = 2.0 - 2.0 ** 0.5


@njit(cache=True, nogil=True)
def _tridiag(p, lo, hi, c, diag, sub, sup, rhs, cp, dp):  # pragma: no cover - jit
    """p[lo..hi] = solution of (I − cQ)x = rhs on [lo, hi] (Thomas' algorithm), Q tridiagonal:
    diagonal −diag, below sub (the inflow from k − 1), above sup (the inflow from k + 1)."""
    cp[lo] = -c * sup[lo] / (1.0 + c * diag[lo])
    dp[lo] = rhs[lo] / (1.0 + c * diag[lo])
    for k in range(lo + 1, hi + 1):
        m = 1.0 + c * diag[k] + c * sub[k] * cp[k - 1]
        cp[k] = -c * sup[k] / m
        dp[k] = (rhs[k] + c * sub[k] * dp[k - 1]) / m
    p[hi] = dp[hi]
    for k in range(hi - 1, lo - 1, -1):
        p[k] = dp[k] - cp[k] * p[k + 1]


@njit(cache=True, nogil=True)
def _advance(p, ps, lo, hi, ns, h, diag, sub, sup, rhs, cp, dp, euler):  # pragma: no cover - jit
    """``ns`` sub-steps of length h of p' = Qp on [lo, hi]: TR-BDF2, or backward Euler with
    ``euler``; False (p then spoilt) as soon as a TR-BDF2 stage has a mass below −1e-13 of the
    total, clipped to 0 above that (rounding)."""
    g = _GAMMA
    w1 = 1.0 / (g * (2.0 - g))
    w0 = (1.0 - g) ** 2 / (g * (2.0 - g))
    cb = (1.0 - g) / (2.0 - g)
    for _s in range(ns):
        if euler:  # (I − hQ)p' = p
            for k in range(lo, hi + 1):
                rhs[k] = p[k]
            _tridiag(p, lo, hi, h, diag, sub, sup, rhs, cp, dp)
            continue
        c = 0.5 * g * h  # TR stage: (I − cQ)p* = (I + cQ)p
        tot = 0.0
        for k in range(lo, hi + 1):
            v = (1.0 - c * diag[k]) * p[k]
            if k > lo:
                v += c * sub[k] * p[k - 1]
            if k < hi:
                v += c * sup[k] * p[k + 1]
            rhs[k] = v
            tot += p[k]
        _tridiag(ps, lo, hi, c, diag, sub, sup, rhs, cp, dp)
        for k in range(lo, hi + 1):  # BDF2 stage
            if ps[k] < -1e-13 * tot:
                return False
            ps[k] = max(ps[k], 0.0)
            rhs[k] = w1 * ps[k] - w0 * p[k]
        _tridiag(p, lo, hi, cb * h, diag, sub, sup, rhs, cp, dp)
        for k in range(lo, hi + 1):
            if p[k] < -1e-13 * tot:
                return False
            p[k] = max(p[k], 0.0)
    return True


@njit(cache=True, nogil=True)
def _chain_kernel(tau, a, U, N, kmax, p0, feats, G, out):  # pragma: no cover - jit
    """For each node (row of ``a`` and ``U``) propagate the killed count chain over ``tau``:
    ``G[i, j]`` its mass at τ_j, ``out[f, i, j]`` the mean of ``feats[f, k]`` under it (given
    survival). Each sub-step is one TR-BDF2 step on the window [lo, hi] of the cell (8 s.d. of
    the unkilled Binomial at both of its ends, reflecting: the moves out of it that do not wipe
    out stay at its edge); a node stops (G = 0, the means kept) once its mass is below
    ``_G_STOP``. Oracle: the matrix exponential of the generator in the tests."""
    n_nodes, n_tau = a.shape
    K = kmax + 1
    nf = feats.shape[0]
    p = np.empty(K)
    # the killed-free share of a birth from k: P0(k + 1)/P0(k) (0 where P0(k) = 0)
    surv = np.zeros(K)
    for k in range(K):
        if p0[k] > 0.0 and k < N:
            nxt = p0[k + 1] if k + 1 < p0.size else 0.0
            surv[k] = nxt / p0[k]
    sub = np.empty(K)
    diag = np.empty(K)
    sup = np.empty(K)
    cp = np.empty(K)
    dp = np.empty(K)
    rhs = np.empty(K)
    ps = np.empty(K)
    pc = np.empty(K)
    for i in range(n_nodes):
        x = min(max(a[i, 0], 0.0), 1.0)
        # Binomial(N, x)·P0(k) by the recurrence, in logs for the start
        for k in range(K):
            p[k] = 0.0
        if x <= 0.0:
            p[0] = p0[0]
        elif x < 1.0:
            lb = N * np.log1p(-x)
            lr = np.log(x) - np.log1p(-x)
            for k in range(K):
                p[k] = np.exp(lb) * p0[k]
                if k < N:
                    lb += lr + np.log((N - k) / (k + 1.0))
        stopped = False
        for j in range(n_tau):
            if j > 0 and not stopped:
                dt = tau[j] - tau[j - 1]
                abar = 0.5 * (a[i, j] + a[i, j - 1])
                dU = max(U[i, j] - U[i, j - 1], 0.0)
                beta = dU / (dt * (1.0 - abar)) if abar < 1.0 else 0.0
                ret = dU - (a[i, j] - a[i, j - 1])
                delta = ret / (dt * abar) if (abar > 1e-300 and ret > 0.0) else 0.0
                ns = int(min(max(np.ceil(_SUBSTEPS_PER_RATE * dt * (beta + delta)), 1.0),
                             _MAX_SUBSTEPS))
                # Q: out of k at β(N − k) + δk, into k from k − 1 at β(N − k + 1)·surv(k − 1)
                # and from k + 1 at δ(k + 1)
                for k in range(K):
                    diag[k] = beta * (N - k) + delta * k
                    sub[k] = beta * (N - k + 1) * surv[k - 1] if k > 0 else 0.0
                    sup[k] = delta * (k + 1) if k + 1 < K else 0.0
                # the window: 8 s.d. of Binomial(N, a) at both ends of the cell, reflecting:
                # the returns out of lo and the births out of hi that do not wipe out stay (the
                # mass there is negligible; were they dropped, a cycle that cannot wipe out would
                # lose ~1e-8 of its survival over a long run)
                lo, hi = K - 1, 0
                for x in (a[i, j - 1], a[i, j]):
                    x = min(max(x, 0.0), 1.0)
                    sd = _WINDOW_SD * np.sqrt(N * x * (1.0 - x)) + 2.0
                    lo = min(lo, int(max(np.floor(N * x - sd), 0.0)))
                    hi = max(hi, int(min(np.ceil(N * x + sd), K - 1.0)))
                lo = min(lo, hi)
                for k in range(K):  # outside the window: dropped
                    if k < lo or k > hi:
                        p[k] = 0.0
                diag[lo] -= delta * lo
                if hi < N:
                    diag[hi] -= beta * (N - hi) * surv[hi]
                # TR-BDF2 while every stage stays ≥ 0 (then G cannot rise); else 4× the
                # sub-steps, and backward Euler (an M-matrix: ≥ 0 at any step) past the cap
                for k in range(lo, hi + 1):
                    pc[k] = p[k]
                while not _advance(p, ps, lo, hi, ns, dt / ns, diag, sub, sup, rhs, cp, dp,
                                   ns > _POSITIVE_CAP):
                    for k in range(lo, hi + 1):
                        p[k] = pc[k]
                    ns *= 4
            s = 0.0
            if not stopped:
                for k in range(K):
                    s += p[k]
                if s < _G_STOP:
                    stopped = True
                    s = 0.0
            G[i, j] = s
            if stopped and j > 0:
                for f in range(nf):
                    out[f, i, j] = out[f, i, j - 1]
                continue
            inv = 1.0 / s if s > 1e-300 else 0.0
            for f in range(nf):
                acc = 0.0
                for k in range(K):
                    acc += p[k] * feats[f, k]
                out[f, i, j] = acc * inv


def killed_count_chain(tau: np.ndarray, a: np.ndarray, U: np.ndarray, N: int, p0: np.ndarray,
                       feats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The killed count chain of the module docstring on the grid ``tau``.

    Parameters
    ----------
    tau : (n,) array
        The cycle's τ grid, from 0.
    a, U : (nodes, n) arrays
        Per node of the restart's duration: a group's away probability a(τ) and its expected
        notices U(τ) (:class:`~spare_lib.theory.predict.rejoin_law.GroupProcess`).
    N : int
        Groups.
    p0 : (N + 1,) array
        P0(k), the share of the k-sets that do not wipe out (non-increasing).
    feats : (F, N + 1) array
        Functions of k to average given survival.

    Returns
    -------
    G : (nodes, n) array
        The cycle's survival (no wipe-out by τ).
    means : (F, nodes, n) array
        E[feats[f](k) | no wipe-out by τ].
    """
    tau = np.ascontiguousarray(tau, dtype=float)
    a = np.ascontiguousarray(np.atleast_2d(a), dtype=float)
    U = np.ascontiguousarray(np.atleast_2d(U), dtype=float)
    if a.shape != U.shape or a.shape[1] != tau.size:
        raise ValueError(f"a and U must both have shape (nodes, {tau.size}), got {a.shape} and "
                         f"{U.shape}")
    p0 = np.ascontiguousarray(p0, dtype=float)
    amax = float(np.clip(a.max(), 0.0, 1.0))
    top = min(int(np.ceil(N * amax + _WINDOW_SD * np.sqrt(N * amax * (1.0 - amax)) + 2.0)), N)
    live = np.nonzero(p0 > _P0_FLOOR)[0]
    kmax = int(min(top, live[-1] if live.size else 0))
    feats = np.ascontiguousarray(feats[:, :kmax + 1], dtype=float)
    G = np.empty(a.shape)
    means = np.empty((feats.shape[0], *a.shape))
    _chain_kernel(tau, a, U, int(N), kmax, p0, feats, G, means)
    return G, means
