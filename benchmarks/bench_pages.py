"""Server CPU per rerun of every lesson, on a real server (run: .venv/bin/python benchmarks/bench_pages.py [page …]).

The script starts the app warm on loopback (scripts/serve_app.py, the command a class is served with, its
.streamlit/config.toml included) and opens every lesson with a slider, one at a time, as one browser tab of the
project's protocol client (tests/serving/st_client.py). On each lesson it walks the first slider of the page one
step at a time, up to its end and back, as a student pressing an arrow key does: every rerun is a value the page
has not drawn a moment before, so a cache keyed by the slider's value does not flatter the numbers. The lesson
reruns alone (its ``st.fragment``), as in the browser.

Per lesson it prints:
- join: the first run of the page for a new tab, on a server where every page was opened once before
  (wall-clock time to ``script_finished`` and the server's CPU for it);
- rerun CPU: the server process's CPU (utime + stime from /proc/PID/stat: the script thread, Streamlit's
  serialisation and the websocket, every thread) summed over the measured reruns, divided by their number;
- rerun p50: wall-clock time from the rerun message to ``script_finished``, median;
- KB/rerun: bytes the browser receives per rerun, median;
- values seen before: the same walk back over the values just drawn, as when other students of the class
  moved the slider there first (the server keeps the figures it drew, ``ui.figure_cache``).

One tab at a time, so the latency is the server's own; the CPU is what sets how many students a core holds.
Measured, not asserted. Run it on a quiet machine. The host probe printed at the end (``timer.host_probe_ms``,
a fixed piece of work, before and after) tells how fast the host was during the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # a script, not a test: find the project's client beside it

from benchmarks.timer import host_probe_ms  # noqa: E402
from course.lessons import DEFAULT_STEM  # noqa: E402
from tests.serving.conftest import free_port, stop, wait_until_healthy  # noqa: E402
from tests.serving.st_client import Run, Session, Widget  # noqa: E402

#: Reruns measured per lesson, after WARMUP ones.
REPEATS = 30
WARMUP = 3
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class PageResult:
    page: str
    join_s: float
    join_cpu_s: float
    rerun_cpu_s: float
    rerun_p50_s: float
    rerun_kb: float
    seen_cpu_s: float
    seen_p50_s: float


def process_cpu_s(pid: int) -> float:
    """utime + stime of one process and all its threads, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


