"""Generated tables of ``docs/*.md``: markdown blocks rendered from ``data/results/``.

A doc marks a generated block with ``<!-- NAME:start -->`` … ``<!-- NAME:end -->``
(:data:`spare_lib.figures.docs_numbers.BLOCK`). :data:`BLOCKS` maps a doc's file name to its
blocks, and each block to the function that renders it from a results folder; ``make docs``
rewrites them (:func:`render_blocks`) and ``tests/test_docs_numbers.py`` fails when a committed
block differs from its results file. A block whose results file is missing is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd


def _fmt(v: Any, spec: str) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "—"
    return format(v, spec).replace("-", "−")


def scale_runtime_table(results_dir: Path) -> str:
    """``docs/scale.md`` §4: one 10,000-step run per N, direct loop against the barrier sampler
    (``scale_runtime.csv``, written by ``benchmarks/bench_scale.py --csv``)."""
    df = pd.read_csv(Path(results_dir) / "scale_runtime.csv")
    lines = [f"Measured {df['date'].iloc[0]} on {int(df['cpus'].iloc[0])} CPUs, "
             f"{int(df['steps'].iloc[0]):,} steps a run (`scale_runtime.csv`):", "",
             "| N | r | direct (s) | sampled (s) | direct / sampled | peak RSS (GB) |",
             "|---|---|---|---|---|---|"]
    for row in df.itertuples(index=False):
        ratio = row.direct_s / row.sampled_s if row.direct_s == row.direct_s else float("nan")
        lines.append(f"| {int(row.N):,} | {int(row.r)} | {_fmt(row.direct_s, '.3f')} | "
                     f"{_fmt(row.sampled_s, '.3f')} | {_fmt(ratio, '.1f')} | "
                     f"{_fmt(row.peak_rss_gb, '.2f')} |")
    return "\n".join(lines) + "\n"


_LAYOUTS = ("ruler", "consecutive", "domain-aware", "random")
_DOC_QS = (0.0, 0.05, 0.1, 0.2, 0.3)


def _q(q: float) -> str:
    return format(q, "g")


def _mu_q_rows(results_dir: Path) -> pd.DataFrame:
    df = pd.read_csv(Path(results_dir) / "correlated_mu_q_mc.csv")
    return df[df["q"].isin(_DOC_QS)]


def correlated_mu_q_table(results_dir: Path, N: int) -> str:
    """``docs/correlated_failures.md``: Monte Carlo μ_q ± one s.e. per layout at N (600 or 200),
    and the domain-aware / ruler ratio (``correlated_mu_q_mc.csv``, notebook 75)."""
    df = _mu_q_rows(results_dir)
    df = df[df["N"] == N]
    lines = ["| q | ruler | consecutive | domain-aware | random | domain-aware / ruler |",
             "|---|---|---|---|---|---|"]
    for q, g in df.groupby("q", sort=True):
        by = g.set_index("layout")
        cells = [f"{_fmt(by.at[lay, 'mu_q'], '.2f')} ± {_fmt(by.at[lay, 'mu_q_se'], '.2f')}"
                 for lay in _LAYOUTS]
        ratio = by.at["domain-aware", "mu_q"] / by.at["ruler", "mu_q"]
        lines.append(f"| {_q(q)} | " + " | ".join(cells) + f" | {_fmt(ratio, '.3f')} |")
    return "\n".join(lines) + "\n"


def correlated_theory_error_table(results_dir: Path) -> str:
    """``docs/correlated_failures.md``: ``mu_correlated`` against the Monte Carlo, the
    approximation and its relative error per (N, layout) (``correlated_mu_q_mc.csv``)."""
    df = _mu_q_rows(results_dir)
    cols = [(N, lay) for N in (600, 200) for lay in ("ruler", "consecutive", "domain-aware")]
    lines = ["| q | " + " | ".join(f"N={N} {lay}" for N, lay in cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    for q, g in df.groupby("q", sort=True):
        by = g.set_index(["N", "layout"])
        cells = []
        for key in cols:
            approx, mc = by.at[key, "approx"], by.at[key, "mu_q"]
            cells.append(f"{_fmt(approx, '.2f')} ({_fmt(100 * (approx / mc - 1), '+.1f')} %)")
        lines.append(f"| {_q(q)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def correlated_r_star_table(results_dir: Path) -> str:
    """``docs/correlated_failures.md``: r* of Eq. 7 with μ_q at N = 600, D = 10 per layout and q
    (``correlated_r_star_theory.csv``)."""
    df = pd.read_csv(Path(results_dir) / "correlated_r_star_theory.csv")
    lines = ["| layout | q | r* | r* at q = 0 | μ_q at r* | J_q at r* | μ_0 at the q = 0 r* "
             "| r restoring μ_0 |",
             "|---|---|---|---|---|---|---|---|"]
    for row in df.itertuples(index=False):
        restore = "none" if row.r_restore != row.r_restore else str(int(row.r_restore))
        lines.append(f"| {row.layout} | {_q(row.q)} | {int(row.r_star)} | {int(row.r_star_q0)} | "
                     f"{_fmt(row.mu_q_at_r_star, '.1f')} | {_fmt(row.J_q_at_r_star, '.3f')} | "
                     f"{_fmt(row.mu_0_at_r_star_q0, '.1f')} | {restore} |")
    return "\n".join(lines) + "\n"


def _ttt(v: float) -> str:
    return _fmt(v, ".3f" if v < 10 else ".2f")


def correlated_optima_table(results_dir: Path) -> str:
    """``docs/correlated_failures.md``: simulated optima per candidate and q, and SPARe's gains
    over each Rep placement (``correlated_cluster_optima.csv``, notebook 75)."""
    df = pd.read_csv(Path(results_dir) / "correlated_cluster_optima.csv")
    cands = ("spare-ruler", "spare-domain-aware", "rep-consecutive", "rep-strided")
    lines = ["| q | SPARe ruler r, TTT/T0 | SPARe domain-aware r, TTT/T0 | Rep consecutive r, TTT/T0 "
             "| Rep strided r, TTT/T0 | gain vs Rep consecutive | gain vs Rep strided |",
             "|---|---|---|---|---|---|---|"]
    for q, g in df.groupby("q", sort=True):
        by = g.set_index("candidate")
        cells = [f"{int(by.at[c, 'r'])}, {_ttt(by.at[c, 'ttt_over_t0'])}" for c in cands]
        gains = [" / ".join(_fmt(100 * by.at[c, f"gain_vs_{rep}"], ".1f") + " %"
                            for c in cands[:2]) for rep in cands[2:]]
        lines.append(f"| {_q(q)} | " + " | ".join(cells + gains) + " |")
    return "\n".join(lines) + "\n"


_MB_RIVALS = (("elastic-rebalance", 0.0), ("elastic-rebalance", 10.0), ("elastic-rebalance", 60.0),
              ("elastic-drop", None), ("spare", None))


def _mb_cell(r: Any) -> str:
    """One comparison: 'mean [low, high]' in %, bold when the interval excludes 0 (a win or a
    loss), plain when tied; a capped run's bound without an interval."""
    if r.bound == "none":
        return "both capped"
    if isinstance(r.bound, str) and r.bound:
        return f"{'≥' if r.bound == 'lower' else '≤'} {_fmt(r.diff_pct, '+.2f')} (capped)"
    text = (f"{_fmt(r.diff_pct, '+.2f')} [{_fmt(r.ci_low_pct, '+.2f')}, "
            f"{_fmt(r.ci_high_pct, '+.2f')}]")
    return text if r.verdict == "tied" else f"**{text}**"


