"""Failure mixes: which share of the failure events hits one group, a domain or the whole job.

A :class:`FailureMix` is a list of :class:`FailureClass` es. Each class has a *share* of the
failure events (the shares add up to 1; the total rate stays 1/m), a *blast radius* and two
times:

``group``
    the event kills one data-parallel group (the paper's model: every failure);
``domain``
    it kills every live group of one failure domain (``ClusterConfig.domain_size`` consecutive
    groups, the existing domain model of :mod:`spare_lib.cluster.engine.clocks`);
``job``
    the whole job fails: a global restart from the latest checkpoint for every method, elastic
    ones included (a software bug every rank runs, a hung collective).

``detect_s``
    seconds every group waits after such a failure is noticed before anything else happens
    (heartbeat or collective timeout); None: the knob ``detect_s``.
``rejoin_s``
    seconds until a group killed by it rejoins, for the methods that let groups rejoin; None:
    the knob ``rejoin_s``.

Presets (:data:`PRESETS`, :func:`failure_mix`): ``paper`` (one group class, no detection of its
own: the paper's world, the default), ``llama3`` (Table 5 of Llama 3, arXiv 2407.21783, row by
row; the mapping and its argument are in ``docs/failure_mix.md``) and ``stepfun`` (single-server
against multi-server fault instants of the StepFun trace, read with
:func:`~spare_lib.failures.trace.load_trace`). Users write their own in YAML (:func:`load_mix`)::

    name: my-cluster
    classes:
      - {name: gpu, count: 300, radius: group, detect_s: 30, rejoin_s: 900}
      - {name: switch, count: 30, radius: domain, detect_s: 300}
      - {name: software, count: 60, radius: job, detect_s: 60}

(``share`` in [0, 1] adding up to 1, or ``count`` per class, normalised.) Errors name the file
and the line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["LLAMA3_TABLE5", "PRESETS", "RADII", "FailureClass", "FailureMix", "failure_mix",
           "load_mix", "paper_mix"]

#: Blast radii of a failure class.
RADII = ("group", "domain", "job")
_SHARE_TOL = 1e-9


@dataclass(frozen=True)
class FailureClass:
    """One class of failure events (see the module docstring).

    Attributes
    ----------
    name : str
    share : float
        Share of all failure events, in [0, 1].
    radius : {'group', 'domain', 'job'}
    detect_s : float or None
        Detection time, s (None: the knob ``detect_s``).
    rejoin_s : float or None
        Rejoin time, s, ``inf`` = never (None: the knob ``rejoin_s``).
    note : str
        Where the numbers come from, and their range where the data do not settle them.
    """

    name: str
    share: float
    radius: str
    detect_s: float | None = None
    rejoin_s: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if self.radius not in RADII:
            raise ValueError(f"radius of class {self.name!r} must be one of {RADII}, got "
                             f"{self.radius!r}")
        _check_number(f"share of class {self.name!r}", self.share, 0.0, 1.0)
        if self.detect_s is not None:
            _check_number(f"detect_s of class {self.name!r}", self.detect_s, 0.0, math.inf)
        if self.rejoin_s is not None:
            _check_number(f"rejoin_s of class {self.name!r}", self.rejoin_s, 0.0, math.inf,
                          lo_open=True, allow_inf=True)


def _check_number(what: str, v: Any, lo: float, hi: float, lo_open: bool = False,
                  allow_inf: bool = False) -> float:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)
    if ok and math.isinf(v):
        ok = allow_inf and v > 0
    elif ok:
        ok = (v > lo if lo_open else v >= lo) and v <= hi
    if not ok:
        left = "(" if lo_open else "["
        right = "]" if allow_inf or not math.isinf(hi) else ")"
        raise ValueError(f"{what} must be a number in {left}{lo:g}, {hi:g}{right}, got {v!r}")
    return float(v)


@dataclass(frozen=True)
class FailureMix:
    """Failure classes whose shares add up to 1 (see the module docstring).

    Examples
    --------
    >>> mix = failure_mix("llama3")
    >>> round(mix.share("job"), 3), round(mix.share("domain"), 3)
    (0.165, 0.084)
    """

    name: str
    classes: tuple[FailureClass, ...]
    source: str = ""

    def __post_init__(self) -> None:
        if not self.classes:
            raise ValueError(f"failure mix {self.name!r} must have at least one class")
        names = [c.name for c in self.classes]
        if len(set(names)) != len(names):
            raise ValueError(f"class names of failure mix {self.name!r} must be distinct, got "
                             f"{names}")
        total = sum(c.share for c in self.classes)
        if abs(total - 1.0) > _SHARE_TOL:
            raise ValueError(f"shares of failure mix {self.name!r} must add up to 1, got {total!r}")

    def share(self, radius: str) -> float:
        """Share of the failure events with this blast radius."""
        if radius not in RADII:
            raise ValueError(f"radius must be one of {RADII}, got {radius!r}")
        return float(sum(c.share for c in self.classes if c.radius == radius))

    def of_radius(self, radius: str) -> tuple[FailureClass, ...]:
        """The classes with this blast radius, in order."""
        return tuple(c for c in self.classes if c.radius == radius)

    @property
    def is_paper(self) -> bool:
        """Every failure is group-local with the knobs' detection and rejoin times (the paper)."""
        return all(c.radius == "group" and c.detect_s is None and c.rejoin_s is None
                   for c in self.classes)


