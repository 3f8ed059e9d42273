"""Bring your own model: read a config.json the way the model's own code does, and see what others get wrong.

Three routes to a config: paste it, upload it, or name a Hugging Face repository
(fetched only when asked, and only when the machine is online). kvcore reads it
(``hf_config.read_config_text``: layer kinds, KV heads, head_dim, MLA latent,
parameters) and says what it had to assume. "Use in every lesson" adds the model
to the session's picker and puts its code in the URL, so a shared link carries it.
Before any config is read, the page shows the sidebar's model.
"""

import dataclasses
import html

import streamlit as st

import kvcore
import ui
import ui.practice
from charts.formatting import times
from charts.import_model import readings_figure
from course import mistakes
from kvcore import hf_config
from kvcore.model_code import model_to_code
from kvcore.units import format_bytes, format_quantity, format_tokens
from ui import glossary, hub, lesson, t
from ui.formula import STATE_DTYPE, formula_terms, result_latex

lesson.rerun_alone(__file__)

SOURCES = ("paste", "upload", "hub")
SOURCE_LABELS = {
    "paste": "import_model.source_paste",
    "upload": "import_model.source_upload",
    "hub": "import_model.source_hub",
}
KV_DTYPES = ("bf16", "fp8", "int4")
#: The last config read in this session, and where it came from (never in the URL: it can be large).
TEXT_KEY = "_im_config_text"
ORIGIN_KEY = "_im_config_origin"
USE_KEY = "_im_use_model"
MAX_UPLOAD_BYTES = hub.MAX_CONFIG_BYTES
UNNAMED = "config"
#: The catalogue's model with Falcon's "new decoder architecture" (KV groups copied per head in transformers).
FALCON_NEW_DECODER = "falcon-40b"

#: ConfigError codes (kvcore.hf_config) → what to change, in words.
ERROR_TEXTS = {
    "invalid_json": "import_model.error_invalid_json",
    "not_an_object": "import_model.error_not_an_object",
    "too_large": "import_model.error_too_large",
    "missing_field": "import_model.error_missing_field",
    "wrong_type": "import_model.error_wrong_type",
    "out_of_range": "import_model.error_out_of_range",
    "inconsistent": "import_model.error_inconsistent",
    "unknown_value": "import_model.error_unknown_value",
}
#: Assumption codes (kvcore.hf_config) → a sentence.
ASSUMPTION_TEXTS = {
    "unknown_architecture": "import_model.assumed_unknown_architecture",
    "default_value": "import_model.assumed_default_value",
    "head_dim_from_hidden_size": "import_model.assumed_head_dim_from_hidden_size",
    "kv_heads_default_mha": "import_model.assumed_kv_heads_default_mha",
    "weights_dtype_default": "import_model.assumed_weights_dtype_default",
    "quantization_not_read": "import_model.assumed_quantization_not_read",
    "sliding_window_ignored": "import_model.assumed_sliding_window_ignored",
    "window_covers_context": "import_model.assumed_window_covers_context",
    "params_not_counted": "import_model.assumed_params_not_counted",
    "mtp_not_counted": "import_model.assumed_mtp_not_counted",
}
#: HubError codes (ui.hub) → a sentence that says what to do instead.
HUB_TEXTS = {
    "bad_id": "import_model.hub_bad_id",
    "offline": "import_model.hub_offline",
    "gated": "import_model.hub_gated",
    "not_found": "import_model.hub_not_found",
    "too_large": "import_model.hub_too_large",
    "failed": "import_model.hub_failed",
}
KIND_NAMES = {
    "full": "import_model.kind_full",
    "sliding": "import_model.kind_sliding",
    "mla": "import_model.kind_mla",
    "linear": "import_model.kind_linear",
}
#: kvcore.mistakes readings → their names.
MISTAKE_NAMES = {
    "ignoring_kv_heads": "import_model.mistake_ignoring_kv_heads",
    "head_dim_from_hidden": "import_model.mistake_head_dim_from_hidden",
    "mla_with_factor_two": "import_model.mistake_mla_with_factor_two",
    "sliding_as_full": "import_model.mistake_sliding_as_full",
}


def remember(text: str, origin: str) -> None:
    """Keep a config's text and a name for it (may be "") for this session's reruns (reading again is cheap)."""
    st.session_state[TEXT_KEY] = text
    st.session_state[ORIGIN_KEY] = origin


def read(text: str, origin: str) -> hf_config.ConfigReading:
    """kvcore's reading; the model is named after `origin`, else the config's own name, else its architecture."""
    reading = hf_config.read_config_text(text, name=origin or UNNAMED)
    if reading.model.name == UNNAMED:
        named = kvcore.with_changes(reading.model, id=reading.architecture, name=reading.architecture)
        reading = dataclasses.replace(reading, model=named)
    return reading


