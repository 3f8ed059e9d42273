"""Charts drawn once per set of inputs: a figure is kept as plain JSON, keyed by what defines it.

A Plotly figure costs 5–40 ms of server CPU to build as a ``go.Figure`` (Plotly checks
every property as it is set) and as much again to check and serialise when Streamlit
sends it, on every rerun, although most of a page's charts do not change when one slider
moves, and a class of students visits the same values. So a lesson names the builder and
its arguments (``FigureCall``, made by ``ui.lesson.figure``), and ``ui.lesson.chart``
looks the drawn figure up here first: a figure, once built, is kept as the dict (or, for
a live chart, the JSON text) that the browser receives, for every session of the process.
A figure not kept yet is drawn as that dict straight away (``charts.draw.plain_figure``:
0.2–6 ms), not as a ``go.Figure``.

The key holds the builder's name and every argument's type and value (``call_key``):
numbers, text, numpy arrays (their bytes), mappings, sequences and frozen dataclasses
such as ``ModelSpec`` (compared field by field). The builders are pure functions
(``charts/``): the same key, the same figure. An argument of any other kind (a lambda,
an open file) leaves that chart uncached: it is built on every rerun, as before.

A kept dict is shared by every session and never changed: ``DrawnFigure`` hands it to
``st.plotly_chart`` as it is, so Streamlit neither copies nor re-checks it (it would
rebuild a ``go.Figure`` from a dict to check it: 4 ms for a small chart).
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from plotly.basedatatypes import BaseFigure

import kvcore
from charts.draw import AnyFigure, plain_figure

#: Figures kept per process, and the memory they may hold (``approximate_bytes``). A figure's JSON is 5–300 kB and a
#: live chart's patches for every slider value a few hundred kB, so 512 of the largest would hold over 100 MiB: the
#: byte cap is what bounds a long-running server's memory (benchmarks/bench_memory.py). 30 students on four lessons
#: kept about 250 figures and 30 patch texts, 8 and 4.4 MB as JSON.
MAX_FIGURES = 512
MAX_BYTES = 48 * 1024 * 1024

#: ``st.cache_data(hash_funcs=SPEC_HASH_FUNCS)`` for a function that takes a model, a GPU or a vLLM log: each is
#: keyed by its repr, every compared field with floats written exactly (50 µs), where Streamlit's own hashing of the
#: dataclass costs 1–5 ms a call. An edited spec (same id, other heads) gets a key of its own, as an imported model
#: (its id is its URL code) does.
SPEC_HASH_FUNCS: Mapping[type, Callable[[Any], str]] = MappingProxyType(
    {kvcore.ModelSpec: repr, kvcore.GpuSpec: repr, kvcore.VllmLog: repr}
)


def spec_hash_funcs() -> dict[str | type[Any], Callable[[Any], Any]]:
    """``SPEC_HASH_FUNCS`` as the dict ``st.cache_data(hash_funcs=...)`` takes (a copy: the table stays read-only)."""
    return {spec: key for spec, key in SPEC_HASH_FUNCS.items()}


@dataclass(frozen=True, slots=True)
class FigureCall:
    """A figure to draw: ``builder(*args, **kwargs)``, built by ``ui.lesson.chart`` unless it is kept already."""

    builder: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]

    def build(self) -> AnyFigure:
        """The figure, drawn as a plain dict (``charts.draw.PlainFigure``), unchecked: Plotly's objects cost 10–40 ms.

        A builder that makes its own ``go.Figure`` (not through ``charts.draw``) still returns one.
        """
        return plain_figure(self.builder, *self.args, **self.kwargs)


class Uncacheable(TypeError):
    """An argument whose value cannot be read into a key (the chart is then built every time)."""


def call_key(call: FigureCall, *extra: Hashable) -> Hashable:
    """A key for the builder, its arguments (types and values) and `extra` (the chart's height...).

    Two calls get equal keys only when they name the same builder with arguments of the
    same types and values (``frozen``), so a kept figure is found again only for them.
    """
    return (_function_name(call.builder), frozen(call.args), frozen(dict(call.kwargs)), extra)


def _function_name(function: Callable[..., Any]) -> str:
    """A module-level function's full name; a local function or a lambda has none that stays its own."""
    qualname = getattr(function, "__qualname__", "")
    if not qualname or "<" in qualname:
        raise Uncacheable(f"{function!r} is not a module-level function")
    return f"{function.__module__}.{qualname}"


def frozen(value: Any) -> Hashable:
    """`value` as a hashable key that keeps its type: ``1``, ``1.0`` and ``True`` differ; an array by its bytes.

    A hashable frozen dataclass (``ModelSpec``, ``GpuSpec``) stands for itself (its own
    ``__eq__`` compares every field); another dataclass goes field by field. Anything
    else that is neither a number, text, an array, a mapping nor a sequence raises
    ``Uncacheable``.
    """
    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes, complex):
        return (kind, value)
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            return ("object-array", value.shape, frozen(value.tolist()))
        return ("array", value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
    if isinstance(value, np.generic | enum.Enum):
        return (kind, value)
    if isinstance(value, Mapping):
        return (kind, tuple((frozen(item_key), frozen(item)) for item_key, item in value.items()))
    if kind in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return (kind, tuple(frozen(item) for item in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        try:
            hash(value)
        except TypeError:
            return (kind, tuple(frozen(getattr(value, item.name)) for item in dataclasses.fields(value)))
        return (kind, value)
    if callable(value):
        return ("function", _function_name(value))
    raise Uncacheable(f"cannot key a chart on a {kind.__qualname__}")


class FigureStore:
    """The figures drawn last, by key, at most ``MAX_FIGURES`` and ``MAX_BYTES``; shared by every session.

    One per process, thread-safe. The least recently used figure goes first; one figure larger than the byte cap
    is still kept, alone.
    """

    def __init__(self, max_figures: int = MAX_FIGURES, max_bytes: int = MAX_BYTES) -> None:
        self._figures: collections.OrderedDict[Hashable, tuple[Any, int]] = collections.OrderedDict()  # (figure, bytes)
        self._lock = threading.Lock()
        self._max_figures = max_figures
        self._max_bytes = max_bytes
        self._bytes = 0

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The figure kept under `key`, or `make()`'s, kept from now on (two sessions may both make it once)."""
        with self._lock:
            if key in self._figures:
                self._figures.move_to_end(key)
                return self._figures[key][0]
        made = make()
        size = approximate_bytes(made)
        with self._lock:
            self._bytes += size - self._figures.get(key, (None, 0))[1]
            self._figures[key] = (made, size)
            self._figures.move_to_end(key)
            while len(self._figures) > 1 and (len(self._figures) > self._max_figures or self._bytes > self._max_bytes):
                _, (_, oldest_size) = self._figures.popitem(last=False)
                self._bytes -= oldest_size
        return made

    def __len__(self) -> int:
        return len(self._figures)

    def kept(self) -> list[Any]:
        """The figures kept now, least recently used first (a copy of the list)."""
        with self._lock:
            return [figure for figure, _ in self._figures.values()]

    @property
    def kept_bytes(self) -> int:
        """What the kept figures hold, as ``approximate_bytes`` counts it."""
        return self._bytes


def approximate_bytes(value: Any) -> int:
    """Memory a kept figure holds, roughly [bytes]: text and packed arrays by length, containers by items.

    CPython's own sizes for a 64-bit build: a str is 49 bytes + its characters (ASCII), a list 56 + 8 per item, a
    dict about 64 + 40 per item, a float or int 24–32; a numpy array its buffer. Cheap (one walk, at insert), and
    within a factor of about two of ``tracemalloc``'s count, which is what a cap needs.
    """
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            total += 49 + len(item)
        elif isinstance(item, dict):
            total += 64 + 40 * len(item)
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            total += 56 + 8 * len(item)
            pending.extend(item)
        elif isinstance(item, np.ndarray):
            total += 112 + item.nbytes
        else:
            total += 32
    return total


class DrawnFigure(BaseFigure):
    """A figure already built, as its dict: ``st.plotly_chart`` sends it as it is.

    Streamlit reads a figure with ``plotly.tools.return_figure_from_figure_or_data``: a
    ``BaseFigure`` is trusted and read with ``to_dict()``, while a plain dict is rebuilt
    into a ``go.Figure`` to be checked. This one answers ``to_dict()`` with the kept dict
    (built and checked by Plotly once), and nothing else of a figure.
    """

    def __init__(self, spec: dict[str, Any]) -> None:  # not BaseFigure's: nothing to build or check
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict[str, Any]:
        spec: dict[str, Any] = object.__getattribute__(self, "_spec")
        return spec

    def __repr__(self) -> str:
        return f"DrawnFigure({len(self.to_dict().get('data', []))} traces)"
