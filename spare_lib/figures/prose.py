"""Numbers in prose: glue computed values into notebook markdown, check claims, count stragglers.

Conventions (``docs/numbers.md``):

* A number a notebook's markdown states is computed by the notebook and inserted with MyST-NB's
  ``glue`` (``{glue:text}`key` `` in the markdown; :func:`glue` in a code cell formats and glues
  it), so the book built from the full run shows the full run's numbers and a smoke run shows
  smoke numbers.
* A number quoted from elsewhere is labelled as a citation: "the paper's 2.49", "(paper: 1.13 %)",
  "SPEC §3: k = 0.78" — :func:`untagged_numbers` accepts a number whose clause names its source
  (:data:`CITATION_CUES`).
* Every notebook ends with a checks cell: :class:`Checks` asserts each claim of the prose, with a
  full-size tolerance and a smoke tolerance that says why it is looser.

:func:`untagged_numbers` is what ``tests/test_prose_numbers.py`` runs over notebooks 35–90.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Words that mark a number in the same clause as quoted from a source, not computed here.
CITATION_CUES = ("paper", "SPEC", "published", "Llama 3", "FT-HSDP", "cited")
#: How far (characters) before a number its citation cue may stand, inside the same clause.
CITATION_REACH = 60

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1", re.S | re.M)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<!\\)\$[^$\n]+\$")
_GLUE = re.compile(r"\{glue(?::\w+)?\}`[^`]*`")
_GLUE_DIRECTIVE = re.compile(r"^(?:```|:::)\{glue(?::\w+)?\}\s+(\S+)", re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
_ARXIV = re.compile(r"arXiv[: ]\s*\d{4}\.\d{4,5}", re.I)
#: a decimal number: digits, a point, digits (1.13, 0.6, 2.4e3 counts once)
DECIMAL = re.compile(r"(?<![\w.])\d+(?:,\d{3})*\.\d+")
_CLAUSE_END = re.compile(r"(?:[.;!?](?=\s)|\n\s*\n|\n\s*[*-] |\|)")


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def _strip_markup(text: str) -> str:
    """Markdown with code, math, glue roles, links and URLs blanked (positions kept)."""
    for pat in (_FENCE, _DISPLAY_MATH, _GLUE, _CODE, _INLINE_MATH, _LINK_TARGET, _URL, _ARXIV):
        text = pat.sub(_blank, text)
    return text


def _is_citation(text: str, start: int) -> bool:
    """True when the clause before position ``start`` names a source (:data:`CITATION_CUES`)
    within :data:`CITATION_REACH` characters."""
    head = text[max(0, start - CITATION_REACH):start]
    ends = list(_CLAUSE_END.finditer(head))
    clause = head[ends[-1].end():] if ends else head
    return any(cue in clause for cue in CITATION_CUES)


def untagged_numbers(markdown: str) -> list[str]:
    """Decimal numbers typed into ``markdown`` that are neither glued nor labelled citations.

    A decimal number is digits, a point and digits (``1.13``, ``0.6``); integers (counts, sizes,
    section and equation numbers) are not counted. Ignored: fenced and inline code, ``$...$``
    math, ``{glue...}`` roles, link targets, URLs and arXiv ids, and numbers whose clause (text
    back to the last sentence end, list item or table cell) contains a citation cue.

    >>> untagged_numbers("the paper's 2.49; we find 2.51 and {glue:text}`ttt`")
    ['2.51']
    """
    text = _strip_markup(markdown)
    return [m.group(0) for m in DECIMAL.finditer(text) if not _is_citation(text, m.start())]


def notebook_markdown(path: str | Path) -> list[tuple[int, str]]:
    """(cell index, source) of every markdown cell of a notebook."""
    nb = json.loads(Path(path).read_text())
    out = []
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] == "markdown":
            src = c["source"]
            out.append((i, "".join(src) if isinstance(src, list) else src))
    return out


def untagged_in_notebook(path: str | Path) -> list[tuple[int, str]]:
    """(cell index, number) of every untagged decimal number in a notebook's markdown."""
    return [(i, n) for i, src in notebook_markdown(path) for n in untagged_numbers(src)]


def glue_keys_in_markdown(path: str | Path) -> set[str]:
    """Every key a notebook's markdown pastes with a ``{glue...}`` role."""
    keys = set()
    for _, src in notebook_markdown(path):
        for m in _GLUE.finditer(src):
            inner = m.group(0).split("`")[1]
            keys.add(inner.split(":")[0].strip())
        keys.update(m.group(1) for m in _GLUE_DIRECTIVE.finditer(src))
    return keys


def glued_keys(executed: dict[str, Any]) -> set[str]:
    """Every key glued by the outputs of an executed notebook (MyST-NB's scrapbook metadata)."""
    keys = set()
    for c in executed["cells"]:
        for o in c.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                keys.add(name)
    return keys


