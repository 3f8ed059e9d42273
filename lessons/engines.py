"""The engine's KV pool: the same model and GPU on vLLM, SGLang, llama.cpp, Ollama and TensorRT-LLM.

Widgets → kvcore → figures → text. Every number shown comes from kvcore.engines
(each engine's own module follows that engine's source).
"""

import streamlit as st

import kvcore
import ui
from charts.engines import engines_figure
from charts.formatting import count
from kvcore.units import format_tokens
from ui import glossary, lesson, t
from ui.formula import latex_number

lesson.rerun_alone(__file__)

GPU_COUNTS = (1, 2, 4, 8)
CACHE_BITS = (16, 8)
CACHE_KEYS = {16: "engines.cache_16", 8: "engines.cache_8"}
#: An engine → the sentence that says how it sizes its cache.
RULE_KEYS = {
    "vllm": "engines.rule_vllm",
    "sglang": "engines.rule_sglang",
    "llama.cpp": "engines.rule_llamacpp",
    "ollama": "engines.rule_ollama",
    "trtllm": "engines.rule_trtllm",
}
#: An engine → the formula of its pool (symbols only; the numbers come from its start-up).
POOL_FORMULAS = {
    "vllm": r"\text{pool} = M \cdot u - W - A - N - G",
    "sglang": r"\text{pool} = F_{\text{after weights}} - M \cdot (1 - f_{\text{static}})",
    "llama.cpp": r"\text{cache} = \sum_{\text{layers}} \text{cells} \cdot (K_{\text{row}} + V_{\text{row}})",
    "ollama": r"\text{cache} = \sum_{\text{layers}} \text{cells} \cdot (K_{\text{row}} + V_{\text{row}})",
    "trtllm": r"\text{pool} = f_{\text{free}} \cdot F_{\text{after load}}",
}

model = ui.current_model()
gpu = ui.current_gpu()
names = kvcore.ENGINE_NAMES

lesson.header(t("engines.title"), t("engines.intro"))

controls, results = st.columns([1, 2], gap="large")

with controls:
    longest = model.max_position_embeddings
    context = lesson.slider(
        t("engines.context"),
        key="eg_context",
        min_value=256,
        max_value=longest,
        value=min(8192, longest),
        step=256,
        help=t("engines.context_help"),
    )
    gpus = lesson.select_slider(
        t("engines.gpus"), key="eg_gpus", options=GPU_COUNTS, value=1, help=t("engines.gpus_help")
    )
    cache_bits = lesson.choice(
        t("engines.cache"),
        key="eg_cache",
        options=CACHE_BITS,
        default=16,
        format_func=lambda bits: t(CACHE_KEYS[bits]),
        help=t("engines.cache_help"),
    )
    engine = lesson.choice(
        t("engines.engine"),
        key="eg_engine",
        options=kvcore.ENGINES,
        default="vllm",
        format_func=lambda name: names[name],
        help=t("engines.engine_help"),
    )

try:
    # Every engine at its own defaults, then the chosen one (kvcore.engines.compare_engines).
    rows = kvcore.compare_engines(model, gpu, context_tokens=context, gpus=gpus, cache_bits=cache_bits)
except ValueError as error:
    lesson.stop_with(error)

chosen_index = next(index for index, row in enumerate(rows) if row.engine == engine)
chosen = rows[chosen_index]
startup = chosen.startup
unit = lesson.memory_unit()

with results:
    row = st.columns(3)
    row[0].metric(t("engines.metric_pool", engine=names[engine]), lesson.mem(startup.kv_pool_bytes))
    row[1].metric(t("engines.metric_tokens"), ui.num(format_tokens(startup.tokens)))
    row[2].metric(t("engines.metric_users", length=ui.num(format_tokens(context))), ui.num(count(chosen.users)))
    figure = engines_figure(
        names=[names[item.engine] for item in rows],
        pool_bytes=[item.startup.kv_pool_bytes for item in rows],
        users=[item.users for item in rows],
        fits=[item.startup.fits for item in rows],
        chosen=chosen_index,
        separators=ui.separators(),
        unit_bytes=lesson.memory_unit_bytes(),
        unit=unit,
        labels={
            "title": t("engines.chart_title", length=ui.num(format_tokens(context))),
            "subtitle": t("engines.chart_subtitle", model=model.name, gpu=gpu.name, gpus=ui.plural("gpus.count", gpus)),
            "x_title": t("engines.chart_axis", unit=unit),
            "y_title": "",
            "users": t("engines.chart_users"),
            "refuses": t("engines.chart_refuses"),
            "chosen": names[engine],
        },
    )
    lesson.chart(figure, key="eg_chart")

# ---------------------------------------------------------------- why they differ

st.subheader(t("engines.why_title"))
st.markdown(
    "\n".join(
        t(
            RULE_KEYS[item.engine],
            release=item.startup.release,
            pool=lesson.mem(item.startup.kv_pool_bytes),
            tokens=ui.num(format_tokens(item.startup.tokens)),
            users=ui.plural("users.count", item.users),
        )
        for item in rows
    )
)

# ---------------------------------------------------------------- the chosen engine's start-up

st.subheader(t("engines.lines_title", engine=names[engine], release=startup.release))
st.code("\n".join(startup.lines()), language="text")
if startup.terms:
    st.markdown(
        "\n".join(
            t("engines.term", name=term.name, size=lesson.mem(term.bytes), source=term.source) for term in startup.terms
        )
    )
if not startup.fits:
    st.warning(t("engines.does_not_start", engine=names[engine]), icon=":material/block:")

lesson.takeaway(t("engines.takeaway"))

# ---------------------------------------------------------------- the formula

lang = ui.language()
lesson.formula(POOL_FORMULAS[engine], rf"\text{{{names[engine]}}}: {lesson.latex_mem(startup.kv_pool_bytes)}")
concurrency = startup.max_concurrency(context) if startup.fits else 0.0
lesson.formula(
    r"\text{users} = \left\lfloor \text{concurrency}(\text{context}) \right\rfloor",
    rf"\left\lfloor {latex_number(round(concurrency, 2), lang)} \right\rfloor"
    rf" = \mathbf{{{latex_number(chosen.users, lang)}}}",
)
st.caption(t("engines.users_caption"))

glossary.terms_used("engines")
