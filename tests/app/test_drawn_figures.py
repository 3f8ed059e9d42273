"""Charts drawn as plain dicts (charts.draw): for every builder a lesson calls, the same JSON Plotly's own figure gives.

The app draws its charts on a ``PlainFigure`` (``ui.figure_cache.FigureCall.build``),
which checks nothing; called directly, the same builder draws a ``go.Figure``, built and
checked by Plotly as before. Each test here opens every lesson (in English with the
default model, in Portuguese with an MLA MoE model on another GPU), records the calls
the lessons make, and compares both figures of a few of them, JSON for JSON: what the
browser receives.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots
from streamlit.testing.v1 import AppTest

from charts import draw
from charts.draw import PlainFigure, plain_figure
from charts.prefill_decode import TIMELINE_LABELS, timeline_figure
from charts.style import TEMPLATE, hline, styled, vline, vrect
from tests.app.helpers import open_page
from ui import lesson
from ui.figure_cache import FigureCall

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted(path for path in (ROOT / "lessons").glob("*.py") if "lesson.figure(" in path.read_text("utf-8"))
#: Each builder a lesson names in ``lesson.figure(builder, ...)``.
BUILDERS = sorted(
    {name for path in LESSONS for name in re.findall(r"lesson\.figure\(\s*(\w+)", path.read_text("utf-8"))}
)
#: (language, URL parameters) each lesson is opened with.
VISITS = [("en", {}), ("pt", {"model": "deepseek-v3", "gpu": "h100-sxm"})]
#: Calls compared per builder: the first, the middle one and the last the lessons made.
COMPARED = 3


def sent(figure: Any) -> dict[str, Any]:
    """What the browser receives for `figure` (either kind): its JSON, read back."""
    return json.loads(figure.to_json())


@pytest.fixture(scope="module")
def lesson_calls() -> dict[str, list[FigureCall]]:
    """Every figure call the lessons made, by builder name, with no figure kept from an earlier test."""
    recorded: dict[str, list[FigureCall]] = collections.defaultdict(list)
    build = FigureCall.build

    def recording(call: FigureCall) -> Any:
        recorded[call.builder.__name__].append(call)
        return build(call)

    lesson._figures.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FigureCall, "build", recording)
        for path in LESSONS:
            for lang, params in VISITS:
                app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
                open_page(app, path.relative_to(ROOT).as_posix(), lang=lang, **params)
                assert not app.exception, f"{path.name} ({lang}): {app.exception[0].message}"
    lesson._figures.clear()
    return recorded


def test_every_lesson_names_its_charts_builders():
    assert len(BUILDERS) >= 30
    assert {"memory_vs_context_figure", "roofline_figure", "block_map_figure", "latency_figure"} <= set(BUILDERS)


@pytest.mark.parametrize("name", BUILDERS)
def test_the_plain_figure_is_plotlys_own_for_the_lessons_calls(lesson_calls, name):
    calls = lesson_calls[name]
    assert calls, f"no lesson drew {name}"
    for call in [calls[index] for index in sorted({0, len(calls) // 2, len(calls) - 1})][:COMPARED]:
        drawn = plain_figure(call.builder, *call.args, **call.kwargs)
        assert isinstance(drawn, PlainFigure), f"{name} draws a {type(drawn).__name__}: not through charts.draw"
        assert sent(drawn) == sent(call.builder(*call.args, **call.kwargs))


def test_the_app_builds_a_plain_figure_and_a_builder_of_its_own_go_figure_still_works():
    labels = {key: key for key in TIMELINE_LABELS}
    call = FigureCall(timeline_figure, (), {"arrival_s": np.linspace(0.2, 2.0, 10), "ttft_s": 0.1, "labels": labels})
    assert isinstance(call.build(), PlainFigure)
    assert isinstance(timeline_figure(**call.kwargs), go.Figure)
    assert isinstance(FigureCall(go_only_figure, (), {}).build(), go.Figure)


def go_only_figure() -> go.Figure:
    return go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))


# ---------------------------------------------------------------- PlainFigure reads calls as go.Figure does


def both(draw_on) -> tuple[dict[str, Any], dict[str, Any]]:
    """`draw_on(figure)` on a PlainFigure and on a go.Figure, as sent."""
    plain, plotly_figure = PlainFigure(), go.Figure()
    draw_on(plain)
    draw_on(plotly_figure)
    return sent(plain), sent(plotly_figure)


def test_underscores_are_paths_none_unsets_and_an_empty_object_is_left_out():
    def draw_on(figure):
        figure.add_trace(draw.scatter(x=[1, 2], y=np.array([1.5, 2.5]), line_width=3, marker={}, name=None))
        figure.update_layout(title_text="T", paper_bgcolor="white", width=600, legend={"x": None})
        figure.update_layout(width=None, xaxis_title={"text": "x (s)"})

    plain, plotly_figure = both(draw_on)
    assert plain == plotly_figure
    assert plain["data"][0]["line"] == {"width": 3} and "marker" not in plain["data"][0]


def test_arrays_are_packed_as_plotly_packs_them_and_numbers_in_lists_are_plain():
    def draw_on(figure):
        figure.add_trace(
            draw.heatmap(
                z=np.arange(6, dtype=np.int64).reshape(2, 3),
                x=[np.float64(0.5), 1.5, 2.5],
                text=np.array([["a", "b", "c"], ["d", "e", "f"]]),
                customdata=np.array([], dtype=float),
            )
        )
        figure.add_trace(
            draw.scatter(
                x=np.array([1, 2**40], dtype=np.int64),  # too wide for 32 bits: a list
                y=np.array([3, 70_000], dtype=np.uint64),
                customdata=np.array([True, False]),
                marker={"size": np.array([4.0, 5.5], dtype=np.float32)},
            )
        )
        figure.update_xaxes(range=np.array([0.0, 3.0]), tickvals=(0, 1, 2))

    plain, plotly_figure = both(draw_on)
    assert plain == plotly_figure
    assert plain["data"][0]["z"]["dtype"] == "i1"  # Plotly narrows int64 to the smallest type that holds it
    assert plain["data"][1]["y"]["dtype"] == "u4" and plain["data"][1]["x"] == [1, 2**40]


def test_the_template_and_the_style_helpers_give_the_same_layout():
    def draw_on(figure):
        figure.add_trace(draw.scatter(x=[1, 10], y=[1, 2]))
        vline(figure, 5, line={"color": "red"}, annotation={"text": "here"}, name="current")
        hline(figure, 1.5, line={"dash": "dot"}, annotation={"text": "limit"}, annotation_position="bottom left")
        vrect(figure, 2, 3, fill={"fillcolor": "blue", "opacity": 0.2, "line_width": 0}, annotation={"text": "band"})
        styled(figure, title="T", subtitle="S", x_title="x", y_title="y")

    plain, plotly_figure = both(draw_on)
    assert plain == plotly_figure
    assert plain["layout"]["template"] == TEMPLATE.to_plotly_json()


def test_a_figure_without_a_template_gets_plotlys_default_like_a_go_figure():
    plain, plotly_figure = both(lambda figure: figure.add_trace(draw.bar(x=["a"], y=[1])))
    assert plain == plotly_figure


def test_subplots_place_traces_and_update_the_axes_of_one_cell():
    grid = {"rows": 2, "cols": 1, "shared_xaxes": True, "vertical_spacing": 0.08, "subplot_titles": ["a", "b"]}

    def draw_on(figure):
        for row in (1, 2):
            figure.add_trace(draw.scatter(x=[1, 2], y=[row, row]), row=row, col=1)
        figure.update_yaxes(title_text="second", row=2, col=1)
        figure.update_xaxes(showgrid=False)

    plain = plain_figure(draw.subplots, **grid)
    plotly_figure = make_subplots(**grid)
    assert isinstance(plain, PlainFigure) and draw.has_subplots(plain) and draw.has_subplots(plotly_figure)
    draw_on(plain)
    draw_on(plotly_figure)
    assert sent(plain) == sent(plotly_figure)


def test_a_written_figure_shares_nothing_with_the_next_one():
    first = plain_figure(draw.figure)
    styled(first, title="T", x_title="x", y_title="y")
    written = first.to_dict()
    written["layout"]["template"]["layout"]["font"]["size"] = 99  # presentation mode scales fonts in place
    second = plain_figure(draw.figure)
    styled(second, title="T", x_title="x", y_title="y")
    assert second.to_dict()["layout"]["template"]["layout"]["font"]["size"] == TEMPLATE.layout.font.size
    assert first.to_dict()["layout"]["template"]["layout"]["font"]["size"] == TEMPLATE.layout.font.size
