"""The shared budget waterfall: the bars are the terms in the page's unit, and the last is what they leave."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.style import chart_title
from charts.waterfall import WATERFALL_LABELS, waterfall_figure, waterfall_values

LABELS = {"title": "Budget", "subtitle": "one GPU", "y_title": "Memory (GiB)"}
#: 24 GiB, minus 2.4 GiB held back, 15 GiB of weights and 1 GiB of overhead: 5.6 GiB left.
START = ("VRAM", 24 * kvcore.GiB)
TERMS = [("held back", 2.4 * kvcore.GiB), ("weights", 15 * kvcore.GiB), ("overhead", 1 * kvcore.GiB)]
POOL = ("KV pool", 5.6 * kvcore.GiB)


def figure(**changes):
    arguments = {"start": START, "terms": TERMS, "result": POOL, "labels": LABELS}
    return waterfall_figure(**(arguments | changes))


def test_the_labels_a_caller_translates_are_the_titles():
    assert set(WATERFALL_LABELS) == set(LABELS)


def test_the_bars_are_the_start_then_each_term_taken_off_in_gib():
    [bars] = figure().data
    np.testing.assert_allclose(bars.y[:4], [24.0, -2.4, -15.0, -1.0])
    assert list(bars.measure) == ["relative"] * 4 + ["total"]
    assert list(bars.x) == ["VRAM", "held back", "weights", "overhead", "KV pool"]


def test_the_values_sum_to_the_result():
    [bars] = figure().data
    assert sum(waterfall_values(start=START, terms=TERMS)) == pytest.approx(POOL[1])
    assert sum(bars.y) == pytest.approx(5.6)
    assert bars.customdata[-1] == pytest.approx(5.6)


def test_every_bar_is_labelled_with_its_number_and_unit():
    [bars] = figure().data
    assert list(bars.text) == ["24.00 GiB", "-2.40 GiB", "-15.00 GiB", "-1.00 GiB", "5.60 GiB"]
    assert bars.hovertemplate == "<b>%{x}</b><br>%{customdata:,.2f} GiB<extra></extra>"


def test_decimal_gb_divides_by_ten_to_the_nine_and_says_so():
    [bars] = figure(unit_bytes=kvcore.GB, unit="GB").data
    assert bars.y[0] == pytest.approx(24 * kvcore.GiB / 1e9)
    assert bars.text[-1] == f"{5.6 * kvcore.GiB / 1e9:,.2f} GB"
    assert "GB" in bars.hovertemplate


def test_the_titles_and_the_separators_are_the_callers():
    drawn = figure(separators=",.")
    assert drawn.layout.title.text == chart_title("Budget", "one GPU")
    assert drawn.layout.yaxis.title.text == "Memory (GiB)"
    assert drawn.layout.separators == ",."
    assert drawn.data[0].text[2] == "-15,00 GiB", "the labels read in the page's language"


def test_a_negative_result_shows_below_zero():
    terms = [("weights", 30 * kvcore.GiB)]
    drawn = figure(terms=terms, result=("KV pool", -6 * kvcore.GiB))
    low, high = drawn.layout.yaxis.range
    assert low == pytest.approx(-6 * 1.25) and high == pytest.approx(24 * 1.15)


def test_a_result_the_terms_do_not_leave_is_refused():
    with pytest.raises(ValueError, match=r"leave .* not the .* of 'KV pool'"):
        figure(result=("KV pool", 6 * kvcore.GiB))


def test_any_number_of_terms_makes_one_bar_each():
    terms = [(f"term {number}", kvcore.GiB) for number in range(6)]
    [bars] = figure(terms=terms, result=("KV pool", 18 * kvcore.GiB)).data
    assert len(bars.x) == 8 and bars.x[-1] == "KV pool"
    assert sum(bars.y) == pytest.approx(18.0)


def test_a_result_below_zero_stands_at_zero_and_says_it_does_not_fit():
    terms = [("weights", 30 * kvcore.GiB)]
    [bars] = figure(terms=terms, result=("KV pool", -6 * kvcore.GiB), does_not_fit="does not fit").data
    assert list(bars.measure) == ["relative", "relative", "absolute"], "the result restarts at zero"
    assert bars.y[-1] == 0.0
    assert bars.text[-1] == "does not fit"
    assert "does not fit" in bars.hovertemplate[-1] and "-6" not in bars.hovertemplate[-1]


def test_a_result_above_zero_is_plotlys_running_total_as_before():
    [bars] = figure(does_not_fit="does not fit").data
    assert bars.measure[-1] == "total" and bars.text[-1] == "5.60 GiB"
