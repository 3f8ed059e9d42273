"""The quiz bank as data: every lesson has a quiz, every question is complete in both languages and has one answer.

And every number a question shows comes from a computed fact that fills all its placeholders.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest

import kvcore
from course import facts
from course.quiz import QUIZZES, facts_of, questions, score, texts_of
from i18n import LANGUAGES, catalogue
from kvcore.errors import KvError
from ui import course

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [question for questions in QUIZZES.values() for question in questions]
MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()


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


# ---------------------------------------------------------------- the computed facts behind the numbers


def placeholders_of(question, lang: str) -> set[str]:
    return set().union(*(placeholders(catalogue(lang)[key]) for key in texts_of(question)))


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda question: question.id)
def test_every_record_names_a_fact_that_exists(question):
    assert question.facts is None or question.facts in facts.FACTS


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda question: question.id)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_fact_fills_every_placeholder_of_the_texts(question, lang):
    assert placeholders_of(question, lang) - set(facts_of(question, models=MODELS, gpus=GPUS)) == set()


@pytest.mark.parametrize("question", [q for q in QUESTIONS if q.facts], ids=lambda question: question.id)
def test_a_question_with_a_fact_shows_some_of_its_numbers(question):
    assert placeholders_of(question, "en")


def test_the_facts_of_a_question_are_the_named_facts_values():
    [question] = [q for q in QUESTIONS if q.id == "ag_cache"]
    assert facts_of(question, models=MODELS, gpus=GPUS) == facts.fact("seed_004_ledger", models=MODELS, gpus=GPUS)


def test_a_question_without_a_fact_has_no_facts():
    [question] = [q for q in QUESTIONS if q.id == "wc_what"]
    assert facts_of(question, models=MODELS, gpus=GPUS) == {}


def test_the_score_counts_right_answers_and_ignores_empty_checks():
    first, second, third = questions("memory")[:3]
    given = {first.id: first.answer, second.id: next(o for o in second.options if o != second.answer), third.id: ""}
    assert score(given, "memory") == (1, 2, len(questions("memory")))


def test_an_unknown_quiz_is_a_kv_error_with_a_code():
    with pytest.raises(KvError) as raised:
        questions("no_such_lesson")
    assert raised.value.code == "unknown_quiz"
