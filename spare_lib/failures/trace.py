"""Fault traces: one tidy table of fault intervals per node, and loaders for the real logs.

A :class:`FaultTrace` holds one row per fault (``node, start_s, end_s, cause, domain``), times in
seconds from the start of the observation window, plus what is needed to turn counts into rates:
the number of nodes observed (including nodes that never failed) and the window length.

Loaders (:func:`load_trace`) read the three public datasets (see ``../shared/data/README.md``) and a
generic CSV. They are strict: malformed input raises ``ValueError`` naming the row and column;
rows left out on purpose are counted in :attr:`FaultTrace.skipped`; nothing is dropped silently.
"""

from __future__ import annotations

import json
import lzma
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from spare_lib._util.validate import check_int, check_positive
from spare_lib.failures.data import DATASETS, data_path

__all__ = ["FORMATS", "STEPFUN_N_SERVERS", "TITAN_N_NODES", "TIME_UNITS_S", "FaultTrace", "load_trace"]

FORMATS = ("stepfun", "titan", "lanl", "csv")
#: servers covered by the StepFun trace (231 of them have faults); from the dataset's README.
STEPFUN_N_SERVERS = 400
#: compute nodes (one GPU each) of Titan, from the SC'20 paper / dataset README.
TITAN_N_NODES = 18_688
#: seconds per unit accepted by ``time_unit``.
TIME_UNITS_S = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
COLUMNS = ("node", "start_s", "end_s", "cause", "domain")
_LANL_CAUSES = ("Facilities", "Hardware", "Human Error", "Network", "Undetermined", "Software")
_LANL_TIME_FORMATS = ("%m/%d/%Y %H:%M", "%m/%d/%y %H:%M")
_FORMAT_FILES = {"stepfun": "fault_trace.json", "titan": "gc_full.csv",
                 "lanl": "LA-UR-05-7318-failure-data-1996-2005.csv.xz"}


