"""One look for every chart: a projector-readable template and a colour-blind-safe palette."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import plotly.graph_objects as go
from plotly.shapeannotation import axis_spanning_shape_annotation

from charts.draw import AnyFigure, has_subplots
from charts.formatting import ENGLISH, plain

#: Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
COLORS = {
    "weights": "#0072B2",
    "kv_cache": "#E69F00",
    "limit": "#D55E00",
    "current": "#009E73",
    "grid": "#E5E5E5",
    "text": "#222222",
}

FONT_SIZE = 15
#: A chart title's type [px]; its subtitle's lines are ``SUBTITLE_EM`` of it (relative: presentation mode scales both).
TITLE_FONT_PX = 18
SUBTITLE_EM = 0.72
#: The longest line of a title and of a subtitle, in characters: what fits the narrowest chart, a 390 px
#: phone's (about 290 px right of the y axis title, at 9.5 px a title character, 7 px a subtitle character).
#: Plotly never wraps a title and the server cannot know the screen, so a title is broken into lines this long
#: on every screen.
TITLE_LINE_CHARS = 28
SUBTITLE_LINE_CHARS = 40
#: The same for axis titles (15 px type, about 8 px a character): an x axis title across a phone's chart, a y axis
#: title along a phone's short plot (a longer one ran past the chart's edge or into the x axis title).
X_TITLE_LINE_CHARS = 28
Y_TITLE_LINE_CHARS = 20
#: An x axis title under a plot half a phone's chart wide (two plots side by side, a bar chart's long labels).
HALF_X_TITLE_LINE_CHARS = 16
#: The title starts this far from the chart's left edge [px]: clear of the y axis title (two lines at most),
#: which a phone's short plot makes reach above the plot, beside the title.
TITLE_LEFT_PX = 44
#: Plotly's mode bar (zoom, download) sits over the chart's top right corner: the title starts below it [px].
MODEBAR_CLEARANCE_PX = 30
#: Between the title's last line and the plot [px]:
TITLE_GAP_PX = 28  # room for a line's label drawn on the plot's top edge
#: The same where subplots carry titles of their own above them.
SUBPLOT_TITLES_GAP_PX = TITLE_GAP_PX + 24

TEMPLATE = go.layout.Template(
    layout=go.Layout(
        font={"family": "Source Sans Pro, Arial, sans-serif", "size": FONT_SIZE, "color": COLORS["text"]},
        paper_bgcolor="white",
        plot_bgcolor="white",
        colorway=[COLORS["weights"], COLORS["kv_cache"], COLORS["limit"], COLORS["current"]],
        xaxis={"gridcolor": COLORS["grid"], "zeroline": False, "showline": True, "linecolor": "#999999"},
        yaxis={"gridcolor": COLORS["grid"], "zeroline": False, "showline": True, "linecolor": "#999999"},
        hoverlabel={"font": {"size": FONT_SIZE}},
        # The legend at the chart's bottom edge, below the x axis title whatever the plot's height (a phone's
        # plot is short: a legend placed below the plot by a share of its height lay over the axis title).
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0, "xanchor": "left", "x": 0},
        margin={"l": 10, "r": 20, "t": 20, "b": 10},  # the title pushes the top margin down to fit it
        height=520,
    )
)


#: A tag or an entity in Plotly's text markup: no width of its own when a line's length is counted.
_MARKUP = re.compile(r"<[^>]*>|&[#\w]+;")
#: Where a title may break: after a space.
_BREAK = re.compile(r"(?<= )")


def wrapped_lines(text: str, width: int) -> list[str]:
    """`text` broken at spaces into lines of at most `width` visible characters (a longer word stands alone).

    Its own ``<br>`` breaks stay; tags and entities (``&lt;``) count as no width and one.

    >>> wrapped_lines("KV cache per user · Llama 3.1 8B", 20)
    ['KV cache per user ·', 'Llama 3.1 8B']
    """
    lines: list[str] = []
    for paragraph in re.split(r"<br\s*/?>", text):
        line = ""
        for word in _BREAK.split(paragraph):
            if line and _visible_length(line + word.rstrip()) > width:
                lines.append(line.rstrip())
                line = ""
            line += word
        lines.append(line.rstrip())
    return lines


def wrapped(text: str, width: int) -> str:
    """`text` as Plotly markup broken into lines of at most `width` characters (``wrapped_lines``)."""
    return "<br>".join(wrapped_lines(text, width))


def _visible_length(text: str) -> int:
    return len(_MARKUP.sub(lambda match: "" if match.group().startswith("<") else "x", text))


def chart_title(title: str, subtitle: str = "") -> str:
    """A chart's title and subtitle as one text for ``layout.title.text``: lines that fit a phone's chart.

    One text, not Plotly's ``title.subtitle``: Plotly leaves a subtitle out of the room it
    makes for a title (the subtitle then lay over the plot), and places a title of several
    lines above the top edge when anchored there. The subtitle's lines are smaller.
    """
    lines = wrapped_lines(title, TITLE_LINE_CHARS)
    if subtitle:
        small = f"<span style='font-size:{SUBTITLE_EM}em'>"
        lines += [f"{small}{line}</span>" for line in wrapped_lines(subtitle, SUBTITLE_LINE_CHARS)]
    return "<br>".join(lines)


def title_layout(title: str, subtitle: str = "") -> dict[str, Any]:
    """``layout.title`` for a chart: near its left edge, clear of the y axis title and below the mode bar.

    The top margin is made to fit it (``automargin``).
    """
    return {
        "text": chart_title(title, subtitle),
        "font": {"size": TITLE_FONT_PX},
        "x": 0,
        "xanchor": "left",
        "xref": "container",
        "y": 1,
        "yanchor": "bottom",
        "yref": "paper",
        "pad": {"l": TITLE_LEFT_PX, "t": MODEBAR_CLEARANCE_PX, "b": TITLE_GAP_PX},
        "automargin": True,
    }


def styled(figure: AnyFigure, *, title: str, subtitle: str = "", x_title: str, y_title: str) -> AnyFigure:
    """Apply the shared template, the title (``title_layout``) and the axis titles (which carry the units)."""
    x_axis = {"title": {"text": wrapped(x_title, X_TITLE_LINE_CHARS), "standoff": 12}, "automargin": True}
    y_axis = {"title": {"text": wrapped(y_title, Y_TITLE_LINE_CHARS), "standoff": 12}, "automargin": True}
    heading = title_layout(title, subtitle)
    if has_subplots(figure):  # subplots: every x and y axis gets the titles
        figure.update_layout(template=TEMPLATE, title=heading, hovermode="closest")
        figure.update_xaxes(x_axis)
        figure.update_yaxes(y_axis)
    else:  # one update instead of three: Plotly's property machinery costs milliseconds per call
        figure.update_layout(template=TEMPLATE, title=heading, hovermode="closest", xaxis=x_axis, yaxis=y_axis)
    return figure


def titled(figure: AnyFigure, labels: Mapping[str, str], *, separators: str) -> AnyFigure:
    """``styled`` with the caller's translated titles, ``labels`` 'title', 'subtitle', 'x_title' and 'y_title'.

    `separators` are the page's decimal mark and thousands separator (Plotly's ``layout.separators``).
    """
    figure.update_layout(separators=separators)
    return styled(
        figure, title=labels["title"], subtitle=labels["subtitle"], x_title=labels["x_title"], y_title=labels["y_title"]
    )


def vline(
    figure: AnyFigure,
    x: float,
    *,
    line: dict[str, Any],
    annotation: dict[str, Any] | None = None,
    annotation_position: str = "top right",
    name: str | None = None,
) -> None:
    """A vertical line across the plot at `x`, with an optional label: Plotly's ``add_vline``, 4× cheaper.

    Draws the same shape and places the label as ``add_vline`` does (Plotly's own
    ``axis_spanning_shape_annotation``), without its search over every subplot. With
    `name`, the shape and its label carry it: a live chart's patches find them by it.
    """
    where = {"x0": x, "x1": x, "y0": 0, "y1": 1}
    _spanning(figure, "vline", where, {"type": "line", "line": line}, annotation, annotation_position, name)


def hline(
    figure: AnyFigure,
    y: float,
    *,
    line: dict[str, Any],
    annotation: dict[str, Any] | None = None,
    annotation_position: str = "top right",
    name: str | None = None,
) -> None:
    """A horizontal line across the plot at `y`, with an optional label: Plotly's ``add_hline``, cheaper."""
    where = {"x0": 0, "x1": 1, "y0": y, "y1": y}
    _spanning(figure, "hline", where, {"type": "line", "line": line}, annotation, annotation_position, name)


