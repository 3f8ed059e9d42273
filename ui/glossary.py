"""The glossary: every term the lessons use, defined in a few words, with a kvcore number where one helps.

Data: ``TERMS`` (id → name, definition and, for some, a formula and the numbers in it, computed by
kvcore when the term is drawn) and ``LESSON_TERMS`` (which terms each lesson uses). A term's
"used in" links come from ``LESSON_TERMS``, so the lesson → term table is written once.

On a lesson, ``terms_used(stem)`` draws the line "Terms on this page: GQA · MLA · …" (each a link to
``/glossary?gl_term=<id>``) and a link to that lesson's quiz (``/quiz?qz_lesson=<stem>``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import streamlit as st

import kvcore
import ui
from kvcore.units import (
    GiB,
    format_bandwidth,
    format_flops,
    format_gb,
    format_gib,
    format_quantity,
    format_seconds,
    format_tokens,
)
from ui import course, lesson, t

GLOSSARY_PAGE = "lessons/glossary.py"
TERM_KEY = "gl_term"
SEARCH_KEY = "gl_search"
#: A search that leaves at most this many terms opens them all.
OPEN_RESULTS = 5

Facts = Callable[[], Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class Term:
    """One glossary entry: catalogue keys for its short name and its definition, and optional numbers."""

    id: str  # in URLs: /glossary?gl_term=<id>
    name: str
    definition: str
    formula: str | None = None  # LaTeX, language-neutral symbols explained in the definition
    facts: Facts | None = None


# ---------------------------------------------------------------- numbers shown in definitions


def _model(model_id: str) -> kvcore.ModelSpec:
    return ui.models()[model_id]


def _gpu(gpu_id: str) -> kvcore.GpuSpec:
    return ui.gpus()[gpu_id]


def _kv_cache() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    return {
        "model": model.name,
        "per_token": lesson.size(kvcore.kv_bytes_per_token(model)),
        "long": lesson.mem(float(kvcore.kv_cache_bytes(model, context_tokens=131072))),
        "context": ui.num(format_tokens(131072)),
    }


def _mha() -> Mapping[str, str]:
    model = _model("llama-2-7b")
    return {"model": model.name, "per_token": lesson.size(kvcore.kv_bytes_per_token(model))}


def _gqa() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    factor = kvcore.cache_reduction_factor(
        kvcore.kv_bytes_per_token(model), baseline_bytes_per_token=kvcore.mha_equivalent_bytes_per_token(model)
    )
    return {
        "model": model.name,
        "heads": str(model.num_attention_heads),
        "kv_heads": str(model.num_key_value_heads),
        "factor": ui.num(format_quantity(float(factor))),
    }


def _mqa() -> Mapping[str, str]:
    model = _model("falcon-7b")
    return {
        "model": model.name,
        "heads": str(model.num_attention_heads),
        "per_token": lesson.size(kvcore.kv_bytes_per_token(model)),
    }


def _mla() -> Mapping[str, str]:
    model = _model("deepseek-v3")
    return {
        "model": model.name,
        "per_token": lesson.size(kvcore.kv_bytes_per_token(model)),
        "mha": lesson.size(kvcore.mha_equivalent_bytes_per_token(model)),
    }


def _sliding() -> Mapping[str, str]:
    model = _model("gemma-3-27b")
    kinds = kvcore.layer_kinds(model.layer_pattern, model.num_hidden_layers)
    return {
        "model": model.name,
        "window": ui.num(format_tokens(model.sliding_window or 0)),
        "sliding": str(kinds.count("sliding")),
        "layers": str(model.num_hidden_layers),
    }


def _linear() -> Mapping[str, str]:
    model = _model("qwen3-next-80b-a3b")
    kinds = kvcore.layer_kinds(model.layer_pattern, model.num_hidden_layers)
    return {"model": model.name, "linear": str(kinds.count("linear")), "layers": str(model.num_hidden_layers)}


def _block() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    return {
        "model": model.name,
        "block_size": str(kvcore.DEFAULT_BLOCK_SIZE),
        "bytes": lesson.size(kvcore.block_bytes(model)),
    }


def _ridge() -> Mapping[str, str]:
    gpu = _gpu("h100-sxm")
    ridge = kvcore.ridge_point(
        peak_flop_per_s=gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s
    )
    return {
        "gpu": gpu.name,
        "peak": ui.num(format_flops(gpu.bf16_dense_flop_per_s)),
        "bandwidth": ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s)),
        "ridge": ui.num(format_quantity(ridge)),
    }


def _intensity() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    return {
        "model": model.name,
        "decode": ui.num(format_quantity(float(kvcore.decode_intensity_flop_per_byte(model, context_tokens=1024)))),
        "prefill": ui.num(format_quantity(float(kvcore.prefill_intensity_flop_per_byte(model, prompt_tokens=1024)))),
    }


def _hbm() -> Mapping[str, str]:
    gpu = _gpu("h100-sxm")
    return {
        "gpu": gpu.name,
        "memory": lesson.mem(gpu.memory_bytes),
        "type": gpu.memory_type,
        "bandwidth": ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s)),
    }


def _sram() -> Mapping[str, str]:
    gpu = _gpu("h100-sxm")
    return {
        "gpu": gpu.name,
        "sms": ui.num(format_quantity(gpu.sm_count)),
        "per_sm": lesson.size(gpu.sram_per_sm_bytes),
        "sram": lesson.size(gpu.sram_bytes),
        "l2": lesson.size(gpu.l2_cache_bytes),
    }


def _bandwidth() -> Mapping[str, str]:
    model, gpu = _model("llama-3.1-8b"), _gpu("h100-sxm")
    weights = kvcore.model_weights_bytes(model)
    time = float(kvcore.stream_time_s(weights, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s))
    return {
        "model": model.name,
        "gpu": gpu.name,
        "weights": lesson.mem(weights),
        "bandwidth": ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s)),
        "time": ui.num(format_seconds(time)),
    }


def _quantization() -> Mapping[str, str]:
    return {dtype: ui.num(f"{kvcore.bytes_per_value(dtype):g}") for dtype in ("bf16", "fp8", "int4")}


def _units() -> Mapping[str, str]:
    memory = 80 * GiB  # an "80 GB" H100 reports 80 GiB
    return {"gib": ui.num(format_gib(memory)), "gb": ui.num(format_gb(memory))}


def _moe() -> Mapping[str, str]:
    model = _model("deepseek-v3")
    return {
        "model": model.name,
        "total": ui.num(format_quantity(model.total_params / 1e9)),
        "active": ui.num(format_quantity(model.active_params / 1e9)),
    }


def _context_window() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    return {
        "model": model.name,
        "tokens": ui.num(format_tokens(model.max_position_embeddings)),
        "cache": lesson.mem(float(kvcore.kv_cache_bytes(model, context_tokens=model.max_position_embeddings))),
    }


def _weights() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    return {"model": model.name, "weights": lesson.mem(kvcore.model_weights_bytes(model))}


# ---------------------------------------------------------------- the terms

TERMS: dict[str, Term] = {
    term.id: term
    for term in (
        Term(
            "kv_cache",
            "glossary.kv_cache",
            "glossary.kv_cache_text",
            formula=r"\text{KV}_{\text{bytes}} = 2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot s \cdot B \cdot b",
            facts=_kv_cache,
        ),
        Term("attention", "glossary.attention", "glossary.attention_text"),
        Term("prefill", "glossary.prefill", "glossary.prefill_text"),
        Term("decode", "glossary.decode", "glossary.decode_text"),
        Term("ttft", "glossary.ttft", "glossary.ttft_text"),
        Term("tpot", "glossary.tpot", "glossary.tpot_text"),
        Term("mha", "glossary.mha", "glossary.mha_text", facts=_mha),
        Term("gqa", "glossary.gqa", "glossary.gqa_text", facts=_gqa),
        Term("mqa", "glossary.mqa", "glossary.mqa_text", facts=_mqa),
        Term("mla", "glossary.mla", "glossary.mla_text", facts=_mla),
        Term("sliding_window", "glossary.sliding_window", "glossary.sliding_window_text", facts=_sliding),
        Term("linear_attention", "glossary.linear_attention", "glossary.linear_attention_text", facts=_linear),
        Term("paged_attention", "glossary.paged_attention", "glossary.paged_attention_text"),
        Term("block", "glossary.block", "glossary.block_text", facts=_block),
        Term("kv_pool", "glossary.kv_pool", "glossary.kv_pool_text"),
        Term("prefix_caching", "glossary.prefix_caching", "glossary.prefix_caching_text"),
        Term("prompt_caching", "glossary.prompt_caching", "glossary.prompt_caching_text"),
        Term("preemption", "glossary.preemption", "glossary.preemption_text"),
        Term("continuous_batching", "glossary.continuous_batching", "glossary.continuous_batching_text"),
        Term("roofline", "glossary.roofline", "glossary.roofline_text"),
        Term(
            "arithmetic_intensity",
            "glossary.arithmetic_intensity",
            "glossary.arithmetic_intensity_text",
            formula=r"I = \frac{\text{FLOP}}{\text{bytes}}",
            facts=_intensity,
        ),
        Term(
            "ridge_point",
            "glossary.ridge_point",
            "glossary.ridge_point_text",
            formula=r"I_{\text{ridge}} = \frac{P}{BW}",
            facts=_ridge,
        ),
        Term("hbm", "glossary.hbm", "glossary.hbm_text", facts=_hbm),
        Term("sram", "glossary.sram", "glossary.sram_text", facts=_sram),
        Term("memory_bandwidth", "glossary.memory_bandwidth", "glossary.memory_bandwidth_text", facts=_bandwidth),
        Term("mbu", "glossary.mbu", "glossary.mbu_text"),
        Term("mfu", "glossary.mfu", "glossary.mfu_text"),
        Term("flash_attention", "glossary.flash_attention", "glossary.flash_attention_text"),
        Term("quantization", "glossary.quantization", "glossary.quantization_text", facts=_quantization),
        Term("gib_gb", "glossary.gib_gb", "glossary.gib_gb_text", facts=_units),
        Term("tensor_parallelism", "glossary.tensor_parallelism", "glossary.tensor_parallelism_text"),
        Term("moe", "glossary.moe", "glossary.moe_text", facts=_moe),
        Term("eviction", "glossary.eviction", "glossary.eviction_text"),
        Term("context_window", "glossary.context_window", "glossary.context_window_text", facts=_context_window),
        Term("gpu_memory_utilization", "glossary.gpu_memory_utilization", "glossary.gpu_memory_utilization_text"),
        Term("max_model_len", "glossary.max_model_len", "glossary.max_model_len_text"),
        Term("overhead", "glossary.overhead", "glossary.overhead_text"),
        Term("weights", "glossary.weights", "glossary.weights_text", facts=_weights),
        Term("teacher_forcing", "glossary.teacher_forcing", "glossary.teacher_forcing_text"),
    )
}

#: The terms each lesson uses, in the order its line lists them.
LESSON_TERMS: dict[str, tuple[str, ...]] = {
    "why_cache": ("kv_cache", "attention", "prefill", "decode", "teacher_forcing"),
    "memory": (
        "kv_cache",
        "weights",
        "overhead",
        "mha",
        "gqa",
        "mla",
        "sliding_window",
        "linear_attention",
        "context_window",
        "gib_gb",
    ),
    "attention_variants": ("mha", "gqa", "mqa", "mla", "kv_cache", "arithmetic_intensity", "ridge_point"),
    "kv_quantization": ("quantization", "kv_cache", "memory_bandwidth", "gib_gb"),
    "import_model": ("kv_cache", "mha", "gqa", "mqa", "mla", "sliding_window", "linear_attention", "moe", "weights"),
    "prefill_decode": (
        "prefill",
        "decode",
        "ttft",
        "tpot",
        "roofline",
        "arithmetic_intensity",
        "ridge_point",
        "mfu",
        "mbu",
    ),
    "decode_speed": ("decode", "memory_bandwidth", "mbu", "tensor_parallelism", "moe", "sliding_window"),
    "flash_attention": ("flash_attention", "sram", "hbm", "memory_bandwidth", "prefill", "decode"),
    "sizing": (
        "gpu_memory_utilization",
        "kv_pool",
        "overhead",
        "preemption",
        "context_window",
        "max_model_len",
        "tensor_parallelism",
    ),
    "agent_1m": (
        "kv_cache",
        "gqa",
        "memory_bandwidth",
        "hbm",
        "ridge_point",
        "tensor_parallelism",
        "quantization",
        "eviction",
        "gib_gb",
    ),
    "vllm_pool": (
        "gpu_memory_utilization",
        "kv_pool",
        "block",
        "max_model_len",
        "overhead",
        "tensor_parallelism",
        "mla",
    ),
    "vllm_log": ("kv_pool", "block", "max_model_len", "gpu_memory_utilization", "quantization", "tensor_parallelism"),
    "paged_attention": ("paged_attention", "block", "max_model_len", "kv_pool", "prefix_caching"),
    "prefix_caching": ("prefix_caching", "prompt_caching", "block", "ttft", "prefill"),
    "preemption": ("preemption", "continuous_batching", "block", "kv_pool", "ttft", "tpot"),
}
#: Terms no single lesson owns (none today); the coverage test accepts them without a lesson.
GENERAL_TERMS: tuple[str, ...] = ()


def lessons_using(term_id: str) -> list[str]:
    """The lessons whose pages use a term, in the navigation's order."""
    return [stem for stem in course.LESSONS if term_id in LESSON_TERMS.get(stem, ())]


