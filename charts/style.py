"""One look for every chart: a projector-readable template and a colour-blind-safe palette."""

from __future__ import annotations

import plotly.graph_objects as go

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

TEMPLATE = go.layout.Template(
    layout=go.Layout(
        font={"family": "Source Sans Pro, Arial, sans-serif", "size": FONT_SIZE, "color": COLORS["text"]},
        paper_bgcolor="white",
        plot_bgcolor="white",
        colorway=[COLORS["weights"], COLORS["kv_cache"], COLORS["limit"], COLORS["current"]],
        xaxis={"gridcolor": COLORS["grid"], "zeroline": False, "showline": True, "linecolor": "#999999"},
        yaxis={"gridcolor": COLORS["grid"], "zeroline": False, "showline": True, "linecolor": "#999999"},
        hoverlabel={"font": {"size": FONT_SIZE}},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0},
        margin={"l": 10, "r": 20, "t": 80, "b": 10},
        height=520,
    )
)


def styled(figure: go.Figure, *, title: str, subtitle: str = "", x_title: str, y_title: str) -> go.Figure:
    """Apply the shared template, the title and the axis titles (which carry the units)."""
    figure.update_layout(
        template=TEMPLATE,
        title={"text": title, "subtitle": {"text": subtitle}, "x": 0, "xanchor": "left", "xref": "paper"},
        hovermode="closest",
    )
    figure.update_xaxes(title={"text": x_title, "standoff": 12}, automargin=True)
    figure.update_yaxes(title={"text": y_title, "standoff": 12}, automargin=True)
    return figure
