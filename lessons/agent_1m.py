"""The 1M-token agent: seed 004's ledger computed, set beside the seed's figures; eviction or quantization?

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.
"""

import numpy as np
import streamlit as st

import kvcore
import ui
import ui.practice
from charts.agent_1m import attention_mass_figure, gpus_needed_figure, token_time_figure, token_time_patches
from charts.formatting import percent
from course import seeds
from kvcore import agent, tensor_parallel_sizes
from kvcore.units import (
    format_bandwidth,
    format_bytes,
    format_bytes_decimal,
    format_flops,
    format_gib,
    format_seconds,
    format_seconds_in_s,
    format_tokens,
    format_tokens_per_s,
)
from ui import glossary, lesson, live_chart, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

KV_DTYPES = ("bf16", "fp8", "int4")
MAX_CONTEXT_TOKENS = 2_000_000
CONTEXT_STEP_TOKENS = 1_000
MAX_SHARDS = 16
#: The demo's sample of captured attention: 8 layers over 4,096 KV blocks (65,536 tokens in blocks of 16).
SAMPLE_LAYERS = 8
SAMPLE_BLOCKS = 4096
TOP_FRACTION = 0.01
VERDICTS = {
    "concentrated": "agent_1m.verdict_concentrated",
    "mixed": "agent_1m.verdict_mixed",
    "flat": "agent_1m.verdict_flat",
}
OPTION_NAMES = {"evict": "agent_1m.option_evict", "fp8": "agent_1m.option_fp8", "int4": "agent_1m.option_int4"}
OPTION_COSTS = {"fp8": "agent_1m.option_fp8_cost", "int4": "agent_1m.option_int4_cost"}


@lesson.cache_data(show_spinner=False, max_entries=4)
def seed_errata(model_id: str, gpu_id: str) -> tuple[agent.Ledger, float, float, float, float]:
    """The errata's figures, which depend on the seed's scenario alone, computed once per process.

    The exact ledger, the cache of 2^20 tokens, the seed's cache streamed once, the decode
    step's arithmetic intensity and the fit in the seed's decimal GB. Keyed by the catalogue
    ids: hashing a whole ModelSpec for st.cache_data costs more (about 2 ms) than these sums.
    """
    seed_model, seed_gpu = ui.models()[model_id], ui.gpus()[gpu_id]
    exact = agent.ledger(
        seed_model,
        seed_gpu,
        context_tokens=seeds.SEED_CONTEXT_TOKENS,
        shards=seeds.SEED_SHARDS,
        answer_tokens=seeds.SEED_ANSWER_TOKENS,
    )
    binary_million = float(kvcore.kv_cache_bytes(seed_model, context_tokens=2**20))
    seed_time = float(
        kvcore.stream_time_s(seeds.SEED_004.cache_bytes, bandwidth_bytes_per_s=seed_gpu.bandwidth_bytes_per_s)
    )
    intensity = float(
        kvcore.arithmetic_intensity(
            kvcore.decode_flops_per_step(seed_model, context_tokens=seeds.SEED_CONTEXT_TOKENS),
            kvcore.decode_bytes_per_step(seed_model, context_tokens=seeds.SEED_CONTEXT_TOKENS).total,
        )
    )
    decimal_fit = float(
        kvcore.gpus_needed(
            total_bytes=exact.weights_bytes + exact.cache_bytes, memory_bytes=seeds.SEED_004.gpu_memory_bytes
        )
    )
    return exact, binary_million, seed_time, intensity, decimal_fit


@lesson.cache_data(show_spinner=False, max_entries=32)
def attention_sample(concentration: float) -> tuple[np.ndarray, np.ndarray]:
    """The demo's synthetic attention sample and its share of mass on the top 1 % of blocks, per concentration."""
    attention = agent.synthetic_attention(blocks=SAMPLE_BLOCKS, layers=SAMPLE_LAYERS, concentration=concentration)
    return attention, agent.top_mass_share(attention, top_fraction=TOP_FRACTION)


