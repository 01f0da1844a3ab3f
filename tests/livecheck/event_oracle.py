"""Test-side event logger of the simulator's model: a copy of the plain-Python oracle of
``tests/cluster/sim_oracle.py`` (trace replay, no jitter) that also writes every event with its
model time, so that an emulated run can be compared with the model event by event.

The simulator itself exposes only aggregates; this copy is the stand-in until it can log events
(the interface asked for is in the issue 28 report). Methods: spare, rep, ckpt, spare+repair,
elastic-drop. Columns as ``spare_lib.runtime.emulation.EVENT_COLUMNS`` (without ``wall_s``).
"""

from __future__ import annotations

import math

import numpy as np

from spare_lib.cluster import ClusterConfig
from spare_lib.stacking import ruler_layout


def oracle_events(method: str, N: int, r: int, C: int | None, cfg: ClusterConfig,
                  trace) -> tuple[dict, list[tuple]]:
    """(aggregates, events) of the model on a trace; events are (t_s, kind, step, group, info)."""
    from spare_lib.rectlr import rectlr
    tr = np.asarray(trace, dtype=float).reshape(-1, 2)
    per = [np.sort(tr[tr[:, 1] == w, 0]) for w in range(N)]
    ev: list[tuple] = []

    def renew(w: int, t: float) -> float:
        i = int(np.searchsorted(per[w], t, side="right"))
        return float(per[w][i]) if i < per[w].size else math.inf

    spare = method in ("spare", "spare+repair")
    rejoins = method in ("spare+repair", "elastic-drop") and math.isfinite(cfg.rejoin_s)
    base = ruler_layout(N, r).stacks.copy() if spare else None
    stacks, S = (base.copy() if spare else None), 1
    nf = [renew(w, -1.0) for w in range(N)]
    alive = [True] * N
    revive = [math.inf] * N
    t = down = 0.0
    committed, last, samples, last_samples = 0, 0, 0.0, 0.0
    restarts = masked = rejoined = redone = fails = fails_since = commits = 0
    per_restart: list[int] = []
    pending = False
    unit = cfg.compute_per_stack_s

    def kill(w: int, at: float, how: str) -> None:
        alive[w], nf[w] = False, renew(w, at)
        if rejoins:
            revive[w] = at + cfg.rejoin_s
        ev.append((at, "notice", committed, w, how))

    while samples < cfg.steps:
        back = [w for w in range(N) if not alive[w] and revive[w] <= t]
        if back:
            for w in back:
                while nf[w] < revive[w]:
                    nf[w] = renew(w, nf[w])
                alive[w], revive[w] = True, math.inf
                rejoined += 1
                ev.append((t, "rejoin", committed, w, ""))
            if spare:
                stacks, S = base.copy(), 1
                if sum(alive) < N:
                    plan = rectlr(stacks, np.array(alive), 1)
                    if plan.outcome == "reordered":
                        stacks, S = plan.stacks.copy(), plan.depth
            rs = cfg.stall_s if cfg.rejoin_stall_s is None else cfg.rejoin_stall_s
            t += rs
            down += rs
        retry, patch, wiped = False, None, False
        while True:
            flagged = 1 if pending else 0
            pending = False
            ev.append((t, "attempt", committed, -1, ""))
            tbar = t
            for w in range(N):
                if not alive[w]:
                    continue
                if spare:
                    n, u = (patch[w] if retry else S), unit
                elif method == "elastic-drop":
                    n, u = 1, unit
                else:
                    n, u = 1, r * unit
                tw = t
                for _ in range(n):
                    if nf[w] <= tw:
                        kill(w, tw, "unit")
                        flagged += 1
                        fails += 1
                        fails_since += 1
                        break
                    tw += u
                tbar = max(tbar, tw)
            for w in range(N):
                if alive[w] and nf[w] <= tbar:
                    kill(w, tbar, "barrier")
                    flagged += 1
                    fails += 1
                    fails_since += 1
            ev.append((tbar, "barrier", committed, -1, ""))
            t = tbar + cfg.allreduce_s * (cfg.allreduce_fail_factor if flagged else 1.0)
            if not flagged:
                break
            if spare:
                plan = rectlr(stacks, np.array(alive), S)
                wiped = plan.outcome == "wipeout"
                outcome = plan.outcome
            elif method in ("rep", "ckpt"):
                wiped = any(all(not alive[w] for w in range(i, min(N, i + r)))
                            for i in range(0, N, r))
                outcome = "wipeout" if wiped else "masked"
            else:
                wiped = sum(alive) == 0
                outcome = "wipeout" if wiped else "masked"
            ev.append((t, "resolve", committed, -1, outcome))
            if wiped:
                break
            masked += flagged
            t += cfg.stall_s
            down += cfg.stall_s
            if spare and plan.outcome == "reordered":
                stacks, S, patch, retry = plan.stacks.copy(), plan.depth, plan.patch, True
                continue
            break
        if wiped:
            per_restart.append(fails_since)
            fails_since = 0
            t0 = tend = t
            ev.append((t0, "restart_begin", committed, -1, ""))
            for w in range(N):
                if alive[w] and nf[w] <= t0:
                    nf[w] = renew(w, t0)
                while not alive[w] and nf[w] < t0:
                    nf[w] = renew(w, nf[w])
                s = t0
                while nf[w] < s + cfg.restart_s:
                    s, nf[w] = nf[w], renew(w, nf[w])
                    ev.append((s, "window_reset", committed, w, ""))
                tend = max(tend, s + cfg.restart_s)
                alive[w], revive[w] = True, math.inf
            down += tend - t0
            t = tend
            ev.append((t, "restart_end", committed, -1, ""))
            restarts += 1
            stacks, S = (base.copy() if spare else None), 1
            redone += committed - last
            committed, samples = last, last_samples
            continue
        committed += 1
        commits += 1
        samples += sum(alive) / N if method == "elastic-drop" else 1.0
        ev.append((t, "commit", committed, -1, str(S)))
        if C is not None and (committed % C == 0 or samples >= cfg.steps):
            while True:
                leader = alive.index(True)
                if nf[leader] <= t:
                    kill(leader, t, "leader")
                    fails += 1
                    fails_since += 1
                    ev.append((t, "checkpoint", committed, leader, "lost"))
                    if samples < cfg.steps:
                        pending = True
                        break
                else:
                    ev.append((t, "checkpoint", committed, leader, "written"))
                    t += cfg.checkpoint_s
                    last, last_samples = committed, samples
                    break
    agg = {"total_s": t, "down_s": down, "full_restarts": restarts, "masked_failures": masked,
           "rejoins": rejoined, "steps_redone": redone, "failures_noticed": fails,
           "commits": commits, "failures_between_restarts": tuple(per_restart)}
    return agg, ev
