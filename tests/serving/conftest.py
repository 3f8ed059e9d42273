"""Serving fixtures: the app started by the warm launcher (scripts/serve_app.py) on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "scripts" / "serve_app.py"
HEALTH = "/_stcore/health"
#: A fresh server imports ~500 modules before it answers: seconds on a quiet machine, far more on a busy one.
START_TIMEOUT_S = 300
BALANCERS = ("haproxy",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Without HAProxy, balancer tests skip locally but fail in CI (scripts/test.sh installs it)."""
    if shutil.which("haproxy") or os.environ.get("CI"):
        return
    skip = pytest.mark.skip(reason="haproxy is missing: run scripts/test.sh or apt-get install haproxy")
    for item in items:
        if "balancer" in item.keywords:
            item.add_marker(skip)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(url: str) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(url + HEALTH, timeout=5) as response:
        return response.status == 200
    return False


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], timeout_s: float = START_TIMEOUT_S) -> float:
    """Poll the health check until it answers; returns the wall-clock time it first did."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with code {process.returncode} before answering")
        if healthy(url):
            return time.time()
        time.sleep(0.05)
    raise RuntimeError(f"{url}{HEALTH} did not answer within {timeout_s} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def launched_app(log_path: Path, env: dict[str, str] | None = None) -> Iterator[tuple[str, float]]:
    """A fresh server started by the launcher; yields (URL, wall-clock time its health check first answered)."""
    port = free_port()
    command = [
        sys.executable, str(LAUNCHER),
        "--server.headless", "true",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--client.showErrorDetails", "full",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
        url = f"http://127.0.0.1:{port}"
        try:
            yield url, wait_until_healthy(url, process)
        finally:
            stop(process)
