"""What Hugging Face transformers' own cache holds, where it differs from a serving engine's.

kvcore's sizes (:mod:`kvcore.kv`) are what a serving engine such as vLLM stores per
sequence. ``model(..., use_cache=True)`` in transformers returns a ``DynamicCache``
whose tensors match those sizes byte for byte for most families (tests/proof runs a
tiny random model of each family and sums the tensors), except in three places:

* sliding-window layers keep the last ``sliding_window − 1`` tokens, not the window
  (``DynamicSlidingWindowLayer.update``, transformers/cache_utils.py);
* Falcon's "new decoder architecture" (Falcon-40B/180B) copies each K/V group to all
  of its query heads before caching, so it caches as many heads as it has queries
  (``FalconAttention._split_heads``, transformers/models/falcon/modeling_falcon.py);
* Gated DeltaNet layers (Qwen3-Next) keep ``linear_conv_kernel_dim`` columns of the
  convolution input, where vLLM keeps one fewer, and a float32 recurrent state
  (``LinearAttentionLayer``, cache_utils.py; ``torch_chunk_gated_delta_rule``,
  transformers/models/qwen3_next/modeling_qwen3_next.py).

Multi-head Latent Attention (DeepSeek-V2/V3) is no longer one of them: since
transformers 5.15.0 the cache holds the latent (kv_lora_rank) and the shared RoPE key
(qk_rope_head_dim), as vLLM does; up to 5.14.0 (4.57.6 and 5.0.0 read too) it held the
expanded per-head K and V (:func:`mla_expanded_values_per_token`).

Every formula here was read from, and proven against, transformers
:data:`TRANSFORMERS_VERSION` (the version requirements-proof.txt pins).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import checks
from .errors import KvError
from .kv import layer_values_per_token, sequence_kv_bytes
from .model import LayerSpec, ModelSpec, with_changes

ArrayLike = Any

TRANSFORMERS_VERSION = "5.18.0"
"""The transformers release whose cache code these functions follow (tests/proof pins it)."""

FLOAT32_BYTES = 4.0
"""Bytes of one float32 value: the dtype of transformers' Gated DeltaNet recurrent state."""


def transformers_sliding_cached_tokens(context_tokens: ArrayLike, *, sliding_window: int) -> np.ndarray:
    """Tokens a transformers sliding-window layer keeps after `context_tokens`: min(s, W − 1).

    The window W counts the token being computed, so the next step needs only the
    previous W − 1 keys and values: ``DynamicSlidingWindowLayer.update`` keeps
    ``states[:, :, -W + 1:, :]`` (transformers/cache_utils.py, v5.18.0). A window
    of 1 slices ``[-0:]``, which keeps every token. kvcore's serving figure counts
    min(s, W) (:func:`kvcore.kv.layer_cached_tokens`), one token more; vLLM too needs
    only the last W − 1 tokens but frees whole blocks (``SlidingWindowManager.
    remove_skipped_blocks``, vllm/v1/core/single_type_kv_cache_manager.py). Units: tokens.

    >>> transformers_sliding_cached_tokens([100, 10_000], sliding_window=4096).tolist()
    [100.0, 4095.0]
    """
    checks.positive("context tokens", context_tokens, allow_zero=True)
    window = checks.whole("sliding window", sliding_window)
    context = np.asarray(context_tokens, dtype=float)
    return np.where(window > 1, np.minimum(context, float(window - 1)), context)


