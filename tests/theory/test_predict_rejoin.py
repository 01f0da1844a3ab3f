"""The predictive model of the methods whose failed groups rejoin (spare+repair, elastic-drop,
elastic-rebalance): its kernels against plain oracles, its limits, and a small simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from predict_config import cfg600k
from scipy.special import gamma
from scipy.stats import binom

from spare_lib.theory.predict import predict
from spare_lib.theory.predict import validation_rejoin as vr
from spare_lib.theory.predict.curves import _cfg_key, _law_key
from spare_lib.theory.predict.model import MECHANISMS
from spare_lib.theory.predict.rejoin import _tables, moments
from spare_lib.theory.predict.rejoin_law import first_process
from spare_lib.theory.predict.rejoin_wait import rejoin_wait
from spare_lib.theory.predict.terms import emax_std_normal

REJOIN = ("spare+repair", "elastic-drop", "elastic-rebalance")


def _group_mc(dist: str, shape: float, mean: float, R: float, taus: np.ndarray, n: int,
              seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Plain Monte Carlo of one group: fresh clock at 0, a counted failure sends it away for R,
    its clock renewed at the notice and the failures while away absorbed. (U(τ), a(τ))."""
    rng = np.random.default_rng(seed)
    scale = mean / gamma(1 + 1 / shape) if dist == "weibull" else mean

    def draw(size: int) -> np.ndarray:
        return scale * rng.weibull(shape, size) if dist == "weibull" else rng.exponential(scale, size)

    counts = np.zeros(taus.size)
    away = np.zeros(taus.size)
    cur = draw(n)
    while (active := cur <= taus[-1]).any():
        c = cur[active]
        counts += (c[None, :] <= taus[:, None]).sum(1)
        away += ((c[None, :] <= taus[:, None]) & (taus[:, None] < c[None, :] + R)).sum(1)
        nxt = c + draw(c.size)
        while (m := nxt < c + R).any():
            nxt[m] += draw(int(m.sum()))
        cur[active] = nxt
    return counts / n, away / n


@pytest.mark.parametrize("dist,shape", [("exponential", 1.0), ("weibull", 0.6)])
def test_group_process_matches_monte_carlo(dist, shape):
    """U(τ) (notices by τ) and a(τ) (away at τ) of the renewal solve against 40,000 simulated
    groups; tolerance 4 standard errors of the Monte Carlo plus 0.5 % (the quadrature)."""
    N, m, R = 20, 300.0, 600.0
    cfg = cfg600k(N, failure_dist=dist, weibull_shape=shape, system_mtbf_s=m)
    gp = first_process(N, _law_key(_cfg_key(cfg), MECHANISMS), R, 1e5)
    taus = np.array([100.0, 600.0, 900.0, 3000.0, 12000.0, 30000.0, 1e5])
    n = 40_000
    U_mc, a_mc = _group_mc(dist, shape, N * m, R, taus, n, seed=7)
    U = np.interp(taus, gp.tau, gp.U[0])
    a = np.interp(taus, gp.tau, gp.away(R)[0])
    se_U = np.sqrt(np.maximum(U_mc, 1e-3) / n)  # counts: Poisson-like
    se_a = np.sqrt(a_mc * (1 - a_mc) / n)
    assert np.all(np.abs(U - U_mc) <= 4 * se_U + 0.005 * U_mc)
    assert np.all(np.abs(a - a_mc) <= 4 * se_a + 0.005 * a_mc)


