"""Placeholder: being written."""

import streamlit as st

from ui import lesson, t

lesson.rerun_alone(__file__)

st.title(t("nav.practice"))
