"""The engine's KV pool: the same model and GPU on vLLM, SGLang, llama.cpp, Ollama and TensorRT-LLM.

Widgets → kvcore → figures → text. Every number shown comes from kvcore.engines
(each engine's own module follows that engine's source).
"""

from string import Template

import streamlit as st

import kvcore
import ui
from charts.engines import engines_figure
from charts.formatting import count
from kvcore.units import format_tokens
from ui import glossary, lesson, t
from ui.figure_cache import spec_hash_funcs
from ui.formula import latex_number

lesson.rerun_alone(__file__)

TOKENS_PER_BLOCK = (8, 16, 32, 64, 128)
PAGE_SIZES = (1, 16, 32, 64)
LLAMACPP_TYPES = ("f16", "q8_0", "q4_0")
#: -fa auto|on|off (Ollama: unset, 1, 0) → the flag the engine functions take (None: the build's default).
FLASH_CHOICES = {"auto": None, "on": True, "off": False}
LLAMACPP_BUILDS = tuple(sorted(kvcore.MODELLED_LLAMACPP_BUILDS))
#: Bits per cached value: 16 is every engine's default, 8 its one-byte format (kvcore.engines.CACHE_FORMATS).
CACHE_BITS = (16, 8)
#: An engine → the sentence that says how it sizes its cache.
RULE_KEYS = {
    "vllm": "engines.rule_vllm",
    "sglang": "engines.rule_sglang",
    "llama.cpp": "engines.rule_llamacpp",
    "ollama": "engines.rule_ollama",
    "trtllm": "engines.rule_trtllm",
}
#: A budget term (kvcore's names, every engine's) → its name on the page.
TERM_NAMES = {
    "held_back": "engines.term_held_back",
    "weights": "engines.term_weights",
    "activation_peak": "engines.term_activation_peak",
    "profiling_peak": "engines.term_profiling_peak",
    "non_torch": "engines.term_non_torch",
    "cuda_graphs": "engines.term_cuda_graphs",
    "startup_overhead": "engines.term_startup_overhead",
    "mamba_state": "engines.term_mamba_state",
}
#: An engine → the formula of its pool (symbols only; the numbers come from its start-up). Each $word is
#: ``formula.<word>`` in the reader's language (string.Template: LaTeX's own braces stay as they are).
POOL_FORMULAS = {
    "vllm": r"\text{pool} = M - M (1 - u) - W - A - N - G",
    "sglang": r"\text{pool} = M - \text{$before} - W - F_{\text{$before}} (1 - f_{\text{$static}})",
    "llama.cpp": r"\text{cache} = \text{$cells} \cdot \sum_{\text{$layers}} (K_{\text{$row}} + V_{\text{$row}})",
    "ollama": r"\text{cache} = \text{$cells} \cdot \sum_{\text{$layers}} (K_{\text{$row}} + V_{\text{$row}})",
    "trtllm": r"\text{pool} = M - W - \text{$peak} - (1 - f_{\text{$free}}) \cdot F",
}


@lesson.cache_data(show_spinner=False, max_entries=512, hash_funcs=spec_hash_funcs())
def compared(
    model: kvcore.ModelSpec,
    gpu: kvcore.GpuSpec,
    context: int,
    gpus: int,
    cache_bits: int,
    engine: str,
    own: tuple[tuple[str, object], ...],
) -> tuple[kvcore.EngineComparison, ...]:
    """kvcore.compare_engines once per settings (llama.cpp's and Ollama's rows search a few dozen start-ups)."""
    return kvcore.compare_engines(
        model, gpu, context_tokens=context, gpus=gpus, cache_bits=cache_bits, flags={engine: dict(own)}
    )


model = ui.current_model()
gpu = ui.current_gpu()
names = kvcore.ENGINE_NAMES

lesson.header(t("engines.title"), t("engines.intro"))

controls, results = st.columns([1, 2], gap="large")

