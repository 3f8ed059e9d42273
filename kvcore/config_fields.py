"""A Hugging Face ``config.json`` read field by field: the reader shared by config reading and parameter counting.

:class:`ConfigFields` wraps the parsed file (``text_config`` merged in) with its model
family and returns each field type- and range-checked (:class:`~kvcore.errors.ConfigError`
otherwise), taking the family's transformers default when the file leaves a field out
and recording that as an :class:`Assumption`. :func:`layout_of` resolves the attention
geometry (layers, heads, head size, layer kinds, window) with each family's rules.

:mod:`kvcore.hf_config` builds a ModelSpec from these readings and :mod:`kvcore.params`
counts parameters from them. Both import this module; params never imports hf_config
(hf_config asks params for the count: one way, no cycle). The families, their defaults
and the layout rules are described in :mod:`kvcore.hf_config`'s docstring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .errors import ConfigError

__all__ = [
    "Assumption",
    "ConfigFields",
    "Layout",
    "fields_of",
    "layout_of",
]

#: Limits beyond which a value is refused as absurd (not a real model).
MAX_LAYERS = 10_000
MAX_HEADS = 65_536
MAX_HEAD_DIM = 65_536
MAX_HIDDEN = 1 << 20
MAX_INTERMEDIATE = 1 << 24
MAX_VOCAB = 10_000_000
MAX_TOKENS = 1 << 31
MAX_EXPERTS = 100_000

_ABSENT = object()


@dataclass(frozen=True, slots=True)
class Assumption:
    """Something the reading took instead of reading it (see the module docstring for the codes)."""

    code: str
    field: str
    value: str
    message: str


@dataclass(frozen=True, slots=True)
class Family:
    """A model family: how its layers are laid out and its config class's defaults."""

    name: str
    layout: str
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def _family(name: str, layout: str, **defaults: Any) -> Family:
    return Family(name=name, layout=layout, defaults=MappingProxyType(defaults))


