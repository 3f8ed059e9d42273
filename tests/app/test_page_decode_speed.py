"""The decode-speed lesson: its controls drive kvcore, its URL restores it, its presets set it."""

from __future__ import annotations

import pytest

import kvcore
from i18n import LANGUAGES, translate
from kvcore.timing import crossover_context_tokens, decode_token_s
from kvcore.units import format_bandwidth, format_gib, format_seconds, format_tokens, format_tokens_per_s
from tests.app.helpers import TRICKY_PAIRS, metric, page_opener

PAGE = "lessons/decode_speed.py"


open_page = page_opener(PAGE)


def step_s(models, gpus, *, model_id="llama-3.1-8b", gpu_id="rtx-4090", **knobs) -> float:
    return float(decode_token_s(models[model_id], bandwidth_bytes_per_s=gpus[gpu_id].bandwidth_bytes_per_s, **knobs))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_opens_with_kvcores_step_time_in_each_language(app, models, gpus, lang):
    open_page(app, lang)
    assert not app.exception and not app.error
    expected = format_seconds(step_s(models, gpus, context_tokens=8192))
    shown = expected.replace(".", ",") if lang == "pt" else expected
    assert metric(app, "decode_speed.metric_step", lang) == shown


def test_moving_the_context_slider_changes_the_step_by_what_kvcore_says(app, models, gpus):
    open_page(app)
    app.slider(key="ds_context").set_value(65536).run()
    assert metric(app, "decode_speed.metric_step") == format_seconds(step_s(models, gpus, context_tokens=65536))


def test_a_bigger_batch_multiplies_the_whole_batchs_speed_as_kvcore_says(app, models, gpus):
    open_page(app)
    app.slider(key="ds_batch").set_value(16).run()
    step = step_s(models, gpus, context_tokens=8192, batch=16)
    assert metric(app, "decode_speed.metric_aggregate") == format_tokens_per_s(
        float(kvcore.tokens_per_s(step, batch=16)), unit=False
    )
    assert metric(app, "decode_speed.metric_per_user") == format_tokens_per_s(
        float(kvcore.tokens_per_s(step)), unit=False
    )


def test_the_crossover_metric_is_kvcores(app, models):
    open_page(app)
    app.slider(key="ds_batch").set_value(8).run()
    model = models["llama-3.1-8b"]
    expected = crossover_context_tokens(model, weights_bytes=kvcore.model_weights_bytes(model), batch=8)
    assert metric(app, "decode_speed.metric_crossover") == format_tokens(float(expected))


def test_a_sliding_window_model_never_overtakes_its_weights_at_batch_one(app):
    open_page(app, model="mistral-7b-v0.1")
    assert metric(app, "decode_speed.metric_crossover") == translate("en", "decode_speed.never")


def test_eight_gpus_divide_the_70b_step_and_keep_the_fleets_bytes(app, models, gpus):
    open_page(app, model="llama-3.1-70b", gpu="h100-sxm")
    one_gpu_bytes = metric(app, "decode_speed.metric_fleet_bytes")
    app.button_group(key="ds_tp").set_value(8).run()
    expected = step_s(models, gpus, model_id="llama-3.1-70b", gpu_id="h100-sxm", context_tokens=8192, tp=8)
    assert metric(app, "decode_speed.metric_step") == format_seconds(expected)
    assert metric(app, "decode_speed.metric_fleet_bytes") == one_gpu_bytes
    assert metric(app, "decode_speed.metric_fleet_bandwidth") == format_bandwidth(8 * 3.35e12)


def test_only_tensor_parallel_sizes_the_model_accepts_are_offered(app):
    open_page(app, model="gpt2", gpu="t4")
    assert app.button_group(key="ds_tp").options == ["1", "2", "4"]


def test_a_lower_mbu_slows_the_step_as_kvcore_says(app, models, gpus):
    open_page(app)
    app.slider(key="ds_mbu").set_value(0.7).run()
    assert metric(app, "decode_speed.metric_step") == format_seconds(
        step_s(models, gpus, context_tokens=8192, efficiency=0.7)
    )


