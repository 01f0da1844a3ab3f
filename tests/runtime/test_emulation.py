"""Tests of the scaled-clock emulation (spare_lib.runtime.emulation, issue 28).

Process runs are small (N = 6, a few dozen steps at scale 2,000: ≈ 1–3 s each) so that the
whole file stays well under the issue's CI budget. Every run's processes must be reaped: after a
normal end, after a KeyboardInterrupt and after a failed assertion inside the run.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing as mp
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

from spare_lib.rectlr import Controller
from spare_lib.rectlr.kernels import rectlr_kernel
from spare_lib.runtime.clock import Killer, TraceClock, WeibullClock, weibull_trace
from spare_lib.runtime.emulation import EmulationSpec, EmuSemantics, StatelessRectlr, emulate
from spare_lib.runtime.injector import WeibullInjector
from spare_lib.stacking import ruler_layout

N = 6
SPEC = EmulationSpec(steps=12, compute_per_stack_s=64.0, allreduce_s=6.0, restart_s=200.0,
                     stall_s=5.0, checkpoint_s=10.0, jitter_sigma=0.0, scale=2000.0,
                     rejoin_s=300.0)
# group 1 at 100 s (step 1, reorder), group 2 at 300 s (type 2 held by 2, 1, 5 at r = 3 ruler
# {0, 1, 3} -> 1 and 2 dead: masked), group 5 at 500 s: 1, 2, 5 dead holds type 2 -> wipe-out
TRACE = [(100.0, 1), (300.0, 2), (500.0, 5), (1500.0, 0)]


def _reaped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return b"multiprocessing" not in cmd and b"forkserver" not in cmd


def _no_orphans(pids: list[int]) -> None:
    assert mp.active_children() == []
    assert pids and all(_reaped(p) for p in pids)


@pytest.fixture(scope="module")
def spare_run():
    return emulate("spare", N, 3, 4, SPEC, trace=TRACE, seed=1)


def test_spare_run_masks_then_wipes_out_and_finishes(spare_run):
    run = spare_run
    assert run.completed and run.commits >= SPEC.steps
    assert run.full_restarts >= 1 and run.failures_noticed >= 3
    kinds = set(run.events["kind"])
    assert {"kill", "notice", "resolve", "restart_begin", "restart_end", "checkpoint",
            "commit"} <= kinds
    assert tuple(run.events.columns) == ("wall_s", "t_s", "kind", "step", "attempt", "group",
                                         "value", "info")
    # every kill of the trace before the end fired at its scaled time, within 50 ms of wall time
    kills = run.events[run.events["kind"] == "kill"]
    assert (kills["value"] < 0.05).all()
    assert 1.0 < run.ttt_over_t0 < 20.0 and 0.0 < run.availability < 1.0


def test_spare_run_gradients_are_exact(spare_run):
    """Masked failures and a restart from the checkpoint file change nothing: θ after the
    committed steps equals the serial, failure-free training (bit for bit)."""
    from spare_lib.runtime import MLPTask, serial_training
    params, _g = serial_training(MLPTask(), N, SPEC.steps, 0.5)
    assert np.array_equal(spare_run.theta, params[-1])


def test_spare_run_reaps_everything(spare_run):
    _no_orphans(spare_run.pids)


@pytest.mark.parametrize("method, r", [("rep", 2), ("ckpt", 1), ("elastic-drop", 1)])
def test_other_methods_run_and_reap(method, r):
    run = emulate(method, N, r, 4, SPEC, trace=TRACE, seed=2)
    assert run.completed and run.failures_noticed >= 1
    if method == "elastic-drop":
        assert run.rejoins >= 1 and run.full_restarts == 0
    if method == "ckpt":
        assert run.full_restarts == run.failures_noticed - run.checkpoint_failures
    _no_orphans(run.pids)


def _ctrl_c() -> None:
    """A real SIGINT to the main thread, as Ctrl-C sends: it also breaks a blocking wait
    (_thread.interrupt_main only sets a flag, which a coordinator blocked in poll() with a long
    timeout does not see until the poll returns: a hang until pytest-timeout, seen here)."""
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def test_keyboard_interrupt_leaves_no_process():
    timer = threading.Timer(1.0, _ctrl_c)
    timer.start()
    pids_seen: list[int] = []
    spec = EmulationSpec(steps=10_000, compute_per_stack_s=64.0, allreduce_s=6.0,
                         restart_s=200.0, stall_s=5.0, checkpoint_s=10.0, scale=2000.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            emulate("spare", N, 3, 4, spec, trace=TRACE, seed=3)
    finally:
        timer.cancel()
    pids_seen = [p.pid for p in mp.active_children()]
    assert pids_seen == []


def test_failed_assertion_inside_the_run_leaves_no_process():
    started: list[int] = []

    calls = []

    class Boom(Controller):
        def fail(self, groups):  # noqa: ANN001
            calls.append(groups)
            if len(calls) == 1:  # emulate's warm-up call, before any process starts
                return super().fail(groups)
            started.extend(p.pid for p in mp.active_children())
            raise AssertionError("controller check failed")

    with pytest.raises(AssertionError, match="controller check failed"):
        emulate("spare", N, 3, 4, SPEC, trace=TRACE, seed=4, controller_factory=Boom)
    assert started  # processes were running when it failed
    _no_orphans(started)


def test_killer_holds_kills_past_the_cap_and_shifts_them():
    """overrun='pause' relies on these: a kill due after the cap waits for it; shift moves the
    due time (and the cap) later."""
    proc = subprocess.Popen(["sleep", "30"])
    killer = Killer()
    killer.start()
    try:
        now = time.monotonic()
        killer.hold(now)
        killer.arm(0, proc.pid, now + 0.05)
        time.sleep(0.15)
        assert killer.fired == [] and proc.poll() is None  # due, but held
        killer.shift(0.1)  # due at now + 0.15, cap at now + 0.1: still held
        time.sleep(0.05)
        assert killer.fired == []
        killer.hold(math.inf)
        proc.wait(5.0)
        assert len(killer.fired) == 1 and killer.fired[0][3] == pytest.approx(now + 0.15)
    finally:
        killer.stop()
        proc.kill()
        proc.wait()


def test_detected_notice_after_the_last_compute_end_extends_the_paused_phase():
    """notice_at='detect' with overrun='pause': group 2 dies just before every compute ends, so
    its detection (the barrier) comes after the last compute end; group 3's failure falls in
    between. Its kill must fire (the killer's cap moves to the barrier) instead of being held
    while the coordinator waits for its EOF (that raised after timeout_s)."""
    trace = [(63.99, 2), (64.01, 3), (2000.0, 0)]
    spec = dataclasses.replace(SPEC, scale=20000.0)  # 0.01 model s = 0.5 µs: below any EOF
    run = emulate("ckpt", N, 1, 2, spec, trace=trace, seed=0,
                  semantics=EmuSemantics("detect", "failure", "pause"))
    assert run.completed and run.full_restarts >= 1
    kills = run.events[run.events["kind"] == "kill"]
    assert {2, 3} <= set(kills["group"])
    assert mp.active_children() == []


def test_semantics_validate():
    with pytest.raises(ValueError, match="notice_at must be one of"):
        EmuSemantics(notice_at="later")
    assert EmuSemantics("poll", "failure", "pause").label == "model"
    assert EmuSemantics().label == "real"
    assert EmuSemantics("detect", "failure", "pause").label == "detect/failure/pause"
    with pytest.raises(ValueError, match="semantics must be"):
        emulate("spare", N, 3, 4, SPEC, trace=TRACE, semantics="fast")
    assert mp.active_children() == []


def test_stateless_rectlr_resolves_as_the_simulators_kernel():
    """The emulation's default controller is the simulator's RECTLR: on random failure
    sequences (one to three groups per event) every outcome, depth and stack equals
    ``rectlr_kernel`` run on the current stacks (the simulator's kernel, bit-identical to its
    incremental form)."""
    rng = np.random.default_rng(7)
    names = ("fixed", "reordered", "wipeout")
    for N, r in ((8, 3), (12, 3), (16, 4)):
        lay = ruler_layout(N, r)
        for _ in range(20):
            ctl = StatelessRectlr(lay)
            st = np.array(lay.stacks, dtype=np.int64)
            alive, S = np.ones(N, bool), 1
            for g in rng.permutation(N):
                if not alive[g]:
                    continue
                ev = [int(g)] + [int(x) for x in rng.choice(np.flatnonzero(alive), 2)
                                 if alive[x] and x != g and rng.random() < 0.3]
                ev = sorted(set(ev))
                plan = ctl.fail(ev)
                alive[ev] = False
                patch = np.zeros(N, np.int64)
                code, s_star, _ = rectlr_kernel(st, alive, S, patch, False)
                assert plan.outcome == names[code]
                if code == 2:
                    break
                S = int(s_star)
                assert plan.depth == S and np.array_equal(np.asarray(ctl.stacks), st)
    # where the incremental Controller leaves the simulator's path (its kept assignment picks
    # another least-move reorder): N = 8, r = 3, groups 6, 7, 3 failing one event each
    lay = ruler_layout(8, 3)
    ctl, inc = StatelessRectlr(lay), Controller(lay)
    assert [ctl.fail([g]).outcome for g in (6, 7, 3)] == ["reordered"] * 3
    assert [inc.fail([g]).outcome for g in (6, 7, 3)] == ["reordered", "reordered", "fixed"]
    with pytest.raises(ValueError, match="live groups"):
        ctl.fail([3])


# ------------------------------------------------------------------ trace handling, clocks
def test_trace_clock_replays_like_the_simulator():
    clk = TraceClock([(5.0, 0), (1.0, 0), (3.0, 1)], 2)
    assert clk.renew(0, -1.0) == 1.0 and clk.renew(0, 1.0) == 5.0  # first time > t
    assert clk.renew(0, 5.0) == math.inf and clk.renew(1, 0.0) == 3.0
    assert clk.roll_forward(0, 1.0, 4.0) == 5.0  # failures while down are absorbed


def test_weibull_trace_is_deterministic_and_per_group():
    a = weibull_trace(4, 100.0, 0.78, 5_000.0, seed=7)
    b = weibull_trace(4, 100.0, 0.78, 5_000.0, seed=7)
    c = weibull_trace(5, 100.0, 0.78, 5_000.0, seed=7)
    assert np.array_equal(a, b)
    for w in range(4):  # group w draws from child w: another N rescales (mean N·m), no more
        ta, tc = a[a[:, 1] == w, 0], c[c[:, 1] == w, 0] * 4 / 5
        n = min(ta.size, tc.size)
        assert n > 0 and np.allclose(ta[:n], tc[:n], rtol=1e-12)
    assert np.all(np.diff(a[:, 0]) >= 0) and a[:, 0].max() <= 5_000.0


def test_weibull_trace_has_the_failure_law():
    """System MTBF m: 2,000 groups' worth of renewals over a long horizon, mean gap N·m within
    3 % (relative s.e. of the mean gap ≈ 1.3/sqrt(n) ≈ 0.6 % here, so 3 % is ≥ 4 s.e.)."""
    tr = weibull_trace(10, 50.0, 0.78, 2_000_000.0, seed=1)
    gaps = np.concatenate([np.diff(np.r_[0.0, tr[tr[:, 1] == w, 0]]) for w in range(10)])
    assert abs(gaps.mean() / 500.0 - 1.0) < 0.03


def test_weibull_clock_uses_weibull_injector_seeding():
    """Group w's first gap is the same draw as WeibullInjector's clock w (child w of the seed)."""
    inj = WeibullInjector(system_mtbf_steps=1.0, shape=0.78, seed=9)
    inj.validate(4, 10)
    clk = WeibullClock(4, 1.0, 0.78, seed=9)
    assert np.allclose([clk.renew(w, 0.0) for w in range(4)], inj._next)


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="sync"), r"method must be one of"),
    (dict(N=1), r"N must be"),
    (dict(method="ckpt", r=2), r"r must be 1"),
    (dict(trace=None), r"exactly one of trace and clock"),
    (dict(trace=[(1.0, 9)]), r"groups must be integers in \[0, N-1\]"),
    (dict(trace=[(-1.0, 0)]), r"times must be finite"),
    (dict(ckpt_steps=0), r"ckpt_steps must be"),
])
def test_bad_input_raises_before_any_process(kwargs, match):
    args = dict(method="spare", N=N, r=3, ckpt_steps=4, spec=SPEC, trace=TRACE)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        emulate(args.pop("method"), args.pop("N"), args.pop("r"), args.pop("ckpt_steps"),
                args.pop("spec"), **args)
    assert mp.active_children() == []


def test_spec_validates():
    with pytest.raises(ValueError, match="scale must be"):
        EmulationSpec(steps=1, compute_per_stack_s=1.0, allreduce_s=0.0, restart_s=0.0,
                      stall_s=0.0, checkpoint_s=0.0, scale=0.0)
    with pytest.raises(ValueError, match="allreduce_fail_factor"):
        EmulationSpec(steps=1, compute_per_stack_s=1.0, allreduce_s=0.0, restart_s=0.0,
                      stall_s=0.0, checkpoint_s=0.0, allreduce_fail_factor=2.0)
    assert ruler_layout(N, 3).N == N
