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
        "full": {"N": 16, "r": 3, "n_steps": 60, "checkpoint_every": 8, "lr": 0.5,
                 "timeout_s": 3.0, "shard_delay_s": 0.01, "process_reference": True,
                 "weibull_steps": 60, "weibull_mtbf_steps": 4.0},
        "smoke": {"N": 16, "r": 3, "n_steps": 20, "checkpoint_every": 4, "lr": 0.5,
                  "timeout_s": 1.5, "shard_delay_s": 0.01, "process_reference": False,
                  "weibull_steps": 0, "weibull_mtbf_steps": 4.0},
    },
    "50_restart_dominant_regime": {
        # N = 600 groups at every cluster size; 2000 steps are enough for the restart share
        # (a steady-state ratio); runs that cannot finish stop at max_wall_t0 · T0.
        "full": {"gpus": [16_384, 32_768, 65_536, 131_072, 262_144, 600_000, 1_000_000],
                 "steps": 2000, "trials": 3, "workers": 2, "max_wall_t0": 50.0},
        "smoke": {"gpus": [16_384, 131_072, 600_000], "steps": 150, "trials": 1, "workers": 1,
                  "max_wall_t0": 20.0},
    },
    "60_cluster_600k": {
        # 55 (N, r) points × 2 methods × trials, 10,000 steps each (the paper's 3 trials; 5 here).
        "full": {"steps": 10_000, "trials": 5, "workers": 2, "r_values": None,
                 "ckpt_only_max_wall_t0": 100.0, "dist_trials": 3},
        "smoke": {"steps": 300, "trials": 1, "workers": 1, "r_values": [2, 3, 9],
                  "ckpt_only_max_wall_t0": 20.0, "dist_trials": 1},
    },
    "90_explore": {
        # Closed forms are instant; the "simulate this point" button runs SPARe+CKPT at the
        # selected r and Rep+CKPT at its closed-form r (serial, in the kernel).
        "full": {"sim_steps": 10_000, "sim_trials": 3},
        "smoke": {"sim_steps": 200, "sim_trials": 1},
    },
}

#: The paper's three configurations of the 600k-GPU cluster (SPEC §1, §6).
PAPER_N = (200, 600, 1000)


def smoke_from_env() -> bool:
    """True when the environment variable ``SPARE_SMOKE`` is set to a truthy value."""
    return os.environ.get("SPARE_SMOKE", "").strip().lower() in {"1", "true", "yes", "on"}


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
        full mode; a temporary folder in smoke mode (smoke runs never touch committed files).
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
        base = Path(tempfile.gettempdir()) / "spare-lab-smoke"
        fig_dir, results_dir = base / "figures", base / "results"
    else:
        fig_dir, results_dir = FIGURES_DIR, RESULTS_DIR
    return RunConfig(notebook=notebook, smoke=bool(smoke), seed=int(seed),
                     sizes=dict(SIZES[notebook][mode]), fig_dir=fig_dir, results_dir=results_dir)
