"""The memory calculator's new parts: head dim, layers, overhead, presets, the heatmap, the seed's table."""

from __future__ import annotations

import numpy as np
import pytest

import kvcore
from charts.formatting import memory, size
from charts.memory_heatmap import heatmap_contexts, heatmap_users
from course import seeds
from course.scenarios import MEMORY_70B_GPUS
from i18n import NUMBER_SEPARATORS, catalogue, localize_number, translate
from kvcore.capacity import gpus_needed
from kvcore.memory import break_even_context_tokens, mha_cache_bytes, tensor_parallel_to_fit, total_memory_bytes
from kvcore.units import format_bytes, format_gb, format_gib, format_tokens
from tests.app.figures import chart_figures
from tests.app.helpers import metric as metric_value
from tests.app.helpers import page_opener, plotly_array

PAGE = "lessons/memory.py"


open_page = page_opener(None)  # the memory calculator is the default page


def markdown_with(app, key: str, lang: str = "en") -> str:
    """The one markdown block that starts like the catalogue text `key`."""
    start = catalogue(lang)[key].split("{")[0][:20]
    [text] = [block.value for block in app.markdown if block.value.startswith(start)]
    return text


def figures(app) -> dict[str, dict]:
    """Each Plotly figure of the page, keyed by its first trace's type."""
    return {spec["data"][0]["type"]: spec for spec in chart_figures(app)}


def test_a_smaller_head_dim_shrinks_the_cache_as_kvcore_says(app, models):
    open_page(app)
    app.select_slider(key="mem_head_dim").set_value(64).run()
    variant = kvcore.with_changes(models["llama-3.1-8b"], head_dim=64)
    assert metric_value(app, "memory.metric_per_token") == format_bytes(kvcore.kv_bytes_per_token(variant))
    expected = kvcore.kv_cache_bytes(variant, context_tokens=8192)
    assert metric_value(app, "memory.metric_cache") == format_gib(float(expected))


def test_more_layers_grow_the_cache_as_kvcore_says(app, models):
    open_page(app)
    app.slider(key="mem_layers").set_value(48).run()
    variant = kvcore.with_changes(models["llama-3.1-8b"], num_hidden_layers=48)
    assert metric_value(app, "memory.metric_cache") == format_gib(
        float(kvcore.kv_cache_bytes(variant, context_tokens=8192))
    )


def test_layers_of_a_patterned_model_repeat_its_cycle(app, models):
    # Gemma 3 27B: sliding*5,full. 12 layers = 10 sliding + 2 full (kvcore.layer_kinds).
    open_page(app, model="gemma-3-27b", gpu="h100-sxm")
    app.slider(key="mem_layers").set_value(12).run()
    variant = kvcore.with_changes(models["gemma-3-27b"], num_hidden_layers=12)
    assert (variant.count("sliding"), variant.count("full")) == (10, 2)
    assert metric_value(app, "memory.metric_cache") == format_gib(
        float(kvcore.kv_cache_bytes(variant, context_tokens=8192))
    )


def test_the_overhead_slider_moves_the_total_as_kvcore_says(app, models):
    open_page(app)
    app.slider(key="mem_overhead").set_value(3.5).run()
    total = total_memory_bytes(models["llama-3.1-8b"], context_tokens=8192, overhead_bytes=3.5 * kvcore.GiB)
    assert metric_value(app, "memory.metric_total", memory="24 GiB") == format_gib(float(total))


def test_the_head_dim_slider_is_disabled_for_latent_attention_models(app):
    open_page(app, model="deepseek-v2-lite")
    assert app.select_slider(key="mem_head_dim").disabled


def test_a_new_model_brings_its_own_head_dim_and_layers(app, models):
    open_page(app)
    app.slider(key="mem_layers").set_value(10).run()
    app.select_slider(key="mem_head_dim").set_value(256).run()
    app.selectbox(key="model").set_value("gpt2").run()
    assert app.slider(key="mem_layers").value == models["gpt2"].num_hidden_layers
    assert app.select_slider(key="mem_head_dim").value == models["gpt2"].head_dim


