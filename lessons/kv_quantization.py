"""Quantizing the KV cache: FP16/BF16, FP8, INT8 and INT4, the bytes and capacity gained, and why to measure.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.

The memory left for the cache follows seed 000's rule with stated choices: the
weights in the chosen format, u = 0.90 (vLLM's default) and 1 GiB of overhead.
The error demonstration quantizes synthetic tensors (kvcore.quantization).
"""

import math

import numpy as np
import streamlit as st

import kvcore
import ui
import ui.practice
from charts.formatting import percent
from charts.kv_quantization import (
    cache_by_format_figure,
    capacity_figure,
    quantization_error_figure,
    round_trip_errors,
    users_that_fit,
)
from course import seeds
from kvcore.capacity import gpus_needed, sizing_steps
from kvcore.quantization import (
    KV_FORMATS,
    SCALE_BYTES,
    stored_bytes_per_value,
    synthetic_keys,
    synthetic_values,
)
from kvcore.units import KB, GiB, KiB, format_bytes, format_bytes_decimal, format_seconds, format_tokens
from ui import glossary, lesson, t
from ui.formula import formula_terms, latex_number, result_latex

lesson.rerun_alone(__file__)

MAX_USERS = 256
GROUP_SIZES = (32, 64, 128)
#: Seed 004 counts "a million tokens" of context: 1,000,000 (seeds.SEED_CONTEXT_TOKENS), as /agent_1m does. The
#: slider reaches 2**20 so that a million is inside its range, and steps by 64 tokens, the largest step that
#: holds both 1,024-token contexts and the million (gcd(1,024, 10**6) = 64): the preset's value is one it shows.
MAX_CONTEXT = 1 << 20
CONTEXT_STEP = math.gcd(1024, seeds.SEED_CONTEXT_TOKENS)
#: The shared default assumptions (kvcore.DEFAULT_ASSUMPTIONS), stated beside the room on the page.
UTILIZATION = kvcore.DEFAULT_UTILIZATION
OVERHEAD_BYTES = kvcore.DEFAULT_OVERHEAD_BYTES
#: Synthetic K and V: 512 tokens of one 128-wide head, 4 outlier key channels, fixed seed.
DEMO = {"tokens": 512, "channels": 128, "outlier_channels": 4, "seed": 0}
#: Weight formats offered; the model's own (models.csv's weights_dtype) is added and is the default.
WEIGHTS_DTYPES = ("bf16", "fp8", "int8", "int4")
NAMES = {"bf16": "BF16 / FP16", "fp8": "FP8", "int8": "INT8", "int4": "INT4"}


@lesson.cache_data(show_spinner=False, max_entries=128)
def error_demo(
    outlier_scale: float, group_size: int, axis: str
) -> tuple[np.ndarray, np.ndarray, dict[str, float], dict[str, float], float]:
    """The demo's synthetic K and V, their errors per format read back (K, V) and K's per-channel INT4 error.

    Computed once per setting (about 12 ms of round trips), not on every rerun of the page.
    """
    keys = synthetic_keys(
        tokens=DEMO["tokens"],
        channels=DEMO["channels"],
        outlier_channels=DEMO["outlier_channels"],
        outlier_scale=outlier_scale,
        seed=DEMO["seed"],
    )
    values = synthetic_values(tokens=DEMO["tokens"], channels=DEMO["channels"], seed=DEMO["seed"] + 1)
    errors = [
        dict(zip(KV_FORMATS, round_trip_errors(tensor, KV_FORMATS, group_size=group_size, axis=axis), strict=True))
        for tensor in (keys, values)
    ]
    per_channel_int4 = float(round_trip_errors(keys, ["int4"], group_size=group_size, axis="channel")[0])
    return keys, values, errors[0], errors[1], per_channel_int4


model = ui.current_model()
gpu = ui.current_gpu()

