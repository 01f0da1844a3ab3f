"""The one list of recovery methods: what each is, what it reads, what supports it.

Every part of the project that needs to know about methods reads :data:`METHODS`: the simulator
binds each name to its numba hooks and state builder (:mod:`spare_lib.cluster.engine.methods`,
which checks that it binds exactly these names), the planner takes its candidates, labels and
default r search from here, the predictive model says through :attr:`MethodSpec.predict` which
methods it covers, and figures take labels and families. Nothing else lists methods or tests a
method's name: behaviour that differs between methods is a field of :class:`MethodSpec` (or a
hook of the engine).

Adding a method: one module of hooks in :mod:`spare_lib.cluster.engine.methods`, one entry
here, one binding there.

Example
-------
>>> method("spare").label, method("elastic-drop").family, PAPER_METHODS
('SPARe+CKPT', 'elastic', ('spare', 'rep', 'ckpt'))
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: Families, for plots (one colour per family) and for the verdict's "best SPARe variant against
#: the best other" comparisons.
FAMILIES = ("spare", "replication", "checkpoint", "elastic")

#: What ends a training epoch (a global restart from the last checkpoint), per method.
RESTART_RULES = {
    "wipeout": "all r holders of some shard type are dead (a wipe-out)",
    "replica-set": "every member of some replica set is dead",
    "any": "any group fails",
    "all-dead": "every group is dead",
    "covered-quorum": "fewer shard types have a live holder than the quorum (0: no group is "
                      "live)",
}


@dataclass(frozen=True)
class MethodSpec:
    """One recovery method.

    Attributes
    ----------
    name : str
        The one name (``simulate(name, ...)``, ``--strategies``, JSON, sweeps).
    label, label_no_ckpt : str
        The paper's style of name with and without checkpoints (SPARe+CKPT / SPARe).
    family : str
        One of :data:`FAMILIES`.
    layout : bool
        Holds a stack of r shard types per group (SPARe's stacking layout, SPEC §2).
    redundancy : bool
        Has a redundancy r ≥ 2 to choose; False: r is 1 and not searched.
    rejoins : bool
        Failed groups come back after ``rejoin_s`` (repair, elastic); False: they stay dead
        until the next global restart (the paper's methods).
    exact_batch : bool
        Every commit processes the whole global batch (False: samples of dead groups are
        dropped, so more steps are needed).
    restarts_when : str
        Key of :data:`RESTART_RULES`: what forces a global restart.
    knobs : tuple of str
        Knobs of :data:`spare_lib.registry.knobs.KNOBS` that only this method (or family) reads,
        beyond the ones every method reads.
    predict : bool
        The predictive time-to-train model (:mod:`spare_lib.theory.predict`) covers it.
    paper : bool
        One of the paper's three methods, the planner's default candidates.
    microbatch : bool
        Computes micro-batches of its shards, b = ``microbatches`` per shard (SPARe-b:
        the least makespan of micro-batch RECTLR; elastic-rebalance: even shares).
    default_set : bool
        One of :data:`DEFAULT_STRATEGIES`, the set that "every strategy" means where no list is
        given (notebooks 80 and 85, the tornado, ``world_plan``). The SPARe-b methods of issue 25
        are compared by name (notebook 82, ``--strategies``, ``'all'``), so that adding them
        left those results as they were.
    """

    name: str
    label: str
    label_no_ckpt: str
    family: str
    layout: bool = False
    redundancy: bool = False
    rejoins: bool = False
    exact_batch: bool = True
    restarts_when: str = "any"
    knobs: tuple[str, ...] = ()
    predict: bool = False
    paper: bool = False
    microbatch: bool = False
    default_set: bool = True

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        if self.restarts_when not in RESTART_RULES:
            raise ValueError(f"restarts_when must be one of {tuple(RESTART_RULES)}, got "
                             f"{self.restarts_when!r}")

    def label_for(self, checkpoints: bool = True) -> str:
        """The label with (default) or without checkpoints."""
        return self.label if checkpoints else self.label_no_ckpt

    def r_range(self, N: int) -> tuple[int, int]:
        """Smallest and largest r the method takes at N groups (r = 1 without redundancy)."""
        return (2, N) if self.redundancy else (1, 1)


_REJOIN = ("rejoin_s", "rejoin_clock", "rejoin_stall_s")

METHODS: dict[str, MethodSpec] = {m.name: m for m in (
    MethodSpec("spare", "SPARe+CKPT", "SPARe", "spare", layout=True, redundancy=True,
               restarts_when="wipeout", knobs=("layout", "exact_patch"), predict=True,
               paper=True),
    MethodSpec("rep", "Rep+CKPT", "Rep", "replication", redundancy=True,
               restarts_when="replica-set", knobs=("rep_placement",), predict=True, paper=True),
    MethodSpec("ckpt", "CKPT-only", "no protection", "checkpoint", restarts_when="any",
               predict=True, paper=True),
    MethodSpec("spare+repair", "SPARe+repair+CKPT", "SPARe+repair", "spare", layout=True,
               redundancy=True, rejoins=True, restarts_when="wipeout",
               knobs=("layout", "exact_patch", *_REJOIN), predict=True),
    MethodSpec("elastic-drop", "Elastic-drop+CKPT", "Elastic-drop", "elastic", rejoins=True,
               exact_batch=False, restarts_when="all-dead", knobs=(*_REJOIN, "min_live"),
               predict=True),
    MethodSpec("elastic-rebalance", "Elastic-rebalance+CKPT", "Elastic-rebalance", "elastic",
               rejoins=True, restarts_when="all-dead",
               knobs=(*_REJOIN, "microbatches", "fetch_s"), predict=True, microbatch=True),
    MethodSpec("spare-b", "SPARe-b+CKPT", "SPARe-b", "spare", layout=True, redundancy=True,
               restarts_when="wipeout", knobs=("layout", "microbatches"), microbatch=True,
               default_set=False),
    MethodSpec("spare-b+repair", "SPARe-b+repair+CKPT", "SPARe-b+repair", "spare", layout=True,
               redundancy=True, rejoins=True, restarts_when="wipeout",
               knobs=("layout", "microbatches", *_REJOIN), microbatch=True, default_set=False),
    MethodSpec("spare-b+drop", "SPARe-b+drop+CKPT", "SPARe-b+drop", "spare", layout=True,
               redundancy=True, rejoins=True, exact_batch=False, restarts_when="covered-quorum",
               knobs=("layout", "microbatches", *_REJOIN, "min_live"), microbatch=True,
               default_set=False),
)}

#: The paper's three methods, in the paper's order: the planner's default candidates.
PAPER_METHODS: tuple[str, ...] = tuple(n for n, m in METHODS.items() if m.paper)
#: The strategies "every strategy" means where no list is given (:attr:`MethodSpec.default_set`).
DEFAULT_STRATEGIES: tuple[str, ...] = tuple(n for n, m in METHODS.items() if m.default_set)


def method(name: str) -> MethodSpec:
    """The :class:`MethodSpec` of ``name``, or ValueError naming the registered methods."""
    if name not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {name!r}")
    return METHODS[name]


check_method = method


def check_methods(names: str | Iterable[str]) -> tuple[str, ...]:
    """Method names from a list or a comma string; 'all' (alone) is every method; no repeats.

    Examples
    --------
    >>> check_methods("spare,elastic-drop"), len(check_methods("all"))
    (('spare', 'elastic-drop'), 9)
    """
    items = [s.strip() for s in names.split(",")] if isinstance(names, str) else list(names)
    if items == ["all"]:
        return tuple(METHODS)
    if not items or any(not s for s in items):
        raise ValueError(f"methods must be 'all' or a comma list of {', '.join(METHODS)}, got "
                         f"{names!r}")
    for s in items:
        method(s)
    if len(set(items)) != len(items):
        raise ValueError(f"methods must not repeat a method, got {names!r}")
    return tuple(items)


__all__ = ["DEFAULT_STRATEGIES", "FAMILIES", "METHODS", "PAPER_METHODS", "RESTART_RULES",
           "MethodSpec", "check_method", "check_methods", "method"]
