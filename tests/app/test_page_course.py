"""Course paths: named and custom paths from the URL, the links between steps, the course bar, progress."""

from __future__ import annotations

import itertools
from pathlib import Path
from urllib.parse import parse_qs

import pytest

import ui
from course.quiz import QUIZZES
from i18n import LANGUAGES, translate
from tests.app.helpers import page_opener
from ui import course

ROOT = Path(__file__).resolve().parents[2]
PAGE = "lessons/course.py"


open_course = page_opener(PAGE, first_run=False)


def target(link) -> tuple[str, dict[str, list[str]]]:
    """Where a page link goes: the page's url_path ("" is the memory calculator) and its parameters."""
    return link.proto.page, parse_qs(link.proto.query_string)


def url_path(step: course.Step) -> str:
    """The url_path of a step's page (the memory calculator is the app's default page: "")."""
    if step.kind != "lesson":
        return step.kind
    return "" if step.target == course.DEFAULT_PAGE_STEM else step.target


def link_labelled(app, label: str):
    [link] = [link for link in app.page_link if link.value == label]
    return link


@pytest.fixture
def bar_app(app, monkeypatch):
    """app.py with the course bar drawn before the page, as app.py will draw it once it calls course_bar.

    Until then the bar is drawn by wrapping the last thing app.py does before running the page.
    """
    if "course_bar" not in (ROOT / "app.py").read_text(encoding="utf-8"):
        notice = ui.unknown_page_notice

        def notice_then_bar(url_paths: list[str]) -> None:
            notice(url_paths)
            course.course_bar()

        monkeypatch.setattr(ui, "unknown_page_notice", notice_then_bar)
    return app


# ---------------------------------------------------------------- the data


@pytest.mark.parametrize("path_id", course.PATHS)
def test_every_named_path_names_only_real_steps(path_id):
    steps, dropped = course.parse_path(course.PATHS[path_id])
    assert dropped == [] and steps
    assert all((ROOT / step.page).is_file() for step in steps)


def test_the_default_path_follows_the_course_modules_order():
    lessons = [step.target for step in course.named_course("seed_module").steps if step.kind == "lesson"]
    assert lessons[:6] == [
        "why_cache",
        "memory",
        "attention_variants",
        "prefill_decode",
        "decode_speed",
        "flash_attention",
    ]
    assert lessons[6:8] == ["kv_quantization", "sizing"]
    assert set(lessons[8:11]) == {"prefix_caching", "paged_attention", "preemption"}
    assert lessons[-1] == "agent_1m"


def test_the_default_path_has_a_quiz_after_each_lesson():
    steps = course.named_course("seed_module").steps
    for before, after in itertools.pairwise(steps):
        if before.kind == "lesson":
            assert after == course.Step("quiz", before.target)


def test_a_step_code_reads_back_to_the_same_step():
    for step in course.all_steps():
        assert course.parse_step(step.code) == step


@pytest.mark.parametrize("code", ["nope", "quiz:nope", "practice:0", "practice:x", "quiz:", "", "lessons/memory.py"])
def test_an_unknown_step_code_names_nothing(code):
    assert course.parse_step(code) is None


# ---------------------------------------------------------------- the page


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_named_path_from_the_url_lists_its_steps(app, lang):
    open_course(app, lang, **{course.ID_KEY: "serving_engineer"})
    assert not app.exception
    assert app.selectbox(key=course.ID_KEY).value == "serving_engineer"
    steps = course.named_course("serving_engineer").steps
    for number, step in enumerate(steps, start=1):
        link = link_labelled(app, translate(lang, "course.step_label", n=number, title=_title(lang, step)))
        page, params = target(link)
        assert page == url_path(step)
        assert params[course.ID_KEY] == ["serving_engineer"] and params[course.STEP_KEY] == [str(number)]


