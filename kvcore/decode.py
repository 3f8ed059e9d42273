"""Bandwidth-limited decode: what one step reads, when the KV reads outgrow the weights, and TP.

Each decode step reads every active weight once (shared by the whole batch) and
every cached K and V of every sequence in the batch, even the ones the softmax
will weight at one part in a million: the weight that would justify skipping a
read is computed from the read itself (seed 004). The step is memory-bound, so
its time is bytes ÷ (GPUs · bandwidth · MBU). The building blocks live in
:mod:`kvcore.speed`; this module adds the crossover context, the KV share of a
step and the tensor-parallel sizes a model accepts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import checks
from .kv import sequence_kv_bytes
from .model import ModelSpec
from .speed import DecodeBytes, decode_bytes_per_step, decode_step_s

__all__ = [
    "crossover_context_tokens",
    "decode_token_s",
    "kv_share_of_step",
    "tensor_parallel_sizes",
]

ArrayLike = Any


def decode_token_s(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    bandwidth_bytes_per_s: float,
    batch: ArrayLike = 1,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
    tp: int = 1,
    efficiency: float = 1.0,
    weights_bytes: float | None = None,
) -> np.ndarray:
    """Seconds per decode step (one new token for each of `batch` sequences).

    Formula: (active weights + batch · KV(context)) / (tp · bandwidth · MBU) [s],
    with the bytes of ``speed.decode_bytes_per_step`` (KV heads replicated by
    tensor parallelism counted on every rank) and the time of ``speed.decode_step_s``.
    ``weights_bytes=0`` times the KV reads alone, as seed 004's ledger does:
    Llama 3.1 70B at 1,000,000 tokens on one H100 (3.35 TB/s): 327.68 GB → 97.8 ms.
    """
    read = decode_bytes_per_step(
        model,
        context_tokens=context_tokens,
        batch=batch,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_value=kv_bytes_per_value,
        gpus=tp,
        weights_bytes=weights_bytes,
    )
    return decode_step_s(read.total, bandwidth_bytes_per_s=bandwidth_bytes_per_s, gpus=tp, efficiency=efficiency)


def kv_share_of_step(read: DecodeBytes) -> np.ndarray:
    """Fraction of a decode step's bytes that are KV reads: KV / (weights + KV), in [0, 1].

    Time is proportional to bytes in a memory-bound step, so this is also the
    share of the step's time spent streaming the cache.
    """
    total = np.asarray(read.total, dtype=float)
    kv = np.asarray(read.kv_bytes, dtype=float)
    return np.divide(kv, total, out=np.zeros_like(total), where=total > 0)


def crossover_context_tokens(
    model: ModelSpec,
    *,
    weights_bytes: ArrayLike,
    batch: ArrayLike = 1,
    kv_bytes_per_value: float = 2.0,
    tp: int = 1,
) -> np.ndarray:
    """Context (tokens per sequence) at which the batch's KV reads equal the weights' reads.

    Solves tp · batch · KV_gpu(s) = weights for s, where KV_gpu(s) is
    ``sequence_kv_bytes`` on one rank. KV(s) is piecewise linear: slope a₁ up to
    the sliding window W (every layer grows), slope a₂ after it (only full and
    MLA layers grow), plus a constant linear-attention state c. So with
    T = weights / (tp · batch):  s = (T − c) / a₁ if that is ≤ W, else
    W + (T − KV(W)) / a₂, and ∞ when a₂ = 0 (a model whose cache stops growing
    may never read more KV than weights). 0 if the state alone outweighs them.
    Full attention: s = weights / (batch · bytes per token); Llama 3.1 8B in BF16
    (16.06 GB of weights, 131,072 B/token): 122,528 tokens for one sequence.
    """
    checks.positive("weights", weights_bytes, allow_zero=True)
    checks.positive("batch", batch)
    tp = checks.whole("tensor parallel size", tp)
    target = np.asarray(weights_bytes, dtype=float) / (tp * np.asarray(batch, dtype=float))
    window = float(model.sliding_window or 1)  # no sliding layer: any breakpoint, the line is straight

    def kv(tokens: float) -> float:
        return float(sequence_kv_bytes(model, context_tokens=tokens, bytes_per_value=kv_bytes_per_value, tp=tp))

    state, at_window = kv(0.0), kv(window)
    slope_before = (at_window - state) / window
    slope_after = kv(window + 1.0) - at_window
    with np.errstate(divide="ignore", invalid="ignore"):
        before = (target - state) / slope_before
        after = window + (target - at_window) / slope_after
    after = np.where(slope_after > 0, after, np.inf)
    crossing = np.where(target <= at_window, before, after)
    return np.where(target <= state, 0.0, crossing)


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
