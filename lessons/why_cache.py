"""Why cache K and V: recomputing costs N(N+1)/2 projections, caching costs N — paid for in memory.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.
"""

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.why_cache import cumulative_work_figure, step_work_figure, token_grid_figure
from course import seeds
from kvcore.attention import (
    forward_flops_with_cache,
    forward_flops_without_cache,
    kv_projection_flops_per_token,
    kv_projection_flops_with_cache,
    kv_projection_flops_without_cache,
    kv_projections_recomputed,
    recompute_factor,
    recomputed_at_step,
)
from kvcore.units import (
    format_flop,
    format_flops,
    format_quantity,
    format_seconds,
    format_tokens,
)
from ui import glossary, lesson, t
from ui.formula import formula_terms, latex_number, result_latex

lesson.rerun_alone(__file__)

#: The slider stops at 32k tokens: enough to see the square take off, small enough to drag.
MAX_TOKENS = 32768
DEFAULT_TOKENS = 1000
#: The grid stays readable on a phone up to about two dozen steps.
MAX_GRID_STEPS = 24
DEFAULT_GRID_STEPS = 8
#: Seed 000: "generating token number 1,000 would recompute the K and V of the 999 before it" (course.seeds).
SEED_STEP = seeds.SEED_000_RECOMPUTE_TOKENS

model = ui.current_model()
gpu = ui.current_gpu()
lang = ui.language()

