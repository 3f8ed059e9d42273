"""The time model (kvcore.timing): one roofline for decode and prefill, a request's timeline, what tokens cost.

Moved here from test_speed.py, test_phases.py and test_decode.py (one test file per module); every
test keeps its name and its assertions.
"""

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore as kv
from kvcore import cli, timing
from kvcore.timing import crossover_context_tokens, decode_token_s, kv_share_of_step, tensor_parallel_sizes
from kvcore.units import format_seconds_in_s, format_tokens_per_s


@pytest.fixture(scope="module")
def models():
    return kv.load_models()


@pytest.fixture(scope="module")
def gpus():
    return kv.load_gpus()


@pytest.fixture(scope="module")
def llama8b(models):
    return models["llama-3.1-8b"]


@pytest.fixture(scope="module")
def h100(gpus):
    return gpus["h100-sxm"]


def rates(gpu, *, mfu=0.5, mbu=0.8, weights_dtype="bf16"):
    return {"rates": timing.rates_for(gpu, weights_dtype=weights_dtype, mfu=mfu, mbu=mbu)}


def chat(model, gpu, *, batch=1, prompt=1024, output=300):
    return timing.request_timeline(model, prompt_tokens=prompt, output_tokens=output, batch=batch, **rates(gpu))


# ---------------------------------------------------------------- bytes and FLOPs of the two phases (was test_speed.py)


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


def test_a_model_without_parameter_count_asks_for_it(capsys):
    m = kv.uniform_model(num_hidden_layers=2, num_key_value_heads=1, head_dim=8)
    with pytest.raises(ValueError, match="parameter count"):
        kv.prefill_flops(m, prompt_tokens=10)
    # Issue 12: kvcore's message names no option; the CLI asks for the one it has (kvcore.cli.REMEDIES).
    argv = ["prefill", "--layers", "2", "--kv-heads", "1", "--head-dim", "8", "--tflops", "100", "--prompt", "10"]
    assert cli.main(argv) == cli.EXIT_BAD_INPUT
    assert re.search("--params-b", capsys.readouterr().err)


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


# ---------------------------------------------------------------- the roofline


def test_the_h100_ridge_point_is_the_seeds_about_300_flop_per_byte(h100):
    # data/gpus.csv (NVIDIA H100 SXM5 datasheet): 989.4 TFLOP/s BF16 dense ÷ 3,350 GB/s = 295.34 FLOP/byte;
    # seed 004: "cerca de 300 FLOPs de computação fp16 para cada byte".
    ridge = timing.effective_ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=3.35e12)
    assert ridge == pytest.approx(295.34, abs=0.01)
    assert abs(ridge - 300) / 300 < 0.02


def test_efficiencies_of_one_give_the_datasheet_ridge_point(h100):
    datasheet = kv.ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=3.35e12)
    assert timing.effective_ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=3.35e12) == (
        datasheet
    )


def test_decode_at_batch_one_does_about_one_flop_per_byte_in_bf16(llama8b):
    # 2 FLOPs per parameter over 2 bytes per parameter; the KV reads and attention FLOPs add a few per cent.
    intensity = timing.decode_intensity_flop_per_byte(llama8b, context_tokens=1000, batch=1)
    assert 1.0 <= intensity < 1.1


def test_decode_runs_hundreds_of_times_below_the_h100_ridge(llama8b, h100):
    # seed 004: "A operação roda centenas de vezes abaixo do ponto de equilíbrio da máquina".
    ridge = kv.ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s)
    intensity = timing.decode_intensity_flop_per_byte(llama8b, context_tokens=1000, batch=1)
    assert 100 < timing.times_below_ridge(intensity, ridge) < 1000


def test_prefill_intensity_is_about_the_prompt_length_for_a_dense_bf16_model(llama8b):
    # 2·N·n FLOPs over 2·N bytes of weights (plus attention FLOPs and the KV written): ≈ n FLOP/byte.
    assert timing.prefill_intensity_flop_per_byte(llama8b, prompt_tokens=1024) == pytest.approx(1024, rel=0.02)


def test_batching_raises_decode_intensity(llama8b):
    batches = np.array([1, 2, 8, 64, 256])
    intensity = timing.decode_intensity_flop_per_byte(llama8b, context_tokens=2000, batch=batches)
    assert np.all(np.diff(intensity) > 0)


