"""The predictive time-to-train model: TTT/T0, availability and overhead without simulating.

:func:`predict` evaluates one (method, N, r, C) on a cluster configuration — the paper's
SPARe+CKPT, Rep+CKPT and CKPT-only, and the methods whose failed groups rejoin (SPARe+repair,
elastic-drop, elastic-rebalance); every term comes from the configuration's parameters, none is
fitted to the simulator (``docs/predictive_model.md``).

Modules
-------
model
    :func:`predict`, :class:`Prediction`, the paper's Eq. 7 (:func:`eq7`) and the μ conventions.
terms
    One function per mechanism: the barrier E[max] over jittered groups, one group's renewal
    clock, the restart windows, the failure law during training, RECTLR phase 0, the wipe-out
    law under Binomial failures (a numba kernel).
barrier_max
    The barrier term: E[max] of n jittered stack sums and of n standard normals (re-exported by
    :mod:`.terms`).
curves
    Failure-law curves of every kind of cycle (first, steady, transient), cached per failure law
    and filled lazily along τ; the config snapshot the model reads.
cycle
    One training cycle: survival of the uptime, step time, depth and failure events on a τ grid;
    :class:`NoTrainingCycle`.
chain
    The run as a chain over the checkpoint lattice (two numba kernels): expected time, restarts,
    rework and restart time.
rejoin_law
    One group's failure law when failed groups rejoin: a renewal equation for its notices (numba).
rejoin_step
    The step of a rejoining method, as rates in two states (no group away, some).
rejoin_wait
    The wait from a rejoin time to the next step start (a lattice renewal function) and the
    windows of groups away that the cycles need.
rejoin_chain
    The count of groups away as a Markov chain killed at a wipe-out: the cycle's survival and the
    away set's law given that it survived (numba).
rejoin
    The cycles of SPARe+repair, elastic-drop and elastic-rebalance: survival, moments of the
    groups away (numba), step model.
rejoin_model
    The run of a rejoining method (the chain of :mod:`.chain`) and its prediction's fields.
grid
    Optimisation with the model: :func:`optimise_checkpoint`, :func:`recommend`,
    :func:`optimum_curve`.
jobwide
    Job-wide failures (a Poisson stream of global restarts every method pays, with a detection
    time): one more term of every cycle's hazard, off by default.
batch
    :func:`predict_batch`: every (method, r, C) of one cluster as arrays, the chain for all C in
    one numba call (design searches).
blocks
    The chain over the checkpoint lattice from per-block sums in closed form (numba), for the
    batch: O(grid + blocks + states) per law and C instead of O(steps/C).
packed
    The cycle laws of a run's chain, packed into the batch kernel's arrays (cached).
validation, validation_rejoin
    Grids and tables that put the model beside simulated runs and Eq. 7 (notebook 55); imported
    on demand (``from spare_lib.theory.predict import validation``), they need pandas.
"""

from spare_lib.theory.predict.batch import BatchPrediction, predict_batch
from spare_lib.theory.predict.cycle import NoTrainingCycle
from spare_lib.theory.predict.grid import (
    Recommendation,
    argmin_int,
    default_r_values,
    optimise_checkpoint,
    optimum_curve,
    recommend,
)
from spare_lib.theory.predict.model import (
    MECHANISMS,
    METHODS,
    MU_CONVENTIONS,
    PAPER_METHODS,
    REJOIN_METHODS,
    ClusterLike,
    Prediction,
    cfg_m,
    clear_caches,
    eq7,
    mu_in_convention,
    mu_to_index,
    predict,
)

__all__ = [
    "MECHANISMS", "METHODS", "MU_CONVENTIONS", "PAPER_METHODS", "REJOIN_METHODS",
    "BatchPrediction", "ClusterLike", "NoTrainingCycle", "Prediction",
    "Recommendation", "argmin_int", "cfg_m", "clear_caches", "default_r_values", "eq7",
    "mu_in_convention", "mu_to_index", "optimise_checkpoint", "optimum_curve", "predict",
    "predict_batch", "recommend",
]
