"""SPARe at micro-batch granularity over real worker processes (issue 25, item 4).

Each shard type's data of a step is split into b micro-batches (:meth:`MLPTask.microbatch_bounds`).
A live holder of type t can compute any of t's micro-batches from its own data. The step runs the
protocol of :mod:`.coordinator` with micro-batches instead of whole shards:

1. **Assignment.** The incremental micro-batch RECTLR
   (:class:`spare_lib.rectlr.microbatch_inc.MicrobatchController`) says how many micro-batches of
   each of its types every live group computes, ``counts[g, p]`` (the least makespan L*). Which
   micro-batch indices a group gets is fixed by one rule (:func:`assign_indices`): for every type,
   its outstanding indices in increasing j go to its holders in increasing group id, each
   taking its count. Without failures every group computes the b micro-batches of its stack
   position 0.
2. **Failures mid-step.** A worker killed or hung during the step loses every micro-batch it
   computed in that step (nothing it did was reduced). The flagged groups go to the controller
   (``fail``: the assignment of the following steps), and the rest of *this* step is the
   library's retry patch (:func:`spare_lib.rectlr.microbatch_inc.microbatch_retry_patch`): the
   survivors keep what they finished, and the lost micro-batches are redistributed to live
   holders with the least retry makespan. A failure during the retry patches again, from the
   step's assignment as it then stands (what survivors finished plus what they were handed).
3. **Commit.** Every micro-batch (t, j) of every type has exactly one live computer (checked;
   the owner table is logged in a ``commit`` event). The shard gradient of type t is
   Σ_j (n_j/n) g_{t,j} in increasing j (:func:`.model.shard_from_microbatches`), and the step's
   gradient is the mean over types in increasing t (:func:`.model.aggregate`). Every addition is
   therefore the same as in the failure-free run with b micro-batches, whoever computed what:
   the parameters are bit-identical to it.

Wipe-out (some type has no live holder): ``on_wipeout='restart'`` returns None and the
coordinator restarts from the checkpoint (as with whole shards). ``on_wipeout='drop'``
(SPARe+drop) commits the step with the uncovered types' samples dropped, the gradient being the
mean over the covered types (elastic-drop's weighting); the covered types' missing micro-batches
go to their least-loaded live holder (:func:`drop_patch_counts`: the library's patch refuses a
state with an uncovered type). Before the next step every dead group is replaced by a fresh
process (it rejoins with the current parameters) and the controller restarts from the full set.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from spare_lib.rectlr.microbatch_inc import MicrobatchController, microbatch_retry_patch
from spare_lib.runtime.model import shard_from_microbatches

WIPEOUT_POLICIES: tuple[str, ...] = ("restart", "drop")

Item = tuple[int, int]  # (shard type t, micro-batch index j)


def assign_indices(stacks: np.ndarray, counts: np.ndarray,
                   outstanding: dict[int, list[int]]) -> dict[int, list[Item]]:
    """Which micro-batches each group computes, from per-entry counts (the fixed rule).

    Parameters
    ----------
    stacks : int ndarray (N, r)
        The layout's stacks.
    counts : int ndarray (N, r)
        ``counts[g, p]`` micro-batches of type ``stacks[g, p]`` that group g computes.
    outstanding : dict t -> list of int
        The micro-batch indices of type t still to compute; Σ_g counts of t must equal their
        number.

    Returns
    -------
    dict group -> list of (t, j)
        For every type, its outstanding indices in increasing j go to its holders in
        increasing group id; each group's list is ordered by stack position, then j.
    """
    N, r = stacks.shape
    out: dict[int, list[Item]] = {g: [] for g in range(N) if counts[g].sum() > 0}
    for t in range(N):
        js = sorted(outstanding.get(t, []))
        k = 0
        for g, p in zip(*np.nonzero(stacks == t), strict=True):  # row-major: increasing g
            c = int(counts[g, p])
            if c:
                out[int(g)] += [(t, j) for j in js[k:k + c]]
                k += c
        if k != len(js):
            raise RuntimeError(f"micro-batch plan is invalid: type {t} has {len(js)} outstanding "
                               f"micro-batches, the counts give it {k}")
    pos = {(int(g), int(t)): p for g in range(N) for p, t in enumerate(stacks[g])}
    return {g: sorted(v, key=lambda it, g=g: (pos[g, it[0]], it[1])) for g, v in out.items()}


def drop_patch_counts(stacks: np.ndarray, alive: np.ndarray,
                      outstanding: dict[int, list[int]]) -> tuple[np.ndarray, list[int]]:
    """Counts for a wipe-out step under SPARe+drop: covered types only, least-loaded holder.

    Each outstanding micro-batch of a type with a live holder goes, in order of (t, j), to the
    live holder of t with the fewest micro-batches so far (ties: lowest group id). Returns the
    counts and the sorted list of uncovered types (dropped from the step).
    """
    N, r = stacks.shape
    counts = np.zeros((N, r), np.int64)
    load = np.zeros(N, np.int64)
    dropped = []
    for t in range(N):
        gs, ps = np.nonzero((stacks == t) & alive[:, None])
        if gs.size == 0:
            dropped.append(t)
            continue
        for _ in outstanding.get(t, []):
            i = int(np.lexsort((gs, load[gs]))[0])
            counts[gs[i], ps[i]] += 1
            load[gs[i]] += 1
    return counts, dropped


class MicrobatchEngine:
    """One step of SPARe with b micro-batches per shard, over the coordinator's worker pool.

    Parameters
    ----------
    co : the coordinator (``spare_lib.runtime.coordinator._Coordinator``)
        Provides the pool, the injector phases, ``_send_compute``/``_collect``/
        ``_allreduce_poll`` and the event log.
    b : int
        Micro-batches per shard.
    on_wipeout : str
        'restart' or 'drop' (module docstring).
    """

    def __init__(self, co: Any, b: int, on_wipeout: str) -> None:
        self.co, self.b, self.on_wipeout = co, int(b), on_wipeout
        self.stacks = np.array(co.layout.stacks, dtype=np.int64)
        self.N = self.stacks.shape[0]
        self.microbatches_computed = 0
        self.dropped_types = 0
        self.repair_pending = False
        self.reset()

    def reset(self) -> None:
        """All groups alive: a fresh controller (start, global restart, repair after a drop)."""
        self.controller = MicrobatchController(self.stacks, self.b)
        self.counts = np.array(self.controller.plan.counts)
        self.makespan = int(self.controller.makespan)
        self.co.depth = math.ceil(self.makespan / self.b)

    def _repair(self, step: int) -> None:
        missing = [w for w in range(self.N) if not self.co.pool.alive(w)]
        if missing:
            self.co.pool.start(missing)
            self.co._log("replaced", step, workers=missing)
        self.reset()
        self.repair_pending = False

    def _alive(self) -> np.ndarray:
        return np.array([self.co.pool.alive(w) for w in range(self.N)], dtype=bool)

    def _done(self, computed: dict[int, dict[Item, Any]]) -> np.ndarray:
        done = np.zeros_like(self.counts)
        for g, items in computed.items():
            row = {int(t): p for p, t in enumerate(self.stacks[g])}
            for t, _ in items:
                done[g, row[t]] += 1
        return done

    def _outstanding(self, computed: dict[int, dict[Item, Any]]) -> dict[int, list[int]]:
        have = {it for items in computed.values() for it in items}
        return {t: [j for j in range(self.b) if (t, j) not in have] for t in range(self.N)}

    def _send(self, requests: dict[int, list[Item]], step: int, attempt: int,
              theta: np.ndarray, computed: dict, flagged: set[int], partial: dict[int, str],
              phase: str) -> None:
        co = self.co
        co._send_compute(requests, step, attempt, theta, flagged)
        co._fire(step, (phase,))
        if phase == "compute":
            co._fire(step, ("partial",), partial)
        co._collect(requests, step, attempt, computed, partial, flagged)
        if phase == "compute":
            co._fire(step, ("allreduce",))
        co._allreduce_poll(step, attempt, flagged)

    def step(self, step: int, theta: np.ndarray, allow_failures: bool
             ) -> dict[int, tuple[float, np.ndarray]] | None:
        """Run one step; {type: (loss, grad)} of the committed types, or None on a wipe-out
        that restarts."""
        co = self.co
        if self.repair_pending:
            self._repair(step)
        co._fire(step, ("before_compute",))
        live = co.pool.live()
        computed: dict[int, dict[Item, Any]] = {w: {} for w in live}
        requests = assign_indices(self.stacks, self.counts,
                                  {t: list(range(self.b)) for t in range(self.N)})
        flagged: set[int] = set()
        partial: dict[int, str] = {}
        self._send(requests, step, 0, theta, computed, flagged, partial, "compute")
        if not flagged:
            co._fire(step, ("patch",))  # no retry in this step: noticed at the next poll
        step_counts = self.counts.copy()  # the step's assignment as it stands
        dropped: list[int] = []
        attempt = 0
        while flagged:
            for w in sorted(flagged):
                co.pool.retire(w)
                computed.pop(w, None)
            if not allow_failures:
                raise RuntimeError(f"worker(s) {sorted(flagged)} failed in a failure-free run "
                                   f"at step {step}")
            alive = self._alive()
            done = self._done(computed)
            outcome, retry = self._plan(step, sorted(flagged), alive, step_counts, done, attempt)
            if outcome is None:
                return None
            if outcome == "drop":
                retry, dropped = drop_patch_counts(self.stacks, alive, self._outstanding(computed))
            step_counts = done + retry
            attempt += 1
            flagged = set()
            outstanding = self._outstanding(computed)
            for t in dropped:
                outstanding[t] = []
            requests = assign_indices(self.stacks, retry, outstanding)
            n_patch = int(retry.sum())
            co.events[-1]["patch_microbatches"] = n_patch
            if n_patch == 0:
                co._fire(step, ("patch",))
                break
            self._send(requests, step, attempt, theta, computed, flagged, partial, "patch")
        return self._commit(step, computed, dropped)

    def _plan(self, step: int, failed: list[int], alive: np.ndarray, step_counts: np.ndarray,
              done: np.ndarray, attempt: int) -> tuple[str | None, np.ndarray]:
        """Controller update and the retry's counts; ('drop', _) or (None, _) on a wipe-out."""
        co = self.co
        wiped = self.repair_pending
        if not wiped:
            plan = self.controller.fail(np.array(failed, dtype=np.int64))
            wiped = plan.outcome == "wipeout"
            if not wiped:
                self.counts = np.array(plan.counts)
                self.makespan = int(plan.makespan)
        co._log("plan", step, failed=failed, outcome="wipeout" if wiped else plan.outcome,
                makespan=0 if wiped else self.makespan, attempt=attempt,
                depth=0 if wiped else math.ceil(self.makespan / self.b))
        if wiped:
            if self.on_wipeout == "restart":
                return None, step_counts
            self.repair_pending = True
            return "drop", step_counts
        co.depth = math.ceil(self.makespan / self.b)
        patch = microbatch_retry_patch(self.stacks, alive, self.b, step_counts, done)
        co.events[-1]["patch_makespan"] = int(patch.makespan)
        co.events[-1]["lost_microbatches"] = int(patch.moved)
        return "patch", np.array(patch.counts)

    def _commit(self, step: int, computed: dict[int, dict[Item, Any]], dropped: list[int]
                ) -> dict[int, tuple[float, np.ndarray]]:
        """Check that every micro-batch of every covered type has exactly one live computer,
        log the owner table, and build the per-type results in increasing j."""
        co = self.co
        owner = np.full((self.N, self.b), -1, np.int64)
        n_live_computations = 0
        for w in sorted(computed):
            if not co.pool.alive(w):
                continue
            held = set(int(t) for t in self.stacks[w])
            for t, j in computed[w]:
                n_live_computations += 1
                if owner[t, j] != -1 or t not in held:
                    raise RuntimeError(f"micro-batch ({t}, {j}) of step {step} computed twice or "
                                       f"by a non-holder (groups {owner[t, j]} and {w})")
                owner[t, j] = w
        covered = [t for t in range(self.N) if t not in dropped]
        if not covered:
            raise RuntimeError(f"every shard type lost its holders at step {step}: nothing to "
                               "average")
        missing = [(t, j) for t in covered for j in range(self.b) if owner[t, j] == -1]
        if missing:
            raise RuntimeError(f"step {step} would commit without micro-batches {missing[:5]}")
        self.microbatches_computed += int(sum(len(v) for v in computed.values()))
        co._log("commit", step, b=self.b, owner=owner.tolist(), live=co.pool.live(),
                live_computations=n_live_computations, dropped_types=list(dropped))
        if dropped:
            self.dropped_types += len(dropped)
            co._log("dropped", step, types=list(dropped))
        return {t: shard_from_microbatches(co.task, [computed[int(owner[t, j])][(t, j)]
                                                     for j in range(self.b)])
                for t in covered}


