"""The interactive capacity planner of notebook ``90_explore`` (ipywidgets) and its text helpers.

:class:`Planner` describes the user's cluster with controls (#GPUs, GPUs per group, system MTBF
m, restart time T_r, checkpoint write time T_s, failure-free step time, strategy and r), re-plans
it from the closed forms (:func:`spare_lib.cluster.planning.plan`) on every change and shows the
recommendation (:func:`recommendation_html`) and the curves (:func:`make_planner_png`, i.e.
:func:`~spare_lib.figures.cluster.make_explore_figure`). Its "simulate" button runs
:func:`spare_lib.cluster.planning.run_plan` for the selected point with a progress bar.
The strategies offered are :data:`spare_lib.cluster.planning.METHODS`, so a method added there
appears here. The same notebook is the standalone app of ``make app``
(:mod:`spare_lib.figures.app`, Voilà).

ipywidgets is imported only when a :class:`Planner` is built; the text helpers need nothing but
the library.

Example
-------
>>> closed = plan(cluster_spec(**DEFAULT_CLUSTER))
>>> "recommended r = 8" in recommendation_text(closed, "spare", 8)
True
"""

from __future__ import annotations

import html
import io
import time
from typing import Any

from spare_lib import theory as th
from spare_lib.cluster.planning import (
    LABELS,
    METHODS,
    ClusterSpec,
    Plan,
    PlanRequest,
    PlanResult,
    cluster_spec,
    plan,
    run_plan,
)

#: The paper's N = 600 configuration (the notebook's default point and the figure
#: ``explore_default``): keyword arguments of :func:`cluster_spec`; step_s None is 64 s + T_a.
DEFAULT_CLUSTER: dict[str, Any] = {"gpus": 600_000, "gpus_per_group": 1000, "system_mtbf_s": 300.0,
                                   "restart_s": 3600.0, "checkpoint_s": th.T_S_PAPER,
                                   "step_s": None, "allreduce": "preset"}

#: The r the planner starts with.
DEFAULT_R = 8


def strategies() -> list[tuple[str, str]]:
    """(label, method) of every strategy the planner offers, in the library's order.

    >>> strategies()[0]
    ('SPARe+CKPT', 'spare')
    """
    return [(LABELS[m], m) for m in METHODS]


def clip_r(closed: Plan, strategy: str, r: int) -> int:
    """``r`` clipped to the strategy's candidates: 1 for CKPT-only, [2, r_max] otherwise."""
    if strategy == "ckpt":
        return 1
    return int(min(max(int(r), 2), closed.r_max))


def _lines(closed: Plan, strategy: str, r: int) -> tuple[str, list[str], list[str]]:
    """(cluster line, recommendation lines of the strategy, lines of the other strategies)."""
    if strategy not in METHODS:
        raise ValueError(f"strategy must be one of {list(METHODS)}, got {strategy!r}")
    c = closed.cluster
    head = (f"N = {c.N:,} groups ({c.gpus:,} GPUs / {c.gpus_per_group:,} per group), system MTBF "
            f"m = {c.system_mtbf_s / 60:.2f} min, T_r = {c.restart_s / 60:.1f} min, "
            f"T_s = {c.checkpoint_s:.1f} s, step = {c.step_s:.1f} s (compute "
            f"{c.compute_per_stack_s:.1f} s + all-reduce {c.allreduce_s:.1f} s)")
    best = getattr(closed, strategy)
    rec = [f"{best.label}: recommended r = {best.r}, checkpoint every "
           f"{best.checkpoint_period_s:.0f} s ({best.checkpoint_steps} steps), "
           f"A* = {100 * best.availability:.1f} %, TTT/T0 = {best.ttt_over_t0:.3f}"]
    r = clip_r(closed, strategy, r)
    if strategy != "ckpt":
        p = closed.point(strategy, r)
        rec.append(f"your r = {r}: checkpoint every {p.checkpoint_period_s:.0f} s "
                   f"({p.checkpoint_steps} steps), A* = {100 * p.availability:.1f} %, "
                   f"TTT/T0 = {p.ttt_over_t0:.3f} "
                   f"({100 * (p.ttt_over_t0 / best.ttt_over_t0 - 1):+.1f} % vs r = {best.r})")
    others = []
    for m in METHODS:
        if m != strategy:
            o = getattr(closed, m)
            others.append(f"{o.label}: r = {o.r}, TTT/T0 = {o.ttt_over_t0:.3f}, "
                          f"A* = {100 * o.availability:.1f} %")
    others.append(f"gain of SPARe+CKPT over Rep+CKPT: {100 * closed.gain_vs_rep:.1f} %, over "
                  f"CKPT-only: {100 * closed.gain_vs_ckpt:.1f} % (closed form)")
    return head, rec, others


