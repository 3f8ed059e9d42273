"""GQA, MQA and MLA: the same model with fewer KV heads or a compressed latent, and what each costs.

Query heads never change; only what is cached per token does:

* MHA — every query head has its own K and V: 2 · n_heads · d_head values per layer.
* GQA — groups of query heads share one K/V head: 2 · n_kv · d_head (Ainslie et al. 2023,
  arXiv:2305.13245).
* MQA — all query heads share one K/V head: 2 · d_head (Shazeer 2019, arXiv:1911.02150).
* MLA — one latent of r_kv values plus a d_rope-wide RoPE key, shared by K and V (no
  factor 2): r_kv + d_rope (DeepSeek-V2, arXiv:2405.04434, §2.1).

The saving is paid elsewhere: the up-projections MLA needs to turn its latent back into
per-head K and V, and the attention arithmetic per cached token. Both are computed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .errors import KvError
from .kv import layer_cached_tokens, sequence_kv_bytes
from .model import ModelSpec, with_changes
from .timing import arithmetic_intensity, prefill_time_s, stream_time_s

__all__ = [
    "DEFAULT_MLA_RANK",
    "DEFAULT_MLA_ROPE_DIM",
    "VARIANTS",
    "AttentionCost",
    "attention_cost",
    "attention_family",
    "attention_flops_per_step",
    "attention_variants",
    "cache_reduction_factor",
    "cache_saving_fraction",
    "default_gqa_kv_heads",
    "kv_projection_params",
    "mean_kv_bytes_per_token",
    "mla_reprojection_flops_per_step",
    "nope_head_dim",
]

ArrayLike = Any

#: The four ways of caching K and V, in the order of the course's table (seed 002).
VARIANTS: tuple[str, ...] = ("MHA", "GQA", "MQA", "MLA")

#: DeepSeek-V2/V3's latent: kv_lora_rank 512 and qk_rope_head_dim 64 (their config.json).
DEFAULT_MLA_RANK = 512
DEFAULT_MLA_ROPE_DIM = 64


def nope_head_dim(model: ModelSpec) -> int:
    """The part of each head's query/key that carries content, not position: d_head − d_rope for MLA.

    DeepSeek's configs give qk_nope_head_dim 128 + qk_rope_head_dim 64 = head_dim 192,
    and v_head_dim = qk_nope_head_dim = 128. Other models rotate the whole head: d_head.
    """
    rope = model.qk_rope_head_dim if model.attention_type == "MLA" else 0
    return model.head_dim - rope


def default_gqa_kv_heads(model: ModelSpec) -> int:
    """A GQA group count to start from: the model's own if it is GQA, else 8, else a divisor near n_heads / 4.

    >>> from kvcore.model import uniform_model
    >>> gpt2_shape = uniform_model(num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=12, head_dim=64)
    >>> default_gqa_kv_heads(gpt2_shape)
    3
    """
    heads = model.num_attention_heads
    if model.attention_type == "GQA":
        return model.num_key_value_heads
    divisors = [n for n in range(1, heads) if heads % n == 0]
    if 8 in divisors:
        return 8
    return max(n for n in divisors if n <= max(heads // 4, 1)) if divisors else heads


def attention_variants(
    model: ModelSpec,
    *,
    gqa_kv_heads: int = 8,
    mla_rank: int = DEFAULT_MLA_RANK,
    mla_rope_dim: int = DEFAULT_MLA_ROPE_DIM,
) -> dict[str, ModelSpec]:
    """`model` rebuilt four ways: MHA, GQA with `gqa_kv_heads`, MQA and MLA, as {name: spec}.

    Same layers, query heads and head_dim; every layer attends to the whole context
    (windows and linear layers are removed so that only the K/V sharing differs).
    MHA: n_kv = n_heads; GQA: n_kv = gqa_kv_heads (must divide n_heads); MQA: n_kv = 1;
    MLA: every layer caches mla_rank + mla_rope_dim values, and its heads are
    nope_head_dim + mla_rope_dim wide (DeepSeek's recipe: content dims plus decoupled RoPE dims).
    """
    heads = model.num_attention_heads
    gqa = checks.whole("GQA KV heads", gqa_kv_heads)
    if heads % gqa:
        raise KvError(
            "kv_heads_not_dividing",
            f"GQA KV heads ({gqa}) must divide the {heads} query heads of {model.name}",
            model=model.name,
            kv_heads=gqa,
            heads=heads,
        )
    rank = checks.whole("MLA latent rank", mla_rank)
    rope = checks.whole("MLA RoPE dimensions", mla_rope_dim, minimum=0)

    def full(kv_heads: int, name: str) -> ModelSpec:
        return with_changes(
            model,
            id=f"{model.id}:{name.lower()}",
            name=f"{model.name} · {name}",
            layer_pattern="full",
            num_key_value_heads=kv_heads,
            kv_lora_rank=0,
            qk_rope_head_dim=0,
        )

    mla = with_changes(
        model,
        id=f"{model.id}:mla",
        name=f"{model.name} · MLA",
        layer_pattern="mla",
        num_key_value_heads=heads,
        head_dim=nope_head_dim(model) + rope,
        kv_lora_rank=rank,
        qk_rope_head_dim=rope,
    )
    return {"MHA": full(heads, "MHA"), "GQA": full(gqa, "GQA"), "MQA": full(1, "MQA"), "MLA": mla}


def attention_family(model: ModelSpec) -> str:
    """'MHA', 'GQA', 'MQA', 'MLA', or 'hybrid' when layers of different kinds are mixed (windows, linear)."""
    if len({layer.kind for layer in model.layers}) > 1:
        return "hybrid"
    return model.attention_type


def cache_saving_fraction(bytes_per_token: ArrayLike, *, baseline_bytes_per_token: float) -> np.ndarray:
    """Fraction of the baseline's cache saved: 1 − bytes / baseline.

    32 query heads sharing 8 KV heads: 1 − 8/32 = 0.75; sharing 1: 1 − 1/32 = 0.96875
    (seed 002's table prints 75 % and "97 %").
    """
    checks.positive("baseline bytes per token", baseline_bytes_per_token)
    return 1.0 - np.asarray(bytes_per_token, dtype=float) / baseline_bytes_per_token


def cache_reduction_factor(bytes_per_token: ArrayLike, *, baseline_bytes_per_token: float) -> np.ndarray:
    """How many times smaller than the baseline: baseline / bytes (4× for GQA 8 of 32 heads)."""
    checks.positive("bytes per token", bytes_per_token)
    return baseline_bytes_per_token / np.asarray(bytes_per_token, dtype=float)


def mean_kv_bytes_per_token(model: ModelSpec, *, context_tokens: ArrayLike, bytes_per_value: float = 2.0) -> np.ndarray:
    """Cache of one sequence divided by its length: sequence_kv_bytes(s) / s  [bytes/token].

    Equals kv_bytes_per_token for models whose layers all keep every token; smaller
    for sliding-window and linear layers, which stop growing (so it falls as s grows).
    """
    checks.positive("context tokens", context_tokens)
    context = np.asarray(context_tokens, dtype=float)
    return sequence_kv_bytes(model, context_tokens=context, bytes_per_value=bytes_per_value) / context


def kv_projection_params(model: ModelSpec) -> float:
    """Weights that turn a token's hidden state into what attention needs as K and V, over all layers.

    full / sliding: 2 · d_model · n_kv · d_head (W_K and W_V);
    mla: d_model · (r_kv + d_rope) (down-projection W_DKV and RoPE key W_KR)
         + r_kv · n_heads · 2 · d_nope (up-projections W_UK and W_UV, d_v = d_nope as in DeepSeek);
    linear: 0 (their projections are not K/V for a cache).
    Source: DeepSeek-V2 paper (arXiv:2405.04434) eqs. 9–11 and 14. Needs hidden_size.
    """
    d_model = checks.whole("hidden_size", model.hidden_size, where=model.name)
    up_width = 2 * model.num_attention_heads * nope_head_dim(model)
    total = 0.0
    for layer, count in model.layer_counts().items():
        if layer.kind in ("full", "sliding"):
            total += count * 2.0 * d_model * layer.num_key_value_heads * layer.head_dim
        elif layer.kind == "mla":
            latent = layer.kv_lora_rank + layer.qk_rope_head_dim
            total += count * (float(d_model) * latent + float(layer.kv_lora_rank) * up_width)
    return total


def attention_flops_per_step(model: ModelSpec, *, context_tokens: ArrayLike, concurrency: ArrayLike = 1) -> np.ndarray:
    """FLOPs of the attention itself in one decode step (scores and weighted sum over the cache).

    Per cached token, per layer, per sequence:
    full / sliding: 2 · n_heads · d_head (q·k) + 2 · n_heads · d_head (p·v) — the same
      for MHA, GQA and MQA: every query head still meets every cached token;
    mla, absorbed form: 2 · n_heads · (r_kv + d_rope) + 2 · n_heads · r_kv — W_UK is folded
      into the query and W_UV into the output, so each head works in the latent space
      (DeepSeek-V2 paper §2.1.2; the decode path of FlashMLA and vLLM's MLA backend);
    linear: 0 here (its state update is not attention over a cache).
    Cached tokens follow the layer's kind (min(s, window) for sliding layers).
    """
    checks.positive("context tokens", context_tokens, allow_zero=True)
    checks.positive("concurrency", concurrency, allow_zero=True)
    context = np.asarray(context_tokens, dtype=float)
    heads = model.num_attention_heads
    total = np.zeros_like(context)
    for layer, count in model.layer_counts().items():
        per_token = {
            "full": 4.0 * heads * layer.head_dim,
            "sliding": 4.0 * heads * layer.head_dim,
            "mla": 2.0 * heads * (2 * layer.kv_lora_rank + layer.qk_rope_head_dim),
            "linear": 0.0,
        }[layer.kind]
        total = total + count * per_token * layer_cached_tokens(layer, context)
    return total * np.asarray(concurrency, dtype=float)


def mla_reprojection_flops_per_step(
    model: ModelSpec, *, context_tokens: ArrayLike, concurrency: ArrayLike = 1
) -> np.ndarray:
    """FLOPs to rebuild per-head K and V from every cached latent in one decode step (MLA without absorption).

    Formula: n_mla_layers · s · B · 2 · r_kv · n_heads · 2 · d_nope (a matrix product of
    the latents with W_UK and W_UV). This is the "re-projection" seed 002 names as MLA's
    cost; the absorbed form (attention_flops_per_step) avoids it. 0 for other layers.
    """
    checks.positive("context tokens", context_tokens, allow_zero=True)
    context = np.asarray(context_tokens, dtype=float)
    rank = model.kv_lora_rank if model.attention_type == "MLA" else 0
    per_token = 2.0 * rank * model.num_attention_heads * 2 * nope_head_dim(model)
    return model.count("mla") * per_token * context * np.asarray(concurrency, dtype=float)


@dataclass(frozen=True, slots=True, kw_only=True)
class AttentionCost:
    """What one decode step's attention costs a variant: bytes read, FLOPs, and their times on a GPU."""

    kv_projection_params: float
    cache_read_bytes: float
    attention_flops: float
    reprojection_flops: float
    read_s: float
    compute_s: float
    reprojection_s: float

    @property
    def flop_per_byte(self) -> float:
        """Attention FLOPs per cache byte read (compare with the GPU's ridge point)."""
        return float(arithmetic_intensity(self.attention_flops, self.cache_read_bytes))


def attention_cost(
    model: ModelSpec,
    *,
    context_tokens: float,
    concurrency: float = 1,
    bytes_per_value: float = 2.0,
    bandwidth_bytes_per_s: float,
    peak_flop_per_s: float,
) -> AttentionCost:
    """One decode step's attention for `concurrency` sequences of `context_tokens`: read the cache, do the math.

    read_s = cache bytes / bandwidth; compute_s = absorbed attention FLOPs / peak;
    reprojection_s = re-projection FLOPs / peak (MLA without absorption; 0 otherwise).
    All ideal bounds (seed 004's roofline reasoning). Weights are left out: they are
    the same for every variant.
    """
    checks.positive("context tokens", context_tokens)
    cache = float(
        sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=bytes_per_value)
        * np.asarray(concurrency, dtype=float)
    )
    flops = float(attention_flops_per_step(model, context_tokens=context_tokens, concurrency=concurrency))
    reprojection = float(mla_reprojection_flops_per_step(model, context_tokens=context_tokens, concurrency=concurrency))
    return AttentionCost(
        kv_projection_params=kv_projection_params(model),
        cache_read_bytes=cache,
        attention_flops=flops,
        reprojection_flops=reprojection,
        read_s=float(stream_time_s(cache, bandwidth_bytes_per_s=bandwidth_bytes_per_s)),
        compute_s=float(prefill_time_s(flops, peak_flop_per_s=peak_flop_per_s)),
        reprojection_s=float(prefill_time_s(reprojection, peak_flop_per_s=peak_flop_per_s)),
    )
