"""Attention's own costs: recomputing K/V without a cache, and the n × n score matrix.

Why cache K and V (course seed 002): without a cache, step t recomputes the K/V of all
t tokens so far, N(N+1)/2 projections for N tokens; with one, N. What FlashAttention
changes (seed 000's correction): the n × n scores never reach HBM, the traffic falls,
the FLOPs and the KV cache stay exactly the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .errors import KvError
from .kv import kv_cache_bytes, layer_values_per_token
from .model import ModelSpec

__all__ = [
    "GRID_CACHED",
    "GRID_COMPUTED",
    "GRID_NOT_YET",
    "GRID_RECOMPUTED",
    "PrefillAttentionMemory",
    "attention_matmul_flops",
    "attention_scores_bytes",
    "flash_attention_hbm_bytes",
    "flash_attention_stats_bytes",
    "flash_attention_tile_bytes",
    "forward_flops_with_cache",
    "forward_flops_without_cache",
    "hbm_traffic_saving",
    "kv_projection_flops_at_step",
    "kv_projection_flops_per_token",
    "kv_projection_flops_with_cache",
    "kv_projection_flops_without_cache",
    "kv_projections_recomputed",
    "kv_projections_with_cache",
    "kv_projections_without_cache",
    "prefill_attention_memory",
    "projection_grid",
    "projections_at_step",
    "recompute_factor",
    "recomputed_at_step",
    "score_row_bytes",
    "standard_attention_hbm_bytes",
]

ArrayLike = Any


def kv_projections_without_cache(generated_tokens: ArrayLike) -> np.ndarray:
    """K/V projections to generate N tokens when nothing is cached: N(N+1)/2.

    Step t recomputes K and V for all t tokens so far: 1 + 2 + … + N (course seed 002).
    """
    checks.positive("tokens", generated_tokens, allow_zero=True)  # before float(): "many" gets a clear message
    n = np.asarray(generated_tokens, dtype=float)
    return n * (n + 1) / 2


def kv_projections_with_cache(generated_tokens: ArrayLike) -> np.ndarray:
    """K/V projections to generate N tokens with a cache: N (one per new token)."""
    checks.positive("tokens", generated_tokens, allow_zero=True)
    return np.asarray(generated_tokens, dtype=float)


def projections_at_step(step: ArrayLike, *, cached: bool) -> np.ndarray:
    """K/V projections for the t-th token alone: t without a cache, 1 with one."""
    t = np.asarray(step, dtype=float)
    return np.ones_like(t) if cached else t


def kv_projections_recomputed(generated_tokens: ArrayLike) -> np.ndarray:
    """K/V projections done again for nothing when N tokens are generated without a cache: N(N−1)/2.

    The difference between N(N+1)/2 and N: every earlier token re-projected at every later step.

    >>> float(kv_projections_recomputed(8))
    28.0
    """
    n = np.asarray(generated_tokens, dtype=float)
    checks.positive("tokens", n, allow_zero=True)
    return kv_projections_without_cache(n) - kv_projections_with_cache(n)


def recomputed_at_step(step: ArrayLike) -> np.ndarray:
    """Earlier tokens whose K/V step t re-projects without a cache: t − 1 (seed 000: token 1,000 redoes 999)."""
    checks.positive("step", step)
    return projections_at_step(step, cached=False) - projections_at_step(step, cached=True)


def attention_scores_bytes(
    tokens: ArrayLike, *, bytes_per_value: float = 2.0, heads: int = 1, layers: int = 1
) -> np.ndarray:
    """Bytes of a materialised n × n score matrix: n² · b · heads · layers.

    Standard attention writes it to HBM (and the softmax P of the same size);
    FlashAttention never does (Dao et al. 2022, arXiv:2205.14135, §3).
    """
    n = np.asarray(tokens, dtype=float)
    checks.positive("tokens", n, allow_zero=True)
    return n * n * bytes_per_value * heads * layers


def standard_attention_hbm_bytes(tokens: ArrayLike, *, head_dim: int, bytes_per_value: float = 2.0) -> np.ndarray:
    """HBM traffic of standard attention for one head: (4·n·d + 4·n²) · b.

    Algorithm 0 of the FlashAttention paper: read Q, K and write S; read S and
    write P; read P, V and write O.
    """
    n = np.asarray(tokens, dtype=float)
    return (4.0 * n * head_dim + 4.0 * n * n) * bytes_per_value


def flash_attention_hbm_bytes(
    tokens: ArrayLike, *, head_dim: int, bytes_per_value: float = 2.0, block_rows: int = 128
) -> np.ndarray:
    """HBM traffic of FlashAttention-2 for one head: (2·n·d + 2·n·d·⌈n/B_r⌉) · b + 4·n.

    Q is read and O written once; K and V are streamed once per block of B_r
    query rows; a float32 log-sum-exp per row is written (Dao 2023, FlashAttention-2, Alg. 1).
    """
    n = np.asarray(tokens, dtype=float)
    passes = np.ceil(n / checks.whole("block rows", block_rows))
    return (2.0 * n * head_dim + 2.0 * n * head_dim * passes) * bytes_per_value + 4.0 * n


# ---------------------------------------------------------------- why cache K and V: real work for a model

#: Cells of the token-by-token grid (rows: generation steps, columns: token positions).
GRID_NOT_YET = 0  # the token does not exist yet at this step
GRID_COMPUTED = 1  # K/V of the new token, computed at this step (with or without a cache)
GRID_CACHED = 2  # K/V read back from the cache
GRID_RECOMPUTED = 3  # K/V computed again although an earlier step already had them (no cache)


def projection_grid(steps: int, *, cached: bool) -> np.ndarray:
    """What happens to each token's K/V at each step: a steps × steps array of GRID_* codes.

    Row t (step t + 1) generates token t; column p is token p. Position p > t: not yet;
    p = t: computed now; p < t: read from the cache, or recomputed when nothing is cached.
    The non-cached cells that are computed add up to N(N+1)/2 without a cache and N with
    one (course seed 002).

    >>> projection_grid(3, cached=False).tolist()
    [[1, 0, 0], [3, 1, 0], [3, 3, 1]]
    """
    n = checks.whole("steps", steps)
    step = np.arange(n)[:, None]
    position = np.arange(n)[None, :]
    earlier = GRID_CACHED if cached else GRID_RECOMPUTED
    return np.where(position > step, GRID_NOT_YET, np.where(position == step, GRID_COMPUTED, earlier))


def kv_projection_flops_per_token(model: ModelSpec) -> float:
    """FLOPs to turn one token's hidden state into what every layer caches for it.

    Formula: Σ_layers 2 · d_model · values_per_token(layer), 2 FLOPs (multiply, add) per
    weight of the projection [FLOP/token]:
    full / sliding: values = 2 · n_kv · d_head (W_K and W_V);
    mla: values = r_kv + d_rope (the latent's down-projection W_DKV and the RoPE key W_KR;
    DeepSeek-V2, arXiv:2405.04434, eqs. 9 and 14);
    linear: 0 — those layers keep a fixed-size state, not per-token K/V, so nothing of
    theirs is counted as "K/V to cache".
    Llama-3.1-8B: 2 · 4096 · (2 · 8 · 128) · 32 = 536,870,912 FLOP/token.
    """
    d_model = checks.whole("hidden_size", model.hidden_size, where=model.name)
    values = sum(layer_values_per_token(layer) * count for layer, count in model.layer_counts().items())
    return 2.0 * d_model * values


def kv_projection_flops_without_cache(model: ModelSpec, *, generated_tokens: ArrayLike) -> np.ndarray:
    """K/V projection FLOPs to generate N tokens recomputing everything: per_token · N(N+1)/2  [FLOP]."""
    return kv_projection_flops_per_token(model) * kv_projections_without_cache(generated_tokens)


def kv_projection_flops_with_cache(model: ModelSpec, *, generated_tokens: ArrayLike) -> np.ndarray:
    """K/V projection FLOPs to generate N tokens with a cache: per_token · N  [FLOP]."""
    return kv_projection_flops_per_token(model) * kv_projections_with_cache(generated_tokens)


def kv_projection_flops_at_step(model: ModelSpec, step: ArrayLike, *, cached: bool) -> np.ndarray:
    """K/V projection FLOPs of the t-th generated token alone: per_token · t, or per_token with a cache."""
    checks.positive("step", step)
    return kv_projection_flops_per_token(model) * projections_at_step(step, cached=cached)


def recompute_factor(generated_tokens: ArrayLike) -> np.ndarray:
    """How many times more K/V work generating N tokens takes without a cache: N(N+1)/2 ÷ N = (N+1)/2.

    The same for every model: each projection costs the same with or without a cache.

    >>> float(recompute_factor(1000))
    500.5
    """
    checks.positive("tokens", generated_tokens)
    return kv_projections_without_cache(generated_tokens) / kv_projections_with_cache(generated_tokens)


def forward_flops_without_cache(model: ModelSpec, *, generated_tokens: ArrayLike) -> np.ndarray:
    """Weight FLOPs to generate N tokens by re-running the model over the whole sequence each step.

    Formula: 2 · N_active · N(N+1)/2 [FLOP] (2 FLOPs per active parameter per token;
    Kaplan et al. 2020). This is what skipping the cache really costs: the K/V of layer
    l are made from layer l − 1's output, so recomputing them means re-running every
    layer below for every earlier token (what Hugging Face ``generate(use_cache=False)``
    does). The attention scores come on top.
    """
    if model.active_params is None:
        raise KvError("params_unknown", f"the parameter count of {model.name!r} is unknown", model=model.name)
    return 2.0 * model.active_params * kv_projections_without_cache(generated_tokens)


def forward_flops_with_cache(model: ModelSpec, *, generated_tokens: ArrayLike) -> np.ndarray:
    """Weight FLOPs to generate N tokens with a cache: each token goes through the model once, 2 · N_active · N."""
    if model.active_params is None:
        raise KvError("params_unknown", f"the parameter count of {model.name!r} is unknown", model=model.name)
    return 2.0 * model.active_params * kv_projections_with_cache(generated_tokens)


# ---------------------------------------------------------------- what FlashAttention changes, and what it does not


def attention_matmul_flops(tokens: ArrayLike, *, head_dim: int, heads: int = 1, batch: ArrayLike = 1) -> np.ndarray:
    """FLOPs of QKᵀ and P·V for n queries over n keys: 4 · n² · d · heads · batch.

    2 · n² · d for each of the two products (no causal mask). FlashAttention performs
    exactly these FLOPs too — it reorders them, it does not remove any (Dao et al. 2022,
    arXiv:2205.14135, Theorem 1: O(n²d) FLOPs).
    """
    n = np.asarray(tokens, dtype=float)
    checks.positive("tokens", n, allow_zero=True)
    checks.positive("batch", batch)
    return 4.0 * n * n * checks.whole("head dim", head_dim) * checks.whole("heads", heads) * np.asarray(batch, float)


def flash_attention_stats_bytes(tokens: ArrayLike, *, heads: int = 1, batch: ArrayLike = 1) -> np.ndarray:
    """The only per-query extra FlashAttention-2 writes to HBM: one float32 log-sum-exp per row, 4 · n · heads · batch.

    It replaces the n × n score matrix (Dao 2023, FlashAttention-2, Algorithm 1, the
    vector L). It grows like n, not n².
    """
    n = np.asarray(tokens, dtype=float)
    checks.positive("tokens", n, allow_zero=True)
    checks.positive("batch", batch)
    return 4.0 * n * checks.whole("heads", heads) * np.asarray(batch, dtype=float)


def flash_attention_tile_bytes(
    *, head_dim: int, bytes_per_value: float = 2.0, block_rows: int = 128, block_cols: int = 64
) -> float:
    """On-chip working set of one FlashAttention thread block: (B_r·d + 2·B_c·d) · b + 4 · B_r · B_c.

    A tile of B_r queries, a tile each of B_c keys and values, and the B_r × B_c block of
    scores in float32 (it lives in registers and shared memory; the output accumulator
    is left out). It does not depend on n: that is why it fits in SRAM at any length.
    """
    d = checks.whole("head dim", head_dim)
    rows, cols = checks.whole("block rows", block_rows), checks.whole("block columns", block_cols)
    checks.positive("bytes per value", bytes_per_value)
    return (rows * d + 2.0 * cols * d) * bytes_per_value + 4.0 * rows * cols


@dataclass(frozen=True, slots=True)
class PrefillAttentionMemory:
    """HBM that one layer's attention holds during prefill; the parts sum to ``total``.

    ``kv_cache_bytes`` (every layer's K/V, kept for the rest of the sequence) and
    ``temporary_bytes`` (what the attention kernel writes and frees: the n × n scores
    for standard attention, the row statistics for FlashAttention).
    """

    kv_cache_bytes: np.ndarray
    temporary_bytes: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """KV cache + temporary bytes."""
        return self.kv_cache_bytes + self.temporary_bytes


def prefill_attention_memory(
    model: ModelSpec,
    *,
    tokens: ArrayLike,
    flash: bool,
    heads: int | None = None,
    batch: int = 1,
    bytes_per_value: float = 2.0,
) -> PrefillAttentionMemory:
    """Memory of a prefill of n tokens, with standard attention or with FlashAttention.

    KV cache: kv_cache_bytes(model, n, batch, b) — the same call whatever ``flash`` says,
    because FlashAttention changes how scores are computed, not what is kept (course
    seed 000). Temporary: n² · heads · batch · b for standard attention (one layer at a
    time), 4 · n · heads · batch for FlashAttention. ``heads`` defaults to the model's
    query heads.
    """
    heads = model.num_attention_heads if heads is None else checks.whole("heads", heads)
    batch = checks.whole("batch", batch)
    kv = kv_cache_bytes(model, context_tokens=tokens, concurrency=batch, bytes_per_value=bytes_per_value)
    scores = attention_scores_bytes(tokens, bytes_per_value=bytes_per_value, heads=heads) * batch
    stats = flash_attention_stats_bytes(tokens, heads=heads, batch=batch)
    return PrefillAttentionMemory(kv_cache_bytes=kv, temporary_bytes=stats if flash else scores)


def hbm_traffic_saving(
    tokens: ArrayLike, *, head_dim: int, bytes_per_value: float = 2.0, block_rows: int = 128
) -> np.ndarray:
    """How many times less HBM traffic FlashAttention-2 moves than standard attention: standard ÷ flash.

    Both per head (the ratio is the same for any number of heads): see
    ``standard_attention_hbm_bytes`` and ``flash_attention_hbm_bytes``. For long
    sequences the n² terms win: 4n² ÷ (2·n·d·n / B_r) = 2·B_r / d, so 2 for d = 128 and
    B_r = 128, 4 for d = 64.

    >>> round(float(hbm_traffic_saving(131072, head_dim=64)), 2)
    4.0
    """
    checks.positive("tokens", tokens)
    standard = standard_attention_hbm_bytes(tokens, head_dim=head_dim, bytes_per_value=bytes_per_value)
    flash = flash_attention_hbm_bytes(tokens, head_dim=head_dim, bytes_per_value=bytes_per_value, block_rows=block_rows)
    return standard / flash


def score_row_bytes(context_tokens: ArrayLike, *, heads: int = 1, bytes_per_value: float = 2.0) -> np.ndarray:
    """Scores of ONE new query against n cached keys, as in a decode step: n · heads · b.

    A 1 × n row, not an n × n matrix: during decode there is almost nothing for
    FlashAttention to keep out of HBM; the step's time goes into reading the KV cache.
    """
    n = np.asarray(context_tokens, dtype=float)
    checks.positive("context tokens", n, allow_zero=True)
    checks.positive("bytes per value", bytes_per_value)
    return n * checks.whole("heads", heads) * bytes_per_value
