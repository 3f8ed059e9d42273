"""KV Cache Lab: the frame. Page config, the sidebar choices every page shares, the page list.

Run from the repository root (``streamlit run app.py``) so .streamlit/config.toml is read.
"""

import contextlib

import streamlit as st

import ui
from course import lessons
from ui import course, export, lesson, t

# A projector needs the room: presentation mode (?present=true) opens with the sidebar folded.
presenting = st.query_params.get(lesson.PRESENT_KEY) == "true"
st.set_page_config(
    page_title="KV Cache Lab",
    page_icon="🧠",
    layout="wide",
    initial_sidebar_state="collapsed" if presenting else "auto",
)

# The language comes first: every other text depends on it.
ui.language_choice()
ui.model_picker()
ui.gpu_picker()
lesson.memory_units_choice()
lesson.presentation_choice()
lesson.typing_choice()  # sliders as number boxes (?typing=true): exact values, phones
lesson.page_css()
with st.sidebar:
    lesson.copy_link_button()
    reset_slot = st.container()  # filled once the page is known (below)
st.sidebar.caption(t("sidebar.about"))

# Lessons live in lessons/, not pages/: a folder named pages/ next to app.py switches on
# Streamlit's legacy page discovery for the first request after a server start, which then
# runs the page without this file (no sidebar, URL ignored, widget state lost on the next
# rerun). Keep each url_path equal to its file stem.
# course.lessons is the one list of pages: sections, icons and titles come from there. The instructor's
# page is hidden from the menu (opened by its address, /instructor), not protected.
pages = {
    t(section): [
        st.Page(
            page.file,
            title=t(page.title_key),
            icon=page.icon,
            default=page.stem == lessons.DEFAULT_STEM,
            visibility="visible" if page.in_menu else "hidden",
        )
        for page in section_pages
    ]
    for section, section_pages in lessons.sections().items()
}
# Every section open: Streamlit's fold ("View 9 more") hid the page a student was on, and its label is English only.
pg = st.navigation(pages, expanded=True)
st.set_page_config(page_title=f"{pg.title} · KV Cache Lab")  # each page its own browser tab title
ui.unknown_page_notice([page.url_path for section in pages.values() for page in section])
course.course_bar(pg.url_path)  # nothing unless the link carries a course path
export.page_opened(pg.url_path or lessons.DEFAULT_STEM)  # the page a lesson's export names (ui/export.py)
with reset_slot:
    lesson.reset_page_button(lessons.BY_STEM[pg.url_path or lessons.DEFAULT_STEM])
with contextlib.suppress(lesson.LessonDone):  # each lesson reruns alone in a fragment (lesson.rerun_alone)
    pg.run()
