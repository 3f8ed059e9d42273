"""The 1M-token agent: time per token against context, GPUs needed, and where the attention mass sits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, QUIET_CURRENT_LINE, current_line, log_axis, moving_vline_patches, titled
from kvcore.agent import cumulative_mass, top_mass_share
from kvcore.capacity import gpus_needed

#: Texts a caller must translate for ``token_time_figure`` (``sharded*`` name the number of GPUs).
TIME_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "y_title",
    "weights",
    "kv",
    "kv_only",
    "sharded",
    "sharded_kv",
    "current",
    "seed",
    "tokens",
)
#: Texts for ``gpus_needed_figure`` (the dtype names are given separately, as they are not translated).
GPUS_LABELS = ("title", "subtitle", "x_title", "y_title", "current", "tokens", "gpus")
#: Texts for ``attention_mass_figure``.
MASS_LABELS = ("title", "subtitle", "x_title", "y_title", "mean", "layer", "flat", "top", "keep")

CURVE_POINTS = 256
DTYPE_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7")


def agent_context_axis(max_context_tokens: float, *, points: int = CURVE_POINTS) -> np.ndarray:
    """Contexts the curves are drawn at: 0 … `max_context_tokens`."""
    return np.linspace(0.0, float(max_context_tokens), points)


def token_time_patches(context_values: np.ndarray) -> dict[tuple[str | int, ...], np.ndarray]:
    """How ``token_time_figure`` changes along the context slider: only the chosen context's line moves.

    The axis ends at ``max_context_tokens`` whatever the context; the line and its label
    are named ``charts.style.CURRENT``.
    """
    return moving_vline_patches(context_values)


def token_time_figure(
    *,
    model: kvcore.ModelSpec,
    bandwidth_bytes_per_s: float,
    context_tokens: float,
    max_context_tokens: float,
    shards: int,
    kv_bytes_per_value: float,
    weight_bytes_per_param: float,
    labels: Mapping[str, str],
    seed_point: tuple[float, float] | None = None,
    separators: str = ".,",
) -> AnyFigure:
    """Milliseconds per decoded token against context: one GPU stacked (weights, then KV), N GPUs as lines.

    One GPU: ``kvcore.decode_step_s`` of the weights' bytes and of the KV bytes of
    ``kvcore.decode_bytes_per_step`` (stacked, they sum to the step), and the KV
    reads alone as a dashed line (what seed 004 times). `shards` GPUs:
    the whole step and the KV reads alone, over `shards` · bandwidth (KV heads
    replicated where tensor parallelism needs it). `seed_point` (tokens, seconds)
    marks a figure a course text quotes.
    """
    contexts = agent_context_axis(max_context_tokens)
    knobs: dict[str, Any] = {"context_tokens": contexts, "weight_bytes_per_param": weight_bytes_per_param}
    one = kvcore.decode_bytes_per_step(model, kv_bytes_per_value=kv_bytes_per_value, **knobs)
    many = kvcore.decode_bytes_per_step(model, kv_bytes_per_value=kv_bytes_per_value, gpus=shards, **knobs)

    def ms(num_bytes: np.ndarray, gpus: int = 1) -> np.ndarray:
        return 1e3 * kvcore.decode_step_s(num_bytes, bandwidth_bytes_per_s=bandwidth_bytes_per_s, gpus=gpus)

    def hover(name: str) -> str:
        return f"<b>{name}</b><br>%{{y:,.1f}} ms<br>%{{x:,.0f}} {labels['tokens']}<extra></extra>"

    figure = draw.figure()
    for part, values, color in (
        ("weights", one.weights_bytes, COLORS["weights"]),
        ("kv", one.kv_bytes, COLORS["kv_cache"]),
    ):
        figure.add_trace(
            draw.scatter(
                x=contexts,
                y=ms(values),
                name=labels[part],
                stackgroup="one_gpu",
                mode="lines",
                line={"color": color, "width": 0.5},
                hovertemplate=hover(labels[part]),
            )
        )
    lines = (
        ("kv_only", one.kv_bytes, 1, COLORS["kv_cache"], "dash"),
        ("sharded", many.total, shards, COLORS["current"], "solid"),
        ("sharded_kv", many.kv_bytes, shards, COLORS["current"], "dash"),
    )
    for part, values, gpus, color, dash in lines:
        name = labels[part]
        figure.add_trace(
            draw.scatter(
                x=contexts,
                y=ms(values, gpus),
                name=name,
                mode="lines",
                line={"color": color, "width": 3, "dash": dash},
                hovertemplate=hover(name),
            )
        )
    if seed_point is not None:
        tokens, seconds = seed_point
        figure.add_trace(
            draw.scatter(
                x=[tokens],
                y=[1e3 * seconds],
                name=labels["seed"],
                mode="markers+text",
                text=[labels["seed"]],
                textposition="middle left",
                marker={"color": COLORS["limit"], "size": 14, "symbol": "x"},
                hovertemplate=hover(labels["seed"]),
            )
        )
    current_line(figure, context_tokens, label=labels["current"], position="top left", line=QUIET_CURRENT_LINE)
    figure.update_xaxes(range=[0, float(contexts[-1])])
    figure.update_yaxes(rangemode="tozero")
    return titled(figure, labels, separators=separators)


def gpus_needed_figure(
    *,
    model: kvcore.ModelSpec,
    gpu_memory_bytes: float,
    context_tokens: float,
    max_context_tokens: float,
    kv_dtypes: Mapping[str, float],
    weight_bytes_per_param: float,
    utilization: float,
    labels: Mapping[str, str],
    separators: str = ".,",
) -> AnyFigure:
    """GPUs needed just to hold the weights and one conversation's cache, against context, per KV format.

    Each step line is ``kvcore.capacity.gpus_needed`` of ``model_weights_bytes`` +
    ``kv_cache_bytes`` at that format's bytes per value (`kv_dtypes`: name → bytes).
    """
    contexts = agent_context_axis(max_context_tokens)
    weights = kvcore.model_weights_bytes(model, bytes_per_param=weight_bytes_per_param)
    figure = draw.figure()
    most = 1.0
    for index, (dtype, bytes_per_value) in enumerate(kv_dtypes.items()):
        cache = kvcore.kv_cache_bytes(model, context_tokens=contexts, bytes_per_value=bytes_per_value)
        need = gpus_needed(total_bytes=weights + cache, memory_bytes=gpu_memory_bytes, utilization=utilization)
        most = max(most, float(need.max()))
        figure.add_trace(
            draw.scatter(
                x=contexts,
                y=need,
                name=dtype.upper(),
                mode="lines",
                line={"color": DTYPE_COLORS[index % len(DTYPE_COLORS)], "width": 3, "shape": "hv"},
                hovertemplate=(
                    f"<b>{dtype.upper()}</b><br>%{{y:,.0f}} {labels['gpus']}<br>"
                    f"%{{x:,.0f}} {labels['tokens']}<extra></extra>"
                ),
            )
        )
    current_line(figure, context_tokens, label=labels["current"], position="top left", line=QUIET_CURRENT_LINE)
    figure.update_xaxes(range=[0, float(contexts[-1])])
    # Whole GPUs: one tick per GPU while that stays readable.
    figure.update_yaxes(rangemode="tozero", dtick=1 if most <= 12 else None, tickformat=",d")
    return titled(figure, labels, separators=separators)


def mass_axis_indices(blocks: int, *, points: int = 300) -> np.ndarray:
    """Block counts k (1 … blocks) the mass curve is drawn at, spaced evenly on a log scale."""
    return np.unique(np.geomspace(1, blocks, points).round().astype(int))


def attention_mass_figure(
    *,
    attention: np.ndarray,
    top_fraction: float,
    keep_fraction: float,
    labels: Mapping[str, str],
    separators: str = ".,",
) -> AnyFigure:
    """Attention mass kept (%) against blocks kept (%, log scale): each layer faint, their mean bold.

    `attention` holds block weights, shape (layers, blocks); the curves are
    ``kvcore.agent.cumulative_mass`` of it, the markers ``top_mass_share`` (averaged
    over layers) at the top `top_fraction` of blocks (the seed's 1 %) and at the
    `keep_fraction` an eviction policy keeps. The dotted diagonal is flat attention
    (keeping x % of the blocks keeps x % of the mass).
    """
    curves = np.atleast_2d(cumulative_mass(attention))
    blocks = curves.shape[-1]
    k = mass_axis_indices(blocks)
    x = 100.0 * k / blocks
    mean = curves.mean(axis=0)
    figure = draw.figure()
    for index, layer in enumerate(curves):
        figure.add_trace(
            draw.scatter(
                x=x,
                y=100.0 * layer[k - 1],
                name=labels["layer"],
                legendgroup="layers",
                showlegend=index == 0,
                mode="lines",
                line={"color": COLORS["kv_cache"], "width": 1},
                opacity=0.35,
                hoverinfo="skip",
            )
        )
    figure.add_trace(
        draw.scatter(
            x=x,
            y=100.0 * mean[k - 1],
            name=labels["mean"],
            mode="lines",
            line={"color": COLORS["weights"], "width": 4},
            hovertemplate=f"<b>{labels['mean']}</b><br>%{{x:,.2f}} % → %{{y:,.1f}} %<extra></extra>",
        )
    )
    figure.add_trace(
        draw.scatter(
            x=x,
            y=x,
            name=labels["flat"],
            mode="lines",
            line={"color": COLORS["text"], "width": 1.5, "dash": "dot"},
            hovertemplate=f"<b>{labels['flat']}</b><br>%{{x:,.2f}} % → %{{y:,.1f}} %<extra></extra>",
        )
    )
    for name, fraction, color in (("top", top_fraction, COLORS["limit"]), ("keep", keep_fraction, COLORS["current"])):
        figure.add_trace(
            draw.scatter(
                x=[100.0 * fraction],
                y=[100.0 * float(np.mean(top_mass_share(attention, top_fraction=fraction)))],
                name=labels[name],
                mode="markers",
                marker={"color": color, "size": 14, "line": {"color": "white", "width": 2}},
                hovertemplate=f"<b>{labels[name]}</b><br>%{{x:,.2f}} % → %{{y:,.1f}} %<extra></extra>",
            )
        )
    figure.update_xaxes(log_axis([100.0 / blocks, 100.0], separators=separators), range=[np.log10(100.0 / blocks), 2])
    figure.update_yaxes(range=[0, 102])
    return titled(figure, labels, separators=separators)