def recommendation_text(closed: Plan, strategy: str = "spare", r: int = DEFAULT_R) -> str:
    """The planner's recommendation as plain text (what the app shows, for terminals and tests).

    Parameters
    ----------
    closed : Plan
        From :func:`plan`.
    strategy : str
        One of :data:`~spare_lib.cluster.planning.METHODS`.
    r : int
        The redundancy the user selected (clipped to the strategy's range, see :func:`clip_r`).
    """
    head, rec, others = _lines(closed, strategy, r)
    return "\n".join([head, *rec, *("  " + o for o in others)])


def recommendation_html(closed: Plan, strategy: str = "spare", r: int = DEFAULT_R) -> str:
    """:func:`recommendation_text` as HTML (the recommendation in bold)."""
    head, rec, others = _lines(closed, strategy, r)
    esc = html.escape
    items = "".join(f"<li>{esc(o)}</li>" for o in others)
    rest = "".join(f"<div>{esc(x)}</div>" for x in rec[1:])
    return (f"<div class='spare-cluster'>{esc(head)}</div>"
            f"<div class='spare-rec'><b>{esc(rec[0])}</b></div>{rest}"
            f"<ul style='margin:0.2em 0'>{items}</ul>")


def make_planner_png(closed: Plan, strategy: str = "spare", r: int | None = DEFAULT_R,
                     dpi: int = 110) -> bytes:
    """PNG of :func:`~spare_lib.figures.cluster.make_explore_figure` at the selected r.

    Drawn to bytes (not through the notebook's matplotlib backend), so it looks the same in
    JupyterLab, in Voilà and under ``MPLBACKEND=Agg``; no r line for CKPT-only.
    """
    import matplotlib.pyplot as plt

    from spare_lib.figures.cluster import make_explore_figure

    sel = None if strategy == "ckpt" or r is None else clip_r(closed, strategy, r)
    fig = make_explore_figure(closed, sel)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    return buf.getvalue()


def simulate_selected(spec: ClusterSpec, strategy: str, r: int, *, trials: int, steps: int,
                      seed: int = 0, progress: bool = False) -> PlanResult:
    """Simulate the selected point: the strategy at ``r``, the other redundancy method at its
    closed-form r (for comparison), each at its closed-form checkpoint interval, serially.

    CKPT-only is simulated only when it is the strategy (in the restart-dominant regime its runs
    hit the wall-clock cap). No checkpoint search: ``spare plan --simulate`` does that.
    """
    if strategy not in METHODS:
        raise ValueError(f"strategy must be one of {list(METHODS)}, got {strategy!r}")
    closed = plan(spec)
    r = clip_r(closed, strategy, r)
    spare_r = (r,) if strategy == "spare" else (closed.spare.r,)
    rep_r = (r,) if strategy == "rep" else (closed.rep.r,)
    methods = ("spare", "rep") + (("ckpt",) if strategy == "ckpt" else ())
    return run_plan(PlanRequest(spec, methods=methods, model="finite", trials=trials,
                                steps=steps, seed=seed, spare_r=spare_r, rep_r=rep_r,
                                checkpoint_factors=(), backend="serial", progress=progress))


def simulated_frame(res: PlanResult) -> Any:
    """One row per simulated (method, r, checkpoint interval) of a plan, as a DataFrame."""
    import dataclasses

    import pandas as pd

    cols = ["label", "stage", "r", "checkpoint_steps", "trials", "completed", "ttt_mean", "ttt_std",
            "ttt_min", "ttt_max", "closed_form_ttt", "availability_mean",
            "closed_form_availability", "overhead_mean", "restarts_mean"]
    return pd.DataFrame([dataclasses.asdict(p) for p in res.points])[cols]


