"""KV Cache Lab: the frame. Page config, the sidebar choices every page shares, the page list.

Run from the repository root (``streamlit run app.py``) so .streamlit/config.toml is read.
"""

import contextlib

import streamlit as st

import ui
from ui import course, lesson, t

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
with st.sidebar:
    lesson.copy_link_button()
st.sidebar.caption(t("sidebar.about"))

# Lessons live in lessons/, not pages/: a folder named pages/ next to app.py switches on
# Streamlit's legacy page discovery for the first request after a server start, which then
# runs the page without this file (no sidebar, URL ignored, widget state lost on the next
# rerun). Keep each url_path equal to its file stem.
pages = {
    t("nav.section_foundations"): [
        st.Page("lessons/why_cache.py", title=t("nav.why_cache"), icon=":material/replay:"),
        st.Page("lessons/memory.py", title=t("nav.memory"), icon=":material/calculate:", default=True),
        st.Page("lessons/attention_variants.py", title=t("nav.attention_variants"), icon=":material/hub:"),
        st.Page("lessons/kv_quantization.py", title=t("nav.kv_quantization"), icon=":material/compress:"),
        st.Page("lessons/import_model.py", title=t("nav.import_model"), icon=":material/upload_file:"),
    ],
    t("nav.section_speed"): [
        st.Page("lessons/prefill_decode.py", title=t("nav.prefill_decode"), icon=":material/timer:"),
        st.Page("lessons/decode_speed.py", title=t("nav.decode_speed"), icon=":material/speed:"),
        st.Page("lessons/flash_attention.py", title=t("nav.flash_attention"), icon=":material/bolt:"),
    ],
    t("nav.section_production"): [
        st.Page("lessons/sizing.py", title=t("nav.sizing"), icon=":material/straighten:"),
        st.Page("lessons/agent_1m.py", title=t("nav.agent_1m"), icon=":material/smart_toy:"),
    ],
    t("nav.section_serving"): [
        st.Page("lessons/vllm_pool.py", title=t("nav.vllm_pool"), icon=":material/storage:"),
        st.Page("lessons/vllm_log.py", title=t("nav.vllm_log"), icon=":material/receipt_long:"),
        st.Page("lessons/paged_attention.py", title=t("nav.paged_attention"), icon=":material/grid_view:"),
        st.Page("lessons/prefix_caching.py", title=t("nav.prefix_caching"), icon=":material/content_copy:"),
        st.Page("lessons/preemption.py", title=t("nav.preemption"), icon=":material/swap_horiz:"),
    ],
    t("nav.section_practice"): [
        st.Page("lessons/practice.py", title=t("nav.practice"), icon=":material/edit_note:"),
        st.Page("lessons/quiz.py", title=t("nav.quiz"), icon=":material/quiz:"),
        st.Page("lessons/course.py", title=t("nav.course"), icon=":material/route:"),
        st.Page("lessons/glossary.py", title=t("nav.glossary"), icon=":material/menu_book:"),
    ],
}
pg = st.navigation(pages)
ui.unknown_page_notice([page.url_path for section in pages.values() for page in section])
course.course_bar(pg.url_path)  # nothing unless the link carries a course path
with contextlib.suppress(lesson.LessonDone):  # each lesson reruns alone in a fragment (lesson.rerun_alone)
    pg.run()
