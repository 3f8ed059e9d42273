"""The tiny models of the proof suite: one per family, shaped like a real model, small enough for a CPU.

Each ``config`` is written the way the family's published config.json is (the
fields its authors set, ``model_type`` included, nothing transformers derives such
as ``layer_types`` unless the real file has it), with the real model's ratios kept:
query heads : KV heads, explicit ``head_dim`` against hidden / heads, the layer
pattern, MLA's latent : RoPE split. The real model whose ratios a case keeps is
named in ``ratios_of`` (a row of data/models.csv, whose source_url is the config).
Sizes are tiny: 4–6 layers, hidden 56–144, vocab 256, windows of 16 tokens so a
37-token prompt overflows them and a 9-token prompt does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

LONG_PROMPT_TOKENS = 37
SHORT_PROMPT_TOKENS = 9
WINDOW_TOKENS = 16
VOCAB = 256


@dataclass(frozen=True)
class Family:
    """One tiny model: its published-style config, the dtype it runs in, and what its cache shows."""

    id: str
    ratios_of: str
    shows: str
    config: dict[str, Any]
    dtype: str = "float32"
    # Whole-cache bytes transformers holds ÷ kvcore's serving figure after the 37-token prompt
    # (1 where they are equal); the test that checks it says why they differ.
    long_prompt_ratio: Fraction = Fraction(1)
    tags: frozenset[str] = field(default_factory=frozenset)


def _layer_types(*kinds: str) -> list[str]:
    return [f"{kind}_attention" for kind in kinds]


FAMILIES = (
    Family(
        id="llama-3.1-gqa",
        ratios_of="llama-3.1-8b (32 query : 8 KV heads = 4:1, head_dim = hidden / heads)",
        shows="GQA: 2 · n_kv · head_dim values per token and layer, in bfloat16",
        config={
            "model_type": "llama",
            "vocab_size": VOCAB,
            "hidden_size": 128,
            "intermediate_size": 256,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 2,
            "max_position_embeddings": 256,
        },
        dtype="bfloat16",
    ),
    Family(
        id="llama-2-mha",
        ratios_of="llama-2-7b (32 query = 32 KV heads: MHA)",
        shows="MHA: one K and one V per query head",
        config={
            "model_type": "llama",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 8,
            "max_position_embeddings": 256,
        },
    ),
    Family(
        id="mistral-sliding",
        ratios_of="mistral-7b-v0.1 (32:8 heads, sliding_window 4096 on every layer, shorter than the context)",
        shows="every layer slides over a window shorter than the prompt",
        config={
            "model_type": "mistral",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 2,
            "sliding_window": WINDOW_TOKENS,
            "max_position_embeddings": 256,
        },
        long_prompt_ratio=Fraction(15, 16),  # 4 sliding layers keep 15 tokens where kvcore counts 16
        tags=frozenset({"sliding"}),
    ),
    Family(
        id="mixtral-moe",
        ratios_of="mixtral-8x7b (32:8 heads, 8 experts top-2, no sliding window)",
        shows="MoE experts change the weights, not the cache",
        config={
            "model_type": "mixtral",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 64,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 2,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "sliding_window": None,
            "max_position_embeddings": 256,
        },
        dtype="bfloat16",
    ),
    Family(
        id="qwen2",
        ratios_of="qwen2.5-7b (28:4 heads = 7:1, q/k/v biases, use_sliding_window false)",
        shows="q/k/v projection biases change nothing in the cache; a disabled window is no window",
        config={
            "model_type": "qwen2",
            "vocab_size": VOCAB,
            "hidden_size": 112,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 14,
            "num_key_value_heads": 2,
            "use_sliding_window": False,
            "sliding_window": 256,
            "max_window_layers": 4,
            "max_position_embeddings": 256,
        },
    ),
    Family(
        id="qwen2-sliding",
        ratios_of="qwen2 config fields use_sliding_window / max_window_layers (layers from max_window_layers on slide)",
        shows="use_sliding_window true: layers 2 and 3 slide, layers 0 and 1 attend to everything",
        config={
            "model_type": "qwen2",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 4,
            "use_sliding_window": True,
            "sliding_window": WINDOW_TOKENS,
            "max_window_layers": 2,
            "max_position_embeddings": 256,
        },
        long_prompt_ratio=Fraction(37 + 15, 37 + 16),  # two full layers (37) and two sliding (15 vs 16)
        tags=frozenset({"sliding"}),
    ),
    Family(
        id="qwen3",
        ratios_of="qwen3-0.6b (16:8 heads = 2:1, head_dim 128 = 2 × hidden 1024 / 16 heads)",
        shows="an explicit head_dim twice hidden / heads sets the cache, not hidden / heads",
        config={
            "model_type": "qwen3",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 32,
            "max_position_embeddings": 256,
        },
    ),
    Family(
        id="qwen3-moe",
        ratios_of="qwen3-30b-a3b (32:4 heads = 8:1, head_dim 128 = 2 × hidden 2048 / 32, 128 experts top-8)",
        shows="MoE with an explicit head_dim",
        config={
            "model_type": "qwen3_moe",
            "vocab_size": VOCAB,
            "hidden_size": 128,
            "intermediate_size": 128,
            "moe_intermediate_size": 32,
            "num_hidden_layers": 4,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "head_dim": 16,
            "num_experts": 8,
            "num_experts_per_tok": 2,
            "max_position_embeddings": 256,
        },
        dtype="bfloat16",
    ),
    Family(
        id="qwen3-next",
        ratios_of=(
            "qwen3-next-80b-a3b (full_attention_interval 4: 3 Gated DeltaNet layers then 1 full; 16:2 heads = 8:1; "
            "linear heads 32 value : 16 key, conv kernel 4)"
        ),
        shows="linear-attention layers hold a constant conv + recurrent state; the full layer holds K and V",
        config={
            "model_type": "qwen3_next",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "moe_intermediate_size": 32,
            "shared_expert_intermediate_size": 32,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 1,
            "head_dim": 16,
            "full_attention_interval": 4,
            "linear_num_value_heads": 4,
            "linear_num_key_heads": 2,
            "linear_key_head_dim": 16,
            # d_v ≠ d_k here (the real model has 128 = 128) so a swapped dimension would show.
            "linear_value_head_dim": 8,
            "linear_conv_kernel_dim": 4,
            "num_experts": 8,
            "num_experts_per_tok": 2,
            "max_position_embeddings": 256,
        },
        dtype="bfloat16",
        # Linear layer: transformers 4 · 96 · 2 + 512 · 4 = 2,816 B vs vLLM (3 · 96 + 512) · 2 = 1,600 B;
        # full layer 2 · 1 · 16 · 37 · 2 = 2,368 B in both: (3 · 2816 + 2368) / (3 · 1600 + 2368).
        long_prompt_ratio=Fraction(3 * 2816 + 2368, 3 * 1600 + 2368),
        tags=frozenset({"linear"}),
    ),
    Family(
        id="gemma-mqa",
        ratios_of="gemma-2b (8 query : 1 KV head = MQA, explicit head_dim 256)",
        shows="MQA: one K and one V shared by every query head, with an explicit head_dim",
        config={
            "model_type": "gemma",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 32,
            "max_position_embeddings": 256,
        },
    ),
    Family(
        id="gemma-2",
        ratios_of="gemma-2-9b (16:8 heads, head_dim 256, sliding / full alternating from layer 0, window 4096)",
        shows="alternating sliding and full layers, the window shorter than the prompt",
        config={
            "model_type": "gemma2",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 32,
            "sliding_window": WINDOW_TOKENS,
            "max_position_embeddings": 256,
        },
        long_prompt_ratio=Fraction(15 + 37, 16 + 37),  # per pair: a sliding layer (15 vs 16) and a full one (37)
        tags=frozenset({"sliding"}),
    ),
    Family(
        id="gemma-3",
        ratios_of="gemma-3-1b (4 query : 1 KV head, head_dim 256, sliding_window_pattern 6: 5 sliding then 1 full)",
        shows="five sliding layers for each full one",
        config={
            "model_type": "gemma3_text",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 6,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 32,
            "sliding_window": WINDOW_TOKENS,
            "sliding_window_pattern": 6,
            "max_position_embeddings": 256,
        },
        long_prompt_ratio=Fraction(5 * 15 + 37, 5 * 16 + 37),
        tags=frozenset({"sliding"}),
    ),
    Family(
        id="gpt-oss",
        ratios_of="gpt-oss-20b (64:8 heads, head_dim 64, layer_types sliding / full, window 128, 32 experts top-4)",
        shows="layer_types sliding / full; attention sinks are weights, not cache",
        config={
            "model_type": "gpt_oss",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 64,
            "num_hidden_layers": 4,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "head_dim": 8,
            "sliding_window": WINDOW_TOKENS,
            "layer_types": _layer_types("sliding", "full", "sliding", "full"),
            "num_local_experts": 4,
            "num_experts_per_tok": 2,
            "max_position_embeddings": 256,
        },
        dtype="bfloat16",
        long_prompt_ratio=Fraction(15 + 37, 16 + 37),
        tags=frozenset({"sliding"}),
    ),
    Family(
        id="deepseek-v2",
        ratios_of="deepseek-v2-lite (16 heads, kv_lora_rank 512 : qk_rope_head_dim 64 = 8:1, no q_lora_rank)",
        shows="MLA: one latent of kv_lora_rank + qk_rope_head_dim values per token and layer",
        config={
            "model_type": "deepseek_v2",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "moe_intermediate_size": 32,
            "num_hidden_layers": 4,
            "num_attention_heads": 4,
            "num_key_value_heads": 4,
            "kv_lora_rank": 32,
            "q_lora_rank": None,
            "qk_rope_head_dim": 4,
            "qk_nope_head_dim": 8,
            "v_head_dim": 8,
            "n_routed_experts": 4,
            "n_shared_experts": 1,
            "num_experts_per_tok": 2,
            "first_k_dense_replace": 1,
            "max_position_embeddings": 256,
        },
        tags=frozenset({"mla"}),
    ),
    Family(
        id="deepseek-v3",
        ratios_of="deepseek-v3 (128 heads, kv_lora_rank 512 : rope 64, q_lora_rank 1536, first 3 layers dense)",
        shows="MLA with a low-rank query as well",
        config={
            "model_type": "deepseek_v3",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "moe_intermediate_size": 32,
            "num_hidden_layers": 4,
            "num_attention_heads": 4,
            "num_key_value_heads": 4,
            "kv_lora_rank": 32,
            "q_lora_rank": 96,
            "qk_rope_head_dim": 4,
            "qk_nope_head_dim": 8,
            "v_head_dim": 8,
            "n_routed_experts": 4,
            "n_shared_experts": 1,
            "num_experts_per_tok": 2,
            "n_group": 1,
            "topk_group": 1,
            "first_k_dense_replace": 1,
            "max_position_embeddings": 256,
        },
        dtype="bfloat16",
        tags=frozenset({"mla"}),
    ),
    Family(
        id="falcon-7b-mqa",
        ratios_of="falcon-7b (71 query heads, multi_query true: 1 KV head)",
        shows="multi_query: one K and one V per layer",
        config={
            "model_type": "falcon",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "multi_query": True,
            "new_decoder_architecture": False,
            "parallel_attn": True,
            "bias": False,
        },
    ),
    Family(
        id="falcon-40b-new-decoder",
        ratios_of="falcon-40b (128 query heads : 8 KV groups = 16:1, new_decoder_architecture true)",
        shows="new_decoder_architecture with num_kv_heads KV groups",
        config={
            "model_type": "falcon",
            "vocab_size": VOCAB,
            "hidden_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 16,
            "num_kv_heads": 1,
            "new_decoder_architecture": True,
            "parallel_attn": True,
            "bias": False,
        },
        long_prompt_ratio=Fraction(16),  # every query head's copy of its group's K and V
        tags=frozenset({"falcon_broadcast"}),
    ),
    Family(
        id="gpt2",
        ratios_of="gpt2 (12 heads of 64 = n_embd 768, MHA, n_layer / n_head / n_embd names)",
        shows="GPT-2's own field names; MHA",
        config={
            "model_type": "gpt2",
            "vocab_size": VOCAB,
            "n_embd": 64,
            "n_layer": 4,
            "n_head": 4,
            "n_positions": 64,
            "bos_token_id": 0,
            "eos_token_id": 0,
        },
    ),
    Family(
        id="phi-3",
        ratios_of="phi-3.5-mini (32 query = 32 KV heads: MHA, head_dim = hidden / heads; Phi-3 sets sliding_window)",
        shows="MHA with a sliding_window on every layer, shorter than the prompt",
        config={
            "model_type": "phi3",
            "vocab_size": VOCAB,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 8,
            "sliding_window": WINDOW_TOKENS,
            "max_position_embeddings": 256,
            "pad_token_id": None,
            "bos_token_id": 0,
            "eos_token_id": 0,
        },
        long_prompt_ratio=Fraction(15, 16),
        tags=frozenset({"sliding"}),
    ),
    Family(
        id="starcoder2",
        ratios_of="starcoder2-7b (36:4 heads = 9:1, head_dim 128 = hidden / heads, sliding_window 4096 on every layer)",
        shows="GQA 9:1 with a window on every layer",
        config={
            "model_type": "starcoder2",
            "vocab_size": VOCAB,
            "hidden_size": 144,
            "intermediate_size": 128,
            "num_hidden_layers": 4,
            "num_attention_heads": 18,
            "num_key_value_heads": 2,
            "sliding_window": WINDOW_TOKENS,
            "max_position_embeddings": 256,
            "bos_token_id": 0,
            "eos_token_id": 0,
        },
        long_prompt_ratio=Fraction(15, 16),
        tags=frozenset({"sliding"}),
    ),
)

FAMILY_IDS = [family.id for family in FAMILIES]


def family(family_id: str) -> Family:
    """The family with this id."""
    return next(item for item in FAMILIES if item.id == family_id)


def tagged(tag: str) -> list[Family]:
    """Families whose cache shows one behaviour ('sliding', 'linear', 'mla', 'falcon_broadcast')."""
    return [item for item in FAMILIES if tag in item.tags]
