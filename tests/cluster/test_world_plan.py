"""The failure world in the planner (issue 24): the knobs reach the plan and the simulation, the
fast model says what it leaves out, bad values are one line, the JSON validates, and the
availability ceiling of job-wide failures matches the simulation.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from cli_runner import run

from spare_lib.cli import build_parser
from spare_lib.cli.plan import request_from_args
from spare_lib.cluster import ClusterConfig, simulate
from spare_lib.cluster.planning import PlanRequest, cluster_spec, run_plan
from spare_lib.cluster.planning.models import fast_model
from spare_lib.cluster.planning.world_model import job_ceiling, model_world
from spare_lib.theory.ceiling import (
    availability_ceiling,
    availability_ceiling_renewal,
    ceiling_levers,
)

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "plan.schema.json").read_text())
JOB_ONLY = "classes:\n  - {name: crash, share: 1.0, radius: job, detect_s: 60}\n"


def _args(*argv: str):  # noqa: ANN202
    return build_parser().parse_args(["plan", *argv])


def test_world_flags_reach_the_request_and_the_simulated_config() -> None:
    a = _args("--failure-mix", "llama3", "--jitter-model", "straggler", "--straggler-share",
              "0.05", "--detect-s", "30", "--allreduce-rule", "abort", "--min-live", "0.5",
              "--strategies", "spare,elastic-drop")
    req = request_from_args(a)
    cfg = req.spec.cluster_config(steps=100)
    assert (cfg.failure_mix, cfg.jitter_model, cfg.straggler_share, cfg.detect_s,
            cfg.allreduce_rule, cfg.min_live) == ("llama3", "straggler", 0.05, 30.0, "abort", 0.5)
    lines = "\n".join(req.assumptions())
    assert "'llama3' mix" in lines and "straggler" in lines and "abort" in lines
    assert "min_live = 0.5" in lines


def test_paper_world_given_explicitly_is_the_same_cluster_and_plan() -> None:
    base = cluster_spec(600_000, 3000)
    same = cluster_spec(600_000, 3000, failure_mix="paper", jitter_model="paper", detect_s=0.0,
                        allreduce_rule="paper", min_live=0.0)
    assert same == base and model_world(base).overrides == {} and not model_world(base).ignored
    a = fast_model(base, ("spare", "rep", "ckpt"), "predict", 2000)
    b = fast_model(same, ("spare", "rep", "ckpt"), "predict", 2000)
    assert [p.ttt_over_t0 for n in a.methods for p in a.curves[n]] == \
        [p.ttt_over_t0 for n in b.methods for p in b.curves[n]]
    assert job_ceiling(base, 0.9, "x") is None


def test_predictive_model_takes_job_failures_and_names_what_it_ignores() -> None:
    paper = cluster_spec(16_384, 128)
    llama = cluster_spec(16_384, 128, failure_mix="llama3", jitter_model="step",
                         allreduce_rule="abort")
    w = model_world(llama)
    assert w.job_share == pytest.approx(69 / 419)  # software 54, NCCL 7, SDC 6, dependency 2
    assert w.job_mtbf_s == pytest.approx(paper.system_mtbf_s * 419 / 69)
    assert 60 <= w.detect_s <= 600  # share-weighted mean of the job classes' detection times
    fa = fast_model(paper, ("elastic-drop",), "predict", 2000)
    fb = fast_model(llama, ("elastic-drop",), "predict", 2000)
    # job-wide failures restart elastic-drop from its checkpoint: it now checkpoints and pays
    assert fb.best("elastic-drop").ttt_over_t0 > fa.best("elastic-drop").ttt_over_t0
    assert fb.best("elastic-drop").checkpoint_steps < fa.best("elastic-drop").checkpoint_steps
    notes = " ".join(fb.notes)
    assert "jitter_model = step" in notes and "allreduce_rule = abort" in notes
    assert "failure domains" in notes and "job-wide failures" in notes
    closed = fast_model(llama, ("elastic-drop",), "finite", 2000)
    assert any("closed forms" in n and "ignore the failure world" in n for n in closed.notes)


SPARE_B = ("spare-b", "spare-b+repair", "spare-b+drop")


@pytest.mark.parametrize("gpus", [100_000, 600_000])
def test_spare_b_closed_forms_take_job_failures(gpus: int) -> None:
    """SPARe-b's closed forms (microbatch_curve) see the llama3 world as the predictive model
    does: C is set for the job-wide restarts every method pays (without them SPARe-b+repair and
    +drop checkpointed once per run and a 2,000-step run restarted from step 0 at every job-wide
    failure), the availability stays under the job-wide ceiling 1/(e^(νT_r) + νd), λW* solves
    (1 − λW)e^(λ(W + T_s)) = 1, and the paper's world is the group-local form unchanged."""
    from spare_lib.cluster import restart_time_s
    from spare_lib.cluster.planning.models import _microbatch_local, microbatch_curve

    kw = {"restart_s": float(restart_time_s(gpus)), "rejoin_s": 600.0}
    paper, llama = cluster_spec(gpus, 1000, **kw), cluster_spec(gpus, 1000, failure_mix="llama3", **kw)
    for name in SPARE_B:
        assert microbatch_curve(paper, 8, 2000, name) == _microbatch_local(paper, 8, 2000, name)
    w = model_world(llama)
    cap = availability_ceiling(w.job_share, llama.system_mtbf_s, llama.restart_s, w.detect_s)
    fm = fast_model(llama, ("elastic-drop", *SPARE_B), "predict", 2000)
    c_drop = fm.best("elastic-drop").checkpoint_steps
    for name in SPARE_B:
        for p in fm.curves[name]:
            assert 0 < p.availability <= cap
            assert p.restart_interval_s <= w.job_mtbf_s * (1 + 1e-12)
            lam = 1.0 / p.restart_interval_s
            ws = [(p.checkpoint_steps + h) * p.step_time_s for h in (-0.5, 0.5)]
            f = [(1 - lam * x) * math.exp(lam * (x + llama.checkpoint_s)) - 1 for x in ws]
            assert f[0] >= 0 >= f[1] or p.checkpoint_steps == 1  # round(W*/step) = C
        # two models of the same restarts: within the simulation's C search (factors 0.5 to 2)
        assert 0.5 <= fm.best(name).checkpoint_steps / c_drop <= 2.0
    notes = " ".join(fm.notes)
    assert "closed forms of SPARe-b+CKPT" in notes and "job-wide failures" in notes
    assert "ignore the failure world" not in notes