def test_a_url_restores_head_dim_layers_and_overhead(app, models):
    open_page(app, mem_head_dim="64", mem_layers="16", mem_overhead="2.5")
    assert app.select_slider(key="mem_head_dim").value == 64
    assert app.slider(key="mem_layers").value == 16
    assert app.slider(key="mem_overhead").value == 2.5
    variant = kvcore.with_changes(models["llama-3.1-8b"], head_dim=64, num_hidden_layers=16)
    total = total_memory_bytes(variant, context_tokens=8192, overhead_bytes=2.5 * kvcore.GiB)
    assert metric_value(app, "memory.metric_total", memory="24 GiB") == format_gib(float(total))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("mem_head_dim", "100"),
        ("mem_layers", "999"),
        ("mem_overhead", "-1"),
        ("mem_overhead", "x"),
    ],
)
def test_a_bad_new_value_in_the_url_falls_back_with_a_notice(app, models, key, value):
    open_page(app, **{key: value})
    assert not app.exception
    assert any(f"`{key}`" in info.value for info in app.info)
    total = total_memory_bytes(models["llama-3.1-8b"], context_tokens=8192, overhead_bytes=kvcore.GiB)
    assert metric_value(app, "memory.metric_total", memory="24 GiB") == format_gib(float(total))


PRESETS = [
    # seed 000: an 8B in INT8 on a 12 GB card, two users with 20k-token PDFs.
    ("llama-3.1-8b", "rtx-3060-12gb", 20480, 2, 8, "fp16", "int8", 1),
    # seed 000: 128k on an 8B with GQA (16 GiB) and without (MHA, 64 GiB).
    ("llama-3.1-8b", "h100-sxm", 131072, 1, 8, "fp16", "bf16", 1),
    ("llama-3.1-8b", "h100-sxm", 131072, 1, 32, "fp16", "bf16", 1),
    # seed 002: Llama 3 70B at 128k in FP16, split over 4 H100s.
    ("llama-3.1-70b", "h100-sxm", 131072, 1, 8, "fp16", "fp16", 4),
]


@pytest.mark.parametrize(("index", "preset"), list(enumerate(PRESETS)))
def test_each_preset_sets_the_models_gpu_and_controls_of_its_seed_scenario(app, models, index, preset):
    model_id, gpu_id, context, users, kv_heads, kv_dtype, weights_dtype, gpus = preset
    open_page(app, model="gpt2")
    app.button(key=f"mem_presets_{index}").click().run()
    assert not app.exception
    assert (app.selectbox(key="model").value, app.selectbox(key="gpu").value) == (model_id, gpu_id)
    assert (app.slider(key="context").value, app.slider(key="concurrency").value) == (context, users)
    assert app.select_slider(key="kv_heads").value == kv_heads
    assert (app.button_group(key="kv_dtype").value, app.button_group(key="weights_dtype").value) == (
        kv_dtype,
        weights_dtype,
    )
    assert app.slider(key="mem_layers").value == models[model_id].num_hidden_layers
    assert app.select_slider(key="mem_gpus").value == gpus
    variant = kvcore.with_changes(models[model_id], num_key_value_heads=kv_heads)
    cache = kvcore.kv_cache_bytes(variant, context_tokens=context, concurrency=users, tp=gpus)
    label = "memory.metric_cache_split" if gpus > 1 else "memory.metric_cache"
    assert metric_value(app, label) == format_gib(float(cache))


def test_the_pdf_preset_overflows_the_12_gb_card_as_in_seed_000(app, models):
    # 8.03 GB of INT8 weights + 1 GiB overhead + 2 × 2.5 GiB of cache > 12 GiB: the OOM the seed tells.
    open_page(app)
    app.button(key="mem_presets_0").click().run()
    assert metric_value(app, "memory.metric_cache") == "5 GiB"
    assert len(app.warning) == 1 and not app.success


def test_the_70b_preset_fits_on_the_fewest_h100s_a_split_holds_it_on(app, models, gpus):
    # 131.4 GiB of FP16 weights + 40 GiB of cache at 128k: 86.7 GiB per GPU on 2 H100s, 43.9 GiB on 4.
    open_page(app)
    app.button(key="mem_presets_3").click().run()
    model, h100 = models["llama-3.1-70b"], gpus["h100-sxm"]
    fewest = tensor_parallel_to_fit(
        model,
        sizes=kvcore.tensor_parallel_sizes(model, max_gpus=8),
        memory_bytes=h100.memory_bytes,
        context_tokens=131072,
        overhead_bytes=kvcore.GiB,
    )
    assert fewest == MEMORY_70B_GPUS == app.select_slider(key="mem_gpus").value == 4
    total = total_memory_bytes(model, context_tokens=131072, overhead_bytes=kvcore.GiB, tp=fewest)
    assert metric_value(app, "memory.metric_total", memory="80 GiB") == format_gib(float(total))
    assert not app.error and not app.warning and len(app.success) == 1


