"""The plain-Python oracle of the event core (tests of tests/cluster): the model re-typed
without any of the core's shortcuts, for trace-driven runs.

Covers the nine methods (SPARe-b through micro-batch RECTLR's own kernels, whose least
makespan is tested against an integer program in tests/rectlr, as SPARe's plan is RECTLR's),
failure classes from the trace's third column (detection and rejoin
time per class), job events (trace rows of group −1), the detection wait, elastic-drop's quorum,
both all-reduce rules and every jitter model. With jitter (σ > 0) it draws what the core's
direct loop draws, in the same order from the same generator: one factor per unit of work
(per group per attempt with ``jitter_model='step'``), which is the core's draw whenever its
sum-then-bridge shortcut is off (1 − ``jitter_min`` ≤ 9σ: the tests choose such a clip). The
stragglers come from the core's hash of (straggler seed, group, restart count).
"""

from __future__ import annotations

import math

import numpy as np

from spare_lib.cluster import ClusterConfig
from spare_lib.stacking import ruler_layout


def _world(cfg: ClusterConfig, seed: int | None) -> tuple[list, list, float]:
    """Per class (detect_s, rejoin_s); the straggler seed the core uses for this seed."""
    from spare_lib._util.rng import as_seed_sequence
    from spare_lib.cluster.runs.world import _KEY_STRAGGLER, _seed, _u64

    mix = cfg.mix()
    det = [cfg.detect_s if c.detect_s is None else c.detect_s for c in mix.classes]
    rej = [cfg.rejoin_s if c.rejoin_s is None else c.rejoin_s for c in mix.classes]
    if not any(c.radius == "job" for c in mix.classes):  # the core's implicit trace job class
        det.append(cfg.detect_s)
        rej.append(math.inf)
    sseed = _u64(_seed(as_seed_sequence(seed), None, _KEY_STRAGGLER))
    return det, rej, sseed


