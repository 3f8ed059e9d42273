"""How many students does the app hold? A ramp of simulated browser tabs against servers this script starts.

    .venv/bin/python benchmarks/bench_load.py                       # one process, started by scripts/serve_app.py
    .venv/bin/python benchmarks/bench_load.py --procs 2             # two behind HAProxy (scripts/serve.sh)
    .venv/bin/python benchmarks/bench_load.py --ramp 2 --seconds 10 # a smoke run

Each simulated student is a websocket session of the project's protocol client (tests/serving/st_client.py): it
opens one lesson (spread round-robin over --pages), then moves one slider by one step every 3-5 s (uniform
jitter). A rerun's latency is from sending its BackMsg to ``script_finished``: what a student waits for until the
whole page has settled. Students are kept from level to level (a ramp of 1, 10, 25, 50, 100 adds 9, 15, ...).

Per level it prints: reruns completed (sent inside the level's window), p50 / p95 latency, errors (exception
elements, error alerts, script errors, failed joins, reruns slower than --slow-s, lost ones), the server
processes' CPU-ms per completed rerun (utime + stime from /proc/PID/stat over the window, divided by its reruns;
joins are in the CPU too), their summed RSS at the window's end, and this client's own CPU (when it nears 100 %
the client is part of the latency). Measured, not asserted.

Bounded: at most MAX_USERS sessions, every level lasts --seconds, every wait is capped (--hard-timeout), the
servers listen on 127.0.0.1 only and are stopped at the end. Run it on a quiet machine: the numbers are the
machine's as much as the app's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # a script, not a test: find the project's client beside it

from tests.serving.conftest import free_port, healthy, stop, wait_until_healthy  # noqa: E402
from tests.serving.st_client import Run, Session  # noqa: E402

MAX_USERS = 200
PAGES = ("/", "/prefill_decode", "/agent_1m", "/attention_variants")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Record:
    kind: str  # "join", "rerun" or "error"
    sent_at: float  # wall clock, when the BackMsg went (an error: when it happened)
    seconds: float = 0.0
    detail: str = ""


@dataclass
class Level:
    users: int
    started_at: float
    ended_at: float
    server_cpu_s: float
    client_cpu_s: float
    rss_mb: float
    records: list[Record] = field(default_factory=list)


def process_cpu_s(pid: int) -> float:
    """utime + stime of one process, in seconds (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def process_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@contextlib.contextmanager
def one_process(log_dir: Path) -> Iterator[tuple[str, list[int]]]:
    """The app in one process, started warm by the launcher; yields (URL, server PIDs)."""
    port = free_port()
    command = [
        sys.executable, str(ROOT / "scripts" / "serve_app.py"),
        "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
    ]  # fmt: skip
    with (log_dir / "server.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
        yield url, [process.pid]
    finally:
        stop(process)


@contextlib.contextmanager
def behind_balancer(procs: int, log_dir: Path) -> Iterator[tuple[str, list[int]]]:
    """``scripts/serve.sh --procs N`` on loopback; yields (URL, the Streamlit processes' PIDs)."""
    port = free_port()
    command = ["bash", "scripts/serve.sh", "--procs", str(procs), "--port", str(port), "--bind", "127.0.0.1"]
    with (log_dir / "serve.log").open("wb") as log:
        process = subprocess.Popen([*command, "--no-install"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    run_dir = ROOT / ".tmp" / "serve" / str(port)
    try:
        deadline = time.monotonic() + 300
        while not healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"scripts/serve.sh did not come up; see {log_dir / 'serve.log'}")
            time.sleep(0.2)
        yield url, [int((run_dir / f"app{i}.pid").read_text()) for i in range(1, procs + 1)]
    finally:
        subprocess.run(["bash", "scripts/serve.sh", "stop", "--port", str(port)], cwd=ROOT, timeout=120)
        process.wait(timeout=60)


def run_errors(run: Run, slow_s: float, what: str) -> list[str]:
    errors = [f"{what}: {error}" for error in run.errors]
    if run.status is not None and run.seconds > slow_s:
        errors.append(f"{what} slower than {slow_s:.0f} s")
    return errors


async def student(uid: int, url: str, page: str, end_at: float, records: list[Record], opts) -> None:
    """One tab: open the page, then a slider move every think time until the ramp ends."""
    rng = random.Random(opts.seed * 100_003 + uid)
    sent_at = time.time()
    try:
        async with Session(url, page, timeout_s=opts.hard_timeout) as tab:
            join = await tab.open()
            records.append(Record("join", sent_at, join.seconds, page))
            records.extend(Record("error", sent_at, detail=e) for e in run_errors(join, opts.slow_s, "join"))
            while (wait := min(rng.uniform(3.0, 5.0), end_at - time.time())) > 0:
                await asyncio.sleep(wait)
                if time.time() >= end_at:
                    break
                sent_at = time.time()
                run = await tab.move_slider(rng)
                if run is None:
                    records.append(Record("error", sent_at, detail=f"no slider on {page}"))
                    return
                if run.status is not None:
                    records.append(Record("rerun", sent_at, run.seconds, page))
                records.extend(Record("error", sent_at, detail=e) for e in run_errors(run, opts.slow_s, "rerun"))
                if run.status is None:  # lost: no script_finished within the hard timeout
                    return
    except Exception as error:  # a refused or dropped websocket is a result, not a crash of the benchmark
        records.append(Record("error", time.time(), detail=f"{page}: {type(error).__name__}: {error}"[:200]))


async def ramp(url: str, server_pids: list[int], opts) -> list[Level]:
    levels_users = [min(MAX_USERS, int(n)) for n in opts.ramp.split(",")]
    pages = [p.strip() for p in opts.pages.split(",") if p.strip()]
    end_at = time.time() + len(levels_users) * opts.seconds
    records: list[Record] = []
    tasks: list[asyncio.Task[None]] = []
    levels: list[Level] = []
    for users in levels_users:
        started_at = time.time()
        cpu0 = sum(process_cpu_s(pid) for pid in server_pids)
        client0 = time.process_time()
        joining = range(len(tasks), users)
        for uid in joining:  # new students join spread over the level's first seconds, not in one burst
            tasks.append(asyncio.create_task(student(uid, url, pages[uid % len(pages)], end_at, records, opts)))
            await asyncio.sleep(min(5.0, opts.seconds / 4) / max(1, len(joining)))
        await asyncio.sleep(max(0.0, started_at + opts.seconds - time.time()))
        ended_at = time.time()
        level = Level(
            users=users,
            started_at=started_at,
            ended_at=ended_at,
            server_cpu_s=sum(process_cpu_s(pid) for pid in server_pids) - cpu0,
            client_cpu_s=time.process_time() - client0,
            rss_mb=sum(process_rss_mb(pid) for pid in server_pids),
        )
        levels.append(level)
        print(f"  level {users} users done", file=sys.stderr, flush=True)
    # The last reruns sent before the end finish (or are lost) within the hard timeout.
    await asyncio.wait(tasks, timeout=opts.hard_timeout + 10)
    for task in tasks:
        task.cancel()
    for level in levels:
        level.records = [r for r in records if level.started_at <= r.sent_at < level.ended_at]
    return levels


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


def report(levels: list[Level]) -> str:
    header = f"{'users':>5} {'reruns':>6} {'p50 ms':>7} {'p95 ms':>7} {'errors':>6} {'CPU-ms/rr':>9} "
    header += f"{'RSS MB':>7} {'join p95':>8} {'client CPU%':>11}"
    lines = [header]
    for level in levels:
        reruns = [r.seconds for r in level.records if r.kind == "rerun"]
        joins = [r.seconds for r in level.records if r.kind == "join"]
        errors = [r for r in level.records if r.kind == "error"]
        cpu_ms = f"{level.server_cpu_s * 1000 / len(reruns):.0f}" if reruns else "-"
        window = max(1e-9, level.ended_at - level.started_at)
        lines.append(
            f"{level.users:>5} {len(reruns):>6} {ms(statistics.median(reruns) if reruns else None):>7} "
            f"{ms(percentile(reruns, 0.95)):>7} {len(errors):>6} {cpu_ms:>9} {level.rss_mb:>7.0f} "
            f"{ms(percentile(joins, 0.95)):>8} {100 * level.client_cpu_s / window:>11.0f}"
        )
    kinds: dict[str, int] = {}
    for level in levels:
        for r in level.records:
            if r.kind == "error":
                kinds[r.detail] = kinds.get(r.detail, 0) + 1
    for detail, count in sorted(kinds.items(), key=lambda item: -item[1])[:10]:
        lines.append(f"  {count} x {detail}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--procs", type=int, default=1, help="1: the launcher alone; N > 1: scripts/serve.sh")
    parser.add_argument("--ramp", default="1,10,25,50,100", help=f"students per level (at most {MAX_USERS})")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each level")
    parser.add_argument("--pages", default=",".join(PAGES), help="pages, given round-robin to the students")
    parser.add_argument("--slow-s", type=float, default=10.0, help="a join or rerun slower than this is an error")
    parser.add_argument("--hard-timeout", type=float, default=60.0, help="a run unfinished after this is lost")
    parser.add_argument("--seed", type=int, default=1)
    opts = parser.parse_args()
    if not 1 <= opts.procs <= 64 or not 1 <= opts.seconds <= 3600:
        parser.error("--procs must be 1..64 and --seconds 1..3600")

    log_dir = ROOT / ".tmp" / "bench_load"
    log_dir.mkdir(parents=True, exist_ok=True)
    serving = one_process(log_dir) if opts.procs == 1 else behind_balancer(opts.procs, log_dir)
    with serving as (url, server_pids):
        print(f"bench_load: {opts.procs} process(es) at {url}, ramp {opts.ramp}, {opts.seconds:.0f} s per level")
        levels = asyncio.run(ramp(url, server_pids, opts))
    print(report(levels))


if __name__ == "__main__":
    main()
