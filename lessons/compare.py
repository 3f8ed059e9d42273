"""Compare two setups: one model on some GPUs against another, side by side, and what differs most.

Widgets → kvcore (``ui.comparison.measured``, kept per setup) → figure → text. Every number shown
comes from a kvcore call, the ones /sizing makes: a server's budget per GPU from the shared defaults
(``kvcore.DEFAULT_ASSUMPTIONS``: u = 0.9, 1 GiB of overhead per GPU), tensor parallelism splitting the
weights and the KV heads over the GPUs (an MLA latent is kept whole on each), and /decode_speed's time
per token at the datasheet bound (``kvcore.DEFAULT_MFU``, ``kvcore.DEFAULT_MBU``). Setup A starts from
the sidebar's model and GPU, setup B from the same with an FP8 KV cache.
"""

import math

import streamlit as st

import kvcore
import ui
from charts.compare import compare_figure
from charts.formatting import percent, plain, times
from kvcore.units import format_bandwidth, format_seconds, format_tokens
from ui import glossary, lesson, t
from ui.comparison import ASSUMPTIONS, Figures, Setup, measured
from ui.errors import error_text

lesson.rerun_alone(__file__)

KV_DTYPES = ("bf16", "fp16", "fp8", "int8")
#: Weight formats offered; the model's own (models.csv's weights_dtype) is added and is the default.
WEIGHTS_DTYPES = ("bf16", "fp8", "int8", "int4")
MAX_USERS = 256
#: The quantities the "largest difference" is looked for among, in the table's order → how the text names each.
RANKED = {
    "weights": "compare.what_weights",
    "kv": "compare.what_kv",
    "total": "compare.what_total",
    "context": "compare.what_context",
    "users": "compare.what_users",
    "tpot": "compare.what_tpot",
}


def setup_controls(side: str, keys: dict[str, str], *, model_id: str, gpu_id: str, kv_dtype: str) -> Setup:
    """Setup `side`'s controls (model, GPU, GPU count, formats, context, users) under `keys`; the defaults given."""
    catalogue, cards = ui.models(), ui.gpus()
    st.subheader(t("compare.setup", side=side.upper()))
    chosen_model = lesson.picker(
        t("compare.model"), key=keys["model"], options=by_name(catalogue), default=model_id, format_func=model_name
    )
    model = catalogue[chosen_model]
    chosen_gpu = lesson.picker(
        t("compare.gpu"), key=keys["gpu"], options=by_name(cards), default=gpu_id, format_func=gpu_name
    )
    gpus = lesson.choice(
        t("compare.gpus"), key=keys["gpus"], options=lesson.tp_sizes(model), default=1, help=t("compare.gpus_help")
    )
    own = model.weights_dtype
    weights_dtype = lesson.choice(
        t("compare.weights_dtype"),
        key=keys["weights"],
        options=WEIGHTS_DTYPES if own in WEIGHTS_DTYPES else (*WEIGHTS_DTYPES, own),
        default=own,
        help=t("compare.weights_dtype_help", dtype=own),
    )
    kv = lesson.choice(t("compare.kv_dtype"), key=keys["kv"], options=KV_DTYPES, default=kv_dtype)
    low, high, step, default_context = ui.context_range(model)
    context_tokens = lesson.slider(
        t("compare.context"),
        key=keys["context"],
        min_value=low,
        max_value=high,
        value=default_context,
        step=step,
        help=t("compare.context_help", maximum=ui.num(format_tokens(high))),
    )
    users = lesson.slider(
        t("compare.users"), key=keys["users"], min_value=1, max_value=MAX_USERS, value=1, help=t("compare.users_help")
    )
    return Setup(model, cards[chosen_gpu], gpus, weights_dtype, kv, context_tokens, users)


def by_name(specs: dict[str, kvcore.ModelSpec] | dict[str, kvcore.GpuSpec]) -> list[str]:
    """The ids of `specs` in the order of their names: two pickers of some fifty entries each, easy to scan."""
    return sorted(specs, key=lambda spec_id: specs[spec_id].name.casefold())


def model_name(model_id: str) -> str:
    return ui.model_label(ui.models()[model_id])


