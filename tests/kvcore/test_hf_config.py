"""config.json files are read the way the model's own code reads them (issue 5).

The files in configs/ are published config.json files (SOURCES.md says where each copy came from).
"""

import contextlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kvcore as kv
from kvcore import hf_config

CONFIGS = Path(__file__).parent / "configs"

#: config file → the data/models.csv row describing the same model.
SAME_MODEL = {
    "llama-2-7b": "llama-2-7b",
    "llama-3.1-8b": "llama-3.1-8b",
    "llama-3.2-3b": "llama-3.2-3b",
    "mistral-7b-v0.1": "mistral-7b-v0.1",
    "mistral-7b-v0.3": "mistral-7b-v0.3",
    "mixtral-8x7b": "mixtral-8x7b",
    "qwen2.5-7b": "qwen2.5-7b",
    "qwen3-32b": "qwen3-32b",
    "qwen3-30b-a3b": "qwen3-30b-a3b",
    "qwen3-next-80b-a3b": "qwen3-next-80b-a3b",
    "gemma-2-9b": "gemma-2-9b",
    "gemma-3-27b-it": "gemma-3-27b",
    "gpt-oss-20b": "gpt-oss-20b",
    "deepseek-v2-lite": "deepseek-v2-lite",
    "deepseek-v3": "deepseek-v3",
    "kimi-k2-abbreviated": "kimi-k2",
    "falcon-7b-instruct": "falcon-7b",
    "falcon-40b": "falcon-40b",
    "gpt2": "gpt2",
    "phi-4-mini-instruct": "phi-4-mini",
    "starcoder2-7b": "starcoder2-7b",
}
ALL_CONFIGS = sorted(path.stem for path in CONFIGS.glob("*.json"))


def reading(stem):
    return kv.read_config_path(CONFIGS / f"{stem}.json")


def codes(result):
    return {a.code for a in result.assumptions}


