"""Seed 000's sizing rule, step by step, and the preemption alarm."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from kvcore.capacity import (
    context_per_user,
    max_context_tokens,
    pool_headroom,
    pool_share,
    preemption_risk,
    sizing_steps,
    tokens_that_fit,
)
from kvcore.units import GiB, KiB

#: Seed 000's "typical 7-8B model with GQA": 32 layers, 8 KV heads, head dim 128 → 128 KiB/token in FP16.
GQA_8B = kvcore.uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128)


def test_the_seed_rule_on_a_worked_example():
    # 80 GiB · 0.9 = 72 GiB; − 16 GiB of weights − 2 GiB of overhead = 54 GiB of pool;
    # 54 GiB / 128 KiB = 54 · 8,192 = 442,368 tokens; ÷ 4 users = 110,592 tokens each.
    steps = sizing_steps(
        GQA_8B, memory_bytes=80 * GiB, utilization=0.9, weights_bytes=16 * GiB, overhead_bytes=2 * GiB, concurrency=4
    )
    assert steps.usable_bytes == pytest.approx(72 * GiB)
    assert steps.kv_pool_bytes == pytest.approx(54 * GiB)
    assert steps.bytes_per_token == 128 * KiB
    assert steps.pool_tokens == 442_368
    assert steps.tokens_per_user == 110_592


def test_the_parts_of_the_budget_add_up_to_the_card():
    steps = sizing_steps(
        GQA_8B, memory_bytes=24 * GiB, utilization=0.87, weights_bytes=15e9, overhead_bytes=1.5 * GiB, concurrency=3
    )
    parts = steps.held_back_bytes + steps.weights_bytes + steps.overhead_bytes + steps.kv_pool_bytes
    assert parts == pytest.approx(steps.memory_bytes)


def test_weights_bigger_than_the_usable_memory_leave_no_tokens():
    steps = sizing_steps(GQA_8B, memory_bytes=24 * GiB, utilization=0.9, weights_bytes=30 * GiB)
    assert steps.kv_pool_bytes < 0
    assert steps.pool_tokens == 0
    assert not steps.fits


def test_a_32_gib_pool_of_an_8b_gqa_model_is_the_dashboards_262144_tokens():
    # Seed 000's dashboard: "max context 262,144" = 32 GiB / 131,072 B per token.
    assert float(tokens_that_fit(kv_pool_bytes=32 * GiB, bytes_per_token=131_072)) == 262_144


def test_one_128k_user_takes_half_of_a_262144_token_pool():
    # Seed 000: "one user with 128 thousand tokens consumes half of the whole server".
    pool = 262_144 * kvcore.kv_bytes_per_token(GQA_8B)
    assert float(pool_share(GQA_8B, context_tokens=131_072, kv_pool_bytes=pool)) == 0.5


def test_an_empty_pool_is_an_infinite_share():
    assert float(pool_share(GQA_8B, context_tokens=1024, kv_pool_bytes=-GiB)) == np.inf


def test_the_seeds_pdf_story_fits_one_pdf_and_not_two():
    # Seed 000: 12 GB card, 9 GB model → 3 GiB of room; a 20,480-token PDF at 128 KiB/token = 2.5 GiB.
    room = kvcore.kv_budget_bytes(memory_bytes=12 * GiB, utilization=1.0, weights_bytes=9 * GiB)
    pdf = float(kvcore.sequence_kv_bytes(GQA_8B, context_tokens=20_480))
    assert pdf == 2.5 * GiB
    assert float(kvcore.max_users(kv_pool_bytes=room, sequence_bytes=pdf)) == 1


def test_context_per_user_is_a_hyperbola_in_users():
    users = np.array([1, 2, 4, 8])
    np.testing.assert_array_equal(context_per_user(pool_tokens=262_144, concurrency=users), 262_144 / users)


def test_full_attention_fits_exactly_the_seed_rule():
    users = np.array([1, 3, 7, 64])
    pool = 20 * GiB
    seed_rule = context_per_user(
        pool_tokens=tokens_that_fit(kv_pool_bytes=pool, bytes_per_token=kvcore.kv_bytes_per_token(GQA_8B)),
        concurrency=users,
    )
    np.testing.assert_array_equal(max_context_tokens(GQA_8B, kv_pool_bytes=pool, concurrency=users), seed_rule)


def test_sliding_window_layers_let_each_user_hold_more_than_the_seed_rule():
    gemma = kvcore.load_models()["gemma-3-27b"]
    pool = 20 * GiB
    seed_rule = float(tokens_that_fit(kv_pool_bytes=pool, bytes_per_token=kvcore.kv_bytes_per_token(gemma))) / 8
    assert float(max_context_tokens(gemma, kv_pool_bytes=pool, concurrency=8)) > 2 * seed_rule


def test_the_fitting_context_is_the_longest_that_fits():
    gemma = kvcore.load_models()["gemma-3-27b"]
    pool = 5 * GiB
    longest = float(max_context_tokens(gemma, kv_pool_bytes=pool, concurrency=3))
    assert 3 * kvcore.sequence_kv_bytes(gemma, context_tokens=longest) <= pool
    assert 3 * kvcore.sequence_kv_bytes(gemma, context_tokens=longest + 1) > pool


def test_a_pool_too_small_for_one_token_fits_no_context():
    assert float(max_context_tokens(GQA_8B, kv_pool_bytes=1000.0)) == 0


def test_headroom_falls_as_users_grow():
    users = np.arange(1, 65)
    demand = kvcore.kv_cache_bytes(GQA_8B, context_tokens=8192, concurrency=users)
    headroom = pool_headroom(kv_pool_bytes=10 * GiB, demanded_bytes=demand)
    assert np.all(np.diff(headroom) < 0)


def test_headroom_is_the_pool_over_the_demand():
    # 10 users at 8,192 tokens · 128 KiB = 10 GiB of demand; a 15 GiB pool covers it 1.5 times.
    demand = kvcore.kv_cache_bytes(GQA_8B, context_tokens=8192, concurrency=10)
    assert float(pool_headroom(kv_pool_bytes=15 * GiB, demanded_bytes=demand)) == 1.5


@pytest.mark.parametrize(
    ("headroom", "risk"), [(0.99, "preempts"), (1.0, "at_limit"), (1.09, "at_limit"), (1.1, "fits")]
)
def test_the_alarm_names_the_risk(headroom, risk):
    assert preemption_risk(headroom) == risk


def test_a_negative_pool_has_no_headroom():
    assert float(pool_headroom(kv_pool_bytes=-GiB, demanded_bytes=GiB)) == 0


def test_a_utilization_above_one_is_refused():
    with pytest.raises(ValueError, match="utilization"):
        sizing_steps(GQA_8B, memory_bytes=24 * GiB, utilization=1.2, weights_bytes=GiB)
