"""The engines lesson: every engine at its defaults on the sidebar's model and GPU (kvcore.compare_engines)."""

from __future__ import annotations

import pytest

import kvcore
from i18n import LANGUAGES
from kvcore.units import format_tokens
from tests.app.helpers import TRICKY_PAIRS, metric, page_opener

PAGE = "lessons/engines.py"
open_page = page_opener(PAGE)


def rows(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", context=8192, gpus_count=1, bits=16):
    return kvcore.compare_engines(
        models[model_id], gpus[gpu_id], context_tokens=context, gpus=gpus_count, cache_bits=bits
    )


def test_the_default_page_shows_vllms_start_up_lines_and_numbers(app, models, gpus):
    open_page(app)
    [vllm] = [row for row in rows(models, gpus) if row.engine == "vllm"]
    assert metric(app, "engines.metric_tokens") == format_tokens(vllm.startup.tokens)
    assert metric(app, "engines.metric_users", length=format_tokens(8192)) == f"{vllm.users:,}"
    assert app.code[0].value == "\n".join(vllm.startup.lines())


@pytest.mark.parametrize("engine", kvcore.ENGINES)
def test_each_engine_shows_its_own_lines(app, models, gpus, engine):
    open_page(app, eg_engine=kvcore.ENGINE_NAMES[engine], eg_context="4096")
    [row] = [row for row in rows(models, gpus, context=4096) if row.engine == engine]
    assert app.code[0].value == "\n".join(row.startup.lines())
    assert not app.exception


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_chart_has_one_bar_per_engine_in_both_languages(app, lang):
    open_page(app, lang=lang)
    [chart] = app.get("plotly_chart")
    import json

    figure = json.loads(chart.proto.spec)
    assert len(figure["data"][0]["y"]) == len(kvcore.ENGINES)


@pytest.mark.parametrize(("model", "gpu"), TRICKY_PAIRS, ids=[model for model, _ in TRICKY_PAIRS])
@pytest.mark.parametrize("bits", ["16", "8"])
def test_any_model_and_gpu_and_cache_format_shows_no_traceback(app, model, gpu, bits):
    open_page(app, model=model, gpu=gpu, eg_cache=bits, eg_gpus="2")
    assert not app.exception, [exception.value for exception in app.exception]
