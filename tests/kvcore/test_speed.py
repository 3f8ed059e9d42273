"""Decode is bandwidth-bound, prefill compute-bound; the roofline says which."""

import pytest

import kvcore as kv


@pytest.fixture(scope="module")
def llama8b():
    return kv.load_models()["llama-3.1-8b"]


@pytest.fixture(scope="module")
def h100():
    return kv.load_gpus()["h100-sxm"]


def test_decode_reads_the_weights_once_per_step_whatever_the_batch(llama8b):
    one = kv.decode_bytes_per_step(llama8b, context_tokens=1000, batch=1)
    many = kv.decode_bytes_per_step(llama8b, context_tokens=1000, batch=64)
    assert many.weights_bytes == one.weights_bytes
    assert many.kv_bytes == 64 * one.kv_bytes


def test_decode_step_parts_sum_to_the_total(llama8b):
    read = kv.decode_bytes_per_step(llama8b, context_tokens=[1, 1000, 100_000], batch=4)
    assert (read.weights_bytes + read.kv_bytes == read.total).all()


def test_lower_efficiency_makes_each_step_slower(llama8b, h100):
    read = kv.decode_bytes_per_step(llama8b, context_tokens=1000).total
    bound = kv.decode_step_s(read, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s)
    real = kv.decode_step_s(read, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s, efficiency=0.5)
    assert real == 2 * bound


def test_prefill_flops_are_two_per_active_parameter_plus_attention(llama8b):
    n = 1000
    attention = 32 * 4 * (32 * 128) * n * (n + 1) / 2  # 32 layers × 4·d_attn per causal pair
    assert kv.prefill_flops(llama8b, prompt_tokens=n) == pytest.approx(2 * llama8b.active_params * n + attention)


def test_sliding_layers_score_at_most_the_window_per_query():
    m = kv.uniform_model(
        num_hidden_layers=1, num_key_value_heads=1, head_dim=1, sliding_window=4, sliding_layers=1, total_params=1.0
    )
    # pairs for n = 6, W = 4: 1 + 2 + 3 + 4 + 4 + 4 = 18
    assert kv.prefill_flops(m, prompt_tokens=6) == 2 * 6 + 4 * 1 * 18


def test_decode_sits_far_below_the_ridge_and_prefill_above_it(llama8b, h100):
    ridge = kv.ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s)
    decode = kv.arithmetic_intensity(
        kv.decode_flops_per_step(llama8b, context_tokens=1000),
        kv.decode_bytes_per_step(llama8b, context_tokens=1000).total,
    )
    prefill = kv.arithmetic_intensity(
        kv.prefill_flops(llama8b, prompt_tokens=4096), kv.prefill_bytes(llama8b, prompt_tokens=4096)
    )
    assert kv.bound_by(decode, ridge) == "memory" and decode < 2
    assert kv.bound_by(prefill, ridge) == "compute"


def test_attainable_throughput_is_capped_by_the_roof(h100):
    roof = kv.attainable_flop_per_s(
        [1.0, 1e6], peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s
    )
    assert roof[0] == h100.bandwidth_bytes_per_s and roof[1] == h100.bf16_dense_flop_per_s


def test_prefill_time_divides_by_peak_and_mfu():
    assert kv.prefill_time_s(1e15, peak_flop_per_s=1e15, mfu=0.5) == 2.0


@pytest.mark.parametrize("bad", [0.0, 1.5, float("nan")])
def test_efficiency_outside_zero_to_one_is_refused(bad):
    with pytest.raises(ValueError, match="efficiency"):
        kv.stream_time_s(1.0, bandwidth_bytes_per_s=1.0, efficiency=bad)


def test_a_model_without_parameter_count_asks_for_it():
    m = kv.uniform_model(num_hidden_layers=2, num_key_value_heads=1, head_dim=8)
    with pytest.raises(ValueError, match="--params-b"):
        kv.prefill_flops(m, prompt_tokens=10)


def test_score_matrix_grows_with_the_square_of_the_sequence():
    # a 32k × 32k FP16 score matrix: 2 GiB per head and layer, which FlashAttention never writes to HBM
    assert kv.attention_scores_bytes(32_768) == 2 * 2**30
    assert kv.attention_scores_bytes(65_536) == 4 * kv.attention_scores_bytes(32_768)


def test_flash_attention_moves_less_hbm_traffic_than_standard_attention():
    n = 8192
    assert kv.flash_attention_hbm_bytes(n, head_dim=128) < kv.standard_attention_hbm_bytes(n, head_dim=128)


def test_without_a_cache_the_t_th_token_recomputes_t_projections_and_with_one_just_one():
    assert list(kv.projections_at_step([1, 5, 1000], cached=False)) == [1, 5, 1000]
    assert list(kv.projections_at_step([1, 5, 1000], cached=True)) == [1, 1, 1]


def test_the_cli_total_over_gpus_counts_replicated_heads_on_every_rank():
    m = kv.load_models()["llama-3.1-405b"]  # 8 KV heads on 16 GPUs: each head stored twice
    per_gpu = kv.kv_cache_bytes(m, context_tokens=1000, tp=16)
    assert (
        kv.kv_cache_bytes_all_gpus(m, context_tokens=1000, tp=16)
        == 16 * per_gpu
        == 2 * kv.kv_cache_bytes(m, context_tokens=1000)
    )
