"""The sizing lesson: controls drive kvcore's sizing rule, the URL restores it, presets tell the seed's stories."""

from __future__ import annotations

import pytest

import kvcore
from i18n import LANGUAGES
from kvcore.capacity import sizing_steps
from kvcore.units import GiB, format_tokens
from tests.app.helpers import TRICKY_PAIRS, metric, no_bad_combination, page_opener

PAGE = "lessons/sizing.py"
TRICKY = [
    *TRICKY_PAIRS,
    ("mistral-7b-v0.1", "mi300x"),
]


open_page = page_opener(PAGE)


def expected_steps(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", **knobs):
    model = models[model_id]
    return sizing_steps(
        model,
        memory_bytes=gpus[gpu_id].memory_bytes,
        utilization=knobs.get("utilization", 0.90),
        weights_bytes=kvcore.model_weights_bytes(model, bytes_per_param=knobs.get("weights_b", 2.0)),
        overhead_bytes=knobs.get("overhead_gib", 1.0) * GiB,
        concurrency=knobs.get("users", 4),
        bytes_per_value=knobs.get("kv_b", 2.0),
    )


def test_the_default_page_shows_kvcores_pool_tokens(app, models, gpus):
    open_page(app)
    steps = expected_steps(models, gpus)
    assert metric(app, "sizing.metric_tokens") == format_tokens(steps.pool_tokens)
    assert metric(app, "sizing.metric_each") == format_tokens(steps.tokens_per_user)


def test_moving_the_utilization_slider_changes_the_pool(app, models, gpus):
    open_page(app)
    app.slider(key="sz_utilization").set_value(0.8).run()
    steps = expected_steps(models, gpus, utilization=0.8)
    assert metric(app, "sizing.metric_tokens") == format_tokens(steps.pool_tokens)


def test_more_users_share_the_same_pool(app, models, gpus):
    open_page(app)
    app.slider(key="sz_users").set_value(16).run()
    steps = expected_steps(models, gpus, users=16)
    assert metric(app, "sizing.metric_each") == format_tokens(steps.tokens_per_user)


def test_fp8_cache_doubles_the_tokens_in_the_pool(app, models, gpus):
    open_page(app)
    app.button_group(key="sz_kv_dtype").set_value("fp8").run()
    steps = expected_steps(models, gpus, kv_b=1.0)
    assert metric(app, "sizing.metric_tokens") == format_tokens(steps.pool_tokens)


def test_a_link_restores_every_setting(app, models, gpus):
    open_page(app, sz_utilization="0.85", sz_users="8", sz_overhead="2.0", sz_weights_dtype="int8", sz_context="4096")
    assert app.slider(key="sz_utilization").value == 0.85
    assert app.slider(key="sz_context").value == 4096
    steps = expected_steps(models, gpus, utilization=0.85, users=8, overhead_gib=2.0, weights_b=1.0)
    assert metric(app, "sizing.metric_tokens") == format_tokens(steps.pool_tokens)
    assert metric(app, "sizing.metric_each") == format_tokens(steps.tokens_per_user)


def test_a_bad_value_in_the_link_gives_a_notice_and_the_default(app):
    open_page(app, sz_utilization="1.7")
    assert not app.exception
    assert app.slider(key="sz_utilization").value == 0.90
    assert any("`sz_utilization`" in info.value for info in app.info)


def test_the_pdf_preset_tells_the_seeds_outage(app):
    open_page(app)
    app.button(key="sz_presets_0").click().run()
    assert app.session_state["gpu"] == "rtx-3060-12gb"
    assert app.slider(key="sz_context").value == 20480
    assert app.slider(key="sz_users").value == 2
    assert app.button_group(key="sz_weights_dtype").value == "int8"
    assert any(error.value.startswith("**Preemptions.**") for error in app.error)


def test_the_dashboard_preset_fits_with_room_to_spare(app, models, gpus):
    open_page(app)
    app.button(key="sz_presets_1").click().run()
    assert app.select_slider(key="sz_tp").value == 2
    assert app.slider(key="sz_utilization").value == 0.88
    assert app.success and app.success[0].value.startswith("**It fits.**")


def test_the_long_user_preset_sets_one_user_at_131072_tokens(app):
    open_page(app)
    app.button(key="sz_presets_2").click().run()
    assert app.slider(key="sz_users").value == 1
    assert app.slider(key="sz_context").value == 131072
    assert app.session_state["model"] == "llama-3.1-70b"


def test_an_overloaded_server_rings_the_preemption_alarm(app):
    open_page(app, sz_users="64", sz_context="32768")
    assert any(error.value.startswith("**Preemptions.**") for error in app.error)


def test_weights_that_do_not_fit_say_so_without_an_error(app):
    open_page(app, model="llama-3.1-70b")
    assert not app.exception
    assert any(warning.value.startswith("**No room for the cache.**") for warning in app.warning)
    assert no_bad_combination(app)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("model", "gpu"), TRICKY, ids=[model for model, _ in TRICKY])
def test_the_page_takes_any_model_and_gpu_in_both_languages(app, lang, model, gpu):
    open_page(app, lang=lang, model=model, gpu=gpu)
    assert not app.exception, [exception.value for exception in app.exception]
    assert no_bad_combination(app)
    assert len(app.get("plotly_chart")) == 2


def test_the_portuguese_page_uses_a_decimal_comma(app):
    open_page(app, lang="pt")
    assert "," in metric(app, "sizing.metric_pool", lang="pt")
