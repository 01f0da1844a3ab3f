"""From a training job to a plan (issue 27): the job model, and the search over group size ×
method × r × C.

Modules
-------
job
    :class:`JobSpec` (a model, a token budget, a GPU fleet, a network and storage) and the GPU
    presets :data:`GPUS`: the planner's cluster for one group size.

The package sits above :mod:`spare_lib.cluster` (it plans with its fast models and, to confirm,
its simulator) and below the CLI and the figures.
"""

from spare_lib.design.job import GPU, GPUS, JobSpec

__all__ = ["GPUS", "GPU", "JobSpec"]
