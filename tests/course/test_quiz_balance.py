"""The right option does not give itself away by its length (issue 15).

A student who always picks the longest, most detailed option should do no better than
one who guesses. Each question's options are measured as the page shows them: the
catalogue text with its computed numbers written in (``course.facts``, formatted as
``ui.facts`` does), in each language and in both memory units.

If length carries no information, "the right option is strictly the longest" is, for a
question of n options, a draw that comes up with probability at most 1/n; over the bank
the count has mean Σ 1/n and variance Σ (1/n)(1 − 1/n). The bank may reach that mean
plus one standard deviation (a fair bank stays under it about five times in six);
before issue 15 it stood at 50 of 67 in English and 48 in Portuguese, against a mean of 22.
Ties do not count as longest. And no right option is more than 1.5 times as long as
the median wrong one of its question, so the one detailed option among short ones is gone too.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping

import pytest

import kvcore
from course.quiz import QUIZZES, Question, facts_of
from i18n import LANGUAGES, catalogue
from ui.facts import number_formats

QUESTIONS = [question for questions in QUIZZES.values() for question in questions]
MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()
UNITS = ("GiB", "GB")
MAX_RATIO = 1.5  # right option ÷ median wrong option, in characters


def option_lengths(question: Question, lang: str, unit: str) -> dict[str, int]:
    """Option key → the number of characters the page shows for it."""
    formats = number_formats(lang, unit)
    values = {
        name: value if isinstance(value, str) else formats[value.kind](value)
        for name, value in facts_of(question, models=MODELS, gpus=GPUS).items()
    }
    return {option: len(catalogue(lang)[option].format(**values)) for option in question.options}


def is_longest(lengths: Mapping[str, int], answer: str) -> bool:
    """The right option is strictly longer than every wrong one (a tie is not "longest")."""
    return lengths[answer] > max(length for option, length in lengths.items() if option != answer)


def ratio(lengths: Mapping[str, int], answer: str) -> float:
    """The right option's length ÷ the median length of the wrong ones."""
    return lengths[answer] / statistics.median(length for option, length in lengths.items() if option != answer)


def chance_bound(questions: list[Question]) -> float:
    """Σ 1/n + √(Σ (1/n)(1 − 1/n)): the count of strictly-longest right options that guessing reaches, plus one sd."""
    shares = [1 / len(question.options) for question in questions]
    return sum(shares) + math.sqrt(sum(share * (1 - share) for share in shares))


def test_the_bound_is_the_mean_plus_one_standard_deviation():
    three = [q for q in QUESTIONS if len(q.options) == 3][:9]  # mean 9 · 1/3 = 3, variance 9 · 2/9 = 2
    assert chance_bound(three) == pytest.approx(3 + math.sqrt(2))


def test_a_tie_is_not_longest_and_a_padded_answer_is_caught():
    assert not is_longest({"a": 40, "b": 40, "c": 12}, "a")
    assert is_longest({"a": 41, "b": 40, "c": 12}, "a")
    padded = [({option: 500 if option == q.answer else 100 for option in q.options}, q.answer) for q in QUESTIONS]
    assert sum(is_longest(lengths, answer) for lengths, answer in padded) > chance_bound(QUESTIONS)
    assert all(ratio(lengths, answer) > MAX_RATIO for lengths, answer in padded)


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_right_option_is_the_longest_no_more_often_than_chance(lang, unit):
    longest = [q.id for q in QUESTIONS if is_longest(option_lengths(q, lang, unit), q.answer)]
    bound = chance_bound(QUESTIONS)
    assert len(longest) <= bound, f"{len(longest)} > {bound:.1f}: {longest}"


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_right_option_is_much_longer_than_the_wrong_ones(lang, unit):
    ratios = {q.id: round(ratio(option_lengths(q, lang, unit), q.answer), 2) for q in QUESTIONS}
    assert {question: value for question, value in ratios.items() if value > MAX_RATIO} == {}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_right_option_is_sometimes_the_longest(lang):
    """The opposite tell: a bank whose right option is never the longest teaches "skip the longest"."""
    longest = sum(is_longest(option_lengths(q, lang, "GiB"), q.answer) for q in QUESTIONS)
    assert longest >= sum(1 / len(question.options) for question in QUESTIONS) / 2
