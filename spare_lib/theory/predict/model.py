"""A semi-analytic time-to-train model that agrees with the simulator (beyond the paper's Eq. 7).

:func:`predict` returns TTT/T0, availability and the compute overhead of SPARe+CKPT, Rep+CKPT or
CKPT-only for one (N, r, C) and a cluster configuration, as a :class:`Prediction` whose fields
also expose every mechanism separately. Eq. 7 (J = S̄/A*(μm)) misses, in the simulated model
(SPEC §3–5):

1. **barrier** — every step waits for the slowest of N jittered groups: a step at depth S takes
   64 s·E[max_w Σ_{p<S} J_wp] + T_a (:func:`~spare_lib.theory.predict.terms.expected_max_stack_sum`,
   ≈ +14 % per stack at N = 200);
2. **restart windows** — a restart ends when the last of N groups got through its own failure-free
   window of T_r (≈ 2·T_r; :func:`~spare_lib.theory.predict.terms.restart_law`);
3. **failure law** — clocks are never reset: groups fail at most once per cycle (a dead group is
   not polled), the first cycle starts with fresh Weibull clocks (k < 1: they fail early), after a
   restart the clocks have equilibrium ages conditioned on the restart windows, and groups that
   fail while waiting at the restart barrier die at the first poll
   (:func:`~spare_lib.theory.predict.terms.failed_fraction`). The wipe-out law then is exact:
   with n(τ) ~ Binomial(N, x(τ)) failures by τ and K the index of the wiping failure
   (P(K > k) = P0(k), :func:`~spare_lib.theory.finite.survival_finite`),
   P(uptime > τ) = E[P0(n(τ))];
4. **rework and checkpoints** — checkpoints every C committed steps cost T_s; a wipe-out loses the
   work since the last checkpoint and the attempt in progress; the expected useful progress per
   cycle is C·Σ_j P(uptime > τ_j), τ_j the time of the j-th checkpoint;
5. **failure events** — an attempt with a failure runs a shortened all-reduce and a shrink; when
   RECTLR phase 0 does not settle it (:func:`~spare_lib.theory.predict.terms.phase0_probability`)
   the step is retried with patch compute (a whole new layer when S grows);
6. **depth** — S = c(n) after n failures, averaged over the law of n given survival (S̄ with the
   time weighting of the real failure law, rather than Eq. 5's equal epochs).

The run is a chain over its checkpoints (:func:`~spare_lib.theory.predict.chain._run_on_lattice`):
the first cycle (fresh clocks) from the start, then restart + cycle units, each starting in the
state — steps left, on the checkpoint lattice — where the last wipe-out left the run, with the
cycle law of a restart at that state's mean arrival time (transient, then equilibrium). One sweep
over the states gives the expected time, restarts and rework, exactly for these cycles, at any
run length (the run stops when the last step is committed and checkpointed). No constant is
fitted: every term comes from the config's parameters.

Example
-------
>>> from spare_lib.cluster import h100_600k          # any object with these attributes works
>>> p = predict("spare", 200, 9, 15, h100_600k(200))
>>> bool(2.5 < p.ttt_over_t0 < 3.4 and 0.8 < p.availability < 0.92)
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from spare_lib.theory.closed import mu_closed, replication_mu
from spare_lib.theory.finite import overhead_mean
from spare_lib.theory.predict.chain import _run_on_lattice
from spare_lib.theory.predict.cycle import NoTrainingCycle as NoTrainingCycle  # (re-exported)
from spare_lib.theory.predict.cycle import (
    _Cfg,
    _cfg_key,
    _checkpointed_progress,
    _cycles,
    _mu_index,
    _time_to,
)
from spare_lib.theory.predict.cycle import clear_caches as _clear_caches
from spare_lib.theory.predict.jobwide import (
    chain_restart_laws,
    check_job,
    laws_with_job_failures,
)
from spare_lib.theory.predict.packed import packed_laws
from spare_lib.theory.predict.rejoin import REJOIN_METHODS
from spare_lib.theory.predict.rejoin_model import clear_caches as _clear_rejoin_caches
from spare_lib.theory.predict.rejoin_model import rejoin_fields, rejoin_key
from spare_lib.theory.predict.terms import expected_max_stack_sum
from spare_lib.theory.ttt import availability_opt

#: The paper's methods (groups never rejoin) and every method the model covers.
PAPER_METHODS = ("spare", "rep", "ckpt")
METHODS = PAPER_METHODS + REJOIN_METHODS
MU_CONVENTIONS = ("index", "endured")
#: Mechanisms that can be switched off (for the waterfall decomposition of the Eq. 7 gap).
MECHANISMS = ("barrier", "restart_windows", "failure_law", "failure_events")


class ClusterLike(Protocol):
    """What :func:`predict` reads from a config (e.g. :class:`spare_lib.cluster.ClusterConfig`)."""

    steps: int
    compute_per_stack_s: float
    jitter_sigma: float
    jitter_min: float
    allreduce_s: float
    allreduce_fail_factor: float
    restart_s: float
    stall_s: float  # (or shrink_s) stall per attempt with noticed failures
    checkpoint_s: float
    failure_dist: str
    weibull_shape: float
    system_mtbf_s: float


def _check_convention(mu_convention: str) -> None:
    if mu_convention not in MU_CONVENTIONS:
        raise ValueError(f"mu_convention must be one of {MU_CONVENTIONS}, got {mu_convention!r}")


def mu_in_convention(mu_index: float | np.ndarray, mu_convention: str = "index") -> Any:
    """Express a mean wiping index in a convention.

    'index': the mean index of the failure that wipes out (what ``mu_finite`` computes and the
    simulator's failures between restarts estimate); 'endured': the failures survived before
    it, index − 1 (the paper's "endurable failures" read literally).
    """
    _check_convention(mu_convention)
    return mu_index if mu_convention == "index" else np.asarray(mu_index) - 1.0


def mu_to_index(mu: float | np.ndarray, mu_convention: str = "index") -> Any:
    """Inverse of :func:`mu_in_convention`: a μ read in ``mu_convention`` as a wiping index
    (e.g. the Γ form read as endured failures: index = Γ form + 1)."""
    _check_convention(mu_convention)
    return mu if mu_convention == "index" else np.asarray(mu) + 1.0


@dataclass(frozen=True)
class Prediction:
    """Model output for one (method, N, r, C); times in seconds.

    Headline: ``ttt_over_t0``, ``availability``, ``overhead`` (mean depth S over committed steps,
    patch compute excluded, as the simulator reports it).

    Terms: ``barrier_factor`` (E[max] of one jittered stack over N groups, in stacks),
    ``step_s`` (mean wall time of a committed step in steady cycles, failure events included),
    ``event_s_per_step`` (of which failure events: shortened all-reduce, shrink, retries),
    ``restart_s`` (mean restart duration), ``restart_windows`` (mean windows per group),
    ``prefail_fraction`` (groups dead at the first poll after a restart), ``uptime_s`` (mean
    training time per steady cycle), ``first_uptime_s`` (same, first cycle with fresh clocks),
    ``failures_per_cycle`` (mean failures in a steady cycle, the wiping one included),
    ``progress_steps`` (mean checkpointed steps per steady cycle), ``restarts`` (expected
    global restarts), ``rework_s`` (uptime lost to rollbacks), ``checkpoint_s`` (time writing
    checkpoints), ``restart_total_s``, ``total_s``, ``t0_s``, ``mu`` (μ from ``mu_finite`` or
    ``replication_mu``, in ``mu_convention``; for the rejoining methods the mean failures of a
    steady cycle, the wiping one included), ``stall_total_s`` (stall time of the run: failure
    events and, for the rejoining methods, rejoin batches).

    ``mean_away`` (mean groups away — dead, for the paper's methods — per committed step),
    ``rejoin_wait_s`` (mean wait from a group's rejoin time to the next step start; 0 for the
    methods whose groups never rejoin), ``dropped_sample_fraction`` (elastic-drop: 1 − the mean
    weight of a commit; else 0).
    """

    method: str
    N: int
    r: int
    C: int | None
    ttt_over_t0: float
    availability: float
    overhead: float
    barrier_factor: float
    step_s: float
    event_s_per_step: float
    restart_s: float
    restart_windows: float
    prefail_fraction: float
    uptime_s: float
    first_uptime_s: float
    failures_per_cycle: float
    progress_steps: float
    restarts: float
    rework_s: float
    checkpoint_s: float
    restart_total_s: float
    total_s: float
    t0_s: float
    mu: float
    mu_convention: str
    stall_total_s: float = 0.0
    rejoin_wait_s: float = 0.0
    mean_away: float = 0.0
    dropped_sample_fraction: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# wipe-out survival P0(k) per method
# ---------------------------------------------------------------------------------------------

def predict(method: str, N: int, r: int, C: int | None, config: ClusterLike, *,
            layout: str = "ruler", mu_convention: str = "index",
            mechanisms: tuple[str, ...] | None = None, job_mtbf_s: float = math.inf,
            detect_s: float = 0.0) -> Prediction:
    """Predict TTT/T0, availability and overhead of one configuration (module docstring).

    Parameters
    ----------
    method : {'spare', 'rep', 'ckpt', 'spare+repair', 'elastic-drop', 'elastic-rebalance'}
        SPARe+CKPT, Rep+CKPT (ceil(N/r) replica sets of r consecutive groups), CKPT-only
        (r = 1), or a method whose failed groups rejoin after ``config.rejoin_s``
        (:mod:`~spare_lib.theory.predict.rejoin`): SPARe+repair, elastic-drop and
        elastic-rebalance (r = 1; b = ``config.microbatches``).
    N : int
        Data-parallel groups, N ≥ 2.
    r : int
        Redundancy (SPARe: 1 ≤ r ≤ max ruler r; Rep: 1 ≤ r ≤ N; CKPT-only: 1).
    C : int or None
        Checkpoint interval in committed steps; None: no checkpoints (rollback to step 0).
    config : ClusterConfig-like
        Any object with the attributes of :class:`ClusterLike` (steps, compute_per_stack_s,
        jitter_sigma, jitter_min, allreduce_s, allreduce_fail_factor, restart_s, stall_s (or
        shrink_s), checkpoint_s, failure_dist, weibull_shape, system_mtbf_s); a
        ``domain_fault_share`` > 0 is refused (failure domains are not modelled). The rejoining
        methods also read rejoin_s, rejoin_stall_s, microbatches and fetch_s (defaults ∞,
        None = stall_s, 1, 0); with rejoin_s = ∞ SPARe+repair is SPARe+CKPT (as simulated).
    layout : {'ruler', 'consecutive'}
        SPARe's layout (for P0(k)).
    mu_convention : {'index', 'endured'}
        Convention of the reported ``mu`` (see :func:`mu_in_convention`); the model itself uses
        the whole law of the wiping index.
    job_mtbf_s, detect_s : float
        Job-wide failures (:mod:`~spare_lib.theory.predict.jobwide`): a Poisson stream of
        global restarts from the last checkpoint with this mean time between them, each noticed
        ``detect_s`` after it while every group waits; ∞ (the default): none.
    mechanisms : tuple of str or None
        Mechanisms switched on (default: all of :data:`MECHANISMS`). Off: 'barrier' → no
        jitter; 'restart_windows' → a restart lasts exactly T_r, nobody pre-fails;
        'failure_law' → exponential clocks of equilibrium age at every cycle start;
        'failure_events' → failure events cost nothing. The rejoining methods need all of
        them.

    Returns
    -------
    Prediction

    Raises
    ------
    NoTrainingCycle
        (a ValueError) when the cluster never trains: every cycle is wiped out at its first
        poll (TTT unbounded), e.g. CKPT-only with T_r far above the system MTBF.

    Notes
    -----
    Cost (``benchmarks/bench_predict.py``, N = 200–5000): ≈ 0.2–0.5 ms for a new C once the
    cycles of (method, N, r, cluster) are cached (≤ 4 ms at C = 1 over 10,000 steps, the run's
    chain capped at 512 states); ≈ 3 ms for a new r on a known cluster (P0(k)
    and μ of the layout, cached per (N, r, layout) across clusters, plus the cycles); ≈ 6–7 ms
    for the first call on a new cluster (restart laws, transient renewal tables and failure
    curves, cached per failure law). :func:`clear_caches` forgets all of it.
    """
    N, r, mech, steps = _check_inputs(method, N, r, C, mechanisms, config)
    key = _cfg_key(config)
    nu, detect = check_job(job_mtbf_s, detect_s)
    if method not in REJOIN_METHODS:
        return _paper_prediction(method, N, r, C, key, steps, layout, mu_convention, mech,
                                 (nu, detect))
    if mech != MECHANISMS:
        raise ValueError(f"mechanisms must be None (all) for method={method!r}, got {mech}")
    rcfg = rejoin_key(config)
    if method == "spare+repair" and rcfg[0] == float("inf"):  # never rejoins: SPARe+CKPT
        p = predict("spare", N, r, C, config, layout=layout, mu_convention=mu_convention,
                    job_mtbf_s=job_mtbf_s, detect_s=detect_s)
        return Prediction(**{**p.as_dict(), "method": method})
    return Prediction(**rejoin_fields(method, N, r, C, key, rcfg, steps, layout,
                                      job=(nu, detect)))


def _check_inputs(method: str, N: Any, r: Any, C: Any, mechanisms: Any,
                  config: ClusterLike) -> tuple[int, int, tuple[str, ...], int]:
    """:func:`predict`'s method, N, r, C and mechanisms validated; (N, r, mechanisms, steps)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(N, (int, np.integer)) or N < 2:
        raise ValueError(f"N must be an integer >= 2, got {N!r}")
    if not isinstance(r, (int, np.integer)) or not 1 <= r <= N:
        raise ValueError(f"r must be an integer in [1, N] = [1, {N}], got {r!r}")
    if method in ("ckpt", "elastic-drop", "elastic-rebalance") and r != 1:
        raise ValueError(f"r must be 1 for method={method!r}, got {r}")
    if C is not None and (not isinstance(C, (int, np.integer)) or C < 1):
        raise ValueError(f"C must be an integer >= 1 or None, got {C!r}")
    mech = MECHANISMS if mechanisms is None else tuple(mechanisms)
    bad = set(mech) - set(MECHANISMS)
    if bad:
        raise ValueError(f"mechanisms must be a subset of {MECHANISMS}, got {sorted(bad)}")
    steps = int(config.steps)
    if steps < 1:
        raise ValueError(f"config.steps must be >= 1, got {steps}")
    return int(N), int(r), mech, steps


def _paper_prediction(method: str, N: int, r: int, C: int | None, key: tuple, steps: int,
                      layout: str, mu_convention: str, mech: tuple[str, ...],
                      job: tuple[float, float]) -> Prediction:
    """:func:`predict` for the paper's methods (groups never rejoin): the cycles, the run's
    chain over the checkpoint lattice, and the run's totals and averages."""
    nu, detect = job
    cfg = _Cfg(key)
    ckpt_per_step = cfg.checkpoint_s / C if C else 0.0
    R, windows, prefail, first, ss, transient, t_eq = _cycles(method, N, r, layout, mech, key)
    laws = [(0.0, 0.0, first)] + transient + [(t_eq, R, ss)]
    p_job, masked_change = 0.0, 0.0
    if nu > 0.0:  # job-wide failures: a term of every cycle's hazard, restarts started again
        laws, p_jobs = laws_with_job_failures(laws, nu, detect,
                                              chain_restart_laws(laws, N, mech, key))
        first, ss, p_job = laws[0][2], laws[-1][2], p_jobs[-1]
        masked_change = ss.masked_change
    # ---- the run: the first cycle (fresh clocks from t = 0), then restart + cycle units
    # (transient restarts, then equilibrium), as a chain over the checkpoint lattice ----
    run = _run_on_lattice(laws, C, steps, ckpt_per_step)
    first = first.with_checkpoints(ckpt_per_step)
    ss = ss.with_checkpoints(ckpt_per_step)
    restarts = run["restarts"]
    total = run["time"] + (cfg.checkpoint_s if C else 0.0)  # (the final checkpoint)
    # downtime: restarts + shrinks (one per masked failure event)
    # E[failures per cycle] = E[K] exactly (K is independent of the failure times), plus the
    # groups already dead at the first poll are part of n(τ) and hence of K
    fails_cycle = _mu_index(method, N, r, layout)
    shrink_total = 0.0
    if method != "ckpt":  # (job-wide failures: fewer masked per cycle, Eq. J2 of .jobwide)
        masked = restarts * max(fails_cycle - 1.0 + masked_change, 0.0) + _time_to(
            first, steps)[1] * float(first.n_surv[-1])
        shrink_total = cfg.shrink_s * masked
    detect_total = restarts * p_job * detect  # job-wide failures' detection waits
    # one stall per masked failure; when failures come faster than attempts (λ·step ≫ 1) one
    # stall covers several, and the count could pass the training time: capped at it
    shrink_total = min(shrink_total, max(total - run["restart_time"] - detect_total, 0.0))
    down = run["restart_time"] + shrink_total + detect_total
    t0 = steps * (cfg.compute_per_stack_s + cfg.allreduce_s)
    tstep, ev, away = _per_committed_step(ss, ckpt_per_step)
    n_ckpt = float(-(-steps // C)) if C else 0.0
    return Prediction(
        method=method, N=N, r=r, C=C, ttt_over_t0=total / t0,
        availability=1.0 - down / total,
        overhead=_overhead(method, r, first, ss, restarts, steps),
        barrier_factor=expected_max_stack_sum(1, N, cfg.jitter_sigma if "barrier" in mech
                                              else 0.0, cfg.jitter_min),
        step_s=tstep, event_s_per_step=ev, restart_s=R, restart_windows=windows,
        prefail_fraction=prefail, uptime_s=ss.U, first_uptime_s=first.U,
        failures_per_cycle=fails_cycle, progress_steps=_checkpointed_progress(ss, C, steps),
        restarts=restarts, rework_s=run["rework"], checkpoint_s=cfg.checkpoint_s * n_ckpt,
        restart_total_s=run["restart_time"], total_s=total, t0_s=t0,
        mu=float(mu_in_convention(fails_cycle, mu_convention)),
        mu_convention=mu_convention, stall_total_s=shrink_total, mean_away=away)


def _overhead(method: str, r: int, first: Any, ss: Any, restarts: float, steps: int) -> float:
    """Mean depth over the run's committed steps (steps weighted by the survival): the first
    cycle's up to the end of the run, plus every later cycle's; r for the methods of fixed
    depth."""
    if method != "spare":
        return float(r)
    t_all1 = _time_to(first, steps)[0]
    wts = ss.G * ss.rate
    w1 = np.where(first.tau <= t_all1, first.G * first.rate, 0.0)
    num = restarts * ss.trapz(wts * ss.depth) + first.trapz(w1 * first.depth)
    den = restarts * ss.trapz(wts) + first.trapz(w1)
    return float(num / den)


def _per_committed_step(ss: Any, ckpt_per_step: float) -> tuple[float, float, float]:
    """(wall time, failure-event time, groups away) per committed step of the steady cycle
    (steps weighted by the survival, as the simulator averages), checkpoints excluded."""
    wsteps = ss.trapz(ss.G * ss.rate)
    tstep = float(ss.trapz(ss.G) / wsteps) - ckpt_per_step
    ev = float(ss.trapz(ss.G * ss.rate * ss.events) / wsteps)
    away = float(ss.trapz(ss.G * ss.rate * ss.n_surv) / wsteps)
    return tstep, ev, away


def clear_caches() -> None:
    """Forget everything :func:`predict` memoises (P0(k) and μ of the layouts, clocks with their
    renewal and transient tables, failure-law curves, cycles, the rejoining methods' group
    processes, tables and cycles), so that the next call runs cold. Only for timing: results do
    not depend on it (beyond rounding, ~1e-14)."""
    _clear_caches()
    _clear_rejoin_caches()
    packed_laws.cache_clear()


def eq7(method: str, N: int, r: int, config: ClusterLike, *, mu_convention: str = "index",
        ) -> float:
    """The paper's Eq. 7, J = S̄ / A*(μ·m), with the config's m, T_s, T_r.

    SPARe: μ = Γ(1+1/r) N^(1−1/r) (``mu_closed``) read in ``mu_convention`` and turned into a
    wiping index (:func:`mu_to_index`: 'index' as is, 'endured' + 1), used consistently in
    T_f = μ·m and in Eq. 5's ⌊μ⌋ (the failure epochs of a restart cycle); Rep: S̄ = r with the
    exact replication μ (an index); CKPT-only: S̄ = 1, μ = 1.
    """
    m, ts, tr = cfg_m(config)
    if method == "spare":
        mu = float(mu_to_index(float(mu_closed(N, r)), mu_convention))
        s_bar = float(overhead_mean(N, r, mu=max(mu, 1.0)))
    elif method == "rep":
        mu, s_bar = float(replication_mu(N, r)), float(r)
    else:
        mu, s_bar = 1.0, 1.0
    return s_bar / float(availability_opt(ts, mu * m, tr))


def cfg_m(config: ClusterLike) -> tuple[float, float, float]:
    return float(config.system_mtbf_s), float(config.checkpoint_s), float(config.restart_s)
