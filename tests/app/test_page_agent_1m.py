"""The 1M-token agent lesson: the seed's ledger computed, its controls wired to kvcore, its URL and presets."""

from __future__ import annotations

import pytest

import kvcore
from charts.formatting import memory
from i18n import LANGUAGES, NUMBER_SEPARATORS, localize_number, translate
from kvcore import agent
from kvcore.units import (
    format_bytes,
    format_bytes_decimal,
    format_gib,
    format_seconds,
    format_tokens,
    format_tokens_per_s,
)
from tests.app.helpers import metric, page_opener

PAGE = "lessons/agent_1m.py"
SEED = {"model": "llama-3.1-70b", "gpu": "h100-sxm"}


open_page = page_opener(PAGE)


def ledger_cell(app, row_key: str, **fill) -> tuple[str, str]:
    """(what the seed says, what kvcore computes) for one row of the ledger table."""
    table = app.table[0].value
    row = table.loc[translate("en", row_key, **fill)]
    return row[translate("en", "agent_1m.col_seed")], row[translate("en", "agent_1m.col_exact")]


def seed_ledger(models, gpus, **knobs) -> agent.Ledger:
    settings = {"context_tokens": 1_000_000, "shards": 8, **knobs}
    return agent.ledger(models["llama-3.1-70b"], gpus["h100-sxm"], **settings)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_runs_in_each_language_with_one_takeaway(app, lang):
    open_page(app, lang, **SEED)
    assert not app.exception and not app.error
    assert len([i for i in app.info if i.value.startswith(f"**{translate(lang, 'lesson.takeaway')}**")]) == 1


def test_moving_the_context_slider_changes_ms_per_token_by_what_kvcore_says(app, models, gpus):
    open_page(app, **SEED)
    before = metric(app, "agent_1m.metric_token")
    app.slider(key="ag_context").set_value(500_000).run()
    expected = seed_ledger(models, gpus, context_tokens=500_000).kv_token_s
    assert metric(app, "agent_1m.metric_token") == format_seconds(expected) != before


def test_the_seed_preset_reproduces_the_seeds_ledger(app, models, gpus):
    open_page(app)  # the sidebar's default model and GPU: the preset must switch them
    app.slider(key="ag_context").set_value(20_000).run()
    app.button(key="ag_presets_0").click().run()
    assert not app.exception
    assert (app.session_state["model"], app.session_state["gpu"]) == ("llama-3.1-70b", "h100-sxm")
    exact = seed_ledger(models, gpus)
    per_token = f"{format_tokens(exact.kv_bytes_per_token)} B = {format_bytes(exact.kv_bytes_per_token)}"
    assert ledger_cell(app, "agent_1m.row_per_token") == (
        "≈ 320 kB",
        f"{per_token} = {format_bytes_decimal(exact.kv_bytes_per_token)}",
    )
    assert ledger_cell(app, "agent_1m.row_cache")[1] == (
        f"{format_bytes_decimal(exact.cache_bytes)} = {format_gib(exact.cache_bytes)}"
    )
    assert ledger_cell(app, "agent_1m.row_token") == ("≈ 95 ms", format_seconds(exact.kv_token_s))
    assert ledger_cell(app, "agent_1m.row_rate")[1] == format_tokens_per_s(exact.kv_tokens_per_s)
    assert ledger_cell(app, "agent_1m.row_fit", gpu=gpus["h100-sxm"].name)[1] == translate(
        "en", "agent_1m.fit_value", fit=exact.gpus_to_fit, group=exact.tensor_parallel_group
    )
    assert ledger_cell(app, "agent_1m.row_sharded", gpus="8 GPUs")[0] == "≈ 12 ms"
    assert ledger_cell(app, "agent_1m.row_fleet")[1] == format_bytes_decimal(exact.fleet_kv_bytes)
    assert metric(app, "agent_1m.metric_sharded", gpus="8 GPUs") == format_seconds(exact.sharded_kv_token_s)


def test_the_seed_preset_shows_the_exact_figures_beside_the_seeds(app):
    open_page(app)
    app.button(key="ag_presets_0").click().run()
    # 327,680 B = 320 KiB; 327.68 GB = 305.18 GiB; 97.8 ms; 12.2 ms; 6 GPUs in a group of 8 (seed 004)
    table = app.table[0].value.to_string()
    for figure in ("327,680 B = 320 KiB = 327.68 kB", "327.68 GB = 305.18 GiB", "97.8 ms", "12.2 ms", "6 (smallest"):
        assert figure in table
    assert not any(c.value.startswith("Your settings differ") for c in app.caption)


def test_an_fp8_cache_halves_the_kv_time_as_kvcore_says(app, models, gpus):
    open_page(app, **SEED)
    app.button_group(key="ag_kv_dtype").set_value("fp8").run()
    assert metric(app, "agent_1m.metric_token") == format_seconds(
        seed_ledger(models, gpus, kv_bytes_per_value=1.0).kv_token_s
    )


def test_more_gpus_lower_the_sharded_time_as_kvcore_says(app, models, gpus):
    open_page(app, **SEED)
    app.select_slider(key="ag_gpus").set_value(16).run()
    expected = seed_ledger(models, gpus, shards=16).sharded_kv_token_s
    assert metric(app, "agent_1m.metric_sharded", gpus="16 GPUs") == format_seconds(expected)


