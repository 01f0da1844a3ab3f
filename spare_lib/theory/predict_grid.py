"""Old path of :mod:`spare_lib.theory.predict.grid`, kept importable while ``cluster/`` and ``cli/``
move to the subpackage (issue 23); new code imports ``spare_lib.theory.predict``."""

from spare_lib.theory.predict.grid import (
    Recommendation,
    argmin_int,
    default_r_values,
    optimise_checkpoint,
    optimum_curve,
    recommend,
)

__all__ = ["Recommendation", "argmin_int", "default_r_values", "optimise_checkpoint",
           "optimum_curve", "recommend"]
