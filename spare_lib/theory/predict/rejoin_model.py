"""The run of a rejoining method (spare+repair, elastic-drop, elastic-rebalance) and its totals.

The cycles come from :mod:`spare_lib.theory.predict.rejoin` (one per kind: the run's first,
with fresh clocks, then the cycles after a global restart at the transient restart times and at
equilibrium); the run is the same chain over the checkpoint lattice as for the paper's methods
(:func:`~spare_lib.theory.predict.chain._run_on_lattice`), with progress in full steps of
samples (elastic-drop commits n_alive/N of a batch). :func:`rejoin_fields` returns the fields of
a :class:`~spare_lib.theory.predict.model.Prediction`; :func:`spare_lib.theory.predict.predict`
validates the inputs and calls it.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from spare_lib.theory.predict.chain import _run_on_lattice
from spare_lib.theory.predict.curves import _Cfg, _clock, _law_curves, _law_key
from spare_lib.theory.predict.cycle import _checkpointed_progress, _time_to
from spare_lib.theory.predict.jobwide import chain_restart_laws, laws_with_job_failures
from spare_lib.theory.predict.rejoin import _rejoin_cycle, _tables
from spare_lib.theory.predict.rejoin_law import clear_caches as _clear_law_caches
from spare_lib.theory.predict.rejoin_law import first_process, restart_processes
from spare_lib.theory.predict.rejoin_wait import windows
from spare_lib.theory.predict.terms import expected_max_stack_sum

#: Every mechanism of the paper's methods is on for the rejoining methods.
_ALL_MECH = ("barrier", "restart_windows", "failure_law", "failure_events")
#: Passes of the step law before the final one, each giving the windows of the next.
_WINDOW_PASSES = 1
#: When the first cycle's wipe-out probability over the run (its time to commit every step) is
#: below this, the restart cycles are not built: the first cycle's law stands in for them, and
#: the expected restarts weigh them by < 1e-5 (TTT/T0 changes by < 1e-5 of a restart's cost).
_NO_RESTART = 1e-5


def rejoin_key(config: Any) -> tuple:
    """(rejoin_s, rejoin stall, b, fetch_s) of a config, validated: ``rejoin_s`` in (0, ∞],
    ``rejoin_stall_s`` None (= ``stall_s``) or ≥ 0, ``microbatches`` an integer ≥ 1,
    ``fetch_s`` ≥ 0. Missing attributes take the simulator's defaults (∞, None, 1, 0)."""
    rejoin_s = float(getattr(config, "rejoin_s", math.inf))
    if not rejoin_s > 0:
        raise ValueError(f"config.rejoin_s must be in (0, inf], got {rejoin_s!r}")
    stall = getattr(config, "stall_s", getattr(config, "shrink_s", 0.0))
    rs = getattr(config, "rejoin_stall_s", None)
    rs = float(stall) if rs is None else float(rs)
    if not rs >= 0:
        raise ValueError(f"config.rejoin_stall_s must be None or >= 0, got {rs!r}")
    b = getattr(config, "microbatches", 1)
    if not isinstance(b, (int, np.integer)) or b < 1:
        raise ValueError(f"config.microbatches must be an integer >= 1, got {b!r}")
    fetch = float(getattr(config, "fetch_s", 0.0))
    if not fetch >= 0:
        raise ValueError(f"config.fetch_s must be >= 0, got {fetch!r}")
    return rejoin_s, rs, int(b), fetch


def horizon_s(steps: int, cfg: _Cfg, rcfg: tuple) -> float:
    """Length of the rejoining cycles' τ grid: twice a bound on the failure-free run (two units
    of compute per step, two stalls, a fetch and a checkpoint), at least 10 rejoin times. A cycle
    that has not finished by then (its progress short of ``steps`` while it survives) is
    extended (:func:`rejoin_cycles`)."""
    _r, s_rj, _b, fetch = rcfg
    per = 2.0 * (cfg.compute_per_stack_s + cfg.allreduce_s) + cfg.shrink_s + s_rj + fetch \
        + cfg.checkpoint_s
    h = 2.0 * steps * per
    return float(max(h, 10.0 * rcfg[0] if math.isfinite(rcfg[0]) else h))


def _waits(method: str, N: int, tables: tuple, cfg: _Cfg, rcfg: tuple, proc) -> tuple:  # noqa: ANN001
    """The waits of a cycle (:func:`~.rejoin_wait.windows`): a first pass at half a nominal
    step, then the waits of that step law."""
    depth = 2.0 if method == "spare+repair" else 1.0
    w0 = 0.5 * (depth * cfg.compute_per_stack_s + cfg.allreduce_s)
    waits = (w0, w0, rcfg[0])
    for _ in range(_WINDOW_PASSES):  # the windows depend on the step law, and it on them
        cyc, st, _ = _rejoin_cycle(method, N, tables, cfg, rcfg, proc, waits)
        waits = windows(method, N, cfg, rcfg, cyc, st)
    return tuple(waits)


