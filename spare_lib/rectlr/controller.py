"""RECTLR's Python API (SPEC §4): one-shot :func:`rectlr` and the incremental :class:`Controller`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from spare_lib._util.validate import check_int
from spare_lib.rectlr._inputs import _validate_inputs
from spare_lib.rectlr.kernels import WIPEOUT, _controller_phase0, _finish_phase2, _phase0_cover
from spare_lib.rectlr.matching import (
    build_holders,
    phase1_depth,
)
from spare_lib.stacking.layout import Layout


@dataclass(frozen=True, eq=False)
class Plan:
    """RECTLR's decision after a failure event (SPEC §4).

    Attributes
    ----------
    outcome : str
        'fixed' (Phase 0: nothing moves), 'reordered' (Phases 1–2 ran) or 'wipeout'.
    depth : int
        S*: the depth every survivor computes from now on (0 on wipe-out).
    stacks : ndarray, shape (N, r)
        New stacks (row w a permutation of group w's hosted types); unchanged on 'fixed' and
        'wipeout'.
    assignment : ndarray, shape (N,)
        ``assignment[t]`` = the live group that computes type t this step; it holds t at a
        position < S* of ``stacks``. All -1 on wipe-out.
    moved : int
        Shards moved into a survivor's first S* positions (= changed entries there), the least
        possible (Phase 2 optimum).
    patch : ndarray, shape (N,)
        Stacks each group recomputes in the retry (capped at 1 per survivor, SPEC §4).
    patch_exact : ndarray, shape (N,)
        Positions < S* each group must compute that it did not compute in this attempt.
    phase_times_s : dict
        Wall time of 'phase0', 'phase1', 'phase2' in seconds (0 for phases not run).
    """

    outcome: str
    depth: int
    stacks: np.ndarray = field(repr=False)
    assignment: np.ndarray = field(repr=False)
    moved: int
    patch: np.ndarray = field(repr=False)
    patch_exact: np.ndarray = field(repr=False)
    phase_times_s: dict[str, float] = field(default_factory=dict)


def _run_phases(st: np.ndarray, al: np.ndarray, S: int, hold_g: np.ndarray | None,
                tpos: np.ndarray | None, hcnt: np.ndarray | None, match: np.ndarray,
                matchpos: np.ndarray, free: int, times: dict[str, float]) -> Plan:
    """Phases 1–2 with timings, shared by :func:`rectlr` and :class:`Controller`.

    ``st`` is rewritten in place on 'reordered'; the Plan gets a read-only copy.
    """
    N = st.shape[0]
    zeros = np.zeros(N, np.int64)
    zeros.setflags(write=False)
    if free == 0:
        return Plan("fixed", S, _frozen(st), _frozen(match), 0, zeros, zeros, times)
    t0 = time.perf_counter()
    s_star = int(phase1_depth(al, S, hold_g, tpos, hcnt, match, matchpos))
    times["phase1"] += time.perf_counter() - t0
    if s_star == 0:
        return Plan("wipeout", 0, _frozen(st), _frozen(np.full(N, -1, np.int64)), 0, zeros, zeros,
                    times)
    t0 = time.perf_counter()
    patch_exact = np.zeros(N, np.int64)
    moved = int(_finish_phase2(st, al, S, s_star, hold_g, tpos, hcnt, match, matchpos,
                               patch_exact))
    times["phase2"] = time.perf_counter() - t0
    return Plan("reordered", s_star, _frozen(st), _frozen(match), moved,
                _frozen(np.minimum(patch_exact, 1)), _frozen(patch_exact), times)


def _frozen(a: np.ndarray) -> np.ndarray:
    c = a.copy()
    c.setflags(write=False)
    return c


def rectlr(stacks: np.ndarray, alive: np.ndarray, depth: int) -> Plan:
    """Run RECTLR (SPEC §4) on the current stacks after failures.

    Parameters
    ----------
    stacks : ndarray of int, shape (N, r)
        Current stacks, row w = group w's stack (initially ``Layout.stacks``); every type must
        be held by exactly r groups. Not modified.
    alive : ndarray of bool, shape (N,)
        Survivors (live and not flagged); at least one.
    depth : int
        Current depth S, 1 ≤ S ≤ r.

    Returns
    -------
    Plan
        See :class:`Plan`. Phase 0 costs O(N·S); Phases 1–2 O(N·r·sqrt(N)) worst case, in
        practice a few shortest-path searches.

    Raises
    ------
    ValueError
        Wrong shapes or types, a stack that is not a permutation, alive all False, or depth
        outside 1..r.

    Examples
    --------
    >>> from spare_lib.stacking import ruler_layout
    >>> lay = ruler_layout(12, 3)
    >>> alive = np.ones(12, bool); alive[[0, 5]] = False
    >>> p = rectlr(lay.stacks, alive, 1)
    >>> p.outcome, p.depth, p.moved
    ('reordered', 2, 0)
    """
    st, al, S = _validate_inputs(stacks, alive, depth)
    st = st.copy()
    N, r = st.shape
    times = {"phase0": 0.0, "phase1": 0.0, "phase2": 0.0}
    t0 = time.perf_counter()
    match = np.empty(N, np.int64)
    matchpos = np.empty(N, np.int64)
    free = int(_phase0_cover(st, al, S, match, matchpos))
    times["phase0"] = time.perf_counter() - t0
    hold_g = tpos = hcnt = None
    if free:
        t0 = time.perf_counter()
        hold_g = np.empty((N, r), np.int64)
        tpos = np.empty((N, r), np.int64)
        hcnt = np.empty(N, np.int64)
        build_holders(st, hold_g, tpos, hcnt)
        times["phase1"] = time.perf_counter() - t0  # index build counted with Phase 1
    plan = _run_phases(st, al, S, hold_g, tpos, hcnt, match, matchpos, free, times)
    return plan


class Controller:
    """RECTLR state kept across a failure sequence (incremental; SPEC §4).

    The controller keeps the stacks, the survivors, the depth S, the holder index and a valid
    assignment of every type to a survivor holding it at a position < S. A failure event
    unassigns only the failed groups' types: Phase 0 costs O(k·S·r) for k failed groups, and
    Phases 1–2 augment from the kept assignment instead of rebuilding it.

    Parameters
    ----------
    layout : Layout
        The base layout (restored by :meth:`restart`).

    Examples
    --------
    >>> from spare_lib.stacking import ruler_layout
    >>> ctl = Controller(ruler_layout(12, 3))
    >>> [ctl.fail(g).outcome for g in (0, 5)]
    ['reordered', 'fixed']
    """

    def __init__(self, layout: Layout) -> None:
        if not isinstance(layout, Layout):
            raise ValueError(f"layout must be a spare_lib.stacking.Layout, got {type(layout).__name__}")
        self.layout = layout
        N, r = layout.N, layout.r
        self._hold_g = np.empty((N, r), np.int64)
        self._hcnt = np.empty(N, np.int64)
        self._tpos = np.empty((N, r), np.int64)
        build_holders(np.ascontiguousarray(layout.stacks, dtype=np.int64), self._hold_g,
                      self._tpos, self._hcnt)
        self._patch = np.zeros(N, np.int64)
        self.restart()

    def restart(self) -> None:
        """Global restart: all groups alive, base layout, S = 1."""
        lay = self.layout
        N = lay.N
        self._stacks = np.array(lay.stacks, dtype=np.int64)
        self._alive = np.ones(N, np.bool_)
        self._depth = 1
        self._wiped = False
        build_holders(self._stacks, self._hold_g, self._tpos, self._hcnt)
        self._live_holders = self._hcnt.copy()
        self._match = np.empty(N, np.int64)
        self._matchpos = np.empty(N, np.int64)
        free = _phase0_cover(self._stacks, self._alive, 1, self._match, self._matchpos)
        if free:  # a custom layout whose level 0 is not a permutation: start deeper
            self._depth = int(phase1_depth(self._alive, 1, self._hold_g, self._tpos, self._hcnt,
                                           self._match, self._matchpos))
            _finish_phase2(self._stacks, self._alive, 1, self._depth, self._hold_g, self._tpos,
                           self._hcnt, self._match, self._matchpos, self._patch)
        self._snapshot = _frozen(self._stacks)

    # read-only state ------------------------------------------------------------------
    @property
    def stacks(self) -> np.ndarray:
        """Current stacks (read-only)."""
        return self._snapshot

    @property
    def alive(self) -> np.ndarray:
        """Current survivors (a read-only copy)."""
        a = self._alive.copy()
        a.setflags(write=False)
        return a

    @property
    def depth(self) -> int:
        """Current depth S (0 after a wipe-out, until :meth:`restart`)."""
        return 0 if self._wiped else self._depth

    @property
    def assignment(self) -> np.ndarray:
        """Current type -> computing group (a read-only copy)."""
        a = self._match.copy()
        a.setflags(write=False)
        return a

    @property
    def wiped(self) -> bool:
        """True after a wipe-out, until :meth:`restart`."""
        return self._wiped

    def fail(self, groups: int | Iterable[int]) -> Plan:
        """Apply one failure event (one or more groups flagged together) and return the Plan.

        Parameters
        ----------
        groups : int or iterable of int
            Distinct live groups in [0, N−1] that failed in this attempt.

        Raises
        ------
        ValueError
            Empty or repeated groups, a group out of range or already dead, or a controller
            in the wiped-out state (call :meth:`restart`).
        """
        if self._wiped:
            raise ValueError("controller is wiped out; call restart() before more failures")
        N = self.layout.N
        gs = [groups] if isinstance(groups, (int, np.integer)) else list(groups)
        if not gs:
            raise ValueError("groups must name at least one failed group, got none")
        arr = np.empty(len(gs), np.int64)
        for i, g in enumerate(gs):
            g = check_int("groups", g, lo=0, hi=N - 1)
            if not self._alive[g]:
                raise ValueError(f"groups must be live groups, group {g} is already dead")
            arr[i] = g
        if np.unique(arr).size != arr.size:
            raise ValueError(f"groups must be distinct, got {arr.tolist()}")
        S = self._depth
        times = {"phase0": 0.0, "phase1": 0.0, "phase2": 0.0}
        t0 = time.perf_counter()
        code, free = _controller_phase0(arr, self._stacks, self._alive, S, self._hold_g,
                                        self._tpos, self._hcnt, self._match, self._matchpos,
                                        self._live_holders)
        times["phase0"] = time.perf_counter() - t0
        zeros = np.zeros(N, np.int64)
        zeros.setflags(write=False)
        if code == WIPEOUT:
            self._wiped = True
            return Plan("wipeout", 0, self._snapshot, _frozen(np.full(N, -1, np.int64)), 0,
                        zeros, zeros, times)
        if free == 0:
            return Plan("fixed", S, self._snapshot, _frozen(self._match), 0, zeros, zeros, times)
        t0 = time.perf_counter()
        s_star = int(phase1_depth(self._alive, S, self._hold_g, self._tpos, self._hcnt,
                                  self._match, self._matchpos))
        times["phase1"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        patch_exact = np.zeros(N, np.int64)
        moved = int(_finish_phase2(self._stacks, self._alive, S, s_star, self._hold_g, self._tpos,
                                   self._hcnt, self._match, self._matchpos, patch_exact))
        times["phase2"] = time.perf_counter() - t0
        self._depth = s_star
        self._snapshot = _frozen(self._stacks)
        patch_exact.setflags(write=False)
        return Plan("reordered", s_star, self._snapshot, _frozen(self._match), moved,
                    _frozen(np.minimum(patch_exact, 1)), patch_exact, times)
