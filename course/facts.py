"""Computed facts: the numbers the quiz and the glossary put into their texts, each asked of kvcore once.

A fact is a named function of the catalogues (models and GPUs by id) that returns
its placeholders: a name as text, or a ``Number`` in base units (bytes, seconds,
bytes/s, FLOP/s, tokens, fractions) with the way it is shown (``Number.kind``).
No formatting happens here: the UI turns each ``Number`` into text in the
session's language and memory units (``ui.facts``). A quiz question or a glossary
term names the fact it needs (``course.quiz_data``, ``course.glossary``); two
texts about the same thing name the same fact, so its numbers are computed once.

Inputs are the course's: the seed texts' scenarios (``course.seeds`` and the
sources noted beside each fact) on models and GPUs of data/*.csv.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import kvcore
from course import mistakes, seeds
from kvcore import GpuSpec, ModelSpec
from kvcore.errors import KvError
from kvcore.units import GB, GiB

__all__ = ["FACTS", "Facts", "Kind", "Number", "fact"]

#: How the UI shows a number (its value is always in base units):
#: integer: a small whole number as is ("32"); count: thousands separators ("131,072");
#: quantity: as many decimals as it needs ("295.3"); ratio: shortest form ("0.9", "4");
#: percent: a fraction as a percentage, at most ``decimals`` decimals; billions: a count in billions;
#: size: bytes scaled to read well; memory: bytes in the sidebar's unit (GiB or GB);
#: gib, gb, decimal_size: bytes in a fixed unit; seconds, bandwidth (bytes/s), flop_per_s, tokens_per_s.
Kind = Literal[
    "integer",
    "count",
    "quantity",
    "ratio",
    "percent",
    "billions",
    "size",
    "memory",
    "gib",
    "gb",
    "decimal_size",
    "seconds",
    "bandwidth",
    "flop_per_s",
    "tokens_per_s",
]


@dataclass(frozen=True, slots=True)
class Number:
    """A computed number in base units, and how the UI shows it (``decimals`` for percentages)."""

    value: float
    kind: Kind
    decimals: int = 1


Facts = Mapping[str, str | Number]
Catalogue = Mapping[str, ModelSpec]
Gpus = Mapping[str, GpuSpec]

#: The models and GPUs the texts speak of, by id in data/*.csv.
LLAMA_8B = "llama-3.1-8b"  # seed 000's example ("LLaMA 3 8B" in its table has the same attention shape)
LLAMA_70B = "llama-3.1-70b"
DEEPSEEK_V3 = "deepseek-v3"  # MLA and MoE
GEMMA_3 = "gemma-3-27b"  # sliding-window layers
H100 = "h100-sxm"
RTX_4090 = "rtx-4090"


def _integer(value: float) -> Number:
    """A small whole number shown as it is (layers, heads, GPUs)."""
    return Number(float(value), "integer")


def _count(value: float) -> Number:
    """A count shown with thousands separators (tokens, blocks, requests)."""
    return Number(float(value), "count")


# ---------------------------------------------------------------- the KV cache and its size


def recompute_without_cache(models: Catalogue, gpus: Gpus) -> Facts:
    """K/V projections of 1,000 tokens without a cache (1 + 2 + … + N) and with one (N), and their ratio.

    Seed 000: "token number 1,000 would recompute the 999 before it" (``seeds.SEED_000_RECOMPUTE_TOKENS``).
    Units: projections.
    """
    tokens = seeds.SEED_000_RECOMPUTE_TOKENS
    return {
        "tokens": _count(tokens),
        "without": _count(float(kvcore.kv_projections_without_cache(tokens))),
        "with_cache": _count(float(kvcore.kv_projections_with_cache(tokens))),
        "factor": Number(float(kvcore.recompute_factor(tokens)), "quantity"),
    }


def kv_cache(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B's cache: bytes per token (2 · L · H_kv · d · b = 128 KiB, seed 000) and at 131,072 tokens."""
    model, context = models[LLAMA_8B], 131072
    return {
        "model": model.name,
        "per_token": Number(kvcore.kv_bytes_per_token(model), "size"),
        "context": _count(context),
        "long": Number(float(kvcore.kv_cache_bytes(model, context_tokens=context)), "memory"),
    }


