"""The project's two registries: every knob, and every recovery method.

Modules
-------
knobs
    :data:`~spare_lib.registry.knobs.KNOBS`: name, unit, default, allowed range, one-line help,
    the methods that read it and its CLI aliases, for every cluster, failure, strategy, search
    and evaluation knob. ``ClusterConfig`` validation, the CLI's flags, ``spare sweep``'s point
    keys and ``docs/knobs.md`` all come from it, so a knob has one name, one unit and one
    default everywhere.
methods
    :data:`~spare_lib.registry.methods.METHODS`: one :class:`~spare_lib.registry.methods.MethodSpec`
    per method (name, labels, family, what it reads, whether the predictive model covers it).
    The simulator binds each to its numba hooks (:mod:`spare_lib.cluster.engine.methods`); the
    planner, the predictive model and the figures read the same records.

This package sits below every other one but ``_util`` and ``config`` (import-linter), so that
``theory`` and ``cluster`` alike can read it.
"""

from spare_lib.registry.knobs import KNOBS, Alias, Knob, check_knob, knob, knobs_markdown
from spare_lib.registry.methods import (
    FAMILIES,
    METHODS,
    PAPER_METHODS,
    MethodSpec,
    check_method,
    check_methods,
    method,
)

__all__ = ["KNOBS", "Alias", "Knob", "check_knob", "knob", "knobs_markdown", "FAMILIES", "METHODS",
           "PAPER_METHODS", "MethodSpec", "check_method", "check_methods", "method"]
