"""Monte Carlo checks of the theory (SPEC §7): exact S* along failure sequences, μ, replication.

:func:`overhead_mc` follows random failure sequences until wipe-out and computes, after every
failure k, the *exact* least stack depth S*(k): the least S such that every shard type can be
assigned to one of its live holders (any position of the holder's base stack: RECTLR may reorder
a stack freely) with every survivor computing at most S types. That is a bipartite b-matching
(types × survivors, capacity S per survivor), solved incrementally: the assignment is kept from
one failure to the next, the failed group's types are re-inserted by augmenting paths (BFS), and
S is raised only when no augmenting path exists. Because the set of failed groups only grows, the
least S never decreases along a sequence, so the incremental S is the least one at every k
(Berge: a vertex with no augmenting path keeps none after other augmentations). The oracle in
the tests is ``scipy.sparse.csgraph.maximum_bipartite_matching`` on the expanded slot graph.

The paper's Eq. 5 assumes S* = c(k) = ceil(N/(N−k)); :class:`OverheadMC` reports how often the
exact S* exceeds c(k).

Example
-------
>>> from spare_lib.stacking import ruler_layout
>>> res = overhead_mc(ruler_layout(200, 8), 200, seed=1)
>>> 1.9 < res.s_bar < 2.3
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from spare_lib._util.rng import SeedLike, as_seed_sequence, chunk_generators
from spare_lib._util.validate import check_int
from spare_lib.stacking.layout import Layout
from spare_lib.stacking.wipeout import failures_to_wipeout

#: Trials per independent random stream (fixed: results do not depend on how chunks are run).
CHUNK_TRIALS = 512


def _check_layout(layout: object) -> Layout:
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.stacking.Layout, got {type(layout).__name__}")
    return layout


# ---------------------------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _workspace(N, r):  # pragma: no cover - compiled
    """State and scratch of the S* kernels: (alive, live_cnt, asg, members, load, orphans,
    queue, parent, vis_t, vis_g); ``_reset`` fills the state for a fresh sequence."""
    return (np.ones(N, dtype=np.bool_), np.empty(N, dtype=np.int64), np.empty(N, dtype=np.int64),
            np.empty((N, r), dtype=np.int64), np.empty(N, dtype=np.int64),
            np.empty(r, dtype=np.int64), np.empty(N, dtype=np.int64), np.empty(N, dtype=np.int64),
            np.zeros(N, dtype=np.int64), np.zeros(N, dtype=np.int64))


@njit(cache=True, nogil=True)
def _reset(stacks, alive, live_cnt, asg, members, load):  # pragma: no cover - compiled
    N, r = stacks.shape
    for w in range(N):
        alive[w] = True
        live_cnt[w] = r
        load[w] = 1
    for w in range(N):
        t = stacks[w, 0]  # level 0 of all groups is a permutation of the types
        members[w, 0] = t
        asg[t] = w


@njit(cache=True, nogil=True)
def _augment(t0, S, holders, alive, asg, members, load, queue, parent, vis_t, vis_g,
             stamp):  # pragma: no cover - compiled
    """BFS for an augmenting path placing type t0 with capacity S per survivor."""
    r = holders.shape[1]
    head = 0
    tail = 1
    queue[0] = t0
    vis_t[t0] = stamp
    parent[t0] = -1
    while head < tail:
        u = queue[head]
        head += 1
        for j in range(r):
            w = holders[u, j]
            if not alive[w] or w == asg[u] or vis_g[w] == stamp:
                continue
            vis_g[w] = stamp
            if load[w] < S:
                cur = u
                target = w
                while True:
                    prev = asg[cur]
                    if prev >= 0:
                        for i in range(load[prev]):
                            if members[prev, i] == cur:
                                members[prev, i] = members[prev, load[prev] - 1]
                                break
                        load[prev] -= 1
                    members[target, load[target]] = cur
                    load[target] += 1
                    asg[cur] = target
                    if parent[cur] < 0:
                        return True
                    target = prev
                    cur = parent[cur]
            for i in range(load[w]):
                v = members[w, i]
                if vis_t[v] != stamp:
                    vis_t[v] = stamp
                    parent[v] = u
                    queue[tail] = v
                    tail += 1
    return False


@njit(cache=True, nogil=True)
def _fail(g, S, stamp, stacks, holders, alive, live_cnt, asg, members, load, orphans, queue,
          parent, vis_t, vis_g):  # pragma: no cover - compiled
    """Kill group g; return (new least S or -1 on wipe-out, new stamp)."""
    r = stacks.shape[1]
    alive[g] = False
    wiped = False
    for p in range(r):
        t = stacks[g, p]
        live_cnt[t] -= 1
        if live_cnt[t] == 0:
            wiped = True
    if wiped:
        return -1, stamp
    n_orph = load[g]
    for i in range(n_orph):
        orphans[i] = members[g, i]
        asg[members[g, i]] = -1
    load[g] = 0
    for i in range(n_orph):
        t = orphans[i]
        while True:
            stamp += 1
            if _augment(t, S, holders, alive, asg, members, load, queue, parent, vis_t, vis_g,
                        stamp):
                break
            S += 1
            if S > r:  # cannot happen without a wipe-out; guard against an infinite loop
                return -1, stamp
    return S, stamp


@njit(cache=True, nogil=True)
def _overhead_kernel(stacks, holders, n_trials, rng, K_out, sum_s_out, sum_c_out, n_gt_out,
                     max_ex_out, s_by_k, n_by_k, gt_by_k):  # pragma: no cover - compiled
    N, r = stacks.shape
    alive, live_cnt, asg, members, load, orphans, queue, parent, vis_t, vis_g = _workspace(N, r)
    perm = np.arange(N)
    stamp = 0
    for trial in range(n_trials):
        _reset(stacks, alive, live_cnt, asg, members, load)
        S = 1
        sum_s = 1  # state k = 0: S* = c(0) = 1
        sum_c = 1
        n_gt = 0
        max_ex = 0
        s_by_k[0] += 1
        n_by_k[0] += 1
        k = 0
        while True:
            j = k + int(rng.random() * (N - k))  # Fisher–Yates step: uniform failure order
            g = perm[j]
            perm[j] = perm[k]
            perm[k] = g
            k += 1
            S, stamp = _fail(g, S, stamp, stacks, holders, alive, live_cnt, asg, members, load,
                             orphans, queue, parent, vis_t, vis_g)
            if S < 0:
                break
            c = -(-N // (N - k))
            sum_s += S
            sum_c += c
            s_by_k[k] += S
            n_by_k[k] += 1
            if S > c:
                n_gt += 1
                gt_by_k[k] += 1
                if S - c > max_ex:
                    max_ex = S - c
        K_out[trial] = k
        sum_s_out[trial] = sum_s
        sum_c_out[trial] = sum_c
        n_gt_out[trial] = n_gt
        max_ex_out[trial] = max_ex


@njit(cache=True)
def _sequence_kernel(stacks, holders, order, s_out):  # pragma: no cover - compiled
    N, r = stacks.shape
    alive, live_cnt, asg, members, load, orphans, queue, parent, vis_t, vis_g = _workspace(N, r)
    _reset(stacks, alive, live_cnt, asg, members, load)
    S = 1
    stamp = 0
    s_out[0] = 1
    for i in range(order.shape[0]):
        S, stamp = _fail(order[i], S, stamp, stacks, holders, alive, live_cnt, asg, members,
                         load, orphans, queue, parent, vis_t, vis_g)
        if S < 0:
            return i + 1
        s_out[i + 1] = S
    return order.shape[0] + 1


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------

def s_star_sequence(layout: Layout, order: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact least depth S*(k) along one failure order, until the first wipe-out.

    Parameters
    ----------
    layout : Layout
        The stacking layout (N groups, redundancy r).
    order : array of int
        Distinct group ids in failure order (a prefix of a permutation of 0..N−1).

    Returns
    -------
    (s_star, K)
        ``K`` is the 1-based index of the failure causing the first wipe-out (len(order) + 1 if
        none); ``s_star[k]`` for k = 0..K−1 is the least S after the first k failures, i.e. the
        least S such that the types can be assigned to live holders with at most S per survivor.

    Examples
    --------
    >>> from spare_lib.stacking import ruler_layout
    >>> s, K = s_star_sequence(ruler_layout(12, 3), np.array([0, 1, 2, 3, 4, 5]))
    >>> s.tolist(), K
    ([1, 2, 2, 2], 4)
    """
    layout = _check_layout(layout)
    order = np.asarray(order)
    if order.ndim != 1 or (order.size and order.dtype.kind not in "iu"):
        raise ValueError(f"order must be a 1-D integer array, got shape {order.shape}, "
                         f"dtype {order.dtype}")
    order = order.astype(np.int64)
    if order.size and (order.min() < 0 or order.max() >= layout.N):
        raise ValueError(f"order entries must be group ids in [0, {layout.N - 1}], got {order!r}")
    if len(np.unique(order)) != len(order):
        raise ValueError("order must not repeat a group (failures hit distinct groups)")
    s_out = np.zeros(len(order) + 1, dtype=np.int64)
    K = _sequence_kernel(np.ascontiguousarray(layout.stacks), np.ascontiguousarray(layout.holders),
                         order, s_out)
    return s_out[:K].copy(), int(K)


