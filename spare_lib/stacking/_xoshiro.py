"""xoshiro256** (Blackman and Vigna 2018), the uint64 stream of the wipe-out samplers.

Seeded from each chunk's ``numpy.random.Generator`` (:func:`_xoshiro_state`), so results depend
only on the root seed and the fixed chunking, never on the number of workers.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(inline="always")
def _rotl(x: np.uint64, k: int) -> np.uint64:  # pragma: no cover - compiled
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True, nogil=True)
def _next_u64(state: np.ndarray) -> np.uint64:  # pragma: no cover - compiled
    """One xoshiro256** output; ``state`` (4 uint64) is advanced in place."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    res = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    return res


def _xoshiro_state(rng: np.random.Generator) -> np.ndarray:
    """Seed xoshiro256** from the chunk's Generator (4 uint64 words, never all zero)."""
    state = rng.integers(0, 2**64, size=4, dtype=np.uint64)
    if not state.any():  # pragma: no cover - probability 2^-256
        state[0] = 1
    return state