model = ui.current_model()
gpu = ui.current_gpu()
lang = ui.language()
seed = seeds.SEED_004

lesson.header(t("agent_1m.title"), t("agent_1m.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()

lesson.scenario_buttons("agent_1m", key="ag_presets")

shard_options = tensor_parallel_sizes(model, max_gpus=MAX_SHARDS)
default_shards = max(size for size in shard_options if size <= seeds.SEED_SHARDS)

controls, results = st.columns([1, 2], gap="large")
with controls:
    context_tokens = lesson.slider(
        t("agent_1m.context"),
        key="ag_context",
        min_value=CONTEXT_STEP_TOKENS,
        max_value=MAX_CONTEXT_TOKENS,
        value=seeds.SEED_CONTEXT_TOKENS,
        step=CONTEXT_STEP_TOKENS,
        help=t("agent_1m.context_help", maximum=ui.num(format_tokens(MAX_CONTEXT_TOKENS))),
    )
    kv_dtype = lesson.choice(
        t("agent_1m.kv_dtype"), key="ag_kv_dtype", options=KV_DTYPES, default="bf16", help=t("agent_1m.kv_dtype_help")
    )
    if len(shard_options) > 1:
        shards = lesson.select_slider(
            t("agent_1m.gpus"),
            key="ag_gpus",
            options=shard_options,
            value=default_shards,
            help=t("agent_1m.gpus_help", heads=model.num_attention_heads, kv_heads=model.num_key_value_heads),
        )
    else:
        shards = 1
        st.caption(t("agent_1m.gpus_single", model=model.name, heads=model.num_attention_heads))
    with lesson.secondary():
        answer_tokens = lesson.slider(
            t("agent_1m.answer"), key="ag_answer", min_value=100, max_value=10_000, value=1_000, step=100
        )
        utilization = lesson.slider(
            t("agent_1m.util"), key="ag_util", min_value=0.5, max_value=1.0, value=1.0, step=0.05,
            help=t("agent_1m.util_help"),
        )  # fmt: skip

try:
    kv_bytes_per_value = kvcore.bytes_per_value(kv_dtype)
    weight_bytes_per_param = kvcore.bytes_per_value(model.weights_dtype)
    # Every format's ledger in one vectorised call: the chosen format's, and the others' for the comparison rows.
    by_format = agent.ledgers(
        model,
        gpu,
        context_tokens=context_tokens,
        kv_bytes_per_value=[kvcore.bytes_per_value(dtype) for dtype in KV_DTYPES],
        weight_bytes_per_param=weight_bytes_per_param,
        shards=shards,
        answer_tokens=answer_tokens,
        utilization=utilization,
    )
    quantized = dict(zip(KV_DTYPES, by_format, strict=True))
    ledger = quantized[kv_dtype]
except ValueError as error:
    lesson.stop_with(error)

seen_by_seed = model.id == seeds.SEED_MODEL_ID and gpu.id == seeds.SEED_GPU_ID

with results:
    # Two columns of two metrics (one block each, not a row of blocks per line): what the cache costs in
    # memory on the left, in time on the right; on a phone they stack in that order.
    memory_column, time_column = st.columns(2)
    memory_column.metric(
        t("agent_1m.metric_cache"),
        lesson.mem(ledger.cache_bytes),
        help=t("agent_1m.metric_cache_help", tokens=ui.num(format_tokens(context_tokens))),
    )
    memory_column.metric(
        t("agent_1m.metric_fit"),
        ui.plural("agent_1m.gpus_count", ledger.gpus_to_fit),
        help=t("agent_1m.metric_fit_help", gpu=gpu.name, memory=lesson.mem(gpu.memory_bytes)),
    )
    time_column.metric(
        t("agent_1m.metric_token"),
        ui.num(format_seconds(ledger.kv_token_s)),
        help=t("agent_1m.metric_token_help", with_weights=ui.num(format_seconds(ledger.token_s))),
    )
    time_column.metric(
        t("agent_1m.metric_sharded", gpus=ui.plural("agent_1m.gpus_count", shards)),
        ui.num(format_seconds(ledger.sharded_kv_token_s)),
        help=t("agent_1m.metric_sharded_help", with_weights=ui.num(format_seconds(ledger.sharded_token_s))),
    )
    if context_tokens > model.max_position_embeddings:
        st.caption(
            t(
                "agent_1m.beyond_training",
                model=model.name,
                maximum=ui.num(format_tokens(model.max_position_embeddings)),
            )
        )

    figure = lesson.figure(
        token_time_figure,
        model=model,
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
        context_tokens=context_tokens,
        max_context_tokens=MAX_CONTEXT_TOKENS,
        shards=shards,
        kv_bytes_per_value=kv_bytes_per_value,
        weight_bytes_per_param=weight_bytes_per_param,
        seed_point=(seeds.SEED_CONTEXT_TOKENS, seed.token_s) if seen_by_seed and kv_dtype == "bf16" else None,
        separators=ui.separators(),
        labels={
            "title": t("agent_1m.chart_time_title", model=model.name),
            "subtitle": t("agent_1m.chart_time_subtitle", gpu=gpu.name, dtype=kv_dtype.upper()),
            "x_title": t("chart.context_axis"),
            "y_title": t("agent_1m.chart_time_axis"),
            "weights": t("agent_1m.chart_weights"),
            "kv": t("agent_1m.chart_kv"),
            "kv_only": t("agent_1m.chart_kv_only"),
            "sharded": t("agent_1m.chart_sharded", gpus=shards),
            "sharded_kv": t("agent_1m.chart_sharded_kv", gpus=shards),
            "current": t("chart.current"),
            "seed": t("agent_1m.chart_seed", value=ui.num(format_seconds(seed.token_s))),
            "tokens": t("chart.tokens"),
        },
    )
    # In the browser the chart follows the context slider at once (ui.live_chart); the rerun confirms it.
    context_values = live_chart.slider_values(CONTEXT_STEP_TOKENS, MAX_CONTEXT_TOKENS, CONTEXT_STEP_TOKENS)
    follow = live_chart.Follow("ag_context", context_values, context_tokens, token_time_patches(context_values))
    lesson.chart(figure, key="ag_time_chart", follow=follow)

st.markdown(
    t(
        "agent_1m.why_time",
        cache=ui.num(format_bytes_decimal(ledger.cache_bytes)),
        bandwidth=ui.num(format_bandwidth(ledger.bandwidth_bytes_per_s)),
        time=ui.num(format_seconds(ledger.kv_token_s)),
        weights=ui.num(format_bytes_decimal(ledger.weights_bytes)),
        with_weights=ui.num(format_seconds(ledger.token_s)),
        gpus=ui.plural("agent_1m.gpus_count", shards),
        sharded=ui.num(format_seconds(ledger.sharded_kv_token_s)),
        fleet=ui.num(format_bytes_decimal(ledger.fleet_kv_bytes)),
    )
)
lesson.formula(
    r"t_{token} = \frac{KV(s)}{n_{gpu} \cdot BW}",
    r"t_{token} = \frac{\text{" + ui.num(format_bytes_decimal(ledger.fleet_kv_bytes)) + r"}}{"
    + latex_number(shards, lang) + r" \cdot \text{" + ui.num(format_bandwidth(ledger.bandwidth_bytes_per_s))
    + r"}} = \textbf{" + ui.num(format_seconds(ledger.sharded_kv_token_s)) + "}",
)  # fmt: skip

# ---------------------------------------------------------------- the ledger

st.subheader(t("agent_1m.ledger_title"))
st.markdown(
    t(
        "agent_1m.ledger_intro",
        model=model.name,
        gpu=gpu.name,
        tokens=ui.num(format_tokens(context_tokens)),
        dtype=kv_dtype.upper(),
        gpus=ui.plural("agent_1m.gpus_count", shards),
    )
)


def _about(text: str) -> str:
    return t("agent_1m.about", value=text)


def _size(num_bytes: float) -> str:
    """Bytes, binary and decimal side by side: '327,680 B = 320 KiB = 327.68 kB'."""
    return ui.num(f"{format_tokens(num_bytes)} B = {format_bytes(num_bytes)} = {format_bytes_decimal(num_bytes)}")


fp8, int4 = quantized["fp8"], quantized["int4"]
rows = [
    (t("agent_1m.row_per_token"), _about(ui.num(format_bytes_decimal(seed.kv_bytes_per_token))),
     _size(ledger.kv_bytes_per_token)),
    (t("agent_1m.row_mha"), _about(ui.num(format_bytes_decimal(seed.mha_bytes_per_token))),
     _size(ledger.mha_bytes_per_token)),
    (t("agent_1m.row_gqa"), t("agent_1m.times", factor=ui.num(f"{seed.gqa_factor:g}")),
     t("agent_1m.times", factor=ui.num(f"{ledger.gqa_factor:.3g}"))),
    (t("agent_1m.row_cache"), _about(ui.num(format_bytes_decimal(seed.cache_bytes))),
     ui.num(f"{format_bytes_decimal(ledger.cache_bytes)} = {format_gib(ledger.cache_bytes)}")),
    (t("agent_1m.row_weights", dtype=model.weights_dtype.upper()),
     _about(ui.num(format_bytes_decimal(seed.weights_bytes))),
     ui.num(f"{format_bytes_decimal(ledger.weights_bytes)} = {format_gib(ledger.weights_bytes)}")),
    (t("agent_1m.row_fit", gpu=gpu.name), t("agent_1m.range", low=seed.gpus_to_fit_low, high=seed.gpus_to_fit_high),
     t("agent_1m.fit_value", fit=ledger.gpus_to_fit, group=ledger.tensor_parallel_group)),
    (t("agent_1m.row_bandwidth"), _about(ui.num(format_bandwidth(seed.bandwidth_bytes_per_s))),
     ui.num(format_bandwidth(ledger.bandwidth_bytes_per_s))),
    (t("agent_1m.row_token"), _about(ui.num(format_seconds(seed.token_s))), ui.num(format_seconds(ledger.kv_token_s))),
    (t("agent_1m.row_token_weights"), t("agent_1m.not_said"), ui.num(format_seconds(ledger.token_s))),
    (t("agent_1m.row_rate"), _about(ui.num(format_tokens_per_s(seed.tokens_per_s))),
     ui.num(format_tokens_per_s(ledger.kv_tokens_per_s))),
    (t("agent_1m.row_answer", tokens=ui.num(format_tokens(answer_tokens))),
     _about(ui.num(format_seconds_in_s(seed.answer_s))),
     t("agent_1m.answer_value", fixed=ui.num(format_seconds_in_s(ledger.kv_answer_s, decimals=2)),
       growing=ui.num(format_seconds_in_s(ledger.kv_answer_growing_s, decimals=2)))),
    (t("agent_1m.row_answer_weights"), t("agent_1m.not_said"), ui.num(format_seconds_in_s(ledger.answer_s))),
    (t("agent_1m.row_sharded", gpus=ui.plural("agent_1m.gpus_count", shards)),
     _about(ui.num(format_seconds(seed.sharded_token_s))),
     t("agent_1m.sharded_value", kv=ui.num(format_seconds(ledger.sharded_kv_token_s)),
       total=ui.num(format_seconds(ledger.sharded_token_s)))),
    (t("agent_1m.row_fleet"), ui.num(format_bytes_decimal(seed.fleet_bytes)),
     ui.num(format_bytes_decimal(ledger.fleet_kv_bytes))),
    (t("agent_1m.row_ridge"), _about(ui.num(f"{seed.ridge_flop_per_byte:,.0f}")),
     ui.num(f"{ledger.ridge_flop_per_byte:,.0f}")),
    (t("agent_1m.row_fp8"), ui.num(format_bytes_decimal(seed.fp8_bytes_per_token)),
     t("agent_1m.quantized_value", fp8=_size(fp8.kv_bytes_per_token), int4=_size(int4.kv_bytes_per_token))),
    (t("agent_1m.row_fp8_fit"), t("agent_1m.fp8_fit_seed"),
     t("agent_1m.quantized_fit", bf16=quantized["bf16"].gpus_to_fit, fp8=fp8.gpus_to_fit, int4=int4.gpus_to_fit)),
]  # fmt: skip
lesson.row_table(rows, columns=[t("agent_1m.col_what"), t("agent_1m.col_seed"), t("agent_1m.col_exact")])
if not (seen_by_seed and context_tokens == seeds.SEED_CONTEXT_TOKENS and kv_dtype == "bf16"):
    st.caption(
        t(
            "agent_1m.not_seed_scenario",
            model=ui.models()[seeds.SEED_MODEL_ID].name,
            gpu=ui.gpus()[seeds.SEED_GPU_ID].name,
            tokens=ui.num(format_tokens(seeds.SEED_CONTEXT_TOKENS)),
        )
    )

# ---------------------------------------------------------------- why the seed's numbers differ

st.subheader(t("agent_1m.errata_title"))
try:
    seed_model = ui.models()[seeds.SEED_MODEL_ID]
    seed_gpu = ui.gpus()[seeds.SEED_GPU_ID]
    exact, binary_million, seed_time, intensity, decimal_fit = seed_errata(seeds.SEED_MODEL_ID, seeds.SEED_GPU_ID)
except (KeyError, ValueError) as error:
    lesson.stop_with(error)
st.markdown(
    t(
        "agent_1m.errata",
        model=seed_model.name,
        gpu=seed_gpu.name,
        tokens=ui.num(format_tokens(seeds.SEED_CONTEXT_TOKENS)),
        seed_per_token=ui.num(format_bytes_decimal(seed.kv_bytes_per_token)),
        seed_cache=ui.num(format_bytes_decimal(seed.cache_bytes)),
        seed_ms=ui.num(format_seconds(seed.token_s)),
        seed_rate=ui.num(format_tokens_per_s(seed.tokens_per_s)),
        seed_answer=ui.num(format_seconds_in_s(seed.answer_s)),
        seed_low=seed.gpus_to_fit_low,
        seed_high=seed.gpus_to_fit_high,
        seed_memory=ui.num(format_bytes_decimal(seed.gpu_memory_bytes)),
        seed_sharded=ui.num(format_seconds(seed.sharded_token_s)),
        seed_ridge=ui.num(f"{seed.ridge_flop_per_byte:,.0f}"),
        answer_tokens=ui.num(format_tokens(seeds.SEED_ANSWER_TOKENS)),
        shards=seeds.SEED_SHARDS,
        bandwidth=ui.num(format_bandwidth(seed_gpu.bandwidth_bytes_per_s)),
        peak=ui.num(format_flops(seed_gpu.bf16_dense_flop_per_s)),
        intensity=ui.num(f"{intensity:,.1f}"),
        group_size=ui.num(f"{exact.gqa_factor:g}"),
        per_token=ui.num(format_tokens(exact.kv_bytes_per_token)),
        kib=ui.num(format_bytes(exact.kv_bytes_per_token)),
        kb=ui.num(format_bytes_decimal(exact.kv_bytes_per_token)),
        cache_gb=ui.num(format_bytes_decimal(exact.cache_bytes)),
        cache_gib=ui.num(format_gib(exact.cache_bytes)),
        binary_tokens=ui.num(format_tokens(2**20)),
        binary_gib=ui.num(format_gib(binary_million)),
        binary_gb=ui.num(format_bytes_decimal(binary_million)),
        seed_time=ui.num(format_seconds(seed_time)),
        time=ui.num(format_seconds(exact.kv_token_s)),
        weights=ui.num(format_bytes_decimal(exact.weights_bytes)),
        with_weights=ui.num(format_seconds(exact.token_s)),
        rate=ui.num(format_tokens_per_s(float(kvcore.tokens_per_s(exact.token_s)))),
        answer=ui.num(format_seconds_in_s(exact.kv_answer_s, decimals=2)),
        growing=ui.num(format_seconds_in_s(exact.kv_answer_growing_s, decimals=2)),
        answer_weights=ui.num(format_seconds_in_s(exact.answer_s)),
        need=ui.num(format_bytes_decimal(exact.weights_bytes + exact.cache_bytes)),
        memory=ui.num(format_bytes_decimal(seed_gpu.memory_bytes)),
        memory_gib=ui.num(format_gib(seed_gpu.memory_bytes)),
        fit=exact.gpus_to_fit,
        decimal_fit=int(decimal_fit),
        group=exact.tensor_parallel_group,
        kv_heads=seed_model.num_key_value_heads,
        sharded=ui.num(format_seconds(exact.sharded_kv_token_s)),
        sharded_weights=ui.num(format_seconds(exact.sharded_token_s)),
        ridge=ui.num(f"{exact.ridge_flop_per_byte:,.0f}"),
    )
)

# ---------------------------------------------------------------- GPUs needed

st.subheader(t("agent_1m.fit_title"))
fit_figure = lesson.figure(
    gpus_needed_figure,
    model=model,
    gpu_memory_bytes=gpu.memory_bytes,
    context_tokens=context_tokens,
    max_context_tokens=MAX_CONTEXT_TOKENS,
    kv_dtypes={dtype: kvcore.bytes_per_value(dtype) for dtype in KV_DTYPES},
    weight_bytes_per_param=weight_bytes_per_param,
    utilization=utilization,
    separators=ui.separators(),
    labels={
        "title": t("agent_1m.chart_fit_title", model=model.name),
        "subtitle": t("agent_1m.chart_fit_subtitle", gpu=gpu.name, memory=lesson.mem(gpu.memory_bytes)),
        "x_title": t("chart.context_axis"),
        "y_title": t("agent_1m.chart_fit_axis"),
        "current": t("chart.current"),
        "tokens": t("chart.tokens"),
        "gpus": t("agent_1m.chart_fit_unit"),
    },
)
lesson.chart(fit_figure, key="ag_fit_chart")
st.markdown(
    t(
        "agent_1m.fit_text",
        bf16=ui.plural("agent_1m.gpus_count", quantized["bf16"].gpus_to_fit),
        fp8=ui.plural("agent_1m.gpus_count", fp8.gpus_to_fit),
        int4=ui.plural("agent_1m.gpus_count", int4.gpus_to_fit),
        tokens=ui.num(format_tokens(context_tokens)),
    )
)

# ---------------------------------------------------------------- eviction or quantization?

st.subheader(t("agent_1m.evict_title"))
st.markdown(t("agent_1m.evict_intro"))
mass_controls, mass_results = st.columns([1, 2], gap="large")
with mass_controls:
    concentration = lesson.slider(
        t("agent_1m.concentration"),
        key="ag_concentration",
        min_value=0.0,
        max_value=2.0,
        value=1.0,
        step=0.1,
        help=t("agent_1m.concentration_help"),
    )
    keep_percent = lesson.slider(
        t("agent_1m.keep"), key="ag_keep", min_value=1, max_value=100, value=10, help=t("agent_1m.keep_help")
    )

attention, top_share = attention_sample(concentration)
evict, *quantize = agent.cache_options(
    model, context_tokens=context_tokens, keep_fraction=keep_percent / 100, attention=attention
)
verdict = agent.mass_verdict(float(top_share.mean()))

with mass_results:
    row = st.columns(3)
    row[0].metric(
        t("agent_1m.metric_top"),
        ui.num(percent(top_share.mean(), decimals=1, spaced=True)),
        help=t(
            "agent_1m.metric_top_help",
            low=ui.num(percent(top_share.min(), decimals=1, spaced=True)),
            high=ui.num(percent(top_share.max(), decimals=1, spaced=True)),
            layers=SAMPLE_LAYERS,
        ),
    )
    row[1].metric(
        t("agent_1m.metric_kept_mass", keep=keep_percent), ui.num(percent(evict.mass_kept, decimals=1, spaced=True))
    )
    row[2].metric(t("agent_1m.metric_lost_mass"), ui.num(percent(evict.mass_lost, decimals=1, spaced=True)))
    mass_figure = lesson.figure(
        attention_mass_figure,
        attention=attention,
        top_fraction=TOP_FRACTION,
        keep_fraction=keep_percent / 100,
        separators=ui.separators(),
        labels={
            "title": t("agent_1m.chart_mass_title"),
            "subtitle": t(
                "agent_1m.chart_mass_subtitle",
                layers=SAMPLE_LAYERS,
                blocks=ui.num(format_tokens(SAMPLE_BLOCKS)),
                concentration=ui.num(f"{concentration:g}"),
            ),
            "x_title": t("agent_1m.chart_mass_x"),
            "y_title": t("agent_1m.chart_mass_y"),
            "mean": t("agent_1m.chart_mass_mean"),
            "layer": t("agent_1m.chart_mass_layer"),
            "flat": t("agent_1m.chart_mass_flat"),
            "top": t("agent_1m.chart_mass_top"),
            "keep": t("agent_1m.chart_mass_keep", keep=keep_percent),
        },
    )
    lesson.chart(mass_figure, key="ag_mass_chart")

option_rows = [
    (
        t(OPTION_NAMES[option.name], keep=keep_percent),
        lesson.mem(option.cache_bytes),
        lesson.mem(option.saved_bytes),
        t("agent_1m.option_evict_cost", lost=ui.num(percent(option.mass_lost, decimals=1, spaced=True)))
        if option.name == "evict"
        else t(OPTION_COSTS[option.name]),
    )
    for option in (evict, *quantize)
]
# The verdict on the concentration and the options' introduction: one element.
st.markdown(
    t(VERDICTS[verdict], share=ui.num(percent(top_share.mean(), decimals=0, spaced=True)))
    + "\n\n"
    + t(
        "agent_1m.options_intro",
        cache=lesson.mem(quantized["bf16"].cache_bytes),
        tokens=ui.num(format_tokens(context_tokens)),
    )
)
lesson.row_table(
    option_rows,
    columns=[t("agent_1m.col_option"), t("agent_1m.col_cache"), t("agent_1m.col_saved"), t("agent_1m.col_cost")],
)
st.markdown(t("agent_1m.rare_details"))
with st.expander(t("agent_1m.measure_title")):
    st.markdown(t("agent_1m.measure_text"))
    st.code(
        "import numpy as np\n"
        "from kvcore.agent import top_mass_share\n\n"
        "# attention[layer, block]: attention weights summed per KV block, from replayed conversations\n"
        "attention = np.load('captured_attention.npy')\n"
        "share = top_mass_share(attention, top_fraction=0.01)  # one number per layer\n",
        language="python",
    )

# ---------------------------------------------------------------- trained sparse attention: skipping reads

#: Each method's name and what it does (kvcore.trained_sparse_attention's names → catalogue keys).
SPARSE_TEXTS = {
    "dense": ("agent_1m.sparse_dense", "agent_1m.sparse_dense_does"),
    "duo": ("agent_1m.sparse_duo", "agent_1m.sparse_duo_does"),
    "nsa": ("agent_1m.sparse_nsa", "agent_1m.sparse_nsa_does"),
    "moba": ("agent_1m.sparse_moba", "agent_1m.sparse_moba_does"),
    "seer": ("agent_1m.sparse_seer", "agent_1m.sparse_seer_does"),
}
st.subheader(t("agent_1m.sparse_title"))
st.markdown(t("agent_1m.sparse_intro"))
sparse = {
    method.name: method
    for method in kvcore.trained_sparse_attention(
        model, context_tokens=context_tokens, bytes_per_value=kv_bytes_per_value
    )
}
sparse_read_s = {
    name: float(kvcore.stream_time_s(method.read_bytes, bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s))
    for name, method in sparse.items()
}
sparse_gpus = {
    name: int(
        kvcore.gpus_needed(
            total_bytes=ledger.weights_bytes + method.stored_bytes,
            memory_bytes=gpu.memory_bytes,
            utilization=utilization,
        )
    )
    for name, method in sparse.items()
}
#: The settings each description names, from kvcore.reads (each paper's own).
_nsa = kvcore.NSA_SETTINGS
SPARSE_SETTINGS = {
    "duo": {"sinks": kvcore.DUO_SINK_TOKENS, "recent": kvcore.DUO_RECENT_TOKENS},
    "nsa": {
        "compress_block": _nsa.compress_block,
        "compress_stride": _nsa.compress_stride,
        "selected_blocks": _nsa.selected_blocks,
        "selection_block": _nsa.selection_block,
        "window": _nsa.window,
    },
    "moba": {"block": kvcore.MOBA_BLOCK_TOKENS, "top_k": kvcore.MOBA_TOP_K},
    "seer": {"budget": kvcore.SEER_TOKEN_BUDGET},
}
sparse_rows = [
    (
        t(SPARSE_TEXTS[name][0]),
        t(
            SPARSE_TEXTS[name][1],
            **{word: ui.num(format_tokens(value)) for word, value in SPARSE_SETTINGS.get(name, {}).items()},
        ),
        lesson.mem(method.stored_bytes),
        lesson.mem(method.read_bytes),
        ui.num(format_seconds(sparse_read_s[name])),
    )
    for name, method in sparse.items()
]
lesson.row_table(
    sparse_rows,
    columns=[
        t("agent_1m.sparse_col_method"),
        t("agent_1m.sparse_col_does"),
        t("agent_1m.sparse_col_stored"),
        t("agent_1m.sparse_col_read"),
        t("agent_1m.sparse_col_time", gpu=gpu.name),
    ],
)
# The memory and bandwidth paragraph, the caveat and the direction: one element (a message each, otherwise).
st.markdown(
    "\n\n".join(
        (
            t(
                "agent_1m.sparse_memory",
                model=model.name,
                tokens=ui.num(format_tokens(context_tokens)),
                dtype=kv_dtype.upper(),
                dense=lesson.mem(sparse["dense"].stored_bytes),
                dense_s=ui.num(format_seconds(sparse_read_s["dense"])),
                gpu=gpu.name,
                nsa_stored=lesson.mem(sparse["nsa"].stored_bytes),
                nsa_read=lesson.mem(sparse["nsa"].read_bytes),
                moba_read=lesson.mem(sparse["moba"].read_bytes),
                seer_read=lesson.mem(sparse["seer"].read_bytes),
                dense_gpus=ui.plural("agent_1m.gpus_count", sparse_gpus["dense"]),
                duo=lesson.mem(sparse["duo"].stored_bytes),
                duo_gpus=ui.plural("agent_1m.gpus_count", sparse_gpus["duo"]),
            ),
            t("agent_1m.sparse_caveat"),
            t("agent_1m.sparse_direction", topk=ui.num(format_tokens(kvcore.DSA_INDEX_TOPK_TOKENS))),
        )
    )
)

with prediction:
    ui.practice.predict(
        "decode_ms_per_token",
        stem="agent_1m",
        model=model,
        gpu=gpu,
        context_tokens=context_tokens,
        kv_dtype=kv_dtype,
        gpus=shards,
    )
lesson.takeaway(t("agent_1m.takeaway"))

glossary.terms_used("agent_1m")
