"""Prefill vs decode: the two phases of a request, where each sits on the roofline, and why output costs more.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.
"""

import streamlit as st

import kvcore
import ui
import ui.practice
from charts import formatting
from charts.prefill_decode import batch_intensity_figure, roofline_figure, roofline_patches, timeline_figure
from course import seeds, worked
from kvcore import units
from kvcore.units import format_bandwidth, format_flops, format_seconds, format_tokens
from ui import formula, glossary, lesson, live_chart, t

lesson.rerun_alone(__file__)

#: Weight formats offered: BF16, FP8 (W8A8 where the chip has FP8 tensor cores) and INT4 (W4A16).
WEIGHTS_DTYPES = ("bf16", "fp8", "int4")
#: The KV cache stays in BF16 on this page (the KV formats have their own lesson).
KV_DTYPE = "bf16"
#: The longest prompt the slider offers (the model's own window, if shorter).
LONGEST_PROMPT_TOKENS = 131_072

PROMPT_STEP_TOKENS = 128
BOUND_WORDS = {"compute": "prefill_decode.bound_compute", "memory": "prefill_decode.bound_memory"}
#: How the page names its efficiencies (MFU, MBU): the typical values it starts from, or the datasheet bound.
ASSUMPTION_WORDS = {
    (kvcore.TYPICAL_MFU, kvcore.TYPICAL_MBU): "prefill_decode.assumption_typical",
    (kvcore.DEFAULT_MFU, kvcore.DEFAULT_MBU): "prefill_decode.assumption_bound",
}

model = ui.current_model()
gpu = ui.current_gpu()


def roofline_symbolic(name: str, flops: str, moved: str) -> str:
    """A phase's time on the roofline, in symbols (`flops` and `moved` are LaTeX)."""
    return (
        rf"\text{{{name}}} = \max\left(\frac{{{flops}}}{{P \cdot \text{{MFU}}}},\ "
        rf"\frac{{{moved}}}{{BW \cdot \text{{MBU}}}}\right)"
    )


lesson.header(t("prefill_decode.title"), t("prefill_decode.intro", model=model.name, gpu=gpu.name))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()

prompt_high = min(LONGEST_PROMPT_TOKENS, model.max_position_embeddings)
lesson.scenario_buttons("prefill_decode", key="pd_presets")

controls, results = st.columns([1, 2], gap="large")

