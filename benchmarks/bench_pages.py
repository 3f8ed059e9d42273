"""Server time per rerun of every lesson, measured with AppTest (run: python benchmarks/bench_pages.py).

For each lesson: the first run (from app.py, caches warm), then the median of
reruns after its first slider moves one step back and forth. AppTest runs the
script in this process, so this is Python time on the server: no browser, no
network. Measured, not asserted.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # a script, not a test: find the app's packages beside it

import streamlit.config  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

REPEATS = 15


def rerun_ms(page: str) -> tuple[float, float]:
    """(first run of the page, median slider rerun) in milliseconds."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    app.query_params["lang"] = "en"
    app.run()
    start = time.perf_counter()
    app.switch_page(page).run()
    first_ms = (time.perf_counter() - start) * 1e3
    slider = app.slider[0]
    low, high = slider.min, slider.max
    samples = []
    for index in range(REPEATS):
        slider = app.slider[0]
        value = high if index % 2 == 0 else low
        start = time.perf_counter()
        slider.set_value(value).run()
        samples.append((time.perf_counter() - start) * 1e3)
    if app.exception:
        raise RuntimeError(f"{page}: {app.exception[0].value}")
    return first_ms, statistics.median(samples)


def main() -> None:
    streamlit.config.set_option("client.showErrorDetails", "full")
    # Pages without a slider (quiz, course, glossary) have nothing to move.
    pages = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "lessons").glob("*.py")
        if "lesson.slider(" in path.read_text(encoding="utf-8")
    )
    rerun_ms(pages[0])  # warm the data cache and the imports
    print(f"{'page':<32} {'first run':>10} {'rerun (median)':>15}")
    for page in pages:
        first_ms, median_ms = rerun_ms(page)
        print(f"{page:<32} {first_ms:>8.0f} ms {median_ms:>12.0f} ms")


if __name__ == "__main__":
    main()
