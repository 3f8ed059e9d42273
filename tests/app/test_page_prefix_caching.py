"""The prefix-caching lesson: shared full blocks, prefill saved and the provider's price, all from kvcore.paging."""

from __future__ import annotations

import pytest

import kvcore
from charts.formatting import number
from i18n import LANGUAGES, localize_number, translate
from kvcore.paging import cached_prefix_tokens, prefix_memory, prompt_cache_cost
from kvcore.units import format_gib, format_tokens
from tests.app.helpers import metric, page_opener

PAGE = "lessons/prefix_caching.py"
TRICKY = ["gpt2", "deepseek-v3", "gemma-3-27b", "qwen3-next-80b-a3b"]
DEFAULTS = {"prefix": 2000, "suffix": 200, "requests": 100, "block": 16}
PRICE = {"input_usd_per_mtok": 3.0, "ttl_s": 300, "cache_write_multiplier": 1.0, "cache_read_multiplier": 0.1}


open_page = page_opener(PAGE)


def saved_memory(models, **knobs) -> str:
    k = DEFAULTS | knobs
    memory = prefix_memory(
        prefix_tokens=k["prefix"],
        suffix_tokens=k["suffix"],
        requests=k["requests"],
        block_size=k["block"],
        bytes_per_token=kvcore.kv_bytes_per_token(models["llama-3.1-8b"]),
    )
    return format_gib(float(memory.saved_bytes))


def usd(value: float) -> str:
    return f"{value:,.{2 if abs(value) >= 1 else 4}f} USD"


def test_the_default_page_is_seed_002(app, models):
    open_page(app)
    assert metric(app, "prefix_caching.metric_blocks") == "125"
    assert metric(app, "prefix_caching.metric_memory") == saved_memory(models)


def test_moving_the_prefix_slider_changes_the_shared_blocks_and_memory(app, models):
    open_page(app)
    app.slider(key="pc_prefix").set_value(1000).run()
    cached = cached_prefix_tokens(prefix_tokens=1000, suffix_tokens=200, block_size=16)
    assert metric(app, "prefix_caching.metric_blocks") == format_tokens(cached / 16)
    assert metric(app, "prefix_caching.metric_memory") == saved_memory(models, prefix=1000)


def test_the_costs_are_kvcores(app):
    open_page(app)
    cost = prompt_cache_cost(prefix_tokens=2000, suffix_tokens=200, requests=100, interval_s=10, **PRICE)
    assert metric(app, "prefix_caching.metric_cost_without") == usd(float(cost.cost_without_usd))
    assert metric(app, "prefix_caching.metric_cost_with") == usd(float(cost.cost_with_usd))


def test_a_prefix_shorter_than_one_block_shares_nothing(app):
    open_page(app)
    app.button(key="pc_presets_1").click().run()
    assert app.slider(key="pc_prefix").value == 12
    assert metric(app, "prefix_caching.metric_blocks") == "0"
    assert any(warning.value.startswith("**Nothing is shared.**") for warning in app.warning)


def test_requests_slower_than_the_ttl_write_every_time(app):
    open_page(app)
    app.button(key="pc_presets_2").click().run()
    assert app.slider(key="pc_interval").value == 600
    cost = prompt_cache_cost(prefix_tokens=2000, suffix_tokens=200, requests=100, interval_s=600, **PRICE)
    assert float(cost.cache_writes) == 100
    assert metric(app, "prefix_caching.metric_cost_with") == usd(float(cost.cost_with_usd))


def test_the_seed_preset_brings_back_seed_002(app):
    open_page(app, pc_prefix="500", pc_block="64")
    app.button(key="pc_presets_0").click().run()
    assert app.slider(key="pc_prefix").value == 2000
    assert app.select_slider(key="pc_block").value == 16


def test_a_link_restores_every_setting(app, models):
    open_page(app, pc_prefix="4000", pc_suffix="50", pc_requests="10", pc_block="64", pc_read="0.25")
    assert app.slider(key="pc_read").value == 0.25
    assert metric(app, "prefix_caching.metric_memory") == saved_memory(
        models, prefix=4000, suffix=50, requests=10, block=64
    )


def test_a_bad_value_in_the_link_gives_a_notice_and_the_default(app):
    open_page(app, pc_prefix="-5")
    assert not app.exception
    assert app.slider(key="pc_prefix").value == 2000
    assert any("`pc_prefix`" in info.value for info in app.info)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("model", TRICKY)
