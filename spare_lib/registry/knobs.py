"""The one table of knobs: name, unit, default, allowed range, help, who reads it.

Every knob of a simulated run (the fields of :class:`spare_lib.cluster.ClusterConfig`), of the
cluster description the planner derives a run from (GPUs, group size, per-GPU MTBF, model
bytes, all-reduce), of SPARe's and Rep's layouts, of the planner's search and evaluation, and of
the failure logs is one :class:`Knob` of :data:`KNOBS`. From this table come

* the validation of ``ClusterConfig`` and of the planner's request (:meth:`Knob.check`: a
  ``ValueError`` naming the knob, the allowed range and the value);
* the command line's flags (``spare_lib.cli.knobs``): ``--name-with-dashes``, the type, the
  range, the help with unit and default; a CLI may accept another unit (``--restart-min``) only
  where the knob declares that :class:`Alias`;
* the keys a ``spare sweep`` point may set, and the generated table ``docs/knobs.md``
  (:func:`knobs_markdown`; a test keeps it current).

So a knob has one name, one unit (every duration in seconds, with an ``_s`` suffix) and one
default, the same in the library, the CLI and the docs.

Example
-------
>>> knob("restart_s").default, knob("restart_s").unit, knob("restart_s").aliases[0].flag
(3600.0, 's', '--restart-min')
>>> check_knob("domain_fault_share", 1.5)
Traceback (most recent call last):
...
ValueError: domain_fault_share must be in [0, 1], got 1.5
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

#: Groups of knobs, in the order of ``docs/knobs.md`` and of the CLI's help.
GROUPS = {
    "job": "the training job of spare design (model, tokens, fleet)",
    "cluster": "cluster hardware (the planner derives a run's T_a, m and T_s from it)",
    "run": "one simulated run (ClusterConfig)",
    "failures": "failure law and failure domains",
    "strategy": "what the recovery strategies pay and do",
    "layout": "SPARe's and Rep's layouts",
    "search": "the planner's candidates",
    "evaluation": "how the planner evaluates the candidates",
    "trace": "real failure logs (--failures FILE)",
}

KINDS = ("int", "float", "choice", "bool", "str")

#: ``Knob.methods`` of a knob every method reads.
ALL = ("all",)


@dataclass(frozen=True)
class Alias:
    """Another unit a CLI flag may take a knob in: the knob's value is ``value × factor``."""

    flag: str
    factor: float
    unit: str


