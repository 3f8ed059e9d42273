"""Live charts (ui.live_chart): what the browser draws at a new slider value before the rerun is what the rerun draws.

A live chart carries, for every value of its slider, the figure attributes that change
with it. ``figure_at`` applies them as the component's JavaScript does; these tests
compare that with the figure the page builds after the slider has really moved.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import plotly
import plotly.graph_objects as go
import pytest
import streamlit.config

from charts.memory import MEMORY_LABELS, memory_vs_context_figure, memory_vs_context_patches
from charts.prefill_decode import ROOFLINE_LABELS, roofline_figure, roofline_patches
from tests.app.figures import live_chart_data, live_chart_sent, plain
from tests.app.helpers import open_page
from ui.live_chart import (
    HELD_KEY,
    Follow,
    figure_at,
    figure_json,
    figure_text,
    follow_sent,
    plotly_url,
    resolved_path,
    slider_values,
)

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


def index_of(follow: dict, value: float) -> int:
    grid = follow["values"]
    index = round((value - grid["low"]) / grid["step"])
    assert grid["low"] + index * grid["step"] == value
    return index


@pytest.mark.parametrize(("page", "key", "params", "values"), FOLLOWING)
def test_the_chart_drawn_before_the_rerun_is_the_one_the_rerun_draws(app, page, key, params, values):
    open_page(app, page, **params)
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
    open_page(app, page, **params)
    app.slider(key=key).set_value(values[0]).run()
    follow = live_chart_data(app)[0]["follow"]
    assert follow["index"] == index_of(follow, values[0])


def test_a_context_off_the_sliders_steps_draws_the_chart_without_an_index(app):
    open_page(app, "lessons/memory.py", context="5000")
    assert not app.exception
    follow = live_chart_data(app)[0]["follow"]
    assert follow["index"] is None
    assert app.slider(key="context").value == 5000


def test_a_marker_patch_is_sent_as_the_sliders_own_values(app):
    open_page(app, "lessons/memory.py")
    follow = live_chart_data(app)[0]["follow"]
    assert follow["values"] == {"low": 1024.0, "step": 1024.0, "count": 128}
    assert [patch["values"] for patch in follow["patches"]] == [None, None, None]


def test_a_model_without_a_maximum_context_gets_a_plain_chart(app):
    # The axis of the memory chart then moves with the context: no browser-side preview.
    code = "kv1~L12_h8_k2_d64~imported"  # says no max_position_embeddings
    open_page(app, "lessons/memory.py", model=code)
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


# ---------------------------------------------------------------- patches name what they change

LIVE_CHART_JS = Path(__file__).resolve().parents[2] / "ui" / "live_chart.js"
#: Runs live_chart.js's figureAt on {figure, follow, index} read from stdin; prints the figure it draws.
FIGURE_AT_IN_NODE = """
import fs from "node:fs";
const source = fs.readFileSync(process.argv[2], "utf8").replace("export default function", "function main");
const url = "data:text/javascript," + encodeURIComponent(source + "\\nexport { figureAt };");
const { figureAt } = await import(url);
const { figure, follow, index } = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(figureAt({ figure: JSON.parse(figure), data: { follow } }, index)));
"""


def named_figure() -> dict:
    return {
        "data": [{"name": "Roof", "x": [1.0]}, {"uid": "prefill", "name": "Prefill", "x": [2.0]}],
        "layout": {"shapes": [{"x0": 0.0}, {"name": "current", "x0": 1.0}], "title": {"text": "a"}},
    }


def memory_chart(model, gpu, context_tokens: float) -> go.Figure:
    labels = {key: key for key in MEMORY_LABELS}
    return memory_vs_context_figure(model=model, gpu=gpu, context_tokens=context_tokens, labels=labels)


def roofline_chart(prefill: float, decode: float, ends: tuple[float, ...]) -> go.Figure:
    labels = {key: key for key in ROOFLINE_LABELS} | {"prefill_bound": "bound", "decode_bound": "bound"}
    rates = {"peak_flop_per_s": 989e12, "bandwidth_bytes_per_s": 3.35e12, "mfu": 0.5, "mbu": 0.8}
    return roofline_figure(**rates, prefill_intensity=prefill, decode_intensity=decode, labels=labels,
                           axis_intensities=ends)  # fmt: skip


def with_extras_first(figure: go.Figure) -> go.Figure:
    """`figure` with an unnamed trace and an unnamed shape put before all the others (positions shift by one)."""
    extra = go.Figure([go.Scatter(x=[0.0], y=[0.0], mode="markers"), *figure.data], layout=figure.layout)
    extra.layout.shapes = (go.layout.Shape(type="rect", x0=0, x1=1, y0=0, y1=1), *figure.layout.shapes)
    return extra


def test_a_name_resolves_to_the_position_of_the_item_that_carries_it():
    figure = named_figure()
    assert resolved_path(figure, ("layout", "shapes", "current", "x0")) == ["layout", "shapes", 1, "x0"]
    assert resolved_path(figure, ("data", "prefill", "x")) == ["data", 1, "x"]
    assert resolved_path(figure, ("data", "Roof", "x")) == ["data", 0, "x"], "no uid: the trace's name"
    assert resolved_path(figure, ("layout", "title", "text")) == ["layout", "title", "text"]


def test_a_patch_naming_a_shape_the_figure_does_not_have_is_a_clear_error():
    with pytest.raises(ValueError, match=r"no item named 'limit' in layout/shapes \(it holds 'current'\)"):
        resolved_path(named_figure(), ("layout", "shapes", "limit", "x0"))


def test_a_patch_naming_a_trace_the_figure_does_not_have_is_a_clear_error():
    follow = Follow("k", slider_values(1, 3, 1), 1, {("data", "decode", "x"): np.array([[1.0], [2.0], [3.0]])})
    with pytest.raises(ValueError, match=r"no item named 'decode' in data \(it holds 'Roof', 'prefill'\)"):
        figure_at(named_figure(), follow.to_json(), 2)


def test_two_items_of_the_same_name_are_an_error_not_a_guess():
    figure = named_figure()
    figure["layout"]["shapes"][0]["name"] = "current"
    with pytest.raises(ValueError, match="2 items named 'current'"):
        resolved_path(figure, ("layout", "shapes", "current", "x0"))


def test_the_app_refuses_a_patch_that_finds_a_shape_by_its_position():
    with pytest.raises(ValueError, match="by position; give its name"):
        resolved_path(named_figure(), ("layout", "shapes", 1, "x0"), by_name=True)
    assert resolved_path(named_figure(), ("layout", "shapes", "current", "x0"), by_name=True)[2] == 1


def test_a_shape_and_a_trace_put_first_do_not_move_the_memory_charts_patches(models, gpus):
    model, gpu = models["llama-3.1-8b"], gpus["rtx-4090"]
    values = slider_values(1024, 131072, 1024)
    follow = Follow("context", values, 8192, memory_vs_context_patches(model, values))
    drawn = json.loads(figure_text(with_extras_first(memory_chart(model, gpu, 8192))))
    for value in (1024, 65536, 131072):
        moved = figure_at(drawn, follow.to_json(), follow.index(value))
        expected = json.loads(figure_text(with_extras_first(memory_chart(model, gpu, value))))
        assert plain(moved) == plain(expected), value
        assert moved["layout"]["shapes"][0] == drawn["layout"]["shapes"][0], "the shape put first stays"


def test_a_trace_put_first_does_not_move_the_rooflines_patches():
    prompts = slider_values(128, 1024, 128)
    prefill, decode = prompts / 4.0, np.full(len(prompts), 1.5)
    ends = (float(prefill[0]), float(prefill[-1]), 1.5)
    rates = {"peak_flop_per_s": 989e12, "bandwidth_bytes_per_s": 3.35e12, "mfu": 0.5, "mbu": 0.8}
    labels = {key: key for key in ROOFLINE_LABELS}
    patches = roofline_patches(**rates, prefill_intensities=prefill, decode_intensities=decode, labels=labels,
                               bound_words={"compute": "bound", "memory": "bound"})  # fmt: skip
    follow = Follow("pd_prompt", prompts, 128, patches)
    drawn = json.loads(figure_text(with_extras_first(roofline_chart(prefill[0], 1.5, ends))))
    moved = figure_at(drawn, follow.to_json(), follow.index(1024))
    expected = json.loads(figure_text(with_extras_first(roofline_chart(prefill[-1], 1.5, ends))))
    assert plain(moved) == plain(expected)
    assert moved["data"][0] == drawn["data"][0], "the trace put first stays"


def run_figure_at_in_node(tmp_path, figure: str, follow: dict, index: int) -> subprocess.CompletedProcess:
    script = tmp_path / "figure_at.mjs"
    script.write_text(FIGURE_AT_IN_NODE, encoding="utf-8")
    message = json.dumps({"figure": figure, "follow": follow, "index": index})
    node = shutil.which("node")
    assert node is not None
    return subprocess.run(
        [node, str(script), str(LIVE_CHART_JS)], input=message, capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run live_chart.js")
def test_the_components_javascript_draws_what_figure_at_draws(tmp_path, models, gpus):
    model, gpu = models["llama-3.1-8b"], gpus["rtx-4090"]
    values = slider_values(1024, 131072, 1024)
    follow = Follow("context", values, 8192, memory_vs_context_patches(model, values)).to_json()
    text = figure_text(with_extras_first(memory_chart(model, gpu, 8192)))
    for index in (0, 40, 127):
        drawn = run_figure_at_in_node(tmp_path, text, follow, index)
        assert drawn.returncode == 0, drawn.stderr
        assert json.loads(drawn.stdout) == figure_at(json.loads(text), follow, index)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run live_chart.js")
def test_the_components_javascript_refuses_a_name_the_figure_does_not_have(tmp_path):
    follow = Follow("k", slider_values(1, 3, 1), 1, {("layout", "shapes", "limit", "x0"): slider_values(1, 3, 1)})
    drawn = run_figure_at_in_node(tmp_path, json.dumps(named_figure()), follow.to_json(), 2)
    assert drawn.returncode != 0
    assert 'no item named "limit" in layout/shapes' in drawn.stderr


# ---------------------------------------------------------------- the follow goes whole once per content


def test_a_follow_goes_whole_once_then_as_its_id_until_it_changes(app):
    open_page(app, "lessons/prefill_decode.py")
    app.session_state[HELD_KEY] = {}  # as for a tab that holds nothing yet
    app.run()
    [first] = live_chart_sent(app)[:1]
    assert first["follow"] is not None
    app.slider(key="pd_prompt").set_value(1152).run()  # the followed slider moves: the same follow
    [moved] = live_chart_sent(app)[:1]
    assert moved["follow"] is None and moved["follow_id"] == first["follow_id"]
    assert live_chart_data(app)[0]["follow"]["index"] == index_of(live_chart_data(app)[0]["follow"], 1152)
    app.slider(key="pd_batch").set_value(64).run()  # another control: new patches, sent whole
    [changed] = live_chart_sent(app)[:1]
    assert changed["follow"] is not None and changed["follow_id"] != first["follow_id"]


def test_a_session_records_the_follow_it_sent_whole_for_each_chart():
    held: dict[str, str] = {}
    assert follow_sent(held, "memory_chart", "a1")
    assert not follow_sent(held, "memory_chart", "a1")
    assert follow_sent(held, "pd_roofline", "a1")  # another chart of the session: its own record
    assert follow_sent(held, "memory_chart", "b2")
    assert held == {"memory_chart": "b2", "pd_roofline": "a1"}