def test_the_concentration_slider_drives_the_measured_top_share(app):
    open_page(app, **SEED)
    app.slider(key="ag_concentration").set_value(2.0).run()
    attention = agent.synthetic_attention(blocks=4096, layers=8, concentration=2.0)
    expected = agent.top_mass_share(attention, top_fraction=0.01).mean()
    assert metric(app, "agent_1m.metric_top") == f"{100 * expected:.1f} %"


def test_flat_attention_recommends_quantization(app):
    open_page(app, ag_concentration="0.0", **SEED)
    assert any(m.value.startswith("**Flat:**") for m in app.markdown)


def test_the_url_restores_the_controls(app, models, gpus):
    open_page(app, ag_context="250000", ag_kv_dtype="int4", ag_gpus="4", ag_keep="25", **SEED)
    assert app.slider(key="ag_context").value == 250_000
    assert (app.button_group(key="ag_kv_dtype").value, app.select_slider(key="ag_gpus").value) == ("int4", 4)
    assert app.slider(key="ag_keep").value == 25
    expected = seed_ledger(models, gpus, context_tokens=250_000, kv_bytes_per_value=0.5, shards=4)
    assert metric(app, "agent_1m.metric_sharded", gpus="4 GPUs") == format_seconds(expected.sharded_kv_token_s)


@pytest.mark.parametrize(("param", "value"), [("ag_context", "-5"), ("ag_kv_dtype", "fp3"), ("ag_gpus", "6")])
def test_a_bad_url_value_gives_a_notice_and_no_exception(app, param, value):
    open_page(app, **{param: value}, **SEED)
    assert not app.exception
    assert any(f"`{param}`" in info.value for info in app.info)


def test_a_model_that_cannot_be_split_runs_on_one_gpu_with_a_note(app):
    open_page(app, model="falcon-7b", gpu="t4")
    assert not app.exception and not app.error
    assert any("71 query heads" in caption.value for caption in app.caption)


@pytest.mark.parametrize(
    ("model", "gpu"),
    [("gpt2", "rtx-3060-12gb"), ("deepseek-v3", "h100-sxm"), ("gemma-3-27b", "m4-max-128gb"),
     ("qwen3-next-80b-a3b", "a100-80gb"), ("llama-3.1-405b", "rtx-4090")],
)  # fmt: skip
def test_tricky_models_and_gpus_run_without_an_error(app, model, gpu):
    open_page(app, model=model, gpu=gpu)
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_text_falls_back_to_its_raw_key(app, lang):
    open_page(app, lang, **SEED)
    assert not [m.value for m in [*app.markdown, *app.caption] if m.value.startswith("agent_1m.")]


# ---------------------------------------------------------------- trained sparse attention (issue 15)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_trained_sparse_attention_shows_kvcores_stored_and_read_bytes(app, models, gpus, lang):
    open_page(app, lang, **SEED)
    assert not app.exception
    assert translate(lang, "agent_1m.sparse_title") in [header.value for header in app.subheader]
    stored, read = translate(lang, "agent_1m.sparse_col_stored"), translate(lang, "agent_1m.sparse_col_read")
    [table] = [shown.value for shown in app.table if stored in shown.value.columns]
    seps = NUMBER_SEPARATORS[lang]
    methods = kvcore.trained_sparse_attention(models["llama-3.1-70b"], context_tokens=1_000_000, bytes_per_value=2.0)
    for method in methods:
        row = table.loc[translate(lang, f"agent_1m.sparse_{method.name}")]
        assert row[stored] == memory(method.stored_bytes, seps)
        assert row[read] == memory(method.read_bytes, seps)
        does = row[translate(lang, "agent_1m.sparse_col_does")]
        assert "{" not in does and len(does) > 40
    # Each paper's settings come from kvcore.reads, formatted for the language, not typed into the text.
    settings = {
        "duo": (kvcore.DUO_SINK_TOKENS, kvcore.DUO_RECENT_TOKENS),
        "nsa": (kvcore.NSA_SETTINGS.window, kvcore.NSA_SETTINGS.selection_block),
        "moba": (kvcore.MOBA_BLOCK_TOKENS, kvcore.MOBA_TOP_K),
        "seer": (kvcore.SEER_TOKEN_BUDGET,),
    }
    for name, values in settings.items():
        does = table.loc[translate(lang, f"agent_1m.sparse_{name}")][translate(lang, "agent_1m.sparse_col_does")]
        for value in values:
            shown = localize_number(format_tokens(value), lang)
            assert shown in does, (name, shown)
    text = "\n".join(block.value for block in app.markdown)
    by_name = {method.name: method for method in methods}
    # Memory against bandwidth: NSA reads a small part, DuoAttention stores less; the text's four names are there.
    assert memory(by_name["nsa"].read_bytes, seps) in text and memory(by_name["duo"].stored_bytes, seps) in text
    for name in ("DuoAttention", "NSA", "MoBA", "SeerAttention"):
        assert name in translate(lang, "agent_1m.sparse_intro")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_sparse_direction_names_deepseeks_index_topk_from_kvcore(app, lang):
    # DeepSeek-V3.2-Exp's indexer keeps index_topk = 2,048 tokens per query (kvcore.reads: its inference/model.py).
    open_page(app, lang, **SEED)
    text = "\n".join(block.value for block in app.markdown)
    topk = localize_number(format_tokens(kvcore.DSA_INDEX_TOPK_TOKENS), lang)
    assert translate(lang, "agent_1m.sparse_direction", topk=topk) in text
