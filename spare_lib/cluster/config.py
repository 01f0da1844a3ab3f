"""Cluster presets for the time-to-train simulator (SPEC §6): the paper's 600k-H100 cluster.

A :class:`ClusterConfig` holds everything the discrete-event simulator
(:func:`spare_lib.cluster.runs.simulate.simulate`) needs besides the method, N, r and the checkpoint
interval: step count, per-stack compute time and its jitter, all-reduce time T_a, restart time
T_r, the stall per reconfiguration, checkpoint write time T_s, the failure law and its domains,
and the knobs of the recovery strategies (rejoin time, micro-batches, data fetch, in-memory
checkpoints). Units are in the field names.

The per-group failure clock has mean N·m (m = ``system_mtbf_s``), so the system of N groups
fails on average every m seconds whatever N is.

Example
-------
>>> cfg = h100_600k(600)
>>> cfg.allreduce_s, round(cfg.checkpoint_s, 2), round(cfg.t0_s(), 0)
(6.0, 58.82, 700000.0)
>>> paper_checkpoint_interval("spare", 600, 8), paper_checkpoint_interval("rep", 600, 3)
(23, 8)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from spare_lib._util.validate import check_int, check_positive
from spare_lib.failures.mix import FailureMix, failure_mix
from spare_lib.registry.knobs import KNOBS
from spare_lib.stacking.layout import Layout

#: Number of H100 GPUs of the paper's cluster.
PAPER_GPUS = 600_000
#: Flop of one shard's forward+backward pass (one stack entry) in the paper's setting.
STACK_FLOP = 2.56e16
#: Sustained throughput of one data-parallel group in the paper's setting, flop/s.
GROUP_FLOPS = 4.0e14
#: Checkpoint size (10T parameters in FP16) and write bandwidth of the paper's setting.
CHECKPOINT_BYTES = 2.0e13
CHECKPOINT_BW_BYTES_S = 3.4e11

FAILURE_DISTRIBUTIONS = ("weibull", "exponential")


@dataclass(frozen=True)
class ClusterConfig:
    """Parameters of one simulated training run (SPEC §3–6).

    Attributes
    ----------
    steps : int
        Committed training steps to reach (10,000 in the paper).
    compute_per_stack_s : float
        Nominal compute time of one stack entry (one shard) on one group (64 s).
    jitter_sigma : float
        Standard deviation of the multiplicative jitter N(1, σ²) drawn per group per stack
        (0.05); 0 disables jitter.
    jitter_min : float
        Lower clip of the jitter factor (0.1).
    allreduce_s : float
        All-reduce time T_a (2 / 6 / 10 s for N = 200 / 600 / 1000).
    allreduce_fail_factor : float
        Factor on T_a in an attempt in which a failure was noticed (0.5: the all-reduce is cut
        short).
    restart_s : float
        Restart time T_r: the failure-free window every group must get through during a global
        restart (3600 s).
    stall_s : float
        Stall per reconfiguration, paid by every method that continues past a failure (SPARe,
        spare+repair, Rep's masking, both elastic methods) under one rule: one stall per
        attempt in which failures are noticed (failures noticed at the same poll share it) and
        one per batch of groups rejoining. The paper's 0.1 s communicator shrink is the default;
        FT-HSDP measured minutes at 100k GPUs. Counted as downtime.
    checkpoint_s : float
        Checkpoint write time T_s (2e13 B at 340 GB/s ≈ 58.8 s).
    failure_dist : str
        'weibull' or 'exponential': law of the per-group time between failures.
    weibull_shape : float
        Weibull shape k (0.78); ignored for 'exponential'.
    system_mtbf_s : float
        System MTBF m of the whole cluster (300 s); the per-group mean is N·m.
    n_gpus : int
        GPUs of the cluster (600,000); informational (M = n_gpus / N per group).
    domain_size : int
        D, groups per failure domain (group g is in domain ⌊g/D⌋; the last may be smaller); 1 =
        no domains.
    domain_fault_share : float
        q in [0, 1]: the share of failure events that are domain events. They arrive as their
        own process (exponential, or Weibull with shape k) at rate q/m, each hits a uniformly
        chosen domain and kills its live groups at that instant; the per-group clocks are
        scaled to the rate (1 − q)/m, so the total stays 1/m.
    rejoin_s : float
        Time after which a failed group rejoins (replacement, restart, catch-up) for the methods
        that let groups rejoin (spare+repair, elastic-drop, elastic-rebalance); inf = never.
    rejoin_clock : str
        When a failed group's ``rejoin_s`` starts: 'notice' (at the poll that notices the
        failure: a unit start or the barrier, the model's default) or 'failure' (at the failure
        plus its class's detection time, as a coordinator that reads the crash's EOF or a
        missed heartbeat; notebook 45 measures the difference on real processes).
    rejoin_stall_s : float or None
        Stall of one batch of rejoining groups; None: ``stall_s`` (a blocking reconfiguration).
        0 models a non-blocking catch-up such as FT-HSDP's.
    microbatches : int
        b, micro-batches per shard for elastic-rebalance.
    fetch_s : float
        elastic-rebalance: data fetch before the first attempt after the assignment changed
        (0: shared storage and prefetch).
    mem_checkpoint_s, mem_restart_s : float
        In-memory checkpoint tier: write time and restart window (each group's state in one
        peer group's memory); used with ``simulate(..., mem_ckpt_steps=C)``.
    mem_ideal : bool
        The in-memory copy is never lost (an upper bound); otherwise a restart falls back to
        disk when a group and its peer both died since the memory checkpoint.
    jitter_model : str
        'paper' (today's draws, which the golden runs pin: SPARe per 64-s stack, Rep one draw
        for its r·64 s, elastic-rebalance per micro-batch with σ√b), 'unit' (every 64-s unit of
        work its own draw, Rep included), 'step' (one factor per group per attempt) or
        'straggler' ('unit' plus a persistent slow share ``straggler_share`` of the groups,
        slower by ``straggler_slowdown``, drawn anew at every global restart).
    straggler_share, straggler_slowdown : float
        p and s of ``jitter_model='straggler'``.
    allreduce_rule : str
        'paper': the all-reduce of an attempt with a noticed failure is cut short at
        ``allreduce_fail_factor``·T_a and a commit counts it; 'abort': it is aborted there and a
        commit pays a full T_a on top (after the stall), for every method alike.
    failure_mix : str
        The classes of failures (:mod:`spare_lib.failures.mix`): 'paper' (every failure one
        group's: today's model), 'llama3', 'stepfun' or a YAML file.
    detect_s : float
        Detection time: after an attempt (or a checkpoint write) in which a failure is noticed,
        every group waits it before the reconfiguration or the restart (downtime); a class of the
        mix may set its own.
    min_live : float
        Quorum of elastic-drop as a share of N: a failure that leaves fewer than min_live·N live
        groups restarts the job from its checkpoint (0: none; 1: any failure restarts).
    """

    steps: int = KNOBS["steps"].default
    compute_per_stack_s: float = KNOBS["compute_per_stack_s"].default
    jitter_sigma: float = KNOBS["jitter_sigma"].default
    jitter_min: float = KNOBS["jitter_min"].default
    allreduce_s: float = KNOBS["allreduce_s"].default
    allreduce_fail_factor: float = KNOBS["allreduce_fail_factor"].default
    restart_s: float = KNOBS["restart_s"].default
    stall_s: float = KNOBS["stall_s"].default
    checkpoint_s: float = KNOBS["checkpoint_s"].default
    failure_dist: str = KNOBS["failure_dist"].default
    weibull_shape: float = KNOBS["weibull_shape"].default
    system_mtbf_s: float = KNOBS["system_mtbf_s"].default
    n_gpus: int = KNOBS["n_gpus"].default
    domain_size: int = KNOBS["domain_size"].default
    domain_fault_share: float = KNOBS["domain_fault_share"].default
    rejoin_s: float = KNOBS["rejoin_s"].default
    rejoin_clock: str = KNOBS["rejoin_clock"].default
    rejoin_stall_s: float | None = KNOBS["rejoin_stall_s"].default
    microbatches: int = KNOBS["microbatches"].default
    fetch_s: float = KNOBS["fetch_s"].default
    mem_checkpoint_s: float = KNOBS["mem_checkpoint_s"].default
    mem_restart_s: float = KNOBS["mem_restart_s"].default
    mem_ideal: bool = KNOBS["mem_ideal"].default
    jitter_model: str = KNOBS["jitter_model"].default
    straggler_share: float = KNOBS["straggler_share"].default
    straggler_slowdown: float = KNOBS["straggler_slowdown"].default
    allreduce_rule: str = KNOBS["allreduce_rule"].default
    failure_mix: str = KNOBS["failure_mix"].default
    detect_s: float = KNOBS["detect_s"].default
    min_live: float = KNOBS["min_live"].default

    def __post_init__(self) -> None:
        # every field is a knob of the one registry (range, unit, default: docs/knobs.md)
        for f in fields(self):
            object.__setattr__(self, f.name, KNOBS[f.name].check(getattr(self, f.name)))
        mix = self.mix()  # a preset or a readable YAML file (ValueError with file and line)
        if not mix.is_paper and self.domain_fault_share > 0:
            raise ValueError(f"domain_fault_share must be 0 with failure_mix={self.failure_mix!r}: "
                             f"the mix sets the share of domain events "
                             f"({mix.share('domain'):g}), got {self.domain_fault_share}")

    def mix(self) -> FailureMix:
        """The :class:`~spare_lib.failures.mix.FailureMix` that ``failure_mix`` names."""
        return failure_mix(self.failure_mix)

    def group_mean_s(self, N: int) -> float:
        """Mean time between failures of one group, N·m seconds."""
        return check_int("N", N, lo=1) * self.system_mtbf_s

    def weibull_scale_s(self, N: int) -> float:
        """Weibull scale λ = N·m / Γ(1 + 1/k) of one group's clock (51979 s at N = 200)."""
        return self.group_mean_s(N) / math.gamma(1.0 + 1.0 / self.weibull_shape)

    def step_s(self, depth: int = 1) -> float:
        """Nominal failure-free time of one step at stack depth S (no jitter): S·64 s + T_a."""
        return check_int("depth", depth, lo=1) * self.compute_per_stack_s + self.allreduce_s

    def t0_s(self) -> float:
        """T0 = steps · (compute per stack + T_a), the failure-free time-to-train (SPEC §1)."""
        return self.steps * self.step_s(1)

    def with_(self, **changes: object) -> ClusterConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)  # type: ignore[arg-type]


