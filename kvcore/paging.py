"""Where the KV pool goes: contiguous reservation, PagedAttention blocks, shared prefixes.

Kwon et al. 2023, "Efficient Memory Management for Large Language Model Serving
with PagedAttention" (SOSP '23, the vLLM paper): systems that reserve one
contiguous slab of max_model_len tokens per request use only 20.4–38.2 % of
their KV memory for real token states (§2.3, Fig. 2), i.e. 60–80 % is wasted;
vLLM hands out blocks of block_size tokens on demand, so a request wastes at
most the empty tail of its last block, under 4 % in the paper's runs.

Prefix caching (vLLM, vllm/v1/core/kv_cache_utils.py ``hash_request_tokens`` /
``hash_block_tokens``) gives each FULL block a hash of its tokens chained to its
parent block's hash; a partial block is never hashed ("Do not hash the block if
it is not full"), so requests sharing a P-token prefix share floor(P / block_size)
blocks, and the prefix's partial last block is stored once per request.

Provider prompt caching (Anthropic, OpenAI) bills the same idea: a byte-identical
prefix read from the cache costs a fraction of the input price (Anthropic 0.1×;
OpenAI 0.5×, 0.25× or 0.1× by model), a write costs the normal price (OpenAI) or
more (Anthropic: 1.25× for its 5-minute cache, 2× for 1 hour), a prefix shorter
than the provider's minimum is never cached (1,024 tokens at OpenAI; 1,024 to
4,096 by model at Anthropic), and an entry unused for the TTL (minutes) expires,
so the next request writes again.

Lengths are token counts per request (numpy arrays, one entry per request);
all arithmetic is vectorised over requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from . import checks
from .capacity import DEFAULT_BLOCK_SIZE
from .errors import KvError
from .model import ModelSpec
from .timing import prefill_flops, prefill_time_s

__all__ = [
    "PROVIDER_MIN_CACHEABLE_TOKENS",
    "SCHEMES",
    "AllocationReport",
    "BlockMap",
    "PrefixMemory",
    "PrefixPrefill",
    "PromptCacheCost",
    "allocation_report",
    "block_map",
    "cached_prefix_tokens",
    "fit_gain",
    "prefix_memory",
    "prefix_prefill",
    "prompt_cache_cost",
    "request_lengths_tokens",
    "requests_that_fit",
    "reserved_tokens",
    "shared_prefix_blocks",
]

ArrayLike = Any
Scheme = Literal["contiguous", "paged"]
SCHEMES: tuple[Scheme, ...] = ("contiguous", "paged")


# --- Part 3: contiguous reservation against blocks on demand -------------------------------------------


def request_lengths_tokens(
    n_requests: int, *, mean_tokens: float, spread: float, max_model_len: int, seed: int = 0
) -> np.ndarray:
    """Seeded request lengths: lognormal with the given mean and spread, rounded, clipped to [1, max_model_len].

    Formula: spread is the coefficient of variation (std / mean) before clipping;
    σ² = ln(1 + spread²), μ = ln(mean) − σ²/2, length = clip(round(e^(μ + σ·z)), 1, L_max)
    with z ~ N(0, 1) from ``numpy.random.default_rng(seed)``. spread = 0 gives every
    request the mean. Clipping long requests pulls the mean slightly down. Units: tokens.
    Lognormal because real prompt and output lengths are skewed to the right
    (ShareGPT in Kwon et al. 2023, Fig. 11).

    >>> request_lengths_tokens(3, mean_tokens=100, spread=0, max_model_len=2048)
    array([100, 100, 100])
    """
    n = checks.whole("number of requests", n_requests)
    checks.positive("mean length", mean_tokens)
    checks.positive("spread", spread, allow_zero=True)
    max_len = checks.whole("max model length", max_model_len)
    sigma = np.sqrt(np.log1p(float(spread) ** 2))
    mu = np.log(float(mean_tokens)) - sigma**2 / 2
    z = np.random.default_rng(seed).standard_normal(n)
    return np.clip(np.rint(np.exp(mu + sigma * z)), 1, max_len).astype(np.int64)


def reserved_tokens(
    lengths_tokens: ArrayLike, *, scheme: Scheme, max_model_len: int, block_size: int = DEFAULT_BLOCK_SIZE
) -> np.ndarray:
    """Token slots each request holds: max_model_len (contiguous) or ceil(length / block_size) · block_size (paged).

    Contiguous (Orca, FasterTransformer in the paper): the whole maximum is reserved
    up front, whatever the request ends up using. Paged (vLLM): blocks are taken
    one at a time as tokens arrive. Units: tokens, one entry per request.

    >>> reserved_tokens([1, 16, 17], scheme="paged", max_model_len=2048)
    array([16, 16, 32])
    """
    lengths = _lengths(lengths_tokens, max_model_len)
    bs = checks.whole("block size", block_size)
    if scheme == "contiguous":
        return np.full_like(lengths, max_model_len)
    if scheme == "paged":
        return -(-lengths // bs) * bs
    raise KvError(
        "unknown_scheme",
        f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}",
        value=str(scheme),
        known=", ".join(SCHEMES),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class AllocationReport:
    """Token slots a set of requests holds, split into used and wasted (used + wasted = reserved)."""

    scheme: Scheme
    used_tokens: int
    wasted_tokens: int
    bytes_per_token: float

    @property
    def reserved_tokens(self) -> int:
        """Slots held: used + wasted."""
        return self.used_tokens + self.wasted_tokens

    @property
    def waste_fraction(self) -> float:
        """Share of the held slots that hold no token: wasted / reserved (0 when nothing is held)."""
        return self.wasted_tokens / self.reserved_tokens if self.reserved_tokens else 0.0

    @property
    def waste_to_used(self) -> float:
        """Wasted slots per used slot: wasted / used (the paper's "under 4 %" reads either way)."""
        return self.wasted_tokens / self.used_tokens if self.used_tokens else 0.0

    @property
    def used_bytes(self) -> float:
        """used_tokens · bytes_per_token."""
        return self.used_tokens * self.bytes_per_token

    @property
    def waste_bytes(self) -> float:
        """wasted_tokens · bytes_per_token."""
        return self.wasted_tokens * self.bytes_per_token

    @property
    def reserved_bytes(self) -> float:
        """reserved_tokens · bytes_per_token."""
        return self.reserved_tokens * self.bytes_per_token


def allocation_report(
    lengths_tokens: ArrayLike,
    *,
    scheme: Scheme,
    max_model_len: int,
    block_size: int = DEFAULT_BLOCK_SIZE,
    bytes_per_token: float = 1.0,
) -> AllocationReport:
    """Used, wasted and reserved slots (and bytes) of all requests under one scheme.

    Formula: used = Σ length; reserved = Σ reserved_tokens; wasted = reserved − used.
    Contiguous waste is 1 − mean(length) / max_model_len and does not depend on the
    block size; paged waste is below block_size tokens per request. bytes_per_token
    comes from ``kv_bytes_per_token(model)`` (= ``block_bytes(model) / block_size``).
    Only reservation and internal fragmentation are counted: the external
    fragmentation a contiguous allocator also suffers as requests come and go
    (Kwon et al. 2023, Fig. 3) is not modelled, so contiguous waste is a lower bound.

    >>> allocation_report([512, 512], scheme="contiguous", max_model_len=2048).waste_fraction
    0.75
    """
    lengths = _lengths(lengths_tokens, max_model_len)
    checks.positive("bytes per token", bytes_per_token)
    held = reserved_tokens(lengths, scheme=scheme, max_model_len=max_model_len, block_size=block_size)
    used = int(lengths.sum())
    return AllocationReport(
        scheme=scheme, used_tokens=used, wasted_tokens=int(held.sum()) - used, bytes_per_token=float(bytes_per_token)
    )


def requests_that_fit(
    *,
    pool_tokens: ArrayLike,
    lengths_tokens: ArrayLike,
    scheme: Scheme,
    max_model_len: int,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> np.ndarray:
    """How many of the given requests, taken in order, fit whole in a pool of `pool_tokens` slots.

    Formula: the largest k with Σ_{i<k} reserved_tokens_i ≤ pool (a running sum;
    contiguous: min(n, floor(pool / max_model_len))). `pool_tokens` may be an array
    (one count per pool size); vLLM prints the pool as "GPU KV cache size: N tokens".
    """
    checks.positive("pool", pool_tokens, allow_zero=True)
    held = reserved_tokens(lengths_tokens, scheme=scheme, max_model_len=max_model_len, block_size=block_size)
    return np.searchsorted(np.cumsum(held), np.asarray(pool_tokens, dtype=float), side="right")


def fit_gain(
    *, pool_tokens: ArrayLike, lengths_tokens: ArrayLike, max_model_len: int, block_size: int = DEFAULT_BLOCK_SIZE
) -> np.ndarray:
    """How many times more requests fit paged than contiguous: fit(paged) / fit(contiguous).

    inf when not even one contiguous reservation fits; capped by the number of
    requests given (pass enough of them to fill the paged pool).
    """
    common = {"pool_tokens": pool_tokens, "lengths_tokens": lengths_tokens, "max_model_len": max_model_len}
    paged = requests_that_fit(scheme="paged", block_size=block_size, **common).astype(float)
    contiguous = requests_that_fit(scheme="contiguous", block_size=block_size, **common).astype(float)
    return np.where(contiguous > 0, paged / np.maximum(contiguous, 1.0), np.inf)


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockMap:
    """A pool drawn as rows of blocks × slots: which request holds each slot, and which slots hold tokens."""

    owner: np.ndarray  # int, shape (pool_blocks, block_size): request index, −1 for a free slot
    used: np.ndarray  # bool, same shape: the slot holds one of its request's tokens
    requests_placed: int  # whole requests that fit, in order

    @property
    def reserved_unused(self) -> np.ndarray:
        """Slots a request holds but no token fills: owner ≥ 0 and not used (the waste)."""
        return (self.owner >= 0) & ~self.used

    @property
    def free(self) -> np.ndarray:
        """Slots no request holds (still available to the next request)."""
        return self.owner < 0


def block_map(
    lengths_tokens: ArrayLike,
    *,
    scheme: Scheme,
    max_model_len: int,
    pool_blocks: int,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> BlockMap:
    """Lay the requests, in order, into a pool of `pool_blocks` blocks and report every slot.

    Slot s (row s // block_size, column s % block_size) belongs to request i when
    start_i ≤ s < start_i + reserved_i (start = running sum of the reservations)
    and is used when s − start_i < length_i. Requests that do not fit whole are
    left out. vLLM's blocks need not be adjacent; drawing each request's blocks
    together is only for the picture (the amounts are the same).

    >>> block_map([3], scheme="paged", max_model_len=8, pool_blocks=2, block_size=4).owner.tolist()
    [[0, 0, 0, 0], [-1, -1, -1, -1]]
    """
    lengths = _lengths(lengths_tokens, max_model_len)
    bs = checks.whole("block size", block_size)
    slots_total = checks.whole("pool blocks", pool_blocks) * bs
    held = reserved_tokens(lengths, scheme=scheme, max_model_len=max_model_len, block_size=bs)
    ends = np.cumsum(held)
    placed = int(np.searchsorted(ends, slots_total, side="right"))
    slots = np.arange(slots_total)
    index = np.searchsorted(ends[:placed], slots, side="right")
    inside = index < placed
    safe = np.minimum(index, len(lengths) - 1)  # any valid index; masked by `inside`
    offset = slots - (ends - held)[safe]
    used = inside & (offset < lengths[safe])
    owner = np.where(inside, index, -1)
    return BlockMap(owner=owner.reshape(-1, bs), used=used.reshape(-1, bs), requests_placed=placed)


def _lengths(lengths_tokens: ArrayLike, max_model_len: int) -> np.ndarray:
    """Validated 1-D integer lengths in [1, max_model_len]."""
    max_len = checks.whole("max model length", max_model_len)
    lengths = np.atleast_1d(np.asarray(lengths_tokens))
    checks.positive("request length", lengths)
    if lengths.size == 0:
        raise KvError("no_requests", "give at least one request length")
    if lengths.ndim != 1 or np.any(lengths != np.round(lengths)):
        raise KvError("lengths_not_whole", "request lengths must be a list of whole numbers of tokens")
    if np.any(lengths > max_len):
        raise KvError(
            "request_too_long",
            f"a request of {int(lengths.max())} tokens is longer than max model length {max_len}",
            tokens=int(lengths.max()),
            max_model_len=max_len,
        )
    return lengths.astype(np.int64)


def _block_sizes(block_size: ArrayLike) -> np.ndarray:
    """Validated block size(s) as floats: whole numbers ≥ 1 (a number or an array)."""
    sizes = np.asarray(checks.positive("block size", block_size), dtype=float)
    if np.any(sizes != np.round(sizes)):
        raise KvError(
            "not_whole",
            f"block size must be a whole number of tokens, got {block_size!r}",
            name="block size",
            value=float(sizes[sizes != np.round(sizes)].flat[0]),
            minimum=1,
        )
    return sizes


# --- Part 4: prefix caching -------------------------------------------------------------------------


def shared_prefix_blocks(prefix_tokens: ArrayLike, *, block_size: ArrayLike = DEFAULT_BLOCK_SIZE) -> np.ndarray:
    """Blocks of a common prefix that requests can share: floor(P / block_size).

    Only full blocks are hashed and shared (vLLM vllm/v1/core/kv_cache_utils.py
    ``hash_request_tokens``); the prefix's partial last block is stored per request.

    >>> shared_prefix_blocks([2000, 2000, 15], block_size=[16, 48, 16]).tolist()
    [125.0, 41.0, 0.0]
    """
    checks.positive("prefix tokens", prefix_tokens, allow_zero=True)
    return np.floor(np.asarray(prefix_tokens, dtype=float) / _block_sizes(block_size))


def cached_prefix_tokens(
    *, prefix_tokens: ArrayLike, suffix_tokens: ArrayLike, block_size: ArrayLike = DEFAULT_BLOCK_SIZE
) -> np.ndarray:
    """Tokens a later request finds in the cache: block_size · floor(min(P, P + S − 1) / block_size).

    = P − (P mod block_size) whenever the request adds at least one token of its
    own (S ≥ 1). When the prompt is the prefix alone, vLLM still recomputes the last
    token to get its logits (``get_computed_blocks`` caps the hit at prompt − 1),
    which can cost one more block.
    """
    checks.positive("suffix tokens", suffix_tokens, allow_zero=True)
    prompt = np.asarray(prefix_tokens, dtype=float) + np.asarray(suffix_tokens, dtype=float)
    hit = np.minimum(np.asarray(prefix_tokens, dtype=float), prompt - 1)
    return shared_prefix_blocks(np.maximum(hit, 0), block_size=block_size) * np.asarray(block_size, dtype=float)


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixMemory:
    """Blocks B requests hold with and without sharing their prefix (saved = without − with)."""

    blocks_without: np.ndarray
    blocks_with: np.ndarray
    block_bytes: np.ndarray

    @property
    def saved_blocks(self) -> np.ndarray:
        """blocks_without − blocks_with = (B − 1) · cached blocks."""
        return self.blocks_without - self.blocks_with

    @property
    def saved_bytes(self) -> np.ndarray:
        """saved_blocks · block_bytes."""
        return self.saved_blocks * self.block_bytes

    @property
    def saved_fraction(self) -> np.ndarray:
        """saved_blocks / blocks_without."""
        return self.saved_blocks / self.blocks_without


def prefix_memory(
    *,
    prefix_tokens: ArrayLike,
    suffix_tokens: ArrayLike,
    requests: ArrayLike,
    block_size: ArrayLike = DEFAULT_BLOCK_SIZE,
    bytes_per_token: float = 1.0,
) -> PrefixMemory:
    """KV blocks of B requests that share a P-token prefix and add S tokens each.

    Formula: without = B · ceil((P + S) / bs); with = H + B · (ceil((P + S) / bs) − H),
    H = cached_prefix_tokens / bs (full blocks only); saved = (B − 1) · H blocks of
    bs · bytes_per_token bytes (``kv_bytes_per_token(model)``). Seed 002: 100 requests
    sharing a 2,000-token system prompt, bs = 16: H = 125, saved = 99 · 125 blocks.
    Counts every layer as full attention (sliding layers would drop old prefix blocks).
    """
    b = np.asarray(checks.positive("requests", requests), dtype=float)
    bs = _block_sizes(block_size)
    checks.positive("bytes per token", bytes_per_token)
    prompt = np.asarray(prefix_tokens, dtype=float) + np.asarray(suffix_tokens, dtype=float)
    per_request = np.ceil(prompt / bs)
    shared = cached_prefix_tokens(prefix_tokens=prefix_tokens, suffix_tokens=suffix_tokens, block_size=bs) / bs
    return PrefixMemory(
        blocks_without=b * per_request,
        blocks_with=shared + b * (per_request - shared),
        block_bytes=bs * float(bytes_per_token),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixPrefill:
    """Prefill work of B requests with and without reusing the cached prefix."""

    flops_without: np.ndarray
    flops_with: np.ndarray
    ttft_without_s: np.ndarray  # one request that computes its whole prompt
    ttft_with_s: np.ndarray  # one request that finds the prefix cached
    peak_flop_per_s: float
    gpus: int
    mfu: float

    @property
    def saved_flops(self) -> np.ndarray:
        """flops_without − flops_with = (B − 1) · prefill_flops(cached tokens)."""
        return self.flops_without - self.flops_with

    @property
    def saved_s(self) -> np.ndarray:
        """GPU time saved over all B requests: saved FLOPs / (peak · GPUs · MFU)."""
        return prefill_time_s(self.saved_flops, peak_flop_per_s=self.peak_flop_per_s, gpus=self.gpus, mfu=self.mfu)

    @property
    def ttft_saved_s(self) -> np.ndarray:
        """Time to first token each cache hit saves: ttft_without − ttft_with."""
        return self.ttft_without_s - self.ttft_with_s


def prefix_prefill(
    model: ModelSpec,
    *,
    prefix_tokens: ArrayLike,
    suffix_tokens: ArrayLike,
    requests: ArrayLike,
    peak_flop_per_s: float,
    block_size: ArrayLike = DEFAULT_BLOCK_SIZE,
    gpus: int = 1,
    mfu: float = 1.0,
) -> PrefixPrefill:
    """Prefill FLOPs and TTFT with and without prefix caching.

    Formula: F(n) = ``prefill_flops(n)``; a request that finds H tokens cached
    computes only its last n − H queries, F(n) − F(H) (each query's work depends on
    its position only). Without caching: B · F(P + S); with: B · F(P + S) − (B − 1) · F(H)
    (the first request fills the cache). TTFT = ``prefill_time_s`` of one request's
    FLOPs (nothing else queued), so the saving is the compute of the cached tokens.
    """
    b = np.asarray(checks.positive("requests", requests), dtype=float)
    prompt = np.asarray(prefix_tokens, dtype=float) + np.asarray(suffix_tokens, dtype=float)
    hit = cached_prefix_tokens(prefix_tokens=prefix_tokens, suffix_tokens=suffix_tokens, block_size=block_size)
    full = prefill_flops(model, prompt_tokens=prompt)
    cached = np.where(hit > 0, prefill_flops(model, prompt_tokens=np.maximum(hit, 1)), 0.0)

    def seconds(flops: np.ndarray) -> np.ndarray:
        return prefill_time_s(flops, peak_flop_per_s=peak_flop_per_s, gpus=gpus, mfu=mfu)

    return PrefixPrefill(
        flops_without=b * full,
        flops_with=b * full - (b - 1) * cached,
        ttft_without_s=seconds(full),
        ttft_with_s=seconds(full - cached),
        peak_flop_per_s=float(peak_flop_per_s),
        gpus=int(gpus),
        mfu=float(mfu),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptCacheCost:
    """Input cost of B requests with and without provider prompt caching (same currency as the price)."""

    cache_writes: np.ndarray  # requests that pay a cache write (the first, and any after the TTL lapsed)
    cache_reads: np.ndarray
    cost_without_usd: np.ndarray
    cost_with_usd: np.ndarray

    @property
    def saved_usd(self) -> np.ndarray:
        """cost_without − cost_with (negative when writes cost more than the reads save)."""
        return self.cost_without_usd - self.cost_with_usd

    @property
    def saved_fraction(self) -> np.ndarray:
        """saved / cost_without."""
        return self.saved_usd / self.cost_without_usd


#: The shortest prompt a provider caches [tokens]: OpenAI caches prompts of 1,024 tokens or more
#: (platform.openai.com prompt-caching guide, "How it works"); Anthropic's minimum per cached block is
#: 1,024 tokens on most models and 2,048 or 4,096 on some (docs.anthropic.com, prompt caching, "Cache limitations").
PROVIDER_MIN_CACHEABLE_TOKENS = 1024


def prompt_cache_cost(
    *,
    prefix_tokens: ArrayLike,
    suffix_tokens: ArrayLike,
    requests: ArrayLike,
    input_usd_per_mtok: ArrayLike,
    interval_s: ArrayLike = 0.0,
    ttl_s: ArrayLike = 300.0,
    cache_write_multiplier: ArrayLike = 1.0,
    cache_read_multiplier: ArrayLike = 0.10,
    min_cacheable_tokens: ArrayLike = 0,
) -> PromptCacheCost:
    """What B requests, one every `interval_s`, pay for their input with and without prompt caching.

    Formula (p = price per token): without = B · (P + S) · p;
    with = writes · P · p · w + reads · P · p · r + B · S · p, where
    writes = 1 + (B − 1) · [interval > TTL] and reads = B − writes. Each cache hit
    refreshes the TTL (Anthropic's prompt-caching docs), so with a steady interval
    either every later request reads or none does. Defaults follow seed 002: write
    at the normal price (w = 1), read at ~10 % (r = 0.1), TTL ~5 min. Anthropic bills
    5-minute writes at w = 1.25 (1-hour writes at 2). A prefix shorter than
    `min_cacheable_tokens` (the provider's minimum, ``PROVIDER_MIN_CACHEABLE_TOKENS``) is
    never cached: no writes, no reads, every request pays the whole prefix (with = without).
    Seed 002, prefix only: 1 + 99 · 0.1 = 10.9 prefix-prices instead of 100.
    """
    b = np.asarray(checks.positive("requests", requests), dtype=float)
    checks.positive("input price", input_usd_per_mtok, allow_zero=True)
    checks.positive("interval", interval_s, allow_zero=True)
    checks.positive("TTL", ttl_s, allow_zero=True)
    checks.positive("cache write multiplier", cache_write_multiplier, allow_zero=True)
    checks.positive("cache read multiplier", cache_read_multiplier, allow_zero=True)
    prefix = np.asarray(checks.positive("prefix tokens", prefix_tokens, allow_zero=True), dtype=float)
    suffix = np.asarray(checks.positive("suffix tokens", suffix_tokens, allow_zero=True), dtype=float)
    per_token = np.asarray(input_usd_per_mtok, dtype=float) / 1e6
    minimum = np.asarray(checks.positive("minimum cacheable prefix", min_cacheable_tokens, allow_zero=True))
    expired = np.asarray(interval_s, dtype=float) > np.asarray(ttl_s, dtype=float)
    cacheable = prefix >= minimum
    writes = np.where(cacheable, 1.0 + (b - 1.0) * expired, 0.0)
    reads = np.where(cacheable, b - writes, 0.0)
    prefix_cost = np.where(
        cacheable,
        prefix * per_token * (writes * cache_write_multiplier + reads * cache_read_multiplier),
        b * prefix * per_token,
    )
    return PromptCacheCost(
        cache_writes=writes,
        cache_reads=reads,
        cost_without_usd=b * (prefix + suffix) * per_token,
        cost_with_usd=prefix_cost + b * suffix * per_token,
    )
