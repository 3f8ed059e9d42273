"""Memory calculator: the weights and the KV cache of one model on one GPU.

Widgets → kvcore → figure → text. Every number shown comes from a kvcore call.
"""

import streamlit as st

import kvcore
import ui
from charts.memory import memory_vs_context_figure
from kvcore.units import format_bytes, format_gib, format_tokens
from ui import t
from ui.formula import SYMBOLIC, formula_terms, result_latex

KV_DTYPES = ("fp16", "bf16", "fp8", "int8", "int4")
WEIGHTS_DTYPES = ("fp32", "fp16", "bf16", "fp8", "int8", "mxfp4", "int4")

model = ui.current_model()
gpu = ui.current_gpu()

st.title(t("memory.title"))
st.markdown(t("memory.intro", model=model.name, gpu=gpu.name))

controls, results = st.columns([1, 2], gap="large")

with controls:
    st.subheader(t("memory.controls"))
    low, high, step, default_context = ui.context_range(model)
    ui.check_url_value(ui.CONTEXT_KEY, low=low, high=high)
    ui.check_url_value("concurrency", low=1, high=256)
    ui.check_url_value(ui.KV_HEADS_KEY, options=[str(n) for n in ui.kv_head_choices(model)])
    ui.check_url_value("kv_dtype", options=list(KV_DTYPES))
    ui.check_url_value(ui.WEIGHTS_DTYPE_KEY, options=list(WEIGHTS_DTYPES))
    context_tokens = st.slider(
        t("memory.context"),
        min_value=low,
        max_value=high,
        value=default_context,
        step=step,
        key=ui.CONTEXT_KEY,
        bind="query-params",
        help=t("memory.context_help", maximum=ui.num(format_tokens(high))),
    )
    concurrency = st.slider(
        t("memory.concurrency"),
        min_value=1,
        max_value=256,
        value=1,
        key="concurrency",
        bind="query-params",
        help=t("memory.concurrency_help"),
    )
    is_mla = model.attention_type == "MLA"
    kv_heads = st.select_slider(
        t("memory.kv_heads"),
        options=ui.kv_head_choices(model),
        value=model.num_key_value_heads,
        key=ui.KV_HEADS_KEY,
        bind="query-params",
        disabled=is_mla,
        help=t("memory.kv_heads_help", heads=model.num_attention_heads, own=model.num_key_value_heads),
    )
    if is_mla:
        st.caption(t("memory.kv_heads_mla"))
    kv_dtype = st.segmented_control(
        t("memory.kv_dtype"), KV_DTYPES, default="bf16", key="kv_dtype", bind="query-params", required=True, wrap=True
    )
    weights_dtype = st.segmented_control(
        t("memory.weights_dtype"),
        WEIGHTS_DTYPES,
        default=model.weights_dtype,
        key=ui.WEIGHTS_DTYPE_KEY,
        bind="query-params",
        required=True,
        wrap=True,
    )

try:
    variant = model if is_mla else kvcore.with_changes(model, num_key_value_heads=kv_heads)
    kv_bytes_per_value = kvcore.bytes_per_value(kv_dtype or "bf16")
    weights_bytes_per_param = kvcore.bytes_per_value(weights_dtype or "bf16")
    per_token = kvcore.kv_bytes_per_token(variant, bytes_per_value=kv_bytes_per_value)
    cache = float(
        kvcore.kv_cache_bytes(
            variant, context_tokens=context_tokens, concurrency=concurrency, bytes_per_value=kv_bytes_per_value
        )
    )
    weights = kvcore.model_weights_bytes(variant, bytes_per_param=weights_bytes_per_param)
    kv_room = kvcore.kv_budget_bytes(memory_bytes=gpu.memory_bytes, utilization=1.0, weights_bytes=weights)
    longest_context = kvcore.max_context_tokens(
        variant, kv_budget_bytes=kv_room, concurrency=concurrency, bytes_per_value=kv_bytes_per_value
    )
