"""What every lesson page is made of: URL-bound controls, presets, the takeaway, units, presentation mode.

Pages stay flat scripts: they call these helpers, kvcore and a chart builder.

Controls: every input is a Streamlit widget bound to the URL (``bind="query-params"``),
so a copied address restores the page. Before drawing, each helper checks the URL's
value for that key and says so when Streamlit will drop it (out of range, not a
number, not an option), and it brings a value kept in the session back inside the
widget's range (a new model can shrink a slider's maximum).

Keys: a widget key is also its URL parameter, so keys are unique across pages
(each lesson uses its own short prefix); ``tests/app/test_lessons.py`` checks that.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any, NoReturn, TypeVar

import streamlit as st

from charts import formatting
from charts.formatting import latex_quantity
from course.scenarios import SCENARIOS
from kvcore.units import GB, GiB
from ui import check_url_value, separators, t
from ui.errors import error_text
from ui.figure_cache import DrawnFigure, FigureCall, FigureStore, Uncacheable, call_key
from ui.live_chart import Follow, checked_text, live_chart_text

T = TypeVar("T")

UNITS_KEY = "units"
PRESENT_KEY = "present"
MEMORY_UNITS = ("GiB", "GB")

#: Plotly's options for every chart: no Plotly logo in the mode bar.
CHART_CONFIG = {"displaylogo": False}

#: Chart heights in pixels: normal and on a projector.
CHART_HEIGHT_PX = 440
PRESENTATION_CHART_HEIGHT_PX = 620


# ---------------------------------------------------------------- page frame


def header(title: str, intro: str) -> None:
    """The lesson's title and its short introduction (both already translated)."""
    st.title(title)
    st.markdown(intro)


def takeaway(text: str) -> None:
    """The one line a student should leave the page with."""
    st.info(f"**{t('lesson.takeaway')}** {text}", icon=":material/key:")


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
        st.plotly_chart(_drawn(figure, height_px), theme=None, key=key, config=CHART_CONFIG)
    else:
        text = _drawn_live(figure, height_px, follow)
        live_chart_text(text, key=key, follow=follow, height_px=height_px, config=CHART_CONFIG)


def _drawn(figure: Any, height_px: int) -> Any:
    """What ``st.plotly_chart`` is given: a kept dict (``DrawnFigure``), or the figure itself."""

    def build() -> dict[str, Any]:
        built = figure.build()
        built.update_layout(height=height_px)
        spec: dict[str, Any] = built.to_dict()
        return spec

    if not isinstance(figure, FigureCall):
        figure.update_layout(height=height_px)
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
    ``model`` and ``gpu`` keys may be among them.
    """

    label: str
    values: Mapping[str, Any] = field(default_factory=dict)
    help: str | None = None


def presets(choices: Sequence[Preset], *, key: str) -> None:
    """A row of buttons, one per preset; a click sets every value of that preset.

    The values are written in the button's callback, which runs before the script
    reruns, so every widget is drawn with its new value (and the browser writes the
    new values into the URL).
    """
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
        st.rerun(scope="app")  # the lesson reran alone: redraw the sidebar's pickers with the preset's model/GPU


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
            )
            for scenario in SCENARIOS[stem]
        ],
        key=key,
    )


def _apply(values: dict[str, Any]) -> None:
    for widget_key, value in values.items():
        st.session_state[widget_key] = value
    if SIDEBAR_KEYS & values.keys():
        st.session_state[_SIDEBAR_CHANGED] = True


#: Widgets of the sidebar (app.py) that a preset may set; the sidebar must then be redrawn too.
SIDEBAR_KEYS = frozenset({"model", "gpu"})
_SIDEBAR_CHANGED = "_preset_changed_sidebar"


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
    a value the user will type keeps its own form, with a point.
    """
    whole = all(isinstance(v, int) for v in (min_value, max_value, value, step))
    if format is None and not whole and min_value >= 0 and max_value <= 1:
        format = "%.2f" if names_a_setting(label) else "percent"
    check_url_value(key, low=min_value, high=max_value, whole=whole)
    _keep_in_range(key, min_value, max_value, value)
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
    format_func: Callable[[T], str] = str,
    help: str | None = None,
) -> T:
    """A segmented control (one of a few options), bound to ``?key=``; never empty."""
    check_url_value(key, options=[str(option) for option in options])
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = default
    chosen = st.segmented_control(
        label,
        list(options),
        default=default,
        format_func=format_func,
        key=key,
        bind="query-params",
        required=True,
        help=help,
        width="stretch",
        wrap=True,
    )
    return default if chosen is None else chosen


def toggle(label: str, *, key: str, value: bool = False, help: str | None = None) -> bool:
    """An on/off switch bound to ``?key=``."""
    check_url_value(key, options=["true", "false"])
    return bool(st.toggle(label, value=value, key=key, bind="query-params", help=help))


def _keep_in_range(key: str, low: float, high: float, default: float) -> None:
    """A value kept from before (another model, another page) that the new range excludes → the default."""
    kept = st.session_state.get(key)
    if kept is not None and not low <= kept <= high:
        st.session_state[key] = default


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
        st.html(_PRESENTATION_CSS)
    return on


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


_PRESENTATION_CSS = """
<style>
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
        _running_alone.active = True
        try:
            exec(code, {"__file__": file, "__name__": "__main__"})
        finally:
            _running_alone.active = False

    lesson_fragment()
    raise LessonDone


@functools.cache
def _lesson_code(file: str, modified_ns: int) -> CodeType:  # a changed file is compiled anew
    return compile(Path(file).read_text(encoding="utf-8"), file, "exec")
