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

and, with defaults in :mod:`.dispatch` for methods that do not need them: ``delay`` (time
before a group's compute, e.g. a data fetch), ``rejoin`` (repaired groups are back), ``depth``
(stacks per group of a committed step, for S̄) and ``weight`` (share of the global batch a
commit processes). For the sampled barrier's core: ``sampled`` (called once when the run uses
it) and ``retry_plan`` (a retry's patch in sparse form: k0 units for every live group but a
few; without it the core asks ``work`` of every group).

Adding a method: write its module with these hooks and a ``make_state``, register it in
:data:`METHODS` below, and add one branch per hook it overrides in :mod:`.dispatch`. The loop
is not touched.

Registered: ``spare`` (SPARe, SPEC §4), ``spare+repair`` (SPARe whose failed groups rejoin after
``rejoin_s``), ``rep`` (replication, SPEC §5), ``ckpt`` (CKPT-only: Rep with r = 1),
``elastic-drop`` and ``elastic-rebalance`` (:mod:`.elastic`).
"""

from __future__ import annotations

from dataclasses import dataclass

from spare_lib.cluster.methods._common import (
    COMMIT_FIXED,
    COMMIT_MASKED,
    DEPTH,
    RETRY,
    WIPEOUT,
    make_state,
)
from spare_lib.cluster.methods.dispatch import DROP, REBALANCE, REP, SPARE
from spare_lib.cluster.methods.elastic import make_drop_state, make_rebalance_state
from spare_lib.cluster.methods.replication import make_rep_state
from spare_lib.cluster.methods.spare import make_spare_state


@dataclass(frozen=True)
class Method:
    """A registered method: its hook code, paper-style label, and what it uses.

    Attributes
    ----------
    code : int
        Branch of :mod:`.dispatch`.
    label : str
        Name with checkpoints (the paper's style: SPARe+CKPT, Rep+CKPT, CKPT-only, ...).
    label_no_ckpt : str
        Name without checkpoints.
    layout : bool
        Uses a stacking layout (r shard types per group).
    rejoins : bool
        Failed groups come back after ``rejoin_s`` (repair, elastic).
    r_is_one : bool
        Has no redundancy parameter (r must be 1).
    exact_batch : bool
        Every commit processes the full global batch (False: elastic-drop).
    """

    code: int
    label: str
    label_no_ckpt: str
    layout: bool = False
    rejoins: bool = False
    r_is_one: bool = False
    exact_batch: bool = True


METHODS: dict[str, Method] = {
    "spare": Method(SPARE, "SPARe+CKPT", "SPARe", layout=True),
    "rep": Method(REP, "Rep+CKPT", "Rep"),
    "ckpt": Method(REP, "CKPT-only", "no protection", r_is_one=True),
    "spare+repair": Method(SPARE, "SPARe+repair+CKPT", "SPARe+repair", layout=True, rejoins=True),
    "elastic-drop": Method(DROP, "Elastic-drop+CKPT", "Elastic-drop", rejoins=True, r_is_one=True,
                           exact_batch=False),
    "elastic-rebalance": Method(REBALANCE, "Elastic-rebalance+CKPT", "Elastic-rebalance",
                                rejoins=True, r_is_one=True),
}

#: Method name -> hook code of :mod:`.dispatch`.
METHOD_CODES: dict[str, int] = {name: m.code for name, m in METHODS.items()}

__all__ = ["COMMIT_FIXED", "COMMIT_MASKED", "DEPTH", "RETRY", "WIPEOUT", "METHODS", "Method",
           "METHOD_CODES", "make_state", "make_rep_state", "make_spare_state", "make_drop_state",
           "make_rebalance_state"]
