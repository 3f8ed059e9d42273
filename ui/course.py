"""Course paths: an ordered list of steps (lessons, quizzes, exercise sets) that an instructor shares as one link.

A step is written as a short code, the same in data and in URLs:

* ``memory`` — a lesson (its file stem);
* ``quiz:memory`` — that lesson's quiz;
* ``practice:7`` — the exercises page with set number 7.

A course lives in the URL: ``?cp_id=seed_module`` names one of ``PATHS``, ``?cp_path=why_cache,memory,quiz:memory``
spells out a custom one (it wins over ``cp_id``), and ``?cp_step=3`` says where the student is (1-based).
Links between steps carry those parameters (the sidebar's settings stay in the session), so the
course bar (``course_bar``, drawn by app.py on every page) can say "Step 3 of 12" and point to the
previous and next steps.

None of these parameters is a bound widget: Streamlit drops a bound widget's parameter from the URL on
pages that do not draw that widget, and a course must survive every page. They are read from and
written to ``st.query_params`` by hand.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import streamlit as st

import ui
from course import lessons
from course.paths import DEFAULT_PATH, PATHS
from ui import practice, t

#: Every lesson (each with a quiz), in the order of the navigation (its file is lessons/<stem>.py):
#: course.lessons is the one list; adding a lesson is one entry there.
LESSONS = lessons.LESSON_STEMS
#: Each lesson's title key in the navigation.
LESSON_TITLES: Mapping[str, str] = MappingProxyType({stem: lessons.TITLES[stem] for stem in LESSONS})

#: The sidebar's switches that are bound widgets (app.py draws them): see ``same_page_params``.
BOUND_SIDEBAR_KEYS = (ui.LANG_KEY, "units", "present", "typing")

ID_KEY = "cp_id"
PATH_KEY = "cp_path"
STEP_KEY = "cp_step"
COURSE_KEYS = (ID_KEY, PATH_KEY, STEP_KEY)

QUIZ_PAGE = lessons.page_file("quiz")
QUIZ_KEY = "qz_lesson"
PRACTICE_PAGE = lessons.page_file("practice")
#: The exercises page's URL parameter for its set number, and its largest set (lessons/practice.py).
PRACTICE_SET_KEY = "ex_set"
MAX_PRACTICE_SET = 10_000
CUSTOM = "custom"

#: Lessons the student opened in this session (not a widget; glossary.terms_used adds to it).
VISITED_KEY = "_cp_visited"
#: The page app.py opens at "/" (its url_path is "").
DEFAULT_PAGE_STEM = lessons.DEFAULT_STEM
#: The file of a lesson page, as st.page_link wants it: lesson_page("memory") == "lessons/memory.py".
lesson_page = lessons.page_file


# ---------------------------------------------------------------- steps


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a course: a lesson, a lesson's quiz, or a set of exercises."""

    kind: str  # "lesson", "quiz" or "practice"
    target: str  # a lesson stem, or the set number as text

    @property
    def code(self) -> str:
        """How the step is written in a URL: 'memory', 'quiz:memory', 'practice:7'."""
        return self.target if self.kind == "lesson" else f"{self.kind}:{self.target}"

    @property
    def page(self) -> str:
        if self.kind == "quiz":
            return QUIZ_PAGE
        if self.kind == "practice":
            return PRACTICE_PAGE
        return lesson_page(self.target)

    @property
    def params(self) -> dict[str, str]:
        """The URL parameters the step's page needs to show this step."""
        if self.kind == "quiz":
            return {QUIZ_KEY: self.target}
        if self.kind == "practice":
            return {PRACTICE_SET_KEY: self.target}
        return {}

    def title(self) -> str:
        if self.kind == "quiz":
            return t("course.step_quiz", lesson=t(LESSON_TITLES[self.target]))
        if self.kind == "practice":
            return t("course.step_practice", set=self.target)
        return t(LESSON_TITLES[self.target])

    @property
    def icon(self) -> str:
        return {"lesson": ":material/school:", "quiz": ":material/quiz:", "practice": ":material/edit_note:"}[self.kind]


def parse_step(code: str) -> Step | None:
    """The step a code names, or None if it names nothing this app has."""
    kind, _, target = code.strip().partition(":")
    if not target:
        return Step("lesson", kind) if kind in LESSONS else None
    if kind == "quiz" and target in LESSONS:
        return Step("quiz", target)
    if kind == "practice" and target.isdigit() and 1 <= int(target) <= MAX_PRACTICE_SET:
        return Step("practice", str(int(target)))
    return None


