"""Memory calculator: the weights, the KV cache and the overhead of one model on one GPU.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.

Head dim and layers change the architecture the cache is computed for; the weights
stay those of the real model (its published parameter count). Patterned models
(sliding/full, linear/full) repeat their cycle from layer 0, so more layers add more
of the same cycle (kvcore.model.layer_kinds). MLA caches one latent per token, so
the head dim and KV heads are disabled there.
"""

import streamlit as st

import kvcore
import ui
import ui.engine_table
import ui.practice
from charts.formatting import percent
from charts.memory import memory_vs_context_figure, memory_vs_context_patches
from charts.memory_heatmap import memory_heatmap_figure
from course import seeds
from kvcore.capacity import gpus_needed
from kvcore.memory import (
    break_even_context_tokens,
    break_even_users,
    mha_cache_bytes,
    tensor_parallel_to_fit,
    total_memory_bytes,
)
from kvcore.units import GiB, format_bytes, format_bytes_decimal, format_gb, format_gib, format_tokens
from ui import glossary, lesson, live_chart, t
from ui.formula import SYMBOLIC, formula_terms, result_latex, total_substituted, total_symbolic

lesson.rerun_alone(__file__)

KV_DTYPES = ("fp16", "bf16", "fp8", "int8", "int4")
WEIGHTS_DTYPES = ("fp32", "fp16", "bf16", "fp8", "int8", "mxfp4", "int4")
MAX_USERS = 256
#: Head dims real models use; the chosen model's own is added to the list.
HEAD_DIMS = (32, 64, 80, 96, 128, 160, 192, 256)
#: Not a widget: the model the head-dim and layers values belong to (reset when it changes).
VALUES_MODEL_KEY = "mem_values_model"
#: The shared default overhead (kvcore.DEFAULT_ASSUMPTIONS). This page counts the whole card
#: (kvcore.WHOLE_CARD: u = 1) on purpose: it asks what the GPU must hold; the caption beside the
#: status gives a server's view too.
DEFAULT_OVERHEAD_GIB = kvcore.DEFAULT_OVERHEAD_BYTES / GiB

#: Seed 002's "30 GB model", its memory table and its one-user story: course.seeds.
THIRTY = seeds.SEED_002_THIRTY_GB
STORY = seeds.SEED_002_STORY

model = ui.current_model()
gpu = ui.current_gpu()
is_mla = model.attention_type == "MLA"

# A new model brings its own head dim and layers (the sidebar's callback resets the older keys).
if st.session_state.get(VALUES_MODEL_KEY, model.id) != model.id:
    st.session_state["mem_head_dim"] = model.head_dim
    st.session_state["mem_layers"] = model.num_hidden_layers
st.session_state[VALUES_MODEL_KEY] = model.id

lesson.header(t("memory.title"), t("memory.intro", model=model.name, gpu=gpu.name))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("memory", key="mem_presets")
# "The weights do not fit" is said here, at the top, once the numbers are known.
fit_notice = st.container()

controls, results = st.columns([1, 2], gap="large")

