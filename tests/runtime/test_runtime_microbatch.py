"""SPARe at micro-batch granularity with real killed processes (issue 25, item 4).

With b = 4 micro-batches per shard, the step's assignment is micro-batch RECTLR's and a worker
killed mid-step loses its micro-batches, which the library's retry patch redistributes. The
claims are exact (``np.array_equal``) against the failure-free run with the same b: every
micro-batch gradient is a function of (θ, step, type, j) only, and the sums run in a fixed
(type, micro-batch) order. Each run's ``commit`` events record who computed every micro-batch;
the property tests read them.
"""

from __future__ import annotations

import multiprocessing as mp

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_lib.rectlr.microbatch import microbatch_assign
from spare_lib.rectlr.microbatch_inc import MicrobatchController, microbatch_retry_patch
from spare_lib.runtime import MLPTask, aggregate, reference_run, run_training
from spare_lib.runtime import coordinator as coord_mod
from spare_lib.runtime.microbatch import assign_indices, drop_patch_counts
from spare_lib.runtime.model import shard_from_microbatches
from spare_lib.stacking import make_layout, max_ruler_r, ruler_layout

N, R, STEPS, LR, B = 6, 3, 8, 0.5, 4
TASK = MLPTask(seed=11, n_eval=64)
LAYOUT = ruler_layout(N, R)

# N = 6, r = 3 ruler {0, 1, 3}: type t is held by groups t, t-1, t-3 (mod 6).
MIDSTEP_KILLS = [
    (1, "compute", 0),     # mid-compute: all of its micro-batches of step 1 are lost
    (3, "partial", 1),     # after its first micro-batch of the step arrived
    (3, "patch", 2),       # during the retry's patch compute: a second patch in the step
]
TWO_AT_ONCE_KILLS = [
    (0, "compute", 0), (0, "compute", 3),   # two groups in the same attempt of step 0
    (2, "allreduce", 1),                    # finished work lost at the all-reduce
]                                           # dead {0, 3, 1}: every type still covered
WIPE_KILLS = [
    (1, "compute", 0),
    (4, "compute", 4, "stop"),   # a hang: only a timeout detects it
    (5, "allreduce", 1),         # dead {0, 4, 1}: type 1 wiped out
    (6, "before_compute", 2),
]


def _reaped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"multiprocessing" not in f.read()
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.fixture(scope="module", autouse=True)
def _warm_microbatch_kernels() -> None:
    """Load micro-batch RECTLR's numba kernels once (outside the timed process runs)."""
    ctl = MicrobatchController(LAYOUT, B)
    ctl.fail([0])
    ctl.patch(np.zeros((N, R), np.int64))


@pytest.fixture(scope="module")
def ref4():
    return reference_run(LAYOUT, n_steps=STEPS, lr=LR, task=TASK, microbatches=B)


COMMON = dict(N=N, r=R, n_steps=STEPS, lr=LR, task=TASK, checkpoint_every=3)


# One module-scoped fixture per process run (each spawns N workers once; the tests share them).
@pytest.fixture(scope="module")
def failure_free():
    return run_training("failure_free", microbatches=B, **COMMON)


@pytest.fixture(scope="module")
def midstep():
    # shard_delay_s: each micro-batch sleeps 5 ms in the worker, so 'partial' lands mid-step
    return run_training("spare", microbatches=B, kills=MIDSTEP_KILLS, shard_delay_s=0.02,
                        **COMMON)


@pytest.fixture(scope="module")
def two_at_once():
    return run_training("spare", microbatches=B, kills=TWO_AT_ONCE_KILLS, **COMMON)


@pytest.fixture(scope="module")
def wipe_restart():
    return run_training("spare", microbatches=B, kills=WIPE_KILLS, timeout_s=2.0, **COMMON)


@pytest.fixture(scope="module")
def wipe_drop():
    return run_training("spare", microbatches=B, kills=WIPE_KILLS, timeout_s=2.0,
                        on_wipeout="drop", **COMMON)


@pytest.fixture(scope="module")
def b1_engine():
    return run_training("spare", microbatches=1, kills=MIDSTEP_KILLS, on_wipeout="drop",
                        shard_delay_s=0.02, **COMMON)