def explore_summary(closed: Plan, r: int | None = None) -> str:
    """A few lines for the explorer: the recommendation and, optionally, the selected SPARe r."""
    c = closed.cluster
    lines = [f"N = {c.N} groups, m = {c.system_mtbf_s / 60:.2f} min, T_r = {c.restart_s / 60:.1f} "
             f"min, T_s = {c.checkpoint_s:.1f} s, step = {c.step_s:.1f} s"]
    for p in (closed.spare, closed.rep, closed.ckpt):
        lines.append(f"{p.label:<10}  r* = {p.r:<2}  T_c* = {p.checkpoint_period_s:7.0f} s "
                     f"({p.checkpoint_steps} steps)  A* = {100 * p.availability:5.1f} %  "
                     f"TTT/T0 = {p.ttt_over_t0:.3f}")
    lines.append(f"gain of SPARe+CKPT over Rep+CKPT: {100 * closed.gain_vs_rep:.1f} % "
                 "(closed form)")
    if r is not None:
        p = closed.point("spare", r)
        lines.append(f"selected SPARe r = {r}: T_c* = {p.checkpoint_period_s:.0f} s "
                     f"({p.checkpoint_steps} steps), A* = {100 * p.availability:.1f} %, "
                     f"TTT/T0 = {p.ttt_over_t0:.3f}")
    return "\n".join(lines)


