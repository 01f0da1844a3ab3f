"""RECTLR's incremental kernel for the simulator: :func:`rectlr_kernel_inc` and its workspace.

The same contract and bit-identical results as :func:`spare_lib.rectlr.kernels.rectlr_kernel`
(same cover, same holder index, so Phases 1–2 see the same inputs; tested in
``tests/rectlr/test_kernel_inc.py`` against the stateless kernel), with its state kept across a
failure sequence so that the work per failure event does not grow with N (issue 16):

* deaths are reported one by one (:func:`rectlr_inc_notice`, SPARe's ``notice`` hook) instead
  of found by comparing survivor masks over all N; the survivors are counted, the types left
  uncovered are listed, and only those are re-covered (Phase 0);
* Phase 2 runs on preallocated arrays (:func:`spare_lib.rectlr.mcmf.phase2_assign_ws`), only
  the groups that received a type are checked and rewritten, and every change of the assignment
  is logged and undone to give back the kept cover, repaired for the rewritten rows;
* a sparse patch mode reports "k0 units for every survivor except these few groups"
  (:func:`rectlr_inc_patch_plan`), so the simulator's retry touches only those groups.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib._util.sorting import sort_prefix
from spare_lib.rectlr.kernels import (
    FIXED,
    REORDERED,
    WIPEOUT,
    _phase0_cover,
    _rewrite_row,
    rectlr_workspace,
)
from spare_lib.rectlr.matching import (
    build_holders,
    cover_in_place,
    has_live_holder,
    phase1_depth,
    undo_all,
    undo_log,
)
from spare_lib.rectlr.mcmf import (
    C_LSTAMP,
    C_RECV,
    C_UNDO,
    C_USTAMP,
    W_CHG,
    W_DIST,
    W_DONE,
    W_FREE,
    W_FREE2,
    W_HEAD,
    W_LOAD,
    W_LOG,
    W_LSTAMP,
    W_NXT,
    W_PAR,
    W_PARJ,
    W_PI,
    W_PIL,
    W_PRV,
    W_RECV,
    W_RSTAMP,
    W_TOUCHED,
    W_UM,
    W_UP,
    W_USTAMP,
    W_UT,
    phase2_assign_ws,
    phase2_workspace,
)

# Slots of the int state ``st`` of :func:`rectlr_inc_workspace`: the depth of the kept cover,
# whether the cover is valid, whether the holder index may be stale (stacks reset at a revival);
# the modes (deaths reported by :func:`rectlr_inc_notice`; sparse patch output); the survivors
# counted, deaths logged, free types after Phase 0, groups rewritten by the last reorder and the
# patch of the other survivors; st[_INC_CNT:_INC_CNT + 4] are Phase 2's counters (mcmf C_*).
(_INC_DEPTH, _INC_VALID, _INC_STALE, _INC_LOGGED, _INC_SPARSE, _INC_NALIVE, _INC_NLOG,
 _INC_NFREE, _INC_NCHG, _INC_PDEF) = range(10)
_INC_CNT = 12
_INC_SLOTS = 16


@njit(cache=True)
def rectlr_inc_workspace(stacks):
    """Workspace of :func:`rectlr_kernel_inc`, built once per run (any stacks); O(N·r).

    ``(hold_g, tpos, hcnt, match, matchpos, seen_alive, st, iw, heap)``: the holder index, the
    kept Phase 0 cover, the survivors it was computed for, the int state (slots ``_INC_*``) and
    Phase 2's preallocated search arrays (:func:`spare_lib.rectlr.mcmf.phase2_workspace`).
    """
    N, r = stacks.shape
    hold_g, tpos, hcnt = rectlr_workspace(stacks)
    match = np.empty(N, np.int64)
    matchpos = np.empty(N, np.int64)
    seen_alive = np.zeros(N, np.bool_)
    st = np.zeros(_INC_SLOTS, np.int64)
    iw, heap = phase2_workspace(N, r)
    return hold_g, tpos, hcnt, match, matchpos, seen_alive, st, iw, heap


@njit(cache=True)
def rectlr_inc_mode(st, logged, sparse):
    """Switch :func:`rectlr_kernel_inc`'s modes (both off in a new workspace).

    ``logged``: every death is reported by :func:`rectlr_inc_notice` and every revival by
    :func:`rectlr_inc_invalidate`, so Phase 0 reads the reported deaths instead of comparing
    the survivor masks (O(deaths) instead of O(N)). ``sparse``: ``patch_out`` is written for the
    rewritten groups only (:func:`rectlr_inc_patch_plan` says the rest), not for all N.
    """
    st[_INC_LOGGED] = 1 if logged else 0
    st[_INC_SPARSE] = 1 if sparse else 0
    st[_INC_NLOG] = 0
    st[_INC_VALID] = 0


@njit(cache=True)
def rectlr_inc_notice(w, st, iw):
    """Group w has died (logged mode of :func:`rectlr_inc_mode`; a no-op otherwise)."""
    if st[_INC_LOGGED] != 0:
        iw[W_LOG, st[_INC_NLOG]] = w
        st[_INC_NLOG] += 1


@njit(cache=True)
def rectlr_inc_invalidate(st):
    """The stacks were reset or groups revived outside the kernel: rebuild at the next call."""
    st[_INC_VALID] = 0
    st[_INC_STALE] = 1
    st[_INC_NLOG] = 0


@njit(cache=True)
def rectlr_inc_patch_plan(st, iw):
    """Sparse patch of the last reorder: ``(k0, groups, n)``.

    Every survivor computes ``k0`` stacks on the retry except ``groups[:n]`` (ascending), the
    rewritten ones, whose patch is in ``patch_out``; dead groups compute nothing. ``n`` is 0
    after a 'fixed' or 'wipeout' call, and -1 when not in sparse mode (``patch_out`` is dense).
    """
    if st[_INC_SPARSE] == 0:
        return 0, iw[W_CHG], -1
    return st[_INC_PDEF], iw[W_CHG], st[_INC_NCHG]


@njit(cache=True)
def _uncover(w, stacks, alive, S, hold_g, tpos, hcnt, match, matchpos, free, nfree):
    """Dead group w gives up its covered types; each is re-covered in place or listed free."""
    for p in range(S):
        t = stacks[w, p]
        if match[t] == w:
            match[t] = -1
            if not cover_in_place(t, alive, S, hold_g, tpos, hcnt, match, matchpos):
                free[nfree] = t
                nfree += 1
    return nfree


@njit(cache=True)
def _inc_phase0(stacks, alive, S, hold_g, tpos, hcnt, match, matchpos, seen_alive, st, iw):
    """Phase 0 cover of :func:`_phase0_cover`, kept across calls; lists the free types
    (ascending, in ``iw[W_FREE]``) and returns their number.

    The cover of :func:`_phase0_cover` gives type t its first live holder in group order that
    has t at a position < S: exactly the first j of ``hold_g[t]`` (sorted by group) with
    ``alive`` and ``tpos < S``, i.e. :func:`cover_in_place`. While S, the stacks and the holder
    index are those of the kept cover and groups only die, only the types the newly dead groups
    covered change: O(k·S·r) to re-cover them, after finding the k deaths by one O(N) compare of
    the survivor masks, or, in logged mode, from the reported deaths. Anything else (first call,
    another S, a revival, a reorder that deepened S) rebuilds the cover, O(N·S).

    A rebuild after a revival (``_INC_STALE``: the stacks may have been reset or rewritten, e.g.
    by spare+repair's rejoin) also rebuilds the holder index, so that the deaths that follow are
    re-covered with the holders of the current stacks.
    """
    N = stacks.shape[0]
    free = iw[W_FREE]
    nfree = 0
    rebuild = st[_INC_VALID] == 0 or st[_INC_DEPTH] != S
    if st[_INC_LOGGED] != 0:
        if not rebuild:
            log = iw[W_LOG]
            for i in range(st[_INC_NLOG]):
                w = log[i]
                seen_alive[w] = False
                st[_INC_NALIVE] -= 1
                nfree = _uncover(w, stacks, alive, S, hold_g, tpos, hcnt, match, matchpos, free,
                                 nfree)
        st[_INC_NLOG] = 0
    else:
        for w in range(N):  # one pass: revivals force a rebuild, deaths uncover their types
            a = alive[w]
            if a == seen_alive[w]:
                continue
            seen_alive[w] = a
            if a:
                rebuild = True  # a revival (restart or rejoin): the stacks may have been reset
                st[_INC_STALE] = 1
            elif not rebuild:
                st[_INC_NALIVE] -= 1
                nfree = _uncover(w, stacks, alive, S, hold_g, tpos, hcnt, match, matchpos, free,
                                 nfree)
    if rebuild:
        if st[_INC_STALE] != 0:
            build_holders(stacks, hold_g, tpos, hcnt)
            st[_INC_STALE] = 0
        _phase0_cover(stacks, alive, S, match, matchpos)
        nfree = 0
        n_alive = 0
        for w in range(N):
            seen_alive[w] = alive[w]
            if alive[w]:
                n_alive += 1
            if match[w] < 0:  # w as a type
                free[nfree] = w
                nfree += 1
        st[_INC_NALIVE] = n_alive
        st[_INC_VALID] = 1
        st[_INC_DEPTH] = S
    else:
        sort_prefix(free, nfree)
    st[_INC_NFREE] = nfree
    return nfree


@njit(cache=True)
def _extend_logged(alive, S, src, n, dst, hold_g, tpos, hcnt, match, matchpos, iw, cnt):
    """:func:`extend_zero_cost` on the free types ``src[:n]`` (ascending), logging changes for
    undo; the types left free go to ``dst`` (ascending; ``dst`` may be ``src``). Returns their
    number."""
    ust, ut, um, up = iw[W_USTAMP], iw[W_UT], iw[W_UM], iw[W_UP]
    us = cnt[C_USTAMP]
    k = 0
    for i in range(n):
        t = src[i]
        undo_log(t, match, matchpos, ust, ut, um, up, cnt, us)
        if not cover_in_place(t, alive, S, hold_g, tpos, hcnt, match, matchpos):
            dst[k] = t
            k += 1
    return k


@njit(cache=True)
def _phase2_run(alive, S, stacks, hold_g, tpos, hcnt, match, matchpos, free, nfree, iw, heap, cnt):
    """:func:`spare_lib.rectlr.mcmf.phase2_assign_ws` on the workspace rows, tracking on."""
    cnt[C_LSTAMP] += 1  # fresh per-group lists, as build_match_lists gives before each Phase 2
    cnt[C_RECV] = 0
    lists = (iw[W_HEAD], iw[W_NXT], iw[W_PRV], iw[W_LOAD], iw[W_LSTAMP])
    search = (iw[W_PI], iw[W_DIST], iw[W_PAR], iw[W_PARJ], iw[W_DONE], iw[W_TOUCHED], iw[W_PIL])
    log = (iw[W_USTAMP], iw[W_UT], iw[W_UM], iw[W_UP], iw[W_RECV], iw[W_RSTAMP])
    return phase2_assign_ws(alive, S, stacks, hold_g, tpos, hcnt, match, matchpos, free, nfree,
                            lists, search, log, heap, cnt)


@njit(cache=True)
def _inc_phases12(stacks, alive, S, hold_g, tpos, hcnt, match, matchpos, st, iw, heap, patch_out,
                  exact_patch):
    """:func:`_phases12` on the kept workspace: the same steps, same results, O(work done).

    The survivors are counted in ``st``, the free types listed by Phase 0, Phase 2 explores
    from them only (:func:`spare_lib.rectlr.mcmf.phase2_assign_ws`), and only the groups that
    received a type can have a moved-in type, so only they are checked and rewritten. Every
    change to (match, matchpos) is logged and undone at the end, which gives back the Phase 0
    cover; when S* = S it is then repaired for the free types and the rewritten rows' types
    (the only ones whose holders' positions changed), so the next call stays incremental.
    """
    N, r = stacks.shape
    sparse = st[_INC_SPARSE] != 0
    n_alive = st[_INC_NALIVE]
    s0 = max(S, (N + n_alive - 1) // n_alive)
    cnt = st[_INC_CNT:_INC_CNT + 4]
    cnt[C_USTAMP] += 1
    cnt[C_UNDO] = 0
    free, free2 = iw[W_FREE], iw[W_FREE2]
    nfree = st[_INC_NFREE]
    n2 = _extend_logged(alive, s0, free, nfree, free2, hold_g, tpos, hcnt, match, matchpos, iw, cnt)
    s_star = s0
    if _phase2_run(alive, s0, stacks, hold_g, tpos, hcnt, match, matchpos, free2, n2, iw, heap,
                   cnt) < 0:
        # s0 infeasible (rare): back to the state after the extension at s0, then Phase 1
        undo_all(match, matchpos, iw[W_UT], iw[W_UM], iw[W_UP], cnt)
        cnt[C_USTAMP] += 1
        n2 = _extend_logged(alive, s0, free, nfree, free2, hold_g, tpos, hcnt, match, matchpos, iw,
                            cnt)
        s_star = phase1_depth(alive, S, hold_g, tpos, hcnt, match.copy(), matchpos.copy())
        n2 = _extend_logged(alive, s_star, free2, n2, free2, hold_g, tpos, hcnt, match, matchpos,
                            iw, cnt)
        _phase2_run(alive, s_star, stacks, hold_g, tpos, hcnt, match, matchpos, free2, n2, iw,
                    heap, cnt)
    d0 = (s_star - S) if exact_patch else (1 if s_star > S else 0)
    if not sparse:
        for w in range(N):
            patch_out[w] = d0 if alive[w] else 0
    recv, chg = iw[W_RECV], iw[W_CHG]
    ust, ut, um, up = iw[W_USTAMP], iw[W_UT], iw[W_UM], iw[W_UP]
    us = cnt[C_USTAMP]
    n_recv = cnt[C_RECV]
    sort_prefix(recv, n_recv)
    old = newrow = moved_in = recv[:0]
    chosen = np.zeros(0, np.bool_)
    moved = 0
    nchg = 0
    for i in range(n_recv):
        w = recv[i]
        changed = False
        for p in range(r):
            t = stacks[w, p]
            if match[t] == w:
                if matchpos[t] >= s_star:
                    changed = True
                undo_log(t, match, matchpos, ust, ut, um, up, cnt, us)
        if not changed:
            continue
        if nchg == 0:  # scratch rows of the rewrite, only when a row changes
            old = np.empty(r, np.int64)
            newrow = np.empty(r, np.int64)
            moved_in = np.empty(r, np.int64)
            chosen = np.zeros(r, np.bool_)
        m, patch_out[w] = _rewrite_row(w, stacks, S, s_star, hold_g, tpos, hcnt, match, matchpos,
                                       old, newrow, moved_in, chosen, exact_patch)
        moved += m
        chg[nchg] = w
        nchg += 1
    st[_INC_NCHG] = nchg
    st[_INC_PDEF] = d0
    # restore the Phase 0 cover, then repair it where the stacks changed (same S only)
    undo_all(match, matchpos, ut, um, up, cnt)
    if s_star == S:
        ok = True
        for i in range(nfree):
            if not cover_in_place(free[i], alive, S, hold_g, tpos, hcnt, match, matchpos):
                ok = False
        for i in range(nchg):
            w = chg[i]
            for p in range(r):
                t = stacks[w, p]
                match[t] = -1
                if not cover_in_place(t, alive, S, hold_g, tpos, hcnt, match, matchpos):
                    ok = False
        st[_INC_VALID] = 1 if ok else 0
    return REORDERED, s_star, moved


@njit(cache=True)
def rectlr_kernel_inc(stacks, alive, depth, patch_out, hold_g, tpos, hcnt, match, matchpos,
                      seen_alive, st, iw, heap, exact_patch=False):
    """:func:`rectlr_kernel` with its state kept across a failure sequence (issue 16).

    Same contract and bit-identical results (same cover, same holder index, same searches, so
    every phase sees the same inputs and breaks ties the same way); the workspace comes from
    :func:`rectlr_inc_workspace` and stays valid across restarts (a revival is detected, or
    reported by :func:`rectlr_inc_invalidate`, and the cover rebuilt). Cost: a call that Phase 0
    settles is O(N) for the compare of survivor masks plus O(k·S·r), or O(k·S·r) alone in
    logged mode (:func:`rectlr_inc_mode`); a reorder costs what Phase 2 explores plus the rows
    it rewrites, plus O(N) to write the dense patch unless in sparse mode. O(N·S) rebuilds of
    the cover remain after a revival and after a reorder that deepens S. The stacks must change
    only through this kernel or by a reset that comes with a revival; after any other change
    build a new workspace.
    """
    N = stacks.shape[0]
    sparse = st[_INC_SPARSE] != 0
    st[_INC_NCHG] = 0
    free = _inc_phase0(stacks, alive, depth, hold_g, tpos, hcnt, match, matchpos, seen_alive, st,
                       iw)
    if free == 0:
        if not sparse:
            for w in range(N):
                patch_out[w] = 0
        return FIXED, depth, 0
    if st[_INC_STALE] != 0:
        build_holders(stacks, hold_g, tpos, hcnt)
        st[_INC_STALE] = 0
    st[_INC_VALID] = 0  # Phases 1-2 change the cover (and maybe the stacks); set again if kept
    fl = iw[W_FREE]
    wiped = False
    for i in range(free):
        if not has_live_holder(fl[i], alive, hold_g, hcnt):
            wiped = True
            break
    if wiped:
        if not sparse:
            for w in range(N):
                patch_out[w] = 0
        return WIPEOUT, 0, 0
    return _inc_phases12(stacks, alive, depth, hold_g, tpos, hcnt, match, matchpos, st, iw, heap,
                         patch_out, exact_patch)
