"""A page's numbers to download (ui/export.py): its settings and its charts' traces, as JSON and CSV (issue 15)."""

from __future__ import annotations

import base64
import csv
import io
import json

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from course import lessons
from i18n import translate
from tests.app import test_lessons
from tests.app.figures import chart_figures, plain
from tests.app.helpers import open_page
from ui import export


@pytest.fixture
def deferred(monkeypatch):
    """The deferred downloads the page offered this run, by file name: their callables, to call as a click would."""
    made = {}
    offering = MediaFileManager.add_deferred

    def recording(self, callable_, mimetype, coordinates, file_name=None, element_id=""):
        made[file_name] = callable_
        return offering(self, callable_, mimetype, coordinates, file_name=file_name, element_id=element_id)

    monkeypatch.setattr(MediaFileManager, "add_deferred", recording)
    return made


def downloaded(app, deferred, stem: str) -> tuple[dict, str]:
    """(the JSON export parsed, the CSV export's text) of the page `stem` as it was last drawn."""
    assert not app.exception, [exception.value for exception in app.exception]
    return json.loads(deferred[f"kv-cache-lab-{stem}.json"]()), deferred[f"kv-cache-lab-{stem}.csv"]()


# ---------------------------------------------------------------- on a page


def test_every_page_prefix_in_the_registry_is_the_one_the_key_rule_checks():
    assert {page.stem: page.key_prefix for page in lessons.PAGES} == test_lessons.PREFIXES
    assert lessons.BY_STEM["memory"].legacy_keys == test_lessons.MEMORY_KEYS


def test_the_takeaway_offers_the_pages_numbers_as_json_and_as_csv_without_building_them(app, deferred):
    open_page(app, "lessons/sizing.py")
    buttons = app.download_button
    assert [button.proto.label for button in buttons][-2:] == [export_label("json"), export_label("csv")]
    assert all(button.proto.deferred_file_id for button in buttons[-2:])  # built on a click, not on a rerun
    assert {"kv-cache-lab-sizing.json", "kv-cache-lab-sizing.csv"} <= set(deferred)


def export_label(kind: str) -> str:
    return translate("en", f"export.{kind}")


@pytest.mark.parametrize(("page", "stem"), [("lessons/memory.py", "memory"), ("lessons/sizing.py", "sizing")])
def test_the_export_holds_the_pages_settings_and_its_first_charts_traces(app, deferred, page, stem):
    open_page(app, page)
    key = "context" if stem == "memory" else "sz_users"
    app.slider(key=key).set_value(app.slider(key=key).value * 2).run()
    numbers, _ = downloaded(app, deferred, stem)
    assert numbers["page"] == stem and numbers["language"] == "en"
    assert numbers["settings"][key] == app.slider(key=key).value
    assert all(lessons.BY_STEM[stem].owns_key(name) for name in numbers["settings"])
    first = plain(chart_figures(app)[0])
    assert [(trace["name"], trace["x"], trace["y"]) for trace in numbers["charts"][0]["traces"]] == [
        (trace.get("name") or trace.get("uid") or "", trace.get("x", []), trace.get("y", [])) for trace in first["data"]
    ]
    assert len(numbers["charts"]) == len(chart_figures(app))  # this run's charts only, after a rerun too


def test_the_csv_parses_back_into_the_same_settings_and_points(app, deferred):
    open_page(app, "lessons/memory.py", lang="pt")
    numbers, text = downloaded(app, deferred, "memory")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {row["name"]: row["value"] for row in rows if row["part"] == "language"} == {"language": "pt"}
    shown = {row["name"]: row["value"] for row in rows if row["part"] == "setting"}
    assert set(shown) == set(numbers["settings"])
    for key, value in numbers["settings"].items():
        assert (shown[key] if isinstance(value, str) else json.loads(shown[key])) == value
    chart = numbers["charts"][0]
    trace = chart["traces"][0]
    points = [
        (float(row["x"]), float(row["y"]))
        for row in rows
        if row["chart"] == chart["key"] and row["trace"] == trace["name"]
    ]
    assert points == [(float(x), float(y)) for x, y in zip(trace["x"], trace["y"], strict=True)]


def test_a_page_without_charts_exports_its_settings(app, deferred):
    open_page(app, "lessons/quiz.py", qz_lesson="memory")
    numbers, _ = downloaded(app, deferred, "quiz")
    assert numbers["charts"] == [] and numbers["settings"]["qz_lesson"] == "memory"
    assert not any(name.startswith("qz_check_") for name in numbers["settings"])  # a button is not a setting


# ---------------------------------------------------------------- the pure parts


def test_plain_unpacks_plotlys_packed_arrays_and_drops_nan():
    packed = {"dtype": "f8", "bdata": base64.b64encode(np.arange(6, dtype="f8").tobytes()).decode(), "shape": "2, 3"}
    assert export.plain(packed) == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert export.plain({"y": np.array([1.0, np.nan])}) == {"y": [1.0, None]}


def test_settings_keep_the_pages_own_controls_and_leave_out_buttons_other_pages_and_inner_state():
    state = {
        "sz_users": 4,
        "sz_presets_0": False,
        "sz_kv_dtype": "fp8",
        "mem_layers": 32,
        "sz_waterfall": {"selection": {}},
        "pv_sizing_ab_answer": "12",
        "lang": "en",
    }
    assert export.settings(state, lessons.BY_STEM["sizing"]) == {"sz_kv_dtype": "fp8", "sz_users": 4}


def test_a_heat_maps_csv_has_one_row_per_cell():
    numbers = export.page_numbers(
        page="memory",
        title="t",
        language="en",
        settings={},
        charts=[("map", {"data": [{"type": "heatmap", "name": "h", "x": [1, 2], "y": [10], "z": [[5, 6]]}]})],
    )
    rows = [row for row in csv.DictReader(io.StringIO(export.to_csv(numbers))) if row["part"] == "point"]
    assert [(row["x"], row["y"], row["z"]) for row in rows] == [("1", "10", "5"), ("2", "10", "6")]


def test_a_live_charts_json_text_is_read_only_when_the_export_is_built():
    text = json.dumps({"layout": {"title": {"text": "T"}}, "data": [{"name": "a", "x": [1], "y": [2]}]})
    [chart] = export.page_numbers(page="p", title="", language="en", settings={}, charts=[("k", text)])["charts"]
    assert chart == {"key": "k", "title": "T", "traces": [{"name": "a", "type": "scatter", "x": [1], "y": [2]}]}
