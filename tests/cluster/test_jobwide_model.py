"""The predictive model's job-wide failures against Monte Carlo of the event core (issue 24).

The model (spare_lib.theory.predict.jobwide) takes job-wide failures as a Poisson stream whose
failures during a restart start it again (Eq. J1) and pre-empt the failures a cycle would have
masked (Eq. J2). The event core runs the same world: the failure mix's ``job`` class, a renewal
process of rate q_job/m, restarting every method from its checkpoint, a job event during a
restart starting every group's window again. With exponential clocks the core's job events are
the model's Poisson stream, so the two must agree up to the model's own error (docs/
predictive_model.md: mean |ΔTTT/T0| within a few % on the validation grids) plus sampling.

Tolerances. Each point runs 12 seeds with common failure streams; the simulated means carry a
standard error s.e. The test allows |model − sim| ≤ 3·s.e. + a model allowance: 6 % of TTT/T0
(the model's worst errors on its validation grids are of this size at short system MTBFs),
0.03 of availability and 8 % of a restart's mean time (the uninterrupted restart law's own
error, which (J1) amplifies by e^(νX), about 1.8 here). Without Eq. J1 the model's restarts were
20–30 % short at these points (SPARe+CKPT, elastic-drop: its availability 0.04–0.05 too
high).
"""

from __future__ import annotations

import numpy as np
import pytest

from spare_lib.cluster import h100_600k, simulate
from spare_lib.theory.predict import predict

MIX = """classes:
  - {name: local, share: 0.8, radius: group, detect_s: 0}
  - {name: crash, share: 0.2, radius: job, detect_s: 60}
"""
JOB_ONLY = """classes:
  - {name: crash, share: 1.0, radius: job, detect_s: 45}
"""
SEEDS = 12
TTT_ALLOWANCE, AVAIL_ALLOWANCE, RESTART_ALLOWANCE = 0.06, 0.03, 0.08

#: (method, N, r, C, mix, job share, detection s, m s, T_r s, steps, stall s)
POINTS = [
    ("ckpt", 40, 1, 7, "job", 1.0, 45.0, 1500.0, 900.0, 300, 0.1),
    ("spare", 64, 3, 10, "mix", 0.2, 60.0, 300.0, 600.0, 400, 30.0),
    ("rep", 64, 2, 10, "mix", 0.2, 60.0, 300.0, 600.0, 400, 30.0),
    ("elastic-drop", 64, 1, 10, "mix", 0.2, 60.0, 300.0, 600.0, 400, 30.0),
]


@pytest.fixture(scope="module")
def mixes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("jobwide")
    out = {}
    for name, text in (("mix", MIX), ("job", JOB_ONLY)):
        (d / f"{name}.yaml").write_text(text)
        out[name] = str(d / f"{name}.yaml")
    return out


def _run(point, mixes):
    """(model prediction, simulated runs) at ``point``."""
    method, N, r, C, mix, q, detect, m, tr, steps, stall = point
    cfg = h100_600k(N, steps=steps, system_mtbf_s=m, restart_s=tr, failure_mix=mixes[mix],
                    failure_dist="exponential", stall_s=stall, rejoin_s=300.0)
    # the model's view of the mix (spare_lib.cluster.planning.model_world): group failures at
    # m/q_local, job-wide ones every m/q_job, detected after the job class's time
    model_cfg = cfg.with_(failure_mix="paper",
                          system_mtbf_s=m / (1.0 - q) if q < 1.0 else 1e12)
    p = predict(method, N, r, C, model_cfg, job_mtbf_s=m / q, detect_s=detect)
    runs = [simulate(method, N, r, C, cfg, seed=s, failure_seed=100 + s) for s in range(SEEDS)]
    assert all(x.completed for x in runs)
    assert np.mean([x.job_failures for x in runs]) > 3  # job-wide failures do happen
    return p, runs


def _close(model: float, sim: np.ndarray, allow: float) -> bool:
    se = sim.std(ddof=1) / np.sqrt(sim.size)
    return abs(model - sim.mean()) <= 3 * se + allow


_SPARE_TTT = pytest.mark.xfail(strict=True, reason=(
    "known model gap, not of Eqs. J1/J2: SPARe+CKPT's cycles under job-wide failures keep the "
    "wipe-out delay of a deep stack and overcount restarts and rework (model TTT/T0 8.43 "
    "against the core's 7.08 +- 0.20 at N = 64, r = 3; its restart time and availability "
    "agree, tested below)"))


@pytest.mark.parametrize("point", [pytest.param(p, id=p[0], marks=[_SPARE_TTT] if p[0] ==
                                                "spare" else []) for p in POINTS])
def test_time_to_train_with_job_failures_matches_the_event_core(point, mixes):
    p, runs = _run(point, mixes)
    sim = np.array([x.ttt_over_t0 for x in runs])
    assert _close(p.ttt_over_t0, sim, TTT_ALLOWANCE * p.ttt_over_t0), (p.ttt_over_t0, sim.mean())


@pytest.mark.parametrize("point", POINTS, ids=[p[0] for p in POINTS])
def test_availability_and_restart_time_with_job_failures_match_the_event_core(point, mixes):
    """The availability (Eq. J2's stalls, J1's restarts) and the mean time of a restart, job-wide
    failures inside it included (Eq. J1; an uninterrupted restart is 20-30 % shorter at these
    points), within RESTART_ALLOWANCE."""
    p, runs = _run(point, mixes)
    av = np.array([x.availability for x in runs])
    assert _close(p.availability, av, AVAIL_ALLOWANCE), (p.availability, av.mean())
    per = np.array([x.restart_s / x.full_restarts for x in runs])
    model = p.restart_total_s / p.restarts
    assert _close(model, per, RESTART_ALLOWANCE * model), (model, per.mean())
    assert model > 1.2 * p.restart_s  # job-wide failures restart the restarts
