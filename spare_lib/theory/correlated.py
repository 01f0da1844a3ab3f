"""Correlated failures (beyond the paper): μ_q under failure domains, its approximation, r* and S̄.

Model (:mod:`spare_lib.stacking.domains`): groups sit in domains of D consecutive groups,
n_D = ⌈N/D⌉ domains; each failure *event* is, with probability q, a domain event (every live
group of a uniformly chosen domain with a live group dies) and otherwise kills one uniformly
chosen live group. μ_q(N, r, D, q) is the mean index of the event that first wipes out a type.

Approximation (:func:`mu_correlated`)
-------------------------------------
μ_q = Σ_{e≥0} P(T_q > e). After e events we replace the dead set by a product measure with the
same means, as :mod:`spare_lib.theory.finite` does at q = 0 (where Σ_k P_{k/N} is a Riemann sum
of the exact μ = (N + 1)∫P_x dx):

- every domain is killed independently with probability y_e = e·q/n_D (the mean number of domain
  events over n_D);
- in the other domains every group is dead independently with probability x_e. A single failure
  kills one of the live groups, all in unkilled domains, so it raises their dead fraction by
  1/(D·(n_D − j)) with j domains killed so far, and a domain event leaves that fraction
  unchanged (the removed domain had the average fraction). Hence, in the mean,
  x_e = (1 − q)/D · Σ_{i<e} 1/(n_D − i·q). Singles that hit a domain killed later are thereby
  wasted, as in the real process.

Given the killed set K, type t is wiped with probability x^{h_t(K)}, h_t the number of its
holders in unkilled domains; types are treated as independent given K (at q = 0 this is the
independence approximation, 0.7 % below Monte Carlo at N = 600, r = 8; the Bethe correction of
:func:`~spare_lib.theory.finite.bethe_log_survival` is added with weight (1 − y)^r, the share of
types none of whose domains is killed). The average over K is *not* factorised over types: types
whose holders share domains are strongly correlated (the point of domain-aware layouts). For a
cyclic layout, type t = dD + ρ has its holders in domains d − δ, δ = 0..w, with multiplicities
m_ρ(δ) that depend only on ρ = t mod D. Scanning the domains with a state holding the kill bits
of the last w + 1 domains gives a transfer matrix T(x, y) of size 2^{w+1} whose largest
eigenvalue λ gives P(no wipe-out) ≈ λ^{N/D} (the trace of T^{n_D} when D divides N, up to the
other eigenvalues). w = ⌊(D − 1 + o_{r−1})/D⌋: 4 for the r = 8 ruler at D = 10, 10 for the
domain-aware layout. The consecutive layout is exact at the group level (a type is wiped iff r
consecutive groups are dead): a run-length chain of size r, traced exactly around the cycle.

The killed-domain fraction is y_e = e·q/n_D (mean count), except when one domain event can
wipe out a type (all r holders in one domain: the consecutive layout with D ≥ r), where y_e
matches the probability of no domain event, (1 − y_e)^{n_D} = (1 − q)^e.

Measured errors are in ``docs/correlated_failures.md`` (:func:`mu_q_table`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from spare_lib._util.rng import SeedLike, as_seed_sequence
from spare_lib._util.validate import check_int, check_positive
from spare_lib.stacking.domains import check_domain_args, domain_aware_layout, is_sidon_mod
from spare_lib.stacking.layout import Layout, consecutive_layout, random_offsets_layout, ruler_layout
from spare_lib.stacking.wipeout import failures_to_wipeout
from spare_lib.theory.finite import M_PAPER, T_R_PAPER, T_S_PAPER, bethe_log_survival, mu_finite
from spare_lib.theory.ttt import availability_opt

#: Largest domain window w handled by the transfer matrix (2^(w+1) states).
MAX_WINDOW = 12

LAYOUT_KINDS = ("ruler", "domain-aware", "consecutive")


def make_correlated_layout(N: int, r: int, domain_size: int, layout: str | Layout) -> Layout:
    """The Layout for ``layout`` in {'ruler', 'domain-aware', 'consecutive'} (or pass one through)."""
    if isinstance(layout, Layout):
        if layout.N != N or layout.r != r:
            raise ValueError(f"layout has N={layout.N}, r={layout.r}, but N={N}, r={r} were given")
        return layout
    if layout == "ruler":
        return ruler_layout(N, r)
    if layout == "domain-aware":
        return domain_aware_layout(N, r, domain_size)
    if layout == "consecutive":
        return consecutive_layout(N, r)
    raise ValueError(f"layout must be one of {LAYOUT_KINDS} or a Layout, got {layout!r}")


def _schedules(N: int, D: int, q: float, e: np.ndarray,
               match_no_kill: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Mean-field (x_e, y_e): dead fraction in unkilled domains and killed-domain fraction.

    y_e = e·q/n_D matches the mean number of killed domains. With ``match_no_kill`` it matches
    instead the probability that no domain event happened, (1 − y)^{n_D} = (1 − q)^e: the right
    choice when a single domain event wipes out a type (consecutive layout with D ≥ r), where
    μ_q ≈ 1/q is the mean wait for the first domain event.
    """
    n_dom = -(-N // D)
    i = np.arange(int(e.max()) + 1, dtype=float)
    inc = (1.0 - q) / (D * np.maximum(n_dom - i * q, 1e-12))
    x = np.minimum(np.concatenate([[0.0], np.cumsum(inc)])[e], 1.0)
    if match_no_kill:
        y = 1.0 - (1.0 - q) ** (e / n_dom)
    else:
        y = np.minimum(e * q / n_dom, 1.0)
    return x, y


def _domain_classes(layout: Layout, D: int) -> np.ndarray:
    """m[ρ, δ]: holders of type t ≡ ρ (mod D) in domain ⌊t/D⌋ − δ (periodic in ρ)."""
    offs = np.asarray(layout.offsets, dtype=np.int64)
    rel = (np.arange(D)[:, None] - offs[None, :]) // D  # ≤ 0
    w = int(-rel.min())
    if w > MAX_WINDOW:
        raise ValueError(f"the layout spans {w + 1} domains of D={D} (offsets up to {offs.max()}); "
                         f"the transfer matrix handles at most {MAX_WINDOW + 1}: use Monte Carlo "
                         f"(failures_to_wipeout with domain_size, domain_prob)")
    m = np.zeros((D, w + 1), dtype=np.int64)
    for rho in range(D):
        np.add.at(m[rho], -rel[rho], 1)
    return m


def _log_lambda(m: np.ndarray, x: np.ndarray, y: np.ndarray, iters: int = 150) -> np.ndarray:
    """log of the largest eigenvalue of the domain transfer matrix, for each (x, y) pair.

    State s (w + 1 bits): bit δ set when domain d − δ is killed. Entering domain d multiplies by
    y or 1 − y and by Π_ρ (1 − x^{h_ρ(s)}), h_ρ(s) = Σ_{δ unkilled} m_ρ(δ); s' = (s<<1 | b) has
    the two predecessors (s' >> 1) and (s' >> 1) | 2^w. Power iteration, vectorised over pairs.
    """
    W = m.shape[1]
    S = 1 << W
    bits = (np.arange(S)[:, None] >> np.arange(W)[None, :]) & 1
    h = (1 - bits) @ m.T  # (S, D)
    with np.errstate(divide="ignore", invalid="ignore"):
        lx = np.log(x)[:, None, None]
        log_wipe = np.where(h[None] == 0, 0.0, h[None] * lx)  # log x^h, x^0 = 1 (wiped)
        logw = np.sum(np.log1p(-np.exp(np.minimum(log_wipe, 0.0)).clip(max=1.0)), axis=2)
        logw = logw + np.where(bits[None, :, 0] == 1, np.log(y)[:, None], np.log1p(-y)[:, None])
    wt = np.exp(logw)
    p0 = np.arange(S) >> 1
    p1 = p0 | (1 << (W - 1))
    v = np.full((x.size, S), 1.0 / S)
    out = np.full(x.size, -np.inf)
    for _ in range(iters):
        v = wt * (v[:, p0] + v[:, p1])
        tot = v.sum(axis=1)
        good = tot > 0
        out = np.where(good, np.log(np.where(good, tot, 1.0)), -np.inf)
        v = v / np.where(good, tot, 1.0)[:, None]
    return out


def _log_survival_consecutive(N: int, r: int, D: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Exact log P(no run of r dead groups on the cycle) under the product measure (x, y).

    Run-length chain (state = trailing dead run, 0..r−1); a domain of size L is killed (run += L)
    with probability y, else its L groups die independently with probability x. The cycle
    probability is the trace of the product of the n_D domain matrices (the last of size
    N − D(n_D − 1)).
    """
    G = x.size

    def domain_matrix(L: int) -> np.ndarray:
        grp = np.zeros((G, r, r))
        grp[:, :, 0] = (1.0 - x)[:, None]
        for a in range(r - 1):
            grp[:, a, a + 1] = x
        alive = np.linalg.matrix_power(grp, L)
        kill = np.zeros((G, r, r))
        for a in range(r - L):
            kill[:, a, a + L] = 1.0
        return (1.0 - y)[:, None, None] * alive + y[:, None, None] * kill

    n_dom = -(-N // D)
    last = N - D * (n_dom - 1)
    full = np.linalg.matrix_power(domain_matrix(D), n_dom - 1) if n_dom > 1 else np.eye(r)[None]
    prod = full @ domain_matrix(last) if last != D or n_dom == 1 else full @ domain_matrix(D)
    tr = np.trace(prod, axis1=1, axis2=2)
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(tr, 0.0))


def survival_correlated(N: int, r: int, D: int, q: float, layout: str | Layout = "ruler",
                        e_max: int | None = None) -> np.ndarray:
    """Approximate P(T_q > e), e = 0..e_max (default N): no wipe-out after e failure events.

    See the module docstring for the method. Non-increasing, starts at 1.
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    D, q = check_domain_args(N, D, q)
    lay = make_correlated_layout(N, r, D, layout)
    e_max = N if e_max is None else check_int("e_max", e_max, lo=0)
    one_kill_wipes = bool(np.any(np.ptp(lay.holders // D, axis=1) == 0)) and r > 1
    x_all, y_all = _schedules(N, D, q, np.arange(e_max + 1), match_no_kill=one_kill_wipes)
    consecutive = lay.offsets == tuple(range(r))
    m = None if consecutive else _domain_classes(lay, D)
    sidon = r >= 2 and is_sidon_mod(lay.offsets, N)
    parts = []
    for lo in range(0, e_max + 1, 64):  # blocks of events, until survival is negligible
        x, y = x_all[lo:lo + 64], y_all[lo:lo + 64]
        if consecutive:
            logs = _log_survival_consecutive(N, r, D, x, y)
        else:
            logs = (N / D) * _log_lambda(m, x, y)
            if sidon:  # Bethe correction for holders shared by two types
                with np.errstate(divide="ignore", invalid="ignore"):
                    corr = N * (bethe_log_survival(np.minimum(x, 1.0), r) - np.log1p(-(x**r)))
                logs = logs + (1.0 - y) ** r * np.where(np.isfinite(corr), corr, 0.0)
        parts.append(logs)
        if logs[-1] < -40.0:
            break
    logs = np.concatenate(parts)
    logs = np.concatenate([logs, np.full(e_max + 1 - logs.size, -np.inf)])
    surv = np.exp(np.minimum(logs, 0.0))
    if q == 0.0 or D == 1:
        surv[: min(r, surv.size)] = 1.0  # fewer than r dead groups cannot wipe out a type
    surv[0] = 1.0
    return np.minimum.accumulate(surv)


def mu_correlated(N: int, r: int, D: int, q: float, layout: str | Layout = "ruler") -> float:
    """Approximate mean failure events to wipe-out μ_q(N, r, D, q).

    μ_q ≈ (N + 1)/N · Σ_e P(T_q > e) with :func:`survival_correlated` (the factor is the
    Riemann-sum correction of the exact q = 0 identity μ = (N + 1)∫P_x dx). With q = 0 or D = 1
    the law is that of independent failures and :func:`~spare_lib.theory.finite.mu_finite` is
    returned when it applies (consecutive layout, or two types sharing at most one holder).

    Parameters
    ----------
    N, r : int
        Groups and redundancy.
    D : int
        Domain size, 1 ≤ D ≤ N.
    q : float
        Probability that an event is a domain event, in [0, 1].
    layout : {'ruler', 'domain-aware', 'consecutive'} or Layout
        A cyclic layout whose holders of a type span at most 13 domains (else ValueError).

    Examples
    --------
    >>> round(mu_correlated(600, 8, 10, 0.2, "domain-aware") / mu_correlated(600, 8, 10, 0.2), 2)
    1.45
    """
    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    D, q = check_domain_args(N, D, q)
    lay = make_correlated_layout(N, r, D, layout)
    if q == 0.0 or D == 1:  # independent failures: the finite-N form (exact / Bethe) applies
        try:
            return float(mu_finite(N, r, lay))
        except ValueError:
            pass
    return float((N + 1) / N * survival_correlated(N, r, D, q, lay).sum())


def _mc(lay: Layout, D: int, q: float, n_trials: int, seed: SeedLike) -> tuple[float, float]:
    t = failures_to_wipeout(lay, n_trials, seed, domain_size=D, domain_prob=q)
    return float(t.mean()), float(t.std(ddof=1) / np.sqrt(t.size))


def mu_q_table(configs: tuple[tuple[int, int, int], ...] = ((600, 8, 10), (200, 6, 8)),
               qs: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2, 0.3),
               layouts: tuple[str, ...] = LAYOUT_KINDS, n_trials: int = 20_000,
               seed: int = 2026) -> pd.DataFrame:
    """Monte Carlo μ_q against :func:`mu_correlated` on a grid.

    Returns
    -------
    DataFrame
        Columns N, r, D, q, layout, mc_mean, mc_se, approx, rel_error (= approx/mc_mean − 1).
        Each row has its own stream ``SeedSequence([seed, N, r, D, round(1000 q), layout#])``.
    """
    rows = []
    for N, r, D in configs:
        for li, kind in enumerate(layouts):
            lay = make_correlated_layout(N, r, D, kind)
            for q in qs:
                ss = np.random.SeedSequence([seed, N, r, D, int(round(1000 * q)), li])
                mean, se = _mc(lay, D, q, n_trials, ss)
                approx = mu_correlated(N, r, D, q, lay)
                rows.append(dict(N=N, r=r, D=D, q=q, layout=kind, mc_mean=mean, mc_se=se,
                                 approx=approx, rel_error=approx / mean - 1.0))
    return pd.DataFrame(rows)


def overhead_correlated(N: int, D: int, q: float, mu_q: float) -> float:
    """Eq. 5 with failure events: S̄ ≈ (1/⌊μ_q⌋) Σ_{e<⌊μ_q⌋} c(k_e), k_e = ⌊e·(1 − q + qD)⌋.

    k_e is the mean number of dead groups after e events (a domain event kills ≈ D groups);
    c(k) = ⌈N/(N − k)⌉ as in the paper.
    """
    E = max(1, int(np.floor(mu_q)))
    k = np.minimum(np.floor(np.arange(E) * (1.0 - q + q * D)), N - 1).astype(np.int64)
    return float(np.mean(-(-N // (N - k))))


@dataclass(frozen=True)
class CorrelatedRStar:
    """Result of :func:`r_star_correlated`.

    Attributes
    ----------
    r_star : int
        argmin_r J_q(r) = S̄_q(r) / A*(μ_q(r)·m) under correlated failures.
    r_star_independent : int
        The same argmin at q = 0 (the paper's optimum with this layout and these formulas).
    r_restore : int or None
        Least r with μ_q(r) ≥ μ_0(r_star_independent): the redundancy that restores the
        independent-failure endurance (None if no r in range does).
    table : DataFrame
        Per r: mu_q, mu_0, s_bar_q, s_bar_0, J_q, J_0 (NaN where the layout does not exist).
    """

    r_star: int
    r_star_independent: int
    r_restore: int | None
    table: pd.DataFrame


def r_star_correlated(N: int, D: int, q: float, layout: str = "domain-aware", *,
                      m: float = M_PAPER, T_s: float = T_S_PAPER, T_r: float = T_R_PAPER,
                      r_values: tuple[int, ...] | None = None, n_trials: int = 4000,
                      seed: int = 2026) -> CorrelatedRStar:
    """Optimal redundancy under correlated failures, J(r) = S̄ / A*(μ_q·m) (Eq. 7 with events).

    Events arrive at the system rate 1/m, so the mean time between wipe-outs is T_f = μ_q·m.
    μ_q comes from the (exact) Monte Carlo with ``n_trials`` per r, because large r exceed the
    window of :func:`mu_correlated`; S̄ from :func:`overhead_correlated`.

    Parameters
    ----------
    N, D : int
        Groups and domain size.
    q : float
        Domain-event probability.
    layout : {'ruler', 'domain-aware', 'consecutive'}
        Layout family; r for which it does not exist are skipped.
    m, T_s, T_r : float
        System MTBF, checkpoint write and restart time in seconds (paper preset by default).
    r_values : tuple of int or None
        Candidate r (default 2..20, capped at N).
    """
    N = check_int("N", N, lo=2)
    D, q = check_domain_args(N, D, q)
    check_positive("m", m)
    r_values = tuple(range(2, min(N, 20) + 1)) if r_values is None else tuple(r_values)
    root = as_seed_sequence(seed)
    rows = []
    for r in r_values:
        try:
            lay = make_correlated_layout(N, r, D, layout)
        except ValueError:
            rows.append(dict(r=r))
            continue
        mu_q, _ = _mc(lay, D, q, n_trials, np.random.SeedSequence([root.entropy, r, 1]))
        mu_0, _ = _mc(lay, D, 0.0, n_trials, np.random.SeedSequence([root.entropy, r, 0]))
        s_q, s_0 = overhead_correlated(N, D, q, mu_q), overhead_correlated(N, D, 0.0, mu_0)
        rows.append(dict(r=r, mu_q=mu_q, mu_0=mu_0, s_bar_q=s_q, s_bar_0=s_0,
                         J_q=s_q / float(availability_opt(T_s, mu_q * m, T_r)),
                         J_0=s_0 / float(availability_opt(T_s, mu_0 * m, T_r))))
    tab = pd.DataFrame(rows, columns=["r", "mu_q", "mu_0", "s_bar_q", "s_bar_0", "J_q", "J_0"])
    if tab["J_q"].isna().all():
        raise ValueError(f"layout {layout!r} exists for none of r={r_values} at N={N}, D={D}")
    r_q = int(tab.loc[tab["J_q"].idxmin(), "r"])
    r_0 = int(tab.loc[tab["J_0"].idxmin(), "r"])
    target = float(tab.loc[tab["r"] == r_0, "mu_0"].iloc[0])
    ok = tab[tab["mu_q"] >= target]
    r_restore = int(ok["r"].min()) if len(ok) else None
    return CorrelatedRStar(r_star=r_q, r_star_independent=r_0, r_restore=r_restore, table=tab)


def layout_domain_comparison(configs: tuple[tuple[int, int, int], ...] = ((600, 8, 10), (200, 6, 8)),
                             qs: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2, 0.3),
                             n_trials: int = 20_000, s_bar_trials: int = 300,
                             seed: int = 2026) -> pd.DataFrame:
    """μ_q against q for the ruler, consecutive, domain-aware and random-offset layouts, and S̄.

    Returns
    -------
    DataFrame
        One row per (N, r, D, layout, q): mu_q, mu_q_se (Monte Carlo), approx
        (:func:`mu_correlated`, NaN for the random layout), gain_vs_ruler (μ_q / μ_q(ruler) − 1),
        and s_bar, s_bar_se: the stack overhead S̄ at q = 0 from the exact-S* Monte Carlo
        :func:`spare_lib.theory.montecarlo.overhead_mc` (the price of the layout without domain
        events; the same on every q row).
    """
    from spare_lib.theory.montecarlo import overhead_mc

    rows = []
    for N, r, D in configs:
        lays = {"ruler": ruler_layout(N, r), "consecutive": consecutive_layout(N, r),
                "domain-aware": domain_aware_layout(N, r, D),
                "random": random_offsets_layout(N, r, seed=np.random.SeedSequence([seed, N, r, D]))}
        ref: dict[float, float] = {}
        for li, (kind, lay) in enumerate(lays.items()):
            ov = overhead_mc(lay, s_bar_trials, seed=np.random.SeedSequence([seed, N, r, D, li, 7]))
            for q in qs:
                ss = np.random.SeedSequence([seed, N, r, D, int(round(1000 * q)), li])
                mean, se = _mc(lay, D, q, n_trials, ss)
                ref.setdefault(q, mean)
                try:
                    approx = mu_correlated(N, r, D, q, lay)
                except ValueError:
                    approx = float("nan")
                rows.append(dict(N=N, r=r, D=D, layout=kind, offsets=lay.offsets, q=q, mu_q=mean,
                                 mu_q_se=se, approx=approx, gain_vs_ruler=mean / ref[q] - 1.0,
                                 s_bar=float(ov.s_bar), s_bar_se=float(ov.s_bar_se)))
    return pd.DataFrame(rows)
