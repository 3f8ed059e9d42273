"""Read a Hugging Face ``config.json`` the way the model's own code does.

Most calculators answer "and my model?" wrongly: they ignore ``num_key_value_heads``,
derive the head size from hidden/heads when the file states ``head_dim``, give MLA
a factor 2, or charge sliding-window layers the whole context. Here each family is
read with the rules of its transformers ``configuration_*.py`` / ``modeling_*.py``:

* Llama 2/3/3.1/3.2, Mistral, Mixtral, Phi-3/3.5/4-mini, StarCoder2, Gemma 1/2/3,
  Qwen2/2.5, Qwen3, Qwen3-MoE, Qwen3-Next, gpt-oss, DeepSeek-V2/V3, Kimi K2 (the
  DeepSeek-V3 architecture), Falcon (both the ``falcon`` and the older
  ``RefinedWeb``/``RefinedWebModel`` files) and GPT-2 are read exactly
  (``ConfigReading.known`` is True).
* A field the file leaves out takes the default of that family's config class, and
  the reading says so (an :class:`Assumption`).
* Layer kinds: ``layer_types`` when the file lists them; otherwise Mistral, Mixtral,
  Phi-3 and StarCoder2 slide on every layer when ``sliding_window`` is set
  (``null`` = full attention; Phi-3-mini-4k's 2047 is applied on every layer, as
  ``Phi3Attention`` passes ``sliding_window`` to every layer and transformers builds
  a sliding-window mask and cache for it); Qwen2/Qwen3 slide only when
  ``use_sliding_window`` is true, and then only layers ≥ ``max_window_layers``
  (``Qwen2Config.layer_types``); Gemma 2 alternates sliding/full from layer 0;
  Gemma 3 has a full layer every ``sliding_window_pattern`` (default 6) layers;
  gpt-oss alternates sliding/full; Qwen3-Next has a full-attention layer every
  ``full_attention_interval`` (default 4) layers and Gated DeltaNet elsewhere;
  DeepSeek/Kimi layers are all MLA (one latent of kv_lora_rank + qk_rope_head_dim
  values per token, no factor 2). A window at least as long as
  ``max_position_embeddings`` never caps the cache, so those layers count as full.
* Falcon: ``new_decoder_architecture`` → ``num_kv_heads`` KV heads; else
  ``multi_query`` (default true) → 1; else MHA. ``RefinedWeb`` files (Falcon-40B)
  use ``n_head_kv``; ``RefinedWebModel`` files (Falcon-7B) use ``multi_query``
  (the mapping NeMo's Falcon converter applies).
* Any other architecture is read best-effort with Llama's rules; the reading then
  carries ``unknown_architecture`` and one assumption per default it took.

Assumption codes (``Assumption.field`` / ``Assumption.value`` hold):

* ``unknown_architecture`` — field ``model_type``; value: the model_type or architecture read.
* ``default_value`` — field: the absent field; value: the value used (the family's
  transformers default for a known family, a guess otherwise).
* ``head_dim_from_hidden_size`` — field ``head_dim``; value: hidden_size / num_attention_heads.
* ``kv_heads_default_mha`` — field ``num_key_value_heads``; value: the number of query heads.
* ``weights_dtype_default`` — field ``torch_dtype``; value: the format assumed (``fp32``,
  what transformers loads a file without ``torch_dtype`` in).
* ``quantization_not_read`` — field ``quantization_config``; value: its quant_method.
* ``sliding_window_ignored`` — field ``use_sliding_window``; value: the unused window (tokens).
* ``window_covers_context`` — field ``sliding_window``; value: the window (tokens).
* ``params_not_counted`` — field: the field counting needs; value: "".
* ``mtp_not_counted`` — field ``num_nextn_predict_layers``; value: the number of MTP layers.

The reader these rules run in, field by field, is :mod:`kvcore.config_fields`.
:mod:`kvcore.params` counts the parameters from its readings and never imports this
module; this module turns the same readings into a ModelSpec and asks params for the count.

ConfigError codes (:class:`kvcore.errors.ConfigError`, a KvError; ``ConfigError.field``
names the config field, or ""):

* ``invalid_json`` (the message gives line and column), ``not_an_object``,
  ``too_large`` (more than 100 MB of text), ``file_not_found``, ``file_unreadable``;
* ``missing_field`` — a needed field is absent (the message lists its alternative names);
* ``wrong_type`` — e.g. a string or a boolean where a number is needed;
* ``out_of_range`` — negative, zero, fractional or absurd (0 or > 10,000 layers,
  head_dim > 65,536, vocab > 10^7, window ≤ 0…);
* ``inconsistent`` — fields that contradict each other (KV heads not dividing query
  heads, layer_types of the wrong length, sliding layers without a window…);
* ``unknown_value`` — an entry the reader does not know, e.g. in ``layer_types``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config_fields import (
    MAX_EXPERTS,
    MAX_HEAD_DIM,
    MAX_HEADS,
    MAX_INTERMEDIATE,
    MAX_TOKENS,
    Assumption,
    ConfigFields,
    layout_of,
)
from .dtypes import dtype_name
from .errors import ConfigError, KvError
from .model import ModelSpec
from .params import ParamCount, _embedding_and_head, _expert_intermediate, _intermediate, params_from_fields

__all__ = [
    "ConfigReading",
    "model_from_config",
    "model_from_config_text",
    "read_config",
    "read_config_file",
    "read_config_path",
    "read_config_text",
]

#: A config.json longer than this is refused before parsing (no real one comes near).
MAX_CONFIG_CHARS = 100_000_000


@dataclass(frozen=True, slots=True)
class ConfigReading:
    """A config.json read into a ModelSpec, with what was assumed on the way."""

    model: ModelSpec
    params: ParamCount | None
    architecture: str
    known: bool
    assumptions: tuple[Assumption, ...]


def read_config(config: dict[str, Any], *, name: str = "config") -> ConfigReading:
    """Read a parsed config.json: the ModelSpec, its parameter count and what was assumed.

    ConfigError (a ValueError) for anything that cannot be read; never another exception.

    >>> r = read_config({"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32,
    ...                  "num_key_value_heads": 8, "hidden_size": 4096, "intermediate_size": 14336,
    ...                  "vocab_size": 128256, "torch_dtype": "bfloat16"})
    >>> r.model.layer_pattern, r.model.head_dim, r.params.total
    ('full', 128, 8030261248)
    """
    try:
        return _read(config, name)
    except ConfigError:
        raise
    except (ValueError, TypeError, ArithmeticError, LookupError, RecursionError, MemoryError) as error:
        raise ConfigError("inconsistent", f"the config cannot be read: {error}") from None


def read_config_text(text: str, *, name: str = "config") -> ConfigReading:
    """Parse the text of a config.json and read it (ConfigError with line and column for bad JSON)."""
    return read_config(_parse(text), name=name)


def read_config_path(path: str | Path) -> ConfigReading:
    """Read a config.json file; ConfigError (file_not_found, file_unreadable…) if it cannot be read."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_CONFIG_CHARS:
            raise ConfigError("too_large", f"config file {str(path)!r} is larger than 100 MB: not a config.json")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "file_not_found", f"config file {str(path)!r} not found: give the path of a Hugging Face config.json"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError("file_unreadable", f"cannot read config file {str(path)!r}: {error}") from None
    return read_config_text(text, name=(path.parent.name or path.stem) if path.name == "config.json" else path.stem)