@contextlib.contextmanager
def warm_server(log_path: Path, *flags: str) -> Iterator[tuple[str, int]]:
    """The app in one process, started by the warm launcher on a free loopback port; yields (URL, PID).

    `flags` are more ``streamlit run`` options, e.g. ``"--server.disconnectedSessionTTL", "10"``.
    """
    port = free_port()
    command = [
        sys.executable, str(ROOT / "scripts" / "serve_app.py"),
        "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port), *flags,
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
        yield url, process.pid
    finally:
        stop(process)


def lesson_pages() -> list[str]:
    """Every lesson with a slider, as its URL path (pages without one, quiz, course, glossary, have nothing to move).

    The default lesson is the app's home, "/".
    """
    return sorted(
        "/" + ("" if path.stem == DEFAULT_STEM else path.stem)
        for path in (ROOT / "lessons").glob("*.py")
        if "lesson.slider(" in path.read_text(encoding="utf-8")
    )


def checked(run: Run, page: str) -> Run:
    """`run`, unless it raised or did not finish (an error box is a lesson's content: /sizing warns in one)."""
    failures = [error for error in run.errors if not error.startswith("error element:")]
    if failures or run.status is None:
        raise RuntimeError(f"{page}: {failures or 'the run did not finish'}")
    return run


async def walk(tab: Session, page: str, reruns: int, direction: list[int]) -> list[Run]:
    """`reruns` one-step moves of the page's first slider, turning round at either end."""
    runs = []
    for _ in range(reruns):
        widget: Widget = tab.sliders()[0]
        if widget.kind == "string_array":  # a select slider: its options
            options = list(widget.proto.options)
            value, low, high = options.index(widget.value[0]), 0, len(options) - 1
        else:
            value, low, high = widget.value[0], widget.proto.min, widget.proto.max
        if (direction[0] > 0 and value >= high) or (direction[0] < 0 and value <= low):
            direction[0] = -direction[0]
        runs.append(checked(await tab.step_slider(widget, direction[0]), page))
    return runs


async def measure(url: str, pid: int, page: str) -> PageResult:
    async with Session(url, page, timeout_s=120) as tab:
        cpu0 = process_cpu_s(pid)
        join = checked(await tab.open(), page)
        join_cpu = process_cpu_s(pid) - cpu0
        if not tab.sliders():
            raise RuntimeError(f"{page}: no slider in the page's main area")
        direction = [1]
        await walk(tab, page, WARMUP, direction)
        cpu0 = process_cpu_s(pid)
        runs = await walk(tab, page, REPEATS, direction)
        cpu = process_cpu_s(pid) - cpu0
        direction[0] = -direction[0]  # back over the same values: every one has been drawn before
        seen_cpu0 = process_cpu_s(pid)
        seen = await walk(tab, page, REPEATS, direction)
        seen_cpu = process_cpu_s(pid) - seen_cpu0
    return PageResult(
        page=page,
        join_s=join.seconds,
        join_cpu_s=join_cpu,
        rerun_cpu_s=cpu / len(runs),
        rerun_p50_s=statistics.median(run.seconds for run in runs),
        rerun_kb=statistics.median(run.bytes for run in runs) / 1000,
        seen_cpu_s=seen_cpu / len(seen),
        seen_p50_s=statistics.median(run.seconds for run in seen),
    )


async def bench(url: str, pid: int, pages: list[str]) -> list[PageResult]:
    for page in pages:  # every page once: its imports, the catalogues, per-model caches
        async with Session(url, page, timeout_s=120) as tab:
            checked(await tab.open(), page)
    return [await measure(url, pid, page) for page in pages]


def report(results: list[PageResult]) -> str:
    lines = [
        f"{'':<22} {'':>8} {'':>9} {'new values':>21} {'':>9} {'values seen before':>21}",
        f"{'page':<22} {'join':>8} {'join CPU':>9} {'rerun CPU':>10} {'rerun p50':>10} {'KB/rerun':>9}"
        f" {'rerun CPU':>10} {'rerun p50':>10}",
    ]
    for r in results:
        lines.append(
            f"{r.page:<22} {r.join_s * 1e3:>5.0f} ms {r.join_cpu_s * 1e3:>6.0f} ms {r.rerun_cpu_s * 1e3:>7.1f} ms"
            f" {r.rerun_p50_s * 1e3:>7.0f} ms {r.rerun_kb:>9.0f} {r.seen_cpu_s * 1e3:>7.1f} ms"
            f" {r.seen_p50_s * 1e3:>7.0f} ms"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pages", nargs="*", help="URL paths, e.g. /prefill_decode (default: every lesson)")
    opts = parser.parse_args()
    stems = [page.strip("/") for page in opts.pages]
    pages = ["/" + ("" if stem == DEFAULT_STEM else stem) for stem in stems] or lesson_pages()
    log_dir = ROOT / ".tmp" / "bench_pages"
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    probe_before = host_probe_ms()
    with warm_server(log_dir / "server.log") as (url, pid):
        results = asyncio.run(bench(url, pid, pages))
    probe_after = host_probe_ms()
    print(report(results))
    print(f"({REPEATS} + {REPEATS} reruns per lesson after {WARMUP}; {time.monotonic() - started:.0f} s in all)")
    print(
        f"host probe (benchmarks/timer.py, fixed work): {probe_before:.1f} ms before, {probe_after:.1f} ms after;"
        " compare runs made at a similar probe"
    )


if __name__ == "__main__":
    main()
