"""The fast failures-to-wipe-out kernel (spare_lib.stacking.wipeout._ftw_kernel): exact distribution.

Oracles: exact P(T = k) and μ by enumerating all 2^N sets of dead groups (tiny N), the per-trial
``wipeout_index`` on the sorted key order, a plain-Python xoshiro256**, and the plain-NumPy
reference sampler ``failures_to_wipeout_numpy``.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from spare_lib.stacking import (
    consecutive_layout,
    failures_to_wipeout,
    layout_from_offsets,
    ruler_layout,
    wipeout_index,
)
from spare_lib.stacking.wipeout import _fill_keys, _ftw_kernel, _trial_from_keys

TINY_LAYOUTS = [
    consecutive_layout(7, 3),
    consecutive_layout(11, 4),
    ruler_layout(9, 3, allow_overlap=True),
    ruler_layout(12, 4, allow_overlap=True),
    layout_from_offsets(10, [0, 2, 7]),
    layout_from_offsets(8, [3, 5]),  # o_0 ≠ 0
    layout_from_offsets(7, [0]),  # r = 1: T = 1 always
]


def exact_pmf(layout) -> np.ndarray:
    """P(T = k), k = 0..N, from counting the k-sets of dead groups that wipe out no type.

    S(k) = P(T > k) = #{k-sets containing no type's full holder set} / C(N, k) and
    P(T = k) = S(k − 1) − S(k).
    """
    N = layout.N
    hmask = [sum(1 << int(h) for h in row) for row in layout.holders]
    ok = np.zeros(N + 1)
    for dead in range(1 << N):
        if not any(dead & h == h for h in hmask):
            ok[dead.bit_count()] += 1
    surv = np.array([ok[k] / comb(N, k) for k in range(N + 1)])
    pmf = np.zeros(N + 1)
    pmf[1:] = surv[:-1] - surv[1:]
    return pmf


def assert_matches_pmf(t: np.ndarray, pmf: np.ndarray) -> None:
    """Mean within 4 standard errors of the exact μ (false alarm ~6e-5), and a chi-square
    goodness-of-fit test of the whole distribution at level 1e-4 (bins with expected count < 5
    merged into their neighbour)."""
    n = t.size
    mu = float(np.sum(np.arange(pmf.size) * pmf))
    assert t.min() >= 1 and t.max() < pmf.size
    se = max(t.std(ddof=1), 1e-12) / np.sqrt(n)
    assert abs(t.mean() - mu) < 4 * se + 1e-12
    observed = np.bincount(t, minlength=pmf.size).astype(float)
    expected = pmf * n
    assert observed[expected == 0].sum() == 0  # impossible values never appear
    obs_bins, exp_bins, o_acc, e_acc = [], [], 0.0, 0.0
    for o, e in zip(observed, expected, strict=True):
        o_acc, e_acc = o_acc + o, e_acc + e
        if e_acc >= 5:
            obs_bins.append(o_acc)
            exp_bins.append(e_acc)
            o_acc = e_acc = 0.0
    if e_acc > 0:
        obs_bins[-1] += o_acc
        exp_bins[-1] += e_acc
    if len(obs_bins) > 1:
        assert stats.chisquare(obs_bins, exp_bins).pvalue > 1e-4


@pytest.mark.parametrize("layout", TINY_LAYOUTS, ids=repr)
def test_public_sampler_matches_exact_distribution(warm_wipeout, layout):
    t = failures_to_wipeout(layout, 40_000, seed=2026)
    assert_matches_pmf(t, exact_pmf(layout))


@pytest.mark.parametrize("key_mask", [0, 1, 7, 0xFF])
@pytest.mark.parametrize("layout", TINY_LAYOUTS[:6], ids=repr)
def test_tie_resolution_is_exact(warm_wipeout, layout, key_mask):
    """Narrow keys force ties at the critical key V (mask 0: all N keys tie, so the order is a
    pure Fisher–Yates shuffle); the distribution of T must not change."""
    offs = np.asarray(layout.offsets, dtype=np.int64) % layout.N
    state = np.array([1, 2, 3, key_mask + 4], dtype=np.uint64)
    out = np.empty(30_000, dtype=np.int64)
    _ftw_kernel(layout.N, offs, out.size, state, np.uint32(key_mask), out)
    assert_matches_pmf(out, exact_pmf(layout))


@st.composite
def layout_and_keys(draw):
    N = draw(st.integers(1, 40))
    r = draw(st.integers(1, min(N, 6)))
    offs = draw(st.lists(st.integers(0, N - 1), min_size=r, max_size=r, unique=True))
    keys = draw(st.lists(st.integers(0, 2**32 - 1), min_size=N, max_size=N, unique=True))
    return layout_from_offsets(N, offs), np.array(keys, dtype=np.uint32)


@settings(max_examples=200, deadline=None)
@given(layout_and_keys())
def test_trial_equals_wipeout_index_of_key_order(layout_keys):
    """With distinct keys the failure order is argsort(keys); T must equal wipeout_index."""
    layout, keys = layout_keys
    N = layout.N
    offs = np.asarray(layout.offsets, dtype=np.int64)
    omax = int(offs.max())
    ext = np.concatenate([keys, keys[:omax]])
    state = np.array([1, 2, 3, 4], dtype=np.uint64)
    got = _trial_from_keys(ext, N, offs, omax, np.empty(N, dtype=np.uint32), state)
    assert got == wipeout_index(layout, np.argsort(keys))


def test_keys_follow_xoshiro256starstar():
    """Oracle: a plain-Python xoshiro256**; keys are the low then high 32 bits of each output."""
    M = (1 << 64) - 1

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & M

    s = [0x0123456789ABCDEF, 0xFEDCBA9876543210, 0x0F1E2D3C4B5A6978, 0x1234]
    state = np.array(s, dtype=np.uint64)
    expected = []
    for _ in range(4):
        res = rotl(s[1] * 5 & M, 7) * 9 & M
        t = s[1] << 17 & M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        expected += [res & 0xFFFFFFFF, res >> 32]
    N, omax = 7, 3
    buf = np.zeros((N + omax + 1) // 2, dtype=np.uint64)
    ext = buf.view(np.uint32)
    _fill_keys(state, buf, ext, N, omax, np.uint64(M))
    assert ext[:N].tolist() == expected[:N]
    assert ext[N:N + omax].tolist() == expected[:omax]
    assert state.tolist() == s