def read_config_file(path: str | Path) -> ModelSpec:
    """Parse a config.json file into a ModelSpec; ConfigError (a ValueError) if it cannot."""
    return read_config_path(path).model


def model_from_config_text(text: str, *, name: str = "config") -> ModelSpec:
    """Parse the text of a config.json into a ModelSpec."""
    return read_config_text(text, name=name).model


def model_from_config(config: dict[str, Any], *, name: str = "config") -> ModelSpec:
    """Build a ModelSpec from a config dict (a nested ``text_config`` is used when present)."""
    return read_config(config, name=name).model


def pattern_from_kinds(kinds: tuple[str, ...] | list[str]) -> str:
    """The shortest cyclic layer pattern that repeats into `kinds` (ModelSpec syntax).

    >>> pattern_from_kinds(["sliding"] * 5 + ["full"] + ["sliding"] * 5 + ["full"] + ["sliding"] * 2)
    'sliding*5,full'
    """
    kinds = list(kinds)
    if not kinds:
        raise KvError("no_layers", "no layers to describe")
    period = _shortest_period(kinds)
    runs: list[list[Any]] = []
    for kind in kinds[:period]:
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return ",".join(kind if count == 1 else f"{kind}*{count}" for kind, count in runs)


def _shortest_period(items: list[str]) -> int:
    """Smallest p with items[i] == items[i % p] for every i: len − the longest proper border (KMP prefix function)."""
    border = [0] * len(items)
    for i in range(1, len(items)):
        k = border[i - 1]
        while k and items[i] != items[k]:
            k = border[k - 1]
        border[i] = k + 1 if items[i] == items[k] else k
    return len(items) - border[-1]


