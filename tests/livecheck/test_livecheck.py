"""Tests of spare_lib.livecheck: the emulation against the simulator's model on one trace.

The event-level reference is ``event_oracle.py`` beside this file (a copy of the plain-Python
oracle of tests/cluster/sim_oracle.py that logs events; the simulator logs none). The emulated
run here is small (N = 6, 12 steps at scale 2,000, σ = 0): about 2 s of wall time.
"""

from __future__ import annotations

import multiprocessing as mp
import warnings

import numpy as np
import pandas as pd
import pytest
from event_oracle import oracle_events

from spare_lib.cluster import ClusterConfig, simulate
from spare_lib.livecheck import (
    agreement,
    emulation_spec,
    first_divergence,
    knob_scan,
    noise_floor,
    perturbation_band,
    run_side_by_side,
    shared_trace,
)
from spare_lib.runtime.emulation import emulate

N = 6
CFG = ClusterConfig(steps=12, compute_per_stack_s=64.0, allreduce_s=6.0, restart_s=200.0,
                    stall_s=5.0, checkpoint_s=10.0, system_mtbf_s=300.0, jitter_sigma=0.0,
                    rejoin_s=300.0)
TRACE = np.array([(100.0, 1), (300.0, 2), (500.0, 5), (1500.0, 0), (2300.0, 3)])


def test_event_oracle_matches_the_simulator():
    """The test-side event logger is the simulator's model: same aggregates on traces."""
    tr = shared_trace(N, CFG, 20 * CFG.t0_s(), seed=5)
    for method, r, C in (("spare", 3, 4), ("rep", 2, 4), ("ckpt", 1, 2), ("spare+repair", 3, 4),
                         ("elastic-drop", 1, 4)):
        agg, _ev = oracle_events(method, N, r, C, CFG, tr)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = simulate(method, N, r, C, CFG, seed=0, failure_trace=tr)
        assert agg["total_s"] == pytest.approx(res.total_s, rel=1e-12)
        assert agg["full_restarts"] == res.full_restarts
        assert agg["failures_noticed"] == res.failures_noticed
        assert agg["failures_between_restarts"] == res.failures_between_restarts


@pytest.fixture(scope="module")
def side():
    table, runs, sims = run_side_by_side([("spare", 3, 4)], N, CFG, 2000.0, TRACE, seed=1,
                                         sim_trials=1)
    return table, runs, sims


def test_emulated_events_are_the_models(side):
    """σ = 0, failures well inside phases: the emulation notices the same groups in the same
    order, settles each failure event the same way, restarts as often and writes the same
    checkpoints. (Times are not compared: on a loaded box a phase can slip by tens of ms of
    wall time, i.e. tens of model seconds at scale 2,000, which shifts every later event.)"""
    _table, runs, _sims = side
    run = runs["spare"]
    _agg, ev = oracle_events("spare", N, 3, 4, CFG, TRACE)
    model = pd.DataFrame(ev, columns=["t_s", "kind", "step", "group", "info"])
    emu = run.events
    for kind, col in (("notice", "group"), ("resolve", "info"), ("checkpoint", "info")):
        m = model[model.kind == kind][col].tolist()
        e = emu[emu.kind == kind][col].tolist()
        if kind == "notice":  # noticed at the restart's start: not a failure of training
            e = [g for g, i in zip(e, emu[emu.kind == kind]["info"], strict=True)
                 if i != "restart_start"]
        assert e == m, kind
    assert (emu.kind == "restart_begin").sum() == (model.kind == "restart_begin").sum() == 1
    assert run.boundary_notices == 0


# a trace (seed 16) on which SPARe, CKPT-only and SPARe+repair restart with failures inside
# restart windows (window resets) and after them (noticed at the next step), and repair rejoins
MODEL_TRACE = shared_trace(N, CFG, 20 * CFG.t0_s(), seed=16)


def _model_rows(ev: list[tuple]) -> list[tuple]:
    """Decisions of the oracle's log as (kind, group, info, t_s)."""
    out = []
    for t, kind, _step, group, info in ev:
        if kind in ("attempt", "barrier"):
            continue
        if kind == "commit":
            info = ""
        elif kind in ("notice", "window_reset", "rejoin", "restart_begin", "restart_end"):
            info = ""
        out.append((kind, int(group), info, float(t)))
    return out


def _emu_rows(events: pd.DataFrame) -> list[tuple]:
    """The same decisions of an emulated log: notices of failures found dead at a restart's
    start are not failures of training (the oracle does not log them), and a group that failed
    after its window (``barrier_failure``) is the oracle's notice at the next step's start."""
    keep = {"notice", "resolve", "commit", "checkpoint", "restart_begin", "restart_end",
            "window_reset", "rejoin"}
    out = []
    for kind, group, info, t in zip(events["kind"], events["group"], events["info"],
                                    events["t_s"], strict=True):
        if kind not in keep or (kind == "notice" and info == "restart_start"):
            continue
        if kind in ("notice", "commit", "window_reset", "rejoin", "restart_begin",
                    "restart_end"):
            info = ""
        out.append((kind, int(group), info, float(t)))
    return out


