"""What FlashAttention changes: the n × n scores it never writes, the HBM traffic it saves, the KV cache it keeps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.formatting import localized, sizes
from charts.style import COLORS, current_line, log_axis, styled, titled
from kvcore.attention import flash_attention_hbm_bytes, prefill_attention_memory, standard_attention_hbm_bytes
from kvcore.units import format_seconds

#: Texts the caller translates (axis titles carry the units).
MEMORY_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "y_title",
    "scores",
    "stats",
    "kv_cache",
    "gpu_memory",
    "sram",
    "current",
    "tokens",
)
TRAFFIC_LABELS = ("title", "subtitle", "x_title", "y_title", "standard", "flash", "tokens", "time")
BARS_LABELS = ("title", "subtitle", "y_title", "standard", "flash", "kv_cache", "temporary")

#: Standard attention in vermilion (the matrix that blows up), FlashAttention in green, the cache in orange.
STANDARD_COLOR = COLORS["limit"]
FLASH_COLOR = COLORS["current"]
KV_COLOR = COLORS["kv_cache"]
SRAM_COLOR = "#CC79A7"
GPU_MEMORY_COLOR = "#555555"
CURVE_POINTS = 160
SMALLEST_TOKENS = 128


def sequence_axis(max_tokens: float, *, points: int = CURVE_POINTS) -> np.ndarray:
    """Sequence lengths the curves are drawn at: geometric from 128 to `max_tokens` (straight lines on log axes)."""
    top = max(float(max_tokens), 2.0 * SMALLEST_TOKENS)
    return np.geomspace(SMALLEST_TOKENS, top, points)


def size_texts(num_bytes: np.ndarray, *, unit: str, separators: str) -> list[str]:
    """Each size in binary units (KiB … TiB) or, when the page shows GB, decimal ones, with the language's marks."""
    return sizes(np.atleast_1d(num_bytes), separators, unit=unit)


def _line(
    x: np.ndarray,
    num_bytes: np.ndarray,
    *,
    name: str,
    color: str,
    unit_bytes: float,
    unit: str,
    separators: str,
    **kw: Any,
) -> dict[str, Any]:
    return draw.scatter(
        x=x,
        y=np.asarray(num_bytes, dtype=float) / unit_bytes,
        customdata=size_texts(num_bytes, unit=unit, separators=separators),
        name=name,
        mode="lines",
        line={"color": color, "width": 3, **kw},
        hovertemplate=f"<b>{name}</b><br>n = %{{x:,.0f}}<br>%{{customdata}}<extra></extra>",
    )


