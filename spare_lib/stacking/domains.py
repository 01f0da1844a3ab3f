"""Correlated failures: failure domains, their wipe-out sampler and domain-aware layouts.

Model (fixed; see ``docs/correlated_failures.md``). The N groups sit in failure domains of D
consecutive groups: group g belongs to domain ⌊g/D⌋, so there are n_D = ⌈N/D⌉ domains and the
last one has N − D(n_D − 1) ≤ D groups. Failure *events* come one at a time. With probability q
an event is a domain event: it kills every live group of one domain, chosen uniformly among the
domains that still have a live group. Otherwise it kills one live group chosen uniformly. The
failures-to-wipe-out T_q is the 1-based index of the *event* after which some shard type has no
live holder, and μ_q(N, r, D, q) = E[T_q]; μ_0 = μ(N, r).

A layout is *domain-aware* when the r holders of every type lie in r distinct domains, so one
domain event costs every type at most one holder. For a cyclic layout (holders (t − o_j) mod N)
this holds iff every pair of offsets is at circular distance ≥ D on Z_N: if o − o' ≡ δ with
δ < D (or N − δ < D) the groups 0 and δ (or 0 and N − δ) are holders of one type and share
domain 0; conversely two groups of one domain are fewer than D apart, also across the wrap
(the domains are intervals and the first and last are distinct). Equivalently the circular gaps
between the sorted offsets are all ≥ D, whether or not D divides N (the tests check it by brute
force over every type).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from spare_lib._util.rng import SeedLike, chunk_generators
from spare_lib._util.validate import check_int, check_probability
from spare_lib.stacking._xoshiro import _next_u64, _xoshiro_state
from spare_lib.stacking.layout import Layout

#: Trials per independent random stream (fixed, so results do not depend on ``workers``).
DOMAIN_CHUNK_TRIALS = 2048


def check_domain_args(N: int, domain_size: object, domain_prob: object) -> tuple[int, float]:
    """Validate the domain size D ∈ [1, N] and the domain-event probability q ∈ [0, 1]."""
    if isinstance(domain_size, bool) or not isinstance(domain_size, (int, np.integer)):
        raise ValueError(f"domain_size must be an integer in [1, N] = [1, {N}], got {domain_size!r}")
    D = int(domain_size)
    if not 1 <= D <= N:
        raise ValueError(f"domain_size must be in [1, N] = [1, {N}], got {D}")
    try:
        q = check_probability("domain_prob", domain_prob)
    except ValueError:
        raise ValueError(f"domain_prob must be a probability in [0, 1], got {domain_prob!r}") from None
    return D, q


@njit(inline="always")
def _uniform(state: np.ndarray) -> float:  # pragma: no cover - compiled
    """A uniform float in [0, 1) with 53 random bits."""
    return np.float64(_next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def _kill(g: int, N: int, D: int, offs: np.ndarray, alive: np.ndarray, live: np.ndarray,
          lpos: np.ndarray, dlive: np.ndarray, doms: np.ndarray, dpos: np.ndarray,
          cnt: np.ndarray, sizes: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Kill live group g: swap-remove it (and its domain once empty); True if a type is wiped."""
    alive[g] = False
    n = sizes[0] - 1
    last = live[n]
    p = lpos[g]
    live[p] = last
    lpos[last] = p
    sizes[0] = n
    d = g // D
    dlive[d] -= 1
    if dlive[d] == 0:
        nd = sizes[1] - 1
        lastd = doms[nd]
        pd = dpos[d]
        doms[pd] = lastd
        dpos[lastd] = pd
        sizes[1] = nd
    wiped = False
    for j in range(offs.shape[0]):
        t = g + offs[j]
        if t >= N:
            t -= N
        cnt[t] -= 1
        if cnt[t] == 0:
            wiped = True
    return wiped


