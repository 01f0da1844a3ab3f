"""The run of the predictive model as a chain over the checkpoint lattice.

A run (:func:`spare_lib.theory.predict.predict`) is a sequence of cycles, each a global restart
and training from the last checkpoint until a wipe-out or the end. Its state is the number of
steps left, on the lattice of checkpoints; a cycle from a state either finishes, or is wiped
out between two of its checkpoints and moves down. :func:`_unit_law` turns one cycle law
(a :class:`~spare_lib.theory.predict.cycle._Cycle`) into per-state probabilities, times and
rework (numba, with a numpy oracle in ``tests/theory/test_predict_run.py``), and
:func:`_run_on_lattice` sweeps the chain from the top state down for the expected totals.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

#: Rows of the per-state array of :func:`_unit_law`.
_A, _GT, _RW, _LAST, _ELAST = range(5)
#: Floor of a probability the chain divides by: a unit that (almost) never gets past its first
#: checkpoint, or never finishes the last stretch (TTT then of order 1e12 units, not inf).
_P_FLOOR = 1e-12


@njit(cache=True, nogil=True)
def _unit_law_kernel(tau, G, step, delay, ckpt, C, steps, S, I):  # pragma: no cover - jit
    """Numba kernel of :func:`_unit_law` (oracle: the numpy version in
    ``tests/theory/test_predict_run.py``): fills S (5, M + 1) and I[:, :J + 1] (I zero on
    entry), returns J. ``step`` is the cycle's step time without checkpoints, ``ckpt`` the
    checkpoint time per step; C = 0: no checkpoints (one state, ``steps``)."""
    n = tau.size
    M = S.shape[1] - 1
    # progress V (the trapezoid rule of _Cycle.V) and ∫_0^τ G (that of _Cycle.trapz)
    V = np.empty(n)
    cum = np.empty(n)
    V[0] = 0.0
    cum[0] = 0.0
    for k in range(1, n):
        dt = tau[k] - tau[k - 1]
        V[k] = V[k - 1] + 0.5 * (1.0 / (step[k] + ckpt) + 1.0 / (step[k - 1] + ckpt)) * dt
        cum[k] = cum[k - 1] + 0.5 * dt * (G[k] + G[k - 1])
    J = min(M, int(V[n - 1] // C)) if C > 0 else 0
    # times, survival and ∫G at the M + 1 states' ends and at the checkpoints 1..J (each an
    # increasing sequence: one merge along the grid; linear in V and in τ, as np.interp)
    tm = np.empty(M + 1)
    gt = np.empty(M + 1)
    Im = np.empty(M + 1)
    tc = np.zeros(M + 2)
    Gc = np.zeros(M + 2)
    Ic = np.full(M + 2, cum[n - 1])
    Gc[0] = 1.0
    Ic[0] = 0.0
    r0 = steps - M * C if C > 0 else steps
    for part in range(2):
        k = 0
        cnt = M + 1 if part == 0 else J
        for i in range(cnt):
            v = float(r0 + i * C) if part == 0 else float((i + 1) * C)
            if part == 0 and v >= V[n - 1]:  # beyond the grid (G ≤ 1e-9): never finished
                tm[i] = tau[n - 1]
                gt[i] = 0.0
                Im[i] = cum[n - 1]
                continue
            while k < n - 2 and V[k + 1] <= v:
                k += 1
            t = tau[k] + (v - V[k]) * (tau[k + 1] - tau[k]) / (V[k + 1] - V[k])
            g = G[k] + (t - tau[k]) * (G[k + 1] - G[k]) / (tau[k + 1] - tau[k])
            integ = cum[k] + 0.5 * (t - tau[k]) * (G[k] + g)
            if part == 0:
                tm[i] = t
                gt[i] = g
                Im[i] = integ
            else:
                tc[i + 1] = t
                Gc[i + 1] = g
                Ic[i + 1] = integ
    ck = 0.0  # Σ_{j<m} τ_j dG_j
    for m in range(M + 1):
        dg = Gc[m] - Gc[m + 1]
        fail = 1.0 - gt[m]
        last = Gc[m] - gt[m]
        S[_A, m] = Im[m] + delay * fail
        S[_GT, m] = gt[m]
        S[_LAST, m] = last
        S[_ELAST, m] = tc[m] * Gc[m] - tm[m] * gt[m] + Im[m] - Ic[m] + delay * last
        S[_RW, m] = S[_A, m] - tm[m] * gt[m] - (ck + tc[m] * last)
        ck += tc[m] * dg
        if m <= J:
            I[0, m] = dg
            I[1, m] = (tc[m] * Gc[m] - tc[m + 1] * Gc[m + 1] + Ic[m + 1] - Ic[m]
                       + delay * dg)
    return J


def _unit_law(cyc: Any, C: int | None, steps: int,
              ckpt_per_step: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """One cycle on the checkpoint lattice: how a unit (a restart, then this cycle) started in
    state m ends. A unit starts at a checkpoint, so state m has s_m = r0 + m·C steps to go,
    m = 0..M, M = ⌊(steps − 1)/C⌋, r0 = steps − M·C ∈ [1, C] (C = None: one state, s_0 =
    steps).

    With V(τ) the cycle's progress (``ckpt_per_step`` added to its step time), τ_j its j-th
    checkpoint (V(τ_j) = j·C, τ_0 = 0) and t_m the time it commits s_m steps (V(t_m) = s_m),
    the uptime Y (P(Y > τ) = G(τ); Y = 0 for a wipe-out at the first poll, which is noticed
    ``delay`` after it) ends the cycle

    * with the last step committed: probability G(t_m), after t_m;
    * in a wipe-out between checkpoints j and j + 1 (j < m): probability dG_j = G(τ_j) −
      G(τ_{j+1}) (G(τ_0) := 1), in state m − j;
    * in a wipe-out after its last checkpoint τ_m: probability last_m = G(τ_m) − G(t_m), in
      state 0.

    Returns per state (5, M + 1): a = E[time in the cycle] = ∫_0^{t_m} G + delay·(1 −
    G(t_m)), G(t_m), rw = E[uptime after the last checkpoint; wipe-out] (rework), last_m and
    eLast_m = E[Y + delay; wipe-out after τ_m]; per interval (2, J + 1): dG_j and eJ_j =
    E[Y + delay; τ_j ≤ Y < τ_{j+1}] (J: the last checkpoint on the cycle's grid). Times are
    read off the grid as :func:`~spare_lib.theory.predict.cycle._time_to` does (linear in V
    and in τ; a state beyond the grid, where G ≤ 1e-9, is never finished); ∫G is
    :meth:`~spare_lib.theory.predict.cycle._Cycle.trapz` up to t, the last cell cut at t. Every
    entry is linear in the law, so mixing two laws mixes these arrays."""
    M = (steps - 1) // C if C else 0
    S = np.empty((5, M + 1))
    I = np.zeros((2, M + 1))
    J = _unit_law_kernel(cyc.tau, cyc.G, cyc.step, float(cyc.delay), float(ckpt_per_step),
                         int(C or 0), int(steps), S, I)
    return S, I[:, :J + 1]


#: The returns to a state are followed in blocks over which the restart time grows by at most
#: this fraction (the law of a restart is tabulated in log t0, so it hardly changes within a
#: block); typically a block is one visit.
_BLOCK_GROWTH = 0.02


@njit(cache=True, nogil=True)
def _geometric_block(x, n):  # pragma: no cover - jit
    """(Σ q^i, Σ i·q^i over 0 ≤ i < n, q^n) for q = 1 − x ∈ [0, 1), n ≥ 1 or ∞ (stable
    for q near 1: q^n = exp(n·log1p(−x)); the second sum by its series when n·x ≤ 1e-3)."""
    q = 1.0 - x
    if n == np.inf:
        return 1.0 / x, q / (x * x), 0.0
    ln = n * np.log1p(-x) if x < 1.0 else -np.inf
    qn = np.exp(ln)
    g0 = -np.expm1(ln) / x
    if -ln > 1e-3:
        g1 = (q * g0 - n * qn) / x
    else:  # Σ i·(1 − i·x), relative error < 1e-6
        g1 = n * (n - 1.0) / 2.0 - x * n * (n - 1.0) * (2.0 * n - 1.0) / 6.0
    return g0, g1, qn


@njit(cache=True, nogil=True)
def _law_at(t, t0):  # pragma: no cover - jit
    """(A, B, w): the law of a restart starting at t is (1 − w)·law A + w·law B — linear in
    log t0 between the tabulated laws 1..L − 1, the first of them before t0[1], the last (the
    equilibrium law) from t0[L − 1] on."""
    L = t0.size
    if t >= t0[L - 1]:
        return L - 1, L - 1, 0.0
    B = 1
    while B < L - 1 and t0[B] < t:
        B += 1
    A = max(B - 1, 1)
    if A == B or t <= t0[A]:
        return B, B, 0.0
    return A, B, np.log(t / t0[A]) / np.log(t0[B] / t0[A])


@njit(cache=True, nogil=True)
def _scatter(law, k, v, vt, keep_return, ctx, Dlo, Dhi, Elo, Ehi, S, I, pi, th):  # pragma: no cover - jit
    """Deposit the ends of ``v`` visits of state k under ``law`` (``vt``: Σ over them of
    start time + restart) on the arrivals of the states they leave for: arrivals ``pi`` and
    their start times ``th`` (the exit's start + restart + E[uptime] of the interval it ends
    in). ``keep_return``: also the visits that end in state k again (the first cycle's)."""
    g, K, b0, Bs, J = ctx
    f = _fine_index(k, ctx)
    if k == Bs:  # state 0: every wipe-out comes back
        if keep_return:
            pi[k] += v * S[law, _LAST, 0]
            th[k] += vt * S[law, _LAST, 0] + v * S[law, _ELAST, 0]
        return
    pi[Bs] += v * S[law, _LAST, f]  # a wipe-out after the last checkpoint: state 0
    th[Bs] += vt * S[law, _LAST, f] + v * S[law, _ELAST, f]
    # between checkpoints j and j + 1, j = a·g + b: fine state f − j, split between the coarse
    # states k + a and k + a + 1 in proportion to the distance (translation invariant)
    for a in range(min(K - k - 1, J // g) + 1):
        if a > 0 or keep_return:
            pi[k + a] += v * Dlo[law, a]
            th[k + a] += vt * Dlo[law, a] + v * Elo[law, a]
        if g > 1:
            pi[k + a + 1] += v * Dhi[law, a]
            th[k + a + 1] += vt * Dhi[law, a] + v * Ehi[law, a]
    if b0 > 0:  # below the lowest coarse state (fine b0): split between it and state 0
        for b in range(b0):
            j = (K - k) * g + b
            if j > J:
                break
            lo = (b0 - b) / b0
            if k < K or keep_return:
                pi[K] += v * I[law, 0, j] * lo
                th[K] += (vt * I[law, 0, j] + v * I[law, 1, j]) * lo
            pi[Bs] += v * I[law, 0, j] * (1.0 - lo)
            th[Bs] += (vt * I[law, 0, j] + v * I[law, 1, j]) * (1.0 - lo)


@njit(cache=True, nogil=True)
def _fine_index(k, ctx):  # pragma: no cover - jit
    """Fine state (steps left = r0 + C·index) of coarse state k."""
    g, K, b0, Bs, J = ctx
    return 0 if k == Bs else b0 + (K - k) * g


@njit(cache=True, nogil=True)
def _returns(law, k, ctx, Dlo, Elo, S, I):  # pragma: no cover - jit
    """(P, E[uptime + delay; ·]) of a visit of state k under ``law`` ending in state k
    again."""
    g, K, b0, Bs, J = ctx
    if k == Bs:
        return S[law, _LAST, 0], S[law, _ELAST, 0]
    if k < K:
        return Dlo[law, 0], Elo[law, 0]
    q = 0.0
    e = 0.0
    for b in range(min(b0, J + 1)):
        q += I[law, 0, b] * (b0 - b) / b0
        e += I[law, 1, b] * (b0 - b) / b0
    return q, e


@njit(cache=True, nogil=True)
def _chain_kernel(S, I, J, g, R, t0, out):  # pragma: no cover - jit
    """Numba kernel of :func:`_run_on_lattice`.

    S (L, 5, M + 1) and I (L, 2, ≥ J + 1) are the :func:`_unit_law` arrays of the laws on the
    fine lattice (I zero beyond each law's last checkpoint), R (L,) their restart means, t0
    (L,) the restart start times they hold at: law 0 is the first cycle (from t = 0, no
    restart), laws 1..L − 1 restarts at t0[1] < … < t0[L − 1] = t_eq (the last: equilibrium,
    also beyond). The chain runs on the coarse states k = 0..K at fine states M − k·g, plus
    fine state 0 when M is not a multiple of g (g = 1: the fine lattice itself). Writes
    out = (time, restarts, rework, restart time)."""
    L = S.shape[0]
    M = S.shape[2] - 1
    K = M // g
    b0 = M - K * g
    Bs = K + 1 if b0 > 0 else K  # state 0 (fine): the last stretch
    ctx = (g, K, b0, Bs, J)
    nJ = J // g + 1
    Dlo = np.zeros((L, nJ))
    Dhi = np.zeros((L, nJ))
    Elo = np.zeros((L, nJ))
    Ehi = np.zeros((L, nJ))
    for law in range(L):
        for j in range(J + 1):
            a = j // g
            hi = (j - a * g) / g
            Dlo[law, a] += I[law, 0, j] * (1.0 - hi)
            Dhi[law, a] += I[law, 0, j] * hi
            Elo[law, a] += I[law, 1, j] * (1.0 - hi)
            Ehi[law, a] += I[law, 1, j] * hi
    n = Bs + 1
    pi = np.zeros(n)  # arrivals at each state (restarts that start there)
    th = np.zeros(n)  # Σ over arrivals of their start time
    wv = np.zeros(L)  # visits of the current state, per law (the mixture weights)
    wt = np.zeros(L)  # Σ over those visits of (start time + restart)
    # the first cycle, from state M at t = 0
    out[0] = S[0, _A, M]
    out[1] = 0.0
    out[2] = S[0, _RW, M]
    out[3] = 0.0
    _scatter(0, 0, 1.0, 0.0, True, ctx, Dlo, Dhi, Elo, Ehi, S, I, pi, th)
    for k in range(n):
        p = pi[k]
        if p <= 1e-300:
            continue
        f = _fine_index(k, ctx)
        # the arrivals come back to state k after a wipe-out before the first checkpoint
        # (state 0: after any wipe-out); the visits are followed in blocks of constant law,
        # the restart time growing by the mean duration of a visit that comes back
        t = th[k] / p
        mass = p
        wv[:] = 0.0
        wt[:] = 0.0
        last_block = False
        while True:
            A, B, w = _law_at(t, t0)
            r_ = (1.0 - w) * R[A] + w * R[B]
            qa, ea = _returns(A, k, ctx, Dlo, Elo, S, I)
            qb, eb = _returns(B, k, ctx, Dlo, Elo, S, I)
            q = (1.0 - w) * qa + w * qb
            x = max(1.0 - q, _P_FLOOR)
            q = 1.0 - x
            c = r_ + (((1.0 - w) * ea + w * eb) / q if q > 0.0 else 0.0)  # a visit back
            # a block of nb visits (nb = ∞: all the rest, the law no longer changes)
            if last_block or A == L - 1 or L == 2:
                last_block = True
                nb = np.inf
            else:
                nb = max(1.0, np.floor(_BLOCK_GROWTH * t / c)) if c > 0.0 else 1.0
            g0, g1, qn = _geometric_block(x, nb)
            vb = mass * g0
            tb = mass * (t * g0 + c * g1) + vb * r_
            out[0] += vb * (r_ + (1.0 - w) * S[A, _A, f] + w * S[B, _A, f])
            out[1] += vb
            out[2] += vb * ((1.0 - w) * S[A, _RW, f] + w * S[B, _RW, f])
            out[3] += vb * r_
            wv[A] += (1.0 - w) * vb
            wt[A] += (1.0 - w) * tb
            wv[B] += w * vb
            wt[B] += w * tb
            if last_block:
                break
            mass *= qn
            t += nb * c
            if mass <= 1e-15 * p:
                last_block = True
        for law in range(1, L):
            if wv[law] > 0.0:
                _scatter(law, k, wv[law], wt[law], False, ctx, Dlo, Dhi, Elo, Ehi, S, I, pi, th)


#: States of the chain at most. With more checkpoints in a run (C < steps/510), the states
#: are every g-th checkpoint, and a unit that ends between two of them is split between the
#: two in proportion to the distance (its mass, mean steps left and start time are kept; the
#: times and rework of every visit stay those of the exact checkpoints): TTT/T0 within 1e-4
#: of the exact chain on the paper grid (C = 3–32 at 10,000 steps), ≤ 4 ms at C = 1.
_MAX_STATES = 512


def _run_on_lattice(laws: list[tuple[float, float, Any]], C: int | None, steps: int,
                    ckpt_per_step: float = 0.0) -> dict[str, float]:
    """Expected totals of a run: time, restarts, rework (uptime lost after the last
    checkpoint, or since the start of the run, at the wipe-outs) and restart time.

    ``laws``: (t0, R, cycle) — the first cycle (fresh clocks from t = 0; t0 and R ignored),
    then the restart laws (restart mean R, cycle after a restart that starts at t0) in
    increasing t0, the last the equilibrium one at t_eq; the cycles without checkpoint costs
    (``ckpt_per_step`` is added here).

    The run is a chain over the states of the checkpoint lattice (:func:`_unit_law`): the first
    cycle from state M, then restart + cycle units until the last step is committed. A unit
    only stays or moves down, so one sweep from M to 0 gives, per state, the expected arrivals
    (restarts that start there) and their mean start time; the arrivals return a geometric
    number of times (wipe-outs before the first checkpoint) and then leave for the lower
    states or finish. Each visit is a cycle of the law of a restart at the state's mean
    arrival time (linear in log t0 between the laws, as the transient is tabulated), so the
    totals are exact for the chain once the restarts reach t_eq, and for exponential clocks
    (one law) throughout."""
    M = (steps - 1) // C if C else 0
    L = len(laws)
    S = np.empty((L, 5, M + 1))
    I = np.zeros((L, 2, M + 1))
    J = 0
    for k, (_, _, c) in enumerate(laws):
        J = max(J, _unit_law_kernel(c.tau, c.G, c.step, float(c.delay), float(ckpt_per_step),
                                    int(C or 0), int(steps), S[k], I[k]))
    R = np.array([float(r) for _, r, _ in laws])
    t0 = np.array([float(t) for t, _, _ in laws])
    out = np.empty(4)
    _chain_kernel(S, I, J, -(-M // (_MAX_STATES - 2)) if M + 1 > _MAX_STATES else 1, R, t0,
                  out)
    return {"time": float(out[0]), "restarts": float(out[1]), "rework": float(out[2]),
            "restart_time": float(out[3])}
