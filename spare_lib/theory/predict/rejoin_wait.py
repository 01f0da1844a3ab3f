"""When a rejoining group is back: the wait from its rejoin time to the next step start.

A group noticed dead at time s may rejoin from s + R on, but only at a step start, so it is away
R + a wait. The step starts form a renewal process (:func:`rejoin_wait`, a lattice renewal
function), and :func:`windows` derives from a cycle's step model (:mod:`.rejoin_step`) the three
windows the cycle model (:mod:`.rejoin`) needs: the mean away time (R + the mean wait), the away
time of the last group back before the away set empties (the steps before are failure-free), and
the notice window of the groups away at a step start.
"""

from __future__ import annotations

import math

import numpy as np


def event_law(retry: float, e2: float, commit_s: float, retry_s: float,
              n_max: int = 8) -> list[tuple[float, float]]:
    """Law of an event step's extra time, given at least one event attempt: the attempt commits
    (probability 1 − ρ, extra ``commit_s`` = (f − 1)·T_a + stall) or is retried (ρ, extra
    ``retry_s`` = that + patch + T_a), and a retry is hit again with probability e2, so n hits
    then a commit cost n·retry_s + commit_s with probability (ρ e2)^n (1 − ρ), n hits then a
    clean retry (n + 1)·retry_s with probability (ρ e2)^n ρ (1 − e2) (n ≤ ``n_max``)."""
    out = []
    for n in range(n_max + 1):
        q = (retry * e2) ** n
        if 1.0 - retry > 0.0:
            out.append((q * (1.0 - retry), n * retry_s + commit_s))
        if retry > 0.0:
            out.append((q * retry * (1.0 - e2), (n + 1) * retry_s))
    return out



#: Cells of the lattice of step lengths in :func:`rejoin_wait`.
_WAIT_CELLS = 1 << 15


def rejoin_wait(rejoin_s: float, classes, notices) -> float:
    """Mean time from a group's rejoin time (notice + R) to the next step start.

    Step starts form a renewal process whose step length is a mixture over ``classes`` —
    (share of the steps, base seconds, s.d. of the barrier's jitter, extras), each extra an
    independent (probability, seconds) or a discrete law [(probability, seconds), ...] (the
    rest at 0): an event step's extra time, a rejoin stall, a fetch — smeared by the jitter
    (normal). A notice comes d seconds before the next step start (``notices``:
    (weight, d) — within a compute, or at a step's first poll); from there the wait is the
    residual life at lag ℓ = R − d, E[T]·(1 + M(ℓ)) − ℓ (Wald's identity; M the renewal
    function, by FFT on a lattice with exponential tilting), or d − R when the group is back
    before that step start."""
    if not math.isfinite(rejoin_s):
        return 0.0
    atoms = []  # (weight, length, s.d.) of the step-length law
    for share, base, sd, extras in classes:
        parts = [(share, base)]
        for law in extras:
            law = [law] if isinstance(law[0], (int, float, np.floating)) else law
            law = [(p, x) for p, x in law if p > 1e-9 and x != 0.0]
            if not law:
                continue
            rest = 1.0 - sum(p for p, _ in law)
            parts = [(w * rest, t) for w, t in parts] + [
                (w * p, t + x) for p, x in law for w, t in parts]
        atoms += [(w, t, sd) for w, t in parts]
    base_min = min(c[1] for c in classes)
    sd_min = min(c[2] for c in classes)
    ell_max = rejoin_s + 4.0 * max(c[1] for c in classes)
    h = max(ell_max / (_WAIT_CELLS / 4), min(max(sd_min, 1e-3) / 2.0, base_min / 64.0))
    if h > base_min / 8.0:
        # R spans thousands of steps: the phase is mixed, the residual is the stationary one
        m1 = sum(w * t for w, t, _ in atoms)
        m2 = sum(w * (t * t + sd * sd) for w, t, sd in atoms)
        tot_w = sum(w for w, _, _ in atoms)
        stat = m2 / (2.0 * m1)
        return sum(w * (stat if rejoin_s > d else d - rejoin_s) for w, d in notices) / (
            max(sum(w for w, _ in notices), 1e-300)) if tot_w > 0 else 0.0
    n = int(min(_WAIT_CELLS, 1 << int(np.ceil(np.log2(4.0 * ell_max / h + 8)))))
    grid = h * np.arange(n)
    pmf = np.zeros(n)
    for w, t, sd in atoms:
        if sd > h:
            z = (grid - t) / sd
            g = np.exp(-0.5 * z * z)
            pmf += w * g / g.sum()
        else:
            pmf[min(int(round(t / h)), n - 1)] += w
    pmf /= pmf.sum()
    mean_T = float(grid @ pmf)
    tilt = np.exp(-16.0 / n * np.arange(n))
    fp = np.fft.rfft(pmf * tilt, 2 * n)
    M = np.cumsum(np.maximum(np.fft.irfft(fp / (1.0 - fp), 2 * n)[:n] / tilt, 0.0))
    out = 0.0
    for w, d in notices:
        ell = rejoin_s - d
        if ell <= 0.0:
            out += w * (-ell)
        else:
            out += w * max(mean_T * (1.0 + float(np.interp(ell, grid, M))) - ell, 0.0)
    return out / max(sum(w for w, _ in notices), 1e-300)