def parse_path(text: str) -> tuple[list[Step], list[str]]:
    """The steps of a comma-separated path, and the codes that named nothing (dropped)."""
    steps: list[Step] = []
    dropped: list[str] = []
    for code in (part.strip() for part in text.split(",")):
        if not code:
            continue
        step = parse_step(code)
        if step is None:
            dropped.append(code)
        else:
            steps.append(step)
    return steps, dropped


def path_text(steps: Sequence[Step]) -> str:
    """A path as the URL writes it: 'why_cache,memory,quiz:memory'."""
    return ",".join(step.code for step in steps)


#: Exercise sets offered when composing a path (a link may name any set up to MAX_PRACTICE_SET).
PRACTICE_SETS_OFFERED = 5


def all_steps() -> list[Step]:
    """Every step an instructor can put in a path: each lesson followed by its quiz, then exercise sets."""
    steps = [step for stem in LESSONS for step in (Step("lesson", stem), Step("quiz", stem))]
    return steps + [Step("practice", str(number)) for number in range(1, PRACTICE_SETS_OFFERED + 1)]


# ---------------------------------------------------------------- named paths

# The paths themselves (PATHS, DEFAULT_PATH) are course material: course.paths.
PATH_TITLES = {
    "seed_module": "course.path_seed_module",
    "serving_engineer": "course.path_serving_engineer",
    "first_class": "course.path_first_class",
    CUSTOM: "course.path_custom",
}
PATH_DESCRIPTIONS = {
    "seed_module": "course.path_seed_module_text",
    "serving_engineer": "course.path_serving_engineer_text",
    "first_class": "course.path_first_class_text",
    CUSTOM: "course.path_custom_text",
}


@dataclass(frozen=True, slots=True)
class Course:
    """A path and where the student is on it."""

    id: str  # a key of PATHS, or CUSTOM
    steps: tuple[Step, ...]
    step: int  # 1-based, within 1..len(steps)
    dropped: tuple[str, ...] = ()

    @property
    def current(self) -> Step:
        return self.steps[self.step - 1]

    def title(self) -> str:
        return t(PATH_TITLES[self.id])

    def params(self, step: int) -> dict[str, str]:
        """The URL parameters that keep this course at `step`."""
        where = {PATH_KEY: path_text(self.steps)} if self.id == CUSTOM else {ID_KEY: self.id}
        return {**where, STEP_KEY: str(step)}


def at_url_step(path_id: str, steps: Sequence[Step]) -> Course:
    """The path `steps` at the step the URL names (``?cp_step=``; a bad number gets a notice, then step 1)."""
    ui.check_url_value(STEP_KEY, low=1, high=len(steps), whole=True)
    return Course(path_id, tuple(steps), _step_number(st.query_params.get(STEP_KEY), len(steps)))


def named_course(path_id: str, step: int = 1) -> Course:
    steps, _ = parse_path(PATHS[path_id])
    return Course(path_id, tuple(steps), step if 1 <= step <= len(steps) else 1)


def course_from_url(params: Mapping[str, str] | None = None) -> Course | None:
    """The course the URL carries (a custom path wins over a named one), or None.

    An unknown path id gives None; unknown steps of a custom path are dropped (listed in
    ``dropped``); a missing, bad or out-of-range step number means step 1.
    """
    query = st.query_params if params is None else params
    text = query.get(PATH_KEY)
    if text is not None:
        steps, dropped = parse_path(text)
        if not steps:
            return None
        return Course(CUSTOM, tuple(steps), _step_number(query.get(STEP_KEY), len(steps)), tuple(dropped))
    path_id = query.get(ID_KEY)
    if path_id is not None and path_id in PATHS:
        return named_course(path_id, _step_number(query.get(STEP_KEY), len(parse_path(PATHS[path_id])[0])))
    return None


def _step_number(raw: str | None, count: int) -> int:
    """The 1-based step a URL value names; missing, not a whole number or out of 1..count: step 1."""
    try:
        step = int(raw) if raw is not None else 1
    except ValueError:
        return 1
    return step if 1 <= step <= count else 1


# ---------------------------------------------------------------- links that keep the settings


def carried_params(**extra: str) -> dict[str, str]:
    """The course's URL parameters of this page, plus `extra`: what a link to another page should keep.

    st.page_link clears every parameter it is not given, so a link that did not pass the
    course on would end it. The sidebar's settings need no help: the language, units and
    presentation switches are bound widgets (the browser writes them back on every page) and
    the model and GPU pickers rewrite their ids, so passing them too would repeat them.
    """
    kept = {key: st.query_params[key] for key in COURSE_KEYS if key in st.query_params}
    return {**kept, **extra}


