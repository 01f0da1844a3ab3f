"""The failure-free barrier: the slowest of n groups under each jitter model, and the
time-to-train it gives (issue 24).

Without failures a step lasts as long as its slowest live group, then T_a (SPEC §4). A group
computes k units of u seconds (SPARe: S = 1 stack of 64 s; Rep: its r shards; elastic-rebalance:
b micro-batches of 64/b s; what the engine runs is
:func:`spare_lib.cluster.engine.methods.first_attempt_work`). Its compute time is u·T with T, in
units of u, by jitter model (J a factor N(1, σ²) clipped at ``jitter_min``, Z standard normal):

``unit`` (and ``paper``)
    T = J_1 + … + J_k, independent factors of relative spread σ_u (the unit's); k = 1: T = J;
    k ≥ 2: T ~ N(k, k·σ_u²), the core's own draw while the clip is negligible
    (1 − ``jitter_min`` > 9σ_u), and the normal limit of the clipped sum otherwise;
``step``
    T = k·J (one factor for the group's attempt);
``straggler``
    T = f·T_unit with f = 1 + s for a share p of the groups (drawn per epoch) and 1 otherwise;
    over the draw, each group is slow with probability p independently.

The n groups' totals are iid with CDF F, so the barrier M = max T has

    E[M] = ∫₀^∞ (1 − F(x)ⁿ) dx,    E[M²] = ∫₀^∞ 2x (1 − F(x)ⁿ) dx,

and a failure-free run of ``steps`` steps with ``n_checkpoints`` writes of T_s takes

    TTT = steps · (u·E[M] + T_a) + n_checkpoints · T_s,    TTT/T0 = TTT / (steps · (64 s + T_a)).

So TTT/T0 is the method's work per step (k·u, in 64-s shards) times the barrier factor
E[M]/k, plus T_a, over T0's step: one formula for every method and jitter model.

Example
-------
>>> m, sd = barrier_moments(600, 1, 0.05)
>>> round(m, 4), round(sd, 4)   # the ≈ 15.5 % of issue 24 at N = 600, S = 1
(1.1546, 0.0183)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special

from spare_lib._util.validate import check_int, check_positive, check_probability

__all__ = ["JITTER_MODELS", "barrier_moments", "failure_free_ttt_s"]

#: Jitter models of ``ClusterConfig.jitter_model``.
JITTER_MODELS = ("paper", "unit", "step", "straggler")


def _log_cdf_one(x: np.ndarray, units: int, sigma: float, lo: float, model: str) -> np.ndarray:
    """log F(x) of one (not slow) group's total T, in units of u."""
    x = np.asarray(x, dtype=np.float64)
    if model == "step" or units == 1:
        y = x / units  # T = k·J, J clipped normal
        if sigma == 0.0:
            return np.where(y >= 1.0, 0.0, -np.inf)
        out = special.log_ndtr((y - 1.0) / sigma)
        return np.where(y >= lo, out, -np.inf)
    if sigma == 0.0:
        return np.where(x >= units, 0.0, -np.inf)
    return special.log_ndtr((x - units) / (sigma * math.sqrt(units)))


def _one_minus_cdf_n(x: np.ndarray, n: int, units: int, sigma: float, lo: float, model: str,
                     p: float, s: float) -> np.ndarray:
    lf = _log_cdf_one(x, units, sigma, lo, "unit" if model == "straggler" else model)
    if model == "straggler" and p > 0:
        ls = _log_cdf_one(np.asarray(x) / (1.0 + s), units, sigma, lo, "unit")
        lf = np.logaddexp(np.log1p(-p) + lf if p < 1 else -np.inf, math.log(p) + ls)
    return -np.expm1(n * lf)


def barrier_moments(n: int, units: int, sigma: float, jitter_min: float = 0.1,
                    model: str = "unit", straggler_share: float = 0.0,
                    straggler_slowdown: float = 0.0) -> tuple[float, float]:
    """Mean and standard deviation of the failure-free barrier, in units of u (module docstring).

    Parameters
    ----------
    n : int
        Live groups N.
    units : int
        k, units of work per group (≥ 1).
    sigma : float
        Relative jitter σ_u of one unit (``step``: of the group's one factor).
    jitter_min : float
        Lower clip of a factor.
    model : {'paper', 'unit', 'step', 'straggler'}
    straggler_share, straggler_slowdown : float
        p and s of ``straggler``.

    Returns
    -------
    (mean, sd) : float
        E[M] and sd(M), M = max of the n groups' totals T.
    """
    n = check_int("n", n, lo=1)
    k = check_int("units", units, lo=1)
    sigma = check_positive("sigma", sigma, allow_zero=True)
    lo = check_positive("jitter_min", jitter_min)
    if model not in JITTER_MODELS:
        raise ValueError(f"model must be one of {JITTER_MODELS}, got {model!r}")
    model = "unit" if model == "paper" else model
    p = check_probability("straggler_share", straggler_share)
    s = check_positive("straggler_slowdown", straggler_slowdown, allow_zero=True)
    slow = 1.0 + s if model == "straggler" and p > 0 else 1.0
    spread = sigma * (k if model == "step" else math.sqrt(k))
    hi = slow * (k + spread * (12.0 + math.sqrt(2.0 * math.log(n))))
    if sigma == 0.0:  # M = k, or k·(1 + s) when at least one group is slow
        q_fast = (1.0 - p) ** n if slow > 1.0 else 1.0
        mean = q_fast * k + (1.0 - q_fast) * k * slow
        var = q_fast * (1.0 - q_fast) * (k * slow - k) ** 2
        return float(mean), math.sqrt(var)
    pts = sorted({lo * k, float(k), k * slow, k + spread, slow * (k + spread)})
    pts = [x for x in pts if 0.0 < x < hi]

    def f1(x: float) -> float:
        return float(_one_minus_cdf_n(np.array([x]), n, k, sigma, lo, model, p, s)[0])

    m1 = integrate.quad(f1, 0.0, hi, points=pts, limit=400, epsabs=1e-12, epsrel=1e-12)[0]
    m2 = integrate.quad(lambda x: 2.0 * x * f1(x), 0.0, hi, points=pts, limit=400,
                        epsabs=1e-12, epsrel=1e-12)[0]
    return m1, math.sqrt(max(0.0, m2 - m1 * m1))


def failure_free_ttt_s(steps: int, n: int, units: int, unit_s: float, sigma: float,
                       allreduce_s: float, *, jitter_min: float = 0.1, model: str = "unit",
                       straggler_share: float = 0.0, straggler_slowdown: float = 0.0,
                       n_checkpoints: int = 0, checkpoint_s: float = 0.0) -> float:
    """Expected failure-free time-to-train, s: steps·(u·E[M] + T_a) + n_checkpoints·T_s."""
    steps = check_int("steps", steps, lo=1)
    unit_s = check_positive("unit_s", unit_s)
    ta = check_positive("allreduce_s", allreduce_s, allow_zero=True)
    mean, _sd = barrier_moments(n, units, sigma, jitter_min, model, straggler_share,
                                straggler_slowdown)
    return steps * (unit_s * mean + ta) + check_int("n_checkpoints", n_checkpoints, lo=0) * \
        check_positive("checkpoint_s", checkpoint_s, allow_zero=True)