def allreduce_600k_s(N: int) -> float:
    """All-reduce time T_a of the paper's preset: 2 / 6 / 10 s at N = 200 / 600 / 1000.

    The three published values lie exactly on T_a = N / 100 s (a ring all-reduce whose latency
    term grows linearly with the number of groups); other N use the same line.
    """
    N = check_int("N", N, lo=1)
    return N / 100.0


def h100_600k(N: int, **overrides: object) -> ClusterConfig:
    """The paper's 600k-H100 simulation preset for N data-parallel groups (SPEC §6).

    Parameters
    ----------
    N : int
        Data-parallel groups; 200, 600 and 1000 are the paper's (M = 3000, 1000, 600 GPUs per
        group). Any other N ≥ 1 gives the same cluster with M = 600k/N and T_a = N/100 s
        (:func:`allreduce_600k_s`, exact at the three published points).
    **overrides
        Field overrides, e.g. ``failure_dist='exponential'`` or ``steps=1000``.

    Returns
    -------
    ClusterConfig
        steps 10,000; 64 s per stack with jitter N(1, 0.05²) clipped ≥ 0.1; T_a; ×0.5 T_a in an
        attempt with a failure; T_r = 3600 s; stall 0.1 s; T_s = 58.8 s; Weibull k = 0.78 with
        system MTBF m = 300 s.

    Examples
    --------
    >>> round(h100_600k(200).weibull_scale_s(200))
    51979
    """
    N = check_int("N", N, lo=1)
    base = ClusterConfig(allreduce_s=allreduce_600k_s(N))
    cfg = base.with_(**overrides) if overrides else base
    if cfg.domain_size > N:
        raise ValueError(f"domain_size must be in [1, N] = [1, {N}], got {cfg.domain_size}")
    return cfg


