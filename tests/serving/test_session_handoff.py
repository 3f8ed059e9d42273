"""The launcher hands a script run's messages to the event loop in batches, in order (scripts/serve_app.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

from streamlit.runtime.app_session import AppSession
from streamlit.runtime.runtime import Runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import serve_app


def on_a_fresh_thread(test):  # type: ignore[no-untyped-def]
    """Run the test in a thread of its own: an earlier test of the suite may leave a loop marked running here."""

    @functools.wraps(test)
    def run(*args, **kwargs):  # type: ignore[no-untyped-def]
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(test, *args, **kwargs).result()

    return run


class CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that counts its wake-ups from other threads."""

    wakeups = 0

    def call_soon_threadsafe(self, callback, *args, context=None):  # type: ignore[no-untyped-def]
        self.wakeups += 1
        return super().call_soon_threadsafe(callback, *args, context=context)


@on_a_fresh_thread
def test_callbacks_sent_while_the_loop_is_busy_run_in_order_after_one_wakeup():
    loop = CountingLoop()
    handoff = serve_app._Handoff(loop)
    ran: list[int] = []
    sender = threading.Thread(target=lambda: [handoff.add(lambda n=n: ran.append(n)) for n in range(200)])
    sender.start()  # the loop is not running yet: busy, as when it serves other sessions
    sender.join()
    loop.run_until_complete(asyncio.sleep(0.01))
    loop.close()
    assert ran == list(range(200))
    assert loop.wakeups == 1


@on_a_fresh_thread
def test_a_callback_queued_during_a_drain_runs_on_the_next_turn_after_the_others():
    loop = CountingLoop()
    handoff = serve_app._Handoff(loop)
    ran: list[str] = []

    def first() -> None:
        ran.append("first")
        handoff.add(lambda: ran.append("queued by first"))
        loop.call_soon(lambda: ran.append("scheduled on the loop by first"))

    handoff.add(first)
    handoff.add(lambda: ran.append("second"))
    loop.run_until_complete(asyncio.sleep(0.01))
    loop.close()
    assert ran == ["first", "second", "scheduled on the loop by first", "queued by first"]
    assert not handoff.scheduled and not handoff.callbacks


def keep_streamlits_methods(monkeypatch) -> None:
    """Put Streamlit's own methods back after the test (the launcher replaces them for the whole process)."""
    monkeypatch.setattr(AppSession, "_call_soon_on_event_loop", AppSession._call_soon_on_event_loop)
    monkeypatch.setattr(Runtime, "_enqueued_some_message", Runtime._enqueued_some_message)


def test_the_pinned_streamlit_has_the_methods_the_launcher_replaces(monkeypatch):
    """If a Streamlit upgrade renames one, this fails instead of the batching silently going away."""
    keep_streamlits_methods(monkeypatch)
    assert serve_app.batch_session_wakeups()
    assert AppSession._call_soon_on_event_loop.__module__ == serve_app.__name__
    assert Runtime._enqueued_some_message is serve_app.enqueued_some_message


@on_a_fresh_thread
def test_a_message_enqueued_on_the_loop_sets_the_send_event_without_a_wakeup():
    loop = CountingLoop()
    objects = SimpleNamespace(eventloop=loop, need_send_data=asyncio.Event())
    runtime = SimpleNamespace(_get_async_objs=lambda: objects)

    async def on_the_loop() -> None:
        serve_app.enqueued_some_message(runtime)  # type: ignore[arg-type]

    loop.run_until_complete(on_the_loop())
    assert objects.need_send_data.is_set() and loop.wakeups == 0
    objects.need_send_data.clear()
    sender = threading.Thread(target=serve_app.enqueued_some_message, args=(runtime,))
    sender.start()
    sender.join()
    loop.run_until_complete(asyncio.sleep(0.01))
    loop.close()
    assert objects.need_send_data.is_set() and loop.wakeups == 1


def test_a_session_whose_loop_closed_drops_its_messages_as_streamlit_does(monkeypatch):
    keep_streamlits_methods(monkeypatch)
    serve_app.batch_session_wakeups()
    loop = asyncio.new_event_loop()
    loop.close()
    session = SimpleNamespace(_event_loop=loop)  # all of a session the method reads
    AppSession._call_soon_on_event_loop(session, lambda: None)  # no "Event loop is closed"


@on_a_fresh_thread
def test_a_failing_callback_is_reported_and_the_session_keeps_its_messages():
    """As the loop does for a failing callback: reported, and the ones after it (and later batches) still run."""
    loop = CountingLoop()
    reported: list[BaseException] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context["exception"]))
    handoff = serve_app._Handoff(loop)
    ran: list[str] = []

    def fails() -> None:
        raise ValueError("a broken message")

    handoff.add(fails)
    handoff.add(lambda: ran.append("after it"))
    loop.run_until_complete(asyncio.sleep(0.01))
    handoff.add(lambda: ran.append("next batch"))
    loop.run_until_complete(asyncio.sleep(0.01))
    loop.close()
    assert ran == ["after it", "next batch"]
    assert [str(error) for error in reported] == ["a broken message"]
