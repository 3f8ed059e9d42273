"""kvcore.memory: the total a GPU holds, when the cache catches up with the weights, and GPUs needed."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from kvcore.capacity import gpus_needed
from kvcore.memory import (
    break_even_context_tokens,
    break_even_users,
    mha_cache_bytes,
    tensor_parallel_to_fit,
    total_memory_bytes,
)

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()


def test_the_total_is_weights_plus_cache_plus_overhead():
    model = MODELS["llama-3.1-8b"]
    total = total_memory_bytes(model, context_tokens=8192, concurrency=2, overhead_bytes=kvcore.GiB)
    weights = kvcore.model_weights_bytes(model)
    cache = kvcore.kv_cache_bytes(model, context_tokens=8192, concurrency=2)
    assert float(total) == weights + float(cache) + kvcore.GiB


def test_the_total_broadcasts_users_against_contexts_into_a_grid():
    model = MODELS["gemma-3-27b"]
    contexts, users = np.array([1024.0, 8192.0, 65536.0]), np.array([1.0, 4.0])
    grid = total_memory_bytes(model, context_tokens=contexts[None, :], concurrency=users[:, None])
    assert grid.shape == (2, 3)
    assert float(grid[1, 2]) == float(total_memory_bytes(model, context_tokens=65536.0, concurrency=4.0))


def test_a_negative_overhead_is_refused():
    with pytest.raises(ValueError, match="overhead"):
        total_memory_bytes(MODELS["llama-3.1-8b"], context_tokens=8192, overhead_bytes=-1.0)


def test_the_cache_of_llama_31_8b_equals_its_bf16_weights_at_122528_tokens():
    # 8.03e9 params · 2 B = 16.06e9 B of weights; 2·32·8·128·2 = 131,072 B per token (seed 000);
    # 16.06e9 / 131,072 = 122,528.08 tokens.
    model = MODELS["llama-3.1-8b"]
    tokens = break_even_context_tokens(model, weights_bytes=kvcore.model_weights_bytes(model))
    assert float(tokens) == pytest.approx(16.06e9 / 131_072)
    assert round(float(tokens)) == 122_528


def test_the_30_gb_model_of_seed_002_doubles_with_one_124k_token_conversation():
    # Qwen2.5 32B in INT8: 32.5e9 B of weights ("a 30 GB model": 30.27 GiB); 2·64·8·128·2 = 262,144 B
    # per token; 32.5e9 / 262,144 = 123,977.7 tokens, inside its 131,072-token window: 30 GB → 60 GB.
    model = MODELS["qwen2.5-32b"]
    weights = kvcore.model_weights_bytes(model, bytes_per_param=1.0)
    tokens = float(break_even_context_tokens(model, weights_bytes=weights))
    assert tokens == pytest.approx(32.5e9 / 262_144)
    assert tokens < model.max_position_embeddings


def test_with_more_users_each_needs_proportionally_fewer_tokens_under_full_attention():
    model = MODELS["llama-3.1-70b"]
    weights = kvcore.model_weights_bytes(model)
    one, eight = break_even_context_tokens(model, weights_bytes=weights, concurrency=[1, 8])
    assert eight == pytest.approx(one / 8)


@pytest.mark.parametrize(
    ("model_id", "users"),
    [("gemma-3-27b", 1), ("gemma-3-27b", 64), ("gpt-oss-120b", 4), ("qwen3-next-80b-a3b", 2), ("deepseek-v3", 1)],
)
def test_at_the_break_even_context_the_cache_weighs_exactly_the_weights(model_id, users):
    # Sliding windows, linear-attention states and MLA latents: the closed form must agree with kv_cache_bytes.
    model = MODELS[model_id]
    weights = kvcore.model_weights_bytes(model)
    tokens = float(break_even_context_tokens(model, weights_bytes=weights, concurrency=users))
    cache = float(kvcore.kv_cache_bytes(model, context_tokens=tokens, concurrency=users))
    assert cache == pytest.approx(weights, rel=1e-9)


def test_a_model_whose_layers_all_slide_never_reaches_its_weights_with_one_user():
    # Mistral 7B v0.1: 32 sliding layers of 4,096 tokens hold at most 2·32·8·128·4,096·2 B = 512 MiB per user,
    # far below its 13.49 GiB of weights.
    model = MODELS["mistral-7b-v0.1"]
    weights = kvcore.model_weights_bytes(model)
    assert np.isinf(break_even_context_tokens(model, weights_bytes=weights))


def test_many_users_of_a_sliding_model_reach_the_weights_inside_the_window():
    model = MODELS["mistral-7b-v0.1"]
    weights = kvcore.model_weights_bytes(model)
    tokens = float(break_even_context_tokens(model, weights_bytes=weights, concurrency=64))
    assert tokens <= model.sliding_window
    assert float(kvcore.kv_cache_bytes(model, context_tokens=tokens, concurrency=64)) == pytest.approx(weights)


def test_the_break_even_grows_with_the_weights_and_shrinks_with_wider_values():
    model = MODELS["gemma-3-12b"]
    small, big = break_even_context_tokens(model, weights_bytes=np.array([1e9, 1e10]))
    fp8, bf16 = (float(break_even_context_tokens(model, weights_bytes=1e10, bytes_per_value=b)) for b in (1.0, 2.0))
    assert small < big
    assert bf16 < fp8


def test_four_users_at_32k_tokens_make_the_30_gb_model_need_60_gb():
    # Qwen2.5 32B INT8: one sequence of 32,768 tokens holds 262,144 · 32,768 B = 8 GiB;
    # 32.5e9 B / 8 GiB = 3.78 → 4 users (seed 002's "30 GB that need 60 GB").
    model = MODELS["qwen2.5-32b"]
    weights = kvcore.model_weights_bytes(model, bytes_per_param=1.0)
    assert int(break_even_users(model, weights_bytes=weights, context_tokens=32_768)) == 4


def test_the_mha_formula_gives_seed_002s_table():
    # 2 × layers × tokens × d_model × 2 B (seed 002): 8B: 2·32·4,096·4,096·2 = 2 GiB at 4k, 64 GiB at 128k;
    # 70B: 2·80·4,096·8,192·2 = 10 GiB at 4k, 320 GiB at 128k. The seed's "GB" are these GiB.
    contexts = np.array([4096, 131072])
    small = mha_cache_bytes(MODELS["llama-3.1-8b"], context_tokens=contexts) / kvcore.GiB
    large = mha_cache_bytes(MODELS["llama-3.1-70b"], context_tokens=contexts) / kvcore.GiB
    np.testing.assert_array_equal(small, [2, 64])
    np.testing.assert_array_equal(large, [10, 320])


def test_the_mha_formula_is_the_real_cache_of_an_mha_model():
    model = MODELS["llama-2-7b"]  # 32 KV heads for 32 query heads
    assert float(mha_cache_bytes(model, context_tokens=4096, concurrency=3)) == float(
        kvcore.kv_cache_bytes(model, context_tokens=4096, concurrency=3)
    )


def test_seed_002s_70b_needs_6_h100s_with_mha_and_3_with_its_real_gqa_cache():
    # FP16 weights 70.55e9 · 2 = 141.1e9 B. MHA cache at 128k: 320 GiB → 484.7e9 B / 80 GiB (85.9e9 B) = 5.64 → 6.
    # Real GQA cache (8 KV heads): 40 GiB → 184.05e9 B / 85.9e9 B = 2.14 → 3.
    model, h100 = MODELS["llama-3.1-70b"], GPUS["h100-sxm"]
    mha = kvcore.with_changes(model, num_key_value_heads=model.num_attention_heads)
    totals = [float(total_memory_bytes(m, context_tokens=131072)) for m in (mha, model)]
    assert [int(gpus_needed(total_bytes=total, memory_bytes=h100.memory_bytes)) for total in totals] == [6, 3]


def test_gpus_needed_rounds_up_and_a_full_card_is_one_gpu():
    np.testing.assert_array_equal(gpus_needed(total_bytes=[0.0, 80.0, 80.5, 160.0], memory_bytes=80.0), [0, 1, 2, 2])


# ---------------------------------------------------------------- one GPU of a tensor-parallel split


def test_on_four_gpus_each_holds_a_quarter_of_the_70bs_weights_two_kv_heads_and_its_own_overhead():
    # Llama 3.1 70B, FP16, 128k: weights 141.1e9 B / 4; cache 2 · 80 layers · 2 heads · 128 · 131,072 · 2 B = 10 GiB.
    model = MODELS["llama-3.1-70b"]
    total = total_memory_bytes(model, context_tokens=131072, overhead_bytes=kvcore.GiB, tp=4)
    assert float(total) == kvcore.model_weights_bytes(model) / 4 + 10 * kvcore.GiB + kvcore.GiB


@pytest.mark.parametrize("model_id", ["falcon-40b", "deepseek-v2-lite"])
def test_a_cache_that_cannot_be_split_by_heads_stays_whole_on_every_gpu(model_id):
    # One KV head (MQA) copied to every GPU, or MLA's one latent per token: the cache per GPU does not shrink.
    model = MODELS[model_id]
    if model.attention_type != "MLA":
        model = kvcore.with_changes(model, num_key_value_heads=1)
    one, split = (float(kvcore.kv_cache_bytes(model, context_tokens=8192, tp=n)) for n in (1, 8))
    assert split == one
    weights_share = kvcore.model_weights_bytes(model) * (1 - 1 / 8)
    whole, per_gpu = (float(total_memory_bytes(model, context_tokens=8192, tp=n)) for n in (1, 8))
    assert whole - per_gpu == pytest.approx(weights_share, rel=1e-12)


def test_seed_002s_70b_in_fp16_at_128k_fits_four_h100s_and_not_two():
    # Per GPU on 2: 65.7 GiB + 20 GiB + 1 GiB = 86.7 GiB > 80 GiB; on 4: 32.9 + 10 + 1 = 43.9 GiB.
    model, h100 = MODELS["llama-3.1-70b"], GPUS["h100-sxm"]
    sizes = kvcore.tensor_parallel_sizes(model, max_gpus=8)
    assert sizes == [1, 2, 4, 8]
    fit = {"memory_bytes": h100.memory_bytes, "context_tokens": 131072, "overhead_bytes": kvcore.GiB}
    assert tensor_parallel_to_fit(model, sizes=sizes, **fit) == 4
    assert tensor_parallel_to_fit(model, sizes=[8, 2, 4], **fit) == 4, "the fewest, whatever the order"
    assert tensor_parallel_to_fit(model, sizes=[1, 2], **fit) is None


def test_the_split_that_fits_is_never_fewer_gpus_than_the_bytes_need():
    # gpus_needed divides bytes over cards; a split also copies every GPU's overhead: never fewer.
    model, h100 = MODELS["llama-3.1-405b"], GPUS["h100-sxm"]
    knobs = {"context_tokens": 131072, "overhead_bytes": 2 * kvcore.GiB}
    floor = int(gpus_needed(total_bytes=total_memory_bytes(model, **knobs), memory_bytes=h100.memory_bytes))
    fit = tensor_parallel_to_fit(model, sizes=[1, 2, 4, 8, 16], memory_bytes=h100.memory_bytes, **knobs)
    assert (floor, fit) == (11, 16)
