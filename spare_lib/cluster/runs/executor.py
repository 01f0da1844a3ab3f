"""One executor for every batch of independent calls: serial, a local process pool, or Dask.

:func:`execute` is what :func:`spare_lib.cluster.runs.sweeps.run_sweep` and
:func:`spare_lib.cluster.runs.simulate.simulate_many` both run on. Results come back in input order and
do not depend on the backend or the number of workers (seeds travel with the items).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

BACKENDS = ("serial", "processes", "dask")


def check_backend(backend: str, workers: int | None = None) -> None:
    """ValueError unless ``backend`` is one of :data:`BACKENDS` and ``workers`` is None or ≥ 1."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")


def execute(call: Callable[[Any], Any], items: Sequence[Any], *, backend: str = "processes",
            client: Any = None, workers: int | None = None, order: Sequence[int] | None = None,
            on_done: Callable[[int, Any], None]) -> None:
    """Run ``call(item)`` for items on one backend; hand each result to ``on_done`` as it arrives.

    The one executor of the library: :func:`run_sweep` and
    :func:`spare_lib.cluster.runs.simulate.simulate_many` both run through it.

    Parameters
    ----------
    call : callable
        A module-level (picklable) function of one argument, or a ``functools.partial`` of one.
    items : sequence
        The arguments; ``call`` and the items are pickled to the workers of 'processes' and 'dask'.
    backend : {'serial', 'processes', 'dask'}
        'serial' runs in this process; 'processes' uses a spawn-context process pool with
        ``min(workers, number of items run)`` processes; 'dask' uses ``client`` (a
        ``dask.distributed.Client`` or a scheduler address, ConnectionError if it does not
        answer within :data:`DASK_CONNECT_TIMEOUT_S`) or a LocalCluster of ``workers``
        single-threaded worker processes, closed afterwards.
    client : dask.distributed.Client, str or None
        For 'dask' only (ignored otherwise).
    workers : int or None
        Processes of the pool and of a LocalCluster (default: os.cpu_count()).
    order : sequence of int or None
        Indices of the items to run, in submission order (default: all, in order). A subset runs
        only those items.
    on_done : callable
        ``on_done(index, result)``, called in this process once per item run, in completion
        order. On any exception (from a task or from ``on_done``) the pending tasks are
        cancelled and the exception propagates.

    Examples
    --------
    >>> out = {}
    >>> execute(abs, [-1, 2, -3], backend="serial", order=[2, 0], on_done=out.__setitem__)
    >>> out
    {2: 3, 0: 1}
    """
    check_backend(backend, workers)
    todo = list(range(len(items))) if order is None else [int(i) for i in order]
    if any(not 0 <= i < len(items) for i in todo) or len(set(todo)) != len(todo):
        raise ValueError(f"order must hold distinct indices in [0, {len(items)}), got {order!r}")
    if not todo:
        return
    if backend == "serial":
        for i in todo:
            on_done(i, call(items[i]))
    elif backend == "processes":
        n = workers or os.cpu_count() or 1
        with ProcessPoolExecutor(max_workers=min(n, len(todo)), mp_context=pool_context(call)) as ex:
            futs = {ex.submit(call, items[i]): i for i in todo}
            pending = set(futs)
            try:
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in finished:
                        on_done(futs[f], f.result())
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
    else:
        _run_dask(call, items, todo, client, workers, on_done)


def pool_context(call: Callable[[Any], Any]) -> Any:
    """The start method of the 'processes' pool: ``forkserver`` where the platform has it, else
    ``spawn``.

    Both give every worker a fresh interpreter's state (no thread, lock or open file of the caller
    is inherited, unlike ``fork``). A spawned worker imports numpy, SciPy, numba and spare_lib on
    its own, about 3.7 s of CPU per worker on the 2-core machine of record, paid again by every
    pool (``spare plan --simulate`` opens one per call, the test suite dozens); a forkserver
    imports them once (its preloads: :mod:`spare_lib.cluster` and ``call``'s module) and forks
    each worker from that state. Results do not depend on the start method: seeds travel with
    the items. The server keeps the environment of the moment it started (the first pool of the
    process), as a spawned worker would have that of its pool's start.
    """
    import multiprocessing as mp

    if "forkserver" not in mp.get_all_start_methods():  # pragma: no cover - Windows
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(sorted({"spare_lib.cluster", getattr(call, "__module__", "")} - {""}))
    return ctx


def _run_dask(call: Callable[[Any], Any], items: Sequence[Any], todo: list[int], client: Any,
              workers: int | None, on_done: Callable[[int, Any], None]) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:  # pragma: no cover - optional extra
        raise ValueError("backend='dask' needs the optional extra: pip install -e '.[dask]'") from exc
    own = None
    if client is None:
        n = workers or os.cpu_count() or 1
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        own = client = Client(cluster)
    elif isinstance(client, str):
        own = client = connect(client)
    try:
        # boxed: dask < 2024.12 would run a tuple item whose first element is callable as a task
        futs = client.map(_unbox, [call] * len(todo), [_Box(items[i]) for i in todo], pure=False)
        index = {f.key: i for f, i in zip(futs, todo, strict=True)}
        pending = set(futs)
        try:
            for f in as_completed(futs):
                pending.discard(f)
                on_done(index[f.key], f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            raise
    finally:
        if own is not None:
            cluster_obj = getattr(own, "cluster", None)
            own.close()
            if cluster_obj is not None:
                cluster_obj.close()


#: Seconds to wait for a Dask scheduler given by address before giving up.
DASK_CONNECT_TIMEOUT_S = 5.0


def connect(address: str) -> Any:
    """A ``dask.distributed.Client`` on ``address``; ConnectionError naming the address if the
    scheduler does not answer within :data:`DASK_CONNECT_TIMEOUT_S` (ValueError without dask)."""
    try:
        from dask.distributed import Client
    except ImportError as exc:  # pragma: no cover - optional extra
        raise ValueError("backend='dask' needs the optional extra: pip install -e '.[dask]'") from exc
    try:
        return Client(address, timeout=DASK_CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(f"Dask scheduler {address!r} did not answer within "
                              f"{DASK_CONNECT_TIMEOUT_S:g} s ({type(exc).__name__}); is it running "
                              "and reachable from here?") from None


@dataclasses.dataclass(frozen=True)
class _Box:
    """An item shipped to a Dask worker as an opaque object."""

    item: Any


def _unbox(call: Callable[[Any], Any], box: _Box) -> Any:
    return call(box.item)
