"""Why cache K and V, and what FlashAttention changes: kvcore.attention's counts, FLOPs and bytes."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from kvcore import attention
from kvcore.attention import (
    GRID_CACHED,
    GRID_COMPUTED,
    GRID_NOT_YET,
    GRID_RECOMPUTED,
    attention_matmul_flops,
    flash_attention_stats_bytes,
    flash_attention_tile_bytes,
    forward_flops_with_cache,
    forward_flops_without_cache,
    hbm_traffic_saving,
    kv_projection_flops_at_step,
    kv_projection_flops_per_token,
    kv_projection_flops_with_cache,
    kv_projection_flops_without_cache,
    kv_projections_recomputed,
    prefill_attention_memory,
    projection_grid,
    recompute_factor,
    recomputed_at_step,
    score_row_bytes,
)


@pytest.fixture(scope="module")
def models() -> dict[str, kvcore.ModelSpec]:
    return kvcore.load_models()


@pytest.fixture(scope="module")
def gpus() -> dict[str, kvcore.GpuSpec]:
    return kvcore.load_gpus()


TRICKY = ["llama-3.1-8b", "gpt2", "deepseek-v3", "gemma-3-27b", "qwen3-next-80b-a3b", "falcon-7b", "gpt-oss-120b"]


# ---------------------------------------------------------------- why cache K and V


def test_a_thousand_tokens_cost_500_500_projections_without_a_cache_and_1000_with_one():
    # Seed 002: N(N+1)/2 = 1000 · 1001 / 2 = 500,500 without a cache; N = 1,000 with one.
    assert kvcore.kv_projections_without_cache(1000) == 500_500
    assert kvcore.kv_projections_with_cache(1000) == 1000


def test_token_1000_recomputes_the_999_before_it():
    # Seed 000: "generating token number one thousand would recompute the K and V of the 999 before it".
    assert recomputed_at_step(1000) == 999


def test_the_wasted_projections_are_the_difference_between_the_two_counts():
    # 8 tokens: 36 − 8 = 28 = 8 · 7 / 2.
    assert kv_projections_recomputed(8) == 28
    n = np.arange(1, 200)
    np.testing.assert_array_equal(
        kv_projections_recomputed(n), kvcore.kv_projections_without_cache(n) - kvcore.kv_projections_with_cache(n)
    )


def test_llama_3_1_8b_projects_536_870_912_flop_of_k_and_v_per_token(models):
    # 2 FLOP per weight · d_model 4096 · (K and V: 2 · 8 KV heads · 128) · 32 layers = 536,870,912.
    assert kv_projection_flops_per_token(models["llama-3.1-8b"]) == 2 * 4096 * (2 * 8 * 128) * 32 == 536_870_912


def test_an_mla_layer_projects_only_its_latent_and_rope_key(models):
    # DeepSeek-V3: 2 · 7168 · (512 + 64) · 61 layers = 503,709,696 FLOP per token.
    assert kv_projection_flops_per_token(models["deepseek-v3"]) == 2 * 7168 * (512 + 64) * 61 == 503_709_696


def test_linear_attention_layers_add_no_kv_projections(models):
    # Qwen3-Next: linear*3,full over 48 layers → only the 12 full layers: 2 · 2048 · (2 · 2 · 256) · 12.
    model = models["qwen3-next-80b-a3b"]
    assert model.count("full") == 12
    assert kv_projection_flops_per_token(model) == 2 * 2048 * (2 * 2 * 256) * 12


@pytest.mark.parametrize("model_id", TRICKY)
def test_the_flops_with_and_without_a_cache_are_the_counts_times_one_projection(models, model_id):
    model, n = models[model_id], np.array([1, 8, 1000, 20000])
    per_token = kv_projection_flops_per_token(model)
    np.testing.assert_allclose(
        kv_projection_flops_without_cache(model, generated_tokens=n), per_token * n * (n + 1) / 2
    )
    np.testing.assert_allclose(kv_projection_flops_with_cache(model, generated_tokens=n), per_token * n)


def test_the_cache_saves_n_plus_one_over_two_times_the_work_for_every_model(models):
    n = np.array([1, 2, 8, 1000, 32768])
    np.testing.assert_allclose(recompute_factor(n), (n + 1) / 2)
    for model_id in TRICKY:
        ratio = kv_projection_flops_without_cache(
            models[model_id], generated_tokens=n
        ) / kv_projection_flops_with_cache(models[model_id], generated_tokens=n)
        np.testing.assert_allclose(ratio, recompute_factor(n))


def test_doubling_n_roughly_quadruples_the_work_without_a_cache_and_doubles_it_with_one(models):
    model = models["llama-3.1-8b"]
    without = kv_projection_flops_without_cache(model, generated_tokens=[10_000, 20_000])
    with_cache = kv_projection_flops_with_cache(model, generated_tokens=[10_000, 20_000])
    assert without[1] / without[0] == pytest.approx(4, rel=1e-3)
    assert with_cache[1] / with_cache[0] == 2


def test_step_t_costs_t_projections_without_a_cache_and_one_with_it(models):
    model = models["llama-3.1-8b"]
    per_token = kv_projection_flops_per_token(model)
    np.testing.assert_allclose(
        kv_projection_flops_at_step(model, [1, 5, 1000], cached=False), per_token * np.array([1, 5, 1000])
    )
    np.testing.assert_allclose(kv_projection_flops_at_step(model, [1, 5, 1000], cached=True), per_token)


def test_rerunning_the_whole_model_costs_the_same_ratio_but_far_more_flops(models):
    model, n = models["llama-3.1-8b"], np.array([8, 1000])
    forward_without = forward_flops_without_cache(model, generated_tokens=n)
    forward_with = forward_flops_with_cache(model, generated_tokens=n)
    np.testing.assert_allclose(forward_without / forward_with, recompute_factor(n))
    assert np.all(forward_without > kv_projection_flops_without_cache(model, generated_tokens=n))


@pytest.mark.parametrize("steps", [1, 2, 8, 24])
def test_the_grid_computes_n_n_plus_1_over_2_cells_without_a_cache_and_n_with_one(steps):
    without, with_cache = projection_grid(steps, cached=False), projection_grid(steps, cached=True)
    computed_without = np.count_nonzero((without == GRID_COMPUTED) | (without == GRID_RECOMPUTED))
    assert computed_without == kvcore.kv_projections_without_cache(steps)
    assert np.count_nonzero(with_cache == GRID_COMPUTED) == kvcore.kv_projections_with_cache(steps)
    assert np.count_nonzero(with_cache == GRID_CACHED) == kv_projections_recomputed(steps)
    assert np.count_nonzero(without == GRID_NOT_YET) == np.count_nonzero(with_cache == GRID_NOT_YET)


def test_the_grid_puts_the_new_token_on_the_diagonal_and_nothing_in_the_future():
    grid = projection_grid(5, cached=True)
    assert np.all(np.diag(grid) == GRID_COMPUTED)
    assert np.all(grid[np.triu_indices(5, k=1)] == GRID_NOT_YET)
    assert np.all(grid[np.tril_indices(5, k=-1)] == GRID_CACHED)


def test_a_model_without_hidden_size_cannot_price_its_projections():
    shape = kvcore.uniform_model(num_hidden_layers=2, num_key_value_heads=1, head_dim=8)
    with pytest.raises(ValueError, match="hidden_size"):
        kv_projection_flops_per_token(shape)


@pytest.mark.parametrize("bad", [-1, float("nan"), "many"])
def test_bad_token_counts_are_refused_with_a_clear_message(models, bad):
    with pytest.raises(ValueError, match="tokens"):
        kv_projection_flops_without_cache(models["llama-3.1-8b"], generated_tokens=bad)


def test_a_grid_needs_a_whole_number_of_steps():
    with pytest.raises(ValueError, match="steps"):
        projection_grid(0, cached=True)


# ---------------------------------------------------------------- what FlashAttention does and does not do


@pytest.mark.parametrize("model_id", TRICKY)
def test_flash_attention_leaves_the_kv_cache_exactly_as_it_was(models, model_id):
    # Seed 000: "the K and V of the previous tokens are still there, taking exactly the same bytes".
    n = np.array([1024, 8192, 131072])
    standard = prefill_attention_memory(models[model_id], tokens=n, flash=False, batch=3)
    flash = prefill_attention_memory(models[model_id], tokens=n, flash=True, batch=3)
    np.testing.assert_array_equal(standard.kv_cache_bytes, flash.kv_cache_bytes)
    np.testing.assert_array_equal(
        flash.kv_cache_bytes, kvcore.kv_cache_bytes(models[model_id], context_tokens=n, concurrency=3)
    )


def test_an_8k_prompt_of_llama_3_1_8b_writes_a_4_gib_score_matrix_per_layer(models):
    # 8192² scores · 32 heads · 2 bytes (BF16) = 4,294,967,296 B = 4 GiB; FlashAttention: 4 · 8192 · 32 = 1 MiB.
    standard = prefill_attention_memory(models["llama-3.1-8b"], tokens=8192, flash=False)
    flash = prefill_attention_memory(models["llama-3.1-8b"], tokens=8192, flash=True)
    assert standard.temporary_bytes == 4 * kvcore.GiB
    assert flash.temporary_bytes == 1 * kvcore.MiB
    assert standard.total == 5 * kvcore.GiB  # plus the 1 GiB cache (128 KiB/token · 8192, seed 000)


def test_the_score_matrix_grows_with_n_squared_and_the_row_statistics_with_n():
    n = np.array([4096, 8192])
    scores = kvcore.attention_scores_bytes(n, heads=32)
    stats = flash_attention_stats_bytes(n, heads=32)
    assert scores[1] / scores[0] == 4
    assert stats[1] / stats[0] == 2


def test_a_128k_prompt_needs_a_score_matrix_bigger_than_an_h100(models, gpus):
    # 131072² · 32 heads · 2 bytes = 1 TiB for one layer, against 80 GiB of HBM.
    standard = prefill_attention_memory(models["llama-3.1-8b"], tokens=131072, flash=False)
    assert standard.temporary_bytes == kvcore.TiB
    assert standard.temporary_bytes > gpus["h100-sxm"].memory_bytes


def test_flash_attention_does_the_same_flops_as_standard_attention():
    # 4 · n² · d · h: 4 · 8192² · 128 · 32 = 1,099,511,627,776 — Dao et al. 2022, Theorem 1: O(n²d) either way.
    assert attention_matmul_flops(8192, head_dim=128, heads=32) == 1_099_511_627_776


def test_the_traffic_saving_of_flashattention_2_tends_to_2_br_over_d():
    # (4nd + 4n²) ÷ (2nd + 2nd·⌈n/128⌉) → 2 · 128 / d for long n.
    assert hbm_traffic_saving(131072, head_dim=128) == pytest.approx(2.0, rel=1e-3)
    assert hbm_traffic_saving(131072, head_dim=64) == pytest.approx(4.0, rel=1e-3)
    assert np.all(hbm_traffic_saving([1024, 8192], head_dim=64) > 1)


def test_a_flashattention_tile_does_not_depend_on_n():
    # (128 · 128 + 2 · 64 · 128) · 2 bytes + 4 · 128 · 64 = 65,536 + 32,768 = 98,304 B = 96 KiB.
    assert flash_attention_tile_bytes(head_dim=128) == 98_304


def test_a_decode_step_scores_one_row_not_a_matrix():
    # One query against 8192 keys, 32 heads, BF16: 8192 · 32 · 2 = 512 KiB (the n × n matrix would be 4 GiB).
    assert score_row_bytes(8192, heads=32) == 512 * kvcore.KiB


def test_the_h100_sram_is_33_mib_and_its_50_mib_is_the_l2_cache(gpus):
    # Seed 002's "~50 MB of SRAM": the H100's L2. Its SMs hold 132 · 256 KiB = 33 MiB of L1/shared memory.
    h100 = gpus["h100-sxm"]
    assert h100.sram_bytes == 132 * 256 * kvcore.KiB == 33 * kvcore.MiB
    assert h100.l2_cache_bytes == 50 * kvcore.MiB


def test_the_a100_40gb_of_the_flashattention_paper_has_about_20_mib_of_sram(gpus):
    # Dao et al. 2022, Fig. 1: "SRAM 20 MB, HBM 40 GB at 1.5 TB/s" — 108 SMs · 192 KiB = 20.25 MiB.
    a100 = gpus["a100-40gb"]
    assert a100.sram_bytes == 108 * 192 * kvcore.KiB
    assert a100.memory_bytes == 40 * kvcore.GiB


def test_the_attention_module_exposes_the_grid_states():
    assert {GRID_NOT_YET, GRID_COMPUTED, GRID_CACHED, GRID_RECOMPUTED} == {0, 1, 2, 3}
    assert attention.projection_grid(1, cached=False).tolist() == [[GRID_COMPUTED]]
