"""Validation of the (stacks, alive, depth) inputs shared by the RECTLR entry points.
"""

from __future__ import annotations

import numpy as np

from spare_lib._util.validate import check_int


def _validate_inputs(stacks: object, alive: object, depth: object
                     ) -> tuple[np.ndarray, np.ndarray, int]:
    st = np.asarray(stacks)
    if st.ndim != 2 or st.shape[0] < 1 or st.shape[1] < 1:
        raise ValueError(f"stacks must be a 2-D (N, r) array with N, r >= 1, got shape {st.shape}")
    if not np.issubdtype(st.dtype, np.integer):
        raise ValueError(f"stacks must hold integers, got dtype {st.dtype}")
    N, r = st.shape
    if r > N:
        raise ValueError(f"stacks must have r <= N, got shape {st.shape}")
    if st.min() < 0 or st.max() >= N:
        raise ValueError(f"stacks entries must be shard types in [0, {N - 1}], "
                         f"got range [{st.min()}, {st.max()}]")
    srt = np.sort(st, axis=1)
    if r > 1 and np.any(srt[:, 1:] == srt[:, :-1]):
        raise ValueError("stacks rows must not repeat a type (a stack is a permutation)")
    counts = np.bincount(st.ravel(), minlength=N)
    if np.any(counts != r):
        t = int(np.flatnonzero(counts != r)[0])
        raise ValueError(f"every type must be held by exactly r = {r} groups, type {t} is held "
                         f"by {counts[t]}")
    al = np.asarray(alive)
    if al.shape != (N,):
        raise ValueError(f"alive must have shape ({N},), got {al.shape}")
    if al.dtype != np.bool_:
        raise ValueError(f"alive must be a boolean mask, got dtype {al.dtype}")
    if not al.any():
        raise ValueError("alive must contain at least one survivor, got all False")
    S = check_int("depth", depth, lo=1, hi=r)
    return np.ascontiguousarray(st, dtype=np.int64), np.ascontiguousarray(al), S