@njit(cache=True, nogil=True)
def _domain_ftw_kernel(N: int, offs: np.ndarray, D: int, q: float, n_trials: int,
                       state: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """Fill ``out`` with n_trials samples of T_q (events until wipe-out) for cyclic offsets.

    Live groups and live domains are kept in swap-remove index arrays, so a uniform live group
    or live domain is drawn in O(1); the live-holder count of every type is updated in O(r) per
    killed group, so an event costs O(r) (single) or O(r·D) (domain event).
    """
    r = offs.shape[0]
    n_dom = (N + D - 1) // D
    alive = np.empty(N, dtype=np.bool_)
    live = np.empty(N, dtype=np.int64)
    lpos = np.empty(N, dtype=np.int64)
    cnt = np.empty(N, dtype=np.int64)
    dlive = np.empty(n_dom, dtype=np.int64)
    doms = np.empty(n_dom, dtype=np.int64)
    dpos = np.empty(n_dom, dtype=np.int64)
    sizes = np.empty(2, dtype=np.int64)
    for trial in range(n_trials):
        for g in range(N):
            alive[g] = True
            live[g] = g
            lpos[g] = g
            cnt[g] = r
        for d in range(n_dom):
            dlive[d] = min(D, N - d * D)
            doms[d] = d
            dpos[d] = d
        sizes[0] = N
        sizes[1] = n_dom
        e = 0
        wiped = False
        while not wiped:
            e += 1
            if _uniform(state) < q:
                d = doms[int(_uniform(state) * sizes[1])]
                for g in range(d * D, min(N, d * D + D)):
                    if alive[g]:
                        if _kill(g, N, D, offs, alive, live, lpos, dlive, doms, dpos, cnt, sizes):
                            wiped = True
            else:
                g = live[int(_uniform(state) * sizes[0])]
                wiped = _kill(g, N, D, offs, alive, live, lpos, dlive, doms, dpos, cnt, sizes)
        out[trial] = e


def domain_failures_to_wipeout(layout: Layout, n_trials: int, seed: SeedLike = None,
                               workers: int = 1, *, domain_size: int = 1,
                               domain_prob: float = 0.0) -> np.ndarray:
    """Sample T_q, the failure *events* until wipe-out under domain events (always the new kernel).

    Same arguments and result as :func:`spare_lib.stacking.wipeout.failures_to_wipeout`, which
    dispatches here when the domain events change the law (q > 0 and D > 1). Calling this
    directly with q = 0 samples the independent-failure model with the event kernel (a different
    random stream from the key-order kernel, same law).
    """
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.stacking.Layout, got {type(layout).__name__}")
    n_trials = check_int("n_trials", n_trials, lo=1)
    workers = check_int("workers", workers, lo=1)
    D, q = check_domain_args(layout.N, domain_size, domain_prob)
    offs = np.asarray(layout.offsets, dtype=np.int64) % layout.N
    out = np.empty(n_trials, dtype=np.int64)
    chunks = chunk_generators(seed, n_trials, DOMAIN_CHUNK_TRIALS)

    def run(chunk: tuple[int, int, np.random.Generator]) -> None:
        start, stop, rng = chunk
        _domain_ftw_kernel(layout.N, offs, D, q, stop - start, _xoshiro_state(rng), out[start:stop])

    if workers == 1 or len(chunks) == 1:
        for c in chunks:
            run(c)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, chunks))
    return out


# ---------------------------------------------------------------------------------------------
# Sidon sets mod N and domain-aware layouts
# ---------------------------------------------------------------------------------------------

#: Node budget of the backtracking searches (keeps every call well under a second).
SEARCH_BUDGET = 200_000


def is_sidon_mod(offsets: object, N: int) -> bool:
    """True when the differences o_i − o_j (i ≠ j) are pairwise distinct mod N.

    Then two types of the cyclic layout share at most one holder (independence condition):
    types t ≠ t' share holders (t − o_i) = (t' − o_j) exactly for the pairs with
    o_i − o_j ≡ t − t' (mod N), of which there is at most one.
    """
    N = check_int("N", N, lo=1)
    offs = [int(o) % N for o in offsets]  # type: ignore[attr-defined]
    if len(set(offs)) != len(offs):
        return False
    diffs = [(a - b) % N for a in offs for b in offs if a != b]
    return len(diffs) == len(set(diffs))


def is_domain_aware(layout: Layout, domain_size: int) -> bool:
    """True when the r holders of every type lie in r distinct domains (checked for every t)."""
    D = check_int("domain_size", domain_size, lo=1, hi=layout.N)
    dom = layout.holders // D
    srt = np.sort(dom, axis=1)
    return bool(np.all(srt[:, 1:] != srt[:, :-1]))


