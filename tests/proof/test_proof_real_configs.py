"""Real published config.json files, shrunk to tiny models that keep their ratios, and their published figures.

The five files in tests/kvcore/configs/ are excerpts of the real configs (Meta's
Llama 3.1 8B, DeepSeek-V3, Gemma 2 9B, gpt-oss-20b, GPT-2). Each is shrunk by
whole divisors that keep every ratio the cache depends on (query : KV heads, head_dim
against hidden / heads, latent : RoPE dims, the layer pattern); one forward pass of
the tiny model then gives its bytes per token and layer, which multiplied back by
the divisors and by the real layer count must equal kvcore's figure for the real file.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hf_cache_probe import prefill
from tiny_families import SHORT_PROMPT_TOKENS, VOCAB, WINDOW_TOKENS
from transformers import CONFIG_MAPPING, AutoConfig

import kvcore as kv

CONFIGS = Path(__file__).parents[1] / "kvcore" / "configs"
BF16_BYTES = 2
REAL_FILES = sorted(path.stem for path in CONFIGS.glob("*.json"))
# model_type values with no config class in transformers: checkpoints that still ship their own code
# (trust_remote_code), such as Falcon's pre-port RefinedWeb files and Kimi K2.
REMOTE_CODE_MODEL_TYPES = {"RefinedWeb", "RefinedWebModel", "kimi_k2"}


def real_config(name: str) -> dict[str, Any]:
    return json.loads((CONFIGS / f"{name}.json").read_text(encoding="utf-8"))


def exact(value: int, divisor: int) -> int:
    """value / divisor, refusing a remainder (a rounded size would break the ratios)."""
    assert value % divisor == 0, f"{value} is not a multiple of {divisor}"
    return value // divisor


@dataclass(frozen=True)
class Shrink:
    """How one real config becomes a tiny one, and the factor that scales a layer's cache back."""

    name: str
    tiny: Callable[[dict[str, Any]], dict[str, Any]]
    cache_scale: int  # real values per token and layer ÷ tiny ones


def _llama(real: dict[str, Any]) -> dict[str, Any]:
    # heads ÷ 4 (32:8 → 8:2), hidden ÷ 32 so head_dim = hidden / heads goes 128 → 16 (÷ 8).
    return {
        "model_type": real["model_type"],
        "vocab_size": VOCAB,
        "hidden_size": exact(real["hidden_size"], 32),
        "intermediate_size": 256,
        "num_hidden_layers": 4,
        "num_attention_heads": exact(real["num_attention_heads"], 4),
        "num_key_value_heads": exact(real["num_key_value_heads"], 4),
        "max_position_embeddings": 256,
    }


def _deepseek_v3(real: dict[str, Any]) -> dict[str, Any]:
    # Latent, RoPE, nope, v and q_lora dims ÷ 16 (512:64 → 32:4); 128 heads → 4; 256 experts → 4.
    return {
        "model_type": real["model_type"],
        "vocab_size": VOCAB,
        "hidden_size": exact(real["hidden_size"], 112),
        "intermediate_size": 128,
        "moe_intermediate_size": 32,
        "num_hidden_layers": 4,
        "num_attention_heads": exact(real["num_attention_heads"], 32),
        "num_key_value_heads": exact(real["num_key_value_heads"], 32),
        "kv_lora_rank": exact(real["kv_lora_rank"], 16),
        "qk_rope_head_dim": exact(real["qk_rope_head_dim"], 16),
        "qk_nope_head_dim": exact(real["qk_nope_head_dim"], 16),
        "v_head_dim": exact(real["v_head_dim"], 16),
        "q_lora_rank": exact(real["q_lora_rank"], 16),
        "n_routed_experts": exact(real["n_routed_experts"], 64),
        "num_experts_per_tok": exact(real["num_experts_per_tok"], 4),
        "n_shared_experts": 1,
        "n_group": 1,
        "topk_group": 1,
        "first_k_dense_replace": 1,
        "max_position_embeddings": 256,
    }


