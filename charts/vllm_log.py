"""A pasted vLLM log, drawn: the requests its KV pool holds at each context, and each logged number beside kvcore's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from charts import draw
from charts.draw import AnyFigure
from charts.style import COLORS, hline, log_axis, styled
from kvcore import capacity
from kvcore.log_lines import Check
from kvcore.model import ModelSpec

#: Keys a caller must translate for the users chart (the axis titles carry the units).
USERS_LABELS = (
    "title",
    "subtitle",
    "x_title",
    "y_title",
    "curve",
    "chosen",
    "requested",
    "one_user",
    "users",
    "tokens",
)

#: Keys a caller must translate for the ratio chart, besides one name per check kind.
RATIO_LABELS = ("title", "subtitle", "x_title", "y_title", "logged", "expected", "agree", "differ", "cannot_check")

STATUS_COLORS = {"agree": COLORS["current"], "differ": COLORS["limit"], "cannot_check": "#8C8C8C"}

#: Points on the users curve.
CURVE_POINTS = 240


def context_grid(*, block_size: int, longest_tokens: int) -> np.ndarray:
    """Whole-token contexts from one block to `longest_tokens`, evenly spread (the x of the users curve)."""
    top = max(int(longest_tokens), int(block_size) + 1)
    return np.unique(np.linspace(int(block_size), top, CURVE_POINTS).astype(int))


def users_by_context_figure(
    *,
    model: ModelSpec,
    num_blocks: int,
    block_size: int,
    tp: int,
    context_tokens: int,
    requested_tokens: int | None,
    longest_tokens: int,
    separators: str,
    labels: Mapping[str, str],
) -> AnyFigure:
    """Requests of each length the log's pool holds at once (vLLM's 'maximum concurrency'), slider context marked.

    y = kvcore.capacity.max_concurrency(model, num_blocks, L) for L on the x axis; log scale
    when every value is positive (one user at 1k and hundreds at 128 tokens fit one axis).
    """
    x = context_grid(block_size=block_size, longest_tokens=longest_tokens)
    y = capacity.max_concurrency(model, num_blocks=num_blocks, max_model_len=x, block_size=block_size, tp=tp)
    at_chosen = float(
        capacity.max_concurrency(
            model, num_blocks=num_blocks, max_model_len=context_tokens, block_size=block_size, tp=tp
        )
    )
    hover = f"%{{x:,.0f}} {labels['tokens']}<br>%{{y:,.2f}} {labels['users']}<extra></extra>"
    figure = draw.figure()
    figure.add_trace(
        draw.scatter(
            x=x, y=y, mode="lines", name=labels["curve"], line={"color": COLORS["kv_cache"], "width": 3},
            hovertemplate=hover,
        )
    )  # fmt: skip
    figure.add_trace(
        draw.scatter(
            x=[x[0], x[-1]], y=[1.0, 1.0], mode="lines", name=labels["one_user"],
            line={"color": COLORS["limit"], "dash": "dot", "width": 2}, hoverinfo="skip",
        )
    )  # fmt: skip
    figure.add_trace(
        draw.scatter(
            x=[context_tokens], y=[at_chosen], mode="markers", name=labels["chosen"],
            marker={"color": COLORS["current"], "size": 14, "symbol": "diamond"}, hovertemplate=hover,
        )
    )  # fmt: skip
    if requested_tokens:
        at_requested = float(
            capacity.max_concurrency(
                model, num_blocks=num_blocks, max_model_len=requested_tokens, block_size=block_size, tp=tp
            )
        )
        figure.add_trace(
            draw.scatter(
                x=[requested_tokens], y=[at_requested], mode="markers", name=labels["requested"],
                marker={"color": COLORS["weights"], "size": 13, "symbol": "circle-open", "line": {"width": 3}},
                hovertemplate=hover,
            )
        )  # fmt: skip
    styled(
        figure, title=labels["title"], subtitle=labels["subtitle"], x_title=labels["x_title"], y_title=labels["y_title"]
    )
    if bool(np.all(y > 0)) and at_chosen > 0:
        figure.update_yaxes(log_axis([trace["y"] for trace in figure.data], separators=separators))
    figure.update_layout(separators=separators)
    return figure


def ratio_checks(checks: Sequence[Check]) -> list[Check]:
    """The checks that have both numbers (logged ÷ expected can be drawn)."""
    return [check for check in checks if check.ratio is not None]


def checks_ratio_figure(
    *, checks: Sequence[Check], names: Mapping[str, str], separators: str, labels: Mapping[str, str]
) -> AnyFigure:
    """Each logged number divided by kvcore's (1 = agree exactly), with the band vLLM's rounding allows.

    Bars coloured by status; error bars run from low/expected to high/expected.
    """
    drawn = ratio_checks(checks)
    ratios = [float(check.ratio or 0.0) for check in drawn]
    expected = [float(check.expected or 0.0) for check in drawn]
    plus = [
        (float(check.high or 0.0) / e - r) if e else 0.0 for check, e, r in zip(drawn, expected, ratios, strict=True)
    ]
    minus = [
        (r - float(check.low or 0.0) / e) if e else 0.0 for check, e, r in zip(drawn, expected, ratios, strict=True)
    ]
    figure = draw.figure(
        draw.bar(
            x=[names.get(check.kind, check.kind) for check in drawn],
            y=ratios,
            marker={"color": [STATUS_COLORS[check.status] for check in drawn]},
            error_y={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "color": "#444444"},
            customdata=[[check.logged, check.expected, labels[check.status]] for check in drawn],
            hovertemplate=(
                f"%{{x}}<br>{labels['logged']} ÷ {labels['expected']} = %{{y:.3f}}"
                f"<br>{labels['logged']}: %{{customdata[0]:,.2f}}<br>{labels['expected']}: %{{customdata[1]:,.2f}}"
                "<br>%{customdata[2]}<extra></extra>"
            ),
            name=labels["logged"],
        )
    )
    hline(figure, 1.0, line={"color": COLORS["text"], "dash": "dot"})
    styled(
        figure, title=labels["title"], subtitle=labels["subtitle"], x_title=labels["x_title"], y_title=labels["y_title"]
    )
    figure.update_layout(separators=separators, showlegend=False)
    return figure
