"""The GQA/MQA/MLA charts draw kvcore's numbers, with units on their axes, in both languages."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.attention_variants import (
    BARS_LABELS,
    CURVES_LABELS,
    LANDSCAPE_LABELS,
    models_landscape_figure,
    variant_bars_figure,
    variant_curves_figure,
)
from i18n import LANGUAGES, NUMBER_SEPARATORS, translate
from kvcore.variants import attention_family, attention_variants, mean_kv_bytes_per_token
from tests.app.figures import one_line

BARS_KEYS = {
    "title": "attention_variants.bars_title",
    "subtitle": "attention_variants.bars_subtitle",
    "x_title": "attention_variants.cache_axis",
    "per_token": "attention_variants.per_token",
    "room": "attention_variants.room",
}
CURVES_KEYS = {
    "title": "attention_variants.curves_chart_title",
    "subtitle": "attention_variants.curves_subtitle",
    "x_title": "chart.context_axis",
    "y_title": "attention_variants.cache_axis",
    "gpu_memory": "chart.gpu_memory",
    "room": "attention_variants.curves_room",
    "current": "chart.current",
    "tokens": "chart.tokens",
}
LANDSCAPE_KEYS = {
    "title": "attention_variants.landscape_chart_title",
    "subtitle": "attention_variants.landscape_subtitle",
    "x_title": "attention_variants.landscape_x",
    "y_title": "attention_variants.landscape_y",
    "current": "attention_variants.landscape_hybrid",
    "heads": "attention_variants.landscape_heads",
    "hybrid": "attention_variants.landscape_hybrid",
}
FILL = {"context": "8,192", "model": "M", "users": "1 user", "dtype": "bf16", "gpu": "GPU", "room": "9 GiB"}


def labels(keys: dict[str, str], lang: str = "en", unit: str = "GiB") -> dict[str, str]:
    return {name: translate(lang, key, unit=unit, **FILL) for name, key in keys.items()}


@pytest.fixture(scope="module")
def shown(models_by_id):
    model = models_by_id["llama-3.1-8b"]
    return {**attention_variants(model, gqa_kv_heads=8), "model": model}


@pytest.fixture(scope="module")
def models_by_id():
    return kvcore.load_models()


NAMES = {"MHA": "MHA", "GQA": "GQA", "MQA": "MQA", "MLA": "MLA", "model": "Llama"}


def bars(shown, lang="en", **knobs):
    knobs = {"context_tokens": 8192, **knobs}
    return variant_bars_figure(shown, names=NAMES, labels=labels(BARS_KEYS, lang), **knobs)


def test_the_label_keys_cover_every_text_the_charts_need():
    assert set(BARS_KEYS) == set(BARS_LABELS)
    assert set(CURVES_KEYS) == set(CURVES_LABELS)
    assert set(LANDSCAPE_KEYS) == set(LANDSCAPE_LABELS)


def test_each_bar_is_kvcores_cache_in_gib(shown):
    figure = bars(shown, concurrency=4, bytes_per_value=1.0)
    expected = [
        float(kvcore.kv_cache_bytes(spec, context_tokens=8192, concurrency=4, bytes_per_value=1.0)) / kvcore.GiB
        for spec in shown.values()
    ]
    bar = figure.data[0]
    assert list(bar.y) == list(NAMES.values())
    np.testing.assert_allclose(bar.x, expected, rtol=1e-12)


def test_each_bar_is_labelled_with_kvcores_bytes_per_token(shown):
    bar = bars(shown).data[0]
    assert bar.text[0] == "512 KiB/token"
    assert bar.text[1] == "128 KiB/token"


def test_bars_in_decimal_gb_divide_by_a_billion(shown):
    figure = bars(shown, unit_bytes=kvcore.GB, unit="GB")
    mha = float(kvcore.kv_cache_bytes(shown["MHA"], context_tokens=8192)) / kvcore.GB
    assert figure.data[0].x[0] == pytest.approx(mha)
    assert figure.data[0].text[0] == "524.29 kB/token"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_bar_axes_carry_the_unit_in_each_language(shown, lang):
    figure = bars(shown, lang=lang)
    assert "(GiB)" in figure.layout.xaxis.title.text
    assert one_line(figure.layout.xaxis.title.text) == translate(lang, "attention_variants.cache_axis", unit="GiB")
    assert figure.layout.separators == NUMBER_SEPARATORS["en"]


def test_portuguese_bar_labels_use_a_decimal_comma(models_by_id):
    shown = {"MLA": attention_variants(models_by_id["llama-3.1-8b"], mla_rank=64, mla_rope_dim=16)["MLA"]}
    figure = variant_bars_figure(
        shown, names=NAMES, context_tokens=8192, labels=labels(BARS_KEYS, "pt"), separators=NUMBER_SEPARATORS["pt"]
    )
    # 32 · (64 + 16) · 2 = 5,120 B = 5 KiB; at FP8 2.5 KiB.
    assert figure.data[0].text[0] == "5 KiB/token"
    half = variant_bars_figure(
        shown, names=NAMES, context_tokens=8192, bytes_per_value=1.0, labels=labels(BARS_KEYS, "pt"),
        separators=NUMBER_SEPARATORS["pt"],
    )  # fmt: skip
    assert half.data[0].text[0] == "2,5 KiB/token"


def test_the_room_line_is_drawn_only_when_the_weights_leave_room(shown):
    room = translate("en", "attention_variants.room", **FILL)
    [line] = [trace for trace in bars(shown, room_bytes=9 * kvcore.GiB).data if trace.name == room]
    assert list(line.x) == [9.0, 9.0]
    assert len(bars(shown, room_bytes=-1.0).data) == 1


def test_the_log_switch_makes_the_cache_axis_logarithmic(shown):
    assert bars(shown, log_y=True).layout.xaxis.type == "log"
    assert bars(shown).layout.xaxis.type == "linear"


def test_each_curve_is_kvcores_cache_against_context(shown):
    figure = variant_curves_figure(
        shown, names=NAMES, context_tokens=8192, max_context_tokens=131072, concurrency=2,
        gpu_memory_bytes=24 * kvcore.GiB, room_bytes=9 * kvcore.GiB, labels=labels(CURVES_KEYS),
    )  # fmt: skip
    for key, spec in shown.items():
        [curve] = [trace for trace in figure.data if trace.name == NAMES[key]]
        expected = kvcore.kv_cache_bytes(spec, context_tokens=np.asarray(curve.x), concurrency=2) / kvcore.GiB
        np.testing.assert_allclose(curve.y, expected, rtol=1e-12)
        assert curve.x[-1] == 131072


def test_the_curves_show_the_gpu_memory_and_the_room_left(shown):
    figure = variant_curves_figure(
        shown, names=NAMES, context_tokens=8192, max_context_tokens=131072,
        gpu_memory_bytes=24 * kvcore.GiB, room_bytes=9 * kvcore.GiB, labels=labels(CURVES_KEYS),
    )  # fmt: skip
    [gpu] = [trace for trace in figure.data if trace.name == translate("en", "chart.gpu_memory", gpu="GPU")]
    [room] = [trace for trace in figure.data if trace.name == translate("en", "attention_variants.curves_room")]
    assert list(gpu.y) == [24.0, 24.0]
    assert list(room.y) == [9.0, 9.0]
    assert one_line(figure.layout.xaxis.title.text) == "Context (tokens)"
    assert "(GiB)" in figure.layout.yaxis.title.text


def test_every_model_with_a_parameter_count_is_one_point(models_by_id):
    figure = models_landscape_figure(models_by_id, context_tokens=8192, labels=labels(LANDSCAPE_KEYS, unit="KiB"))
    names = [row[0] for trace in figure.data if trace.customdata is not None for row in trace.customdata]
    assert sorted(names) == sorted(spec.name for spec in models_by_id.values() if spec.total_params is not None)


def test_each_point_is_kvcores_mean_bytes_per_token_in_kib(models_by_id):
    figure = models_landscape_figure(
        models_by_id, context_tokens=8192, bytes_per_value=1.0, labels=labels(LANDSCAPE_KEYS, unit="KiB")
    )
    by_name = {spec.name: spec for spec in models_by_id.values()}
    for trace in figure.data:
        if trace.customdata is None:
            continue
        for row, x, y in zip(trace.customdata, trace.x, trace.y, strict=True):
            spec = by_name[row[0]]
            expected = float(mean_kv_bytes_per_token(spec, context_tokens=8192, bytes_per_value=1.0)) / kvcore.KiB
            assert y == pytest.approx(expected)
            assert x == pytest.approx(spec.total_params / 1e9)


def test_points_are_grouped_by_attention_family(models_by_id):
    figure = models_landscape_figure(models_by_id, context_tokens=8192, labels=labels(LANDSCAPE_KEYS, unit="KiB"))
    by_name = {spec.name: spec for spec in models_by_id.values()}
    hybrid = translate("en", "attention_variants.landscape_hybrid")
    for trace in figure.data:
        if trace.customdata is None:
            continue
        family = "hybrid" if trace.name == hybrid else trace.name
        assert {attention_family(by_name[row[0]]) for row in trace.customdata} == {family}


def test_the_current_model_is_ringed(models_by_id):
    figure = models_landscape_figure(
        models_by_id, context_tokens=8192, current_id="deepseek-v3", labels=labels(LANDSCAPE_KEYS, unit="KiB")
    )
    ring = figure.data[-1]
    assert ring.customdata is None
    assert ring.y[0] == pytest.approx(70_272 / kvcore.KiB)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_landscape_axes_carry_units_in_each_language(models_by_id, lang):
    figure = models_landscape_figure(models_by_id, context_tokens=8192, labels=labels(LANDSCAPE_KEYS, lang, "KiB"))
    assert "(KiB)" in figure.layout.yaxis.title.text
    assert one_line(figure.layout.xaxis.title.text) == translate(lang, "attention_variants.landscape_x")
    assert figure.layout.xaxis.type == figure.layout.yaxis.type == "log"
