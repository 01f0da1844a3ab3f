"""The `spare` command line, exercised as a user would: its exit codes, output and JSON.

Most calls run the command in process (:func:`cli_runner.run`); the few whose point is the
process itself (exit status and tracebacks as a shell sees them, the first-run compile notice)
run it in a subprocess (:func:`cli_runner.run_subprocess`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cli_runner import run, run_subprocess


def test_simulate_json_small_run():
    # the paper's cluster: since issue 23 every command derives T_a from the ring all-reduce
    # unless told --allreduce preset (spare simulate used the preset's N/100 s)
    p = run("simulate", "--method", "spare", "--N", "200", "--r", "9", "--steps", "50", "--seed", "3",
            "--allreduce", "preset", "--json")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["label"] == "SPARe+CKPT" and res["ckpt_steps"] == 15  # the paper's C at N=200, r=9
    assert res["ckpt_source"] == "paper"
    assert res["steps"] == 50 and res["ttt_over_t0"] >= 1.0 and 0 < res["availability"] <= 1


def test_simulate_is_deterministic():
    args = ("simulate", "--method", "rep", "--N", "200", "--r", "3", "--steps", "40", "--seed", "7",
            "--json")
    once = run(*args).stdout
    assert once == run(*args).stdout == run_subprocess(*args).stdout  # and in-process = a real run


def test_sweep_from_yaml_and_csv(tmp_path):
    y = tmp_path / "points.yaml"
    y.write_text("points:\n  - {method: spare, N: 200, r: 4, steps: 30}\n"
                 "  - {method: ckpt, N: 200, r: 1, steps: 30}\n")
    out = tmp_path / "out.csv"
    p = run("sweep", str(y), "--backend", "serial", "--cache-dir", str(tmp_path / "c"), "--out", str(out),
            "--quiet")
    assert p.returncode == 0, p.stderr
    import pandas as pd

    df = pd.read_csv(out)
    assert df["method"].tolist() == ["spare", "ckpt"] and (df["steps"] == 30).all()
    c = tmp_path / "points.csv"
    df[["method", "N", "r", "steps"]].to_csv(c, index=False)
    p2 = run("sweep", str(c), "--backend", "serial", "--cache-dir", str(tmp_path / "c"), "--quiet")
    assert p2.returncode == 0, p2.stderr
    assert "spare" in p2.stdout and "ckpt" in p2.stdout


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("simulate", "--N", "0"), "--N"),
        (("simulate", "--N", "abc"), "--N"),
        (("simulate", "--steps", "-5"), "--steps"),
        (("simulate", "--system-mtbf-min", "0"), "--system-mtbf-min"),
        (("simulate", "--method", "magic"), "--method"),
        (("simulate", "--N", "200", "--r", "13", "--steps", "5"), "--layout consecutive"),
        (("plan", "--simulate", "1", "--checkpoint-factors", "0.5,abc"), "--checkpoint-factors"),
        (("plan", "--simulate", "1", "--checkpoint-factors", "0.5,-2"), "--checkpoint-factors"),
        (("sweep", "/nonexistent/points.csv"), "FILE"),
        (("simulate", "--ckpt-steps", "5", "--no-checkpoint"), "not allowed with"),
        (("simulate", "--N", "200", "--gpus-per-group", "3000"), "not allowed with"),
        (("simulate", "--N", "7"), "--N must be >= 2 and divide --gpus"),
        (("simulate", "--method", "ckpt", "--r", "3"), "--r must be 1 with --method ckpt"),
        (("plan", "--steps", "100"), "--steps only applies with --simulate"),
        (("plan", "--spare-r", "3..5"), "--spare-r only applies with --simulate"),
        (("plan", "--simulate", "1", "--spare-r", "3..5", "--r-window", "2"),
         "--r-window sets the default SPARe candidates; it cannot be combined with --spare-r"),
        (("plan", "--simulate", "1", "--spare-window", "2"), "unrecognized arguments: --spare-window"),
        (("plan", "--no-ckpt-only"), "unrecognized arguments: --no-ckpt-only"),
        (("plan", "--simulate", "1", "--spare-r", "30"), "--spare-r must be integers in [2, 20]"),
        (("plan", "--simulate", "1", "--rep-r", "5..2"), "--rep-r must be integers like"),
        (("plan", "--simulate", "1", "--scheduler", "tcp://x:1"), "--scheduler needs --backend dask"),
        (("plan", "--failure-dist", "exponential", "--weibull-shape", "2"), "--weibull-shape"),
        (("plan", "--weibull-shape", "0"), "--weibull-shape"),
        (("sweep", "x.csv", "--backend", "mpi"), "--backend"),
        (("figures", "--only", "no_such_notebook"), "--only"),
        (("frobnicate",), "invalid choice"),
        (("plan", "--gpus", "600000", "--gpus-per-group", "300001"), "--gpus-per-group must be in"),
        (("plan", "--allreduce", "butterfly"), "--allreduce"),
        (("plan", "--model-bytes", "0"), "--model-bytes"),
        (("plan", "--gpus-per-group", "400000"), "--gpus-per-group"),
        (("plan", "--gpus", "-5"), "--gpus"),
        (("plan", "--restart-min", "-1"), "--restart-min"),
        (("plan", "--checkpoint-s", "0"), "--checkpoint-s"),
        (("plan", "--step-s", "abc"), "--step-s"),
        (("plan", "--step-s", "5"), "--step-s"),
        (("plan", "--step-s", "60", "--allreduce-s", "60"), "--allreduce-s"),
        (("plan", "--system-mtbf-min", "5", "--gpu-mtbf-hours", "1e4"), "not allowed with"),
        (("plan", "--gpu-mtbf-hours", "0"), "--gpu-mtbf-hours"),
        (("plan", "--simulate", "0"), "--simulate"),
        (("plan", "--model", "exact"), "--model"),
    ],
)
def test_bad_flags_one_line_error_exit_2(args, flag):
    p = run(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    err = p.stderr.strip().splitlines()
    assert err and err[-1].startswith("spare") and flag in err[-1], p.stderr


@pytest.mark.parametrize(("args", "flag"), [
    (("simulate", "--N", "abc"), "--N"),                              # argparse's own refusal
    (("plan", "--gpus-per-group", "400000"), "--gpus-per-group"),     # a library ValueError
    (("sweep", "/nonexistent/points.csv"), "FILE"),                   # an OSError
])
def test_bad_flags_exit_2_in_a_real_process(args, flag):
    """What a shell sees: exit status 2 and one line on stderr, no traceback (the in-process
    runner above checks the same for every bad flag without starting an interpreter)."""
    p = run_subprocess(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("spare: error: ") and flag in line, p.stderr


# ---------------------------------------------------------------------------------- spare plan

# m = 50,000 GPU-hours / 600,000 GPUs = 5 min (--system-mtbf-min 5 is refused by a library bug:
# test_system_mtbf_flags_are_accepted)
PAPER_600 = ("--gpus", "600000", "--gpus-per-group", "1000", "--gpu-mtbf-hours", "50000",
             "--restart-min", "60", "--checkpoint-s", "58.8", "--step-s", "70")


def test_plan_table_closed_form():
    p = run("plan", *PAPER_600, "--model", "finite")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "N = 600 groups" in out and "compute 64 s + all-reduce T_a 6 s" in out
    assert "mu = theory.mu_finite" in out  # says which μ it used
    table = out[:out.index("Paper's formulas")]
    rows = {line.split()[0]: line.split() for line in table.splitlines()
            if line.strip().startswith(("SPARe+CKPT ", "Rep+CKPT ", "CKPT-only "))}
    assert rows["SPARe+CKPT"][1] == "8" and rows["Rep+CKPT"][1] == "2" and rows["CKPT-only"][1] == "1"
    assert "r* = 10" in out  # the paper's own formulas
    assert out.rstrip().splitlines()[-2].startswith("Verdict: SPARe+CKPT (closed form: no interval")
    assert out.rstrip().splitlines()[-1].startswith("(closed form only: --simulate N_TRIALS checks")


def test_plan_default_is_the_predictive_model():
    """Issue 17: ``spare plan`` uses theory.predict by default; r and C are its argmins (Rep
    triplets at the paper's N = 600, as the simulator finds, where the closed form says pairs)."""
    p = run("plan", *PAPER_600, "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    assert d["model"] == "predict" and d["fast"]["spare"]["r"] == 8 and d["fast"]["rep"]["r"] == 3
    assert d["verdict"]["source"] == "model" and d["best"]["method"] == "spare"
    from spare_lib.cluster.planning import cluster_spec
    from spare_lib.theory.predict.grid import optimise_checkpoint

    spec = cluster_spec(600_000, 1000, system_mtbf_s=300, step_s=70, checkpoint_s=58.8,
                        allreduce="ring")
    C, pr = optimise_checkpoint("rep", 600, 3, spec.cluster_config())
    rep = d["fast"]["rep"]
    assert rep["checkpoint_steps"] == C and abs(rep["ttt_over_t0"] - pr.ttt_over_t0) < 1e-9
    text = run("plan", *PAPER_600).stdout
    assert "Predictive model, model 'predict'" in text and "Best (model):" in text


def test_plan_json_gpu_mtbf_and_paper_model():
    # 50,000 GPU-hours over 600k GPUs = the paper's 5 min system MTBF
    p = run("plan", "--gpus", "600000", "--gpus-per-group", "3000", "--gpu-mtbf-hours", "50000",
            "--step-s", "66", "--model", "paper", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["cluster"]["N"] == 200 and abs(d["cluster"]["system_mtbf_s"] - 300.0) < 1e-9
    f = d["fast"]
    assert d["model"] == "paper" and f["spare"]["r"] == 8 and f["rep"]["r"] == 2
    assert f["spare"]["checkpoint_steps"] >= 1 and 0 < f["spare"]["availability"] < 1
    assert {"ttt_over_t0", "checkpoint_period_s", "availability"} <= set(f["ckpt"])


def test_plan_simulate_acceptance_n600():
    """Issue 7 acceptance for the paper's N = 600 configuration (all three, with their wall time
    against the one-minute target, are in benchmarks/bench_plan.py): --simulate 3 at 10,000 steps
    recommends SPARe r in 8..10 and Rep r = 3, gain over Rep in the 40–50 % band."""
    p = run("plan", *PAPER_600, "--simulate", "3", "--json", "--workers", "2")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    ch = d["choices"]
    assert 8 <= ch["spare"]["r"] <= 10 and ch["rep"]["r"] == 3
    assert 0.40 <= 1 - ch["spare"]["ttt"] / ch["rep"]["ttt"] <= 0.50  # the gain over Rep
    assert d["loss_vs_best"]["rep"]["loss"] == pytest.approx(ch["rep"]["ttt"] / ch["spare"]["ttt"] - 1)
    # the predictive model (the default) picks Rep triplets as the simulation does, and says so
    assert ch["rep"]["closed_form_r"] == 3 and "model r = 3: same" in ch["rep"]["summary"]
    # then the checkpoint interval is searched at the best r: 0.5, 0.75, 1, 1.5, 2 x C0
    for m in ("spare", "rep"):
        assert len(ch[m]["checkpoint_candidates"]) == 5
        assert ch[m]["closed_form_checkpoint_steps"] in ch[m]["checkpoint_candidates"]
        assert ch[m]["checkpoint_steps"] in ch[m]["checkpoint_tied"]
    at_c0 = {m: ch[m]["ttt_at_closed_form_checkpoint"] for m in ("spare", "rep")}
    assert 0.40 <= 1 - at_c0["spare"] / at_c0["rep"] <= 0.50
    assert [pt["trials"] for pt in d["points"]] == [3] * len(d["points"])
    assert d["best"]["method"] == "spare" and d["steps"] == 10_000 and d["crn"]


def test_plan_simulate_table_says_how_far_from_closed_form():
    p = run("plan", "--gpus", "600000", "--gpus-per-group", "3000", "--step-s", "66",
            "--simulate", "2", "--steps", "200", "--workers", "1", "--model", "finite")
    assert p.returncode == 0, p.stderr
    assert "Per method, simulation against closed form:" in p.stdout
    assert "Rep+CKPT: simulated r = " in p.stdout and "closed form r = 2" in p.stdout
    assert "checkpoint every" in p.stdout and "Best (simulated):" in p.stdout
    assert p.stdout.rstrip().splitlines()[-1].startswith("Verdict: ")
    q = run("plan", "--gpus", "600000", "--gpus-per-group", "3000", "--step-s", "66",
            "--simulate", "1", "--steps", "100", "--workers", "1", "--checkpoint-factors", "none",
            "--json")
    assert q.returncode == 0, q.stderr
    d = json.loads(q.stdout)
    assert d["checkpoint_factors"] == [] and {pt["stage"] for pt in d["points"]} == {1}


@pytest.mark.slow  # reruns the README's full-size example (pytest -m slow)
def test_readme_plan_output_is_what_the_command_prints():
    """The README's "Plan a cluster" example is real output: rerunning the command shown there
    prints the same lines (the two lines that report wall time are compared without it)."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = re.search(r"```console\n\$ spare (plan [^\n]*)\n(.*?)```", readme, re.S)
    assert block, "README has no `spare plan` console example"
    p = run(*block.group(1).split(), "--workers", "2")
    assert p.returncode == 0, p.stderr

    def norm(text: str) -> list[str]:
        text = re.sub(r"; \d+ s\):", "; <t> s):", text)
        return [line.rstrip() for line in text.strip().splitlines()]

    assert norm(p.stdout) == norm(block.group(2))


@pytest.mark.parametrize("flag", [("--system-mtbf-min", "5"), ("--system-mtbf-s", "300")])
def test_system_mtbf_flags_are_accepted(flag):
    p = run("plan", "--gpus", "2000", "--gpus-per-group", "100", *flag, "--json")
    assert p.returncode == 0, p.stderr
    assert _strict_json(p.stdout)["cluster"]["system_mtbf_s"] == 300.0


def test_simulate_takes_the_system_mtbf():
    a = run("simulate", "--N", "200", "--system-mtbf-min", "5", "--steps", "20", "--json")
    assert a.returncode == 0, a.stderr
    b = run("simulate", "--N", "200", "--gpu-mtbf-hours", "50000", "--steps", "20", "--json")
    assert a.stdout == b.stdout  # m = 5 min both ways on the 600,000 GPUs


# ------------------------------------------------------------------ issue 12: a planner users can trust

LLAMA = ("--gpus", "16384", "--gpus-per-group", "128", "--gpu-mtbf-hours", "49152", "--restart-min",
         "20", "--checkpoint-s", "30", "--step-s", "10", "--allreduce", "preset")


def _strict_json(text: str) -> dict:
    def bad(name: str) -> None:
        raise AssertionError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=bad)


def test_one_verdict_over_every_method_is_the_argmin_of_the_simulated_means():
    """Llama-3-like cluster: the verdict names the best method (the argmin of the simulated means
    of each method's recommendation), every other method's loss with a paired CI, and says plainly
    when SPARe is not worth it; the JSON carries best and loss_vs_best."""
    p = run("plan", *LLAMA, "--simulate", "2", "--steps", "4000", "--checkpoint-factors", "none",
            "--workers", "2", "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    means = {}
    for m in ("spare", "rep", "ckpt"):
        c = d["choices"][m]
        pt = next(q for q in d["points"] if q["method"] == m and q["r"] == c["r"]
                  and q["checkpoint_steps"] == c["checkpoint_steps"])
        means[m] = pt["ttt_mean"]
    best = min(means, key=means.get)
    assert d["best"]["method"] == best and d["best"]["ttt_over_t0"] == means[best]
    assert set(d["loss_vs_best"]) == {"spare", "rep", "ckpt"} and d["loss_vs_best"][best]["loss"] == 0
    for m in set(means) - {best}:
        x = d["loss_vs_best"][m]
        assert x["loss"] == pytest.approx(means[m] / means[best] - 1)
        assert x["ci_low"] <= x["loss"] <= x["ci_high"]  # 2 paired trials: a t interval
    assert d["model_verdict"]["best"]["method"] == "ckpt"  # CKPT-only by the model too
    text = run("plan", *LLAMA, "--simulate", "2", "--steps", "4000", "--checkpoint-factors", "none",
               "--workers", "2")
    last = text.stdout.rstrip().splitlines()[-1]
    # the best, or a tie naming it when a paired interval covers 0 (a tie is never a win)
    tied = any(x["tied"] for x in d["loss_vs_best"].values())
    head = "Verdict: tied between " if tied else "Verdict: "
    assert last.startswith(head + d["best"]["label"])
    if best != "spare":
        assert "SPARe is the wrong choice on this cluster" in last or "does not pay off" in last
    assert "95 % CI" in text.stdout


@pytest.mark.parametrize("N", [2, 5, 12, 21])
def test_any_cluster_size_plans_and_simulates(N):
    p = run("plan", "--gpus", str(8 * N), "--gpus-per-group", "8", "--simulate", "1", "--steps", "30",
            "--checkpoint-factors", "none", "--workers", "1", "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    assert d["cluster"]["N"] == N and all(pt["r"] <= N for pt in d["points"])
    assert d["best"]["method"] in ("spare", "rep", "ckpt")


def test_candidate_sets_from_the_cli():
    p = run("plan", "--gpus", "600000", "--gpus-per-group", "3000", "--step-s", "66", "--simulate", "1",
            "--steps", "30", "--spare-r", "3,5..6", "--rep-r", "2..3", "--strategies", "spare,rep",
            "--checkpoint-factors", "none", "--workers", "1", "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    got = {(pt["method"], pt["r"]) for pt in d["points"]}
    assert got == {("spare", 3), ("spare", 5), ("spare", 6), ("rep", 2), ("rep", 3)}
    assert set(d["loss_vs_best"]) == {"spare", "rep"}


def test_too_few_restarts_are_flagged_with_a_steps_hint():
    p = run("plan", *LLAMA, "--simulate", "1", "--steps", "300", "--checkpoint-factors", "none",
            "--workers", "2")
    assert p.returncode == 0, p.stderr
    assert "fewer than 5 global restarts per run on average" in p.stdout
    assert "rerun with --plan-steps" in p.stdout and "[given: 300 steps]" in p.stdout
    q = run("plan", *LLAMA, "--simulate", "1", "--checkpoint-factors", "none", "--spare-r", "2",
            "--rep-r", "2", "--strategies", "spare,rep", "--workers", "2", "--json")
    assert q.returncode == 0, q.stderr
    d = _strict_json(q.stdout)
    assert d["steps"] > 10_000 and d["steps_note"].startswith("auto: ")  # says what it chose


def test_large_n_closed_form_is_quick_and_says_how():
    """N = 1e5 closed form (timed in benchmarks/bench_plan_large_n.py; here: it answers)."""
    p = run("plan", "--gpus", "100000000", "--gpus-per-group", "1000", "--model", "finite",
            timeout=60)
    assert p.returncode == 0, p.stderr
    assert "N = 100000 groups" in p.stdout and "N > 2048: r = 2 uses the float closed form" in p.stdout
    assert p.stdout.rstrip().splitlines()[-2].startswith("Verdict: ")


def test_first_run_compile_is_detected_and_announced(tmp_path, capsys, monkeypatch):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    code = "from spare_lib.cluster.warm import kernels_cached; print(kernels_cached())"
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert cold.stdout.strip() == "False", cold.stderr
    from spare_lib.cli import common

    calls = []
    monkeypatch.setattr("spare_lib.cluster.warm.kernels_cached", lambda: False)
    monkeypatch.setattr("spare_lib.cluster.warm.warm_kernels",
                        lambda families=None: calls.append(families) or 42.0)
    common.ensure_kernels()
    err = capsys.readouterr().err
    assert calls == [("event core",)] and "compiling the simulator kernels (first run only, ~1-2 min" in err
    assert "compiled in 42 s" in err


def test_simulate_takes_the_cluster_flags_of_plan():
    from spare_lib.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices

    def flags(cmd: str) -> set[str]:
        return {o for a in sub[cmd]._actions for o in a.option_strings}

    cluster = {"--gpus", "--gpus-per-group", "--system-mtbf-min", "--gpu-mtbf-hours", "--restart-min",
               "--checkpoint-s", "--step-s", "--allreduce-s", "--weibull-shape", "--failure-dist"}
    assert cluster <= flags("plan") and cluster <= flags("simulate")
    p = run("simulate", *LLAMA, "--weibull-shape", "1.0", "--method", "spare", "--r", "4", "--steps", "50",
            "--failure-seed", "3", "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    assert d["N"] == 128 and d["steps"] == 50 and d["ckpt_source"] == "analytic"
    assert d["t0_s"] == pytest.approx(50 * 10.0)


def test_sweep_help_lists_every_point_key():
    from spare_lib.cluster.runs.sweeps import point_keys

    p = run("sweep", "--help")
    assert p.returncode == 0
    for k in point_keys():
        assert f"\n  {k} " in p.stdout, k
    assert "out_<key>" in p.stdout


def test_sweep_output_never_overwrites_input_columns(tmp_path):
    c = tmp_path / "points.csv"
    c.write_text("method,N,r,steps,restart_s,checkpoint_s\nspare,200,4,40,1200,30\nspare,200,4,40,3600,60\n")
    out = tmp_path / "out.csv"
    p = run("sweep", str(c), "--backend", "serial", "--cache-dir", str(tmp_path / "c"), "--out", str(out),
            "--quiet")
    assert p.returncode == 0, p.stderr
    import pandas as pd

    df = pd.read_csv(out)
    assert df["restart_s"].tolist() == [1200, 3600] and df["checkpoint_s"].tolist() == [30, 60]
    assert "out_restart_s" in df.columns and "out_checkpoint_s" in df.columns


@pytest.mark.parametrize(
    ("content", "suffix", "expect"),
    [
        ("points:\n  - {method: spare, N: 200\n", ".yaml", "line 3, column 1: invalid YAML"),
        ('method,N\nspare,200,3,4\n', ".csv", "line 2: invalid CSV: expected 2 fields"),
        ("method,N,restart_min\nspare,200,5\n", ".csv", "unknown key 'restart_min'; valid keys: method, N"),
        ("- {method: magic, N: 200}\n", ".yaml", "method must be one of"),
        ("- {method: spare, N: 200, r: 40}\n", ".yaml", "point 1"),
    ],
)
def test_sweep_file_errors_are_one_line(tmp_path, content, suffix, expect):
    f = tmp_path / f"points{suffix}"
    f.write_text(content)
    p = run("sweep", str(f), "--backend", "serial", "--cache-dir", str(tmp_path / "c"))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("spare: error: FILE") and expect in line, line


def test_unreachable_scheduler_and_unwritable_output_fail_fast(tmp_path):
    """An unreachable Dask scheduler is given up after the sweep's 5 s connect timeout, which the
    error names (a wait without it would hang until pytest-timeout fails this test)."""
    y = tmp_path / "p.yaml"
    y.write_text("- {method: spare, N: 200, r: 4, steps: 5}\n")
    p = run("sweep", str(y), "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9", "--quiet")
    assert p.returncode == 2
    (line,) = p.stderr.strip().splitlines()
    assert "tcp://127.0.0.1:9" in line and "did not answer within 5 s" in line
    q = run("sweep", str(y), "--out", "/nonexistent/dir/x.csv")
    assert q.returncode == 2 and "does not exist" in q.stderr and "sweep:" not in q.stderr


def test_json_is_strict_and_warnings_are_one_line():
    p = run("simulate", "--method", "rep", "--N", "200", "--r", "3", "--steps", "20", "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    assert "phase0_share" in d and d["phase0_share"] is None
    q = run("simulate", "--method", "ckpt", "--N", "200", "--steps", "200", "--max-wall-t0", "1")
    assert q.returncode == 0, q.stderr
    (line,) = q.stderr.strip().splitlines()
    assert line.startswith("spare: warning: the run stopped at --max-wall-t0 1 T0") and ".py" not in line


def test_paper_r_star_rules_say_why_they_differ():
    p = run("plan", *LLAMA)
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("Paper's formulas"))
    assert "they differ: the log2 rule comes from mu(N, r*) ~ N/2" in line


def test_make_lab_allows_root():
    from pathlib import Path

    make = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    lab = make[make.index("\nlab:"):].split("\n\n")[0]
    assert "--allow-root" in lab and "id -u" in lab


# ------------------------------------------------------------------ issue 15: failure domains

DOMAINS = ("--gpus", "2000", "--gpus-per-group", "20", "--domain-size", "5", "--domain-fault-share",
           "0.2")  # N = 100 groups in 20 domains of 5


def test_plan_domains_closed_form_uses_mu_correlated():
    # (--rep-placement only acts with --simulate: Rep's closed form is the same either way)
    p = run("plan", *DOMAINS, "--layout", "domain-aware")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "failure domains of D = 5 groups, q = 0.2 of failure events are domain events" in out
    assert "SPARe layout domain-aware, Rep placement consecutive" in out
    assert "theory.mu_correlated(N, r, D, q, layout='domain-aware')" in out
    assert "Rep+CKPT's closed form ignores the domains" in out
    q = run("plan", *DOMAINS, "--json")
    assert q.returncode == 0, q.stderr
    d = _strict_json(q.stdout)
    assert d["cluster"]["domain_size"] == 5 and d["cluster"]["domain_fault_share"] == 0.2
    assert d["layout"] == "ruler" and any("mu_correlated" in n for n in d["model_notes"])
    # the predictive model does not cover domains: the finite closed forms, and it says so
    assert d["model"] == "finite" and any("does not cover failure domains" in n
                                          for n in d["model_notes"])
    # correlated failures shorten SPARe's time between restarts against independent ones
    base = _strict_json(run("plan", "--gpus", "2000", "--gpus-per-group", "20", "--model", "finite",
                            "--json").stdout)
    assert base["model_notes"] == [] and base["cluster"]["domain_size"] == 1
    mu = {pt["r"]: pt["mu"] for pt in d["fast"]["spare"]["curve"]}
    mu0 = {pt["r"]: pt["mu"] for pt in base["fast"]["spare"]["curve"]}
    assert mu.keys() == mu0.keys() and all(mu[r] < mu0[r] for r in mu)


def test_plan_domains_without_events_keep_the_independent_numbers():
    a = _strict_json(run("plan", *PAPER_600, "--json").stdout)
    b = _strict_json(run("plan", *PAPER_600, "--domain-size", "10", "--json").stdout)
    assert a["fast"] == b["fast"] and a["best"] == b["best"]
    assert b["model_notes"] == ["failure domains of D = 10 groups but no domain events (q = 0): "
                                "failures are independent"]


def test_plan_domains_skips_impossible_layouts_with_a_warning_and_simulates():
    # at N = 100, D = 12 the domain-aware layout exists for r = 2..6 only (ruler range 2..9)
    p = run("plan", "--gpus", "2000", "--gpus-per-group", "20", "--domain-size", "12",
            "--domain-fault-share", "0.1", "--layout", "domain-aware", "--rep-placement", "strided",
            "--simulate", "2", "--steps", "100", "--spare-r", "4,9", "--rep-r", "2",
            "--checkpoint-factors", "none", "--strategies", "spare,rep", "--workers", "2", "--json")
    assert p.returncode == 0, p.stderr
    # one warning: the explicit r the layout does not have (the model's curve stops at r = 6 and
    # says so no more on stderr: --json prints nothing else)
    (line,) = p.stderr.strip().splitlines()
    assert line == ("spare: warning: SPARe r = 9 skipped: the domain-aware layout does not exist "
                    "there (N = 100, D = 12)")
    d = _strict_json(p.stdout)
    assert [q["r"] for q in d["fast"]["spare"]["curve"]] == [2, 3, 4, 5, 6]  # 7..9 skipped
    assert d["layout"] == "domain-aware" and d["r_max"] == 6
    assert {(q["method"], q["r"]) for q in d["points"]} == {("spare", 4), ("rep", 2)}
    assert any("skipped" in w for w in d["warnings"])


def test_simulate_takes_domains_layout_and_rep_placement():
    p = run("simulate", "--gpus", "2000", "--N", "100", "--domain-size", "5", "--domain-fault-share",
            "0.3", "--layout", "domain-aware", "--r", "6", "--steps", "60", "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    assert (d["layout"], d["domain_size"], d["domain_fault_share"]) == ("domain-aware", 5, 0.3)
    q = run("simulate", "--gpus", "2000", "--N", "100", "--domain-size", "5", "--method", "rep",
            "--r", "2", "--rep-placement", "strided", "--steps", "60", "--json")
    assert q.returncode == 0, q.stderr
    assert _strict_json(q.stdout)["rep_placement"] == "strided"


def _choices(cmd: str, flag: str) -> tuple:
    from spare_lib.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices[cmd]
    return tuple(next(a for a in sub._actions if flag in a.option_strings).choices)


def test_layout_choices_match_the_planner():
    """The flags' choices are the registry's, and the registry's are the planner's."""
    from spare_lib.cluster.planning import REP_PLACEMENTS
    from spare_lib.cluster.planning.layouts import LAYOUTS
    from spare_lib.registry.knobs import KNOBS

    assert KNOBS["layout"].choices == LAYOUTS and KNOBS["rep_placement"].choices == REP_PLACEMENTS
    for cmd in ("plan", "simulate"):
        assert _choices(cmd, "--layout") == LAYOUTS
        assert _choices(cmd, "--rep-placement") == REP_PLACEMENTS


def test_cli_cluster_defaults_match_the_library():
    from spare_lib.cluster.config import GPU_MTBF_S
    from spare_lib.cluster.planning import ALLREDUCE_CHOICES
    from spare_lib.registry.knobs import KNOBS

    assert KNOBS["allreduce"].choices == ALLREDUCE_CHOICES == _choices("plan", "--allreduce")
    assert KNOBS["gpu_mtbf_s"].default == GPU_MTBF_S


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (("plan", "--domain-size", "0"), "--domain-size must be an integer in [1, 1e12], got '0'"),
        (("plan", *DOMAINS[:4], "--domain-size", "101"),
         "--domain-size must be an integer in [1, N] = [1, 100]"),
        (("plan", "--domain-fault-share", "1.5"), "--domain-fault-share must be in [0, 1], got '1.5'"),
        (("plan", "--domain-fault-share", "-0.1"), "--domain-fault-share must be in [0, 1], got '-0.1'"),
        (("plan", "--layout", "diagonal"), "--layout"),
        (("plan", "--rep-placement", "random"), "--rep-placement"),
        (("plan", *DOMAINS[:4], "--domain-size", "50", "--layout", "domain-aware"),
         "--domain-size must be in [1, 49] for --layout domain-aware at N = 100"),
        (("plan", *DOMAINS[:4], "--domain-size", "12", "--layout", "domain-aware", "--simulate", "2",
          "--spare-r", "9"), "--spare-r must be in 2..6 (the r for which --layout domain-aware exists"),
        (("simulate", "--gpus", "2000", "--N", "100", "--domain-size", "12", "--layout", "domain-aware",
          "--r", "9"), "--layout domain-aware does not exist for --r 9 at N = 100 with --domain-size 12"),
        (("simulate", "--gpus", "2000", "--N", "100", "--domain-size", "101"), "--domain-size"),
    ],
)
def test_domain_flags_bad_input_is_one_line(args, expect):
    p = run(*args)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    lines = [x for x in p.stderr.strip().splitlines() if not x.startswith("spare: warning")]
    (line,) = lines
    assert line.startswith("spare: error: ") and expect in line, line


# ------------------------------------------------------------------ issue 23: inputs of "Why"

_SMALL_SIM = ("--gpus", "2000", "--gpus-per-group", "100", "--steps", "50", "--checkpoint-factors",
              "none", "--backend", "serial")


@pytest.mark.parametrize("args", [
    ("--restart-min", "1e300"),
    ("--gpu-mtbf-hours", "0.5"),
    ("--system-mtbf-min", "0.05"),
    (*_SMALL_SIM, "--simulate", "1"),
    ("--gpus-per-group", "300001"),
])
def test_accepted_inputs_answer_or_refuse_in_one_line(args):
    """An answer without nan, or exit 2 with one line naming the flag; never a traceback."""
    p = run("plan", *args)
    assert "Traceback" not in p.stderr and p.returncode in (0, 2), p.stderr[-2000:]
    if p.returncode == 2:
        (line,) = p.stderr.strip().splitlines()
        assert line.startswith("spare: error: ") and args[0] in line
        assert args[0] != "--system-mtbf-min" or "not both" not in line
    else:
        assert "nan" not in p.stdout and "Verdict: " in p.stdout


def test_one_trial_says_nothing_is_resolved():
    p = run("plan", *_SMALL_SIM, "--simulate", "1")
    assert p.returncode == 0, p.stderr
    assert "from one trial per candidate: no interval, so no difference is resolved" in p.stdout
    assert "tied" not in p.stdout.split("Best (simulated)")[-1]


def test_a_domain_share_without_domains_falls_back_to_the_closed_forms():
    """q > 0 with D = 1 (domain events of one group, a cluster-wide renewal process): the
    predictive model does not cover it, so the planner uses the 'finite' closed forms, as for
    D > 1 (it used to end in the predictive model's refusal)."""
    p = run("plan", "--gpus", "2000", "--gpus-per-group", "100", "--domain-fault-share", "0.2",
            "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    assert d["model"] == "finite" and d["cluster"]["domain_fault_share"] == 0.2
    assert "the predictive model does not cover domain events: the 'finite' closed forms are " \
        "used instead" in d["model_notes"]


def test_flag_names_keeps_prose_words_and_drops_the_config_prefix():
    """A knob whose name is also a word (model, steps, seed, layout) is a flag only where a
    library message uses it as a parameter; ``config.`` goes (the flag names it)."""
    from spare_lib.cli.common import flag_names

    line = flag_names("config.domain_fault_share must be 0: the model has independent group "
                      "clocks only")
    assert "config." not in line and "the --model" not in line
    assert line == "--domain-fault-share must be 0: the model has independent group clocks only"
    assert flag_names("steps must be >= 1, got 0") == "--steps must be >= 1, got 0"
    assert flag_names("config.steps must be >= 1") == "--steps must be >= 1"
    assert flag_names("model must be one of ('predict',)") == "--model must be one of ('predict',)"
    assert flag_names("seed=3 and the seed of every trial") == "--seed=3 and the seed of every trial"
    assert flag_names("a model must be given") == "a model must be given"
    assert flag_names("restart_s must be finite (the restart_s knob)") == \
        "--restart-s must be finite (the --restart-s knob)"
