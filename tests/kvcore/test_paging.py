"""Contiguous reservation against PagedAttention blocks, and what a shared prefix saves (kvcore.paging)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore as kv
from course import seeds
from kvcore import paging

MAX_LEN = 2048
lengths_lists = st.lists(st.integers(1, MAX_LEN), min_size=1, max_size=200)
powers_of_two = st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256])


@pytest.fixture(scope="module")
def llama8b():
    return kv.load_models()["llama-3.1-8b"]


@pytest.fixture(scope="module")
def h100():
    return kv.load_gpus()["h100-sxm"]


def sharegpt_lengths():
    p = seeds.SHAREGPT_ON_OPT
    return paging.request_lengths_tokens(
        p.n_requests, mean_tokens=p.mean_tokens, spread=p.spread, max_model_len=p.max_model_len, seed=p.seed
    )


# --- request lengths -----------------------------------------------------------------------------------


def test_the_same_seed_draws_the_same_lengths():
    one = paging.request_lengths_tokens(50, mean_tokens=300, spread=1.0, max_model_len=MAX_LEN, seed=7)
    two = paging.request_lengths_tokens(50, mean_tokens=300, spread=1.0, max_model_len=MAX_LEN, seed=7)
    assert (one == two).all()


@settings(deadline=None)
@given(st.integers(1, 500), st.floats(1, 5000), st.floats(0, 3), st.integers(1, 8192), st.integers(0, 2**32 - 1))
def test_lengths_are_whole_tokens_between_one_and_max_model_len(n, mean, spread, max_len, seed):
    lengths = paging.request_lengths_tokens(n, mean_tokens=mean, spread=spread, max_model_len=max_len, seed=seed)
    assert lengths.shape == (n,) and lengths.dtype.kind == "i"
    assert lengths.min() >= 1 and lengths.max() <= max_len


def test_zero_spread_gives_every_request_the_mean():
    assert (paging.request_lengths_tokens(4, mean_tokens=600, spread=0, max_model_len=MAX_LEN) == 600).all()


def test_a_large_sample_has_about_the_mean_asked_for():
    lengths = paging.request_lengths_tokens(20_000, mean_tokens=300, spread=0.5, max_model_len=100_000, seed=1)
    assert lengths.mean() == pytest.approx(300, rel=0.02)


# --- waste of each scheme -------------------------------------------------------------------------------


def test_contiguous_waste_is_one_minus_mean_length_over_max_model_len():
    # 512 and 1,024 tokens in 2,048-token slabs: 1 − 768 / 2,048 = 0.625
    report = paging.allocation_report([512, 1024], scheme="contiguous", max_model_len=MAX_LEN)
    assert (report.used_tokens, report.reserved_tokens, report.waste_fraction) == (1536, 4096, 0.625)


@pytest.mark.parametrize(("mean_share", "waste"), [(0.2, 0.8), (0.3, 0.7), (0.4, 0.6)])
def test_requests_using_20_to_40_percent_of_max_model_len_waste_80_to_60_percent_contiguous(mean_share, waste):
    # Seed 000 and Kwon et al. 2023 §2.3: only 20.4–38.2 % of contiguous KV memory holds tokens.
    lengths = paging.request_lengths_tokens(10, mean_tokens=mean_share * MAX_LEN, spread=0, max_model_len=MAX_LEN)
    report = paging.allocation_report(lengths, scheme="contiguous", max_model_len=MAX_LEN)
    assert report.waste_fraction == pytest.approx(waste, abs=1e-3)


def test_the_sharegpt_preset_wastes_60_to_80_percent_of_a_contiguous_pool():
    # ShareGPT on OPT (Kwon et al. 2023, Fig. 11): 161.31 + 337.99 ≈ 499 tokens per request against
    # max_model_len 2,048, so ≈ 1 − 499 / 2,048 ≈ 76 % wasted (seed 000: "60 a 80%"). spread 0.8 and
    # clipping at 2,048 give a sample mean of 473 tokens: 1 − 473 / 2,048 = 76.9 %.
    p = seeds.SHAREGPT_ON_OPT
    report = paging.allocation_report(sharegpt_lengths(), scheme="contiguous", max_model_len=p.max_model_len)
    assert 0.60 <= report.waste_fraction <= 0.80
    assert report.waste_fraction == pytest.approx(0.769, abs=0.001)


def test_the_sharegpt_preset_wastes_under_4_percent_with_16_token_blocks():
    # Kwon et al. 2023: waste under 4 % with PagedAttention. About 7.5 empty slots in the last
    # 16-token block of a ≈ 473-token request: 7.5 / 473 ≈ 1.6 %.
    p = seeds.SHAREGPT_ON_OPT
    report = paging.allocation_report(
        sharegpt_lengths(), scheme="paged", max_model_len=p.max_model_len, block_size=p.block_size
    )
    assert report.waste_to_used < 0.04 and report.waste_fraction < 0.04


def test_waste_bytes_are_wasted_tokens_times_bytes_per_token(llama8b):
    # One 512-token request in a 2,048 slab wastes 1,536 tokens · 131,072 B = 0.1875 GiB (seed 000's 128 KiB/token).
    per_token = kv.kv_bytes_per_token(llama8b)
    report = paging.allocation_report([512], scheme="contiguous", max_model_len=MAX_LEN, bytes_per_token=per_token)
    assert report.waste_bytes / kv.GiB == 0.1875
    assert report.used_bytes + report.waste_bytes == report.reserved_bytes


@settings(deadline=None)
@given(lengths_lists, powers_of_two)
def test_paged_waste_is_less_than_one_block_per_request(lengths, block_size):
    held = paging.reserved_tokens(lengths, scheme="paged", max_model_len=MAX_LEN, block_size=block_size)
    waste = held - np.asarray(lengths)
    assert (waste >= 0).all() and (waste < block_size).all()


@settings(deadline=None)
@given(lengths_lists, powers_of_two, st.sampled_from(paging.SCHEMES))
def test_waste_fractions_lie_between_zero_and_one(lengths, block_size, scheme):
    report = paging.allocation_report(lengths, scheme=scheme, max_model_len=MAX_LEN, block_size=block_size)
    assert 0.0 <= report.waste_fraction <= 1.0


@settings(deadline=None)
@given(lengths_lists, powers_of_two)
def test_doubling_the_block_size_never_wastes_less(lengths, block_size):
    # Holds when one size divides the other (vLLM's sizes are powers of two); 16 → 24 can waste less.
    small = paging.allocation_report(lengths, scheme="paged", max_model_len=MAX_LEN, block_size=block_size)
    big = paging.allocation_report(lengths, scheme="paged", max_model_len=MAX_LEN, block_size=2 * block_size)
    assert big.wasted_tokens >= small.wasted_tokens


@settings(deadline=None)
@given(lengths_lists, powers_of_two)
def test_contiguous_waste_does_not_depend_on_the_block_size(lengths, block_size):
    one = paging.allocation_report(lengths, scheme="contiguous", max_model_len=MAX_LEN, block_size=16)
    other = paging.allocation_report(lengths, scheme="contiguous", max_model_len=MAX_LEN, block_size=block_size)
    assert one == other


def test_a_request_longer_than_max_model_len_is_refused():
    with pytest.raises(ValueError, match="longer than max model length"):
        paging.allocation_report([2049], scheme="paged", max_model_len=MAX_LEN)


def test_an_unknown_scheme_is_refused():
    with pytest.raises(ValueError, match="scheme"):
        paging.reserved_tokens([10], scheme="buddy", max_model_len=MAX_LEN)  # type: ignore[arg-type]


# --- requests that fit ----------------------------------------------------------------------------------


def test_contiguous_fits_pool_over_max_model_len_requests():
    lengths = [100] * 10
    fit = paging.requests_that_fit(
        pool_tokens=[0, 2047, 2048, 10_000, 10**9], lengths_tokens=lengths, scheme="contiguous", max_model_len=MAX_LEN
    )
    assert fit.tolist() == [0, 0, 1, 4, 10]  # floor(pool / 2,048), at most the 10 requests given


def test_paged_fits_requests_while_their_blocks_add_up_to_the_pool():
    # 17, 16, 40 tokens hold 32, 16, 48 slots: running sums 32, 48, 96
    fit = paging.requests_that_fit(
        pool_tokens=[31, 32, 95, 96], lengths_tokens=[17, 16, 40], scheme="paged", max_model_len=MAX_LEN
    )
    assert fit.tolist() == [0, 1, 2, 3]


def test_the_sharegpt_preset_fits_about_four_times_more_requests_paged():
    # 2,048-slot slabs against ≈ 473 + 7.5 slots per paged request: 2,048 / 480.5 ≈ 4.26×.
    # A 100,000-token pool: 48 contiguous, 203 paged requests.
    gain = paging.fit_gain(pool_tokens=100_000, lengths_tokens=sharegpt_lengths(), max_model_len=MAX_LEN)
    assert float(gain) == pytest.approx(203 / 48)


def test_the_gain_is_infinite_when_not_one_contiguous_slab_fits():
    assert paging.fit_gain(pool_tokens=1000, lengths_tokens=[100], max_model_len=MAX_LEN) == np.inf


# --- block map ------------------------------------------------------------------------------------------


def test_the_block_map_shows_each_request_in_its_blocks_and_the_free_rest():
    bm = paging.block_map([5, 12], scheme="paged", max_model_len=64, pool_blocks=4, block_size=8)
    assert bm.owner.tolist() == [[0] * 8, [1] * 8, [1] * 8, [-1] * 8]
    assert bm.used.sum(axis=1).tolist() == [5, 8, 4, 0]
    assert bm.reserved_unused.sum() == 3 + 4 and bm.free.sum() == 8


def test_the_contiguous_block_map_reserves_max_model_len_and_leaves_out_what_does_not_fit():
    bm = paging.block_map([5, 20, 3], scheme="contiguous", max_model_len=24, pool_blocks=8, block_size=8)
    assert bm.requests_placed == 2  # the third needs 24 slots, only 16 are left
    assert (bm.owner >= 0).sum() == 48 and bm.used.sum() == 25 and bm.reserved_unused.sum() == 23


@settings(deadline=None)
@given(lengths_lists, powers_of_two, st.sampled_from(paging.SCHEMES), st.integers(1, 400))
def test_the_block_map_agrees_with_the_allocation_report(lengths, block_size, scheme, pool_blocks):
    bm = paging.block_map(lengths, scheme=scheme, max_model_len=MAX_LEN, pool_blocks=pool_blocks, block_size=block_size)
    placed = lengths[: bm.requests_placed]
    assert bm.owner.shape == (pool_blocks, block_size)
    if placed:
        report = paging.allocation_report(placed, scheme=scheme, max_model_len=MAX_LEN, block_size=block_size)
        assert bm.used.sum() == report.used_tokens and bm.reserved_unused.sum() == report.wasted_tokens
    assert bm.free.sum() + (bm.owner >= 0).sum() == pool_blocks * block_size


# --- prefix caching: memory -----------------------------------------------------------------------------


def test_a_2000_token_prompt_fills_125_blocks_of_16():
    assert paging.shared_prefix_blocks(2000, block_size=16) == 125  # 2,000 = 125 · 16 exactly (seed 002)


def test_seed_002_system_prompt_shared_by_100_requests_saves_99_times_125_blocks(llama8b):
    # Seed 002: 100 requests, 2,000-token system prompt, each adding 200 tokens. Without sharing:
    # 100 · ceil(2,200 / 16) = 100 · 138 blocks. With: 125 shared once + 100 · 13 own = 1,425.
    # Saved: 99 · 125 = 12,375 blocks · 16 · 131,072 B = 24.17 GiB (Llama-3.1-8B, BF16).
    memory = paging.prefix_memory(
        prefix_tokens=2000,
        suffix_tokens=200,
        requests=100,
        block_size=16,
        bytes_per_token=kv.kv_bytes_per_token(llama8b),
    )
    assert (memory.blocks_without, memory.blocks_with, memory.saved_blocks) == (13_800, 1_425, 99 * 125)
    assert memory.saved_bytes == 99 * 125 * kv.block_bytes(llama8b, block_size=16)


@settings(deadline=None)
@given(st.integers(0, 15), st.integers(1, 1000), st.integers(1, 500))
def test_a_prefix_shorter_than_one_block_saves_nothing(prefix, suffix, requests):
    memory = paging.prefix_memory(prefix_tokens=prefix, suffix_tokens=suffix, requests=requests, block_size=16)
    assert memory.saved_blocks == 0


@settings(deadline=None)
@given(st.integers(16, 100_000), st.integers(1, 1000), st.integers(1, 500))
def test_each_extra_request_saves_the_shared_blocks_once_more(prefix, suffix, requests):
    common = {"prefix_tokens": prefix, "suffix_tokens": suffix, "block_size": 16}
    fewer = paging.prefix_memory(requests=requests, **common)
    more = paging.prefix_memory(requests=requests + 1, **common)
    assert more.saved_blocks - fewer.saved_blocks == prefix // 16 > 0


@settings(deadline=None)
@given(st.integers(0, 1_000_000), st.integers(1, 2048), st.integers(1, 1000))
def test_the_shared_tokens_are_the_prefix_minus_its_partial_block(prefix, block_size, suffix):
    cached = paging.cached_prefix_tokens(prefix_tokens=prefix, suffix_tokens=suffix, block_size=block_size)
    assert cached == prefix - prefix % block_size


def test_a_bigger_block_can_share_more_of_a_prefix_than_a_smaller_one():
    # 2,000 tokens: 48-token blocks share 41 · 48 = 1,968; 50-token blocks share 40 · 50 = 2,000.
    shared = paging.cached_prefix_tokens(prefix_tokens=2000, suffix_tokens=1, block_size=np.array([48, 50]))
    assert shared.tolist() == [1968, 2000]


@settings(deadline=None)
@given(st.integers(0, 1_000_000), powers_of_two)
def test_doubling_the_block_size_never_shares_more(prefix, block_size):
    small = paging.cached_prefix_tokens(prefix_tokens=prefix, suffix_tokens=1, block_size=block_size)
    big = paging.cached_prefix_tokens(prefix_tokens=prefix, suffix_tokens=1, block_size=2 * block_size)
    assert big <= small


def test_a_prompt_that_is_only_the_prefix_recomputes_its_last_block():
    # vLLM caps a hit at prompt − 1 tokens to get the last token's logits: floor(1,999 / 16) = 124 blocks.
    assert paging.cached_prefix_tokens(prefix_tokens=2000, suffix_tokens=0, block_size=16) == 124 * 16


# --- prefix caching: prefill work and TTFT --------------------------------------------------------------


def test_a_cache_hit_computes_only_the_queries_after_the_prefix():
    # One layer, d_attn = 1, N = 1: F(n) = 2n + 4 · n(n+1)/2. Prompt 20 = 16 cached + 4 new:
    # queries 17..20 cost 2 · 4 + 4 · (17 + 18 + 19 + 20) = 304 FLOPs.
    m = kv.uniform_model(num_hidden_layers=1, num_key_value_heads=1, head_dim=1, total_params=1.0)
    work = paging.prefix_prefill(m, prefix_tokens=16, suffix_tokens=4, requests=2, block_size=16, peak_flop_per_s=1.0)
    assert float(work.ttft_with_s) == 304.0
    assert float(work.flops_with) == float(kv.prefill_flops(m, prompt_tokens=20)) + 304.0


def test_seed_002_requests_after_the_first_skip_the_system_prompt_prefill(llama8b, h100):
    peak = h100.bf16_dense_flop_per_s
    work = paging.prefix_prefill(
        llama8b, prefix_tokens=2000, suffix_tokens=200, requests=100, block_size=16, peak_flop_per_s=peak
    )
    assert work.saved_flops == pytest.approx(99 * kv.prefill_flops(llama8b, prompt_tokens=2000))
    assert work.ttft_saved_s == pytest.approx(
        kv.prefill_time_s(kv.prefill_flops(llama8b, prompt_tokens=2000), peak_flop_per_s=peak)
    )
    assert work.saved_s == pytest.approx(99 * work.ttft_saved_s)


def test_one_request_alone_saves_no_prefill(llama8b):
    work = paging.prefix_prefill(llama8b, prefix_tokens=2000, suffix_tokens=200, requests=1, peak_flop_per_s=1e15)
    assert work.saved_flops == 0


# --- provider prompt caching ----------------------------------------------------------------------------


def test_seed_002_prefix_costs_10_9_prefix_prices_instead_of_100():
    # One write at the full price + 99 reads at 10 %: 1 + 99 · 0.1 = 10.9. The price is set so that
    # one 2,000-token prefix costs 1: 500 per million tokens · 2,000 / 1e6 = 1.
    cost = paging.prompt_cache_cost(prefix_tokens=2000, suffix_tokens=0, requests=100, input_usd_per_mtok=500)
    assert (cost.cache_writes, cost.cache_reads) == (1, 99)
    assert cost.cost_without_usd == 100 and cost.cost_with_usd == pytest.approx(10.9)
    assert cost.saved_fraction == pytest.approx(0.891)


def test_anthropic_write_premium_adds_a_quarter_prefix_once():
    # 1.25 + 99 · 0.1 = 11.15
    cost = paging.prompt_cache_cost(
        prefix_tokens=2000, suffix_tokens=0, requests=100, input_usd_per_mtok=500, cache_write_multiplier=1.25
    )
    assert cost.cost_with_usd == pytest.approx(11.15)


def test_requests_further_apart_than_the_ttl_all_pay_a_write():
    cost = paging.prompt_cache_cost(
        prefix_tokens=2000,
        suffix_tokens=0,
        requests=100,
        input_usd_per_mtok=500,
        interval_s=np.array([299.0, 301.0]),
        ttl_s=300,
        cache_write_multiplier=1.25,
    )
    assert cost.cache_writes.tolist() == [1, 100]
    assert cost.cost_with_usd.tolist() == pytest.approx([11.15, 125.0])  # expired writes cost more than no cache


def test_the_suffix_is_billed_at_the_normal_price_either_way():
    # 10 requests, 1,000-token prefix, 100-token suffix, 1 per million tokens: suffix 10 · 100 = 1,000 tokens.
    cost = paging.prompt_cache_cost(prefix_tokens=1000, suffix_tokens=100, requests=10, input_usd_per_mtok=1.0)
    assert cost.cost_without_usd == pytest.approx(11_000 / 1e6)
    assert cost.cost_with_usd == pytest.approx((1000 * (1 + 9 * 0.1) + 1000) / 1e6)


def test_a_prefix_below_the_providers_minimum_is_never_cached():
    # OpenAI caches prompts of 1,024 tokens or more; a 12-token prefix is billed in full on every request.
    short = paging.prompt_cache_cost(
        prefix_tokens=np.array([12.0, 1024.0]),
        suffix_tokens=0,
        requests=100,
        input_usd_per_mtok=500,
        min_cacheable_tokens=paging.PROVIDER_MIN_CACHEABLE_TOKENS,
    )
    assert short.cache_writes.tolist() == [0, 1] and short.cache_reads.tolist() == [0, 99]
    assert short.cost_with_usd[0] == short.cost_without_usd[0]
    assert short.saved_usd[0] == 0 and short.saved_usd[1] > 0
