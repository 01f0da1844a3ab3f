"""The event log of one simulated run (``simulate(..., events=True)``, issue 28).

The core appends one row per event to preallocated arrays (:func:`_log`; nothing is recorded,
and nothing is paid but one branch, when the log is off) and :func:`events_frame` turns them
into a DataFrame: ``t_s`` (model seconds), ``kind``, ``step`` (the step being attempted or
committed), ``attempt`` (the run's attempt counter, −1 during a restart), ``group`` (−1: none),
``value`` and ``info``:

=============== ======================================== ==========================================
kind            value                                    info
=============== ======================================== ==========================================
attempt         live groups                              first, retry
notice          failure class (index in the mix)         unit, barrier, leader, restart_start
detect          seconds waited                           group (a group/domain failure) or job
resolve         S after the controller                   fixed, reordered, wipeout, masked
stall           seconds                                  failure, rejoin
commit          S of the committed step                  ''
checkpoint      tier (0 disk, 1 memory)                  written, lost
restart_begin   the per-group window (T_r)               wipeout, job
window_reset    the group's new window end               ''
restart_end     step rolled back to                      disk, memory
rejoin          0                                        ''
job_failure     time of the job event                    its class's name
=============== ======================================== ==========================================
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

#: Event log (``simulate(events=True)``): kinds, and the codes of their ``info``.
EV_KINDS = ("attempt", "notice", "resolve", "stall", "commit", "checkpoint", "restart_begin",
            "window_reset", "restart_end", "rejoin", "job_failure", "detect")
(EV_ATTEMPT, EV_NOTICE, EV_RESOLVE, EV_STALL, EV_COMMIT, EV_CHECKPOINT, EV_RESTART_BEGIN,
 EV_WINDOW_RESET, EV_RESTART_END, EV_REJOIN, EV_JOB, EV_DETECT) = range(12)
#: Where a failure is noticed (info of ``notice``).
AT_UNIT, AT_BARRIER, AT_LEADER, AT_RESTART = range(4)

_INFO = {
    EV_ATTEMPT: ("first", "retry"),
    EV_NOTICE: ("unit", "barrier", "leader", "restart_start"),
    EV_DETECT: ("group", "job"),
    EV_RESOLVE: ("fixed", "reordered", "wipeout", "masked"),
    EV_STALL: ("failure", "rejoin"),
    EV_CHECKPOINT: ("written", "lost"),
    EV_RESTART_BEGIN: ("wipeout", "job"),
    EV_RESTART_END: ("disk", "memory"),
}
#: Columns of :func:`events_frame`.
EVENT_COLUMNS = ("t_s", "kind", "step", "attempt", "group", "value", "info")


def event_buffers(capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log's arrays for at most ``capacity`` events (0: the log is off)."""
    return (np.zeros((capacity, 2), dtype=np.float64), np.zeros((capacity, 5), dtype=np.int64),
            np.zeros(1, dtype=np.int64))


def events_frame(ev: tuple[np.ndarray, np.ndarray, np.ndarray],
                 class_names: tuple[str, ...]) -> Any:
    """The recorded events as a pandas DataFrame (:data:`EVENT_COLUMNS`)."""
    import pandas as pd

    ev_f, ev_i, ev_n = ev
    n = min(int(ev_n[0]), ev_f.shape[0])
    kind = ev_i[:n, 0]
    code = ev_i[:n, 4]
    info = np.full(n, "", dtype=object)
    for k, names in _INFO.items():
        sel = kind == k
        info[sel] = np.asarray(names, dtype=object)[code[sel]]
    sel = kind == EV_JOB
    info[sel] = np.asarray(class_names, dtype=object)[np.clip(code[sel], 0, len(class_names) - 1)]
    return pd.DataFrame({
        "t_s": ev_f[:n, 0].copy(),
        "kind": pd.Categorical(np.asarray(EV_KINDS, dtype=object)[kind], categories=EV_KINDS),
        "step": ev_i[:n, 1].copy(), "attempt": ev_i[:n, 2].copy(), "group": ev_i[:n, 3].copy(),
        "value": ev_f[:n, 1].copy(), "info": info})


@njit(cache=True, inline="always")
def _log(ev, t, kind, step, att, g, val, info):  # pragma: no cover
    """Append one event to the log (``simulate(events=True)``); past its capacity only count."""
    ev_f, ev_i, ev_n = ev
    n = ev_n[0]
    if n < ev_f.shape[0]:
        ev_f[n, 0] = t
        ev_f[n, 1] = val
        ev_i[n, 0] = kind
        ev_i[n, 1] = step
        ev_i[n, 2] = att
        ev_i[n, 3] = g
        ev_i[n, 4] = info
    ev_n[0] = n + 1
