"""The KV quantization charts draw kvcore's numbers, with units on their axes, in both languages."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.kv_quantization import (
    CACHE_LABELS,
    CAPACITY_LABELS,
    ERROR_LABELS,
    cache_by_format_figure,
    capacity_figure,
    quantization_error_figure,
)
from i18n import LANGUAGES, translate
from kvcore.quantization import KV_FORMATS, relative_rms_error, round_trip, stored_bytes_per_value, synthetic_keys
from tests.app.figures import one_line

CACHE_KEYS = {
    "title": "kv_quantization.cache_chart_title",
    "subtitle": "kv_quantization.cache_chart_subtitle",
    "y_title": "kv_quantization.cache_axis",
    "nominal": "kv_quantization.bar_nominal",
    "with_scales": "kv_quantization.bar_with_scales",
    "room": "kv_quantization.room",
    "formats": "kv_quantization.formats_axis",
}
CAPACITY_KEYS = {
    "title": "kv_quantization.capacity_chart_title",
    "subtitle": "kv_quantization.capacity_chart_subtitle",
    "y_title": "kv_quantization.capacity_axis",
    "users": "kv_quantization.hover_users",
    "formats": "kv_quantization.formats_axis",
}
ERROR_KEYS = {
    "title": "kv_quantization.error_chart_title",
    "subtitle": "kv_quantization.error_chart_subtitle",
    "y_title": "kv_quantization.error_axis",
    "keys": "kv_quantization.keys",
    "values": "kv_quantization.values",
    "formats": "kv_quantization.formats_axis",
}
FILL = {"model": "M", "gpu": "G", "unit": "GiB", "users": "1", "context": "1", "tokens": 1, "channels": 1}
FILL |= {"outliers": 1, "scale": "1", "group": 1}


def labels(keys: dict[str, str], lang: str = "en", **fill: object) -> dict[str, str]:
    return {name: translate(lang, key, **(FILL | fill)) for name, key in keys.items()}


def test_the_label_keys_cover_every_text_the_charts_need():
    assert (set(CACHE_KEYS), set(CAPACITY_KEYS), set(ERROR_KEYS)) == (
        set(CACHE_LABELS),
        set(CAPACITY_LABELS),
        set(ERROR_LABELS),
    )


def cache_figure(models, **knobs):
    return cache_by_format_figure(
        model=models["llama-3.1-8b"], context_tokens=32768, concurrency=3, kv_room_bytes=10 * kvcore.GiB,
        formats=KV_FORMATS, labels=labels(CACHE_KEYS), **knobs,
    )  # fmt: skip


@pytest.mark.parametrize("group_size", [32, 128])
def test_the_stored_bars_are_kvcores_cache_with_scales(models, group_size):
    stored = cache_figure(models, group_size=group_size).data[1]
    expected = [
        float(
            kvcore.kv_cache_bytes(
                models["llama-3.1-8b"],
                context_tokens=32768,
                concurrency=3,
                bytes_per_value=stored_bytes_per_value(fmt, group_size=group_size),
            )
        )
        / kvcore.GiB
        for fmt in KV_FORMATS
    ]
    np.testing.assert_allclose(stored.y, expected)


def test_the_nominal_bars_leave_the_scales_out(models):
    nominal, stored = cache_figure(models).data
    # BF16 at 32,768 tokens · 3 users · 128 KiB = 12 GiB; INT4 nominal is a quarter of it.
    assert nominal.y[0] == 12.0
    assert nominal.y[-1] == 3.0
    assert stored.y[-1] > nominal.y[-1]


def test_the_cache_chart_draws_the_room_and_names_its_unit(models):
    figure = cache_figure(models, unit_bytes=kvcore.GB, unit="GB")
    assert figure.layout.shapes[0].y0 == pytest.approx(10 * kvcore.GiB / 1e9)
    assert "GB" in figure.data[0].hovertemplate


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_cache_chart_titles_its_axes_with_units_in_each_language(models, lang):
    figure = cache_by_format_figure(
        model=models["llama-3.1-8b"], context_tokens=8192, concurrency=1, kv_room_bytes=0.0, formats=KV_FORMATS,
        labels=labels(CACHE_KEYS, lang),
    )  # fmt: skip
    assert one_line(figure.layout.yaxis.title.text) == translate(lang, "kv_quantization.cache_axis", unit="GiB")
    assert figure.data[1].name == translate(lang, "kv_quantization.bar_with_scales")
    assert not figure.layout.shapes  # no room: no line


def test_the_capacity_bars_are_kvcores_users_that_fit(models):
    model = models["llama-3.1-8b"]
    room = 20 * kvcore.GiB
    [bars] = capacity_figure(
        model=model, context_tokens=8192, kv_room_bytes=room, formats=KV_FORMATS, labels=labels(CAPACITY_KEYS)
    ).data
    expected = [
        float(
            kvcore.max_users(
                kv_pool_bytes=room,
                sequence_bytes=kvcore.sequence_kv_bytes(
                    model, context_tokens=8192, bytes_per_value=stored_bytes_per_value(fmt)
                ),
            )
        )
        for fmt in KV_FORMATS
    ]
    np.testing.assert_array_equal(bars.y, expected)
    assert bars.text[1].endswith("×2.0")  # 20 GiB: 20 users in BF16, 40 in FP8


def test_the_error_bars_are_kvcores_round_trip_errors_in_percent():
    keys = synthetic_keys(seed=3)
    values = synthetic_keys(outlier_channels=0, seed=4)
    figure = quantization_error_figure(
        keys=keys, values=values, formats=KV_FORMATS, group_size=64, axis="channel", labels=labels(ERROR_KEYS)
    )
    expected = [
        100 * relative_rms_error(keys, round_trip(keys, fmt, group_size=64, axis="channel")) for fmt in KV_FORMATS
    ]
    np.testing.assert_allclose(figure.data[0].y, expected)
    assert figure.layout.yaxis.type == "log"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_error_chart_says_percent_in_each_language(lang):
    keys = synthetic_keys()
    figure = quantization_error_figure(keys=keys, values=keys, formats=KV_FORMATS, labels=labels(ERROR_KEYS, lang))
    assert "%" in figure.layout.yaxis.title.text
    assert [trace.name for trace in figure.data] == [
        translate(lang, "kv_quantization.keys"),
        translate(lang, "kv_quantization.values"),
    ]
