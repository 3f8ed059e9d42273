"""Glossary: every term the lessons use, searchable, each with the lessons that use it.

The terms are data (course/glossary.py, texts in i18n/*/glossary.json); numbers in definitions
come from kvcore through course/facts.py. ``?gl_term=<id>`` (the links under each lesson) opens that term first;
``?gl_search=`` holds the search.
"""

import streamlit as st

import ui
from course.glossary import TERMS
from ui import glossary, lesson, t

lesson.rerun_alone(__file__)

lesson.header(t("glossary.title"), t("glossary.intro"))
asked = glossary.asked_term()
query = st.text_input(
    t("glossary.search"),
    key=glossary.SEARCH_KEY,
    bind="query-params",
    placeholder=t("glossary.search_placeholder"),
    help=t("glossary.search_help"),
    icon=":material/search:",
    max_chars=60,
)
query = (query or "").strip()

terms = glossary.search(glossary.ordered_terms(asked), query) if query else glossary.ordered_terms(asked)
if asked is not None and terms and terms[0].id == asked:
    st.caption(t("glossary.showing", term=t(TERMS[asked].name)))
st.caption(t("glossary.count", shown=len(terms), total=len(TERMS)))
if not terms:
    st.info(t("glossary.none", query=ui.shown_param(query)), icon=":material/search_off:")
for term in terms:
    opened = term.id == asked or (bool(query) and len(terms) <= glossary.OPEN_RESULTS)
    glossary.show_term(term, expanded=opened)

lesson.takeaway(t("glossary.takeaway"))