def _gemma_2(real: dict[str, Any]) -> dict[str, Any]:
    # heads ÷ 4 (16:8 → 4:2), head_dim ÷ 16 (256 → 16), hidden ÷ 64 (hidden / heads : head_dim stays 224 : 256),
    # window 4096 → 16; the sliding / full alternation comes from model_type gemma2, as in the real file.
    return {
        "model_type": real["model_type"],
        "vocab_size": VOCAB,
        "hidden_size": exact(real["hidden_size"], 64),
        "intermediate_size": 128,
        "num_hidden_layers": 4,
        "num_attention_heads": exact(real["num_attention_heads"], 4),
        "num_key_value_heads": exact(real["num_key_value_heads"], 4),
        "head_dim": exact(real["head_dim"], 16),
        "sliding_window": exact(real["sliding_window"], real["sliding_window"] // WINDOW_TOKENS),
        "max_position_embeddings": 256,
    }


def _gpt_oss(real: dict[str, Any]) -> dict[str, Any]:
    # heads ÷ 4 (64:8 → 16:2), head_dim ÷ 8 (64 → 8), window 128 → 16, the first 4 layer_types, experts 32 → 4
    # (top-4 → 2). hidden ÷ 45 = 64: it does not size the cache (head_dim is explicit), and the MoE kernel wants
    # rows that are a multiple of 16 bytes, which 2880 ÷ 32 = 90 bfloat16 values are not.
    return {
        "model_type": real["model_type"],
        "vocab_size": VOCAB,
        "hidden_size": exact(real["hidden_size"], 45),
        "intermediate_size": 64,
        "num_hidden_layers": 4,
        "num_attention_heads": exact(real["num_attention_heads"], 4),
        "num_key_value_heads": exact(real["num_key_value_heads"], 4),
        "head_dim": exact(real["head_dim"], 8),
        "sliding_window": exact(real["sliding_window"], 8),
        "layer_types": real["layer_types"][:4],
        "num_local_experts": exact(real["num_local_experts"], 8),
        "num_experts_per_tok": exact(real["num_experts_per_tok"], 2),
        "max_position_embeddings": 256,
    }


def _gpt2(real: dict[str, Any]) -> dict[str, Any]:
    # heads ÷ 3 (12 → 4), n_embd ÷ 12 so head_dim = n_embd / heads goes 64 → 16 (÷ 4).
    return {
        "model_type": real["model_type"],
        "vocab_size": VOCAB,
        "n_embd": exact(real["n_embd"], 12),
        "n_layer": 4,
        "n_head": exact(real["n_head"], 3),
        "n_positions": 64,
        "bos_token_id": 0,
        "eos_token_id": 0,
    }


SHRINKS = {
    shrink.name: shrink
    for shrink in (
        Shrink(name="llama-3.1-8b", tiny=_llama, cache_scale=4 * 8),  # KV heads ÷ 4, head_dim ÷ 8
        Shrink(name="deepseek-v3", tiny=_deepseek_v3, cache_scale=16),  # latent and RoPE dims ÷ 16
        Shrink(name="gemma-2-9b", tiny=_gemma_2, cache_scale=4 * 16),  # KV heads ÷ 4, head_dim ÷ 16
        Shrink(name="gpt-oss-20b", tiny=_gpt_oss, cache_scale=4 * 8),  # KV heads ÷ 4, head_dim ÷ 8
        Shrink(name="gpt2", tiny=_gpt2, cache_scale=3 * 4),  # heads ÷ 3, head_dim ÷ 4
    )
}


@pytest.mark.parametrize("name", SHRINKS)
def test_the_tiny_forward_pass_scaled_back_gives_kvcore_bytes_per_token_for_the_real_file(name):
    shrink = SHRINKS[name]
    real = real_config(name)
    prefilled = prefill(shrink.tiny(real), "bfloat16", SHORT_PROMPT_TOKENS)  # inside every window
    layers = len(prefilled.layers)
    tiny_per_token_and_layer = prefilled.bytes / (SHORT_PROMPT_TOKENS * layers)
    real_layers = kv.model_from_config(real).num_hidden_layers
    scaled_back = tiny_per_token_and_layer * shrink.cache_scale * real_layers
    assert scaled_back == kv.kv_bytes_per_token(kv.model_from_config(real), bytes_per_value=BF16_BYTES)


def test_every_real_file_transformers_cannot_read_is_a_remote_code_checkpoint():
    model_types = {real_config(name)["model_type"] for name in REAL_FILES}
    assert model_types - set(CONFIG_MAPPING) <= REMOTE_CODE_MODEL_TYPES


@pytest.mark.parametrize("name", [name for name in REAL_FILES if real_config(name)["model_type"] in CONFIG_MAPPING])
def test_kvcore_reads_the_real_file_and_the_config_class_saved_from_it_alike(name):
    # A fine-tune saved with save_pretrained carries the saved form (derived fields such as layer_types).
    real = real_config(name)
    saved = AutoConfig.for_model(**real).to_dict()
    from_real, from_saved = kv.model_from_config(real), kv.model_from_config(saved)
    assert [layer.kind for layer in from_saved.layers] == [layer.kind for layer in from_real.layers]
    assert kv.kv_bytes_per_token(from_saved) == kv.kv_bytes_per_token(from_real)
    assert float(kv.sequence_kv_bytes(from_saved, context_tokens=10_000)) == float(
        kv.sequence_kv_bytes(from_real, context_tokens=10_000)
    )


def test_deepseek_v3_caches_70_272_bytes_per_token_in_bf16():
    # DeepSeek-V3 config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64. MLA caches one latent
    # c_KV of d_c values plus the shared RoPE key of d_h^R values per token and layer (DeepSeek-V2 paper,
    # arXiv:2405.04434, §2.1.2 and Table 1): 61 · (512 + 64) · 2 B = 70,272 B.
    model = kv.model_from_config(real_config("deepseek-v3"))
    assert kv.kv_bytes_per_token(model, bytes_per_value=BF16_BYTES) == 61 * (512 + 64) * 2 == 70_272


def test_the_tiny_deepseek_v3_forward_pass_scaled_back_gives_70_272_bytes_per_token():
    shrink = SHRINKS["deepseek-v3"]
    prefilled = prefill(shrink.tiny(real_config("deepseek-v3")), "bfloat16", SHORT_PROMPT_TOKENS)
    per_token_and_layer = prefilled.bytes / (SHORT_PROMPT_TOKENS * len(prefilled.layers))
    assert per_token_and_layer == (32 + 4) * 2  # the tiny latent: kv_lora_rank 32 + qk_rope_head_dim 4, BF16
    assert per_token_and_layer * shrink.cache_scale * 61 == 70_272


def test_llama_3_1_8b_caches_131_072_bytes_per_token_in_bf16():
    # Meta's Llama 3.1 8B config.json: 32 layers, 8 KV heads, head_dim 4096 / 32 = 128 (no head_dim key):
    # 2 · 32 · 8 · 128 · 2 B = 131,072 B (seed 000).
    model = kv.model_from_config(real_config("llama-3.1-8b"))
    assert kv.kv_bytes_per_token(model, bytes_per_value=BF16_BYTES) == 2 * 32 * 8 * 128 * 2 == 131_072


def test_the_tiny_llama_forward_pass_scaled_back_gives_131_072_bytes_per_token():
    shrink = SHRINKS["llama-3.1-8b"]
    prefilled = prefill(shrink.tiny(real_config("llama-3.1-8b")), "bfloat16", SHORT_PROMPT_TOKENS)
    per_token_and_layer = prefilled.bytes / (SHORT_PROMPT_TOKENS * len(prefilled.layers))
    assert per_token_and_layer == 2 * 2 * 16 * 2  # K and V · 2 KV heads · head_dim 16 · BF16
    assert per_token_and_layer * shrink.cache_scale * 32 == 131_072