with controls:
    st.subheader(t("memory.controls"))
    low, high, step, default_context = ui.context_range(model)
    context_tokens = lesson.slider(
        t("memory.context"),
        key="context",
        min_value=low,
        max_value=high,
        value=default_context,
        step=step,
        help=t("memory.context_help", maximum=ui.num(format_tokens(high))),
    )
    concurrency = lesson.slider(
        t("memory.concurrency"),
        key="concurrency",
        min_value=1,
        max_value=MAX_USERS,
        value=1,
        help=t("memory.concurrency_help"),
    )
    kv_heads = lesson.select_slider(
        t("memory.kv_heads"),
        key="kv_heads",
        options=ui.kv_head_choices(model),
        value=model.num_key_value_heads,
        disabled=is_mla,
        help=t(
            "memory.kv_heads_help",
            heads=model.num_attention_heads,
            own=ui.plural("kv_heads.count", model.num_key_value_heads),
        ),
    )
    if is_mla:
        st.caption(t("memory.kv_heads_mla"))
    # The splits the model accepts with the KV heads chosen above (kvcore.tensor_parallel_sizes).
    split_model = model if is_mla else kvcore.with_changes(model, num_key_value_heads=kv_heads)
    gpu_counts = lesson.tp_sizes(split_model)
    tp = lesson.select_slider(
        t("memory.gpus"),
        key="mem_gpus",
        options=gpu_counts,
        value=1,
        disabled=len(gpu_counts) == 1,
        help=t("memory.gpus_help", heads=model.num_attention_heads, counts=", ".join(map(str, gpu_counts))),
    )
    # Segmented controls that wrap: lesson.choice keeps one row, which hides int4 in this column.
    ui.check_url_value("kv_dtype", options=list(KV_DTYPES))
    ui.check_url_value("weights_dtype", options=list(WEIGHTS_DTYPES))
    kv_dtype = st.segmented_control(
        t("memory.kv_dtype"), KV_DTYPES, default="bf16", key="kv_dtype", bind="query-params", required=True, wrap=True
    )
    weights_dtype = st.segmented_control(
        t("memory.weights_dtype"),
        WEIGHTS_DTYPES,
        default=model.weights_dtype,
        key="weights_dtype",
        bind="query-params",
        required=True,
        wrap=True,
    )
    with lesson.secondary():
        head_dim = lesson.select_slider(
            t("memory.head_dim"),
            key="mem_head_dim",
            options=sorted({*HEAD_DIMS, model.head_dim}),
            value=model.head_dim,
            disabled=is_mla,
            help=t("memory.head_dim_help", own=model.head_dim),
        )
        layers = lesson.slider(
            t("memory.layers"),
            key="mem_layers",
            min_value=1,
            max_value=2 * model.num_hidden_layers,
            value=model.num_hidden_layers,
            help=t("memory.layers_help", own=model.num_hidden_layers),
        )
        if len(set(kvcore.layer_kinds(model.layer_pattern, model.num_hidden_layers))) > 1:
            st.caption(t("memory.layers_pattern", pattern=model.layer_pattern))
        overhead_gib = lesson.slider(
            t("memory.overhead"),
            key="mem_overhead",
            min_value=0.0,
            max_value=16.0,
            value=DEFAULT_OVERHEAD_GIB,
            step=0.25,
            help=t("memory.overhead_help"),
        )
        lesson.gib_slider_note(overhead_gib)
        st.caption(t("memory.architecture_note"))

