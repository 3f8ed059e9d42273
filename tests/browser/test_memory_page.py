"""The memory lesson in a real browser: it loads, reacts to the keyboard, and its URL restores it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

import kvcore
from i18n import LANGUAGES, localize_number, translate
from kvcore.units import format_gib

from .conftest import IDLE, patient

pytestmark = pytest.mark.browser

LOAD_TIMEOUT_MS = 120_000


def open_app(page: Page, url: str) -> None:
    """Load `url` and wait until the script is idle and the chart is drawn."""
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=LOAD_TIMEOUT_MS)
    expect(page.locator("[data-testid=stMain] .js-plotly-plot").first).to_be_visible(timeout=LOAD_TIMEOUT_MS)


def metric(page: Page, lang: str, key: str):
    """The value of the metric labelled translate(lang, key)."""
    return page.get_by_test_id("stMetric").filter(has_text=translate(lang, key)).get_by_test_id("stMetricValue")


def cache_text(model_id: str, context_tokens: int, lang: str = "en") -> str:
    """What the KV cache metric must show, straight from kvcore (one user, BF16 cache), in `lang`'s numbers."""
    model = kvcore.load_models()[model_id]
    text = format_gib(float(kvcore.kv_cache_bytes(model, context_tokens=context_tokens, bytes_per_value=2.0)))
    return localize_number(text, lang)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_memory_page_loads_without_an_exception_box(page: Page, app_url, lang):
    open_app(page, f"{app_url}/?lang={lang}")
    expect(page.get_by_role("heading", name=translate(lang, "memory.title"))).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(metric(page, lang, "memory.metric_cache")).to_have_text(cache_text("llama-3.1-8b", 8192, lang))


def test_arrow_right_on_the_context_slider_changes_the_kv_metric_and_the_url(page: Page, app_url):
    open_app(page, f"{app_url}/?lang=en")
    slider = page.get_by_role("slider", name=translate("en", "memory.context"))
    slider.focus()
    slider.press("ArrowRight")
    expect(metric(page, "en", "memory.metric_cache")).to_have_text(cache_text("llama-3.1-8b", 9216))
    expect(page).to_have_url(re.compile(r"[?&]context=9216\b"))


def test_the_copied_url_opens_the_same_numbers_in_a_new_page(page: Page, app_url):
    open_app(page, f"{app_url}/?lang=en&model=qwen2.5-7b")
    slider = page.get_by_role("slider", name=translate("en", "memory.context"))
    slider.focus()
    slider.press("End")
    expected = cache_text("qwen2.5-7b", kvcore.load_models()["qwen2.5-7b"].max_position_embeddings)
    expect(metric(page, "en", "memory.metric_cache")).to_have_text(expected)
    expect(page).to_have_url(re.compile(r"[?&]context=131072\b"))

    copy = page.context.new_page()
    open_app(copy, page.url)
    expect(metric(copy, "en", "memory.metric_cache")).to_have_text(expected)
    expect(copy.get_by_role("combobox", name=translate("en", "sidebar.model"))).to_have_value("Qwen2.5 7B")


def test_a_deep_link_works_as_the_very_first_request_after_start(page: Page, fresh_app_url):
    open_app(page, f"{fresh_app_url}/?lang=pt&model=qwen2.5-7b&gpu=h100-sxm&context=16384")
    expect(metric(page, "pt", "memory.metric_cache")).to_have_text(cache_text("qwen2.5-7b", 16384, "pt"))
    expect(page.get_by_role("combobox", name=translate("pt", "sidebar.model"))).to_have_value("Qwen2.5 7B")
    expect(page.get_by_role("dialog")).to_have_count(0)
    # The page keeps working after the first rerun (no widget state lost).
    slider = page.get_by_role("slider", name=translate("pt", "memory.context"))
    slider.focus()
    slider.press("ArrowRight")
    expect(metric(page, "pt", "memory.metric_cache")).to_have_text(cache_text("qwen2.5-7b", 17408, "pt"))
    expect(page).to_have_url(re.compile(r"model=qwen2\.5-7b"))


def test_a_portuguese_browser_gets_portuguese_without_asking(browser, app_url):
    context = patient(browser.new_context(locale="pt-BR"))
    try:
        page = context.new_page()
        open_app(page, app_url)
        expect(page.get_by_role("heading", name=translate("pt", "memory.title"))).to_be_visible()
    finally:
        context.close()
