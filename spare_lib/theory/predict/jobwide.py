"""Job-wide failures: a Poisson stream of global restarts that every method pays (issue 24).

Besides the failures of single groups, a job can fail as a whole (a software bug, a network
switch, a watchdog): every method, the elastic ones included, then restarts from its last
checkpoint, after a detection time d during which every group waits. With job-wide failures at
rate ν = 1/``job_mtbf_s``, independent of the groups' clocks, the model changes in three places.

1. **The cycle** (:func:`with_job_failures`). A cycle survives τ with G(τ)·e^(−ντ), and its
   wipe-out is noticed d later when it is a job-wide one, which happens with probability
   p_job = ν·∫G e^(−ντ) dτ / (1 − G_end) of a cycle's end. The chain over the checkpoint
   lattice (:mod:`.chain`) does the rest: rework since the last checkpoint, restarts, the run's
   end.
2. **The restart** (:func:`job_restart_mean`). A job-wide failure during a restart starts it
   again (every group's window from that instant, as the event core does, without a new
   detection wait). With X the duration of one restart attempt (the last group through its
   window, law :class:`~spare_lib.theory.predict.terms.RestartLaw`) and E ~ Exp(ν) the time to
   the next job-wide failure, an attempt either ends (E ≥ X) or is cut at E and followed by a
   fresh attempt. Taking the attempts as independent draws of X (a renewal argument), the
   restart's duration T satisfies T = min(X, E) + 1{E < X}·T', T' a copy of T, so

       E[T] = E[min(X, E)] / P(E ≥ X) = E[1 − e^(−νX)] / (ν·E[e^(−νX)]),        (J1)

   which is (e^(νT_r) − 1)/ν for a fixed X = T_r (the ceiling of
   :mod:`spare_lib.theory.ceiling`) and E[X] as ν → 0. Without (J1) the model let a restart
   that outlasts the mean time between job-wide failures finish undisturbed.
3. **The masked failures** (:func:`with_job_failures`, ``masked_change``). Failure events cost a
   stall each; without job-wide failures a cycle masks E[K] − 1 of them (K the wiping index).
   With λ(τ) the live groups' failure rate given no wipe-out and h(τ) = −G'/G the cycle's own
   wipe-out hazard, a cycle masks ∫ G_ν(λ − h) dτ (plus the groups dead at its first poll), so
   job-wide failures change the count by

       Δ = −∫ (G − G_ν)·λ dτ + ∫ (1 − e^(−ντ)) (−dG),                                  (J2)

   the failures a job-wide failure pre-empts, and the wiping failure that no longer ends the
   cycles a job-wide failure ends first (the second term: P(a job-wide failure comes first)).
   Without (J2) a cycle cut short after a few failures was charged the stalls of the E[K] − 1
   failures of a full cycle, and at 600k GPUs in the ``llama3`` mix (E[K] ≈ 110 for SPARe, a
   mean detection of a minute added to each stall) the downtime exceeded the wall time: an
   availability below 0.

``job_mtbf_s`` = ∞ (the default) leaves every cycle and restart as they are, so the numbers of a
model without job-wide failures are unchanged bit for bit. What stays out: the restart's clock
ages after an interrupted restart (taken as those of an uninterrupted one), and the waits of a
restart interrupted again are not detection waits (the event core has none there either).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from spare_lib.theory.predict.curves import restart_law_at
from spare_lib.theory.predict.cycle import _G_FLOOR, _Cycle
from spare_lib.theory.predict.terms import NoTrainingCycle

#: Uniform points over the first ``_JOB_SPAN`` mean times between job-wide failures, added to a
#: cycle's grid (e^(−ντ) then interpolates to < 1e-5).
_JOB_POINTS = 400
_JOB_SPAN = 25.0
#: A restart whose every attempt is cut with probability ≥ 1 − e^(−_LOG_P_MIN) never ends.
_LOG_P_MIN = 700.0


def check_job(job_mtbf_s: float, detect_s: float) -> tuple[float, float]:
    """(ν, detect_s) validated: ``job_mtbf_s`` in (0, ∞], ``detect_s`` ≥ 0 (finite)."""
    jm, d = float(job_mtbf_s), float(detect_s)
    if not jm > 0:
        raise ValueError(f"job_mtbf_s must be in (0, inf], got {job_mtbf_s!r}")
    if not (d >= 0 and math.isfinite(d)):
        raise ValueError(f"detect_s must be >= 0 and finite, got {detect_s!r}")
    return (0.0 if math.isinf(jm) else 1.0 / jm), d


def job_restart_mean(mean_s: float, law: Any, nu: float) -> float:
    """Mean duration of a restart that job-wide failures at rate ``nu`` start again, Eq. (J1).

    Parameters
    ----------
    mean_s : float
        E[X], the mean of one restart attempt (used for a fixed X when ``law`` is None).
    law : RestartLaw or None
        The law of X on its lattice (``cdf_max``: P(X ≤ j·h)); None: X = ``mean_s`` exactly.
    nu : float
        Rate of job-wide failures, 1/s (0: ``mean_s`` unchanged).

    Raises
    ------
    NoTrainingCycle
        When job-wide failures cut nearly every attempt (ν·X > 700 throughout): the restart
        never ends.

    Examples
    --------
    >>> round(job_restart_mean(3600.0, None, 1 / 1800.0), 1)  # (e^2 − 1)·1800 s
    11500.3
    """
    if nu <= 0.0:
        return mean_s
    if law is None:
        if nu * mean_s > _LOG_P_MIN:
            raise NoTrainingCycle(_never_ends(nu, mean_s))
        return math.expm1(nu * mean_s) / nu
    pmf = np.diff(np.asarray(law.cdf_max, dtype=float), prepend=0.0)
    t = law.h * np.arange(pmf.size)
    keep = pmf > 0.0
    a = -nu * t[keep] + np.log(pmf[keep])
    top = float(a.max())
    log_p = top + math.log(float(np.exp(a - top).sum()))  # log E[e^(−νX)]
    if log_p < -_LOG_P_MIN:
        raise NoTrainingCycle(_never_ends(nu, float(np.sum(pmf * t))))
    return -math.expm1(log_p) / (nu * math.exp(log_p))


def _never_ends(nu: float, mean_s: float) -> str:
    return (f"no training cycle: job-wide failures (one every {1 / nu:.3g} s) start almost "
            f"every restart (of {mean_s:.3g} s on average) again, so no restart ends")


def with_job_failures(cyc: _Cycle, nu: float, detect_s: float) -> tuple[_Cycle, float]:
    """The cycle under job-wide failures at rate ``nu``, and P(its wipe-out is a job-wide one).

    G → G·e^(−ντ); the delay from a wipe-out to the restart gains ``detect_s`` times that
    probability (the chain takes one delay per cycle, the mean over its wipe-outs). The returned
    cycle's ``masked_change`` is Δ of Eq. (J2) (None when ``cyc`` has no failure rate)."""
    if nu <= 0.0:
        return cyc, 0.0
    # the cycle's grid resolves its own failure law; e^(−ντ) needs points at its scale 1/ν
    # too (the other arrays are smooth on the old grid: linear interpolation)
    end = cyc.tau[-1]
    tau = np.unique(np.concatenate((cyc.tau, np.linspace(0.0, min(end, _JOB_SPAN / nu),
                                                         _JOB_POINTS))))
    G0 = np.interp(tau, cyc.tau, cyc.G)
    G = G0 * np.exp(-nu * tau)
    masked = _masked_change(cyc, tau, G0, G, nu)
    cut = np.nonzero(G <= _G_FLOOR)[0]
    n = int(cut[0]) + 1 if cut.size else tau.size
    n = max(n, 2)
    tau, G = tau[:n], G[:n]
    arrays = [np.interp(tau, cyc.tau, a) for a in (cyc.step, cyc.depth, cyc.events, cyc.n_surv)]
    tmp = _Cycle(tau, G, *arrays, 0.0)
    p_job = float(min(nu * tmp.trapz(G) / max(1.0 - G[-1], 1e-300), 1.0))
    out = _Cycle(tau, G, *arrays, cyc.delay + detect_s * p_job)
    out.masked_change = masked
    return out, p_job


