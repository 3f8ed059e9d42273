"""The prefill/decode charts draw kvcore's numbers, with units on their axes."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.prefill_decode import (
    BATCH_LABELS,
    ROOFLINE_LABELS,
    TIMELINE_LABELS,
    batch_axis,
    batch_intensity_figure,
    intensity_axis,
    roofline_figure,
    timeline_figure,
)
from charts.style import COLORS
from i18n import LANGUAGES, translate
from kvcore import timing
from tests.app.helpers import trace

ROOFLINE_KEYS = {
    "title": "prefill_decode.roofline_title",
    "subtitle": "prefill_decode.roofline_subtitle",
    "x_title": "prefill_decode.intensity_axis",
    "y_title": "prefill_decode.throughput_axis",
    "roof": "prefill_decode.roof",
    "real_roof": "prefill_decode.real_roof",
    "ridge": "prefill_decode.ridge_label",
    "knee": "prefill_decode.knee_label",
    "prefill": "prefill_decode.prefill",
    "decode": "prefill_decode.decode",
    "prefill_bound": "prefill_decode.bound_compute",
    "decode_bound": "prefill_decode.bound_memory",
}
TIMELINE_KEYS = {
    "title": "prefill_decode.timeline_chart_title",
    "subtitle": "prefill_decode.timeline_chart_subtitle",
    "x_title": "prefill_decode.time_axis",
    "y_title": "prefill_decode.received_axis",
    "tokens": "prefill_decode.tokens",
    "prefill": "prefill_decode.prefill_band",
    "first_token": "prefill_decode.first_token",
}
BATCH_KEYS = {
    "title": "prefill_decode.batch_chart_title",
    "subtitle": "prefill_decode.batch_chart_subtitle",
    "x_title": "prefill_decode.batch_axis",
    "y_title": "prefill_decode.intensity_axis",
    "decode": "prefill_decode.decode",
    "ridge": "prefill_decode.ridge_label",
    "current": "prefill_decode.your_batch",
    "batch": "prefill_decode.batch_word",
}
FILLERS = {"model": "M", "gpu": "G", "prompt": "1", "output": "1", "users": "1", "context": "1"}
FILLERS |= {"mfu": "0.5", "mbu": "0.8", "ridge": "295", "knee": "185"}

PEAK, BANDWIDTH, MFU, MBU = 989.4e12, 3.35e12, 0.5, 0.8


def labels(keys: dict[str, str], lang: str = "en") -> dict[str, str]:
    return {name: translate(lang, key, **FILLERS) for name, key in keys.items()}


@pytest.fixture(scope="module")
def llama8b():
    return kvcore.load_models()["llama-3.1-8b"]


@pytest.fixture(scope="module")
def intensities(llama8b):
    prefill = float(timing.prefill_intensity_flop_per_byte(llama8b, prompt_tokens=1024))
    decode = float(timing.decode_intensity_flop_per_byte(llama8b, context_tokens=1174, batch=1))
    return prefill, decode


def roofline(intensities, lang="en"):
    prefill, decode = intensities
    return roofline_figure(
        peak_flop_per_s=PEAK, bandwidth_bytes_per_s=BANDWIDTH, mfu=MFU, mbu=MBU,
        prefill_intensity=prefill, decode_intensity=decode, labels=labels(ROOFLINE_KEYS, lang),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("keys", "needed"), [(ROOFLINE_KEYS, ROOFLINE_LABELS), (TIMELINE_KEYS, TIMELINE_LABELS), (BATCH_KEYS, BATCH_LABELS)]
)
def test_the_label_keys_cover_every_text_each_chart_needs(keys, needed):
    assert set(keys) == set(needed)


# ---------------------------------------------------------------- roofline


def test_the_two_phases_sit_at_kvcores_intensities_on_the_achieved_roof(intensities):
    figure = roofline(intensities)
    for name, intensity in zip(("Prefill", "Decode"), intensities, strict=True):
        point = trace(figure, name)
        expected = timing.achieved_flop_per_s(
            intensity, peak_flop_per_s=PEAK, bandwidth_bytes_per_s=BANDWIDTH, mfu=MFU, mbu=MBU
        )
        assert point.x == (intensity,)
        assert point.y[0] == pytest.approx(expected / kvcore.TFLOP, rel=1e-12)


def test_the_ridge_is_marked_at_kvcores_ridge_point(intensities):
    [ridge] = [shape.x0 for shape in roofline(intensities).layout.shapes if shape.line.color == COLORS["limit"]]
    assert ridge == kvcore.ridge_point(peak_flop_per_s=PEAK, bandwidth_bytes_per_s=BANDWIDTH)


def test_the_datasheet_roof_is_kvcores_attainable_throughput_in_tflop_per_s(intensities):
    figure = roofline(intensities)
    roof = trace(figure, translate("en", "prefill_decode.roof"))
    x = intensity_axis(*intensities, ridge=kvcore.ridge_point(peak_flop_per_s=PEAK, bandwidth_bytes_per_s=BANDWIDTH))
    expected = kvcore.attainable_flop_per_s(x, peak_flop_per_s=PEAK, bandwidth_bytes_per_s=BANDWIDTH) / kvcore.TFLOP
    np.testing.assert_allclose(roof.x, x)
    np.testing.assert_allclose(roof.y, expected, rtol=1e-12)


def test_the_roof_axis_reaches_beyond_both_phases_and_the_ridge(intensities):
    x = intensity_axis(*intensities, ridge=295.0)
    assert x[0] < min(intensities) and x[-1] > max(*intensities, 295.0)


def test_both_roofline_axes_are_logarithmic(intensities):
    figure = roofline(intensities)
    assert figure.layout.xaxis.type == "log" and figure.layout.yaxis.type == "log"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_roofline_axis_titles_carry_their_units(intensities, lang):
    figure = roofline(intensities, lang)
    assert "(FLOP/byte)" in figure.layout.xaxis.title.text
    assert "(TFLOP/s)" in figure.layout.yaxis.title.text


def test_every_roofline_hover_names_both_units(intensities):
    for scatter in roofline(intensities).data:
        assert "FLOP/byte" in scatter.hovertemplate and "TFLOP/s" in scatter.hovertemplate


def test_each_phase_hover_says_which_bound_applies(intensities):
    figure = roofline(intensities)
    assert "compute-bound" in trace(figure, "Prefill").hovertemplate
    assert "memory-bound" in trace(figure, "Decode").hovertemplate


def test_the_roofline_uses_the_languages_separators(intensities):
    prefill, decode = intensities
    figure = roofline_figure(
        peak_flop_per_s=PEAK, bandwidth_bytes_per_s=BANDWIDTH, mfu=MFU, mbu=MBU, prefill_intensity=prefill,
        decode_intensity=decode, labels=labels(ROOFLINE_KEYS, "pt"), separators=",.",
    )  # fmt: skip
    assert figure.layout.separators == ",."
    assert trace(figure, "Prefill").name == translate("pt", "prefill_decode.prefill")


# ---------------------------------------------------------------- timeline


@pytest.fixture(scope="module")
def request_timeline(llama8b):
    return timing.request_timeline(
        llama8b, prompt_tokens=1024, output_tokens=300,
        rates=timing.Rates(peak_flop_per_s=PEAK, bandwidth_bytes_per_s=BANDWIDTH, mfu=MFU, mbu=MBU),
    )  # fmt: skip


def timeline(request_timeline, lang="en"):
    return timeline_figure(
        arrival_s=request_timeline.arrival_s, ttft_s=request_timeline.ttft_s, labels=labels(TIMELINE_KEYS, lang)
    )


def test_the_timeline_counts_kvcores_arrivals_one_token_at_a_time(request_timeline):
    [tokens] = [scatter for scatter in timeline(request_timeline).data if scatter.mode == "lines"]
    np.testing.assert_array_equal(tokens.x, np.concatenate(([0.0], request_timeline.arrival_s)))
    np.testing.assert_array_equal(tokens.y, np.arange(0, 301))


def test_the_prefill_band_ends_at_kvcores_ttft(request_timeline):
    [band] = timeline(request_timeline).layout.shapes
    assert (band.x0, band.x1) == (0.0, request_timeline.ttft_s)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_timeline_axis_titles_carry_their_units(request_timeline, lang):
    figure = timeline(request_timeline, lang)
    assert "(s)" in figure.layout.xaxis.title.text
    assert "(tokens)" in figure.layout.yaxis.title.text


def test_every_timeline_hover_names_its_unit(request_timeline):
    for scatter in timeline(request_timeline).data:
        assert " s<" in scatter.hovertemplate


# ---------------------------------------------------------------- batch


def batch_chart(model, *, batch=8, lang="en"):
    return batch_intensity_figure(
        model=model, context_tokens=1174, batch=batch, ridge=295.0, labels=labels(BATCH_KEYS, lang)
    )


def test_the_batch_curve_is_kvcores_decode_intensity(llama8b):
    curve = trace(batch_chart(llama8b), translate("en", "prefill_decode.decode"))
    batches = batch_axis(8)
    expected = timing.decode_intensity_flop_per_byte(llama8b, context_tokens=1174, batch=batches)
    np.testing.assert_array_equal(curve.x, batches)
    np.testing.assert_allclose(curve.y, expected, rtol=1e-12)


def test_the_chosen_batch_is_marked_on_the_curve(llama8b):
    mark = trace(batch_chart(llama8b, batch=64), translate("en", "prefill_decode.your_batch"))
    expected = timing.decode_intensity_flop_per_byte(llama8b, context_tokens=1174, batch=64)
    assert mark.x == (64,)
    assert mark.y[0] == pytest.approx(float(expected))


def test_the_batch_chart_draws_the_ridge_as_a_ceiling(llama8b):
    ridge = trace(batch_chart(llama8b), translate("en", "prefill_decode.ridge_label", ridge="295"))
    assert set(ridge.y) == {295.0}


def test_the_batch_axis_reaches_a_batch_bigger_than_its_default_range():
    assert batch_axis(1000)[-1] == 1000


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_batch_axis_titles_carry_their_units(llama8b, lang):
    figure = batch_chart(llama8b, lang=lang)
    assert "(FLOP/byte)" in figure.layout.yaxis.title.text
    assert figure.layout.xaxis.title.text.endswith(")")


def test_every_batch_hover_names_its_unit_in_the_chosen_language(llama8b):
    for scatter in batch_chart(llama8b, lang="pt").data:
        assert "FLOP/byte" in scatter.hovertemplate
    assert (
        translate("pt", "prefill_decode.batch_word") in trace(batch_chart(llama8b, lang="pt"), "Decode").hovertemplate
    )
