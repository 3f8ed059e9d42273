"""GQA, MQA and MLA: the chosen model caching K and V four ways — what each saves and what it costs.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.
"""

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.attention_variants import (
    models_landscape_figure,
    variant_bars_figure,
    variant_bars_patches,
    variant_curves_figure,
)
from charts.formatting import count, percent, times
from course import seeds
from kvcore.units import KB, KiB, format_bytes, format_bytes_decimal, format_seconds
from kvcore.variants import (
    DEFAULT_MLA_RANK,
    DEFAULT_MLA_ROPE_DIM,
    VARIANTS,
    attention_cost,
    attention_variants,
    cache_reduction_factor,
    cache_saving_fraction,
    default_gqa_kv_heads,
)
from ui import glossary, lesson, live_chart, t
from ui.formula import latex_number, result_latex

lesson.rerun_alone(__file__)

KV_DTYPES = ("fp16", "bf16", "fp8", "int8", "int4")
#: Beside the seeds' example models (course.seeds): the largest Llama 3.1, for the MLA comparison.
LLAMA_405B_ID = "llama-3.1-405b"

model = ui.current_model()
gpu = ui.current_gpu()
catalogue = ui.models()
#: The language's decimal mark and thousands separator, for charts.formatting.
seps = ui.separators()

lesson.header(
    t("attention_variants.title"),
    t("attention_variants.intro", model=model.name, heads=model.num_attention_heads),
)
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("attention_variants", key="av_presets")

low, high, step, default_context = ui.context_range(model)
head_choices = ui.kv_head_choices(model)
controls, main = st.columns([1, 2], gap="large")
with controls:
    context_tokens = lesson.slider(
        t("attention_variants.context"),
        key="av_context",
        min_value=low,
        max_value=high,
        value=default_context,
        step=step,
        help=t("attention_variants.context_help", maximum=count(high, seps)),
    )
    users = lesson.slider(
        t("attention_variants.users"), key="av_users", min_value=1, max_value=64, value=1,
        help=t("attention_variants.users_help"),
    )  # fmt: skip
    gqa_heads = lesson.select_slider(
        t("attention_variants.gqa_heads"),
        key="av_gqa_heads",
        options=head_choices,
        value=default_gqa_kv_heads(model),
        help=t("attention_variants.gqa_heads_help", heads=model.num_attention_heads),
    )
    if len(head_choices) <= 2:
        st.caption(t("attention_variants.gqa_no_groups", heads=model.num_attention_heads))
    with lesson.secondary():
        rank = lesson.slider(
            t("attention_variants.rank"), key="av_rank", min_value=64, max_value=1024, step=64,
            value=model.kv_lora_rank or DEFAULT_MLA_RANK, help=t("attention_variants.rank_help"),
        )  # fmt: skip
        rope = lesson.slider(
            t("attention_variants.rope"), key="av_rope", min_value=0, max_value=128, step=16,
            value=model.qk_rope_head_dim or DEFAULT_MLA_ROPE_DIM, help=t("attention_variants.rope_help"),
        )  # fmt: skip
        kv_dtype = lesson.choice(
            t("attention_variants.dtype"), key="av_dtype", options=KV_DTYPES, default="bf16",
            help=t("attention_variants.dtype_help"),
        )  # fmt: skip
        log_y = lesson.toggle(t("attention_variants.log"), key="av_log")

try:
    shown = {**attention_variants(model, gqa_kv_heads=gqa_heads, mla_rank=rank, mla_rope_dim=rope), "model": model}
    b = kvcore.bytes_per_value(kv_dtype)
    per_token = {key: kvcore.kv_bytes_per_token(spec, bytes_per_value=b) for key, spec in shown.items()}
    cache = {
        key: float(kvcore.kv_cache_bytes(spec, context_tokens=context_tokens, concurrency=users, bytes_per_value=b))
        for key, spec in shown.items()
    }
    saving = {key: float(cache_saving_fraction(cache[key], baseline_bytes_per_token=cache["MHA"])) for key in shown}
    factor = {key: float(cache_reduction_factor(cache[key], baseline_bytes_per_token=cache["MHA"])) for key in shown}
    weights = kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value(model.weights_dtype))
    # The shared default assumptions (kvcore.DEFAULT_ASSUMPTIONS), stated beside the figure.
    room = kvcore.kv_budget_bytes(
        memory_bytes=gpu.memory_bytes,
        utilization=kvcore.DEFAULT_UTILIZATION,
        weights_bytes=weights,
        overhead_bytes=kvcore.DEFAULT_OVERHEAD_BYTES,
    )
    sequence = {
        key: float(kvcore.sequence_kv_bytes(spec, context_tokens=context_tokens, bytes_per_value=b))
        for key, spec in shown.items()
    }
    fit = {key: int(kvcore.max_users(kv_pool_bytes=room, sequence_bytes=sequence[key])) for key in shown}
    costs = {
        key: attention_cost(
            spec,
            context_tokens=context_tokens,
            concurrency=users,
            bytes_per_value=b,
            bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
            peak_flop_per_s=gpu.bf16_dense_flop_per_s,
        )
        for key, spec in shown.items()
        if key in VARIANTS
    }
    ridge = kvcore.ridge_point(
        peak_flop_per_s=gpu.bf16_dense_flop_per_s, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s
    )
