"""Real failure logs: find the public datasets, load them into fault traces, describe and fit
them, and synthesize group-failure traces for large clusters (the simulator's
``failure_trace=`` input).

Modules: :mod:`~spare_lib.failures.data` (where the datasets live), :mod:`~spare_lib.failures.trace`
(``FaultTrace`` and loaders), :mod:`~spare_lib.failures.describe` (summary, simultaneous-fault
instants), :mod:`~spare_lib.failures.fit` (censored MLE of inter-arrival and lifetime laws) and
:mod:`~spare_lib.failures.synthesize` (block bootstrap and fitted compound process). The model
note is ``docs/failures.md``. This package sits below ``cluster`` and imports only ``_util``.
"""

from spare_lib.failures.data import DATA_ENV_VAR, DATASETS, data_path
from spare_lib.failures.describe import TraceSummary, fault_instants, instant_labels, summary
from spare_lib.failures.fit import DISTS, fit_durations, fit_interarrival, fit_lifetimes, load_lifetimes
from spare_lib.failures.synthesize import METHODS, servers_to_groups, synthesize
from spare_lib.failures.trace import (
    FORMATS,
    STEPFUN_N_SERVERS,
    TIME_UNITS_S,
    TITAN_N_NODES,
    FaultTrace,
    load_trace,
)

__all__ = [
    "DATASETS",
    "DATA_ENV_VAR",
    "DISTS",
    "FORMATS",
    "METHODS",
    "STEPFUN_N_SERVERS",
    "TIME_UNITS_S",
    "TITAN_N_NODES",
    "FaultTrace",
    "TraceSummary",
    "data_path",
    "fault_instants",
    "fit_durations",
    "fit_interarrival",
    "fit_lifetimes",
    "instant_labels",
    "load_lifetimes",
    "load_trace",
    "servers_to_groups",
    "summary",
    "synthesize",
]
