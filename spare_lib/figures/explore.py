"""The planner of notebook ``90_explore`` and of ``make app``: a view of ``spare plan``.

It asks what ``spare plan`` asks, with the knob registry's names, units, defaults and ranges
(:data:`spare_lib.registry.knobs.KNOBS`): GPUs, GPUs per group, the per-GPU MTBF (hours, the
registry's alias ``--gpu-mtbf-hours``) or the system MTBF m (minutes, ``--system-mtbf-min``), T_r
(minutes, ``--restart-min``), T_s, the step time, the model bytes, the all-reduce model, the
methods (the paper's three by default) and the fast model (``predict``, the CLI's default).
:class:`PlannerInputs` gives the :class:`~spare_lib.cluster.planning.PlanRequest` and the
``spare plan`` command of those inputs, and :func:`~spare_lib.cluster.planning.run_plan` answers:

* the headline is the verdict across methods (:func:`headline`), then the verdict block word for
  word as ``spare plan`` prints it (:func:`verdict_text`);
* second, the selected method's own optimum and the user's r (:func:`method_lines`), the cluster
  line, the fast model's table, the assumptions, and the curves (:func:`make_plan_figure`);
* nothing is simulated until the "simulate" button, which runs the same request with trials
  (``spare plan --simulate``, serially, with a progress bar) and shows the simulated verdict.

:class:`Planner` holds the widgets (ipywidgets is imported only when one is built).
:data:`DEFAULT_CLUSTER` is the paper's point of the closed-form figure ``explore_default``.

Example
-------
>>> x = PlannerInputs(gpus_per_group=3000, restart_s=1200.0)
>>> x.argv()
['plan', '--gpus-per-group', '3000', '--restart-s', '1200']
>>> res = run_plan(x.request())
>>> headline(res) == res.verdict.statement and verdict_text(res).startswith("Best (model): ")
True
"""

from __future__ import annotations

import dataclasses
import html
import math
import time
from dataclasses import dataclass
from typing import Any

from spare_lib import theory as th
from spare_lib.cluster.planning import ClusterSpec, PlanRequest, PlanResult, cluster_spec, run_plan
from spare_lib.cluster.planning.printing import cluster_line, model_rows, verdict_lines
from spare_lib.figures.plan_figure import (
    Y_SPAN,
    clip_r,
    format_ttt,
    make_plan_figure,
    make_planner_png,
    method_range,
)
from spare_lib.registry.knobs import KNOBS
from spare_lib.registry.methods import METHODS, PAPER_METHODS, check_methods

#: The paper's N = 600 configuration with the closed forms' preset T_a = N/100 s: the point of
#: the figure ``explore_default`` (keyword arguments of :func:`cluster_spec`).
DEFAULT_CLUSTER: dict[str, Any] = {"gpus": 600_000, "gpus_per_group": 1000, "system_mtbf_s": 300.0,
                                   "restart_s": 3600.0, "checkpoint_s": th.T_S_PAPER,
                                   "step_s": None, "allreduce": "preset"}

#: The knobs the planner's controls set (registry names), in the order of ``spare plan --help``.
INPUT_KNOBS = ("gpus", "gpus_per_group", "gpu_mtbf_s", "system_mtbf_s", "restart_s",
               "checkpoint_s", "step_s", "model_bytes", "allreduce", "model")

#: Knobs the controls show in another unit: the unit of one of the knob's registry aliases.
SHOWN_IN = {"gpu_mtbf_s": "h", "system_mtbf_s": "min", "restart_s": "min"}

def _shown(name: str) -> Any:
    """The registry alias (:class:`~spare_lib.registry.knobs.Alias`) knob ``name`` is shown in,
    None for its own unit (StopIteration if the registry does not declare the alias)."""
    unit = SHOWN_IN.get(name)
    return None if unit is None else next(a for a in KNOBS[name].aliases if a.unit == unit)


def unit_factor(name: str) -> float:
    """Seconds (the knob's unit) per unit of knob ``name``'s control (:data:`SHOWN_IN`).

    >>> unit_factor("gpu_mtbf_s"), unit_factor("restart_s"), unit_factor("checkpoint_s")
    (3600.0, 60.0, 1.0)
    """
    a = _shown(name)
    return 1.0 if a is None else a.factor