except ValueError as error:
    lesson.stop_with(error)

mla = shown["MLA"]
names = {
    "MHA": t("attention_variants.bar_mha", kv=model.num_attention_heads),
    "GQA": t("attention_variants.bar_gqa", kv=gqa_heads),
    "MQA": t("attention_variants.bar_mqa"),
    "MLA": t("attention_variants.bar_mla", rank=mla.kv_lora_rank, rope=mla.qk_rope_head_dim),
    "model": t("attention_variants.bar_model", model=model.name),
}
unit = lesson.memory_unit()
users_text = ui.plural("users.count", users)
bars_subtitle = t("attention_variants.bars_subtitle", model=model.name, users=users_text, dtype=kv_dtype)


def bars_follow() -> live_chart.Follow | None:
    """In the browser the bars follow the context slider at once (ui.live_chart); the rerun confirms them."""
    context_values = live_chart.slider_values(low, high, step)
    if len(context_values) > live_chart.MAX_POSITIONS_WITH_DATA:
        return None
    patches = variant_bars_patches(
        shown,
        context_values=context_values,
        titles=[t("attention_variants.bars_title", context=count(value, seps)) for value in context_values],
        subtitle=bars_subtitle,
        concurrency=users,
        bytes_per_value=b,
        unit_bytes=lesson.memory_unit_bytes(),
    )
    return live_chart.Follow("av_context", context_values, context_tokens, patches)


with main:
    lesson.chart(
        lesson.figure(
            variant_bars_figure,
            shown,
            names=names,
            context_tokens=context_tokens,
            concurrency=users,
            bytes_per_value=b,
            room_bytes=room,
            labels={
                "title": t("attention_variants.bars_title", context=count(context_tokens, seps)),
                "subtitle": bars_subtitle,
                "x_title": t("attention_variants.cache_axis", unit=unit),
                "per_token": t("attention_variants.per_token"),
                "room": t("attention_variants.room", room=lesson.mem(max(room, 0.0))),
            },
            separators=ui.separators(),
            unit_bytes=lesson.memory_unit_bytes(),
            unit=unit,
            log_y=log_y,
        ),
        key="av_bars_chart",
        follow=bars_follow(),
    )

columns = st.columns(len(VARIANTS))
for column, key in zip(columns, VARIANTS, strict=True):
    column.metric(
        t("attention_variants.metric_per_token", name=names[key]),
        lesson.size(per_token[key]),
        delta=None
        if key == "MHA"
        else t("attention_variants.metric_delta", saving=ui.num(percent(saving[key], decimals=3, trim_zeros=True))),
        delta_color="inverse",
        help=t("attention_variants.metric_help", cache=lesson.mem(cache[key]), context=count(context_tokens, seps)),
    )

with prediction:
    ui.practice.predict(
        "gqa_saving", stem="attention_variants", model=model, otherwise=("bytes_per_token", {"kv_dtype": kv_dtype})
    )
lesson.takeaway(t("attention_variants.takeaway"))

st.subheader(t("attention_variants.formula_title"))
st.markdown(t("attention_variants.formula_legend"))
gqa, lang = shown["GQA"], ui.language()
lesson.formula(
    r"\text{GQA:}\ \ 2 \cdot L \cdot n_{kv} \cdot d_{head} \cdot b",
    r" \cdot ".join(
        ["2", *(latex_number(v, lang) for v in (gqa.num_hidden_layers, gqa.num_key_value_heads, gqa.head_dim, b))]
    )
    + result_latex(per_token["GQA"], lang, decimal=unit == "GB"),
)
lesson.formula(
    r"\text{MLA:}\ \ L \cdot (r_{kv} + d_{rope}) \cdot b",
    rf"{latex_number(mla.num_hidden_layers, lang)} \cdot ({latex_number(mla.kv_lora_rank, lang)} + "
    rf"{latex_number(mla.qk_rope_head_dim, lang)}) \cdot {latex_number(b, lang)}"
    + result_latex(per_token["MLA"], lang, decimal=unit == "GB"),
)

