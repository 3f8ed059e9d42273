"""Quizzes: a few multiple-choice questions per lesson, with feedback that points back to the page that shows it.

Content is data: ``QUIZZES`` maps each lesson stem to its questions. A ``Question`` names its
texts by catalogue key (question, options, explanation, in i18n/*/quiz.json), says which option
is right and which lesson page shows the answer. Questions about a number get their numbers from
``facts``, a function that asks kvcore at render time (in the language and units of the session),
so no figure is typed in; wrong options are the mistakes people make (MHA instead of GQA, K
without V, GB for GiB), computed the same way.

Answers live in the session (``st.session_state``), never in module state: one server shares
this module with every user.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import streamlit as st

import kvcore
import ui
from course import mistakes
from kvcore.units import (
    GB,
    format_bandwidth,
    format_bytes_decimal,
    format_flops,
    format_gb,
    format_gib,
    format_quantity,
    format_seconds,
    format_tokens,
    format_tokens_per_s,
)
from ui import course, lesson, practice, t

Facts = Callable[[], Mapping[str, str]]

ANSWERS_KEY = "_qz_answers"  # question id → the option key the student checked
REVEALED_KEY = "_qz_revealed"  # question ids revealed in presentation mode
RECORDED_KEY = "_qz_recorded"  # question ids already counted in the session's progress
EMPTY = ""  # "checked without choosing an option"
DEFAULT_LESSON = course.LESSONS[0]


@dataclass(frozen=True, slots=True)
class Question:
    """One multiple-choice question: catalogue keys for its texts, the right option, and where it is taught."""

    id: str  # unique; its widgets use the keys qz_<id>, qz_check_<id>, qz_reveal_<id>
    lesson: str  # the stem of the page that shows the answer
    text: str
    options: tuple[str, ...]  # shown in this order
    answer: str  # the right option's key (one of `options`)
    explanation: str
    facts: Facts | None = None  # placeholder values computed by kvcore when the question is drawn


# ---------------------------------------------------------------- numbers, computed when a question is drawn


def _model(model_id: str) -> kvcore.ModelSpec:
    return ui.models()[model_id]


def _gpu(gpu_id: str) -> kvcore.GpuSpec:
    return ui.gpus()[gpu_id]


def _percent(fraction: float, decimals: int = 1) -> str:
    """'96.875%', '75%': at most `decimals` decimals, trailing zeros dropped."""
    text = f"{fraction:.{decimals}%}"
    if "." in text:
        text = text[:-1].rstrip("0").rstrip(".") + "%"
    return ui.num(text)


def _tokens(count: float) -> str:
    return ui.num(format_tokens(count))


def _wc_count() -> Mapping[str, str]:
    tokens = 1000  # seed 000: "token number 1,000 would recompute the 999 before it"
    return {
        "tokens": _tokens(tokens),
        "without": _tokens(float(kvcore.kv_projections_without_cache(tokens))),
        "with_cache": _tokens(float(kvcore.kv_projections_with_cache(tokens))),
        "factor": ui.num(format_quantity(float(kvcore.recompute_factor(tokens)))),
    }


def _wc_tradeoff() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    return {"model": model.name, "per_token": lesson.size(kvcore.kv_bytes_per_token(model))}


def _mem_per_token() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    right = kvcore.kv_bytes_per_token(model, bytes_per_value=kvcore.bytes_per_value("bf16"))
    return {
        "model": model.name,
        "layers": str(model.num_hidden_layers),
        "kv_heads": str(model.num_key_value_heads),
        "head_dim": str(model.head_dim),
        "bytes": _tokens(right),
        "right": lesson.size(right),
        "mha": lesson.size(kvcore.mha_equivalent_bytes_per_token(model)),
        # One byte per value gives exactly what forgetting the factor 2 (K and V) gives.
        "half": lesson.size(kvcore.kv_bytes_per_token(model, bytes_per_value=kvcore.bytes_per_value("fp8"))),
        "fp32": lesson.size(kvcore.kv_bytes_per_token(model, bytes_per_value=kvcore.bytes_per_value("fp32"))),
    }


def _im_head_dim() -> Mapping[str, str]:
    model = _model("qwen3-32b")  # its config states head_dim 128; hidden_size / heads is 80
    wrong = mistakes.head_dim_from_hidden(model)
    return {
        "model": model.name,
        "hidden": _tokens(model.hidden_size),
        "heads": str(model.num_attention_heads),
        "head_dim": str(model.head_dim),
        "derived": str(wrong.head_dim if wrong else model.head_dim),
    }


def _im_kv_heads() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    wrong = mistakes.ignoring_kv_heads(model)
    ratio = kvcore.kv_bytes_per_token(wrong) / kvcore.kv_bytes_per_token(model) if wrong else 1.0
    return {
        "model": model.name,
        "heads": str(model.num_attention_heads),
        "kv_heads": str(model.num_key_value_heads),
        "ratio": f"{ratio:g}",
        "double": f"{2 * ratio:g}",
    }


def _im_sliding() -> Mapping[str, str]:
    model = _model("gemma-3-27b")
    context = 32_768
    right = float(kvcore.sequence_kv_bytes(model, context_tokens=context))
    wrong = mistakes.sliding_as_full(model)
    full = float(kvcore.sequence_kv_bytes(wrong, context_tokens=context)) if wrong else right
    return {
        "model": model.name,
        "window": _tokens(model.sliding_window or 0),
        "sliding": str(model.count("sliding")),
        "layers": str(model.num_hidden_layers),
        "context": _tokens(context),
        "right": lesson.mem(right),
        "full": lesson.mem(full),
    }


def _mem_30gb() -> Mapping[str, str]:
    model = _model("qwen2.5-32b")  # seed 002's "30 GB model": 32.5 B parameters in INT8
    weights = kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value("int8"))
    tokens = float(kvcore.break_even_context_tokens(model, weights_bytes=weights))
    return {"model": model.name, "weights": lesson.mem(weights), "tokens": _tokens(tokens)}


def _mem_scaling() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    context = 8192
    one = float(kvcore.kv_cache_bytes(model, context_tokens=context, concurrency=1))
    four = float(kvcore.kv_cache_bytes(model, context_tokens=2 * context, concurrency=2))
    return {
        "model": model.name,
        "context": _tokens(context),
        "context2": _tokens(2 * context),
        "one": lesson.mem(one),
        "four": lesson.mem(four),
    }


def _mem_units() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")  # the table's "LLaMA 3 8B": Llama 3.1 has the same attention shape
    context = 4096
    mha = float(kvcore.mha_cache_bytes(model, context_tokens=context))
    seed_gb = 2 * GB  # the table's "2 GB", read as decimal
    return {
        "bytes": _tokens(mha),
        "gib": ui.num(format_gib(mha)),
        "gb": ui.num(format_gb(mha)),
        "seed_as_gib": ui.num(format_gib(seed_gb)),
        "real": ui.num(format_gib(float(kvcore.kv_cache_bytes(model, context_tokens=context)))),
    }


def _av_factor() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    mha = kvcore.mha_equivalent_bytes_per_token(model)
    mqa = kvcore.attention_variants(model)["MQA"]
    return {
        "model": model.name,
        "heads": str(model.num_attention_heads),
        "kv_heads": str(model.num_key_value_heads),
        "factor": ui.num(
            format_quantity(
                float(kvcore.cache_reduction_factor(kvcore.kv_bytes_per_token(model), baseline_bytes_per_token=mha))
            )
        ),
        "mqa_factor": ui.num(
            format_quantity(
                float(kvcore.cache_reduction_factor(kvcore.kv_bytes_per_token(mqa), baseline_bytes_per_token=mha))
            )
        ),
    }


def _av_mqa() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")  # 32 query heads, like the course table
    variants = kvcore.attention_variants(model)
    mha = kvcore.kv_bytes_per_token(variants["MHA"])

    def saving(name: str) -> str:
        return _percent(
            float(
                kvcore.cache_saving_fraction(kvcore.kv_bytes_per_token(variants[name]), baseline_bytes_per_token=mha)
            ),
            3,
        )

    return {
        "heads": str(model.num_attention_heads),
        "kv_heads": str(model.num_key_value_heads),
        "exact": saving("MQA"),
        "gqa": saving("GQA"),
    }


def _av_mla() -> Mapping[str, str]:
    model = _model("deepseek-v3")
    return {
        "model": model.name,
        "mla": lesson.size(kvcore.kv_bytes_per_token(model)),
        "mha": lesson.size(kvcore.mha_equivalent_bytes_per_token(model)),
    }


def _av_sliding() -> Mapping[str, str]:
    model = _model("gemma-3-27b")
    kinds = kvcore.layer_kinds(model.layer_pattern, model.num_hidden_layers)
    return {
        "model": model.name,
        "window": _tokens(model.sliding_window or 0),
        "sliding": str(kinds.count("sliding")),
        "layers": str(model.num_hidden_layers),
    }


def _kq_fp8() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    context = 131072  # seed 000's 128k row

    def cache(dtype: str) -> str:
        return lesson.mem(
            float(kvcore.kv_cache_bytes(model, context_tokens=context, bytes_per_value=kvcore.bytes_per_value(dtype)))
        )

    return {
        "model": model.name,
        "context": _tokens(context),
        "bf16": cache("bf16"),
        "fp8": cache("fp8"),
        "int4": cache("int4"),
    }


def _kq_gpus() -> Mapping[str, str]:
    model, gpu = _model(kvcore.SEED_MODEL_ID), _gpu(kvcore.SEED_GPU_ID)
    bf16 = kvcore.ledger(model, gpu, context_tokens=kvcore.SEED_CONTEXT_TOKENS)
    fp8 = kvcore.ledger(
        model, gpu, context_tokens=kvcore.SEED_CONTEXT_TOKENS, kv_bytes_per_value=kvcore.bytes_per_value("fp8")
    )
    return {
        "model": model.name,
        "gpu": gpu.name,
        "tokens": _tokens(kvcore.SEED_CONTEXT_TOKENS),
        "bf16_gpus": str(bf16.gpus_to_fit),
        "fp8_gpus": str(fp8.gpus_to_fit),
        "weights": lesson.mem(bf16.weights_bytes),
        "bf16_cache": lesson.mem(bf16.cache_bytes),
        "fp8_cache": lesson.mem(fp8.cache_bytes),
    }


def _pd_ridge() -> Mapping[str, str]:
    model, gpu = _model("llama-3.1-8b"), _gpu("h100-sxm")
    ridge = kvcore.ridge_point(
        peak_flop_per_s=gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s
    )
    fp8_ridge = kvcore.ridge_point(
        peak_flop_per_s=gpu.fp8_dense_flop_per_s, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s
    )
    decode = float(kvcore.decode_intensity_flop_per_byte(model, context_tokens=1024))
    return {
        "gpu": gpu.name,
        "model": model.name,
        "peak": ui.num(format_flops(gpu.bf16_dense_flop_per_s)),
        "bandwidth": ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s)),
        "ridge": ui.num(format_quantity(ridge)),
        "fp8_ridge": ui.num(format_quantity(fp8_ridge)),
        "decode": ui.num(format_quantity(decode)),
    }


def _ds_floor() -> Mapping[str, str]:
    model, gpu = _model("llama-3.1-8b"), _gpu("rtx-4090")
    context = 1024
    right = float(kvcore.decode_token_s(model, context_tokens=context, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s))
    fp8 = float(
        kvcore.decode_token_s(
            model,
            context_tokens=context,
            bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
            weight_bytes_per_param=kvcore.bytes_per_value("fp8"),
        )
    )
    compute = float(
        kvcore.compute_time_s(
            kvcore.decode_flops_per_step(model, context_tokens=context), peak_flop_per_s=gpu.bf16_dense_flop_per_s
        )
    )
    return {
        "model": model.name,
        "gpu": gpu.name,
        "weights": lesson.mem(kvcore.model_weights_bytes(model)),
        "bandwidth": ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s)),
        "right": ui.num(format_seconds(right)),
        "fp8": ui.num(format_seconds(fp8)),
        "compute": ui.num(format_seconds(compute)),
        "rate": ui.num(format_tokens_per_s(float(kvcore.tokens_per_s(right)), unit=False)),
    }


def _fa_kv() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    tokens = 8192
    return {
        "model": model.name,
        "tokens": _tokens(tokens),
        "kv": lesson.mem(float(kvcore.kv_cache_bytes(model, context_tokens=tokens))),
        "scores": lesson.mem(float(kvcore.attention_scores_bytes(tokens, heads=model.num_attention_heads))),
    }


def _fa_phase() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    tokens = 8192
    return {
        "tokens": _tokens(tokens),
        "row": lesson.size(float(kvcore.score_row_bytes(tokens, heads=model.num_attention_heads))),
        "scores": lesson.mem(float(kvcore.attention_scores_bytes(tokens, heads=model.num_attention_heads))),
    }


def _fa_sram() -> Mapping[str, str]:
    gpu = _gpu("h100-sxm")
    return {
        "l2": lesson.size(gpu.l2_cache_bytes),
        "sms": ui.num(format_quantity(gpu.sm_count)),
        "per_sm": lesson.size(gpu.sram_per_sm_bytes),
        "sram": lesson.size(gpu.sram_bytes),
    }


def _sz_rule() -> Mapping[str, str]:
    model, gpu = _model("llama-3.1-8b"), _gpu("h100-sxm")
    weights = kvcore.model_weights_bytes(model)
    overhead = kvcore.GiB
    utilization = 0.9  # vLLM's default gpu_memory_utilization
    steps = kvcore.sizing_steps(
        model, memory_bytes=gpu.memory_bytes, utilization=utilization, weights_bytes=weights, overhead_bytes=overhead
    )
    naive = kvcore.sizing_steps(model, memory_bytes=gpu.memory_bytes, utilization=1.0, weights_bytes=weights)
    return {
        "model": model.name,
        "gpu": gpu.name,
        "u": ui.num(f"{utilization:g}"),
        "overhead": lesson.mem(overhead),
        "tokens": _tokens(steps.pool_tokens),
        "naive": _tokens(naive.pool_tokens),
    }


def _sz_dashboard() -> Mapping[str, str]:
    model = _model("llama-3.1-70b")
    pool, long = 262144, 131072  # seed 000: "max context 262,144"; one user at 128k
    share = float(
        kvcore.pool_share(
            model, context_tokens=long, kv_pool_bytes=float(kvcore.sequence_kv_bytes(model, context_tokens=pool))
        )
    )
    return {"pool": _tokens(pool), "long": _tokens(long), "share": _percent(share, 0)}


def _sz_declared() -> Mapping[str, str]:
    return {"need": _tokens(8192), "declared": _tokens(131072)}


def _ag_cache() -> Mapping[str, str]:
    model, gpu = _model(kvcore.SEED_MODEL_ID), _gpu(kvcore.SEED_GPU_ID)
    seed = kvcore.ledger(model, gpu, context_tokens=kvcore.SEED_CONTEXT_TOKENS)
    fp8 = kvcore.ledger(
        model, gpu, context_tokens=kvcore.SEED_CONTEXT_TOKENS, kv_bytes_per_value=kvcore.bytes_per_value("fp8")
    )
    mha = kvcore.with_changes(model, num_key_value_heads=model.num_attention_heads)
    return {
        "model": model.name,
        "tokens": _tokens(kvcore.SEED_CONTEXT_TOKENS),
        "per_token": lesson.size(seed.kv_bytes_per_token),
        "cache_gb": ui.num(format_gb(seed.cache_bytes)),
        "cache_gib": ui.num(format_gib(seed.cache_bytes)),
        "mha": ui.num(
            format_bytes_decimal(float(kvcore.kv_cache_bytes(mha, context_tokens=kvcore.SEED_CONTEXT_TOKENS)))
        ),
        "fp8": ui.num(format_gb(fp8.cache_bytes)),
        "factor": ui.num(format_quantity(seed.gqa_factor)),
    }


def _ag_time() -> Mapping[str, str]:
    model, gpu = _model(kvcore.SEED_MODEL_ID), _gpu(kvcore.SEED_GPU_ID)
    one = kvcore.ledger(model, gpu, context_tokens=kvcore.SEED_CONTEXT_TOKENS)
    sharded = kvcore.ledger(model, gpu, context_tokens=kvcore.SEED_CONTEXT_TOKENS, shards=kvcore.SEED_SHARDS)
    return {
        "gpu": gpu.name,
        "bandwidth": ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s)),
        "cache": ui.num(format_gb(one.cache_bytes)),
        "kv": ui.num(format_seconds(one.kv_token_s)),
        "rate": ui.num(format_tokens_per_s(one.kv_tokens_per_s, unit=False)),
        "with_weights": ui.num(format_seconds(one.token_s)),
        "sharded": ui.num(format_seconds(sharded.sharded_kv_token_s)),
        "shards": str(kvcore.SEED_SHARDS),
    }


def _vp_tokens() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    blocks, length = 1952, 20000  # vLLM issue #10517: "# GPU blocks: 1952", max_model_len 20,000
    return {
        "blocks": _tokens(blocks),
        "block_size": str(kvcore.DEFAULT_BLOCK_SIZE),
        "tokens": _tokens(float(kvcore.pool_tokens(num_blocks=blocks))),
        "length": _tokens(length),
        "concurrency": ui.num(
            format_quantity(float(kvcore.max_concurrency(model, num_blocks=blocks, max_model_len=length)))
        ),
    }


def _vp_tp() -> Mapping[str, str]:
    gqa, mla = _model("llama-3.1-70b"), _model("deepseek-v3")
    tp = 8
    return {
        "tp": str(tp),
        "model": gqa.name,
        "mla_model": mla.name,
        "gqa": lesson.size(kvcore.kv_bytes_per_token(gqa, tp=tp)),
        "gqa_one": lesson.size(kvcore.kv_bytes_per_token(gqa)),
        "mla": lesson.size(kvcore.kv_bytes_per_token(mla, tp=tp)),
    }


def _vl_implied() -> Mapping[str, str]:
    model = _model("llama-3.1-8b")
    return {"model": model.name, "per_token": lesson.size(kvcore.kv_bytes_per_token(model))}


def _pa_number() -> Mapping[str, str]:
    preset = kvcore.SHAREGPT_ON_OPT  # the vLLM paper's setting: ShareGPT lengths, max_model_len 2,048
    lengths = kvcore.request_lengths_tokens(
        preset.n_requests,
        mean_tokens=preset.mean_tokens,
        spread=preset.spread,
        max_model_len=preset.max_model_len,
        seed=preset.seed,
    )

    def waste(scheme: str) -> str:
        report = kvcore.allocation_report(
            lengths, scheme=scheme, max_model_len=preset.max_model_len, block_size=preset.block_size
        )
        return _percent(report.waste_fraction)

    return {
        "mean": _tokens(preset.mean_tokens),
        "max_len": _tokens(preset.max_model_len),
        "requests": _tokens(preset.n_requests),
        "block": str(preset.block_size),
        "contiguous": waste("contiguous"),
        "paged": waste("paged"),
    }


def _pc_blocks() -> Mapping[str, str]:
    prefix, block = 100, kvcore.DEFAULT_BLOCK_SIZE
    return {
        "prefix": _tokens(prefix),
        "block": str(block),
        "shared": _tokens(float(kvcore.cached_prefix_tokens(prefix_tokens=prefix, suffix_tokens=50, block_size=block))),
        "blocks": _tokens(float(kvcore.shared_prefix_blocks(prefix, block_size=block))),
    }


def _pc_ttl() -> Mapping[str, str]:
    return {"interval": ui.num(format_seconds(600)), "ttl": ui.num(format_seconds(300))}  # the lesson's third preset


def _pc_saves() -> Mapping[str, str]:
    return {"requests": _tokens(100), "prefix": _tokens(2000)}  # seed 002: 100 requests, a 2,000-token system prompt


def _pr_blocks() -> Mapping[str, str]:
    seqs, longest, mean, block = 64, 2000, 1000, kvcore.DEFAULT_BLOCK_SIZE
    return {
        "seqs": str(seqs),
        "longest": _tokens(longest),
        "mean_tokens": _tokens(mean),
        "block": str(block),
        "right": _tokens(kvcore.blocks_for_no_preemption(max_num_seqs=seqs, max_request_tokens=longest)),
        "one": _tokens(kvcore.blocks_for_no_preemption(max_num_seqs=1, max_request_tokens=longest)),
        "mean": _tokens(kvcore.blocks_for_no_preemption(max_num_seqs=seqs, max_request_tokens=mean)),
    }


# ---------------------------------------------------------------- the questions


QUIZZES: dict[str, tuple[Question, ...]] = {
    "why_cache": (
        Question(
            id="wc_what",
            lesson="why_cache",
            text="quiz.wc_what",
            options=("quiz.wc_what_a", "quiz.wc_what_b", "quiz.wc_what_c"),
            answer="quiz.wc_what_b",
            explanation="quiz.wc_what_why",
        ),
        Question(
            id="wc_count",
            lesson="why_cache",
            text="quiz.wc_count",
            options=("quiz.wc_count_a", "quiz.wc_count_b", "quiz.wc_count_c"),
            answer="quiz.wc_count_c",
            explanation="quiz.wc_count_why",
            facts=_wc_count,
        ),
        Question(
            id="wc_training",
            lesson="why_cache",
            text="quiz.wc_training",
            options=("quiz.wc_training_a", "quiz.wc_training_b", "quiz.wc_training_c"),
            answer="quiz.wc_training_a",
            explanation="quiz.wc_training_why",
        ),
        Question(
            id="wc_tradeoff",
            lesson="why_cache",
            text="quiz.wc_tradeoff",
            options=("quiz.wc_tradeoff_a", "quiz.wc_tradeoff_b", "quiz.wc_tradeoff_c"),
            answer="quiz.wc_tradeoff_b",
            explanation="quiz.wc_tradeoff_why",
            facts=_wc_tradeoff,
        ),
    ),
    "memory": (
        Question(
            id="mem_per_token",
            lesson="memory",
            text="quiz.mem_per_token",
            options=("quiz.mem_per_token_a", "quiz.mem_per_token_b", "quiz.mem_per_token_c", "quiz.mem_per_token_d"),
            answer="quiz.mem_per_token_c",
            explanation="quiz.mem_per_token_why",
            facts=_mem_per_token,
        ),
        Question(
            id="mem_30gb",
            lesson="memory",
            text="quiz.mem_30gb",
            options=("quiz.mem_30gb_a", "quiz.mem_30gb_b", "quiz.mem_30gb_c"),
            answer="quiz.mem_30gb_a",
            explanation="quiz.mem_30gb_why",
            facts=_mem_30gb,
        ),
        Question(
            id="mem_scaling",
            lesson="memory",
            text="quiz.mem_scaling",
            options=("quiz.mem_scaling_a", "quiz.mem_scaling_b", "quiz.mem_scaling_c"),
            answer="quiz.mem_scaling_b",
            explanation="quiz.mem_scaling_why",
            facts=_mem_scaling,
        ),
        Question(
            id="mem_consequence",
            lesson="memory",
            text="quiz.mem_consequence",
            options=("quiz.mem_consequence_a", "quiz.mem_consequence_b", "quiz.mem_consequence_c"),
            answer="quiz.mem_consequence_c",
            explanation="quiz.mem_consequence_why",
        ),
        Question(
            id="mem_units",
            lesson="memory",
            text="quiz.mem_units",
            options=("quiz.mem_units_a", "quiz.mem_units_b", "quiz.mem_units_c"),
            answer="quiz.mem_units_a",
            explanation="quiz.mem_units_why",
            facts=_mem_units,
        ),
    ),
    "import_model": (
        Question(
            id="im_head_dim",
            lesson="import_model",
            text="quiz.im_head_dim",
            options=("quiz.im_head_dim_a", "quiz.im_head_dim_b", "quiz.im_head_dim_c"),
            answer="quiz.im_head_dim_b",
            explanation="quiz.im_head_dim_why",
            facts=_im_head_dim,
        ),
        Question(
            id="im_kv_heads",
            lesson="import_model",
            text="quiz.im_kv_heads",
            options=("quiz.im_kv_heads_a", "quiz.im_kv_heads_b", "quiz.im_kv_heads_c"),
            answer="quiz.im_kv_heads_a",
            explanation="quiz.im_kv_heads_why",
            facts=_im_kv_heads,
        ),
        Question(
            id="im_sliding",
            lesson="import_model",
            text="quiz.im_sliding",
            options=("quiz.im_sliding_a", "quiz.im_sliding_b", "quiz.im_sliding_c"),
            answer="quiz.im_sliding_c",
            explanation="quiz.im_sliding_why",
            facts=_im_sliding,
        ),
    ),
    "attention_variants": (
        Question(
            id="av_compare",
            lesson="attention_variants",
            text="quiz.av_compare",
            options=("quiz.av_compare_a", "quiz.av_compare_b", "quiz.av_compare_c"),
            answer="quiz.av_compare_b",
            explanation="quiz.av_compare_why",
        ),
        Question(
            id="av_factor",
            lesson="attention_variants",
            text="quiz.av_factor",
            options=("quiz.av_factor_a", "quiz.av_factor_b", "quiz.av_factor_c", "quiz.av_factor_d"),
            answer="quiz.av_factor_d",
            explanation="quiz.av_factor_why",
            facts=_av_factor,
        ),
        Question(
            id="av_mqa",
            lesson="attention_variants",
            text="quiz.av_mqa",
            options=("quiz.av_mqa_a", "quiz.av_mqa_b", "quiz.av_mqa_c"),
            answer="quiz.av_mqa_c",
            explanation="quiz.av_mqa_why",
            facts=_av_mqa,
        ),
        Question(
            id="av_mla",
            lesson="attention_variants",
            text="quiz.av_mla",
            options=("quiz.av_mla_a", "quiz.av_mla_b", "quiz.av_mla_c"),
            answer="quiz.av_mla_a",
            explanation="quiz.av_mla_why",
            facts=_av_mla,
        ),
        Question(
            id="av_sliding",
            lesson="memory",
            text="quiz.av_sliding",
            options=("quiz.av_sliding_a", "quiz.av_sliding_b", "quiz.av_sliding_c"),
            answer="quiz.av_sliding_b",
            explanation="quiz.av_sliding_why",
            facts=_av_sliding,
        ),
    ),
    "kv_quantization": (
        Question(
            id="kq_helps",
            lesson="kv_quantization",
            text="quiz.kq_helps",
            options=("quiz.kq_helps_a", "quiz.kq_helps_b", "quiz.kq_helps_c"),
            answer="quiz.kq_helps_c",
            explanation="quiz.kq_helps_why",
        ),
        Question(
            id="kq_fp8",
            lesson="kv_quantization",
            text="quiz.kq_fp8",
            options=("quiz.kq_fp8_a", "quiz.kq_fp8_b", "quiz.kq_fp8_c"),
            answer="quiz.kq_fp8_a",
            explanation="quiz.kq_fp8_why",
            facts=_kq_fp8,
        ),
        Question(
            id="kq_k_vs_v",
            lesson="kv_quantization",
            text="quiz.kq_k_vs_v",
            options=("quiz.kq_k_vs_v_a", "quiz.kq_k_vs_v_b", "quiz.kq_k_vs_v_c"),
            answer="quiz.kq_k_vs_v_b",
            explanation="quiz.kq_k_vs_v_why",
        ),
        Question(
            id="kq_gpus",
            lesson="kv_quantization",
            text="quiz.kq_gpus",
            options=("quiz.kq_gpus_a", "quiz.kq_gpus_b", "quiz.kq_gpus_c"),
            answer="quiz.kq_gpus_c",
            explanation="quiz.kq_gpus_why",
            facts=_kq_gpus,
        ),
    ),
    "prefill_decode": (
        Question(
            id="pd_phases",
            lesson="prefill_decode",
            text="quiz.pd_phases",
            options=("quiz.pd_phases_a", "quiz.pd_phases_b", "quiz.pd_phases_c"),
            answer="quiz.pd_phases_a",
            explanation="quiz.pd_phases_why",
        ),
        Question(
            id="pd_output_cost",
            lesson="prefill_decode",
            text="quiz.pd_output_cost",
            options=("quiz.pd_output_cost_a", "quiz.pd_output_cost_b", "quiz.pd_output_cost_c"),
            answer="quiz.pd_output_cost_c",
            explanation="quiz.pd_output_cost_why",
        ),
        Question(
            id="pd_ridge",
            lesson="prefill_decode",
            text="quiz.pd_ridge",
            options=("quiz.pd_ridge_a", "quiz.pd_ridge_b", "quiz.pd_ridge_c"),
            answer="quiz.pd_ridge_b",
            explanation="quiz.pd_ridge_why",
            facts=_pd_ridge,
        ),
        Question(
            id="pd_ttft",
            lesson="prefill_decode",
            text="quiz.pd_ttft",
            options=("quiz.pd_ttft_a", "quiz.pd_ttft_b", "quiz.pd_ttft_c"),
            answer="quiz.pd_ttft_a",
            explanation="quiz.pd_ttft_why",
        ),
    ),
    "decode_speed": (
        Question(
            id="ds_floor",
            lesson="decode_speed",
            text="quiz.ds_floor",
            options=("quiz.ds_floor_a", "quiz.ds_floor_b", "quiz.ds_floor_c"),
            answer="quiz.ds_floor_b",
            explanation="quiz.ds_floor_why",
            facts=_ds_floor,
        ),
        Question(
            id="ds_skip",
            lesson="decode_speed",
            text="quiz.ds_skip",
            options=("quiz.ds_skip_a", "quiz.ds_skip_b", "quiz.ds_skip_c"),
            answer="quiz.ds_skip_c",
            explanation="quiz.ds_skip_why",
        ),
        Question(
            id="ds_tp",
            lesson="decode_speed",
            text="quiz.ds_tp",
            options=("quiz.ds_tp_a", "quiz.ds_tp_b", "quiz.ds_tp_c"),
            answer="quiz.ds_tp_a",
            explanation="quiz.ds_tp_why",
        ),
        Question(
            id="ds_batch",
            lesson="decode_speed",
            text="quiz.ds_batch",
            options=("quiz.ds_batch_a", "quiz.ds_batch_b", "quiz.ds_batch_c"),
            answer="quiz.ds_batch_b",
            explanation="quiz.ds_batch_why",
        ),
    ),
    "flash_attention": (
        Question(
            id="fa_kv",
            lesson="flash_attention",
            text="quiz.fa_kv",
            options=("quiz.fa_kv_a", "quiz.fa_kv_b", "quiz.fa_kv_c"),
            answer="quiz.fa_kv_b",
            explanation="quiz.fa_kv_why",
            facts=_fa_kv,
        ),
        Question(
            id="fa_what",
            lesson="flash_attention",
            text="quiz.fa_what",
            options=("quiz.fa_what_a", "quiz.fa_what_b", "quiz.fa_what_c"),
            answer="quiz.fa_what_c",
            explanation="quiz.fa_what_why",
        ),
        Question(
            id="fa_phase",
            lesson="flash_attention",
            text="quiz.fa_phase",
            options=("quiz.fa_phase_a", "quiz.fa_phase_b", "quiz.fa_phase_c"),
            answer="quiz.fa_phase_a",
            explanation="quiz.fa_phase_why",
            facts=_fa_phase,
        ),
        Question(
            id="fa_reduce",
            lesson="flash_attention",
            text="quiz.fa_reduce",
            options=("quiz.fa_reduce_a", "quiz.fa_reduce_b", "quiz.fa_reduce_c", "quiz.fa_reduce_d"),
            answer="quiz.fa_reduce_c",
            explanation="quiz.fa_reduce_why",
        ),
        Question(
            id="fa_sram",
            lesson="flash_attention",
            text="quiz.fa_sram",
            options=("quiz.fa_sram_a", "quiz.fa_sram_b", "quiz.fa_sram_c"),
            answer="quiz.fa_sram_b",
            explanation="quiz.fa_sram_why",
            facts=_fa_sram,
        ),
    ),
    "sizing": (
        Question(
            id="sz_rule",
            lesson="sizing",
            text="quiz.sz_rule",
            options=("quiz.sz_rule_a", "quiz.sz_rule_b", "quiz.sz_rule_c"),
            answer="quiz.sz_rule_a",
            explanation="quiz.sz_rule_why",
            facts=_sz_rule,
        ),
        Question(
            id="sz_dashboard",
            lesson="sizing",
            text="quiz.sz_dashboard",
            options=("quiz.sz_dashboard_a", "quiz.sz_dashboard_b", "quiz.sz_dashboard_c"),
            answer="quiz.sz_dashboard_b",
            explanation="quiz.sz_dashboard_why",
            facts=_sz_dashboard,
        ),
        Question(
            id="sz_declared",
            lesson="sizing",
            text="quiz.sz_declared",
            options=("quiz.sz_declared_a", "quiz.sz_declared_b", "quiz.sz_declared_c"),
            answer="quiz.sz_declared_c",
            explanation="quiz.sz_declared_why",
            facts=_sz_declared,
        ),
        Question(
            id="sz_preemption",
            lesson="sizing",
            text="quiz.sz_preemption",
            options=("quiz.sz_preemption_a", "quiz.sz_preemption_b", "quiz.sz_preemption_c"),
            answer="quiz.sz_preemption_a",
            explanation="quiz.sz_preemption_why",
        ),
    ),
    "agent_1m": (
        Question(
            id="ag_cache",
            lesson="agent_1m",
            text="quiz.ag_cache",
            options=("quiz.ag_cache_a", "quiz.ag_cache_b", "quiz.ag_cache_c"),
            answer="quiz.ag_cache_c",
            explanation="quiz.ag_cache_why",
            facts=_ag_cache,
        ),
        Question(
            id="ag_time",
            lesson="agent_1m",
            text="quiz.ag_time",
            options=("quiz.ag_time_a", "quiz.ag_time_b", "quiz.ag_time_c"),
            answer="quiz.ag_time_a",
            explanation="quiz.ag_time_why",
            facts=_ag_time,
        ),
        Question(
            id="ag_evict",
            lesson="agent_1m",
            text="quiz.ag_evict",
            options=("quiz.ag_evict_a", "quiz.ag_evict_b", "quiz.ag_evict_c"),
            answer="quiz.ag_evict_b",
            explanation="quiz.ag_evict_why",
        ),
        Question(
            id="ag_measure",
            lesson="agent_1m",
            text="quiz.ag_measure",
            options=("quiz.ag_measure_a", "quiz.ag_measure_b", "quiz.ag_measure_c"),
            answer="quiz.ag_measure_c",
            explanation="quiz.ag_measure_why",
        ),
    ),
    "vllm_pool": (
        Question(
            id="vp_startup",
            lesson="vllm_pool",
            text="quiz.vp_startup",
            options=("quiz.vp_startup_a", "quiz.vp_startup_b", "quiz.vp_startup_c"),
            answer="quiz.vp_startup_a",
            explanation="quiz.vp_startup_why",
        ),
        Question(
            id="vp_tokens",
            lesson="vllm_pool",
            text="quiz.vp_tokens",
            options=("quiz.vp_tokens_a", "quiz.vp_tokens_b", "quiz.vp_tokens_c"),
            answer="quiz.vp_tokens_b",
            explanation="quiz.vp_tokens_why",
            facts=_vp_tokens,
        ),
        Question(
            id="vp_util",
            lesson="vllm_pool",
            text="quiz.vp_util",
            options=("quiz.vp_util_a", "quiz.vp_util_b", "quiz.vp_util_c"),
            answer="quiz.vp_util_c",
            explanation="quiz.vp_util_why",
        ),
        Question(
            id="vp_tp",
            lesson="vllm_pool",
            text="quiz.vp_tp",
            options=("quiz.vp_tp_a", "quiz.vp_tp_b", "quiz.vp_tp_c"),
            answer="quiz.vp_tp_a",
            explanation="quiz.vp_tp_why",
            facts=_vp_tp,
        ),
    ),
    "vllm_log": (
        Question(
            id="vl_implied",
            lesson="vllm_log",
            text="quiz.vl_implied",
            options=("quiz.vl_implied_a", "quiz.vl_implied_b", "quiz.vl_implied_c"),
            answer="quiz.vl_implied_b",
            explanation="quiz.vl_implied_why",
            facts=_vl_implied,
        ),
        Question(
            id="vl_half",
            lesson="vllm_log",
            text="quiz.vl_half",
            options=("quiz.vl_half_a", "quiz.vl_half_b", "quiz.vl_half_c"),
            answer="quiz.vl_half_c",
            explanation="quiz.vl_half_why",
        ),
        Question(
            id="vl_refuse",
            lesson="vllm_log",
            text="quiz.vl_refuse",
            options=("quiz.vl_refuse_a", "quiz.vl_refuse_b", "quiz.vl_refuse_c"),
            answer="quiz.vl_refuse_a",
            explanation="quiz.vl_refuse_why",
        ),
    ),
    "paged_attention": (
        Question(
            id="pa_waste",
            lesson="paged_attention",
            text="quiz.pa_waste",
            options=("quiz.pa_waste_a", "quiz.pa_waste_b", "quiz.pa_waste_c"),
            answer="quiz.pa_waste_a",
            explanation="quiz.pa_waste_why",
        ),
        Question(
            id="pa_number",
            lesson="paged_attention",
            text="quiz.pa_number",
            options=("quiz.pa_number_a", "quiz.pa_number_b", "quiz.pa_number_c"),
            answer="quiz.pa_number_b",
            explanation="quiz.pa_number_why",
            facts=_pa_number,
        ),
        Question(
            id="pa_paged",
            lesson="paged_attention",
            text="quiz.pa_paged",
            options=("quiz.pa_paged_a", "quiz.pa_paged_b", "quiz.pa_paged_c"),
            answer="quiz.pa_paged_c",
            explanation="quiz.pa_paged_why",
        ),
        Question(
            id="pa_share",
            lesson="prefix_caching",
            text="quiz.pa_share",
            options=("quiz.pa_share_a", "quiz.pa_share_b", "quiz.pa_share_c"),
            answer="quiz.pa_share_b",
            explanation="quiz.pa_share_why",
        ),
    ),
    "prefix_caching": (
        Question(
            id="pc_vs_prompt",
            lesson="prefix_caching",
            text="quiz.pc_vs_prompt",
            options=("quiz.pc_vs_prompt_a", "quiz.pc_vs_prompt_b", "quiz.pc_vs_prompt_c"),
            answer="quiz.pc_vs_prompt_c",
            explanation="quiz.pc_vs_prompt_why",
        ),
        Question(
            id="pc_blocks",
            lesson="prefix_caching",
            text="quiz.pc_blocks",
            options=("quiz.pc_blocks_a", "quiz.pc_blocks_b", "quiz.pc_blocks_c"),
            answer="quiz.pc_blocks_a",
            explanation="quiz.pc_blocks_why",
            facts=_pc_blocks,
        ),
        Question(
            id="pc_ttl",
            lesson="prefix_caching",
            text="quiz.pc_ttl",
            options=("quiz.pc_ttl_a", "quiz.pc_ttl_b", "quiz.pc_ttl_c"),
            answer="quiz.pc_ttl_b",
            explanation="quiz.pc_ttl_why",
            facts=_pc_ttl,
        ),
        Question(
            id="pc_saves",
            lesson="prefix_caching",
            text="quiz.pc_saves",
            options=("quiz.pc_saves_a", "quiz.pc_saves_b", "quiz.pc_saves_c"),
            answer="quiz.pc_saves_a",
            explanation="quiz.pc_saves_why",
            facts=_pc_saves,
        ),
    ),
    "preemption": (
        Question(
            id="pr_what",
            lesson="preemption",
            text="quiz.pr_what",
            options=("quiz.pr_what_a", "quiz.pr_what_b", "quiz.pr_what_c"),
            answer="quiz.pr_what_b",
            explanation="quiz.pr_what_why",
        ),
        Question(
            id="pr_modes",
            lesson="preemption",
            text="quiz.pr_modes",
            options=("quiz.pr_modes_a", "quiz.pr_modes_b", "quiz.pr_modes_c"),
            answer="quiz.pr_modes_c",
            explanation="quiz.pr_modes_why",
        ),
        Question(
            id="pr_blocks",
            lesson="preemption",
            text="quiz.pr_blocks",
            options=("quiz.pr_blocks_a", "quiz.pr_blocks_b", "quiz.pr_blocks_c"),
            answer="quiz.pr_blocks_a",
            explanation="quiz.pr_blocks_why",
            facts=_pr_blocks,
        ),
        Question(
            id="pr_user",
            lesson="preemption",
            text="quiz.pr_user",
            options=("quiz.pr_user_a", "quiz.pr_user_b", "quiz.pr_user_c"),
            answer="quiz.pr_user_b",
            explanation="quiz.pr_user_why",
        ),
    ),
}


# ---------------------------------------------------------------- session state


def answers() -> dict[str, str]:
    """Question id → the option the student checked, for this session."""
    kept: dict[str, str] = st.session_state.setdefault(ANSWERS_KEY, {})
    return kept


def revealed() -> set[str]:
    kept: set[str] = st.session_state.setdefault(REVEALED_KEY, set())
    return kept


def score(stem: str) -> tuple[int, int, int]:
    """(right, answered, questions) of one lesson's quiz in this session."""
    given = answers()
    questions = QUIZZES[stem]
    answered = [q for q in questions if given.get(q.id)]
    return sum(given[q.id] == q.answer for q in answered), len(answered), len(questions)


