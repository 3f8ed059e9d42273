"""Paste your vLLM log: its start-up numbers beside kvcore's, and what to change to fit more."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.formatting import count, times
from charts.vllm_log import checks_ratio_figure, ratio_checks, users_by_context_figure
from kvcore.units import format_bytes
from kvcore.vllm_log import MAX_LINES, MAX_TEXT_CHARS, Check, VllmLog, parse_vllm_log, reconcile
from ui import glossary, lesson, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

#: Real excerpts (data/vllm_logs/, each opening with "# source: <url>") and the model each one ran.
EXCERPTS_DIR = Path(__file__).resolve().parents[1] / "data" / "vllm_logs"
EXCERPTS = (
    ("vllm_10517_llama31_8b_20k", "llama-3.1-8b", "released", "vllm_log.preset_10517_20k"),
    ("vllm_10517_llama31_8b_29k", "llama-3.1-8b", "released", "vllm_log.preset_10517_29k"),
    ("lmcache_1739_qwen3_14b_v1", "qwen3-14b", "released", "vllm_log.preset_lmcache"),
    ("mlperf_550_llama31_8b_v1_error", "llama-3.1-8b", "released", "vllm_log.preset_mlperf"),
    ("vllm_13882_qwen25_7b_negative_kv", "qwen2.5-7b", "released", "vllm_log.preset_13882"),
    ("vllm_pr12569_llama31_70b_w8a8_v1", "llama-3.1-70b", "int8", "vllm_log.preset_12569"),
)
DEFAULT_EXCERPT = EXCERPTS[0][0]
KV_DTYPES = ("log", "bf16", "fp8")
KV_DTYPE_KEYS = {"log": "vllm_log.kv_from_log", "bf16": "vllm_log.kv_bf16", "fp8": "vllm_log.kv_fp8"}
WEIGHTS = ("released", "int8")
WEIGHTS_KEYS = {"released": "vllm_log.weights_released", "int8": "vllm_log.weights_int8"}
#: vLLM's default --gpu-memory-utilization, assumed when the log does not print it.
DEFAULT_UTILIZATION = 0.90
CHECK_NAMES = {
    "gpu_blocks": "vllm_log.check_gpu_blocks",
    "gpu_kv_cache_tokens": "vllm_log.check_gpu_kv_cache_tokens",
    "bytes_per_token": "vllm_log.check_bytes_per_token",
    "max_concurrency": "vllm_log.check_max_concurrency",
    "error_kv_cache_tokens": "vllm_log.check_error_kv_cache_tokens",
    "error_estimated_max_model_len": "vllm_log.check_error_estimated_max_model_len",
    "error_needed_kv_cache_bytes": "vllm_log.check_error_needed_kv_cache_bytes",
    "weights_bytes": "vllm_log.check_weights_bytes",
}
CHECK_MEANINGS = {
    "gpu_blocks": "vllm_log.meaning_gpu_blocks",
    "gpu_kv_cache_tokens": "vllm_log.meaning_gpu_kv_cache_tokens",
    "bytes_per_token": "vllm_log.meaning_bytes_per_token",
    "max_concurrency": "vllm_log.meaning_max_concurrency",
    "error_kv_cache_tokens": "vllm_log.meaning_error_kv_cache_tokens",
    "error_estimated_max_model_len": "vllm_log.meaning_error_estimated_max_model_len",
    "error_needed_kv_cache_bytes": "vllm_log.meaning_error_needed_kv_cache_bytes",
    "weights_bytes": "vllm_log.meaning_weights_bytes",
}
STATUS_KEYS = {
    "agree": "vllm_log.status_agree",
    "differ": "vllm_log.status_differ",
    "cannot_check": "vllm_log.status_cannot_check",
}
STATUS_ICONS = {
    "agree": ":green[:material/check_circle:]",
    "differ": ":red[:material/error:]",
    "cannot_check": ":gray[:material/help:]",
}
REASON_KEYS = {
    "not_in_log": "vllm_log.reason_not_in_log",
    "no_kv_memory_line": "vllm_log.reason_no_kv_memory_line",
    "needs_memory_and_tokens": "vllm_log.reason_needs_memory_and_tokens",
    "no_blocks_or_memory": "vllm_log.reason_no_blocks_or_memory",
    "model_parameters_unknown": "vllm_log.reason_model_parameters_unknown",
    "model_has_no_per_token_cache": "vllm_log.reason_model_has_no_per_token_cache",
}
BYTE_FIELDS = frozenset(item.name for item in dataclasses.fields(VllmLog) if item.name.endswith("_bytes"))


@st.cache_data(show_spinner=False)
def load_excerpts() -> dict[str, tuple[str, str]]:
    """Each excerpt by name: (its source URL, the log without the source line). Missing files are skipped."""
    excerpts = {}
    for name, *_ in EXCERPTS:
        try:
            text = (EXCERPTS_DIR / f"{name}.txt").read_text(encoding="utf-8")
        except OSError:
            continue
        first, _, rest = text.partition("\n")
        excerpts[name] = (first.removeprefix("# source:").strip().split(" ")[0], rest)
    return excerpts


model = ui.current_model()
gpu = ui.current_gpu()
excerpts = load_excerpts()

lesson.header(t("vllm_log.title"), t("vllm_log.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
shown = [row for row in EXCERPTS if row[0] in excerpts]
if shown:
    lesson.presets(
        [
            lesson.Preset(
                label=t(label_key),
                help=t("vllm_log.preset_help", source=excerpts[name][0], model=ui.models()[model_id].name),
                values={"vl_text": excerpts[name][1], "model": model_id, "vl_weights": weights, "vl_kv_dtype": "log"},
            )
            for name, model_id, weights, label_key in shown
        ],
        key="vl_presets",
    )

# The paste is not bound to the URL: a log is too long for an address.
st.session_state.setdefault("vl_text", excerpts.get(DEFAULT_EXCERPT, ("", ""))[1])
text = st.text_area(
    t("vllm_log.text_label"),
    key="vl_text",
    height=220,
    max_chars=MAX_TEXT_CHARS,
    placeholder=t("vllm_log.text_placeholder"),
    help=t("vllm_log.text_help"),
)

controls = st.columns([1, 1, 1], gap="large")
with controls[0]:
    low, high, step, default_context = ui.context_range(model)
    context_tokens = lesson.slider(
        t("vllm_log.context"),
        key="vl_context",
        min_value=low,
        max_value=high,
        value=default_context,
        step=step,
        help=t("vllm_log.context_help"),
    )
with controls[1], lesson.secondary():
    kv_dtype = lesson.choice(
        t("vllm_log.kv_dtype"),
        key="vl_kv_dtype",
        options=KV_DTYPES,
        default="log",
        format_func=lambda option: t(KV_DTYPE_KEYS[option]),
        help=t("vllm_log.kv_dtype_help"),
    )
with controls[2], lesson.secondary():
    weights = lesson.choice(
        t("vllm_log.weights"),
        key="vl_weights",
        options=WEIGHTS,
        default="released",
        format_func=lambda option: t(WEIGHTS_KEYS[option]),
        help=t("vllm_log.weights_help", dtype=model.weights_dtype),
    )

log = parse_vllm_log(text or "")
# Without these two lines the advice cannot price a higher utilisation: take the sidebar's GPU and vLLM's default.
assumed_total = log.total_gpu_memory_bytes is None
assumed_utilization = log.gpu_memory_utilization is None
advice_log = dataclasses.replace(
    log,
    total_gpu_memory_bytes=gpu.memory_bytes if assumed_total else log.total_gpu_memory_bytes,
    gpu_memory_utilization=DEFAULT_UTILIZATION if assumed_utilization else log.gpu_memory_utilization,
)
try:
    result = reconcile(
        advice_log,
        model,
        kv_bytes_per_value=None if kv_dtype == "log" else kvcore.bytes_per_value(kv_dtype),
        context_tokens=context_tokens,
        weights_bytes_per_param=kvcore.bytes_per_value("int8") if weights == "int8" else None,
    )
except ValueError as error:
    lesson.stop_with(error)
advice = result.advice


def shown_value(value: float | None, unit: str) -> str:
    """A logged or expected number in its unit, for the text."""
    if value is None:
        return "—"
    if unit == "bytes":
        return lesson.mem(value)
    if unit == "bytes_per_token":
        return t("vllm_log.per_token", size=ui.num(format_bytes(value)))
    if unit == "requests":
        return ui.num(times(value, decimals=2))
    return count(value, ui.separators())


def field_value(name: str, value: object) -> str:
    """A recognised field's value as the table shows it."""
    if isinstance(value, bool):
        return "✓"
    if name in BYTE_FIELDS and isinstance(value, float):
        return lesson.mem(value)
    if isinstance(value, int):
        return count(value, ui.separators())
    if isinstance(value, float):
        return ui.num(f"{value:g}")
    return str(value)