def vrect(
    figure: AnyFigure,
    x0: float,
    x1: float,
    *,
    fill: dict[str, Any],
    annotation: dict[str, Any] | None = None,
    annotation_position: str = "top right",
) -> None:
    """A band across the plot from `x0` to `x1` (`fill`: fillcolor, opacity, line_width), with an optional label.

    Plotly's ``add_vrect`` with the same shape and label, at about a third of its cost (``vline``).
    """
    where = {"x0": x0, "x1": x1, "y0": 0, "y1": 1}
    _spanning(figure, "vrect", where, {"type": "rect", **fill}, annotation, annotation_position, None)


#: The name of the line (a shape) and label (an annotation) that mark the slider's value on a chart.
CURRENT = "current"
#: That line: green and dotted.
CURRENT_LINE = {"color": COLORS["current"], "width": 2, "dash": "dot"}
#: The same mark, thin and in the text's colour, where green already means something else on the chart.
QUIET_CURRENT_LINE = {"color": COLORS["text"], "width": 1, "dash": "dot"}


def current_line(
    figure: AnyFigure,
    x: float,
    *,
    label: str | None = None,
    position: str = "top right",
    line: Mapping[str, Any] = CURRENT_LINE,
) -> None:
    """The chosen value's dotted line at `x`, with `label` in the line's colour, both named ``CURRENT``.

    ``moving_vline_patches`` moves it along a slider in a live chart.
    """
    annotation = None if label is None else {"text": label, "font": {"color": line["color"]}}
    vline(figure, float(x), line=dict(line), annotation=annotation, annotation_position=position, name=CURRENT)


