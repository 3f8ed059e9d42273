"""Quizzes without a screen: the bank's questions by lesson, their computed facts, and the score.

The questions are records (``course.quiz_data``); this module turns them into what a
page asks: the questions of a lesson, the numbers a question's texts need (computed
by ``course.facts`` from the catalogues at the moment it is drawn), and the score of
a set of answers. Streamlit rendering and the session's answers live in ``ui.quiz``.
"""

from __future__ import annotations

from collections.abc import Mapping

from course import facts
from course.quiz_data import QUIZZES, Question
from kvcore import GpuSpec, ModelSpec
from kvcore.errors import KvError

__all__ = ["QUIZZES", "Question", "facts_of", "questions", "score", "texts_of"]


def questions(stem: str) -> tuple[Question, ...]:
    """The questions of one lesson's quiz, in order. KvError ``unknown_quiz`` for a stem without a quiz."""
    if stem not in QUIZZES:
        raise KvError("unknown_quiz", f"no quiz for the lesson {stem!r}", stem=stem)
    return QUIZZES[stem]


def texts_of(question: Question) -> tuple[str, ...]:
    """Every catalogue key a question shows: its text, its options, its explanation."""
    return (question.text, *question.options, question.explanation)


def facts_of(question: Question, *, models: Mapping[str, ModelSpec], gpus: Mapping[str, GpuSpec]) -> facts.Facts:
    """The placeholders of a question's texts, computed now (empty for a question without numbers)."""
    return facts.fact(question.facts, models=models, gpus=gpus) if question.facts else {}


def score(answers: Mapping[str, str], stem: str) -> tuple[int, int, int]:
    """(right, answered, questions) of one lesson's quiz, given question id → the option checked.

    An empty option ("checked without choosing") is not an answer.

    >>> score({"wc_what": "quiz.wc_what_b", "wc_count": "quiz.wc_count_a"}, "why_cache")
    (1, 2, 4)
    """
    asked = questions(stem)
    answered = [question for question in asked if answers.get(question.id)]
    return sum(answers[question.id] == question.answer for question in answered), len(answered), len(asked)
