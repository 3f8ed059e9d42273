"""The why-cache lesson: its slider, URL, presets and metrics are wired to kvcore."""

from __future__ import annotations

import pytest

import kvcore
from charts.formatting import size
from charts.style import chart_title
from i18n import LANGUAGES, NUMBER_SEPARATORS, localize_number, translate
from kvcore.attention import kv_projection_flops_with_cache, kv_projection_flops_without_cache, recompute_factor
from kvcore.units import format_bytes, format_flop, format_quantity, format_tokens
from tests.app.figures import chart_figures
from tests.app.helpers import TRICKY_PAIRS, first_figure, page_opener
from tests.app.helpers import metric as metric_value

PAGE = "lessons/why_cache.py"


open_page = page_opener(PAGE)


def test_moving_the_token_slider_shows_kvcores_work_and_cache(app, models):
    open_page(app)
    app.slider(key="wc_tokens").set_value(5000).run()
    model = models["llama-3.1-8b"]
    assert metric_value(app, "why_cache.metric_factor") == f"{format_quantity(float(recompute_factor(5000)))}×"
    assert metric_value(app, "why_cache.metric_without") == format_flop(
        float(kv_projection_flops_without_cache(model, generated_tokens=5000))
    )
    assert metric_value(app, "why_cache.metric_with") == format_flop(
        float(kv_projection_flops_with_cache(model, generated_tokens=5000))
    )
    assert metric_value(app, "why_cache.metric_cache") == format_bytes(
        float(kvcore.kv_cache_bytes(model, context_tokens=5000))
    )


def test_moving_the_token_slider_redraws_the_main_chart(app):
    open_page(app)
    before = first_figure(app)
    app.slider(key="wc_tokens").set_value(20).run()
    after = first_figure(app)
    assert before != after
    assert after["layout"]["title"]["text"] == chart_title(
        translate("en", "why_cache.work_title", model="Llama 3.1 8B"),
        translate("en", "why_cache.work_subtitle", tokens="20"),
    )


def test_a_url_restores_the_tokens_and_the_grid_steps(app):
    open_page(app, wc_tokens="300", wc_steps="12")
    assert app.slider(key="wc_tokens").value == 300
    assert app.slider(key="wc_steps").value == 12
    assert metric_value(app, "why_cache.metric_factor") == "150.5×"  # (300 + 1) / 2


@pytest.mark.parametrize(("key", "value"), [("wc_tokens", "0"), ("wc_tokens", "abc"), ("wc_steps", "99")])
def test_a_bad_url_value_falls_back_with_a_notice(app, key, value):
    open_page(app, **{key: value})
    assert not app.exception
    assert any(f"`{key}`" in info.value for info in app.info)


def test_gpt2_caps_the_slider_at_its_1024_token_context(app):
    open_page(app, model="gpt2")
    assert app.slider(key="wc_tokens").max == 1024
    assert app.slider(key="wc_tokens").value == 1000


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, {"wc_tokens": 8, "wc_steps": 8}),
        (1, {"wc_tokens": 1000}),
        (2, {"wc_tokens": 20000, "model": "llama-3.1-8b", "gpu": "rtx-3060-12gb"}),
    ],
)
def test_each_preset_sets_its_values(app, index, expected):
    open_page(app, model="gpt2")
    app.button(key=f"wc_presets_{index}").click().run()
    for key, value in expected.items():
        if key in ("model", "gpu"):
            assert app.selectbox(key=key).value == value
        else:
            assert app.slider(key=key).value == value
    assert not app.exception and not app.error


def test_the_pdf_preset_shows_the_cache_of_20_000_tokens(app, models):
    open_page(app)
    app.button(key="wc_presets_2").click().run()
    expected = kvcore.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=20000)
    assert metric_value(app, "why_cache.metric_cache") == format_bytes(float(expected))


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("model", "gpu"), TRICKY_PAIRS)
def test_tricky_models_and_gpus_run_without_an_error(app, lang, model, gpu):
    open_page(app, lang=lang, model=model, gpu=gpu)
    assert not app.exception, [exception.value for exception in app.exception]
    assert not app.error, [error.value for error in app.error]
    assert len(app.metric) == 4


def test_the_linear_attention_note_appears_only_for_models_with_linear_layers(app):
    open_page(app, model="qwen3-next-80b-a3b")
    note = translate("en", "why_cache.linear_note", layers=36, total=48)
    assert any(caption.value == note for caption in app.caption)


def test_portuguese_numbers_use_a_decimal_comma(app):
    open_page(app, lang="pt")
    assert metric_value(app, "why_cache.metric_factor", "pt") == "500,5×"


def test_the_log_axis_toggle_puts_both_work_charts_on_a_log_y_axis(app):
    open_page(app)
    assert {figure["layout"]["yaxis"].get("type") for figure in chart_figures(app)[:2]} <= {None, "linear", "-"}
    app.toggle(key="wc_log").set_value(True).run()
    work, step = chart_figures(app)[:2]
    assert work["layout"]["yaxis"]["type"] == step["layout"]["yaxis"]["type"] == "log"
    title = chart_title(translate("en", "why_cache.work_title", model="Llama 3.1 8B"))
    assert work["layout"]["title"]["text"].startswith(title + "<br>"), "the same title, its subtitle below"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_url_restores_the_log_axis_in_each_language(app, lang):
    open_page(app, lang=lang, wc_log="true")
    assert app.toggle(key="wc_log").value is True
    assert app.toggle(key="wc_log").label == translate(lang, "why_cache.log_axis")
    assert chart_figures(app)[0]["layout"]["yaxis"]["type"] == "log"


# ---------------------------------------------------------------- why Q is not cached (issue 15)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_why_q_is_not_cached_is_explained_with_kvcores_reads_and_bytes(app, models, lang):
    open_page(app, lang)
    app.slider(key="wc_tokens").set_value(5000).run()
    assert not app.exception
    assert translate(lang, "why_cache.no_q_title") in [header.value for header in app.subheader]
    model, seps = models["llama-3.1-8b"], NUMBER_SEPARATORS[lang]
    expected = translate(
        lang,
        "why_cache.no_q_text",
        tokens=localize_number(format_tokens(5000), lang),
        kv_reads=localize_number(format_tokens(float(kvcore.kv_reads_of_token(1, generated_tokens=5000))), lang),
        q_reads=localize_number(format_tokens(float(kvcore.query_reads_of_token(1, generated_tokens=5000))), lang),
        model=model.name,
        q_bytes=size(kvcore.query_bytes_per_token(model), seps),
        kv_bytes=size(kvcore.kv_bytes_per_token(model), seps),
    )
    assert expected in [block.value for block in app.markdown]
    assert kvcore.kv_reads_of_token(1, generated_tokens=5000) == 5000  # read by every step; the query by one