@dataclass(frozen=True)
class OverheadMC:
    """Result of :func:`overhead_mc` (one entry per failure sequence in the arrays).

    Attributes
    ----------
    N, r : int
        Layout size.
    K : ndarray
        Failures to wipe-out per sequence (mean: μ).
    sum_s, sum_c : ndarray
        Σ_{k<K} S*(k) and Σ_{k<K} c(k) per sequence (states k = 0..K−1, before each failure).
    n_gt : ndarray
        Number of states k < K with S*(k) > c(k), per sequence.
    max_excess : ndarray
        max_k (S*(k) − c(k)) per sequence.
    s_by_k, n_by_k, gt_by_k : ndarray, shape (N + 1,)
        Over all sequences: Σ S*(k), number of sequences still running at k, and how many had
        S*(k) > c(k); ``s_by_k / n_by_k`` is the mean S* after k failures.
    """

    N: int
    r: int
    K: np.ndarray
    sum_s: np.ndarray
    sum_c: np.ndarray
    n_gt: np.ndarray
    max_excess: np.ndarray
    s_by_k: np.ndarray
    n_by_k: np.ndarray
    gt_by_k: np.ndarray

    @property
    def n_trials(self) -> int:
        return int(self.K.size)

    @property
    def mu(self) -> float:
        """Mean failures to wipe-out, μ."""
        return float(self.K.mean())

    @property
    def mu_se(self) -> float:
        return float(self.K.std(ddof=1) / np.sqrt(self.K.size)) if self.K.size > 1 else np.nan

    @property
    def s_bar(self) -> float:
        """Long-run mean stack depth Σ S*/Σ K over sequences (every failure epoch weighs the same).

        This is the time average of the stack depth when failures arrive at a constant rate,
        the quantity Eq. 5 approximates (renewal–reward).
        """
        return float(self.sum_s.sum() / self.K.sum())

    @property
    def s_bar_se(self) -> float:
        """Standard error of :attr:`s_bar` (delta method for a ratio of means)."""
        n = self.K.size
        if n < 2:
            return np.nan
        resid = self.sum_s - self.s_bar * self.K
        return float(resid.std(ddof=1) / np.sqrt(n) / self.K.mean())

    @property
    def s_bar_per_cycle(self) -> float:
        """Mean over sequences of (1/K) Σ_{k<K} S*(k) (each restart cycle weighs the same)."""
        return float(np.mean(self.sum_s / self.K))

    @property
    def c_bar(self) -> float:
        """Σ c(k)/Σ K: what :attr:`s_bar` would be if S* were always c(k)."""
        return float(self.sum_c.sum() / self.K.sum())

    @property
    def frac_states_gt(self) -> float:
        """Fraction of states (sequence, k < K) with S*(k) > c(k)."""
        return float(self.n_gt.sum() / self.K.sum())

    @property
    def frac_sequences_gt(self) -> float:
        """Fraction of sequences with S*(k) > c(k) for some k before the wipe-out."""
        return float(np.mean(self.n_gt > 0))


