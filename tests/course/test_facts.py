"""The computed facts: every number is kvcore's, in base units, and a fact two texts share is computed once."""

from __future__ import annotations

import math
from typing import get_args

import pytest

import kvcore
from course import facts, seeds
from course.facts import FACTS, Kind, Number
from course.glossary import TERMS
from course.quiz import QUIZZES
from kvcore.errors import KvError
from kvcore.units import GB, GiB

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()
LLAMA_8B = MODELS["llama-3.1-8b"]
LLAMA_70B = MODELS["llama-3.1-70b"]
DEEPSEEK = MODELS["deepseek-v3"]
GEMMA = MODELS["gemma-3-27b"]
H100 = GPUS["h100-sxm"]
RTX_4090 = GPUS["rtx-4090"]
SEED_LEDGER = kvcore.ledger(
    MODELS[seeds.SEED_MODEL_ID], GPUS[seeds.SEED_GPU_ID], context_tokens=seeds.SEED_CONTEXT_TOKENS
)
SEED_SHARDED = kvcore.ledger(
    MODELS[seeds.SEED_MODEL_ID],
    GPUS[seeds.SEED_GPU_ID],
    context_tokens=seeds.SEED_CONTEXT_TOKENS,
    shards=seeds.SEED_SHARDS,
)
SEED_FP8 = kvcore.ledger(
    MODELS[seeds.SEED_MODEL_ID],
    GPUS[seeds.SEED_GPU_ID],
    context_tokens=seeds.SEED_CONTEXT_TOKENS,
    kv_bytes_per_value=1.0,
)


def value(name: str, key: str) -> float:
    number = facts.fact(name, models=MODELS, gpus=GPUS)[key]
    assert isinstance(number, Number), (name, key)
    return number.value


