"""MHA, GQA, MQA and MLA built from one model: golden seed figures and the laws they follow."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from kvcore.variants import (
    VARIANTS,
    attention_cost,
    attention_family,
    attention_flops_per_step,
    attention_variants,
    cache_reduction_factor,
    cache_saving_fraction,
    default_gqa_kv_heads,
    kv_projection_params,
    mean_kv_bytes_per_token,
    mla_reprojection_flops_per_step,
)


@pytest.fixture(scope="module")
def models() -> dict[str, kvcore.ModelSpec]:
    return kvcore.load_models()


@pytest.fixture(scope="module")
def llama_8b(models):
    """The seeds' 8B-class shape: 32 layers, 32 query heads, 8 KV heads, d_head 128."""
    return attention_variants(models["llama-3.1-8b"], gqa_kv_heads=8)


def per_token(spec, b=2.0):
    return kvcore.kv_bytes_per_token(spec, bytes_per_value=b)


def test_the_variants_come_in_the_order_of_the_course_table(llama_8b):
    assert tuple(llama_8b) == VARIANTS == ("MHA", "GQA", "MQA", "MLA")


def test_mha_of_the_8b_shape_is_512_kib_per_token(llama_8b):
    # 2 · 32 layers · 32 heads · 128 · 2 bytes = 524,288 B = 512 KiB (seed 000, "MHA clássico").
    assert per_token(llama_8b["MHA"]) == 524_288


def test_gqa_of_the_8b_shape_is_128_kib_per_token(llama_8b):
    # 2 · 32 · 8 · 128 · 2 = 131,072 B = 128 KiB (seed 000, "GQA (8 cabeças KV)").
    assert per_token(llama_8b["GQA"]) == 131_072


def test_at_128k_tokens_mha_needs_64_gib_and_gqa_16_gib(llama_8b):
    # Seed 000: "Uma sequência de 128k, 16 GiB. Sem GQA, 64 GiB."
    assert float(kvcore.kv_cache_bytes(llama_8b["MHA"], context_tokens=131072)) == 64 * kvcore.GiB
    assert float(kvcore.kv_cache_bytes(llama_8b["GQA"], context_tokens=131072)) == 16 * kvcore.GiB


def test_gqa_with_8_of_32_heads_saves_exactly_75_percent(llama_8b):
    # Seed 002's table: 32 Q heads / 8 KV heads → 75 %.
    saving = cache_saving_fraction(per_token(llama_8b["GQA"]), baseline_bytes_per_token=per_token(llama_8b["MHA"]))
    assert float(saving) == 0.75


def test_mqa_with_32_heads_saves_96_875_percent_not_97(llama_8b):
    # Seed 002 prints "97%"; exactly 1 − 1/32 = 0.96875.
    saving = cache_saving_fraction(per_token(llama_8b["MQA"]), baseline_bytes_per_token=per_token(llama_8b["MHA"]))
    assert float(saving) == 0.96875


def test_mqa_divides_the_cache_by_the_number_of_query_heads(models):
    for model_id in ("llama-3.1-8b", "falcon-7b", "gpt2", "deepseek-v3"):
        variants = attention_variants(models[model_id], gqa_kv_heads=1)
        factor = cache_reduction_factor(per_token(variants["MQA"]), baseline_bytes_per_token=per_token(variants["MHA"]))
        assert float(factor) == models[model_id].num_attention_heads


def test_deepseek_v3_caches_70272_bytes_per_token(models):
    # 61 layers · (kv_lora_rank 512 + qk_rope_head_dim 64) · 2 bytes = 70,272 B (DeepSeek-V3 config.json).
    assert per_token(models["deepseek-v3"]) == 70_272


def test_the_mla_variant_of_deepseek_v3_is_deepseek_v3s_own_cache(models):
    mla = attention_variants(models["deepseek-v3"], mla_rank=512, mla_rope_dim=64)["MLA"]
    assert per_token(mla) == per_token(models["deepseek-v3"])


def test_mla_stores_one_latent_with_no_factor_two(llama_8b):
    # 32 layers · (512 + 64) · 2 bytes = 36,864 B: no "2 ·" for K and V (DeepSeek-V2 paper §2.1).
    assert per_token(llama_8b["MLA"]) == 32 * (512 + 64) * 2


