"""Streamlit helpers shared by app.py and the pages: data, language, and the model and GPU pickers.

Choices live in ``st.session_state`` under the widget keys below (one dict per
browser session), never in module globals: one server shares this module with
every user.

URLs: the language is a bound widget (``?lang=pt``). The model and GPU pickers
show names but keep ids in the URL (``?model=llama-3.1-8b&gpu=h100-sxm``), so they
sync the URL themselves: a bound selectbox would put the displayed name there.
"""

from __future__ import annotations

import contextlib
import math
import threading
import urllib.parse
from collections.abc import Callable, Collection, Iterator, Mapping
from types import MappingProxyType
from typing import TypeVar

import streamlit as st

import kvcore
from charts.formatting import plain
from i18n import LANGUAGES, NUMBER_SEPARATORS, localize_number, translate
from kvcore.model_code import VERSION as MODEL_CODE_VERSION
from kvcore.model_code import model_from_code, model_to_code
from kvcore.units import format_gib

LANG_KEY = "lang"
MODEL_KEY = "model"
GPU_KEY = "gpu"
#: Widgets whose range or default depends on the chosen model: adjusted when the model changes.
CONTEXT_KEY = "context"
KV_HEADS_KEY = "kv_heads"
WEIGHTS_DTYPE_KEY = "weights_dtype"

DEFAULT_MODEL_ID = "llama-3.1-8b"
#: The context range of a model whose config does not give max_position_embeddings.
UNKNOWN_CONTEXT_TOKENS = 131_072
#: The ids of imported models are their URL codes, which start with this.
IMPORTED_PREFIX = MODEL_CODE_VERSION + "~"
DEFAULT_GPU_ID = "rtx-4090"

Spec = TypeVar("Spec", kvcore.ModelSpec, kvcore.GpuSpec)


@st.cache_resource(show_spinner=False)
def _models_from_csv() -> Mapping[str, kvcore.ModelSpec]:
    return MappingProxyType(kvcore.load_models())


@st.cache_resource(show_spinner=False)
def _gpus_from_csv() -> Mapping[str, kvcore.GpuSpec]:
    return MappingProxyType(kvcore.load_gpus())


def models() -> Mapping[str, kvcore.ModelSpec]:
    """Every model of data/models.csv by id, and the ones this session imported; a bad file stops the page."""
    return _loaded("_models", _models_from_csv)


def gpus() -> Mapping[str, kvcore.GpuSpec]:
    """Every GPU of data/gpus.csv by id; a bad file stops the page with its error."""
    return _loaded("_gpus", _gpus_from_csv)


def _loaded(session_key: str, loader: Callable[[], Mapping[str, Spec]]) -> Mapping[str, Spec]:
    """The session's own catalogue if it has one (a model it imported, ``adopt_model``), else the process's.

    The process reads each file once and every session reads that one copy (``st.cache_resource``, read-only
    through a ``MappingProxyType``; the specs are frozen dataclasses, so no page can change another's). A copy
    per session (``st.cache_data`` unpickles its value for every caller) cost each new student about 6 ms of
    the server's CPU and 0.1 MB of memory.
    """
    kept: Mapping[str, Spec] | None = st.session_state.get(session_key)
    if kept is not None:
        return kept
    try:
        return loader()
    except ValueError as error:
        from ui.errors import error_text  # ui.errors builds on this module

        st.error(t("error.data_file", detail=error_text(error)))
        st.stop()


def default_language() -> str:
    """Portuguese for a browser that asks for Portuguese, English otherwise."""
    locale = st.context.locale or ""
    return "pt" if locale.lower().startswith("pt") else "en"


#: The language a lesson's run reads once (``language_fixed``), per script thread.
_fixed = threading.local()


def language() -> str:
    """The language chosen in this session (before the choice is drawn: the browser's)."""
    fixed: str | None = getattr(_fixed, "language", None)
    if fixed is not None:
        return fixed
    chosen = st.session_state.get(LANG_KEY)
    return chosen if chosen in LANGUAGES else default_language()