decimal = lesson.memory_unit() == "GB"
unit_bytes = lesson.memory_unit_bytes()
overhead = overhead_gib * GiB  # the slider speaks GiB; kvcore speaks bytes
try:
    shape = {"num_hidden_layers": layers}
    if not is_mla:
        shape |= {"num_key_value_heads": kv_heads, "head_dim": head_dim}
    variant = kvcore.with_changes(model, **shape)
    kv_bytes_per_value = kvcore.bytes_per_value(kv_dtype or "bf16")
    weights_bytes_per_param = kvcore.bytes_per_value(weights_dtype or model.weights_dtype)
    sizes = {
        "context_tokens": context_tokens,
        "concurrency": concurrency,
        "kv_bytes_per_value": kv_bytes_per_value,
        "weights_bytes_per_param": weights_bytes_per_param,
    }
    # Every figure is one GPU's: 1/tp of the weights, its own KV heads' cache, its own overhead (tp = 1: the card).
    per_token = kvcore.kv_bytes_per_token(variant, bytes_per_value=kv_bytes_per_value, tp=tp)
    cache = float(
        kvcore.kv_cache_bytes(
            variant, context_tokens=context_tokens, concurrency=concurrency, bytes_per_value=kv_bytes_per_value, tp=tp
        )
    )
    whole_weights = kvcore.model_weights_bytes(variant, bytes_per_param=weights_bytes_per_param)
    weights = kvcore.model_weights_bytes(variant, bytes_per_param=weights_bytes_per_param, tp=tp)
    total = float(total_memory_bytes(variant, overhead_bytes=overhead, tp=tp, **sizes))
    kv_heads_each = 0 if is_mla else kvcore.kv_heads_per_gpu(variant.num_key_value_heads, tp)
    kv_room = kvcore.kv_budget_bytes(
        memory_bytes=gpu.memory_bytes,
        utilization=kvcore.WHOLE_CARD.utilization,
        weights_bytes=weights,
        overhead_bytes=overhead,
    )
    longest_context = float(
        kvcore.max_context_tokens(
            variant, kv_pool_bytes=kv_room, concurrency=concurrency, bytes_per_value=kv_bytes_per_value, tp=tp
        )
    )
    sequence = kvcore.sequence_kv_bytes(
        variant, context_tokens=context_tokens, bytes_per_value=kv_bytes_per_value, tp=tp
    )
    users_on_card = int(kvcore.max_users(kv_pool_bytes=kv_room, sequence_bytes=sequence))
    # A server's view of the same card, with the defaults every other page starts from.
    serving_room = kvcore.kv_budget_bytes(
        memory_bytes=gpu.memory_bytes,
        utilization=kvcore.DEFAULT_UTILIZATION,
        weights_bytes=weights,
        overhead_bytes=kvcore.DEFAULT_OVERHEAD_BYTES,
    )
    users_served = int(kvcore.max_users(kv_pool_bytes=serving_room, sequence_bytes=sequence))
    # What the weights do not fit on one GPU asks for: the fewest GPUs of a split whose share fits, or the bytes.
    gpus_to_fit = tensor_parallel_to_fit(
        variant, sizes=gpu_counts, memory_bytes=gpu.memory_bytes, overhead_bytes=overhead, **sizes
    )
    gpus_for_all = int(
        gpus_needed(
            total_bytes=total_memory_bytes(variant, overhead_bytes=overhead, **sizes), memory_bytes=gpu.memory_bytes
        )
    )
    # When the cache catches up with the weights: the whole model's (a property of the model, not of the split).
    break_even_one, break_even_each = break_even_context_tokens(
        variant, weights_bytes=whole_weights, concurrency=[1, concurrency], bytes_per_value=kv_bytes_per_value
    )
    users_at_full_context = int(
        break_even_users(
            variant,
            weights_bytes=whole_weights,
            context_tokens=model.max_position_embeddings,
            bytes_per_value=kv_bytes_per_value,
        )
    )
except ValueError as error:
    lesson.stop_with(error)

usage = kvcore.MemoryBreakdown(weights_bytes=weights, kv_cache_bytes=cache, overhead_bytes=overhead)
fixed_part = kvcore.MemoryBreakdown(weights_bytes=weights, kv_cache_bytes=0.0, overhead_bytes=overhead)

