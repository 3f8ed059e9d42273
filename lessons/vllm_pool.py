"""vLLM's KV pool: from the GPU's memory to the start-up log, per GPU, with tensor, pipeline and context parallelism.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.
"""

import dataclasses

import numpy as np
import streamlit as st

import kvcore
import ui
import ui.practice
from charts.formatting import times
from charts.vllm_pool import pool_waterfall_figure, utilization_figure
from kvcore.units import GiB, format_tokens
from kvcore.vllm_pool import pool_curve, stage_layers
from kvcore.vllm_startup import startup_lines
from ui import glossary, lesson, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

KV_DTYPES = ("bf16", "fp16", "fp8")
BLOCK_SIZES = ("auto", "16", "32", "64", "128")
PP_SIZES = (1, 2, 4)
CP_SIZES = (1, 2, 4)
UTILIZATION_AXIS = np.round(np.arange(0.50, 0.981, 0.01), 2)
#: The releases a student can pick: one per change in vLLM's start-up (kvcore.vllm_versions).
RELEASES = kvcore.MODELLED_RELEASES
#: A rule of the chosen release → the sentence that says it (the era's differences, in words).
ERA_KEYS = {"V0": "vllm_pool.era_v0", "early V1": "vllm_pool.era_early_v1", "V1": "vllm_pool.era_v1"}
#: A term of vLLM's budget (kvcore.budget names) → its line with size and source.
TERM_KEYS = {
    kvcore.WEIGHTS: "vllm_pool.term_weights",
    kvcore.ACTIVATION_PEAK: "vllm_pool.term_activation_peak",
    kvcore.NON_TORCH: "vllm_pool.term_non_torch",
    kvcore.CUDA_GRAPHS: "vllm_pool.term_cuda_graphs",
}

model = ui.current_model()
gpu = ui.current_gpu()

