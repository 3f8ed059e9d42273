"""The 1M-token agent: seed 004's ledger, and how to tell whether eviction or quantization pays.

The ledger (seed 004, "O livro-caixa de um milhão de tokens"): bytes per token,
the cache of one long conversation, the weights beside it, GPUs needed just to
hold them, and the time to stream the cache once per decoded token, on one GPU
and sharded over several.

The measurement (seed 004, last section): replay a sample of real conversations
and record, per layer, how much attention mass falls on the top 1% of KV blocks.
Concentrated mass leaves room for eviction (H2O, Zhang et al. 2023; SnapKV, Li
et al. 2024); flat mass means the traffic really reads everything, and the
honest saving is in bytes per value (quantization).

The seed's own figures and scenario (its rounded words, its model and GPU) are
course material: ``course.seeds``. This module computes the ledger for any model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .budget import WHOLE_CARD
from .capacity import gpus_needed
from .dtypes import bytes_per_value as dtype_bytes_per_value
from .errors import KvError
from .hardware import GpuSpec
from .kv import kv_bytes_per_token, kv_cache_bytes, mha_equivalent_bytes_per_token
from .memory import model_weights_bytes
from .model import ModelSpec
from .timing import DEFAULT_MBU, decode_bytes_per_step, decode_token_s, ridge_point, tensor_parallel_sizes

__all__ = [
    "CacheOption",
    "Ledger",
    "answer_stream_s",
    "blocks_in_context",
    "cache_options",
    "cumulative_mass",
    "kept_cache_bytes",
    "ledger",
    "ledgers",
    "mass_verdict",
    "smallest_tensor_parallel",
    "synthetic_attention",
    "top_mass_share",
]

ArrayLike = Any


# ---------------------------------------------------------------- the ledger


def smallest_tensor_parallel(model: ModelSpec, *, at_least: int, limit: int = 1024) -> int:
    """The smallest tensor-parallel size ≥ `at_least` that `model` accepts (see ``tensor_parallel_sizes``).

    Llama 3.1 70B (64 query heads, 8 KV heads) needs 6 GPUs to fit 1M tokens,
    but 6 does not split 8 KV heads: the smallest group is 8 (seed 004's "6 to 8").
    KvError ``no_tensor_parallel_size`` when no size up to `limit` works.
    """
    at_least = checks.whole("GPUs", at_least)
    sizes = [tp for tp in tensor_parallel_sizes(model, max_gpus=max(limit, at_least)) if tp >= at_least]
    if not sizes:
        raise KvError(
            "no_tensor_parallel_size",
            f"{model.name} cannot be split by tensor parallelism over {at_least} GPUs or more",
            model=model.name,
            gpus=at_least,
        )
    return sizes[0]


def answer_stream_s(
    model: ModelSpec,
    *,
    context_tokens: float,
    answer_tokens: int,
    bandwidth_bytes_per_s: float,
    kv_bytes_per_value: float = 2.0,
    tp: int = 1,
    weights_bytes: float | None = None,
    weight_bytes_per_param: float = 2.0,
    efficiency: float = DEFAULT_MBU,
) -> float:
    """Seconds of memory streaming to decode an answer of n tokens after a prompt of s tokens [s].

    Formula: Σ_{i=0}^{n−1} step(s + i), each step (:func:`kvcore.timing.decode_token_s`:
    bytes / (tp · bandwidth [B/s] · efficiency), efficiency = MBU) reading the weights and a
    cache one token longer than the step before (the cache grows as the answer is written).
    ``weights_bytes=0`` counts the KV reads alone. Seed 004 multiplies one step by 1,000
    ("~95 s"): at 1M tokens the cache grows by only 0.1 %.
    """
    n = checks.whole("answer tokens", answer_tokens)
    steps = decode_token_s(
        model,
        context_tokens=float(context_tokens) + np.arange(n, dtype=float),
        bandwidth_bytes_per_s=bandwidth_bytes_per_s,
        kv_bytes_per_value=kv_bytes_per_value,
        tp=tp,
        weights_bytes=weights_bytes,
        weight_bytes_per_param=weight_bytes_per_param,
        efficiency=efficiency,
    )
    return float(np.sum(steps))


@dataclass(frozen=True, slots=True, kw_only=True)
class Ledger:
    """Seed 004's ledger for one model, GPU, context and cache format (one sequence; bytes, s)."""

    kv_bytes_per_token: float
    mha_bytes_per_token: float
    gqa_factor: float
    cache_bytes: float
    weights_bytes: float
    gpus_to_fit: int
    tensor_parallel_group: int
    bandwidth_bytes_per_s: float
    kv_token_s: float
    token_s: float
    kv_tokens_per_s: float
    kv_answer_s: float
    kv_answer_growing_s: float
    answer_s: float
    shards: int
    sharded_kv_token_s: float
    sharded_token_s: float
    fleet_kv_bytes: float
    ridge_flop_per_byte: float


def ledger(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    context_tokens: float,
    kv_bytes_per_value: float = 2.0,
    weight_bytes_per_param: float = 2.0,
    shards: int = 1,
    answer_tokens: int = 1_000,
    utilization: float = WHOLE_CARD.utilization,
) -> Ledger:
    """Every line of seed 004's ledger, computed.

    kv_token_s: KV reads alone on one GPU (the seed's "~95 ms"); token_s adds the
    active weights, which every step reads too. The answer: n · kv_token_s (the
    seed's way), then with the cache growing, then with the weights. Sharded:
    the same bytes over `shards` GPUs (KV heads replicated when shards > KV heads,
    so the fleet may move more, never less). The ridge point uses BF16 dense peak.
    One format of :func:`ledgers`, which holds the arithmetic.
    """
    return ledgers(
        model,
        gpu,
        context_tokens=context_tokens,
        kv_bytes_per_value=[kv_bytes_per_value],
        weight_bytes_per_param=weight_bytes_per_param,
        shards=shards,
        answer_tokens=answer_tokens,
        utilization=utilization,
    )[0]


def ledgers(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    context_tokens: float,
    kv_bytes_per_value: Sequence[float],
    weight_bytes_per_param: float = 2.0,
    shards: int = 1,
    answer_tokens: int = 1_000,
    utilization: float = WHOLE_CARD.utilization,
) -> tuple[Ledger, ...]:
    """:func:`ledger` for several cache formats at once, one per entry of `kv_bytes_per_value`.

    The same formulas as :func:`ledger` (seed 004's ledger; bytes, s), each evaluated once
    over the array of bytes per value instead of once per format: per-token and cache bytes
    scale with b, the step times are :func:`kvcore.timing.decode_token_s` of the formats' KV
    plus the weights, the growing answer is Σ_{i=0}^{n−1} step(s + i) for each format (a
    (formats, n) array summed row by row, as :func:`answer_stream_s` sums one). Every number
    equals the one :func:`ledger` gives for that format (a test compares them on a grid).
    """
    checks.positive("context tokens", context_tokens)
    n = checks.whole("answer tokens", answer_tokens)
    # Typed as ArrayLike (Any): kvcore's per-quantity functions take b as a number or an array.
    per_value: ArrayLike = np.asarray(kv_bytes_per_value, dtype=float).reshape(-1)
    if per_value.size == 0:
        raise KvError("no_cache_formats", "give at least one cache format (bytes per value)")
    per_token = np.asarray(kv_bytes_per_token(model, bytes_per_value=per_value))
    cache = kv_cache_bytes(model, context_tokens=context_tokens, bytes_per_value=per_value)
    weights = model_weights_bytes(model, bytes_per_param=weight_bytes_per_param)
    fits = gpus_needed(total_bytes=weights + cache, memory_bytes=gpu.memory_bytes, utilization=utilization)
    bandwidth = gpu.bandwidth_bytes_per_s

    def step_s(*, tp: int = 1, weights_bytes: float | None = None, context: ArrayLike = context_tokens) -> np.ndarray:
        """Decode steps of every format (weights_bytes=0: the KV reads alone); formats along the first axis."""
        bytes_per_value: ArrayLike = per_value if np.ndim(context) == 0 else per_value[:, None]
        return np.asarray(
            decode_token_s(
                model,
                context_tokens=context,
                bandwidth_bytes_per_s=bandwidth,
                kv_bytes_per_value=bytes_per_value,
                weight_bytes_per_param=weight_bytes_per_param,
                tp=tp,
                weights_bytes=weights_bytes,
            ),
            dtype=float,
        )

    # The answer's steps: context s, s + 1, … s + n − 1 (the cache grows as the answer is written).
    growing = float(context_tokens) + np.arange(n, dtype=float)[None, :]
    kv_answer_growing = [float(np.sum(row)) for row in step_s(weights_bytes=0.0, context=growing)]
    answer = [float(np.sum(row)) for row in step_s(context=growing)]
    kv_token = step_s(weights_bytes=0.0)
    token = step_s()
    sharded_kv_token = step_s(tp=shards, weights_bytes=0.0)
    sharded_token = step_s(tp=shards)
    fleet = decode_bytes_per_step(
        model, context_tokens=context_tokens, kv_bytes_per_value=per_value, gpus=shards, weights_bytes=0.0
    ).kv_bytes
    mha = np.asarray(mha_equivalent_bytes_per_token(model, bytes_per_value=per_value))
    gqa_factor = mha_equivalent_bytes_per_token(model, bytes_per_value=1.0) / kv_bytes_per_token(
        model, bytes_per_value=1.0
    )
    ridge = ridge_point(peak_flop_per_s=gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=bandwidth)
    groups = {fit: smallest_tensor_parallel(model, at_least=max(fit, 1)) for fit in {int(f) for f in fits}}
    out = []
    for i in range(per_value.size):
        fit = int(fits[i])
        kv_step = float(kv_token[i])
        out.append(
            Ledger(
                kv_bytes_per_token=float(per_token[i]),
                mha_bytes_per_token=float(mha[i]),
                gqa_factor=gqa_factor,
                cache_bytes=float(cache[i]),
                weights_bytes=weights,
                gpus_to_fit=fit,
                tensor_parallel_group=groups[fit],
                bandwidth_bytes_per_s=bandwidth,
                kv_token_s=kv_step,
                token_s=float(token[i]),
                kv_tokens_per_s=1.0 / kv_step,
                kv_answer_s=answer_tokens * kv_step,
                kv_answer_growing_s=kv_answer_growing[i],
                answer_s=answer[i],
                shards=shards,
                sharded_kv_token_s=float(sharded_kv_token[i]),
                sharded_token_s=float(sharded_token[i]),
                fleet_kv_bytes=float(fleet[i]),
                ridge_flop_per_byte=ridge,
            )
        )
    return tuple(out)


# ---------------------------------------------------------------- eviction or quantization?


def top_mass_share(attention: ArrayLike, *, top_fraction: ArrayLike = 0.01) -> np.ndarray:
    """Share of the attention mass on the top `top_fraction` of KV blocks, for each row.

    Input: non-negative attention weights summed per KV block, shape (..., blocks)
    (e.g. (layers, blocks) from a replayed conversation). The top k = ceil(f · blocks)
    blocks (at least 1) are the heaviest; output shape (...,) (or (..., len(f)) for
    an array of fractions): Σ top-k weights / Σ all weights. Uniform weights give
    f; all the mass on one block gives 1. The measurement seed 004 recommends.

    >>> float(top_mass_share(np.ones(200), top_fraction=0.01))
    0.01
    """
    kept = cumulative_mass(attention)
    blocks = kept.shape[-1]
    fraction = np.asarray(top_fraction, dtype=float)
    checks.positive("top fraction", fraction)
    _at_most_one("top fraction", fraction)
    k = np.clip(np.ceil(fraction * blocks - 1e-9).astype(int), 1, blocks)
    return kept[..., k - 1]


def cumulative_mass(attention: ArrayLike) -> np.ndarray:
    """Mass kept by keeping the k heaviest blocks, for k = 1 … blocks: shape (..., blocks), ending at 1.

    Sort each row's block weights from heaviest to lightest, take the running sum
    and divide by the row's total. Plotted against k / blocks it is the curve an
    eviction policy with a perfect oracle would ride (H2O and SnapKV can only
    guess the heaviest blocks from past queries, so they do worse).
    """
    weights = np.asarray(attention, dtype=float)
    if weights.ndim == 0 or weights.shape[-1] == 0:
        raise KvError("no_kv_blocks", "attention must have at least one KV block along its last axis")
    if np.any(~np.isfinite(weights)) or np.any(weights < 0):
        raise KvError("attention_not_finite", "attention weights must be finite and not negative")
    totals = weights.sum(axis=-1, keepdims=True)
    if np.any(totals <= 0):
        raise KvError("attention_no_mass", "every row of attention weights needs some mass (a positive sum)")
    heaviest_first = -np.sort(-weights, axis=-1)
    return np.cumsum(heaviest_first, axis=-1) / totals


def synthetic_attention(
    *, blocks: int, layers: int = 8, concentration: float = 1.0, spread: float = 0.5, seed: int = 0
) -> np.ndarray:
    """A stand-in for captured attention: (layers, blocks) Zipf-like weights, each row summing to 1.

    Block of rank r (1 = heaviest) gets weight ∝ r^(−a) · noise, with log-normal
    noise (σ = 0.3) and the ranks shuffled over the positions, per layer, from a
    seeded generator (same inputs, same array). The exponent a runs from
    concentration · (1 − spread/2) in the first layer to concentration · (1 + spread/2)
    in the last, so layers differ as they do in real models. concentration 0 is
    flat attention (every block read equally), 1 is Zipf's law, 2 puts most of
    the mass on a handful of blocks.
    """
    blocks = checks.whole("blocks", blocks)
    layers = checks.whole("layers", layers)
    checks.positive("concentration", concentration, allow_zero=True)
    checks.positive("spread", spread, allow_zero=True)
    if spread > 2:
        raise KvError(
            "above_maximum",
            f"spread must be at most 2 (exponents stay ≥ 0), got {spread}",
            name="spread",
            value=spread,
            maximum=2,
        )
    rng = np.random.default_rng(seed)
    exponents = float(concentration) * np.linspace(1 - spread / 2, 1 + spread / 2, layers)
    ranks = np.arange(1, blocks + 1, dtype=float)
    weights = ranks[None, :] ** (-exponents[:, None]) * rng.lognormal(0.0, 0.3, size=(layers, blocks))
    shuffled = rng.permuted(weights, axis=-1)
    return shuffled / shuffled.sum(axis=-1, keepdims=True)


def kept_cache_bytes(cache_bytes: ArrayLike, *, keep_fraction: ArrayLike) -> np.ndarray:
    """Cache left after evicting all but `keep_fraction` of the blocks: cache · keep (bytes)."""
    fraction = np.asarray(keep_fraction, dtype=float)
    checks.positive("kept fraction", fraction)
    _at_most_one("kept fraction", fraction)
    return np.asarray(cache_bytes, dtype=float) * fraction


def _at_most_one(name: str, fraction: np.ndarray) -> None:
    """KvError ``not_fraction`` when any element of a (positive) fraction exceeds 1."""
    if np.any(fraction > 1):
        value = float(fraction[fraction > 1].flat[0])
        raise KvError("not_fraction", f"{name} must be at most 1 (all of it), got {value}", name=name, value=value)


def blocks_in_context(context_tokens: float, *, block_size: int = 16) -> int:
    """KV blocks a context fills: ceil(tokens / block size) (vLLM's default block holds 16 tokens)."""
    checks.positive("context tokens", context_tokens)
    return math.ceil(float(context_tokens) / checks.whole("block size", block_size))


def mass_verdict(top_share: float) -> str:
    """Words for the text: 'concentrated', 'mixed' or 'flat', from the share of mass on the top 1 % of blocks.

    Teaching thresholds, not a published rule: ≥ 50 % on the top 1 % of blocks is
    concentrated (a small cache keeps most of what is read); ≤ 10 % is flat
    (uniform attention would put 1 % there); in between, measure recall first.
    """
    share = float(top_share)
    return "concentrated" if share >= 0.5 else "flat" if share <= 0.1 else "mixed"


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheOption:
    """One way to shrink a conversation's cache: what is left, what is saved, and what is kept."""

    name: str
    cache_bytes: float
    saved_bytes: float
    tokens_kept: float
    mass_kept: float

    @property
    def mass_lost(self) -> float:
        """Share of the attention mass the dropped blocks held: 1 − mass kept."""
        return 1.0 - self.mass_kept


def cache_options(
    model: ModelSpec,
    *,
    context_tokens: float,
    keep_fraction: float,
    attention: ArrayLike,
    bytes_per_value: float = 2.0,
    quantized: tuple[str, ...] = ("fp8", "int4"),
) -> tuple[CacheOption, ...]:
    """Eviction to `keep_fraction` of the blocks against quantizing every token, from a cache in `bytes_per_value`.

    Eviction: cache · keep, keeping the heaviest blocks and ``top_mass_share`` of
    the mass (averaged over the rows of `attention`; an oracle's best case).
    Quantization: the cache at the smaller format's bytes per value; every token
    stays (mass kept 1, each value rounded). Saved = baseline − what is left.
    """
    baseline = float(kv_cache_bytes(model, context_tokens=context_tokens, bytes_per_value=bytes_per_value))
    evicted = float(kept_cache_bytes(baseline, keep_fraction=keep_fraction))
    mass = float(np.mean(top_mass_share(attention, top_fraction=keep_fraction)))
    options = [
        CacheOption(
            name="evict",
            cache_bytes=evicted,
            saved_bytes=baseline - evicted,
            tokens_kept=float(keep_fraction),
            mass_kept=mass,
        )
    ]
    for dtype in quantized:
        smaller = float(
            kv_cache_bytes(model, context_tokens=context_tokens, bytes_per_value=dtype_bytes_per_value(dtype))
        )
        options.append(
            CacheOption(name=dtype, cache_bytes=smaller, saved_bytes=baseline - smaller, tokens_kept=1.0, mass_kept=1.0)
        )
    return tuple(options)
