"""Chart builders: pure functions from kvcore's numbers to Plotly figures.

They import kvcore and plotly only, never streamlit, so they can be tested directly
(AppTest cannot look inside a Plotly chart). Every text on a figure arrives already
translated, through a ``labels`` mapping.
"""
