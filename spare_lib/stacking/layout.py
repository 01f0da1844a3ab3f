"""Stacking layouts (SPEC §2): which shard types each data-parallel group holds, in which order.

Group ``w`` holds the *stack* ``[(w + o_0) mod N, ..., (w + o_{r-1}) mod N]`` for offsets
``o_0 < ... < o_{r-1}``. The paper uses optimal Golomb rulers as offsets, so that for
``N > 2·o_{r-1} − 1`` any two shard types share at most one holder group (the independence
condition behind the closed form of μ(N, r)). The *consecutive* layout ``0..r-1`` coincides with
the ruler for r ≤ 2 and is also described in the paper.

Example
-------
>>> lay = ruler_layout(12, 3)
>>> lay.stacks[0].tolist(), lay.holders[0].tolist()
([0, 1, 3], [0, 11, 9])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int

#: Optimal Golomb rulers by order r (number of marks). r = 1..26 as used by the paper's
#: simulator (SPEC §2). r = 27, 28 are the optimal rulers of lengths 553 and 585 found by the
#: distributed.net OGR-27 (2014) and OGR-28 (2022) projects; the Golomb property of every entry
#: (all pairwise differences distinct) is checked in tests/test_layout.py, their optimality is
#: the cited search result and cannot be checked here.
GOLOMB_RULERS: dict[int, tuple[int, ...]] = {
    1: (0,),
    2: (0, 1),
    3: (0, 1, 3),
    4: (0, 1, 4, 6),
    5: (0, 1, 4, 9, 11),
    6: (0, 1, 4, 10, 12, 17),
    7: (0, 1, 4, 10, 18, 23, 25),
    8: (0, 1, 4, 9, 15, 22, 32, 34),
    9: (0, 1, 5, 12, 25, 27, 35, 41, 44),
    10: (0, 1, 6, 10, 23, 26, 34, 41, 53, 55),
    11: (0, 1, 4, 13, 28, 33, 47, 54, 64, 70, 72),
    12: (0, 2, 6, 24, 29, 40, 43, 55, 68, 75, 76, 85),
    13: (0, 2, 5, 25, 37, 43, 59, 70, 85, 89, 98, 99, 106),
    14: (0, 4, 6, 20, 35, 52, 59, 77, 78, 86, 89, 99, 122, 127),
    15: (0, 4, 20, 30, 57, 59, 62, 76, 100, 111, 123, 136, 144, 145, 151),
    16: (0, 1, 4, 11, 26, 32, 56, 68, 76, 115, 117, 134, 150, 163, 168, 177),
    17: (0, 5, 7, 17, 52, 56, 67, 80, 81, 100, 122, 138, 159, 165, 168, 191, 199),
    18: (0, 2, 10, 22, 53, 56, 82, 83, 89, 98, 130, 148, 153, 167, 188, 192, 205, 216),
    19: (0, 1, 6, 25, 32, 72, 100, 108, 120, 130, 153, 169, 187, 190, 204, 231, 233, 242, 246),
    20: (0, 1, 8, 11, 68, 77, 94, 116, 121, 156, 158, 179, 194, 208, 212, 228, 240, 253, 259,
         283),
    21: (0, 2, 24, 56, 77, 82, 83, 95, 129, 144, 179, 186, 195, 255, 265, 285, 293, 296, 310,
         329, 333),
    22: (0, 1, 9, 14, 43, 70, 106, 122, 124, 128, 159, 179, 204, 223, 253, 263, 270, 291, 330,
         341, 353, 356),
    23: (0, 3, 7, 17, 61, 66, 91, 99, 114, 159, 171, 199, 200, 226, 235, 246, 277, 316, 329,
         348, 350, 366, 372),
    24: (0, 9, 33, 37, 38, 97, 122, 129, 140, 142, 152, 191, 205, 208, 252, 278, 286, 326, 332,
         353, 368, 384, 403, 425),
    25: (0, 12, 29, 39, 72, 91, 146, 157, 160, 161, 166, 191, 207, 214, 258, 290, 316, 354, 372,
         394, 396, 431, 459, 467, 480),
    26: (0, 1, 33, 83, 104, 110, 124, 163, 185, 200, 203, 249, 251, 258, 314, 318, 343, 356, 386,
         430, 440, 456, 464, 475, 487, 492),
    27: (0, 3, 15, 41, 66, 95, 97, 106, 142, 152, 220, 221, 225, 242, 295, 330, 338, 354, 382,
         388, 402, 415, 486, 504, 523, 546, 553),
    28: (0, 3, 15, 41, 66, 95, 97, 106, 142, 152, 220, 221, 225, 242, 295, 330, 338, 354, 382,
         388, 402, 415, 486, 504, 523, 546, 553, 585),
}

MAX_RULER_R = max(GOLOMB_RULERS)


def is_golomb_ruler(offsets: tuple[int, ...] | list[int] | np.ndarray) -> bool:
    """True when all pairwise differences of ``offsets`` are distinct (a Golomb ruler)."""
    marks = sorted(int(o) for o in offsets)
    diffs = [b - a for a, b in combinations(marks, 2)]
    return len(marks) == len(set(marks)) and len(diffs) == len(set(diffs))


def max_ruler_r(N: int) -> int:
    """Largest r whose optimal ruler satisfies the independence condition N > 2·o_{r-1} − 1.

    Parameters
    ----------
    N : int
        Number of data-parallel groups (N ≥ 1).

    Returns
    -------
    int
        The largest r in the ruler table with ``N >= 2 * GOLOMB_RULERS[r][-1]`` (at least 1).
        For N = 200, 600, 1000 this is 12, 20, 26 (the x-axes of the paper's Figs. 6–8).
    """
    N = check_int("N", N, lo=1)
    best = 1
    for r, marks in GOLOMB_RULERS.items():
        if N > 2 * marks[-1] - 1 and r <= N:
            best = max(best, r)
    return best


@dataclass(frozen=True, eq=False)
class Layout:
    """A stacking layout of N shard types over N groups with redundancy r.

    Attributes
    ----------
    N : int
        Number of data-parallel groups (= number of shard types).
    r : int
        Redundancy: stack length of every group, number of holders of every type.
    offsets : tuple of int
        The cyclic offsets o_0 < ... < o_{r-1}.
    kind : str
        'ruler', 'consecutive' or 'custom'.
    stacks : ndarray, shape (N, r), int64, read-only
        Row w is group w's stack: ``stacks[w, j] = (w + o_j) mod N``.
    holders : ndarray, shape (N, r), int64, read-only
        Row t lists the groups holding type t: ``holders[t, j] = (t − o_j) mod N``, and type t
        sits at position j of group ``holders[t, j]``'s base stack.
    """

    N: int
    r: int
    offsets: tuple[int, ...]
    kind: str = "custom"
    stacks: np.ndarray = field(init=False, repr=False)
    holders: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        off = np.asarray(self.offsets, dtype=np.int64)
        w = np.arange(self.N, dtype=np.int64)[:, None]
        stacks = (w + off[None, :]) % self.N
        holders = (w - off[None, :]) % self.N
        stacks.setflags(write=False)
        holders.setflags(write=False)
        object.__setattr__(self, "stacks", stacks)
        object.__setattr__(self, "holders", holders)

    @property
    def independent(self) -> bool:
        """True when any two shard types share at most one holder group."""
        return self.N > 2 * max(self.offsets) - 1 and is_golomb_ruler(self.offsets)

    def __repr__(self) -> str:
        return f"Layout(N={self.N}, r={self.r}, kind={self.kind!r}, offsets={self.offsets})"


def _check_offsets(N: int, offsets: object, require_ruler: bool) -> tuple[int, ...]:
    try:
        raw = list(offsets)  # type: ignore[call-overload]
    except TypeError:
        raise ValueError(f"offsets must be a sequence of integers, got {offsets!r}") from None
    if not raw:
        raise ValueError("offsets must contain at least one offset, got an empty sequence")
    vals = []
    for o in raw:
        if isinstance(o, bool) or not isinstance(o, (int, np.integer)):
            raise ValueError(f"offsets must be integers, got {o!r} in {raw!r}")
        if o < 0 or o >= N:
            raise ValueError(f"offsets must lie in [0, N-1] = [0, {N - 1}], got {int(o)} in {raw!r}")
        vals.append(int(o))
    if len(set(vals)) != len(vals):
        raise ValueError(f"offsets must be distinct (a group cannot hold a type twice), got {vals!r}")
    vals.sort()
    if require_ruler and not is_golomb_ruler(vals):
        raise ValueError(f"offsets must form a Golomb ruler (distinct pairwise differences), got {vals!r}")
    return tuple(vals)


def layout_from_offsets(N: int, offsets: object, *, require_ruler: bool = False,
                        kind: str = "custom") -> Layout:
    """Cyclic layout with user-given offsets.

    Parameters
    ----------
    N : int
        Number of groups and shard types, N ≥ 1.
    offsets : sequence of int
        Distinct offsets in [0, N−1] (sorted on return); r = len(offsets) ≤ N.
    require_ruler : bool
        Refuse offsets that are not a Golomb ruler.
    kind : str
        Label stored on the layout.

    Examples
    --------
    >>> layout_from_offsets(10, [0, 2, 7]).stacks[9].tolist()
    [9, 1, 6]
    """
    N = check_int("N", N, lo=1)
    offs = _check_offsets(N, offsets, require_ruler)
    return Layout(N=N, r=len(offs), offsets=offs, kind=kind)


def consecutive_layout(N: int, r: int) -> Layout:
    """The consecutive layout: group w holds types w, w+1, ..., w+r−1 (mod N).

    Parameters
    ----------
    N : int
        Number of groups, N ≥ 1.
    r : int
        Redundancy, 1 ≤ r ≤ N.
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    return Layout(N=N, r=r, offsets=tuple(range(r)), kind="consecutive")


def ruler_layout(N: int, r: int, *, allow_overlap: bool = False) -> Layout:
    """The paper's layout: offsets are the optimal Golomb ruler with r marks (SPEC §2).

    Parameters
    ----------
    N : int
        Number of groups, N ≥ 1.
    r : int
        Redundancy, 1 ≤ r ≤ 28 (the ruler table) and r ≤ N.
    allow_overlap : bool
        By default N must exceed 2·o_{r−1} − 1 (independence condition: two types share at most
        one holder). Pass True to accept smaller N; offsets must still be distinct mod N.

    Raises
    ------
    ValueError
        If r is outside the table, or N is too small for the ruler; the message gives the
        largest r allowed for that N.
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=MAX_RULER_R)
    if r > N:
        raise ValueError(f"r must be in [1, N] = [1, {N}], got {r}")
    marks = GOLOMB_RULERS[r]
    if not allow_overlap and N <= 2 * marks[-1] - 1:
        raise ValueError(
            f"N={N} is too small for the r={r} Golomb ruler (length {marks[-1]}): the independence "
            f"condition needs N > {2 * marks[-1] - 1}; the largest r allowed for N={N} is "
            f"{max_ruler_r(N)} (or pass allow_overlap=True)"
        )
    if marks[-1] >= N:
        raise ValueError(
            f"N={N} is too small for the r={r} Golomb ruler (length {marks[-1]}): offsets must be "
            f"distinct mod N; need N > {marks[-1]}"
        )
    return Layout(N=N, r=r, offsets=marks, kind="ruler")


def make_layout(N: int, r: int, kind: str = "ruler", **kwargs: object) -> Layout:
    """Dispatch on ``kind`` in {'ruler', 'consecutive'}; convenience for sweeps and the CLI."""
    if kind == "ruler":
        return ruler_layout(N, r, **kwargs)  # type: ignore[arg-type]
    if kind == "consecutive":
        return consecutive_layout(N, r)
    raise ValueError(f"kind must be 'ruler' or 'consecutive', got {kind!r}")


def random_offsets_layout(N: int, r: int, seed: SeedLike = None) -> Layout:
    """A cyclic layout with r distinct offsets drawn uniformly from 0..N−1 (0 included).

    A baseline for the layout comparison: random offsets generally break the independence
    condition only mildly (a few pairs of types share two holders).
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    rng = np.random.default_rng(as_seed_sequence(seed))
    offs = np.concatenate([[0], 1 + rng.choice(N - 1, size=r - 1, replace=False)])
    return layout_from_offsets(N, [int(o) for o in offs], kind="random")
