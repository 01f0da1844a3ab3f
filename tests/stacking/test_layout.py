"""Stacking layouts (SPEC §2): the ruler table, the three constructors, validation."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_lib.stacking import (
    GOLOMB_RULERS,
    Layout,
    consecutive_layout,
    is_golomb_ruler,
    layout_from_offsets,
    make_layout,
    max_ruler_r,
    ruler_layout,
)

# Optimal Golomb ruler lengths (OEIS A003022) for r = 1..28.
OPTIMAL_LENGTHS = [0, 1, 3, 6, 11, 17, 25, 34, 44, 55, 72, 85, 106, 127, 151, 177, 199, 216, 246,
                   283, 333, 356, 372, 425, 480, 492, 553, 585]


@pytest.mark.parametrize("r", sorted(GOLOMB_RULERS))
def test_ruler_table_is_golomb_with_optimal_length(r):
    marks = GOLOMB_RULERS[r]
    assert len(marks) == r
    assert marks[0] == 0 and list(marks) == sorted(marks)
    assert is_golomb_ruler(marks)
    assert marks[-1] == OPTIMAL_LENGTHS[r - 1]


def test_is_golomb_ruler_rejects_repeated_difference():
    assert not is_golomb_ruler([0, 1, 2])
    assert not is_golomb_ruler([0, 2, 4, 5])
    assert is_golomb_ruler([0, 1, 4, 6])


def test_paper_r_ranges():
    # SPEC §2: usable r is 2..12 at N=200, 2..20 at N=600, 2..26 at N=1000.
    assert [max_ruler_r(N) for N in (200, 600, 1000)] == [12, 20, 26]
    assert max_ruler_r(1) == 1


def test_ruler_layout_stacks_and_holders():
    lay = ruler_layout(12, 3)
    assert lay.offsets == (0, 1, 3) and lay.kind == "ruler"
    assert lay.stacks[11].tolist() == [11, 0, 2]
    assert lay.holders[0].tolist() == [0, 11, 9]
    assert lay.independent


@given(N=st.integers(1, 80), data=st.data())
@settings(max_examples=60, deadline=None)
def test_layout_invariants(N, data):
    r = data.draw(st.integers(1, N))
    offsets = data.draw(st.lists(st.integers(0, N - 1), min_size=r, max_size=r, unique=True))
    lay = layout_from_offsets(N, offsets)
    assert lay.stacks.shape == lay.holders.shape == (N, lay.r)
    # level 0 of all groups together is a permutation of the types, likewise every level
    for p in range(lay.r):
        assert sorted(lay.stacks[:, p]) == list(range(N))
    # holders[t, j] holds t at position j; every type has r distinct holders
    for t in range(N):
        assert len(set(lay.holders[t])) == lay.r
        for j in range(lay.r):
            assert lay.stacks[lay.holders[t, j], j] == t
    assert not lay.stacks.flags.writeable and not lay.holders.flags.writeable


@pytest.mark.parametrize("r", [3, 5, 8])
def test_independence_condition_two_types_share_at_most_one_holder(r):
    lay = ruler_layout(2 * GOLOMB_RULERS[r][-1] + 1, r)
    sets = [set(h) for h in lay.holders]
    for a, b in combinations(range(lay.N), 2):
        assert len(sets[a] & sets[b]) <= 1


def test_consecutive_breaks_independence_for_r3():
    lay = consecutive_layout(50, 3)
    assert not lay.independent
    assert len(set(lay.holders[0]) & set(lay.holders[1])) == 2


def test_consecutive_equals_ruler_for_r_le_2():
    for r in (1, 2):
        assert np.array_equal(consecutive_layout(30, r).stacks, ruler_layout(30, r).stacks)


def test_ruler_layout_refuses_small_N_and_names_max_r():
    with pytest.raises(ValueError, match="largest r allowed for N=200 is 12"):
        ruler_layout(200, 13)
    with pytest.raises(ValueError, match="largest r allowed for N=10 is 3"):
        ruler_layout(10, 4)


def test_ruler_layout_allow_overlap():
    lay = ruler_layout(10, 4, allow_overlap=True)  # 10 <= 2*6-1: two types may share 2 holders
    assert lay.N == 10 and not lay.independent
    with pytest.raises(ValueError, match="distinct mod N"):
        ruler_layout(6, 4, allow_overlap=True)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ruler_layout(0, 1), "N must be in"),
        (lambda: ruler_layout(10.5, 1), "N must be an integer"),
        (lambda: ruler_layout(100, 0), "r must be in"),
        (lambda: ruler_layout(100, 29), "r must be in"),
        (lambda: ruler_layout(3, 4, allow_overlap=True), r"r must be in \[1, N\]"),
        (lambda: consecutive_layout(5, 6), "r must be in"),
        (lambda: consecutive_layout(-1, 1), "N must be in"),
        (lambda: layout_from_offsets(10, []), "at least one offset"),
        (lambda: layout_from_offsets(10, [0, -1]), "offsets must lie in"),
        (lambda: layout_from_offsets(10, [0, 10]), "offsets must lie in"),
        (lambda: layout_from_offsets(10, [0, 2, 2]), "offsets must be distinct"),
        (lambda: layout_from_offsets(10, [0, 1.5]), "offsets must be integers"),
        (lambda: layout_from_offsets(10, 3), "offsets must be a sequence"),
        (lambda: layout_from_offsets(10, [0, 1, 2], require_ruler=True), "Golomb ruler"),
        (lambda: make_layout(10, 2, kind="zigzag"), "kind must be"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_layout_is_frozen():
    lay = consecutive_layout(5, 2)
    assert isinstance(lay, Layout)
    with pytest.raises(AttributeError):
        lay.N = 6  # type: ignore[misc]
