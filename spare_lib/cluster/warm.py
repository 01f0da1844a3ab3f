"""The numba kernels of the simulator: is the on-disk cache warm, and warming it.

The event core (:func:`spare_lib.cluster.core._core`, with the method hooks and RECTLR inlined)
is compiled with ``cache=True``: the first run on a fresh clone (empty ``NUMBA_CACHE_DIR``, or a
core changed since the cache was written) compiles it, which takes about a minute; later runs
load it in a fraction of a second. :func:`kernels_cached` tells which case applies, so the CLI
can say so before a silent minute; :func:`warm_kernels` compiles once in this process (before a
process pool starts, so the workers load the cache instead of each compiling its own copy), and
``make venv`` runs it at install time.
"""

from __future__ import annotations

import time
import warnings


def kernels_cached() -> bool:
    """True if numba's cache holds a compiled event core for the current source.

    Reads numba's own index for ``_core`` (which is empty when the cache dir is empty or the
    source file changed since it was written). Any failure to read it counts as not cached.
    """
    try:
        from spare_lib.cluster.core import _core

        return bool(_core._cache._cache_file._load_index())
    except Exception:  # pragma: no cover - numba internals moved: assume a compile is coming
        return False


def warm_kernels() -> float:
    """Run one tiny simulation per method (compiling or loading the kernels); return seconds."""
    import inspect

    import numpy as np

    from spare_lib.cluster.config import h100_600k
    from spare_lib.cluster.simulate import simulate

    t = time.perf_counter()
    cfg = h100_600k(20, steps=3)
    crn = "failure_seed" in inspect.signature(simulate).parameters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method, r in (("spare", 3), ("rep", 2), ("ckpt", 1)):
            simulate(method, 20, r, 2, cfg, seed=0)
            if crn:
                simulate(method, 20, r, 2, cfg, seed=0, failure_seed=1)
        simulate("spare", 20, 3, 2, cfg, failure_trace=np.empty((0, 2)))
    return time.perf_counter() - t


def main() -> None:  # pragma: no cover - `python -m spare_lib.cluster.warm` (make venv)
    """Warm the cache and say how long it took."""
    was = kernels_cached()
    dt = warm_kernels()
    print(f"[spare warm] numba kernels {'loaded from cache' if was else 'compiled'} in {dt:.0f} s")


if __name__ == "__main__":  # pragma: no cover
    main()
