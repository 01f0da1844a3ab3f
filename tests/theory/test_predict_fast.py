"""The fast paths of the predictive model against their plain oracles.

Every shortcut taken for speed (issue 17: one evaluation ≤ 10 ms) is pinned here against the
straightforward computation it replaces: the numba binomial-moment kernel against the numpy
sums, the Newton solve of the Bethe message against bisection, Kaplansky's count against
inclusion–exclusion, the batched restart laws / failed fractions / restart-duration nodes
against one-at-a-time loops, the lazily filled tables and τ prefixes against whole-grid
evaluations, and a few whole predictions against the values of the model before the speed-up
(rel 1e-5; the requirement was 1e-4), re-pinned when the run assembly changed.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from predict_config import cfg600k

from spare_lib.theory import finite as F
from spare_lib.theory.predict import clear_caches, predict
from spare_lib.theory.predict import cycle as P
from spare_lib.theory.predict.terms import (
    Clock,
    failed_fraction,
    failed_fractions_many,
    restart_law,
    restart_laws,
)


# ------------------------------------------------------------------------ finite-N survival
@pytest.mark.parametrize("r", [2, 3, 5, 9, 20, 28])
def test_bethe_newton_matches_bisection(r):
    """Newton in logits vs 54 bisection steps (absolute precision 2^-55): the same root to
    1e-13 for x < 1, and a residual of the logit equation at the rounding level."""
    rng = np.random.default_rng(r)
    x = np.concatenate(([0.0, 1e-300, 1e-12, 1.0], rng.random(3000) * (1 - 1e-6),
                        1 / (1 + np.exp(-np.linspace(-12, 9, 2001)))))
    u = F._bethe_fixed_point(x, r)
    ub = F._bethe_fixed_point_bisect(x, r)
    assert u[0] == 0.0 and u[3] == 1.0  # (bisection stops short of 1 at x = 1 exactly)
    assert np.max(np.abs(np.delete(u - ub, 3))) < 1e-13
    k = r - 1
    inner = (x > 0) & (x < 1)
    lhs = np.log(u[inner]) - np.log1p(-u[inner])
    rhs = np.log(x[inner]) - np.log1p(-x[inner]) + k * np.log1p(-(u[inner] ** k))
    assert np.max(np.abs(lhs - rhs) / (1 + np.abs(lhs))) < 1e-13


def test_bethe_root_guess_is_close():
    """The tabulated inverse that starts Newton is within 1e-8 of the root (two steps then
    reach the rounding level)."""
    x = 1 / (1 + np.exp(-np.linspace(-12, 9, 3001)))
    for r in (2, 8, 28):
        tx = np.log(x) - np.log1p(-x)
        u = F._bethe_fixed_point_bisect(x, r)
        t = np.log(u) - np.log1p(-u)
        assert np.max(np.abs(F._bethe_root_guess(tx, r - 1.0) - t)) < 1e-8


def _no_two_adjacent_ie(N: int) -> np.ndarray:
    """Inclusion–exclusion count of dead sets with no r = 2 consecutive dead groups."""
    out = np.zeros(N + 1)
    for k in range(N + 1):
        m = N - k
        if k < 2:
            out[k] = 1.0
            continue
        if m == 0:
            break
        comps = sum((-1) ** j * comb(m, j) * comb(k - 2 * j + m - 1, m - 1)
                    for j in range(min(m, k // 2) + 1))
        out[k] = (N * comps) / (m * comb(N, k))
        if out[k] < 1e-30:
            break
    return out


@pytest.mark.parametrize("N", [*range(2, 40), 200, 601])
def test_kaplansky_count_equals_inclusion_exclusion(N):
    """r = 2: the O(N) Kaplansky recurrence gives the same correctly rounded P0(k), bit for bit."""
    assert np.array_equal(F._survival_no_two_adjacent(N), _no_two_adjacent_ie(N))
    assert np.array_equal(F.survival_finite(N, 2), _no_two_adjacent_ie(N))


# --------------------------------------------------------------------- the binomial moments
def _binomial_moments_numpy(tables, N: int, x: np.ndarray, full: bool = True):  # noqa: ANN001
    """Plain-numpy oracle of :func:`_binomial_moments` (SPARe tables, 1-d x): the same sums,
    every row padded to the widest window (terms beyond ±7 s.d. carry < 1e-11 of the mass)."""
    logc, p0, S_n, ph0_n = tables[2:6]
    mean = N * x
    sd = np.sqrt(N * x * (1.0 - x))
    lo = np.clip(np.floor(mean - 7.0 * sd - 1), 0, N).astype(int)
    # rows whose binomial mass lies where every layout is already wiped out contribute nothing
    rows = np.nonzero(p0[lo] > 1e-14)[0]
    px = np.zeros_like(x)
    moments = [np.zeros_like(x) for _ in range(4)]
    if rows.size:
        xr, lor = x[rows], lo[rows]
        width = int(np.max(np.ceil(2 * 7.0 * sd[rows]))) + 3
        n = lor[:, None] + np.arange(width)[None, :]
        valid = n <= N
        n = np.minimum(n, N)
        xx = np.clip(xr, 1e-300, 1 - 1e-16)[:, None]
        w = np.exp(logc[n] + n * np.log(xx) + (N - n) * np.log1p(-xx)) * p0[n]
        w[~valid] = 0.0
        pr = w.sum(1)
        px[rows] = pr
        if full:
            ws = w / np.maximum(pr, 1e-300)[:, None]
            for out, f in zip(moments, (n, S_n[n], ph0_n[n], n == 0), strict=True):
                out[rows] = (ws * f).sum(1)
    if not full:
        return px
    return (px, *moments)


@pytest.mark.parametrize("N,r,layout", [(200, 9, "ruler"), (600, 8, "ruler"), (50, 5, "consecutive"),
                                        (3000, 2, "ruler"), (5000, 12, "ruler")])
def test_binomial_kernel_matches_numpy_oracle(N, r, layout):
    """The numba kernel sums each row over its own ±7 s.d. window, the numpy oracle pads every
    row to the widest; the extra terms carry < 1e-11 of the mass."""
    tables = P._n_tables("spare", N, r, layout)
    x = np.concatenate(([0.0, 1e-300, 1e-9, 1.0],
                        np.sort(np.random.default_rng(N + r).random(3000)) ** 2))
    got = np.array(P._binomial_moments(tables, N, x))
    want = np.array(_binomial_moments_numpy(tables, N, x))
    np.testing.assert_array_equal(got[0] == 0, want[0] == 0)
    m = want[0] > 1e-12
    np.testing.assert_allclose(got[0][m], want[0][m], rtol=1e-9)
    np.testing.assert_allclose(got[1:, m], want[1:, m], rtol=1e-9, atol=1e-9)
    # any shape in, the same shape out
    assert P._binomial_moments(tables, N, x[:6].reshape(2, 3))[2].shape == (2, 3)


# ------------------------------------------------------------------------- failure curves
def _failed_fraction_direct(clock, tau, rl, restart_s, T):
    """failed_fraction written out: one loop over the completion lattice, clock.survival."""
    h = rl.h
    jT = int(np.floor(T / h))
    alive_b = np.zeros_like(tau)
    for j in range(jT + 1):
        if rl.pmf_path_b[j] > 1e-18:
            alive_b += rl.pmf_path_b[j] * clock.survival(T + tau - j * h + restart_s)
    alive = clock.no_failure(rl.t0, T + tau) * (rl.first_window_ok > 0) + \
        alive_b / clock.survival(restart_s)
    return np.clip(1 - alive / min(1.0, rl.pmf_group[: jT + 1].sum()), 0, 1)


def test_failed_fractions_match_direct_sum_and_batch():
    clock = Clock("weibull", 600 * 300.0, 0.78)
    tau = np.concatenate(([0.0], np.geomspace(16.0, 5e6, 60)))
    t0s = [None, *P.transient_restart_times(clock)]
    laws = restart_laws(clock, 600, 3600.0, ["equilibrium" if t is None else t for t in t0s])
    nodes = P.restart_end_nodes_many(laws, 600)
    ends = [[T for _, T in nd] for nd in nodes]
    many = failed_fractions_many(clock, tau, laws, ends, restart_s=3600.0)
    for rl, e, x in zip(laws, ends, many, strict=True):
        for T, row in zip(e, x, strict=True):
            np.testing.assert_allclose(row, _failed_fraction_direct(clock, tau, rl, 3600.0, T),
                                       rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(
                failed_fraction(clock, tau, restart=rl, restart_s=3600.0, end_s=T), row,
                rtol=1e-13, atol=1e-16)


def test_restart_laws_batch_equals_single():
    clock = Clock("weibull", 200 * 300.0, 0.78)
    firsts = ["equilibrium", "fresh", 5e3, 4e4, 2e5]
    for law, fw in zip(restart_laws(clock, 200, 3600.0, firsts), firsts, strict=True):
        one = restart_law(Clock("weibull", 200 * 300.0, 0.78), 200, 3600.0, first_window=fw)
        assert law.mean_s == pytest.approx(one.mean_s, rel=1e-14)
        np.testing.assert_allclose(law.pmf_group, one.pmf_group, rtol=0, atol=1e-16)
        assert law.windows_per_group == pytest.approx(one.windows_per_group, rel=1e-14)
        assert law.t0 == one.t0


def _end_nodes_loop(restart, N, n=5):
    """The per-bin loop restart_end_nodes replaced (np.sum of each bin)."""
    cdf = np.minimum(np.cumsum(restart.pmf_group), 1.0) ** N
    pmf = np.diff(np.concatenate(([0.0], cdf)))
    t = restart.h * np.arange(pmf.size)
    edges = np.searchsorted(cdf, np.linspace(0.0, 1.0, n + 1)[1:-1])
    out = []
    for a, b in zip(np.concatenate(([0], edges)), np.concatenate((edges, [pmf.size])),
                    strict=True):
        w = float(pmf[a:b].sum())
        if w > 1e-12:
            out.append((w, float(np.sum(pmf[a:b] * t[a:b]) / w)))
    tot = sum(w for w, _ in out)
    return [(w / tot, T) for w, T in out]


@pytest.mark.parametrize("N", [50, 200, 1000, 5000])
def test_restart_end_nodes_match_loop(N):
    clock = Clock("weibull", N * 300.0, 0.78)
    laws = restart_laws(clock, N, 3600.0, ["equilibrium", *P.transient_restart_times(clock)])
    for law, got in zip(laws, P.restart_end_nodes_many(laws, N), strict=True):
        want = _end_nodes_loop(law, N)
        assert len(got) == len(want)
        for (w, T), (w2, T2) in zip(got, want, strict=True):
            assert w == pytest.approx(w2, rel=1e-13) and T == pytest.approx(T2, rel=1e-14)
            if T2 / law.h == np.floor(T2 / law.h):  # a one-cell bin sits on the lattice exactly
                assert T == T2


def test_transient_table_fills_lazily_to_the_same_values():
    full = Clock("weibull", 60_000.0, 0.78)
    lazy = Clock("weibull", 60_000.0, 0.78)
    t0 = 1.5e5
    ys, v_full = full._transient_table(t0)
    assert v_full.size == ys.size
    for q in (0.01, 0.4, 1.7, 10.0):
        _, v = lazy._transient_table(t0, q)
        assert ys[v.size - 1] >= min(q, ys[-1])
        np.testing.assert_allclose(v, v_full[: v.size], rtol=0, atol=1e-15)
    y = np.array([0.0, 10.0, 3e3, 1e5, 4e6, 1e9])
    np.testing.assert_allclose(Clock("weibull", 60_000.0, 0.78).no_failure(t0, y),
                               full.no_failure(t0, y), rtol=0, atol=1e-15)


def test_lazy_curves_equal_whole_grid():
    """x and hazards on a τ prefix are those of the whole grid (the lazy source's chunks and the
    one-sided gradient at the prefix's end never leak into the values used)."""
    N, mech = 600, ("barrier", "restart_windows", "failure_law", "failure_events")
    key = P._cfg_key(cfg600k(N))
    clear_caches()
    c = P._curves(N, mech, key, "steady", None)[0]
    x_part, hz_part = c.x_prefix(50).copy(), c.hz_prefix(49).copy()
    x_all, hz_all = c.x, c.hz  # fills the rest
    clock = Clock("weibull", N * 300.0, 0.78)
    rl = restart_law(clock, N, 3600.0)
    direct = np.array([failed_fraction(clock, c.tau, restart=rl, restart_s=3600.0, end_s=T)
                       for _, T in P.restart_end_nodes(rl, N)])
    np.testing.assert_allclose(x_all, direct, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(x_part, x_all[:, :50])
    np.testing.assert_allclose(hz_part, hz_all[:, :49], rtol=1e-13, atol=0)
    grad = np.maximum(np.gradient(-np.log(np.maximum(1.0 - x_all, 1e-300)), c.tau, axis=1), 0.0)
    np.testing.assert_allclose(hz_all, grad, rtol=1e-13, atol=0)


def test_cycle_integrals_match_numpy():
    tau = np.concatenate(([0.0], np.geomspace(1.0, 1e5, 40)))
    rng = np.random.default_rng(3)
    cyc = P._Cycle(tau, np.exp(-tau / 3e4), 70 + rng.random(tau.size), np.ones_like(tau),
                   np.zeros_like(tau), np.zeros_like(tau), 5.0)
    y = rng.random(tau.size)
    assert cyc.trapz(y) == np.trapezoid(y, tau)
    np.testing.assert_array_equal(cyc.gradient(y), np.gradient(y, tau))
    assert cyc.U == float(np.trapezoid(cyc.G, tau)) + 5.0
    c2 = cyc.with_checkpoints(4.0)
    assert c2.U == cyc.U and np.array_equal(c2.rate, 1.0 / (cyc.step + 4.0))
    u = np.linspace(0.0, 1.0, 9)
    np.testing.assert_array_equal(P._gradient(u**2, u), np.gradient(u**2, u))


# ----------------------------------------------------------------------- whole predictions
#: (method, N, r, C, kwargs, TTT/T0, availability): the model before the speed-up, re-pinned
#: when the run assembly became the chain over the checkpoint lattice (test_predict_run.py;
#: that changed these TTT/T0 by −0.25 % to +0.10 % and the availabilities by −0.13 to 0 pt).
PINNED = [
    ("spare", 200, 9, 15, {}, 2.9434528104394846, 0.8715769573863115),
    ("spare", 600, 8, 23, {}, 2.4885338138701845, 0.9394340051392331),
    ("spare", 1000, 2, 10, {}, 5.6607710840111825, 0.43220123932569987),
    ("rep", 1000, 3, 10, {}, 3.955052386264471, 0.8363592456954391),
    ("ckpt", 200, 1, 8, {}, 2860426.8963247146, 0.004794281326123584),
    ("spare", 5000, 12, 40, {}, 1.888402503586859, 0.9932304987273094),
    ("spare", 600, 5, 20, {"layout": "consecutive"}, 2.607639056646602, 0.8920635382451625),
    ("spare", 600, 9, 15, {"mechanisms": ()}, 2.068816131717231, 0.9706068636418811),
]


@pytest.mark.parametrize("method,N,r,C,kw,ttt,avail", PINNED)
def test_predictions_unchanged_by_the_speed_up(method, N, r, C, kw, ttt, avail):
    p = predict(method, N, r, C, cfg600k(N), **kw)
    assert p.ttt_over_t0 == pytest.approx(ttt, rel=1e-5)
    assert p.availability == pytest.approx(avail, rel=1e-5)


def test_results_do_not_depend_on_cache_state_or_order():
    """r evaluated in either order from cold memos (the lazy τ prefixes grow differently, so
    the same numbers are summed in other chunks: rounding only), and warm = memoised."""
    c = cfg600k(600)
    clear_caches()
    a = [predict("spare", 600, r, 20, c).as_dict() for r in (2, 12, 20)]
    clear_caches()
    b = [predict("spare", 600, r, 20, c).as_dict() for r in (20, 12, 2)][::-1]
    again = [predict("spare", 600, r, 20, c).as_dict() for r in (2, 12, 20)]  # from b's memo
    for x, y, z in zip(a, b, again, strict=True):
        for k, v in x.items():
            if isinstance(v, float):
                assert y[k] == pytest.approx(v, rel=1e-12, abs=1e-300), k
                assert z[k] == y[k], k


def test_cluster_without_training_cycle_is_refused():
    """A restart window of 2 h against a system MTBF of 90 s: every layout is wiped out at the
    first poll of a cycle; the model says so instead of failing on an empty grid."""
    c = cfg600k(90, system_mtbf_s=89.1, failure_dist="exponential", jitter_sigma=0.0,
                steps=2000)
    with pytest.raises(ValueError, match="no training cycle"):
        predict("ckpt", 90, 1, 79, c)
