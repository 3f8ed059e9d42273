"""kvcore's public functions name their knobs: no ``**kwargs`` forwarders hiding them from readers and mypy."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable

import kvcore

#: The two that forward to a dataclass's fields on purpose: a GPU's text columns, a model's replaced fields.
FIELD_FORWARDERS = {"kvcore.hardware.gpu", "kvcore.model.with_changes"}


def public_functions() -> dict[str, Callable[..., object]]:
    found: dict[str, Callable[..., object]] = {}
    for name in kvcore._MODULES:
        module = importlib.import_module(f"kvcore.{name}") if isinstance(name, str) else name
        for public in module.__all__:
            value = getattr(module, public)
            if inspect.isfunction(value):
                found[f"{module.__name__}.{public}"] = value
    return found


def test_the_scan_sees_the_time_and_cache_functions():
    assert {"kvcore.timing.ttft_s", "kvcore.kv.kv_cache_bytes", "kvcore.agent.answer_stream_s"} <= set(
        public_functions()
    )


def test_every_public_kvcore_function_names_its_keywords():
    forwarders = {
        name
        for name, function in public_functions().items()
        if any(p.kind is p.VAR_KEYWORD for p in inspect.signature(function).parameters.values())
    }
    assert forwarders == FIELD_FORWARDERS


def test_the_time_per_token_shows_its_knobs_with_their_defaults():
    parameters = inspect.signature(kvcore.tpot_s).parameters
    assert list(parameters) == [
        "model",
        "context_tokens",
        "batch",
        "rates",
        "weight_bytes_per_param",
        "kv_bytes_per_value",
        "weights_bytes",
    ]
    assert parameters["batch"].default == 1 and parameters["weights_bytes"].default is None
