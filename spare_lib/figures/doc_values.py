"""Numbers the docs quote that the code computes on the spot: ``data/results/doc_values.json``.

Some numbers of ``docs/*.md`` and the README are neither a row of a notebook's results file nor
the output of a command: the quick stall-rule model of ``docs/strategies.md`` §1, the α–β
all-reduce times of the paper's three configurations, a constant of the library quoted in prose,
or an aggregate of a committed results file (the largest error over the cases of a table).
:func:`doc_values` computes all of them (in well under a second, no simulation), ``make docs``
writes them to ``data/results/doc_values.json`` through :func:`write_results`, and the docs quote
them with ordinary number tags (``<!-- num doc_values.json - stall_rule::spare::failures_per_poll
.2f -->``, :mod:`spare_lib.figures.docs_numbers`).

:func:`stale_doc_values` compares the committed file with a fresh computation, so a changed
constant, a changed model or a perturbed results file that an aggregate reads fails
``tests/test_doc_values.py`` until ``make docs`` is rerun (which then also rewrites the tags).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spare_lib.config import RESULTS_DIR

#: The file of ``data/results/`` that holds the computed doc values.
DOC_VALUES_FILE = "doc_values.json"


def stall_rule_values() -> dict[str, Any]:
    """``docs/strategies.md`` §1: :func:`stall_rule_model` at 600k GPUs (N = 600, m = 5 min).

    SPARe's step is two stacks plus T_a with one stall per failure event; the elastic step is one
    stack plus T_a with two stalls per event (a blocking rejoin); stall s = 3 min and the
    paper's 0.1 s.
    """
    from spare_lib.cluster import h100_600k
    from spare_lib.cluster.planning.strategies import stall_rule_model

    c, stall_s = h100_600k(600), 180.0
    steps = {"spare": (2 * c.compute_per_stack_s + c.allreduce_s, 1.0),
             "elastic_blocking": (c.compute_per_stack_s + c.allreduce_s, 2.0)}
    out: dict[str, Any] = {"mtbf_min": c.system_mtbf_s / 60, "stall_min": stall_s / 60,
                           "paper_stall_s": c.stall_s}
    for name, (step_s, n) in steps.items():
        q = stall_rule_model(step_s, stall_s, c.system_mtbf_s, n)
        q0 = stall_rule_model(step_s, c.stall_s, c.system_mtbf_s, n)
        out[name] = {"failure_free_step_s": step_s, "stalls_per_event": n, **q,
                     "efficiency_paper_stall": q0["efficiency"]}
    return out


def allreduce_values() -> dict[str, Any]:
    """``docs/scale.md`` §2 and the README: the ring T_a of the paper's three configurations
    (600k GPUs in groups of 3000 / 1000 / 600, N = 200 / 600 / 1000) against the paper's
    T_a = N/100 s, and the model's constants."""
    from spare_lib.cluster.config import (
        ALLREDUCE_BW_BYTES_S,
        ALLREDUCE_LATENCY_S,
        allreduce_600k_s,
        cluster_config,
    )

    out: dict[str, Any] = {"bw_gb_s": ALLREDUCE_BW_BYTES_S / 1e9,
                           "latency_us": ALLREDUCE_LATENCY_S * 1e6}
    for per_group in (3000, 1000, 600):
        cfg = cluster_config(600_000, per_group)
        N = 600_000 // per_group
        paper = allreduce_600k_s(N)
        out[f"N{N}"] = {"gpus_per_group": per_group, "ring_s": cfg.allreduce_s,
                        "paper_s": paper, "rel_diff_pct": 100 * (cfg.allreduce_s / paper - 1)}
    return out


def repair_values(results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """``docs/strategies.md`` §7: the largest |error| of the repair chain over the cases of
    ``repair_theory_vs_sim.csv`` (time and failures to a wipe-out), and the range of the error
    of the chain without the ramp correction."""
    import pandas as pd

    df = pd.read_csv(Path(results_dir) / "repair_theory_vs_sim.csv")
    err = df[["error_time", "error_failures"]].abs().to_numpy()
    return {"cases": len(df), "max_abs_error_pct": 100 * float(err.max()),
            "exp_chain_error_min_pct": 100 * float(df["error_exp_chain"].min()),
            "exp_chain_error_max_pct": 100 * float(df["error_exp_chain"].max())}


def constants_values() -> dict[str, Any]:
    """Constants of the library that the docs quote (``docs/failures.md`` §7): the horizon margin
    of trace replays and the checkpoint multipliers of the planner's second stage."""
    from spare_lib.cluster.planning import CKPT_FACTORS
    from spare_lib.cluster.planning.traces import HORIZON_MARGIN

    return {"horizon_margin": HORIZON_MARGIN, "ckpt_factors": list(CKPT_FACTORS)}


#: Section name -> the function that computes it (those taking ``results_dir`` read results).
SECTIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "stall_rule": stall_rule_values,
    "allreduce": allreduce_values,
    "repair": repair_values,
    "constants": constants_values,
}
#: The sections computed from committed results files (they take ``results_dir``).
FROM_RESULTS = frozenset({"repair"})


def doc_values(results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """Every computed doc value, by section (:data:`SECTIONS`)."""
    return {name: (f(results_dir) if name in FROM_RESULTS else f()) for name, f in SECTIONS.items()}


def write_doc_values(results_dir: Path = RESULTS_DIR, path: Path | None = None) -> Path:
    """Write :func:`doc_values` (computed from ``results_dir``) to ``path``
    (default ``results_dir / DOC_VALUES_FILE``) through :func:`write_results`."""
    from spare_lib._util.results_io import write_results

    return write_results(doc_values(results_dir), path or Path(results_dir) / DOC_VALUES_FILE,
                         run_log=None)


def stale_doc_values(results_dir: Path = RESULTS_DIR) -> list[str]:
    """One message per top-level section whose committed value differs from a fresh computation
    (or that is missing); empty when ``doc_values.json`` is current."""
    path = Path(results_dir) / DOC_VALUES_FILE
    if not path.exists():
        return [f"data/results/{DOC_VALUES_FILE} is missing (run `make docs`)"]
    committed = json.loads(path.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        fresh = json.loads(write_doc_values(results_dir, Path(tmp) / DOC_VALUES_FILE).read_text())
    out = []
    for name in sorted(set(committed) | set(fresh)):
        if committed.get(name) != fresh.get(name):
            out.append(f"data/results/{DOC_VALUES_FILE} [{name}]: the code gives {fresh.get(name)}, "
                       f"the file has {committed.get(name)} (run `make docs`)")
    return out


__all__ = ["DOC_VALUES_FILE", "SECTIONS", "doc_values", "stale_doc_values", "write_doc_values"]
