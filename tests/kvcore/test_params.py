"""Parameters counted from config.json files match the counts their makers publish."""

import json
from pathlib import Path

import pytest

import kvcore as kv
from kvcore.params import attention_params, gated_mlp_params

CONFIGS = Path(__file__).parent / "configs"
B = 1e9


def config(stem):
    return json.loads((CONFIGS / f"{stem}.json").read_text(encoding="utf-8"))


def count(stem):
    return kv.count_params(config(stem))


def gpt_oss_120b():
    """gpt-oss-120b differs from the 20b only in 36 layers and 128 experts (OpenAI model card, Table 1)."""
    raw = config("gpt-oss-20b")
    return {**raw, "num_hidden_layers": 36, "num_local_experts": 128, "layer_types": raw["layer_types"][:2] * 18}


# Exact counts


def test_llama_2_7b_has_6_738_415_616_parameters():
    # transformers' LlamaForCausalLM.num_parameters(); llama.cpp's llama-bench prints 6.74 B (ggml-org/llama.cpp#4812)
    assert count("llama-2-7b").total == 6_738_415_616


def test_llama_3_1_8b_has_8_030_261_248_parameters():
    # the Hub's safetensors count for meta-llama/Llama-3.1-8B (8.03B)
    assert count("llama-3.1-8b").total == 8_030_261_248


def test_gpt2_has_124_439_808_parameters_with_a_tied_head():
    # openai-community/gpt2: 124,439,808 (model.num_parameters(); the card's "124M")
    result = count("gpt2")
    assert result.total == 124_439_808 and result.lm_head == 0


def test_a_tied_head_saves_vocab_times_hidden():
    # Llama 3.2 3B ties its head: 3,212,749,824 (models.csv, recomputed from the config)
    tied = count("llama-3.2-3b")
    untied = kv.count_params({**config("llama-3.2-3b"), "tie_word_embeddings": False})
    assert tied.total == 3_212_749_824 and untied.total - tied.total == 128_256 * 3072


# Published counts, to the precision the source gives


def test_mixtral_is_46_7b_total_and_12_9b_active():
    # Mistral AI, "Mixtral of experts" (2023-12-11): 46.7B total, 12.9B used per token (embedding included)
    result = count("mixtral-8x7b")
    assert round(result.total / B, 1) == 46.7 and round(result.active / B, 1) == 12.9


def test_deepseek_v3_is_671b_total_and_37b_active():
    # DeepSeek-V3 technical report (arXiv:2412.19437), abstract: 671B total, 37B activated per token.
    # DeepSeek leaves the embedding table out of "activated" (37.55B with it, 36.63B without), as for V2-Lite.
    result = count("deepseek-v3")
    assert round(result.total / B) == 671 and round((result.active - result.embedding) / B) == 37


def test_deepseek_v3_mtp_module_brings_the_checkpoint_to_685b():
    # DeepSeek-V3 README: 685B on the Hub = 671B main model + 14B multi-token-prediction module.
    # The MTP module's own weights plus the copies of embedding and head the checkpoint stores for it.
    result = count("deepseek-v3")
    stored_copies = 2 * 129_280 * 7168
    assert round((result.mtp + stored_copies) / B) == 13  # "14B" in the README is the rounded difference 685 − 671
    assert round((result.total + result.mtp + stored_copies) / B) == 684  # 684.5B, shown as 685B on the Hub
    assert result.mtp == 11_610_068_224


def test_deepseek_v2_lite_is_15_7b_total_and_2_4b_active_without_the_embedding():
    # DeepSeek-V2 paper (arXiv:2405.04434), Appendix B: 15.7B total, 2.4B activated per token
    result = count("deepseek-v2-lite")
    assert round(result.total / B, 1) == 15.7
    assert abs((result.active - result.embedding) / B - 2.4) < 0.1


