"""The sidebar's "Type values" (issue 15): every lesson slider becomes a number box with the same key.

Typed values reach kvcore (off the slider's steps too), a value outside the bounds is refused
(Streamlit's number box: the default stands), the switch keeps every value when it flips, and a
link made while typing reopens the same values, typing or not, in either language.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import kvcore
from charts.style import CURRENT
from i18n import LANGUAGES, localize_number, translate
from kvcore import timing
from kvcore.memory import total_memory_bytes
from kvcore.units import format_bytes, format_gib, format_seconds, format_tokens
from tests.app.conftest import ROOT, TIMEOUT_S
from tests.app.figures import chart_figures
from tests.app.helpers import metric, open_page
from tests.app.test_page_prefill_decode import rates
from tests.app.test_page_sizing import expected_steps
from tests.app.test_url_roundtrip import browser_link, fresh, link_notices, moved, other, url_widgets, values
from ui import lesson

LESSONS = sorted(path.stem for path in (ROOT / "lessons").glob("*.py"))
TYPING = {lesson.TYPING_KEY: "true"}
#: Pages whose links are made while typing and reopened: the memory calculator, percentage and flag-valued
#: shares (sizing's utilization, prefill's MFU/MBU, the prefix cache's prices, vLLM's gpu_memory_utilization),
#: a slider with its own printf format (preemption's "%d %%") and a page of integer sliders.
ROUND_TRIP_PAGES = [
    "memory",
    "sizing",
    "prefill_decode",
    "prefix_caching",
    "vllm_pool",
    "preemption",
    "paged_attention",
]


def typing_app(page: str | None = None, *, lang: str = "en", **params: str) -> AppTest:
    """A session on `page` (a stem; None: the memory calculator) with "Type values" on in its link."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S)
    return open_page(app, None if page is None else f"lessons/{page}.py", lang=lang, **TYPING, **params)


@pytest.mark.parametrize("stem", LESSONS)
def test_with_typing_on_every_lesson_draws_number_boxes_and_no_slider(stem):
    app = typing_app(stem, lang=LANGUAGES[LESSONS.index(stem) % len(LANGUAGES)])
    assert not app.exception, [exception.value for exception in app.exception]
    assert [slider.key for slider in app.main.slider] == []
    for box in app.main.number_input:
        assert box.min is not None and box.max is not None and box.min <= box.value <= box.max, box.key


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_switch_is_in_the_sidebar_in_both_languages(lang):
    app = open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S), lang=lang)
    switch = app.sidebar.toggle(key=lesson.TYPING_KEY)
    assert switch.value is False and switch.label == translate(lang, "sidebar.typing")
    assert app.main.slider(key="context").value == 8192


def test_a_typed_context_off_the_sliders_steps_reaches_kvcore(models):
    app = typing_app()
    app.number_input(key="context").set_value(20000).run()
    app.number_input(key="concurrency").set_value(3).run()
    model = models["llama-3.1-8b"]
    cache = kvcore.kv_cache_bytes(model, context_tokens=20000, concurrency=3)
    assert metric(app, "memory.metric_cache") == format_gib(float(cache))
    total = total_memory_bytes(model, context_tokens=20000, concurrency=3, overhead_bytes=kvcore.GiB)
    assert metric(app, "memory.metric_total", memory="24 GiB") == format_gib(float(total))
    assert metric(app, "memory.metric_per_token") == format_bytes(kvcore.kv_bytes_per_token(model))


def test_the_live_chart_is_drawn_at_the_typed_context(models):
    # Off the slider's grid the chart has no precomputed patch: the server's figure is the one shown.
    app = typing_app()
    app.number_input(key="context").set_value(20000).run()
    [chart] = [figure for figure in chart_figures(app) if figure["data"][0]["type"] == "scatter"][:1]
    [line] = [shape for shape in chart["layout"]["shapes"] if shape.get("name") == CURRENT]
    assert line["x0"] == 20000


def test_a_typed_share_reaches_kvcore_as_a_fraction(models, gpus):
    app = typing_app("sizing")
    box = app.number_input(key="sz_utilization")
    assert box.format == "%.2f" and translate("en", "lesson.typed_share") in box.help
    box.set_value(0.83).run()
    steps = expected_steps(models, gpus, utilization=0.83)
    assert metric(app, "sizing.metric_tokens") == format_tokens(steps.pool_tokens)


