"""The simulator checked against real processes on a scaled clock (issue 28).

A layer between ``figures`` and ``cluster | runtime``: it is the one place that imports both
the discrete-event simulator (:mod:`spare_lib.cluster`) and the real-process runtime
(:mod:`spare_lib.runtime`), which never import each other. :mod:`.compare` turns a
``ClusterConfig`` into the emulation's durations, draws one failure trace for every method,
runs emulation and simulator side by side on it and tabulates agreement and the emulation's
noise floor; :mod:`.explain` finds where a run leaves the simulator's path and measures the
simulator's own sensitivity to perturbations of the measured size; notebook 45 shows the
result.
"""

from spare_lib.livecheck.compare import (
    METRICS,
    agreement,
    emulation_spec,
    noise_floor,
    restart_table,
    run_side_by_side,
    shared_trace,
)
from spare_lib.livecheck.explain import (
    DECISIONS,
    SINGLE_KNOBS,
    first_divergence,
    knob_scan,
    notice_lag,
    perturbation_band,
)

__all__ = ["DECISIONS", "METRICS", "SINGLE_KNOBS", "agreement", "emulation_spec",
           "first_divergence", "knob_scan", "noise_floor", "notice_lag", "perturbation_band",
           "restart_table", "run_side_by_side", "shared_trace"]
