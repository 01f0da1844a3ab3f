"""The worker process: one data-parallel group hosting its stack of r shard types.

Started by the coordinator with the ``spawn`` start method. It imports only numpy and
:mod:`spare_lib.runtime.model` (no matplotlib, no numba: the RECTLR controller runs in the
coordinator), pins BLAS to one thread, and then serves a pipe:

====================================================  ==========================================
coordinator → worker                                  worker → coordinator
====================================================  ==========================================
(start-up)                                            ``("ready", w, pid)``
``("compute", step, attempt, θ, [t0, t1, ...])``      ``("grad", step, attempt, t, loss, g_t)``
                                                      per type, then ``("done", step, attempt)``
``("compute_mb", step, attempt, θ, b, [(t, j), ..]``  ``("mgrad", step, attempt, t, j, loss, g)``
                                                      per micro-batch j of type t (issue 25),
                                                      then ``("done", step, attempt)``
``("allreduce", step, attempt)``                      ``("ack", step, attempt)``
``("stop",)``                                         exits with code 0
====================================================  ==========================================

A worker only computes the types it hosts (its r types); a request for any other type is a
protocol error (``("error", message)``), not a failure. When the coordinator's end of the pipe
closes (coordinator gone), ``recv`` raises ``EOFError`` and the worker exits: workers never
outlive their coordinator.
"""

from __future__ import annotations

import multiprocessing as mp
import os

# In a spawned worker (and only there: the coordinator imports this module too), pin BLAS and
# OpenMP pools to one thread before numpy is imported: cheap start-up, no oversubscription of a
# small box, and a reduction order that does not depend on a thread count.
if mp.parent_process() is not None:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import time  # noqa: E402

from spare_lib.runtime.model import MLPTask  # noqa: E402


def worker_main(worker_id: int, held_types: tuple[int, ...], task_kwargs: dict,
                shard_delay_s: float, conn) -> None:  # noqa: ANN001 (Connection)
    """Entry point of worker process ``worker_id`` (runs until ``stop`` or EOF).

    Parameters
    ----------
    worker_id : int
        The group id w.
    held_types : tuple of int
        The r shard types group w hosts (its base stack, SPEC §2).
    task_kwargs : dict
        Keyword arguments of :class:`MLPTask` (plain Python values: cheap to pickle).
    shard_delay_s : float
        Extra sleep per shard computed, standing in for the 64 s of real compute, so that a
        kill lands in the middle of a step.
    conn : multiprocessing.connection.Connection
        This worker's end of its pipe to the coordinator.
    """
    task = MLPTask(**task_kwargs)
    held = frozenset(int(t) for t in held_types)
    try:
        conn.send(("ready", worker_id, os.getpid()))
        while True:
            msg = conn.recv()
            kind = msg[0]
            if kind == "compute":
                _, step, attempt, theta, types = msg
                bad = [t for t in types if t not in held]
                if bad:
                    conn.send(("error", f"worker {worker_id} does not host types {bad} "
                                        f"(hosts {sorted(held)})"))
                    continue
                for t in types:
                    if shard_delay_s > 0:
                        time.sleep(shard_delay_s)
                    loss, g = task.shard_loss_grad(theta, step, t)
                    conn.send(("grad", step, attempt, int(t), loss, g))
                conn.send(("done", step, attempt))
            elif kind == "compute_mb":
                _, step, attempt, theta, b, items = msg
                bad = sorted({t for t, _ in items if t not in held})
                if bad:
                    conn.send(("error", f"worker {worker_id} does not host types {bad} "
                                        f"(hosts {sorted(held)})"))
                    continue
                for t, j in items:
                    if shard_delay_s > 0:
                        time.sleep(shard_delay_s / b)  # a shard's compute time, split b ways
                    loss, g = task.microbatch_loss_grad(theta, step, t, b, j)
                    conn.send(("mgrad", step, attempt, int(t), int(j), loss, g))
                conn.send(("done", step, attempt))
            elif kind == "allreduce":
                conn.send(("ack", msg[1], msg[2]))
            elif kind == "stop":
                return
            else:
                conn.send(("error", f"worker {worker_id}: unknown message {kind!r}"))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the coordinator is gone: exit quietly
    finally:
        conn.close()