def _read(config: Any, name: str) -> ConfigReading:
    fields = ConfigFields(config)
    layout = layout_of(fields)
    layers = layout.num_hidden_layers
    max_len = fields.whole(
        ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"), maximum=MAX_TOKENS, fallback=0
    )
    kinds, window = list(layout.kinds), layout.sliding_window
    if window and max_len and window >= max_len and "sliding" in kinds:
        fields.assume(
            "window_covers_context",
            "sliding_window",
            window,
            f"sliding_window {window} ≥ max_position_embeddings {max_len}: the window never caps the cache, "
            "so those layers count as full attention",
        )
        kinds = ["full" if kind == "sliding" else kind for kind in kinds]
    if "sliding" not in kinds:
        window = None
    experts = fields.whole(
        ("num_local_experts", "num_experts", "n_routed_experts"), maximum=MAX_EXPERTS, minimum=0, fallback=0, null=0
    )
    top_k = fields.whole(
        ("num_experts_per_tok", "experts_per_token", "moe_topk"), maximum=MAX_EXPERTS, minimum=0, fallback=0, null=0
    )
    if experts and top_k > experts:
        raise ConfigError(
            "inconsistent",
            f"num_experts_per_tok ({top_k}) cannot exceed the number of experts ({experts})",
            field="num_experts_per_tok",
        )
    params = _params(fields)
    vocab, tied = _vocab_and_tie(fields)
    intermediate, expert_intermediate = _mlp_widths(fields, layout.hidden_size, experts)
    pattern = pattern_from_kinds(kinds)
    model_name = fields.values.get("_name_or_path")
    model_name = model_name if isinstance(model_name, str) and model_name.strip() else name
    try:
        model = ModelSpec(
            id=model_name,
            name=model_name,
            num_hidden_layers=layers,
            num_attention_heads=layout.num_attention_heads,
            num_key_value_heads=layout.num_key_value_heads,
            head_dim=layout.head_dim,
            hidden_size=layout.hidden_size,
            vocab_size=vocab,
            intermediate_size=intermediate,
            moe_intermediate_size=expert_intermediate,
            tie_word_embeddings=tied,
            layer_pattern=pattern,
            sliding_window=window,
            kv_lora_rank=layout.kv_lora_rank,
            qk_rope_head_dim=layout.qk_rope_head_dim,
            linear_state_values=_linear_state_values(fields) if "linear" in kinds else 0,
            max_position_embeddings=max_len,
            total_params=params.total if params else None,
            active_params=params.active if params else None,
            num_experts=experts,
            num_experts_per_tok=top_k if experts else 0,
            torch_dtype=fields.text("torch_dtype") or fields.text("dtype"),
            weights_dtype=_weights_dtype(fields),
        )
    except ValueError as error:  # the ModelSpec's own checks: its error is the cause (the app translates it)
        raise ConfigError("inconsistent", str(error), cause=error if isinstance(error, KvError) else None) from None
    return ConfigReading(
        model=model,
        params=params,
        architecture=fields.architecture,
        known=fields.family is not None,
        assumptions=tuple(fields.assumptions),
    )


def _params(fields: ConfigFields) -> ParamCount | None:
    """The parameter count, or None (with an assumption) when the config lacks what counting needs."""
    try:
        return params_from_fields(fields)
    except ConfigError as error:
        if error.code != "missing_field":
            raise
        fields.assume(
            "params_not_counted",
            error.field,
            "",
            f"parameters not counted: {error} (give them on the command line or in the app)",
        )
        return None


def _vocab_and_tie(fields: ConfigFields) -> tuple[int, bool]:
    """(vocab_size, tie_word_embeddings) read as kvcore.params reads them; vocab 0 when the file lacks it.

    ``_embedding_and_head(fields, 1)`` is (vocab · 1, 0 when the head is tied else vocab · 1).
    """
    try:
        vocab, head = _embedding_and_head(fields, 1)
    except ConfigError as error:
        if error.code != "missing_field":
            raise
        return 0, fields.flag("tie_word_embeddings", fallback=False)
    return vocab, head == 0


