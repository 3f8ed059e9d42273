"""What every lesson shares: its parts, its URL keys, the sidebar switches, and any model or GPU."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import streamlit as st
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

from i18n import LANGUAGES, translate
from tests.app.figures import chart_figures
from tests.app.helpers import TRICKY_PAIRS, open_page
from ui import course, lesson

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "lessons").glob("*.py"))
PAGES = [path.relative_to(ROOT).as_posix() for path in LESSONS]
SIDEBAR_KEYS = {"lang", "model", "gpu", "units", "present", "typing"}
#: The memory calculator's keys predate the prefixes; shared links already use them.
MEMORY_KEYS = {"context", "concurrency", "kv_heads", "kv_dtype", "weights_dtype", "memory_chart"}
PREFIXES = {
    "why_cache": "wc_",
    "memory": "mem_",
    "attention_variants": "av_",
    "kv_quantization": "kq_",
    "prefill_decode": "pd_",
    "decode_speed": "ds_",
    "flash_attention": "fa_",
    "sizing": "sz_",
    "agent_1m": "ag_",
    "compare": "cmp_",
    "vllm_pool": "vp_",
    "vllm_log": "vl_",
    "engines": "eg_",
    "local_llm": "lo_",
    "paged_attention": "pa_",
    "prefix_caching": "pc_",
    "preemption": "pr_",
    "import_model": "im_",
    "practice": "ex_",
    "quiz": "qz_",
    "course": "cp_",
    "glossary": "gl_",
    "instructor": "in_",
}
#: Pages that teach by asking or explaining, not by a model to move: no slider, chart or formula required.
NOT_CALCULATORS = {"quiz", "course", "glossary", "instructor"}
WIDGET_KEY = re.compile(r"""\bkey=["']([A-Za-z0-9_]+)["']""")
#: Models and GPUs that stress a page: MHA with a 1k context, MLA, sliding windows, linear attention,
#: MQA, weights bigger than any one GPU; a GPU without FP8 and an Apple GPU.
TRICKY = [
    *TRICKY_PAIRS,
    ("gpt-oss-120b", "mi300x"),
    # An imported model in the link (kvcore.model_code): no parameter count, no max_position_embeddings.
    ("kv1~L12_h8_k2_d64~imported", "h100-sxm"),
]


def widget_keys(path: Path) -> list[str]:
    return WIDGET_KEY.findall(path.read_text(encoding="utf-8"))


def test_every_lesson_has_a_prefix():
    assert {path.stem for path in LESSONS} == set(PREFIXES)


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.stem)
def test_every_widget_key_of_a_lesson_starts_with_its_prefix(path):
    allowed = MEMORY_KEYS if path.stem == "memory" else set()
    strays = [key for key in widget_keys(path) if not key.startswith(PREFIXES[path.stem]) and key not in allowed]
    assert strays == []


@pytest.mark.parametrize("path", LESSONS, ids=lambda path: path.stem)
def test_every_lesson_reruns_alone_from_its_first_statement_after_the_imports(path):
    # lesson.rerun_alone makes a lesson's own sliders rerun only the lesson (an st.fragment), not the sidebar.
    statements = ast.parse(path.read_text(encoding="utf-8")).body
    first = next(
        node
        for node in statements
        if not isinstance(node, (ast.Import, ast.ImportFrom, ast.Expr))
        or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call))
    )
    assert ast.unparse(first) == "lesson.rerun_alone(__file__)"


def test_no_lesson_defines_a_sidebar_key():
    assert [key for path in LESSONS for key in widget_keys(path) if key in SIDEBAR_KEYS] == []


@pytest.mark.parametrize("page", PAGES)
def test_every_lesson_has_a_slider_a_chart_a_formula_and_one_takeaway(app, page):
    open_page(app, page)
    assert not app.exception, [exception.value for exception in app.exception]
    if Path(page).stem not in NOT_CALCULATORS:
        assert app.slider, "a slider"
        assert chart_figures(app), "a chart"
        assert app.latex, "a formula"
    takeaway = translate("en", "lesson.takeaway")
    assert len([info for info in app.info if info.value.startswith(f"**{takeaway}**")]) == 1


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize(("model", "gpu"), TRICKY, ids=[model for model, _ in TRICKY])
def test_every_lesson_takes_any_model_and_gpu_without_an_exception(app, page, model, gpu):
    open_page(app, page, model=model, gpu=gpu)
    assert not app.exception, [exception.value for exception in app.exception]


@pytest.mark.parametrize("page", PAGES)
def test_every_lesson_runs_in_decimal_gb_and_in_presentation_mode(app, page):
    open_page(app, page, units="GB", present="true")
    assert not app.exception, [exception.value for exception in app.exception]
    assert app.toggle(key="present").value is True
    assert app.button_group(key="units").value == "GB"