def _search(N: int, r: int, D: int, budget: int) -> tuple[int, ...] | None:
    """Lexicographically first r-set {0 = o_0 < ... < o_{r−1}} that is Sidon mod N with all
    circular gaps ≥ D (depth-first, smallest next offset first), or None if none is found
    within ``budget`` nodes. ``used[d]`` marks the differences taken so far."""
    used = np.zeros(N, dtype=bool)
    offs = [0]
    nodes = 0

    def rec() -> bool:
        nonlocal nodes
        k = len(offs)
        if k == r:
            return True
        hi = N - D * (r - k)  # room for the r − k − 1 later offsets and the wrap gap ≥ D
        for o in range(offs[-1] + D, hi + 1):
            nodes += 1
            if nodes > budget:
                return False
            new = []
            ok = True
            for p in offs:
                for d in ((o - p) % N, (p - o) % N):
                    if used[d] or d in new:
                        ok = False
                        break
                    new.append(d)
                if not ok:
                    break
            if not ok:
                continue
            used[new] = True
            offs.append(o)
            if rec():
                return True
            offs.pop()
            used[new] = False
        return False

    if r == 1:
        return (0,)
    return tuple(offs) if rec() else None


def _is_prime(p: int) -> bool:
    return p >= 2 and all(p % k for k in range(2, int(p**0.5) + 1))


def _gf_field(p: int, k: int) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Monic irreducible f of degree k ∈ {2, 3} over GF(p) and the powers of a primitive element
    of GF(p^k) = GF(p)[x]/(f) (a polynomial of degree ≤ 2 or 3 has no root iff irreducible)."""
    from itertools import product

    def mul(a: tuple[int, ...], b: tuple[int, ...], f: tuple[int, ...]) -> tuple[int, ...]:
        prod = [0] * (2 * k - 1)
        for i, ai in enumerate(a):
            for j, bj in enumerate(b):
                prod[i + j] = (prod[i + j] + ai * bj) % p
        for i in range(2 * k - 2, k - 1, -1):  # reduce with x^k = −(f_0 + ... + f_{k−1} x^{k−1})
            c = prod[i]
            if c:
                for j in range(k):
                    prod[i - k + j] = (prod[i - k + j] - c * f[j]) % p
        return tuple(prod[:k])

    order = p**k - 1
    for f in product(range(p), repeat=k):  # coefficients f_0..f_{k−1} of x^k + ...
        if any((sum(c * z**i for i, c in enumerate(f)) + z**k) % p == 0 for z in range(p)):
            continue
        for g in product(range(p), repeat=k):
            if not any(g[1:]):
                continue
            powers = [tuple([1] + [0] * (k - 1))]
            for _ in range(order - 1):
                powers.append(mul(powers[-1], g, f))
            if len(set(powers)) == order:
                return f, powers
    raise AssertionError("unreachable: GF(p^k)* is cyclic")  # pragma: no cover


def _bose_chowla(p: int) -> tuple[int, int, ...]:
    """Bose–Chowla (1962): p marks Sidon mod p² − 1, {a : θ^a − θ ∈ GF(p)}, θ primitive."""
    _, powers = _gf_field(p, 2)
    theta1 = powers[1][1]
    return tuple(a for a, v in enumerate(powers) if v[1] == theta1)


def _singer(p: int) -> tuple[int, ...]:
    """Singer (1938): p + 1 marks Sidon mod p² + p + 1, {i : α^i ∈ span(1, α)} (a line of PG(2, p))."""
    _, powers = _gf_field(p, 3)
    M = p * p + p + 1
    return tuple(i for i in range(M) if powers[i][2] == 0)


def modular_sidon_offsets(N: int, r: int, *, budget: int = SEARCH_BUDGET) -> tuple[int, ...]:
    """r offsets 0 = o_0 < ... < o_{r−1} < N that form a Sidon set mod N.

    Any two types of the cyclic layout with these offsets share at most one holder (the
    independence condition), also when N ≤ 2·o_{r−1} where the optimal Golomb ruler fails it.

    Method: a depth-first search for the lexicographically first Sidon set (short span), with a
    node budget; if it runs out, the algebraic constructions of Singer (1938: p + 1 marks mod
    p² + p + 1) and Bose–Chowla (1962: p marks mod p² − 1), p prime, taken mod any modulus M
    dividing N (a Sidon set mod M stays one mod every multiple of M) and truncated to r marks.

    Parameters
    ----------
    N : int
        Number of groups, N ≥ 1.
    r : int
        Number of offsets (the redundancy), 1 ≤ r ≤ N.

    Raises
    ------
    ValueError
        If r(r − 1) ≥ N (the r(r − 1) ordered differences must be distinct non-zero residues;
        N/2 is excluded for even N), or if no set was found.

    Examples
    --------
    >>> modular_sidon_offsets(13, 4)
    (0, 1, 3, 9)
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    need = r * (r - 1) + (1 if N % 2 else 2)
    if r > 1 and N < need:
        raise ValueError(f"no Sidon set of r={r} offsets exists mod N={N}: the r(r-1)={r * (r - 1)} "
                         f"differences must be distinct non-zero residues (N >= {need} needed)")
    found = _search(N, r, 1, budget)
    if found is not None:
        return found
    for p in range(2, int(N**0.5) + 2):
        if not _is_prime(p):
            continue
        for M, marks in ((p * p + p + 1, _singer), (p * p - 1, _bose_chowla)):
            if M <= N and N % M == 0 and len(cands := marks(p)) >= r:
                base = sorted(cands[:r])
                out = tuple(sorted((o - base[0]) % N for o in base))
                if is_sidon_mod(out, N):
                    return out
    raise ValueError(f"no Sidon set of r={r} offsets mod N={N} found (search budget {budget} "
                     f"nodes exhausted, no Singer/Bose-Chowla modulus divides N)")


