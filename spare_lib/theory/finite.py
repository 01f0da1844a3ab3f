"""Finite-N survival, μ and S̄ (beyond the paper): exact for the consecutive layout, Bethe for rulers.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

import numpy as np
from scipy.special import gammaln

from spare_lib._util.validate import check_int
from spare_lib.stacking.layout import GOLOMB_RULERS, Layout, max_ruler_r
from spare_lib.theory.closed import _as_int_array, _ret, mu_closed

# ---------------------------------------------------------------------------------------------
# Finite-N survival and μ (beyond the paper)
# ---------------------------------------------------------------------------------------------
#
# K is the index of the failure that causes the first wipe-out; failures hit distinct groups in
# uniformly random order, so after k failures the dead set is a uniform k-subset and
#     μ = E[K] = Σ_{k=0}^{N} P0(k),   P0(k) = P(no type wiped | k dead groups).
# Poissonisation: let every group die independently with probability x; then
#     P_x = Σ_k C(N,k) x^k (1-x)^(N-k) P0(k)   and   ∫_0^1 C(N,k) x^k (1-x)^(N-k) dx = 1/(N+1),
# hence the EXACT identity  μ = (N+1) ∫_0^1 P_x dx.  Under independent deaths the per-type wipe
# events only interact through shared holders, which the Bethe approximation handles (exact on
# trees; the ruler layout's type/holder factor graph is a linear hypergraph, locally tree-like).

LayoutLike = str | Layout

#: Checkpoint write time of the paper's preset: 2e13 bytes at 340 GB/s (SPEC §6), seconds.
T_S_PAPER = 2e13 / 340e9
#: Global restart time of the paper's preset (one group's window, SPEC §6), seconds.
T_R_PAPER = 3600.0
#: System MTBF of the paper's regime (5 minutes), seconds.
M_PAPER = 300.0


def _check_r_le_n(N: int, r: int) -> None:
    if r > N:
        raise ValueError(f"r must be in [1, N] = [1, {N}], got r={r}")


#: Largest N evaluated with exact integer arithmetic for the consecutive layout (and ruler r ≤ 2).
#: The count costs O(N²) big-integer operations (0.05 s at N = 1000, 0.8 s at N = 4000, minutes at
#: N = 10⁵); above this, :func:`_survival_consecutive_fast` is used (float closed form for r = 2,
#: transfer matrix + saddle point for r ≥ 3). The paper's N ≤ 1000 stay on the exact path.
EXACT_N_MAX = 2048


def _survival_consecutive(N: int, r: int) -> np.ndarray:
    """P0(k) of the consecutive layout: exact count up to :data:`EXACT_N_MAX`, fast above."""
    if N <= EXACT_N_MAX:
        return _survival_consecutive_exact(N, r)
    return _survival_consecutive_fast(N, r)


@lru_cache(maxsize=64)
def _survival_consecutive_fast(N: int, r: int) -> np.ndarray:
    """P0(k), k = 0..N, of the consecutive layout in floating point, O(N) (for N > EXACT_N_MAX).

    r = 2: the number of k-subsets of the cycle Z_N with no two adjacent elements is
    N/(N−k)·C(N−k, k) (Kaplansky 1943), so P0(k) = N/(N−k)·C(N−k, k)/C(N, k), evaluated with
    log-Gamma (relative error ~1e-12: exact up to rounding). r ≥ 3: saddle-point
    de-Poissonisation (as :func:`survival_finite` does for rulers) of the exact Poissonised
    survival P_x = tr(T^N) ≈ λ_max(x)^N of the r-state transfer matrix (run of dead groups
    0..r−1); the neglected eigenvalues contribute (λ_2/λ_1)^N, nil at N > 2048. Asymptotic:
    agrees with the exact count to < 1e-3 on Σ_k P0(k) at N = 2000 (tested).
    """
    out = np.zeros(N + 1)
    out[: min(r, N + 1)] = 1.0
    if r == 1:
        out[1:] = 0.0
        out.setflags(write=False)
        return out
    if r == 2:
        k = np.arange(1, N // 2 + 1, dtype=float)
        log_p = (np.log(N) - np.log(N - k) + gammaln(N - k + 1) - gammaln(k + 1) - gammaln(N - 2 * k + 1)
                 - (gammaln(N + 1) - gammaln(k + 1) - gammaln(N - k + 1)))
        out[1: N // 2 + 1] = np.exp(np.minimum(log_p, 0.0))
        out[N // 2 + 1:] = 0.0
        out.setflags(write=False)
        return out
    out[:] = _saddle_survival(N, r, lambda x: _log_lambda_consecutive(x, r))
    out.setflags(write=False)
    return out


def _log_lambda_consecutive(x: np.ndarray, r: int, iters: int = 60) -> np.ndarray:
    """log λ_max(x) of the consecutive layout's transfer matrix: (1/N) log P_x for large N.

    λ solves λ = (1 − x) Σ_{j<r} (x/λ)^j; the right-hand side decreases in λ, and the root lies
    in [1 − x, 1]; found by bisection, vectorised over x.
    """
    x = np.asarray(x, dtype=float)
    lo, hi = 1.0 - x, np.ones_like(x)
    for _ in range(iters):
        lam = 0.5 * (lo + hi)
        q = x / lam
        rhs = (1.0 - x) * np.where(np.abs(1.0 - q) > 1e-12, (1.0 - q**r) / np.where(
            np.abs(1.0 - q) > 1e-12, 1.0 - q, 1.0), float(r))
        above = lam > rhs
        hi = np.where(above, lam, hi)
        lo = np.where(above, lo, lam)
    with np.errstate(divide="ignore"):
        return np.log(0.5 * (lo + hi))


@lru_cache(maxsize=256)
def _survival_consecutive_exact(N: int, r: int) -> np.ndarray:
    """Exact P0(k), k = 0..N, for the consecutive layout (offsets 0..r−1).

    Type t is wiped iff groups t−r+1..t are all dead, so "no wipe-out" means: no run of r dead
    groups on the cycle Z_N. With m = N − k live groups the dead groups form m (possibly empty)
    cyclic gaps g_1..g_m between consecutive live groups, each ≤ r − 1. Pairs (dead set, marked
    live group) biject with (rotation, gap vector), so the number of dead sets is
    N/m · #{g ∈ [0, r−1]^m : Σ g = k}, and the gap count follows by inclusion–exclusion:
    Σ_j (−1)^j C(m, j) C(k − j r + m − 1, m − 1). Exact integer arithmetic. For r = 2 (also the
    ruler layout at r = 2) the count is Kaplansky's N/(N − k)·C(N − k, k)
    (:func:`_survival_no_two_adjacent`: the same integers, far fewer of them).
    """
    if r == 2:
        return _survival_no_two_adjacent(N)
    out = np.zeros(N + 1)
    for k in range(N + 1):
        m = N - k
        if k < r:
            out[k] = 1.0
            continue
        if m == 0:
            break
        comps = 0
        for j in range(0, min(m, k // r) + 1):
            term = comb(m, j) * comb(k - j * r + m - 1, m - 1)
            comps += -term if j % 2 else term
        out[k] = (N * comps) / (m * comb(N, k))  # int / int: correctly rounded
        if out[k] < 1e-30:  # P0 is non-increasing: the rest contributes < N·1e-30
            break
    out.setflags(write=False)
    return out


def _survival_no_two_adjacent(N: int) -> np.ndarray:
    """Exact P0(k) of the consecutive layout at r = 2: no two adjacent dead groups on the cycle
    Z_N, N/(N − k)·C(N − k, k) of the C(N, k) dead sets (Kaplansky 1943; the inclusion–exclusion
    count of :func:`_survival_consecutive_exact` at r = 2 equals C(N − k, k)). The binomials
    are stepped in k by exact integer recurrences, C(m − 1, k + 1) = C(m, k)(m − k)(m − k − 1)
    / (m(k + 1)) with m = N − k and C(N, k + 1) = C(N, k)(N − k)/(k + 1), and each P0 is one
    correctly rounded int/int division: O(N) big-integer steps instead of O(N²)."""
    out = np.zeros(N + 1)
    out[: min(2, N + 1)] = 1.0
    if N >= 2:
        A, B = comb(N - 2, 2), comb(N, 2)  # C(N − k, k), C(N, k) at k = 2
        k = 2
        while 2 * k <= N:
            m = N - k
            out[k] = (N * A) / (m * B)  # int / int: correctly rounded
            if out[k] < 1e-30:  # P0 is non-increasing: the rest contributes < N·1e-30
                break
            A = A * (m - k) * (m - k - 1) // (m * (k + 1))
            B = B * (N - k) // (k + 1)
            k += 1
    out.setflags(write=False)
    return out


def _bethe_fixed_point(x: np.ndarray, r: int, iters: int = 60) -> np.ndarray:
    """Uniform Bethe/BP message u(x): P(holder dead | cavity), solving u = xA/(xA + 1 − x).

    A = (1 − u^(r−1))^(r−1) is the probability that the r − 1 other types of the holder survive.
    The right-hand side decreases in u, so the root in [0, 1] is unique. In logits
    (t = log u/(1 − u)) the equation reads G(t) := t − (r − 1)·log(1 − σ(t)^(r−1)) = logit(x),
    G increasing with G' ≥ 1. Newton on it, started from the tabulated inverse of G
    (:func:`_bethe_root_guess`, error ≲ 1e-9): once every step is below 1e-9·(1 + |t|), one
    more step reaches the rounding level — 2–3 steps in all, against the 54 of the bisection
    this replaces (:func:`_bethe_fixed_point_bisect`, kept as the oracle; the two agree to
    1e-13). At most ``iters`` steps.
    """
    x = np.asarray(x, dtype=float)
    if r == 1:
        return x.copy()
    k = float(r - 1)
    inner = (x > 0.0) & (x < 1.0)
    xi = x[inner]
    tx = np.log(xi) - np.log1p(-xi)
    t = _bethe_root_guess(tx, k)
    polish = False
    for _ in range(iters):
        ls = np.minimum(t, 0.0) - np.log1p(np.exp(-np.abs(t)))  # log σ(t), no overflow
        om = -np.expm1(k * ls)  # 1 − σ^k
        f = t - k * np.log(om) - tx
        fp = 1.0 + k * k * np.exp(k * ls + ls - t) / om  # σ^k (1 − σ) = exp(k ls + ls − t)
        step = f / fp
        t = t - step
        if polish:
            break
        # quadratic convergence: one more step after 1e-9 lands on the rounding level
        polish = bool(np.all(np.abs(step) <= 1e-9 * (1.0 + np.abs(t))))
    out = np.where(x >= 1.0, 1.0, 0.0)
    out[inner] = np.exp(np.minimum(t, 0.0) - np.log1p(np.exp(-np.abs(t))))  # σ(t)
    return out


@lru_cache(maxsize=64)
def _bethe_root_table(k: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Knots G_i, cubic coefficients (4, knots − 1) and knot numbers of the inverse of
    G(t) = t − k·log(1 − σ(t)^k) on t ∈ [−40, 40] (step 0.01), for :func:`_bethe_root_guess`."""
    tg = np.linspace(-40.0, 40.0, 8001)
    ls = -np.log1p(np.exp(-tg))
    om = -np.expm1(k * ls)
    G = tg - k * np.log(om)
    dt = 1.0 / (1.0 + k * k * np.exp(k * ls + ls - tg) / om)  # dt/dG
    h = np.diff(G)
    m0, m1 = h * dt[:-1], h * dt[1:]  # Hermite slopes in the local variable s ∈ [0, 1]
    d = tg[1:] - tg[:-1]
    coef = np.stack([tg[:-1], m0, 3 * d - 2 * m0 - m1, m0 + m1 - 2 * d])
    knots = np.arange(G.size, dtype=float)
    for a in (G, coef, knots):
        a.setflags(write=False)
    return G, coef, knots


