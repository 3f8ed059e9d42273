"""Every page of the app, in the order of the navigation: the one list of lessons that everything reads.

app.py builds its navigation from it; course paths (ui.course), quizzes and the glossary read
its lessons.

A page is a flat Streamlit script, ``lessons/<stem>.py``; its entry here gives the
navigation section it sits in, its icon and the catalogue key of its title. Adding a
lesson means adding its file and one entry below (tests/course/test_lessons.py checks
that the two agree).

Three kinds of page: a *lesson* teaches one idea, has a quiz, and can be a step of a
course path; a *practice* page (exercises, quizzes, course paths, glossary) works on
the lessons; the *instructor* page (an exercise set's answer key, a lesson's handout) is
left out of the menu (``MENU_PAGES``) and opened by its address, /instructor: hidden, not
protected. Title and section keys are written out literally so the catalogue test
(tests/app/test_i18n.py) sees them.

Each page's widget keys start with its ``key_prefix`` (a key is also a URL parameter, so
keys are unique across pages; tests/app/test_lessons.py checks the rule); the memory
calculator's first keys predate the prefixes (``legacy_keys``). A page's export
(ui/export.py) reads its settings by them.

Pure data: no streamlit here (course/ never imports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

__all__ = [
    "BY_STEM",
    "DEFAULT_STEM",
    "INSTRUCTOR",
    "LESSON",
    "LESSON_STEMS",
    "MENU_PAGES",
    "PAGES",
    "PRACTICE",
    "TITLES",
    "Kind",
    "Page",
    "page_file",
    "sections",
]

#: What a page is: a lesson (it has a quiz and can be a course step), a practice page, or the instructor's page.
Kind = Literal["lesson", "practice", "instructor"]
LESSON: Kind = "lesson"
PRACTICE: Kind = "practice"
INSTRUCTOR: Kind = "instructor"


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """One page of the navigation: its file stem, section, icon, title key, widget-key prefix, and its kind."""

    stem: str  # lessons/<stem>.py, and its url_path
    section_key: str  # catalogue key of its navigation section
    icon: str  # a Material Symbols icon, as st.Page wants it
    title_key: str  # catalogue key of its title
    key_prefix: str  # every widget key of the page starts with it ("mem_"), but for legacy_keys
    kind: Kind = LESSON
    legacy_keys: frozenset[str] = frozenset()  # widget keys older than the prefixes (shared links use them)

    @property
    def file(self) -> str:
        """The page's script, relative to the repository root (what st.Page and st.page_link want)."""
        return page_file(self.stem)

    @property
    def is_lesson(self) -> bool:
        """True for a lesson (it has a quiz and can be a course step), False for a practice page."""
        return self.kind == LESSON

    @property
    def in_menu(self) -> bool:
        """True for a page the sidebar lists; the instructor's page is reachable by its address only."""
        return self.kind != INSTRUCTOR

    def owns_key(self, key: str) -> bool:
        """True if the widget key `key` is one of this page's (its prefix, or one of its legacy keys)."""
        return key.startswith(self.key_prefix) or key in self.legacy_keys


_FOUNDATIONS = "nav.section_foundations"
_SPEED = "nav.section_speed"
_PRODUCTION = "nav.section_production"
_SERVING = "nav.section_serving"
_PRACTICE = "nav.section_practice"

#: The memory calculator's keys from before the prefixes: links already shared use them.
_MEMORY_KEYS = frozenset({"context", "concurrency", "kv_heads", "kv_dtype", "weights_dtype", "memory_chart"})

