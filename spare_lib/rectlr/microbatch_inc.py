"""Micro-batch RECTLR along a failure sequence, and the retry's patch (issue 25).

Incremental kernel
------------------
:func:`microbatch_kernel_inc` keeps the flow ``y`` of :mod:`spare_lib.rectlr.microbatch` from
one failure event to the next, as :mod:`spare_lib.rectlr.kernels_inc` keeps RECTLR's cover:

* deaths are found by one O(N) compare of the survivor masks, or reported one by one by
  :func:`microbatch_inc_notice` (logged mode, :func:`microbatch_inc_mode`), O(r) each;
* a dead group's micro-batches go back to its types (the only free micro-batches), and Dinic
  re-routes just those, along chains of holders (augmenting paths shift other holders' work
  one step each); L is raised to max(L, ⌈N·b/n_live⌉) first and then only by Dinkelbach steps
  on a failed search, so it stays the least makespan: the live set only shrinks, hence L* never
  decreases, and a flow feasible at L stays feasible when L grows.

The result is the least makespan L*, the same as the stateless kernel's (tested event by event);
the assignment itself may differ (both are optimal). ``moved`` counts the micro-batches handed to
a live holder that did not compute them before the event; the changed entries are
``ew[EW_LOG, :st[ST_NCHG]]`` (flat indices g·r + p, previous values in ``ew[EW_OLD]``).

A revival (a group alive again: restart, rejoin) or a stack reset is not incremental: it is
detected (compare mode) or reported by :func:`microbatch_inc_invalidate`, and the next call
solves from scratch. The rows of ``stacks`` may be permuted only with an invalidation (``y`` is
indexed by stack position).

Retry patch
-----------
When groups fail mid-step, the survivors keep the micro-batches they finished; everything the
dead groups computed is lost (unless ``keep_dead_done``: micro-batches already reduced). The
retry must compute, for every type t, the rest R_t = b − Σ_{kept g} done[g, p_t], on live
holders, with the least retry makespan max_g Σ_p z[g, p]. It is the same flow problem with
demands R_t, solved as a second small flow (:func:`microbatch_patch`): warm start z = y − done
on the survivors (what they still had to do), free micro-batches = the dead groups' share,
lower bound max(⌈Σ_t R_t/n_live⌉, max_t ⌈R_t/h_t⌉), then the same Dinic/Dinkelbach search.

Numba contract
--------------
``microbatch_kernel_inc(stacks, alive, b, *ws) -> (outcome, L, moved)``, ``ws`` from
:func:`~spare_lib.rectlr.microbatch.microbatch_workspace`; outcome 0 'kept' (the dead groups
computed nothing), 1 'rerouted', 2 'wipeout' (L = 0; the next call solves from scratch);
``moved`` = -1 when the call solved from scratch (first call, after a revival or a change of b).

``microbatch_patch(stacks, alive, b, y_step, done, keep_dead_done, *ws2) -> (outcome, L_patch,
lost)`` writes the retry's counts into ``ws2[3]`` (``z``), using a second workspace ``ws2``
(its own flow; the main one is untouched). ``y_step`` is the assignment of the failed step (the
main workspace's ``y`` *before* the incremental kernel processes the deaths), ``done`` int64
(N, r) with 0 ≤ done ≤ y_step; ``lost`` is the number of micro-batches to redistribute.

``microbatch_patch_drop(...)``, same arguments: SPARe-b+drop's patch, in which a type without a
live holder is dropped (no demand) instead of a wipe-out (outcome 2 only when no group is live);
with ``y_step = done = 0`` it is the covered types' least-makespan assignment from scratch.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numba import njit

from spare_lib._util.validate import check_int
from spare_lib.rectlr.microbatch import (
    IW_DLOG,
    IW_FREE,
    KEPT,
    MB_OUTCOMES,
    MB_WIPEOUT,
    NV_DEM,
    NV_LIVE,
    NV_LOAD,
    NV_NEED,
    REROUTED,
    ST_B,
    ST_L,
    ST_LOGGED,
    ST_NALIVE,
    ST_NFREE,
    ST_NLOG,
    ST_STALE,
    ST_VALID,
    ST_WARM,
    MicrobatchPlan,
    _add_free,
    _as_stacks,
    _begin_log,
    _count_live,
    _frozen,
    _log_entry,
    _moved,
    check_microbatches,
    max_flow_search,
    microbatch_workspace,
    solve_from_scratch,
    trim_to,
)
from spare_lib.stacking.layout import Layout


@njit(cache=True)
def microbatch_inc_mode(st, logged, warm=True):
    """Modes of :func:`microbatch_kernel_inc`: deaths reported by :func:`microbatch_inc_notice`
    (``logged``) or found by comparing masks; solves from scratch warm-started from RECTLR's S*
    (``warm``, default) or cold. Forces a solve from scratch at the next call."""
    st[ST_LOGGED] = 1 if logged else 0
    st[ST_WARM] = 1 if warm else 0
    st[ST_NLOG] = 0
    st[ST_VALID] = 0


@njit(cache=True)
def microbatch_inc_notice(g, st, iw):
    """Group g has died (logged mode; a no-op otherwise)."""
    if st[ST_LOGGED] != 0:
        iw[IW_DLOG, st[ST_NLOG]] = g
        st[ST_NLOG] += 1


@njit(cache=True)
def microbatch_inc_invalidate(st):
    """Groups revived or stacks reset outside the kernel: solve from scratch at the next call."""
    st[ST_VALID] = 0
    st[ST_STALE] = 1
    st[ST_NLOG] = 0


@njit(cache=True)
def _kill(g, stacks, y, nv, seen, st, iw, ew):
    """Dead group g hands its micro-batches back to its types; True if a type is wiped out."""
    r = stacks.shape[1]
    load, dem, live = nv[NV_LOAD], nv[NV_DEM], nv[NV_LIVE]
    seen[g] = False
    st[ST_NALIVE] -= 1
    load[g] = 0
    wiped = False
    for p in range(r):
        t = stacks[g, p]
        live[t] -= 1
        if live[t] == 0:
            wiped = True
        if y[g, p] > 0:
            _add_free(t, st, iw, nv)
            _log_entry(g, p, r, y, st, ew)
            dem[t] += y[g, p]
            y[g, p] = 0
    return wiped


@njit(cache=True)
def microbatch_kernel_inc(stacks, alive, b, hold_g, tpos, hcnt, y, nv, seen, st, iw, ew):
    """Least makespan kept across a failure sequence; contract in the module docstring."""
    N = stacks.shape[0]
    if st[ST_VALID] == 0 or st[ST_B] != b:
        out, L, _ = solve_from_scratch(stacks, alive, b, st[ST_WARM] != 0, hold_g, tpos, hcnt,
                                       y, nv, seen, st, iw, ew)
        return out, L, -1
    _begin_log(st)
    st[ST_NFREE] = 0
    wiped = False
    if st[ST_LOGGED] != 0:
        for i in range(st[ST_NLOG]):
            g = iw[IW_DLOG, i]
            if seen[g]:
                wiped |= _kill(g, stacks, y, nv, seen, st, iw, ew)
        st[ST_NLOG] = 0
    else:
        for w in range(N):
            if alive[w] == seen[w]:
                continue
            if alive[w]:  # a revival: not incremental
                st[ST_STALE] = 1
                out, L, _ = solve_from_scratch(stacks, alive, b, st[ST_WARM] != 0, hold_g, tpos,
                                               hcnt, y, nv, seen, st, iw, ew)
                return out, L, -1
            wiped |= _kill(w, stacks, y, nv, seen, st, iw, ew)
    if wiped:
        st[ST_VALID] = 0
        return MB_WIPEOUT, 0, 0
    if st[ST_NFREE] == 0:
        return KEPT, st[ST_L], 0
    n = st[ST_NALIVE]
    L = max(st[ST_L], (N * b + n - 1) // n)
    L = max_flow_search(stacks, alive, L, hold_g, tpos, hcnt, y, nv, st, iw, ew)
    if L == 0:  # pragma: no cover - a wiped type is caught above
        st[ST_VALID] = 0
        return MB_WIPEOUT, 0, 0
    return REROUTED, L, _moved(y, alive, st, ew)


@njit(cache=True)
def _patch(stacks, alive, b, y_step, done, keep_dead_done, drop, hold_g, tpos, hcnt, z, nv,
           seen, st, iw, ew):
    """Body of :func:`microbatch_patch` (``drop`` False) and :func:`microbatch_patch_drop`."""
    N, r = stacks.shape
    st[ST_VALID] = 0  # this workspace now holds a patch, not a kept step assignment
    st[ST_B] = b
    _begin_log(st)
    if _count_live(alive, hold_g, hcnt, nv, seen, st) and not drop:
        return MB_WIPEOUT, 0, 0
    load, need, dem, live = nv[NV_LOAD], nv[NV_NEED], nv[NV_DEM], nv[NV_LIVE]
    for t in range(N):
        need[t] = b
        dem[t] = b
    for g in range(N):
        load[g] = 0
        keep = alive[g] or keep_dead_done
        for p in range(r):
            t = stacks[g, p]
            if keep:
                need[t] -= done[g, p]
                dem[t] -= done[g, p]
            if alive[g]:
                z[g, p] = y_step[g, p] - done[g, p]
                load[g] += z[g, p]
                dem[t] -= z[g, p]
            else:
                z[g, p] = 0
    n = st[ST_NALIVE]
    if n == 0:
        st[ST_L] = 0
        return MB_WIPEOUT, 0, 0
    tot = 0
    lost = 0
    st[ST_NFREE] = 0
    lb = 0
    for t in range(N):
        if live[t] == 0:  # drop: an uncovered type's micro-batches are dropped, not assigned
            need[t] = 0
            dem[t] = 0
            continue
        tot += need[t]
        if need[t] > 0:
            lb = max(lb, (need[t] + live[t] - 1) // live[t])
        if dem[t] > 0:
            lost += dem[t]
            iw[IW_FREE, st[ST_NFREE]] = t
            st[ST_NFREE] += 1
    if tot == 0:
        st[ST_L] = 0
        return KEPT, 0, 0
    lb = max(lb, (tot + n - 1) // n)
    trim_to(lb, stacks, z, nv, st, iw, ew)
    L = max_flow_search(stacks, alive, lb, hold_g, tpos, hcnt, z, nv, st, iw, ew)
    return REROUTED, L, lost


@njit(cache=True)
def microbatch_patch(stacks, alive, b, y_step, done, keep_dead_done, hold_g, tpos, hcnt, z, nv,
                     seen, st, iw, ew):
    """The retry's patch as a second flow into ``z``; contract in the module docstring."""
    return _patch(stacks, alive, b, y_step, done, keep_dead_done, False, hold_g, tpos, hcnt, z,
                  nv, seen, st, iw, ew)


