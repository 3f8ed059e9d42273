"""KV Cache Lab: the frame. Page config, the sidebar choices every page shares, the page list.

Run from the repository root (``streamlit run app.py``) so .streamlit/config.toml is read.
"""

import streamlit as st

import ui
from ui import t

st.set_page_config(page_title="KV Cache Lab", page_icon="🧠", layout="wide")

# The language comes first: every other text depends on it.
ui.language_choice()
ui.model_picker()
ui.gpu_picker()
st.sidebar.caption(t("sidebar.about"))

# Lessons live in lessons/, not pages/: a folder named pages/ next to app.py switches on
# Streamlit's legacy page discovery for the first request after a server start, which then
# runs the page without this file (no sidebar, URL ignored, widget state lost on the next
# rerun). Keep each url_path equal to its file stem.
pages = [
    st.Page("lessons/memory.py", title=t("nav.memory"), icon="🧮", default=True),
]
pg = st.navigation(pages)
pg.run()