def input_flag(name: str) -> str:
    """The ``spare plan`` flag of knob ``name`` in its control's unit (:data:`SHOWN_IN`).

    >>> input_flag("gpu_mtbf_s"), input_flag("restart_s"), input_flag("checkpoint_s")
    ('--gpu-mtbf-hours', '--restart-min', '--checkpoint-s')
    """
    a = _shown(name)
    return KNOBS[name].cli_flag if a is None else a.flag


def input_label(name: str) -> str:
    """A control's label: its :func:`input_flag` and, for a quantity, the registry's unit.

    >>> input_label("gpu_mtbf_s"), input_label("gpus"), input_label("allreduce")
    ('--gpu-mtbf-hours [h]', '--gpus [GPUs]', '--allreduce')
    """
    a, unit = _shown(name), KNOBS[name].unit
    unit = unit if a is None else a.unit
    return input_flag(name) if unit in ("", "1") else f"{input_flag(name)} [{unit}]"


def _arg(v: Any) -> str:
    """A value as a command-line argument that parses back to the same value."""
    if not isinstance(v, float):
        return str(v)
    if v.is_integer() and abs(v) < 1e10:
        return str(int(v))
    return f"{v:g}" if float(f"{v:g}") == v else repr(v)


@dataclass(frozen=True)
class PlannerInputs:
    """The planner's inputs: the knobs of ``spare plan`` it offers, in the registry's units.

    Each field is the knob of that name (``docs/knobs.md``), except ``methods`` (``--strategies``:
    registered methods, the paper's three by default). At most one of ``gpu_mtbf_s`` and
    ``system_mtbf_s`` is given (neither: the registry's per-GPU MTBF); ``step_s`` None is
    64 s + T_a, T_a from ``allreduce`` and ``model_bytes``.
    """

    gpus: int = KNOBS["gpus"].default
    gpus_per_group: int = KNOBS["gpus_per_group"].default
    gpu_mtbf_s: float | None = None
    system_mtbf_s: float | None = None
    restart_s: float = KNOBS["restart_s"].default
    checkpoint_s: float = KNOBS["checkpoint_s"].default
    step_s: float | None = KNOBS["step_s"].default
    model_bytes: float = KNOBS["model_bytes"].default
    allreduce: str = KNOBS["allreduce"].default
    methods: tuple[str, ...] = PAPER_METHODS
    model: str = KNOBS["model"].default

    def __post_init__(self) -> None:
        if self.gpu_mtbf_s is not None and self.system_mtbf_s is not None:
            raise ValueError("give system_mtbf_s or gpu_mtbf_s, not both")
        object.__setattr__(self, "methods", check_methods(self.methods))
        KNOBS["model"].check(self.model)

    def spec(self) -> ClusterSpec:
        """The cluster (ValueError naming the bad input, as ``spare plan`` refuses it)."""
        return cluster_spec(self.gpus, self.gpus_per_group, system_mtbf_s=self.system_mtbf_s,
                            gpu_mtbf_s=self.gpu_mtbf_s, restart_s=self.restart_s,
                            checkpoint_s=self.checkpoint_s, step_s=self.step_s,
                            allreduce=self.allreduce, model_bytes=self.model_bytes)

    def request(self, trials: int | None = None, steps: int | str = KNOBS["plan_steps"].default,
                seed: int = KNOBS["seed"].default, *, backend: str = "processes",
                progress: bool = False) -> PlanRequest:
        """The :class:`PlanRequest` of ``spare plan`` with these inputs (and ``--simulate
        trials --plan-steps steps --seed seed`` when ``trials`` is given); every other knob at the
        registry's default."""
        return PlanRequest(self.spec(), methods=self.methods, model=self.model, trials=trials,
                           steps=steps, seed=seed, backend=backend, progress=progress)

    def argv(self, trials: int | None = None, steps: int | str | None = None,
             seed: int | None = None) -> list[str]:
        """``spare plan``'s arguments for the same request (inputs at their default left out)."""
        out = ["plan"]
        for name in INPUT_KNOBS:
            v = getattr(self, name)
            if v is None or (v == KNOBS[name].default and name != "system_mtbf_s"):
                continue
            out += [KNOBS[name].cli_flag, _arg(v)]
        if self.methods != PAPER_METHODS:
            out += ["--strategies", ",".join(self.methods)]
        if trials is not None:
            out += ["--simulate", str(trials)]
            out += [] if steps is None else ["--plan-steps", str(steps)]
            out += [] if seed is None else ["--seed", str(seed)]
        return out

    def command(self, **kw: Any) -> str:
        """:meth:`argv` as one ``spare plan ...`` line."""
        return "spare " + " ".join(self.argv(**kw))


