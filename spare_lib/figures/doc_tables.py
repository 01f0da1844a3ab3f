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


#: doc file name -> {block name: renderer(results_dir) -> markdown}; each renderer names its file.
BLOCKS: dict[str, dict[str, tuple[str, Callable[[Path], str]]]] = {
    "scale.md": {"scale-runtime": ("scale_runtime.csv", scale_runtime_table)},
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
