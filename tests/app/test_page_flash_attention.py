"""The FlashAttention lesson: its sliders, URL, presets and metrics are wired to kvcore."""

from __future__ import annotations

import pytest

import kvcore
from i18n import LANGUAGES, translate
from kvcore.attention import hbm_traffic_saving, prefill_attention_memory
from kvcore.units import format_bytes, format_quantity
from tests.app.helpers import TRICKY_PAIRS, first_figure, page_opener
from tests.app.helpers import metric as metric_value

PAGE = "lessons/flash_attention.py"


open_page = page_opener(PAGE)


def test_moving_the_length_slider_shows_kvcores_scores_and_unchanged_cache(app, models):
    open_page(app)
    app.slider(key="fa_tokens").set_value(16384).run()
    model = models["llama-3.1-8b"]
    standard = prefill_attention_memory(model, tokens=16384, flash=False)
    flash = prefill_attention_memory(model, tokens=16384, flash=True)
    assert metric_value(app, "flash_attention.metric_scores") == format_bytes(float(standard.temporary_bytes))
    assert metric_value(app, "flash_attention.metric_stats") == format_bytes(float(flash.temporary_bytes))
    assert metric_value(app, "flash_attention.metric_kv") == format_bytes(float(standard.kv_cache_bytes))
    assert metric_value(app, "flash_attention.metric_traffic") == (
        f"{format_quantity(float(hbm_traffic_saving(16384, head_dim=128)))}×"
    )


def test_moving_the_length_slider_moves_the_main_charts_marker(app):
    open_page(app)
    before = first_figure(app)["layout"]["shapes"][0]["x0"]
    app.slider(key="fa_tokens").set_value(32768).run()
    assert first_figure(app)["layout"]["shapes"][0]["x0"] == 32768 != before


def test_more_heads_and_a_bigger_batch_grow_the_score_matrix_as_kvcore_says(app, models):
    open_page(app)
    app.slider(key="fa_heads").set_value(64).run()
    app.slider(key="fa_batch").set_value(4).run()
    expected = prefill_attention_memory(models["llama-3.1-8b"], tokens=8192, flash=False, heads=64, batch=4)
    assert metric_value(app, "flash_attention.metric_scores") == format_bytes(float(expected.temporary_bytes))


def test_a_url_restores_every_control(app, models):
    open_page(app, fa_tokens="4096", fa_heads="8", fa_head_dim="64", fa_batch="2", fa_dtype="fp32")
    assert app.slider(key="fa_tokens").value == 4096
    assert app.slider(key="fa_heads").value == 8
    assert app.select_slider(key="fa_head_dim").value == 64
    assert app.slider(key="fa_batch").value == 2
    expected = prefill_attention_memory(
        models["llama-3.1-8b"], tokens=4096, flash=False, heads=8, batch=2, bytes_per_value=4.0
    )
    assert metric_value(app, "flash_attention.metric_scores") == format_bytes(float(expected.temporary_bytes))


@pytest.mark.parametrize(
    ("key", "value"), [("fa_tokens", "5"), ("fa_heads", "x"), ("fa_head_dim", "100"), ("fa_dtype", "fp64")]
)
def test_a_bad_url_value_falls_back_with_a_notice(app, key, value):
    open_page(app, **{key: value})
    assert not app.exception
    assert any(f"`{key}`" in info.value for info in app.info)


def test_the_128k_preset_warns_that_the_matrix_exceeds_the_gpu(app):
    open_page(app)
    app.button(key="fa_presets_1").click().run()
    assert app.slider(key="fa_tokens").value == 131072
    assert app.selectbox(key="gpu").value == "h100-sxm"
    assert any("larger than the whole memory" in warning.value for warning in app.warning)


@pytest.mark.parametrize(
    ("index", "tokens", "heads"),
    [(0, 8192, 32), (1, 131072, 32), (2, 4096, 1)],
)
def test_each_preset_sets_its_values_even_from_another_model(app, index, tokens, heads):
    open_page(app, model="gpt2", gpu="t4")
    app.button(key=f"fa_presets_{index}").click().run()
    assert app.selectbox(key="model").value == "llama-3.1-8b"
    assert app.slider(key="fa_tokens").value == tokens
    assert app.slider(key="fa_heads").value == heads
    assert app.select_slider(key="fa_head_dim").value == 128
    assert not app.exception and not app.error


def test_a_new_model_brings_its_own_heads_and_head_dim(app, models):
    open_page(app)
    app.slider(key="fa_heads").set_value(3).run()
    app.selectbox(key="model").set_value("deepseek-v3").run()
    assert app.slider(key="fa_heads").value == models["deepseek-v3"].num_attention_heads
    assert app.select_slider(key="fa_head_dim").value == models["deepseek-v3"].head_dim


def test_the_sram_preset_shows_one_head_filling_the_h100_sram(app, gpus):
    open_page(app)
    app.button(key="fa_presets_2").click().run()
    # 4096² · 1 head · 2 bytes = 32 MiB of scores; the H100's SMs hold 33 MiB.
    assert metric_value(app, "flash_attention.metric_scores") == "32 MiB"
    assert format_bytes(gpus["h100-sxm"].sram_bytes) == "33 MiB"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("model", "gpu"), TRICKY_PAIRS)
def test_tricky_models_and_gpus_run_without_an_error(app, lang, model, gpu):
    open_page(app, lang=lang, model=model, gpu=gpu)
    assert not app.exception, [exception.value for exception in app.exception]
    assert not app.error, [error.value for error in app.error]
    assert len(app.get("plotly_chart")) == 3


def test_the_seed_table_names_the_h100_and_the_papers_a100(app):
    open_page(app)
    [table] = app.dataframe
    names = list(table.value[translate("en", "flash_attention.col_gpu")])
    assert names == [kvcore.load_gpus()[gpu_id].name for gpu_id in ("rtx-4090", "h100-sxm", "a100-40gb")]