def _check(stem: str, question: Question) -> None:
    """The 'Check' button's callback: keep the chosen option; the first real answer counts in the progress.

    The session's progress (ui/practice.py) counts each question once, like the lessons'
    predict boxes count a first attempt: checking again, or after "Start again", changes the
    quiz's own score, not the progress.
    """
    chosen = st.session_state.get(_radio_key(question)) or EMPTY
    answers()[question.id] = chosen
    counted: set[str] = st.session_state.setdefault(RECORDED_KEY, set())
    if chosen and question.id not in counted:
        counted.add(question.id)
        practice.record(stem, chosen == question.answer, kind="quiz")


def _reveal(question: Question) -> None:
    revealed().add(question.id)


def _start_again(stem: str) -> None:
    for question in QUIZZES[stem]:
        answers().pop(question.id, None)
        revealed().discard(question.id)
        st.session_state[_radio_key(question)] = None


def _radio_key(question: Question) -> str:
    return f"qz_{question.id}"


# ---------------------------------------------------------------- drawing


def lesson_picker() -> str:
    """The lesson whose quiz is shown, synced with ``?qz_lesson=<stem>``."""
    return course.url_selectbox(
        t("quiz.pick"),
        key=course.QUIZ_KEY,
        options=course.LESSONS,
        default=DEFAULT_LESSON,
        format_func=lambda stem: t(course.LESSON_TITLES[stem]),
    )


