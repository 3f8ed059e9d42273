"""Bandwidth-limited decode: every step reads the weights and the whole cache, so tokens/s falls with context.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.
"""

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.decode_speed import bytes_per_step_figure, bytes_per_step_patches, experts_read_figure, tokens_per_s_figure
from charts.formatting import percent
from course import worked
from kvcore import crossover_context_tokens, kv_share_of_step
from kvcore.units import format_bandwidth, format_seconds, format_tokens, format_tokens_per_s
from ui import formula, glossary, lesson, live_chart, t

lesson.rerun_alone(__file__)

KV_DTYPES = ("bf16", "fp8", "int8", "int4")
WEIGHTS_DTYPES = ("bf16", "fp8", "int8", "int4")
#: Batch sizes the rate chart always draws (the chosen one is added).
CHART_BATCHES = (1, 8, 64)
#: How the page names its efficiencies (MFU, MBU): the datasheet bound it starts from, or the typical values.
ASSUMPTION_WORDS = {
    (kvcore.DEFAULT_MFU, kvcore.DEFAULT_MBU): "decode_speed.assumption_bound",
    (kvcore.DEFAULT_MFU, kvcore.TYPICAL_MBU): "decode_speed.assumption_typical",
}

model = ui.current_model()
gpu = ui.current_gpu()
lang = ui.language()

