"""Figures of notebook 65 (issue 16): clusters of 100k–2M GPUs, simulator run time against N."""

from __future__ import annotations

from typing import Any

import numpy as np

from spare_lib.figures.style import COLUMN_IN, METHOD_STYLE, PAGE_IN

_LABELS = {"spare": "SPARe+CKPT", "rep": "Rep+CKPT", "ckpt": "CKPT-only"}


def _style(method: str) -> dict[str, Any]:
    st = METHOD_STYLE.get(_LABELS[method], {}) if isinstance(METHOD_STYLE, dict) else {}
    return dict(st)


#: Issue 16's run-time targets for a 10,000-step run: (N, seconds).
RUNTIME_TARGETS = ((1_000, 0.1), (10_000, 1.0), (100_000, 10.0))


def make_runtime_scaling(data: Any) -> Any:
    """Run time of one simulated 10,000-step run against N, log-log: the direct per-stack loop
    against the event-driven barrier, with issue 16's targets as open markers.

    Parameters
    ----------
    data : DataFrame or dict
        Columns 'N', 'direct_s' and 'sampled_s' (seconds, nan where not run) and 'steps'
        (one value), as ``benchmarks/bench_scale.py --csv`` writes them.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.5))
    N = np.asarray(data["N"], float)
    for key, label, mk in (("direct_s", "direct (every group, every stack)", "s"),
                           ("sampled_s", "event-driven barrier", "o")):
        y = np.asarray(data[key], float)
        ok = np.isfinite(y)
        ax.loglog(N[ok], y[ok], marker=mk, label=label)
    tn, ts = zip(*RUNTIME_TARGETS, strict=True)
    ax.loglog(tn, ts, linestyle="none", marker="v", mfc="none", color="0.3", label="target")
    steps = np.asarray(data["steps"]).ravel()[0]
    ax.set_xlabel("data-parallel groups N")
    ax.set_ylabel(f"run time, {int(steps):,} steps (s)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def make_scale_ttt(best: Any) -> Any:
    """TTT/T0 of the best SPARe+CKPT, Rep+CKPT and CKPT-only run per cluster, two panels.

    Parameters
    ----------
    best : DataFrame
        Columns 'study' ('a' GPUs at 1,000 per group, 'b' 1M GPUs, group size varied), 'gpus',
        'gpus_per_group', 'method', 'r', 'ttt_mean', 'ttt_lo', 'ttt_hi'.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(PAGE_IN, 2.5))
    panels = (("a", "gpus", "GPUs (1,000 per group)"), ("b", "gpus_per_group",
                                                          "GPUs per group (1M GPUs)"))
    for ax, (study, xcol, xlabel) in zip(axes, panels, strict=True):
        sub = best[best["study"] == study]
        for method in ("spare", "rep", "ckpt"):
            m = sub[sub["method"] == method].sort_values(xcol)
            if m.empty:
                continue
            y = m["ttt_mean"].to_numpy()
            err = np.vstack([y - m["ttt_lo"].to_numpy(), m["ttt_hi"].to_numpy() - y])
            ax.errorbar(m[xcol], y, yerr=err, capsize=2, label=_LABELS[method],
                        **{"marker": "o", **_style(method)})
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("time-to-train / T0")
        ax.set_title(f"({study})", loc="left", fontsize="medium")
    axes[0].legend(fontsize="small")
    fig.tight_layout()
    return fig


def make_r_star_law(table: Any) -> Any:
    """Simulated optimal redundancy r* against N with the law r* ≈ log2 N + 0.83.

    Parameters
    ----------
    table : DataFrame
        Columns 'N', 'r_star' (simulated argmin of mean TTT/T0), 'r_lo', 'r_hi' (the r whose
        mean is within two standard errors of the best).
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.4))
    t = table.sort_values("N")
    N = t["N"].to_numpy(float)
    y = t["r_star"].to_numpy(float)
    err = np.vstack([y - t["r_lo"].to_numpy(float), t["r_hi"].to_numpy(float) - y])
    ax.errorbar(N, y, yerr=err, fmt="o", capsize=2, label="simulated r* (tie range)")
    grid = np.geomspace(N.min(), N.max(), 50)
    ax.plot(grid, np.log2(grid) + 0.833, "--", label="log2 N + 0.83")
    ax.set_xscale("log")
    ax.set_xlabel("data-parallel groups N")
    ax.set_ylabel("optimal redundancy r*")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


__all__ = ["make_r_star_law", "make_runtime_scaling", "make_scale_ttt"]
