"""The usual wrong readings of a config, each checked on a real model of data/models.csv."""

import pytest

import kvcore as kv
from course import mistakes

MODELS = kv.load_models()


def test_ignoring_kv_heads_makes_llama_3_1_8b_four_times_too_big():
    # config.json: 32 query heads, 8 KV heads -> MHA reading 2·32·32·128·2 = 524,288 B/token vs 131,072 (seed 000).
    wrong = mistakes.ignoring_kv_heads(MODELS["llama-3.1-8b"])
    assert kv.kv_bytes_per_token(wrong) == 524_288 == 4 * kv.kv_bytes_per_token(MODELS["llama-3.1-8b"])


def test_ignoring_kv_heads_makes_falcon_7b_seventy_one_times_too_big():
    # Falcon-7B is multi-query: 1 KV head for 71 query heads (config: multi_query true, n_head 71).
    model = MODELS["falcon-7b"]
    assert kv.kv_bytes_per_token(mistakes.ignoring_kv_heads(model)) == 71 * kv.kv_bytes_per_token(model)


def test_an_mha_model_has_no_kv_heads_to_ignore():
    assert mistakes.ignoring_kv_heads(MODELS["gpt2"]) is None


def test_head_dim_from_hidden_size_undercounts_qwen3_32b():
    # Qwen3-32B config: hidden_size 5120, 64 query heads, head_dim 128 (not 5120/64 = 80).
    wrong = mistakes.head_dim_from_hidden(MODELS["qwen3-32b"])
    assert wrong.head_dim == 80
    assert kv.kv_bytes_per_token(wrong) / kv.kv_bytes_per_token(MODELS["qwen3-32b"]) == pytest.approx(80 / 128)


def test_head_dim_from_hidden_size_changes_nothing_when_they_agree():
    assert mistakes.head_dim_from_hidden(MODELS["llama-3.1-8b"]) is None


def test_a_factor_two_doubles_deepseek_v3s_latent():
    # DeepSeek-V3: 61 layers × (512 + 64) × 2 B = 70,272 B/token (arXiv:2405.04434); counted twice: 140,544.
    wrong = mistakes.mla_with_factor_two(MODELS["deepseek-v3"])
    assert kv.kv_bytes_per_token(MODELS["deepseek-v3"]) == 70_272
    assert kv.kv_bytes_per_token(wrong) == 140_544


def test_sliding_layers_charged_the_whole_context_inflate_gemma_3_at_32k_tokens():
    # Gemma 3 27B: 5 of every 6 layers keep only the last 1,024 tokens.
    model = MODELS["gemma-3-27b"]
    wrong = mistakes.sliding_as_full(model)
    assert wrong.count("sliding") == 0
    assert float(kv.sequence_kv_bytes(wrong, context_tokens=32_768)) > 5 * float(
        kv.sequence_kv_bytes(model, context_tokens=32_768)
    )
    # Below the window both readings agree: the mistake only shows on long contexts.
    assert float(kv.sequence_kv_bytes(wrong, context_tokens=1_000)) == float(
        kv.sequence_kv_bytes(model, context_tokens=1_000)
    )


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_every_wrong_reading_of_every_model_is_a_valid_model_that_differs(model_id):
    model = MODELS[model_id]
    for name, wrong in mistakes.wrong_readings(model).items():
        assert name in mistakes.MISTAKES
        assert float(kv.sequence_kv_bytes(wrong, context_tokens=1 << 20)) != float(
            kv.sequence_kv_bytes(model, context_tokens=1 << 20)
        )
