"""Validation tables of the theory against Monte Carlo (notebooks 30 and 35): μ, S̄, J(r), r*.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from spare_lib._util.results_io import round_sig
from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int
from spare_lib.stacking.wipeout import failures_to_wipeout
from spare_lib.theory.closed import mu_closed, replication_mu
from spare_lib.theory.finite import (
    M_PAPER,
    T_R_PAPER,
    T_S_PAPER,
    mu_finite,
    mu_independent,
    overhead_finite,
    overhead_mean,
)
from spare_lib.theory.montecarlo import mu_mc, overhead_mc, replication_failures_mc
from spare_lib.theory.symbolic import lambdify_mu_closed
from spare_lib.theory.ttt import r_star_closed, r_star_numeric, ttt_normalized

#: The paper's reported maximum errors of its closed forms against Monte Carlo (SPEC §7).
PAPER_MU_MAX_ERR_PCT = 1.13


PAPER_OVERHEAD_MAX_ERR_PCT = 0.60


def validation_table(N_values: tuple[int, ...] = (200, 600, 1000), *, seed: SeedLike = 2026,
                     overhead_trials: int = 2_000, mu_rel_se: float = 0.0015,
                     mu_min_trials: int = 4_000, mu_max_trials: int = 400_000,
                     r_stride: int = 1, progress: bool = True) -> pd.DataFrame:
    """μ and S̄ by Monte Carlo against the closed forms, over the usable r of each N (ruler).

    For every N and r = 2..max_ruler_r(N) (every ``r_stride``-th, always including the ends):
    μ by :func:`mu_mc` to relative standard error ``mu_rel_se``, S̄ by :func:`overhead_mc`
    with ``overhead_trials`` sequences, and the formulas ``mu_closed``, ``mu_finite``,
    ``overhead_mean`` (Eq. 5 with μ closed, as the paper) and ``overhead_finite``.

    Returns
    -------
    pandas.DataFrame
        One row per (N, r); columns ``mu_mc, mu_se, mu_trials, mu_closed, mu_finite,
        s_bar_mc, s_bar_se, s_bar_cycle_mc, eq5, eq5_mu_finite, overhead_finite, c_bar_mc,
        frac_states_gt, frac_sequences_gt, max_excess`` and relative errors in percent
        ``err_mu_closed, err_mu_finite, err_eq5, err_eq5_mu_finite, err_overhead_finite``.
    """
    from tqdm.auto import tqdm

    from spare_lib.stacking.layout import max_ruler_r, ruler_layout

    ss = as_seed_sequence(seed)
    jobs = []
    for N in N_values:
        rmax = max_ruler_r(N)
        rs = sorted(set(range(2, rmax + 1, r_stride)) | {2, rmax})
        jobs += [(N, r) for r in rs]
    children = ss.spawn(len(jobs))
    rows = []
    for (N, r), child in tqdm(list(zip(jobs, children, strict=True)), disable=not progress,
                              desc="(N, r)"):
        lay = ruler_layout(N, r)
        s_mu, s_oh = child.spawn(2)
        mm = mu_mc(lay, s_mu, target_rel_se=mu_rel_se, min_trials=mu_min_trials,
                   max_trials=mu_max_trials)
        oh = overhead_mc(lay, overhead_trials, s_oh)
        mu_f = float(mu_finite(N, r))
        rows.append({
            "N": N, "r": r, "mu_mc": mm.mean, "mu_se": mm.se, "mu_trials": mm.n_trials,
            "mu_closed": float(mu_closed(N, r)), "mu_finite": mu_f,
            "s_bar_mc": oh.s_bar, "s_bar_se": oh.s_bar_se, "s_bar_cycle_mc": oh.s_bar_per_cycle,
            "oh_trials": oh.n_trials, "eq5": float(overhead_mean(N, r)),
            "eq5_mu_finite": float(overhead_mean(N, r, mu=mu_f)),
            "overhead_finite": overhead_finite(N, r), "c_bar_mc": oh.c_bar,
            "frac_states_gt": oh.frac_states_gt, "frac_sequences_gt": oh.frac_sequences_gt,
            "max_excess": int(oh.max_excess.max()),
        })
    df = pd.DataFrame(rows)
    for col, ref in (("mu_closed", "mu_mc"), ("mu_finite", "mu_mc"), ("eq5", "s_bar_mc"),
                     ("eq5_mu_finite", "s_bar_mc"), ("overhead_finite", "s_bar_mc")):
        # from the values as written (12 significant digits): a relative error of two close
        # values amplifies their last-bit differences across machines (the order of a sum, the
        # math library); from the written digits it is the same wherever those are
        df["err_" + col] = 100.0 * (df[col].map(round_sig) / df[ref].map(round_sig) - 1.0)
    return df


def layout_comparison_table(N: int = 600, r_values: tuple[int, ...] | None = None, *,
                            seed: SeedLike = 2026, mu_trials: int = 20_000,
                            overhead_trials: int = 500, progress: bool = True) -> pd.DataFrame:
    """μ and S̄ for ruler, consecutive and random offsets and disjoint replication, same r.

    Monte Carlo for the three stacking layouts (``failures_to_wipeout`` for μ, ``overhead_mc``
    for S̄) and for replication (``replication_failures_mc``; S̄ = r, every group computes its
    set's r shards); the exact/finite formulas alongside (``mu_finite`` ruler/consecutive,
    ``replication_mu``).

    Returns
    -------
    pandas.DataFrame
        Long format: columns ``layout, r, mu_mc, mu_se, s_bar_mc, s_bar_se, mu_theory``.
    """
    from tqdm.auto import tqdm

    from spare_lib.stacking.layout import consecutive_layout, max_ruler_r, random_offsets_layout, ruler_layout

    N = check_int("N", N, lo=4)
    if r_values is None:
        r_values = tuple(range(2, max_ruler_r(N) + 1))
    ss = as_seed_sequence(seed)
    children = ss.spawn(len(r_values))
    rows = []
    for r, child in tqdm(list(zip(r_values, children, strict=True)), disable=not progress,
                         desc="r"):
        s_lay, s1, s2, s3, s4, s5, s6, s7 = child.spawn(8)
        lays = {"ruler": ruler_layout(N, r), "consecutive": consecutive_layout(N, r),
                "random": random_offsets_layout(N, r, s_lay)}
        seeds = {"ruler": (s1, s2), "consecutive": (s3, s4), "random": (s5, s6)}
        for name, lay in lays.items():
            K = failures_to_wipeout(lay, mu_trials, seed=seeds[name][0])
            oh = overhead_mc(lay, overhead_trials, seeds[name][1])
            if name == "random":
                try:
                    mu_th = float(mu_finite(N, r, layout=lay))
                except ValueError:
                    mu_th = np.nan
            else:
                mu_th = float(mu_finite(N, r, layout=name))
            rows.append({"layout": name, "r": r, "mu_mc": K.mean(),
                         "mu_se": K.std(ddof=1) / np.sqrt(K.size), "s_bar_mc": oh.s_bar,
                         "s_bar_se": oh.s_bar_se, "mu_theory": mu_th,
                         "offsets": " ".join(map(str, lay.offsets))})
        Kr = replication_failures_mc(N, r, mu_trials, s7)
        rows.append({"layout": "replication", "r": r, "mu_mc": Kr.mean(),
                     "mu_se": Kr.std(ddof=1) / np.sqrt(Kr.size), "s_bar_mc": float(r),
                     "s_bar_se": 0.0, "mu_theory": float(replication_mu(N, r)),
                     "offsets": ""})
    return pd.DataFrame(rows)


def ttt_curves(N_values: tuple[int, ...] = (200, 600, 1000), m: float | None = None,
               T_s: float | None = None, T_r: float | None = None) -> pd.DataFrame:
    """J(r) (Eq. 7) over r = 1..max_ruler_r(N) with μ closed+Eq. 5 and with the finite forms."""
    from spare_lib.stacking.layout import max_ruler_r

    kw = {"m": M_PAPER if m is None else m, "T_s": T_S_PAPER if T_s is None else T_s,
          "T_r": T_R_PAPER if T_r is None else T_r}
    rows = []
    for N in N_values:
        r = np.arange(1, max_ruler_r(N) + 1)
        J_closed = ttt_normalized(N, r, **kw)
        J_fin = ttt_normalized(N, r, mu_model="finite", overhead_model="finite", **kw)
        for ri, a, b_ in zip(r, J_closed, J_fin, strict=True):
            rows.append({"N": N, "r": int(ri), "J_closed": float(a), "J_finite": float(b_)})
    return pd.DataFrame(rows)


def r_star_vs_n_table(N_values: np.ndarray | None = None, r_cap: int = 40, m: float | None = None,
                      T_s: float | None = None, T_r: float | None = None) -> pd.DataFrame:
    """r* closed form and numeric minima of J (μ closed + Eq. 5) for N from 10 to 10^5.

    Columns: ``N, r_closed, r_numeric`` (r ≤ min(N, r_cap), no ruler constraint: the formula's
    own optimum), ``r_numeric_ruler`` (r ≤ max_ruler_r(N), the usable r of the ruler layout).
    """
    from spare_lib.stacking.layout import max_ruler_r

    if N_values is None:
        N_values = np.unique(np.round(np.logspace(1, 5, 41)).astype(int))
    kw = {"m": M_PAPER if m is None else m, "T_s": T_S_PAPER if T_s is None else T_s,
          "T_r": T_R_PAPER if T_r is None else T_r}
    rows = []
    for N in N_values:
        N = int(N)
        rows.append({"N": N, "r_closed": int(r_star_closed(N)),
                     "r_numeric": r_star_numeric(N, r_max=min(N, r_cap), **kw),
                     "r_numeric_ruler": r_star_numeric(N, r_max=max_ruler_r(N), **kw)})
    return pd.DataFrame(rows)


def mu_approximations_table(N_values: tuple[int, ...] = (200, 600, 1000),
                            r_stride: int = 1) -> pd.DataFrame:
    """μ by each approximation of :func:`derive_mu` over the usable r of each N (ruler layout).

    Columns: ``N, r, closed`` (Γ form), ``closed_half`` (+1/2, Euler–Maclaurin),
    ``independent`` (exact Beta integral, ``mu_independent``), ``finite``
    (``mu_finite``: Bethe, exact at r = 2), and ``err_*`` in percent relative to finite.
    """
    from spare_lib.stacking.layout import max_ruler_r

    closed = lambdify_mu_closed()
    rows = []
    for n in N_values:
        rmax = max_ruler_r(n)
        for rr in sorted(set(range(2, rmax + 1, r_stride)) | {2, rmax}):
            fin = float(mu_finite(n, rr))
            c = float(closed(n, rr))
            rows.append({"N": n, "r": rr, "closed": c, "closed_half": c + 0.5,
                         "independent": float(mu_independent(n, rr)), "finite": fin})
    df = pd.DataFrame(rows)
    for col in ("closed", "closed_half", "independent"):
        df["err_" + col] = 100.0 * (df[col] / df["finite"] - 1.0)
    return df


def mu_convention_table(df: pd.DataFrame, conventions: tuple[str, ...] = ("index", "endured"),
                        r_min_claim: int = 3) -> pd.DataFrame:
    """Errors of the paper's Γ form of μ (and of Eq. 5 built on it) under each μ convention.

    μ is the mean *index* of the wiping failure (what Monte Carlo measures, ``mu_mc``); the
    paper calls μ "endurable failures", which may be that index minus one. With
    ``mu_convention='endured'`` the Γ form is compared with ``mu_mc − 1`` and, consistently,
    Eq. 5 averages c(k) over ⌊μ_Γ + 1⌋ failure epochs (the Γ form read as endured failures,
    turned back into an index by :func:`spare_lib.theory.predict.mu_to_index`).

    Parameters
    ----------
    df : DataFrame
        :func:`validation_table` output (columns N, r, mu_mc, mu_closed, s_bar_mc).
    conventions : tuple of {'index', 'endured'}
    r_min_claim : int
        Also report the worst error over r ≥ r_min_claim.

    Returns
    -------
    DataFrame
        One row per (convention, N): worst |error| of the Γ form (%) over all r and over
        r ≥ r_min_claim, the r of the worst case, and the worst |error| of Eq. 5 (%).
    """
    from spare_lib.theory.predict import mu_in_convention, mu_to_index

    rows = []
    for conv in conventions:
        mu_ref = mu_in_convention(df.mu_mc.to_numpy(), conv)
        err = 100.0 * (df.mu_closed.to_numpy() / mu_ref - 1.0)
        eq5 = np.array([float(overhead_mean(int(n), int(r), mu=float(mu_to_index(m, conv))))
                        for n, r, m in zip(df.N, df.r, df.mu_closed, strict=True)])
        err5 = 100.0 * (eq5 / df.s_bar_mc.to_numpy() - 1.0)
        for N in sorted(df.N.unique()):
            m = (df.N == N).to_numpy()
            big = m & (df.r >= r_min_claim).to_numpy()
            i = np.argmax(np.where(m, np.abs(err), -1.0))
            rows.append({"mu_convention": conv, "N": int(N),
                         "max_err_mu_closed_pct": float(np.abs(err[m]).max()),
                         "at_r": int(df.r.iloc[i]),
                         f"max_err_mu_closed_r_ge_{r_min_claim}_pct":
                             float(np.abs(err[big]).max()) if big.any() else float("nan"),
                         "max_err_eq5_pct": float(np.abs(err5[m]).max())})
    return pd.DataFrame(rows)

