"""The one list of pages (course.lessons) and the lessons/ folder agree."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from course import lessons
from i18n import LANGUAGES, catalogue

ROOT = Path(__file__).resolve().parents[2]


def test_every_file_in_lessons_has_exactly_one_entry_and_every_entry_a_file():
    files = Counter(path.stem for path in (ROOT / "lessons").glob("*.py"))
    entries = Counter(page.stem for page in lessons.PAGES)
    assert entries == files
    assert set(entries.values()) == {1}


def test_each_entry_names_its_own_file():
    assert all((ROOT / page.file).is_file() and page.file == f"lessons/{page.stem}.py" for page in lessons.PAGES)


def test_the_default_page_is_a_lesson_of_the_list():
    assert lessons.DEFAULT_STEM in lessons.LESSON_STEMS


def test_lessons_have_quizzes_and_practice_pages_do_not_count_as_lessons():
    assert lessons.LESSON_STEMS[:2] == ("why_cache", "memory")
    assert not {"practice", "quiz", "course", "glossary"} & set(lessons.LESSON_STEMS)


def test_every_title_and_section_key_exists_in_both_languages():
    keys = {key for page in lessons.PAGES for key in (page.title_key, page.section_key)}
    assert all(keys <= set(catalogue(lang)) for lang in LANGUAGES)


def test_every_icon_is_a_material_symbol():
    assert all(page.icon.startswith(":material/") and page.icon.endswith(":") for page in lessons.PAGES)


def test_sections_keep_the_navigation_order_and_hold_every_page_once():
    grouped = lessons.sections()
    assert [page for pages in grouped.values() for page in pages] == list(lessons.PAGES)
    assert list(grouped) == [
        "nav.section_foundations",
        "nav.section_speed",
        "nav.section_production",
        "nav.section_serving",
        "nav.section_practice",
    ]