def paper_mix() -> FailureMix:
    """The paper's world: every failure kills one group; detection and rejoin from the knobs."""
    return FailureMix("paper", (FailureClass("group", 1.0, "group",
                                             note="SPARe paper: every failure is one group's"),),
                      source="the SPARe paper, SEC. 3 (SPEC §3)")


# ------------------------------------------------------------------------------ llama3
_GPU = ("group", 30.0, 900.0, "a GPU fault surfaces at once (Xid/ECC error, process abort; "
        "detection 10 s-2 min); the node is swapped for a hot spare and the group reloads from a "
        "peer (rejoin 5-30 min)")
_HOST = ("group", 60.0, 1800.0, "a host fault is found by heartbeat (detection 30 s-5 min); "
         "replacement takes longer than a GPU swap (rejoin 10-60 min)")
#: Llama 3 (arXiv 2407.21783), Table 5: root causes of the 419 unexpected interruptions of a
#: 54-day snapshot on 16,384 H100 GPUs. Row: (cause, interruptions as published, radius,
#: detect_s, rejoin_s, argument and range). The counts are citations; the radius and the times
#: are this project's mapping (docs/failure_mix.md).
LLAMA3_TABLE5: tuple[tuple[str, int, str, float, float, str], ...] = (
    ("Faulty GPU", 148, *_GPU),
    ("GPU HBM3 Memory", 72, *_GPU),
    ("Software Bug", 54, "job", 60.0, 600.0, "every rank runs the same code: a bug that crashes "
     "one crashes the step for all (radius job; some are rank-local: group); a crash is seen at "
     "once, a hang waits for the watchdog (detection 10 s-10 min)"),
    ("Network Switch/Cable", 35, "domain", 300.0, 1800.0, "a leaf switch takes down the servers "
     "under it (radius domain; a single cable: group); the ranks behind it time out in NCCL "
     "(detection 1-10 min); reroute or replace (rejoin 10 min-2 h)"),
    ("Host Maintenance", 32, *_HOST),
    ("GPU SRAM Memory", 19, *_GPU),
    ("GPU System Processor", 17, *_GPU),
    ("NIC", 7, *_HOST),
    ("NCCL Watchdog Timeouts", 7, "job", 600.0, 600.0, "a collective hangs for every rank; the "
     "watchdog kills the job after its timeout (PyTorch's default 10 min; detection 1-30 min)"),
    ("Silent Data Corruption", 6, "job", 600.0, 600.0, "corrupt gradients reach every replica: "
     "the job rolls back to a checkpoint (radius job); found by checks or loss spikes after "
     "minutes to hours (detection 0-1 h)"),
    ("GPU Thermal Interface + Sensor", 6, *_GPU),
    ("SSD", 3, *_HOST),
    ("Power Supply", 3, *_HOST),
    ("Server Chassis", 2, *_HOST),
    ("IO Expansion Board", 2, *_HOST),
    ("Dependency", 2, "job", 300.0, 600.0, "a shared service (storage, scheduler) fails for every "
     "rank (radius job; detection 1-10 min)"),
    ("CPU", 2, *_HOST),
    ("System Memory", 2, *_HOST),
)


