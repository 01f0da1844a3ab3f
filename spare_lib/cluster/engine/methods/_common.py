"""What every method hook shares: the resolve codes, the method state, the jitter draw.

A method's state is one tuple of arrays, :data:`MethodState`, built in Python by the method's
``make_state`` and handed unchanged to every hook, so the event core never needs to know what
a method keeps:

``(stacks, base_stacks, group_i, group_f, set_i, set_i0, ints, floats, ws, mb)``

* ``stacks``, ``base_stacks``: int64 (N, r), the current and base stack of every group
  (SPARe; other methods keep (N, 1) placeholders);
* ``group_i`` int64 (N,), ``group_f`` float64 (N,): one int and one float per group (SPARe's
  patch counts, Rep's replica-set ids, ...);
* ``set_i``, ``set_i0`` int64 (n,): a current and an initial count per set (Rep's live members
  per replica set and the set sizes);
* ``ints`` int64 (16,), ``floats`` float64 (8,): scalars. ``ints[DEPTH]`` is the stack depth S
  every method reports (1 for methods without stacking);
* ``ws``: SPARe's incremental RECTLR workspace (:func:`spare_lib.rectlr.kernels_inc.rectlr_inc_workspace`;
  tiny placeholders for the other methods, so every method has one state type and the core
  compiles once);
* ``mb``: SPARe-b's micro-batch workspaces (:mod:`.spare_mb`: the step's flow, the retry's
  flow, the micro-batches each survivor has done in the step, a zero (N, r) and an all-live
  mask; tiny placeholders of the same types for the other methods).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Outcomes of ``resolve`` after an attempt in which failures were noticed.
COMMIT_FIXED = 0  # committed as is (SPARe: RECTLR phase 0)
RETRY = 1  # reconfigured; the same step is retried (SPARe: reorder + patch compute)
WIPEOUT = 2  # cannot continue: global restart and rollback
COMMIT_MASKED = 3  # committed after dropping the failed groups (Rep: every set kept a member)

#: Slots of ``ints``.
DEPTH = 0  # S: stacks (or units) each live group computes per attempt
EXACT_PATCH = 1  # SPARe: exact patch compute on retries
LOST = 2  # elastic-rebalance: units of the failed groups lost in this step
FETCH = 3  # elastic-rebalance: the assignment changed, the next attempt fetches data
MICRO = 4  # elastic-rebalance: micro-batches per shard (b)
QUORUM = 5  # elastic-drop: fewest live groups it trains with (ceil(min_live·N); 0: none);
#            SPARe-b+drop: fewest covered shard types it trains with
DROP = 6  # SPARe-b: a wipe-out drops the uncovered types (1) or restarts (0)
MB_RETRY = 7  # SPARe-b: the current attempt is a retry (its patch is the retry flow's)
COVERED = 8  # SPARe-b: shard types with a live holder (N unless types are dropped)
#: Slots of ``floats``.
COMPUTE_MULT = 0  # Rep: r stacks computed as one draw of r·64 s; rebalance: 1/b


def make_state(stacks: np.ndarray, group_i: np.ndarray, set_i0: np.ndarray,
               ints: dict[int, int] | None = None, floats: dict[int, float] | None = None,
               group_f: np.ndarray | None = None, ws: tuple | None = None,
               mb: tuple | None = None) -> tuple:
    """Assemble a :data:`MethodState` (copies the base stacks and set sizes)."""
    N = stacks.shape[0]
    iv = np.zeros(16, dtype=np.int64)
    iv[DEPTH] = 1
    for k, v in (ints or {}).items():
        iv[k] = v
    fv = np.zeros(8, dtype=np.float64)
    for k, v in (floats or {}).items():
        fv[k] = v
    base = np.ascontiguousarray(stacks, dtype=np.int64)
    gf = np.zeros(N, dtype=np.float64) if group_f is None else np.asarray(group_f, np.float64)
    if ws is None:  # placeholders of the same types as rectlr_inc_workspace's
        z2, z1 = np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64)
        ws = (z2, z2.copy(), z1, z1.copy(), z1.copy(), np.zeros(1, dtype=np.bool_),
              np.zeros(16, np.int64), z2.copy(), z2.copy())
    if mb is None:  # placeholders of the same types as spare_mb.make_mb_workspace's
        mb = (_mb_placeholder(), _mb_placeholder(), np.zeros((1, 1), np.int64),
              np.zeros((1, 1), np.int64), np.ones(1, np.bool_))
    return (base.copy(), base, np.ascontiguousarray(group_i, dtype=np.int64), gf,
            np.array(set_i0, dtype=np.int64), np.array(set_i0, dtype=np.int64), iv, fv, ws, mb)


def _mb_placeholder() -> tuple:
    """Arrays of the types of :func:`spare_lib.rectlr.microbatch.microbatch_workspace`'s."""
    z2, z1 = np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64)
    return (z2, z2.copy(), z1, z2.copy(), z2.copy(), np.zeros(1, dtype=np.bool_),
            np.zeros(16, np.int64), z2.copy(), z2.copy())


@njit(cache=True)
def jitter(rng, sigma, lo):  # pragma: no cover - compiled
    """One compute-time factor N(1, σ²) clipped at ``lo`` (SPEC §6); 1 when σ = 0."""
    if sigma == 0.0:
        return 1.0
    j = 1.0 + sigma * rng.standard_normal()
    return j if j > lo else lo
