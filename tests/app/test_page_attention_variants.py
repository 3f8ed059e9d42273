"""The GQA/MQA/MLA lesson: its controls reach kvcore, its links restore it, its presets set it."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.formatting import size, times
from i18n import LANGUAGES, NUMBER_SEPARATORS, translate
from kvcore.units import format_bytes
from kvcore.variants import attention_variants, cache_saving_fraction
from tests.app.figures import chart_figures
from tests.app.helpers import metric_value, page_opener, plotly_array

PAGE = "lessons/attention_variants.py"


open_page = page_opener(PAGE)


def gqa_label(kv: int, lang: str = "en") -> str:
    name = translate(lang, "attention_variants.bar_gqa", kv=kv)
    return translate(lang, "attention_variants.metric_per_token", name=name)


def bar_values(app) -> np.ndarray:
    """The x values (cache in GiB) of the page's first chart, the bars."""
    first = chart_figures(app)[0]
    return plotly_array(first["data"][0]["x"])


def expected_bars(model, *, context_tokens: int, gqa_kv_heads: int = 8, concurrency: int = 1) -> list[float]:
    shown = {**attention_variants(model, gqa_kv_heads=gqa_kv_heads), "model": model}
    return [
        float(kvcore.kv_cache_bytes(spec, context_tokens=context_tokens, concurrency=concurrency)) / kvcore.GiB
        for spec in shown.values()
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_runs_in_each_language(app, lang):
    open_page(app, lang)
    assert not app.exception and not app.error
    assert app.title[0].value == translate(lang, "attention_variants.title")


def test_the_first_chart_shows_kvcores_cache_for_each_variant(app, models):
    open_page(app)
    expected = expected_bars(models["llama-3.1-8b"], context_tokens=8192)
    np.testing.assert_allclose(bar_values(app), expected, rtol=1e-12)


def test_moving_the_context_slider_redraws_the_bars_with_kvcores_cache(app, models):
    open_page(app)
    app.slider(key="av_context").set_value(32768).run()
    expected = expected_bars(models["llama-3.1-8b"], context_tokens=32768)
    np.testing.assert_allclose(bar_values(app), expected, rtol=1e-12)


def test_moving_the_users_slider_multiplies_the_bars(app, models):
    open_page(app)
    app.slider(key="av_users").set_value(4).run()
    expected = expected_bars(models["llama-3.1-8b"], context_tokens=8192, concurrency=4)
    np.testing.assert_allclose(bar_values(app), expected, rtol=1e-12)


def test_moving_the_gqa_heads_changes_the_gqa_metric_and_bar_as_kvcore_says(app, models):
    open_page(app)
    app.select_slider(key="av_gqa_heads").set_value(4).run()
    gqa = attention_variants(models["llama-3.1-8b"], gqa_kv_heads=4)["GQA"]
    assert metric_value(app, gqa_label(4)) == format_bytes(kvcore.kv_bytes_per_token(gqa))
    expected = expected_bars(models["llama-3.1-8b"], context_tokens=8192, gqa_kv_heads=4)
    np.testing.assert_allclose(bar_values(app), expected, rtol=1e-12)


def test_a_larger_mla_latent_shows_kvcores_larger_cache(app, models):
    open_page(app)
    app.slider(key="av_rank").set_value(1024).run()
    mla = attention_variants(models["llama-3.1-8b"], mla_rank=1024)["MLA"]
    name = translate("en", "attention_variants.bar_mla", rank=1024, rope=64)
    label = translate("en", "attention_variants.metric_per_token", name=name)
    assert metric_value(app, label) == format_bytes(kvcore.kv_bytes_per_token(mla))


def test_an_fp8_cache_halves_the_metrics(app, models):
    open_page(app)
    app.button_group(key="av_dtype").set_value("fp8").run()
    gqa = attention_variants(models["llama-3.1-8b"], gqa_kv_heads=8)["GQA"]
    assert metric_value(app, gqa_label(8)) == format_bytes(kvcore.kv_bytes_per_token(gqa, bytes_per_value=1.0))


def test_the_gqa_metric_shows_kvcores_saving_against_mha(app, models):
    open_page(app)
    variants = attention_variants(models["llama-3.1-8b"], gqa_kv_heads=8)
    saving = cache_saving_fraction(
        kvcore.kv_bytes_per_token(variants["GQA"]), baseline_bytes_per_token=kvcore.kv_bytes_per_token(variants["MHA"])
    )
    [metric] = [metric for metric in app.metric if metric.label == gqa_label(8)]
    assert float(saving) == 0.75
    assert metric.proto.delta == translate("en", "attention_variants.metric_delta", saving="75%")


def test_the_seed_check_shows_the_exact_mqa_saving(app):
    open_page(app)
    assert any("**96.875%**" in block.value for block in app.markdown)


def test_the_seed_check_compares_deepseek_v3s_latent_with_its_mha_equivalent(app, models):
    open_page(app)
    deepseek = models["deepseek-v3"]
    latent = kvcore.kv_bytes_per_token(deepseek)
    [text] = [block.value for block in app.markdown if "5–10×" in block.value]
    assert f"**{format_bytes(latent)}**" in text
    assert format_bytes(kvcore.mha_equivalent_bytes_per_token(deepseek)) in text


def test_a_link_restores_every_control(app):
    open_page(app, av_context="32768", av_users="3", av_gqa_heads="4", av_rank="256", av_rope="32", av_dtype="fp8")
    assert app.slider(key="av_context").value == 32768
    assert app.slider(key="av_users").value == 3
    assert app.select_slider(key="av_gqa_heads").value == 4
    assert app.slider(key="av_rank").value == 256
    assert app.slider(key="av_rope").value == 32
    assert app.button_group(key="av_dtype").value == "fp8"


def test_gqa_heads_that_do_not_divide_the_query_heads_fall_back_with_a_notice(app):
    open_page(app, av_gqa_heads="5")
    assert not app.exception and not app.error
    assert app.select_slider(key="av_gqa_heads").value == 8
    assert any("`av_gqa_heads`" in info.value for info in app.info)


def test_a_context_beyond_the_model_falls_back_with_a_notice(app):
    open_page(app, model="gpt2", av_context="131072")
    assert not app.exception and not app.error
    assert app.slider(key="av_context").value == 1024
    assert any("`av_context`" in info.value for info in app.info)


PRESETS = [
    ("llama-3.1-8b", {"av_gqa_heads": 8, "av_context": 4096, "av_dtype": "fp16"}),
    ("llama-3.1-8b", {"av_gqa_heads": 8, "av_context": 131072, "av_dtype": "fp16"}),
    ("deepseek-v3", {"av_gqa_heads": 8, "av_context": 131072, "av_rank": 512, "av_rope": 64, "av_dtype": "bf16"}),
    ("falcon-7b", {"av_gqa_heads": 1, "av_context": 2048, "av_dtype": "bf16"}),
]


@pytest.mark.parametrize(("index", "preset"), list(enumerate(PRESETS)))
def test_each_preset_sets_its_model_and_controls(app, index, preset):
    model_id, values = preset
    open_page(app, model="gpt2")
    app.button(key=f"av_presets_{index}").click().run()
    assert not app.exception and not app.error
    assert app.session_state["model"] == model_id
    controls = {"av_gqa_heads": app.select_slider, "av_dtype": app.button_group}
    for key, value in values.items():
        assert controls.get(key, app.slider)(key=key).value == value


def test_the_seed_000_preset_shows_64_gib_for_mha_and_16_gib_for_gqa(app):
    open_page(app)
    app.button(key="av_presets_1").click().run()
    np.testing.assert_allclose(bar_values(app)[:2], [64.0, 16.0])


def test_falcons_prime_head_count_is_explained(app):
    open_page(app, model="falcon-7b")
    assert app.select_slider(key="av_gqa_heads").value == 1
    assert any(caption.value.startswith("71 query heads") for caption in app.caption)


# tests/app/test_lessons.py already runs every lesson with its TRICKY models and GPUs in English;
# these add the other MLA model, an AMD GPU, and Portuguese.
@pytest.mark.parametrize(("model", "gpu"), [("deepseek-v2-lite", "mi300x"), ("deepseek-v3", "h200")])
def test_tricky_models_and_gpus_run_without_an_error(app, model, gpu):
    open_page(app, "pt", model=model, gpu=gpu)
    assert not app.exception, [exception.value for exception in app.exception]
    assert not app.error, [error.value for error in app.error]
    assert len(chart_figures(app)) == 3


def test_weights_too_big_for_the_gpu_give_a_warning_not_an_error(app):
    open_page(app, model="llama-3.1-405b", gpu="rtx-4090")
    assert not app.error
    assert any("do not fit" in warning.value for warning in app.warning)


# ---------------------------------------------------------------- GQA's 8×, the one "free" factor (issue 15)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(
    ("model_id", "kind"),
    [("llama-3.1-8b", "gqa"), ("llama-3.1-70b", "gqa"), ("falcon-7b", "mqa"), ("gpt2", "mha"), ("deepseek-v3", "mla")],
)
def test_the_free_factor_is_the_sidebar_models_own_sharing_computed_by_kvcore(app, models, lang, model_id, kind):
    open_page(app, lang, model=model_id)
    assert not app.exception
    model = models[model_id]
    own = model if kind == "mla" else attention_variants(model, gqa_kv_heads=model.num_key_value_heads)["GQA"]
    mha = kvcore.mha_equivalent_bytes_per_token(model)
    seps = NUMBER_SEPARATORS[lang]
    text = "\n".join(block.value for block in app.markdown)
    # The text's claim, with the 70B cut it names (64 query heads over 8 KV heads: 8×).
    llama_70b = models["llama-3.1-70b"]
    cut = kvcore.mha_equivalent_bytes_per_token(llama_70b) / kvcore.kv_bytes_per_token(llama_70b)
    assert cut == 8
    claim = translate(
        lang, "attention_variants.free_factor_claim", cut_70b=times(cut, seps, decimals=1, trim_zeros=True)
    )
    assert claim in text
    expected = translate(
        lang,
        f"attention_variants.free_factor_{kind}",
        model=model.name,
        heads=model.num_attention_heads,
        kv_heads=model.num_key_value_heads,
        mha=size(mha, seps),
        own=size(kvcore.kv_bytes_per_token(own), seps),
        factor=times(mha / kvcore.kv_bytes_per_token(own), seps, decimals=1, trim_zeros=True),
    )
    assert expected in text
