"""Time: one roofline for every phase of a request, from one set of rates.

Every phase time is ``max(FLOPs / (peak · GPUs · MFU), bytes / (bandwidth · GPUs · MBU))``
(:func:`phase_time_s`): compute and memory traffic overlap, so whichever resource runs
out first sets the pace (Williams, Waterman & Patterson 2009, "Roofline"). The four rates
and the GPU count travel together in one :class:`Rates`, built by :func:`rates_for` from a
GPU of data/gpus.csv and the weights' format; the named defaults below are the only
efficiencies the CLI, the lessons and the exercises use.

Decode (one new token per sequence per step) streams every active weight once, shared by
the batch, and every cached K/V of every sequence, doing about 2 FLOPs per weight read:
far below the ridge point, so the bytes term wins (seed 004; Pope et al. 2022,
"Efficiently Scaling Transformer Inference"). Prefill multiplies the weights by every
prompt token at once, so its FLOPs per byte grow with the prompt and it reaches the
compute roof (seed 002). The rest of the module builds on those two phases: a request's
timeline (TTFT, then one decode step per output token), what a million tokens cost, the
context at which the KV reads outgrow the weights, and the tensor-parallel sizes a model
accepts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .dtypes import dtype_name
from .errors import KvError
from .hardware import GpuSpec
from .kv import context_tokens_at_kv_bytes, layer_cached_tokens, sequence_kv_bytes
from .memory import routed_expert_params
from .model import LayerSpec, ModelSpec

__all__ = [
    "DEFAULT_MBU",
    "DEFAULT_MFU",
    "MILLION",
    "SECONDS_PER_HOUR",
    "TYPICAL_MBU",
    "TYPICAL_MFU",
    "DecodeBytes",
    "PhaseTimes",
    "Rates",
    "RequestTimeline",
    "achieved_flop_per_s",
    "arithmetic_intensity",
    "attainable_flop_per_s",
    "attention_pairs",
    "bound_by",
    "compute_time_s",
    "cost_per_million_tokens",
    "crossover_context_tokens",
    "decode_bytes_per_step",
    "decode_context_tokens",
    "decode_flops_per_step",
    "decode_intensity_flop_per_byte",
    "decode_step_s",
    "decode_step_times",
    "decode_token_s",
    "decode_tokens_per_s",
    "decode_weights_read_bytes",
    "effective_ridge_point",
    "experts_touched",
    "kv_share_of_step",
    "matmul_peak_flop_per_s",
    "mean_decode_context_tokens",
    "memory_time_s",
    "output_to_input_cost_ratio",
    "phase_time_s",
    "phase_times",
    "prefill_bytes",
    "prefill_flops",
    "prefill_intensity_flop_per_byte",
    "prefill_time_s",
    "prefill_times",
    "prefill_tokens_per_s",
    "rates_for",
    "request_context_tokens",
    "request_timeline",
    "ridge_point",
    "roofline_time_s",
    "stream_time_s",
    "tensor_parallel_sizes",
    "times_below_ridge",
    "tokens_per_s",
    "tpot_s",
    "ttft_s",
]

ArrayLike = Any

SECONDS_PER_HOUR = 3600.0
MILLION = 1e6

#: Model FLOPs utilisation of the datasheet bound: every FLOP/s the chip is rated for. The default of
#: every time function, of the CLI (``--mfu``), of the exercises and of the decode-speed lesson.
DEFAULT_MFU = 1.0
#: Memory-bandwidth utilisation of the datasheet bound: every byte/s of the datasheet (seed 004's
#: arithmetic: 327.68 GB / 3.35 TB/s = 97.8 ms). The CLI's ``--efficiency`` and the exercises' default.
DEFAULT_MBU = 1.0
#: What a well-tuned prefill reaches: about 0.4–0.6 of the dense peak (MFU as defined in Chowdhery et
#: al. 2022, PaLM, App. B). The prefill-vs-decode lesson starts there.
TYPICAL_MFU = 0.5
#: What well-tuned decode kernels reach: about 0.6–0.9 of the datasheet bandwidth (MBU; Databricks,
#: "LLM Inference Performance Engineering: Best Practices", 2023). The prefill-vs-decode lesson starts there.
TYPICAL_MBU = 0.8


# ---------------------------------------------------------------- rates


@dataclass(frozen=True, slots=True, kw_only=True)
class Rates:
    """What the hardware delivers to one phase: peak FLOP/s and bandwidth per GPU, the two efficiencies, GPUs.

    ``peak_flop_per_s`` may be ``math.inf`` when only the bandwidth is known (no compute roof:
    the phase time is then the memory term alone), and ``bandwidth_bytes_per_s`` likewise
    when only the peak is. ``gpus`` share the work evenly, so their peaks and bandwidths add up.
    """

    peak_flop_per_s: float
    bandwidth_bytes_per_s: float
    mfu: float = DEFAULT_MFU
    mbu: float = DEFAULT_MBU
    gpus: int = 1

    def __post_init__(self) -> None:
        _rate("peak throughput", self.peak_flop_per_s)
        _rate("bandwidth", self.bandwidth_bytes_per_s)
        checks.fraction("MFU", self.mfu)
        checks.fraction("MBU", self.mbu)
        checks.whole("GPUs", self.gpus)


def _rate(name: str, value: float) -> None:
    """A rate is a finite number > 0, or +inf for a roof that does not bind; else ValueError."""
    if not (math.isinf(value) and value > 0):
        checks.positive(name, value)


def matmul_peak_flop_per_s(gpu: GpuSpec, *, weights_dtype: str) -> float:
    """Dense tensor throughput the matrix multiplications run at [FLOP/s].

    FP8 weights on a chip with FP8 tensor cores multiply in FP8 (W8A8): the FP8
    dense peak. Everything else multiplies in BF16: BF16 weights, INT4/MXFP4
    weights dequantised on the fly (W4A16), and FP8 weights on a chip without FP8
    tensor cores (weight-only FP8, as vLLM's Marlin kernels run on Ampere).
    Source: the datasheet columns of data/gpus.csv.
    """
    fp8_math = dtype_name(weights_dtype) == "fp8" and gpu.has_fp8
    return gpu.fp8_dense_flop_per_s if fp8_math else gpu.bf16_dense_flop_per_s


def rates_for(
    gpu: GpuSpec, *, weights_dtype: str, mfu: float = DEFAULT_MFU, mbu: float = DEFAULT_MBU, gpus: int = 1
) -> Rates:
    """The rates of `gpus` × `gpu` for weights stored as `weights_dtype`.

    peak = :func:`matmul_peak_flop_per_s` (FP8 tensor cores for FP8 weights where the chip
    has them, else BF16); bandwidth = the datasheet's. Source: data/gpus.csv.

    >>> from kvcore.hardware import gpu
    >>> h100 = gpu(id="h100", name="H100", memory_gib=80, bandwidth_gb_s=3350, bf16_dense_tflops=989.4)
    >>> rates_for(h100, weights_dtype="bf16", mbu=0.8).peak_flop_per_s
    989400000000000.0
    """
    return Rates(
        peak_flop_per_s=matmul_peak_flop_per_s(gpu, weights_dtype=weights_dtype),
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
        mfu=mfu,
        mbu=mbu,
        gpus=gpus,
    )


# ---------------------------------------------------------------- the roofline


def compute_time_s(flops: ArrayLike, *, peak_flop_per_s: float, mfu: float = DEFAULT_MFU, gpus: int = 1) -> np.ndarray:
    """Seconds the tensor cores need: FLOPs / (peak · GPUs · MFU).

    MFU = 1.0 is the bound; well-tuned prefill reaches about 0.4–0.6 (``TYPICAL_MFU``).
    ``peak_flop_per_s = math.inf`` gives 0 (no compute roof).
    """
    _rate("peak throughput", peak_flop_per_s)
    checks.fraction("MFU", mfu)
    gpus = checks.whole("GPUs", gpus)
    return np.asarray(flops, dtype=float) / (peak_flop_per_s * gpus * mfu)


def memory_time_s(
    num_bytes: ArrayLike, *, bandwidth_bytes_per_s: float, mbu: float = DEFAULT_MBU, gpus: int = 1
) -> np.ndarray:
    """Seconds HBM needs to deliver the bytes: bytes / (bandwidth · GPUs · MBU).

    MBU = 1.0 is the physical bound (what the datasheet allows); real kernels reach
    about 0.6–0.9 of it (``TYPICAL_MBU``). 327.68 GB at 3.35 TB/s: 97.8 ms; over 8 GPUs:
    12.2 ms (seed 004). ``bandwidth_bytes_per_s = math.inf`` gives 0 (no memory roof).
    """
    _rate("bandwidth", bandwidth_bytes_per_s)
    checks.fraction("MBU", mbu)
    gpus = checks.whole("GPUs", gpus)
    return np.asarray(num_bytes, dtype=float) / (bandwidth_bytes_per_s * gpus * mbu)


@dataclass(frozen=True, slots=True)
class PhaseTimes:
    """A phase's two roofline terms [s]; the phase takes the larger of them, ``time_s``.

    ``compute_s`` = FLOPs / (peak · GPUs · MFU), ``memory_s`` = bytes / (bandwidth · GPUs · MBU)
    (:func:`phase_times`). A page shows ``time_s`` and says which term set it.
    """

    compute_s: np.ndarray
    memory_s: np.ndarray

    @property
    def time_s(self) -> np.ndarray:
        """The phase time on the roofline: max(compute_s, memory_s) [s]."""
        return np.maximum(self.compute_s, self.memory_s)


def phase_times(flops: ArrayLike, num_bytes: ArrayLike, *, rates: Rates) -> PhaseTimes:
    """Both terms of a phase on the roofline: FLOPs / (peak · GPUs · MFU) and bytes / (bandwidth · GPUs · MBU) [s].

    >>> terms = phase_times(2e12, 1e9, rates=Rates(peak_flop_per_s=1e15, bandwidth_bytes_per_s=1e12))
    >>> float(terms.compute_s), float(terms.memory_s)
    (0.002, 0.001)
    """
    return PhaseTimes(
        compute_s=compute_time_s(flops, peak_flop_per_s=rates.peak_flop_per_s, mfu=rates.mfu, gpus=rates.gpus),
        memory_s=memory_time_s(
            num_bytes, bandwidth_bytes_per_s=rates.bandwidth_bytes_per_s, mbu=rates.mbu, gpus=rates.gpus
        ),
    )


def phase_time_s(flops: ArrayLike, num_bytes: ArrayLike, *, rates: Rates) -> np.ndarray:
    """Seconds a phase takes on the roofline: max(FLOPs / (peak · GPUs · MFU), bytes / (bandwidth · GPUs · MBU)).

    The one time formula of kvcore: TTFT, every decode step, the CLI's and the lessons'
    times go through it (:func:`phase_times` keeps both terms). Compute and memory traffic
    overlap, so the slower of the two sets the time (Williams et al. 2009); then FLOPs /
    time = min(peak · MFU, intensity · bandwidth · MBU) per GPU.

    >>> float(phase_time_s(2e12, 1e9, rates=Rates(peak_flop_per_s=1e15, bandwidth_bytes_per_s=1e12)))
    0.002
    """
    return phase_times(flops, num_bytes, rates=rates).time_s


def roofline_time_s(
    flops: ArrayLike,
    num_bytes: ArrayLike,
    *,
    peak_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    mfu: float = DEFAULT_MFU,
    mbu: float = DEFAULT_MBU,
) -> np.ndarray:
    """:func:`phase_time_s` on one GPU, the rates given one by one: max(FLOPs / (peak · MFU), bytes / (BW · MBU)) [s].

    FLOPs [FLOP], bytes [B], peak [FLOP/s], bandwidth [B/s]; the efficiencies default to
    ``DEFAULT_MFU``/``DEFAULT_MBU`` (the datasheet bound). Source: Williams et al. 2009, "Roofline".

    >>> float(roofline_time_s(2e12, 1e9, peak_flop_per_s=1e15, bandwidth_bytes_per_s=1e12))
    0.002
    """
    return phase_time_s(
        flops,
        num_bytes,
        rates=Rates(peak_flop_per_s=peak_flop_per_s, bandwidth_bytes_per_s=bandwidth_bytes_per_s, mfu=mfu, mbu=mbu),
    )


def stream_time_s(
    num_bytes: ArrayLike, *, bandwidth_bytes_per_s: float, gpus: int = 1, efficiency: float = DEFAULT_MBU
) -> np.ndarray:
    """Seconds to read `num_bytes` from HBM: bytes / (bandwidth · GPUs · efficiency) (:func:`memory_time_s`)."""
    checks.fraction("efficiency", efficiency)
    return memory_time_s(num_bytes, bandwidth_bytes_per_s=bandwidth_bytes_per_s, mbu=efficiency, gpus=gpus)


def decode_step_s(
    bytes_per_step: ArrayLike, *, bandwidth_bytes_per_s: float, gpus: int = 1, efficiency: float = DEFAULT_MBU
) -> np.ndarray:
    """The memory term of a decode step: bytes_per_step / (bandwidth · GPUs · efficiency) [s].

    Bytes per step [B] (:func:`decode_bytes_per_step`), bandwidth [B/s] per GPU (datasheet,
    data/gpus.csv), efficiency = MBU. :func:`stream_time_s` of the step's bytes;
    :func:`decode_step_times` adds the compute term (seed 004: 327.68 GB / 3.35 TB/s = 97.8 ms).
    """
    return stream_time_s(bytes_per_step, bandwidth_bytes_per_s=bandwidth_bytes_per_s, gpus=gpus, efficiency=efficiency)


def prefill_time_s(flops: ArrayLike, *, peak_flop_per_s: float, gpus: int = 1, mfu: float = DEFAULT_MFU) -> np.ndarray:
    """The compute term of a prefill: FLOPs / (peak dense FLOP/s · GPUs · MFU) (:func:`compute_time_s`).

    The whole TTFT once the prompt is longer than the ridge point in tokens; :func:`ttft_s`
    takes the roofline maximum with the bytes term.
    """
    return compute_time_s(flops, peak_flop_per_s=peak_flop_per_s, mfu=mfu, gpus=gpus)


def ridge_point(*, peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """FLOPs per byte at which a chip turns from memory- to compute-bound: peak / bandwidth.

    H100 SXM: 989.4e12 / 3.35e12 ≈ 295 FLOP/byte (seed 004: "about 300").
    """
    checks.positive("peak throughput", peak_flop_per_s)
    checks.positive("bandwidth", bandwidth_bytes_per_s)
    return peak_flop_per_s / bandwidth_bytes_per_s


def effective_ridge_point(
    *, peak_flop_per_s: float, bandwidth_bytes_per_s: float, mfu: float = DEFAULT_MFU, mbu: float = DEFAULT_MBU
) -> float:
    """FLOPs per byte at which a phase turns compute-bound once efficiencies apply [FLOP/byte].

    Formula: (peak · MFU) / (bandwidth · MBU). With MFU = MBU = 1 it is the
    datasheet ridge point, peak / bandwidth (H100 SXM, BF16: 989.4e12 / 3.35e12 ≈ 295,
    seed 004's "about 300").

    >>> round(effective_ridge_point(peak_flop_per_s=989.4e12, bandwidth_bytes_per_s=3.35e12, mfu=0.5, mbu=0.8), 1)
    184.6
    """
    checks.fraction("MFU", mfu)
    checks.fraction("MBU", mbu)
    return ridge_point(peak_flop_per_s=peak_flop_per_s * mfu, bandwidth_bytes_per_s=bandwidth_bytes_per_s * mbu)


def arithmetic_intensity(flops: ArrayLike, num_bytes: ArrayLike) -> np.ndarray:
    """FLOPs per byte moved: flops / bytes."""
    return np.asarray(flops, dtype=float) / np.asarray(num_bytes, dtype=float)


def achieved_flop_per_s(
    intensity: ArrayLike,
    *,
    peak_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    mfu: float = DEFAULT_MFU,
    mbu: float = DEFAULT_MBU,
) -> np.ndarray:
    """The roofline with real efficiencies: min(peak · MFU, intensity · bandwidth · MBU)  [FLOP/s] per GPU.

    Intensity [FLOP/B], peak [FLOP/s], bandwidth [B/s]. FLOPs / phase_time_s for a kernel of
    that intensity: where a phase sits on a roofline chart (Williams et al. 2009, "Roofline").
    """
    rates = Rates(peak_flop_per_s=peak_flop_per_s, bandwidth_bytes_per_s=bandwidth_bytes_per_s, mfu=mfu, mbu=mbu)
    compute_roof = rates.peak_flop_per_s * rates.mfu
    return np.minimum(compute_roof, np.asarray(intensity, dtype=float) * rates.bandwidth_bytes_per_s * rates.mbu)


def attainable_flop_per_s(intensity: ArrayLike, *, peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> np.ndarray:
    """The datasheet roofline: min(peak, intensity · bandwidth)  [FLOP/s] (``achieved_flop_per_s`` at MFU = MBU = 1)."""
    return achieved_flop_per_s(intensity, peak_flop_per_s=peak_flop_per_s, bandwidth_bytes_per_s=bandwidth_bytes_per_s)


def bound_by(intensity: float, ridge: float) -> str:
    """'memory' below the ridge point, 'compute' at or above it (words for the text)."""
    return "compute" if float(intensity) >= ridge else "memory"


def times_below_ridge(intensity: ArrayLike, ridge: float) -> np.ndarray:
    """How far below the ridge point a kernel runs: ridge / intensity (seed 004: "hundreds of times").

    >>> float(times_below_ridge(1.0, 295.0))
    295.0
    """
    checks.positive("ridge point", ridge)
    checks.positive("intensity", intensity)
    return ridge / np.asarray(intensity, dtype=float)


# ---------------------------------------------------------------- decode: bytes and FLOPs of one step


@dataclass(frozen=True, slots=True)
class DecodeBytes:
    """Bytes one decode step reads, over all GPUs; the parts sum to ``total``."""

    weights_bytes: np.ndarray
    kv_bytes: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """weights + KV bytes read per step."""
        return self.weights_bytes + self.kv_bytes


def decode_bytes_per_step(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    batch: ArrayLike = 1,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
    gpus: int = 1,
    weights_bytes: float | None = None,
) -> DecodeBytes:
    """Bytes read from HBM to produce one token for each of `batch` sequences.

    Formula: weights read + batch · KV(context) (all GPUs; KV heads that tensor
    parallelism replicates are read on every rank that holds them). The weights read
    are :func:`decode_weights_read_bytes`: a dense model reads every weight once per
    step; a MoE model reads the experts its batch's tokens touch, from the active
    parameters at batch 1 towards all of them as the batch grows. `weights_bytes`
    overrides them with a fixed figure (0 counts the KV reads alone, as seed 004's ledger does).
    """
    checks.positive("batch", batch)
    per_gpu_kv = sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=kv_bytes_per_value, tp=gpus)
    kv = gpus * per_gpu_kv * np.asarray(batch, dtype=float)
    if weights_bytes is None:
        weights = decode_weights_read_bytes(model, batch=batch, weight_bytes_per_param=weight_bytes_per_param)
    else:
        weights = np.asarray(checks.positive("weights", weights_bytes, allow_zero=True), dtype=float)
    weights, kv = np.broadcast_arrays(weights, kv)
    return DecodeBytes(weights_bytes=np.array(weights, dtype=float), kv_bytes=np.array(kv, dtype=float))


def experts_touched(*, num_experts: int, experts_per_token: int, tokens: ArrayLike) -> np.ndarray:
    """Expected distinct experts one MoE layer reads for `tokens` tokens: E · (1 − (1 − k/E)^B).

    E routed experts, k chosen per token, B tokens in the step (a decode step: one per
    sequence). Under uniform, independent routing an expert escapes all B tokens with
    probability (1 − k/E)^B, so the expected count grows from k at B = 1 towards E.
    Real routers are not uniform (popular experts repeat), so this is the upper end of
    what a batch reads; the lower end is k. Source: the occupancy argument used for
    MoE decode cost, e.g. DeepSpeed-MoE (Rajbhandari et al. 2022, §5) and "MoE-Lightning"
    (Cao et al. 2024); it is the expected number of occupied bins.

    >>> float(experts_touched(num_experts=8, experts_per_token=2, tokens=1))
    2.0
    >>> round(float(experts_touched(num_experts=128, experts_per_token=8, tokens=64)), 1)
    125.9
    """
    experts = checks.whole("number of experts", num_experts)
    chosen = checks.whole("experts per token", experts_per_token)
    if chosen > experts:
        raise KvError(
            "experts_per_token_exceeds_experts",
            f"{chosen} experts per token exceed the {experts} experts",
            experts=experts,
            experts_per_token=chosen,
        )
    batch = np.asarray(checks.positive("tokens", tokens), dtype=float)
    return experts * (1.0 - (1.0 - chosen / experts) ** batch)


def decode_weights_read_bytes(
    model: ModelSpec, *, batch: ArrayLike = 1, weight_bytes_per_param: float = 2.0
) -> np.ndarray:
    """Weight bytes one decode step reads at `batch` sequences (all GPUs): N_read · b_w.

    Dense: N_read = N (every weight, shared by the batch). MoE with E routed experts and k
    per token: N_read = N_active + (D(B) − k) · e, where D(B) = :func:`experts_touched`
    (one token per sequence) and e = :func:`kvcore.memory.routed_expert_params` / E is one
    expert's parameters summed over the MoE layers. So N_read = N_active at B = 1 and tends to
    N_total as the batch grows (shared experts and the router are in N_active).

    >>> from kvcore.data import load_models
    >>> mixtral = load_models()["mixtral-8x7b"]  # 46.7B total, 12.9B active, 8 experts, top-2
    >>> [round(float(b) / 2e9, 1) for b in decode_weights_read_bytes(mixtral, batch=[1, 4, 64])]
    [12.9, 32.4, 46.7]
    """
    checks.positive("bytes per parameter", weight_bytes_per_param)
    checks.positive("batch", batch)
    active = _params(model, "active")
    routed = routed_expert_params(model)
    if not routed:
        return np.full(np.shape(batch), active * weight_bytes_per_param, dtype=float)
    experts, chosen = model.num_experts, model.num_experts_per_tok
    per_expert = routed / experts
    touched = experts_touched(num_experts=experts, experts_per_token=chosen, tokens=batch)
    return (active + (touched - chosen) * per_expert) * weight_bytes_per_param


def decode_flops_per_step(model: ModelSpec, *, context_tokens: ArrayLike, batch: ArrayLike = 1) -> np.ndarray:
    """FLOPs of one decode step: batch · (2 · N_active + Σ_layers 4 · d_attn · cached tokens).

    2 FLOPs per active parameter per token (Kaplan et al. 2020, Table 1), plus QKᵀ and
    attention·V over the tokens each layer keeps (a sliding layer at most its window).
    """
    active = _params(model, "active")
    context = np.asarray(context_tokens, dtype=float)
    attention = _attention_flops(model, layer_cached_tokens, context)
    return np.asarray(batch, dtype=float) * (2.0 * active + attention)


def decode_intensity_flop_per_byte(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    batch: ArrayLike = 1,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """Arithmetic intensity of one decode step [FLOP/byte]: step FLOPs / (active weights + batch · KV).

    About 1 at batch 1 in BF16 (2 FLOPs per parameter over 2 bytes per parameter;
    seed 004: "hundreds of times below the ridge point"). A batch shares one read
    of the weights, so the intensity grows with the batch until the KV reads,
    which grow just as fast, dominate.
    """
    flops = decode_flops_per_step(model, context_tokens=context_tokens, batch=batch)
    moved = decode_bytes_per_step(
        model,
        context_tokens=context_tokens,
        batch=batch,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
    ).total
    return arithmetic_intensity(flops, moved)


def kv_share_of_step(read: DecodeBytes) -> np.ndarray:
    """Fraction of a decode step's bytes that are KV reads: KV / (weights + KV), in [0, 1].

    Time is proportional to bytes in a memory-bound step, so this is also the
    share of the step's time spent streaming the cache.
    """
    total = np.asarray(read.total, dtype=float)
    kv = np.asarray(read.kv_bytes, dtype=float)
    return np.divide(kv, total, out=np.zeros_like(total), where=total > 0)


# ---------------------------------------------------------------- prefill: FLOPs and bytes of a prompt


def attention_pairs(layer: LayerSpec, prompt_tokens: ArrayLike) -> np.ndarray:
    """(query, key) pairs one causal layer scores over a prompt of n tokens.

    full / mla: n(n+1)/2. sliding (window W, m = min(n, W)): m(m+1)/2 + (n − m)·W.
    linear: 0 (no score matrix).
    """
    n = np.asarray(prompt_tokens, dtype=float)
    if layer.kind == "linear":
        return np.zeros_like(n)
    if layer.kind == "sliding":
        window = float(layer.sliding_window or 0)
        m = np.minimum(n, window)
        return m * (m + 1) / 2 + (n - m) * window
    return n * (n + 1) / 2


def prefill_flops(model: ModelSpec, *, prompt_tokens: ArrayLike) -> np.ndarray:
    """FLOPs to prefill a prompt: 2 · N_active · n + Σ_layers 4 · n_heads · d_head · pairs.

    2 FLOPs per active parameter per token (a multiply and an add; Kaplan et al.
    2020, Table 1), plus QKᵀ and attention·V: 2 · d_attn FLOPs each per causal
    (query, key) pair. For MLA layers d_head is the query/key head dim (an
    approximation: V's head dim is smaller).
    """
    checks.positive("prompt tokens", prompt_tokens)
    active = _params(model, "active")
    n = np.asarray(prompt_tokens, dtype=float)
    return 2.0 * active * n + _attention_flops(model, attention_pairs, n)


def prefill_bytes(
    model: ModelSpec, *, prompt_tokens: ArrayLike, weight_bytes_per_param: float = 2.0, kv_bytes_per_value: float = 2.0
) -> np.ndarray:
    """Bytes prefill moves: N_total · b_w (all weights once: a long prompt routes to every expert) + KV(prompt)."""
    total = _params(model, "total")
    kv = sequence_kv_bytes(model, context_tokens=prompt_tokens, bytes_per_value=kv_bytes_per_value)
    return total * weight_bytes_per_param + kv


def prefill_intensity_flop_per_byte(
    model: ModelSpec, *, prompt_tokens: ArrayLike, weight_bytes_per_param: float = 2.0, kv_bytes_per_value: float = 2.0
) -> np.ndarray:
    """Arithmetic intensity of prefill [FLOP/byte]: prefill FLOPs / (all weights + the KV written).

    About the prompt length for a dense model in BF16 (2 FLOPs per parameter per
    token over 2 bytes per parameter read once), so long prompts cross the ridge.
    """
    flops = prefill_flops(model, prompt_tokens=prompt_tokens)
    moved = prefill_bytes(
        model,
        prompt_tokens=prompt_tokens,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
    )
    return arithmetic_intensity(flops, moved)


def _params(model: ModelSpec, which: str) -> float:
    """The model's active or total parameter count; KvError ``params_unknown`` when it is not known."""
    count = model.active_params if which == "active" else model.total_params
    if count is None:
        # No remedy here: the CLI adds its options (kvcore.cli.REMEDIES), the app words it by code.
        raise KvError("params_unknown", f"the parameter count of {model.name!r} is unknown", model=model.name)
    return float(count)


def _attention_flops(
    model: ModelSpec, pairs: Callable[[LayerSpec, ArrayLike], np.ndarray], tokens: np.ndarray
) -> np.ndarray:
    """Σ_layers 4 · d_attn · (query, key) pairs: QKᵀ and attention·V, 2 · d_attn FLOPs each per pair."""
    d_attn = model.num_attention_heads * model.head_dim
    total = np.zeros_like(tokens)
    for layer, count in model.layer_counts().items():
        total = total + count * 4.0 * d_attn * pairs(layer, tokens)
    return total


# ---------------------------------------------------------------- the two phases on the roofline


def prefill_times(
    model: ModelSpec,
    *,
    prompt_tokens: ArrayLike,
    rates: Rates,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
) -> PhaseTimes:
    """Both roofline terms of the prefill of a prompt [s]: prefill FLOPs and prefill bytes over `rates`.

    compute_s = prefill_flops / (peak · GPUs · MFU), memory_s = prefill_bytes / (bandwidth · GPUs · MBU)
    (:func:`phase_times`); :func:`ttft_s` is their maximum.
    """
    flops = prefill_flops(model, prompt_tokens=prompt_tokens)
    moved = prefill_bytes(
        model,
        prompt_tokens=prompt_tokens,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
    )
    return phase_times(flops, moved, rates=rates)


def ttft_s(
    model: ModelSpec,
    *,
    prompt_tokens: ArrayLike,
    rates: Rates,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """Time to first token [s]: the prefill of the prompt on the roofline, nothing queued before it.

    Formula: max(prefill FLOPs / (peak · GPUs · MFU), prefill bytes / (bandwidth · GPUs · MBU)),
    the larger term of :func:`prefill_times`. Long prompts are compute-bound (the FLOPs term
    wins); a prompt shorter than the ridge point in tokens costs about one read of the
    weights, like a decode step (seed 002).
    """
    return prefill_times(
        model,
        prompt_tokens=prompt_tokens,
        rates=rates,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
    ).time_s


def decode_step_times(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    batch: ArrayLike = 1,
    rates: Rates,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
    weights_bytes: float | None = None,
) -> PhaseTimes:
    """Both roofline terms of one decode step of `batch` sequences of `context_tokens` each [s].

    compute_s = decode FLOPs / (peak · GPUs · MFU), memory_s = :func:`decode_bytes_per_step`
    over ``rates.gpus`` GPUs / (bandwidth · GPUs · MBU) (:func:`phase_times`); :func:`tpot_s`
    is their maximum. Without a compute roof (``rates.peak_flop_per_s = inf``) the FLOPs
    are not counted (compute_s = 0), so a model of unknown parameter count can still be
    timed from `weights_bytes`.
    """
    moved = decode_bytes_per_step(
        model,
        context_tokens=context_tokens,
        batch=batch,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
        gpus=rates.gpus,
        weights_bytes=weights_bytes,
    ).total
    no_roof = math.isinf(rates.peak_flop_per_s)
    flops = 0.0 * moved if no_roof else decode_flops_per_step(model, context_tokens=context_tokens, batch=batch)
    return phase_times(flops, moved, rates=rates)


def tpot_s(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    batch: ArrayLike = 1,
    rates: Rates,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
    weights_bytes: float | None = None,
) -> np.ndarray:
    """Time per output token [s]: one decode step of `batch` sequences of `context_tokens` each.

    Formula: max(step FLOPs / (peak · GPUs · MFU), step bytes / (bandwidth · GPUs · MBU)), the
    larger term of :func:`decode_step_times`. The bytes are :func:`decode_bytes_per_step` over
    ``rates.gpus`` GPUs (KV heads replicated by tensor parallelism read on every rank). Each
    sequence gets one token per step, so this is also the gap between two tokens a user sees.
    At small batches the bytes term wins (memory-bound; seed 004, Pope et al. 2022).
    """
    return decode_step_times(
        model,
        context_tokens=context_tokens,
        batch=batch,
        rates=rates,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
        weights_bytes=weights_bytes,
    ).time_s


def decode_token_s(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    bandwidth_bytes_per_s: float,
    batch: ArrayLike = 1,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
    tp: int = 1,
    efficiency: float = DEFAULT_MBU,
    weights_bytes: float | None = None,
    peak_flop_per_s: float = math.inf,
    mfu: float = DEFAULT_MFU,
) -> np.ndarray:
    """Seconds per decode step (one new token for each of `batch` sequences): :func:`tpot_s`, rates given one by one.

    Formula: max((active weights + batch · KV(context)) / (tp · bandwidth · MBU), FLOPs / (tp · peak · MFU)) [s].
    Without `peak_flop_per_s` only the bandwidth bounds the step (bandwidth-limited decode).
    ``weights_bytes=0`` times the KV reads alone, as seed 004's ledger does:
    Llama 3.1 70B at 1,000,000 tokens on one H100 (3.35 TB/s): 327.68 GB → 97.8 ms.
    """
    rates = Rates(
        peak_flop_per_s=peak_flop_per_s, bandwidth_bytes_per_s=bandwidth_bytes_per_s, mfu=mfu, mbu=efficiency, gpus=tp
    )
    return tpot_s(
        model,
        context_tokens=context_tokens,
        batch=batch,
        rates=rates,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
        weights_bytes=weights_bytes,
    )


# ---------------------------------------------------------------- a request, and what a token costs


def decode_context_tokens(*, prompt_tokens: int, output_tokens: int) -> np.ndarray:
    """Context each decode step attends over: prompt + 1, …, prompt + output − 1 tokens.

    Prefill already yields the first output token; each of the output − 1 decode
    steps then adds one token to the cache. An answer of one token has no decode step.

    >>> decode_context_tokens(prompt_tokens=100, output_tokens=4).tolist()
    [101.0, 102.0, 103.0]
    """
    prompt = checks.whole("prompt tokens", prompt_tokens)
    output = checks.whole("output tokens", output_tokens)
    return np.arange(prompt + 1, prompt + output, dtype=float)


def mean_decode_context_tokens(*, prompt_tokens: ArrayLike, output_tokens: ArrayLike) -> np.ndarray:
    """Mean context of the decode steps: prompt + output / 2 (the mean of prompt + 1 … prompt + output − 1).

    The step in the middle of the answer; while one roof binds, the step time is
    linear in the context, so this step's time is the mean time per output token.

    >>> float(mean_decode_context_tokens(prompt_tokens=100, output_tokens=4))
    102.0
    """
    return np.asarray(prompt_tokens, dtype=float) + np.asarray(output_tokens, dtype=float) / 2


def request_context_tokens(*, prompt_tokens: ArrayLike, output_tokens: ArrayLike) -> np.ndarray:
    """Tokens in the context when the answer ends: prompt + output (what the KV cache holds then)."""
    return np.asarray(prompt_tokens, dtype=float) + np.asarray(output_tokens, dtype=float)


@dataclass(frozen=True, slots=True)
class RequestTimeline:
    """One request from the user's side; ``ttft_s`` + ``decode_s`` = ``total_s``.

    ``step_s`` holds each decode step's time, ``arrival_s`` the moment each output
    token reaches the user (the first one at ``ttft_s``).
    """

    ttft_s: float
    step_s: np.ndarray

    @property
    def decode_s(self) -> float:
        """Seconds spent decoding: the sum of the step times."""
        return float(np.sum(self.step_s))

    @property
    def total_s(self) -> float:
        """Seconds from sending the prompt to the last token: TTFT + decode."""
        return self.ttft_s + self.decode_s

    @property
    def arrival_s(self) -> np.ndarray:
        """When each output token arrives: TTFT, then TTFT + the running sum of the steps."""
        return self.ttft_s + np.concatenate(([0.0], np.cumsum(self.step_s)))

    @property
    def mean_tpot_s(self) -> float:
        """Mean time per output token after the first: decode time / decode steps (NaN without decode)."""
        return self.decode_s / self.step_s.size if self.step_s.size else float("nan")


def request_timeline(
    model: ModelSpec,
    *,
    prompt_tokens: int,
    output_tokens: int,
    batch: int = 1,
    rates: Rates,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
) -> RequestTimeline:
    """A request's prefill, then its decode steps among `batch` sequences as long as its own.

    TTFT = ttft_s(prompt); step k = tpot_s(context = prompt + k, batch), k = 1 … output − 1.
    Every sequence of the batch is assumed to be at the same length (a simplification:
    a real server mixes lengths and may interleave other requests' prefills).
    """
    sizes = {"weight_bytes_per_param": weight_bytes_per_param, "kv_bytes_per_value": kv_bytes_per_value}
    first = float(ttft_s(model, prompt_tokens=prompt_tokens, rates=rates, **sizes))
    contexts = decode_context_tokens(prompt_tokens=prompt_tokens, output_tokens=output_tokens)
    steps = tpot_s(model, context_tokens=contexts, batch=checks.whole("batch", batch), rates=rates, **sizes)
    return RequestTimeline(ttft_s=first, step_s=np.asarray(steps, dtype=float))


def tokens_per_s(step_time_s: ArrayLike, *, batch: ArrayLike = 1) -> np.ndarray:
    """Tokens per second: batch / step time (per sequence: pass batch = 1)."""
    checks.positive("step time", step_time_s)
    return np.asarray(batch, dtype=float) / np.asarray(step_time_s, dtype=float)


def decode_tokens_per_s(batch: ArrayLike, step_s: ArrayLike) -> np.ndarray:
    """Output tokens one GPU produces per second while decoding: batch / step time (:func:`tokens_per_s`)."""
    return tokens_per_s(step_s, batch=batch)


def prefill_tokens_per_s(prompt_tokens: ArrayLike, prefill_s: ArrayLike) -> np.ndarray:
    """Input tokens one GPU processes per second while prefilling: prompt tokens / prefill time."""
    checks.positive("prefill time", prefill_s)
    return np.asarray(prompt_tokens, dtype=float) / np.asarray(prefill_s, dtype=float)


def cost_per_million_tokens(tokens_per_s: ArrayLike, *, price_per_gpu_hour: float) -> np.ndarray:
    """What a million tokens cost on a rented GPU [currency of the price].

    Formula: price per hour / 3600 s / (tokens per second) · 1e6. The GPU is paid
    by the hour whether it computes or waits for memory, so the slower phase per
    token is the dearer one.

    >>> float(cost_per_million_tokens(1000.0, price_per_gpu_hour=3.6))
    1.0
    """
    checks.positive("price per GPU-hour", price_per_gpu_hour)
    checks.positive("tokens per second", tokens_per_s)
    return price_per_gpu_hour / SECONDS_PER_HOUR / np.asarray(tokens_per_s, dtype=float) * MILLION


def output_to_input_cost_ratio(*, input_tokens_per_s: ArrayLike, output_tokens_per_s: ArrayLike) -> np.ndarray:
    """How many times an output token costs an input token: input throughput / output throughput.

    Both are paid at the same GPU-hour price, which cancels: the ratio is how many
    times faster the GPU reads prompt tokens (prefill, in parallel) than it writes
    answer tokens (decode, one step per token). Seed 002: output "costs more".
    """
    checks.positive("input tokens per second", input_tokens_per_s)
    checks.positive("output tokens per second", output_tokens_per_s)
    return np.asarray(input_tokens_per_s, dtype=float) / np.asarray(output_tokens_per_s, dtype=float)


# ---------------------------------------------------------------- when the cache outweighs the weights; TP


def crossover_context_tokens(
    model: ModelSpec,
    *,
    weights_bytes: ArrayLike,
    batch: ArrayLike = 1,
    kv_bytes_per_value: float = 2.0,
    tp: int = 1,
) -> np.ndarray:
    """Context (tokens per sequence) at which the batch's KV reads equal the weights' reads.

    Solves tp · batch · KV_gpu(s) = weights for s (:func:`kvcore.kv.context_tokens_at_kv_bytes`,
    the solver ``memory.break_even_context_tokens`` shares: the weights read per step and the
    weights held in memory are the same bytes). Full attention: s = weights / (batch · bytes
    per token); Llama 3.1 8B in BF16 (16.06 GB of weights, 131,072 B/token): 122,528 tokens
    for one sequence. ∞ when the cache stops growing short of the weights.
    """
    checks.positive("weights", weights_bytes, allow_zero=True)
    return context_tokens_at_kv_bytes(
        model, kv_bytes=weights_bytes, batch=batch, bytes_per_value=kv_bytes_per_value, tp=tp
    )


def tensor_parallel_sizes(model: ModelSpec, *, max_gpus: int = 8) -> list[int]:
    """GPU counts from 1 to `max_gpus` that can split `model` by tensor parallelism.

    Rule (vLLM, ``ModelConfig.verify_with_parallel_config`` and ``get_num_kv_heads``):
    tp must divide the query heads, and divide the KV heads or be a multiple of
    them (then each KV head is replicated on tp / n_kv ranks). MLA keeps one
    latent per token on every rank, so only the query heads constrain it.

    >>> from kvcore.model import uniform_model
    >>> gpt2_like = uniform_model(num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=12, head_dim=64)
    >>> tensor_parallel_sizes(gpt2_like)
    [1, 2, 3, 4, 6]
    """
    checks.whole("max GPUs", max_gpus)
    heads, kv_heads = model.num_attention_heads, model.num_key_value_heads
    latent_only = model.attention_type == "MLA"
    return [
        tp
        for tp in range(1, max_gpus + 1)
        if heads % tp == 0 and (latent_only or kv_heads % tp == 0 or tp % kv_heads == 0)
    ]
