"""Links round-trip: every control a lesson keeps in its URL, set away from its default, comes back from the link,
in the other language and in the same one, with no "this link asked for something else" notice.

One link per page, as a student shares it: every control of the page is moved one step, as a student moves it
(the next option, one slider step, a toggle flipped), the page's URL is read, and a fresh session opens that URL.
Controls revealed by another (a toggle that shows a slider) are moved in the next round. The engines page draws
each engine's own flags only for the chosen engine: it is opened once per engine, the engine held fixed.

How the URL is read: ``lesson.choice`` and the course, quiz and exercise pickers write their parameters
themselves, and AppTest sees what they write. A bound widget's parameter is written by the browser, which
AppTest does not run (it writes neither a moved widget nor a ``st.session_state`` assignment back); the test
writes it as Streamlit does: the widget's serialized value (``format_func(option)`` for an option, the number
for a slider, ``true``/``false``), in the URL form of ``QueryParams.set_corrected_value``, left out at the
default.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from streamlit.runtime.state.query_params import _coerce_value_for_query_url
from streamlit.testing.v1 import AppTest

import kvcore
from i18n import LANGUAGES, translate
from tests.app.conftest import ROOT, TIMEOUT_S
from tests.app.helpers import open_page

LESSONS = sorted(path.stem for path in (ROOT / "lessons").glob("*.py"))
#: Widget types whose value can live in a URL (text boxes hold what the student typed: never in a link).
VALUE_TYPES = (
    "slider",
    "select_slider",
    "button_group",
    "toggle",
    "checkbox",
    "radio",
    "selectbox",
    "number_input",
    "multiselect",
)
#: A control that is not a setting, so not in a link: where /import_model reads a config from (answers: ``is_answer``).
NOT_SETTINGS = {"im_source"}
#: A page opened with these parameters held fixed: each engine's own flags are drawn only when it is chosen.
_OPENINGS = [(stem, {}) for stem in LESSONS if stem != "engines"] + [
    ("engines", {"eg_engine": engine}) for engine in kvcore.ENGINES
]
#: Each link is made in one language, pt and en in turn (half the time of both), and opened in both.
CASES = [(stem, fixed, LANGUAGES[index % len(LANGUAGES)]) for index, (stem, fixed) in enumerate(_OPENINGS)]
ROUNDS = 3
LINK_ICON = ":material/link:"


def other(lang: str) -> str:
    return next(code for code in LANGUAGES if code != lang)


def is_answer(key: str) -> bool:
    """A student's answer (predict boxes, exercises, quiz questions): never a setting."""
    return key.endswith("_answer") or (key.startswith("qz_") and key != "qz_lesson")


def url_widgets(app: AppTest) -> Iterator[Any]:
    """The page's keyed controls that are settings (the lesson's, not the sidebar's)."""
    for kind in VALUE_TYPES:
        for widget in app.main.get(kind):
            if widget.key and widget.key not in NOT_SETTINGS and not is_answer(widget.key):
                yield widget


def values(app: AppTest) -> dict[str, Any]:
    return {widget.key: widget.value for widget in url_widgets(app)}


def metadata(app: AppTest, widget: Any) -> Any:
    """Streamlit's record of the widget: its serializer, deserializer and binding (AppTest keeps no options)."""
    return app._session_state._state.get_widget_metadata(widget.id)


def option(meta: Any, label: str) -> Any:
    """The option behind a label as the widget shows it."""
    return meta.deserializer(label if meta.value_type == "string_value" else [label])


def moved(app: AppTest, widget: Any) -> Any:
    """The widget's value one step away from where it is: the next option (or the one before), one step, flipped."""
    meta = metadata(app, widget)
    if widget.type in ("toggle", "checkbox"):
        return not widget.value
    if widget.type in ("slider", "number_input"):
        step = widget.step if widget.type == "slider" else widget.step or 1
        up = widget.value + step
        new = up if up <= widget.max else widget.value - step
        return round(new, 10) if isinstance(new, float) else new
    if widget.type == "multiselect":
        return meta.deserializer([widget.options[1 if widget.value else 0]])
    serialized = meta.serializer(widget.value)
    label = serialized if isinstance(serialized, str) else serialized[0]
    index = widget.options.index(label)
    return option(meta, widget.options[index + 1 if index + 1 < len(widget.options) else index - 1])


def browser_link(app: AppTest) -> dict[str, Any]:
    """The page's address as the browser holds it: what the page wrote, plus every bound widget off its default."""
    link = dict(app.query_params)
    for widget in _bound_widgets(app):
        meta = metadata(app, widget)
        if widget.value != meta.deserializer(None):
            link[widget.key] = _coerce_value_for_query_url(meta.serializer(widget.value), meta.value_type)
    return link


def _bound_widgets(app: AppTest) -> Iterator[Any]:
    for kind in VALUE_TYPES:
        for widget in app.get(kind):
            meta = metadata(app, widget) if widget.key else None
            if meta is not None and meta.bind == "query-params":
                yield widget


def one(value: str | list[str]) -> str:
    """A parameter's one value (a bound segmented control's is a list of one)."""
    [text] = [value] if isinstance(value, str) else value
    return text


def link_notices(app: AppTest) -> list[str]:
    return [info.value for info in app.info if info.proto.icon == LINK_ICON]