def test_the_mla_cache_grows_one_to_one_with_the_latent_rank(models):
    model = models["llama-3.1-8b"]
    small = attention_variants(model, mla_rank=256, mla_rope_dim=64)["MLA"]
    large = attention_variants(model, mla_rank=512, mla_rope_dim=64)["MLA"]
    assert per_token(large, 1.0) - per_token(small, 1.0) == 32 * 256


def test_deepseek_v3s_latent_is_85_times_below_its_mha_equivalent_and_5_times_below_gqa_8(models):
    # kvcore's MHA equivalent: 2 · 61 · 128 · 192 · 2 = 5,996,544 B → 85.3×; GQA-8: 374,784 B → 5.33×.
    deepseek = models["deepseek-v3"]
    mha = kvcore.mha_equivalent_bytes_per_token(deepseek)
    gqa8 = per_token(attention_variants(deepseek, gqa_kv_heads=8)["GQA"])
    assert mha == 5_996_544 and gqa8 == 374_784
    assert float(cache_reduction_factor(70_272, baseline_bytes_per_token=mha)) == pytest.approx(85.33, abs=0.01)
    assert float(cache_reduction_factor(70_272, baseline_bytes_per_token=gqa8)) == pytest.approx(5.33, abs=0.01)


def test_without_gqa_a_70b_model_needs_about_2_6_mb_per_token(models):
    # Seed 004: 2 · 80 · 64 · 128 · 2 = 2,621,440 B ≈ 2.6 MB; its 8 KV heads cut it 8×.
    variants = attention_variants(models["llama-3.1-70b"], gqa_kv_heads=8)
    assert per_token(variants["MHA"]) == 2_621_440
    assert per_token(variants["MHA"]) / per_token(variants["GQA"]) == 8


def test_fp8_halves_every_variant(llama_8b):
    for spec in llama_8b.values():
        assert per_token(spec, 1.0) == per_token(spec, 2.0) / 2


def test_variants_keep_layers_and_query_heads(models):
    model = models["gemma-3-27b"]
    for spec in attention_variants(model, gqa_kv_heads=16).values():
        assert spec.num_hidden_layers == model.num_hidden_layers
        assert spec.num_attention_heads == model.num_attention_heads


def test_variants_attend_to_the_whole_context(models):
    variants = attention_variants(models["qwen3-next-80b-a3b"], gqa_kv_heads=2)
    assert {spec.attention_type for spec in variants.values()} == {"MHA", "GQA", "MQA", "MLA"}
    assert all(attention_family(spec) != "hybrid" for spec in variants.values())


def test_gqa_heads_that_do_not_divide_the_query_heads_are_refused(models):
    with pytest.raises(ValueError, match="must divide"):
        attention_variants(models["llama-3.1-8b"], gqa_kv_heads=5)


def test_a_zero_latent_rank_is_refused(models):
    with pytest.raises(ValueError, match="MLA latent rank"):
        attention_variants(models["llama-3.1-8b"], mla_rank=0)


@pytest.mark.parametrize(("model_id", "heads"), [("llama-3.1-8b", 8), ("falcon-7b", 1), ("gpt2", 3), ("qwen2.5-7b", 4)])
def test_the_default_gqa_heads_divide_the_query_heads(models, model_id, heads):
    assert default_gqa_kv_heads(models[model_id]) == heads


@pytest.mark.parametrize(
    ("model_id", "family"),
    [("gpt2", "MHA"), ("llama-3.1-8b", "GQA"), ("falcon-7b", "MQA"), ("deepseek-v3", "MLA"),
     ("gemma-3-27b", "hybrid"), ("qwen3-next-80b-a3b", "hybrid"), ("mistral-7b-v0.1", "GQA")],
)  # fmt: skip
def test_attention_families_name_mixed_layer_kinds_hybrid(models, model_id, family):
    assert attention_family(models[model_id]) == family


def test_the_mean_bytes_per_token_of_a_full_attention_model_is_its_rate(models):
    model = models["llama-3.1-8b"]
    mean = mean_kv_bytes_per_token(model, context_tokens=np.array([1024, 8192, 131072]))
    np.testing.assert_array_equal(mean, per_token(model))