lesson.header(t("kv_quantization.title"), t("kv_quantization.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("kv_quantization", key="kq_presets")
# "No room for the cache" is said here, at the top, once the numbers are known.
fit_notice = st.container()

controls, results = st.columns([1, 2], gap="large")

with controls:
    low, _, step, default_context = ui.context_range(model)
    context_tokens = lesson.slider(
        t("kv_quantization.context"),
        key="kq_context",
        min_value=low,
        max_value=max(MAX_CONTEXT, model.max_position_embeddings),
        value=default_context,
        step=math.gcd(step, CONTEXT_STEP),
        help=t("kv_quantization.context_help", maximum=ui.num(format_tokens(model.max_position_embeddings))),
    )
    users = lesson.slider(t("kv_quantization.users"), key="kq_users", min_value=1, max_value=MAX_USERS, value=1)
    group_size = lesson.select_slider(
        t("kv_quantization.group"), key="kq_group", options=GROUP_SIZES, value=128, help=t("kv_quantization.group_help")
    )
    weights_dtype = lesson.choice(
        t("kv_quantization.weights_dtype"),
        key="kq_weights",
        options=WEIGHTS_DTYPES if model.weights_dtype in WEIGHTS_DTYPES else (*WEIGHTS_DTYPES, model.weights_dtype),
        default=model.weights_dtype,
        help=t("kv_quantization.weights_help"),
    )
    if context_tokens > model.max_position_embeddings:
        st.caption(
            t(
                "kv_quantization.beyond_model",
                model=model.name,
                maximum=ui.num(format_tokens(model.max_position_embeddings)),
            )
        )

decimal = lesson.memory_unit() == "GB"
try:
    weights = kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value(weights_dtype))
    steps = sizing_steps(
        model,
        memory_bytes=gpu.memory_bytes,
        utilization=UTILIZATION,
        weights_bytes=weights,
        overhead_bytes=OVERHEAD_BYTES,
    )
    room = steps.kv_pool_bytes
    stored = {fmt: stored_bytes_per_value(fmt, group_size=group_size) for fmt in KV_FORMATS}
    per_token = {fmt: kvcore.kv_bytes_per_token(model, bytes_per_value=b) for fmt, b in stored.items()}
    cache = {
        fmt: float(kvcore.kv_cache_bytes(model, context_tokens=context_tokens, concurrency=users, bytes_per_value=b))
        for fmt, b in stored.items()
    }
    longest = {
        fmt: kvcore.max_context_tokens(model, kv_pool_bytes=room, concurrency=users, bytes_per_value=b)
        for fmt, b in stored.items()
    }
    fit = dict(
        zip(
            KV_FORMATS,
            users_that_fit(
                model, context_tokens=context_tokens, kv_room_bytes=room, formats=KV_FORMATS, group_size=group_size
            ),
            strict=True,
        )
    )
    kv_read_s = {
        fmt: float(kvcore.stream_time_s(size, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s))
        for fmt, size in cache.items()
    }
except ValueError as error:
    lesson.stop_with(error)

unit = lesson.memory_unit()
with results:
    row = st.columns(3)
    row[0].metric(
        t("kv_quantization.metric_bf16"), lesson.mem(cache["bf16"]), help=t("kv_quantization.metric_cache_help")
    )
    row[1].metric(
        t("kv_quantization.metric_fp8"),
        lesson.mem(cache["fp8"]),
        delta=f"-{lesson.mem(cache['bf16'] - cache['fp8'])}",
        delta_color="inverse",
        help=t("kv_quantization.metric_cache_help"),
    )
    row[2].metric(
        t("kv_quantization.metric_int4"),
        lesson.mem(cache["int4"]),
        delta=f"-{lesson.mem(cache['bf16'] - cache['int4'])}",
        delta_color="inverse",
        help=t("kv_quantization.metric_int4_help", group=group_size),
    )
    row = st.columns(3)
    row[0].metric(t("kv_quantization.metric_fit_bf16"), int(fit["bf16"]), help=t("kv_quantization.metric_fit_help"))
    row[1].metric(t("kv_quantization.metric_fit_fp8"), int(fit["fp8"]), help=t("kv_quantization.metric_fit_help"))
    row[2].metric(t("kv_quantization.metric_fit_int4"), int(fit["int4"]), help=t("kv_quantization.metric_fit_help"))

    figure = lesson.figure(
        cache_by_format_figure,
        model=model,
        context_tokens=context_tokens,
        concurrency=users,
        kv_room_bytes=room,
        formats=KV_FORMATS,
        group_size=group_size,
        names=NAMES,
        separators=ui.separators(),
        unit_bytes=lesson.memory_unit_bytes(),
        unit=unit,
        labels={
            "title": t("kv_quantization.cache_chart_title", model=model.name),
            "subtitle": t(
                "kv_quantization.cache_chart_subtitle",
                context=ui.num(format_tokens(context_tokens)),
                users=ui.plural("users.count", users),
            ),
            "y_title": t("kv_quantization.cache_axis", unit=unit),
            "nominal": t("kv_quantization.bar_nominal"),
            "with_scales": t("kv_quantization.bar_with_scales"),
            "room": t("kv_quantization.room", gpu=gpu.name),
            "formats": t("kv_quantization.formats_axis"),
        },
    )
    lesson.chart(figure, key="kq_cache_chart")

if room <= 0:
    fit_notice.warning(t("kv_quantization.no_room", gpu=gpu.name, weights=lesson.mem(weights)), icon=":material/block:")
else:
    st.markdown(
        t(
            "kv_quantization.room_text",
            gpu=gpu.name,
            room=lesson.mem(room),
            u=ui.num(f"{UTILIZATION:.2f}"),
            weights=lesson.mem(weights),
            dtype=weights_dtype,
            overhead=lesson.mem(OVERHEAD_BYTES),
        )
    )

with prediction:
    ui.practice.predict("bytes_per_token", stem="kv_quantization", model=model, kv_dtype="fp8")
lesson.takeaway(t("kv_quantization.takeaway"))

# ---------------------------------------------------------------- every format side by side

st.subheader(t("kv_quantization.table_title"))


def shown_context(tokens: int) -> str:
    """A longest context: the count, or 'no limit' when no layer grows with the context."""
    return t("kv_quantization.no_limit") if tokens >= 1 << 40 else ui.num(format_tokens(tokens))


rows = [
    {
        t("kv_quantization.col_format"): NAMES[fmt],
        t("kv_quantization.col_nominal"): ui.num(f"{kvcore.bytes_per_value(fmt):g} B"),
        t("kv_quantization.col_stored"): ui.num(f"{stored[fmt]:g} B"),
        t("kv_quantization.col_per_token"): lesson.size(per_token[fmt]),
        t("kv_quantization.col_cache"): lesson.mem(cache[fmt]),
        t("kv_quantization.col_fit"): int(fit[fmt]),
        t("kv_quantization.col_longest"): shown_context(longest[fmt]),
        t("kv_quantization.col_read"): ui.num(format_seconds(kv_read_s[fmt])),
    }
    for fmt in KV_FORMATS
]
lesson.table(rows)
st.caption(
    t(
        "kv_quantization.table_caption",
        context=ui.num(format_tokens(context_tokens)),
        users=ui.plural("users.count", users),
        gpu=gpu.name,
    )
)

st.markdown(t("kv_quantization.formula_scales"))
lang = ui.language()
lesson.formula(
    r"b = \frac{\text{bits}}{8} + \frac{b_{\text{" + t("formula.scale") + r"}}}{G}",
    rf"b_{{INT4}} = \frac{{4}}{{8}} + \frac{{{latex_number(SCALE_BYTES, lang)}}}{{{group_size}}}"
    rf" = \mathbf{{{latex_number(stored['int4'], lang)}}}\ \text{{B}}",
)
st.markdown(t("kv_quantization.formula_cache"))
for term in formula_terms(
    model, context_tokens=context_tokens, concurrency=users, bytes_per_value=stored["fp8"], lang=lang
):
    lesson.formula(term.symbolic, term.substituted + result_latex(term.kv_bytes, lang, decimal=decimal))

# ---------------------------------------------------------------- capacity gained

st.subheader(t("kv_quantization.capacity_title"))
st.markdown(t("kv_quantization.capacity_text", context=ui.num(format_tokens(context_tokens))))
capacity = lesson.figure(
    capacity_figure,
    model=model,
    context_tokens=context_tokens,
    kv_room_bytes=room,
    formats=KV_FORMATS,
    group_size=group_size,
    names=NAMES,
    separators=ui.separators(),
    labels={
        "title": t("kv_quantization.capacity_chart_title", gpu=gpu.name),
        "subtitle": t(
            "kv_quantization.capacity_chart_subtitle", model=model.name, context=ui.num(format_tokens(context_tokens))
        ),
        "y_title": t("kv_quantization.capacity_axis"),
        "users": t("kv_quantization.hover_users"),
        "formats": t("kv_quantization.formats_axis"),
    },
)
lesson.chart(capacity, key="kq_capacity_chart")

# ---------------------------------------------------------------- why it must be measured

st.subheader(t("kv_quantization.error_title"))
st.markdown(t("kv_quantization.error_intro"))
with lesson.secondary():
    columns = st.columns(2)
    with columns[0]:
        outlier_scale = lesson.slider(
            t("kv_quantization.outlier"),
            key="kq_outlier",
            min_value=1.0,
            max_value=20.0,
            value=10.0,
            step=0.5,
            help=t("kv_quantization.outlier_help"),
        )
    with columns[1]:
        per_channel = lesson.toggle(
            t("kv_quantization.axis"), key="kq_per_channel", value=False, help=t("kv_quantization.axis_help")
        )
        axis = "channel" if per_channel else "token"
keys, values, key_errors, value_errors, per_channel_int4 = error_demo(outlier_scale, group_size, axis)
errors = lesson.figure(
    quantization_error_figure,
    keys=keys,
    values=values,
    formats=KV_FORMATS,
    group_size=group_size,
    axis=axis,
    names=NAMES,
    separators=ui.separators(),
    labels={
        "title": t("kv_quantization.error_chart_title"),
        "subtitle": t(
            "kv_quantization.error_chart_subtitle",
            tokens=DEMO["tokens"],
            channels=DEMO["channels"],
            outliers=DEMO["outlier_channels"],
            scale=ui.num(f"{outlier_scale:g}"),
            group=group_size,
        ),
        "y_title": t("kv_quantization.error_axis"),
        "keys": t("kv_quantization.keys"),
        "values": t("kv_quantization.values"),
        "formats": t("kv_quantization.formats_axis"),
    },
)
lesson.chart(errors, key="kq_error_chart")


st.markdown(
    t(
        "kv_quantization.error_text",
        fp8_k=ui.num(percent(key_errors["fp8"], decimals=2)),
        fp8_v=ui.num(percent(value_errors["fp8"], decimals=2)),
        int8_k=ui.num(percent(key_errors["int8"], decimals=2)),
        int8_v=ui.num(percent(value_errors["int8"], decimals=2)),
        int4_k=ui.num(percent(key_errors["int4"], decimals=2)),
        int4_v=ui.num(percent(value_errors["int4"], decimals=2)),
        int4_k_channel=ui.num(percent(per_channel_int4, decimals=2)),
    )
)
st.warning(t("kv_quantization.measure"), icon=":material/science:")

# ---------------------------------------------------------------- the seeds' figures, recomputed

st.subheader(t("kv_quantization.seed_title"))
catalogue = ui.models()
row_model = catalogue[seeds.SEED_000_MODEL_ID]
row_b = kvcore.bytes_per_value(seeds.SEED_000_FP8_ROW.kv_dtype)
seed_rows = [
    {
        t("kv_quantization.seed_col_what"): t("kv_quantization.seed_per_token"),
        t("kv_quantization.seed_col_says"): f"{seeds.SEED_000_FP8_ROW.per_token_bytes / KiB:g} KiB",
        t("kv_quantization.seed_col_here"): ui.num(
            format_bytes(kvcore.kv_bytes_per_token(row_model, bytes_per_value=row_b))
        ),
    }
]
for context, says in zip(seeds.SEED_000_CONTEXT_TOKENS, seeds.SEED_000_FP8_ROW.cache_bytes, strict=True):
    seed_rows.append(
        {
            t("kv_quantization.seed_col_what"): t("kv_quantization.seed_at", context=ui.num(format_tokens(context))),
            t("kv_quantization.seed_col_says"): ui.num(f"{says / GiB:g} GiB"),
            t("kv_quantization.seed_col_here"): ui.num(
                format_bytes(float(kvcore.kv_cache_bytes(row_model, context_tokens=context, bytes_per_value=row_b)))
            ),
        }
    )
st.markdown(t("kv_quantization.seed000_text", model=row_model.name))
lesson.table(seed_rows)

big = catalogue[seeds.SEED_MODEL_ID]
h100 = ui.gpus()[seeds.SEED_GPU_ID]
big_weights = kvcore.model_weights_bytes(big, bytes_per_param=kvcore.bytes_per_value("fp16"))
big_formats = ("fp16", "fp8", "int4")
big_per_token = {
    fmt: kvcore.kv_bytes_per_token(big, bytes_per_value=stored_bytes_per_value(fmt)) for fmt in big_formats
}
big_cache = {
    fmt: float(
        kvcore.kv_cache_bytes(
            big, context_tokens=seeds.SEED_CONTEXT_TOKENS, bytes_per_value=stored_bytes_per_value(fmt)
        )
    )
    for fmt in big_formats
}
big_gpus = {
    fmt: int(gpus_needed(total_bytes=big_weights + size, memory_bytes=h100.memory_bytes))
    for fmt, size in big_cache.items()
}
big_read = {
    fmt: float(kvcore.stream_time_s(size, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s))
    for fmt, size in big_cache.items()
}
st.markdown(
    t(
        "kv_quantization.seed004_text",
        model=big.name,
        says_fp16=f"{seeds.SEED_004.kv_bytes_per_token / KB:g}",
        says_fp8=f"{seeds.SEED_004.fp8_bytes_per_token / KB:g}",
        fp16_bytes=ui.num(format_tokens(big_per_token["fp16"])),
        fp16_kib=ui.num(format_bytes(big_per_token["fp16"])),
        fp16_kb=ui.num(format_bytes_decimal(big_per_token["fp16"])),
        fp8_bytes=ui.num(format_tokens(big_per_token["fp8"])),
        int4_bytes=ui.num(format_tokens(big_per_token["int4"])),
        million=ui.num(format_tokens(seeds.SEED_CONTEXT_TOKENS)),
        fp16_cache=ui.num(format_bytes_decimal(big_cache["fp16"])),
        fp8_cache=ui.num(format_bytes_decimal(big_cache["fp8"])),
        int4_cache=ui.num(format_bytes_decimal(big_cache["int4"])),
        weights=ui.num(format_bytes_decimal(big_weights)),
        gpu=h100.name,
        fp16_gpus=big_gpus["fp16"],
        fp8_gpus=big_gpus["fp8"],
        int4_gpus=big_gpus["int4"],
        fp16_read=ui.num(format_seconds(big_read["fp16"])),
        fp8_read=ui.num(format_seconds(big_read["fp8"])),
        int4_read=ui.num(format_seconds(big_read["int4"])),
        weights_read=ui.num(
            format_seconds(float(kvcore.stream_time_s(big_weights, bandwidth_bytes_per_s=h100.bandwidth_bytes_per_s)))
        ),
        ratio=ui.num(f"{big_per_token['fp16'] / big_per_token['fp8']:g}"),
    )
)

glossary.terms_used("kv_quantization")
