"""Tests of spare_lib.runtime: real worker processes, real SIGKILL/SIGSTOP, exact gradients.

The process runs are module-scoped fixtures (each spawns N = 6 workers; a wipe-out respawns
them), so the whole file spawns about 40 processes. The claims tested are exact
(``np.array_equal``), not approximate: the coordinator sums one gradient per shard type in type
order, so SPARe's aggregated gradient must be *bit-identical* to the failure-free one.
"""

from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_lib.figures.runtime import make_exactness_figure, make_timeline_figure
from spare_lib.rectlr import Controller
from spare_lib.runtime import (
    KillEvent,
    MLPTask,
    ScheduleInjector,
    WeibullInjector,
    aggregate,
    reference_run,
    run_training,
    serial_training,
)
from spare_lib.runtime import coordinator as coord_mod
from spare_lib.stacking import ruler_layout

N, R, STEPS, LR = 6, 3, 8, 0.5
TASK = MLPTask(seed=11, n_eval=64)

# N = 6, r = 3 ruler {0, 1, 3}: type t is held by groups t, t-1, t-3 (mod 6). Dead {0, 1, 2} wipes
# no type (every holder triple {t, t-1, t-3} keeps a live member); dead {0, 1, 4} wipes type 1.
SPARE_KILLS = [
    (1, "compute", 0),     # mid-compute at S = 1 -> reorder, S* = 2
    (3, "partial", 1),     # after its first gradient of the step: mid-stack (S = 2)
    (3, "patch", 2),       # second failure of the same step, during the retry's patch compute
]
WIPE_KILLS = [
    (1, "compute", 0),
    (4, "compute", 4, "stop"),   # SIGSTOP: a hang, only a timeout can detect it
    (5, "allreduce", 1),         # dead {0, 4, 1}: type 1 wiped out -> restart from step 3
    (6, "before_compute", 2),    # after the restart: masked again
]


def _reaped(pid: int) -> bool:
    """True when no worker process with this pid exists any more (gone or reused by another)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return b"multiprocessing" not in cmd


@pytest.fixture(scope="session", autouse=True)
def _warm_rectlr() -> None:
    """Compile RECTLR's numba kernels once per session (outside the timed process runs)."""
    Controller(ruler_layout(N, R)).fail([0])


@pytest.fixture(scope="module")
def ff():
    return run_training("failure_free", N=N, r=R, n_steps=STEPS, lr=LR, task=TASK)


@pytest.fixture(scope="module")
def spare():
    # shard_delay_s: the worker sleeps before each shard, so 'partial' lands between two shards
    return run_training("spare", N=N, r=R, n_steps=STEPS, lr=LR, task=TASK, kills=SPARE_KILLS,
                        checkpoint_every=3, shard_delay_s=0.02)