# Checkpoint interval C (steps) as the paper ran them, SPEC §6: {N: [(r_lo, r_hi, rep, spare)]}.
_PAPER_CKPT: dict[int, list[tuple[int, int, int, int]]] = {
    200: [(2, 2, 8, 8), (3, 3, 6, 10), (4, 4, 6, 12), (5, 5, 5, 13), (6, 6, 5, 14),
          (7, 7, 4, 15), (8, 8, 4, 15), (9, 12, 3, 15)],
    600: [(2, 2, 9, 9), (3, 3, 8, 13), (4, 4, 8, 16), (5, 5, 7, 18), (6, 6, 7, 20),
          (7, 7, 6, 22), (8, 8, 6, 23), (9, 9, 5, 24), (10, 11, 5, 25), (12, 16, 4, 25),
          (17, 20, 3, 25)],
    1000: [(2, 2, 9, 10), (3, 3, 10, 15), (4, 4, 9, 19), (5, 5, 9, 22), (6, 6, 8, 25),
           (7, 7, 8, 27), (8, 8, 7, 29), (9, 9, 7, 30), (10, 10, 6, 31), (11, 11, 6, 32),
           (12, 15, 5, 32), (16, 21, 4, 32), (22, 26, 3, 32)],
}


def paper_checkpoint_interval(method: str, N: int, r: int) -> int:
    """Checkpoint interval C in steps that the paper used for (method, N, r) (SPEC §6).

    Parameters
    ----------
    method : str
        'spare' or 'rep'.
    N : int
        200, 600 or 1000.
    r : int
        Redundancy in the paper's range: 2..12 (N=200), 2..20 (N=600), 2..26 (N=1000).

    Returns
    -------
    int
        C, close to T_c*/step time but following no exact rule; see
        :func:`analytic_checkpoint_interval` for the analytic optimum.
    """
    if method not in ("spare", "rep"):
        raise ValueError(f"method must be 'spare' or 'rep', got {method!r}")
    if N not in _PAPER_CKPT:
        raise ValueError(f"N must be one of {sorted(_PAPER_CKPT)} (the paper's table), got {N!r}; "
                         f"use analytic_checkpoint_interval for other N")
    rows = _PAPER_CKPT[N]
    r_max = rows[-1][1]
    r = check_int("r", r, lo=2, hi=r_max)
    for lo, hi, rep, spare in rows:
        if lo <= r <= hi:
            return rep if method == "rep" else spare
    raise AssertionError("unreachable: table covers 2..r_max")  # pragma: no cover