def _build(method: str, N: int, tables: tuple, cfg: _Cfg, rcfg: tuple, proc, waits=None):  # noqa: ANN001
    """A cycle with its waits: the given ones, or solved (:func:`_waits`)."""
    if waits is None:
        waits = _waits(method, N, tables, cfg, rcfg, proc)
    cyc, st, ex = _rejoin_cycle(method, N, tables, cfg, rcfg, proc, waits)
    return cyc, st, ex, waits


@lru_cache(maxsize=1024)
def rejoin_cycles(method: str, N: int, r: int, layout: str, key: tuple, rcfg: tuple,
                  horizon: float, steps: int) -> dict[str, Any]:
    """Cycles of (method, N, r) on a cluster (``key``: :func:`~.curves._cfg_key`; ``rcfg``:
    :func:`rejoin_key`): the first, the steady and the transient ones, with their step models
    (cached; C enters in the chain only, ``steps`` only in whether restarts matter)."""
    cfg = _Cfg(key)
    law = _law_key(key, _ALL_MECH)
    tables = _tables(method, N, r, layout, rcfg[2])
    # the waits from a first cycle whose groups are back at their rejoin time R, then every
    # group process solved again with the groups back after R plus a wait for the step start
    # of that mean (uniform on [0, 2·mean]): counted again only once back (:mod:`.rejoin_law`)
    wait = _waits(method, N, tables, cfg, rcfg, first_process(N, law, rcfg[0], horizon))
    first_proc = first_process(N, law, rcfg[0], horizon, wait[0])
    first, st1, ex1, _w = _build(method, N, tables, cfg, rcfg, first_proc, wait)
    clock = _clock(cfg.failure_dist, N * cfg.system_mtbf_s, cfg.weibull_shape)
    restart_law = _law_curves(N, law)[1]
    out = {"first": first, "step_first": st1, "extras_first": ex1, "wait": wait,
           "restart_s": restart_law.mean_s, "windows": restart_law.windows_per_group,
           "t_eq": clock.t_equilibrium, "transient": []}
    t_run, g_run = _time_to(first, steps)
    if 1.0 - (g_run if t_run < first.tau[-1] else first.G[-1]) < _NO_RESTART:
        out.update(steady=first, step_steady=st1, extras_steady=ex1, prefail=0.0)
        return out
    procs = restart_processes(N, law, rcfg[0], horizon, wait[0])
    for t0, proc in procs[:-1]:
        cyc, _st, _ex, _w = _build(method, N, tables, cfg, rcfg, proc, wait)
        out["transient"].append((t0, proc.restart_s, cyc))
    ss_proc = procs[-1][1]
    ss, st, ex, _w = _build(method, N, tables, cfg, rcfg, ss_proc, wait)
    out.update(steady=ss, step_steady=st, extras_steady=ex, restart_s=ss_proc.restart_s,
               prefail=float(ss_proc.w @ ss_proc.U[:, 0]))
    return out


def _weighted(cyc, v: np.ndarray, upto: float | None = None) -> tuple[float, float]:  # noqa: ANN001
    """(∫ G·rate·v, ∫ G·rate) over a cycle, up to τ = ``upto`` (committed-step weights)."""
    w = cyc.G * cyc.rate
    if upto is not None:
        w = np.where(cyc.tau <= upto, w, 0.0)
    return cyc.trapz(w * v), cyc.trapz(w)


def rejoin_laws(method: str, N: int, r: int, key: tuple, rcfg: tuple, steps: int,
                layout: str = "ruler") -> tuple[list, dict[str, Any]]:
    """The cycle laws of the run's chain — (t0, restart mean, cycle): the first cycle, the
    transient ones, the steady one — and the cycles' record (:func:`rejoin_cycles`), on a τ grid
    long enough for the run (doubled until the first cycle reaches ``steps`` at one checkpoint
    a step, or ends in a wipe-out)."""
    cfg = _Cfg(key)
    horizon = horizon_s(steps, cfg, rcfg)
    for _ in range(4):
        cy = rejoin_cycles(method, N, r, layout, key, rcfg, horizon, steps)
        first = cy["first"]
        if first.with_checkpoints(cfg.checkpoint_s).V[-1] >= steps or first.G[-1] <= 1e-9:
            break
        horizon *= 2.0  # the run did not fit on the grid: a longer one
    laws = [(0.0, 0.0, first)] + cy["transient"] + [(cy["t_eq"], cy["restart_s"], cy["steady"])]
    return laws, cy