def verify_commit_log(run: Any, stacks: np.ndarray) -> int:
    """Check a micro-batch run's ``commit`` events: each micro-batch exactly once, live holder.

    For every committed step: every micro-batch (t, j) of every covered type has an owner that
    was alive at the commit and holds t; dropped types have none; and the survivors computed
    exactly (covered types) · b micro-batches, so none twice.

    Parameters
    ----------
    run : TrainingRun
        A run with b > 1 or SPARe+drop (those log ``commit`` events).
    stacks : int ndarray (N, r)
        The layout's stacks.

    Returns
    -------
    int
        Number of commits checked (one per committed step execution).

    Raises
    ------
    AssertionError
        Naming the first step and micro-batch that break the rule.
    """
    stacks = np.asarray(stacks)
    commits = [e for e in run.events if e["kind"] == "commit"]
    for c in commits:
        owner, live, drop = np.asarray(c["owner"]), set(c["live"]), set(c["dropped_types"])
        for t in range(owner.shape[0]):
            for j in range(owner.shape[1]):
                g = int(owner[t, j])
                ok = g == -1 if t in drop else (g in live and t in stacks[g])
                assert ok, f"step {c['step']}: micro-batch ({t}, {j}) owned by {g}"
        n_cov = owner.shape[0] - len(drop)
        assert c["live_computations"] == n_cov * owner.shape[1], \
            f"step {c['step']}: {c['live_computations']} live computations for {n_cov} types"
    return len(commits)