@pytest.mark.parametrize("page", PAGES)
def test_every_lesson_survives_a_link_full_of_nonsense(app, page):
    junk = {key: "<b>x</b>" for path in LESSONS for key in widget_keys(path)}
    open_page(app, page, **junk)
    assert not app.exception, [exception.value for exception in app.exception]
    assert all("<b>" not in info.value for info in app.info)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_sidebar_offers_both_memory_units_and_presentation_mode(app, lang):
    app.query_params["lang"] = lang
    app.run()
    assert app.button_group(key="units").value == "GiB"
    assert app.toggle(key="present").value is False
    assert app.toggle(key="present").label == translate(lang, "sidebar.present")


def test_presentation_mode_enlarges_the_type(app):
    open_page(app, "lessons/memory.py", present="true")
    assert any("font-size" in element.proto.body for element in app.get("html"))


def test_presentation_mode_folds_the_introduction_and_the_predict_box(app):
    # Issue 15: at 1280 × 720 the first screen held only the title and the predict box.
    open_page(app, "lessons/decode_speed.py", lang="pt", present="true")
    intro = translate("pt", "decode_speed.intro")
    # Once on the page, and that once behind the button beside the title.
    assert [block.value for block in app.main.markdown].count(intro) == 1
    assert any(intro == block.value for popover in app.get("popover") for block in popover.markdown)
    [predict] = [box for box in app.expander if box.label == translate("pt", "practice.predict_title")]
    assert predict.proto.expanded is False
    css = " ".join(element.proto.body for element in app.get("html"))
    assert "order: -1" in css and ".stPrintGraphic" in css  # the chart before its column's metrics and texts


def test_presentation_mode_draws_chart_type_larger(app):
    open_page(app, "lessons/decode_speed.py", present="true")
    presented = chart_figures(app)[0]["layout"]
    other = AppTest.from_file(app._script_path, default_timeout=app.default_timeout)  # a second student, not presenting
    normal = chart_figures(open_page(other, "lessons/decode_speed.py"))[0]["layout"]
    assert presented["font"]["size"] == pytest.approx(normal.get("font", {}).get("size", 12) * 1.4, abs=0.1)
    assert presented["height"] < 720  # the chart fits a projector's first screen under the title


def test_projector_fonts_scale_every_sized_font_and_give_the_base_one_a_size():
    layout = {"title": {"text": "t", "font": {"size": 20}}, "xaxis": {"tickfont": {"size": 10}}, "annotations": [
        {"text": "a", "font": {"size": 11}}]}  # fmt: skip
    scaled = lesson.projector_fonts(layout)
    assert scaled["font"]["size"] == pytest.approx(12 * 1.4)
    assert scaled["title"]["font"]["size"] == 28 and scaled["annotations"][0]["font"]["size"] == pytest.approx(15.4)
    assert scaled["xaxis"]["tickfont"]["size"] == 10  # "tickfont" is not "font": Plotly takes it from the base


def test_every_page_puts_its_chart_first_on_a_phone(app):
    open_page(app, "lessons/memory.py")
    css = " ".join(element.proto.body for element in app.get("html"))
    assert "@media (max-width: 640px)" in css and "column-reverse" in css


def test_normal_mode_adds_no_presentation_style(app):
    open_page(app, "lessons/memory.py")
    assert not any("font-size" in element.proto.body for element in app.get("html"))


def test_a_bad_units_value_in_the_url_falls_back_to_gib_with_a_notice(app):
    app.query_params.update({"lang": "en", "units": "furlongs"})
    app.run()
    assert not app.exception
    assert app.button_group(key="units").value == "GiB"
    assert any("`units`" in info.value for info in app.info)


#: A printf format whose numbers have no decimal mark and, below 1,000, no thousands separator: the same in both.
WHOLE_PRINTF = re.compile(r"%(?:\.0f|d)(?: %%)?")


@pytest.mark.parametrize("page", PAGES)
def test_every_slider_writes_its_numbers_as_the_browser_does_unless_it_is_a_flag_or_a_share(app, page):
    """A pt slider showed "8192" and "1.50" beside prose saying "8.192" and "1,5" (issue 15).

    Every slider that is neither a flag nor a share of 0–1 shows its numbers in the browser's own format
    (Streamlit's "localized", read from ``navigator.languages``), or in a format with neither a decimal mark nor,
    below 1,000, a thousands separator.
    """
    open_page(app, page, lang="pt")
    for slider in app.slider:
        proto = slider.proto
        first = proto.label.split(" ")[0]
        if first.startswith("--") or re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+", first):
            continue
        share = proto.data_type == proto.DataType.FLOAT and proto.min >= 0 and proto.max <= 1
        whole_below_1000 = WHOLE_PRINTF.fullmatch(proto.format) is not None and proto.max < 1000
        assert proto.format == ("percent" if share else "localized") or whole_below_1000, (
            page,
            proto.label,
            proto.format,
        )