def fresh(page: str, lang: str, link: dict[str, Any]) -> AppTest:
    """A new browser opening `link` in `lang` (a link's own ``lang`` is replaced)."""
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S)
    return open_page(app, page, lang=lang, first_run=False, **{k: v for k, v in link.items() if k != "lang"})


def shared_link(
    page: str, lang: str, fixed: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any], set[str], set[str]]:
    """Open `page`, move every setting one step (in rounds, for revealed ones).

    Returns its URL, its values, what moved, and the keys of its choices (segmented controls).
    """
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S)
    open_page(app, page, lang=lang, first_run=False, **fixed)
    changed: set[str] = set()
    for _ in range(ROUNDS):
        todo = [w for w in url_widgets(app) if w.key not in changed and w.key not in fixed and not w.disabled]
        if not todo:
            break
        for widget in todo:
            widget.set_value(moved(app, widget))
            changed.add(widget.key)
        app.run()
        assert not app.exception, [exception.value for exception in app.exception]
    choices = {widget.key for widget in url_widgets(app) if widget.type == "button_group"}
    return browser_link(app), values(app), changed, choices


@pytest.mark.parametrize(
    ("stem", "fixed", "lang"), CASES, ids=["-".join([stem, *fixed.values(), lang]) for stem, fixed, lang in CASES]
)
def test_every_setting_of_a_page_comes_back_from_its_link_in_either_language(stem, fixed, lang):
    page = f"lessons/{stem}.py"
    link, expected, changed, choices = shared_link(page, lang, fixed)
    assert changed or stem == "glossary", "the page has settings"
    missing = sorted(key for key in changed if key not in link)
    assert missing == [], "every moved setting is in the link"
    shown = {key: one(link[key]) for key in choices if key in link and one(link[key]) != str(expected[key])}
    assert shown == {}, "a choice's link holds its option, never its label"
    for reader in (other(lang), lang):
        reopened = fresh(page, reader, link)
        assert not reopened.exception, [exception.value for exception in reopened.exception]
        assert link_notices(reopened) == [], f"no fallback notice in {reader}"
        assert values(reopened) == expected, f"{link} opened in {reader}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_choice_puts_its_option_in_the_link_never_its_label(lang):
    # The preemption mode is shown by its translated label; the link holds vLLM's own word for it.
    app = open_page(
        AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT_S), "lessons/preemption.py", lang=lang
    )
    app.button_group(key="pr_mode").set_value("swap").run()
    assert app.query_params["pr_mode"] == "swap"
    app.button_group(key="pr_mode").set_value("recompute").run()
    assert "pr_mode" not in app.query_params, "the default is left out"


@pytest.mark.parametrize(("made_in", "read_in"), [(a, b) for a in LANGUAGES for b in LANGUAGES])
def test_an_older_link_with_a_translated_label_opens_its_option(made_in, read_in):
    label = translate(made_in, "preemption.mode_swap")
    app = fresh("lessons/preemption.py", read_in, {"pr_mode": label})
    assert app.button_group(key="pr_mode").value == "swap"
    assert link_notices(app) == []
    assert app.query_params["pr_mode"] == "swap", "the link is rewritten with the option"


def test_an_engine_link_holds_its_id_and_an_older_name_still_opens_it():
    app = fresh("lessons/engines.py", "en", {"eg_engine": kvcore.ENGINE_NAMES["trtllm"]})
    assert app.button_group(key="eg_engine").value == "trtllm"
    assert app.query_params["eg_engine"] == "trtllm"


def test_a_choice_value_that_is_no_option_falls_back_with_the_notice():
    reopened = fresh("lessons/preemption.py", "en", {"pr_mode": "teleport"})
    assert reopened.button_group(key="pr_mode").value == "recompute"
    [notice] = link_notices(reopened)
    assert "`pr_mode`" in notice and "recompute, swap" in notice
    assert "pr_mode" not in reopened.query_params


def switch_as_the_browser_does(app: AppTest, page: str) -> AppTest:
    """Another page through the menu: the browser keeps only bound widgets' parameters (here the language)."""
    app.query_params = {key: value for key, value in app.query_params.items() if key == "lang"}
    return app.switch_page(page).run()


def test_a_choice_keeps_its_value_across_pages_and_writes_it_back(app):
    open_page(app, "lessons/preemption.py", lang="pt")
    app.button_group(key="pr_mode").set_value("swap").run()
    switch_as_the_browser_does(app, "lessons/memory.py")
    assert "pr_mode" not in app.query_params
    switch_as_the_browser_does(app, "lessons/preemption.py")
    assert app.button_group(key="pr_mode").value == "swap"
    assert app.query_params["pr_mode"] == "swap"


# ---------------------------------------------------------------- share links of the course and the exercises


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_course_share_link_keeps_the_language(app, lang):
    open_page(app, "lessons/course.py", lang=lang, cp_id="first_class")
    [share] = app.code
    # Written even for the browser's own language (en here, left out of the page's URL): students' browsers differ.
    assert share.value.endswith(f"/course?cp_id=first_class&lang={lang}")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_practice_share_link_keeps_the_language_and_the_topics(app, lang):
    open_page(app, "lessons/practice.py", lang=lang, ex_set="7", ex_topics=["gqa_saving", "users_fit"])
    [share] = [code.value for code in app.code if "/practice?" in code.value]
    assert share.endswith(f"/practice?ex_set=7&ex_count=8&ex_topics=gqa_saving&ex_topics=users_fit&lang={lang}")