# ---------------------------------------------------------------- what was read

# The box stops at MAX_TEXT_CHARS, so a paste that reaches it was probably cut short.
if log.truncated or len(text or "") >= MAX_TEXT_CHARS:
    st.warning(
        t("vllm_log.truncated", chars=count(MAX_TEXT_CHARS, ui.separators()), lines=count(MAX_LINES, ui.separators()))
    )
if not log.recognised:
    st.info(t("vllm_log.nothing_recognised"), icon=":material/content_paste:")
else:
    st.caption(
        t(
            "vllm_log.read_summary",
            lines=len(log.recognised),
            version=log.version or "?",
            model=model.name,
            per_token=ui.num(format_bytes(result.bytes_per_token)),
            block=result.block_size,
            tp=result.tp,
        )
    )

# ---------------------------------------------------------------- the main chart: users per context from the pool

if advice.num_blocks is not None:
    longest = max(model.max_position_embeddings, context_tokens, advice.requested_max_model_len or 0)
    figure = users_by_context_figure(
        model=model,
        num_blocks=advice.num_blocks,
        block_size=result.block_size,
        tp=result.tp,
        context_tokens=context_tokens,
        requested_tokens=advice.requested_max_model_len,
        longest_tokens=longest,
        separators=ui.separators(),
        labels={
            "title": t("vllm_log.users_title"),
            "subtitle": t(
                "vllm_log.users_subtitle", model=model.name, blocks=count(advice.num_blocks, ui.separators())
            ),
            "x_title": t("vllm_log.users_x"),
            "y_title": t("vllm_log.users_y"),
            "curve": t("vllm_log.users_curve"),
            "chosen": t("vllm_log.users_chosen"),
            "requested": t("vllm_log.users_requested"),
            "one_user": t("vllm_log.users_one"),
            "users": t("vllm_log.hover_users"),
            "tokens": t("chart.tokens"),
        },
    )
    lesson.chart(figure, key="vl_users_chart")
