"""SPARe's layout in the closed-form planner: the layout of a candidate r (ruler, domain-aware,
consecutive), μ and S̄ of a layout under failure domains (``theory.mu_correlated``, or a seeded
Monte Carlo where no closed form handles it), and the notes the plan prints about them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from spare_lib import theory as th


@lru_cache(maxsize=256)
def _domain_layout(N: int, r: int, D: int) -> Any:
    """:func:`spare_lib.stacking.domain_aware_layout`, cached (its search can take a second)."""
    from spare_lib.stacking.domains import domain_aware_layout

    return domain_aware_layout(N, r, D)


#: SPARe layouts of the planner: the paper's Golomb ruler, r consecutive holders, or the
#: domain-aware layout (every type's r holders in r distinct failure domains,
#: :func:`spare_lib.stacking.domain_aware_layout`; does not exist for every (N, r, D)).
LAYOUTS = ("ruler", "domain-aware", "consecutive")


def spare_layout(N: int, r: int, layout: str = "ruler", domain_size: int = 1) -> Any:
    """The SPARe :class:`~spare_lib.stacking.Layout` of ``layout`` (:data:`LAYOUTS`) at (N, r, D);
    ValueError when it does not exist (domain-aware: N < r·D or no Sidon set found)."""
    from spare_lib.stacking.layout import make_layout

    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {list(LAYOUTS)}, got {layout!r}")
    if layout == "domain-aware":
        return _domain_layout(int(N), int(r), int(domain_size))
    return make_layout(int(N), int(r), layout)


#: Monte Carlo fallback of SPARe's μ where no closed form handles the layout: failure sequences
#: (standard error ≈ 0.4 % of μ) and the root seed (with N, r, D, q: reproducible).
MC_MU_TRIALS, MC_MU_SEED = 4000, 2026


@lru_cache(maxsize=4096)
def _spare_mu_overhead_layout(N: int, r: int, layout: str, D: int, q: float) -> tuple[float, float, str]:
    """μ, S̄ of SPARe for a non-default layout or correlated failures, and how μ was obtained:
    'correlated' (``theory.mu_correlated``, S̄ ``overhead_correlated``), 'finite' (independent
    failures: ``mu_finite``, ``overhead_finite`` of the layout) or 'mc' (neither handles the
    layout: :data:`MC_MU_TRIALS` sequences of ``stacking.failures_to_wipeout``, S̄
    ``overhead_correlated``)."""
    from spare_lib.stacking.wipeout import failures_to_wipeout
    from spare_lib.theory.correlated import mu_correlated, overhead_correlated

    lay = spare_layout(N, r, layout, D)
    correlated = D > 1 and q > 0
    try:
        if correlated:
            mu = float(mu_correlated(N, r, D, q, lay))
            return mu, float(overhead_correlated(N, D, q, mu)), "correlated"
        return float(th.mu_finite(N, r, lay)), float(th.overhead_finite(N, r, lay)), "finite"
    except ValueError:  # the layout spans too many domains, or breaks the independence condition
        pass
    ss = np.random.SeedSequence([MC_MU_SEED, N, r, D, int(round(q * 1e9))])
    t = failures_to_wipeout(lay, MC_MU_TRIALS, ss, domain_size=D, domain_prob=q if correlated else 0.0)
    mu = float(np.mean(t))
    return mu, float(overhead_correlated(N, D if correlated else 1, q if correlated else 0.0, mu)), "mc"


def r_ranges(rs: list[int] | tuple[int, ...]) -> str:
    """'2..5, 8, 10..11' for sorted integers."""
    out: list[str] = []
    for r in rs:
        if out and r == int(out[-1].split("..")[-1]) + 1:
            out[-1] = f"{out[-1].split('..')[0]}..{r}"
        else:
            out.append(str(r))
    return ", ".join(out)


def _domain_notes(spec: Any, layout: str, rs: list[int]) -> tuple[str, ...]:
    """What the closed forms assume about failure domains and SPARe's layout."""
    D, q = spec.domain_size, spec.domain_fault_share
    notes = []
    special = layout != "ruler" or spec.correlated
    mc = [r for r in rs if special and _spare_mu_overhead_layout(spec.N, r, layout, D, float(q))[2] == "mc"]
    mc_note = (f"SPARe r = {r_ranges(mc)}: no closed form handles the '{layout}' layout there, so "
               f"mu is a Monte Carlo mean ({MC_MU_TRIALS:,} failure sequences of "
               "stacking.failures_to_wipeout, s.e. < 1 %) and S-bar = theory.overhead_correlated")
    if spec.correlated:
        notes.append(f"instead, with failure domains of D = {D} groups and q = {q:g} of failure "
                     "events domain events: SPARe's mu = "
                     f"theory.mu_correlated(N, r, D, q, layout='{layout}') (failure events to "
                     "wipe-out; a domain event counts once) and S-bar = "
                     "theory.overhead_correlated")
        if mc:
            notes.append(mc_note)
        notes.append("Rep+CKPT's closed form ignores the domains (replication_mu assumes "
                     "independent failures, whatever the replica placement) and CKPT-only's is "
                     "exact (every failure event restarts); --simulate draws the domain events")
    else:
        if layout != "ruler":
            notes.append(f"instead, SPARe's layout '{layout}': mu = theory.mu_finite and S-bar = "
                         "theory.overhead_finite of that layout")
            if mc:
                notes.append(mc_note)
        if D > 1:
            notes.append(f"failure domains of D = {D} groups but no domain events (q = 0): "
                         "failures are independent")
        elif q > 0:
            notes.append(f"q = {q:g} with domains of one group: a domain event kills one group, "
                         "so failures are independent")
    return tuple(notes)