@dataclass(frozen=True)
class Knob:
    """One knob.

    Attributes
    ----------
    name : str
        The one name: library parameter or field, JSON key, sweep key; the CLI flag is
        ``--name-with-dashes`` unless ``flag`` says otherwise.
    unit : str
        's', 'steps', 'B', 'B/s', 'GPUs', 'groups', '1' (dimensionless) or '' (not a quantity).
    default : object
        The default everywhere (None: derived, and ``help`` says from what).
    help : str
        One line.
    group : str
        Key of :data:`GROUPS`.
    kind : str
        One of :data:`KINDS`.
    lo, hi : float or None
        Allowed range (None: unbounded); ``lo_open``/``hi_open`` exclude the end.
    allow_inf, allow_none : bool
        ``inf`` (e.g. "never") or None (derived) are accepted besides the range.
    choices : tuple of str
        The allowed values of a 'choice' knob.
    methods : tuple of str
        The methods that read it (:data:`ALL`: every method).
    aliases : tuple of Alias
        Other units the CLI accepts.
    flag : str or None
        CLI flag, if not ``--`` + name with dashes.
    old_flags : tuple of str
        Earlier spellings of the flag that a command still takes, in the knob's own unit, for
        old scripts (the README's renames table). Each may only be one that no other knob of
        that command takes (``--steps`` of ``spare plan``, which reads no ``steps``).
    """

    name: str
    unit: str
    default: Any
    help: str
    group: str
    kind: str = "float"
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    allow_inf: bool = False
    allow_none: bool = False
    choices: tuple[str, ...] = ()
    methods: tuple[str, ...] = ALL
    aliases: tuple[Alias, ...] = ()
    flag: str | None = None
    old_flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.group not in GROUPS:
            raise ValueError(f"group must be one of {tuple(GROUPS)}, got {self.group!r}")
        if self.default is not None:
            self.check(self.default)

    @property
    def cli_flag(self) -> str:
        """The CLI flag of the knob."""
        return self.flag or "--" + self.name.replace("_", "-")

    def range_text(self) -> str:
        """The allowed values, e.g. '[0, 1]', '(0, inf]', 'one of weibull, exponential'."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "str":
            return "text"
        lo = "-inf" if self.lo is None else _num(self.lo)
        hi = "inf" if self.hi is None else _num(self.hi)
        left = "(" if self.lo_open or self.lo is None else "["
        right = "]" if (self.hi is None and self.allow_inf) or (self.hi is not None
                                                                and not self.hi_open) else ")"
        text = f"{left}{lo}, {hi}{right}"
        if self.kind == "int":
            text = "integer in " + text
        if self.allow_none:
            text += " or None"
        return text

    def _fail(self, value: Any, name: str | None) -> None:
        must = self.range_text()
        if self.kind == "float":
            must = "in " + must
        elif self.kind == "int":
            must = "an " + must
        raise ValueError(f"{name or self.name} must be {must}, got {value!r}")

    def check(self, value: Any, name: str | None = None) -> Any:
        """``value`` validated (and normalised: int or float); ValueError naming the knob.

        ``name`` replaces the knob's name in the message (e.g. a CLI flag).
        """
        if value is None:
            if self.allow_none:
                return None
            self._fail(value, name)
        if self.kind == "bool":
            if not isinstance(value, bool):
                self._fail(value, name)
            return value
        if self.kind == "choice":
            if value not in self.choices:
                self._fail(value, name)
            return value
        if self.kind == "str":
            if not isinstance(value, str):
                self._fail(value, name)
            return value
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            self._fail(value, name)
        if self.kind == "int":
            if not isinstance(value, numbers.Integral):
                if not (isinstance(value, float) and value.is_integer()):
                    self._fail(value, name)
            v: float = int(value)
        else:
            v = float(value)
            if math.isnan(v):
                self._fail(value, name)
            if math.isinf(v):
                if v > 0 and self.allow_inf:
                    return v
                self._fail(value, name)
        if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
            self._fail(value, name)
        if self.hi is not None and (v > self.hi or (self.hi_open and v == self.hi)):
            self._fail(value, name)
        return v


def _num(x: float) -> str:
    """A bound or default for people: 600000, 0.05, 1e9, 1.8e8."""
    if float(x).is_integer() and abs(x) < 1e7:
        return str(int(x))
    return f"{x:.4g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def _k(name: str, unit: str, default: Any, help: str, group: str, **kw: Any) -> Knob:
    return Knob(name, unit, default, help, group, **kw)


_NONNEG = {"lo": 0.0}
_REJOINING = ("spare+repair", "elastic-drop", "elastic-rebalance", "spare-b+repair",
              "spare-b+drop")
_LAYOUT = ("spare", "spare+repair", "spare-b", "spare-b+repair", "spare-b+drop")
_POS = {"lo": 0.0, "lo_open": True}

_TABLE: tuple[Knob, ...] = (
    # ---------------------------------------------------------------- the job (spare design)
    _k("params", "", None, "P, parameters of the model (e.g. 405e9)", "job", lo=1.0,
       hi=1e16),
    _k("tokens", "", None, "T, training tokens (e.g. 15.6e12)", "job", lo=1.0, hi=1e18),
    _k("gpu", "", "h100", "GPU type: its peak dense BF16 FLOP/s and memory (docs/design.md)",
       "job", kind="choice", choices=("h100", "h200", "b200", "mi300x")),
    _k("mfu", "1", 0.40, "model-FLOPs utilisation, end to end (Llama 3 reports 0.38-0.43 on "
       "H100)", "job", lo=0.0, hi=1.0, lo_open=True),
    _k("tokens_per_step", "", 16e6, "B, the global batch in tokens", "job", lo=1.0, hi=1e15),
    _k("seq_tokens", "", 8192, "tokens of one sequence: every group gets at least one per step",
       "job", kind="int", lo=1, hi=1e9),
    _k("memory_headroom", "1", 0.8, "share of a GPU's memory the training state (16 bytes per "
       "parameter) may take; the rest is for activations", "job", lo=0.0, hi=1.0, lo_open=True),
    _k("storage_bw_bytes_s", "B/s", 3.4e11, "aggregate checkpoint write bandwidth (T_s = 14 "
       "bytes per parameter over it)", "job", lo=0.0, lo_open=True),
    _k("exposed_allreduce", "1", 0.0, "share of the all-reduce not hidden behind compute (0: "
       "the MFU already includes it; 1: the paper's step = compute + T_a)", "job", lo=0.0,
       hi=1.0),
    _k("group_sizes", "", None, "group sizes to try, e.g. 64,128,512 (default: powers of two "
       "from the smallest that holds the training state)", "job", kind="str", allow_none=True),
    _k("top", "", 10, "plans to print", "job", kind="int", lo=1, hi=10_000),
    # ---------------------------------------------------------------- cluster hardware
    _k("gpus", "GPUs", 600_000, "GPUs of the cluster", "cluster", kind="int", lo=2, hi=1e12),
    _k("gpus_per_group", "GPUs", 1000, "GPUs per data-parallel group; N = floor(gpus / "
       "gpus_per_group), leftover GPUs stay idle", "cluster", kind="int", lo=1, hi=1e12),
    _k("gpu_mtbf_s", "s", 600_000 * 300.0, "MTBF of one GPU; m = gpu_mtbf_s / working GPUs "
       "(1.8e8 s = 50,000 h: m = 5 min at 600k GPUs)", "cluster", **_POS,
       aliases=(Alias("--gpu-mtbf-hours", 3600.0, "h"),)),
    _k("model_bytes", "B", 2e13, "bytes of the gradient all-reduced per step and of the "
       "checkpoint (2e13: the paper's 10T parameters in FP16)", "cluster", **_POS),
    _k("allreduce", "", "ring", "how T_a is derived: an alpha-beta all-reduce model among the N "
       "groups (docs/scale.md) or the paper's preset N/100 s", "cluster", kind="choice",
       choices=("preset", "ring", "rabenseifner", "tree")),
    _k("allreduce_bw_bytes_s", "B/s", 6.67e9, "all-reduce bandwidth per GPU of the alpha-beta "
       "model (calibrated on the paper's T_a)", "cluster", **_POS),
    _k("allreduce_latency_s", "s", 1.0e-5, "latency alpha of one all-reduce message step",
       "cluster", **_NONNEG),
    _k("checkpoint_bw_bytes_s", "B/s", 3.4e11, "aggregate checkpoint write bandwidth; T_s = "
       "model_bytes / checkpoint_bw_bytes_s unless checkpoint_s is given", "cluster", **_POS),
    _k("step_s", "s", None, "failure-free step time = compute per stack + T_a (default: 64 s + "
       "T_a)", "cluster", **_POS, allow_none=True),
    # ---------------------------------------------------------------- one run
    _k("steps", "steps", 10_000, "committed training steps of a run", "run", kind="int", lo=1,
       hi=1e9),
    _k("compute_per_stack_s", "s", 64.0, "compute time of one shard (one stack entry) on one "
       "group (2.56e16 flop at 400 Tflop/s)", "run", **_POS),
    _k("jitter_sigma", "1", 0.05, "standard deviation of the multiplicative compute jitter "
       "N(1, sigma^2); 0: none", "run", lo=0.0, hi=1.0),
    _k("jitter_min", "1", 0.1, "lower clip of the jitter factor", "run", lo=0.0, hi=1.0,
       lo_open=True),
    _k("allreduce_s", "s", 6.0, "all-reduce time T_a of a step (the paper's 6 s at N = 600; the "
       "planner derives it from the cluster)", "run", **_NONNEG),
    _k("allreduce_fail_factor", "1", 0.5, "factor on T_a in an attempt in which a failure is "
       "noticed (the paper's cut-short all-reduce)", "run", lo=0.0, hi=1.0),
    _k("restart_s", "s", 3600.0, "global restart time T_r: the failure-free window every group "
       "must get through", "run", **_NONNEG, aliases=(Alias("--restart-min", 60.0, "min"),)),
    _k("checkpoint_s", "s", 2e13 / 3.4e11, "checkpoint write time T_s (2e13 B at 340 GB/s)",
       "run", **_NONNEG),
    _k("jitter_model", "", "paper", "how compute jitter is drawn: paper (per 64-s stack; Rep one "
       "draw for its r*64 s; elastic-rebalance per micro-batch with sigma*sqrt(b)), unit (every "
       "64-s unit of work its own draw, Rep included), step (one factor per group per attempt), "
       "straggler (unit, plus a persistent slow share of the groups)", "run", kind="choice",
       choices=("paper", "unit", "step", "straggler")),
    _k("straggler_share", "1", 0.01, "jitter_model straggler: share p of the groups that are "
       "slow, drawn anew at the start and at every global restart", "run", lo=0.0, hi=1.0),
    _k("straggler_slowdown", "1", 0.2, "jitter_model straggler: a slow group's compute takes "
       "(1 + s) times as long", "run", lo=0.0, hi=100.0),
    _k("allreduce_rule", "", "paper", "the all-reduce of an attempt in which a failure is "
       "noticed: paper (cut short at allreduce_fail_factor*T_a, and a commit counts it) or abort "
       "(aborted at allreduce_fail_factor*T_a; a commit then pays a full T_a as well)", "run",
       kind="choice", choices=("paper", "abort")),
    _k("n_gpus", "GPUs", 600_000, "GPUs of the run's cluster (informational: M = n_gpus / N)",
       "run", kind="int", lo=1, hi=1e12),
    # ---------------------------------------------------------------- failures
    _k("failure_dist", "", "weibull", "law of one group's time between failures (same mean "
       "N*m)", "failures", kind="choice", choices=("weibull", "exponential")),
    _k("weibull_shape", "1", 0.78, "Weibull shape k of the per-group failure law (ignored for "
       "exponential); real logs fit 0.3-1.5", "failures", lo=0.05, hi=20.0),
    _k("system_mtbf_s", "s", 300.0, "system MTBF m of the whole cluster (the per-group mean is "
       "N*m; the planner derives m from gpu_mtbf_s unless given)", "failures", lo=1e-3, hi=1e12,
       aliases=(Alias("--system-mtbf-min", 60.0, "min"),)),
    _k("domain_size", "groups", 1, "groups per failure domain (group g in domain g // D); 1: "
       "no domains", "failures", kind="int", lo=1, hi=1e12),
    _k("domain_fault_share", "1", 0.0, "share q of failure events that kill a whole domain "
       "(same total rate 1/m)", "failures", lo=0.0, hi=1.0),
    _k("failure_mix", "", "paper", "the classes of failures, each with a share, a blast radius "
       "(group, domain, job), a detection and a rejoin time: paper (every failure one group's), "
       "llama3 (Llama 3's Table 5), stepfun (the StepFun trace) or a YAML file "
       "(docs/failure_mix.md)", "failures", kind="str"),
    _k("detect_s", "s", 0.0, "detection time: every group waits it after a failure is noticed "
       "(for the classes of the failure mix that set none of their own)", "failures", **_NONNEG),
    # ---------------------------------------------------------------- strategies
    _k("stall_s", "s", 0.1, "stall per reconfiguration, paid by every method that continues "
       "past a failure (the paper's 0.1 s shrink; FT-HSDP measured minutes)", "strategy",
       **_NONNEG),
    _k("rejoin_s", "s", 600.0, "time until a failed group rejoins (replacement, restart, "
       "catch-up); inf: never", "strategy", lo=0.0, lo_open=True, allow_inf=True,
       methods=_REJOINING, aliases=(Alias("--rejoin-min", 60.0, "min"),)),
    _k("rejoin_clock", "", "notice", "when a failed group's rejoin_s starts: notice (at the "
       "poll that notices the failure, the model's) or failure (at the failure plus its "
       "detection time, as a coordinator that reads the crash or a missed heartbeat)",
       "strategy", kind="choice", choices=("notice", "failure"), methods=_REJOINING),
    _k("rejoin_stall_s", "s", None, "stall of one batch of rejoining groups (default: stall_s, a "
       "blocking reconfiguration; 0: non-blocking catch-up as in FT-HSDP)", "strategy",
       **_NONNEG, allow_none=True, methods=_REJOINING),
    _k("min_live", "1", 0.0, "quorum of elastic-drop as a share of N: when fewer groups are "
       "live after a failure, the job restarts from its checkpoint (0: train down to one group; "
       "1: any failure restarts, as CKPT-only); of SPARe-b+drop: the share of the N shard types "
       "that must keep a live holder (1: a wipe-out restarts, as SPARe-b+repair)", "strategy",
       lo=0.0, hi=1.0, methods=("elastic-drop", "spare-b+drop")),
    _k("microbatches", "1", 8, "micro-batches per shard b of elastic-rebalance and SPARe-b "
       "(SPARe-b at b = 1 is SPARe's whole stacks)", "strategy", kind="int", lo=1, hi=4096,
       methods=("elastic-rebalance", "spare-b", "spare-b+repair", "spare-b+drop")),
    _k("fetch_s", "s", 0.0, "elastic-rebalance's data fetch before the first attempt after its "
       "assignment changed (0: shared storage and prefetch)", "strategy", **_NONNEG,
       methods=("elastic-rebalance",)),
    _k("mem_checkpoint_s", "s", 0.0, "in-memory checkpoint tier: write time", "strategy",
       **_NONNEG),
    _k("mem_restart_s", "s", 0.0, "in-memory checkpoint tier: restart window", "strategy",
       **_NONNEG),
    _k("mem_ideal", "", False, "the in-memory copy is never lost (an upper bound)", "strategy",
       kind="bool"),
    # ---------------------------------------------------------------- layouts
    _k("layout", "", "ruler", "SPARe's stacking layout: Golomb ruler, domain-aware (every "
       "type's r holders in r distinct failure domains) or consecutive", "layout",
       kind="choice", choices=("ruler", "domain-aware", "consecutive"), methods=_LAYOUT),
    _k("rep_placement", "", "consecutive", "Rep's replica sets: r consecutive groups or groups "
       "ceil(N/r) apart (across failure domains)", "layout", kind="choice",
       choices=("consecutive", "strided"), methods=("rep",)),
    _k("exact_patch", "", False, "after a reorder, recompute every missing stack (default: at "
       "most one per survivor per retry, as the paper's simulator)", "layout", kind="bool",
       methods=("spare", "spare+repair")),
    # ---------------------------------------------------------------- the planner's search
    _k("strategies", "", "paper", "the methods to plan for: 'paper' (SPARe+CKPT, Rep+CKPT, "
       "CKPT-only), 'all', or a comma list of method names", "search", kind="str"),
    _k("spare_r", "", None, "SPARe's candidates r, e.g. 4..12 or 3,5,8 ('none': skip SPARe; "
       "default: the model's r* +- r_window)", "search", kind="str", allow_none=True,
       methods=_LAYOUT),
    _k("rep_r", "", None, "Rep's candidates r, e.g. 2..5 ('none': skip Rep; default 2..5 "
       "clipped to N, plus the model's r)", "search", kind="str", allow_none=True,
       methods=("rep",)),
    _k("r_window", "", 3, "half-width of the default r window around the model's r* (SPARe, "
       "SPARe+repair)", "search", kind="int", lo=0, hi=64, methods=_LAYOUT),
    _k("checkpoint_factors", "", "0.5,0.75,1.5,2", "multipliers of the model's checkpoint "
       "interval also simulated at each method's best r ('none': no search)", "search",
       kind="str"),
    _k("c_points", "", 64, "spare design: checkpoint intervals per (group size, method, r), "
       "geometric in [1, steps]", "search", kind="int", lo=2, hi=100_000),
    _k("chain_states", "", 64, "spare design: states of the chain over the checkpoint lattice "
       "in the scan (512: the exact model; fewer is faster and coarser for small C, "
       "benchmarks/bench_design.py prints the gap)", "search", kind="int", lo=8, hi=100_000),
    _k("refine", "", 5, "spare design: plans of the ranking's top re-optimised with the exact "
       "model after the scan", "search", kind="int", lo=0, hi=10_000),
    # ---------------------------------------------------------------- the planner's evaluation
    _k("model", "", "predict", "fast model behind the plan: predict (the time-to-train model "
       "that agrees with the simulator), finite (closed forms, Eqs. 2, 5, 7 with finite-N mu and "
       "S-bar) or paper (the paper's closed forms)", "evaluation", kind="choice",
       choices=("predict", "finite", "paper")),
    _k("simulate", "", None, "also simulate every candidate this many times with common random "
       "numbers (>= 2 for intervals; default: the model only)", "evaluation", kind="int", lo=1,
       hi=10_000, allow_none=True, flag="--simulate"),
    _k("max_trials", "", None, "sequential trials: add trials (doubling, common random "
       "numbers) to the methods' choices until the leading pair's paired interval excludes 0, "
       "up to this many (default: the --simulate trials only)", "evaluation", kind="int", lo=2,
       hi=10_000, allow_none=True),
    _k("plan_steps", "steps", "auto", "committed steps per simulated run: an integer, or 'auto' "
       "(at least 10,000, more until the near-best candidates expect >= min_restarts restarts)",
       "evaluation", kind="str", old_flags=("--steps",)),
    _k("min_restarts", "", 5, "flag candidates with fewer global restarts per run on average",
       "evaluation", kind="int", lo=0, hi=10_000),
    _k("run_cap_t0", "1", 50.0, "stop a simulated run of the planner at this many T0 (a method "
       "that never trains, e.g. CKPT-only at 600k GPUs, would run forever)", "evaluation",
       lo=1.0, hi=1e6),
    _k("common_failures", "", True, "trial t of every candidate sees the same failure gaps per "
       "group (common random numbers); off: independent streams", "evaluation", kind="bool"),
    _k("seed", "", 0, "root seed", "evaluation", kind="int", lo=0, hi=2**63 - 1),
    _k("max_wall_t0", "1", 1000.0, "stop one simulated run (spare simulate) at this many T0",
       "run", lo=1e-6, hi=1e9),
    # ---------------------------------------------------------------- real failure logs
    _k("failures", "", None, "plan from a fault log: a CSV node,start,end[,cause,domain], "
       "StepFun fault_trace.json, Titan gc_full.csv, LANL .csv.xz, a dataset folder, or a "
       "dataset name (stepfun-infinitehbd, titan-gpu-life, lanl-cfdr)", "trace", kind="str",
       allow_none=True),
    _k("failures_format", "", None, "log format (default: from the file name; a .csv is the "
       "generic CSV)", "trace", kind="choice", choices=("stepfun", "titan", "lanl", "csv"),
       allow_none=True),
    _k("failures_time_unit", "", "s", "unit of the generic CSV's start/end times", "trace",
       kind="choice", choices=("s", "min", "h", "d")),
    _k("failures_system", "", None, "LANL only: keep this system (default: all systems)",
       "trace", kind="int", lo=0, hi=1e9, allow_none=True),
    _k("failures_gpus_per_node", "GPUs", None, "GPUs per node of the log (default: the "
       "dataset's; StepFun 8, Titan 1; LANL and CSV give none: the synthesis assumes 8)",
       "trace", kind="int", lo=1, hi=1e6, allow_none=True),
    _k("failures_n_nodes", "", None, "nodes observed, faultless ones included (default: the "
       "dataset's; CSV: the distinct nodes in the file)", "trace", kind="int", lo=1, hi=1e12,
       allow_none=True),
    _k("failures_window_s", "s", None, "observation window of the log (default: up to the last "
       "event)", "trace", lo=0.0, lo_open=True, allow_none=True),
    _k("failures_method", "", "block-bootstrap", "how group failures are synthesized from the "
       "log: block-bootstrap (tiles of the real log, simultaneous faults kept) or fitted "
       "(compound renewal process fitted to it)", "trace", kind="choice",
       choices=("block-bootstrap", "fitted")),
    _k("failures_placement", "", "contiguous", "groups on the servers: contiguous (a "
       "multi-server fault hits neighbouring groups) or random (group ids permuted per trial)",
       "trace", kind="choice", choices=("contiguous", "random")),
    _k("failures_law", "", "weibull", "law of the gaps with failures_method fitted", "trace",
       kind="choice", choices=("weibull", "exponential", "lognormal", "gamma")),
    _k("failures_tolerance_s", "s", 1.0, "faults within this many seconds are one instant",
       "trace", lo=0.0),
    _k("gpus_per_server", "GPUs", None, "GPUs per server of the planned cluster (default: the "
       "log's GPUs per node)", "trace", kind="int", lo=1, hi=1e6, allow_none=True),
    _k("failures_checkpoint", "", "closed-form", "checkpoint interval C0 of the r search with a "
       "log: the model's at the log's system MTBF, or the paper's table (N = 200, 600, 1000)",
       "trace", kind="choice", choices=("closed-form", "paper")),
    _k("failures_chunk_s", "s", None, "length of each synthesized block of failures (default: "
       "the log's window)", "trace", lo=0.0, lo_open=True, allow_none=True),
)

#: Every knob by name.
KNOBS: dict[str, Knob] = {k.name: k for k in _TABLE}


def knob(name: str) -> Knob:
    """The :class:`Knob` called ``name``, or ValueError naming the known knobs."""
    if name not in KNOBS:
        raise ValueError(f"knob must be one of {', '.join(KNOBS)}, got {name!r}")
    return KNOBS[name]


def check_knob(name: str, value: Any) -> Any:
    """``knob(name).check(value)``: the value validated, or ValueError naming the knob."""
    return knob(name).check(value)


def register(*new: Knob) -> None:
    """Add knobs (the planner's search and evaluation knobs live with the planner's request);
    a name may be registered once."""
    for k in new:
        if k.name in KNOBS and KNOBS[k.name] != k:
            raise ValueError(f"knob {k.name!r} is already registered")
        KNOBS[k.name] = k


def knob_default_text(k: Knob) -> str:
    """The default as people read it: '600000', '0.05', '1.8e8', 'derived', 'ring'."""
    return _fmt_default(k)


def _fmt_default(k: Knob) -> str:
    d = k.default
    if d is None:
        return "derived"
    if isinstance(d, (int, float)) and not isinstance(d, bool):
        return _num(d)
    return str(d)


def knobs_markdown() -> str:
    """The table of every knob for ``docs/knobs.md`` (generated; a test keeps the file current)."""
    lines = ["| knob | CLI flag (aliases) | unit | default | allowed | read by | meaning |",
             "|---|---|---|---|---|---|---|"]
    for group in GROUPS:
        for k in (k for k in KNOBS.values() if k.group == group):
            flags = f"`{k.cli_flag}`" + "".join(f", `{a.flag}` ({a.unit})" for a in k.aliases) \
                + "".join(f", `{f}` (old spelling)" for f in k.old_flags)
            who = "all" if k.methods == ALL else ", ".join(k.methods)
            lines.append(f"| `{k.name}` | {flags} | {k.unit or '-'} | {_fmt_default(k)} | "
                         f"{k.range_text()} | {who} | {k.help} |")
    return "\n".join(lines) + "\n"


__all__ = ["ALL", "GROUPS", "KINDS", "KNOBS", "Alias", "Knob", "check_knob", "knob",
           "knob_default_text", "knobs_markdown", "register"]
