"""Serve the app warm: import every module it uses, then start Streamlit in this same process.

    .venv/bin/python scripts/serve_app.py [streamlit run flags, e.g. --server.port 8600]

Why: Streamlit runs each session's script in its own thread, and a module is imported on its first use. When
many students join a fresh server at once, several threads import pandas or a charts module at the same moment
and some get a half-built module ("partially initialized module 'pandas' has no attribute 'Series'", "cannot
import name 'batch_intensity_figure'"). Importing everything here, before the server listens, removes the race,
and it makes ``/_stcore/health`` a true readiness signal: it answers only once the app is warm, so a load
balancer or a Kubernetes readiness probe sends no student to a cold process.

What is imported (discovered, not listed by hand, so a new module is covered without editing this file):
- every module of the project's packages (kvcore, course, charts, ui, i18n), found by walking them;
- every ``import`` of app.py and of lessons/*.py, found by parsing them with ``ast`` (the lessons are scripts:
  they are parsed, never run here);
- the third-party modules those import lazily on a first chart or table (THIRD_PARTY below), and every
  Plotly graph object the project's code names (``go.Scatter`` ...) with the modules of its nested properties
  (``plotly.graph_objs.scatter.*``, ``plotly.graph_objs.layout.*``), which Plotly imports on first access
  (about 400 small modules: 0.6 s, 9 MB).

Memory: Streamlit runs each session's script in a thread of its own, and glibc gives threads that allocate at the
same moment arenas of their own (up to eight per core), each keeping the freed blocks it holds. The launcher limits
the process to ``MALLOC_ARENAS`` (``mallopt(M_ARENA_MAX)``, what the ``MALLOC_ARENA_MAX`` environment variable
sets): with the interpreter lock only one script thread runs at a time, so the arenas bought no speed, and a class
of 50 cost 14 MB less on one server (benchmarks/bench_memory.py, 298 → 284 MB at the peak).

With ``KVLAB_WARM_REPORT=PATH`` in the environment the launcher writes, after importing and before starting
Streamlit, a JSON report to PATH: the modules it imported and the time it finished (tests/serving reads it).
"""

from __future__ import annotations

import ast
import asyncio
import ctypes
import ctypes.util
import importlib
import json
import os
import pkgutil
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamlit.runtime.runtime import Runtime

