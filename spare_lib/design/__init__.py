"""From a training job to a plan (issue 27): the job model, and the search over group size ×
method × r × C.

Modules
-------
job
    :class:`JobSpec` (a model, a token budget, a GPU fleet, a network and storage) and the GPU
    presets :data:`GPUS`, the worked job :data:`LLAMA3_405B`: the planner's cluster for one group size.
search
    :func:`design_search` over group size × method × r × C, the ranking and the Pareto front
    (:class:`DesignResult`), and :func:`confirm` with the simulator.

The package sits above :mod:`spare_lib.cluster` (it plans with its fast models and, to confirm,
its simulator) and below the CLI and the figures.
"""

from spare_lib.design.job import GPU, GPUS, LLAMA3_405B, JobSpec
from spare_lib.design.search import DesignPlan, DesignResult, confirm, design_search, group_sizes

__all__ = ["GPUS", "GPU", "LLAMA3_405B", "DesignPlan", "DesignResult", "JobSpec", "confirm", "design_search",
           "group_sizes"]
