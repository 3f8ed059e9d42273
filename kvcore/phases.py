"""Prefill and decode: one request's timeline, each phase on the roofline, and what a token costs.

Prefill reads the weights once and multiplies them by every prompt token at once,
so its FLOPs per byte grow with the prompt and it runs into the compute roof.
Decode reads the same weights (and the whole KV cache) to produce one token per
sequence, so its FLOPs per byte stay near 1 at batch 1 and it runs along the
bandwidth slope (seed 002; seed 004; Williams, Waterman & Patterson 2009,
"Roofline"; Pope et al. 2022, "Efficiently Scaling Transformer Inference").

Each phase takes the roofline time max(FLOPs / (peak · MFU), bytes / (bandwidth · MBU)):
whichever resource runs out first sets the pace. MFU (model FLOPs utilisation) and
MBU (memory-bandwidth utilisation) are the fractions of the datasheet a real
kernel reaches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .dtypes import dtype_name
from .hardware import GpuSpec
from .model import ModelSpec
from .speed import (
    arithmetic_intensity,
    decode_bytes_per_step,
    decode_flops_per_step,
    prefill_bytes,
    prefill_flops,
    ridge_point,
)

__all__ = [
    "MILLION",
    "SECONDS_PER_HOUR",
    "RequestTimeline",
    "achieved_flop_per_s",
    "compute_time_s",
    "cost_per_million_tokens",
    "decode_context_tokens",
    "decode_intensity_flop_per_byte",
    "decode_tokens_per_s",
    "effective_ridge_point",
    "matmul_peak_flop_per_s",
    "mean_decode_context_tokens",
    "memory_time_s",
    "output_to_input_cost_ratio",
    "prefill_intensity_flop_per_byte",
    "prefill_tokens_per_s",
    "request_context_tokens",
    "request_timeline",
    "roofline_time_s",
    "times_below_ridge",
    "tpot_s",
    "ttft_s",
]

ArrayLike = Any

SECONDS_PER_HOUR = 3600.0
MILLION = 1e6


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


def effective_ridge_point(
    *, peak_flop_per_s: float, bandwidth_bytes_per_s: float, mfu: float = 1.0, mbu: float = 1.0
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


def compute_time_s(flops: ArrayLike, *, peak_flop_per_s: float, mfu: float = 1.0) -> np.ndarray:
    """Seconds the tensor cores need: FLOPs / (peak · MFU)."""
    checks.positive("peak throughput", peak_flop_per_s)
    checks.fraction("MFU", mfu)
    return np.asarray(flops, dtype=float) / (peak_flop_per_s * mfu)


def memory_time_s(num_bytes: ArrayLike, *, bandwidth_bytes_per_s: float, mbu: float = 1.0) -> np.ndarray:
    """Seconds HBM needs to deliver the bytes: bytes / (bandwidth · MBU)."""
    checks.positive("bandwidth", bandwidth_bytes_per_s)
    checks.fraction("MBU", mbu)
    return np.asarray(num_bytes, dtype=float) / (bandwidth_bytes_per_s * mbu)


def roofline_time_s(
    flops: ArrayLike,
    num_bytes: ArrayLike,
    *,
    peak_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    mfu: float = 1.0,
    mbu: float = 1.0,
) -> np.ndarray:
    """Seconds a kernel takes on the roofline: max(FLOPs / (peak · MFU), bytes / (bandwidth · MBU)).

    Compute and memory traffic overlap, so the slower of the two sets the time
    (Williams et al. 2009). Then FLOPs / time = min(peak · MFU, intensity · bandwidth · MBU).

    >>> float(roofline_time_s(2e12, 1e9, peak_flop_per_s=1e15, bandwidth_bytes_per_s=1e12))
    0.002
    """
    compute = compute_time_s(flops, peak_flop_per_s=peak_flop_per_s, mfu=mfu)
    memory = memory_time_s(num_bytes, bandwidth_bytes_per_s=bandwidth_bytes_per_s, mbu=mbu)
    return np.maximum(compute, memory)


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


def ttft_s(
    model: ModelSpec,
    *,
    prompt_tokens: ArrayLike,
    peak_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    mfu: float = 1.0,
    mbu: float = 1.0,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """Time to first token [s]: the prefill of the prompt on the roofline, nothing queued before it.

    Formula: max(prefill FLOPs / (peak · MFU), prefill bytes / (bandwidth · MBU)).
    Long prompts are compute-bound (the FLOPs term wins); a prompt shorter than
    the ridge point in tokens costs about one read of the weights, like a decode step.
    """
    return roofline_time_s(
        prefill_flops(model, prompt_tokens=prompt_tokens),
        prefill_bytes(
            model,
            prompt_tokens=prompt_tokens,
            weight_bytes_per_param=weight_bytes_per_param,
            kv_bytes_per_value=kv_bytes_per_value,
        ),
        peak_flop_per_s=peak_flop_per_s,
        bandwidth_bytes_per_s=bandwidth_bytes_per_s,
        mfu=mfu,
        mbu=mbu,
    )


def tpot_s(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    batch: ArrayLike = 1,
    peak_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    mfu: float = 1.0,
    mbu: float = 1.0,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """Time per output token [s]: one decode step of `batch` sequences of `context_tokens` each.

    Formula: max(step FLOPs / (peak · MFU), step bytes / (bandwidth · MBU)). Each
    sequence gets one token per step, so this is also the gap between two tokens
    a user sees. At small batches the bytes term wins (memory-bound).
    """
    flops = decode_flops_per_step(model, context_tokens=context_tokens, batch=batch)
    moved = decode_bytes_per_step(
        model,
        context_tokens=context_tokens,
        batch=batch,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
    ).total
    return roofline_time_s(
        flops, moved, peak_flop_per_s=peak_flop_per_s, bandwidth_bytes_per_s=bandwidth_bytes_per_s, mfu=mfu, mbu=mbu
    )


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
    peak_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    mfu: float = 1.0,
    mbu: float = 1.0,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
) -> RequestTimeline:
    """A request's prefill, then its decode steps among `batch` sequences as long as its own.

    TTFT = ttft_s(prompt); step k = tpot_s(context = prompt + k, batch), k = 1 … output − 1.
    Every sequence of the batch is assumed to be at the same length (a simplification:
    a real server mixes lengths and may interleave other requests' prefills).
    """
    rates = {
        "peak_flop_per_s": peak_flop_per_s,
        "bandwidth_bytes_per_s": bandwidth_bytes_per_s,
        "mfu": mfu,
        "mbu": mbu,
        "weight_bytes_per_param": weight_bytes_per_param,
        "kv_bytes_per_value": kv_bytes_per_value,
    }
    first = float(ttft_s(model, prompt_tokens=prompt_tokens, **rates))
    contexts = decode_context_tokens(prompt_tokens=prompt_tokens, output_tokens=output_tokens)
    steps = tpot_s(model, context_tokens=contexts, batch=checks.whole("batch", batch), **rates)
    return RequestTimeline(ttft_s=first, step_s=np.asarray(steps, dtype=float))


def prefill_tokens_per_s(prompt_tokens: ArrayLike, prefill_s: ArrayLike) -> np.ndarray:
    """Input tokens one GPU processes per second while prefilling: prompt tokens / prefill time."""
    checks.positive("prefill time", prefill_s)
    return np.asarray(prompt_tokens, dtype=float) / np.asarray(prefill_s, dtype=float)


def decode_tokens_per_s(batch: ArrayLike, step_s: ArrayLike) -> np.ndarray:
    """Output tokens one GPU produces per second while decoding: batch / step time (per user: batch 1)."""
    checks.positive("step time", step_s)
    return np.asarray(batch, dtype=float) / np.asarray(step_s, dtype=float)


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


def times_below_ridge(intensity: ArrayLike, ridge: float) -> np.ndarray:
    """How far below the ridge point a kernel runs: ridge / intensity (seed 004: "hundreds of times").

    >>> float(times_below_ridge(1.0, 295.0))
    295.0
    """
    checks.positive("ridge point", ridge)
    checks.positive("intensity", intensity)
    return ridge / np.asarray(intensity, dtype=float)


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


def achieved_flop_per_s(
    intensity: ArrayLike, *, peak_flop_per_s: float, bandwidth_bytes_per_s: float, mfu: float = 1.0, mbu: float = 1.0
) -> np.ndarray:
    """The roofline with real efficiencies: min(peak · MFU, intensity · bandwidth · MBU)  [FLOP/s].

    FLOPs / roofline_time_s for a kernel of that intensity: where a phase sits on a roofline chart.
    """
    checks.fraction("MFU", mfu)
    checks.fraction("MBU", mbu)
    return np.minimum(peak_flop_per_s * mfu, np.asarray(intensity, dtype=float) * bandwidth_bytes_per_s * mbu)
