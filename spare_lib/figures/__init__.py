"""The figure pipeline: the REGISTRY of every published figure, the paper style, ``save_figure``,
and one module of ``make_<figure>`` builders per notebook section.

Builder modules (import them by name; they pull in matplotlib and the layers they draw):
:mod:`~spare_lib.figures.stacking` (notebook 10), :mod:`~spare_lib.figures.rectlr` (20),
:mod:`~spare_lib.figures.theory` (30), :mod:`~spare_lib.figures.theory_mc` (35),
:mod:`~spare_lib.figures.runtime` (40), :mod:`~spare_lib.figures.cluster` (50, 60, 90).
:mod:`~spare_lib.figures.explore` is the planner of notebook 90 and of ``make app`` (a view of
``spare plan``; its plot in :mod:`~spare_lib.figures.plan_figure`, its server in
:mod:`~spare_lib.figures.app`). :mod:`~spare_lib.figures.pipeline` runs the notebooks
(``spare figures``).
:mod:`~spare_lib.figures.prose` glues computed numbers into notebook markdown and checks the
prose's claims (:class:`Checks`); :mod:`~spare_lib.figures.docs_numbers` generates and checks the
numbers of ``docs/`` and the README; :func:`write_results` writes every committed result file.
"""

from spare_lib._util.results_io import write_results
from spare_lib.figures.prose import Checks, glue, glue_many, glue_table
from spare_lib.figures.registry import REGISTRY, FigureSpec, by_notebook, readme_in_sync, update_readme
from spare_lib.figures.style import (
    COLUMN_IN,
    LAYOUT_STYLE,
    METHOD_STYLE,
    PAGE_IN,
    save_figure,
    use_style,
)

__all__ = ["Checks", "glue", "glue_many", "glue_table", "write_results", "REGISTRY", "FigureSpec",
           "by_notebook", "readme_in_sync", "update_readme", "COLUMN_IN",
           "LAYOUT_STYLE", "METHOD_STYLE", "PAGE_IN", "save_figure", "use_style"]