except ValueError as error:
    st.error(t("error.bad_combination", detail=str(error)))
    st.stop()

usage = kvcore.MemoryBreakdown(weights_bytes=weights, kv_cache_bytes=cache, overhead_bytes=0.0)
weights_only = kvcore.MemoryBreakdown(weights_bytes=weights, kv_cache_bytes=0.0, overhead_bytes=0.0)

with results:
    row = st.columns(2)
    row[0].metric(t("memory.metric_per_token"), ui.num(format_bytes(per_token)), help=t("memory.metric_per_token_help"))
    row[1].metric(
        t("memory.metric_cache"),
        ui.num(format_gib(cache)),
        help=t("memory.metric_cache_help", context=ui.num(format_tokens(context_tokens)), users=concurrency),
    )
    row = st.columns(2)
    row[0].metric(t("memory.metric_weights"), ui.num(format_gib(weights)), help=t("memory.metric_weights_help"))
    row[1].metric(
        t("memory.metric_total", memory=ui.num(format_gib(gpu.memory_bytes))),
        ui.num(format_gib(usage.total_bytes)),
        help=t("memory.metric_total_help", gpu=gpu.name),
    )

    room = {
        "gpu": gpu.name,
        "each": ui.plural("users.each", concurrency),
        "all": ui.plural("users.all", concurrency),
        "room": ui.num(format_gib(max(kv_room, 0.0))),
    }
    if not weights_only.fits(gpu.memory_bytes):
        st.error(
            t(
                "memory.weights_do_not_fit",
                weights=ui.num(format_gib(weights)),
                memory=ui.num(format_gib(gpu.memory_bytes)),
            )
        )
    elif longest_context >= model.max_position_embeddings:
        st.success(t("memory.fits_whole_context", maximum=ui.num(format_tokens(model.max_position_embeddings)), **room))
    elif usage.fits(gpu.memory_bytes):
        st.success(t("memory.fits", tokens=ui.num(format_tokens(longest_context)), **room))
    else:
        st.warning(t("memory.cache_does_not_fit", tokens=ui.num(format_tokens(longest_context)), **room))

    figure = memory_vs_context_figure(
        model=variant,
        gpu=gpu,
        context_tokens=context_tokens,
        concurrency=concurrency,
        kv_bytes_per_value=kv_bytes_per_value,
        weights_bytes_per_param=weights_bytes_per_param,
        separators=ui.separators(),
        labels={
            "title": model.name,
            "subtitle": t("chart.memory_subtitle", gpu=gpu.name, users=ui.plural("users.count", concurrency)),
            "x_title": t("chart.context_axis"),
            "y_title": t("chart.memory_axis"),
            "weights": t("chart.weights"),
            "kv_cache": t("chart.kv_cache"),
            "gpu_memory": t("chart.gpu_memory", gpu=gpu.name),
            "runs_out": t("chart.runs_out"),
            "current": t("chart.current"),
            "tokens": t("chart.tokens"),
        },
    )
    st.plotly_chart(figure, theme=None, key="memory_chart", config={"displaylogo": False})

st.subheader(t("memory.formula_title"))
st.markdown(t("memory.formula_legend"))
st.latex(SYMBOLIC)
terms = formula_terms(
    variant,
    context_tokens=context_tokens,
    concurrency=concurrency,
    bytes_per_value=kv_bytes_per_value,
    lang=ui.language(),
)
mixed = len(terms) > 1
if mixed:
    st.markdown(t("memory.formula_by_kind"))
for term in terms:
    if mixed or term.kind != "full":
        st.markdown(t(f"kind.{term.kind}", layers=term.layers))
        st.latex(term.symbolic)
    st.latex(term.substituted + result_latex(term.kv_bytes, lang=ui.language()))
if mixed:
    st.markdown(t("memory.formula_sum", total=ui.num(format_gib(cache))))
