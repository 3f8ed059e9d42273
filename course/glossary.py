"""The glossary as data: every term the lessons use, and which lessons use it.

A ``Term`` is a plain record: its id (in URLs: /glossary?gl_term=<id>), the catalogue
keys of its short name and its definition (i18n/*/glossary.json, both languages), an
optional LaTeX formula (language-neutral symbols, explained in the definition), and
the name of the computed fact whose numbers the definition shows (``course.facts``,
shared with the quiz: a number both speak of is computed once).

``LESSON_TERMS`` lists the terms of each lesson in the order its "Terms on this page"
line shows them; a term's "used in" links come from it, so the lesson → term table is
written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["GENERAL_TERMS", "LESSON_TERMS", "TERMS", "Term"]


@dataclass(frozen=True, slots=True)
class Term:
    """One glossary entry: catalogue keys for its short name and its definition, an optional formula and fact."""

    id: str  # in URLs: /glossary?gl_term=<id>
    name: str
    definition: str
    formula: str | None = None  # LaTeX, language-neutral symbols explained in the definition
    facts: str | None = None  # the name of the fact in course.facts whose numbers the definition shows


TERMS: Mapping[str, Term] = MappingProxyType(
    {
        term.id: term
        for term in (
            Term(
                "kv_cache",
                "glossary.kv_cache",
                "glossary.kv_cache_text",
                formula=r"\text{KV}_{\text{bytes}} = 2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot s \cdot B \cdot b",
                facts="kv_cache",
            ),
            Term("attention", "glossary.attention", "glossary.attention_text"),
            Term("prefill", "glossary.prefill", "glossary.prefill_text"),
            Term("decode", "glossary.decode", "glossary.decode_text"),
            Term("ttft", "glossary.ttft", "glossary.ttft_text"),
            Term("tpot", "glossary.tpot", "glossary.tpot_text"),
            Term("mha", "glossary.mha", "glossary.mha_text", facts="mha"),
            Term("gqa", "glossary.gqa", "glossary.gqa_text", facts="gqa"),
            Term("mqa", "glossary.mqa", "glossary.mqa_text", facts="mqa"),
            Term("mla", "glossary.mla", "glossary.mla_text", facts="mla"),
            Term("sliding_window", "glossary.sliding_window", "glossary.sliding_window_text", facts="sliding_window"),
            Term(
                "linear_attention",
                "glossary.linear_attention",
                "glossary.linear_attention_text",
                facts="linear_attention",
            ),
            Term("paged_attention", "glossary.paged_attention", "glossary.paged_attention_text"),
            Term("block", "glossary.block", "glossary.block_text", facts="block"),
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
                facts="arithmetic_intensity",
            ),
            Term(
                "ridge_point",
                "glossary.ridge_point",
                "glossary.ridge_point_text",
                formula=r"I_{\text{ridge}} = \frac{P}{BW}",
                facts="ridge_point",
            ),
            Term("hbm", "glossary.hbm", "glossary.hbm_text", facts="hbm"),
            Term("sram", "glossary.sram", "glossary.sram_text", facts="sram"),
            Term(
                "memory_bandwidth",
                "glossary.memory_bandwidth",
                "glossary.memory_bandwidth_text",
                facts="memory_bandwidth",
            ),
            Term("mbu", "glossary.mbu", "glossary.mbu_text"),
            Term("mfu", "glossary.mfu", "glossary.mfu_text"),
            Term("flash_attention", "glossary.flash_attention", "glossary.flash_attention_text"),
            Term("quantization", "glossary.quantization", "glossary.quantization_text", facts="quantization"),
            Term("gib_gb", "glossary.gib_gb", "glossary.gib_gb_text", facts="gpu_memory_units"),
            Term("tensor_parallelism", "glossary.tensor_parallelism", "glossary.tensor_parallelism_text"),
            Term("moe", "glossary.moe", "glossary.moe_text", facts="moe"),
            Term("eviction", "glossary.eviction", "glossary.eviction_text"),
            Term("context_window", "glossary.context_window", "glossary.context_window_text", facts="context_window"),
            Term("gpu_memory_utilization", "glossary.gpu_memory_utilization", "glossary.gpu_memory_utilization_text"),
            Term("max_model_len", "glossary.max_model_len", "glossary.max_model_len_text"),
            Term("overhead", "glossary.overhead", "glossary.overhead_text"),
            Term("weights", "glossary.weights", "glossary.weights_text", facts="weights"),
            Term("teacher_forcing", "glossary.teacher_forcing", "glossary.teacher_forcing_text"),
            Term("inference_engine", "glossary.inference_engine", "glossary.inference_engine_text"),
        )
    }
)

#: The terms each lesson uses, in the order its line lists them.
LESSON_TERMS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "why_cache": ("kv_cache", "attention", "prefill", "decode", "teacher_forcing"),
        "engines": (
            "inference_engine",
            "kv_pool",
            "gpu_memory_utilization",
            "weights",
            "tensor_parallelism",
            "quantization",
        ),
        "local_llm": (
            "inference_engine",
            "weights",
            "kv_cache",
            "quantization",
            "context_window",
            "flash_attention",
            "gib_gb",
        ),
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
        "import_model": (
            "kv_cache",
            "mha",
            "gqa",
            "mqa",
            "mla",
            "sliding_window",
            "linear_attention",
            "moe",
            "weights",
        ),
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
        "compare": (
            "weights",
            "kv_cache",
            "overhead",
            "gpu_memory_utilization",
            "tensor_parallelism",
            "quantization",
            "gqa",
            "tpot",
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
        "vllm_log": (
            "kv_pool",
            "block",
            "max_model_len",
            "gpu_memory_utilization",
            "quantization",
            "tensor_parallelism",
        ),
        "paged_attention": ("paged_attention", "block", "max_model_len", "kv_pool", "prefix_caching"),
        "prefix_caching": ("prefix_caching", "prompt_caching", "block", "ttft", "prefill"),
        "preemption": ("preemption", "continuous_batching", "block", "kv_pool", "ttft", "tpot"),
    }
)

#: Terms no single lesson owns (none today); the coverage test accepts them without a lesson.
GENERAL_TERMS: tuple[str, ...] = ()