def rejoin_fields(method: str, N: int, r: int, C: int | None, key: tuple, rcfg: tuple,
                  steps: int, layout: str = "ruler",
                  job: tuple[float, float] = (0.0, 0.0)) -> dict[str, Any]:
    """Fields of the :class:`~spare_lib.theory.predict.model.Prediction` of a rejoining method
    (validated inputs; see :func:`spare_lib.theory.predict.predict`); ``job``: the rate and
    detection time of job-wide failures (:mod:`.jobwide`)."""
    cfg = _Cfg(key)
    laws, cy = rejoin_laws(method, N, r, key, rcfg, steps, layout)
    if job[0] > 0.0:
        laws, p_jobs = laws_with_job_failures(laws, *job,
                                              chain_restart_laws(laws, N, _ALL_MECH, key))
    else:
        p_jobs = [0.0] * len(laws)
    first, ss = laws[0][2], laws[-1][2]  # (under job-wide failures: their grids are finer)
    ckpt = cfg.checkpoint_s / C if C else 0.0
    R = cy["restart_s"]
    run = _run_on_lattice(laws, C, steps, ckpt)
    # the averages below weigh the step models, on the cycles' own grids
    first_c = cy["first"].with_checkpoints(ckpt)
    ss_c = cy["steady"].with_checkpoints(ckpt)
    t_all1, _P1 = _time_to(first_c, steps)
    total = run["time"] + (cfg.checkpoint_s if C else 0.0)
    restarts = run["restarts"]
    st1, sts = cy["step_first"], cy["step_steady"]
    # averages over the run: the first cycle up to the run's end, then the steady cycle once per
    # restart (as the paper's methods' overhead); time weights G for the stall share of the
    # wall time, committed-step weights G·rate for depth, weight and groups away
    def share(cyc, st, upto=None):  # noqa: ANN001, ANN202
        wall = cyc.step * st.weight  # wall seconds per commit, checkpoint writing included
        g = cyc.G if upto is None else np.where(cyc.tau <= upto, cyc.G, 0.0)
        return cyc.trapz(g * st.stall / wall), cyc.trapz(g)

    a1, b1 = share(first_c, st1, t_all1)
    a2, b2 = share(ss_c, sts)
    detect_total = restarts * p_jobs[-1] * job[1]  # job-wide failures' detection waits
    stall_total = (a1 + restarts * a2) / max(b1 + restarts * b2, 1e-300) * (
        total - run["restart_time"] - detect_total)  # (the stall share of the training time)
    (d1, den1), (ds, dens) = _weighted(first_c, first_c.depth, t_all1), _weighted(ss_c, ss_c.depth)
    den = max(den1 + restarts * dens, 1e-300)
    overhead = float((d1 + restarts * ds) / den)
    weight = float((_weighted(first_c, st1.weight, t_all1)[0]
                    + restarts * _weighted(ss_c, sts.weight)[0]) / den)
    away = float((_weighted(first_c, first_c.n_surv, t_all1)[0]
                  + restarts * _weighted(ss_c, ss_c.n_surv)[0]) / den)
    # per committed step in the steady cycle (steps weighted by the survival)
    wst = ss.trapz(ss.G * ss.rate)
    t0 = steps * (cfg.compute_per_stack_s + cfg.allreduce_s)
    exs = cy["extras_steady"]
    ss0 = cy["steady"]
    fails_cycle = float(ss0.trapz(exs["lam"] * ss0.G) + N * cy["prefail"])
    n_ckpt = float(-(-steps // C)) if C else 0.0
    down = run["restart_time"] + stall_total + detect_total
    return dict(
        method=method, N=N, r=r, C=C, ttt_over_t0=total / t0, availability=1.0 - down / total,
        overhead=overhead,
        barrier_factor=expected_max_stack_sum(1, N, cfg.jitter_sigma, cfg.jitter_min),
        step_s=float(ss.trapz(ss.G) / wst), event_s_per_step=float(
            ss.trapz(ss.G * ss.rate * ss.events) / wst),
        restart_s=R, restart_windows=cy["windows"], prefail_fraction=cy["prefail"],
        uptime_s=ss.U, first_uptime_s=first.U, failures_per_cycle=fails_cycle,
        progress_steps=_checkpointed_progress(ss_c, C, steps), restarts=restarts,
        rework_s=run["rework"], checkpoint_s=cfg.checkpoint_s * n_ckpt / weight,
        restart_total_s=run["restart_time"], total_s=total, t0_s=t0, mu=fails_cycle,
        mu_convention="index", stall_total_s=stall_total, rejoin_wait_s=cy["wait"][0],
        mean_away=away, dropped_sample_fraction=1.0 - weight)


def clear_caches() -> None:
    """Forget the rejoining methods' memoised group processes, tables and cycles."""
    _clear_law_caches()
    _tables.cache_clear()
    rejoin_cycles.cache_clear()
