"""Bring your own model: paste, upload or fetch a config.json; the figures are kvcore's reading of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import kvcore
import ui
from course import mistakes
from i18n import translate
from kvcore import hf_config
from kvcore.model_code import model_to_code
from kvcore.units import format_bytes
from tests.app.conftest import ROOT
from tests.app.helpers import metric, page_opener
from ui import hub

PAGE = "lessons/import_model.py"
open_import_page = page_opener(PAGE)
CONFIGS = Path(__file__).resolve().parents[1] / "kvcore" / "configs"
READ_BUTTON = "FormSubmitter:im_paste_form-{label}"


def open_page(app, lang="en", **params):
    open_import_page(app, lang, **params)
    assert not app.exception
    return app


def paste(app, text, lang="en", name=""):
    app.text_area(key="im_paste").set_value(text)
    app.text_input(key="im_name").set_value(name)
    app.button(key=READ_BUTTON.format(label=translate(lang, "import_model.read"))).click().run()
    assert not app.exception
    return app


def config_text(file_name):
    return (CONFIGS / file_name).read_text(encoding="utf-8")


def test_before_any_config_the_page_shows_the_sidebars_model(app, models):
    open_page(app, model="gemma-3-27b")
    expected = kvcore.kv_bytes_per_token(models["gemma-3-27b"])
    assert metric(app, "import_model.per_token") == format_bytes(expected)
    assert any("Gemma 3 27B" in info.value for info in app.info)


def test_a_pasted_qwen3_config_is_read_with_its_own_head_dim(app):
    open_page(app)
    paste(app, config_text("qwen3-32b.json"))
    reading = hf_config.read_config_text(config_text("qwen3-32b.json"))
    assert reading.model.head_dim == 128  # the config's head_dim, not 5120 / 64 = 80
    assert metric(app, "import_model.per_token") == format_bytes(kvcore.kv_bytes_per_token(reading.model))
    assert "Qwen3ForCausalLM" in app.success[0].value
    assert not app.error


def test_a_pasted_deepseek_v3_config_gives_70272_bytes_per_token_and_flags_the_factor_two(app):
    open_page(app)
    paste(app, config_text("deepseek-v3.json"))
    # DeepSeek-V3: 61 layers × (512 + 64) × 2 B = 70,272 B per token in BF16 (arXiv:2405.04434).
    assert metric(app, "import_model.per_token") == format_bytes(70_272)
    table = app.dataframe[0].value
    reading_column = translate("en", "import_model.col_reading")
    ratio_column = translate("en", "import_model.col_ratio")
    row = table[table[reading_column] == translate("en", "import_model.mistake_mla_with_factor_two")]
    assert row[ratio_column].iloc[0] == "2.00×"


def test_an_uploaded_gemma_3_config_lists_what_was_assumed(app):
    open_page(app)
    app.button_group(key="im_source").set_value("upload").run()
    app.file_uploader(key="im_upload").upload(
        "config.json", config_text("gemma-3-27b-it.json").encode(), "application/json"
    )
    app.run()
    reading = hf_config.read_config_text(config_text("gemma-3-27b-it.json"))
    assert metric(app, "import_model.per_token") == format_bytes(kvcore.kv_bytes_per_token(reading.model))
    shown = " ".join(m.value for m in app.markdown)
    for assumption in reading.assumptions:
        assert f"`{assumption.field}`" in shown


def test_an_upload_larger_than_a_megabyte_is_refused_with_a_reason(app):
    open_page(app)
    app.button_group(key="im_source").set_value("upload").run()
    app.file_uploader(key="im_upload").upload("weights.json", b" " * (hub.MAX_CONFIG_BYTES + 1), "application/json")
    app.run()
    assert not app.exception
    assert "config.json" in app.error[0].value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"num_hidden_layers": 32,', "not valid JSON"),
        ("[1, 2, 3]", "one JSON object"),
        ('{"num_hidden_layers": 32, "num_attention_heads": 32}', "`head_dim`"),
        ('{"num_hidden_layers": "32", "num_attention_heads": 8, "hidden_size": 512}', "`num_hidden_layers`"),
        ('{"num_hidden_layers": -3, "num_attention_heads": 8, "hidden_size": 512}', "`num_hidden_layers`"),
    ],
)
def test_a_bad_config_gives_a_message_naming_what_to_change_and_no_traceback(app, text, expected):
    open_page(app)
    paste(app, text)
    assert not app.exception
    assert expected in app.error[0].value


def test_a_bad_config_gets_a_portuguese_message_on_the_portuguese_page(app):
    open_page(app, lang="pt")
    paste(app, '{"num_hidden_layers": 32,', lang="pt")
    assert "não é um JSON válido" in app.error[0].value


def test_an_unknown_architecture_is_read_best_effort_with_its_assumptions(app):
    config = {"model_type": "my_new_arch", "num_hidden_layers": 12, "num_attention_heads": 8, "hidden_size": 512}
    open_page(app)
    paste(app, json.dumps(config), name="mine")
    assert "my_new_arch" in app.success[0].value
    assert translate("en", "import_model.unknown", architecture="my_new_arch").split(" (")[0] in app.success[0].value
    shown = " ".join(m.value for m in app.markdown)
    assert "`model_type`" in shown and "`num_key_value_heads`" in shown


def test_use_in_every_lesson_selects_the_model_in_the_sidebar_and_the_url(app):
    open_page(app)
    paste(app, config_text("qwen3-32b.json"), name="my-qwen")
    app.button(key="im_use").click().run()
    model = hf_config.read_config_text(config_text("qwen3-32b.json"), name="my-qwen").model
    code = model_to_code(model)
    assert app.session_state["model"] == code
    assert app.query_params["model"] == code
    assert app.selectbox(key="model").value == code
    # Another lesson now computes with it.
    app.switch_page("lessons/memory.py").run()
    assert not app.exception
    per_token = kvcore.kv_bytes_per_token(model)
    assert any(format_bytes(per_token) in m.value for m in app.markdown) or per_token == kvcore.kv_bytes_per_token(
        kvcore.model_from_code(code)
    )


def test_a_link_with_a_model_code_opens_that_model_on_any_page(app):
    model = hf_config.read_config_text(config_text("gemma-7b.json"), name="gemma-7b-mine").model
    code = model_to_code(model)
    app.query_params.update({"lang": "en", "model": code})
    app.run()
    app.switch_page("lessons/attention_variants.py").run()
    assert not app.exception
    assert app.selectbox(key="model").value == code
    assert app.selectbox(key="model").format_func(code) == translate(
        "en", "sidebar.imported_model", name="gemma-7b-mine"
    )


def test_a_mangled_model_code_in_the_link_falls_back_with_a_notice(app):
    app.query_params.update({"lang": "en", "model": "kv1~L0_h999~<script>"})
    app.run()
    assert app.selectbox(key="model").value == "llama-3.1-8b"
    assert any("kv1" in warning.value and "<script>" not in warning.value for warning in app.warning)


def test_a_repository_id_without_a_slash_is_refused_before_any_network(app, monkeypatch):
    monkeypatch.setattr(hub, "hub_reachable", lambda: pytest.fail("the network must not be touched"))
    open_page(app)
    app.button_group(key="im_source").set_value("hub").run()
    app.text_input(key="im_hub_id").set_value("llama")
    app.button(key="FormSubmitter:im_hub_form-" + translate("en", "import_model.fetch")).click().run()
    assert "`owner/name`" in app.error[0].value


def test_an_offline_server_says_so_and_points_to_paste_and_upload(app, monkeypatch):
    monkeypatch.setattr(hub, "hub_reachable", lambda: False)
    open_page(app)
    app.button_group(key="im_source").set_value("hub").run()
    app.text_input(key="im_hub_id").set_value("Qwen/Qwen3-8B")
    app.button(key="FormSubmitter:im_hub_form-" + translate("en", "import_model.fetch")).click().run()
    assert not app.exception
    assert app.error[0].value == translate("en", "import_model.hub_offline", repo="Qwen/Qwen3-8B", detail="")


def test_a_fetched_config_is_read_like_a_pasted_one(app, monkeypatch):
    monkeypatch.setattr(hub, "fetch_config_text", lambda repo_id: config_text("mistral-7b-v0.1.json"))
    open_page(app)
    app.button_group(key="im_source").set_value("hub").run()
    app.text_input(key="im_hub_id").set_value("mistralai/Mistral-7B-v0.1")
    app.button(key="FormSubmitter:im_hub_form-" + translate("en", "import_model.fetch")).click().run()
    reading = hf_config.read_config_text(config_text("mistral-7b-v0.1.json"))
    assert "mistralai/Mistral-7B-v0.1" in app.success[0].value
    assert metric(app, "import_model.per_token") == format_bytes(kvcore.kv_bytes_per_token(reading.model))


def test_the_chart_draws_the_right_reading_and_every_mistake(app, models):
    open_page(app, model="gpt-oss-120b", im_context="65536")
    figure = app.get("plotly_chart")[0].proto.spec
    data = json.loads(figure)["data"]
    wrong = mistakes.wrong_readings(models["gpt-oss-120b"])
    assert len(data) == 1 + len(wrong)


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("model_id", ["deepseek-v3", "qwen3-next-80b-a3b", "gpt2", "falcon-7b", "gemma-3-27b"])
def test_the_page_runs_for_tricky_models_in_both_languages(app, lang, model_id):
    open_page(app, lang=lang, model=model_id)
    assert not app.error


def test_markup_in_a_configs_name_is_shown_as_typed_never_rendered_or_stripped(app):
    # The issue: model_type "<b>x</b><script>alert(1)</script>" came out as the name "bx/bscriptalert1/script".
    typed = "<b>x</b><script>alert(1)</script>"
    config = {"model_type": typed, "num_hidden_layers": 12, "num_attention_heads": 8, "hidden_size": 512}
    open_page(app)
    paste(app, json.dumps(config))
    message = app.success[0].value
    assert "bx/bscriptalert1/script" not in message
    # Every markup character is escaped: the markdown shows the text exactly as typed.
    assert ui.literal(typed) in message and "\\<b\\>x\\</b\\>" in message
    assert "<b>" not in message.replace("\\<b\\>", "")
    title = json.loads(app.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]
    assert "&lt;b&gt;x&lt;/b&gt;" in title and "<b>x</b>" not in title  # Plotly would draw <b> as bold


def test_a_tiny_cache_is_shown_in_a_unit_that_reads_well_not_as_0_gib(app):
    config = {"model_type": "tiny", "num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 64}
    open_page(app)
    paste(app, json.dumps(config), name="tiny")
    values = [shown.value for shown in app.metric]
    assert all(not value.startswith("0 GiB") and not value.startswith("0.00 GiB") for value in values), values
    assert any(value.endswith("MiB") or value.endswith("KiB") for value in values), values


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("llama-3.1_8b", "llama-3.1_8b"),  # an underscore inside a word cannot start emphasis: left as typed
        ("_x_ *y*", "\\_x\\_ \\*y\\*"),
        (":red[big] $x$", "\\:red\\[big\\] \\$x\\$"),  # Streamlit's colour shortcode and LaTeX
        ("a\nb", "a b"),
        ("n" * 100, "n" * 79 + "…"),
    ],
)
def test_literal_escapes_what_would_start_markup_and_nothing_else(typed, shown):
    assert ui.literal(typed) == shown


def test_sessions_share_one_read_only_catalogue_and_an_imported_model_stays_in_its_session():
    """``ui.models()`` is the process's one copy (no unpickling per student) until a session imports a model."""
    model = hf_config.read_config_text(config_text("gemma-7b.json"), name="gemma-7b-mine").model
    code = model_to_code(model)
    first, second = (AppTest.from_file(str(ROOT / "app.py"), default_timeout=30) for _ in range(2))
    first.query_params.update({"lang": "en", "model": code})
    first.run()
    second.run()
    assert not first.exception and not second.exception
    assert code in first.session_state["_models"]
    assert "_models" not in second.session_state  # the shared catalogue, not a copy in the session
    shared = ui._models_from_csv()
    assert code not in shared and shared is ui._models_from_csv()
    with pytest.raises(TypeError):
        shared["another"] = model  # type: ignore[index]
