"""The chain over the checkpoint lattice from per-block sums, for many C at once (design searches).

:func:`~spare_lib.theory.predict.chain._run_on_lattice` feeds the chain one cycle law per
checkpoint: per state m the ends of a unit (S) and per checkpoint interval j the probability and
uptime of a wipe-out in it (I), O(M) entries per law and C. When the chain runs on every g-th
checkpoint (more than ``max_states`` checkpoints), it reads I only through sums over blocks of g
consecutive intervals, weighted linearly in the position inside the block. This module computes
those sums without visiting every checkpoint.

With Gc_j the survival at checkpoint j, tc_j its time and Ic_j = ∫_0^tc_j G (Gc_0 = 1, tc_0 =
Ic_0 = 0; beyond the law's last checkpoint J_l: Gc = tc = 0, Ic = ∫G over the whole grid), the
interval entries are differences,

    I0_j = F0(j) − F0(j + 1),  F0(j) = Gc_j,
    I1_j = F1(j) − F1(j + 1),  F1(j) = (tc_j + delay)·Gc_j − Ic_j,

so a sum with the weights 1 − b/g over b = 0..g − 1 of block a is, by parts,
F(ag) − (1/g) Σ_{b=1..g} F(ag + b), and with the weights b/g it is (1/g) Σ_{b=1..g} F(ag + b) −
F(ag + g) (the same with b0 in place of g for the stretch below the lowest coarse state). Inside
one cell of the cycle's τ grid the time of checkpoint j is linear in j (progress V is linear in τ
there, as :func:`~.chain._unit_law_kernel` interpolates it), G is linear in τ and ∫G quadratic,
so F0 is linear and F1 quadratic in j, and Σ F over the checkpoints of a cell is a closed form
(sums of 1, u and u² over u = 0..n − 1). Per law and C the cost is O(grid cells + blocks +
states) instead of O(M): the same numbers as the chain of :func:`~.chain._run_on_lattice` up to
rounding (tested to 1e-10 against :func:`~spare_lib.theory.predict.predict`, and the block sums
against plain sums over every checkpoint in ``tests/theory/test_predict_blocks.py``).

The chain itself (:func:`chain_blocks`) is :func:`~.chain._chain_kernel` on these sums, with the
two neighbouring blocks' entries that land on the same state added once beforehand, and without
the rework total (a design search does not read it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.theory.predict.chain import _BLOCK_GROWTH, _P_FLOOR, _geometric_block

#: Rows of the per-state array: E[time in the unit], P(wipe-out after the last checkpoint) and
#: E[uptime + delay; that wipe-out].
SA, SLAST, SELAST = range(3)
#: Rows of the per-block array: the low and high shares of a block's wipe-out probability and
#: uptime (weights 1 − b/g and b/g), and the same over the first b0 intervals of a block (weights
#: (b0 − b)/b0 and b/b0).
DLO, DHI, ELO, EHI, BLO, BHI, BELO, BEHI = range(8)


@njit(cache=True, nogil=True)
def progress(tau, step, ckpt, V):  # pragma: no cover - jit
    """Committed steps V(τ) along the grid (the trapezoid rule of the rate 1/(step + ckpt)),
    written into V."""
    n = tau.size
    V[0] = 0.0
    prev = 1.0 / (step[0] + ckpt)
    for k in range(1, n):
        cur = 1.0 / (step[k] + ckpt)
        V[k] = V[k - 1] + 0.5 * (cur + prev) * (tau[k] - tau[k - 1])
        prev = cur
    return V


@njit(cache=True, nogil=True)
def _cell_from(V, v, k):  # pragma: no cover - jit
    """The last cell k' ≥ k with V[k'] ≤ v (or the last cell, n − 2): the cell of the walk's
    next point, by a galloping search from k (a far point costs O(log distance), not O(cells):
    with few checkpoints per law most cells hold none)."""
    last = V.size - 2
    if k >= last or V[k + 1] > v:
        return k
    step = 1
    lo = k + 1  # V[lo] ≤ v
    while True:
        hi = lo + step
        if hi > last:
            hi = last + 1
            break
        if V[hi] > v:
            break
        lo = hi
        step *= 2
    # V[lo] ≤ v < V[hi] (or hi = last + 1): the largest index in [lo, hi) with V ≤ v
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if V[mid] <= v:
            lo = mid
        else:
            hi = mid
    return min(lo, last)


@njit(cache=True, nogil=True)
def _point(tau, G, V, cum, v, k):  # pragma: no cover - jit
    """(t, G(t), ∫_0^t G, cell) where the progress reaches v (≤ V[-1]): linear in V and in τ
    within the cell, searched from cell k on (the queries come in increasing v)."""
    k = _cell_from(V, v, k)
    f = (v - V[k]) / (V[k + 1] - V[k])  # t and G are linear in V within the cell
    d = f * (tau[k + 1] - tau[k])
    g = G[k] + f * (G[k + 1] - G[k])
    return tau[k] + d, g, cum[k] + 0.5 * d * (G[k] + g), k


@njit(cache=True, nogil=True)
def _last_below(x, C, invC):  # pragma: no cover - jit
    """The largest integer q with q·C < x, for x > 0 (``invC`` = 1/C): a product and at most a
    step or two of correction, where ``x // C`` costs a floating-point remainder."""
    q = int(x * invC)
    while float((q + 1) * C) < x:
        q += 1
    while q > 0 and float(q * C) >= x:
        q -= 1
    return q


