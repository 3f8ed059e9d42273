"""Chart builders: pure functions from kvcore's numbers to Plotly figures.

They import kvcore and plotly only, never streamlit, so they can be tested directly
(AppTest cannot look inside a Plotly chart). Every text on a figure arrives already
translated, through a ``labels`` mapping. A builder draws on ``charts.draw.figure()``: a
``go.Figure`` when called directly (the tests), the same figure as a plain dict, unchecked
and ten times cheaper, when the app calls it through ``charts.draw.plain_figure``.
"""