def _group_mc_steps(shape: float, mean: float, R: float, step_mean: float, step_k: float,
                    taus: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Plain Monte Carlo of one group of a rejoining method as the event core runs it: fresh
    clock at 0, noticed when it fails, back at the first step start after notice + R (the step
    starts a renewal process of Gamma(``step_k``) lengths from 0), its clock renewed at the
    notice and its failures absorbed up to notice + R; one in the wait for the step start is
    noticed when the group is back. (U(τ), a(τ))."""
    rng = np.random.default_rng(seed)
    scale = mean / gamma(1 + 1 / shape)
    ns = int((taus[-1] + R) / step_mean * 1.5) + 50
    starts = np.concatenate((np.zeros((n, 1)), np.cumsum(
        rng.gamma(step_k, step_mean / step_k, (n, ns)), axis=1)), axis=1)
    counts = np.zeros(taus.size)
    away = np.zeros(taus.size)
    cur = scale * rng.weibull(shape, n)
    rows = np.arange(n)
    while (active := cur <= taus[-1]).any():
        c, st = cur[active], starts[rows[active]]
        back = st[np.arange(c.size), (st < (c + R)[:, None]).sum(1)]
        counts += (c[None, :] <= taus[:, None]).sum(1)
        away += ((c[None, :] <= taus[:, None]) & (taus[:, None] < back[None, :])).sum(1)
        nxt = c + scale * rng.weibull(shape, c.size)
        while (m := nxt < c + R).any():
            nxt[m] += scale * rng.weibull(shape, int(m.sum()))
        cur[active] = np.maximum(nxt, back)
    return counts / n, away / n


@pytest.mark.parametrize("R,after", [(300.0, (2.0, 4.0, 10.0)), (1800.0, (0.5, 1.0, 2.0, 4.0, 10.0))])
def test_group_process_with_the_wait_for_a_step_start_matches_monte_carlo(R, after):
    """A group is back at the first step start after its rejoin time, R' = R + W on average (W
    the mean residual of the step starts, E[T²]/(2 E[T]) once R spans a step), and a failure in
    that wait is noticed when it is back: with the wait uniform on [0, 2W] in the renewal and in
    the away window, U(τ) and a(τ) agree with the Monte Carlo within 4 standard errors plus
    1 % (a) and 1.5 % (U) at τ = R + ``after``·W and 20,000 s (the uniform law stands in for the
    residual's; with R = 5 min the first returns come while the first notices still ramp up,
    and a(τ) is 6 % high at R + W, so the check starts at R + 2W there). With every group back
    at R exactly (the model before), a(τ) is off by more than that around the returns at
    R = 30 min (0.48 against 0.46 at R + W/2, 20 s.e.)."""
    N, m, shape = 32, 120.0, 0.78
    step_mean, step_k = 400.0, 3.0
    W = (step_mean ** 2 / step_k + step_mean ** 2) / (2 * step_mean)
    cfg = cfg600k(N, weibull_shape=shape, system_mtbf_s=m)
    law = _law_key(_cfg_key(cfg), MECHANISMS)
    taus = np.append(R + W * np.array(after), 20_000.0)
    n = 60_000
    U_mc, a_mc = _group_mc_steps(shape, N * m, R, step_mean, step_k, taus, n, seed=3)
    se = np.sqrt(a_mc * (1 - a_mc) / n)
    gp = first_process(N, law, R, 3e4, W)
    a = np.interp(taus, gp.tau, gp.away(R + W, W)[0])
    U = np.interp(taus, gp.tau, gp.U[0])
    assert np.all(np.abs(a - a_mc) <= 4 * se + 0.01 * a_mc), (a, a_mc)
    assert np.all(np.abs(U - U_mc) <= 4 * np.sqrt(U_mc / n) + 0.015 * U_mc), (U, U_mc)
    if R > 1000.0:
        old = first_process(N, law, R, 3e4)
        a_old = np.interp(taus, old.tau, old.away(R + W)[0])
        assert not np.all(np.abs(a_old - a_mc) <= 4 * se + 0.01 * a_mc)


@pytest.mark.parametrize("N,r", [(20, 3), (20, 4), (32, 4)])
def test_low_count_survival_is_the_count_of_sets_without_a_dead_type(N, r):
    """P0(k) for k < 3r − 3 (inclusion–exclusion over singles and pairs) against the plain count
    over every k-set of dead groups on the ruler layout (every set up to 2·10^5 of them, else
    a 40,000-set sample: 4 s.e.); above, Bethe's table scaled to meet it (non-increasing)."""
    import itertools

    from spare_lib.stacking.layout import ruler_layout
    from spare_lib.theory.finite import survival_finite
    from spare_lib.theory.predict.rejoin import low_count_survival

    holders = ruler_layout(N, r).holders
    bethe = survival_finite(N, r)
    p0 = low_count_survival(bethe, N, r)
    rng = np.random.default_rng(0)
    for k in range(r, 3 * r - 3):
        if math.comb(N, k) <= 200_000:
            sets = np.array(list(itertools.combinations(range(N), k)))
        else:
            sets = np.argsort(rng.random((40_000, N)), axis=1)[:, :k]
        dead = np.zeros((len(sets), N), bool)
        dead[np.arange(len(sets))[:, None], sets] = True
        ok = 1.0 - dead[:, holders].all(axis=2).any(axis=1).mean()
        tol = 1e-12 if math.comb(N, k) <= 200_000 else 4 * math.sqrt(ok * (1 - ok) / len(sets))
        assert p0[k] == pytest.approx(ok, abs=tol), k
    k_top = 3 * r - 4
    np.testing.assert_allclose(p0[k_top + 1:] * bethe[k_top], bethe[k_top + 1:] * p0[k_top],
                               rtol=1e-12, atol=1e-300)
    assert np.all(np.diff(p0) <= 0) and p0[0] == 1.0 and p0[-1] == 0.0