def test_qwen3_30b_a3b_is_30_5b_total_and_3_3b_active():
    # Qwen/Qwen3-30B-A3B model card: 30.5B in total, 3.3B activated (3.353B with the embedding, cut to 0.1B)
    result = count("qwen3-30b-a3b")
    assert round(result.total / B, 1) == 30.5 and int(result.active / 1e8) == 33


def test_qwen3_next_is_80b_total():
    # Qwen/Qwen3-Next-80B-A3B model card: 80B in total (its "3B activated" is rounded down: see the report)
    assert round(count("qwen3-next-80b-a3b").total / B) == 80


def test_gpt_oss_20b_is_20_91b_total_and_3_61b_active():
    # OpenAI gpt-oss model card (2025-08-05), Table 1: 20.91B total, 3.61B active (embedding not counted)
    result = count("gpt-oss-20b")
    assert round(result.total / B, 2) == 20.91
    assert round((result.active - result.embedding) / B, 2) == 3.61


def test_gpt_oss_120b_is_116_83b_total_and_5_13b_active():
    # OpenAI gpt-oss model card, Table 1: 116.83B total, 5.13B active (embedding not counted)
    result = kv.count_params(gpt_oss_120b())
    assert round(result.total / B, 2) == 116.83
    assert round((result.active - result.embedding) / B, 2) == 5.13


def test_gemma_7b_is_786m_embedding_and_7751m_non_embedding():
    # Gemma report (arXiv:2403.08295), Table 2: 7B model, 786M embedding + 7,751M non-embedding parameters
    result = count("gemma-7b")
    assert round(result.embedding / 1e6) == 786 and round((result.total - result.embedding) / 1e6) == 7751


def test_gemma_2_9b_is_918m_embedding_and_8324m_non_embedding():
    # Gemma 2 report (arXiv:2408.00118), Table 1: 9B model, 918M embedding + 8,324M non-embedding
    result = count("gemma-2-9b")
    assert round(result.embedding / 1e6) == 918 and round((result.total - result.embedding) / 1e6) == 8324


def test_gemma_3_27b_text_decoder_is_25_600m_non_embedding():
    # Gemma 3 report (arXiv:2503.19786), Table 1: 27B model, 25,600M non-embedding (vision tower not counted here)
    result = count("gemma-3-27b-it")
    assert round((result.total - result.embedding) / 1e8) == 256


@pytest.mark.parametrize(("stem", "billions"), [("phi-3-mini-4k-instruct", 3.8), ("phi-4-mini-instruct", 3.8)])
def test_phi_mini_models_are_3_8b(stem, billions):
    # microsoft/Phi-3-mini-4k-instruct and Phi-4-mini-instruct model cards: 3.8B parameters
    assert round(count(stem).total / B, 1) == billions


def test_falcon_7b_is_7b_and_ties_its_head_as_transformers_does():
    # tiiuae/falcon-7b card: 7B; FalconConfig leaves tie_word_embeddings at its default (true): 6.92B,
    # 7.22B when the head is stored apart (llama.cpp's count, models.csv)
    result = count("falcon-7b-instruct")
    assert result.total == 6_921_720_704
    assert round((result.total + 65_024 * 4544) / B, 2) == 7.22


def test_falcon_40b_is_41_3b_tied_and_41_8b_with_its_head_apart():
    # tiiuae/falcon-40b card: 40B; models.csv recomputes 41.84B with the head stored apart
    result = count("falcon-40b")
    assert round(result.total / B, 1) == 41.3 and round((result.total + 65_024 * 8192) / B, 2) == 41.84


def test_starcoder2_7b_is_7_17b():
    # bigcode/starcoder2-7b card: 7B; models.csv recomputes 7.17B (tied embeddings, vocab 49152)
    assert round(count("starcoder2-7b").total / B, 2) == 7.17