def same_page_params(**params: str) -> dict[str, str]:
    """`params` plus the sidebar's bound switches, for a link to the page it is drawn on.

    Going to another page, the browser writes the bound switches (language, units,
    presentation) back into the URL by itself, so a link must not carry them (they would
    appear twice). Staying on the same page with other parameters, it does not: the link
    must carry them, or ``?lang=pt`` would vanish from the address.
    """
    kept = {key: st.query_params[key] for key in BOUND_SIDEBAR_KEYS if key in st.query_params}
    return {**kept, **params}


def step_link(course: Course, step: int, *, label: str, icon: str | None = None, here: str | None = None) -> None:
    """A link that opens step `step` of `course` on its page, the course kept in the URL.

    `here` is the page the link is drawn on (a file such as "lessons/quiz.py"), if known.
    """
    target = course.steps[step - 1]
    params = {**target.params, **course.params(step)}
    st.page_link(
        target.page,
        label=label,
        icon=icon or target.icon,
        query_params=same_page_params(**params) if target.page == here else params,
    )


# ---------------------------------------------------------------- a picker whose URL holds ids


def url_selectbox(
    label: str,
    *,
    key: str,
    options: Sequence[str],
    default: str,
    format_func: Callable[[str], str],
    help: str | None = None,
    on_change: Callable[[], None] | None = None,
) -> str:
    """A selectbox that shows names but keeps the option's id in ``?key=<id>``.

    A bound selectbox would put the shown (translated) name in the URL. This one reads the
    URL whenever it changes (a link opened with another id switches the choice, even later
    in the session), says so when the id is unknown (and falls back to `default`), and
    writes the choice back, leaving the parameter out when it is the default.
    """
    seen_key = f"_{key}_url"
    wanted = st.query_params.get(key)
    arrived = wanted != st.session_state.get(seen_key) or key not in st.session_state
    if arrived:
        st.session_state[seen_key] = wanted
        if wanted is not None:
            if wanted not in options:
                allowed = t("notice.allowed_options", options=", ".join(o for o in options if o))
                st.info(
                    t("notice.bad_value", param=key, value=ui.shown_param(wanted), allowed=allowed),
                    icon=":material/link:",
                )
            st.session_state[key] = wanted if wanted in options else default
    if st.session_state.get(key) not in options:
        st.session_state[key] = default
    # Names are worked out now, in this session's language: a format_func that asks for the
    # language later (as AppTest does, outside the script run) would get the browser's.
    names = {option: format_func(option) for option in options}
    chosen: str = st.selectbox(
        label, list(options), format_func=names.__getitem__, key=key, help=help, on_change=on_change
    )
    if chosen == default:
        st.query_params.pop(key, None)
    elif arrived or st.query_params.get(key) != chosen:
        # Written even when unchanged: a link to the page it is on changes the parameters the
        # script sees but not the browser's address bar, and writing sends the address again.
        st.query_params[key] = chosen
    st.session_state[seen_key] = st.query_params.get(key)
    return chosen


# ---------------------------------------------------------------- choosing and composing a path


def path_picker() -> str:
    """The course page's choice of path, synced with ``?cp_id=`` (``custom`` when the URL spells a path)."""
    if PATH_KEY in st.query_params and st.query_params.get(ID_KEY) != CUSTOM:
        st.query_params[ID_KEY] = CUSTOM  # a shared custom path: the picker says so
    chosen = url_selectbox(
        t("course.pick"),
        key=ID_KEY,
        options=[*PATHS, CUSTOM],
        default=DEFAULT_PATH,
        format_func=lambda path_id: t(PATH_TITLES[path_id]),
        on_change=_new_path,
    )
    if chosen != CUSTOM:
        st.query_params.pop(PATH_KEY, None)
        st.session_state[_LAST_NAMED_KEY] = chosen
    return chosen


#: The named path shown last: a new custom path starts as a copy of it.
_LAST_NAMED_KEY = "_cp_last_named"


def _new_path() -> None:
    """Another path: its step 1 (a step number of the old path means nothing on the new one)."""
    st.query_params.pop(STEP_KEY, None)


def path_composer() -> list[Step]:
    """A multiselect of steps, in the order they are picked, synced with ``?cp_path=``.

    When the URL spells no path yet, it starts as a copy of the named path shown before.
    """
    composer_key, seen_key = "cp_compose", "_cp_compose_url"
    wanted = st.query_params.get(PATH_KEY)
    if wanted != st.session_state.get(seen_key) or composer_key not in st.session_state:
        st.session_state[seen_key] = wanted
        start = st.session_state.get(_LAST_NAMED_KEY, DEFAULT_PATH)
        steps = parse_path(wanted)[0] if wanted is not None else list(named_course(start).steps)
        st.session_state[composer_key] = [step.code for step in steps]
    offered = [step.code for step in all_steps()]
    offered += [code for code in st.session_state[composer_key] if code not in offered]  # e.g. practice:42
    names = {code: _described(parse_step(code)) for code in offered}  # in this run's language
    chosen: list[str] = st.multiselect(
        t("course.compose"),
        offered,
        format_func=names.__getitem__,
        key=composer_key,
        help=t("course.compose_help"),
        placeholder=t("course.compose_placeholder"),
    )
    text = ",".join(chosen)
    if text:
        st.query_params[PATH_KEY] = text
    else:
        st.query_params.pop(PATH_KEY, None)
    st.session_state[seen_key] = st.query_params.get(PATH_KEY)
    return [step for step in (parse_step(code) for code in chosen) if step is not None]


