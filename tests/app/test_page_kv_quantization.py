"""The KV quantization lesson: its controls drive kvcore's bytes per format, its URL restores it, its presets work."""

from __future__ import annotations

import pytest

import kvcore
from i18n import LANGUAGES, translate
from kvcore.capacity import sizing_steps
from kvcore.quantization import stored_bytes_per_value
from kvcore.units import GiB, format_gib
from tests.app.helpers import TRICKY_PAIRS, metric, page_opener

PAGE = "lessons/kv_quantization.py"
TRICKY = [
    *TRICKY_PAIRS,
    ("mistral-7b-v0.1", "mi300x"),
]


open_page = page_opener(PAGE)


def cache_gib(models, fmt: str, *, context: int, users: int = 1, group_size: int = 128, model_id="llama-3.1-8b") -> str:
    b = stored_bytes_per_value(fmt, group_size=group_size)
    return format_gib(
        float(kvcore.kv_cache_bytes(models[model_id], context_tokens=context, concurrency=users, bytes_per_value=b))
    )


def users_that_fit(models, gpus, fmt: str, *, context: int, weights_b: float = 2.0) -> int:
    model = models["llama-3.1-8b"]
    room = sizing_steps(
        model,
        memory_bytes=gpus["rtx-4090"].memory_bytes,
        utilization=0.9,
        weights_bytes=kvcore.model_weights_bytes(model, bytes_per_param=weights_b),
        overhead_bytes=GiB,
    ).kv_pool_bytes
    sequence = kvcore.sequence_kv_bytes(model, context_tokens=context, bytes_per_value=stored_bytes_per_value(fmt))
    return int(kvcore.max_users(kv_pool_bytes=room, sequence_bytes=sequence))


def bad_combination_errors(app) -> list[str]:
    starts = tuple(translate(lang, "error.bad_combination", detail="")[:20] for lang in LANGUAGES)
    return [error.value for error in app.error if error.value.startswith(starts)]


def test_the_default_page_shows_kvcores_cache_per_format(app, models):
    open_page(app)
    assert metric(app, "kv_quantization.metric_bf16") == cache_gib(models, "bf16", context=8192)
    assert metric(app, "kv_quantization.metric_fp8") == cache_gib(models, "fp8", context=8192)
    assert metric(app, "kv_quantization.metric_int4") == cache_gib(models, "int4", context=8192)


def test_moving_the_context_slider_grows_every_format(app, models):
    open_page(app)
    app.slider(key="kq_context").set_value(65536).run()
    assert metric(app, "kv_quantization.metric_bf16") == cache_gib(models, "bf16", context=65536)
    assert metric(app, "kv_quantization.metric_fp8") == cache_gib(models, "fp8", context=65536)


def test_fp8_fits_about_twice_the_users(app, models, gpus):
    open_page(app)
    assert metric(app, "kv_quantization.metric_fit_bf16") == str(users_that_fit(models, gpus, "bf16", context=8192))
    assert metric(app, "kv_quantization.metric_fit_fp8") == str(users_that_fit(models, gpus, "fp8", context=8192))


def test_smaller_groups_make_int4_cost_more(app, models):
    open_page(app, kq_context="131072")
    app.select_slider(key="kq_group").set_value(32).run()
    assert metric(app, "kv_quantization.metric_int4") == cache_gib(models, "int4", context=131072, group_size=32)


def test_a_link_restores_every_setting(app, models):
    open_page(app, kq_context="32768", kq_users="4", kq_group="64", kq_weights="int8", kq_per_channel="true")
    assert app.slider(key="kq_context").value == 32768
    assert app.toggle(key="kq_per_channel").value is True
    assert metric(app, "kv_quantization.metric_int4") == cache_gib(
        models, "int4", context=32768, users=4, group_size=64
    )


def test_a_bad_value_in_the_link_gives_a_notice_and_the_default(app):
    open_page(app, kq_group="100")
    assert not app.exception
    assert app.select_slider(key="kq_group").value == 128
    assert any("`kq_group`" in info.value for info in app.info)


def test_the_seed_000_preset_shows_8_gib_in_fp8(app):
    open_page(app)
    app.button(key="kq_presets_0").click().run()
    assert app.slider(key="kq_context").value == 131072
    assert metric(app, "kv_quantization.metric_fp8") == "8 GiB"  # seed 000's table: 64 KiB · 131,072


def test_the_seed_004_preset_goes_to_a_million_tokens(app):
    open_page(app)
    app.button(key="kq_presets_1").click().run()
    assert app.session_state["model"] == "llama-3.1-70b"
    assert app.slider(key="kq_context").value == 1_000_000  # the course's million, as /agent_1m counts it
    assert metric(app, "kv_quantization.metric_bf16") == "305.18 GiB"  # 327,680 B · 10**6 tokens = 327.68 GB
    assert app.caption and any("Beyond what" in caption.value for caption in app.caption)


def test_the_12_gb_preset_doubles_the_users_with_fp8(app):
    open_page(app)
    app.button(key="kq_presets_2").click().run()
    assert app.session_state["gpu"] == "rtx-3060-12gb"
    bf16 = int(metric(app, "kv_quantization.metric_fit_bf16"))
    assert bf16 > 0
    assert int(metric(app, "kv_quantization.metric_fit_fp8")) == 2 * bf16


def test_the_error_demo_reacts_to_the_scale_axis(app):
    open_page(app)

    def error_text() -> str:
        return next(m.value for m in app.markdown if m.value.startswith("With these settings"))

    before = error_text()
    app.toggle(key="kq_per_channel").set_value(True).run()
    assert error_text() != before


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("model", "gpu"), TRICKY, ids=[model for model, _ in TRICKY])
def test_the_page_takes_any_model_and_gpu_in_both_languages(app, lang, model, gpu):
    open_page(app, lang=lang, model=model, gpu=gpu)
    assert not app.exception, [exception.value for exception in app.exception]
    assert bad_combination_errors(app) == []
    assert len(app.get("plotly_chart")) == 3


def test_the_portuguese_page_uses_a_decimal_comma(app):
    open_page(app, lang="pt")
    assert metric(app, "kv_quantization.metric_fp8", lang="pt") == "0,5 GiB"
