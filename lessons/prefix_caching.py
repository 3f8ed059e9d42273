"""Prefix caching: B requests share a P-token system prompt. Memory, prefill and price, with and without the cache.

Widgets → kvcore.paging → figures → text. Every number shown comes from a kvcore call.
"""

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.formatting import number, percent
from charts.prefix_caching import cost_figure, prefix_memory_figure
from course import seeds
from course.scenarios import PREFIX_CACHING_SEED_002
from kvcore.paging import (
    PROVIDER_MIN_CACHEABLE_TOKENS,
    cached_prefix_tokens,
    prefix_memory,
    prefix_prefill,
    prompt_cache_cost,
)
from kvcore.units import format_flop, format_seconds, format_tokens
from ui import glossary, lesson, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

BLOCK_SIZES = (8, 16, 32, 64, 128)
#: Providers' minimum cacheable prompt (tokens): none, then the minimums OpenAI and Anthropic's models use.
MIN_CACHEABLE_TOKENS = (0, 512, 1024, 2048, 4096)
#: Seed 002: 100 requests share a 2,000-token system prompt (course.seeds); as the widgets' values, their
#: defaults (course.scenarios).
SCENARIO = seeds.SEED_002_PREFIX
SEED_002 = PREFIX_CACHING_SEED_002

model = ui.current_model()
gpu = ui.current_gpu()