@njit(cache=True, nogil=True)
def _f_sums(ja, jb, C, Jl, delay, tau, G, V, cum, k):  # pragma: no cover - jit
    """(Σ F0(j), Σ F1(j), F0(jb), F1(jb), cell) over ja ≤ j ≤ jb (1 ≤ ja ≤ jb): per grid cell in
    closed form, the last term from the last cell's."""
    n = tau.size
    invC = 1.0 / C if C > 0 else 0.0  # C = 0 (no checkpoints): every j is beyond Jl = 0
    s0 = 0.0
    s1 = 0.0
    f0 = 0.0
    f1 = -cum[n - 1]
    last = jb
    if jb > Jl:  # beyond the law's last checkpoint F = (0, −∫G)
        beyond = jb - max(ja, Jl + 1) + 1
        if beyond > 0:
            s1 -= beyond * cum[n - 1]
        jb = Jl
    j = ja
    while j <= jb:
        v = float(j * C)
        k = _cell_from(V, v, k)
        if k == n - 2:
            jl = jb
        else:  # the last checkpoint of cell k: j·C < V[k + 1]
            jl = min(_last_below(V[k + 1], C, invC), jb)
        cnt = float(jl - j + 1)
        dt = tau[k + 1] - tau[k]
        dG = G[k + 1] - G[k]
        inv = 1.0 / (V[k + 1] - V[k])  # t and G are linear in V within the cell
        d0 = (v - V[k]) * inv * dt
        t0 = tau[k] + d0
        g0 = G[k] + (v - V[k]) * inv * dG
        beta = C * dt * inv  # seconds per checkpoint
        gam = C * dG * inv  # survival per checkpoint
        c0 = (t0 + delay) * g0 - cum[k] - 0.5 * d0 * (G[k] + g0)
        c1 = (t0 + delay) * gam + beta * g0 - 0.5 * (d0 * gam + beta * (G[k] + g0))
        c2 = 0.5 * beta * gam
        m1 = 0.5 * cnt * (cnt - 1.0)
        m2 = (cnt - 1.0) * cnt * (2.0 * cnt - 1.0) / 6.0
        s0 += cnt * g0 + gam * m1
        s1 += cnt * c0 + c1 * m1 + c2 * m2
        if jl == jb and jb == last:  # the range's last checkpoint, when on the grid
            u = cnt - 1.0
            f0 = g0 + gam * u
            f1 = c0 + u * (c1 + c2 * u)
        j = jl + 1
    return s0, s1, f0, f1, k


