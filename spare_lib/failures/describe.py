"""Describe a fault trace: rates, MTBF, simultaneous-fault clusters, gaps, repairs, causes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from spare_lib._util.validate import check_positive
from spare_lib.failures.trace import FaultTrace

__all__ = ["QUANTILES", "TraceSummary", "fault_instants", "instant_labels", "summary"]

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def instant_labels(start_s: np.ndarray, tolerance_s: float) -> np.ndarray:
    """Instant index of each of the sorted times ``start_s``.

    A new instant begins where the gap to the previous time exceeds ``tolerance_s`` (single
    linkage: a chain of faults each within the tolerance of the previous one is one instant, even
    if its first and last are further apart).
    """
    t = np.asarray(start_s, dtype=np.float64)
    if t.size == 0:
        return np.zeros(0, dtype=np.int64)
    if np.any(np.diff(t) < 0):
        raise ValueError("start_s must be sorted")
    return np.concatenate([[0], np.cumsum(np.diff(t) > tolerance_s)]).astype(np.int64)


def fault_instants(trace: FaultTrace, tolerance_s: float = 1.0) -> pd.DataFrame:
    """Group faults that start within ``tolerance_s`` of each other into instants.

    Parameters
    ----------
    trace : FaultTrace
    tolerance_s : float, default 1.0
        Faults whose starts are at most this far apart (chained) form one instant. 0 merges only
        identical start times.

    Returns
    -------
    pandas.DataFrame
        One row per instant, sorted by time: ``time_s`` (first start of the instant), ``size``
        (faults in it) and ``n_distinct_nodes``.

    Examples
    --------
    >>> tr = load_trace("stepfun-infinitehbd")  # doctest: +SKIP
    >>> fault_instants(tr)["size"].value_counts().sort_index().to_dict()  # doctest: +SKIP
    {1: 499, 2: 20, 3: 5, 4: 2, 6: 1, 8: 2}
    """
    tol = check_positive("tolerance_s", tolerance_s, allow_zero=True)
    f = trace.faults
    labels = instant_labels(f["start_s"].to_numpy(), tol)
    grouped = pd.DataFrame({"i": labels, "t": f["start_s"].to_numpy(), "node": f["node"].to_numpy()})
    out = grouped.groupby("i").agg(time_s=("t", "min"), size=("t", "size"),
                                   n_distinct_nodes=("node", "nunique"))
    return out.reset_index(drop=True)


def _quantiles(x: np.ndarray) -> dict[float, float]:
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return {q: float("nan") for q in QUANTILES}
    return {q: float(v) for q, v in zip(QUANTILES, np.quantile(x, QUANTILES), strict=True)}


class TraceSummary(dict):
    """``dict`` of summary statistics with a readable ``str`` and a :meth:`to_frame` view."""

    def to_frame(self) -> pd.DataFrame:
        """Flatten to a two-column ``DataFrame`` (``statistic``, ``value``); nested dicts use ``a.b`` keys."""
        rows: list[tuple[str, object]] = []

        def walk(prefix: str, value: object) -> None:
            if isinstance(value, dict):
                for k, v in value.items():
                    walk(f"{prefix}.{k}" if prefix else str(k), v)
            else:
                rows.append((prefix, value))

        walk("", dict(self))
        return pd.DataFrame(rows, columns=["statistic", "value"])

    def __str__(self) -> str:
        s = self
        gpn = s["gpus_per_node"]
        hours = 3600.0

        def q(d: dict[float, float], unit: float, name: str) -> str:
            return ", ".join(f"p{int(k * 100)}={v / unit:.3g}" for k, v in d.items()) + f" {name}"

        sizes = ", ".join(f"{n}x{k}" for k, n in s["instant_sizes"].items())
        causes = ", ".join(f"{k} {v}" for k, v in list(s["causes"].items())[:8])
        gpu = "n/a (gpus_per_node unknown)" if gpn is None else f"{s['mtbf_gpu_hours']:,.0f} h"
        lines = [
            f"source            {s['source']}",
            f"nodes             {s['n_nodes']} observed ({s['n_nodes_with_faults']} with faults)"
            f" x {gpn if gpn is not None else '?'} GPUs",
            f"window            {s['window_days']:.1f} d (faults from {s['first_fault_days']:.2f} "
            f"to {s['last_fault_days']:.2f} d)",
            f"faults            {s['n_faults']} ({s['n_open']} with unknown end, "
            f"{s['overlaps']} overlapping)",
            f"rate              {s['faults_per_node_day']:.4g} faults per node-day",
            f"MTBF              per node {s['mtbf_node_hours']:,.0f} h; per GPU {gpu}",
            f"instants          {s['n_instants']} at tolerance {s['tolerance_s']} s: "
            f"sizes {sizes} (count x size)",
            f"gaps (faults)     {q(s['gap_s'], hours, 'h')}; {s['frac_gaps_below_1h']:.1%} below 1 h",
            f"gaps (instants)   {q(s['instant_gap_s'], hours, 'h')}",
            f"repair            {q(s['repair_s'], hours, 'h')}",
            f"causes            {causes}",
        ]
        if s["skipped"]:
            lines.append(f"skipped rows      {s['skipped']}")
        return "\n".join(lines)


def summary(trace: FaultTrace, tolerance_s: float = 1.0) -> TraceSummary:
    """Summary statistics of a fault trace.

    Parameters
    ----------
    trace : FaultTrace
    tolerance_s : float, default 1.0
        Faults starting within this many seconds of each other form one instant (see
        :func:`fault_instants`).

    Returns
    -------
    TraceSummary
        A ``dict`` with: ``n_nodes``, ``n_nodes_with_faults``, ``n_faults``, ``gpus_per_node``,
        ``window_days``, ``first_fault_days``, ``last_fault_days``, ``faults_per_node_day``
        (= faults / (nodes x window)), ``mtbf_node_hours`` (= nodes x window / faults),
        ``mtbf_gpu_hours`` (= ``mtbf_node_hours`` x GPUs per node, i.e. a node fault is charged to
        one of its GPUs; None if GPUs per node is unknown), ``n_instants``, ``instant_sizes``
        ({size: count}), ``gap_s`` / ``instant_gap_s`` (quantiles of gaps between consecutive
        faults / instants, whole cluster), ``frac_gaps_below_1h``, ``repair_s`` (quantiles of
        ``end - start`` where known), ``causes`` ({cause: count}, most frequent first),
        ``overlaps``, ``n_open``, ``skipped``, ``source``, ``tolerance_s``. ``str()`` gives a
        readable report, ``.to_frame()`` a table.
    """
    tol = check_positive("tolerance_s", tolerance_s, allow_zero=True)
    f = trace.faults
    day = 86400.0
    start = f["start_s"].to_numpy()
    n = len(f)
    inst = fault_instants(trace, tol)
    sizes = inst["size"].value_counts().sort_index()
    gaps = np.diff(start)
    node_hours = trace.n_nodes * trace.window_s / 3600.0
    mtbf_node_h = node_hours / n if n else float("inf")
    causes = f["cause"].fillna("(none)").value_counts()
    return TraceSummary(
        source=trace.source,
        n_nodes=trace.n_nodes,
        n_nodes_with_faults=int(f["node"].nunique()),
        n_faults=n,
        gpus_per_node=trace.gpus_per_node,
        window_days=trace.window_s / day,
        first_fault_days=float(start[0] / day) if n else float("nan"),
        last_fault_days=float(start[-1] / day) if n else float("nan"),
        faults_per_node_day=n / (trace.n_nodes * trace.window_s / day),
        mtbf_node_hours=mtbf_node_h,
        mtbf_gpu_hours=None if trace.gpus_per_node is None else mtbf_node_h * trace.gpus_per_node,
        tolerance_s=tol,
        n_instants=len(inst),
        instant_sizes={int(k): int(v) for k, v in sizes.items()},
        gap_s=_quantiles(gaps),
        frac_gaps_below_1h=float(np.mean(gaps < 3600.0)) if gaps.size else float("nan"),
        instant_gap_s=_quantiles(np.diff(inst["time_s"].to_numpy())),
        repair_s=_quantiles((f["end_s"] - f["start_s"]).to_numpy()),
        causes={str(k): int(v) for k, v in causes.items()},
        overlaps=trace.overlaps,
        n_open=trace.n_open,
        skipped=dict(trace.skipped),
    )
