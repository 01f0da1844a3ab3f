"""A training job and a GPU fleet, turned into the planner's cluster for one group size (issue 27).

A team plans from a model of P parameters trained on T tokens with B tokens per step, on G GPUs
of one type at a model-FLOPs utilisation (MFU), with a network and a storage system. For a
data-parallel group of M GPUs (the parallelism inside a group: tensor, pipeline, sharding) this
module derives the paper's quantities (``docs/design.md`` has every formula and its source):

* N = ⌊G / M⌋ groups; a step is ⌈T / B⌉-th of the run: ``steps = ⌈T / B⌉``;
* compute of one shard (a group's B/N tokens) per step: 6·P·(B/N) flop (the dense transformer's
  forward and backward, Kaplan et al. 2020, §2.1) over M × peak × MFU:
  ``compute_per_stack_s = 6 P B / (N M peak MFU)``;
* T_a: the α–β ring all-reduce (:func:`spare_lib.cluster.config.allreduce_time_s`) of the BF16
  gradient, 2·P bytes, over N groups, each GPU reducing its 1/M of it, of which the share
  ``exposed_allreduce`` is not hidden behind compute (default 0: the MFU is an end-to-end
  measurement, as Llama 3's, so the overlapped all-reduce is already in it; 1: the paper's
  step = compute + T_a);
* T_s: the checkpoint, ``checkpoint_bytes_per_param`` × P (14: BF16 weights, FP32 master
  weights and Adam's two FP32 moments; Rajbhandari et al. 2020, §3.1) over the storage bandwidth;
* T_r: given, or the project's restart model R(G) of notebook 50
  (:func:`spare_lib.cluster.regime.restart_time_s`, 60 min at 600k GPUs);
* m: the per-GPU MTBF over the N·M working GPUs.

A group size is **valid** only if the training state fits its GPUs: ``state_bytes_per_param`` ×
P / M ≤ GPU memory × ``memory_headroom`` (16 bytes per parameter with the BF16 gradients, ZeRO's
16Ψ; the headroom leaves the rest of the memory to activations and buffers), and every group
gets at least one sequence per step (B / N ≥ ``seq_tokens``).

Example
-------
>>> job = JobSpec(**LLAMA3_405B)
>>> spec = job.cluster(128)
>>> spec.N, round(spec.compute_per_stack_s, 2), job.steps, round(job.failure_free_days(128), 1)
(128, 6.0, 975000, 67.7)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spare_lib._util.validate import check_int, check_positive
from spare_lib.cluster.config import ALLREDUCE_BW_BYTES_S, ALLREDUCE_LATENCY_S, allreduce_time_s
from spare_lib.cluster.planning.spec import ClusterSpec
from spare_lib.cluster.regime import restart_time_s


@dataclass(frozen=True)
class GPU:
    """A GPU type: peak dense BF16 throughput and memory, with the source of both."""

    name: str
    peak_flops: float
    memory_bytes: float
    source: str


#: GPU presets (dense BF16, no sparsity; memory as the datasheets give it).
GPUS: dict[str, GPU] = {
    "h100": GPU("H100 SXM", 989.4e12, 80e9,
                "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 1,979 TFLOPS BF16 with sparsity, "
                "989.4 dense; 80 GB HBM3"),
    "h200": GPU("H200 SXM", 989.4e12, 141e9,
                "NVIDIA H200 Tensor Core GPU datasheet: the H100's 989.4 TFLOPS BF16 dense; "
                "141 GB HBM3e"),
    "b200": GPU("B200 (HGX)", 2.25e15, 180e9,
                "NVIDIA HGX B200 specifications, per GPU: 4.5 PFLOPS FP16/BF16 with sparsity, "
                "2.25 dense; 180 GB HBM3e"),
    "mi300x": GPU("MI300X", 1.3074e15, 192e9,
                  "AMD Instinct MI300X datasheet: 1,307.4 TFLOPS BF16 dense; 192 GB HBM3"),
}


#: The Llama-3-405B-like job of notebook 95, ``spare design``'s benchmark and the App's Design tab:
#: 405B parameters, 15.6T tokens, 16,384 H100 GPUs (Llama 3 paper, Dubey et al. 2024, §3.1 and
#: §3.3.1; published), 16M tokens a step (the batch its §3.4.1 grows to), at an end-to-end MFU
#: of 0.40 (its Table 4 reports 38–43 % BF16 MFU for the 405B stages). Keyword arguments of :class:`JobSpec`.
LLAMA3_405B: dict[str, float | int | str] = {
    "params": 405e9, "tokens": 15.6e12, "gpus": 16_384, "gpu": "h100", "mfu": 0.40,
    "tokens_per_step": 16e6}

@dataclass(frozen=True)
class JobSpec:
    """A training job on a fleet (module docstring; every time in seconds, every size in bytes).

    Attributes
    ----------
    params, tokens : float
        P parameters and T training tokens.
    gpus : int
        G, GPUs of the fleet.
    gpu : str
        Key of :data:`GPUS`.
    mfu : float
        Model-FLOPs utilisation in (0, 1].
    tokens_per_step : float
        B, the global batch in tokens.
    seq_tokens : int
        Tokens of one sequence: every group gets at least one per step.
    gradient_bytes_per_param, state_bytes_per_param, checkpoint_bytes_per_param : float
        BF16 gradient (2), training state in memory (16), checkpoint (14).
    memory_headroom : float
        Share of a GPU's memory the training state may take, in (0, 1].
    storage_bw_bytes_s : float
        Aggregate checkpoint write bandwidth.
    allreduce_bw_bytes_s, allreduce_latency_s : float
        The all-reduce model's bandwidth per GPU and latency per message step.
    restart_s : float or None
        T_r; None: R(G) of :func:`spare_lib.cluster.regime.restart_time_s`.
    gpu_mtbf_s : float
        MTBF of one GPU (1.8e8 s, the knob registry's default).
    exposed_allreduce : float
        Share of the all-reduce not overlapped with compute, in [0, 1].
    """

    params: float
    tokens: float
    gpus: int
    gpu: str = "h100"
    mfu: float = 0.40
    tokens_per_step: float = 16e6
    seq_tokens: int = 8192
    gradient_bytes_per_param: float = 2.0
    state_bytes_per_param: float = 16.0
    checkpoint_bytes_per_param: float = 14.0
    memory_headroom: float = 0.8
    storage_bw_bytes_s: float = 3.4e11
    allreduce_bw_bytes_s: float = ALLREDUCE_BW_BYTES_S
    allreduce_latency_s: float = ALLREDUCE_LATENCY_S
    restart_s: float | None = None
    gpu_mtbf_s: float = 600_000 * 300.0
    exposed_allreduce: float = 0.0

    def __post_init__(self) -> None:
        for name in ("params", "tokens", "tokens_per_step", "gradient_bytes_per_param",
                     "state_bytes_per_param", "checkpoint_bytes_per_param",
                     "storage_bw_bytes_s", "allreduce_bw_bytes_s", "gpu_mtbf_s"):
            check_positive(name, getattr(self, name))
        check_positive("allreduce_latency_s", self.allreduce_latency_s, allow_zero=True)
        check_int("gpus", self.gpus, lo=2)
        check_int("seq_tokens", self.seq_tokens, lo=1)
        if self.gpu not in GPUS:
            raise ValueError(f"gpu must be one of {', '.join(GPUS)}, got {self.gpu!r}")
        if not (isinstance(self.exposed_allreduce, (int, float))
                and 0.0 <= self.exposed_allreduce <= 1.0):
            raise ValueError(f"exposed_allreduce must be in [0, 1], got {self.exposed_allreduce!r}")
        for name in ("mfu", "memory_headroom"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 < v <= 1.0):
                raise ValueError(f"{name} must be in (0, 1], got {v!r}")
        if self.restart_s is not None:
            check_positive("restart_s", self.restart_s, allow_zero=True)
        if self.tokens_per_step > self.tokens:
            raise ValueError(f"tokens_per_step must be at most tokens = {self.tokens:g}, got "
                             f"{self.tokens_per_step:g}")

    @property
    def device(self) -> GPU:
        return GPUS[self.gpu]

    @property
    def steps(self) -> int:
        """Committed steps of the run: ⌈T / B⌉."""
        return int(math.ceil(self.tokens / self.tokens_per_step))

    @property
    def state_bytes(self) -> float:
        return self.state_bytes_per_param * self.params

    def min_group_size(self) -> int:
        """The smallest M whose GPUs hold the training state (:meth:`fits`)."""
        return max(1, math.ceil(self.state_bytes / (self.device.memory_bytes * self.memory_headroom)))

    def max_groups(self) -> int:
        """The most groups a step can feed one sequence each: ⌊B / seq_tokens⌋."""
        return max(1, int(self.tokens_per_step // self.seq_tokens))

    def why_invalid(self, M: int, n_groups: int | None = None) -> str:
        """'' if group size M (with ``n_groups`` groups, default ⌊G / M⌋) is valid, else why
        not (one sentence)."""
        M = check_int("gpus_per_group", M, lo=1)
        N = self.gpus // M if n_groups is None else check_int("n_groups", n_groups, lo=1)
        if N < 2 or N * M > self.gpus:
            return f"M = {M} x N = {N} does not fit 2 or more groups in {self.gpus:,} GPUs"
        if M < self.min_group_size():
            per = self.state_bytes / M / 1e9
            return (f"M = {M}: {per:.3g} GB of training state per GPU exceeds "
                    f"{self.memory_headroom:g} x {self.device.memory_bytes / 1e9:g} GB")
        if N > self.max_groups():
            return (f"M = {M}: N = {N:,} groups would get less than one sequence of "
                    f"{self.seq_tokens} tokens each from {self.tokens_per_step:g} tokens per step")
        return ""

    def cluster(self, M: int, n_groups: int | None = None) -> ClusterSpec:
        """The planner's cluster for group size M and ``n_groups`` groups (default ⌊G / M⌋:
        the whole fleet); ValueError when it is not valid."""
        why = self.why_invalid(M, n_groups)
        if why:
            raise ValueError(f"gpus_per_group is not valid: {why}")
        N = self.gpus // M if n_groups is None else int(n_groups)
        compute = 6.0 * self.params * self.tokens_per_step / (
            N * M * self.device.peak_flops * self.mfu)
        ta = self.exposed_allreduce * allreduce_time_s(
            N, self.gradient_bytes_per_param * self.params / M, "ring",
            bw_bytes_s=self.allreduce_bw_bytes_s, latency_s=self.allreduce_latency_s)
        restart = float(restart_time_s(N * M)) if self.restart_s is None else self.restart_s
        return ClusterSpec(gpus=N * M, gpus_per_group=M,
                           system_mtbf_s=self.gpu_mtbf_s / (N * M), restart_s=restart,
                           checkpoint_s=self.checkpoint_bytes_per_param * self.params
                           / self.storage_bw_bytes_s,
                           step_s=compute + ta, allreduce_s=ta)

    def failure_free_days(self, M: int, n_groups: int | None = None) -> float:
        """T0 in days at group size M: steps × (compute + T_a)."""
        return self.steps * self.cluster(M, n_groups).step_s / 86_400.0


__all__ = ["GPUS", "GPU", "JobSpec"]