def analytic_checkpoint_interval(mtbf_s: float, step_s: float, config: ClusterConfig) -> int:
    """Checkpoint interval C = max(1, round(T_c*/step time)), T_c* the optimum of Eq. 2.

    T_c* = T_s + sqrt(T_s² + 2·T_s·(T_f + T_r)) (:func:`spare_lib.theory.checkpoint_period_opt`).

    Parameters
    ----------
    mtbf_s : float
        Mean time between global restarts T_f of the method (μ·m for SPARe, m for CKPT-only).
    step_s : float
        Mean wall time of one committed step.
    config : ClusterConfig
        Supplies T_s and T_r.
    """
    from spare_lib.theory import checkpoint_period_opt
    step_s = check_positive("step_s", step_s)
    mtbf_s = check_positive("mtbf_s", mtbf_s)
    tc = float(checkpoint_period_opt(config.checkpoint_s, mtbf_s, config.restart_s))
    return max(1, int(round(tc / step_s)))


# --------------------------------------------------------------------------- any cluster size
# All-reduce cost model (issue 16). The data-parallel all-reduce runs between the N groups, on
# each of the M GPUs of a group in parallel (GPU i of every group holds the same 1/M of the
# gradient): p = N participants, n = model_bytes / M bytes each. With α the latency of one
# message step and β = 1/bw the time per byte on one GPU's link (Hockney's model):
#
#   ring          2(p−1)·α + 2(p−1)/p · n·β        Patarasuk & Yuan (2009), bandwidth-optimal
#   rabenseifner  2⌈log2 p⌉·α + 2(p−1)/p · n·β    reduce-scatter by recursive halving then
#                                                  allgather by recursive doubling; Thakur,
#                                                  Rabenseifner & Gropp (2005), Rabenseifner (2004)
#   tree          2⌈log2 p⌉·α + 2·n·β             pipelined double binary tree (reduce, then
#                                                  broadcast, each at full link bandwidth); Sanders,
#                                                  Speck & Träff (2009), the tree of NCCL ≥ 2.4
#
# (reduction arithmetic, the γ term of Thakur et al., is neglected). Calibration: with α = 10 µs
# and bw = 6.67 GB/s per GPU, the ring reproduces the paper's T_a = 2 / 6 / 10 s at 600k GPUs
# (N = 200 / 600 / 1000, n = 2e13 B / M) as 1.993 / 5.999 / 10.005 s (−0.35 %, −0.02 %, +0.05 %).
# At a fixed GPU count n grows ∝ N, so the ring's bandwidth term is ≈ 2·N·B/(G·bw): this is why
# the paper's T_a is linear in N (N/100 s), a line that only holds at 600k GPUs.