def use_model(text: str, origin: str) -> None:
    """Callback of "use in every lesson": add the model to the catalogue and select it in the sidebar."""
    st.session_state[ui.MODEL_KEY] = ui.adopt_model(read(text, origin).model)
    st.session_state[USE_KEY] = True


lesson.header(t("import_model.title"), t("import_model.intro"))
# "Predict, then reveal": the question stands above the chart; it is filled in once the values are known.
prediction = st.container()

# Not in the URL: a link shares the model (its code), not the route a config came in by.
source = (
    st.segmented_control(
        t("import_model.source"),
        SOURCES,
        default="paste",
        format_func=lambda option: t(SOURCE_LABELS[option]),
        key="im_source",
        required=True,
        width="stretch",
    )
    or "paste"
)
if source == "paste":
    with st.form("im_paste_form", border=False):
        pasted = st.text_area(
            t("import_model.paste_label"), height=180, key="im_paste", placeholder=t("import_model.paste_placeholder")
        )
        name = st.text_input(t("import_model.name_label"), key="im_name", max_chars=60, placeholder="my-model-8b")
        if st.form_submit_button(t("import_model.read"), type="primary"):
            remember(pasted, name.strip())
elif source == "upload":
    upload = st.file_uploader(t("import_model.upload_label"), type=["json"], key="im_upload")
    if upload is not None:
        if upload.size > MAX_UPLOAD_BYTES:
            st.error(t("import_model.upload_too_large", size=ui.num(format_bytes(upload.size))))
        else:
            stem = upload.name.rsplit(".", 1)[0]
            remember(upload.getvalue().decode("utf-8", errors="replace"), "" if stem == "config" else stem)
else:
    with st.form("im_hub_form", border=False):
        repo_id = st.text_input(t("import_model.hub_label"), key="im_hub_id", placeholder="Qwen/Qwen3-8B")
        if st.form_submit_button(t("import_model.fetch"), type="primary"):
            try:
                with st.spinner(t("import_model.fetching", repo=ui.shown_param(repo_id))):
                    remember(hub.fetch_config_text(repo_id), repo_id.strip())
            except hub.HubError as error:
                st.error(t(HUB_TEXTS[error.code], repo=ui.shown_param(repo_id.strip()), detail=error.detail))
    st.caption(t("import_model.hub_note"))

# ---------------------------------------------------------------- the reading

reading = None
text = st.session_state.get(TEXT_KEY)
origin = st.session_state.get(ORIGIN_KEY, "")
if text:
    try:
        reading = read(text, origin)
    except hf_config.ConfigError as error:
        what = t(ERROR_TEXTS.get(error.code, "import_model.error_other"), field=error.field or "?")
        st.error(t("import_model.error", what=what, detail=str(error)))

if reading is not None:
    model = reading.model
    family = t(
        "import_model.known" if reading.known else "import_model.unknown", architecture=ui.literal(reading.architecture)
    )
    st.success(t("import_model.read_ok", origin=ui.literal(model.name), family=family))
    if reading.assumptions:
        st.markdown(t("import_model.assumed_title"))
        for assumption in reading.assumptions:
            sentence = t(
                ASSUMPTION_TEXTS.get(assumption.code, "import_model.assumed_other"),
                field=assumption.field,
                value=ui.literal(str(assumption.value)),
            )
            st.markdown(f"- {sentence}")
    else:
        st.caption(t("import_model.assumed_nothing"))
    st.button(
        t("import_model.use", name=ui.literal(model.name)),
        key="im_use",
        type="primary",
        on_click=use_model,
        args=(text, origin),
        icon=":material/check_circle:",
    )
    if st.session_state.pop(USE_KEY, False):
        st.rerun(scope="app")  # the sidebar's picker must show the new model
else:
    model = ui.current_model()
    st.info(t("import_model.showing_sidebar_model", name=ui.model_label(model)), icon=":material/info:")

# ---------------------------------------------------------------- what the cache costs, read right and wrong

low, high, step, default_context = ui.context_range(model)
controls, results = st.columns([1, 2], gap="large")
with controls:
    context_tokens = lesson.slider(
        t("import_model.context"), key="im_context", min_value=low, max_value=high, value=default_context, step=step
    )
    kv_dtype = lesson.choice(t("import_model.kv_dtype"), key="im_kv_dtype", options=KV_DTYPES, default="bf16")
b = kvcore.bytes_per_value(kv_dtype)
try:
    per_token = kvcore.kv_bytes_per_token(model, bytes_per_value=b)
    sequence = float(kvcore.sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=b))
    wrong = mistakes.wrong_readings(model)
except ValueError as error:
    lesson.stop_with(error)

