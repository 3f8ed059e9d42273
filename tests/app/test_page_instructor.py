"""The instructor's page (issue 15): an exercise set's answer key and a lesson's handout, hidden from the menu."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import kvcore
from charts import formatting
from course import exercises, lessons
from course.glossary import LESSON_TERMS, TERMS
from course.quiz_data import QUIZZES
from i18n import LANGUAGES, catalogue, translate
from tests.app.conftest import ROOT
from tests.app.helpers import open_page
from ui import course, export
from ui import practice as ui_practice

PAGE = "lessons/instructor.py"


def drawn_set(set_number: int, count: int, topics: tuple[str, ...] | None = None) -> tuple[exercises.Exercise, ...]:
    models, gpus = kvcore.load_models(), kvcore.load_gpus()
    return exercises.generate_exercise_set(set_number, models=models, gpus=gpus, count=12, topics=topics)[:count]


def key_table(app) -> list[dict]:
    [table] = app.dataframe
    return table.value.to_dict("records")


# ---------------------------------------------------------------- hidden, not protected


def test_the_page_is_in_the_registry_but_not_in_the_menu():
    page = lessons.BY_STEM["instructor"]
    assert not page.in_menu and not page.is_lesson
    assert page not in lessons.MENU_PAGES and len(lessons.MENU_PAGES) == len(lessons.PAGES) - 1
    assert "instructor" not in course.LESSONS


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_says_it_is_hidden_not_protected(app, lang):
    open_page(app, PAGE, lang=lang)
    assert not app.exception, [exception.value for exception in app.exception]
    assert translate(lang, "instructor.hidden") in [warning.value for warning in app.warning]


def test_the_readme_says_the_key_is_hidden_not_protected():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "/instructor" in readme and "not protected" in readme


# ---------------------------------------------------------------- the answer key


def test_the_key_reads_the_set_with_the_practice_pages_limits():
    # One home for a set's rules (ui.practice): both pages draw it with exercise_set and read its limits there.
    for page in ("lessons/practice.py", PAGE):
        source = (ROOT / page).read_text(encoding="utf-8")
        assert "practice.exercise_set(" in source and "generate_exercise_set(" not in source, page
        assert "practice.MAX_SET" in source and "MAX_SET = 10_000" not in source, page


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_key_gives_every_answer_generate_exercise_set_gives(app, lang):
    open_page(app, PAGE, lang=lang, ex_set="7", ex_count="10")
    assert not app.exception, [exception.value for exception in app.exception]
    expected = drawn_set(7, 10)
    rows = key_table(app)
    assert [row[translate(lang, "instructor.col_number")] for row in rows] == list(range(1, 11))
    exact = [row[translate(lang, "instructor.col_exact")] for row in rows]
    marks = ",." if lang == "pt" else ".,"
    for shown, asked in zip(exact, expected, strict=True):
        if asked.dimension == "choice":
            assert shown == "—"  # a choice has no number (issue 15: it showed "None")
        else:  # every digit kvcore gives, in the language's marks (issue 15: pt showed points)
            assert shown == formatting.plain(asked.answer_value, marks)
    # Each question in its own box, with its worked answer.
    answer_line = translate(lang, "practice.answer_is", answer="").split("**")[0]
    assert sum(block.value.startswith(answer_line) for block in app.markdown) == 10


def test_the_key_follows_the_topics_in_the_catalogues_order(app):
    open_page(app, PAGE, ex_set="3", ex_count="4", ex_topics=["users_fit", "bytes_per_token"])
    expected = drawn_set(3, 4, ("bytes_per_token", "users_fit"))
    exact = [row[translate("en", "instructor.col_exact")] for row in key_table(app)]
    assert exact == [formatting.plain(asked.answer_value) for asked in expected]


def test_a_count_out_of_range_falls_back_to_the_default_with_a_notice(app):
    open_page(app, PAGE, ex_set="2", ex_count="99")
    assert len(key_table(app)) == ui_practice.DEFAULT_COUNT
    assert any("`ex_count`" in info.value for info in app.info)


def test_practice_links_to_the_key_of_its_set_in_presentation_mode_only(app):
    open_page(app, "lessons/practice.py", ex_set="5", ex_count="6", present="true")
    links = [link.proto for link in app.get("page_link") if link.proto.label == translate("en", "instructor.key_link")]
    assert [(link.page, link.query_string) for link in links] == [("instructor", "ex_set=5&ex_count=6")]
    student = open_page(AppTest.from_file(app._script_path, default_timeout=app.default_timeout), "lessons/practice.py")
    assert not [link for link in student.get("page_link") if link.proto.label == translate("en", "instructor.key_link")]


# ---------------------------------------------------------------- the handout


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("stem", lessons.LESSON_STEMS)
def test_a_handout_renders_for_every_lesson_in_both_languages(app, stem, lang):
    open_page(app, PAGE, lang=lang, in_part="handout", in_lesson=stem)
    assert not app.exception, [exception.value for exception in app.exception]
    assert not app.error, [error.value for error in app.error]
    text = "\n".join(block.value for block in app.markdown)
    assert f"# {translate(lang, f'{stem}.title')}" in text
    assert translate(lang, f"{stem}.takeaway") in text
    for term in LESSON_TERMS[stem]:
        assert f"**{translate(lang, TERMS[term].name)}**" in text
    assert text.count(translate(lang, "instructor.handout_quiz")) == (1 if QUIZZES.get(stem) else 0)
    assert len(app.download_button) >= 1 and app.download_button[0].proto.label == translate(
        lang, "instructor.handout_download"
    )


def test_the_handout_lists_the_quiz_without_its_answers(app):
    open_page(app, PAGE, in_part="handout", in_lesson="why_cache")
    text = "\n".join(block.value for block in app.markdown)
    for number, question in enumerate(QUIZZES["why_cache"], start=1):
        assert f"**{number}.**" in text
        why = catalogue("en")[question.explanation].split("{")[0].strip()  # up to its first computed number
        assert why and why not in text  # the why of the right option stays on /quiz
    assert [formula.value.strip("$\n") for formula in app.latex] == [
        TERMS[term].formula for term in LESSON_TERMS["why_cache"] if TERMS[term].formula
    ]


def test_the_downloaded_markdown_holds_the_pages_blocks_and_no_answers():
    handout = export.Handout(
        title="T",
        intro="I",
        formulas=(("GQA", r"\frac{a}{b}"),),
        takeaway="K",
        terms=(("MLA", "latent"),),
        questions=(("Q?", ("one", "two")),),
    )
    headings = {"formulas": "F", "takeaway": "TK", "terms": "TR", "quiz": "QZ"}
    text = export.handout_markdown(handout, headings)
    assert text.startswith("# T\n\nI") and "$$\n\\frac{a}{b}\n$$" in text
    assert all(block in text for _, block in export.handout_blocks(handout, headings))
    assert "- a) one\n- b) two" in text and "**1.** Q?" in text


def test_the_handout_prints_without_the_sidebar(app):
    open_page(app, PAGE, in_part="handout")
    css = " ".join(element.proto.body for element in app.get("html"))
    assert "@media print" in css and "stSidebar" in css and "display: none" in css