st.subheader(t("attention_variants.table_title"))
lesson.table(
    [
        {
            t("attention_variants.col_variant"): names[key],
            t("attention_variants.col_per_token"): lesson.size(per_token[key]),
            t("attention_variants.col_saving"): ui.num(percent(saving[key], decimals=3, trim_zeros=True)),
            t("attention_variants.col_factor"): times(factor[key], seps, decimals=1, trim_zeros=True),
            t("attention_variants.col_cache", context=count(context_tokens, seps), users=users_text): lesson.mem(
                cache[key]
            ),
            t("attention_variants.col_users", gpu=gpu.name): count(fit[key], seps),
        }
        for key in shown
    ],
)
if room > 0:
    st.markdown(
        t(
            "attention_variants.fit_summary",
            gpu=gpu.name,
            u=percent(kvcore.DEFAULT_UTILIZATION, seps, decimals=0, spaced=True),
            overhead=lesson.mem(kvcore.DEFAULT_OVERHEAD_BYTES),
            weights=lesson.mem(weights),
            room=lesson.mem(room),
            context=count(context_tokens, seps),
            mha=count(fit["MHA"], seps),
            gqa=count(fit["GQA"], seps),
            mqa=count(fit["MQA"], seps),
            mla=count(fit["MLA"], seps),
        )
    )
else:
    st.warning(t("attention_variants.weights_too_big", gpu=gpu.name, weights=lesson.mem(weights)))

st.subheader(t("attention_variants.curves_title"))
st.markdown(t("attention_variants.curves_intro"))
lesson.chart(
    lesson.figure(
        variant_curves_figure,
        shown,
        names=names,
        context_tokens=context_tokens,
        max_context_tokens=model.max_position_embeddings,
        concurrency=users,
        bytes_per_value=b,
        gpu_memory_bytes=gpu.memory_bytes,
        room_bytes=room,
        labels={
            "title": t("attention_variants.curves_chart_title", model=model.name),
            "subtitle": t("attention_variants.curves_subtitle", gpu=gpu.name, users=users_text, dtype=kv_dtype),
            "x_title": t("chart.context_axis"),
            "y_title": t("attention_variants.cache_axis", unit=unit),
            "gpu_memory": t("chart.gpu_memory", gpu=gpu.name),
            "room": t("attention_variants.curves_room"),
            "current": t("chart.current"),
            "tokens": t("chart.tokens"),
        },
        separators=ui.separators(),
        unit_bytes=lesson.memory_unit_bytes(),
        unit=unit,
    ),
    key="av_curves_chart",
)

st.subheader(t("attention_variants.landscape_title"))
st.markdown(t("attention_variants.landscape_intro", context=count(context_tokens, seps)))
per_token_unit = "KiB" if unit == "GiB" else "kB"
lesson.chart(
    lesson.figure(
        models_landscape_figure,
        catalogue,
        context_tokens=context_tokens,
        bytes_per_value=b,
        current_id=model.id,
        labels={
            "title": t("attention_variants.landscape_chart_title"),
            "subtitle": t("attention_variants.landscape_subtitle", context=count(context_tokens, seps), dtype=kv_dtype),
            "x_title": t("attention_variants.landscape_x"),
            "y_title": t("attention_variants.landscape_y", unit=per_token_unit),
            "current": model.name,
            "heads": t("attention_variants.landscape_heads"),
            "hybrid": t("attention_variants.landscape_hybrid"),
        },
        separators=ui.separators(),
        unit_bytes=KiB if unit == "GiB" else KB,
        unit=per_token_unit,
    ),
    key="av_landscape_chart",
)