#: Every page, in the order of the navigation (sections appear in the order of their first page).
PAGES: tuple[Page, ...] = (
    Page(
        stem="why_cache",
        section_key=_FOUNDATIONS,
        icon=":material/replay:",
        title_key="nav.why_cache",
        key_prefix="wc_",
    ),
    Page(
        stem="memory",
        section_key=_FOUNDATIONS,
        icon=":material/calculate:",
        title_key="nav.memory",
        key_prefix="mem_",
        legacy_keys=_MEMORY_KEYS,
    ),
    Page(
        stem="attention_variants",
        section_key=_FOUNDATIONS,
        icon=":material/hub:",
        title_key="nav.attention_variants",
        key_prefix="av_",
    ),
    Page(
        stem="kv_quantization",
        section_key=_FOUNDATIONS,
        icon=":material/compress:",
        title_key="nav.kv_quantization",
        key_prefix="kq_",
    ),
    Page(
        stem="import_model",
        section_key=_FOUNDATIONS,
        icon=":material/upload_file:",
        title_key="nav.import_model",
        key_prefix="im_",
    ),
    Page(
        stem="prefill_decode",
        section_key=_SPEED,
        icon=":material/timer:",
        title_key="nav.prefill_decode",
        key_prefix="pd_",
    ),
    Page(
        stem="decode_speed", section_key=_SPEED, icon=":material/speed:", title_key="nav.decode_speed", key_prefix="ds_"
    ),
    Page(
        stem="flash_attention",
        section_key=_SPEED,
        icon=":material/bolt:",
        title_key="nav.flash_attention",
        key_prefix="fa_",
    ),
    Page(
        stem="sizing", section_key=_PRODUCTION, icon=":material/straighten:", title_key="nav.sizing", key_prefix="sz_"
    ),
    Page(
        stem="agent_1m",
        section_key=_PRODUCTION,
        icon=":material/smart_toy:",
        title_key="nav.agent_1m",
        key_prefix="ag_",
    ),
    Page(
        stem="compare",
        section_key=_PRODUCTION,
        icon=":material/compare_arrows:",
        title_key="nav.compare",
        key_prefix="cmp_",
    ),
    Page(
        stem="vllm_pool", section_key=_SERVING, icon=":material/storage:", title_key="nav.vllm_pool", key_prefix="vp_"
    ),
    Page(stem="engines", section_key=_SERVING, icon=":material/compare:", title_key="nav.engines", key_prefix="eg_"),
    Page(
        stem="local_llm",
        section_key=_SERVING,
        icon=":material/laptop_mac:",
        title_key="nav.local_llm",
        key_prefix="lo_",
    ),
    Page(
        stem="vllm_log",
        section_key=_SERVING,
        icon=":material/receipt_long:",
        title_key="nav.vllm_log",
        key_prefix="vl_",
    ),
    Page(
        stem="paged_attention",
        section_key=_SERVING,
        icon=":material/grid_view:",
        title_key="nav.paged_attention",
        key_prefix="pa_",
    ),
    Page(
        stem="prefix_caching",
        section_key=_SERVING,
        icon=":material/content_copy:",
        title_key="nav.prefix_caching",
        key_prefix="pc_",
    ),
    Page(
        stem="preemption",
        section_key=_SERVING,
        icon=":material/swap_horiz:",
        title_key="nav.preemption",
        key_prefix="pr_",
    ),
    Page(
        stem="practice",
        section_key=_PRACTICE,
        icon=":material/edit_note:",
        title_key="nav.practice",
        key_prefix="ex_",
        kind=PRACTICE,
    ),
    Page(
        stem="quiz",
        section_key=_PRACTICE,
        icon=":material/quiz:",
        title_key="nav.quiz",
        key_prefix="qz_",
        kind=PRACTICE,
    ),
    Page(
        stem="course",
        section_key=_PRACTICE,
        icon=":material/route:",
        title_key="nav.course",
        key_prefix="cp_",
        kind=PRACTICE,
    ),
    Page(
        stem="glossary",
        section_key=_PRACTICE,
        icon=":material/menu_book:",
        title_key="nav.glossary",
        key_prefix="gl_",
        kind=PRACTICE,
    ),
    # Hidden from the menu, not protected: anyone with the address can open it (README, "For instructors").
    Page(
        stem="instructor",
        section_key=_PRACTICE,
        icon=":material/school:",
        title_key="nav.instructor",
        key_prefix="in_",
        kind=INSTRUCTOR,
    ),
)

#: The pages the sidebar lists, in its order (every page but the instructor's).
MENU_PAGES: tuple[Page, ...] = tuple(page for page in PAGES if page.in_menu)

#: The page the app opens at "/" (its url_path is "").
DEFAULT_STEM = "memory"

#: The lessons (each with a quiz), in the order of the navigation.
LESSON_STEMS: tuple[str, ...] = tuple(page.stem for page in PAGES if page.is_lesson)

#: Every page's title key, by stem (read-only: one server shares this module with every user).
TITLES: Mapping[str, str] = MappingProxyType({page.stem: page.title_key for page in PAGES})

#: Every page, by stem (read-only).
BY_STEM: Mapping[str, Page] = MappingProxyType({page.stem: page for page in PAGES})


def page_file(stem: str) -> str:
    """The script of the page `stem`, as st.Page and st.page_link want it: 'lessons/memory.py'."""
    return f"lessons/{stem}.py"


def sections() -> dict[str, list[Page]]:
    """The pages grouped by section key, sections and pages in the order of the navigation.

    The instructor's page is among them (st.navigation must know it to open /instructor); app.py hides it.
    """
    grouped: dict[str, list[Page]] = {}
    for page in PAGES:
        grouped.setdefault(page.section_key, []).append(page)
    return grouped
