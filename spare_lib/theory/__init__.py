"""Theory of SPARe (SPEC §7): closed forms, finite-N forms, sympy derivations, Monte Carlo of S*.

Modules
-------
closed
    The paper's μ(N, r) ≈ Γ(1+1/r) N^(1−1/r), c(k) = ⌈N/(N−k)⌉, and replication's μ.
finite
    Finite-N survival, μ and S̄ (exact for the consecutive layout, Bethe for rulers).
ttt
    Availability A(T_c), T_c*, A* (Eq. 2), time-to-train J(r) (Eq. 7) and r*.
symbolic
    sympy derivations of every formula, with their checks.
montecarlo
    Exact S* along failure sequences (numba b-matching), μ and replication Monte Carlo.
validation
    Tables that put the formulas next to the Monte Carlo (notebooks 30 and 35).
repair
    Failures and time to wipe-out of SPARe whose failed groups rejoin (a birth–death chain).
correlated
    Failure domains: μ and S̄ when whole domains fail at once.
predict
    The predictive time-to-train model (a subpackage: model, terms, curves, cycle, chain, grid,
    validation; ``docs/predictive_model.md``).
"""

from spare_lib.theory.closed import (
    c_lower,
    mu_closed,
    replication_mu,
    replication_pairs_mu_exact,
    replication_survival_exact,
)
from spare_lib.theory.finite import (
    M_PAPER,
    T_R_PAPER,
    T_S_PAPER,
    bethe_log_survival,
    mu_finite,
    mu_independent,
    overhead_finite,
    overhead_mean,
    survival_finite,
)
from spare_lib.theory.montecarlo import (
    MuMC,
    OverheadMC,
    mu_mc,
    overhead_mc,
    replication_failures_mc,
    s_star_sequence,
)
from spare_lib.theory.ttt import (
    availability,
    availability_opt,
    checkpoint_period_opt,
    r_star_closed,
    r_star_numeric,
    ttt_normalized,
)

__all__ = [
    "c_lower", "mu_closed", "replication_mu", "replication_pairs_mu_exact",
    "replication_survival_exact", "M_PAPER", "T_R_PAPER", "T_S_PAPER", "bethe_log_survival",
    "mu_finite", "mu_independent", "overhead_finite", "overhead_mean", "survival_finite",
    "MuMC", "OverheadMC", "mu_mc", "overhead_mc", "replication_failures_mc", "s_star_sequence",
    "availability", "availability_opt", "checkpoint_period_opt", "r_star_closed",
    "r_star_numeric", "ttt_normalized",
]
