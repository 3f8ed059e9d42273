"""The KV pool in vLLM's terms: blocks, tokens, concurrency, the fit check."""

import pytest

import kvcore as kv
from kvcore.units import GiB


@pytest.fixture(scope="module")
def models():
    return kv.load_models()


def test_one_block_holds_block_size_tokens_of_every_layer(models):
    assert kv.block_bytes(models["llama-3.1-8b"], block_size=16) == 16 * 131_072 == 2 * 2**20


def test_concurrency_for_full_attention_is_blocks_over_blocks_per_request(models):
    assert kv.max_concurrency(models["llama-3.1-8b"], num_blocks=1000, max_model_len=1601) == 1000 / 101


def test_sliding_layers_need_only_their_window_of_blocks(models):
    mistral = models["mistral-7b-v0.1"]  # all layers slide over 4,096 tokens
    # vLLM SlidingWindowSpec: ceil(min(W − 1 + chunk, L) / 16) + 1 blocks
    # one-token chunks: ceil(4,096 / 16) + 1 = 257, whatever the request length
    assert kv.request_blocks_needed(mistral, max_model_len=32_768, max_num_batched_tokens=1) == 257
    # vllm serve's 8,192-token chunks: ceil(12,287 / 16) + 1 = 769
    assert kv.request_blocks_needed(mistral, max_model_len=32_768) == 769
    # a short request: ceil(1,024 / 16) + 1 = 65
    assert kv.request_blocks_needed(mistral, max_model_len=1024) == 65


def test_a_pool_too_small_for_one_request_reports_the_longest_that_fits(models):
    report = kv.pool_report(models["llama-3.1-8b"], kv_pool_bytes=1 * GiB, max_model_len=131_072)
    assert not report.fits
    assert report.estimated_max_model_len == report.tokens == 8192


def test_the_seed_sizing_rule_divides_the_budget_by_bytes_per_token():
    # seed 000: tokens = (VRAM · u − weights − overhead) / bytes per token
    # (80 GiB H100 at 0.9, 16 GiB weights, 2 GiB overhead)
    budget = kv.kv_budget_bytes(memory_bytes=80 * GiB, utilization=0.9, weights_bytes=16 * GiB, overhead_bytes=2 * GiB)
    tokens = kv.tokens_that_fit(kv_pool_bytes=budget, bytes_per_token=131_072)
    assert tokens == (72 - 18) * 8192
    assert kv.context_per_user(pool_tokens=tokens, concurrency=8) == tokens / 8


def test_estimated_max_model_len_grows_beyond_the_window_for_sliding_models(models):
    mistral = models["mistral-7b-v0.1"]
    # sliding-only: once the window and one chunk fit (769 blocks), any length fits
    assert kv.estimated_max_model_len(mistral, num_blocks=800) >= 1 << 30
    # below that, the longest request is where ceil(L / 16) + 1 reaches the pool: L = 16 · 299
    assert kv.estimated_max_model_len(mistral, num_blocks=300) == 16 * 299