def fraction_sliders_checked(app, page: str) -> list[bool]:
    """Open `page` in pt and check every slider over a share of 0–1; returns, per such slider, whether it is a flag.

    A pt slider used to show "0.90" beside prose saying "0,9": a share reads "90%" in both languages. A slider
    labelled with a flag or config key ("--gpu-memory-utilization", "gpu_memory_utilization (u)") keeps the value
    as the user will type it, with a point.
    """
    open_page(app, page, lang="pt")
    checked = []
    for slider in app.slider:
        proto = slider.proto
        if not (proto.data_type == proto.DataType.FLOAT and proto.min >= 0 and proto.max <= 1):
            continue
        first = proto.label.split(" ")[0]
        flag = first.startswith("--") or re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+", first) is not None
        assert proto.format == ("%.2f" if flag else "percent"), (page, proto.label, proto.format)
        checked.append(flag)
    return checked


@pytest.mark.parametrize("page", PAGES)
def test_every_fraction_slider_shows_a_percentage_unless_it_is_a_flag(app, page):
    fraction_sliders_checked(app, page)


@pytest.mark.parametrize(("page", "flag"), [("lessons/vllm_pool.py", True), ("lessons/decode_speed.py", False)])
def test_the_fraction_rule_is_seen_on_a_flag_and_on_a_share(app, page, flag):
    assert flag in fraction_sliders_checked(app, page)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_reset_puts_the_pages_controls_back_and_keeps_the_sidebar(app, lang):
    open_page(app, "lessons/vllm_pool.py", lang=lang, vp_utilization="0.8", vp_pp="2", model="llama-3.1-70b")
    assert app.slider(key="vp_utilization").value == 0.8
    app.button(key="reset_page").click().run()
    assert not app.exception
    assert app.slider(key="vp_utilization").value == 0.9 and app.select_slider(key="vp_pp").value == 1
    assert not [key for key in app.query_params if key.startswith("vp_")]
    assert app.query_params.get("model") in ("llama-3.1-70b", ["llama-3.1-70b"])  # the sidebar's model stays
    assert app.button(key="reset_page").label == translate(lang, "sidebar.reset")


def test_reset_puts_a_choice_back_and_takes_it_out_of_the_link(app):
    open_page(app, "lessons/preemption.py", pr_mode="swap")
    assert app.button_group(key="pr_mode").value == "swap"
    app.button(key="reset_page").click().run()
    assert not app.exception
    assert app.button_group(key="pr_mode").value == "recompute"
    assert "pr_mode" not in app.query_params


