"""Course paths: an ordered list of lessons, quizzes and exercise sets, shared as one link.

A path is named (``?cp_id=seed_module``) or spelled out (``?cp_path=why_cache,memory,quiz:memory``);
``?cp_step=`` says where the student is. Every step's link opens its page with the course kept
in the URL, where the course bar (ui/course.py, drawn by app.py) offers the previous and next steps.
"""

import streamlit as st

import ui
from ui import course, lesson, t

lesson.rerun_alone(__file__)

lesson.header(t("course.title"), t("course.intro"))
st.caption(
    t(
        "course.texts",
        text_000=t("course_text.000"),
        text_002=t("course_text.002"),
        text_004=t("course_text.004"),
    )
)

shared = course.course_from_url()
if shared is not None and shared.dropped:
    st.info(
        t("course.dropped", steps=", ".join(f"`{ui.shown_param(code)}`" for code in shared.dropped)),
        icon=":material/link:",
    )
path_id = course.path_picker()
st.caption(t(course.PATH_DESCRIPTIONS[path_id]))
steps = course.path_composer() if path_id == course.CUSTOM else list(course.named_course(path_id).steps)

if not steps:
    st.info(t("course.empty"), icon=":material/playlist_add:")
else:
    current = course.at_url_step(path_id, steps)
    with st.container(border=True):
        st.markdown(t("course.where", step=current.step, total=len(steps), title=current.current.title()))
        with st.container(horizontal=True, gap="medium"):
            if current.step > 1:
                course.step_link(current, current.step - 1, label=t("course.previous"), icon=":material/arrow_back:")
            course.step_link(current, current.step, label=t("course.open_step"), icon=":material/play_arrow:")
            if current.step < len(steps):
                course.step_link(current, current.step + 1, label=t("course.next"), icon=":material/arrow_forward:")

    st.subheader(t("course.steps_title", n=len(steps)))
    for number, step in enumerate(steps, start=1):
        with st.container(horizontal=True, vertical_alignment="center", gap="small", border=number == current.step):
            course.step_link(current, number, label=t("course.step_label", n=number, title=step.title()))
            done = course.step_progress(step)
            if number == current.step:
                st.caption(t("course.you_are_here"), width="content")
            if done:
                st.caption(done, width="content")

    st.subheader(t("course.share_title"))
    st.markdown(t("course.share_text"))
    st.code(course.share_link(current), language=None, wrap_lines=True)

lesson.takeaway(t("course.takeaway"))
