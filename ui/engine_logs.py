"""A pasted start-up log of SGLang, llama.cpp, Ollama or TensorRT-LLM, line by line beside kvcore.

The paste page (lessons/vllm_log.py) reads vLLM itself; when the lines are another engine's
(kvcore.detect_engine), it hands them here: every number the engine printed, recomputed by that
engine's rules (kvcore.reconcile_engine_log), with what the line means.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

import kvcore
import ui
from charts.formatting import count
from charts.vllm_log import checks_ratio_figure, ratio_checks
from kvcore.log_lines import Check
from ui import lesson, t

#: (engine, check kind) → the catalogue key of what that printed number means.
CHECK_TEXTS: Mapping[tuple[str, str], str] = {
    ("sglang", "max_total_num_tokens"): "engine_logs.sglang_max_total_num_tokens",
    ("sglang", "k_size_bytes"): "engine_logs.sglang_k_size_bytes",
    ("sglang", "v_size_bytes"): "engine_logs.sglang_v_size_bytes",
    ("sglang", "kv_size_bytes"): "engine_logs.sglang_kv_size_bytes",
    ("sglang", "max_running_requests"): "engine_logs.sglang_max_running_requests",
    ("sglang", "context_len"): "engine_logs.sglang_context_len",
    ("sglang", "max_prefill_tokens"): "engine_logs.sglang_max_prefill_tokens",
    ("sglang", "memory_pool_end_avail_bytes"): "engine_logs.sglang_memory_pool_end_avail_bytes",
    ("trtllm", "primary_blocks"): "engine_logs.trtllm_primary_blocks",
    ("trtllm", "secondary_blocks"): "engine_logs.trtllm_secondary_blocks",
    ("trtllm", "max_pages_per_sequence"): "engine_logs.trtllm_max_pages_per_sequence",
    ("trtllm", "max_tokens_in_paged_kv_cache"): "engine_logs.trtllm_max_tokens_in_paged_kv_cache",
    ("trtllm", "allocated_bytes"): "engine_logs.trtllm_allocated_bytes",
    ("trtllm", "available_kv_memory_bytes"): "engine_logs.trtllm_available_kv_memory_bytes",
    ("trtllm", "kv_size_per_token"): "engine_logs.trtllm_kv_size_per_token",
    ("trtllm", "estimated_max_memory_bytes"): "engine_logs.trtllm_estimated_max_memory_bytes",
    ("trtllm", "final_max_tokens"): "engine_logs.trtllm_final_max_tokens",
    ("trtllm", "estimation_allocated_bytes"): "engine_logs.trtllm_estimation_allocated_bytes",
    ("trtllm", "tmp_kv_memory_bytes"): "engine_logs.trtllm_tmp_kv_memory_bytes",
}
#: (engine, the start of a check kind) → its catalogue key, for kinds that come in families (llama.cpp prints a
#: line per cache: cells_full, cells_swa, k_full_bytes, …). The longest matching start wins.
CHECK_FAMILIES: Mapping[tuple[str, str], str] = {
    ("llama.cpp", "cells"): "engine_logs.llamacpp_cells",
    ("llama.cpp", "iswa_"): "engine_logs.llamacpp_iswa_cells",
    ("llama.cpp", "kv_size"): "engine_logs.llamacpp_cells",
    ("llama.cpp", "n_ctx"): "engine_logs.llamacpp_n_ctx",
    ("llama.cpp", "size"): "engine_logs.llamacpp_size_bytes",
    ("llama.cpp", "kv_self_bytes"): "engine_logs.llamacpp_size_bytes",
    ("llama.cpp", "k_"): "engine_logs.llamacpp_k_bytes",
    ("llama.cpp", "v_"): "engine_logs.llamacpp_v_bytes",
    ("llama.cpp", "kv_buffer_bytes"): "engine_logs.llamacpp_kv_buffer_bytes",
    ("llama.cpp", "layers"): "engine_logs.llamacpp_layers",
    ("llama.cpp", "streams"): "engine_logs.llamacpp_streams",
    ("llama.cpp", "n_layer"): "engine_logs.llamacpp_model_shape",
    ("llama.cpp", "n_head_kv"): "engine_logs.llamacpp_model_shape",
    ("llama.cpp", "n_embd_k_gqa"): "engine_logs.llamacpp_model_shape",
    ("llama.cpp", "n_swa"): "engine_logs.llamacpp_model_shape",
    ("llama.cpp", "recurrent"): "engine_logs.llamacpp_recurrent_bytes",
    ("ollama", "layers."): "engine_logs.ollama_layers",
    ("ollama", "memory.graph"): "engine_logs.ollama_graph",
    ("ollama", "memory.required.kv"): "engine_logs.ollama_required_kv",
    ("ollama", "memory.required.full"): "engine_logs.ollama_required_full",
    ("ollama", "memory.required.partial"): "engine_logs.ollama_required_partial",
    ("ollama", "memory.required.allocations"): "engine_logs.ollama_required_partial",
    ("ollama", "memory.weights"): "engine_logs.ollama_weights",
    ("ollama", "kv cache"): "engine_logs.ollama_device_kv",
    ("ollama", "model weights"): "engine_logs.ollama_device_weights",
    ("ollama", "compute graph"): "engine_logs.ollama_device_graph",
}
#: A check's status → its catalogue key (the vLLM reader's words).
STATUS_KEYS = {
    "agree": "vllm_log.status_agree",
    "differ": "vllm_log.status_differ",
    "cannot_check": "vllm_log.status_cannot_check",
}
#: Material icons (Streamlit markdown), not emoji: a browser without an emoji font shows those as boxes.
STATUS_ICONS = {"agree": ":material/check_circle:", "differ": ":material/cancel:", "cannot_check": ":material/remove:"}


def value_text(value: float | None, unit: str) -> str:
    """A logged or recomputed number in its unit, in the page's language."""
    if value is None:
        return "—"
    if unit == "bytes":
        return lesson.mem(value)
    if unit == "bytes_per_token":
        return t("vllm_log.per_token", size=lesson.size(value))
    return count(value, ui.separators())


