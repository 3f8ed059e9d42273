"""The engines side by side (charts.engines): one bar per engine, its label, its colour, the chosen one outlined."""

from __future__ import annotations

from charts.engines import engines_figure
from charts.style import COLORS

LABELS = {"title": "t", "subtitle": "s", "x_title": "KV cache per GPU (GiB)", "y_title": "", "chosen": "vLLM"}


def figure(**changes):
    settings = {
        "names": ["vLLM", "SGLang", "llama.cpp"],
        "pool_bytes": [4 * 2**30, 2 * 2**30, -1.0],
        "texts": ["4 users at once", "2 users at once", "does not start"],
        "fits": [True, True, False],
        "chosen": 1,
        "labels": LABELS,
    } | changes
    return engines_figure(**settings)


def test_one_bar_per_engine_in_the_unit_with_its_label():
    [bar] = figure().data
    assert list(bar.y) == [
        "<b>vLLM</b><br>4 users at once",
        "<b>SGLang</b><br>2 users at once",
        "<b>llama.cpp</b><br>does not start",
    ]
    assert list(bar.x) == [4.0, 2.0, 0.0]  # a negative pool is drawn as none


def test_an_engine_that_serves_no_one_is_red_and_the_chosen_one_is_outlined():
    [bar] = figure().data
    assert list(bar.marker.color) == [COLORS["kv_cache"], COLORS["kv_cache"], COLORS["limit"]]
    assert list(bar.marker.line.width) == [0, 3, 0]


def test_gb_and_the_portuguese_separators_reach_the_figure():
    shown = figure(unit_bytes=1e9, unit="GB", separators=",.")
    assert shown.layout.separators == ",."
    assert abs(shown.data[0].x[0] - 4 * 2**30 / 1e9) < 1e-12
