"""Quantizing the KV cache: cache size per format, users gained, and the round-trip error of K and V."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.formatting import number
from charts.style import COLORS, hline, log_axis, styled
from kvcore.quantization import relative_rms_error, round_trip, stored_bytes_per_value

#: Keys a caller must translate for the cache chart (the y title must name the unit).
CACHE_LABELS = ("title", "subtitle", "y_title", "nominal", "with_scales", "room", "formats")
#: Keys for the capacity chart.
CAPACITY_LABELS = ("title", "subtitle", "y_title", "users", "formats")
#: Keys for the error chart.
ERROR_LABELS = ("title", "subtitle", "y_title", "keys", "values", "formats")

NOMINAL_COLOR = "#F5D08A"  # a lighter shade of the cache's orange: the bare bits, scales left out
VALUES_COLOR = "#56B4E9"


def format_names(formats: Sequence[str], names: Mapping[str, str]) -> list[str]:
    """Axis labels for the formats ('BF16', 'FP8' …), translated where the caller gave a name."""
    return [names.get(fmt, fmt.upper()) for fmt in formats]


def cache_by_format_figure(
    *,
    model: kvcore.ModelSpec,
    context_tokens: float,
    concurrency: int,
    kv_room_bytes: float,
    formats: Sequence[str],
    group_size: int = 128,
    labels: Mapping[str, str],
    names: Mapping[str, str] | None = None,
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """Grouped bars: the cache of `concurrency` users at `context_tokens`, per format, nominal and with scales.

    Nominal bars use ``kvcore.bytes_per_value`` (INT4 = 0.5 B); the others
    ``stored_bytes_per_value`` (INT4 = 0.5 + 2/group B). Both are ``kv_cache_bytes``
    divided by `unit_bytes`. A dashed line marks the memory left for the cache on the
    GPU (`kv_room_bytes`), when there is any.
    """
    shown = format_names(formats, names or {})

    def cache(bytes_per_value: float) -> float:
        return float(
            kvcore.kv_cache_bytes(
                model, context_tokens=context_tokens, concurrency=concurrency, bytes_per_value=bytes_per_value
            )
        )

    nominal = np.array([cache(kvcore.bytes_per_value(fmt)) for fmt in formats]) / unit_bytes
    real = np.array([cache(stored_bytes_per_value(fmt, group_size=group_size)) for fmt in formats]) / unit_bytes
    hover = f"<b>%{{x}}</b> · %{{fullData.name}}<br>%{{y:,.2f}} {unit}<extra></extra>"
    figure = draw.figure()
    for name, values, color in (
        (labels["nominal"], nominal, NOMINAL_COLOR),
        (labels["with_scales"], real, COLORS["kv_cache"]),
    ):
        figure.add_trace(
            draw.bar(
                x=shown,
                y=values,
                name=name,
                marker={"color": color},
                text=[number(value, separators) for value in values],
                textposition="outside",
                cliponaxis=False,
                hovertemplate=hover,
            )
        )
    top = float(max(real.max(), nominal.max()))
    if kv_room_bytes > 0:
        room = kv_room_bytes / unit_bytes
        hline(
            figure,
            room,
            line={"color": COLORS["limit"], "width": 3, "dash": "dash"},
            annotation={
                "text": f"{labels['room']}: {number(room, separators)} {unit}",
                "font": {"color": COLORS["limit"]},
            },
            annotation_position="top right",
        )
        top = max(top, room)
    figure.update_yaxes(range=[0, top * 1.2])
    figure.update_layout(barmode="group", separators=separators)
    return styled(
        figure, title=labels["title"], subtitle=labels["subtitle"], x_title=labels["formats"], y_title=labels["y_title"]
    )


def users_that_fit(
    model: kvcore.ModelSpec,
    *,
    context_tokens: float,
    kv_room_bytes: float,
    formats: Sequence[str],
    group_size: int = 128,
) -> np.ndarray:
    """Whole users of `context_tokens` the room holds, per format (``kvcore.max_users``, scales included)."""
    sequences = np.array(
        [
            float(
                kvcore.sequence_kv_bytes(
                    model,
                    context_tokens=context_tokens,
                    bytes_per_value=stored_bytes_per_value(fmt, group_size=group_size),
                )
            )
            for fmt in formats
        ]
    )
    return kvcore.max_users(kv_pool_bytes=kv_room_bytes, sequence_bytes=sequences)


def capacity_figure(
    *,
    model: kvcore.ModelSpec,
    context_tokens: float,
    kv_room_bytes: float,
    formats: Sequence[str],
    group_size: int = 128,
    labels: Mapping[str, str],
    names: Mapping[str, str] | None = None,
    separators: str = ".,",
) -> AnyFigure:
    """Bars: users of `context_tokens` that fit per format, each labelled with its gain over the first format (×2.0)."""
    fit = users_that_fit(
        model, context_tokens=context_tokens, kv_room_bytes=kv_room_bytes, formats=formats, group_size=group_size
    )
    baseline = float(fit[0])
    gains = [f"×{number(value / baseline, separators, decimals=1)}" if baseline > 0 else "" for value in fit]
    text = [f"{number(value, separators, decimals=0)} {gain}".strip() for value, gain in zip(fit, gains, strict=True)]
    figure = draw.figure(
        draw.bar(
            x=format_names(formats, names or {}),
            y=fit,
            marker={"color": COLORS["current"]},
            text=text,
            textposition="outside",
            cliponaxis=False,
            hovertemplate=f"<b>%{{x}}</b><br>%{{y:,.0f}} {labels['users']}<extra></extra>",
        )
    )
    figure.update_yaxes(range=[0, max(float(fit.max()), 1.0) * 1.2])
    figure.update_layout(separators=separators, showlegend=False)
    return styled(
        figure, title=labels["title"], subtitle=labels["subtitle"], x_title=labels["formats"], y_title=labels["y_title"]
    )


def round_trip_errors(
    tensor: np.ndarray, formats: Sequence[str], *, group_size: int = 128, axis: str = "token"
) -> np.ndarray:
    """Relative RMS error of `tensor` read back from each format (kvcore.quantization)."""
    return np.array(
        [relative_rms_error(tensor, round_trip(tensor, fmt, group_size=group_size, axis=axis)) for fmt in formats]
    )


def quantization_error_figure(
    *,
    keys: np.ndarray,
    values: np.ndarray,
    formats: Sequence[str],
    group_size: int = 128,
    axis: str = "token",
    labels: Mapping[str, str],
    names: Mapping[str, str] | None = None,
    separators: str = ".,",
) -> AnyFigure:
    """Grouped bars: relative RMS error (in %) of the synthetic K and V after a round trip through each format.

    Log-scaled: BF16's error is a thousandth of INT4's.
    """
    shown = format_names(formats, names or {})
    figure = draw.figure()
    for name, tensor, color in ((labels["keys"], keys, COLORS["kv_cache"]), (labels["values"], values, VALUES_COLOR)):
        errors = 100.0 * round_trip_errors(tensor, formats, group_size=group_size, axis=axis)
        figure.add_trace(
            draw.bar(
                x=shown,
                y=errors,
                name=name,
                marker={"color": color},
                text=[f"{number(error, separators, decimals=2)} %" for error in errors],
                textposition="outside",
                cliponaxis=False,
                hovertemplate="<b>%{x}</b> · %{fullData.name}<br>%{y:.3f} %<extra></extra>",
            )
        )
    figure.update_yaxes(log_axis([trace["y"] for trace in figure.data], separators=separators))
    figure.update_layout(barmode="group", separators=separators)
    return styled(
        figure, title=labels["title"], subtitle=labels["subtitle"], x_title=labels["formats"], y_title=labels["y_title"]
    )
