"""Run sizes for every notebook, full and smoke, in one table (CONVENTIONS.md, "Notebooks").

A notebook's parameters cell holds only literals (``SMOKE = None``, ``SEED = 2026``,
``OUT_DIR = None``); the next cell calls :func:`resolve`, which picks the sizes and the output
folders. ``SMOKE=None`` means: read the environment variable ``SPARE_SMOKE``. Smoke runs never
write into the committed ``figures/`` and ``data/results/`` folders.

Example
-------
>>> cfg = resolve("10_stacking_and_wipeout", smoke=True)
>>> cfg.smoke, cfg["mu_trials"] < resolve("10_stacking_and_wipeout", smoke=False)["mu_trials"]
(True, True)
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Repository root (the package is installed editable from the repo).
REPO_ROOT = Path(__file__).resolve().parent.parent
FIGURES_DIR = REPO_ROOT / "figures"
RESULTS_DIR = REPO_ROOT / "data" / "results"

#: notebook stem -> {"full": {...}, "smoke": {...}}. Keys common to both modes.
SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "10_stacking_and_wipeout": {
        # 6e4 trials: standard error of μ below 0.3 % at every (N, r) of the grids (CV ≤ 0.53 at r=2).
        "full": {"mu_trials": 60_000, "grid_stride": 1, "layout_compare_trials": 40_000},
        "smoke": {"mu_trials": 3_000, "grid_stride": 4, "layout_compare_trials": 2_000},
    },
    "20_rectlr": {
        # Statistics: N=600, r=8 and 20 (issue 3); Phase 0 share per r at N=600 and 1000;
        # speed: Controller on whole sequences, SciPy/NetworkX reference on sampled events
        # (≈ 3–5 s each at N=1000, r=20, hence few).
        "full": {"stats_N": 600, "stats_r": [8, 20], "stats_sequences": 200,
                 "share_N": [600, 1000], "share_sequences": 30, "share_r_stride": 1,
                 "speed_N": 1000, "speed_r": 20, "speed_sequences": 5,
                 "speed_reference_events": 8},
        "smoke": {"stats_N": 600, "stats_r": [8, 20], "stats_sequences": 4,
                  "share_N": [600], "share_sequences": 4, "share_r_stride": 6,
                  "speed_N": 200, "speed_r": 8, "speed_sequences": 2,
                  "speed_reference_events": 3},
    },
    "30_theory": {
        # Pure formulas (sympy + mu_finite): the same sizes in both modes, smoke thins the r grid.
        "full": {"N_values": [200, 600, 1000], "r_stride": 1},
        "smoke": {"N_values": [200, 600, 1000], "r_stride": 5},
    },
    "35_mc_validation": {
        # μ: trials chosen per (N, r) for a relative s.e. of 0.15 % (≥ 4000); S̄: 2000 failure
        # sequences with exact S* (s.e. ≤ 0.1 %). ≈ 4–5 min on one loaded core.
        "full": {"N_values": [200, 600, 1000], "r_stride": 1, "mu_rel_se": 0.0015,
                 "mu_min_trials": 4_000, "overhead_trials": 2_000, "layout_N": 600,
                 "layout_r_stride": 1, "layout_mu_trials": 20_000, "layout_overhead_trials": 500,
                 "r_star_points": 41},
        "smoke": {"N_values": [200, 600, 1000], "r_stride": 6, "mu_rel_se": 0.02,
                  "mu_min_trials": 400, "overhead_trials": 60, "layout_N": 600,
                  "layout_r_stride": 8, "layout_mu_trials": 1_000, "layout_overhead_trials": 40,
                  "r_star_points": 9},
    },
    "40_exactness": {
        # Real processes: the cost is spawning N=16 workers (~0.3 s CPU each), not the steps.
        # shard_delay_s: sleep per shard in the worker, so a kill lands *inside* a stack.
        # timeout_s must exceed a healthy worker's answer time on a loaded box; it is what a
        # SIGSTOP-ed (hung) worker costs. Smoke skips the Weibull-clock run and takes the
        # failure-free reference in-process (the tests check it equals the 16-process run).
        # microbatches: b of the micro-batch section (issue 25), the same kills.
        "full": {"N": 16, "r": 3, "n_steps": 60, "checkpoint_every": 8, "lr": 0.5,
                 "timeout_s": 3.0, "shard_delay_s": 0.01, "process_reference": True,
                 "weibull_steps": 60, "weibull_mtbf_steps": 4.0, "microbatches": 4},
        "smoke": {"N": 16, "r": 3, "n_steps": 20, "checkpoint_every": 4, "lr": 0.5,
                  "timeout_s": 1.5, "shard_delay_s": 0.01, "process_reference": False,
                  "weibull_steps": 0, "weibull_mtbf_steps": 4.0, "microbatches": 4},
    },
    "45_live_emulation": {
        # Real processes on a clock scaled 1,000×: 64 s of compute → 64 ms of wall time. A
        # case's wall time ≈ TTT / scale (≈ 0.3–1.1 min at 250 steps, N = 16) plus ≈ 1 s of
        # start-up. sim_trials: simulator runs per case (jitter seeds; with σ = 0 one run is the
        # deterministic answer). Full: the simulator's semantics at N = 16 and 32 (σ = 0, event
        # for event) and N = 16 at the paper's σ = 0.05; a real coordinator's at σ = 0, N = 16
        # and 32; one knob at a time at N = attr_N for attr_methods (None: all; CKPT-only, the case
        # to explain, and the two methods with rejoins, where the notice instant matters; ≈ 34
        # runs, ≈ 30 min on a shared box). nice:
        # priority of the emulation's processes on a shared box. repeats: more real-semantics
        # runs of a case outside both bands (its own spread; ≈ 1-4 min each at full size).
        "full": {"N_values": [16, 32], "steps": 250, "scale": 1000.0, "sigmas": [0.0, 0.05],
                 "sigma_N": 16, "sim_trials": 20, "attr_N": 16,
                 "attr_methods": ["ckpt", "spare+repair", "elastic-drop"],
                 "nice": -5, "repeats": 4},
        # smoke (≤ 60 s): 8 steps at scale 3,000, the knobs only for CKPT-only and SPARe+repair
        "smoke": {"N_values": [8], "steps": 8, "scale": 3000.0, "sigmas": [0.0],
                  "sigma_N": 8, "sim_trials": 1, "attr_N": 8,
                  "attr_methods": ["ckpt", "spare+repair"], "nice": -5, "repeats": 2},
    },
    "50_restart_dominant_regime": {
        # N = 600 groups at every cluster size; 2000 steps are enough for the restart share
        # (a steady-state ratio); runs that cannot finish stop at max_wall_t0 · T0.
        "full": {"gpus": [16_384, 32_768, 65_536, 131_072, 262_144, 600_000, 1_000_000],
                 "steps": 2000, "trials": 3, "workers": 2, "max_wall_t0": 50.0},
        "smoke": {"gpus": [16_384, 131_072, 600_000], "steps": 150, "trials": 1, "workers": 1,
                  "max_wall_t0": 20.0},
    },
    "55_predictive_model": {
        # Paper grid: 110 points × 10 seeds × 10,000 steps. Wider grid: all 81 (m, T_r, k, N)
        # settings × 2 methods × 3 r × 10 seeds at 2,000 steps ("latin" = a 27-setting Latin
        # design, a third of the CPU; the model takes `steps` into account). r*/C* figure:
        # model curves over N (T_a held at 10 s) and m, simulated optima at N = 200, 1000 and
        # m = 2, 15 min (3 r and 3 C each, 10,000 steps). ≈ 3.5 min on 2 free cores (8 min
        # on a loaded box).
        # The rejoining methods (§5): 81 (N, m, stall, rejoin) settings (T_r, b, fetch and
        # blocking rejoin rotated) x 3 methods x 10 seeds x 2,000 steps, common failure
        # streams; ≈ 10 min on 2 free cores.
        "full": {"trials": 10, "paper_steps": 10_000, "paper_r": None, "wide_steps": 2_000,
                 "wide_design": "full", "wide_max_settings": None, "workers": 2,
                 "curve_N_max": 100_000, "curve_points": 13, "curve_steps": 10_000,
                 "star_N": [200, 1000], "star_N_m": 1000, "star_m_min": [2, 15],
                 "star_r_width": 3, "star_C_factors": [0.6, 1.0, 1.6],
                 "rejoin_design": "full", "rejoin_trials": 10, "rejoin_steps": 2_000,
                 "rejoin_mean_tol_pct": 3.0, "rejoin_worst_tol_pct": 8.0,
                 "diag_points": 3, "diag_trials": 100, "bare_runs": 5, "bare_reps": 4000,
                 "bare_max_steps": 200_000},
        "smoke": {"trials": 2, "paper_steps": 200, "paper_r": [3, 9], "wide_steps": 200,
                  "wide_design": "latin", "wide_max_settings": 2, "workers": 1,
                  "curve_N_max": 2_000, "curve_points": 3, "curve_steps": 1_000,
                  "star_N": [200], "star_N_m": 200, "star_m_min": [5], "star_r_width": 3,
                  "star_C_factors": [1.0, 2.0],
                  "rejoin_design": "smoke", "rejoin_trials": 2, "rejoin_steps": 300,
                  "rejoin_mean_tol_pct": 12.0, "rejoin_worst_tol_pct": 25.0,
                  "diag_points": 2, "diag_trials": 2, "bare_runs": 2, "bare_reps": 200,
                  "bare_max_steps": 5_000},
    },
    "60_cluster_600k": {
        # 55 (N, r) points × 2 methods × trials, 10,000 steps each (the paper's 3 trials; 5 here).
        "full": {"steps": 10_000, "trials": 5, "workers": 2, "r_values": None,
                 "ckpt_only_max_wall_t0": 100.0, "dist_trials": 3},
        "smoke": {"steps": 300, "trials": 1, "workers": 1, "r_values": [2, 3, 9],
                  "ckpt_only_max_wall_t0": 20.0, "dist_trials": 1},
    },
    "65_scale": {
        # (a) 100k-2M GPUs at 1,000 per group (N = 100..2000), (b) 1M GPUs, 64-1,000 GPUs per
        # group (N = 1000..15,625): SPARe+CKPT at r* - 2..r* + 2 (r* = round(log2 N + 0.83)),
        # Rep+CKPT r = 2, 3, 4, CKPT-only; the all-reduce model of cluster_config. Needs the
        # event-driven barrier (issue 16) for the largest N; the smoke run uses small N only.
        "full": {"steps": 2_000, "trials": 3, "workers": 2, "gpus_a": [100_000, 200_000, 500_000,
                 1_000_000, 2_000_000], "group_a": 1000, "gpus_b": 1_000_000,
                 "group_b": [1000, 500, 250, 128, 64], "model_bytes_b": 2e12, "r_halfwidth": 2,
                 "rep_r": [2, 3, 4], "max_wall_t0": 50.0},
        "smoke": {"steps": 60, "trials": 1, "workers": 2, "gpus_a": [100_000, 200_000],
                  "group_a": 1000, "gpus_b": 256_000, "group_b": [1000, 500],
                  "model_bytes_b": 2e12, "r_halfwidth": 1, "rep_r": [3], "max_wall_t0": 20.0},
    },
    "70_real_failures": {
        # Fits: bootstrap CIs (n_boot draws). Figs. 6–7 at N = 600 (10,000 steps, the planner's C0):
        # spare r = 2..20 and rep r = 2..10 (Rep beyond 10 only adds overhead) × 4 failure models ×
        # trials; then run_plan on StepFun (r, then C). ≈ 0.5 s per run and 7–9 min in all on 2
        # cores shared with other jobs (load ≈ 6).
        "full": {"n_boot": 200, "steps": 10_000, "trials": 5, "spare_r": list(range(2, 21)),
                 "rep_r": list(range(2, 11)), "workers": 2, "max_wall_t0": 50.0, "plan_trials": 5},
        "smoke": {"n_boot": 0, "steps": 200, "trials": 2, "spare_r": [3, 9], "rep_r": [2, 3],
                  "workers": 1, "max_wall_t0": 20.0, "plan_trials": 2},
    },
    "75_correlated_failures": {
        # μ_q layer: Monte Carlo per (config, layout, q) (s.e. ≈ 0.1 % at 2e4 trials) and the
        # transfer-matrix theory on a finer q grid; r* theory (Monte Carlo μ_q, 4000 trials per r);
        # Fig. 6 at N = 600, D = 10, q ∈ {0, 0.05, 0.2}: SPARe ruler / domain-aware r = 2..20
        # (domain-aware stops at 18), Rep consecutive / strided r = 2..10, 5 trials with common
        # failure streams, 10,000 steps, analytic C. ≈ 0.2–0.5 s per run, ≈ 8–10 min on 2 cores.
        "full": {"mu_configs": [[600, 8, 10], [200, 6, 8]],
                 "mc_qs": [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3],
                 "theory_qs": [round(0.02 * i, 2) for i in range(16)], "mu_trials": 20_000,
                 "s_bar_trials": 300, "rstar_qs": [0.0, 0.05, 0.1, 0.2, 0.3], "rstar_r": None,
                 "rstar_trials": 4000, "sim_N": 600, "sim_D": 10, "sim_qs": [0.0, 0.05, 0.2],
                 "spare_r": None, "rep_r": list(range(2, 11)), "steps": 10_000, "trials": 5,
                 "workers": 2, "ckpt_trials": 4000, "max_wall_t0": 200.0,
                 "kill_rate_ref_qs": [0.2]},
        "smoke": {"mu_configs": [[600, 8, 10], [200, 6, 8]], "mc_qs": [0.0, 0.2],
                  "theory_qs": [0.0, 0.1, 0.2, 0.3], "mu_trials": 2000, "s_bar_trials": 20,
                  "rstar_qs": [0.0, 0.2], "rstar_r": [4, 8, 12], "rstar_trials": 300,
                  "sim_N": 600, "sim_D": 10, "sim_qs": [0.0, 0.2], "spare_r": [3, 8],
                  "rep_r": [3], "steps": 200, "trials": 2, "workers": 1, "ckpt_trials": 300,
                  "max_wall_t0": 50.0, "kill_rate_ref_qs": [0.2]},
    },
    "80_strategies": {
        # One world for every strategy (issue 24): `world` holds the symmetric-cost knobs every
        # run gets (every 64-s unit its own jitter draw, Rep included; a commit after a noticed
        # failure pays the aborted all-reduce and a full one, like a retry). Sweeps: every
        # strategy at its fast-model choice, N = 100 and 600, `sweep_trials` trials of `steps`
        # steps (strategies a knob does not affect are run once, at the base point). Closing
        # table: the planner's pipeline (run_plan: r window, checkpoint search, `plan_trials`
        # trials with common random numbers, sequential up to `plan_max_trials`) at N = 600 for
        # the stalls `table_stall_s`, both rejoin assumptions; then the assumptions of issue 24
        # at both ends around its longest-stall blocking cell (`tornado_trials`, the fast model's
        # r and C). The job-wide share is notebook 85's: at 600k GPUs job-wide failures cap every
        # strategy (T_r = 60 min) and a capped 10,000-step run there takes about a minute.
        # About 30-40 min on a shared 2-core machine.
        "full": {"steps": 10_000, "sweep_trials": 2, "workers": 2, "N_values": [100, 600],
                 "max_wall_t0": 20.0, "world": {"jitter_model": "unit", "allreduce_rule": "abort"},
                 "stall_s": [0.1, 10, 30, 60, 120, 180, 300, 600],
                 "rejoin_min": [1, 5, 10, 30, 60, 120], "mtbf_min": [1, 2, 5, 10, 30],
                 "microbatches": [1, 2, 4, 8, 16, 32], "table_stall_s": [0.1, 60, 180],
                 "plan_trials": 10, "plan_max_trials": 20, "plan_r_window": 1,
                 "plan_checkpoint_factors": [0.5, 0.75, 1.5, 2.0], "plan_cap_t0": 50.0,
                 "tornado_trials": 10,
                 "tornado_assumptions": ["rejoin", "stall", "jitter", "detect", "fetch", "quorum",
                                         "allreduce"],
                 "calib_steps": 2000, "calib_trials": 2, "calib_iters": 10,
                 "repair_cases": 4, "repair_days": 300},
        "smoke": {"steps": 300, "sweep_trials": 1, "workers": 1, "N_values": [100, 600],
                  "max_wall_t0": 5.0, "world": {"jitter_model": "unit", "allreduce_rule": "abort"},
                  "stall_s": [0.1, 180], "rejoin_min": [10, 60], "mtbf_min": [5, 30],
                  "microbatches": [1, 8], "table_stall_s": [0.1, 180], "plan_trials": 2,
                  "plan_max_trials": None, "plan_r_window": 0, "plan_checkpoint_factors": [2.0],
                  "plan_cap_t0": 10.0, "tornado_trials": 2,
                  "tornado_assumptions": ["stall", "detect"], "calib_steps": 200,
                  "calib_trials": 1, "calib_iters": 4, "repair_cases": 1, "repair_days": 20},
    },
    "82_spare_microbatch": {
        # S̄_b from the committed theory/MC table and a fresh makespan Monte Carlo at N=600, r=8,
        # b=8; SPARe-b (CKPT, repair, drop) against SPARe+CKPT, elastic-rebalance at three fetch
        # times and elastic-drop, planned by spare plan's pipeline (full: its r and C search and
        # run length; smoke: the fast model's r and C), common random numbers across methods and
        # fetch times, paired t, Holm; the same in the llama3 failure mix (issue 24) at llama3_sizes
        # with llama3_steps committed steps (notebook 85's run length: 'auto' asks for >= 10,000,
        # and a 600k-GPU run there lasts about 20 T0) and the same search. Full: about 9 min (paper)
        # + 5 min (llama3) on one core of the loaded 2-core machine.
        "full": {"makespan_N": 600, "makespan_r": 8, "makespan_b": 8, "makespan_trials": 2000,
                 "sizes": [100_000, 600_000], "steps": "auto", "trials": 10, "microbatches": 8,
                 "fetch_s": [0.0, 10.0, 60.0], "quick": False, "workers": 1,
                 "llama3_sizes": [100_000, 600_000], "llama3_steps": 2000, "llama3_trials": 10},
        "smoke": {"makespan_N": 600, "makespan_r": 8, "makespan_b": 8, "makespan_trials": 100,
                  "sizes": [100_000], "steps": 200, "trials": 2, "microbatches": 8,
                  "fetch_s": [0.0, 10.0, 60.0], "quick": True, "workers": 1,
                  "llama3_sizes": [100_000], "llama3_steps": 200, "llama3_trials": 2},
    },
    "85_production_failures": {
        # Every method planned (spare plan's pipeline) in the llama3 mix at 16k, 100k and 600k
        # GPUs (and in the paper's world at 100k and 600k), the ceiling against T_r, the tornado
        # at 100k and 600k. quick: the fast model's r per method, no checkpoint search. calib_mfu,
        # calib_mtbfs: the 405B job's calibration at both ends of Llama 3's MFU range, runs of that
        # many system MTBFs (50: about 50 restarts a run). About 10 min
        # on one core of a shared 2-core machine (numba compile included).
        "full": {"steps": 2000, "trials": 10, "quick": True, "workers": 1,
                 "sizes": [16_384, 100_000, 600_000], "paper_sizes": [100_000, 600_000],
                 "calib_trials": 3, "calib_mfu": [0.38, 0.43], "calib_mtbfs": 50,
                 "ceiling_restart_min": [5, 15, 60],
                 "ceiling_shares": [0.05, 0.15], "ceiling_curve_points": 16,
                 "ceiling_events": 20_000, "tornado_sizes": [100_000, 600_000],
                 "tornado_trials": 4, "tornado_steps": 800, "tornado_assumptions": None},
        "smoke": {"steps": 200, "trials": 2, "quick": True, "workers": 1,
                  "sizes": [16_384, 100_000], "paper_sizes": [100_000],
                  "calib_trials": 1, "calib_mfu": [0.38, 0.43], "calib_mtbfs": 3,
                  "ceiling_restart_min": [5, 60],
                  "ceiling_shares": [0.15], "ceiling_curve_points": 5,
                  "ceiling_events": 5_000, "tornado_sizes": [100_000],
                  "tornado_trials": 2, "tornado_steps": 150,
                  "tornado_assumptions": ["job_share", "stall"]},
    },
    "95_design": {
        # spare design on three jobs (every method, every power-of-two group size, fleet shares
        # 1, 3/4, 1/2, 1/4), the 405B job again at the ends of Llama 3's MFU range. ~2 min.
        "full": {"methods": "all", "sizes": None, "fleet_shares": [1.0, 0.75, 0.5, 0.25],
                 "mfu_range": [0.38, 0.43]},
        "smoke": {"methods": ["spare", "rep", "ckpt", "elastic-drop"], "sizes": [2048, 4096, 8192],
                  "fleet_shares": [1.0, 0.5], "mfu_range": [0.38, 0.43]},
    },
    "90_explore": {
        # Closed forms are instant; the "simulate this point" button runs SPARe+CKPT at the
        # selected r and Rep+CKPT at its closed-form r (serial, in the kernel).
        "full": {"sim_steps": 10_000, "sim_trials": 3},
        "smoke": {"sim_steps": 200, "sim_trials": 1},
    },
}

#: Notebooks whose full-size results are measurements of real processes on the wall clock of the
#: machine that runs them (notebook 45: detection latencies, scheduling noise, and the paths they
#: pick), so no rerun reproduces them byte for byte. A full run of one writes under
#: :data:`MEASUREMENTS_DIR` (not committed), so ``make figures`` leaves the committed record
#: alone; with ``SPARE_RECORD=1`` (``spare figures --record``) it rewrites the committed
#: ``figures/`` and ``data/results/`` files: a new record, committed on purpose.
MEASURED = frozenset({"45_live_emulation"})
MEASUREMENTS_DIR = REPO_ROOT / "_build" / "measurements"

#: The paper's three configurations of the 600k-GPU cluster (SPEC §1, §6).
PAPER_N = (200, 600, 1000)


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def smoke_from_env() -> bool:
    """True when the environment variable ``SPARE_SMOKE`` is set to a truthy value."""
    return _truthy("SPARE_SMOKE")


def record_from_env() -> bool:
    """True when ``SPARE_RECORD`` is set to a truthy value: full runs of the :data:`MEASURED`
    notebooks write the committed folders (a new record) instead of :data:`MEASUREMENTS_DIR`."""
    return _truthy("SPARE_RECORD")


@dataclass(frozen=True)
class RunConfig:
    """Sizes and output folders of one notebook run; index it like a dict for the sizes."""

    notebook: str
    smoke: bool
    seed: int
    sizes: dict[str, Any] = field(repr=False)
    fig_dir: Path = FIGURES_DIR
    results_dir: Path = RESULTS_DIR

    def __getitem__(self, key: str) -> Any:
        return self.sizes[key]


def resolve(notebook: str, smoke: bool | None = None, seed: int = 2026,
            out_dir: str | os.PathLike[str] | None = None) -> RunConfig:
    """Sizes and output folders for ``notebook`` in full or smoke mode.

    Parameters
    ----------
    notebook : str
        Notebook stem, e.g. ``"10_stacking_and_wipeout"``; must be a key of :data:`SIZES`.
    smoke : bool or None
        None: read ``SPARE_SMOKE`` from the environment.
    seed : int
        Root seed of the notebook (recorded for the reader).
    out_dir : path or None
        Where figures and results go. None: ``figures/`` and ``data/results/`` of the repo in
        full mode (for the :data:`MEASURED` notebooks only with ``SPARE_RECORD=1``, else
        ``MEASUREMENTS_DIR/<notebook>/``); in smoke mode ``$SPARE_SMOKE_DIR`` if set, else a
        temporary folder (smoke runs never touch committed files).
    """
    if notebook not in SIZES:
        raise ValueError(f"notebook must be one of {sorted(SIZES)}, got {notebook!r}")
    if smoke is None:
        smoke = smoke_from_env()
    mode = "smoke" if smoke else "full"
    if out_dir is not None:
        fig_dir = Path(out_dir)
        results_dir = Path(out_dir) / "results"
    elif smoke:
        base = Path(os.environ.get("SPARE_SMOKE_DIR") or Path(tempfile.gettempdir()) / "spare-lab-smoke")
        fig_dir, results_dir = base / "figures", base / "results"
    elif notebook in MEASURED and not record_from_env():
        base = MEASUREMENTS_DIR / notebook
        fig_dir, results_dir = base / "figures", base / "results"
    else:
        fig_dir, results_dir = FIGURES_DIR, RESULTS_DIR
    return RunConfig(notebook=notebook, smoke=bool(smoke), seed=int(seed),
                     sizes=dict(SIZES[notebook][mode]), fig_dir=fig_dir, results_dir=results_dir)