@pytest.mark.parametrize("method, r, C", [("spare", 3, 4), ("ckpt", 1, 2),
                                          ("spare+repair", 3, 4)])
def test_model_semantics_replay_the_simulator_event_for_event(method, r, C):
    """semantics='model' (notices at the model's polls, windows restarted at the failure, the
    clock paused while the coordinator catches up): at σ = 0 every decision of the oracle's log
    happens, in the same order, at the same model time (1e-6 s: float sums), and TTT, restarts
    and failures per restart equal the simulator's."""
    agg, ev = oracle_events(method, N, r, C, CFG, MODEL_TRACE)
    kinds = {e[1] for e in ev}
    assert {"restart_begin", "window_reset"} <= kinds  # the trace exercises the restart paths
    spec = emulation_spec(CFG, 2000.0)
    run = emulate(method, N, r, C, spec, trace=MODEL_TRACE, seed=0, semantics="model")
    # the oracle logs a restart's window resets group by group, the emulation as they happen:
    # both in time order (ties by kind and group; times rounded to the 1e-6 s compared)
    order = lambda rows: sorted(rows, key=lambda x: (round(x[3], 6), x[0], x[1]))  # noqa: E731
    model, emu = order(_model_rows(ev)), order(_emu_rows(run.events))
    assert [x[:3] for x in emu] == [x[:3] for x in model]
    assert np.allclose([x[3] for x in emu], [x[3] for x in model], rtol=0, atol=1e-6)
    assert run.total_s == pytest.approx(agg["total_s"], rel=1e-12)
    assert run.failures_between_restarts == agg["failures_between_restarts"]
    assert run.failures_noticed == agg["failures_noticed"]
    assert run.boundary_notices == 0 and run.noise["slip_s"].size == 0
    assert mp.active_children() == []


def test_model_semantics_replay_spare_through_failures_in_retries():
    """N = 8, r = 3 (notebook 45's smoke trace): failures in three consecutive attempts of one
    step, each resolved by a reorder and a retry, then a wipe-out. The emulation resolves as
    the simulator (RECTLR on the current stacks), so its run is the simulator's exactly."""
    cfg = CFG.with_(restart_s=300.0, rejoin_s=600.0)
    tr = shared_trace(8, cfg, 40 * cfg.t0_s(), seed=2034)
    agg, ev = oracle_events("spare", 8, 3, 10, cfg, tr)
    outcomes = [e[4] for e in ev if e[1] == "resolve"]
    assert ["reordered"] * 3 + ["wipeout"] in [outcomes[i:i + 4] for i in range(len(outcomes))]
    run = emulate("spare", 8, 3, 10, emulation_spec(cfg, 2000.0), trace=tr, seed=0,
                  semantics="model")
    assert run.total_s == pytest.approx(agg["total_s"], rel=1e-12)
    assert run.failures_between_restarts == agg["failures_between_restarts"]
    assert mp.active_children() == []


def test_side_by_side_table_and_agreement(side):
    table, runs, sims = side
    assert table.loc[0, "full_restarts_emu"] == table.loc[0, "full_restarts_sim"] == 1
    # what the run adds beyond the model is what slipped (a load spike of tens of ms is several
    # % of this tiny run): without it, the emulated time is the simulated one within 3 %
    run, sim = runs["spare"], sims["spare"][0]
    slipped = float(np.sum(run.noise["slip_s"])) * run.scale
    assert abs(run.total_s - slipped - sim.total_s) <= 0.03 * sim.total_s
    ag = agreement(table.assign(ttt_over_t0_emu=(run.total_s - slipped) / run.t0_s))
    assert bool(ag.loc[0, "agrees"])
    nf = noise_floor(runs)
    assert nf.loc[0, "detect_s_n"] >= 1 and nf.loc[0, "barrier_s_n"] >= CFG.steps
    assert mp.active_children() == []