def test_a_long_prompt_prefill_is_compute_bound_and_a_decode_step_memory_bound(llama8b, h100):
    knee = timing.effective_ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=3.35e12)
    prefill = timing.prefill_intensity_flop_per_byte(llama8b, prompt_tokens=8192)
    decode = timing.decode_intensity_flop_per_byte(llama8b, context_tokens=8192)
    assert kv.bound_by(prefill, knee) == "compute"
    assert kv.bound_by(decode, knee) == "memory"


def test_the_fp8_roof_is_used_only_where_the_chip_has_fp8_tensor_cores(gpus):
    h100, a100 = gpus["h100-sxm"], gpus["a100-80gb"]
    assert timing.matmul_peak_flop_per_s(h100, weights_dtype="fp8") == h100.fp8_dense_flop_per_s
    assert timing.matmul_peak_flop_per_s(a100, weights_dtype="fp8") == a100.bf16_dense_flop_per_s
    assert timing.matmul_peak_flop_per_s(h100, weights_dtype="int4") == h100.bf16_dense_flop_per_s


def test_every_gpu_of_the_csv_has_a_finite_matmul_peak_for_every_weights_format(gpus):
    for gpu in gpus.values():
        for dtype in ("bf16", "fp8", "int4"):
            assert np.isfinite(timing.matmul_peak_flop_per_s(gpu, weights_dtype=dtype)), (gpu.id, dtype)


# ---------------------------------------------------------------- times


def test_roofline_time_is_the_longer_of_compute_and_memory_time():
    fast_memory = timing.roofline_time_s(1e12, 1e9, peak_flop_per_s=1e14, bandwidth_bytes_per_s=1e12)
    slow_memory = timing.roofline_time_s(1e12, 1e12, peak_flop_per_s=1e14, bandwidth_bytes_per_s=1e12)
    assert fast_memory == pytest.approx(0.01)  # 1e12 FLOP / 1e14 FLOP/s beats 1 ms of reading
    assert slow_memory == pytest.approx(1.0)  # 1e12 bytes / 1e12 bytes/s beats 10 ms of compute


@settings(deadline=None)
@given(intensity=st.floats(min_value=0.01, max_value=1e5), mfu=st.floats(0.05, 1.0), mbu=st.floats(0.05, 1.0))
def test_flops_over_roofline_time_lie_on_the_achieved_roof(intensity, mfu, mbu):
    peak, bandwidth, moved = 989.4e12, 3.35e12, 1e9
    time = timing.roofline_time_s(
        intensity * moved, moved, peak_flop_per_s=peak, bandwidth_bytes_per_s=bandwidth, mfu=mfu, mbu=mbu
    )
    roof = timing.achieved_flop_per_s(
        intensity, peak_flop_per_s=peak, bandwidth_bytes_per_s=bandwidth, mfu=mfu, mbu=mbu
    )
    assert intensity * moved / time == pytest.approx(roof, rel=1e-9)


def test_a_short_prompt_costs_about_one_read_of_the_weights(llama8b, h100):
    # 128 tokens on an H100 sit below the ridge: prefill waits for the weights, like a decode step.
    ttft = timing.ttft_s(llama8b, prompt_tokens=128, **rates(h100))
    weights_read = timing.memory_time_s(
        kv.prefill_bytes(llama8b, prompt_tokens=128), bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s, mbu=0.8
    )
    assert ttft == weights_read


def test_a_long_prompt_ttft_is_flops_over_peak_times_mfu(llama8b, h100):
    flops = kv.prefill_flops(llama8b, prompt_tokens=8192)
    assert timing.ttft_s(llama8b, prompt_tokens=8192, **rates(h100)) == flops / (989.4e12 * 0.5)


def test_ttft_grows_with_the_prompt(llama8b, h100):
    prompts = np.array([128, 1024, 8192, 32768, 131072])
    assert np.all(np.diff(timing.ttft_s(llama8b, prompt_tokens=prompts, **rates(h100))) > 0)


def test_a_decode_step_slows_down_as_the_context_grows(llama8b, h100):
    contexts = np.array([1_000, 10_000, 100_000])
    assert np.all(np.diff(timing.tpot_s(llama8b, context_tokens=contexts, **rates(h100))) > 0)


def test_an_moe_decode_step_reads_only_the_active_experts(models, h100):
    # DeepSeek-V3: 671 B parameters, 37 B active per token. One step at batch 1 takes about the time
    # to read the active weights (in FP8, 1 byte each), far less than all of them.
    model = models["deepseek-v3"]
    step = timing.tpot_s(model, context_tokens=1000, **rates(h100, weights_dtype="fp8"), weight_bytes_per_param=1.0)
    all_weights = timing.memory_time_s(model.total_params, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s, mbu=0.8)
    assert step < all_weights / 10


