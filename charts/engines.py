"""The engines side by side: each engine's KV pool on the same GPU, and the requests it serves at once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from charts import draw
from charts.draw import AnyFigure
from charts.formatting import memory
from charts.style import COLORS, HALF_X_TITLE_LINE_CHARS, titled, wrapped

#: Keys a caller must translate (the x title must name the unit).
#: The longest line of a bar's label (its requests, or why none), in characters.
LABEL_LINE_CHARS = 16
ENGINES_LABELS = ("title", "subtitle", "x_title", "y_title", "chosen")


def engines_figure(
    *,
    names: Sequence[str],
    pool_bytes: Sequence[float],
    texts: Sequence[str],
    fits: Sequence[bool],
    chosen: int | None,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = 2**30,
    unit: str = "GiB",
) -> AnyFigure:
    """One horizontal bar per engine: its KV pool per GPU in `unit`, labelled with the requests it serves.

    `names[i]` is engine i's name, `pool_bytes[i]` its pool (bytes per GPU), `texts[i]` the label
    on its bar (the requests it serves, or why none), `fits[i]` whether it serves any (orange, else
    red); `chosen` is the row of the engine whose own flags the page shows (outlined), None for none.
    """
    values = [max(value, 0.0) / unit_bytes for value in pool_bytes]
    colors = [COLORS["kv_cache"] if ok else COLORS["limit"] for ok in fits]
    widths = [3 if index == chosen else 0 for index in range(len(names))]
    hover = [
        f"{name}<br>{memory(b, separators, unit=unit)}<br>{text}"
        for name, b, text in zip(names, pool_bytes, texts, strict=True)
    ]
    # The label sits under the engine's name on the axis, not on the bar: it stays whole on a phone's width,
    # in lines short enough to leave the bars most of a phone's chart.
    figure = draw.figure(
        draw.bar(
            x=values,
            y=[f"<b>{name}</b><br>{wrapped(text, LABEL_LINE_CHARS)}" for name, text in zip(names, texts, strict=True)],
            orientation="h",
            marker={"color": colors, "line": {"color": COLORS["text"], "width": widths}},
            hovertext=hover,
            hoverinfo="text",
            name=labels["chosen"],
        )
    )
    figure.update_layout(yaxis={"autorange": "reversed"}, showlegend=False, height=140 + 76 * len(names))
    titled(figure, labels, separators=separators)
    # The labels take about half a phone's chart: the x axis title lies under the other half.
    return figure.update_xaxes(title_text=wrapped(labels["x_title"], HALF_X_TITLE_LINE_CHARS))
