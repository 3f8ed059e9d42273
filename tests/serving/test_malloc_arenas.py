"""The launcher caps glibc's malloc arenas: session threads share two instead of one each (scripts/serve_app.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Eight live threads allocate, then glibc's malloc_stats() prints one "Arena N:" block per arena to stderr.
PROGRAM = """
import ctypes, ctypes.util, sys, threading
sys.path.insert(0, {scripts!r})
import serve_app
limited = serve_app.limit_malloc_arenas() if {limit} else False
everyone = threading.Barrier(8)
def allocate():
    kept = [bytearray(4096) for _ in range(200)]
    everyone.wait()  # all eight alive at once, as sessions' threads are: an exited thread's arena is reused
threads = [threading.Thread(target=allocate) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(limited, flush=True)
ctypes.CDLL(ctypes.util.find_library("c")).malloc_stats()
"""


def arenas(limit: bool, **env: str) -> tuple[str, int]:
    """(what limit_malloc_arenas returned, arenas glibc reports) after eight threads allocated."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(scripts=str(ROOT / "scripts"), limit=limit)],
        env={**{k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip(), sum(line.startswith("Arena ") for line in done.stderr.splitlines())


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")


def test_without_the_cap_each_thread_gets_an_arena_of_its_own():
    _, count = arenas(limit=False)
    assert count > 2  # glibc's default: up to 8 per core, one per new thread until then


def test_the_launcher_caps_the_process_at_two_arenas():
    limited, count = arenas(limit=True)
    assert limited == "True"
    assert count == 2


def test_an_explicit_malloc_arena_max_is_left_to_glibc():
    limited, count = arenas(limit=True, MALLOC_ARENA_MAX="3")
    assert limited == "False"
    assert count == 3