def _title(lang: str, step: course.Step) -> str:
    lesson = translate(lang, course.LESSON_TITLES[step.target]) if step.kind != "practice" else ""
    if step.kind == "quiz":
        return translate(lang, "course.step_quiz", lesson=lesson)
    if step.kind == "practice":
        return translate(lang, "course.step_practice", set=step.target)
    return lesson


def test_without_a_course_in_the_url_the_page_shows_the_default_path(app):
    open_course(app)
    assert app.selectbox(key=course.ID_KEY).value == course.DEFAULT_PATH
    assert len([m for m in app.markdown if m.value.startswith("**Step 1 of")]) == 1


def test_a_custom_path_from_the_url_keeps_its_order_and_drops_unknown_steps_with_a_notice(app):
    open_course(app, **{course.PATH_KEY: "memory,quiz:memory,<b>bogus</b>,practice:7", course.STEP_KEY: "2"})
    assert not app.exception
    assert app.selectbox(key=course.ID_KEY).value == course.CUSTOM
    assert app.multiselect(key="cp_compose").value == ["memory", "quiz:memory", "practice:7"]
    [notice] = [info for info in app.info if "bogus" in info.value]
    assert "<b>" not in notice.value
    assert any(
        m.value == translate("en", "course.where", step=2, total=3, title="Quiz: Memory calculator")
        for m in app.markdown
    )


def test_previous_and_next_open_the_neighbouring_steps_with_the_course_kept(app):
    open_course(app, **{course.ID_KEY: "first_class", course.STEP_KEY: "3"})  # 3 = the memory quiz
    assert target(link_labelled(app, "Previous")) == ("", {course.ID_KEY: ["first_class"], course.STEP_KEY: ["2"]})
    assert target(link_labelled(app, "Open this step")) == (
        "quiz",
        {course.QUIZ_KEY: ["memory"], course.ID_KEY: ["first_class"], course.STEP_KEY: ["3"]},
    )
    assert target(link_labelled(app, "Next")) == (
        "attention_variants",
        {course.ID_KEY: ["first_class"], course.STEP_KEY: ["4"]},
    )


def test_the_first_step_has_no_previous_and_the_last_no_next(app):
    open_course(app, **{course.ID_KEY: "first_class"})
    assert not [link for link in app.page_link if link.value == "Previous"]
    last = str(len(course.named_course("first_class").steps))
    open_course(app, **{course.ID_KEY: "first_class", course.STEP_KEY: last})
    assert not [link for link in app.page_link if link.value == "Next"]


def test_a_practice_step_opens_its_exercise_set(app):
    open_course(app, **{course.PATH_KEY: "practice:7"})
    page, params = target(link_labelled(app, "Open this step"))
    assert page == "practice" and params[course.PRACTICE_SET_KEY] == ["7"]


@pytest.mark.parametrize("step", ["0", "99", "two"])
def test_a_bad_step_number_gives_a_notice_and_step_1(app, step):
    open_course(app, **{course.ID_KEY: "first_class", course.STEP_KEY: step})
    assert not app.exception
    assert any(f"`{course.STEP_KEY}`" in info.value for info in app.info)
    assert any(m.value.startswith("**Step 1 of") for m in app.markdown)


def test_an_unknown_path_id_falls_back_to_the_default_with_a_notice(app):
    open_course(app, **{course.ID_KEY: "no_such_path"})
    assert app.selectbox(key=course.ID_KEY).value == course.DEFAULT_PATH
    assert any(f"`{course.ID_KEY}`" in info.value for info in app.info)


def test_choosing_another_path_starts_it_at_step_1(app):
    open_course(app, **{course.ID_KEY: "serving_engineer", course.STEP_KEY: "5"})
    app.selectbox(key=course.ID_KEY).set_value("first_class").run()
    assert app.query_params.get(course.STEP_KEY) is None
    assert any(m.value.startswith("**Step 1 of") for m in app.markdown)


