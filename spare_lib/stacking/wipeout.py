"""Failures until wipe-out (SPEC §1, §7): how many group failures a stacking layout survives.

Failures hit distinct groups in uniformly random order. A *wipe-out* happens at the first failure
after which some shard type has no live holder; the index (1-based) of that failure is the
failures-to-wipe-out T, whose mean is μ(N, r) (the paper's "endurable failures").

The sampler is a numba kernel. Each trial gives every group an i.i.d. 32-bit death key (the
failure order is the key order, ties broken uniformly at random); for the cyclic layout the
wipe-out key is V = min_t max_j key[(t − o_j) mod N], computed by r SIMD max passes over
contiguous slices, and T = #{w : key[w] ≤ V} (ties at V, probability ≈ N/2^32, are resolved
exactly by a random order of the tied groups). Keys come from a xoshiro256** stream seeded by
each chunk's ``Generator``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from spare_lib._util.rng import SeedLike, chunk_generators
from spare_lib._util.validate import check_int
from spare_lib.stacking._xoshiro import _next_u64, _rotl, _xoshiro_state
from spare_lib.stacking.domains import check_domain_args, domain_failures_to_wipeout
from spare_lib.stacking.layout import Layout

#: Trials per independent random stream. Fixed, so results do not depend on ``workers``.
CHUNK_TRIALS = 4096


def _check_layout(layout: object) -> Layout:
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.stacking.Layout, got {type(layout).__name__}")
    return layout


#: Mask applied to the 32-bit sort keys; tests narrow it to force ties through the exact
#: tie-resolution path (any mask gives the same distribution of T).
_KEY_MASK = np.uint32(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def _fill_keys(state: np.ndarray, buf: np.ndarray, ext: np.ndarray, N: int, omax: int,
               mask: np.uint64) -> None:  # pragma: no cover - compiled
    """Draw the N uint32 death keys of one trial, two per xoshiro256** output.

    ``ext`` is the uint32 view of the uint64 ``buf``; afterwards ``ext[w] = key[w]`` (each
    32-bit half of an output ANDed with the key mask, see ``mask``) for w < N and
    ``ext[N + i] = ext[i]`` for i < omax, so ``ext[s + omax − o] = key[(s + omax − o) mod N]``
    for 0 ≤ s < N, 0 ≤ o ≤ omax needs no modulo.
    """
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    for i in range((N + 1) // 2):
        res = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
        t = s1 << np.uint64(17)
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = _rotl(s3, 45)
        buf[i] = res & mask
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    for i in range(omax):
        ext[N + i] = ext[i]


@njit(cache=True, nogil=True)
def _resolve_tie(ext: np.ndarray, N: int, offs: np.ndarray, V: np.uint32, n_below: int,
                 n_tied: int, state: np.ndarray) -> int:  # pragma: no cover - compiled
    """Exact T when ``n_tied`` ≥ 2 groups share the critical key V (rare for 32-bit keys).

    All groups with key < V have failed and no type is wiped out yet; the tied groups fail
    next, in uniformly random order (Fisher–Yates, floor(u·m) with a 53-bit u), and the first
    of them after which some type has no live holder is the wipe-out.
    """
    r = offs.shape[0]
    tied = np.empty(n_tied, dtype=np.int64)
    c = 0
    for w in range(N):
        if ext[w] == V:
            tied[c] = w
            c += 1
    for k in range(n_tied - 1):
        u = np.float64(_next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
        j = k + int(u * (n_tied - k))
        g = tied[j]
        tied[j] = tied[k]
        tied[k] = g
    killed = np.zeros(N, dtype=np.bool_)
    for k in range(n_tied):
        g = tied[k]
        killed[g] = True
        for p in range(r):
            t = (g + offs[p]) % N  # a type group g holds; its holders are (t − o_q) mod N
            wiped = True
            for q in range(r):
                h = (t - offs[q]) % N
                key = ext[h]
                if key > V or (key == V and not killed[h]):
                    wiped = False
                    break
            if wiped:
                return n_below + k + 1
    return n_below + n_tied  # unreachable: the type attaining V is wiped out by then


@njit(cache=True, nogil=True)
def _trial_from_keys(ext: np.ndarray, N: int, offs: np.ndarray, omax: int, m: np.ndarray,
                     state: np.ndarray) -> int:  # pragma: no cover - compiled
    """T for one trial whose failure order is the order of the death keys ``ext[:N]``.

    Type t dies at max_j key[(t − o_j) mod N] and the first wipe-out happens at
    V = min_t max_j key[(t − o_j) mod N] (types indexed as t = s + omax, a bijection mod N, so
    every read is a contiguous slice of ``ext``: the r max passes and the min vectorise).
    Every type still has a live holder while only keys < V have failed, and the type attaining
    V is wiped out once the keys ≤ V have, so T = #{w : key[w] < V} + 1 when V is unique;
    otherwise the tied groups fail in uniformly random order (:func:`_resolve_tie`). With keys
    i.i.d. and ties broken uniformly, the failure order is a uniform permutation: T is exact.
    """
    r = offs.shape[0]
    e = ext[omax - offs[0]:]
    for s in range(N):
        m[s] = e[s]
    for p in range(1, r):
        e = ext[omax - offs[p]:]
        for s in range(N):
            m[s] = max(m[s], e[s])
    V = m[0]
    for s in range(1, N):
        V = min(V, m[s])
    keys = ext[:N]
    n_below = 0
    n_tied = 0
    for w in range(N):
        n_below += np.int32(keys[w] < V)
        n_tied += np.int32(keys[w] == V)
    if n_tied == 1:
        return n_below + 1
    return _resolve_tie(ext, N, offs, V, n_below, n_tied, state)


@njit(cache=True, nogil=True)
def _ftw_kernel(N: int, offs: np.ndarray, n_trials: int, state: np.ndarray,
                key_mask: np.uint32, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """Fill ``out`` with n_trials samples of T for the cyclic layout with offsets ``offs``
    (each in [0, N−1]); ``state`` is the xoshiro256** state, advanced in place."""
    omax = 0
    for p in range(offs.shape[0]):
        omax = max(omax, offs[p])
    buf = np.empty((N + omax + 1) // 2, dtype=np.uint64)
    ext = buf.view(np.uint32)
    m = np.empty(N, dtype=np.uint32)
    mask = np.uint64(key_mask) | (np.uint64(key_mask) << np.uint64(32))
    for trial in range(n_trials):
        _fill_keys(state, buf, ext, N, omax, mask)
        out[trial] = _trial_from_keys(ext, N, offs, omax, m, state)


def failures_to_wipeout(layout: Layout, n_trials: int, seed: SeedLike = None,
                        workers: int = 1, *, domain_size: int = 1,
                        domain_prob: float = 0.0) -> np.ndarray:
    """Sample the number of failures (failure events) until the first wipe-out.

    Parameters
    ----------
    layout : Layout
        The stacking layout (N groups, redundancy r).
    n_trials : int
        Number of independent failure sequences, ≥ 1.
    seed : int, SeedSequence, Generator or None
        Root seed. Trials are cut into fixed chunks of ``CHUNK_TRIALS``, each with its own child
        ``SeedSequence``, so the result is the same for any ``workers``.
    workers : int
        Threads running chunks in parallel (the kernel releases the GIL), ≥ 1.
    domain_size : int
        D, groups per failure domain (group g is in domain ⌊g/D⌋), 1 ≤ D ≤ N.
    domain_prob : float
        q ∈ [0, 1], probability that a failure event is a domain event (kills every live group
        of a uniformly chosen domain with a live group; see :mod:`spare_lib.stacking.domains`).
        With q = 0 or D = 1 the law is that of independent failures and this kernel runs
        unchanged (same numbers for the same seed); otherwise the event kernel
        :func:`~spare_lib.stacking.domains.domain_failures_to_wipeout` does.

    Returns
    -------
    ndarray of int64, shape (n_trials,)
        Entry i is the 1-based index of the failure (event) that first left some type with no
        live holder in trial i; its mean estimates μ(N, r) (μ_q(N, r, D, q) with domains).

    Examples
    --------
    >>> from spare_lib.stacking import ruler_layout
    >>> t = failures_to_wipeout(ruler_layout(600, 20), 20_000, seed=1)
    >>> bool(400 < t.mean() < 450)
    True
    """
    layout = _check_layout(layout)
    n_trials = check_int("n_trials", n_trials, lo=1)
    workers = check_int("workers", workers, lo=1)
    D, q = check_domain_args(layout.N, domain_size, domain_prob)
    if q > 0.0 and D > 1:
        return domain_failures_to_wipeout(layout, n_trials, seed, workers, domain_size=D,
                                          domain_prob=q)
    offs = np.asarray(layout.offsets, dtype=np.int64) % layout.N
    out = np.empty(n_trials, dtype=np.int64)
    chunks = chunk_generators(seed, n_trials, CHUNK_TRIALS)

    def run(chunk: tuple[int, int, np.random.Generator]) -> None:
        start, stop, rng = chunk
        _ftw_kernel(layout.N, offs, stop - start, _xoshiro_state(rng), _KEY_MASK,
                    out[start:stop])

    if workers == 1 or len(chunks) == 1:
        for c in chunks:
            run(c)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, chunks))
    return out


def failures_to_wipeout_numpy(layout: Layout, n_trials: int, seed: SeedLike = None) -> np.ndarray:
    """Plain-NumPy reference of :func:`failures_to_wipeout` (same distribution, other stream).

    Each trial draws a random permutation (the failure order), gives every group its death
    index, and takes min over types of the max death index over the type's holders. Used as the
    oracle in tests and as the baseline in ``benchmarks/bench_wipeout.py``.
    """
    layout = _check_layout(layout)
    n_trials = check_int("n_trials", n_trials, lo=1)
    from spare_lib._util.rng import as_seed_sequence

    rng = np.random.default_rng(as_seed_sequence(seed))
    N = layout.N
    holders = layout.holders
    death = np.empty(N, dtype=np.int64)
    ranks = np.arange(1, N + 1, dtype=np.int64)
    out = np.empty(n_trials, dtype=np.int64)
    for i in range(n_trials):
        death[rng.permutation(N)] = ranks
        out[i] = death[holders].max(axis=1).min()
    return out


def is_wiped_out(layout: Layout, alive: np.ndarray) -> bool:
    """True when some shard type has no live holder.

    Parameters
    ----------
    layout : Layout
        The stacking layout.
    alive : array of bool, shape (N,)
        ``alive[w]`` is True when group w is alive.
    """
    layout = _check_layout(layout)
    alive = np.asarray(alive)
    if alive.shape != (layout.N,) or alive.dtype != np.bool_:
        raise ValueError(f"alive must be a boolean array of shape ({layout.N},), got dtype "
                         f"{alive.dtype} and shape {alive.shape}")
    return bool((~alive[layout.holders].any(axis=1)).any())


def wipeout_index(layout: Layout, order: np.ndarray) -> int:
    """1-based index of the first failure in ``order`` that wipes out a type (N+1 if none).

    Parameters
    ----------
    layout : Layout
        The stacking layout.
    order : array of int
        Distinct group ids in failure order (a prefix of a permutation of 0..N−1).
    """
    layout = _check_layout(layout)
    order = np.asarray(order)
    if order.ndim != 1 or order.dtype.kind not in "iu":
        raise ValueError(f"order must be a 1-D integer array, got shape {order.shape}, dtype {order.dtype}")
    if order.size and (order.min() < 0 or order.max() >= layout.N):
        raise ValueError(f"order entries must be group ids in [0, {layout.N - 1}]")
    if len(np.unique(order)) != len(order):
        raise ValueError("order must not repeat a group (failures hit distinct groups)")
    death = np.full(layout.N, layout.N + 1, dtype=np.int64)
    death[order] = np.arange(1, len(order) + 1)
    first = int(death[layout.holders].max(axis=1).min())
    return first


def failure_sequence(layout: Layout, seed: SeedLike = None) -> tuple[np.ndarray, int]:
    """One random failure order and the index of its first wipe-out (for illustrations).

    Returns
    -------
    (order, k)
        ``order`` a random permutation of the N groups, ``k`` = :func:`wipeout_index`.
    """
    layout = _check_layout(layout)
    from spare_lib._util.rng import as_seed_sequence

    order = np.random.default_rng(as_seed_sequence(seed)).permutation(layout.N)
    return order, wipeout_index(layout, order)


def live_holders_along(layout: Layout, order: np.ndarray, k: int | None = None) -> np.ndarray:
    """Live holders of every type after each of the first k failures of ``order``.

    Returns
    -------
    ndarray of int64, shape (k + 1, N)
        Row i: live holders per type after i failures (row 0 is all r). ``k`` defaults to
        :func:`wipeout_index` (capped at N).
    """
    layout = _check_layout(layout)
    order = np.asarray(order)
    if k is None:
        k = min(wipeout_index(layout, order), layout.N)
    k = check_int("k", k, lo=0, hi=len(order))
    out = np.empty((k + 1, layout.N), dtype=np.int64)
    live = np.full(layout.N, layout.r, dtype=np.int64)
    out[0] = live
    for i in range(k):
        live[layout.stacks[order[i]]] -= 1
        out[i + 1] = live
    return out


def mu_monte_carlo(N: int, r: int, n_trials: int, seed: SeedLike = None, kind: str = "ruler",
                   workers: int = 1) -> tuple[float, float]:
    """Monte Carlo estimate of μ(N, r) and its standard error.

    Parameters
    ----------
    N, r : int
        Groups and redundancy.
    n_trials : int
        Failure sequences to sample.
    seed : seed-like
        Root seed. Pass e.g. ``np.random.SeedSequence([root, N, r])`` so each grid point has
        its own stream whatever the grid.
    kind : {'ruler', 'consecutive'}
        Layout family (see :func:`spare_lib.stacking.layout.make_layout`).

    Returns
    -------
    (mean, se)
        Sample mean of the failures to wipe-out and its standard error s/√n.
    """
    from spare_lib.stacking.layout import make_layout

    t = failures_to_wipeout(make_layout(N, r, kind), n_trials, seed, workers=workers)
    se = float(t.std(ddof=1) / np.sqrt(t.size)) if t.size > 1 else float("nan")
    return float(t.mean()), se