def show_score(stem: str) -> None:
    right, answered, total = score(stem)
    if answered == 0:
        st.caption(t("quiz.score_none", total=total))
    else:
        st.markdown(t("quiz.score", right=right, answered=answered, total=total))


def show_question(stem: str, number: int, question: Question) -> None:
    """One question in a bordered box: the options, then (once answered or revealed) the feedback."""
    facts = dict(question.facts()) if question.facts else {}
    with st.container(border=True):
        st.caption(t("quiz.question_number", n=number, total=len(QUIZZES[stem])))
        st.markdown(t(question.text, **facts))
        if lesson.presenting():
            _presented(question, facts)
        else:
            _asked(stem, question, facts)


def _asked(stem: str, question: Question, facts: Mapping[str, str]) -> None:
    given = answers().get(question.id)
    if given and _radio_key(question) not in st.session_state:
        st.session_state[_radio_key(question)] = given  # back on the page: show what was checked
    with st.form(key=f"qz_form_{question.id}", border=False):
        st.radio(
            t("quiz.your_answer"),
            question.options,
            index=None,
            format_func=_texts(question, facts).__getitem__,
            key=_radio_key(question),
            label_visibility="collapsed",
        )
        st.form_submit_button(
            t("quiz.check"), key=f"qz_check_{question.id}", on_click=_check, args=(stem, question), type="primary"
        )
    if given is None:
        return
    if given == EMPTY:
        st.info(t("quiz.choose_first"), icon=":material/touch_app:")
        return
    _feedback(question, facts, given)


