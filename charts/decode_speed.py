"""Decode: bytes read per step against context, and tokens/s against context.

Every step time on these charts is ``kvcore.tpot_s`` with the page's own ``kvcore.Rates``: the
roofline the page's metric uses, so at the chosen context the curves pass through the metric
(the bandwidth bounds a small batch; a large batch of a small model can hit the compute roof).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, current_line, hline, limit_line, log_axis, moving_vline_patches, titled
from kvcore.timing import crossover_context_tokens
from kvcore.units import format_tokens

#: Texts a caller must translate for ``bytes_per_step_figure`` (axis titles carry the units).
BYTES_LABELS = ("title", "subtitle", "x_title", "y_title", "weights", "kv", "current", "crossover", "tokens", "step")
#: Texts a caller must translate for ``tokens_per_s_figure``.
RATE_LABELS = ("title", "subtitle", "x_title", "y_title", "per_user", "aggregate", "tokens", "rate")

CURVE_POINTS = 256
#: At most this many slider values join the evenly spaced points (256 for a 256k-token model at 1,024 a step).
MAX_EXACT_CONTEXTS = 1024
#: One colour per batch size in the rate chart (Okabe–Ito, after the weights/KV pair).
BATCH_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9")


def decode_context_axis(
    model: kvcore.ModelSpec,
    *,
    context_tokens: float,
    slider_contexts: Sequence[float] | np.ndarray = (),
    points: int = CURVE_POINTS,
) -> np.ndarray:
    """Contexts the curves are drawn at: 1 … the model's maximum (or the chosen context, if longer).

    The chosen context and every value of the page's context slider (`slider_contexts`, up
    to ``MAX_EXACT_CONTEXTS`` of them) are points of the axis, so the curves hold the page's
    metric exactly wherever the slider stands, and the axis stays the same as it moves (a
    live chart's preview is the rerun's figure). Past that many values only the evenly
    spaced points are drawn.
    """
    end = max(float(model.max_position_embeddings), float(context_tokens))
    axis = np.linspace(1.0, end, points)
    exact = np.union1d(np.asarray(slider_contexts, dtype=float), [float(context_tokens)])
    if exact.size > MAX_EXACT_CONTEXTS:
        return axis
    return np.union1d(axis, exact[exact <= end])


def decode_step_curve_s(
    model: kvcore.ModelSpec,
    *,
    contexts: np.ndarray,
    batch: int,
    rates: kvcore.Rates,
    kv_bytes_per_value: float,
    weight_bytes_per_param: float,
) -> np.ndarray:
    """Seconds per decode step at each of `contexts`: ``kvcore.tpot_s`` with `rates`, the function the metric uses."""
    return kvcore.tpot_s(
        model,
        context_tokens=contexts,
        batch=batch,
        rates=rates,
        kv_bytes_per_value=kv_bytes_per_value,
        weight_bytes_per_param=weight_bytes_per_param,
    )


def bytes_per_step_patches(
    model: kvcore.ModelSpec, context_values: np.ndarray
) -> dict[tuple[str | int, ...], np.ndarray] | None:
    """How ``bytes_per_step_figure`` changes along the context slider: only the chosen context's line moves.

    The line and its label are named ``charts.style.CURRENT``. When a context could lie
    beyond the model's maximum the axis moves too, and this returns None.
    """
    if float(np.max(context_values)) > float(model.max_position_embeddings or 0):
        return None
    return moving_vline_patches(context_values)


def bytes_per_step_figure(
    *,
    model: kvcore.ModelSpec,
    context_tokens: float,
    batch: int,
    rates: kvcore.Rates,
    kv_bytes_per_value: float,
    weight_bytes_per_param: float,
    unit_bytes: float,
    unit: str,
    labels: Mapping[str, str],
    separators: str = ".,",
    slider_contexts: Sequence[float] | np.ndarray = (),
) -> AnyFigure:
    """Stacked bytes one decode step reads over all GPUs (weights, then the batch's KV) against context.

    Both areas are ``kvcore.decode_bytes_per_step`` over ``rates.gpus`` GPUs divided by
    `unit_bytes` (GiB or GB, named by `unit`); the hover adds the step time
    (``decode_step_curve_s``: ``kvcore.tpot_s`` with `rates`, ms).
    The contexts are ``decode_context_axis`` (with the page's `slider_contexts`). A dotted
    line marks the chosen context, a solid one the crossover context
    (``crossover_context_tokens``) when it lies on the chart.
    """
    contexts = decode_context_axis(model, context_tokens=context_tokens, slider_contexts=slider_contexts)
    sizes = {"kv_bytes_per_value": kv_bytes_per_value, "weight_bytes_per_param": weight_bytes_per_param}
    read = kvcore.decode_bytes_per_step(model, context_tokens=contexts, batch=batch, gpus=rates.gpus, **sizes)
    step_ms = 1e3 * decode_step_curve_s(model, contexts=contexts, batch=batch, rates=rates, **sizes)
    figure = draw.figure()
    for part, values, color in (
        ("weights", read.weights_bytes, COLORS["weights"]),
        ("kv", read.kv_bytes, COLORS["kv_cache"]),
    ):
        figure.add_trace(
            draw.scatter(
                x=contexts,
                y=values / unit_bytes,
                customdata=step_ms,
                name=labels[part],
                stackgroup="bytes",
                mode="lines",
                line={"color": color, "width": 0.5},
                hovertemplate=(
                    f"<b>{labels[part]}</b><br>%{{y:,.2f}} {unit}<br>%{{x:,.0f}} {labels['tokens']}"
                    f"<br>{labels['step']}: %{{customdata:,.1f}} ms<extra></extra>"
                ),
            )
        )
    current_line(figure, context_tokens, label=labels["current"], position="top left")
    crossing = float(
        crossover_context_tokens(
            model,
            weights_bytes=read.weights_bytes[0],
            batch=batch,
            kv_bytes_per_value=kv_bytes_per_value,
            tp=rates.gpus,
        )
    )
    if 0 < crossing < contexts[-1]:
        count = format_tokens(crossing).replace(",", separators[1])
        label = f"{labels['crossover']}<br>{count} {labels['tokens']}"
        limit_line(figure, crossing, label=label, axis_end=float(contexts[-1]), name="crossover")
    figure.update_xaxes(range=[0, float(contexts[-1])])
    figure.update_yaxes(rangemode="tozero")
    return titled(figure, labels, separators=separators)


def tokens_per_s_figure(
    *,
    model: kvcore.ModelSpec,
    context_tokens: float,
    batches: Sequence[int],
    rates: kvcore.Rates,
    kv_bytes_per_value: float,
    weight_bytes_per_param: float,
    labels: Mapping[str, str],
    separators: str = ".,",
    slider_contexts: Sequence[float] | np.ndarray = (),
) -> AnyFigure:
    """Tokens/s per user (solid) and for the whole batch (dashed) against context, one colour per batch size.

    Each curve is ``kvcore.tokens_per_s`` of ``decode_step_curve_s`` (``kvcore.tpot_s`` with
    `rates`, the page's metric); the y axis is logarithmic because batch sizes
    spread the rates over orders of magnitude; the contexts are ``decode_context_axis``
    (with the page's `slider_contexts`). ``labels['per_user']`` and
    ``labels['aggregate']`` take a ``{batch}`` placeholder.
    """
    contexts = decode_context_axis(model, context_tokens=context_tokens, slider_contexts=slider_contexts)
    figure = draw.figure()
    for index, batch in enumerate(batches):
        step = decode_step_curve_s(
            model,
            contexts=contexts,
            batch=batch,
            rates=rates,
            kv_bytes_per_value=kv_bytes_per_value,
            weight_bytes_per_param=weight_bytes_per_param,
        )
        color = BATCH_COLORS[index % len(BATCH_COLORS)]
        for kind, rate, dash in (
            ("per_user", kvcore.tokens_per_s(step), "solid"),
            ("aggregate", kvcore.tokens_per_s(step, batch=batch), "dash"),
        ):
            name = labels[kind].format(batch=batch)
            figure.add_trace(
                draw.scatter(
                    x=contexts,
                    y=rate,
                    name=name,
                    mode="lines",
                    line={"color": color, "width": 3 if kind == "per_user" else 2, "dash": dash},
                    hovertemplate=(
                        f"<b>{name}</b><br>%{{y:,.1f}} {labels['rate']}"
                        f"<br>%{{x:,.0f}} {labels['tokens']}<extra></extra>"
                    ),
                )
            )
    current_line(figure, context_tokens)
    figure.update_xaxes(range=[0, float(contexts[-1])])
    figure.update_yaxes(log_axis([trace["y"] for trace in figure.data], separators=separators))
    return titled(figure, labels, separators=separators)


#: Texts a caller must translate for ``experts_read_figure``.
EXPERTS_LABELS = ("title", "subtitle", "x_title", "y_title", "read", "active", "total", "current")
#: Batch sizes the experts chart spans (log axis): one sequence to a few thousand.
EXPERTS_MAX_BATCH = 4096


def experts_read_figure(
    *,
    model: kvcore.ModelSpec,
    batch: int,
    weight_bytes_per_param: float,
    unit_bytes: float,
    unit: str,
    labels: Mapping[str, str],
    separators: str = ".,",
) -> AnyFigure:
    """Weights one decode step of a MoE model reads against the batch, between its active and total weights.

    The curve is ``kvcore.decode_weights_read_bytes`` (N_active + (D(B) − k) · e, D(B) =
    E · (1 − (1 − k/E)^B) the experts a batch of B sequences touches under uniform routing)
    divided by `unit_bytes`; dotted lines mark the active weights (one sequence) and the total
    (every expert); a vertical line the page's batch. The x axis is logarithmic.
    """
    batches = np.unique(np.concatenate([np.geomspace(1, EXPERTS_MAX_BATCH, 97), [float(batch)]]))
    read = kvcore.decode_weights_read_bytes(model, batch=batches, weight_bytes_per_param=weight_bytes_per_param)
    figure = draw.figure(
        draw.scatter(
            x=batches,
            y=read / unit_bytes,
            name=labels["read"],
            mode="lines",
            line={"color": COLORS["weights"], "width": 3},
            hovertemplate=f"<b>{labels['read']}</b><br>%{{y:,.1f}} {unit}<br>B = %{{x:,.0f}}<extra></extra>",
        )
    )
    for key, params in (("active", model.active_params), ("total", model.total_params)):
        hline(
            figure,
            float(params or 0.0) * weight_bytes_per_param / unit_bytes,
            line={"dash": "dot", "color": "#666666", "width": 1},
            annotation={"text": labels[key]},
            annotation_position="bottom right" if key == "total" else "top left",
        )
    # A marker, not a vertical line: on a log axis an annotation's x would have to be log10(batch).
    here = float(kvcore.decode_weights_read_bytes(model, batch=batch, weight_bytes_per_param=weight_bytes_per_param))
    figure.add_trace(
        draw.scatter(
            x=[float(batch)],
            y=[here / unit_bytes],
            name=labels["current"],
            mode="markers+text",
            text=[labels["current"]],
            textposition="middle right",
            marker={"size": 11, "color": COLORS["weights"], "line": {"color": "white", "width": 2}},
            hovertemplate=f"<b>{labels['current']}</b><br>%{{y:,.1f}} {unit}<br>B = %{{x:,.0f}}<extra></extra>",
            showlegend=False,
        )
    )
    figure.update_xaxes(log_axis([batches], separators=separators))
    figure.update_yaxes(rangemode="tozero")
    return titled(figure, labels, separators=separators)
