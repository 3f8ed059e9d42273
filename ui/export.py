"""A page's numbers to take away (its settings and every chart's traces, as JSON and CSV) and a lesson's handout.

Every lesson ends with ``lesson.takeaway``, and beside it ``download_buttons`` offers what the
page shows as numbers: the page, the language, the page's settings (the values of its widgets:
the session's keys that belong to the page, ``course.lessons.Page.owns_key``) and, for every chart
``lesson.chart`` drew in this run, its title and each trace's name, x and y (z for a heat map).

The registry of charts is the run's own: ``start`` (in ``lesson.header``, which every lesson
calls first, also when it reruns alone as a fragment) gives the run a new list, ``register``
(in ``lesson.chart``) adds each figure as it is drawn, and the buttons' data keeps that list,
so a chart drawn after the takeaway is in it too. The buttons' data is deferred
(``st.download_button(data=<callable>)``): Streamlit calls it only when the button is
clicked, in another thread, so a rerun builds nothing. The callable therefore holds
everything it needs (no ``st`` call inside); a live chart's figure is JSON text, parsed only
there.

The functions that build an export (``plain``, ``traces``, ``page_numbers``, ``to_json``,
``to_csv``, ``settings``) and a handout (``handout_markdown``) are pure: no Streamlit.

CSV layout (one table, long form): ``part,name,value,chart,trace,x,y,z``. ``part`` is ``page``,
``title``, ``language`` or ``setting`` (``name`` and ``value`` filled: a setting's value as
JSON unless it is text), or ``point`` (``chart`` is the chart's key, ``trace`` its name, and
``x``, ``y`` and, for a heat map, ``z``).
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

import numpy as np
import streamlit as st

import ui
from course import lessons
from ui import t

#: Session keys: the page app.py opened (its stem), and the charts ``lesson.chart`` drew in this run.
PAGE_KEY = "_export_page"
CHARTS_KEY = "_export_charts"

#: Keys of this app's buttons (a preset's, an answer box's Check and Show, a quiz's): a click, not a setting.
BUTTON_KEY = re.compile(r"_presets_\d+$|_check$|_show$|^qz_check_|^qz_reveal_|_start_again$")

CSV_COLUMNS = ("part", "name", "value", "chart", "trace", "x", "y", "z")

#: A setting's value as the export keeps it: text, a number, a switch, or a list of those (a multiselect).
Scalar = str | int | float | bool | None


# ---------------------------------------------------------------- in the page (Streamlit)


def page_opened(stem: str) -> None:
    """Note the page app.py is about to run (its stem): the export names it and reads its settings."""
    st.session_state[PAGE_KEY] = stem


def start() -> None:
    """A new run of a lesson: its own, empty list of charts (``lesson.header`` calls this)."""
    st.session_state[CHARTS_KEY] = []


def register(key: str, drawn: Any) -> Any:
    """Note a chart of this run (its key and what was drawn: a figure, a kept dict or a live chart's JSON text).

    Returns `drawn`, so ``lesson.chart`` registers a figure where it draws it.
    """
    st.session_state.setdefault(CHARTS_KEY, []).append((key, drawn))
    return drawn


def download_buttons() -> None:
    """The "JSON" and "CSV" buttons of the page's numbers, side by side (``lesson.takeaway`` draws them).

    What the files hold is read now (the page, the language, the settings) or kept (this run's
    charts, a list that later charts of the run join) and built only on a click.
    """
    stem = str(st.session_state.get(PAGE_KEY, lessons.DEFAULT_STEM))
    page = lessons.BY_STEM.get(stem)
    title = t(page.title_key) if page is not None else stem
    language = ui.language()
    shown = settings(st.session_state.to_dict(), page) if page is not None else {}
    charts: list[tuple[str, Any]] = st.session_state.setdefault(CHARTS_KEY, [])

    def numbers() -> dict[str, Any]:
        return page_numbers(page=stem, title=title, language=language, settings=shown, charts=charts)

    name = f"kv-cache-lab-{stem}"
    with st.container(horizontal=True, gap="small"):
        for label, text, extension, mime in (
            (t("export.json"), lambda: to_json(numbers()), "json", "application/json"),
            (t("export.csv"), lambda: to_csv(numbers()), "csv", "text/csv"),
        ):
            st.download_button(
                label,
                data=text,
                file_name=f"{name}.{extension}",
                mime=mime,
                on_click="ignore",
                icon=":material/download:",
                help=t("export.help"),
            )


# ---------------------------------------------------------------- building an export (pure)


def plain(value: Any) -> Any:
    """`value` as JSON holds it: arrays (numpy's, or Plotly's packed ``{"dtype", "bdata"}``) as lists, NaN as None."""
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, dict):
        if set(value) >= {"dtype", "bdata"}:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
            shape = value.get("shape")
            if isinstance(shape, str):  # Plotly writes a packed 2-D array's shape as "3, 4"
                shape = [int(size) for size in shape.split(",")]
            return plain(array.reshape(shape) if shape else array)
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def figure_spec(drawn: Any) -> dict[str, Any]:
    """A drawn chart as a dict: a live chart's JSON text parsed, a figure (or a kept one) by its ``to_dict``."""
    if isinstance(drawn, str):
        spec: dict[str, Any] = json.loads(drawn)
        return spec
    if isinstance(drawn, Mapping):
        return dict(drawn)
    kept: dict[str, Any] = drawn.to_dict()
    return kept


def chart_title(spec: Mapping[str, Any]) -> str:
    """The chart's title text ('' if it has none)."""
    title = spec.get("layout", {}).get("title", "")
    text = title.get("text", "") if isinstance(title, Mapping) else title
    return str(text or "")


def traces(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each trace of a figure: its name (or uid), type, x and y as lists ([] where it has none), and z if it has one."""
    found = []
    for trace in spec.get("data", []):
        shown: dict[str, Any] = {
            "name": str(trace.get("name") or trace.get("uid") or ""),
            "type": str(trace.get("type") or "scatter"),
            "x": _listed(trace.get("x")),
            "y": _listed(trace.get("y")),
        }
        if trace.get("z") is not None:
            shown["z"] = _listed(trace.get("z"))
        found.append(shown)
    return found


def _listed(value: Any) -> list[Any]:
    values = plain(value)
    if values is None:
        return []
    return values if isinstance(values, list) else [values]


def settings(state: Mapping[str, Any], page: lessons.Page) -> dict[str, Scalar | list[Scalar]]:
    """The page's settings in `state` (a session's values): its widgets' keys, buttons and inner state left out.

    A key belongs to the page by its prefix (``Page.owns_key``); a value that is not text, a
    number, a switch or a list of those (a chart's selection, an answer box's state) is not a setting.
    """
    kept: dict[str, Scalar | list[Scalar]] = {}
    for key in sorted(state):
        if not page.owns_key(key) or BUTTON_KEY.search(key):
            continue
        value = plain(state[key])
        if _is_scalar(value) or (isinstance(value, list) and all(_is_scalar(item) for item in value)):
            kept[key] = value
    return kept


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def page_numbers(
    *,
    page: str,
    title: str,
    language: str,
    settings: Mapping[str, Any],
    charts: Sequence[tuple[str, Any]],
) -> dict[str, Any]:
    """What a page's export holds: the page (stem and title), the language, its settings and its charts' traces."""
    shown = []
    for key, drawn in charts:
        spec = figure_spec(drawn)
        shown.append({"key": key, "title": chart_title(spec), "traces": traces(spec)})
    return {"page": page, "title": title, "language": language, "settings": dict(settings), "charts": shown}


def to_json(numbers: Mapping[str, Any]) -> str:
    """An export as JSON text (UTF-8, indented)."""
    return json.dumps(plain(dict(numbers)), ensure_ascii=False, indent=2)


def to_csv(numbers: Mapping[str, Any]) -> str:
    """An export as one CSV table (see the module's docstring for its columns)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for part in ("page", "title", "language"):
        writer.writerow({"part": part, "name": part, "value": numbers[part]})
    for key, value in numbers["settings"].items():
        writer.writerow(
            {"part": "setting", "name": key, "value": value if isinstance(value, str) else json.dumps(value)}
        )
    for chart in numbers["charts"]:
        for trace in chart["traces"]:
            for x, y, z in _points(trace):
                writer.writerow(
                    {"part": "point", "chart": chart["key"], "trace": trace["name"], "x": x, "y": y, "z": z}
                )
    return out.getvalue()


def _points(trace: Mapping[str, Any]) -> list[tuple[Any, Any, Any]]:
    """A trace's points as (x, y, z) rows: a heat map cell by cell (z[i][j] at x[j], y[i]), else x[i] beside y[i]."""
    xs, ys = trace["x"], trace["y"]
    z = trace.get("z")
    if isinstance(z, list) and z and isinstance(z[0], list):
        return [
            (xs[j] if j < len(xs) else j, ys[i] if i < len(ys) else i, value)
            for i, row in enumerate(z)
            for j, value in enumerate(row)
        ]
    if not xs and ys:
        xs = list(range(len(ys)))
    return [(x, y, "") for x, y in zip_longest(xs, ys, fillvalue="")]


# ---------------------------------------------------------------- a lesson's handout (pure)


@dataclass(frozen=True, slots=True, kw_only=True)
class Handout:
    """A lesson's handout, every text already translated: what a student takes home from the page.

    ``formulas`` are (name, LaTeX) pairs, ``terms`` (name, definition), ``questions`` (text, options):
    the quiz without its answers.
    """

    title: str
    intro: str
    formulas: tuple[tuple[str, str], ...]
    takeaway: str
    terms: tuple[tuple[str, str], ...]
    questions: tuple[tuple[str, tuple[str, ...]], ...]


#: Option letters of a handout's questions.
LETTERS = "abcdefghij"


def handout_blocks(handout: Handout, headings: Mapping[str, str]) -> list[tuple[str, str]]:
    """The handout as a list of ("markdown", text) and ("latex", formula) blocks, in the order they are read.

    `headings` holds "formulas", "takeaway", "terms" and "quiz". The page draws the blocks
    (``st.markdown``, ``st.latex``) and the download joins them (``handout_markdown``): one content.
    """
    blocks = [("markdown", f"# {handout.title}\n\n{handout.intro}")]
    if handout.formulas:
        blocks.append(("markdown", f"## {headings['formulas']}"))
        for name, latex in handout.formulas:
            blocks += [("markdown", f"**{name}**"), ("latex", latex)]
    blocks.append(("markdown", f"## {headings['takeaway']}\n\n{handout.takeaway}"))
    if handout.terms:
        terms = "\n".join(f"- **{name}**: {definition}" for name, definition in handout.terms)
        blocks.append(("markdown", f"## {headings['terms']}\n\n{terms}"))
    if handout.questions:
        blocks.append(("markdown", f"## {headings['quiz']}"))
        for number, (text, options) in enumerate(handout.questions, start=1):
            listed = "\n".join(f"- {LETTERS[index]}) {option}" for index, option in enumerate(options))
            blocks.append(("markdown", f"**{number}.** {text}\n\n{listed}"))
    return blocks


def handout_markdown(handout: Handout, headings: Mapping[str, str]) -> str:
    """The handout as one Markdown text (formulas as ``$$…$$`` display math), the blocks of ``handout_blocks``."""
    parts = [f"$$\n{text}\n$$" if kind == "latex" else text for kind, text in handout_blocks(handout, headings)]
    return "\n\n".join(parts) + "\n"