def _bethe_root_guess(tx: np.ndarray, k: float) -> np.ndarray:
    """Initial logits t for :func:`_bethe_fixed_point`: logit(x) = G(t) := t − k·log(1 − σ(t)^k)
    is explicit and increasing (G' ≥ 1, from 1 to k + 1), so its inverse is tabulated on a grid of
    t (step 0.01 on [−40, 40], cached per k) and interpolated by cubic Hermite with slopes
    1/G' (error ≲ 1e-9). Outside the table: the end values (Newton takes it from there)."""
    G, coef, knots = _bethe_root_table(float(k))
    # fractional knot index by linear interpolation (numpy's interp searches with a guess,
    # fast on sorted input): its integer part is the interval, the rest the local variable
    f = np.interp(tx, G, knots)
    i = np.minimum(f.astype(np.intp), G.size - 2)
    s = f - i
    a0, a1, a2, a3 = np.take(coef, i, axis=1)
    return ((a3 * s + a2) * s + a1) * s + a0


def _bethe_fixed_point_bisect(x: np.ndarray, r: int, iters: int = 54) -> np.ndarray:
    """Plain bisection for the same root as :func:`_bethe_fixed_point` (its test oracle)."""
    lo = np.zeros_like(x)
    hi = np.ones_like(x)
    for _ in range(iters):
        u = 0.5 * (lo + hi)
        a = (1.0 - u ** (r - 1)) ** (r - 1)
        rhs = x * a / np.maximum(x * a + 1.0 - x, 1e-300)
        above = u > rhs
        hi = np.where(above, u, hi)
        lo = np.where(above, lo, u)
    return 0.5 * (lo + hi)


