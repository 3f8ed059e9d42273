"""Live charts (ui.live_chart): what the browser draws at a new slider value before the rerun is what the rerun draws.

A live chart carries, for every value of its slider, the figure attributes that change
with it. ``figure_at`` applies them as the component's JavaScript does; these tests
compare that with the figure the page builds after the slider has really moved.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly
import pytest
import streamlit.config

from tests.app.figures import live_chart_data, plain
from ui.live_chart import Follow, figure_at, figure_json, plotly_url, slider_values

#: (page, the slider the chart follows, extra URL parameters, values to move it to).
FOLLOWING = [
    pytest.param("lessons/memory.py", "context", {}, [9216, 65536, 131072, 1024], id="memory"),
    pytest.param("lessons/memory.py", "context", {"units": "GB", "concurrency": "3"}, [9216, 1024], id="memory-GB"),
    pytest.param("lessons/attention_variants.py", "av_context", {}, [9216, 32768, 131072], id="attention_variants"),
    pytest.param(
        "lessons/attention_variants.py",
        "av_context",
        {"lang": "pt", "units": "GB", "av_users": "5", "av_dtype": "fp8"},
        [9216, 100352],
        id="attention_variants-pt-GB",
    ),
    pytest.param(
        "lessons/attention_variants.py",
        "av_context",
        {"model": "deepseek-v3"},
        [9216, 163840],
        id="attention_variants-MLA",
    ),
    pytest.param("lessons/prefill_decode.py", "pd_prompt", {}, [1152, 128, 8192], id="prefill_decode"),
    pytest.param(
        "lessons/prefill_decode.py",
        "pd_prompt",
        {"lang": "pt", "pd_batch": "64", "pd_weights": "fp8", "pd_output": "2000"},
        [1152, 128, 32768],
        id="prefill_decode-pt-batch",
    ),
    pytest.param("lessons/decode_speed.py", "ds_context", {}, [9216, 131072], id="decode_speed"),
    pytest.param("lessons/agent_1m.py", "ag_context", {}, [1_001_000, 2_000_000, 1_000], id="agent_1m"),
]


def open_page(app, page: str, params: dict[str, str]):
    app.query_params.update({"lang": "en", **params})
    app.run()
    return app.switch_page(page).run()


def index_of(follow: dict, value: float) -> int:
    grid = follow["values"]
    index = round((value - grid["low"]) / grid["step"])
    assert grid["low"] + index * grid["step"] == value
    return index


@pytest.mark.parametrize(("page", "key", "params", "values"), FOLLOWING)
def test_the_chart_drawn_before_the_rerun_is_the_one_the_rerun_draws(app, page, key, params, values):
    open_page(app, page, params)
    assert not app.exception
    [before] = live_chart_data(app)[:1]
    assert before["follow"]["key"] == key
    for value in values:
        preview = figure_at(figure_json(before), before["follow"], index_of(before["follow"], value))
        app.slider(key=key).set_value(value).run()
        after = live_chart_data(app)[0]
        assert plain(preview) == plain(figure_json(after)), f"{key}={value}"


@pytest.mark.parametrize(("page", "key", "params", "values"), FOLLOWING[:1] + FOLLOWING[2:3])
def test_the_follow_says_where_the_slider_is_now(app, page, key, params, values):
    open_page(app, page, params)
    app.slider(key=key).set_value(values[0]).run()
    follow = live_chart_data(app)[0]["follow"]
    assert follow["index"] == index_of(follow, values[0])


def test_a_context_off_the_sliders_steps_draws_the_chart_without_an_index(app):
    open_page(app, "lessons/memory.py", {"context": "5000"})
    assert not app.exception
    follow = live_chart_data(app)[0]["follow"]
    assert follow["index"] is None
    assert app.slider(key="context").value == 5000


def test_a_marker_patch_is_sent_as_the_sliders_own_values(app):
    open_page(app, "lessons/memory.py", {})
    follow = live_chart_data(app)[0]["follow"]
    assert follow["values"] == {"low": 1024.0, "step": 1024.0, "count": 128}
    assert [patch["values"] for patch in follow["patches"]] == [None, None, None]


def test_a_model_without_a_maximum_context_gets_a_plain_chart(app):
    # The axis of the memory chart then moves with the context: no browser-side preview.
    code = "kv1~L12_h8_k2_d64~imported"  # says no max_position_embeddings
    open_page(app, "lessons/memory.py", {"model": code})
    assert not app.exception
    assert not live_chart_data(app)


# ---------------------------------------------------------------- Follow


def test_slider_values_are_the_low_end_plus_whole_steps():
    np.testing.assert_array_equal(slider_values(1024, 5120, 1024), [1024, 2048, 3072, 4096, 5120])
    np.testing.assert_array_equal(slider_values(0.0, 1.0, 0.25), [0.0, 0.25, 0.5, 0.75, 1.0])


def test_slider_values_stop_before_a_maximum_off_the_steps():
    np.testing.assert_array_equal(slider_values(128, 1000, 256), [128, 384, 640, 896])


def test_a_follow_finds_a_value_on_its_steps_and_not_between_them():
    follow = Follow("k", slider_values(1024, 8192, 1024), 2048, {})
    assert follow.index(2048) == 1
    assert follow.index(2000) is None
    assert follow.index(9216) is None


def test_a_follow_refuses_patches_of_the_wrong_length():
    with pytest.raises(ValueError, match="3 values for 8 slider positions"):
        Follow("k", slider_values(1024, 8192, 1024), 2048, {("layout", "title", "text"): ["a", "b", "c"]})


def test_figure_at_sets_each_patch_and_leaves_the_rest():
    values = slider_values(1, 3, 1)
    follow = Follow(
        "k", values, 1, {("data", 0, "x"): np.array([[1.0], [2.0], [3.0]]), ("layout", "shapes", 0, "x0"): values}
    )
    figure = {"data": [{"x": [1.0], "y": [5.0]}], "layout": {"shapes": [{"x0": 1.0, "x1": 1.0}]}}
    moved = figure_at(figure, follow.to_json(), 2)
    assert moved == {"data": [{"x": [3.0], "y": [5.0]}], "layout": {"shapes": [{"x0": 3.0, "x1": 1.0}]}}
    assert figure["data"][0]["x"] == [1.0], "the original stays as it was"


def test_plotly_js_comes_from_the_installed_plotly_package_under_the_servers_base_path():
    assert (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").is_file()
    assert plotly_url() == "/component/ui.live_chart.plotly_js/plotly.min.js"
    streamlit.config.set_option("server.baseUrlPath", "/class/")
    try:
        assert plotly_url() == "/class/component/ui.live_chart.plotly_js/plotly.min.js"
    finally:
        streamlit.config.set_option("server.baseUrlPath", "")