def verdict_bounds(verdicts: pd.DataFrame) -> pd.Series:
    """The ``bound`` column of notebook 82's verdicts as strings: '' where both runs finished
    (empty in the CSV, or no column in a table written before runs were capped), else 'lower',
    'upper' or 'none' (:mod:`spare_lib.cluster.planning.microbatch_plan`)."""
    b = verdicts["bound"] if "bound" in verdicts else pd.Series(float("nan"), index=verdicts.index)
    return b.astype(object).where(b.notna(), "")


def microbatch_verdict_table(results_dir: Path) -> str:
    """``docs/strategies.md`` §7: notebook 82's verdicts, each SPARe-b method against each rival
    in both failure worlds and at every size, (SPARe-b − rival) over the rival's mean TTT in %
    with the Holm-adjusted paired 95 % interval (``microbatch_verdicts.csv``)."""
    df = pd.read_csv(Path(results_dir) / "microbatch_verdicts.csv")
    df["bound"] = verdict_bounds(df)
    if "world" not in df:
        df["world"] = "paper"
    lines = ["| world | GPUs | SPARe-b variant | rebalance, fetch 0 s | fetch 10 s | fetch 60 s "
             "| elastic-drop | SPARe+CKPT |", "|---|---|---|---|---|---|---|---|"]
    order = {"paper": 0, "llama3": 1}
    df = df.assign(_w=df["world"].map(lambda w: order.get(w, 2)))
    for (_, w, g, _m), sub in df.groupby(["_w", "world", "gpus", "method"], sort=True):
        cells = []
        for rival, fetch in _MB_RIVALS:
            hit = sub[(sub.rival_method == rival)
                      & ((sub.fetch_s == fetch) if fetch is not None else sub.fetch_s.isna())]
            cells.append(_mb_cell(next(hit.itertuples())) if len(hit) else "—")
        label = sub["spare_variant"].iloc[0]
        lines.append(f"| {w} | {int(g):,} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: doc file name -> {block name: renderer(results_dir) -> markdown}; each renderer names its file.
BLOCKS: dict[str, dict[str, tuple[str, Callable[[Path], str]]]] = {
    "scale.md": {"scale-runtime": ("scale_runtime.csv", scale_runtime_table)},
    "strategies.md": {"microbatch-verdicts": ("microbatch_verdicts.csv", microbatch_verdict_table)},
    "correlated_failures.md": {
        "mu-q-600": ("correlated_mu_q_mc.csv", lambda d: correlated_mu_q_table(d, 600)),
        "mu-q-200": ("correlated_mu_q_mc.csv", lambda d: correlated_mu_q_table(d, 200)),
        "mu-q-theory": ("correlated_mu_q_mc.csv", correlated_theory_error_table),
        "r-star-q": ("correlated_r_star_theory.csv", correlated_r_star_table),
        "optima-q": ("correlated_cluster_optima.csv", correlated_optima_table),
    },
}


def render_blocks(name: str, text: str, results_dir: Path) -> str:
    """``text`` (the doc ``name``) with each of its :data:`BLOCKS` rendered from ``results_dir``."""
    for block, (file, fn) in BLOCKS.get(name, {}).items():
        if not (Path(results_dir) / file).exists():
            continue
        body = fn(Path(results_dir))
        pat = re.compile(rf"<!--\s*{re.escape(block)}:start\s*-->.*?<!--\s*{re.escape(block)}:end\s*-->",
                         re.S)
        new = f"<!-- {block}:start -->\n{body}<!-- {block}:end -->"
        text = pat.sub(lambda _m, new=new: new, text)
    return text


__all__ = ["BLOCKS", "render_blocks", "scale_runtime_table"]
