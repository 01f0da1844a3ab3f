"""The predictive time-to-train model: TTT/T0, availability and overhead without simulating.

:func:`predict` evaluates one (method, N, r, C) on a cluster configuration; every term comes from
the configuration's parameters, none is fitted to the simulator (``docs/predictive_model.md``).

Modules
-------
model
    :func:`predict`, :class:`Prediction`, the paper's Eq. 7 (:func:`eq7`) and the μ conventions.
terms
    One function per mechanism: the barrier E[max] over jittered groups, one group's renewal
    clock, the restart windows, the failure law during training, RECTLR phase 0, the wipe-out
    law under Binomial failures (a numba kernel).
curves
    Failure-law curves of every kind of cycle (first, steady, transient), cached per failure law
    and filled lazily along τ; the config snapshot the model reads.
cycle
    One training cycle: survival of the uptime, step time, depth and failure events on a τ grid;
    :class:`NoTrainingCycle`.
chain
    The run as a chain over the checkpoint lattice (two numba kernels): expected time, restarts,
    rework and restart time.
grid
    Optimisation with the model: :func:`optimise_checkpoint`, :func:`recommend`,
    :func:`optimum_curve`.
validation
    Grids and tables that put the model beside simulated runs and Eq. 7 (notebook 55); imported
    on demand (``from spare_lib.theory.predict import validation``), it needs pandas.
"""

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
    "MECHANISMS", "METHODS", "MU_CONVENTIONS", "ClusterLike", "NoTrainingCycle", "Prediction",
    "Recommendation", "argmin_int", "cfg_m", "clear_caches", "default_r_values", "eq7",
    "mu_in_convention", "mu_to_index", "optimise_checkpoint", "optimum_curve", "predict",
    "recommend",
]