def limit_line(figure: AnyFigure, x: float, *, label: str, axis_end: float, name: str = "limit") -> None:
    """A red line where something runs out at `x`, its label on the side with more room (inside a phone-sized plot).

    `axis_end` is the x axis's end: past its middle the label goes to the line's left.
    """
    on_the_left = x > axis_end / 2
    vline(
        figure,
        x,
        line={"color": COLORS["limit"], "width": 2},
        annotation={"text": label, "font": {"color": COLORS["limit"]}, "align": "right" if on_the_left else "left"},
        annotation_position="bottom left" if on_the_left else "bottom right",
        name=name,
    )


def moving_vline_patches(
    x_values: np.ndarray, *, name: str = CURRENT, labelled: bool = True
) -> dict[tuple[str | int, ...], np.ndarray]:
    """How a figure changes when its vertical line `name` (drawn by `vline`) moves to each of `x_values`.

    The line's two ends and, when it is `labelled`, its label (the annotation of the same
    name) take each x in turn: the patches of a ``ui.live_chart.Follow``.
    """
    x = np.asarray(x_values, dtype=float)
    patches: dict[tuple[str | int, ...], np.ndarray] = {
        ("layout", "shapes", name, "x0"): x,
        ("layout", "shapes", name, "x1"): x,
    }
    if labelled:
        patches[("layout", "annotations", name, "x")] = x
    return patches


def _spanning(
    figure: AnyFigure,
    kind: Literal["vline", "hline", "vrect"],
    where: dict[str, float],
    shape: dict[str, Any],
    annotation: dict[str, Any] | None,
    annotation_position: str,
    name: str | None,
) -> None:
    refs = {"xref": "x domain", "yref": "y"} if kind == "hline" else {"xref": "x", "yref": "y domain"}
    named = {} if name is None else {"name": name}
    figure.add_shape(**shape, **where, **refs, **named)
    if annotation is not None:
        label = axis_spanning_shape_annotation(
            dict(annotation), kind, where, {"annotation_position": annotation_position}
        )
        figure.add_annotation(label, **refs, **named)


# ---------------------------------------------------------------- log axes

#: A log axis spanning at most this many decades gets ticks at 1, 2 and 5 of each decade; a wider one, decades.
ONE_TWO_FIVE_DECADES = 2.5
#: Past this many decades a log axis labels every second decade (every third past twice as many, and so on).
MOST_DECADE_TICKS = 8
#: Ticks between the decades of a log axis spanning less than one: every whole step of the decade.
NARROW_MANTISSAS = (1, 2, 3, 4, 5, 6, 7, 8, 9)
#: Labels within these powers of ten are written out in full ('0,001' … '500.000'); others as '2·10⁹'.
PLAIN_EXPONENTS = range(-3, 6)


