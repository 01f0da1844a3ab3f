"""The all-reduce / cluster-size model (issue 16): formulas, calibration, limits, layouts."""

from __future__ import annotations

import math

import pytest

from spare_lib.cluster.config import (
    ALLREDUCE_ALGORITHMS,
    GPU_MTBF_S,
    allreduce_time_s,
    cluster_config,
    cluster_groups,
    h100_600k,
    max_independent_r,
    scale_layout,
)
from spare_lib.stacking import is_sidon_mod
from spare_lib.stacking.layout import GOLOMB_RULERS


def test_ring_formula_by_hand() -> None:
    p, n, bw, a = 8, 1e9, 1e10, 1e-5
    assert allreduce_time_s(p, n, "ring", bw_bytes_s=bw, latency_s=a) == pytest.approx(
        2 * 7 * a + 2 * 7 / 8 * n / bw)
    assert allreduce_time_s(p, n, "rabenseifner", bw_bytes_s=bw, latency_s=a) == pytest.approx(
        2 * 3 * a + 2 * 7 / 8 * n / bw)
    assert allreduce_time_s(p, n, "tree", bw_bytes_s=bw, latency_s=a) == pytest.approx(
        2 * 3 * a + 2 * n / bw)
    assert allreduce_time_s(1, n) == 0.0


@pytest.mark.parametrize("N,M", [(200, 3000), (600, 1000), (1000, 600)])
def test_calibration_reproduces_the_paper_preset(N: int, M: int) -> None:
    cfg, paper = cluster_config(600_000, M), h100_600k(N)
    assert cluster_groups(600_000, M) == N
    assert cfg.allreduce_s == pytest.approx(paper.allreduce_s, rel=0.004)  # stated: ≤ 0.35 %
    assert cfg.system_mtbf_s == pytest.approx(paper.system_mtbf_s)
    assert cfg.checkpoint_s == pytest.approx(paper.checkpoint_s)
    assert cfg.weibull_scale_s(N) == pytest.approx(paper.weibull_scale_s(N))
    assert cfg.t0_s() == pytest.approx(paper.t0_s(), rel=2e-4)  # 64 s + T_a: ≤ 0.011 %


def test_mtbf_scales_with_the_gpu_count_and_overrides_win() -> None:
    assert cluster_config(2_000_000, 1000).system_mtbf_s == pytest.approx(GPU_MTBF_S / 2e6)
    assert cluster_config(100_000, 1000).system_mtbf_s == pytest.approx(1800.0)
    # leftover GPUs stay idle and do not fail
    assert cluster_config(1_000_000, 128).n_gpus == 7812 * 128
    cfg = cluster_config(1_000_000, 128, allreduce_s=3.0, restart_s=1800.0, steps=10)
    assert (cfg.allreduce_s, cfg.restart_s, cfg.steps) == (3.0, 1800.0, 10)


def test_allreduce_grows_with_groups_at_fixed_cluster() -> None:
    ta = [cluster_config(1_000_000, m, model_bytes=2e12).allreduce_s for m in (1000, 250, 64)]
    assert ta[0] < ta[1] < ta[2]
    for alg in ALLREDUCE_ALGORITHMS:
        assert allreduce_time_s(1000, 1e9, alg) < allreduce_time_s(1000, 2e9, alg)


@pytest.mark.parametrize("kwargs,msg", [
    ({"gpus": 100, "gpus_per_group": 1000}, "gpus_per_group must be at most gpus"),
    ({"gpus": 1_000_000, "gpus_per_group": 64, "gpu_memory_bytes": 80e9}, "at least 250 GPUs"),
    ({"gpus": 1000, "gpus_per_group": 10, "allreduce": "butterfly"}, "algorithm must be one of"),
    ({"gpus": 0, "gpus_per_group": 1}, "gpus"),
])
def test_inputs_the_model_cannot_honour(kwargs: dict, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        cluster_config(**kwargs)


def test_scale_layout_ruler_when_independent_else_sidon() -> None:
    for N, r in [(1000, 9), (16_000, 15), (100_000, 17), (10**5, 26)]:
        lay = scale_layout(N, r)
        assert lay.kind == "ruler" and lay.independent
    for N, r in [(48, 7), (64, 8), (80, 9)]:
        assert N <= 2 * GOLOMB_RULERS[r][-1] - 1  # the ruler fails here
        lay = scale_layout(N, r)
        assert lay.kind == "sidon-mod" and lay.r == r and is_sidon_mod(lay.offsets, N)
        # independence checked directly: two types share at most one holder
        hold = [set(row) for row in lay.holders.tolist()]
        assert all(len(hold[0] & hold[t]) <= 1 for t in range(1, N))


def test_scale_layout_names_the_limit() -> None:
    with pytest.raises(ValueError, match=r"N >= r\(r-1\)"):
        scale_layout(24, 6)
    with pytest.raises(ValueError, match="use r <= "):
        scale_layout(100, 10)  # allowed by the Sidon bound, none found by the search
    assert max_independent_r(24) == 5 and max_independent_r(10**6) >= 28


def test_rulers_cover_r_star_up_to_1e8() -> None:
    for N in (10**3, 10**5):
        assert scale_layout(N, math.floor(math.log2(N) + 0.833)).kind == "ruler"
    # N = 1e8 (not built: the stacks would take 22 GB): r* = 27 is in the table and independent
    r_star = math.floor(math.log2(10**8) + 0.833)
    assert r_star in GOLOMB_RULERS and 10**8 > 2 * GOLOMB_RULERS[r_star][-1] - 1