lesson.header(t("decode_speed.title"), t("decode_speed.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
st.markdown(t("decode_speed.no_skipping"))

lesson.scenario_buttons("decode_speed", key="ds_presets")

low, high, step, default_context = ui.context_range(model)
weights_options = tuple(dict.fromkeys((model.weights_dtype, *WEIGHTS_DTYPES)))
tp_options = lesson.tp_sizes(model)

controls, results = st.columns([1, 2], gap="large")
with controls:
    context_tokens = lesson.slider(
        t("decode_speed.context"),
        key="ds_context",
        min_value=low,
        max_value=high,
        value=default_context,
        step=step,
        help=t("decode_speed.context_help", maximum=ui.num(format_tokens(high))),
    )
    batch = lesson.slider(
        t("decode_speed.batch"), key="ds_batch", min_value=1, max_value=256, value=1, help=t("decode_speed.batch_help")
    )
    tp = lesson.choice(t("decode_speed.tp"), key="ds_tp", options=tp_options, default=1, help=t("decode_speed.tp_help"))
    kv_dtype = lesson.choice(t("decode_speed.kv_dtype"), key="ds_kv_dtype", options=KV_DTYPES, default="bf16")
    weights_dtype = lesson.choice(
        t("decode_speed.weights_dtype"),
        key="ds_weights_dtype",
        options=weights_options,
        default=model.weights_dtype,
        help=t("decode_speed.weights_dtype_help"),
    )
    with lesson.secondary():
        efficiency = lesson.slider(
            t("decode_speed.mbu"),
            key="ds_mbu",
            min_value=0.3,
            max_value=1.0,
            value=kvcore.DEFAULT_MBU,
            step=0.05,
            help=t("decode_speed.mbu_help"),
        )

try:
    kv_bytes_per_value = kvcore.bytes_per_value(kv_dtype)
    weight_bytes_per_param = kvcore.bytes_per_value(weights_dtype)
    knobs = {
        "context_tokens": context_tokens,
        "kv_bytes_per_value": kv_bytes_per_value,
        "weight_bytes_per_param": weight_bytes_per_param,
    }
    read = kvcore.decode_bytes_per_step(model, batch=batch, gpus=tp, **knobs)
    one_gpu_read = kvcore.decode_bytes_per_step(model, batch=batch, gpus=1, **knobs)
    # The step on the roofline: the bandwidth bounds it, unless a big batch makes the FLOPs slower still.
    rates = kvcore.rates_for(gpu, weights_dtype=weights_dtype, mfu=kvcore.DEFAULT_MFU, mbu=efficiency, gpus=tp)
    one_gpu_rates = kvcore.rates_for(gpu, weights_dtype=weights_dtype, mfu=kvcore.DEFAULT_MFU, mbu=efficiency)
    step_times = kvcore.decode_step_times(model, batch=batch, rates=rates, **knobs)
    step_s, memory_s, compute_s = float(step_times.time_s), float(step_times.memory_s), float(step_times.compute_s)
    one_gpu_step_s = float(kvcore.tpot_s(model, batch=batch, rates=one_gpu_rates, **knobs))
    per_user = float(kvcore.tokens_per_s(step_s))
    aggregate = float(kvcore.tokens_per_s(step_s, batch=batch))
    kv_share = float(kv_share_of_step(read))
    crossover = float(
        crossover_context_tokens(
            model, weights_bytes=float(read.weights_bytes), batch=batch, kv_bytes_per_value=kv_bytes_per_value, tp=tp
        )
    )
    kv_heads_per_gpu = kvcore.kv_heads_per_gpu(model.num_key_value_heads, tp)
except ValueError as error:
    lesson.stop_with(error)

weights_read = float(read.weights_bytes)
kv_read = float(read.kv_bytes)

with results:
    row = st.columns(3)
    row[0].metric(
        t("decode_speed.metric_step"), ui.num(format_seconds(step_s)), help=t("decode_speed.metric_step_help")
    )
    row[1].metric(t("decode_speed.metric_per_user"), ui.num(format_tokens_per_s(per_user, unit=False)))
    row[2].metric(
        t("decode_speed.metric_aggregate"),
        ui.num(format_tokens_per_s(aggregate, unit=False)),
        help=t("decode_speed.metric_aggregate_help", batch=batch),
    )
    st.caption(
        t(
            "decode_speed.assumptions",
            mbu=ui.num(f"{efficiency:g}"),
            mfu=ui.num(f"{rates.mfu:g}"),
            which=t(
                ASSUMPTION_WORDS.get((rates.mfu, round(efficiency, 2)), "decode_speed.assumption_custom"),
                typical_mbu=ui.num(f"{kvcore.TYPICAL_MBU:g}"),
            ),
            context=ui.num(format_tokens(context_tokens)),
            users=ui.plural("users.count", batch),
        )
    )
    row = st.columns(3)
    row[0].metric(t("decode_speed.metric_read"), lesson.mem(float(read.total)), help=t("decode_speed.metric_read_help"))
    row[1].metric(t("decode_speed.metric_kv_share"), ui.num(percent(kv_share, decimals=1, spaced=True)))
    crossover_text = ui.num(format_tokens(crossover)) if crossover < float("inf") else t("decode_speed.never")
    row[2].metric(
        t("decode_speed.metric_crossover"), crossover_text, help=t("decode_speed.metric_crossover_help", batch=batch)
    )

    # The charts' step times are the metric's: kvcore.tpot_s with the same rates, drawn at every slider value.
    context_values = live_chart.slider_values(low, high, step)
    curves = {"model": model, "rates": rates, "slider_contexts": context_values, **knobs}
    figure = lesson.figure(
        bytes_per_step_figure,
        **curves,
        batch=batch,
        unit_bytes=lesson.memory_unit_bytes(),
        unit=lesson.memory_unit(),
        separators=ui.separators(),
        labels={
            "title": t("decode_speed.chart_bytes_title", model=model.name),
            "subtitle": t(
                "decode_speed.chart_bytes_subtitle",
                users=ui.plural("users.count", batch),
                gpus=ui.plural("decode_speed.gpus", tp),
                gpu=gpu.name,
            ),
            "x_title": t("chart.context_axis"),
            "y_title": t("decode_speed.chart_bytes_axis", unit=lesson.memory_unit()),
            "weights": t("decode_speed.chart_weights"),
            "kv": t("decode_speed.chart_kv", batch=ui.plural("decode_speed.conversations", batch)),
            "current": t("chart.current"),
            "crossover": t("decode_speed.chart_crossover"),
            "tokens": t("chart.tokens"),
            "step": t("decode_speed.chart_step"),
        },
    )
    # In the browser the chart follows the context slider at once (ui.live_chart); the rerun confirms it.
    patches = bytes_per_step_patches(model, context_values)
    follow = None if patches is None else live_chart.Follow("ds_context", context_values, context_tokens, patches)
    lesson.chart(figure, key="ds_bytes_chart", follow=follow)

    words = {
        "batch": batch,
        "weights": lesson.mem(weights_read),
        "kv": lesson.mem(kv_read),
        "share": ui.num(percent(kv_share, decimals=0, spaced=True)),
        "crossover": ui.num(format_tokens(crossover)),
        "maximum": ui.num(format_tokens(model.max_position_embeddings)),
        "window": ui.num(format_tokens(model.sliding_window or 0)),
    }
    if crossover == float("inf"):
        st.markdown(t("decode_speed.crossover_never", **words))
    elif crossover > model.max_position_embeddings:
        st.markdown(t("decode_speed.crossover_beyond", **words))
    elif kv_read > weights_read:
        st.markdown(t("decode_speed.crossover_passed", **words))
    else:
        st.markdown(t("decode_speed.crossover_ahead", **words))

st.subheader(t("decode_speed.formula_title"))
st.markdown(t("decode_speed.formula_legend"))
# The worked step (course.worked), the bytes term of the roofline: KV_seq is one sequence's cache as every GPU
# reads it (replicated KV heads and MLA's latent counted on each rank), so the numbers give the time shown.
lesson.formula(
    r"t_{\text{" + t("formula.step") + r"}} = \frac{W + B \cdot KV_{seq}(s)}{n_{gpu} \cdot BW \cdot \text{MBU}}",
    formula.decode_time_latex(worked.decode_memory_time(read, batch=batch, rates=rates), lang=lang),
)
if compute_s > memory_s:
    st.markdown(
        t(
            "decode_speed.compute_bound",
            compute=ui.num(format_seconds(compute_s)),
            memory=ui.num(format_seconds(memory_s)),
            users=ui.plural("users.count", batch),
        )
    )
st.caption(t("decode_speed.formula_note"))

st.subheader(t("decode_speed.tp_title"))
fleet = {
    "gpus": ui.plural("decode_speed.gpus", tp),
    "per_gpu_weights": lesson.mem(weights_read / tp),
    "per_gpu_kv": lesson.mem(kv_read / tp),
    "kv_heads": ui.plural("kv_heads.count", kv_heads_per_gpu),
    "bandwidth": ui.num(format_bandwidth(tp * gpu.bandwidth_bytes_per_s)),
    "fleet": lesson.mem(float(read.total)),
    "one_gpu": lesson.mem(float(one_gpu_read.total)),
    "step": ui.num(format_seconds(step_s)),
    "one_gpu_step": ui.num(format_seconds(one_gpu_step_s)),
}
row = st.columns(3)
row[0].metric(t("decode_speed.metric_per_gpu"), lesson.mem(float(read.total) / tp))
row[1].metric(t("decode_speed.metric_fleet_bandwidth"), fleet["bandwidth"])
row[2].metric(t("decode_speed.metric_fleet_bytes"), fleet["fleet"], help=t("decode_speed.metric_fleet_bytes_help"))
if model.attention_type == "MLA" and tp > 1:
    st.markdown(t("decode_speed.tp_mla", **fleet))
elif float(read.kv_bytes) > float(one_gpu_read.kv_bytes):
    st.markdown(t("decode_speed.tp_replicated", heads=ui.plural("kv_heads.count", model.num_key_value_heads), **fleet))
elif tp > 1:
    st.markdown(t("decode_speed.tp_same", **fleet))
else:
    st.markdown(t("decode_speed.tp_one", **fleet))

if model.num_experts > model.num_experts_per_tok > 0:
    # MoE: the step reads the experts the batch's tokens touch (kvcore.experts_touched), not one token's k.
    st.subheader(t("decode_speed.experts_title"))
    touched = float(
        kvcore.experts_touched(num_experts=model.num_experts, experts_per_token=model.num_experts_per_tok, tokens=batch)
    )
    st.markdown(
        t(
            "decode_speed.experts_text",
            experts=model.num_experts,
            k=model.num_experts_per_tok,
            users=ui.plural("users.count", batch),
            touched=ui.num(f"{touched:.1f}"),
            read=lesson.mem(weights_read),
            active=lesson.mem(float(model.active_params or 0.0) * weight_bytes_per_param),
            total=lesson.mem(float(model.total_params or 0.0) * weight_bytes_per_param),
        )
    )
    experts_figure = lesson.figure(
        experts_read_figure,
        model=model,
        batch=batch,
        weight_bytes_per_param=weight_bytes_per_param,
        unit_bytes=lesson.memory_unit_bytes(),
        unit=lesson.memory_unit(),
        separators=ui.separators(),
        labels={
            "title": t("decode_speed.experts_chart_title", model=model.name),
            "subtitle": t(
                "decode_speed.experts_chart_subtitle", experts=model.num_experts, k=model.num_experts_per_tok
            ),
            "x_title": t("decode_speed.experts_chart_axis"),
            "y_title": t("decode_speed.chart_bytes_axis", unit=lesson.memory_unit()),
            "read": t("decode_speed.experts_chart_read"),
            "active": t("decode_speed.experts_chart_active"),
            "total": t("decode_speed.experts_chart_total"),
            "current": t("decode_speed.experts_chart_current", batch=batch),
        },
    )
    lesson.chart(experts_figure, key="ds_experts_chart")

st.subheader(t("decode_speed.rate_title"))
batches = sorted({*CHART_BATCHES, batch})
rate_figure = lesson.figure(
    tokens_per_s_figure,
    **curves,
    batches=batches,
    separators=ui.separators(),
    labels={
        "title": t("decode_speed.chart_rate_title"),
        "subtitle": t("decode_speed.chart_rate_subtitle", gpus=ui.plural("decode_speed.gpus", tp), gpu=gpu.name),
        "x_title": t("chart.context_axis"),
        "y_title": t("decode_speed.chart_rate_axis"),
        # The chart fills in each batch size: hand it the template back.
        "per_user": t("decode_speed.chart_per_user", batch="{batch}"),
        "aggregate": t("decode_speed.chart_aggregate", batch="{batch}"),
        "tokens": t("chart.tokens"),
        "rate": t("decode_speed.chart_rate_unit"),
    },
)
lesson.chart(rate_figure, key="ds_rate_chart")
st.markdown(t("decode_speed.rate_text"))

with prediction:
    ui.practice.predict(
        "decode_ms_per_token",
        stem="decode_speed",
        model=model,
        gpu=gpu,
        context_tokens=context_tokens,
        batch=batch,
        weights_dtype=weights_dtype,
        kv_dtype=kv_dtype,
        gpus=tp,
    )
lesson.takeaway(t("decode_speed.takeaway"))

glossary.terms_used("decode_speed")
