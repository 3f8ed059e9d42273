"""Memory against context: weights, overhead and KV cache stacked, and the GPU's memory as a ceiling."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.formatting import count
from charts.style import COLORS, current_line, limit_line, moving_vline_patches, titled

#: Keys a caller must translate: the title, axis titles (with units) and trace names.
MEMORY_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "y_title",
    "weights",
    "overhead",
    "kv_cache",
    "gpu_memory",
    "runs_out",
    "current",
    "tokens",
)

CURVE_POINTS = 512

#: Overhead (activations, buffers, CUDA graphs) in neutral grey: it is neither weights nor cache.
OVERHEAD_COLOR = "#8C8C8C"


def context_axis(model: kvcore.ModelSpec, *, context_tokens: float, points: int = CURVE_POINTS) -> np.ndarray:
    """Context lengths the curve is drawn at: 0 … the model's maximum (or the chosen context, if longer)."""
    return np.linspace(0.0, max(float(model.max_position_embeddings), float(context_tokens)), points)


def memory_vs_context_patches(
    model: kvcore.ModelSpec, context_values: np.ndarray
) -> dict[tuple[str | int, ...], np.ndarray] | None:
    """How ``memory_vs_context_figure`` changes along the context slider: only the chosen context's line moves.

    For each of `context_values` (tokens), the x of the dotted line and of its label
    (the shape and annotation named ``charts.style.CURRENT``).
    The curves, the GPU's line and the point where memory runs out do not depend on
    the chosen context while the axis ends at the model's maximum; when a context
    could lie beyond it (a model that does not say its maximum), the axis moves too
    and this returns None.
    """
    if float(np.max(context_values)) > float(model.max_position_embeddings or 0):
        return None
    return moving_vline_patches(context_values)


def memory_vs_context_figure(
    *,
    model: kvcore.ModelSpec,
    gpu: kvcore.GpuSpec,
    context_tokens: float,
    concurrency: int = 1,
    kv_bytes_per_value: float = 2.0,
    weights_bytes_per_param: float = 2.0,
    overhead_bytes: float = 0.0,
    tp: int = 1,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """Stacked weights + overhead + KV cache against context tokens, with the GPU's memory as a line.

    With `tp` GPUs (tensor parallelism) every curve is what one of them holds: weights / tp, its
    own KV heads' cache (``kv_cache_bytes(tp=…)``: replicated heads and MLA's latent stay whole),
    its own overhead, against one GPU's memory.

    Every curve is kvcore's output divided by `unit_bytes` (GiB = 2**30 bytes by
    default; 10**9 for decimal GB, with `unit` naming it in the hover texts): the
    weights from ``model_weights_bytes``, the cache from ``kv_cache_bytes`` for
    `concurrency` sequences, the overhead as given. A dotted line marks the chosen
    context; a red one the longest context that still fits after weights and
    overhead (``kvcore.max_context_tokens``), when it lies on the chart. ``labels``
    holds the already-translated texts (MEMORY_LABELS; the y title must name `unit`);
    ``separators`` the decimal mark and thousands separator (",." for Portuguese).
    """
    contexts = context_axis(model, context_tokens=context_tokens)
    weights_bytes = kvcore.model_weights_bytes(model, bytes_per_param=weights_bytes_per_param, tp=tp)
    kv_bytes = kvcore.kv_cache_bytes(
        model, context_tokens=contexts, concurrency=concurrency, bytes_per_value=kv_bytes_per_value, tp=tp
    )
    parts = {
        "weights": (np.full_like(contexts, weights_bytes / unit_bytes), COLORS["weights"]),
        "overhead": (np.full_like(contexts, overhead_bytes / unit_bytes), OVERHEAD_COLOR),
        "kv_cache": (kv_bytes / unit_bytes, COLORS["kv_cache"]),
    }

    def hover(name: str) -> str:
        return f"<b>{name}</b><br>%{{y:,.2f}} {unit}<br>%{{x:,.0f}} {labels['tokens']}<extra></extra>"

    figure = draw.figure()
    for part, (values, color) in parts.items():  # stacked bottom to top: weights, overhead, the growing cache
        figure.add_trace(
            draw.scatter(
                x=contexts,
                y=values,
                name=labels[part],
                stackgroup="memory",
                mode="lines",
                line={"color": color, "width": 0.5},
                hovertemplate=hover(labels[part]),
            )
        )
    figure.add_trace(
        draw.scatter(
            x=contexts,
            y=np.full_like(contexts, gpu.memory_bytes / unit_bytes),
            name=labels["gpu_memory"],
            mode="lines",
            line={"color": COLORS["limit"], "width": 3, "dash": "dash"},
            hovertemplate=hover(labels["gpu_memory"]),
        )
    )
    current_line(figure, context_tokens, label=labels["current"], position="top right")
    budget = kvcore.kv_budget_bytes(
        memory_bytes=gpu.memory_bytes, utilization=1.0, weights_bytes=weights_bytes, overhead_bytes=overhead_bytes
    )
    limit = float(
        kvcore.max_context_tokens(
            model, kv_pool_bytes=budget, concurrency=concurrency, bytes_per_value=kv_bytes_per_value, tp=tp
        )
    )
    if 0 < limit < contexts[-1]:  # 0: weights and overhead alone overflow, the error text says so
        label = f"{labels['runs_out']}<br>{count(limit, separators)} {labels['tokens']}"
        limit_line(figure, limit, label=label, axis_end=float(contexts[-1]))
    figure.update_xaxes(range=[0, float(contexts[-1])])
    figure.update_yaxes(rangemode="tozero")
    return titled(figure, labels, separators=separators)