def test_first_divergence_finds_the_first_differing_decision():
    cols = ["wall_s", "t_s", "kind", "step", "attempt", "group", "value", "info"]
    a = pd.DataFrame([(0, 10.0, "notice", 0, 0, 2, np.nan, "eof"),
                      (0, 20.0, "resolve", 0, 0, -1, 1.0, "wipeout"),
                      (0, 30.0, "restart_begin", 0, 0, -1, np.nan, ""),
                      (0, 50.0, "notice", 0, 0, 4, np.nan, "unit")], columns=cols)
    b = pd.DataFrame([(0, 10.0, "notice", 0, 0, 2, np.nan, "attempt_start"),
                      (0, 22.0, "slip", 0, 0, -1, 2.0, ""),
                      (0, 22.5, "resolve", 0, 0, -1, 1.0, "wipeout"),
                      (0, 32.5, "restart_begin", 0, 0, -1, np.nan, ""),
                      (0, 40.0, "window_reset", 0, 0, 4, 3.0, ""),
                      (0, 60.0, "notice", 0, 0, 5, np.nan, "eof")], columns=cols)
    d = first_divergence(a, b)
    # the notice channel does not matter; the window reset is the first different decision
    assert d["index"] == 3 and d["other"]["kind"] == "window_reset"
    assert d["reference"]["group"] == 4 and d["lag_s"] == pytest.approx(2.5)
    assert d["slip_s"] == 2.0 and d["window_delay_s"] == 0.0 and d["window_resets"] == 0
    assert first_divergence(a, a)["index"] is None


def test_perturbation_band_is_the_simulator_around_the_case(side):
    _table, runs, sims = side
    band = perturbation_band("spare", N, 3, 4, CFG, TRACE, runs["spare"], n_restart=3,
                             n_allreduce=2)
    assert band["n"] == 6 and band["lo"] <= sims["spare"][0].ttt_over_t0 <= band["hi"]
    assert band["detect_s"] > 0 and band["lo"] <= band["mean"] <= band["hi"]
    with pytest.raises(ValueError, match="rejoin_clock must be"):
        perturbation_band("spare", N, 3, 4, CFG, TRACE, runs["spare"], rejoin_clock="eof")


def test_perturbation_band_of_a_rejoin_method_counts_rejoins_from_the_failure(side):
    """rejoin_clock='failure': every grid point is the simulator with that rule and rejoin_s
    grown like T_r (a one-point grid: δ_r = δ_a = 0, the rule alone)."""
    _table, runs, _sims = side
    cfg = CFG.with_(rejoin_s=3 * CFG.compute_per_stack_s)
    band = perturbation_band("spare+repair", N, 3, 4, cfg, TRACE, runs["spare"], n_restart=1,
                             n_allreduce=1, rejoin_clock="failure")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = simulate("spare+repair", N, 3, 4, cfg.with_(rejoin_clock="failure"), seed=0,
                       failure_trace=TRACE).ttt_over_t0
    assert band["n"] == 1 and band["lo"] == band["hi"] == ref


def test_knob_scan_is_the_simulator_with_one_duration_grown():
    deltas = [0.0, 50.0, 400.0]
    scan = knob_scan("ckpt", N, 1, 2, CFG, MODEL_TRACE, "restart_s", deltas)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = [simulate("ckpt", N, 1, 2, CFG.with_(restart_s=CFG.restart_s + d), seed=0,
                        failure_trace=MODEL_TRACE) for d in deltas]
    assert scan["ttt_over_t0"].tolist() == [x.ttt_over_t0 for x in ref]
    assert scan["full_restarts"].tolist() == [x.full_restarts for x in ref]
    assert not scan["path_change"].iloc[0]
    assert scan["path_change"].iloc[1:].tolist() == [
        (ref[i].full_restarts, ref[i].failures_noticed)
        != (ref[i - 1].full_restarts, ref[i - 1].failures_noticed) for i in (1, 2)]
    with pytest.raises(ValueError, match="knob must be"):
        knob_scan("ckpt", N, 1, 2, CFG, MODEL_TRACE, "stall_s", deltas)
    with pytest.raises(ValueError, match="deltas must be"):
        knob_scan("ckpt", N, 1, 2, CFG, MODEL_TRACE, "restart_s", [-1.0])


def test_agreement_rule():
    t = pd.DataFrame({"method": ["a", "b", "c"], "x_emu": [1.02, 1.10, 1.10],
                      "x_sim": [1.0, 1.0, 1.0], "x_sim_sd": [0.0, 0.0, 0.05]})
    ag = agreement(t, metric="x", trials=20)
    # 2 % inside 3 %; 10 % outside; 10 % inside 3 combined s.e. = 3·0.05·sqrt(1 + 1/20)
    assert list(ag["agrees"]) == [True, False, True]


def test_emulation_spec_refuses_what_it_cannot_model():
    with pytest.raises(ValueError, match="domain_fault_share must be 0.0"):
        emulation_spec(CFG.with_(domain_fault_share=0.2), 1000.0)
    with pytest.raises(ValueError, match="mem_checkpoint_s must be 0.0"):
        emulation_spec(CFG.with_(mem_checkpoint_s=5.0), 1000.0)
    # elastic-rebalance's knobs (the registry's default b = 8) concern no emulated method
    assert emulation_spec(CFG.with_(microbatches=4, fetch_s=3.0), 1000.0).steps == CFG.steps
    spec = emulation_spec(CFG, 500.0)
    assert spec.scale == 500.0 and spec.t0_s() == CFG.t0_s()
