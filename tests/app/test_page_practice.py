"""The exercise page: set n from the URL is kvcore's set n, every question renders, answers are scored and drawn."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from course import exercises
from i18n import LANGUAGES, catalogue, translate
from tests.app.helpers import page_opener
from ui import practice

ROOT = Path(__file__).resolve().parents[2]
PAGE = "lessons/practice.py"
MAX_COUNT = 12


def fresh_app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)


open_practice = page_opener(PAGE)


def box_keys(app) -> list[str]:
    """The answer boxes' keys in page order: ``ex_<set>_<number>_<digest of topic, inputs and answer>``."""
    widgets = [*app.text_input, *app.radio]
    keys = {w.key.removesuffix("_answer") for w in widgets if w.key and w.key.startswith("ex_")}
    return sorted(keys, key=lambda key: int(key.split("_")[2]))


def expected_keys(models, gpus, number: int, count: int = 8, topics=None) -> list[str]:
    """Set `number` as kvcore draws it: the first `count` of a set of MAX_COUNT."""
    drawn = exercises.generate_exercise_set(number, models=models, gpus=gpus, count=MAX_COUNT, topics=topics)
    return [f"ex_{number}_{n}_{practice.digest(asked)}" for n, asked in enumerate(drawn[:count], start=1)]


def exercise_of(models, gpus, number: int, position: int) -> exercises.Exercise:
    return exercises.generate_exercise_set(number, models=models, gpus=gpus, count=MAX_COUNT)[position - 1]


def chart(app) -> dict:
    return json.loads(app.get("plotly_chart")[0].proto.spec)


