"""`spare trace summary|fit` and `spare plan --failures` (issue 14), as a user would (run in
process through :func:`cli_runner.run`).

Small synthetic CSV logs written to tmp_path keep these fast; one summary test reads the real
StepFun trace (584 faults on 231 of 400 servers).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_runner import Completed, run

SMALL = ("--gpus", "2000", "--gpus-per-group", "100")  # N = 20 groups
FAST = ("--simulate", "2", "--steps", "150", "--spare-r", "3", "--rep-r", "2", "--strategies",
        "spare,rep", "--checkpoint-factors", "none", "--backend", "serial")



def _strict_json(text: str) -> dict:
    def bad(name: str) -> None:
        raise AssertionError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=bad)


def _one_line_error(p: Completed) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("spare: error: "), line
    return line


@pytest.fixture
def small_log(tmp_path):
    """200 faults on 50 nodes over ~50 days, times in hours, two simultaneous pairs."""
    rng = np.random.default_rng(1)
    t = np.sort(rng.exponential(6.0, 200).cumsum())
    nodes = rng.integers(0, 50, 200)
    t[11], t[41] = t[10], t[40]  # simultaneous faults on two nodes
    nodes[11], nodes[41] = (nodes[10] + 1) % 50, (nodes[40] + 1) % 50
    lines = ["node,start,end,cause"] + [f"n{n},{x:.4f},{x + 0.5:.4f},{'GPU' if i % 3 else 'NIC'}"
                                        for i, (n, x) in enumerate(zip(nodes, t, strict=True))]
    path = tmp_path / "log.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


# ------------------------------------------------------------------------------ spare trace summary


def test_trace_summary_real_stepfun_trace():
    from spare_lib.failures import data_path

    try:
        folder = data_path("stepfun-infinitehbd", download=False)
    except FileNotFoundError:
        pytest.skip("StepFun dataset not on this machine")
    p = run("trace", "summary", str(folder / "fault_trace.json"))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "faults            584 (" in out and "400 observed (231 with faults) x 8 GPUs" in out
    assert "MTBF              per node 5,737 h; per GPU 45,893 h" in out
    assert out.splitlines()[0] == f"source            stepfun ({folder / 'fault_trace.json'})"


def test_trace_summary_csv_text_and_json(small_log):
    p = run("trace", "summary", str(small_log), "--time-unit", "h", "--gpus-per-node", "4",
            "--n-nodes", "64")
    assert p.returncode == 0, p.stderr
    assert "64 observed (" in p.stdout and "x 4 GPUs" in p.stdout and "faults            200 (" in p.stdout
    assert "instants          198 at tolerance 1.0 s" in p.stdout and "GPU 133, NIC 67" in p.stdout
    q = run("trace", "summary", str(small_log), "--time-unit", "h", "--tolerance-s", "0", "--json")
    assert q.returncode == 0, q.stderr
    d = _strict_json(q.stdout)
    assert d["n_faults"] == 200 and d["n_nodes"] == 49 and d["gpus_per_node"] is None
    assert d["mtbf_gpu_hours"] is None and d["tolerance_s"] == 0.0
    assert d["source"] == f"csv ({small_log})"


# ------------------------------------------------------------------------------ spare trace fit


def test_trace_fit_system_and_node_level(small_log):
    p = run("trace", "fit", str(small_log), "--time-unit", "h", "--gpus-per-node", "8",
            "--dists", "exponential,weibull", "--ci", "fisher")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("Inter-arrival fits of csv (49 nodes") and "Fisher" in lines[0]
    assert lines[1].split()[:4] == ["law", "shape", "95%", "CI"]
    assert lines[2].split()[0] == "exponential" and lines[3].split()[0] == "weibull"
    assert "Best by AIC:" in p.stdout and "Weibull shape k = " in p.stdout
    q = run("trace", "fit", str(small_log), "--time-unit", "h", "--level", "node", "--dists",
            "weibull", "--boot", "5", "--json")
    assert q.returncode == 0, q.stderr
    d = _strict_json(q.stdout)
    assert d["level"] == "node" and d["n_boot"] == 5 and [f["dist"] for f in d["fits"]] == ["weibull"]
    f = d["fits"][0]
    assert f["shape_lo"] <= f["shape"] <= f["shape_hi"] and f["mtbf_gpu_hours"] is None
    assert d["rate_dispersion"] > 0


@pytest.mark.parametrize(
    ("content", "args", "expect"),
    [
        (None, ("summary", "{dir}/missing.csv"), "FILE '{dir}/missing.csv': path does not exist"),
        ("node,start,end\nn1,10,20\nn2,abc,30\n", ("summary", "{f}"),
         "row 3, column 'start': unparseable time 'abc'"),
        ("node,start,end\nn1,10,5\n", ("fit", "{f}"), "row 2, column 'end': end 5 is before start 10"),
        ("node,begin,end\nn1,10,11\n", ("summary", "{f}"), "missing column(s) ['start']"),
        ("", ("summary", "{f}"), "file is empty"),
        ("node,start,end\nn1,10,20\n", ("summary", "{f}", "--format", "stepfun"),
         "invalid or truncated JSON"),
        ("node,start,end\nn1,10,20\n", ("summary", "{f}", "--format", "excel"), "--format"),
        ("node,start,end\nn1,10,20\n", ("summary", "{f}", "--time-unit", "weeks"), "--time-unit"),
        ("node,start,end\nn1,10,20\n", ("summary", "{f}", "--tolerance-s", "-1"), "--tolerance-s"),
        ("node,start,end\nn1,10,20\n", ("summary", "{f}", "--system", "20"), "--system is only meaningful"),
        ("node,start,end\nn1,10,20\n", ("fit", "{f}", "--dists", "weibull,pareto"), "--dists must be"),
        ("node,start,end\nn1,10,20\n", ("fit", "{f}", "--ci", "none", "--boot", "10"),
         "--boot only applies with --ci bootstrap"),
        ("node,start,end\nn1,10,20\n", ("fit", "{f}", "--boot", "1"), "--boot must be an integer >= 2"),
        ("node,start,end\nn1,10,20\n", ("fit", "{f}", "--level", "rack"), "--level"),
    ],
)
def test_trace_bad_input_is_one_line(tmp_path, content, args, expect):
    f = tmp_path / "log.csv"
    if content is not None:
        f.write_text(content)
    sub = {"f": str(f), "dir": str(tmp_path)}
    line = _one_line_error(run("trace", *(a.format(**sub) for a in args)))
    assert expect.format(**sub) in line, line


def test_trace_constants_match_the_library():
    from spare_lib.cli import trace
    from spare_lib.cluster.planning.traces import PLACEMENTS
    from spare_lib.failures import DISTS, FORMATS, METHODS, TIME_UNITS_S
    from spare_lib.registry.knobs import KNOBS

    assert trace.FORMATS == tuple(FORMATS) and trace.TIME_UNITS == tuple(TIME_UNITS_S)
    assert trace.FIT_DISTS == tuple(DISTS) and trace.SYNTH_METHODS == tuple(METHODS)
    assert trace.PLACEMENTS == tuple(PLACEMENTS)
    # the registry's knobs of spare plan --failures take the same values
    assert KNOBS["failures_format"].choices == tuple(FORMATS)
    assert KNOBS["failures_time_unit"].choices == tuple(TIME_UNITS_S)
    assert set(KNOBS["failures_law"].choices) == set(DISTS)  # the default (weibull) first
    assert KNOBS["failures_method"].choices == tuple(METHODS)
    assert KNOBS["failures_placement"].choices == tuple(PLACEMENTS)


# ------------------------------------------------------------------------------ spare plan --failures

def test_plan_failures_text_recommends_r_and_c(small_log):
    p = run("plan", *SMALL, "--failures", str(small_log), "--failures-time-unit", "h",
            "--failures-gpus-per-node", "8", *FAST)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert f"failures from the log '{small_log}': its group failures on this cluster give m = " in out
    assert (f"Simulation (2 trials x 150 steps per run [given: 150 steps], failures from the log "
            f"'{small_log}' (block-bootstrap)") in out
    assert "the same synthesized failures per trial for every candidate" in out
    rows = [x.split() for x in out.splitlines() if x.strip().startswith(("SPARe+CKPT ", "Rep+CKPT "))]
    assert [r[:4] for r in rows[2:4]] == [["SPARe+CKPT", "r", "3", rows[2][3]],
                                          ["Rep+CKPT", "r", "2", rows[3][3]]]  # the simulated r
    assert "SPARe+CKPT: simulated r = 3" in out and "Rep+CKPT: simulated r = 2" in out
    assert "Best (simulated): " in out and out.rstrip().splitlines()[-1].startswith("Verdict: ")
    assert "the log's nodes hold" not in out  # --failures-gpus-per-node given: no assumption


def test_plan_failures_json_fitted_random_and_model_only(small_log):
    p = run("plan", *SMALL, "--failures", str(small_log), "--failures-time-unit", "h",
            "--gpus-per-server", "4", "--failures-method", "fitted", "--failures-law", "exponential",
            "--failures-placement", "random", *FAST, "--json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    assert d["failures"] == {"source": "trace", "name": str(small_log), "method": "fitted",
                             "law": "exponential", "placement": "random", "gpus_per_server": 4,
                             "tolerance_s": 1.0, "checkpoint_rule": "closed-form", "label": "csv"}
    assert d["trials"] == 2 and d["steps"] == 150 and not d["crn"]
    assert set(d["choices"]) == {"spare", "rep"} and d["best"]["method"] in ("spare", "rep")
    assert d["choices"]["spare"]["r"] == 3 and d["cluster"]["model_system_mtbf_s"] > 0
    assert all(pt["trials"] == 2 for pt in d["points"])
    # without --simulate: the fast model only, at the log's m, as in every mode (the trace
    # branch used to simulate 5 trials by default), with the log's assumed GPUs per node
    q = run("plan", *SMALL, "--failures", str(small_log), "--failures-time-unit", "h")
    assert q.returncode == 0, q.stderr
    assert q.stdout.rstrip().splitlines()[-1].startswith("(model only: --simulate N_TRIALS")
    assert "the log's nodes hold 8 (the synthesizer's default) GPUs each" in q.stdout
    assert "Simulation (" not in q.stdout


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        pytest.param(("--failures", "{dir}/missing.csv"),
                     "--failures '{dir}/missing.csv': path does not exist"),
        pytest.param(("--failures", "{bad}"), "--failures '{bad}': row 3, column 'start'"),
        (("--failures-format", "csv"), "--failures-format only applies with --failures FILE"),
        (("--failures-dist", "gamma"), "unrecognized arguments: --failures-dist"),  # renamed
        pytest.param(("--failures", "{f}", "--system-mtbf-min", "5"),
                     "--system-mtbf-min does not apply with --failures"),
        pytest.param(("--failures", "{f}", "--weibull-shape", "2"),
                     "--weibull-shape does not apply with --failures (the log replaces the "
                     "Weibull model)"),
        pytest.param(("--failures", "{f}", "--domain-fault-share", "0.2"),
                     "--domain-fault-share does not apply"),
        pytest.param(("--failures", "{f}", "--layout", "domain-aware"),
                     "--layout must be ruler or consecutive"),
        pytest.param(("--failures", "{f}", "--rep-placement", "strided", "--simulate", "2"),
                     "--rep-placement must be consecutive"),
        pytest.param(("--failures", "{f}", "--simulate", "2", "--backend", "dask"),
                     "--backend dask does not apply with --failures"),
        pytest.param(("--failures", "{f}", "--failures-law", "gamma"),
                     "--failures-law only applies with --failures-method fitted"),
        pytest.param(("--failures", "{f}", "--failures-placement", "rack"),
                     "--failures-placement"),
        pytest.param(("--failures", "{f}", "--failures-time-unit", "h", "--failures-checkpoint",
                      "paper", "--simulate", "2"),
                     "--failures-checkpoint='paper' needs N in (200, 600, 1000) (the paper's "
                     "table), got 20"),
        pytest.param(("--failures", "{f}", "--failures-time-unit", "h", "--spare-r", "9",
                      "--simulate", "2"),
                     "--spare-r must be"),
    ],
)
def test_plan_failures_bad_input_is_one_line(tmp_path, small_log, args, expect):
    bad = tmp_path / "bad.csv"
    bad.write_text("node,start,end\nn1,10,20\nn2,abc,30\n")
    sub = {"f": str(small_log), "bad": str(bad), "dir": str(tmp_path)}
    line = _one_line_error(run("plan", *SMALL, *(a.format(**sub) for a in args)))
    assert expect.format(**sub) in line, line


# ------------------------------------------------------------------------------ README examples


@pytest.mark.slow  # reruns the README's full-size example (pytest -m slow)
def test_readme_trace_and_domain_examples_are_what_the_commands_print():
    """The README's `spare trace`, `spare plan --failures` and failure-domain examples are real
    output: rerunning each command prints the same lines (wall time aside)."""
    import re
    from pathlib import Path

    from spare_lib.failures import data_path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = [b for b in re.findall(r"```console\n\$ spare ([^\n]*)\n(.*?)```", readme, re.S)
              if b[0].startswith("trace ") or "--failures" in b[0] or "--domain-size" in b[0]]
    assert len(blocks) >= 3, [b[0] for b in blocks]
    if any("stepfun" in b[0] for b in blocks):
        try:
            data_path("stepfun-infinitehbd", download=False)
        except FileNotFoundError:
            pytest.skip("StepFun dataset not on this machine")

    def norm(text: str) -> list[str]:
        text = re.sub(r"; \d+ s\):", "; <t> s):", text)
        return [line.rstrip() for line in text.strip().splitlines()]

    for cmd, shown in blocks:
        extra = ["--workers", "2"] if cmd.startswith("plan ") else []
        p = run(*cmd.split(), *extra)
        assert p.returncode == 0, (cmd, p.stderr)
        assert norm(p.stdout) == norm(shown), cmd