def test_a_typed_prompt_reaches_kvcores_time_to_first_token(models, gpus):
    app = typing_app("prefill_decode")
    app.number_input(key="pd_prompt").set_value(5000).run()
    expected = timing.ttft_s(models["llama-3.1-8b"], prompt_tokens=5000, **rates(gpus["rtx-4090"]))
    assert metric(app, "prefill_decode.metric_ttft") == format_seconds(float(expected))


@pytest.mark.parametrize(("key", "typed"), [("concurrency", 1000), ("context", 0), ("mem_overhead", 99.0)])
def test_a_typed_value_outside_the_bounds_is_refused_and_the_default_stands(models, key, typed):
    app = typing_app()
    box = app.number_input(key=key)
    default = box.value
    box.set_value(typed).run()
    assert not app.exception
    assert app.number_input(key=key).value == default
    total = total_memory_bytes(models["llama-3.1-8b"], context_tokens=8192, overhead_bytes=kvcore.GiB)
    assert metric(app, "memory.metric_total", memory="24 GiB") == format_gib(float(total))


def test_a_link_out_of_range_while_typing_falls_back_with_a_notice():
    app = typing_app(concurrency="999")
    assert app.number_input(key="concurrency").value == 1
    assert any("`concurrency`" in info.value for info in app.info)


def test_flipping_the_switch_keeps_every_value_both_ways():
    app = open_page(AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S))
    app.slider(key="context").set_value(16384).run()
    app.slider(key="mem_overhead").set_value(2.5).run()
    app.toggle(key=lesson.TYPING_KEY).set_value(True).run()
    assert (app.number_input(key="context").value, app.number_input(key="mem_overhead").value) == (16384, 2.5)
    assert metric(app, "memory.metric_cache") == "2 GiB"  # 16,384 × 128 KiB, the value the script ran with
    app.number_input(key="context").set_value(20000).run()
    app.toggle(key=lesson.TYPING_KEY).set_value(False).run()
    assert (app.slider(key="context").value, app.slider(key="mem_overhead").value) == (20000, 2.5)
    assert metric(app, "memory.metric_cache") == format_gib(20000 * 131072)


def test_presets_and_reset_set_the_number_boxes(models):
    app = typing_app()
    app.button(key="mem_presets_3").click().run()
    assert not app.exception
    assert (app.number_input(key="context").value, app.number_input(key="mem_layers").value) == (131072, 80)
    app.button(key="reset_page").click().run()
    assert (app.number_input(key="context").value, app.number_input(key="concurrency").value) == (8192, 1)
    assert app.toggle(key=lesson.TYPING_KEY).value is True, "the sidebar's choices stay"


@pytest.mark.parametrize("stem", ROUND_TRIP_PAGES)
def test_a_link_made_while_typing_reopens_the_same_values_typing_or_not(stem):
    lang = LANGUAGES[ROUND_TRIP_PAGES.index(stem) % len(LANGUAGES)]
    app = typing_app(stem, lang=lang)
    boxes = [box for box in app.main.number_input if box.key and not box.disabled and not box.key.startswith("pv_")]
    assert boxes, "the page has number boxes"
    for box in boxes:
        box.set_value(moved(app, box))
    app.run()
    assert not app.exception
    link, expected = browser_link(app), values(app)
    assert link[lesson.TYPING_KEY] == "true"
    assert all(box.key in link for box in boxes), "every typed value is in the link"
    for reader, typing in ((other(lang), True), (lang, False)):
        opened = {key: value for key, value in link.items() if typing or key != lesson.TYPING_KEY}
        reopened = fresh(f"lessons/{stem}.py", reader, opened)
        assert not reopened.exception
        assert link_notices(reopened) == []
        kinds = {widget.key: widget.type for widget in url_widgets(reopened)}
        assert {kinds[box.key] for box in boxes} == {"number_input" if typing else "slider"}
        assert values(reopened) == expected, f"{opened} opened in {reader}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_typed_value_off_the_steps_opens_on_the_slider_too(models, lang):
    # 20,000 tokens typed on a phone, the link opened on a laptop without "Type values": the slider holds 20,000.
    app = fresh("lessons/memory.py", lang, {"context": "20000"})
    assert app.slider(key="context").value == 20000 and link_notices(app) == []
    cache = kvcore.kv_cache_bytes(models["llama-3.1-8b"], context_tokens=20000)
    assert metric(app, "memory.metric_cache", lang) == localize_number(format_gib(float(cache)), lang)
