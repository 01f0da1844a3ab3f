"""What the fast (predictive) model sees of a plan's failure world, and what it leaves out.

The simulation applies every knob of the failure world (:data:`~.spec.WORLD_KNOBS`: the failure
mix, detection, the jitter model, the all-reduce rule, elastic-drop's quorum) to every method.
The predictive model (:func:`spare_lib.theory.predict.predict`) has fewer mechanisms, so
:func:`model_world` maps the world onto them and names the rest:

* a mix's ``job`` classes become its job-wide hazard: rate ν = q_job/m (q_job the job share of
  the mix, m the system MTBF) and one detection time, the share-weighted mean of the job
  classes' (``detect_s`` for a class that sets none);
* the ``group`` and ``domain`` classes become the per-group failures at system MTBF
  m/(q_group + q_domain): a domain event is counted as one group failure (the model has no
  failure domains);
* the mean rejoin time of those classes (share-weighted; ``rejoin_s`` where a class sets none)
  is the model's ``rejoin_s``, and their mean detection time is added to the stall a failure
  event costs the methods that continue past it;
* the jitter model, the all-reduce rule, the quorum and detection before a wipe-out's restart are
  not in the model: :attr:`ModelWorld.ignored` lists the ones a plan sets, and the plan prints
  them (the simulation carries them).

With the paper's world (every knob at its default) the model's inputs are the cluster's own, so
the fast plan is unchanged bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from spare_lib.cluster.planning.spec import WORLD_KNOBS, ClusterSpec
from spare_lib.failures.mix import failure_mix
from spare_lib.registry.knobs import KNOBS


@dataclass(frozen=True)
class ModelWorld:
    """The predictive model's view of a failure world (module docstring).

    Attributes
    ----------
    overrides : dict
        :class:`~spare_lib.cluster.ClusterConfig` fields for the model's config
        (``system_mtbf_s`` of the group-local failures, ``rejoin_s``, ``stall_s``,
        ``failure_mix='paper'``); empty in the paper's world.
    job_mtbf_s : float
        Mean time between job-wide failures m/q_job (∞: none).
    detect_s : float
        Detection time of a job-wide failure (share-weighted mean of the job classes).
    job_share : float
        q_job, the mix's share of job-wide failure events.
    ignored : tuple of str
        What the plan sets that the model leaves out, one phrase each.
    """

    overrides: dict[str, Any]
    job_mtbf_s: float = math.inf
    detect_s: float = 0.0
    job_share: float = 0.0
    ignored: tuple[str, ...] = ()

    @property
    def job_kwargs(self) -> dict[str, float]:
        """``job_mtbf_s`` and ``detect_s`` for :func:`~spare_lib.theory.predict.predict` (empty
        without job-wide failures, so the paper's calls are the same calls)."""
        if math.isinf(self.job_mtbf_s):
            return {}
        return {"job_mtbf_s": self.job_mtbf_s, "detect_s": self.detect_s}

    def note(self) -> str | None:
        """One line for the plan when the model leaves out part of the world, else None."""
        if not self.ignored:
            return None
        return ("the fast model ignores " + "; ".join(self.ignored) +
                " (the simulation, --simulate, carries them)")


def _mean(classes: tuple, attr: str, default: float) -> float:
    w = sum(c.share for c in classes)
    if w <= 0:
        return default
    vals = [(c.share, default if getattr(c, attr) is None else getattr(c, attr)) for c in classes]
    if any(math.isinf(v) for s, v in vals if s > 0):
        return math.inf
    return sum(s * v for s, v in vals) / w


def model_world(spec: ClusterSpec) -> ModelWorld:
    """The predictive model's view of ``spec``'s failure world (module docstring)."""
    knob = spec.knob
    if all(knob(k) == KNOBS[k].default for k in (*WORLD_KNOBS, "rejoin_clock")):
        return ModelWorld({})
    mix = failure_mix(knob("failure_mix"))
    ignored = []
    overrides: dict[str, Any] = {}
    q_job = mix.share("job")
    local = mix.of_radius("group") + mix.of_radius("domain")
    q_local = sum(c.share for c in local)
    det_knob = float(knob("detect_s"))
    m = spec.system_mtbf_s
    if not mix.is_paper:
        overrides["system_mtbf_s"] = min(m / q_local, KNOBS["system_mtbf_s"].hi) \
            if q_local > 0 else KNOBS["system_mtbf_s"].hi
        overrides["failure_mix"] = "paper"
        rej = _mean(local, "rejoin_s", float(knob("rejoin_s")))
        if rej != float(knob("rejoin_s")):
            overrides["rejoin_s"] = rej
        if mix.share("domain") > 0:
            ignored.append(f"failure domains (the mix's domain events, "
                           f"{100 * mix.share('domain'):.3g} % of failures, count as one group's "
                           "failure each)")
    det_local = _mean(local, "detect_s", det_knob) if local else 0.0
    if det_local > 0:
        overrides["stall_s"] = float(knob("stall_s")) + det_local
        ignored.append(f"the detection time of group failures before a wipe-out's restart (the "
                       f"model adds the mean detection, {det_local:.3g} s, to each failure "
                       "event's stall)")
    job_mtbf = m / q_job if q_job > 0 else math.inf
    det_job = _mean(mix.of_radius("job"), "detect_s", det_knob) if q_job > 0 else 0.0
    if knob("jitter_model") != "paper":
        ignored.append(f"jitter_model = {knob('jitter_model')} (the model's barrier is the "
                       "paper's)")
    if knob("allreduce_rule") != "paper":
        ignored.append(f"allreduce_rule = {knob('allreduce_rule')} (the model charges the "
                       "paper's cut-short all-reduce)")
    if knob("min_live") > 0:
        ignored.append(f"elastic-drop's quorum min_live = {knob('min_live'):g}")
    if knob("rejoin_clock") != "notice":
        ignored.append("rejoin_clock = failure (the model counts rejoin_s from the notice)")
    return ModelWorld(overrides, job_mtbf, det_job, q_job, tuple(ignored))


#: Job-wide failures *bind* when their ceiling alone accounts for at least this share of the
#: best strategy's lost availability: (1 − A_job) ≥ BIND_SHARE·(1 − A_best).
BIND_SHARE = 0.5


def job_ceiling(spec: ClusterSpec, best_availability: float, best_label: str) -> dict[str, Any] | None:
    """The availability ceiling of ``spec``'s job-wide failures
    (:func:`spare_lib.theory.ceiling.ceiling_levers`: the closed form for exponential failures,
    the renewal Monte Carlo for a Weibull law) against the best strategy's
    availability, and one sentence naming it and the knobs that move it when it binds
    (:data:`BIND_SHARE`); None without job-wide failures.

    Returns
    -------
    dict or None
        ``ceiling``, ``job_share``, ``job_mtbf_s``, ``restart_s``, ``detect_s``,
        ``best_availability``, ``binds``, ``half_restart``, ``half_job_share``, ``statement``.
    """
    from spare_lib.theory.ceiling import ceiling_levers

    w = model_world(spec)
    if w.job_share <= 0:
        return None
    lv = ceiling_levers(w.job_share, spec.system_mtbf_s, spec.restart_s, w.detect_s,
                        spec.failure_dist, spec.weibull_shape)
    a = lv["ceiling"]
    best_availability = min(max(float(best_availability), 0.0), 1.0)  # a model outside [0, 1]
    binds = bool((1.0 - a) >= BIND_SHARE * (1.0 - best_availability))
    head = (f"Job-wide failures ({100 * w.job_share:.3g} % of failures: one every "
            f"{w.job_mtbf_s / 60:.3g} min, detected after {w.detect_s:.3g} s, then T_r = "
            f"{spec.restart_s / 60:.3g} min) cap every strategy's availability at "
            f"{100 * a:.3g} % (" + ("1/(e^(lambda*T_r) + lambda*d)" if spec.failure_dist ==
                                 "exponential" else f"renewal of their Weibull k = "
                                 f"{spec.weibull_shape:g} law") + ")")
    if binds:
        text = (f"{head}, and they bind: {best_label} reaches {100 * best_availability:.3g} %, "
                f"so no strategy gets past {100 * a:.3g} % here; what moves the ceiling is T_r "
                f"(--restart-s; halved: {100 * lv['half_restart']:.3g} %) and the job-level "
                f"share (--failure-mix; halved: {100 * lv['half_job_share']:.3g} %), not the "
                "recovery strategy.")
    else:
        text = (f"{head}; {best_label} reaches {100 * best_availability:.3g} %, so the ceiling "
                "does not bind.")
    return {"ceiling": a, "job_share": w.job_share, "job_mtbf_s": w.job_mtbf_s,
            "restart_s": spec.restart_s, "detect_s": w.detect_s,
            "best_availability": float(best_availability), "binds": binds,
            "half_restart": lv["half_restart"], "half_job_share": lv["half_job_share"],
            "statement": text}


__all__ = ["BIND_SHARE", "ModelWorld", "job_ceiling", "model_world"]
