"""Figures drawn as the plain JSON Plotly sends, without building graph objects: what the app draws on.

A ``go.Figure`` checks every property as it is set and again when it is written out:
10–50 ms of server CPU for one of the lessons' charts, on every new slider value. The
builders in ``charts/`` draw on whatever ``figure()`` (or ``subplots()``) gives them,
with the few methods of ``go.Figure`` they use (``add_trace``, ``add_shape``,
``add_annotation``, ``update_layout``, ``update_xaxes``, ``update_yaxes``, ``data``) and
traces as dicts (``scatter(...)``, ``bar(...)``). Called as usual, a builder returns a
``go.Figure``, checked by Plotly (the tests read its attributes). Called through
``plain_figure(builder, ...)`` (``ui.lesson.chart`` does), it draws on a ``PlainFigure``:
the same figure as a dict, in a tenth of the time, with nothing checked.

``PlainFigure.to_dict()`` is what ``go.Figure.to_dict()`` gives for the same calls:
magic underscores (``line_width``) read as nested properties, None leaves a property
unset, an empty object is left out, a numeric numpy array is packed as Plotly packs it
(``{"dtype", "bdata"}``), numbers inside lists become plain numbers, tuples lists, a
graph object (the template) its JSON. tests/app/test_drawn_figures.py draws every
builder both ways, on the arguments the lessons give them, and compares the JSON.
"""

from __future__ import annotations

import base64
import contextvars
import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.utils import is_skipped_key, plotlyjsShortTypes  # type: ignore[import-untyped]
from plotly.io.json import to_json_plotly
from plotly.subplots import make_subplots

#: Plotly properties whose own name holds an underscore (every other underscore separates a path: line_width).
UNDERSCORED = frozenset(
    {"error_x", "error_y", "error_z", "paper_bgcolor", "plot_bgcolor", "copy_ystyle", "copy_zstyle"}
)

#: The narrower types Plotly tries, in order, for an array of 64-bit integers.
_NARROWER = {"int64": ("int8", "int16", "int32"), "uint64": ("uint8", "uint16", "uint32")}

_AXIS_NAME = re.compile(r"^(x|y)axis\d*$")

#: Whether the builders called now draw on a PlainFigure: set only inside ``plain_figure``, per thread of work
#: (each Streamlit script thread has its own context), never for a whole process.
_DRAWING_PLAIN: contextvars.ContextVar[bool] = contextvars.ContextVar("drawing_plain", default=False)