def _presented(question: Question, facts: Mapping[str, str]) -> None:
    """Presentation mode: the class votes; the answer stays hidden until the presenter reveals it."""
    st.radio(
        t("quiz.your_answer"),
        question.options,
        index=None,
        format_func=_texts(question, facts).__getitem__,
        key=_radio_key(question),
        label_visibility="collapsed",
    )
    if question.id not in revealed():
        st.button(t("quiz.reveal"), key=f"qz_reveal_{question.id}", on_click=_reveal, args=(question,))
        return
    chosen = st.session_state.get(_radio_key(question))
    if chosen:
        _feedback(question, facts, chosen)
    else:
        st.success(t("quiz.answer_is", answer=t(question.answer, **facts)), icon=":material/check_circle:")
        _explain(question, facts)


def _texts(question: Question, facts: Mapping[str, str]) -> dict[str, str]:
    """Option key → its text, worked out now in the session's language (not later, by whoever asks)."""
    return {option: t(option, **facts) for option in question.options}


def _feedback(question: Question, facts: Mapping[str, str], given: str) -> None:
    if given == question.answer:
        st.success(t("quiz.right"), icon=":material/check_circle:")
    else:
        st.warning(t("quiz.not_quite", answer=t(question.answer, **facts)), icon=":material/lightbulb:")
    _explain(question, facts)


def _explain(question: Question, facts: Mapping[str, str]) -> None:
    st.markdown(t(question.explanation, **facts))
    st.page_link(
        course.lesson_page(question.lesson),
        label=t("quiz.see_lesson", lesson=t(course.LESSON_TITLES[question.lesson])),
        icon=":material/arrow_forward:",
        query_params=course.carried_params(),
    )


def start_again_button(stem: str) -> None:
    st.button(
        t("quiz.start_again"), key="qz_start_again", on_click=_start_again, args=(stem,), icon=":material/replay:"
    )
