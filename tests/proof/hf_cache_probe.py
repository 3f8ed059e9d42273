"""Tiny random transformers models, one forward pass, and the bytes their cache holds.

Helpers of the proof suite (imported by its test files, never collected on their own).
The cache is weighed generically: every tensor reachable from each cache layer's
attributes counts, by ``numel() * element_size()``, and a tensor under an attribute
this module does not know stops the test, so a transformers release that adds a new
kind of state cannot slip past unweighed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch
from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedConfig, PreTrainedModel

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}

# Attributes of a cache layer that hold per-sequence state (transformers/cache_utils.py, v5.18.0:
# DynamicLayer.keys/values, LinearAttentionLayer.conv_states/recurrent_states; the others are the
# names older releases used, kept so a pin change still weighs everything).
STATE_ATTRIBUTES = frozenset(
    {"keys", "values", "conv_states", "recurrent_states", "key_cache", "value_cache", "ssm_states"}
)
# Tensors that are bookkeeping, not cache: the window as a 0-d tensor, a static cache's write position.
METADATA_ATTRIBUTES = frozenset({"_sliding_window_tensor", "cumulative_length"})
# The older one-list-per-state layout's names for K and V.
LEGACY_NAMES = {"key_cache": "keys", "value_cache": "values"}


@dataclass(frozen=True)
class CachedLayer:
    """One decoder layer's cache: its transformers class and every state tensor it holds, by name."""

    index: int
    cache_class: str
    tensors: dict[str, torch.Tensor]

    @property
    def bytes(self) -> int:
        """Bytes of the tensors as they are shaped (numel · element size)."""
        return sum(tensor_bytes(tensor) for tensor in self.tensors.values())

    @property
    def storage_bytes(self) -> int:
        """Bytes of the memory blocks the tensors keep alive (a slice can pin a larger block)."""
        return sum(tensor.untyped_storage().nbytes() for tensor in self.tensors.values())


@dataclass(frozen=True)
class Prefill:
    """A tiny model, its config, and the cache one forward pass over a random prompt left."""

    config: PreTrainedConfig
    model: PreTrainedModel
    cache: Any
    prompt_tokens: int

    @property
    def layers(self) -> list[CachedLayer]:
        return cached_layers(self.cache)

    @property
    def bytes(self) -> int:
        return sum(layer.bytes for layer in self.layers)


def tensor_bytes(tensor: torch.Tensor) -> int:
    """numel · element_size: the bytes a tensor's values take."""
    return tensor.numel() * tensor.element_size()


def tiny_model(fields: dict[str, Any], dtype: str) -> tuple[PreTrainedConfig, PreTrainedModel]:
    """A randomly initialised model built from config fields (``model_type`` included), in eval mode."""
    config = AutoConfig.for_model(**fields)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, dtype=DTYPES[dtype]).eval()
    parameter_dtypes = {parameter.dtype for parameter in model.parameters()}
    assert parameter_dtypes == {DTYPES[dtype]}, f"{fields['model_type']}: weights in {parameter_dtypes}, not {dtype}"
    return config, model


def prompt_ids(vocab_size: int, prompt_tokens: int) -> torch.Tensor:
    """A random prompt of `prompt_tokens` ids, the same for every run (seeded by its length)."""
    generator = torch.Generator().manual_seed(prompt_tokens)
    return torch.randint(0, vocab_size, (1, prompt_tokens), generator=generator)


def run_prefill(fields: dict[str, Any], dtype: str, prompt_tokens: int) -> Prefill:
    """Build the tiny model and run one forward pass with use_cache=True over the prompt."""
    config, model = tiny_model(fields, dtype)
    with torch.no_grad():
        output = model(input_ids=prompt_ids(config.vocab_size, prompt_tokens), use_cache=True)
    assert output.past_key_values is not None, f"{fields['model_type']}: the forward pass returned no cache"
    return Prefill(config=config, model=model, cache=output.past_key_values, prompt_tokens=prompt_tokens)


