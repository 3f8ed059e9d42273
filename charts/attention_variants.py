"""MHA, GQA, MQA and MLA side by side: cache at one context, cache against context, and every model in the data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.formatting import size
from charts.style import COLORS, chart_title, current_line, log_axis, styled, titled
from kvcore.variants import attention_family, mean_kv_bytes_per_token

#: One colour per way of caching K and V (Okabe–Ito), and grey for the model as released.
VARIANT_COLORS = {
    "MHA": "#D55E00",
    "GQA": "#0072B2",
    "MQA": "#009E73",
    "MLA": "#E69F00",
    "hybrid": "#CC79A7",
    "model": "#555555",
}

#: Texts the caller translates (titles and axis titles carry the units).
BARS_LABELS = ("title", "subtitle", "x_title", "per_token", "room")
CURVES_LABELS = ("title", "subtitle", "x_title", "y_title", "gpu_memory", "room", "current", "tokens")
LANDSCAPE_LABELS = ("title", "subtitle", "x_title", "y_title", "current", "heads", "hybrid")


def per_token_text(num_bytes: float, *, unit: str, separators: str) -> str:
    """Bytes per token in binary units (KiB) or, when the page shows GB, decimal ones (kB)."""
    return size(num_bytes, separators, unit=unit)


#: The uid of ``variant_bars_figure``'s bars (its live chart's patches name them).
BARS = "bars"


def variant_bars_figure(
    variants: Mapping[str, kvcore.ModelSpec],
    *,
    names: Mapping[str, str],
    context_tokens: float,
    concurrency: int = 1,
    bytes_per_value: float = 2.0,
    room_bytes: float = 0.0,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
    log_y: bool = False,
) -> AnyFigure:
    """One horizontal bar per variant: kvcore's KV cache for `concurrency` sequences of `context_tokens`, in `unit`.

    `variants` maps 'MHA', 'GQA', 'MQA', 'MLA' (and 'model' for the model as released)
    to specs; `names` gives each bar's translated name. Each bar is labelled with
    ``kv_bytes_per_token``; ``labels['x_title']`` names the cache axis and its unit.
    A dashed line (with a legend entry) marks `room_bytes` (memory left after the
    weights) when it is positive.
    """
    keys = list(variants)
    names_shown = [names[key] for key in keys]
    cache = [
        float(
            kvcore.kv_cache_bytes(
                variants[key], context_tokens=context_tokens, concurrency=concurrency, bytes_per_value=bytes_per_value
            )
        )
        for key in keys
    ]
    per_token = [
        per_token_text(kvcore.kv_bytes_per_token(variants[key], bytes_per_value=bytes_per_value), unit=unit,
                       separators=separators)
        for key in keys
    ]  # fmt: skip
    figure = draw.figure(
        draw.bar(
            uid=BARS,
            x=np.asarray(cache) / unit_bytes,
            y=names_shown,
            orientation="h",
            marker_color=[VARIANT_COLORS[key] for key in keys],
            text=[f"{text}{labels['per_token']}" for text in per_token],
            textposition="outside",
            cliponaxis=False,
            customdata=per_token,
            hovertemplate=(
                f"<b>%{{y}}</b><br>%{{x:,.3f}} {unit}<br>%{{customdata}}{labels['per_token']}<extra></extra>"
            ),
        )
    )
    if room_bytes > 0:
        # A line across the categories, so it has a legend entry and a hover text of its own.
        figure.add_trace(
            draw.scatter(
                x=[room_bytes / unit_bytes] * 2,
                y=[names_shown[0], names_shown[-1]],
                name=labels["room"],
                mode="lines",
                line={"color": COLORS["limit"], "dash": "dash", "width": 2},
                hovertemplate=f"<b>{labels['room']}</b><br>%{{x:,.2f}} {unit}<extra></extra>",
            )
        )
    # The variants' names say what the categories are: no title on that axis, more room on a phone.
    styled(figure, title=labels["title"], subtitle=labels["subtitle"], x_title=labels["x_title"], y_title="")
    figure.update_layout(separators=separators, showlegend=room_bytes > 0, title_xref="container", title_x=0.01)
    figure.data[0]["showlegend"] = False
    # The first variant (MHA) on top, as in the course's table; room on the right for the labels.
    figure.update_yaxes(autorange="reversed")
    # The bars follow the context slider in the browser: ticks three decades either way keep them labelled.
    axis = (
        log_axis([trace["x"] for trace in figure.data], separators=separators, reach=3) if log_y else {"type": "linear"}
    )
    figure.update_xaxes(axis, rangemode="tozero")
    figure.update_layout(margin={"r": 80})
    return figure


def variant_bars_patches(
    variants: Mapping[str, kvcore.ModelSpec],
    *,
    context_values: np.ndarray,
    titles: Sequence[str],
    subtitle: str = "",
    concurrency: int = 1,
    bytes_per_value: float = 2.0,
    unit_bytes: float = kvcore.GiB,
) -> dict[tuple[str | int, ...], Any]:
    """How ``variant_bars_figure`` changes along the context slider: the bars' lengths and the title.

    For each of `context_values` (tokens), every variant's ``kvcore.kv_cache_bytes`` in
    `unit_bytes` (one numpy call per variant over all the values; row i holds the bars
    at the i-th value) and the title written for it (`titles`, translated by the caller), above the
    `subtitle` that stays (one ``chart_title`` text, as ``styled`` writes it).
    The per-token labels and the room line do not depend on the context.
    """
    cache = np.stack(
        [
            kvcore.kv_cache_bytes(
                spec, context_tokens=context_values, concurrency=concurrency, bytes_per_value=bytes_per_value
            )
            for spec in variants.values()
        ],
        axis=1,
    )
    return {
        ("data", BARS, "x"): cache / unit_bytes,
        ("layout", "title", "text"): [chart_title(title, subtitle) for title in titles],
    }


def variant_curves_figure(
    variants: Mapping[str, kvcore.ModelSpec],
    *,
    names: Mapping[str, str],
    context_tokens: float,
    max_context_tokens: float,
    concurrency: int = 1,
    bytes_per_value: float = 2.0,
    gpu_memory_bytes: float,
    room_bytes: float = 0.0,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """KV cache against context, one line per variant, with the GPU's memory (and what the weights leave) as lines.

    Every curve is ``kvcore.kv_cache_bytes`` for `concurrency` sequences, divided by
    `unit_bytes`, over 0 … `max_context_tokens` (or the chosen context, if longer).
    """
    contexts = np.linspace(0.0, max(float(max_context_tokens), float(context_tokens)), 256)
    figure = draw.figure()
    for key, spec in variants.items():
        cache = kvcore.kv_cache_bytes(
            spec, context_tokens=contexts, concurrency=concurrency, bytes_per_value=bytes_per_value
        )
        figure.add_trace(
            draw.scatter(
                x=contexts,
                y=cache / unit_bytes,
                name=names[key],
                mode="lines",
                line={"color": VARIANT_COLORS[key], "width": 3, "dash": "dot" if key == "model" else "solid"},
                hovertemplate=(
                    f"<b>{names[key]}</b><br>%{{x:,.0f}} {labels['tokens']}<br>%{{y:,.2f}} {unit}<extra></extra>"
                ),
            )
        )
    limits = [("gpu_memory", gpu_memory_bytes, "dash")] + ([("room", room_bytes, "dot")] if room_bytes > 0 else [])
    for label, value, dash in limits:
        figure.add_trace(
            draw.scatter(
                x=contexts[[0, -1]],
                y=[value / unit_bytes] * 2,
                name=labels[label],
                mode="lines",
                line={"color": COLORS["limit"], "dash": dash, "width": 2},
                hovertemplate=f"<b>{labels[label]}</b><br>%{{y:,.2f}} {unit}<extra></extra>",
            )
        )
    current_line(figure, context_tokens)
    figure.add_annotation(
        x=context_tokens, y=0.98, yref="paper", text=labels["current"], showarrow=False,
        font={"color": COLORS["current"]}, xanchor="left", yanchor="top",
    )  # fmt: skip
    titled(figure, labels, separators=separators)
    figure.update_yaxes(rangemode="tozero")
    return figure


def models_landscape_figure(
    models: Mapping[str, kvcore.ModelSpec],
    *,
    context_tokens: float,
    bytes_per_value: float = 2.0,
    current_id: str = "",
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.KiB,
    unit: str = "KiB",
) -> AnyFigure:
    """Every model as a point: parameters (billions) against KV bytes per token, coloured by attention family.

    y is ``mean_kv_bytes_per_token`` at `context_tokens` (sliding-window and linear
    layers make hybrids cheaper than their per-token rate), divided by `unit_bytes`.
    Models without a parameter count are left out. Both axes are logarithmic.
    """
    known = [spec for spec in models.values() if spec.total_params is not None]
    figure = draw.figure()
    for family in ("MHA", "GQA", "MQA", "MLA", "hybrid"):
        members = [spec for spec in known if attention_family(spec) == family]
        if not members:
            continue
        per_token = [
            float(mean_kv_bytes_per_token(spec, context_tokens=context_tokens, bytes_per_value=bytes_per_value))
            for spec in members
        ]
        figure.add_trace(
            draw.scatter(
                x=[float(spec.total_params or 0) / 1e9 for spec in members],
                y=np.asarray(per_token) / unit_bytes,
                name=labels["hybrid"] if family == "hybrid" else family,
                mode="markers",
                marker={"color": VARIANT_COLORS[family], "size": 12, "line": {"color": "white", "width": 1}},
                customdata=[[spec.name, spec.num_attention_heads, spec.num_key_value_heads] for spec in members],
                hovertemplate=(
                    "<b>%{customdata[0]}</b><br>%{x:,.3~f} B · %{y:,.1f} " + unit + "<br>"
                    + "%{customdata[2]} / %{customdata[1]} " + labels["heads"] + "<extra></extra>"
                ),
            )
        )  # fmt: skip
    current = models.get(current_id)
    if current is not None and current.total_params is not None:
        figure.add_trace(
            draw.scatter(
                x=[float(current.total_params) / 1e9],
                y=[
                    float(
                        mean_kv_bytes_per_token(current, context_tokens=context_tokens, bytes_per_value=bytes_per_value)
                    )
                    / unit_bytes
                ],
                name=labels["current"],
                mode="markers",
                marker={"color": "rgba(0,0,0,0)", "size": 24, "line": {"color": COLORS["current"], "width": 3}},
                hoverinfo="skip",
            )
        )
    titled(figure, labels, separators=separators)
    figure.update_xaxes(log_axis([trace["x"] for trace in figure.data], separators=separators))
    figure.update_yaxes(log_axis([trace["y"] for trace in figure.data], separators=separators))
    return figure