@contextlib.contextmanager
def language_fixed() -> Iterator[None]:
    """Within: ``language()`` answers without reading the session, as it was on entry.

    A lesson's run asks for the language hundreds of times (every ``t``, number and
    chart label: 415 times on the memory calculator), each a read of
    ``st.session_state`` (about 8 µs); the choice cannot change inside a run, since
    the language switch is drawn by app.py before the lesson and no lesson writes it.
    """
    _fixed.language = language()
    try:
        yield
    finally:
        _fixed.language = None


def t(key: str, **kwargs: object) -> str:
    """The text for `key` in the current language; the key itself if it is missing.

    A missing text should never break a lesson; tests/app/test_i18n.py makes sure
    every key used in the code exists in both catalogues.
    """
    try:
        return translate(language(), key, **kwargs)
    except (KeyError, IndexError):
        return key


def plural(key: str, n: int, shown: str | None = None) -> str:
    """The text of ``key.one`` when n is 1, else of ``key.other``, with {n} filled in.

    `shown` is n as the page writes it ("1.024" in pt), when it should not read as a bare int.
    """
    return t(f"{key}.{'one' if n == 1 else 'other'}", n=n if shown is None else shown)


def num(text: str) -> str:
    """A number formatted by kvcore, with the decimal mark of the current language."""
    return localize_number(text, language())


def separators() -> str:
    """Decimal mark and thousands separator of the current language, for Plotly's layout."""
    return NUMBER_SEPARATORS[language()]


def language_choice() -> str:
    """The sidebar's language switch, bound to ``?lang=``.

    Its default follows the browser (``st.context.locale``), and Streamlit drops a
    bound value from the URL when it equals the default, so a link copied in
    Portuguese by a Portuguese browser carries no ``lang``: it opens in the
    reader's own language.
    """
    chosen = st.sidebar.segmented_control(
        t("sidebar.language"),
        LANGUAGES,
        default=default_language(),
        format_func=lambda code: code,  # the URL holds what is shown: ?lang=pt
        key=LANG_KEY,
        bind="query-params",
        required=True,
    )
    return chosen or default_language()


def model_picker() -> kvcore.ModelSpec:
    """The sidebar's model choice (default Llama 3.1 8B), synced with ``?model=<id>``.

    An imported model travels in the URL as its code (``?model=kv1~L32_h32…``,
    kvcore.model_code): a link opens it in any browser, offline, with no upload.
    """
    wanted = st.query_params.get(MODEL_KEY)
    if MODEL_KEY not in st.session_state and wanted and wanted not in models():
        _adopt_from_url(wanted)
    catalogue = models()
    model_id = _picker(
        MODEL_KEY,
        catalogue,
        default=DEFAULT_MODEL_ID,
        label=t("sidebar.model"),
        describe=model_label,
        unknown_notice="notice.unknown_model",
        on_change=_reset_model_defaults,
    )
    return catalogue[model_id]


def model_label(model: kvcore.ModelSpec) -> str:
    """The model's name as the picker shows it; imported models say so."""
    return t("sidebar.imported_model", name=model.name) if is_imported(model) else model.name


def is_imported(model: kvcore.ModelSpec) -> bool:
    """True for a model read from a config.json (its id is its URL code), False for data/models.csv's."""
    return model.id.startswith(IMPORTED_PREFIX)


def adopt_model(model: kvcore.ModelSpec, *, code: str | None = None) -> str:
    """Add an imported model to this session's catalogue, under its URL code; returns that id.

    Every page's model picker then offers it, and ``?model=<code>`` selects it.
    """
    model_id = code or model_to_code(model)
    catalogue = models()
    if model_id not in catalogue:
        st.session_state["_models"] = {**catalogue, model_id: kvcore.with_changes(model, id=model_id)}
    return model_id


