"""kvcore's errors in the learner's language: a KvError's code picks the text, its fields fill it in.

kvcore raises :class:`kvcore.errors.KvError` with a stable ``code`` and ``fields``
(the quantity's ``name`` in kvcore's words, the ``value`` it got, …) and an English
sentence. :func:`error_text` looks the code up in the catalogue (``i18n/*/errors.json``,
key ``errors.<code>``), translates the quantity's name (``errors.name.*``), writes the
numbers with the language's decimal mark, and falls back to the English sentence for a
code the catalogue does not know (or for any other exception).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from types import MappingProxyType

from i18n import catalogue, localize_number, translate
from kvcore.errors import KvError
from ui import language

#: KvError code → its text. tests/kvcore/test_errors.py checks every code kvcore raises is here.
TEXTS: Mapping[str, str] = MappingProxyType(
    {
        # kvcore.checks
        "not_a_number": "errors.not_a_number",
        "not_positive": "errors.not_positive",
        "negative": "errors.negative",
        "not_fraction": "errors.not_fraction",
        "not_whole": "errors.not_whole",
        # specs, cache, quantization, paging
        "unknown_dtype": "errors.unknown_dtype",
        "kv_heads_not_dividing": "errors.kv_heads_not_dividing",
        "sliding_window_missing": "errors.sliding_window_missing",
        "active_exceeds_total": "errors.active_exceeds_total",
        "bad_layer_pattern": "errors.bad_layer_pattern",
        "empty_layer_pattern": "errors.empty_layer_pattern",
        "sliding_layers_exceed_layers": "errors.sliding_layers_exceed_layers",
        "tp_not_dividing": "errors.tp_not_dividing",
        # kvcore.engines
        "engine_needs_gpu": "errors.engine_needs_gpu",
        "unknown_engine": "errors.unknown_engine",
        "unknown_cache_bits": "errors.unknown_cache_bits",
        # kvcore.trtllm
        "trtllm_needs_memory": "errors.trtllm_needs_memory",
        "trtllm_bad_fraction": "errors.trtllm_bad_fraction",
        "trtllm_unknown_release": "errors.trtllm_unknown_release",
        "trtllm_unknown_kv_dtype": "errors.trtllm_unknown_kv_dtype",
        "trtllm_unknown_backend": "errors.trtllm_unknown_backend",
        "trtllm_no_kv_layers": "errors.trtllm_no_kv_layers",
        # kvcore.sglang
        "sglang_needs_gpu": "errors.sglang_needs_gpu",
        "sglang_unknown_release": "errors.sglang_unknown_release",
        "sglang_unknown_kv_cache_dtype": "errors.sglang_unknown_kv_cache_dtype",
        "sglang_hybrid_unsupported": "errors.sglang_hybrid_unsupported",
        "sglang_bad_fraction": "errors.sglang_bad_fraction",
        "sglang_context_unknown": "errors.sglang_context_unknown",
        # kvcore.ollama
        "ollama_unknown_release": "errors.ollama_unknown_release",
        "ollama_release_unmodelled": "errors.ollama_release_unmodelled",
        "ollama_unknown_cache_type": "errors.ollama_unknown_cache_type",
        "ollama_cache_type_unsupported": "errors.ollama_cache_type_unsupported",
        "params_unknown": "errors.params_unknown",
        "not_a_kv_format": "errors.not_a_kv_format",
        "bad_tensor_shape": "errors.bad_tensor_shape",
        "unknown_scale_axis": "errors.unknown_scale_axis",
        "group_size_not_dividing": "errors.group_size_not_dividing",
        "all_zeros": "errors.all_zeros",
        "too_many_outliers": "errors.too_many_outliers",
        "unknown_scheme": "errors.unknown_scheme",
        "no_requests": "errors.no_requests",
        "lengths_not_whole": "errors.lengths_not_whole",
        "request_too_long": "errors.request_too_long",
        "no_layers": "errors.no_layers",
        "above_maximum": "errors.above_maximum",
        "last_step_exceeds_context": "errors.last_step_exceeds_context",
        "no_mla_layers": "errors.no_mla_layers",
        # kvcore.budget, kvcore.vllm_pool
        "repeated_budget_term": "errors.repeated_budget_term",
        "pp_exceeds_layers": "errors.pp_exceeds_layers",
        "experts_per_token_exceeds_experts": "errors.experts_per_token_exceeds_experts",
        "unknown_checkpoint_format": "errors.unknown_checkpoint_format",
        "unknown_vllm_version": "errors.unknown_vllm_version",
        # kvcore.llamacpp
        "llamacpp_unknown_cache_type": "errors.llamacpp_unknown_cache_type",
        "llamacpp_row_not_blocks": "errors.llamacpp_row_not_blocks",
        "llamacpp_quantized_v_needs_flash_attn": "errors.llamacpp_quantized_v_needs_flash_attn",
        "llamacpp_ctx_seq_zero": "errors.llamacpp_ctx_seq_zero",
        "llamacpp_layer_heads_length": "errors.llamacpp_layer_heads_length",
        "llamacpp_log_no_context": "errors.llamacpp_log_no_context",
        "llamacpp_unknown_gguf_type": "errors.llamacpp_unknown_gguf_type",
        "log_not_estimable": "errors.log_not_estimable",
        # kvcore.agent
        "no_tensor_parallel_size": "errors.no_tensor_parallel_size",
        "no_kv_blocks": "errors.no_kv_blocks",
        "no_cache_formats": "errors.no_cache_formats",
        "attention_not_finite": "errors.attention_not_finite",
        "attention_no_mass": "errors.attention_no_mass",
        # kvcore.data
        "data_unreadable": "errors.data_unreadable",
        "data_bad_header": "errors.data_bad_header",
        "data_field_count": "errors.data_field_count",
        "data_no_rows": "errors.data_no_rows",
        "data_duplicate_id": "errors.data_duplicate_id",
        "data_empty_field": "errors.data_empty_field",
        "data_not_a_number": "errors.data_not_a_number",
        "data_not_positive": "errors.data_not_positive",
        "data_not_whole": "errors.data_not_whole",
        "data_bad_url": "errors.data_bad_url",
        "data_bad_category": "errors.data_bad_category",
        "data_bad_row": "errors.data_bad_row",
        # kvcore.model_code
        "model_code_not_text": "errors.model_code_not_text",
        "model_code_too_long": "errors.model_code_too_long",
        "model_code_bad_characters": "errors.model_code_bad_characters",
        "model_code_not_a_code": "errors.model_code_not_a_code",
        "model_code_impossible": "errors.model_code_impossible",
        "pattern_not_codable": "errors.pattern_not_codable",
        "model_code_bad_pattern": "errors.model_code_bad_pattern",
        "model_code_bad_count": "errors.model_code_bad_count",
        "model_code_too_many_layers": "errors.model_code_too_many_layers",
        "model_code_empty_pattern": "errors.model_code_empty_pattern",
        "model_code_empty_field": "errors.model_code_empty_field",
        "model_code_repeated_field": "errors.model_code_repeated_field",
        "model_code_unknown_format": "errors.model_code_unknown_format",
        "model_code_unknown_field": "errors.model_code_unknown_field",
        "model_code_missing_fields": "errors.model_code_missing_fields",
        "model_code_not_whole": "errors.model_code_not_whole",
        "model_code_out_of_range": "errors.model_code_out_of_range",
        "model_code_not_a_number": "errors.model_code_not_a_number",
        "model_code_bad_escape": "errors.model_code_bad_escape",
        "model_code_bad_name_character": "errors.model_code_bad_name_character",
        "model_code_name_not_utf8": "errors.model_code_name_not_utf8",
        "model_code_name_too_long": "errors.model_code_name_too_long",
        # kvcore.errors.ConfigError (kvcore.hf_config's codes)
        # kvcore.scheduler
        "unknown_distribution": "errors.unknown_distribution",
        "trace_shape": "errors.trace_shape",
        "arrivals_unsorted": "errors.arrivals_unsorted",
        "unknown_preemption_mode": "errors.unknown_preemption_mode",
        "pool_holds_no_block": "errors.pool_holds_no_block",
        "request_exceeds_pool": "errors.request_exceeds_pool",
        "swap_is_v0_only": "errors.swap_is_v0_only",
        "invalid_json": "errors.invalid_json",
        "not_an_object": "errors.not_an_object",
        "too_large": "errors.too_large",
        "file_not_found": "errors.file_not_found",
        "file_unreadable": "errors.file_unreadable",
        "missing_field": "errors.missing_field",
        "wrong_type": "errors.wrong_type",
        "out_of_range": "errors.out_of_range",
        "inconsistent": "errors.inconsistent",
        "unknown_value": "errors.unknown_value",
    }
)

#: The quantity names kvcore gives checks (``fields["name"]``) → their text; other names are shown as kvcore wrote them.
NAMES: Mapping[str, str] = MappingProxyType(
    {
        "context tokens": "errors.name.context_tokens",
        "concurrency": "errors.name.concurrency",
        "batch": "errors.name.batch",
        "tokens": "errors.name.tokens",
        "prompt tokens": "errors.name.prompt_tokens",
        "prompt length (tokens)": "errors.name.prompt_tokens",
        "output tokens": "errors.name.output_tokens",
        "output length (tokens)": "errors.name.output_tokens",
        "arrival time (s)": "errors.name.arrival_time",
        "GPU memory": "errors.name.gpu_memory",
        "memory": "errors.name.gpu_memory",
        "GPU memory utilization": "errors.name.gpu_memory_utilization",
        "gpu_memory_utilization": "errors.name.gpu_memory_utilization",
        "usable share of GPU memory": "errors.name.gpu_memory_utilization",
        "weights": "errors.name.weights",
        "overhead": "errors.name.overhead",
        "bandwidth": "errors.name.bandwidth",
        "peak throughput": "errors.name.peak_throughput",
        "BF16 dense throughput": "errors.name.bf16_throughput",
        "MFU": "errors.name.mfu",
        "MBU": "errors.name.mbu",
        "efficiency": "errors.name.mbu",
        "block size": "errors.name.block_size",
        "block size (tokens)": "errors.name.block_size",
        "max model length": "errors.name.max_model_len",
        "max model length (tokens)": "errors.name.max_model_len",
        "max_model_len": "errors.name.max_model_len",
        "tensor parallel size": "errors.name.tp",
        "tp": "errors.name.tp",
        "pipeline parallel size": "errors.name.pp",
        "GPUs": "errors.name.gpus",
        "KV pool": "errors.name.kv_pool",
        "pool": "errors.name.kv_pool",
        "bytes per value": "errors.name.bytes_per_value",
        "bytes per token": "errors.name.bytes_per_token",
        "layers": "errors.name.layers",
        "num_hidden_layers": "errors.name.layers",
        "heads": "errors.name.heads",
        "num_attention_heads": "errors.name.heads",
        "num_key_value_heads": "errors.name.kv_heads",
        "GQA KV heads": "errors.name.kv_heads",
        "head dim": "errors.name.head_dim",
        "head_dim": "errors.name.head_dim",
        "hidden_size": "errors.name.hidden_size",
        "sliding window": "errors.name.sliding_window",
        "sliding_window": "errors.name.sliding_window",
        "requests": "errors.name.requests",
        "number of requests": "errors.name.requests",
        "price per GPU-hour": "errors.name.price",
        "group size": "errors.name.group_size",
        "bits": "errors.name.bits",
    }
)

#: Fields shown in front of the sentence: the data row, then the spec the quantity belongs to.
_PREFIXES = ("row", "where")


def error_text(error: BaseException, lang: str | None = None) -> str:
    """`error` as one sentence in `lang` (default: the session's language).

    A KvError whose code the catalogue knows is translated with its fields; its
    ``cause`` (a KvError it wraps) is translated into ``{detail}``. Anything else, or
    a text whose fields do not fit, is the English message as kvcore wrote it.
    """
    lang = lang or language()
    if not isinstance(error, KvError) or error.code not in TEXTS:
        return str(error)
    values = {key: _shown(value, lang) for key, value in error.fields.items()}
    name = error.fields.get("name")
    if isinstance(name, str) and name in NAMES:
        values["name"] = translate(lang, NAMES[name])
    cause = error.fields.get("cause")
    values["detail"] = error_text(cause, lang) if isinstance(cause, KvError) else str(error.fields.get("detail", error))
    values.setdefault("field", "?")
    if not values["field"]:
        values["field"] = "?"
    try:
        sentence = translate(lang, TEXTS[error.code], **values)
    except (KeyError, IndexError, ValueError):
        return str(error)
    if catalogue(lang)[TEXTS[error.code]].startswith("{name}"):
        sentence = sentence[:1].upper() + sentence[1:]  # "tokens de contexto deve…" starts a sentence
    return ": ".join([*(values[key] for key in _PREFIXES if error.fields.get(key)), sentence])


def _shown(value: object, lang: str) -> str:
    """A field as text: numbers with the language's separators (1,024.5 → 1.024,5 in pt), the rest as is."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (tuple, list)):
        return ", ".join(_shown(item, lang) for item in value)
    if isinstance(value, numbers.Integral):
        return localize_number(f"{int(value):,}", lang)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            return str(value)
        text = f"{value:,.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:,.4g}"
        return localize_number(text, lang)
    return str(value)
