"""For instructors: an exercise set's answer key, and a lesson's printable handout.

Hidden from the menu (course.lessons: the instructor's page kind), not protected: anyone with
the address (/instructor) can open it, and the page says so. The practice page links here in
presentation mode ("Answer key for this set") with its set's parameters.

The key reads ``ex_set``, ``ex_count`` and ``ex_topics`` from the address as /practice does
(its defaults and limits, the topics in the catalogue's order), draws the set the same way
(``ui.practice.exercise_set``), and shows each
question with its exact answer, tolerance and worked steps, through ui/practice.py's own words.
The handout shows a lesson's title, introduction, formulas (its glossary terms' and its
catalogue's symbolic ones), takeaway, terms and quiz questions without their answers; it prints
without the sidebar and controls, and downloads as Markdown with the same content.
"""

import streamlit as st

import ui
from charts import formatting
from course import exercises, lessons
from course.glossary import LESSON_TERMS, TERMS
from course.quiz_data import QUIZZES
from i18n import catalogue
from ui import course, export, lesson, practice, t
from ui.facts import shown
from ui.glossary import facts_of

lesson.rerun_alone(__file__)

# The practice page's limits and defaults: one home, ui.practice.
MAX_SET, MIN_COUNT, MAX_COUNT, DEFAULT_COUNT = (
    practice.MAX_SET,
    practice.MIN_COUNT,
    practice.MAX_COUNT,
    practice.DEFAULT_COUNT,
)
SET_KEY, COUNT_KEY, TOPICS_KEY = practice.SET_KEY, practice.COUNT_KEY, practice.TOPICS_KEY
PARTS = ("key", "handout")
LESSON_KEY = "in_lesson"

lesson.header(t("instructor.title"), t("instructor.intro"))
st.warning(t("instructor.hidden"), icon=":material/visibility_off:")
# On paper: the page's text only (no sidebar, header, controls, buttons or notices).
st.html(
    "<style>@media print {"
    '[data-testid="stSidebar"], [data-testid="stHeader"], [data-testid="stToolbar"],'
    ' [data-testid="stDecoration"], [data-testid="stExpandSidebarButton"], [data-testid="stAlert"],'
    ' [data-testid="stDownloadButton"], [data-testid="stPageLink"], [data-testid="stButtonGroup"],'
    " .st-key-in_part, .st-key-in_lesson { display: none !important; }"
    ' [data-testid="stMain"] { margin-left: 0 !important; }'
    ' [data-testid="stMainBlockContainer"] { max-width: 100% !important; padding: 0 1rem !important; }'
    "}</style>"
)

part = lesson.choice(
    t("instructor.part"),
    key="in_part",
    options=PARTS,
    default="key",
    labels={"key": "instructor.part_key", "handout": "instructor.part_handout"},
)

# ---------------------------------------------------------------- the answer key


def url_number(key: str, *, low: int, high: int, default: int, whole: bool) -> int:
    """``?key=`` as the practice page's widget takes it, else `default` (with the same notice).

    The set's number input reads "2.5" as set 2 (not `whole`); the count's slider takes whole numbers only.
    """
    ui.check_url_value(key, low=low, high=high, whole=whole)
    try:
        number = float(st.query_params.get(key, default))
    except ValueError:
        return default
    if not low <= number <= high or (whole and not number.is_integer()):
        return default
    return int(number)


