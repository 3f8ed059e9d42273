"""What FlashAttention does and does not do: no n × n matrix in HBM, less traffic, the same KV cache.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call; the
figures the data files do not hold (SRAM bandwidth, reported speedups) are quoted
in the texts with their source.
"""

import math

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.flash_attention import hbm_traffic_figure, kv_unchanged_figure, score_memory_figure
from course import seeds
from kvcore.attention import (
    attention_matmul_flops,
    flash_attention_hbm_bytes,
    flash_attention_tile_bytes,
    hbm_traffic_saving,
    prefill_attention_memory,
    score_row_bytes,
    standard_attention_hbm_bytes,
)
from kvcore.units import (
    format_bandwidth,
    format_flop,
    format_gb,
    format_gib,
    format_quantity,
    format_seconds,
    format_tokens,
)
from ui import glossary, lesson, t
from ui.formula import latex_number, result_latex

lesson.rerun_alone(__file__)

#: Long enough for the matrix to outgrow any GPU (128k tokens), short enough to draw.
MAX_TOKENS = 131072
DTYPES = ("fp32", "bf16", "fp8")
HEAD_DIMS = (32, 64, 80, 96, 128, 160, 192, 256)
MAX_BATCH = 64
#: FlashAttention-2's query block (B_r) and key block (B_c); kvcore's defaults, named here for the text.
BLOCK_ROWS, BLOCK_COLS = 128, 64
#: Not a widget: the model the heads and head-dim values belong to (reset when it changes).
VALUES_MODEL_KEY = "fa_values_model"
#: Seed 002's table is about an H100; the FlashAttention paper measured an A100 40GB (course.seeds).
SEED_GPU, PAPER_GPU = seeds.SEED_002_SRAM_GPU_ID, seeds.FLASH_ATTENTION_PAPER_GPU_ID

model = ui.current_model()
gpu = ui.current_gpu()
lang = ui.language()

if st.session_state.get(VALUES_MODEL_KEY, model.id) != model.id:
    st.session_state["fa_heads"] = model.num_attention_heads
    st.session_state["fa_head_dim"] = model.head_dim
st.session_state[VALUES_MODEL_KEY] = model.id