# ---------------------------------------------------------------- one request


def test_the_first_token_comes_from_prefill_and_each_other_from_one_decode_step():
    assert timing.decode_context_tokens(prompt_tokens=1024, output_tokens=300).size == 299
    assert timing.decode_context_tokens(prompt_tokens=1024, output_tokens=1).size == 0


def test_a_request_lasts_its_ttft_plus_its_decode_steps(llama8b, h100):
    timeline = chat(llama8b, h100)
    assert timeline.total_s == pytest.approx(timeline.ttft_s + float(np.sum(timeline.step_s)))
    assert timeline.ttft_s == timing.ttft_s(llama8b, prompt_tokens=1024, **rates(h100))


def test_tokens_arrive_one_by_one_after_the_prefill(llama8b, h100):
    timeline = chat(llama8b, h100, output=300)
    arrivals = timeline.arrival_s
    assert arrivals.size == 300
    assert arrivals[0] == timeline.ttft_s
    assert arrivals[-1] == pytest.approx(timeline.total_s)
    assert np.all(np.diff(arrivals) > 0)


def test_the_mean_time_per_token_is_the_step_in_the_middle_of_the_answer(llama8b, h100):
    # Memory-bound throughout, so the step time is linear in the context and the mean is the middle step.
    timeline = chat(llama8b, h100, prompt=1024, output=300)
    middle = timing.mean_decode_context_tokens(prompt_tokens=1024, output_tokens=300)
    assert timeline.mean_tpot_s == pytest.approx(float(timing.tpot_s(llama8b, context_tokens=middle, **rates(h100))))


def test_the_first_token_of_a_chat_waits_longer_than_the_next_ones(llama8b, h100):
    # seed 002: "o primeiro token demora mais (prefill inteiro) e os seguintes são rápidos".
    timeline = chat(llama8b, h100)
    assert timeline.ttft_s > 3 * timeline.mean_tpot_s


# ---------------------------------------------------------------- what tokens cost


def test_a_million_tokens_at_1000_per_second_on_a_3_60_per_hour_gpu_cost_1():
    # 1e6 tokens / 1000 tokens/s = 1000 s = 1/3.6 h; × 3.6 per hour = 1.
    assert timing.cost_per_million_tokens(1000.0, price_per_gpu_hour=3.6) == pytest.approx(1.0)


def test_output_tokens_cost_more_than_input_tokens_in_a_typical_chat(llama8b, h100):
    # seed 002: "Saída é sequencial e limitada por memória — e por isso custa mais".
    timeline = chat(llama8b, h100)
    input_rate = timing.prefill_tokens_per_s(1024, timeline.ttft_s)
    output_rate = timing.decode_tokens_per_s(1, timeline.mean_tpot_s)
    assert timing.output_to_input_cost_ratio(input_tokens_per_s=input_rate, output_tokens_per_s=output_rate) > 1


def test_the_cost_ratio_does_not_depend_on_the_gpu_price(llama8b, h100):
    timeline = chat(llama8b, h100)
    input_rate = timing.prefill_tokens_per_s(1024, timeline.ttft_s)
    output_rate = timing.decode_tokens_per_s(1, timeline.mean_tpot_s)
    ratio = timing.output_to_input_cost_ratio(input_tokens_per_s=input_rate, output_tokens_per_s=output_rate)
    for price in (0.5, 2.5, 10.0):
        costs = timing.cost_per_million_tokens(np.array([input_rate, output_rate]), price_per_gpu_hour=price)
        assert costs[1] / costs[0] == pytest.approx(ratio)


def test_the_cost_per_output_token_falls_as_the_batch_grows(llama8b, h100):
    costs = [
        timing.cost_per_million_tokens(
            timing.decode_tokens_per_s(batch, chat(llama8b, h100, batch=batch).mean_tpot_s), price_per_gpu_hour=2.5
        )
        for batch in (1, 2, 8, 64, 256)
    ]
    assert np.all(np.diff(costs) < 0)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("MFU", lambda: timing.compute_time_s(1.0, peak_flop_per_s=1.0, mfu=0.0)),
        ("MBU", lambda: timing.memory_time_s(1.0, bandwidth_bytes_per_s=1.0, mbu=1.5)),
        ("price", lambda: timing.cost_per_million_tokens(1.0, price_per_gpu_hour=-1.0)),
        ("output tokens", lambda: timing.decode_context_tokens(prompt_tokens=10, output_tokens=0)),
    ],
)
def test_bad_inputs_raise_a_value_error_that_names_them(name, call):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------- bandwidth-limited decode (was test_decode.py)


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
    weights = float(kv.decode_weights_read_bytes(model, batch=batch))
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