def test_one_h100_too_few_for_the_70b_points_to_the_split_that_holds_it(app):
    open_page(app)
    app.button(key="mem_presets_3").click().run()
    app.select_slider(key="mem_gpus").set_value(1).run()
    [error] = app.error
    assert "**4 GPUs**" in error.value


def test_on_two_h100s_the_70b_weights_fit_but_its_cache_does_not(app, models):
    open_page(app)
    app.button(key="mem_presets_3").click().run()
    app.select_slider(key="mem_gpus").set_value(2).run()
    model = models["llama-3.1-70b"]
    weights = kvcore.model_weights_bytes(model, tp=2)
    assert metric_value(app, "memory.metric_weights_split", gpus=2) == format_gib(weights)
    assert len(app.warning) == 1 and not app.error


@pytest.mark.parametrize(
    ("model", "kv_heads", "tp", "per_gpu_heads"),
    [("llama-3.1-8b", 8, 4, 2), ("llama-3.1-8b", 1, 4, 1), ("llama-3.1-8b", 2, 8, 1)],
)
def test_a_split_keeps_each_gpus_share_of_the_kv_heads_as_kvcore_says(app, models, model, kv_heads, tp, per_gpu_heads):
    # GQA heads are divided; a single (MQA) head, or fewer heads than GPUs, is copied whole to every GPU.
    open_page(app, model=model)
    app.select_slider(key="kv_heads").set_value(kv_heads).run()
    app.select_slider(key="mem_gpus").set_value(tp).run()
    assert not app.exception
    variant = kvcore.with_changes(models[model], num_key_value_heads=kv_heads)
    assert kvcore.kv_heads_per_gpu(kv_heads, tp) == per_gpu_heads
    cache = kvcore.kv_cache_bytes(variant, context_tokens=8192, tp=tp)
    assert metric_value(app, "memory.metric_cache_split") == format_gib(float(cache))
    total = total_memory_bytes(variant, context_tokens=8192, overhead_bytes=kvcore.GiB, tp=tp)
    assert metric_value(app, "memory.metric_total", memory="24 GiB") == format_gib(float(total))


def test_an_mla_model_split_over_gpus_keeps_its_whole_cache_on_each(app, models):
    open_page(app, model="deepseek-v2-lite", gpu="h100-sxm")
    before = metric_value(app, "memory.metric_cache")
    app.select_slider(key="mem_gpus").set_value(2).run()
    assert metric_value(app, "memory.metric_cache_split") == before
    assert any(translate("en", "memory.split_mla") in block.value for block in app.markdown)


def test_a_model_with_a_prime_head_count_stays_on_one_gpu(app):
    # Falcon 7B: 71 query heads and one KV head: no split but 1.
    open_page(app, model="falcon-7b", gpu="t4")
    assert app.select_slider(key="mem_gpus").disabled
    assert not app.exception and not app.error


def test_the_gpu_counts_are_the_splits_the_model_accepts(app):
    open_page(app, model="gpt2")
    assert app.select_slider(key="mem_gpus").options == ["1", "2", "4"]  # 12 heads: not 8


def test_the_charts_follow_the_gpu_count(app, models):
    open_page(app, model="llama-3.1-8b", gpu="h100-sxm")
    app.select_slider(key="mem_gpus").set_value(2).run()
    shown = figures(app)
    weights = plotly_array(shown["scatter"]["data"][0]["y"])
    assert weights[0] == pytest.approx(kvcore.model_weights_bytes(models["llama-3.1-8b"], tp=2) / kvcore.GiB)
    model = models["llama-3.1-8b"]
    [heatmap] = [trace for trace in shown["heatmap"]["data"] if trace["type"] == "heatmap"]
    contexts, users = heatmap_contexts(model), heatmap_users(256)
    expected = total_memory_bytes(
        model, context_tokens=contexts[None, :], concurrency=users[:, None], overhead_bytes=kvcore.GiB, tp=2
    )
    np.testing.assert_allclose(plotly_array(heatmap["z"]), expected / kvcore.GiB, rtol=1e-12)


def test_the_seed_table_shows_the_seeds_figure_beside_kvcores(app, models):
    open_page(app)
    table = app.dataframe[0].value
    says = table[translate("en", "memory.seed_col_says")].tolist()
    mha = table[translate("en", "memory.seed_col_mha")].tolist()
    real = table[translate("en", "memory.seed_col_real")].tolist()
    assert says == ["2 GB", "64 GB", "10 GB", "320 GB"]
    rows = [("llama-3.1-8b", 4096), ("llama-3.1-8b", 131072), ("llama-3.1-70b", 4096), ("llama-3.1-70b", 131072)]
    assert mha == [format_gib(float(mha_cache_bytes(models[m], context_tokens=s))) for m, s in rows]
    assert real == [format_gib(float(kvcore.kv_cache_bytes(models[m], context_tokens=s))) for m, s in rows]


