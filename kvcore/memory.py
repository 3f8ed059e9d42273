"""What one GPU must hold: the weights, the KV cache beside them, and when the cache catches up.

The budget that leaves the KV pool is :mod:`kvcore.budget`; what the pool holds is
:mod:`kvcore.capacity`. This module is the demand side: weights + cache + overhead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .errors import KvError
from .kv import (
    context_tokens_at_kv_bytes,
    kv_cache_bytes,
    mha_equivalent_bytes_per_token,
    sequence_kv_bytes,
)
from .model import ModelSpec

__all__ = [
    "MemoryBreakdown",
    "break_even_context_tokens",
    "break_even_users",
    "mha_cache_bytes",
    "model_weights_bytes",
    "total_memory_bytes",
    "weights_bytes",
]

ArrayLike = Any


def weights_bytes(params: float, *, bytes_per_param: float = 2.0) -> float:
    """Bytes of the weights: parameters · bytes per parameter.

    For MoE models pass the TOTAL parameters: every expert must be resident,
    even though each token uses only a few. 70 B params in FP16 = 140 GB (seed 004).
    """
    checks.positive("parameters", params)
    checks.positive("bytes per parameter", bytes_per_param)
    return float(params) * bytes_per_param


def model_weights_bytes(model: ModelSpec, *, bytes_per_param: float = 2.0, tp: int = 1) -> float:
    """Weights of `model` on one of `tp` GPUs: total_params · b / tp."""
    if model.total_params is None:
        raise KvError("params_unknown", f"the parameter count of {model.name!r} is unknown", model=model.name)
    return weights_bytes(model.total_params, bytes_per_param=bytes_per_param) / checks.whole("tp", tp)


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """What one GPU holds; the parts sum to ``total_bytes`` (feeds a stacked bar)."""

    weights_bytes: float
    kv_cache_bytes: float
    overhead_bytes: float

    @property
    def total_bytes(self) -> float:
        """weights + KV cache + overhead."""
        return self.weights_bytes + self.kv_cache_bytes + self.overhead_bytes

    def fits(self, memory_bytes: float, utilization: float = 1.0) -> bool:
        """True if the total fits in memory_bytes · utilization."""
        return self.total_bytes <= memory_bytes * utilization


def total_memory_bytes(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    concurrency: ArrayLike = 1,
    kv_bytes_per_value: float = 2.0,
    weights_bytes_per_param: float = 2.0,
    overhead_bytes: float = 0.0,
) -> np.ndarray:
    """What one GPU must hold: weights + KV cache(s, B) + overhead, in bytes.

    Formula: total_params · b_w + B · sequence_kv_bytes(s) + overhead (seed 000's
    sizing rule read the other way round). Context and concurrency broadcast, so
    ``context[None, :]`` and ``users[:, None]`` give a users × context grid.

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128, total_params=8e9)
    >>> float(total_memory_bytes(m, context_tokens=131072, overhead_bytes=2**30)) / 2**30 - 16 - 1 == 16e9 / 2**30
    True
    """
    checks.positive("overhead", overhead_bytes, allow_zero=True)
    weights = model_weights_bytes(model, bytes_per_param=weights_bytes_per_param)
    cache = kv_cache_bytes(
        model, context_tokens=context_tokens, concurrency=concurrency, bytes_per_value=kv_bytes_per_value
    )
    return weights + cache + overhead_bytes


def break_even_context_tokens(
    model: ModelSpec,
    *,
    weights_bytes: float,
    concurrency: ArrayLike = 1,
    bytes_per_value: float = 2.0,
    state_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """Context per user at which the KV cache of `concurrency` users equals the weights (inf: never).

    This is seed 002's opening question ("why can a 30 GB model need 60 GB?"): past
    this context the cache alone weighs as much as the model. The cache of one
    sequence is piecewise linear in the context s:

        c + (g + w_rate) · s            while s ≤ window
        c + w_rate · window + g · s     after it

    g: bytes/token of full and MLA layers (they grow forever); w_rate: bytes/token of
    sliding layers (they stop at the window); c: the constant state of linear layers.
    Solving B · cache(s) = weights gives s in tokens (0 if the state alone is already
    as big; inf if only sliding and linear layers hold tokens and they stop short):
    ``kvcore.kv.context_tokens_at_kv_bytes``, the solver ``timing.crossover_context_tokens`` shares.
    For a model whose layers all attend to everything: weights / (B · bytes per token).

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
    >>> float(break_even_context_tokens(m, weights_bytes=16 * 2**30))
    131072.0
    """
    checks.positive("weights", weights_bytes)
    checks.positive("concurrency", concurrency)
    checks.positive("bytes per value", bytes_per_value)
    return context_tokens_at_kv_bytes(
        model,
        kv_bytes=weights_bytes,
        batch=concurrency,
        bytes_per_value=bytes_per_value,
        state_bytes_per_value=state_bytes_per_value,
    )


def break_even_users(
    model: ModelSpec, *, weights_bytes: float, context_tokens: ArrayLike, bytes_per_value: float = 2.0
) -> np.ndarray:
    """Fewest users at `context_tokens` each whose KV cache reaches the weights: ceil(weights / sequence bytes).

    Useful where one user never gets there (a context cap, a sliding window).
    Qwen2.5-32B in INT8 (32.5 GB of weights) at 32,768 tokens, 8 GiB each: 4 users.
    """
    checks.positive("weights", weights_bytes)
    sequence = sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=bytes_per_value)
    checks.positive("KV cache of one sequence", sequence)
    return np.ceil(weights_bytes / sequence)


def mha_cache_bytes(
    model: ModelSpec, *, context_tokens: ArrayLike, concurrency: ArrayLike = 1, bytes_per_value: float = 2.0
) -> np.ndarray:
    """The cache if every query head kept its own K and V in every layer (classic MHA).

    Formula: 2 · L · n_heads · d_head · s · B · b. Seed 002's memory table uses this
    ("2 × layers × seq_len × d_model × bytes", d_model = n_heads · d_head) for Llama 3,
    whose GQA cache is 4× (8B) or 8× (70B) smaller. 2·32·4096·4096·2 = 2 GiB at 4k for 8B.
    """
    checks.positive("context tokens", context_tokens, allow_zero=True)
    checks.positive("concurrency", concurrency, allow_zero=True)
    per_token = mha_equivalent_bytes_per_token(model, bytes_per_value=bytes_per_value)
    return per_token * np.asarray(context_tokens, dtype=float) * np.asarray(concurrency, dtype=float)