@njit(cache=True, nogil=True)
def law_blocks(tau, G, V, cum, delay, C, steps, M, g, b0, Jl, S, D):  # pragma: no cover - jit
    """One cycle law on the coarse lattice: S (3, K + 2) per coarse state k = 0..K (fine state
    b0 + (K − k)·g) and, when b0 > 0, state K + 1 (fine state 0); D (8, nJ) per block a of g
    checkpoint intervals (rows :data:`DLO`..:data:`BEHI`; module docstring). ``Jl``: the law's
    last checkpoint on its grid; C = 0: no checkpoints (one state)."""
    n = tau.size
    K = M // g
    Bs = K + 1 if b0 > 0 else K
    cend = cum[n - 1]
    r0 = steps - M * C if C > 0 else steps
    # per state: its end (steps left committed) and its checkpoint, both increasing in m
    ke = 0
    kc = 0
    for s in range(Bs, -1, -1):
        m = 0 if s == Bs else b0 + (K - s) * g
        v = float(r0 + m * C)
        if v >= V[n - 1]:  # beyond the grid (G ≤ 1e-9): never finished
            tm = tau[n - 1]
            gt = 0.0
            Im = cend
        else:
            tm, gt, Im, ke = _point(tau, G, V, cum, v, ke)
        if m == 0:
            tcm, Gcm, Icm = 0.0, 1.0, 0.0
        elif m > Jl:
            tcm, Gcm, Icm = 0.0, 0.0, cend
        else:
            tcm, Gcm, Icm, kc = _point(tau, G, V, cum, float(m * C), kc)
        last = Gcm - gt
        S[SA, s] = Im + delay * (1.0 - gt)
        S[SLAST, s] = last
        S[SELAST, s] = tcm * Gcm - tm * gt + Im - Icm + delay * last
    # per block: F at its ends and its sums over b = 1..b0 and b0 + 1..g
    k = 0
    f0, f1 = 1.0, delay  # F at checkpoint 0
    for a in range(D.shape[1]):
        j = a * g
        s0 = 0.0
        s1 = 0.0
        if b0 > 0:
            s0, s1, h0, h1, k = _f_sums(j + 1, j + b0, C, Jl, delay, tau, G, V, cum, k)
            D[BLO, a] = f0 - s0 / b0
            D[BHI, a] = s0 / b0 - h0
            D[BELO, a] = f1 - s1 / b0
            D[BEHI, a] = s1 / b0 - h1
        else:
            D[BLO, a] = 0.0
            D[BHI, a] = 0.0
            D[BELO, a] = 0.0
            D[BEHI, a] = 0.0
        if g > 1:
            t0, t1, e0, e1, k = _f_sums(j + b0 + 1, j + g, C, Jl, delay, tau, G, V, cum, k)
            s0 += t0
            s1 += t1
            D[DLO, a] = f0 - s0 / g
            D[DHI, a] = s0 / g - e0
            D[ELO, a] = f1 - s1 / g
            D[EHI, a] = s1 / g - e1
        else:
            _, _, e0, e1, k = _f_sums(j + 1, j + 1, C, Jl, delay, tau, G, V, cum, k)
            D[DLO, a] = f0 - e0
            D[DHI, a] = 0.0
            D[ELO, a] = f1 - e1
            D[EHI, a] = 0.0
        f0, f1 = e0, e1


@njit(cache=True, nogil=True)
def _law_at_log(t, t0, logt0):  # pragma: no cover - jit
    """:func:`~.chain._law_at` with the logarithms of t0 taken beforehand."""
    L = t0.size
    if t >= t0[L - 1]:
        return L - 1, L - 1, 0.0
    B = 1
    while B < L - 1 and t0[B] < t:
        B += 1
    A = max(B - 1, 1)
    if A == B or t <= t0[A]:
        return B, B, 0.0
    return A, B, (np.log(t) - logt0[A]) / (logt0[B] - logt0[A])


@njit(cache=True, nogil=True)
def _deposit(law, k, v, vt, keep_return, K, Bs, b0, g, S, D, P, E, pi, th):  # pragma: no cover - jit
    """:func:`~.chain._scatter` on the block sums: the ends of ``v`` visits of state k under
    ``law`` (``vt``: Σ of their start + restart times) onto the arrivals of the states they
    leave for. P, E (L, nJ + 1): the block entries that land on state k + a, the low share of
    block a plus the high share of block a − 1, added beforehand."""
    if k == Bs:  # state 0: every wipe-out comes back
        if keep_return:
            pi[k] += v * S[law, SLAST, k]
            th[k] += vt * S[law, SLAST, k] + v * S[law, SELAST, k]
        return
    pi[Bs] += v * S[law, SLAST, k]
    th[Bs] += vt * S[law, SLAST, k] + v * S[law, SELAST, k]
    nJ = D.shape[2]
    amax = min(K - k - 1, nJ - 1)
    if keep_return:
        pi[k] += v * D[law, DLO, 0]
        th[k] += vt * D[law, DLO, 0] + v * D[law, ELO, 0]
    Pl = P[law]
    El = E[law]
    for a in range(1, amax + 1):
        pi[k + a] += v * Pl[a]
        th[k + a] += vt * Pl[a] + v * El[a]
    if g > 1 and amax >= 0:
        pi[k + amax + 1] += v * D[law, DHI, amax]
        th[k + amax + 1] += vt * D[law, DHI, amax] + v * D[law, EHI, amax]
    if b0 > 0 and K - k < nJ:  # below the lowest coarse state: split between it and state 0
        a = K - k
        if k < K or keep_return:
            pi[K] += v * D[law, BLO, a]
            th[K] += vt * D[law, BLO, a] + v * D[law, BELO, a]
        pi[Bs] += v * D[law, BHI, a]
        th[Bs] += vt * D[law, BHI, a] + v * D[law, BEHI, a]