def facts_of(term: Term) -> dict[str, str]:
    return dict(term.facts()) if term.facts else {}


# ---------------------------------------------------------------- on a lesson page


def terms_used(stem: str) -> None:
    """The line under a lesson: links to the glossary entries of its terms, and to its quiz.

    Also notes that the lesson was opened (the course page shows it beside the step).
    """
    course.visited(stem)
    st.divider()
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        st.caption(t("glossary.terms_on_page"), width="content")
        for term_id in LESSON_TERMS[stem]:
            st.page_link(
                GLOSSARY_PAGE,
                label=t(TERMS[term_id].name),
                icon=":material/menu_book:",
                query_params=course.carried_params(**{TERM_KEY: term_id}),
            )
    st.page_link(
        course.QUIZ_PAGE,
        label=t("glossary.quiz_link", lesson=t(course.LESSON_TITLES[stem])),
        icon=":material/quiz:",
        query_params=course.carried_params(**{course.QUIZ_KEY: stem}),
    )


# ---------------------------------------------------------------- the glossary page


def folded(text: str) -> str:
    """Text for matching: no accents, no case, no markdown stars ('Atenção' → 'atencao')."""
    decomposed = unicodedata.normalize("NFKD", text.replace("*", ""))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def matches(term: Term, query: str) -> bool:
    """True if every word of the query is in the term's id, name or definition (accents and case ignored)."""
    haystack = folded(" ".join((term.id.replace("_", " "), t(term.name), t(term.definition, **facts_of(term)))))
    return all(word in haystack for word in folded(query).split())


