"""What every lesson page is made of: URL-bound controls, presets, the takeaway, units, presentation mode.

Pages stay flat scripts: they call these helpers, kvcore and a chart builder.

Controls: every input keeps its value in the URL, so a copied address restores the page,
in either language. Sliders, select sliders and toggles are bound (``bind="query-params"``:
numbers and ``true``/``false`` are the same in every language); ``choice`` writes the
option's own id by hand (``?pr_mode=swap``), since a bound segmented control would write
its translated label. Before drawing, each helper checks the URL's value for that key and
says so when it cannot be used (out of range, not a number, not an option), and it brings
a value kept in the session back inside the widget's range (a new model can shrink a
slider's maximum).

Keys: a widget key is also its URL parameter, so keys are unique across pages
(each lesson uses its own short prefix); ``tests/app/test_lessons.py`` checks that.
"""

from __future__ import annotations

import contextlib
import decimal
import functools
import inspect
import itertools
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any, NoReturn, TypeVar
from urllib import parse

import pandas as pd
import pyarrow as pa
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.state import get_session_state

from charts import formatting
from charts.formatting import latex_quantity
from course.scenarios import SCENARIOS
from i18n import LANGUAGES, translate
from kvcore import ModelSpec, tensor_parallel_sizes
from kvcore.units import GB, GiB
from ui import check_url_value, export, gpus, language_fixed, models, separators, t
from ui.errors import error_text
from ui.figure_cache import DrawnFigure, FigureCall, FigureStore, Uncacheable, call_key
from ui.live_chart import Follow, checked_text, live_chart_text

T = TypeVar("T")

UNITS_KEY = "units"
PRESENT_KEY = "present"
TYPING_KEY = "typing"
MEMORY_UNITS = ("GiB", "GB")

#: Plotly's options for every chart: no Plotly logo in the mode bar.
CHART_CONFIG = {"displaylogo": False}

#: Chart heights in pixels: normal and on a projector.
CHART_HEIGHT_PX = 500  # a title of two or three lines (a phone's width) leaves the plot most of it
PRESENTATION_CHART_HEIGHT_PX = 420  # the first screen of a 1280 × 720 projector holds it below the title


# ---------------------------------------------------------------- page frame


def header(title: str, intro: str) -> None:
    """The lesson's title and its short introduction (both already translated).

    In presentation mode the introduction waits behind a button beside the title (the presenter
    says it), so the first screen of a projector holds the chart. Every lesson calls it first, so
    this run's charts are noted from here on (``ui.export``).
    """
    export.start()
    if not presenting():
        st.title(title)
        st.markdown(intro)
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        st.title(title, width="content")
        with st.popover(t("lesson.intro"), icon=":material/info:"):
            st.markdown(intro)


def takeaway(text: str) -> None:
    """The one line a student should leave the page with, and beside it the page's numbers to download.

    The download holds the page's settings and its charts' traces as JSON or CSV (``ui.export``),
    built only when a button is clicked.
    """
    st.info(f"**{t('lesson.takeaway')}** {text}", icon=":material/key:")
    export.download_buttons()


def formula(symbolic: str, substituted: str) -> None:
    """A formula in symbols, then with the current numbers substituted (both LaTeX)."""
    st.latex(symbolic)
    st.latex(substituted)


def figure(builder: Callable[..., Any], /, *args: Any, **kwargs: Any) -> FigureCall:
    """The figure ``builder(*args, **kwargs)`` (a ``charts`` builder), to give ``chart``: built there, once.

    ``lesson.chart(lesson.figure(timeline_figure, ttft_s=...), key=...)`` draws what
    ``timeline_figure(ttft_s=...)`` returns; ``chart`` builds it only when no session of
    the process has drawn it with the same arguments (``ui.figure_cache``).
    """
    return FigureCall(builder, args, kwargs)


def chart(figure: Any, *, key: str, follow: Follow | None = None) -> None:
    """A Plotly figure at the height of the current mode, without Plotly's logo.

    `figure` is a ``lesson.figure(builder, ...)`` (built once per set of arguments and
    kept, ``ui.figure_cache``) or a ``go.Figure``. With `follow` (a
    ``ui.live_chart.Follow``) the chart follows that slider in the browser at once,
    before the server's rerun (``ui.live_chart``).
    """
    height_px = chart_height_px()
    if follow is None:
        st.plotly_chart(export.register(key, _drawn(figure, height_px)), theme=None, key=key, config=CHART_CONFIG)
    else:
        text = export.register(key, _drawn_live(figure, height_px, follow))
        live_chart_text(text, key=key, follow=follow, height_px=height_px, config=CHART_CONFIG)


#: How much larger a chart's type is in presentation mode (a projector read from the back of a room).
PROJECTOR_FONT_SCALE = 1.4
#: Plotly's own default type size, for the parts a builder leaves unsized [px].
PLOTLY_FONT_PX = 12


def projector_fonts(layout: dict[str, Any]) -> dict[str, Any]:
    """`layout` (a figure's layout as a dict) with every font size × ``PROJECTOR_FONT_SCALE``, in place.

    The base font gets a size if it had none; titles, axes, legends and annotations keep their
    proportions. Returns `layout` (``update_layout`` takes it back).
    """

    def scale(node: Any) -> None:
        if isinstance(node, dict):
            for name, value in node.items():
                if name == "font" and isinstance(value, dict) and isinstance(value.get("size"), int | float):
                    value["size"] = round(value["size"] * PROJECTOR_FONT_SCALE, 1)
                scale(value)
        elif isinstance(node, list):
            for item in node:
                scale(item)

    base = layout.setdefault("font", {})
    base.setdefault("size", PLOTLY_FONT_PX)
    scale(layout)
    return layout


