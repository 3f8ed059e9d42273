"""Parameters counted from a config.json, tensor by tensor, as each family's modeling code builds them.

The count is the sum of the weight matrices and vectors the transformers class
creates (``modeling_<family>.py``), so it reproduces ``model.num_parameters()``:

* embedding: vocab_size · hidden (+ GPT-2's learned positions n_positions · hidden);
* attention per layer: q, k, v, o projections — hidden · heads · head_dim for q and o,
  hidden · kv_heads · head_dim for k and v — plus biases where the family has them
  (Qwen2's q/k/v bias, StarCoder2 and GPT-2 everywhere, gpt-oss everywhere plus one
  attention sink per head, Falcon when ``bias``); MLA's low-rank q/kv projections
  (DeepSeek-V2 paper §2.1); Qwen3-Next's gated q and its Gated DeltaNet mixers;
* mlp (dense layers): gate, up, down = 3 · hidden · intermediate (SwiGLU/GeGLU);
  two matrices for GPT-2, Falcon and StarCoder2;
* experts_total: every routed expert, router and shared expert of the MoE layers;
  experts_active: what one token uses (top-k routed experts + router + shared);
* norms: every RMSNorm/LayerNorm weight (and bias), q/k norms included;
* lm_head: vocab · hidden, 0 when tied to the embedding (``tie_word_embeddings``,
  whose default depends on the family: Gemma, GPT-2, Falcon and StarCoder2 tie).

``total`` is the sum of those parts. ``active`` = total − experts_total +
experts_active: the parameters one token goes through, embedding table included.
Makers differ here: Mistral (Mixtral's 12.9B) and Qwen (Qwen3-30B-A3B's 3.3B) count
the embedding table; DeepSeek (V3's 37B, V2-Lite's 2.4B) and OpenAI (gpt-oss's
3.61B and 5.13B) do not, so compare theirs with active − embedding.
DeepSeek-V3's multi-token-prediction module is not in ``total`` (the tech report's
671B); it is ``mtp``: its decoder layer, eh_proj and three norms. The checkpoint
also stores a copy of the embedding and head for it, which brings DeepSeek's
published 685B (671B + 14B). Gemma 3's vision tower is not counted (text decoder only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .config_fields import (
    MAX_EXPERTS,
    MAX_HEAD_DIM,
    MAX_HEADS,
    MAX_INTERMEDIATE,
    MAX_LAYERS,
    MAX_TOKENS,
    MAX_VOCAB,
    ConfigFields,
    Layout,
    fields_of,
    layout_of,
)
from .errors import ConfigError

__all__ = [
    "ParamCount",
    "count_params",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ParamCount:
    """A parameter count by part; ``total`` and ``active`` are derived (counts, not billions)."""

    embedding: int
    attention: int
    mlp: int
    experts_total: int
    experts_active: int
    norms: int
    lm_head: int
    mtp: int = 0
    total: int = field(init=False)
    active: int = field(init=False)

    def __post_init__(self) -> None:
        total = self.embedding + self.attention + self.mlp + self.experts_total + self.norms + self.lm_head
        object.__setattr__(self, "total", total)
        object.__setattr__(self, "active", total - self.experts_total + self.experts_active)


def count_params(config: Mapping[str, Any]) -> ParamCount:
    """Count the parameters of the model a config.json describes.

    ConfigError when the config lacks a field counting needs (e.g. vocab_size of
    an unknown architecture) or holds a bad value.

    >>> count_params({"model_type": "gpt2", "n_layer": 12, "n_head": 12, "n_embd": 768}).total
    124439808
    """
    return params_from_fields(fields_of(config))


def params_from_fields(fields: ConfigFields) -> ParamCount:
    """Count parameters from a config already wrapped by :func:`kvcore.config_fields.fields_of`."""
    layout = layout_of(fields)
    family = fields.family_key if fields.family else "unknown"
    if family == "gpt2":
        return _gpt2(fields, layout)
    if family == "falcon":
        return _falcon(fields, layout)
    if "mla" in layout.kinds:
        return _mla(fields, layout)
    if family == "gpt_oss":
        return _gpt_oss(fields, layout)
    if family == "qwen3_next":
        return _qwen3_next(fields, layout)
    return _decoder(fields, layout)


def attention_params(
    *, hidden: int, heads: int, kv_heads: int, head_dim: int, qkv_bias: bool = False, o_bias: bool = False
) -> int:
    """Parameters of one attention block with separate q, k, v, o projections.

    Formula: hidden·heads·d (q) + 2·hidden·kv_heads·d (k, v) + heads·d·hidden (o)
    + biases (heads·d + 2·kv_heads·d for q/k/v, hidden for o). Source: LlamaAttention
    in transformers' modeling_llama.py (Qwen2 sets the q/k/v bias, StarCoder2 all four).

    >>> attention_params(hidden=4096, heads=32, kv_heads=8, head_dim=128)
    41943040
    """
    q, kv = heads * head_dim, kv_heads * head_dim
    weights = hidden * q + 2 * hidden * kv + q * hidden
    return weights + (q + 2 * kv if qkv_bias else 0) + (hidden if o_bias else 0)


def gated_mlp_params(*, hidden: int, intermediate: int, bias: bool = False) -> int:
    """Parameters of a gated MLP (gate, up, down): 3 · hidden · intermediate (+ 2·I + hidden biases).

    Source: LlamaMLP in modeling_llama.py (SwiGLU; Gemma's GeGLU, Mixtral/Qwen/DeepSeek experts have the same shape).

    >>> gated_mlp_params(hidden=4096, intermediate=14336)
    176160768
    """
    return 3 * hidden * intermediate + (2 * intermediate + hidden if bias else 0)


def _decoder(fields: ConfigFields, layout: Layout) -> ParamCount:
    """Llama-style decoders: Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE, Gemma 1/2/3, Phi-3, StarCoder2, unknown."""
    family = fields.family_key if fields.family else "unknown"
    hidden = _hidden(layout)
    embedding, lm_head = _embedding_and_head(fields, hidden)
    layers, d = layout.num_hidden_layers, layout.head_dim
    starcoder = family == "starcoder2"
    use_bias = fields.flag("use_bias", fallback=True) if starcoder else False
    attention_bias = fields.flag("attention_bias", fallback=False) if not starcoder else use_bias
    attention = attention_params(
        hidden=hidden,
        heads=layout.num_attention_heads,
        kv_heads=layout.num_key_value_heads,
        head_dim=d,
        qkv_bias=attention_bias or family == "qwen2",
        o_bias=attention_bias,
    )
    norms_per_layer = {"gemma2": 4 * hidden, "gemma3_text": 4 * hidden, "starcoder2": 4 * hidden}.get(
        family, 2 * hidden
    )
    if family in ("qwen3", "qwen3_moe", "gemma3_text"):
        norms_per_layer += 2 * d  # q_norm and k_norm, one weight per head dimension
    final_norm = 2 * hidden if starcoder else hidden
    experts, top_k = _experts(fields)
    moe_layers = _moe_layers(fields, layers) if experts else 0
    dense_layers = layers - moe_layers
    mlp = 0
    if dense_layers:
        intermediate = _intermediate(fields)
        if starcoder:
            mlp = 2 * hidden * intermediate + (intermediate + hidden if use_bias else 0)
        else:
            mlp = gated_mlp_params(
                hidden=hidden, intermediate=intermediate, bias=fields.flag("mlp_bias", fallback=False)
            )
    expert_total = expert_active = 0
    if moe_layers:
        expert_size = gated_mlp_params(hidden=hidden, intermediate=_expert_intermediate(fields, family))
        shared = _shared_expert(fields, hidden)
        router = hidden * experts
        expert_total = router + experts * expert_size + shared
        expert_active = router + top_k * expert_size + shared
    return ParamCount(
        embedding=embedding,
        attention=layers * attention,
        mlp=dense_layers * mlp,
        experts_total=moe_layers * expert_total,
        experts_active=moe_layers * expert_active,
        norms=layers * norms_per_layer + final_norm,
        lm_head=lm_head,
    )


def _gpt_oss(fields: ConfigFields, layout: Layout) -> ParamCount:
    """gpt-oss (modeling_gpt_oss.py): biased q/k/v/o + one attention sink per head; biased router;
    experts with fused gate_up (hidden × 2·I) and down (I × hidden) projections, both biased."""
    hidden, layers = _hidden(layout), layout.num_hidden_layers
    attention = (
        attention_params(
            hidden=hidden,
            heads=layout.num_attention_heads,
            kv_heads=layout.num_key_value_heads,
            head_dim=layout.head_dim,
            qkv_bias=True,
            o_bias=True,
        )
        + layout.num_attention_heads
    )
    experts, top_k = _experts(fields)
    intermediate = _intermediate(fields)
    expert = hidden * 2 * intermediate + 2 * intermediate + intermediate * hidden + hidden
    router = hidden * experts + experts
    embedding, lm_head = _embedding_and_head(fields, hidden)
    return ParamCount(
        embedding=embedding,
        attention=layers * attention,
        mlp=0,
        experts_total=layers * (router + experts * expert),
        experts_active=layers * (router + top_k * expert),
        norms=layers * 2 * hidden + hidden,
        lm_head=lm_head,
    )


def _qwen3_next(fields: ConfigFields, layout: Layout) -> ParamCount:
    """Qwen3-Next (modeling_qwen3_next.py): gated full attention (q_proj doubled) on 1 layer in
    full_attention_interval, Gated DeltaNet elsewhere; MoE with a gated shared expert on every layer."""
    hidden, d = _hidden(layout), layout.head_dim
    heads, kv_heads = layout.num_attention_heads, layout.num_key_value_heads
    full_attention = hidden * heads * d * 2 + 2 * hidden * kv_heads * d + heads * d * hidden
    v_heads = fields.whole(("linear_num_value_heads",), maximum=MAX_HEADS)
    k_dim = fields.whole(("linear_num_key_heads",), maximum=MAX_HEADS) * fields.whole(
        ("linear_key_head_dim",), maximum=MAX_HEAD_DIM
    )
    d_v = fields.whole(("linear_value_head_dim",), maximum=MAX_HEAD_DIM)
    v_dim = v_heads * d_v
    kernel = fields.whole(("linear_conv_kernel_dim",), maximum=MAX_HEAD_DIM)
    delta_net = (
        hidden * (2 * k_dim + 2 * v_dim)  # in_proj_qkvz
        + hidden * 2 * v_heads  # in_proj_ba
        + (2 * k_dim + v_dim) * kernel  # depthwise conv1d, no bias
        + 2 * v_heads  # dt_bias, A_log
        + v_dim * hidden  # out_proj
    )
    full, linear = layout.kinds.count("full"), layout.kinds.count("linear")
    experts, top_k = _experts(fields)
    moe_layers = _moe_layers(fields, layout.num_hidden_layers)
    dense_layers = layout.num_hidden_layers - moe_layers
    expert = gated_mlp_params(hidden=hidden, intermediate=_expert_intermediate(fields, "qwen3_next"))
    shared = _shared_expert(fields, hidden)
    router = hidden * experts
    embedding, lm_head = _embedding_and_head(fields, hidden)
    return ParamCount(
        embedding=embedding,
        attention=full * full_attention + linear * delta_net,
        mlp=dense_layers * gated_mlp_params(hidden=hidden, intermediate=_intermediate(fields)) if dense_layers else 0,
        experts_total=moe_layers * (router + experts * expert + shared),
        experts_active=moe_layers * (router + top_k * expert + shared),
        norms=layout.num_hidden_layers * 2 * hidden + full * 2 * d + linear * d_v + hidden,
        lm_head=lm_head,
    )


def _mla(fields: ConfigFields, layout: Layout) -> ParamCount:
    """DeepSeek-V2/V3 and Kimi K2 (modeling_deepseek_v3.py): MLA attention, first_k_dense_replace dense
    layers, then MoE layers with n_routed_experts, a router (+ its score-correction bias under noaux_tc)
    and n_shared_experts shared experts; the MTP module counted apart."""
    hidden, layers = _hidden(layout), layout.num_hidden_layers
    heads = layout.num_attention_heads
    rank, rope = layout.kv_lora_rank, layout.qk_rope_head_dim
    nope = layout.head_dim - rope
    v_dim = fields.whole(("v_head_dim",), maximum=MAX_HEAD_DIM)
    q_rank = fields.whole(("q_lora_rank",), maximum=MAX_HEAD_DIM, fallback=0, null=0)
    bias = fields.flag("attention_bias", fallback=False)
    q = hidden * q_rank + q_rank * heads * (nope + rope) if q_rank else hidden * heads * (nope + rope)
    attention = (
        q
        + hidden * (rank + rope)  # kv_a_proj_with_mqa
        + rank * heads * (nope + v_dim)  # kv_b_proj
        + heads * v_dim * hidden  # o_proj
        + ((q_rank if q_rank else heads * (nope + rope)) + rank + rope + hidden if bias else 0)
    )
    layer_norms = 2 * hidden + rank + q_rank  # input/post-attention, kv_a_layernorm, q_a_layernorm
    experts, top_k = _experts(fields)
    first_dense = fields.whole(("first_k_dense_replace",), maximum=MAX_LAYERS, minimum=0, fallback=0, null=0)
    frequency = fields.whole(("moe_layer_freq",), maximum=MAX_LAYERS, fallback=1, null=1)
    moe_layers = sum(1 for i in range(layers) if experts and i >= first_dense and i % frequency == 0)
    dense_layers = layers - moe_layers
    expert = gated_mlp_params(hidden=hidden, intermediate=_expert_intermediate(fields, "mla"))
    shared_count = fields.whole(("n_shared_experts",), maximum=MAX_EXPERTS, minimum=0, fallback=0, null=0)
    shared = shared_count * expert
    router = hidden * experts + (experts if fields.values.get("topk_method") == "noaux_tc" else 0)
    moe_total = router + experts * expert + shared
    mlp = gated_mlp_params(hidden=hidden, intermediate=_intermediate(fields)) if dense_layers else 0
    mtp_layers = fields.whole(("num_nextn_predict_layers",), maximum=MAX_LAYERS, minimum=0, fallback=0, null=0)
    if mtp_layers:
        fields.assume(
            "mtp_not_counted",
            "num_nextn_predict_layers",
            mtp_layers,
            f"the {mtp_layers} multi-token-prediction {'layer is' if mtp_layers == 1 else 'layers are'} counted apart "
            "(mtp), not in the total",
        )
    mtp = mtp_layers * (attention + (moe_total if experts else mlp) + layer_norms + 2 * hidden * hidden + 3 * hidden)
    embedding, lm_head = _embedding_and_head(fields, hidden)
    return ParamCount(
        embedding=embedding,
        attention=layers * attention,
        mlp=dense_layers * mlp,
        experts_total=moe_layers * moe_total,
        experts_active=moe_layers * (router + top_k * expert + shared),
        norms=layers * layer_norms + hidden,
        lm_head=lm_head,
        mtp=mtp,
    )


def _falcon(fields: ConfigFields, layout: Layout) -> ParamCount:
    """Falcon (modeling_falcon.py): fused query_key_value of (heads + 2·kv_heads)·head_dim outputs,
    dense, a two-matrix MLP (ffn_hidden_size, default 4·hidden), LayerNorms with bias; biases when ``bias``."""
    hidden, layers, d = _hidden(layout), layout.num_hidden_layers, layout.head_dim
    heads, kv_heads = layout.num_attention_heads, layout.num_key_value_heads
    bias = fields.flag("bias", fallback=False)
    ffn = fields.whole(("ffn_hidden_size",), maximum=MAX_INTERMEDIATE, fallback=4 * hidden, null=4 * hidden)
    qkv = (heads + 2 * kv_heads) * d
    attention = hidden * qkv + heads * d * hidden + (qkv + hidden if bias else 0)
    mlp = 2 * hidden * ffn + (ffn + hidden if bias else 0)
    new_architecture = fields.model_type == "RefinedWeb" or fields.flag("new_decoder_architecture", fallback=False)
    if new_architecture:
        norms = fields.whole(("num_ln_in_parallel_attn",), maximum=2, fallback=2, null=2)
    else:
        norms = 1 if fields.flag("parallel_attn", fallback=True) else 2
    embedding, lm_head = _embedding_and_head(fields, hidden)
    return ParamCount(
        embedding=embedding,
        attention=layers * attention,
        mlp=layers * mlp,
        experts_total=0,
        experts_active=0,
        norms=layers * norms * 2 * hidden + 2 * hidden,
        lm_head=lm_head,
    )


def _gpt2(fields: ConfigFields, layout: Layout) -> ParamCount:
    """GPT-2 (modeling_gpt2.py): Conv1D c_attn (hidden × 3·hidden) and c_proj, an MLP of n_inner
    (default 4·hidden), all biased; LayerNorms with bias; learned positions; head tied to the embedding."""
    hidden, layers = _hidden(layout), layout.num_hidden_layers
    inner = fields.whole(("n_inner",), maximum=MAX_INTERMEDIATE, fallback=4 * hidden, null=4 * hidden)
    positions = fields.whole(("n_positions", "max_position_embeddings"), maximum=MAX_TOKENS)
    attention = hidden * 3 * hidden + 3 * hidden + hidden * hidden + hidden
    mlp = hidden * inner + inner + inner * hidden + hidden
    embedding, lm_head = _embedding_and_head(fields, hidden)
    return ParamCount(
        embedding=embedding + positions * hidden,
        attention=layers * attention,
        mlp=layers * mlp,
        experts_total=0,
        experts_active=0,
        norms=layers * 4 * hidden + 2 * hidden,
        lm_head=lm_head,
    )


def _hidden(layout: Layout) -> int:
    if not layout.hidden_size:
        raise ConfigError("missing_field", "the config lacks 'hidden_size' (or n_embd, d_model)", field="hidden_size")
    return layout.hidden_size


def _intermediate(fields: ConfigFields) -> int:
    return int(fields.whole(("intermediate_size", "ffn_hidden_size", "n_inner"), maximum=MAX_INTERMEDIATE))


def _expert_intermediate(fields: ConfigFields, family: str) -> int:
    """Each routed expert's width: moe_intermediate_size (Qwen3-MoE/Next, DeepSeek); intermediate_size (Mixtral)."""
    if family == "mixtral":
        return _intermediate(fields)
    return int(
        fields.whole(("moe_intermediate_size",), maximum=MAX_INTERMEDIATE, fallback=None, null=None)
        or _intermediate(fields)
    )


def _experts(fields: ConfigFields) -> tuple[int, int]:
    experts = fields.whole(
        ("num_local_experts", "num_experts", "n_routed_experts"), maximum=MAX_EXPERTS, minimum=0, fallback=0, null=0
    )
    top_k = fields.whole(
        ("num_experts_per_tok", "experts_per_token", "moe_topk"), maximum=MAX_EXPERTS, minimum=0, fallback=0, null=0
    )
    return int(experts), int(min(top_k, experts))


def _moe_layers(fields: ConfigFields, layers: int) -> int:
    """Layers with a sparse MoE block: not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0 (Qwen MoE)."""
    step = fields.whole(("decoder_sparse_step",), maximum=MAX_LAYERS, fallback=1, null=1)
    dense = fields.values.get("mlp_only_layers") or []
    if not isinstance(dense, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in dense):
        raise ConfigError(
            "wrong_type", "config field 'mlp_only_layers' must be a list of layer numbers", field="mlp_only_layers"
        )
    dense_set = set(dense)
    return sum(1 for i in range(layers) if i not in dense_set and (i + 1) % step == 0)


def _shared_expert(fields: ConfigFields, hidden: int) -> int:
    """Qwen-MoE shared expert (shared_expert_intermediate_size) and its sigmoid gate (hidden → 1)."""
    width = fields.whole(("shared_expert_intermediate_size",), maximum=MAX_INTERMEDIATE, fallback=0, null=0)
    return gated_mlp_params(hidden=hidden, intermediate=width) + hidden if width else 0


def _embedding_and_head(fields: ConfigFields, hidden: int) -> tuple[int, int]:
    vocab = int(fields.whole(("vocab_size", "n_vocab", "padded_vocab_size"), maximum=MAX_VOCAB))
    if fields.family is None and fields.values.get("tie_word_embeddings") is None:
        fields.assume_default("tie_word_embeddings", False)
    tied = fields.flag("tie_word_embeddings", fallback=False)
    return vocab * hidden, 0 if tied else vocab * hidden