with controls:
    longest = model.max_position_embeddings
    context = lesson.slider(
        t("engines.context"),
        key="eg_context",
        min_value=256,
        max_value=longest,
        value=min(8192, longest),
        step=256,
        help=t("engines.context_help"),
    )
    gpus = lesson.select_slider(
        t("engines.gpus"), key="eg_gpus", options=lesson.TP_SIZES, value=1, help=t("engines.gpus_help")
    )
    cache_bits = lesson.choice(
        t("engines.cache"),
        key="eg_cache",
        options=CACHE_BITS,
        default=16,
        help=t("engines.cache_help"),
    )
    # Shown by its own name; the link holds kvcore's id ("?eg_engine=trtllm"; an older link's "TensorRT-LLM" works too).
    engine = lesson.choice(
        t("engines.engine"),
        key="eg_engine",
        options=kvcore.ENGINES,
        default="vllm",
        format_func=names.__getitem__,
        help=t("engines.engine_help"),
    )
    # The chosen engine's own flags, named as the engine names them; the other rows keep their defaults.
    own: dict[str, object] = {}
    with st.expander(t("engines.flags_title", engine=names[engine]), expanded=True):
        if engine == "vllm":
            own["utilization"] = lesson.slider(
                "--gpu-memory-utilization",
                key="eg_vllm_u",
                min_value=0.50,
                max_value=0.98,
                value=0.90,
                step=0.01,
            )
            own["version"] = lesson.select_slider(
                t("engines.release"),
                key="eg_vllm_release",
                options=kvcore.MODELLED_RELEASES,
                value=kvcore.NEWEST_RELEASE,
            )
        elif engine == "llama.cpp":
            cache_type = lesson.choice(
                "--cache-type-k / --cache-type-v", key="eg_cpp_cache", options=LLAMACPP_TYPES, default="f16"
            )
            own |= {"cache_type_k": cache_type, "cache_type_v": cache_type}
            flash = lesson.choice(
                "--flash-attn", key="eg_cpp_fa", options=FLASH_CHOICES, default="auto", help=t("engines.fa_help")
            )
            own["flash_attn"] = FLASH_CHOICES[flash]
            own["swa_full"] = lesson.toggle("--swa-full", key="eg_cpp_swa_full", help=t("engines.swa_full_help"))
            if lesson.toggle(t("engines.own_slots"), key="eg_cpp_own_slots", help=t("engines.own_slots_help")):
                slots = lesson.slider("--parallel", key="eg_cpp_parallel", min_value=1, max_value=64, value=4)
                own |= {"parallel": slots, "ctx_size": slots * context}
            own["build"] = lesson.select_slider(
                t("engines.build"),
                key="eg_cpp_build",
                options=LLAMACPP_BUILDS,
                value=kvcore.NEWEST_LLAMACPP_BUILD,
                format_func=lambda build: f"b{build}",
            )
        elif engine == "ollama":
            own["kv_cache_type"] = lesson.choice(
                "OLLAMA_KV_CACHE_TYPE", key="eg_oll_cache", options=kvcore.OLLAMA_CACHE_TYPES, default="f16"
            )
            flash = lesson.choice(
                "OLLAMA_FLASH_ATTENTION",
                key="eg_oll_fa",
                options=FLASH_CHOICES,
                default="auto",
                help=t("engines.fa_help"),
            )
            own["flash_attention"] = FLASH_CHOICES[flash]
            if lesson.toggle(t("engines.own_slots"), key="eg_oll_own_slots", help=t("engines.own_slots_help")):
                own["num_parallel"] = lesson.slider(
                    "OLLAMA_NUM_PARALLEL", key="eg_oll_parallel", min_value=1, max_value=64, value=4
                )
            own["version"] = lesson.select_slider(
                t("engines.release"),
                key="eg_oll_release",
                options=kvcore.OLLAMA_RELEASES,
                value=kvcore.OLLAMA_DEFAULT_RELEASE,
            )
        elif engine == "sglang":
            if lesson.toggle(t("engines.sglang_own_fraction"), key="eg_sgl_own", help=t("engines.sglang_own_help")):
                own["mem_fraction_static"] = lesson.slider(
                    "--mem-fraction-static",
                    key="eg_sgl_fraction",
                    min_value=0.50,
                    max_value=0.95,
                    value=0.88,
                    step=0.01,
                )
            own["page_size"] = lesson.select_slider("--page-size", key="eg_sgl_page", options=PAGE_SIZES, value=1)
            own["release"] = lesson.select_slider(
                t("engines.release"),
                key="eg_sgl_release",
                options=kvcore.SGLANG_RELEASES,
                value=kvcore.DEFAULT_SGLANG_RELEASE,
            )
        elif engine == "trtllm":
            own["free_gpu_memory_fraction"] = lesson.slider(
                "free_gpu_memory_fraction",
                key="eg_trt_fraction",
                min_value=0.50,
                max_value=0.95,
                value=0.90,
                step=0.01,
            )
            own["release"] = lesson.select_slider(
                t("engines.release"),
                key="eg_trt_release",
                options=kvcore.TRTLLM_RELEASES,
                value=kvcore.TRTLLM_DEFAULT_RELEASE,
            )
            own["backend"] = lesson.choice(
                "backend", key="eg_trt_backend", options=("pytorch", "trt"), default="pytorch"
            )
            own["tokens_per_block"] = lesson.select_slider(
                "tokens_per_block",
                key="eg_trt_block",
                options=TOKENS_PER_BLOCK,
                value=kvcore.trtllm_default_tokens_per_block(str(own["release"]), own["backend"]),  # type: ignore[arg-type]
            )

try:
    # Every engine at its own defaults, then the chosen one (kvcore.engines.compare_engines).
    rows = compared(model, gpu, context, gpus, cache_bits, engine, tuple(sorted(own.items())))
except ValueError as error:
    lesson.stop_with(error)

chosen_index = next(index for index, row in enumerate(rows) if row.engine == engine)
chosen = rows[chosen_index]
startup = chosen.startup
unit = lesson.memory_unit()