def overhead_mc(layout: Layout, n_trials: int, seed: SeedLike = None) -> OverheadMC:
    """Monte Carlo of the stack depth S* along random failure sequences until wipe-out.

    Failures hit distinct groups in uniformly random order; after each failure the exact least
    feasible depth S*(k) is computed (incremental b-matching, see the module docstring), so no
    assumption S* = c(k) is made.

    Parameters
    ----------
    layout : Layout
        The stacking layout.
    n_trials : int
        Number of failure sequences, ≥ 1.
    seed : int, SeedSequence, Generator or None
        Root seed; trials are cut into fixed chunks of ``CHUNK_TRIALS`` with one child stream
        each (results do not depend on how the chunks are run).

    Returns
    -------
    OverheadMC
        Per-sequence sums, with ``.s_bar`` (± ``.s_bar_se``), ``.mu``, ``.frac_states_gt``.

    Notes
    -----
    Cost O(μ · S · b) per sequence, b the length of the augmenting-path search (a few holders
    in practice): about 1–2 ms per sequence at N = 1000, r = 26 on one (shared) core.
    """
    layout = _check_layout(layout)
    n_trials = check_int("n_trials", n_trials, lo=1)
    N = layout.N
    stacks = np.ascontiguousarray(layout.stacks, dtype=np.int64)
    holders = np.ascontiguousarray(layout.holders, dtype=np.int64)
    K = np.empty(n_trials, dtype=np.int64)
    sum_s = np.empty(n_trials, dtype=np.int64)
    sum_c = np.empty(n_trials, dtype=np.int64)
    n_gt = np.empty(n_trials, dtype=np.int64)
    max_ex = np.empty(n_trials, dtype=np.int64)
    s_by_k = np.zeros(N + 1, dtype=np.int64)
    n_by_k = np.zeros(N + 1, dtype=np.int64)
    gt_by_k = np.zeros(N + 1, dtype=np.int64)
    for start, stop, rng in chunk_generators(seed, n_trials, CHUNK_TRIALS):
        _overhead_kernel(stacks, holders, stop - start, rng, K[start:stop], sum_s[start:stop],
                         sum_c[start:stop], n_gt[start:stop], max_ex[start:stop], s_by_k, n_by_k,
                         gt_by_k)
    return OverheadMC(N=N, r=layout.r, K=K, sum_s=sum_s, sum_c=sum_c, n_gt=n_gt, max_excess=max_ex,
                      s_by_k=s_by_k, n_by_k=n_by_k, gt_by_k=gt_by_k)


