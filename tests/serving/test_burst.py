"""A fresh server, started by the warm launcher, takes a burst of joins without an error (issue 16).

Twenty sessions open twenty different pages at the same moment, right after the health check first answers:
without the launcher, concurrent first imports of pandas and of the charts modules gave "partially initialized
module" errors on a fresh server. Every wait is on a signal (health, ``script_finished``) with generous limits,
so a busy 2-core machine is slow here, not red.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from course import lessons

from .conftest import ROOT, launched_app
from .st_client import Run, Session, run_sync

pytestmark = pytest.mark.serving

SESSIONS = 20
#: One page load on a saturated machine with 19 others running: far above the few seconds it takes.
RUN_TIMEOUT_S = 300


def burst_pages() -> list[str]:
    """Every lesson page (the default one at ``/``), then Portuguese versions until there are SESSIONS URLs."""
    stems = sorted(path.stem for path in (ROOT / "lessons").glob("*.py"))
    pages = ["/"] + [f"/{stem}" for stem in stems if stem != lessons.DEFAULT_STEM]
    for page in list(pages):
        if len(pages) >= SESSIONS:
            break
        pages.append(f"{page}?lang=pt")
    return pages[:SESSIONS]


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory) -> Iterator[tuple[str, float, Path, Path]]:
    """(URL, time health first answered, the launcher's warm report, the server log) of a fresh server."""
    folder = tmp_path_factory.mktemp("serve_app")
    report, log = folder / "warm.json", folder / "server.log"
    with launched_app(log, env={"KVLAB_WARM_REPORT": str(report)}) as (url, answered_at):
        yield url, answered_at, report, log


async def open_all(url: str, pages: list[str]) -> list[Run]:
    async def one(page: str) -> Run:
        async with Session(url, page, timeout_s=RUN_TIMEOUT_S) as tab:
            return await tab.open()

    return await asyncio.gather(*(one(page) for page in pages))


def test_health_answers_only_once_every_module_is_imported(fresh_server):
    _url, answered_at, report_path, _log = fresh_server
    # The launcher writes the report after its imports and before Streamlit listens.
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["finished_at"] <= answered_at
    loaded = set(report["sys_modules"])
    project = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for package in ("kvcore", "course", "charts", "ui", "i18n")
        for path in (ROOT / package).rglob("*.py")
    } - {"kvcore.__main__"}
    assert project - loaded == set()
    assert {"pandas", "numpy", "plotly.graph_objects", "plotly.subplots", "streamlit.elements.plotly_chart"} <= loaded


def test_twenty_joins_at_once_on_a_fresh_server_see_no_error(fresh_server):
    url, _answered_at, _report, log = fresh_server
    pages = burst_pages()
    assert len(set(pages)) == SESSIONS
    assert {"/", "/prefill_decode", "/agent_1m", "/attention_variants"} <= set(pages)
    started = time.monotonic()
    runs = run_sync(open_all(url, pages))
    failures = {
        page: run.errors or [f"status {run.status}"] for page, run in zip(pages, runs, strict=True) if not run.ok
    }
    assert failures == {}, f"after {time.monotonic() - started:.1f} s; server log: {log}"
    assert all(run.messages > 5 for run in runs)  # each page drew something, not just an empty frame
    assert "Traceback" not in log.read_text(encoding="utf-8", errors="replace")
