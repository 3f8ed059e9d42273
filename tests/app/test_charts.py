"""The memory chart draws kvcore's numbers (weights, overhead, KV cache), with units on its axes."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.memory import MEMORY_LABELS, context_axis, memory_vs_context_figure
from charts.style import COLORS
from i18n import LANGUAGES, translate
from tests.app.helpers import trace

LABEL_KEYS = {
    "title": "nav.memory",
    "subtitle": "chart.memory_subtitle",
    "x_title": "chart.context_axis",
    "y_title": "memory.chart_memory_axis",
    "weights": "chart.weights",
    "overhead": "memory.chart_overhead",
    "kv_cache": "chart.kv_cache",
    "gpu_memory": "chart.gpu_memory",
    "runs_out": "chart.runs_out",
    "current": "chart.current",
    "tokens": "chart.tokens",
}


def labels(lang: str, unit: str = "GiB") -> dict[str, str]:
    return {name: translate(lang, key, gpu="GPU", users=1, unit=unit) for name, key in LABEL_KEYS.items()}


def figure_for(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", lang="en", **knobs):
    return memory_vs_context_figure(
        model=models[model_id], gpu=gpus[gpu_id], context_tokens=knobs.pop("context_tokens", 8192),
        labels=labels(lang, knobs.get("unit", "GiB")), **knobs,
    )  # fmt: skip


def test_the_label_keys_cover_every_text_the_chart_needs():
    assert set(LABEL_KEYS) == set(MEMORY_LABELS)


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "gemma-3-27b", "deepseek-v2-lite", "qwen3-next-80b-a3b"])
def test_the_kv_trace_is_kvcores_cache_in_gib(models, gpus, model_id):
    figure = figure_for(models, gpus, model_id=model_id, concurrency=4, kv_bytes_per_value=1.0)
    model = models[model_id]
    contexts = context_axis(model, context_tokens=8192)
    expected = kvcore.kv_cache_bytes(model, context_tokens=contexts, concurrency=4, bytes_per_value=1.0) / kvcore.GiB
    kv = trace(figure, translate("en", "chart.kv_cache"))
    np.testing.assert_array_equal(kv.x, contexts)
    np.testing.assert_allclose(kv.y, expected, rtol=1e-12)


def test_the_weights_trace_is_kvcores_weights_in_gib(models, gpus):
    figure = figure_for(models, gpus, weights_bytes_per_param=0.5)
    expected = kvcore.model_weights_bytes(models["llama-3.1-8b"], bytes_per_param=0.5) / kvcore.GiB
    np.testing.assert_allclose(trace(figure, translate("en", "chart.weights")).y, expected, rtol=1e-12)


def test_the_gpu_line_is_the_cards_memory_in_gib(models, gpus):
    figure = figure_for(models, gpus, gpu_id="h100-sxm")
    np.testing.assert_allclose(trace(figure, "GPU memory").y, gpus["h100-sxm"].memory_bytes / kvcore.GiB)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_axis_titles_carry_their_units(models, gpus, lang):
    figure = figure_for(models, gpus, lang=lang)
    assert "(tokens)" in figure.layout.xaxis.title.text
    assert "(GiB)" in figure.layout.yaxis.title.text


def test_every_hover_text_names_its_unit(models, gpus):
    for scatter in figure_for(models, gpus).data:
        assert "GiB" in scatter.hovertemplate
        assert "tokens" in scatter.hovertemplate


def red_line_tokens(figure) -> list[float]:
    return [shape.x0 for shape in figure.layout.shapes if shape.line.color == COLORS["limit"]]


def test_the_red_line_sits_where_kvcores_sizing_rule_says_memory_runs_out(models, gpus):
    # Full attention is linear in the context, so the seed's rule is exact here:
    # tokens that fit = floor((24 GiB − weights) / 128 KiB), shared by 8 users.
    model, gpu = models["llama-3.1-8b"], gpus["rtx-4090"]
    budget = kvcore.kv_budget_bytes(
        memory_bytes=gpu.memory_bytes, utilization=1.0, weights_bytes=kvcore.model_weights_bytes(model)
    )
    tokens = kvcore.tokens_that_fit(kv_pool_bytes=budget, bytes_per_token=kvcore.kv_bytes_per_token(model))
    expected = float(kvcore.context_per_user(pool_tokens=tokens, concurrency=8))
    [limit] = red_line_tokens(figure_for(models, gpus, concurrency=8))
    assert abs(limit - expected) <= 1


def test_the_red_line_is_the_longest_context_that_still_fits(models, gpus):
    # Gemma 3 mixes sliding and full layers: the curve bends at the window.
    model, gpu = models["gemma-3-12b"], gpus["rtx-4090"]
    [limit] = red_line_tokens(figure_for(models, gpus, model_id="gemma-3-12b", concurrency=8))
    weights = kvcore.model_weights_bytes(model)
    assert float(kvcore.kv_cache_bytes(model, context_tokens=limit, concurrency=8)) + weights <= gpu.memory_bytes
    assert float(kvcore.kv_cache_bytes(model, context_tokens=limit + 1, concurrency=8)) + weights > gpu.memory_bytes


def test_no_red_line_when_everything_fits(models, gpus):
    figure = figure_for(models, gpus, model_id="qwen2.5-0.5b", gpu_id="h100-sxm")
    assert red_line_tokens(figure) == []


def test_the_chart_uses_the_shared_template(models, gpus):
    from charts.style import FONT_SIZE

    assert figure_for(models, gpus).layout.template.layout.font.size == FONT_SIZE


def test_no_red_line_when_the_weights_alone_overflow(models, gpus):
    figure = figure_for(models, gpus, model_id="llama-3.1-405b", gpu_id="rtx-4090")
    assert red_line_tokens(figure) == []


def test_the_overhead_layer_sits_between_the_weights_and_the_cache(models, gpus):
    figure = figure_for(models, gpus, overhead_bytes=1.5 * kvcore.GiB)
    names = [scatter.name for scatter in figure.data if scatter.stackgroup == "memory"]
    assert names == [translate("en", "chart.weights"), translate("en", "memory.chart_overhead"), "KV cache"]
    np.testing.assert_allclose(trace(figure, translate("en", "memory.chart_overhead")).y, 1.5)


def test_the_red_line_leaves_room_for_the_overhead(models, gpus):
    # 4 GiB of overhead come off the top before the cache: kvcore's budget says so, and so must the line.
    model, gpu = models["llama-3.1-8b"], gpus["rtx-4090"]
    budget = kvcore.kv_budget_bytes(
        memory_bytes=gpu.memory_bytes,
        utilization=1.0,
        weights_bytes=kvcore.model_weights_bytes(model),
        overhead_bytes=4 * kvcore.GiB,
    )
    [limit] = red_line_tokens(figure_for(models, gpus, overhead_bytes=4 * kvcore.GiB))
    assert limit == kvcore.max_context_tokens(model, kv_pool_bytes=budget)


def test_in_decimal_gb_every_curve_and_the_axis_use_gb(models, gpus):
    figure = figure_for(models, gpus, gpu_id="h100-sxm", unit_bytes=kvcore.GB, unit="GB")
    np.testing.assert_allclose(trace(figure, "GPU memory").y, gpus["h100-sxm"].memory_bytes / kvcore.GB)
    weights = kvcore.model_weights_bytes(models["llama-3.1-8b"]) / kvcore.GB
    np.testing.assert_allclose(trace(figure, translate("en", "chart.weights")).y, weights)
    assert "(GB)" in figure.layout.yaxis.title.text
    assert all(" GB<br>" in scatter.hovertemplate for scatter in figure.data)
