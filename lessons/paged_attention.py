"""PagedAttention vs contiguous: the same requests in the same pool, reserved whole or block by block.

Widgets → kvcore.paging → figures → text. Every number shown comes from a kvcore call.
"""

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.formatting import percent, times
from charts.paged_attention import block_map_figure, cell_slots, waste_figure
from course.scenarios import PAGED_ATTENTION_SHAREGPT
from kvcore.paging import AllocationReport, allocation_report, block_map, request_lengths_tokens, requests_that_fit
from kvcore.units import format_tokens
from ui import glossary, lesson, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

BLOCK_SIZES = (8, 16, 32, 64, 128)
MAX_MODEL_LENS = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
#: The block map draws a small pool: room for this many contiguous reservations.
MAP_RESERVATIONS = 4
#: The vLLM paper's ShareGPT on OPT, as the widgets' values: their defaults (course.scenarios).
SHAREGPT = PAGED_ATTENTION_SHAREGPT

model = ui.current_model()
gpu = ui.current_gpu()

lesson.header(t("paged_attention.title"), t("paged_attention.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("paged_attention", key="pa_presets")

controls, results = st.columns([1, 2], gap="large")

with controls:
    mean_tokens = lesson.slider(
        t("paged_attention.mean"),
        key="pa_mean",
        min_value=16,
        max_value=32768,
        value=SHAREGPT["pa_mean"],
        help=t("paged_attention.mean_help"),
    )
    spread = lesson.slider(
        t("paged_attention.spread"),
        key="pa_spread",
        min_value=0.0,
        max_value=3.0,
        value=SHAREGPT["pa_spread"],
        step=0.1,
        help=t("paged_attention.spread_help"),
    )
    max_model_len = lesson.select_slider(
        t("paged_attention.max_len"),
        key="pa_max_len",
        options=MAX_MODEL_LENS,
        value=SHAREGPT["pa_max_len"],
        help=t("paged_attention.max_len_help"),
    )
    block_size = lesson.select_slider(
        t("paged_attention.block"),
        key="pa_block",
        options=BLOCK_SIZES,
        value=SHAREGPT["pa_block"],
        help=t("paged_attention.block_help"),
    )
    with lesson.secondary():
        n_requests = lesson.slider(
            t("paged_attention.requests"),
            key="pa_requests",
            min_value=10,
            max_value=2000,
            value=SHAREGPT["pa_requests"],
            step=10,
            help=t("paged_attention.requests_help"),
        )
        pool_tokens = lesson.slider(
            t("paged_attention.pool"),
            key="pa_pool",
            min_value=8192,
            max_value=2097152,
            value=SHAREGPT["pa_pool"],
            step=8192,
            help=t("paged_attention.pool_help"),
        )
        seed = lesson.slider(
            t("paged_attention.seed"),
            key="pa_seed",
            min_value=0,
            max_value=99,
            value=0,
            help=t("paged_attention.seed_help"),
        )

try:
    bytes_per_token = kvcore.kv_bytes_per_token(model)
    lengths = request_lengths_tokens(
        n_requests, mean_tokens=mean_tokens, spread=spread, max_model_len=max_model_len, seed=seed
    )
    common = {"max_model_len": max_model_len, "block_size": block_size}
    contiguous = allocation_report(lengths, scheme="contiguous", bytes_per_token=bytes_per_token, **common)
    paged = allocation_report(lengths, scheme="paged", bytes_per_token=bytes_per_token, **common)
    fit_contiguous = int(
        requests_that_fit(pool_tokens=pool_tokens, lengths_tokens=lengths, scheme="contiguous", **common)
    )
    fit_paged = int(requests_that_fit(pool_tokens=pool_tokens, lengths_tokens=lengths, scheme="paged", **common))
    # The pool itself: the requests that fit under each scheme, what they hold, the rest free (the chart).
    fit = {"contiguous": fit_contiguous, "paged": fit_paged}
    in_pool = [
        allocation_report(lengths[: fit[scheme]], scheme=scheme, bytes_per_token=bytes_per_token, **common)
        if fit[scheme]
        else AllocationReport(scheme=scheme, used_tokens=0, wasted_tokens=0, bytes_per_token=bytes_per_token)
        for scheme in ("contiguous", "paged")
    ]
    map_blocks = MAP_RESERVATIONS * max_model_len // block_size
    maps = {
        scheme: block_map(lengths, scheme=scheme, pool_blocks=map_blocks, **common)
        for scheme in ("contiguous", "paged")
    }
except ValueError as error:
    lesson.stop_with(error)


with results:
    # The share is the draw's (all the requests, as the formula below); the memory is the pool's, where only the
    # requests that fit are held: the "reserved, empty" bar of the chart, never more than the pool.
    row = st.columns(2)
    row[0].metric(
        t("paged_attention.metric_waste_contiguous"),
        ui.num(percent(contiguous.waste_fraction, decimals=1)),
        delta=t("paged_attention.waste_in_pool", memory=lesson.mem(in_pool[0].waste_bytes)),
        delta_color="off",
        delta_arrow="off",
        help=t("paged_attention.metric_waste_contiguous_help"),
    )
    row[1].metric(
        t("paged_attention.metric_waste_paged"),
        ui.num(percent(paged.waste_fraction, decimals=1)),
        delta=t("paged_attention.waste_in_pool", memory=lesson.mem(in_pool[1].waste_bytes)),
        delta_color="off",
        delta_arrow="off",
        help=t("paged_attention.metric_waste_paged_help"),
    )
    row = st.columns(2)
    row[0].metric(
        t("paged_attention.metric_fit"),
        f"{fit_contiguous} → {fit_paged}",
        help=t("paged_attention.metric_fit_help", pool=ui.num(format_tokens(pool_tokens))),
    )
    gain = (
        t("paged_attention.gain_none") if fit_contiguous == 0 else ui.num(times(fit_paged / fit_contiguous, decimals=1))
    )
    row[1].metric(t("paged_attention.metric_gain"), gain, help=t("paged_attention.metric_gain_help"))

    unit = lesson.memory_unit()
    lesson.chart(
        lesson.figure(
            waste_figure,
            reports=in_pool,
            pool_bytes=pool_tokens * bytes_per_token,
            separators=ui.separators(),
            unit_bytes=lesson.memory_unit_bytes(),
            unit=unit,
            labels={
                "title": t("paged_attention.waste_title"),
                "subtitle": t(
                    "paged_attention.waste_subtitle",
                    memory=lesson.mem(pool_tokens * bytes_per_token),
                    tokens=ui.num(format_tokens(pool_tokens)),
                    model=model.name,
                    block=block_size,
                ),
                "y_title": t("paged_attention.waste_axis", unit=unit),
                "used": t("paged_attention.used"),
                "wasted": t("paged_attention.wasted"),
                "free": t("paged_attention.free"),
                "contiguous": t("paged_attention.contiguous"),
                "paged": t("paged_attention.paged"),
            },
        ),
        key="pa_waste_chart",
    )

claim = {
    "waste": ui.num(percent(contiguous.waste_fraction, decimals=1)),
    "paged": ui.num(percent(paged.waste_fraction, decimals=1)),
}
if 0.6 <= contiguous.waste_fraction <= 0.8:
    st.warning(t("paged_attention.claim_inside", **claim), icon=":material/warning:")
else:
    st.info(t("paged_attention.claim_outside", **claim), icon=":material/info:")
st.caption(
    t(
        "paged_attention.pool_caption",
        pool=ui.num(format_tokens(pool_tokens)),
        memory=lesson.mem(pool_tokens * bytes_per_token),
        model=model.name,
        gpu=gpu.name,
        gpu_memory=lesson.mem(gpu.memory_bytes),
    )
)

with prediction:
    ui.practice.predict("sequence_cache", stem="paged_attention", model=model, context_tokens=max_model_len)
lesson.takeaway(t("paged_attention.takeaway"))

# ---------------------------------------------------------------- the formulas

st.subheader(t("paged_attention.formula_title"))
lang = ui.language()
mean_used = contiguous.used_tokens / n_requests
lesson.formula(
    t("paged_attention.formula_contiguous_symbolic"),
    rf"1 - \frac{{{latex_number(round(mean_used, 1), lang)}}}{{{latex_number(max_model_len, lang)}}}"
    + rf" = \mathbf{{{latex_number(round(contiguous.waste_fraction * 100, 1), lang)}\ \%}}",
)
# The slider sets the distribution's mean; the formula uses this draw's own (a sample, its long tail cut).
st.caption(
    t(
        "paged_attention.mean_drawn",
        mean=ui.num(format_tokens(mean_tokens)),
        requests=ui.num(format_tokens(n_requests)),
        drawn=ui.num(f"{mean_used:,.1f}"),
        max_len=ui.num(format_tokens(max_model_len)),
    )
)
lesson.formula(
    t("paged_attention.formula_paged_symbolic"),
    rf"\frac{{{latex_number(paged.wasted_tokens, lang)}}}{{{latex_number(n_requests, lang)}}}"
    + rf" = \mathbf{{{latex_number(round(paged.wasted_tokens / n_requests, 1), lang)}}} < {block_size}",
)
st.markdown(t("paged_attention.formula_text"))

# ---------------------------------------------------------------- the block map

st.subheader(t("paged_attention.map_title"))
slots_per_cell = cell_slots(map_blocks * block_size)
st.markdown(
    t(
        "paged_attention.map_text",
        slots=ui.num(format_tokens(map_blocks * block_size)),
        reservations=MAP_RESERVATIONS,
        placed_contiguous=maps["contiguous"].requests_placed,
        placed_paged=maps["paged"].requests_placed,
    )
)
lesson.chart(
    lesson.figure(
        block_map_figure,
        maps=maps,
        slots_per_cell=slots_per_cell,
        labels={
            "title": t("paged_attention.map_chart_title"),
            "subtitle": t(
                "paged_attention.map_chart_subtitle",
                slots=ui.plural("paged_attention.slots", slots_per_cell, ui.num(format_tokens(slots_per_cell))),
            ),
            "contiguous": t("paged_attention.contiguous"),
            "paged": t("paged_attention.paged"),
            "request": t("paged_attention.request"),
            "reserved": t("paged_attention.reserved_empty"),
            "free": t("paged_attention.free"),
            "x_title": t("paged_attention.map_axis_x"),
            "y_title": t("paged_attention.map_axis_y"),
        },
    ),
    key="pa_map_chart",
)
st.markdown(t("paged_attention.fragmentation_note"))

glossary.terms_used("paged_attention")
