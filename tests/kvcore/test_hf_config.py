"""config.json files are read the way the model's own code reads them (full coverage: issue 5)."""

from pathlib import Path

import pytest

import kvcore as kv

CONFIGS = Path(__file__).parent / "configs"


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "deepseek-v3", "gemma-2-9b", "gpt-oss-20b", "gpt2"])
def test_a_config_gives_the_same_bytes_per_token_as_the_data_file(model_id):
    from_config = kv.read_config_file(CONFIGS / f"{model_id}.json")
    assert kv.kv_bytes_per_token(from_config) == kv.kv_bytes_per_token(kv.load_models()[model_id])
    assert float(kv.sequence_kv_bytes(from_config, context_tokens=10_000)) == float(
        kv.sequence_kv_bytes(kv.load_models()[model_id], context_tokens=10_000)
    )


def test_a_missing_config_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        kv.read_config_file(tmp_path / "config.json")


def test_malformed_json_names_the_line():
    with pytest.raises(ValueError, match="not valid JSON"):
        kv.model_from_config_text("{")


def test_a_config_without_layers_names_the_field():
    with pytest.raises(ValueError, match="num_hidden_layers"):
        kv.model_from_config({"num_attention_heads": 8, "hidden_size": 512})


def test_a_field_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="whole number"):
        kv.model_from_config({"num_hidden_layers": "32", "num_attention_heads": 8, "hidden_size": 512})