def _described(step: Step | None) -> str:
    return "?" if step is None else step.title()


def share_link(course: Course) -> str:
    """The address of the course page with this path at step 1, in this page's language (``share_address``)."""
    where = {PATH_KEY: path_text(course.steps)} if course.id == CUSTOM else {ID_KEY: course.id}
    return share_address("course", where)


def share_address(url_path: str, params: Mapping[str, str | Sequence[str]]) -> str:
    """The address of page `url_path` with `params` and ``lang=`` this page's language, to hand out.

    The language is written even when it is the browser's default: the link is opened by
    other browsers (students', a projector's), and a class shown in Portuguese opens in
    Portuguese. The other values are ids (``cp_id=first_class``, ``ex_topics=gqa_saving``),
    the same in every language. The address is absolute when the browser's is known.
    """
    query = urllib.parse.urlencode({**params, ui.LANG_KEY: ui.language()}, doseq=True, safe=",:")
    page = urllib.parse.urlsplit(st.context.url or "")
    base = f"{page.scheme}://{page.netloc}{page.path.rsplit('/', 1)[0]}" if page.netloc else ""
    return f"{base}/{url_path}?{query}"


# ---------------------------------------------------------------- progress


def visited(stem: str) -> None:
    """Note that the student opened a lesson in this session (shown beside the course's steps)."""
    st.session_state.setdefault(VISITED_KEY, set()).add(stem)


def was_visited(stem: str) -> bool:
    return stem in st.session_state.get(VISITED_KEY, set())


def step_progress(step: Step) -> str:
    """What this session did on a step, in words ('' for nothing yet).

    Lessons: opened, and their predict boxes (practice.progress); quizzes: the quiz's own
    score (its latest answers); exercise sets: practice.progress of the exercises page (all
    sets together: the progress does not tell sets apart).
    """
    from ui import quiz  # ui.quiz builds on this module, so it is imported when needed

    if step.kind == "quiz":
        right, answered, total = quiz.score(step.target)
        return t("course.progress_quiz", right=right, answered=answered, total=total) if answered else ""
    parts = [t("course.progress_opened")] if step.kind == "lesson" and was_visited(step.target) else []
    tally = practice.progress("exercise").get("practice" if step.kind == "practice" else step.target)
    if tally is not None and tally.answered:
        parts.append(t("course.progress_exercises", correct=tally.correct, answered=tally.answered))
    return " · ".join(parts)


# ---------------------------------------------------------------- the course bar


def course_bar(url_path: str | None = None) -> None:
    """On every page of a course: "Step 3 of 12 · <title>", with links to the previous and next steps.

    app.py calls it before running the page, with the page's ``url_path`` (the default page,
    the memory calculator, has ""). Nothing is drawn when the URL carries no course
    (``cp_id`` or ``cp_path``, and ``cp_step``), nor on the course page itself, which shows
    the whole path.
    """
    if url_path == "course" or STEP_KEY not in st.query_params:
        return
    course = course_from_url()
    if course is None:
        return
    here = None if url_path is None else lesson_page(url_path or DEFAULT_PAGE_STEM)
    # A link to the page it is on (quiz → quiz) updates what the script sees, not the address
    # bar: writing the step sends the whole address again, so a copied link opens this step.
    st.query_params[STEP_KEY] = str(course.step)
    with st.container(border=True, key="cp_bar"):
        st.markdown(
            t(
                "course.bar",
                path=course.title(),
                step=course.step,
                total=len(course.steps),
                title=course.current.title(),
            )
        )
        with st.container(horizontal=True, gap="medium"):
            if course.step > 1:
                step_link(course, course.step - 1, label=t("course.previous"), icon=":material/arrow_back:", here=here)
            if course.step < len(course.steps):
                step_link(course, course.step + 1, label=t("course.next"), icon=":material/arrow_forward:", here=here)
            st.page_link(
                lessons.page_file("course"),
                label=t("course.all_steps"),
                icon=":material/route:",
                query_params=course.params(course.step),
            )
