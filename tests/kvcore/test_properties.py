"""Invariants that hold for every architecture (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import kvcore as kv

layers = st.integers(1, 128)
heads = st.sampled_from([1, 2, 4, 8, 16, 32, 64])
dims = st.sampled_from([32, 64, 80, 96, 128, 256])
tokens = st.integers(1, 2_000_000)
users = st.integers(1, 512)


def full_model(n_layers, n_kv, d):
    return kv.uniform_model(num_hidden_layers=n_layers, num_key_value_heads=n_kv, head_dim=d, num_attention_heads=64)


@settings(deadline=None)
@given(layers, heads, dims, tokens, users)
def test_full_attention_is_linear_in_context_and_concurrency(n_layers, n_kv, d, s, b):
    m = full_model(n_layers, n_kv, d)
    one = float(kv.kv_cache_bytes(m, context_tokens=1))
    assert float(kv.kv_cache_bytes(m, context_tokens=s, concurrency=b)) == one * s * b


@settings(deadline=None)
@given(layers, heads, dims, tokens)
def test_fp8_is_half_of_fp16(n_layers, n_kv, d, s):
    m = full_model(n_layers, n_kv, d)
    fp16 = kv.kv_cache_bytes(m, context_tokens=s, bytes_per_value=kv.bytes_per_value("fp16"))
    fp8 = kv.kv_cache_bytes(m, context_tokens=s, bytes_per_value=kv.bytes_per_value("fp8"))
    assert fp8 * 2 == fp16


@settings(deadline=None)
@given(layers, heads, dims, tokens, st.integers(1, 8192))
def test_sliding_layers_hold_no_more_than_their_window(n_layers, n_kv, d, s, window):
    sliding = kv.uniform_model(
        num_hidden_layers=n_layers, num_key_value_heads=n_kv, head_dim=d, sliding_window=window, sliding_layers=n_layers
    )
    assert kv.sequence_kv_bytes(sliding, context_tokens=s) == kv.sequence_kv_bytes(
        sliding, context_tokens=min(s, window)
    )


@settings(deadline=None)
@given(layers, heads, dims, tokens, st.integers(1, 8192), st.integers(0, 128))
def test_sliding_some_layers_never_costs_more_than_none(n_layers, n_kv, d, s, window, sliding):
    some = kv.uniform_model(
        num_hidden_layers=n_layers,
        num_key_value_heads=n_kv,
        head_dim=d,
        sliding_window=window,
        sliding_layers=min(sliding, n_layers),
    )
    none = kv.uniform_model(num_hidden_layers=n_layers, num_key_value_heads=n_kv, head_dim=d)
    assert kv.sequence_kv_bytes(some, context_tokens=s) <= kv.sequence_kv_bytes(none, context_tokens=s)


@settings(deadline=None)
@given(layers, dims, tokens, st.sampled_from([(1, 2), (2, 4), (4, 8), (8, 16), (16, 64)]))
def test_more_kv_heads_never_cost_less(n_layers, d, s, pair):
    fewer, more = pair
    assert kv.kv_cache_bytes(full_model(n_layers, fewer, d), context_tokens=s) <= kv.kv_cache_bytes(
        full_model(n_layers, more, d), context_tokens=s
    )


@settings(deadline=None)
@given(tokens, tokens, users, users)
def test_decode_time_grows_with_context_and_batch(s1, s2, b1, b2):
    m = kv.uniform_model(
        num_hidden_layers=32, num_key_value_heads=8, head_dim=128, num_attention_heads=32, total_params=8e9
    )
    lo_s, hi_s = sorted((s1, s2))
    lo_b, hi_b = sorted((b1, b2))
    t = [
        float(
            kv.decode_step_s(
                kv.decode_bytes_per_step(m, context_tokens=s, batch=b).total, bandwidth_bytes_per_s=3.35e12
            )
        )
        for s, b in ((lo_s, lo_b), (hi_s, hi_b))
    ]
    assert t[0] <= t[1]


@settings(deadline=None)
@given(tokens, users)
def test_decode_time_is_at_least_weights_over_bandwidth(s, b):
    m = kv.uniform_model(
        num_hidden_layers=32, num_key_value_heads=8, head_dim=128, num_attention_heads=32, total_params=8e9
    )
    step = kv.decode_step_s(kv.decode_bytes_per_step(m, context_tokens=s, batch=b).total, bandwidth_bytes_per_s=1e12)
    assert float(step) >= 16e9 / 1e12


@settings(deadline=None)
@given(st.integers(1, 10_000), st.integers(1, 100_000_000))
def test_the_pool_never_holds_more_tokens_than_its_bytes_allow(block_size, pool_kib):
    m = full_model(32, 8, 128)
    pool = pool_kib * 1024.0
    blocks = kv.num_blocks(kv_pool_bytes=pool, block_bytes=kv.block_bytes(m, block_size=block_size))
    assert kv.pool_tokens(num_blocks=blocks, block_size=block_size) * kv.kv_bytes_per_token(m) <= pool


@settings(deadline=None)
@given(st.integers(1, 1_000_000))
def test_recompute_without_cache_never_costs_less(n):
    assert kv.kv_projections_without_cache(n) >= kv.kv_projections_with_cache(n)
    assert np.isclose(kv.kv_projections_without_cache(n), n * (n + 1) / 2)