def test_the_page_takes_any_model_in_both_languages(app, lang, model):
    open_page(app, lang=lang, model=model, gpu="rtx-4090")
    assert not app.exception, [exception.value for exception in app.exception]
    assert not app.error
    assert len(app.get("plotly_chart")) == 2


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_prefix_too_short_for_the_provider_saves_nothing_and_says_why(app, lang):
    thousands = "1.024" if lang == "pt" else "1,024"
    said = translate(lang, "prefix_caching.cost_too_short", prefix="12", minimum=thousands)
    open_page(app, lang=lang, pc_prefix="12")
    assert not app.exception
    assert said in [block.value for block in app.markdown]
    cost = prompt_cache_cost(prefix_tokens=12, suffix_tokens=200, requests=100, interval_s=10, **PRICE)
    assert float(cost.saved_usd) > 0  # without the provider's minimum, a 12-token prefix would "save" money
    short = prompt_cache_cost(
        prefix_tokens=12, suffix_tokens=200, requests=100, interval_s=10, min_cacheable_tokens=1024, **PRICE
    )
    assert float(short.saved_usd) == 0


def test_without_a_minimum_the_same_short_prefix_is_cached(app):
    # 0 stands for a server of one's own: vLLM caches any full block.
    open_page(app, pc_prefix="12", pc_min_cacheable="0")
    assert app.select_slider(key="pc_min_cacheable").value == 0
    said = translate("en", "prefix_caching.cost_too_short", prefix="12", minimum="1,024")
    assert said not in [block.value for block in app.markdown]


# ---------------------------------------------------------------- when prompt caching is worth it (issue 15)


def usd_text(value: float, lang: str) -> str:
    """A price as the page writes it: four decimals below one dollar, two above."""
    return localize_number(number(value, decimals=2 if abs(value) >= 1 else 4) + " USD", lang)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_when_to_use_prompt_caching_shows_the_one_off_price_and_kvcores_break_even(app, lang):
    open_page(app, lang)
    app.slider(key="pc_write").set_value(1.25).run()  # Anthropic's 5-minute cache write
    assert not app.exception
    assert translate(lang, "prefix_caching.when_title") in [header.value for header in app.subheader]
    text = "\n".join(block.value for block in app.markdown)
    assert translate(lang, "prefix_caching.when_text") in text  # chatbots, RAG, agents; one-off prompts left out
    pricing = {**PRICE, "cache_write_multiplier": 1.25, "interval_s": 10, "min_cacheable_tokens": 1024}
    one_off = prompt_cache_cost(prefix_tokens=2000, suffix_tokens=200, requests=1, **pricing)
    assert float(one_off.saved_usd) < 0  # a write nobody reads
    assert f"**{usd_text(-float(one_off.saved_usd), lang)}**" in text
    counts = list(range(1, 101))
    saved = prompt_cache_cost(prefix_tokens=2000, suffix_tokens=200, requests=counts, **pricing).saved_usd
    first = next(n for n, value in zip(counts, saved, strict=True) if value > 0)
    assert first == 2  # 1.25 + 0.1 < 2: the second request already pays the write back
    everyone = prompt_cache_cost(prefix_tokens=2000, suffix_tokens=200, requests=100, **pricing)
    expected = translate(
        lang,
        "prefix_caching.when_pays",
        n=first,
        interval=10,
        ttl=300,
        saved=usd_text(float(everyone.saved_usd), lang),
        requests=localize_number(format_tokens(100), lang),
    )
    assert expected in text


def test_requests_slower_than_the_ttl_never_pay_the_write_back(app):
    open_page(app)
    app.slider(key="pc_write").set_value(1.25).run()
    app.slider(key="pc_interval").set_value(600).run()
    assert translate("en", "prefix_caching.when_never", interval=600, ttl=300, top=100) in [
        block.value for block in app.markdown
    ]


def test_a_prefix_below_the_providers_minimum_has_nothing_to_decide(app):
    open_page(app)
    app.slider(key="pc_prefix").set_value(500).run()
    expected = translate("en", "prefix_caching.when_short", prefix="500", minimum="1,024")
    assert expected in [block.value for block in app.markdown]
