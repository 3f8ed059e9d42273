"""A class arriving at once: N first visits at the same moment, each with every file a browser fetches, then the page.

    .venv/bin/python benchmarks/bench_first_visit.py                    # 50 visitors, 2 processes behind HAProxy
    .venv/bin/python benchmarks/bench_first_visit.py --procs 1          # the launcher alone, no balancer
    .venv/bin/python benchmarks/bench_first_visit.py --visitors 20 --page /prefill_decode

First, headless Chromium opens the page once and records every request it makes to the app: the HTML, the
JavaScript and CSS bundles (Plotly's among them), fonts, the live chart's component files, Streamlit's
``/_stcore`` calls. That list is what a first visit downloads with an empty browser cache.

Then `--visitors` students arrive together. Each one, at the same moment, downloads the whole list as a browser
does, over 6 connections with ``Accept-Encoding: gzip`` (one ``curl --parallel`` process per visitor, so the
client stays cheap beside the servers on the same two cores). The client asks for gzip but counts the bytes as
they come without inflating them: a browser inflates on the student's own machine, while here 50 clients share
the servers' two cores (inflating, curl took 84 ms of CPU a visit against HAProxy's 5 ms, and that alone kept
the last download waiting about 1 s). Then each opens the page's websocket and runs the page to
``script_finished`` (the project's protocol client, tests/serving/st_client.py). A visitor's time is from its
start to that moment: the page drawn with its data, as a student would see it.

It prints the bytes on the wire per visitor, the p50 / p95 / max of the download, the join and the whole visit,
and whether every visit got all its files (HTTP 200) and a page without errors. Also: cold start, the seconds
from starting the server(s) to the first page finished. Measured, not asserted; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # a script, not a test: find the project's client beside it
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_load import behind_balancer, one_process  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from tests.serving.st_client import Session  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
IDLE = "[data-testid=stApp][data-test-script-state=notRunning][data-test-connection-state=CONNECTED]"
#: Parallel connections per visitor: what a browser opens to one host over HTTP/1.1.
CONNECTIONS = 6


@dataclass(frozen=True)
class Visit:
    download_s: float
    join_s: float
    total_s: float
    wire_bytes: int
    files_ok: bool
    page_ok: bool


def recorded_files(url: str, page: str) -> list[str]:
    """Every same-origin URL a fresh Chromium fetches to show `page` (the websocket left out), in request order."""
    seen: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        tab = browser.new_page()
        tab.on("request", lambda request: seen.append(request.url))
        tab.goto(url + page)
        tab.wait_for_selector(IDLE, timeout=120_000)
        tab.wait_for_load_state("networkidle", timeout=120_000)
        browser.close()
    files = [found for found in dict.fromkeys(seen) if found.startswith(url) and "/_stcore/stream" not in found]
    return files


async def curl(files: list[str], work: Path, *options: str) -> list[list[str]]:
    """Fetch `files` with curl (gzip asked for, not inflated; a cookie jar in `work`): [status, bytes on the wire]."""
    listing = work / f"urls{len(files)}.txt"
    listing.write_text("".join(f'url = "{file}"\noutput = "/dev/null"\n' for file in files))
    jar = str(work / "cookies.txt")
    process = await asyncio.create_subprocess_exec(
        "curl", "--silent", "--no-progress-meter", "-H", "Accept-Encoding: gzip", "--cookie", jar, "--cookie-jar", jar,
        "--config", str(listing), "--write-out", "%{http_code} %{size_download}\n", *options,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await process.communicate()
    return [line.split() for line in out.decode().splitlines() if line.strip()]


async def download(files: list[str], work: Path) -> tuple[int, bool]:
    """Fetch `files` as one browser visit: (bytes on the wire, every status 200).

    The page first, whose answer sets the balancer's cookie; then the rest over 6 connections, with the cookie,
    as a browser does.
    """
    rows = await curl(files[:1], work)
    rows += await curl(files[1:], work, "--parallel", "--parallel-max", str(CONNECTIONS))
    return sum(int(size) for _, size in rows), len(rows) == len(files) and all(code == "200" for code, _ in rows)


async def visit(url: str, page: str, files: list[str], start: asyncio.Event, work: Path) -> Visit:
    await start.wait()
    began = time.perf_counter()
    wire, files_ok = await download(files, work)
    downloaded = time.perf_counter()
    async with Session(url, page, timeout_s=120) as tab:
        run = await tab.open()
    done = time.perf_counter()
    page_ok = run.status is not None and not [error for error in run.errors if not error.startswith("error element:")]
    return Visit(downloaded - began, done - downloaded, done - began, wire, files_ok, page_ok)


async def arrive(url: str, page: str, files: list[str], visitors: int) -> list[Visit]:
    start = asyncio.Event()
    with tempfile.TemporaryDirectory() as scratch:
        folders = [Path(scratch) / str(number) for number in range(visitors)]
        for folder in folders:
            folder.mkdir()
        tasks = [asyncio.create_task(visit(url, page, files, start, folder)) for folder in folders]
        await asyncio.sleep(0.2)  # every visitor waiting: then all at once
        start.set()
        return await asyncio.gather(*tasks)


async def first_page_s(url: str, page: str, started_at: float) -> float:
    async with Session(url, page, timeout_s=120) as tab:
        await tab.open()
    return time.perf_counter() - started_at


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered):6.2f} {p95:6.2f} {ordered[-1]:6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--procs", type=int, default=2, help="1: the launcher alone; N > 1: scripts/serve.sh")
    parser.add_argument("--visitors", type=int, default=50, help="students arriving at the same moment")
    parser.add_argument("--page", default="/", help="the page they open")
    opts = parser.parse_args()

    log_dir = ROOT / ".tmp" / "bench_first_visit"
    log_dir.mkdir(parents=True, exist_ok=True)
    started_at = time.perf_counter()
    servers = one_process(log_dir) if opts.procs == 1 else behind_balancer(opts.procs, log_dir)
    with servers as (url, _pids):
        cold_s = asyncio.run(first_page_s(url, opts.page, started_at))
        files = recorded_files(url, opts.page)
        visits = asyncio.run(arrive(url, opts.page, files, opts.visitors))

    print(f"bench_first_visit: {opts.procs} process(es), {opts.visitors} first visits to {opts.page} at once")
    print(f"cold start (servers started → first page finished): {cold_s:.1f} s")
    print(f"files a first visit fetches: {len(files)}; on the wire per visit: {visits[0].wire_bytes / 1e6:.2f} MB")
    print(f"{'':<10} {'p50 s':>6} {'p95 s':>6} {'max s':>6}")
    print(f"{'download':<10} {quantiles([v.download_s for v in visits])}")
    print(f"{'join':<10} {quantiles([v.join_s for v in visits])}")
    print(f"{'visit':<10} {quantiles([v.total_s for v in visits])}")
    print(
        f"every file 200: {all(v.files_ok for v in visits)}; every page without error: {all(v.page_ok for v in visits)}"
    )


if __name__ == "__main__":
    main()
