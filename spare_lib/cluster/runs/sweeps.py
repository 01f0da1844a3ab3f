"""Parameter sweeps: serial, a local process pool (default) or Dask, with a resumable disk cache.

A sweep is a list of points (dicts of keyword arguments) and a function ``fn(**point)`` that
returns a dict, a dataclass (e.g. :class:`spare_lib.cluster.runs.simulate.SimResult`) or a
scalar. Results come
back as a :class:`pandas.DataFrame` in input order, one row per point (point columns first).

Determinism: a point's random seed is derived from the point itself (:func:`point_seed`), never
from the worker that runs it, so every backend and worker count gives identical numbers.

Columns: the result's columns follow the point's. A result key that is also a point key (in any
point of the sweep) never overwrites the input: it is written as ``out_<key>`` (e.g. a point's
``restart_s`` = T_r stays, the run's total restart time becomes ``out_restart_s``).

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
import warnings
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from spare_lib.cluster.config import ClusterConfig
from spare_lib.cluster.runs.executor import check_backend, execute
from spare_lib.registry.methods import method as method_spec

DEFAULT_CACHE_DIR = Path(".sweep_cache")

#: Prefix of a result column whose name is also a point key (inputs are never overwritten).
OUT_PREFIX = "out_"


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
        Point columns followed by result columns, one row per point, in input order; a result
        column whose name is also a point key is renamed ``out_<name>`` (:data:`OUT_PREFIX`), so
        inputs are never overwritten.
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

    inputs = {k for p in pts for k in p}
    table = [{**p, **{(OUT_PREFIX + k if k in inputs else k): v for k, v in (r or {}).items()}}
             for p, r in zip(pts, rows, strict=True)]
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


#: Point keys of :func:`simulate_point` that are not ClusterConfig fields, with their meaning.
RUN_KEYS: dict[str, str] = {
    "method": "spare, rep or ckpt (required)",
    "N": "data-parallel groups (required)",
    "r": "redundancy (default 1; 1 for ckpt; SPARe ruler: up to the largest ruler r at N)",
    "ckpt_steps": "checkpoint interval in steps, 'paper' (default: the paper's table on its "
                  "preset, else the analytic optimum) or 'none'",
    "seed": "seed of the run (default: derived from the point and --root-seed)",
    "failure_seed": "common failure streams: points with the same failure_seed see the same "
                    "failure gaps per group (default: none)",
    "layout": "SPARe layout: ruler (default) or consecutive",
    "exact_patch": "true: recompute every missing stack after a reorder (default false)",
    "max_wall_s": "stop the run at this wall time in seconds (default 1000 T0)",
    "preset": "h100_600k (the only preset; the ClusterConfig keys override it)",
}

#: simulate() keyword arguments that are not point keys (arrays, objects).
_NOT_POINT = ("config", "seed", "failure_trace", "method", "N", "r", "ckpt_steps", "layout")


def _simulate_extra_keys() -> dict[str, str]:
    """Keyword arguments of simulate() beyond RUN_KEYS (e.g. ``mem_ckpt_steps``), passed through."""
    import inspect

    from spare_lib.cluster.runs.simulate import simulate

    return {k: f"simulate(..., {k}=...) (default {p.default!r})"
            for k, p in inspect.signature(simulate).parameters.items()
            if k not in RUN_KEYS and k not in _NOT_POINT}


def _config_keys() -> dict[str, str]:
    """ClusterConfig fields with their help, unit and default, from the knob registry (the one
    table of :mod:`spare_lib.registry.knobs`; the 600k-H100 preset's T_a N/100 s overrides the
    default 6 s at other N)."""
    from spare_lib.registry.knobs import KNOBS, knob_default_text

    out = {}
    for f in dataclasses.fields(ClusterConfig):
        k = KNOBS[f.name]
        unit = "" if k.unit in ("", "1") else f", {k.unit}"
        out[f.name] = f"{k.help}{unit} (default {knob_default_text(k)})"
    return out


def point_keys() -> dict[str, str]:
    """Every key a :func:`simulate_point` point may set, with its meaning (``spare sweep --help``)."""
    from spare_lib.cluster.runs.simulate import METHODS

    return {**RUN_KEYS, "method": f"one of {', '.join(METHODS)} (required)",
            **_simulate_extra_keys(), **_config_keys()}


def check_point_keys(point: Mapping[str, Any], where: str = "point") -> None:
    """ValueError naming an unknown key of a :func:`simulate_point` point and the valid ones."""
    keys = point_keys()
    bad = [k for k in point if k not in keys]
    if bad:
        raise ValueError(f"{where} has unknown key {bad[0]!r}; valid keys: {', '.join(keys)}")
    for k in ("method", "N"):
        if k not in point:
            raise ValueError(f"{where} must set {k!r} ({keys[k]})")


def validate_point(point: Mapping[str, Any]) -> None:
    """Check a :func:`simulate_point` point without running it (keys, method, N, r, layout,
    checkpoint interval and the ClusterConfig fields); ValueError naming what is wrong."""
    from spare_lib.cluster.config import h100_600k
    from spare_lib.cluster.runs.simulate import METHODS
    from spare_lib.stacking.layout import make_layout

    check_point_keys(point)

    def as_int(name: str, v: Any, lo: int, hi: int | None = None) -> int:
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        return check_int(name, v, lo=lo, hi=hi)

    from spare_lib._util.validate import check_int, check_positive

    method = point["method"]
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    N = as_int("N", point["N"], 1)
    r = as_int("r", point.get("r", 1), 1, N)
    if not method_spec(method).redundancy and r != 1:
        raise ValueError(f"r must be 1 for method {method!r}, got {r}")
    c = point.get("ckpt_steps", "paper")
    if c not in (None, "none", "None", "", "paper"):
        as_int("ckpt_steps", int(c) if isinstance(c, str) and c.isdigit() else c, 1)
    fields = {k: v for k, v in point.items() if k not in RUN_KEYS and k not in _simulate_extra_keys()}
    h100_600k(N, **fields)
    _as_bool("exact_patch", point.get("exact_patch", False))
    if point.get("max_wall_s") is not None:
        check_positive("max_wall_s", point["max_wall_s"])
    layout = point.get("layout", "ruler")
    if method_spec(method).layout:
        make_layout(N, r, layout)


def _as_bool(name: str, v: Any) -> bool:
    """A bool from a YAML bool, a CSV 'true'/'false'/1/0."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return v.strip().lower() in ("true", "1", "yes")
    if isinstance(v, (int, float, np.integer, np.floating)) and v in (0, 1):
        return bool(v)
    raise ValueError(f"{name} must be true or false, got {v!r}")


