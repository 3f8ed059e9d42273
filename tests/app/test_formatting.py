"""charts.formatting: one home for numbers by language; each former copy's output is kept."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charts import formatting
from charts.formatting import ENGLISH, count, latex_number, latex_quantity, localized, money, number, percent, times
from i18n import NUMBER_SEPARATORS, localize_number

PORTUGUESE = NUMBER_SEPARATORS["pt"]
FRACTIONS = st.floats(min_value=0, max_value=1, allow_nan=False)


def test_the_docstring_examples_hold():
    assert doctest.testmod(formatting).failed == 0


def test_english_marks_are_kvcores_and_the_catalogues():
    assert NUMBER_SEPARATORS["en"] == ENGLISH


@settings(deadline=None)
@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False))
def test_localized_swaps_the_marks_as_the_catalogue_does(value):
    text = f"{value:,.3f} GiB"
    assert localized(text, PORTUGUESE) == localize_number(text, "pt")


@settings(deadline=None)
@given(st.floats(min_value=0, max_value=1e7, allow_nan=False), st.integers(min_value=0, max_value=3))
def test_number_is_the_charts_former_localized(value, decimals):
    text = f"{value:,.{decimals}f}"
    former = text.translate(str.maketrans({".": PORTUGUESE[0], ",": PORTUGUESE[1]}))
    assert number(value, PORTUGUESE, decimals=decimals) == former


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=10**9))
def test_count_is_the_memory_charts_former_localized_count(value):
    assert count(value, PORTUGUESE) == f"{value:,}".replace(",", PORTUGUESE[1])


@settings(deadline=None)
@given(FRACTIONS)
def test_percent_keeps_the_kv_quantization_and_paged_attention_precisions(fraction):
    assert percent(fraction, decimals=2) == f"{fraction:.2%}"
    assert percent(fraction, decimals=1) == f"{fraction:.1%}"


@settings(deadline=None)
@given(FRACTIONS)
def test_percent_with_trimmed_zeros_is_the_attention_variants_and_quiz_formats(fraction):
    assert percent(fraction, decimals=3, trim_zeros=True) == f"{fraction:.3%}"[:-1].rstrip("0").rstrip(".") + "%"
    assert percent(fraction, decimals=0, trim_zeros=True) == f"{fraction:.0%}"


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.03, 0.05, 0.1, 0.123, 0.5, 0.999, 1.0])
def test_spaced_percent_is_the_practice_pages_format_for_its_tolerances_and_misses(fraction):
    assert percent(fraction, decimals=1, trim_zeros=True, spaced=True) == f"{fraction * 100:g} %"


@settings(deadline=None)
@given(st.floats(min_value=1, max_value=1e5, allow_nan=False))
def test_times_keeps_the_lessons_factor_formats(factor):
    assert times(factor, decimals=1, trim_zeros=True) == f"{factor:,.1f}".rstrip("0").rstrip(".") + "×"
    assert times(factor, decimals=0) == f"{factor:,.0f}×"


def test_money_shows_a_tenth_of_a_cent_below_one():
    assert (money(0.0421), money(12.5), money(1234.5, PORTUGUESE)) == ("0.042", "12.50", "1.234,50")


def test_latex_numbers_brace_their_commas_and_keep_portuguese_points():
    assert (latex_number(8192), latex_number(8192, PORTUGUESE), latex_number(0.5, PORTUGUESE)) == (
        "8{,}192",
        "8.192",
        "0{,}5",
    )


def test_a_latex_quantity_sets_the_unit_as_text():
    assert latex_quantity("14,96 GiB") == r"14{,}96\ \text{GiB}"
    assert latex_quantity("1.5 MiB", bold=True) == r"\mathbf{1.5}\ \text{MiB}"


@pytest.mark.parametrize("separators", [ENGLISH, PORTUGUESE])
@pytest.mark.parametrize("unit", ["GiB", "GB"])
def test_sizes_read_as_size_one_at_a_time(separators, unit):
    values = [0, 1000, 1536, 2**20 * 1.25, 12_345_678_901, 2**41, float("nan")]
    assert formatting.sizes(values, separators, unit=unit) == [
        formatting.size(value, separators, unit=unit) for value in values
    ]