else:
    st.info(t("vllm_log.no_pool"), icon=":material/info:")

# ---------------------------------------------------------------- the advice

st.subheader(t("vllm_log.advice_title"))
row = st.columns(3)
row[0].metric(
    t("vllm_log.metric_longest"),
    count(advice.longest_context_tokens, ui.separators()) if advice.longest_context_tokens is not None else "—",
    help=t("vllm_log.metric_longest_help"),
)
row[1].metric(
    t("vllm_log.metric_users", context=count(context_tokens, ui.separators())),
    ui.num(f"{advice.users_at_context:,.2f}") if advice.users_at_context is not None else "—",
    help=t("vllm_log.metric_users_help"),
)
row[2].metric(
    t("vllm_log.metric_fp8"),
    count(advice.fp8_longest_context_tokens, ui.separators()) if advice.fp8_longest_context_tokens is not None else "—",
    help=t("vllm_log.metric_fp8_help"),
)
if advice.requested_max_model_len is not None and advice.missing_bytes is not None:
    length = count(advice.requested_max_model_len, ui.separators())
    if advice.missing_bytes <= 0:
        st.success(
            t(
                "vllm_log.advice_fits",
                length=length,
                users=ui.num(f"{advice.users_at_requested or 0:,.2f}"),
            ),
            icon=":material/check_circle:",
        )
    else:
        util = advice.gpu_memory_utilization_to_fit
        message = t(
            "vllm_log.advice_short",
            length=length,
            needed=lesson.mem(advice.needed_bytes or 0.0),
            missing=lesson.mem(advice.missing_bytes),
        )
        if util is not None and util <= 1.0:
            # A flag's value: a point in every language (vLLM rejects "--gpu-memory-utilization 0,95").
            message += " " + t("vllm_log.advice_utilization", u=f"{util:.2f}")
        elif util is not None:
            message += " " + t("vllm_log.advice_utilization_impossible", u=ui.num(f"{util:.2f}"))
        if advice.fp8_users_at_requested is not None:
            message += " " + t("vllm_log.advice_fp8", users=ui.num(f"{advice.fp8_users_at_requested:,.2f}"))
        if advice.longest_context_tokens is not None:
            message += " " + t("vllm_log.advice_shorter", longest=count(advice.longest_context_tokens, ui.separators()))
        st.warning(message, icon=":material/warning:")
    if assumed_total or assumed_utilization:
        st.caption(t("vllm_log.advice_assumed", gpu=gpu.name, u=ui.num(f"{DEFAULT_UTILIZATION:.2f}")))
elif log.no_kv_cache_memory_error:
    st.error(t("vllm_log.no_memory_error"), icon=":material/block:")