def transformers_sliding_storage_tokens(
    context_tokens: ArrayLike, *, sliding_window: int, last_step_tokens: ArrayLike
) -> np.ndarray:
    """Tokens of memory a transformers sliding layer's K (or V) tensor keeps allocated: min(s − n, W − 1) + n.

    ``DynamicSlidingWindowLayer.update`` concatenates the W − 1 kept tokens with the
    n tokens of the last forward pass and keeps a slice of the result; the slice
    shares the concatenated block, so all of it stays allocated until the next step
    (transformers/cache_utils.py, v5.18.0). Right after a prompt (n = s) that is the
    whole prompt; while decoding (n = 1) it is min(s, W), kvcore's serving figure.
    Units: tokens.

    >>> transformers_sliding_storage_tokens(10_000, sliding_window=4096, last_step_tokens=[10_000, 1]).tolist()
    [10000.0, 4096.0]
    """
    checks.positive("context tokens", context_tokens, allow_zero=True)
    checks.positive("last step tokens", last_step_tokens, allow_zero=True)
    window = checks.whole("sliding window", sliding_window)
    context = np.asarray(context_tokens, dtype=float)
    step = np.asarray(last_step_tokens, dtype=float)
    if np.any(step > context):
        raise KvError(
            "last_step_exceeds_context",
            "last step tokens cannot exceed the context tokens: the last step is part of the context",
        )
    kept_before = np.where(window > 1, np.minimum(context - step, float(window - 1)), context - step)
    return kept_before + step


def transformers_layer_cached_tokens(layer: LayerSpec, context_tokens: ArrayLike) -> np.ndarray:
    """Tokens one layer's transformers cache keeps: s (full, mla), min(s, W − 1) (sliding), 0 (linear)."""
    context = np.asarray(context_tokens, dtype=float)
    if layer.kind == "sliding":
        return transformers_sliding_cached_tokens(context, sliding_window=layer.sliding_window or 0)
    if layer.kind == "linear":
        return np.zeros_like(context)
    return context


def transformers_kv_bytes(model: ModelSpec, *, context_tokens: ArrayLike, bytes_per_value: float = 2.0) -> np.ndarray:
    """Bytes of the per-token K/V (or MLA latent) tensors transformers holds for one sequence.

    Formula: Σ_layers values_per_token(layer) · transformers_cached_tokens(layer, s) · b
    [bytes], the same as :func:`kvcore.kv.sequence_kv_bytes` except that sliding
    layers keep W − 1 tokens; linear-attention states are not included (see
    :func:`transformers_gated_deltanet_state_bytes`). Source: DynamicLayer and
    DynamicSlidingWindowLayer, transformers/cache_utils.py (v5.18.0).
    """
    checks.positive("context tokens", context_tokens, allow_zero=True)
    checks.positive("bytes per value", bytes_per_value)
    total = np.zeros_like(np.asarray(context_tokens, dtype=float))
    for layer, n in model.layer_counts().items():
        total = total + n * layer_values_per_token(layer) * transformers_layer_cached_tokens(layer, context_tokens)
    return total * bytes_per_value


def falcon_new_decoder_kv_bytes(
    model: ModelSpec, *, context_tokens: ArrayLike, bytes_per_value: float = 2.0
) -> np.ndarray:
    """K/V bytes transformers caches for a Falcon "new decoder architecture" model (Falcon-40B, 180B).

    Formula: 2 · L · n_heads · d_head · s · b [bytes]: every query head's copy of its
    group's K and V, where a serving engine keeps the n_kv groups once (2 · L · n_kv ·
    d_head · s · b). ``FalconAttention._split_heads`` broadcasts each group's K and V
    to its n_heads / n_kv query heads before ``layer_past.update`` (transformers/
    models/falcon/modeling_falcon.py, v5.18.0); Falcon-40B: 128 / 8 = 16× the serving size.
    """
    broadcast = with_changes(model, num_key_value_heads=model.num_attention_heads)
    return transformers_kv_bytes(broadcast, context_tokens=context_tokens, bytes_per_value=bytes_per_value)


def gated_deltanet_conv_state_values(
    *,
    linear_num_key_heads: int,
    linear_key_head_dim: int,
    linear_num_value_heads: int,
    linear_value_head_dim: int,
    kept_columns: int,
) -> int:
    """Values of one Gated DeltaNet layer's convolution state: (2 · h_k · d_k + h_v · d_v) · columns.

    The short causal convolution runs over the concatenated q, k, v channels
    (conv_dim = 2 · h_k · d_k + h_v · d_v); the state is the last inputs it needs.
    transformers keeps ``linear_conv_kernel_dim`` columns (``LinearAttentionLayer.
    lazy_initialization``, cache_utils.py, v5.18.0); vLLM keeps kernel − 1
    (``MambaStateShapeCalculator.gated_delta_net_state_shape``,
    vllm/model_executor/layers/mamba/mamba_utils.py). Units: values per sequence.
    """
    conv_dim = 2 * checks.whole("linear_num_key_heads", linear_num_key_heads) * checks.whole(
        "linear_key_head_dim", linear_key_head_dim
    ) + checks.whole("linear_num_value_heads", linear_num_value_heads) * checks.whole(
        "linear_value_head_dim", linear_value_head_dim
    )
    return conv_dim * checks.whole("kept columns", kept_columns, minimum=0)