def bytes_per_token_options(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B's bytes per token in BF16, and the careless answers: MHA's heads, K without V, FP32.

    One byte per value gives exactly what forgetting the factor 2 (K and V) gives. Source: seed 000.
    """
    model = models[LLAMA_8B]
    right = kvcore.kv_bytes_per_token(model, bytes_per_value=kvcore.bytes_per_value("bf16"))
    return {
        "model": model.name,
        "layers": _integer(model.num_hidden_layers),
        "kv_heads": _integer(model.num_key_value_heads),
        "head_dim": _integer(model.head_dim),
        "bytes": _count(right),
        "right": Number(right, "size"),
        "mha": Number(kvcore.mha_equivalent_bytes_per_token(model), "size"),
        "half": Number(kvcore.kv_bytes_per_token(model, bytes_per_value=kvcore.bytes_per_value("fp8")), "size"),
        "fp32": Number(kvcore.kv_bytes_per_token(model, bytes_per_value=kvcore.bytes_per_value("fp32")), "size"),
    }


def weights_vs_cache(models: Catalogue, gpus: Gpus) -> Facts:
    """Seed 002's "30 GB model" (Qwen2.5 32B in INT8): its weights, and the context whose cache weighs as much."""
    model = models["qwen2.5-32b"]
    weights = kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value("int8"))
    return {
        "model": model.name,
        "weights": Number(weights, "memory"),
        "tokens": _count(float(kvcore.break_even_context_tokens(model, weights_bytes=weights))),
    }


def cache_scaling(models: Catalogue, gpus: Gpus) -> Facts:
    """One user at 8,192 tokens against two at twice that: the cache is linear in both (× 4)."""
    model, context = models[LLAMA_8B], 8192
    return {
        "model": model.name,
        "context": _count(context),
        "context2": _count(2 * context),
        "one": Number(float(kvcore.kv_cache_bytes(model, context_tokens=context, concurrency=1)), "memory"),
        "four": Number(float(kvcore.kv_cache_bytes(model, context_tokens=2 * context, concurrency=2)), "memory"),
    }


def gib_and_gb(models: Catalogue, gpus: Gpus) -> Facts:
    """The course table's "2 GB" for LLaMA 3 8B at 4,096 tokens (MHA), in bytes, GiB and GB, and with GQA."""
    model, context = models[LLAMA_8B], 4096
    mha = float(kvcore.mha_cache_bytes(model, context_tokens=context))
    return {
        "bytes": _count(mha),
        "gib": Number(mha, "gib"),
        "gb": Number(mha, "gb"),
        "seed_as_gib": Number(2 * GB, "gib"),  # the table's "2 GB", read as decimal
        "real": Number(float(kvcore.kv_cache_bytes(model, context_tokens=context)), "gib"),
    }


def gpu_memory_units(models: Catalogue, gpus: Gpus) -> Facts:
    """An "80 GB" H100 reports 80 GiB: the same bytes in GiB (2^30) and GB (10^9)."""
    memory = 80 * GiB
    return {"gib": Number(memory, "gib"), "gb": Number(memory, "gb")}


# ---------------------------------------------------------------- reading a config


def head_dim_from_config(models: Catalogue, gpus: Gpus) -> Facts:
    """Qwen3 32B states head_dim 128; hidden_size / heads (the careless derivation) gives 80."""
    model = models["qwen3-32b"]
    wrong = mistakes.head_dim_from_hidden(model)
    return {
        "model": model.name,
        "hidden": _count(model.hidden_size),
        "heads": _integer(model.num_attention_heads),
        "head_dim": _integer(model.head_dim),
        "derived": _integer(wrong.head_dim if wrong else model.head_dim),
    }


