"""One world for every strategy (issue 24): failure mixes, job events, detection, quorum, the
all-reduce rule and the jitter models, against the plain-Python oracle and in their exact limits.

The oracle (``sim_oracle.py``) re-types the model; on random traces (failure classes in the third
column, job events as rows of group −1) every method's wall time, downtime and counts must equal
it to float rounding, for every jitter model and both all-reduce rules. The limits hold exactly:
a job share of 1 makes every method CKPT-only; ``min_live = 1`` makes elastic-drop CKPT-only.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sim_oracle import oracle

from spare_lib.cluster import ClusterConfig, h100_600k, simulate
from spare_lib.registry.methods import METHODS

MIX = """name: oracle-mix
classes:
  - {name: quick, share: 0.4, radius: group, detect_s: 0, rejoin_s: 300}
  - {name: slow, share: 0.3, radius: group, detect_s: 30, rejoin_s: .inf}
  - {name: switch, share: 0.1, radius: domain, detect_s: 12}
  - {name: bug, share: 0.2, radius: job, detect_s: 50}
"""
JOB_ONLY = """classes:
  - {name: crash, share: 1.0, radius: job, detect_s: 45}
"""


@pytest.fixture(scope="module")
def mixes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("mixes")
    out = {}
    for name, text in (("oracle", MIX), ("job", JOB_ONLY)):
        p = d / f"{name}.yaml"
        p.write_text(text)
        out[name] = str(p)
    return out


def small_cfg(**kw: object) -> ClusterConfig:
    """T_a = 40 s (room for leader failures), T_s = 10 s, T_r = 500 s, 64 s per stack."""
    base = {"steps": 4, "jitter_sigma": 0.0, "allreduce_s": 40.0, "checkpoint_s": 10.0,
            "restart_s": 500.0, "rejoin_s": 200.0, "jitter_min": 0.6, "microbatches": 2}
    base.update(kw)
    return ClusterConfig(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the oracle

@pytest.mark.parametrize("rule", ["paper", "abort"])
@pytest.mark.parametrize("jitter", ["paper", "unit", "step", "straggler"])
@pytest.mark.parametrize("method", sorted(METHODS))
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
# every group dead at one poll (with the straggler jitter): the oracle asked RECTLR to cover
# the types with no survivor at all instead of calling it a wipe-out (found by hypothesis)
@example(N=6, r=3, C=None, steps=2, seed=2464, n_fail=17, n_job=0, sigma=0.0, min_live=0.0,
         detect=0.0, clock="notice")
# no live group left to write a checkpoint (elastic-drop, paper jitter and rule): the core
# writes none, the oracle looked for a leader that did not exist (found by hypothesis)
@example(N=8, r=2, C=3, steps=6, seed=70223, n_fail=19, n_job=0, sigma=0.05, min_live=0.0,
         detect=0.0, clock="notice")
# a rejoin before the attempt that notices the checkpoint leader's death left a type without a
# live holder (spare-b+repair, step jitter, abort rule): the oracle asserted it could not happen
@example(N=7, r=3, C=1, steps=4, seed=13423, n_fail=14, n_job=0, sigma=0.0, min_live=0.0,
         detect=0.0, clock="notice")
@given(N=st.integers(6, 14), r=st.integers(2, 3), C=st.one_of(st.none(), st.integers(1, 3)),
       steps=st.integers(2, 7), seed=st.integers(0, 2**32 - 1), n_fail=st.integers(0, 20),
       n_job=st.integers(0, 3), sigma=st.sampled_from([0.0, 0.05]),
       min_live=st.sampled_from([0.0, 0.5, 1.0]), detect=st.sampled_from([0.0, 7.0]),
       clock=st.sampled_from(["notice", "failure"]))
def test_core_matches_oracle_in_the_new_world(mixes: dict, method: str, N: int, r: int,
                                              C: int | None, steps: int, seed: int, n_fail: int,
                                              n_job: int, jitter: str, rule: str, sigma: float,
                                              min_live: float, detect: float, clock: str) -> None:
    """Random traces with classes and job events: equal to the oracle to float rounding."""
    r = r if METHODS[method].redundancy else 1
    rng = np.random.default_rng(seed)
    horizon = steps * 3 * 64.0 * 2
    trace = [(float(x), int(g), int(c)) for x, g, c in zip(
        rng.uniform(0, horizon, n_fail), rng.integers(0, N, n_fail), rng.integers(0, 3, n_fail),
        strict=True)]
    trace += [(float(x), 0, 1) for x in rng.uniform(0, horizon, 3)]  # the checkpoint leader
    trace += [(float(x), -1, 3) for x in rng.uniform(0, horizon, n_job)]
    cfg = small_cfg(steps=steps, failure_mix=mixes["oracle"], jitter_model=jitter,
                    allreduce_rule=rule, jitter_sigma=sigma, min_live=min_live, detect_s=detect,
                    straggler_share=0.3, straggler_slowdown=0.25, rejoin_clock=clock)
    arr = np.array(trace, dtype=float).reshape(-1, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = simulate(method, N, r, C, cfg, seed=seed, failure_trace=arr, layout="ruler")
    ref = oracle(method, N, r, C, cfg, trace, seed=seed)
    assert res.total_s == pytest.approx(ref["total_s"], rel=1e-12)
    assert res.down_s == pytest.approx(ref["down_s"], rel=1e-9, abs=1e-9)
    assert (res.full_restarts, res.masked_failures, res.steps_redone, res.rejoins,
            res.job_failures) == (ref["full_restarts"], ref["masked_failures"],
                                  ref["steps_redone"], ref["rejoins"], ref["job_failures"])


@pytest.mark.parametrize("method", sorted(METHODS))
def test_paper_world_still_matches_the_oracle_with_jitter(method: str) -> None:
    """The paper mix with per-unit jitter (no bridge: clip at 0.6, σ = 0.05) is drawn exactly as
    the oracle draws it."""
    r = 3 if METHODS[method].redundancy else 1
    rng = np.random.default_rng(5)
    trace = [(float(x), int(g)) for x, g in zip(rng.uniform(0, 2000, 25),
                                                 rng.integers(0, 12, 25), strict=True)]
    cfg = small_cfg(steps=6, jitter_sigma=0.05)
    res = simulate(method, 12, r, 2, cfg, seed=9, failure_trace=np.array(trace))
    ref = oracle(method, 12, r, 2, cfg, trace, seed=9)
    assert res.total_s == pytest.approx(ref["total_s"], rel=1e-12)
    assert res.full_restarts == ref["full_restarts"]


# ---------------------------------------------------------------- exact limits

def _ckpt_twin(method: str, r: int, cfg: ClusterConfig) -> ClusterConfig:
    """CKPT-only's config doing the method's failure-free work: Rep computes r shards."""
    if method == "rep":
        return cfg.with_(compute_per_stack_s=r * cfg.compute_per_stack_s)
    return cfg


@pytest.mark.parametrize("barrier", ["direct", "sampled"])
@pytest.mark.parametrize("method", sorted(METHODS))
def test_job_share_one_makes_every_method_ckpt_only(mixes: dict, method: str,
                                                    barrier: str) -> None:
    """Every failure job-wide: each method's run is CKPT-only's (common random numbers: the
    same job events and, with the same seed, the same jitter draws), to float rounding.
    Per-unit jitter draws the same factors for SPARe, spare+repair, elastic-drop and CKPT-only
    (one 64-s unit each), and for Rep with its paper draw (one of r·64 s) against CKPT-only on
    r·64 s; elastic-rebalance's b micro-batches draw b factors, so it is compared under the
    'step' model, whose one factor per group per attempt every method shares (so are SPARe-b's)."""
    r = 3 if METHODS[method].redundancy else 1
    jitter = "step" if METHODS[method].microbatch else "paper"
    cfg = h100_600k(40, steps=300, failure_mix=mixes["job"], system_mtbf_s=1500.0,
                    restart_s=900.0, jitter_model=jitter)
    kw = dict(seed=4, failure_seed=11, barrier=barrier if jitter == "paper" else "direct")
    res = simulate(method, 40, r, 7, cfg, **kw)
    ref = simulate("ckpt", 40, 1, 7, _ckpt_twin(method, r, cfg), **kw)
    # job events that fall before one poll are noticed together: one restart, one wait
    assert res.full_restarts > 3 and res.job_failures >= res.full_restarts
    assert (res.full_restarts, res.job_failures) == (ref.full_restarts, ref.job_failures)
    assert res.total_s == pytest.approx(ref.total_s, rel=1e-12)
    assert res.detect_s == pytest.approx(45.0 * res.full_restarts)
    assert (res.steps_redone, res.checkpoints_written, res.masked_failures) == \
        (ref.steps_redone, ref.checkpoints_written, 0)


@pytest.mark.parametrize("mix", ["paper", "llama3"])
def test_min_live_one_makes_elastic_drop_ckpt_only(mix: str) -> None:
    """A quorum of every group: any failure restarts elastic-drop from its checkpoint, as
    CKPT-only; same failures, same jitter draws, same result bit for bit."""
    cfg = h100_600k(30, steps=200, system_mtbf_s=4000.0, restart_s=600.0, failure_mix=mix,
                    min_live=1.0, domain_size=5)
    drop = simulate("elastic-drop", 30, 1, 9, cfg, seed=3, failure_seed=5)
    ckpt = simulate("ckpt", 30, 1, 9, cfg, seed=3, failure_seed=5)
    assert drop.full_restarts > 3
    for f in ("total_s", "down_s", "full_restarts", "failures_noticed", "steps_redone",
              "checkpoints_written", "checkpoint_failures", "detect_s", "job_failures",
              "samples"):
        assert getattr(drop, f) == getattr(ckpt, f), f
    assert drop.rejoins == 0 and drop.dropped_sample_fraction == 0.0
    looser = simulate("elastic-drop", 30, 1, 9, cfg.with_(min_live=0.9), seed=3, failure_seed=5)
    assert looser.full_restarts < drop.full_restarts


def test_quorum_counts_live_groups() -> None:
    """min_live·N = 3.5 at N = 7: training goes on with 4 live groups, not with 3."""
    cfg = small_cfg(steps=3, min_live=0.5, rejoin_s=1e9)
    three = simulate("elastic-drop", 7, 1, None, cfg, failure_trace=[[10, 1], [11, 2], [12, 3]])
    four = simulate("elastic-drop", 7, 1, None, cfg,
                    failure_trace=[[10, 1], [11, 2], [12, 3], [13, 4]])
    assert three.full_restarts == 0 and four.full_restarts == 1


# ---------------------------------------------------------------- failure-free: one barrier formula

NO_FAIL = np.empty((0, 2))


@pytest.mark.parametrize("jitter", ["paper", "unit", "step"])
@pytest.mark.parametrize("method", sorted(METHODS))
def test_failure_free_ttt_is_work_times_the_barrier_formula_exactly_without_jitter(
        method: str, jitter: str) -> None:
    """σ = 0: TTT = steps·(k·u + T_a) + checkpoints·T_s, exactly, k·u the method's work."""
    from spare_lib.cluster.engine.methods import first_attempt_work
    from spare_lib.theory.barrier import failure_free_ttt_s

    r = 3 if METHODS[method].redundancy else 1
    cfg = h100_600k(50, steps=40, jitter_sigma=0.0, jitter_model=jitter)
    k, u, sig = first_attempt_work(method, 50, r, cfg)
    res = simulate(method, 50, r, 10, cfg, failure_trace=NO_FAIL)
    want = failure_free_ttt_s(40, 50, k, u, sig, cfg.allreduce_s, model=jitter,
                              n_checkpoints=4, checkpoint_s=cfg.checkpoint_s)
    assert k * u == pytest.approx((r if method == "rep" else 1) * 64.0)
    assert res.total_s == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("jitter", ["paper", "unit", "step"])
@pytest.mark.parametrize("method", sorted(METHODS))
def test_failure_free_ttt_matches_the_barrier_formula_with_jitter(method: str,
                                                                   jitter: str) -> None:
    """σ = 0.05, N = 200, 300 steps: the mean step minus T_a is u·E[M] within 4 standard errors
    of the mean of 300 iid barriers (sd(M) from the same formula), plus 1e-3 relative for the
    normal limit of a clipped sum where the core draws one factor per unit (rebalance's
    micro-batches at σ√b = 0.14 clip with probability < 1e-10; the limit's error is smaller)."""
    from spare_lib.cluster.engine.methods import first_attempt_work
    from spare_lib.theory.barrier import barrier_moments

    r = 3 if METHODS[method].redundancy else 1
    N, steps = 200, 300
    cfg = h100_600k(N, steps=steps, jitter_model=jitter)
    k, u, sig = first_attempt_work(method, N, r, cfg)
    res = simulate(method, N, r, None, cfg, seed=17, failure_trace=NO_FAIL)
    mean, sd = barrier_moments(N, k, sig, cfg.jitter_min, jitter)
    got = res.total_s / steps - cfg.allreduce_s
    assert abs(got - u * mean) <= 4 * u * sd / math.sqrt(steps) + 1e-3 * u * mean, \
        (got, u * mean, u * sd)


def test_straggler_barrier_matches_the_mixture_formula() -> None:
    """Stragglers are drawn once per run (no failures): over 40 seeds the mean barrier is the
    mixture formula's (each group slow with probability p), within 4 standard errors of the
    40 runs' mean (their spread includes the draw of the slow set)."""
    from spare_lib.theory.barrier import barrier_moments

    N, steps, p, s = 100, 40, 0.02, 0.3
    cfg = h100_600k(N, steps=steps, jitter_model="straggler", straggler_share=p,
                    straggler_slowdown=s)
    per = np.array([simulate("spare", N, 3, None, cfg, seed=i, failure_trace=NO_FAIL).total_s
                    / steps - cfg.allreduce_s for i in range(40)]) / 64.0
    mean, _sd = barrier_moments(N, 1, 0.05, 0.1, "straggler", p, s)
    assert abs(per.mean() - mean) < 4 * per.std(ddof=1) / math.sqrt(len(per)), (per.mean(), mean)
    plain = barrier_moments(N, 1, 0.05)[0]
    assert mean > plain * 1.1  # with p·N = 2 slow groups the barrier is theirs, 30 % slower


def test_stragglers_are_shared_by_methods() -> None:
    """σ = 0, p = 0.5: a step lasts 64·(1 + s) while a slow group is live; the slow set is a
    hash of (seed, group, restart), the same for SPARe and CKPT-only (its redraw at restarts is
    in the oracle test)."""
    cfg = small_cfg(steps=3, jitter_model="straggler", straggler_share=0.5, straggler_slowdown=1.0,
                    allreduce_s=0.0, checkpoint_s=0.0)
    a = simulate("spare", 8, 2, None, cfg, seed=1, failure_trace=NO_FAIL)
    b = simulate("ckpt", 8, 1, None, cfg, seed=1, failure_trace=NO_FAIL)
    assert a.total_s == b.total_s and a.total_s in (3 * 64.0, 3 * 128.0)
    # a restart draws a new slow set: over 64 seeds some runs have slow groups, and some none
    # only if p < 1; with p = 1 every step is slow
    all_slow = simulate("ckpt", 8, 1, None, cfg.with_(straggler_share=1.0), seed=1,
                        failure_trace=NO_FAIL)
    assert all_slow.total_s == pytest.approx(3 * 128.0)


# ---------------------------------------------------------------- detection and the all-reduce rule

def test_detection_time_is_waited_by_everyone_and_is_downtime() -> None:
    """CKPT-only, N = 4, C = 1, T_a = 40 s: step 1 ends at 104 (+10 s checkpoint); group 2
    fails at 150 and is noticed at step 2's barrier (178), the all-reduce is cut short (198),
    then everyone waits the 300-s detection before the restart: 300 s more, all downtime."""
    cfg = small_cfg(steps=2, detect_s=300.0)
    res = simulate("ckpt", 4, 1, 1, cfg, failure_trace=[[150.0, 2]])
    base = simulate("ckpt", 4, 1, 1, cfg.with_(detect_s=0.0), failure_trace=[[150.0, 2]])
    assert res.total_s == pytest.approx(base.total_s + 300.0)
    assert res.detect_s == pytest.approx(300.0)
    assert res.down_s == pytest.approx(base.down_s + 300.0)


@pytest.mark.parametrize(("clock", "detect", "back_at"), [
    ("notice", 0.0, 188.1), ("failure", 0.0, 84.1), ("notice", 7.0, 195.1), ("failure", 7.0, 91.1)])
def test_rejoin_clock_counts_rejoin_s_from_the_notice_or_the_failure(clock: str, detect: float,
                                                                      back_at: float) -> None:
    """Elastic-drop N = 4, rejoin_s = 60 s: group 2 fails at 10 s and is noticed at step 1's
    barrier (64 s); the cut-short all-reduce ends at 84 s, then (the detection and) the 0.1-s
    stall. From the notice it may rejoin at 124 s (+7 s): at step 3's start, 188.1 (195.1) s.
    From the failure (+ detection) at 70 s (77 s): at step 2's start, 84.1 (91.1) s."""
    cfg = small_cfg(steps=4, rejoin_s=60.0, detect_s=detect, rejoin_clock=clock)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = simulate("elastic-drop", 4, 1, None, cfg, failure_trace=[[10.0, 2]], events=True)
    ev = res.events
    assert ev.loc[ev.kind == "notice", "t_s"].tolist() == [64.0]
    assert ev.loc[ev.kind == "rejoin", "t_s"].tolist() == pytest.approx([back_at])
    assert res.rejoins == 1


def test_abort_rule_pays_a_full_allreduce_after_a_masked_failure() -> None:
    """Rep N = 6, r = 2: one failure in step 1 is masked; 'paper' commits on the cut-short
    all-reduce (0.5·T_a), 'abort' pays it and a full T_a after the stall."""
    cfg = small_cfg(steps=2)
    paper = simulate("rep", 6, 2, None, cfg, failure_trace=[[10.0, 0]])
    abort = simulate("rep", 6, 2, None, cfg.with_(allreduce_rule="abort"),
                     failure_trace=[[10.0, 0]])
    assert paper.total_s == pytest.approx(2 * 128 + 20 + 0.1 + 40)
    assert abort.total_s == pytest.approx(paper.total_s + 40.0)


def test_job_event_restarts_an_elastic_method_from_its_checkpoint(mixes: dict) -> None:
    """A job event (trace row of group −1) in step 3 of elastic-drop: noticed at the barrier,
    aborted all-reduce, the class's detection (50 s), restart of T_r, rollback to step 2."""
    cfg = small_cfg(steps=4, failure_mix=mixes["oracle"])
    res = simulate("elastic-drop", 6, 1, 2, cfg, failure_trace=[[250.0, -1, 3]])
    # steps of 104 s; checkpoints after steps 2 and 4: step 3 runs 218 -> 282 barrier
    assert (res.job_failures, res.full_restarts, res.steps_redone) == (1, 1, 0)
    assert res.detect_s == pytest.approx(50.0)
    assert res.total_s == pytest.approx(218 + 64 + 20 + 50 + 500 + 2 * 104 + 10)


# ---------------------------------------------------------------- the event log (issue 28)

@pytest.mark.parametrize("method", ["spare", "elastic-drop"])
def test_event_log_accounts_for_every_counter(method: str) -> None:
    """The log's rows add up to the run's counters and times, and logging changes nothing."""
    r = 5 if method == "spare" else 1
    cfg = h100_600k(60, steps=400, system_mtbf_s=120.0, restart_s=900.0, failure_mix="llama3",
                    domain_size=4, rejoin_s=1200.0)
    kw = dict(seed=8, failure_seed=3)
    res = simulate(method, 60, r, 12, cfg, events=True, **kw)
    assert res == simulate(method, 60, r, 12, cfg, **kw)  # the log is not compared, nor changes
    ev = res.events
    assert list(ev.columns) == ["t_s", "kind", "step", "attempt", "group", "value", "info"]
    n = ev["kind"].value_counts()
    assert res.full_restarts > 2 and res.job_failures > 0 and res.failures_noticed > 20
    assert n["commit"] == res.commits and n["attempt"] == res.attempts
    assert n["restart_begin"] == n["restart_end"] == res.full_restarts
    notice = ev[ev.kind == "notice"]
    assert (notice["info"] != "restart_start").sum() == res.failures_noticed
    ck = ev[ev.kind == "checkpoint"]
    assert (ck["info"] == "written").sum() == res.checkpoints_written
    assert ((ck["info"] == "lost") & (ck["group"] >= 0)).sum() == res.checkpoint_failures
    jobs = ev[(ev.kind == "job_failure") & (ev.attempt >= 0)]
    assert len(jobs) == res.job_failures
    assert set(jobs["info"]) <= {c.name for c in cfg.mix().of_radius("job")}
    assert ev[ev.kind == "stall"]["value"].sum() == pytest.approx(res.stall_s)
    assert ev[ev.kind == "detect"]["value"].sum() == pytest.approx(res.detect_s)
    assert n.get("rejoin", 0) == res.rejoins
    assert np.all(np.diff(ev[ev.kind == "commit"]["t_s"].to_numpy()) > 0)
    begin = ev[ev.kind == "restart_begin"]["t_s"].to_numpy()
    end = ev[ev.kind == "restart_end"]["t_s"].to_numpy()
    assert (end - begin).sum() == pytest.approx(res.restart_s)


def test_event_log_of_a_hand_trace() -> None:
    """SPARe N = 4, r = 2 (test_simulate's reorder trace): the events in order."""
    cfg = small_cfg(steps=2, allreduce_s=2.0)
    ev = simulate("spare", 4, 2, None, cfg, failure_trace=[[10.0, 1]], events=True).events
    rows = list(zip(ev["kind"].astype(str), ev["info"], ev["group"], strict=True))
    assert rows == [("attempt", "first", -1), ("notice", "barrier", 1),
                    ("resolve", "reordered", -1), ("stall", "failure", -1),
                    ("attempt", "retry", -1), ("commit", "", -1), ("attempt", "first", -1),
                    ("commit", "", -1)]
    assert ev.t_s.tolist() == pytest.approx([0.0, 64.0, 65.0, 65.0, 65.1, 131.1, 131.1, 261.1])
    assert ev[ev.kind == "resolve"].value.iloc[0] == 2.0  # S* = 2


def test_events_off_is_the_default() -> None:
    assert simulate("ckpt", 4, 1, None, small_cfg(), failure_trace=NO_FAIL).events is None


def test_group_classes_are_drawn_by_their_shares(tmp_path: Path) -> None:
    """The class of each group failure is a hash of (class seed, group, renewal): over the
    noticed failures of the llama3 mix's group rows the counts follow the shares (χ² test at
    level 0.001; fixed seeds, so the test is deterministic and fails only if the draw is
    biased)."""
    from scipy import stats

    from spare_lib.failures.mix import LLAMA3_TABLE5

    rows = [row for row in LLAMA3_TABLE5 if row[2] == "group"]
    p = tmp_path / "groups.yaml"
    p.write_text("classes:\n" + "".join(f"  - {{name: '{n}', count: {k}, radius: group}}\n"
                                         for n, k, *_ in rows))
    cfg = h100_600k(100, steps=1500, system_mtbf_s=30.0, failure_mix=str(p))
    ev = simulate("elastic-drop", 100, 1, None, cfg, seed=2, failure_seed=7, events=True).events
    mix = cfg.mix()
    gid = list(range(len(rows)))
    notice = ev[(ev["kind"] == "notice") & (ev["info"] != "restart_start")]
    got = np.array([(notice["value"] == i).sum() for i in gid], dtype=float)
    share = np.array([mix.classes[i].share for i in gid])
    assert got.sum() > 2000
    big = share * got.sum() / share.sum() >= 5  # χ² needs expected counts of at least 5
    expect = share[big] / share[big].sum() * got[big].sum()
    assert stats.chisquare(got[big], expect).pvalue > 1e-3