def _adopt_from_url(value: str) -> None:
    """A ``?model=`` value that is a model code: decode it and add it (a bad code gets the unknown-model notice)."""
    if not value.startswith(IMPORTED_PREFIX):
        return
    try:
        model = model_from_code(value)
    except ValueError:
        return
    adopt_model(model, code=value)


def gpu_picker() -> kvcore.GpuSpec:
    """The sidebar's GPU choice (default RTX 4090), synced with ``?gpu=<id>``."""
    catalogue = gpus()
    gpu_id = _picker(
        GPU_KEY,
        catalogue,
        default=DEFAULT_GPU_ID,
        label=t("sidebar.gpu"),
        describe=lambda spec: t("sidebar.gpu_option", name=spec.name, memory=num(format_gib(spec.memory_bytes))),
        unknown_notice="notice.unknown_gpu",
    )
    return catalogue[gpu_id]


def current_model() -> kvcore.ModelSpec:
    """The model chosen in the sidebar (pages read it; app.py draws the picker)."""
    catalogue = models()
    return catalogue.get(st.session_state.get(MODEL_KEY, DEFAULT_MODEL_ID), catalogue[DEFAULT_MODEL_ID])


def current_gpu() -> kvcore.GpuSpec:
    """The GPU chosen in the sidebar (pages read it; app.py draws the picker)."""
    catalogue = gpus()
    return catalogue.get(st.session_state.get(GPU_KEY, DEFAULT_GPU_ID), catalogue[DEFAULT_GPU_ID])


def _picker(
    key: str,
    catalogue: Mapping[str, Spec],
    *,
    default: str,
    label: str,
    describe: Callable[[Spec], str],
    unknown_notice: str,
    on_change: Callable[[], None] | None = None,
) -> str:
    """A sidebar selectbox over `catalogue`'s ids whose choice is mirrored in ``?<key>=<id>``.

    The URL is read once per session; an id the catalogue lacks falls back to the
    default with a notice.
    """
    if key not in st.session_state:
        wanted = st.query_params.get(key)
        if wanted is not None and wanted not in catalogue:
            notice = t(unknown_notice, id=shown_param(wanted), default=describe(catalogue[default]))
            st.warning(notice, icon=":material/warning:")
        st.session_state[key] = wanted if wanted in catalogue else default
    chosen: str = st.sidebar.selectbox(
        label, list(catalogue), format_func=lambda spec_id: describe(catalogue[spec_id]), key=key, on_change=on_change
    )
    if chosen == default:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != chosen:
        st.query_params[key] = chosen
    return chosen


def unknown_page_notice(url_paths: list[str]) -> None:
    """Say so, once per session, when the link asked for a page that does not exist.

    Streamlit then runs the default page and shows its own dialog, in English only;
    this notice names the page asked for in the reader's language. The address the
    browser opened is ``st.context.url``; a base path (``server.baseUrlPath``) is
    ignored by looking at its last segment only.
    """
    if st.session_state.get("_checked_page"):
        return
    st.session_state["_checked_page"] = True
    asked = urllib.parse.urlparse(st.context.url or "").path.rstrip("/").rsplit("/", 1)[-1]
    if asked and asked not in url_paths:
        st.info(t("notice.unknown_page", page=shown_param(asked)), icon=":material/link_off:")


def shown_param(value: str) -> str:
    """A URL value made safe to quote in a notice: at most 40 plain characters, no markup."""
    return "".join(c for c in value[:40] if c.isalnum() or c in ".-_ /") or "?"


#: Characters that start markup in Streamlit's markdown (CommonMark, HTML, LaTeX's $, ":red[…]" and
#: ":material/…:" shortcodes); a backslash makes each show as itself (CommonMark escapes any ASCII punctuation).
_MARKDOWN_PUNCTUATION = frozenset('\\`*_{}[]()<>#+!|~$:&"')