def _drawn(figure: Any, height_px: int) -> Any:
    """What ``st.plotly_chart`` is given: a kept dict (``DrawnFigure``), or the figure itself."""

    def build() -> dict[str, Any]:
        built = figure.build()
        built.update_layout(height=height_px)
        spec: dict[str, Any] = built.to_dict()
        if height_px == PRESENTATION_CHART_HEIGHT_PX:
            projector_fonts(spec["layout"])
        return spec

    if not isinstance(figure, FigureCall):
        figure.update_layout(height=height_px)
        if height_px == PRESENTATION_CHART_HEIGHT_PX:
            figure.update_layout(projector_fonts(figure.to_dict()["layout"]))
        return figure
    try:
        key = call_key(figure, "plotly_chart", height_px)
    except Uncacheable:
        return DrawnFigure(build())
    return DrawnFigure(_figures().get(key, build))


def _drawn_live(figure: Any, height_px: int, follow: Follow) -> str:
    """A live chart's figure as JSON text, its patches' places checked (``live_chart.checked_text``).

    Kept when `figure` is a ``FigureCall``: the key holds the places the patches change,
    so a kept text was checked against them.
    """

    def build() -> str:
        built = figure.build() if isinstance(figure, FigureCall) else figure
        built.update_layout(height=height_px)
        if height_px == PRESENTATION_CHART_HEIGHT_PX:
            built.update_layout(projector_fonts(built.to_dict()["layout"]))
        return checked_text(built, follow)

    if not isinstance(figure, FigureCall):
        return build()
    try:
        key = call_key(figure, "live_chart", height_px, tuple(follow.patches))
    except Uncacheable:
        return build()
    text: str = _figures().get(key, build)
    return text


@st.cache_resource(show_spinner=False)
def _figures() -> FigureStore:
    """The figures drawn by every session of this process (``ui.figure_cache``)."""
    return FigureStore()


# ---------------------------------------------------------------- presets


@dataclass(frozen=True, slots=True)
class Preset:
    """A one-click scenario: a label (translated) and the widget values it sets.

    ``values`` maps widget keys (which are also URL parameters) to values; the sidebar's
    ``model`` and ``gpu`` keys may be among them. Every other control of the page is
    named in ``keeps``: left as the learner set it, on purpose (tests/app/test_presets.py
    checks that each control of a page is one or the other). ``note`` (translated) says
    why the scenario does not fit, for one meant not to: it stands under the buttons
    while the scenario's values are in place.
    """

    label: str
    values: Mapping[str, Any] = field(default_factory=dict)
    help: str | None = None
    keeps: frozenset[str] = frozenset()
    note: str | None = None


def presets(choices: Sequence[Preset], *, key: str) -> None:
    """A row of buttons, one per preset; a click sets every value of that preset.

    The values are written in the button's callback, which runs before the script
    reruns, so every widget is drawn with its new value (and the browser writes the
    new values into the URL). Under the buttons: the note of a scenario meant not to
    fit while its values are in place, and once after a click that changed the
    sidebar's model or GPU, which ones (every other page uses them too).
    """
    for widget_key, value in st.session_state.pop(_REAPPLY, {}).items():
        st.session_state[widget_key] = value  # before the page draws its controls (see _settle_presets)
    st.caption(t("lesson.presets"))
    columns = st.columns(len(choices))
    for index, (column, preset) in enumerate(zip(columns, choices, strict=True)):
        column.button(
            preset.label,
            key=f"{key}_{index}",
            help=preset.help,
            on_click=_apply,
            args=(dict(preset.values),),
            width="stretch",
        )
    if st.session_state.pop(_SIDEBAR_CHANGED, False):
        _carry_into_next_url(st.session_state.get(_PENDING, {}))
        st.rerun(scope="app")  # the lesson reran alone: redraw the sidebar's pickers with the preset's model/GPU
    # This run's click, checked once the lesson has drawn its controls (an earlier run's, if it stopped, is dropped).
    st.session_state[_CHECK] = st.session_state.pop(_PENDING, None)
    changed: dict[str, str] = st.session_state.get(_SIDEBAR_NOTICE, {})  # dropped once shown (_settle_presets)
    if changed:
        st.info(t("lesson.sidebar_changed", changes=_sidebar_changes(changed)), icon=":material/tune:")
    for preset in choices:
        if preset.note and _in_place(preset.values):
            st.info(preset.note, icon=":material/info:")


def stop_with(error: BaseException) -> NoReturn:
    """Stop the page with "these settings do not fit together" and `error`, worded in the reader's language."""
    st.error(t("error.bad_combination", detail=error_text(error)))
    st.stop()


def scenario_buttons(stem: str, *, key: str) -> None:
    """The row of lesson `stem`'s one-click scenarios (``course.scenarios.SCENARIOS[stem]``), as ``presets``."""
    presets(
        [
            Preset(
                label=t(scenario.label_key),
                values=scenario.values,
                help=t(scenario.help_key) if scenario.help_key else None,
                keeps=scenario.keeps,
                note=t(scenario.note_key) if scenario.note_key else None,
            )
            for scenario in SCENARIOS[stem]
        ],
        key=key,
    )


def _apply(values: dict[str, Any]) -> None:
    """A preset's callback: set every value; a new model or GPU in the sidebar is redrawn and said."""
    changed = {
        sidebar_key: values[sidebar_key]
        for sidebar_key in ("model", "gpu")
        if sidebar_key in values and st.session_state.get(sidebar_key) != values[sidebar_key]
    }
    for widget_key, value in values.items():
        st.session_state[widget_key] = value
    st.session_state[_PENDING] = dict(values)
    if changed:
        st.session_state[_SIDEBAR_CHANGED] = True
        st.session_state[_SIDEBAR_NOTICE] = changed


