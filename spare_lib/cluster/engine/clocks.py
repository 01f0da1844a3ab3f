"""Failure inputs of the event core other than its own random clocks: a replayed failure trace in
CSR form, and the domain events of a cluster with failure domains.
"""

from __future__ import annotations

import math

import numpy as np

from spare_lib._util.validate import check_int
from spare_lib.cluster.config import ClusterConfig


def _trace_arrays(failure_trace: object, N: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR form of a failure trace: per-group sorted failure times."""
    arr = np.asarray(failure_trace, dtype=np.float64)
    if arr.size == 0:
        arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"failure_trace must have shape (n, 2) of (time_s, group), got shape "
                         f"{arr.shape}")
    times, groups = arr[:, 0], arr[:, 1]
    if not np.all(np.isfinite(times)) or np.any(times < 0):
        raise ValueError("failure_trace times must be finite and in [0, inf)")
    if np.any(groups != np.round(groups)) or np.any(groups < 0) or np.any(groups >= N):
        raise ValueError(f"failure_trace groups must be integers in [0, N-1] = [0, {N - 1}]")
    g = groups.astype(np.int64)
    order = np.lexsort((times, g))
    ptr = np.zeros(N + 1, dtype=np.int64)
    np.add.at(ptr, g + 1, 1)
    return np.cumsum(ptr), np.ascontiguousarray(times[order])


def domain_events(N: int, config: ClusterConfig, horizon_s: float,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Domain events of ``config`` up to ``horizon_s``, as CSR arrays by domain.

    Events form a renewal process of rate q/m (gaps exponential, or Weibull with the config's
    shape k, of mean m/q); each hits a uniformly chosen domain of D consecutive groups (domain
    ⌊g/D⌋; the last may be smaller). Returns ``(ptr, times)``: domain d's event times, sorted,
    are ``times[ptr[d]:ptr[d + 1]]``.
    """
    D = check_int("domain_size", config.domain_size, lo=1, hi=N)
    n_dom = -(-N // D)
    mean_gap = config.system_mtbf_s / config.domain_fault_share
    k = config.weibull_shape
    chunks, t_end = [], 0.0
    n = max(16, int(1.2 * horizon_s / mean_gap) + 16)
    while t_end <= horizon_s:
        if config.failure_dist == "weibull":
            gaps = mean_gap / math.gamma(1.0 + 1.0 / k) * rng.weibull(k, n)
        else:
            gaps = rng.exponential(mean_gap, n)
        times = t_end + np.cumsum(gaps)
        chunks.append(times)
        t_end = float(times[-1])
    times = np.concatenate(chunks)
    times = times[times <= horizon_s]
    dom = rng.integers(0, n_dom, times.size)
    order = np.lexsort((times, dom))
    ptr = np.zeros(n_dom + 1, dtype=np.int64)
    np.add.at(ptr, dom + 1, 1)
    return np.cumsum(ptr), np.ascontiguousarray(times[order])
