"""Continuous batching on a fixed block pool: the simulator's invariants (issue 4, part 5)."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore as kv
from course.scheduler_presets import preset
from kvcore.scheduler import (
    Requests,
    ServerConfig,
    Workload,
    blocks_for_no_preemption,
    generate_requests,
    server_from_model,
    simulate,
    step_time_s,
    summarize,
)
from kvcore.units import GiB

SMALL = Workload(num_requests=200, arrival_rate_per_s=40.0, prompt_mean_tokens=300, output_mean_tokens=120, seed=7)


@pytest.fixture(scope="module")
def trace():
    return generate_requests(SMALL)


@pytest.fixture(scope="module")
def tight(trace):
    """A pool a third of what the load would like: preemptions guaranteed."""
    return simulate(trace, ServerConfig(num_blocks=600, max_num_seqs=64))


def full_length_tokens(trace):
    return trace.prompt_tokens + trace.output_tokens


def test_the_same_seed_draws_the_same_trace():
    one, two = generate_requests(SMALL), generate_requests(SMALL)
    assert np.array_equal(one.arrival_s, two.arrival_s)
    assert np.array_equal(one.prompt_tokens, two.prompt_tokens)
    assert np.array_equal(one.output_tokens, two.output_tokens)


def test_a_different_seed_draws_a_different_trace():
    other = generate_requests(dataclasses.replace(SMALL, seed=8))
    assert not np.array_equal(generate_requests(SMALL).prompt_tokens, other.prompt_tokens)


def test_drawn_lengths_stay_within_max_model_len():
    trace = generate_requests(
        Workload(num_requests=2000, prompt_mean_tokens=900, prompt_spread=2.0, max_model_len=1024)
    )
    assert trace.prompt_tokens.min() >= 1 and trace.output_tokens.min() >= 1
    assert (trace.prompt_tokens + trace.output_tokens).max() <= 1024


def test_arrivals_are_poisson_at_the_asked_rate():
    trace = generate_requests(Workload(num_requests=5000, arrival_rate_per_s=10.0))
    # mean gap of a Poisson process = 1 / rate; 5,000 draws: standard error 1.4 %
    assert np.mean(np.diff(trace.arrival_s)) == pytest.approx(0.1, rel=0.05)


def test_lognormal_lengths_have_the_asked_mean():
    trace = generate_requests(Workload(num_requests=20_000, prompt_mean_tokens=500, max_model_len=100_000))
    assert trace.prompt_tokens.mean() == pytest.approx(500, rel=0.02)


def test_an_infinite_rate_is_an_offline_batch_arriving_at_once():
    trace = generate_requests(Workload(num_requests=10, arrival_rate_per_s=math.inf))
    assert not trace.arrival_s.any()


def test_blocks_are_never_over_allocated(tight):
    assert tight.timeline.used_blocks.max() <= tight.num_blocks


def test_a_tight_pool_fills_up_and_preempts(tight):
    assert tight.timeline.used_blocks.max() == tight.num_blocks
    assert tight.requests.preemptions.sum() > 0


def test_every_request_finishes(tight):
    assert np.isfinite(tight.requests.finish_s).all()
    assert tight.timeline.running[-1] == tight.timeline.waiting[-1] == 0


def test_every_request_generates_exactly_its_output_tokens(tight, trace):
    assert np.array_equal(tight.requests.generated_tokens, trace.output_tokens)


def test_processed_tokens_are_prompts_plus_outputs_plus_recomputed(tight, trace):
    # every token but the last sampled one is cached once, plus what recompute preemption redid
    expected = (trace.prompt_tokens + trace.output_tokens - 1).sum() + tight.requests.recomputed_tokens.sum()
    assert tight.timeline.scheduled_tokens.sum() == expected


def test_recompute_preemption_redoes_tokens(tight):
    assert tight.requests.recomputed_tokens.sum() > 0


def test_timestamps_are_ordered_arrival_first_token_finish(tight):
    outcome = tight.requests
    assert (outcome.ttft_s > 0).all()
    assert (outcome.finish_s >= outcome.first_token_s).all()


def test_the_timeline_moves_forward_and_preemptions_only_accumulate(tight):
    assert (np.diff(tight.timeline.time_s) > 0).all()
    assert (np.diff(tight.timeline.preemptions) >= 0).all()
    assert tight.timeline.preemptions[-1] == tight.requests.preemptions.sum()


def test_the_batch_never_exceeds_max_num_seqs(tight):
    assert tight.timeline.running.max() <= 64


def test_a_pool_for_every_request_at_full_length_never_preempts(trace):
    blocks = blocks_for_no_preemption(max_num_seqs=64, max_request_tokens=full_length_tokens(trace))
    result = simulate(trace, ServerConfig(num_blocks=blocks, max_num_seqs=64))
    assert result.requests.preemptions.sum() == 0


def test_blocks_for_no_preemption_is_seqs_times_blocks_of_the_longest():
    # 8 · ceil(1,000 / 16) = 8 · 63 = 504
    assert blocks_for_no_preemption(max_num_seqs=8, max_request_tokens=[10, 1000]) == 504


def test_preemptions_grow_as_the_pool_shrinks(trace):
    counts = [
        simulate(trace, ServerConfig(num_blocks=blocks, max_num_seqs=64)).requests.preemptions.sum()
        for blocks in (4000, 1500, 900, 600)
    ]
    assert counts[0] == 0
    assert counts == sorted(counts)
    assert counts[-1] > counts[1]


def test_the_same_inputs_give_identical_results(trace, tight):
    again = simulate(trace, ServerConfig(num_blocks=600, max_num_seqs=64))
    assert np.array_equal(again.requests.finish_s, tight.requests.finish_s)
    assert np.array_equal(again.timeline.used_blocks, tight.timeline.used_blocks)


def test_a_different_seed_gives_different_results(tight):
    other = simulate(
        generate_requests(dataclasses.replace(SMALL, seed=8)), ServerConfig(num_blocks=600, max_num_seqs=64)
    )
    assert not np.array_equal(other.requests.finish_s, tight.requests.finish_s)


@pytest.mark.parametrize("mode", ["recompute", "swap"])
def test_fast_forwarding_decode_steps_changes_no_outcome(trace, mode):
    server = ServerConfig(num_blocks=600, max_num_seqs=64, preemption_mode=mode)
    fast, slow = simulate(trace, server), simulate(trace, server, fast_forward=False)
    assert fast.timeline.steps.sum() == slow.timeline.steps.sum() == len(slow.timeline.steps)
    assert np.array_equal(fast.requests.preemptions, slow.requests.preemptions)
    assert np.allclose(fast.requests.finish_s, slow.requests.finish_s, rtol=0, atol=1e-9)
    assert np.allclose(fast.requests.itl_std_s, slow.requests.itl_std_s, rtol=0, atol=1e-9, equal_nan=True)
    assert fast.timeline.used_blocks.max() == slow.timeline.used_blocks.max()


def test_swap_preemption_finishes_everything_without_recomputing(trace):
    result = simulate(trace, ServerConfig(num_blocks=600, max_num_seqs=64, preemption_mode="swap"))
    assert np.array_equal(result.requests.generated_tokens, trace.output_tokens)
    assert result.requests.preemptions.sum() > 0
    assert result.requests.recomputed_tokens.sum() == 0
    assert result.timeline.swapped[-1] == 0


@pytest.mark.parametrize("mode", ["recompute", "swap"])
def test_a_preempted_request_shows_a_long_inter_token_gap(mode):
    # the pool of 5 blocks cannot give both requests a third: the newer one waits for the older to finish
    trace = Requests(arrival_s=[0.0, 0.001], prompt_tokens=[32, 32], output_tokens=[40, 40])
    outcome = simulate(trace, ServerConfig(num_blocks=5, preemption_mode=mode)).requests
    assert outcome.itl_max_s[1] > 10 * outcome.itl_max_s[0]
    assert outcome.itl_std_s[1] > 10 * outcome.itl_std_s[0]


def test_a_lone_request_prefills_in_one_step_then_decodes_one_token_per_step():
    # prompt 20, 3 outputs: steps of 20, 1 and 1 tokens; ceil(22 / 16) = 2 blocks at the end
    server = ServerConfig(num_blocks=2)
    result = simulate(Requests(arrival_s=[0.5], prompt_tokens=[20], output_tokens=[3]), server, fast_forward=False)
    assert result.timeline.scheduled_tokens.tolist() == [20, 1, 1]
    assert result.timeline.used_blocks.tolist() == [2, 2, 2]
    prefill = float(step_time_s(server, scheduled_tokens=20, context_tokens=20))
    assert result.requests.ttft_s[0] == pytest.approx(prefill)


def test_a_long_prompt_is_prefilled_in_chunks_of_the_token_budget():
    server = ServerConfig(num_blocks=100, max_num_batched_tokens=512)
    result = simulate(Requests(arrival_s=[0.0], prompt_tokens=[1200], output_tokens=[1]), server)
    assert result.timeline.scheduled_tokens.tolist() == [512, 512, 176]


def test_the_newest_running_request_is_the_one_preempted():
    # two requests fill 2 blocks each at their prompt; the pool of 5 cannot give both a third
    trace = Requests(arrival_s=[0.0, 0.001], prompt_tokens=[32, 32], output_tokens=[40, 40])
    result = simulate(trace, ServerConfig(num_blocks=5))
    assert result.requests.preemptions.tolist() == [0, 1]
    assert result.requests.finish_s[0] < result.requests.finish_s[1]


def test_tpot_is_the_mean_gap_after_the_first_token(tight):
    outcome = tight.requests
    expected = (outcome.finish_s - outcome.first_token_s) / (outcome.generated_tokens - 1)
    many = outcome.generated_tokens > 1
    assert np.allclose(outcome.tpot_s[many], expected[many])


def test_the_summary_counts_what_the_arrays_hold(tight):
    summary = summarize(tight)
    assert summary.preemptions == tight.requests.preemptions.sum()
    assert summary.p50_ttft_s <= summary.p99_ttft_s
    assert summary.peak_used_blocks <= tight.num_blocks


def test_the_right_sized_preset_never_preempts_and_the_small_one_does():
    right = simulate(generate_requests(preset("right-sized")[0]), preset("right-sized")[1])
    small = simulate(generate_requests(preset("too-small")[0]), preset("too-small")[1])
    assert right.requests.preemptions.sum() == 0
    assert small.requests.preemptions.sum() > 0


def test_a_server_from_a_model_uses_vllms_block_count():
    models, gpus = kv.load_models(), kv.load_gpus()
    llama, h100 = models["llama-3.1-8b"], gpus["h100-sxm"]
    server = server_from_model(llama, h100, kv_pool_bytes=40 * GiB)
    # one block: 16 · 131,072 B = 2 MiB, so 40 GiB hold 20,480 blocks
    assert server.num_blocks == kv.num_blocks(kv_pool_bytes=40 * GiB, block_bytes=kv.block_bytes(llama)) == 20_480
    assert server.weights_read_s == pytest.approx(llama.active_params * 2 / (h100.bandwidth_bytes_per_s * 0.8))


@pytest.mark.parametrize(("gpu_id", "peak_column"), [("h100-sxm", "fp8"), ("rtx-3060-12gb", "bf16")])
def test_a_server_for_fp8_weights_computes_at_the_peak_the_time_model_gives(gpu_id, peak_column):
    """DeepSeek-V3 ships FP8 weights: an H100 multiplies them at its FP8 peak, an RTX 3060 (no FP8 cores) at BF16."""
    model, gpu = kv.load_models()["deepseek-v3"], kv.load_gpus()[gpu_id]
    server = server_from_model(model, gpu, kv_pool_bytes=40 * kv.block_bytes(model))
    peak = gpu.fp8_dense_flop_per_s if peak_column == "fp8" else gpu.bf16_dense_flop_per_s
    assert kv.rates_for(gpu, weights_dtype=model.weights_dtype).peak_flop_per_s == peak
    # 2 FLOPs per active parameter per token, at kvcore's typical MFU; one read of the 1-byte FP8 weights per step.
    assert server.compute_s_per_token == 2.0 * model.active_params / (peak * kv.TYPICAL_MFU)
    assert server.weights_read_s == model.active_params * 1.0 / (gpu.bandwidth_bytes_per_s * kv.TYPICAL_MBU)


@pytest.mark.parametrize(
    "changes",
    [
        {"arrival_rate_per_s": 0},
        {"num_requests": 0},
        {"prompt_mean_tokens": -1},
        {"output_spread": -0.1},
        {"distribution": "normal"},
        {"max_model_len": 1},
    ],
    ids=lambda changes: next(iter(changes)),
)
def test_a_bad_workload_is_refused(changes):
    with pytest.raises(ValueError):
        Workload(**changes)


@pytest.mark.parametrize(
    "changes",
    [{"num_blocks": 0}, {"block_size": 0}, {"max_num_seqs": 1.5}, {"weights_read_s": -1}, {"preemption_mode": "drop"}],
    ids=lambda changes: next(iter(changes)),
)
def test_a_bad_server_is_refused(changes):
    with pytest.raises(ValueError):
        ServerConfig(**{"num_blocks": 10, **changes})


@pytest.mark.parametrize(
    "arrays",
    [
        {"arrival_s": [1.0, 0.0]},
        {"prompt_tokens": [0, 5]},
        {"output_tokens": [1.5, 2]},
        {"arrival_s": [0.0]},
    ],
    ids=["unsorted", "empty-prompt", "fractional-output", "mismatched"],
)
def test_a_bad_trace_is_refused(arrays):
    with pytest.raises(ValueError):
        Requests(**{"arrival_s": [0.0, 1.0], "prompt_tokens": [5, 5], "output_tokens": [2, 2], **arrays})


def test_a_request_longer_than_the_pool_is_refused_as_vllm_does():
    with pytest.raises(ValueError, match="blocks"):
        simulate(Requests(arrival_s=[0.0], prompt_tokens=[100], output_tokens=[100]), ServerConfig(num_blocks=4))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    blocks=st.integers(40, 400),
    seqs=st.integers(1, 32),
    budget=st.integers(16, 2048),
    mode=st.sampled_from(["recompute", "swap"]),
)
def test_any_pool_serves_every_request_without_over_allocating(seed, blocks, seqs, budget, mode):
    workload = Workload(num_requests=30, arrival_rate_per_s=50.0, prompt_mean_tokens=200, output_mean_tokens=60,
                        max_model_len=600, seed=seed)  # fmt: skip
    trace = generate_requests(workload)
    server = ServerConfig(num_blocks=blocks, max_num_seqs=seqs, max_num_batched_tokens=budget, preemption_mode=mode)
    result = simulate(trace, server)
    assert result.timeline.used_blocks.max() <= blocks
    assert np.array_equal(result.requests.generated_tokens, trace.output_tokens)
    assert (result.requests.first_token_s > result.requests.arrival_s).all()
