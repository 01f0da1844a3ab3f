"""The event core against results recorded before the method seam (issue 11): bit for bit.

``data/core_golden.json`` holds the SimResults of 13 runs (SPARe, Rep, CKPT-only; Weibull,
exponential, trace replay; exact patch; consecutive layout; no checkpoints; no jitter) as
produced by the monolithic core of commit acce17c, floats as hex. Any change to the core or to
a method must reproduce them exactly; a change that is meant to alter numbers must say so and
regenerate this file in its own commit.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from spare_lib.cluster import h100_600k, simulate

GOLDEN = json.loads((Path(__file__).parent / "data" / "core_golden.json").read_text())

CASES = [
    dict(method="spare", N=200, r=9, ckpt_steps=15, steps=600, seed=1),
    dict(method="spare", N=600, r=8, ckpt_steps=23, steps=400, seed=2),
    dict(method="spare", N=200, r=4, ckpt_steps=None, steps=300, seed=3),
    dict(method="spare", N=200, r=6, ckpt_steps=10, steps=400, seed=4, exact_patch=True),
    dict(method="spare", N=200, r=5, ckpt_steps=12, steps=300, seed=5, failure_dist="exponential"),
    dict(method="spare", N=120, r=4, ckpt_steps=8, steps=300, seed=6, layout="consecutive"),
    dict(method="rep", N=200, r=3, ckpt_steps=6, steps=400, seed=7),
    dict(method="rep", N=600, r=2, ckpt_steps=9, steps=300, seed=8),
    dict(method="rep", N=100, r=3, ckpt_steps=None, steps=200, seed=9, failure_dist="exponential"),
    dict(method="ckpt", N=200, r=1, ckpt_steps=5, steps=30, seed=10, max_t0=30.0),
    dict(method="spare", N=200, r=9, ckpt_steps=15, steps=300, seed=11, trace=True),
    dict(method="rep", N=200, r=3, ckpt_steps=6, steps=300, seed=12, trace=True),
    dict(method="spare", N=1000, r=9, ckpt_steps=30, steps=200, seed=13, jitter_sigma=0.0),
]

def _run(c: dict) -> dict:
    c = dict(c)
    over = {k: c.pop(k) for k in ("failure_dist", "jitter_sigma") if k in c}
    cfg = h100_600k(c["N"], steps=c.pop("steps"), **over)
    kw = {}
    if c.pop("trace", False):
        rng = np.random.default_rng(99)
        n = 4000
        kw["failure_trace"] = np.column_stack([np.sort(rng.uniform(0, 3e6, n)),
                                               rng.integers(0, c["N"], n)])
    for key in ("exact_patch", "layout"):
        if key in c:
            kw[key] = c.pop(key)
    if "max_t0" in c:
        kw["max_wall_s"] = c.pop("max_t0") * cfg.t0_s()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = simulate(c["method"], c["N"], c["r"], c["ckpt_steps"], cfg, seed=c["seed"], **kw)
    d = {}
    for k, v in res.__dict__.items():
        d[k] = v.hex() if isinstance(v, float) else (list(v) if isinstance(v, tuple) else v)
    return d


@pytest.mark.parametrize("entry", GOLDEN, ids=lambda e: "{method}-N{N}-r{r}-s{seed}".format(**e["case"]))
def test_core_reproduces_pre_seam_results_bit_for_bit(entry: dict) -> None:
    """Every recorded field (the SimResult of acce17c; ``shrink_s`` since renamed ``stall_s``)
    is reproduced exactly; fields added since are not part of the record."""
    got = _run(entry["case"])
    assert {k: got[k] for k in entry["result"]} == entry["result"]


def test_golden_cases_are_the_ones_recorded() -> None:
    assert [e["case"] for e in GOLDEN] == CASES