def gpu_name(gpu_id: str) -> str:
    card = ui.gpus()[gpu_id]
    return t("sidebar.gpu_option", name=card.name, memory=lesson.mem(card.memory_bytes, decimals=0))


def values(shown: Figures) -> dict[str, float]:
    """The compared quantities of one setup, by name (``RANKED``)."""
    return {
        "weights": shown.usage.weights_bytes,
        "kv": shown.usage.kv_cache_bytes,
        "total": shown.usage.total_bytes,
        "context": shown.longest_tokens,
        "users": float(shown.users_that_fit),
        "tpot": shown.tpot_s,
    }


def texts(shown: Figures) -> dict[str, str]:
    """The compared quantities of one setup as the page writes them, by name (``RANKED``)."""
    return {
        "weights": lesson.mem(shown.usage.weights_bytes),
        "kv": lesson.mem(shown.usage.kv_cache_bytes),
        "total": lesson.mem(shown.usage.total_bytes),
        "context": context_text(shown),
        "users": str(shown.users_that_fit),
        "tpot": ui.num(format_seconds(shown.tpot_s)),
    }


def apart(a: float, b: float) -> float:
    """How far apart two figures are, as the size of B ÷ A in either direction (0: equal; inf: one is zero)."""
    if a == b:
        return 0.0
    if a <= 0 or b <= 0:
        return math.inf
    return abs(math.log(b / a))


def ratio_text(a: float, b: float) -> str:
    """B against A: '0.5× (−50 %)', the change in percent while B is less than twice A ('15×' past it).

    'same' when equal, '—' when A is zero.
    """
    if a == b:
        return t("compare.same")
    if a <= 0:
        return "—"
    seps = ui.separators()
    factor = times(b / a, seps, decimals=2, trim_zeros=True)
    if b >= 2 * a:
        return factor
    change = percent(b / a - 1, seps, decimals=0, spaced=True)
    return f"{factor} ({'+' if b > a else ''}{change.replace('-', '−')})"


def context_text(shown: Figures) -> str:
    tokens = ui.num(format_tokens(shown.longest_tokens))
    return t("compare.whole_window", tokens=tokens) if shown.longest_tokens >= shown.limit_tokens else tokens


def dtype_text(dtype: str) -> str:
    """A format and the bytes per value it stores: 'fp8, 1 byte'."""
    stored = kvcore.bytes_per_value(dtype)
    return t(
        "compare.dtype_bytes",
        dtype=dtype,
        bytes=ui.plural("compare.bytes", 1 if stored == 1 else 2, plain(stored, ui.separators())),
    )


def explanation(name: str, setups: dict[str, Setup], figures: dict[str, Figures]) -> str:
    """Why the quantity `name` differs: what it is made of, with both setups' numbers."""
    one, two = setups["a"], setups["b"]
    a, b = figures["a"], figures["b"]
    if name == "weights":
        return t(
            "compare.why_weights",
            a_dtype=dtype_text(one.weights_dtype),
            b_dtype=dtype_text(two.weights_dtype),
            a_gpus=ui.plural("gpus.count", one.gpus),
            b_gpus=ui.plural("gpus.count", two.gpus),
        )
    if name == "kv":
        return t(
            "compare.why_kv",
            a_per_token=lesson.size(a.per_token_bytes),
            b_per_token=lesson.size(b.per_token_bytes),
            a_kv=dtype_text(one.kv_dtype),
            b_kv=dtype_text(two.kv_dtype),
        )
    if name == "total":
        return t(
            "compare.why_total",
            a_weights=lesson.mem(a.usage.weights_bytes),
            b_weights=lesson.mem(b.usage.weights_bytes),
            a_kv=lesson.mem(a.usage.kv_cache_bytes),
            b_kv=lesson.mem(b.usage.kv_cache_bytes),
        )
    if name == "tpot":
        return t(
            "compare.why_tpot",
            a_read=lesson.mem(a.read_bytes),
            b_read=lesson.mem(b.read_bytes),
            a_bandwidth=ui.num(format_bandwidth(one.gpu.bandwidth_bytes_per_s)),
            b_bandwidth=ui.num(format_bandwidth(two.gpu.bandwidth_bytes_per_s)),
            a_gpus=ui.plural("gpus.count", one.gpus),
            b_gpus=ui.plural("gpus.count", two.gpus),
        )
    return t(  # the longest context and the users that fit: the room left for the cache, and a token's cost
        "compare.why_room",
        a_room=lesson.pool_mem(a.room_bytes),
        b_room=lesson.pool_mem(b.room_bytes),
        a_per_token=lesson.size(a.per_token_bytes),
        b_per_token=lesson.size(b.per_token_bytes),
    )