def _carry_into_next_url(values: Mapping[str, Any]) -> None:
    """Put a preset's values for URL-bound controls into the query string the next run starts from.

    A preset that changes the model gives some controls a new range (the context slider),
    and Streamlit then draws them as new widgets, which take the URL's value: the previous
    preset's, or none, so the page or its link would not hold this preset. The whole-app
    rerun that follows starts from ``ctx.query_string`` (what ``st.rerun`` sends, and what
    Streamlit itself rewrites when the URL changes), and the sidebar's picker then sends it
    to the browser. Only widgets bound to the URL go in (never a pasted log or a marker).
    Streamlit internals: if they change, nothing is carried and ``_settle_presets`` still
    sets the values again.
    """
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    try:
        params = parse.parse_qs(ctx.query_string, keep_blank_values=True)
        with get_session_state().query_params() as bindings:
            for key, value in values.items():
                if key not in SIDEBAR_KEYS and bindings.is_bound(key):
                    params[key] = ["true" if value is True else "false" if value is False else str(value)]
        ctx.query_string = parse.urlencode(params, doseq=True)
    except (AttributeError, TypeError):  # another Streamlit: keep its query string
        return


def _settle_presets() -> None:
    """After the lesson ran: a preset value a control did not take is set again, with one more run.

    A control whose range moves with the preset's model (the context slider) is drawn as a
    new widget, and a new widget bound to the URL takes the URL's value, still the previous
    preset's. From the second run on the widget is the same one, and the session's value
    wins. Called once per lesson run (``rerun_alone``); the sidebar's pickers are left out
    (they are drawn before the lesson).
    """
    pending = st.session_state.pop(_CHECK, None) or {}
    missed = {
        key: value
        for key, value in pending.items()
        if key not in SIDEBAR_KEYS and key in st.session_state and st.session_state[key] != value
    }
    if missed:
        st.session_state[_REAPPLY] = missed
        st.rerun(scope="app")  # the sidebar's notice stays for that run
    st.session_state.pop(_SIDEBAR_NOTICE, None)  # said once


def _in_place(values: Mapping[str, Any]) -> bool:
    """True while every value of a preset is what the session holds (nothing moved since the click)."""
    return all(key in st.session_state and st.session_state[key] == value for key, value in values.items())


def _sidebar_changes(changed: Mapping[str, str]) -> str:
    """The sidebar choices a preset changed, by name: "model **Llama 3.1 70B**, GPU **H100 SXM**"."""
    names: dict[str, Mapping[str, Any]] = {"model": models(), "gpu": gpus()}
    said = {"model": "lesson.sidebar_model", "gpu": "lesson.sidebar_gpu"}
    return ", ".join(
        t(said[key], name=names[key][spec_id].name) for key, spec_id in changed.items() if spec_id in names[key]
    )


def pool_mem(num_bytes: float, *, decimals: int = 2) -> str:
    """A KV pool in the page's unit, or "does not fit" when what comes before it leaves nothing (never "−60 GiB").

    The page says why at the top (an st.error or st.warning naming what to change).
    """
    return mem(num_bytes, decimals=decimals) if num_bytes >= 0 else t("lesson.does_not_fit")


def latex_pool_mem(num_bytes: float) -> str:
    """``latex_mem`` of a KV pool; below zero the arithmetic stays, then the verdict: "−60 GiB < 0 ⇒ does not fit"."""
    shown = latex_mem(num_bytes)
    return shown if num_bytes >= 0 else rf"{shown} < 0 \Rightarrow \text{{{t('lesson.does_not_fit')}}}"


#: Widgets of the sidebar (app.py) that a preset may set; the sidebar must then be redrawn too.
SIDEBAR_KEYS = frozenset({"model", "gpu"})
_SIDEBAR_CHANGED = "_preset_changed_sidebar"
#: Session key: the sidebar choices the last preset changed (model/gpu → id), said once under the buttons.
_SIDEBAR_NOTICE = "_preset_sidebar_notice"
#: Session keys: the values of the preset just clicked, the same during the run that checks them (after the
#: lesson ran), and those to set again.
_PENDING = "_preset_pending"
_CHECK = "_preset_check"
_REAPPLY = "_preset_reapply"


# ---------------------------------------------------------------- URL-bound controls


def slider(
    label: str,
    *,
    key: str,
    min_value: int | float,
    max_value: int | float,
    value: int | float,
    step: int | float = 1,
    help: str | None = None,
    format: str | None = None,
) -> Any:
    """A slider bound to ``?key=``; an unusable URL value falls back to `value` with a notice.

    Integer sliders want whole numbers in the URL; float sliders any number in range. A float
    slider between 0 and 1 (a utilization, an MBU, a price share) shows its value as a percentage
    ("90%", the same in both languages; the URL keeps 0.9), unless `format` says otherwise or the
    label names a flag or config key ("--gpu-memory-utilization", "gpu_memory_utilization (u)"):
    a value the user will type keeps its own form, with a point. Any other slider without a
    `format` shows its numbers in the browser's own format (Streamlit's "localized": "8.192" and
    "1,5" in a Portuguese browser, "8,192" and "1.5" in an English one), which is the page's language
    unless the student chose the other one (``ui.default_language`` follows the browser too). While the
    sidebar's "Type values" is on (``typing_choice``) it is a number box instead (``typed_number``): same
    key, bounds and link.
    """
    _remember_default(key, value)
    whole = all(isinstance(v, int) for v in (min_value, max_value, value, step))
    if format is None:
        format = number_format(label, whole=whole, share=min_value >= 0 and max_value <= 1)
    check_url_value(key, low=min_value, high=max_value, whole=whole)
    _keep_in_range(key, min_value, max_value, value)
    if typing_values():
        return typed_number(
            label, key=key, bounds=(min_value, max_value), value=value, step=step, help=help, format=format
        )
    _keep_across_kinds(key, "slider")
    return st.slider(
        label,
        min_value=min_value,
        max_value=max_value,
        value=value,
        step=step,
        key=key,
        bind="query-params",
        help=help,
        format=format,
    )


