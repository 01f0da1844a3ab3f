"""The recovery methods of the event core, each a set of small numba hooks, and their registry.

The core (:mod:`spare_lib.cluster.core`) runs the same loop for every method: attempts, the
barrier, the all-reduce, checkpoints and global restarts. What differs is asked of the method
through four hooks, each an ``@njit`` function of the method's module:

``work(retry, g_int, depth, mult, compute_s)``
    how much live group w computes this attempt: ``(n_units, unit_s)``, n units of ``unit_s``
    seconds each, every unit with its own jitter and a poll at its start (the core draws them,
    exactly, with the sum-then-bridge sampler); ``g_int`` is the method's int of group w,
    ``depth`` the state's S, ``mult`` its ``floats[COMPUTE_MULT]``.
``notice(w, state)``
    bookkeeping when a failure of group w is noticed.
``resolve(alive, state)``
    after an attempt with noticed failures: ``COMMIT_FIXED``, ``COMMIT_MASKED``, ``RETRY`` or
    ``WIPEOUT`` (:mod:`._common`).
``reset(state)``
    a global restart revives every group.

Adding a method: write its module with these hooks and a ``make_state``, give it a code in
:data:`METHOD_CODES`, and add one branch per hook in :mod:`.dispatch`. The loop is not touched.
"""

from __future__ import annotations

from spare_lib.cluster.methods._common import (
    COMMIT_FIXED,
    COMMIT_MASKED,
    DEPTH,
    RETRY,
    WIPEOUT,
    make_state,
)
from spare_lib.cluster.methods.dispatch import REP, SPARE
from spare_lib.cluster.methods.replication import make_rep_state
from spare_lib.cluster.methods.spare import make_spare_state

#: Method name -> hook code of :mod:`.dispatch` ('ckpt' is Rep with r = 1).
METHOD_CODES: dict[str, int] = {"spare": SPARE, "rep": REP, "ckpt": REP}

__all__ = ["COMMIT_FIXED", "COMMIT_MASKED", "DEPTH", "RETRY", "WIPEOUT", "METHOD_CODES",
           "make_state", "make_rep_state", "make_spare_state"]
