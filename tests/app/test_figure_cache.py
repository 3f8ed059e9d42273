"""Charts kept per set of inputs (ui.figure_cache): the same figure as before, built once, for equal inputs only."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import kvcore
from charts.prefill_decode import TIMELINE_LABELS, timeline_figure
from ui.figure_cache import (
    SPEC_HASH_FUNCS,
    DrawnFigure,
    FigureCall,
    FigureStore,
    Uncacheable,
    approximate_bytes,
    call_key,
    frozen,
    spec_hash_funcs,
)

LABELS = {key: key for key in TIMELINE_LABELS}


def timeline(ttft_s: float = 0.2, **extra: object) -> FigureCall:
    arrivals = np.linspace(0.25, 3.0, 50)
    return FigureCall(timeline_figure, (), {"arrival_s": arrivals, "ttft_s": ttft_s, "labels": LABELS, **extra})


def test_equal_inputs_give_equal_keys():
    assert call_key(timeline()) == call_key(timeline())
    assert hash(call_key(timeline())) == hash(call_key(timeline()))


def test_a_changed_input_changes_the_key():
    assert call_key(timeline(0.2)) != call_key(timeline(0.3))
    assert call_key(timeline(), 440) != call_key(timeline(), 620)
    assert call_key(timeline(separators=",.")) != call_key(timeline(separators=".,"))


def test_numbers_of_different_types_stay_apart():
    assert len({frozen(1), frozen(1.0), frozen(True), frozen(np.float32(1.0))}) == 4


def test_arrays_are_keyed_by_their_values_type_and_shape():
    values = np.arange(6, dtype=float)
    assert frozen(values) == frozen(values.copy())
    assert frozen(values) != frozen(values.astype(np.float32))
    assert frozen(values) != frozen(values.reshape(2, 3))
    changed = values.copy()
    changed[3] = 7.0
    assert frozen(values) != frozen(changed)


def test_a_model_stands_for_itself_and_differs_from_another(models):
    llama, qwen = models["llama-3.1-8b"], next(spec for key, spec in models.items() if key != "llama-3.1-8b")
    assert frozen(llama) == frozen(models["llama-3.1-8b"])
    assert frozen(llama) != frozen(qwen)


def test_a_lambda_or_an_unknown_object_is_not_cached():
    with pytest.raises(Uncacheable):
        call_key(FigureCall(lambda: go.Figure(), (), {}))
    with pytest.raises(Uncacheable):
        call_key(FigureCall(timeline_figure, (), {"labels": object()}))


def test_the_store_builds_once_and_forgets_the_oldest_beyond_its_size():
    store = FigureStore(max_figures=2)
    built = []

    def make(name):
        return lambda: built.append(name) or name

    assert store.get("a", make("a")) == "a"
    assert store.get("a", make("a again")) == "a"
    store.get("b", make("b"))
    store.get("c", make("c"))
    assert len(store) == 2
    assert store.get("a", make("a rebuilt")) == "a rebuilt"
    assert built == ["a", "b", "c", "a rebuilt"]


def test_the_store_forgets_the_oldest_beyond_its_bytes_and_keeps_one_larger_figure():
    store = FigureStore(max_figures=100, max_bytes=3_000)
    for name in "abc":
        store.get(name, lambda name=name: name * 900)  # 949 bytes each, as approximate_bytes counts a str
    assert len(store) == 3 and store.kept_bytes == 3 * 949
    store.get("d", lambda: "d" * 900)
    assert len(store) == 3 and store.kept_bytes == 3 * 949  # "a" went
    assert store.get("a", lambda: "rebuilt") == "rebuilt"
    store.get("huge", lambda: "h" * 10_000)
    assert len(store) == 1 and store.kept_bytes == approximate_bytes("h" * 10_000)


def test_approximate_bytes_is_within_a_factor_of_two_of_tracemalloc_on_a_drawn_figure():
    import gc
    import tracemalloc

    arrivals = 0.25 + 0.02 * np.arange(1024)
    call = FigureCall(timeline_figure, (), {"arrival_s": arrivals, "ttft_s": 0.25, "labels": LABELS})
    call.build().to_dict()  # the first drawing also fills Plotly's and the builder's own caches
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    spec = call.build().to_dict()
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert held / 2 <= approximate_bytes(spec) <= held * 2


def test_a_drawn_figure_is_sent_as_the_figure_it_was_built_from():
    figure = timeline().build()
    spec = figure.to_dict()
    sent = plotly.tools.return_figure_from_figure_or_data(DrawnFigure(spec), validate_figure=True)
    assert sent is spec
    assert plotly.io.to_json(sent, validate=False) == plotly.io.to_json(figure.to_dict(), validate=False)


def _two_charts_page() -> None:
    import numpy as np
    import streamlit as st

    from charts.prefill_decode import TIMELINE_LABELS, timeline_figure
    from ui import lesson

    arrivals = np.linspace(0.25, 3.0, 50)
    labels = {key: key for key in TIMELINE_LABELS}
    ttft = st.session_state.get("ttft", 0.2)
    lesson.chart(timeline_figure(arrival_s=arrivals, ttft_s=ttft, labels=labels), key="built")
    lesson.chart(lesson.figure(timeline_figure, arrival_s=arrivals, ttft_s=ttft, labels=labels), key="kept")


def specs(app: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def test_a_kept_chart_is_the_chart_drawn_from_the_figure_itself():
    app = AppTest.from_function(_two_charts_page, default_timeout=30)
    app.run()
    built, kept = specs(app)
    assert kept == built
    app.session_state["ttft"] = 0.5
    app.run()  # new inputs: a new figure, not the kept one
    built_again, kept_again = specs(app)
    assert kept_again == built_again
    assert kept_again != kept


def test_a_spec_is_keyed_by_every_field_so_an_edited_copy_with_the_same_id_gets_its_own_entry(models, gpus):
    llama = models["llama-3.1-8b"]
    edited = dataclasses.replace(llama, num_key_value_heads=1)
    assert edited.id == llama.id

    @st.cache_data(show_spinner=False, hash_funcs=spec_hash_funcs())
    def kv_heads_on(model: kvcore.ModelSpec, gpu: kvcore.GpuSpec) -> tuple[int, str]:
        return model.num_key_value_heads, gpu.id

    assert kv_heads_on(llama, gpus["h100-sxm"]) == (llama.num_key_value_heads, "h100-sxm")
    assert kv_heads_on(edited, gpus["h100-sxm"]) == (1, "h100-sxm")
    assert kv_heads_on(llama, gpus["rtx-4090"]) == (llama.num_key_value_heads, "rtx-4090")
    key = SPEC_HASH_FUNCS[kvcore.ModelSpec]
    assert key(llama) == key(kvcore.load_models()["llama-3.1-8b"])