def test_a_new_custom_path_starts_from_the_path_shown_before_and_goes_in_the_url(app):
    open_course(app, **{course.ID_KEY: "first_class"})
    app.selectbox(key=course.ID_KEY).set_value(course.CUSTOM).run()
    assert app.multiselect(key="cp_compose").value == course.PATHS["first_class"].split(",")
    app.multiselect(key="cp_compose").set_value(["sizing", "quiz:sizing"]).run()
    assert app.query_params[course.PATH_KEY] == "sizing,quiz:sizing"
    [share] = app.code
    assert share.value.endswith("/course?cp_path=sizing,quiz:sizing&lang=en")


def test_the_share_link_names_the_path_and_keeps_the_language(app):
    # Issue 15: a class shown in Portuguese hands out a link that opens in Portuguese.
    open_course(app, "pt", **{course.ID_KEY: "serving_engineer", course.STEP_KEY: "4"})
    [share] = app.code
    assert share.value.endswith("/course?cp_id=serving_engineer&lang=pt")


def test_progress_shows_a_quiz_score_and_an_opened_lesson(app):
    app.query_params.update({"lang": "en", "qz_lesson": "memory"})
    app.switch_page("lessons/quiz.py").run()
    first = QUIZZES["memory"][0]
    app.radio(key=f"qz_{first.id}").set_value(first.answer)
    app.button(key=f"qz_check_{first.id}").click().run()
    app.switch_page("lessons/why_cache.py").run()
    app.switch_page(PAGE).run()
    total = len(QUIZZES["memory"])
    captions = [caption.value for caption in app.caption]
    assert translate("en", "course.progress_quiz", right=1, answered=1, total=total) in captions
    assert captions.count(translate("en", "course.progress_opened")) == 1  # why_cache only


# ---------------------------------------------------------------- the course bar


def test_the_course_bar_draws_nothing_without_a_course(bar_app):
    bar_app.query_params["lang"] = "en"
    bar_app.switch_page("lessons/why_cache.py").run()
    assert not bar_app.exception
    assert not any(" · step " in markdown.value for markdown in bar_app.markdown)
    assert not [link for link in bar_app.page_link if link.value in ("Previous", "Next", "All steps")]


def test_the_course_bar_says_where_the_student_is_and_links_both_ways(bar_app):
    bar_app.query_params.update({"lang": "en", course.ID_KEY: "first_class", course.STEP_KEY: "3"})
    bar_app.switch_page("lessons/quiz.py").run()
    assert not bar_app.exception
    total = len(course.named_course("first_class").steps)
    bar = translate(
        "en", "course.bar", path="One class (about an hour)", step=3, total=total, title="Quiz: Memory calculator"
    )
    assert bar in [m.value for m in bar_app.markdown]
    assert target(link_labelled(bar_app, "Previous")) == ("", {course.ID_KEY: ["first_class"], course.STEP_KEY: ["2"]})
    assert target(link_labelled(bar_app, "Next"))[0] == "attention_variants"
    assert target(link_labelled(bar_app, "All steps")) == (
        "course",
        {course.ID_KEY: ["first_class"], course.STEP_KEY: ["3"]},
    )


def test_the_course_bar_follows_a_custom_path(bar_app):
    bar_app.query_params.update({"lang": "pt", course.PATH_KEY: "sizing,quiz:sizing", course.STEP_KEY: "1"})
    bar_app.switch_page("lessons/sizing.py").run()
    assert not bar_app.exception
    assert target(link_labelled(bar_app, "Próximo")) == (
        "quiz",
        {course.QUIZ_KEY: ["sizing"], course.PATH_KEY: ["sizing,quiz:sizing"], course.STEP_KEY: ["2"]},
    )


def test_the_course_bar_needs_a_step_number(bar_app):
    bar_app.query_params.update({"lang": "en", course.ID_KEY: "first_class"})
    bar_app.switch_page("lessons/why_cache.py").run()
    assert not [link for link in bar_app.page_link if link.value == "All steps"]