#: (fact, placeholder, what kvcore says), one row per number a text shows.
KVCORE_VALUES = [
    ("recompute_without_cache", "without", lambda: kvcore.kv_projections_without_cache(1000)),
    ("recompute_without_cache", "with_cache", lambda: kvcore.kv_projections_with_cache(1000)),
    ("recompute_without_cache", "factor", lambda: kvcore.recompute_factor(1000)),
    ("kv_cache", "per_token", lambda: kvcore.kv_bytes_per_token(LLAMA_8B)),
    ("kv_cache", "long", lambda: kvcore.kv_cache_bytes(LLAMA_8B, context_tokens=131072)),
    ("bytes_per_token_options", "right", lambda: kvcore.kv_bytes_per_token(LLAMA_8B, bytes_per_value=2.0)),
    ("bytes_per_token_options", "mha", lambda: kvcore.mha_equivalent_bytes_per_token(LLAMA_8B)),
    ("bytes_per_token_options", "half", lambda: kvcore.kv_bytes_per_token(LLAMA_8B, bytes_per_value=1.0)),
    ("bytes_per_token_options", "fp32", lambda: kvcore.kv_bytes_per_token(LLAMA_8B, bytes_per_value=4.0)),
    (
        "weights_vs_cache",
        "tokens",
        lambda: kvcore.break_even_context_tokens(
            MODELS["qwen2.5-32b"], weights_bytes=kvcore.model_weights_bytes(MODELS["qwen2.5-32b"], bytes_per_param=1.0)
        ),
    ),
    ("cache_scaling", "four", lambda: kvcore.kv_cache_bytes(LLAMA_8B, context_tokens=16384, concurrency=2)),
    ("gib_and_gb", "gib", lambda: kvcore.mha_cache_bytes(LLAMA_8B, context_tokens=4096)),
    ("gib_and_gb", "real", lambda: kvcore.kv_cache_bytes(LLAMA_8B, context_tokens=4096)),
    ("gpu_memory_units", "gb", lambda: 80 * GiB),
    ("head_dim_from_config", "head_dim", lambda: MODELS["qwen3-32b"].head_dim),
    (
        "head_dim_from_config",
        "derived",
        lambda: MODELS["qwen3-32b"].hidden_size // MODELS["qwen3-32b"].num_attention_heads,
    ),
    ("ignoring_kv_heads", "ratio", lambda: LLAMA_8B.num_attention_heads / LLAMA_8B.num_key_value_heads),
    ("mha", "per_token", lambda: kvcore.kv_bytes_per_token(MODELS["llama-2-7b"])),
    (
        "gqa",
        "factor",
        lambda: kvcore.cache_reduction_factor(
            kvcore.kv_bytes_per_token(LLAMA_8B),
            baseline_bytes_per_token=kvcore.mha_equivalent_bytes_per_token(LLAMA_8B),
        ),
    ),
    ("gqa", "mqa_factor", lambda: LLAMA_8B.num_attention_heads),
    ("mqa_saving", "exact", lambda: 1 - 1 / LLAMA_8B.num_attention_heads),
    ("mqa_saving", "gqa", lambda: 1 - LLAMA_8B.num_key_value_heads / LLAMA_8B.num_attention_heads),
    ("mqa", "per_token", lambda: kvcore.kv_bytes_per_token(MODELS["falcon-7b"])),
    ("mla", "per_token", lambda: kvcore.kv_bytes_per_token(DEEPSEEK)),
    ("mla", "mha", lambda: kvcore.mha_equivalent_bytes_per_token(DEEPSEEK)),
    ("sliding_window", "window", lambda: GEMMA.sliding_window),
    ("sliding_window", "sliding", lambda: GEMMA.count("sliding")),
    ("sliding_as_full", "right", lambda: kvcore.sequence_kv_bytes(GEMMA, context_tokens=32768)),
    ("linear_attention", "linear", lambda: MODELS["qwen3-next-80b-a3b"].count("linear")),
    ("moe", "active", lambda: DEEPSEEK.active_params),
    ("quantization", "int4", lambda: kvcore.bytes_per_value("int4")),
    ("cache_by_format", "fp8", lambda: kvcore.kv_cache_bytes(LLAMA_8B, context_tokens=131072, bytes_per_value=1.0)),
    ("seed_004_ledger", "bf16_cache", lambda: SEED_LEDGER.cache_bytes),
    ("seed_004_ledger", "per_token", lambda: SEED_LEDGER.kv_bytes_per_token),
    ("seed_004_ledger", "weights", lambda: SEED_LEDGER.weights_bytes),
    ("seed_004_ledger", "bf16_gpus", lambda: SEED_LEDGER.gpus_to_fit),
    ("seed_004_ledger", "fp8_gpus", lambda: SEED_FP8.gpus_to_fit),
    ("seed_004_ledger", "fp8", lambda: SEED_FP8.cache_bytes),
    ("seed_004_ledger", "factor", lambda: SEED_LEDGER.gqa_factor),
    ("seed_004_ledger", "kv", lambda: SEED_LEDGER.kv_token_s),
    ("seed_004_ledger", "rate", lambda: SEED_LEDGER.kv_tokens_per_s),
    ("seed_004_ledger", "with_weights", lambda: SEED_LEDGER.token_s),
    ("seed_004_ledger", "sharded", lambda: SEED_SHARDED.sharded_kv_token_s),
    (
        "seed_004_ledger",
        "mha",
        lambda: kvcore.mha_cache_bytes(MODELS[seeds.SEED_MODEL_ID], context_tokens=seeds.SEED_CONTEXT_TOKENS),
    ),
    (
        "ridge_point",
        "ridge",
        lambda: kvcore.ridge_point(
            peak_flop_per_s=H100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=H100.bandwidth_bytes_per_s
        ),
    ),
    (
        "ridge_point",
        "fp8_ridge",
        lambda: kvcore.ridge_point(
            peak_flop_per_s=H100.fp8_dense_flop_per_s, bandwidth_bytes_per_s=H100.bandwidth_bytes_per_s
        ),
    ),
    ("arithmetic_intensity", "decode", lambda: kvcore.decode_intensity_flop_per_byte(LLAMA_8B, context_tokens=1024)),
    ("arithmetic_intensity", "prefill", lambda: kvcore.prefill_intensity_flop_per_byte(LLAMA_8B, prompt_tokens=1024)),
    ("weights", "weights", lambda: kvcore.model_weights_bytes(LLAMA_8B)),
    (
        "memory_bandwidth",
        "time",
        lambda: kvcore.stream_time_s(
            kvcore.model_weights_bytes(LLAMA_8B), bandwidth_bytes_per_s=H100.bandwidth_bytes_per_s
        ),
    ),
    (
        "decode_floor",
        "right",
        lambda: kvcore.decode_token_s(
            LLAMA_8B, context_tokens=1024, bandwidth_bytes_per_s=RTX_4090.bandwidth_bytes_per_s
        ),
    ),
    (
        "decode_floor",
        "fp8",
        lambda: kvcore.decode_token_s(
            LLAMA_8B,
            context_tokens=1024,
            bandwidth_bytes_per_s=RTX_4090.bandwidth_bytes_per_s,
            weight_bytes_per_param=1.0,
        ),
    ),
    ("hbm", "memory", lambda: H100.memory_bytes),
    ("sram", "sram", lambda: H100.sram_bytes),
    ("attention_scores", "scores", lambda: kvcore.attention_scores_bytes(8192, heads=LLAMA_8B.num_attention_heads)),
    ("attention_scores", "row", lambda: kvcore.score_row_bytes(8192, heads=LLAMA_8B.num_attention_heads)),
    (
        "sizing_rule",
        "tokens",
        lambda: (
            kvcore.sizing_steps(
                LLAMA_8B,
                memory_bytes=H100.memory_bytes,
                utilization=0.9,
                weights_bytes=kvcore.model_weights_bytes(LLAMA_8B),
                overhead_bytes=GiB,
            ).pool_tokens
        ),
    ),
    ("vllm_blocks", "tokens", lambda: kvcore.pool_tokens(num_blocks=1952)),
    ("vllm_blocks", "concurrency", lambda: kvcore.max_concurrency(LLAMA_8B, num_blocks=1952, max_model_len=20000)),
    ("block", "bytes", lambda: kvcore.block_bytes(LLAMA_8B)),
    ("tensor_parallel_cache", "gqa", lambda: kvcore.kv_bytes_per_token(LLAMA_70B, tp=8)),
    ("tensor_parallel_cache", "mla", lambda: kvcore.kv_bytes_per_token(DEEPSEEK, tp=8)),
    (
        "context_window",
        "cache",
        lambda: kvcore.kv_cache_bytes(LLAMA_8B, context_tokens=LLAMA_8B.max_position_embeddings),
    ),
    ("prefix_blocks", "blocks", lambda: kvcore.shared_prefix_blocks(100, block_size=16)),
    (
        "blocks_for_no_preemption",
        "right",
        lambda: kvcore.blocks_for_no_preemption(max_num_seqs=64, max_request_tokens=2000),
    ),
]


