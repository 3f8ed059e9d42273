"""Formatting says which unit it prints: GiB for memory, decimal for rates."""

import numpy as np
import pytest

from kvcore import units


@pytest.mark.parametrize(
    ("value", "text"),
    [(131_072, "128 KiB"), (16 * 2**30, "16 GiB"), (1536, "1.5 KiB"), (100, "100 B"), (2**40, "1 TiB")],
)
def test_memory_is_printed_in_binary_units(value, text):
    assert units.format_bytes(value) == text


def test_the_seeds_gb_can_be_shown_in_decimal_units():
    assert units.format_bytes_decimal(327_680_000_000) == "327.68 GB"


def test_bandwidth_is_decimal_and_switches_to_tb_per_s():
    assert units.format_bandwidth(936e9) == "936 GB/s"
    assert units.format_bandwidth(3.35e12) == "3.35 TB/s"


def test_durations_pick_a_readable_unit():
    assert units.format_seconds(0.0978) == "97.8 ms"
    assert units.format_seconds(95.0) == "1.6 min"
    assert units.format_seconds(2e-5) == "20 µs"


#: Sizes at and around each unit's threshold, signs, zero and the non-finite, beside a spread of ordinary ones.
EDGE_SIZES = [0, -0.0, 1, 999.995, 1023, 1023.999, 1024, -2048, 2**20 - 1, 2**20, 2**30, 2**40, 5000 * 2**40,
              999, 10**3, 10**6, 10**9, 10**12, 1.5e-3, float("nan"), float("inf"), float("-inf")]  # fmt: skip


@pytest.mark.parametrize("decimal", [False, True])
@pytest.mark.parametrize("decimals", [0, 1, 2, 3])
def test_many_sizes_read_as_one_at_a_time(decimal, decimals):
    rng = np.random.default_rng(7)
    values = np.concatenate([EDGE_SIZES, np.geomspace(1, 1e15, 2000), -np.geomspace(1, 1e13, 300),
                             rng.uniform(0, 5e12, 2000)])  # fmt: skip
    one = units.format_bytes_decimal if decimal else units.format_bytes
    assert units.format_bytes_many(values, decimal=decimal, decimals=decimals) == [
        one(value, decimals=decimals) for value in values
    ]


def test_many_sizes_of_nothing_are_no_texts():
    assert units.format_bytes_many([]) == []
