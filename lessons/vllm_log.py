"""Paste your vLLM log: its start-up numbers beside kvcore's, and what to change to fit more."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import streamlit as st

import kvcore
import ui
import ui.engine_logs
import ui.practice
from charts.formatting import count, times
from charts.vllm_log import checks_ratio_figure, ratio_checks, users_by_context_figure
from kvcore.log_lines import MAX_LINES, MAX_TEXT_CHARS
from kvcore.units import GiB
from kvcore.vllm_log import (
    MAX_UTILIZATION,
    Check,
    StartupAdvice,
    VllmLog,
    log_flags,
    parse_vllm_log,
    read_log_header,
    reconcile,
    release_from_log,
    startup_advice,
)
from ui import glossary, lesson, t
from ui.errors import error_text
from ui.figure_cache import spec_hash_funcs
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
#: A header line of data/vllm_logs ("# gpu: rtx-3090"), as kvcore.vllm_log.read_log_header reads them.
HEADER_LINE = re.compile(r"^#\s*[a-z][a-z0-9\-]*:")
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
    "model_mismatch": "vllm_log.reason_model_mismatch",
    "hybrid_state_layers": "vllm_log.reason_hybrid_state_layers",
}
#: How the release was found (kvcore.vllm_log.release_from_log's evidence codes).
EVIDENCE_KEYS = {
    "version_line": "vllm_log.evidence_version_line",
    "one_line_tokens": "vllm_log.evidence_one_line_tokens",
    "cuda_graphs_subtracted": "vllm_log.evidence_cuda_graphs_subtracted",
    "cuda_graphs_estimated": "vllm_log.evidence_cuda_graphs_estimated",
    "rounded_gib": "vllm_log.evidence_rounded_gib",
    "model_loading_memory": "vllm_log.evidence_model_loading_memory",
    "available_and_model_loading": "vllm_log.evidence_available_and_model_loading",
    "available_two_decimals": "vllm_log.evidence_available_two_decimals",
    "refusal_estimated_length": "vllm_log.evidence_refusal_estimated_length",
    "tokens_without_available": "vllm_log.evidence_tokens_without_available",
    "refusal_gib": "vllm_log.evidence_refusal_gib",
    "refusal_gb": "vllm_log.evidence_refusal_gb",
    "profiling_results_typo": "vllm_log.evidence_profiling_results_typo",
    "profiling_results": "vllm_log.evidence_profiling_results",
    "v0_model_loading": "vllm_log.evidence_v0_model_loading",
    "device_blocks": "vllm_log.evidence_device_blocks",
    "profiling_takes_gpu_blocks": "vllm_log.evidence_profiling_takes_gpu_blocks",
    "profiling_takes": "vllm_log.evidence_profiling_takes",
    "gpu_cpu_blocks_concurrency": "vllm_log.evidence_gpu_cpu_blocks_concurrency",
    "gpu_cpu_blocks": "vllm_log.evidence_gpu_cpu_blocks",
    "gpu_blocks_alone": "vllm_log.evidence_gpu_blocks_alone",
}
#: The budget's terms as kvcore.budget names them.
TERM_KEYS = {
    "weights": "vllm_log.term_weights",
    "activation_peak": "vllm_log.term_activation_peak",
    "non_torch": "vllm_log.term_non_torch",
    "cuda_graphs": "vllm_log.term_cuda_graphs",
}
#: The log's total memory and the sidebar GPU's differ by more than this: the log ran on another card.
GPU_MEMORY_TOLERANCE = 0.03
BYTE_FIELDS = frozenset(item.name for item in dataclasses.fields(VllmLog) if item.name.endswith("_bytes"))


@lesson.cache_data(show_spinner=False)
def load_excerpts() -> dict[str, tuple[str, str, str]]:
    """Each excerpt by name: (its source URL, the log without its header, the GPU id the header names, or "").

    The header (``# key: value`` lines: source, release, model, GPU, flags…) is the data set's, not the
    log's: a student pastes what vLLM printed. Missing files are skipped.
    """
    excerpts = {}
    for name, *_ in EXCERPTS:
        try:
            text = (EXCERPTS_DIR / f"{name}.txt").read_text(encoding="utf-8")
        except OSError:
            continue
        header = read_log_header(text)
        lines = text.splitlines(keepends=True)
        first_log_line = next((i for i, line in enumerate(lines) if not HEADER_LINE.match(line.strip())), len(lines))
        body = "".join(lines[first_log_line:])
        gpu_id = header.get("gpu", "").split(" ")[0]
        excerpts[name] = (header.get("source", "").split(" ")[0], body, gpu_id)
    return excerpts


@lesson.cache_data(show_spinner=False, max_entries=256, hash_funcs=spec_hash_funcs())
def cached_advice(log: VllmLog, model: Any, gpu: Any, **settings: Any) -> StartupAdvice:
    """kvcore.vllm_log.startup_advice once per log, model, GPU and settings (it runs a few dozen start-ups)."""
    return startup_advice(log, model, gpu, **settings)


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
                values={"vl_text": excerpts[name][1], "model": model_id, "vl_weights": weights, "vl_kv_dtype": "log"}
                | ({"gpu": excerpts[name][2]} if excerpts[name][2] in ui.gpus() else {}),
                # The request length asked about is the learner's; so is the GPU when the log names none we know.
                keeps=frozenset({"vl_context"} | (set() if excerpts[name][2] in ui.gpus() else {"gpu"})),
            )
            for name, model_id, weights, label_key in shown
        ],
        key="vl_presets",
    )

# The paste is not bound to the URL: a log is too long for an address.
st.session_state.setdefault("vl_text", excerpts.get(DEFAULT_EXCERPT, ("", "", ""))[1])
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
        labels=KV_DTYPE_KEYS,
        help=t("vllm_log.kv_dtype_help"),
    )
with controls[2], lesson.secondary():
    weights = lesson.choice(
        t("vllm_log.weights"),
        key="vl_weights",
        options=WEIGHTS,
        default="released",
        labels=WEIGHTS_KEYS,
        help=t("vllm_log.weights_help", dtype=model.weights_dtype),
    )

# Another engine's lines (kvcore.detect_engine): read and checked by that engine's rules, then the page ends.
engine = kvcore.detect_engine(text or "")
if engine is not None and engine != "vllm":
    ui.engine_logs.show_engine_log(
        kvcore.read_engine_log(text or "", engine=engine),
        model,
        settings={} if kv_dtype == "log" else kvcore.log_cache_settings(engine, 8 if kv_dtype == "fp8" else 16),
    )
    lesson.takeaway(t("engine_logs.takeaway"))
    glossary.terms_used("vllm_log")
    st.stop()

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
release = release_from_log(log)
flags = log_flags(log, text or "")
# One budget for every change the page suggests: vLLM's start-up from the GPU alone, with the log's settings.
startup: StartupAdvice | None = None
startup_problem = ""
try:
    startup = cached_advice(
        log,
        model,
        gpu,
        flags=flags,
        release=release,
        kv_dtype=None if kv_dtype == "log" else kv_dtype,
        weights_dtype="int8" if weights == "int8" else None,
    )
except ValueError as error:
    startup_problem = error_text(error)


def shown_value(value: float | None, unit: str) -> str:
    """A logged or expected number in its unit, for the text."""
    if value is None:
        return "—"
    if unit == "bytes":
        return lesson.mem(value)
    if unit == "bytes_per_token":
        return t("vllm_log.per_token", size=lesson.size(value))
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
mismatch = result.model_mismatch
if mismatch is not None:
    # Before anything says "agrees": these numbers cannot be this model's at these settings.
    st.error(
        t(
            "vllm_log.model_mismatch",
            model=model.name,
            implied=lesson.size(mismatch.implied_bytes_per_token),
            low=lesson.size(mismatch.low),
            high=lesson.size(mismatch.high),
            stores=lesson.size(mismatch.model_bytes_per_token),
            ratio=ui.num(f"{mismatch.ratio:.2f}"),
            tp=mismatch.tp,
            b=ui.num(f"{mismatch.kv_bytes_per_value:g}"),
        ),
        icon=":material/dangerous:",
    )
if not log.recognised:
    st.info(t("vllm_log.nothing_recognised"), icon=":material/content_paste:")
else:
    st.caption(
        t(
            "vllm_log.read_summary",
            lines=ui.plural("vllm_log.lines_recognized", len(log.recognised)),
            version=log.version or "?",
            model=model.name,
            per_token=lesson.size(result.bytes_per_token),
            block=result.block_size,
            tp=result.tp,
        )
    )
    if release is not None:
        st.caption(
            t(
                "vllm_log.release_inferred" if release.inferred else "vllm_log.release_stated",
                release=release.release,
                era=release.era,
                evidence=t(EVIDENCE_KEYS.get(release.evidence, "vllm_log.evidence_version_line")),
            )
        )
    else:
        st.caption(t("vllm_log.release_unknown", newest=kvcore.NEWEST_RELEASE))

# ---------------------------------------------------------------- the main chart: users per context from the pool

if advice.num_blocks is not None:
    longest = max(model.max_position_embeddings, context_tokens, advice.requested_max_model_len or 0)
    figure = lesson.figure(
        users_by_context_figure,
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


def changes_that_fit(plan: StartupAdvice) -> list[str]:
    """What would make the estimated start-up fit, each from the same budget (kvcore.vllm_log.startup_advice)."""
    said = []
    util = plan.utilization_to_fit
    if util is None:
        said.append(t("vllm_log.advice_utilization_none", top=f"{MAX_UTILIZATION:.2f}"))
    elif util > plan.utilization:
        # A flag's value: a point in every language (vLLM rejects "--gpu-memory-utilization 0,95").
        said.append(t("vllm_log.advice_utilization", u=f"{util:.2f}"))
    if plan.longest_max_model_len is None:
        said.append(t("vllm_log.advice_nothing_fits"))
    elif plan.longest_max_model_len < plan.max_model_len:
        said.append(t("vllm_log.advice_shorter", longest=str(plan.longest_max_model_len)))
    if plan.fp8_fits is True:
        said.append(t("vllm_log.advice_fp8"))
    elif plan.fp8_fits is False:
        said.append(t("vllm_log.advice_fp8_not"))
    if plan.tp_to_fit is not None:
        said.append(t("vllm_log.advice_more_gpus", n=plan.tp_to_fit))
    else:
        said.append(t("vllm_log.advice_more_gpus_none"))
    return said


log_short = advice.requested_max_model_len is not None and advice.missing_bytes is not None and advice.missing_bytes > 0
if mismatch is not None:
    st.info(t("vllm_log.advice_needs_model"), icon=":material/info:")
elif advice.requested_max_model_len is not None and advice.missing_bytes is not None:
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
        message = t(
            "vllm_log.advice_short",
            length=length,
            needed=lesson.mem(advice.needed_bytes or 0.0),
            missing=lesson.mem(advice.missing_bytes),
        )
        if startup is not None and startup.fits:
            message += " " + t("vllm_log.advice_estimate_fits", gpu=gpu.name)
        elif startup is not None:
            message += (
                " " + t("vllm_log.advice_from_estimate", gpu=gpu.name) + " " + " ".join(changes_that_fit(startup))
            )
        st.warning(message, icon=":material/warning:")
    if assumed_total or assumed_utilization:
        st.caption(t("vllm_log.advice_assumed", gpu=gpu.name, u=ui.num(f"{DEFAULT_UTILIZATION:.2f}")))
elif log.no_kv_cache_memory_error:
    st.error(t("vllm_log.no_memory_error"), icon=":material/block:")
elif startup is not None and log.recognised and not startup.fits:
    # The log does not say whether it fit: the estimate does, from the same budget as its advice.
    st.warning(
        t("vllm_log.estimate_short", length=count(startup.max_model_len, ui.separators()), gpu=gpu.name)
        + " "
        + " ".join(changes_that_fit(startup)),
        icon=":material/warning:",
    )

# ---------------------------------------------------------------- the same settings from the GPU alone

st.subheader(t("vllm_log.estimate_title"))
if startup is None:
    st.error(t("vllm_log.estimate_failed", detail=startup_problem), icon=":material/error:")
else:
    estimate = startup.estimate
    budget = estimate.log.budget
    if budget.kv_pool_bytes < 0:  # said first: the pool below reads "does not fit"
        st.warning(
            t("vllm_log.estimate_no_pool", gpu=gpu.name, model=model.name, usable=lesson.mem(budget.usable_bytes)),
            icon=":material/block:",
        )
    st.caption(
        t(
            "vllm_log.estimate_caption",
            release=estimate.release.label,
            era=estimate.release.era,
            gpu=gpu.name,
            memory=lesson.mem(budget.memory_bytes),
            u=f"{startup.utilization:.2f}",
            length=str(startup.max_model_len),
            tp=startup.estimate.log.tp,
            kv=startup.kv_dtype,
        )
    )
    if release is not None and release.era != estimate.release.era:
        st.caption(t("vllm_log.estimate_other_era", log_era=release.era, era=estimate.release.era))
    logged_total = log.total_gpu_memory_bytes
    if logged_total and abs(logged_total - budget.memory_bytes) > GPU_MEMORY_TOLERANCE * budget.memory_bytes:
        st.info(
            t("vllm_log.estimate_other_gpu", logged=lesson.mem(logged_total), gpu=gpu.name,
              memory=lesson.mem(budget.memory_bytes)),
            icon=":material/memory:",
        )  # fmt: skip
    pools = st.columns(2)
    pools[0].metric(
        t("vllm_log.metric_log_pool"),
        lesson.mem(log.kv_pool_bytes) if log.kv_pool_bytes is not None else "—",
        help=t("vllm_log.metric_log_pool_help"),
    )
    pools[1].metric(
        t("vllm_log.metric_estimate_pool"),
        lesson.pool_mem(budget.kv_pool_bytes),
        help=t("vllm_log.metric_estimate_pool_help"),
    )
    budget_rows = [
        {
            t("vllm_log.column_term"): t("vllm_log.term_usable", u=ui.num(f"{startup.utilization:.2f}")),
            t("vllm_log.column_bytes"): lesson.mem(budget.usable_bytes),
        }
    ]
    budget_rows += [
        {
            t("vllm_log.column_term"): t(TERM_KEYS[term.name]) if term.name in TERM_KEYS else term.name,
            t("vllm_log.column_bytes"): "− " + lesson.mem(term.bytes),
        }
        for term in budget.terms
    ]
    budget_rows.append(
        {
            t("vllm_log.column_term"): t("vllm_log.term_kv_pool"),
            t("vllm_log.column_bytes"): lesson.pool_mem(budget.kv_pool_bytes),
        }
    )
    st.table(budget_rows)  # a small fixed table; st.dataframe stays the recognised lines
    verdict = "vllm_log.estimate_fits" if startup.fits else "vllm_log.estimate_does_not_fit"
    st.caption(
        t(
            verdict,
            length=count(startup.max_model_len, ui.separators()),
            blocks=count(estimate.log.num_blocks, ui.separators()),
        )
    )

# The predict box asks about the pool the metrics above come from: the log's blocks, else the estimate's pool.
page_pool = advice.num_blocks * result.block_bytes if advice.num_blocks is not None else None
if page_pool is None and startup is not None:
    page_pool = startup.estimate.log.kv_pool_bytes
predict_utilization = advice_log.gpu_memory_utilization or DEFAULT_UTILIZATION
weights_name = "int8" if weights == "int8" else model.weights_dtype
overhead_gib = 0.0
if page_pool is not None:
    seed_weights: float | None
    try:
        seed_weights = kvcore.model_weights_bytes(
            model, bytes_per_param=kvcore.bytes_per_value(weights_name), tp=result.tp
        )
    except ValueError:
        seed_weights = None
    if seed_weights is not None:
        overhead_gib = max(gpu.memory_bytes * predict_utilization - seed_weights - max(page_pool, 0.0), 0.0) / GiB
knobs: dict[str, Any] = {
    "context_tokens": context_tokens,
    "utilization": predict_utilization,
    "weights_dtype": weights_name,
    "kv_dtype": "fp8" if result.kv_bytes_per_value == 1.0 else "bf16",
    "gpus": result.tp,
}
if overhead_gib > 0:
    knobs["overhead_gib"] = overhead_gib
with prediction:
    ui.practice.predict("users_fit", stem="vllm_log", model=model, gpu=gpu, **knobs)
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
    ratio_figure = lesson.figure(
        checks_ratio_figure,
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
    lesson.table(rows)
else:
    st.caption(t("vllm_log.recognised_none"))
with st.expander(t("vllm_log.ignored_title", n=len(log.ignored)), expanded=False):
    if log.ignored:
        st.code("\n".join(log.ignored), language=None)
    else:
        st.caption(t("vllm_log.ignored_none"))

glossary.terms_used("vllm_log")