@dataclass(repr=False)
class FaultTrace:
    """Fault intervals of a cluster observed over a window.

    Attributes
    ----------
    faults : pandas.DataFrame
        One row per fault, sorted by ``start_s``: ``node`` (str), ``start_s`` and ``end_s``
        (float seconds from the window start; ``end_s`` is NaN when the repair time is unknown or
        the fault is still open at the window end), ``cause`` and ``domain`` (str or None).
    n_nodes : int
        Nodes (servers) observed, including those that never failed. At least the number of
        distinct nodes in ``faults``.
    window_s : float
        Length of the observation window, seconds; every ``start_s`` lies in ``[0, window_s]``.
    gpus_per_node : int or None
        GPUs per node (8 for StepFun, 1 for Titan, unknown (None) for LANL unless given).
    source : str
        Where the trace came from (format and file).
    skipped : dict[str, int]
        Input rows left out on purpose, by reason (e.g. Titan placements that did not fail).
    overlaps : int
        Derived: faults that start on a node while an earlier fault of that node is still open
        (faults with unknown end count as instantaneous for this).
    n_open : int
        Derived: faults with unknown end (``end_s`` NaN).
    origin : pandas.Timestamp or None
        Absolute time of ``start_s == 0`` when the log has calendar times.
    """

    faults: pd.DataFrame
    n_nodes: int
    window_s: float
    gpus_per_node: int | None = None
    source: str = ""
    skipped: dict[str, int] = field(default_factory=dict)
    origin: pd.Timestamp | None = None
    overlaps: int = field(init=False, default=0)
    n_open: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        missing = [c for c in COLUMNS if c not in self.faults.columns]
        if missing:
            raise ValueError(f"faults is missing columns {missing}; required {list(COLUMNS)}")
        f = self.faults.loc[:, list(COLUMNS)].copy()
        f["node"] = f["node"].astype(str)
        f["start_s"] = f["start_s"].astype(np.float64)
        f["end_s"] = f["end_s"].astype(np.float64)
        for col in ("cause", "domain"):
            f[col] = f[col].astype(object).where(f[col].notna(), None)
        f = f.sort_values(["start_s", "node"], kind="stable").reset_index(drop=True)
        self.faults = f
        self.window_s = check_positive("window_s", self.window_s)
        n_seen = int(f["node"].nunique())
        self.n_nodes = check_int("n_nodes", self.n_nodes, lo=max(1, n_seen))
        if self.gpus_per_node is not None:
            self.gpus_per_node = check_int("gpus_per_node", self.gpus_per_node, lo=1)
        start, end = f["start_s"].to_numpy(), f["end_s"].to_numpy()
        if not np.all(np.isfinite(start)) or np.any(start < 0) or np.any(start > self.window_s):
            raise ValueError(f"faults.start_s must be finite and in [0, window_s] = [0, {self.window_s}]")
        if np.any(end < start):  # NaN compares False
            raise ValueError("faults.end_s must be >= start_s where known")
        self.n_open = int(np.isnan(end).sum())
        self.overlaps = _count_overlaps(f)
        self.skipped = {str(k): int(v) for k, v in self.skipped.items()}

    # ------------------------------------------------------------------ derived quantities
    @property
    def label(self) -> str:
        """The source without machine paths ('stepfun:/a/b/x.json' -> 'stepfun'), for reports."""
        head, sep, _tail = str(self.source).partition(":")
        return head if sep else (str(self.source).rsplit("/", 1)[-1] or "trace")

    @property
    def n_faults(self) -> int:
        """Number of faults."""
        return len(self.faults)

    @property
    def start_s(self) -> np.ndarray:
        """Fault start times, sorted, seconds."""
        return self.faults["start_s"].to_numpy()

    def node_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """Integer code per fault in ``0..k-1`` and the ``k`` distinct node names."""
        codes, names = pd.factorize(self.faults["node"], sort=True)
        return codes.astype(np.int64), np.asarray(names, dtype=object)

    def to_csv(self, path: str | Path, time_unit: str = "s") -> Path:
        """Write the generic CSV format (``node,start,end,cause,domain``) read by ``load_trace``."""
        scale = _check_unit(time_unit)
        out = pd.DataFrame({"node": self.faults["node"], "start": self.faults["start_s"] / scale,
                            "end": self.faults["end_s"] / scale, "cause": self.faults["cause"],
                            "domain": self.faults["domain"]})
        path = Path(path)
        out.to_csv(path, index=False, float_format="%.17g")
        return path

    def __repr__(self) -> str:
        gpn = "?" if self.gpus_per_node is None else self.gpus_per_node
        return (f"FaultTrace({self.n_faults} faults on {self.faults['node'].nunique()}/{self.n_nodes} "
                f"nodes x {gpn} GPUs, window {self.window_s / 86400:.1f} d, overlaps={self.overlaps}, "
                f"open={self.n_open}, skipped={self.skipped}, source={self.source!r})")


def _count_overlaps(f: pd.DataFrame) -> int:
    """Faults starting on a node before every earlier fault of that node has ended.

    A fault with unknown end (NaN) counts as instantaneous here: it cannot make a later one overlap.
    """
    if len(f) < 2:
        return 0
    g = f.sort_values(["node", "start_s"], kind="stable")
    end = g["end_s"].fillna(g["start_s"]).to_numpy()
    codes = pd.factorize(g["node"])[0]
    prev_max = pd.Series(end).groupby(codes).cummax().groupby(codes).shift()
    return int((g["start_s"].to_numpy() < prev_max.to_numpy()).sum())


def _check_unit(time_unit: str) -> float:
    if time_unit not in TIME_UNITS_S:
        raise ValueError(f"time_unit must be one of {list(TIME_UNITS_S)}, got {time_unit!r}")
    return TIME_UNITS_S[time_unit]


def _row_error(file: Path, row: int, column: str, msg: str) -> ValueError:
    return ValueError(f"{file.name}: row {row}, column {column!r}: {msg}")


def _read_text_csv(file: Path, required: tuple[str, ...]) -> pd.DataFrame:
    """Read a CSV (maybe .xz) as strings; empty cells become ''. Checks the header."""
    try:
        df = pd.read_csv(file, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{file.name}: file is empty") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"{file.name}: malformed CSV: {exc}") from None
    except (EOFError, lzma.LZMAError) as exc:
        raise ValueError(f"{file.name}: compressed file is truncated or corrupt ({exc})") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"{file.name}: missing column(s) {missing}; found {list(df.columns)}")
    return df.fillna("")


