"""The answers chart: one marker per exercise at answer ÷ right answer, on a log axis, labelled in both languages."""

from __future__ import annotations

import numpy as np
import pytest

from charts.practice import CLIP, LABELS, AnswerPoint, answers_figure
from i18n import LANGUAGES, translate
from tests.app.figures import one_line
from tests.app.helpers import trace

KEYS = {
    "title": "practice.chart_title",
    "subtitle": "practice.chart_subtitle",
    "x_title": "practice.chart_x",
    "y_title": "practice.chart_y",
    "right": "practice.chart_right",
    "wrong": "practice.chart_wrong",
    "open": "practice.chart_open",
    "hidden": "practice.chart_hidden",
    "target": "practice.chart_target",
    "exercise": "practice.chart_exercise",
}


def labels(lang: str = "en") -> dict[str, str]:
    return {name: translate(lang, key, set=7, answered=3, count=5) for name, key in KEYS.items()}


def point(number: int, status: str, ratio: float | None = None) -> AnswerPoint:
    return AnswerPoint(number=number, status=status, ratio=ratio, topic="T", detail="D", tolerance="±3 %")


POINTS = [
    point(1, "right", 1.01),
    point(2, "wrong", 2.0),
    point(3, "wrong", 1e-6),
    point(4, "hidden"),
    point(5, "open"),
]


def test_the_label_keys_cover_every_text_the_chart_needs():
    assert set(KEYS) == set(LABELS)


def test_answers_sit_at_their_ratio_and_far_ones_at_the_edge():
    figure = answers_figure(POINTS, labels=labels())
    np.testing.assert_allclose(trace(figure, labels()["right"]).y, [1.01])
    np.testing.assert_allclose(trace(figure, labels()["wrong"]).y, [2.0, 1 / CLIP])
    assert list(trace(figure, labels()["wrong"]).x) == [2, 3]


def test_unanswered_and_hidden_answers_sit_on_the_one_line():
    figure = answers_figure(POINTS, labels=labels())
    assert list(trace(figure, labels()["hidden"]).y) == [1.0]
    assert list(trace(figure, labels()["open"]).y) == [1.0]


def test_a_wrong_choice_without_a_ratio_is_drawn_on_the_one_line():
    figure = answers_figure([point(1, "wrong", None)], labels=labels())
    assert list(trace(figure, labels()["wrong"]).y) == [1.0]


def test_the_ratio_axis_is_logarithmic_and_every_exercise_has_a_tick():
    figure = answers_figure(POINTS, labels=labels())
    assert figure.layout.yaxis.type == "log"
    assert (figure.layout.xaxis.dtick, tuple(figure.layout.xaxis.range)) == (1, (0.4, 5.6))


def test_the_hover_carries_the_topic_the_answer_and_the_tolerance():
    figure = answers_figure(POINTS, labels=labels())
    assert list(trace(figure, labels()["right"]).customdata[0]) == ["T", "D", "±3 %"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_axis_titles_name_the_ratio_and_the_exercise_in_each_language(lang):
    figure = answers_figure(POINTS, labels=labels(lang), separators=",." if lang == "pt" else ".,")
    assert one_line(figure.layout.yaxis.title.text) == translate(lang, "practice.chart_y")
    assert "×" in figure.layout.yaxis.title.text
    assert one_line(figure.layout.xaxis.title.text) == translate(lang, "practice.chart_x")
    assert figure.layout.separators == (",." if lang == "pt" else ".,")


def test_no_points_draw_an_empty_chart_without_an_error():
    figure = answers_figure([], labels=labels())
    assert [trace for trace in figure.data] == []


def test_the_right_answer_label_sits_on_the_one_line_of_the_log_axis():
    figure = answers_figure(POINTS, labels=labels())
    [label] = [note for note in figure.layout.annotations if note.text == labels()["target"]]
    assert label.y == 0  # log10(1): Plotly places annotations on a log axis by the exponent
