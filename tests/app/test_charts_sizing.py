"""The sizing charts draw kvcore's numbers, with units on their axes, in both languages."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.sizing import (
    USERS_LABELS,
    WATERFALL_LABELS,
    context_per_user_figure,
    sizing_waterfall_figure,
    users_axis,
)
from i18n import LANGUAGES, translate
from kvcore.capacity import context_per_user, max_context_tokens, sizing_steps, tokens_that_fit
from tests.app.figures import one_line

WATERFALL_KEYS = {
    "title": "sizing.waterfall_title",
    "subtitle": "sizing.waterfall_subtitle",
    "y_title": "sizing.waterfall_axis",
    "vram": "sizing.bar_vram",
    "held_back": "sizing.bar_held_back",
    "weights": "chart.weights",
    "overhead": "sizing.bar_overhead",
    "pool": "sizing.bar_pool",
}
USERS_KEYS = {
    "title": "sizing.users_chart_title",
    "subtitle": "sizing.users_chart_subtitle",
    "x_title": "sizing.users_axis",
    "y_title": "sizing.context_axis",
    "seed_rule": "sizing.curve_seed_rule",
    "fitting": "sizing.curve_fitting",
    "expected": "sizing.curve_expected",
    "current": "sizing.curve_current",
    "users_fit": "sizing.curve_users_fit",
    "users": "sizing.hover_users",
    "tokens": "chart.tokens",
}
FILL = {"gpu": "GPU", "model": "M", "weights": "bf16", "kv": "bf16", "gpus": "1", "unit": "GiB", "u": "0.9"}
FILL |= {"tokens": "1", "maximum": "1"}


def labels(keys: dict[str, str], lang: str, **fill: str) -> dict[str, str]:
    return {name: translate(lang, key, **(FILL | fill)) for name, key in keys.items()}


def steps_for(models, gpus, model_id="llama-3.1-8b", gpu_id="rtx-4090", **knobs):
    model = models[model_id]
    return model, sizing_steps(
        model,
        memory_bytes=gpus[gpu_id].memory_bytes,
        utilization=knobs.get("utilization", 0.9),
        weights_bytes=kvcore.model_weights_bytes(model),
        overhead_bytes=knobs.get("overhead_bytes", kvcore.GiB),
        concurrency=knobs.get("concurrency", 4),
    )


def test_the_label_keys_cover_every_text_the_charts_need():
    assert set(WATERFALL_KEYS) == set(WATERFALL_LABELS)
    assert set(USERS_KEYS) == set(USERS_LABELS)


def test_the_waterfall_bars_are_kvcores_steps_in_gib(models, gpus):
    _, steps = steps_for(models, gpus)
    [bars] = sizing_waterfall_figure(steps=steps, labels=labels(WATERFALL_KEYS, "en")).data
    expected = [steps.memory_bytes, -steps.held_back_bytes, -steps.weights_bytes, -steps.overhead_bytes]
    np.testing.assert_allclose(bars.y[:4], np.array(expected) / kvcore.GiB)
    assert list(bars.measure) == ["relative"] * 4 + ["total"]


def test_the_waterfall_ends_at_kvcores_pool(models, gpus):
    _, steps = steps_for(models, gpus, utilization=0.8)
    [bars] = sizing_waterfall_figure(steps=steps, labels=labels(WATERFALL_KEYS, "en")).data
    assert sum(bars.y[:4]) == pytest.approx(steps.kv_pool_bytes / kvcore.GiB)
    assert bars.customdata[-1] == pytest.approx(steps.kv_pool_bytes / kvcore.GiB)


def test_the_waterfall_speaks_decimal_gb_when_asked(models, gpus):
    _, steps = steps_for(models, gpus)
    figure = sizing_waterfall_figure(
        steps=steps, labels=labels(WATERFALL_KEYS, "en", unit="GB"), unit_bytes=kvcore.GB, unit="GB"
    )
    assert figure.data[0].y[0] == pytest.approx(steps.memory_bytes / 1e9)
    assert "(GB)" in figure.layout.yaxis.title.text
    assert "GB" in figure.data[0].hovertemplate


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_waterfall_names_its_bars_and_unit_in_each_language(models, gpus, lang):
    _, steps = steps_for(models, gpus)
    figure = sizing_waterfall_figure(steps=steps, labels=labels(WATERFALL_KEYS, lang))
    assert figure.data[0].x[-1] == translate(lang, "sizing.bar_pool")
    assert one_line(figure.layout.yaxis.title.text) == translate(lang, "sizing.waterfall_axis", unit="GiB")


def test_the_seed_rule_curve_is_kvcores_hyperbola(models, gpus):
    model, steps = steps_for(models, gpus)
    figure = context_per_user_figure(
        model=model, steps=steps, expected_context_tokens=8192, labels=labels(USERS_KEYS, "en")
    )
    seed = next(trace for trace in figure.data if trace.name == translate("en", "sizing.curve_seed_rule"))
    users = np.asarray(seed.x)
    tokens = tokens_that_fit(kv_pool_bytes=steps.kv_pool_bytes, bytes_per_token=steps.bytes_per_token)
    np.testing.assert_array_equal(seed.y, context_per_user(pool_tokens=tokens, concurrency=users))


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "gemma-3-27b", "qwen3-next-80b-a3b", "gpt2"])
def test_the_fitting_curve_is_kvcores_longest_context(models, gpus, model_id):
    model, steps = steps_for(models, gpus, model_id=model_id, gpu_id="h200")
    label = translate("en", "sizing.curve_fitting", maximum="1")
    figure = context_per_user_figure(
        model=model, steps=steps, expected_context_tokens=1024, labels=labels(USERS_KEYS, "en")
    )
    fitting = next(trace for trace in figure.data if trace.name == label)
    expected = max_context_tokens(
        model,
        kv_pool_bytes=steps.kv_pool_bytes,
        concurrency=np.asarray(fitting.x),
        limit_tokens=model.max_position_embeddings,
    )
    np.testing.assert_array_equal(fitting.y, expected)


def test_the_expected_context_is_a_flat_line(models, gpus):
    model, steps = steps_for(models, gpus)
    figure = context_per_user_figure(
        model=model, steps=steps, expected_context_tokens=20480, labels=labels(USERS_KEYS, "en")
    )
    line = next(trace for trace in figure.data if trace.name == translate("en", "sizing.curve_expected"))
    assert set(line.y) == {20480.0}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_users_chart_titles_its_axes_with_units(models, gpus, lang):
    model, steps = steps_for(models, gpus)
    figure = context_per_user_figure(
        model=model, steps=steps, expected_context_tokens=8192, labels=labels(USERS_KEYS, lang), separators=",."
    )
    assert one_line(figure.layout.yaxis.title.text) == translate(lang, "sizing.context_axis")
    assert "tokens" in figure.layout.yaxis.title.text
    assert one_line(figure.layout.xaxis.title.text) == translate(lang, "sizing.users_axis")
    assert figure.layout.separators == ",."


def test_the_users_axis_reaches_past_the_users_that_fit():
    axis = users_axis(concurrency=4, users_that_fit=40)
    assert axis[0] == 1 and axis[-1] == 60