def _llama3() -> FailureMix:
    total = sum(row[1] for row in LLAMA3_TABLE5)
    classes = tuple(FailureClass(name, count / total, radius, det, rej, note)
                    for name, count, radius, det, rej, note in LLAMA3_TABLE5)
    return FailureMix("llama3", _normalised(classes),
                      source=f"Llama 3 (arXiv 2407.21783) Table 5: {total} unexpected "
                             f"interruptions on 16,384 H100 GPUs in 54 days")


def _normalised(classes: tuple[FailureClass, ...]) -> tuple[FailureClass, ...]:
    """The last class takes the rounding rest, so the shares add up to 1 exactly enough."""
    rest = 1.0 - sum(c.share for c in classes[:-1])
    last = classes[-1]
    return (*classes[:-1], FailureClass(last.name, rest, last.radius, last.detect_s,
                                        last.rejoin_s, last.note))


# ------------------------------------------------------------------------------ stepfun
def _stepfun(tolerance_s: float = 1.0) -> FailureMix:
    from spare_lib.failures.describe import fault_instants
    from spare_lib.failures.trace import load_trace

    inst = fault_instants(load_trace("stepfun-infinitehbd"), tolerance_s)
    n_multi = int((inst["n_distinct_nodes"] > 1).sum())
    n = len(inst)
    single = FailureClass("single-server", (n - n_multi) / n, "group",
                          note=f"{n - n_multi} of {n} fault instants hit one server")
    multi = FailureClass("multi-server", n_multi / n, "domain",
                         note=f"{n_multi} of {n} fault instants hit 2-8 servers at once (within "
                              f"{tolerance_s:g} s): a domain event")
    return FailureMix("stepfun", _normalised((single, multi)),
                      source="StepFun InfiniteHBD trace (arXiv 2502.03885), fault instants")


#: Preset name -> what it is.
PRESETS = {
    "paper": "every failure kills one group, no detection time of its own (the default)",
    "llama3": "Llama 3's Table 5 (arXiv 2407.21783), each row mapped to a radius, a detection "
              "and a rejoin time (docs/failure_mix.md)",
    "stepfun": "the StepFun trace: single-server instants are group events, multi-server "
               "instants domain events",
}


@lru_cache(maxsize=32)
def _cached(spec: str, mtime: float) -> FailureMix:
    if spec == "paper":
        return paper_mix()
    if spec == "llama3":
        return _llama3()
    if spec == "stepfun":
        return _stepfun()
    return load_mix(spec)


def failure_mix(spec: str | FailureMix) -> FailureMix:
    """The mix a ``failure_mix`` knob names: a preset of :data:`PRESETS` or a YAML file.

    Raises
    ------
    ValueError
        Neither a preset nor a readable YAML file, or an invalid file (file and line named).
    """
    if isinstance(spec, FailureMix):
        return spec
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"failure_mix must be one of {', '.join(PRESETS)} or a YAML file, got "
                         f"{spec!r}")
    if spec in PRESETS:
        return _cached(spec, 0.0)
    p = Path(spec).expanduser()
    if not p.is_file():
        raise ValueError(f"failure_mix must be one of {', '.join(PRESETS)} or a YAML file, got "
                         f"{spec!r} (no such file)")
    return _cached(str(p), p.stat().st_mtime)