#: All-reduce algorithms of :func:`allreduce_time_s`.
ALLREDUCE_ALGORITHMS = ("ring", "rabenseifner", "tree")
#: Latency α of one all-reduce message step, s (inter-node, NCCL/InfiniBand order of magnitude).
ALLREDUCE_LATENCY_S = 1.0e-5
#: Effective all-reduce bandwidth per GPU, bytes/s, calibrated on the paper's T_a (see above).
ALLREDUCE_BW_BYTES_S = 6.67e9
#: Per-GPU MTBF, s: 600,000 GPUs × 300 s, so the system MTBF is m = 5 min at the paper's size
#: (≈ 5.7 years per GPU); m = GPU_MTBF_S / G for G GPUs.
GPU_MTBF_S = PAPER_GPUS * 300.0


def allreduce_time_s(n_groups: int, bytes_per_gpu: float, algorithm: str = "ring", *,
                     bw_bytes_s: float = ALLREDUCE_BW_BYTES_S,
                     latency_s: float = ALLREDUCE_LATENCY_S) -> float:
    """All-reduce time T_a of n bytes among p = ``n_groups`` participants (Hockney α–β model).

    Parameters
    ----------
    n_groups : int
        p, participants (the N data-parallel groups), ≥ 1; p = 1 costs nothing.
    bytes_per_gpu : float
        n, bytes each GPU reduces (model bytes / GPUs per group), ≥ 0.
    algorithm : {'ring', 'rabenseifner', 'tree'}
        ring: 2(p−1)α + 2(p−1)/p·n/bw (Patarasuk & Yuan 2009); rabenseifner: 2⌈log2 p⌉α +
        2(p−1)/p·n/bw (Thakur, Rabenseifner & Gropp 2005); tree: 2⌈log2 p⌉α + 2n/bw (pipelined
        double binary tree, Sanders, Speck & Träff 2009).
    bw_bytes_s, latency_s : float
        Link bandwidth per GPU (bytes/s, > 0) and per-step latency α (s, ≥ 0).

    Examples
    --------
    >>> round(allreduce_time_s(600, 2e13 / 1000), 3)
    5.999
    """
    p = check_int("n_groups", n_groups, lo=1)
    n = check_positive("bytes_per_gpu", bytes_per_gpu, allow_zero=True)
    bw = check_positive("bw_bytes_s", bw_bytes_s)
    a = check_positive("latency_s", latency_s, allow_zero=True)
    if algorithm not in ALLREDUCE_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALLREDUCE_ALGORITHMS}, got {algorithm!r}")
    if p == 1:
        return 0.0
    steps = math.ceil(math.log2(p))
    if algorithm == "ring":
        return 2.0 * (p - 1) * a + 2.0 * (p - 1) / p * n / bw
    if algorithm == "rabenseifner":
        return 2.0 * steps * a + 2.0 * (p - 1) / p * n / bw
    return 2.0 * steps * a + 2.0 * n / bw


def cluster_groups(gpus: int, gpus_per_group: int) -> int:
    """N = ⌊gpus / gpus_per_group⌋ data-parallel groups (leftover GPUs stay idle).

    Raises
    ------
    ValueError
        If ``gpus_per_group`` exceeds ``gpus`` (not even one group fits).
    """
    g = check_int("gpus", gpus, lo=1)
    m = check_int("gpus_per_group", gpus_per_group, lo=1)
    if m > g:
        raise ValueError(f"gpus_per_group must be at most gpus = {g} (one group must fit), got {m}")
    return g // m