def config(stem):
    return json.loads((CONFIGS / f"{stem}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("stem", "model_id"), SAME_MODEL.items())
def test_a_config_gives_the_same_cache_as_the_data_file_row(stem, model_id):
    from_config, row = reading(stem).model, kv.load_models()[model_id]
    assert kv.kv_bytes_per_token(from_config) == kv.kv_bytes_per_token(row)
    assert (from_config.layer_pattern, from_config.sliding_window) == (row.layer_pattern, row.sliding_window)
    assert (from_config.head_dim, from_config.num_key_value_heads) == (row.head_dim, row.num_key_value_heads)
    assert from_config.linear_state_values == row.linear_state_values
    for tokens in (1000, 200_000):
        assert float(kv.sequence_kv_bytes(from_config, context_tokens=tokens)) == float(
            kv.sequence_kv_bytes(row, context_tokens=tokens)
        )


@pytest.mark.parametrize("stem", ALL_CONFIGS)
def test_every_family_in_the_folder_is_read_exactly(stem):
    result = reading(stem)
    assert result.known and result.params is not None
    assert "unknown_architecture" not in codes(result)


def test_llama_3_1_8b_holds_131072_bytes_per_token():
    # 2 (K and V) · 32 layers · 8 KV heads · 128 · 2 B (BF16) = 131,072 B (seed 000)
    assert kv.kv_bytes_per_token(reading("llama-3.1-8b").model) == 131_072


def test_deepseek_v3_caches_one_latent_per_layer_without_a_factor_two():
    # 61 layers · (kv_lora_rank 512 + qk_rope_head_dim 64) · 2 B = 70,272 B (DeepSeek-V2 paper §2.1)
    model = reading("deepseek-v3").model
    assert model.layer_pattern == "mla" and kv.kv_bytes_per_token(model) == 70_272


def test_kimi_k2_reads_as_the_deepseek_v3_architecture():
    result = reading("kimi-k2-abbreviated")
    assert result.architecture == "DeepseekV3ForCausalLM" and kv.kv_bytes_per_token(result.model) == 70_272


def test_deepseek_v2_lite_has_no_query_compression_and_the_same_latent():
    # 27 layers · 576 values · 2 B = 31,104 B; q_lora_rank null → q_proj straight from hidden
    result = reading("deepseek-v2-lite")
    assert kv.kv_bytes_per_token(result.model) == 31_104
    assert result.model.head_dim == 128 + 64


@pytest.mark.parametrize(("stem", "head_dim"), [("qwen3-32b", 128), ("gemma-7b", 256), ("llama-3.2-3b", 128)])
def test_an_explicit_head_dim_wins_over_hidden_over_heads(stem, head_dim):
    result = reading(stem)
    assert result.model.head_dim == head_dim
    assert "head_dim_from_hidden_size" not in codes(result)


def test_a_missing_head_dim_is_hidden_over_heads_and_said():
    result = reading("llama-2-7b")
    assert result.model.head_dim == 4096 // 32
    assert "head_dim_from_hidden_size" in codes(result)


def test_llama_2_7b_is_multi_head_attention():
    assert reading("llama-2-7b").model.attention_type == "MHA"


def test_mistral_v0_1_slides_every_layer_over_4096_tokens():
    model = reading("mistral-7b-v0.1").model
    assert (model.layer_pattern, model.sliding_window) == ("sliding", 4096)


def test_a_null_sliding_window_is_full_attention_not_the_default():
    # MistralConfig's default is 4096, but the file says null (Mistral 7B v0.3, Mixtral)
    for stem in ("mistral-7b-v0.3", "mixtral-8x7b"):
        assert reading(stem).model.layer_pattern == "full"


def test_a_mistral_file_without_sliding_window_takes_the_family_default():
    raw = {key: value for key, value in config("mistral-7b-v0.1").items() if key != "sliding_window"}
    result = kv.read_config(raw)
    assert result.model.sliding_window == 4096
    assert any(a.code == "default_value" and a.field == "sliding_window" for a in result.assumptions)


def test_qwen2_ignores_its_window_while_use_sliding_window_is_false():
    result = reading("qwen2.5-7b")
    assert result.model.layer_pattern == "full"
    assert any(a.code == "sliding_window_ignored" and a.value == "131072" for a in result.assumptions)


def test_qwen2_slides_only_layers_from_max_window_layers_when_enabled():
    raw = {**config("qwen2.5-7b"), "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 21}
    model = kv.read_config(raw).model
    assert model.layer_pattern == "full*21,sliding*7" and model.sliding_window == 4096


def test_gemma_2_alternates_sliding_and_full_from_layer_zero():
    model = reading("gemma-2-9b").model
    assert (model.layer_pattern, model.sliding_window) == ("sliding,full", 4096)


def test_gemma_3_reads_its_nested_text_config_with_a_full_layer_every_sixth():
    result = reading("gemma-3-27b-it")
    assert (result.model.layer_pattern, result.model.sliding_window) == ("sliding*5,full", 1024)
    assert (result.model.num_hidden_layers, result.model.head_dim) == (62, 128)
    defaults = {a.field: a.value for a in result.assumptions if a.code == "default_value"}
    assert defaults["sliding_window_pattern"] == "6" and defaults["vocab_size"] == "262208"


def test_gemma_3_layer_types_win_over_the_pattern():
    raw = config("gemma-3-27b-it")
    raw["text_config"] = {**raw["text_config"], "num_hidden_layers": 4}
    raw["text_config"]["layer_types"] = ["sliding_attention", "full_attention", "full_attention", "full_attention"]
    assert kv.read_config(raw).model.layer_pattern == "sliding,full*3"


def test_gpt_oss_alternates_its_128_token_window_as_layer_types_say():
    model = reading("gpt-oss-20b").model
    assert (model.layer_pattern, model.sliding_window, model.weights_dtype) == ("sliding,full", 128, "mxfp4")


def test_qwen3_next_has_a_full_attention_layer_every_fourth():
    model = reading("qwen3-next-80b-a3b").model
    assert model.layer_pattern == "linear*3,full" and model.count("full") == 12
    # Gated DeltaNet state: 32·128·128 + (4 − 1)·(2·16·128 + 32·128) = 548,864 values (models.csv)
    assert model.linear_state_values == 548_864


def test_qwen3_next_layer_types_are_used_when_listed():
    raw = {**config("qwen3-next-80b-a3b"), "num_hidden_layers": 4}
    raw["layer_types"] = ["linear_attention", "full_attention", "linear_attention", "full_attention"]
    assert kv.read_config(raw).model.layer_pattern == "linear,full"


def test_phi_3_mini_slides_every_layer_over_2047_tokens():
    # transformers' Phi3Attention passes config.sliding_window to every layer
    model = reading("phi-3-mini-4k-instruct").model
    assert (model.layer_pattern, model.sliding_window) == ("sliding", 2047)


def test_a_window_longer_than_the_context_counts_as_full_attention():
    result = reading("phi-4-mini-instruct")
    assert result.model.layer_pattern == "full" and result.model.sliding_window is None
    assert "window_covers_context" in codes(result)


def test_starcoder2_slides_every_layer():
    model = reading("starcoder2-7b").model
    assert (model.layer_pattern, model.sliding_window) == ("sliding", 4096)


def test_falcon_7b_multi_query_has_one_kv_head():
    model = reading("falcon-7b-instruct").model
    assert (model.num_attention_heads, model.num_key_value_heads, model.head_dim) == (71, 1, 64)


def test_falcon_40b_refinedweb_file_reads_n_head_kv():
    model = reading("falcon-40b").model
    assert (model.num_attention_heads, model.num_key_value_heads) == (128, 8)


FALCON = {"model_type": "falcon", "num_hidden_layers": 2, "num_attention_heads": 8, "hidden_size": 512}


def test_falcon_new_decoder_architecture_reads_num_kv_heads():
    raw = {**FALCON, "new_decoder_architecture": True, "num_kv_heads": 2, "multi_query": True}
    assert kv.read_config(raw).model.num_key_value_heads == 2


def test_falcon_without_multi_query_is_multi_query_by_default():
    # FalconConfig(multi_query=True) is the default
    assert kv.read_config(FALCON).model.num_key_value_heads == 1
    assert kv.read_config({**FALCON, "multi_query": False}).model.num_key_value_heads == 8


def test_gpt2_keys_and_float32_weights():
    result = reading("gpt2")
    model = result.model
    assert (model.num_hidden_layers, model.head_dim, model.max_position_embeddings) == (12, 64, 1024)
    assert result.model.weights_dtype == "fp32" and "weights_dtype_default" in codes(result)


def test_fp8_checkpoints_are_sized_in_fp8():
    assert reading("deepseek-v3").model.weights_dtype == "fp8"


def test_a_quantization_kvcore_does_not_know_is_said():
    result = kv.read_config({**config("llama-3.1-8b"), "quantization_config": {"quant_method": "exl2"}})
    assert "quantization_not_read" in codes(result) and result.model.weights_dtype == "bf16"


def test_an_unknown_architecture_is_read_best_effort_and_says_so():
    result = kv.read_config(
        {"model_type": "mystery", "num_hidden_layers": 4, "num_attention_heads": 8, "hidden_size": 512}
    )
    assert not result.known and result.architecture == "mystery"
    assert {"unknown_architecture", "kv_heads_default_mha", "head_dim_from_hidden_size"} <= codes(result)
    assert result.model.num_key_value_heads == 8 and result.model.head_dim == 64


def test_an_unknown_architecture_without_vocab_is_read_but_not_counted():
    result = kv.read_config(
        {"model_type": "mystery", "num_hidden_layers": 4, "num_attention_heads": 8, "hidden_size": 512}
    )
    assert result.params is None and result.model.total_params is None
    assert any(a.code == "params_not_counted" and a.field == "vocab_size" for a in result.assumptions)


def test_read_config_fills_the_model_parameter_counts():
    result = reading("llama-3.1-8b")
    assert result.model.total_params == result.params.total == 8_030_261_248


def test_every_assumption_code_is_documented_in_the_module():
    documented = set(re.findall(r"``([a-z_]+)`` —", hf_config.__doc__))
    produced = {code for stem in ALL_CONFIGS for code in codes(reading(stem))}
    produced |= codes(kv.read_config({"num_hidden_layers": 1, "num_attention_heads": 1, "hidden_size": 8}))
    assert produced <= documented


def test_every_error_code_raised_is_documented_in_the_module():
    doc = hf_config.__doc__
    for text in ("{", "[]", '{"num_hidden_layers": "2"}', '{"num_hidden_layers": 0}'):
        with pytest.raises(kv.ConfigError) as caught:
            kv.read_config_text(text)
        assert f"``{caught.value.code}``" in doc


# Bad input: ConfigError (a ValueError) with a code, the field and a clear message.

BASE = {"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 8, "hidden_size": 512}

BAD = [
    ({**BASE, "num_hidden_layers": "32"}, "wrong_type", "num_hidden_layers", "whole number"),
    ({**BASE, "num_hidden_layers": True}, "wrong_type", "num_hidden_layers", "whole number"),
    ({**BASE, "num_hidden_layers": -2}, "out_of_range", "num_hidden_layers", "between"),
    ({**BASE, "num_hidden_layers": 2.5}, "out_of_range", "num_hidden_layers", "whole number"),
    ({**BASE, "num_hidden_layers": 0}, "out_of_range", "num_hidden_layers", "between 1"),
    ({**BASE, "num_hidden_layers": 10_001}, "out_of_range", "num_hidden_layers", "10,000"),
    ({**BASE, "head_dim": 70_000}, "out_of_range", "head_dim", "65,536"),
    ({**BASE, "num_key_value_heads": 3}, "inconsistent", "num_key_value_heads", "must divide"),
    ({**BASE, "vocab_size": 20_000_000}, "out_of_range", "vocab_size", "10,000,000"),
    ({**BASE, "model_type": "mistral", "sliding_window": 0}, "out_of_range", "sliding_window", "between 1"),
    ({**BASE, "model_type": 7}, "wrong_type", "model_type", "string"),
    ({**BASE, "hidden_size": 500}, "inconsistent", "head_dim", "multiple"),
    ({**BASE, "layer_types": ["full_attention"]}, "inconsistent", "layer_types", "lists 1 layers"),
    ({**BASE, "layer_types": ["full_attention", "chunked"]}, "unknown_value", "layer_types", "unknown entry"),
    ({**BASE, "model_type": "gemma2", "sliding_window": None}, "inconsistent", "sliding_window", "no sliding_window"),
    ({**BASE, "tie_word_embeddings": "yes", "vocab_size": 10}, "wrong_type", "tie_word_embeddings", "true or false"),
]


@pytest.mark.parametrize(("raw", "code", "field", "words"), BAD)
def test_a_bad_value_is_a_config_error_naming_the_field(raw, code, field, words):
    with pytest.raises(kv.ConfigError, match=words) as caught:
        kv.read_config(raw)
    assert (caught.value.code, caught.value.field) == (code, field)


def test_a_missing_field_names_it_and_its_other_names():
    with pytest.raises(kv.ConfigError, match=r"'num_hidden_layers' \(or n_layer, num_layers, n_layers\)") as caught:
        kv.read_config({"num_attention_heads": 8, "hidden_size": 512})
    assert (caught.value.code, caught.value.field) == ("missing_field", "num_hidden_layers")


def test_malformed_json_names_the_line_and_column():
    with pytest.raises(kv.ConfigError, match=r"not valid JSON \(line 2, column 1\)") as caught:
        kv.read_config_text('{"a": 1,\n}')
    assert caught.value.code == "invalid_json"


@pytest.mark.parametrize("text", ['{"num_hidden_layers": NaN}', '{"a": Infinity}', "[" * 100_000])
def test_non_numbers_and_deep_nesting_are_invalid_json(text):
    with pytest.raises(kv.ConfigError) as caught:
        kv.read_config_text(text)
    assert caught.value.code == "invalid_json"


def test_a_json_value_that_is_not_an_object_is_refused():
    with pytest.raises(kv.ConfigError, match="JSON object") as caught:
        kv.read_config_text("[1, 2]")
    assert caught.value.code == "not_an_object"


def test_more_than_100_mb_of_text_is_refused_before_parsing(monkeypatch):
    monkeypatch.setattr(hf_config, "MAX_CONFIG_CHARS", 10)
    with pytest.raises(kv.ConfigError, match="100 MB") as caught:
        kv.read_config_text('{"num_hidden_layers": 2}')
    assert caught.value.code == "too_large"


def test_a_missing_config_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="not found") as caught:
        kv.read_config_file(tmp_path / "config.json")
    assert caught.value.code == "file_not_found"


def test_the_older_entry_points_still_return_a_model_spec():
    text = (CONFIGS / "gpt2.json").read_text(encoding="utf-8")
    expected = reading("gpt2").model
    assert kv.model_from_config_text(text, name="gpt2") == expected
    assert kv.model_from_config(json.loads(text), name="gpt2") == expected
    assert kv.read_config_file(CONFIGS / "gpt2.json") == expected


# Fuzz: whatever the input, only ConfigError comes out.

FIELD_NAMES = [
    "model_type", "num_hidden_layers", "n_layer", "num_attention_heads", "num_key_value_heads", "head_dim",
    "hidden_size", "sliding_window", "use_sliding_window", "max_window_layers", "layer_types", "text_config",
    "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "q_lora_rank", "v_head_dim", "vocab_size",
    "intermediate_size", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "mlp_only_layers",
    "tie_word_embeddings", "quantization_config", "torch_dtype", "multi_query", "new_decoder_architecture",
    "full_attention_interval", "sliding_window_pattern", "first_k_dense_replace", "n_shared_experts",
]  # fmt: skip
MODEL_TYPES = ["llama", "mistral", "qwen2", "qwen3_next", "gemma3", "gpt_oss", "deepseek_v3", "falcon", "gpt2", "x"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 300) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
plausible = st.one_of(st.integers(0, 300), st.sampled_from(MODEL_TYPES), json_values)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(FIELD_NAMES), plausible, max_size=14))
def test_random_configs_give_a_reading_or_a_config_error(raw):
    try:
        result = kv.read_config(raw)
    except kv.ConfigError as error:
        assert error.code and str(error)
    else:
        assert isinstance(result, kv.ConfigReading)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_random_json_values_give_only_config_errors(value):
    with contextlib.suppress(kv.ConfigError):
        kv.read_config_text(json.dumps(value))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_random_text_gives_only_config_errors(text):
    with contextlib.suppress(kv.ConfigError):
        kv.read_config_text(text)
