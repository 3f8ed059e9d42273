"""Why cache K and V: total work as N grows, work per step, and a token-by-token grid of what is reused."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, HALF_X_TITLE_LINE_CHARS, SUBPLOT_TITLES_GAP_PX, log_axis, styled, titled, wrapped
from kvcore.attention import (
    GRID_CACHED,
    GRID_COMPUTED,
    GRID_NOT_YET,
    GRID_RECOMPUTED,
    kv_projection_flops_at_step,
    kv_projection_flops_with_cache,
    kv_projection_flops_without_cache,
    projection_grid,
)

#: Texts the caller translates (axis titles carry the units).
WORK_LABELS = ("title", "subtitle", "x_title", "y_title", "without", "with", "tokens", "projections")
STEP_LABELS = ("title", "subtitle", "x_title", "y_title", "without", "with", "step", "projections")
GRID_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "y_title",
    "without",
    "with",
    "not_yet",
    "computed",
    "cached",
    "recomputed",
    "step",
    "token",
)

#: Without a cache in vermilion (wasted work), with one in blue; the grid's four states.
WITHOUT_COLOR = COLORS["limit"]
WITH_COLOR = COLORS["weights"]
GRID_COLORS = {
    GRID_NOT_YET: "#F2F2F2",
    GRID_COMPUTED: COLORS["current"],
    GRID_CACHED: WITH_COLOR,
    GRID_RECOMPUTED: WITHOUT_COLOR,
}
GRID_NAMES = {GRID_NOT_YET: "not_yet", GRID_COMPUTED: "computed", GRID_CACHED: "cached", GRID_RECOMPUTED: "recomputed"}

#: Below this many tokens every step gets a marker (the smallest examples are counted by hand).
MARKERS_UP_TO = 40
CURVE_POINTS = 400


def token_axis(generated_tokens: int, *, points: int = CURVE_POINTS) -> np.ndarray:
    """Whole token counts from 1 to N: every one for a small N, about `points` of them otherwise."""
    return np.unique(np.rint(np.linspace(1, max(int(generated_tokens), 1), points)))


def cumulative_work_figure(
    *,
    model: kvcore.ModelSpec,
    generated_tokens: int,
    labels: Mapping[str, str],
    separators: str = ".,",
    log_y: bool = False,
) -> AnyFigure:
    """K/V projection FLOPs to generate 1 … N tokens, recomputing everything vs with a cache.

    Both curves are kvcore's (``kv_projection_flops_without_cache`` and
    ``…_with_cache``) for `model`; the hover adds the projection count (N(N+1)/2 or N).
    The y title must name the unit (FLOP). With `log_y` the y axis is logarithmic: the
    cached curve, (N+1)/2 times lower, no longer lies flat along zero.
    """
    tokens = token_axis(generated_tokens)
    curves = {
        "without": (
            kv_projection_flops_without_cache(model, generated_tokens=tokens),
            kvcore.kv_projections_without_cache(tokens),
            WITHOUT_COLOR,
        ),
        "with": (
            kv_projection_flops_with_cache(model, generated_tokens=tokens),
            kvcore.kv_projections_with_cache(tokens),
            WITH_COLOR,
        ),
    }
    x_hover = f"%{{x:,.0f}} {labels['tokens']}"
    return _work_figure(tokens, curves, x_hover=x_hover, labels=labels, separators=separators, log_y=log_y)


def step_work_figure(
    *,
    model: kvcore.ModelSpec,
    generated_tokens: int,
    labels: Mapping[str, str],
    separators: str = ".,",
    log_y: bool = False,
) -> AnyFigure:
    """K/V projection FLOPs of step t alone, for t = 1 … N: growing like t without a cache, flat with one.

    Values from kvcore's ``kv_projection_flops_at_step``; the hover adds the projection
    count (t or 1). `log_y` makes the y axis logarithmic (``cumulative_work_figure``).
    """
    steps = token_axis(generated_tokens)
    curves = {
        name: (
            kv_projection_flops_at_step(model, steps, cached=cached),
            kvcore.projections_at_step(steps, cached=cached),
            color,
        )
        for name, cached, color in (("without", False, WITHOUT_COLOR), ("with", True, WITH_COLOR))
    }
    x_hover = f"{labels['step']} %{{x:,.0f}}"
    return _work_figure(steps, curves, x_hover=x_hover, labels=labels, separators=separators, log_y=log_y)


def _work_figure(
    x: np.ndarray,
    curves: Mapping[str, tuple[np.ndarray, np.ndarray, str]],
    *,
    x_hover: str,
    labels: Mapping[str, str],
    separators: str,
    log_y: bool = False,
) -> AnyFigure:
    """K/V projection FLOPs against `x` (tokens or steps), one curve per ``name: (FLOPs, projections, colour)``.

    Every point gets a marker while `x` ends at ``MARKERS_UP_TO`` or below; the hover
    shows `x_hover`, the projection count and the FLOPs (SI prefixes).
    """
    mode = "lines+markers" if x[-1] <= MARKERS_UP_TO else "lines"
    figure = draw.figure()
    for name, (flops, projections, color) in curves.items():
        figure.add_trace(
            draw.scatter(
                x=x,
                y=flops,
                customdata=projections,
                name=labels[name],
                mode=mode,
                line={"color": color, "width": 3},
                hovertemplate=(
                    f"<b>{labels[name]}</b><br>{x_hover}<br>"
                    f"%{{customdata:,.0f}} {labels['projections']}<br>%{{y:.3s}}FLOP<extra></extra>"
                ),
            )
        )
    figure.update_xaxes(rangemode="tozero")
    if log_y:
        figure.update_yaxes(log_axis([trace["y"] for trace in figure.data], separators=separators))
    else:
        figure.update_yaxes(rangemode="tozero", tickformat="~s")
    return titled(figure, labels, separators=separators)


def token_grid_figure(*, steps: int, labels: Mapping[str, str], separators: str = ".,") -> AnyFigure:
    """Two grids side by side, without and with a cache: rows are steps, columns token positions.

    Cells hold kvcore's ``projection_grid`` codes, coloured by state (not yet, computed
    now, read from the cache, recomputed); a legend entry per state explains the colours.
    """
    figure = draw.subplots(
        rows=1, cols=2, subplot_titles=(labels["without"], labels["with"]), horizontal_spacing=0.08, shared_yaxes=True
    )
    codes = sorted(GRID_COLORS)
    # A step colour scale: code k fills the band [k, k + 1) / 4, so each code gets its own flat colour.
    scale = []
    for code in codes:
        scale += [[code / len(codes), GRID_COLORS[code]], [(code + 1) / len(codes), GRID_COLORS[code]]]
    positions = np.arange(1, steps + 1)
    for column, cached in ((1, False), (2, True)):
        grid = projection_grid(steps, cached=cached)
        words = np.vectorize(lambda code: labels[GRID_NAMES[int(code)]])(grid)
        figure.add_trace(
            draw.heatmap(
                z=grid,
                x=positions,
                y=positions,
                customdata=words,
                zmin=-0.5,  # code k sits in the middle of its band: (k + 0.5) / 4
                zmax=len(codes) - 0.5,
                colorscale=scale,
                showscale=False,
                xgap=1,
                ygap=1,
                hovertemplate=(
                    f"{labels['step']} %{{y}} · {labels['token']} %{{x}}<br><b>%{{customdata}}</b><extra></extra>"
                ),
            ),
            row=1,
            col=column,
        )
    for code in (GRID_COMPUTED, GRID_CACHED, GRID_RECOMPUTED, GRID_NOT_YET):  # legend: one square per state
        figure.add_trace(
            draw.scatter(
                x=[None],
                y=[None],
                mode="markers",
                marker={"symbol": "square", "size": 14, "color": GRID_COLORS[code], "line": {"color": "#999999"}},
                name=labels[GRID_NAMES[code]],
            )
        )
    figure.update_yaxes(autorange="reversed", dtick=1 if steps <= 12 else 2)
    figure.update_xaxes(dtick=1 if steps <= 12 else 2, showgrid=False)
    figure.update_yaxes(showgrid=False)
    figure.update_layout(separators=separators)
    styled(figure, title=labels["title"], subtitle=labels["subtitle"], x_title="", y_title="")
    figure.update_xaxes(title={"text": wrapped(labels["x_title"], HALF_X_TITLE_LINE_CHARS)})
    figure.update_yaxes(title={"text": labels["y_title"]}, row=1, col=1)
    # Room between the chart's title and the plot for the two grids' titles.
    figure.update_layout(hovermode="closest", title_pad_b=SUBPLOT_TITLES_GAP_PX)
    return figure
