"""The 600k-H100 preset as a plain namespace, for the predictive model's tests (``theory`` accepts
any object with these fields; importing the cluster layer here would cross the layers)."""

from __future__ import annotations

from types import SimpleNamespace


def cfg600k(N: int, **kw) -> SimpleNamespace:
    """The paper's preset at N groups (T_a = N/100 s), fields overridden by ``kw``."""
    d = {"steps": 10_000, "compute_per_stack_s": 64.0, "jitter_sigma": 0.05, "jitter_min": 0.1,
         "allreduce_s": N / 100, "allreduce_fail_factor": 0.5, "restart_s": 3600.0,
         "stall_s": 0.1, "checkpoint_s": 2e13 / 3.4e11, "failure_dist": "weibull",
         "weibull_shape": 0.78, "system_mtbf_s": 300.0}
    d.update(kw)
    return SimpleNamespace(**d)