@cache
def _prefill_cached(frozen_fields: tuple[tuple[str, Any], ...], dtype: str, prompt_tokens: int) -> Prefill:
    return run_prefill(dict(_thaw(frozen_fields)), dtype, prompt_tokens)


def prefill(fields: dict[str, Any], dtype: str, prompt_tokens: int) -> Prefill:
    """run_prefill, memoised for the session: several tests weigh the same forward pass (never mutate it)."""
    return _prefill_cached(_freeze(fields), dtype, prompt_tokens)


def decode_one_token(prefilled: Prefill) -> None:
    """Run one more forward pass of one token, growing `prefilled.cache` in place."""
    next_id = prompt_ids(prefilled.config.vocab_size, 1)
    with torch.no_grad():
        prefilled.model(input_ids=next_id, past_key_values=prefilled.cache, use_cache=True)


def cached_layers(cache_object: Any) -> list[CachedLayer]:
    """Every layer of a transformers cache with the state tensors it holds.

    Handles ``Cache.layers`` (the 5.x layout), the older layout of one list per
    state (``key_cache``, ``value_cache``, ``conv_states``, ...; entry i is layer i) and
    the legacy tuple of (key, value) tuples. Fails on a tensor held under an unknown
    attribute, on the cache object itself outside its layers included.
    """
    if isinstance(cache_object, (tuple, list)):
        return [
            CachedLayer(index, "tuple", {"keys": pair[0], "values": pair[1]}) for index, pair in enumerate(cache_object)
        ]
    if hasattr(cache_object, "layers"):
        outside = {name: value for name, value in vars(cache_object).items() if name != "layers"}
        stray = [label for name, value in outside.items() for label, _ in _tensors(value, name)]
        assert not stray, f"{type(cache_object).__name__} holds tensors outside its layers: {stray}"
        return [_layer(index, layer) for index, layer in enumerate(cache_object.layers)]
    lists = {name: value for name, value in vars(cache_object).items() if name in STATE_ATTRIBUTES}
    _check_attributes(type(cache_object).__name__, vars(cache_object))
    count = max(len(value) for value in lists.values())
    return [
        CachedLayer(
            index,
            type(cache_object).__name__,
            {
                LEGACY_NAMES.get(name, name): value[index]
                for name, value in lists.items()
                if index < len(value) and isinstance(value[index], torch.Tensor)
            },
        )
        for index in range(count)
    ]


def _layer(index: int, layer: Any) -> CachedLayer:
    _check_attributes(f"layer {index} ({type(layer).__name__})", vars(layer))
    tensors = {
        label: tensor
        for name, value in vars(layer).items()
        if name in STATE_ATTRIBUTES
        for label, tensor in _tensors(value, name)
    }
    return CachedLayer(index, type(layer).__name__, tensors)


def _check_attributes(owner: str, attributes: dict[str, Any]) -> None:
    """Fail if tensors sit under an attribute that is neither known state nor known bookkeeping."""
    for name, value in attributes.items():
        if name not in STATE_ATTRIBUTES | METADATA_ATTRIBUTES and any(True for _ in _tensors(value, name)):
            raise AssertionError(
                f"{owner} holds tensors under {name!r}: decide whether they are cache state "
                "and add the name to STATE_ATTRIBUTES or METADATA_ATTRIBUTES"
            )


def _tensors(value: Any, label: str) -> Iterator[tuple[str, torch.Tensor]]:
    if isinstance(value, torch.Tensor):
        yield label, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _tensors(item, f"{label}[{key}]")
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            yield from _tensors(item, f"{label}[{position}]")


def _freeze(fields: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((name, tuple(value) if isinstance(value, list) else value) for name, value in fields.items()))


def _thaw(frozen: tuple[tuple[str, Any], ...]) -> Iterator[tuple[str, Any]]:
    for name, value in frozen:
        yield name, list(value) if isinstance(value, tuple) else value
