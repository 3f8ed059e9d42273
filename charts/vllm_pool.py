"""vLLM's KV pool: the budget from GPU memory to the pool, and the pool's tokens against gpu_memory_utilization."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

import kvcore
from charts.style import COLORS, styled
from kvcore.vllm_pool import PoolLog

#: Keys a caller must translate for the waterfall (the y title must name the unit).
WATERFALL_LABELS = (
    "title",
    "subtitle",
    "y_title",
    "vram",
    "held_back",
    "weights",
    "activation",
    "non_torch",
    "cuda_graphs",
    "pool",
)

#: Keys a caller must translate for the utilization chart.
UTILIZATION_LABELS = ("title", "subtitle", "x_title", "y_title", "tokens", "blocks", "current", "request")

VRAM_COLOR = "#56B4E9"
TAKEN_COLOR = "#8C8C8C"


def localized(value: float, separators: str, decimals: int = 2) -> str:
    """A number with `separators` (decimal mark, thousands): '12,345.67' or '12.345,67'."""
    text = f"{value:,.{decimals}f}"
    return text.translate(str.maketrans({".": separators[0], ",": separators[1]}))


def waterfall_values(log: PoolLog) -> list[float]:
    """The bars in bytes: + memory, − held back by u, − weights, − activation peak, − non-torch, − CUDA graphs."""
    return [
        log.memory_bytes,
        -log.held_back_bytes,
        -log.weights_bytes,
        -log.activation_bytes,
        -log.non_torch_bytes,
        -log.cuda_graph_bytes,
    ]


def pool_waterfall_figure(
    *,
    log: PoolLog,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> go.Figure:
    """One GPU's memory, minus what vLLM's profiling counts, leaves the KV pool (the last bar, Plotly's total).

    Every bar is a field of kvcore's ``PoolLog`` divided by `unit_bytes`; the parts add
    up to the GPU, so the total equals ``kv_pool_bytes`` (below zero when nothing fits).
    """
    values = [value / unit_bytes for value in waterfall_values(log)]
    pool = log.kv_pool_bytes / unit_bytes
    names = [
        labels["vram"],
        labels["held_back"],
        labels["weights"],
        labels["activation"],
        labels["non_torch"],
        labels["cuda_graphs"],
        labels["pool"],
    ]
    shown = [*values, pool]
    figure = go.Figure(
        go.Waterfall(
            x=names,
            y=[*values, 0.0],
            measure=["relative"] * len(values) + ["total"],
            text=[f"{localized(value, separators)} {unit}" for value in shown],
            textposition="outside",
            customdata=shown,
            hovertemplate=f"<b>%{{x}}</b><br>%{{customdata:,.2f}} {unit}<extra></extra>",
            increasing={"marker": {"color": VRAM_COLOR}},
            decreasing={"marker": {"color": TAKEN_COLOR}},
            totals={"marker": {"color": COLORS["kv_cache"]}},
            connector={"line": {"color": "#999999", "dash": "dot"}},
            cliponaxis=False,
        )
    )
    top = log.memory_bytes / unit_bytes
    figure.update_yaxes(range=[min(0.0, pool) * 1.25, top * 1.15])
    figure.update_layout(separators=separators, showlegend=False)
    return styled(figure, title=labels["title"], subtitle=labels["subtitle"], x_title="", y_title=labels["y_title"])


def utilization_figure(
    *,
    utilization: np.ndarray,
    blocks: np.ndarray,
    tokens: np.ndarray,
    current: PoolLog,
    labels: Mapping[str, str],
    separators: str = ".,",
) -> go.Figure:
    """'GPU KV cache size' tokens against gpu_memory_utilization (blocks in the hover), the current u marked.

    `blocks` and `tokens` come from ``kvcore.vllm_pool.pool_tokens_curve`` over `utilization`;
    the dotted line is one request of max_model_len tokens: below it vLLM refuses to start.
    """
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=utilization,
            y=tokens,
            customdata=blocks,
            name=labels["tokens"],
            mode="lines",
            line={"color": COLORS["kv_cache"], "width": 4},
            hovertemplate=(
                f"u = %{{x:.2f}}<br>%{{y:,.0f}} {labels['tokens']}<br>%{{customdata:,.0f}} {labels['blocks']}"
                "<extra></extra>"
            ),
        )
    )
    figure.add_trace(
        go.Scatter(
            x=[utilization[0], utilization[-1]],
            y=[current.max_model_len, current.max_model_len],
            name=labels["request"],
            mode="lines",
            line={"color": COLORS["limit"], "width": 2, "dash": "dot"},
            hovertemplate=f"<b>{labels['request']}</b><br>%{{y:,.0f}} {labels['tokens']}<extra></extra>",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=[current.utilization],
            y=[current.tokens],
            customdata=[current.num_blocks],
            name=labels["current"],
            mode="markers",
            marker={"color": COLORS["current"], "size": 14, "symbol": "diamond"},
            hovertemplate=(
                f"<b>{labels['current']}</b><br>u = %{{x:.2f}}<br>%{{y:,.0f}} {labels['tokens']}"
                f"<br>%{{customdata:,.0f}} {labels['blocks']}<extra></extra>"
            ),
        )
    )
    figure.update_yaxes(rangemode="tozero")
    figure.update_layout(separators=separators)
    return styled(
        figure, title=labels["title"], subtitle=labels["subtitle"], x_title=labels["x_title"], y_title=labels["y_title"]
    )
