"""Tests of spare_lib.cluster: the 600k-H100 preset and the paper's checkpoint table (SPEC §6)."""

from __future__ import annotations

import math

import pytest

from spare_lib.cluster import (
    ClusterConfig,
    allreduce_600k_s,
    analytic_checkpoint_interval,
    h100_600k,
    paper_checkpoint_interval,
)


@pytest.mark.parametrize(("N", "scale", "ta", "t0"), [(200, 51979, 2.0, 660_000.0),
                                                    (600, 155937, 6.0, 700_000.0),
                                                    (1000, 259894, 10.0, 740_000.0)])
def test_preset_matches_spec(N: int, scale: int, ta: float, t0: float) -> None:
    cfg = h100_600k(N)
    assert round(cfg.weibull_scale_s(N)) == scale
    assert cfg.allreduce_s == ta
    assert cfg.t0_s() == pytest.approx(t0)
    assert cfg.compute_per_stack_s == pytest.approx(64.0)
    assert cfg.checkpoint_s == pytest.approx(58.8235, abs=1e-3)
    assert cfg.group_mean_s(N) == pytest.approx(N * 300.0)
    assert (cfg.steps, cfg.restart_s, cfg.stall_s, cfg.weibull_shape) == (10_000, 3600, 0.1, 0.78)


def test_allreduce_interpolation_is_linear() -> None:
    assert allreduce_600k_s(400) == pytest.approx(4.0)
    assert h100_600k(400).allreduce_s == pytest.approx(4.0)


def test_overrides_and_weibull_mean() -> None:
    cfg = h100_600k(600, failure_dist="exponential", steps=5)
    assert cfg.failure_dist == "exponential" and cfg.steps == 5
    # Weibull scale · Γ(1+1/k) recovers the per-group mean N·m
    c = h100_600k(200)
    assert c.weibull_scale_s(200) * math.gamma(1 + 1 / 0.78) == pytest.approx(60_000.0)


@pytest.mark.parametrize(("method", "N", "r", "C"), [
    ("rep", 200, 3, 6), ("spare", 200, 9, 15), ("spare", 200, 12, 15), ("rep", 200, 12, 3),
    ("rep", 600, 3, 8), ("spare", 600, 8, 23), ("spare", 600, 11, 25), ("rep", 600, 20, 3),
    ("rep", 1000, 3, 10), ("spare", 1000, 9, 30), ("spare", 1000, 26, 32), ("rep", 1000, 21, 4),
])
def test_paper_checkpoint_table(method: str, N: int, r: int, C: int) -> None:
    assert paper_checkpoint_interval(method, N, r) == C


def test_paper_checkpoint_table_covers_every_r() -> None:
    for N, rmax in [(200, 12), (600, 20), (1000, 26)]:
        for r in range(2, rmax + 1):
            assert paper_checkpoint_interval("spare", N, r) >= paper_checkpoint_interval("rep", N, r) - 1


def test_analytic_checkpoint_interval() -> None:
    ts, tf = h100_600k(600).checkpoint_s, 30_000.0
    tc = ts + math.sqrt(ts**2 + 2 * ts * (tf + 3600.0))
    assert analytic_checkpoint_interval(tf, 140.0, h100_600k(600)) == round(tc / 140)
    assert analytic_checkpoint_interval(1.0, 1e6, h100_600k(600)) == 1
    with pytest.raises(ValueError, match="step_s"):
        analytic_checkpoint_interval(tf, 0.0, h100_600k(600))


@pytest.mark.parametrize("kwargs", [
    {"steps": 0}, {"compute_per_stack_s": 0}, {"jitter_sigma": -0.1}, {"allreduce_fail_factor": 1.5},
    {"failure_dist": "gamma"}, {"weibull_shape": 0}, {"system_mtbf_s": -1}, {"restart_s": float("nan")},
])
def test_bad_config_raises(kwargs: dict) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        ClusterConfig(**kwargs)


@pytest.mark.parametrize(("args", "match"), [
    (("ckpt", 200, 3), "method"), (("spare", 300, 3), "N must be one of"),
    (("spare", 200, 13), "r must be in"), (("rep", 600, 1), "r must be in"),
])
def test_bad_checkpoint_table_args(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        paper_checkpoint_interval(*args)
