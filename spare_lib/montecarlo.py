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
>>> from spare_lib.layout import ruler_layout
>>> res = overhead_mc(ruler_layout(200, 8), 200, seed=1)
>>> 1.9 < res.s_bar < 2.3
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit

from ._rng import SeedLike, as_seed_sequence, chunk_generators
from ._validate import check_int
from .layout import Layout
from .wipeout import failures_to_wipeout

#: Trials per independent random stream (fixed: results do not depend on how chunks are run).
CHUNK_TRIALS = 512


def _check_layout(layout: object) -> Layout:
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.layout.Layout, got {type(layout).__name__}")
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
    >>> from spare_lib.layout import ruler_layout
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


def random_offsets_layout(N: int, r: int, seed: SeedLike = None) -> Layout:
    """A cyclic layout with r distinct offsets drawn uniformly from 0..N−1 (0 included).

    A baseline for the layout comparison: random offsets generally break the independence
    condition only mildly (a few pairs of types share two holders).
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    rng = np.random.default_rng(as_seed_sequence(seed))
    offs = np.concatenate([[0], 1 + rng.choice(N - 1, size=r - 1, replace=False)])
    from .layout import layout_from_offsets

    return layout_from_offsets(N, [int(o) for o in offs], kind="random")




# ---------------------------------------------------------------------------------------------
# validation tables (notebooks/35_mc_validation.ipynb)
# ---------------------------------------------------------------------------------------------

#: The paper's reported maximum errors of its closed forms against Monte Carlo (SPEC §7).
PAPER_MU_MAX_ERR_PCT = 1.13
PAPER_OVERHEAD_MAX_ERR_PCT = 0.60


def validation_table(N_values: tuple[int, ...] = (200, 600, 1000), *, seed: SeedLike = 2026,
                     overhead_trials: int = 2_000, mu_rel_se: float = 0.0015,
                     mu_min_trials: int = 4_000, mu_max_trials: int = 400_000,
                     r_stride: int = 1, progress: bool = True) -> pd.DataFrame:
    """μ and S̄ by Monte Carlo against the closed forms, over the usable r of each N (ruler).

    For every N and r = 2..max_ruler_r(N) (every ``r_stride``-th, always including the ends):
    μ by :func:`mu_mc` to relative standard error ``mu_rel_se``, S̄ by :func:`overhead_mc`
    with ``overhead_trials`` sequences, and the formulas ``mu_closed``, ``mu_finite``,
    ``overhead_mean`` (Eq. 5 with μ closed, as the paper) and ``overhead_finite``.

    Returns
    -------
    pandas.DataFrame
        One row per (N, r); columns ``mu_mc, mu_se, mu_trials, mu_closed, mu_finite,
        s_bar_mc, s_bar_se, s_bar_cycle_mc, eq5, eq5_mu_finite, overhead_finite, c_bar_mc,
        frac_states_gt, frac_sequences_gt, max_excess`` and relative errors in percent
        ``err_mu_closed, err_mu_finite, err_eq5, err_eq5_mu_finite, err_overhead_finite``.
    """
    from tqdm.auto import tqdm

    from . import theory
    from .layout import max_ruler_r, ruler_layout

    ss = as_seed_sequence(seed)
    jobs = []
    for N in N_values:
        rmax = max_ruler_r(N)
        rs = sorted(set(range(2, rmax + 1, r_stride)) | {2, rmax})
        jobs += [(N, r) for r in rs]
    children = ss.spawn(len(jobs))
    rows = []
    for (N, r), child in tqdm(list(zip(jobs, children, strict=True)), disable=not progress,
                              desc="(N, r)"):
        lay = ruler_layout(N, r)
        s_mu, s_oh = child.spawn(2)
        mm = mu_mc(lay, s_mu, target_rel_se=mu_rel_se, min_trials=mu_min_trials,
                   max_trials=mu_max_trials)
        oh = overhead_mc(lay, overhead_trials, s_oh)
        mu_f = float(theory.mu_finite(N, r))
        rows.append({
            "N": N, "r": r, "mu_mc": mm.mean, "mu_se": mm.se, "mu_trials": mm.n_trials,
            "mu_closed": float(theory.mu_closed(N, r)), "mu_finite": mu_f,
            "s_bar_mc": oh.s_bar, "s_bar_se": oh.s_bar_se, "s_bar_cycle_mc": oh.s_bar_per_cycle,
            "oh_trials": oh.n_trials, "eq5": float(theory.overhead_mean(N, r)),
            "eq5_mu_finite": float(theory.overhead_mean(N, r, mu=mu_f)),
            "overhead_finite": theory.overhead_finite(N, r), "c_bar_mc": oh.c_bar,
            "frac_states_gt": oh.frac_states_gt, "frac_sequences_gt": oh.frac_sequences_gt,
            "max_excess": int(oh.max_excess.max()),
        })
    df = pd.DataFrame(rows)
    for col, ref in (("mu_closed", "mu_mc"), ("mu_finite", "mu_mc"), ("eq5", "s_bar_mc"),
                     ("eq5_mu_finite", "s_bar_mc"), ("overhead_finite", "s_bar_mc")):
        df["err_" + col] = 100.0 * (df[col] / df[ref] - 1.0)
    return df


def layout_comparison_table(N: int = 600, r_values: tuple[int, ...] | None = None, *,
                            seed: SeedLike = 2026, mu_trials: int = 20_000,
                            overhead_trials: int = 500, progress: bool = True) -> pd.DataFrame:
    """μ and S̄ for ruler, consecutive and random offsets and disjoint replication, same r.

    Monte Carlo for the three stacking layouts (``failures_to_wipeout`` for μ, ``overhead_mc``
    for S̄) and for replication (``replication_failures_mc``; S̄ = r, every group computes its
    set's r shards); the exact/finite formulas alongside (``mu_finite`` ruler/consecutive,
    ``replication_mu``).

    Returns
    -------
    pandas.DataFrame
        Long format: columns ``layout, r, mu_mc, mu_se, s_bar_mc, s_bar_se, mu_theory``.
    """
    from tqdm.auto import tqdm

    from . import theory
    from .layout import consecutive_layout, max_ruler_r, ruler_layout

    N = check_int("N", N, lo=4)
    if r_values is None:
        r_values = tuple(range(2, max_ruler_r(N) + 1))
    ss = as_seed_sequence(seed)
    children = ss.spawn(len(r_values))
    rows = []
    for r, child in tqdm(list(zip(r_values, children, strict=True)), disable=not progress,
                         desc="r"):
        s_lay, s1, s2, s3, s4, s5, s6, s7 = child.spawn(8)
        lays = {"ruler": ruler_layout(N, r), "consecutive": consecutive_layout(N, r),
                "random": random_offsets_layout(N, r, s_lay)}
        seeds = {"ruler": (s1, s2), "consecutive": (s3, s4), "random": (s5, s6)}
        for name, lay in lays.items():
            K = failures_to_wipeout(lay, mu_trials, seed=seeds[name][0])
            oh = overhead_mc(lay, overhead_trials, seeds[name][1])
            if name == "random":
                try:
                    mu_th = float(theory.mu_finite(N, r, layout=lay))
                except ValueError:
                    mu_th = np.nan
            else:
                mu_th = float(theory.mu_finite(N, r, layout=name))
            rows.append({"layout": name, "r": r, "mu_mc": K.mean(),
                         "mu_se": K.std(ddof=1) / np.sqrt(K.size), "s_bar_mc": oh.s_bar,
                         "s_bar_se": oh.s_bar_se, "mu_theory": mu_th,
                         "offsets": " ".join(map(str, lay.offsets))})
        Kr = replication_failures_mc(N, r, mu_trials, s7)
        rows.append({"layout": "replication", "r": r, "mu_mc": Kr.mean(),
                     "mu_se": Kr.std(ddof=1) / np.sqrt(Kr.size), "s_bar_mc": float(r),
                     "s_bar_se": 0.0, "mu_theory": float(theory.replication_mu(N, r)),
                     "offsets": ""})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# figures (notebooks/35_mc_validation.ipynb)
# ---------------------------------------------------------------------------------------------

def _validation_figure(df: pd.DataFrame, value_cols: dict[str, tuple[str, str, str]],
                       mc_col: str, se_col: str, ylabel: str, paper_err: float,
                       err_label: str):
    import matplotlib.pyplot as plt

    from .plotting import PAGE_IN

    Ns = sorted(df["N"].unique())
    fig, axes = plt.subplots(2, len(Ns), figsize=(PAGE_IN, 4.2), sharex="col",
                             gridspec_kw={"height_ratios": [2, 1.3]}, squeeze=False)
    for j, N in enumerate(Ns):
        d = df[df["N"] == N].sort_values("r")
        ax, axe = axes[0, j], axes[1, j]
        ax.errorbar(d["r"], d[mc_col], yerr=2 * d[se_col], fmt="o", ms=3, color="black",
                    label="Monte Carlo (±2 s.e.)", zorder=3)
        for col, (label, color, ls) in value_cols.items():
            ax.plot(d["r"], d[col], ls, color=color, label=label)
            axe.plot(d["r"], d["err_" + col], ls, marker=".", color=color, label=label)
        axe.fill_between(d["r"], -200 * d[se_col] / d[mc_col], 200 * d[se_col] / d[mc_col],
                         color="0.85", lw=0, label="±2 s.e. of MC")
        for s in (-1, 1):
            axe.axhline(s * paper_err, color="0.3", lw=0.8, ls=":",
                        label=f"paper's max {err_label} ({paper_err:.2f} %)" if s > 0 else None)
        axe.axhline(0, color="0.5", lw=0.5)
        ax.set_title(f"N = {N}")
        axe.set_xlabel("redundancy r")
        if j == 0:
            ax.set_ylabel(ylabel)
            axe.set_ylabel("error vs MC (%)")
    axes[0, 0].legend(fontsize="x-small", loc="best")
    axes[1, -1].legend(fontsize="x-small", loc="best")
    fig.align_ylabels(axes[:, 0])
    return fig


def make_mu_validation(df: pd.DataFrame):
    """μ closed form and μ finite vs Monte Carlo over r, panels N; relative errors below."""
    return _validation_figure(
        df, {"mu_closed": ("Γ(1+1/r) N^(1−1/r) (paper)", "#D55E00", "-"),
             "mu_finite": ("finite N (Bethe / exact)", "#0072B2", "--")},
        "mu_mc", "mu_se", "failures to wipe-out μ", PAPER_MU_MAX_ERR_PCT, "error")


def make_overhead_validation(df: pd.DataFrame):
    """S̄ from Eq. 5 and the finite-N renewal form vs Monte Carlo (exact S*), panels N."""
    return _validation_figure(
        df, {"eq5": ("Eq. 5 (μ closed, paper)", "#D55E00", "-"),
             "overhead_finite": ("E[Σc(k)]/E[K], finite N", "#0072B2", "--")},
        "s_bar_mc", "s_bar_se", "mean stack depth S̄", PAPER_OVERHEAD_MAX_ERR_PCT, "error")


def ttt_curves(N_values: tuple[int, ...] = (200, 600, 1000), m: float | None = None,
               T_s: float | None = None, T_r: float | None = None) -> pd.DataFrame:
    """J(r) (Eq. 7) over r = 1..max_ruler_r(N) with μ closed+Eq. 5 and with the finite forms."""
    from . import theory
    from .layout import max_ruler_r

    kw = {"m": theory.M_PAPER if m is None else m, "T_s": theory.T_S_PAPER if T_s is None else T_s,
          "T_r": theory.T_R_PAPER if T_r is None else T_r}
    rows = []
    for N in N_values:
        r = np.arange(1, max_ruler_r(N) + 1)
        J_closed = theory.ttt_normalized(N, r, **kw)
        J_fin = theory.ttt_normalized(N, r, mu_model="finite", overhead_model="finite", **kw)
        for ri, a, b_ in zip(r, J_closed, J_fin, strict=True):
            rows.append({"N": N, "r": int(ri), "J_closed": float(a), "J_finite": float(b_)})
    return pd.DataFrame(rows)


def make_ttt_r_star(curves: pd.DataFrame):
    """J(r) for each N with r* closed form (dashed line) and the numeric minima (markers)."""
    import matplotlib.pyplot as plt

    from . import theory
    from .plotting import PAGE_IN

    Ns = sorted(curves["N"].unique())
    fig, axes = plt.subplots(1, len(Ns), figsize=(PAGE_IN, 2.4), squeeze=False)
    for j, N in enumerate(Ns):
        ax = axes[0, j]
        d = curves[curves["N"] == N].sort_values("r")
        d = d[d["r"] >= 2]
        ax.plot(d["r"], d["J_closed"], "-", color="#D55E00", label="J, μ closed + Eq. 5")
        ax.plot(d["r"], d["J_finite"], "--", color="#0072B2", label="J, finite-N μ and S̄")
        for col, color in (("J_closed", "#D55E00"), ("J_finite", "#0072B2")):
            i = int(np.argmin(d[col].to_numpy()))
            ax.plot(d["r"].iloc[i], d[col].iloc[i], "o", color=color, ms=6, mfc="none")
        rc = int(theory.r_star_closed(N))
        ax.axvline(rc, color="0.3", ls=":", lw=1, label=f"r* closed = {rc}")
        ax.set_title(f"N = {N}")
        ax.set_xlabel("redundancy r")
        ax.set_ylim(top=min(ax.get_ylim()[1], 1.6 * d["J_closed"].min()))
        if j == 0:
            ax.set_ylabel("J(r) = S̄ / A*  (time-to-train / T0)")
        ax.legend(fontsize="x-small")
    return fig


def r_star_vs_n_table(N_values: np.ndarray | None = None, r_cap: int = 40, m: float | None = None,
                      T_s: float | None = None, T_r: float | None = None) -> pd.DataFrame:
    """r* closed form and numeric minima of J (μ closed + Eq. 5) for N from 10 to 10^5.

    Columns: ``N, r_closed, r_numeric`` (r ≤ min(N, r_cap), no ruler constraint: the formula's
    own optimum), ``r_numeric_ruler`` (r ≤ max_ruler_r(N), the usable r of the ruler layout).
    """
    from . import theory
    from .layout import max_ruler_r

    if N_values is None:
        N_values = np.unique(np.round(np.logspace(1, 5, 41)).astype(int))
    kw = {"m": theory.M_PAPER if m is None else m, "T_s": theory.T_S_PAPER if T_s is None else T_s,
          "T_r": theory.T_R_PAPER if T_r is None else T_r}
    rows = []
    for N in N_values:
        N = int(N)
        rows.append({"N": N, "r_closed": int(theory.r_star_closed(N)),
                     "r_numeric": theory.r_star_numeric(N, r_max=min(N, r_cap), **kw),
                     "r_numeric_ruler": theory.r_star_numeric(N, r_max=max_ruler_r(N), **kw)})
    return pd.DataFrame(rows)


def make_r_star_vs_n(table: pd.DataFrame):
    """r* against N: closed form ⌊log2 N + 0.833⌋ vs the numeric minimum of J."""
    import matplotlib.pyplot as plt

    from .plotting import COLUMN_IN

    fig, ax = plt.subplots(figsize=(COLUMN_IN, 2.6))
    ax.step(table["N"], table["r_closed"], where="post", color="0.3",
            label="closed ⌊log₂N + γ/ln2⌋")
    ax.plot(table["N"], table["r_numeric"], "o", ms=3, color="#D55E00",
            label="argmin J (μ closed, Eq. 5)")
    ax.plot(table["N"], table["r_numeric_ruler"], "x", ms=4, color="#0072B2",
            label="argmin J, r ≤ usable ruler r")
    for n in (200, 600, 1000):
        ax.axvline(n, color="0.85", lw=0.8, zorder=0)
    ax.set_xscale("log")
    ax.set_xlabel("data-parallel groups N")
    ax.set_ylabel("optimal redundancy r*")
    ax.legend(fontsize="x-small")
    return fig


def make_layout_comparison(df: pd.DataFrame):
    """μ and S̄ vs r for ruler, consecutive, random offsets and disjoint replication."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    from .plotting import LAYOUT_STYLE, PAGE_IN

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(PAGE_IN, 2.6))
    for name in ("ruler", "consecutive", "random", "replication"):
        d = df[df["layout"] == name].sort_values("r")
        st = LAYOUT_STYLE[name]
        label = {"random": "random offsets", "replication": "disjoint replication"}.get(name, name)
        a1.errorbar(d["r"], d["mu_mc"], yerr=2 * d["mu_se"], fmt=st["marker"], ms=3,
                    color=st["color"], label=label + " (MC)")
        if d["mu_theory"].notna().any():
            a1.plot(d["r"], d["mu_theory"], st["linestyle"], color=st["color"], lw=0.8)
        a2.plot(d["r"], d["s_bar_mc"], st["marker"] + st["linestyle"], ms=3, color=st["color"],
                label=label)
    a1.set_xlabel("redundancy r")
    a1.set_ylabel("failures to wipe-out μ")
    a2.set_xlabel("redundancy r")
    a2.set_ylabel("mean stacks per step S̄")
    a2.set_yscale("log")
    a2.set_yticks([2, 3, 5, 10, 20])
    a2.yaxis.set_major_formatter(ScalarFormatter())
    a2.yaxis.set_minor_formatter(NullFormatter())
    a1.legend(fontsize="x-small")
    a2.legend(fontsize="x-small")
    return fig


__all__ = ["overhead_mc", "OverheadMC", "s_star_sequence", "mu_mc", "MuMC",
           "replication_failures_mc", "random_offsets_layout", "validation_table",
           "layout_comparison_table", "ttt_curves", "r_star_vs_n_table", "make_mu_validation",
           "make_overhead_validation", "make_ttt_r_star", "make_r_star_vs_n",
           "make_layout_comparison", "PAPER_MU_MAX_ERR_PCT", "PAPER_OVERHEAD_MAX_ERR_PCT"]
