"""Every page of the app, in the order of the navigation: the one list of lessons that everything reads.

app.py builds its navigation from it; course paths (ui.course), quizzes and the glossary read
its lessons.

A page is a flat Streamlit script, ``lessons/<stem>.py``; its entry here gives the
navigation section it sits in, its icon and the catalogue key of its title. Adding a
lesson means adding its file and one entry below (tests/course/test_lessons.py checks
that the two agree).

Two kinds of page: a *lesson* teaches one idea, has a quiz, and can be a step of a
course path; a *practice* page (exercises, quizzes, course paths, glossary) works on
the lessons. Title and section keys are written out literally so the catalogue test
(tests/app/test_i18n.py) sees them.

Pure data: no streamlit here (course/ never imports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

__all__ = [
    "DEFAULT_STEM",
    "LESSON",
    "LESSON_STEMS",
    "PAGES",
    "PRACTICE",
    "TITLES",
    "Kind",
    "Page",
    "page_file",
    "sections",
]

#: What a page is: a lesson (it has a quiz and can be a course step) or a practice page.
Kind = Literal["lesson", "practice"]
LESSON: Kind = "lesson"
PRACTICE: Kind = "practice"


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """One page of the navigation: its file stem, section, icon and title key, and whether it is a lesson."""

    stem: str  # lessons/<stem>.py, and its url_path
    section_key: str  # catalogue key of its navigation section
    icon: str  # a Material Symbols icon, as st.Page wants it
    title_key: str  # catalogue key of its title
    kind: Kind = LESSON

    @property
    def file(self) -> str:
        """The page's script, relative to the repository root (what st.Page and st.page_link want)."""
        return page_file(self.stem)

    @property
    def is_lesson(self) -> bool:
        """True for a lesson (it has a quiz and can be a course step), False for a practice page."""
        return self.kind == LESSON


_FOUNDATIONS = "nav.section_foundations"
_SPEED = "nav.section_speed"
_PRODUCTION = "nav.section_production"
_SERVING = "nav.section_serving"
_PRACTICE = "nav.section_practice"

#: Every page, in the order of the navigation (sections appear in the order of their first page).
PAGES: tuple[Page, ...] = (
    Page(stem="why_cache", section_key=_FOUNDATIONS, icon=":material/replay:", title_key="nav.why_cache"),
    Page(stem="memory", section_key=_FOUNDATIONS, icon=":material/calculate:", title_key="nav.memory"),
    Page(
        stem="attention_variants", section_key=_FOUNDATIONS, icon=":material/hub:", title_key="nav.attention_variants"
    ),
    Page(stem="kv_quantization", section_key=_FOUNDATIONS, icon=":material/compress:", title_key="nav.kv_quantization"),
    Page(stem="import_model", section_key=_FOUNDATIONS, icon=":material/upload_file:", title_key="nav.import_model"),
    Page(stem="prefill_decode", section_key=_SPEED, icon=":material/timer:", title_key="nav.prefill_decode"),
    Page(stem="decode_speed", section_key=_SPEED, icon=":material/speed:", title_key="nav.decode_speed"),
    Page(stem="flash_attention", section_key=_SPEED, icon=":material/bolt:", title_key="nav.flash_attention"),
    Page(stem="sizing", section_key=_PRODUCTION, icon=":material/straighten:", title_key="nav.sizing"),
    Page(stem="agent_1m", section_key=_PRODUCTION, icon=":material/smart_toy:", title_key="nav.agent_1m"),
    Page(stem="vllm_pool", section_key=_SERVING, icon=":material/storage:", title_key="nav.vllm_pool"),
    Page(stem="engines", section_key=_SERVING, icon=":material/compare:", title_key="nav.engines"),
    Page(stem="local_llm", section_key=_SERVING, icon=":material/laptop_mac:", title_key="nav.local_llm"),
    Page(stem="vllm_log", section_key=_SERVING, icon=":material/receipt_long:", title_key="nav.vllm_log"),
    Page(stem="paged_attention", section_key=_SERVING, icon=":material/grid_view:", title_key="nav.paged_attention"),
    Page(stem="prefix_caching", section_key=_SERVING, icon=":material/content_copy:", title_key="nav.prefix_caching"),
    Page(stem="preemption", section_key=_SERVING, icon=":material/swap_horiz:", title_key="nav.preemption"),
    Page(stem="practice", section_key=_PRACTICE, icon=":material/edit_note:", title_key="nav.practice", kind=PRACTICE),
    Page(stem="quiz", section_key=_PRACTICE, icon=":material/quiz:", title_key="nav.quiz", kind=PRACTICE),
    Page(stem="course", section_key=_PRACTICE, icon=":material/route:", title_key="nav.course", kind=PRACTICE),
    Page(stem="glossary", section_key=_PRACTICE, icon=":material/menu_book:", title_key="nav.glossary", kind=PRACTICE),
)

#: The page the app opens at "/" (its url_path is "").
DEFAULT_STEM = "memory"

#: The lessons (each with a quiz), in the order of the navigation.
LESSON_STEMS: tuple[str, ...] = tuple(page.stem for page in PAGES if page.is_lesson)

#: Every page's title key, by stem (read-only: one server shares this module with every user).
TITLES: Mapping[str, str] = MappingProxyType({page.stem: page.title_key for page in PAGES})


def page_file(stem: str) -> str:
    """The script of the page `stem`, as st.Page and st.page_link want it: 'lessons/memory.py'."""
    return f"lessons/{stem}.py"


def sections() -> dict[str, list[Page]]:
    """The pages grouped by section key, sections and pages in the order of the navigation."""
    grouped: dict[str, list[Page]] = {}
    for page in PAGES:
        grouped.setdefault(page.section_key, []).append(page)
    return grouped
