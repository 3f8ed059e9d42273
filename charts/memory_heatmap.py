"""Context × users: the GPU memory a whole server needs, cell by cell, and where it runs out."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, log_axis, titled
from kvcore.memory import total_memory_bytes

#: Keys a caller must translate: titles, axis titles (with units), the colour bar's title and hover words.
HEATMAP_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "y_title",
    "z_title",
    "context",
    "users",
    "total",
    "limit",
    "current",
    "tokens",
)

CONTEXT_POINTS = 48
USER_ROWS = 40
#: The colour scale runs from empty to twice the card: fitting cells in blues, overflowing ones in oranges.
SCALE_TOP = 2.0
COLORSCALE = [
    [0.0, "#F2F7FB"],
    [0.5, "#0072B2"],
    [0.5, "#F6C9A6"],
    [1.0, "#D55E00"],
]


def heatmap_contexts(model: kvcore.ModelSpec, *, points: int = CONTEXT_POINTS) -> np.ndarray:
    """Context lengths of the grid's columns: `points` even steps up to the model's maximum."""
    return np.linspace(0.0, float(model.max_position_embeddings), points + 1)[1:]


def heatmap_users(max_users: int, *, rows: int = USER_ROWS) -> np.ndarray:
    """User counts of the grid's rows: whole numbers from 1 to `max_users`, evenly spread on a log scale."""
    return np.unique(np.rint(np.geomspace(1.0, float(max_users), rows)))


def users_ticks(max_users: int) -> list[float]:
    """Powers of two up to `max_users`: 1, 2, 4 … (a log axis' own minor ticks would read '2, 5, 2, 5')."""
    return [float(2**k) for k in range(int(np.log2(max_users)) + 1)]


def memory_heatmap_figure(
    *,
    model: kvcore.ModelSpec,
    gpu: kvcore.GpuSpec,
    context_tokens: float,
    concurrency: int,
    kv_bytes_per_value: float = 2.0,
    weights_bytes_per_param: float = 2.0,
    overhead_bytes: float = 0.0,
    max_users: int = 256,
    tp: int = 1,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """Total memory (weights + KV cache + overhead) over a context × users grid, in `unit`.

    The grid is one broadcast call, ``kvcore.memory.total_memory_bytes`` with the
    contexts as a row and the users as a column, divided by `unit_bytes`. Cells that
    fit the GPU are blue, cells that overflow it orange; a red contour follows the
    GPU's memory, and a marker shows the current context and users. ``labels`` holds
    the translated texts (HEATMAP_LABELS); the axis and colour-bar titles carry units.
    With `tp` GPUs (tensor parallelism) every cell is what one of them holds (``total_memory_bytes(tp=…)``).
    """
    contexts = heatmap_contexts(model)
    users = heatmap_users(max_users)

    def held_bytes(context: ArrayLike, concurrency_: ArrayLike) -> np.ndarray:
        return total_memory_bytes(
            model,
            context_tokens=context,
            concurrency=concurrency_,
            kv_bytes_per_value=kv_bytes_per_value,
            weights_bytes_per_param=weights_bytes_per_param,
            overhead_bytes=overhead_bytes,
            tp=tp,
        )

    total = held_bytes(contexts[None, :], users[:, None]) / unit_bytes
    memory = gpu.memory_bytes / unit_bytes
    current = float(held_bytes(context_tokens, concurrency))

    hover = (
        f"{labels['context']}: %{{x:,.0f}} {labels['tokens']}<br>"
        f"{labels['users']}: %{{y:,.0f}}<br>"
        f"<b>{labels['total']}: %{{z:,.1f}} {unit}</b><extra></extra>"
    )
    figure = draw.figure()
    figure.add_trace(
        draw.heatmap(
            x=contexts,
            y=users,
            z=total,
            zmin=0.0,
            zmax=SCALE_TOP * memory,
            colorscale=COLORSCALE,
            name=labels["total"],
            hovertemplate=hover,
            colorbar={
                "title": {"text": labels["z_title"], "side": "bottom"},
                "orientation": "h",
                # At the chart's bottom edge, below the x axis title whatever the plot's height (``style.TEMPLATE``'s
                # legend likewise).
                "yref": "container",
                "y": 0,
                "yanchor": "bottom",
                "thickness": 12,
                "len": 1.0,
            },
        )
    )
    figure.add_trace(
        draw.contour(
            x=contexts,
            y=users,
            z=total,
            contours={"start": memory, "end": memory, "size": 1.0, "coloring": "none"},
            line={"color": COLORS["limit"], "width": 3},
            name=labels["limit"],
            showscale=False,
            hoverinfo="skip",
        )
    )
    figure.add_trace(
        draw.scatter(
            x=[float(context_tokens)],
            y=[float(concurrency)],
            mode="markers",
            name=labels["current"],
            customdata=[current / unit_bytes],
            marker={"symbol": "x", "size": 16, "color": COLORS["current"], "line": {"color": "white", "width": 2}},
            hovertemplate=(
                f"<b>{labels['current']}</b><br>{labels['context']}: %{{x:,.0f}} {labels['tokens']}<br>"
                f"{labels['users']}: %{{y:,.0f}}<br>{labels['total']}: %{{customdata:,.1f}} {unit}<extra></extra>"
            ),
        )
    )
    figure.update_yaxes(log_axis(ticks=users_ticks(max_users), separators=separators))
    figure.update_layout(showlegend=False)
    return titled(figure, labels, separators=separators)
