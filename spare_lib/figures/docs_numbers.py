"""Numbers in ``docs/*.md`` and the README, generated from ``data/results/`` (``make docs``).

A doc quotes a result by wrapping it in a *number tag* that names its source::

    Eq. 7 is off by <!-- num predict_error_summary.csv grid=wide,method=both
    ttt_eq7_mean_pct .2f -->17.40<!-- /num --> % on average

(written on one line in a doc)

The comment is invisible on GitHub. Its fields, separated by spaces:

``file``
    a CSV or JSON file of ``data/results/``;
``row``
    CSV: ``col=value[,col=value...]`` filters that select exactly one row (values compared as
    numbers when both parse as numbers), or ``#i`` for the i-th row (0-based); JSON: ``-``;
``column``
    CSV: the column; JSON: the key path, keys joined by ``::`` (``blocking/3.0::best::ttt``);
``format`` (optional)
    a Python format spec (``.2f``, ``.1f``, ``,d``), default ``g``;
``scale`` (optional)
    ``*100`` (or any ``*factor``) multiplies the value before formatting (fractions to %).

A field with spaces (a column such as ``crossings (min)``, a row value such as
``ratio=SPARe best / elastic best``) is quoted as in a shell: ``"crossings (min)"``,
``rejoin=blocking,"ratio=SPARe best / elastic best"``; an unnamed index column of a CSV is
``"Unnamed: 0"``, as pandas reads it. Numbers the code computes without a notebook (a model
evaluated at the doc's inputs, a constant, an aggregate of a results file) are in
``doc_values.json`` (:mod:`spare_lib.figures.doc_values`, written by ``make docs``).

:func:`render` rewrites the text between the tags from the files (``make docs``, run by
``make figures``); :func:`stale_numbers` lists every tag whose text differs (the test
``tests/test_docs_numbers.py``: a changed result makes ``make test`` fail until the docs are
regenerated, and a perturbed committed value fails it too); :func:`untagged_doc_numbers` counts
the decimal numbers of a doc's prose (outside code blocks) that are neither tagged nor citations.

Usage: ``python -m spare_lib.figures.docs_numbers [--check]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from spare_lib.config import REPO_ROOT, RESULTS_DIR
from spare_lib.figures.prose import untagged_numbers


#: Commands whose output the docs quote: results file -> arguments of ``python -m spare_lib.cli``
#: (``make docs`` runs them and writes the JSON through ``write_results``; wall times dropped).
def _paper_config(per_group: int, step_s: int) -> tuple[str, ...]:
    """``spare plan`` flags of one of the paper's three 600k-GPU configurations
    (``benchmarks/bench_plan.py``; N = 200 / 600 / 1000 at 3000 / 1000 / 600 GPUs per group)."""
    return ("plan", "--gpus", "600000", "--gpus-per-group", str(per_group), "--system-mtbf-min",
            "5", "--restart-min", "60", "--checkpoint-s", "58.8", "--step-s", str(step_s))


#: The Llama-3-like cluster of the README's "SPARe is not always the answer".
_LLAMA = ("plan", "--gpus", "16384", "--gpus-per-group", "128", "--gpu-mtbf-hours", "49152",
          "--restart-min", "20", "--checkpoint-s", "30", "--step-s", "10", "--allreduce", "preset")

DOC_COMMANDS: dict[str, tuple[str, ...]] = {
    "readme_plan_1m_gpus.json": ("plan", "--gpus", "1000000", "--gpus-per-group", "128",
                                 "--simulate", "3", "--json"),
    # the README's console example (N = 600) and the other two paper configurations
    "readme_plan_600k.json": (*_paper_config(1000, 70), "--simulate", "3", "--json"),
    "readme_plan_600k_n200.json": (*_paper_config(3000, 66), "--simulate", "3", "--json"),
    "readme_plan_600k_n1000.json": (*_paper_config(600, 74), "--simulate", "3", "--json"),
    # the closed forms on the same cluster, without and with failure domains (no simulation)
    "readme_plan_600k_finite.json": (*_paper_config(1000, 70), "--model", "finite", "--json"),
    "readme_plan_600k_domains_finite.json": (*_paper_config(1000, 70), "--domain-size", "10",
                                             "--domain-fault-share", "0.2", "--layout",
                                             "domain-aware", "--model", "finite", "--json"),
    "readme_plan_llama.json": (*_LLAMA, "--simulate", "3", "--json"),
    "readme_plan_llama_finite.json": (*_LLAMA, "--model", "finite", "--json"),
}

#: The documents whose numbers are tagged and checked.
DOCS = (REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")))

TAG = re.compile(r"<!--\s*num\s+(?P<spec>[^>]*?)\s*-->(?P<text>.*?)<!--\s*/num\s*-->", re.S)



def _conditions(row: str, columns: Any) -> list[str]:
    """The ``col=value`` conditions of a row filter, split at commas; a piece that does not start
    with a column name and ``=`` belongs to the value before it (a label with a comma, as
    "Elastic-rebalance+CKPT, b = 1")."""
    out: list[str] = []
    for piece in row.split(","):
        if out and piece.partition("=")[0] not in columns:
            out[-1] += "," + piece
        else:
            out.append(piece)
    return out

@dataclass(frozen=True)
class NumberTag:
    """One parsed number tag: where its value comes from and how it is printed."""

    file: str
    row: str
    column: str
    fmt: str = "g"
    scale: float = 1.0

    @classmethod
    def parse(cls, spec: str) -> NumberTag:
        """Parse the inside of ``<!-- num ... -->``.

        Raises
        ------
        ValueError
            If the spec has fewer than three or more than five fields.
        """
        try:
            parts = shlex.split(spec)
        except ValueError as e:  # an unclosed quote
            raise ValueError(f"a number tag needs 'file row column [format] [*scale]', got {spec!r}"
                             f" ({e})") from e
        if not 3 <= len(parts) <= 5:
            raise ValueError(f"a number tag needs 'file row column [format] [*scale]', got {spec!r}")
        file, row, column, *rest = parts
        fmt, scale = "g", 1.0
        for p in rest:
            if p.startswith("*"):
                scale = float(p[1:])
            else:
                fmt = p
        return cls(file, row, column, fmt, scale)

    def value(self, results_dir: Path = RESULTS_DIR) -> Any:
        """The quoted value, read from the results file."""
        path = Path(results_dir) / self.file
        if not path.exists():
            raise ValueError(f"number tag names {self.file!r}, which is not in {results_dir}")
        if path.suffix == ".json":
            obj: Any = _read_json(path)
            for key in self.column.split("::"):
                obj = obj[int(key)] if isinstance(obj, list) else obj[key]
            return obj
        df = _read_csv(path)
        if self.row.startswith("#"):
            row = df.iloc[int(self.row[1:])]
        else:
            mask = None
            for cond in _conditions(self.row, df.columns):
                col, _, want = cond.partition("=")
                if col not in df.columns:
                    raise ValueError(f"{self.file}: no column {col!r} (columns: {list(df.columns)})")
                hit = df[col].map(lambda v, w=want: _same(v, w))
                mask = hit if mask is None else mask & hit
            rows = df[mask]
            if len(rows) != 1:
                raise ValueError(f"{self.file}: row filter {self.row!r} selects {len(rows)} rows, "
                                 "not one")
            row = rows.iloc[0]
        if self.column not in row.index:
            raise ValueError(f"{self.file}: no column {self.column!r} (columns: {list(row.index)})")
        return row[self.column]

    def text(self, results_dir: Path = RESULTS_DIR) -> str:
        """The value as the doc prints it."""
        v = self.value(results_dir)
        if isinstance(v, bool) or isinstance(v, str):
            return str(v)
        v = v * self.scale if self.scale != 1.0 else v
        if self.fmt.endswith("d"):
            v = int(round(v))
        return format(v, self.fmt).replace("-", "−")  # the docs' typographic minus


def _same(cell: Any, want: str) -> bool:
    try:
        return float(cell) == float(want)
    except (TypeError, ValueError):
        return str(cell) == want


@lru_cache(maxsize=64)
def _read_csv_cached(path: str, mtime: float) -> Any:
    import pandas as pd

    return pd.read_csv(path)


def _read_csv(path: Path) -> Any:
    return _read_csv_cached(str(path), path.stat().st_mtime)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def render(text: str, results_dir: Path = RESULTS_DIR) -> str:
    """``text`` with the value of every number tag rewritten from ``results_dir``."""
    def one(m: re.Match[str]) -> str:
        tag = NumberTag.parse(m.group("spec"))
        return f"<!-- num {m.group('spec')} -->{tag.text(results_dir)}<!-- /num -->"
    return TAG.sub(one, text)


def stale_numbers(paths: tuple[Path, ...] = DOCS, results_dir: Path = RESULTS_DIR) -> list[str]:
    """One message per number tag whose text differs from its source (or cannot be read)."""
    out = []
    for path in paths:
        text = Path(path).read_text()
        for m in TAG.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            rel = Path(path).relative_to(REPO_ROOT) if Path(path).is_relative_to(REPO_ROOT) else path
            where = f"{rel}:{line}"
            try:
                tag = NumberTag.parse(m.group("spec"))
                want = tag.text(results_dir)
            except (ValueError, KeyError, IndexError) as e:
                out.append(f"{where}: bad number tag ({e})")
                continue
            if m.group("text").strip() != want:
                out.append(f"{where}: data/results/{tag.file} [{tag.row}] {tag.column} gives "
                           f"{want}, the doc says {m.group('text').strip()} (run `make docs`)")
        if _render_blocks(path, text, results_dir) != text:
            out.append(f"{Path(path).name}: a generated block differs from its results file "
                       "(run `make docs`)")
    return out


_CONSOLE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1", re.S | re.M)


#: A generated block of a doc: ``<!-- NAME:start -->`` … ``<!-- NAME:end -->``, rewritten from
#: its results file by :func:`write_docs` (e.g. micro-batch RECTLR's tables in docs/microbatch.md).
BLOCK = re.compile(r"<!--\s*(?P<name>[\w-]+):start\s*-->.*?<!--\s*(?P=name):end\s*-->", re.S)


def _render_blocks(path: Path, text: str, results_dir: Path) -> str:
    """The doc's generated blocks rendered from ``results_dir`` (the blocks a module owns, and
    the tables of :data:`spare_lib.figures.doc_tables.BLOCKS`)."""
    from spare_lib.figures.doc_tables import render_blocks

    text = render_blocks(Path(path).name, text, results_dir)
    if Path(path).name == "microbatch.md":
        from spare_lib.rectlr.microbatch_mc import render_doc_tables

        return render_doc_tables(text, results_dir)
    if Path(path).name == "knobs.md":
        return render_knobs_block(text)
    if Path(path).name == "strategies.md":
        from spare_lib.figures.production import render_tornado_block

        return render_tornado_block(text, results_dir)
    return text


def render_knobs_block(text: str) -> str:
    """``docs/knobs.md``'s ``knobs`` block from the knob registry
    (:func:`spare_lib.registry.knobs.knobs_markdown`)."""
    from spare_lib.registry.knobs import knobs_markdown

    block = f"<!-- knobs:start -->\n{knobs_markdown()}<!-- knobs:end -->"
    return re.sub(r"<!--\s*knobs:start\s*-->.*?<!--\s*knobs:end\s*-->", lambda _m: block, text,
                  flags=re.S)


def untagged_doc_numbers(text: str) -> list[str]:
    """Decimal numbers of a doc's prose (outside code blocks and generated blocks) neither
    tagged nor cited."""
    text = BLOCK.sub(lambda m: " " * len(m.group(0)), text)
    text = TAG.sub(lambda m: " " * len(m.group(0)), text)
    text = _CONSOLE.sub(lambda m: " " * len(m.group(0)), text)
    text = re.sub(r"<!--.*?-->", lambda m: " " * len(m.group(0)), text, flags=re.S)
    return untagged_numbers(text)


def write_docs(paths: tuple[Path, ...] = DOCS, results_dir: Path = RESULTS_DIR) -> list[Path]:
    """Rewrite the tagged numbers of every doc; return the files that changed."""
    changed = []
    for path in paths:
        old = Path(path).read_text()
        new = _render_blocks(path, render(old, results_dir), results_dir)
        if new != old:
            Path(path).write_text(new)
            changed.append(Path(path))
    return changed


def run_doc_commands(results_dir: Path = RESULTS_DIR, only_missing: bool = False) -> list[Path]:
    """Run every :data:`DOC_COMMANDS` entry and write its JSON output into ``results_dir``."""
    import subprocess

    from spare_lib._util.results_io import write_results

    out = []
    for name, args in DOC_COMMANDS.items():
        path = Path(results_dir) / name
        if only_missing and path.exists():
            continue
        proc = subprocess.run([sys.executable, "-m", "spare_lib.cli", *args], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"`spare {' '.join(args)}` failed: {proc.stderr.strip()[-500:]}")
        out.append(write_results(json.loads(proc.stdout), path))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m spare_lib.figures.docs_numbers",
                                description="regenerate (or --check) the tagged numbers of the docs")
    p.add_argument("--check", action="store_true", help="only list stale numbers; exit 1 if any")
    p.add_argument("--no-commands", action="store_true",
                   help="do not rerun the commands the docs quote (DOC_COMMANDS)")
    args = p.parse_args(argv)
    if args.check:
        from spare_lib.figures.doc_values import stale_doc_values

        stale = stale_doc_values() + stale_numbers()
        print("\n".join(stale) or "[spare docs] every tagged number is current")
        return 1 if stale else 0
    if not args.no_commands:
        for path in run_doc_commands():
            print(f"[spare docs] ran the command of {path.name}")
    from spare_lib.figures.doc_values import write_doc_values

    print(f"[spare docs] wrote {write_doc_values().name}")
    for path in write_docs():
        print(f"[spare docs] updated {path.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