#: The GPU counts a lesson offers for tensor parallelism on one server.
TP_SIZES = (1, 2, 4, 8)


def tp_sizes(model: ModelSpec) -> list[int]:
    """The counts of ``TP_SIZES`` that can split `model` (``kvcore.tensor_parallel_sizes``: tp divides the query
    heads, and divides the KV heads or is a multiple of them)."""
    return [n for n in tensor_parallel_sizes(model, max_gpus=max(TP_SIZES)) if n in TP_SIZES]


def number_format(label: str, *, whole: bool, share: bool) -> str | None:
    """How a slider shows its numbers when its lesson names no format (``slider``).

    A flag's or config key's value as the user will type it (Streamlit's default, or "%.2f" for
    a share); a share of 0–1 as a percentage; anything else as the browser writes numbers ("localized").
    """
    if names_a_setting(label):
        return None if whole else "%.2f"
    return "percent" if share and not whole else "localized"


def table(rows: Sequence[Mapping[str, Any]], **options: Any) -> None:
    """``st.dataframe`` of `rows` (one dict a row, its keys the columns, in order of appearance), without an index.

    Built as an Arrow table, which Streamlit sends as it is: through a pandas DataFrame (Streamlit's path
    for a list or a DataFrame) a table cost 1–2 ms of a rerun's CPU. A column Arrow cannot hold in one
    type (numbers beside texts) goes through pandas, as before. `options` are ``st.dataframe``'s.
    """
    columns = list(dict.fromkeys(column for row in rows for column in row))
    data: Any
    try:
        data = pa.table({column: [row.get(column) for row in rows] for column in columns})
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        data = pd.DataFrame(rows)
    st.dataframe(data, **{"hide_index": True, "width": "stretch", **options})


