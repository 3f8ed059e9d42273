"""Model architecture: a model is a list of layers, each with its own cache.

Field names follow Hugging Face ``config.json`` (``num_hidden_layers``,
``num_key_value_heads``, ``head_dim``, ``sliding_window``, ``kv_lora_rank``,
``qk_rope_head_dim``) so a learner can check them against the model's own file.

Layer kinds and what each caches per sequence:

* ``full`` — K and V for every token: 2 · num_key_value_heads · head_dim values per token.
* ``sliding`` — the same per token, but only for the last ``sliding_window`` tokens.
* ``mla`` — Multi-head Latent Attention (DeepSeek-V2, arXiv:2405.04434): one latent
  of kv_lora_rank + qk_rope_head_dim values per token, shared by K and V (no factor 2).
* ``linear`` — linear attention / state-space layers (Gated DeltaNet, Mamba):
  no per-token cache, a constant state of ``linear_state_values`` values per sequence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from . import checks
from .errors import KvError

__all__ = [
    "LAYER_KINDS",
    "LayerSpec",
    "ModelSpec",
    "layer_kinds",
    "uniform_model",
    "with_changes",
]

LayerKind = Literal["full", "sliding", "mla", "linear"]
LAYER_KINDS: tuple[str, ...] = ("full", "sliding", "mla", "linear")
_PATTERN_ITEM = re.compile(r"^(full|sliding|mla|linear)(?:\*(\d+))?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerSpec:
    """One decoder layer's attention, as far as its cache is concerned."""

    kind: LayerKind
    num_key_value_heads: int = 0
    head_dim: int = 0
    sliding_window: int | None = None
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    linear_state_values: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSpec:
    """A transformer's architecture, with its layers derived from ``layer_pattern``.

    ``layer_pattern`` is a cycle of layer kinds repeated from layer 0, e.g. ``full``,
    ``sliding,full`` (Gemma 2, gpt-oss), ``sliding*5,full`` (Gemma 3), ``mla``
    (DeepSeek-V3), ``linear*3,full`` (Qwen3-Next). Parameters are counts (not
    billions); ``active_params`` differs from ``total_params`` only for MoE models.
    ``weights_dtype`` is the format the released checkpoint stores its weights in
    (``torch_dtype`` is what config.json says: DeepSeek-V3 ships FP8 weights under a
    bfloat16 config, gpt-oss MXFP4 experts).

    ``vocab_size`` is the number of token embeddings (rows of the embedding table).
    ``intermediate_size`` is the dense MLP's width (0 when every layer is MoE or unknown).
    ``moe_intermediate_size`` is one routed expert's MLP width (0 for dense models).
    ``tie_word_embeddings`` is True when the output head reuses the embedding table.
    """

    id: str
    name: str
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    hidden_size: int = 0
    vocab_size: int = 0
    intermediate_size: int = 0
    moe_intermediate_size: int = 0
    tie_word_embeddings: bool = False
    layer_pattern: str = "full"
    sliding_window: int | None = None
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    linear_state_values: int = 0
    max_position_embeddings: int = 0
    total_params: float | None = None
    active_params: float | None = None
    num_experts: int = 0
    num_experts_per_tok: int = 0
    hf_id: str = ""
    torch_dtype: str = ""
    weights_dtype: str = "bf16"
    source_url: str = ""
    notes: str = ""
    layers: tuple[LayerSpec, ...] = field(init=False, repr=False, compare=False)
    _layer_counts: tuple[tuple[LayerSpec, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        where = f"model {self.id!r}"
        checks.whole("num_hidden_layers", self.num_hidden_layers, where=where)
        checks.whole("num_attention_heads", self.num_attention_heads, where=where)
        checks.whole("num_key_value_heads", self.num_key_value_heads, where=where)
        checks.whole("head_dim", self.head_dim, where=where)
        if self.num_attention_heads % self.num_key_value_heads:
            raise KvError(
                "kv_heads_not_dividing",
                f"{where}: num_key_value_heads ({self.num_key_value_heads}) must divide "
                f"num_attention_heads ({self.num_attention_heads}); each KV head serves a whole group of query heads",
                model=self.id,
                kv_heads=self.num_key_value_heads,
                heads=self.num_attention_heads,
            )
        kinds = layer_kinds(self.layer_pattern, self.num_hidden_layers)
        if "sliding" in kinds:
            if not self.sliding_window:
                raise KvError(
                    "sliding_window_missing",
                    f"{where}: the layer pattern has sliding layers, so give sliding_window (tokens)",
                    model=self.id,
                )
            checks.whole("sliding_window", self.sliding_window, where=where)
        if "mla" in kinds:
            checks.whole("kv_lora_rank", self.kv_lora_rank, where=where)
            checks.whole("qk_rope_head_dim", self.qk_rope_head_dim, minimum=0, where=where)
        if "linear" in kinds:
            checks.whole("linear_state_values", self.linear_state_values, minimum=0, where=where)
        for name in ("total_params", "active_params"):
            value = getattr(self, name)
            if value is not None:
                checks.positive(name, value, where=where)
        if (
            self.total_params is not None
            and self.active_params is not None
            and self.active_params > self.total_params * (1 + 1e-9)
        ):
            raise KvError(
                "active_exceeds_total",
                f"{where}: active_params cannot exceed total_params",
                model=self.id,
                active_params=self.active_params,
                total_params=self.total_params,
            )
        layers = tuple(
            LayerSpec(
                kind=kind,
                num_key_value_heads=self.num_key_value_heads if kind in ("full", "sliding") else 0,
                head_dim=self.head_dim if kind in ("full", "sliding") else 0,
                sliding_window=self.sliding_window if kind == "sliding" else None,
                kv_lora_rank=self.kv_lora_rank if kind == "mla" else 0,
                qk_rope_head_dim=self.qk_rope_head_dim if kind == "mla" else 0,
                linear_state_values=self.linear_state_values if kind == "linear" else 0,
            )
            for kind in kinds
        )
        object.__setattr__(self, "layers", layers)
        counts: dict[LayerSpec, int] = {}
        for layer in layers:
            counts[layer] = counts.get(layer, 0) + 1
        object.__setattr__(self, "_layer_counts", tuple(counts.items()))

    @property
    def attention_type(self) -> str:
        """'MHA', 'GQA', 'MQA' or 'MLA', as the literature names the KV sharing."""
        if any(layer.kind == "mla" for layer in self.layers):
            return "MLA"
        if self.num_key_value_heads == 1:
            return "MQA"
        if self.num_key_value_heads == self.num_attention_heads:
            return "MHA"
        return "GQA"

    @property
    def is_moe(self) -> bool:
        """True for mixture-of-experts models (active parameters < total)."""
        return self.num_experts > 0

    def layer_counts(self) -> dict[LayerSpec, int]:
        """Distinct layer specs and how many layers share each (formulas loop over these, ≤ 4)."""
        return dict(self._layer_counts)

    def count(self, kind: str) -> int:
        """Number of layers of one kind."""
        return sum(1 for layer in self.layers if layer.kind == kind)


def layer_kinds(pattern: str, num_layers: int) -> tuple[LayerKind, ...]:
    """Expand a cyclic layer pattern over `num_layers` layers.

    >>> layer_kinds("sliding*2,full", 5)
    ('sliding', 'sliding', 'full', 'sliding', 'sliding')
    """
    items = [item.strip() for item in str(pattern).split(",") if item.strip()]
    cycle: list[LayerKind] = []
    for item in items:
        match = _PATTERN_ITEM.match(item)
        if not match or (match.group(2) is not None and int(match.group(2)) < 1):
            raise KvError(
                "bad_layer_pattern",
                f"unknown layer pattern item {item!r} in {pattern!r}: use full, sliding, mla or linear, "
                "optionally with *N, separated by commas (e.g. 'sliding*5,full')",
                item=item,
                pattern=str(pattern),
            )
        cycle.extend([match.group(1)] * int(match.group(2) or 1))  # type: ignore[list-item]
    if not cycle:
        raise KvError("empty_layer_pattern", "the layer pattern is empty: use e.g. 'full'")
    return tuple(cycle[i % len(cycle)] for i in range(num_layers))


def uniform_model(
    *,
    num_hidden_layers: int,
    num_key_value_heads: int,
    head_dim: int,
    num_attention_heads: int | None = None,
    sliding_window: int | None = None,
    sliding_layers: int = 0,
    kv_lora_rank: int = 0,
    qk_rope_head_dim: int = 0,
    total_params: float | None = None,
    active_params: float | None = None,
    name: str = "custom",
) -> ModelSpec:
    """A model given by a few numbers, as on a whiteboard (the CLI's explicit form).

    With ``kv_lora_rank`` every layer is MLA; with ``sliding_layers = K`` the first K
    layers slide over ``sliding_window`` tokens and the rest attend to everything.
    """
    heads = num_attention_heads or num_key_value_heads
    layers = checks.whole("layers", num_hidden_layers)
    if kv_lora_rank:
        pattern = "mla"
    elif sliding_layers:
        sliding = checks.whole("sliding layers", sliding_layers)
        if sliding > layers:
            raise KvError(
                "sliding_layers_exceed_layers",
                f"sliding layers ({sliding}) cannot exceed layers ({layers})",
                sliding=sliding,
                layers=layers,
            )
        pattern = f"sliding*{sliding}" + (f",full*{layers - sliding}" if sliding < layers else "")
    else:
        pattern = "full"
    return ModelSpec(
        id=name,
        name=name,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=num_key_value_heads,
        head_dim=head_dim,
        layer_pattern=pattern,
        sliding_window=sliding_window if sliding_layers else None,
        kv_lora_rank=kv_lora_rank,
        qk_rope_head_dim=qk_rope_head_dim,
        total_params=total_params,
        active_params=active_params if active_params is not None else total_params,
    )


def with_changes(model: ModelSpec, **changes: object) -> ModelSpec:
    """A copy of `model` with some fields replaced (layers re-derived), e.g. fewer KV heads."""
    return replace(model, **changes)  # type: ignore[arg-type]
