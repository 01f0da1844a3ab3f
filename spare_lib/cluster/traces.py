"""Trace-driven planning: SPARe+CKPT, Rep+CKPT and CKPT-only simulated on failures drawn from a real
fault log instead of the paper's Weibull clocks (issue 14, "real failure logs in, decisions out").

* :func:`trace_failures`: group-failure rows ``(time_s, group)`` for the simulated cluster, built by
  :func:`spare_lib.failures.synthesize` in chunks of ``chunk_s`` (default the trace's window), chunk
  j from seed child j: the rows for a horizon H are the prefix of the rows for any longer one.
* :func:`simulate_with_trace`: every candidate (method, r, C) × trial; trial t of every candidate
  replays the same rows with the same jitter seed (common random numbers). The first horizon is
  the closed-form time-to-train of the slowest candidate × :data:`HORIZON_MARGIN`; a run that
  outlasts its rows is rerun on a longer prefix (same seed family) until it ends inside it, so no
  run silently runs out of failures. Runs that ended inside a shorter prefix need no rerun: a
  failure after the end of a run cannot change it.
* :func:`plan_with_trace`: r, then C, per method, and the gain of SPARe+CKPT over the others with
  a confidence interval on the paired per-trial differences (:class:`TracePlan`).

``trace=None`` means the config's own failure law through common failure streams, so the paper's
model runs through the same code for comparison.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ClusterConfig, paper_checkpoint_interval
from spare_lib.cluster.planning import CKPT_FACTORS, LABELS, MAX_WALL_T0, REP_R, SPARE_WINDOW, ClusterSpec
from spare_lib.failures import DISTS, FaultTrace, synthesize
from spare_lib.failures import METHODS as TRACE_METHODS
from spare_lib.stacking.layout import max_ruler_r

__all__ = ["HORIZON_MARGIN", "PLACEMENTS", "TIE_SE", "TRACE_METHODS", "TraceChoice", "TraceGain",
           "TracePlan", "TracePoint", "json_ready", "plan_with_trace", "simulate_with_trace",
           "trace_failures"]

#: How groups sit on the servers: 'contiguous' (group g = servers [g·G/8, (g+1)·G/8), as
#: :func:`~spare_lib.failures.servers_to_groups`) or 'random' (group ids permuted once per trial,
#: so a multi-server fault no longer hits groups with neighbouring ids).
PLACEMENTS = ("contiguous", "random")
#: The first horizon is this many times the closed-form time-to-train of the slowest candidate.
HORIZON_MARGIN = 1.5
#: A candidate is tied with the best when its paired mean difference is below TIE_SE standard errors.
TIE_SE = 2.0
_CACHE: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
_CACHE_CHUNKS = 24


def _child(ss: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, *key))


def _chunk(trace: FaultTrace, token: str, ss: np.random.SeedSequence, j: int, chunk_s: float,
           synth: dict[str, Any]) -> np.ndarray:
    """Rows of chunk j (times shifted by j·chunk_s), cached per process."""
    key = (token, ss.entropy, ss.spawn_key, j, chunk_s, tuple(sorted(synth.items())))
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    rows = synthesize(trace, seed=_child(ss, 0, j), horizon_s=chunk_s, **synth)
    rows[:, 0] += j * chunk_s
    _CACHE[key] = rows
    while len(_CACHE) > _CACHE_CHUNKS:
        _CACHE.popitem(last=False)
    return rows


def _token(trace: FaultTrace) -> str:
    key = (trace.faults[["node", "start_s"]].to_numpy().tolist(), trace.n_nodes, trace.window_s)
    return hashlib.sha1(repr((key, trace.gpus_per_node)).encode()).hexdigest()


def trace_failures(trace: FaultTrace, n_gpus: int, gpus_per_group: int, horizon_s: float,
                   method: str = "block-bootstrap", seed: SeedLike = None, *,
                   gpus_per_server: int | None = None, dist: str = "weibull", tolerance_s: float = 1.0,
                   chunk_s: float | None = None, placement: str = "contiguous") -> np.ndarray:
    """Group failures ``(time_s, group)`` of a large cluster from a real trace, on ``[0, horizon_s)``.

    ``method``, ``gpus_per_server``, ``dist`` and ``tolerance_s`` are those of
    :func:`spare_lib.failures.synthesize` (N = n_gpus / gpus_per_group groups). ``seed`` is a seed
    family: chunk j of length ``chunk_s`` (None: ``trace.window_s``, one tile row of the block
    bootstrap) is ``synthesize(..., horizon_s=chunk_s, seed=child(seed, 0, j))`` shifted by j·chunk_s,
    so for one seed the rows for a horizon H are exactly the rows for any H' > H with time < H. With
    'fitted' each chunk starts a stationary renewal process (one gap per chunk is cut in two).
    ``placement`` (:data:`PLACEMENTS`): 'random' permutes the group ids with child(seed, 1).

    Returns
    -------
    numpy.ndarray, shape (n, 2)
        Rows sorted by time then group, the format of ``simulate(..., failure_trace=rows)``.
    """
    if trace is None:
        raise ValueError("trace must be a FaultTrace, got None")
    chunk_s = _source(trace, method, dist, placement, gpus_per_server, tolerance_s, chunk_s, "method").chunk_s
    horizon_s = check_positive("horizon_s", horizon_s)
    n_gpus = check_int("n_gpus", n_gpus, lo=1)
    gpus_per_group = check_int("gpus_per_group", gpus_per_group, lo=1, hi=n_gpus)
    ss = as_seed_sequence(seed)
    synth = {"n_gpus": n_gpus, "gpus_per_group": gpus_per_group, "method": method,
             "gpus_per_server": gpus_per_server, "dist": dist, "tolerance_s": tolerance_s}
    token = _token(trace)
    n_chunks = max(1, math.ceil(horizon_s / chunk_s))
    rows = np.concatenate([_chunk(trace, token, ss, j, chunk_s, synth) for j in range(n_chunks)])
    rows = rows[rows[:, 0] < horizon_s]
    if placement == "random":
        perm = np.random.default_rng(_child(ss, 1)).permutation(n_gpus // gpus_per_group)
        rows = np.column_stack([rows[:, 0], perm[rows[:, 1].astype(np.int64)].astype(np.float64)])
        rows = rows[np.lexsort((rows[:, 1], rows[:, 0]))]
    return rows


def _source(trace: FaultTrace | None, failures_method: str, dist: str, placement: str,
            gpus_per_server: int | None, tolerance_s: float, chunk_s: float | None,
            method_name: str = "failures_method") -> _Source:
    """Validated failure source (ValueError naming the parameter)."""
    if trace is not None and not isinstance(trace, FaultTrace):
        raise ValueError(f"trace must be a FaultTrace or None, got {type(trace).__name__}")
    for name, v, allowed in ((method_name, failures_method, TRACE_METHODS), ("dist", dist, DISTS),
                             ("placement", placement, PLACEMENTS)):
        if v not in allowed:
            raise ValueError(f"{name} must be one of {list(allowed)}, got {v!r}")
    if gpus_per_server is not None:
        check_int("gpus_per_server", gpus_per_server, lo=1)
    tol = check_positive("tolerance_s", tolerance_s, allow_zero=True)
    if trace is None:
        return _Source(None)
    chunk = trace.window_s if chunk_s is None else check_positive("chunk_s", chunk_s)
    return _Source(trace, failures_method, dist, placement, gpus_per_server, tol, chunk)


@dataclass(frozen=True)
class _Source:
    """Where failures come from: a trace and its synthesis options, or None (the config's law)."""

    trace: FaultTrace | None
    method: str = "block-bootstrap"
    dist: str = "weibull"
    placement: str = "contiguous"
    gpus_per_server: int | None = None
    tolerance_s: float = 1.0
    chunk_s: float = 0.0

    def rows(self, cfg: ClusterConfig, N: int, horizon_s: float, fam: np.random.SeedSequence) -> np.ndarray:
        assert self.trace is not None
        return trace_failures(self.trace, cfg.n_gpus, cfg.n_gpus // N, horizon_s, self.method, fam,
                              gpus_per_server=self.gpus_per_server, dist=self.dist,
                              tolerance_s=self.tolerance_s, chunk_s=self.chunk_s, placement=self.placement)


def _trial_seeds(seed: int, trial: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence, int]:
    """(failure seed family, jitter seed, failure-stream int) of trial ``trial``."""
    ss = _child(np.random.SeedSequence(seed), trial)
    return _child(ss, 0), _child(ss, 2), int(_child(ss, 3).generate_state(1, dtype=np.uint64)[0])


def _run_task(item: dict[str, Any]) -> dict[str, Any]:
    """One candidate × trial (module level for the process pool); extends the horizon as needed."""
    from spare_lib.cluster.simulate import simulate

    (method, r, c), src, cfg, N = item["candidate"], item["source"], item["config"], item["N"]
    fam, jitter, fstream = _trial_seeds(item["seed"], item["trial"])
    kw = {"layout": item["layout"], "max_wall_s": item["max_wall_s"], "seed": jitter}
    extra: dict[str, Any] = {"trial": item["trial"], "extensions": 0, "horizon_s": float("nan"),
                             "failures_in_run": -1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # unfinished runs are reported, not warned
        if src.trace is None:
            return {**simulate(method, N, r, c, cfg, failure_seed=fstream, **kw).as_dict(), **extra}
        n_chunks = item["n_chunks"]
        while True:
            horizon = n_chunks * src.chunk_s
            rows = src.rows(cfg, N, horizon, fam)
            res = simulate(method, N, r, c, cfg, failure_trace=rows, **kw)
            if res.total_s < horizon:
                break
            extra["extensions"] += 1  # the run outlasted its failures: a longer prefix, rerun
            n_chunks = max(n_chunks + 1, math.ceil(HORIZON_MARGIN * res.total_s / src.chunk_s))
    extra.update(horizon_s=horizon, failures_in_run=int(np.searchsorted(rows[:, 0], res.total_s)))
    return {**res.as_dict(), **extra}


def _closed_spec(cfg: ClusterConfig, N: int, m_s: float) -> ClusterSpec:
    return ClusterSpec(gpus=cfg.n_gpus, gpus_per_group=cfg.n_gpus // N, system_mtbf_s=m_s,
                       restart_s=cfg.restart_s, checkpoint_s=cfg.checkpoint_s,
                       step_s=cfg.compute_per_stack_s + cfg.allreduce_s, allreduce_s=cfg.allreduce_s)


def _closed_point(spec: ClusterSpec, method: str, r: int) -> Any:
    from spare_lib.cluster.planning import closed_form_point

    return closed_form_point(spec, method, min(r, max_ruler_r(spec.N)) if method == "spare" else r)


def _check_cluster(config: Any, N: Any) -> tuple[ClusterConfig, int]:
    if isinstance(config, ClusterSpec):
        config, N = config.cluster_config(), config.N if N is None else N
    if not isinstance(config, ClusterConfig):
        raise ValueError(f"config must be a ClusterConfig or ClusterSpec, got {type(config).__name__}")
    N = check_int("N", N, lo=2, hi=config.n_gpus // 2)
    if config.n_gpus % N:
        raise ValueError(f"N must divide config.n_gpus = {config.n_gpus} (groups of n_gpus/N GPUs), got {N}")
    if config.checkpoint_s <= 0:
        raise ValueError(f"config.checkpoint_s must be > 0 for planning, got {config.checkpoint_s}")
    return config, N


def _check_candidates(candidates: Sequence[Any], N: int) -> list[tuple[str, int, int | None]]:
    out = []
    for cand in candidates:
        if not isinstance(cand, (tuple, list)) or len(cand) != 3 or cand[0] not in LABELS:
            raise ValueError(f"candidates must be (method, r, ckpt_steps) with method in {list(LABELS)}, "
                             f"got {cand!r}")
        r = check_int("candidates r", cand[1], lo=1, hi=1 if cand[0] == "ckpt" else N)
        c = None if cand[2] is None else check_int("candidates ckpt_steps", cand[2], lo=1)
        out.append((cand[0], r, c))
    if not out:
        raise ValueError("candidates must hold at least one (method, r, ckpt_steps)")
    return out


def _system_mtbf(src: _Source, cfg: ClusterConfig, N: int, seed: int) -> float:
    """System MTBF of group failures on this cluster: trial 0's first chunk (or the config's m)."""
    if src.trace is None:
        return cfg.system_mtbf_s
    n = len(src.rows(cfg, N, src.chunk_s, _trial_seeds(seed, 0)[0]))
    if n == 0:
        raise ValueError("trace must produce failures on this cluster: its synthesis gave none")
    return src.chunk_s / n


def simulate_with_trace(trace: FaultTrace | None, candidates: Sequence[tuple[str, int, int | None]],
                        config: ClusterConfig | ClusterSpec, N: int | None = None, *, trials: int = 5,
                        seed: int = 0, failures_method: str = "block-bootstrap", dist: str = "weibull",
                        placement: str = "contiguous", gpus_per_server: int | None = None,
                        tolerance_s: float = 1.0, chunk_s: float | None = None,
                        horizon_s: float | None = None, max_wall_t0: float = MAX_WALL_T0,
                        layout: str = "ruler", backend: str = "processes", workers: int | None = 2,
                        progress: bool = False) -> Any:
    """Simulate every candidate × trial with failures from ``trace`` (common random numbers).

    Parameters
    ----------
    trace : FaultTrace or None
        The fault log; None: the config's own failure law through common failure streams.
    candidates : sequence of (method, r, ckpt_steps)
        method 'spare', 'rep' or 'ckpt' (r = 1); ckpt_steps None = no checkpoints.
    config, N :
        The cluster (ClusterConfig or ClusterSpec; with a trace its failure law is unused) and its
        groups, a divisor of ``config.n_gpus`` (None: a ClusterSpec's N).
    trials, seed :
        Trial t of every candidate replays the same rows with the same jitter seed, children of
        ``seed``: results do not depend on ``workers`` or ``backend``.
    failures_method, dist, placement, gpus_per_server, tolerance_s, chunk_s :
        Synthesis (:func:`trace_failures`).
    horizon_s : float or None
        First horizon of each trial's rows; None: :data:`HORIZON_MARGIN` × the closed-form
        time-to-train of the slowest candidate at the trace's system MTBF, at most the wall cap.
    max_wall_t0, layout, backend, workers, progress :
        Wall cap of a run in T0 (``completed`` False beyond); SPARe's layout ('ruler',
        'consecutive'); as :func:`spare_lib.cluster.executor.execute`.

    Returns
    -------
    pandas.DataFrame
        One row per candidate × trial: :meth:`SimResult.as_dict` plus ``trial``, ``horizon_s`` (of
        the rows replayed), ``extensions`` (reruns on a longer prefix) and ``failures_in_run``;
        ``attrs``: ``system_mtbf_s`` (of group failures, trial 0's first chunk), ``first_horizon_s``.
    """
    import pandas as pd

    from spare_lib.cluster.executor import check_backend, execute

    src = _source(trace, failures_method, dist, placement, gpus_per_server, tolerance_s, chunk_s)
    config, N = _check_cluster(config, N)
    cands = _check_candidates(candidates, N)
    trials, seed = check_int("trials", trials, lo=1), check_int("seed", seed, lo=0)
    max_wall_t0 = check_positive("max_wall_t0", max_wall_t0)
    check_backend(backend, workers)
    if layout not in ("ruler", "consecutive"):
        raise ValueError(f"layout must be 'ruler' or 'consecutive', got {layout!r}")
    m_s, n_chunks = _system_mtbf(src, config, N, seed), 0
    if trace is not None:
        if horizon_s is None:
            spec = _closed_spec(config, N, m_s)
            slow = max(_closed_point(spec, m, r).ttt_over_t0 for m, r, _ in cands)
            horizon_s = min(HORIZON_MARGIN * slow, max_wall_t0) * config.t0_s()
        n_chunks = max(1, math.ceil(check_positive("horizon_s", horizon_s) / src.chunk_s))
    items = [{"candidate": c, "source": src, "trial": t, "seed": seed, "config": config, "N": N,
              "max_wall_s": max_wall_t0 * config.t0_s(), "n_chunks": n_chunks, "layout": layout}
             for c in cands for t in range(trials)]
    out: list[dict[str, Any] | None] = [None] * len(items)
    from tqdm.auto import tqdm

    bar = tqdm(total=len(items), desc="trace runs", disable=not progress)

    def done(i: int, res: dict[str, Any]) -> None:
        out[i] = res
        bar.update()

    if backend == "processes" and workers == 1:
        backend = "serial"
    order = sorted(range(len(items)), key=lambda i: -items[i]["candidate"][1])
    try:
        execute(_run_task, items, backend=backend, workers=workers, order=order, on_done=done)
    finally:
        bar.close()
    df = pd.DataFrame(out)
    df.attrs.update(system_mtbf_s=float(m_s),
                    first_horizon_s=n_chunks * src.chunk_s if trace else float("nan"))
    return df


def json_ready(obj: Any) -> Any:
    """Strict-JSON form of results: dataclasses to dicts, tuples and arrays to lists, numpy to Python,
    nan and ±inf to None (``json.dumps(json_ready(x), allow_nan=False)`` works)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return json_ready(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


@dataclass(frozen=True)
class TracePoint:
    """One simulated (method, r, C) over its trials: means, standard errors (nan for one trial),
    global restarts, reruns on longer failure rows, the closed form at the trace's MTBF, and the
    per-trial TTT/T0 (paired across points by trial)."""

    method: str
    label: str
    r: int
    checkpoint_steps: int
    stage: int
    trials: int
    completed: int
    ttt_mean: float
    ttt_se: float
    availability_mean: float
    availability_se: float
    restarts_mean: float
    extensions: int
    closed_form_ttt: float
    ttt_trials: tuple[float, ...]

    @property
    def finished(self) -> bool:
        """Every trial reached the last step before the wall cap."""
        return self.completed == self.trials


@dataclass(frozen=True)
class TraceChoice(TracePoint):
    """A method's recommendation: its point with the lowest mean TTT/T0 (finished runs first);
    ``tied_r`` / ``tied_checkpoint_steps``: the candidates within :data:`TIE_SE` paired standard
    errors of it; ``at_edge``: the best r is the end of the simulated range (widen it)."""

    tied_r: tuple[int, ...] = ()
    tied_checkpoint_steps: tuple[int, ...] = ()
    at_edge: bool = False


@dataclass(frozen=True)
class TraceGain:
    """Gain of SPARe+CKPT over ``versus``: 1 − TTT_SPARe/TTT_versus, both at their choices, with the
    95 % Student-t interval of the paired per-trial differences divided by TTT_versus (nan with
    one trial); ``lower_bound`` when ``versus`` did not finish (its TTT is a lower bound)."""

    versus: str
    label: str
    gain: float
    ci_low: float
    ci_high: float
    lower_bound: bool


@dataclass(frozen=True)
class TracePlan:
    """Result of :func:`plan_with_trace` (:meth:`to_dict`: strict JSON; :meth:`lines`: the report):
    the failure source, its system MTBF of group failures on this cluster, the closed-form optimum
    at that MTBF, every simulated point, the choice per method, the gains of SPARe+CKPT."""

    failures: str
    N: int
    n_gpus: int
    gpus_per_group: int
    steps: int
    trials: int
    seed: int
    checkpoint: str
    system_mtbf_s: float
    t0_s: float
    closed_form: dict[str, dict[str, float]]
    points: tuple[TracePoint, ...]
    choices: dict[str, TraceChoice]
    gains: tuple[TraceGain, ...]
    statement: str
    warnings: tuple[str, ...]
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (nan -> None)."""
        return json_ready(self)  # type: ignore[no-any-return]

    def lines(self) -> list[str]:
        """The report as printed by ``spare plan --failures``."""
        out = [f"Failures: {self.failures}; N = {self.N} groups of {self.gpus_per_group} GPUs, "
               f"system MTBF {self.system_mtbf_s / 60:.2f} min, {self.steps:,} steps, "
               f"{self.trials} trials, checkpoint rule {self.checkpoint}"]
        for c in self.choices.values():
            tied = ", ".join(map(str, c.tied_r)) or "none"
            out.append(f"{c.label:<10} r = {c.r:<2} C = {c.checkpoint_steps:<3} TTT/T0 {c.ttt_mean:.3f} "
                       f"± {c.ttt_se:.3f}  availability {100 * c.availability_mean:.1f} ± "
                       f"{100 * c.availability_se:.1f} %  (r tied within {TIE_SE:g} s.e.: {tied})"
                       + ("" if c.finished else "  [unfinished: lower bound]"))
        for g in self.gains:
            out.append(f"gain of SPARe+CKPT over {g.label}: {'>= ' if g.lower_bound else ''}"
                       f"{100 * g.gain:.1f} % (95 % CI {100 * g.ci_low:.1f} .. {100 * g.ci_high:.1f} %)")
        return out + [self.statement, *(f"warning: {w}" for w in self.warnings)]


def _point(g: Any, stage: int, closed: float) -> TracePoint:
    g, m = g.sort_values("trial"), str(g["method"].iloc[0])
    ttt, av, n = g["ttt_over_t0"].to_numpy(float), g["availability"].to_numpy(float), len(g)

    def se(x: np.ndarray) -> float:
        return float(np.std(x, ddof=1) / math.sqrt(n)) if n > 1 else float("nan")

    return TracePoint(method=m, label=LABELS[m], r=int(g["r"].iloc[0]),
                      checkpoint_steps=int(g["ckpt_steps"].iloc[0]), stage=stage, trials=n,
                      completed=int(g["completed"].sum()), ttt_mean=float(ttt.mean()), ttt_se=se(ttt),
                      availability_mean=float(av.mean()), availability_se=se(av),
                      restarts_mean=float(g["full_restarts"].mean()),
                      extensions=int(g["extensions"].sum()), closed_form_ttt=closed,
                      ttt_trials=tuple(float(x) for x in ttt))


def _paired(a: TracePoint, b: TracePoint) -> tuple[float, float]:
    """Mean and standard error of the per-trial differences a − b (se nan below 2 trials)."""
    d = np.asarray(a.ttt_trials) - np.asarray(b.ttt_trials)
    se = float(np.std(d, ddof=1) / math.sqrt(len(d))) if len(d) > 1 else float("nan")
    return float(d.mean()), se


def _best(points: list[TracePoint]) -> TracePoint:
    return min(points, key=lambda p: (not p.finished, p.ttt_mean))


def _tied(points: list[TracePoint], best: TracePoint, key: str) -> tuple[int, ...]:
    """``key`` ('r' or 'checkpoint_steps') of the points tied with ``best``, sorted."""
    return tuple(sorted(getattr(p, key) for p in points if p is best or (
        p.finished and (ds := _paired(p, best))[1] == ds[1] and ds[0] < TIE_SE * ds[1])))


def _gain(s: TracePoint, o: TracePoint) -> TraceGain:
    from scipy import stats

    d, se = _paired(o, s)
    half = float(stats.t.ppf(0.975, s.trials - 1)) * se if s.trials > 1 else float("nan")
    return TraceGain(versus=o.method, label=o.label, gain=d / o.ttt_mean, ci_low=(d - half) / o.ttt_mean,
                     ci_high=(d + half) / o.ttt_mean, lower_bound=not o.finished)


def _checkpoint_rule(rule: str, spec: ClusterSpec, method: str, r: int) -> int:
    if rule == "paper" and method != "ckpt":
        return paper_checkpoint_interval(method, spec.N, r)
    return int(_closed_point(spec, method, r).checkpoint_steps)


def plan_with_trace(trace: FaultTrace | None, config: ClusterConfig | ClusterSpec, N: int | None = None,
                    *, failures_method: str = "block-bootstrap", trials: int = 5, seed: int = 0,
                    steps: int | None = None, spare_r: Sequence[int] | None = None,
                    rep_r: Sequence[int] | None = None, include_ckpt: bool = True,
                    checkpoint: str = "closed-form", checkpoint_factors: Sequence[float] = CKPT_FACTORS,
                    spare_window: int = SPARE_WINDOW, dist: str = "weibull", placement: str = "contiguous",
                    gpus_per_server: int | None = None, tolerance_s: float = 1.0,
                    chunk_s: float | None = None, horizon_s: float | None = None,
                    max_wall_t0: float = MAX_WALL_T0, layout: str = "ruler", backend: str = "processes",
                    workers: int | None = 2, progress: bool = False) -> TracePlan:
    """Recommend r and C for SPARe+CKPT, Rep+CKPT and CKPT-only from trace-driven simulations.

    Stage 1 simulates each candidate r at the checkpoint rule's C0; a method's best r has the
    lowest mean TTT/T0 (ties: within :data:`TIE_SE` paired standard errors). Stage 2 simulates
    C = round(f·C0), f in ``checkpoint_factors`` (each > 0; empty: none), at that r; the best C
    wins. Trial t of every candidate replays the same rows, so the gains are paired.

    Parameters
    ----------
    trace, config, N, failures_method, trials, seed, dist, placement, gpus_per_server, tolerance_s, \
chunk_s, horizon_s, max_wall_t0, layout, backend, workers, progress :
        As :func:`simulate_with_trace` (``h100_600k(N)`` is the paper's cluster).
    steps : int or None
        Committed steps per run (None: ``config.steps``).
    spare_r, rep_r : sequence of int or None
        Candidates; None: the closed-form optimum at the trace's system MTBF ± ``spare_window``
        (SPARe, within 2..largest ruler r), and 2..5 plus the closed-form optimum (Rep); empty: skip.
    include_ckpt : bool
        Also simulate CKPT-only.
    checkpoint : {'closed-form', 'paper'}
        C0: T_c* (Eq. 2) at the trace's system MTBF in steps, or the paper's table (SPEC §6, N = 200,
        600, 1000; CKPT-only always closed-form).

    Returns
    -------
    TracePlan
    """
    t_start = time.perf_counter()
    config, N = _check_cluster(config, N)
    if steps is not None:
        config = config.with_(steps=check_int("steps", steps, lo=1))
    if checkpoint not in ("closed-form", "paper"):
        raise ValueError(f"checkpoint must be 'closed-form' or 'paper', got {checkpoint!r}")
    if checkpoint == "paper" and N not in (200, 600, 1000):
        raise ValueError(f"checkpoint='paper' needs N in (200, 600, 1000) (the paper's table), got {N}")
    factors = tuple(check_positive("checkpoint_factors", f) for f in checkpoint_factors)
    spare_window = check_int("spare_window", spare_window, lo=0)
    src = _source(trace, failures_method, dist, placement, gpus_per_server, tolerance_s, chunk_s)
    kw = dict(trials=trials, seed=seed, failures_method=failures_method, dist=dist, placement=placement,
              gpus_per_server=gpus_per_server, tolerance_s=tolerance_s, chunk_s=chunk_s, horizon_s=horizon_s,
              max_wall_t0=max_wall_t0, layout=layout, backend=backend, workers=workers, progress=progress)
    m_s = _system_mtbf(src, config, N, check_int("seed", seed, lo=0))
    spec = _closed_spec(config, N, m_s)
    from spare_lib.cluster.planning import plan

    closed, r_top = plan(spec), max_ruler_r(N)
    cands = {"spare": tuple(range(max(2, closed.spare.r - spare_window),
                                  min(r_top, closed.spare.r + spare_window) + 1)),
             "rep": tuple(sorted({r for r in REP_R if r <= N} | {closed.rep.r})),
             "ckpt": (1,) if include_ckpt else ()}
    if spare_r is not None:
        cands["spare"] = tuple(sorted({check_int("spare_r", r, lo=2, hi=r_top) for r in spare_r}))
    if rep_r is not None:
        cands["rep"] = tuple(sorted({check_int("rep_r", r, lo=2, hi=N) for r in rep_r}))
    if not any(cands.values()):
        raise ValueError("spare_r, rep_r and include_ckpt leave no candidate to simulate")

    def stage(pairs: list[tuple[str, int, int]], k: int) -> list[TracePoint]:
        if not pairs:
            return []
        df = simulate_with_trace(trace, pairs, config, N, **kw)
        return [_point(g, k, _closed_point(spec, m, r).ttt_over_t0)
                for (m, r, _c), g in df.groupby(["method", "r", "ckpt_steps"], sort=False)]

    c0 = {(m, r): _checkpoint_rule(checkpoint, spec, m, r) for m, rs in cands.items() for r in rs}
    pts = stage([(m, r, c) for (m, r), c in c0.items()], 1)
    best_r = {m: _best([p for p in pts if p.method == m]) for m in cands if cands[m]}
    pts += stage([(m, p.r, c) for m, p in best_r.items() if p.finished for c in
                  sorted({max(1, round(f * p.checkpoint_steps)) for f in factors} - {p.checkpoint_steps})], 2)
    choices: dict[str, TraceChoice] = {}
    for m, b in best_r.items():
        at_r = [p for p in pts if p.method == m and p.r == b.r]
        best = _best(at_r)
        rs = cands[m]  # ties over r are judged at C0, the points compared in stage 1
        choices[m] = TraceChoice(
            **{f.name: getattr(best, f.name) for f in dataclasses.fields(TracePoint)},
            tied_r=_tied([p for p in pts if p.method == m and p.stage == 1], b, "r"),
            tied_checkpoint_steps=_tied(at_r, best, "checkpoint_steps"),
            at_edge=len(rs) > 1 and b.r in (rs[0], rs[-1]) and b.r not in (2, r_top if m == "spare" else N))
    gains = tuple(_gain(choices["spare"], choices[m]) for m in ("rep", "ckpt")
                  if {"spare", m} <= set(choices))
    warn = [f"{p.label} r = {p.r} C = {p.checkpoint_steps}: {p.trials - p.completed} of {p.trials} runs "
            "stopped at max_wall_t0 (TTT/T0 is a lower bound)" for p in pts if not p.finished]
    warn += [f"{c.label}: the best r = {c.r} is at the end of the simulated range; widen it"
             for c in choices.values() if c.at_edge]
    desc = (f"the config's {config.failure_dist} model" if trace is None else
            f"{trace.label} via {failures_method}, placement {placement}")
    return TracePlan(
        failures=desc, N=N, n_gpus=config.n_gpus, gpus_per_group=config.n_gpus // N, steps=config.steps,
        trials=trials, seed=seed, checkpoint=checkpoint, system_mtbf_s=m_s, t0_s=config.t0_s(),
        closed_form={m: {"r": getattr(closed, m).r, "ttt_over_t0": getattr(closed, m).ttt_over_t0,
                         "availability": getattr(closed, m).availability} for m in LABELS},
        points=tuple(sorted(pts, key=lambda p: (list(LABELS).index(p.method), p.r, p.checkpoint_steps))),
        choices=choices, gains=gains, statement=_statement(choices, gains), warnings=tuple(warn),
        elapsed_s=time.perf_counter() - t_start)


def _statement(choices: dict[str, TraceChoice], gains: tuple[TraceGain, ...]) -> str:
    """One plain sentence: which method wins, and SPARe+CKPT against the others."""
    best = min(choices.values(), key=lambda c: (not c.finished, c.ttt_mean))
    parts = [f"Best: {best.label} (r = {best.r}, C = {best.checkpoint_steps}), TTT/T0 {best.ttt_mean:.3f}."]
    for g in gains:
        sure = g.ci_low == g.ci_low and (g.ci_low > 0 or g.ci_high < 0)
        parts.append(f"SPARe+CKPT is {abs(100 * g.gain):.1f} % {'faster' if g.gain > 0 else 'slower'} than "
                     f"{g.label}" + ("." if sure else " (not resolved: the 95 % CI contains 0)."))
    return " ".join(parts)