@dataclass(frozen=True)
class MuMC:
    """Monte Carlo estimate of μ: mean, standard error and the number of trials used."""

    mean: float
    se: float
    n_trials: int

    @property
    def rel_se(self) -> float:
        return self.se / self.mean


def mu_mc(layout: Layout, seed: SeedLike = None, *, target_rel_se: float = 0.0015,
          min_trials: int = 4_000, max_trials: int = 400_000, workers: int = 1) -> MuMC:
    """μ by Monte Carlo (``wipeout.failures_to_wipeout``) to a target relative standard error.

    A pilot of ``min_trials`` estimates the coefficient of variation cv of K; the total is
    ceil((cv / target_rel_se)²) trials, clipped to [min_trials, max_trials]. (The trial count
    depends on the pilot, which is itself seeded, so the result is reproducible.)

    Parameters
    ----------
    layout : Layout
        The stacking layout.
    seed : int, SeedSequence, Generator or None
        Root seed (pilot and main run use two children).
    target_rel_se : float
        Wanted standard error / mean (default 0.15 %).
    min_trials, max_trials : int
        Bounds on the number of trials.
    workers : int
        Threads for ``failures_to_wipeout``.
    """
    layout = _check_layout(layout)
    if not 0 < target_rel_se < 1:
        raise ValueError(f"target_rel_se must be in (0, 1), got {target_rel_se!r}")
    min_trials = check_int("min_trials", min_trials, lo=2)
    max_trials = check_int("max_trials", max_trials, lo=min_trials)
    pilot_ss, main_ss = as_seed_sequence(seed).spawn(2)
    pilot = failures_to_wipeout(layout, min_trials, seed=pilot_ss, workers=workers)
    cv = pilot.std(ddof=1) / pilot.mean()
    n = int(np.clip(np.ceil((cv / target_rel_se) ** 2), min_trials, max_trials))
    extra = n - min_trials
    K = pilot if extra <= 0 else np.concatenate(
        [pilot, failures_to_wipeout(layout, extra, seed=main_ss, workers=workers)])
    return MuMC(mean=float(K.mean()), se=float(K.std(ddof=1) / np.sqrt(K.size)), n_trials=int(K.size))


def replication_failures_mc(N: int, r: int, n_trials: int, seed: SeedLike = None) -> np.ndarray:
    """Failures to interruption for N groups in replica sets of r consecutive ids (SPEC §5).

    Group w is in set w // r (⌈N/r⌉ sets, the last one possibly smaller); the run is interrupted
    at the first failure after which some set has no live member. Failures hit distinct groups
    in uniformly random order (iid uniform death times: their order is a uniform permutation).

    Returns
    -------
    ndarray of int64, shape (n_trials,)
        1-based index of the interrupting failure per trial; its mean estimates
        ``theory.replication_mu(N, r)``.
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    n_trials = check_int("n_trials", n_trials, lo=1)
    n_sets = -(-N // r)
    out = np.empty(n_trials, dtype=np.int64)
    chunk = max(1, 2_000_000 // (n_sets * r))
    for start, stop, rng in chunk_generators(seed, n_trials, chunk):
        death = rng.random((stop - start, N))
        padded = np.full((stop - start, n_sets * r), -np.inf)
        padded[:, :N] = death
        tau = padded.reshape(stop - start, n_sets, r).max(axis=2).min(axis=1)
        out[start:stop] = (death <= tau[:, None]).sum(axis=1)
    return out
