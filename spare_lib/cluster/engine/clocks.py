"""Failure inputs of the event core other than its own random clocks: a replayed failure trace in
CSR form (with its job events and failure classes), the domain events of a cluster with failure
domains, the job-wide events of a failure mix, and the classes of events.
"""

from __future__ import annotations

import math

import numpy as np

from spare_lib._util.validate import check_int
from spare_lib.cluster.config import ClusterConfig


def trace_rows(failure_trace: object, N: int, n_classes: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A failure trace split into group failures (CSR by group) and job events.

    Rows are ``(time_s, group)`` or ``(time_s, group, class)``: ``group`` in [0, N−1] is a
    failure of that group, ``group = −1`` a job event (every group fails: a global restart);
    ``class`` indexes the failure mix's classes (−1 or absent: drawn by the classes' shares).

    Returns
    -------
    (ptr, times, classes, job_times, job_classes)
        Group w's sorted failure times are ``times[ptr[w]:ptr[w + 1]]`` with their classes;
        the job events sorted by time, with theirs.
    """
    arr = np.asarray(failure_trace, dtype=np.float64)
    if arr.size == 0:
        arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] not in (2, 3):
        raise ValueError(f"failure_trace must have shape (n, 2) of (time_s, group) or (n, 3) of "
                         f"(time_s, group, class), got shape {arr.shape}")
    times, groups = arr[:, 0], arr[:, 1]
    cls = arr[:, 2] if arr.shape[1] == 3 else np.full(len(arr), -1.0)
    if not np.all(np.isfinite(times)) or np.any(times < 0):
        raise ValueError("failure_trace times must be finite and in [0, inf)")
    if np.any(groups != np.round(groups)) or np.any(groups < -1) or np.any(groups >= N):
        raise ValueError(f"failure_trace groups must be integers in [0, N-1] = [0, {N - 1}], or "
                         f"-1 for a job event")
    if np.any(cls != np.round(cls)) or np.any(cls < -1) or np.any(cls >= n_classes):
        raise ValueError(f"failure_trace classes must be integers in [-1, {n_classes - 1}] (the "
                         f"failure mix's classes; -1: drawn by share)")
    job = groups < 0
    jt, jc = times[job], cls[job].astype(np.int64)
    jo = np.argsort(jt, kind="stable")
    g = groups[~job].astype(np.int64)
    t, c = times[~job], cls[~job].astype(np.int64)
    order = np.lexsort((t, g))
    ptr = np.zeros(N + 1, dtype=np.int64)
    np.add.at(ptr, g + 1, 1)
    return (np.cumsum(ptr), np.ascontiguousarray(t[order]), np.ascontiguousarray(c[order]),
            np.ascontiguousarray(jt[jo]), np.ascontiguousarray(jc[jo]))


def _trace_arrays(failure_trace: object, N: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR form of a failure trace of group failures: per-group sorted failure times."""
    ptr, times, _c, jt, _jc = trace_rows(failure_trace, N, 1)
    if jt.size:
        raise ValueError("failure_trace groups must be integers in [0, N-1] here (no job events)")
    return ptr, times


def _renewal_times(mean_gap: float, config: ClusterConfig, horizon_s: float,
                   rng: np.random.Generator) -> np.ndarray:
    """Event times of a renewal process up to ``horizon_s``: gaps exponential, or Weibull with
    the config's shape k, of mean ``mean_gap``."""
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
    return times[times <= horizon_s]


def job_events(config: ClusterConfig, share: float, horizon_s: float,
               rng: np.random.Generator) -> np.ndarray:
    """Times of the job-wide failure events up to ``horizon_s``: a renewal process of rate
    ``share``/m (the law of :func:`domain_events`), none when ``share`` is 0."""
    if share <= 0:
        return np.zeros(0, dtype=np.float64)
    return np.ascontiguousarray(_renewal_times(config.system_mtbf_s / share, config, horizon_s,
                                               rng))


def event_classes(n: int, class_ids: np.ndarray, shares: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
    """Class of each of n events: ``class_ids[i]`` with probability ∝ ``shares[i]``."""
    ids = np.asarray(class_ids, dtype=np.int64)
    if n == 0 or ids.size == 0:
        return np.full(n, ids[0] if ids.size else 0, dtype=np.int64)
    if ids.size == 1:
        return np.full(n, ids[0], dtype=np.int64)
    p = np.asarray(shares, dtype=np.float64)
    return ids[rng.choice(ids.size, size=n, p=p / p.sum())].astype(np.int64)


def domain_events(N: int, config: ClusterConfig, horizon_s: float,
                  rng: np.random.Generator, share: float | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Domain events of ``config`` up to ``horizon_s``, as CSR arrays by domain.

    Events form a renewal process of rate q/m (gaps exponential, or Weibull with the config's
    shape k, of mean m/q; q = ``share``, default ``config.domain_fault_share``); each hits a
    uniformly chosen domain of D consecutive groups (domain ⌊g/D⌋; the last may be smaller).
    Returns ``(ptr, times)``: domain d's event times, sorted, are ``times[ptr[d]:ptr[d + 1]]``.
    """
    D = check_int("domain_size", config.domain_size, lo=1, hi=N)
    n_dom = -(-N // D)
    q = config.domain_fault_share if share is None else share
    times = _renewal_times(config.system_mtbf_s / q, config, horizon_s, rng)
    dom = rng.integers(0, n_dom, times.size)
    order = np.lexsort((times, dom))
    ptr = np.zeros(n_dom + 1, dtype=np.int64)
    np.add.at(ptr, dom + 1, 1)
    return np.cumsum(ptr), np.ascontiguousarray(times[order])