# How the parts fit


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda p: p.stem)
def test_the_parts_sum_to_the_total_and_active_drops_only_unused_experts(path):
    result = kv.count_params(json.loads(path.read_text(encoding="utf-8")))
    parts = (result.embedding, result.attention, result.mlp, result.experts_total, result.norms, result.lm_head)
    assert sum(parts) == result.total
    assert result.active == result.total - result.experts_total + result.experts_active
    assert 0 <= result.experts_active <= result.experts_total


def test_a_dense_model_uses_every_parameter():
    result = count("llama-3.1-8b")
    assert result.active == result.total and result.experts_total == 0


def test_qwen2_has_a_bias_on_q_k_and_v():
    # Qwen2Attention: q_proj, k_proj, v_proj with bias=True, o_proj without
    with_bias = count("qwen2.5-7b")
    as_llama = kv.count_params({**config("qwen2.5-7b"), "model_type": "llama", "architectures": ["LlamaForCausalLM"]})
    assert with_bias.attention - as_llama.attention == 28 * (28 * 128 + 2 * 4 * 128)


def test_gpt_oss_has_one_attention_sink_per_head():
    with_sinks = count("gpt-oss-20b").attention
    without = 24 * attention_params(hidden=2880, heads=64, kv_heads=8, head_dim=64, qkv_bias=True, o_bias=True)
    assert with_sinks - without == 24 * 64


def test_the_attention_and_mlp_helpers_follow_llama():
    # Llama 3.1 8B: 4096·4096 + 2·4096·1024 + 4096·4096 = 41,943,040; 3·4096·14336 = 176,160,768
    assert attention_params(hidden=4096, heads=32, kv_heads=8, head_dim=128) == 41_943_040
    assert gated_mlp_params(hidden=4096, intermediate=14336) == 176_160_768


def test_an_unknown_architecture_without_vocab_cannot_be_counted():
    with pytest.raises(kv.ConfigError, match="vocab_size") as caught:
        kv.count_params({"model_type": "x", "num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 8})
    assert caught.value.code == "missing_field"


#: Where data/models.csv's published total differs from the count, and why (reported with issue 5).
CSV_DIFFERENCES = {
    "falcon-7b-instruct": "models.csv counts the head apart (7.22B); transformers ties it (6.92B)",
    "falcon-40b": "models.csv counts the head apart (41.84B); transformers ties it (41.30B)",
    "gemma-3-27b-it": "models.csv adds the 417M vision tower (27.4B); this counts the text decoder (27.0B)",
}
CSV_ROWS = {
    "llama-2-7b": "llama-2-7b", "llama-3.1-8b": "llama-3.1-8b", "llama-3.2-3b": "llama-3.2-3b",
    "mistral-7b-v0.1": "mistral-7b-v0.1", "mistral-7b-v0.3": "mistral-7b-v0.3", "mixtral-8x7b": "mixtral-8x7b",
    "qwen2.5-7b": "qwen2.5-7b", "qwen3-32b": "qwen3-32b", "qwen3-30b-a3b": "qwen3-30b-a3b",
    "qwen3-next-80b-a3b": "qwen3-next-80b-a3b", "gemma-2-9b": "gemma-2-9b", "gemma-3-27b-it": "gemma-3-27b",
    "gpt-oss-20b": "gpt-oss-20b", "deepseek-v2-lite": "deepseek-v2-lite", "deepseek-v3": "deepseek-v3",
    "kimi-k2-abbreviated": "kimi-k2", "falcon-7b-instruct": "falcon-7b", "falcon-40b": "falcon-40b", "gpt2": "gpt2",
    "phi-4-mini-instruct": "phi-4-mini", "starcoder2-7b": "starcoder2-7b",
}  # fmt: skip


@pytest.mark.parametrize(("stem", "row"), CSV_ROWS.items())
def test_the_count_agrees_with_the_data_file_within_its_rounding(stem, row):
    published = kv.load_models()[row].total_params
    counted = count(stem).total
    if stem in CSV_DIFFERENCES:
        assert abs(counted - published) / published > 0.005, CSV_DIFFERENCES[stem]
    else:
        assert abs(counted - published) / published < 0.005