ROOT = Path(__file__).resolve().parents[1]
#: The project's packages: every module in them is imported.
PACKAGES = ("kvcore", "course", "charts", "ui", "i18n")
#: Scripts whose imports are parsed (Streamlit runs them per session; importing them would run a page).
SCRIPTS = ("app.py", "lessons/*.py")
#: Modules that must not be imported: running them does something (the command line).
SKIP = frozenset({"kvcore.__main__"})
#: Third-party modules that Streamlit, Plotly or pandas import lazily, on the first chart, table or widget of a
#: session, rather than at ``import streamlit`` / ``import plotly``.
THIRD_PARTY = (
    "numpy",
    "pandas",
    "plotly",
    "plotly.graph_objects",
    "plotly.io",
    "plotly.io.json",
    "plotly.subplots",
    "plotly.shapeannotation",
    "streamlit",
    "streamlit.elements.plotly_chart",
    "streamlit.elements.lib.column_config_utils",
    "streamlit.dataframe_util",
    "streamlit.type_util",
    "streamlit.emojis",
    "streamlit.material_icon_names",
    "streamlit.runtime.scriptrunner.magic_funcs",
    "streamlit.components.v2.manifest_scanner",
    "pyarrow",
    "pyarrow.pandas_compat",
    "narwhals",
)
#: ``go.Scatter``, ``go.layout.Annotation``: the Plotly names the project's code uses, imported on first access.
_GRAPH_OBJECT = re.compile(r"\bgo\.((?:[a-z_]+\.)*[A-Z]\w*)")
REPORT_ENV = "KVLAB_WARM_REPORT"
#: ``KVLAB_BATCH_WAKEUPS=0`` turns off ``batch_session_wakeups`` (to measure what it saves).
BATCH_ENV = "KVLAB_BATCH_WAKEUPS"
#: What ``batch_session_wakeups`` replaces in Streamlit 1.67: (module, class, method).
PATCHED = (
    ("streamlit.runtime.app_session", "AppSession", "_call_soon_on_event_loop"),
    ("streamlit.runtime.runtime", "Runtime", "_enqueued_some_message"),
)
#: What ``index_config_sections`` replaces: (module, function).
SECTIONS_PATCHED = ("streamlit.config", "get_options_for_section")
#: The attribute of an AppSession holding its ``_Handoff``.
HANDOFF_ATTRIBUTE = "_kvlab_handoff"
#: glibc malloc arenas the server may use (``MALLOC_ARENA_MAX`` when set wins); glibc's own default is 8 per core.
MALLOC_ARENAS = 2
#: ``M_ARENA_MAX`` in glibc's <malloc.h>.
_M_ARENA_MAX = -8


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas before any thread starts (``mallopt(M_ARENA_MAX, arenas)``); False if not glibc.

    An explicit ``MALLOC_ARENA_MAX`` in the environment is left to glibc, which has already read it.
    """
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))


def package_modules(package: str) -> list[str]:
    """Every module of ``package`` (itself included), found by walking its folder."""
    module = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(module.__path__, prefix=f"{package}."):
        if info.name not in SKIP:
            names.append(info.name)
    return names


def script_imports(path: Path) -> list[str]:
    """The modules a script's ``import`` statements name, in order (relative imports are not used by scripts)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            # `from ui import lesson` imports the submodule ui.lesson; `from kvcore import NAME` names a value.
            names.extend(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def graph_object_names(roots: Iterable[Path]) -> list[str]:
    """The ``go.X`` / ``go.layout.X`` names used in the project's Python files."""
    found: set[str] = set()
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            found.update(_GRAPH_OBJECT.findall(path.read_text(encoding="utf-8")))
    return sorted(found)


def import_name(name: str) -> bool:
    """Import ``name`` as a module; False when it names a value in a module rather than a module."""
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        # `from kvcore import units_of` names a function: its parent module is imported, nothing to do.
        if error.name == name and "." in name:
            return False
        raise
    return True


def warm() -> list[str]:
    """Import everything the app uses; returns the modules imported, in order. Any import error is raised."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    wanted: list[str] = list(THIRD_PARTY)
    for package in PACKAGES:
        wanted.extend(package_modules(package))
    for pattern in SCRIPTS:
        for path in sorted(ROOT.glob(pattern)):
            wanted.extend(script_imports(path))
    imported = [name for name in dict.fromkeys(wanted) if name not in SKIP and import_name(name)]
    imported.extend(plotly_graph_objects(graph_object_names(ROOT / package for package in PACKAGES)))
    return imported


def plotly_graph_objects(names: list[str]) -> list[str]:
    """Import the Plotly classes named (``Scatter``, ``layout.Template``) and their property modules."""
    go = importlib.import_module("plotly.graph_objects")
    for dotted in names:
        target: object = go
        for part in dotted.split("."):
            target = getattr(target, part)
    # A trace's nested properties (scatter.Line, layout.xaxis.Title) live in plotly.graph_objs.<trace>.*.
    imported: list[str] = []
    for folder in sorted({dotted.split(".")[0].lower() for dotted in names} | {"layout"}):
        try:
            package = importlib.import_module(f"plotly.graph_objs.{folder}")
        except ModuleNotFoundError:  # Figure has no property package
            continue
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
            importlib.import_module(info.name)
            imported.append(info.name)
    return imported


class _Handoff:
    """One session's callbacks from its script thread, run in order on the event loop, one wake-up per batch.

    ``add`` (any thread) queues a callback and wakes the loop only when no drain is pending; ``drain`` (the
    loop) runs what was queued when it started, and what arrives meanwhile waits for the next turn of the loop,
    as separately scheduled callbacks would.
    """

    __slots__ = ("callbacks", "lock", "loop", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.callbacks: deque[Callable[[], None]] = deque()
        self.scheduled = False

    def add(self, callback: Callable[[], None]) -> None:
        """Queue `callback`; wake the loop only if no drain is already on its way."""
        with self.lock:
            self.callbacks.append(callback)
            if self.scheduled:
                return
            self.scheduled = True
        self.loop.call_soon_threadsafe(self.drain)

    def drain(self) -> None:
        """Run the callbacks queued so far, in order (on the loop); later ones wait for the next loop turn."""
        with self.lock:
            batch = list(self.callbacks)
            self.callbacks.clear()
        for callback in batch:
            try:
                callback()
            except Exception as error:  # as the loop treats a failing callback: reported, the next ones still run
                self.loop.call_exception_handler({"message": "Exception in a session's callback", "exception": error})
        with self.lock:
            if self.callbacks:
                self.loop.call_soon(self.drain)
            else:
                self.scheduled = False


def batch_session_wakeups() -> bool:
    """Hand a script run's messages to the event loop in batches, one wake-up each, not one per element.

    Streamlit 1.67 sends every element a script draws from the script's thread to the event loop with its own
    ``call_soon_threadsafe`` (``AppSession._call_soon_on_event_loop``): a write to the loop's wake-up socket, a
    wake-up of the loop thread and a hand-over of the interpreter lock, about 100 times a rerun. Here the
    callbacks of one session queue up (``_Handoff``) and the loop is woken once for all that are waiting; they
    still run on the loop, in the order they were sent. As they run, each tells the runtime a message waits to
    be sent, which also went through ``call_soon_threadsafe`` (``Runtime._enqueued_some_message``): on the loop's
    own thread that is now a plain ``Event.set`` (``enqueued_some_message``). Off with ``KVLAB_BATCH_WAKEUPS=0``
    (to measure). False, and nothing replaced, when the Streamlit installed lacks one of the methods (``PATCHED``;
    tests/serving/test_session_handoff.py fails on the pinned release if one goes away).
    """
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    if not all(hasattr(getattr(importlib.import_module(module), owner), name) for module, owner, name in PATCHED):
        return False

    def call_soon_on_event_loop(self: AppSession, callback: Callable[[], None]) -> None:
        loop = self._event_loop
        if loop.is_closed():
            return
        handoff = self.__dict__.get(HANDOFF_ATTRIBUTE)
        if handoff is None or handoff.loop is not loop:
            handoff = self.__dict__[HANDOFF_ATTRIBUTE] = _Handoff(loop)
        try:
            handoff.add(callback)
        except RuntimeError:
            if not loop.is_closed():
                raise

    AppSession._call_soon_on_event_loop = call_soon_on_event_loop
    Runtime._enqueued_some_message = enqueued_some_message
    return True


def enqueued_some_message(self: Runtime) -> None:
    """``Runtime._enqueued_some_message`` without a wake-up from the loop's own thread, where the batches now run.

    Streamlit's sets its "messages to send" event through ``call_soon_threadsafe`` from any thread: a write
    to the loop's wake-up socket per message. On the loop's thread the event is set at once.
    """
    objects = self._get_async_objs()
    try:
        on_loop = asyncio.get_running_loop() is objects.eventloop
    except RuntimeError:  # no loop runs in this thread: a script's
        on_loop = False
    if on_loop:
        objects.need_send_data.set()
    else:
        objects.eventloop.call_soon_threadsafe(objects.need_send_data.set)


def index_config_sections() -> bool:
    """``config.get_options_for_section`` reading a section's options from an index, not a walk over all of them.

    Every script run sends the browser a ``new_session`` message with the theme, whose six sections Streamlit
    1.67 reads with ``get_options_for_section`` (``app_session._populate_theme_msg``): each call walks all
    ~190 config options to keep a section's, about 0.3 ms a rerun in all. Here a section's options are listed once
    per parsed config (a re-read of config.toml makes a new dict of options, and a new index) and their values
    are read at each call, so a changed value (``config.set_option``) is seen as before. False, and nothing
    replaced, when the Streamlit installed lacks the function (tests/serving/test_config_sections.py).
    """
    from streamlit import config

    module, name = SECTIONS_PATCHED
    if getattr(importlib.import_module(module), name, None) is None:
        return False
    indexed: dict[str, list[tuple[str, Any]]] = {}
    parsed: list[object] = [None]  # the options dict the index was made from (kept, so its id cannot be reused)

    def get_options_for_section(section: str) -> dict[str, Any]:
        with config._config_lock:
            options = config.get_config_options()
            if parsed[0] is not options:
                indexed.clear()
                parsed[0] = options
            members = indexed.get(section)
            if members is None:
                members = indexed[section] = [(o.name, o) for o in options.values() if o.section == section]
            return {option_name: option.value for option_name, option in members}

    config.get_options_for_section = get_options_for_section
    return True


def write_report(path: str, modules: list[str], seconds: float) -> None:
    report = {"modules": modules, "sys_modules": sorted(sys.modules), "warm_s": seconds, "finished_at": time.time()}
    Path(path).write_text(json.dumps(report), encoding="utf-8")


def main(argv: list[str]) -> None:
    os.chdir(ROOT)  # Streamlit reads .streamlit/config.toml from the working folder
    limit_malloc_arenas()
    started = time.perf_counter()
    from streamlit import config, logger
    from streamlit.web import bootstrap, cli

    # Read the config (files and flags) now, as `streamlit run` will: parsed first without the flags, Streamlit
    # would later warn that the [server] options changed, and each parse resets the log level set below.
    with cli.main_run.make_context("run", ["app.py", *argv]) as context:
        flags = {name: value for name, value in context.params.items() if name not in ("target", "args")}
    bootstrap.load_config_options(flag_options=flags)
    # Imported outside a session, Streamlit warns "missing ScriptRunContext" / "No runtime found" for each
    # cached function: expected here, and noise in the server's log.
    logger.set_log_level("ERROR")
    modules = warm()
    if os.environ.get(BATCH_ENV, "1") != "0":
        batch_session_wakeups()
    index_config_sections()
    logger.set_log_level(str(config.get_option("logger.level")).upper())
    seconds = time.perf_counter() - started
    print(f"serve_app: {len(modules)} modules imported in {seconds:.1f} s; starting Streamlit", flush=True)
    report = os.environ.get(REPORT_ENV)
    if report:
        write_report(report, modules, seconds)

    # Same as `streamlit run app.py ARGS`, in this process, so the imports above are the ones the sessions use.
    cli.main(args=["run", "app.py", *argv], prog_name="streamlit")


if __name__ == "__main__":
    main(sys.argv[1:])
