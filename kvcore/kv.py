"""KV cache size: bytes per token, per sequence, per batch, per GPU.

The seed's formula (seed 000; Pope et al. 2022, "Efficiently Scaling Transformer
Inference", §2) for a model whose layers all attend to the full context:

    KV_bytes = 2 · L · n_kv · d_head · s · B · b

2 for K and V, L layers, n_kv KV heads, d_head values per head, s tokens of
context, B concurrent sequences, b bytes per value. Here it is applied layer by
layer, so sliding-window, MLA and linear-attention layers each count what they
really hold. Every knob accepts a number or a numpy array (broadcast together),
so the same call gives one figure, a curve or a context × concurrency grid.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import checks
from .errors import KvError
from .model import LayerSpec, ModelSpec

__all__ = [
    "context_tokens_at_kv_bytes",
    "kv_bytes_per_token",
    "kv_cache_bytes",
    "kv_cache_bytes_all_gpus",
    "kv_cache_bytes_by_kind",
    "kv_heads_per_gpu",
    "layer_cached_tokens",
    "layer_values_per_token",
    "mha_equivalent_bytes_per_token",
    "saving_vs_mha",
    "sequence_kv_bytes",
    "state_bytes_per_sequence",
]

ArrayLike = Any


def kv_heads_per_gpu(num_key_value_heads: int, tp: int = 1) -> int:
    """KV heads each tensor-parallel rank stores: max(n_kv // tp, 1).

    When tp exceeds the KV heads, each head is replicated on tp / n_kv ranks
    (vLLM: ``num_kv_heads = max(1, total_num_kv_heads // tp_size)`` in
    vllm/config.py ``ModelConfig.get_num_kv_heads``).

    >>> kv_heads_per_gpu(8, 16)
    1
    """
    tp = checks.whole("tensor parallel size", tp)
    if num_key_value_heads % tp and tp % num_key_value_heads:
        raise KvError(
            "tp_not_dividing",
            f"tensor parallel size {tp} must divide the {num_key_value_heads} KV heads or be a multiple of them",
            tp=tp,
            kv_heads=num_key_value_heads,
        )
    return max(num_key_value_heads // tp, 1)


def layer_values_per_token(layer: LayerSpec, *, tp: int = 1) -> int:
    """Values one layer stores per cached token on one GPU.

    full / sliding: 2 · kv_heads_per_gpu · head_dim (K and V);
    mla: kv_lora_rank + qk_rope_head_dim (one latent, replicated on every rank;
    DeepSeek-V2 paper §2.1, vLLM MLA backend); linear: 0.
    """
    if layer.kind in ("full", "sliding"):
        return 2 * kv_heads_per_gpu(layer.num_key_value_heads, tp) * layer.head_dim
    if layer.kind == "mla":
        return layer.kv_lora_rank + layer.qk_rope_head_dim
    return 0


def layer_cached_tokens(layer: LayerSpec, context_tokens: ArrayLike) -> np.ndarray:
    """Tokens of a sequence one layer keeps: the context, min(context, window), or 0."""
    context = np.asarray(context_tokens, dtype=float)
    if layer.kind == "sliding":
        return np.minimum(context, float(layer.sliding_window or 0))
    if layer.kind == "linear":
        return np.zeros_like(context)
    return context


def kv_bytes_per_token(model: ModelSpec, *, bytes_per_value: float = 2.0, tp: int = 1) -> float:
    """Bytes one more token adds to the cache of all layers, on one GPU.

    Formula: Σ_layers values_per_token(layer) · b  [bytes/token]. Sliding layers
    are counted too (this is the rate while the context is shorter than the
    window, and the figure vLLM divides its pool by). Llama-3.1-8B in BF16:
    2 · 32 · 8 · 128 · 2 = 131,072 B (seed 000).
    """
    checks.positive("bytes per value", bytes_per_value)
    values = sum(layer_values_per_token(layer, tp=tp) * n for layer, n in model.layer_counts().items())
    return float(values) * bytes_per_value


def state_bytes_per_sequence(model: ModelSpec, *, state_bytes_per_value: float = 2.0, tp: int = 1) -> float:
    """Constant bytes per sequence held by linear-attention layers (no per-token growth).

    Formula: n_linear · linear_state_values · b_state / tp (the state's heads are
    split across tensor-parallel ranks).
    """
    checks.positive("state bytes per value", state_bytes_per_value)
    return model.count("linear") * model.linear_state_values * state_bytes_per_value / checks.whole("tp", tp)


def sequence_kv_bytes(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    state_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """Cache bytes of ONE sequence at `context_tokens`, on one GPU.

    Formula: Σ_layers values_per_token · cached_tokens(context) · b + linear state.
    """
    parts = kv_cache_bytes_by_kind(
        model,
        context_tokens=context_tokens,
        bytes_per_value=bytes_per_value,
        tp=tp,
        state_bytes_per_value=state_bytes_per_value,
    )
    return np.asarray(sum(parts.values()), dtype=float)


def kv_cache_bytes(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    concurrency: ArrayLike = 1,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    state_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """KV cache bytes for `concurrency` sequences of `context_tokens` each, on one GPU [bytes].

    Formula: B · sequence_kv_bytes(s) — for full attention 2 · L · n_kv · d_head · s · B · b
    (seed 000). Pass ``context[:, None]`` and ``concurrency[None, :]`` for a grid.

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
    >>> float(kv_cache_bytes(m, context_tokens=131072)) / 2**30
    16.0
    """
    checks.positive("concurrency", concurrency, allow_zero=True)
    per_sequence = sequence_kv_bytes(
        model,
        context_tokens=context_tokens,
        bytes_per_value=bytes_per_value,
        tp=tp,
        state_bytes_per_value=state_bytes_per_value,
    )
    return per_sequence * np.asarray(concurrency, dtype=float)


def kv_cache_bytes_all_gpus(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    concurrency: ArrayLike = 1,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    state_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """KV bytes summed over the tp ranks: tp · kv_cache_bytes(tp) [bytes].

    Replicated KV heads (tp > n_kv) and MLA latents are counted on every rank that holds
    them (vLLM ``get_num_kv_heads``), so the fleet may hold more than one GPU would.
    """
    return tp * kv_cache_bytes(
        model,
        context_tokens=context_tokens,
        concurrency=concurrency,
        bytes_per_value=bytes_per_value,
        tp=tp,
        state_bytes_per_value=state_bytes_per_value,
    )


def context_tokens_at_kv_bytes(
    model: ModelSpec,
    *,
    kv_bytes: ArrayLike,
    batch: ArrayLike = 1,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    state_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """Context (tokens per sequence) at which `batch` sequences' cache over `tp` ranks reaches `kv_bytes`.

    Solves tp · batch · KV_gpu(s) = kv_bytes for s, where KV_gpu(s) is
    ``sequence_kv_bytes`` on one rank. KV(s) is piecewise linear: slope a₁ up to
    the sliding window W (every layer grows), slope a₂ after it (only full and
    MLA layers grow), plus a constant linear-attention state c. So with
    T = kv_bytes / (tp · batch):  s = (T − c) / a₁ if that is ≤ W, else
    W + (T − KV(W)) / a₂, and ∞ when a₂ = 0 (a cache that stops growing may never
    reach T). 0 if the state alone reaches it. The one solver behind
    ``timing.crossover_context_tokens`` and ``memory.break_even_context_tokens``.

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
    >>> float(context_tokens_at_kv_bytes(m, kv_bytes=16 * 2**30))
    131072.0
    """
    checks.positive("KV bytes", kv_bytes, allow_zero=True)
    checks.positive("batch", batch)
    tp = checks.whole("tensor parallel size", tp)
    target = np.asarray(kv_bytes, dtype=float) / (tp * np.asarray(batch, dtype=float))
    window = float(model.sliding_window or 1)  # no sliding layer: any breakpoint, the line is straight
    sizes: dict[str, Any] = {
        "bytes_per_value": bytes_per_value,
        "tp": tp,
        "state_bytes_per_value": state_bytes_per_value,
    }

    def kv(tokens: float) -> float:
        return float(sequence_kv_bytes(model, context_tokens=tokens, **sizes))

    state, at_window = kv(0.0), kv(window)
    slope_before = (at_window - state) / window
    slope_after = kv(window + 1.0) - at_window
    with np.errstate(divide="ignore", invalid="ignore"):
        before = (target - state) / slope_before
        after = window + (target - at_window) / slope_after
    after = np.where(slope_after > 0, after, np.inf)
    crossing = np.where(target <= at_window, before, after)
    return np.where(target <= state, 0.0, crossing)


def mha_equivalent_bytes_per_token(model: ModelSpec, *, bytes_per_value: float = 2.0) -> float:
    """What the cache would cost per token if every query head had its own K and V.

    Formula: 2 · L · n_heads · d_head · b (classic multi-head attention, every layer
    full). The course seed's table uses this for Llama 3 (2 · L · d_model · b, with
    d_model = n_heads · d_head), which is why it is 4× the real GQA figure.
    """
    return 2.0 * model.num_hidden_layers * model.num_attention_heads * model.head_dim * bytes_per_value


def saving_vs_mha(model: ModelSpec, *, context_tokens: float) -> float:
    """Fraction of the classic-MHA cache that the model's real layers save at `context_tokens`."""
    real = float(sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=1.0))
    mha = mha_equivalent_bytes_per_token(model, bytes_per_value=1.0) * context_tokens
    return 1.0 - real / mha


def kv_cache_bytes_by_kind(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    concurrency: ArrayLike = 1,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    state_bytes_per_value: float = 2.0,
) -> dict[str, np.ndarray]:
    """The cache split by layer kind ('full', 'sliding', 'mla', 'linear'), in order of first appearance.

    Formula per kind: B · n_layers_of_kind · values_per_token · cached_tokens(s) · b
    (linear layers: B · their constant state). The parts sum to ``kv_cache_bytes``.
    """
    checks.positive("context tokens", context_tokens, allow_zero=True)
    checks.positive("concurrency", concurrency, allow_zero=True)
    checks.positive("bytes per value", bytes_per_value)
    checks.positive("state bytes per value", state_bytes_per_value)
    users = np.asarray(concurrency, dtype=float)
    parts: dict[str, np.ndarray] = {}
    for layer, n in model.layer_counts().items():
        cached = n * layer_values_per_token(layer, tp=tp) * layer_cached_tokens(layer, context_tokens) * bytes_per_value
        if layer.kind == "linear":
            cached = cached + n * layer.linear_state_values * state_bytes_per_value / checks.whole("tp", tp)
        parts[layer.kind] = parts.get(layer.kind, 0.0) + cached * users
    return parts
