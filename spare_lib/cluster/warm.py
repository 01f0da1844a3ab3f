"""Every numba kernel of spare_lib: is the on-disk cache warm, warming it, and checking it.

The kernels are compiled with ``cache=True`` into the keyed ``NUMBA_CACHE_DIR``
(``spare_lib/__init__.py``): the first run on a fresh clone (or after any source change)
compiles them, which takes minutes in all; later runs load them in seconds.
:func:`warm_kernels` runs one tiny call of every family (the event core with each method, both
barriers, traces, failure streams and domains; wipe-out sampling; RECTLR's kernels; the Monte
Carlo of S* and μ; the predictive model; correlated failures), in one process or (``spare warm``)
in two halves side by side, so that the
processes that follow (CLI calls, pytest-xdist workers, process pools) load the cache instead of
each compiling its own copy. :func:`uncached_kernels` lists every ``cache=True`` kernel of the
package that has no cache entry: ``spare warm --check`` fails on a non-empty list, so a kernel
added without a warm-up call is caught by ``make test`` on a fresh clone. ``make venv`` and
``make test`` run ``spare warm``.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path


def kernels_cached() -> bool:
    """True if numba's cache holds a compiled event core for the current source.

    Reads numba's own index for ``_core`` (which is empty when the cache dir is empty or the
    source file changed since it was written). Any failure to read it counts as not cached.
    """
    try:
        from spare_lib.cluster.engine.core import _core

        return bool(_core._cache._cache_file._load_index())
    except Exception:  # pragma: no cover - numba internals moved: assume a compile is coming
        return False


def _warm_core() -> None:
    import numpy as np

    from spare_lib.cluster.config import h100_600k
    from spare_lib.cluster.runs.simulate import simulate

    cfg = h100_600k(20, steps=3)
    rejoin = cfg.with_(rejoin_s=600.0)
    for barrier in ("direct", "sampled"):
        for method, r in (("spare", 3), ("rep", 2), ("ckpt", 1)):
            simulate(method, 20, r, 2, cfg, seed=0, barrier=barrier)
            simulate(method, 20, r, 2, cfg, seed=0, failure_seed=1, barrier=barrier)
        for method, r in (("spare+repair", 3), ("elastic-drop", 1), ("elastic-rebalance", 1)):
            simulate(method, 20, r, 2, rejoin, seed=0, failure_seed=1, barrier=barrier)
    # SPARe-b (direct barrier only), with repair and drop (issue 25)
    for method in ("spare-b", "spare-b+repair", "spare-b+drop"):
        simulate(method, 20, 3, 2, rejoin.with_(microbatches=4), seed=0, failure_seed=1)
    simulate("spare", 20, 3, 2, cfg, failure_trace=np.empty((0, 2)))
    simulate("spare", 20, 3, 2, cfg.with_(domain_size=4, domain_fault_share=0.5), seed=0)
    # the world of issue 24 (failure mix, jitter models, all-reduce rule, quorum, event log)
    world = cfg.with_(failure_mix="llama3", domain_size=4, jitter_model="straggler",
                      allreduce_rule="abort", detect_s=5.0, min_live=0.5)
    simulate("elastic-drop", 20, 1, 2, world, seed=0, failure_seed=1, events=True)
    simulate("rep", 20, 2, 2, world.with_(jitter_model="step"), seed=0, events=True)


def _warm_barrier() -> None:
    """The barrier samplers the core does not call itself (the tests compare them)."""
    import numpy as np

    from spare_lib._util.normal import norm_ppf
    from spare_lib.cluster.engine.barrier import barrier_direct, barrier_direct_patch, barrier_step

    N = 8
    alive, nf = np.ones(N, dtype=np.bool_), np.full(N, 1e9)
    bufs = (np.empty(N, np.int64), np.empty(N), np.empty(N, np.int64))
    rng = np.random.default_rng(0)
    barrier_step(0.0, 2, 64.0, alive, nf, 0.05, 0.1, rng, *bufs)
    barrier_direct(0.0, 2, 64.0, alive, nf, 0.05, 0.1, rng, *bufs)
    barrier_direct_patch(0.0, np.full(N, 2, np.int64), 64.0, alive, nf, 0.05, 0.1, rng, *bufs)
    norm_ppf(0.5)


def _warm_stacking() -> None:
    from spare_lib.stacking import failures_to_wipeout, ruler_layout
    from spare_lib.stacking.domains import domain_failures_to_wipeout

    lay = ruler_layout(12, 3)
    failures_to_wipeout(lay, 2, seed=0)
    domain_failures_to_wipeout(lay, 2, seed=0, domain_size=3, domain_prob=0.5)


def _warm_rectlr() -> None:
    import numpy as np

    from spare_lib.rectlr import Controller, rectlr, rectlr_kernel_ws, rectlr_workspace
    from spare_lib.rectlr.kernels_inc import rectlr_inc_workspace, rectlr_kernel_inc
    from spare_lib.rectlr.matching import hopcroft_karp
    from spare_lib.rectlr.mcmf import min_cost_flow
    from spare_lib.rectlr.sequences import failure_sequence_stats
    from spare_lib.stacking import ruler_layout

    lay = ruler_layout(12, 3)
    alive = np.ones(12, dtype=np.bool_)
    alive[[0, 5]] = False
    Controller(lay).fail([0, 5])
    rectlr(lay.stacks.copy(), alive, 1)
    patch = np.zeros(12, dtype=np.int64)
    rectlr_kernel_ws(lay.stacks.copy(), alive, 1, patch, *rectlr_workspace(lay.stacks))
    rectlr_kernel_inc(lay.stacks.copy(), alive, 1, patch, *rectlr_inc_workspace(lay.stacks))
    failure_sequence_stats(lay, 2, seed=0)
    hopcroft_karp(np.array([0, 1, 2]), np.array([0, 1]), np.array([1, 1]))
    min_cost_flow(2, np.array([0]), np.array([1]), np.array([1]), np.array([1.0]), 0, 1)


def _warm_microbatch() -> None:
    """Micro-batch RECTLR (stateless, incremental, retry patch, fixed-L flow) and its MC."""
    import numpy as np

    from spare_lib.rectlr.microbatch import (
        max_flow_at,
        microbatch_assign,
        microbatch_kernel_ws,
        microbatch_workspace,
    )
    from spare_lib.rectlr.microbatch_inc import (
        MicrobatchController,
        microbatch_inc_invalidate,
        microbatch_patch_drop,
        microbatch_retry_patch,
    )
    from spare_lib.rectlr.microbatch_mc import makespan_mc
    from spare_lib.stacking import ruler_layout
    from spare_lib.theory.microbatch import arc_valid_prob

    lay = ruler_layout(12, 3)
    alive = np.ones(12, dtype=np.bool_)
    alive[[0, 5]] = False
    full = microbatch_assign(lay, np.ones(12, dtype=np.bool_), 4).counts
    microbatch_assign(lay, alive, 4)
    max_flow_at(lay.stacks, alive, 4, 8)
    ctl = MicrobatchController(lay, 4)
    ctl.fail([0])
    ctl.patch(np.zeros((12, 3), dtype=np.int64))
    microbatch_retry_patch(lay, alive, 4, full, np.zeros((12, 3), dtype=np.int64))
    zero = np.zeros((12, 3), dtype=np.int64)
    microbatch_patch_drop(lay.stacks.copy(), alive, 4, zero, zero, False,
                          *microbatch_workspace(lay.stacks.copy()))
    ws = microbatch_workspace(lay.stacks.copy())
    microbatch_kernel_ws(lay.stacks.copy(), alive, 4, True, *ws)
    microbatch_inc_invalidate(ws[6])
    makespan_mc(lay, 4, 2, seed=0)
    arc_valid_prob(12, 0.1, 4, 6, 2)


def _warm_theory() -> None:
    import numpy as np

    from spare_lib.cluster.config import h100_600k
    from spare_lib.stacking import ruler_layout
    from spare_lib.theory import overhead_mc, replication_failures_mc, s_star_sequence
    from spare_lib.theory.predict import predict, predict_batch

    lay = ruler_layout(12, 3)
    overhead_mc(lay, 2, seed=0)
    s_star_sequence(lay, np.arange(12))
    replication_failures_mc(12, 2, 2, seed=0)
    for method, r in (("spare", 3), ("rep", 2), ("ckpt", 1)):
        predict(method, 40, r, 10, h100_600k(40, steps=100))
    rejoin = h100_600k(40, steps=100, rejoin_s=600.0)
    for method, r in (("spare+repair", 3), ("elastic-drop", 1), ("elastic-rebalance", 1)):
        predict(method, 40, r, 10, rejoin)
    predict_batch(("spare", "elastic-drop"), 40, (1, 3), (None, 10), rejoin, max_states=16)


def _warm_correlated() -> None:
    from spare_lib.cluster.runs.correlated import failures_to_interruption, interruption_sets

    for name in ("spare-ruler", "rep-consecutive"):
        failures_to_interruption(interruption_sets(name, 12, 3, 4), 12, 4, 0.5, 2, seed=0)


#: The warm-up calls, by kernel family (name, call).
WARMUPS: tuple[tuple[str, Callable[[], None]], ...] = (
    ("event core", _warm_core),
    ("barrier samplers", _warm_barrier),
    ("wipe-out sampling", _warm_stacking),
    ("RECTLR", _warm_rectlr),
    ("micro-batch RECTLR", _warm_microbatch),
    ("theory (Monte Carlo, predictive model)", _warm_theory),
    ("correlated failures", _warm_correlated),
)


#: The two halves :func:`warm_kernels` compiles side by side with ``workers=2`` (about equal
#: compile times: the event core and its samplers; the rest).
HALVES = (("event core", "barrier samplers", "correlated failures"),
          ("wipe-out sampling", "RECTLR", "micro-batch RECTLR",
           "theory (Monte Carlo, predictive model)"))


def _run_families(families: Sequence[str] | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, call in WARMUPS:
            if families is None or name in families:
                call()


def warm_kernels(families: Sequence[str] | None = None, workers: int = 1) -> float:
    """Run the warm-up calls of :data:`WARMUPS` (compiling or loading the kernels); seconds.

    Parameters
    ----------
    families : sequence of str or None
        Names of :data:`WARMUPS` to run (e.g. ``("event core",)``, all a simulation needs);
        None: every family.
    workers : int
        1: in this process. 2: every family, the two :data:`HALVES` compiled at once, one in a
        spawned process (numba compiles on one core; each kernel's cache entry is written by
        whichever process compiles it, and a kernel both need is compiled twice, harmlessly).
    """
    known = [name for name, _ in WARMUPS]
    if families is not None:
        bad = sorted(set(families) - set(known))
        if bad:
            raise ValueError(f"families must be among {known}, got {bad}")
    if workers not in (1, 2):
        raise ValueError(f"workers must be 1 or 2, got {workers!r}")
    t = time.perf_counter()
    if workers == 1 or families is not None:
        _run_families(families)
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        rest = [name for name in known if name not in HALVES[0] + HALVES[1]]
        with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
            other = pool.submit(_run_families, HALVES[0])
            _run_families(HALVES[1] + tuple(rest))
            other.result()
    return time.perf_counter() - t


def _kernel_modules() -> list[str]:
    """Names of spare_lib's modules whose source defines a numba kernel."""
    import spare_lib

    root = Path(spare_lib.__file__).resolve().parent
    names = []
    for info in pkgutil.walk_packages([str(root)], prefix="spare_lib."):
        rel = info.name.split(".")[1:]
        path = root.joinpath(*rel)
        src = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
        if src.is_file() and "@njit" in src.read_text():
            names.append(info.name)
    return names


def uncached_kernels() -> list[str]:
    """Every ``cache=True`` kernel of spare_lib without an entry in numba's cache, as
    ``module.function`` (empty after :func:`warm_kernels` on a fresh cache when every kernel
    family has its warm-up call)."""
    from numba.core.registry import CPUDispatcher

    missing = []
    for name in _kernel_modules():
        mod = importlib.import_module(name)
        for attr, obj in sorted(vars(mod).items()):
            if not isinstance(obj, CPUDispatcher) or obj.__module__ != name:
                continue
            cache = getattr(obj, "_cache", None)
            cache_file = getattr(cache, "_cache_file", None)
            if cache_file is None or obj.targetoptions.get("inline") == "always":
                continue  # cache=False, or inlined into its callers (no cache entry of its own)
            if not cache_file._load_index():
                missing.append(f"{name}.{attr}")
    return missing


def main() -> None:  # pragma: no cover - `python -m spare_lib.cluster.warm`
    """Warm the cache and say how long it took."""
    was = kernels_cached()
    dt = warm_kernels()
    print(f"[spare warm] numba kernels {'loaded from cache' if was else 'compiled'} in {dt:.0f} s")


if __name__ == "__main__":  # pragma: no cover
    main()
