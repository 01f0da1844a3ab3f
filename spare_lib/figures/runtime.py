"""Figures of notebook 40 (exactness of SPARe under real process failures).

``make_<figure>(data) -> Figure`` as everywhere in spare-lab; matplotlib is imported here only,
never by a worker process.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from spare_lib.figures.style import COLUMN_IN, METHOD_STYLE
from spare_lib.runtime.coordinator import TrainingRun

#: Line styles of the three runtime modes (SPARe as in the paper's figures).
MODE_STYLE: dict[str, dict[str, str]] = {
    "failure_free": {"color": "#000000", "linestyle": "-", "label": "failure-free"},
    "spare": {"color": METHOD_STYLE["SPARe"]["color"], "linestyle": "--", "label": "SPARe"},
    "drop": {"color": "#D55E00", "linestyle": ":", "label": "drop (per-step FT-DDP)"},
}

#: Marker of each fault phase in the timeline.
PHASE_MARKER: dict[str, str] = {"before_compute": "v", "compute": "o", "partial": "D",
                                "allreduce": "s", "patch": "^"}


def fault_steps(run: TrainingRun) -> np.ndarray:
    """Steps at which an injected fault hit a live worker (with repetition)."""
    return np.array([e["step"] for e in run.events_of("fault")], dtype=np.int64)


def make_exactness_figure(data: dict[str, Any]) -> Figure:
    """Loss curves of the three modes and max |Δθ| against the failure-free run, per step.

    Parameters
    ----------
    data : dict
        ``{"failure_free": TrainingRun, "spare": TrainingRun, "drop": TrainingRun}``.
    """
    ff, sp, dr = data["failure_free"], data["spare"], data["drop"]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(COLUMN_IN, 4.2), sharex=True,
                                   constrained_layout=True)
    steps = np.arange(ff.params.shape[0])
    for mode, run in (("failure_free", ff), ("drop", dr), ("spare", sp)):
        st = MODE_STYLE[mode]
        ax1.plot(steps, run.eval_loss, color=st["color"], linestyle=st["linestyle"],
                 label=st["label"])
    kills = fault_steps(sp)
    ymin, ymax = ax1.get_ylim()
    ks, counts = np.unique(kills, return_counts=True)
    ax1.plot(ks + 0.5, np.full(ks.size, ymax), linestyle="none", marker="v",
             color="#CC0000", markersize=4, label="worker(s) killed", clip_on=False)
    for k, c in zip(ks, counts, strict=True):
        if c > 1:
            ax1.annotate(f"×{c}", (k + 0.5, ymax), xytext=(3, -4), textcoords="offset points",
                         fontsize=6, color="#CC0000", va="top")
    for e in sp.events_of("restart"):
        ax1.axvline(e["step"] + 0.5, color="#CC0000", linewidth=0.8, alpha=0.6)
        ax1.annotate("wipe-out", (e["step"] + 0.5, ymin), xytext=(3, 3),
                     textcoords="offset points", fontsize=7, color="#CC0000")
    ax1.set_ylabel("evaluation loss")
    ax1.legend(fontsize=7, loc="lower left")

    d_sp = sp.max_abs_param_diff(ff)
    d_dr = dr.max_abs_param_diff(ff)
    st = MODE_STYLE["drop"]
    ax2.plot(steps, d_dr, color=st["color"], linestyle=st["linestyle"], label=st["label"])
    st = MODE_STYLE["spare"]
    exact = "exactly 0 at every step" if not d_sp.any() else f"max {d_sp.max():.1e}"
    ax2.plot(steps, d_sp, color=st["color"], linestyle=st["linestyle"], marker=".",
             markersize=3, label=f"SPARe ({exact})")
    ax2.set_yscale("symlog", linthresh=1e-6)
    ax2.set_ylim(bottom=-1e-7)
    ax2.set_xlabel("training step")
    ax2.set_ylabel(r"max$_i$ |θ$_i$ − θ$_i^{\rm failure-free}$|")
    ax2.legend(fontsize=7, loc="center right")
    return fig


def make_timeline_figure(run: TrainingRun) -> Figure:
    """What happened in a SPARe run, per executed step (tick): live groups, depth S, faults.

    Parameters
    ----------
    run : TrainingRun
        A 'spare' run; ticks count executed steps, so steps redone after a wipe-out appear twice.
    """
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(COLUMN_IN, 3.6), sharex=True,
                                   constrained_layout=True)
    # Reconstruct live count and S per tick from the event log.
    n_ticks = max([e["tick"] for e in run.events] + [run.n_steps - 1]) + 1
    n_ticks = max(n_ticks, run.n_steps + run.n_redone_steps)
    live = np.full(n_ticks, run.N, dtype=np.int64)
    depth = np.ones(n_ticks, dtype=np.int64)
    cur_live, cur_depth = run.N, 1
    by_tick: dict[int, list[dict[str, Any]]] = {}
    for e in run.events:
        by_tick.setdefault(e["tick"], []).append(e)
    for t in range(n_ticks):
        for e in by_tick.get(t, []):
            if e["kind"] == "detected":
                cur_live -= 1
            elif e["kind"] == "plan" and e["outcome"] != "wipeout":
                cur_depth = e["depth"]
        live[t], depth[t] = cur_live, cur_depth
        for e in by_tick.get(t, []):
            if e["kind"] == "restart":
                cur_live, cur_depth = run.N, 1
    ticks = np.arange(n_ticks)
    ax1.step(ticks, live, where="mid", color=MODE_STYLE["spare"]["color"])
    for phase, marker in PHASE_MARKER.items():
        for sig in ("kill", "stop"):
            ev = [e for e in run.events_of("fault") if e["phase"] == phase and e["signal"] == sig]
            if not ev:
                continue
            # spread the phases of one step horizontally so that same-step faults stay visible
            dx = (list(PHASE_MARKER).index(phase) - 2) * max(n_ticks, 20) / 80
            x = [e["tick"] + dx for e in ev]
            y = [live[e["tick"]] for e in ev]
            ax1.plot(x, y, linestyle="none", marker=marker, markersize=4,
                     markerfacecolor="#CC0000" if sig == "kill" else "none",
                     markeredgecolor="#CC0000",
                     label=phase if sig == "kill" else f"{phase} (hang)")
    for e in run.events_of("restart"):
        ax1.axvline(e["tick"] + 0.5, color="#CC0000", linewidth=0.8, alpha=0.6)
        ax2.axvline(e["tick"] + 0.5, color="#CC0000", linewidth=0.8, alpha=0.6)
        ax2.annotate(f"wipe-out: back to step {e['resume_step']}", (e["tick"] + 0.5, run.r),
                     xytext=(3, -8), textcoords="offset points", fontsize=7, color="#CC0000")
    ax1.set_ylabel("live groups")
    ax2.step(ticks, depth, where="mid", color=MODE_STYLE["spare"]["color"])
    handles, labels = ax1.get_legend_handles_labels()
    ax2.legend(handles, labels, fontsize=6, title="fault phase (upper panel)", title_fontsize=6,
               loc="center right", bbox_to_anchor=(1.0, 0.27), ncol=2, columnspacing=0.8,
               handletextpad=0.3)
    ax2.set_yticks(range(1, run.r + 1))
    ax2.set_ylabel("stack depth S")
    ax2.set_xlabel("executed step (redone steps counted again)")
    return fig


#: Line styles of the micro-batch section (issue 25): SPARe-b and SPARe+drop beside drop.
MICROBATCH_STYLE: dict[str, dict[str, str]] = {
    "failure_free": MODE_STYLE["failure_free"],
    "spare": {**MODE_STYLE["spare"], "label": "SPARe, b micro-batches"},
    "spare_drop": {"color": "#009E73", "linestyle": "-.", "label": "SPARe+drop, b micro-batches"},
    "drop": {"color": "#D55E00", "linestyle": ":", "label": "elastic-drop (whole shards)"},
}


def make_microbatch_exactness_figure(data: dict[str, Any]) -> Figure:
    """Micro-batch SPARe with real killed processes: loss curves and max |Δθ| per step.

    Parameters
    ----------
    data : dict
        ``{"failure_free": TrainingRun, "spare": TrainingRun, "spare_drop": TrainingRun,
        "drop": TrainingRun}``: the failure-free run with b micro-batches, SPARe-b (restart on
        wipe-out), SPARe+drop with b micro-batches and the elastic-drop run, on the same kills.
    """
    ff = data["failure_free"]
    b = int(data["spare"].microbatches)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(COLUMN_IN, 4.2), sharex=True,
                                   constrained_layout=True)
    steps = np.arange(ff.params.shape[0])
    for mode in ("failure_free", "drop", "spare_drop", "spare"):
        st = MICROBATCH_STYLE[mode]
        ax1.plot(steps, data[mode].eval_loss, color=st["color"], linestyle=st["linestyle"],
                 label=st["label"].replace(" b ", f" b = {b} "))
    ymin, _ = ax1.get_ylim()
    for e in data["spare_drop"].events_of("dropped"):
        ax1.axvline(e["step"] + 0.5, color="#CC0000", linewidth=0.8, alpha=0.6)
        ax1.annotate(f"wipe-out: type{'s' if len(e['types']) > 1 else ''} "
                     f"{', '.join(map(str, e['types']))} dropped", (e["step"] + 0.5, ymin),
                     xytext=(3, 3), textcoords="offset points", fontsize=7, color="#CC0000")
    ax1.set_ylabel("evaluation loss")
    ax1.legend(fontsize=7, loc="upper right")
    for mode in ("drop", "spare_drop", "spare"):
        st = MICROBATCH_STYLE[mode]
        d = data[mode].max_abs_param_diff(ff)
        label = st["label"].replace(" b ", f" b = {b} ")
        if not d.any():
            label += " (exactly 0)"
        ax2.plot(steps, d, color=st["color"], linestyle=st["linestyle"],
                 marker="." if mode == "spare" else None, markersize=3, label=label)
    ax2.set_yscale("symlog", linthresh=1e-6)
    ax2.set_ylim(bottom=-1e-7)
    ax2.set_xlabel("training step")
    ax2.set_ylabel(r"max$_i$ |θ$_i$ − θ$_i^{\rm failure-free}$|")
    ax2.legend(fontsize=7, loc="center right")
    return fig
