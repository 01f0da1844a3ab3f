"""The simulator's engine: the numba event loop and everything it calls.

Modules
-------
core
    The event loop (SPEC §3–5): attempts, barrier, all-reduce, checkpoints, global restarts.
barrier
    The event-driven barrier: the slowest group's compute time drawn directly, failures drawn
    one by one (exact in distribution).
index
    The sampled barrier's index of live groups sorted by next-failure time.
clocks
    Failure-clock inputs of the core: replayed traces and failure-domain events.
methods
    The recovery methods (SPARe, spare+repair, Rep, CKPT-only, elastic-drop, elastic-rebalance)
    as small numba hooks, and their dispatch.

Runs (validation, batches, sweeps) are in :mod:`spare_lib.cluster.runs`; nothing here imports
from there or from :mod:`spare_lib.cluster.planning`.
"""
