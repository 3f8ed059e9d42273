"""A model is a list of layers: each kind caches what it really holds."""

import pytest

import kvcore as kv
from kvcore.units import GiB


@pytest.fixture(scope="module")
def models():
    return kv.load_models()


def test_sliding_layers_stop_growing_at_the_window(models):
    mistral = models["mistral-7b-v0.1"]  # every layer slides over 4,096 tokens
    at_window = kv.sequence_kv_bytes(mistral, context_tokens=4096)
    assert kv.sequence_kv_bytes(mistral, context_tokens=32_768) == at_window


def test_gemma_2_global_layers_keep_growing_past_the_window(models):
    gemma = models["gemma-2-9b"]  # 21 sliding (4,096) + 21 global layers, 8 KV heads × 256
    per_layer_token = 2 * 8 * 256 * 2
    expected = 21 * per_layer_token * 8192 + 21 * per_layer_token * 4096
    assert kv.sequence_kv_bytes(gemma, context_tokens=8192) == expected


def test_gemma_3_has_five_sliding_layers_for_each_global_one(models):
    gemma = models["gemma-3-27b"]  # 62 layers: cycle of 5 sliding + 1 global → 52 sliding, 10 global
    assert (gemma.count("sliding"), gemma.count("full")) == (52, 10)


def test_gpt_oss_alternates_128_token_windows_and_full_layers(models):
    oss = models["gpt-oss-120b"]
    assert oss.layers[0].kind == "sliding" and oss.layers[1].kind == "full"
    assert oss.layers[0].sliding_window == 128


def test_mla_caches_one_latent_without_a_factor_two(models):
    v2_lite = models["deepseek-v2-lite"]  # 27 layers × (512 + 64) values × 2 B
    assert kv.kv_bytes_per_token(v2_lite) == 27 * 576 * 2


def test_linear_attention_layers_hold_a_constant_state(models):
    qwen_next = models["qwen3-next-80b-a3b"]  # 36 Gated DeltaNet layers + 12 full layers
    growth = kv.sequence_kv_bytes(qwen_next, context_tokens=2000) - kv.sequence_kv_bytes(qwen_next, context_tokens=1000)
    assert growth == 1000 * kv.kv_bytes_per_token(qwen_next)
    assert kv.state_bytes_per_sequence(qwen_next) == 36 * qwen_next.linear_state_values * 2


def test_explicit_head_dim_is_used_not_hidden_over_heads(models):
    qwen3 = models["qwen3-0.6b"]  # head_dim 128 although hidden 1024 / 16 heads = 64
    assert qwen3.head_dim == 128
    assert kv.kv_bytes_per_token(qwen3) == 2 * 28 * 8 * 128 * 2


def test_falcon_7b_is_multi_query(models):
    assert models["falcon-7b"].attention_type == "MQA"
    assert kv.kv_bytes_per_token(models["falcon-7b"]) == 2 * 32 * 1 * 64 * 2


@pytest.mark.parametrize(
    ("model_id", "kind"), [("llama-2-7b", "MHA"), ("llama-3.1-8b", "GQA"), ("gemma-2b", "MQA"), ("kimi-k2", "MLA")]
)
def test_attention_type_is_named_from_the_heads(models, model_id, kind):
    assert models[model_id].attention_type == kind


def test_tensor_parallel_splits_kv_heads_across_gpus(models):
    m = models["llama-3.1-70b"]
    assert kv.kv_bytes_per_token(m, tp=4) == kv.kv_bytes_per_token(m) / 4


def test_tensor_parallel_beyond_kv_heads_replicates_them(models):
    m = models["llama-3.1-405b"]  # 8 KV heads on 16 GPUs: one head per GPU, each stored twice
    assert kv.kv_heads_per_gpu(8, 16) == 1
    assert kv.kv_bytes_per_token(m, tp=16) == kv.kv_bytes_per_token(m, tp=8)


def test_mla_latent_is_replicated_on_every_rank(models):
    m = models["deepseek-v3"]
    assert kv.kv_bytes_per_token(m, tp=8) == kv.kv_bytes_per_token(m)


def test_tensor_parallel_that_does_not_fit_the_heads_is_refused(models):
    with pytest.raises(ValueError, match="must divide"):
        kv.kv_bytes_per_token(models["llama-3.1-8b"], tp=3)


