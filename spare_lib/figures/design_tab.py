"""The App's ``spare design`` tab (issue 27): a job and a fleet in, the design search's best plans
and Pareto front out, with the command that prints the same (notebook ``90_explore``).

The inputs are the knob registry's job knobs (``spare design --help``), labelled with the flag and
its unit like the planner's controls; the search runs when the button is pressed (a few seconds
with the predictive model), never on every keystroke.
"""

from __future__ import annotations

import html
from typing import Any

from spare_lib.design import JobSpec, design_search
from spare_lib.design.job import GPUS, LLAMA3_405B
from spare_lib.registry.knobs import KNOBS
from spare_lib.registry.methods import PAPER_METHODS, check_methods

#: The job knobs the tab sets (registry names), in ``spare design --help``'s order.
DESIGN_KNOBS = ("params", "tokens", "gpus", "gpu", "mfu", "tokens_per_step")
#: The tab's starting job: the Llama-3-405B-like run of notebook 95.
DEFAULT_JOB = {k: LLAMA3_405B[k] for k in DESIGN_KNOBS}


def design_label(name: str) -> str:
    """A control's label: the ``spare design`` flag and, for a quantity, the registry's unit.

    >>> design_label("gpus"), design_label("mfu"), design_label("params")
    ('--gpus [GPUs]', '--mfu', '--params')
    """
    k = KNOBS[name]
    return k.cli_flag if k.unit in ("", "1") else f"{k.cli_flag} [{k.unit}]"


def design_command(values: dict[str, Any], strategies: str = "paper") -> str:
    """The ``spare design`` command of the tab's inputs (defaults left out).

    >>> design_command({"params": 405e9, "tokens": 15.6e12, "gpus": 16384, "gpu": "h100"})
    'spare design --params 4.05e+11 --tokens 1.56e+13 --gpus 16384'
    """
    parts = ["spare design"]
    for name in DESIGN_KNOBS:
        v = values.get(name)
        if v is None or (KNOBS[name].default is not None and v == KNOBS[name].default):
            continue
        parts.append(f"{KNOBS[name].cli_flag} {v:g}" if isinstance(v, float) else
                     f"{KNOBS[name].cli_flag} {v}")
    if strategies != "paper":
        parts.append(f"--strategies {strategies}")
    return " ".join(parts)


def _methods(strategies: str) -> tuple[str, ...]:
    return PAPER_METHODS if strategies == "paper" else check_methods(strategies)


def plans_html(res: Any, top: int = 8) -> str:
    """The best plans and the Pareto front as HTML tables (``spare design``'s columns)."""
    def row(p: Any) -> str:
        return "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in p.row().values()) \
            + "</tr>"

    head = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in res.best.row()) + "</tr>"
    best = "".join(row(p) for p in res.ranked(top))
    front = "".join(row(p) for p in res.pareto())
    return (f"<p class='spare-design-best'>{html.escape(res.best_line())}</p>"
            f"<p>{res.searched:,} configurations searched, {res.evaluations:,} evaluated</p>"
            f"<b>Best plans</b><table class='spare-design-plans'>{head}{best}</table>"
            f"<b>Pareto front</b><table class='spare-design-front'>{head}{front}</table>")


class Designer:
    """The tab: job controls, a Search button, the plans and the front (``widget``)."""

    def __init__(self, values: dict[str, Any] | None = None, strategies: str = "paper") -> None:
        import ipywidgets as w

        v = DEFAULT_JOB | (values or {})
        self.controls: dict[str, Any] = {}
        for name in DESIGN_KNOBS:
            if name == "gpu":
                box = w.Dropdown(options=sorted(GPUS), value=v[name])
            elif name == "gpus":
                box = w.IntText(value=int(v[name]))
            else:
                box = w.FloatText(value=float(v[name]))
            box.description = design_label(name)
            box.tooltip = KNOBS[name].help
            box.style = {"description_width": "initial"}
            box.add_class(f"spare-design-{name.replace('_', '-')}")
            self.controls[name] = box
        self.strategies = w.Dropdown(options=["paper", "all"], value=strategies,
                                     description="--strategies")
        self.button = w.Button(description="Search", button_style="primary")
        self.button.add_class("spare-design-search")
        self.out = w.HTML()
        self.out.add_class("spare-design-out")
        self.button.on_click(self.search)
        self.result: Any = None
        self.widget = w.VBox([*self.controls.values(), self.strategies, self.button, self.out])

    def values(self) -> dict[str, Any]:
        """The controls' values by knob name."""
        return {name: box.value for name, box in self.controls.items()}

    def search(self, _: Any = None) -> Any:
        """Run the design search on the inputs (a one-line error on bad input); the result."""
        vals = self.values()
        cmd = html.escape(design_command(vals, self.strategies.value))
        try:
            job = JobSpec(**vals)
            self.result = design_search(job, _methods(self.strategies.value))
            if not self.result.plans:
                raise ValueError("no group size is valid for this job: "
                                 + "; ".join(list(self.result.skipped.values())[:2]))
        except ValueError as exc:
            self.result = None
            self.out.value = f"<p class='spare-design-error'>{html.escape(str(exc))}</p>"
            return None
        self.out.value = plans_html(self.result) + f"<p><code>{cmd}</code></p>"
        return self.result


__all__ = ["DEFAULT_JOB", "DESIGN_KNOBS", "Designer", "design_command", "design_label",
           "plans_html"]
