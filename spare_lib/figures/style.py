"""The figure style and :func:`save_figure` (CONVENTIONS.md, "Figures"): one paper style, fixed metadata,
a colour-blind-safe palette that reads in grayscale, PDF + PNG.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from spare_lib.config import FIGURES_DIR

STYLE_PATH = Path(__file__).parent / "styles" / "paper.mplstyle"


#: The paper's method names, with a fixed colour, marker and line style each.
METHOD_STYLE: dict[str, dict[str, str]] = {
    "SPARe+CKPT": {"color": "#0072B2", "marker": "o", "linestyle": "-"},
    "SPARe": {"color": "#56B4E9", "marker": "s", "linestyle": "--"},
    "Rep+CKPT": {"color": "#D55E00", "marker": "^", "linestyle": "-"},
    "Rep": {"color": "#E69F00", "marker": "v", "linestyle": "--"},
    "CKPT-only": {"color": "#000000", "marker": "x", "linestyle": ":"},
    "theory": {"color": "#444444", "marker": "", "linestyle": "-"},
}


#: Colours for layouts (ruler vs consecutive vs others).
LAYOUT_STYLE: dict[str, dict[str, str]] = {
    "ruler": {"color": "#0072B2", "marker": "o", "linestyle": "-"},
    "consecutive": {"color": "#D55E00", "marker": "s", "linestyle": "--"},
    "random": {"color": "#009E73", "marker": "D", "linestyle": "-."},
    "replication": {"color": "#CC79A7", "marker": "^", "linestyle": ":"},
}


#: Width of one paper column and of the full page, inches.
COLUMN_IN = 3.5


PAGE_IN = 7.0


def use_style() -> None:
    """Apply the spare-lab style globally (notebooks call this once)."""
    plt.style.use(str(STYLE_PATH))


@contextmanager
def style() -> Iterator[None]:
    """Context manager applying the spare-lab style temporarily."""
    with plt.style.context(str(STYLE_PATH)):
        yield


def save_figure(fig: Figure, stem: str, out_dir: str | os.PathLike[str] | None = None,
                close: bool = False) -> tuple[Path, Path]:
    """Write ``fig`` as ``<out_dir>/<stem>.pdf`` and ``.png`` with fixed metadata.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    stem : str
        File name without extension, named by content (e.g. ``"mu_closed_vs_mc"``).
    out_dir : path or None
        Target folder (created if missing); None means the repo's ``figures/``.
    close : bool
        Close the figure after saving (notebooks keep it open to display it).

    Returns
    -------
    (Path, Path)
        The PDF and PNG paths.
    """
    if not stem or any(c in stem for c in "/\\ ") or stem.endswith((".pdf", ".png")):
        raise ValueError(f"stem must be a bare file name without extension or spaces, got {stem!r}")
    folder = Path(out_dir) if out_dir is not None else FIGURES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    pdf, png = folder / f"{stem}.pdf", folder / f"{stem}.png"
    # Fixed metadata: no creation date, no version strings -> byte-identical reruns.
    with mpl.rc_context({"pdf.fonttype": 42, "svg.hashsalt": "spare-lab"}):
        fig.savefig(pdf, metadata={"Creator": "spare-lab", "Producer": "spare-lab",
                                   "CreationDate": None, "ModDate": None})
        fig.savefig(png, metadata={"Software": "spare-lab"})
    if close:
        plt.close(fig)
    return pdf, png


def save_figure_to(fig: Figure, path: str | os.PathLike[str], close: bool = True) -> Path:
    """Write ``fig`` to one file (``.pdf``, ``.png`` or ``.svg``, by its extension) with the
    fixed metadata of :func:`save_figure` (a command's ``--plot FILE``)."""
    path = Path(path)
    meta = {".pdf": {"Creator": "spare-lab", "Producer": "spare-lab", "CreationDate": None,
                     "ModDate": None}, ".png": {"Software": "spare-lab"}, ".svg": {}}
    if path.suffix.lower() not in meta:
        raise ValueError(f"path must end in .pdf, .png or .svg, got {str(path)!r}")
    with mpl.rc_context({"pdf.fonttype": 42, "svg.hashsalt": "spare-lab"}):
        fig.savefig(path, metadata=meta[path.suffix.lower()] or None)
    if close:
        plt.close(fig)
    return path
