"""vLLM's KV pool: the budget from GPU memory to the pool, and the pool's tokens against gpu_memory_utilization."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, titled
from charts.waterfall import waterfall_figure
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


def pool_waterfall_figure(
    *,
    log: PoolLog,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
    does_not_fit: str | None = None,
) -> AnyFigure:
    """One GPU's memory, minus what vLLM's profiling counts, leaves the KV pool (the last bar, Plotly's total).

    ``charts.waterfall.waterfall_figure`` of the fields of kvcore's ``PoolLog`` (they add
    up to the GPU, so the total is ``kv_pool_bytes``), in `unit`; a pool below zero stands at zero, labelled
    `does_not_fit`.
    """
    terms = [
        (labels["held_back"], log.held_back_bytes),
        (labels["weights"], log.weights_bytes),
        (labels["activation"], log.activation_bytes),
        (labels["non_torch"], log.non_torch_bytes),
        (labels["cuda_graphs"], log.cuda_graph_bytes),
    ]
    return waterfall_figure(
        start=(labels["vram"], log.memory_bytes),
        terms=terms,
        result=(labels["pool"], log.kv_pool_bytes),
        labels=labels,
        separators=separators,
        unit_bytes=unit_bytes,
        unit=unit,
        does_not_fit=does_not_fit,
    )


def utilization_figure(
    *,
    utilization: np.ndarray,
    blocks: np.ndarray,
    tokens: np.ndarray,
    current: PoolLog,
    labels: Mapping[str, str],
    separators: str = ".,",
) -> AnyFigure:
    """'GPU KV cache size' tokens against gpu_memory_utilization (blocks in the hover), the current u marked.

    `blocks` and `tokens` come from ``kvcore.vllm_pool.pool_tokens_curve`` over `utilization`;
    the dotted line is one request of max_model_len tokens: below it vLLM refuses to start.
    """
    figure = draw.figure()
    figure.add_trace(
        draw.scatter(
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
        draw.scatter(
            x=[utilization[0], utilization[-1]],
            y=[current.max_model_len, current.max_model_len],
            name=labels["request"],
            mode="lines",
            line={"color": COLORS["limit"], "width": 2, "dash": "dot"},
            hovertemplate=f"<b>{labels['request']}</b><br>%{{y:,.0f}} {labels['tokens']}<extra></extra>",
        )
    )
    figure.add_trace(
        draw.scatter(
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
    return titled(figure, labels, separators=separators)