@njit(cache=True, nogil=True)
def chain_blocks(S, D, K, b0, g, R, t0, logt0, out, work):  # pragma: no cover - jit
    """:func:`~.chain._chain_kernel` on the coarse lattice from :func:`law_blocks`' arrays S
    (L, 3, states) and D (L, 8, nJ): writes out = (time, restarts, restart time). The same
    sweep: arrivals per state from the top down, their returns followed in blocks of constant
    law, then their ends deposited on the lower states. ``logt0``: log t0 (floored at 1e-300);
    ``work``: flat scratch of ≥ 2L·(nJ + 1) + 2·states + 2L entries, so that a search over many
    C allocates once."""
    L = S.shape[0]
    nJ = D.shape[2]
    Bs = K + 1 if b0 > 0 else K
    M = b0 + K * g
    n = Bs + 1
    w = L * (nJ + 1)
    P = work[:w].reshape((L, nJ + 1))
    E = work[w:2 * w].reshape((L, nJ + 1))
    pi = work[2 * w:2 * w + n]
    th = work[2 * w + n:2 * w + 2 * n]
    wv = work[2 * w + 2 * n:2 * w + 2 * n + L]
    wt = work[2 * w + 2 * n + L:2 * w + 2 * n + 2 * L]
    work[:2 * w + 2 * n] = 0.0
    for law in range(L):
        for a in range(nJ):
            P[law, a] += D[law, DLO, a]
            E[law, a] += D[law, ELO, a]
            P[law, a + 1] += D[law, DHI, a]
            E[law, a + 1] += D[law, EHI, a]
    out[0] = S[0, SA, 0]  # the first cycle, from state M (coarse 0) at t = 0
    out[1] = 0.0
    out[2] = 0.0
    _deposit(0, 0, 1.0, 0.0, True, K, Bs, b0, g, S, D, P, E, pi, th)
    for k in range(n):
        p = pi[k]
        if p <= 1e-300:
            continue
        t = th[k] / p
        mass = p
        wv[:] = 0.0
        wt[:] = 0.0
        last_block = False
        while True:
            A, B, w = _law_at_log(t, t0, logt0)
            r_ = (1.0 - w) * R[A] + w * R[B]
            if k == Bs:
                qa, ea = S[A, SLAST, k], S[A, SELAST, k]
                qb, eb = S[B, SLAST, k], S[B, SELAST, k]
            elif k < K:
                qa, ea = D[A, DLO, 0], D[A, ELO, 0]
                qb, eb = D[B, DLO, 0], D[B, ELO, 0]
            else:
                qa, ea = D[A, BLO, 0], D[A, BELO, 0]
                qb, eb = D[B, BLO, 0], D[B, BELO, 0]
            q = (1.0 - w) * qa + w * qb
            x = max(1.0 - q, _P_FLOOR)
            q = 1.0 - x
            c = r_ + (((1.0 - w) * ea + w * eb) / q if q > 0.0 else 0.0)
            if last_block or A == L - 1 or L == 2:
                last_block = True
                nb = np.inf
            else:
                nb = max(1.0, np.floor(_BLOCK_GROWTH * t / c)) if c > 0.0 else 1.0
            if nb == 1.0:  # one visit: Σ q^i = 1, Σ i q^i = 0, q^1 (no logarithms)
                g0, g1, qn = 1.0, 0.0, q
            else:
                g0, g1, qn = _geometric_block(x, nb)
            vb = mass * g0
            tb = mass * (t * g0 + c * g1) + vb * r_
            out[0] += vb * (r_ + (1.0 - w) * S[A, SA, k] + w * S[B, SA, k])
            out[1] += vb
            out[2] += vb * r_
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
                _deposit(law, k, wv[law], wt[law], False, K, Bs, b0, g, S, D, P, E, pi, th)
    return M
