"""Figures of notebook 30 (μ approximations, availability curves from the lambdified Eq. 2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from spare_lib.theory.symbolic import lambdify_availability, lambdify_checkpoint_period


def make_mu_approximations(df: pd.DataFrame):
    """Relative gap of the Γ form, Γ form + ½ and the independent-types integral to mu_finite."""
    import matplotlib.pyplot as plt

    from spare_lib.figures.style import PAGE_IN

    Ns = sorted(df["N"].unique())
    fig, axes = plt.subplots(1, len(Ns), figsize=(PAGE_IN, 2.3), sharey=True, squeeze=False)
    styles = {"closed": ("Γ(1+1/r)N^(1−1/r) (paper)", "#D55E00", "-o"),
              "closed_half": ("Γ form + ½ (Euler–Maclaurin)", "#E69F00", "--s"),
              "independent": ("(N+1)∫(1−x^r)^N dx (independent types)", "#009E73", "-.D")}
    for j, n in enumerate(Ns):
        ax = axes[0, j]
        d = df[df["N"] == n].sort_values("r")
        for col, (label, color, fmt) in styles.items():
            ax.plot(d["r"], d["err_" + col], fmt, ms=3, color=color, label=label)
        ax.axhline(0, color="0.5", lw=0.6)
        ax.set_title(f"N = {n}")
        ax.set_xlabel("redundancy r")
    axes[0, 0].set_ylabel("gap to finite-N μ (%)")
    axes[0, -1].legend(fontsize="x-small", loc="lower right")
    return fig


def make_availability_curves(N: int = 600, r_values: tuple[int, ...] = (2, 4, 8, 16),
                             m_s: float = 300.0, T_s_s: float = 2e13 / 340e9,
                             T_r_s: float = 3600.0):
    """A(T_c) for T_f = μ(N, r)·m at several r with T_c* marked; T_c* and A* against T_f.

    All curves come from the lambdified sympy expressions (:func:`lambdify_availability`,
    :func:`lambdify_checkpoint_period`).
    """
    import matplotlib.pyplot as plt

    from spare_lib import theory
    from spare_lib.figures.style import PAGE_IN

    A = lambdify_availability()
    Tcs = lambdify_checkpoint_period()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(PAGE_IN, 2.5))
    colors = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
    Tc = np.logspace(np.log10(2 * T_s_s), 5, 400)
    for rr, col in zip(r_values, colors, strict=False):
        Tf = float(theory.mu_closed(N, rr)) * m_s
        a1.plot(Tc, A(Tc, T_s_s, Tf, T_r_s), color=col, label=f"r = {rr}, T_f = {Tf / 3600:.1f} h")
        t_opt = float(Tcs(T_s_s, Tf, T_r_s))
        a1.plot(t_opt, A(t_opt, T_s_s, Tf, T_r_s), "o", color=col, mfc="none")
    a1.set_xscale("log")
    a1.set_xlabel("checkpoint period T_c (s)")
    a1.set_ylabel("availability A(T_c)")
    a1.set_ylim(0, 1)
    a1.legend(fontsize="x-small", title=f"N = {N}, ○ = T_c*", title_fontsize="x-small")
    Tf = np.logspace(2.5, 6, 200)
    a2.plot(Tf, Tcs(T_s_s, Tf, T_r_s), color="#0072B2", label="T_c* (exact optimum)")
    a2.plot(Tf, np.sqrt(2 * T_s_s * (Tf + T_r_s)), "--", color="#D55E00",
            label="sqrt(2T_s(T_f+T_r)) (Young)")
    a2.set_xscale("log")
    a2.set_yscale("log")
    a2.set_xlabel("time between restarts T_f = μ·m (s)")
    a2.set_ylabel("T_c* (s)")
    ax2 = a2.twinx()
    ax2.plot(Tf, A(Tcs(T_s_s, Tf, T_r_s), T_s_s, Tf, T_r_s), ":", color="0.2", label="A*(T_f)")
    ax2.set_ylabel("A*(T_f)")
    ax2.set_ylim(0, 1)
    h1, l1 = a2.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    a2.legend(h1 + h2, l1 + l2, fontsize="x-small", loc="upper left")
    return fig
