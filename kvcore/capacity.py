"""What a KV pool holds: tokens, context per user, the longest context, blocks, concurrency, users, GPUs.

Seed 000 ("A regra de dimensionamento"):

    simultaneous tokens = (VRAM · u − weights − overhead) / bytes per token

The numerator is :mod:`kvcore.budget`; this module divides it. The result is a total over
all live sequences; dividing it by the expected concurrency gives the average context each
user can have. vLLM (vllm/v1/core/kv_cache_utils.py, vllm/v1/kv_cache_interface.py) cuts
the same pool into blocks of ``block_size`` tokens (16 by default), prints "GPU KV cache
size: N tokens" (blocks · block_size) and "Maximum concurrency for L tokens per request:
X×", and refuses to start when one max_model_len request does not fit, suggesting an
estimated maximum model length. When the live sequences need more than the pool holds,
the scheduler preempts some of them.

Every figure is per GPU (bytes per token are one GPU's share, ``kv_bytes_per_token(tp=...)``).
Both searches here (the longest context per user, vLLM's estimated max model length) are
one vectorised search (``_largest_fitting``): 65 candidates per numpy call, about 7 rounds
for 2**40 tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .budget import DEFAULT_UTILIZATION, WHOLE_CARD, BudgetFields, MemoryBudget, seed_budget
from .kv import kv_bytes_per_token, layer_values_per_token, sequence_kv_bytes
from .model import ModelSpec

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_MAX_NUM_BATCHED_TOKENS",
    "DEFAULT_SAFETY_MARGIN",
    "NO_LIMIT_TOKENS",
    "PoolReport",
    "SizingSteps",
    "block_bytes",
    "context_per_user",
    "estimated_max_model_len",
    "gpus_needed",
    "longest_fitting_length",
    "max_concurrency",
    "max_context_tokens",
    "max_users",
    "num_blocks",
    "pool_headroom",
    "pool_report",
    "pool_share",
    "pool_tokens",
    "preemption_risk",
    "request_blocks_needed",
    "sizing_steps",
    "tokens_that_fit",
]

ArrayLike = Any

DEFAULT_BLOCK_SIZE = 16
#: Tokens one scheduler step may process (vLLM V1's default for ``vllm serve``; a sliding
#: window must also hold the chunk being prefilled).
DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192

#: Free share of the pool below which a load that still fits is called "at the limit".
#: Every running sequence grows by one token per step and new requests arrive, so a
#: pool filled to the brim preempts at the next burst (a rule of thumb, not a vLLM setting).
DEFAULT_SAFETY_MARGIN = 0.10

#: Upper end of the search for the longest context that fits (2**40 tokens: "no limit").
NO_LIMIT_TOKENS = 1 << 40
#: Upper end of vLLM's ``estimate_max_model_len`` search here (2**34 tokens).
_MODEL_LEN_LIMIT = 1 << 34
#: Candidates evaluated per round of the search (evenly spaced, ends included).
_SEARCH_POINTS = 65


# ---------------------------------------------------------------- tokens and users


def tokens_that_fit(*, kv_pool_bytes: ArrayLike, bytes_per_token: float) -> np.ndarray:
    """Tokens the pool holds, summed over every live sequence: floor(max(pool, 0) / bytes per token).

    This is the dashboard's "max context" (vLLM's "GPU KV cache size: N tokens", before
    rounding to whole blocks): an aggregate, not the limit of one conversation (seed 000).

    >>> float(tokens_that_fit(kv_pool_bytes=32 * 2**30, bytes_per_token=131072))
    262144.0
    """
    checks.positive("bytes per token", bytes_per_token)
    return np.floor(np.maximum(np.asarray(kv_pool_bytes, dtype=float), 0.0) / bytes_per_token)


def context_per_user(*, pool_tokens: ArrayLike, concurrency: ArrayLike) -> np.ndarray:
    """Average context per user by the seed's rule: floor(pool tokens / concurrent users)  [tokens].

    A hyperbola in the number of users (seed 000: "divide by the expected concurrency").

    >>> context_per_user(pool_tokens=262144, concurrency=[1, 2, 4]).tolist()
    [262144.0, 131072.0, 65536.0]
    """
    checks.positive("concurrency", concurrency)
    return np.floor(np.asarray(pool_tokens, dtype=float) / np.asarray(concurrency, dtype=float))


def max_users(*, kv_pool_bytes: ArrayLike, sequence_bytes: ArrayLike) -> np.ndarray:
    """Whole sequences of a given size that fit in the pool: floor(max(pool, 0) / sequence bytes).

    A 12 GB card with a 9 GB model and 20k-token PDFs at 128 KiB/token holds one
    (2.5 GiB each) and not two (seed 000's OOM story).

    >>> float(max_users(kv_pool_bytes=3 * 2**30, sequence_bytes=2.5 * 2**30))
    1.0
    """
    checks.positive("sequence bytes", sequence_bytes)
    return np.floor(np.maximum(np.asarray(kv_pool_bytes, dtype=float), 0.0) / np.asarray(sequence_bytes, dtype=float))


def max_context_tokens(
    model: ModelSpec,
    *,
    kv_pool_bytes: ArrayLike,
    concurrency: ArrayLike = 1,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    limit_tokens: int = NO_LIMIT_TOKENS,
) -> np.ndarray:
    """Longest context each of B users can hold at once: max whole s ≤ limit with B · sequence_kv_bytes(s) ≤ pool.

    For full-attention and MLA models this equals floor(pool tokens / B) (the seed's rule).
    Sliding-window layers stop growing at the window and linear-attention layers keep a
    fixed state, so for those models a sequence costs less than s · bytes per token and
    the real answer is longer; a linear state can also make it shorter (it is paid even by
    a one-token sequence). `limit_tokens` when nothing grows with s, 0 when not even one
    token fits. Pool and concurrency broadcast; one vectorised search for every point.
    Source: kvcore.kv.sequence_kv_bytes; seed 000.

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
    >>> max_context_tokens(m, kv_pool_bytes=32 * 2**30, concurrency=[1, 2, 4]).tolist()
    [262144.0, 131072.0, 65536.0]
    """
    users = np.asarray(checks.positive("concurrency", concurrency), dtype=float)
    pool = np.asarray(kv_pool_bytes, dtype=float)
    checks.whole("token limit", limit_tokens)
    users, pool = np.broadcast_arrays(users, pool)

    def fits(tokens: np.ndarray) -> np.ndarray:
        extra = (np.newaxis,) * (tokens.ndim - users.ndim)
        need = users[(..., *extra)] * sequence_kv_bytes(
            model, context_tokens=tokens, bytes_per_value=bytes_per_value, tp=tp
        )
        return np.asarray(need <= pool[(..., *extra)])

    return _largest_fitting(fits, shape=users.shape, high=float(limit_tokens))


def gpus_needed(
    *, total_bytes: ArrayLike, memory_bytes: float, utilization: float = WHOLE_CARD.utilization
) -> np.ndarray:
    """GPUs whose usable memory adds up to `total_bytes`: ceil(total / (memory per GPU · u)).

    u defaults to the whole card (``budget.WHOLE_CARD``): the fewest GPUs that can hold the bytes at all.

    Bytes only: tensor parallelism also replicates some parts and every GPU needs its own
    overhead, so real deployments need at least this many (a floor, not a plan). Seed 002:
    Llama 3 70B in FP16 with a 128k MHA cache, about 460 GB, on 80 GB H100s: 6. Seed 004:
    Llama 3.1 70B in BF16 (141.1 GB) + 1M tokens of BF16 cache (327.68 GB) = 468.78 GB
    on 80 GiB H100s: 5.46 → 6 ("de 6 a 8 GPUs").

    >>> gpus_needed(total_bytes=[0.0, 80.0, 80.5], memory_bytes=80.0).tolist()
    [0.0, 1.0, 2.0]
    """
    checks.positive("total", total_bytes, allow_zero=True)
    checks.positive("GPU memory", memory_bytes)
    checks.fraction("usable share of GPU memory", utilization)
    return np.ceil(np.asarray(total_bytes, dtype=float) / (memory_bytes * utilization))


# ---------------------------------------------------------------- the seed's rule, step by step


@dataclass(frozen=True, slots=True, kw_only=True)
class SizingSteps(BudgetFields):
    """Seed 000's sizing rule for one GPU, one step per field.

    ``budget`` is the seed's view of :class:`kvcore.budget.MemoryBudget` (weights and one
    overhead); its parts add up to the card: ``held_back_bytes + weights_bytes +
    overhead_bytes + kv_pool_bytes == memory_bytes`` (a negative pool means the weights and
    overhead do not fit in VRAM · u). Tokens are summed over all sequences. The budget's
    figures (memory, u, weights, overhead, pool) read through :class:`kvcore.budget.BudgetFields`.
    """

    budget: MemoryBudget
    bytes_per_token: float
    pool_tokens: float
    concurrency: int
    tokens_per_user: float

    @property
    def fits(self) -> bool:
        """True when weights and overhead leave a pool of at least one token."""
        return self.pool_tokens >= 1


def sizing_steps(
    model: ModelSpec,
    *,
    memory_bytes: float,
    utilization: float = DEFAULT_UTILIZATION,
    weights_bytes: float,
    overhead_bytes: float = 0.0,
    concurrency: int = 1,
    bytes_per_value: float = 2.0,
    tp: int = 1,
) -> SizingSteps:
    """Every step of the seed's rule on one GPU of `tp`: VRAM → · u → − weights → − overhead → ÷ bytes/token → ÷ users.

    Formulas: pool = VRAM · u − weights − overhead [bytes] (``kvcore.budget.seed_budget``);
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
    users = checks.whole("concurrency", concurrency)
    budget = seed_budget(
        memory_bytes=memory_bytes, utilization=utilization, weights_bytes=weights_bytes, overhead_bytes=overhead_bytes
    )
    per_token = kv_bytes_per_token(model, bytes_per_value=bytes_per_value, tp=tp)
    tokens = float(tokens_that_fit(kv_pool_bytes=budget.kv_pool_bytes, bytes_per_token=per_token))
    return SizingSteps(
        budget=budget,
        bytes_per_token=per_token,
        pool_tokens=tokens,
        concurrency=users,
        tokens_per_user=float(context_per_user(pool_tokens=tokens, concurrency=users)),
    )


# ---------------------------------------------------------------- load against the pool


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


# ---------------------------------------------------------------- vLLM's blocks


def block_bytes(
    model: ModelSpec, *, block_size: int = DEFAULT_BLOCK_SIZE, bytes_per_value: float = 2.0, tp: int = 1
) -> float:
    """Bytes of one block across all KV layers: block_size · bytes_per_token (one GPU).

    Llama 3.1 8B in BF16, 16 tokens: 16 · 131,072 B = 2 MiB.
    """
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
    chunk = checks.whole("max_num_batched_tokens", max_num_batched_tokens)
    full_blocks = np.ceil(length / bs)
    total_values = 0.0
    needed = np.zeros_like(length)
    for layer, n in model.layer_counts().items():
        values = n * layer_values_per_token(layer, tp=tp)
        total_values += values
        if layer.kind == "sliding":
            held = np.minimum(float(layer.sliding_window or 0) - 1 + chunk, length)
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

    vLLM's ``estimate_max_model_len`` does this by binary search; here it is the same
    search as ``max_context_tokens``. 0 if not even one token fits.

    >>> from kvcore.model import uniform_model
    >>> estimated_max_model_len(uniform_model(num_hidden_layers=2, num_key_value_heads=1, head_dim=8), num_blocks=3)
    48
    """
    blocks = float(num_blocks)

    def fits(length: np.ndarray) -> np.ndarray:
        need = request_blocks_needed(
            model, max_model_len=length, block_size=block_size, max_num_batched_tokens=max_num_batched_tokens, tp=tp
        )
        return np.asarray(need <= blocks)

    return longest_fitting_length(fits)


def longest_fitting_length(fits: Callable[[np.ndarray], np.ndarray]) -> int:
    """The longest request length (tokens) for which `fits` holds: vLLM's ``estimate_max_model_len`` search.

    `fits` takes an array of candidate lengths and must be true, then false, as they grow; the
    search is this module's vectorised one, up to 2**34 tokens. 0 if not even one token fits.
    """
    return int(_largest_fitting(fits, shape=(), high=float(_MODEL_LEN_LIMIT)))


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
    """Blocks, tokens, concurrency and the fit check for one pool (one GPU's share).

    blocks = floor(pool / block bytes); tokens = blocks · block_size; concurrency =
    blocks / blocks per request; fits when concurrency ≥ 1 (vLLM ``kv_cache_utils.py``:
    ``get_num_blocks``, ``get_max_concurrency_for_kv_cache_config``, ``check_enough_kv_cache_memory``).
    """
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


# ---------------------------------------------------------------- the one search


def _largest_fitting(
    fits: Callable[[np.ndarray], np.ndarray], *, shape: tuple[int, ...], high: float, low: float = 1.0
) -> np.ndarray:
    """Largest whole x in [low, high] with fits(x), for every point of `shape`; 0 where fits(low) is false.

    `fits` takes an array of candidates whose leading axes are `shape` (one more axis of
    candidates) and must be monotone (true, then false, as x grows): a cache never shrinks
    as the context grows. Each round evaluates 65 evenly spaced whole candidates at once
    and keeps the gap where the fit ends, so an interval of 2**40 shrinks to one number in
    about 7 rounds.
    """
    lo = np.full(shape, float(low))
    hi = np.full(shape, float(high))
    first = np.asarray(fits(lo[..., np.newaxis]))[..., 0]
    steps = np.linspace(0.0, 1.0, _SEARCH_POINTS)
    while np.any(lo < hi):
        candidates = np.round(lo[..., np.newaxis] + (hi - lo)[..., np.newaxis] * steps)
        fitting = np.asarray(fits(candidates))
        last = np.maximum(fitting.sum(axis=-1) - 1, 0)  # candidates[0] = lo fits, and the fit is monotone
        found = np.take_along_axis(candidates, last[..., np.newaxis], axis=-1)[..., 0]
        after = np.take_along_axis(candidates, np.minimum(last + 1, _SEARCH_POINTS - 1)[..., np.newaxis], axis=-1)
        lo = found
        hi = np.where(last == _SEARCH_POINTS - 1, found, after[..., 0] - 1)
    return np.where(first, lo, 0.0)