def test_a_grid_of_context_by_concurrency_comes_from_one_call(models):
    import numpy as np

    context = np.array([1024, 2048, 4096])
    users = np.array([1, 2])
    grid = kv.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=context[:, None], concurrency=users[None, :])
    assert grid.shape == (3, 2)
    assert grid[2, 1] == 4096 * 2 * 131_072


def test_layer_pattern_expands_cyclically():
    assert kv.layer_kinds("sliding*2,full", 5) == ("sliding", "sliding", "full", "sliding", "sliding")


@pytest.mark.parametrize("pattern", ["dense", "full*0", "", "sliding*x"])
def test_unknown_layer_patterns_are_refused(pattern):
    with pytest.raises(ValueError, match="pattern"):
        kv.layer_kinds(pattern, 4)


def test_kv_heads_must_divide_query_heads():
    with pytest.raises(ValueError, match="must divide num_attention_heads"):
        kv.uniform_model(num_hidden_layers=2, num_key_value_heads=3, head_dim=64, num_attention_heads=8)


def test_sliding_layers_need_a_window():
    with pytest.raises(ValueError, match="sliding_window"):
        kv.ModelSpec(
            id="x",
            name="x",
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=4,
            head_dim=8,
            layer_pattern="sliding",
        )


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_context_must_be_a_finite_non_negative_number(models, bad):
    with pytest.raises(ValueError, match="context tokens"):
        kv.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=bad if bad != 0 else -0.5)


def test_int4_is_half_a_byte_and_group_scales_add_three_percent():
    assert kv.bytes_per_value("int4") == 0.5
    assert kv.grouped_bytes_per_value(4, group_size=128) == pytest.approx(0.5 * 1.03125)


def test_unknown_dtype_names_the_known_ones():
    with pytest.raises(ValueError, match="fp16"):
        kv.bytes_per_value("fp6")


def test_moe_weights_count_every_expert_but_decode_reads_the_active_ones(models):
    mixtral = models["mixtral-8x7b"]
    assert kv.model_weights_bytes(mixtral) == mixtral.total_params * 2
    read = kv.decode_bytes_per_step(mixtral, context_tokens=1)
    assert float(read.weights_bytes) == mixtral.active_params * 2


def test_weights_that_do_not_fit_leave_a_negative_budget():
    budget = kv.kv_budget_bytes(memory_bytes=12 * GiB, utilization=0.9, weights_bytes=16 * GiB)
    assert budget < 0
    assert kv.tokens_that_fit(kv_pool_bytes=budget, bytes_per_token=131_072) == 0


def test_the_cache_split_by_layer_kind_sums_to_the_whole(models):
    gemma = models["gemma-3-27b"]
    parts = kv.kv_cache_bytes_by_kind(gemma, context_tokens=32_768, concurrency=3)
    assert list(parts) == ["sliding", "full"]
    assert sum(parts.values()) == kv.kv_cache_bytes(gemma, context_tokens=32_768, concurrency=3)


def test_linear_layers_part_is_their_constant_state(models):
    qwen_next = models["qwen3-next-80b-a3b"]
    parts = kv.kv_cache_bytes_by_kind(qwen_next, context_tokens=1000)
    assert parts["linear"] == kv.state_bytes_per_sequence(qwen_next)


def test_max_context_for_full_attention_is_budget_over_bytes_per_token(models):
    llama = models["llama-3.1-8b"]  # 1 GiB / 128 KiB = 8,192 tokens; two users: 4,096 each
    assert kv.max_context_tokens(llama, kv_pool_bytes=GiB) == 8192
    assert kv.max_context_tokens(llama, kv_pool_bytes=GiB, concurrency=2) == 4096


def test_sliding_layers_let_the_context_grow_past_the_naive_limit(models):
    gemma = models["gemma-2-9b"]
    naive = 8 * GiB // kv.kv_bytes_per_token(gemma)  # 24,966 tokens if every layer kept everything
    # 21 sliding layers stop at 4,096 tokens: (8 GiB − 21·8,192·4,096) / (21·8,192) = 45,836 tokens
    assert naive == 24_966
    assert kv.max_context_tokens(gemma, kv_pool_bytes=8 * GiB) == 45_836


def test_max_context_is_zero_when_the_budget_is_negative(models):
    assert kv.max_context_tokens(models["llama-3.1-8b"], kv_pool_bytes=-1.0) == 0
