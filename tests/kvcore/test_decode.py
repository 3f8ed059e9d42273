"""Bandwidth-limited decode: step time, the crossover context, the KV share and tensor-parallel sizes."""

import math

import numpy as np
import pytest

import kvcore as kv
from kvcore.decode import crossover_context_tokens, decode_token_s, kv_share_of_step, tensor_parallel_sizes
from kvcore.units import format_seconds_in_s, format_tokens_per_s


@pytest.fixture(scope="module")
def models():
    return kv.load_models()


@pytest.fixture(scope="module")
def h100():
    return kv.load_gpus()["h100-sxm"]


def test_a_million_tokens_of_70b_kv_take_97_8_ms_to_stream_on_one_h100(models, h100):
    # seed 004: "Transmitir 320 GB leva ~95 ms por token"; exact: 327.68 GB / 3.35 TB/s = 97.81 ms
    step = decode_token_s(
        models["llama-3.1-70b"], context_tokens=1_000_000, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s,
        weights_bytes=0,
    )  # fmt: skip
    assert float(step) == pytest.approx(0.09781, abs=1e-5)


def test_sharding_the_70b_cache_over_8_h100s_takes_12_2_ms(models, h100):
    # seed 004: "Fragmentar o cache em 8 GPUs derruba o piso para ~12 ms"; 97.81 ms / 8 = 12.23 ms
    step = decode_token_s(
        models["llama-3.1-70b"], context_tokens=1_000_000, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s,
        weights_bytes=0, tp=8,
    )  # fmt: skip
    assert float(step) == pytest.approx(0.012227, abs=1e-6)


def test_kv_time_is_linear_in_context_for_full_attention(models, h100):
    model = models["llama-3.1-8b"]
    times = decode_token_s(
        model, context_tokens=np.array([1_000, 2_000, 64_000]), bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s,
        weights_bytes=0,
    )  # fmt: skip
    np.testing.assert_allclose(times[1:] / times[0], [2, 64])


def test_an_fp8_cache_halves_the_kv_reading_time(models, h100):
    model, bandwidth = models["llama-3.1-70b"], h100.bandwidth_bytes_per_s
    bf16 = decode_token_s(model, context_tokens=100_000, bandwidth_bytes_per_s=bandwidth, weights_bytes=0)
    fp8 = decode_token_s(
        model, context_tokens=100_000, bandwidth_bytes_per_s=bandwidth, weights_bytes=0, kv_bytes_per_value=1.0
    )
    assert float(fp8) == pytest.approx(float(bf16) / 2)


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_tensor_parallelism_divides_the_step_when_no_kv_head_is_replicated(models, h100, tp):
    model, bandwidth = models["llama-3.1-70b"], h100.bandwidth_bytes_per_s
    one = decode_token_s(model, context_tokens=32_768, bandwidth_bytes_per_s=bandwidth)
    split = decode_token_s(model, context_tokens=32_768, bandwidth_bytes_per_s=bandwidth, tp=tp)
    assert float(split) == pytest.approx(float(one) / tp)


def test_replicated_kv_heads_make_the_fleet_read_more_bytes():
    # 2 KV heads over 8 GPUs: each head is copied onto 4 GPUs, so the fleet reads 4× the cache
    model = kv.uniform_model(
        num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=2, head_dim=64, total_params=1e9
    )
    one = kv.decode_bytes_per_step(model, context_tokens=1000, gpus=1)
    eight = kv.decode_bytes_per_step(model, context_tokens=1000, gpus=8)
    assert float(eight.kv_bytes) == 4 * float(one.kv_bytes)


def test_lower_mbu_slows_the_step_in_proportion(models, h100):
    model, bandwidth = models["llama-3.1-8b"], h100.bandwidth_bytes_per_s
    full = decode_token_s(model, context_tokens=8192, bandwidth_bytes_per_s=bandwidth)
    real = decode_token_s(model, context_tokens=8192, bandwidth_bytes_per_s=bandwidth, efficiency=0.8)
    assert float(real) == pytest.approx(float(full) / 0.8)