# ---------------------------------------------------------------- the page

sidebar_model, sidebar_gpu = ui.current_model(), ui.current_gpu()
KEYS = {
    "a": {
        "model": "cmp_a_model", "gpu": "cmp_a_gpu", "gpus": "cmp_a_gpus", "weights": "cmp_a_weights",
        "kv": "cmp_a_kv", "context": "cmp_a_context", "users": "cmp_a_users",
    },
    "b": {
        "model": "cmp_b_model", "gpu": "cmp_b_gpu", "gpus": "cmp_b_gpus", "weights": "cmp_b_weights",
        "kv": "cmp_b_kv", "context": "cmp_b_context", "users": "cmp_b_users",
    },
}  # fmt: skip

lesson.header(t("compare.title"), t("compare.intro"))
lesson.scenario_buttons("compare", key="cmp_presets")

columns = dict(zip(KEYS, st.columns(2, gap="large"), strict=True))
setups: dict[str, Setup] = {}
for side, column in columns.items():
    with column:
        setups[side] = setup_controls(
            side,
            KEYS[side],
            model_id=sidebar_model.id,
            gpu_id=sidebar_gpu.id,
            kv_dtype="bf16" if side == "a" else "fp8",
        )

figures: dict[str, Figures] = {}
for side, setup in setups.items():
    try:
        figures[side] = measured(setup)
    except ValueError as error:
        st.error(t("compare.side_error", side=side.upper(), detail=error_text(error)))
        st.stop()

a, b = figures["a"], figures["b"]
unit = lesson.memory_unit()

# ---------------------------------------------------------------- does each fit?

for side, column in columns.items():
    shown, setup = figures[side], setups[side]
    words = {
        "side": side.upper(),
        "total": lesson.mem(shown.usage.total_bytes),
        "usable": lesson.mem(shown.usable_bytes),
        "gpus": ui.plural("gpus.count", setup.gpus),
        "fixed": lesson.mem(shown.usage.weights_bytes + shown.usage.overhead_bytes),
    }
    with column:
        if shown.room_bytes < 0:
            st.error(t("compare.no_room", **words), icon=":material/block:")
        elif shown.fits:
            st.success(t("compare.fits", **words), icon=":material/check_circle:")
        else:
            st.warning(t("compare.does_not_fit", **words), icon=":material/warning:")

# ---------------------------------------------------------------- memory per GPU, side by side

figure = lesson.figure(
    compare_figure,
    names=[side.upper() for side in setups],
    usage=[shown.usage for shown in figures.values()],
    usable_bytes=[shown.usable_bytes for shown in figures.values()],
    separators=ui.separators(),
    unit_bytes=lesson.memory_unit_bytes(),
    unit=unit,
    labels={
        "title": t("compare.chart_title"),
        "subtitle": t(
            "compare.chart_subtitle",
            **{
                side: t("compare.chart_setup", model=setup.model.name, n=setup.gpus, gpu=setup.gpu.name)
                for side, setup in setups.items()
            },
        ),
        "x_title": "",
        "y_title": t("compare.chart_axis", unit=unit),
        "weights": t("chart.weights"),
        "overhead": t("compare.bar_overhead"),
        "kv_cache": t("chart.kv_cache"),
        "usable": t("compare.bar_usable", u=ui.num(percent(ASSUMPTIONS.utilization, decimals=0))),
    },
)
lesson.chart(figure, key="cmp_chart")
st.caption(
    t(
        "compare.assumptions",
        u=ui.num(percent(ASSUMPTIONS.utilization, decimals=0)),
        overhead=lesson.mem(ASSUMPTIONS.overhead_bytes),
    )
)

# ---------------------------------------------------------------- the table: A, B, and B against A