@njit(cache=True)
def microbatch_patch_drop(stacks, alive, b, y_step, done, keep_dead_done, hold_g, tpos, hcnt, z,
                          nv, seen, st, iw, ew):
    """:func:`microbatch_patch` for SPARe+drop: the types without a live holder are dropped
    (no demand) instead of a wipe-out, and the covered types' rest is assigned with the least
    makespan. With ``y_step = done = 0`` it is a cold least-makespan assignment of the covered
    types. Returns ``(outcome, L, lost)``; outcome 2 only when no group is alive."""
    return _patch(stacks, alive, b, y_step, done, keep_dead_done, True, hold_g, tpos, hcnt, z,
                  nv, seen, st, iw, ew)


# --------------------------------------------------------------------------- Python API

def _check_counts(name: str, a: object, shape: tuple[int, int]) -> np.ndarray:
    arr = np.asarray(a)
    if arr.shape != shape or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be an integer array of shape {shape}, got shape "
                         f"{arr.shape}, dtype {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} must be >= 0, got minimum {int(arr.min())}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def microbatch_retry_patch(layout: Layout | np.ndarray, alive: object, b: int, counts: object,
                           done: object, *, keep_dead_done: bool = False) -> MicrobatchPlan:
    """The retry's patch after failures mid-step, as a least-makespan flow (issue 25).

    Parameters
    ----------
    layout : Layout or ndarray (N, r)
        The layout or its stacks.
    alive : bool ndarray (N,)
        Survivors after the failures.
    b : int
        Micro-batches per shard, b ≥ 1.
    counts : int ndarray (N, r)
        The failed step's assignment (``MicrobatchPlan.counts``): every type's b micro-batches.
    done : int ndarray (N, r)
        Micro-batches each group had finished, 0 ≤ done ≤ counts.
    keep_dead_done : bool
        Whether the dead groups' finished micro-batches are kept (already reduced) or lost.

    Returns
    -------
    MicrobatchPlan
        ``counts`` = what each survivor computes in the retry, ``makespan`` its least maximum,
        ``moved`` the micro-batches to redistribute.
    """
    st, al = _as_stacks(layout, alive)
    b = check_microbatches(b)
    y = _check_counts("counts", counts, st.shape)
    d = _check_counts("done", done, st.shape)
    x = np.zeros((st.shape[0], st.shape[0]), np.int64)
    np.add.at(x, (st.ravel(), np.repeat(np.arange(st.shape[0]), st.shape[1])), y.ravel())
    if np.any(x.sum(axis=1) != b):
        t = int(np.flatnonzero(x.sum(axis=1) != b)[0])
        raise ValueError(f"counts must give every type b = {b} micro-batches, type {t} has "
                         f"{int(x.sum(axis=1)[t])}")
    if np.any(d > y):
        raise ValueError("done must be <= counts entry by entry (a group finishes only what it "
                         "was assigned)")
    ws = microbatch_workspace(st)
    out, L, lost = microbatch_patch(st, al, b, y, d, bool(keep_dead_done), *ws)
    return MicrobatchPlan(MB_OUTCOMES[int(out)], int(L), _frozen(ws[3]), _frozen(st), 0, int(lost))