@pytest.fixture(scope="module")
def wiped(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("wipe")
    run = run_training("spare", N=N, r=R, n_steps=STEPS, lr=LR, task=TASK, kills=WIPE_KILLS,
                       checkpoint_every=3, timeout_s=2.0, run_dir=run_dir)
    return run, run_dir


@pytest.fixture(scope="module")
def drop():
    return run_training("drop", N=N, r=R, n_steps=STEPS, lr=LR, task=TASK, kills=SPARE_KILLS)


# ------------------------------------------------------------------------ exactness
def test_failure_free_processes_equal_serial_reference(ff):
    params, grads = serial_training(TASK, N, STEPS, LR)
    assert np.array_equal(ff.grads, grads)
    assert np.array_equal(ff.params, params)
    ref = reference_run(ruler_layout(N, R), n_steps=STEPS, lr=LR, task=TASK)
    assert np.array_equal(ref.params, ff.params) and np.array_equal(ref.grads, ff.grads)
    assert np.array_equal(ref.eval_loss, ff.eval_loss)
    assert np.array_equal(ref.train_loss, ff.train_loss)
    assert ff.n_faults == 0 and ff.n_restarts == 0 and (ff.n_types == N).all()
    assert ff.eval_loss[-1] < ff.eval_loss[0]  # it does learn


def test_spare_gradients_exact_after_kills(spare, ff):
    assert spare.n_faults == 3 and spare.n_restarts == 0
    detected = {e["worker"]: (e["step"], e["how"]) for e in spare.events_of("detected")}
    assert set(detected) == {0, 1, 2}
    # killed while computing: EOF on its pipe (or, if the box stalled the coordinator longer
    # than the worker's work, a refused send at the all-reduce barrier)
    assert detected[0][0] == 1 and detected[0][1] in ("eof", "send")
    assert detected[1][0] == 3 and detected[2][0] == 3
    plans = spare.events_of("plan")
    assert [p["step"] for p in plans] == [1, 3, 3]  # two failure events in step 3
    assert plans[0]["outcome"] == "reordered" and plans[0]["depth"] == 2
    assert spare.depth[0] == 1 and spare.depth[-1] >= 2
    assert spare.n_live[-1] == N - 3
    # the claim: every committed gradient is bit-identical to the failure-free one
    assert np.array_equal(spare.grads, ff.grads)
    assert np.array_equal(spare.params, ff.params)
    assert (spare.n_types == N).all()


def test_wipeout_restart_from_disk_checkpoint_equals_failure_free(wiped, ff):
    run, run_dir = wiped
    assert run.n_restarts >= 1
    restart = run.events_of("restart")[0]
    assert restart["step"] == 5 and restart["resume_step"] == 3
    assert run.n_redone_steps >= 2  # steps 3 and 4 were computed twice
    hang = [e for e in run.events_of("detected") if e["worker"] == 4]
    assert hang and hang[0]["how"] == "timeout"
    assert np.array_equal(run.params[-1], ff.params[-1])
    assert np.array_equal(run.grads, ff.grads)
    with np.load(run_dir / "checkpoint.npz") as z:
        assert int(z["step"]) == STEPS and np.array_equal(z["theta"], ff.params[-1])


def test_drop_differs(drop, ff):
    first = 1  # first step with a failure
    assert np.array_equal(drop.grads[:first], ff.grads[:first])
    assert not np.array_equal(drop.grads[first], ff.grads[first])
    assert drop.n_types[first] == N - 1 and drop.n_types[3] == N - 2
    assert drop.n_types[2] == N  # the failed group was replaced before the next step
    assert drop.max_abs_param_diff(ff)[-1] > 0


def test_no_orphaned_processes(ff, spare, wiped, drop):
    pids = ff.pids + spare.pids + wiped[0].pids + drop.pids
    assert len(pids) >= 4 * N + N  # the wipe-out respawned all N workers
    assert mp.active_children() == []
    assert all(_reaped(p) for p in pids)


def test_weibull_failures_exact(ff):
    """Failures from Weibull clocks (k = 0.78, system MTBF 2 steps): whatever they hit, the
    committed gradients stay the failure-free ones (seed 5: six faults and a wipe-out)."""
    inj = WeibullInjector(system_mtbf_steps=2.0, seed=5)
    run = run_training("spare", N=N, r=R, n_steps=STEPS, lr=LR, task=TASK, kills=inj,
                       checkpoint_every=3)
    assert run.n_faults >= 3
    assert np.array_equal(run.grads, ff.grads) and np.array_equal(run.params, ff.params)
    assert mp.active_children() == [] and all(_reaped(p) for p in run.pids)


def test_startup_failure_cleans_up():
    """A start-up that misses its deadline raises, and leaves no process behind."""
    with pytest.raises(RuntimeError, match="did not start within"):
        run_training("failure_free", N=N, r=R, n_steps=2, task=TASK, startup_timeout_s=1e-4)
    assert mp.active_children() == []


# ------------------------------------------------------------------------ bad input
@pytest.fixture
def no_spawn(monkeypatch):
    def boom(self, workers):
        raise AssertionError("a worker process was started before input validation")
    monkeypatch.setattr(coord_mod._Pool, "start", boom)


@pytest.mark.parametrize("kwargs, match", [
    (dict(mode="spare", N=4, r=5), r"r must be in \[1, N\] = \[1, 4\], got 5"),
    (dict(mode="spare", N=6, r=3, kills=[(1, "compute", 6)]), r"worker .* \[0, 5\], got 6"),
    (dict(mode="spare", N=6, r=3, n_steps=3, kills=[(3, "compute", 1)]), r"step .* got 3"),
    (dict(mode="spare", N=6, r=3, kills=[(1, "lunch", 1)]), r"phase must be one of"),
    (dict(mode="spare", N=6, r=3, kills=[(1, "compute", 1, "term")]), r"signal must be one of"),
    (dict(mode="failure_free", N=6, r=3, kills=[(1, "compute", 1)]), r"kills must be None"),
    (dict(mode="sync", N=6, r=3), r"mode must be one of"),
    (dict(mode="spare", N=6, r=3, lr=0.0), r"lr must be"),
    (dict(mode="spare", N=6, r=3, n_steps=0), r"n_steps must be"),
    (dict(mode="spare", N=6), r"give either layout or both N and r"),
])
def test_bad_input_raises_before_any_process(no_spawn, kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_training(**kwargs)
    assert mp.active_children() == []


# ------------------------------------------------------------------------ injectors
def test_schedule_injector_fires_once_and_fresh_copies_refire():
    inj = ScheduleInjector([KillEvent(2, "compute", 1), (2, "compute", 3, "stop")])
    inj.validate(N=4, n_steps=5)
    assert inj.due(1, 1, "compute") == []
    fired = inj.due(2, 2, "compute")
    assert [(e.worker, e.signal) for e in fired] == [(1, "kill"), (3, "stop")]
    assert inj.due(2, 5, "compute") == []  # a redone step does not fire it again
    assert len(inj.fresh().due(2, 0, "compute")) == 2


def _drive(inj: WeibullInjector, n_ticks: int) -> list[tuple[int, str, int]]:
    out = []
    for tick in range(n_ticks):
        for phase in ("compute", "partial", "allreduce"):
            out += [(tick, e.phase, e.worker) for e in inj.due(tick, tick, phase)]
    return out


def test_weibull_injector_reproducible_and_rate():
    inj = WeibullInjector(system_mtbf_steps=2.0, shape=0.78, seed=5)
    inj.validate(N=50, n_steps=10)
    ev = _drive(inj, 400)
    again = inj.fresh()
    again.validate(N=50, n_steps=10)
    assert _drive(again, 400) == ev
    # Exponential clocks (shape 1) are a Poisson process of rate 1/m per step for the system:
    # over T = 2000 steps with m = 2 the count is Poisson(1000); accept 4 standard errors
    # (±126). Collapsing two expiries of one clock between readings is negligible at rate 1/100.
    expo = WeibullInjector(system_mtbf_steps=2.0, shape=1.0, seed=6)
    expo.validate(N=50, n_steps=10)
    n = len(_drive(expo, 2000))
    assert abs(n - 1000) < 4 * np.sqrt(1000)


def test_weibull_injector_validates():
    with pytest.raises(ValueError, match="system_mtbf_steps"):
        WeibullInjector(system_mtbf_steps=0.0)
    with pytest.raises(ValueError, match="phases"):
        WeibullInjector(1.0, phases=("nap",))


# ------------------------------------------------------------------------ model
def test_gradient_matches_finite_differences():
    task = MLPTask(seed=3, shard_size=5)
    theta = task.init_params() + 0.1
    X, y = task.shard_data(step=2, shard_type=4)
    _, g = task.loss_grad(theta, X, y)
    eps = 1e-6
    idx = np.random.default_rng(0).choice(theta.size, 25, replace=False)
    fd = []
    for i in idx:
        e = np.zeros_like(theta)
        e[i] = eps
        fd.append((task.loss_grad(theta + e, X, y)[0] - task.loss_grad(theta - e, X, y)[0])
                  / (2 * eps))
    # central differences: truncation O(eps^2) ~ 1e-12, rounding ~ 1e-16/eps = 1e-10
    np.testing.assert_allclose(g[idx], fd, rtol=1e-5, atol=1e-8)


def test_shard_data_is_a_function_of_seed_step_type():
    a, b = MLPTask(seed=1), MLPTask(seed=1)
    Xa, ya = a.shard_data(3, 2)
    Xb, yb = b.shard_data(3, 2)
    assert np.array_equal(Xa, Xb) and np.array_equal(ya, yb)
    assert not np.array_equal(Xa, a.shard_data(3, 1)[0])
    assert not np.array_equal(Xa, MLPTask(seed=2).shard_data(3, 2)[0])


@settings(max_examples=30, deadline=None)
@given(st.permutations(list(range(7))))
def test_aggregate_is_independent_of_arrival_order(order):
    rng = np.random.default_rng(1)
    grads = {t: rng.normal(size=5) * 10.0 ** rng.integers(-8, 8) for t in range(7)}
    shuffled = {t: grads[t] for t in order}
    assert np.array_equal(aggregate(shuffled), aggregate(grads))


def test_aggregate_rejects_empty():
    with pytest.raises(ValueError, match="at least one"):
        aggregate({})


def test_worker_module_is_light():
    """The worker's import chain must not pull in matplotlib, numba or scipy."""
    import subprocess
    import sys
    code = ("import sys, spare_lib.runtime.worker; "
            "print(sorted(m for m in ('matplotlib', 'numba', 'scipy', 'spare_lib.rectlr') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "COVERAGE_PROCESS_START": ""})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_figures_draw(ff, spare, wiped, drop):
    import matplotlib.pyplot as plt
    fig = make_exactness_figure({"failure_free": ff, "spare": wiped[0], "drop": drop})
    assert len(fig.axes) == 2
    fig2 = make_timeline_figure(wiped[0])
    live_line = fig2.axes[0].lines[0].get_ydata()
    assert live_line.max() == N and live_line.min() == N - 3  # three dead before the wipe-out
    plt.close(fig)
    plt.close(fig2)
