"""Traditional replication's hooks (SPEC §5): Rep+CKPT, and CKPT-only as Rep with r = 1.

* state: the N groups form ⌈N/r⌉ replica sets of r consecutive ids (group w is in set w // r;
  the last set may be smaller), or, ``strided``, sets of groups ⌈N/r⌉ apart (w mod ⌈N/r⌉),
  which puts the replicas of a set in distinct failure domains; ``group_i`` holds each group's
  set, ``set_i`` the live members of every set.
* work: a live group computes its set's r shards as one compute of r·64 s with one jitter
  draw, polled at its start (``jitter_model='paper'``, SPEC §5), or, with every other jitter
  model, as r units of 64 s, each its own draw and poll, as SPARe computes its S stacks.
* notice: a noticed failure removes the group from its set.
* resolve: masked (COMMIT_MASKED) while every set keeps a live member, otherwise WIPEOUT.
* reset: every set is full again.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spare_lib.cluster.engine.methods._common import (
    COMMIT_MASKED,
    COMPUTE_MULT,
    DEPTH,
    WIPEOUT,
    make_state,
)

#: Placements of Rep's replica sets: ``consecutive`` (SPEC §5: set w // r) or ``strided``
#: (set w mod ⌈N/r⌉: the members of a set are ⌈N/r⌉ groups apart, hence in distinct failure
#: domains whenever ⌈N/r⌉ ≥ D).
REP_PLACEMENTS = ("consecutive", "strided")


def make_rep_state(N: int, r: int, placement: str = "consecutive", units: bool = False) -> tuple:
    """State of a Rep run (CKPT-only: r = 1): set ids and set sizes; ``units``: its r shards are
    r units of 64 s (S = r, ×1) instead of one of r·64 s (S = 1, ×r)."""
    if placement not in REP_PLACEMENTS:
        raise ValueError(f"rep_placement must be one of {REP_PLACEMENTS}, got {placement!r}")
    n_sets = -(-N // r)
    w = np.arange(N, dtype=np.int64)
    set_of = w // r if placement == "consecutive" else w % n_sets
    sizes = np.bincount(set_of).astype(np.int64)
    return make_state(np.arange(N, dtype=np.int64).reshape(N, 1), set_of, sizes,
                      ints={DEPTH: r if units else 1},
                      floats={COMPUTE_MULT: 1.0 if units else float(r)})


@njit(cache=True, inline="always")
def rep_work(retry, set_w, depth, mult, compute_s):  # pragma: no cover
    """``depth`` units of ``mult``·64 s: one of r·64 s (the paper) or r of 64 s."""
    return depth, mult * compute_s


@njit(cache=True)
def rep_notice(w, retry, ms):  # pragma: no cover
    """A noticed failure removes group w from its replica set."""
    ms[4][ms[2][w]] -= 1


@njit(cache=True)
def rep_resolve(alive, n_alive, ms):  # pragma: no cover
    """Masked while every replica set keeps a live member; otherwise a wipe-out."""
    set_live = ms[4]
    for sid in range(set_live.shape[0]):
        if set_live[sid] == 0:
            return WIPEOUT
    return COMMIT_MASKED


@njit(cache=True)
def rep_reset(ms):  # pragma: no cover
    """Global restart: every replica set is complete again."""
    set_live, set_size = ms[4], ms[5]
    for sid in range(set_live.shape[0]):
        set_live[sid] = set_size[sid]
