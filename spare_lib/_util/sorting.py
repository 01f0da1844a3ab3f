"""Small numba sorting helpers shared by the barrier sampler and RECTLR's kernels."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def sort_prefix(a, n):  # pragma: no cover - compiled
    """Sort ``a[:n]`` ascending in place (insertion sort for short prefixes)."""
    if n > 32:
        a[:n] = np.sort(a[:n])
        return
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x
