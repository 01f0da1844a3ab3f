"""Live groups sorted by next failure time, for the sampled barrier (:mod:`.barrier`).

The live groups ordered by their next failure time, for the core's sampled path. Between a
global restart (or a rejoin) and the next, a live group's nf never changes and a dead group
stays dead, so an order built then stays valid: dead entries are skipped (and dropped from the
front), and the groups whose clocks fire soonest are at the front. A step reads the few entries
with nf up to its threshold instead of comparing all N. Only a front of the soonest clocks is
sorted (a split at about the (N/64)-th clock, O(N), then a sort of those); the others are sorted
a batch at a time when the simulated time reaches the front's horizon.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def index_buffers(N):  # pragma: no cover - compiled
    """The sorted index's arrays ``(ix_w, ix_key, ix_meta)`` (:func:`index_build`).

    ``ix_w[:L]`` are groups in ascending (key, group) order with keys ``ix_key[:L]`` (their nf
    when indexed), L = ``ix_meta[0]``, and ``ix_meta[1]`` is the first entry not known dead;
    ``ix_w[N:N + ix_meta[2]]`` are the other live groups, unsorted, all with nf > ``ix_key[N]``.
    An entry is current while its group is alive. ``ix_w[2N:4N]``, ``ix_key[N+1:]`` and
    ``ix_meta[3]`` are scratch and a stamp for :func:`index_rejoin`.
    """
    ix_w = np.empty(4 * N, np.int64)
    ix_w[3 * N:] = -1  # index_rejoin's stamps (they start at 1)
    return ix_w, np.empty(2 * N + 1, np.float64), np.zeros(4, np.int64)


@njit(cache=True)
def index_rejoin(alive, nf, ix_w, ix_key, ix_meta):  # pragma: no cover - compiled
    """Groups were revived with new clocks (a rejoin): keep the current entries, insert the
    groups that have none. O(N) compares, O(k log k) for k insertions, nothing allocated but
    the k-sort.

    A front entry is current if its group is alive and its key is the group's nf (a revived
    group's clock was renewed after its entry was made); a rest entry if its group is alive and
    its nf is past the horizon ``ix_key[N]``. Every other live group is inserted.
    """
    N = alive.shape[0]
    stamp = ix_meta[3] + 1
    ix_meta[3] = stamp
    seen = ix_w[3 * N:]
    H = ix_key[N]
    L = 0
    for i in range(ix_meta[1], ix_meta[0]):
        w = ix_w[i]
        if alive[w] and ix_key[i] == nf[w] and seen[w] != stamp:
            seen[w] = stamp
            ix_w[L] = w
            ix_key[L] = ix_key[i]
            L += 1
    R = 0
    for i in range(ix_meta[2]):
        w = ix_w[N + i]
        if alive[w] and seen[w] != stamp and nf[w] > H:
            seen[w] = stamp
            ix_w[N + R] = w
            R += 1
    k = 0
    for w in range(N):
        if alive[w] and seen[w] != stamp:
            if nf[w] > H:
                ix_w[N + R] = w
                R += 1
            else:
                ix_w[2 * N + k] = w
                ix_key[N + 1 + k] = nf[w]
                k += 1
    if k > 0:
        order = np.argsort(ix_key[N + 1:N + 1 + k], kind="mergesort")
        i, j, o = L - 1, k - 1, L + k - 1
        while j >= 0:  # merge from the back: the kept front [0, L) and the k new entries
            wj = ix_w[2 * N + order[j]]
            kj = ix_key[N + 1 + order[j]]
            if i >= 0 and (ix_key[i] > kj or (ix_key[i] == kj and ix_w[i] > wj)):
                ix_w[o] = ix_w[i]
                ix_key[o] = ix_key[i]
                i -= 1
            else:
                ix_w[o] = wj
                ix_key[o] = kj
                j -= 1
            o -= 1
    ix_meta[0] = L + k
    ix_meta[1] = 0
    ix_meta[2] = R


@njit(cache=True)
def _index_extend(alive, nf, ix_w, ix_key, ix_meta):  # pragma: no cover - compiled
    """Move the next batch of the soonest live clocks from the unsorted rest to the sorted
    front: a horizon P at about the (N/64)-th smallest clock (a quantile of 255 evenly spaced
    samples), one pass to split the rest at P, a sort of the batch. O(rest)."""
    N = alive.shape[0]
    L = ix_meta[0]
    R = 0
    for i in range(ix_meta[2]):  # the rest with its clocks in scratch, dead groups dropped
        w = ix_w[N + i]
        if alive[w]:
            ix_w[N + R] = w
            ix_key[N + 1 + R] = nf[w]
            R += 1
    if R == 0:
        ix_meta[2] = 0
        ix_key[N] = np.inf
        return
    K = max(64, N >> 6)
    P = np.inf
    if R > K:
        m = 255
        smp = np.empty(m, np.float64)
        for j in range(m):
            smp[j] = ix_key[N + 1 + (j * R) // m]
        smp.sort()
        P = smp[(K * m) // R]
    ns = 0
    kr = 0
    for i in range(R):
        w = ix_w[N + i]
        x = ix_key[N + 1 + i]
        if x <= P:
            ix_w[L + ns] = w
            ix_key[L + ns] = x
            ns += 1
        else:
            ix_w[N + kr] = w
            kr += 1
    order = np.argsort(ix_key[L:L + ns], kind="mergesort")  # stable: ties in group order
    tw = ix_w[2 * N:2 * N + ns]
    tk = ix_key[N + 1:N + 1 + ns]
    for j in range(ns):
        tw[j] = ix_w[L + order[j]]
        tk[j] = ix_key[L + order[j]]
    for j in range(ns):
        ix_w[L + j] = tw[j]
        ix_key[L + j] = tk[j]
    ix_meta[0] = L + ns
    ix_meta[2] = kr
    ix_key[N] = P if kr > 0 else np.inf


@njit(cache=True)
def index_build(alive, nf, ix_w, ix_key, ix_meta):  # pragma: no cover - compiled
    """Index the live groups by (nf, group), at the start and after a restart (every clock is
    new). O(N), plus a sort of the first batch."""
    N = alive.shape[0]
    R = 0
    for w in range(N):
        if alive[w]:
            ix_w[N + R] = w
            R += 1
    ix_meta[0] = 0
    ix_meta[1] = 0
    ix_meta[2] = R
    ix_key[N] = -np.inf
    _index_extend(alive, nf, ix_w, ix_key, ix_meta)


@njit(cache=True)
def _front_upto(x, alive, nf, ix_w, ix_key, ix_meta):  # pragma: no cover - compiled
    """Extend the sorted front until it holds every live group with nf ≤ x; returns its length."""
    N = alive.shape[0]
    while ix_meta[2] > 0 and x > ix_key[N]:
        _index_extend(alive, nf, ix_w, ix_key, ix_meta)
    return ix_meta[0]


@njit(cache=True)
def _index_front(alive, ix_w, ix_meta):  # pragma: no cover - compiled
    """Drop the dead entries at the front; returns the first live entry."""
    h = ix_meta[1]
    L = ix_meta[0]
    while h < L and not alive[ix_w[h]]:
        h += 1
    ix_meta[1] = h
    return h
