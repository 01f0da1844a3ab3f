"""Real failure logs: find the public datasets, load them into fault traces, describe and fit
them, and synthesize group-failure traces for large clusters (the simulator's
``failure_trace=`` input).

Modules: :mod:`~spare_lib.failures.data` (where the datasets live), :mod:`~spare_lib.failures.trace`
(``FaultTrace`` and loaders), :mod:`~spare_lib.failures.describe` (summary, simultaneous-fault
instants), :mod:`~spare_lib.failures.fit` (censored MLE of inter-arrival and lifetime laws),
:mod:`~spare_lib.failures.synthesize` (block bootstrap and fitted compound process), and
:mod:`~spare_lib.failures.mix` (failure mixes: blast radius, detection and rejoin time of each
class of failures). The model notes are ``docs/failures.md`` and ``docs/failure_mix.md``.
This package sits below ``cluster`` and imports only ``_util``.
"""

from spare_lib.failures.data import DATA_ENV_VAR, DATASETS, data_path
from spare_lib.failures.describe import TraceSummary, fault_instants, instant_labels, summary
from spare_lib.failures.fit import DISTS, fit_durations, fit_interarrival, fit_lifetimes, load_lifetimes
from spare_lib.failures.mix import PRESETS as MIX_PRESETS
from spare_lib.failures.mix import FailureClass, FailureMix, failure_mix, load_mix
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
    "FailureClass",
    "FailureMix",
    "FaultTrace",
    "MIX_PRESETS",
    "TraceSummary",
    "data_path",
    "failure_mix",
    "fault_instants",
    "fit_durations",
    "fit_interarrival",
    "fit_lifetimes",
    "instant_labels",
    "load_lifetimes",
    "load_mix",
    "load_trace",
    "servers_to_groups",
    "summary",
    "synthesize",
]