def test_the_url_restores_every_control(app, models, gpus):
    open_page(app, ds_context="32768", ds_batch="4", ds_kv_dtype="fp8", ds_weights_dtype="int4", ds_mbu="0.8")
    assert (app.slider(key="ds_context").value, app.slider(key="ds_batch").value) == (32768, 4)
    assert app.button_group(key="ds_kv_dtype").value == "fp8"
    expected = step_s(
        models, gpus, context_tokens=32768, batch=4, kv_bytes_per_value=1.0, weight_bytes_per_param=0.5, efficiency=0.8
    )
    assert metric(app, "decode_speed.metric_step") == format_seconds(expected)


@pytest.mark.parametrize(("param", "value"), [("ds_context", "999999999"), ("ds_batch", "lots"), ("ds_tp", "3")])
def test_a_bad_url_value_gives_a_notice_and_the_default(app, param, value):
    open_page(app, **{param: value})
    assert not app.exception
    assert any(f"`{param}`" in info.value for info in app.info)
    assert app.slider(key="ds_context").value == 8192


@pytest.mark.parametrize(
    ("index", "model", "gpu", "context", "batch", "tp"),
    [(0, "llama-3.1-8b", "rtx-4090", 8192, 1, 1), (1, "llama-3.1-70b", "h100-sxm", 131072, 1, 8),
     (2, "llama-3.1-8b", "h100-sxm", 32768, 32, 1)],
)  # fmt: skip
def test_each_preset_sets_its_scenario(app, models, gpus, index, model, gpu, context, batch, tp):
    open_page(app)
    app.slider(key="ds_batch").set_value(3).run()
    app.button(key=f"ds_presets_{index}").click().run()
    assert not app.exception
    assert (app.session_state["model"], app.session_state["gpu"]) == (model, gpu)
    assert (app.slider(key="ds_context").value, app.slider(key="ds_batch").value) == (context, batch)
    assert app.button_group(key="ds_tp").value == tp
    expected = step_s(models, gpus, model_id=model, gpu_id=gpu, context_tokens=context, batch=batch, tp=tp)
    assert metric(app, "decode_speed.metric_step") == format_seconds(expected)


def test_bytes_read_are_shown_in_the_chosen_memory_unit(app, models):
    open_page(app)
    read = kvcore.decode_bytes_per_step(models["llama-3.1-8b"], context_tokens=8192)
    assert metric(app, "decode_speed.metric_read") == format_gib(float(read.total))


@pytest.mark.parametrize(("model", "gpu"), TRICKY_PAIRS)
def test_tricky_models_and_gpus_run_without_an_error(app, model, gpu):
    open_page(app, model=model, gpu=gpu)
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    app.button_group(key="ds_tp").set_value(app.button_group(key="ds_tp").options[-1]).run()
    assert not app.exception and not app.error


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_text_falls_back_to_its_raw_key(app, lang):
    open_page(app, lang)
    assert not [m.value for m in app.markdown if m.value.startswith("decode_speed.")]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_moe_batch_reads_the_experts_it_touches_as_kvcore_says(app, models, lang):
    open_page(app, lang, model="qwen3-30b-a3b", gpu="h100-sxm")
    app.slider(key="ds_batch").set_value(16).run()
    assert not app.exception and not app.error
    model = models["qwen3-30b-a3b"]
    touched = float(kvcore.experts_touched(num_experts=128, experts_per_token=8, tokens=16))
    expected = f"{touched:.1f}".replace(".", ",") if lang == "pt" else f"{touched:.1f}"
    text = " ".join(block.value for block in app.markdown)
    assert f"**{expected}**" in text
    read = float(kvcore.decode_weights_read_bytes(model, batch=16))
    assert model.active_params * 2 < read < model.total_params * 2
    assert translate(lang, "decode_speed.experts_title") in [h.value for h in app.subheader]


def test_a_dense_model_has_no_experts_section(app):
    open_page(app)
    assert translate("en", "decode_speed.experts_title") not in [h.value for h in app.subheader]