st.subheader(t("attention_variants.costs_title"))
st.markdown(t("attention_variants.costs_intro", context=count(context_tokens, seps), users=users_text, gpu=gpu.name))
lesson.table(
    [
        {
            t("attention_variants.col_variant"): names[key],
            t("attention_variants.col_weights", dtype=model.weights_dtype): lesson.size(
                kvcore.weights_bytes(
                    cost.kv_projection_params, bytes_per_param=kvcore.bytes_per_value(model.weights_dtype)
                )
            ),
            t("attention_variants.col_read"): lesson.size(cost.cache_read_bytes),
            t("attention_variants.col_read_s"): ui.num(format_seconds(cost.read_s)),
            t("attention_variants.col_compute_s"): ui.num(format_seconds(cost.compute_s)),
            t("attention_variants.col_intensity"): count(cost.flop_per_byte, seps),
            t("attention_variants.col_reprojection_s"): ui.num(format_seconds(cost.reprojection_s))
            if key == "MLA"
            else "—",
        }
        for key, cost in costs.items()
    ],
)
st.markdown(
    t(
        "attention_variants.costs_explained",
        gpu=gpu.name,
        ridge=count(ridge, seps),
        mha=count(costs["MHA"].flop_per_byte, seps),
        gqa=count(costs["GQA"].flop_per_byte, seps),
        mla=count(costs["MLA"].flop_per_byte, seps),
        mla_read=ui.num(format_seconds(costs["MLA"].read_s)),
        mla_compute=ui.num(format_seconds(costs["MLA"].compute_s)),
        mla_reprojection=ui.num(format_seconds(costs["MLA"].reprojection_s)),
    )
)
st.markdown(t("attention_variants.quality"))


# The one "free" factor (the text "Million-token agents"): the sidebar model's own sharing, in FP16.
FREE_FACTOR_TEXTS = {
    "MHA": "attention_variants.free_factor_mha",
    "GQA": "attention_variants.free_factor_gqa",
    "MQA": "attention_variants.free_factor_mqa",
    "MLA": "attention_variants.free_factor_mla",
}


