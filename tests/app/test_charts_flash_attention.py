"""The FlashAttention charts draw kvcore's bytes: scores vs statistics vs the unchanged KV cache, and the traffic."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.flash_attention import (
    BARS_LABELS,
    MEMORY_LABELS,
    TRAFFIC_LABELS,
    hbm_traffic_figure,
    kv_unchanged_figure,
    score_memory_figure,
    sequence_axis,
)
from i18n import LANGUAGES, translate
from kvcore.attention import flash_attention_hbm_bytes, prefill_attention_memory, standard_attention_hbm_bytes

KEYS = {
    "title": "flash_attention.memory_title",
    "subtitle": "flash_attention.memory_subtitle",
    "x_title": "flash_attention.axis_tokens",
    "y_title": "flash_attention.axis_memory",
    "scores": "flash_attention.scores",
    "stats": "flash_attention.stats",
    "kv_cache": "flash_attention.kv_cache",
    "gpu_memory": "chart.gpu_memory",
    "sram": "flash_attention.sram",
    "current": "flash_attention.current",
    "tokens": "chart.tokens",
    "standard": "flash_attention.standard",
    "flash": "flash_attention.flash",
    "time": "flash_attention.time",
    "temporary": "flash_attention.temporary",
}
TRAFFIC_KEYS = KEYS | {"title": "flash_attention.traffic_chart_title", "y_title": "flash_attention.axis_traffic"}
BARS_KEYS = KEYS | {"title": "flash_attention.bars_title", "subtitle": "flash_attention.bars_subtitle"}


def labels(names, keys, lang="en", unit="GiB"):
    fill = {"model": "M", "heads": 32, "batch": 1, "dtype": "BF16", "gpu": "GPU", "unit": unit, "tokens": "8"}
    return {name: translate(lang, keys[name], bandwidth="1 TB/s", **fill) for name in names}


def memory_figure(models, gpus, model_id="llama-3.1-8b", gpu_id="h100-sxm", **kw):
    knobs = {"tokens": 8192, "max_tokens": 131072, "heads": 32, "batch": 2, "bytes_per_value": 2.0} | kw
    return score_memory_figure(model=models[model_id], gpu=gpus[gpu_id], labels=labels(MEMORY_LABELS, KEYS), **knobs)


def traces(figure):
    return {trace.name: trace for trace in figure.data}


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "deepseek-v3", "gemma-3-27b", "qwen3-next-80b-a3b"])
def test_the_memory_curves_are_kvcores_scores_statistics_and_kv_cache(models, gpus, model_id):
    figure = memory_figure(models, gpus, model_id)
    names, n = labels(MEMORY_LABELS, KEYS), sequence_axis(131072)
    standard = prefill_attention_memory(models[model_id], tokens=n, flash=False, heads=32, batch=2)
    flash = prefill_attention_memory(models[model_id], tokens=n, flash=True, heads=32, batch=2)
    shown = traces(figure)
    np.testing.assert_allclose(shown[names["scores"]].y, standard.temporary_bytes / kvcore.GiB)
    np.testing.assert_allclose(shown[names["stats"]].y, flash.temporary_bytes / kvcore.GiB)
    np.testing.assert_allclose(shown[names["kv_cache"]].y, standard.kv_cache_bytes / kvcore.GiB)


def test_the_gpus_memory_and_sram_are_drawn_as_limits(models, gpus):
    names = labels(MEMORY_LABELS, KEYS)
    shown = traces(memory_figure(models, gpus))
    assert shown[names["gpu_memory"]].y[0] == 80
    assert shown[names["sram"]].y[0] == pytest.approx(33 / 1024)  # 132 SMs · 256 KiB = 33 MiB


def test_a_gpu_without_published_sram_draws_no_sram_line(models, gpus):
    names = labels(MEMORY_LABELS, KEYS)
    assert names["sram"] not in traces(memory_figure(models, gpus, gpu_id="m4-max-128gb"))


def test_decimal_gb_divides_by_ten_to_the_ninth(models, gpus):
    figure = memory_figure(models, gpus, unit_bytes=kvcore.GB, unit="GB")
    n = sequence_axis(131072)
    scores = prefill_attention_memory(models["llama-3.1-8b"], tokens=n, flash=False, heads=32, batch=2)
    np.testing.assert_allclose(figure.data[0].y, scores.temporary_bytes / kvcore.GB)
    assert figure.data[0].customdata[-1] == "2.2 TB"  # decimal units in the hover: 131072² · 32 · 2 · 2 B


def test_the_traffic_curves_are_kvcores_standard_and_flashattention_2_bytes():
    figure = hbm_traffic_figure(
        tokens=8192, max_tokens=65536, head_dim=128, heads=32, batch=1, bandwidth_bytes_per_s=3.35e12,
        labels=labels(TRAFFIC_LABELS, TRAFFIC_KEYS),
    )  # fmt: skip
    n = sequence_axis(65536)
    np.testing.assert_allclose(figure.data[0].y, standard_attention_hbm_bytes(n, head_dim=128) * 32 / kvcore.GiB)
    np.testing.assert_allclose(figure.data[1].y, flash_attention_hbm_bytes(n, head_dim=128) * 32 / kvcore.GiB)
    assert "ms" in figure.data[0].customdata[-1][1] or " s" in figure.data[0].customdata[-1][1]


def test_the_bars_hold_the_same_kv_cache_and_different_temporary_bytes(models):
    figure = kv_unchanged_figure(
        model=models["llama-3.1-8b"], tokens=8192, heads=32, labels=labels(BARS_LABELS, BARS_KEYS)
    )
    kv, temporary = figure.data
    assert kv.y[0] == kv.y[1] == 1.0  # 1 GiB both ways (128 KiB per token · 8192)
    assert list(temporary.y) == [4.0, 1 / 1024]  # 4 GiB of scores vs 1 MiB of statistics
    assert figure.layout.barmode == "stack"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_axis_titles_carry_units_in_both_languages(models, gpus, lang):
    figure = score_memory_figure(
        model=models["gpt2"], gpu=gpus["rtx-4090"], tokens=512, max_tokens=1024, heads=12,
        labels=labels(MEMORY_LABELS, KEYS, lang), separators=",.",
    )  # fmt: skip
    assert "(GiB)" in figure.layout.yaxis.title.text
    assert "(tokens)" in figure.layout.xaxis.title.text
    assert figure.layout.xaxis.type == "log" and figure.layout.yaxis.type == "log"
    assert figure.data[0].name == translate(lang, "flash_attention.scores")
    assert figure.layout.separators == ",."
