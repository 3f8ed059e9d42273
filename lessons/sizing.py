"""Placeholder while the lesson is being written (replaced before this issue lands)."""

import streamlit as st

st.title("sizing")