RUN_NAMES = ("failure_free", "midstep", "two_at_once", "wipe_restart", "wipe_drop", "b1_engine")


# ------------------------------------------------------------------------ exactness
def test_failure_free_processes_equal_reference_b4(failure_free, ref4):
    ff = failure_free
    assert ff.microbatches == B and ff.microbatches_computed == N * B * STEPS
    assert np.array_equal(ff.params, ref4.params) and np.array_equal(ff.grads, ref4.grads)
    assert np.array_equal(ff.train_loss, ref4.train_loss)
    # b = 4 is gradient accumulation: the same optimisation as b = 1 up to rounding, not bits
    ref1 = reference_run(LAYOUT, n_steps=STEPS, lr=LR, task=TASK)
    assert np.allclose(ref4.params, ref1.params, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["midstep", "two_at_once", "wipe_restart"])
def test_killed_workers_b4_bit_identical(request, ref4, name):
    run = request.getfixturevalue(name)
    assert run.n_faults >= 3
    assert np.array_equal(run.grads, ref4.grads)
    assert np.array_equal(run.params, ref4.params)
    assert (run.n_types == N).all()


def test_midstep_kills_lose_and_redistribute_microbatches(midstep):
    run = midstep
    plans = run.events_of("plan")
    assert [p["step"] for p in plans] == [1, 3, 3]  # a second failure during step 3's retry
    assert all(p["outcome"] == "rerouted" for p in plans)
    # the killed workers' micro-batches were lost and recomputed by others
    assert all(p["lost_microbatches"] >= 1 and p["patch_microbatches"] == p["lost_microbatches"]
               for p in plans)
    # a makespan of b micro-batches at first, ⌈N·b/(N−k)⌉ or more after k deaths
    assert plans[0]["makespan"] >= -(-N * B // (N - 1))
    assert run.microbatches_computed > N * B * STEPS  # the lost work was paid for


def test_wipeout_restart_b4(wipe_restart):
    run = wipe_restart
    assert run.n_restarts == 1 and run.events_of("restart")[0]["resume_step"] == 3
    assert any(e["how"] == "timeout" for e in run.events_of("detected"))


def test_microbatch_engine_at_b1_equals_whole_shards(b1_engine):
    """The micro-batch engine with b = 1 (used by SPARe+drop) commits the whole-shard bits."""
    ref1 = reference_run(LAYOUT, n_steps=STEPS, lr=LR, task=TASK)
    run = b1_engine
    assert run.microbatches == 1 and run.n_faults == 3
    assert np.array_equal(run.params, ref1.params) and np.array_equal(run.grads, ref1.grads)


def test_spare_drop_commits_covered_types_and_continues(wipe_drop, ref4):
    run = wipe_drop
    wiped = 5  # dead {0, 4, 1} at step 5: type 1 has no live holder
    assert run.n_restarts == 0 and run.n_redone_steps == 0
    assert np.array_equal(run.params[:wiped + 1], ref4.params[:wiped + 1])  # exact until then
    assert [e["types"] for e in run.events_of("dropped")] == [[1]]
    assert run.n_types[wiped] == N - 1 and (np.delete(run.n_types, wiped) == N).all()
    # the wipe-out step's gradient is elastic-drop's: the mean over the covered types
    theta = ref4.params[wiped]
    per_type = {t: shard_from_microbatches(TASK, [TASK.microbatch_loss_grad(theta, wiped, t, B, j)
                                                  for j in range(B)])[1]
                for t in range(N) if t != 1}
    assert np.array_equal(run.grads[wiped], aggregate(per_type))
    replaced = run.events_of("replaced")
    assert replaced and replaced[0]["step"] == wiped + 1 and replaced[0]["workers"] == [0, 1, 4]
    assert run.n_live[wiped + 1] == N - 1  # all replaced, then group 2 killed before compute
    assert not np.array_equal(run.params[-1], ref4.params[-1])


# ------------------------------------------------------------------------ exactly once
@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_microbatch_computed_exactly_once_by_a_live_holder(request, name):
    run = request.getfixturevalue(name)
    commits = run.events_of("commit")
    assert len(commits) == STEPS + run.n_redone_steps  # one per committed execution
    for c in commits:
        owner = np.array(c["owner"])
        b = c["b"]
        assert owner.shape == (N, b)
        live = set(c["live"])
        covered = [t for t in range(N) if t not in c["dropped_types"]]
        for t in range(N):
            if t in c["dropped_types"]:
                assert (owner[t] == -1).all()
                continue
            for j in range(b):
                g = int(owner[t, j])
                assert g in live and t in LAYOUT.stacks[g]  # a live holder of t
        # no survivor computed any micro-batch twice, nor two survivors the same one
        assert c["live_computations"] == len(covered) * b


def test_processes_reaped(request):
    pids = [p for name in RUN_NAMES for p in request.getfixturevalue(name).pids]
    assert len(pids) >= 6 * N
    assert mp.active_children() == []
    assert all(_reaped(p) for p in pids)


# ------------------------------------------------------------------------ the index rule
@settings(max_examples=40, deadline=None)
@given(st.integers(4, 14), st.integers(1, 4), st.integers(1, 6), st.sampled_from(["ruler",
       "consecutive"]), st.data())
def test_assign_indices_after_retry_patch_exactly_once(n, r, b, kind, data):
    """Step plan → deaths → survivors' done → library retry patch → indices: every (t, j)
    computed exactly once by a live holder (in the committed set), for random dead sets."""
    r = min(r, max_ruler_r(n) if kind == "ruler" else n)
    lay = make_layout(n, r, kind)
    stacks = np.asarray(lay.stacks, np.int64)
    alive0 = np.ones(n, bool)
    plan = microbatch_assign(lay, alive0, b)
    reqs = assign_indices(stacks, plan.counts, {t: list(range(b)) for t in range(n)})
    dead = data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n - 1))
    alive = alive0.copy()
    alive[list(dead)] = False
    if any(not alive[np.nonzero(stacks == t)[0]].any() for t in range(n)):
        counts, dropped = drop_patch_counts(stacks, alive, {t: list(range(b)) for t in range(n)})
        assert dropped and (counts[~alive] == 0).all()
        return
    have = {it: g for g, items in reqs.items() if alive[g] for it in items}
    done = np.zeros_like(plan.counts)
    for (t, _), g in have.items():
        done[g, list(stacks[g]).index(t)] += 1
    patch = microbatch_retry_patch(lay, alive, b, plan.counts, done)
    outstanding = {t: [j for j in range(b) if (t, j) not in have] for t in range(n)}
    retry = assign_indices(stacks, patch.counts, outstanding)
    seen = dict(have)
    for g, items in retry.items():
        assert alive[g]
        for it in items:
            assert it not in seen and it[0] in stacks[g]
            seen[it] = g
    assert set(seen) == {(t, j) for t in range(n) for j in range(b)}


# ------------------------------------------------------------------------ bad input
@pytest.fixture
def no_spawn(monkeypatch):
    def boom(self, workers):
        raise AssertionError("a worker process was started before input validation")
    monkeypatch.setattr(coord_mod._Pool, "start", boom)


@pytest.mark.parametrize("kwargs, match", [
    (dict(mode="spare", microbatches=0), r"microbatches must be"),
    (dict(mode="spare", microbatches=17), r"microbatches must be"),   # > shard_size = 16
    (dict(mode="drop", microbatches=2), r"microbatches must be 1 in mode 'drop'"),
    (dict(mode="spare", on_wipeout="pause"), r"on_wipeout must be one of"),
    (dict(mode="failure_free", on_wipeout="drop"), r"on_wipeout='drop' needs mode 'spare'"),
])
def test_bad_microbatch_input_raises_before_any_process(no_spawn, kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_training(N=N, r=R, **kwargs)
    assert mp.active_children() == []


def test_microbatch_slices_validate():
    with pytest.raises(ValueError, match=r"b must be in \[1, shard_size\]"):
        TASK.microbatch_bounds(TASK.shard_size + 1)
    assert TASK.microbatch_bounds(3) == [0, 5, 10, 16]