with controls:
    prompt_tokens = lesson.slider(
        t("prefill_decode.prompt"),
        key="pd_prompt",
        min_value=PROMPT_STEP_TOKENS,
        max_value=prompt_high,
        value=min(1024, prompt_high // 2),
        step=PROMPT_STEP_TOKENS,
        help=t("prefill_decode.prompt_help", maximum=ui.num(format_tokens(model.max_position_embeddings))),
    )
    output_tokens = lesson.slider(
        t("prefill_decode.output"),
        key="pd_output",
        min_value=10,
        max_value=4000,
        value=300,
        step=10,
        help=t("prefill_decode.output_help"),
    )
    batch = lesson.slider(
        t("prefill_decode.batch"),
        key="pd_batch",
        min_value=1,
        max_value=256,
        value=1,
        help=t("prefill_decode.batch_help"),
    )
    with lesson.secondary():
        weights_dtype = lesson.choice(
            t("prefill_decode.weights"),
            key="pd_weights",
            options=WEIGHTS_DTYPES,
            default="bf16",
            help=t("prefill_decode.weights_help"),
        )
        mfu = lesson.slider(
            t("prefill_decode.mfu"),
            key="pd_mfu",
            min_value=0.05,
            max_value=1.0,
            value=kvcore.TYPICAL_MFU,
            step=0.05,
            help=t("prefill_decode.mfu_help"),
        )
        mbu = lesson.slider(
            t("prefill_decode.mbu"),
            key="pd_mbu",
            min_value=0.05,
            max_value=1.0,
            value=kvcore.TYPICAL_MBU,
            step=0.05,
            help=t("prefill_decode.mbu_help"),
        )

try:
    weight_bytes_per_param = kvcore.bytes_per_value(weights_dtype)
    sizes = {"weight_bytes_per_param": weight_bytes_per_param, "kv_bytes_per_value": kvcore.bytes_per_value(KV_DTYPE)}
    rates = kvcore.rates_for(gpu, weights_dtype=weights_dtype, mfu=mfu, mbu=mbu)
    peak, bandwidth = rates.peak_flop_per_s, rates.bandwidth_bytes_per_s
    timeline = kvcore.request_timeline(
        model, prompt_tokens=prompt_tokens, output_tokens=output_tokens, batch=batch, rates=rates, **sizes
    )
    ridge = kvcore.ridge_point(peak_flop_per_s=peak, bandwidth_bytes_per_s=bandwidth)
    knee = kvcore.effective_ridge_point(peak_flop_per_s=peak, bandwidth_bytes_per_s=bandwidth, mfu=mfu, mbu=mbu)
    seed_gpu = ui.gpus()[seeds.SEED_GPU_ID]  # seed 004's "about 300 FLOPs per byte" is an H100's
    seed_ridge = kvcore.ridge_point(
        peak_flop_per_s=seed_gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=seed_gpu.bandwidth_bytes_per_s
    )
    seed_fp8_ridge = kvcore.ridge_point(
        peak_flop_per_s=kvcore.matmul_peak_flop_per_s(seed_gpu, weights_dtype="fp8"),
        bandwidth_bytes_per_s=seed_gpu.bandwidth_bytes_per_s,
    )

    # Prefill: the whole prompt at once.
    prefill_flops = float(kvcore.prefill_flops(model, prompt_tokens=prompt_tokens))
    prefill_moved = float(kvcore.prefill_bytes(model, prompt_tokens=prompt_tokens, **sizes))
    prefill_intensity = float(kvcore.prefill_intensity_flop_per_byte(model, prompt_tokens=prompt_tokens, **sizes))

    # Decode: the step in the middle of the answer stands for every step.
    step_context = float(kvcore.mean_decode_context_tokens(prompt_tokens=prompt_tokens, output_tokens=output_tokens))
    step_flops = float(kvcore.decode_flops_per_step(model, context_tokens=step_context, batch=batch))
    step_read = kvcore.decode_bytes_per_step(model, context_tokens=step_context, batch=batch, **sizes)
    step_moved = float(step_read.total)
    step_s = float(kvcore.tpot_s(model, context_tokens=step_context, batch=batch, rates=rates, **sizes))
    decode_intensity = float(
        kvcore.decode_intensity_flop_per_byte(model, context_tokens=step_context, batch=batch, **sizes)
    )
    below_ridge = float(kvcore.times_below_ridge(decode_intensity, ridge))

    # Throughput and the user's view.
    user_rate = float(kvcore.decode_tokens_per_s(1, timeline.mean_tpot_s))
    output_rate = float(kvcore.decode_tokens_per_s(batch, timeline.mean_tpot_s))
    input_rate = float(kvcore.prefill_tokens_per_s(prompt_tokens, timeline.ttft_s))

    # Memory: does it fit on one GPU?
    weights = kvcore.model_weights_bytes(model, bytes_per_param=weight_bytes_per_param)
    # Does it fit at all: the whole card (kvcore.WHOLE_CARD), stated beside the figure with a server's view.
    kv_room = kvcore.assumed_budget(
        memory_bytes=gpu.memory_bytes, weights_bytes=weights, assumptions=kvcore.WHOLE_CARD
    ).kv_pool_bytes
    serving_room = kvcore.assumed_budget(memory_bytes=gpu.memory_bytes, weights_bytes=weights).kv_pool_bytes
    final_context = float(kvcore.request_context_tokens(prompt_tokens=prompt_tokens, output_tokens=output_tokens))
    cache = float(
        kvcore.kv_cache_bytes(
            model, context_tokens=final_context, concurrency=batch, bytes_per_value=sizes["kv_bytes_per_value"]
        )
    )
except ValueError as error:
    lesson.stop_with(error)

prefill_bound = kvcore.bound_by(prefill_intensity, knee)
decode_bound = kvcore.bound_by(decode_intensity, knee)

with results:
    row = st.columns(3)
    row[0].metric(
        t("prefill_decode.metric_ttft"),
        ui.num(format_seconds(timeline.ttft_s)),
        help=t("prefill_decode.metric_ttft_help"),
    )
    row[1].metric(
        t("prefill_decode.metric_tpot"),
        ui.num(format_seconds(timeline.mean_tpot_s)),
        help=t("prefill_decode.metric_tpot_help"),
    )
    row[2].metric(
        t("prefill_decode.metric_total"),
        ui.num(format_seconds(timeline.total_s)),
        help=t("prefill_decode.metric_total_help", output=ui.num(format_tokens(output_tokens))),
    )
    st.caption(
        t(
            "prefill_decode.assumptions",
            mfu=ui.num(f"{mfu:g}"),
            mbu=ui.num(f"{mbu:g}"),
            which=t(
                ASSUMPTION_WORDS.get((round(mfu, 2), round(mbu, 2)), "prefill_decode.assumption_custom"),
                typical_mfu=ui.num(f"{kvcore.TYPICAL_MFU:g}"),
                typical_mbu=ui.num(f"{kvcore.TYPICAL_MBU:g}"),
            ),
            peak=ui.num(format_flops(peak)),
            bandwidth=ui.num(format_bandwidth(bandwidth)),
            context=ui.num(format_tokens(step_context)),
        )
    )
    row = st.columns(3)
    row[0].metric(
        t("prefill_decode.metric_user_rate"),
        ui.num(units.format_quantity(user_rate)),
        help=t("prefill_decode.metric_user_rate_help"),
    )
    row[1].metric(
        t("prefill_decode.metric_output_rate"),
        ui.num(units.format_quantity(output_rate)),
        help=t("prefill_decode.metric_output_rate_help", users=ui.plural("users.count", batch)),
    )
    row[2].metric(
        t("prefill_decode.metric_ridge"),
        ui.num(units.format_quantity(ridge)),
        help=t("prefill_decode.metric_ridge_help"),
    )

    if kv_room < 0:
        st.warning(
            t("prefill_decode.weights_do_not_fit", weights=lesson.mem(weights), memory=lesson.mem(gpu.memory_bytes))
        )
    elif cache > kv_room:
        st.warning(
            t(
                "prefill_decode.cache_does_not_fit",
                cache=lesson.mem(cache),
                users=ui.plural("users.count", batch),
                room=lesson.mem(kv_room),
            )
        )
    if kv_room < 0 or cache > kv_room:
        st.caption(
            t(
                "prefill_decode.memory_assumptions",
                memory=lesson.mem(gpu.memory_bytes),
                u=ui.num(f"{kvcore.DEFAULT_UTILIZATION:.0%}".replace("%", " %")),
                overhead=lesson.mem(kvcore.DEFAULT_OVERHEAD_BYTES),
                serving_room=lesson.mem(max(serving_room, 0.0)),
            )
        )
    if final_context > model.max_position_embeddings:
        st.warning(
            t(
                "prefill_decode.beyond_window",
                context=ui.num(format_tokens(final_context)),
                maximum=ui.num(format_tokens(model.max_position_embeddings)),
            )
        )
    if weights_dtype == "fp8" and not gpu.has_fp8:
        st.caption(t("prefill_decode.no_fp8", gpu=gpu.name))

    roofline_labels = {
        "title": t("prefill_decode.roofline_title"),
        "subtitle": t("prefill_decode.roofline_subtitle", model=model.name, gpu=gpu.name),
        "x_title": t("prefill_decode.intensity_axis"),
        "y_title": t("prefill_decode.throughput_axis"),
        "roof": t("prefill_decode.roof"),
        "real_roof": t("prefill_decode.real_roof", mfu=ui.num(f"{mfu:g}"), mbu=ui.num(f"{mbu:g}")),
        "ridge": t("prefill_decode.ridge_annotation", ridge=ui.num(units.format_flop_per_byte(ridge))),
        "knee": t("prefill_decode.knee_label", knee=ui.num(units.format_flop_per_byte(knee))),
        "prefill": t("prefill_decode.prefill"),
        "decode": t("prefill_decode.decode"),
        "prefill_bound": t(BOUND_WORDS[prefill_bound]),
        "decode_bound": t(BOUND_WORDS[decode_bound]),
    }

    # In the browser both phases follow the prompt slider at once (ui.live_chart); the rerun confirms them.
    # The axis spans the phases at both ends of the slider, so only the two points move.
    prompt_values = live_chart.slider_values(PROMPT_STEP_TOKENS, prompt_high, PROMPT_STEP_TOKENS)
    step_contexts = kvcore.mean_decode_context_tokens(prompt_tokens=prompt_values, output_tokens=output_tokens)
    prefill_along = kvcore.prefill_intensity_flop_per_byte(model, prompt_tokens=prompt_values, **sizes)
    decode_along = kvcore.decode_intensity_flop_per_byte(model, context_tokens=step_contexts, batch=batch, **sizes)
    roofline_follow = live_chart.Follow(
        "pd_prompt",
        prompt_values,
        prompt_tokens,
        roofline_patches(
            peak_flop_per_s=peak,
            bandwidth_bytes_per_s=bandwidth,
            mfu=mfu,
            mbu=mbu,
            prefill_intensities=prefill_along,
            decode_intensities=decode_along,
            labels=roofline_labels,
            bound_words={bound: t(key) for bound, key in BOUND_WORDS.items()},
        ),
    )

    lesson.chart(
        lesson.figure(
            roofline_figure,
            peak_flop_per_s=peak,
            bandwidth_bytes_per_s=bandwidth,
            mfu=mfu,
            mbu=mbu,
            prefill_intensity=prefill_intensity,
            decode_intensity=decode_intensity,
            labels=roofline_labels,
            separators=ui.separators(),
            axis_intensities=(prefill_along.min(), prefill_along.max(), decode_along.min(), decode_along.max()),
        ),
        key="pd_roofline",
        follow=roofline_follow,
    )

st.markdown(
    t(
        "prefill_decode.roofline_reading",
        prompt=ui.num(format_tokens(prompt_tokens)),
        prefill=ui.num(units.format_flop_per_byte(prefill_intensity)),
        prefill_bound=t(BOUND_WORDS[prefill_bound]),
        decode=ui.num(units.format_flop_per_byte(decode_intensity)),
        decode_bound=t(BOUND_WORDS[decode_bound]),
        below=ui.num(formatting.times(below_ridge, decimals=1 if below_ridge < 10 else 0)),
        users=ui.plural("users.count", batch),
        knee=ui.num(units.format_flop_per_byte(knee)),
    )
)
st.markdown(
    t(
        "prefill_decode.seed_ridge",
        gpu=seed_gpu.name,
        peak=ui.num(format_flops(seed_gpu.bf16_dense_flop_per_s)),
        bandwidth=ui.num(format_bandwidth(seed_gpu.bandwidth_bytes_per_s)),
        ridge=ui.num(units.format_flop_per_byte(seed_ridge)),
        fp8_ridge=ui.num(units.format_flop_per_byte(seed_fp8_ridge)),
    )
)
if prefill_bound == "memory":
    st.info(
        t(
            "prefill_decode.short_prompt",
            ttft=ui.num(format_seconds(timeline.ttft_s)),
            tpot=ui.num(format_seconds(timeline.mean_tpot_s)),
        ),
        icon=":material/lightbulb:",
    )

st.subheader(t("prefill_decode.formula_title"))
# The worked steps (course.worked): the same the exercises show, kvcore's values, written in the page's language.
prefill_steps = worked.roofline(
    "TTFT",
    flops=worked.Quantity(symbol="FLOPs", value=prefill_flops, unit="FLOP"),
    moved=worked.Quantity(symbol="bytes", value=prefill_moved, unit="B"),
    rates=rates,
    efficiencies=True,
)
step_steps = worked.roofline(
    "TPOT",
    flops=worked.Quantity(symbol="FLOPs", value=step_flops, unit="FLOP"),
    moved=worked.Quantity(symbol="bytes", value=step_moved, unit="B"),
    rates=rates,
    efficiencies=True,
)
st.markdown(t("prefill_decode.formula_ttft_legend", prompt=ui.num(format_tokens(prompt_tokens))))
lesson.formula(
    roofline_symbolic("TTFT", r"\text{FLOPs}", r"\text{bytes}"),
    formula.roofline_latex(prefill_steps, name="TTFT", lang=ui.language()),
)
st.markdown(
    t(
        "prefill_decode.formula_tpot_legend",
        context=ui.num(format_tokens(step_context)),
        users=ui.plural("users.count", batch),
        weights=lesson.mem(float(step_read.weights_bytes)),
        kv=lesson.mem(float(step_read.kv_bytes)),
    )
)
lesson.formula(
    roofline_symbolic(
        "TPOT",
        r"\text{FLOPs}_\text{" + t("formula.step") + "}",
        r"\text{bytes}_\text{" + t("formula.step") + "}",
    ),
    formula.roofline_latex(step_steps, name="TPOT", lang=ui.language()),
)
st.markdown(t("prefill_decode.formula_ridge_legend"))
lesson.formula(
    r"\text{" + t("formula.ridge") + r"} = \frac{P}{BW}",
    formula.ridge_latex(worked.ridge(peak_flop_per_s=peak, bandwidth_bytes_per_s=bandwidth), lang=ui.language()),
)
st.caption(t("prefill_decode.formula_units"))

st.subheader(t("prefill_decode.timeline_title"))
st.markdown(
    t(
        "prefill_decode.timeline_text",
        ttft=ui.num(format_seconds(timeline.ttft_s)),
        tpot=ui.num(format_seconds(timeline.mean_tpot_s)),
        output=ui.num(format_tokens(output_tokens)),
        total=ui.num(format_seconds(timeline.total_s)),
    )
)
lesson.chart(
    lesson.figure(
        timeline_figure,
        arrival_s=timeline.arrival_s,
        ttft_s=timeline.ttft_s,
        labels={
            "title": t("prefill_decode.timeline_chart_title"),
            "subtitle": t(
                "prefill_decode.timeline_chart_subtitle",
                prompt=ui.num(format_tokens(prompt_tokens)),
                output=ui.num(format_tokens(output_tokens)),
            ),
            "x_title": t("prefill_decode.time_axis"),
            "y_title": t("prefill_decode.received_axis"),
            "tokens": t("prefill_decode.tokens"),
            "prefill": t("prefill_decode.prefill_band"),
            "first_token": t("prefill_decode.first_token"),
        },
        separators=ui.separators(),
    ),
    key="pd_timeline",
)

st.subheader(t("prefill_decode.batch_title"))
st.markdown(
    t(
        "prefill_decode.batch_text",
        users=ui.plural("users.count", batch),
        decode=ui.num(units.format_flop_per_byte(decode_intensity)),
        output_rate=ui.num(units.format_tokens_per_s(output_rate)),
        user_rate=ui.num(units.format_tokens_per_s(user_rate)),
    )
)
lesson.chart(
    lesson.figure(
        batch_intensity_figure,
        model=model,
        context_tokens=step_context,
        batch=batch,
        ridge=ridge,
        labels={
            "title": t("prefill_decode.batch_chart_title"),
            "subtitle": t(
                "prefill_decode.batch_chart_subtitle",
                model=model.name,
                context=ui.num(format_tokens(step_context)),
            ),
            "x_title": t("prefill_decode.batch_axis"),
            "y_title": t("prefill_decode.intensity_axis"),
            "decode": t("prefill_decode.decode"),
            "ridge": t("prefill_decode.ridge_label", ridge=ui.num(units.format_flop_per_byte(ridge))),
            "current": t("prefill_decode.your_batch"),
            "batch": t("prefill_decode.batch_word"),
        },
        separators=ui.separators(),
        **sizes,
    ),
    key="pd_batch_chart",
)

st.subheader(t("prefill_decode.cost_title"))
st.markdown(t("prefill_decode.cost_intro"))
price_column, cost_column = st.columns([1, 2], gap="large")
with price_column:
    price = lesson.slider(
        t("prefill_decode.price"),
        key="pd_price",
        min_value=0.1,
        max_value=20.0,
        value=2.5,
        step=0.1,
        help=t("prefill_decode.price_help"),
    )
try:
    input_cost = float(kvcore.cost_per_million_tokens(input_rate, price_per_gpu_hour=price))
    output_cost = float(kvcore.cost_per_million_tokens(output_rate, price_per_gpu_hour=price))
    ratio = float(kvcore.output_to_input_cost_ratio(input_tokens_per_s=input_rate, output_tokens_per_s=output_rate))
except ValueError as error:
    lesson.stop_with(error)
with cost_column:
    row = st.columns(3)
    row[0].metric(
        t("prefill_decode.metric_input_cost"),
        t("prefill_decode.money", amount=ui.num(formatting.money(input_cost))),
        help=t("prefill_decode.metric_input_cost_help", rate=ui.num(units.format_tokens_per_s(input_rate))),
    )
    row[1].metric(
        t("prefill_decode.metric_output_cost"),
        t("prefill_decode.money", amount=ui.num(formatting.money(output_cost))),
        help=t("prefill_decode.metric_output_cost_help", rate=ui.num(units.format_tokens_per_s(output_rate))),
    )
    ratio_text = ui.num(formatting.times(ratio, decimals=1 if ratio < 10 else 0))  # '4.6×', '183×'
    row[2].metric(t("prefill_decode.metric_ratio"), ratio_text, help=t("prefill_decode.metric_ratio_help"))
st.markdown(
    t(
        "prefill_decode.cost_text",
        input_rate=ui.num(units.format_tokens_per_s(input_rate)),
        output_rate=ui.num(units.format_tokens_per_s(output_rate)),
        ratio=ratio_text,
        users=ui.plural("users.count", batch),
    )
)
with prediction:
    ui.practice.predict(
        "compute_bound_phase",
        stem="prefill_decode",
        model=model,
        gpu=gpu,
        prompt_tokens=prompt_tokens,
        context_tokens=round(step_context),
        batch=batch,
        weights_dtype=weights_dtype,
        kv_dtype=KV_DTYPE,
    )
lesson.takeaway(t("prefill_decode.takeaway"))

glossary.terms_used("prefill_decode")
