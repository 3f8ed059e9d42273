"""The quiz bank as data: every lesson has a quiz, every question is complete in both languages and has one answer."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from i18n import LANGUAGES, catalogue
from ui import course
from ui.quiz import QUIZZES, Question

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [question for questions in QUIZZES.values() for question in questions]


def texts_of(question: Question) -> list[str]:
    return [question.text, *question.options, question.explanation]


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def test_every_lesson_has_a_quiz_and_no_quiz_lacks_a_lesson():
    assert set(QUIZZES) == set(course.LESSONS)


@pytest.mark.parametrize("stem", course.LESSONS)
def test_every_quiz_has_three_to_six_questions(stem):
    assert 3 <= len(QUIZZES[stem]) <= 6


def test_question_ids_are_unique():
    ids = [question.id for question in QUESTIONS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda question: question.id)
def test_every_question_has_exactly_one_right_option_among_distinct_options(question):
    assert len(question.options) >= 3
    assert len(set(question.options)) == len(question.options)
    assert question.options.count(question.answer) == 1


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda question: question.id)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_text_of_a_question_exists(question, lang):
    assert [key for key in texts_of(question) if key not in catalogue(lang)] == []


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda question: question.id)
def test_both_languages_use_the_same_placeholders(question):
    pt, en = catalogue("pt"), catalogue("en")
    assert [key for key in texts_of(question) if placeholders(pt[key]) != placeholders(en[key])] == []


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda question: question.id)
def test_a_question_without_numbers_needs_no_placeholders(question):
    if question.facts is None:
        assert set().union(*(placeholders(catalogue("en")[key]) for key in texts_of(question))) == set()


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda question: question.id)
def test_the_page_that_shows_the_answer_exists(question):
    assert (ROOT / "lessons" / f"{question.lesson}.py").is_file()


def test_the_right_option_is_not_always_in_the_same_place():
    assert len({question.options.index(question.answer) for question in QUESTIONS}) >= 3


@pytest.mark.parametrize(
    ("stem", "question_id"),
    [
        ("why_cache", "wc_training"),  # seed 002's Q&A: is there a KV cache in training?
        ("kv_quantization", "kq_helps"),  # does quantizing the cache help?
        ("kv_quantization", "kq_k_vs_v"),  # K is more sensitive than V
        ("attention_variants", "av_sliding"),  # what is sliding-window attention?
        ("prefix_caching", "pc_vs_prompt"),  # seed 002's FAQ: attention cache vs prompt caching
        ("memory", "mem_30gb"),  # seed 002's FAQ: why a 30 GB model needs more
        ("memory", "mem_consequence"),  # seed 002's review: the practical consequence of the cache
        ("prefill_decode", "pd_phases"),  # the module's review: prefill vs decode
        ("prefill_decode", "pd_output_cost"),  # why output tokens cost more
        ("attention_variants", "av_compare"),  # MHA vs GQA vs MQA
        ("flash_attention", "fa_kv"),  # FlashAttention does not shrink the cache
        ("flash_attention", "fa_reduce"),  # seed 002's FAQ: how to shrink the cache
        ("paged_attention", "pa_share"),  # seed 002's review: the cache and prefix reuse
    ],
)
def test_the_seeds_review_questions_and_faq_are_asked(stem, question_id):
    assert question_id in {question.id for question in QUIZZES[stem]}
