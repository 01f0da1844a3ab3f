"""Explaining where an emulated run leaves the simulator's path (issue 28, notebook 45).

With ``semantics="model"`` the emulation replays the simulator's instants and, at σ = 0, its
run on a trace exactly (every difference would be a protocol bug). With ``"real"`` three things
differ, one knob of :class:`~spare_lib.runtime.emulation.EmuSemantics` each
(:data:`SINGLE_KNOBS` switches one of them from the model's side): the instant a failure is
noticed (EOF instead of the next poll: rejoins start earlier), the instant a failure restarts
a restart window (its detection, a few ms of wall time later), and the coordinator's overruns
(model time instead of a paused clock). Each is small in aggregate, but a run's path (which
failures land in a restart window, which in training) can be sensitive to small shifts:

* :func:`first_divergence` finds the first decision where two event logs part, with the time
  lag accumulated before it and what caused the lag (slips, late window restarts);
* :func:`perturbation_band` measures the simulator's own sensitivity to perturbations of the
  size the real machinery showed in a run: the spread of simulated TTT/T0 when T_r and T_a
  grow by up to twice the measured detection latency and overrun per attempt;
* :func:`knob_scan` finds the growths of T_r or T_a at which the simulator itself changes path.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from spare_lib.cluster import ClusterConfig, simulate
from spare_lib.runtime.emulation import EmulationRun, EmuSemantics

#: The model's semantics with one knob switched to the real coordinator's.
SINGLE_KNOBS: dict[str, EmuSemantics] = {
    "notice_at": EmuSemantics("detect", "failure", "pause"),
    "window_from": EmuSemantics("poll", "detect", "pause"),
    "overrun": EmuSemantics("poll", "failure", "slip"),
}

#: Event kinds that are decisions of the protocol (compared by :func:`first_divergence`).
DECISIONS: tuple[str, ...] = ("notice", "resolve", "commit", "checkpoint", "restart_begin",
                              "window_reset", "barrier_failure", "rejoin")


def _decisions(events: Any) -> Any:
    ev = events[events["kind"].isin(DECISIONS)].reset_index(drop=True)
    key = []
    for kind, group, info, value in zip(ev["kind"], ev["group"], ev["info"], ev["value"],
                                        strict=True):
        if kind in ("resolve", "checkpoint"):
            key.append((kind, int(group), info))
        elif kind == "commit":
            key.append((kind, -1, f"S={value:g}"))
        else:  # notice channels (eof, attempt_start, ...) may differ for the same decision
            key.append((kind, int(group), ""))
    return ev.assign(key=key)


def first_divergence(reference: Any, other: Any) -> dict[str, Any]:
    """The first protocol decision where two event logs differ.

    Parameters
    ----------
    reference, other : DataFrame
        ``EmulationRun.events`` of two runs on the same trace (e.g. ``semantics="model"``,
        which is the simulator's path, and ``"real"``).

    Returns
    -------
    dict
        ``index`` (decisions that agree before it; None if none differ), ``reference`` and
        ``other`` (the events there, or None past an end), ``lag_s`` (other's model time −
        reference's at the last agreeing decision), and what ``other`` accumulated before
        the divergence: ``slip_s`` (overruns that became model time), ``window_delay_s``
        (window restarts after the failure: detection) and ``window_resets``, ``boundary``
        (failures flagged one attempt early) and ``decisions`` (the count compared).
    """
    a, b = _decisions(reference), _decisions(other)
    n = min(len(a), len(b))
    idx = next((i for i in range(n) if a["key"][i] != b["key"][i]), None)
    if idx is None and len(a) != len(b):
        idx = n
    stop = len(b) if idx is None else idx
    t_stop = float(b["t_s"][stop]) if stop < len(b) else math.inf
    ob = other[other["t_s"] < t_stop]
    prev = (idx if idx is not None else n) - 1
    resets = ob[ob["kind"] == "window_reset"]
    return {
        "index": idx,
        "reference": None if idx is None or idx >= len(a) else a.iloc[idx].drop("key").to_dict(),
        "other": None if idx is None or idx >= len(b) else b.iloc[idx].drop("key").to_dict(),
        "lag_s": float(b["t_s"][prev] - a["t_s"][prev]) if prev >= 0 else 0.0,
        "slip_s": float(ob.loc[ob["kind"] == "slip", "value"].sum()),
        "window_delay_s": float(resets["value"].sum()),
        "window_resets": int(len(resets)),
        "boundary": int((ob["kind"] == "boundary").sum()),
        "decisions": n,
    }


def perturbation_band(method: str, N: int, r: int, C: int | None, config: ClusterConfig,
                      trace: np.ndarray, run: EmulationRun, n_restart: int = 9,
                      n_allreduce: int = 5, rejoin_clock: str = "notice") -> dict[str, float]:
    """The simulator's TTT/T0 on the trace when T_r and T_a grow by what the run measured.

    A real-semantics run restarts windows a detection latency d after the failure and lets
    overruns of o per attempt (on average) into model time. Simulating the same trace with
    ``restart_s + δ_r``, δ_r on a grid of [0, 2·d] (d the run's median detection latency in
    model seconds), and ``allreduce_s + δ_a``, δ_a on [0, 2·o], gives the spread of outcomes
    that perturbations of that size cause in the model itself. With ``rejoin_clock="failure"``
    the simulator counts a group's rejoin time from its failure, as a coordinator that notices
    the crash at its EOF does, and that EOF comes δ_r later: ``rejoin_s + δ_r`` too.

    Parameters
    ----------
    method, N, r, C, config, trace
        The case as simulated (σ = 0 makes each point deterministic).
    run : EmulationRun
        The emulated run whose noise sets d and o.
    n_restart, n_allreduce : int
        Grid points of δ_r and δ_a.
    rejoin_clock : {"notice", "failure"}
        The simulator's ``rejoin_clock`` (the methods with rejoins): "failure" for a run that
        notices failures at their EOF (``notice_at="detect"``), "notice" for one that notices
        them at the model's polls.

    Returns
    -------
    dict
        ``mean``, ``sd``, ``lo``, ``hi`` of TTT/T0 over the grid, ``n``, ``detect_s`` (d) and
        ``overrun_s`` (o), both model seconds.
    """
    det = np.asarray(run.noise["detect_s"], dtype=float)
    d = float(np.median(det)) * run.scale if det.size else 0.0
    o = float(np.sum(run.noise["slip_s"])) * run.scale / max(run.attempts, 1)
    if rejoin_clock not in ("notice", "failure"):
        raise ValueError(f"rejoin_clock must be 'notice' or 'failure', got {rejoin_clock!r}")
    vals = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for dr in np.linspace(0.0, 2.0 * d, n_restart):
            rejoin = ({"rejoin_clock": "failure", "rejoin_s": config.rejoin_s + dr}
                      if rejoin_clock == "failure" else {})
            for da in np.linspace(0.0, 2.0 * o, n_allreduce):
                cfg = config.with_(restart_s=config.restart_s + dr,
                                   allreduce_s=config.allreduce_s + da, **rejoin)
                vals.append(simulate(method, N, r, C, cfg, seed=0,
                                     failure_trace=trace).ttt_over_t0)
    v = np.asarray(vals)
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0,
            "lo": float(v.min()), "hi": float(v.max()), "n": int(v.size), "detect_s": d,
            "overrun_s": o}


def notice_lag(run: EmulationRun) -> np.ndarray:
    """Model seconds from each failure noticed in training to its notice, in one run.

    Under ``notice_at="poll"`` this is the simulator's lag (the next unit start or the barrier:
    up to a compute unit); under ``"detect"``, the EOF's (the detection latency). Notices at
    a restart's start, deferred ones (failed after their window or after the barrier) and
    lost checkpoints are left out.
    """
    ev = run.events
    kills = ev[ev["kind"] == "kill"]
    times = {int(g): np.sort(kills.loc[kills["group"] == g, "t_s"].to_numpy(dtype=float))
             for g in set(kills["group"])}
    notes = ev[(ev["kind"] == "notice") & ev["info"].isin(["eof", "attempt_start", "barrier",
                                                           "send", "timeout"])]
    out = []
    for g, t in zip(notes["group"], notes["t_s"], strict=True):
        ts = times.get(int(g))
        if ts is None:
            continue
        i = int(np.searchsorted(ts, float(t) + 1e-9, side="right")) - 1
        if i >= 0:
            out.append(float(t) - float(ts[i]))
    return np.asarray(out, dtype=float)


def knob_scan(method: str, N: int, r: int, C: int | None, config: ClusterConfig,
              trace: np.ndarray, knob: str, deltas: Any) -> Any:
    """The simulator on the trace with one duration grown by each δ: where its path changes.

    A real coordinator restarts windows a detection latency late and lets overruns into model
    time; this shows which growth of T_r (``knob="restart_s"``) or T_a (``"allreduce_s"``)
    moves the simulator itself onto another path, and to which TTT/T0 and restart count.

    Parameters
    ----------
    method, N, r, C, config, trace
        The case as simulated (σ = 0 makes each point deterministic).
    knob : {"restart_s", "allreduce_s"}
        The duration grown.
    deltas : array of float
        Model seconds added, ≥ 0.

    Returns
    -------
    DataFrame
        One row per δ: ``delta_s``, ``ttt_over_t0``, ``full_restarts``, ``failures_noticed``
        and ``path_change`` (restarts or noticed failures differ from the previous δ's).
    """
    import pandas as pd

    if knob not in ("restart_s", "allreduce_s"):
        raise ValueError(f"knob must be 'restart_s' or 'allreduce_s', got {knob!r}")
    d = np.asarray(deltas, dtype=float)
    if d.ndim != 1 or d.size == 0 or (d < 0).any() or not np.isfinite(d).all():
        raise ValueError(f"deltas must be a non-empty 1-D array of finite values ≥ 0, got {deltas!r}")
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for delta in d:
            res = simulate(method, N, r, C, config.with_(**{knob: getattr(config, knob) + delta}),
                           seed=0, failure_trace=trace)
            rows.append((float(delta), res.ttt_over_t0, res.full_restarts, res.failures_noticed))
    out = pd.DataFrame(rows, columns=["delta_s", "ttt_over_t0", "full_restarts",
                                      "failures_noticed"])
    # a path change: a restart or a noticed failure more or less than at the previous δ (TTT/T0
    # itself grows continuously with δ on one path)
    ev = out[["full_restarts", "failures_noticed"]]
    out["path_change"] = (ev.diff().fillna(0) != 0).any(axis=1)
    return out
