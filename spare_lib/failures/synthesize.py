"""Synthesize group-failure traces for a large cluster from a small real trace.

The output is the array the simulator replays (``simulate(..., failure_trace=array)``): rows
``(time_s, group)`` sorted by time, meaning "group ``group`` fails at ``time_s``".
"""

from __future__ import annotations

import numpy as np

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive
from spare_lib.failures.describe import fault_instants
from spare_lib.failures.fit import DISTS, fit_interarrival
from spare_lib.failures.trace import FaultTrace

__all__ = ["METHODS", "servers_to_groups", "synthesize"]

METHODS = ("block-bootstrap", "fitted")


def servers_to_groups(server: np.ndarray, gpus_per_server: int,
                      gpus_per_group: int) -> tuple[np.ndarray, np.ndarray]:
    """Groups hit by a failure of each server.

    Server ``s`` holds GPUs ``[s * gpus_per_server, (s + 1) * gpus_per_server)`` and group ``g``
    holds GPUs ``[g * gpus_per_group, (g + 1) * gpus_per_group)``; a server failure fails every
    group it shares a GPU with (one group when ``gpus_per_group`` is a multiple of
    ``gpus_per_server``).

    Returns
    -------
    index, group : arrays of int64
        ``group[j]`` is hit by the failure of ``server[index[j]]``.
    """
    server = np.asarray(server, dtype=np.int64)
    first = server * gpus_per_server // gpus_per_group
    last = ((server + 1) * gpus_per_server - 1) // gpus_per_group
    span = last - first + 1
    index = np.repeat(np.arange(server.size), span)
    offset = np.arange(index.size) - np.repeat(np.cumsum(span) - span, span)
    return index, first[index] + offset


