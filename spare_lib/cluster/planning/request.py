"""What a plan is asked: the cluster, the failures, the methods, the search and the evaluation.

One :class:`PlanRequest` describes every mode of ``spare plan``: the paper's three methods or
any list of registered methods (``--strategies``), failures from the cluster's Weibull or
exponential law or from a real fault log (``--failures FILE``: :class:`TraceFailures`), the fast
model alone or with simulated trials (``--simulate``). :func:`spare_lib.cluster.planning.pipeline.run_plan`
takes it through candidates, evaluation and one verdict. Every field is a knob of the registry
(:data:`spare_lib.registry.knobs.KNOBS`) with the registry's default, or a structured input
built from knobs (the cluster :class:`~spare_lib.cluster.planning.fast.ClusterSpec`, the trace).

:meth:`PlanRequest.assumptions` lists the defaults that shape the answer without the user
having asked for them (failed groups that never rejoin, the stall every method pays, a log's
assumed GPUs per node...): the planner prints them with the plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from spare_lib._util.validate import check_positive
from spare_lib.cluster.planning.fast import CKPT_FACTORS
from spare_lib.cluster.planning.spec import ClusterSpec
from spare_lib.failures.mix import failure_mix
from spare_lib.registry.knobs import KNOBS
from spare_lib.registry.methods import PAPER_METHODS, check_methods, method

#: ``--failures-method``: how group failures are synthesized from a log.
TRACE_METHODS = ("block-bootstrap", "fitted")
#: ``--failures-placement``: groups on the servers.
TRACE_PLACEMENTS = ("contiguous", "random")
#: ``--failures-law``: the fitted law of the gaps (with 'fitted').
TRACE_LAWS = ("weibull", "exponential", "lognormal", "gamma")
#: ``--failures-checkpoint``: the checkpoint interval C0 of the r search with a log.
TRACE_CHECKPOINT = ("closed-form", "paper")


@dataclass(frozen=True)
class TraceFailures:
    """Failures from a real fault log, synthesized at the planned cluster's size per trial.

    Attributes
    ----------
    trace : FaultTrace
        The log (:func:`spare_lib.failures.load_trace`).
    name : str
        What the user gave (path or dataset name), for the output.
    method, law, placement :
        Synthesis: block-bootstrap tiles of the log or a fitted compound renewal process with
        ``law``; groups on servers contiguous or permuted per trial.
    gpus_per_server : int or None
        GPUs per server of the planned cluster (None: the log's GPUs per node).
    tolerance_s : float
        Faults within this many seconds are one instant.
    chunk_s, horizon_s : float or None
        Length of a synthesized block (None: the log's window) and the first horizon of a
        trial's failures (None: 1.5 × the closed-form time-to-train of the slowest candidate).
    checkpoint_rule : str
        C0 of the r search: T_c* at the log's system MTBF ('closed-form') or the paper's table.
    gpus_per_node_given : bool
        Whether the user set the log's GPUs per node (else the loader's default is an
        assumption the plan prints).
    """

    trace: Any
    name: str = ""
    method: str = "block-bootstrap"
    law: str = "weibull"
    placement: str = "contiguous"
    gpus_per_server: int | None = None
    tolerance_s: float = 1.0
    chunk_s: float | None = None
    horizon_s: float | None = None
    checkpoint_rule: str = "closed-form"
    gpus_per_node_given: bool = True

    def __post_init__(self) -> None:
        for name, v, allowed in (("failures_method", self.method, TRACE_METHODS),
                                 ("failures_law", self.law, TRACE_LAWS),
                                 ("failures_placement", self.placement, TRACE_PLACEMENTS),
                                 ("failures_checkpoint", self.checkpoint_rule, TRACE_CHECKPOINT)):
            if v not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {v!r}")
        if self.horizon_s is not None:  # no knob (derived by default): in (0, inf)
            check_positive("horizon_s", self.horizon_s)

    def assumptions(self) -> tuple[str, ...]:
        """What the log's defaults assume (printed with the plan)."""
        out = []
        gpn = getattr(self.trace, "gpus_per_node", None)
        if not self.gpus_per_node_given:
            shown = "8 (the synthesizer's default)" if gpn is None else str(gpn)
            out.append(f"the log's nodes hold {shown} GPUs each (the dataset's default; set "
                       f"--failures-gpus-per-node): the failure rate per GPU scales with it")
        return tuple(out)


@dataclass(frozen=True)
class PlanRequest:
    """Everything a plan needs (defaults: the knob registry's).

    Attributes
    ----------
    spec : ClusterSpec
        The cluster, with its run knobs (:attr:`ClusterSpec.run`: stall, rejoin, micro-batches,
        fetch).
    methods : tuple of str
        Registered methods to plan for (default: the paper's three).
    trace : TraceFailures or None
        Failures from a log instead of the spec's failure law.
    spare_r, rep_r : tuple of int or None
        Explicit candidates (an empty tuple skips the method); None: around the fast model's r*.
    r_window, checkpoint_factors : search knobs.
    layout, rep_placement : SPARe's layout, Rep's replica sets.
    model : str
        The fast model ('predict', 'finite', 'paper').
    trials : int or None
        Simulated trials per candidate; None: the fast model only.
    max_trials : int or None
        Sequential trials: the methods' choices get more trials (doubling) until the leading
        pair's paired interval excludes 0, up to this many; None: ``trials`` only.
    steps : int or 'auto'
        Committed steps per simulated run.
    min_restarts, run_cap_t0, common_failures, seed : evaluation knobs.
    backend, workers, client, cache_dir, progress :
        Where the simulations run (:func:`spare_lib.cluster.runs.executor.execute`).
    """

    spec: ClusterSpec
    methods: tuple[str, ...] = PAPER_METHODS
    trace: TraceFailures | None = None
    spare_r: tuple[int, ...] | None = None
    rep_r: tuple[int, ...] | None = None
    r_window: int = KNOBS["r_window"].default
    checkpoint_factors: tuple[float, ...] = CKPT_FACTORS
    layout: str = KNOBS["layout"].default
    rep_placement: str = KNOBS["rep_placement"].default
    model: str = KNOBS["model"].default
    trials: int | None = KNOBS["simulate"].default
    max_trials: int | None = KNOBS["max_trials"].default
    steps: int | str = KNOBS["plan_steps"].default
    min_restarts: int = KNOBS["min_restarts"].default
    run_cap_t0: float = KNOBS["run_cap_t0"].default
    common_failures: bool = KNOBS["common_failures"].default
    seed: int = KNOBS["seed"].default
    backend: str = "processes"
    workers: int | None = None
    client: Any = field(default=None, compare=False)
    cache_dir: str | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.spec, ClusterSpec):
            raise ValueError(f"spec must be a ClusterSpec (cluster_spec(...)), got "
                             f"{type(self.spec).__name__}")
        object.__setattr__(self, "methods", check_methods(self.methods))
        for name in ("r_window", "layout", "rep_placement", "model", "min_restarts",
                     "run_cap_t0", "common_failures", "seed"):
            KNOBS[name].check(getattr(self, name))
        if self.trials is not None:
            KNOBS["simulate"].check(self.trials, "trials")
        if self.max_trials is not None:
            KNOBS["max_trials"].check(self.max_trials)
        if self.steps != "auto":
            KNOBS["steps"].check(self.steps)
        for f in self.checkpoint_factors:
            if not (isinstance(f, (int, float)) and math.isfinite(f) and 0 < f <= 100):
                raise ValueError(f"checkpoint_factors must be numbers in (0, 100], got {f!r}")
        if self.trace is not None and not isinstance(self.trace, TraceFailures):
            raise ValueError(f"trace must be a TraceFailures or None, got {type(self.trace).__name__}")
        if self.workers is not None and (isinstance(self.workers, bool) or not isinstance(
                self.workers, int) or self.workers < 1):
            raise ValueError(f"workers must be an integer >= 1 or None, got {self.workers!r}")

    @property
    def N(self) -> int:
        """Data-parallel groups of the cluster."""
        return self.spec.N

    def assumptions(self) -> tuple[str, ...]:
        """Defaults that shape the answer, one line each (printed with every plan)."""
        s = self.spec
        out = []
        never = [method(m).label for m in self.methods if not method(m).rejoins]
        back = [method(m).label for m in self.methods if method(m).rejoins]
        if never:
            out.append(f"{', '.join(never)}: failed groups stay dead until the next global "
                       "restart (they never rejoin)")
        if back:
            rj = s.knob("rejoin_stall_s")
            rjs = s.knob("stall_s") if rj is None else rj
            out.append(f"{', '.join(back)}: a failed group rejoins after rejoin_s = "
                       f"{s.knob('rejoin_s'):g} s, with a {rjs:g} s stall per rejoin batch")
        out.append(f"every method that continues past a failure pays stall_s = "
                   f"{s.knob('stall_s'):g} s per failure event (one per poll that notices "
                   "failures)")
        if any(not method(m).exact_batch for m in self.methods):
            out.append("elastic-drop commits steps without the dead groups' samples (more steps "
                       "to the same number of samples)")
        if any("microbatches" in method(m).knobs for m in self.methods):
            out.append(f"elastic-rebalance splits each shard in b = {s.knob('microbatches')} "
                       f"micro-batches and fetches data for {s.knob('fetch_s'):g} s after each "
                       "change of assignment")
        mix = failure_mix(s.knob("failure_mix"))
        if any(method(m).restarts_when == "all-dead" for m in self.methods) and \
                mix.share("job") == 0:
            out.append("the elastic methods restart only when every group is dead at once, so "
                       "they checkpoint once, at the end")
        if self.trace is None:
            out.append(self._failures_line(mix))
        else:
            out += list(self.trace.assumptions())
        out += self._world_lines()
        return tuple(out)

    def _failures_line(self, mix: Any) -> str:
        s = self.spec
        law = f"Weibull k = {s.weibull_shape:g}" if s.failure_dist == "weibull" else "exponential"
        det = s.knob("detect_s")
        detect = "no detection delay" if det == 0 else f"detection {det:g} s"
        if mix.is_paper:
            return (f"failures: independent per group, {law}, system MTBF m = "
                    f"{s.system_mtbf_s / 60:.3g} min, {detect}, no job-wide failures")
        shares = ", ".join(f"{100 * mix.share(r):.3g} % {r}" for r in ("group", "domain", "job")
                           if mix.share(r) > 0)
        return (f"failures: the '{mix.name}' mix ({shares} of the failure events; each class "
                f"with its detection and rejoin time, docs/failure_mix.md), {law}, system MTBF "
                f"m = {s.system_mtbf_s / 60:.3g} min in all; a job-wide failure restarts every "
                "method from its checkpoint" + (
                    "; domain events kill one group each (domain_size = 1: set --domain-size)"
                    if mix.share("domain") > 0 and s.domain_size == 1 else ""))

    def _world_lines(self) -> list[str]:
        s = self.spec
        out = []
        jm = s.knob("jitter_model")
        if jm != "paper":
            extra = (f" (a share {s.knob('straggler_share'):g} of the groups slower by "
                     f"{s.knob('straggler_slowdown'):g})" if jm == "straggler" else "")
            out.append(f"jitter model: {jm}{extra}, for every method")
        if s.knob("allreduce_rule") != "paper":
            out.append("all-reduce rule: abort (a commit after a noticed failure pays the aborted "
                       "fraction and a full all-reduce), for every method")
        if s.knob("rejoin_clock") != "notice":
            out.append("rejoin clock: a failed group's rejoin_s counts from the failure plus its "
                       "detection time, not from the poll that notices it")
        if s.knob("min_live") > 0 and "elastic-drop" in self.methods:
            out.append(f"elastic-drop restarts from its checkpoint below a quorum of "
                       f"min_live = {s.knob('min_live'):g} of the N groups")
        return out


__all__ = ["TRACE_CHECKPOINT", "TRACE_LAWS", "TRACE_METHODS", "TRACE_PLACEMENTS", "PlanRequest",
           "TraceFailures"]
