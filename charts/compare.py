"""Two setups side by side: what one GPU of each holds (weights, overhead, KV cache), against what it may use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.formatting import memory
from charts.memory import OVERHEAD_COLOR
from charts.style import COLORS, titled

#: Keys a caller must translate (the y title must name the unit).
COMPARE_LABELS = ("title", "subtitle", "x_title", "y_title", "weights", "overhead", "kv_cache", "usable")

#: The parts of a bar, bottom to top (``kvcore.MemoryBreakdown`` fields) and their colours: the memory calculator's.
PARTS = (
    ("weights", COLORS["weights"]),
    ("overhead", OVERHEAD_COLOR),
    ("kv_cache", COLORS["kv_cache"]),
)

#: A bar's total and its usable mark closer than this share of the chart's height: the total is written above both.
NEAR_SHARE = 0.08


def compare_figure(
    *,
    names: Sequence[str],
    usage: Sequence[kvcore.MemoryBreakdown],
    usable_bytes: Sequence[float],
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """One stacked bar per setup: weights + overhead + KV cache on one of its GPUs, in `unit`.

    `names[i]` labels setup i's bar (on the x axis), `usage[i]` is what one of its GPUs holds
    (``kvcore.MemoryBreakdown``: its parts add up to ``total_bytes``) and `usable_bytes[i]` what
    one of its GPUs may use (memory · u, ``kvcore.budget``), drawn as a mark across the bar:
    a bar above its mark does not fit. Each part's label inside the bar and its hover give the
    size in `unit`; the total stands above the bar.
    """
    figure = draw.figure()
    for part, color in PARTS:
        part_bytes = [float(getattr(shown, f"{part}_bytes")) for shown in usage]
        texts = [memory(value, separators, unit=unit) for value in part_bytes]
        figure.add_trace(
            draw.sized_bar(
                x=list(names), y=np.array(part_bytes) / unit_bytes, name=labels[part], color=color, texts=texts
            )
        )
    totals = [shown.total_bytes for shown in usage]
    usable_texts = [memory(value, separators, unit=unit) for value in usable_bytes]
    figure.add_trace(
        draw.scatter(
            x=list(names),
            y=np.array(usable_bytes, dtype=float) / unit_bytes,
            name=labels["usable"],
            mode="markers",
            marker={"color": COLORS["limit"], "symbol": "line-ew-open", "size": 70, "line": {"width": 3}},
            customdata=usable_texts,
            hovertemplate=f"<b>{labels['usable']}</b><br>%{{x}}<br>%{{customdata}}<extra></extra>",
        )
    )
    top = max(*totals, *usable_bytes)
    for name, total, usable in zip(names, totals, usable_bytes, strict=True):
        # Above the bar; above the usable mark too when the two nearly meet, so the mark never crosses the text.
        above = max(total, usable) if abs(total - usable) < NEAR_SHARE * top else total
        figure.add_annotation(
            x=name, y=above / unit_bytes, text=f"<b>{memory(total, separators, unit=unit)}</b>", showarrow=False,
            yanchor="bottom", yshift=4,
        )  # fmt: skip
    figure.update_layout(barmode="stack", bargap=0.45)
    figure.update_yaxes(rangemode="tozero")
    return titled(figure, labels, separators=separators)
