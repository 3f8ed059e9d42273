"""The prefill-vs-decode lesson: its controls drive kvcore, and its links and presets restore a view."""

from __future__ import annotations

import pytest

import kvcore
from i18n import LANGUAGES, translate
from kvcore import timing, units
from kvcore.units import format_seconds
from tests.app.helpers import metric, page_opener

PAGE = "lessons/prefill_decode.py"
TRICKY = ["gpt2", "deepseek-v3", "gemma-3-27b", "qwen3-next-80b-a3b", "falcon-7b", "llama-3.1-405b"]


open_page = page_opener(PAGE)


def metric_value(app, key: str, lang: str = "en") -> str:
    return metric(app, f"prefill_decode.{key}", lang)


def rates(gpu, *, weights_dtype="bf16", mfu=0.5, mbu=0.8):
    return {"rates": timing.rates_for(gpu, weights_dtype=weights_dtype, mfu=mfu, mbu=mbu)}


def expected_timeline(model, gpu, *, prompt=1024, output=300, batch=1, weights_dtype="bf16", **knobs):
    return timing.request_timeline(
        model, prompt_tokens=prompt, output_tokens=output, batch=batch,
        weight_bytes_per_param=kvcore.bytes_per_value(weights_dtype),
        **rates(gpu, weights_dtype=weights_dtype, **knobs),
    )  # fmt: skip


def test_moving_the_prompt_slider_shows_kvcores_time_to_first_token(app, models, gpus):
    open_page(app)
    app.slider(key="pd_prompt").set_value(8192).run()
    expected = timing.ttft_s(models["llama-3.1-8b"], prompt_tokens=8192, **rates(gpus["rtx-4090"]))
    assert metric_value(app, "metric_ttft") == format_seconds(float(expected))


def test_the_time_per_token_and_the_whole_request_are_kvcores(app, models, gpus):
    open_page(app)
    app.slider(key="pd_output").set_value(1000).run()
    timeline = expected_timeline(models["llama-3.1-8b"], gpus["rtx-4090"], output=1000)
    assert metric_value(app, "metric_tpot") == format_seconds(timeline.mean_tpot_s)
    assert metric_value(app, "metric_total") == format_seconds(timeline.total_s)


def test_a_bigger_batch_multiplies_the_gpus_output_as_kvcore_says(app, models, gpus):
    open_page(app)
    app.slider(key="pd_batch").set_value(64).run()
    timeline = expected_timeline(models["llama-3.1-8b"], gpus["rtx-4090"], batch=64)
    total = timing.decode_tokens_per_s(64, timeline.mean_tpot_s)
    each = timing.decode_tokens_per_s(1, timeline.mean_tpot_s)
    assert metric_value(app, "metric_output_rate") == units.format_quantity(float(total))
    assert metric_value(app, "metric_user_rate") == units.format_quantity(float(each))


def test_lower_compute_efficiency_slows_a_long_prefill_as_kvcore_says(app, models, gpus):
    open_page(app, pd_prompt="16384")
    app.slider(key="pd_mfu").set_value(0.25).run()
    expected = timing.ttft_s(models["llama-3.1-8b"], prompt_tokens=16384, **rates(gpus["rtx-4090"], mfu=0.25))
    assert metric_value(app, "metric_ttft") == format_seconds(float(expected))


def test_fp8_weights_on_an_h100_raise_the_ridge_to_kvcores_fp8_ridge(app, gpus):
    open_page(app, gpu="h100-sxm")
    app.button_group(key="pd_weights").set_value("fp8").run()
    h100 = gpus["h100-sxm"]
    ridge = timing.effective_ridge_point(
        peak_flop_per_s=h100.fp8_dense_flop_per_s, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s
    )
    assert metric_value(app, "metric_ridge") == units.format_quantity(ridge)


def test_the_price_slider_sets_the_cost_of_output_tokens_as_kvcore_says(app, models, gpus):
    open_page(app)
    app.slider(key="pd_price").set_value(5.0).run()
    timeline = expected_timeline(models["llama-3.1-8b"], gpus["rtx-4090"])
    output_rate = timing.decode_tokens_per_s(1, timeline.mean_tpot_s)
    cost = float(timing.cost_per_million_tokens(output_rate, price_per_gpu_hour=5.0))
    assert metric_value(app, "metric_output_cost") == translate("en", "prefill_decode.money", amount=f"{cost:,.2f}")


def test_output_tokens_cost_more_than_input_tokens_by_kvcores_ratio(app, models, gpus):
    open_page(app, gpu="h100-sxm")
    timeline = expected_timeline(models["llama-3.1-8b"], gpus["h100-sxm"])
    ratio = timing.output_to_input_cost_ratio(
        input_tokens_per_s=timing.prefill_tokens_per_s(1024, timeline.ttft_s),
        output_tokens_per_s=timing.decode_tokens_per_s(1, timeline.mean_tpot_s),
    )
    assert ratio > 1
    assert metric_value(app, "metric_ratio") == f"{float(ratio):,.0f}×"


def test_the_seeds_h100_ridge_is_shown_beside_the_datasheets(app, gpus):
    open_page(app)
    h100 = gpus["h100-sxm"]
    ridge = timing.effective_ridge_point(
        peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s
    )
    says = translate("en", "course_text.004")
    [text] = [md.value for md in app.markdown if md.value.startswith(f"**The text {says} says**")]
    assert "**about 300**" in text
    assert f"**{units.format_flop_per_byte(ridge)}**" in text


def test_a_short_prompt_says_that_even_prefill_waits_for_memory(app):
    open_page(app, gpu="h100-sxm", pd_prompt="128")
    assert any(translate("en", "course_text.002") in info.value for info in app.info)


