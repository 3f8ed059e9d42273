"""vLLM fidelity of the scheduler (issue 13): V1's full-prompt admission, prefix reuse after preemption, V0's swap.

Sources: vllm/v1/core/kv_cache_manager.py ``allocate_slots(full_sequence_must_fit=...)`` and
vllm/v1/core/block_pool.py ``free_blocks`` / ``get_new_blocks`` (0.33.0); vllm/core/scheduler.py
``Scheduler._preempt`` (0.6.6.post1). Every expected figure below is derived in its comment.
"""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.scheduler_presets import preset
from kvcore.errors import KvError
from kvcore.scheduler import Requests, ServerConfig, Workload, generate_requests, simulate, summarize, vllm_rules
from kvcore.vllm_versions import vllm_release

#: A 40-token prompt (3 blocks of 16, 30 outputs: 5 blocks at most) and, just behind it, a 100-token one (7 blocks).
#: With a budget of 48 tokens, step 1 gives A its 40 tokens and B the 8 left: 3 + 1 blocks of 8.
HEAD_OF_LINE = Requests(arrival_s=[0.0, 0.0], prompt_tokens=[40, 100], output_tokens=[30, 5])
HEAD_OF_LINE_SERVER = ServerConfig(num_blocks=8, max_num_batched_tokens=48)

#: Two 64-token prompts (4 full blocks each), 40 outputs each, on 10 blocks: they fill 8, then 10 at 65 tokens; at
#: 81 tokens A needs a 6th block and preempts B (computed 80 = 5 full blocks, all hashed, freed to the queue's end).
TWO_REQUESTS = Requests(arrival_s=[0.0, 0.0], prompt_tokens=[64, 64], output_tokens=[40, 40])
TWO_REQUESTS_SERVER = ServerConfig(num_blocks=10)


def test_the_first_chunk_fitting_admits_a_prompt_that_does_not_fit_whole():
    # old rule: B's first chunk (8 tokens, 1 block) fits beside A's 3 blocks, so B runs at once ...
    result = simulate(HEAD_OF_LINE, HEAD_OF_LINE_SERVER, fast_forward=False)
    assert result.timeline.running[0] == 2
    # ... and A (5 blocks at full length) plus B (7) cannot both fit in 8: the pool thrashes
    assert result.requests.preemptions.sum() > 0


@pytest.mark.parametrize("fast_forward", [True, False])
def test_full_prompt_admission_waits_until_the_whole_prompt_fits(fast_forward):
    # scheduler_reserve_full_isl: B needs ceil(100 / 16) = 7 free blocks, only 8 − 3 = 5 are: it waits for A
    server = dataclasses.replace(HEAD_OF_LINE_SERVER, reserve_full_prompt=True)
    result = simulate(HEAD_OF_LINE, server, fast_forward=fast_forward)
    assert result.timeline.running[0] == 1
    assert result.requests.preemptions.sum() == 0
    assert result.requests.first_token_s[1] > result.requests.finish_s[0]
    assert result.timeline.used_blocks.max() <= server.num_blocks


def test_a_resumed_request_needs_room_for_its_whole_sequence_not_only_its_next_chunk():
    # budget 20: once preempted, B (64 + 17 = 81 tokens) comes back in chunks of 20 − 1 = 19 tokens (2 blocks), which
    # fit beside A while its whole sequence (ceil(81 / 16) = 6 blocks) does not: the chunk rule lets it thrash
    server = dataclasses.replace(TWO_REQUESTS_SERVER, max_num_batched_tokens=20)
    chunked = simulate(TWO_REQUESTS, server)
    whole = simulate(TWO_REQUESTS, dataclasses.replace(server, reserve_full_prompt=True))
    assert chunked.requests.preemptions[1] > 1
    assert whole.requests.preemptions.tolist() == [0, 1]
    assert whole.requests.recomputed_tokens.sum() < chunked.requests.recomputed_tokens.sum()
    assert np.array_equal(whole.requests.generated_tokens, TWO_REQUESTS.output_tokens)


@pytest.mark.parametrize("fast_forward", [True, False])
def test_a_preempted_request_reuses_its_blocks_still_in_the_prefix_cache(fast_forward):
    # B leaves 5 hashed blocks; A takes the front one (the tail block B freed first) at once: 4 left; A's 7th block
    # (at 97 tokens) evicts one more: 3 left. B needs ceil(81 / 16) = 6 blocks, only free once A finishes; then it
    # finds 3 blocks = 48 tokens in the cache and recomputes 80 − 48 = 32 of the 80 it had computed.
    server = dataclasses.replace(TWO_REQUESTS_SERVER, prefix_caching=True)
    result = simulate(TWO_REQUESTS, server, fast_forward=fast_forward)
    assert result.requests.preemptions.tolist() == [0, 1]
    assert result.reused_tokens.tolist() == [0, 48]
    assert result.requests.recomputed_tokens.tolist() == [0, 32]
    assert result.timeline.used_blocks.max() <= server.num_blocks


def test_without_prefix_caching_a_preempted_request_recomputes_everything():
    result = simulate(TWO_REQUESTS, TWO_REQUESTS_SERVER)
    assert result.reused_tokens.tolist() == [0, 0]
    assert result.requests.recomputed_tokens.tolist() == [0, 80]


def test_prefix_reuse_makes_the_too_small_preset_recompute_less():
    workload, server = preset("too-small")
    trace = generate_requests(workload)
    plain = simulate(trace, server)
    cached = simulate(trace, dataclasses.replace(server, prefix_caching=True))
    assert 0 < summarize(cached).recomputed_tokens < summarize(plain).recomputed_tokens
    assert cached.reused_tokens.sum() > 0