lesson.header(t("vllm_pool.title"), t("vllm_pool.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("vllm_pool", key="vp_presets")
# "No room for the cache" is said here, at the top, once the numbers are known.
fit_notice = st.container()

controls, results = st.columns([1, 2], gap="large")

with controls:
    utilization = lesson.slider(
        t("vllm_pool.utilization"),
        key="vp_utilization",
        min_value=0.50,
        max_value=0.98,
        value=kvcore.DEFAULT_UTILIZATION,
        step=0.01,
        help=t("vllm_pool.utilization_help"),
    )
    longest = model.max_position_embeddings
    max_model_len = lesson.slider(
        t("vllm_pool.max_model_len"),
        key="vp_max_model_len",
        min_value=128,
        max_value=longest,
        value=min(8192, longest),
        step=8,  # vLLM issue #10517's 29,000 is a multiple of 8, not of 16 (its preset must be a slider value)
        help=t("vllm_pool.max_model_len_help", maximum=ui.num(format_tokens(longest))),
    )
    version = lesson.select_slider(
        t("vllm_pool.version"),
        key="vp_version",
        options=RELEASES,
        value=kvcore.NEWEST_RELEASE,
        help=t("vllm_pool.version_help"),
    )
    eager = lesson.toggle(t("vllm_pool.eager"), key="vp_eager", help=t("vllm_pool.eager_help"))
    with lesson.secondary():
        own_batch = lesson.toggle(t("vllm_pool.own_batch"), key="vp_own_batch", help=t("vllm_pool.own_batch_help"))
        batched_tokens = None
        if own_batch:
            batched_tokens = lesson.slider(
                t("vllm_pool.batched_tokens"),
                key="vp_batched_tokens",
                min_value=512,
                max_value=65536,
                value=kvcore.DEFAULT_MAX_NUM_BATCHED_TOKENS,
                step=16,
                help=t("vllm_pool.batched_tokens_help"),
            )
        block_choice = lesson.choice(
            t("vllm_pool.block_size"),
            key="vp_block_size",
            options=BLOCK_SIZES,
            default="auto",
            labels={"auto": "vllm_pool.block_auto"},
        )
        kv_dtype = lesson.choice(t("vllm_pool.kv_dtype"), key="vp_kv_dtype", options=KV_DTYPES, default="bf16")
        tp = lesson.select_slider(
            t("vllm_pool.tp"), key="vp_tp", options=lesson.TP_SIZES, value=1, help=t("vllm_pool.tp_help")
        )
        pp = lesson.select_slider(
            t("vllm_pool.pp"), key="vp_pp", options=PP_SIZES, value=1, help=t("vllm_pool.pp_help")
        )
        # Decode context parallelism reuses the TP ranks: CP must divide TP (vllm/config/parallel.py).
        cp = lesson.select_slider(
            t("vllm_pool.cp"),
            key="vp_cp",
            options=[size for size in CP_SIZES if tp % size == 0] or [1],
            value=1,
            help=t("vllm_pool.cp_help"),
            disabled=tp == 1,
        )

try:
    # The whole start-up as the chosen release builds it, from the GPU alone (kvcore.vllm_startup.vllm_startup).
    startup = kvcore.vllm_startup(
        model,
        gpu,
        version=version,
        utilization=utilization,
        max_model_len=max_model_len,
        max_num_batched_tokens=batched_tokens,
        kv_dtype=kv_dtype,
        enforce_eager=eager,
        block_size=None if block_choice == "auto" else int(block_choice),
        tp=tp,
        pp=pp,
        cp=cp,
    )
    log = startup.log
    release = startup.release
    block_size = startup.block_size
    batched = startup.max_num_batched_tokens
    # The same server along u: its terms and blocks, vectorised (kvcore.vllm_pool.pool_curve).
    curve_blocks, curve_tokens = pool_curve(log, utilization=UTILIZATION_AXIS)
    heads_per_rank = kvcore.kv_heads_per_gpu(max(model.num_key_value_heads, 1), tp)
    layers_per_stage = stage_layers(model.num_hidden_layers, pp)
except ValueError as error:
    lesson.stop_with(error)

unit = lesson.memory_unit()
lines = startup_lines(startup)

with results:
    row = st.columns(2)
    row[0].metric(t("vllm_pool.metric_pool"), lesson.pool_mem(log.kv_pool_bytes), help=t("vllm_pool.metric_pool_help"))
    row[1].metric(t("vllm_pool.metric_blocks"), ui.num(format_tokens(log.num_blocks)))
    row = st.columns(2)
    row[0].metric(t("vllm_pool.metric_tokens"), ui.num(format_tokens(startup.printed_tokens)))
    row[1].metric(
        t("vllm_pool.metric_concurrency", length=ui.num(format_tokens(max_model_len))),
        ui.num(times(log.max_concurrency, decimals=2)),
    )
    figure = lesson.figure(
        pool_waterfall_figure,
        log=log,
        separators=ui.separators(),
        unit_bytes=lesson.memory_unit_bytes(),
        unit=unit,
        does_not_fit=t("lesson.does_not_fit"),
        labels={
            "title": t("vllm_pool.waterfall_title"),
            "subtitle": t(
                "vllm_pool.waterfall_subtitle", gpu=gpu.name, model=model.name, gpus=ui.plural("gpus.count", log.gpus)
            ),
            "y_title": t("vllm_pool.waterfall_axis", unit=unit),
            "vram": t("vllm_pool.bar_vram"),
            "held_back": t("vllm_pool.bar_held_back", u=ui.num(f"{utilization:.2f}")),
            "weights": t("chart.weights"),
            "activation": t("vllm_pool.bar_activation"),
            "non_torch": t("vllm_pool.bar_non_torch"),
            "cuda_graphs": t("vllm_pool.bar_cuda_graphs"),
            "pool": t("vllm_pool.bar_pool"),
        },
    )
    lesson.chart(figure, key="vp_waterfall")
    memory_source = "vllm_pool.memory_logged" if gpu.reported_memory_is_logged else "vllm_pool.memory_estimated"
    st.caption(
        t(memory_source, gpu=gpu.name, memory=lesson.mem(log.memory_bytes), nominal=lesson.mem(gpu.memory_bytes))
    )

st.subheader(t("vllm_pool.terms_title", release=release.label))
st.markdown(
    "\n".join(t(TERM_KEYS[term.name], size=lesson.mem(term.bytes), source=term.source) for term in log.budget.terms)
)
st.markdown(
    t(
        ERA_KEYS[release.era],
        release=release.label,
        batched=ui.num(format_tokens(batched)),
        seqs=ui.num(format_tokens(startup.max_num_seqs)),
    )
)
if release.cuda_graphs_subtracted:
    st.markdown(t("vllm_pool.graphs_subtracted", graphs=lesson.mem(log.cuda_graph_bytes)))
elif eager:
    st.markdown(t("vllm_pool.graphs_eager"))
else:
    st.markdown(t("vllm_pool.graphs_not_subtracted"))

# ---------------------------------------------------------------- the start-up log

st.subheader(t("vllm_pool.log_title"))
st.code("\n".join(lines), language="text")
if not log.has_pool:
    fit_notice.warning(
        t(
            "vllm_pool.no_pool",
            weights=lesson.mem(log.weights_bytes),
            usable=lesson.mem(log.memory_bytes - log.held_back_bytes),
        ),
        icon=":material/block:",
    )
elif not startup.fits:
    st.warning(
        t(
            "vllm_pool.does_not_fit",
            length=ui.num(format_tokens(max_model_len)),
            needed=lesson.mem(log.needed_bytes),
            pool=lesson.mem(log.kv_pool_bytes),
            estimated=ui.num(format_tokens(log.estimated_max_model_len)),
        ),
        icon=":material/warning:",
    )
else:
    st.success(
        t(
            "vllm_pool.fits",
            tokens=ui.num(format_tokens(log.tokens)),
            length=ui.num(format_tokens(max_model_len)),
            concurrency=ui.num(f"{log.max_concurrency:.2f}"),
        ),
        icon=":material/check_circle:",
    )

with prediction:
    # The page's own budget: what torch reports, its weights, and activation + non-torch + graphs as the overhead.
    if pp == 1 and cp == 1:
        ui.practice.predict(
            "max_context",
            stem="vllm_pool",
            model=model,
            gpu=dataclasses.replace(gpu, memory_bytes=log.memory_bytes),
            utilization=utilization,
            kv_dtype=kv_dtype,
            gpus=tp,
            weights_gib=log.weights_bytes / GiB,
            overhead_gib=(log.activation_bytes + log.non_torch_bytes + log.cuda_graph_bytes) / GiB,
        )
lesson.takeaway(t("vllm_pool.takeaway"))

# ---------------------------------------------------------------- the formula


lang = ui.language()
lesson.formula(
    r"\text{pool} = M \cdot u - W - A - N - G",
    rf"{lesson.latex_mem(log.memory_bytes)} \cdot {latex_number(round(utilization, 2), lang)}"
    + rf" - {lesson.latex_mem(log.weights_bytes)} - {lesson.latex_mem(log.activation_bytes)}"
    + rf" - {lesson.latex_mem(log.non_torch_bytes)} - {lesson.latex_mem(log.cuda_graph_bytes)}"
    + rf" = \mathbf{{{lesson.latex_pool_mem(log.kv_pool_bytes)}}}",
)
per_token_text = lesson.size(log.bytes_per_token)
per_token_number, per_token_unit = per_token_text.rsplit(" ", 1)
lesson.formula(
    r"\text{" + t("formula.blocks") + r"} = "
    r"\left\lfloor \frac{\text{pool}}{\text{block\_size} \cdot \text{bytes/token}} \right\rfloor",
    r"\left\lfloor \frac{"
    + lesson.latex_mem(max(log.kv_pool_bytes, 0.0))
    + r"}{"
    + rf"{block_size} \cdot {per_token_number.replace(',', '{,}')}\ \text{{{per_token_unit}}}"
    + r"} \right\rfloor = \mathbf{"
    + latex_number(log.num_blocks, lang)
    + r"}",
)
st.markdown(
    t(
        "vllm_pool.steps",
        per_token=per_token_text,
        blocks=ui.num(format_tokens(log.num_blocks)),
        block_size=block_size,
        tokens=ui.num(format_tokens(log.tokens)),
        length=ui.num(format_tokens(max_model_len)),
        concurrency=ui.num(f"{log.max_concurrency:.2f}"),
        activation=lesson.mem(log.activation_bytes),
        batched=ui.num(format_tokens(batched)),
    )
)

# ---------------------------------------------------------------- utilization against tokens

st.subheader(t("vllm_pool.curve_title"))
utilization_chart = lesson.figure(
    utilization_figure,
    utilization=UTILIZATION_AXIS,
    blocks=curve_blocks,
    tokens=curve_tokens,
    current=log,
    separators=ui.separators(),
    labels={
        "title": t("vllm_pool.curve_chart_title"),
        "subtitle": t(
            "vllm_pool.waterfall_subtitle", gpu=gpu.name, model=model.name, gpus=ui.plural("gpus.count", log.gpus)
        ),
        "x_title": t("vllm_pool.curve_axis_x"),
        "y_title": t("vllm_pool.curve_axis_y"),
        "tokens": t("chart.tokens"),
        "blocks": t("vllm_pool.hover_blocks"),
        "current": t("vllm_pool.curve_current"),
        "request": t("vllm_pool.curve_request"),
    },
)
lesson.chart(utilization_chart, key="vp_curve")

# ---------------------------------------------------------------- parallelism

st.subheader(t("vllm_pool.parallel_title"))
if model.attention_type == "MLA":
    st.markdown(t("vllm_pool.tp_mla", tp=tp))
else:
    st.markdown(
        t(
            "vllm_pool.tp_heads",
            tp=tp,
            heads=ui.plural("kv_heads.count", model.num_key_value_heads),
            per_rank=heads_per_rank,
        )
    )
    if tp > model.num_key_value_heads:
        st.caption(t("vllm_pool.tp_replicated", copies=tp // max(model.num_key_value_heads, 1)))
if startup.stages:  # each stage budgeted apart; the fewest blocks win (kvcore.vllm_startup.vllm_startup)
    st.markdown(
        t(
            "vllm_pool.pp_stages_text",
            pp=pp,
            release=release.label,
            layers=model.num_hidden_layers,
            partition=" + ".join(str(layers) for layers in startup.stage_layers),
            stage=startup.tightest_stage + 1,
            blocks=ui.num(format_tokens(log.num_blocks)),
        )
    )
else:
    st.markdown(t("vllm_pool.pp_text", pp=pp, layers=model.num_hidden_layers, per_stage=layers_per_stage))
st.markdown(
    t(
        "vllm_pool.cp_text",
        cp=cp,
        length=ui.num(format_tokens(max_model_len)),
        per_rank=ui.num(format_tokens(-(-max_model_len // cp))),
    )
)

glossary.terms_used("vllm_pool")
