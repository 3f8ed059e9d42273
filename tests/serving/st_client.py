"""A minimal Streamlit browser tab at the protocol level: open a page, move a slider, see what came back.

It speaks Streamlit's websocket protocol (``/_stcore/stream``, protobuf ``BackMsg`` / ``ForwardMsg`` from
``streamlit.proto``) the way the browser's frontend does, enough for the serving tests and the load benchmark:

- the first ``BackMsg`` is ``rerun_script`` with the page name, the URL's query string and the context info;
- it keeps every mounted widget's state from the element protos (``default``, or the value when ``set_value``),
  drops the widgets a full run (or a run of their fragment) did not send again, and keeps the ForwardMsg cache
  (hashes of ``cacheable`` messages, sent back as ``cached_message_hashes``);
- a slider move is one arrow-key step; the URL is rewritten as a ``bind="query-params"`` widget does, then
  ``rerun_script`` goes with every widget state, the page script hash and the slider's fragment id.

A run ends at ``script_finished`` (a run that finished early for a rerun is followed by the real one). The same
protocol as the load generator in the project's shared tools (st_load.py), written small for the tests; no
network other than the URL given (the tests and the benchmark use loopback only).
"""

from __future__ import annotations

import asyncio
import math
import random
import time
import urllib.parse
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from websockets.asyncio.client import ClientConnection, connect

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to the end on an event loop of its own thread, and return its result.

    ``asyncio.run`` refuses to start inside a running loop, and in one pytest run the browser tests leave
    Playwright's loop running on the main thread; a thread of its own has none.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


FINISHED_OK = frozenset({ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY})


@dataclass
class Run:
    """What one script run sent: its time from our BackMsg to ``script_finished``, and every error seen."""

    seconds: float
    messages: int
    bytes: int
    status: int | None
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors and self.status in FINISHED_OK


@dataclass
class Widget:
    id: str
    kind: str  # the WidgetState field it fills: double_array, string_array, string, bool, int, double
    value: Any
    fragment_id: str
    delta_path: tuple[int, ...]
    element_type: str
    proto: Any
    query_key: str | None
    url_default: list[str] | None


def js_number(value: float) -> str:
    """``String(value)`` in JavaScript, as the frontend writes a slider's value into the URL."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(float(value))


def query_string(params: dict[str, list[str]]) -> str:
    """The frontend's query string: keys sorted, strict URI encoding, spaces as ``+``."""
    parts = [
        f"{urllib.parse.quote(key, safe='-_.~')}={urllib.parse.quote(value, safe='-_.~')}"
        for key in sorted(params)
        for value in params[key]
    ]
    return "&".join(parts).replace("%20", "+")


def _option_text(option: Any) -> str:
    icon, content = option.content_icon, option.content or ""
    return f"{icon} {content}".strip() if icon else content


def widget_value(element_type: str, proto: Any) -> tuple[str, Any, list[str] | None] | None:
    """(state kind, value the frontend holds now, the value's URL form when at its default) of a widget."""
    default: Any
    current: Any
    if element_type == "slider":
        if proto.type == Slider.SELECT_SLIDER:
            options = list(proto.options)
            default = [options[int(i)] if 0 <= int(i) < len(options) else "" for i in proto.default]
            current = list(proto.raw_value) if proto.set_value and len(proto.raw_value) else default
            return "string_array", current, default
        default_numbers = list(proto.default)
        current = list(proto.value) if proto.set_value else default_numbers
        return "double_array", current, [js_number(x) for x in default_numbers]
    if element_type in ("selectbox", "radio"):
        default = proto.options[proto.default] if len(proto.options) and proto.HasField("default") else None
        if proto.set_value:
            return "string", (proto.raw_value if proto.HasField("raw_value") else None), None
        return "string", default, None
    if element_type == "button_group":
        chosen = [_option_text(proto.options[i]) for i in proto.default if 0 <= i < len(proto.options)]
        return "string_array", list(proto.raw_values) if proto.set_value else [c for c in chosen if c], None
    if element_type == "checkbox":
        return "bool", proto.value if proto.set_value else proto.default, None
    if element_type in ("text_input", "text_area"):
        default = proto.default if proto.HasField("default") else None
        current = (proto.value if proto.HasField("value") else None) if proto.set_value else default
        return "string", current, None
    if element_type == "multiselect":
        chosen = [proto.options[i] for i in proto.default if 0 <= i < len(proto.options)]
        return "string_array", list(proto.raw_values) if proto.set_value else chosen, None
    if element_type == "number_input":
        is_int = proto.data_type == 0  # NumberInput.INT
        default = (int(proto.default) if is_int else proto.default) if proto.HasField("default") else None
        value = proto.value if proto.HasField("value") else None
        current = (int(value) if is_int and value is not None else value) if proto.set_value else default
        return ("int" if is_int else "double"), current, None
    return None  # buttons (a value only when clicked), charts, elements without state


