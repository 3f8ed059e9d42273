"""Does the server's memory come back after a class leaves? (run: .venv/bin/python benchmarks/bench_memory.py)

The script starts the app warm on loopback (scripts/serve_app.py and the project's .streamlit/config.toml, as a
class is served), with Streamlit's time-to-live for disconnected sessions (``server.disconnectedSessionTTL``)
shortened to --ttl-s so the run need not wait the default 2 minutes. Then, with the server's RSS read from
/proc/PID/status at every step:

1. **warm**: one tab opens every page with a slider once (the default figures are drawn and kept);
2. **class 1**: --students tabs join, spread over --pages, and each moves a slider --moves times (seeded walks);
3. **left 1**: every tab closes; after the TTL, one more tab joins and leaves (Streamlit drops expired sessions
   only when it stores another), then the process is left alone for --settle-s;
4. **class 2** and **left 2**: the same class again, the same walks.

Read it as: *per live session* = (class 1 − warm) / students, the memory a session costs while it is open
(its state and whatever new figures its values drew); *per live session, its figures already drawn* = (class 2 −
left 1) / students, what the same session costs when the class before drew its figures; *kept after class 1* =
left 1 − warm; *growth from class 2* = left 2 − left 1. If the second class costs what the first did and leaves
nothing more behind, what stays after the first class is memory the process reuses (drawn figures kept for the
next student, Python's allocator holding freed blocks), not memory lost per session.

Measured, not asserted. Run it on a quiet machine (RSS does not depend on load; the time it takes does).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # a script, not a test: find the project's client beside it

from benchmarks.bench_load import PAGES, process_rss_mb  # noqa: E402
from benchmarks.bench_pages import warm_server  # noqa: E402
from course.lessons import DEFAULT_STEM  # noqa: E402
from course.lessons import PAGES as LESSONS  # noqa: E402
from tests.serving.st_client import Session  # noqa: E402


def every_page() -> list[str]:
    """Every page's path ("/" for the default one)."""
    return ["/" if page.stem == DEFAULT_STEM else f"/{page.stem}" for page in LESSONS]


async def one_tab(url: str, page: str, moves: int, seed: int) -> None:
    rng = random.Random(seed)
    async with Session(url, page) as tab:
        await tab.open()
        for _ in range(moves):
            if await tab.move_slider(rng) is None:
                return


async def a_class(url: str, pages: list[str], students: int, moves: int) -> None:
    """`students` tabs open at once (joins spread over a few seconds), each walking its sliders, then all close."""
    opened = asyncio.Event()
    count = 0

    async def student(uid: int) -> None:
        nonlocal count
        rng = random.Random(uid)
        async with Session(url, pages[uid % len(pages)]) as tab:
            await tab.open()
            for _ in range(moves):
                if await tab.move_slider(rng) is None:
                    break
            count += 1
            if count == students:
                opened.set()
            await opened.wait()  # every tab is live at once when the RSS is read

    tasks = []
    for uid in range(students):
        tasks.append(asyncio.create_task(student(uid)))
        await asyncio.sleep(0.1)
    await asyncio.gather(*tasks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--moves", type=int, default=5, help="slider moves per student")
    parser.add_argument("--pages", default=",".join(PAGES), help="pages, given round-robin to the students")
    parser.add_argument("--ttl-s", type=float, default=10.0, help="server.disconnectedSessionTTL for the run")
    parser.add_argument("--settle-s", type=float, default=20.0, help="time left alone after a class")
    opts = parser.parse_args()
    if not 1 <= opts.students <= 200:
        parser.error("--students must be 1..200")
    pages = [p.strip() for p in opts.pages.split(",") if p.strip()]
    log_dir = ROOT / ".tmp" / "bench_memory"
    log_dir.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, float]] = []

    with warm_server(log_dir / "server.log", "--server.disconnectedSessionTTL", str(int(opts.ttl_s))) as (url, pid):

        def read(step: str) -> None:
            rows.append((step, process_rss_mb(pid)))
            print(f"  {step}: {rows[-1][1]:.0f} MB", file=sys.stderr, flush=True)

        async def leave() -> None:
            await asyncio.sleep(opts.ttl_s + 2)
            await one_tab(url, pages[0], 0, 0)  # storing a session is when Streamlit drops the expired ones
            await asyncio.sleep(opts.settle_s)

        async def run() -> None:
            read("started")
            for page in every_page():
                await one_tab(url, page, 1, 0)
            read("warm")
            for round_ in (1, 2):
                live = asyncio.create_task(a_class(url, pages, opts.students, opts.moves))
                peak = 0.0
                while not live.done():  # the peak, read while the tabs are open
                    await asyncio.sleep(0.5)
                    peak = max(peak, process_rss_mb(pid))
                live.result()
                rows.append((f"class {round_}", peak))
                print(f"  class {round_}: {peak:.0f} MB (peak)", file=sys.stderr, flush=True)
                await leave()
                read(f"left {round_}")

        started = time.monotonic()
        asyncio.run(run())

    rss = dict(rows)
    print(f"bench_memory: {opts.students} students × {opts.moves} moves on {','.join(pages)}; TTL {opts.ttl_s:.0f} s")
    print(f"{'step':<10} {'RSS MB':>7}")
    for step, value in rows:
        print(f"{step:<10} {value:>7.0f}")
    print(f"per live session (class 1 − warm) / students: {(rss['class 1'] - rss['warm']) / opts.students:.2f} MB")
    print(
        "per live session, its figures already drawn (class 2 − left 1) / students: "
        f"{(rss['class 2'] - rss['left 1']) / opts.students:.2f} MB"
    )
    print(f"kept after class 1 (left 1 − warm): {rss['left 1'] - rss['warm']:.0f} MB")
    print(f"class 2 peak − class 1 peak: {rss['class 2'] - rss['class 1']:.0f} MB")
    print(f"growth from class 2 (left 2 − left 1): {rss['left 2'] - rss['left 1']:.0f} MB")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