def asked_term() -> str | None:
    """The term a link asked for (``?gl_term=<id>``); an unknown id gets a notice and leaves the URL."""
    wanted = st.query_params.get(TERM_KEY)
    if wanted is None or wanted in TERMS:
        return wanted
    st.info(t("glossary.unknown_term", term=ui.shown_param(wanted)), icon=":material/link:")
    st.query_params.pop(TERM_KEY, None)  # said once; the rest of the visit shows the whole glossary
    return None


def ordered_terms(first: str | None) -> list[Term]:
    """Every term in alphabetical order of its name in this language, the asked-for term first."""
    terms = sorted(TERMS.values(), key=lambda term: folded(t(term.name)))
    if first is not None:
        terms.sort(key=lambda term: term.id != first)  # stable: the rest stay alphabetical
    return terms


def show_term(term: Term, *, expanded: bool) -> None:
    """One entry: its definition (with kvcore's numbers), its formula, and the lessons that use it."""
    with st.expander(t(term.name), expanded=expanded, icon=":material/bookmark:" if expanded else None):
        st.markdown(t(term.definition, **facts_of(term)))
        if term.formula:
            st.latex(term.formula)
        stems = lessons_using(term.id)
        if stems:
            st.caption(t("glossary.used_in"))
            with st.container(horizontal=True, gap="small"):
                for stem in stems:
                    st.page_link(
                        course.lesson_page(stem),
                        label=t(course.LESSON_TITLES[stem]),
                        icon=":material/school:",
                        query_params=course.carried_params(),
                    )
