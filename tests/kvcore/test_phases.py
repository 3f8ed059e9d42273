"""Prefill is compute-bound, decode memory-bound; a request's timeline; why output tokens cost more."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kvcore as kv
from kvcore import phases


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
    return {
        "peak_flop_per_s": phases.matmul_peak_flop_per_s(gpu, weights_dtype=weights_dtype),
        "bandwidth_bytes_per_s": gpu.bandwidth_bytes_per_s,
        "mfu": mfu,
        "mbu": mbu,
    }


def chat(model, gpu, *, batch=1, prompt=1024, output=300):
    return phases.request_timeline(model, prompt_tokens=prompt, output_tokens=output, batch=batch, **rates(gpu))


# ---------------------------------------------------------------- the roofline


def test_the_h100_ridge_point_is_the_seeds_about_300_flop_per_byte(h100):
    # data/gpus.csv (NVIDIA H100 SXM5 datasheet): 989.4 TFLOP/s BF16 dense ÷ 3,350 GB/s = 295.34 FLOP/byte;
    # seed 004: "cerca de 300 FLOPs de computação fp16 para cada byte".
    ridge = phases.effective_ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=3.35e12)
    assert ridge == pytest.approx(295.34, abs=0.01)
    assert abs(ridge - 300) / 300 < 0.02


def test_efficiencies_of_one_give_the_datasheet_ridge_point(h100):
    datasheet = kv.ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=3.35e12)
    assert phases.effective_ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=3.35e12) == (
        datasheet
    )


def test_decode_at_batch_one_does_about_one_flop_per_byte_in_bf16(llama8b):
    # 2 FLOPs per parameter over 2 bytes per parameter; the KV reads and attention FLOPs add a few per cent.
    intensity = phases.decode_intensity_flop_per_byte(llama8b, context_tokens=1000, batch=1)
    assert 1.0 <= intensity < 1.1


def test_decode_runs_hundreds_of_times_below_the_h100_ridge(llama8b, h100):
    # seed 004: "A operação roda centenas de vezes abaixo do ponto de equilíbrio da máquina".
    ridge = kv.ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s)
    intensity = phases.decode_intensity_flop_per_byte(llama8b, context_tokens=1000, batch=1)
    assert 100 < phases.times_below_ridge(intensity, ridge) < 1000


def test_prefill_intensity_is_about_the_prompt_length_for_a_dense_bf16_model(llama8b):
    # 2·N·n FLOPs over 2·N bytes of weights (plus attention FLOPs and the KV written): ≈ n FLOP/byte.
    assert phases.prefill_intensity_flop_per_byte(llama8b, prompt_tokens=1024) == pytest.approx(1024, rel=0.02)


def test_batching_raises_decode_intensity(llama8b):
    batches = np.array([1, 2, 8, 64, 256])
    intensity = phases.decode_intensity_flop_per_byte(llama8b, context_tokens=2000, batch=batches)
    assert np.all(np.diff(intensity) > 0)


def test_a_long_prompt_prefill_is_compute_bound_and_a_decode_step_memory_bound(llama8b, h100):
    knee = phases.effective_ridge_point(peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=3.35e12)
    prefill = phases.prefill_intensity_flop_per_byte(llama8b, prompt_tokens=8192)
    decode = phases.decode_intensity_flop_per_byte(llama8b, context_tokens=8192)
    assert kv.bound_by(prefill, knee) == "compute"
    assert kv.bound_by(decode, knee) == "memory"


def test_the_fp8_roof_is_used_only_where_the_chip_has_fp8_tensor_cores(gpus):
    h100, a100 = gpus["h100-sxm"], gpus["a100-80gb"]
    assert phases.matmul_peak_flop_per_s(h100, weights_dtype="fp8") == h100.fp8_dense_flop_per_s
    assert phases.matmul_peak_flop_per_s(a100, weights_dtype="fp8") == a100.bf16_dense_flop_per_s
    assert phases.matmul_peak_flop_per_s(h100, weights_dtype="int4") == h100.bf16_dense_flop_per_s


def test_every_gpu_of_the_csv_has_a_finite_matmul_peak_for_every_weights_format(gpus):
    for gpu in gpus.values():
        for dtype in ("bf16", "fp8", "int4"):
            assert np.isfinite(phases.matmul_peak_flop_per_s(gpu, weights_dtype=dtype)), (gpu.id, dtype)


# ---------------------------------------------------------------- times


def test_roofline_time_is_the_longer_of_compute_and_memory_time():
    fast_memory = phases.roofline_time_s(1e12, 1e9, peak_flop_per_s=1e14, bandwidth_bytes_per_s=1e12)
    slow_memory = phases.roofline_time_s(1e12, 1e12, peak_flop_per_s=1e14, bandwidth_bytes_per_s=1e12)
    assert fast_memory == pytest.approx(0.01)  # 1e12 FLOP / 1e14 FLOP/s beats 1 ms of reading
    assert slow_memory == pytest.approx(1.0)  # 1e12 bytes / 1e12 bytes/s beats 10 ms of compute


@given(intensity=st.floats(min_value=0.01, max_value=1e5), mfu=st.floats(0.05, 1.0), mbu=st.floats(0.05, 1.0))
def test_flops_over_roofline_time_lie_on_the_achieved_roof(intensity, mfu, mbu):
    peak, bandwidth, moved = 989.4e12, 3.35e12, 1e9
    time = phases.roofline_time_s(
        intensity * moved, moved, peak_flop_per_s=peak, bandwidth_bytes_per_s=bandwidth, mfu=mfu, mbu=mbu
    )
    roof = phases.achieved_flop_per_s(
        intensity, peak_flop_per_s=peak, bandwidth_bytes_per_s=bandwidth, mfu=mfu, mbu=mbu
    )
    assert intensity * moved / time == pytest.approx(roof, rel=1e-9)


def test_a_short_prompt_costs_about_one_read_of_the_weights(llama8b, h100):
    # 128 tokens on an H100 sit below the ridge: prefill waits for the weights, like a decode step.
    ttft = phases.ttft_s(llama8b, prompt_tokens=128, **rates(h100))
    weights_read = phases.memory_time_s(
        kv.prefill_bytes(llama8b, prompt_tokens=128), bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s, mbu=0.8
    )
    assert ttft == weights_read


def test_a_long_prompt_ttft_is_flops_over_peak_times_mfu(llama8b, h100):
    flops = kv.prefill_flops(llama8b, prompt_tokens=8192)
    assert phases.ttft_s(llama8b, prompt_tokens=8192, **rates(h100)) == flops / (989.4e12 * 0.5)


def test_ttft_grows_with_the_prompt(llama8b, h100):
    prompts = np.array([128, 1024, 8192, 32768, 131072])
    assert np.all(np.diff(phases.ttft_s(llama8b, prompt_tokens=prompts, **rates(h100))) > 0)


def test_a_decode_step_slows_down_as_the_context_grows(llama8b, h100):
    contexts = np.array([1_000, 10_000, 100_000])
    assert np.all(np.diff(phases.tpot_s(llama8b, context_tokens=contexts, **rates(h100))) > 0)


def test_an_moe_decode_step_reads_only_the_active_experts(models, h100):
    # DeepSeek-V3: 671 B parameters, 37 B active per token. One step at batch 1 takes about the time
    # to read the active weights (in FP8, 1 byte each), far less than all of them.
    model = models["deepseek-v3"]
    step = phases.tpot_s(model, context_tokens=1000, **rates(h100, weights_dtype="fp8"), weight_bytes_per_param=1.0)
    all_weights = phases.memory_time_s(model.total_params, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s, mbu=0.8)
    assert step < all_weights / 10


# ---------------------------------------------------------------- one request


def test_the_first_token_comes_from_prefill_and_each_other_from_one_decode_step():
    assert phases.decode_context_tokens(prompt_tokens=1024, output_tokens=300).size == 299
    assert phases.decode_context_tokens(prompt_tokens=1024, output_tokens=1).size == 0


def test_a_request_lasts_its_ttft_plus_its_decode_steps(llama8b, h100):
    timeline = chat(llama8b, h100)
    assert timeline.total_s == pytest.approx(timeline.ttft_s + float(np.sum(timeline.step_s)))
    assert timeline.ttft_s == phases.ttft_s(llama8b, prompt_tokens=1024, **rates(h100))


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
    middle = phases.mean_decode_context_tokens(prompt_tokens=1024, output_tokens=300)
    assert timeline.mean_tpot_s == pytest.approx(float(phases.tpot_s(llama8b, context_tokens=middle, **rates(h100))))


def test_the_first_token_of_a_chat_waits_longer_than_the_next_ones(llama8b, h100):
    # seed 002: "o primeiro token demora mais (prefill inteiro) e os seguintes são rápidos".
    timeline = chat(llama8b, h100)
    assert timeline.ttft_s > 3 * timeline.mean_tpot_s


# ---------------------------------------------------------------- what tokens cost


def test_a_million_tokens_at_1000_per_second_on_a_3_60_per_hour_gpu_cost_1():
    # 1e6 tokens / 1000 tokens/s = 1000 s = 1/3.6 h; × 3.6 per hour = 1.
    assert phases.cost_per_million_tokens(1000.0, price_per_gpu_hour=3.6) == pytest.approx(1.0)


def test_output_tokens_cost_more_than_input_tokens_in_a_typical_chat(llama8b, h100):
    # seed 002: "Saída é sequencial e limitada por memória — e por isso custa mais".
    timeline = chat(llama8b, h100)
    input_rate = phases.prefill_tokens_per_s(1024, timeline.ttft_s)
    output_rate = phases.decode_tokens_per_s(1, timeline.mean_tpot_s)
    assert phases.output_to_input_cost_ratio(input_tokens_per_s=input_rate, output_tokens_per_s=output_rate) > 1


def test_the_cost_ratio_does_not_depend_on_the_gpu_price(llama8b, h100):
    timeline = chat(llama8b, h100)
    input_rate = phases.prefill_tokens_per_s(1024, timeline.ttft_s)
    output_rate = phases.decode_tokens_per_s(1, timeline.mean_tpot_s)
    ratio = phases.output_to_input_cost_ratio(input_tokens_per_s=input_rate, output_tokens_per_s=output_rate)
    for price in (0.5, 2.5, 10.0):
        costs = phases.cost_per_million_tokens(np.array([input_rate, output_rate]), price_per_gpu_hour=price)
        assert costs[1] / costs[0] == pytest.approx(ratio)


def test_the_cost_per_output_token_falls_as_the_batch_grows(llama8b, h100):
    costs = [
        phases.cost_per_million_tokens(
            phases.decode_tokens_per_s(batch, chat(llama8b, h100, batch=batch).mean_tpot_s), price_per_gpu_hour=2.5
        )
        for batch in (1, 2, 8, 64, 256)
    ]
    assert np.all(np.diff(costs) < 0)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("MFU", lambda: phases.compute_time_s(1.0, peak_flop_per_s=1.0, mfu=0.0)),
        ("MBU", lambda: phases.memory_time_s(1.0, bandwidth_bytes_per_s=1.0, mbu=1.5)),
        ("price", lambda: phases.cost_per_million_tokens(1.0, price_per_gpu_hour=-1.0)),
        ("output tokens", lambda: phases.decode_context_tokens(prompt_tokens=10, output_tokens=0)),
    ],
)
def test_bad_inputs_raise_a_value_error_that_names_them(name, call):
    with pytest.raises(ValueError, match=name):
        call()