def check_name(engine: str, check: Check) -> str:
    """What the printed number means: its own sentence, else its family's after the field's name, else the name."""
    key = CHECK_TEXTS.get((engine, check.kind))
    if key is not None:
        return t(key)
    starts = [start for owner, start in CHECK_FAMILIES if owner == engine and check.kind.startswith(start)]
    if not starts:
        return f"`{check.kind}`"
    return f"`{check.kind}`: {t(CHECK_FAMILIES[(engine, max(starts, key=len))])}"


def show_engine_log(
    reading: kvcore.EngineLogReading, model: kvcore.ModelSpec, *, settings: Mapping[str, object] | None = None
) -> tuple[Check, ...]:
    """The other engine's paste: which engine, every number beside kvcore's, the ratio chart. Returns the checks."""
    name = kvcore.ENGINE_NAMES[reading.engine]
    st.info(t("engine_logs.detected", engine=name, lines=len(reading.recognised)), icon=":material/search:")
    try:
        checks = kvcore.reconcile_engine_log(reading, model, settings=settings)
    except ValueError as error:
        lesson.stop_with(error)
    st.subheader(t("engine_logs.checks_title", engine=name, model=model.name))
    rows = [
        "| " + " | ".join((t("engine_logs.col_line"), t("vllm_log.logged"), t("vllm_log.expected"), "")) + " |",
        "|---|---:|---:|---|",
    ]
    for check in checks:
        status = f"{STATUS_ICONS[check.status]} {t(STATUS_KEYS[check.status])}"
        if check.reason:
            status += f" ({check.reason.replace('|', '/')})"
        rows.append(
            f"| {check_name(reading.engine, check)} | {value_text(check.logged, check.unit)} | "
            f"{value_text(check.expected, check.unit)} | {status} |"
        )
    st.markdown("\n".join(rows))
    if any(check.status == "differ" for check in checks):
        st.caption(t("engine_logs.differ_hint"))
    if reading.recognised:
        # What was read, as the engine printed it: shown as code, never as markup.
        st.markdown(f"**{t('engine_logs.read_title', count=len(reading.recognised))}**")
        st.code("\n".join(line.text for line in reading.recognised), language="text")
    if reading.truncated:
        st.warning(t("engine_logs.truncated"))
    drawn = ratio_checks(checks)
    if drawn:
        figure = lesson.figure(
            checks_ratio_figure,
            checks=drawn,
            names={check.kind: check.kind for check in drawn},
            separators=ui.separators(),
            labels={
                "title": t("engine_logs.ratio_title", engine=name),
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
        lesson.chart(figure, key="vl_engine_ratio_chart")
    return checks
