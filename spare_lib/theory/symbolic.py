"""Sympy derivations of the SPARe theory (SPEC §7), as objects the notebooks show and tests check.

Each ``derive_*`` function returns a :class:`Derivation`: an ordered list of :class:`Step`
(one equation each, with a sentence saying what was done) and a list of :class:`Check`
(sympy expressions that must simplify to zero, or booleans computed exactly/numerically).
``Derivation.verify()`` evaluates every check; ``tests/test_symbolic.py`` asserts all of them and
``notebooks/30_theory.ipynb`` displays the steps and asserts them again.

- :func:`derive_mu`: μ(N, r), the paper's route (per-type wipe probability → independence →
  integral → Γ form) and the exact Poissonisation identity behind ``theory.mu_finite``;
- :func:`derive_r_star`: μ(N, r*) = N/2 ⇒ r* ≈ log2 N + γ/ln 2 (γ/ln 2 = 0.8327…);
- :func:`derive_checkpoint_period`: A(T_c) and its optimum T_c* = T_s + sqrt(T_s² + 2T_s(T_f+T_r));
- :func:`derive_ttt`: J(r) = S̄/A*(μ·m) (Eq. 7);
- :func:`derive_replication`: disjoint replica sets, μ_rep exact, 4^b/C(2b, b) for pairs.

Example
-------
>>> d = derive_checkpoint_period()
>>> all(d.verify().values())
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import sympy as sp

# Symbols (positive reals unless stated): the paper's notation.
N, k, r, x, u, b = sp.symbols("N k r x u b", positive=True)
T_s, T_f, T_r, T_c, m = sp.symbols("T_s T_f T_r T_c m", positive=True)
mu, S_bar, eps = sp.symbols("mu Sbar epsilon", positive=True)


@dataclass(frozen=True)
class Step:
    """One step of a derivation: an equation and what was done to get it."""

    label: str
    eq: sp.Eq
    note: str = ""

    def _repr_latex_(self) -> str:
        return f"$\\text{{{self.label}: }}\\; {sp.latex(self.eq)}$"


@dataclass(frozen=True)
class Check:
    """A machine check of a step: ``expr`` must simplify to 0 (or ``test()`` must be True)."""

    label: str
    expr: sp.Expr | None = None
    test: Callable[[], bool] | None = None

    def passed(self) -> bool:
        if self.test is not None:
            return bool(self.test())
        return bool(sp.simplify(self.expr) == 0)


@dataclass(frozen=True)
class Derivation:
    """An ordered derivation: steps to display, checks to assert."""

    title: str
    steps: tuple[Step, ...]
    checks: tuple[Check, ...] = field(default=())
    result: sp.Expr | None = None

    def __getitem__(self, label: str) -> Step:
        for s in self.steps:
            if s.label == label:
                return s
        raise KeyError(f"no step labelled {label!r}; steps: {[s.label for s in self.steps]}")

    def verify(self) -> dict[str, bool]:
        """Evaluate every check: label -> True/False."""
        return {c.label: c.passed() for c in self.checks}

    def markdown(self) -> str:
        """The steps as Markdown with LaTeX (for ``IPython.display.Markdown``)."""
        lines = [f"**{self.title}**", ""]
        for i, s in enumerate(self.steps, 1):
            note = f" — {s.note}" if s.note else ""
            lines.append(f"{i}. *{s.label}*{note}\n\n   $$ {sp.latex(s.eq)} $$")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.markdown()


# ---------------------------------------------------------------------------------------------
# (a) μ(N, r)
# ---------------------------------------------------------------------------------------------

def _mu_closed_expr() -> sp.Expr:
    return sp.gamma(1 + 1 / r) * N ** (1 - 1 / r)


def _mu_poisson_concrete(bern: sp.Expr) -> bool:
    """∫ C(N,k) x^k (1−x)^(N−k) dx = 1/(N+1) at N = 6, every k (:func:`derive_mu`)."""
    n = 6
    return all(sp.integrate(bern.subs({N: n, k: kk}), (x, 0, 1)) == sp.Rational(1, n + 1)
               for kk in range(n + 1))


def _mu_indep_concrete(indep_exact: sp.Expr) -> bool:
    """(N+1)∫(1−x^r)^N dx = the Γ-ratio form at (r, N) = (2, 3), (3, 4) (:func:`derive_mu`)."""
    for rr, nn in ((2, 3), (3, 4)):
        lhs = (nn + 1) * sp.integrate((1 - x**rr) ** nn, (x, 0, 1))
        if sp.simplify(lhs - indep_exact.subs({N: nn, r: rr})) != 0:
            return False
    return True


def _mu_indep_asymptotic() -> bool:
    """Γ(N+2)/Γ(N+1+1/r) ~ N^(1−1/r) at N = 1e12, r = 2, 3, 10 (:func:`derive_mu`)."""
    import mpmath

    with mpmath.workdps(60):
        for rr in (2, 3, 10):
            n = mpmath.mpf(10) ** 12
            a = mpmath.mpf(1) / rr
            ratio = mpmath.exp(mpmath.loggamma(n + 2) - mpmath.loggamma(n + 1 + a)
                               - (1 - a) * mpmath.log(n))
            if abs(ratio - 1) > 1e-9:
                return False
    return True


def _mu_integral_concrete(survive: sp.Expr, closed: sp.Expr) -> bool:
    """∫_0^∞ exp(−k^r/N^(r−1)) dk = the Γ form at r = 2, 3, 4 (:func:`derive_mu`)."""
    for rr in (2, 3, 4):
        got = sp.integrate(survive.subs(r, rr), (k, 0, sp.oo))
        if sp.simplify(got - closed.subs(r, rr)) != 0:
            return False
    return True


def derive_mu() -> Derivation:
    """μ(N, r): from the per-type wipe probability to the Γ form, and the exact identity.

    Returns
    -------
    Derivation
        ``result`` is Γ(1 + 1/r) N^(1 − 1/r).
    """
    P0 = sp.Function("P_0")
    P = sp.Function("P")
    q_exact = sp.binomial(N - r, k - r) / sp.binomial(N, k)
    q_ff = sp.ff(k, r) / sp.ff(N, r)
    survive = sp.exp(-(k**r) / N ** (r - 1))
    gamma_int = N ** (1 - 1 / r) / r * sp.Integral(u ** (1 / r - 1) * sp.exp(-u), (u, 0, sp.oo))
    closed = _mu_closed_expr()
    bern = sp.binomial(N, k) * x**k * (1 - x) ** (N - k)
    beta_form = sp.binomial(N, k) * sp.gamma(k + 1) * sp.gamma(N - k + 1) / sp.gamma(N + 2)
    indep_exact = (N + 1) * sp.gamma(1 + 1 / r) * sp.gamma(N + 1) / sp.gamma(N + 1 + 1 / r)
    star = sp.log(1 - x + x * (1 - x ** (r - 1)) ** r) - (r - 1) * sp.log(1 - x**r)

    steps = (
        Step("tail sum", sp.Eq(mu, sp.Sum(P0(k), (k, 0, N))),
             "K = failures to wipe-out; μ = E[K] = Σ_k P(K > k), P0(k) = P(no wipe-out after k)"),
        Step("per-type wipe probability (exact)", sp.Eq(sp.Symbol("q_k"), q_exact),
             "the k dead groups are a uniform k-subset; all r holders of a type are among them"),
        Step("falling factorials", sp.Eq(q_exact, q_ff), "C(N−r, k−r)/C(N, k) = k^(r)/N^(r)"),
        Step("large N", sp.Eq(sp.Limit(sp.ff(x * N, r) / sp.ff(N, r), N, sp.oo), x**r),
             "with k = xN the per-type probability tends to (k/N)^r (the paper's)"),
        Step("independence", sp.Eq(P0(k), (1 - (k / N) ** r) ** N),
             "N types, wipe events treated as independent"),
        Step("Poisson", sp.Eq(P0(k), survive), "(1 − p)^N ≈ exp(−Np) and N(k/N)^r = k^r/N^(r−1)"),
        Step("sum as integral", sp.Eq(mu, sp.Integral(survive, (k, 0, sp.oo))),
             "Σ_k f(k) ≈ ∫ f (Euler–Maclaurin adds f(0)/2 = 1/2)"),
        Step("substitute u = k^r/N^(r−1)", sp.Eq(sp.Integral(survive, (k, 0, sp.oo)), gamma_int),
             "dk = N^(1−1/r) u^(1/r−1) du / r"),
        Step("Γ form (paper)", sp.Eq(mu, sp.gamma(1 / r) / r * N ** (1 - 1 / r)),
             "∫_0^∞ u^(1/r−1) e^(−u) du = Γ(1/r)"),
        Step("Γ(1/r)/r = Γ(1+1/r)", sp.Eq(sp.gamma(1 / r) / r * N ** (1 - 1 / r), closed),
             "SPEC §7 closed form, theory.mu_closed"),
        Step("Poissonisation weight", sp.Eq(sp.Integral(bern, (x, 0, 1)), 1 / (N + 1)),
             "Beta integral: C(N,k) B(k+1, N−k+1) = 1/(N+1) for every k"),
        Step("exact identity", sp.Eq(mu, (N + 1) * sp.Integral(P(x), (x, 0, 1))),
             "P_x = Σ_k C(N,k) x^k (1−x)^(N−k) P0(k): groups die independently w.p. x"),
        Step("independent types, exact integral",
             sp.Eq((N + 1) * sp.Integral((1 - x**r) ** N, (x, 0, 1)), indep_exact),
             "u = x^r gives a Beta function; → Γ(1+1/r) N^(1−1/r) as N → ∞"),
        Step("star/Bethe correction", sp.Eq(sp.log(P(x)) / N, star),
             "types sharing one holder (each group holds r types); with the Bethe cavity "
             "message u(x) in place of x this is theory.bethe_log_survival"),
    )

    checks = (
        Check("C(N−r,k−r)/C(N,k) = k^(r)/N^(r)", sp.gammasimp(q_exact - q_ff)),
        Check("k^(r)/N^(r) → x^r (r = 3, k = xN)",
              sp.limit(sp.ff(x * N, 3) / sp.ff(N, 3), N, sp.oo) - x**3),
        Check("N (k/N)^r = k^r/N^(r−1)", N * (k / N) ** r - k**r / N ** (r - 1)),
        Check("∫ u^(1/r−1) e^(−u) = Γ(1/r)",
              sp.integrate(u ** (1 / r - 1) * sp.exp(-u), (u, 0, sp.oo), conds="none")
              - sp.gamma(1 / r)),
        Check("Γ(1/r)/r = Γ(1 + 1/r)", sp.gammasimp(sp.gamma(1 / r) / r - sp.gamma(1 + 1 / r))),
        Check("∫_0^∞ exp(−k^r/N^(r−1)) dk = Γ form (r = 2, 3, 4)",
              test=partial(_mu_integral_concrete, survive, closed)),
        Check("C(N,k) B(k+1, N−k+1) = 1/(N+1)", sp.gammasimp(beta_form - 1 / (N + 1))),
        Check("∫ C(N,k) x^k (1−x)^(N−k) dx = 1/(N+1) (N = 6, all k)",
              test=partial(_mu_poisson_concrete, bern)),
        Check("(N+1)∫(1−x^r)^N dx = Γ form with Γ(N+2)/Γ(N+1+1/r) (r,N = 2,3 and 3,4)",
              test=partial(_mu_indep_concrete, indep_exact)),
        Check("Γ(N+2)/Γ(N+1+1/r) ~ N^(1−1/r) (N = 1e12, r = 2, 3, 10)", test=_mu_indep_asymptotic),
        Check("star expansion: −x³ + 3x⁵ + O(x⁶) at r = 3 (pair term r(r−1)/2 · x^(2r−1))",
              sp.series(star.subs(r, 3), x, 0, 6).removeO() - (-(x**3) + 3 * x**5)),
    )
    return Derivation("μ(N, r): mean failures to wipe-out", steps, checks, result=closed)


# ---------------------------------------------------------------------------------------------
# (b) r*
# ---------------------------------------------------------------------------------------------

def derive_r_star() -> Derivation:
    """r* from μ(N, r*) = N/2: r* ≈ log2 N + γ/ln 2 (γ/ln 2 = 0.8327…).

    Returns
    -------
    Derivation
        ``result`` is log2 N + γ/ln 2 (the closed form takes its floor).
    """
    closed = _mu_closed_expr()
    cond = sp.Eq(closed, N / 2)
    logged = sp.Eq(sp.loggamma(1 + 1 / r) - sp.log(N) / r, -sp.log(2))
    lin = sp.Eq(-sp.EulerGamma / r - sp.log(N) / r, -sp.log(2))
    sol = (sp.log(N) + sp.EulerGamma) / sp.log(2)
    result = sp.log(N, 2) + sp.EulerGamma / sp.log(2)
    steps = (
        Step("criterion", cond, "the paper's choice: survive about N/2 failures per restart, so "
                                "c(k) ≤ 2 over almost the whole cycle"),
        Step("divide by N, take logs", logged, "log Γ(1+1/r) + (1 − 1/r) log N − log N = −log 2"),
        Step("series of log Γ", sp.Eq(sp.loggamma(1 + eps), -sp.EulerGamma * eps + sp.O(eps**2)),
             "ε = 1/r small; γ = 0.5772… (Euler–Mascheroni)"),
        Step("linearised", lin, "keep the first order in 1/r"),
        Step("solve for r", sp.Eq(r, sol), ""),
        Step("in bits", sp.Eq(r, result), "γ/ln 2 = 0.8327462…; r* = ⌊log2 N + 0.8327⌋"),
    )

    def _solve_check() -> bool:
        roots = sp.solve(lin, r)
        return len(roots) == 1 and sp.simplify(roots[0] - sol) == 0

    def _values() -> bool:
        return [int(sp.floor(result.subs(N, n))) for n in (200, 600, 1000)] == [8, 10, 10]

    checks = (
        Check("log of the criterion: log(μ/N) = log Γ(1+1/r) − (log N)/r",
              sp.expand_log(sp.log(closed / N), force=True)
              - (sp.log(sp.gamma(1 + 1 / r)) - sp.log(N) / r)),
        Check("log Γ(1+ε) = −γ ε + O(ε²)",
              sp.series(sp.loggamma(1 + eps), eps, 0, 2).removeO() + sp.EulerGamma * eps),
        Check("solution of the linearised equation", test=_solve_check),
        Check("(ln N + γ)/ln 2 = log2 N + γ/ln 2", sol - result),
        Check("γ/ln 2 = 0.8327462 (7 digits)",
              test=lambda: abs(float(sp.N(sp.EulerGamma / sp.log(2), 20)) - 0.8327462) < 5e-8),
        Check("⌊log2 N + γ/ln 2⌋ = 8, 10, 10 for N = 200, 600, 1000", test=_values),
    )
    return Derivation("r*: optimal redundancy from μ(N, r*) = N/2", steps, checks, result=result)


# ---------------------------------------------------------------------------------------------
# (c) availability and the optimal checkpoint period
# ---------------------------------------------------------------------------------------------

def availability_expr() -> sp.Expr:
    """A(T_c) = (1 − T_s/T_c) · T_f / (T_f + T_r + T_c/2) (Eq. 2 model, SPEC §7)."""
    return (1 - T_s / T_c) * T_f / (T_f + T_r + T_c / 2)


def checkpoint_period_expr() -> sp.Expr:
    """T_c* = T_s + sqrt(T_s² + 2 T_s (T_f + T_r))."""
    return T_s + sp.sqrt(T_s**2 + 2 * T_s * (T_f + T_r))


def derive_checkpoint_period() -> Derivation:
    """A(T_c), dA/dT_c = 0 and the optimum T_c* = T_s + sqrt(T_s² + 2T_s(T_f+T_r)).

    Returns
    -------
    Derivation
        ``result`` is T_c*.
    """
    A = availability_expr()
    Tcs = checkpoint_period_expr()
    a = T_f + T_r
    quad = T_c**2 - 2 * T_s * T_c - 2 * T_s * a
    dA_form = -T_f * quad / (2 * T_c**2 * (a + T_c / 2) ** 2)
    A_star = sp.simplify(A.subs(T_c, Tcs))
    steps = (
        Step("model", sp.Eq(sp.Function("A")(T_c), A),
             "fraction T_s/T_c of up time writes checkpoints; each restart cycle (mean T_f) "
             "costs T_r plus half a period of lost work"),
        Step("derivative", sp.Eq(sp.Derivative(sp.Function("A")(T_c), T_c), dA_form), ""),
        Step("stationarity", sp.Eq(quad, 0), "the numerator must vanish"),
        Step("positive root", sp.Eq(sp.Symbol("T_c^*"), Tcs), "the other root is negative"),
        Step("optimal availability", sp.Eq(sp.Symbol("A^*"), A_star), "A*(T_f) = A(T_c*)"),
        Step("Young limit", sp.Eq(sp.Limit(Tcs / sp.sqrt(2 * T_s * a), T_s, 0), 1),
             "T_s ≪ T_f: T_c* ≈ sqrt(2 T_s (T_f + T_r)) (Young 1974)"),
    )
    other = T_s - sp.sqrt(T_s**2 + 2 * T_s * a)

    def _max_check() -> bool:
        vals = {T_s: 58.8, T_f: 30000.0, T_r: 3600.0}
        d2 = sp.diff(A, T_c, 2).subs(T_c, Tcs).subs(vals)
        return float(d2) < 0

    checks = (
        Check("dA/dT_c = −T_f (T_c² − 2T_sT_c − 2T_s(T_f+T_r)) / (2T_c²(T_f+T_r+T_c/2)²)",
              sp.diff(A, T_c) - dA_form),
        Check("dA/dT_c(T_c*) = 0", sp.diff(A, T_c).subs(T_c, Tcs)),
        Check("T_c* is a root of the quadratic", sp.expand(quad.subs(T_c, Tcs))),
        Check("the other root is negative", test=lambda: bool(sp.ask(sp.Q.negative(other)))
              or float(other.subs({T_s: 1, T_f: 1, T_r: 0})) < 0),
        Check("maximum: d²A/dT_c² < 0 at T_c* (paper preset values)", test=_max_check),
        Check("Young limit T_c*/sqrt(2T_s(T_f+T_r)) → 1",
              sp.simplify(sp.limit(Tcs / sp.sqrt(2 * T_s * a), T_s, 0)) - 1),
    )
    return Derivation("T_c*: availability-optimal checkpoint period", steps, checks, result=Tcs)


# ---------------------------------------------------------------------------------------------
# (d) normalised time-to-train
# ---------------------------------------------------------------------------------------------

def ttt_expr() -> sp.Expr:
    """J = S̄ / A*(T_f) with T_f = μ·m, written out (Eq. 7)."""
    Tcs = checkpoint_period_expr()
    A_star = availability_expr().subs(T_c, Tcs)
    return (S_bar / A_star).subs(T_f, mu * m)


def derive_ttt() -> Derivation:
    """J(r) = S̄(N, r) / A*(μ(N, r)·m) (Eq. 7), with A* from :func:`derive_checkpoint_period`.

    Returns
    -------
    Derivation
        ``result`` is J in terms of S̄, μ, m, T_s, T_r.
    """
    Tcs = checkpoint_period_expr().subs(T_f, mu * m)
    J = ttt_expr()
    J_open = S_bar * (mu * m + T_r + Tcs / 2) / ((1 - T_s / Tcs) * mu * m)
    steps = (
        Step("time between restarts", sp.Eq(T_f, mu * m),
             "μ failures per restart cycle, one failure every m seconds"),
        Step("time-to-train / T0", sp.Eq(sp.Symbol("J"), S_bar / sp.Symbol("A^*")),
             "each step computes S̄ stacks on average; only a fraction A* of wall time is up"),
        Step("written out", sp.Eq(sp.Symbol("J"), J_open),
             "trade-off: larger r makes μ grow (A* → 1) but also S̄ (≈ 2 while μ < N/2, more "
             "beyond); r* minimises J"),
    )
    checks = (
        Check("J = S̄ (T_f + T_r + T_c*/2) / ((1 − T_s/T_c*) T_f)", J - J_open),
        Check("J → S̄ when T_s, T_r → 0 and μm → ∞",
              sp.limit(sp.limit(sp.limit(J, T_r, 0), T_s, 0), mu, sp.oo) - S_bar),
    )
    return Derivation("J(r): normalised time-to-train (Eq. 7)", steps, checks, result=J)


# ---------------------------------------------------------------------------------------------
# replication
# ---------------------------------------------------------------------------------------------

def derive_replication() -> Derivation:
    """Disjoint replica sets: μ_rep = (N+1)Γ(1+1/r)Γ(b+1)/Γ(b+1+1/r), b = N/r; pairs 4^b/C(2b,b).

    Returns
    -------
    Derivation
        ``result`` is μ_rep for r | N.
    """
    P = sp.Function("P")
    mu_rep = (N + 1) * sp.gamma(1 + 1 / r) * sp.gamma(N / r + 1) / sp.gamma(N / r + 1 + 1 / r)
    pairs = (2 * b + 1) * sp.gamma(sp.Rational(3, 2)) * sp.gamma(b + 1) / sp.gamma(b + sp.Rational(3, 2))
    steps = (
        Step("independent sets", sp.Eq(P(x), (1 - x**r) ** (N / r)),
             "with iid deaths (prob. x) the N/r sets fail independently: exact"),
        Step("exact identity", sp.Eq(sp.Symbol("mu_rep"), (N + 1) * sp.Integral(P(x), (x, 0, 1))),
             "as for μ (Poissonisation)"),
        Step("Beta integral", sp.Eq(sp.Symbol("mu_rep"), mu_rep), "u = x^r; exact, no approximation"),
        Step("pairs, r = 2, N = 2b", sp.Eq(pairs, 4**b / sp.binomial(2 * b, b)),
             "Casanova et al. 2012 (mean number of failures to interruption)"),
    )

    def _pairs_small() -> bool:
        from fractions import Fraction
        from math import comb

        for bb in range(1, 9):
            n = 2 * bb
            exact = sum(Fraction(comb(bb, j) * 2**j, comb(n, j)) for j in range(bb + 1))
            if exact != Fraction(4**bb, comb(2 * bb, bb)):
                return False
        return True

    checks = (
        Check("pairs: (2b+1)Γ(3/2)Γ(b+1)/Γ(b+3/2) = 4^b/C(2b,b)",
              sp.gammasimp(sp.powsimp(sp.expand_func((pairs - 4**b / sp.binomial(2 * b, b))
                                                     .rewrite(sp.gamma)), force=True))),
        Check("μ_rep at r = 2 is the pair formula", sp.gammasimp(
            sp.expand_func(mu_rep.subs({r: 2, N: 2 * b}) - pairs))),
        Check("pairs: Σ_j C(b,j)2^j / C(2b,j) = 4^b/C(2b,b) (b = 1..8, exact counting)",
              test=_pairs_small),
    )
    return Derivation("Replication: N/r disjoint sets of r", steps, checks, result=mu_rep)


# ---------------------------------------------------------------------------------------------
# lambdified curves
# ---------------------------------------------------------------------------------------------

def lambdify_availability() -> Callable:
    """Numeric A(T_c, T_s, T_f, T_r) from the symbolic model (NumPy-vectorised)."""
    return sp.lambdify((T_c, T_s, T_f, T_r), availability_expr(), "numpy")


def lambdify_checkpoint_period() -> Callable:
    """Numeric T_c*(T_s, T_f, T_r)."""
    return sp.lambdify((T_s, T_f, T_r), checkpoint_period_expr(), "numpy")


def lambdify_mu_closed() -> Callable:
    """Numeric Γ(1+1/r) N^(1−1/r) (SciPy's Γ)."""
    return sp.lambdify((N, r), _mu_closed_expr(), "scipy")


def lambdify_ttt() -> Callable:
    """Numeric J(S̄, μ, m, T_s, T_r)."""
    return sp.lambdify((S_bar, mu, m, T_s, T_r), ttt_expr(), "numpy")


def all_derivations() -> tuple[Derivation, ...]:
    """Every derivation of this module, in reading order."""
    return (derive_mu(), derive_r_star(), derive_checkpoint_period(), derive_ttt(),
            derive_replication())

