"""kvcore.capacity: what a pool holds; the one search for the longest context agrees with brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore
from kvcore.capacity import (
    context_per_user,
    estimated_max_model_len,
    gpus_needed,
    max_context_tokens,
    max_users,
    request_blocks_needed,
    tokens_that_fit,
)
from kvcore.units import GiB, MiB

MODELS = kvcore.load_models()
#: Full attention (GQA), sliding + full (Gemma 3), all sliding (Mistral 7B v0.1), MLA, linear + full (Qwen3-Next).
KINDS = ("llama-3.1-8b", "gemma-3-27b", "mistral-7b-v0.1", "deepseek-v3", "qwen3-next-80b-a3b")


def brute_force_context(model, *, pool, users, limit):
    """Every context from 0 to `limit`, the largest that fits (what the search must find)."""
    contexts = np.arange(0, limit + 1, dtype=float)
    need = users * kvcore.sequence_kv_bytes(model, context_tokens=contexts)
    fitting = contexts[(need <= pool) & (contexts >= 1)]
    return float(fitting[-1]) if fitting.size else 0.0


@pytest.mark.parametrize("model_id", KINDS)
@pytest.mark.parametrize("users", [1, 3])
def test_the_search_finds_what_brute_force_finds(model_id, users):
    model = MODELS[model_id]
    limit = 20_000
    # A pool that runs out inside the range: the cache of `users` sequences of 7,777 tokens.
    pool = float(kvcore.kv_cache_bytes(model, context_tokens=7_777, concurrency=users)) + 12_345.0
    found = float(max_context_tokens(model, kv_pool_bytes=pool, concurrency=users, limit_tokens=limit))
    assert found == brute_force_context(model, pool=pool, users=users, limit=limit)


@settings(deadline=None, max_examples=40)
@given(st.sampled_from(KINDS), st.integers(1, 16), st.floats(0.0, 2.0))
def test_the_search_agrees_with_brute_force_for_any_pool(model_id, users, pool_gib):
    model = MODELS[model_id]
    limit = 4096
    pool = pool_gib * GiB / 64  # up to 32 MiB: the fit ends inside 0 … 4,096 tokens for most models
    found = float(max_context_tokens(model, kv_pool_bytes=pool, concurrency=users, limit_tokens=limit))
    assert found == brute_force_context(model, pool=pool, users=users, limit=limit)


def test_the_search_is_vectorised_over_users_and_pools():
    gemma = MODELS["gemma-3-27b"]
    users = np.array([1, 2, 4, 8])
    pools = np.array([[4 * GiB], [16 * GiB]])
    grid = max_context_tokens(gemma, kv_pool_bytes=pools, concurrency=users)
    assert grid.shape == (2, 4)
    for i, pool in enumerate(pools[:, 0]):
        for j, b in enumerate(users):
            assert grid[i, j] == max_context_tokens(gemma, kv_pool_bytes=pool, concurrency=b)


def test_full_attention_the_search_is_the_seed_rule():
    llama = MODELS["llama-3.1-8b"]
    users = np.array([1, 3, 7, 64])
    pool = 20 * GiB
    seed_rule = context_per_user(
        pool_tokens=tokens_that_fit(kv_pool_bytes=pool, bytes_per_token=kvcore.kv_bytes_per_token(llama)),
        concurrency=users,
    )
    np.testing.assert_array_equal(max_context_tokens(llama, kv_pool_bytes=pool, concurrency=users), seed_rule)


def test_when_nothing_grows_the_answer_is_the_limit():
    # Mistral 7B v0.1: every layer slides over 4,096 tokens, so past the window a sequence costs no more.
    mistral = MODELS["mistral-7b-v0.1"]
    window_cache = float(kvcore.sequence_kv_bytes(mistral, context_tokens=4096))
    assert max_context_tokens(mistral, kv_pool_bytes=window_cache, limit_tokens=1 << 30) == 1 << 30


def test_the_estimated_max_model_len_agrees_with_brute_force():
    mistral = MODELS["mistral-7b-v0.1"]
    lengths = np.arange(1, 8_000, dtype=float)
    need = request_blocks_needed(mistral, max_model_len=lengths)
    for blocks in (10, 123, 300):
        expected = int(lengths[need <= blocks][-1]) if np.any(need <= blocks) else 0
        assert estimated_max_model_len(mistral, num_blocks=blocks) == expected


def test_users_that_fit_are_whole_sequences():
    # 5.64 GiB (the sidebar's default on an RTX 4090) over 1 GiB per 8,192-token user of Llama 3.1 8B: 5.
    sequence = float(kvcore.sequence_kv_bytes(MODELS["llama-3.1-8b"], context_tokens=8192))
    assert sequence == GiB
    assert float(max_users(kv_pool_bytes=5.64 * GiB, sequence_bytes=sequence)) == 5
    assert float(max_users(kv_pool_bytes=-GiB, sequence_bytes=sequence)) == 0


def test_gpus_needed_counts_the_usable_share_of_each_card():
    # 468.78 GB on 80 GiB H100s: 6 with the whole card, 7 with 90 % of it (seed 004).
    need = 468.78e9
    assert float(gpus_needed(total_bytes=need, memory_bytes=80 * GiB)) == 6
    assert float(gpus_needed(total_bytes=need, memory_bytes=80 * GiB, utilization=0.9)) == 7


@settings(deadline=None)
@given(st.floats(0.0, 1e12), st.floats(1.0, 1e6))
def test_tokens_that_fit_never_overflow_the_pool(pool, per_token):
    tokens = float(tokens_that_fit(kv_pool_bytes=pool, bytes_per_token=per_token))
    assert tokens * per_token <= pool + 1e-6 * pool
    assert (tokens + 1) * per_token > pool


def test_a_block_is_two_mib_for_llama_3_1_8b():
    assert kvcore.block_bytes(MODELS["llama-3.1-8b"]) == 2 * MiB