def test_a_lessons_cached_function_is_decorated_once_per_process(app):
    """A lesson file runs at every rerun; its ``lesson.cache_data`` functions keep their first decoration."""
    open_page(app, "lessons/agent_1m.py")
    decorated = dict(lesson._DECORATED)
    app.slider(key="ag_context").set_value(app.slider(key="ag_context").value // 2).run()
    assert not app.exception
    mine = [key for key in decorated if key[0].endswith("agent_1m.py")]
    assert mine and all(lesson._DECORATED[key] is decorated[key] for key in mine)
    assert {key[0] for key in lesson._DECORATED if key[0].endswith("agent_1m.py")} == {mine[0][0]}
    assert len([key for key in lesson._DECORATED if key[0].endswith("agent_1m.py")]) == len(mine)


def _tables_script() -> None:
    from ui import lesson

    lesson.table([{"a": "x", "b": 1}, {"a": "y", "c": 2.5}])  # a key the first row lacks
    lesson.table([{"n": 1}, {"n": "many"}])  # numbers beside texts: Arrow cannot type the column
    lesson.row_table([("row 1", "1 GiB"), ("row 2", "2 GiB")], columns=["what", "size"])


def test_tables_keep_every_column_in_order_fall_back_to_pandas_and_head_rows_with_their_first_cell():
    """``lesson.table`` builds an Arrow table from the union of the rows' keys, in order of appearance; a column
    of numbers and texts still shows (through pandas); ``lesson.row_table`` makes each row's first cell its heading."""
    shown = AppTest.from_function(_tables_script, default_timeout=30).run()
    assert not shown.exception
    union, mixed = (element.value for element in shown.dataframe)
    assert list(union.columns) == ["a", "b", "c"] and union["c"].isna()[0] and union["c"][1] == 2.5
    assert list(mixed["n"].astype(str)) == ["1", "many"]
    table = shown.table[0].value
    assert (
        table.index.name == "what"
        and list(table.index) == ["row 1", "row 2"]
        and list(table["size"])
        == [
            "1 GiB",
            "2 GiB",
        ]
    )


def _row_tables_script() -> None:
    from ui import lesson

    lesson.row_table([("row 1", "1 GiB", "x"), ("row 2", "2 GiB", "y")], columns=["what", "size", "note"])
    lesson.row_table([("row 1", 1.5), ("row 2", 2)], columns=["what", "number"])  # not texts: through pandas


def test_a_row_table_of_texts_is_the_arrow_table_pandas_would_make_with_its_first_column_the_index():
    """``lesson._indexed_text_table`` skips pandas; what Streamlit sends is the same as from pandas' frame."""
    rows, columns = [("row 1", "1 GiB", "x"), ("row 2", "2 GiB", "y")], ["what", "size", "note"]
    frame = pd.DataFrame(
        [list(row[1:]) for row in rows], columns=columns[1:], index=pd.Index(["row 1", "row 2"], name="what")
    )
    expected = pa.ipc.open_stream(dataframe_util.convert_anything_to_arrow_bytes(frame)).read_all()
    ours = lesson._indexed_text_table(rows, columns)
    assert ours.equals(expected)
    assert json.loads(ours.schema.metadata[b"pandas"]) == json.loads(expected.schema.metadata[b"pandas"])

    shown = AppTest.from_function(_row_tables_script, default_timeout=30).run()
    assert not shown.exception
    texts, numbers = (element.value for element in shown.table)
    assert texts.index.name == "what" and list(texts.index) == ["row 1", "row 2"]
    assert list(texts.columns) == ["size", "note"] and list(texts["note"]) == ["x", "y"]
    assert numbers.index.name == "what" and list(numbers["number"]) == [1.5, 2.0]


def test_a_lessons_cached_function_is_called_by_name_whichever_way_the_lesson_calls_it(monkeypatch):
    """``lesson.cache_data`` hands Streamlit every argument by name (no ``inspect.signature`` per call)."""
    calls: list[tuple[int, int]] = []

    def area(width: int, height: int = 1) -> int:
        calls.append((width, height))
        return width * height

    cached = lesson._by_keyword(st.cache_data(show_spinner=False)(area), area)
    assert cached.__wrapped__ is area  # type: ignore[attr-defined]  # functools.wraps: its name and docstring
    looked_up: list[object] = []
    monkeypatch.setattr(
        "streamlit.runtime.caching.cache_utils._get_positional_arg_name", lambda *args: looked_up.append(args)
    )
    assert cached(3, 4) == cached(width=3, height=4) == cached(3, height=4) == 12
    assert calls == [(3, 4)] and not looked_up  # one entry, and Streamlit never looked up a positional name
    cached.clear()
    assert cached(3, 4) == 12 and calls == [(3, 4), (3, 4)]


def _footer_script() -> None:
    import streamlit as st

    from ui import lesson

    state = lesson._running_alone
    drawn: list[str] = []
    # A whole run: the footer waits for rerun_alone, which draws it below the fragment.
    state.active, state.whole_run, state.file, state.footer = True, True, "lessons/x.py", []
    lesson.footer(lambda: drawn.append("whole"))
    lesson.footer(lambda: drawn.append("whole, second part"))
    waiting = len(state.footer)
    # A rerun of the fragment alone, after a whole run that drew it: nothing is sent again.
    state.whole_run = False
    st.session_state[lesson.FOOTER_KEY] = "lessons/x.py"
    lesson.footer(lambda: drawn.append("fragment, drawn below"))
    # ... after a whole run that stopped before it: the fragment draws it, so it is never missing.
    st.session_state.pop(lesson.FOOTER_KEY)
    lesson.footer(lambda: drawn.append("fragment, missing below"))
    # Outside a lesson's fragment: at once.
    state.active = False
    lesson.footer(lambda: drawn.append("outside"))
    state.footer = []
    st.write(f"waiting={waiting} drawn={drawn}")


def test_a_lessons_footer_is_sent_once_per_whole_run_and_never_missing():
    shown = AppTest.from_function(_footer_script, default_timeout=30).run()
    assert not shown.exception
    assert shown.markdown[0].value == "waiting=2 drawn=['fragment, missing below', 'outside']"


def test_a_whole_run_draws_the_glossary_footer_below_the_lesson_and_remembers_it(app):
    open_page(app, "lessons/preemption.py")
    assert app.session_state[lesson.FOOTER_KEY].endswith("preemption.py")
    quiz = translate("en", "glossary.quiz_link", lesson=translate("en", course.LESSON_TITLES["preemption"]))
    page = app.main.children
    assert page[max(page)].label == quiz  # the page's last element, outside the lesson's fragment (a container)
