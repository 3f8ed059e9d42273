"""A Plotly chart that follows one slider in the browser, before the server answers.

A key press on a Streamlit slider makes a round trip: browser → server rerun →
websocket → React → Plotly, 140–300 ms on a 2-core machine. For a lesson's main
chart that is too slow to feel like moving the curve by hand. So the chart is drawn
by a small component (``live_chart.js``) that also receives, for every value the
slider can take, the handful of figure attributes that change with it (a marker's
position, a bar's length, a title), computed by kvcore on the server, vectorised
over the slider's values. When the slider's value changes, the component redraws
the chart from those at once; the rerun then brings the same figure.

The figure stays the page's: it is built exactly as for ``st.plotly_chart``.
``Follow.patches`` must describe how the figure changes along the slider; the
tests check it against the figure built at other values (``figure_at``).

A patch names the trace, shape or annotation it changes, never its position:
("layout", "shapes", "current", "x0") is the x0 of the shape whose ``name`` is
"current"; ("data", "prefill", "x") the x of the trace whose ``uid`` is "prefill"
(an item without a uid goes by its name). So a shape or trace added to the figure
later cannot shift a patch onto the wrong item. ``resolved_path`` turns names into
positions, here and, line for line, in live_chart.js (``resolvedPath``); a name the
figure does not hold is an error before anything is sent.

Plotly.js for the component comes from the installed plotly package (the version
its figures are written for), served by Streamlit's component route: nothing is
fetched from the internet.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import plotly
import streamlit as st
import streamlit.components.v1 as components_v1
from plotly.io.json import to_json_plotly

from charts.draw import AnyFigure
from ui import t
from ui.figure_cache import FigureStore, Uncacheable, frozen

#: Most slider positions a follow carries data for (bar lengths, titles): past this, the chart waits for the server.
MAX_POSITIONS_WITH_DATA = 1024

#: A place in a figure's JSON, items of a list by name: ("layout", "shapes", "current", "x0"), ("data", "bars", "x").
FigurePath = tuple[str | int, ...]

_HERE = Path(__file__).resolve().parent
_PLOTLY_JS_DIR = Path(plotly.__file__).resolve().parent / "package_data"
#: Streamlit serves a declared component's folder at /component/<name>/: here, plotly's own plotly.min.js.
_PLOTLY_FILES = components_v1.declare_component("plotly_js", path=str(_PLOTLY_JS_DIR))


def plotly_url() -> str:
    """Where the browser gets plotly.min.js: an absolute path under the server's base URL path (if any)."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return "/".join(["", *([base] if base else []), "component", _PLOTLY_FILES.name, "plotly.min.js"])


_COMPONENT = st.components.v2.component(
    "kvlab_live_chart",
    html='<div class="kvlab-live-chart" data-testid="kvlab-live-chart" style="width: 100%"></div>',
    js=(_HERE / "live_chart.js").read_text(encoding="utf-8"),
    isolate_styles=False,  # Plotly styles its hover labels and mode bar with the page's stylesheet
)


@dataclass(frozen=True)
class Follow:
    """How a chart changes along one slider: its key, every value it can take, its value now, what each changes.

    ``values`` ascend (the slider's steps) and hold ``current``; ``patches`` maps a place in the figure's JSON
    (a trace, shape or annotation by its name: ``resolved_path``) to its content at each of
    ``values`` (same length). Everything else in the figure stays as drawn.
    """

    key: str
    values: Sequence[float]
    current: float
    patches: Mapping[FigurePath, Sequence[Any]]

    def __post_init__(self) -> None:
        for path, contents in self.patches.items():
            if len(contents) != len(self.values):
                raise ValueError(f"{path}: {len(contents)} values for {len(self.values)} slider positions")

    def index(self, value: float) -> int | None:
        """The position of `value` among ``values``; None when it is not one of them (a URL off the steps)."""
        position = int(np.searchsorted(np.asarray(self.values, dtype=float), value))
        if position < len(self.values) and np.isclose(self.values[position], value, rtol=1e-9, atol=0):
            return position
        return None

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index(self.current), **self.along_json()}

    def along_json(self) -> dict[str, Any]:
        """``to_json`` without the current value's index: what stays the same wherever the slider is."""
        return {
            "key": self.key,
            "values": self._grid(),
            "patches": [
                {"path": list(path), "values": self._patch_values(contents)} for path, contents in self.patches.items()
            ],
        }

    def along_key(self) -> Hashable:
        """A key for ``along_json``: the slider's key, its values and every patch (``ui.figure_cache.frozen``)."""
        return (self.key, frozen(np.asarray(self.values, dtype=float)), frozen(dict(self.patches)))

    def _grid(self) -> dict[str, float] | list[float]:
        """The slider's values as JSON: a slider's even steps as {low, step, count}, anything else as a list."""
        values = np.asarray(self.values, dtype=float)
        if len(values) > 1:
            low, step = float(values[0]), float(values[1] - values[0])
            if np.array_equal(values, low + step * np.arange(len(values))):
                return {"low": low, "step": step, "count": len(values)}
        return values.tolist()

    def _patch_values(self, contents: Sequence[Any]) -> list[Any] | None:
        """The contents as JSON, or None (read: the slider's own values) when they are the same numbers."""
        same_shape = isinstance(contents, np.ndarray) and contents.shape == (len(self.values),)
        if same_shape and np.array_equal(contents, np.asarray(self.values, dtype=float)):
            return None
        return _plain(contents)


