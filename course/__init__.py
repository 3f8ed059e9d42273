"""course: what is course material rather than domain.

Seed figures and presets (``seeds``), exercises and their answers, quiz questions
and glossary terms as data (``quiz_data``, ``glossary``), the computed facts both put
in their texts (``facts``), the "careless calculator" mistakes. Pure Python
(stdlib + numpy) on top of :mod:`kvcore`; never streamlit or plotly. Every number
here is computed by kvcore.
"""
