"""μ with repair (spare_lib.theory.repair): limits, monotonicity, and the simulator.

Tolerance against the simulator: 10 % on the mean time between wipe-outs. Observed over six
cases (N = 100–600, r = 2–4, m = 2–10 min, R = 10–60 min, notebook 80): ≤ 5 %, within ~1.5
standard errors of the simulated means; the uncorrected exponential-repair chain is 5–18 % high.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from spare_lib.cluster import ClusterConfig, simulate
from spare_lib.theory import mu_finite
from spare_lib.theory.repair import (
    mean_failures_to_wipeout_repair,
    mean_time_to_wipeout_repair,
    wipeout_hazard,
    wipeout_with_repair,
)


@pytest.mark.parametrize(("N", "r"), [(200, 3), (600, 8), (100, 2)])
def test_without_repair_the_chain_is_mu_finite(N: int, r: int) -> None:
    f = mean_failures_to_wipeout_repair(N, r, math.inf, 300.0)
    assert f == pytest.approx(float(mu_finite(N, r)), rel=5e-3)


def test_monotone_in_repair_time_and_r() -> None:
    times = [mean_time_to_wipeout_repair(600, 3, R, 300.0) for R in (600.0, 1800.0, 3600.0)]
    assert times[0] > times[1] > times[2] > 0
    by_r = [mean_time_to_wipeout_repair(600, r, 1800.0, 300.0) for r in (2, 3, 4, 8, 20)]
    assert all(a < b for a, b in zip(by_r, by_r[1:], strict=False))
    assert all(math.isfinite(t) for t in by_r)  # no overflow or cancellation at r = 20


def test_stationary_closed_form_in_the_rare_event_limit() -> None:
    """T ≫ R: the chain tends to m·(N−1)^(r−1↓)/(r·ρ^(r−1)) (within 10 % here)."""
    w = wipeout_with_repair(600, 3, 1800.0, 300.0)
    assert w.time_s > 100 * w.repair_s
    assert w.time_s == pytest.approx(w.time_stationary_s, rel=0.10)


def test_hazard_is_a_nondecreasing_probability() -> None:
    q = wipeout_hazard(200, 4)
    assert q[0] == 0.0 and np.all(np.diff(q) >= 0) and q.max() <= 1.0


def test_chain_matches_the_simulator() -> None:
    """spare+repair, exponential clocks, a free checkpoint every step and a 60-s restart, 100
    simulated days (≈ 1,300 wipe-outs): the mean time between wipe-outs matches the chain with
    R = rejoin_s + half a step within 10 %."""
    N, r, m, R = 200, 2, 300.0, 1800.0
    cfg = ClusterConfig(steps=10**7, allreduce_s=2.0, restart_s=60.0, checkpoint_s=0.0,
                        system_mtbf_s=m, failure_dist="exponential", rejoin_s=R)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = simulate("spare+repair", N, r, 1, cfg, seed=11, max_wall_s=100 * 86400.0)
    up = res.total_s - res.restart_s
    assert res.full_restarts > 500
    sim_t = up / res.full_restarts
    w = wipeout_with_repair(N, r, R + 0.5 * up / res.commits, m)
    assert w.time_s == pytest.approx(sim_t, rel=0.10)
    assert w.failures == pytest.approx(np.mean(res.failures_between_restarts), rel=0.10)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="repair_s"):
        wipeout_with_repair(100, 3, 0.0, 300.0)
    with pytest.raises(ValueError, match="mtbf_s"):
        wipeout_with_repair(100, 3, 600.0, -1.0)
    with pytest.raises(ValueError, match="r must"):
        wipeout_with_repair(10, 11, 600.0, 300.0)
    with pytest.raises(ValueError, match="repair_law"):
        wipeout_with_repair(100, 3, 600.0, 300.0, repair_law="weibull")
