"""Reading a page's charts in AppTest: st.plotly_chart's and live charts' (ui.live_chart), in page order."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from ui.live_chart import component_follow

LIVE_CHART = "bidi_component"


def _leaves(node: Any) -> list[Any]:
    children = getattr(node, "children", None)
    if not children:
        return [node]
    return [leaf for child in children.values() for leaf in _leaves(child)]


def live_chart_data(app) -> list[dict[str, Any]]:
    """The data each live chart of the page was sent: its figure (JSON text), its follow (read), its config.

    A follow sent as its id only (unchanged since the tab got it) is read as the server kept it.
    """
    return [{**data, "follow": component_follow(data)} for data in live_chart_sent(app)]


def live_chart_sent(app) -> list[dict[str, Any]]:
    """The data each live chart of the page was sent, as it went: a follow whole (JSON text) or None."""
    return [
        json.loads(leaf.proto.json)
        for leaf in _leaves(app.main)
        if getattr(leaf, "type", None) == LIVE_CHART and leaf.proto.component_name == "kvlab_live_chart"
    ]


def chart_figures(app) -> list[dict[str, Any]]:
    """Every chart's figure on the page, top to bottom, whether drawn by st.plotly_chart or a live chart."""
    figures = []
    for leaf in _leaves(app.main):
        kind = getattr(leaf, "type", None)
        if kind == "plotly_chart":
            figures.append(json.loads(leaf.proto.spec))
        elif kind == LIVE_CHART and leaf.proto.component_name == "kvlab_live_chart":
            figures.append(json.loads(json.loads(leaf.proto.json)["figure"]))
    return figures


def plain(value: Any) -> Any:
    """A figure's JSON with Plotly's packed arrays ({"dtype", "bdata"}) unpacked into lists, for comparing."""
    if isinstance(value, dict):
        if set(value) >= {"dtype", "bdata"}:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
            return array.reshape(value["shape"]).tolist() if "shape" in value else array.tolist()
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def one_line(title: str) -> str:
    """A chart or axis title as one line: ``charts.style`` breaks long ones into lines (``<br>``) to fit a phone."""
    return title.replace("<br>", " ")
