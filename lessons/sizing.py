"""Sizing a server: seed 000's rule step by step, context per user, and the preemption alarm.

Widgets → kvcore → figures → text. Every number shown comes from a kvcore call.

All memory figures are per GPU: with tensor parallelism each GPU holds 1/tp of the
weights and its share of the KV heads of every token, so the pool's tokens are the
server's (MLA latents are replicated on every GPU instead).
"""

import streamlit as st

import kvcore
import ui
import ui.engine_table
import ui.practice
from charts.formatting import percent
from charts.sizing import context_per_user_figure, sizing_waterfall_figure
from course import seeds
from kvcore.capacity import max_context_tokens, pool_headroom, pool_share, preemption_risk, sizing_steps
from kvcore.units import GiB, format_bytes, format_tokens
from ui import glossary, lesson, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

KV_DTYPES = ("bf16", "fp16", "fp8", "int8")
#: Weight formats offered; the model's own (models.csv's weights_dtype) is added and is the default.
WEIGHTS_DTYPES = ("bf16", "fp8", "int8", "int4")
MAX_USERS = 256
#: The shared default assumptions (kvcore.DEFAULT_ASSUMPTIONS): every page starts from the same u and overhead.
DEFAULT_OVERHEAD_GIB = kvcore.DEFAULT_OVERHEAD_BYTES / GiB
#: Seed 000's dashboard (a "max context" of 262,144 tokens, one user of 128k, 88 % of VRAM), its outage as it
#: counts it (a 12 GB card, a 9 GB model, PDFs of 2.5 GiB) and the same outage with real figures (the PDF
#: scenario's values, course.scenarios): course.seeds.
DASHBOARD = seeds.SEED_000_DASHBOARD
LONG_USER_TOKENS = DASHBOARD.long_user_tokens
STORY = seeds.SEED_000_OUTAGE
REAL = seeds.SEED_000_OUTAGE_SERVER

model = ui.current_model()
gpu = ui.current_gpu()