def cluster_config(gpus: int, gpus_per_group: int, model_bytes: float = CHECKPOINT_BYTES, *,
                   allreduce: str = "ring", bw_bytes_s: float = ALLREDUCE_BW_BYTES_S,
                   latency_s: float = ALLREDUCE_LATENCY_S, gpu_mtbf_s: float = GPU_MTBF_S,
                   checkpoint_bw_bytes_s: float = CHECKPOINT_BW_BYTES_S,
                   gpu_memory_bytes: float | None = None, allreduce_s: float | None = None,
                   **overrides: object) -> ClusterConfig:
    """A :class:`ClusterConfig` for any cluster: T_a, m and T_s derived from the hardware.

    N = :func:`cluster_groups` (gpus, gpus_per_group) groups of M = ``gpus_per_group`` GPUs;
    every GPU of a group holds 1/M of the model, so the all-reduce moves n = model_bytes / M
    bytes per GPU among N participants: T_a = :func:`allreduce_time_s` (N, n, allreduce). The
    system MTBF is m = gpu_mtbf_s / (N·M) (failures kill a whole group; idle GPUs do not
    count), so m = 300 s at 600k GPUs and shrinks as 1/GPUs. T_s = model_bytes /
    checkpoint_bw_bytes_s. Compute per stack (64 s), jitter, T_r = 3600 s, the 0.5·T_a of a
    failed attempt and the failure law are the paper's (override them by keyword).

    With the defaults, ``cluster_config(600_000, M)`` gives T_a = 1.993 / 5.999 / 10.005 s for
    M = 3000 / 1000 / 600 (N = 200 / 600 / 1000) against the paper's 2 / 6 / 10 s of
    :func:`h100_600k` (the calibration of :data:`ALLREDUCE_BW_BYTES_S`); everything else equal.

    Parameters
    ----------
    gpus, gpus_per_group : int
        Cluster size G and group size M (M ≤ G).
    model_bytes : float
        Bytes of the gradient reduced and of the checkpoint written (2e13: 10T parameters in
        FP16, the paper's).
    allreduce : {'ring', 'rabenseifner', 'tree'}
        All-reduce algorithm (see :func:`allreduce_time_s`).
    bw_bytes_s, latency_s : float
        All-reduce link bandwidth per GPU and per-step latency.
    gpu_mtbf_s : float
        MTBF of one GPU (default :data:`GPU_MTBF_S`, m = 5 min at 600k GPUs).
    checkpoint_bw_bytes_s : float
        Aggregate checkpoint write bandwidth (340 GB/s).
    gpu_memory_bytes : float or None
        If given, refuse groups whose share of the model (model_bytes / M) exceeds it.
    allreduce_s : float or None
        Use this T_a instead of the model.
    **overrides
        Any other :class:`ClusterConfig` field (steps, restart_s, failure_dist, ...).

    Raises
    ------
    ValueError
        A group larger than the cluster, a model share above ``gpu_memory_bytes``, or any
        invalid field.

    Examples
    --------
    >>> cfg = cluster_config(2_000_000, 1000)
    >>> cluster_groups(2_000_000, 1000), round(cfg.allreduce_s, 2), cfg.system_mtbf_s
    (2000, 6.03, 90.0)
    """
    N = cluster_groups(gpus, gpus_per_group)
    M = int(gpus_per_group)
    model_bytes = check_positive("model_bytes", model_bytes)
    check_positive("gpu_mtbf_s", gpu_mtbf_s)
    check_positive("checkpoint_bw_bytes_s", checkpoint_bw_bytes_s)
    share = model_bytes / M
    if gpu_memory_bytes is not None:
        mem = check_positive("gpu_memory_bytes", gpu_memory_bytes)
        if share > mem:
            raise ValueError(f"gpus_per_group={M} is too small for model_bytes={model_bytes:.3g}: each "
                             f"GPU would hold {share:.3g} B > gpu_memory_bytes={mem:.3g}; need at "
                             f"least {math.ceil(model_bytes / mem)} GPUs per group")
    if allreduce_s is None:
        ta = allreduce_time_s(N, share, allreduce, bw_bytes_s=bw_bytes_s, latency_s=latency_s)
    else:
        ta = check_positive("allreduce_s", allreduce_s, allow_zero=True)
    fields = {"allreduce_s": ta, "system_mtbf_s": gpu_mtbf_s / (N * M), "n_gpus": N * M,
              "checkpoint_s": model_bytes / checkpoint_bw_bytes_s}
    fields.update(overrides)
    return ClusterConfig().with_(**fields)