def _is_paper_preset(config: Any, N: int) -> bool:
    """The paper's checkpoint table applies only to the paper's times at this N."""
    from spare_lib.cluster.config import h100_600k

    ref = h100_600k(N)
    return all(getattr(config, f) == getattr(ref, f) for f in
               ("compute_per_stack_s", "allreduce_s", "restart_s", "checkpoint_s", "system_mtbf_s"))


def simulate_point(method: str, N: int, r: int = 1, ckpt_steps: Any = "paper", seed: int = 0,
                   layout: str = "ruler", preset: str = "h100_600k", *,
                   failure_seed: int | None = None, exact_patch: bool = False,
                   max_wall_s: float | None = None, **overrides: Any) -> dict[str, Any]:
    """One :func:`spare_lib.cluster.runs.simulate.simulate` run as a sweep point (used by ``spare sweep``).

    Parameters
    ----------
    method : {'spare', 'rep', 'ckpt'}
        Fault-tolerance method.
    N, r : int
        Groups and redundancy (r = 1 for 'ckpt').
    ckpt_steps : int, 'paper', 'none' or None
        Checkpoint interval in steps; 'paper' takes the paper's table (SPEC §6) for SPARe/Rep at
        N = 200/600/1000 with the preset's times, and the analytic optimum otherwise (other N,
        CKPT-only, or overridden times); 'none'/None disables checkpoints.
    seed : int
        The run's seed (``run_sweep(root_seed=...)`` derives it from the point).
    layout : str
        SPARe stacking layout ('ruler' or 'consecutive').
    preset : str
        Cluster preset; only 'h100_600k' (the paper's) is defined.
    failure_seed, exact_patch, max_wall_s :
        Passed to :func:`~spare_lib.cluster.runs.simulate.simulate` (common failure streams, exact
        patch compute, wall-clock cap).
    **overrides
        :class:`spare_lib.cluster.ClusterConfig` fields, e.g. ``steps=2000``; every valid key
        with its meaning: :func:`point_keys`.

    Returns
    -------
    dict
        ``SimResult.as_dict()`` (without method, N and r, which are inputs) plus the checkpoint
        interval used (``ckpt_steps``) and where it came from (``ckpt_source``). A run stopped
        at ``max_wall_s`` has ``completed`` False (no warning is raised).
    """
    from spare_lib.cluster.config import (
        analytic_checkpoint_interval,
        h100_600k,
        paper_checkpoint_interval,
    )
    from spare_lib.cluster.runs.simulate import simulate
    from spare_lib.theory import mu_closed, replication_mu

    check_point_keys({"method": method, "N": N, **overrides})
    if preset != "h100_600k":
        raise ValueError(f"preset must be 'h100_600k', got {preset!r}")
    sim_extra = {k: overrides.pop(k) for k in list(overrides) if k in _simulate_extra_keys()}
    config = h100_600k(int(N), **overrides)
    source = "given"
    if isinstance(ckpt_steps, float) and np.isnan(ckpt_steps):
        ckpt_steps = None
    if ckpt_steps in (None, "none", "None", ""):
        c, source = None, "none"
    elif ckpt_steps == "paper":
        try:  # the paper's table: its two redundant methods, on its preset's times
            if not _is_paper_preset(config, int(N)):
                raise ValueError("no paper interval for other times")
            c, source = paper_checkpoint_interval(method, int(N), int(r)), "paper"
        except ValueError:
            source = "analytic"
            # T_f = mean failures between restarts × m: μ(N, r) for a stacking layout, the
            # disjoint-set result for replica sets, one failure without redundancy.
            m = method_spec(method)
            failures = (mu_closed if m.layout else replication_mu if m.redundancy
                        else (lambda N, r: 1.0))
            mtbf = config.system_mtbf_s * float(failures(int(N), int(r)))
            c = analytic_checkpoint_interval(mtbf, config.step_s(1), config)
    else:
        try:
            c = int(ckpt_steps)
        except (TypeError, ValueError):
            raise ValueError(f"ckpt_steps must be an integer >= 1, 'paper' or 'none', got "
                             f"{ckpt_steps!r}") from None
    extra = {} if failure_seed is None else {"failure_seed": int(failure_seed)}
    extra.update({k: v for k, v in sim_extra.items() if v is not None})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an unfinished run: completed=False
        res = simulate(method, int(N), int(r), c, config, seed=int(seed), layout=layout,
                       exact_patch=_as_bool("exact_patch", exact_patch), max_wall_s=max_wall_s,
                       **extra)
    out = {k: v for k, v in res.as_dict().items() if k not in ("method", "N", "r", "ckpt_steps")}
    return {**out, "ckpt_steps": c, "ckpt_source": source}
