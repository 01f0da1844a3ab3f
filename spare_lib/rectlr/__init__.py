"""RECTLR, SPARe's reordering controller (SPEC §4), numba-fast, with its oracles.

Modules
-------
matching
    Hopcroft–Karp b-matching and the Phase-1 depth search (numba).
mcmf
    Min-cost flow: the Phase-2 min-movement reorder and a general MCMF (numba).
kernels
    The controller kernels (Phase 0, Phases 1+2, the stack rewrite) for other ``@njit`` code.
controller
    The Python API: one-shot :func:`rectlr` and the incremental :class:`Controller`.
reference
    A plain SciPy/NetworkX implementation (the tests' oracle) and the worked example of Fig. 3.
sequences
    RECTLR along random failure sequences (Phase-0 share, S* − c(k), moves) and timings.
microbatch, microbatch_inc, microbatch_mc
    Micro-batch RECTLR (issue 25): the least makespan L* of b micro-batches per shard (Dinic
    with Dinkelbach steps over L), stateless and incremental kernels, the retry patch, the
    Monte Carlo of L*(k) along failure sequences (docs/microbatch.md).
"""

from spare_lib.rectlr.controller import Controller, Plan, rectlr
from spare_lib.rectlr.kernels import (
    OUTCOMES,
    rectlr_kernel,
    rectlr_kernel_assign,
    rectlr_kernel_ws,
    rectlr_workspace,
)
from spare_lib.rectlr.matching import hopcroft_karp, least_feasible_depth
from spare_lib.rectlr.mcmf import min_cost_flow
from spare_lib.rectlr.reference import rectlr_reference, worked_example
from spare_lib.rectlr.sequences import (
    benchmark_events,
    failure_sequence_stats,
    phase0_share,
    speed_summary,
)

__all__ = [
    "Controller", "Plan", "rectlr", "OUTCOMES", "rectlr_kernel", "rectlr_kernel_assign",
    "rectlr_kernel_ws", "rectlr_workspace", "hopcroft_karp", "least_feasible_depth",
    "min_cost_flow", "rectlr_reference", "worked_example", "benchmark_events",
    "failure_sequence_stats", "phase0_share", "speed_summary",
]
