"""What the AppTest page and chart tests share: opening a page, reading a metric, a caption, a figure, a trace,
an error; the CLI's JSON; the models and GPUs that stress a page.

Imported by the tests (``from tests.app.helpers import metric, page_opener``); the
fixtures (``app``, ``models``, ``gpus``) stay in conftest.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

from i18n import LANGUAGES, translate
from kvcore import cli

#: Models and GPUs that stress a page: MHA with a 1k context (GPT-2), MLA, sliding windows, linear attention,
#: MQA on a GPU without FP8, weights bigger than any one GPU. Pages add their own cases to these.
TRICKY_PAIRS = [
    ("gpt2", "rtx-3060-12gb"),
    ("deepseek-v3", "h100-sxm"),
    ("gemma-3-27b", "m4-max-128gb"),
    ("qwen3-next-80b-a3b", "a100-80gb"),
    ("falcon-7b", "t4"),
    ("llama-3.1-405b", "rtx-4090"),
]

# ---------------------------------------------------------------- opening a page


def open_page(
    app: AppTest, page: str | None = None, *, lang: str = "en", first_run: bool = True, **params: str
) -> AppTest:
    """Open `page` (a file such as "lessons/sizing.py") in `lang` with `params` in the URL, as a link would.

    app.py runs first (``first_run``) so the sidebar's choices exist, then the page; with
    no `page` the app stays on its default page, the memory calculator. Without
    ``first_run`` the page is opened straight away: app.py runs once, with this page.
    """
    app.query_params.update({"lang": lang, **params})
    if first_run:
        app.run()
    return app if page is None else app.switch_page(page).run()


def page_opener(page: str | None, *, first_run: bool = True) -> Callable[..., AppTest]:
    """A test module's ``open_page(app, lang="en", **params)`` for its one page (see ``open_page``)."""

    def open_this_page(app: AppTest, lang: str = "en", **params: str) -> AppTest:
        return open_page(app, page, lang=lang, first_run=first_run, **params)

    return open_this_page


# ---------------------------------------------------------------- reading what it shows


def lesson_top_level(app: AppTest) -> list[Any]:
    """The lesson's top-level blocks and elements, in order (title, intro, predict box, presets, notes, columns…).

    A lesson runs in a fragment, whose container is the page's first block; its footer (``lesson.footer``: the
    glossary links, the course's tables) follows it in the page.
    """
    fragment = app.main.children[min(app.main.children)]
    return list(fragment.children.values())


def metric_value(app: AppTest, label: str) -> str:
    """The value of the metric whose label is `label` (exactly one must exist)."""
    [match] = [shown for shown in app.metric if shown.label == label]
    return match.value


def metric(app: AppTest, key: str, lang: str = "en", **fill: object) -> str:
    """The value of the one metric labelled with the catalogue text `key` in `lang` (placeholders from `fill`)."""
    return metric_value(app, translate(lang, key, **fill))


def caption_with(app: AppTest, start: str) -> str:
    """The text of the one caption that starts with `start`."""
    [text] = [caption.value for caption in app.caption if caption.value.startswith(start)]
    return text


def no_bad_combination(app: AppTest) -> bool:
    """True when the page shows no "these settings do not fit together" error, in either language."""
    starts = tuple(translate(lang, "error.bad_combination", detail="")[:20] for lang in LANGUAGES)
    return not [error for error in app.error if error.value.startswith(starts)]


def first_figure(app: AppTest) -> dict[str, Any]:
    """The JSON of the page's first st.plotly_chart."""
    return json.loads(app.get("plotly_chart")[0].proto.spec)


def trace(figure: Any, name: str) -> Any:
    """The one trace of a Plotly figure whose name is `name`."""
    [match] = [shown for shown in figure.data if shown.name == name]
    return match


def translated(keys: Mapping[str, str], lang: str = "en", **fill: object) -> dict[str, str]:
    """A chart's labels: each name's catalogue text in `lang`, placeholders filled from `fill`."""
    return {name: translate(lang, key, **fill) for name, key in keys.items()}


# ---------------------------------------------------------------- the CLI


def cli_json(capsys: Any, *argv: str) -> dict[str, Any]:
    """The JSON object ``python -m kvcore ARGV --json`` prints (it must exit with 0)."""
    capsys.readouterr()
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def plotly_array(value: Any) -> np.ndarray:
    """A Plotly array from the figure's JSON: a list, or {"dtype", "bdata", "shape"} (base64 of the raw buffer)."""
    if isinstance(value, dict):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(n) for n in str(value.get("shape", flat.size)).split(",")]
        return flat.reshape(shape)
    return np.asarray(value, dtype=float)