class Planner:
    """The widgets of the planner: controls, recommendation, plot, "simulate" button.

    Parameters
    ----------
    trials, steps : int
        Size of the button's simulation (trials per point, committed steps per run).
    seed : int
        Root seed of the simulation.
    gpus, gpus_per_group, system_mtbf_min, restart_min, checkpoint_s, step_s :
        The cluster the controls start at (see :func:`cluster_spec`; step_s None: 64 s + T_a).
    strategy : str
        One of :data:`~spare_lib.cluster.planning.METHODS`.
    r : int
        Starting redundancy.

    Attributes
    ----------
    controls : dict of str -> widget
        'gpus', 'gpus_per_group', 'mtbf_min', 'restart_min', 'checkpoint_s', 'step_s',
        'strategy', 'r'.
    closed : Plan or None
        The plan of the current inputs (None while they are invalid).
    widget : ipywidgets.VBox
        Everything, for ``display``.
    """

    def __init__(self, *, trials: int, steps: int, seed: int = 0,
                 gpus: int = DEFAULT_CLUSTER["gpus"],
                 gpus_per_group: int = DEFAULT_CLUSTER["gpus_per_group"],
                 system_mtbf_min: float = DEFAULT_CLUSTER["system_mtbf_s"] / 60.0,
                 restart_min: float = DEFAULT_CLUSTER["restart_s"] / 60.0,
                 checkpoint_s: float = DEFAULT_CLUSTER["checkpoint_s"],
                 step_s: float | None = None, strategy: str = "spare", r: int = DEFAULT_R) -> None:
        import ipywidgets as w

        self.trials, self.steps, self.seed = int(trials), int(steps), int(seed)
        if step_s is None:
            step_s = cluster_spec(gpus, gpus_per_group, allreduce="preset").step_s
        style = {"description_width": "11em"}
        lay = w.Layout(width="32em")

        def num(cls: Any, value: Any, desc: str, **kw: Any) -> Any:
            return cls(value=value, description=desc, style=style, layout=lay, **kw)

        slider = {"continuous_update": False}
        self.controls = {
            "gpus": num(w.BoundedIntText, int(gpus), "GPUs", min=2, max=10**8, step=1000),
            "gpus_per_group": num(w.BoundedIntText, int(gpus_per_group), "GPUs per group",
                                  min=1, max=10**7, step=100),
            "mtbf_min": num(w.FloatLogSlider, float(system_mtbf_min), "system MTBF m (min)",
                            base=10, min=-0.5, max=2.5, step=0.05, **slider),
            "restart_min": num(w.FloatSlider, float(restart_min), "restart T_r (min)", min=0,
                               max=240, step=5, **slider),
            "checkpoint_s": num(w.FloatSlider, float(checkpoint_s), "checkpoint T_s (s)", min=1,
                                max=600, step=0.1, readout_format=".1f", **slider),
            "step_s": num(w.FloatSlider, float(step_s), "step time (s)", min=1, max=600,
                          step=0.5, readout_format=".1f", **slider),
            "strategy": num(w.Dropdown, strategy, "strategy", options=strategies()),
            "r": num(w.IntSlider, int(r), "r", min=1, max=max(26, int(r)), **slider),
        }
        for name, c in self.controls.items():
            c.add_class(f"spare-input-{name.replace('_', '-')}")
        self.recommendation = w.HTML().add_class("spare-recommendation")
        self.plot = w.Image(format="png", layout=w.Layout(width="780px", max_width="100%"))
        self.plot.add_class("spare-plot")
        self.button = w.Button(description="simulate",
                               tooltip="simulate the selected point").add_class("spare-simulate")
        self.status = w.HTML().add_class("spare-sim-status")
        self.sim_out = w.Output().add_class("spare-sim-output")
        self.closed: Plan | None = None
        self._busy = False
        self._saved_r = int(r)
        for c in self.controls.values():
            c.observe(self.update, names="value")
        self.button.on_click(self.simulate)
        col = list(self.controls.values())
        self.widget = w.VBox([
            w.HBox([w.VBox(col[:4]), w.VBox(col[4:])]),
            self.recommendation, self.plot,
            w.HBox([self.button, self.status]), self.sim_out,
        ]).add_class("spare-planner")
        self.update()

    @property
    def strategy(self) -> str:
        return self.controls["strategy"].value

    def spec(self) -> ClusterSpec:
        """The cluster of the current inputs (ValueError naming the bad one)."""
        v = {k: c.value for k, c in self.controls.items()}
        return cluster_spec(int(v["gpus"]), int(v["gpus_per_group"]),
                            system_mtbf_s=60 * float(v["mtbf_min"]), restart_s=60 * float(v["restart_min"]),
                            checkpoint_s=float(v["checkpoint_s"]), step_s=float(v["step_s"]),
                            allreduce="preset")

    def update(self, change: Any = None) -> None:
        """Re-plan from the closed forms and redraw (the callback of every control)."""
        if self._busy:
            return
        self._busy = True
        try:
            try:
                closed = plan(self.spec())
            except ValueError as e:
                self.closed = None
                self.recommendation.value = (f"<div class='spare-error' style='color:#b00'>"
                                             f"{html.escape(str(e))}</div>")
                return
            self.closed = closed
            r_w = self.controls["r"]
            if self.strategy == "ckpt":  # r = 1; remember the user's r for the other strategies
                if not r_w.disabled:
                    self._saved_r = r_w.value
                r_w.min, r_w.value, r_w.disabled = 1, 1, True
            else:
                if r_w.disabled:
                    r_w.value = self._saved_r
                r_w.max = closed.r_max
                r_w.min = 2
                r_w.disabled = False
            r = clip_r(closed, self.strategy, r_w.value)
            self.recommendation.value = recommendation_html(closed, self.strategy, r)
            self.plot.value = make_planner_png(closed, self.strategy, r)
        finally:
            self._busy = False

    def simulate(self, _: Any = None) -> PlanResult | None:
        """Run :func:`simulate_selected` for the current inputs and show its table."""
        from IPython.display import display

        if self.closed is None:
            self.status.value = "fix the inputs first"
            return None
        spec, strategy = self.closed.cluster, self.strategy
        r = clip_r(self.closed, strategy, self.controls["r"].value)
        what = (f"{LABELS[strategy]} at r = {r}, N = {spec.N:,} "
                f"({self.trials} trial(s) x {self.steps:,} steps per point)")
        self.button.disabled = True
        self.status.value = f"simulating {what} ..."
        t0 = time.perf_counter()
        try:
            with self.sim_out:
                self.sim_out.clear_output()
                sp = simulate_selected(spec, strategy, r, trials=self.trials, steps=self.steps,
                                       seed=self.seed, progress=True)  # tqdm bar in sim_out
                self.sim_out.clear_output()
                display(simulated_frame(sp).round(3))
        except Exception as e:
            self.status.value = f"simulation failed: {html.escape(str(e))}"
            raise
        finally:
            self.button.disabled = False
        self.status.value = f"done: {what} in {time.perf_counter() - t0:.1f} s"
        return sp