def slider_values(low: float, high: float, step: float) -> np.ndarray:
    """Every value of a slider from `low` to `high` by `step`, as Streamlit offers them (`low` + k · `step`)."""
    count = math.floor((high - low) / step + 1e-9) + 1
    return low + step * np.arange(count)


def _plain(contents: Sequence[Any]) -> list[Any]:
    """JSON-ready contents: numpy arrays and scalars become lists and floats."""
    return np.asarray(contents).tolist() if isinstance(contents, np.ndarray) else [_scalar(c) for c in contents]


def _scalar(content: Any) -> Any:
    if isinstance(content, np.ndarray):
        return content.tolist()
    if isinstance(content, np.generic):
        return content.item()
    return content


def figure_at(figure_json: Mapping[str, Any], follow_json: Mapping[str, Any], index: int) -> dict[str, Any]:
    """What the component draws at the slider's `index`-th value: the figure with that value's patches.

    The Python twin of ``figureAt`` in live_chart.js, for tests. Every path is resolved
    (``resolved_path``) against the figure as sent, before any patch is set.
    """
    figure = copy.deepcopy(dict(figure_json))
    if index != follow_json["index"]:
        paths = [resolved_path(figure, patch["path"]) for patch in follow_json["patches"]]
        for path, patch in zip(paths, follow_json["patches"], strict=True):
            *parents, last = path
            node: Any = figure
            for step in parents:
                node = node[step]
            node[last] = (
                _grid_value(follow_json["values"], index) if patch["values"] is None else patch["values"][index]
            )
    return figure


def resolved_path(figure_json: Mapping[str, Any], path: Sequence[str | int], *, by_name: bool = False) -> list[Any]:
    """`path` with each named item of a list (a trace, a shape, an annotation) replaced by its position in the figure.

    A text step into a list picks the one item known by that text: its ``uid`` or, when
    it has none, its ``name``. None or several such items: ValueError naming the path
    and the names the list holds. With `by_name`, a number step into a list of objects
    is refused too (the app's patches must not depend on the order of traces or shapes).
    The same rule as ``resolvedPath`` in live_chart.js.
    """
    resolved: list[Any] = []
    node: Any = figure_json
    for depth, step in enumerate(path):
        where = "/".join(str(part) for part in resolved) or "the figure"
        if isinstance(node, list) and isinstance(step, str):
            matches = [position for position, item in enumerate(node) if _identity(item) == step]
            if len(matches) != 1:
                known = ", ".join(repr(name) for name in map(_identity, node) if name is not None) or "no names"
                found = "no item" if not matches else f"{len(matches)} items"
                raise ValueError(f"patch {list(path)}: {found} named {step!r} in {where} (it holds {known})")
            step = matches[0]
        elif by_name and isinstance(node, list) and any(isinstance(item, Mapping) for item in node):
            raise ValueError(f"patch {list(path)}: item {step!r} of {where} by position; give its name (or uid)")
        resolved.append(step)
        if depth < len(path) - 1:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                raise ValueError(f"patch {list(path)}: the figure has no {step!r} in {where}") from None
    return resolved


def _identity(item: Any) -> Any:
    """What a patch calls an item of a list: its uid, or its name; None for an unnamed item or a plain value."""
    if not isinstance(item, Mapping):
        return None
    return item["uid"] if item.get("uid") is not None else item.get("name")


def _grid_value(grid: Mapping[str, float] | Sequence[float], index: int) -> float:
    if isinstance(grid, Mapping):
        return grid["low"] + index * grid["step"]
    return grid[index]