@pytest.mark.parametrize("method,r,b", [("spare+repair", 3, 1), ("elastic-rebalance", 1, 8),
                                        ("elastic-drop", 1, 1)])
def test_moments_kernel_matches_plain_sums(method, r, b):
    """The windowed numba sums against sums over every k with scipy's binomial pmf."""
    N = 60
    tables = _tables(method, N, r, "ruler", b)
    logc, p0, ratio, F = tables[:4]
    x = np.array([1e-4, 0.01, 0.05, 0.2, 0.5, 0.9])
    got = moments(tables, N, x)
    k = np.arange(N + 1)
    for i, xi in enumerate(x):
        w = binom.pmf(k, N, xi)
        s0 = float(w @ p0)
        assert got[0, i] == pytest.approx(s0, rel=1e-9, abs=1e-13)
        if s0 > 1e-12:
            for j in range(F.shape[0]):
                assert got[1 + j, i] == pytest.approx(float(w @ F[j]) / s0, rel=1e-8, abs=1e-12)


def test_rejoin_wait_matches_monte_carlo():
    """The residual of the step-start renewal process at lag R − d (lattice renewal function)
    against 200,000 simulated step sequences; tolerance 1 s (Monte Carlo s.e. ≈ 0.1 s)."""
    rng = np.random.default_rng(3)
    for ell in (533.0, 469.0, 405.0):
        t = np.zeros(200_000)
        while (m := t <= ell).any():
            t[m] += np.where(rng.random(int(m.sum())) < 0.35, 195.0, 130.0)
        mc = float((t - ell).mean())
        model = rejoin_wait(600.0, [(1.0, 130.0, 0.0, [(0.35, 65.0)])], [(1.0, 600.0 - ell)])
        assert model == pytest.approx(mc, abs=1.0)
    # back before the next step start: the wait is d − R
    assert rejoin_wait(100.0, [(1.0, 130.0, 0.0, [])], [(1.0, 150.0)]) == pytest.approx(50.0)