def sd_max_std_normal(n: float) -> float:
    """Standard deviation of the maximum of n iid standard normals (numerical integration)."""
    z = np.linspace(-9.0, 9.0, 3601)
    from scipy.stats import norm

    if n <= 1:
        return 1.0
    cdf = np.exp(n * norm.logcdf(z))
    dens = np.gradient(cdf, z)
    m1 = np.trapezoid(z * dens, z)
    m2 = np.trapezoid(z * z * dens, z)
    return float(np.sqrt(max(m2 - m1 * m1, 0.0)))


def windows(method: str, N: int, cfg, rcfg: tuple, cyc, st) -> tuple:  # noqa: ANN001
    """(mean wait, wait of the last group back, notice window at a step start) of a cycle.

    The mean waits from a rejoin time to the next step start (:func:`rejoin_wait`) over every
    step and over the failure-free state-1 steps, and the notice window of the groups away at a
    step start (see :func:`~.rejoin._rejoin_cycle`), the step law of state 1 averaged over the
    cycle (weights: committed steps, G·rate; ``cyc`` a :class:`~.cycle._Cycle`, ``st`` its
    :class:`~.rejoin_step.StepModel`, ``cfg`` a :class:`~.curves._Cfg`).
    """
    w = cyc.G * cyc.rate
    tot = cyc.trapz(w)

    def avg(v: np.ndarray) -> float:
        return cyc.trapz(w * v) / tot

    cs, s_rj, b, fetch = cfg.compute_per_stack_s, rcfg[1], rcfg[2], rcfg[3]
    units = avg(st.units)
    shards = units / b if method == "elastic-rebalance" else units
    alive = max(N - avg(cyc.n_surv), 1.0)
    # the barrier's jitter: the maximum over the live groups of a compute of that many shards
    sd1 = cs * cfg.jitter_sigma * math.sqrt(shards) * sd_max_std_normal(alive)
    e1, q_rj, q_f = avg(st.e1), min(avg(st.q_rj), 1.0), min(avg(st.q_fetch), 1.0)
    T1f = avg(st.T1_free)
    # after a notice the group is away, so the steps until it is back are state-1 steps
    ta, f, s = cfg.allreduce_s, cfg.allreduce_fail_factor, cfg.shrink_s
    commit_s = (f - 1.0) * ta + s
    law = event_law(avg(st.retry1), avg(st.e21), commit_s, commit_s + avg(st.patch1) + ta)
    step1 = [[(e1 * p, x) for p, x in law], (q_rj, s_rj), (q_f, fetch)]
    comp = avg(st.comp1)
    in_comp = min(comp / max(avg(st.x1), 1e-12), 1.0)
    retry, e2 = avg(st.retry1), avg(st.e21)
    first = 1.0 / max(1.0 + retry * e2 / max(1.0 - retry * e2, 1e-12), 1.0)  # of the notices
    # a failure in unit j of the first attempt's compute is noticed at the start of unit j + 1
    # (the barrier for the last), comp·(1 − j/u) before the attempt's end, one in the rest of
    # the step at the next first poll, a whole compute before it, a retry's at its barrier; then
    # the rest of the event step: T_a plus an event's extra time, by its law (each value its own
    # phase of the step starts)
    u = max(int(round(units)), 1)
    offsets = [(first * in_comp / u, comp * (1.0 - j / u)) for j in range(1, u + 1)]
    offsets += [(first * (1.0 - in_comp), comp), (1.0 - first, 0.0)]
    notices = [(w * p, d + ta + x) for w, d in offsets for p, x in law]
    wait = rejoin_wait(rcfg[0], [(1.0, T1f, sd1, step1)], notices)
    # the last notice before the away set empties is followed by a clean retry or a commit
    # (and it is in a first attempt unless it ended a chain of retries)
    last_tail = [(1.0 - retry, f * ta + s), (retry, f * ta + s + avg(st.patch1) + ta)]
    offs_last = [(w / first * (1.0 - retry * e2), d) for w, d in offsets[:-1]] + [
        (retry * e2, 0.0)]
    last = [(w * p, d + x) for w, d in offs_last for p, x in last_tail]
    free = [(1.0, T1f, sd1, [(q_rj, s_rj + (fetch if method == "elastic-rebalance" else 0.0))])]
    # the groups away at a step start were noticed at the polls of the last R: none at the
    # committing attempt's (clean unless drop or phase 0 committed an event) and none after its
    # barrier, while the first poll in the window notices what failed since the poll before
    R = rcfg[0]
    T1 = avg(st.T1)
    end_retry = retry * (1.0 - e2) / max(1.0 - retry * e2, 1e-12)
    quiet = (1.0 - e1) * min(T1f + q_rj * s_rj, R) + e1 * (
        end_retry * min(f * ta + s + avg(st.patch1) + ta, R) + (1.0 - end_retry) * min(f * ta + s, R))
    gaps = [(comp / u, u), (max(T1 - comp, 0.0), 1.0)]
    back = sum(n * g * g for g, n in gaps) / max(2.0 * sum(n * g for g, n in gaps), 1e-12)
    start_window = max(R - quiet + back, 0.0) if math.isfinite(R) else R
    return wait, rejoin_wait(rcfg[0], free, last), start_window
