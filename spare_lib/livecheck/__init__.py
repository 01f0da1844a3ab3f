"""The simulator checked against real processes on a scaled clock (issue 28).

A layer between ``figures`` and ``cluster | runtime``: it is the one place that imports both
the discrete-event simulator (:mod:`spare_lib.cluster`) and the real-process runtime
(:mod:`spare_lib.runtime`), which never import each other. :mod:`.compare` turns a
``ClusterConfig`` into the emulation's durations, draws one failure trace for every method,
runs emulation and simulator side by side on it and tabulates agreement and the emulation's
noise floor; notebook 45 shows the result.
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

__all__ = ["METRICS", "agreement", "emulation_spec", "noise_floor", "restart_table",
           "run_side_by_side", "shared_trace"]
