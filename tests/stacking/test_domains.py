"""Tests of failure domains: the event sampler against a plain-Python oracle, and the layouts."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp

from spare_lib.stacking.domains import (
    _bose_chowla,
    _singer,
    domain_aware_layout,
    domain_failures_to_wipeout,
    is_domain_aware,
    is_sidon_mod,
    modular_sidon_offsets,
)
from spare_lib.stacking.layout import (
    Layout,
    consecutive_layout,
    layout_from_offsets,
    random_offsets_layout,
    ruler_layout,
)
from spare_lib.stacking.wipeout import failures_to_wipeout

#: Significance level of the two-sample KS tests (each test is one fixed seed: deterministic).
KS_ALPHA = 1e-3


def oracle_events_to_wipeout(layout: Layout, D: int, q: float, rng: random.Random) -> int:
    """Straightforward simulation of the model with Python lists (independent of the kernel).

    Uniform live group / live domain by rejection sampling; live holders counted per type.
    """
    N, r = layout.N, layout.r
    stacks = [[int(t) for t in row] for row in layout.stacks]
    alive = [True] * N
    n_dom = -(-N // D)
    dom_live = [min(D, N - d * D) for d in range(n_dom)]
    live_holders = [r] * N
    e = 0

    def kill(g: int) -> bool:
        alive[g] = False
        dom_live[g // D] -= 1
        wiped = False
        for t in stacks[g]:
            live_holders[t] -= 1
            wiped = wiped or live_holders[t] == 0
        return wiped

    while True:
        e += 1
        wiped = False
        if rng.random() < q:
            d = rng.randrange(n_dom)
            while dom_live[d] == 0:
                d = rng.randrange(n_dom)
            for g in range(d * D, min(N, d * D + D)):
                if alive[g]:
                    wiped = kill(g) or wiped
        else:
            g = rng.randrange(N)
            while not alive[g]:
                g = rng.randrange(N)
            wiped = kill(g)
        if wiped:
            return e


def oracle_sample(layout: Layout, D: int, q: float, n: int, seed: int) -> np.ndarray:
    rng = random.Random(seed)
    return np.array([oracle_events_to_wipeout(layout, D, q, rng) for _ in range(n)])


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    domain_failures_to_wipeout(ruler_layout(12, 3), 2, seed=0, domain_size=2, domain_prob=0.5)
    failures_to_wipeout(ruler_layout(12, 3), 2, seed=0)


CASES = [
    (ruler_layout(60, 4), 5, 0.2),
    (ruler_layout(60, 4), 3, 0.5),
    (consecutive_layout(50, 3), 4, 0.1),
    (consecutive_layout(48, 5), 7, 0.3),  # D does not divide N: smaller last domain
    (layout_from_offsets(40, [0, 5, 13]), 6, 1.0),
    (ruler_layout(30, 3), 1, 0.4),  # D = 1 dispatches; compared through the event kernel below
]


@pytest.mark.parametrize(("layout", "D", "q"), CASES)
def test_kernel_matches_python_oracle(layout: Layout, D: int, q: float) -> None:
    kern = domain_failures_to_wipeout(layout, 20_000, seed=11, domain_size=D, domain_prob=q)
    orac = oracle_sample(layout, D, q, 1500, seed=12)
    se = np.sqrt(kern.var(ddof=1) / kern.size + orac.var(ddof=1) / orac.size)
    assert abs(kern.mean() - orac.mean()) < 4 * se
    assert ks_2samp(kern, orac).pvalue > KS_ALPHA


@pytest.mark.parametrize("layout", [ruler_layout(600, 8), consecutive_layout(600, 8)])
def test_paper_size_mean_within_1p5_percent_of_oracle(layout: Layout) -> None:
    """Acceptance: N = 600, r = 8, D = 10, q = 0.2; Monte Carlo μ_q within 1.5 % of the oracle."""
    kern = failures_to_wipeout(layout, 40_000, seed=5, domain_size=10, domain_prob=0.2)
    orac = oracle_sample(layout, 10, 0.2, 4000, seed=6)
    assert abs(kern.mean() / orac.mean() - 1) < 0.015 + 3 * orac.std() / np.sqrt(orac.size) / orac.mean()
    assert ks_2samp(kern, orac).pvalue > KS_ALPHA


def test_q_zero_and_d_one_dispatch_bit_identical() -> None:
    lay = ruler_layout(200, 6)
    base = failures_to_wipeout(lay, 5000, seed=3)
    assert np.array_equal(failures_to_wipeout(lay, 5000, seed=3, domain_size=8, domain_prob=0.0), base)
    assert np.array_equal(failures_to_wipeout(lay, 5000, seed=3, domain_size=1, domain_prob=0.7), base)


def test_event_kernel_with_q_zero_has_law_of_mu() -> None:
    lay = ruler_layout(200, 6)
    a = failures_to_wipeout(lay, 20_000, seed=1)
    b = domain_failures_to_wipeout(lay, 20_000, seed=2, domain_size=8, domain_prob=0.0)
    assert ks_2samp(a, b).pvalue > KS_ALPHA


def test_results_do_not_depend_on_workers() -> None:
    lay = ruler_layout(100, 5)
    one = failures_to_wipeout(lay, 9000, seed=4, domain_size=5, domain_prob=0.3)
    two = failures_to_wipeout(lay, 9000, seed=4, workers=2, domain_size=5, domain_prob=0.3)
    assert np.array_equal(one, two)


def test_q_one_domain_size_n_wipes_at_first_event() -> None:
    lay = ruler_layout(30, 3)
    assert np.all(failures_to_wipeout(lay, 100, seed=0, domain_size=30, domain_prob=1.0) == 1)


@pytest.mark.parametrize(("kw", "name", "rng"), [
    (dict(domain_size=0, domain_prob=0.1), "domain_size", "[1, N] = [1, 60]"),
    (dict(domain_size=61, domain_prob=0.1), "domain_size", "[1, N] = [1, 60]"),
    (dict(domain_size=2.5, domain_prob=0.1), "domain_size", "[1, N]"),
    (dict(domain_size=5, domain_prob=-0.1), "domain_prob", "[0, 1]"),
    (dict(domain_size=5, domain_prob=1.5), "domain_prob", "[0, 1]"),
])
def test_validation_names_parameter_and_range(kw: dict, name: str, rng: str) -> None:
    with pytest.raises(ValueError, match=name) as err:
        failures_to_wipeout(ruler_layout(60, 4), 10, seed=0, **kw)
    assert rng in str(err.value)


# ----------------------------------------------------------------------------------------------
# Layouts
# ----------------------------------------------------------------------------------------------

def brute_domain_distinct(layout: Layout, D: int) -> bool:
    return all(len({int(g) // D for g in row}) == layout.r for row in layout.holders)


def brute_share_at_most_one(layout: Layout) -> bool:
    sets = [set(int(g) for g in row) for row in layout.holders]
    return all(len(sets[a] & sets[b]) <= 1 for a in range(layout.N) for b in range(a + 1, layout.N))


@settings(max_examples=60, deadline=None)
@given(N=st.integers(1, 160), r=st.integers(1, 7), D=st.integers(1, 30))
def test_domain_aware_layout_properties(N: int, r: int, D: int) -> None:
    if D > N or r > N:
        with pytest.raises(ValueError):
            domain_aware_layout(N, r, D)
        return
    try:
        lay = domain_aware_layout(N, r, D)
    except ValueError as err:
        msg = str(err)
        assert "N >=" in msg or "no domain-aware" in msg
        assert N < r * D or N < r * (r - 1) + 2 or "no domain-aware" in msg
        return
    assert lay.kind == "domain-aware" and lay.offsets[0] == 0 and lay.r == r
    assert brute_domain_distinct(lay, D) and is_domain_aware(lay, D)
    assert is_sidon_mod(lay.offsets, N)
    if N <= 80:
        assert brute_share_at_most_one(lay)


@settings(max_examples=80, deadline=None)
@given(N=st.integers(2, 120), data=st.data())
def test_gap_criterion_is_exact(N: int, data: st.DataObject) -> None:
    """Distinct domains for every type ⟺ every circular gap between sorted offsets is ≥ D."""
    r = data.draw(st.integers(1, min(N, 6)))
    D = data.draw(st.integers(1, N))
    offs = sorted(data.draw(st.lists(st.integers(0, N - 1), min_size=r, max_size=r, unique=True)))
    lay = layout_from_offsets(N, offs)
    gaps = [b - a for a, b in zip(offs, offs[1:], strict=False)] + [N - offs[-1] + offs[0]]
    assert brute_domain_distinct(lay, D) == (min(gaps) >= D or r == 1)


def test_paper_configurations_exist_and_are_short() -> None:
    assert domain_aware_layout(600, 8, 10).offsets == (0, 10, 21, 33, 46, 60, 75, 91)
    assert domain_aware_layout(200, 6, 8).offsets == (0, 8, 17, 27, 38, 50)
    assert not is_domain_aware(ruler_layout(600, 8), 10)


def test_domain_aware_impossible_says_why() -> None:
    with pytest.raises(ValueError, match=r"N >= r\*D"):
        domain_aware_layout(50, 6, 10)
    with pytest.raises(ValueError, match="Sidon"):
        domain_aware_layout(40, 7, 2)


@settings(max_examples=60, deadline=None)
@given(N=st.integers(1, 400), r=st.integers(1, 12))
def test_modular_sidon_offsets(N: int, r: int) -> None:
    if r > N:
        return
    try:
        offs = modular_sidon_offsets(N, r)
    except ValueError as err:
        assert N < r * (r - 1) + 2 or "no Sidon set" in str(err)
        return
    assert len(offs) == r and offs[0] == 0 and list(offs) == sorted(offs) and max(offs) < N
    assert is_sidon_mod(offs, N)


@pytest.mark.parametrize("p", [2, 3, 5, 7, 11])
def test_algebraic_sidon_sets(p: int) -> None:
    bc, sg = _bose_chowla(p), _singer(p)
    assert len(bc) == p and is_sidon_mod(bc, p * p - 1)
    assert len(sg) == p + 1 and is_sidon_mod(sg, p * p + p + 1)
    assert is_sidon_mod(sg, 3 * (p * p + p + 1))  # lifts to multiples of the modulus


def test_modular_sidon_below_ruler_condition() -> None:
    """N = 57 ≤ 2·34: the r = 8 ruler fails independence, a Sidon set mod 57 does not."""
    offs = modular_sidon_offsets(57, 8)
    lay = layout_from_offsets(57, offs)
    assert brute_share_at_most_one(lay)
    assert not brute_share_at_most_one(ruler_layout(57, 8, allow_overlap=True))


def test_is_sidon_mod_detects_half_difference() -> None:
    assert not is_sidon_mod([0, 5], 10)  # 5 − 0 ≡ 0 − 5 (mod 10)
    assert is_sidon_mod([0, 4], 10)
    assert not is_sidon_mod(random_offsets_layout(30, 10, seed=1).offsets, 30)
