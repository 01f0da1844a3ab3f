"""The job model of ``spare design`` (issue 27, docs/design.md): formulas, validity, bad input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_lib.cluster.config import allreduce_time_s
from spare_lib.design import JobSpec
from spare_lib.design.job import GPUS, LLAMA3_405B

LLAMA = LLAMA3_405B


def test_quantities_follow_the_formulas_of_design_md():
    job = JobSpec(**LLAMA, exposed_allreduce=1.0, restart_s=600.0)
    M = 128
    spec = job.cluster(M)
    N = job.gpus // M
    peak = GPUS["h100"].peak_flops
    assert job.steps == math.ceil(15.6e12 / 16e6)
    # 6 P (B / N) flop of one shard over M x peak x MFU
    assert spec.compute_per_stack_s == pytest.approx(6 * 405e9 * 16e6 / N / (M * peak * 0.40),
                                                     rel=1e-12)
    ta = allreduce_time_s(N, 2 * 405e9 / M, "ring", bw_bytes_s=job.allreduce_bw_bytes_s,
                          latency_s=job.allreduce_latency_s)
    assert spec.allreduce_s == pytest.approx(ta, rel=1e-12)
    assert spec.step_s == pytest.approx(spec.compute_per_stack_s + ta, rel=1e-12)
    assert spec.checkpoint_s == pytest.approx(14 * 405e9 / job.storage_bw_bytes_s, rel=1e-12)
    assert spec.system_mtbf_s == pytest.approx(job.gpu_mtbf_s / (N * M), rel=1e-12)
    assert spec.restart_s == 600.0
    # the default: the MFU is end to end, the all-reduce hidden in it
    assert JobSpec(**LLAMA).cluster(M).allreduce_s == 0.0


@settings(max_examples=40, deadline=None)
@given(params=st.floats(1e9, 2e13), gpu=st.sampled_from(sorted(GPUS)))
def test_a_group_size_is_valid_exactly_when_the_state_fits(params, gpu):
    job = JobSpec(params=params, tokens=1e13, gpus=1_000_000, gpu=gpu, tokens_per_step=16e6)
    M = job.min_group_size()
    mem = job.device.memory_bytes * job.memory_headroom
    assert 16 * params / M <= mem * (1 + 1e-12)
    assert M == 1 or 16 * params / (M - 1) > mem
    assert job.why_invalid(M, 2) == ""
    if M > 1:
        assert "training state" in job.why_invalid(M - 1, 2)


@pytest.mark.parametrize(("field", "value", "words"), [
    ("params", 0.0, "params"), ("tokens", -1.0, "tokens"), ("mfu", 0.0, "mfu must be in (0, 1]"),
    ("mfu", 1.5, "mfu must be in (0, 1]"), ("gpus", 1, "gpus"), ("gpu", "v100", "gpu"),
    ("memory_headroom", 0.0, "memory_headroom"), ("exposed_allreduce", 2.0, "exposed_allreduce"),
    ("tokens_per_step", 1e14, "tokens_per_step must be at most tokens"),
])
def test_bad_job_values_are_refused_naming_the_field(field, value, words):
    with pytest.raises(ValueError) as e:
        JobSpec(**(LLAMA | {field: value}))
    assert words in str(e.value)