def test_the_seed_story_recomputes_six_h100s_with_mha_and_fewer_with_gqa(app, models):
    open_page(app)
    story = markdown_with(app, "memory.seed_story")
    model = models["llama-3.1-70b"]
    mha = kvcore.with_changes(model, num_key_value_heads=64)
    for variant in (mha, model):
        total = total_memory_bytes(variant, context_tokens=131072)
        assert f"**{format_gib(float(total))}**" in story
        assert f"**{int(gpus_needed(total_bytes=total, memory_bytes=80 * kvcore.GiB))}**" in story


def test_the_break_even_follows_the_current_model_as_kvcore_says(app, models):
    open_page(app, concurrency="4")
    model = models["llama-3.1-8b"]
    one, four = break_even_context_tokens(model, weights_bytes=kvcore.model_weights_bytes(model), concurrency=[1, 4])
    assert f"**{format_tokens(one)} tokens**" in markdown_with(app, "memory.why60_yours")
    assert f"**{format_tokens(four)} tokens each**" in markdown_with(app, "memory.why60_yours_each")


def test_the_30_gb_example_doubles_its_weights(app, models):
    open_page(app)
    model = models["qwen2.5-32b"]
    weights = kvcore.model_weights_bytes(model, bytes_per_param=1.0)
    tokens = float(break_even_context_tokens(model, weights_bytes=weights))
    text = markdown_with(app, "memory.why60_example")
    assert f"**{format_gib(weights)}**" in text and f"**{format_tokens(tokens)} tokens**" in text


def test_a_sliding_window_model_needs_many_users_to_outweigh_its_weights(app):
    open_page(app, model="mistral-7b-v0.1")
    assert markdown_with(app, "memory.why60_yours_many")


def test_the_heatmap_marker_follows_the_sliders(app):
    open_page(app)
    app.slider(key="context").set_value(32768).run()
    app.slider(key="concurrency").set_value(6).run()
    [marker] = [trace for trace in figures(app)["heatmap"]["data"] if trace["type"] == "scatter"]
    assert (marker["x"], marker["y"]) == ([32768.0], [6.0])


def test_the_main_chart_comes_first_and_moves_with_the_context_slider(app):
    open_page(app)
    first = chart_figures(app)[0]
    app.slider(key="context").set_value(65536).run()
    moved = chart_figures(app)[0]
    assert first["data"][0]["type"] == "scatter"
    assert first["layout"]["shapes"] != moved["layout"]["shapes"]


def test_decimal_gb_shows_every_memory_figure_in_gb(app, models):
    open_page(app, units="GB")
    model = models["llama-3.1-8b"]
    assert metric_value(app, "memory.metric_weights") == format_gb(kvcore.model_weights_bytes(model))
    total = total_memory_bytes(model, context_tokens=8192, overhead_bytes=kvcore.GiB)
    gpu_memory = format_gb(24 * kvcore.GiB)
    assert metric_value(app, "memory.metric_total", memory=gpu_memory) == format_gb(float(total))
    spec = figures(app)["scatter"]
    assert "(GB)" in spec["layout"]["yaxis"]["title"]["text"]


def test_portuguese_shows_the_table_with_decimal_commas(app):
    open_page(app, lang="pt")
    real = app.dataframe[0].value[translate("pt", "memory.seed_col_real")].tolist()
    assert real[0] == "0,5 GiB"


@pytest.mark.parametrize(
    ("model", "gpu"),
    [("gpt2", "rtx-3060-12gb"), ("gemma-3-27b", "m4-max-128gb"), ("falcon-7b", "t4"), ("qwen3-next-80b-a3b", "b200")],
)
def test_tricky_models_that_fit_run_without_an_error(app, model, gpu):
    for lang in ("en", "pt"):
        open_page(app, lang=lang, model=model, gpu=gpu)
        assert not app.exception, [exception.value for exception in app.exception]
        assert not app.error, [error.value for error in app.error]


