"""Every page runs in both languages, and its widgets are wired to kvcore."""

from __future__ import annotations

from pathlib import Path

import pytest

import kvcore
from i18n import LANGUAGES, translate
from kvcore.units import format_bytes, format_gib, format_tokens
from tests.app.helpers import metric_value

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "lessons").glob("*.py"))


def test_there_is_at_least_one_page():
    assert PAGES


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_without_an_exception_in_each_language(app, page, lang):
    app.query_params["lang"] = lang
    app.run()
    app.switch_page(page).run()
    assert not app.exception, [exception.value for exception in app.exception]
    assert not app.error, [error.value for error in app.error]


def test_the_language_follows_the_browser_locale_when_the_url_does_not_say(app):
    app.context["locale"] = "pt-BR"
    app.run()
    assert app.title[0].value == translate("pt", "memory.title")


def test_the_url_language_wins_over_the_browser_locale(app):
    app.context["locale"] = "pt-BR"
    app.query_params["lang"] = "en"
    app.run()
    assert app.title[0].value == translate("en", "memory.title")


def test_moving_the_context_slider_shows_kvcores_cache_size(app, models):
    app.query_params["lang"] = "en"
    app.run()
    app.slider(key="context").set_value(32768).run()
    expected = kvcore.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=32768, bytes_per_value=2.0)
    assert metric_value(app, translate("en", "memory.metric_cache")) == format_gib(float(expected))


def test_moving_the_users_slider_multiplies_the_cache_as_kvcore_says(app, models):
    app.query_params["lang"] = "en"
    app.run()
    app.slider(key="concurrency").set_value(16).run()
    expected = kvcore.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=8192, concurrency=16, bytes_per_value=2.0)
    assert metric_value(app, translate("en", "memory.metric_cache")) == format_gib(float(expected))


def test_fewer_kv_heads_shrink_the_per_token_cache_as_kvcore_says(app, models):
    app.query_params["lang"] = "en"
    app.run()
    app.select_slider(key="kv_heads").set_value(1).run()
    mqa = kvcore.with_changes(models["llama-3.1-8b"], num_key_value_heads=1)
    expected = kvcore.kv_bytes_per_token(mqa, bytes_per_value=2.0)
    assert metric_value(app, translate("en", "memory.metric_per_token")) == format_bytes(expected)


def test_an_int4_kv_cache_and_int4_weights_use_kvcores_half_byte(app, models):
    app.query_params["lang"] = "en"
    app.run()
    app.button_group(key="kv_dtype").set_value("int4").run()
    app.button_group(key="weights_dtype").set_value("int4").run()
    model = models["llama-3.1-8b"]
    cache = kvcore.kv_cache_bytes(model, context_tokens=8192, bytes_per_value=kvcore.bytes_per_value("int4"))
    weights = kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value("int4"))
    assert metric_value(app, translate("en", "memory.metric_cache")) == format_gib(float(cache))
    assert metric_value(app, translate("en", "memory.metric_weights")) == format_gib(weights)


def test_a_url_restores_the_model_gpu_and_sliders(app, models):
    app.query_params.update({"lang": "en", "model": "qwen2.5-7b", "gpu": "h100-sxm", "context": "16384"})
    app.run()
    assert app.selectbox(key="model").value == "qwen2.5-7b"
    assert app.selectbox(key="gpu").value == "h100-sxm"
    expected = kvcore.kv_cache_bytes(models["qwen2.5-7b"], context_tokens=16384, bytes_per_value=2.0)
    assert metric_value(app, translate("en", "memory.metric_cache")) == format_gib(float(expected))


def test_an_unknown_model_in_the_url_falls_back_to_the_default_with_a_notice(app):
    app.query_params.update({"lang": "en", "model": "no-such-model"})
    app.run()
    assert not app.exception
    assert app.selectbox(key="model").value == "llama-3.1-8b"
    assert any("no-such-model" in warning.value for warning in app.warning)


