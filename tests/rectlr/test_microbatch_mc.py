"""Monte Carlo of L*(k) (issue 25): invariants of ``rectlr.microbatch_mc``."""

from __future__ import annotations

import numpy as np

from spare_lib.rectlr.microbatch_mc import chain_reach_table, makespan_mc
from spare_lib.stacking import consecutive_layout, ruler_layout
from spare_lib.theory.montecarlo import overhead_mc


def test_common_random_numbers_and_bounds() -> None:
    lay = ruler_layout(120, 4)
    runs = {b: makespan_mc(lay, b, 300, seed=5) for b in (1, 4, 16)}
    for b, mc in runs.items():
        assert np.array_equal(mc.K, runs[1].K)  # the wipe-out does not depend on b
        assert np.all(mc.sum_l >= mc.sum_g) and np.all(mc.sum_l <= b * runs[1].sum_l)
        assert np.all((mc.first_gt >= 0) == (mc.n_gt > 0))
        assert mc.s_bar_b >= mc.g_bar_b
    again = makespan_mc(lay, 4, 300, seed=5)
    assert np.array_equal(again.sum_l, runs[4].sum_l)


def test_b1_matches_the_s_star_monte_carlo() -> None:
    """b = 1 is S*: same mean over cycles as theory.montecarlo.overhead_mc (independent
    streams; tolerance 4 combined standard errors)."""
    lay = consecutive_layout(150, 3)
    a = makespan_mc(lay, 1, 3000, seed=1)
    b = overhead_mc(lay, 3000, seed=2)
    assert abs(a.s_bar_b - b.s_bar) < 4 * np.hypot(a.s_bar_b_se, b.s_bar_se)


def test_chain_reach_table_columns() -> None:
    df = chain_reach_table([("consecutive", consecutive_layout(80, 3))], [4], n_trials=200, seed=0)
    assert {"k_p1", "k_p10", "k_p50", "median_first_gt", "frac_states_gt"} <= set(df.columns)
    assert 0 < df.frac_states_gt.iloc[0] <= 1