split = tp > 1  # every figure below is one GPU's of `tp`
with results:
    row = st.columns(2)
    row[0].metric(
        t("memory.metric_per_token_split" if split else "memory.metric_per_token"),
        ui.num(format_bytes_decimal(per_token) if decimal else format_bytes(per_token)),
        help=t("memory.metric_per_token_help"),
    )
    row[1].metric(
        t("memory.metric_cache_split" if split else "memory.metric_cache"),
        lesson.mem(cache),
        help=t("memory.metric_cache_help", context=ui.num(format_tokens(context_tokens)), users=concurrency),
    )
    row = st.columns(2)
    row[0].metric(
        t("memory.metric_weights_split", gpus=tp) if split else t("memory.metric_weights"),
        lesson.mem(weights),
        help=t("memory.metric_weights_help"),
    )
    row[1].metric(
        t("memory.metric_total", memory=lesson.mem(gpu.memory_bytes)),
        lesson.mem(total),
        help=t("memory.metric_total_help", gpu=gpu.name, overhead=lesson.mem(overhead)),
    )

    room = {
        "gpu": gpu.name,
        "each": ui.plural("users.each", concurrency),
        "all": ui.plural("users.all", concurrency),
        "room": lesson.mem(max(kv_room, 0.0)),
    }
    if split:
        if is_mla:
            kv_share = t("memory.split_mla")
        elif kv_heads_each * tp > variant.num_key_value_heads:
            kv_share = t(
                "memory.split_replicated",
                kv_heads=ui.plural("kv_heads.count", variant.num_key_value_heads),
                n=tp,
                copies=tp // variant.num_key_value_heads,
            )
        else:
            kv_share = t("memory.split_heads", each=kv_heads_each, kv_heads=variant.num_key_value_heads)
        st.markdown(
            t(
                "memory.split",
                gpus=ui.plural("gpus.count", tp),
                gpu=gpu.name,
                n=tp,
                weights=lesson.mem(whole_weights),
                kv_share=kv_share,
                overhead=lesson.mem(overhead),
            )
        )
    if not fixed_part.fits(gpu.memory_bytes):
        advice = (
            t("memory.split_to_fit", gpus=ui.plural("gpus.count", gpus_to_fit))
            if gpus_to_fit is not None
            else t("memory.no_split_fits", most=ui.plural("gpus.count", max(gpu_counts)), gpus=gpus_for_all)
        )
        fit_notice.error(
            t(
                "memory.weights_do_not_fit",
                weights=lesson.mem(weights),
                overhead=lesson.mem(overhead),
                memory=lesson.mem(gpu.memory_bytes),
                advice=advice,
            )
        )
    elif longest_context >= model.max_position_embeddings:
        st.success(t("memory.fits_whole_context", maximum=ui.num(format_tokens(model.max_position_embeddings)), **room))
    elif usage.fits(gpu.memory_bytes):
        st.success(t("memory.fits", tokens=ui.num(format_tokens(longest_context)), **room))
    else:
        st.warning(t("memory.cache_does_not_fit", tokens=ui.num(format_tokens(longest_context)), **room))
    st.caption(
        t(
            "memory.assumptions",
            overhead=lesson.mem(overhead),
            room=lesson.mem(max(kv_room, 0.0)),
            users=users_on_card,
            context=ui.num(format_tokens(context_tokens)),
            u=ui.num(percent(kvcore.DEFAULT_UTILIZATION, decimals=0, spaced=True)),
            default_overhead=lesson.mem(kvcore.DEFAULT_OVERHEAD_BYTES),
            serving_room=lesson.mem(max(serving_room, 0.0)),
            serving_users=users_served,
        )
    )

    figure = lesson.figure(
        memory_vs_context_figure,
        model=variant,
        gpu=gpu,
        context_tokens=context_tokens,
        concurrency=concurrency,
        kv_bytes_per_value=kv_bytes_per_value,
        weights_bytes_per_param=weights_bytes_per_param,
        overhead_bytes=overhead,
        tp=tp,
        separators=ui.separators(),
        unit_bytes=unit_bytes,
        unit=lesson.memory_unit(),
        labels={
            "title": model.name,
            "subtitle": (
                t("memory.chart_subtitle_split", gpus=tp, gpu=gpu.name, users=ui.plural("users.count", concurrency))
                if split
                else t("chart.memory_subtitle", gpu=gpu.name, users=ui.plural("users.count", concurrency))
            ),
            "x_title": t("chart.context_axis"),
            "y_title": t("memory.chart_memory_axis", unit=lesson.memory_unit()),
            "weights": t("chart.weights"),
            "overhead": t("memory.chart_overhead"),
            "kv_cache": t("chart.kv_cache"),
            "gpu_memory": t("chart.gpu_memory", gpu=gpu.name),
            "runs_out": t("chart.runs_out"),
            "current": t("chart.current"),
            "tokens": t("chart.tokens"),
        },
    )
    # In the browser the chart follows the context slider at once (ui.live_chart); the rerun confirms it.
    context_values = live_chart.slider_values(low, high, step)
    patches = memory_vs_context_patches(variant, context_values)
    follow = None if patches is None else live_chart.Follow("context", context_values, context_tokens, patches)
    lesson.chart(figure, key="memory_chart", follow=follow)

with prediction:
    ui.practice.predict(
        "sequence_cache", stem="memory", model=variant, context_tokens=context_tokens, kv_dtype=kv_dtype or "bf16"
    )
lesson.takeaway(t("memory.takeaway"))

# ---------------------------------------------------------------- the formula

st.subheader(t("memory.formula_title"))
st.markdown(t("memory.formula_legend"))
terms = formula_terms(
    variant,
    context_tokens=context_tokens,
    concurrency=concurrency,
    bytes_per_value=kv_bytes_per_value,
    tp=tp,
    lang=ui.language(),
)
if split:
    st.markdown(t("memory.formula_split", gpus=ui.plural("gpus.count", tp)))