class MicrobatchController:
    """Incremental micro-batch RECTLR for notebooks and tests (issue 25).

    Parameters
    ----------
    layout : Layout or ndarray (N, r)
        The layout or its stacks.
    b : int
        Micro-batches per shard, b ≥ 1.
    logged : bool
        Report deaths to the kernel one by one (the event core's mode) instead of comparing masks.

    Examples
    --------
    >>> from spare_lib.stacking import ruler_layout
    >>> ctl = MicrobatchController(ruler_layout(12, 3), 4)
    >>> ctl.makespan, ctl.fail([0]).makespan
    (4, 5)
    """

    def __init__(self, layout: Layout | np.ndarray, b: int, *, logged: bool = True) -> None:
        self.stacks, self.alive = _as_stacks(layout, np.ones(
            (layout.stacks if isinstance(layout, Layout) else np.asarray(layout)).shape[0], bool))
        self.b = check_microbatches(b)
        self.ws = microbatch_workspace(self.stacks)
        microbatch_inc_mode(self.ws[6], bool(logged))
        self._prev_counts = self.ws[3].copy()
        self.plan = self._call()

    def _call(self) -> MicrobatchPlan:
        out, L, moved = microbatch_kernel_inc(self.stacks, self.alive, self.b, *self.ws)
        return MicrobatchPlan(MB_OUTCOMES[int(out)], int(L), _frozen(self.ws[3]),
                              _frozen(self.stacks), 0, int(moved))

    @property
    def makespan(self) -> int:
        """L* of the current survivors (0 after a wipe-out)."""
        return self.plan.makespan

    def fail(self, groups: Iterable[int]) -> MicrobatchPlan:
        """Report failed groups (live ones, distinct) and get the new assignment."""
        N = self.stacks.shape[0]
        gs = [check_int("groups", g, lo=0, hi=N - 1) for g in groups]
        if len(set(gs)) != len(gs):
            raise ValueError(f"groups must be distinct, got {gs!r}")
        for g in gs:
            if not self.alive[g]:
                raise ValueError(f"groups must be alive, group {g} is already dead")
        if self.plan.outcome == "wipeout":
            raise ValueError("the controller is wiped out; build a new one (global restart)")
        self._prev_counts = self.ws[3].copy()
        for g in gs:
            self.alive[g] = False
            microbatch_inc_notice(g, self.ws[6], self.ws[7])
        self.plan = self._call()
        return self.plan

    def patch(self, done: object, *, keep_dead_done: bool = False) -> MicrobatchPlan:
        """Retry patch of the step during which the last :meth:`fail` happened.

        ``done`` (N, r): micro-batches each group had finished of the assignment in force
        before that failure (0 ≤ done ≤ those counts).
        """
        return microbatch_retry_patch(self.stacks, self.alive, self.b, self._prev_counts, done,
                                      keep_dead_done=keep_dead_done)
