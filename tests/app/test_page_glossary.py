"""The glossary: its terms as data, the page's search and links, and the terms line under every lesson."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs

import pytest

import kvcore
from course.glossary import GENERAL_TERMS, LESSON_TERMS, TERMS
from i18n import LANGUAGES, catalogue, translate
from kvcore.units import format_bytes, format_quantity
from tests.app.helpers import page_opener
from ui import course
from ui.glossary import SEARCH_KEY, TERM_KEY

ROOT = Path(__file__).resolve().parents[2]
PAGE = "lessons/glossary.py"
TERMS_CALL = re.compile(r"""^glossary\.terms_used\(["']([a-z0-9_]+)["']\)$""", re.MULTILINE)
#: Terms the brief asks the glossary to define, at least.
REQUIRED = {
    "kv_cache", "attention", "prefill", "decode", "ttft", "tpot", "gqa", "mqa", "mha", "mla", "sliding_window",
    "paged_attention", "block", "prefix_caching", "prompt_caching", "preemption", "continuous_batching", "roofline",
    "arithmetic_intensity", "ridge_point", "hbm", "sram", "memory_bandwidth", "mbu", "mfu", "flash_attention",
    "quantization", "gib_gb", "tensor_parallelism", "moe", "eviction", "context_window", "gpu_memory_utilization",
}  # fmt: skip


open_glossary = page_opener(PAGE, first_run=False)


def open_lesson(app, stem: str, lang: str = "en"):
    app.query_params["lang"] = lang
    return app.switch_page(course.lesson_page(stem)).run()


def shown_terms(app) -> list[str]:
    return [expander.label for expander in app.expander]


# ---------------------------------------------------------------- the data


def test_the_glossary_defines_every_required_term():
    assert REQUIRED - set(TERMS) == set()


def test_every_term_a_lesson_names_exists():
    assert [(stem, term) for stem, terms in LESSON_TERMS.items() for term in terms if term not in TERMS] == []


def test_every_term_is_used_by_a_lesson_or_listed_as_general():
    used = {term for terms in LESSON_TERMS.values() for term in terms}
    assert set(TERMS) - used - set(GENERAL_TERMS) == set()


def test_every_lesson_has_terms():
    assert set(LESSON_TERMS) == set(course.LESSONS)


@pytest.mark.parametrize("stem", course.LESSONS)
def test_every_lesson_ends_with_its_terms_line(stem):
    source = (ROOT / "lessons" / f"{stem}.py").read_text(encoding="utf-8")
    assert TERMS_CALL.findall(source) == [stem]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_term_has_a_name_and_a_definition(lang):
    texts = catalogue(lang)
    assert [term.id for term in TERMS.values() if term.name not in texts or term.definition not in texts] == []


def test_term_names_are_distinct_in_each_language():
    for lang in LANGUAGES:
        names = [translate(lang, term.name) for term in TERMS.values()]
        assert len(names) == len(set(names)), lang


# ---------------------------------------------------------------- the page


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_lists_every_term_fully_translated(app, lang):
    open_glossary(app, lang)
    assert not app.exception
    assert len(app.expander) == len(TERMS)
    assert not [m.value for m in app.markdown if "glossary." in m.value or "{" in m.value]


def test_a_link_to_a_term_shows_it_first_and_open(app):
    open_glossary(app, **{TERM_KEY: "gqa"})
    first = app.expander[0]
    assert first.label == translate("en", "glossary.gqa")
    assert first.proto.expanded
    assert not any(expander.proto.expanded for expander in app.expander[1:])


def test_an_unknown_term_in_the_link_gives_a_notice_and_the_whole_glossary(app):
    open_glossary(app, **{TERM_KEY: "<b>nope</b>"})
    assert not app.exception
    [notice] = [info for info in app.info if "nope" in info.value]
    assert "<b>" not in notice.value
    assert len(app.expander) == len(TERMS)


def test_the_search_ignores_accents_in_portuguese(app):
    open_glossary(app, "pt")
    app.text_input(key=SEARCH_KEY).input("atencao").run()
    assert translate("pt", "glossary.attention") in shown_terms(app)  # "Atenção"
    assert translate("pt", "glossary.prefill") not in shown_terms(app)


def test_the_search_matches_definitions_too(app):
    open_glossary(app)
    app.text_input(key=SEARCH_KEY).input("Bandwidth").run()
    shown = shown_terms(app)
    assert translate("en", "glossary.memory_bandwidth") in shown
    assert translate("en", "glossary.ridge_point") in shown  # its definition says "memory bandwidth"
    assert translate("en", "glossary.teacher_forcing") not in shown


def test_a_search_with_few_results_opens_them(app):
    open_glossary(app)
    app.text_input(key=SEARCH_KEY).input("teacher forcing").run()
    assert [(e.label, e.proto.expanded) for e in app.expander] == [(translate("en", "glossary.teacher_forcing"), True)]


def test_a_search_that_matches_nothing_says_so(app):
    open_glossary(app, **{SEARCH_KEY: "zzz"})
    assert not app.expander
    assert any("zzz" in info.value for info in app.info)


def test_a_definition_shows_kvcores_bytes_per_token(app, models):
    open_glossary(app, **{TERM_KEY: "kv_cache"})
    per_token = format_bytes(kvcore.kv_bytes_per_token(models["llama-3.1-8b"]))  # 128 KiB, seed 000
    assert f"**{per_token}**" in app.expander[0].markdown[0].value
    assert app.expander[0].latex


def test_the_ridge_point_is_kvcores(app, gpus):
    open_glossary(app, **{TERM_KEY: "ridge_point"})
    h100 = gpus["h100-sxm"]
    ridge = kvcore.ridge_point(
        peak_flop_per_s=h100.bf16_dense_flop_per_s, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s
    )
    assert f"**{format_quantity(ridge)} FLOP/byte**" in app.expander[0].markdown[0].value  # ~295, seed 004's "~300"


def test_a_term_links_to_the_lessons_that_use_it(app):
    open_glossary(app, **{TERM_KEY: "prompt_caching"})
    links = {link.proto.page for link in app.expander[0].get("page_link")}
    assert links == {stem for stem, terms in LESSON_TERMS.items() if "prompt_caching" in terms}


# ---------------------------------------------------------------- the line under a lesson


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_lesson_links_to_its_terms_and_to_its_quiz(app, lang):
    open_lesson(app, "attention_variants", lang)
    glossary_links = [link for link in app.page_link if link.proto.page == "glossary"]
    assert [parse_qs(link.proto.query_string)[TERM_KEY] for link in glossary_links] == [
        [term] for term in LESSON_TERMS["attention_variants"]
    ]
    assert [link.value for link in glossary_links] == [
        translate(lang, TERMS[term].name) for term in LESSON_TERMS["attention_variants"]
    ]
    [quiz] = [link for link in app.page_link if link.proto.page == "quiz"]
    assert parse_qs(quiz.proto.query_string)[course.QUIZ_KEY] == ["attention_variants"]


def test_the_lessons_links_keep_the_course(app):
    app.query_params.update({course.ID_KEY: "first_class", course.STEP_KEY: "2"})
    open_lesson(app, "memory")
    # The line under the lesson links to its quiz and keeps the course (the course bar links to its next step).
    quizzes = [parse_qs(link.proto.query_string) for link in app.page_link if link.proto.page == "quiz"]
    assert {course.QUIZ_KEY: ["memory"], course.ID_KEY: ["first_class"], course.STEP_KEY: ["2"]} in quizzes


def test_a_word_with_another_ending_still_finds_its_term(app):
    # "paginada" (as in «atenção paginada») is in no text as such; the definition says «páginas».
    open_glossary(app, "pt")
    app.text_input(key=SEARCH_KEY).input("paginada").run()
    assert translate("pt", "glossary.paged_attention") in shown_terms(app)


@pytest.mark.parametrize("lang", ["pt", "en"])
def test_a_term_named_by_the_search_comes_first(app, lang):
    open_glossary(app, lang)
    app.text_input(key=SEARCH_KEY).input("prompt cache").run()
    shown = shown_terms(app)
    assert shown[0] == translate(lang, "glossary.prompt_caching")
    assert translate(lang, "glossary.context_window") not in shown[:1]
