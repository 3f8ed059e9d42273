"""kvcore's errors: a stable code, the fields it is about, an English sentence that names no CLI flag."""

from __future__ import annotations

import ast
import copy
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

import kvcore
from i18n import LANGUAGES, catalogue
from kvcore import checks, transformers_cache
from kvcore.errors import ConfigError, KvError

KVCORE = Path(kvcore.__file__).resolve().parent
#: The first argument of KvError(...) / ConfigError(...) when it is a literal: the code.
RAISED_CODE = re.compile(r"""\b(?:KvError|ConfigError)\(\s*["']([a-z][a-z0-9_]*)["']""")
#: A command-line option such as --params-b.
FLAG = re.compile(r"--[a-z][a-z-]+")


def raised_codes() -> dict[str, str]:
    """Every literal code a kvcore module raises → the module that raises it."""
    return {
        code: path.name
        for path in sorted(KVCORE.glob("*.py"))
        for code in RAISED_CODE.findall(path.read_text(encoding="utf-8"))
    }


def message_texts(path: Path) -> list[str]:
    """Every string literal of a module but its docstrings: the messages it can raise (f-string parts included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, documented) and node.body and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


# ---------------------------------------------------------------- KvError itself


def test_a_kv_error_is_a_value_error_with_a_code_and_read_only_fields():
    error = KvError("not_positive", "batch must be a finite number greater than zero, got 0", name="batch", value=0)
    assert isinstance(error, ValueError)
    assert (error.code, dict(error.fields), str(error)) == (
        "not_positive",
        {"name": "batch", "value": 0},
        "batch must be a finite number greater than zero, got 0",
    )
    with pytest.raises(TypeError):
        error.fields["value"] = 1  # type: ignore[index]


@pytest.mark.parametrize("error", [KvError("tp_not_dividing", "tp", tp=3), ConfigError("wrong_type", "x", field="f")])
def test_a_kv_error_survives_copy_and_pickle_with_its_code_and_fields(error):
    for clone in (copy.copy(error), pickle.loads(pickle.dumps(error))):
        assert type(clone) is type(error)
        assert (clone.code, dict(clone.fields), str(clone)) == (error.code, dict(error.fields), str(error))


def test_a_config_error_is_a_kv_error_that_keeps_its_field():
    error = ConfigError("missing_field", "the config lacks 'vocab_size'", field="vocab_size")
    assert isinstance(error, KvError) and isinstance(error, ValueError)
    assert (error.code, error.field, error.fields["field"]) == ("missing_field", "vocab_size", "vocab_size")
    assert kvcore.hf_config.ConfigError is ConfigError is kvcore.ConfigError


def test_a_config_reading_raises_a_kv_error_with_the_config_field():
    with pytest.raises(KvError) as caught:
        kvcore.read_config({"num_hidden_layers": 2, "hidden_size": 64})
    assert caught.value.code == "missing_field" and caught.value.fields["field"] == "num_attention_heads"


# ---------------------------------------------------------------- the checks every function uses


@pytest.mark.parametrize(
    ("check", "code", "fields"),
    [
        (lambda: checks.positive("context tokens", 0), "not_positive", {"name": "context tokens", "value": 0}),
        (lambda: checks.positive("overhead", -1.0, allow_zero=True), "negative", {"name": "overhead", "value": -1.0}),
        (lambda: checks.positive("batch", "lots"), "not_a_number", {"name": "batch", "value": "lots"}),
        (lambda: checks.fraction("MFU", 1.5), "not_fraction", {"name": "MFU", "value": 1.5}),
        (lambda: checks.whole("block size", 2.5), "not_whole", {"name": "block size", "value": 2.5, "minimum": 1}),
        (lambda: checks.whole("bits", 1, minimum=2), "not_whole", {"name": "bits", "value": 1, "minimum": 2}),
    ],
)
def test_each_check_raises_its_code_with_the_quantity_and_the_value(check, code, fields):
    with pytest.raises(KvError) as caught:
        check()
    assert caught.value.code == code and dict(caught.value.fields) == fields


def test_an_array_check_reports_its_first_bad_element():
    with pytest.raises(KvError) as caught:
        checks.positive("context tokens", np.array([8, 0, -3]))
    assert caught.value.fields["value"] == 0.0
    assert "an array containing [0]" in str(caught.value)


def test_where_starts_the_message_and_stays_apart_from_the_name():
    with pytest.raises(KvError, match=r"^model 'x': head_dim must be a whole number ≥ 1, got 0$") as caught:
        checks.whole("head_dim", 0, where="model 'x'")
    assert caught.value.fields["name"] == "head_dim" and caught.value.fields["where"] == "model 'x'"


def test_a_model_spec_names_the_model_and_the_field_it_refuses():
    with pytest.raises(KvError) as caught:
        kvcore.uniform_model(num_hidden_layers=4, num_key_value_heads=3, head_dim=64, num_attention_heads=8)
    assert caught.value.code == "kv_heads_not_dividing"
    assert (caught.value.fields["kv_heads"], caught.value.fields["heads"]) == (3, 8)


def test_an_unknown_parameter_count_names_the_model_and_no_option():
    model = kvcore.uniform_model(num_hidden_layers=2, num_key_value_heads=1, head_dim=8)
    with pytest.raises(KvError) as caught:
        kvcore.forward_flops_with_cache(model, generated_tokens=10)
    assert caught.value.code == "params_unknown" and caught.value.fields["model"] == "custom"
    assert not FLAG.search(str(caught.value))


def test_a_bad_data_row_keeps_its_code_and_gains_the_row(tmp_path):
    source = Path(kvcore.data.GPUS_CSV).read_text(encoding="utf-8").splitlines()
    header, row = source[0], source[1].split(",")
    row[header.split(",").index("memory_gib")] = "-1"
    path = tmp_path / "gpus.csv"
    path.write_text(f"{header}\n{','.join(row)}\n", encoding="utf-8")
    with pytest.raises(KvError) as caught:
        kvcore.load_gpus(path)
    assert caught.value.code == "data_not_positive"
    assert caught.value.fields["field"] == "memory_gib" and caught.value.fields["row"].startswith("gpus.csv line 2")


def test_an_impossible_model_code_carries_the_reason_as_its_cause():
    with pytest.raises(KvError) as caught:
        kvcore.model_from_code("kv1~L2_h3_k2_d4~x")
    assert caught.value.code == "model_code_impossible"
    assert caught.value.fields["cause"].code == "kv_heads_not_dividing"


# ---------------------------------------------------------------- the ValueErrors that became codes


def _llama_8b():
    return kvcore.load_models()["llama-3.1-8b"]


@pytest.mark.parametrize(
    ("call", "code", "fields"),
    [
        (lambda: kvcore.stage_layers(4, 8), "pp_exceeds_layers", {"pp": 8, "layers": 4}),
        (
            lambda: kvcore.memory_budget(
                memory_bytes=100.0,
                utilization=0.9,
                terms=[kvcore.BudgetTerm(name="weights", bytes=1.0), kvcore.BudgetTerm(name="weights", bytes=2.0)],
            ),
            "repeated_budget_term",
            {"terms": "weights"},
        ),
        (
            lambda: transformers_cache.transformers_sliding_storage_tokens(10, sliding_window=4, last_step_tokens=11),
            "last_step_exceeds_context",
            {},
        ),
        (lambda: transformers_cache.mla_expansion_factor(_llama_8b()), "no_mla_layers", {"model": "Llama 3.1 8B"}),
        (
            lambda: kvcore.smallest_tensor_parallel(kvcore.load_models()["falcon-7b"], at_least=2, limit=64),
            "no_tensor_parallel_size",
            {"gpus": 2},
        ),
        (lambda: kvcore.top_mass_share(np.ones(10), top_fraction=1.5), "not_fraction", {"value": 1.5}),
        (lambda: kvcore.kept_cache_bytes(1.0, keep_fraction=[0.5, 2.0]), "not_fraction", {"value": 2.0}),
        (lambda: kvcore.cumulative_mass(np.ones((2, 0))), "no_kv_blocks", {}),
        (lambda: kvcore.cumulative_mass([1.0, -1.0]), "attention_not_finite", {}),
        (lambda: kvcore.cumulative_mass([0.0, 0.0]), "attention_no_mass", {}),
        (lambda: kvcore.synthetic_attention(blocks=4, spread=3.0), "above_maximum", {"maximum": 2, "value": 3.0}),
    ],
)
def test_each_former_value_error_raises_its_code_and_fields(call, code, fields):
    with pytest.raises(KvError) as caught:
        call()
    assert caught.value.code == code
    assert {key: caught.value.fields[key] for key in fields} == fields


# ---------------------------------------------------------------- every code is stable, documented and translated


def test_the_source_scan_finds_the_codes_raised():
    codes = raised_codes()
    assert {"not_positive", "not_whole", "params_unknown", "missing_field", "model_code_too_long"} <= set(codes)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_code_kvcore_raises_has_a_text_in_the_catalogue(lang):
    texts = catalogue(lang)
    missing = {code: module for code, module in raised_codes().items() if f"errors.{code}" not in texts}
    assert missing == {}, f"add errors.<code> to i18n/{lang}/errors.json (and ui/errors.py TEXTS)"


@pytest.mark.parametrize("path", sorted(KVCORE.glob("*.py")), ids=lambda path: path.stem)
def test_no_kvcore_message_tells_a_student_to_give_a_command_line_option(path):
    if path.name == "cli.py":
        pytest.skip("the CLI words kvcore's errors with its own options")
    assert [text for text in message_texts(path) if FLAG.search(text)] == []
