"""Read a Hugging Face ``config.json`` the way the model's own code does.

Knows the key names of the common families: Llama/Mistral/Qwen/Gemma
(``num_hidden_layers``, ``num_key_value_heads``, ``head_dim``, ``sliding_window``,
``layer_types``), GPT-2 (``n_layer``, ``n_head``, ``n_embd``), Falcon
(``n_head_kv``/``num_kv_heads``, ``multi_query``), DeepSeek/Kimi MLA
(``kv_lora_rank``, ``qk_rope_head_dim``) and Qwen3-Next (linear-attention layers).
Parameter counts are not derived here; give them separately when needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .dtypes import dtype_name
from .model import ModelSpec


def read_config_file(path: str | Path) -> ModelSpec:
    """Parse a config.json file into a ModelSpec; ValueError with a clear message if it cannot."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"config file {str(path)!r} not found: give the path of a Hugging Face config.json") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read config file {str(path)!r}: {error}") from None
    return model_from_config_text(text, name=path.parent.name or path.stem)


def model_from_config_text(text: str, *, name: str = "config") -> ModelSpec:
    """Parse the text of a config.json."""
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"the config is not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from None
    if not isinstance(config, dict):
        raise ValueError('the config must be a JSON object such as {"num_hidden_layers": 32, ...}')
    return model_from_config(config, name=name)


def model_from_config(config: dict[str, Any], *, name: str = "config") -> ModelSpec:
    """Build a ModelSpec from a config dict (a nested ``text_config`` is used when present)."""
    if isinstance(config.get("text_config"), dict):
        config = {**config, **config["text_config"]}
    layers = _int(config, ("num_hidden_layers", "n_layer", "num_layers", "n_layers"))
    heads = _int(config, ("num_attention_heads", "n_head", "num_heads"))
    hidden = _int(config, ("hidden_size", "n_embd", "d_model"), required=False)
    kv_heads = _kv_heads(config, heads)
    head_dim = _int(config, ("head_dim",), required=False)
    if "kv_lora_rank" in config and config.get("kv_lora_rank"):
        head_dim = _int(config, ("qk_nope_head_dim",), required=False) + _int(
            config, ("qk_rope_head_dim",), required=False
        )
    if not head_dim:
        if not hidden:
            raise ValueError("the config lacks 'head_dim' and 'hidden_size': cannot tell the size of a head")
        head_dim = hidden // heads
    pattern, window = _layer_pattern(config, layers)
    return ModelSpec(
        id=str(config.get("_name_or_path") or name),
        name=str(config.get("_name_or_path") or name),
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        hidden_size=hidden,
        layer_pattern=pattern,
        sliding_window=window,
        kv_lora_rank=_int(config, ("kv_lora_rank",), required=False),
        qk_rope_head_dim=_int(config, ("qk_rope_head_dim",), required=False),
        linear_state_values=_linear_state_values(config) if "linear" in pattern else 0,
        max_position_embeddings=_int(config, ("max_position_embeddings", "n_positions", "max_seq_len"), required=False),
        num_experts=_int(config, ("num_local_experts", "num_experts", "n_routed_experts"), required=False),
        num_experts_per_tok=_int(config, ("num_experts_per_tok", "moe_topk"), required=False),
        torch_dtype=str(config.get("torch_dtype") or config.get("dtype") or ""),
        weights_dtype=_weights_dtype(config),
    )


def _weights_dtype(config: dict[str, Any]) -> str:
    """The checkpoint's storage format: a quantization_config's method (fp8, mxfp4) or torch_dtype; else bf16."""
    quantization = config.get("quantization_config")
    if isinstance(quantization, dict):
        method = str(quantization.get("quant_method", "")).lower()
        if method in ("fp8", "mxfp4"):
            return method
    try:
        return dtype_name(str(config.get("torch_dtype") or config.get("dtype") or "bf16"))
    except ValueError:
        return "bf16"


def _int(config: dict[str, Any], keys: tuple[str, ...], *, required: bool = True) -> int:
    for key in keys:
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 0:
            raise ValueError(f"config field {key!r} must be a whole number, got {value!r}")
        return int(value)
    if required:
        raise ValueError(f"the config lacks {keys[0]!r}" + (f" (or {', '.join(keys[1:])})" if len(keys) > 1 else ""))
    return 0


def _kv_heads(config: dict[str, Any], heads: int) -> int:
    if config.get("kv_lora_rank"):
        return heads
    value = _int(config, ("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"), required=False)
    if value:
        return value
    if config.get("multi_query"):
        return 1
    return heads


def _layer_pattern(config: dict[str, Any], layers: int) -> tuple[str, int | None]:
    if config.get("kv_lora_rank"):
        return "mla", None
    window = config.get("sliding_window")
    window = int(window) if isinstance(window, (int, float)) and not isinstance(window, bool) and window > 0 else None
    types = config.get("layer_types")
    if isinstance(types, list) and types:
        kinds = [_layer_type(item) for item in types[:layers]]
        if len(kinds) != layers:
            raise ValueError(f"'layer_types' lists {len(types)} layers but num_hidden_layers is {layers}")
        if "sliding" in kinds and not window:
            raise ValueError("'layer_types' has sliding layers but the config lacks 'sliding_window'")
        return ",".join(kinds), window if "sliding" in kinds else None
    interval = config.get("full_attention_interval")
    if isinstance(interval, int) and interval > 1:
        return f"linear*{interval - 1},full", None
    if window and config.get("use_sliding_window", True) is not False:
        max_len = config.get("max_position_embeddings") or 0
        if isinstance(max_len, int) and max_len and window >= max_len:
            return "full", None
        pattern = config.get("sliding_window_pattern")
        if isinstance(pattern, int) and pattern > 1:
            return f"sliding*{pattern - 1},full", window
        if config.get("model_type") == "gemma2":
            return "sliding,full", window
        return "sliding", window
    return "full", None


def _layer_type(value: Any) -> str:
    text = str(value).lower()
    if "sliding" in text or "local" in text or "chunked" in text:
        return "sliding"
    if "linear" in text or "mamba" in text or "delta" in text:
        return "linear"
    if "full" in text or "global" in text or "attention" in text:
        return "full"
    raise ValueError(
        f"unknown entry {value!r} in 'layer_types': expected full_attention, sliding_attention or linear_attention"
    )


def _linear_state_values(config: dict[str, Any]) -> int:
    """Gated DeltaNet state of one layer.

    Recurrent v_heads·d_k·d_v + convolution (kernel − 1)·(2·k_heads·d_k + v_heads·d_v) values.
    """
    v_heads = _int(config, ("linear_num_value_heads",), required=False)
    k_heads = _int(config, ("linear_num_key_heads",), required=False)
    d_k = _int(config, ("linear_key_head_dim",), required=False)
    d_v = _int(config, ("linear_value_head_dim",), required=False)
    kernel = _int(config, ("linear_conv_kernel_dim",), required=False)
    return v_heads * d_k * d_v + max(kernel - 1, 0) * (2 * k_heads * d_k + v_heads * d_v)
