"""What fits on my machine: Ollama and llama.cpp on a consumer GPU or a Mac's unified memory.

Widgets → kvcore → chart → text. Every number shown comes from kvcore.llamacpp and kvcore.ollama:
the start-up each engine would make, the memory it needs at each context (one vectorised call per
curve), the memory the GPU offers (Metal's working set on Apple silicon) and the longest context.
"""

from string import Template

import numpy as np
import streamlit as st

import kvcore
import ui
import ui.practice
from charts.local_llm import local_llm_figure
from kvcore.units import format_tokens
from ui import glossary, lesson, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

#: The engines, by the names they go by (the link holds the name, the same in both languages).
ENGINES = ("Ollama", "llama.cpp")
#: GGUF file types a local user downloads, smallest first (kvcore.GGUF_BITS_PER_WEIGHT has their bits).
GGUF_TYPES = ("Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "F16")
#: KV cache types both engines accept: OLLAMA_KV_CACHE_TYPE, and llama.cpp's -ctk / -ctv.
CACHE_TYPES = kvcore.OLLAMA_CACHE_TYPES
SLOTS = (1, 2, 4, 8)
#: Context step (tokens): llama.cpp pads its cells to 256, so every multiple of it is a real size.
STEP_TOKENS = 256
#: Points of each curve (a log-spaced grid of contexts).
CURVE_POINTS = 48
#: The longest context offered when the model does not say (an imported config without max_position_embeddings).
FALLBACK_CONTEXT = 131072
#: The newest Ollama whose scheduler estimates before loading; from 0.30.0 llama-server sizes the model.
OLLAMA_RELEASE = next(
    release for release in reversed(kvcore.OLLAMA_RELEASES) if not kvcore.ollama_release(release).llama_server
)

model = ui.current_model()
gpu = ui.current_gpu()
apple = kvcore.ollama_library(gpu) == "metal"

lesson.header(t("local_llm.title"), t("local_llm.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()

controls, results = st.columns([1, 2], gap="large")

with controls:
    engine = lesson.choice(
        t("local_llm.engine"), key="lo_engine", options=ENGINES, default="Ollama", help=t("local_llm.engine_help")
    )
    gguf = lesson.select_slider(
        t("local_llm.gguf"), key="lo_gguf", options=GGUF_TYPES, value="Q4_K_M", help=t("local_llm.gguf_help")
    )
    cache = lesson.choice(
        t("local_llm.cache"), key="lo_cache", options=CACHE_TYPES, default="f16", help=t("local_llm.cache_help")
    )
    longest = max(model.max_position_embeddings or FALLBACK_CONTEXT, 2 * STEP_TOKENS)
    context = lesson.slider(
        t("local_llm.context"),
        key="lo_context",
        min_value=STEP_TOKENS,
        max_value=longest,
        value=min(8192, longest),
        step=STEP_TOKENS,
        help=t("local_llm.context_help", longest=ui.num(format_tokens(longest))),
    )
    slots = lesson.select_slider(
        t("local_llm.slots"), key="lo_slots", options=SLOTS, value=1, help=t("local_llm.slots_help")
    )

# Contexts of the curves: log-spaced multiples of the step, from 1k (or less) to the model's longest.
grid = np.unique(np.round(np.geomspace(min(1024, longest), longest, CURVE_POINTS) / STEP_TOKENS) * STEP_TOKENS)
grid = grid.astype(np.int64)


try:
    weights = kvcore.gguf_weights_bytes(model, gguf)
    memory = kvcore.llamacpp_memory_bytes(gpu)
    if engine == "Ollama":
        # OLLAMA_FLASH_ATTENTION=1: without it Ollama ignores OLLAMA_KV_CACHE_TYPE (kvcore.ollama's docstring).
        startup = kvcore.ollama_startup(
            model,
            gpu=gpu,
            num_ctx=context,
            num_parallel=slots,
            kv_cache_type=cache,
            flash_attention=True,
            version=OLLAMA_RELEASE,
            weights_bytes=weights,
        )
        flash = startup.flash_attention
        used_cache = startup.kv_cache_type
        library = kvcore.ollama_library(gpu)
        needed = float(
            kvcore.ollama_required_bytes(
                model,
                num_ctx=context,
                num_parallel=slots,
                kv_cache_type=cache,
                flash_attention=flash,
                library=library,
                weights_bytes=weights,
                release=OLLAMA_RELEASE,
            )
        )
        curves = {
            kind: kvcore.ollama_required_bytes(
                model,
                num_ctx=grid,
                num_parallel=slots,
                kv_cache_type=kind,
                flash_attention=flash,
                library=library,
                weights_bytes=weights,
                release=OLLAMA_RELEASE,
            )
            for kind in CACHE_TYPES
        }
        longest_fit = kvcore.ollama_max_context(
            model,
            gpu=gpu,
            kv_cache_type=cache,
            num_parallel=slots,
            weights_bytes=weights,
            flash_attention=flash,
            step_tokens=STEP_TOKENS,
            max_tokens=longest,
            release=OLLAMA_RELEASE,
        )
        kv_bytes = startup.kv_pool_bytes
        counted_kv = startup.estimate.kv_bytes if startup.estimate is not None else kv_bytes
        release = startup.release
    else:
        # llama-server -c (context × slots) -np slots -ctk/-ctv cache, flash attention 'auto' (the newest build).
        startup = kvcore.llamacpp_startup(
            model,
            ctx_size=context * slots,
            parallel=slots,
            cache_type_k=cache,
            cache_type_v=cache,
            gpu=gpu,
            weights_bytes=weights,
        )
        flash = startup.flash_attn
        used_cache = startup.cache_type_k
        needed = float(
            kvcore.llamacpp_required_bytes(
                model,
                ctx_size=context * slots,
                parallel=slots,
                cache_type_k=cache,
                cache_type_v=cache,
                weights_bytes=weights,
            )
        )
        # Both vectorised over the contexts (one start-up each, then integer arithmetic): well under a millisecond.
        curves = {
            kind: kvcore.llamacpp_required_bytes(
                model,
                ctx_size=grid * slots,
                parallel=slots,
                cache_type_k=kind,
                cache_type_v=kind,
                weights_bytes=weights,
            )
            for kind in CACHE_TYPES
        }
        longest_fit = kvcore.llamacpp_max_context(
            model,
            gpu=gpu,
            parallel=slots,
            cache_type_k=cache,
            cache_type_v=cache,
            weights_bytes=weights,
            step_tokens=STEP_TOKENS,
            max_tokens=longest,
        )
        kv_bytes = float(startup.kv_bytes + startup.recurrent_bytes)
        counted_kv = kv_bytes
        release = startup.release
except ValueError as error:
    lesson.stop_with(error)

# Both functions test the same multiples of the step as the slider: the context fits when the longest reaches it.
fits = context <= longest_fit
unit = lesson.memory_unit()
shown_longest = ui.num(format_tokens(longest_fit)) if longest_fit else t("local_llm.none")

with results:
    row = st.columns(3)
    row[0].metric(t("local_llm.metric_kv"), lesson.mem(kv_bytes), help=t("local_llm.metric_kv_help"))
    row[1].metric(
        t("local_llm.metric_weights", gguf=gguf), lesson.mem(weights), help=t("local_llm.metric_weights_help")
    )
    row[2].metric(t("local_llm.metric_needed"), lesson.mem(needed), help=t("local_llm.metric_needed_help"))
    row = st.columns(3)
    row[0].metric(
        t("local_llm.metric_memory"),
        lesson.mem(memory),
        help=t("local_llm.metric_memory_apple" if apple else "local_llm.metric_memory_card"),
    )
    row[1].metric(t("local_llm.metric_longest"), shown_longest, help=t("local_llm.metric_longest_help"))
    row[2].metric(t("local_llm.metric_fits"), t("local_llm.yes" if fits else "local_llm.no"))
    figure = lesson.figure(
        local_llm_figure,
        context_tokens=grid,
        needed_bytes=curves,
        chosen=cache,
        limit_bytes=memory,
        current_tokens=context,
        current_bytes=needed,
        separators=ui.separators(),
        unit_bytes=lesson.memory_unit_bytes(),
        unit=unit,
        labels={
            "title": t("local_llm.chart_title", engine=engine),
            "subtitle": t(
                "local_llm.chart_subtitle",
                model=model.name,
                gguf=gguf,
                gpu=gpu.name,
                slots=ui.plural("local_llm.slots_count", slots),
            ),
            "x_title": t("local_llm.chart_x"),
            "y_title": t("local_llm.chart_y", unit=unit),
            "limit": t("local_llm.chart_limit"),
            "current": t("local_llm.chart_current"),
            "tokens": t("chart.tokens"),
        },
    )
    lesson.chart(figure, key="lo_chart")

if fits:
    st.success(
        t(
            "local_llm.fits",
            context=ui.num(format_tokens(context)),
            spare=lesson.mem(memory - needed),
            longest=shown_longest,
        ),
        icon=":material/check_circle:",
    )
elif longest_fit:
    st.warning(
        t(
            "local_llm.too_long",
            context=ui.num(format_tokens(context)),
            missing=lesson.mem(needed - memory),
            longest=shown_longest,
        ),
        icon=":material/warning:",
    )
else:
    st.warning(
        t("local_llm.no_context", weights=lesson.mem(weights), memory=lesson.mem(memory)),
        icon=":material/block:",
    )
if used_cache != cache:
    st.caption(t("local_llm.cache_ignored", requested=cache, used=used_cache))

# ---------------------------------------------------------------- the start-up lines

st.subheader(t("local_llm.lines_title", engine=engine, release=release))
st.code("\n".join(startup.lines()), language="text")
st.caption(t("local_llm.lines_ollama" if engine == "Ollama" else "local_llm.lines_llamacpp"))

# ---------------------------------------------------------------- estimate against allocation

st.subheader(t("local_llm.why_title"))
if engine == "Ollama":
    st.markdown(
        t(
            "local_llm.ollama_estimate",
            release=release,
            counted=lesson.mem(counted_kv),
            cache=used_cache,
            per_value=ui.num(f"{kvcore.ollama_estimate_bytes_per_value(used_cache):g}"),
            allocated=lesson.mem(kv_bytes),
            stored=ui.num(f"{kvcore.ollama_cache_bytes_per_value(used_cache):.4g}"),
        )
    )
    st.markdown(t("local_llm.ollama_new"))
else:
    st.markdown(
        t(
            "local_llm.llamacpp_alloc",
            ctx=ui.num(format_tokens(context * slots)),
            cells=ui.num(format_tokens(startup.tokens)),
            cache=used_cache,
            compute=lesson.mem(startup.compute_bytes),
        )
    )
if apple:
    st.markdown(
        t(
            "local_llm.apple",
            memory=lesson.mem(gpu.memory_bytes),
            working=lesson.mem(memory),
        )
    )
else:
    st.markdown(t("local_llm.card", reported=lesson.mem(memory), nominal=lesson.mem(gpu.memory_bytes)))

with prediction:
    ui.practice.predict(
        "sequence_cache", stem="local_llm", model=model, gpu=gpu, context_tokens=context, kv_dtype="fp16"
    )
lesson.takeaway(t("local_llm.takeaway"))

# ---------------------------------------------------------------- the formulas

lang = ui.language()
sign = r"\le" if fits else ">"
# Each $word below is formula.<word> in the reader's language (string.Template: LaTeX's own braces stay as they are).
formula_words = {
    "needed": t("formula.needed"),
    "estimate": t("formula.estimate"),
    "graph": t("formula.graph"),
    "reserve": t("formula.reserve"),
    "compute": t("formula.compute"),
    "cells": t("formula.cells"),
    "layers": t("formula.layers"),
    "row": t("formula.row"),
}
if engine == "Ollama":
    # Ollama's own test: the weights, its estimate of the cache, and the rest of its estimate (graph, reserve, a layer).
    lesson.formula(
        Template(
            r"\text{$needed} = W + \text{KV}_{\text{$estimate}} + \text{$graph} + \text{$reserve}"
            r" \;$sign\; M_{\text{GPU}}"
        ).substitute(formula_words, sign=sign),
        rf"{lesson.latex_mem(weights)} + {lesson.latex_mem(counted_kv)} + "
        rf"{lesson.latex_mem(needed - weights - counted_kv)} = \mathbf{{{lesson.latex_mem(needed)}}} \;{sign}\; "
        rf"{lesson.latex_mem(memory)}",
    )
else:
    lesson.formula(
        Template(r"\text{$needed} = W + \text{KV} + \text{$compute} \;$sign\; M_{\text{GPU}}").substitute(
            formula_words, sign=sign
        ),
        rf"{lesson.latex_mem(weights)} + {lesson.latex_mem(kv_bytes)} + "
        rf"{lesson.latex_mem(startup.compute_bytes)} = \mathbf{{{lesson.latex_mem(needed)}}} \;{sign}\; "
        rf"{lesson.latex_mem(memory)}",
    )
# The cache the engine allocates: its cells, times what one cell costs on every layer.
per_cell = kv_bytes / max(startup.tokens, 1)
lesson.formula(
    Template(r"\text{KV} = \text{$cells} \cdot \sum_{\text{$layers}} (K_{\text{$row}} + V_{\text{$row}})").substitute(
        formula_words
    ),
    rf"{latex_number(startup.tokens, lang)} \cdot {latex_number(round(per_cell), lang)}\ \text{{B}}"
    rf" = \mathbf{{{lesson.latex_mem(kv_bytes)}}}",
)
st.caption(t("local_llm.formula_caption"))

glossary.terms_used("local_llm")