def _line(lines: np.ndarray | None, i: int) -> int:
    """CSV line number of the ``i``-th value (header = line 1), or of row ``lines[i]`` of the file."""
    return int(lines[i]) + 2 if lines is not None else i + 2


def _parse_times(file: Path, values: pd.Series, column: str, formats: tuple[str, ...],
                 allow_empty: bool = False, lines: np.ndarray | None = None) -> pd.Series:
    """Parse date-time strings; error names the first bad row (CSV line number, header = line 1)."""
    out = pd.to_datetime(values, format=formats[0], errors="coerce")
    for fmt in formats[1:]:
        todo = out.isna() & (values != "")
        if todo.any():
            out[todo] = pd.to_datetime(values[todo], format=fmt, errors="coerce")
    bad = out.isna() & ((values != "") | (not allow_empty))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise _row_error(file, _line(lines, i), column,
                         f"unparseable time {values.iloc[i]!r} (expected {formats[0]})")
    return out


def _parse_numbers(file: Path, values: pd.Series, column: str, allow_empty: bool,
                   lines: np.ndarray | None = None, what: str = "time") -> np.ndarray:
    num = pd.to_numeric(values.where(values != "", np.nan), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(num) & ((values != "").to_numpy() | (not allow_empty))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _row_error(file, _line(lines, i), column,
                         f"unparseable {what} {values.iloc[i]!r} (expected a number)")
    return num


def _default_nodes(n_nodes: int | None, known: int, observed: int, what: str) -> int:
    if n_nodes is not None:
        return check_int("n_nodes", n_nodes, lo=max(1, observed))
    if observed > known:
        raise ValueError(f"{observed} distinct nodes observed but {what} has {known}; pass n_nodes=")
    return known


# ---------------------------------------------------------------------------------- StepFun
def _load_stepfun(file: Path, n_nodes: int | None, gpus_per_node: int | None,
                  window_s: float | None) -> FaultTrace:
    text = file.read_text()
    if not text.strip():
        raise ValueError(f"{file.name}: file is empty")
    try:
        events = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file.name}: invalid or truncated JSON at line {exc.lineno}, column "
                         f"{exc.colno}: {exc.msg}") from None
    if not isinstance(events, list) or not events:
        raise ValueError(f"{file.name}: expected a non-empty JSON list of events")
    open_faults: dict[str, deque] = {}
    rows: list[tuple[str, float, float, str | None]] = []
    t_max = 0.0
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise _row_error(file, i, "<event>", f"expected a JSON object, got {type(ev).__name__}")
        for key in ("node_id", "event_time", "event_type"):
            if key not in ev:
                raise _row_error(file, i, key, "missing")
        t = ev["event_time"]
        if isinstance(t, bool) or not isinstance(t, int | float) or not np.isfinite(t) or t < 0:
            raise _row_error(file, i, "event_time", f"unparseable time {t!r} (expected days >= 0)")
        t_s = float(t) * 86400.0
        t_max = max(t_max, t_s)
        node = str(ev["node_id"])
        ftype = ev.get("fault_type")
        cause = ftype.get("Class") if isinstance(ftype, dict) else None
        kind = ev["event_type"]
        if kind == "fault_start":
            open_faults.setdefault(node, deque()).append((i, t_s, cause))
        elif kind == "fault_end":
            queue = open_faults.get(node)
            if not queue:
                raise _row_error(file, i, "event_type", f"fault_end with no open fault_start on node {node}")
            j, t0, cause0 = queue.popleft()  # first in, first out
            if t_s < t0:
                raise _row_error(file, i, "event_time", f"fault_end at {t} d is before its fault_start "
                                 f"(row {j}) at {t0 / 86400} d")
            rows.append((node, t0, t_s, cause0))
        else:
            raise _row_error(file, i, "event_type", f"unknown value {kind!r} (fault_start/fault_end)")
    for node, queue in open_faults.items():
        rows.extend((node, t0, np.nan, c) for _, t0, c in queue)
    faults = pd.DataFrame(rows, columns=["node", "start_s", "end_s", "cause"])
    faults["domain"] = None
    nodes = _default_nodes(n_nodes, STEPFUN_N_SERVERS, faults["node"].nunique(), "the StepFun trace")
    return FaultTrace(faults, nodes, window_s or t_max, 8 if gpus_per_node is None else gpus_per_node,
                      source=f"stepfun:{file}")


