"""A real SPARe runtime: N worker processes, injected failures, exact gradients (issue 5).

The coordinator (:mod:`.coordinator`) trains a small numpy MLP (:mod:`.model`) data-parallel on
N spawned worker processes (:mod:`.worker`), each hosting its stack of r shard types, while an
injector (:mod:`.injector`) SIGKILLs (or SIGSTOPs) workers mid-step. In mode ``"spare"`` the
RECTLR controller masks every failure it can and the committed gradients equal the failure-free
ones bit for bit; a wipe-out restarts all workers from the checkpoint on disk. Mode ``"drop"``
skips the failed groups' shards, as per-step fault-tolerant DDP does.
With ``microbatches=b > 1`` (:mod:`.microbatch`, issue 25) each shard is split into b
micro-batches assigned by micro-batch RECTLR, a killed worker's micro-batches are redistributed
by the library's retry patch, and the run is bit-identical to the failure-free run with the same
b; ``on_wipeout="drop"`` (SPARe+drop) commits a wipe-out step without the uncovered types.

Its figures are in :mod:`spare_lib.figures.runtime`. Names are imported lazily, so a worker
process importing :mod:`.worker` pays only for numpy.

Example
-------
>>> from spare_lib.runtime import run_training                      # doctest: +SKIP
>>> ff = run_training("failure_free", N=6, r=3, n_steps=5)           # doctest: +SKIP
>>> sp = run_training("spare", N=6, r=3, n_steps=5, kills=[(2, "compute", 1)])  # doctest: +SKIP
>>> bool((sp.grads == ff.grads).all())                              # doctest: +SKIP
True
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "MLPTask": "model", "aggregate": "model", "serial_training": "model",
    "shard_from_microbatches": "model", "MicrobatchEngine": "microbatch", "reference_run": "reference",
    "KillEvent": "injector", "ScheduleInjector": "injector", "WeibullInjector": "injector",
    "Injector": "injector", "PHASES": "injector",
    "run_training": "coordinator",
    "TrainingRun": "coordinator", "MODES": "coordinator", "WorkerProtocolError": "pool",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        from importlib import import_module
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
