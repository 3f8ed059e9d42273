"""The exercise set's answers: each answer divided by the right one, on a log axis around 1×."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, hline, log_axis, titled

#: Texts a caller must translate (the axis titles carry the units).
LABELS = ("title", "subtitle", "x_title", "y_title", "right", "wrong", "open", "hidden", "target", "exercise")
#: Point states, in legend order.
STATUSES = ("right", "wrong", "hidden", "open")
#: Answers further off than this are drawn at the edge (the hover keeps the true ratio).
CLIP = 1e3
#: Ratios the axis names (the ones inside the drawn range show).
TICKS = (1e-3, 1e-2, 0.1, 0.5, 1, 2, 10, 100, 1e3)
STYLE = {
    "right": {"color": COLORS["current"], "symbol": "circle", "size": 16},
    "wrong": {"color": COLORS["limit"], "symbol": "x", "size": 16},
    "hidden": {"color": "#777777", "symbol": "diamond", "size": 14},
    "open": {"color": "#999999", "symbol": "circle-open", "size": 14},
}


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerPoint:
    """One exercise: its number, its state, answer ÷ right answer (None: nothing to compare), and hover lines.

    ``detail`` and ``tolerance`` arrive translated and formatted ("Your answer ÷ the right one: 2.1×",
    "Right within ±3 %").
    """

    number: int
    status: str
    ratio: float | None
    topic: str
    detail: str
    tolerance: str


def answers_figure(points: Sequence[AnswerPoint], *, labels: Mapping[str, str], separators: str = ".,") -> AnyFigure:
    """One marker per exercise at answer ÷ right answer (log axis); unanswered and hidden ones sit on the 1× line.

    Right answers are green circles, wrong ones red crosses; an answer without a ratio
    (a wrong choice) and the unanswered or hidden ones are drawn at 1×. Ratios beyond
    1000× either way are drawn at the edge; the hover gives the true one.
    """
    figure = draw.figure()
    for status in STATUSES:
        chosen = [point for point in points if point.status == status]
        if not chosen:
            continue
        ratios = np.array([np.nan if point.ratio is None else point.ratio for point in chosen], dtype=float)
        shown = np.where(np.isnan(ratios), 1.0, np.clip(ratios, 1 / CLIP, CLIP))
        style = STYLE[status]
        figure.add_trace(
            draw.scatter(
                x=[point.number for point in chosen],
                y=shown,
                mode="markers",
                name=labels[status],
                marker={
                    "color": style["color"],
                    "symbol": style["symbol"],
                    "size": style["size"],
                    "line": {"width": 2, "color": style["color"]},
                },
                customdata=[[point.topic, point.detail, point.tolerance] for point in chosen],
                hovertemplate=(
                    f"<b>{labels['exercise']} %{{x}}</b> · %{{customdata[0]}}<br>"
                    f"%{{customdata[1]}}<br>%{{customdata[2]}}<extra>{labels[status]}</extra>"
                ),
            )
        )
    hline(figure, 1.0, line={"color": COLORS["current"], "width": 2, "dash": "dot"})
    # On a log axis an annotation's y is log10 of the value: 0 puts the label on the 1× line.
    figure.add_annotation(
        text=labels["target"],
        x=0,
        xref="x domain",
        y=0,
        yref="y",
        xanchor="left",
        yanchor="bottom",
        showarrow=False,
        font={"color": COLORS["current"]},
    )
    titled(figure, labels, separators=separators)
    count = max((point.number for point in points), default=1)
    figure.update_layout(
        xaxis={"range": [0.4, count + 0.6], "dtick": 1, "tick0": 1},
        yaxis=log_axis(ticks=TICKS, suffix="×", separators=separators),
    )
    return figure
