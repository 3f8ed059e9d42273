"""Exercise sets: numbered, seeded, the same questions for everyone who opens the same set.

Set n is ``ui.practice.exercise_set`` (course.exercises' seeded set cut to the chosen
count), so a longer set only adds questions at its end and the first ones keep their answers.
The address holds the set, the count and the topics (``?ex_set=7&ex_count=8``): an
instructor hands out "set 7" as a link. Each exercise is ui/practice.py's answer box, the
same as every lesson's "predict, then reveal" box; the chart places each answer against
the right one, and the table counts this session's answers per lesson.
"""

import streamlit as st

import ui
from charts.practice import AnswerPoint, answers_figure
from course import exercises
from ui import course, lesson, practice, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

MAX_SET, MIN_COUNT, MAX_COUNT, DEFAULT_COUNT = (
    practice.MAX_SET,
    practice.MIN_COUNT,
    practice.MAX_COUNT,
    practice.DEFAULT_COUNT,
)
SET_KEY, COUNT_KEY, TOPICS_KEY = practice.SET_KEY, practice.COUNT_KEY, practice.TOPICS_KEY
#: Progress rows: this page's sets first (the row a student looks for here), then every lesson with a predict
#: box, in the menu's order.
PROGRESS_ROWS = {"practice": "practice.progress_sets", **course.LESSON_TITLES}


lang = ui.language()
presenting = lesson.presenting()

lesson.header(t("practice.title"), t("practice.intro"))

controls = st.columns([1, 1, 2], gap="medium")
with controls[0]:
    # Streamlit itself reads "2.5" as set 2: only what it refuses (not a number, out of range) gets the notice.
    ui.check_url_value(SET_KEY, low=1, high=MAX_SET, whole=False)
    set_number = st.number_input(
        t("practice.set"),
        min_value=1,
        max_value=MAX_SET,
        value=1,
        step=1,
        key=SET_KEY,
        bind="query-params",
        help=t("practice.set_help", maximum=ui.num(f"{MAX_SET:,}")),
    )
with controls[1]:
    count = lesson.slider(
        t("practice.count"),
        key="ex_count",
        min_value=MIN_COUNT,
        max_value=MAX_COUNT,
        value=DEFAULT_COUNT,
        help=t("practice.count_help"),
    )
with controls[2]:
    # Not bound: a bound multiselect puts its translated labels in the URL, and a link must work in
    # both languages. The URL holds topic ids (?ex_topics=users_fit&ex_topics=gqa_saving), read once.
    if TOPICS_KEY not in st.session_state:
        asked = st.query_params.get_all(TOPICS_KEY)
        unknown = [topic for topic in asked if topic not in exercises.TOPICS]
        if unknown:
            allowed = t("notice.allowed_options", options=", ".join(exercises.TOPICS))
            notice = t("notice.bad_value", param=TOPICS_KEY, value=ui.shown_param(unknown[0]), allowed=allowed)
            st.info(notice, icon=":material/link:")
        st.session_state[TOPICS_KEY] = list(dict.fromkeys(topic for topic in asked if topic in exercises.TOPICS))
    topics = st.multiselect(
        t("practice.topics"),
        exercises.TOPICS,
        # Names worked out in this run's language (AppTest formats outside the run, in the browser's).
        format_func={topic: t(practice.TOPIC_KEYS[topic]) for topic in exercises.TOPICS}.__getitem__,
        key=TOPICS_KEY,
        placeholder=t("practice.topics_all"),
        help=t("practice.topics_help"),
    )
    if st.query_params.get_all(TOPICS_KEY) != topics:
        st.query_params[TOPICS_KEY] = topics

set_number = int(set_number or 1)
try:
    chosen = practice.exercise_set(set_number, count=count, topics=topics)
except ValueError as error:
    lesson.stop_with(error)

address = course.share_address("practice", {SET_KEY: str(set_number), "ex_count": str(count), TOPICS_KEY: topics})
st.markdown(t("practice.share", set=set_number, count=count))
st.code(address, language="text")
if presenting:
    st.caption(t("practice.presenting"))
    # The presenter's key (lessons/instructor.py): hidden from the menu, not protected.
    st.page_link(
        course.lesson_page("instructor"),
        label=t("instructor.key_link"),
        icon=":material/key:",
        help=t("instructor.key_link_help"),
        query_params={SET_KEY: str(set_number), "ex_count": str(count), **({TOPICS_KEY: topics} if topics else {})},
    )

# ---------------------------------------------------------------- the exercises