def planner_inputs(strategies: str | tuple[str, ...] = "paper", **knobs: Any) -> PlannerInputs:
    """:class:`PlannerInputs` from keyword knobs, None meaning the registry's default (what a
    notebook's parameters give); ``strategies`` as ``spare plan --strategies`` takes it ('paper',
    'all' or a comma list).

    >>> planner_inputs(gpus=None, restart_s=1200.0, strategies="all").methods[-1]
    'spare-b+drop'
    """
    unknown = sorted(set(knobs) - set(INPUT_KNOBS))
    if unknown:
        raise ValueError(f"knobs must be among {list(INPUT_KNOBS)}, got {unknown}")
    methods = PAPER_METHODS if strategies == "paper" else check_methods(strategies)
    return PlannerInputs(methods=methods, **{k: v for k, v in knobs.items() if v is not None})


def headline(res: PlanResult) -> str:
    """The verdict across methods in one sentence (``res.verdict.statement``)."""
    return res.verdict.statement


def verdict_text(res: PlanResult) -> str:
    """The verdict block exactly as ``spare plan`` prints it at the end of its report."""
    return "\n".join(verdict_lines(res)).strip("\n")


def method_lines(res: PlanResult, name: str, r: int) -> list[str]:
    """The selected method's own optimum in the fast model, and the user's r beside it."""
    if name not in res.request.methods:
        raise ValueError(f"method must be one of {list(res.request.methods)}, got {name!r}")
    best = res.fast.best(name)

    def at(p: Any) -> str:
        return (f"checkpoint every {p.checkpoint_steps:,} steps ({p.checkpoint_period_s:.0f} s), "
                f"A* = {100 * p.availability:.1f} %, TTT/T0 = {format_ttt(p.ttt_over_t0)}")

    out = [f"{best.label}, {res.fast.source}'s optimum: r = {best.r}, {at(best)}"]
    lo, hi = method_range(res, name)
    if hi > lo:
        r = clip_r(res, name, r)
        p = res.fast.point(name, r)
        rel = (p.ttt_over_t0 / best.ttt_over_t0 - 1 if math.isfinite(best.ttt_over_t0)
               else math.nan)
        out.append(f"your r = {r}: {at(p)} ({100 * rel:+.1f} % against r = {best.r})")
    return out


