"""The one writer of committed result files (``data/results/*.csv`` and ``*.json``).

A rerun of ``make figures`` on the same code must leave ``git status`` clean, so every result
file is written the same way:

* **floats at** :data:`SIG_DIGITS` **significant digits** (``%.12g``): differences at the level of
  the math library (the 15th–17th digit of a Weibull draw or a ``lgamma``) do not show, while
  every number a figure, a notebook or a doc quotes keeps far more digits than it prints;
* **rows in a stated order**: ``sort_by`` sorts the rows by those columns (stable), so the
  order never depends on which worker finished first;
* **no wall times**: columns or keys that measure the machine rather than the model
  (:data:`WALL_TIME_KEYS`: ``elapsed_s``, ``wall_s``, ...) are removed from what is written and
  appended to an uncommitted run log, ``_build/run_log.jsonl`` (:data:`RUN_LOG`), with the file
  they came from. A test checks that no committed results file has such a column.

Usage::

    from spare_lib.figures import write_results
    write_results(table, cfg.results_dir / "scale_best.csv", sort_by=["study", "gpus"])
    write_results(plan.to_dict(), cfg.results_dir / "real_failures_plan.json")
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: Significant digits of every float written to a committed result file.
SIG_DIGITS = 12
#: Names of columns / keys that hold wall-clock measurements (never committed).
WALL_TIME_KEYS = frozenset({"elapsed_s", "wall_s", "wall_time_s", "runtime_s", "seconds_taken"})
#: Uncommitted log of the wall times removed from result files (``_build/`` is gitignored).
RUN_LOG = Path(__file__).resolve().parents[2] / "_build" / "run_log.jsonl"

_FLOAT_FORMAT = f"%.{SIG_DIGITS}g"


def is_wall_time_key(name: object) -> bool:
    """True for a column / key name that measures wall-clock time (see :data:`WALL_TIME_KEYS`)."""
    if isinstance(name, tuple):  # MultiIndex columns
        return any(is_wall_time_key(part) for part in name)
    s = str(name)  # (``max_wall_s`` is a cap on simulated time, an input: not a wall time)
    return s in WALL_TIME_KEYS or s.endswith("_elapsed_s")


def round_sig(x: float, digits: int = SIG_DIGITS) -> float:
    """``x`` rounded to ``digits`` significant digits (nan and ±inf unchanged).

    >>> round_sig(64.46209981537879)
    64.4620998154
    """
    if not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def _strip(obj: Any, found: dict[str, Any], path: str = "") -> Any:
    """``obj`` with floats rounded and wall-time keys removed (collected into ``found``)."""
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if is_wall_time_key(k):
                found[f"{path}{k}"] = _strip(v, {}, "")
            else:
                out[k] = _strip(v, found, f"{path}{k}.")
        return out
    if isinstance(obj, (list, tuple)):
        return [_strip(v, found, f"{path}{i}.") for i, v in enumerate(obj)]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return round_sig(float(obj))
    if isinstance(obj, np.ndarray):
        return _strip(obj.tolist(), found, path)
    return obj


def _log_wall_times(path: Path, found: Mapping[str, Any], run_log: Path | None) -> None:
    if not found or run_log is None:
        return
    run_log.parent.mkdir(parents=True, exist_ok=True)
    entry = {"file": path.name, "written_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
             "wall_times": found}
    with run_log.open("a") as fh:
        fh.write(json.dumps(entry, default=str) + "\n")


def write_results(data: pd.DataFrame | Mapping[str, Any] | Sequence[Any], path: str | Path, *,
                  sort_by: Sequence[str] | None = None, index: bool = False,
                  run_log: Path | None = RUN_LOG) -> Path:
    """Write a result table (CSV) or record (JSON) reproducibly; return the path.

    Parameters
    ----------
    data : DataFrame, mapping or sequence
        A DataFrame goes to CSV (``path`` ending in ``.csv``) or to JSON records (``.json``);
        a mapping or list goes to JSON (``indent=1``, ``allow_nan=False``: nan becomes null).
    path : path
        The file; its folder is created.
    sort_by : column names or None
        Sort the rows by these columns (stable) before writing; None keeps the given order
        (which must then not depend on worker completion order).
    index : bool
        Write the DataFrame's index as well (for tables whose index is the key, e.g. a pivot).
    run_log : path or None
        Where removed wall-time columns / keys are logged (None: dropped silently).

    Raises
    ------
    ValueError
        If ``path`` ends neither in ``.csv`` nor in ``.json``, or a ``sort_by`` column is missing.
    """
    path = Path(path)
    if path.suffix not in (".csv", ".json"):
        raise ValueError(f"path must end in .csv or .json, got {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    found: dict[str, Any] = {}
    if isinstance(data, pd.DataFrame):
        df = data
        wall = [c for c in df.columns if is_wall_time_key(c)]
        if wall:
            found = {str(c): df[c].tolist() for c in wall}
            df = df.drop(columns=wall)
        if sort_by:
            missing = [c for c in sort_by if c not in df.columns]
            if missing:
                raise ValueError(f"sort_by names columns {missing} that are not in the table "
                                 f"(columns: {list(df.columns)})")
            df = df.sort_values(list(sort_by), kind="stable")
            if not index:
                df = df.reset_index(drop=True)
        if path.suffix == ".csv":
            df.to_csv(path, index=index, float_format=_FLOAT_FORMAT, lineterminator="\n")
        else:
            records = json.loads(df.to_json(orient="records", double_precision=15))
            path.write_text(json.dumps(_strip(records, {}), indent=1, allow_nan=False) + "\n")
    else:
        if path.suffix != ".json":
            raise ValueError(f"a mapping or list is written as JSON, got path {path.name!r}")
        clean = _nan_to_none(_strip(data, found))
        path.write_text(json.dumps(clean, indent=1, allow_nan=False, default=str) + "\n")
    _log_wall_times(path, found, run_log)
    return path


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj
