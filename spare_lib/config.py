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
