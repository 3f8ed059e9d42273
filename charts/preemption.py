"""Preemption over time: the block pool, the queues and every request's latency, from kvcore's simulator.

Each builder takes a ``SimulationResult`` of ``kvcore.scheduler.simulate`` and draws it;
nothing is computed here but the thinning of long timelines for drawing.

Thinning: a timeline has one row per scheduler step (or per fast-forwarded run of
decode steps), often several thousand. A browser draws ≤ ``MAX_POINTS`` points per line
smoothly, so longer timelines are cut into that many buckets of consecutive rows and
each bucket is drawn as its largest value at its last row's time: peaks (a full pool,
the longest queue) always survive, which is what the lesson is about.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, hline, styled, titled
from kvcore.scheduler import SimulationResult

#: Most points drawn per line (see the module docstring).
MAX_POINTS = 2000

#: Keys a caller must translate for each figure (titles must name units).
OCCUPANCY_LABELS = ("title", "subtitle", "x_title", "y_title", "used", "full", "preemption", "blocks", "time")
QUEUE_LABELS = ("title", "subtitle", "x_title", "y_title", "running", "waiting", "swapped", "time")
LATENCY_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "ttft_title",
    "tpot_title",
    "smooth",
    "preempted",
    "request",
    "preemptions",
)

RUNNING_COLOR = COLORS["current"]
WAITING_COLOR = COLORS["limit"]
SWAPPED_COLOR = "#CC79A7"
SMOOTH_COLOR = COLORS["weights"]


def bucket_max(time_s: np.ndarray, values: np.ndarray, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most `max_points` (time, value) pairs: each bucket of consecutive rows → its last time and largest value.

    A timeline shorter than `max_points` comes back unchanged.
    """
    time_s = np.asarray(time_s, dtype=float)
    values = np.asarray(values)
    if time_s.size <= max_points:
        return time_s, values
    edges = np.linspace(0, time_s.size, max_points + 1).astype(int)
    starts, ends = edges[:-1], edges[1:]
    return time_s[ends - 1], np.maximum.reduceat(values, starts)


def preemption_events(result: SimulationResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows where preemptions happened: their time (s), how many (count) and the pool's fill then (0–1)."""
    timeline = result.timeline
    new = np.diff(timeline.preemptions, prepend=0)
    rows = np.flatnonzero(new > 0)
    return timeline.time_s[rows], new[rows], timeline.used_blocks[rows] / result.num_blocks


def occupancy_figure(result: SimulationResult, *, labels: Mapping[str, str], separators: str = ".,") -> AnyFigure:
    """Used blocks ÷ pool blocks over time (%), the pool's 100 % line, and a mark at every preemption."""
    timeline = result.timeline
    time_s, used = bucket_max(timeline.time_s, timeline.used_blocks)
    share = used / result.num_blocks
    figure = draw.figure()
    figure.add_trace(
        draw.scatter(
            x=time_s,
            y=share * 100,
            customdata=used,
            mode="lines",
            line={"color": COLORS["kv_cache"], "width": 2, "shape": "hv"},
            fill="tozeroy",
            name=labels["used"],
            hovertemplate=(
                f"{labels['time']}: %{{x:,.2f}} s<br>%{{y:,.1f}} %<br>"
                f"%{{customdata:,}} / {result.num_blocks:,} {labels['blocks']}<extra></extra>"
            ),
        )
    )
    hline(figure, 100, line={"color": COLORS["limit"], "dash": "dash"}, annotation={"text": labels["full"]})
    event_time, event_count, event_share = preemption_events(result)
    if event_time.size:
        figure.add_trace(
            draw.scatter(
                x=event_time,
                y=event_share * 100,
                customdata=event_count,
                mode="markers",
                marker={"color": COLORS["limit"], "symbol": "x", "size": 9},
                name=labels["preemption"],
                hovertemplate=(
                    f"{labels['time']}: %{{x:,.2f}} s<br>{labels['preemption']}: %{{customdata}}<extra></extra>"
                ),
            )
        )
    titled(figure, labels, separators=separators)
    figure.update_yaxes(range=[0, 108], ticksuffix=" %")
    return figure


def queue_figure(result: SimulationResult, *, labels: Mapping[str, str], separators: str = ".,") -> AnyFigure:
    """Requests running and waiting over time (and swapped to CPU memory, when any were)."""
    timeline = result.timeline
    series = [("running", timeline.running, RUNNING_COLOR), ("waiting", timeline.waiting, WAITING_COLOR)]
    if timeline.swapped.any():
        series.append(("swapped", timeline.swapped, SWAPPED_COLOR))
    figure = draw.figure()
    for name, values, color in series:
        time_s, shown = bucket_max(timeline.time_s, values)
        figure.add_trace(
            draw.scatter(
                x=time_s,
                y=shown,
                mode="lines",
                line={"color": color, "width": 2, "shape": "hv"},
                name=labels[name],
                hovertemplate=f"{labels['time']}: %{{x:,.2f}} s<br>{labels[name]}: %{{y:,}}<extra></extra>",
            )
        )
    titled(figure, labels, separators=separators)
    figure.update_yaxes(rangemode="tozero")
    return figure


def latency_figure(result: SimulationResult, *, labels: Mapping[str, str], separators: str = ".,") -> AnyFigure:
    """Each request's TTFT (top, s) and TPOT (bottom, ms) against its arrival time; preempted ones as a vermilion ×.

    TPOT is NaN for a one-token answer: such requests have no point in the lower panel.
    """
    outcome = result.requests
    preempted = outcome.preemptions > 0
    figure = draw.subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    ids = np.arange(outcome.arrival_s.size)
    for hit, name, color, symbol in (
        (~preempted, labels["smooth"], SMOOTH_COLOR, "circle"),
        (preempted, labels["preempted"], COLORS["limit"], "x"),
    ):
        if not hit.any():
            continue
        custom = np.column_stack([ids[hit], outcome.preemptions[hit]])
        hover = f"{labels['request']} %{{customdata[0]}}<br>{labels['preemptions']}: %{{customdata[1]}}<br>"
        for row, values, title in (
            (1, outcome.ttft_s[hit], "ttft_title"),
            (2, outcome.tpot_s[hit] * 1e3, "tpot_title"),
        ):
            figure.add_trace(
                draw.scatter(
                    x=outcome.arrival_s[hit],
                    y=values,
                    customdata=custom,
                    mode="markers",
                    marker={"color": color, "symbol": symbol, "size": 6, "opacity": 0.75},
                    name=name,
                    legendgroup=name,
                    showlegend=row == 1,
                    hovertemplate=hover + f"{labels[title]}: %{{y:,.3f}}<extra></extra>",
                ),
                row=row,
                col=1,
            )
    styled(
        figure,
        title=labels["title"],
        subtitle=labels["subtitle"],
        x_title="",
        y_title="",
    )
    figure.update_xaxes(title_text=labels["x_title"], row=2, col=1)
    figure.update_xaxes(title_text="", row=1, col=1)
    figure.update_yaxes(title_text=labels["ttft_title"], rangemode="tozero", row=1, col=1)
    figure.update_yaxes(title_text=labels["tpot_title"], rangemode="tozero", row=2, col=1)
    figure.update_layout(separators=separators)
    return figure
