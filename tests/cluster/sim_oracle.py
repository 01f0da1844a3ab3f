"""The plain-Python oracle of the event core (tests of tests/cluster): the model re-typed
without any of the core's shortcuts, for trace-driven runs without jitter."""

from __future__ import annotations

import math

import numpy as np

from spare_lib.cluster import ClusterConfig
from spare_lib.stacking import ruler_layout


def oracle(method: str, N: int, r: int, C: int | None, cfg: ClusterConfig,
           trace: list[tuple[float, int]]) -> dict:
    """SPEC §3–5 and the strategies of docs/strategies.md re-typed in plain Python, for trace
    replay without jitter: no sum/bridge sampling, no early exits, no counters beyond those
    returned. Methods: spare, rep, ckpt, spare+repair, elastic-drop, elastic-rebalance."""
    from spare_lib.rectlr import rectlr
    per = [sorted(t for t, g in trace if g == w) for w in range(N)]

    def renew(w: int, t: float) -> float:
        return next((x for x in per[w] if x > t), math.inf)

    spare = method in ("spare", "spare+repair")
    rejoins = method in ("spare+repair", "elastic-drop", "elastic-rebalance") and \
        math.isfinite(cfg.rejoin_s)
    b = cfg.microbatches
    base = ruler_layout(N, r).stacks.copy() if spare else None
    stacks, S = (base.copy() if spare else None), 1
    load = b  # elastic-rebalance: micro-batches per survivor
    fetch = False
    nf = [renew(w, -1.0) for w in range(N)]
    alive = [True] * N
    revive = [math.inf] * N
    t = down = 0.0
    committed, last, samples, last_samples = 0, 0, 0.0, 0.0
    restarts = masked = rejoined = redone = 0
    loads: list[tuple[int, int]] = []  # (micro-batches per survivor, dead groups) per commit
    pending = False
    unit = cfg.compute_per_stack_s

    def kill(w: int, at: float) -> None:
        alive[w], nf[w] = False, renew(w, at)
        if rejoins:
            revive[w] = at + cfg.rejoin_s

    while samples < cfg.steps:
        back = [w for w in range(N) if not alive[w] and revive[w] <= t]
        if back:
            for w in back:
                while nf[w] < revive[w]:
                    nf[w] = renew(w, nf[w])
                alive[w], revive[w] = True, math.inf
                rejoined += 1
            n_alive = sum(alive)
            if spare:
                stacks, S = base.copy(), 1
                if n_alive < N:
                    plan = rectlr(stacks, np.array(alive), 1)
                    if plan.outcome == "reordered":
                        stacks, S = plan.stacks.copy(), plan.depth
            if method == "elastic-rebalance":
                load, fetch = -(-N * b // n_alive), True
            rs = cfg.stall_s if cfg.rejoin_stall_s is None else cfg.rejoin_stall_s
            t += rs
            down += rs
        retry, patch, wiped = False, None, False
        while True:
            flagged = 1 if pending else 0
            # a checkpoint leader that died after the last commit computes nothing in this
            # step: its share is lost too (elastic-rebalance recomputes it in the retry)
            lost = load if pending else 0
            pending = False
            delay = 0.0
            if method == "elastic-rebalance" and fetch and not retry:
                delay, fetch = cfg.fetch_s, False
            tbar = t
            for w in range(N):
                if not alive[w]:
                    continue
                if spare:
                    n, u = (patch[w] if retry else S), unit
                elif method == "elastic-rebalance":
                    n, u = (patch[w] if retry else load), unit / b
                elif method == "elastic-drop":
                    n, u = 1, unit
                else:
                    n, u = 1, r * unit
                tw = t + delay
                for _ in range(n):
                    if nf[w] <= tw:
                        lost += load + (patch[w] if retry else 0)
                        kill(w, tw)
                        flagged += 1
                        break
                    tw += u
                tbar = max(tbar, tw)
            for w in range(N):
                if alive[w] and nf[w] <= tbar:
                    lost += load + (patch[w] if retry else 0)
                    kill(w, tbar)
                    flagged += 1
            t = tbar + cfg.allreduce_s * (cfg.allreduce_fail_factor if flagged else 1.0)
            if not flagged:
                break
            n_alive = sum(alive)
            if spare:
                plan = rectlr(stacks, np.array(alive), S)
                wiped = plan.outcome == "wipeout"
            elif method in ("rep", "ckpt"):
                wiped = any(all(not alive[w] for w in range(i, min(N, i + r)))
                            for i in range(0, N, r))
            else:
                wiped = n_alive == 0
            if wiped:
                break
            masked += flagged
            t += cfg.stall_s
            down += cfg.stall_s
            if spare and plan.outcome == "reordered":
                stacks, S, patch, retry = plan.stacks.copy(), plan.depth, plan.patch, True
                continue
            if method == "elastic-rebalance":
                share = -(-lost // n_alive)
                patch = [share if alive[w] else 0 for w in range(N)]
                load, fetch, retry = -(-N * b // n_alive), True, True
                continue
            break
        if wiped:
            t0 = tend = t
            for w in range(N):
                if alive[w] and nf[w] <= t0:
                    nf[w] = renew(w, t0)
                while not alive[w] and nf[w] < t0:
                    nf[w] = renew(w, nf[w])
                s = t0
                while nf[w] < s + cfg.restart_s:
                    s, nf[w] = nf[w], renew(w, nf[w])
                tend = max(tend, s + cfg.restart_s)
                alive[w], revive[w] = True, math.inf
            down += tend - t0
            t = tend
            restarts += 1
            stacks, S, load, fetch = (base.copy() if spare else None), 1, b, False
            redone += committed - last
            committed, samples = last, last_samples
            continue
        committed += 1
        loads.append((load, N - sum(alive)))
        samples += sum(alive) / N if method == "elastic-drop" else 1.0
        if C is not None and (committed % C == 0 or samples >= cfg.steps):
            while True:
                leader = alive.index(True)
                if nf[leader] <= t:
                    kill(leader, t)
                    if samples < cfg.steps:
                        pending = True
                        break
                else:
                    t += cfg.checkpoint_s
                    last, last_samples = committed, samples
                    break
    return {"total_s": t, "down_s": down, "full_restarts": restarts, "masked_failures": masked,
            "rejoins": rejoined, "steps_redone": redone, "loads": loads}
