"""The context × users heatmap draws kvcore's totals, with the GPU's limit, the current point and units."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.memory_heatmap import HEATMAP_LABELS, heatmap_contexts, heatmap_users, memory_heatmap_figure
from i18n import LANGUAGES, translate
from kvcore.memory import total_memory_bytes
from tests.app.figures import one_line

LABEL_KEYS = {
    "title": "nav.memory",
    "subtitle": "memory.heatmap_subtitle",
    "x_title": "chart.context_axis",
    "y_title": "memory.heatmap_users_axis",
    "z_title": "memory.heatmap_total_axis",
    "context": "memory.heatmap_context",
    "users": "memory.heatmap_users",
    "total": "memory.heatmap_total",
    "limit": "chart.gpu_memory",
    "current": "chart.current",
    "tokens": "chart.tokens",
}
KNOBS = {"kv_bytes_per_value": 1.0, "weights_bytes_per_param": 0.5, "overhead_bytes": 2 * kvcore.GiB}


def labels(lang: str, unit: str = "GiB") -> dict[str, str]:
    return {name: translate(lang, key, gpu="GPU", unit=unit) for name, key in LABEL_KEYS.items()}


def heatmap_for(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", lang="en", unit="GiB", **knobs):
    return memory_heatmap_figure(
        model=models[model_id], gpu=gpus[gpu_id], context_tokens=knobs.pop("context_tokens", 8192),
        concurrency=knobs.pop("concurrency", 3), labels=labels(lang, unit), unit=unit, **knobs,
    )  # fmt: skip


def test_the_label_keys_cover_every_text_the_heatmap_needs():
    assert set(LABEL_KEYS) == set(HEATMAP_LABELS)


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "gemma-3-27b", "deepseek-v2-lite", "qwen3-next-80b-a3b", "gpt2"])
def test_every_cell_is_kvcores_total_for_its_context_and_users(models, gpus, model_id):
    model = models[model_id]
    figure = heatmap_for(models, gpus, model_id=model_id, **KNOBS)
    [heatmap] = [trace for trace in figure.data if trace.type == "heatmap"]
    contexts, users = heatmap_contexts(model), heatmap_users(256)
    np.testing.assert_array_equal(heatmap.x, contexts)
    np.testing.assert_array_equal(heatmap.y, users)
    for row, n in enumerate(users):
        expected = total_memory_bytes(model, context_tokens=contexts, concurrency=n, **KNOBS) / kvcore.GiB
        np.testing.assert_allclose(np.asarray(heatmap.z)[row], expected, rtol=1e-12)


def test_the_grid_spans_the_models_context_and_every_user_count_up_to_the_slider(models):
    contexts, users = heatmap_contexts(models["gpt2"]), heatmap_users(256)
    assert contexts[-1] == models["gpt2"].max_position_embeddings and contexts[0] > 0
    assert users[0] == 1 and users[-1] == 256 and np.all(users == np.rint(users))


def test_the_red_contour_sits_at_the_gpus_memory(models, gpus):
    figure = heatmap_for(models, gpus, gpu_id="h100-sxm")
    [contour] = [trace for trace in figure.data if trace.type == "contour"]
    assert contour.contours.start == contour.contours.end == gpus["h100-sxm"].memory_bytes / kvcore.GiB


def test_the_marker_shows_the_current_point_with_kvcores_total(models, gpus):
    figure = heatmap_for(models, gpus, context_tokens=20480, concurrency=5, **KNOBS)
    [marker] = [trace for trace in figure.data if trace.type == "scatter"]
    assert (marker.x, marker.y) == ((20480.0,), (5.0,))
    expected = total_memory_bytes(models["llama-3.1-8b"], context_tokens=20480, concurrency=5, **KNOBS)
    assert marker.customdata[0] == pytest.approx(float(expected) / kvcore.GiB)


def test_decimal_gb_divides_by_ten_to_the_ninth_and_says_gb(models, gpus):
    figure = heatmap_for(models, gpus, unit="GB", unit_bytes=kvcore.GB)
    [heatmap] = [trace for trace in figure.data if trace.type == "heatmap"]
    first = total_memory_bytes(models["llama-3.1-8b"], context_tokens=heatmap_contexts(models["llama-3.1-8b"])[0])
    assert np.asarray(heatmap.z)[0][0] == pytest.approx(float(first) / kvcore.GB)
    assert "GB" in heatmap.hovertemplate and "(GB)" in heatmap.colorbar.title.text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_axes_and_colour_bar_carry_units_in_each_language(models, gpus, lang):
    figure = heatmap_for(models, gpus, lang=lang)
    [heatmap] = [trace for trace in figure.data if trace.type == "heatmap"]
    assert "(tokens)" in figure.layout.xaxis.title.text
    assert one_line(figure.layout.yaxis.title.text) == translate(lang, "memory.heatmap_users_axis")
    assert "(GiB)" in heatmap.colorbar.title.text
    assert translate(lang, "memory.heatmap_total") in heatmap.hovertemplate


def test_the_users_axis_is_logarithmic_with_powers_of_two(models, gpus):
    figure = heatmap_for(models, gpus)
    assert figure.layout.yaxis.type == "log"
    assert list(figure.layout.yaxis.tickvals) == [1, 2, 4, 8, 16, 32, 64, 128, 256]


def test_portuguese_separators_reach_the_figure(models, gpus):
    figure = heatmap_for(models, gpus, lang="pt", separators=",.")
    assert figure.layout.separators == ",."