lesson.header(t("why_cache.title"), t("why_cache.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("why_cache", key="wc_presets")

maximum = min(model.max_position_embeddings, MAX_TOKENS)
tokens = lesson.slider(
    t("why_cache.tokens"),
    key="wc_tokens",
    min_value=1,
    max_value=maximum,
    value=min(DEFAULT_TOKENS, maximum),
    help=t("why_cache.tokens_help", maximum=ui.num(format_tokens(maximum))),
)

peak = gpu.bf16_dense_flop_per_s
try:
    per_token_flops = kv_projection_flops_per_token(model)
    projections_without = float(kvcore.kv_projections_without_cache(tokens))
    projections_with = float(kvcore.kv_projections_with_cache(tokens))
    flops_without = float(kv_projection_flops_without_cache(model, generated_tokens=tokens))
    flops_with = float(kv_projection_flops_with_cache(model, generated_tokens=tokens))
    factor = float(recompute_factor(tokens))
    cache = float(kvcore.kv_cache_bytes(model, context_tokens=tokens))
    per_token_bytes = kvcore.kv_bytes_per_token(model)
    time_without = float(kvcore.prefill_time_s(flops_without, peak_flop_per_s=peak))
    time_with = float(kvcore.prefill_time_s(flops_with, peak_flop_per_s=peak))
    forward_without = float(forward_flops_without_cache(model, generated_tokens=tokens))
    forward_with = float(forward_flops_with_cache(model, generated_tokens=tokens))
except ValueError as error:
    lesson.stop_with(error)

decimal = lesson.memory_unit() == "GB"


row = st.columns(4)
row[0].metric(
    t("why_cache.metric_factor"),
    ui.num(f"{format_quantity(factor)}×"),
    help=t("why_cache.metric_factor_help"),
)
row[1].metric(
    t("why_cache.metric_without"),
    ui.num(format_flop(flops_without)),
    help=t("why_cache.metric_without_help", time=ui.num(format_seconds(time_without)), gpu=gpu.name),
)
row[2].metric(
    t("why_cache.metric_with"),
    ui.num(format_flop(flops_with)),
    help=t("why_cache.metric_with_help", time=ui.num(format_seconds(time_with)), gpu=gpu.name),
)
row[3].metric(
    t("why_cache.metric_cache"),
    lesson.size(cache),
    help=t("why_cache.metric_cache_help", tokens=ui.num(format_tokens(tokens))),
)

work_labels = {
    "title": t("why_cache.work_title", model=model.name),
    "subtitle": t("why_cache.work_subtitle", tokens=ui.num(format_tokens(tokens))),
    "x_title": t("why_cache.axis_tokens"),
    "y_title": t("why_cache.axis_work"),
    "without": t("why_cache.without"),
    "with": t("why_cache.with"),
    "tokens": t("chart.tokens"),
    "projections": t("why_cache.projections"),
}
# On a linear axis the cached curve, (N+1)/2 times lower, lies flat along zero: a log axis shows both.
log_y = lesson.toggle(t("why_cache.log_axis"), key="wc_log", help=t("why_cache.log_axis_help"))
lesson.chart(
    lesson.figure(
        cumulative_work_figure,
        model=model,
        generated_tokens=tokens,
        labels=work_labels,
        separators=ui.separators(),
        log_y=log_y,
    ),
    key="wc_work_chart",
)
st.markdown(
    t(
        "why_cache.work_text",
        tokens=ui.num(format_tokens(tokens)),
        without=ui.num(format_tokens(projections_without)),
        with_cache=ui.num(format_tokens(projections_with)),
        factor=ui.num(format_quantity(factor)),
        flops_without=ui.num(format_flop(flops_without)),
        flops_with=ui.num(format_flop(flops_with)),
        time_without=ui.num(format_seconds(time_without)),
        time_with=ui.num(format_seconds(time_with)),
        gpu=gpu.name,
        peak=ui.num(format_flops(peak)),
    )
)

with prediction:
    ui.practice.predict("bytes_per_token", stem="why_cache", model=model)
lesson.takeaway(t("why_cache.takeaway"))

# ---------------------------------------------------------------- the formulas

st.subheader(t("why_cache.formula_title"))
st.markdown(t("why_cache.formula_text"))
n = latex_number(tokens, lang)
lesson.formula(
    r"\underbrace{1 + 2 + \dots + N}_{\text{"
    + t("why_cache.without")
    + r"}} = \frac{N(N+1)}{2} \qquad \underbrace{1 + 1 + \dots + 1}_{\text{"
    + t("why_cache.with")
    + r"}} = N",
    rf"\frac{{{n} \cdot {latex_number(tokens + 1, lang)}}}{{2}} = \mathbf{{{latex_number(projections_without, lang)}}}"
    rf"\qquad N = \mathbf{{{latex_number(projections_with, lang)}}}",
)

# One K/V projection of one token, layer kind by layer kind (linear layers cache no K/V).
d_model = latex_number(model.hidden_size, lang)
projection_terms = []
symbolic_terms = []
# L's subscript names the kind of layer in the reader's language (L_full, L_completa); MLA keeps its name.
layer_symbols = {
    "full": r"\text{" + t("formula.full") + "}",
    "sliding": r"\text{" + t("formula.sliding") + "}",
    "mla": "mla",
}
for kind, symbol in layer_symbols.items():
    layers = model.count(kind)
    if not layers:
        continue
    if kind == "mla":
        symbolic_terms.append(r"2 \cdot d_{model} \cdot (r_{kv} + d_{rope}) \cdot L_{mla}")
        projection_terms.append(
            rf"2 \cdot {d_model} \cdot ({latex_number(model.kv_lora_rank, lang)} + "
            rf"{latex_number(model.qk_rope_head_dim, lang)}) \cdot {latex_number(layers, lang)}"
        )
    else:
        symbolic_terms.append(rf"2 \cdot d_{{model}} \cdot 2 \cdot n_{{kv}} \cdot d_{{head}} \cdot L_{{{symbol}}}")
        projection_terms.append(
            rf"2 \cdot {d_model} \cdot 2 \cdot {latex_number(model.num_key_value_heads, lang)} \cdot "
            rf"{latex_number(model.head_dim, lang)} \cdot {latex_number(layers, lang)}"
        )
st.markdown(t("why_cache.flops_text", model=model.name))
lesson.formula(
    r"\text{FLOP}_{KV}/\text{token} = " + " + ".join(symbolic_terms),
    " + ".join(projection_terms) + rf" = \mathbf{{{latex_number(per_token_flops, lang)}}}\ \text{{FLOP}}",
)
if model.count("linear"):
    st.caption(t("why_cache.linear_note", layers=model.count("linear"), total=model.num_hidden_layers))
if model.count("mla"):
    st.caption(t("why_cache.mla_note"))
if model.count("sliding"):
    st.caption(t("why_cache.sliding_note", window=ui.num(format_tokens(model.sliding_window or 0))))

# ---------------------------------------------------------------- step by step

st.subheader(t("why_cache.step_title"))
at_seed_step = float(kvcore.projections_at_step(SEED_STEP, cached=False))
st.markdown(
    t(
        "why_cache.step_text",
        step=ui.num(format_tokens(SEED_STEP)),
        total=ui.num(format_tokens(at_seed_step)),
        old=ui.num(format_tokens(float(recomputed_at_step(SEED_STEP)))),
    )
)
step_labels = {
    "title": t("why_cache.step_chart_title"),
    "subtitle": t("why_cache.step_chart_subtitle", model=model.name),
    "x_title": t("why_cache.axis_step"),
    "y_title": t("why_cache.axis_step_work"),
    "without": t("why_cache.without"),
    "with": t("why_cache.with"),
    "step": t("why_cache.step"),
    "projections": t("why_cache.projections"),
}
lesson.chart(
    lesson.figure(
        step_work_figure,
        model=model,
        generated_tokens=tokens,
        labels=step_labels,
        separators=ui.separators(),
        log_y=log_y,
    ),
    key="wc_step_chart",
)
st.markdown(t("why_cache.prefill_text"))

# ---------------------------------------------------------------- token by token

st.subheader(t("why_cache.grid_title"))
steps = lesson.slider(
    t("why_cache.grid_steps"),
    key="wc_steps",
    min_value=2,
    max_value=MAX_GRID_STEPS,
    value=DEFAULT_GRID_STEPS,
    help=t("why_cache.grid_steps_help"),
)
grid_labels = {
    "title": t("why_cache.grid_chart_title", steps=steps),
    "subtitle": t("why_cache.grid_chart_subtitle"),
    "x_title": t("why_cache.axis_position"),
    "y_title": t("why_cache.axis_grid_step"),
    "without": t("why_cache.without"),
    "with": t("why_cache.with"),
    "not_yet": t("why_cache.cell_not_yet"),
    "computed": t("why_cache.cell_computed"),
    "cached": t("why_cache.cell_cached"),
    "recomputed": t("why_cache.cell_recomputed"),
    "step": t("why_cache.step"),
    "token": t("why_cache.token"),
}
lesson.chart(
    lesson.figure(token_grid_figure, steps=steps, labels=grid_labels, separators=ui.separators()), key="wc_grid_chart"
)
grid_without = float(kvcore.kv_projections_without_cache(steps))
grid_with = float(kvcore.kv_projections_with_cache(steps))
st.markdown(
    t(
        "why_cache.grid_text",
        steps=steps,
        without=ui.num(format_tokens(grid_without)),
        with_cache=ui.num(format_tokens(grid_with)),
        wasted=ui.num(format_tokens(float(kv_projections_recomputed(steps)))),
    )
)

# ---------------------------------------------------------------- why K and V, and not Q

st.subheader(t("why_cache.no_q_title"))
st.markdown(
    t(
        "why_cache.no_q_text",
        tokens=ui.num(format_tokens(tokens)),
        kv_reads=ui.num(format_tokens(float(kvcore.kv_reads_of_token(1, generated_tokens=tokens)))),
        q_reads=ui.num(format_tokens(float(kvcore.query_reads_of_token(1, generated_tokens=tokens)))),
        model=model.name,
        q_bytes=lesson.size(kvcore.query_bytes_per_token(model, bytes_per_value=2.0)),
        kv_bytes=lesson.size(per_token_bytes),
    )
)

# ---------------------------------------------------------------- the price: memory

st.subheader(t("why_cache.price_title"))
terms = formula_terms(model, context_tokens=tokens, concurrency=1, bytes_per_value=2.0, lang=lang)
st.markdown(
    t(
        "why_cache.price_text",
        model=model.name,
        per_token=lesson.size(per_token_bytes),
        tokens=ui.num(format_tokens(tokens)),
        cache=lesson.size(cache),
        gpu=gpu.name,
        memory=lesson.mem(gpu.memory_bytes),
    )
)
for term in terms:
    if len(terms) > 1:
        st.markdown(t(f"kind.{term.kind}", layers=term.layers))
    lesson.formula(term.symbolic, term.substituted + result_latex(term.kv_bytes, lang, decimal=decimal))

# ---------------------------------------------------------------- the seed's simplification

st.subheader(t("why_cache.honest_title"))
st.markdown(
    t(
        "why_cache.honest_text",
        tokens=ui.num(format_tokens(tokens)),
        kv_without=ui.num(format_flop(flops_without)),
        forward_without=ui.num(format_flop(forward_without)),
        forward_with=ui.num(format_flop(forward_with)),
        time_forward=ui.num(format_seconds(float(kvcore.prefill_time_s(forward_without, peak_flop_per_s=peak)))),
        gpu=gpu.name,
        factor=ui.num(format_quantity(factor)),
    )
)

glossary.terms_used("why_cache")