with prediction:
    ui.practice.predict(
        "users_fit",
        stem="vllm_log",
        model=model,
        gpu=gpu,
        context_tokens=context_tokens,
        utilization=advice_log.gpu_memory_utilization,
        weights_dtype="int8" if weights == "int8" else model.weights_dtype,
        kv_dtype="bf16" if kv_dtype == "log" else kv_dtype,
        gpus=result.tp,
    )
lesson.takeaway(t("vllm_log.takeaway"))

# ---------------------------------------------------------------- the formula

lang = ui.language()
per_token_check = result.check("bytes_per_token")
pool = log.kv_pool_bytes


if per_token_check is not None and per_token_check.logged and pool:
    implied = rf"\frac{{{lesson.latex_size(pool)}}}{{{latex_number(round(pool / per_token_check.logged), lang)}}}"
    implied += rf" = {lesson.latex_size(per_token_check.logged)}"
else:
    implied = r"\text{" + t("vllm_log.formula_unknown") + "}"
full = all(layer.kind == "full" for layer in model.layer_counts())
if full and result.bytes_per_token > 0:
    kvcore_side = (
        rf"\frac{{2 \cdot {model.num_hidden_layers} \cdot {model.num_key_value_heads} \cdot {model.head_dim}"
        rf" \cdot {latex_number(result.kv_bytes_per_value, lang)}}}{{{result.tp}}}"
        rf" = {lesson.latex_size(result.bytes_per_token)}"
    )
else:
    kvcore_side = lesson.latex_size(result.bytes_per_token)
lesson.formula(t("vllm_log.formula_symbolic"), rf"{implied} \quad\text{{vs}}\quad {kvcore_side}")
st.caption(t("vllm_log.formula_caption"))

# ---------------------------------------------------------------- the checks

st.subheader(t("vllm_log.checks_title"))
absent: list[str] = []
for check in result.checks:
    if check.status == "cannot_check" and check.reason == "not_in_log" and check.logged is None:
        absent.append(t(CHECK_NAMES[check.kind]))
        continue
    with st.container(border=True):
        st.markdown(f"{STATUS_ICONS[check.status]} **{t(CHECK_NAMES[check.kind])}** — {t(STATUS_KEYS[check.status])}")
        st.markdown(
            t(
                "vllm_log.check_numbers",
                logged=shown_value(check.logged, check.unit),
                expected=shown_value(check.expected, check.unit),
                low=shown_value(check.low, check.unit),
                high=shown_value(check.high, check.unit),
            )
            if check.status != "cannot_check"
            else t(
                REASON_KEYS.get(check.reason, "vllm_log.reason_not_in_log"),
                logged=shown_value(check.logged, check.unit),
            )
        )
        st.caption(t(CHECK_MEANINGS[check.kind]))
        if check.status == "differ":
            st.caption(t("vllm_log.differ_hint"))
if absent:
    st.caption(t("vllm_log.absent", checks=", ".join(absent)))
if log.conflicts:
    st.warning(t("vllm_log.conflicts", fields=", ".join(log.conflicts)))

drawn: list[Check] = ratio_checks(result.checks)
if drawn:
    ratio_figure = checks_ratio_figure(
        checks=drawn,
        names={kind: t(key) for kind, key in CHECK_NAMES.items()},
        separators=ui.separators(),
        labels={
            "title": t("vllm_log.ratio_title"),
            "subtitle": t("vllm_log.ratio_subtitle", model=model.name),
            "x_title": t("vllm_log.ratio_x"),
            "y_title": t("vllm_log.ratio_y"),
            "logged": t("vllm_log.logged"),
            "expected": t("vllm_log.expected"),
            "agree": t("vllm_log.status_agree"),
            "differ": t("vllm_log.status_differ"),
            "cannot_check": t("vllm_log.status_cannot_check"),
        },
    )
    lesson.chart(ratio_figure, key="vl_ratio_chart")

# ---------------------------------------------------------------- recognised and ignored lines

st.subheader(t("vllm_log.recognised_title"))
if log.recognised:
    rows = [
        {
            t("vllm_log.column_line"): line.line_number,
            t("vllm_log.column_field"): name,
            t("vllm_log.column_value"): field_value(name, getattr(log, name, None)),
            t("vllm_log.column_text"): line.text,
        }
        for line in log.recognised
        for name in line.fields
    ]
    st.dataframe(rows, hide_index=True)
else:
    st.caption(t("vllm_log.recognised_none"))
with st.expander(t("vllm_log.ignored_title", n=len(log.ignored)), expanded=False):
    if log.ignored:
        st.code("\n".join(log.ignored), language=None)
    else:
        st.caption(t("vllm_log.ignored_none"))

glossary.terms_used("vllm_log")
