"""The why-cache charts draw kvcore's counts and FLOPs, with units on the axes, in both languages."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.why_cache import (
    GRID_LABELS,
    STEP_LABELS,
    WORK_LABELS,
    cumulative_work_figure,
    step_work_figure,
    token_axis,
    token_grid_figure,
)
from i18n import LANGUAGES, translate
from kvcore.attention import (
    kv_projection_flops_at_step,
    kv_projection_flops_with_cache,
    kv_projection_flops_without_cache,
    projection_grid,
)

KEYS = {
    "title": "why_cache.work_title",
    "subtitle": "why_cache.work_subtitle",
    "x_title": "why_cache.axis_tokens",
    "y_title": "why_cache.axis_work",
    "without": "why_cache.without",
    "with": "why_cache.with",
    "tokens": "chart.tokens",
    "projections": "why_cache.projections",
    "step": "why_cache.step",
    "token": "why_cache.token",
    "not_yet": "why_cache.cell_not_yet",
    "computed": "why_cache.cell_computed",
    "cached": "why_cache.cell_cached",
    "recomputed": "why_cache.cell_recomputed",
}
STEP_KEYS = KEYS | {"x_title": "why_cache.axis_step", "y_title": "why_cache.axis_step_work"}
GRID_KEYS = KEYS | {"x_title": "why_cache.axis_position", "y_title": "why_cache.axis_grid_step"}


def labels(names, keys, lang="en"):
    return {name: translate(lang, keys[name], model="M", tokens="8", steps=8) for name in names}


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "deepseek-v3", "qwen3-next-80b-a3b", "gpt2"])
def test_the_total_work_curves_are_kvcores_flops_with_and_without_a_cache(models, model_id):
    model = models[model_id]
    figure = cumulative_work_figure(model=model, generated_tokens=1000, labels=labels(WORK_LABELS, KEYS))
    without, with_cache = figure.data
    n = token_axis(1000)
    np.testing.assert_array_equal(without.x, n)
    np.testing.assert_allclose(without.y, kv_projection_flops_without_cache(model, generated_tokens=n))
    np.testing.assert_allclose(with_cache.y, kv_projection_flops_with_cache(model, generated_tokens=n))
    np.testing.assert_allclose(without.customdata, kvcore.kv_projections_without_cache(n))


def test_the_curves_end_at_the_chosen_n_and_show_every_step_of_a_small_one(models):
    figure = cumulative_work_figure(model=models["llama-3.1-8b"], generated_tokens=8, labels=labels(WORK_LABELS, KEYS))
    assert list(figure.data[0].x) == list(range(1, 9))
    assert figure.data[0].customdata[-1] == 36  # 8 · 9 / 2
    assert "markers" in figure.data[0].mode
    big = cumulative_work_figure(model=models["llama-3.1-8b"], generated_tokens=32768, labels=labels(WORK_LABELS, KEYS))
    assert big.data[0].x[-1] == 32768


def test_the_step_chart_is_kvcores_work_of_each_step(models):
    model = models["llama-3.1-8b"]
    figure = step_work_figure(model=model, generated_tokens=50, labels=labels(STEP_LABELS, STEP_KEYS))
    steps = token_axis(50)
    np.testing.assert_allclose(figure.data[0].y, kv_projection_flops_at_step(model, steps, cached=False))
    np.testing.assert_allclose(figure.data[1].y, kv_projection_flops_at_step(model, steps, cached=True))


def test_the_grids_are_kvcores_grids_without_and_with_a_cache():
    figure = token_grid_figure(steps=6, labels=labels(GRID_LABELS, GRID_KEYS))
    heatmaps = [trace for trace in figure.data if trace.type == "heatmap"]
    np.testing.assert_array_equal(heatmaps[0].z, projection_grid(6, cached=False))
    np.testing.assert_array_equal(heatmaps[1].z, projection_grid(6, cached=True))


def test_the_grid_has_one_legend_entry_per_cell_state_with_its_words():
    names = labels(GRID_LABELS, GRID_KEYS)
    figure = token_grid_figure(steps=4, labels=names)
    legend = {trace.name for trace in figure.data if trace.type == "scatter"}
    assert legend == {names["not_yet"], names["computed"], names["cached"], names["recomputed"]}
    assert names["recomputed"] in {word for row in figure.data[0].customdata for word in row}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_axis_titles_carry_units_in_both_languages(models, lang):
    figure = cumulative_work_figure(
        model=models["llama-3.1-8b"], generated_tokens=100, labels=labels(WORK_LABELS, KEYS, lang), separators=",."
    )
    assert "(FLOP)" in figure.layout.yaxis.title.text
    assert "(tokens)" in figure.layout.xaxis.title.text
    assert figure.data[0].name == translate(lang, "why_cache.without")
    step = step_work_figure(
        model=models["llama-3.1-8b"], generated_tokens=100, labels=labels(STEP_LABELS, STEP_KEYS, lang)
    )
    assert "(FLOP)" in step.layout.yaxis.title.text


def test_hover_texts_give_the_tokens_the_count_and_the_flops(models):
    figure = cumulative_work_figure(model=models["gpt2"], generated_tokens=100, labels=labels(WORK_LABELS, KEYS))
    template = figure.data[0].hovertemplate
    assert "tokens" in template and "K/V projections" in template and "FLOP" in template


def test_the_language_sets_the_decimal_mark(models):
    figure = cumulative_work_figure(
        model=models["gpt2"], generated_tokens=100, labels=labels(WORK_LABELS, KEYS, "pt"), separators=",."
    )
    assert figure.layout.separators == ",."


def _height_on_the_axis(figure, value):
    """Where `value` sits between the lowest and highest curve point: 0 at the bottom, 1 at the top."""
    shown = np.concatenate([np.asarray(curve.y, dtype=float) for curve in figure.data])
    if figure.layout.yaxis.type == "log":
        low, high = np.log10(shown.min()), np.log10(shown.max())
        return (np.log10(value) - low) / (high - low)
    return value / shown.max()


def test_a_log_y_axis_lifts_the_cached_total_off_the_floor(models):
    chart_labels = labels(WORK_LABELS, KEYS)
    linear = cumulative_work_figure(model=models["llama-3.1-8b"], generated_tokens=1000, labels=chart_labels)
    logarithmic = cumulative_work_figure(
        model=models["llama-3.1-8b"], generated_tokens=1000, labels=chart_labels, log_y=True
    )
    assert linear.layout.yaxis.type != "log" and logarithmic.layout.yaxis.type == "log"
    cached_end = float(linear.data[1].y[-1])
    assert _height_on_the_axis(linear, cached_end) < 0.01  # flat along zero: 2 / (N + 1) of the top
    assert _height_on_the_axis(logarithmic, cached_end) > 0.5  # N = 1,000 of N(N+1)/2 = 500,500: 3 of 5.7 decades
    np.testing.assert_array_equal(logarithmic.data[1].y, linear.data[1].y)


@pytest.mark.parametrize("build", [cumulative_work_figure, step_work_figure])
def test_the_log_y_axis_labels_the_cached_curves_level(models, build):
    chart_labels = labels(WORK_LABELS, KEYS) | labels(STEP_LABELS, STEP_KEYS)
    figure = build(model=models["llama-3.1-8b"], generated_tokens=1000, labels=chart_labels, log_y=True)
    ticks = np.asarray(figure.layout.yaxis.tickvals)
    cached = np.asarray(figure.data[1].y, dtype=float)
    assert len(figure.layout.yaxis.ticktext) == len(ticks)
    assert ticks.min() <= cached.min() and ticks.max() >= float(np.max(figure.data[0].y))
