"""Quizzes on screen: the lesson picker, each question in a box, feedback that points back to the page that shows it.

The questions are data (``course.quiz_data``, texts in i18n/*/quiz.json); ``course.quiz``
turns them into a lesson's questions and scores them. Numbers in a question come from
``course.facts`` through ``ui.facts.shown`` when the question is drawn, in the language and
units of the session, so no figure is typed in.

Answers live in the session (``st.session_state``), never in module state: one server shares
this module with every user.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from course import quiz as bank
from course.quiz import Question
from ui import course, lesson, practice, t
from ui.facts import shown

ANSWERS_KEY = "_qz_answers"  # question id → the option key the student checked
REVEALED_KEY = "_qz_revealed"  # question ids revealed in presentation mode
RECORDED_KEY = "_qz_recorded"  # question ids already counted in the session's progress
EMPTY = ""  # "checked without choosing an option"
DEFAULT_LESSON = course.LESSONS[0]


# ---------------------------------------------------------------- session state


def answers() -> dict[str, str]:
    """Question id → the option the student checked, for this session."""
    kept: dict[str, str] = st.session_state.setdefault(ANSWERS_KEY, {})
    return kept


def revealed() -> set[str]:
    kept: set[str] = st.session_state.setdefault(REVEALED_KEY, set())
    return kept


def score(stem: str) -> tuple[int, int, int]:
    """(right, answered, questions) of one lesson's quiz in this session."""
    return bank.score(answers(), stem)


def _check(stem: str, question: Question) -> None:
    """The 'Check' button's callback: keep the chosen option; the first real answer counts in the progress.

    The session's progress (ui/practice.py) counts each question once, like the lessons'
    predict boxes count a first attempt: checking again, or after "Start again", changes the
    quiz's own score, not the progress.
    """
    chosen = st.session_state.get(_radio_key(question)) or EMPTY
    answers()[question.id] = chosen
    counted: set[str] = st.session_state.setdefault(RECORDED_KEY, set())
    if chosen and question.id not in counted:
        counted.add(question.id)
        practice.record(stem, chosen == question.answer, kind="quiz")


def _reveal(question: Question) -> None:
    revealed().add(question.id)


def _start_again(stem: str) -> None:
    for question in bank.questions(stem):
        answers().pop(question.id, None)
        revealed().discard(question.id)
        st.session_state[_radio_key(question)] = None


def _radio_key(question: Question) -> str:
    return f"qz_{question.id}"


# ---------------------------------------------------------------- drawing


def lesson_picker() -> str:
    """The lesson whose quiz is shown, synced with ``?qz_lesson=<stem>``."""
    return course.url_selectbox(
        t("quiz.pick"),
        key=course.QUIZ_KEY,
        options=course.LESSONS,
        default=DEFAULT_LESSON,
        format_func=lambda stem: t(course.LESSON_TITLES[stem]),
    )


def show_score(stem: str) -> None:
    right, answered, total = score(stem)
    if answered == 0:
        st.caption(t("quiz.score_none", total=total))
    else:
        st.markdown(t("quiz.score", right=right, answered=answered, total=total))


def show_question(stem: str, number: int, question: Question) -> None:
    """One question in a bordered box: the options, then (once answered or revealed) the feedback."""
    facts = shown(question.facts)
    with st.container(border=True):
        st.caption(t("quiz.question_number", n=number, total=len(bank.questions(stem))))
        st.markdown(t(question.text, **facts))
        if lesson.presenting():
            _presented(question, facts)
        else:
            _asked(stem, question, facts)


def _asked(stem: str, question: Question, facts: Mapping[str, str]) -> None:
    given = answers().get(question.id)
    if given and _radio_key(question) not in st.session_state:
        st.session_state[_radio_key(question)] = given  # back on the page: show what was checked
    with st.form(key=f"qz_form_{question.id}", border=False):
        st.radio(
            t("quiz.your_answer"),
            question.options,
            index=None,
            format_func=_texts(question, facts).__getitem__,
            key=_radio_key(question),
            label_visibility="collapsed",
        )
        st.form_submit_button(
            t("quiz.check"), key=f"qz_check_{question.id}", on_click=_check, args=(stem, question), type="primary"
        )
    if given is None:
        return
    if given == EMPTY:
        st.info(t("quiz.choose_first"), icon=":material/touch_app:")
        return
    _feedback(question, facts, given)


def _presented(question: Question, facts: Mapping[str, str]) -> None:
    """Presentation mode: the class votes; the answer stays hidden until the presenter reveals it."""
    st.radio(
        t("quiz.your_answer"),
        question.options,
        index=None,
        format_func=_texts(question, facts).__getitem__,
        key=_radio_key(question),
        label_visibility="collapsed",
    )
    if question.id not in revealed():
        st.button(t("quiz.reveal"), key=f"qz_reveal_{question.id}", on_click=_reveal, args=(question,))
        return
    chosen = st.session_state.get(_radio_key(question))
    if chosen:
        _feedback(question, facts, chosen)
    else:
        st.success(t("quiz.answer_is", answer=t(question.answer, **facts)), icon=":material/check_circle:")
        _explain(question, facts)


def _texts(question: Question, facts: Mapping[str, str]) -> dict[str, str]:
    """Option key → its text, worked out now in the session's language (not later, by whoever asks)."""
    return {option: t(option, **facts) for option in question.options}


def _feedback(question: Question, facts: Mapping[str, str], given: str) -> None:
    if given == question.answer:
        st.success(t("quiz.right"), icon=":material/check_circle:")
    else:
        st.warning(t("quiz.not_quite", answer=t(question.answer, **facts)), icon=":material/lightbulb:")
    _explain(question, facts)


def _explain(question: Question, facts: Mapping[str, str]) -> None:
    st.markdown(t(question.explanation, **facts))
    st.page_link(
        course.lesson_page(question.lesson),
        label=t("quiz.see_lesson", lesson=t(course.LESSON_TITLES[question.lesson])),
        icon=":material/arrow_forward:",
        query_params=course.carried_params(),
    )


def start_again_button(stem: str) -> None:
    st.button(
        t("quiz.start_again"), key="qz_start_again", on_click=_start_again, args=(stem,), icon=":material/replay:"
    )