def ignoring_kv_heads(models: Catalogue, gpus: Gpus) -> Facts:
    """Taking the query heads for KV heads multiplies Llama 3.1 8B's cache by H / H_kv (and by 2 more without V)."""
    model = models[LLAMA_8B]
    wrong = mistakes.ignoring_kv_heads(model)
    ratio = kvcore.kv_bytes_per_token(wrong) / kvcore.kv_bytes_per_token(model) if wrong else 1.0
    return {
        "model": model.name,
        "heads": _integer(model.num_attention_heads),
        "kv_heads": _integer(model.num_key_value_heads),
        "ratio": Number(ratio, "ratio"),
        "double": Number(2 * ratio, "ratio"),
    }


# ---------------------------------------------------------------- attention variants


def mha(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 2 7B (one KV head per query head): its bytes per token."""
    model = models["llama-2-7b"]
    return {"model": model.name, "per_token": Number(kvcore.kv_bytes_per_token(model), "size")}


def gqa(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B's heads, and how many times GQA (and MQA) shrink its cache against MHA: H / H_kv.

    Source: kvcore.cache_reduction_factor over kvcore.attention_variants; seed 002's table.
    """
    model = models[LLAMA_8B]
    mha_bytes = kvcore.mha_equivalent_bytes_per_token(model)
    mqa = kvcore.attention_variants(model)["MQA"]
    return {
        "model": model.name,
        "heads": _integer(model.num_attention_heads),
        "kv_heads": _integer(model.num_key_value_heads),
        "factor": Number(
            float(kvcore.cache_reduction_factor(kvcore.kv_bytes_per_token(model), baseline_bytes_per_token=mha_bytes)),
            "quantity",
        ),
        "mqa_factor": Number(
            float(kvcore.cache_reduction_factor(kvcore.kv_bytes_per_token(mqa), baseline_bytes_per_token=mha_bytes)),
            "quantity",
        ),
    }


def mqa_saving(models: Catalogue, gpus: Gpus) -> Facts:
    """Share of MHA's cache that MQA and GQA save on 32 query heads: 1 − H_kv / H (seed 002: 75 %, "97 %")."""
    model = models[LLAMA_8B]
    variants = kvcore.attention_variants(model)
    mha_bytes = kvcore.kv_bytes_per_token(variants["MHA"])

    def saving(name: str) -> Number:
        fraction = kvcore.cache_saving_fraction(
            kvcore.kv_bytes_per_token(variants[name]), baseline_bytes_per_token=mha_bytes
        )
        return Number(float(fraction), "percent", decimals=3)

    return {
        "heads": _integer(model.num_attention_heads),
        "kv_heads": _integer(model.num_key_value_heads),
        "exact": saving("MQA"),
        "gqa": saving("GQA"),
    }


def mqa(models: Catalogue, gpus: Gpus) -> Facts:
    """Falcon 7B (one KV head for all its query heads): its heads and bytes per token."""
    model = models["falcon-7b"]
    return {
        "model": model.name,
        "heads": _integer(model.num_attention_heads),
        "per_token": Number(kvcore.kv_bytes_per_token(model), "size"),
    }


def mla(models: Catalogue, gpus: Gpus) -> Facts:
    """DeepSeek-V3's bytes per token with MLA (L · (r_kv + d_rope) · b), and with a K and V per head (MHA)."""
    model = models[DEEPSEEK_V3]
    return {
        "model": model.name,
        "per_token": Number(kvcore.kv_bytes_per_token(model), "size"),
        "mha": Number(kvcore.mha_equivalent_bytes_per_token(model), "size"),
    }


def sliding_window(models: Catalogue, gpus: Gpus) -> Facts:
    """Gemma 3 27B's window (tokens) and how many of its layers slide."""
    model = models[GEMMA_3]
    kinds = kvcore.layer_kinds(model.layer_pattern, model.num_hidden_layers)
    return {
        "model": model.name,
        "window": _count(model.sliding_window or 0),
        "sliding": _integer(kinds.count("sliding")),
        "layers": _integer(model.num_hidden_layers),
    }


def sliding_as_full(models: Catalogue, gpus: Gpus) -> Facts:
    """Gemma 3 27B's cache at 32,768 tokens, and what counting its sliding layers as full gives (the mistake)."""
    model, context = models[GEMMA_3], 32_768
    right = float(kvcore.sequence_kv_bytes(model, context_tokens=context))
    wrong = mistakes.sliding_as_full(model)
    full = float(kvcore.sequence_kv_bytes(wrong, context_tokens=context)) if wrong else right
    return {
        **sliding_window(models, gpus),
        "context": _count(context),
        "right": Number(right, "memory"),
        "full": Number(full, "memory"),
    }


def linear_attention(models: Catalogue, gpus: Gpus) -> Facts:
    """Qwen3-Next 80B-A3B: how many of its layers are linear attention (a fixed state, no growing cache)."""
    model = models["qwen3-next-80b-a3b"]
    kinds = kvcore.layer_kinds(model.layer_pattern, model.num_hidden_layers)
    return {
        "model": model.name,
        "linear": _integer(kinds.count("linear")),
        "layers": _integer(model.num_hidden_layers),
    }


def moe(models: Catalogue, gpus: Gpus) -> Facts:
    """DeepSeek-V3's parameters (data/models.csv): all resident in memory, a few active per token (params)."""
    model = models[DEEPSEEK_V3]
    return {
        "model": model.name,
        "total": Number(float(model.total_params or 0), "billions"),
        "active": Number(float(model.active_params or 0), "billions"),
    }


# ---------------------------------------------------------------- quantization


def quantization(models: Catalogue, gpus: Gpus) -> Facts:
    """Bytes per value of BF16, FP8 and INT4 (INT4 is 0.5, not 0)."""
    return {dtype: Number(kvcore.bytes_per_value(dtype), "ratio") for dtype in ("bf16", "fp8", "int4")}


def cache_by_format(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B's cache at seed 000's 128k row (131,072 tokens) in BF16, FP8 and INT4."""
    model, context = models[LLAMA_8B], 131072

    def cache(dtype: str) -> Number:
        bytes_per_value = kvcore.bytes_per_value(dtype)
        return Number(
            float(kvcore.kv_cache_bytes(model, context_tokens=context, bytes_per_value=bytes_per_value)), "memory"
        )

    return {
        "model": model.name,
        "context": _count(context),
        "bf16": cache("bf16"),
        "fp8": cache("fp8"),
        "int4": cache("int4"),
    }


# ---------------------------------------------------------------- the 1M-token agent (seed 004)


def seed_004_ledger(models: Catalogue, gpus: Gpus) -> Facts:
    """Seed 004's ledger (``kvcore.ledger``) for its scenario (``course.seeds``), in BF16 and with an FP8 cache.

    One ledger sharded over the seed's 8 GPUs gives both the one-GPU lines (kv_token_s,
    token_s) and the sharded one; the MHA cache keeps one KV head per query head.
    """
    model, gpu = models[seeds.SEED_MODEL_ID], gpus[seeds.SEED_GPU_ID]
    context = seeds.SEED_CONTEXT_TOKENS
    bf16 = kvcore.ledger(model, gpu, context_tokens=context, shards=seeds.SEED_SHARDS)
    fp8 = kvcore.ledger(model, gpu, context_tokens=context, kv_bytes_per_value=kvcore.bytes_per_value("fp8"))
    mha_model = kvcore.with_changes(model, num_key_value_heads=model.num_attention_heads)
    return {
        "model": model.name,
        "gpu": gpu.name,
        "tokens": _count(context),
        "shards": _integer(seeds.SEED_SHARDS),
        "per_token": Number(bf16.kv_bytes_per_token, "size"),
        "factor": Number(bf16.gqa_factor, "quantity"),
        "weights": Number(bf16.weights_bytes, "memory"),
        "bf16_cache": Number(bf16.cache_bytes, "memory"),
        "cache_gb": Number(bf16.cache_bytes, "gb"),
        "cache_gib": Number(bf16.cache_bytes, "gib"),
        "mha": Number(float(kvcore.kv_cache_bytes(mha_model, context_tokens=context)), "decimal_size"),
        "fp8_cache": Number(fp8.cache_bytes, "memory"),
        "fp8": Number(fp8.cache_bytes, "gb"),
        "bf16_gpus": _integer(bf16.gpus_to_fit),
        "fp8_gpus": _integer(fp8.gpus_to_fit),
        "bandwidth": Number(gpu.bandwidth_bytes_per_s, "bandwidth"),
        "kv": Number(bf16.kv_token_s, "seconds"),
        "rate": Number(bf16.kv_tokens_per_s, "tokens_per_s"),
        "with_weights": Number(bf16.token_s, "seconds"),
        "sharded": Number(bf16.sharded_kv_token_s, "seconds"),
    }


# ---------------------------------------------------------------- time: roofline, decode


def ridge_point(models: Catalogue, gpus: Gpus) -> Facts:
    """The H100's ridge point, peak / bandwidth (FLOP/byte), for BF16 and FP8 dense peaks (seed 004: "about 300")."""
    gpu = gpus[H100]
    bandwidth = gpu.bandwidth_bytes_per_s
    return {
        "gpu": gpu.name,
        "peak": Number(gpu.bf16_dense_flop_per_s, "flop_per_s"),
        "bandwidth": Number(bandwidth, "bandwidth"),
        "ridge": Number(
            kvcore.ridge_point(peak_flop_per_s=gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=bandwidth), "quantity"
        ),
        "fp8_ridge": Number(
            kvcore.ridge_point(peak_flop_per_s=gpu.fp8_dense_flop_per_s, bandwidth_bytes_per_s=bandwidth), "quantity"
        ),
    }


def arithmetic_intensity(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B's FLOP per byte: one decode step at 1,024 tokens against a 1,024-token prefill."""
    model = models[LLAMA_8B]
    return {
        "model": model.name,
        "decode": Number(float(kvcore.decode_intensity_flop_per_byte(model, context_tokens=1024)), "quantity"),
        "prefill": Number(float(kvcore.prefill_intensity_flop_per_byte(model, prompt_tokens=1024)), "quantity"),
    }


def decode_below_ridge(models: Catalogue, gpus: Gpus) -> Facts:
    """The H100's ridge point beside Llama 3.1 8B's decode intensity: decode runs far below it."""
    return {**ridge_point(models, gpus), **arithmetic_intensity(models, gpus)}


def weights(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B's weights in BF16: params · 2 bytes."""
    model = models[LLAMA_8B]
    return {"model": model.name, "weights": Number(kvcore.model_weights_bytes(model), "memory")}


def memory_bandwidth(models: Catalogue, gpus: Gpus) -> Facts:
    """Time to stream Llama 3.1 8B's weights once through an H100: bytes / bandwidth (s)."""
    model, gpu = models[LLAMA_8B], gpus[H100]
    time = float(
        kvcore.stream_time_s(kvcore.model_weights_bytes(model), bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s)
    )
    return {
        **weights(models, gpus),
        "gpu": gpu.name,
        "bandwidth": Number(gpu.bandwidth_bytes_per_s, "bandwidth"),
        "time": Number(time, "seconds"),
    }


def decode_floor(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B on an RTX 4090 at 1,024 tokens: the step, with FP8 weights, and its compute term.

    The pages' roofline (``kvcore.decode_step_times`` with ``kvcore.rates_for`` the weights'
    format, datasheet MFU = MBU = 1): at batch 1 the bytes term sets the step.
    """
    model, gpu = models[LLAMA_8B], gpus[RTX_4090]
    context, bandwidth = 1024, gpu.bandwidth_bytes_per_s

    def step(weights_dtype: str) -> kvcore.PhaseTimes:
        return kvcore.decode_step_times(
            model,
            context_tokens=context,
            rates=kvcore.rates_for(gpu, weights_dtype=weights_dtype),
            weight_bytes_per_param=kvcore.bytes_per_value(weights_dtype),
        )

    bf16 = step("bf16")
    right, compute = float(bf16.time_s), float(bf16.compute_s)
    fp8 = float(step("fp8").time_s)
    return {
        **weights(models, gpus),
        "gpu": gpu.name,
        "bandwidth": Number(bandwidth, "bandwidth"),
        "right": Number(right, "seconds"),
        "fp8": Number(fp8, "seconds"),
        "compute": Number(compute, "seconds"),
        "rate": Number(float(kvcore.tokens_per_s(right)), "tokens_per_s"),
    }


# ---------------------------------------------------------------- memory hierarchy, FlashAttention


def hbm(models: Catalogue, gpus: Gpus) -> Facts:
    """The H100's HBM: its size, type and bandwidth (datasheet, data/gpus.csv)."""
    gpu = gpus[H100]
    return {
        "gpu": gpu.name,
        "memory": Number(gpu.memory_bytes, "memory"),
        "type": gpu.memory_type,
        "bandwidth": Number(gpu.bandwidth_bytes_per_s, "bandwidth"),
    }


def sram(models: Catalogue, gpus: Gpus) -> Facts:
    """The H100's on-chip memory: SMs · SRAM per SM, and its L2 (data/gpus.csv)."""
    gpu = gpus[H100]
    return {
        "gpu": gpu.name,
        "sms": Number(gpu.sm_count, "quantity"),
        "per_sm": Number(gpu.sram_per_sm_bytes, "size"),
        "sram": Number(gpu.sram_bytes, "size"),
        "l2": Number(gpu.l2_cache_bytes, "size"),
    }


def attention_scores(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B at 8,192 tokens: its KV cache, the n × n scores of all heads (n² · H · b), one score row."""
    model, tokens = models[LLAMA_8B], 8192
    heads = model.num_attention_heads
    return {
        "model": model.name,
        "tokens": _count(tokens),
        "kv": Number(float(kvcore.kv_cache_bytes(model, context_tokens=tokens)), "memory"),
        "scores": Number(float(kvcore.attention_scores_bytes(tokens, heads=heads)), "memory"),
        "row": Number(float(kvcore.score_row_bytes(tokens, heads=heads)), "size"),
    }


# ---------------------------------------------------------------- sizing a server, vLLM's pool


def sizing_rule(models: Catalogue, gpus: Gpus) -> Facts:
    """Tokens of Llama 3.1 8B's pool on an H100: with u = 0.9 and 1 GiB overhead, and naively (u = 1, none).

    Seed 000's sizing rule (``kvcore.sizing_steps``); 0.9 is vLLM's default gpu_memory_utilization.
    """
    model, gpu = models[LLAMA_8B], gpus[H100]
    weights_bytes = kvcore.model_weights_bytes(model)
    overhead, utilization = GiB, 0.9
    steps = kvcore.sizing_steps(
        model,
        memory_bytes=gpu.memory_bytes,
        utilization=utilization,
        weights_bytes=weights_bytes,
        overhead_bytes=overhead,
    )
    naive = kvcore.sizing_steps(model, memory_bytes=gpu.memory_bytes, utilization=1.0, weights_bytes=weights_bytes)
    return {
        "model": model.name,
        "gpu": gpu.name,
        "u": Number(utilization, "ratio"),
        "overhead": Number(overhead, "memory"),
        "tokens": _count(steps.pool_tokens),
        "naive": _count(naive.pool_tokens),
    }


def pool_share(models: Catalogue, gpus: Gpus) -> Facts:
    """Seed 000's dashboard ("max context 262,144"): the share of that pool one user at 131,072 tokens takes."""
    model = models[LLAMA_70B]
    pool, long = 262144, 131072
    share = kvcore.pool_share(
        model, context_tokens=long, kv_pool_bytes=float(kvcore.sequence_kv_bytes(model, context_tokens=pool))
    )
    return {"pool": _count(pool), "long": _count(long), "share": Number(float(share), "percent", decimals=0)}


def declared_context(models: Catalogue, gpus: Gpus) -> Facts:
    """The context a user needs (8,192) against the one the server declares (131,072), in tokens."""
    return {"need": _count(8192), "declared": _count(131072)}


def vllm_blocks(models: Catalogue, gpus: Gpus) -> Facts:
    """vLLM issue #10517's "# GPU blocks: 1952" at max_model_len 20,000: tokens in the pool and max concurrency."""
    model = models[LLAMA_8B]
    blocks, length = 1952, 20000
    return {
        "blocks": _count(blocks),
        "block_size": _integer(kvcore.DEFAULT_BLOCK_SIZE),
        "tokens": _count(float(kvcore.pool_tokens(num_blocks=blocks))),
        "length": _count(length),
        "concurrency": Number(
            float(kvcore.max_concurrency(model, num_blocks=blocks, max_model_len=length)), "quantity"
        ),
    }


def block(models: Catalogue, gpus: Gpus) -> Facts:
    """Bytes of one vLLM block of Llama 3.1 8B's cache: block_size · bytes per token."""
    model = models[LLAMA_8B]
    return {
        "model": model.name,
        "block_size": _integer(kvcore.DEFAULT_BLOCK_SIZE),
        "bytes": Number(kvcore.block_bytes(model), "size"),
    }


def tensor_parallel_cache(models: Catalogue, gpus: Gpus) -> Facts:
    """Bytes per token on each of 8 GPUs: GQA's KV heads split, MLA's latent replicated (vLLM)."""
    gqa_model, mla_model = models[LLAMA_70B], models[DEEPSEEK_V3]
    tp = 8
    return {
        "tp": _integer(tp),
        "model": gqa_model.name,
        "mla_model": mla_model.name,
        "gqa": Number(kvcore.kv_bytes_per_token(gqa_model, tp=tp), "size"),
        "gqa_one": Number(kvcore.kv_bytes_per_token(gqa_model), "size"),
        "mla": Number(kvcore.kv_bytes_per_token(mla_model, tp=tp), "size"),
    }


def context_window(models: Catalogue, gpus: Gpus) -> Facts:
    """Llama 3.1 8B's longest context (max_position_embeddings) and one sequence's cache at it."""
    model = models[LLAMA_8B]
    tokens = model.max_position_embeddings
    return {
        "model": model.name,
        "tokens": _count(tokens),
        "cache": Number(float(kvcore.kv_cache_bytes(model, context_tokens=tokens)), "memory"),
    }


# ---------------------------------------------------------------- PagedAttention, prefixes, preemption


def paged_waste(models: Catalogue, gpus: Gpus) -> Facts:
    """Waste of contiguous slabs and of blocks for the vLLM paper's ShareGPT-on-OPT lengths (``course.seeds``)."""
    preset = seeds.SHAREGPT_ON_OPT
    lengths = kvcore.request_lengths_tokens(
        preset.n_requests,
        mean_tokens=preset.mean_tokens,
        spread=preset.spread,
        max_model_len=preset.max_model_len,
        seed=preset.seed,
    )

    def waste(scheme: Literal["contiguous", "paged"]) -> Number:
        report = kvcore.allocation_report(
            lengths, scheme=scheme, max_model_len=preset.max_model_len, block_size=preset.block_size
        )
        return Number(report.waste_fraction, "percent", decimals=1)

    return {
        "mean": _count(preset.mean_tokens),
        "max_len": _count(preset.max_model_len),
        "requests": _count(preset.n_requests),
        "block": _integer(preset.block_size),
        "contiguous": waste("contiguous"),
        "paged": waste("paged"),
    }


def prefix_blocks(models: Catalogue, gpus: Gpus) -> Facts:
    """A 100-token prefix in 16-token blocks: the tokens and full blocks requests share (floor(P / bs))."""
    prefix, block_size = 100, kvcore.DEFAULT_BLOCK_SIZE
    shared = kvcore.cached_prefix_tokens(prefix_tokens=prefix, suffix_tokens=50, block_size=block_size)
    return {
        "prefix": _count(prefix),
        "block": _integer(block_size),
        "shared": _count(float(shared)),
        "blocks": _count(float(kvcore.shared_prefix_blocks(prefix, block_size=block_size))),
    }


def prompt_cache_ttl(models: Catalogue, gpus: Gpus) -> Facts:
    """The prefix-caching lesson's third preset: a request every 600 s against a 300 s cache TTL."""
    return {"interval": Number(600, "seconds"), "ttl": Number(300, "seconds")}


def shared_system_prompt(models: Catalogue, gpus: Gpus) -> Facts:
    """Seed 002: 100 requests sharing a 2,000-token system prompt."""
    return {"requests": _count(100), "prefix": _count(2000)}


def blocks_for_no_preemption(models: Catalogue, gpus: Gpus) -> Facts:
    """Blocks that keep 64 sequences of up to 2,000 tokens from preemption: seqs · ceil(longest / bs).

    Beside the careless answers: one sequence, and the mean length (1,000) instead of the longest.
    """
    seqs, longest, mean = 64, 2000, 1000
    return {
        "seqs": _integer(seqs),
        "longest": _count(longest),
        "mean_tokens": _count(mean),
        "block": _integer(kvcore.DEFAULT_BLOCK_SIZE),
        "right": _count(kvcore.blocks_for_no_preemption(max_num_seqs=seqs, max_request_tokens=longest)),
        "one": _count(kvcore.blocks_for_no_preemption(max_num_seqs=1, max_request_tokens=longest)),
        "mean": _count(kvcore.blocks_for_no_preemption(max_num_seqs=seqs, max_request_tokens=mean)),
    }


#: Every fact by name, as quiz questions and glossary terms name them.
FACTS: Mapping[str, Callable[[Catalogue, Gpus], Facts]] = MappingProxyType(
    {
        function.__name__: function
        for function in (
            recompute_without_cache,
            kv_cache,
            bytes_per_token_options,
            weights_vs_cache,
            cache_scaling,
            gib_and_gb,
            gpu_memory_units,
            head_dim_from_config,
            ignoring_kv_heads,
            mha,
            gqa,
            mqa_saving,
            mqa,
            mla,
            sliding_window,
            sliding_as_full,
            linear_attention,
            moe,
            quantization,
            cache_by_format,
            seed_004_ledger,
            ridge_point,
            arithmetic_intensity,
            decode_below_ridge,
            weights,
            memory_bandwidth,
            decode_floor,
            hbm,
            sram,
            attention_scores,
            sizing_rule,
            pool_share,
            declared_context,
            vllm_blocks,
            block,
            tensor_parallel_cache,
            context_window,
            paged_waste,
            prefix_blocks,
            prompt_cache_ttl,
            shared_system_prompt,
            blocks_for_no_preemption,
        )
    }
)


def fact(name: str, *, models: Catalogue, gpus: Gpus) -> Facts:
    """The placeholders of the fact called `name`, computed now from the catalogues (models and GPUs by id).

    KvError ``unknown_fact`` for a name no fact has.
    """
    if name not in FACTS:
        raise KvError("unknown_fact", f"no computed fact is called {name!r}", name=name)
    return FACTS[name](models, gpus)
