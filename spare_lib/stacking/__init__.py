"""Stacking (SPEC §2) and wipe-out sampling: which shard types each group holds, and how many
failures a layout survives.

Modules: :mod:`~spare_lib.stacking.layout` (Golomb-ruler, consecutive, random-offset layouts),
:mod:`~spare_lib.stacking.wipeout` (failures to wipe-out, exact Monte Carlo of μ(N, r)) and
:mod:`~spare_lib.stacking.domains` (failure domains: domain-aware layouts, modular Sidon sets,
the event-indexed wipe-out sampler with domain events, μ_q).
"""

from spare_lib.stacking.domains import (
    check_domain_args,
    domain_aware_layout,
    domain_failures_to_wipeout,
    is_domain_aware,
    is_sidon_mod,
    modular_sidon_offsets,
)
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
    "check_domain_args", "domain_aware_layout", "domain_failures_to_wipeout", "is_domain_aware",
    "is_sidon_mod", "modular_sidon_offsets",
    "GOLOMB_RULERS", "MAX_RULER_R", "Layout", "consecutive_layout", "is_golomb_ruler",
    "layout_from_offsets", "make_layout", "max_ruler_r", "random_offsets_layout", "ruler_layout",
    "failure_sequence", "failures_to_wipeout", "failures_to_wipeout_numpy", "is_wiped_out",
    "live_holders_along", "mu_monte_carlo", "wipeout_index",
]