def bethe_log_survival(x: float | np.ndarray, r: int) -> float | np.ndarray:
    """Bethe free energy per group: (1/N)·log P_x(no wipe-out), independent deaths w.p. x.

    For a layout where two types share at most one holder (ruler layout, SPEC §2),
    with u the fixed point of u = x(1−u^(r−1))^(r−1) / (x(1−u^(r−1))^(r−1) + 1 − x):

        (1/N) log P_x ≈ log[1 − x + x(1 − u^(r−1))^r] − (r − 1) log(1 − u^r).

    With u = x (no cavity correction) this is the "star" cluster approximation; with
    u = x and r−1 → 0 inside the bracket it reduces to independence, log(1 − x^r).

    Parameters
    ----------
    x : float or array in [0, 1]
        Death probability of each group.
    r : int
        Redundancy, r ≥ 1.
    """
    r = check_int("r", r, lo=1)
    xa = np.asarray(x, dtype=float)
    if np.any((xa < 0) | (xa > 1)):
        raise ValueError(f"x must be in [0, 1], got {x!r}")
    if r == 1:
        with np.errstate(divide="ignore"):
            out = np.log1p(-xa)
    else:
        u = _bethe_fixed_point(xa, r)
        with np.errstate(divide="ignore", invalid="ignore"):
            # log[1 − x + x(1 − u^(r−1))^r] written with log1p/expm1 for accuracy at small x
            log_q = np.log1p(xa * np.expm1(r * np.log1p(-(u ** (r - 1)))))
            out = np.where(xa >= 1.0, -np.inf, log_q - (r - 1) * np.log1p(-(u**r)))
    return float(out) if np.ndim(out) == 0 else out


