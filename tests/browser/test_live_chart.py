"""Live charts in a real browser: a key press redraws the chart without waiting for the server.

The websocket between the page and the server is routed through Playwright, which can
hold the page's messages back. With the rerun request held, the chart must already show
the new value while the server-drawn metrics still show the old one; once the request
goes through, the rerun draws the same chart and the metrics catch up.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect

import kvcore
from kvcore.units import format_gib

from .conftest import IDLE

pytestmark = pytest.mark.browser

LOAD_TIMEOUT_MS = 120_000
LIVE_CHART = "[data-testid=kvlab-live-chart]"
#: Where the first live chart's first shape (the chosen context's line) stands, as Plotly holds it after drawing.
MARKER_X = f"document.querySelector('{LIVE_CHART}')?.layout?.shapes?.[0]?.x0 ?? null"
#: The bars' lengths of the GQA/MQA/MLA lesson's live chart (Plotly's full data: packed arrays unpacked).
BARS = f"Array.from(document.querySelector('{LIVE_CHART}')?._fullData?.[0]?.x ?? [])"


class HeldSocket:
    """Forwards the app's websocket both ways, except while `holding`: then the page's messages wait."""

    def __init__(self) -> None:
        self.holding = False
        self.held: list[str | bytes] = []
        self.server: WebSocketRoute | None = None

    def route(self, socket: WebSocketRoute) -> None:
        self.server = socket.connect_to_server()
        socket.on_message(self._from_page)

    def _from_page(self, message: str | bytes) -> None:
        if self.holding:
            self.held.append(message)
        elif self.server is not None:
            self.server.send(message)

    def release(self) -> None:
        self.holding = False
        assert self.server is not None
        for message in self.held:
            self.server.send(message)
        self.held.clear()


def open_with_held_socket(page: Page, url: str) -> HeldSocket:
    socket = HeldSocket()
    page.route_web_socket(re.compile(r".*/_stcore/stream"), socket.route)
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=LOAD_TIMEOUT_MS)
    # Drawn, or given up (the chart then says why in data-error): fail at once with the reason, not at the timeout.
    chart = page.wait_for_selector(f"{LIVE_CHART}[data-ready=true], {LIVE_CHART}[data-error]", timeout=LOAD_TIMEOUT_MS)
    assert chart is not None and chart.get_attribute("data-error") is None, chart and chart.get_attribute("data-error")
    return socket


def press_held(page: Page, socket: HeldSocket) -> None:
    """ArrowRight on the page's first slider, the rerun request it sends held back."""
    socket.holding = True
    slider = page.get_by_test_id("stSlider").first.get_by_role("slider")
    slider.focus()
    slider.press("ArrowRight")


def cache_metric(page: Page):
    return page.get_by_test_id("stMetric").filter(has_text="KV cache (context × users)").get_by_test_id("stMetricValue")


def test_a_key_press_moves_the_memory_charts_context_line_before_the_server_answers(page: Page, app_url):
    socket = open_with_held_socket(page, f"{app_url}/?lang=en")
    assert page.evaluate(MARKER_X) == 8192
    expect(cache_metric(page)).to_have_text("1 GiB")

    press_held(page, socket)
    page.wait_for_function(f"{MARKER_X} === 9216", timeout=60_000)
    assert socket.held, "the rerun request was held back"
    expect(cache_metric(page)).to_have_text("1 GiB")  # the server has not rerun the page

    socket.release()
    model = kvcore.load_models()["llama-3.1-8b"]
    expect(cache_metric(page)).to_have_text(format_gib(float(kvcore.kv_cache_bytes(model, context_tokens=9216))))
    page.wait_for_selector(IDLE)
    assert page.evaluate(MARKER_X) == 9216


def test_the_bars_of_the_attention_lesson_grow_with_the_context_before_the_server_answers(page: Page, app_url):
    socket = open_with_held_socket(page, f"{app_url}/attention_variants?lang=en")
    before = page.evaluate(BARS)
    press_held(page, socket)
    page.wait_for_function(f"before => JSON.stringify({BARS}) !== JSON.stringify(before)", arg=before, timeout=60_000)
    preview = page.evaluate(BARS)
    assert socket.held
    model = kvcore.load_models()["llama-3.1-8b"]
    mha = float(kvcore.kv_cache_bytes(kvcore.with_changes(model, num_key_value_heads=32), context_tokens=9216))
    assert preview[0] == pytest.approx(mha / kvcore.GiB, rel=1e-12)

    socket.release()
    page.wait_for_selector(IDLE)
    page.wait_for_function(f"{BARS}.length > 0")
    assert page.evaluate(BARS) == preview


def press_and_wait_for_marker(page: Page, socket: HeldSocket, context: int) -> None:
    """An arrow key with the rerun request held: the chart's context line reaches `context` first; then released."""
    press_held(page, socket)
    page.wait_for_function(f"{MARKER_X} === {context}", timeout=60_000)
    assert socket.held, "the rerun request was held back"
    socket.release()
    page.wait_for_selector(IDLE, timeout=LOAD_TIMEOUT_MS)


def test_the_chart_follows_again_with_the_follow_it_holds_after_a_rerun(page: Page, app_url):
    # The rerun after the first key press sends the follow as its id only (tests/app/test_live_chart.py): the
    # chart follows the next key press from the follow the tab already holds.
    socket = open_with_held_socket(page, f"{app_url}/?lang=en")
    press_and_wait_for_marker(page, socket, 9216)
    assert page.evaluate("globalThis.__kvlabFollows.size") >= 1
    press_and_wait_for_marker(page, socket, 10240)


def test_a_tab_that_lost_its_follow_gets_it_whole_again(page: Page, app_url):
    # As after a message lost to a dropped connection: the server believes the tab holds the follow.
    socket = open_with_held_socket(page, f"{app_url}/?lang=en")
    page.evaluate("globalThis.__kvlabFollows.clear()")
    slider = page.get_by_test_id("stSlider").first.get_by_role("slider")
    slider.focus()
    slider.press("ArrowRight")  # a rerun that sends the follow's id only: the chart asks for it, and gets it
    page.wait_for_function("globalThis.__kvlabFollows.size >= 1", timeout=LOAD_TIMEOUT_MS)
    page.wait_for_selector(IDLE, timeout=LOAD_TIMEOUT_MS)
    page.wait_for_function(f"{MARKER_X} === 9216", timeout=60_000)
    press_and_wait_for_marker(page, socket, 10240)
