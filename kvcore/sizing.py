"""Sizing a server: the seed's rule step by step, context per user, and the preemption alarm.

Seed 000 ("A regra de dimensionamento"):

    simultaneous tokens = (VRAM · u − weights − overhead) / bytes per token

The engine (vLLM's ``gpu_memory_utilization``) takes a fraction u of the card, loads
the weights, keeps room for activations, buffers and CUDA graphs, and turns the rest
into one pool of KV blocks shared by every live sequence. The result is a total over
all users; dividing it by the expected concurrency gives the average context each
user can have. When the live sequences need more than the pool holds, the scheduler
preempts some of them (swaps their KV to CPU memory or drops it to recompute later).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .kv import kv_bytes_per_token, sequence_kv_bytes
from .memory import kv_budget_bytes
from .model import ModelSpec

__all__ = [
    "DEFAULT_SAFETY_MARGIN",
    "NO_LIMIT_TOKENS",
    "SizingSteps",
    "fitting_context_tokens",
    "pool_capacity_tokens",
    "pool_headroom",
    "pool_share",
    "preemption_risk",
    "sizing_steps",
    "tokens_per_user",
]

ArrayLike = Any

#: Free share of the pool below which a load that still fits is called "at the limit".
#: Every running sequence grows by one token per step and new requests arrive, so a
#: pool filled to the brim preempts at the next burst (a rule of thumb, not a vLLM setting).
DEFAULT_SAFETY_MARGIN = 0.10

#: Upper end of the search for the longest context that fits (2**40 tokens: "no limit").
NO_LIMIT_TOKENS = 1 << 40


@dataclass(frozen=True, slots=True, kw_only=True)
class SizingSteps:
    """Seed 000's sizing rule for one GPU, one step per field.

    The memory parts add up to the card: ``held_back_bytes + weights_bytes +
    overhead_bytes + kv_pool_bytes == memory_bytes`` (a negative pool means the weights
    and overhead do not fit in VRAM · u). Tokens are summed over all sequences.
    """

    memory_bytes: float
    utilization: float
    held_back_bytes: float
    weights_bytes: float
    overhead_bytes: float
    kv_pool_bytes: float
    bytes_per_token: float
    pool_tokens: float
    concurrency: int
    tokens_per_user: float

    @property
    def usable_bytes(self) -> float:
        """VRAM · u: what the engine may use."""
        return self.memory_bytes - self.held_back_bytes

    @property
    def fits(self) -> bool:
        """True when weights and overhead leave a pool of at least one token."""
        return self.pool_tokens >= 1


def sizing_steps(
    model: ModelSpec,
    *,
    memory_bytes: float,
    utilization: float = 0.9,
    weights_bytes: float,
    overhead_bytes: float = 0.0,
    concurrency: int = 1,
    bytes_per_value: float = 2.0,
    tp: int = 1,
) -> SizingSteps:
    """Every step of the seed's rule on one GPU of `tp`: VRAM → · u → − weights → − overhead → ÷ bytes/token → ÷ users.

    Formulas: pool = VRAM · u − weights − overhead [bytes] (``kv_budget_bytes``);
    tokens = floor(max(pool, 0) / bytes_per_token) [tokens, all sequences];
    tokens per user = floor(tokens / users). `weights_bytes` is one GPU's share;
    bytes per token is one GPU's share of every layer's K and V (``kv_bytes_per_token``),
    the figure vLLM divides its pool by. Source: seed 000; vLLM ``gpu_memory_utilization``.

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
    >>> s = sizing_steps(m, memory_bytes=80 * 2**30, utilization=0.9, weights_bytes=16 * 2**30, concurrency=4)
    >>> s.pool_tokens, s.tokens_per_user
    (458752.0, 114688.0)
    """
    checks.positive("GPU memory", memory_bytes)
    users = checks.whole("concurrency", concurrency)
    pool = kv_budget_bytes(
        memory_bytes=memory_bytes, utilization=utilization, weights_bytes=weights_bytes, overhead_bytes=overhead_bytes
    )
    per_token = kv_bytes_per_token(model, bytes_per_value=bytes_per_value, tp=tp)
    tokens = pool_capacity_tokens(kv_pool_bytes=pool, bytes_per_token=per_token)
    return SizingSteps(
        memory_bytes=float(memory_bytes),
        utilization=float(utilization),
        held_back_bytes=float(memory_bytes) * (1.0 - float(utilization)),
        weights_bytes=float(weights_bytes),
        overhead_bytes=float(overhead_bytes),
        kv_pool_bytes=float(pool),
        bytes_per_token=per_token,
        pool_tokens=float(tokens),
        concurrency=users,
        tokens_per_user=float(tokens_per_user(pool_tokens=tokens, concurrency=users)),
    )


def pool_capacity_tokens(*, kv_pool_bytes: ArrayLike, bytes_per_token: float) -> np.ndarray:
    """Tokens the pool holds, summed over every live sequence: floor(max(pool, 0) / bytes per token).

    This is the dashboard's "max context" (vLLM's "GPU KV cache size: N tokens", before
    rounding to whole blocks): an aggregate, not the limit of one conversation (seed 000).

    >>> float(pool_capacity_tokens(kv_pool_bytes=32 * 2**30, bytes_per_token=131072))
    262144.0
    """
    checks.positive("bytes per token", bytes_per_token)
    return np.floor(np.maximum(np.asarray(kv_pool_bytes, dtype=float), 0.0) / bytes_per_token)


def tokens_per_user(*, pool_tokens: ArrayLike, concurrency: ArrayLike) -> np.ndarray:
    """Average context per user by the seed's rule: floor(pool tokens / concurrent users)  [tokens].

    A hyperbola in the number of users (seed 000: "divide by the expected concurrency").
    """
    checks.positive("concurrency", concurrency)
    return np.floor(np.asarray(pool_tokens, dtype=float) / np.asarray(concurrency, dtype=float))


def fitting_context_tokens(
    model: ModelSpec,
    *,
    kv_pool_bytes: float,
    concurrency: ArrayLike = 1,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    limit_tokens: int = NO_LIMIT_TOKENS,
) -> np.ndarray:
    """Longest context each of B users can hold at once: max whole s with B · sequence_kv_bytes(s) ≤ pool.

    For full-attention and MLA models this equals pool tokens / B (the seed's rule).
    Sliding-window layers stop growing at the window and linear-attention layers keep
    a fixed state, so for those models a sequence costs less than s · bytes per token
    and the real answer is longer; a linear state can also make it shorter (it is
    paid even by a one-token sequence). Bisection on every point at once (the cache
    never shrinks as s grows); `limit_tokens` when nothing grows with s, 0 when not
    even one token fits. Source: kvcore.kv.sequence_kv_bytes; seed 000.

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
    >>> fitting_context_tokens(m, kv_pool_bytes=32 * 2**30, concurrency=[1, 2, 4]).tolist()
    [262144.0, 131072.0, 65536.0]
    """
    users = np.asarray(checks.positive("concurrency", concurrency), dtype=float)

    def fits(tokens: np.ndarray) -> np.ndarray:
        need = users * sequence_kv_bytes(model, context_tokens=tokens, bytes_per_value=bytes_per_value, tp=tp)
        return need <= kv_pool_bytes

    low = np.zeros_like(users)
    high = np.full_like(users, float(limit_tokens))
    for _ in range(int(np.ceil(np.log2(float(limit_tokens) + 1))) + 1):  # bisection steps, not points
        mid = np.floor((low + high + 1) / 2)
        ok = fits(mid)
        low = np.where(ok, mid, low)
        high = np.where(ok, high, mid - 1)
    return np.where(fits(np.ones_like(users)), low, 0.0)


def pool_share(
    model: ModelSpec, *, context_tokens: ArrayLike, kv_pool_bytes: float, bytes_per_value: float = 2.0, tp: int = 1
) -> np.ndarray:
    """Fraction of the pool one sequence of `context_tokens` takes: sequence_kv_bytes(s) / pool.

    Seed 000: on a dashboard showing 262,144 tokens, one 128k-token user takes half
    the server (131,072 / 262,144 = 0.5 for a full-attention model). inf if the pool is
    empty or negative (the weights left no room).
    """
    sequence = sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=bytes_per_value, tp=tp)
    safe_pool = np.where(np.asarray(kv_pool_bytes) > 0, kv_pool_bytes, 1.0)
    return np.where(np.asarray(kv_pool_bytes) > 0, sequence / safe_pool, np.inf)


def pool_headroom(*, kv_pool_bytes: ArrayLike, demanded_bytes: ArrayLike) -> np.ndarray:
    """How many times the pool covers the load: pool / demanded KV bytes (≥ 1: it fits; < 1: preemptions).

    demanded = users · sequence_kv_bytes(context per user) (``kvcore.kv_cache_bytes``).
    inf when nothing is demanded; 0 when the pool is empty or negative.
    """
    pool = np.maximum(np.asarray(kv_pool_bytes, dtype=float), 0.0)
    demand = np.asarray(checks.positive("demanded KV bytes", demanded_bytes, allow_zero=True), dtype=float)
    safe_demand = np.where(demand > 0, demand, 1.0)
    return np.where(demand > 0, pool / safe_demand, np.inf)


def preemption_risk(headroom: float, *, margin: float = DEFAULT_SAFETY_MARGIN) -> str:
    """Words for the alarm: 'preempts' (headroom < 1), 'at_limit' (< 1 + margin) or 'fits'.

    Seed 000: preemptions above zero under normal load mean the sizing is at the
    limit, and latency jitters in a way users cannot explain.
    """
    checks.positive("margin", margin, allow_zero=True)
    if headroom < 1.0:
        return "preempts"
    if headroom < 1.0 + margin:
        return "at_limit"
    return "fits"