lesson.header(t("flash_attention.title"), t("flash_attention.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("flash_attention", key="fa_presets")

controls, results = st.columns([1, 2], gap="large")
with controls:
    low, high, step, default_tokens = ui.context_range(model)
    high = min(high - high % step, MAX_TOKENS)
    tokens = lesson.slider(
        t("flash_attention.tokens"),
        key="fa_tokens",
        min_value=low,
        max_value=high,
        value=min(default_tokens, high),
        step=step,
        help=t("flash_attention.tokens_help", maximum=ui.num(format_tokens(high))),
    )
    with lesson.secondary():
        heads = lesson.slider(
            t("flash_attention.heads"),
            key="fa_heads",
            min_value=1,
            max_value=max(128, model.num_attention_heads),
            value=model.num_attention_heads,
            help=t("flash_attention.heads_help", own=model.num_attention_heads),
        )
        head_dim = lesson.select_slider(
            t("flash_attention.head_dim"),
            key="fa_head_dim",
            options=sorted({*HEAD_DIMS, model.head_dim}),
            value=model.head_dim,
            help=t("flash_attention.head_dim_help", own=model.head_dim),
        )
        batch = lesson.slider(
            t("flash_attention.batch"),
            key="fa_batch",
            min_value=1,
            max_value=MAX_BATCH,
            value=1,
            help=t("flash_attention.batch_help"),
        )
        dtype = lesson.choice(
            t("flash_attention.dtype"),
            key="fa_dtype",
            options=DTYPES,
            default="bf16",
            help=t("flash_attention.dtype_help"),
        )

decimal = lesson.memory_unit() == "GB"
unit, unit_bytes = lesson.memory_unit(), lesson.memory_unit_bytes()


try:
    b = kvcore.bytes_per_value(dtype)
    knobs = {"tokens": tokens, "heads": heads, "batch": batch, "bytes_per_value": b}
    standard = prefill_attention_memory(model, flash=False, **knobs)
    flash = prefill_attention_memory(model, flash=True, **knobs)
    traffic_standard = float(standard_attention_hbm_bytes(tokens, head_dim=head_dim, bytes_per_value=b)) * heads * batch
    traffic_flash = float(flash_attention_hbm_bytes(tokens, head_dim=head_dim, bytes_per_value=b)) * heads * batch
    saving = float(hbm_traffic_saving(tokens, head_dim=head_dim, bytes_per_value=b))
    flops = float(attention_matmul_flops(tokens, head_dim=head_dim, heads=heads, batch=batch))
    tile = flash_attention_tile_bytes(
        head_dim=head_dim, bytes_per_value=b, block_rows=BLOCK_ROWS, block_cols=BLOCK_COLS
    )
    row_bytes = float(score_row_bytes(tokens, heads=heads, bytes_per_value=b))
    scores = float(standard.temporary_bytes)
    stats = float(flash.temporary_bytes)
    kv_standard, kv_flash = float(standard.kv_cache_bytes), float(flash.kv_cache_bytes)
except ValueError as error:
    lesson.stop_with(error)

# One formatter per figure through the view (lesson.size): the metric, the warning and the texts say the same
# "1 TiB", never "1 TiB" beside "1,024 GiB".
with results:
    row = st.columns(2)
    row[0].metric(
        t("flash_attention.metric_scores"),
        lesson.size(scores),
        help=t("flash_attention.metric_scores_help", memory=lesson.size(gpu.memory_bytes), gpu=gpu.name),
    )
    row[1].metric(t("flash_attention.metric_stats"), lesson.size(stats), help=t("flash_attention.metric_stats_help"))
    row = st.columns(2)
    row[0].metric(
        t("flash_attention.metric_traffic"),
        ui.num(f"{format_quantity(saving)}×"),
        help=t(
            "flash_attention.metric_traffic_help",
            standard=lesson.size(traffic_standard),
            flash=lesson.size(traffic_flash),
        ),
    )
    row[1].metric(
        t("flash_attention.metric_kv"),
        lesson.size(kv_flash),
        help=t("flash_attention.metric_kv_help", without=lesson.size(kv_standard), with_flash=lesson.size(kv_flash)),
    )
    if scores > gpu.memory_bytes:
        st.warning(
            t(
                "flash_attention.too_big",
                scores=lesson.size(scores),
                gpu=gpu.name,
                memory=lesson.size(gpu.memory_bytes),
            )
        )
    memory_labels = {
        "title": t("flash_attention.memory_title"),
        "subtitle": t(
            "flash_attention.memory_subtitle",
            model=model.name,
            heads=heads,
            batch=batch,
            dtype=dtype.upper(),
        ),
        "x_title": t("flash_attention.axis_tokens"),
        "y_title": t("flash_attention.axis_memory", unit=unit),
        "scores": t("flash_attention.scores"),
        "stats": t("flash_attention.stats"),
        "kv_cache": t("flash_attention.kv_cache"),
        "gpu_memory": t("chart.gpu_memory", gpu=gpu.name),
        "sram": t("flash_attention.sram"),
        "current": t("flash_attention.current"),
        "tokens": t("chart.tokens"),
    }
    lesson.chart(
        lesson.figure(
            score_memory_figure,
            model=model,
            gpu=gpu,
            tokens=tokens,
            max_tokens=high,
            heads=heads,
            batch=batch,
            bytes_per_value=b,
            labels=memory_labels,
            separators=ui.separators(),
            unit_bytes=unit_bytes,
            unit=unit,
        ),
        key="fa_memory_chart",
    )

st.markdown(
    t(
        "flash_attention.memory_text",
        tokens=ui.num(format_tokens(tokens)),
        scores=lesson.size(scores),
        stats=lesson.size(stats),
        kv=lesson.size(kv_flash),
        gpu=gpu.name,
        memory=lesson.size(gpu.memory_bytes),
    )
)
with prediction:
    ui.practice.predict(
        "score_matrix_bytes", stem="flash_attention", model=model, tokens=tokens, heads=heads, batch=batch, dtype=dtype
    )
lesson.takeaway(t("flash_attention.takeaway"))

# ---------------------------------------------------------------- the formula

st.subheader(t("flash_attention.formula_title"))
st.markdown(t("flash_attention.formula_text"))
lesson.formula(
    r"S_{bytes} = n^2 \cdot h \cdot B \cdot b",
    rf"{latex_number(tokens, lang)}^2 \cdot {latex_number(heads, lang)} \cdot {latex_number(batch, lang)}"
    rf" \cdot {latex_number(b, lang)} " + result_latex(scores, lang, decimal=decimal),
)
st.markdown(t("flash_attention.stats_formula_text"))
lesson.formula(
    r"L_{bytes} = 4 \cdot n \cdot h \cdot B",
    rf"4 \cdot {latex_number(tokens, lang)} \cdot {latex_number(heads, lang)} \cdot {latex_number(batch, lang)} "
    + result_latex(stats, lang, decimal=decimal),
)
st.markdown(t("flash_attention.flops_text", flops=ui.num(format_flop(flops))))
lesson.formula(
    r"\text{FLOP}_{\text{" + t("formula.standard") + r"}} = \text{FLOP}_{Flash} = 4 \cdot n^2 \cdot d \cdot h \cdot B",
    rf"4 \cdot {latex_number(tokens, lang)}^2 \cdot {latex_number(head_dim, lang)} \cdot {latex_number(heads, lang)}"
    rf" \cdot {latex_number(batch, lang)} = \mathbf{{{latex_number(flops, lang)}}}",
)

# ---------------------------------------------------------------- traffic

st.subheader(t("flash_attention.traffic_title"))
traffic_labels = {
    "title": t("flash_attention.traffic_chart_title"),
    "subtitle": t(
        "flash_attention.traffic_subtitle", gpu=gpu.name, bandwidth=ui.num(format_bandwidth(gpu.bandwidth_bytes_per_s))
    ),
    "x_title": t("flash_attention.axis_tokens"),
    "y_title": t("flash_attention.axis_traffic", unit=unit),
    "standard": t("flash_attention.standard"),
    "flash": t("flash_attention.flash"),
    "tokens": t("chart.tokens"),
    "time": t("flash_attention.time"),
}
lesson.chart(
    lesson.figure(
        hbm_traffic_figure,
        tokens=tokens,
        max_tokens=high,
        head_dim=head_dim,
        heads=heads,
        batch=batch,
        bytes_per_value=b,
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
        labels=traffic_labels,
        separators=ui.separators(),
        unit_bytes=unit_bytes,
        unit=unit,
    ),
    key="fa_traffic_chart",
)
st.markdown(
    t(
        "flash_attention.traffic_text",
        standard=lesson.size(traffic_standard),
        flash=lesson.size(traffic_flash),
        saving=ui.num(format_quantity(saving)),
        time_standard=ui.num(
            format_seconds(
                float(kvcore.stream_time_s(traffic_standard, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s))
            )
        ),
        time_flash=ui.num(
            format_seconds(float(kvcore.stream_time_s(traffic_flash, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s)))
        ),
        gpu=gpu.name,
        rows=BLOCK_ROWS,
        head_dim=head_dim,
    )
)
st.markdown(t("flash_attention.speedup_text"))

# ---------------------------------------------------------------- the KV cache, unchanged

st.subheader(t("flash_attention.kv_title"))
bars_labels = {
    "title": t("flash_attention.bars_title", tokens=ui.num(format_tokens(tokens))),
    "subtitle": t("flash_attention.bars_subtitle", model=model.name),
    "y_title": t("flash_attention.axis_memory", unit=unit),
    "standard": t("flash_attention.standard"),
    "flash": t("flash_attention.flash"),
    "kv_cache": t("flash_attention.kv_cache"),
    "temporary": t("flash_attention.temporary"),
}
lesson.chart(
    lesson.figure(
        kv_unchanged_figure,
        model=model,
        tokens=tokens,
        heads=heads,
        batch=batch,
        bytes_per_value=b,
        labels=bars_labels,
        separators=ui.separators(),
        unit_bytes=unit_bytes,
        unit=unit,
    ),
    key="fa_kv_chart",
)
st.markdown(
    t(
        "flash_attention.kv_text",
        without=lesson.size(kv_standard),
        with_flash=lesson.size(kv_flash),
        tokens=ui.num(format_tokens(tokens)),
        row=lesson.size(row_bytes),
    )
)

# ---------------------------------------------------------------- SRAM vs HBM, and the seed's table

st.subheader(t("flash_attention.chip_title"))
catalogue = ui.gpus()
shown = dict.fromkeys([gpu.id, SEED_GPU, PAPER_GPU])
rows = []
for gpu_id in shown:
    spec = catalogue[gpu_id]
    rows.append(
        {
            t("flash_attention.col_gpu"): spec.name,
            t("flash_attention.col_sram"): t(
                "flash_attention.sram_cell",
                sms=format_quantity(spec.sm_count),
                per_sm=lesson.size(spec.sram_per_sm_bytes),
                total=lesson.size(spec.sram_bytes),
            )
            if math.isfinite(spec.sram_bytes)
            else t("flash_attention.unknown"),
            t("flash_attention.col_l2"): lesson.size(spec.l2_cache_bytes)
            if math.isfinite(spec.l2_cache_bytes)
            else t("flash_attention.unknown"),
            t("flash_attention.col_hbm"): lesson.mem(spec.memory_bytes),
            t("flash_attention.col_bandwidth"): ui.num(format_bandwidth(spec.bandwidth_bytes_per_s)),
        }
    )
lesson.table(rows)
h100, a100 = catalogue[SEED_GPU], catalogue[PAPER_GPU]
st.markdown(
    t(
        "flash_attention.seed_text",
        l2=lesson.size(h100.l2_cache_bytes),
        sram=lesson.size(h100.sram_bytes),
        sms=format_quantity(h100.sm_count),
        per_sm=lesson.size(h100.sram_per_sm_bytes),
        a100_sram=lesson.size(a100.sram_bytes),
        a100_memory=lesson.mem(a100.memory_bytes),
        a100_bandwidth=ui.num(format_bandwidth(a100.bandwidth_bytes_per_s)),
        h100_memory=ui.num(format_gib(h100.memory_bytes)),
        h100_memory_gb=ui.num(format_gb(h100.memory_bytes)),
        h100_bandwidth=ui.num(format_bandwidth(h100.bandwidth_bytes_per_s)),
    )
)
if math.isfinite(gpu.sram_per_sm_bytes):
    st.markdown(
        t(
            "flash_attention.tile_text",
            rows=BLOCK_ROWS,
            cols=BLOCK_COLS,
            head_dim=head_dim,
            tile=lesson.size(tile),
            gpu=gpu.name,
            per_sm=lesson.size(gpu.sram_per_sm_bytes),
        )
    )
else:
    st.markdown(
        t("flash_attention.tile_unknown", rows=BLOCK_ROWS, cols=BLOCK_COLS, tile=lesson.size(tile), gpu=gpu.name)
    )

glossary.terms_used("flash_attention")