# ---------------------------------------------------------------------------------- Titan
def _load_titan(file: Path, n_nodes: int | None, gpus_per_node: int | None,
                window_s: float | None) -> FaultTrace:
    df = _read_text_csv(file, ("SN", "location", "insert", "remove", "event"))
    if df.empty:
        raise ValueError(f"{file.name}: no rows")
    fmt = ("%Y-%m-%d %H:%M:%S",)
    remove = _parse_times(file, df["remove"], "remove", fmt)
    insert = _parse_times(file, df["insert"], "insert", fmt, allow_empty=True)
    early = (remove < insert).to_numpy()
    if early.any():
        i = int(np.flatnonzero(early)[0])
        raise _row_error(file, i + 2, "remove", f"removal {df['remove'].iloc[i]} is before its insertion "
                         f"{df['insert'].iloc[i]}")
    event = df["event"].str.strip()
    unknown = ~event.isin(["", "DBE", "OTB"])
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise _row_error(file, i + 2, "event", f"unknown value {event.iloc[i]!r} (DBE, OTB or empty)")
    failed = (event != "").to_numpy()
    origin = min(insert.min(), remove.min())
    start = (remove[failed] - origin).dt.total_seconds().to_numpy()
    loc = df["location"][failed]
    faults = pd.DataFrame({"node": loc.to_numpy(), "start_s": start, "end_s": np.nan,
                           "cause": event[failed].to_numpy(),
                           "domain": loc.str.extract(r"^(c\d+-\d+)", expand=False).to_numpy()})
    nodes = _default_nodes(n_nodes, TITAN_N_NODES, faults["node"].nunique(), "Titan")
    win = window_s or (remove.max() - origin).total_seconds()
    skipped = {"placement without failure event": int((~failed).sum())}
    return FaultTrace(faults, nodes, win, 1 if gpus_per_node is None else gpus_per_node,
                      source=f"titan:{file}", skipped=skipped, origin=origin)


# ---------------------------------------------------------------------------------- LANL
def _load_lanl(file: Path, system: int | None, n_nodes: int | None, gpus_per_node: int | None,
               window_s: float | None) -> FaultTrace:
    df = _read_text_csv(file, ("System", "nodes", "nodenum", "Prob Started", "Prob Fixed"))
    if df.empty:
        raise ValueError(f"{file.name}: no rows")
    sys_id = _parse_numbers(file, df["System"], "System", allow_empty=False, what="number").astype(np.int64)
    skipped: dict[str, int] = {}
    keep = np.ones(len(df), dtype=bool)
    if system is not None:
        system = check_int("system", system)
        if system not in set(sys_id.tolist()):
            raise ValueError(f"system must be one of {sorted(set(sys_id.tolist()))}, got {system}")
        keep = sys_id == system
        skipped["other system"] = int((~keep).sum())
    no_node = keep & (df["nodenum"] == "").to_numpy()
    if no_node.any():
        skipped["missing nodenum"] = int(no_node.sum())
    keep &= ~no_node
    sel = df[keep].reset_index(drop=True)
    lines = np.flatnonzero(keep)  # original row positions, for error messages
    sel_sys = sys_id[keep]
    started = _parse_times(file, sel["Prob Started"], "Prob Started", _LANL_TIME_FORMATS, lines=lines)
    fixed = _parse_times(file, sel["Prob Fixed"], "Prob Fixed", _LANL_TIME_FORMATS, lines=lines)
    nodenum = _parse_numbers(file, sel["nodenum"], "nodenum", allow_empty=False, lines=lines,
                             what="number").astype(np.int64)
    early = (fixed < started).to_numpy()
    if early.any():
        i = int(np.flatnonzero(early)[0])
        raise _row_error(file, int(lines[i]) + 2, "Prob Fixed", f"problem fixed {sel['Prob Fixed'].iloc[i]} "
                         f"before it started {sel['Prob Started'].iloc[i]}")
    if system is None:
        node = [f"{s}:{n}" for s, n in zip(sel_sys, nodenum, strict=True)]
    else:
        node = [str(n) for n in nodenum]
    cause_cols = [c for c in _LANL_CAUSES if c in sel.columns]
    cause = np.full(len(sel), "Unrecorded", dtype=object)
    for col in reversed(cause_cols):  # first non-empty category wins
        cause = np.where(sel[col].to_numpy() != "", col, cause)
    if len(sel) == 0:
        raise ValueError(f"{file.name}: no fault rows left (skipped: {skipped})")
    origin = started.min()
    faults = pd.DataFrame({"node": node, "start_s": (started - origin).dt.total_seconds().to_numpy(),
                           "end_s": (fixed - origin).dt.total_seconds().to_numpy(), "cause": cause,
                           "domain": [str(s) for s in sel_sys]})
    # nodes: the `nodes` column per system (first value), at least the nodes seen in the log
    per_sys = pd.DataFrame({"sys": sys_id, "nodes": pd.to_numeric(df["nodes"], errors="coerce")})
    declared = per_sys[np.isin(sys_id, np.unique(sel_sys))].groupby("sys")["nodes"].max()
    seen = faults.groupby(faults["domain"].astype(int))["node"].nunique()
    total = int(sum(max(int(np.nan_to_num(declared.get(s, 0))), int(seen.get(s, 0))) for s in seen.index))
    nodes = check_int("n_nodes", n_nodes, lo=faults["node"].nunique()) if n_nodes is not None else total
    win = window_s or float(max(faults["end_s"].max(), faults["start_s"].max()))
    if win <= 0:
        raise ValueError(f"{file.name}: cannot infer the observation window (all times equal); "
                         f"pass window_s=")
    return FaultTrace(faults, nodes, win, gpus_per_node, source=f"lanl:{file}", skipped=skipped,
                      origin=origin)


