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


def _plan(results_dir: Path, name: str) -> dict[str, Any]:
    return json.loads((Path(results_dir) / name).read_text())


def _model_vs_sim_pct(plan: dict[str, Any], method: str) -> float:
    """Largest |model TTT/T0 / simulated mean − 1| (%) over a method's finished candidates."""
    pts = [p for p in plan["points"] if p["method"] == method and p["completed"] == p["trials"]]
    return 100 * max(abs(p["closed_form_ttt"] / p["ttt_mean"] - 1) for p in pts)


def _model_at_choice(plan: dict[str, Any], method: str) -> float:
    """The model's TTT/T0 at the (r, C) the simulation chose for ``method``."""
    c = plan["choices"][method]
    return next(p["closed_form_ttt"] for p in plan["points"]
                if p["method"] == method and p["r"] == c["r"]
                and p["checkpoint_steps"] == c["checkpoint_steps"])


def readme_plan_values(results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """The README's "Plan a cluster" prose, derived from the ``spare plan`` outputs that
    ``make docs`` stores (:data:`spare_lib.figures.docs_numbers.DOC_COMMANDS`): how far the
    model is from the simulation in the console example, the three paper configurations' gains,
    the closed forms against the simulation, failure domains, and the Llama-3-like cluster."""
    from spare_lib.cluster.config import cluster_config

    ex = _plan(results_dir, "readme_plan_600k.json")
    rep2 = next(p for p in ex["points"] if p["method"] == "rep" and p["r"] == 2)
    out: dict[str, Any] = {"example": {
        "spare_model_vs_sim_max_pct": _model_vs_sim_pct(ex, "spare"),
        "rep_model_vs_sim_max_pct": _model_vs_sim_pct(ex, "rep"),
        "rep_r2_sim_ttt": rep2["ttt_mean"]}}
    for N, name in ((200, "readme_plan_600k_n200.json"), (600, "readme_plan_600k.json"),
                    (1000, "readme_plan_600k_n1000.json")):
        d = _plan(results_dir, name)
        out[f"paper_N{N}"] = {"spare_r": d["choices"]["spare"]["r"], "rep_r": d["choices"]["rep"]["r"],
                              "gain_vs_rep_pct": 100 * d["verdict"]["gain_of_best"]["rep"]}
    for key, name in (("independent", "readme_plan_600k_finite.json"),
                      ("domains", "readme_plan_600k_domains_finite.json")):
        f = _plan(results_dir, name)["fast"]
        out[f"finite_{key}"] = {"spare_r": f["spare"]["r"], "spare_mu": f["spare"]["mu"],
                                "spare_t_f_h": f["spare"]["restart_interval_s"] / 3600,
                                "spare_ttt": f["spare"]["ttt_over_t0"], "rep_r": f["rep"]["r"],
                                "rep_ttt": f["rep"]["ttt_over_t0"]}
    ll = _plan(results_dir, "readme_plan_llama.json")
    llf = _plan(results_dir, "readme_plan_llama_finite.json")
    out["llama"] = {
        "ring_allreduce_s": cluster_config(16384, 128).allreduce_s,
        **{f"{m}_model_ttt": _model_at_choice(ll, m) for m in ("spare", "rep", "ckpt")},
        **{f"{m}_sim_ttt": ll["choices"][m]["ttt"] for m in ("spare", "rep", "ckpt")},
        **{f"finite_{m}_loss_pct": 100 * llf["model_verdict"]["loss_vs_best"][m]["loss"]
           for m in ("spare", "rep")}}
    return out


def correlated_values(results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """``docs/correlated_failures.md``: aggregates of notebook 75's tables — the range of the
    μ_q approximation's error (ruler and domain-aware, q > 0), its domain-aware / ruler gain at
    N = 600, q = 0.2 against the Monte Carlo's, the paired domain-aware speed-ups and the
    independent-failure reference of ``correlated_cost.csv``, and Rep strided's loss."""
    import pandas as pd

    d = Path(results_dir)
    mc = pd.read_csv(d / "correlated_mu_q_mc.csv")
    sub = mc[(mc.q > 0) & mc.layout.isin(["ruler", "domain-aware"]) & mc.approx.notna()]
    err = 100 * (sub.approx / sub.mu_q - 1)
    at = mc[(mc.N == 600) & (mc.q == 0.2)].set_index("layout")
    sub_se = 100 * sub.mu_q_se / sub.mu_q
    cost = pd.read_csv(d / "correlated_cost.csv").set_index("q")
    opt = pd.read_csv(d / "correlated_cluster_optima.csv")
    rep = opt[opt.candidate == "rep-strided"].set_index("q").ttt_over_t0
    out: dict[str, Any] = {
        "approx_error_low_min_pct": float(-err.max()), "approx_error_low_max_pct": float(-err.min()),
        "mc_se_min_pct": float(sub_se.min()), "mc_se_max_pct": float(sub_se.max()),
        "approx_gain_600_q02_pct": 100 * float(at.at["domain-aware", "approx"]
                                               / at.at["ruler", "approx"] - 1),
        "mc_gain_600_q02_pct": 100 * float(at.at["domain-aware", "mu_q"] / at.at["ruler", "mu_q"] - 1),
        "kill_rate_factor_q02": 1 - 0.2 + 0.2 * 10,
    }
    for q in cost.index:
        key = f"q{q:g}"
        out[key] = {"paired_da_faster_pct": 100 * (1 - float(cost.at[q, "paired DA/ruler at r_da (mean)"])),
                    "rep_strided_loss_pct": 100 * float(rep[q] / rep[0.0] - 1)}
        ind = cost.at[q, "ttt_independent_same_kill_rate"]
        if ind == ind:
            out[key]["independent_vs_q0_pct"] = 100 * float(ind / cost.at[q, "ttt_ruler_q0"] - 1)
    return out


def _grid_point(row: Any) -> dict[str, Any]:
    """One simulated point of notebook 55's grids: its setting, the model and the simulation."""
    out = {k: row[k].item() if hasattr(row[k], "item") else row[k]
           for k in ("method", "N", "r", "C", "model_ttt", "sim_ttt", "sim_ttt_se", "sim_avail")}
    if "system_mtbf_s" in row.index:
        out.update(config_id=int(row["config_id"]), m_min=float(row["system_mtbf_s"]) / 60,
                   t_r_min=float(row["restart_s"]) / 60, k=float(row["weibull_shape"]))
    return out


def predict_values(results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """``docs/predictive_model.md``: the model's terms at the paper's three SPARe optima
    (N = 200 / 600 / 1000, r = 9 / 8 / 9 on ``h100_600k``; the barrier factor E[max] − 1, the
    mean restart over T_r, the groups dead at the first poll), and aggregates of notebook 55's
    grids: Eq. 7's error at the simulator's best point per (method, N), Rep's gain of r = 3 over
    r = 2, the wider grid's axes, its worst points, and the (setting, method) pairs whose model
    r lies outside the simulator's tie set, with their model and simulated TTT/T0."""
    import pandas as pd

    from spare_lib.cluster import h100_600k
    from spare_lib.theory.predict import predict

    d = Path(results_dir)
    paper = pd.read_csv(d / "predict_paper_grid.csv")
    wide = pd.read_csv(d / "predict_wide_grid.csv")
    agree = pd.read_csv(d / "predict_r_agreement.csv")
    out: dict[str, Any] = {}
    ratios = []
    for N, r in ((200, 9), (600, 8), (1000, 9)):
        c = h100_600k(N)
        C = int(paper[(paper.method == "spare") & (paper.N == N) & (paper.r == r)].C.iloc[0])
        p = predict("spare", N, r, C, c)
        ratios.append(p.restart_s / c.restart_s)
        out[f"N{N}"] = {"r": r, "C": C, "barrier_pct": 100 * (p.barrier_factor - 1),
                        "restart_over_t_r": ratios[-1], "prefail_pct": 100 * p.prefail_fraction,
                        "jitter_min": c.jitter_min, "compute_per_stack_s": c.compute_per_stack_s}
    out["restart_over_t_r_min"], out["restart_over_t_r_max"] = min(ratios), max(ratios)
    best = paper.loc[paper.groupby(["method", "N"]).sim_ttt.idxmin()]
    out["eq7_below_at_best_min_pct"] = float(-best.err_eq7_pct.max())
    out["eq7_below_at_best_max_pct"] = float(-best.err_eq7_pct.min())
    rep = paper[paper.method == "rep"].pivot(index="N", columns="r", values="sim_ttt")
    gain = 100 * (rep[2] / rep[3] - 1)
    out["rep_r3_gain_min_pct"], out["rep_r3_gain_max_pct"] = float(gain.min()), float(gain.max())
    worst = paper.loc[paper.err_model_pct.abs().nlargest(3).index]
    out["paper_worst"] = [_grid_point(row) for _, row in worst.iterrows()]
    out["wide_worst"] = _grid_point(wide.loc[wide.err_model_pct.abs().idxmax()])
    out["wide_axes"] = {"m_min": sorted({float(v) / 60 for v in wide.system_mtbf_s}),
                        "t_r_min": sorted({float(v) / 60 for v in wide.restart_s}),
                        "k": sorted({float(v) for v in wide.weibull_shape}),
                        "N": sorted({int(v) for v in wide.N})}
    misses = []
    for _, row in agree[~agree.agree.astype(bool)].iterrows():
        pts = wide[(wide.config_id == row.config_id) & (wide.method == row.method)].sort_values("r")
        by = pts.set_index("r")
        sim_r, mod_r = int(row.sim_best_r), int(row.model_r)
        misses.append({"points": [_grid_point(p) for _, p in pts.iterrows()],
                       "sim_best_r": sim_r, "model_r": mod_r,
                       "model_gap_pct": 100 * float(by.at[sim_r, "model_ttt"]
                                                    / by.at[mod_r, "model_ttt"] - 1),
                       "sim_gap_pct": 100 * float(by.at[mod_r, "sim_ttt"]
                                                  / by.at[sim_r, "sim_ttt"] - 1)})
    out["r_agreement"] = {"pairs": len(agree), "agree": int(agree.agree.sum()),
                          "rep_pairs": int((agree.method == "rep").sum()),
                          "rep_agree": int(agree[agree.method == "rep"].agree.sum()),
                          "misses": misses}
    conv = pd.read_csv(d / "mu_convention.csv").set_index(["mu_convention", "N"])
    col = "max_err_mu_closed_r_ge_3_pct"
    out["mu_convention"] = {"endured_worst_pct": float(conv.xs("endured")[col].max()),
                            "endured_worst_N": int(conv.xs("endured")[col].idxmax()),
                            "index_worst_pct": float(conv.xs("index")[col].max())}
    return out


#: Section name -> the function that computes it (those taking ``results_dir`` read results).
SECTIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "stall_rule": stall_rule_values,
    "allreduce": allreduce_values,
    "repair": repair_values,
    "constants": constants_values,
    "readme_plan": readme_plan_values,
    "correlated": correlated_values,
    "predict": predict_values,
}
#: The sections computed from committed results files (they take ``results_dir``).
FROM_RESULTS = frozenset({"repair", "readme_plan", "correlated", "predict"})


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