def gated_deltanet_recurrent_state_values(
    *, linear_num_value_heads: int, linear_key_head_dim: int, linear_value_head_dim: int
) -> int:
    """Values of one Gated DeltaNet layer's recurrent state: h_v · d_k · d_v.

    One d_k × d_v matrix per value head (Yang et al. 2024, "Gated Delta Networks",
    arXiv:2412.06464; shape ``(batch, h_v, d_k, d_v)`` in ``torch_chunk_gated_delta_rule``,
    transformers/models/qwen3_next/modeling_qwen3_next.py). Units: values per sequence.
    """
    return (
        checks.whole("linear_num_value_heads", linear_num_value_heads)
        * checks.whole("linear_key_head_dim", linear_key_head_dim)
        * checks.whole("linear_value_head_dim", linear_value_head_dim)
    )


def vllm_gated_deltanet_state_values(
    *,
    linear_num_key_heads: int,
    linear_key_head_dim: int,
    linear_num_value_heads: int,
    linear_value_head_dim: int,
    linear_conv_kernel_dim: int,
) -> int:
    """Values vLLM keeps per Gated DeltaNet layer and sequence: recurrent + (kernel − 1) · conv_dim.

    This is the figure kvcore's ``linear_state_values`` holds (kvcore/hf_config.py);
    vLLM stores both parts in the model dtype unless ``--mamba-ssm-cache-dtype`` says
    otherwise (``MambaStateDtypeCalculator.gated_delta_net_state_dtype``). Qwen3-Next-80B:
    32 · 128 · 128 + 3 · 8192 = 548,864 values.

    >>> vllm_gated_deltanet_state_values(linear_num_key_heads=16, linear_key_head_dim=128,
    ...     linear_num_value_heads=32, linear_value_head_dim=128, linear_conv_kernel_dim=4)
    548864
    """
    kernel = checks.whole("linear_conv_kernel_dim", linear_conv_kernel_dim)
    recurrent = gated_deltanet_recurrent_state_values(
        linear_num_value_heads=linear_num_value_heads,
        linear_key_head_dim=linear_key_head_dim,
        linear_value_head_dim=linear_value_head_dim,
    )
    conv = gated_deltanet_conv_state_values(
        linear_num_key_heads=linear_num_key_heads,
        linear_key_head_dim=linear_key_head_dim,
        linear_num_value_heads=linear_num_value_heads,
        linear_value_head_dim=linear_value_head_dim,
        kept_columns=kernel - 1,
    )
    return recurrent + conv


def transformers_gated_deltanet_state_bytes(
    *,
    linear_num_key_heads: int,
    linear_key_head_dim: int,
    linear_num_value_heads: int,
    linear_value_head_dim: int,
    linear_conv_kernel_dim: int,
    bytes_per_value: float = 2.0,
    recurrent_bytes_per_value: float = FLOAT32_BYTES,
) -> float:
    """Bytes transformers holds per Gated DeltaNet layer and sequence (constant in context).

    Formula: kernel · conv_dim · b + h_v · d_k · d_v · 4 [bytes]. The convolution
    state is in the model dtype (b bytes per value) and keeps all ``kernel`` columns;
    the recurrent state stays float32 whatever the model dtype, because the PyTorch
    gated delta rule computes in float32 and the cache copies its result
    (``torch_chunk_gated_delta_rule`` in transformers/models/qwen3_next/
    modeling_qwen3_next.py; ``LinearAttentionLayer.update_recurrent_state``,
    cache_utils.py; v5.18.0). Qwen3-Next-80B in BF16: 4 · 8192 · 2 + 524,288 · 4 =
    2,162,688 B per layer, 1.97× vLLM's 1,097,728 B.
    """
    checks.positive("bytes per value", bytes_per_value)
    checks.positive("recurrent bytes per value", recurrent_bytes_per_value)
    conv = gated_deltanet_conv_state_values(
        linear_num_key_heads=linear_num_key_heads,
        linear_key_head_dim=linear_key_head_dim,
        linear_num_value_heads=linear_num_value_heads,
        linear_value_head_dim=linear_value_head_dim,
        kept_columns=checks.whole("linear_conv_kernel_dim", linear_conv_kernel_dim),
    )
    recurrent = gated_deltanet_recurrent_state_values(
        linear_num_value_heads=linear_num_value_heads,
        linear_key_head_dim=linear_key_head_dim,
        linear_value_head_dim=linear_value_head_dim,
    )
    return conv * bytes_per_value + recurrent * recurrent_bytes_per_value


