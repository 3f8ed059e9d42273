"""A memory budget as a waterfall: the GPU's memory, minus each term in turn, leaves the KV pool.

One builder for every budget (the seed's sizing rule, vLLM's start-up arithmetic, an engine's
own terms): it takes plain ``(label, bytes)`` pairs, so it does not care which budget object
they come from. From a ``kvcore.budget.MemoryBudget`` (names translated by the caller)::

    waterfall_figure(
        start=(labels["vram"], budget.memory_bytes),
        terms=[(labels[part.name], part.bytes) for part in budget.parts[:-1]],
        result=(labels["pool"], budget.kv_pool_bytes),
        labels=labels,  # title, subtitle, y_title
        separators=separators,  # the page's decimal mark and thousands separator
    )
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.formatting import number
from charts.style import COLORS, styled

#: A bar of the waterfall: its (translated) label and its bytes.
Term = tuple[str, float]

#: Texts a caller translates for ``waterfall_figure`` (the bars' labels come with their terms).
WATERFALL_LABELS = ("title", "subtitle", "y_title")

#: The memory bar in sky blue, what comes off in grey, the KV pool in the cache's orange.
MEMORY_COLOR = "#56B4E9"
TAKEN_COLOR = "#8C8C8C"


def waterfall_values(*, start: Term, terms: Sequence[Term]) -> list[float]:
    """The bars before the result, in bytes: + the memory the budget starts from, − each term."""
    return [float(start[1]), *(-float(num_bytes) for _, num_bytes in terms)]


def waterfall_figure(
    *,
    start: Term,
    terms: Sequence[Term],
    result: Term,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
    does_not_fit: str | None = None,
) -> AnyFigure:
    """`start` (a GPU's memory), minus every one of `terms`, leaves `result` (the KV pool): one bar each, in `unit`.

    Every bar is its bytes divided by `unit_bytes` (GiB by default, 10**9 for GB); the
    last bar is Plotly's running total, so it stands where start − Σ terms ends; its
    label and hover show `result`'s own bytes, which must be that difference (a budget's
    parts add up to the card; ValueError otherwise). A negative result is never drawn as
    a bar below zero: the terms that overshoot run below the zero line, and the result
    stands at zero, labelled `does_not_fit` (the caller's translated "does not fit"; its
    number when None). Each bar's label is its number (two decimals, with the page's
    `separators`) and `unit`. `labels` holds the translated ``WATERFALL_LABELS``; the
    y title must name `unit`.
    """
    bars = waterfall_values(start=start, terms=terms)
    left = math.fsum(bars)
    if not math.isclose(left, result[1], rel_tol=1e-9, abs_tol=1e-9 * abs(bars[0])):
        raise ValueError(f"the waterfall's terms leave {left} bytes, not the {result[1]} bytes of {result[0]!r}")
    values = [value / unit_bytes for value in bars]
    shown = [*values, result[1] / unit_bytes]
    short = result[1] < 0
    text = [f"{number(value, separators)} {unit}" for value in shown]
    if short and does_not_fit is not None:
        text[-1] = does_not_fit
    lowest = min(0.0, *itertools.accumulate(values))
    hover = f"<b>%{{x}}</b><br>%{{customdata:,.2f}} {unit}<extra></extra>"
    figure = draw.figure(
        draw.waterfall(
            x=[start[0], *(label for label, _ in terms), result[0]],
            y=[*values, 0.0],
            # Short: the result restarts at zero ("absolute" 0) instead of Plotly's running total below it.
            measure=["relative"] * len(values) + ["absolute" if short else "total"],
            text=text,
            textposition="outside",
            customdata=shown,
            hovertemplate=[*([hover] * len(values)), f"<b>%{{x}}</b><br>{text[-1]}<extra></extra>"] if short else hover,
            increasing={"marker": {"color": MEMORY_COLOR}},
            decreasing={"marker": {"color": TAKEN_COLOR}},
            totals={"marker": {"color": COLORS["kv_cache"]}},
            connector={"line": {"color": "#999999", "dash": "dot"}},
            cliponaxis=False,
        )
    )
    figure.update_yaxes(range=[lowest * 1.25, values[0] * 1.15])
    figure.update_layout(separators=separators, showlegend=False)
    return styled(figure, title=labels["title"], subtitle=labels["subtitle"], x_title="", y_title=labels["y_title"])
