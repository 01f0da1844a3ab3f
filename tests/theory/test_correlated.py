"""Tests of the correlated-failure theory against the Monte Carlo and the independent-failure forms."""

from __future__ import annotations

import numpy as np
import pytest

from spare_lib.stacking.domains import domain_aware_layout
from spare_lib.stacking.layout import consecutive_layout, layout_from_offsets, ruler_layout
from spare_lib.stacking.wipeout import failures_to_wipeout
from spare_lib.theory.correlated import (
    layout_domain_comparison,
    mu_correlated,
    mu_q_table,
    overhead_correlated,
    r_star_correlated,
    survival_correlated,
)
from spare_lib.theory.finite import mu_finite


@pytest.mark.parametrize(("N", "r", "layout"), [(200, 6, "ruler"), (200, 5, "consecutive"),
                                                (600, 8, "ruler")])
def test_q_zero_reduces_to_finite_mu(N: int, r: int, layout: str) -> None:
    assert mu_correlated(N, r, 8, 0.0, layout) == mu_finite(N, r, layout)
    # the transfer-matrix survival itself is consistent with the finite-N μ at q = 0
    s = survival_correlated(N, r, 8, 0.0, layout)
    assert (N + 1) / N * s.sum() == pytest.approx(mu_finite(N, r, layout), rel=0.008)


def test_domain_size_one_is_independent_failures() -> None:
    assert mu_correlated(200, 6, 1, 0.3, "ruler") == pytest.approx(mu_finite(200, 6), rel=0.008)


@pytest.mark.parametrize(("N", "r", "D", "q", "layout", "tol"), [
    (200, 6, 8, 0.1, "ruler", 0.035),
    (200, 6, 8, 0.3, "ruler", 0.035),
    (200, 6, 8, 0.2, "domain-aware", 0.03),
    (200, 6, 8, 0.2, "consecutive", 0.02),
    (150, 4, 6, 0.15, "consecutive", 0.03),  # D does not divide N
    (120, 4, 5, 0.5, "domain-aware", 0.04),
])
def test_approximation_close_to_monte_carlo(N: int, r: int, D: int, q: float, layout: str,
                                            tol: float) -> None:
    lay = {"ruler": ruler_layout, "consecutive": consecutive_layout}.get(layout)
    lay = lay(N, r) if lay else domain_aware_layout(N, r, D)
    mc = failures_to_wipeout(lay, 20_000, seed=7, domain_size=D, domain_prob=q).mean()
    assert mu_correlated(N, r, D, q, lay) == pytest.approx(mc, rel=tol)


def test_survival_is_a_survival_function() -> None:
    s = survival_correlated(200, 6, 8, 0.2, "domain-aware")
    assert s[0] == 1.0 and np.all(np.diff(s) <= 0) and s[-1] < 1e-10 and s.size == 201


def test_acceptance_domain_aware_beats_ruler_at_n600() -> None:
    """N = 600, r = 8, D = 10: +35 % or more at q = 0.2, within 1 % at q = 0 (Monte Carlo)."""
    ruler, aware = ruler_layout(600, 8), domain_aware_layout(600, 8, 10)

    def mu(lay, q, seed):  # noqa: ANN001, ANN202
        return failures_to_wipeout(lay, 20_000, seed=seed, domain_size=10, domain_prob=q).mean()

    assert mu(aware, 0.2, 1) >= 1.35 * mu(ruler, 0.2, 2)
    assert mu(aware, 0.0, 3) == pytest.approx(mu(ruler, 0.0, 4), rel=0.01)
    assert mu_correlated(600, 8, 10, 0.2, "domain-aware") >= 1.35 * mu_correlated(600, 8, 10, 0.2)


def test_mu_q_table_columns_and_errors() -> None:
    tab = mu_q_table(configs=((100, 4, 5),), qs=(0.0, 0.2), n_trials=4000)
    assert list(tab.columns) == ["N", "r", "D", "q", "layout", "mc_mean", "mc_se", "approx",
                                 "rel_error"]
    assert len(tab) == 6
    assert np.all(np.abs(tab["rel_error"]) < 0.06)


def test_layout_domain_comparison_small() -> None:
    df = layout_domain_comparison(configs=((60, 4, 5),), qs=(0.0, 0.3), n_trials=2000,
                                  s_bar_trials=20)
    assert set(df["layout"]) == {"ruler", "consecutive", "domain-aware", "random"}
    assert df["s_bar"].between(1.0, 4.0).all()
    ref = df[(df.layout == "ruler") & (df.q == 0.3)]["mu_q"].iloc[0]
    aware = df[(df.layout == "domain-aware") & (df.q == 0.3)]["mu_q"].iloc[0]
    assert aware > ref


def test_r_star_correlated_small() -> None:
    res = r_star_correlated(120, 5, 0.3, "domain-aware", r_values=(2, 3, 4, 5), n_trials=1000)
    assert res.r_star in (2, 3, 4, 5) and res.r_star_independent in (2, 3, 4, 5)
    assert list(res.table.columns) == ["r", "mu_q", "mu_0", "s_bar_q", "s_bar_0", "J_q", "J_0"]
    assert (res.table["mu_q"] < res.table["mu_0"]).all()


def test_overhead_correlated_reduces_to_eq5() -> None:
    from spare_lib.theory.finite import overhead_mean

    assert overhead_correlated(600, 10, 0.0, 256.3) == pytest.approx(overhead_mean(600, 8, mu=256.3))
    assert overhead_correlated(600, 10, 0.5, 100.0) >= overhead_correlated(600, 10, 0.0, 100.0)


def test_errors_are_explicit() -> None:
    with pytest.raises(ValueError, match="layout must be one of"):
        mu_correlated(200, 6, 8, 0.1, "zigzag")
    with pytest.raises(ValueError, match="domain_prob"):
        mu_correlated(200, 6, 8, 1.1)
    with pytest.raises(ValueError, match="domain_size"):
        mu_correlated(200, 6, 0, 0.1)
    with pytest.raises(ValueError, match="Monte Carlo"):
        mu_correlated(200, 3, 2, 0.1, layout_from_offsets(200, [0, 50, 120]))