def _resolve_layout(N: int, r: int, layout: LayoutLike) -> str:
    """'consecutive' (exact count) or 'bethe' (linear hypergraph) for this layout."""
    if isinstance(layout, Layout):
        if layout.N != N or layout.r != r:
            raise ValueError(f"layout has N={layout.N}, r={layout.r}, but N={N}, r={r} were given")
        if layout.offsets == tuple(range(r)):
            return "consecutive"
        if layout.independent:
            return "bethe"
        raise ValueError(
            f"layout must be consecutive or satisfy the independence condition (two types share "
            f"at most one holder) for mu_finite, got {layout!r}; use Monte Carlo instead")
    if layout == "consecutive" or (layout == "ruler" and r <= 2):
        return "consecutive"  # the ruler {0, 1} is the consecutive layout
    if layout == "ruler":
        marks = GOLOMB_RULERS.get(r)
        if marks is None or N <= 2 * marks[-1] - 1:
            raise ValueError(
                f"layout='ruler' needs N > 2·o_(r-1) − 1 (independence condition), got N={N}, "
                f"r={r}; the largest r allowed for N={N} is {max_ruler_r(N)}")
        return "bethe"
    raise ValueError(f"layout must be 'ruler', 'consecutive' or a Layout, got {layout!r}")


_GL_X, _GL_W = np.polynomial.legendre.leggauss(48)


