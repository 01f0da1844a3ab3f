"""Job-wide failures: a Poisson stream of global restarts that every method pays (issue 24's hook).

Besides the failures of single groups, a job can fail as a whole (a software bug, a network
switch, a watchdog): every method, the elastic ones included, then restarts from its last
checkpoint, after a detection time during which every group waits. In the model this is one more
term of a cycle's wipe-out hazard: with job-wide failures at rate ν = 1/``job_mtbf_s``,
independent of the groups' clocks, a cycle survives τ with G(τ)·e^(−ντ), and a wipe-out is noticed
``detect_s`` later when it is a job-wide one, which happens with probability
ν·∫G e^(−ντ) dτ of a cycle (the cycle's uptime under that hazard). The restart that follows is the
cycle's own (every group through its window), and the chain over the checkpoint lattice
(:mod:`.chain`) does the rest: rework since the last checkpoint, restarts, the run's end.
``job_mtbf_s`` = ∞ (the default) leaves every cycle as it is, so the numbers of a model without
job-wide failures are unchanged bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from spare_lib.theory.predict.cycle import _G_FLOOR, _Cycle

#: Uniform points over the first ``_JOB_SPAN`` mean times between job-wide failures, added to a
#: cycle's grid (e^(−ντ) then interpolates to < 1e-5).
_JOB_POINTS = 400
_JOB_SPAN = 25.0


def check_job(job_mtbf_s: float, detect_s: float) -> tuple[float, float]:
    """(ν, detect_s) validated: ``job_mtbf_s`` in (0, ∞], ``detect_s`` ≥ 0 (finite)."""
    jm, d = float(job_mtbf_s), float(detect_s)
    if not jm > 0:
        raise ValueError(f"job_mtbf_s must be in (0, inf], got {job_mtbf_s!r}")
    if not (d >= 0 and math.isfinite(d)):
        raise ValueError(f"detect_s must be >= 0 and finite, got {detect_s!r}")
    return (0.0 if math.isinf(jm) else 1.0 / jm), d


def with_job_failures(cyc: _Cycle, nu: float, detect_s: float) -> tuple[_Cycle, float]:
    """The cycle under job-wide failures at rate ``nu``, and P(its wipe-out is a job-wide one).

    G → G·e^(−ντ); the delay from a wipe-out to the restart gains ``detect_s`` times that
    probability (the chain takes one delay per cycle, the mean over its wipe-outs)."""
    if nu <= 0.0:
        return cyc, 0.0
    # the cycle's grid resolves its own failure law; e^(−ντ) needs points at its scale 1/ν
    # too (the other arrays are smooth on the old grid: linear interpolation)
    end = cyc.tau[-1]
    tau = np.unique(np.concatenate((cyc.tau, np.linspace(0.0, min(end, _JOB_SPAN / nu),
                                                         _JOB_POINTS))))
    G = np.interp(tau, cyc.tau, cyc.G) * np.exp(-nu * tau)
    cut = np.nonzero(G <= _G_FLOOR)[0]
    n = int(cut[0]) + 1 if cut.size else tau.size
    n = max(n, 2)
    tau, G = tau[:n], G[:n]
    arrays = [np.interp(tau, cyc.tau, a) for a in (cyc.step, cyc.depth, cyc.events, cyc.n_surv)]
    tmp = _Cycle(tau, G, *arrays, 0.0)
    p_job = float(min(nu * tmp.trapz(G) / max(1.0 - G[-1], 1e-300), 1.0))
    return _Cycle(tau, G, *arrays, cyc.delay + detect_s * p_job), p_job


def laws_with_job_failures(laws: list, nu: float, detect_s: float) -> tuple[list, list[float]]:
    """Every (t0, restart mean, cycle) of a run's chain under job-wide failures; and each
    cycle's P(job-wide wipe-out)."""
    if nu <= 0.0:
        return laws, [0.0] * len(laws)
    out, probs = [], []
    for t0, R, cyc in laws:
        c, p = with_job_failures(cyc, nu, detect_s)
        out.append((t0, R, c))
        probs.append(p)
    return out, probs