# ------------------------------------------------------------------------------ YAML
_KEYS = {"name", "share", "count", "radius", "detect_s", "rejoin_s", "note"}


def _scalar(node: Any, file: str, what: str) -> Any:
    import yaml

    if not isinstance(node, yaml.ScalarNode):
        raise _err(file, node, f"{what} must be a single value")
    return yaml.safe_load(yaml.serialize(node))


def _err(file: str, node: Any, msg: str) -> ValueError:
    return ValueError(f"{file}:{node.start_mark.line + 1}: {msg}")


def _class_from(node: Any, file: str, i: int) -> tuple[dict[str, Any], Any]:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise _err(file, node, f"class {i + 1} must be a mapping of {', '.join(sorted(_KEYS))}")
    out: dict[str, Any] = {}
    for k, v in node.value:
        key = _scalar(k, file, "a key")
        if key not in _KEYS:
            raise _err(file, k, f"unknown key {key!r} in class {i + 1}; allowed: "
                                f"{', '.join(sorted(_KEYS))}")
        out[key] = _scalar(v, file, f"{key} of class {i + 1}")
        if isinstance(out[key], str) and key in ("detect_s", "rejoin_s", "share", "count") and \
                out[key].strip().lower() in (".inf", "inf"):
            out[key] = math.inf
    for need in ("name", "radius"):
        if need not in out:
            raise _err(file, node, f"class {i + 1} must set {need!r}")
    if ("share" in out) == ("count" in out):
        raise _err(file, node, f"class {i + 1} must set exactly one of 'share' and 'count'")
    return out, node


def load_mix(path: str | Path) -> FailureMix:
    """Read a failure mix from a YAML file (format: the module docstring).

    Raises
    ------
    ValueError
        ``<file>:<line>: <what is wrong>`` for a YAML syntax error, an unknown key, a missing
        field, a value out of range, counts mixed with shares or shares that do not add up to 1.
    """
    import yaml

    file = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ValueError(f"failure mix file {file!r} cannot be read: {exc}") from None
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise ValueError(f"{file}:{line}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(root, yaml.MappingNode):
        raise ValueError(f"{file}:1: a failure mix must be a mapping with 'classes' (and 'name')")
    top = {_scalar(k, file, "a key"): (k, v) for k, v in root.value}
    for key, (k, _v) in top.items():
        if key not in ("name", "classes", "source"):
            raise _err(file, k, f"unknown key {key!r}; allowed: name, classes, source")
    if "classes" not in top:
        raise _err(file, root, "a failure mix must have 'classes' (a list)")
    cnode = top["classes"][1]
    if not isinstance(cnode, yaml.SequenceNode) or not cnode.value:
        raise _err(file, cnode, "'classes' must be a non-empty list")
    rows = [_class_from(n, file, i) for i, n in enumerate(cnode.value)]
    counts = ["count" in r for r, _n in rows]
    if any(counts) and not all(counts):
        raise _err(file, cnode, "either every class sets 'count' or every class sets 'share'")
    total = sum(float(r["count"]) for r, _n in rows) if all(counts) else 1.0
    classes = []
    for r, n in rows:
        raw = r["count"] if "count" in r else r["share"]
        try:
            if all(counts):
                _check_number(f"count of class {r['name']!r}", raw, 0.0, math.inf)
            classes.append(FailureClass(
                str(r["name"]), float(raw) / total if all(counts) else raw, r["radius"],
                r.get("detect_s"), r.get("rejoin_s"), str(r.get("note", ""))))
        except (ValueError, TypeError) as exc:
            raise _err(file, n, str(exc)) from None
    name = _scalar(top["name"][1], file, "name") if "name" in top else Path(file).stem
    source = _scalar(top["source"][1], file, "source") if "source" in top else file
    try:
        return FailureMix(str(name), _normalised(tuple(classes)) if all(counts) else
                          tuple(classes), source=str(source))
    except ValueError as exc:
        raise _err(file, cnode, str(exc)) from None
