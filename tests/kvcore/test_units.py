"""Formatting says which unit it prints: GiB for memory, decimal for rates."""

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
