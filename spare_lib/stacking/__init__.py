"""Stacking (SPEC §2) and wipe-out sampling: which shard types each group holds, and how many
failures a layout survives.

Modules: :mod:`~spare_lib.stacking.layout` (Golomb-ruler, consecutive, random-offset layouts)
and :mod:`~spare_lib.stacking.wipeout` (failures to wipe-out, exact Monte Carlo of μ(N, r)).
"""

from spare_lib.stacking.layout import (
    GOLOMB_RULERS,
    MAX_RULER_R,
    Layout,
    consecutive_layout,
    is_golomb_ruler,
    layout_from_offsets,
    make_layout,
    max_ruler_r,
    random_offsets_layout,
    ruler_layout,
)
from spare_lib.stacking.wipeout import (
    failure_sequence,
    failures_to_wipeout,
    failures_to_wipeout_numpy,
    is_wiped_out,
    live_holders_along,
    mu_monte_carlo,
    wipeout_index,
)

__all__ = [
    "GOLOMB_RULERS", "MAX_RULER_R", "Layout", "consecutive_layout", "is_golomb_ruler",
    "layout_from_offsets", "make_layout", "max_ruler_r", "random_offsets_layout", "ruler_layout",
    "failure_sequence", "failures_to_wipeout", "failures_to_wipeout_numpy", "is_wiped_out",
    "live_holders_along", "mu_monte_carlo", "wipeout_index",
]