def live_chart(
    figure: AnyFigure, *, key: str, follow: Follow, height_px: int, config: Mapping[str, Any] | None = None
) -> None:
    """Draw `figure` (the figure at ``follow.current``); in the browser it follows the slider ``follow.key``.

    `config` holds Plotly's options; the chart also resizes with its column (``responsive``).
    Every patch must name the trace, shape or annotation it changes, and the figure must
    hold it (``resolved_path``): ValueError otherwise, before anything reaches the browser.
    """
    live_chart_text(checked_text(figure, follow), key=key, follow=follow, height_px=height_px, config=config)


def checked_text(figure: AnyFigure, follow: Follow) -> str:
    """`figure` (a go.Figure or a ``charts.draw.PlainFigure``) as a live chart sends it (sized by its column:
    ``autosize``), once every patch of `follow` names a place the figure holds (``resolved_path``; ValueError
    otherwise). The text is ``figure_text``'s, written from the dict just checked."""
    figure.update_layout(autosize=True, width=None)
    drawn = figure.to_dict()
    for path in follow.patches:
        resolved_path(drawn, path, by_name=True)
    return to_json_plotly(drawn)


def live_chart_text(
    text: str, *, key: str, follow: Follow, height_px: int, config: Mapping[str, Any] | None = None
) -> None:
    """``live_chart`` for a figure already written and checked (``checked_text``).

    The follow (a few hundred kB of patches for 1,024 slider values) goes to the browser once per content:
    later runs of the same chart send only its id (``follow_id``) while it has not changed, as when the
    followed slider moves, and ``live_chart.js`` takes it from what the tab holds (``follow_sent``). A tab
    that lacks it (a message lost to a dropped connection) says so (the trigger ``missing``), and the lesson
    runs again with the follow sent whole.
    """
    along, along_id = _along_text(follow)
    held: dict[str, str] = st.session_state.setdefault(HELD_KEY, {})
    whole = follow_sent(held, key, along_id)
    result = _COMPONENT(
        key=key,
        data={
            "figure": text,
            "follow": along if whole else None,
            "follow_id": along_id,
            "follow_index": follow.index(follow.current),
            "config": {**(config or {}), "responsive": True},
            "height": height_px,
            "plotly_url": plotly_url(),
            "error_text": t("lesson.chart_failed"),
        },
        height=height_px,
        on_missing_change=_ignored,
    )
    if not whole and getattr(result, "missing", None) == along_id:
        held.pop(key, None)
        st.rerun()


#: Session key: chart key → the id of the follow this tab was sent whole (``follow_sent``).
HELD_KEY = "_live_follows"


def follow_sent(held: dict[str, str], key: str, along_id: str) -> bool:
    """Whether chart `key` must carry its follow whole (its tab holds no follow `along_id`); records it as sent.

    `held` maps each chart of a session to the follow it was last sent whole.
    """
    if held.get(key) == along_id:
        return False
    held[key] = along_id
    return True


def _ignored() -> None:
    """The ``missing`` trigger's callback: the value is read from the mount's result."""


def _along_text(follow: Follow) -> tuple[str, str]:
    """``follow.along_json()`` as JSON text and its content id, kept per process by its content (``along_key``)."""
    try:
        key = follow.along_key()
    except Uncacheable:
        return _identified(json.dumps(follow.along_json()))
    kept: tuple[str, str] = _along_texts().get(key, lambda: _identified(json.dumps(follow.along_json())))
    return kept


def _identified(text: str) -> tuple[str, str]:
    """`text` and its id: the first 16 hex digits of its SHA-256."""
    return text, hashlib.sha256(text.encode()).hexdigest()[:16]


@st.cache_resource(show_spinner=False)
def _along_texts() -> FigureStore:
    return FigureStore()


def component_follow(data: Mapping[str, Any]) -> dict[str, Any]:
    """The follow a live chart's data carries, whole or as its id, as ``Follow.to_json`` wrote it (tests;
    live_chart.js does the same). One sent as its id only is read from the process's kept follows."""
    along = data["follow"]
    if along is None:
        [along] = [text for text, along_id in _along_texts().kept() if along_id == data["follow_id"]]
    return {"index": data["follow_index"], **json.loads(along)}


def figure_text(figure: AnyFigure) -> str:
    """The figure as the component receives it: Plotly's JSON, keeping the traces' uids (patches name them)."""
    return figure.to_json(remove_uids=False)


def figure_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """The figure a live chart's data carries (tests)."""
    return json.loads(data["figure"])