def _masked_change(cyc: _Cycle, tau: np.ndarray, G0: np.ndarray, G: np.ndarray,
                   nu: float) -> float | None:
    """Δ of Eq. (J2) on the grid ``tau`` (the cycle's G0 and G·e^(−ντ) on it), trapezoids."""
    if cyc.fail_rate is None:
        return None
    lam = np.interp(tau, cyc.tau, cyc.fail_rate)
    dt = np.diff(tau)
    y = (G0 - G) * lam
    pre_empted = float(np.sum(dt * (y[1:] + y[:-1]) / 2.0))
    e = -np.expm1(-nu * tau)  # 1 − e^(−ντ)
    job_first = float(np.sum((e[1:] + e[:-1]) / 2.0 * (G0[:-1] - G0[1:])))
    return job_first - pre_empted


def laws_with_job_failures(laws: list, nu: float, detect_s: float,
                           restart_laws: list | None = None) -> tuple[list, list[float]]:
    """Every (t0, restart mean, cycle) of a run's chain under job-wide failures: each cycle by
    :func:`with_job_failures`, each restart mean by :func:`job_restart_mean` (``restart_laws``:
    the law of each entry's restart, None for a fixed one; default: all fixed); and each
    cycle's P(job-wide wipe-out). The first entry (no restart before it) keeps R = 0."""
    if nu <= 0.0:
        return laws, [0.0] * len(laws)
    rl = restart_laws if restart_laws is not None else [None] * len(laws)
    out, probs = [], []
    for i, ((t0, R, cyc), law) in enumerate(zip(laws, rl, strict=True)):
        c, p = with_job_failures(cyc, nu, detect_s)
        out.append((t0, R if i == 0 else job_restart_mean(float(R), law, nu), c))
        probs.append(p)
    return out, probs


def chain_restart_laws(laws: list, N: int, mech: tuple[str, ...], key: tuple) -> list:
    """The restart law of each entry of a run's chain (``laws``: the first cycle, the transient
    restarts at their t0, the equilibrium one last), for :func:`laws_with_job_failures`."""
    return ([None] + [restart_law_at(N, mech, key, t0) for t0, _, _ in laws[1:-1]]
            + [restart_law_at(N, mech, key, None)])[:len(laws)]
