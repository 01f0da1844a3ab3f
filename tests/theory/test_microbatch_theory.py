"""Theory of the least makespan with b micro-batches (issue 25, ``theory.microbatch``).

Oracles: brute force over every death pattern of a small ring for the arc kernel (eq. 3); the
max-flow kernel of ``rectlr.microbatch`` for the arc bound (exact for the consecutive layout, a
lower bound for the ruler); ``theory.finite.overhead_finite`` for the global bound at b = 1; and
the Monte Carlo of ``rectlr.microbatch_mc`` for S̄_b.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from spare_lib.rectlr.microbatch import microbatch_assign
from spare_lib.rectlr.microbatch_mc import makespan_mc
from spare_lib.stacking import consecutive_layout, ruler_layout
from spare_lib.theory.finite import overhead_finite
from spare_lib.theory.microbatch import (
    arc_boundary,
    arc_valid_prob,
    global_bound,
    sbar_b_global,
    sbar_b_theory,
)


def _brute_arc_prob(N: int, x: float, b: int, ell: int, c: int) -> float:
    """P_x(every circular window Σ(b − ℓ·live) ≤ b·c and the ring Σ ≤ 0), by enumeration."""
    total = 0.0
    for bits in itertools.product((0, 1), repeat=N):
        dead = np.array(bits)
        k = int(dead.sum())
        steps = b - ell * (1 - dead)
        ok = steps.sum() <= 0
        for s in range(N):
            if not ok:
                break
            run = np.cumsum(np.roll(steps, -s)[: N - 1])
            ok = bool(np.all(run <= b * c))
        if ok:
            total += x**k * (1 - x) ** (N - k)
    return total


@pytest.mark.parametrize("N,x,b,ell,c", [(8, 0.3, 2, 3, 1), (9, 0.4, 3, 4, 2), (10, 0.2, 2, 3, 3),
                                         (10, 0.5, 1, 3, 2), (9, 0.3, 2, 2, 1), (8, 0.25, 4, 4, 0),
                                         (9, 0.35, 2, 9, 2)])
def test_arc_kernel_equals_brute_force(N: int, x: float, b: int, ell: int, c: int) -> None:
    assert arc_valid_prob(N, x, b, ell, c) == pytest.approx(_brute_arc_prob(N, x, b, ell, c),
                                                            rel=1e-12, abs=1e-15)


def _rho_arc(dead: np.ndarray, c: int) -> float:
    N = dead.size
    cs = np.concatenate([[0], np.cumsum(np.concatenate([dead, dead]))])
    best = N / (N - dead.sum())
    for s in range(N):
        for W in range(c + 1, N):
            d = cs[s + W] - cs[s]
            if W == d:
                return np.inf
            best = max(best, (W - c) / (W - d))
    return best


@pytest.mark.parametrize("kind", ["consecutive", "ruler"])
def test_arc_bound_is_exact_for_consecutive_and_a_bound_for_rulers(kind: str) -> None:
    N, r, b = 60, 4, 7
    lay = consecutive_layout(N, r) if kind == "consecutive" else ruler_layout(N, r)
    c = arc_boundary(N, r, kind)
    rng = np.random.default_rng(4)
    n_strict = 0
    for _ in range(60):
        alive = rng.random(N) >= rng.uniform(0.05, 0.35)
        plan = microbatch_assign(lay, alive, b)
        rho = _rho_arc((~alive).astype(np.int64), c)
        if plan.outcome == "wipeout":
            assert kind == "ruler" or rho == np.inf
            continue
        lower = int(np.ceil(b * rho - 1e-9))
        assert lower >= global_bound(N, int((~alive).sum()), b)
        if kind == "consecutive":
            assert plan.makespan == lower
        else:
            assert plan.makespan >= lower
            n_strict += plan.makespan > lower
    assert kind == "consecutive" or n_strict < 60


def test_theory_reduces_to_the_global_bound_where_arcs_cannot_bind() -> None:
    """Ruler r = 12 at N = 200 (c = 85): no arc can beat the ring, so eq. (4) must give the
    fixed-k global-bound average; this checks the Poissonisation identity and the quadrature."""
    assert sbar_b_theory(200, 12, 2) == pytest.approx(sbar_b_global(200, 12, 2), rel=2e-4)


def test_global_bound_at_b1_is_overhead_finite() -> None:
    assert sbar_b_global(200, 8, 1) == pytest.approx(overhead_finite(200, 8), rel=1e-12)
    assert sbar_b_global(150, 4, 1, "consecutive") == pytest.approx(
        overhead_finite(150, 4, "consecutive"), rel=1e-12)


@pytest.mark.parametrize("kind,N,r,b", [("ruler", 200, 4, 2), ("ruler", 200, 4, 8),
                                        ("consecutive", 200, 4, 8), ("ruler", 200, 8, 2)])
def test_sbar_b_theory_within_2_percent_of_monte_carlo(kind: str, N: int, r: int, b: int) -> None:
    """Acceptance subset of issue 25. Tolerance 2 % (the issue's); with 1500 cycles the MC
    standard error is ≤ 0.5 %, so the check fails only if the theory is off by ≳ 1.5 %."""
    lay = consecutive_layout(N, r) if kind == "consecutive" else ruler_layout(N, r)
    mc = makespan_mc(lay, b, 1500, seed=N + r + b)
    assert mc.s_bar_b_se < 0.005 * mc.s_bar_b
    th = sbar_b_theory(N, r, b, kind)
    assert th == pytest.approx(mc.s_bar_b, rel=0.02)
    # the theory beats the global bound where the MC does (it is not the global bound in disguise)
    assert sbar_b_global(N, r, b, kind) <= th


def test_inputs_are_validated() -> None:
    with pytest.raises(ValueError, match="k must be in"):
        global_bound(10, 10, 2)
    with pytest.raises(ValueError, match="x must be"):
        arc_valid_prob(10, 1.5, 2, 3, 1)
    with pytest.raises(ValueError, match="layout must be"):
        sbar_b_theory(100, 4, 2, "zigzag")
