"""The run assembly of the predictive model: the chain over the checkpoint lattice.

A run is the first cycle (fresh clocks) and then restart + cycle units until the last step is
committed; its state is the number of steps left, a multiple of C plus r0 (a unit starts at a
checkpoint). Pinned here: the numba per-cycle arrays (:func:`_unit_law`) against a numpy
oracle and their probability/time identities; the chain (:func:`_run_on_lattice`) against an
independent backward solve of the renewal equation when every restart has one law (exponential
clocks), and against a Monte Carlo of the model's own units with each run's real restart times
when the law changes with time (Weibull transient); and the property that motivated it —
TTT varies smoothly with r and with the run length for a run about one cycle long (the old
renewal–reward assembly switched regimes there: a 2 % dip in TTT at r = 8 in the wide grid's
setting 33).
"""

from __future__ import annotations

import numpy as np
import pytest
from predict_config import cfg600k as cfg

from spare_lib.theory.predict import MECHANISMS, predict
from spare_lib.theory.predict import chain as Q
from spare_lib.theory.predict import cycle as P

#: Wide-grid setting 33 (N = 5000, m = 5 min, T_r = 5 min, k = 0.6, 2,000 steps): the run is
#: about one cycle long.
SHORT = {"steps": 2000, "system_mtbf_s": 300.0, "restart_s": 300.0, "weibull_shape": 0.6}


def cycles(method, N, r, c):
    return P._cycles(method, N, r, "ruler", MECHANISMS, P._cfg_key(c))


# ------------------------------------------------------------------------- per-cycle arrays
def lattice(C, steps):
    if C is None:
        return np.array([float(steps)])
    M = (steps - 1) // C
    return float(steps - M * C) + float(C) * np.arange(M + 1)