if len(terms) == 1 and terms[0].kind == "full":
    lesson.formula(SYMBOLIC, terms[0].substituted + result_latex(terms[0].kv_bytes, ui.language(), decimal=decimal))
else:
    st.latex(SYMBOLIC)
    if len(terms) > 1:
        st.markdown(t("memory.formula_by_kind"))
    for term in terms:
        st.markdown(t(f"kind.{term.kind}", layers=term.layers))
        lesson.formula(term.symbolic, term.substituted + result_latex(term.kv_bytes, ui.language(), decimal=decimal))
    if len(terms) > 1:
        st.markdown(t("memory.formula_sum", total=lesson.mem(cache)))
st.markdown(t("memory.formula_total_split", gpus=ui.plural("gpus.count", tp)) if split else t("memory.formula_total"))
lesson.formula(
    total_symbolic(total=t("memory.heatmap_total"), weights=t("chart.weights"), overhead=t("memory.chart_overhead")),
    total_substituted(
        weights_bytes=weights,
        kv_bytes=cache,
        overhead_bytes=overhead,
        total_bytes=total,
        lang=ui.language(),
        decimal=decimal,
    ),
)

# ---------------------------------------------------------------- fits? on the real engines

# The calculator's rule (weights + overhead + cache) against what each engine would give (kvcore.compare_engines).
ui.engine_table.engines_answer(
    variant, gpu, context_tokens=context_tokens, gpus=tp, kv_bytes_per_value=kv_bytes_per_value, users=concurrency
)

# ---------------------------------------------------------------- context × users

st.subheader(t("memory.heatmap_title"))
st.markdown(t("memory.heatmap_text", gpu=gpu.name))
heatmap = lesson.figure(
    memory_heatmap_figure,
    model=variant,
    gpu=gpu,
    context_tokens=context_tokens,
    concurrency=concurrency,
    kv_bytes_per_value=kv_bytes_per_value,
    weights_bytes_per_param=weights_bytes_per_param,
    overhead_bytes=overhead,
    max_users=MAX_USERS,
    tp=tp,
    separators=ui.separators(),
    unit_bytes=unit_bytes,
    unit=lesson.memory_unit(),
    labels={
        "title": model.name,
        "subtitle": (
            t("memory.heatmap_subtitle_split", gpus=tp, gpu=gpu.name)
            if split
            else t("memory.heatmap_subtitle", gpu=gpu.name)
        ),
        "x_title": t("chart.context_axis"),
        "y_title": t("memory.heatmap_users_axis"),
        "z_title": t("memory.heatmap_total_axis", unit=lesson.memory_unit()),
        "context": t("memory.heatmap_context"),
        "users": t("memory.heatmap_users"),
        "total": t("memory.heatmap_total"),
        "limit": t("chart.gpu_memory", gpu=gpu.name),
        "current": t("chart.current"),
        "tokens": t("chart.tokens"),
    },
)
lesson.chart(heatmap, key="mem_heatmap")

# ---------------------------------------------------------------- why 30 GB become 60 GB

st.subheader(t("memory.why60_title"))
thirty = ui.models()[THIRTY.model_id]
thirty_kv = kvcore.bytes_per_value(THIRTY.kv_dtype)
thirty_weights = kvcore.model_weights_bytes(thirty, bytes_per_param=kvcore.bytes_per_value(THIRTY.weights_dtype))
thirty_per_token = kvcore.kv_bytes_per_token(thirty, bytes_per_value=thirty_kv)
thirty_tokens = float(break_even_context_tokens(thirty, weights_bytes=thirty_weights, bytes_per_value=thirty_kv))
thirty_short_context = 32768  # a common serving limit (vLLM --max-model-len 32768)
thirty_users = int(
    break_even_users(
        thirty, weights_bytes=thirty_weights, context_tokens=thirty_short_context, bytes_per_value=thirty_kv
    )
)
st.markdown(
    t(
        "memory.why60_example",
        model=thirty.name,
        weights=lesson.mem(thirty_weights),
        per_token=ui.num((format_bytes_decimal if decimal else format_bytes)(thirty_per_token)),
        tokens=ui.num(format_tokens(thirty_tokens)),
        maximum=ui.num(format_tokens(thirty.max_position_embeddings)),
        total=lesson.mem(
            float(
                total_memory_bytes(
                    thirty,
                    context_tokens=thirty_tokens,
                    kv_bytes_per_value=thirty_kv,
                    weights_bytes_per_param=kvcore.bytes_per_value(THIRTY.weights_dtype),
                )
            )
        ),
        users=thirty_users,
        context=ui.num(format_tokens(thirty_short_context)),
    )
)
if break_even_one <= model.max_position_embeddings:
    st.markdown(
        t(
            "memory.why60_yours",
            model=model.name,
            weights=lesson.mem(whole_weights),
            tokens=ui.num(format_tokens(break_even_one)),
        )
    )
    if concurrency > 1:
        st.markdown(
            t(
                "memory.why60_yours_each",
                users=ui.plural("users.count", concurrency),
                each=ui.num(format_tokens(break_even_each)),
            )
        )