def row_table(rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> None:
    """``st.table`` of `rows`, each row's first cell its heading (the table's index, named ``columns[0]``).

    Rows of texts (every caller's) go as an Arrow table marked the way pandas marks an index
    (``_indexed_text_table``), which Streamlit sends as it is; through a pandas DataFrame, Streamlit's
    path for anything else, each table cost about 2 ms of a rerun's CPU (/agent_1m draws three).
    """
    if all(isinstance(cell, str) for row in rows for cell in row):
        # hide_index given: left to guess, Streamlit turns the Arrow table into a DataFrame to look at its index.
        st.table(_indexed_text_table(rows, columns), hide_index=False)
        return
    index = pd.Index([row[0] for row in rows], name=columns[0])
    st.table(pd.DataFrame([list(row[1:]) for row in rows], columns=list(columns[1:]), index=index))


def _indexed_text_table(rows: Sequence[Sequence[str]], columns: Sequence[str]) -> pa.Table:
    """The Arrow table ``pa.Table.from_pandas`` makes of these texts with the first column as the index.

    Its fields: the value columns, then the index (pandas' order), all ``large_string``; its ``pandas``
    schema metadata names the index (``index_columns``), which Streamlit's table draws as row headings.
    ``tests/app/test_lessons.py`` checks it against pandas' own conversion.
    """
    heading, *values = columns
    fields = [*values, heading]
    cells = [[row[number] for row in rows] for number in (*range(1, len(columns)), 0)]
    text = {"pandas_type": "object", "numpy_type": "str", "metadata": None}
    metadata = {
        "index_columns": [heading],
        "column_indexes": [
            {"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "str",
             "metadata": {"encoding": "UTF-8"}}
        ],
        "columns": [{"name": name, "field_name": name, **text} for name in fields],
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": pd.__version__,
    }  # fmt: skip
    schema = pa.schema([pa.field(name, pa.large_string()) for name in fields])
    table = pa.Table.from_arrays([pa.array(column, pa.large_string()) for column in cells], schema=schema)
    return table.replace_schema_metadata({b"pandas": json.dumps(metadata).encode()})


#: Each lesson function decorated by ``cache_data``, by its file, name, code and options: decorated once.
_DECORATED: dict[tuple[Any, ...], Any] = {}


def cache_data(**options: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``st.cache_data(**options)`` for a function a lesson file defines, applied once per process, not per rerun.

    A lesson's file runs anew at every rerun (``rerun_alone``), and Streamlit reads a function's source
    each time it decorates it, to key its cache (``inspect.getsource``: about 1 ms a function a rerun).
    The first decoration of each function (its file, name, compiled code and `options`) is kept and
    returned again, so the function must read only its arguments, imports and the file's constants.
    """

    def decorate(func: Callable[..., T]) -> Callable[..., T]:
        code = func.__code__
        key = (code.co_filename, code.co_qualname, code.co_code, code.co_consts, repr(sorted(options.items())))
        if key not in _DECORATED:
            _DECORATED[key] = _by_keyword(st.cache_data(**options)(func), func)
        decorated: Callable[..., T] = _DECORATED[key]
        return decorated

    return decorate


def _by_keyword(cached: Callable[..., T], func: Callable[..., Any]) -> Callable[..., T]:
    """`cached` called with every argument by its name: Streamlit keys a positional one by its parameter's name,
    which it finds with ``inspect.signature`` once per argument per call (15 arguments: about 0.5 ms a rerun on
    preemption). The names are read here, once. ``clear`` is the cache's own."""
    names = [
        parameter.name
        for parameter in itertools.takewhile(
            lambda parameter: parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.signature(func).parameters.values(),
        )
    ]  # the leading parameters an argument can fill by name; more positional arguments go as they came

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> T:
        if len(args) > len(names):
            return cached(*args, **kwargs)
        return cached(**dict(zip(names, args, strict=False)), **kwargs)

    call.clear = cached.clear  # type: ignore[attr-defined]
    return call


def typed_number(
    label: str,
    *,
    key: str,
    bounds: tuple[int | float, int | float],
    value: int | float,
    step: int | float,
    help: str | None,
    format: str | None,
) -> Any:
    """``slider``'s control while "Type values" is on: a number box with the same key, bounds, step and URL binding.

    The value is the slider's own, so the link, the presets, "reset this page" and kvcore read it
    unchanged, and a typed value need not lie on the slider's steps (20,000 tokens is 20,000). A
    share between 0 and 1 is typed as the link holds it, 0.9, not 90: Streamlit's number box
    takes only a printf format that reads back as a number (no "%" sign), and a box holding 90
    under the key of a slider holding 0.9 would put two meanings in one link; its help says how
    to type it. Out of range: the browser's box refuses it and keeps the last value, and a value
    outside the bounds that reaches the server (a link) is the default (Streamlit's number_input).
    """
    low, high = bounds
    whole = all(isinstance(v, int) for v in (low, high, value, step))
    number = int if whole else float
    share = format == "percent"
    if share:
        help = "\n\n".join(text for text in (help, t("lesson.typed_share")) if text)
    _keep_across_kinds(key, "typed", number)
    return st.number_input(
        label,
        min_value=number(low),
        max_value=number(high),
        value=number(value),
        step=number(step),
        format=typed_format(format, step, whole=whole),
        key=key,
        bind="query-params",
        help=help,
    )


def typed_format(format: str | None, step: float, *, whole: bool) -> str:
    """The number box's printf format: the slider's own when it reads back as a plain number, else from the step.

    "%d" for whole numbers; "%.2f" for a step of 0.25 or 0.05, "%.1f" for 0.1, "%.0f" for 1.0.
    A slider's "percent" or "%d %%" cannot be a number box's format (Streamlit refuses one that
    does not read back as a number).
    """
    if whole:
        return "%d"
    if format and format != "percent":
        with contextlib.suppress(TypeError, ValueError):
            float(format % 2)
            return format
    exponent = decimal.Decimal(str(step)).normalize().as_tuple().exponent
    places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
    return f"%.{places}f"


#: Session key: how each slider key was drawn last (a slider or a number box), to carry its value across.
_DRAWN_AS = "_slider_drawn_as"


def _keep_across_kinds(key: str, kind: str, number: Callable[[Any], Any] | None = None) -> None:
    """Keep `key`'s value when its control changes kind (slider ↔ number box), as "Type values" flips.

    Streamlit 1.67 gives a widget of another kind a new identity even under the same key: it would
    start again from its default (or the link's value), not from the value just set. Written back
    into the session before the new widget is drawn, the value stays (as a preset's does).
    """
    drawn: dict[str, str] = st.session_state.setdefault(_DRAWN_AS, {})
    if drawn.get(key, kind) != kind and key in st.session_state:
        kept = st.session_state[key]
        st.session_state[key] = number(kept) if number is not None and kept is not None else kept
    drawn[key] = kind


def names_a_setting(label: str) -> bool:
    """Whether a control's label starts with a flag or config key ("--mem-fraction-static", "max_num_seqs …")."""
    first = label.split(" ", 1)[0]
    return first.startswith("--") or ("_" in first and first.replace("_", "").isalnum() and first.islower())


def select_slider(
    label: str,
    *,
    key: str,
    options: Sequence[T],
    value: T,
    format_func: Callable[[T], str] = str,
    help: str | None = None,
    disabled: bool = False,
) -> T:
    """A select slider over `options`, bound to ``?key=`` (the URL holds the option's text)."""
    _remember_default(key, value)
    check_url_value(key, options=[format_func(option) for option in options])
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = value
    chosen: T = st.select_slider(
        label,
        options=list(options),
        value=value,
        format_func=format_func,
        key=key,
        bind="query-params",
        help=help,
        disabled=disabled,
    )
    return chosen


def choice(
    label: str,
    *,
    key: str,
    options: Sequence[T],
    default: T,
    labels: Mapping[T, str] | None = None,
    format_func: Callable[[T], str] = str,
    help: str | None = None,
) -> T:
    """A segmented control (one of a few options) whose link holds the option itself: ``?pr_mode=swap``; never empty.

    Each option is shown as the catalogue text of ``labels[option]`` (translated), or else
    as ``format_func(option)``. The URL holds ``str(option)``, the same in every language.
    A bound segmented control would not do: Streamlit 1.67 writes the label as shown
    (``format_func(option)``) into the URL, so a link made in Portuguese fell back to the
    default in English. So this control is not bound; ``url_value_arrived`` reads the URL
    and ``write_url_value`` writes it (left out at the default), as a bound widget would,
    and ``persist_state`` keeps the choice across pages as binding did. A link that holds
    a label, in either language (links made before), opens that option.
    """
    _remember_default(key, default)
    options = list(options)
    label_keys = labels or {}
    shown = {option: t(label_keys[option]) if option in label_keys else format_func(option) for option in options}
    arrived = url_value_arrived(key)
    if arrived is not None:
        accepted = _accepted_url_texts(options, shown, label_keys)
        ids = [str(option) for option in options]
        check_url_value(key, options=ids, aliases=[text for text in accepted if text not in ids])
        st.session_state[key] = accepted.get(arrived, default)
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = default
    chosen = st.segmented_control(
        label,
        options,
        default=default,
        # Labels worked out now, in this run's language (AppTest formats outside the run).
        format_func=shown.__getitem__,
        key=key,
        persist_state="session",
        required=True,
        help=help,
        width="stretch",
        wrap=True,
    )
    chosen = default if chosen is None else chosen
    write_url_value(key, None if chosen == default else str(chosen))
    return chosen


def _accepted_url_texts(options: Sequence[T], shown: Mapping[T, str], label_keys: Mapping[T, str]) -> dict[str, T]:
    """What a link may hold for each option: its id (``str(option)``), then its label as shown, in any language."""
    accepted: dict[str, T] = {}
    for option in options:
        accepted.setdefault(str(option), option)
    for option in options:
        accepted.setdefault(shown[option], option)
        for lang in LANGUAGES:
            if option in label_keys:
                accepted.setdefault(translate(lang, label_keys[option]), option)
    return accepted


def picker(label: str, *, key: str, default: str, **choices: Any) -> str:
    """A selectbox over ids (a model, a GPU) whose link holds the id, ``?key=<id>``: ``ui.course.url_selectbox``.

    For a list too long for ``choice``; `choices` are url_selectbox's (options, format_func, help).
    Its default is noted here, so "reset this page" puts it back.
    """
    from ui.course import url_selectbox  # ui.course imports ui.practice, which imports this module

    _remember_default(key, default)
    return str(url_selectbox(label, key=key, default=default, **choices))


def toggle(label: str, *, key: str, value: bool = False, help: str | None = None) -> bool:
    """An on/off switch bound to ``?key=``."""
    _remember_default(key, value)
    check_url_value(key, options=["true", "false"])
    return bool(st.toggle(label, value=value, key=key, bind="query-params", help=help))


def _keep_in_range(key: str, low: float, high: float, default: float) -> None:
    """A value kept from before (another model, another page) that the new range excludes → the default."""
    kept = st.session_state.get(key)
    if kept is not None and not low <= kept <= high:
        st.session_state[key] = default


# ---------------------------------------------------------------- URL values written by hand

#: Session key: each hand-written URL parameter → the text this session last read or wrote there.
_URL_TEXTS = "_url_texts"


def url_value_arrived(key: str) -> str | None:
    """``?key=``'s text when it came from outside since this session last read or wrote it, else None.

    Outside: a link just opened, the back button, a course step's link. A missing parameter
    is never news: the browser drops hand-written parameters on a page switch, and the
    session keeps the choice (``write_url_value`` puts it back).
    """
    raw = st.query_params.get(key)
    seen: dict[str, str | None] = st.session_state.setdefault(_URL_TEXTS, {})
    if raw is None or (key in seen and seen[key] == raw):
        return None
    seen[key] = raw
    return raw


def write_url_value(key: str, text: str | None) -> None:
    """Put ``?key=text`` in the address (None: leave it out, as at the default); sent only when it changes."""
    if text is None:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != text:
        st.query_params[key] = text
    st.session_state.setdefault(_URL_TEXTS, {})[key] = text


# ---------------------------------------------------------------- memory units


def memory_units_choice() -> str:
    """The sidebar's GiB/GB switch, bound to ``?units=GB`` (GiB by default).

    Memory is measured in GiB (2**30 bytes). The seeds, vendors and dashboards often
    say "GB" and mean either; this switch shows decimal GB (10**9 bytes) instead.
    """
    check_url_value(UNITS_KEY, options=list(MEMORY_UNITS))
    chosen = st.sidebar.segmented_control(
        t("sidebar.units"),
        MEMORY_UNITS,
        default="GiB",
        key=UNITS_KEY,
        bind="query-params",
        required=True,
        help=t("sidebar.units_help"),
    )
    return chosen or "GiB"


def memory_unit() -> str:
    """'GiB' or 'GB': what memory figures are shown in."""
    chosen = st.session_state.get(UNITS_KEY)
    return chosen if chosen in MEMORY_UNITS else "GiB"


def memory_unit_bytes() -> int:
    """Bytes per unit of the memory figures shown: 2**30 or 10**9 (divide a chart's bytes by this)."""
    return GiB if memory_unit() == "GiB" else GB


def mem(num_bytes: float, *, decimals: int = 2) -> str:
    """A memory size in the chosen unit with the language's decimal mark: '14,96 GiB' or '16,06 GB'."""
    return formatting.memory(num_bytes, separators(), unit=memory_unit(), decimals=decimals)


def size(num_bytes: float, *, decimals: int = 2) -> str:
    """Any size scaled to read well, in the unit family the sidebar chose: '16 KiB' or '16.38 kB', never '0 GiB'.

    ``mem`` keeps every figure in GiB (or GB) so figures compare at a glance; use this one
    for sizes far below a GiB (bytes per token, a score row, a small cache).
    """
    return formatting.size(num_bytes, separators(), unit=memory_unit(), decimals=decimals)


def latex_mem(num_bytes: float) -> str:
    """``mem`` as LaTeX, for a substituted formula."""
    return latex_quantity(mem(num_bytes))


def latex_size(num_bytes: float) -> str:
    """``size`` as LaTeX, for a substituted formula."""
    return latex_quantity(size(num_bytes))


def gib_slider_note(value_gib: float) -> None:
    """Under a memory slider that counts GiB (``Overhead (GiB)``): in GB mode, why, and its value in GB.

    Such a slider keeps GiB in both modes, on purpose: its URL value (``?mem_overhead=1.5``) then means
    the same bytes whichever unit the sidebar shows, so a link reopens the same state in either mode,
    and a preset or a reset sets one number. (A slider in the chosen unit would need a second key, or
    a URL value whose meaning changes with ``?units=``.) The label names GiB; this caption gives the
    figure in GB beside it. Nothing is shown in GiB mode.
    """
    if memory_unit() == "GB":
        st.caption(
            t("lesson.slider_in_gib", gib=formatting.memory(value_gib * GiB, separators()), shown=mem(value_gib * GiB))
        )


# ---------------------------------------------------------------- presentation mode


def presentation_choice() -> bool:
    """The sidebar's presentation-mode switch, bound to ``?present=true``; applies its style."""
    check_url_value(PRESENT_KEY, options=["true", "false"])
    on = bool(
        st.sidebar.toggle(
            t("sidebar.present"), value=False, key=PRESENT_KEY, bind="query-params", help=t("sidebar.present_help")
        )
    )
    if on:
        st.html(_PRESENTATION_CSS.replace("__CHART_FIRST__", _CHART_FIRST))
    return on


def typing_choice() -> bool:
    """The sidebar's "Type values" switch, bound to ``?typing=true``: every lesson slider becomes a number box.

    For a phone, where a slider's thumb is hard to stop on one value, and for an exact value
    (20,000 tokens). App-wide like the language: it stays on from page to page. Select sliders
    keep their form: their options are few (formats, head counts, releases) and none is typed.
    """
    check_url_value(TYPING_KEY, options=["true", "false"])
    return bool(
        st.sidebar.toggle(
            t("sidebar.typing"), value=False, key=TYPING_KEY, bind="query-params", help=t("sidebar.typing_help")
        )
    )


def typing_values() -> bool:
    """True while "Type values" is on (``typing_choice``): sliders are drawn as number boxes."""
    return bool(st.session_state.get(TYPING_KEY, False))


def presenting() -> bool:
    """True in presentation mode (larger type and charts, secondary controls folded away)."""
    return bool(st.session_state.get(PRESENT_KEY, False))


def chart_height_px() -> int:
    return PRESENTATION_CHART_HEIGHT_PX if presenting() else CHART_HEIGHT_PX


def secondary(label: str | None = None) -> Any:
    """A container for controls a projector does not need: folded in presentation mode, plain otherwise."""
    if presenting():
        return st.expander(label or t("lesson.more_controls"), expanded=False)
    return st.container()


#: The lesson's block and its controls: the columns that hold sliders and no chart of their own.
_LESSON_BLOCK = '[data-testid="stVerticalBlock"]'
_CONTROLS = (
    '[data-testid="stLayoutWrapper"]:has(> [data-testid="stHorizontalBlock"] [data-testid="stSlider"])'
    ":not(:has(.stPrintGraphic))"
)
#: The main chart where the eye goes first (a projector, a phone): before the metrics and texts of its
#: column, and, where a lesson draws it below its controls, before the controls. Only the order changes.
_CHART_FIRST = f"""
[data-testid="stColumn"] [data-testid="stVerticalBlock"] > [data-testid="stElementContainer"].stPrintGraphic {{
  order: -1;
}}
{_LESSON_BLOCK} > {_CONTROLS}, {_LESSON_BLOCK} > {_CONTROLS} ~ * {{ order: 2; }}
{_LESSON_BLOCK} > {_CONTROLS} ~ .stPrintGraphic:not({_CONTROLS} ~ .stPrintGraphic ~ .stPrintGraphic) {{ order: 1; }}
"""


#: Labels that wrap instead of ending in "…": a metric's label and a button's text (a preset's long name in
#: Portuguese) take a second line rather than hide their end.
_WRAPPED_LABELS = """
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] *,
[data-testid="stButton"] button, [data-testid="stButton"] button * {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
}
[data-testid="stButton"] button { height: auto; }
"""


def page_css() -> None:
    """Every page's layout rules (app.py): labels that wrap (``_WRAPPED_LABELS``) and, on a phone (≤ 640 px),
    the main chart right after the title, presets and predict box."""
    st.html(
        "<style>"
        + _WRAPPED_LABELS
        + "@media (max-width: 640px) {"
        + _CHART_FIRST
        + '[data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] .stPrintGraphic)'
        + " { flex-direction: column-reverse; }"
        + "}</style>"
    )


_PRESENTATION_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; }
/* The presets' caption (their buttons say enough) and the title's margins give the chart the room. */
[data-testid="stElementContainer"]:has([data-testid="stCaptionContainer"]):has(
  + [data-testid="stLayoutWrapper"] [data-testid="stButton"]) { display: none; }
[data-testid="stMain"] h1 { padding: 0; }
__CHART_FIRST__
/* Slider values and ticks keep their size: enlarged, they sat on the track. */
[data-testid="stMain"] [data-testid="stSliderThumbValue"] p,
[data-testid="stMain"] [data-testid="stSliderTickBar"] p { font-size: 1rem; }
[data-testid="stMain"] { font-size: 1.3rem; }
[data-testid="stMain"] p, [data-testid="stMain"] li { font-size: 1.3rem; line-height: 1.5; }
[data-testid="stMain"] h1 { font-size: 3rem; }
[data-testid="stMain"] h2, [data-testid="stMain"] h3 { font-size: 2rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] p { font-size: 2.8rem; line-height: 1.2; }
[data-testid="stMain"] [data-testid="stMetricLabel"] p { font-size: 1.2rem; }
[data-testid="stMain"] .katex { font-size: 1.5em; }
[data-testid="stMain"] input, [data-testid="stMain"] textarea { font-size: 1.3rem; }
</style>
"""


# ---------------------------------------------------------------- reset to defaults


#: Session key of the defaults the lesson helpers were given, by widget key (what "reset" puts back).
_DEFAULTS_KEY = "_widget_defaults"


def _remember_default(key: str, value: Any) -> None:
    """Note `key`'s default for ``reset_page_button`` (slider, select_slider, choice and toggle call it)."""
    st.session_state.setdefault(_DEFAULTS_KEY, {})[key] = value


def reset_page_button(page: Any) -> None:
    """A sidebar button that puts every control of `page` (a ``course.lessons.Page``) back to its default.

    Each of the page's widgets (the keys it owns: ``Page.owns_key``) gets the default its lesson gave it
    (``_remember_default``); bound to the address, a widget then takes its parameter out of it, as at
    the default. Keys without a known default are forgotten. The sidebar's model, GPU, language and units stay.
    """
    st.button(
        t("sidebar.reset"),
        key="reset_page",
        on_click=_reset_page,
        args=(page,),
        help=t("sidebar.reset_help"),
        icon=":material/restart_alt:",
        width="stretch",
    )


def _reset_page(page: Any) -> None:
    """Callback of ``reset_page_button``: every control of the page back to its default."""
    defaults = st.session_state.get(_DEFAULTS_KEY, {})
    for key in [key for key in st.session_state if isinstance(key, str) and page.owns_key(key)]:
        if key in defaults:
            st.session_state[key] = defaults[key]
        else:
            del st.session_state[key]


# ---------------------------------------------------------------- copy link


def copy_link_button() -> None:
    """A button that copies the page's current address (with every setting in it) to the clipboard.

    The address bar already holds every setting; the button saves a student from
    selecting it. It runs in a same-origin component frame, reads the parent's
    address, and falls back to selecting the text when the clipboard is refused.
    """
    labels = {"copy": t("sidebar.copy_link"), "copied": t("sidebar.copied"), "failed": t("sidebar.copy_failed")}
    # JSON inside <script>: escape "<" so no text can close the script element.
    script_labels = json.dumps(labels).replace("<", "\\u003c")
    st.iframe(_COPY_LINK_HTML.replace("__LABELS__", script_labels), height=44)


_COPY_LINK_HTML = """
<style>
button { font: 14px "Source Sans Pro", sans-serif; padding: 6px 12px; border-radius: 8px;
         border: 1px solid rgba(49,51,63,0.25); background: white; cursor: pointer; width: 100%; }
button:hover { border-color: #ff4b4b; color: #ff4b4b; }
</style>
<button id="copy" data-testid="copy-link"></button>
<script>
const labels = __LABELS__;
const button = document.getElementById("copy");
button.textContent = labels.copy;
button.addEventListener("click", async () => {
  const url = window.parent.location.href;
  try {
    await navigator.clipboard.writeText(url);
    button.textContent = "✓ " + labels.copied;
  } catch (error) {
    window.prompt(labels.failed, url);
  }
  setTimeout(() => { button.textContent = labels.copy; }, 2500);
});
</script>
"""


# ---------------------------------------------------------------- the lesson reruns on its own


class LessonDone(Exception):
    """Raised once a lesson has run inside its fragment: app.py catches it (nothing is left to run)."""


_running_alone = threading.local()


def rerun_alone(file: str) -> None:
    """Run the rest of this lesson file as a fragment: its own controls rerun it alone.

    Call it first in a lesson (``lesson.rerun_alone(__file__)``). A slider of the
    lesson then reruns only the lesson, not app.py's sidebar and navigation, so the
    server sends, and the browser redraws, only what can change. The file runs again
    inside an ``st.fragment`` (defined while the page runs, so it keeps the page's
    widget identities); there this call returns at once, and outside it raises
    ``LessonDone`` so the outer run stops. Presets that change the sidebar's model or
    GPU ask for a whole-app rerun (``presets``).
    """
    if getattr(_running_alone, "active", False):
        return
    code = _lesson_code(file, Path(file).stat().st_mtime_ns)

    @st.fragment
    def lesson_fragment() -> None:
        _running_alone.active, _running_alone.file = True, file
        try:
            with language_fixed():
                exec(code, {"__file__": file, "__name__": "__main__"})
                _settle_presets()
        finally:
            _running_alone.active = False

    _running_alone.whole_run, _running_alone.footer = True, []
    try:
        lesson_fragment()
    finally:
        _running_alone.whole_run = False
    parts, _running_alone.footer = _running_alone.footer, []
    if parts:
        for draw in parts:
            draw()
        st.session_state[FOOTER_KEY] = file
    else:  # the lesson stopped before its footer (st.stop on a bad input), or has none
        st.session_state.pop(FOOTER_KEY, None)
    raise LessonDone


#: The lesson file whose footer the last whole run drew below the lesson's fragment (``footer``).
FOOTER_KEY = "_lesson_footer"


def footer(draw: Callable[[], None]) -> None:
    """A last part of the lesson, drawn by `draw` below its fragment: once per whole run, not at each slider move.

    For what does not depend on the lesson's own controls (the glossary's links and the quiz; the memory
    calculator's tables of the course's figures): the lesson's reruns need not send it again. Inside
    ``rerun_alone`` the whole run draws the parts, in order, after the fragment, in the page, and the
    fragment's own reruns leave them where they are. A fragment rerun draws them itself only when the last
    whole run stopped before them (a bad input), so they are never missing; outside a lesson fragment they are
    drawn at once. Every call must come after the lesson's last element of its own.
    """
    if not getattr(_running_alone, "active", False):
        draw()
    elif getattr(_running_alone, "whole_run", False):
        _running_alone.footer.append(draw)
    elif st.session_state.get(FOOTER_KEY) != _running_alone.file:
        draw()


@functools.cache
def _lesson_code(file: str, modified_ns: int) -> CodeType:  # a changed file is compiled anew
    return compile(Path(file).read_text(encoding="utf-8"), file, "exec")
