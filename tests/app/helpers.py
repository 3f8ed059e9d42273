"""What the AppTest page tests share: opening a page, reading a metric, a figure, an error.

Imported by the tests (``from tests.app.helpers import metric, page_opener``); the
fixtures (``app``, ``models``, ``gpus``) stay in conftest.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

from i18n import LANGUAGES, translate

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


def metric_value(app: AppTest, label: str) -> str:
    """The value of the metric whose label is `label` (exactly one must exist)."""
    [match] = [shown for shown in app.metric if shown.label == label]
    return match.value


def metric(app: AppTest, key: str, lang: str = "en", **fill: object) -> str:
    """The value of the one metric labelled with the catalogue text `key` in `lang` (placeholders from `fill`)."""
    return metric_value(app, translate(lang, key, **fill))


def no_bad_combination(app: AppTest) -> bool:
    """True when the page shows no "these settings do not fit together" error, in either language."""
    starts = tuple(translate(lang, "error.bad_combination", detail="")[:20] for lang in LANGUAGES)
    return not [error for error in app.error if error.value.startswith(starts)]


def first_figure(app: AppTest) -> dict[str, Any]:
    """The JSON of the page's first st.plotly_chart."""
    return json.loads(app.get("plotly_chart")[0].proto.spec)


def plotly_array(value: Any) -> np.ndarray:
    """A Plotly array from the figure's JSON: a list, or {"dtype", "bdata", "shape"} (base64 of the raw buffer)."""
    if isinstance(value, dict):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(n) for n in str(value.get("shape", flat.size)).split(",")]
        return flat.reshape(shape)
    return np.asarray(value, dtype=float)
