"""What fits on my machine: Ollama and llama.cpp on a consumer GPU or a Mac (kvcore.ollama, kvcore.llamacpp)."""

from __future__ import annotations

import pytest

import kvcore
from charts.formatting import memory
from i18n import LANGUAGES, translate
from kvcore.units import GiB, format_tokens
from tests.app.helpers import TRICKY_PAIRS, metric, page_opener

PAGE = "lessons/local_llm.py"
open_page = page_opener(PAGE)
#: The Ollama the page models: the newest release whose scheduler still estimates (0.30.0+ runs llama-server).
OLLAMA = next(r for r in reversed(kvcore.OLLAMA_RELEASES) if not kvcore.ollama_release(r).llama_server)
SEPARATORS = {"en": ".,", "pt": ",."}


def mem(num_bytes: float, lang: str = "en") -> str:
    return memory(num_bytes, SEPARATORS[lang], unit="GiB", decimals=2)


def ollama(model, gpu, *, context=8192, slots=1, cache="f16", gguf="Q4_K_M"):
    """What the page computes for Ollama: its start-up, its requirement, its longest context."""
    weights = kvcore.gguf_weights_bytes(model, gguf)
    startup = kvcore.ollama_startup(
        model,
        gpu=gpu,
        num_ctx=context,
        num_parallel=slots,
        kv_cache_type=cache,
        flash_attention=True,
        version=OLLAMA,
        weights_bytes=weights,
    )
    settings = {"num_parallel": slots, "kv_cache_type": cache, "weights_bytes": weights, "release": OLLAMA}
    needed = float(
        kvcore.ollama_required_bytes(
            model,
            num_ctx=context,
            flash_attention=startup.flash_attention,
            library=kvcore.ollama_library(gpu),
            **settings,
        )
    )
    longest = kvcore.ollama_max_context(
        model,
        gpu=gpu,
        flash_attention=startup.flash_attention,
        step_tokens=256,
        max_tokens=model.max_position_embeddings,
        **settings,
    )
    return startup, needed, longest


def llamacpp(model, gpu, *, context=8192, slots=1, cache="f16", gguf="Q4_K_M"):
    """What the page computes for llama.cpp: -c context·slots -np slots -ctk/-ctv cache."""
    weights = kvcore.gguf_weights_bytes(model, gguf)
    caches = {"parallel": slots, "cache_type_k": cache, "cache_type_v": cache, "weights_bytes": weights}
    startup = kvcore.llamacpp_startup(model, ctx_size=context * slots, gpu=gpu, **caches)
    needed = float(kvcore.llamacpp_required_bytes(model, ctx_size=context * slots, **caches))
    longest = kvcore.llamacpp_max_context(model, gpu=gpu, max_tokens=model.max_position_embeddings, **caches)
    return startup, needed, longest


def test_the_page_models_the_newest_ollama_that_estimates_before_loading():
    assert kvcore.ollama_release(OLLAMA).at_least("0.15.5") and kvcore.ollama_release(OLLAMA).llama_server is False


def test_the_default_page_shows_ollamas_numbers_from_kvcore(app, models, gpus):
    model, gpu = models["llama-3.1-8b"], gpus["rtx-3060-12gb"]
    open_page(app, model=model.id, gpu=gpu.id)
    startup, needed, longest = ollama(model, gpu)
    assert metric(app, "local_llm.metric_kv") == mem(startup.kv_pool_bytes)
    assert metric(app, "local_llm.metric_weights", gguf="Q4_K_M") == mem(kvcore.gguf_weights_bytes(model, "Q4_K_M"))
    assert metric(app, "local_llm.metric_needed") == mem(needed)
    assert metric(app, "local_llm.metric_memory") == mem(gpu.reported_memory_bytes)
    assert metric(app, "local_llm.metric_longest") == format_tokens(longest)
    assert metric(app, "local_llm.metric_fits") == "yes"
    assert app.code[0].value == "\n".join(startup.lines())
    assert not app.exception


@pytest.mark.parametrize("cache", kvcore.OLLAMA_CACHE_TYPES)
@pytest.mark.parametrize("engine", ["Ollama", "llama.cpp"])
def test_each_engine_and_cache_type_shows_its_own_start_up(app, models, gpus, engine, cache):
    model, gpu = models["qwen2.5-7b"], gpus["rtx-4060-ti-16gb"]
    open_page(app, model=model.id, gpu=gpu.id, lo_engine=engine, lo_cache=cache, lo_context="16384", lo_slots="2")
    compute = ollama if engine == "Ollama" else llamacpp
    startup, needed, longest = compute(model, gpu, context=16384, slots=2, cache=cache)
    kv = startup.kv_pool_bytes if engine == "Ollama" else startup.kv_bytes + startup.recurrent_bytes
    assert metric(app, "local_llm.metric_kv") == mem(kv)
    assert metric(app, "local_llm.metric_needed") == mem(needed)
    assert metric(app, "local_llm.metric_longest") == format_tokens(longest)
    assert app.code[0].value == "\n".join(startup.lines())
    assert f"({cache})" in app.code[0].value  # the cache type reaches the printed K and V
    assert not app.exception


