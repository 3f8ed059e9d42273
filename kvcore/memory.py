"""GPU memory: weights, the KV budget, and the seed's sizing rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .model import ModelSpec

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
        raise ValueError(
            f"the parameter count of {model.name!r} is unknown: give the weights' size (--weights-gib) or --params-b"
        )
    return weights_bytes(model.total_params, bytes_per_param=bytes_per_param) / checks.whole("tp", tp)


def kv_budget_bytes(
    *, memory_bytes: float, utilization: float = 0.9, weights_bytes: float, overhead_bytes: float = 0.0
) -> float:
    """Memory left for the KV cache: VRAM · u − weights − overhead (negative: the weights do not fit).

    The numerator of the seed's sizing rule (seed 000, "A regra de dimensionamento"):
    the engine may use a fraction u of the card, then weights and a real overhead
    (activations, buffers, CUDA graphs, fragmentation) come off the top.
    """
    checks.positive("GPU memory", memory_bytes)
    checks.fraction("GPU memory utilization", utilization)
    checks.positive("weights", weights_bytes, allow_zero=True)
    checks.positive("overhead", overhead_bytes, allow_zero=True)
    return memory_bytes * utilization - weights_bytes - overhead_bytes


def tokens_that_fit(*, kv_budget_bytes: float, bytes_per_token: float) -> float:
    """Tokens, summed over all live sequences, that the KV budget holds.

    Formula: floor(max(budget, 0) / bytes_per_token)  (seed 000's sizing rule).
    """
    checks.positive("bytes per token", bytes_per_token)
    return float(np.floor(max(kv_budget_bytes, 0.0) / bytes_per_token))


def context_per_user(*, tokens: ArrayLike, concurrency: ArrayLike) -> np.ndarray:
    """Average context each user can have: tokens that fit / concurrent users."""
    checks.positive("concurrency", concurrency)
    return np.floor(np.asarray(tokens, dtype=float) / np.asarray(concurrency, dtype=float))


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


def max_users(*, kv_budget_bytes: float, sequence_bytes: ArrayLike) -> np.ndarray:
    """Whole sequences of a given size that fit in the budget: floor(budget / sequence bytes).

    A 12 GB card with a 9 GB model and 20k-token PDFs at 128 KiB/token holds one
    (2.44 GiB each) and not two (seed 000's OOM story).
    """
    checks.positive("sequence bytes", sequence_bytes)
    return np.floor(np.maximum(kv_budget_bytes, 0.0) / np.asarray(sequence_bytes, dtype=float))
