"""The planner of 90_explore without a browser: a view of ``spare plan`` (its inputs, its request,
its verdict), its plot, its widget callbacks, and the app's preparation of the notebook."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json

import pytest

from spare_lib.cli import build_parser
from spare_lib.cli import main as spare
from spare_lib.cli.plan import request_from_args
from spare_lib.cluster.planning import run_plan
from spare_lib.figures.explore import (
    INPUT_KNOBS,
    PlannerInputs,
    clip_r,
    headline,
    make_planner_png,
    method_lines,
    method_range,
    planner_inputs,
    unit_factor,
    verdict_text,
)
from spare_lib.registry.knobs import KNOBS
from spare_lib.registry.methods import METHODS, PAPER_METHODS

#: The cluster of issue 23's "Why": 32,768 GPUs in groups of 512, per-GPU MTBF 40,000 h, T_r
#: 20 min, T_s 30 s, step 12 s; with a smaller model so that T_a stays below the step.
ISSUE = PlannerInputs(gpus=32_768, gpus_per_group=512, gpu_mtbf_s=40_000 * 3600.0,
                      restart_s=20 * 60.0, checkpoint_s=30.0, step_s=12.0, model_bytes=1e12)
#: Inputs that exercise every control's flag once.
VARIANTS = [
    PlannerInputs(),
    ISSUE,
    PlannerInputs(gpus_per_group=3000, system_mtbf_s=150.0, allreduce="preset", model="finite"),
    PlannerInputs(gpus=200_000, gpus_per_group=2000, checkpoint_s=2e13 / 3.4e11 / 3,
                  allreduce="tree", methods=("spare", "elastic-drop"), model="paper"),
]


def cli_output(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert spare(argv) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def default():
    return run_plan(PlannerInputs().request())


def test_inputs_are_the_registry_knobs_with_its_defaults_and_aliases():
    x = PlannerInputs()
    for name in INPUT_KNOBS:
        if KNOBS[name].default is not None and name not in ("gpu_mtbf_s", "system_mtbf_s"):
            assert getattr(x, name) == KNOBS[name].default, name
    assert x.methods == PAPER_METHODS and x.model == "predict"
    # hours and minutes only where the registry declares the alias
    assert (unit_factor("gpu_mtbf_s"), unit_factor("system_mtbf_s"), unit_factor("restart_s")) \
        == (3600.0, 60.0, 60.0)
    assert {a.flag for a in KNOBS["gpu_mtbf_s"].aliases} == {"--gpu-mtbf-hours"}
    with pytest.raises(ValueError, match="not both"):
        PlannerInputs(gpu_mtbf_s=1e8, system_mtbf_s=300.0)
    with pytest.raises(ValueError, match="knobs must be among"):
        planner_inputs(mtbf_min=5.0)
    assert planner_inputs(gpus=None, strategies="all").methods == tuple(METHODS)
    assert planner_inputs(strategies="ckpt,spare").methods == ("ckpt", "spare")


@pytest.mark.parametrize("x", VARIANTS, ids=range(len(VARIANTS)))
def test_argv_gives_spare_plan_the_same_request(x):
    args = build_parser().parse_args(x.argv())
    assert dataclasses.replace(request_from_args(args), progress=False) == x.request()
    sim = build_parser().parse_args(x.argv(trials=2, steps=300, seed=7))
    assert dataclasses.replace(request_from_args(sim), progress=False) \
        == dataclasses.replace(x.request(2, 300, 7))
    assert x.command().split() == ["spare", *x.argv()]


def test_headline_and_verdict_are_what_spare_plan_prints():
    res = run_plan(ISSUE.request())
    text = cli_output(ISSUE.argv())
    assert text.rstrip("\n").endswith(verdict_text(res))
    assert verdict_text(res).startswith("Best (model): ")
    js = json.loads(cli_output([*ISSUE.argv(), "--json"]))
    assert headline(res) == js["verdict"]["statement"] == res.verdict.statement


def test_method_lines_follow_the_fast_model(default):
    best = default.fast.best("spare")
    lines = method_lines(default, "spare", 5)
    assert lines[0].startswith(f"SPARe+CKPT, model's optimum: r = {best.r}, checkpoint every "
                               f"{best.checkpoint_steps:,} steps")
    p5 = default.fast.point("spare", 5)
    assert lines[1].startswith(f"your r = 5: checkpoint every {p5.checkpoint_steps:,} steps")
    assert f"TTT/T0 = {p5.ttt_over_t0:.3f}" in lines[1]
    assert len(method_lines(default, "ckpt", 9)) == 1  # no r to choose
    with pytest.raises(ValueError, match="method must be one of"):
        method_lines(default, "elastic-drop", 1)


def test_clip_r_and_range(default):
    assert method_range(default, "ckpt") == (1, 1) and clip_r(default, "ckpt", 9) == 1
    lo, hi = method_range(default, "spare")
    assert lo == 2 and hi == default.fast.plan.r_max
    assert clip_r(default, "spare", 99) == hi and clip_r(default, "rep", 0) == 2


def test_plot_png_changes_with_r_and_draws_every_method(default):
    a, b = make_planner_png(default, "spare", 5), make_planner_png(default, "spare", 9)
    assert a.startswith(b"\x89PNG") and a != b
    every = run_plan(PlannerInputs(methods=tuple(METHODS)).request())
    assert make_planner_png(every, "elastic-drop", 1).startswith(b"\x89PNG")


def test_planner_callbacks_replan_and_simulate(default):
    pytest.importorskip("ipywidgets")
    from spare_lib.figures.explore import Planner

    pl = Planner(trials=1, steps=60, seed=1)
    c = pl.controls
    # every knob's control is labelled with spare plan's flag in its unit (the registry's alias)
    flags = {"gpus": "--gpus [GPUs]", "gpus_per_group": "--gpus-per-group [GPUs]",
             "mtbf": "--gpu-mtbf-hours [h]", "restart_min": "--restart-min [min]",
             "checkpoint_s": "--checkpoint-s [s]", "step_s": "--step-s [s]",
             "model_bytes": "--model-bytes [B]", "allreduce": "--allreduce", "model": "--model"}
    assert {k: c[k].description for k in flags} == flags
    for k, label in flags.items():  # each label is a flag of spare plan taking the box's value
        build_parser().parse_args(["plan", label.split(" ")[0], str(c[k].value)])
    assert verdict_text(pl.result) == verdict_text(default)
    assert c["r"].value == default.fast.best("spare").r
    assert verdict_text(default).replace("'", "&#x27;") in pl.verdict.value
    png = pl.plot.value
    c["gpus_per_group"].value = 3000  # N = 200
    at_200 = run_plan(PlannerInputs(gpus_per_group=3000).request())
    assert pl.inputs.argv() == ["plan", "--gpus-per-group", "3000"]
    assert verdict_text(pl.result) == verdict_text(at_200) and pl.plot.value != png
    assert c["r"].max == method_range(at_200, "spare")[1]
    c["r"].value = 5
    assert "your r = 5:" in pl.recommendation.value
    c["method"].value = "ckpt"  # no r: 1, disabled; the user's r comes back for Rep+CKPT
    assert c["r"].value == 1 and c["r"].disabled
    c["method"].value = "rep"
    assert c["r"].value == 5 and not c["r"].disabled
    # the same cluster given by its system MTBF: the same plan
    c["mtbf_of"].value = "system_mtbf_s"
    assert c["mtbf"].description == "--system-mtbf-min [min]"
    assert pl.inputs.system_mtbf_s == pytest.approx(at_200.request.spec.system_mtbf_s)
    assert pl.result.verdict.statement == at_200.verdict.statement
    c["mtbf_of"].value = "gpu_mtbf_s"
    # refused inputs: one line, and the button refuses too
    c["gpus_per_group"].value = 400_000
    assert "gpus_per_group must be in" in pl.verdict.value and pl.result is None
    assert pl.simulate() is None and "fix the inputs" in pl.status.value
    c["gpus_per_group"].value = 3000
    c["model_bytes"].value = "lots"
    assert "model_bytes must be a number" in pl.verdict.value
    c["model_bytes"].value = "2e13"
    for n in PAPER_METHODS:
        c["strategy:" + n].value = False
    assert "strategies must hold at least one method" in pl.verdict.value
    c["strategy:spare"].value = c["strategy:elastic-drop"].value = True
    assert pl.inputs.methods == ("spare", "elastic-drop")
    assert [v for _, v in c["method"].options] == ["spare", "elastic-drop"]
    # the step time: 64 s + T_a until unticked, then the user's
    c["step_auto"].value = False
    c["step_s"].value = 90.0
    assert pl.inputs.step_s == 90.0 and "--step-s" in pl.inputs.argv()
    # the button: spare plan --simulate with the same inputs, serially
    sp = pl.simulate()
    ref = run_plan(pl.inputs.request(1, 60, 1, backend="serial"))
    assert verdict_text(sp) == verdict_text(ref) and sp.verdict.source == "simulated"
    assert [p.ttt_trials for p in sp.points] == [p.ttt_trials for p in ref.points]
    assert {p.method for p in sp.points} == {"spare", "elastic-drop"}
    assert pl.status.value.startswith("done: SPARe+CKPT, Elastic-drop+CKPT on N = 200")
    assert "--simulate 1 --plan-steps 60 --seed 1" in pl.sim_result.value


def test_prepare_app_leaves_out_the_notebook_only_cells(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("papermill")
    from spare_lib.figures.app import APP_NOTEBOOK, NOT_IN_APP, parser, prepare_app

    whole = nbformat.read(APP_NOTEBOOK, as_version=4)
    skipped = [c for c in whole.cells if NOT_IN_APP in c.metadata.get("tags", ())]
    assert skipped and any("planner.simulate()" in c.source for c in skipped)  # no simulation
    app = nbformat.read(prepare_app(tmp_path / "a", smoke=True, GPUS=32_768), as_version=4)
    assert len(app.cells) == len(whole.cells) - len(skipped) + 1  # + papermill's parameters
    assert "GPUS = 32768" in app.cells[2].source
    assert not any("simulate(" in c.source for c in app.cells if c.cell_type == "code")
    lab = nbformat.read(prepare_app(tmp_path / "b", smoke=True, app=False), as_version=4)
    assert len(lab.cells) == len(whole.cells) + 1
    with pytest.raises(ValueError, match="params must be among"):
        prepare_app(tmp_path / "c", MTBF_MIN=5.0)
    # the app's flags are spare plan's, aliases converted to the knob's unit
    args = parser().parse_args(["--gpu-mtbf-hours", "40000", "--restart-min", "20",
                                "--gpus-per-group", "512", "--strategies", "all"])
    assert (args.GPU_MTBF_S, args.RESTART_S, args.GPUS_PER_GROUP, args.STRATEGIES) \
        == (1.44e8, 1200.0, 512, "all")
    with pytest.raises(SystemExit):
        parser().parse_args(["--restart-min", "-1"])
