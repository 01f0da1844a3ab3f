"""Failures from a real fault log at the planned cluster's size (issue 14, "real failure logs in,
decisions out"), for the planner's trace mode (``spare plan --failures FILE``).

* :func:`trace_failures`: group-failure rows ``(time_s, group)`` for the simulated cluster, built by
  :func:`spare_lib.failures.synthesize` in chunks of ``chunk_s`` (default the trace's window), chunk
  j from seed child j: the rows for a horizon H are the prefix of the rows for any longer one.
* :class:`TraceSource`: a log and its synthesis options, as the planner's runs use it: trial t of
  every candidate replays the same rows with the same jitter seed (children of the trial's seed:
  common random numbers); a run that outlasts its rows is rerun on a longer prefix
  (:func:`spare_lib.cluster.planning.evaluation.simulate_plan_point`), so no run silently runs out
  of failures.
* :func:`trace_system_mtbf`: the system MTBF of the group failures the log gives this cluster
  (trial 0's first chunk), the m of the fast model with a log.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ClusterConfig
from spare_lib.failures import FaultTrace, synthesize

__all__ = ["HORIZON_MARGIN", "PLACEMENTS", "TraceSource", "json_ready", "trace_failures",
           "trace_source", "trace_system_mtbf"]

#: How groups sit on the servers: 'contiguous' (group g = servers [g·G/8, (g+1)·G/8), as
#: :func:`~spare_lib.failures.servers_to_groups`) or 'random' (group ids permuted once per trial,
#: so a multi-server fault no longer hits groups with neighbouring ids).
PLACEMENTS = ("contiguous", "random")
#: The first horizon is this many times the closed-form time-to-train of the slowest candidate.
HORIZON_MARGIN = 1.5
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
    if not isinstance(trace, FaultTrace):
        raise ValueError(f"trace must be a FaultTrace, got {type(trace).__name__}")
    chunk_s = trace.window_s if chunk_s is None else check_positive("chunk_s", chunk_s)
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {list(PLACEMENTS)}, got {placement!r}")
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


@dataclass(frozen=True)
class TraceSource:
    """A fault log and its synthesis options, as a planner's run uses it (picklable).

    ``first_chunks`` chunks of ``chunk_s`` make the first horizon of every trial's rows.
    """

    trace: FaultTrace
    method: str = "block-bootstrap"
    dist: str = "weibull"
    placement: str = "contiguous"
    gpus_per_server: int | None = None
    tolerance_s: float = 1.0
    chunk_s: float = 0.0
    first_chunks: int = 1

    def rows(self, cfg: ClusterConfig, N: int, horizon_s: float,
             fam: np.random.SeedSequence) -> np.ndarray:
        """The trial's rows up to ``horizon_s`` (a prefix of every longer horizon's)."""
        return trace_failures(self.trace, cfg.n_gpus, cfg.n_gpus // N, horizon_s, self.method, fam,
                              gpus_per_server=self.gpus_per_server, dist=self.dist,
                              tolerance_s=self.tolerance_s, chunk_s=self.chunk_s,
                              placement=self.placement)

    @staticmethod
    def trial_seeds(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
        """(failure seed family, jitter seed) of the trial whose seed is ``seed``."""
        ss = np.random.SeedSequence(int(seed))
        return _child(ss, 0), _child(ss, 2)

    def __repr__(self) -> str:  # the sweep's point canonical form (no cache with traces)
        return (f"TraceSource({_token(self.trace)[:12]}, {self.method}, {self.dist}, "
                f"{self.placement}, {self.gpus_per_server}, {self.tolerance_s}, {self.chunk_s}, "
                f"{self.first_chunks})")


def trace_source(trace: FaultTrace, method: str = "block-bootstrap", dist: str = "weibull",
                 placement: str = "contiguous", gpus_per_server: int | None = None,
                 tolerance_s: float = 1.0, chunk_s: float | None = None) -> TraceSource:
    """A validated :class:`TraceSource` (ValueError naming the parameter)."""
    from spare_lib.failures import DISTS
    from spare_lib.failures import METHODS as SYNTH_METHODS

    if not isinstance(trace, FaultTrace):
        raise ValueError(f"trace must be a FaultTrace, got {type(trace).__name__}")
    for name, v, allowed in (("failures_method", method, SYNTH_METHODS),
                             ("failures_law", dist, DISTS),
                             ("failures_placement", placement, PLACEMENTS)):
        if v not in allowed:
            raise ValueError(f"{name} must be one of {list(allowed)}, got {v!r}")
    if gpus_per_server is not None:
        check_int("gpus_per_server", gpus_per_server, lo=1)
    tol = check_positive("failures_tolerance_s", tolerance_s, allow_zero=True)
    chunk = trace.window_s if chunk_s is None else check_positive("failures_chunk_s", chunk_s)
    return TraceSource(trace, method, dist, placement, gpus_per_server, tol, chunk)


def trace_system_mtbf(src: TraceSource, cfg: ClusterConfig, N: int, seed: int) -> float:
    """System MTBF of the group failures the log gives this cluster: trial 0's first chunk."""
    fam, _ = TraceSource.trial_seeds(seed)
    n = len(src.rows(cfg, N, src.chunk_s, fam))
    if n == 0:
        raise ValueError("trace must produce failures on this cluster: its synthesis gave none")
    return src.chunk_s / n


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
