"""The glossary records: a computed fact behind every number of a definition.

Names, definitions and the lesson table are checked in tests/app/test_page_glossary.py.
"""

from __future__ import annotations

import string

import pytest

import kvcore
from course import facts
from course.glossary import LESSON_TERMS, TERMS
from i18n import LANGUAGES, catalogue

MODELS = kvcore.load_models()
GPUS = kvcore.load_gpus()


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


@pytest.mark.parametrize("term", TERMS.values(), ids=lambda term: term.id)
def test_every_term_is_filed_under_its_id(term):
    assert TERMS[term.id] is term


@pytest.mark.parametrize("term", TERMS.values(), ids=lambda term: term.id)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_fact_fills_every_placeholder_of_the_definition(term, lang):
    needed = placeholders(catalogue(lang)[term.definition])
    given = set(facts.fact(term.facts, models=MODELS, gpus=GPUS)) if term.facts else set()
    assert needed - given == set()


@pytest.mark.parametrize("term", [term for term in TERMS.values() if term.facts], ids=lambda term: term.id)
def test_a_term_with_a_fact_names_one_that_exists_and_shows_it(term):
    assert term.facts in facts.FACTS
    assert placeholders(catalogue("en")[term.definition])


def test_no_lesson_lists_a_term_twice():
    assert [stem for stem, terms in LESSON_TERMS.items() if len(set(terms)) != len(terms)] == []