def mla_expanded_values_per_token(
    *, num_attention_heads: int, qk_nope_head_dim: int, qk_rope_head_dim: int, v_head_dim: int
) -> int:
    """Values per token and layer of an MLA cache that stores expanded K and V (transformers ≤ 5.14).

    Formula: n_heads · (d_nope + d_rope) for K + n_heads · d_v for V. Up to 5.14.0,
    ``DeepseekV2Attention`` / ``DeepseekV3Attention.forward`` up-projected the latent and
    cached the per-head key_states and value_states (transformers/models/deepseek_v3/
    modeling_deepseek_v3.py, read in 4.57.6, 5.0.0, 5.14.0); from 5.15.0 they cache the
    latent, kv_lora_rank + qk_rope_head_dim values, as vLLM does (DeepSeek-V2 paper,
    arXiv:2405.04434, §2.1). DeepSeek-V3: 128 · (128 + 64) + 128 · 128 = 40,960 values,
    71× its 576-value latent.

    >>> mla_expanded_values_per_token(num_attention_heads=128, qk_nope_head_dim=128,
    ...     qk_rope_head_dim=64, v_head_dim=128)
    40960
    """
    heads = checks.whole("num_attention_heads", num_attention_heads)
    key = checks.whole("qk_nope_head_dim", qk_nope_head_dim, minimum=0) + checks.whole(
        "qk_rope_head_dim", qk_rope_head_dim, minimum=0
    )
    return heads * key + heads * checks.whole("v_head_dim", v_head_dim)


def mla_expansion_factor(model: ModelSpec) -> float:
    """How many times more an MLA model's cache was in transformers ≤ 5.14 (full per-head K and V) than the latent.

    Formula: n_heads · (d_nope + d_rope + d_v) / (kv_lora_rank + d_rope), with
    d_nope = head_dim − d_rope and d_v = d_nope, as in every DeepSeek-V2/V3 and Kimi K2
    config (v_head_dim = qk_nope_head_dim = 128; ModelSpec keeps head_dim = nope + rope).
    DeepSeek-V3: 128 · (128 + 64 + 128) / 576 = 71.1.
    """
    if model.count("mla") == 0:
        raise KvError("no_mla_layers", f"model {model.id!r} has no MLA layers", model=model.name)
    nope = model.head_dim - model.qk_rope_head_dim
    expanded = mla_expanded_values_per_token(
        num_attention_heads=model.num_attention_heads,
        qk_nope_head_dim=nope,
        qk_rope_head_dim=model.qk_rope_head_dim,
        v_head_dim=nope,
    )
    return expanded / (model.kv_lora_rank + model.qk_rope_head_dim)


def falcon_new_decoder_copy_factor(model: ModelSpec) -> float:
    """How many times more K/V transformers caches for a Falcon new-decoder model than a serving engine.

    Formula: falcon_new_decoder_kv_bytes / sequence_kv_bytes = n_heads / n_kv for a
    model of full-attention layers (Falcon-40B: 128 / 8 = 16). Any context gives the
    same ratio; one token is used.
    """
    copies = falcon_new_decoder_kv_bytes(model, context_tokens=1)
    return float(copies) / float(sequence_kv_bytes(model, context_tokens=1))