lesson.header(t("prefix_caching.title"), t("prefix_caching.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("prefix_caching", key="pc_presets")

controls, results = st.columns([1, 2], gap="large")

with controls:
    prefix_tokens = lesson.slider(
        t("prefix_caching.prefix"),
        key="pc_prefix",
        min_value=0,
        max_value=32768,
        value=SEED_002["pc_prefix"],
        help=t("prefix_caching.prefix_help"),
    )
    suffix_tokens = lesson.slider(
        t("prefix_caching.suffix"),
        key="pc_suffix",
        min_value=1,
        max_value=16384,
        value=SEED_002["pc_suffix"],
        help=t("prefix_caching.suffix_help"),
    )
    requests = lesson.slider(
        t("prefix_caching.requests"),
        key="pc_requests",
        min_value=1,
        max_value=1000,
        value=SEED_002["pc_requests"],
        help=t("prefix_caching.requests_help"),
    )
    block_size = lesson.select_slider(
        t("prefix_caching.block"),
        key="pc_block",
        options=BLOCK_SIZES,
        value=SEED_002["pc_block"],
        help=t("prefix_caching.block_help"),
    )
    with lesson.secondary():
        price = lesson.slider(
            t("prefix_caching.price"),
            key="pc_price",
            min_value=0.1,
            max_value=30.0,
            value=3.0,
            step=0.1,
            help=t("prefix_caching.price_help"),
        )
        read_multiplier = lesson.slider(
            t("prefix_caching.read"),
            key="pc_read",
            min_value=0.0,
            max_value=1.0,
            value=SCENARIO.read_price_fraction,
            step=0.01,
            help=t("prefix_caching.read_help"),
        )
        write_multiplier = lesson.slider(
            t("prefix_caching.write"),
            key="pc_write",
            min_value=0.5,
            max_value=2.0,
            value=SCENARIO.write_price_fraction,
            step=0.05,
            help=t("prefix_caching.write_help"),
        )
        ttl_s = lesson.slider(
            t("prefix_caching.ttl"),
            key="pc_ttl",
            min_value=0,
            max_value=3600,
            value=SEED_002["pc_ttl"],
            step=30,
            help=t("prefix_caching.ttl_help"),
        )
        min_cacheable = lesson.select_slider(
            t("prefix_caching.min_cacheable"),
            key="pc_min_cacheable",
            options=MIN_CACHEABLE_TOKENS,
            value=PROVIDER_MIN_CACHEABLE_TOKENS,
            help=t("prefix_caching.min_cacheable_help"),
        )
        interval_s = lesson.slider(
            t("prefix_caching.interval"),
            key="pc_interval",
            min_value=0,
            max_value=3600,
            value=SEED_002["pc_interval"],
            step=5,
            help=t("prefix_caching.interval_help"),
        )

try:
    bytes_per_token = kvcore.kv_bytes_per_token(model)
    common = {"prefix_tokens": prefix_tokens, "suffix_tokens": suffix_tokens, "requests": requests}
    cached = float(
        cached_prefix_tokens(prefix_tokens=prefix_tokens, suffix_tokens=suffix_tokens, block_size=block_size)
    )
    memory = prefix_memory(block_size=block_size, bytes_per_token=bytes_per_token, **common)
    prefill = prefix_prefill(model, peak_flop_per_s=gpu.bf16_dense_flop_per_s, block_size=block_size, **common)
    cost = prompt_cache_cost(
        input_usd_per_mtok=price,
        interval_s=interval_s,
        ttl_s=ttl_s,
        cache_write_multiplier=write_multiplier,
        cache_read_multiplier=read_multiplier,
        min_cacheable_tokens=min_cacheable,
        **common,
    )
except ValueError as error:
    lesson.stop_with(error)


def usd(value: float) -> str:
    """A price in USD, with four decimals below one dollar (a single request costs fractions of a cent)."""
    return ui.num(number(value, decimals=2 if abs(value) >= 1 else 4) + " USD")


shared_blocks = int(cached // block_size)
unit = lesson.memory_unit()

with results:
    row = st.columns(3)
    row[0].metric(
        t("prefix_caching.metric_blocks"),
        ui.num(format_tokens(shared_blocks)),
        delta=t("prefix_caching.metric_blocks_delta", tokens=ui.num(format_tokens(cached))),
        delta_color="off",
        delta_arrow="off",
        help=t("prefix_caching.metric_blocks_help"),
    )
    row[1].metric(
        t("prefix_caching.metric_memory"),
        lesson.mem(float(memory.saved_bytes)),
        delta=ui.num(percent(float(memory.saved_fraction), decimals=0)),
        delta_color="off",
        delta_arrow="off",
        help=t("prefix_caching.metric_memory_help"),
    )
    row[2].metric(
        t("prefix_caching.metric_ttft"),
        ui.num(format_seconds(float(prefill.ttft_saved_s))),
        delta=ui.num(format_flop(float(prefill.saved_flops))),
        delta_color="off",
        delta_arrow="off",
        help=t("prefix_caching.metric_ttft_help", gpu=gpu.name),
    )
    row = st.columns(3)
    row[0].metric(t("prefix_caching.metric_cost_without"), usd(float(cost.cost_without_usd)))
    row[1].metric(t("prefix_caching.metric_cost_with"), usd(float(cost.cost_with_usd)))
    row[2].metric(
        t("prefix_caching.metric_cost_saved"),
        usd(float(cost.saved_usd)),
        delta=ui.num(percent(float(cost.saved_fraction), decimals=0)),
        delta_color="off",
        delta_arrow="off",
    )

    lesson.chart(
        lesson.figure(
            prefix_memory_figure,
            block_size=block_size,
            bytes_per_token=bytes_per_token,
            separators=ui.separators(),
            unit_bytes=lesson.memory_unit_bytes(),
            unit=unit,
            labels={
                "title": t("prefix_caching.memory_title"),
                "subtitle": t(
                    "prefix_caching.memory_subtitle",
                    requests=ui.num(format_tokens(requests)),
                    suffix=ui.num(format_tokens(suffix_tokens)),
                    block=block_size,
                    model=model.name,
                ),
                "x_title": t("prefix_caching.memory_axis_x"),
                "y_title": t("prefix_caching.memory_axis_y", unit=unit),
                "without": t("prefix_caching.without"),
                "with": t("prefix_caching.with"),
                "current": t("prefix_caching.current"),
                "tokens": t("chart.tokens"),
            },
            **common,
        ),
        key="pc_memory_chart",
    )

if shared_blocks == 0:
    st.warning(t("prefix_caching.no_full_block", prefix=prefix_tokens, block=block_size), icon=":material/warning:")

with prediction:
    ui.practice.predict("sequence_cache", stem="prefix_caching", model=model, context_tokens=prefix_tokens)
lesson.takeaway(t("prefix_caching.takeaway"))

# ---------------------------------------------------------------- the formula

st.subheader(t("prefix_caching.formula_title"))
lang = ui.language()
lesson.formula(
    t("prefix_caching.formula_symbolic"),
    rf"{block_size} \cdot \left\lfloor \frac{{{latex_number(prefix_tokens, lang)}}}{{{block_size}}} \right\rfloor"
    + rf" = {block_size} \cdot {latex_number(shared_blocks, lang)} = \mathbf{{{latex_number(cached, lang)}}}",
)
st.markdown(
    t(
        "prefix_caching.memory_text",
        requests=ui.num(format_tokens(requests)),
        blocks=ui.num(format_tokens(shared_blocks)),
        saved=lesson.mem(float(memory.saved_bytes)),
        left=ui.num(format_tokens(prefix_tokens - cached)),
        flops=ui.num(format_flop(float(prefill.saved_flops))),
        gpu=gpu.name,
        ttft_without=ui.num(format_seconds(float(prefill.ttft_without_s))),
        ttft_with=ui.num(format_seconds(float(prefill.ttft_with_s))),
    )
)

# ---------------------------------------------------------------- two caches, one name

st.subheader(t("prefix_caching.price_title"))
st.markdown(t("prefix_caching.two_caches"))
lesson.chart(
    lesson.figure(
        cost_figure,
        input_usd_per_mtok=price,
        interval_s=interval_s,
        ttl_s=ttl_s,
        cache_write_multiplier=write_multiplier,
        cache_read_multiplier=read_multiplier,
        min_cacheable_tokens=min_cacheable,
        separators=ui.separators(),
        labels={
            "title": t("prefix_caching.cost_title"),
            "subtitle": t(
                "prefix_caching.cost_subtitle",
                requests=ui.num(format_tokens(requests)),
                price=ui.num(f"{price:.2f}"),
                read=ui.num(f"{read_multiplier:.2f}"),
                write=ui.num(f"{write_multiplier:.2f}"),
            ),
            "x_title": t("prefix_caching.cost_axis_x"),
            "y_title": t("prefix_caching.cost_axis_y"),
            "without": t("prefix_caching.cost_without"),
            "with": t("prefix_caching.cost_with"),
            "ttl": t("prefix_caching.ttl_line", ttl=ttl_s),
            "current": t("prefix_caching.current_interval"),
        },
        **common,
    ),
    key="pc_cost_chart",
)
expired = interval_s > ttl_s
if prefix_tokens < min_cacheable:  # no provider caches a prefix this short: nothing is written or read
    st.markdown(
        t(
            "prefix_caching.cost_too_short",
            prefix=ui.num(format_tokens(prefix_tokens)),
            minimum=ui.num(format_tokens(min_cacheable)),
        )
    )
else:
    st.markdown(
        t(
            "prefix_caching.cost_expired" if expired else "prefix_caching.cost_fresh",
            interval=interval_s,
            ttl=ttl_s,
            writes=ui.num(format_tokens(float(cost.cache_writes))),
            reads=ui.num(format_tokens(float(cost.cache_reads))),
            saved=usd(float(cost.saved_usd)),
        )
    )

# ---------------------------------------------------------------- when prompt caching is worth it

st.subheader(t("prefix_caching.when_title"))
st.markdown(t("prefix_caching.when_text"))
pricing = {
    "prefix_tokens": prefix_tokens,
    "suffix_tokens": suffix_tokens,
    "input_usd_per_mtok": price,
    "interval_s": interval_s,
    "ttl_s": ttl_s,
    "cache_write_multiplier": write_multiplier,
    "cache_read_multiplier": read_multiplier,
    "min_cacheable_tokens": min_cacheable,
}
#: Request counts searched for the first one where caching costs less (one request, then sharing by up to 100).
SHARING_COUNTS = list(range(1, 101))
try:
    one_off = prompt_cache_cost(requests=1, **pricing)
    by_count = prompt_cache_cost(requests=SHARING_COUNTS, **pricing)
except ValueError as error:
    lesson.stop_with(error)
pays_from = next((n for n, saved in zip(SHARING_COUNTS, by_count.saved_usd, strict=True) if saved > 0), None)
if prefix_tokens < min_cacheable:
    st.markdown(
        t(
            "prefix_caching.when_short",
            prefix=ui.num(format_tokens(prefix_tokens)),
            minimum=ui.num(format_tokens(min_cacheable)),
        )
    )
elif prefix_tokens > 0:  # an empty prefix has nothing to cache (the warning above says so)
    st.markdown(
        t(
            "prefix_caching.when_one_off_extra"
            if float(one_off.saved_usd) < 0
            else "prefix_caching.when_one_off_less"
            if float(one_off.saved_usd) > 0
            else "prefix_caching.when_one_off_same",
            extra=usd(abs(float(one_off.saved_usd))),
            write=ui.num(f"{write_multiplier:.2f}"),
            prefix=ui.num(format_tokens(prefix_tokens)),
        )
    )
    if pays_from is None:
        st.markdown(t("prefix_caching.when_never", interval=interval_s, ttl=ttl_s, top=SHARING_COUNTS[-1]))
    elif pays_from > 1:  # from 1 on, the one-off line has said it already
        st.markdown(
            t(
                "prefix_caching.when_pays",
                n=pays_from,
                interval=interval_s,
                ttl=ttl_s,
                saved=usd(float(cost.saved_usd)),
                requests=ui.num(format_tokens(requests)),
            )
        )
st.caption(t("prefix_caching.price_note"))

glossary.terms_used("prefix_caching")