def numbers(data) -> np.ndarray:
    """A Plotly array as the chart's JSON holds it: a list, or {"dtype", "bdata"} (base64 of the raw buffer)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
    return np.asarray(data)


def trace(figure: dict, name: str) -> dict:
    [match] = [trace for trace in figure["data"] if trace["name"] == name]
    return match


def trace_x(figure: dict, name: str) -> list[int]:
    return [int(x) for trace in figure["data"] if trace["name"] == name for x in numbers(trace["x"])]


def test_set_7_from_the_url_asks_kvcores_set_7_in_order(app, models, gpus):
    open_practice(app, ex_set="7")
    assert not app.exception
    assert box_keys(app) == expected_keys(models, gpus, 7)


def test_two_visits_to_the_same_set_get_the_same_questions(app, models, gpus):
    open_practice(app, ex_set="42", ex_count="5")
    again = fresh_app()
    open_practice(again, ex_set="42", ex_count="5")
    assert box_keys(app) == box_keys(again) == expected_keys(models, gpus, 42, count=5)


def test_a_longer_set_keeps_the_first_questions(app):
    open_practice(app, ex_set="3")
    first = box_keys(app)
    app.slider(key="ex_count").set_value(12).run()
    assert box_keys(app)[:8] == first and len(box_keys(app)) == 12


def test_the_topics_in_the_url_restrict_the_set_whatever_their_order(app, models, gpus):
    open_practice(app, ex_set="9", ex_topics=["gqa_saving", "users_fit"])
    assert app.multiselect(key="ex_topics").value == ["gqa_saving", "users_fit"]
    assert box_keys(app) == expected_keys(models, gpus, 9, topics=("users_fit", "gqa_saving"))


@pytest.mark.parametrize("value", ["abc", "999999", "0", "-3"])
def test_a_bad_set_number_in_the_url_gives_the_notice_and_set_1(app, models, gpus, value):
    open_practice(app, ex_set=value)
    assert not app.exception
    assert any("`ex_set`" in info.value for info in app.info)
    assert app.number_input(key="ex_set").value == 1
    assert box_keys(app) == expected_keys(models, gpus, 1)


def test_an_unknown_topic_in_the_url_gives_the_notice_and_every_topic(app, models, gpus):
    open_practice(app, ex_topics="<b>x</b>")
    assert any("`ex_topics`" in info.value and "<b>" not in info.value for info in app.info)
    assert box_keys(app) == expected_keys(models, gpus, 1)


def test_the_page_says_the_set_can_be_handed_out_by_its_address(app):
    open_practice(app, ex_set="7")
    assert any(m.value == translate("en", "practice.share", set=7, count=8) for m in app.markdown)
    assert app.code[0].value == "/practice?ex_set=7&ex_count=8&lang=en"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_topics_question_renders_in_both_languages_with_no_placeholder_left(app, models, gpus, lang):
    # A set of 12 asks every one of the 9 topics at least once (topics come in a shuffled cycle).
    open_practice(app, lang=lang, ex_count="12")
    assert not app.exception
    drawn = exercises.generate_exercise_set(1, models=models, gpus=gpus, count=MAX_COUNT)
    assert {asked.topic for asked in drawn} == set(exercises.TOPICS)
    headings = [m.value for m in app.markdown if m.value.startswith("####")]
    assert all(translate(lang, practice.TOPIC_KEYS[asked.topic]) in h for asked, h in zip(drawn, headings, strict=True))
    texts = [m.value for m in app.markdown] + [c.value for c in app.caption]
    assert not [text for text in texts if "{" in text or "practice." in text]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_flash_attention_question_renders_in_both_languages(app, lang):
    app.query_params.update({"lang": lang})
    app.run()
    app.switch_page("lessons/flash_attention.py").run()
    question = catalogue(lang)["practice.q_score_matrix_bytes"].split("{", 1)[0]
    [shown] = [m.value for m in app.markdown if question in m.value]  # under the box's title, in one element
    assert "{" not in shown


def test_a_right_and_a_wrong_answer_are_scored_and_drawn(app, models, gpus):
    open_practice(app, ex_set="7")
    keys = box_keys(app)
    first = exercise_of(models, gpus, 7, 1)
    assert first.dimension != "choice"
    app.text_input(key=f"{keys[0]}_answer").input(f"{first.answer_value} {first.answer_unit}")
    app.button(key=f"{keys[0]}_check").click().run()
    second = exercise_of(models, gpus, 7, 2)
    app.text_input(key=f"{keys[1]}_answer").input(f"{second.answer_value * 10} {second.answer_unit}")
    app.button(key=f"{keys[1]}_check").click().run()
    score = translate("en", "practice.score", set=7, answered=2, count=8, right=1)
    assert any(m.value == score for m in app.markdown)
    figure = chart(app)
    assert trace_x(figure, translate("en", "practice.chart_right")) == [1]
    assert trace_x(figure, translate("en", "practice.chart_wrong")) == [2]
    assert trace_x(figure, translate("en", "practice.chart_open")) == [3, 4, 5, 6, 7, 8]
    assert numbers(trace(figure, translate("en", "practice.chart_wrong"))["y"]) == pytest.approx([10])


def test_the_check_formula_shows_the_last_checked_answer(app, models, gpus):
    open_practice(app, ex_set="7")
    formulas_before = len(app.latex)
    first = exercise_of(models, gpus, 7, 1)
    key = box_keys(app)[0]
    app.text_input(key=f"{key}_answer").input(f"{first.answer_value} {first.answer_unit}")
    app.button(key=f"{key}_check").click().run()
    assert len(app.latex) == formulas_before + len(first.steps) + 1
    assert any(c.value == translate("en", "practice.formula_caption", n=1) for c in app.caption)


def test_the_count_slider_changes_the_chart(app):
    open_practice(app)
    assert len(trace_x(chart(app), translate("en", "practice.chart_open"))) == 8
    app.slider(key="ex_count").set_value(5).run()
    assert trace_x(chart(app), translate("en", "practice.chart_open")) == [1, 2, 3, 4, 5]


def test_in_presentation_mode_answers_are_hidden_and_not_scored_until_revealed(app, models, gpus):
    open_practice(app, ex_set="7", present="true")
    first = exercise_of(models, gpus, 7, 1)
    key = box_keys(app)[0]
    app.text_input(key=f"{key}_answer").input(f"{first.answer_value} {first.answer_unit}")
    app.button(key=f"{key}_check").click().run()
    hidden = translate("en", "practice.score", set=7, answered=1, count=8, right=0)
    assert any(m.value == hidden for m in app.markdown)
    assert trace_x(chart(app), translate("en", "practice.chart_hidden")) == [1]
    app.button(key=f"{key}_show").click().run()
    shown = translate("en", "practice.score", set=7, answered=1, count=8, right=1)
    assert any(m.value == shown for m in app.markdown)
    assert trace_x(chart(app), translate("en", "practice.chart_right")) == [1]


@pytest.mark.parametrize(("lang", "number"), [("pt", "10000"), ("en", "500")])
def test_the_page_runs_for_other_sets_in_both_languages(app, lang, number):
    open_practice(app, lang=lang, ex_set=number, ex_count="12")
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error