def course_texts_checked() -> None:
    """The course texts' figures on GQA, MQA and MLA, recomputed, and the sidebar model's own sharing.

    They read the catalogue and the sidebar's model, never this lesson's controls: drawn once per whole run
    (``lesson.footer``).
    """
    # ---------------------------------------------------------------- the course texts, checked

    st.subheader(t("attention_variants.seeds_title"))
    try:
        seed_shape = catalogue[seeds.SEED_002_GQA_TABLE_MODEL_ID]
        seed_variants = attention_variants(seed_shape, gqa_kv_heads=8)
        seed_per_token = {
            key: kvcore.kv_bytes_per_token(spec, bytes_per_value=2.0) for key, spec in seed_variants.items()
        }
        seed_saving = {
            key: float(cache_saving_fraction(seed_per_token[key], baseline_bytes_per_token=seed_per_token["MHA"]))
            for key in ("MHA", "GQA", "MQA")
        }
        seed_128k = {
            key: float(kvcore.kv_cache_bytes(seed_variants[key], context_tokens=131072, bytes_per_value=2.0))
            for key in ("MHA", "GQA")
        }
        seed_fp8_factor = float(
            cache_reduction_factor(
                kvcore.kv_bytes_per_token(seed_variants["GQA"], bytes_per_value=kvcore.bytes_per_value("fp8")),
                baseline_bytes_per_token=seed_per_token["GQA"],
            )
        )
        deepseek = catalogue[seeds.SEED_002_MLA_MODEL_ID]
        deepseek_latent = kvcore.kv_bytes_per_token(deepseek, bytes_per_value=2.0)
        deepseek_gqa8 = kvcore.kv_bytes_per_token(
            attention_variants(deepseek, gqa_kv_heads=8)["GQA"], bytes_per_value=2.0
        )
        llama_70b, llama_405b = catalogue[seeds.SEED_MODEL_ID], catalogue[LLAMA_405B_ID]
        against = {
            "mha": kvcore.mha_equivalent_bytes_per_token(deepseek, bytes_per_value=2.0),
            "gqa8": deepseek_gqa8,
            "llama405": kvcore.kv_bytes_per_token(llama_405b, bytes_per_value=2.0),
            "llama70": kvcore.kv_bytes_per_token(llama_70b, bytes_per_value=2.0),
        }
        mla_factor = {
            key: float(cache_reduction_factor(deepseek_latent, baseline_bytes_per_token=value))
            for key, value in against.items()
        }
        at_128k = {
            spec.id: float(kvcore.kv_cache_bytes(spec, context_tokens=131072, bytes_per_value=2.0))
            for spec in (deepseek, llama_70b, llama_405b)
        }
        no_gqa_70b = kvcore.mha_equivalent_bytes_per_token(llama_70b, bytes_per_value=2.0)
        gqa_cut_70b = float(
            cache_reduction_factor(
                kvcore.kv_bytes_per_token(llama_70b, bytes_per_value=2.0), baseline_bytes_per_token=no_gqa_70b
            )
        )
    except (KeyError, ValueError) as error:
        lesson.stop_with(error)

    st.markdown(t("attention_variants.seed_table_intro", model=seed_shape.name, heads=seed_shape.num_attention_heads))
    seed_says = {
        "MHA": t("attention_variants.seed_says_mha"),
        "GQA": t("attention_variants.seed_says_gqa"),
        "MQA": t("attention_variants.seed_says_mqa"),
    }
    lesson.table(
        [
            {
                t("attention_variants.seed_col_technique"): key,
                t("attention_variants.seed_col_q"): seed_variants[key].num_attention_heads,
                t("attention_variants.seed_col_kv"): seed_variants[key].num_key_value_heads,
                t("attention_variants.seed_col_per_token"): lesson.size(seed_per_token[key]),
                t("attention_variants.seed_col_seed"): seed_says[key],
                t("attention_variants.seed_col_exact"): ui.num(percent(seed_saving[key], decimals=3, trim_zeros=True)),
            }
            for key in ("MHA", "GQA", "MQA")
        ],
    )
    st.markdown(
        t(
            "attention_variants.seed_notes",
            mqa=ui.num(percent(seed_saving["MQA"], decimals=3, trim_zeros=True)),
            heads=seed_shape.num_attention_heads,
            mqa_factor=times(seed_shape.num_attention_heads, seps, decimals=1, trim_zeros=True),
            gqa_factor=times(
                float(cache_reduction_factor(seed_per_token["GQA"], baseline_bytes_per_token=seed_per_token["MHA"])),
                seps,
                decimals=1,
                trim_zeros=True,
            ),
            mha_128k=lesson.mem(seed_128k["MHA"]),
            gqa_128k=lesson.mem(seed_128k["GQA"]),
            mha_token=lesson.size(seed_per_token["MHA"]),
            gqa_token=lesson.size(seed_per_token["GQA"]),
            no_gqa_70b=ui.num(format_bytes_decimal(no_gqa_70b)),
            no_gqa_70b_binary=ui.num(format_bytes(no_gqa_70b)),
            cut_70b=times(gqa_cut_70b, seps, decimals=1, trim_zeros=True),
            fp8=times(seed_fp8_factor, seps, decimals=1, trim_zeros=True),
        )
    )

    try:
        # Every layer full, the model's own KV heads: only the sharing differs from MHA (MLA keeps its latent).
        own_sharing = (
            model
            if model.attention_type == "MLA"
            else attention_variants(model, gqa_kv_heads=model.num_key_value_heads)["GQA"]
        )
        free_mha = kvcore.mha_equivalent_bytes_per_token(model, bytes_per_value=2.0)
        free_own = kvcore.kv_bytes_per_token(own_sharing, bytes_per_value=2.0)
        free_factor = float(cache_reduction_factor(free_own, baseline_bytes_per_token=free_mha))
    except ValueError as error:
        lesson.stop_with(error)
    st.markdown(
        t("attention_variants.free_factor_claim", cut_70b=times(gqa_cut_70b, seps, decimals=1, trim_zeros=True))
    )
    st.markdown(
        t(
            FREE_FACTOR_TEXTS[model.attention_type],
            model=model.name,
            heads=model.num_attention_heads,
            kv_heads=model.num_key_value_heads,
            mha=lesson.size(free_mha),
            own=lesson.size(free_own),
            factor=times(free_factor, seps, decimals=1, trim_zeros=True),
        )
    )
    st.markdown(
        t(
            "attention_variants.seed_mla",
            model=deepseek.name,
            layers=deepseek.num_hidden_layers,
            rank=deepseek.kv_lora_rank,
            rope=deepseek.qk_rope_head_dim,
            latent=lesson.size(deepseek_latent),
            latent_bytes=count(deepseek_latent, seps),
            heads=deepseek.num_attention_heads,
            head_dim=deepseek.head_dim,
            mha=lesson.size(against["mha"]),
            mha_factor=times(mla_factor["mha"], seps, decimals=1, trim_zeros=True),
            gqa8=lesson.size(against["gqa8"]),
            gqa8_factor=times(mla_factor["gqa8"], seps, decimals=1, trim_zeros=True),
            llama405=llama_405b.name,
            llama405_factor=times(mla_factor["llama405"], seps, decimals=1, trim_zeros=True),
            llama70=llama_70b.name,
            llama70_factor=times(mla_factor["llama70"], seps, decimals=1, trim_zeros=True),
            deepseek_128k=lesson.mem(at_128k[deepseek.id]),
            llama70_128k=lesson.mem(at_128k[llama_70b.id]),
            llama405_128k=lesson.mem(at_128k[llama_405b.id]),
        )
    )
    st.markdown(t("attention_variants.seed_gpt35"))


lesson.footer(course_texts_checked)
glossary.terms_used("attention_variants")