def test_a_long_prompt_needs_no_such_note(app):
    open_page(app, gpu="h100-sxm", pd_prompt="8192")
    assert not any(translate("en", "course_text.002") in info.value for info in app.info)


def test_a_url_restores_every_control(app, models, gpus):
    open_page(
        app, model="qwen2.5-7b", gpu="h100-sxm", pd_prompt="4096", pd_output="500", pd_batch="8", pd_weights="fp8",
        pd_mfu="0.4", pd_mbu="0.7", pd_price="3.5",
    )  # fmt: skip
    assert app.slider(key="pd_prompt").value == 4096
    assert app.slider(key="pd_output").value == 500
    assert app.slider(key="pd_batch").value == 8
    assert app.button_group(key="pd_weights").value == "fp8"
    assert app.slider(key="pd_price").value == pytest.approx(3.5)
    timeline = expected_timeline(
        models["qwen2.5-7b"], gpus["h100-sxm"], prompt=4096, output=500, batch=8, weights_dtype="fp8", mfu=0.4, mbu=0.7
    )
    assert metric_value(app, "metric_ttft") == format_seconds(timeline.ttft_s)


def test_bad_values_in_the_url_fall_back_to_the_defaults_with_a_notice(app, models, gpus):
    bad = {"pd_prompt": "abc", "pd_batch": "9999", "pd_weights": "fp6", "pd_mfu": "7"}
    open_page(app, **bad)
    assert not app.exception
    for key in bad:
        assert any(f"`{key}`" in info.value for info in app.info), key
    expected = timing.ttft_s(models["llama-3.1-8b"], prompt_tokens=1024, **rates(gpus["rtx-4090"]))
    assert metric_value(app, "metric_ttft") == format_seconds(float(expected))


PRESETS = [
    {"model": "llama-3.1-8b", "gpu": "h100-sxm", "pd_prompt": 1024, "pd_output": 300, "pd_batch": 1},
    {"model": "llama-3.1-8b", "gpu": "h100-sxm", "pd_prompt": 32768, "pd_output": 500, "pd_batch": 1},
    {"model": "llama-3.1-8b", "gpu": "h100-sxm", "pd_prompt": 1024, "pd_output": 300, "pd_batch": 64},
    {"model": "llama-3.1-70b", "gpu": "h100-sxm", "pd_batch": 1, "pd_mfu": 1.0, "pd_mbu": 1.0},
]


def test_each_preset_button_sets_its_scenario(app):
    open_page(app, pd_batch="5", pd_mfu="0.3")
    for index, expected in enumerate(PRESETS):
        app.button(key=f"pd_presets_{index}").click().run()
        assert not app.exception
        for key, value in expected.items():
            widget = app.selectbox(key=key) if key in ("model", "gpu") else app.slider(key=key)
            assert widget.value == value, (index, key)


def test_the_seed_004_preset_says_the_70b_model_would_not_fit_on_one_h100(app):
    open_page(app)
    app.button(key="pd_presets_3").click().run()
    assert any("would not fit on one GPU" in warning.value for warning in app.warning)


def test_a_batch_whose_kv_cache_overflows_the_gpu_says_so(app, models):
    open_page(app, pd_prompt="32768", pd_batch="64")
    cache = kvcore.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=32768 + 300, concurrency=64)
    [warning] = app.warning
    assert "would not fit on one GPU" in warning.value
    assert f"**{kvcore.units.format_gib(float(cache))}**" in warning.value


def test_the_overflow_warning_states_its_whole_card_assumption_and_a_servers_room(app, models, gpus):
    open_page(app, pd_prompt="32768", pd_batch="64")
    weights = kvcore.model_weights_bytes(models["llama-3.1-8b"])
    served = kvcore.assumed_budget(memory_bytes=gpus["rtx-4090"].memory_bytes, weights_bytes=weights)
    [caption] = [caption.value for caption in app.caption if "whole card" in caption.value]
    assert f"**{kvcore.units.format_gib(served.kv_pool_bytes)}**" in caption


def test_fp8_weights_on_a_gpu_without_fp8_say_the_math_stays_bf16(app):
    open_page(app, gpu="a100-80gb", pd_weights="fp8")
    assert any("no FP8 tensor cores" in caption.value for caption in app.caption)


def test_a_prompt_plus_answer_beyond_the_models_window_is_flagged(app):
    open_page(app, model="gpt2", pd_prompt="1024", pd_output="500")
    assert not app.error
    assert any("1,524 tokens" in warning.value for warning in app.warning)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_takes_tricky_models_in_both_languages(app, lang):
    open_page(app, gpu="h100-sxm", lang=lang)
    for model in TRICKY:
        app.selectbox(key="model").set_value(model).run()
        assert not app.exception, (model, [exception.value for exception in app.exception])
        assert not app.error, (model, [error.value for error in app.error])


def test_the_page_takes_any_gpu_with_fp8_weights(app):
    open_page(app, pd_weights="fp8")
    for gpu in ("rtx-3060-12gb", "t4", "m4-pro-64gb", "mi300x", "b200"):
        app.selectbox(key="gpu").set_value(gpu).run()
        assert not app.exception, (gpu, [exception.value for exception in app.exception])
        assert not app.error, (gpu, [error.value for error in app.error])


def test_portuguese_times_use_a_decimal_comma(app, models, gpus):
    open_page(app, lang="pt")
    expected = timing.ttft_s(models["llama-3.1-8b"], prompt_tokens=1024, **rates(gpus["rtx-4090"]))
    shown = metric_value(app, "metric_ttft", lang="pt")
    assert shown == format_seconds(float(expected)).replace(".", ",")
    assert "," in shown
