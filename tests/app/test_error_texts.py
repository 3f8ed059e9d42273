"""kvcore's errors reach the learner in their language: ui.errors.error_text, and a page showing one."""

from __future__ import annotations

import re
import string

import pytest

import kvcore
from i18n import LANGUAGES, catalogue, translate
from kvcore import checks
from kvcore.errors import ConfigError, KvError
from tests.kvcore.test_errors import raised_codes
from ui.errors import NAMES, TEXTS, error_text

#: An imported model (kvcore.model_code) without a parameter count: its weights cannot be sized.
NO_PARAMS_MODEL = "kv1~L12_h8_k2_d64~imported"


def raised(check) -> KvError:
    with pytest.raises(KvError) as caught:
        check()
    return caught.value


def as_pattern(text: str) -> str:
    """A catalogue text as a regular expression: each placeholder matches anything."""
    parts = string.Formatter().parse(text)
    return "".join(re.escape(literal) + (".+" if field is not None else "") for literal, field, _, _ in parts)


def test_every_code_kvcore_raises_has_an_entry_in_the_table():
    assert set(raised_codes()) - set(TEXTS) == set()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_name_and_text_of_the_tables_is_in_the_catalogue(lang):
    assert {*TEXTS.values(), *NAMES.values()} - set(catalogue(lang)) == set()


def test_a_check_is_worded_in_portuguese_with_its_quantity_and_a_decimal_comma():
    error = raised(lambda: checks.fraction("MFU", 1.5))
    expected = translate("pt", "errors.not_fraction", name=translate("pt", "errors.name.mfu"), value="1,5")
    assert error_text(error, "pt") == expected[0].upper() + expected[1:]


def test_a_quantity_kvcore_names_is_translated_and_starts_the_sentence():
    error = raised(lambda: checks.positive("context tokens", 0))
    assert error_text(error, "pt") == "Tokens de contexto deve ser um número finito maior que zero; recebido: 0."
    assert error_text(error, "en") == "Context tokens must be a finite number greater than zero, got 0."


def test_large_numbers_get_the_languages_thousands_separator():
    error = raised(lambda: kvcore.paging.reserved_tokens([300_000], scheme="paged", max_model_len=131_072))
    assert "300.000" in error_text(error, "pt") and "131.072" in error_text(error, "pt")
    assert "300,000" in error_text(error, "en")


def test_the_spec_a_quantity_belongs_to_comes_first():
    error = raised(lambda: checks.whole("head_dim", 0, where="model 'x'"))
    assert error_text(error, "en").startswith("model 'x': ")


def test_a_wrapped_error_is_translated_too():
    error = raised(lambda: kvcore.model_from_code("kv1~L2_h3_k2_d4~x"))
    inner = translate("pt", "errors.kv_heads_not_dividing", model="x", kv_heads="2", heads="3")
    assert error_text(error, "pt") == translate("pt", "errors.model_code_impossible", detail=inner)


def test_a_config_error_names_its_field():
    error = raised(lambda: kvcore.read_config({"num_hidden_layers": 2, "hidden_size": 64}))
    assert error_text(error, "pt").startswith("Falta no config o campo num_attention_heads.")


@pytest.mark.parametrize(
    "error",
    [
        KvError("a_code_no_catalogue_has", "something English"),
        ValueError("something English"),
        ConfigError("missing_field", "something English"),  # no field: "?" stands in
    ],
)
def test_an_unknown_code_or_another_error_falls_back_to_a_sentence(error):
    text = error_text(error, "pt")
    assert text == "something English" or "?" in text


def test_the_app_in_portuguese_shows_kvcores_error_in_portuguese(app):
    # The memory calculator cannot size the weights of a model without a parameter count.
    app.query_params.update({"lang": "pt", "model": NO_PARAMS_MODEL})
    app.run()
    assert not app.exception
    frame = translate("pt", "error.bad_combination", detail="")
    [shown] = [error.value for error in app.error if error.value.startswith(frame)]
    detail = shown.removeprefix(frame)
    texts = [text for key, text in catalogue("pt").items() if key.startswith("errors.") and key in TEXTS.values()]
    assert any(re.fullmatch(as_pattern(text), detail) for text in texts), detail
