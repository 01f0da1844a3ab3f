"""Input validation helpers shared by the public entry points.

Every public function of spare_lib validates its inputs and raises ``ValueError`` naming the
parameter, the value received and the allowed range (see CONVENTIONS.md, "Errors").
"""

from __future__ import annotations

import numbers

import numpy as np


def check_int(name: str, value: object, lo: int | None = None, hi: int | None = None) -> int:
    """Return ``value`` as ``int`` if it is an integer in ``[lo, hi]``, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        lo_s = "-inf" if lo is None else str(lo)
        hi_s = "inf" if hi is None else str(hi)
        raise ValueError(f"{name} must be in [{lo_s}, {hi_s}], got {v}")
    return v


def check_positive(name: str, value: object, allow_zero: bool = False) -> float:
    """Return ``value`` as ``float`` if it is finite and > 0 (or >= 0), else raise ``ValueError``."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        rng = "[0, inf)" if allow_zero else "(0, inf)"
        raise ValueError(f"{name} must be finite and in {rng}, got {value!r}")
    return v


def check_probability(name: str, value: object) -> float:
    """Return ``value`` as ``float`` if it lies in [0, 1], else raise ``ValueError``."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}") from None
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return v
