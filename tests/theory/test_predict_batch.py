"""predict_batch: the model over (method, r, C) of one cluster as arrays, the same numbers."""

from __future__ import annotations

import pytest
from predict_config import cfg600k

from spare_lib.theory.predict import METHODS, NoTrainingCycle, predict, predict_batch
from spare_lib.theory.predict import chain as Q


def _cfg():
    return cfg600k(200, steps=3000, rejoin_s=600.0, stall_s=30.0, microbatches=8)


def test_batch_equals_predict():
    """Every method, r and C (None: no checkpoints) through the batch kernel are predict()'s
    numbers within 1e-10: the same chain, fed block sums (:mod:`~spare_lib.theory.predict.blocks`)
    instead of per-checkpoint entries, so only the order of the sums differs."""
    cfg = _cfg()
    Cs = [1, 3, 17, 200, 3000, None]
    out = predict_batch(METHODS, 200, [2, 3, 5], Cs, cfg)
    assert set(out) == set(METHODS)
    for method, b in out.items():
        assert list(b.r) == ([1] if method in ("ckpt", "elastic-drop", "elastic-rebalance")
                             else [2, 3, 5])
        for i, r in enumerate(b.r):
            for j, C in enumerate(Cs):
                p = predict(method, 200, int(r), C, cfg)
                assert b.ttt_over_t0[i, j] == pytest.approx(p.ttt_over_t0, rel=1e-10), (
                    method, r, C)
                assert b.restarts[i, j] == pytest.approx(p.restarts, rel=1e-10, abs=1e-12)
                assert b.restart_time_s[i, j] == pytest.approx(p.restart_total_s, rel=1e-10,
                                                               abs=1e-9)
        r, C, ttt = b.best()
        assert ttt == b.ttt_over_t0.min()


def test_coarse_chain_is_the_chain_on_every_gth_checkpoint(monkeypatch):
    """max_states < the states of the run: the batch's block sums are those of the entries the
    full unit law gives (predict() with the same state cap: within 1e-10, the order of the
    sums)."""
    cfg = _cfg()
    out = predict_batch(("spare", "spare+repair", "elastic-drop"), 200, [4], [1, 2, 7], cfg,
                        max_states=40)
    monkeypatch.setattr(Q, "_MAX_STATES", 40)
    for method, b in out.items():
        for j, C in enumerate((1, 2, 7)):
            p = predict(method, 200, int(b.r[0]), C, cfg)
            assert b.ttt_over_t0[0, j] == pytest.approx(p.ttt_over_t0, rel=1e-10), (method, C)


def test_bad_inputs_and_untrainable_clusters():
    cfg = _cfg()
    with pytest.raises(ValueError, match="methods"):
        predict_batch(("nope",), 200, [2], [10], cfg)
    with pytest.raises(ValueError, match="C_values"):
        predict_batch(("spare",), 200, [2], [0], cfg)
    with pytest.raises(ValueError, match="max_states"):
        predict_batch(("spare",), 200, [2], [5], cfg, max_states=4)
    with pytest.raises(ValueError, match="N must be"):
        predict_batch(("spare",), 1, [2], [5], cfg)
    # a 2-h restart window against a system MTBF of 90 s never trains: inf, as the planner
    # reports it
    bad = cfg600k(90, system_mtbf_s=89.1, failure_dist="exponential", jitter_sigma=0.0,
                  steps=2000)
    with pytest.raises(NoTrainingCycle):
        predict("ckpt", 90, 1, 79, bad)
    assert predict_batch(("ckpt",), 90, [1], [79], bad)["ckpt"].ttt_over_t0[0, 0] == float("inf")