lesson.header(t("sizing.title"), t("sizing.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()
lesson.scenario_buttons("sizing", key="sz_presets")
# "Does not fit" is said here, at the top, once the numbers are known.
fit_notice = st.container()

controls, results = st.columns([1, 2], gap="large")

with controls:
    utilization = lesson.slider(
        t("sizing.utilization"),
        key="sz_utilization",
        min_value=0.50,
        max_value=0.98,
        value=kvcore.DEFAULT_UTILIZATION,
        step=0.01,
        help=t("sizing.utilization_help"),
    )
    users = lesson.slider(
        t("sizing.users"), key="sz_users", min_value=1, max_value=MAX_USERS, value=4, help=t("sizing.users_help")
    )
    low, high, step, default_context = ui.context_range(model)
    context_tokens = lesson.slider(
        t("sizing.context"),
        key="sz_context",
        min_value=low,
        max_value=high,
        value=default_context,
        step=step,
        help=t("sizing.context_help", maximum=ui.num(format_tokens(high))),
    )
    kv_dtype = lesson.choice(t("sizing.kv_dtype"), key="sz_kv_dtype", options=KV_DTYPES, default="bf16")
    weights_dtype = lesson.choice(
        t("sizing.weights_dtype"),
        key="sz_weights_dtype",
        options=WEIGHTS_DTYPES if model.weights_dtype in WEIGHTS_DTYPES else (*WEIGHTS_DTYPES, model.weights_dtype),
        default=model.weights_dtype,
        help=t("sizing.weights_help", dtype=model.weights_dtype),
    )
    with lesson.secondary():
        overhead_gib = lesson.slider(
            t("sizing.overhead"),
            key="sz_overhead",
            min_value=0.0,
            max_value=8.0,
            value=DEFAULT_OVERHEAD_GIB,
            step=0.25,
            help=t("sizing.overhead_help"),
        )
        lesson.gib_slider_note(overhead_gib)
        tp = lesson.select_slider(
            t("sizing.tp"), key="sz_tp", options=lesson.TP_SIZES, value=1, help=t("sizing.tp_help")
        )

overhead = overhead_gib * GiB  # the slider speaks GiB; kvcore speaks bytes
try:
    kv_bytes_per_value = kvcore.bytes_per_value(kv_dtype)
    weights = kvcore.model_weights_bytes(model, bytes_per_param=kvcore.bytes_per_value(weights_dtype), tp=tp)
    steps = sizing_steps(
        model,
        memory_bytes=gpu.memory_bytes,
        utilization=utilization,
        weights_bytes=weights,
        overhead_bytes=overhead,
        concurrency=users,
        bytes_per_value=kv_bytes_per_value,
        tp=tp,
    )
    demand = float(
        kvcore.kv_cache_bytes(
            model, context_tokens=context_tokens, concurrency=users, bytes_per_value=kv_bytes_per_value, tp=tp
        )
    )
    sequence = float(
        kvcore.sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=kv_bytes_per_value, tp=tp)
    )
    headroom = float(pool_headroom(kv_pool_bytes=steps.kv_pool_bytes, demanded_bytes=demand))
    users_that_fit = int(kvcore.max_users(kv_pool_bytes=steps.kv_pool_bytes, sequence_bytes=sequence))
    really_each = float(
        max_context_tokens(
            model, kv_pool_bytes=steps.kv_pool_bytes, concurrency=users, bytes_per_value=kv_bytes_per_value, tp=tp
        )
    )
    long_tokens = min(LONG_USER_TOKENS, model.max_position_embeddings)
    long_share, declared_share = pool_share(
        model,
        context_tokens=[long_tokens, model.max_position_embeddings],
        kv_pool_bytes=steps.kv_pool_bytes,
        bytes_per_value=kv_bytes_per_value,
        tp=tp,
    )
    dashboard_pool = DASHBOARD.pool_tokens * steps.bytes_per_token
    dashboard_share = float(
        pool_share(
            model,
            context_tokens=LONG_USER_TOKENS,
            kv_pool_bytes=dashboard_pool,
            bytes_per_value=kv_bytes_per_value,
            tp=tp,
        )
    )
except ValueError as error:
    lesson.stop_with(error)

risk = preemption_risk(headroom)
unit = lesson.memory_unit()
tokens = ui.num(format_tokens(steps.pool_tokens))
each = ui.num(format_tokens(steps.tokens_per_user))

with results:
    row = st.columns(2)
    row[0].metric(t("sizing.metric_pool"), lesson.pool_mem(steps.kv_pool_bytes), help=t("sizing.metric_pool_help"))
    row[1].metric(t("sizing.metric_tokens"), tokens, help=t("sizing.metric_tokens_help"))
    row = st.columns(2)
    row[0].metric(
        t("sizing.metric_each"), each, help=t("sizing.metric_each_help", users=ui.plural("users.count", users))
    )
    row[1].metric(
        t("sizing.metric_fit", context=ui.num(format_tokens(context_tokens))),
        users_that_fit,
        help=t("sizing.metric_fit_help"),
    )

    figure = lesson.figure(
        sizing_waterfall_figure,
        steps=steps,
        separators=ui.separators(),
        unit_bytes=lesson.memory_unit_bytes(),
        unit=unit,
        does_not_fit=t("lesson.does_not_fit"),
        labels={
            "title": t("sizing.waterfall_title"),
            "subtitle": t(
                "sizing.waterfall_subtitle",
                gpu=gpu.name,
                model=model.name,
                weights=weights_dtype,
                kv=kv_dtype,
                gpus=ui.plural("sizing.gpus", tp),
            ),
            "y_title": t("sizing.waterfall_axis", unit=unit),
            "vram": t("sizing.bar_vram"),
            "held_back": t("sizing.bar_held_back", u=ui.num(f"{utilization:.2f}")),
            "weights": t("chart.weights"),
            "overhead": t("sizing.bar_overhead"),
            "pool": t("sizing.bar_pool"),
        },
    )
    lesson.chart(figure, key="sz_waterfall")

# ---------------------------------------------------------------- the alarm

alarm = {
    "users": ui.plural("users.count", users),
    "context": ui.num(format_tokens(context_tokens)),
    "demand": lesson.mem(demand),
    "pool": lesson.mem(max(steps.kv_pool_bytes, 0.0)),
    "percent": ui.num(percent(1 / headroom, decimals=0)) if headroom > 0 else "∞",
    "fit": users_that_fit,
}
if not steps.fits:
    fit_notice.warning(
        t(
            "sizing.alarm_no_pool",
            weights=lesson.mem(steps.weights_bytes),
            overhead=lesson.mem(steps.overhead_bytes),
            usable=lesson.mem(steps.usable_bytes),
        ),
        icon=":material/block:",
    )
elif risk == "preempts":
    st.error(t("sizing.alarm_preempts", **alarm), icon=":material/notifications_active:")
elif risk == "at_limit":
    st.warning(t("sizing.alarm_at_limit", **alarm), icon=":material/warning:")
else:
    st.success(t("sizing.alarm_fits", **alarm), icon=":material/check_circle:")

# The same server on the real engines, each by its own budget (kvcore.compare_engines).
ui.engine_table.engines_answer(
    model, gpu, context_tokens=context_tokens, gpus=tp, kv_bytes_per_value=kv_bytes_per_value, users=users
)

# The question leaves the overhead out and says so in its text ("only the weights and the KV cache take
# memory"); the metric beside it counts the overhead slider (tests/app/test_practice_widgets.py pins both).
with prediction:
    ui.practice.predict(
        "users_fit",
        stem="sizing",
        model=model,
        gpu=gpu,
        context_tokens=context_tokens,
        utilization=utilization,
        weights_dtype=weights_dtype,
        kv_dtype=kv_dtype,
        gpus=tp,
    )
lesson.takeaway(t("sizing.takeaway"))

# ---------------------------------------------------------------- the rule, step by step

st.subheader(t("sizing.steps_title"))
st.markdown(
    t(
        "sizing.steps",
        gpu=gpu.name,
        vram=lesson.mem(steps.memory_bytes),
        u=ui.num(f"{utilization:.2f}"),
        usable=lesson.mem(steps.usable_bytes),
        held_back=lesson.mem(steps.held_back_bytes),
        weights=lesson.mem(steps.weights_bytes),
        weights_dtype=weights_dtype,
        overhead=lesson.mem(steps.overhead_bytes),
        pool=lesson.pool_mem(steps.kv_pool_bytes),
        per_token=lesson.size(steps.bytes_per_token),
        tokens=tokens,
        users=ui.plural("users.count", users),
        each=each,
    )
)
if tp > 1:
    st.caption(t("sizing.tp_note", gpus=tp))


lang = ui.language()
lesson.formula(
    t("sizing.formula_symbolic"),
    r"\frac{"
    + rf"{lesson.latex_mem(steps.memory_bytes)} \cdot {latex_number(round(utilization, 2), lang)}"
    + rf" - {lesson.latex_mem(steps.weights_bytes)} - {lesson.latex_mem(steps.overhead_bytes)}"
    + r"}{"
    + lesson.latex_size(steps.bytes_per_token)
    + (
        rf"}} = \mathbf{{{latex_number(steps.pool_tokens, lang)}}}"
        if steps.fits
        else rf"}} < 0 \Rightarrow \text{{{t('lesson.does_not_fit')}}}"
    ),
)
lesson.formula(
    t("sizing.formula_each_symbolic"),
    rf"\frac{{{latex_number(steps.pool_tokens, lang)}}}{{{users}}}"
    + rf" = \mathbf{{{latex_number(steps.tokens_per_user, lang)}}}",
)
if abs(really_each - steps.tokens_per_user) > max(1.0, 0.01 * steps.tokens_per_user) and steps.fits:
    st.info(
        t(
            "sizing.architecture_note",
            model=model.name,
            each=each,
            really=ui.num(format_tokens(really_each)),
            attention=model.attention_type,
        ),
        icon=":material/architecture:",
    )

# ---------------------------------------------------------------- context per user against users

st.subheader(t("sizing.users_title"))
st.markdown(t("sizing.users_text"))
users_figure = lesson.figure(
    context_per_user_figure,
    model=model,
    steps=steps,
    expected_context_tokens=context_tokens,
    bytes_per_value=kv_bytes_per_value,
    tp=tp,
    separators=ui.separators(),
    labels={
        "title": t("sizing.users_chart_title"),
        "subtitle": t("sizing.users_chart_subtitle", model=model.name, gpu=gpu.name, tokens=tokens),
        "x_title": t("sizing.users_axis"),
        "y_title": t("sizing.context_axis"),
        "seed_rule": t("sizing.curve_seed_rule"),
        "fitting": t("sizing.curve_fitting", maximum=ui.num(format_tokens(model.max_position_embeddings))),
        "expected": t("sizing.curve_expected"),
        "current": t("sizing.curve_current"),
        "users_fit": t("sizing.curve_users_fit"),
        "users": t("sizing.hover_users"),
        "tokens": t("chart.tokens"),
    },
)
lesson.chart(users_figure, key="sz_users_chart")

# ---------------------------------------------------------------- the dashboard's "max context"

st.subheader(t("sizing.dashboard_title"))
shares = {
    "tokens": tokens,
    "long": ui.num(format_tokens(long_tokens)),
    "long_share": ui.num(percent(long_share, decimals=0)) if steps.fits else "∞",
    "declared": ui.num(format_tokens(model.max_position_embeddings)),
    "declared_share": ui.num(percent(declared_share, decimals=0)) if steps.fits else "∞",
}
st.markdown(
    t(
        "sizing.dashboard_text",
        seed_tokens=ui.num(format_tokens(DASHBOARD.pool_tokens)),
        seed_long=ui.num(format_tokens(LONG_USER_TOKENS)),
        model=model.name,
        seed_pool=lesson.mem(dashboard_pool),
        seed_share=ui.num(percent(dashboard_share, decimals=0)),
        **shares,
    )
)
st.markdown(t("sizing.declared_text", **shares))
st.markdown(t("sizing.preemption_text"))

# ---------------------------------------------------------------- seed 000's outage, recomputed

st.subheader(t("sizing.story_title"))
story_model = ui.models()[seeds.SEED_000_MODEL_ID]
story_b = kvcore.bytes_per_value(STORY.kv_dtype)
story_pdf = float(kvcore.sequence_kv_bytes(story_model, context_tokens=STORY.pdf_tokens, bytes_per_value=story_b))
story_room = kvcore.kv_budget_bytes(memory_bytes=STORY.card_bytes, utilization=1.0, weights_bytes=STORY.weights_bytes)
story_users = int(kvcore.max_users(kv_pool_bytes=story_room, sequence_bytes=story_pdf))
st.markdown(
    t(
        "sizing.story_text",
        model=story_model.name,
        pdf_tokens=ui.num(format_tokens(STORY.pdf_tokens)),
        per_token=ui.num(format_bytes(kvcore.kv_bytes_per_token(story_model, bytes_per_value=story_b))),
        pdf=ui.num(format_bytes(story_pdf)),
        two=ui.num(format_bytes(2 * story_pdf)),
        card=f"{STORY.card_bytes / GiB:g}",
        model_size=f"{STORY.weights_bytes / GiB:g}",
        room=ui.num(format_bytes(story_room)),
        fit=story_users,
        next_user=story_users + 1,
    )
)
real = sizing_steps(
    story_model,
    memory_bytes=ui.gpus()[REAL.gpu_id].memory_bytes,
    utilization=REAL.utilization,
    weights_bytes=kvcore.model_weights_bytes(story_model, bytes_per_param=kvcore.bytes_per_value(REAL.weights_dtype)),
    overhead_bytes=REAL.overhead_bytes,
    bytes_per_value=story_b,
)
st.markdown(
    t(
        "sizing.story_here",
        gpu=ui.gpus()[REAL.gpu_id].name,
        weights=lesson.size(real.weights_bytes),
        overhead=lesson.size(real.overhead_bytes),
        both=lesson.size(real.weights_bytes + real.overhead_bytes),
        u=ui.num(f"{real.utilization:.2f}"),
        pool=lesson.size(real.kv_pool_bytes),
        tokens=ui.num(format_tokens(real.pool_tokens)),
        fit=int(kvcore.max_users(kv_pool_bytes=real.kv_pool_bytes, sequence_bytes=story_pdf)),
        maximum=ui.num(format_tokens(story_model.max_position_embeddings)),
        full=lesson.size(
            float(
                kvcore.sequence_kv_bytes(
                    story_model, context_tokens=story_model.max_position_embeddings, bytes_per_value=story_b
                )
            )
        ),
    )
)

glossary.terms_used("sizing")
