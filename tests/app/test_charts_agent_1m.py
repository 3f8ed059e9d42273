"""The agent charts draw kvcore's times, GPU counts and attention mass, with units on their axes."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.agent_1m import (
    GPUS_LABELS,
    MASS_LABELS,
    TIME_LABELS,
    agent_context_axis,
    attention_mass_figure,
    gpus_needed_figure,
    token_time_figure,
)
from course import seeds
from i18n import LANGUAGES, translate
from kvcore import agent
from tests.app.helpers import trace

TIME_KEYS = {
    "title": "agent_1m.chart_time_title",
    "subtitle": "agent_1m.chart_time_subtitle",
    "x_title": "chart.context_axis",
    "y_title": "agent_1m.chart_time_axis",
    "weights": "agent_1m.chart_weights",
    "kv": "agent_1m.chart_kv",
    "kv_only": "agent_1m.chart_kv_only",
    "sharded": "agent_1m.chart_sharded",
    "sharded_kv": "agent_1m.chart_sharded_kv",
    "current": "chart.current",
    "seed": "agent_1m.chart_seed",
    "tokens": "chart.tokens",
}
GPUS_KEYS = {
    "title": "agent_1m.chart_fit_title",
    "subtitle": "agent_1m.chart_fit_subtitle",
    "x_title": "chart.context_axis",
    "y_title": "agent_1m.chart_fit_axis",
    "current": "chart.current",
    "tokens": "chart.tokens",
    "gpus": "agent_1m.chart_fit_unit",
}
MASS_KEYS = {
    "title": "agent_1m.chart_mass_title",
    "subtitle": "agent_1m.chart_mass_subtitle",
    "x_title": "agent_1m.chart_mass_x",
    "y_title": "agent_1m.chart_mass_y",
    "mean": "agent_1m.chart_mass_mean",
    "layer": "agent_1m.chart_mass_layer",
    "flat": "agent_1m.chart_mass_flat",
    "top": "agent_1m.chart_mass_top",
    "keep": "agent_1m.chart_mass_keep",
}
FILL = {"model": "M", "gpu": "GPU", "dtype": "BF16", "gpus": 8, "value": "95 ms", "memory": "80 GiB", "keep": 10,
        "layers": 8, "blocks": "4,096", "concentration": "1"}  # fmt: skip


def labels(keys: dict[str, str], lang: str = "en") -> dict[str, str]:
    return {name: translate(lang, key, **FILL) for name, key in keys.items()}


def time_figure(models, lang="en", seed_point=None):
    return token_time_figure(
        model=models["llama-3.1-70b"], bandwidth_bytes_per_s=3.35e12, context_tokens=1_000_000,
        max_context_tokens=2_000_000, shards=8, kv_bytes_per_value=2.0, weight_bytes_per_param=2.0,
        labels=labels(TIME_KEYS, lang), seed_point=seed_point,
    )  # fmt: skip


def test_the_label_keys_cover_every_text_the_charts_need():
    assert (set(TIME_KEYS), set(GPUS_KEYS), set(MASS_KEYS)) == (set(TIME_LABELS), set(GPUS_LABELS), set(MASS_LABELS))


def test_the_one_gpu_areas_are_kvcores_weight_and_kv_time_in_ms(models):
    figure = time_figure(models)
    contexts = agent_context_axis(2_000_000)
    read = kvcore.decode_bytes_per_step(models["llama-3.1-70b"], context_tokens=contexts)
    ms = 1e3 * kvcore.decode_step_s(read.kv_bytes, bandwidth_bytes_per_s=3.35e12)
    np.testing.assert_allclose(trace(figure, "1 GPU: KV cache").y, ms)
    np.testing.assert_allclose(trace(figure, "1 GPU: KV only").y, ms)
    np.testing.assert_allclose(
        trace(figure, "1 GPU: weights").y, 1e3 * kvcore.decode_step_s(read.weights_bytes, bandwidth_bytes_per_s=3.35e12)
    )


def test_the_sharded_lines_divide_kvcores_bytes_over_the_gpus(models):
    figure = time_figure(models)
    contexts = agent_context_axis(2_000_000)
    read = kvcore.decode_bytes_per_step(models["llama-3.1-70b"], context_tokens=contexts, gpus=8)
    step = 1e3 * kvcore.decode_step_s(read.total, bandwidth_bytes_per_s=3.35e12, gpus=8)
    np.testing.assert_allclose(trace(figure, "8 GPUs: weights + KV").y, step)


def test_the_seed_point_is_marked_where_the_caller_puts_it(models):
    figure = time_figure(models, seed_point=(1_000_000, seeds.SEED_004.token_s))
    point = trace(figure, f"{translate('en', 'course_text.004')}: ~95 ms")
    assert (point.x[0], point.y[0]) == (1_000_000, pytest.approx(95.0))


def test_no_seed_point_unless_asked(models):
    assert not [t for t in time_figure(models).data if t.mode == "markers+text"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_time_axes_carry_units_in_each_language(models, lang):
    figure = time_figure(models, lang=lang)
    assert "(ms)" in figure.layout.yaxis.title.text and "tokens" in figure.layout.xaxis.title.text


def test_the_gpu_steps_are_kvcores_gpus_to_fit(models, gpus):
    model, h100 = models["llama-3.1-70b"], gpus["h100-sxm"]
    figure = gpus_needed_figure(
        model=model, gpu_memory_bytes=h100.memory_bytes, context_tokens=1_000_000, max_context_tokens=2_000_000,
        kv_dtypes={"bf16": 2.0, "fp8": 1.0, "int4": 0.5}, weight_bytes_per_param=2.0, utilization=1.0,
        labels=labels(GPUS_KEYS),
    )  # fmt: skip
    contexts = agent_context_axis(2_000_000)
    need = kvcore.model_weights_bytes(model) + kvcore.kv_cache_bytes(
        model, context_tokens=contexts, bytes_per_value=1.0
    )
    np.testing.assert_array_equal(
        trace(figure, "FP8").y, kvcore.gpus_needed(total_bytes=need, memory_bytes=h100.memory_bytes)
    )
    assert "(count)" in figure.layout.yaxis.title.text


def mass_figure(attention, lang="en"):
    return attention_mass_figure(
        attention=attention, top_fraction=0.01, keep_fraction=0.1, labels=labels(MASS_KEYS, lang)
    )


def test_the_mean_mass_curve_is_kvcores_cumulative_mass_in_percent():
    attention = agent.synthetic_attention(blocks=1000, layers=4, concentration=1.0)
    figure = mass_figure(attention)
    mean = trace(figure, "Mean over layers")
    k = np.round(np.asarray(mean.x) * 1000 / 100).astype(int)
    np.testing.assert_allclose(mean.y, 100 * agent.cumulative_mass(attention).mean(axis=0)[k - 1])


def test_the_markers_are_kvcores_top_mass_shares():
    attention = agent.synthetic_attention(blocks=1000, layers=4, concentration=1.5)
    figure = mass_figure(attention)
    top = trace(figure, "Top 1 % of blocks")
    assert top.y[0] == pytest.approx(100 * agent.top_mass_share(attention, top_fraction=0.01).mean())
    keep = trace(figure, "Eviction keeps 10 %")
    assert keep.y[0] == pytest.approx(100 * agent.top_mass_share(attention, top_fraction=0.1).mean())


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_mass_axes_are_percentages_with_a_log_x(lang):
    figure = mass_figure(agent.synthetic_attention(blocks=500, concentration=1.0), lang=lang)
    assert figure.layout.xaxis.type == "log"
    assert "%" in figure.layout.xaxis.title.text and "%" in figure.layout.yaxis.title.text