if part == "key":
    set_number = url_number(SET_KEY, low=1, high=MAX_SET, default=1, whole=False)
    count = url_number(COUNT_KEY, low=MIN_COUNT, high=MAX_COUNT, default=DEFAULT_COUNT, whole=True)
    asked_topics = st.query_params.get_all(TOPICS_KEY)
    chosen_topics = tuple(topic for topic in exercises.TOPICS if topic in asked_topics) or None
    try:
        chosen = practice.exercise_set(set_number, count=count, topics=asked_topics)
    except ValueError as error:
        lesson.stop_with(error)

    topic_names = ", ".join(t(practice.TOPIC_KEYS[topic]) for topic in chosen_topics or ())
    st.subheader(t("instructor.key_title", set=set_number))
    st.markdown(t("instructor.key_for", set=set_number, count=count, topics=topic_names or t("instructor.topics_all")))
    params = {SET_KEY: str(set_number), COUNT_KEY: str(count), TOPICS_KEY: list(chosen_topics or ())}
    st.page_link(
        lessons.page_file("practice"),
        label=t("instructor.open_practice"),
        icon=":material/edit_note:",
        query_params={key: value for key, value in params.items() if value},
    )
    st.caption(t("instructor.key_change"))

    rows = [
        {
            t("instructor.col_number"): number,
            t("instructor.col_topic"): t(practice.TOPIC_KEYS[asked.topic]),
            t("instructor.col_answer"): practice.answer_text(asked),
            # Every digit kvcore gives, in the page's marks; a choice has no number ("—").
            t("instructor.col_exact"): "—"
            if asked.dimension == "choice"
            else formatting.plain(asked.answer_value, ui.separators()),
            t("instructor.col_tolerance"): practice.tolerance_text(asked),
        }
        for number, asked in enumerate(chosen, start=1)
    ]
    lesson.table(rows, height="content")

    for number, asked in enumerate(chosen, start=1):
        with st.container(border=True, key=f"in_answer_{number}"):
            st.markdown(f"#### {t('practice.exercise_heading', n=number, topic=t(practice.TOPIC_KEYS[asked.topic]))}")
            model = ui.models().get(asked.inputs["model"])
            gpu_id = asked.inputs.get("gpu")
            gpu = ui.gpus().get(gpu_id) if gpu_id else None
            st.markdown(practice.question(asked, model=model, gpu=gpu))
            data = practice.data_line(asked, model=model, gpu=gpu)
            if data:
                st.caption(data)
            st.caption(practice.tolerance_text(asked))
            practice.worked_steps(asked)

# ---------------------------------------------------------------- a lesson's handout

else:
    stem = course.url_selectbox(
        t("instructor.handout_pick"),
        key=LESSON_KEY,
        options=course.LESSONS,
        default=course.LESSONS[0],
        format_func={stem: t(course.LESSON_TITLES[stem]) for stem in course.LESSONS}.__getitem__,
    )
    model, gpu = ui.current_model(), ui.current_gpu()
    # The three introductions that name the sidebar's model and GPU get them (the lesson fills them the same way).
    intro = t(f"{stem}.intro", model=model.name, gpu=gpu.name, heads=model.num_attention_heads)
    own = catalogue(ui.language())
    formulas = [
        (t(TERMS[term].name), TERMS[term].formula or "") for term in LESSON_TERMS.get(stem, ()) if TERMS[term].formula
    ]
    formula_title = t(f"{stem}.formula_title") if f"{stem}.formula_title" in own else t(f"{stem}.title")
    formulas += [
        (formula_title, t(key)) for key in own if key.startswith(f"{stem}.formula") and key.endswith("symbolic")
    ]
    terms = [
        (t(TERMS[term].name), t(TERMS[term].definition, **facts_of(TERMS[term]))) for term in LESSON_TERMS.get(stem, ())
    ]
    questions = []
    for question in QUIZZES.get(stem, ()):
        facts = shown(question.facts)
        questions.append((t(question.text, **facts), tuple(t(option, **facts) for option in question.options)))
    handout = export.Handout(
        title=t(f"{stem}.title"),
        intro=intro,
        formulas=tuple(formulas),
        takeaway=t(f"{stem}.takeaway"),
        terms=tuple(terms),
        questions=tuple(questions),
    )
    headings = {
        "formulas": t("instructor.handout_formulas"),
        "takeaway": t("instructor.handout_takeaway"),
        "terms": t("instructor.handout_terms"),
        "quiz": t("instructor.handout_quiz"),
    }
    markdown = export.handout_markdown(handout, headings)
    st.caption(t("instructor.handout_print"))
    st.download_button(
        t("instructor.handout_download"),
        data=markdown,
        file_name=f"kv-cache-lab-{stem}-{ui.language()}.md",
        mime="text/markdown",
        on_click="ignore",
        icon=":material/download:",
    )
    with st.container(border=True, key="in_handout"):  # the page shows what the download holds
        for kind, text in export.handout_blocks(handout, headings):
            if kind == "latex":
                st.latex(text)
            else:
                st.markdown(text)

lesson.takeaway(t("instructor.takeaway"))