def test_an_unknown_gpu_in_the_url_falls_back_to_the_default_with_a_notice(app):
    app.query_params.update({"lang": "pt", "gpu": "gtx-9999"})
    app.run()
    assert not app.exception
    assert app.selectbox(key="gpu").value == "rtx-4090"
    assert any("gtx-9999" in warning.value for warning in app.warning)


def test_choosing_another_model_brings_its_own_kv_heads_and_weights_format(app, models):
    app.query_params["lang"] = "en"
    app.run()
    app.select_slider(key="kv_heads").set_value(1).run()
    app.selectbox(key="model").set_value("gpt2").run()
    assert app.select_slider(key="kv_heads").value == models["gpt2"].num_key_value_heads
    assert app.button_group(key="weights_dtype").value == "fp32"


def test_the_kv_heads_slider_is_disabled_for_latent_attention_models(app):
    app.query_params.update({"lang": "en", "model": "deepseek-v2-lite"})
    app.run()
    assert app.select_slider(key="kv_heads").disabled


def test_weights_too_big_for_the_gpu_say_what_to_change(app):
    app.query_params.update({"lang": "en", "model": "llama-3.1-405b"})
    app.run()
    assert not app.exception
    assert any("int4" in error.value for error in app.error)


def test_every_model_of_the_csv_opens_the_page_without_an_exception(app, models):
    app.query_params["lang"] = "en"
    app.run()
    for model_id in models:
        app.selectbox(key="model").set_value(model_id).run()
        assert not app.exception, (model_id, [exception.value for exception in app.exception])


@pytest.mark.parametrize(
    ("key", "value"),
    [("context", "99999999"), ("context", "abc"), ("concurrency", "-4"), ("kv_dtype", "fp6"), ("kv_heads", "3")],
)
def test_a_bad_value_in_the_url_falls_back_to_the_default_with_a_notice(app, models, key, value):
    app.query_params.update({"lang": "en", key: value})
    app.run()
    assert not app.exception
    assert any(f"`{key}`" in info.value for info in app.info)
    expected = kvcore.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=8192, bytes_per_value=2.0)
    assert metric_value(app, translate("en", "memory.metric_cache")) == format_gib(float(expected))


def test_markup_in_the_url_is_never_echoed(app):
    app.query_params.update({"lang": "en", "model": "[click](https://evil.example)<script>"})
    app.run()
    assert not app.exception
    [warning] = [w for w in app.warning if "click" in w.value]
    assert "](" not in warning.value and "<script>" not in warning.value


def test_portuguese_numbers_use_a_decimal_comma(app, models):
    app.query_params["lang"] = "pt"
    app.run()
    weights = kvcore.model_weights_bytes(models["llama-3.1-8b"])
    shown = metric_value(app, translate("pt", "memory.metric_weights"))
    assert shown == format_gib(weights).replace(".", ",") == "14,96 GiB"


def test_the_status_says_how_long_each_users_context_can_grow_as_kvcore_says(app, models):
    # Gemma 3 27B on an H100 with 4 users: sliding layers stop at 1,024 tokens, so the answer
    # is kvcore.max_context_tokens, not (free memory) / (bytes per token of all layers).
    # The page's default overhead (1 GiB) comes off the top with the weights.
    app.query_params.update({"lang": "en", "model": "gemma-3-27b", "gpu": "h100-sxm", "concurrency": "4"})
    app.run()
    model = models["gemma-3-27b"]
    weights = kvcore.model_weights_bytes(model)
    room = kvcore.kv_budget_bytes(
        memory_bytes=80 * kvcore.GiB, utilization=1.0, weights_bytes=weights, overhead_bytes=kvcore.GiB
    )
    tokens = kvcore.max_context_tokens(model, kv_pool_bytes=room, concurrency=4)
    [success] = app.success
    assert f"**{format_tokens(tokens)} tokens**" in success.value


def test_a_model_whose_whole_context_fits_says_so(app, models):
    app.query_params.update({"lang": "en", "model": "qwen2.5-0.5b", "gpu": "h100-sxm"})
    app.run()
    [success] = app.success
    assert format_tokens(models["qwen2.5-0.5b"].max_position_embeddings) in success.value
