"""What transformers' own cache holds where it differs from the serving figure (kvcore.transformers_cache).

Pure arithmetic here; tests/proof runs the real transformers models and checks these
functions byte for byte (part of bash scripts/test.sh).
"""

import numpy as np
import pytest

import kvcore as kv
from kvcore import transformers_cache as tc


@pytest.fixture(scope="module")
def models():
    return kv.load_models()


def test_a_sliding_layer_keeps_one_token_less_than_the_window_once_the_context_passes_it():
    # DynamicSlidingWindowLayer keeps states[:, :, -W + 1:, :] (transformers 5.18.0 cache_utils.py).
    kept = tc.transformers_sliding_cached_tokens([100, 4095, 4096, 10_000], sliding_window=4096)
    assert kept.tolist() == [100, 4095, 4095, 4095]


def test_inside_the_window_transformers_keeps_every_token_as_kvcore_does(models):
    layer = models["mistral-7b-v0.1"].layers[0]
    context = np.arange(0, 4096)
    assert np.array_equal(tc.transformers_layer_cached_tokens(layer, context), kv.layer_cached_tokens(layer, context))


def test_a_window_of_one_token_keeps_every_token():
    # The slice [-1 + 1:] is [0:], the whole tensor: a quirk of the formula, kept exact.
    assert tc.transformers_sliding_cached_tokens(50, sliding_window=1).tolist() == 50


def test_full_attention_models_hold_exactly_the_serving_figure(models):
    llama = models["llama-3.1-8b"]
    context = np.array([1, 1_000, 131_072])
    assert np.array_equal(
        tc.transformers_kv_bytes(llama, context_tokens=context), kv.sequence_kv_bytes(llama, context_tokens=context)
    )


def test_mla_models_hold_exactly_the_serving_figure(models):
    # transformers ≥ 5.15 caches the latent (kv_lora_rank) and the shared RoPE key, as vLLM does.
    deepseek = models["deepseek-v3"]
    assert float(tc.transformers_kv_bytes(deepseek, context_tokens=1)) == 70_272


def test_mistral_holds_4095_of_the_4096_tokens_kvcore_counts_past_the_window(models):
    mistral = models["mistral-7b-v0.1"]
    held = float(tc.transformers_kv_bytes(mistral, context_tokens=32_768))
    serving = float(kv.sequence_kv_bytes(mistral, context_tokens=32_768))
    assert held / serving == pytest.approx(4095 / 4096, rel=1e-12)
    assert serving - held == 32 * 2 * 8 * 128 * 2  # one token of K and V in each of the 32 layers


def test_gemma_2_sliding_layers_hold_one_token_less_while_its_full_layers_hold_the_context(models):
    gemma = models["gemma-2-9b"]
    per_token_per_layer = 2 * 8 * 256 * 2  # K and V · 8 KV heads · head_dim 256 · 2 B
    held = float(tc.transformers_kv_bytes(gemma, context_tokens=8192))
    assert held == (21 * 4095 + 21 * 8192) * per_token_per_layer


def test_linear_layers_add_no_per_token_bytes(models):
    qwen3_next = models["qwen3-next-80b-a3b"]
    per_token = 12 * 2 * 2 * 256 * 2  # only the 12 full layers: K and V · 2 KV heads · head_dim 256 · 2 B
    assert float(tc.transformers_kv_bytes(qwen3_next, context_tokens=1000)) == 1000 * per_token


def test_falcon_40b_holds_16_times_the_serving_figure_in_transformers(models):
    # 128 query heads share 8 KV groups; transformers caches the 128 broadcast copies.
    falcon = models["falcon-40b"]
    held = float(tc.falcon_new_decoder_kv_bytes(falcon, context_tokens=2048))
    assert held == 16 * float(kv.sequence_kv_bytes(falcon, context_tokens=2048))
    assert held == 2 * 60 * 128 * 64 * 2048 * 2


QWEN3_NEXT_LINEAR = {
    # Qwen/Qwen3-Next-80B-A3B-Instruct config.json (data/models.csv row qwen3-next-80b-a3b).
    "linear_num_key_heads": 16,
    "linear_key_head_dim": 128,
    "linear_num_value_heads": 32,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
}