def test_spare_b_closed_forms_when_restarts_never_end() -> None:
    """Job-wide failures that cut nearly every restart (νT_r > 700, Eq. J1 overflows): the
    closed forms say no training (availability 0, TTT/T0 ∞) through jobwide's own guard, as the
    predictive model does, instead of an OverflowError."""
    from spare_lib.cluster.planning.models import microbatch_curve

    spec = cluster_spec(600_000, 1000, restart_s=400 * 3600.0, rejoin_s=600.0, failure_mix="llama3")
    assert model_world(spec).job_mtbf_s * 700 < spec.restart_s
    for name in SPARE_B:
        for p in microbatch_curve(spec, 3, 2000, name):
            assert p.availability == 0.0 and p.ttt_over_t0 == math.inf


@pytest.mark.parametrize("argv, needle", [
    (("--failure-mix", "nowhere.yaml"), "--failure-mix must be one of paper, llama3, stepfun"),
    (("--jitter-model", "gauss"), "invalid choice"),
    (("--allreduce-rule", "half"), "invalid choice"),
    (("--min-live", "1.5"), "--min-live must be in [0, 1]"),
    (("--min-live", "0.5"), "--min-live only applies when --strategies includes elastic-drop"),
    (("--detect-s", "-1"), "--detect-s must be in [0"),
    (("--straggler-share", "0.1"), "only applies with --jitter-model straggler"),
    (("--failure-mix", "llama3", "--domain-fault-share", "0.1", "--domain-size", "10"),
     "must be 0 with --failure-mix"),
])
def test_bad_world_values_exit_2_in_one_line(argv: tuple[str, ...], needle: str) -> None:
    r = run("plan", *argv)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_bad_yaml_mix_names_its_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "mix.yaml"
    p.write_text("name: x\nclasses:\n  - {name: a, share: 0.5, radius: group}\n"
                 "  - {name: b, share: 0.5, radius: rack}\n")
    r = run("plan", "--failure-mix", str(p))
    assert r.returncode == 2 and f"{p}:4:" in r.stderr and "radius" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("mix", ["paper", "llama3"])
