"""Seeding: one ``SeedSequence`` per public call, one child per fixed-size chunk of work.

Results never depend on the number of workers because the chunking is fixed by the problem
size, not by the worker count (CONVENTIONS.md, "numba and randomness").
"""

from __future__ import annotations

import numpy as np

SeedLike = int | np.random.SeedSequence | np.random.Generator | None


def as_seed_sequence(seed: SeedLike) -> np.random.SeedSequence:
    """Turn an int, a ``SeedSequence`` or a ``Generator`` into a ``SeedSequence``.

    A ``Generator`` is consumed (one 63-bit draw), so passing the same generator twice gives
    different, but reproducible, streams. ``None`` means fresh OS entropy.
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(int(seed.integers(0, 2**63)))
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, a SeedSequence or a Generator, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def chunk_generators(seed: SeedLike, n_items: int, chunk: int) -> list[tuple[int, int, np.random.Generator]]:
    """Split ``n_items`` into fixed chunks of ``chunk`` and give each its own generator.

    Returns a list of ``(start, stop, generator)``; the split depends only on ``n_items`` and
    ``chunk``, so any assignment of chunks to workers gives the same numbers.
    """
    ss = as_seed_sequence(seed)
    n_chunks = max(1, -(-n_items // chunk))
    children = ss.spawn(n_chunks)
    out = []
    for i, child in enumerate(children):
        start, stop = i * chunk, min(n_items, (i + 1) * chunk)
        if start < stop or n_items == 0:
            out.append((start, stop, np.random.default_rng(child)))
    return out
