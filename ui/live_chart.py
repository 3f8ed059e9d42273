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

Plotly.js for the component comes from the installed plotly package (the version
its figures are written for), served by Streamlit's component route: nothing is
fetched from the internet.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import plotly
import plotly.graph_objects as go
import streamlit as st
import streamlit.components.v1 as components_v1

from ui import t

#: Most slider positions a follow carries data for (bar lengths, titles): past this, the chart waits for the server.
MAX_POSITIONS_WITH_DATA = 1024

#: A place in a figure's JSON: ("layout", "shapes", 0, "x0") or ("data", 0, "x").
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
    to its content at each of ``values`` (same length). Everything else in the figure
    stays as drawn.
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
        return {
            "key": self.key,
            "index": self.index(self.current),
            "values": self._grid(),
            "patches": [
                {"path": list(path), "values": self._patch_values(contents)} for path, contents in self.patches.items()
            ],
        }

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

    The Python twin of ``figureAt`` in live_chart.js, for tests.
    """
    figure = copy.deepcopy(dict(figure_json))
    if index != follow_json["index"]:
        for patch in follow_json["patches"]:
            *parents, last = patch["path"]
            node: Any = figure
            for step in parents:
                node = node[step]
            node[last] = (
                _grid_value(follow_json["values"], index) if patch["values"] is None else patch["values"][index]
            )
    return figure


def _grid_value(grid: Mapping[str, float] | Sequence[float], index: int) -> float:
    if isinstance(grid, Mapping):
        return grid["low"] + index * grid["step"]
    return grid[index]


def live_chart(
    figure: go.Figure, *, key: str, follow: Follow, height_px: int, config: Mapping[str, Any] | None = None
) -> None:
    """Draw `figure` (the figure at ``follow.current``); in the browser it follows the slider ``follow.key``.

    `config` holds Plotly's options; the chart also resizes with its column (``responsive``).
    """
    figure.update_layout(autosize=True, width=None)
    _COMPONENT(
        key=key,
        data={
            "figure": figure.to_json(),
            "follow": follow.to_json(),
            "config": {**(config or {}), "responsive": True},
            "height": height_px,
            "plotly_url": plotly_url(),
            "error_text": t("lesson.chart_failed"),
        },
        height=height_px,
    )


def figure_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """The figure a live chart's data carries (tests)."""
    return json.loads(data["figure"])
