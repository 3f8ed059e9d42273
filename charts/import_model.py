"""One sequence's KV cache against context: the config read right, and read the usual wrong ways."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, QUIET_CURRENT_LINE, current_line, titled

#: Keys a caller must translate: title, axis titles (with units), the right reading's name, the marker.
READINGS_LABELS = ("title", "subtitle", "x_title", "y_title", "right", "current", "tokens")

CURVE_POINTS = 256

#: One colour per wrong reading (Okabe–Ito, after the ones COLORS already uses).
WRONG_COLORS = ("#CC79A7", "#56B4E9", "#D55E00", "#999999")


def readings_figure(
    *,
    model: kvcore.ModelSpec,
    wrong: Mapping[str, kvcore.ModelSpec],
    wrong_names: Mapping[str, str],
    context_tokens: float,
    bytes_per_value: float,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """kvcore's ``sequence_kv_bytes`` of `model` (solid) and of each wrong reading (dashed), in `unit`.

    The x axis runs from 0 to the model's maximum context (or the chosen context,
    if longer); a dotted line marks the chosen context. ``wrong_names`` holds the
    translated name of each wrong reading (same keys as `wrong`).
    """
    longest = max(float(model.max_position_embeddings), float(context_tokens), 1.0)
    contexts = np.linspace(0.0, longest, CURVE_POINTS)

    def curve(spec: kvcore.ModelSpec) -> np.ndarray:
        return kvcore.sequence_kv_bytes(spec, context_tokens=contexts, bytes_per_value=bytes_per_value) / unit_bytes

    def hover(name: str) -> str:
        return f"<b>{name}</b><br>%{{y:,.3f}} {unit}<br>%{{x:,.0f}} {labels['tokens']}<extra></extra>"

    traces = [
        draw.scatter(
            x=contexts,
            y=curve(model),
            name=labels["right"],
            mode="lines",
            line={"color": COLORS["current"], "width": 4},
            hovertemplate=hover(labels["right"]),
        )
    ]
    for (name, spec), color in zip(wrong.items(), WRONG_COLORS, strict=False):
        traces.append(
            draw.scatter(
                x=contexts,
                y=curve(spec),
                name=wrong_names[name],
                mode="lines",
                line={"color": color, "width": 2, "dash": "dash"},
                hovertemplate=hover(wrong_names[name]),
            )
        )
    figure = draw.figure(traces)
    current_line(figure, context_tokens, label=labels["current"], position="top right", line=QUIET_CURRENT_LINE)
    figure.update_layout(xaxis={"range": [0, longest]}, yaxis={"rangemode": "tozero"})
    return titled(figure, labels, separators=separators)
