"""Least makespan with b micro-batches per shard (issue 25): exact identities, bounds and S̄_b.

Model (SPEC §2 layouts, uniformly random failure order as for μ and S̄): after k failures the
survivors split every type's b micro-batches among its live holders; the least makespan is
(:mod:`spare_lib.rectlr.microbatch`, max-flow min-cut / Hall with demands)

    L*(k) = ⌈b·ρ⌉,   ρ = max_T |T| / |N(T)|   (T a set of types, N(T) its live holders),   (1)

so b·(S* − 1) < L* ≤ b·S* (S* = ⌈ρ⌉, RECTLR) and L* ≥ g_b(k) = ⌈N·b/(N − k)⌉ (T = all
types, the *global bound*). These are exact.

Arc bound. For a cyclic layout with offsets 0 = o_0 < … < o_{r−1} = c, an arc of L types
[u, u + L − 1] has its holders in the window of W = L + c groups [u − c, u + L − 1], so with
d_W dead groups in that window (1) gives ρ ≥ (W − c)/(W − d_W). Hence, exactly,

    ρ ≥ ρ_arc := max( N/(N − k), max_W (W − c)/(W − d_W) ),                        (2)

and ρ_arc ≤ ℓ/b iff every circular window satisfies Σ_{g∈W} (b − ℓ·live_g) ≤ b·c and the whole
ring satisfies Σ_g (b − ℓ·live_g) ≤ 0. For the **consecutive** layout (c = r − 1) (2) is an
equality: the densest set is an arc or the whole ring (two arcs of types less than r apart have
overlapping holder windows and the types between them are free to add; arcs r or more apart have
disjoint windows, and a union of disjoint parts is no denser than its densest part), and a run
of r dead groups (a wipe-out) is a violated window, so "ρ_arc ≤ ℓ/b" already means "no
wipe-out". For the ruler and domain-aware layouts (2) is a lower bound (ragged type sets can be
denser than arcs); its gap to the Monte Carlo is measured, not assumed.

Law of ρ_arc. With the window sums as a random walk with steps +b (dead group) and b − ℓ
(live group), "all circular windows ≤ B = b·c" means that the cyclic Lindley process
M_i = max(0, M_{i−1} + step_i) stays ≤ B, and every such cyclic word has a position with
M_i = 0 (where its prefix sum is least). Cutting every word at its first zero gives, with
deaths independent with probability x (Poissonisation), the exact sum

    P_x(ρ_arc ≤ ℓ/b) = Σ_{n=1}^{N} ⟨a_{N−n}, g_n⟩,                                       (3)

a_n(M) the weight of length-n Lindley paths from 0 to M below B, g_n(M) that of paths from M
whose first zero is at step n: O(N·B) per (x, ℓ) (:func:`arc_valid_prob`). Words with a
positive total (the global bound violated) never return to 0, so (3) includes the global
condition.

S̄_b. As the paper's Eq. 5 (renewal–reward, :func:`spare_lib.theory.finite.overhead_finite`),
every failure epoch of a cycle to wipe-out weighs the same:
S̄_b = E[Σ_{k<K} L*(k)] / (b·E[K]). The Poissonisation identity (N + 1)∫_0^1 C(N, k) x^k
(1 − x)^(N−k) dx = 1 turns both sums over k into integrals over x, exactly:

    S̄_b = ∫_0^1 E_x[L*·1{no wipe-out}] dx / (b ∫_0^1 P_x(no wipe-out) dx),           (4)

    E_x[L*·1{nw}] = Σ_{ℓ≥0} (P_x(nw) − P_x(L* ≤ ℓ)).

:func:`sbar_b_theory` evaluates (4) with L* replaced by ⌈b·ρ_arc⌉ (composite Gauss–Legendre in
x): exact for the consecutive layout. For the others the global bound and the wipe-out are
joined exactly through the number of deaths k (binomial given x) and the finite-N P0(k)
(:func:`spare_lib.theory.finite.survival_finite`, Bethe), and only the arc condition beyond the
global bound, P_x(ρ_arc ≤ ℓ/b | global) / P_x(no run of more than c dead), is treated as
independent of the wipe-out: an approximation of a lower bound, whose gap to the Monte Carlo
is measured (``docs/microbatch.md``). Without arcs it reduces to :func:`sbar_b_global`, the
global bound alone, Σ_k P0(k)·g_b(k) / (b Σ_k P0(k)) with the finite-N law of K.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.stats import binom

from spare_lib._util.validate import check_int, check_probability
from spare_lib.stacking.layout import GOLOMB_RULERS, Layout
from spare_lib.theory.finite import (
    _saddle_survival,
    _survival_consecutive,
    bethe_log_survival,
    survival_finite,
)

LayoutLike = str | Layout

_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)


def global_bound(N: int, k: int | np.ndarray, b: int) -> int | np.ndarray:
    """The global bound g_b(k) = ⌈N·b/(N − k)⌉ on L* after k failures (0 ≤ k < N)."""
    N = check_int("N", N, lo=1)
    b = check_int("b", b, lo=1)
    ka = np.asarray(k)
    if np.any(ka < 0) or np.any(ka >= N):
        raise ValueError(f"k must be in [0, N-1] = [0, {N - 1}], got {k!r}")
    out = -(-N * b // (N - ka))
    return int(out) if np.ndim(out) == 0 else out


def arc_boundary(N: int, r: int, layout: LayoutLike = "ruler") -> int:
    """c = o_{r−1}, the largest offset: an arc of L types has its holders in L + c groups."""
    if isinstance(layout, Layout):
        if layout.N != N or layout.r != r:
            raise ValueError(f"layout has N={layout.N}, r={layout.r}, but N={N}, r={r} were given")
        return int(max(layout.offsets))
    if layout == "consecutive":
        return r - 1
    if layout == "ruler":
        if r not in GOLOMB_RULERS:
            raise ValueError(f"r must be in [1, {max(GOLOMB_RULERS)}] for the ruler, got {r}")
        return int(GOLOMB_RULERS[r][-1])
    raise ValueError(f"layout must be 'ruler', 'consecutive' or a Layout, got {layout!r}")


@njit(cache=True)
def _arc_valid_kernel(N, x, up, down, B, a, g_cur, g_nxt):  # pragma: no cover - compiled
    """Σ_{n=1}^{N} ⟨a_{N−n}, g_n⟩ of (3); ``up`` = b, ``down`` = ℓ − b (may exceed B), states
    0..B; ``a`` (N, B + 1) scratch, ``g_cur``/``g_nxt`` (B + 1,) scratch."""
    q = 1.0 - x
    a[0, :] = 0.0
    a[0, 0] = 1.0
    for n in range(1, N):
        prev = a[n - 1]
        cur = a[n]
        cur[:] = 0.0
        for M in range(B + 1):
            w = prev[M]
            if w == 0.0:
                continue
            if M + up <= B:
                cur[M + up] += x * w
            Ml = M - down
            if Ml < 0:
                Ml = 0
            if Ml <= B:
                cur[Ml] += q * w
    # g_1(M) = q·[M − down ≤ 0]; g_n(M) = x·g_{n−1}(M + up) + q·g_{n−1}(M − down)·[M − down ≥ 1]
    for M in range(B + 1):
        g_cur[M] = q if M - down <= 0 else 0.0
    total = 0.0
    for n in range(1, N + 1):
        row = a[N - n]
        s = 0.0
        for M in range(B + 1):
            s += row[M] * g_cur[M]
        total += s
        if n == N:
            break
        for M in range(B + 1):
            v = 0.0
            if M + up <= B:
                v += x * g_cur[M + up]
            Ml = M - down
            if Ml >= 1 and Ml <= B:
                v += q * g_cur[Ml]
            g_nxt[M] = v
        for M in range(B + 1):
            g_cur[M] = g_nxt[M]
    return total


def arc_valid_prob(N: int, x: float, b: int, ell: int, c: int) -> float:
    """P_x(ρ_arc ≤ ℓ/b): deaths independent with probability x, eq. (3) of the module docstring.

    Parameters
    ----------
    N : int
        Groups on the ring, N ≥ 2.
    x : float
        Death probability of each group, in [0, 1].
    b : int
        Micro-batches per shard, b ≥ 1.
    ell : int
        Makespan threshold ℓ ≥ 0 (ℓ ≥ b + (b·c + 1) means "no window of more than c dead").
    c : int
        Arc boundary (largest offset), 0 ≤ c ≤ N − 1.
    """
    N = check_int("N", N, lo=2)
    x = check_probability("x", x)
    b = check_int("b", b, lo=1)
    ell = check_int("ell", ell, lo=0)
    c = check_int("c", c, lo=0, hi=N - 1)
    if ell < b:
        return 0.0
    B = b * c
    a = np.empty((N, B + 1))
    return float(_arc_valid_kernel(N, x, b, ell - b, B, a, np.empty(B + 1), np.empty(B + 1)))


def _method(N: int, r: int, layout: LayoutLike) -> tuple[str, int]:
    c = arc_boundary(N, r, layout)
    if isinstance(layout, Layout):
        return ("consecutive" if layout.offsets == tuple(range(r)) else "bethe"), c
    return ("consecutive" if layout == "consecutive" or r <= 2 else "bethe"), c


def survival_k(N: int, r: int, layout: LayoutLike = "ruler") -> np.ndarray:
    """P0(k), k = 0..N−1: exact count for the consecutive layout, Bethe + saddle point for any
    other layout where two types share at most one holder (ruler, Sidon mod N)."""
    method, _ = _method(N, r, layout)
    if method == "consecutive":
        return np.asarray(_survival_consecutive(N, r))[:N]
    if isinstance(layout, Layout):
        return _saddle_survival(N, r, lambda x: bethe_log_survival(x, r))[:N]
    return survival_finite(N, r, layout)[:N]


def expected_makespan_x(N: int, r: int, b: int, x: float, layout: LayoutLike = "ruler",
                        tol: float = 1e-12, surv: np.ndarray | None = None
                        ) -> tuple[float, float]:
    """(E_x[⌈b·ρ_arc⌉·1{no wipe-out}], P_x(no wipe-out)) with independent deaths w.p. x.

    Consecutive layout: eq. (3) is the joint law, exactly. Other layouts: the global bound and
    the wipe-out are joined exactly through the number of deaths k (binomial) and P0(k)
    (``surv``, :func:`survival_k`): P_x(g_b(k) ≤ ℓ, nw) = Σ_k C(N,k) x^k (1−x)^(N−k) P0(k)
    1{g_b(k) ≤ ℓ}; the arc condition beyond the global bound, P_x(ρ_arc ≤ ℓ/b | global) /
    P_x(no run of more than c dead), is taken as independent of the wipe-out.
    The terms P_x(nw) − P_x(L* ≤ ℓ) are summed from ℓ = b until they drop below
    ``tol``·P_x(nw) (they do not increase with ℓ); thresholds at which the global bound holds
    with probability < 1e-15 are added without running (3).
    """
    method, c = _method(N, r, layout)
    B = b * c
    a = np.empty((N, B + 1))
    g1, g2 = np.empty(B + 1), np.empty(B + 1)
    big = b + B + 1  # a live group always resets the Lindley state: only runs of dead count
    p_inf = _arc_valid_kernel(N, x, b, big - b, B, a, g1, g2)
    k = np.arange(N)
    gk = -(-N * b // (N - k))
    pk = binom.pmf(k, N, x)
    if method == "consecutive":
        p_nw = p_inf
    else:
        if surv is None:
            surv = survival_k(N, r, layout)
        wk = pk * surv
        p_nw = float(wk.sum())
    if p_nw <= 0.0 or p_inf <= 0.0:
        return 0.0, 0.0
    e = b * p_nw
    ell = b
    while True:
        p_glob = float(pk[gk <= ell].sum())
        if p_glob < 1e-15:
            term = p_nw
        else:
            valid = _arc_valid_kernel(N, x, b, ell - b, B, a, g1, g2)
            if method == "consecutive":
                term = p_nw - valid
            else:
                term = p_nw - float(wk[gk <= ell].sum()) * min(1.0, valid / (p_glob * p_inf))
        term = max(term, 0.0)
        e += term
        if term < tol * p_nw:
            break
        ell += 1
        if ell > r * b + b:  # L* ≤ r·b without a wipe-out
            break
    return e, p_nw


def _x_upper(N: int, r: int, layout: LayoutLike, b: int, surv: np.ndarray) -> float:
    """Death probability beyond which P_x(no wipe-out) < 1e-16 (bisection)."""
    lo, hi = 0.0, 1.0
    method, c = _method(N, r, layout)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if method == "consecutive":
            a = np.empty((N, b * c + 1))
            p = _arc_valid_kernel(N, mid, b, b * c + 1, b * c, a, np.empty(b * c + 1),
                                  np.empty(b * c + 1))
        else:
            p = float(np.sum(binom.pmf(np.arange(N), N, mid) * surv))
        if p < 1e-16:
            hi = mid
        else:
            lo = mid
    return hi


def sbar_b_theory(N: int, r: int, b: int, layout: LayoutLike = "ruler", *,
                  panels: int = 8) -> float:
    """S̄_b = E[Σ_{k<K} L*(k)] / (b·E[K]) from eq. (4) with L* = ⌈b·ρ_arc⌉ (module docstring).

    Exact for the consecutive layout (up to quadrature, ``panels`` × 16 Gauss–Legendre nodes
    in x); for the ruler and other cyclic layouts the arc bound (2) with the Bethe law of
    the wipe-out, a lower bound up to that approximation.

    Parameters
    ----------
    N : int
        Groups, N ≥ 2.
    r : int
        Redundancy, 1 ≤ r ≤ N.
    b : int
        Micro-batches per shard, b ≥ 1.
    layout : {'ruler', 'consecutive'} or Layout
        A cyclic layout (``Layout`` for domain-aware and custom offsets).
    """
    N = check_int("N", N, lo=2)
    r = check_int("r", r, lo=1, hi=N)
    b = check_int("b", b, lo=1)
    panels = check_int("panels", panels, lo=1)
    surv = survival_k(N, r, layout)
    x_hi = _x_upper(N, r, layout, b, surv)
    edges = np.linspace(0.0, x_hi, panels + 1)
    num = den = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        for xi, wi in zip(_GL_X, _GL_W, strict=True):
            x = 0.5 * (hi - lo) * xi + 0.5 * (hi + lo)
            e, p = expected_makespan_x(N, r, b, float(x), layout, surv=surv)
            num += 0.5 * (hi - lo) * wi * e
            den += 0.5 * (hi - lo) * wi * p
    return float(num / (b * den))


def sbar_b_global(N: int, r: int, b: int, layout: LayoutLike = "ruler") -> float:
    """The global bound alone: Σ_k P0(k)·⌈N·b/(N − k)⌉ / (b·Σ_k P0(k)), P0 of
    :func:`spare_lib.theory.finite.survival_finite` (b = 1: :func:`overhead_finite`)."""
    N = check_int("N", N, lo=2)
    r = check_int("r", r, lo=1, hi=N)
    b = check_int("b", b, lo=1)
    surv = survival_k(N, r, layout)
    k = np.arange(N)
    g = -(-N * b // (N - k))
    return float(np.sum(surv * g) / (b * np.sum(surv)))
