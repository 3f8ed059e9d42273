"""KV cache formats: bytes per value with scales, round trips, and the synthetic K/V demonstration."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from kvcore.quantization import (
    FP8_E4M3_MAX,
    fp8_round_trip,
    int_round_trip,
    max_abs_error,
    relative_rms_error,
    round_to_bf16,
    round_to_fp8_e4m3,
    round_trip,
    stored_bytes_per_value,
    synthetic_keys,
    synthetic_values,
)
from kvcore.units import GiB, KiB

MODELS = kvcore.load_models()
KEYS = synthetic_keys(tokens=512, channels=128, outlier_channels=4, outlier_scale=10.0, seed=0)
VALUES = synthetic_values(tokens=512, channels=128, seed=1)


def error(tensor, fmt, **knobs):
    return relative_rms_error(tensor, round_trip(tensor, fmt, **knobs))


# ---------------------------------------------------------------- bytes (seed figures)


def test_seed_000_fp8_row_is_64_kib_per_token():
    # 2 · 32 layers · 8 KV heads · 128 · 1 byte = 65,536 B = 64 KiB (seed 000's table, "KV em FP8").
    per_token = kvcore.kv_bytes_per_token(MODELS["llama-3.1-8b"], bytes_per_value=stored_bytes_per_value("fp8"))
    assert per_token == 64 * KiB


@pytest.mark.parametrize(("context", "gib"), [(8192, 0.5), (32768, 2), (131072, 8)])
def test_seed_000_fp8_row_in_gib(context, gib):
    # 64 KiB · 8,192 = 0.5 GiB; · 32,768 = 2 GiB; · 131,072 = 8 GiB (seed 000's table).
    cache = kvcore.kv_cache_bytes(MODELS["llama-3.1-8b"], context_tokens=context, bytes_per_value=1.0)
    assert float(cache) == gib * GiB


def test_seed_004_fp8_halves_the_70b_token_to_163840_bytes():
    # 2 · 80 · 8 · 128 · 1 = 163,840 B (seed 004: "de 320 KB para 160 KB" — KiB, in fact).
    model = MODELS["llama-3.1-70b"]
    assert kvcore.kv_bytes_per_token(model, bytes_per_value=stored_bytes_per_value("fp16")) == 327_680
    assert kvcore.kv_bytes_per_token(model, bytes_per_value=stored_bytes_per_value("fp8")) == 163_840


def test_int4_with_scales_costs_more_than_half_a_byte():
    # 0.5 + 2 / 128 = 0.515625 B; groups of 32: 0.5 + 2/32 = 0.5625 B.
    assert stored_bytes_per_value("int4", group_size=128) == 0.515625
    assert stored_bytes_per_value("int4", group_size=32) == 0.5625


def test_int8_with_scales_costs_a_little_more_than_one_byte():
    assert stored_bytes_per_value("int8", group_size=64) == 1 + 2 / 64


@pytest.mark.parametrize("fmt", ["fp8", "int8"])
def test_one_byte_formats_hold_at_least_almost_half_the_bf16_cache(fmt):
    ratio = stored_bytes_per_value("bf16") / stored_bytes_per_value(fmt, group_size=128)
    assert 1.95 < ratio <= 2.0


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError):
        stored_bytes_per_value("fp6")


# ---------------------------------------------------------------- rounding


def test_representable_fp8_values_round_trip_exactly():
    # Normal E4M3 numbers (1.125 = 1 + 1/8, 240, 448) and subnormals (2**-9, 3 · 2**-9).
    exact = np.array([0.0, 1.0, -1.125, 240.0, 448.0, -448.0, 2.0**-6, 2.0**-9, 3 * 2.0**-9])
    np.testing.assert_array_equal(round_to_fp8_e4m3(exact), exact)


def test_fp8_keeps_three_mantissa_bits():
    # Between 256 and 512 the spacing is 2**(8 − 3) = 32: 300 → 288, 310 → 320.
    np.testing.assert_array_equal(round_to_fp8_e4m3([300.0, 310.0]), [288.0, 320.0])


def test_fp8_saturates_at_its_largest_value():
    assert float(round_to_fp8_e4m3(1e6)) == FP8_E4M3_MAX


def test_bf16_rounds_half_to_even():
    # 1 + 2**-8 lies halfway between 1 and 1 + 2**-7: ties go to the even mantissa, 1.
    np.testing.assert_array_equal(round_to_bf16([1 + 2.0**-8, 1 + 2.0**-7]), [1.0, 1 + 2.0**-7])


def test_fp8_round_trip_scales_the_tensor_to_its_range():
    x = np.array([[0.5, -2.0, 0.0, 1.0]])  # absmax 2 → scale 2/448; 2 itself maps to 448 and back
    restored = fp8_round_trip(x)
    assert restored[0, 1] == -2.0
    assert max_abs_error(x, restored) < 0.05


def test_integer_multiples_of_the_scale_round_trip_exactly():
    # One group of 8 with absmax 7 · 0.25: every multiple of 0.25 up to ±1.75 is an INT4 level.
    x = 0.25 * np.array([[7, -7, 3, 0, -1, 2, 5, -4]], dtype=float)
    np.testing.assert_array_equal(int_round_trip(x, bits=4, group_size=8, axis="token"), x)


def test_per_channel_scales_group_along_tokens():
    # Channel 0 has absmax 127 · 0.5, channel 1 absmax 127 · 0.25: each its own scale, both exact.
    x = np.array([[127.0, 2.0], [-3.0, -127.0]]) * np.array([0.5, 0.25])
    np.testing.assert_array_equal(int_round_trip(x, bits=8, group_size=2, axis="channel"), x)


def test_a_group_size_that_does_not_divide_is_refused():
    with pytest.raises(ValueError, match="group size"):
        int_round_trip(np.ones((4, 100)), bits=4, group_size=64)


def test_an_unknown_axis_is_refused():
    with pytest.raises(ValueError, match="axis"):
        int_round_trip(np.ones((4, 64)), bits=4, group_size=64, axis="head")


# ---------------------------------------------------------------- the synthetic demonstration


def test_the_generator_is_reproducible():
    np.testing.assert_array_equal(synthetic_keys(seed=7), synthetic_keys(seed=7))
    assert not np.array_equal(synthetic_keys(seed=7), synthetic_keys(seed=8))


def test_synthetic_keys_have_a_few_large_channels():
    spread = np.abs(KEYS).mean(axis=0)
    assert np.sum(spread > 5 * np.median(spread)) == 4


@pytest.mark.parametrize("tensor", [KEYS, VALUES], ids=["keys", "values"])
def test_fewer_bits_lose_more(tensor):
    # fp16 < bf16 < (fp8 ≈ int8) < int4 on the synthetic data.
    fp16, bf16, fp8, int8, int4 = (error(tensor, fmt, group_size=64) for fmt in ("fp16", "bf16", "fp8", "int8", "int4"))
    assert fp16 < bf16 < min(fp8, int8)
    assert max(fp8, int8) < int4
    assert 0.2 < fp8 / int8 < 10


@pytest.mark.parametrize("fmt", ["int8", "int4"])
def test_keys_lose_more_than_values_under_per_token_scales(fmt):
    assert error(KEYS, fmt, group_size=128, axis="token") > 1.5 * error(VALUES, fmt, group_size=128, axis="token")


def test_per_channel_scales_rescue_the_keys():
    assert error(KEYS, "int4", group_size=128, axis="channel") < 0.5 * error(KEYS, "int4", group_size=128, axis="token")


def test_fp8_barely_minds_outlier_channels():
    assert error(KEYS, "fp8") == pytest.approx(error(VALUES, "fp8"), rel=0.2)


def test_without_outliers_keys_behave_like_values():
    plain = synthetic_keys(outlier_scale=1.0, seed=1)
    np.testing.assert_array_equal(plain, VALUES)


def test_a_zero_tensor_has_no_relative_error():
    with pytest.raises(ValueError, match="zeros"):
        relative_rms_error(np.zeros(4), np.zeros(4))