@pytest.mark.parametrize(("model", "gpu"), [("deepseek-v3", "h100-sxm"), ("llama-3.1-405b", "rtx-4090")])
def test_models_too_big_for_the_card_get_one_error_that_counts_gpus(app, models, gpus, model, gpu):
    open_page(app, model=model, gpu=gpu)
    assert not app.exception
    weights_format = kvcore.bytes_per_value(models[model].weights_dtype)  # DeepSeek-V3 ships FP8 weights
    total = total_memory_bytes(
        models[model], context_tokens=8192, weights_bytes_per_param=weights_format, overhead_bytes=kvcore.GiB
    )
    [error] = app.error
    fewest = tensor_parallel_to_fit(
        models[model],
        sizes=kvcore.tensor_parallel_sizes(models[model], max_gpus=8),
        memory_bytes=gpus[gpu].memory_bytes,
        context_tokens=8192,
        weights_bytes_per_param=weights_format,
        overhead_bytes=kvcore.GiB,
    )
    if fewest is not None:  # a split of one server holds it: the error names it
        assert f"**{fewest} GPUs**" in error.value
    else:  # none does: the bytes alone, over cards (a floor)
        assert f"**{int(gpus_needed(total_bytes=total, memory_bytes=gpus[gpu].memory_bytes))}**" in error.value


def test_the_heatmap_grid_is_kvcores_total_for_the_page_settings(app, models):
    open_page(app, mem_overhead="2", kv_dtype="fp8")
    [heatmap] = [trace for trace in figures(app)["heatmap"]["data"] if trace["type"] == "heatmap"]
    model = models["llama-3.1-8b"]
    contexts, users = heatmap_contexts(model), heatmap_users(256)
    expected = total_memory_bytes(
        model,
        context_tokens=contexts[None, :],
        concurrency=users[:, None],
        kv_bytes_per_value=1.0,
        overhead_bytes=2 * kvcore.GiB,
    )
    np.testing.assert_allclose(plotly_array(heatmap["z"]), expected / kvcore.GiB, rtol=1e-12)


# ---------------------------------------------------------------- seed 000's 8k / 32k / 128k table (issue 15)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_first_texts_table_is_shown_with_its_figures_beside_kvcores(app, models, lang):
    open_page(app, lang=lang)
    assert not app.exception
    assert translate(lang, "memory.table000_title") in [header.value for header in app.subheader]
    source = translate(lang, "memory.table000_col_source")
    [table] = [shown.value for shown in app.dataframe if source in shown.value.columns]
    seps = NUMBER_SEPARATORS[lang]
    contexts = [
        translate(lang, "memory.table000_col_context", tokens=localize_number(format_tokens(s), lang))
        for s in seeds.SEED_000_CONTEXT_TOKENS
    ]
    per_token = translate(lang, "memory.table000_col_per_token")
    computed = table[table[source] == translate(lang, "memory.table000_source_kvcore")]
    says = table[table[source] == translate(lang, "memory.table000_source_text")]
    assert len(computed) == len(says) == 3  # MHA, GQA, GQA with an FP8 cache
    for i, row in enumerate(seeds.SEED_000_TABLE):
        spec = kvcore.with_changes(models[seeds.SEED_000_MODEL_ID], num_key_value_heads=row.num_key_value_heads)
        b = kvcore.bytes_per_value(row.kv_dtype)
        assert computed[per_token].iloc[i] == size(kvcore.kv_bytes_per_token(spec, bytes_per_value=b), seps)
        assert says[per_token].iloc[i] == localize_number(format_bytes(row.per_token_bytes), lang)
        for column, s, text_bytes in zip(contexts, seeds.SEED_000_CONTEXT_TOKENS, row.cache_bytes, strict=True):
            exact = float(kvcore.sequence_kv_bytes(spec, context_tokens=s, bytes_per_value=b))
            assert computed[column].iloc[i] == memory(exact, seps)
            assert says[column].iloc[i] == localize_number(format_gib(text_bytes), lang)
            assert exact == text_bytes  # the text is exact here: binary units, binary thousands
    base = models[seeds.SEED_000_MODEL_ID]
    mha, gqa = (kvcore.with_changes(base, num_key_value_heads=n) for n in (32, 8))
    expected = translate(
        lang,
        "memory.table000_same",
        mha_factor=f"{kvcore.kv_bytes_per_token(mha) / kvcore.kv_bytes_per_token(gqa):g}",  # 4
        fp8_factor=f"{kvcore.kv_bytes_per_token(gqa) / kvcore.kv_bytes_per_token(gqa, bytes_per_value=1.0):g}",  # 2
        mha_kv=32,
        gqa_kv=8,
    )
    assert expected in [block.value for block in app.markdown]