def plain_figure(builder: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``builder(*args, **kwargs)`` drawn on a ``PlainFigure`` (a builder that makes its own go.Figure returns that)."""
    token = _DRAWING_PLAIN.set(True)
    try:
        return builder(*args, **kwargs)
    finally:
        _DRAWING_PLAIN.reset(token)


def figure(data: Any = None) -> Any:
    """A new empty figure (or holding the trace or traces `data`): a PlainFigure inside ``plain_figure``."""
    if _DRAWING_PLAIN.get():
        return PlainFigure(data)
    return go.Figure(data)


def subplots(**grid: Any) -> Any:
    """``plotly.subplots.make_subplots(**grid)``, or inside ``plain_figure`` a PlainFigure with the same layout."""
    if _DRAWING_PLAIN.get():
        return PlainFigure.with_subplots(**grid)
    return make_subplots(**grid)


def has_subplots(drawn: Any) -> bool:
    """Whether `drawn` (a go.Figure or a PlainFigure) was made as a grid of subplots."""
    if isinstance(drawn, PlainFigure):
        return drawn.grid is not None
    return bool(getattr(drawn, "_grid_ref", None))


def trace(kind: str, **properties: Any) -> dict[str, Any]:
    """A trace of type `kind` as a dict: what ``go.<Kind>(**properties)`` holds, for either kind of figure."""
    return {"type": kind, **properties}


def scatter(**properties: Any) -> dict[str, Any]:
    """``go.Scatter(**properties)`` as a dict."""
    return trace("scatter", **properties)


def bar(**properties: Any) -> dict[str, Any]:
    """``go.Bar(**properties)`` as a dict."""
    return trace("bar", **properties)


def sized_bar(*, x: list[str], y: Any, name: str, color: str, texts: list[str]) -> dict[str, Any]:
    """One part of a stacked memory bar: its size written inside each bar and in its hover (`texts`).

    `y` is the part's size in the chart's unit, `texts` the same sizes already formatted ("14.96 GiB").
    """
    return bar(
        x=x,
        y=y,
        name=name,
        marker={"color": color},
        text=texts,
        textposition="inside",
        customdata=texts,
        hovertemplate=f"<b>{name}</b><br>%{{x}}<br>%{{customdata}}<extra></extra>",
    )


def heatmap(**properties: Any) -> dict[str, Any]:
    """``go.Heatmap(**properties)`` as a dict."""
    return trace("heatmap", **properties)


def contour(**properties: Any) -> dict[str, Any]:
    """``go.Contour(**properties)`` as a dict."""
    return trace("contour", **properties)


def waterfall(**properties: Any) -> dict[str, Any]:
    """``go.Waterfall(**properties)`` as a dict."""
    return trace("waterfall", **properties)


class PlainFigure:
    """A figure kept as the dicts Plotly would hold, drawn with ``go.Figure``'s methods and checked by nobody.

    ``data`` holds the traces (dicts), ``layout`` the layout; ``to_dict`` and ``to_json``
    write them out as ``go.Figure`` does. ``grid`` is the subplots' axes by (row, column),
    None for a single plot.
    """

    def __init__(self, data: Any = None, *, layout: Mapping[str, Any] | None = None) -> None:
        self.data: list[dict[str, Any]] = []
        self.layout: dict[str, Any] = {}
        self.grid: dict[tuple[int, int], tuple[str, str]] | None = None
        if layout:
            self.update_layout(layout)
        if data is not None:
            for item in data if isinstance(data, list | tuple) else [data]:
                self.add_trace(item)

    @classmethod
    def with_subplots(cls, **grid: Any) -> PlainFigure:
        """A figure laid out as ``make_subplots(**grid)`` lays one out (made once per grid, then copied)."""
        layout_text, cells = _subplot_layout(tuple(sorted((name, _hashable(value)) for name, value in grid.items())))
        made = cls(layout=json.loads(layout_text))
        made.grid = dict(cells)
        return made

    # ------------------------------------------------------------ drawing

    def add_trace(self, item: Mapping[str, Any], row: int | None = None, col: int | None = None) -> PlainFigure:
        """Append the trace `item` (a dict such as ``scatter(...)``), on the subplot at `row`, `col` if given."""
        added = _merged({}, item)
        if row is not None and col is not None:
            x_key, y_key = self._cell(row, col)
            added.update(xaxis=_axis_ref(x_key), yaxis=_axis_ref(y_key))
        self.data.append(added)
        return self

    def add_shape(self, arg: Mapping[str, Any] | None = None, **properties: Any) -> PlainFigure:
        """Append a shape (``go.Figure.add_shape`` without row and column)."""
        self.layout.setdefault("shapes", []).append(_merged(_merged({}, arg or {}), properties))
        return self

    def add_annotation(self, arg: Mapping[str, Any] | None = None, **properties: Any) -> PlainFigure:
        """Append an annotation (``go.Figure.add_annotation`` without row and column)."""
        self.layout.setdefault("annotations", []).append(_merged(_merged({}, arg or {}), properties))
        return self

    def update_layout(self, patch: Mapping[str, Any] | None = None, **properties: Any) -> PlainFigure:
        """Merge `patch`, then `properties`, into the layout as ``go.Figure.update_layout`` does."""
        _merged(self.layout, patch or {})
        _merged(self.layout, properties)
        return self

    def update_xaxes(
        self,
        patch: Mapping[str, Any] | None = None,
        *,
        row: int | None = None,
        col: int | None = None,
        **properties: Any,
    ) -> PlainFigure:
        """Merge into every x axis, or the one of the subplot at `row`, `col` (``go.Figure.update_xaxes``)."""
        for key in self._axes("x", row, col):
            self.update_layout({key: dict(patch or {})}, **{key: properties})
        return self

    def update_yaxes(
        self,
        patch: Mapping[str, Any] | None = None,
        *,
        row: int | None = None,
        col: int | None = None,
        **properties: Any,
    ) -> PlainFigure:
        """Merge into every y axis, or the one of the subplot at `row`, `col` (``go.Figure.update_yaxes``)."""
        for key in self._axes("y", row, col):
            self.update_layout({key: dict(patch or {})}, **{key: properties})
        return self

    def _cell(self, row: int, col: int) -> tuple[str, str]:
        if self.grid is None:
            raise ValueError("row and col need a figure made with subplots()")
        return self.grid[(row, col)]

    def _axes(self, letter: str, row: int | None, col: int | None) -> list[str]:
        if row is not None or col is not None:
            x_key, y_key = self._cell(row or 1, col or 1)
            return [x_key if letter == "x" else y_key]
        named = [key for key in self.layout if _AXIS_NAME.match(key) and key[0] == letter]
        return sorted(named, key=_axis_order) or [f"{letter}axis"]

    # ------------------------------------------------------------ writing out

    def to_dict(self) -> dict[str, Any]:
        """The figure as ``go.Figure.to_dict()`` gives it: new dicts and lists, numeric arrays packed."""
        layout = _written(self.layout)
        if "template" not in self.layout:  # go.Figure starts from the default template
            layout["template"] = json.loads(_template_text(pio.templates.default))
        return {"data": [_written(item) for item in self.data], "layout": layout}

    def to_json(self, *, remove_uids: bool = True) -> str:
        """The figure as ``go.Figure.to_json`` writes it; the traces keep their uids with ``remove_uids=False``."""
        written = self.to_dict()
        if remove_uids:
            for item in written["data"]:
                item.pop("uid", None)
        return to_json_plotly(written)

    def __repr__(self) -> str:
        return f"PlainFigure({len(self.data)} traces)"


#: Either kind of figure a builder draws on and returns.
AnyFigure = go.Figure | PlainFigure


def _merged(target: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """`patch` merged into `target` (returned) as Plotly updates: a dict into an object, anything else replaces.

    A key with underscores is a path (``line_width`` is line → width, but ``paper_bgcolor``
    a name); None unsets; a graph object (the template) stands as its JSON, replacing.
    """
    for key, value in patch.items():
        *parents, last = _path(key)
        node = target
        for step in parents:
            child = node.get(step)
            if not isinstance(child, dict):
                child = node[step] = {}
            node = child
        if value is None:
            node.pop(last, None)
        elif isinstance(value, Mapping):
            existing = node.get(last)
            node[last] = _merged(existing if isinstance(existing, dict) else {}, value)
        elif hasattr(value, "to_plotly_json"):
            node[last] = value.to_plotly_json()
        elif isinstance(value, list | tuple) and any(isinstance(item, Mapping) for item in value):
            node[last] = [_merged({}, item) if isinstance(item, Mapping) else item for item in value]
        else:
            node[last] = value
    return target


def _path(key: str) -> list[str]:
    """A property name as its path: 'title_text' → ['title', 'text']; 'paper_bgcolor' stays whole."""
    if "_" not in key or key in UNDERSCORED:
        return [key]
    steps: list[str] = []
    for part in key.split("_"):
        if steps and f"{steps[-1]}_{part}" in UNDERSCORED:
            steps[-1] = f"{steps[-1]}_{part}"
        else:
            steps.append(part)
    return steps


def _written(node: Mapping[str, Any]) -> dict[str, Any]:
    """An object (trace, layout, …) as Plotly writes it out: set properties only, arrays packed (``_value``)."""
    written = {}
    for key, value in node.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            value = _written(value)
            if not value:  # an object with nothing set is left out
                continue
        else:
            value = _value(key, value)
        written[key] = value
    return written


def _value(key: str, value: Any) -> Any:
    """A property's value as Plotly writes it: a numeric array packed ({dtype, bdata}), other arrays as lists."""
    if isinstance(value, np.ndarray):
        if value.size and value.dtype.kind in "uif" and not is_skipped_key(key):
            return _packed(value)
        return value.tolist()
    return _listed(value)


def _packed(array: np.ndarray) -> Any:
    """A numeric array as Plotly packs it (``_plotly_utils.utils.to_typed_array_spec``, without its detour
    through narwhals: 0.1 ms an array): base64 of the raw buffer, its type, its shape past one dimension; 64-bit
    integers narrowed to the smallest type that holds them (plotly.js has none of 64 bits), else a list."""
    array = np.ascontiguousarray(array)
    dtype = str(array.dtype)
    for narrower in _NARROWER.get(dtype, ()):
        if np.iinfo(narrower).min <= array.min() and array.max() <= np.iinfo(narrower).max:
            array, dtype = array.astype(narrower), narrower
            break
    if dtype not in plotlyjsShortTypes:
        return array.tolist()
    data = base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")
    packed = {"dtype": plotlyjsShortTypes[dtype], "bdata": data}
    if array.ndim > 1:
        packed["shape"] = str(array.shape)[1:-1]
    return packed


def _listed(value: Any) -> Any:
    """Plotly's ``to_scalar_or_list``: numpy numbers as Python numbers, tuples and arrays as lists, objects written."""
    if isinstance(value, list | tuple):
        return [_written(item) if isinstance(item, Mapping) else _listed(item) for item in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _axis_ref(layout_key: str) -> str:
    """'xaxis2' → 'x2': how a trace names its axis."""
    return layout_key.replace("axis", "")


def _axis_order(layout_key: str) -> int:
    number = layout_key[5:]
    return int(number) if number else 1


def _hashable(value: Any) -> Any:
    """A make_subplots argument as a key: lists (subplot titles) as tuples."""
    return tuple(value) if isinstance(value, list) else value


@functools.lru_cache(maxsize=64)
def _subplot_layout(
    grid: tuple[tuple[str, Any], ...],
) -> tuple[str, tuple[tuple[tuple[int, int], tuple[str, str]], ...]]:
    """``make_subplots``'s layout (as JSON text, without its template) and each cell's axes, for one grid."""
    made = make_subplots(**{name: list(value) if isinstance(value, tuple) else value for name, value in grid})
    layout = made.to_dict()["layout"]
    layout.pop("template", None)
    cells = tuple(
        ((row + 1, col + 1), refs[0].layout_keys)
        for row, cells_in_row in enumerate(made._grid_ref)
        for col, refs in enumerate(cells_in_row)
        if refs
    )
    return json.dumps(layout), cells


@functools.lru_cache(maxsize=8)
def _template_text(name: str) -> str:
    """A named Plotly template as JSON text (a go.Figure starts with the default one)."""
    return json.dumps(pio.templates[name].to_plotly_json())


__all__ = [
    "AnyFigure",
    "PlainFigure",
    "bar",
    "contour",
    "figure",
    "has_subplots",
    "heatmap",
    "plain_figure",
    "scatter",
    "subplots",
    "trace",
    "waterfall",
]