def _integral_01(f, panels: int = 96) -> float:
    """∫_0^1 f(x) dx by composite Gauss–Legendre (48 nodes × ``panels`` panels)."""
    edges = np.linspace(0.0, 1.0, panels + 1)
    a, b = edges[:-1, None], edges[1:, None]
    xs = 0.5 * (b - a) * _GL_X[None, :] + 0.5 * (a + b)
    vals = f(xs.ravel()).reshape(xs.shape)
    return float(np.sum(0.5 * (b - a) * _GL_W[None, :] * vals))


def _integral_01_graded(f, panels: int = 160) -> float:
    """∫_0^1 f(x) dx on geometrically graded panels (1e-12 .. 1), for large N where the
    integrand of μ drops within x ≲ N^(−(r−1)/r), far inside the first uniform panel."""
    edges = np.concatenate(([0.0], np.geomspace(1e-12, 1.0, panels)))
    a, b = edges[:-1, None], edges[1:, None]
    xs = 0.5 * (b - a) * _GL_X[None, :] + 0.5 * (a + b)
    vals = f(xs.ravel()).reshape(xs.shape)
    return float(np.sum(0.5 * (b - a) * _GL_W[None, :] * vals))


def _mu_finite_scalar(N: int, r: int, layout: LayoutLike) -> float:
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1)
    _check_r_le_n(N, r)
    method = _resolve_layout(N, r, layout)
    if method == "consecutive":
        if N <= EXACT_N_MAX or r == 2:
            return float(_survival_consecutive(N, r).sum())

        def integrand_c(x: np.ndarray) -> np.ndarray:  # exact P_x = tr(T^N) ≈ λ_max^N
            return np.exp(N * _log_lambda_consecutive(np.minimum(x, 1.0), r))

        return (N + 1) * _integral_01_graded(integrand_c)

    def integrand(x: np.ndarray) -> np.ndarray:
        return np.exp(N * bethe_log_survival(np.minimum(x, 1.0), r))

    quad = _integral_01 if N <= EXACT_N_MAX else _integral_01_graded
    return (N + 1) * quad(integrand)