def test_vllm_gated_deltanet_state_is_kvcore_linear_state_values(models):
    assert tc.vllm_gated_deltanet_state_values(**QWEN3_NEXT_LINEAR) == models["qwen3-next-80b-a3b"].linear_state_values


def test_the_gated_deltanet_conv_state_spans_q_k_and_v_channels():
    # conv_dim = 2 · 16 · 128 + 32 · 128 = 8,192 channels, times the kept columns.
    conv = tc.gated_deltanet_conv_state_values(
        linear_num_key_heads=16,
        linear_key_head_dim=128,
        linear_num_value_heads=32,
        linear_value_head_dim=128,
        kept_columns=3,
    )
    assert conv == 3 * 8192


def test_a_qwen3_next_linear_layer_holds_2_162_688_bytes_in_transformers_against_1_097_728_in_vllm():
    # transformers: 4 conv columns · 8,192 · 2 B (bf16) + 32 · 128 · 128 · 4 B (float32 recurrent state).
    held = tc.transformers_gated_deltanet_state_bytes(**QWEN3_NEXT_LINEAR, bytes_per_value=2)
    vllm = tc.vllm_gated_deltanet_state_values(**QWEN3_NEXT_LINEAR) * 2
    assert held == 4 * 8192 * 2 + 524_288 * 4 == 2_162_688
    assert vllm == 1_097_728
    assert held / vllm == pytest.approx(1.970, abs=5e-4)


def test_deepseek_v3_expanded_k_and_v_would_be_71_times_its_latent():
    # transformers ≤ 5.14: 128 heads · (128 + 64) for K + 128 · 128 for V = 40,960 values per token and layer.
    expanded = tc.mla_expanded_values_per_token(
        num_attention_heads=128, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128
    )
    assert expanded / (512 + 64) == pytest.approx(71.11, abs=0.005)


def test_right_after_the_prompt_a_sliding_layer_keeps_the_whole_prompt_allocated():
    storage = tc.transformers_sliding_storage_tokens(10_000, sliding_window=4096, last_step_tokens=10_000)
    assert storage.tolist() == 10_000


def test_while_decoding_a_sliding_layer_keeps_the_serving_figure_allocated():
    context = np.array([10, 4095, 4096, 4097, 100_000])
    storage = tc.transformers_sliding_storage_tokens(context, sliding_window=4096, last_step_tokens=1)
    assert storage.tolist() == np.minimum(context, 4096).tolist()


def test_a_last_step_longer_than_the_context_is_refused():
    with pytest.raises(ValueError, match="last step tokens cannot exceed"):
        tc.transformers_sliding_storage_tokens(10, sliding_window=16, last_step_tokens=11)


def test_a_negative_context_is_refused():
    with pytest.raises(ValueError, match="context tokens"):
        tc.transformers_sliding_cached_tokens(-1, sliding_window=16)


def test_a_fractional_kernel_is_refused():
    with pytest.raises(ValueError, match="linear_conv_kernel_dim"):
        tc.vllm_gated_deltanet_state_values(**{**QWEN3_NEXT_LINEAR, "linear_conv_kernel_dim": 3.5})


def test_deepseek_v3s_cache_was_71_times_larger_before_transformers_kept_the_latent():
    # DeepSeek-V3 config: 128 heads, qk_nope 128, qk_rope 64, v_head_dim 128, kv_lora_rank 512.
    model = kv.load_models()["deepseek-v3"]
    assert tc.mla_expansion_factor(model) == pytest.approx(128 * (128 + 64 + 128) / 576)


def test_falcon_40b_is_cached_16_times_over_by_transformers():
    # Falcon-40B: 128 query heads share 8 KV groups; transformers caches every head's copy.
    model = kv.load_models()["falcon-40b"]
    copies = tc.falcon_new_decoder_kv_bytes(model, context_tokens=1000)
    assert float(copies) == 16 * float(kv.sequence_kv_bytes(model, context_tokens=1000))


def test_the_falcon_copy_factor_is_query_heads_over_kv_groups():
    # Falcon-40B: 128 query heads over 8 KV groups (its config's num_kv_heads).
    assert tc.falcon_new_decoder_copy_factor(kv.load_models()["falcon-40b"]) == 16