def _mlp_widths(fields: ConfigFields, hidden: int, experts: int) -> tuple[int, int]:
    """(dense MLP width, one routed expert's width) as kvcore.params reads them; 0 where there is none.

    gpt-oss and Mixtral: intermediate_size is each expert's width and no layer is dense.
    Falcon: ffn_hidden_size, default 4 · hidden; GPT-2: n_inner, null or absent → 4 · hidden.
    MoE models (DeepSeek, Kimi, Qwen3-MoE, Qwen3-Next): intermediate_size as the file gives it
    (the dense layers' width) and moe_intermediate_size. 0 when the file lacks the field.
    """
    family = fields.family_key if fields.family else "unknown"
    try:
        if family in ("gpt_oss", "mixtral"):
            return 0, _intermediate(fields)
        if family in ("falcon", "gpt2"):
            name = "ffn_hidden_size" if family == "falcon" else "n_inner"
            return int(fields.whole((name,), maximum=MAX_INTERMEDIATE, fallback=4 * hidden, null=4 * hidden)), 0
        expert = _expert_intermediate(fields, family) if experts else 0
    except ConfigError as error:
        if error.code != "missing_field":
            raise
        return 0, 0
    try:
        return _intermediate(fields), expert
    except ConfigError as error:
        if error.code != "missing_field":
            raise
        return 0, expert


def _parse(text: Any) -> Any:
    if not isinstance(text, str):
        raise ConfigError("wrong_type", "the config must be text (the content of a config.json)")
    if len(text) > MAX_CONFIG_CHARS:
        raise ConfigError("too_large", f"the config is {len(text):,} characters, more than 100 MB: not a config.json")

    def refuse_constant(value: str) -> None:
        raise ConfigError("invalid_json", f"{value} is not a number JSON allows")

    try:
        return json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as error:
        raise ConfigError(
            "invalid_json", f"the config is not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from None
    except RecursionError:
        raise ConfigError("invalid_json", "the config is not valid JSON: it is nested too deeply") from None
    except ValueError as error:
        raise ConfigError("invalid_json", f"the config is not valid JSON: {error}") from None


def _linear_state_values(fields: ConfigFields) -> int:
    """Gated DeltaNet state of one layer (Qwen3-Next; modeling_qwen3_next.Qwen3NextGatedDeltaNet).

    Recurrent v_heads·d_k·d_v + convolution (kernel − 1)·(2·k_heads·d_k + v_heads·d_v) values.
    """
    v_heads = fields.whole(("linear_num_value_heads",), maximum=MAX_HEADS)
    k_heads = fields.whole(("linear_num_key_heads",), maximum=MAX_HEADS)
    d_k = fields.whole(("linear_key_head_dim",), maximum=MAX_HEAD_DIM)
    d_v = fields.whole(("linear_value_head_dim",), maximum=MAX_HEAD_DIM)
    kernel = fields.whole(("linear_conv_kernel_dim",), maximum=MAX_HEAD_DIM)
    return int(v_heads * d_k * d_v + (kernel - 1) * (2 * k_heads * d_k + v_heads * d_v))


def _weights_dtype(fields: ConfigFields) -> str:
    """The checkpoint's storage format: quantization_config's method when kvcore knows it, else torch_dtype."""
    quantization = fields.values.get("quantization_config")
    if isinstance(quantization, Mapping):
        method = str(quantization.get("quant_method", "")).lower()
        bits = quantization.get("bits")
        if method in ("fp8", "mxfp4"):
            return method
        if method in ("gptq", "awq", "bitsandbytes") and bits in (4, 8):
            return f"int{bits}"
        if method == "bitsandbytes" and (quantization.get("load_in_4bit") or quantization.get("load_in_8bit")):
            return "int4" if quantization.get("load_in_4bit") else "int8"
        fields.assume(
            "quantization_not_read",
            "quantization_config",
            method[:40],
            f"quantization method {method[:40]!r} is not one kvcore reads: weights sized from torch_dtype",
        )
    stated = fields.text("torch_dtype") or fields.text("dtype")
    try:
        return dtype_name(stated)
    except ValueError:
        fields.assume(
            "weights_dtype_default",
            "torch_dtype",
            "fp32",
            f"torch_dtype {stated[:40]!r} is not a format kvcore knows: weights sized as fp32 "
            "(what transformers loads them in)"
            if stated
            else "torch_dtype is not in the config: weights sized as fp32 (what transformers loads them in)",
        )
        return "fp32"