def domain_aware_layout(N: int, r: int, domain_size: int, *,
                        budget: int = SEARCH_BUDGET) -> Layout:
    """Cyclic layout whose r holders of every type lie in r distinct failure domains.

    Both properties hold for every type t: the holders (t − o_j) mod N are in distinct domains
    ⌊g/D⌋ (equivalently every circular gap between sorted offsets is ≥ D, see the module
    docstring), and the offsets are a Sidon set mod N, so two types share at most one holder
    (the independence condition behind μ(N, r)).

    Construction: the lexicographically first such set {0 = o_0 < ... < o_{r−1}}, by depth-first
    search with next offset ≥ previous + D. It is a "D-spaced Golomb ruler" of short span (for
    N = 600, r = 8, D = 10: 0, 10, 21, 33, 46, 60, 75, 91). Short spans help under domain
    events: neighbouring types then have nearly the same r holder domains, so the few distinct
    domain sets overlap and are rarely all killed; among 150 short-span candidates tried at
    N = 600, r = 8, D = 10, q = 0.2, μ_q varied by 1.5 % and this one was within MC noise of the
    best, 44 % above the optimal ruler (docs/correlated_failures.md).

    Parameters
    ----------
    N : int
        Number of groups, N ≥ 1.
    r : int
        Redundancy, 1 ≤ r ≤ N.
    domain_size : int
        D, groups per domain, 1 ≤ D ≤ N.

    Raises
    ------
    ValueError
        If N < r·D (r gaps of at least D must fit around the cycle), if no Sidon set of size r
        exists mod N (N < r(r − 1) + 1, + 2 for even N), or if the search found none.

    Examples
    --------
    >>> domain_aware_layout(600, 8, 10).offsets
    (0, 10, 21, 33, 46, 60, 75, 91)
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    D = check_int("domain_size", domain_size, lo=1, hi=N)
    if N < r * D:
        raise ValueError(f"domain_aware_layout needs N >= r*D = {r * D} (r holders in r distinct "
                         f"domains of D={D} consecutive groups), got N={N}")
    need = r * (r - 1) + (1 if N % 2 else 2)
    if r > 1 and N < need:
        raise ValueError(f"domain_aware_layout needs a Sidon set of r={r} offsets mod N, which needs "
                         f"N >= {need}, got N={N}")
    found = _search(N, r, D, budget)
    if found is None:
        raise ValueError(f"no domain-aware Sidon layout found for N={N}, r={r}, D={D} (none exists "
                         f"or the search budget of {budget} nodes ran out); increase N or lower r, D")
    return Layout(N=N, r=r, offsets=found, kind="domain-aware")
