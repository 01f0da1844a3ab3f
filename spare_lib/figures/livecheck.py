"""Figures of notebook 45 (the simulator against a scaled-clock emulation with real processes).

``make_<figure>(data) -> Figure`` as everywhere in spare-lab.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from spare_lib.cluster import METHOD_LABEL
from spare_lib.figures.style import COLUMN_IN, METHOD_STYLE

#: Colours of the two sides of every comparison.
SIDE_STYLE = {"simulated": {"color": "#0072B2", "hatch": ""},
              "emulated": {"color": "#E69F00", "hatch": "//"}}

#: The noise measurements of ``EmulationRun.noise`` shown, with their labels.
NOISE_LABEL = {"barrier_s": "barrier overhead\n(last answer − deadline)",
               "worker_late_s": "worker wake-up\n(send − deadline)",
               "pipe_s": "pipe\n(receive − send)",
               "detect_s": "detection\n(EOF − SIGKILL)",
               "kill_late_s": "SIGKILL\n(sent − due)",
               "assign_s": "process hand-over\n(standby → group)",
               "slip_s": "overrun into model time\n(real semantics)",
               "pause_s": "overrun left out\n(model semantics)"}


def method_label(method: str) -> str:
    """The paper-style name of a method with checkpoints (SPARe+CKPT, Rep+CKPT, ...)."""
    return METHOD_LABEL[(method, True)]


#: Colours of the emulation's semantics and of the knob attribution.
SEMANTICS_STYLE = {"model": {"color": "#E69F00", "hatch": "//"},
                   "real": {"color": "#009E73", "hatch": ".."}}
KNOB_STYLE = {"notice_at": "#56B4E9", "window_from": "#CC79A7", "overrun": "#D55E00",
              "real": "#009E73"}


def make_live_ttt_bars(data: dict[str, Any]) -> Figure:
    """Per method: simulated TTT/T0 and the emulated one under each semantics (top); the
    relative differences, the acceptance band (3 % or 3 combined s.e.) and, where given, the
    simulator's own range under perturbations of the measured size (bottom).

    Parameters
    ----------
    data : dict
        ``{"methods": [...], "simulated": array, "emulated": {semantics: array},
        "bound": array (acceptance half-width, TTT/T0 units), "band": None or (lo, hi)
        arrays (the simulator's perturbation range)}``.
    """
    methods = list(data["methods"])
    sim = np.asarray(data["simulated"], dtype=float)
    emu = {k: np.asarray(v, dtype=float) for k, v in data["emulated"].items()}
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(COLUMN_IN, 4.2), sharex=True,
                                   constrained_layout=True, height_ratios=[2, 1.3])
    x = np.arange(len(methods))
    series = [("simulated", sim, SIDE_STYLE["simulated"])]
    series += [(f"emulated ({k})", v, SEMANTICS_STYLE.get(k, SIDE_STYLE["emulated"]))
               for k, v in emu.items()]
    w = 0.8 / len(series)
    for k, (label, vals, st) in enumerate(series):
        ax1.bar(x + (k - (len(series) - 1) / 2) * w, vals, w, color=st["color"],
                hatch=st["hatch"], edgecolor="black", linewidth=0.4, label=label)
    ax1.set_ylabel("TTT / T0")
    ax1.legend(fontsize=6, loc="upper left")
    band = data.get("band")
    if band is not None:
        lo, hi = (100.0 * (np.asarray(b, dtype=float) / sim - 1.0) for b in band)
        ax2.bar(x, hi - lo, 0.7, bottom=lo, color="#BBBBBB", linewidth=0,
                label="simulator, perturbed as measured")
    bound = 100.0 * np.asarray(data["bound"], dtype=float) / sim
    ax2.errorbar(x, np.zeros_like(bound), yerr=bound, fmt="none", ecolor="#CC0000",
                 capsize=4, linewidth=0.8, label="acceptance band")
    w2 = 0.6 / max(len(emu), 1)
    for k, (name, vals) in enumerate(emu.items()):
        st = SEMANTICS_STYLE.get(name, SIDE_STYLE["emulated"])
        ax2.plot(x + (k - (len(emu) - 1) / 2) * w2, 100.0 * (vals / sim - 1.0), linestyle="none",
                 marker="o", markersize=3.5, color=st["color"], markeredgecolor="black",
                 markeredgewidth=0.4, label=name)
    ax2.axhline(0.0, color="black", linewidth=0.5)
    ax2.set_ylabel("emulated − simulated\n(% of simulated)")
    ax2.legend(fontsize=5.5, loc="upper left", ncol=2)
    ax2.set_xticks(x, [method_label(m) for m in methods], rotation=25, ha="right", fontsize=7)
    return fig


def make_live_attribution(data: dict[str, Any]) -> Figure:
    """Per method: the change of emulated TTT/T0 when one semantic knob is switched from the
    simulator's instant to the real coordinator's, and all three together (``real``), against
    the simulator's range under perturbations of the measured size.

    Parameters
    ----------
    data : dict
        ``{"methods": [...], "effects": {knob: array of % changes of TTT/T0}, "band": None or
        (lo, hi) arrays of % changes}``.
    """
    methods = list(data["methods"])
    eff = {k: np.asarray(v, dtype=float) for k, v in data["effects"].items()}
    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.8), constrained_layout=True)
    x = np.arange(len(methods))
    band = data.get("band")
    if band is not None:
        lo, hi = (np.asarray(b, dtype=float) for b in band)
        ax.bar(x, hi - lo, 0.9, bottom=lo, color="#DDDDDD", linewidth=0,
               label="simulator, perturbed as measured")
    w = 0.8 / max(len(eff), 1)
    for k, (name, vals) in enumerate(eff.items()):
        ax.bar(x + (k - (len(eff) - 1) / 2) * w, vals, w, color=KNOB_STYLE.get(name, "#666666"),
               edgecolor="black", linewidth=0.3, label=name)
    ax.axhline(0.0, color="black", linewidth=0.5)
    ax.set_ylabel("TTT/T0 change against\nthe model's semantics (%)")
    ax.legend(fontsize=5.5, loc="upper left", ncol=3)
    ax.set_xticks(x, [method_label(m) for m in methods], rotation=25, ha="right", fontsize=7)
    return fig


def _live_curve(ev: Any, N: int) -> tuple[np.ndarray, np.ndarray]:
    """Live groups over model time, from the notices, rejoins and restart ends."""
    t, live, cur = [0.0], [N], N
    for _, e in ev.iterrows():
        if e["kind"] == "notice" and e["info"] != "restart_start":
            cur -= 1
        elif e["kind"] == "rejoin":
            cur += 1
        elif e["kind"] == "restart_end":
            cur = N
        else:
            continue
        t.append(e["t_s"])
        live.append(cur)
    return np.array(t), np.array(live)


def make_live_timeline(data: dict[str, Any]) -> Figure:
    """One emulated run over model time: live groups with the SIGKILLs and the restarts (top);
    the stack depth S of each commit (bottom); optionally a reference run underneath.

    Parameters
    ----------
    data : dict
        ``{"run": EmulationRun, "t_max_s": float or None}`` (the first ``t_max_s`` model
        seconds; None: all); optional ``"reference"`` (another run on the same trace, drawn
        underneath, e.g. under the model's semantics), ``"label"``, ``"reference_label"``
        and ``"mark_t_s"`` (a model time marked on both panels).
    """
    run = data["run"]
    ev = run.events
    t_max = data.get("t_max_s") or float(ev["t_s"].max())
    ev = ev[ev["t_s"] <= t_max]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(COLUMN_IN, 3.6), sharex=True,
                                   constrained_layout=True, height_ratios=[2, 1])
    colour = METHOD_STYLE.get(method_label(run.method), {"color": "#0072B2"})["color"]
    ref = data.get("reference")
    if ref is not None:  # the simulator's path (the run under the model's semantics)
        rev = ref.events[ref.events["t_s"] <= t_max]
        tr, lr = _live_curve(rev, ref.N)
        ax1.step(tr / 3600, lr, where="post", color="#555555", linewidth=1.6, alpha=0.45,
                 label=data.get("reference_label", "reference"))
    t, live = _live_curve(ev, run.N)
    ax1.step(t / 3600, live, where="post", color=colour, linewidth=0.9,
             label=data.get("label", "live groups"))
    if data.get("mark_t_s") is not None:
        for ax in (ax1, ax2):
            ax.axvline(data["mark_t_s"] / 3600, color="black", linestyle=":", linewidth=0.8,
                       label="first divergence" if ax is ax1 else None)
    kills = ev[ev["kind"] == "kill"]
    ax1.plot(kills["t_s"] / 3600, np.full(len(kills), run.N + 0.6), linestyle="none",
             marker="v", markersize=3, color="#CC0000", label="SIGKILL", clip_on=False)
    begins = ev[ev["kind"] == "restart_begin"]["t_s"].to_numpy()
    ends = ev[ev["kind"] == "restart_end"]["t_s"].to_numpy()
    for i, b in enumerate(begins):
        e = ends[i] if i < len(ends) else t_max
        for ax in (ax1, ax2):
            ax.axvspan(b / 3600, e / 3600, color="#CC0000", alpha=0.15, linewidth=0,
                       label="global restart" if (i == 0 and ax is ax1) else None)
    ax1.set_ylabel("live groups")
    ax1.set_ylim(0, run.N + 1.2)
    ax1.legend(fontsize=6, loc="lower left", ncol=3)
    commits = ev[ev["kind"] == "commit"]
    ax2.plot(commits["t_s"] / 3600, commits["value"], linestyle="none", marker=".",
             markersize=2, color=colour)
    ax2.set_ylabel("S at commit")
    ax2.set_xlabel("model time (h)")
    return fig


def make_live_noise(data: dict[str, Any]) -> Figure:
    """The emulation's noise floor: distributions of its wall-clock latencies (ms, log axis),
    pooled over the runs, against the scaled length of one compute unit.

    Parameters
    ----------
    data : dict
        ``{"runs": {method: EmulationRun}, "unit_ms": float}``.
    """
    runs = data["runs"]
    keys = [k for k in NOISE_LABEL if any(np.size(r.noise.get(k, [])) for r in runs.values())]
    vals = [np.concatenate([np.asarray(r.noise.get(k, []), float) for r in runs.values()])
            for k in keys]
    vals = [np.clip(v, 1e-3 / 1e3, None) * 1e3 for v in vals]
    fig, ax = plt.subplots(figsize=(COLUMN_IN, 3.0), constrained_layout=True)
    ax.boxplot(vals, vert=False, whis=(5, 95), showfliers=False, widths=0.6,
               medianprops={"color": "#CC0000"})
    ax.set_yticks(np.arange(1, len(keys) + 1), [NOISE_LABEL[k] for k in keys], fontsize=6)
    ax.set_xscale("log")
    ax.axvline(data["unit_ms"], color="#0072B2", linestyle="--", linewidth=0.8,
               label="one compute unit (scaled)")
    ax.set_xlabel("wall-clock latency (ms); box: quartiles, whiskers: 5–95 %")
    ax.legend(fontsize=6, loc="lower right")
    return fig
