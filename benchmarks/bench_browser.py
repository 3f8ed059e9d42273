"""Key press → chart redrawn, in headless Chromium (run: python benchmarks/bench_browser.py [stem ...]).

Serves the app with `streamlit run`, opens each lesson, focuses its first slider
and presses ArrowRight / ArrowLeft in turn. Each sample is the wall time from the
key press until the first chart shows new values (a cheap signature of its traces
and shapes, read on every animation frame) and Streamlit reports the script idle: the whole round trip a student feels
(browser → server rerun → websocket → React → Plotly). Browser and server share
this machine's two cores. Goal (issue 3):
median under 150 ms on a 2-core machine. Measured, not asserted.

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

DEFAULT_STEMS = ["memory", "agent_1m", "decode_speed", "attention_variants"]
PRESSES = 21
CHART = "document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot')"
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


def press_to_redraw_ms(page, url: str) -> list[float]:
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=30_000)
    page.wait_for_function(f"{CHART_STATE} !== 'null'")
    slider = page.get_by_test_id("stSlider").first.get_by_role("slider")
    slider.focus()
    samples = []
    for index in range(PRESSES):
        before = page.evaluate(CHART_STATE)
        start = time.perf_counter()
        slider.press("ArrowRight" if index % 2 == 0 else "ArrowLeft")
        page.wait_for_function(
            f"before => {{ const now = {CHART_STATE}; return now !== 'null' && now !== before; }}",
            arg=before,
            polling="raf",
            timeout=10_000,
        )
        page.wait_for_selector(IDLE)
        samples.append((time.perf_counter() - start) * 1e3)
    return samples[1:]  # the first press also warms the server's caches


def main() -> None:
    stems = sys.argv[1:] or DEFAULT_STEMS
    home = tempfile.mkdtemp(prefix="bench-chromium-")
    env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home, "XDG_CACHE_HOME": home}
    with served_app(Path(home) / "server.log") as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, env=env)
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        print(f"{'page':<22} {'median':>8} {'p90':>8}  (ms, key press → chart redrawn, {PRESSES - 1} presses)")
        for stem in stems:
            url = f"{base}/?lang=en" if stem == "memory" else f"{base}/{stem}?lang=en"
            samples = press_to_redraw_ms(page, url)
            p90 = statistics.quantiles(samples, n=10)[-1]
            print(f"{stem:<22} {statistics.median(samples):>8.0f} {p90:>8.0f}")
        browser.close()


if __name__ == "__main__":
    main()
