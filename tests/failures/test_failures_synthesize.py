"""Synthetic group-failure traces for big clusters from the StepFun trace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_lib.failures import fault_instants, fit_interarrival, servers_to_groups, synthesize
from spare_lib.failures.fit import DISTS

YEAR_S = 365 * 86400.0


def _per_server_rate(tr) -> float:
    return tr.n_faults / (tr.n_nodes * tr.window_s)


def test_block_bootstrap_exact_rate_on_whole_tiles(stepfun_trace):
    """With whole blocks and whole windows every tile replays all faults: the count is exact."""
    tr = stepfun_trace
    out = synthesize(tr, n_gpus=5 * 400 * 8, gpus_per_group=8, horizon_s=2 * tr.window_s, seed=1)
    distinct = len(tr.faults[["node", "start_s"]].drop_duplicates())
    assert len(out) == 5 * 2 * distinct
    assert np.all(np.diff(out[:, 0]) >= 0)


def test_block_bootstrap_group_rate_partial_tiles(stepfun_trace):
    """Per-group rate ~ trace rate x servers per group, with a partial last block and window.

    s.e.: full tiles contribute exactly their faults; each partial-window tile contributes a count
    in [0, F] (F = faults of the trace), whose variance is at most F^2 / 4 (Popoviciu), so
    s.e.(count) <= sqrt(#partial tiles) * F / 2; rates are count / (groups x horizon).
    """
    tr = stepfun_trace
    servers_per_group = 5
    n_servers = 2 * 400 + 200  # two whole blocks and half a block
    horizon = 1.5 * tr.window_s
    out = synthesize(tr, n_gpus=n_servers * 8, gpus_per_group=servers_per_group * 8, horizon_s=horizon,
                     seed=3)
    n_groups = n_servers // servers_per_group
    rate = len(out) / (n_groups * horizon)
    expected = _per_server_rate(tr) * servers_per_group
    partial_tiles = 3 + 2  # 3 blocks in the second (half) window, plus the partial block in window 1
    se = np.sqrt(partial_tiles) * tr.n_faults / 2 / (n_groups * horizon)
    assert abs(rate - expected) < 3 * se


@pytest.mark.parametrize("dist", ["exponential", "weibull"])
def test_fitted_group_rate_within_3_se(stepfun_trace, dist):
    """Per-group rate of the fitted compound renewal process.

    Expected faults per second in the big cluster: (n_servers / n_nodes) x mean size / mu, with mu
    the fitted law's mean gap at system level (for the exponential this is exactly the trace rate).
    s.e. of the count over T from the renewal-reward CLT: Var N_faults ~ (T / mu') (Var S +
    E[S]^2 CV^2), mu' the rescaled mean gap, S the instant size, CV the gap law's coefficient of
    variation; servers per group = 5 with 20,000 servers, so merges inside a group are negligible.
    """
    tr = stepfun_trace
    n_servers, spg, horizon = 20_000, 5, YEAR_S
    out = synthesize(tr, n_gpus=n_servers * 8, gpus_per_group=spg * 8, horizon_s=horizon, method="fitted",
                     seed=5, dist=dist)
    fit = fit_interarrival(tr, "system", dists=(dist,), ci=None).iloc[0]
    sizes = fault_instants(tr)["size"].to_numpy()
    mu = fit["mtbf_s"] * tr.n_nodes / n_servers
    law, has_shape = DISTS[dist]
    args = (fit["shape"],) if has_shape else ()
    cv2 = law.var(*args, scale=fit["scale"]) / law.mean(*args, scale=fit["scale"]) ** 2
    expected_count = horizon / mu * sizes.mean()
    se = np.sqrt(horizon / mu * (sizes.var() + sizes.mean() ** 2 * cv2))
    n_groups = n_servers // spg
    assert abs(len(out) - expected_count) < 3 * se
    if dist == "exponential":  # the exponential MLE is the empirical rate
        rate = len(out) / (n_groups * horizon)
        assert abs(rate - _per_server_rate(tr) * spg) < 3 * se / (n_groups * horizon)


def test_block_bootstrap_keeps_instant_sizes(stepfun_trace):
    """One group per server and one whole window: the multiplicities of identical failure times
    are the trace's instant sizes, once per tile (tiles have independent continuous shifts, so
    faults of different tiles never coincide)."""
    tr = stepfun_trace
    n_blocks = 3
    out = synthesize(tr, n_gpus=n_blocks * 400 * 8, gpus_per_group=8, horizon_s=tr.window_s, seed=9)
    _, mult = np.unique(out[:, 0], return_counts=True)
    got = dict(zip(*np.unique(mult, return_counts=True), strict=True))
    want = fault_instants(tr, tolerance_s=0.0)["size"].value_counts().to_dict()
    assert {int(k): int(v) for k, v in got.items()} == {int(k): n_blocks * int(v) for k, v in want.items()}


def test_600k_gpus_one_year(stepfun_trace):
    """A year of failures for 600k GPUs in groups of 1000 (its 2 s speed target is measured in
    benchmarks/bench_failures.py, not here: these machines are shared and noisy)."""
    for method in ("block-bootstrap", "fitted"):
        out = synthesize(stepfun_trace, 600_000, 1000, YEAR_S, method=method, seed=0)
        assert out.shape[1] == 2 and out[:, 1].max() < 600 and len(out) > 50_000


def test_seeded_and_servers_spanning_groups(stepfun_trace):
    a = synthesize(stepfun_trace, 8 * 800, 8, 1e6, seed=42)
    b = synthesize(stepfun_trace, 8 * 800, 8, 1e6, seed=42)
    np.testing.assert_array_equal(a, b)
    idx, grp = servers_to_groups(np.array([0, 1, 5]), gpus_per_server=8, gpus_per_group=3)
    # server 0: GPUs 0-7 -> groups 0-2; server 1: GPUs 8-15 -> groups 2-5; server 5: GPUs 40-47 -> 13-15
    assert idx.tolist() == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]
    assert grp.tolist() == [0, 1, 2, 2, 3, 4, 5, 13, 14, 15]
    idx, grp = servers_to_groups(np.array([0, 124, 125]), 8, 1000)
    assert grp.tolist() == [0, 0, 1]


def test_simultaneous_servers_of_one_group_give_one_row(make_trace):
    tr = make_trace([100.0, 100.0, 100.0, 500.0], nodes=["a", "b", "c", "a"], n_nodes=4, window_s=1000.0)
    out = synthesize(tr, n_gpus=4 * 8, gpus_per_group=32, horizon_s=1000.0, seed=0)
    assert len(out) == 2 and set(out[:, 1]) == {0.0}


def test_bad_arguments(stepfun_trace):
    tr = stepfun_trace
    with pytest.raises(ValueError, match="method must be"):
        synthesize(tr, 8000, 8, 1e6, method="copula")
    with pytest.raises(ValueError, match="multiple of gpus_per_server"):
        synthesize(tr, 8004, 4, 1e6, gpus_per_server=8)
    with pytest.raises(ValueError, match="multiple of gpus_per_group"):
        synthesize(tr, 8000, 3000, 1e6)
    with pytest.raises(ValueError, match="horizon_s"):
        synthesize(tr, 8000, 8, 0.0)
    with pytest.raises(ValueError, match="trace must be a FaultTrace"):
        synthesize(np.zeros((3, 2)), 8000, 8, 1e6)


@settings(max_examples=25, deadline=None)
@given(n_servers=st.integers(1, 1500), servers_per_group=st.integers(1, 6), gps=st.sampled_from([1, 4, 8]),
       horizon_days=st.floats(0.1, 800.0), method=st.sampled_from(["block-bootstrap", "fitted"]),
       seed=st.integers(0, 2**32 - 1))
def test_rows_sorted_and_groups_in_range(stepfun_trace, n_servers, servers_per_group, gps, horizon_days,
                                         method, seed):
    """Invariants: (n, 2) float rows, times sorted in [0, horizon), integer groups in [0, N), no
    duplicate rows."""
    n_groups = max(1, n_servers // servers_per_group)
    n_gpus = n_groups * servers_per_group * gps
    horizon = horizon_days * 86400.0
    out = synthesize(stepfun_trace, n_gpus, servers_per_group * gps, horizon, method=method, seed=seed,
                     gpus_per_server=gps)
    assert out.ndim == 2 and out.shape[1] == 2 and out.dtype == np.float64
    t, g = out[:, 0], out[:, 1]
    assert np.all(np.diff(t) >= 0) and np.all(t >= 0) and np.all(t < horizon)
    assert np.all(g == np.round(g)) and np.all(g >= 0) and np.all(g < n_groups)
    assert len(np.unique(out, axis=0)) == len(out)