def bar_text(item: kvcore.EngineComparison) -> str:
    """What an engine's bar says: the requests it serves at once, or why it serves none."""
    if not item.runs_on_gpu:
        return t("engines.chart_no_backend", vendor=gpu.vendor)
    if not item.startup.fits:
        return t("engines.chart_partly_cpu" if item.engine in kvcore.SLOT_ENGINES else "engines.chart_refuses")
    return t("engines.chart_users", users=ui.plural("users.count", item.users))


with results:
    row = st.columns(3)
    row[0].metric(t("engines.metric_pool", engine=names[engine]), lesson.mem(startup.kv_pool_bytes))
    row[1].metric(t("engines.metric_tokens"), ui.num(format_tokens(startup.tokens)))
    row[2].metric(t("engines.metric_users", length=ui.num(format_tokens(context))), ui.num(count(chosen.users)))
    figure = lesson.figure(
        engines_figure,
        names=[names[item.engine] for item in rows],
        pool_bytes=[item.startup.kv_pool_bytes for item in rows],
        texts=[bar_text(item) for item in rows],
        fits=[item.users > 0 for item in rows],
        chosen=chosen_index,
        separators=ui.separators(),
        unit_bytes=lesson.memory_unit_bytes(),
        unit=unit,
        labels={
            "title": t("engines.chart_title"),
            "subtitle": t(
                "engines.chart_subtitle",
                model=model.name,
                gpu=gpu.name,
                gpus=gpus,
                length=ui.num(format_tokens(context)),
            ),
            "x_title": t("engines.chart_axis", unit=unit),
            "y_title": "",
            "chosen": names[engine],
        },
    )
    lesson.chart(figure, key="eg_chart")

# ---------------------------------------------------------------- why they differ

st.subheader(t("engines.why_title"))
st.markdown(
    "\n".join(
        t(
            RULE_KEYS[item.engine],
            release=item.startup.release,
            pool=lesson.mem(item.startup.kv_pool_bytes),
            tokens=ui.num(format_tokens(item.startup.tokens)),
            users=ui.plural("users.count", item.users),
        )
        + ("" if item.runs_on_gpu else " " + t("engines.rule_no_backend", engine=names[item.engine], vendor=gpu.vendor))
        for item in rows
    )
)

# ---------------------------------------------------------------- the chosen engine's start-up

st.subheader(t("engines.lines_title", engine=names[engine], release=startup.release))
st.code("\n".join(startup.lines()), language="text")
if startup.terms:
    st.markdown(
        "\n".join(
            t(
                "engines.term",
                name=t(TERM_NAMES[term.name]) if term.name in TERM_NAMES else term.name,
                size=lesson.mem(term.bytes),
                source=term.source,
            )
            for term in startup.terms
        )
    )
if not startup.fits:
    st.warning(t("engines.does_not_start", engine=names[engine]), icon=":material/block:")

lesson.takeaway(t("engines.takeaway"))

# ---------------------------------------------------------------- the formula

lang = ui.language()
if startup.terms:
    # Every engine's pool is what the card reports less what its start-up takes first (kvcore's terms).
    substituted = (
        lesson.latex_mem(gpu.reported_memory_bytes)
        + "".join(rf" - {lesson.latex_mem(term.bytes)}" for term in startup.terms)
        + rf" \approx \mathbf{{{lesson.latex_mem(startup.kv_pool_bytes)}}}"
    )
else:
    # llama.cpp and Ollama: the cells asked for, times what one cell costs on every layer.
    per_cell = startup.kv_pool_bytes / max(startup.tokens, 1)
    substituted = (
        rf"{latex_number(startup.tokens, lang)} \cdot {latex_number(round(per_cell), lang)}\ \text{{B}}"
        rf" = \mathbf{{{lesson.latex_mem(startup.kv_pool_bytes)}}}"
    )
# Each $word in a formula is formula.<word> in the reader's language (POOL_FORMULAS).
formula_words = {
    "users": t("formula.users"),
    "concurrency": t("formula.concurrency"),
    "context": t("formula.context"),
    "before": t("formula.before"),
    "static": t("formula.static"),
    "cells": t("formula.cells"),
    "layers": t("formula.layers"),
    "row": t("formula.row"),
    "peak": t("formula.peak"),
    "free": t("formula.free"),
}
lesson.formula(Template(POOL_FORMULAS[engine]).substitute(formula_words), substituted)
concurrency = startup.max_concurrency(context) if startup.fits else 0.0
lesson.formula(
    Template(r"\text{$users} = \left\lfloor \text{$concurrency}(\text{$context}) \right\rfloor").substitute(
        formula_words
    ),
    rf"\left\lfloor {latex_number(round(concurrency, 2), lang)} \right\rfloor"
    rf" = \mathbf{{{latex_number(chosen.users, lang)}}}",
)
st.caption(t("engines.users_caption"))

glossary.terms_used("engines")
