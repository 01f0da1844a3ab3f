"""Simulated runs: one run, batches, result tables, executors, sweeps, correlated failures.

Modules
-------
simulate
    :func:`simulate` (one run, a :class:`SimResult`) and :func:`simulate_many` (a batch): input
    validation and the arrays of the engine's core.
results
    Result tables of notebooks 50/60 and the paper's main table.
executor
    One executor for every batch of independent calls: serial, a spawn process pool, or Dask.
sweeps
    Resumable parameter sweeps (``spare sweep``), seeded per point.
correlated
    Failure domains: interruption sets, the checkpoint plan and runs of notebook 75.

Built on :mod:`spare_lib.cluster.engine`; planning (:mod:`spare_lib.cluster.planning`) is built
on these.
"""
