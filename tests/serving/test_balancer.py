"""scripts/serve.sh: two warm Streamlit processes behind HAProxy, sticky by cookie, assets gzipped and cached."""

from __future__ import annotations

import gzip
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ROOT, START_TIMEOUT_S, free_port, healthy
from .st_client import Session, run_sync

pytestmark = [pytest.mark.serving, pytest.mark.balancer]

PROCS = 2


def free_port_pair() -> int:
    """A port B with B and B + 1 free (serve.sh puts its processes on consecutive ports)."""
    for _ in range(50):
        base = free_port()
        with socket.socket() as first, socket.socket() as second:
            try:
                first.bind(("127.0.0.1", base))
                second.bind(("127.0.0.1", base + 1))
            except OSError:
                continue
        return base
    raise RuntimeError("no two consecutive free ports")


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, list[str]], bytes]:
    """(status, headers by lower-case name, body) of a GET."""
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=60) as response:
        found: dict[str, list[str]] = {}
        for name, value in response.headers.items():
            found.setdefault(name.lower(), []).append(value)
        return response.status, found, response.read()


@pytest.fixture(scope="module")
def balancer(tmp_path_factory) -> Iterator[tuple[str, int, subprocess.Popen[bytes]]]:
    """(URL, port, the serve.sh process) of `scripts/serve.sh --procs 2` on loopback."""
    port, backend_port = free_port(), free_port_pair()
    log = tmp_path_factory.mktemp("serve_sh") / "serve.log"
    command = [
        "bash", "scripts/serve.sh", "--procs", str(PROCS), "--port", str(port), "--bind", "127.0.0.1",
        "--backend-port", str(backend_port), "--no-install",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not healthy(url):
            assert process.poll() is None, f"serve.sh exited with {process.returncode}: {log.read_text()}"
            assert time.monotonic() < deadline, f"no answer through HAProxy within {START_TIMEOUT_S} s"
            time.sleep(0.2)
        yield url, port, process
    finally:
        subprocess.run(["bash", "scripts/serve.sh", "stop", "--port", str(port)], cwd=ROOT, timeout=120)
        process.wait(timeout=60)


def test_health_answers_through_the_balancer(balancer):
    url, _port, _process = balancer
    status, headers, body = get(url + "/_stcore/health")
    assert (status, body) == (200, b"ok")
    assert headers["x-served-by"][0] in {"app1", "app2"}


def test_new_visitors_spread_and_each_gets_a_sticky_cookie(balancer):
    url, _port, _process = balancer
    served = []
    for _ in range(6):
        _status, headers, _body = get(url + "/")
        backend = headers["x-served-by"][0]
        assert headers["set-cookie"] == [f"SERVERID={backend}; path=/; HttpOnly"]
        served.append(backend)
    assert set(served) == {"app1", "app2"}


@pytest.mark.parametrize("backend", ["app1", "app2"])
def test_a_session_sticks_to_its_backend(balancer, backend):
    url, _port, _process = balancer
    cookie = {"Cookie": f"SERVERID={backend}"}
    for path in ["/", "/prefill_decode", "/_stcore/health", "/favicon.png"] * 3:
        _status, headers, _body = get(url + path, cookie)
        assert headers["x-served-by"] == [backend], path
        # The cookie is valid: HAProxy sets no new one (Streamlit may set its own XSRF cookie).
        assert not [c for c in headers.get("set-cookie", []) if c.startswith("SERVERID=")], path

    async def websocket_session() -> tuple[str | None, bool, list[str]]:
        async with Session(url, "/prefill_decode", timeout_s=START_TIMEOUT_S, headers=cookie) as tab:
            run = await tab.open()
            return tab.upgrade_header("x-served-by"), run.ok, run.errors

    served_by, ok, errors = run_sync(websocket_session())
    assert (served_by, ok, errors) == (backend, True, [])


def test_javascript_comes_back_gzipped_and_cacheable(balancer):
    url, _port, _process = balancer
    cookie = {"Cookie": "SERVERID=app1"}
    _status, _headers, html = get(url + "/", cookie)
    script = re.search(r'src="\.?(/static/js/[^"]+\.js)"', html.decode()).group(1)
    _status, plain_headers, plain = get(url + script, cookie)
    _status, headers, body = get(url + script, {**cookie, "Accept-Encoding": "gzip"})
    assert headers["content-encoding"] == ["gzip"]
    assert "content-encoding" not in plain_headers  # only for a client that asks
    assert gzip.decompress(body) == plain
    assert len(body) < len(plain) / 2
    assert headers["cache-control"] == ["public, max-age=31536000, immutable"]


def test_static_files_are_compressed_once_and_then_served_from_the_cache(balancer):
    """/static/ answers pass a round-robin hop that gzips them, and the cache keeps the gzipped answer: without the
    cache, four requests would alternate between app1 and app2; from the cache, all four name the first. The cache
    was the fix for 50 first visits at once taking 9.7 s each (benchmarks/bench_first_visit.py)."""
    url, _port, _process = balancer
    _status, _headers, html = get(url + "/", {"Cookie": "SERVERID=app1"})
    script = re.search(r'src="\.?(/static/js/[^"]+\.js)"', html.decode()).group(1)
    answers = [get(url + script, {"Accept-Encoding": "gzip"}) for _ in range(4)]
    assert {status for status, _headers, _body in answers} == {200}
    assert len({headers["x-served-by"][0] for _status, headers, _body in answers}) == 1
    assert all(headers["content-encoding"] == ["gzip"] for _status, headers, _body in answers)
    assert len({body for _status, _headers, body in answers}) == 1
    assert not [h for _status, h, _body in answers if any(c.startswith("SERVERID=") for c in h.get("set-cookie", []))]
    # A client that takes no gzip gets the plain file, never the gzipped copy the cache keeps.
    _status, plain_headers, plain = get(url + script)
    assert "content-encoding" not in plain_headers and gzip.decompress(answers[0][2]) == plain


def test_stop_ends_haproxy_and_every_process(balancer):
    _url, port, process = balancer
    run_dir = ROOT / ".tmp" / "serve" / str(port)
    pids = {path.stem: int(path.read_text()) for path in run_dir.glob("*.pid")}
    assert set(pids) == {"serve", "haproxy", "app1", "app2"}
    subprocess.run(["bash", "scripts/serve.sh", "stop", "--port", str(port)], cwd=ROOT, timeout=120, check=True)
    process.wait(timeout=60)
    alive = {name for name, pid in pids.items() if Path(f"/proc/{pid}").exists() and not zombie(pid)}
    assert alive == set()
    assert list(run_dir.glob("*.pid")) == []


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False
