"""Prefix caching: KV memory with and without a shared prefix (the full-block staircase), and the TTL cliff in price."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, titled, vline
from kvcore.paging import prefix_memory, prompt_cache_cost

#: Keys a caller must translate for the memory chart (the y title must name the unit).
MEMORY_LABELS = ("title", "subtitle", "x_title", "y_title", "without", "with", "current", "tokens")

#: Keys a caller must translate for the cost chart.
COST_LABELS = ("title", "subtitle", "x_title", "y_title", "without", "with", "ttl", "current")

#: Points on each curve: enough for the block staircase to show.
POINTS = 2001


def prefix_axis(prefix_tokens: int, block_size: int) -> np.ndarray:
    """Whole prefix lengths from 0 to a bit past the current one (at least a few blocks)."""
    last = max(2 * prefix_tokens, 8 * block_size, 64)
    return np.unique(np.rint(np.linspace(0, last, POINTS)))


def prefix_memory_figure(
    *,
    prefix_tokens: int,
    suffix_tokens: int,
    requests: int,
    block_size: int,
    bytes_per_token: float,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = 2**30,
    unit: str = "GiB",
) -> AnyFigure:
    """KV memory of B requests against the prefix length P: blocks_without and blocks_with from ``prefix_memory``.

    Only full blocks are shared, so the saving grows in steps of one block.
    """
    prefix = prefix_axis(prefix_tokens, block_size)
    sizes = {"suffix_tokens": suffix_tokens, "requests": requests, "block_size": block_size}
    memory = prefix_memory(prefix_tokens=prefix, **sizes, bytes_per_token=bytes_per_token)
    current = prefix_memory(prefix_tokens=prefix_tokens, **sizes, bytes_per_token=bytes_per_token)
    hover = f"{labels['tokens']}: %{{x:,.0f}}<br>%{{y:,.3f}} {unit}<extra>%{{fullData.name}}</extra>"
    figure = draw.figure(
        [
            draw.scatter(
                x=prefix,
                y=memory.blocks_without * memory.block_bytes / unit_bytes,
                name=labels["without"],
                line={"color": COLORS["limit"], "shape": "hv"},
                hovertemplate=hover,
            ),
            draw.scatter(
                x=prefix,
                y=memory.blocks_with * memory.block_bytes / unit_bytes,
                name=labels["with"],
                line={"color": COLORS["kv_cache"], "shape": "hv"},
                hovertemplate=hover,
            ),
            draw.scatter(
                x=[prefix_tokens],
                y=[float(current.blocks_with * current.block_bytes) / unit_bytes],
                name=labels["current"],
                mode="markers",
                marker={"color": COLORS["current"], "size": 12},
                hovertemplate=hover,
            ),
        ]
    )
    return titled(figure, labels, separators=separators)


def interval_axis(interval_s: float, ttl_s: float) -> np.ndarray:
    """Seconds between requests from 0 to past both the TTL and the current interval."""
    last = max(2 * ttl_s, 1.5 * interval_s, 60.0)
    return np.unique(np.concatenate([np.linspace(0, last, POINTS), [ttl_s, interval_s]]))


def cost_figure(
    *,
    prefix_tokens: int,
    suffix_tokens: int,
    requests: int,
    input_usd_per_mtok: float,
    interval_s: float,
    ttl_s: float,
    cache_write_multiplier: float,
    cache_read_multiplier: float,
    labels: Mapping[str, str],
    separators: str = ".,",
    min_cacheable_tokens: int = 0,
) -> AnyFigure:
    """Input cost of B requests against the interval between them: cheap reads until the TTL, then writes again.

    A prefix shorter than `min_cacheable_tokens` is never cached: the two lines coincide.
    """
    interval = interval_axis(interval_s, ttl_s)
    common = {
        "prefix_tokens": prefix_tokens,
        "suffix_tokens": suffix_tokens,
        "requests": requests,
        "input_usd_per_mtok": input_usd_per_mtok,
        "ttl_s": ttl_s,
        "cache_write_multiplier": cache_write_multiplier,
        "cache_read_multiplier": cache_read_multiplier,
        "min_cacheable_tokens": min_cacheable_tokens,
    }
    cost = prompt_cache_cost(interval_s=interval, **common)
    current = prompt_cache_cost(interval_s=interval_s, **common)
    hover = "%{x:,.0f} s<br>%{y:,.4f} USD<extra>%{fullData.name}</extra>"
    figure = draw.figure(
        [
            draw.scatter(
                x=interval,
                y=np.broadcast_to(cost.cost_without_usd, interval.shape),
                name=labels["without"],
                line={"color": COLORS["limit"]},
                hovertemplate=hover,
            ),
            draw.scatter(
                x=interval,
                y=cost.cost_with_usd,
                name=labels["with"],
                line={"color": COLORS["kv_cache"], "shape": "hv"},
                hovertemplate=hover,
            ),
            draw.scatter(
                x=[interval_s],
                y=[float(current.cost_with_usd)],
                name=labels["current"],
                mode="markers",
                marker={"color": COLORS["current"], "size": 12},
                hovertemplate=hover,
            ),
        ]
    )
    vline(
        figure,
        ttl_s,
        line={"color": COLORS["text"], "dash": "dot"},
        annotation={"text": labels["ttl"]},
        annotation_position="top",
    )
    figure.update_yaxes(rangemode="tozero")
    return titled(figure, labels, separators=separators)
