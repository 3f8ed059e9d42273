"""What fits on my machine (charts.local_llm): one line per cache type from kvcore, the limit, the marker, log ticks."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.local_llm import context_ticks, local_llm_figure
from charts.style import COLORS
from tests.app.helpers import trace

LABELS = {
    "title": "t",
    "subtitle": "s",
    "x_title": "Context per slot (tokens)",
    "y_title": "Memory needed (GiB)",
    "limit": "What the GPU offers",
    "current": "Your settings",
    "tokens": "tokens",
}
MODEL = kvcore.load_models()["llama-3.1-8b"]
CONTEXTS = np.array([1024, 4096, 16384, 65536])


def figure(**changes):
    needed = {
        cache: kvcore.llamacpp_required_bytes(MODEL, ctx_size=CONTEXTS, cache_type_k=cache, cache_type_v=cache)
        for cache in ("f16", "q8_0", "q4_0")
    }
    settings = {
        "context_tokens": CONTEXTS,
        "needed_bytes": needed,
        "chosen": "q8_0",
        "limit_bytes": 12 * 2**30,
        "current_tokens": 8192,
        "current_bytes": 7 * 2**30,
        "labels": LABELS,
    } | changes
    return local_llm_figure(**settings)


def test_each_cache_type_is_one_line_of_kvcores_requirement_in_the_unit():
    shown = figure()
    for cache in ("f16", "q8_0", "q4_0"):
        line = trace(shown, cache)
        need = kvcore.llamacpp_required_bytes(MODEL, ctx_size=CONTEXTS, cache_type_k=cache, cache_type_v=cache)
        assert list(line.x) == list(CONTEXTS)
        assert np.allclose(line.y, need / 2**30)
    assert trace(shown, "q8_0").line.width > trace(shown, "f16").line.width  # the page's own type stands out


def test_the_gpus_limit_is_a_red_line_labelled_with_its_size():
    shown = figure()
    [limit] = [shape for shape in shown.layout.shapes if shape.name == "limit"]
    assert limit.y0 == limit.y1 == 12.0 and limit.line.color == COLORS["limit"]
    [label] = [note for note in shown.layout.annotations if note.name == "limit"]
    assert label.text == "What the GPU offers: 12 GiB"


def test_the_marker_sits_at_the_pages_context_and_requirement():
    marker = trace(figure(), "Your settings")
    assert list(marker.x) == [8192.0] and list(marker.y) == [7.0]


def test_the_context_axis_is_logarithmic_with_powers_of_two_and_the_axes_name_their_units():
    shown = figure()
    assert shown.layout.xaxis.type == "log"
    assert list(shown.layout.xaxis.tickvals) == [1024, 2048, 4096, 8192, 16384, 32768, 65536]
    assert shown.layout.xaxis.ticktext[0] == "1k" and shown.layout.xaxis.ticktext[-1] == "64k"
    assert "(tokens)" in shown.layout.xaxis.title.text and "(GiB)" in shown.layout.yaxis.title.text


@pytest.mark.parametrize(("low", "high", "texts"), [(256, 1024, ["256", "512", "1k"]), (2**19, 2**20, ["512k", "1M"])])
def test_ticks_read_as_tokens(low, high, texts):
    assert context_ticks(low, high)[1] == texts


def test_gb_and_the_portuguese_separators_reach_the_figure():
    shown = figure(unit_bytes=1e9, unit="GB", separators=",.")
    assert shown.layout.separators == ",."
    assert trace(shown, "Your settings").y[0] == pytest.approx(7 * 2**30 / 1e9)
    [label] = [note for note in shown.layout.annotations if note.name == "limit"]
    assert label.text == "What the GPU offers: 12,88 GB"
