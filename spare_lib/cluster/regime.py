"""The restart-dominant regime (Fig. 1, notebook 50): system MTBF and restart time against the GPU count.
"""

from __future__ import annotations

import numpy as np

#: Per-GPU MTBF implied by Llama 3 (419 unexpected interruptions in 54 days on 16,384 GPUs).
LLAMA3_GPUS = 16_384


LLAMA3_INTERRUPTIONS = 419


LLAMA3_DAYS = 54.0


GPU_MTBF_H = LLAMA3_DAYS * 24.0 * LLAMA3_GPUS / LLAMA3_INTERRUPTIONS


def system_mtbf_s(n_gpus: float | np.ndarray, gpu_mtbf_h: float = GPU_MTBF_H
                  ) -> float | np.ndarray:
    """System MTBF m = per-GPU MTBF / #GPUs, in seconds (≈ 5 min at 600k GPUs)."""
    return gpu_mtbf_h * 3600.0 / np.asarray(n_gpus, dtype=float)


#: Restart model R(G) = R0 + a·G + b·G² (seconds): R0 = 5 min of fixed cost (scheduler,
#: process launch), a·G linear (per-GPU initialisation and checkpoint loading, 25 min at 600k),
#: b·G² quadratic (all-to-all communicator set-up, fitted so that R(600k) = 60 min).
RESTART_R0_S = 300.0


RESTART_A_S = 1500.0 / 600_000


RESTART_B_S = (3600.0 - 300.0 - 1500.0) / 600_000**2


def restart_time_s(n_gpus: float | np.ndarray) -> float | np.ndarray:
    """Restart time R(G) = R0 + a·G + b·G² in seconds, anchored at 60 min for 600k GPUs."""
    g = np.asarray(n_gpus, dtype=float)
    return RESTART_R0_S + RESTART_A_S * g + RESTART_B_S * g * g
