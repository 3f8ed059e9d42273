"""course: what is course material rather than domain.

Seed figures and presets, exercises and their answers, quiz questions as data,
the "careless calculator" mistakes. Pure Python (stdlib + numpy) on top of
:mod:`kvcore`; never streamlit or plotly. Every number here is computed by kvcore.
"""