@pytest.mark.parametrize(
    ("sequences", "swaps", "recomputed"),
    [([1, 1], [0, 0], [0, 80]), ([1, 2], [0, 1], [0, 0]), ([2, 1], [0, 0], [0, 80])],
    ids=["single-sequences-recompute", "the-victim-group-swaps", "only-the-victim-counts"],
)
def test_v0_swaps_only_groups_of_several_sequences(sequences, swaps, recomputed):
    # V0's _preempt with no preemption mode given: RECOMPUTE when get_max_num_running_seqs() == 1, else SWAP
    trace = dataclasses.replace(TWO_REQUESTS, sequences_per_request=sequences)
    server = dataclasses.replace(TWO_REQUESTS_SERVER, preemption_mode="swap", swap_only_multi_sequence=True)
    result = simulate(trace, server)
    assert result.requests.preemptions.tolist() == [0, 1]
    assert result.swap_preemptions.tolist() == swaps
    assert result.requests.recomputed_tokens.tolist() == recomputed


def test_forced_swap_swaps_a_single_sequence_too():
    # V0's --preemption-mode swap (user_specified_preemption_mode == "swap")
    result = simulate(TWO_REQUESTS, dataclasses.replace(TWO_REQUESTS_SERVER, preemption_mode="swap"))
    assert result.swap_preemptions.tolist() == [0, 1]
    assert result.requests.recomputed_tokens.tolist() == [0, 0]


@pytest.mark.parametrize("rule", ["reserve_full_prompt", "prefix_caching"])
def test_swap_with_a_v1_rule_is_refused_as_v0_only(rule):
    with pytest.raises(KvError) as error:
        ServerConfig(num_blocks=10, preemption_mode="swap", **{rule: True})
    assert error.value.code == "swap_is_v0_only"


def test_v1_releases_recompute_with_prefix_caching_and_full_prompt_admission_from_0_19():
    base = ServerConfig(num_blocks=10)
    newest, before = vllm_rules(base, vllm_release("0.33.0")), vllm_rules(base, vllm_release("0.18.1"))
    assert (newest.reserve_full_prompt, newest.prefix_caching) == (True, True)
    assert (before.reserve_full_prompt, before.prefix_caching) == (False, True)
    old = vllm_rules(dataclasses.replace(base, preemption_mode="swap"), vllm_release("0.6.6.post1"))
    assert (old.preemption_mode, old.prefix_caching, old.reserve_full_prompt) == ("swap", False, False)
    with pytest.raises(KvError) as error:
        vllm_rules(dataclasses.replace(base, preemption_mode="swap"), vllm_release("0.33.0"))
    assert error.value.code == "swap_is_v0_only"


def test_a_bad_sequence_count_is_refused():
    with pytest.raises(KvError) as error:
        dataclasses.replace(TWO_REQUESTS, sequences_per_request=[1, 0])
    assert error.value.code == "lengths_not_whole"
    with pytest.raises(KvError) as error:
        dataclasses.replace(TWO_REQUESTS, sequences_per_request=[1, 2, 3])
    assert error.value.code == "trace_shape"


def test_a_workload_gives_every_request_its_sequences():
    trace = generate_requests(Workload(num_requests=5, sequences_per_request=2))
    assert trace.sequences_per_request.tolist() == [2] * 5


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    blocks=st.integers(40, 400),
    seqs=st.integers(1, 32),
    budget=st.integers(16, 2048),
    reserve=st.booleans(),
    cached=st.booleans(),
)
def test_the_invariants_hold_under_the_v1_rules(seed, blocks, seqs, budget, reserve, cached):
    workload = Workload(num_requests=30, arrival_rate_per_s=50.0, prompt_mean_tokens=200, output_mean_tokens=60,
                        max_model_len=600, seed=seed)  # fmt: skip
    trace = generate_requests(workload)
    server = ServerConfig(num_blocks=blocks, max_num_seqs=seqs, max_num_batched_tokens=budget,
                          reserve_full_prompt=reserve, prefix_caching=cached)  # fmt: skip
    result = simulate(trace, server)
    outcome = result.requests
    assert result.timeline.used_blocks.max() <= blocks
    assert result.timeline.running.max() <= seqs
    assert np.isfinite(outcome.finish_s).all()
    assert np.array_equal(outcome.generated_tokens, trace.output_tokens)
    # conservation: every token but the last sampled one is cached once, plus what was recomputed (exactly)
    expected = (trace.prompt_tokens + trace.output_tokens - 1).sum() + outcome.recomputed_tokens.sum()
    assert result.timeline.scheduled_tokens.sum() == expected
    assert (outcome.recomputed_tokens >= 0).all() and (result.reused_tokens >= 0).all()
    assert result.reused_tokens.sum() == 0 or cached
    assert (result.reused_tokens % server.block_size == 0).all()
    slow = simulate(trace, server, fast_forward=False)
    assert np.array_equal(slow.requests.recomputed_tokens, outcome.recomputed_tokens)
    assert np.array_equal(slow.reused_tokens, result.reused_tokens)


def test_the_too_small_preset_under_vllm_0_33_is_what_the_course_says():
    # course/scheduler_presets.py: 290 preemptions, 69,027 tokens recomputed, 80,256 reused, p99 TTFT 3.7 s
    workload, server = preset("too-small", release="0.33.0")
    assert (server.reserve_full_prompt, server.prefix_caching) == (True, True)
    result = simulate(generate_requests(workload), server)
    summary = summarize(result)
    assert summary.preemptions == 290
    assert summary.recomputed_tokens == 69_027
    assert result.reused_tokens.sum() == 80_256
    assert summary.p99_ttft_s == pytest.approx(3.7, abs=0.05)
    assert preset("too-small-swap", release="0.33.0")[1].preemption_mode == "swap"