def log_ticks(low: float, high: float, *, reach: float = 0.0) -> list[float]:
    """Tick values for a log axis that shows `low` … `high` (both > 0): 1-2-5 within 2.5 decades, else decades.

    Less than a decade gets every whole step (1, 2 … 9 of the decade); past eight
    decades only every second decade (third past sixteen …) is labelled. The ticks run
    from the decade at or below `low` to the decade at or above `high`, `reach` decades
    further each way when asked; Plotly draws the ones inside the axis's range.

    >>> log_ticks(0.03, 8)
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
    >>> log_ticks(128, 1e6)
    [100.0, 1000.0, 10000.0, 100000.0, 1000000.0]
    """
    span = math.log10(high / low)
    if span < 1:
        mantissas: Sequence[int] = NARROW_MANTISSAS
    elif span <= ONE_TWO_FIVE_DECADES:
        mantissas = (1, 2, 5)
    else:
        mantissas = (1,)
    step = max(1, math.ceil(span / MOST_DECADE_TICKS)) if mantissas == (1,) else 1
    first = math.floor(math.log10(low) - reach + 1e-9)
    first -= first % step
    last = math.ceil(math.log10(high) + reach - 1e-9)
    last = first + step * math.ceil((last - first) / step)
    # float(f"{m}e{e}") is the decimal number itself (0.3, not 3 · 0.1 = 0.30000000000000004).
    return [float(f"{m}e{e}") for e in range(first, last + 1, step) for m in mantissas if e < last or m == 1]


def log_tick_text(value: float, separators: str = ENGLISH, *, suffix: str = "") -> str:
    """A log axis's tick label: the full value in the reader's language, then `suffix`.

    From a thousandth to below a million as a number ('0,05', '2.000' in Portuguese),
    beyond as a power of ten ('10<sup>9</sup>', '2·10<sup>−6</sup>'): never a bare '2'
    beside '10' as Plotly's minor ticks print.

    >>> log_tick_text(2000, ",."), log_tick_text(0.05, ",.", suffix="×"), log_tick_text(2e9), log_tick_text(1e-6)
    ('2.000', '0,05×', '2·10<sup>9</sup>', '10<sup>−6</sup>')
    """
    exponent = math.floor(math.log10(value) + 1e-9)
    if exponent in PLAIN_EXPONENTS:
        return plain(value, separators) + suffix
    mantissa = round(value / 10.0**exponent, 6)
    power = f"10<sup>{exponent}</sup>".replace("-", "\u2212")
    return (power if mantissa == 1 else f"{plain(mantissa, separators)}·{power}") + suffix


def log_axis(
    values: Iterable[Any] = (),
    *,
    separators: str,
    ticks: Sequence[float] | None = None,
    texts: Sequence[str] | None = None,
    suffix: str = "",
    reach: float = 0.0,
) -> dict[str, Any]:
    """A log axis with readable ticks, for ``figure.update_xaxes(log_axis(...))``: every log axis in charts/.

    The ticks are `ticks` when given, else ``log_ticks`` over the positive finite numbers in
    `values` (arrays or numbers: what the axis shows), widened by `reach` decades each way
    for a chart whose data moves in the browser (``ui.live_chart``). Each is labelled with
    `texts` when given, else ``log_tick_text`` (with `separators` and `suffix`). Plotly's own
    labels print the minor ticks of a short log axis as a bare '2, 5' beside '1, 10'.
    """
    if ticks is None:
        shown = np.concatenate([np.ravel(np.asarray(value, dtype=float)) for value in values] or [np.ones(1)])
        shown = shown[np.isfinite(shown) & (shown > 0)]
        low, high = (float(shown.min()), float(shown.max())) if shown.size else (1.0, 10.0)
        ticks = log_ticks(low, high, reach=reach)
    if texts is None:
        texts = [log_tick_text(tick, separators, suffix=suffix) for tick in ticks]
    return {"type": "log", "tickmode": "array", "tickvals": list(ticks), "ticktext": list(texts)}
