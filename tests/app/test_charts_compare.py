"""Two setups side by side (charts.compare): one stacked bar per setup, its parts kvcore's, the usable mark, units."""

from __future__ import annotations

import kvcore
from charts.compare import COMPARE_LABELS, compare_figure
from charts.style import COLORS

GiB = 2**30
LABELS = {key: key for key in COMPARE_LABELS} | {"y_title": "Memory per GPU (GiB)"}
A = kvcore.MemoryBreakdown(weights_bytes=15 * GiB, kv_cache_bytes=4 * GiB, overhead_bytes=1 * GiB)
B = kvcore.MemoryBreakdown(weights_bytes=15 * GiB, kv_cache_bytes=2 * GiB, overhead_bytes=1 * GiB)


def figure(**changes):
    settings = {"names": ["A", "B"], "usage": [A, B], "usable_bytes": [40 * GiB, 72 * GiB], "labels": LABELS}
    return compare_figure(**(settings | changes))


def test_one_stacked_bar_per_setup_whose_parts_are_the_breakdowns():
    shown = figure()
    bars = {trace.name: trace for trace in shown.data if trace.type == "bar"}
    assert list(bars) == ["weights", "overhead", "kv_cache"]  # bottom to top
    assert list(bars["weights"].x) == ["A", "B"]
    assert list(bars["weights"].y) == [15.0, 15.0]
    assert list(bars["overhead"].y) == [1.0, 1.0]
    assert list(bars["kv_cache"].y) == [4.0, 2.0]
    assert shown.layout.barmode == "stack"


def test_the_parts_add_up_to_the_total_written_above_each_bar():
    shown = figure()
    tops = {annotation.x: annotation for annotation in shown.layout.annotations}
    assert tops["A"].y == A.total_bytes / GiB and "20 GiB" in tops["A"].text
    assert tops["B"].y == B.total_bytes / GiB and "18 GiB" in tops["B"].text


def test_each_setup_has_its_own_usable_mark():
    [mark] = [trace for trace in figure().data if trace.type == "scatter"]
    assert list(mark.x) == ["A", "B"] and list(mark.y) == [40.0, 72.0]
    assert mark.name == "usable" and mark.marker.color == COLORS["limit"]
    assert list(mark.customdata) == ["40 GiB", "72 GiB"]


def test_the_colors_are_the_memory_calculators():
    bars = {trace.name: trace for trace in figure().data if trace.type == "bar"}
    assert bars["weights"].marker.color == COLORS["weights"]
    assert bars["kv_cache"].marker.color == COLORS["kv_cache"]


def test_gb_and_the_portuguese_separators_reach_the_figure():
    shown = figure(unit_bytes=1e9, unit="GB", separators=",.")
    assert shown.layout.separators == ",."
    bars = {trace.name: trace for trace in shown.data if trace.type == "bar"}
    assert bars["kv_cache"].y[0] == 4 * GiB / 1e9
    assert bars["kv_cache"].text[0] == bars["kv_cache"].customdata[0] == "4,29 GB"  # on the bar and in its hover


def test_the_axis_title_names_the_unit():
    assert figure().layout.yaxis.title.text == "Memory per GPU (GiB)"


def test_a_total_that_nearly_meets_its_usable_mark_is_written_above_the_mark():
    near = kvcore.MemoryBreakdown(weights_bytes=65.7 * GiB, kv_cache_bytes=5 * GiB, overhead_bytes=1 * GiB)
    shown = figure(usage=[near, B], usable_bytes=[72 * GiB, 72 * GiB])
    tops = {annotation.x: annotation.y for annotation in shown.layout.annotations}
    assert tops == {"A": 72.0, "B": B.total_bytes / GiB}  # B's total is far below its mark: on its bar