def oracle(method: str, N: int, r: int, C: int | None, cfg: ClusterConfig,
           trace: list[tuple], seed: int | None = None) -> dict:
    """SPEC §3–5, docs/strategies.md and docs/failure_mix.md re-typed in plain Python for trace
    replay: no sum/bridge sampling, no early exits, no counters beyond those returned. Rows
    (t, g) or (t, g, class); g = −1 is a job event. Methods: spare, rep, ckpt, spare+repair,
    elastic-drop, elastic-rebalance, spare-b, spare-b+repair, spare-b+drop."""
    from spare_lib.cluster.engine.renewal import stream_uniform
    from spare_lib.rectlr import rectlr
    kinds = [k.radius for k in cfg.mix().classes]
    g0 = kinds.index("group") if "group" in kinds else 0  # a row without a class: the first
    j0 = kinds.index("job") if "job" in kinds else len(kinds)  # (tests give one such class)
    rows = [(float(x[0]), int(x[1]), int(x[2]) if len(x) > 2 else -1) for x in trace]
    per = [sorted((t, c if c >= 0 else g0) for t, g, c in rows if g == w) for w in range(N)]
    jobs = sorted(((t, c if c >= 0 else j0) for t, g, c in rows if g < 0), key=lambda e: e[0])
    det, rej, sseed = _world(cfg, seed)
    rng = np.random.default_rng(seed)
    model = cfg.jitter_model

    def renew(w: int, t: float) -> tuple[float, int]:
        return next(((x, c) for x, c in per[w] if x > t), (math.inf, 0))

    b = cfg.microbatches
    # SPARe-b: b micro-batches per shard; at b = 1 spare-b and spare-b+repair are SPARe
    mb = method.startswith("spare-b") and (b > 1 or method == "spare-b+drop")
    spare = method in ("spare", "spare+repair") or (method.startswith("spare-b") and not mb)
    rejoins = method in ("spare+repair", "elastic-drop", "elastic-rebalance", "spare-b+repair",
                         "spare-b+drop") and any(math.isfinite(x) for x in rej)
    sig = cfg.jitter_sigma
    if (method == "elastic-rebalance" or method.startswith("spare-b")) and model != "step":
        sig = cfg.jitter_sigma * math.sqrt(b)
    quorum = math.ceil(round(cfg.min_live * N, 9)) \
        if method in ("elastic-drop", "spare-b+drop") else 0
    st = _MicroState(N, r, b, method == "spare-b+drop", quorum) if mb else None
    base = ruler_layout(N, r).stacks.copy() if spare else None
    stacks, S = (base.copy() if spare else None), 1
    load = b  # elastic-rebalance: micro-batches per survivor
    fetch = False
    first = [renew(w, -1.0) for w in range(N)]
    nf, cur = [x for x, _c in first], [c for _x, c in first]
    alive = [True] * N
    revive = [math.inf] * N
    t = down = 0.0
    committed, last, samples, last_samples = 0, 0, 0.0, 0.0
    restarts = masked = rejoined = redone = job_fails = 0
    loads: list[tuple[int, int]] = []  # (micro-batches per survivor, dead groups) per commit
    pending = False
    pend_det = 0.0
    jp = 0
    unit = cfg.compute_per_stack_s

    def stragglers(epoch: int) -> list[float]:
        if model != "straggler":
            return [1.0] * N
        return [1.0 + cfg.straggler_slowdown
                if stream_uniform(sseed, w, epoch) <= cfg.straggler_share else 1.0
                for w in range(N)]

    slow = stragglers(0)

    def draw() -> float:
        if sig == 0.0:
            return 1.0
        j = 1.0 + sig * rng.standard_normal()
        return j if j > cfg.jitter_min else cfg.jitter_min

    def kill(w: int, at: float) -> None:
        nonlocal pend_det
        c = cur[w]
        alive[w] = False
        failed_at = nf[w]
        nf[w], cur[w] = renew(w, at)
        if rejoins:  # rejoin_clock: counted from the notice, or from the failure's detection
            revive[w] = (failed_at + det[c] if cfg.rejoin_clock == "failure" else at) + rej[c]
        if mb:
            st.notice(w)
        pend_det = max(pend_det, det[c])

    def compute(w: int, t0: float, n: int, u: float) -> tuple[float, bool]:
        """Group w's n units of u s from t0: its end (or notice) time, failed."""
        tw = t0
        if model == "step":
            if n == 0:
                return tw, False
            if nf[w] <= tw:
                return tw, True
            j = draw()
            for k in range(n):
                if k > 0 and nf[w] <= tw:
                    return tw, True
                tw += u * j
            return tw, False
        for _ in range(n):
            if nf[w] <= tw:
                return tw, True
            tw += u * slow[w] * draw() if model == "straggler" else u * draw()
        return tw, False

    while samples < cfg.steps:
        back = [w for w in range(N) if not alive[w] and revive[w] <= t]
        if back:
            for w in back:
                while nf[w] < revive[w]:
                    nf[w], cur[w] = renew(w, nf[w])
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
            if mb:
                st.rejoin(alive)
            rs = cfg.stall_s if cfg.rejoin_stall_s is None else cfg.rejoin_stall_s
            t += rs
            down += rs
        retry, patch, wiped, job_hit = False, None, False, False
        while True:
            flagged = 1 if pending else 0
            # a checkpoint leader that died after the last commit computes nothing in this
            # step: its share is lost too (elastic-rebalance recomputes it in the retry)
            lost = load if pending else 0
            pending = False
            if jp < len(jobs) and jobs[jp][0] <= t:
                job_hit = True
                break
            delay = 0.0
            if method == "elastic-rebalance" and fetch and not retry:
                delay, fetch = cfg.fetch_s, False
            tbar = t
            for w in range(N):
                if not alive[w]:
                    continue
                if spare:
                    n, u = (patch[w] if retry else S), unit
                elif mb:
                    n, u = (st.patch[w] if retry else st.load[w]), unit / b
                elif method == "elastic-rebalance":
                    n, u = (patch[w] if retry else load), unit / b
                elif method == "elastic-drop":
                    n, u = 1, unit
                elif model == "paper":
                    n, u = 1, r * unit
                else:
                    n, u = r, unit
                tw, failed = compute(w, t + delay, n, u)
                if failed:
                    lost += load + (patch[w] if retry and not mb else 0)
                    kill(w, tw)
                    flagged += 1
                tbar = max(tbar, tw)
            for w in range(N):
                if alive[w] and nf[w] <= tbar:
                    lost += load + (patch[w] if retry and not mb else 0)
                    kill(w, tbar)
                    flagged += 1
            if jp < len(jobs) and jobs[jp][0] <= tbar:
                t = tbar + cfg.allreduce_s * cfg.allreduce_fail_factor
                job_hit = True
                break
            t = tbar + cfg.allreduce_s * (cfg.allreduce_fail_factor if flagged else 1.0)
            if not flagged:
                break
            t += pend_det
            down += pend_det
            pend_det = 0.0
            n_alive = sum(alive)
            outcome = ""
            if spare:  # no survivor at all: every type is wiped out (rectlr needs one)
                plan = rectlr(stacks, np.array(alive), S) if n_alive else None
                wiped = plan is None or plan.outcome == "wipeout"
            elif mb:
                outcome = st.resolve(alive, retry)
                wiped = outcome == "wipeout"
            elif method in ("rep", "ckpt"):
                wiped = any(all(not alive[w] for w in range(i, min(N, i + r)))
                            for i in range(0, N, r))
            else:
                wiped = n_alive == 0 or n_alive < quorum
            if wiped:
                break
            masked += flagged
            t += cfg.stall_s
            down += cfg.stall_s
            if spare and plan.outcome == "reordered":
                stacks, S, patch, retry = plan.stacks.copy(), plan.depth, plan.patch, True
                continue
            if outcome == "retry":
                retry = True
                continue
            if method == "elastic-rebalance":
                share = -(-lost // n_alive)
                patch = [share if alive[w] else 0 for w in range(N)]
                load, fetch, retry = -(-N * b // n_alive), True, True
                continue
            if cfg.allreduce_rule == "abort":
                t += cfg.allreduce_s
            break
        if job_hit:
            d = pend_det
            while jp < len(jobs) and jobs[jp][0] <= t:
                d = max(d, det[jobs[jp][1]])
                jp += 1
                job_fails += 1
            t += d
            down += d
            wiped = True
        if wiped:
            pend_det = 0.0
            t0 = start = t
            again = False
            while True:
                tend = start
                for w in range(N):
                    if alive[w] or again:
                        if nf[w] <= start:
                            nf[w], cur[w] = renew(w, start)
                    else:
                        while nf[w] < start:
                            nf[w], cur[w] = renew(w, nf[w])
                    s = start
                    while nf[w] < s + cfg.restart_s:
                        s = nf[w]
                        nf[w], cur[w] = renew(w, s)
                    tend = max(tend, s + cfg.restart_s)
                    alive[w], revive[w] = True, math.inf
                while jp < len(jobs) and jobs[jp][0] <= start:
                    jp += 1
                if jp < len(jobs) and jobs[jp][0] < tend:  # a job event inside the restart
                    start, again = jobs[jp][0], True
                    jp += 1
                    continue
                break
            down += tend - t0
            t = tend
            restarts += 1
            slow = stragglers(restarts)
            stacks, S, load, fetch = (base.copy() if spare else None), 1, b, False
            if mb:
                st.reset()
            redone += committed - last
            committed, samples = last, last_samples
            continue
        committed += 1
        loads.append((load, N - sum(alive)))
        samples += sum(alive) / N if method == "elastic-drop" else \
            (st.covered / N if mb else 1.0)
        done = samples >= cfg.steps
        if C is not None and (committed % C == 0 or done):
            if not done and jp < len(jobs) and jobs[jp][0] <= t:
                continue  # the job is dead: nothing written, the next attempt notices it
            while True:
                if True not in alive:
                    break  # no live group to write it (the core: leader < 0)
                leader = alive.index(True)
                if nf[leader] <= t:
                    kill(leader, t)
                    if not done:
                        pending = True
                        break
                else:
                    t += cfg.checkpoint_s
                    last, last_samples = committed, samples
                    break
    return {"total_s": t, "down_s": down, "full_restarts": restarts, "masked_failures": masked,
            "rejoins": rejoined, "steps_redone": redone, "job_failures": job_fails,
            "samples": samples,
            "loads": loads}


class _MicroState:
    """SPARe-b's assignment in the oracle: the step's least makespan (micro-batch RECTLR's
    incremental kernel, deaths logged in notice order), what each survivor has done in the step,
    and the retry's patch (its least-makespan flow over the lost micro-batches; with drop, the
    uncovered types are dropped and commits weigh covered / N)."""

    def __init__(self, N: int, r: int, b: int, drop: bool, quorum: int) -> None:
        from spare_lib.rectlr.microbatch import microbatch_workspace
        from spare_lib.rectlr.microbatch_inc import microbatch_inc_mode

        self.N, self.b, self.drop, self.quorum = N, b, drop, quorum
        self.stacks = np.ascontiguousarray(ruler_layout(N, r).stacks, dtype=np.int64)
        self.wa, self.wb = microbatch_workspace(self.stacks), microbatch_workspace(self.stacks)
        microbatch_inc_mode(self.wa[6], True)
        self.zero = np.zeros_like(self.stacks)
        self.own = np.zeros_like(self.stacks)
        self.reset()

    def notice(self, w: int) -> None:
        from spare_lib.rectlr.microbatch_inc import microbatch_inc_notice

        microbatch_inc_notice(w, self.wa[6], self.wa[7])

    def _assign(self, alive: list[bool]) -> bool:
        from spare_lib.rectlr.microbatch_inc import (
            microbatch_inc_invalidate,
            microbatch_kernel_inc,
            microbatch_patch_drop,
        )

        al = np.array(alive, dtype=np.bool_)
        if self.covered == self.N:
            out, L, _m = microbatch_kernel_inc(self.stacks, al, self.b, *self.wa)
            if out != 2:
                self.L, self.load = int(L), [int(x) for x in self.wa[3].sum(axis=1)]
                return True
            if not self.drop:
                return False
        out, L, _m = microbatch_patch_drop(self.stacks, al, self.b, self.zero, self.zero, False,
                                           *self.wa)
        microbatch_inc_invalidate(self.wa[6])
        if out == 2:
            return False
        x = np.zeros(self.N, dtype=np.int64)  # micro-batches assigned per type
        np.add.at(x, self.stacks.ravel(), self.wa[3].ravel())
        self.covered = int(np.count_nonzero(x))
        if self.covered < self.quorum or self.covered == 0:
            return False
        self.L, self.load = int(L), [int(v) for v in self.wa[3].sum(axis=1)]
        return True

    def reset(self) -> None:
        from spare_lib.rectlr.microbatch_inc import microbatch_inc_invalidate

        microbatch_inc_invalidate(self.wa[6])
        self.covered = self.N
        self.patch = [0] * self.N
        self._assign([True] * self.N)

    def rejoin(self, alive: list[bool]) -> None:
        from spare_lib.rectlr.microbatch_inc import microbatch_inc_invalidate

        microbatch_inc_invalidate(self.wa[6])
        self.covered = self.N
        if not self._assign(alive):
            # a type with no live holder: possible when the checkpoint leader's death was
            # noticed after the commit and a rejoin comes before the next attempt resolves it
            # (found by hypothesis); the core's rule (spare_mb_rejoin): nothing covered, so the
            # next attempt's resolve finds the wipe-out
            self.covered = 0

    def resolve(self, alive: list[bool], retry: bool) -> str:
        """After an attempt with failures: 'commit', 'retry' or 'wipeout'."""
        from spare_lib.rectlr.microbatch_inc import microbatch_patch, microbatch_patch_drop

        given = self.wb[3] if retry else self.wa[3]
        live = np.array(alive, dtype=np.bool_)
        self.own = np.where(live[:, None], (self.own if retry else 0) + given, 0)
        self.own = np.ascontiguousarray(self.own, dtype=np.int64)
        if not self._assign(alive):
            return "wipeout"
        kernel = microbatch_patch if self.covered == self.N else microbatch_patch_drop
        out, _lp, _lost = kernel(self.stacks, live, self.b, self.own, self.own, False, *self.wb)
        if out == 0:
            return "commit"
        z = self.wb[3]
        # every micro-batch of a covered type is done exactly once by a live holder of it
        x = np.zeros(self.N, dtype=np.int64)
        np.add.at(x, self.stacks.ravel(), (self.own + z).ravel())
        assert np.all(z[~live] == 0) and set(np.unique(x)) <= {0, self.b}
        self.patch = [int(v) for v in z.sum(axis=1)]
        return "retry"