def score_memory_figure(
    *,
    model: kvcore.ModelSpec,
    gpu: kvcore.GpuSpec,
    tokens: float,
    max_tokens: float,
    heads: int,
    batch: int = 1,
    bytes_per_value: float = 2.0,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """Memory against sequence length n (log–log): the n × n scores, FlashAttention's row statistics, the KV cache.

    All three come from kvcore's ``prefill_attention_memory``: the scores are the
    standard kernel's temporary bytes (one layer), the statistics FlashAttention's,
    and the KV cache is the one both kernels share. The GPU's memory and its on-chip
    SRAM (when known) are horizontal lines; a dotted line marks the chosen n.
    """
    n = sequence_axis(max_tokens)
    knobs: dict[str, Any] = {"tokens": n, "heads": heads, "batch": batch, "bytes_per_value": bytes_per_value}
    standard = prefill_attention_memory(model, flash=False, **knobs)
    flash = prefill_attention_memory(model, flash=True, **knobs)
    sizes: dict[str, Any] = {"unit_bytes": unit_bytes, "unit": unit, "separators": separators}
    figure = draw.figure()
    figure.add_trace(_line(n, standard.temporary_bytes, name=labels["scores"], color=STANDARD_COLOR, **sizes))
    figure.add_trace(_line(n, flash.kv_cache_bytes, name=labels["kv_cache"], color=KV_COLOR, **sizes))
    figure.add_trace(_line(n, flash.temporary_bytes, name=labels["stats"], color=FLASH_COLOR, **sizes))
    limits = [("gpu_memory", gpu.memory_bytes, GPU_MEMORY_COLOR)]
    if np.isfinite(gpu.sram_bytes):
        limits.append(("sram", gpu.sram_bytes, SRAM_COLOR))
    for name, num_bytes, color in limits:
        figure.add_trace(
            _line(n, np.full_like(n, num_bytes), name=labels[name], color=color, dash="dash", **sizes),
        )
    current_line(figure, tokens, label=labels["current"], position="top left")
    figure.update_xaxes(log_axis([n], separators=separators))
    figure.update_yaxes(log_axis([trace["y"] for trace in figure.data], separators=separators))
    titled(figure, labels, separators=separators)
    return figure


def hbm_traffic_figure(
    *,
    tokens: float,
    max_tokens: float,
    head_dim: int,
    heads: int,
    batch: int = 1,
    bytes_per_value: float = 2.0,
    bandwidth_bytes_per_s: float,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """HBM bytes one layer's attention moves, standard vs FlashAttention-2, against n (log–log).

    kvcore's ``standard_attention_hbm_bytes`` and ``flash_attention_hbm_bytes`` (one
    head) times heads · batch; the hover adds the time to move them at the GPU's bandwidth.
    """
    n = sequence_axis(max_tokens)
    curves = {
        "standard": (
            standard_attention_hbm_bytes(n, head_dim=head_dim, bytes_per_value=bytes_per_value),
            STANDARD_COLOR,
        ),
        "flash": (flash_attention_hbm_bytes(n, head_dim=head_dim, bytes_per_value=bytes_per_value), FLASH_COLOR),
    }
    figure = draw.figure()
    for name, (per_head, color) in curves.items():
        num_bytes = per_head * heads * batch
        seconds = kvcore.stream_time_s(num_bytes, bandwidth_bytes_per_s=bandwidth_bytes_per_s)
        texts = size_texts(num_bytes, unit=unit, separators=separators)
        figure.add_trace(
            draw.scatter(
                x=n,
                y=num_bytes / unit_bytes,
                customdata=np.column_stack([texts, [localized(format_seconds(s), separators) for s in seconds]]),
                name=labels[name],
                mode="lines",
                line={"color": color, "width": 3},
                hovertemplate=(
                    f"<b>{labels[name]}</b><br>n = %{{x:,.0f}}<br>%{{customdata[0]}}<br>"
                    f"{labels['time']}: %{{customdata[1]}}<extra></extra>"
                ),
            )
        )
    current_line(figure, tokens)
    figure.update_xaxes(log_axis([n], separators=separators))
    figure.update_yaxes(log_axis([trace["y"] for trace in figure.data], separators=separators))
    titled(figure, labels, separators=separators)
    return figure


def kv_unchanged_figure(
    *,
    model: kvcore.ModelSpec,
    tokens: float,
    heads: int,
    batch: int = 1,
    bytes_per_value: float = 2.0,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
) -> AnyFigure:
    """Two stacked bars, standard attention and FlashAttention: the KV cache (equal) plus the temporary bytes.

    Each bar is kvcore's ``prefill_attention_memory`` with ``flash`` False, then True.
    """
    bars = {
        "standard": prefill_attention_memory(
            model, tokens=tokens, flash=False, heads=heads, batch=batch, bytes_per_value=bytes_per_value
        ),
        "flash": prefill_attention_memory(
            model, tokens=tokens, flash=True, heads=heads, batch=batch, bytes_per_value=bytes_per_value
        ),
    }
    names = [labels[key] for key in bars]
    figure = draw.figure()
    for part, color in (("kv_cache", KV_COLOR), ("temporary", STANDARD_COLOR)):
        values = np.array([float(getattr(bars[key], f"{part}_bytes")) for key in bars])
        texts = size_texts(values, unit=unit, separators=separators)
        figure.add_trace(draw.sized_bar(x=names, y=values / unit_bytes, name=labels[part], color=color, texts=texts))
    figure.update_layout(barmode="stack", separators=separators)
    figure.update_yaxes(rangemode="tozero")
    return styled(figure, title=labels["title"], subtitle=labels["subtitle"], x_title="", y_title=labels["y_title"])
