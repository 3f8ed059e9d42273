"""The glossary on screen: the terms line under each lesson, and the glossary page's entries and search.

The terms are data (``course.glossary``: ``TERMS`` and ``LESSON_TERMS``, texts in
i18n/*/glossary.json); numbers in definitions come from ``course.facts`` through
``ui.facts.shown``, computed by kvcore when the term is drawn. A term's "used in" links
come from ``LESSON_TERMS``, so the lesson → term table is written once.

On a lesson, ``terms_used(stem)`` draws the line "Terms on this page: GQA · MLA · …" (each a link to
``/glossary?gl_term=<id>``) and a link to that lesson's quiz (``/quiz?qz_lesson=<stem>``).
"""

from __future__ import annotations

import unicodedata

import streamlit as st

import ui
from course.glossary import LESSON_TERMS, TERMS, Term
from ui import course, lesson, t
from ui.facts import shown

GLOSSARY_PAGE = "lessons/glossary.py"
TERM_KEY = "gl_term"
SEARCH_KEY = "gl_search"
#: A search that leaves at most this many terms opens them all.
OPEN_RESULTS = 5


def lessons_using(term_id: str) -> list[str]:
    """The lessons whose pages use a term, in the navigation's order."""
    return [stem for stem in course.LESSONS if term_id in LESSON_TERMS.get(stem, ())]


def facts_of(term: Term) -> dict[str, str]:
    """The placeholders of a term's definition, as text in this session's language and units."""
    return shown(term.facts)


# ---------------------------------------------------------------- on a lesson page


def terms_used(stem: str) -> None:
    """The line under a lesson: links to the glossary entries of its terms, and to its quiz.

    Also notes that the lesson was opened (the course page shows it beside the step). A lesson footer
    (``lesson.footer``): drawn once per whole run, below the lesson, not at each of its slider moves.
    """
    lesson.footer(lambda: _terms_used(stem))


def _terms_used(stem: str) -> None:
    course.visited(stem)
    st.divider()
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        st.caption(t("glossary.terms_on_page"), width="content")
        for term_id in LESSON_TERMS[stem]:
            st.page_link(
                GLOSSARY_PAGE,
                label=t(TERMS[term_id].name),
                icon=":material/menu_book:",
                query_params=course.carried_params(**{TERM_KEY: term_id}),
            )
    st.page_link(
        course.QUIZ_PAGE,
        label=t("glossary.quiz_link", lesson=t(course.LESSON_TITLES[stem])),
        icon=":material/quiz:",
        query_params=course.carried_params(**{course.QUIZ_KEY: stem}),
    )


# ---------------------------------------------------------------- the glossary page


def folded(text: str) -> str:
    """Text for matching: no accents, no case, no markdown stars ('Atenção' → 'atencao')."""
    decomposed = unicodedata.normalize("NFKD", text.replace("*", ""))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


#: Endings a search word may differ by ("paginada" finds "páginas", "cache" finds "caching"), folded, longest first.
_ENDINGS = ("coes", "cao", "ing", "ada", "ado", "as", "os", "es", "ed", "s", "a", "o", "e")


def _stem(word: str) -> str:
    """The word without one common pt/en ending, keeping at least four letters ('paginada' → 'pagin')."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


def _found(word: str, text: str) -> bool:
    """The folded query word is in the folded text, or its stem starts one of the text's words."""
    if word in text:
        return True
    stem = _stem(word)
    return stem != word and any(other.startswith(stem) for other in text.split())


def match_score(term: Term, query: str) -> int:
    """How well the query names the term: 3 its name, 2 its name and id, 1 also its definition, 0 no match.

    Every word of the query must be found (accents, case and a common ending ignored); the score is the
    narrowest place that holds them all, so "prompt cache" puts "Prompt caching" before the terms whose
    definitions merely mention a prompt and a cache.
    """
    words = folded(query).split()
    if not words:
        return 0
    name = folded(t(term.name)).replace("-", " ")
    named = f"{name} {term.id.replace('_', ' ')}"
    places = (name, named, f"{named} {folded(t(term.definition, **facts_of(term)))}")
    for score, text in zip((3, 2, 1), places, strict=True):
        if all(_found(word, text) for word in words):
            return score
    return 0


def matches(term: Term, query: str) -> bool:
    """True if every word of the query is in the term's id, name or definition (:func:`match_score`)."""
    return match_score(term, query) > 0


def search(terms: list[Term], query: str) -> list[Term]:
    """The terms that match, best first (:func:`match_score`), keeping the given order among equals."""
    scored = [(match_score(term, query), index, term) for index, term in enumerate(terms)]
    return [term for score, _, term in sorted(scored, key=lambda item: (-item[0], item[1])) if score]


def asked_term() -> str | None:
    """The term a link asked for (``?gl_term=<id>``); an unknown id gets a notice and leaves the URL."""
    wanted = st.query_params.get(TERM_KEY)
    if wanted is None or wanted in TERMS:
        return wanted
    st.info(t("glossary.unknown_term", term=ui.shown_param(wanted)), icon=":material/link:")
    st.query_params.pop(TERM_KEY, None)  # said once; the rest of the visit shows the whole glossary
    return None


def ordered_terms(first: str | None) -> list[Term]:
    """Every term in alphabetical order of its name in this language, the asked-for term first."""
    terms = sorted(TERMS.values(), key=lambda term: folded(t(term.name)))
    if first is not None:
        terms.sort(key=lambda term: term.id != first)  # stable: the rest stay alphabetical
    return terms


def show_term(term: Term, *, expanded: bool) -> None:
    """One entry: its definition (with kvcore's numbers), its formula, and the lessons that use it."""
    with st.expander(t(term.name), expanded=expanded, icon=":material/bookmark:" if expanded else None):
        st.markdown(t(term.definition, **facts_of(term)))
        if term.formula:
            st.latex(term.formula)
        stems = lessons_using(term.id)
        if stems:
            st.caption(t("glossary.used_in"))
            with st.container(horizontal=True, gap="small"):
                for stem in stems:
                    st.page_link(
                        course.lesson_page(stem),
                        label=t(course.LESSON_TITLES[stem]),
                        icon=":material/school:",
                        query_params=course.carried_params(),
                    )