def unit_law_numpy(cyc, C, steps):
    """The oracle of :func:`Q._unit_law`: the same quantities with numpy, ``cyc`` with its
    checkpoint costs."""
    tau, G, V, d = cyc.tau, cyc.G, cyc.V, cyc.delay
    s = lattice(C, steps)
    n = s.size
    cum = np.concatenate(([0.0], np.cumsum(0.5 * np.diff(tau) * (G[1:] + G[:-1]))))
    J = 0 if C is None else min(n - 1, int(V[-1] // C))
    t = np.interp(np.concatenate((s, C * np.arange(1.0, J + 1) if J else [])), V, tau)
    i = np.minimum(np.searchsorted(tau, t, side="right") - 1, tau.size - 2)
    Gi = G[i] + (t - tau[i]) * (G[i + 1] - G[i]) / np.diff(tau)[i]
    Ii = cum[i] + 0.5 * (t - tau[i]) * (G[i] + Gi)
    inside = s < V[-1]
    tm, gt = t[:n], np.where(inside, Gi[:n], 0.0)
    Im = np.where(inside, Ii[:n], cum[-1])
    tc, Gc, Ic = np.zeros(n), np.zeros(n + 1), np.zeros(n + 1)
    Gc[0] = 1.0
    if J:
        tc[1:J + 1], Gc[1:J + 1], Ic[1:J + 1] = t[n:], Gi[n:], Ii[n:]
    Ic[J + 1:] = cum[-1]
    tGc = np.append(tc, 0.0) * Gc
    dG = Gc[:-1] - Gc[1:]
    a = Im + d * (1.0 - gt)
    last = Gc[:-1] - gt
    eJ = (tGc[:-1] - tGc[1:] + np.diff(Ic) + d * dG)[:J + 1]
    eLast = tGc[:-1] - tm * gt + Im - Ic[:-1] + d * last
    ck = np.concatenate(([0.0], np.cumsum(tc * dG)[:-1])) + tc * last
    rw = a - tm * gt - ck
    return np.stack((a, gt, rw, last, eLast)), np.stack((dG[:J + 1], eJ)), tm


CASES = [("spare", 1000, 4, {"steps": 2000, "system_mtbf_s": 120.0, "restart_s": 300.0,
                             "weibull_shape": 0.6}),
         ("spare", 600, 8, {}), ("rep", 200, 2, {"steps": 3000})]


@pytest.mark.parametrize("method,N,r,kw", CASES)
def test_unit_law_kernel_matches_numpy_and_its_identities(method, N, r, kw):
    """Every cycle kind (first, steady, transient) and C from 1 to beyond the run: the kernel
    equals the numpy oracle (1e-9), and per state the outcomes are a distribution (finish,
    wipe-out in an interval before the last checkpoint, after it) whose uptimes add up to the
    cycle's expected time: Σ eJ_j + eLast_m + t_m·G(t_m) = a_m."""
    c = cfg(N, **kw)
    _, _, _, first, ss, transient, _ = cycles(method, N, r, c)
    steps = c.steps
    for cyc in [first, ss] + [x[2] for x in transient]:
        for C in (None, 1, 7, 23, steps, steps + 5):
            ck = c.checkpoint_s / C if C else 0.0
            S, I = Q._unit_law(cyc, C, steps, ck)
            S0, I0, tm = unit_law_numpy(cyc.with_checkpoints(ck), C, steps)
            assert S.shape == S0.shape and I.shape == I0.shape
            np.testing.assert_allclose(S, S0, rtol=1e-9, atol=1e-9 * np.abs(S0).max())
            if I.size:
                np.testing.assert_allclose(I, I0, rtol=1e-9, atol=1e-12 * np.abs(I0).max())
            a, gt, rw, last, elast = S
            dG = np.zeros(S.shape[1])
            eJ = np.zeros(S.shape[1])
            dG[:I.shape[1]], eJ[:I.shape[1]] = I
            before = np.concatenate(([0.0], np.cumsum(dG)[:-1]))  # Σ_{j<m} dG_j
            np.testing.assert_allclose(before + last + gt, 1.0, atol=1e-12)
            assert np.all(last >= -1e-15) and np.all(dG >= -1e-15)
            e_before = np.concatenate(([0.0], np.cumsum(eJ)[:-1]))
            np.testing.assert_allclose(e_before + elast + tm * gt, a, rtol=1e-9)
            assert np.all(rw >= -1e-9 * a.max()) and np.all(rw <= a + 1e-9)


def test_geometric_block_matches_direct_sums():
    """Σ q^i, Σ i q^i over i < n and q^n (the returns to a state, in blocks), from q = 0 to
    q = 1 − 1e-12, against direct sums (rel 1e-6: the series branch is second order)."""
    for x in (1.0, 0.5, 1e-2, 1e-4, 1e-5, 1e-7, 1e-9, 1e-12):
        q = 1.0 - x
        for n in (1.0, 2.0, 7.0, 50.0, 100.0, 1000.0, 20_000.0):
            i = np.arange(int(n))
            want = (np.sum(q**i), np.sum(i * q**i), q**n)
            np.testing.assert_allclose(Q._geometric_block(x, n), want, rtol=1e-6)
        g0, g1, qn = Q._geometric_block(x, np.inf)
        assert g0 == pytest.approx(1.0 / x) and g1 == pytest.approx(q / x**2) and qn == 0.0


# ----------------------------------------------------------------------------------- the chain
def renewal_solve(first, eq, R, C, steps, ck):
    """Expected (time, restarts, rework) of a run whose restarts all have one law: backward
    solve of the renewal equation X_m = x_m + Σ_{j<m} dG_j X_{m−j} + last_m X_0 (x = (R + a,
    1, rw)), then the first cycle from state M. Dense and plain: the independent oracle."""
    S, I = Q._unit_law(eq, C, steps, ck)
    M = S.shape[1] - 1
    dG = np.zeros(M + 1)
    dG[:I.shape[1]] = I[0]
    x = np.stack((R + S[0], np.ones(M + 1), S[2]))
    X = np.zeros((3, M + 1))
    X[:, 0] = x[:, 0] / S[1, 0]
    for m in range(1, M + 1):
        acc = x[:, m] + S[3, m] * X[:, 0] + sum(dG[j] * X[:, m - j] for j in range(1, m))
        X[:, m] = acc / (1.0 - dG[0])
    S1, I1 = Q._unit_law(first, C, steps, ck)
    d1 = np.zeros(M + 1)
    d1[:I1.shape[1]] = I1[0]
    after = sum(d1[j] * X[:, M - j] for j in range(M)) + S1[3, M] * X[:, 0]
    return S1[0, M] + after[0], after[1], S1[2, M] + after[2]


@pytest.mark.parametrize("method,N,r,C,kw", [
    ("spare", 200, 6, 12, {"steps": 1500}),
    ("rep", 200, 2, 4, {"steps": 800, "system_mtbf_s": 120.0, "restart_s": 1200.0}),
    ("spare", 1000, 9, None, {"steps": 150}),
    ("spare", 600, 8, 500, {"steps": 400}),
])
def test_chain_solves_the_renewal_equation_for_one_restart_law(method, N, r, C, kw):
    """Exponential clocks: no transient, every restart has the equilibrium law, so the chain is
    exact and must equal the backward renewal solve (1e-9)."""
    c = cfg(N, failure_dist="exponential", weibull_shape=1.0, **kw)
    R, _, _, first, ss, transient, t_eq = cycles(method, N, r, c)
    assert transient == []
    ck = c.checkpoint_s / C if C else 0.0
    run = Q._run_on_lattice([(0.0, 0.0, first), (t_eq, R, ss)], C, c.steps, ck)
    want = renewal_solve(first, ss, R, C, c.steps, ck)
    assert run["time"] == pytest.approx(want[0], rel=1e-9)
    assert run["restarts"] == pytest.approx(want[1], rel=1e-9, abs=1e-12)
    assert run["rework"] == pytest.approx(want[2], rel=1e-9, abs=1e-9)
    assert run["restart_time"] == pytest.approx(R * want[1], rel=1e-9, abs=1e-9)
    p = predict(method, N, r, C, c)
    assert p.total_s == pytest.approx(want[0] + (c.checkpoint_s if C else 0.0), rel=1e-9)


def monte_carlo_run(laws, C, steps, ck, n_runs, rng):
    """Runs of the model's units with each run's own restart times: the law of a restart at t
    is the tabulated law A or B with the probability of its weight in the log-t0 mixture (the
    chain uses the mean arrival time per state instead)."""
    t0s = [t for t, _, _ in laws[1:]]
    cyc = [c.with_checkpoints(ck) for _, _, c in laws]

    def pick(t):
        if len(laws) == 2 or t >= t0s[-1]:
            return len(laws) - 1
        if t <= t0s[0]:
            return 1
        b = next(k for k, t0 in enumerate(t0s) if t0 >= t)
        w = np.log(t / t0s[b - 1]) / np.log(t0s[b] / t0s[b - 1])
        return b + 1 if rng.random() < w else b

    totals = np.empty(n_runs)
    for k in range(n_runs):
        s, t, law = float(steps), 0.0, 0
        while True:
            c = cyc[law]
            t += laws[law][1] if law else 0.0
            u = rng.random()
            if s < c.V[-1]:
                ts = float(np.interp(s, c.V, c.tau))
                if u < np.interp(ts, c.tau, c.G):
                    t += ts
                    break
            y = 0.0 if u > c.G[0] else float(np.interp(-u, -c.G, c.tau))
            t += y + c.delay
            if C:
                s -= C * np.floor(np.interp(y, c.tau, c.V) / C)
            law = pick(t)
        totals[k] = t
    return totals


def test_chain_matches_monte_carlo_with_real_restart_times():
    """Setting 33 at r = 8, C = 35 (Weibull k = 0.6: the restarts fall in the transient): the
    chain's mean-arrival-time law per state against 3,000 runs with each run's own restart
    times (tolerance 4 s.e., ≈ 0.08 %)."""
    c = cfg(5000, **SHORT)
    R, _, _, first, ss, transient, t_eq = cycles("spare", 5000, 8, c)
    laws = [(0.0, 0.0, first)] + transient + [(t_eq, R, ss)]
    ck = c.checkpoint_s / 35
    run = Q._run_on_lattice(laws, 35, c.steps, ck)
    mc = monte_carlo_run(laws, 35, c.steps, ck, 3000, np.random.default_rng(5))
    se = mc.std() / np.sqrt(mc.size)
    assert abs(run["time"] - mc.mean()) < 4 * se


# -------------------------------------------------------------------------------- smoothness
def test_short_run_is_smooth_in_r_and_in_steps():
    """A run about one cycle long (setting 33): TTT/T0 rises with r at fixed C (the old
    assembly dipped 2 % at r = 8: 1.902, 1.862, 1.906), and the wall time per extra step
    changes by < 10 % from one 200-step increment of the run to the next over 200–6,000 steps
    (now ≤ 5 %, within 205–230 s/step; before: 50–363 s/step, jumps of up to 70 %, where the
    final partial cycle switched from a renewal–reward estimate to a failure-free finish)."""
    c = cfg(5000, **SHORT)
    ttt = [predict("spare", 5000, r, 35, c).ttt_over_t0 for r in range(5, 12)]
    assert np.all(np.diff(ttt) > 0)
    for r in (7, 8, 9):
        total = [predict("spare", 5000, r, 35, cfg(5000, **{**SHORT, "steps": s})).total_s
                 for s in range(200, 6001, 200)]
        per_step = np.diff(total) / 200
        assert np.all(np.abs(np.diff(per_step)) < 0.1 * per_step[1:])


@pytest.mark.parametrize("method,N,r,C,kw", [
    ("spare", 600, 8, 2, {}),
    ("spare", 200, 2, 4, {}),
    ("rep", 1000, 3, 3, {}),
    ("spare", 5000, 12, 1, {"steps": 3000}),
])
def test_coarse_chain_is_close_to_the_exact_one(method, N, r, C, kw, monkeypatch):
    """More than _MAX_STATES checkpoints in a run: the chain on every g-th checkpoint (ends in
    between split by distance) against the chain on every checkpoint, 1e-4 (on the paper grid
    the largest difference is 1.0e-4, at r = 2)."""
    c = cfg(N, **kw)
    R, _, _, first, ss, transient, t_eq = cycles(method, N, r, c)
    laws = [(0.0, 0.0, first)] + transient + [(t_eq, R, ss)]
    ck = c.checkpoint_s / C
    assert (c.steps - 1) // C + 1 > Q._MAX_STATES
    coarse = Q._run_on_lattice(laws, C, c.steps, ck)
    monkeypatch.setattr(Q, "_MAX_STATES", 10**6)
    exact = Q._run_on_lattice(laws, C, c.steps, ck)
    for key in ("time", "restarts", "rework", "restart_time"):
        assert coarse[key] == pytest.approx(exact[key], rel=1e-4, abs=1e-9)