# ---------------------------------------------------------------- both terms of a phase, from one function


@pytest.mark.parametrize(("model_id", "batch"), [("llama-3.1-8b", 1), ("gpt-oss-20b", 256), ("deepseek-v3", 8)])
def test_a_decode_steps_two_terms_are_its_flops_and_bytes_over_the_rates_and_tpot_is_the_larger(
    models, gpus, model_id, batch
):
    model, rates = models[model_id], timing.rates_for(gpus["rtx-4090"], weights_dtype="bf16", mbu=0.8)
    terms = timing.decode_step_times(model, context_tokens=1024, batch=batch, rates=rates)
    flops = timing.decode_flops_per_step(model, context_tokens=1024, batch=batch)
    moved = timing.decode_bytes_per_step(model, context_tokens=1024, batch=batch).total
    assert float(terms.compute_s) == float(flops / (rates.peak_flop_per_s * rates.mfu))
    assert float(terms.memory_s) == float(moved / (rates.bandwidth_bytes_per_s * rates.mbu))
    tpot = timing.tpot_s(model, context_tokens=1024, batch=batch, rates=rates)
    assert float(tpot) == max(float(terms.compute_s), float(terms.memory_s))


def test_a_prefills_two_terms_give_the_ttft_and_the_cli_reports_the_same_terms(models, capsys):
    # Seed case of the issue: Llama 3.1 8B, 128 tokens, H100 SXM, MFU 1: 2.08 ms of compute, 4.80 ms of reading.
    model, rates = models["llama-3.1-8b"], timing.rates_for(kv.load_gpus()["h100-sxm"], weights_dtype="bf16")
    terms = timing.prefill_times(model, prompt_tokens=128, rates=rates)
    assert float(terms.time_s) == float(timing.ttft_s(model, prompt_tokens=128, rates=rates))
    assert cli.main(["prefill", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "128", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["compute_time_s"], shown["memory_time_s"]) == (float(terms.compute_s), float(terms.memory_s))


def test_one_token_touches_its_k_experts_and_a_big_batch_nearly_all():
    # E · (1 − (1 − k/E)^B): Qwen3-30B-A3B's 128 experts, top-8
    touched = kv.experts_touched(num_experts=128, experts_per_token=8, tokens=np.array([1, 2, 16, 1024]))
    assert touched[0] == pytest.approx(8.0)
    assert touched[1] == pytest.approx(128 * (1 - (120 / 128) ** 2))  # 15.5: two tokens rarely share all 8
    assert np.all(np.diff(touched) > 0)
    assert touched[-1] == pytest.approx(128.0)


def test_more_experts_per_token_than_experts_is_an_error():
    with pytest.raises(kv.KvError) as raised:
        kv.experts_touched(num_experts=8, experts_per_token=9, tokens=1)
    assert raised.value.code == "experts_per_token_exceeds_experts"


@pytest.mark.parametrize("model_id", ["mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-120b"])
def test_a_moe_decode_step_reads_from_the_active_to_the_total_weights(models, model_id):
    model = models[model_id]
    read = kv.decode_weights_read_bytes(model, batch=np.array([1, 8, 64, 4096]), weight_bytes_per_param=1.0)
    assert read[0] == pytest.approx(model.active_params)
    assert np.all(np.diff(read) > 0)
    assert read[-1] == pytest.approx(model.total_params, rel=1e-6)


def test_a_dense_model_reads_every_weight_once_whatever_the_batch(models):
    model = models["llama-3.1-8b"]
    read = kv.decode_weights_read_bytes(model, batch=np.array([1, 256]))
    assert read.tolist() == [model.active_params * 2.0] * 2


def test_a_moe_step_of_a_batch_reads_more_weights_than_one_token(models):
    model = models["mixtral-8x7b"]
    one = kv.decode_bytes_per_step(model, context_tokens=1024, batch=1)
    many = kv.decode_bytes_per_step(model, context_tokens=1024, batch=4)
    # 8 experts, top-2: 4 tokens touch 8 · (1 − 0.75⁴) = 5.47 experts per layer, not 2
    per_expert = (model.total_params - model.active_params) / 6
    assert float(many.weights_bytes - one.weights_bytes) == pytest.approx(2.0 * (8 * (1 - 0.75**4) - 2) * per_expert)
