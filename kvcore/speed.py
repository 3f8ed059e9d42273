"""Time: decode is bound by memory bandwidth, prefill by tensor throughput.

Decode (one new token per sequence per step) must stream every active weight and
every cached K/V of the batch from HBM, and does about 2 FLOPs per weight read:
far below the chip's ridge point, so its time is bytes ÷ bandwidth (seed 004;
Pope et al. 2022; the roofline model of Williams, Waterman & Patterson 2009).
Prefill processes the whole prompt at once and is bound by FLOPs ÷ throughput.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .kv import layer_cached_tokens, sequence_kv_bytes
from .model import LayerSpec, ModelSpec

__all__ = [
    "DecodeBytes",
    "arithmetic_intensity",
    "attainable_flop_per_s",
    "attention_pairs",
    "bound_by",
    "decode_bytes_per_step",
    "decode_flops_per_step",
    "decode_step_s",
    "prefill_bytes",
    "prefill_flops",
    "prefill_time_s",
    "ridge_point",
    "stream_time_s",
    "tokens_per_s",
]

ArrayLike = Any


def stream_time_s(
    num_bytes: ArrayLike, *, bandwidth_bytes_per_s: float, gpus: int = 1, efficiency: float = 1.0
) -> np.ndarray:
    """Seconds to read `num_bytes` from HBM: bytes / (bandwidth · GPUs · efficiency).

    efficiency = 1.0 is the physical bound (what the datasheet allows); real
    kernels reach about 0.6–0.9 of it (memory-bandwidth utilisation, MBU).
    327.68 GB at 3.35 TB/s: 97.8 ms; over 8 GPUs: 12.2 ms (seed 004).
    """
    checks.positive("bandwidth", bandwidth_bytes_per_s)
    checks.fraction("efficiency", efficiency)
    gpus = checks.whole("GPUs", gpus)
    return np.asarray(num_bytes, dtype=float) / (bandwidth_bytes_per_s * gpus * efficiency)


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

    Formula: active_params · b_w + batch · KV(context) (all GPUs; KV heads that
    tensor parallelism replicates are read on every rank that holds them).
    MoE: only the active parameters are read per token (a lower bound once a
    large batch routes tokens to many different experts). `weights_bytes`
    overrides the active weights (0 counts the KV reads alone, as seed 004's ledger does).
    """
    if weights_bytes is None:
        if model.active_params is None:
            raise ValueError(f"the parameter count of {model.name!r} is unknown: give --weights-gib or --params-b")
        weights_bytes = model.active_params * weight_bytes_per_param
    checks.positive("weights", weights_bytes, allow_zero=True)
    checks.positive("batch", batch)
    per_gpu_kv = sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=kv_bytes_per_value, tp=gpus)
    kv = gpus * per_gpu_kv * np.asarray(batch, dtype=float)
    return DecodeBytes(weights_bytes=np.full_like(kv, float(weights_bytes)), kv_bytes=kv)


def decode_step_s(
    bytes_per_step: ArrayLike, *, bandwidth_bytes_per_s: float, gpus: int = 1, efficiency: float = 1.0
) -> np.ndarray:
    """Seconds per decode step (memory-bound): bytes_per_step / (bandwidth · GPUs · efficiency)."""
    return stream_time_s(bytes_per_step, bandwidth_bytes_per_s=bandwidth_bytes_per_s, gpus=gpus, efficiency=efficiency)


def tokens_per_s(step_time_s: ArrayLike, *, batch: ArrayLike = 1) -> np.ndarray:
    """Tokens per second: batch / step time (per sequence: pass batch = 1)."""
    return np.asarray(batch, dtype=float) / np.asarray(step_time_s, dtype=float)


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
    if model.active_params is None:
        raise ValueError(f"the parameter count of {model.name!r} is unknown: give --params-b")
    n = np.asarray(prompt_tokens, dtype=float)
    return 2.0 * model.active_params * n + _attention_flops(model, attention_pairs, n)


def decode_flops_per_step(model: ModelSpec, *, context_tokens: ArrayLike, batch: ArrayLike = 1) -> np.ndarray:
    """FLOPs of one decode step: batch · (2 · N_active + Σ_layers 4 · d_attn · cached tokens)."""
    if model.active_params is None:
        raise ValueError(f"the parameter count of {model.name!r} is unknown: give --params-b")
    context = np.asarray(context_tokens, dtype=float)
    attention = _attention_flops(model, layer_cached_tokens, context)
    return np.asarray(batch, dtype=float) * (2.0 * model.active_params + attention)


def _attention_flops(
    model: ModelSpec, pairs: Callable[[LayerSpec, ArrayLike], np.ndarray], tokens: np.ndarray
) -> np.ndarray:
    """Σ_layers 4 · d_attn · (query, key) pairs: QKᵀ and attention·V, 2 · d_attn FLOPs each per pair."""
    d_attn = model.num_attention_heads * model.head_dim
    total = np.zeros_like(tokens)
    for layer, count in model.layer_counts().items():
        total = total + count * 4.0 * d_attn * pairs(layer, tokens)
    return total


def prefill_time_s(flops: ArrayLike, *, peak_flop_per_s: float, gpus: int = 1, mfu: float = 1.0) -> np.ndarray:
    """Seconds to prefill (compute-bound): FLOPs / (peak dense FLOP/s · GPUs · MFU).

    This is the time to first token (TTFT) when nothing else is queued.
    MFU = 1.0 is the bound; well-tuned prefill reaches about 0.4–0.6.
    """
    checks.positive("peak throughput", peak_flop_per_s)
    checks.fraction("MFU", mfu)
    gpus = checks.whole("GPUs", gpus)
    return np.asarray(flops, dtype=float) / (peak_flop_per_s * gpus * mfu)


def ridge_point(*, peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """FLOPs per byte at which a chip turns from memory- to compute-bound: peak / bandwidth.

    H100 SXM: 989.4e12 / 3.35e12 ≈ 295 FLOP/byte (seed 004: "about 300").
    """
    checks.positive("peak throughput", peak_flop_per_s)
    checks.positive("bandwidth", bandwidth_bytes_per_s)
    return peak_flop_per_s / bandwidth_bytes_per_s


def arithmetic_intensity(flops: ArrayLike, num_bytes: ArrayLike) -> np.ndarray:
    """FLOPs per byte moved: flops / bytes."""
    return np.asarray(flops, dtype=float) / np.asarray(num_bytes, dtype=float)


def attainable_flop_per_s(intensity: ArrayLike, *, peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> np.ndarray:
    """Roofline: min(peak, intensity · bandwidth)  [FLOP/s]."""
    return np.minimum(peak_flop_per_s, np.asarray(intensity, dtype=float) * bandwidth_bytes_per_s)


def bound_by(intensity: float, ridge: float) -> str:
    """'memory' below the ridge point, 'compute' at or above it (words for the text)."""
    return "compute" if float(intensity) >= ridge else "memory"


def prefill_bytes(
    model: ModelSpec, *, prompt_tokens: ArrayLike, weight_bytes_per_param: float = 2.0, kv_bytes_per_value: float = 2.0
) -> np.ndarray:
    """Bytes prefill moves: all weights once (a long prompt routes to every expert) + the KV it writes."""
    if model.total_params is None:
        raise ValueError(f"the parameter count of {model.name!r} is unknown: give --params-b")
    kv = sequence_kv_bytes(model, context_tokens=prompt_tokens, bytes_per_value=kv_bytes_per_value)
    return model.total_params * weight_bytes_per_param + kv
