"""Sizing a server: the memory budget as a waterfall, and context per user against the number of users."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

import kvcore
from charts import draw
from charts.draw import AnyFigure
from charts.formatting import number
from charts.style import COLORS, titled, vline
from charts.waterfall import waterfall_figure
from kvcore.capacity import SizingSteps, context_per_user, max_context_tokens, tokens_that_fit

#: Keys a caller must translate for the waterfall (the y title must name the unit).
WATERFALL_LABELS = ("title", "subtitle", "y_title", "vram", "held_back", "weights", "overhead", "pool")

#: Keys a caller must translate for the users chart.
USERS_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "y_title",
    "seed_rule",
    "fitting",
    "expected",
    "current",
    "users_fit",
    "users",
    "tokens",
)


def sizing_waterfall_figure(
    *,
    steps: SizingSteps,
    labels: Mapping[str, str],
    separators: str = ".,",
    unit_bytes: float = kvcore.GiB,
    unit: str = "GiB",
    does_not_fit: str | None = None,
) -> AnyFigure:
    """Seed 000's budget on one GPU: VRAM, minus what u holds back, the weights and the overhead, leaves the KV pool.

    ``charts.waterfall.waterfall_figure`` of the fields of kvcore's ``SizingSteps``
    (they add up to the card, so the last bar is ``kv_pool_bytes``), in `unit`; a pool below zero stands at zero,
    labelled `does_not_fit`.
    """
    terms = [
        (labels["held_back"], steps.held_back_bytes),
        (labels["weights"], steps.weights_bytes),
        (labels["overhead"], steps.overhead_bytes),
    ]
    return waterfall_figure(
        start=(labels["vram"], steps.memory_bytes),
        terms=terms,
        result=(labels["pool"], steps.kv_pool_bytes),
        labels=labels,
        separators=separators,
        unit_bytes=unit_bytes,
        unit=unit,
        does_not_fit=does_not_fit,
    )


def users_axis(*, concurrency: int, users_that_fit: float, max_users: int = 512) -> np.ndarray:
    """1 … a number of users that shows both the current load and where the expected context stops fitting."""
    last = int(np.clip(max(2 * concurrency, 1.5 * users_that_fit, 8), 8, max_users))
    return np.arange(1, last + 1, dtype=float)


def context_per_user_figure(
    *,
    model: kvcore.ModelSpec,
    steps: SizingSteps,
    expected_context_tokens: int,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    labels: Mapping[str, str],
    separators: str = ".,",
) -> AnyFigure:
    """Context per user against users: the seed's hyperbola, the real fit, and the expected context as a line.

    Seed rule: ``context_per_user(pool_tokens, users)``; real fit:
    ``max_context_tokens`` (sliding windows and linear states included), capped at
    the model's max_position_embeddings (no user gets more than the model accepts).
    The vertical line marks how many users of the expected context fit whole
    (``kvcore.max_users``); past it, the curves fall below the expected context and
    the scheduler preempts. The y range stops at twice the expected context (or 1.5 ×
    the current users' share), so the crossing stays readable.
    """
    sequence = kvcore.sequence_kv_bytes(
        model, context_tokens=expected_context_tokens, bytes_per_value=bytes_per_value, tp=tp
    )
    fit = float(kvcore.max_users(kv_pool_bytes=steps.kv_pool_bytes, sequence_bytes=sequence))
    users = users_axis(concurrency=steps.concurrency, users_that_fit=fit)
    seed_rule = context_per_user(
        pool_tokens=tokens_that_fit(kv_pool_bytes=steps.kv_pool_bytes, bytes_per_token=steps.bytes_per_token),
        concurrency=users,
    )
    fitting = max_context_tokens(
        model,
        kv_pool_bytes=steps.kv_pool_bytes,
        concurrency=users,
        bytes_per_value=bytes_per_value,
        tp=tp,
        limit_tokens=model.max_position_embeddings,
    )

    def hover(name: str) -> str:
        return f"<b>{name}</b><br>%{{x:,.0f}} {labels['users']}<br>%{{y:,.0f}} {labels['tokens']}<extra></extra>"

    figure = draw.figure()
    figure.add_trace(
        draw.scatter(
            x=users,
            y=seed_rule,
            name=labels["seed_rule"],
            mode="lines",
            line={"color": COLORS["kv_cache"], "width": 5},
            hovertemplate=hover(labels["seed_rule"]),
        )
    )
    figure.add_trace(
        draw.scatter(
            x=users,
            y=fitting,
            name=labels["fitting"],
            mode="lines",
            line={"color": COLORS["weights"], "width": 2, "dash": "dash"},
            hovertemplate=hover(labels["fitting"]),
        )
    )
    figure.add_trace(
        draw.scatter(
            x=users,
            y=np.full_like(users, float(expected_context_tokens)),
            name=labels["expected"],
            mode="lines",
            line={"color": COLORS["limit"], "width": 3, "dash": "dot"},
            hovertemplate=hover(labels["expected"]),
        )
    )
    current = float(fitting[min(steps.concurrency, len(users)) - 1])
    figure.add_trace(
        draw.scatter(
            x=[float(steps.concurrency)],
            y=[max(current, 1.0)],
            name=labels["current"],
            mode="markers",
            marker={"color": COLORS["current"], "size": 14, "symbol": "diamond"},
            hovertemplate=hover(labels["current"]),
        )
    )
    if 1 <= fit <= users[-1]:
        vline(
            figure,
            fit,
            line={"color": COLORS["limit"], "width": 1, "dash": "dot"},
            annotation={
                "text": f"{labels['users_fit']}: {number(fit, separators, decimals=0)}",
                "font": {"color": COLORS["limit"]},
            },
            annotation_position="top right" if fit < users[-1] / 2 else "top left",
        )
    figure.update_xaxes(range=[0.5, float(users[-1]) + 0.5])
    # The hyperbola's top (few users, huge context each) may leave the chart: the expected
    # context and the current load are what the reader compares.
    top = max(2.0 * expected_context_tokens, 1.5 * current, 1.0)
    figure.update_yaxes(range=[0, top], rangemode="tozero")
    return titled(figure, labels, separators=separators)