def test_spare_repair_without_rejoin_is_spare():
    """rejoin_s = ∞: SPARe+repair is SPARe+CKPT exactly (the simulator runs the same core);
    a rejoin time far beyond the run (1e9 s) is within 0.5 % of it through the rejoin model."""
    N = 200
    a = predict("spare", N, 6, 20, cfg600k(N, steps=2000))
    b = predict("spare+repair", N, 6, 20, cfg600k(N, steps=2000, rejoin_s=math.inf))
    assert {**a.as_dict(), "method": "spare+repair"} == b.as_dict()
    c = predict("spare+repair", N, 6, 20, cfg600k(N, steps=2000, rejoin_s=1e9))
    assert c.ttt_over_t0 == pytest.approx(a.ttt_over_t0, rel=5e-3)


@pytest.mark.parametrize("method,r", [("spare+repair", 3), ("elastic-drop", 1),
                                      ("elastic-rebalance", 1)])
def test_no_failures_gives_the_failure_free_time(method, r):
    """With no failures every method computes one shard per step over the barrier of N groups
    (rebalance's b micro-batches of jitter σ√b have a shard's spread): TTT/T0 =
    (steps·(64 s·(1 + σ E[max of N]) + T_a) + (⌊steps/C⌋ + 1)·T_s)/T0, whatever b, the fetch
    and the stalls."""
    N, steps, C = 200, 2000, 100
    for b, fetch in ((1, 0.0), (32, 30.0)):
        cfg = cfg600k(N, steps=steps, rejoin_s=600.0, system_mtbf_s=1e13, microbatches=b,
                      fetch_s=fetch, stall_s=60.0)
        p = predict(method, N, r, C, cfg)
        step = 64.0 * (1 + 0.05 * float(emax_std_normal(N))) + cfg.allreduce_s
        ff = (steps * step + (steps // C + 1) * cfg.checkpoint_s) / (steps * (64 + cfg.allreduce_s))
        assert p.ttt_over_t0 == pytest.approx(ff, rel=1e-6)
        assert p.restarts < 1e-9 and p.overhead == pytest.approx(1.0, abs=1e-6)


def test_more_stall_fetch_or_rejoin_stall_costs_time():
    """Every cost the config adds is paid: TTT/T0 grows with the stall, the rejoin stall and
    the fetch; elastic-drop drops more samples (and trains longer) when groups stay away
    longer."""
    N = 100

    def ttt(method: str, **kw) -> float:
        base = {"steps": 1000, "rejoin_s": 600.0, "stall_s": 10.0, "rejoin_stall_s": 0.0,
                "microbatches": 8, "fetch_s": 0.0}
        return predict(method, N, 3 if method == "spare+repair" else 1, 50,
                       cfg600k(N, **{**base, **kw})).ttt_over_t0

    for method in REJOIN:
        assert ttt(method, stall_s=10.0) < ttt(method, stall_s=60.0)
        assert ttt(method, rejoin_stall_s=0.0) < ttt(method, rejoin_stall_s=30.0)
    assert ttt("elastic-rebalance", fetch_s=0.0) < ttt("elastic-rebalance", fetch_s=30.0)
    cfg = {"steps": 1000, "stall_s": 10.0}
    short = predict("elastic-drop", N, 1, 50, cfg600k(N, rejoin_s=300.0, **cfg))
    long_ = predict("elastic-drop", N, 1, 50, cfg600k(N, rejoin_s=1800.0, **cfg))
    assert short.dropped_sample_fraction < long_.dropped_sample_fraction
    assert short.ttt_over_t0 < long_.ttt_over_t0


def test_small_simulation_agrees():
    """Model against the simulator (common failure streams, 8 seeds, N = 64, 600 steps,
    m = 5 min, 30 s stalls, 10 min rejoin): within 3 standard errors plus 4 % — the model's
    error on notebook 55's grid is ≈ 1–2 % on average; short runs add the first cycle's
    transient and runs of this size have s.e. ≈ 1 %."""
    cluster = pytest.importorskip("spare_lib.cluster")
    N = 64
    cfg = cluster.h100_600k(N, steps=600, rejoin_s=600.0, stall_s=30.0, microbatches=8)
    seeds = vr.trial_failure_seeds(11, 8)
    for method, r, C in (("spare+repair", 3, 50), ("elastic-drop", 1, 600),
                         ("elastic-rebalance", 1, 600)):
        sims = np.array([cluster.simulate(method, N, r, C, cfg, seed=s, failure_seed=f).ttt_over_t0
                         for s, f in enumerate(seeds)])
        mean, se = sims.mean(), sims.std(ddof=1) / np.sqrt(sims.size)
        model = predict(method, N, r, C, cfg).ttt_over_t0
        assert abs(model - mean) <= 3 * se + 0.04 * mean, (method, model, mean, se)


def test_bad_inputs_are_refused():
    cfg = cfg600k(100, rejoin_s=600.0)
    with pytest.raises(ValueError, match="r must be 1"):
        predict("elastic-drop", 100, 2, 10, cfg)
    with pytest.raises(ValueError, match="mechanisms"):
        predict("elastic-rebalance", 100, 1, 10, cfg, mechanisms=("barrier",))
    with pytest.raises(ValueError, match="microbatches"):
        predict("elastic-rebalance", 100, 1, 10, cfg600k(100, rejoin_s=600.0, microbatches=0))
    with pytest.raises(ValueError, match="rejoin_stall_s"):
        predict("elastic-drop", 100, 1, 10, cfg600k(100, rejoin_s=600.0, rejoin_stall_s=-1.0))
    with pytest.raises(ValueError, match="rejoin_s"):
        predict("elastic-drop", 100, 1, 10, cfg600k(100, rejoin_s=0.0))


def test_grid_is_a_latin_design_and_the_tables_add_up():
    """81 settings, every (N, m, stall, rejoin) once, and T_r, b meet every level of every
    other factor; the point table and the summary of a toy run table."""
    rows = vr.rejoin_grid_settings("full")
    assert len(rows) == 81 and len(vr.rejoin_grid_settings("smoke")) == 4
    df = pd.DataFrame(rows)
    for rot in ("restart_s", "microbatches"):
        for other in ("N", "system_mtbf_s", "stall_s", "rejoin_s"):
            assert df.groupby([rot, other]).size().size == 9
    assert vr.trial_failure_seeds(5, 3) == vr.trial_failure_seeds(5, 3)
    cfg = cfg600k(32, steps=300, rejoin_s=600.0)
    runs = pd.DataFrame([{"method": "elastic-drop", "N": 32, "r": 1, "C": 300,
                          "ttt_over_t0": t, "availability": 0.9, "overhead": 1.0,
                          "full_restarts": 0, "dropped_sample_fraction": 0.01,
                          "completed": True} for t in (1.2, 1.3)])
    tab = vr.rejoin_point_table(runs, ["method", "N", "r", "C"], lambda row: cfg)
    model = predict("elastic-drop", 32, 1, 300, cfg).ttt_over_t0
    assert tab.sim_ttt.iloc[0] == pytest.approx(1.25)
    assert tab.err_model_pct.iloc[0] == pytest.approx(100 * (model / 1.25 - 1))
    summary = vr.rejoin_error_summary(tab)
    assert summary.points.tolist() == [1, 1]


@pytest.mark.parametrize("method,r,rel", [("ckpt", 1, 3e-4), ("rep", 3, 3e-4),
                                          ("elastic-drop", 1, 3e-4), ("spare+repair", 3, 3e-4),
                                          ("elastic-rebalance", 1, 3e-4), ("spare", 6, 5e-3)])
def test_job_wide_failures_against_the_renewal_closed_form(method, r, rel):
    """With no group failures, job-wide failures at rate ν are the textbook case: each segment of
    C steps and its checkpoint (length L) takes (e^(νL) − 1)(1/ν + δ + (e^(νT_r) − 1)/ν) on
    average (δ the detection time plus the attempt the failure interrupts: half a compute and
    the shortened all-reduce; a job-wide failure during the restart starts it again, Eq. J1 of
    theory.predict.jobwide). The chain over the checkpoint lattice gives it to 3e-4
    (interpolation of e^(−ντ) on the cycle's grid); SPARe+CKPT's cycle takes its delay at the
    end of its grid, where the stack has deepened: 0.5 %."""
    N, steps, C, nu, d = 200, 2000, 50, 1 / 20000.0, 120.0
    cfg = cfg600k(N, steps=steps, system_mtbf_s=1e13, rejoin_s=600.0, jitter_sigma=0.0)
    p = predict(method, N, r, C, cfg, job_mtbf_s=1 / nu, detect_s=d)
    depth = r if method == "rep" else 1
    L = C * (64.0 * depth + cfg.allreduce_s) + cfg.checkpoint_s
    delay = 0.5 * 64.0 * depth + 0.5 * cfg.allreduce_s + d
    restart = math.expm1(nu * cfg.restart_s) / nu  # (J1) with X = T_r: no group fails in it
    closed = steps // C * math.expm1(nu * L) * (1 / nu + delay + restart) + cfg.checkpoint_s
    assert p.total_s == pytest.approx(closed, rel=rel)
    assert p.restarts == pytest.approx(steps // C * math.expm1(nu * L), rel=5 * rel)
    none = predict(method, N, r, C, cfg)
    assert predict(method, N, r, C, cfg, job_mtbf_s=math.inf).as_dict() == none.as_dict()
    assert predict(method, N, r, C, cfg, job_mtbf_s=1e15).ttt_over_t0 == pytest.approx(
        none.ttt_over_t0, rel=1e-6)


def test_job_wide_failures_in_the_batch_and_bad_values():
    from spare_lib.theory.predict import predict_batch

    cfg = cfg600k(100, steps=1000, rejoin_s=600.0)
    b = predict_batch(("spare", "elastic-drop"), 100, [4], [20, 100], cfg, job_mtbf_s=7200.0,
                      detect_s=60.0)
    for method, out in b.items():
        for j, C in enumerate((20, 100)):
            # the batch and the single point run the same formulas through differently
            # vectorised kernels: their sums may round apart by a few ulp on some CPUs
            # (4e-16 relative on an AMD EPYC), hence 1e-12 rather than equality
            assert out.ttt_over_t0[0, j] == pytest.approx(
                predict(method, 100, int(out.r[0]), C, cfg, job_mtbf_s=7200.0,
                        detect_s=60.0).ttt_over_t0, rel=1e-12)
    with pytest.raises(ValueError, match="job_mtbf_s"):
        predict("spare", 100, 4, 20, cfg, job_mtbf_s=0.0)
    with pytest.raises(ValueError, match="detect_s"):
        predict("spare", 100, 4, 20, cfg, job_mtbf_s=7200.0, detect_s=-1.0)


def test_docs_quote_the_committed_validation():
    """The error table of docs/predictive_model.md is the committed full run's
    (data/results/predict_methods_summary.csv, notebook 55 §5): a stale number fails."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    csv = root / "data" / "results" / "predict_methods_summary.csv"
    if not csv.exists():
        pytest.skip("no committed full run of notebook 55 §5")
    summary = pd.read_csv(csv).set_index("method")
    text = re.sub(r"<!--.*?-->", "", (root / "docs" / "predictive_model.md").read_text())  # tags
    labels = {"spare+repair": "SPARe+repair", "elastic-drop": "Elastic-drop",
              "elastic-rebalance": "Elastic-rebalance"}
    for method, label in labels.items():
        m = re.search(rf"^\| {re.escape(label)} \| (\d+) \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) "
                      rf"\| ([\d.]+) pt \|", text, flags=re.M)
        assert m, label
        row = summary.loc[method]
        assert int(m.group(1)) == int(row.points)
        assert float(m.group(2)) == round(float(row.ttt_mean_pct), 1)
        assert float(m.group(3)) == round(float(row.ttt_worst_pct), 1)
        assert float(m.group(4)) == round(float(row.ttt_worst_in_se), 1)
        assert float(m.group(5)) == round(float(row.avail_mean_pts), 2)
    # the prose: every method within 8 %; SPARe+repair's two largest errors at the smallest N and
    # m, too low at the shorter rejoin time and too high at the longer
    assert summary.loc[list(labels), "ttt_worst_pct"].max() <= 8.0
    grid = pd.read_csv(csv.parent / "predict_methods_grid.csv")
    repair = grid[grid.method == "spare+repair"]
    top2 = repair.loc[repair.err_model_pct.abs().nlargest(2).index].sort_values("rejoin_s")
    assert (top2.N == min(vr.REJOIN_N)).all() and (top2.system_mtbf_s == min(vr.REJOIN_MTBF_S)).all()
    assert top2.rejoin_s.iloc[0] < top2.rejoin_s.iloc[1]
    assert top2.err_model_pct.iloc[0] < 0 < top2.err_model_pct.iloc[1]


def test_chain_of_retries_kernel_matches_a_plain_sum():
    """after_retry (numba) against the series summed in plain Python to 2,000 terms: each retry
    hit with e2(n) = 1 − e^(−n h), retried with ρ, n less the hit's J ~ Poisson given J ≥ 1."""
    from spare_lib.theory.predict.rejoin_step import after_retry

    def plain(n: float, h: float, rho: float) -> float:
        tot, prob = 0.0, 1.0
        for _ in range(2000):
            a = n * h
            e2 = -math.expm1(-a)
            prob *= e2
            tot += prob
            prob *= rho
            n = max(n - a / max(e2, 1e-12), 1.0)
        return tot

    cases = [(190.0, 0.007, 0.3), (30.0, 0.03, 1.0), (500.0, 1e-4, 0.9), (5.0, 0.4, 0.5),
             (2.0, 1.0, 1.0)]
    got = after_retry(np.array([c[0] for c in cases]), np.array([c[1] for c in cases]),
                      np.array([c[2] for c in cases]))
    for g, (n, h, rho) in zip(got, cases, strict=True):
        assert g == pytest.approx(plain(n, h, rho), rel=1e-6)


def test_repair_diagnosis_settings_and_restart_interval():
    """§5b: 2 × 2 × 2 settings around a point (fewer where its level is the grid's shortest),
    each with the point's N, r, C; the restarts' interval is Student's t of the runs (scipy
    oracle: ``stats.t.interval`` on the same counts), the ratio the model over the mean."""
    from scipy import stats

    point = {"N": 32, "r": 4, "C": 7, "system_mtbf_s": 300.0, "stall_s": 120.0,
             "rejoin_s": 1800.0, "restart_s": 3600.0, "rejoin_stall_s": 0.0,
             "microbatches": 32, "fetch_s": 30.0, "config_id": 17}
    rows = vr.repair_diagnosis_settings(point)
    assert len(rows) == 8 and len({(r["failure_dist"], r["stall_s"], r["rejoin_s"]) for r in rows}) == 8
    assert {r["stall_s"] for r in rows} == {min(vr.REJOIN_STALL_S), 120.0}
    assert all(r["N"] == 32 and r["r"] == 4 and r["C"] == 7 for r in rows)
    short = vr.repair_diagnosis_settings({**point, "stall_s": min(vr.REJOIN_STALL_S)})
    assert len(short) == 4
    with pytest.raises(ValueError, match="missing"):
        vr.repair_diagnosis_settings({"N": 32})
    cfg = cfg600k(32, steps=300, rejoin_s=600.0)
    counts = [3, 5, 4, 9]
    runs = pd.DataFrame([{"method": "spare+repair", "N": 32, "r": 3, "C": 50, "ttt_over_t0": 2.0,
                          "availability": 0.9, "overhead": 1.5, "full_restarts": k,
                          "dropped_sample_fraction": 0.0, "completed": True} for k in counts])
    tab = vr.repair_diagnosis_table(runs, ["method", "N", "r", "C"], lambda row: cfg)
    lo, hi = stats.t.interval(0.95, len(counts) - 1, loc=np.mean(counts), scale=stats.sem(counts))
    assert tab.sim_restarts_lo.iloc[0] == pytest.approx(lo)
    assert tab.sim_restarts_hi.iloc[0] == pytest.approx(hi)
    assert tab.restarts_ratio.iloc[0] == pytest.approx(tab.model_restarts.iloc[0] / np.mean(counts))
    with pytest.raises(ValueError, match="level"):
        vr.repair_diagnosis_table(runs, ["method", "N", "r", "C"], lambda row: cfg, level=1.5)


def test_away_process_uptime_oracle_and_refusals():
    """r = 1: any failure wipes out, so every surviving set is the all-up set; with groups away
    longer than the run lasts (S below s_floor well before a group comes back) the fresh draws
    are the killed process's own replicates (ratio 1 to rounding), and the uptime is the discrete
    first-failure time dt·(1/p − 1), p = 1 − exp(−N·dt/(N·m)) (within 4 standard errors of the
    Monte Carlo: sd ≈ mean for a geometric time). Same seed, same numbers."""
    N, m, R, reps, spa = 16, 120.0, 3600.0, 4000, 720
    out = vr.away_process_uptime(N, 1, N * m, R, reps=reps, steps_per_away=spa, seed=3)
    dt = R / spa
    expect = dt * (1.0 / -math.expm1(-dt / m) - 1.0)
    assert out["restart_ratio"] == pytest.approx(1.0, abs=1e-12)
    assert abs(out["uptime_s"] - expect) <= 4 * expect / math.sqrt(reps)
    assert out == vr.away_process_uptime(N, 1, N * m, R, reps=reps, steps_per_away=spa, seed=3)
    for bad in ({"N": 8, "r": 9}, {"group_mtbf_s": 0.0}, {"away_s": -1.0}, {"reps": 1},
                {"s_floor": 1.0}):
        kw = {"N": 8, "r": 2, "group_mtbf_s": 100.0, "away_s": 10.0, **bad}
        with pytest.raises(ValueError):
            vr.away_process_uptime(kw.pop("N"), kw.pop("r"), kw.pop("group_mtbf_s"),
                                   kw.pop("away_s"), **kw)


def test_away_process_model_oracle_and_refusals():
    """r = 1: the first failure wipes out, so both forms give the first-failure time of N
    exponential clocks, N·m/N = m (within 0.5 %: the grid's quadrature); at §5b's point (N = 32,
    r = 5, a 64-minute group MTBF, 30 minutes away) the chain survives longer than fresh draws
    (by more than 5 %: the bare process's Monte Carlo puts the true ratio at about 1.11)."""
    N, m = 16, 120.0
    one = vr.away_process_model(N, 1, N * m, 3600.0)
    assert one["chain_uptime_s"] == pytest.approx(m, rel=5e-3)
    assert one["fresh_uptime_s"] == pytest.approx(m, rel=5e-3)
    five = vr.away_process_model(32, 5, 32 * 120.0, 1800.0)
    assert five["chain_uptime_s"] > 1.05 * five["fresh_uptime_s"]
    cut = vr.away_process_model(N, 1, N * m, 3600.0, horizon_s=m)  # ∫_0^m e^(−t/m) = m(1 − 1/e)
    assert cut["chain_uptime_s"] == pytest.approx(m * (1 - math.exp(-1)), rel=5e-3)
    for N_, r_, mtbf, away in ((8, 9, 100.0, 10.0), (8, 2, 0.0, 10.0), (8, 2, 100.0, -1.0)):
        with pytest.raises(ValueError):
            vr.away_process_model(N_, r_, mtbf, away)
    with pytest.raises(ValueError, match="horizon_s"):
        vr.away_process_model(8, 2, 100.0, 10.0, horizon_s=0.0)
