"""The decode charts draw kvcore's bytes and rates, with units on their axes, in both languages."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kvcore
from charts.decode_speed import (
    BYTES_LABELS,
    RATE_LABELS,
    bytes_per_step_figure,
    decode_context_axis,
    tokens_per_s_figure,
)
from i18n import LANGUAGES, translate
from kvcore.timing import crossover_context_tokens
from kvcore.units import format_seconds
from tests.app.figures import chart_figures, one_line, plain
from tests.app.helpers import metric, open_page

BYTES_KEYS = {
    "title": "decode_speed.chart_bytes_title",
    "subtitle": "decode_speed.chart_bytes_subtitle",
    "x_title": "chart.context_axis",
    "y_title": "decode_speed.chart_bytes_axis",
    "weights": "decode_speed.chart_weights",
    "kv": "decode_speed.chart_kv",
    "current": "chart.current",
    "crossover": "decode_speed.chart_crossover",
    "tokens": "chart.tokens",
    "step": "decode_speed.chart_step",
}
RATE_KEYS = {
    "title": "decode_speed.chart_rate_title",
    "subtitle": "decode_speed.chart_rate_subtitle",
    "x_title": "chart.context_axis",
    "y_title": "decode_speed.chart_rate_axis",
    "per_user": "decode_speed.chart_per_user",
    "aggregate": "decode_speed.chart_aggregate",
    "tokens": "chart.tokens",
    "rate": "decode_speed.chart_rate_unit",
}
FILL = {"model": "M", "users": "1 user", "gpus": "1 GPU", "gpu": "GPU", "unit": "GiB", "batch": "{batch}"}


def labels(keys: dict[str, str], lang: str) -> dict[str, str]:
    return {name: translate(lang, key, **FILL) for name, key in keys.items()}


def bandwidth_only(*, bandwidth_bytes_per_s: float, efficiency: float = 1.0, tp: int = 1) -> kvcore.Rates:
    """Rates with no compute roof: the step time is the bytes term alone (kvcore.decode_step_s)."""
    return kvcore.Rates(peak_flop_per_s=math.inf, bandwidth_bytes_per_s=bandwidth_bytes_per_s, mbu=efficiency, gpus=tp)


def bytes_figure(models, *, model_id="llama-3.1-8b", lang="en", unit_bytes=kvcore.GiB, unit="GiB", **knobs):
    settings = {"context_tokens": 8192, "batch": 4, "tp": 1, "kv_bytes_per_value": 2.0, "weight_bytes_per_param": 2.0,
                "bandwidth_bytes_per_s": 3.35e12, "efficiency": 1.0, **knobs}  # fmt: skip
    rates = bandwidth_only(**{key: settings.pop(key) for key in ("bandwidth_bytes_per_s", "efficiency", "tp")})
    return bytes_per_step_figure(
        model=models[model_id], unit_bytes=unit_bytes, unit=unit, labels=labels(BYTES_KEYS, lang), rates=rates,
        **settings,
    )  # fmt: skip


def trace(figure, name: str):
    [match] = [trace for trace in figure.data if trace.name == name]
    return match


def test_the_label_keys_cover_every_text_the_charts_need():
    assert (set(BYTES_KEYS), set(RATE_KEYS)) == (set(BYTES_LABELS), set(RATE_LABELS))


@pytest.mark.parametrize("model_id", ["llama-3.1-70b", "gemma-3-27b", "deepseek-v3", "qwen3-next-80b-a3b"])
def test_the_stacked_areas_are_kvcores_weights_and_kv_bytes(models, model_id):
    figure = bytes_figure(models, model_id=model_id, batch=8, tp=2, kv_bytes_per_value=1.0)
    model = models[model_id]
    contexts = decode_context_axis(model, context_tokens=8192)
    read = kvcore.decode_bytes_per_step(model, context_tokens=contexts, batch=8, gpus=2, kv_bytes_per_value=1.0)
    np.testing.assert_allclose(trace(figure, "Weights").y, read.weights_bytes / kvcore.GiB)
    np.testing.assert_allclose(trace(figure, labels(BYTES_KEYS, "en")["kv"]).y, read.kv_bytes / kvcore.GiB)


def test_the_hover_carries_kvcores_step_time_in_ms(models):
    figure = bytes_figure(models, efficiency=0.8)
    contexts = decode_context_axis(models["llama-3.1-8b"], context_tokens=8192)
    read = kvcore.decode_bytes_per_step(models["llama-3.1-8b"], context_tokens=contexts, batch=4)
    expected = 1e3 * kvcore.decode_step_s(read.total, bandwidth_bytes_per_s=3.35e12, efficiency=0.8)
    np.testing.assert_allclose(trace(figure, "Weights").customdata, expected)
    assert "ms" in trace(figure, "Weights").hovertemplate


def test_decimal_gb_divides_by_a_billion_and_says_so(models):
    figure = bytes_figure(models, unit_bytes=kvcore.GB, unit="GB")
    assert trace(figure, "Weights").y[0] == pytest.approx(kvcore.model_weights_bytes(models["llama-3.1-8b"]) / 1e9)
    assert "GB" in trace(figure, "Weights").hovertemplate


def test_the_crossover_line_sits_at_kvcores_crossover(models):
    figure = bytes_figure(models, batch=4)
    expected = crossover_context_tokens(models["llama-3.1-8b"], weights_bytes=16.06e9, batch=4)
    assert [shape.x0 for shape in figure.layout.shapes] == pytest.approx([8192, float(expected)])


def test_no_crossover_line_when_the_cache_stops_growing(models):
    figure = bytes_figure(models, model_id="mistral-7b-v0.1", batch=1, context_tokens=4096)
    assert [shape.x0 for shape in figure.layout.shapes] == [4096]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_axis_titles_carry_units_in_each_language(models, lang):
    figure = bytes_figure(models, lang=lang)
    assert "GiB" in figure.layout.yaxis.title.text and "tokens" in figure.layout.xaxis.title.text
    assert one_line(figure.layout.yaxis.title.text) == translate(lang, "decode_speed.chart_bytes_axis", unit="GiB")


def rate_figure(models, lang="en", batches=(1, 8)):
    return tokens_per_s_figure(
        model=models["llama-3.1-8b"], context_tokens=8192, batches=list(batches), kv_bytes_per_value=2.0,
        weight_bytes_per_param=2.0, rates=bandwidth_only(bandwidth_bytes_per_s=1.008e12),
        labels=labels(RATE_KEYS, lang),
    )  # fmt: skip


def test_the_rate_lines_are_kvcores_tokens_per_second(models):
    figure = rate_figure(models)
    model = models["llama-3.1-8b"]
    contexts = decode_context_axis(model, context_tokens=8192)
    step = kvcore.decode_step_s(
        kvcore.decode_bytes_per_step(model, context_tokens=contexts, batch=8).total, bandwidth_bytes_per_s=1.008e12
    )
    np.testing.assert_allclose(trace(figure, "batch 8: per conversation").y, kvcore.tokens_per_s(step))
    np.testing.assert_allclose(trace(figure, "batch 8: whole batch").y, kvcore.tokens_per_s(step, batch=8))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_rate_chart_is_logarithmic_and_names_its_unit(models, lang):
    figure = rate_figure(models, lang=lang)
    assert figure.layout.yaxis.type == "log"
    assert "tokens/s" in figure.layout.yaxis.title.text
    assert figure.layout.separators == ".,"


# ---------------------------------------------------------------- the charts pass through the page's metric

DECODE_SPEED = "lessons/decode_speed.py"


@pytest.mark.parametrize(
    ("model_id", "gpu_id", "context", "batch", "bound"),
    [
        # 256 users of Falcon 7B (one KV head: 8 KiB a token) on an RTX 4090: ≈ 23.3 ms of compute > 16.5 ms of
        # reading. (gpt-oss-20b was the case until its 256 users were read as touching nearly all 32 experts.)
        ("falcon-7b", "rtx-4090", 1024, 256, "compute"),
        # 256 users of gpt-oss-20b: the batch touches ≈ every expert, 18.3 ms of reading > 11.5 ms of compute.
        ("gpt-oss-20b", "rtx-4090", 1024, 256, "memory"),
        # One user of Llama 3.1 8B: 17 GB read at 1,008 GB/s, the FLOPs a rounding error.
        ("llama-3.1-8b", "rtx-4090", 8192, 1, "memory"),
    ],
)
def test_the_charts_value_at_the_chosen_context_is_the_pages_metric(
    app, models, gpus, model_id, gpu_id, context, batch, bound
):
    open_page(app, DECODE_SPEED, model=model_id, gpu=gpu_id, ds_context=str(context), ds_batch=str(batch))
    assert not app.exception and not app.error
    shown = metric(app, "decode_speed.metric_step")
    figures = [plain(figure) for figure in chart_figures(app)]
    bytes_chart, rate_chart = figures[0], figures[-1]  # a MoE model adds its experts chart between them
    [weights] = [trace for trace in bytes_chart["data"] if trace["name"] == "Weights"]
    at = list(weights["x"]).index(float(context))
    [per_user] = [trace for trace in rate_chart["data"] if trace["name"] == f"batch {batch}: per conversation"]
    assert list(per_user["x"]).index(float(context)) == at
    assert format_seconds(weights["customdata"][at] / 1e3) == shown
    assert format_seconds(1 / per_user["y"][at]) == shown
    # The case is the one named: that roof sets the step (bandwidth alone would miss the compute-bound one).
    model, gpu = models[model_id], gpus[gpu_id]
    rates = kvcore.rates_for(gpu, weights_dtype=model.weights_dtype)
    weights = kvcore.bytes_per_value(model.weights_dtype)
    step = kvcore.decode_step_times(
        model, context_tokens=context, batch=batch, rates=rates, weight_bytes_per_param=weights
    )
    assert ("compute" if step.compute_s > step.memory_s else "memory") == bound


def test_with_the_sliders_values_the_axis_holds_every_one_and_stays_put_as_the_slider_moves(models):
    model = models["llama-3.1-8b"]
    grid = np.arange(1024.0, 131072.0 + 1, 1024.0)  # the page's context slider: 1k … 128k by 1k
    axis = decode_context_axis(model, context_tokens=8192, slider_contexts=grid)
    assert set(grid) <= set(axis)
    np.testing.assert_array_equal(decode_context_axis(model, context_tokens=65536, slider_contexts=grid), axis)