def literal(text: str, *, limit: int = 80) -> str:
    """Text a user typed (a model name, a config's model_type) shown as typed inside markdown: every
    markup character backslash-escaped, newlines as spaces, at most `limit` characters (then "…").

    ``shown_param`` keeps only plain characters of a URL value; a name keeps every character, so
    "<b>x</b>" reads "<b>x</b>", not "bx/b".
    """
    flat = " ".join(str(text).split())
    cut = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    return "".join(f"\\{c}" if _starts_markup(cut, index) else c for index, c in enumerate(cut)) or "?"


def _starts_markup(text: str, index: int) -> bool:
    """Whether text[index] could start markup; an underscore inside a word cannot (CommonMark), so
    'my_new_arch' stays as typed."""
    c = text[index]
    if c != "_":
        return c in _MARKDOWN_PUNCTUATION
    before = text[index - 1] if index else " "
    after = text[index + 1] if index + 1 < len(text) else " "
    return not (before.isalnum() and after.isalnum())


def check_url_value(
    key: str,
    *,
    low: float | None = None,
    high: float | None = None,
    options: list[str] | None = None,
    aliases: Collection[str] = (),
    whole: bool = True,
) -> None:
    """Say so, once per session, when ``?key=`` holds a value the widget will not take.

    Streamlit drops such a value and uses the widget's default; without this notice
    the learner would not know the shared link asked for something else. `aliases`
    are further values the widget takes without listing them in the notice (the
    translated labels that older links of ``lesson.choice`` hold).
    """
    raw = st.query_params.get(key)
    seen = st.session_state.setdefault("_checked_url_values", set())
    if raw is None or key in seen:
        return
    seen.add(key)
    if options is not None:
        allowed = t("notice.allowed_options", options=", ".join(options))
        ok = raw in options or raw in aliases
    else:
        allowed = t("notice.allowed_range", low=_bound(low or 0), high=_bound(high or 0))
        try:
            number = float(raw)
        except ValueError:
            number = math.nan
        in_range = (low or 0) <= number <= (high if high is not None else math.inf)
        ok = math.isfinite(number) and in_range and (not whole or number == int(number))
    if not ok:
        st.info(t("notice.bad_value", param=key, value=shown_param(raw), allowed=allowed), icon=":material/link:")


def _bound(value: float) -> str:
    return plain(value, separators())


def _reset_model_defaults() -> None:
    """A new model brings its own KV heads and weight format, and may accept a shorter context.

    Callback of the model picker: it runs before the page draws its sliders, so no
    slider is ever asked to show a value outside its new range.
    """
    model = models()[st.session_state[MODEL_KEY]]
    low, high, _, default_context = context_range(model)
    if not low <= st.session_state.get(CONTEXT_KEY, default_context) <= high:
        st.session_state[CONTEXT_KEY] = default_context
    st.session_state[KV_HEADS_KEY] = model.num_key_value_heads
    st.session_state[WEIGHTS_DTYPE_KEY] = model.weights_dtype


def context_range(model: kvcore.ModelSpec) -> tuple[int, int, int, int]:
    """The context slider's (minimum, maximum, step, default) for `model`, in tokens.

    Steps of 1,024 tokens from 1k to the model's max_position_embeddings, default
    8,192 (or the maximum, if smaller); models with at most 2k tokens (GPT-2) step by 128.
    A model that does not say (an imported config without max_position_embeddings) gets 128k.
    """
    maximum = model.max_position_embeddings or UNKNOWN_CONTEXT_TOKENS
    step = 1024 if maximum > 2048 else 128
    return step, maximum, step, min(8192, maximum)


def kv_head_choices(model: kvcore.ModelSpec) -> list[int]:
    """KV head counts the model could have: the divisors of its query heads (1 = MQA … all = MHA)."""
    heads = model.num_attention_heads
    return [n for n in range(1, heads + 1) if heads % n == 0]