else:
    st.markdown(
        t(
            "memory.why60_yours_many",
            model=model.name,
            weights=lesson.mem(whole_weights),
            maximum=ui.num(format_tokens(model.max_position_embeddings)),
            users=users_at_full_context,
        )
    )


def course_tables() -> None:
    """The course's tables recomputed: seed 002's caches and its 30 GB story, seed 000's one sequence.

    They read the catalogue, never this lesson's controls: drawn once per whole run (``lesson.footer``).
    """
    # ---------------------------------------------------------------- seed 002's table, recomputed

    st.subheader(t("memory.seed_title"))
    st.markdown(t("memory.seed_text"))
    catalogue = ui.models()
    rows = []
    for row in seeds.SEED_002_CACHE_TABLE:
        real_model, seed_context = catalogue[row.model_id], row.context_tokens
        rows.append(
            {
                t("memory.seed_col_model"): row.seed_name,
                t("memory.seed_col_here"): t(
                    "memory.seed_here",
                    name=real_model.name,
                    kind=real_model.attention_type,
                    kv_heads=ui.plural("kv_heads.count", real_model.num_key_value_heads),
                    heads=real_model.num_attention_heads,
                ),
                t("memory.seed_col_context"): ui.num(format_tokens(seed_context)),
                t("memory.seed_col_says"): ui.num(f"{row.says_gb:g} GB"),
                t("memory.seed_col_mha"): lesson.mem(float(mha_cache_bytes(real_model, context_tokens=seed_context))),
                t("memory.seed_col_real"): lesson.mem(
                    float(kvcore.kv_cache_bytes(real_model, context_tokens=seed_context))
                ),
            }
        )
    lesson.table(rows)
    llama_8b, llama_70b = catalogue["llama-3.1-8b"], catalogue["llama-3.1-70b"]
    seed_8b_4k = float(mha_cache_bytes(llama_8b, context_tokens=4096))
    st.markdown(
        t(
            "memory.seed_units",
            gib=ui.num(format_gib(seed_8b_4k)),
            gb=ui.num(format_gb(seed_8b_4k)),
            saving_8b=ui.num(percent(kvcore.saving_vs_mha(llama_8b, context_tokens=4096), decimals=1)),
            saving_70b=ui.num(percent(kvcore.saving_vs_mha(llama_70b, context_tokens=4096), decimals=1)),
        )
    )
    st.caption(t("memory.seed_gpt4"))

    story_model = catalogue[STORY.model_id]
    story_gpu = ui.gpus()[STORY.gpu_id]
    story_b = kvcore.bytes_per_value(STORY.dtype)
    story_mha = kvcore.with_changes(story_model, num_key_value_heads=story_model.num_attention_heads)
    story = {"context_tokens": STORY.context_tokens, "kv_bytes_per_value": story_b, "weights_bytes_per_param": story_b}
    story_weights = kvcore.model_weights_bytes(story_model, bytes_per_param=story_b)
    story_total_mha = float(total_memory_bytes(story_mha, **story))
    story_total_real = float(total_memory_bytes(story_model, **story))
    st.markdown(
        t(
            "memory.seed_story",
            model=story_model.name,
            gpu=story_gpu.name,
            says_weights=f"{STORY.says_weights_gb:g}",
            says_cache=f"{STORY.says_cache_gb:g}",
            says_total=f"{STORY.says_total_gb:g}",
            says_gpus=STORY.says_gpus,
            weights_gb=ui.num(format_gb(story_weights)),
            weights_gib=ui.num(format_gib(story_weights)),
            mha_cache=ui.num(
                format_gib(
                    float(mha_cache_bytes(story_model, context_tokens=STORY.context_tokens, bytes_per_value=story_b))
                )
            ),
            mha_total=lesson.mem(story_total_mha),
            mha_gpus=int(gpus_needed(total_bytes=story_total_mha, memory_bytes=story_gpu.memory_bytes)),
            kv_heads=story_model.num_key_value_heads,
            heads=story_model.num_attention_heads,
            real_cache=lesson.mem(
                float(
                    kvcore.kv_cache_bytes(story_model, context_tokens=story["context_tokens"], bytes_per_value=story_b)
                )
            ),
            real_total=lesson.mem(story_total_real),
            real_gpus=int(gpus_needed(total_bytes=story_total_real, memory_bytes=story_gpu.memory_bytes)),
            memory=lesson.mem(story_gpu.memory_bytes),
        )
    )

    # ---------------------------------------------------------------- seed 000's table: one sequence at 8k, 32k, 128k

    table_model = catalogue[seeds.SEED_000_MODEL_ID]
    st.subheader(t("memory.table000_title"))
    st.markdown(
        t(
            "memory.table000_text",
            model=table_model.name,
            layers=table_model.num_hidden_layers,
            heads=table_model.num_attention_heads,
            head_dim=table_model.head_dim,
        )
    )
    table000_rows, table000_exact, table000_per_token = [], True, []
    for row in seeds.SEED_000_TABLE:
        spec = kvcore.with_changes(table_model, num_key_value_heads=row.num_key_value_heads)
        row_b = kvcore.bytes_per_value(row.kv_dtype)
        row_per_token = kvcore.kv_bytes_per_token(spec, bytes_per_value=row_b)
        row_sizes = [
            float(kvcore.sequence_kv_bytes(spec, context_tokens=context, bytes_per_value=row_b))
            for context in seeds.SEED_000_CONTEXT_TOKENS
        ]
        table000_per_token.append(row_per_token)
        table000_exact &= row_per_token == row.per_token_bytes and tuple(row_sizes) == row.cache_bytes
        configuration = t(
            "memory.table000_row",
            kind=spec.attention_type,
            kv_heads=ui.plural("kv_heads.count", row.num_key_value_heads),
            dtype=row.kv_dtype.upper(),
        )
        columns = [t("memory.table000_col_per_token")] + [
            t("memory.table000_col_context", tokens=ui.num(format_tokens(context)))
            for context in seeds.SEED_000_CONTEXT_TOKENS
        ]
        says = [ui.num(format_bytes(row.per_token_bytes))] + [ui.num(format_gib(size)) for size in row.cache_bytes]
        computed = [lesson.size(row_per_token)] + [lesson.mem(size) for size in row_sizes]
        for source, values in (
            (t("memory.table000_source_text"), says),
            (t("memory.table000_source_kvcore"), computed),
        ):
            table000_rows.append(
                {
                    t("memory.table000_col_config"): configuration,
                    t("memory.table000_col_source"): source,
                    **dict(zip(columns, values, strict=True)),
                }
            )
    lesson.table(table000_rows)
    mha_row, gqa_row, fp8_row = table000_per_token
    st.markdown(
        t(
            "memory.table000_same" if table000_exact else "memory.table000_differs",
            mha_factor=ui.num(f"{mha_row / gqa_row:g}"),
            fp8_factor=ui.num(f"{gqa_row / fp8_row:g}"),
            mha_kv=seeds.SEED_000_MHA_ROW.num_key_value_heads,
            gqa_kv=seeds.SEED_000_GQA_ROW.num_key_value_heads,
        )
    )
    if lesson.memory_unit() == "GB":
        st.caption(
            t("memory.table000_units_gb", gib=ui.num(format_gib(row_sizes[-1])), gb=ui.num(format_gb(row_sizes[-1])))
        )


lesson.footer(course_tables)
glossary.terms_used("memory")