def test_plan_json_validates_with_the_ceiling(mix: str) -> None:
    r = run("plan", "--gpus", "16384", "--gpus-per-group", "128", "--failure-mix", mix,
            "--strategies", "ckpt,elastic-drop", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    jsonschema.validate(d, SCHEMA)
    assert (d["ceiling"] is None) == (mix == "paper")


def test_binding_ceiling_is_named_in_the_verdict_with_its_knobs() -> None:
    # 600k GPUs, m = 5 min, T_r = 60 min, llama3's 16.5 % job share: the ceiling binds
    spec = cluster_spec(failure_mix="llama3")
    res = run_plan(PlanRequest(spec=spec, methods=("ckpt", "elastic-drop")))
    c = res.ceiling
    assert c is not None and c["binds"]
    assert c["half_restart"] > c["ceiling"] and c["half_job_share"] > c["ceiling"]
    s = res.verdict.statement
    assert "no strategy gets past" in s and "--restart-s" in s and "job-level share" in s
    # 16k GPUs (m = 3 h): the same mix's ceiling is high and the simpler strategies fall short
    small = run_plan(PlanRequest(spec=cluster_spec(16_384, 128, failure_mix="llama3"),
                                 methods=("ckpt",)))
    assert small.ceiling is not None and not small.ceiling["binds"]
    assert "no strategy gets past" not in small.verdict.statement


def test_ceiling_closed_form_limits() -> None:
    assert availability_ceiling(0.0, 300.0, 3600.0, 60.0) == 1.0
    # lambda*T_r << 1: 1/(1 + lambda*(T_r + d))
    a = availability_ceiling(0.01, 1e6, 100.0, 50.0)
    assert a == pytest.approx(1 / (1 + 1e-8 * 150), rel=1e-9)
    lv = ceiling_levers(0.2, 600.0, 1800.0, 60.0)
    assert lv["half_restart"] > lv["ceiling"] and lv["half_job_share"] > lv["ceiling"]
    # the renewal Monte Carlo converges to the closed form for exponential failures
    # (100,000 failures: its standard error is about 0.1 %; tolerance 0.5 %)
    mc = availability_ceiling_renewal(1.0, 3600.0, 1800.0, 60.0, "exponential")
    assert mc == pytest.approx(availability_ceiling(1.0, 3600.0, 1800.0, 60.0), rel=5e-3)


@pytest.mark.parametrize("dist", ["exponential", "weibull"])
@pytest.mark.parametrize("restart_s", [600.0, 3600.0])
def test_ceiling_matches_simulated_availability_of_a_job_only_world(
        tmp_path: Path, dist: str, restart_s: float) -> None:
    """Job-wide failures only (mean gap 1 h, d = 60 s), CKPT-only checkpointing every step at
    T_s = 0.01 s: the simulated availability is the ceiling. Tolerance: 3 standard errors of the
    mean over 6 trials (each about 400 failures; measured sd of one trial 0.7-1.2 points) plus
    0.4 points for what the ceiling leaves out: the poll lag (about half a 70-s step per failure,
    counted as uptime by the simulator: +0.2 points at a 1-h gap) and the Monte Carlo's error."""
    p = tmp_path / "job.yaml"
    p.write_text(JOB_ONLY)
    cfg = ClusterConfig(steps=20_000, jitter_sigma=0.0, allreduce_s=6.0, checkpoint_s=0.01,
                        restart_s=restart_s, system_mtbf_s=3600.0, failure_dist=dist,
                        failure_mix=str(p))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = np.array([simulate("ckpt", 8, 1, 1, cfg, seed=s).availability for s in range(6)])
    lv = ceiling_levers(1.0, 3600.0, restart_s, 60.0, dist, cfg.weibull_shape)
    tol = 3 * a.std(ddof=1) / math.sqrt(a.size) + 0.004
    assert abs(a.mean() - lv["ceiling"]) <= tol, (a.mean(), lv["ceiling"], tol)


def test_every_method_stays_under_the_ceiling_in_a_mixed_world() -> None:
    """The llama3 mix at N = 16 with T_r = 30 min and a 20-min system MTBF: every method's mean
    availability over 4 trials is at most the ceiling plus 3 standard errors and the 0.4-point
    poll-lag allowance of the job-only test (group failures only lower it further)."""
    spec = cluster_spec(16_000, 1000, system_mtbf_s=1200.0, restart_s=1800.0,
                        failure_mix="llama3")
    cfg = spec.cluster_config(steps=3000)
    w = model_world(spec)
    cap = ceiling_levers(w.job_share, 1200.0, 1800.0, w.detect_s, "weibull", 0.78)["ceiling"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for method, r, C in (("spare", 4, 20), ("ckpt", 1, 10), ("elastic-drop", 1, 20)):
            a = np.array([simulate(method, spec.N, r, C, cfg, seed=s, failure_seed=s).availability
                          for s in range(4)])
            assert a.mean() <= cap + 3 * a.std(ddof=1) / 2 + 0.004, (method, a.mean(), cap)