def test_the_mean_bytes_per_token_of_a_sliding_window_model_falls_with_context(models):
    mean = mean_kv_bytes_per_token(models["gemma-3-27b"], context_tokens=np.array([512, 8192, 131072]))
    assert mean[0] == per_token(models["gemma-3-27b"])
    assert mean[0] > mean[1] > mean[2]


def test_kv_projection_weights_of_llama_8b_are_2_d_model_n_kv_d_head_per_layer(models):
    # 32 layers · 2 · 4096 · 8 · 128 = 268,435,456 parameters (W_K and W_V).
    assert kv_projection_params(models["llama-3.1-8b"]) == 268_435_456


def test_kv_projection_weights_of_deepseek_v3_include_the_up_projections(models):
    # 61 · (7168 · (512 + 64) + 512 · 128 heads · 2 · 128) = 1,275,265,024 (DeepSeek-V2 paper eqs. 9–11, 14).
    assert kv_projection_params(models["deepseek-v3"]) == 1_275_265_024


def test_a_model_without_hidden_size_has_no_projection_count():
    model = kvcore.uniform_model(num_hidden_layers=2, num_key_value_heads=2, head_dim=64)
    with pytest.raises(ValueError, match="hidden_size"):
        kv_projection_params(model)


def test_sharing_kv_heads_leaves_the_attention_math_unchanged(llama_8b):
    flops = {key: float(attention_flops_per_step(llama_8b[key], context_tokens=8192)) for key in ("MHA", "GQA", "MQA")}
    # 32 layers · 4 · 32 heads · 128 · 8192 tokens.
    assert set(flops.values()) == {32 * 4 * 32 * 128 * 8192}


def test_absorbed_mla_does_more_math_per_cached_token(llama_8b):
    # 32 layers · 2 · 32 heads · (2 · 512 + 64) per token, versus 32 · 4 · 32 · 128 for MHA.
    mla = float(attention_flops_per_step(llama_8b["MLA"], context_tokens=1))
    assert mla == 32 * 2 * 32 * (2 * 512 + 64)
    assert mla > float(attention_flops_per_step(llama_8b["MHA"], context_tokens=1))


def test_attention_math_is_linear_in_context_and_users(llama_8b):
    one = float(attention_flops_per_step(llama_8b["GQA"], context_tokens=1000))
    assert float(attention_flops_per_step(llama_8b["GQA"], context_tokens=3000, concurrency=2)) == 6 * one


def test_only_mla_pays_for_re_projection(llama_8b):
    assert float(mla_reprojection_flops_per_step(llama_8b["GQA"], context_tokens=8192)) == 0
    # 32 layers · 8192 tokens · 2 · 512 · 32 heads · 2 · 128 (K and V up-projections).
    expected = 32 * 8192 * 2 * 512 * 32 * 2 * 128
    assert float(mla_reprojection_flops_per_step(llama_8b["MLA"], context_tokens=8192)) == expected


def test_the_attention_cost_times_are_bytes_over_bandwidth_and_flops_over_peak(llama_8b):
    cost = attention_cost(
        llama_8b["GQA"], context_tokens=8192, bandwidth_bytes_per_s=1e12, peak_flop_per_s=1e14, concurrency=2
    )
    assert cost.cache_read_bytes == 2 * 8192 * 131_072
    assert cost.read_s == pytest.approx(cost.cache_read_bytes / 1e12)
    assert cost.compute_s == pytest.approx(cost.attention_flops / 1e14)
    assert cost.reprojection_s == 0


def test_gqa_raises_the_flops_per_byte_by_the_group_size(llama_8b):
    costs = {
        key: attention_cost(llama_8b[key], context_tokens=4096, bandwidth_bytes_per_s=1e12, peak_flop_per_s=1e14)
        for key in ("MHA", "GQA", "MQA")
    }
    assert costs["MHA"].flop_per_byte == 1.0
    assert costs["GQA"].flop_per_byte == 4.0
    assert costs["MQA"].flop_per_byte == 32.0


def test_saving_and_reduction_factor_agree():
    factors = cache_reduction_factor(np.array([1.0, 2.0, 8.0]), baseline_bytes_per_token=8.0)
    savings = cache_saving_fraction(np.array([1.0, 2.0, 8.0]), baseline_bytes_per_token=8.0)
    np.testing.assert_allclose(savings, 1 - 1 / factors)