def scale_layout(N: int, r: int) -> Layout:
    """The stacking layout for (N, r) at any scale, or a ValueError naming the limit.

    * the optimal Golomb ruler (SPEC §2) when it satisfies the independence condition
      N > 2·o_{r−1} − 1 (r ≤ 28, the ruler table);
    * r > 28: the Sidon set below (no ruler is tabled);
    * otherwise offsets forming a Sidon set mod N
      (:func:`spare_lib.stacking.modular_sidon_offsets`): every pair of types still shares at
      most one holder, which needs N ≥ r(r − 1) + 1 (+ 1 for even N);
    * otherwise (N below that bound, or the search finds no set within its budget):
      ValueError naming the limits.

    The rulers cover r* ≈ log2 N + 0.83 up to N ≈ 10⁸ (r* = 27 at N = 10⁸ needs N > 1105); the
    modular sets matter for small N and large r (e.g. N = 64, r = 8: the ruler of length 34
    needs N > 67, a Sidon set mod 64 exists).

    Examples
    --------
    >>> scale_layout(1000, 9).kind, scale_layout(64, 8).kind
    ('ruler', 'sidon-mod')
    """
    from spare_lib.stacking.domains import modular_sidon_offsets
    from spare_lib.stacking.layout import GOLOMB_RULERS, MAX_RULER_R, max_ruler_r, ruler_layout

    N = check_int("N", N, lo=1)
    r = check_int("r", r, lo=1, hi=N)
    if r <= MAX_RULER_R and N > 2 * GOLOMB_RULERS[r][-1] - 1:
        return ruler_layout(N, r)
    need = r * (r - 1) + (1 if N % 2 else 2)
    if r > 1 and N < need:
        raise ValueError(f"r={r} is too large for N={N}: a layout in which two shard types share "
                         f"at most one holder needs N >= r(r-1)+{need - r * (r - 1)} = {need} "
                         f"(a Sidon set of r offsets mod N); the largest r for N={N} is "
                         f"{max_independent_r(N)}")
    try:
        offs = modular_sidon_offsets(N, r)
    except ValueError as err:
        raise ValueError(f"no layout for r={r} at N={N}: the r={r} ruler needs N > "
                         f"{2 * GOLOMB_RULERS[min(r, MAX_RULER_R)][-1] - 1} and no Sidon set of r "
                         f"offsets mod N was found ({err}); use r <= {max_ruler_r(N)} (ruler) or a "
                         f"larger N") from None
    return Layout(N=N, r=r, offsets=offs, kind="sidon-mod")


def max_independent_r(N: int) -> int:
    """Upper bound on the r of a cyclic layout with the independence condition at N: the
    ruler table's r or the Sidon bound r(r − 1) + 1 (+ 1 for even N) ≤ N, whichever is larger
    (a Sidon set at the bound need not exist; :func:`scale_layout` says when none is found)."""
    from spare_lib.stacking.layout import max_ruler_r

    N = check_int("N", N, lo=1)
    r = 1
    while (r + 1) * r + (1 if N % 2 else 2) <= N and r + 1 <= N:
        r += 1
    return max(r, max_ruler_r(N))


__all__ = [
    "ALLREDUCE_ALGORITHMS",
    "ALLREDUCE_BW_BYTES_S",
    "ALLREDUCE_LATENCY_S",
    "GPU_MTBF_S",
    "ClusterConfig",
    "FAILURE_DISTRIBUTIONS",
    "PAPER_GPUS",
    "allreduce_600k_s",
    "allreduce_time_s",
    "cluster_config",
    "cluster_groups",
    "max_independent_r",
    "scale_layout",
    "analytic_checkpoint_interval",
    "h100_600k",
    "paper_checkpoint_interval",
]
