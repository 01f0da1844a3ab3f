"""REGISTRY: every figure spare-lab publishes -> the notebook that makes it and its file stem.

README's figure table is generated from this registry (:func:`update_readme`); a test fails when
the two disagree, and the notebook tests check that each notebook writes every stem registered
for it. Add an entry here whenever a notebook saves a new figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from spare_lib.config import REPO_ROOT


@dataclass(frozen=True)
class FigureSpec:
    """One published figure.

    Attributes
    ----------
    stem : str
        File stem in ``figures/`` (PDF and PNG), named by content.
    paper : str
        Which paper figure/table it reproduces, or "beyond the paper".
    notebook : str
        Notebook stem in ``notebooks/`` that writes it.
    description : str
        One line: what the figure shows.
    """

    stem: str
    paper: str
    notebook: str
    description: str


REGISTRY: tuple[FigureSpec, ...] = (
    FigureSpec("stacking_layouts", "Fig. 2 (stacking)", "10_stacking_and_wipeout",
               "Ruler vs consecutive stacking layout, N=12, r=3: groups × stack levels, colour = type"),
    FigureSpec("wipeout_sequence", "Fig. 2 (failures)", "10_stacking_and_wipeout",
               "A failure sequence on N=12, r=3 until the first wipe-out, live holders per type"),
    FigureSpec("mu_mc_vs_closed_form", "§4 μ validation", "10_stacking_and_wipeout",
               "Monte Carlo μ(N,r) vs closed form Γ(1+1/r)N^(1-1/r), N=200/600/1000, relative error"),
    FigureSpec("mu_ruler_vs_consecutive", "beyond the paper", "10_stacking_and_wipeout",
               "Failures to wipe-out: consecutive vs ruler layout over r at N=600"),
    FigureSpec("rectlr_reorder_example", "Fig. 3 (RECTLR reorder)", "20_rectlr",
               "N=12, r=3, groups 4 and 5 fail: Phase 0 misses types 4, 5; Phase 2 moves one shard at S*=2"),
    FigureSpec("rectlr_phase1_graph", "§4 RECTLR Phase 1", "20_rectlr",
               "Phase 1 bipartite graph types × survivors (capacity S*) of the worked example, "
               "with the chosen assignment"),
    FigureSpec("rectlr_sequence_stats", "§4/§8 RECTLR statistics", "20_rectlr",
               "Along failure sequences at N=600, r=8 and 20: Phase 0 share vs k, S* − c(k), "
               "shards moved per event"),
    FigureSpec("rectlr_phase0_share_by_r", "§8 RECTLR Phase 0 share", "20_rectlr",
               "Share of failure events settled by Phase 0 vs r, N=600 and 1000"),
    FigureSpec("exactness_training", "§3–4 claim (masked failures change nothing)", "40_exactness",
               "Real worker processes killed mid-step, N=16, r=3: loss curves of failure-free, "
               "SPARe and drop; max |Δθ| vs failure-free (SPARe exactly 0, drop drifts)"),
    FigureSpec("exactness_timeline", "beyond the paper", "40_exactness",
               "The SPARe run of 40_exactness per executed step: live groups, injected faults by "
               "phase, stack depth S, the wipe-out and the redone steps"),
    FigureSpec("exactness_microbatch", "beyond the paper (issue 25: SPARe-b, SPARe+drop)",
               "40_exactness",
               "The same kills at b=4 micro-batches per shard: SPARe-b exactly on the failure-free "
               "curve (max |Δθ| = 0), SPARe+drop exact until the wipe-out, elastic-drop drifting "
               "from the first fault"),
    FigureSpec("live_ttt_emulated_vs_simulated", "beyond the paper (issue 28: live check)",
               "45_live_emulation",
               "TTT/T0 of five methods emulated with real processes on a 1,000× scaled clock "
               "(the simulator's semantics and a real coordinator's) against the simulator on "
               "the same failure trace, N=16, with the acceptance band"),
    FigureSpec("live_semantics_attribution", "beyond the paper (issue 28: live check)",
               "45_live_emulation",
               "Change of emulated TTT/T0 when the notice instant, the window-restart instant "
               "or the overruns follow a real coordinator instead of the simulator, N=16, "
               "against the simulator's range under perturbations of the measured size"),
    FigureSpec("live_timeline", "beyond the paper (issue 28: live check)", "45_live_emulation",
               "The emulated CKPT-only run over model time, real coordinator on the simulator's "
               "path: live groups, SIGKILLs, global restarts, the first divergence"),
    FigureSpec("live_noise_floor", "beyond the paper (issue 28: live check)", "45_live_emulation",
               "The emulation's own noise: barrier overhead, worker wake-up, pipe, detection, "
               "SIGKILL and process hand-over latencies (wall ms) against one scaled compute unit"),
    FigureSpec("mu_approximations", "§4 μ derivation", "30_theory",
               "Γ form, Γ form + ½ and the independent-types integral against finite-N μ, over r"),
    FigureSpec("availability_vs_checkpoint_period", "Eq. 2 (availability model)", "30_theory",
               "A(T_c) at T_f = μ·m with T_c* marked; T_c* vs Young's sqrt(2T_s(T_f+T_r)) and A*"),
    FigureSpec("mu_closed_finite_vs_mc", "§4 μ validation (paper: ≤ 1.13 %)", "35_mc_validation",
               "μ: closed form and finite-N form vs Monte Carlo over r, N=200/600/1000, errors"),
    FigureSpec("overhead_eq5_vs_mc", "§4 S̄ validation (paper: ≤ 0.60 %)", "35_mc_validation",
               "S̄: Eq. 5 and the finite-N renewal form vs Monte Carlo with exact S*, errors"),
    FigureSpec("ttt_vs_r_r_star", "Eq. 7, r*", "35_mc_validation",
               "J(r) = S̄/A*(μm) for N=200/600/1000: closed-form r* vs numeric minima"),
    FigureSpec("r_star_vs_n", "the paper's r* ≈ log2 N + 0.833", "35_mc_validation",
               "Optimal redundancy against N from 10 to 1e5: closed form vs argmin J"),
    FigureSpec("layouts_mu_overhead", "beyond the paper", "35_mc_validation",
               "μ and S̄ for ruler, consecutive, random offsets and disjoint replication at N=600"),
    FigureSpec("restart_dominant_regime", "Fig. 1 (motivation)", "50_restart_dominant_regime",
               "System MTBF and restart time vs #GPUs, and the share of wall time CKPT-only, "
               "Rep+CKPT and SPARe+CKPT lose to restarts (simulated)"),
    FigureSpec("predict_vs_sim_paper_grid", "Figs. 6–7 (beyond Eq. 7)", "55_predictive_model",
               "TTT/T0 and availability vs r on the paper's grid: simulation (mean ± 2 s.e., 10 "
               "seeds), the predictive model (theory.predict) and Eq. 7 / Eq. 2"),
    FigureSpec("predict_error_summary", "beyond the paper (model validation)",
               "55_predictive_model",
               "Predicted vs simulated TTT/T0 on the paper grid and a wider (m, T_r, k, N) grid, "
               "and |error| of the model and of Eq. 7"),
    FigureSpec("predict_eq7_gap_waterfall", "Eq. 7 gap decomposed", "55_predictive_model",
               "From Eq. 7 to the simulation at the paper's SPARe optima: skeleton, barrier, "
               "restart windows, failure law, failure events, residual"),
    FigureSpec("predict_r_c_star", "r*, C* (beyond r* ≈ log2 N)", "55_predictive_model",
               "Model-optimal r* and checkpoint interval C* vs N (10²–10⁵) and vs m, with "
               "simulated optima (tie ranges) on top"),
    FigureSpec("cluster_ttt_vs_r", "Fig. 6", "60_cluster_600k",
               "Time-to-train / T0 vs r at 600k GPUs, N=200/600/1000: SPARe+CKPT and Rep+CKPT "
               "simulated (mean, min-max over trials) and Eq. 7"),
    FigureSpec("cluster_availability_vs_r", "Fig. 7", "60_cluster_600k",
               "Availability vs r, simulated SPARe+CKPT and Rep+CKPT and Eq. 2"),
    FigureSpec("cluster_overhead_vs_r", "Fig. 8", "60_cluster_600k",
               "Average stacks computed per step vs r, simulated and Eq. 5"),
    FigureSpec("rectlr_phase0_share", "§5 (RECTLR phase 0 claim)", "60_cluster_600k",
               "Share of SPARe failure events settled by RECTLR phase 0 (no reorder) vs r"),
    FigureSpec("scale_ttt_vs_cluster", "beyond the paper (issue 16: scale)", "65_scale",
               "TTT/T0 of the best SPARe+CKPT, Rep+CKPT and CKPT-only (a) from 100k to 2M GPUs at "
               "1,000 GPUs per group, (b) at 1M GPUs with 64-1,000 GPUs per group; all-reduce model"),
    FigureSpec("scale_r_star_law", "the paper's r* ≈ log2 N + 0.83 (§7) by simulation", "65_scale",
               "Simulated optimal redundancy r* against N (100-15,625) with the paper's law log2 N + 0.83"),
    FigureSpec("scale_runtime_vs_n", "beyond the paper (issue 16: simulator speed)", "65_scale",
               "Wall time of one 10,000-step simulated run against N (10^3-10^5), direct loop vs "
               "event-driven barrier, with the targets (benchmarks/bench_scale.py)"),
    FigureSpec("failures_interarrival_fits", "beyond the paper (failure model)", "70_real_failures",
               "Gaps between fault instants of StepFun, Titan and LANL-20 with censored fits "
               "(exponential, Weibull, lognormal, gamma)"),
    FigureSpec("failures_instant_sizes", "beyond the paper (failure model)", "70_real_failures",
               "Faults per instant: simultaneous multi-node faults in the three datasets"),
    FigureSpec("failures_node_dispersion", "beyond the paper (failure model)", "70_real_failures",
               "Per-node fault counts against equal-rate Poisson nodes (over-dispersion)"),
    FigureSpec("titan_gpu_survival", "beyond the paper (k = 0.78)", "70_real_failures",
               "Kaplan–Meier survival of Titan GPU lifetimes (all, old, new) with censored Weibull "
               "fits, against the paper's shape k = 0.78"),
    FigureSpec("trace_ttt_vs_r", "Fig. 6 with real failures", "70_real_failures",
               "TTT/T0 vs r at N=600: paper Weibull, StepFun block-bootstrap (contiguous and random "
               "placement) and fitted failures; stars = optima"),
    FigureSpec("trace_availability_vs_r", "Fig. 7 with real failures", "70_real_failures",
               "Availability vs r at N=600 under the same four failure models"),
    FigureSpec("mu_q_vs_domain_share", "beyond the paper (correlated failures)",
               "75_correlated_failures",
               "Failure events to wipe-out μ_q vs domain-event share q for ruler, consecutive, "
               "domain-aware and random layouts (N=600/r=8/D=10, N=200/r=6/D=8): MC and theory"),
    FigureSpec("cluster_ttt_vs_r_correlated", "Fig. 6 with failure domains", "75_correlated_failures",
               "TTT/T0 vs r at N=600, D=10, q ∈ `sim_qs` = `(0, 0.05, 0.2)`: SPARe+CKPT ruler vs "
               "domain-aware, Rep+CKPT consecutive vs strided sets; stars = optima, dotted = Eq. 7 with μ_q"),
    FigureSpec("r_star_vs_domain_share", "r* with failure domains", "75_correlated_failures",
               "Optimal redundancy vs domain-event share at N=600, D=10: argmin of Eq. 7 with μ_q "
               "and simulated optima, ruler vs domain-aware"),
    FigureSpec("explore_default", "Eqs. 2, 7 (capacity planning)", "90_explore",
               "Closed-form TTT/T0 and availability vs r of SPARe+CKPT, Rep+CKPT and CKPT-only "
               "at the paper's default point (N=600, m=5 min, T_r=60 min, T_s=58.8 s); "
               "stars = `spare plan`'s r"),
    FigureSpec("strategies_vs_stall", "beyond the paper (issue 13)", "80_strategies",
               "TTT/T0 of SPARe+CKPT, Rep+CKPT, CKPT-only, SPARe+repair, elastic-drop and "
               "elastic-rebalance vs the stall per reconfiguration (from the paper's 0.1 s to 10 min), "
               "N=100 and 600; rejoin blocking (top) and non-blocking (bottom)"),
    FigureSpec("strategies_vs_rejoin", "beyond the paper (issue 13)", "80_strategies",
               "TTT/T0 of every strategy vs the rejoin time of a failed group (1 to 120 min)"),
    FigureSpec("strategies_vs_mtbf", "beyond the paper (issue 13)", "80_strategies",
               "TTT/T0 of every strategy vs the system MTBF (1 to 30 min)"),
    FigureSpec("strategies_vs_microbatches", "beyond the paper (issue 13)", "80_strategies",
               "TTT/T0 of elastic-rebalance vs micro-batches per shard b, against the other strategies"),
    FigureSpec("strategies_calibration", "beyond the paper (issue 13)", "80_strategies",
               "Effective training time: FT-HSDP (synchronous 44 %, elastic 80 %) and Llama 3 (> 90 %) "
               "against the simulator under stated assumptions"),
    FigureSpec("repair_theory_vs_sim", "beyond the paper (issue 13)", "80_strategies",
               "Mean time between wipe-outs of SPARe+repair: birth-death chain vs simulation"),
    FigureSpec("strategies_600k_versus", "beyond the paper (issues 13, 24)", "80_strategies",
               "The closing table at 600k GPUs: TTT of SPARe+CKPT over each other strategy's at "
               "three stalls and both rejoin assumptions, paired Student-t intervals (Holm), open "
               "markers tied"),
    FigureSpec("microbatch_sbar", "beyond the paper (issue 25)", "82_spare_microbatch",
               "S̄_b against micro-batches per shard b and r (theory, Monte Carlo, global bound), "
               "and the makespan L*/b against the failures k and its per-sequence distribution"),
    FigureSpec("microbatch_ttt", "beyond the paper (issue 25)", "82_spare_microbatch",
               "TTT/T0 of SPARe-b (CKPT, repair, drop) against SPARe+CKPT, elastic-rebalance at "
               "fetch_s = 0, 10, 60 s and elastic-drop, 100k and 600k GPUs, in the paper's world "
               "and the llama3 failure mix (planned)"),
    FigureSpec("microbatch_verdict", "beyond the paper (issue 25)", "82_spare_microbatch",
               "Paired TTT differences of each SPARe-b method against each rival, Holm-adjusted "
               "95 % intervals (open: tied), 100k and 600k GPUs, paper world and llama3 mix"),
    FigureSpec("production_strategies", "beyond the paper (issue 24)", "85_production_failures",
               "TTT/T0 of every strategy in the llama3 failure mix and the paper's world at 16k, "
               "100k and 600k GPUs (planned by spare plan's pipeline)"),
    FigureSpec("production_ceiling", "beyond the paper (issue 24)", "85_production_failures",
               "Availability ceiling of job-wide failures against T_r for several job shares, "
               "and the best strategy's simulated availability in the llama3 mix"),
    FigureSpec("strategies_tornado", "beyond the paper (issue 24)", "85_production_failures",
               "Tornado: best SPARe variant's TTT over the best other strategy's at both ends of "
               "each assumption, 100k and 600k GPUs"),
    FigureSpec("design_by_group_size", "beyond the paper (issue 27: spare design)", "95_design",
               "each method's best days to train against the group size, three jobs"),
    FigureSpec("design_pareto_fronts", "beyond the paper (issue 27: spare design)", "95_design",
               "Pareto fronts of days to train against GPUs used, three jobs"),
)

README_START = "<!-- figures:start (generated by spare_lib.figures.update_readme; do not edit) -->"
README_END = "<!-- figures:end -->"


def by_notebook() -> dict[str, list[FigureSpec]]:
    """Registry entries grouped by notebook stem, in registry order."""
    out: dict[str, list[FigureSpec]] = {}
    for spec in REGISTRY:
        out.setdefault(spec.notebook, []).append(spec)
    return out


def readme_table() -> str:
    """The Markdown figure table README.md carries between its figure markers."""
    lines = ["| figure | reproduces | notebook | what it shows |", "|---|---|---|---|"]
    for s in REGISTRY:
        lines.append(f"| [`{s.stem}`](figures/{s.stem}.png) | {s.paper} | "
                     f"[`{s.notebook}`](notebooks/{s.notebook}.ipynb) | {s.description} |")
    return "\n".join(lines)


def _readme_block() -> str:
    return f"{README_START}\n{readme_table()}\n{README_END}"


def readme_in_sync(path: Path | None = None) -> bool:
    """True when README.md's figure table equals :func:`readme_table`."""
    text = (path or REPO_ROOT / "README.md").read_text()
    return _readme_block() in text


def update_readme(path: Path | None = None) -> bool:
    """Rewrite README.md's figure table from the registry; return True if the file changed."""
    path = path or REPO_ROOT / "README.md"
    text = path.read_text()
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{path} has no figure markers {README_START!r} ... {README_END!r}")
    new = pattern.sub(lambda _m: _readme_block(), text)
    if new != text:
        path.write_text(new)
        return True
    return False
