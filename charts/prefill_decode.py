"""Prefill vs decode: the roofline with both phases on it, a request's timeline, and decode intensity vs batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, log_axis, titled, vline, vrect
from kvcore import timing
from kvcore.model import ModelSpec
from kvcore.timing import attainable_flop_per_s, ridge_point
from kvcore.units import TFLOP

#: Colours of the two phases, used on every chart of the lesson.
PREFILL_COLOR = COLORS["weights"]
DECODE_COLOR = COLORS["kv_cache"]

#: Keys a caller must translate (axis titles carry units; "bound_*" are the words for the hover text).
ROOFLINE_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "y_title",
    "roof",
    "real_roof",
    "ridge",
    "knee",
    "prefill",
    "decode",
    "prefill_bound",
    "decode_bound",
)
TIMELINE_LABELS = ("title", "subtitle", "x_title", "y_title", "tokens", "prefill", "first_token")
BATCH_LABELS = ("title", "subtitle", "x_title", "y_title", "decode", "ridge", "current", "batch")

ROOF_POINTS = 200


def intensity_axis(*intensities: float, ridge: float, points: int = ROOF_POINTS) -> np.ndarray:
    """Intensities the roof is drawn at (log-spaced): a decade beyond the lowest and highest point of interest."""
    low = min(0.1, *intensities, ridge) / 3
    high = max(1e4, *intensities, ridge) * 3
    return np.geomspace(low, high, points)


def _roofline_hover(name: str, extra: str = "") -> str:
    return f"<b>{name}</b><br>%{{x:,.3~f}} FLOP/byte<br>%{{y:,.3~f}} TFLOP/s{extra}<extra></extra>"


def roofline_patches(
    *,
    peak_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    mfu: float,
    mbu: float,
    prefill_intensities: np.ndarray,
    decode_intensities: np.ndarray,
    labels: Mapping[str, str],
    bound_words: Mapping[str, str],
) -> dict[tuple[str | int, ...], Any]:
    """How ``roofline_figure`` changes along the prompt slider: both phases move along the real roof.

    `prefill_intensities` and `decode_intensities` (FLOP/byte) hold kvcore's intensities
    at each of the slider's values; each phase's point (the trace whose uid is 'prefill'
    or 'decode'), its height
    (``timing.achieved_flop_per_s``) and its hover text ('compute' or 'memory' bound,
    from `bound_words`, against the effective ridge) follow. The roofs and the axis stay
    when the figure was drawn with ``axis_intensities`` spanning all these intensities.
    """
    rates = {"peak_flop_per_s": peak_flop_per_s, "bandwidth_bytes_per_s": bandwidth_bytes_per_s}
    knee = timing.effective_ridge_point(**rates, mfu=mfu, mbu=mbu)
    patches: dict[tuple[str | int, ...], Any] = {}
    for phase, intensity in (("prefill", prefill_intensities), ("decode", decode_intensities)):
        height = timing.achieved_flop_per_s(intensity, **rates, mfu=mfu, mbu=mbu) / TFLOP
        bound = np.where(intensity >= knee, bound_words["compute"], bound_words["memory"])
        patches[("data", phase, "x")] = np.asarray(intensity, dtype=float)[:, np.newaxis]
        patches[("data", phase, "y")] = height[:, np.newaxis]
        hovers = {word: _roofline_hover(labels[phase], f"<br>{word}") for word in bound_words.values()}
        patches[("data", phase, "hovertemplate")] = [hovers[word] for word in bound]  # two texts, written once
    return patches


def roofline_figure(
    *,
    peak_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    mfu: float,
    mbu: float,
    prefill_intensity: float,
    decode_intensity: float,
    labels: Mapping[str, str],
    separators: str = ".,",
    axis_intensities: Sequence[float] = (),
) -> AnyFigure:
    """Attainable TFLOP/s against FLOP/byte (log–log) with both phases placed on it.

    The solid roof is the datasheet's, ``kvcore.timing.attainable_flop_per_s``: the
    bandwidth slope, then the compute roof, meeting at the ridge point (dotted
    line, ``kvcore.ridge_point``). The dashed roof applies MFU and MBU
    (``timing.achieved_flop_per_s``); the two phases sit on it at the intensities
    kvcore computes. Everything on the y axis is in TFLOP/s (1e12 FLOP/s). The axis
    also spans `axis_intensities` (the phases at a slider's ends: then it stays put as
    the slider moves).
    """
    ridge = ridge_point(peak_flop_per_s=peak_flop_per_s, bandwidth_bytes_per_s=bandwidth_bytes_per_s)
    knee = timing.effective_ridge_point(
        peak_flop_per_s=peak_flop_per_s, bandwidth_bytes_per_s=bandwidth_bytes_per_s, mfu=mfu, mbu=mbu
    )
    rates = {"peak_flop_per_s": peak_flop_per_s, "bandwidth_bytes_per_s": bandwidth_bytes_per_s}
    x = intensity_axis(prefill_intensity, decode_intensity, *axis_intensities, ridge=ridge)
    roof = attainable_flop_per_s(x, **rates) / TFLOP
    real_roof = timing.achieved_flop_per_s(x, **rates, mfu=mfu, mbu=mbu) / TFLOP

    figure = draw.figure()
    figure.add_trace(
        draw.scatter(
            x=x,
            y=roof,
            name=labels["roof"],
            mode="lines",
            line={"color": COLORS["text"], "width": 3},
            hovertemplate=_roofline_hover(labels["roof"]),
        )
    )
    figure.add_trace(
        draw.scatter(
            x=x,
            y=real_roof,
            name=labels["real_roof"],
            mode="lines",
            line={"color": COLORS["text"], "width": 2, "dash": "dash"},
            hovertemplate=_roofline_hover(labels["real_roof"]),
        )
    )
    figure.add_trace(
        draw.scatter(
            x=[knee],
            y=np.atleast_1d(timing.achieved_flop_per_s(knee, **rates, mfu=mfu, mbu=mbu) / TFLOP),
            name=labels["knee"],
            mode="markers",
            marker={"color": COLORS["text"], "size": 9, "symbol": "diamond-open"},
            hovertemplate=_roofline_hover(labels["knee"]),
            showlegend=False,
        )
    )
    # Labels where no line runs: under a point on the flat roof, above-left of one on the slope.
    for phase, intensity, color, symbol, position in (
        ("prefill", prefill_intensity, PREFILL_COLOR, "circle", "bottom center"),
        ("decode", decode_intensity, DECODE_COLOR, "square", "top left"),
    ):
        figure.add_trace(
            draw.scatter(
                uid=phase,  # the live chart's patches name the phase's point by it
                x=[intensity],
                y=np.atleast_1d(timing.achieved_flop_per_s(intensity, **rates, mfu=mfu, mbu=mbu) / TFLOP),
                name=labels[phase],
                mode="markers+text",
                text=[labels[phase]],
                textposition=position,
                textfont={"color": color},
                marker={"color": color, "size": 16, "symbol": symbol, "line": {"color": "white", "width": 1.5}},
                hovertemplate=_roofline_hover(labels[phase], f"<br>{labels[f'{phase}_bound']}"),
            )
        )
    vline(figure, ridge, line={"color": COLORS["limit"], "width": 2, "dash": "dot"})
    # On a log axis an annotation's x is log10 of the value (shapes take the value itself).
    figure.add_annotation(
        x=np.log10(ridge),
        y=0.02,
        yref="paper",
        text=labels["ridge"],
        showarrow=False,
        xanchor="right",  # left of the line, under the slope: the roof never runs there
        xshift=-4,
        yanchor="bottom",
        font={"color": COLORS["limit"]},
    )
    figure.update_xaxes(log_axis([x[0], x[-1]], separators=separators), range=[np.log10(x[0]), np.log10(x[-1])])
    figure.update_yaxes(
        log_axis([roof[0], roof[-1] * 3], separators=separators), range=[np.log10(roof[0]), np.log10(roof[-1] * 3)]
    )
    return titled(figure, labels, separators=separators)


def timeline_figure(
    *, arrival_s: np.ndarray, ttft_s: float, labels: Mapping[str, str], separators: str = ".,"
) -> AnyFigure:
    """Output tokens received against time [s]: nothing during prefill, then one token per decode step.

    ``arrival_s`` is ``RequestTimeline.arrival_s`` (the moment each token reaches
    the user); the shaded band is the prefill, from 0 to ``ttft_s``.
    """
    arrivals = np.asarray(arrival_s, dtype=float)
    received = np.arange(1, arrivals.size + 1, dtype=float)
    figure = draw.figure()
    figure.add_trace(
        draw.scatter(
            x=np.concatenate(([0.0], arrivals)),
            y=np.concatenate(([0.0], received)),
            name=labels["tokens"],
            mode="lines",
            line={"color": DECODE_COLOR, "width": 3, "shape": "hv"},
            hovertemplate=f"%{{y:,.0f}} {labels['tokens']}<br>%{{x:,.4~f}} s<extra></extra>",
            showlegend=False,
        )
    )
    figure.add_trace(
        draw.scatter(
            x=[ttft_s],
            y=[1.0],
            name=labels["first_token"],
            mode="markers",
            marker={"color": PREFILL_COLOR, "size": 12},
            hovertemplate=f"<b>{labels['first_token']}</b><br>%{{x:,.4~f}} s<extra></extra>",
            showlegend=False,
        )
    )
    vrect(
        figure,
        0.0,
        ttft_s,
        fill={"fillcolor": PREFILL_COLOR, "opacity": 0.18, "line_width": 0},
        annotation={"text": labels["prefill"], "font": {"color": PREFILL_COLOR}},
        annotation_position="top left",
    )
    figure.update_xaxes(range=[0.0, float(arrivals[-1]) * 1.02], rangemode="tozero")
    figure.update_yaxes(range=[0.0, float(received[-1]) * 1.05])
    return titled(figure, labels, separators=separators)


def batch_axis(current_batch: int, *, largest: int = 512) -> np.ndarray:
    """Batch sizes the curve is drawn at: 1 … max(largest, the chosen batch), log-spaced whole numbers."""
    return np.unique(np.round(np.geomspace(1, max(largest, current_batch), 64)))


def batch_intensity_figure(
    *,
    model: ModelSpec,
    context_tokens: float,
    batch: int,
    ridge: float,
    weight_bytes_per_param: float = 2.0,
    kv_bytes_per_value: float = 2.0,
    labels: Mapping[str, str],
    separators: str = ".,",
) -> AnyFigure:
    """Decode's FLOP/byte against the batch (log–log), with the ridge point as a ceiling.

    Every point is ``timing.decode_intensity_flop_per_byte`` at `context_tokens`:
    batching shares one read of the weights among the sequences, but each brings
    its own KV cache, so the curve bends and flattens below the ridge for long contexts.
    """
    batches = batch_axis(batch)
    sizes = {"weight_bytes_per_param": weight_bytes_per_param, "kv_bytes_per_value": kv_bytes_per_value}
    curve = timing.decode_intensity_flop_per_byte(model, context_tokens=context_tokens, batch=batches, **sizes)
    here = timing.decode_intensity_flop_per_byte(model, context_tokens=context_tokens, batch=batch, **sizes)

    def hover(name: str) -> str:
        return f"<b>{name}</b><br>{labels['batch']} %{{x:,.0f}}<br>%{{y:,.3~f}} FLOP/byte<extra></extra>"

    figure = draw.figure()
    figure.add_trace(
        draw.scatter(
            x=batches,
            y=curve,
            name=labels["decode"],
            mode="lines",
            line={"color": DECODE_COLOR, "width": 3},
            hovertemplate=hover(labels["decode"]),
        )
    )
    figure.add_trace(
        draw.scatter(
            x=[batch],
            y=np.atleast_1d(here),
            name=labels["current"],
            mode="markers",
            marker={"color": DECODE_COLOR, "size": 14, "symbol": "square", "line": {"color": "white", "width": 1.5}},
            hovertemplate=hover(labels["current"]),
        )
    )
    figure.add_trace(
        draw.scatter(
            x=[batches[0], batches[-1]],
            y=[ridge, ridge],
            name=labels["ridge"],
            mode="lines",
            line={"color": COLORS["limit"], "width": 2, "dash": "dot"},
            hovertemplate=f"<b>{labels['ridge']}</b><br>%{{y:,.1f}} FLOP/byte<extra></extra>",
        )
    )
    top = max(ridge, float(np.max(curve))) * 3
    bottom = float(np.min(curve)) / 2
    figure.update_xaxes(log_axis([batches], separators=separators))
    figure.update_yaxes(log_axis([bottom, top], separators=separators), range=[np.log10(bottom), np.log10(top)])
    return titled(figure, labels, separators=separators)
