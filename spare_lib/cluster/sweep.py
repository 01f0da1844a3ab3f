"""Parameter sweeps: serial, a local process pool (default) or Dask, with a resumable disk cache.

A sweep is a list of points (dicts of keyword arguments) and a function ``fn(**point)`` that
returns a dict, a dataclass (e.g. :class:`spare_lib.cluster.simulate.SimResult`) or a scalar. Results come
back as a :class:`pandas.DataFrame` in input order, one row per point (point columns first).

Determinism: a point's random seed is derived from the point itself (:func:`point_seed`), never
from the worker that runs it, so every backend and worker count gives identical numbers.

Cache: each finished point is written to ``cache_dir/<key>.json`` at once (atomic rename), keyed by
a hash of the point, the function's qualified name and the library version. An interrupted sweep
resumes with only the missing points; a repeated one is read from disk.

Dask: ``backend='dask'`` uses ``client`` (a ``dask.distributed.Client``, or a scheduler address
such as ``"tcp://10.0.0.5:8786"``), or starts a ``LocalCluster`` with one single-threaded worker
process per core. To run on Slurm/PBS, start a cluster with dask-jobqueue
(``SLURMCluster(...).scale(jobs=...)``) and pass ``Client(cluster)``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from spare_lib.cluster.executor import check_backend, execute

DEFAULT_CACHE_DIR = Path(".sweep_cache")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("spare-lab")
    except Exception:  # pragma: no cover - not installed
        return "0+unknown"


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, Path):
        return str(v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {k: _jsonable(x) for k, x in dataclasses.asdict(v).items()}
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _canonical(point: Mapping[str, Any]) -> str:
    return json.dumps(_jsonable(dict(point)), sort_keys=True, default=str, separators=(",", ":"))


def point_seed(point: Mapping[str, Any], root: int = 0) -> int:
    """A 63-bit seed derived from the point's content and ``root`` (not from any worker)."""
    digest = hashlib.sha256(f"{root}|{_canonical(point)}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def _fn_name(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def cache_key(point: Mapping[str, Any], fn: Callable[..., Any]) -> str:
    """Hash of the point, the function's qualified name and the library version."""
    text = f"{_fn_name(fn)}|{_version()}|{_canonical(point)}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _as_row(result: Any) -> dict[str, Any]:
    out = _jsonable(result)
    if isinstance(out, dict):
        return out
    return {"value": out}


def _call(fn: Callable[..., Any], point: dict[str, Any]) -> dict[str, Any]:
    return _as_row(fn(**point))


def _write_cache(cache_dir: Path, key: str, point: dict[str, Any], row: dict[str, Any]) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump({"point": _jsonable(point), "result": row}, fh)
    os.replace(tmp, cache_dir / f"{key}.json")


def _read_cache(cache_dir: Path, key: str) -> dict[str, Any] | None:
    path = cache_dir / f"{key}.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())["result"]
    except (OSError, ValueError, KeyError):
        return None  # a torn or foreign file: recompute


def _normalise_points(points: Any) -> list[dict[str, Any]]:
    try:
        import pandas as pd

        if isinstance(points, pd.DataFrame):
            return [{k: _jsonable(v) for k, v in rec.items()} for rec in points.to_dict("records")]
    except ImportError:  # pragma: no cover
        pass
    if isinstance(points, Mapping) or not isinstance(points, Iterable):
        raise ValueError("points must be a list of dicts or a pandas DataFrame")
    out = []
    for i, p in enumerate(points):
        if not isinstance(p, Mapping):
            raise ValueError(f"points[{i}] must be a dict of keyword arguments, got {type(p).__name__}")
        out.append(dict(p))
    return out


def run_sweep(points: Any, fn: Callable[..., Any], backend: str = "processes", client: Any = None,
              cache_dir: str | os.PathLike[str] | None = DEFAULT_CACHE_DIR, progress: bool = True,
              workers: int | None = None, root_seed: int | None = None) -> Any:
    """Evaluate ``fn(**point)`` for every point; return a DataFrame in input order.

    Parameters
    ----------
    points : list of dict or pandas.DataFrame
        Keyword arguments of ``fn``, one mapping per point.
    fn : callable
        A module-level (picklable) function; returns a dict, a dataclass or a scalar.
    backend : {'serial', 'processes', 'dask'}
        Where points run. 'processes' uses a local spawn-context pool with ``workers`` processes
        (default: all cores).
    client : dask.distributed.Client, str or None
        For 'dask': an existing client, or a scheduler address; None starts a LocalCluster.
    cache_dir : path or None
        Resumable per-point cache (None disables it).
    progress : bool
        Show a tqdm bar (done/total, ETA).
    workers : int or None
        Worker processes for 'processes' and for a LocalCluster (default: os.cpu_count()).
    root_seed : int or None
        If given, every point without a ``seed`` key gets ``seed = point_seed(point, root_seed)``.

    Returns
    -------
    pandas.DataFrame
        Point columns followed by result columns, one row per point, in input order.
    """
    import pandas as pd
    from tqdm.auto import tqdm

    check_backend(backend, workers)
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    pts = _normalise_points(points)
    if root_seed is not None:
        pts = [p if "seed" in p else {**p, "seed": point_seed(p, root_seed)} for p in pts]
    cdir = Path(cache_dir) if cache_dir is not None else None
    keys = [cache_key(p, fn) for p in pts]
    rows: list[dict[str, Any] | None] = [None] * len(pts)
    todo = []
    for i, k in enumerate(keys):
        cached = _read_cache(cdir, k) if cdir is not None else None
        if cached is None:
            todo.append(i)
        else:
            rows[i] = cached

    bar = tqdm(total=len(pts), initial=len(pts) - len(todo), desc="sweep", disable=not progress,
               unit="pt")

    def done(i: int, row: dict[str, Any]) -> None:
        rows[i] = row
        if cdir is not None:
            _write_cache(cdir, keys[i], pts[i], row)
        bar.update(1)

    try:
        execute(partial(_call, fn), pts, backend=backend, client=client, workers=workers, order=todo,
                on_done=done)
    finally:
        bar.close()

    table = [{**p, **(r or {})} for p, r in zip(pts, rows, strict=True)]
    return pd.DataFrame(table)


def example_point(a: float, b: float, seed: int = 0, sleep_s: float = 0.0) -> dict[str, float]:
    """A tiny sweep function for docs and tests: ``a·b`` plus seeded noise, optionally slow.

    Examples
    --------
    >>> run_sweep([{"a": 1, "b": 2}, {"a": 3, "b": 4}], example_point, backend="serial",
    ...           cache_dir=None, progress=False, root_seed=1)["a"].tolist()
    [1, 3]
    """
    import time

    if sleep_s:
        time.sleep(sleep_s)
    noise = float(np.random.default_rng(seed).normal())
    return {"y": a * b + noise, "noise": noise}


def simulate_point(method: str, N: int, r: int = 1, ckpt_steps: Any = "paper", seed: int = 0,
                   layout: str = "ruler", preset: str = "h100_600k", **overrides: Any) -> dict[str, Any]:
    """One :func:`spare_lib.cluster.simulate.simulate` run as a sweep point (used by ``spare sweep``).

    Parameters
    ----------
    method : {'spare', 'rep', 'ckpt'}
        Fault-tolerance method.
    N, r : int
        Groups and redundancy (r = 1 for 'ckpt').
    ckpt_steps : int, 'paper', 'none' or None
        Checkpoint interval in steps; 'paper' takes the paper's table (SPEC §6) for SPARe/Rep at
        N = 200/600/1000 and the analytic optimum otherwise; 'none'/None disables checkpoints.
    seed : int
        The run's seed (``run_sweep(root_seed=...)`` derives it from the point).
    layout : str
        SPARe stacking layout ('ruler' or 'consecutive').
    preset : str
        Cluster preset; only 'h100_600k' (the paper's) is defined.
    **overrides
        :class:`spare_lib.cluster.ClusterConfig` fields, e.g. ``steps=2000``.

    Returns
    -------
    dict
        ``SimResult.as_dict()`` plus the checkpoint interval used.
    """
    from spare_lib.cluster.config import analytic_checkpoint_interval, h100_600k, paper_checkpoint_interval
    from spare_lib.cluster.simulate import simulate
    from spare_lib.theory import mu_closed, replication_mu

    if preset != "h100_600k":
        raise ValueError(f"preset must be 'h100_600k', got {preset!r}")
    config = h100_600k(int(N), **overrides)
    if isinstance(ckpt_steps, float) and np.isnan(ckpt_steps):
        ckpt_steps = None
    if ckpt_steps in (None, "none", "None", ""):
        c = None
    elif ckpt_steps == "paper":
        try:
            if method == "ckpt":
                raise ValueError("no paper interval for CKPT-only")
            c = paper_checkpoint_interval(method, int(N), int(r))
        except ValueError:
            # T_f = mean failures between restarts × m: μ(N, r) for SPARe, the disjoint-set
            # result for Rep, one failure for CKPT-only.
            failures = {"spare": mu_closed, "rep": replication_mu}.get(method, lambda N, r: 1.0)
            mtbf = config.system_mtbf_s * float(failures(int(N), int(r)))
            c = analytic_checkpoint_interval(mtbf, config.step_s(1), config)
    else:
        c = int(ckpt_steps)
    res = simulate(method, int(N), int(r), c, config, seed=int(seed), layout=layout)
    return {**res.as_dict(), "ckpt_steps": c}