def test_llama_8b_kv_overtakes_its_weights_at_122_528_tokens(models):
    # 8.03e9 params · 2 B = 16.06 GB of weights; 2·32·8·128·2 = 131,072 B/token (seed 000); 16.06e9 / 131,072
    model = models["llama-3.1-8b"]
    crossing = crossover_context_tokens(model, weights_bytes=kv.model_weights_bytes(model))
    assert float(crossing) == pytest.approx(16.06e9 / 131_072)


def test_a_bigger_batch_brings_the_crossover_closer_in_proportion(models):
    model = models["llama-3.1-8b"]
    crossing = crossover_context_tokens(model, weights_bytes=16.06e9, batch=np.array([1, 8, 32]))
    np.testing.assert_allclose(crossing[0] / crossing, [1, 8, 32])


def test_a_sliding_window_model_whose_cache_stops_growing_may_never_overtake(models):
    # Mistral 7B v0.1: every layer slides over 4,096 tokens, so one sequence's KV stops at 512 MiB < 14.48 GB
    model = models["mistral-7b-v0.1"]
    assert math.isinf(float(crossover_context_tokens(model, weights_bytes=kv.model_weights_bytes(model))))


def test_a_big_batch_of_a_sliding_window_model_overtakes_inside_the_window(models):
    # 64 sequences: 14.48e9 / (64 · 131,072) = 1,726.2 tokens, below the 4,096-token window
    model = models["mistral-7b-v0.1"]
    crossing = crossover_context_tokens(model, weights_bytes=14.48e9, batch=64)
    assert float(crossing) == pytest.approx(14.48e9 / (64 * 131_072))


@pytest.mark.parametrize("model_id", ["gemma-3-27b", "qwen3-next-80b-a3b", "gpt-oss-120b", "deepseek-v3"])
@pytest.mark.parametrize("batch", [1, 16])
def test_at_the_crossover_the_kv_reads_equal_the_weight_reads(models, model_id, batch):
    model = models[model_id]
    weights = model.active_params * 2.0
    crossing = float(crossover_context_tokens(model, weights_bytes=weights, batch=batch, tp=2))
    read = kv.decode_bytes_per_step(model, context_tokens=crossing, batch=batch, gpus=2)
    assert float(read.kv_bytes) == pytest.approx(float(read.weights_bytes), rel=1e-9)
    assert float(kv_share_of_step(read)) == pytest.approx(0.5)


def test_the_kv_share_grows_with_context_and_stays_a_fraction(models):
    read = kv.decode_bytes_per_step(models["llama-3.1-8b"], context_tokens=np.array([1, 8192, 131072]), batch=4)
    share = kv_share_of_step(read)
    assert np.all(np.diff(share) > 0) and np.all((share > 0) & (share < 1))


@pytest.mark.parametrize(
    ("model_id", "sizes"),
    [
        ("llama-3.1-70b", [1, 2, 4, 8, 16]),  # 64 query heads, 8 KV heads (16 replicates each twice)
        ("gpt2", [1, 2, 3, 4, 6, 12]),  # 12 heads
        ("falcon-7b", [1]),  # 71 query heads: a prime
        ("deepseek-v3", [1, 2, 4, 8, 16]),  # MLA: only the 128 query heads constrain
    ],
)
def test_tensor_parallel_sizes_split_the_heads_evenly(models, model_id, sizes):
    assert tensor_parallel_sizes(models[model_id], max_gpus=16) == sizes


def test_decode_rates_are_formatted_with_the_decimals_they_need():
    assert [format_tokens_per_s(v) for v in (7.1234, 58.81, 1204.4)] == [
        "7.12 tokens/s",
        "58.8 tokens/s",
        "1,204 tokens/s",
    ]
    assert format_tokens_per_s(58.81, unit=False) == "58.8"


def test_long_durations_can_be_shown_in_seconds_to_match_a_quote():
    assert format_seconds_in_s(97.8149) == "97.8 s"
    assert format_seconds_in_s(97.8637, decimals=2) == "97.86 s"