a_texts, b_texts = texts(a), texts(b)
rows = [
    (t("compare.row_weights"), a_texts["weights"], b_texts["weights"], "weights"),
    (t("compare.row_kv"), a_texts["kv"], b_texts["kv"], "kv"),
    (t("compare.row_overhead"), lesson.mem(a.usage.overhead_bytes), lesson.mem(b.usage.overhead_bytes), None),
    (t("compare.row_total"), a_texts["total"], b_texts["total"], "total"),
    (t("compare.row_usable"), lesson.mem(a.usable_bytes), lesson.mem(b.usable_bytes), None),
    (t("compare.row_fits"), *(t("compare.yes" if shown.fits else "compare.no") for shown in (a, b)), None),
    (t("compare.row_context"), a_texts["context"], b_texts["context"], "context"),
    (t("compare.row_users"), a_texts["users"], b_texts["users"], "users"),
    (t("compare.row_tpot"), a_texts["tpot"], b_texts["tpot"], "tpot"),
]
a_values, b_values = values(a), values(b)
table = [
    f"| {t('compare.col_what')} | A | B | {t('compare.col_ratio')} |",
    "| --- | ---: | ---: | ---: |",
    *(
        f"| {what} | {in_a} | {in_b} | {ratio_text(a_values[name], b_values[name]) if name else ''} |"
        for what, in_a, in_b, name in rows
    ),
]
st.subheader(t("compare.table_title"))
st.markdown("\n".join(table))
st.caption(
    t(
        "compare.table_note",
        a_users=ui.plural("users.count", setups["a"].users),
        b_users=ui.plural("users.count", setups["b"].users),
        a_context=ui.num(format_tokens(setups["a"].context_tokens)),
        b_context=ui.num(format_tokens(setups["b"].context_tokens)),
    )
)

# ---------------------------------------------------------------- the largest difference, in words

st.subheader(t("compare.largest_title"))
distances = {name: apart(a_values[name], b_values[name]) for name in RANKED}
largest = max(RANKED, key=distances.__getitem__)
setup_a, setup_b = setups["a"], setups["b"]
#: What B sets otherwise than A: (the sentence's key, A's value, B's value).
settings = [
    ("compare.change_model", setup_a.model.name, setup_b.model.name),
    ("compare.change_gpu", setup_a.gpu.name, setup_b.gpu.name),
    ("compare.change_gpus", setup_a.gpus, setup_b.gpus),
    ("compare.change_weights", setup_a.weights_dtype, setup_b.weights_dtype),
    ("compare.change_kv", setup_a.kv_dtype, setup_b.kv_dtype),
    ("compare.change_context", *(ui.num(format_tokens(s.context_tokens)) for s in (setup_a, setup_b))),
    ("compare.change_users", setup_a.users, setup_b.users),
]
changed = [t(key, a=in_a, b=in_b) for key, in_a, in_b in settings if in_a != in_b]
if distances[largest] == 0:
    st.markdown(t("compare.no_difference" if not changed else "compare.same_figures"))
else:
    in_a, in_b = a_texts[largest], b_texts[largest]
    st.markdown(
        t(
            "compare.largest",
            what=t(RANKED[largest]),
            a=in_a,
            b=in_b,
            ratio=ratio_text(a_values[largest], b_values[largest]),
        )
    )
    st.markdown(explanation(largest, setups, figures))
    if changed:
        st.markdown(t("compare.changes", changes="; ".join(changed)))

lesson.takeaway(t("compare.takeaway"))

# ---------------------------------------------------------------- the formula, with both setups' numbers

st.subheader(t("compare.formula_title"))
st.markdown(t("compare.formula_legend"))
substituted = []
for side, shown in figures.items():
    usage = shown.usage
    verdict = r"\le" if shown.fits else ">"
    substituted.append(
        rf"\text{{{side.upper()}}}:&\ {lesson.latex_mem(usage.weights_bytes)}"
        rf" + {lesson.latex_mem(usage.kv_cache_bytes)}"
        rf" + {lesson.latex_mem(usage.overhead_bytes)} = \mathbf{{{lesson.latex_mem(usage.total_bytes)}}}"
        rf" {verdict} {lesson.latex_mem(shown.usable_bytes)}"
    )
lesson.formula(t("compare.formula_symbolic"), r"\begin{aligned}" + r" \\ ".join(substituted) + r"\end{aligned}")

glossary.terms_used("compare")