def _block_bootstrap(trace: FaultTrace, n_servers: int, horizon_s: float,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Tiles of the whole observed cluster, each with its own circular time shift."""
    w, m = trace.window_s, trace.n_nodes
    codes, _ = trace.node_codes()
    start = trace.faults["start_s"].to_numpy()
    n_windows = int(np.ceil(horizon_s / w))
    n_blocks = -(-n_servers // m)
    n_tiles = n_windows * n_blocks
    shift = rng.uniform(0.0, w, size=n_tiles)
    # per tile a random placement of the m observed servers on the block's m slots
    slots = rng.permuted(np.broadcast_to(np.arange(m), (n_tiles, m)), axis=1)[:, : codes.max() + 1]
    tile = np.arange(n_tiles)
    window, block = tile // n_blocks, tile % n_blocks
    times = window[:, None] * w + np.mod(start[None, :] + shift[:, None], w)
    servers = block[:, None] * m + slots[:, codes]
    keep = (times < horizon_s) & (servers < n_servers)
    return times[keep], servers[keep]


def _renewal_times(shape: float | None, scale: float, dist: str, horizon_s: float,
                   rng: np.random.Generator) -> np.ndarray:
    """Event times of a renewal process on [0, horizon_s) with a burn-in of 10 mean gaps."""
    law, has_shape = DISTS[dist]
    args = (shape,) if has_shape else ()
    mean = float(law.mean(*args, scale=scale))
    burn = 10.0 * mean
    total = horizon_s + burn
    chunks, t0 = [], 0.0
    n = int(total / mean * 1.1 + 10 * np.sqrt(total / mean) + 16)
    while t0 < total:
        gaps = law.rvs(*args, scale=scale, size=n, random_state=rng)
        t = t0 + np.cumsum(gaps)
        chunks.append(t)
        t0 = float(t[-1])
        n = max(16, n // 4)
    times = np.concatenate(chunks) - burn
    return times[(times >= 0) & (times < horizon_s)]


def _distinct_servers(sizes: np.ndarray, n_servers: int, rng: np.random.Generator) -> np.ndarray:
    """For each event of ``sizes[i]`` servers, that many distinct uniform servers; flat array."""
    sizes = np.minimum(sizes, n_servers)
    width = int(sizes.max()) if sizes.size else 0
    draw = rng.integers(0, n_servers, size=(sizes.size, width))
    valid = np.arange(width)[None, :] < sizes[:, None]
    while True:  # redraw the (rare) events with a repeated server
        masked = np.where(valid, draw, -1 - np.arange(width)[None, :])
        srt = np.sort(masked, axis=1)
        dup = np.any(srt[:, 1:] == srt[:, :-1], axis=1)
        if not dup.any():
            return draw[valid]
        draw[dup] = rng.integers(0, n_servers, size=(int(dup.sum()), width))


def _fitted(trace: FaultTrace, n_servers: int, horizon_s: float, rng: np.random.Generator, dist: str,
            tolerance_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Compound renewal process: instants from the fitted system law, sizes from the trace."""
    fit = fit_interarrival(trace, "system", dists=(dist,), ci=None, tolerance_s=tolerance_s)
    row = fit.iloc[0]
    shape = None if np.isnan(row["shape"]) else float(row["shape"])
    scale = float(row["scale"]) * trace.n_nodes / n_servers  # more servers, proportionally shorter gaps
    times = _renewal_times(shape, scale, dist, horizon_s, rng)
    sizes_obs = fault_instants(trace, tolerance_s)["size"].to_numpy()
    sizes = rng.choice(sizes_obs, size=times.size, replace=True)
    servers = _distinct_servers(sizes, n_servers, rng)
    return np.repeat(times, np.minimum(sizes, n_servers)), servers


def synthesize(trace: FaultTrace, n_gpus: int, gpus_per_group: int, horizon_s: float,
               method: str = "block-bootstrap", seed: SeedLike = None, gpus_per_server: int | None = None,
               *, dist: str = "weibull", tolerance_s: float = 1.0) -> np.ndarray:
    """Group failures of a large cluster over ``horizon_s``, drawn from a real trace.

    Parameters
    ----------
    trace : FaultTrace
        The real trace (its ``n_nodes`` servers and ``window_s`` define one block).
    n_gpus : int
        GPUs of the cluster to synthesize; a multiple of ``gpus_per_server`` and of ``gpus_per_group``.
    gpus_per_group : int
        GPUs per data-parallel group; groups are ``0 .. n_gpus / gpus_per_group - 1``.
    horizon_s : float
        Length of the synthetic trace, seconds.
    method : {'block-bootstrap', 'fitted'}
        ``'block-bootstrap'``: the big cluster is tiled with copies of the whole observed server
        set (blocks of ``trace.n_nodes`` servers) and the horizon with copies of the window; each
        (window, block) tile gets an independent uniform time shift, applied circularly within the
        window, and a random placement of the observed servers on the block's slots. Each server's
        history inside a window and the simultaneous multi-server faults are kept as they were. A
        last partial block keeps the servers whose slot falls inside the cluster.
        ``'fitted'``: a compound renewal process: fault instants with the law ``dist`` fitted at
        system level (:func:`~spare_lib.failures.fit.fit_interarrival`), its scale divided by
        ``n_servers / trace.n_nodes`` (shape kept), each instant hitting a number of distinct
        uniformly random servers drawn from the trace's instant sizes. Starts after a burn-in of
        10 mean gaps so t = 0 is not a renewal point.
    seed : int, SeedSequence or Generator
    gpus_per_server : int, optional
        Defaults to ``trace.gpus_per_node``, or 8 if that is unknown.
    dist : {'exponential', 'weibull', 'lognormal', 'gamma'}
        Law of the fitted method.
    tolerance_s : float
        Instants for the fitted method (see :func:`~spare_lib.failures.describe.fault_instants`).

    Returns
    -------
    numpy.ndarray of float64, shape (n, 2)
        Rows ``(time_s, group)`` sorted by time then group, times in ``[0, horizon_s)``. Several
        servers of one group failing at the same instant (identical time) give one row.

    Notes
    -----
    Cost is linear in the number of synthetic faults (about ``n_servers / trace.n_nodes x
    horizon_s / window_s x trace.n_faults``); all steps are vectorised. A 600,000-GPU, one-year
    trace from StepFun takes well under a second (``benchmarks/bench_failures.py``).
    """
    if not isinstance(trace, FaultTrace):
        raise ValueError(f"trace must be a FaultTrace, got {type(trace).__name__}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    if dist not in DISTS:
        raise ValueError(f"dist must be one of {list(DISTS)}, got {dist!r}")
    gps = gpus_per_server if gpus_per_server is not None else (trace.gpus_per_node or 8)
    gps = check_int("gpus_per_server", gps, lo=1)
    n_gpus = check_int("n_gpus", n_gpus, lo=gps)
    gpus_per_group = check_int("gpus_per_group", gpus_per_group, lo=1, hi=n_gpus)
    if n_gpus % gps:
        raise ValueError(f"n_gpus must be a multiple of gpus_per_server={gps}, got {n_gpus}")
    if n_gpus % gpus_per_group:
        raise ValueError(f"n_gpus must be a multiple of gpus_per_group={gpus_per_group}, got {n_gpus}")
    horizon_s = check_positive("horizon_s", horizon_s)
    tol = check_positive("tolerance_s", tolerance_s, allow_zero=True)
    rng = np.random.default_rng(as_seed_sequence(seed))
    n_servers = n_gpus // gps
    if trace.n_faults == 0:
        return np.empty((0, 2))
    if method == "block-bootstrap":
        times, servers = _block_bootstrap(trace, n_servers, horizon_s, rng)
    else:
        times, servers = _fitted(trace, n_servers, horizon_s, rng, dist, tol)
    idx, groups = servers_to_groups(servers, gps, gpus_per_group)
    out = np.column_stack([times[idx], groups.astype(np.float64)])
    out = np.unique(out, axis=0) if out.size else out.reshape(0, 2)  # sorts by time then group
    return out
