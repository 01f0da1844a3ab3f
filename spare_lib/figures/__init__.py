"""The figure pipeline: the REGISTRY of every published figure, the paper style, ``save_figure``,
and one module of ``make_<figure>`` builders per notebook section.

Builder modules (import them by name; they pull in matplotlib and the layers they draw):
:mod:`~spare_lib.figures.stacking` (notebook 10), :mod:`~spare_lib.figures.rectlr` (20),
:mod:`~spare_lib.figures.theory` (30), :mod:`~spare_lib.figures.theory_mc` (35),
:mod:`~spare_lib.figures.runtime` (40), :mod:`~spare_lib.figures.cluster` (50, 60, 90).
:mod:`~spare_lib.figures.pipeline` runs the notebooks (``spare figures``).
"""

from spare_lib.figures.registry import REGISTRY, FigureSpec, by_notebook, readme_in_sync, update_readme
from spare_lib.figures.style import (
    COLUMN_IN,
    LAYOUT_STYLE,
    METHOD_STYLE,
    PAGE_IN,
    save_figure,
    use_style,
)

__all__ = ["REGISTRY", "FigureSpec", "by_notebook", "readme_in_sync", "update_readme", "COLUMN_IN",
           "LAYOUT_STYLE", "METHOD_STYLE", "PAGE_IN", "save_figure", "use_style"]