with results:
    row = st.columns(3)
    row[0].metric(t("import_model.attention"), model.attention_type, help=t("import_model.attention_help"))
    row[1].metric(t("import_model.per_token"), lesson.size(per_token))
    row[2].metric(t("import_model.per_sequence", tokens=ui.num(format_tokens(context_tokens))), lesson.size(sequence))
    if model.total_params:
        total = ui.num(format_quantity(model.total_params / 1e9))
        active = ui.num(format_quantity((model.active_params or model.total_params) / 1e9))
        key = "import_model.params_moe" if model.is_moe else "import_model.params"
        st.markdown(t(key, total=total, active=active))

names = {name: t(MISTAKE_NAMES[name]) for name in wrong}
unit = lesson.memory_unit()
figure = lesson.figure(
    readings_figure,
    model=model,
    wrong=wrong,
    wrong_names=names,
    context_tokens=context_tokens,
    bytes_per_value=b,
    labels={
        "title": t("import_model.chart_title", name=html.escape(model.name)),  # Plotly reads tags in titles
        "subtitle": t("import_model.chart_subtitle", dtype=kv_dtype.upper()),
        "x_title": t("import_model.chart_x"),
        "y_title": t("import_model.chart_y", unit=unit),
        "right": t("import_model.chart_right"),
        "current": t("import_model.chart_current"),
        "tokens": t("import_model.tokens"),
    },
    separators=ui.separators(),
    unit_bytes=lesson.memory_unit_bytes(),
    unit=unit,
)
lesson.chart(figure, key="im_chart")

# The layers, as kvcore counts them: one formula per kind of layer, with this model's numbers.
st.subheader(t("import_model.layers_title"))
kinds = ", ".join(f"{t(KIND_NAMES[kind])} × {model.count(kind)}" for kind in kvcore.LAYER_KINDS if model.count(kind))
st.markdown(t("import_model.layers_text", layers=model.num_hidden_layers, kinds=kinds))
for term in formula_terms(model, context_tokens=context_tokens, concurrency=1, bytes_per_value=b, lang=ui.language()):
    lesson.formula(term.symbolic, term.substituted + result_latex(term.kv_bytes, ui.language(), decimal=unit == "GB"))
if model.count("linear"):
    st.caption(t("import_model.linear_state", dtype=STATE_DTYPE.upper()))

# What a careless calculator would say.
st.subheader(t("import_model.mistakes_title"))
if wrong:
    rows = []
    for name, spec in wrong.items():
        wrong_sequence = float(kvcore.sequence_kv_bytes(spec, context_tokens=context_tokens, bytes_per_value=b))
        rows.append(
            {
                t("import_model.col_reading"): names[name],
                t("import_model.col_per_token"): lesson.size(kvcore.kv_bytes_per_token(spec, bytes_per_value=b)),
                t("import_model.col_per_sequence"): lesson.size(wrong_sequence),
                t("import_model.col_ratio"): ui.num(times(wrong_sequence / sequence, decimals=2)) if sequence else "—",
            }
        )
    lesson.table(rows)
    st.markdown(t("import_model.mistakes_text"))
else:
    st.markdown(t("import_model.no_mistakes", name=ui.literal(model.name)))

# What a research framework holds is not always what a serving engine holds (tests/proof measures both).
with st.expander(t("import_model.transformers_title")):
    in_transformers = float(
        kvcore.transformers_cache.transformers_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=b)
    )
    st.markdown(
        t(
            "import_model.transformers_text",
            serving=lesson.size(sequence),
            transformers=lesson.size(in_transformers),
            version=kvcore.transformers_cache.TRANSFORMERS_VERSION,
        )
    )
    if model.count("sliding"):
        st.markdown(t("import_model.transformers_sliding", window=ui.num(format_tokens(model.sliding_window or 0))))
    if model.count("mla"):
        factor = kvcore.transformers_cache.mla_expansion_factor(model)
        st.markdown(t("import_model.transformers_mla", name=ui.literal(model.name), factor=ui.num(f"{factor:.0f}")))
    if model.count("linear"):
        st.markdown(t("import_model.transformers_linear"))
    falcon = ui.models()[FALCON_NEW_DECODER]
    factor = kvcore.transformers_cache.falcon_new_decoder_copy_factor(falcon)
    st.markdown(t("import_model.transformers_falcon", name=falcon.name, factor=ui.num(f"{factor:.0f}")))

with st.expander(t("import_model.share_title")):
    st.markdown(t("import_model.share_text"))
    st.code(f"?model={model_to_code(model)}", language=None)

with prediction:
    ui.practice.predict("bytes_per_token", stem="import_model", model=model, kv_dtype=kv_dtype)
lesson.takeaway(t("import_model.takeaway"))
glossary.terms_used("import_model")