# ---------------------------------------------------------------------------------- generic CSV
def _load_csv(file: Path, time_unit: str, n_nodes: int | None, gpus_per_node: int | None,
              window_s: float | None) -> FaultTrace:
    scale = _check_unit(time_unit)
    df = _read_text_csv(file, ("node", "start", "end"))
    start = _parse_numbers(file, df["start"], "start", allow_empty=False) * scale
    end = _parse_numbers(file, df["end"], "end", allow_empty=True) * scale
    if (df["node"] == "").any():
        i = int(np.flatnonzero((df["node"] == "").to_numpy())[0])
        raise _row_error(file, i + 2, "node", "empty node name")
    neg = start < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise _row_error(file, i + 2, "start", f"negative time {df['start'].iloc[i]!r} (times count from "
                         f"the window start)")
    early = end < start
    if early.any():
        i = int(np.flatnonzero(early)[0])
        raise _row_error(file, i + 2, "end", f"end {df['end'].iloc[i]} is before start {df['start'].iloc[i]}")
    if len(df) == 0 and window_s is None:
        raise ValueError(f"{file.name}: no fault rows; pass window_s= and n_nodes= to load an empty trace")

    def text(col: str) -> np.ndarray:
        if col not in df.columns:
            return np.full(len(df), None, dtype=object)
        v = df[col].to_numpy(dtype=object)
        return np.where(v == "", None, v)

    faults = pd.DataFrame({"node": df["node"].to_numpy(), "start_s": start, "end_s": end,
                           "cause": text("cause"), "domain": text("domain")})
    n_seen = int(faults["node"].nunique())
    nodes = check_int("n_nodes", n_nodes, lo=max(1, n_seen)) if n_nodes is not None else max(1, n_seen)
    win = window_s or float(np.nanmax(np.concatenate([start, end, [0.0]])))
    if win <= 0:
        raise ValueError(f"{file.name}: cannot infer the observation window (all times 0); pass window_s=")
    return FaultTrace(faults, nodes, win, gpus_per_node, source=f"csv:{file}")


