"""The failure-free run computed in one process, without workers: the runtime's reference.

Same arithmetic as ``run_training("failure_free", ...)`` (per-type gradients summed in type
order; with b micro-batches, each type's gradient accumulated over its micro-batches in
increasing j first), so the two are bit-identical; the tests check it.
"""

from __future__ import annotations

import time

import numpy as np

from spare_lib._util.validate import check_int, check_positive
from spare_lib.runtime.coordinator import TrainingRun
from spare_lib.runtime.model import MLPTask, aggregate, shard_from_microbatches
from spare_lib.stacking.layout import Layout


def reference_run(layout: Layout, *, n_steps: int = 10, lr: float = 0.5,
                  task: MLPTask | None = None, microbatches: int = 1) -> TrainingRun:
    """The failure-free run computed in this process, without workers (a cheap reference).

    Parameters
    ----------
    layout : Layout
        Only N and r are used.
    n_steps, lr, task
        As in :func:`spare_lib.runtime.run_training`.
    microbatches : int
        Micro-batches b per shard (1: whole shards); the reference of micro-batch SPARe runs.

    Returns
    -------
    TrainingRun
        Mode 'failure_free', no events, no processes.
    """
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a spare_lib.stacking.layout.Layout, got {layout!r}")
    n_steps = check_int("n_steps", n_steps, lo=1)
    lr = check_positive("lr", lr)
    task = MLPTask() if task is None else task
    b = check_int("microbatches", microbatches, lo=1, hi=task.shard_size)
    t0 = time.perf_counter()
    N = layout.N
    theta = task.init_params()
    params, grads, train_loss = [theta], [], []
    for s in range(n_steps):
        if b == 1:
            out = [task.shard_loss_grad(theta, s, t) for t in range(N)]
        else:
            out = [shard_from_microbatches(task, [task.microbatch_loss_grad(theta, s, t, b, j)
                                                  for j in range(b)]) for t in range(N)]
        g = aggregate([o[1] for o in out])
        theta = theta - lr * g
        params.append(theta)
        grads.append(g)
        train_loss.append(float(np.sum([o[0] for o in out])) / N)
    params_a = np.array(params)
    return TrainingRun(mode="failure_free", N=N, r=layout.r, params=params_a,
                       grads=np.array(grads), train_loss=np.array(train_loss),
                       eval_loss=np.array([task.eval_loss(p) for p in params_a]),
                       n_types=np.full(n_steps, N, dtype=np.int64),
                       depth=np.ones(n_steps, dtype=np.int64),
                       n_live=np.full(n_steps, N, dtype=np.int64),
                       shards_computed=N * n_steps if b == 1 else 0, microbatches=b,
                       microbatches_computed=N * n_steps * b if b > 1 else 0,
                       wall_s=time.perf_counter() - t0)