def _table_html(rows: list[dict[str, Any]], cls: str) -> str:
    esc = html.escape
    pad = "style='padding:0.1em 0.6em;text-align:right'"
    head = "".join(f"<th {pad}>{esc(str(c))}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td {pad}>{esc(str(v))}</td>" for v in row.values())
                   + "</tr>" for row in rows)
    return (f"<table class='{cls}' style='border-collapse:collapse;margin:0.3em 0'>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def verdict_html(res: PlanResult, command: str, cls: str = "spare-verdict") -> str:
    """The headline (bold) and, under it, the verdict block of ``command`` (``spare plan ...``)."""
    esc = html.escape
    return (f"<div class='{cls}-headline' style='font-size:1.25em;font-weight:bold;"
            f"margin:0.3em 0'>{esc(headline(res))}</div>"
            f"<div style='color:#555'><code class='{cls}-command'>{esc(command)}</code> ends "
            f"with:</div><pre class='{cls}' style='font-size:0.85em;margin:0.2em 0 0.6em 0;"
            f"line-height:1.3'>{esc(verdict_text(res))}</pre>")


def recommendation_html(res: PlanResult, name: str, r: int) -> str:
    """What comes after the verdict, as HTML: the selected method's lines (:func:`method_lines`),
    the cluster line and the fast model's table of ``spare plan``, its assumptions and notes."""
    esc = html.escape
    sel = method_lines(res, name, r)
    notes = [f"<li>{esc(a)}</li>" for a in res.assumptions]
    notes += [f"<li>Warning: {esc(w)}</li>" for w in res.warnings]
    return (f"<div class='spare-selected'><b>{esc(sel[0])}</b></div>"
            + "".join(f"<div class='spare-your-r'>{esc(x)}</div>" for x in sel[1:])
            + f"<div class='spare-cluster' style='margin-top:0.5em'>{esc(cluster_line(res))}</div>"
            + _table_html(model_rows(res), "spare-model-table")
            + "<details><summary>assumptions and notes of this plan</summary>"
            + f"<ul style='margin:0.2em 0'>{''.join(notes)}</ul></details>")


def simulate_plan(inputs: PlannerInputs, *, trials: int, steps: int | str, seed: int,
                  progress: bool = False) -> PlanResult:
    """``spare plan --simulate trials --plan-steps steps --seed seed`` with these inputs, serially
    in this process (the candidates, the checkpoint search and the verdict of the CLI)."""
    return run_plan(inputs.request(trials, steps, seed, backend="serial", progress=progress))


def simulated_frame(res: PlanResult) -> Any:
    """One row per simulated (method, r, checkpoint interval) of a plan, as a DataFrame."""
    import pandas as pd

    cols = ["label", "stage", "r", "checkpoint_steps", "trials", "completed", "ttt_mean", "ttt_std",
            "restarts_mean", "availability_mean", "closed_form_ttt", "closed_form_availability"]
    return pd.DataFrame([dataclasses.asdict(p) for p in res.points])[cols]


def _number(text: str, name: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {text!r}") from None


def simulation_html(res: PlanResult, command: str) -> str:
    """The simulated verdict (:func:`verdict_html`), each method's simulated choice of r and C,
    and the adequacy warnings of the runs."""
    esc = html.escape
    choices = "".join(f"<li>{esc(ch.describe()).replace(chr(10), '<br>')}</li>"
                      for ch in res.choices.values())
    warns = "".join(f"<li>Warning: {esc(w)}</li>" for w in res.warnings)
    return (verdict_html(res, command, "spare-sim-verdict")
            + f"<ul class='spare-sim-choices' style='margin:0.2em 0'>{choices}{warns}</ul>")


class Planner:
    """The widgets of the planner: the inputs of ``spare plan``, its verdict, the selected method,
    the curves and the "simulate" button (module docstring).

    Parameters
    ----------
    inputs : PlannerInputs or None
        Where the controls start (None: the registry's defaults, as ``spare plan``).
    method : str
        The selected method (one of ``inputs.methods``).
    r : int or None
        The user's r for it (None: the fast model's optimum).
    trials, steps, seed :
        The button's simulation: ``spare plan --simulate trials --plan-steps steps --seed seed``.

    Attributes
    ----------
    controls : dict of str -> widget
        By input ('mtbf_of': which MTBF 'mtbf' is, in its alias unit; 'strategy:<method>': one
        checkbox per registered method; 'method', 'r': the selected method and the user's r).
    inputs, result, simulated : PlannerInputs, PlanResult, PlanResult or None
        The current inputs and their plan (None while refused), the last simulation.
    widget : ipywidgets.VBox
        Everything, for ``display``.
    """

    def __init__(self, inputs: PlannerInputs | None = None, *, method: str = "spare",
                 r: int | None = None, trials: int, steps: int | str,
                 seed: int = KNOBS["seed"].default) -> None:
        import ipywidgets as w

        x = PlannerInputs() if inputs is None else inputs
        if method not in x.methods:
            raise ValueError(f"method must be one of {list(x.methods)}, got {method!r}")
        self.trials, self.steps, self.seed = int(trials), steps, int(seed)
        self.inputs: PlannerInputs | None = None
        self.result: PlanResult | None = None
        self.simulated: PlanResult | None = None
        self._cache: dict[PlannerInputs, PlanResult] = {}
        self._busy, self._want_r = False, r
        self.controls = self._controls(w, x, method)
        for key, c in self.controls.items():
            c.add_class("spare-input-" + key.replace("_", "-").replace(":", "-").replace("+", "-"))
            if key not in ("method", "r"):
                c.observe(self._switch_mtbf if key == "mtbf_of" else self.replan, names="value")
        self.controls["method"].observe(self.redraw, names="value")
        self.controls["r"].observe(self.redraw, names="value")
        self.verdict = w.HTML().add_class("spare-headline-box")
        self.recommendation = w.HTML().add_class("spare-recommendation")
        self.plot = w.Image(format="png", layout=w.Layout(width="860px", max_width="100%"))
        self.plot.add_class("spare-plot")
        self.button = w.Button(description="simulate", tooltip="spare plan --simulate: the same "
                               "plan with simulated trials").add_class("spare-simulate")
        self.status = w.HTML().add_class("spare-sim-status")
        self.sim_result = w.HTML().add_class("spare-sim-result")
        self.sim_out = w.Output().add_class("spare-sim-output")
        self.button.on_click(self.simulate)
        c = self.controls
        col = [c[k] for k in ("gpus", "gpus_per_group", "mtbf_of", "mtbf", "restart_min",
                              "checkpoint_s")]
        col2 = [c[k] for k in ("step_auto", "step_s", "model_bytes", "allreduce", "model")]
        col3 = [w.HTML("<b>methods</b> (<code>--strategies</code>)"),
                *(c["strategy:" + n] for n in METHODS), c["method"], c["r"]]
        self.widget = w.VBox([self.verdict, w.HBox([w.VBox(col), w.VBox(col2), w.VBox(col3)]),
                              self.recommendation, self.plot, w.HBox([self.button, self.status]),
                              self.sim_result, self.sim_out]).add_class("spare-planner")
        self.replan()

    @staticmethod
    def _controls(w: Any, x: PlannerInputs, method: str) -> dict[str, Any]:
        style, lay = {"description_width": "13em"}, w.Layout(width="26em")

        def box(cls: Any, value: Any, knob: str | None, desc: str = "", **kw: Any) -> Any:
            """A control of knob ``knob``, labelled as spare plan's flag (:func:`input_label`)."""
            tip = f"{input_flag(knob)}: {KNOBS[knob].help}" if knob else ""
            return cls(value=value, description=input_label(knob) if knob else desc, style=style,
                       layout=lay, tooltip=tip, **kw)

        of = "system_mtbf_s" if x.system_mtbf_s is not None else "gpu_mtbf_s"
        mtbf = x.system_mtbf_s or x.gpu_mtbf_s or KNOBS["gpu_mtbf_s"].default
        c = {"gpus": box(w.IntText, x.gpus, "gpus"),
             "gpus_per_group": box(w.IntText, x.gpus_per_group, "gpus_per_group"),
             "mtbf_of": box(w.Dropdown, of, None, "MTBF given", options=[
                 ("per GPU", "gpu_mtbf_s"), ("system m", "system_mtbf_s")]),
             "mtbf": box(w.FloatText, mtbf / unit_factor(of), of),
             "restart_min": box(w.FloatText, x.restart_s / unit_factor("restart_s"), "restart_s"),
             "checkpoint_s": box(w.FloatText, x.checkpoint_s, "checkpoint_s"),
             "step_auto": box(w.Checkbox, x.step_s is None, None, "step = 64 s + T_a",
                              indent=True),
             "step_s": box(w.FloatText, x.step_s or 0.0, "step_s", disabled=x.step_s is None),
             "model_bytes": box(w.Text, _arg(float(x.model_bytes)), "model_bytes"),
             "allreduce": box(w.Dropdown, x.allreduce, "allreduce",
                              options=list(KNOBS["allreduce"].choices)),
             "model": box(w.Dropdown, x.model, "model", options=list(KNOBS["model"].choices))}
        for n, m in METHODS.items():
            c["strategy:" + n] = w.Checkbox(value=n in x.methods, description=m.label,
                                            indent=False, layout=w.Layout(width="22em"))
        c["method"] = box(w.Dropdown, method, None, "selected method",
                          options=[(METHODS[n].label, n) for n in x.methods])
        c["r"] = box(w.IntSlider, 2, None, "your r", min=1, max=64, continuous_update=False)
        return c

    def read_inputs(self) -> PlannerInputs:
        """The inputs of the controls (ValueError naming the bad one)."""
        c = self.controls
        of = c["mtbf_of"].value
        methods = tuple(n for n in METHODS if c["strategy:" + n].value)
        if not methods:
            raise ValueError("strategies must hold at least one method, got none ticked")
        return PlannerInputs(
            gpus=int(c["gpus"].value), gpus_per_group=int(c["gpus_per_group"].value),
            **{of: float(c["mtbf"].value) * unit_factor(of)},
            restart_s=float(c["restart_min"].value) * unit_factor("restart_s"),
            checkpoint_s=float(c["checkpoint_s"].value),
            step_s=None if c["step_auto"].value else float(c["step_s"].value),
            model_bytes=_number(c["model_bytes"].value, "model_bytes"),
            allreduce=c["allreduce"].value, methods=methods, model=c["model"].value)

    def _switch_mtbf(self, change: Any) -> None:
        """Show the same cluster's MTBF in the other form (m = per-GPU MTBF / working GPUs)."""
        if self.result is not None and not self._busy:
            s = self.result.request.spec
            new, mt = change["new"], self.controls["mtbf"]
            gpu_s = s.system_mtbf_s * s.N * s.gpus_per_group
            self._busy = True
            mt.description, mt.tooltip = input_label(new), f"{input_flag(new)}: {KNOBS[new].help}"
            mt.value = (gpu_s if new == "gpu_mtbf_s" else s.system_mtbf_s) / unit_factor(new)
            self._busy = False
        self.replan()

    def replan(self, change: Any = None) -> None:
        """Plan the current inputs with ``run_plan`` and redraw (the callback of every input)."""
        if self._busy:
            return
        try:
            x = self.read_inputs()
            res = self._cache.get(x) or run_plan(x.request())
        except ValueError as e:
            self.inputs = self.result = None
            self.verdict.value = (f"<div class='spare-error' style='color:#b00;font-weight:bold'>"
                                  f"{html.escape(str(e))}</div>")
            return
        if len(self._cache) > 32:
            self._cache.clear()
        self._cache[x] = res
        self.inputs, self.result = x, res
        self._busy = True
        try:
            c = self.controls
            if c["step_auto"].value:
                c["step_s"].value, c["step_s"].disabled = res.request.spec.step_s, True
            else:
                c["step_s"].disabled = False
            sel = c["method"].value if c["method"].value in x.methods else x.methods[0]
            c["method"].options = [(METHODS[n].label, n) for n in x.methods]
            c["method"].value = sel
        finally:
            self._busy = False
        self.redraw()

    def redraw(self, change: Any = None) -> None:
        """The r slider's range for the selected method, the verdict, the text and the plot."""
        if self._busy or self.result is None:
            return
        res, c = self.result, self.controls
        name, r_w = c["method"].value, c["r"]
        if change is not None and change["owner"] is r_w:
            self._want_r = change["new"]  # the user's r, kept across methods and clusters
        lo, hi = method_range(res, name)
        self._busy = True
        try:
            if lo > r_w.max:  # never min > max on the way
                r_w.max, r_w.min = hi, lo
            else:
                r_w.min, r_w.max = lo, hi
            want = res.fast.best(name).r if self._want_r is None else self._want_r
            r_w.value, r_w.disabled = clip_r(res, name, want), hi == lo
        finally:
            self._busy = False
        self.verdict.value = verdict_html(res, self.inputs.command())
        self.recommendation.value = recommendation_html(res, name, r_w.value)
        self.plot.value = make_planner_png(res, name, r_w.value)

    def simulate(self, _: Any = None) -> PlanResult | None:
        """Run :func:`simulate_plan` for the current inputs; show its verdict and its table."""
        from IPython.display import display

        if self.result is None:
            self.status.value = "fix the inputs first"
            return None
        x = self.inputs
        cmd = x.command(trials=self.trials, steps=self.steps, seed=self.seed)
        steps = f"{self.steps:,}" if isinstance(self.steps, int) else str(self.steps)
        what = (f"{', '.join(METHODS[n].label for n in x.methods)} on N = {x.spec().N:,} "
                f"({self.trials} trial(s) x {steps} steps per candidate)")
        self.button.disabled = True
        self.status.value = f"simulating {what} ..."
        t0 = time.perf_counter()
        try:
            with self.sim_out:
                self.sim_out.clear_output()
                sim = simulate_plan(x, trials=self.trials, steps=self.steps, seed=self.seed,
                                    progress=True)  # tqdm bar in sim_out
                self.sim_out.clear_output()
                display(simulated_frame(sim).round(3))
        except Exception as e:
            self.status.value = f"simulation failed: {html.escape(str(e))}"
            raise
        finally:
            self.button.disabled = False
        self.simulated = sim
        self.sim_result.value = simulation_html(sim, cmd)
        self.status.value = f"done: {what} in {time.perf_counter() - t0:.1f} s"
        return sim


__all__ = ["DEFAULT_CLUSTER", "INPUT_KNOBS", "SHOWN_IN", "Y_SPAN", "Planner", "PlannerInputs",
           "clip_r", "headline", "input_flag", "input_label", "make_plan_figure",
           "make_planner_png", "method_lines", "method_range", "planner_inputs",
           "recommendation_html", "simulate_plan", "simulated_frame", "simulation_html",
           "unit_factor", "verdict_html", "verdict_text"]