class Number:
    """A formatted number for :func:`glue`: its text/plain is the text as a Python string literal.

    MyST-NB's ``{glue:text}`` runs ``ast.literal_eval`` on the text/plain it pastes (to strip the
    quotes of a glued str), so a bare ``10,000`` would come out as the tuple ``(10, 0)``; the
    literal ``'10,000'`` comes out as written.
    """

    def __init__(self, value: Any, text: str) -> None:
        self.value, self.text = value, text

    def __repr__(self) -> str:
        return repr(self.text)

    def __str__(self) -> str:
        return self.text


def fmt(value: Any, spec: str = "") -> str:
    """``value`` formatted by ``spec`` (``".2f"``, ``",d"``, ``".1%"``...); ints stay ints."""
    if spec:
        return format(value, spec)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def glue(key: str, value: Any, spec: str = "") -> str:
    """Glue ``value`` formatted by ``spec`` under ``key`` (not displayed); return the text.

    The markdown pastes it with ``{glue:text}`key` ``. Outside a kernel (plain Python) nothing is
    displayed and the text is only returned.
    """
    text = fmt(value, spec)
    try:
        from myst_nb import glue as _glue
    except ImportError:  # pragma: no cover - part of the book extra
        _glue = None
    from IPython import get_ipython

    if _glue is not None and get_ipython() is not None:
        _glue(key, Number(value, text), display=False)
    return text


def glue_table(key: str, table: Any) -> Any:
    """Glue a table (a DataFrame, shown without its index) under ``key``; return it for display.

    The markdown shows it with a fenced ``{glue} key`` directive.
    """
    try:
        from myst_nb import glue as _glue
    except ImportError:  # pragma: no cover - part of the book extra
        return table
    from IPython import get_ipython

    if get_ipython() is not None:
        _glue(key, table.style.hide(axis="index") if hasattr(table, "style") else table,
              display=False)
    return table


def glue_many(values: dict[str, tuple[Any, str] | Any]) -> dict[str, str]:
    """:func:`glue` every ``key: value`` or ``key: (value, spec)``; return key -> text."""
    out = {}
    for key, v in values.items():
        value, spec = v if isinstance(v, tuple) else (v, "")
        out[key] = glue(key, value, spec)
    return out


@dataclass
class Check:
    """One claim of a notebook's prose and whether the run bears it out."""

    claim: str
    value: Any
    bound: str
    passed: bool
    why: str = ""


@dataclass
class Checks:
    """The claims of a notebook's prose, asserted at the end of the notebook (its checks cell).

    Every tolerance has a full-size value and a smoke value; a looser smoke value says why
    (``why``). :meth:`done` raises ``AssertionError`` listing every failed claim, so papermill,
    nbval and ``make test`` fail on a claim the run does not support.

    Examples
    --------
    >>> ck = Checks(smoke=True)
    >>> ck.le("model error (%)", 1.4, full=1.0, smoke=3.0, why="smoke: 2 trials, s.e. ≈ 1 %")
    >>> ck.that("r* in the tie set", True)
    >>> len(ck.done())
    2
    """

    smoke: bool
    rows: list[Check] = field(default_factory=list)

    def tol(self, full: float, smoke: float | None = None) -> float:
        """The tolerance of this run's size (``smoke`` defaults to ``full``)."""
        return full if not self.smoke or smoke is None else smoke

    def that(self, claim: str, ok: bool, value: Any = "", why: str = "") -> None:
        """Record a yes/no claim."""
        self.rows.append(Check(claim, value, "true", bool(ok), why))

    def le(self, claim: str, value: float, full: float, smoke: float | None = None,
           why: str = "") -> None:
        """Record ``value <= tolerance``."""
        t = self.tol(full, smoke)
        self.rows.append(Check(claim, value, f"≤ {t:g}", bool(value <= t), why))

    def ge(self, claim: str, value: float, full: float, smoke: float | None = None,
           why: str = "") -> None:
        """Record ``value >= tolerance``."""
        t = self.tol(full, smoke)
        self.rows.append(Check(claim, value, f"≥ {t:g}", bool(value >= t), why))

    def between(self, claim: str, value: float, lo: float, hi: float,
                smoke: tuple[float, float] | None = None, why: str = "") -> None:
        """Record ``lo <= value <= hi`` (``smoke``: the bounds of a smoke run)."""
        if self.smoke and smoke is not None:
            lo, hi = smoke
        self.rows.append(Check(claim, value, f"in [{lo:g}, {hi:g}]", bool(lo <= value <= hi),
                               why))

    def member(self, claim: str, value: Any, allowed: Iterable[Any], why: str = "") -> None:
        """Record ``value in allowed`` (an optimum inside its tie set, say)."""
        allowed = list(allowed)
        self.rows.append(Check(claim, value, f"in {allowed}", value in allowed, why))

    def done(self) -> Any:
        """Assert every claim; return the table of claims (a DataFrame) for display."""
        import pandas as pd

        table = pd.DataFrame([vars(c) for c in self.rows],
                             columns=["claim", "value", "bound", "passed", "why"])
        failed = table[~table.passed]
        if len(failed):
            lines = "\n".join(f"  {r.claim}: {r.value!r} not {r.bound}" for r in failed.itertuples())
            raise AssertionError(f"{len(failed)} of {len(table)} claims fail "
                                 f"({'smoke' if self.smoke else 'full'} run):\n{lines}")
        return table
