"""The PagedAttention charts draw kvcore.paging's reports and block map, with units on their axes."""

from __future__ import annotations

import numpy as np
import pytest

from charts.paged_attention import FREE, WASTED, block_map_figure, cell_slots, map_codes, waste_figure
from kvcore.paging import allocation_report, block_map
from tests.app.figures import one_line

LENGTHS = [100, 700, 30, 2000]
WASTE_LABELS = {
    "title": "T",
    "subtitle": "S",
    "y_title": "KV memory (GiB)",
    "used": "used",
    "wasted": "wasted",
    "contiguous": "Contiguous",
    "paged": "Paged",
}
MAP_LABELS = {
    "title": "T",
    "subtitle": "S",
    "contiguous": "Contiguous",
    "paged": "Paged",
    "request": "Request",
    "reserved": "Reserved",
    "free": "Free",
    "x_title": "slots",
    "y_title": "rows",
}


def reports(bytes_per_token: float = 2**17):
    return [
        allocation_report(LENGTHS, scheme=scheme, max_model_len=2048, block_size=16, bytes_per_token=bytes_per_token)
        for scheme in ("contiguous", "paged")
    ]


def test_the_waste_bars_are_kvcores_bytes_in_gib():
    figure = waste_figure(reports=reports(), labels=WASTE_LABELS)
    used, wasted = figure.data
    assert list(used.y) == [report.used_bytes / 2**30 for report in reports()]
    assert list(wasted.y) == [report.waste_bytes / 2**30 for report in reports()]
    assert "GiB" in figure.layout.yaxis.title.text


def test_the_waste_bars_carry_the_percent_and_the_decimal_comma():
    figure = waste_figure(reports=reports(), labels=WASTE_LABELS, separators=",.")
    assert figure.layout.separators == ",."
    assert figure.data[1].text[0] == f"{reports()[0].waste_fraction * 100:.1f} %".replace(".", ",")


def test_a_small_pool_is_drawn_slot_by_slot_and_a_large_one_in_groups():
    assert cell_slots(8192) == 1
    assert cell_slots(4 * 131072) == 64


def test_the_map_codes_mark_free_wasted_and_request_slots():
    blocks = block_map([3], scheme="paged", max_model_len=8, pool_blocks=2, block_size=4)
    codes = map_codes(blocks, slots_per_cell=1, columns=4)
    assert codes.tolist() == [[0, 0, 0, WASTED], [FREE, FREE, FREE, FREE]]


def test_the_block_map_has_one_heatmap_per_scheme_with_kvcores_cells():
    maps = {
        scheme: block_map(LENGTHS, scheme=scheme, max_model_len=2048, pool_blocks=512, block_size=16)
        for scheme in ("contiguous", "paged")
    }
    figure = block_map_figure(maps=maps, labels=MAP_LABELS)
    assert [trace.type for trace in figure.data] == ["heatmap", "heatmap"]
    contiguous = np.asarray(figure.data[0].z)
    assert int((contiguous == WASTED).sum()) == int(maps["contiguous"].reserved_unused.sum())
    paged = np.asarray(figure.data[1].z)
    assert int((paged == FREE).sum()) >= int(maps["paged"].free.sum())
    assert one_line(figure.layout.xaxis.title.text) == "slots"


def test_with_a_pool_each_bar_fills_it_and_the_rest_is_free():
    pool = 8192 * 2**17  # room for the four contiguous slabs of 2,048 slots
    figure = waste_figure(reports=reports(), labels=WASTE_LABELS | {"free": "Free"}, pool_bytes=pool)
    used, wasted, free = figure.data
    assert free.name == "Free"
    assert list(free.y) == [(pool - report.reserved_bytes) / 2**30 for report in reports()]
    for index in range(2):
        assert used.y[index] + wasted.y[index] + free.y[index] == pytest.approx(pool / 2**30)


def test_requests_that_outgrow_the_pool_are_refused():
    with pytest.raises(ValueError, match="more than the pool"):
        waste_figure(reports=reports(), labels=WASTE_LABELS | {"free": "Free"}, pool_bytes=2048 * 2**17)