# ---------------------------------------------------------------------------------- entry point
def _resolve_file(path: str | Path, fmt: str | None) -> tuple[Path, str]:
    if isinstance(path, str) and path in DATASETS and not Path(path).exists():
        path = data_path(path)
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"path does not exist: {p}")
    if p.is_dir():
        candidates = [fmt] if fmt is not None else list(_FORMAT_FILES)
        for f in candidates:
            if f in _FORMAT_FILES and (p / _FORMAT_FILES[f]).is_file():
                return p / _FORMAT_FILES[f], f
        raise ValueError(f"path {p} is a folder without a known trace file "
                         f"({', '.join(_FORMAT_FILES.values())}); pass the file and format=")
    if fmt is None:
        name = p.name.lower()
        if name.endswith(".json"):
            fmt = "stepfun"
        elif name == "gc_full.csv":
            fmt = "titan"
        elif name.startswith("la-ur") or name.endswith(".csv.xz"):
            fmt = "lanl"
        elif name.endswith(".csv"):
            fmt = "csv"
        else:
            raise ValueError(f"cannot infer the format of {p.name}; pass format= one of {list(FORMATS)}")
    return p, fmt


def load_trace(path: str | Path, format: str | None = None, *, time_unit: str = "s",
               system: int | None = None, gpus_per_node: int | None = None, n_nodes: int | None = None,
               window_s: float | None = None) -> FaultTrace:
    """Read a fault log into a :class:`FaultTrace`.

    Parameters
    ----------
    path : str or Path
        A file, a dataset folder, or a dataset name of :func:`~spare_lib.failures.data.data_path`
        (``'stepfun-infinitehbd'``, ``'titan-gpu-life'``, ``'lanl-cfdr'``).
    format : {'stepfun', 'titan', 'lanl', 'csv'} or None
        ``None`` infers it from the file name. ``'stepfun'``: ``fault_trace.json`` (event times in
        days; starts and ends of a node are paired first-in-first-out). ``'titan'``:
        ``gc_full.csv``; a fault is a GPU placement removed with ``event`` DBE or OTB, at its
        ``remove`` time, on node ``location`` (the slot, which is what a job loses; the serial
        number ``SN`` moves between slots). ``'lanl'``: the CFDR ``.csv.xz``. ``'csv'``: columns
        ``node,start,end[,cause,domain]``, numeric times in ``time_unit`` from the window start,
        empty ``end`` for an open fault.
    time_unit : {'s', 'min', 'h', 'd'}
        Unit of the generic CSV's times.
    system : int, optional
        LANL only: keep one system (e.g. 20); otherwise all systems, nodes named ``"<system>:<node>"``.
    gpus_per_node : int, optional
        Overrides the dataset default (StepFun 8, Titan 1, LANL/CSV unknown).
    n_nodes : int, optional
        Nodes observed. Defaults: StepFun 400 (the trace's server count; only 231 have faults),
        Titan 18,688, LANL the ``nodes`` column summed over the selected systems, CSV the
        distinct nodes in the file.
    window_s : float, optional
        Observation window length. Default: time of the last event after the origin (StepFun:
        origin at event time 0; Titan: earliest insert/remove; LANL: earliest ``Prob Started``;
        CSV: 0).

    Returns
    -------
    FaultTrace

    Raises
    ------
    ValueError
        Unknown format, empty file, truncated JSON/CSV, unparseable time, an end before its start,
        an end without a start; the message names the row (CSV: line number, header = 1; JSON:
        0-based event index) and the column.
    FileNotFoundError
        If the path does not exist (or a dataset name cannot be resolved).

    Notes
    -----
    Titan has no repair times: ``end_s`` is NaN for every fault (counted in ``n_open``). StepFun
    faults still open at the end would also get NaN (there are none). The loaders are strict
    rather than forgiving so that counts in summaries can be trusted.
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)} or None, got {format!r}")
    _check_unit(time_unit)
    if gpus_per_node is not None:
        check_int("gpus_per_node", gpus_per_node, lo=1)
    if window_s is not None:
        window_s = check_positive("window_s", window_s)
    if system is not None and format not in (None, "lanl"):
        raise ValueError(f"system is only meaningful for format='lanl', got format={format!r}")
    file, fmt = _resolve_file(path, format)
    if file.stat().st_size == 0:
        raise ValueError(f"{file.name}: file is empty")
    if fmt == "stepfun":
        return _load_stepfun(file, n_nodes, gpus_per_node, window_s)
    if fmt == "titan":
        return _load_titan(file, n_nodes, gpus_per_node, window_s)
    if fmt == "lanl":
        return _load_lanl(file, system, n_nodes, gpus_per_node, window_s)
    return _load_csv(file, time_unit, n_nodes, gpus_per_node, window_s)