def widget_state(widget: Widget) -> WidgetState:
    state = WidgetState(id=widget.id)
    value = widget.value
    if value is None:
        return state
    if widget.kind == "double_array":
        state.double_array_value.data.extend(value)
    elif widget.kind == "string_array":
        state.string_array_value.data.extend(value)
    elif widget.kind == "string":
        state.string_value = value
    elif widget.kind == "bool":
        state.bool_value = bool(value)
    elif widget.kind == "int":
        state.int_value = int(value)
    elif widget.kind == "double":
        state.double_value = float(value)
    return state


class Session:
    """One browser tab on one page. ``async with Session(url, "/prefill_decode") as tab: run = await tab.open()``."""

    def __init__(
        self,
        base_url: str,
        page: str,
        *,
        timeout_s: float = 120.0,
        locale: str = "en-US",
        headers: dict[str, str] | None = None,
    ) -> None:
        path, _, query = page.partition("?")
        self.base_url = base_url.rstrip("/")
        self.path = "/" + path.strip("/")
        self.page_name = path.strip("/")
        self.query: dict[str, list[str]] = {}
        for key, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
            self.query.setdefault(key, []).append(value)
        self.timeout_s = timeout_s
        self.locale = locale
        self.widgets: dict[str, Widget] = {}
        self.page_script_hash = ""
        self.cache: dict[str, list[Any]] = {}  # message hash -> [run count when last used, fragment id]
        self.cache_runs = 0
        self.max_cached_age = 2
        self.headers = headers or {}  # sent with the websocket upgrade, e.g. a balancer's sticky cookie
        self.socket: ClientConnection | None = None

    async def __aenter__(self) -> Session:
        url = urllib.parse.urlparse(self.base_url)
        scheme = "wss" if url.scheme == "https" else "ws"
        self.socket = await connect(
            f"{scheme}://{url.netloc}{url.path}/_stcore/stream",
            subprotocols=["streamlit"],  # type: ignore[list-item]
            origin=self.base_url,  # type: ignore[arg-type]
            additional_headers=self.headers,
            compression=None,
            max_size=None,
            ping_interval=None,
            open_timeout=self.timeout_s,
            close_timeout=5,
        )
        return self

    def upgrade_header(self, name: str) -> str | None:
        """A header of the server's websocket upgrade answer (a balancer's X-Served-By, say)."""
        if self.socket is None or self.socket.response is None:
            return None
        return self.socket.response.headers.get(name)

    async def __aexit__(self, *exc_info: object) -> None:
        if self.socket is not None:
            await self.socket.close()

    def _context(self) -> ContextInfo:
        return ContextInfo(
            timezone="UTC",
            timezone_offset=0,
            locale=self.locale,
            url=self.base_url + self.path,
            is_embedded=False,
            color_scheme="light",
        )

    async def open(self) -> Run:
        """Load the page, as a browser tab does on its first visit."""
        state = ClientState(widget_states=WidgetStates(), context_info=self._context())
        if self.query:
            state.query_string = query_string(self.query)
        if self.page_name:
            state.page_name = self.page_name
        return await self._run(BackMsg(rerun_script=state))

    def sliders(self) -> list[Widget]:
        """The sliders of the page's main area (not the sidebar), in page order."""
        found = [w for w in self.widgets.values() if w.element_type == "slider" and w.delta_path[:1] == (0,)]
        return sorted(found, key=lambda w: w.delta_path)

    async def move_slider(self, rng: random.Random) -> Run | None:
        """Move a random slider one step (None when the page has no slider)."""
        sliders = self.sliders()
        if not sliders:
            return None
        return await self.step_slider(rng.choice(sliders), rng.choice((-1, 1)))

    async def step_slider(self, widget: Widget, direction: int) -> Run:
        """Move `widget` (one of ``sliders()``) one step up (`direction` 1) or down (-1), bouncing at its ends."""
        self._step(widget, direction)
        state = ClientState(
            query_string=query_string(self.query),
            widget_states=WidgetStates(widgets=[widget_state(w) for w in self.widgets.values()]),
            page_script_hash=self.page_script_hash,
            fragment_id=widget.fragment_id,
            cached_message_hashes=list(self.cache),
            context_info=self._context(),
        )
        return await self._run(BackMsg(rerun_script=state))

    def _step(self, widget: Widget, direction: int) -> None:
        """One arrow-key step, bouncing at the ends; rewrites the URL as the query-params binding does."""
        proto = widget.proto
        if widget.kind == "string_array":  # select_slider: steps through the options
            options = list(proto.options)
            index = options.index(widget.value[0]) if widget.value and widget.value[0] in options else 0
            moved = index + direction if 0 <= index + direction < len(options) else index - direction
            widget.value = [options[max(0, min(len(options) - 1, moved))], *widget.value[1:]]
            url_value = list(widget.value)
        else:
            values = list(widget.value) or [proto.min]
            step = proto.step or 1.0
            value = values[0] + direction * step
            if not proto.min - 1e-9 <= value <= proto.max + 1e-9:
                value = values[0] - direction * step
            value = min(proto.max, max(proto.min, value))
            value = round(round((value - proto.min) / step) * step + proto.min, 10)
            values[0] = float(round(value)) if proto.data_type == Slider.INT else value
            widget.value = values
            url_value = [js_number(x) for x in values]
        if widget.query_key:
            if url_value == widget.url_default:
                self.query.pop(widget.query_key, None)
            else:
                self.query[widget.query_key] = url_value

    async def _run(self, message: BackMsg) -> Run:
        """Send one BackMsg; read ForwardMsgs until the run it started has finished."""
        assert self.socket is not None, "use `async with Session(...)`"
        started = time.perf_counter()
        await self.socket.send(message.SerializeToString())
        run = Run(seconds=0.0, messages=0, bytes=0, status=None)
        seen: set[str] = set()
        deadline = started + self.timeout_s
        while True:
            try:
                data = await asyncio.wait_for(self.socket.recv(), timeout=max(0.0, deadline - time.perf_counter()))
            except TimeoutError:
                run.errors.append(f"timeout: no script_finished within {self.timeout_s:.0f} s")
                break
            if isinstance(data, str):
                continue
            run.messages += 1
            run.bytes += len(data)
            forward = ForwardMsg()
            forward.ParseFromString(data)
            if self._receive(forward, run, seen):
                break
        run.seconds = time.perf_counter() - started
        return run

    def _receive(self, forward: ForwardMsg, run: Run, seen: set[str]) -> bool:
        """Update the tab's state from one ForwardMsg; True when it finished the run."""
        kind = forward.WhichOneof("type")
        if kind == "ref_hash":
            if forward.ref_hash in self.cache:
                self.cache[forward.ref_hash][0] = self.cache_runs
            return False
        if forward.metadata.cacheable and forward.hash:
            fragment = forward.delta.fragment_id if kind == "delta" else ""
            self.cache.setdefault(forward.hash, [self.cache_runs, fragment])[0] = self.cache_runs
        if kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
            self._element(forward, run, seen)
        elif kind == "new_session":
            self.page_script_hash = forward.new_session.page_script_hash or self.page_script_hash
            self.max_cached_age = forward.new_session.config.max_cached_message_age or self.max_cached_age
        elif kind == "navigation" and forward.navigation.page_script_hash:
            self.page_script_hash = forward.navigation.page_script_hash
        elif kind == "page_not_found":
            run.errors.append(f"page_not_found: {self.path}")
        elif kind == "script_finished":
            return self._finished(forward, run, seen)
        return False

    def _element(self, forward: ForwardMsg, run: Run, seen: set[str]) -> None:
        element = forward.delta.new_element
        element_type = element.WhichOneof("type")
        if element_type == "exception":
            run.errors.append(f"exception: {element.exception.type}: {element.exception.message}"[:500])
            return
        if element_type == "alert" and element.alert.format == Alert.ERROR:
            run.errors.append(f"error element: {element.alert.body}"[:500])
            return
        if not element_type:
            return
        proto = getattr(element, element_type)
        widget_id = getattr(proto, "id", "")
        info = widget_value(element_type, proto) if widget_id else None
        if info is None:
            return
        kind, value, url_default = info
        path = tuple(forward.metadata.delta_path)
        old = self.widgets.get(widget_id)
        if old is None:
            query_key = getattr(proto, "query_param_key", "") or None
            self.widgets[widget_id] = Widget(
                widget_id, kind, value, forward.delta.fragment_id, path, element_type, proto, query_key, url_default
            )
        else:
            if getattr(proto, "set_value", False):
                old.value = value
            old.fragment_id, old.delta_path, old.proto, old.url_default = (
                forward.delta.fragment_id,
                path,
                proto,
                url_default,
            )
        seen.add(widget_id)

    def _finished(self, forward: ForwardMsg, run: Run, seen: set[str]) -> bool:
        status = forward.script_finished
        if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return False  # the script called st.rerun (or a new BackMsg came): the real run follows
        fragments = list(forward.metadata.run.fragment_ids)
        if status == ForwardMsg.FINISHED_SUCCESSFULLY:
            self.widgets = {k: w for k, w in self.widgets.items() if k in seen}
        elif status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
            self.widgets = {k: w for k, w in self.widgets.items() if k in seen or w.fragment_id not in fragments}
        else:
            run.errors.append(f"script_finished with status {ForwardMsg.ScriptFinishedStatus.Name(status)}")
        self.cache_runs += 1
        for digest, (last_run, fragment) in list(self.cache.items()):
            if fragments and (not fragment or fragment not in fragments):
                continue
            if self.cache_runs - last_run > self.max_cached_age:
                del self.cache[digest]
        run.status = status
        return True
