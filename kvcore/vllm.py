"""The KV pool the way vLLM builds and reports it.

vLLM (vllm/v1/core/kv_cache_utils.py, vllm/v1/kv_cache_interface.py) turns the
memory left after weights and profiling into blocks of ``block_size`` tokens
(16 by default). One block holds block_size tokens of every KV layer. At start-up
it prints "GPU KV cache size: N tokens" (blocks · block_size) and "Maximum
concurrency for L tokens per request: X×" (pool ÷ what one request of
max_model_len needs), and refuses to start when one max_model_len request does
not fit, suggesting an estimated maximum model length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .kv import kv_bytes_per_token, layer_values_per_token
from .model import ModelSpec

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_MAX_NUM_BATCHED_TOKENS",
    "PoolReport",
    "block_bytes",
    "estimated_max_model_len",
    "max_concurrency",
    "num_blocks",
    "pool_report",
    "pool_tokens",
    "request_blocks_needed",
]

ArrayLike = Any
DEFAULT_BLOCK_SIZE = 16
#: Tokens one scheduler step may process (vLLM V1's default for ``vllm serve``; a sliding
#: window must also hold the chunk being prefilled).
DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192


def block_bytes(
    model: ModelSpec, *, block_size: int = DEFAULT_BLOCK_SIZE, bytes_per_value: float = 2.0, tp: int = 1
) -> float:
    """Bytes of one block across all KV layers: block_size · bytes_per_token (one GPU)."""
    block_size = checks.whole("block size", block_size)
    return block_size * kv_bytes_per_token(model, bytes_per_value=bytes_per_value, tp=tp)


def num_blocks(*, kv_pool_bytes: ArrayLike, block_bytes: float) -> np.ndarray:
    """Whole blocks in the pool: floor(pool / block bytes)  (vLLM ``get_num_blocks``)."""
    checks.positive("KV pool", kv_pool_bytes, allow_zero=True)
    checks.positive("block bytes", block_bytes)
    return np.floor(np.asarray(kv_pool_bytes, dtype=float) / block_bytes)


def pool_tokens(*, num_blocks: ArrayLike, block_size: int = DEFAULT_BLOCK_SIZE) -> np.ndarray:
    """'GPU KV cache size: N tokens' = blocks · block_size (all sequences together)."""
    return np.asarray(num_blocks, dtype=float) * checks.whole("block size", block_size)


def request_blocks_needed(
    model: ModelSpec,
    *,
    max_model_len: ArrayLike,
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    tp: int = 1,
) -> np.ndarray:
    """Blocks (of all-layer size) one request of `max_model_len` tokens needs.

    Full and MLA layers need ceil(L / block_size) blocks each. A sliding layer
    needs ceil(min(W − 1 + chunk, L) / block_size) + 1: the last W − 1 tokens plus
    the chunk being prefilled, never more than L, and one more block because the
    window may straddle a block boundary (vLLM ``SlidingWindowSpec.max_memory_usage_bytes``
    in vllm/v1/kv_cache_interface.py; chunk = max_num_batched_tokens). Linear layers
    need none. Weighted by each layer's share of a block's bytes.
    """
    length = np.asarray(max_model_len, dtype=float)
    checks.positive("max model length", length)
    bs = float(checks.whole("block size", block_size))
    full_blocks = np.ceil(length / bs)
    total_values = 0.0
    needed = np.zeros_like(length)
    for layer, n in model.layer_counts().items():
        values = n * layer_values_per_token(layer, tp=tp)
        total_values += values
        if layer.kind == "sliding":
            window = float(layer.sliding_window or 0)
            held = np.minimum(window - 1 + checks.whole("max_num_batched_tokens", max_num_batched_tokens), length)
            needed = needed + values * (np.ceil(held / bs) + 1)
        else:
            needed = needed + values * full_blocks
    return needed / total_values


def max_concurrency(
    model: ModelSpec,
    *,
    num_blocks: ArrayLike,
    max_model_len: ArrayLike,
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    tp: int = 1,
) -> np.ndarray:
    """'Maximum concurrency for L tokens per request': blocks / blocks one request needs.

    For full attention: num_blocks / ceil(L / block_size). vLLM issue #10517:
    1,952 blocks, L = 20,000 → 1,952 / 1,250 = 1.56×.
    """
    need = request_blocks_needed(
        model,
        max_model_len=max_model_len,
        block_size=block_size,
        max_num_batched_tokens=max_num_batched_tokens,
        tp=tp,
    )
    return np.asarray(num_blocks, dtype=float) / need


def estimated_max_model_len(
    model: ModelSpec,
    *,
    num_blocks: float,
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    tp: int = 1,
) -> int:
    """The longest request the pool can hold whole: max L with blocks_needed(L) ≤ num_blocks.

    vLLM's ``estimate_max_model_len`` does this by binary search; so do we.
    Returns 0 if not even one token fits.
    """
    low, high = 0, 1 << 34
    while low < high:
        mid = (low + high + 1) // 2
        need = request_blocks_needed(
            model, max_model_len=mid, block_size=block_size, max_num_batched_tokens=max_num_batched_tokens, tp=tp
        )
        if float(need) <= num_blocks:
            low = mid
        else:
            high = mid - 1
    return low


@dataclass(frozen=True, slots=True)
class PoolReport:
    """What vLLM would print for a pool; every field is computed by this module."""

    kv_pool_bytes: float
    bytes_per_token: float
    block_size: int
    num_blocks: int
    tokens: int
    max_model_len: int
    max_concurrency: float
    fits: bool
    estimated_max_model_len: int


def pool_report(
    model: ModelSpec,
    *,
    kv_pool_bytes: float,
    max_model_len: int,
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    bytes_per_value: float = 2.0,
    tp: int = 1,
) -> PoolReport:
    """Blocks, tokens, concurrency and the fit check for one pool (one GPU's share)."""
    per_token = kv_bytes_per_token(model, bytes_per_value=bytes_per_value, tp=tp)
    blocks = int(num_blocks(kv_pool_bytes=kv_pool_bytes, block_bytes=block_size * per_token))
    concurrency = float(
        max_concurrency(
            model,
            num_blocks=blocks,
            max_model_len=max_model_len,
            block_size=block_size,
            max_num_batched_tokens=max_num_batched_tokens,
            tp=tp,
        )
    )
    longest = estimated_max_model_len(
        model, num_blocks=blocks, block_size=block_size, max_num_batched_tokens=max_num_batched_tokens, tp=tp
    )
    return PoolReport(
        kv_pool_bytes=float(kv_pool_bytes),
        bytes_per_token=per_token,
        block_size=block_size,
        num_blocks=blocks,
        tokens=int(pool_tokens(num_blocks=blocks, block_size=block_size)),
        max_model_len=int(max_model_len),
        max_concurrency=concurrency,
        fits=concurrency >= 1.0,
        estimated_max_model_len=longest,
    )
