"""What fits on my machine: the memory a local engine needs per context and KV cache type, and the GPU's limit."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from charts import draw
from charts.draw import AnyFigure
from charts.formatting import memory
from charts.style import COLORS, hline, log_axis, titled

#: Keys a caller must translate (the axis titles must name their units).
LOCAL_LLM_LABELS = ("title", "subtitle", "x_title", "y_title", "limit", "current", "tokens")

#: One colour per cache type, in the order the caller lists them (f16, q8_0, q4_0).
CURVE_COLORS = (COLORS["weights"], COLORS["kv_cache"], "#56B4E9", "#CC79A7")


def context_ticks(low: float, high: float) -> tuple[list[int], list[str]]:
    """Tick positions (powers of two from `low` to `high`) and their texts: 512, 1k, 2k … 128k, 1M."""
    first, last = int(np.ceil(np.log2(max(low, 1.0)))), int(np.floor(np.log2(max(high, 1.0))))
    values = [2**power for power in range(first, last + 1)]
    texts = [f"{v // 2**20}M" if v >= 2**20 else f"{v // 1024}k" if v >= 1024 else str(v) for v in values]
    return values, texts


def local_llm_figure(
    *,
    context_tokens: ArrayLike,
    needed_bytes: Mapping[str, ArrayLike],
    chosen: str,
    limit_bytes: float,
    current_tokens: float,
    current_bytes: float,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = 2**30,
    unit: str = "GiB",
) -> AnyFigure:
    """One line per KV cache type: the memory needed against the context (log axis), the GPU's limit across.

    `needed_bytes[name]` is the engine's requirement at each of `context_tokens` with that cache
    type (bytes; one kvcore call per curve); `chosen` is the type the page uses (a thicker line);
    `limit_bytes` the memory the GPU offers (a red line); the marker is the page's own context
    and requirement. Every y value is bytes ÷ `unit_bytes`.
    """
    x = np.asarray(context_tokens, dtype=float)
    figure = draw.figure()
    hover = f"<b>%{{fullData.name}}</b><br>%{{x:,.0f}} {labels['tokens']}<br>%{{y:,.2f}} {unit}<extra></extra>"
    for index, (name, values) in enumerate(needed_bytes.items()):
        mine = name == chosen
        figure.add_trace(
            draw.scatter(
                x=x,
                y=np.asarray(values, dtype=float) / unit_bytes,
                name=name,
                mode="lines",
                line={
                    "color": CURVE_COLORS[index % len(CURVE_COLORS)],
                    "width": 4 if mine else 2,
                    "dash": "solid" if mine else "dash",
                },
                hovertemplate=hover,
            )
        )
    figure.add_trace(
        draw.scatter(
            x=[float(current_tokens)],
            y=[float(current_bytes) / unit_bytes],
            name=labels["current"],
            mode="markers",
            marker={"color": COLORS["current"], "size": 14, "symbol": "diamond"},
            hovertemplate=hover,
        )
    )
    hline(
        figure,
        float(limit_bytes) / unit_bytes,
        line={"color": COLORS["limit"], "width": 2},
        annotation={
            "text": f"{labels['limit']}: {memory(limit_bytes, separators, unit=unit)}",
            "font": {"color": COLORS["limit"]},
        },
        annotation_position="top left",
        name="limit",
    )
    ticks, texts = context_ticks(float(x.min()), float(x.max()))
    figure.update_xaxes(log_axis(ticks=ticks, texts=texts, separators=separators))
    figure.update_yaxes(rangemode="tozero")
    return titled(figure, labels, separators=separators)