def test_a_q8_0_cache_lets_a_longer_context_fit_than_f16(app, models, gpus):
    model, gpu = models["llama-3.1-8b"], gpus["rtx-3060-12gb"]
    open_page(app, model=model.id, gpu=gpu.id, lo_engine="llama.cpp", lo_cache="q8_0")
    _, _, q8 = llamacpp(model, gpu, cache="q8_0")
    _, _, f16 = llamacpp(model, gpu, cache="f16")
    assert metric(app, "local_llm.metric_longest") == format_tokens(q8)
    assert q8 > f16 > 8192


@pytest.mark.parametrize("engine", ["Ollama", "llama.cpp"])
def test_an_apple_gpu_offers_metals_working_set_not_the_whole_memory(app, models, gpus, engine):
    model, mac = models["llama-3.1-8b"], gpus["m4-max-128gb"]
    open_page(app, model=model.id, gpu=mac.id, lo_engine=engine)
    assert metric(app, "local_llm.metric_memory") == mem(96 * GiB)  # 3/4 of 128 GiB
    [apple] = [text.value for text in app.markdown if text.value.startswith("**On a Mac**")]
    assert mem(96 * GiB) in apple and mem(128 * GiB) in apple


def test_weights_under_the_macs_memory_but_over_its_working_set_do_not_fit(app, models, gpus):
    # Llama 3.1 70B at Q6_K ≈ 53.9 GiB: less than the M4 Pro's 64 GiB, more than Metal's 48 GiB.
    model, mac = models["llama-3.1-70b"], gpus["m4-pro-64gb"]
    open_page(app, model=model.id, gpu=mac.id, lo_engine="llama.cpp", lo_gguf="Q6_K")
    assert metric(app, "local_llm.metric_fits") == "no"
    assert metric(app, "local_llm.metric_longest") == "none"
    expected = translate(
        "en",
        "local_llm.no_context",
        weights=mem(kvcore.gguf_weights_bytes(model, "Q6_K")),
        memory=mem(48 * GiB),
    )
    assert [warning.value for warning in app.warning] == [expected]


@pytest.mark.parametrize("engine", ["Ollama", "llama.cpp"])
def test_a_model_too_big_for_the_card_says_so_without_an_exception(app, models, gpus, engine):
    open_page(app, model="llama-3.1-70b", gpu="rtx-3060-12gb", lo_engine=engine)
    assert not app.exception
    assert metric(app, "local_llm.metric_fits") == "no"
    assert app.warning and app.warning[0].value.startswith("**No context fits**")


def test_a_context_beyond_the_longest_says_how_much_is_missing(app, models, gpus):
    model, gpu = models["llama-3.1-8b"], gpus["rtx-3060-12gb"]
    open_page(app, model=model.id, gpu=gpu.id, lo_engine="llama.cpp", lo_context="131072")
    _, needed, longest = llamacpp(model, gpu, context=131072)
    expected = translate(
        "en",
        "local_llm.too_long",
        context=format_tokens(131072),
        missing=mem(needed - kvcore.llamacpp_memory_bytes(gpu)),
        longest=format_tokens(longest),
    )
    assert [warning.value for warning in app.warning] == [expected]


def test_a_model_without_flash_attention_in_ollama_keeps_an_f16_cache_and_says_so(app, models, gpus):
    open_page(app, model="deepseek-v2-lite", gpu="rtx-4090", lo_cache="q8_0")
    assert not app.exception
    assert translate("en", "local_llm.cache_ignored", requested="q8_0", used="f16") in [c.value for c in app.caption]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_speaks_both_languages(app, lang):
    open_page(app, lang=lang, model="llama-3.1-8b", gpu="m3-max-128gb")
    assert not app.exception
    assert app.title[0].value == translate(lang, "local_llm.title")
    assert metric(app, "local_llm.metric_memory", lang=lang) == mem(96 * GiB, lang)
    assert app.get("plotly_chart")


@pytest.mark.parametrize(("model", "gpu"), TRICKY_PAIRS, ids=[model for model, _ in TRICKY_PAIRS])
@pytest.mark.parametrize("engine", ["Ollama", "llama.cpp"])
def test_any_model_and_gpu_shows_no_traceback(app, model, gpu, engine):
    open_page(app, model=model, gpu=gpu, lo_engine=engine, lo_cache="q4_0", lo_slots="4")
    assert not app.exception, [exception.value for exception in app.exception]
