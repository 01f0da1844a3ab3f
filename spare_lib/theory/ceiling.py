"""The availability ceiling that job-wide failures set, whatever the recovery strategy.

A job-wide failure (a mix's ``job`` class: a software bug every rank runs, a hung collective)
restarts every method from its checkpoint. No redundancy masks it, so it bounds the availability
of every strategy. With job-wide failures a Poisson stream of rate λ = q_job/m (q_job the job
share of the failure events, m the system MTBF), each followed by a detection wait d and a global
restart of T_r that a further job-wide failure starts again, a renewal cycle is an uptime of mean
1/λ, the wait d, and a restart that succeeds after (e^(λT_r) − 1)/λ on average (the first
T_r-long gap of a Poisson stream). So

    A_job = (1/λ) / (1/λ + d + (e^(λT_r) − 1)/λ) = 1 / (e^(λT_r) + λd),

≈ 1/(1 + λ(T_r + d)) when λT_r ≪ 1. Every other failure (group, domain), every checkpoint and
every step redone only lowers availability further, so ``A_job`` is the ceiling of every method's
availability (uptime over wall time, :attr:`spare_lib.cluster.SimResult.availability`) in a world
with these job-wide failures. Two small terms are left out: the time from a failure to the poll
that notices it counts as uptime in the simulator (at most a step per job-wide failure), and with
a Weibull law of shape k < 1 (the simulator's default) the failures cluster, so the restart term
differs from e^(λT_r) at second order in λT_r.

With a renewal law of job-wide failures (the simulator's Weibull of shape k = 0.78 by default)
:func:`availability_ceiling_renewal` runs the same cycle on the failure times themselves (a
Monte Carlo of the job-wide failures alone); clustered failures (k < 1) fall more often inside one
restart, so that ceiling is higher than the Poisson one at the same rate. The knobs that move the
ceiling are T_r and the job share q_job (and d): :func:`ceiling_levers` gives the ceiling with
each halved.
"""

from __future__ import annotations

import math
from functools import lru_cache

from spare_lib._util.validate import check_positive, check_probability


def _checked(job_share: float, system_mtbf_s: float, restart_s: float,
             detect_s: float) -> tuple[float, float, float, float]:
    """The ceiling's inputs validated: (q, m, T_r, d)."""
    return (check_probability("job_share", job_share),
            check_positive("system_mtbf_s", system_mtbf_s),
            check_positive("restart_s", restart_s, allow_zero=True),
            check_positive("detect_s", detect_s, allow_zero=True))


def availability_ceiling(job_share: float, system_mtbf_s: float, restart_s: float,
                         detect_s: float = 0.0) -> float:
    """A_job = 1/(e^(λT_r) + λd) with λ = q_job/m (module docstring).

    Parameters
    ----------
    job_share : float
        q_job in [0, 1], the share of failure events that are job-wide.
    system_mtbf_s : float
        System MTBF m, s (every failure class together).
    restart_s : float
        Global restart time T_r, s.
    detect_s : float
        Detection time d of a job-wide failure, s.

    Returns
    -------
    float
        The ceiling in (0, 1]; 1 without job-wide failures.

    Examples
    --------
    >>> round(availability_ceiling(0.15, 300.0, 3600.0), 4)  # 600k GPUs, T_r = 60 min
    0.1653
    >>> availability_ceiling(0.0, 300.0, 3600.0)
    1.0
    """
    q, m, tr, d = _checked(job_share, system_mtbf_s, restart_s, detect_s)
    if q == 0.0:
        return 1.0
    lam = q / m
    x = lam * tr
    if x > 700.0:  # e^x overflows: the job essentially never trains
        return 0.0
    return 1.0 / (math.exp(x) + lam * d)


def ceiling_levers(job_share: float, system_mtbf_s: float, restart_s: float,
                   detect_s: float = 0.0, failure_dist: str = "exponential",
                   weibull_shape: float = 0.78) -> dict[str, float]:
    """The ceiling now and with T_r, the job share or the detection time halved: the closed form
    for exponential failures, :func:`availability_ceiling_renewal` for a Weibull law.

    Returns
    -------
    dict
        ``{'ceiling', 'half_restart', 'half_job_share', 'half_detect'}``.
    """
    def f(q: float, m: float, tr: float, d: float) -> float:
        if failure_dist == "exponential":
            return availability_ceiling(q, m, tr, d)
        return _renewal_cached(q, m, tr, d, failure_dist, weibull_shape)

    return {"ceiling": f(job_share, system_mtbf_s, restart_s, detect_s),
            "half_restart": f(job_share, system_mtbf_s, restart_s / 2, detect_s),
            "half_job_share": f(job_share / 2, system_mtbf_s, restart_s, detect_s),
            "half_detect": f(job_share, system_mtbf_s, restart_s, detect_s / 2)}





def availability_ceiling_renewal(job_share: float, system_mtbf_s: float, restart_s: float,
                                 detect_s: float = 0.0, failure_dist: str = "weibull",
                                 weibull_shape: float = 0.78, n_events: int = 100_000,
                                 seed: int = 0) -> float:
    """The ceiling for job-wide failures that form a renewal process of any law (Monte Carlo).

    The job-wide failures alone, as the simulator runs them: gaps of mean m/q_job with the law
    ``failure_dist`` (Weibull of shape ``weibull_shape``, or exponential), each failure waited
    for ``detect_s`` (failures during that wait change nothing), then a restart of T_r that a
    failure inside it starts again (without a new wait); uptime from the restart's end to the next
    failure. Returns total uptime over total time across ``n_events`` failures (seeded: the same
    number every call). With the exponential law it converges to :func:`availability_ceiling`;
    with a Weibull of shape k < 1 the failures cluster, more of them fall inside one restart, and
    the ceiling is higher than the Poisson one at the same rate.
    """
    import numpy as np

    q, m, tr, d = _checked(job_share, system_mtbf_s, restart_s, detect_s)
    if q == 0.0:
        return 1.0
    if failure_dist not in ("weibull", "exponential"):
        raise ValueError(f"failure_dist must be 'weibull' or 'exponential', got {failure_dist!r}")
    mean = m / q
    rng = np.random.default_rng(seed)
    if failure_dist == "weibull":
        k = check_positive("weibull_shape", weibull_shape)
        gaps = rng.weibull(k, int(n_events)) * (mean / math.gamma(1.0 + 1.0 / k))
    else:
        gaps = rng.exponential(mean, int(n_events))
    times = np.cumsum(gaps)
    up = down = 0.0
    i, n = 0, times.size
    while i < n - 1:
        e = times[i]
        s = e + d
        j = int(np.searchsorted(times, s, side="right"))  # failures during the wait: nothing
        while j < n and times[j] < s + tr:  # a failure inside the restart starts it again
            s = times[j]
            j += 1
        if j >= n:
            break
        down += s + tr - e
        up += times[j] - (s + tr)
        i = j
    return up / (up + down) if up + down > 0 else 0.0
@lru_cache(maxsize=256)
def _renewal_cached(q: float, m: float, tr: float, d: float, dist: str, k: float) -> float:
    return availability_ceiling_renewal(q, m, tr, d, dist, k)


__all__ = ["availability_ceiling", "availability_ceiling_renewal", "ceiling_levers"]
