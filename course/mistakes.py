"""The usual wrong readings of a model's cache, as models: what a careless calculator computes.

Each function returns the model a calculator *thinks* it has when it makes one
mistake, or ``None`` when the mistake changes nothing for this model, so the app
can show the wrong figure beside the right one with the same kvcore formulas:

* ``ignoring_kv_heads`` — every query head keeps its own K and V (MHA), although
  the config says ``num_key_value_heads`` (GQA/MQA). Llama-3.1-8B: 4× too much.
* ``head_dim_from_hidden`` — head size taken as hidden_size / num_attention_heads
  although the config states ``head_dim`` (Gemma 7B: 3072 / 16 = 192, really 256;
  Qwen3-32B: 5120 / 64 = 80, really 128).
* ``mla_with_factor_two`` — an MLA latent counted twice, once for K and once for V
  (DeepSeek-V3: 2 × 576 values per layer instead of 576).
* ``sliding_as_full`` — sliding-window layers charged the whole context (Gemma 3:
  50 of its 62 layers keep only 1,024 tokens).

Sources: the model configs and their transformers modeling files; the MLA latent:
DeepSeek-V2, arXiv:2405.04434 §2.1; sliding windows: Mistral 7B, arXiv:2310.06825.
"""

from __future__ import annotations

from kvcore import ModelSpec, with_changes

MISTAKES: tuple[str, ...] = ("ignoring_kv_heads", "head_dim_from_hidden", "mla_with_factor_two", "sliding_as_full")


def ignoring_kv_heads(model: ModelSpec) -> ModelSpec | None:
    """The model with as many KV heads as query heads (MHA): 2 · n_heads · d_head values per token and layer.

    None for MHA models (nothing changes) and for MLA-only models (no KV heads to ignore).

    >>> from kvcore.model import uniform_model
    >>> gqa = uniform_model(num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, head_dim=128)
    >>> ignoring_kv_heads(gqa).num_key_value_heads
    32
    """
    if model.num_key_value_heads == model.num_attention_heads or not _has_kv_heads(model):
        return None
    return with_changes(model, num_key_value_heads=model.num_attention_heads)


def head_dim_from_hidden(model: ModelSpec) -> ModelSpec | None:
    """The model with head_dim = hidden_size // num_attention_heads, where that differs from the config's head_dim.

    None when the two agree, when hidden_size is unknown, or for MLA-only models.

    >>> from kvcore.model import ModelSpec
    >>> gemma = ModelSpec(id="g", name="g", num_hidden_layers=28, num_attention_heads=16,
    ...                   num_key_value_heads=16, head_dim=256, hidden_size=3072)
    >>> head_dim_from_hidden(gemma).head_dim
    192
    """
    if not model.hidden_size or not _has_kv_heads(model):
        return None
    derived = model.hidden_size // model.num_attention_heads
    if derived in (0, model.head_dim):
        return None
    return with_changes(model, head_dim=derived)


def mla_with_factor_two(model: ModelSpec) -> ModelSpec | None:
    """An MLA model read as if K and V each kept a latent: 2 · (kv_lora_rank + qk_rope_head_dim) per token and layer.

    Built as full-attention layers with one KV head of kv_lora_rank + qk_rope_head_dim
    values (kvcore's full layers cache 2 · heads · head_dim). None for models without MLA layers.
    """
    if model.count("mla") == 0:
        return None
    kinds = model.layer_pattern.replace("mla", "full")
    return with_changes(
        model,
        layer_pattern=kinds,
        num_key_value_heads=1,
        head_dim=model.kv_lora_rank + model.qk_rope_head_dim,
        kv_lora_rank=0,
        qk_rope_head_dim=0,
    )


def sliding_as_full(model: ModelSpec) -> ModelSpec | None:
    """The model with every sliding-window layer attending to (and caching) the whole context.

    None for models without sliding layers.
    """
    if model.count("sliding") == 0:
        return None
    return with_changes(model, layer_pattern=model.layer_pattern.replace("sliding", "full"), sliding_window=None)


def wrong_readings(model: ModelSpec) -> dict[str, ModelSpec]:
    """Every mistake that changes this model's cache, by name (in the order of ``MISTAKES``)."""
    readings = {
        "ignoring_kv_heads": ignoring_kv_heads(model),
        "head_dim_from_hidden": head_dim_from_hidden(model),
        "mla_with_factor_two": mla_with_factor_two(model),
        "sliding_as_full": sliding_as_full(model),
    }
    return {name: wrong for name, wrong in readings.items() if wrong is not None}


def _has_kv_heads(model: ModelSpec) -> bool:
    return model.count("full") + model.count("sliding") > 0