outcomes = []
for number, asked in enumerate(chosen, start=1):
    with st.container(border=True, key=f"ex_box_{number}"):
        st.markdown(f"#### {t('practice.exercise_heading', n=number, topic=t(practice.TOPIC_KEYS[asked.topic]))}")
        key = f"ex_{set_number}_{number}_{practice.digest(asked)}"
        outcomes.append(practice.answer_box(asked, key=key, stem="practice"))

answered = sum(outcome.answered for outcome in outcomes)
right = sum(bool(outcome.accepted) for outcome in outcomes if outcome.revealed)
st.markdown(t("practice.score", set=set_number, answered=answered, count=len(chosen), right=right))

# ---------------------------------------------------------------- the answers against the right ones


def status(outcome: practice.Outcome) -> str:
    if not outcome.answered:
        return "open"
    if not outcome.revealed:
        return "hidden"
    return "right" if outcome.accepted else "wrong"


def detail(asked: exercises.Exercise, outcome: practice.Outcome) -> str:
    """The hover's line about the answer: its ratio to the right one, or why there is none."""
    if status(outcome) == "open":
        return t("practice.chart_open_detail")
    if status(outcome) == "hidden":
        return t("practice.chart_hidden_detail")
    if outcome.ratio is None:
        return t("practice.chart_wrong_choice")
    return t("practice.chart_ratio", ratio=practice.figure(outcome.ratio))


points = [
    AnswerPoint(
        number=number,
        status=status(outcome),
        ratio=outcome.ratio if outcome.revealed else None,
        topic=t(practice.TOPIC_KEYS[asked.topic]),
        detail=detail(asked, outcome),
        tolerance=practice.tolerance_text(asked),
    )
    for number, (asked, outcome) in enumerate(zip(chosen, outcomes, strict=True), start=1)
]
lesson.chart(
    lesson.figure(
        answers_figure,
        points,
        labels={
            "title": t("practice.chart_title"),
            "subtitle": t("practice.chart_subtitle", set=set_number, answered=answered, count=len(chosen)),
            "x_title": t("practice.chart_x"),
            "y_title": t("practice.chart_y"),
            "right": t("practice.chart_right"),
            "wrong": t("practice.chart_wrong"),
            "open": t("practice.chart_open"),
            "hidden": t("practice.chart_hidden"),
            "target": t("practice.chart_target"),
            "exercise": t("practice.chart_exercise"),
        },
        separators=ui.separators(),
    ),
    key="ex_chart",
)

# ---------------------------------------------------------------- how an answer is checked

st.subheader(t("practice.formula_title"))
st.markdown(t("practice.formula_text"))
symbolic = (
    r"\left|\frac{\text{" + t("practice.formula_yours") + r"}}{\text{" + t("practice.formula_right") + r"}} - 1\right|"
    r" \le \varepsilon"
)
checked = [
    (number, asked, outcome)
    for number, (asked, outcome) in enumerate(zip(chosen, outcomes, strict=True), start=1)
    if outcome.revealed and outcome.ratio is not None and asked.dimension != "choice"
]
if checked:
    number, asked, outcome = checked[-1]
    ratio = outcome.ratio or 0.0
    off = abs(ratio - 1)
    word = t("practice.formula_inside") if outcome.accepted else t("practice.formula_outside")
    relation = r"\le" if outcome.accepted else ">"
    lesson.formula(
        symbolic,
        rf"\left|{latex_number(round(ratio, 4), lang)} - 1\right| = {latex_number(round(off, 4), lang)}"
        rf" {relation} {latex_number(asked.tolerance_rel, lang)} \;\Rightarrow\; \text{{{word}}}",
    )
    st.caption(t("practice.formula_caption", n=number))
else:
    st.latex(symbolic)
    st.caption(t("practice.formula_waiting"))

lesson.takeaway(t("practice.takeaway"))

# ---------------------------------------------------------------- this session, lesson by lesson

st.subheader(t("practice.progress_title"))
st.markdown(t("practice.progress_text"))
predictions, quizzes = practice.progress("exercise"), practice.progress("quiz")
stems = list(PROGRESS_ROWS) + sorted((set(predictions) | set(quizzes)) - set(PROGRESS_ROWS))
rows = [
    {
        t("practice.progress_lesson"): t(PROGRESS_ROWS[stem]) if stem in PROGRESS_ROWS else stem,
        t("practice.progress_exercises"): predictions.get(stem, practice.Tally(0, 0)).answered,
        t("practice.progress_exercises_right"): predictions.get(stem, practice.Tally(0, 0)).correct,
        t("practice.progress_quizzes"): quizzes.get(stem, practice.Tally(0, 0)).answered,
        t("practice.progress_quizzes_right"): quizzes.get(stem, practice.Tally(0, 0)).correct,
    }
    for stem in stems
]
# Every row on show: a scrolling table hid the sets' row below its fold.
lesson.table(rows, height="content")