def mu_finite(N: int | np.ndarray, r: int | np.ndarray,
              layout: LayoutLike = "ruler") -> float | np.ndarray:
    """Mean failures to wipe-out μ(N, r) at finite N (better than the Γ form of the paper).

    Uses the exact identity μ = Σ_k P0(k) = (N + 1) ∫_0^1 P_x dx (Poissonisation: P_x is the
    probability of no wipe-out when every group dies independently with probability x), and

    - ``layout='consecutive'``: the exact count of k-subsets of the cycle Z_N without r
      consecutive dead groups (no approximation at all);
    - ``layout='ruler'`` (r ≥ 3): the Bethe approximation of P_x (see
      :func:`bethe_log_survival`), valid when two types share at most one holder
      (N > 2·o_(r−1) − 1). For r ≤ 2 the ruler is the consecutive layout, so it is exact.

    Measured against Monte Carlo on the paper's grids (N = 200, 600, 1000, every usable r;
    Monte Carlo standard error 0.15 %) the error is below 0.4 %, i.e. within MC noise (the Γ
    form of :func:`mu_closed` is off by up to 4 % at r = 2, N = 200); see
    notebooks/35_mc_validation.ipynb.

    Parameters
    ----------
    N : int or array
        Number of groups, N ≥ 1.
    r : int or array
        Redundancy, 1 ≤ r ≤ N (ruler: N > 2·o_(r−1) − 1).
    layout : {'ruler', 'consecutive'} or Layout
        The stacking layout. A :class:`~spare_lib.stacking.layout.Layout` must be consecutive or satisfy
        the independence condition (N, r must match it).

    Examples
    --------
    >>> round(float(mu_finite(200, 2)), 2), round(float(mu_closed(200, 2)), 2)
    (13.04, 12.53)
    """
    if isinstance(layout, Layout) or np.ndim(N) == 0 and np.ndim(r) == 0:
        return _mu_finite_scalar(_as_py_int("N", N), _as_py_int("r", r), layout)
    Nb, rb = np.broadcast_arrays(np.asarray(N), np.asarray(r))
    out = np.array([_mu_finite_scalar(_as_py_int("N", n), _as_py_int("r", k), layout)
                    for n, k in zip(Nb.ravel(), rb.ravel(), strict=True)])
    return out.reshape(Nb.shape)


def _as_py_int(name: str, v: object) -> int:
    a = _as_int_array(name, v, 1)
    return int(a)