@pytest.mark.parametrize(("name", "key", "expected"), KVCORE_VALUES, ids=lambda row: str(row))
def test_every_number_is_kvcores(name, key, expected):
    assert value(name, key) == pytest.approx(float(expected()), rel=1e-12)


#: Facts that only restate the course's inputs (no kvcore computation), or join two checked facts.
INPUTS_ONLY = {"declared_context", "prompt_cache_ttl", "shared_system_prompt", "decode_below_ridge"}
#: Facts checked by their own tests below.
CHECKED_BELOW = {"pool_share", "paged_waste"}


def test_the_table_checks_every_computed_fact():
    assert set(FACTS) - {name for name, _, _ in KVCORE_VALUES} - INPUTS_ONLY - CHECKED_BELOW == set()


@pytest.mark.parametrize("name", sorted(FACTS))
def test_every_fact_is_names_and_finite_numbers_of_a_known_kind(name):
    values = facts.fact(name, models=MODELS, gpus=GPUS)
    assert values
    for key, item in values.items():
        assert isinstance(item, str | Number), key
        if isinstance(item, Number):
            assert item.kind in get_args(Kind), key
            assert math.isfinite(item.value), key


def test_llama_8b_holds_128_kib_per_token():
    # 2 · 32 layers · 8 KV heads · 128 head dim · 2 bytes = 131,072 B (seed 000)
    assert value("kv_cache", "per_token") == 2 * 32 * 8 * 128 * 2 == 131_072


def test_the_seeds_70b_cache_is_327_68_gb_and_97_8_ms_per_token():
    # seed 004: 327,680 B/token · 1,000,000 tokens = 327.68 GB; / 3.35 TB/s = 97.8 ms
    assert value("seed_004_ledger", "cache_gb") == pytest.approx(327.68 * GB)
    assert value("seed_004_ledger", "kv") == pytest.approx(0.09781, abs=1e-5)


def test_the_sharegpt_preset_wastes_about_77_percent_contiguous_and_under_4_paged():
    # Kwon et al. 2023: 60–80 % wasted by contiguous slabs, under 4 % with blocks
    assert value("paged_waste", "contiguous") == pytest.approx(0.769, abs=0.001)
    assert value("paged_waste", "paged") < 0.04


def test_one_user_at_128k_takes_half_the_dashboards_262k_pool():
    # seed 000: "max context 262,144" is a pool, and one 131,072-token user takes 50 % of it
    assert value("pool_share", "share") == pytest.approx(0.5)


def test_a_composed_fact_repeats_its_parts_exactly():
    below = facts.fact("decode_below_ridge", models=MODELS, gpus=GPUS)
    ridge = facts.fact("ridge_point", models=MODELS, gpus=GPUS)
    intensity = facts.fact("arithmetic_intensity", models=MODELS, gpus=GPUS)
    assert below == {**ridge, **intensity}


def test_the_quiz_and_the_glossary_share_the_facts_they_both_state():
    quiz = {question.id: question.facts for questions in QUIZZES.values() for question in questions}
    for question_id, term_id in [
        ("av_mla", "mla"),
        ("av_sliding", "sliding_window"),
        ("av_factor", "gqa"),
        ("fa_sram", "sram"),
        ("wc_tradeoff", "kv_cache"),
    ]:
        assert quiz[question_id] == TERMS[term_id].facts, (question_id, term_id)


def test_an_unknown_fact_is_a_kv_error_with_a_code():
    with pytest.raises(KvError) as raised:
        facts.fact("no_such_fact", models=MODELS, gpus=GPUS)
    assert raised.value.code == "unknown_fact"
    assert raised.value.fields["name"] == "no_such_fact"
