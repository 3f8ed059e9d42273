"""Browser fixtures: Debian's Chromium driven by Playwright, and the app served by `streamlit run`."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, expect

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Streamlit's own signal that the script finished and the websocket is up (TOOLCHAIN.md).
IDLE = "[data-testid=stApp][data-test-script-state=notRunning][data-test-connection-state=CONNECTED]"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
START_TIMEOUT_S = 120
#: Limits for Playwright's waits. Every wait is on a signal (the app idle, a chart's data, the URL), never a fixed
#: pause, so a long limit costs nothing on a quiet machine and keeps a busy 2-core CI machine from failing.
STEP_TIMEOUT_MS = 60_000


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Without Chromium, browser tests skip locally but fail in CI (scripts/test.sh installs it)."""
    if CHROMIUM.exists() or os.environ.get("CI"):
        return
    skip = pytest.mark.skip(reason=f"{CHROMIUM} is missing: run scripts/test.sh or apt-get install chromium")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, tmp_path_factory):
    """Launch Debian's Chromium; keep its profile files out of $HOME."""
    home = tmp_path_factory.mktemp("chromium-home")
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS, "env": env}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def served_app(log_path: Path) -> Iterator[str]:
    """The app as `scripts/app.sh` serves it (scripts/serve_app.py), on a free local port; stopped by PID."""
    port = free_port()
    command = [
        sys.executable, "scripts/serve_app.py",  # the app's own launcher: every module imported before it serves
        "--server.headless", "true",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--client.showErrorDetails", "full",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_healthy(url, process)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {process.returncode} before answering")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
            if response.status == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"streamlit did not answer {url}/_stcore/health within {START_TIMEOUT_S} s")


@pytest.fixture(scope="session")
def app_url(tmp_path_factory) -> Iterator[str]:
    """One server for the whole browser session."""
    with served_app(tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


@pytest.fixture
def fresh_app_url(tmp_path) -> Iterator[str]:
    """A server of its own, for a test whose request must be the first one after start."""
    with served_app(tmp_path / "server.log") as url:
        yield url


def patient(context: BrowserContext) -> BrowserContext:
    """A context whose pages wait as long as a loaded machine needs (STEP_TIMEOUT_MS; navigation twice that)."""
    context.set_default_timeout(STEP_TIMEOUT_MS)
    context.set_default_navigation_timeout(2 * STEP_TIMEOUT_MS)
    return context


@pytest.fixture
def context(context: BrowserContext) -> BrowserContext:
    """pytest-playwright's context, patient (its pages, and the pages a test opens in it)."""
    return patient(context)


# `expect(...)` waits 5 s by default; give it the same patience.
expect.set_options(timeout=STEP_TIMEOUT_MS)


@pytest.fixture(scope="session")
def screenshots_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