def survival_finite(N: int, r: int, layout: LayoutLike = "ruler") -> np.ndarray:
    """P0(k) = P(no wipe-out after k failures), k = 0..N (so P(K > k) for the failures to wipe-out K).

    Consecutive layout (and r ≤ 2): exact count (see :func:`mu_finite`). Ruler layout, r ≥ 3:
    de-Poissonisation of the Bethe P_x by the saddle-point method. With z = x/(1−x) the
    generating function Σ_k C(N,k) P0(k) z^k equals F(z) = (1+z)^N P_x; its k-th coefficient
    is ≈ F(z_k) z_k^(−k) / sqrt(2π κ2) at the saddle z_k (κ1 = k, cumulants in log z), and
    dividing by the same saddle-point form of C(N, k) cancels the leading error.

    Returns
    -------
    ndarray, shape (N + 1,)
        Non-increasing, P0(k) = 1 for k < r, P0(N) = 0 (for r ≤ N), Σ_k P0(k) ≈ μ(N, r).
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1)
    _check_r_le_n(N, r)
    if _resolve_layout(N, r, layout) == "consecutive":
        return _survival_consecutive(N, r).copy()
    return _saddle_survival(N, r, lambda x: bethe_log_survival(x, r))


def _saddle_survival(N: int, r: int, log_px_per_group) -> np.ndarray:  # noqa: ANN001 - callable
    """Saddle-point de-Poissonisation of (1/N) log P_x (see :func:`survival_finite`)."""
    # grid in t = log z
    t = np.linspace(np.log(0.5 / N), np.log(2.0 * N), 6001)
    x = 1.0 / (1.0 + np.exp(-t))
    psi = N * (np.logaddexp(0.0, t) + log_px_per_group(x))
    d1 = np.gradient(psi, t)
    d2 = np.gradient(d1, t)
    d1 = np.maximum.accumulate(d1)
    out = np.zeros(N + 1)
    out[: min(r, N + 1)] = 1.0
    k = np.arange(r, N, dtype=float)
    tk = np.interp(k, d1, t)
    log_num = np.interp(tk, t, psi) - k * tk - 0.5 * np.log(2 * np.pi * np.interp(tk, t, d2))
    x0 = k / N
    log_den = (-N * np.log1p(-x0) - k * (np.log(x0) - np.log1p(-x0))
               - 0.5 * np.log(2 * np.pi * N * x0 * (1 - x0)))
    p = np.exp(np.minimum(log_num - log_den, 0.0))
    out[r:N] = np.minimum.accumulate(p)
    return out


def mu_independent(N: int | np.ndarray, r: int | np.ndarray) -> float | np.ndarray:
    """μ if the N per-type wipe events were independent under Poissonised deaths, exactly.

    (N + 1) ∫_0^1 (1 − x^r)^N dx = (N + 1) Γ(1 + 1/r) Γ(N + 1) / Γ(N + 1 + 1/r): the exact
    integral behind the paper's Γ form (which it approaches as N → ∞, since
    Γ(N + 2)/Γ(N + 1 + 1/r) ~ N^(1 − 1/r)). It keeps the finite-N factor but still ignores the
    positive correlation of types sharing a holder, so it stays below Monte Carlo.
    """
    N_a, r_a = np.broadcast_arrays(_as_int_array("N", N, 1), _as_int_array("r", r, 1))
    rf = r_a.astype(float)
    out = np.exp(np.log(N_a + 1.0) + gammaln(1.0 + 1.0 / rf) + gammaln(N_a + 1.0)
                 - gammaln(N_a + 1.0 + 1.0 / rf))
    return _ret(out)


def overhead_mean(N: int | np.ndarray, r: int | np.ndarray,
                  mu: float | np.ndarray | None = None) -> float | np.ndarray:
    """Average stack depth per failure epoch, the paper's Eq. 5.

    S̄(N, r) ≈ (1/⌊μ⌋) Σ_{k=0}^{⌊μ⌋−1} c(k),  c(k) = ceil(N/(N−k)).

    It assumes S* = c(k) after k failures and a restart cycle of exactly ⌊μ⌋ failures, each
    failure epoch lasting equally long (failures arrive at the constant system rate 1/m).

    Parameters
    ----------
    N : int or array
        Number of groups, N ≥ 1.
    r : int or array
        Redundancy, 1 ≤ r ≤ N.
    mu : float, array or None
        μ(N, r) to plug in; None: the closed form :func:`mu_closed` (the paper's choice).

    Examples
    --------
    >>> round(float(overhead_mean(600, 20)), 3)
    2.342
    """
    if mu is None:
        mu = mu_closed(N, r)
    Nb, mb = np.broadcast_arrays(_as_int_array("N", N, 1), np.asarray(mu, dtype=float))
    if np.any(mb < 1) or np.any(~np.isfinite(mb)):
        raise ValueError(f"mu must be finite and >= 1, got {mu!r}")
    out = np.empty(Nb.shape)
    for idx in np.ndindex(Nb.shape):
        n = int(Nb[idx])
        K = min(int(np.floor(mb[idx])), n)
        k = np.arange(K)
        out[idx] = float(np.mean(-(-n // (n - k))))
    return float(out) if out.ndim == 0 else out


def overhead_finite(N: int, r: int, layout: LayoutLike = "ruler") -> float:
    """Long-run mean stack depth E[Σ_{k<K} c(k)] / E[K] with the finite-N law of K.

    Renewal–reward form of Eq. 5: every failure epoch lasts the same mean time, so the
    time-average of the stack depth over restart cycles is the ratio of expectations; the
    law of K comes from :func:`survival_finite` (P(K > k) = P0(k)) and S* is taken equal to
    c(k) (Monte Carlo: ``montecarlo.overhead_mc`` measures how rarely S* > c(k)).
    """
    N = check_int("N", N, lo=1)
    surv = survival_finite(N, r, layout)[:N]
    c = -(-N // (N - np.arange(N)))
    return float(np.sum(surv * c) / np.sum(surv))
