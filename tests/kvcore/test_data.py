"""data/models.csv and data/gpus.csv load, validate, and reject bad rows with a clear message."""

import math
from pathlib import Path

import pytest

import kvcore as kv
from kvcore.data import GPU_COLUMNS, MODEL_COLUMNS

REQUIRED_MODELS = [
    "llama-2-7b", "gpt2", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "qwen2.5-7b", "qwen3-8b",
    "mistral-7b-v0.1", "falcon-7b", "gemma-2b", "deepseek-v2-lite", "deepseek-v3", "kimi-k2", "gemma-2-9b",
    "gemma-3-27b", "gpt-oss-20b", "gpt-oss-120b", "mixtral-8x7b", "qwen3-30b-a3b", "qwen3-next-80b-a3b",
]  # fmt: skip
REQUIRED_GPUS = [
    "rtx-3060-12gb", "rtx-3090", "rtx-4090", "rtx-5090", "t4", "l4", "a10", "a100-40gb", "a100-80gb",
    "h100-pcie", "h100-sxm", "h200", "b200", "mi300x",
]  # fmt: skip


def test_models_file_has_at_least_30_real_models_with_sources():
    models = kv.load_models()
    assert len(models) >= 30
    assert all(m.source_url.startswith("https://") for m in models.values())


def test_models_file_covers_every_architecture_family():
    models = kv.load_models()
    assert set(REQUIRED_MODELS) <= set(models)
    kinds = {layer.kind for m in models.values() for layer in m.layers}
    assert kinds == {"full", "sliding", "mla", "linear"}
    assert {m.attention_type for m in models.values()} == {"MHA", "GQA", "MQA", "MLA"}
    assert any(m.is_moe for m in models.values())


def test_every_model_has_a_vocabulary_and_an_mlp_width():
    for model in kv.load_models().values():
        assert model.vocab_size > 0, model.id
        assert model.intermediate_size > 0 or model.moe_intermediate_size > 0, model.id
        assert (model.moe_intermediate_size > 0) == model.is_moe, model.id


CONFIGS = Path(__file__).parent / "configs"


@pytest.mark.parametrize(
    ("model_id", "config"),
    [
        ("llama-3.1-8b", "llama-3.1-8b.json"),
        ("qwen3-30b-a3b", "qwen3-30b-a3b.json"),
        ("gpt-oss-20b", "gpt-oss-20b.json"),
    ],
)
def test_models_csv_config_columns_agree_with_the_stored_config(model_id, config):
    row = kv.load_models()[model_id]
    read = kv.read_config_path(CONFIGS / config).model
    columns = ("vocab_size", "intermediate_size", "moe_intermediate_size", "tie_word_embeddings")
    assert {c: getattr(row, c) for c in columns} == {c: getattr(read, c) for c in columns}


def test_llama_3_1_8b_config_columns_are_its_config_values():
    llama = kv.load_models()["llama-3.1-8b"]
    assert (llama.vocab_size, llama.intermediate_size, llama.moe_intermediate_size) == (128256, 14336, 0)
    assert llama.tie_word_embeddings is False


def test_gpus_file_has_at_least_20_gpus_with_sources():
    gpus = kv.load_gpus()
    assert len(gpus) >= 20
    assert set(REQUIRED_GPUS) <= set(gpus)
    assert {g.category for g in gpus.values()} == {"consumer", "datacenter", "apple"}
    assert all(g.source_url.startswith("https://") for g in gpus.values())


def test_every_gpu_has_memory_bandwidth_and_throughput():
    for g in kv.load_gpus().values():
        assert g.memory_bytes > 0 and g.bandwidth_bytes_per_s > 0 and g.bf16_dense_flop_per_s > 0
        assert math.isnan(g.fp8_dense_flop_per_s) or g.fp8_dense_flop_per_s >= g.bf16_dense_flop_per_s


def test_h100_sxm_matches_its_datasheet():
    # NVIDIA H100 datasheet: 80 GB HBM3, 3.35 TB/s, 1,979 TFLOPS BF16 with sparsity (989.4 dense)
    h100 = kv.load_gpus()["h100-sxm"]
    assert (h100.memory_bytes, h100.bandwidth_bytes_per_s) == (80 * 2**30, 3350e9)
    assert h100.bf16_dense_flop_per_s == pytest.approx(989.4e12, rel=1e-3)


def write_csv(tmp_path: Path, columns: list[str], row: dict[str, str]) -> Path:
    path = tmp_path / "data.csv"
    path.write_text(",".join(columns) + "\n" + ",".join(row.get(c, "") for c in columns) + "\n", encoding="utf-8")
    return path


GOOD_MODEL = {
    "id": "tiny", "name": "Tiny", "num_hidden_layers": "2", "num_attention_heads": "4", "num_key_value_heads": "2",
    "head_dim": "8", "hidden_size": "32", "layer_pattern": "full", "max_position_embeddings": "128",
    "total_params_b": "0.001", "active_params_b": "0.001", "source_url": "https://example.org/config.json",
}  # fmt: skip
GOOD_GPU = {
    "id": "g", "name": "G", "vendor": "X", "category": "consumer", "memory_gib": "8", "bandwidth_gb_s": "100",
    "bf16_dense_tflops": "10", "source_url": "https://example.org/datasheet",
}  # fmt: skip


def test_a_valid_model_row_loads(tmp_path):
    assert kv.load_models(write_csv(tmp_path, MODEL_COLUMNS, GOOD_MODEL))["tiny"].head_dim == 8


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("num_key_value_heads", "3", "must divide"),
        ("head_dim", "abc", "must be a number"),
        ("num_hidden_layers", "-2", "finite number > 0"),
        ("num_hidden_layers", "2.5", "whole number"),
        ("layer_pattern", "dense", "layer pattern"),
        ("layer_pattern", "sliding", "sliding_window"),
        ("source_url", "example.org", "https://"),
        ("total_params_b", "", "empty"),
        ("tie_word_embeddings", "yes", "true or false"),
    ],
)
def test_a_bad_model_row_names_the_line_and_the_field(tmp_path, field, value, message):
    path = write_csv(tmp_path, MODEL_COLUMNS, {**GOOD_MODEL, field: value})
    with pytest.raises(ValueError, match=message) as error:
        kv.load_models(path)
    assert "line 2 (tiny)" in str(error.value)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("memory_gib", "0", "> 0"), ("bandwidth_gb_s", "nan", "finite"), ("category", "phone", "category")],
)
def test_a_bad_gpu_row_names_the_line_and_the_field(tmp_path, field, value, message):
    with pytest.raises(ValueError, match=message):
        kv.load_gpus(write_csv(tmp_path, GPU_COLUMNS, {**GOOD_GPU, field: value}))


def test_a_wrong_header_is_refused(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("id,name\nx,y\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        kv.load_gpus(path)


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        kv.load_models(tmp_path / "missing.csv")
