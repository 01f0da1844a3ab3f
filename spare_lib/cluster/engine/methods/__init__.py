"""The recovery methods of the event core, each a set of small numba hooks, and their registry.

The core (:mod:`spare_lib.cluster.engine.core`) runs the same loop for every method: attempts, the
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
(stacks per group of a committed step, for S̄) and ``weight(n_alive, N, state)`` (share of
the global batch a commit processes). For the sampled barrier's core: ``sampled`` (called once
when the run uses it) and ``retry_plan`` (a retry's patch in sparse form: k0 units for every live group but a
few; without it the core asks ``work`` of every group).

Adding a method: write its module with these hooks and a ``make_state``, give it one
:class:`~spare_lib.registry.methods.MethodSpec` in :data:`spare_lib.registry.methods.METHODS`
(what it is and reads), bind it below (:data:`BINDINGS`: hook code, state builder, jitter of its
unit of work), and add one branch per hook it overrides in :mod:`.dispatch`. The loop is not
touched, and nothing outside the registry and this binding tests a method's name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from spare_lib.cluster.engine.methods._common import (
    COMMIT_FIXED,
    COMMIT_MASKED,
    DEPTH,
    RETRY,
    WIPEOUT,
    make_state,
)
from spare_lib.cluster.engine.methods.dispatch import DROP, REBALANCE, REP, SPARE, SPARE_MB
from spare_lib.cluster.engine.methods.elastic import make_drop_state, make_rebalance_state
from spare_lib.cluster.engine.methods.replication import make_rep_state
from spare_lib.cluster.engine.methods.spare import make_spare_state
from spare_lib.cluster.engine.methods.spare_mb import make_spare_mb_state
from spare_lib.registry.methods import METHODS, MethodSpec


def _spare(N: int, r: int, config: Any, stacks: np.ndarray | None, exact_patch: bool,
           rep_placement: str) -> tuple:
    return make_spare_state(np.array(stacks, dtype=np.int64, order="C"), exact_patch)


def _rep(N: int, r: int, config: Any, stacks: np.ndarray | None, exact_patch: bool,
         rep_placement: str) -> tuple:
    # 'paper': one draw for the r shards (SPEC §5); every other jitter model: r units of 64 s
    return make_rep_state(N, r, rep_placement, units=config.jitter_model != "paper")


def quorum(N: int, min_live: float) -> int:
    """Fewest live groups elastic-drop trains with: ⌈min_live·N⌉ (fewer restarts the job)."""
    return int(math.ceil(round(min_live * N, 9)))


def _drop(N: int, r: int, config: Any, stacks: np.ndarray | None, exact_patch: bool,
          rep_placement: str) -> tuple:
    return make_drop_state(N, quorum(N, config.min_live))


def _rebalance(N: int, r: int, config: Any, stacks: np.ndarray | None, exact_patch: bool,
               rep_placement: str) -> tuple:
    return make_rebalance_state(N, config.microbatches)


def _spare_b(N: int, r: int, config: Any, stacks: np.ndarray | None, exact_patch: bool,
             rep_placement: str) -> tuple:
    # b = 1 is SPARe itself (RECTLR's whole stacks, phase 0): its own state and hooks
    if config.microbatches == 1:
        return _spare(N, r, config, stacks, exact_patch, rep_placement)
    return make_spare_mb_state(stacks, config.microbatches)


def _spare_b_drop(N: int, r: int, config: Any, stacks: np.ndarray | None, exact_patch: bool,
                  rep_placement: str) -> tuple:
    return make_spare_mb_state(stacks, config.microbatches, drop=True,
                               quorum=quorum(N, config.min_live))


def _spare_b_code(config: Any) -> int:
    return SPARE if config.microbatches == 1 else SPARE_MB


def _shard_sigma(config: Any) -> float:
    return config.jitter_sigma


def _microbatch_sigma(config: Any) -> float:
    # jitter is drawn per unit of work; elastic-rebalance's units are 1/b of a shard, so their
    # relative spread is σ·√b: the sum of b units then has a shard's spread σ (the split of the
    # work into micro-batches does not by itself make the slowest group faster). With
    # jitter_model='step' the one factor of a group's attempt has the spread σ of a shard.
    if config.jitter_model == "step":
        return config.jitter_sigma
    return config.jitter_sigma * math.sqrt(config.microbatches)


@dataclass(frozen=True)
class Binding:
    """How the engine runs one registered method.

    Attributes
    ----------
    code : int
        Branch of :mod:`.dispatch`.
    state : callable
        ``state(N, r, config, stacks, exact_patch, rep_placement)`` -> the method's state tuple
        (``stacks``: SPARe's base stacks for layout methods, else None).
    unit_sigma : callable
        ``unit_sigma(config)`` -> the relative jitter of one unit of its work.
    code_for : callable or None
        ``code_for(config)`` -> the branch when it depends on the run's knobs (SPARe-b: b = 1
        runs SPARe's hooks); None: always ``code``.
    """

    code: int
    state: Callable[..., tuple]
    unit_sigma: Callable[[Any], float] = _shard_sigma
    code_for: Callable[[Any], int] | None = None

    def code_of(self, config: Any) -> int:
        """The branch of :mod:`.dispatch` a run with ``config`` takes."""
        return self.code if self.code_for is None else self.code_for(config)

    def sampled_ok(self, config: Any) -> bool:
        """Whether the sampled barrier can run it: every branch but SPARe-b's, whose groups
        compute different loads in a first attempt."""
        return self.code_of(config) != SPARE_MB


#: Method name -> its binding to the engine (exactly the names of the registry).
BINDINGS: dict[str, Binding] = {
    "spare": Binding(SPARE, _spare),
    "rep": Binding(REP, _rep),
    "ckpt": Binding(REP, _rep),
    "spare+repair": Binding(SPARE, _spare),
    "elastic-drop": Binding(DROP, _drop),
    "elastic-rebalance": Binding(REBALANCE, _rebalance, _microbatch_sigma),
    "spare-b": Binding(SPARE_MB, _spare_b, _microbatch_sigma, _spare_b_code),
    "spare-b+repair": Binding(SPARE_MB, _spare_b, _microbatch_sigma, _spare_b_code),
    "spare-b+drop": Binding(SPARE_MB, _spare_b_drop, _microbatch_sigma),
}
if set(BINDINGS) != set(METHODS):  # pragma: no cover - a registry edit without its binding
    raise RuntimeError(f"engine bindings {sorted(BINDINGS)} differ from the method registry "
                       f"{sorted(METHODS)}")

#: Method name -> hook code of :mod:`.dispatch` (SPARe-b's at b ≥ 2; :meth:`Binding.code_of`).
METHOD_CODES: dict[str, int] = {name: b.code for name, b in BINDINGS.items()}


def first_attempt_work(method: str, N: int, r: int, config: Any,
                       stacks: np.ndarray | None = None) -> tuple[int, float, float]:
    """What one live group computes in a failure-free step, as the engine runs it: ``(units,
    unit_s, unit_sigma)``, ``units`` units of ``unit_s`` seconds, each with relative jitter
    ``unit_sigma`` (with ``jitter_model='step'``: one factor of that spread for all of them).

    Read from the method's own ``work`` hook and state (S = 1 before any failure), so the
    barrier formula of :mod:`spare_lib.theory.barrier` is compared with what the core draws.
    """
    from spare_lib.cluster.engine.methods import dispatch

    bind = BINDINGS[method]
    if stacks is None and METHODS[method].layout:
        from spare_lib.stacking.layout import make_layout

        stacks = make_layout(N, r, "ruler").stacks
    ms = bind.state(N, r, config, stacks, False, "consecutive")
    k, unit_s = dispatch.work(bind.code_of(config), False, ms[2][0], ms[6][DEPTH], ms[7][0],
                              config.compute_per_stack_s)
    return int(k), float(unit_s), float(bind.unit_sigma(config))

__all__ = ["BINDINGS", "COMMIT_FIXED", "COMMIT_MASKED", "DEPTH", "METHODS", "METHOD_CODES",
           "first_attempt_work", "quorum",
           "RETRY", "WIPEOUT", "Binding", "MethodSpec", "make_drop_state", "make_rebalance_state",
           "make_rep_state", "make_spare_state", "make_state"]
