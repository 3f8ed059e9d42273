"""Key press → chart redrawn, in headless Chromium (run: python benchmarks/bench_browser.py [stem ...]).

Serves the app with `streamlit run`, opens each lesson, focuses its first slider
and presses ArrowRight / ArrowLeft in turn. Two times per press: until the first
chart shows new values (a cheap signature of its traces and shapes, read on every
animation frame, timed inside the page from the keydown event), which is what a
student sees; and until Streamlit reports the script idle (everything below the
chart redrawn too). On these lessons the first chart is a live chart
(ui.live_chart): the browser redraws it from the values the server sent ahead,
without a round trip. The rest of the page makes the round trip: browser → server
rerun of the lesson (a fragment: the sidebar does not rerun) → websocket → React →
Plotly. Browser and server share this machine's two cores. Goal (issue 3): chart redrawn in a median
under 150 ms on a 2-core machine. Measured, not asserted.

Needs Debian's chromium (scripts/test.sh installs it) and the dev requirements.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, IDLE, served_app  # noqa: E402

DEFAULT_STEMS = ["memory", "agent_1m", "prefill_decode", "decode_speed", "attention_variants"]
PRESSES = 21
CHART = "document.querySelector('[data-testid=stMain] .js-plotly-plot')"
#: A cheap signature of what the first chart draws (the ends of every trace, the shapes), or 'null' while
#: Streamlit swaps it. Cheap matters: it is evaluated on every animation frame, on the browser's main thread.
CHART_STATE = f"""(() => {{
  const plot = {CHART};
  if (!plot || !plot.data) return 'null';
  const ends = a => (a && a.length) ? [a[0], a[a.length - 1], a.length] : null;
  return JSON.stringify([
    (plot._fullData ?? plot.data).map(t => [ends(t.x), ends(t.y), ends(t.z), ends(t.measure)]),
    (plot.layout.shapes ?? []).map(s => [s.x0, s.x1, s.y0, s.y1]),
    (plot.layout.annotations ?? []).map(a => a.text),
  ]);
}})()"""


def press_to_redraw_ms(page, url: str) -> tuple[list[float], list[float]]:
    """Per key press: ms until the first chart shows new values, and ms until the page has settled.

    The first is timed inside the page (``performance.now()`` at the key's ``keydown`` and at the first
    animation frame that shows the new chart), so Playwright's own round trips are not in it; the second
    waits, from Python, until Streamlit reports the script idle.
    """
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=30_000)
    page.wait_for_function(f"{CHART_STATE} !== 'null'")
    slider = page.get_by_test_id("stSlider").first.get_by_role("slider")
    slider.focus()
    redrawn, settled = [], []
    for index in range(PRESSES):
        before = page.evaluate(CHART_STATE)
        page.evaluate(WATCH_CHART, before)
        start = time.perf_counter()
        slider.press("ArrowRight" if index % 2 == 0 else "ArrowLeft")
        page.wait_for_function("window.__redrawnAt !== null", polling="raf", timeout=10_000)
        page.wait_for_selector(IDLE)
        settled.append((time.perf_counter() - start) * 1e3)
        redrawn.append(page.evaluate("window.__redrawnAt - window.__keyAt"))
    return redrawn[1:], settled[1:]  # the first press also warms the server's caches


#: Records the time of the next key press and of the first animation frame whose chart differs from `before`.
WATCH_CHART = f"""before => {{
  window.__keyAt = null; window.__redrawnAt = null;
  document.addEventListener('keydown', () => {{ window.__keyAt = performance.now(); }}, {{once: true, capture: true}});
  const tick = () => {{
    const now = {CHART_STATE};
    if (window.__keyAt !== null && now !== 'null' && now !== before) window.__redrawnAt = performance.now();
    else requestAnimationFrame(tick);
  }};
  requestAnimationFrame(tick);
}}"""


def summary(samples: list[float]) -> str:
    return f"{statistics.median(samples):.0f} ({statistics.quantiles(samples, n=10)[-1]:.0f})"


def main() -> None:
    stems = sys.argv[1:] or DEFAULT_STEMS
    home = tempfile.mkdtemp(prefix="bench-chromium-")
    env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home, "XDG_CACHE_HOME": home}
    with served_app(Path(home) / "server.log") as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env=env)
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        print(f"ms from a key press on the first slider, median (p90) of {PRESSES - 1} presses")
        print(f"{'page':<22} {'chart redrawn':>16} {'page settled':>16}")
        for stem in stems:
            url = f"{base}/?lang=en" if stem == "memory" else f"{base}/{stem}?lang=en"
            redrawn, settled = press_to_redraw_ms(page, url)
            print(f"{stem:<22} {summary(redrawn):>16} {summary(settled):>16}")
        browser.close()


if __name__ == "__main__":
    main()