_QWEN2_WINDOW = {"use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28}

#: model_type → family. Defaults are those of transformers' configuration_<family>.py.
FAMILIES: Mapping[str, Family] = MappingProxyType(
    {
        "llama": _family(
            "Llama",
            "full",
            vocab_size=32000,
            intermediate_size=11008,
            max_position_embeddings=2048,
            tie_word_embeddings=False,
            attention_bias=False,
            mlp_bias=False,
        ),
        "mistral": _family(
            "Mistral",
            "window_all",
            vocab_size=32000,
            intermediate_size=14336,
            max_position_embeddings=131072,
            tie_word_embeddings=False,
            num_key_value_heads=8,
            sliding_window=4096,
        ),
        "mixtral": _family(
            "Mixtral",
            "window_all",
            vocab_size=32000,
            intermediate_size=14336,
            max_position_embeddings=131072,
            tie_word_embeddings=False,
            num_key_value_heads=8,
            sliding_window=None,
            num_local_experts=8,
            num_experts_per_tok=2,
        ),
        "phi3": _family(
            "Phi-3",
            "window_all",
            vocab_size=32064,
            intermediate_size=8192,
            max_position_embeddings=4096,
            tie_word_embeddings=False,
            sliding_window=None,
        ),
        "starcoder2": _family(
            "StarCoder2",
            "window_all",
            vocab_size=49152,
            intermediate_size=12288,
            max_position_embeddings=4096,
            tie_word_embeddings=True,
            num_key_value_heads=2,
            sliding_window=None,
            use_bias=True,
        ),
        "qwen2": _family(
            "Qwen2",
            "qwen2",
            vocab_size=151936,
            intermediate_size=22016,
            max_position_embeddings=32768,
            tie_word_embeddings=False,
            num_key_value_heads=32,
            **_QWEN2_WINDOW,
        ),
        "qwen3": _family(
            "Qwen3",
            "qwen2",
            vocab_size=151936,
            intermediate_size=22016,
            max_position_embeddings=32768,
            tie_word_embeddings=False,
            num_key_value_heads=32,
            head_dim=128,
            attention_bias=False,
            **_QWEN2_WINDOW,
        ),
        "qwen3_moe": _family(
            "Qwen3-MoE",
            "qwen2",
            vocab_size=151936,
            intermediate_size=6144,
            max_position_embeddings=32768,
            tie_word_embeddings=False,
            num_key_value_heads=4,
            attention_bias=False,
            moe_intermediate_size=768,
            num_experts=128,
            num_experts_per_tok=8,
            decoder_sparse_step=1,
            **_QWEN2_WINDOW,
        ),
        "qwen3_next": _family(
            "Qwen3-Next",
            "qwen3_next",
            vocab_size=151936,
            intermediate_size=5632,
            max_position_embeddings=32768,
            tie_word_embeddings=False,
            num_key_value_heads=2,
            head_dim=256,
            full_attention_interval=4,
            linear_conv_kernel_dim=4,
            linear_key_head_dim=128,
            linear_value_head_dim=128,
            linear_num_key_heads=16,
            linear_num_value_heads=32,
            moe_intermediate_size=512,
            shared_expert_intermediate_size=512,
            num_experts=512,
            num_experts_per_tok=10,
            decoder_sparse_step=1,
        ),
        "gemma": _family(
            "Gemma",
            "full",
            vocab_size=256000,
            intermediate_size=24576,
            max_position_embeddings=8192,
            tie_word_embeddings=True,
            num_key_value_heads=16,
            head_dim=256,
        ),
        "gemma2": _family(
            "Gemma 2",
            "gemma2",
            vocab_size=256000,
            intermediate_size=9216,
            max_position_embeddings=8192,
            tie_word_embeddings=True,
            num_key_value_heads=4,
            head_dim=256,
            sliding_window=4096,
        ),
        "gemma3_text": _family(
            "Gemma 3",
            "gemma3",
            vocab_size=262208,
            intermediate_size=9216,
            max_position_embeddings=131072,
            tie_word_embeddings=True,
            num_attention_heads=8,
            num_key_value_heads=4,
            head_dim=256,
            sliding_window=4096,
            sliding_window_pattern=6,
        ),
        "gpt_oss": _family(
            "gpt-oss",
            "gpt_oss",
            vocab_size=201088,
            intermediate_size=2880,
            max_position_embeddings=131072,
            tie_word_embeddings=False,
            num_key_value_heads=8,
            head_dim=64,
            sliding_window=128,
            num_local_experts=128,
            num_experts_per_tok=4,
            attention_bias=True,
        ),
        "deepseek_v2": _family(
            "DeepSeek-V2",
            "mla",
            vocab_size=102400,
            intermediate_size=11008,
            max_position_embeddings=2048,
            tie_word_embeddings=False,
            kv_lora_rank=512,
            q_lora_rank=1536,
            qk_rope_head_dim=64,
            qk_nope_head_dim=128,
            v_head_dim=128,
            moe_intermediate_size=1407,
            first_k_dense_replace=0,
            moe_layer_freq=1,
        ),
        "deepseek_v3": _family(
            "DeepSeek-V3",
            "mla",
            vocab_size=129280,
            intermediate_size=18432,
            max_position_embeddings=4096,
            tie_word_embeddings=False,
            kv_lora_rank=512,
            q_lora_rank=1536,
            qk_rope_head_dim=64,
            qk_nope_head_dim=128,
            v_head_dim=128,
            moe_intermediate_size=2048,
            first_k_dense_replace=3,
            moe_layer_freq=1,
            n_shared_experts=1,
            n_routed_experts=256,
            num_experts_per_tok=8,
        ),
        "falcon": _family(
            "Falcon",
            "falcon",
            vocab_size=65024,
            max_position_embeddings=2048,
            tie_word_embeddings=True,
            multi_query=True,
            new_decoder_architecture=False,
            parallel_attn=True,
            bias=False,
        ),
        "gpt2": _family("GPT-2", "gpt2", vocab_size=50257, n_positions=1024, tie_word_embeddings=True),
    }
)

#: Other model_type spellings of the same families (Kimi K2 ships the DeepSeek-V3 architecture).
_ALIASES: Mapping[str, str] = MappingProxyType(
    {"gemma3": "gemma3_text", "kimi_k2": "deepseek_v3", "RefinedWeb": "falcon", "RefinedWebModel": "falcon"}
)

#: architectures[0] → model_type, for files without a model_type.
_ARCHITECTURES: Mapping[str, str] = MappingProxyType(
    {
        "LlamaForCausalLM": "llama",
        "MistralForCausalLM": "mistral",
        "MixtralForCausalLM": "mixtral",
        "Phi3ForCausalLM": "phi3",
        "Starcoder2ForCausalLM": "starcoder2",
        "Qwen2ForCausalLM": "qwen2",
        "Qwen3ForCausalLM": "qwen3",
        "Qwen3MoeForCausalLM": "qwen3_moe",
        "Qwen3NextForCausalLM": "qwen3_next",
        "GemmaForCausalLM": "gemma",
        "Gemma2ForCausalLM": "gemma2",
        "Gemma3ForCausalLM": "gemma3_text",
        "Gemma3ForConditionalGeneration": "gemma3_text",
        "GptOssForCausalLM": "gpt_oss",
        "DeepseekV2ForCausalLM": "deepseek_v2",
        "DeepseekV3ForCausalLM": "deepseek_v3",
        "FalconForCausalLM": "falcon",
        "RWForCausalLM": "falcon",
        "GPT2LMHeadModel": "gpt2",
    }
)

_LAYER_TYPES: Mapping[str, str] = MappingProxyType(
    {"full_attention": "full", "sliding_attention": "sliding", "linear_attention": "linear"}
)


class ConfigFields:
    """A config dict (``text_config`` merged in) and its family, read field by field.

    Every value is type- and range-checked (ConfigError otherwise); every default
    taken is recorded in ``assumptions``. One instance per reading: it collects.
    """

    def __init__(self, config: Any) -> None:
        if not isinstance(config, Mapping):
            raise ConfigError(
                "not_an_object", 'the config must be a JSON object such as {"num_hidden_layers": 32, ...}'
            )
        text = config.get("text_config")
        self.values: Mapping[Any, Any] = {**config, **text} if isinstance(text, Mapping) else config
        self.assumptions: list[Assumption] = []
        self.model_type = self.text("model_type")
        architectures = config.get("architectures")
        self.architectures = [a for a in architectures if isinstance(a, str)] if isinstance(architectures, list) else []
        key = _ALIASES.get(self.model_type, self.model_type)
        if key not in FAMILIES and self.architectures:
            key = _ARCHITECTURES.get(self.architectures[0], key)
        self.family_key = key
        self.family: Family | None = FAMILIES.get(key)
        if self.family is None:
            named = self.model_type or (self.architectures[0] if self.architectures else "")
            self.assume(
                "unknown_architecture",
                "model_type",
                named,
                f"architecture {named or '(not named)'!r} is not one kvcore reads exactly: read with Llama's rules",
            )

    @property
    def architecture(self) -> str:
        """architectures[0], else the model_type, else 'unknown'."""
        return self.architectures[0] if self.architectures else (self.model_type or "unknown")

    def assume(self, code: str, name: str, value: object, message: str) -> None:
        """Record an assumption once (the same code and field are not repeated)."""
        if not any(a.code == code and a.field == name for a in self.assumptions):
            self.assumptions.append(Assumption(code=code, field=name, value=_text(value), message=message))

    def raw(self, names: tuple[str, ...]) -> tuple[str, Any]:
        """(name, value) of the first of `names` present in the file (null included), else (names[0], _ABSENT)."""
        for name in names:
            if name in self.values:
                return name, self.values[name]
        return names[0], _ABSENT

    def default(self, *names: str) -> tuple[str, Any]:
        """(name, the family's default) for the first of `names` the family defines, else (names[0], _ABSENT)."""
        for name in names:
            if self.family and name in self.family.defaults:
                return name, self.family.defaults[name]
        return names[0], _ABSENT

    def whole(
        self,
        names: tuple[str, ...],
        *,
        maximum: int,
        minimum: int = 1,
        fallback: Any = _ABSENT,
        null: Any = _ABSENT,
    ) -> Any:
        """A whole number from the first of `names` present.

        Absent → the family default (recorded), else `fallback` (not recorded: the
        caller records why), else ConfigError naming the field. JSON null → `null`
        if given (the model code's None handling), else treated as absent.
        """
        name, value = self.raw(names)
        if value is None and null is not _ABSENT:
            return null
        if value is None or value is _ABSENT:
            default_name, default = self.default(*names)
            if default is not _ABSENT:
                if default is not None:
                    self.assume_default(default_name, default)
                return default
            if fallback is not _ABSENT:
                return fallback
            also = f" (or {', '.join(names[1:])})" if len(names) > 1 else ""
            raise ConfigError("missing_field", f"the config lacks {names[0]!r}{also}", field=names[0])
        return _checked_whole(name, value, minimum=minimum, maximum=maximum)

    def flag(self, name: str, *, fallback: bool) -> bool:
        """A JSON boolean; absent or null → the family default (recorded), else `fallback`."""
        value = self.values.get(name)
        if value is None:
            default = self.default(name)[1]
            if default is not _ABSENT and default is not None:
                self.assume_default(name, default)
                return bool(default)
            return fallback
        if not isinstance(value, bool):
            raise ConfigError(
                "wrong_type", f"config field {name!r} must be true or false, got {_show(value)}", field=name
            )
        return value

    def text(self, name: str) -> str:
        """A string field ('' when absent or null)."""
        value = self.values.get(name)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise ConfigError("wrong_type", f"config field {name!r} must be a string, got {_show(value)}", field=name)
        return value

    def assume_default(self, name: str, value: object) -> None:
        """Record that `name` took the family's default (or a guess, for an unknown family)."""
        source = (
            f"the default of transformers' {self.family.name} config"
            if self.family
            else "a guess for an unknown architecture"
        )
        self.assume("default_value", name, value, f"{name} is not in the config: {_text(value)} ({source})")


@dataclass(frozen=True, slots=True)
class Layout:
    """The attention geometry a config resolves to (what both the KV reading and the parameter count need)."""

    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    hidden_size: int
    kinds: tuple[str, ...]
    sliding_window: int | None
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0


def fields_of(config: Any) -> ConfigFields:
    """Wrap a parsed config.json (ConfigError if it is not a JSON object)."""
    return ConfigFields(config)


def layout_of(fields: ConfigFields) -> Layout:
    """Layers, heads, head size and layer kinds, read with the family's rules."""
    layers = fields.whole(("num_hidden_layers", "n_layer", "num_layers", "n_layers"), maximum=MAX_LAYERS)
    heads = fields.whole(("num_attention_heads", "n_head", "num_heads"), maximum=MAX_HEADS)
    hidden = fields.whole(("hidden_size", "n_embd", "d_model"), maximum=MAX_HIDDEN, fallback=0)
    layout = fields.family.layout if fields.family else "unknown"
    mla = layout == "mla" or (layout == "unknown" and fields.values.get("kv_lora_rank") not in (None, 0))
    if mla:
        return _mla_layout(fields, layers, heads, hidden)
    head_dim = _head_dim(fields, heads, hidden)
    kv_heads = _kv_heads(fields, heads)
    kinds, window = _layer_kinds(fields, layout, layers)
    return Layout(
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        hidden_size=hidden,
        kinds=kinds,
        sliding_window=window,
    )


def _checked_whole(name: str, value: Any, *, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError("wrong_type", f"config field {name!r} must be a whole number, got {_show(value)}", field=name)
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        raise ConfigError(
            "out_of_range", f"config field {name!r} must be a whole number, got {_show(value)}", field=name
        )
    number = int(value)
    if number < minimum or number > maximum:
        raise ConfigError(
            "out_of_range",
            f"config field {name!r} must be between {minimum:,} and {maximum:,}, got {_show(value)}",
            field=name,
        )
    return number


def _head_dim(fields: ConfigFields, heads: int, hidden: int) -> int:
    """``head_dim`` when stated; else the family default (Gemma 256, Qwen3 128…); else hidden / heads."""
    head_dim = fields.whole(("head_dim",), maximum=MAX_HEAD_DIM, fallback=0, null=0)
    if head_dim:
        return int(head_dim)
    if not hidden:
        raise ConfigError(
            "missing_field",
            "the config lacks 'head_dim' and 'hidden_size': cannot tell the size of a head",
            field="head_dim",
        )
    if hidden % heads:
        raise ConfigError(
            "inconsistent",
            f"hidden_size ({hidden}) is not a multiple of num_attention_heads ({heads}): the config must give head_dim",
            field="head_dim",
        )
    fields.assume(
        "head_dim_from_hidden_size",
        "head_dim",
        hidden // heads,
        f"head_dim is not in the config: hidden_size / num_attention_heads = {hidden} / {heads} = {hidden // heads}"
        + (" (as the model's code computes it)" if fields.family else ""),
    )
    return hidden // heads


def _kv_heads(fields: ConfigFields, heads: int) -> int:
    """KV heads per layer, as each family's attention module sets them."""
    if fields.family_key == "gpt2":
        return heads
    if fields.family_key == "falcon":
        kv_heads = _falcon_kv_heads(fields, heads)
    else:
        kv_heads = fields.whole(
            ("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"),
            maximum=MAX_HEADS,
            fallback=None,
            null=None,
        )
        if kv_heads is None:
            if fields.family is None and fields.values.get("multi_query") is True:
                kv_heads = 1
            else:
                kv_heads = heads
                fields.assume(
                    "kv_heads_default_mha",
                    "num_key_value_heads",
                    heads,
                    f"num_key_value_heads is not in the config: {heads}, one per query head (MHA)",
                )
    if heads % kv_heads:
        raise ConfigError(
            "inconsistent",
            f"num_key_value_heads ({kv_heads}) must divide num_attention_heads ({heads}): "
            "each KV head serves a whole group of query heads",
            field="num_key_value_heads",
        )
    return int(kv_heads)


def _falcon_kv_heads(fields: ConfigFields, heads: int) -> int:
    """FalconAttention: new_decoder_architecture → num_kv_heads; multi_query → 1; else MHA.

    Older files: RefinedWeb (Falcon-40B) reads n_head_kv; RefinedWebModel (Falcon-7B)
    reads multi_query (NeMo's convert_falcon_hf_to_nemo applies the same mapping).
    """
    if fields.model_type == "RefinedWeb":
        return int(fields.whole(("n_head_kv", "num_kv_heads"), maximum=MAX_HEADS, fallback=heads, null=heads))
    if fields.model_type == "RefinedWebModel":
        return 1 if fields.flag("multi_query", fallback=False) else heads
    if fields.flag("new_decoder_architecture", fallback=False):
        return int(fields.whole(("num_kv_heads", "n_head_kv"), maximum=MAX_HEADS, fallback=heads, null=heads))
    return 1 if fields.flag("multi_query", fallback=True) else heads


def _window(fields: ConfigFields) -> int | None:
    """sliding_window in tokens; None when null (full attention) or absent without a family default."""
    name, value = fields.raw(("sliding_window",))
    if value is None:
        return None
    if value is _ABSENT:
        default = fields.default("sliding_window")[1]
        if default is _ABSENT or default is None:
            return None
        fields.assume_default("sliding_window", default)
        return int(default)
    return _checked_whole(name, value, minimum=1, maximum=MAX_TOKENS)


def _layer_kinds(fields: ConfigFields, layout: str, layers: int) -> tuple[tuple[str, ...], int | None]:
    """Each layer's kind (full, sliding, linear) and the window, following the family's code."""
    listed = _listed_layer_types(fields, layers)
    window = _window(fields) if layout not in ("full", "falcon", "gpt2") else None
    if layout == "qwen2" or (layout == "unknown" and listed is None and "max_window_layers" in fields.values):
        kinds = listed or _qwen2_kinds(fields, layers, window)
        if not fields.flag("use_sliding_window", fallback=False) and listed is None:
            window = None
    elif listed is not None:
        kinds = listed
    else:
        kinds = _default_kinds(fields, layout, layers, window)
    if "sliding" in kinds and window is None:
        raise ConfigError(
            "inconsistent",
            "the layers include sliding-window attention but the config gives no sliding_window",
            field="sliding_window",
        )
    return tuple(kinds), window


def _default_kinds(fields: ConfigFields, layout: str, layers: int, window: int | None) -> list[str]:
    """Layer kinds of a file without layer_types, as the family's config class derives them."""
    if layout in ("gemma2", "gpt_oss"):
        return _every_nth_full(layers, 2, "sliding")
    if layout == "gemma3":
        return _every_nth_full(layers, fields.whole(("sliding_window_pattern",), maximum=MAX_LAYERS), "sliding")
    if layout == "qwen3_next" or (layout == "unknown" and "full_attention_interval" in fields.values):
        return _every_nth_full(layers, fields.whole(("full_attention_interval",), maximum=MAX_LAYERS), "linear")
    if layout == "unknown" and window is not None and fields.values.get("use_sliding_window") is False:
        _ignored(fields, window)
        return ["full"] * layers
    if layout in ("window_all", "unknown") and window is not None:
        return ["sliding"] * layers
    return ["full"] * layers


def _every_nth_full(layers: int, period: int, other: str) -> list[str]:
    """Layer i is full attention when (i + 1) % period == 0, `other` elsewhere (Gemma 2/3, gpt-oss, Qwen3-Next)."""
    return ["full" if (i + 1) % period == 0 else other for i in range(layers)]


def _qwen2_kinds(fields: ConfigFields, layers: int, window: int | None) -> list[str]:
    """Qwen2Config: window only if use_sliding_window; then layers i ≥ max_window_layers slide."""
    if not fields.flag("use_sliding_window", fallback=False):
        if window is not None:
            _ignored(fields, window)
        return ["full"] * layers
    first = fields.whole(("max_window_layers",), maximum=MAX_LAYERS, minimum=0)
    return ["sliding" if i >= first else "full" for i in range(layers)]


def _ignored(fields: ConfigFields, window: int) -> None:
    fields.assume(
        "sliding_window_ignored",
        "use_sliding_window",
        window,
        f"sliding_window {window} is not used: use_sliding_window is false, "
        "so every layer attends to the whole context",
    )


def _listed_layer_types(fields: ConfigFields, layers: int) -> list[str] | None:
    value = fields.values.get("layer_types")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError("wrong_type", "config field 'layer_types' must be a list of strings", field="layer_types")
    if len(value) != layers:
        raise ConfigError(
            "inconsistent",
            f"'layer_types' lists {len(value)} layers but num_hidden_layers is {layers}",
            field="layer_types",
        )
    kinds = []
    for item in value:
        if item not in _LAYER_TYPES:
            raise ConfigError(
                "unknown_value",
                f"unknown entry {item[:40]!r} in 'layer_types': expected full_attention, sliding_attention "
                "or linear_attention",
                field="layer_types",
            )
        kinds.append(_LAYER_TYPES[item])
    return kinds


def _mla_layout(fields: ConfigFields, layers: int, heads: int, hidden: int) -> Layout:
    """DeepSeek-V2/V3, Kimi K2: every layer caches one latent (kv_lora_rank + qk_rope_head_dim values).

    head_dim = qk_nope_head_dim + qk_rope_head_dim (the query/key size, used for
    attention FLOPs); num_key_value_heads keeps the file's value (not cached).
    """
    rank = fields.whole(("kv_lora_rank",), maximum=MAX_HEAD_DIM)
    rope = fields.whole(("qk_rope_head_dim",), maximum=MAX_HEAD_DIM, minimum=0)
    nope = fields.whole(("qk_nope_head_dim",), maximum=MAX_HEAD_DIM, minimum=0)
    kv_heads = fields.whole(("num_key_value_heads",), maximum=MAX_HEADS, fallback=heads, null=heads)
    if nope + rope < 1:
        raise ConfigError(
            "out_of_range", "qk_nope_head_dim + qk_rope_head_dim must be at least 1", field="qk_nope_head_dim"
        )
    return Layout(
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads if heads % kv_heads else kv_heads,
        head_dim=nope + rope,
        hidden_size=hidden,
        kinds=("mla",) * layers,
        sliding_window=None,
        kv_lora_rank=rank,
        qk_rope_head_dim=rope,
    )


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)
