"""What a decode step reads: the query used once, every cached K and V read again, and attention that reads less.

Why Q is not cached (course seed 002, "GQA e MQA": K and V are what a cache keeps):
generating with a cache, step t projects the new token's q, k and v once; its q meets
the keys of tokens 1 … t and is never needed again, while the k and v it wrote are read
by step t and by every later step. A cached query would be bytes nobody reads.

Trained sparse attention (seed 004, "O que dá para fazer hoje": "DuoAttention, NSA da
DeepSeek, MoBA, SeerAttention"): models trained, or given a trained gate, to read only
part of the cache at each step. Most of them keep every token's K and V in memory and
cut the bytes *read* per step (bandwidth, time); DuoAttention also cuts the bytes
*stored*, by giving most heads a short cache. Each method's settings are its paper's or
its reference code's, named in the function that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .errors import KvError
from .kv import kv_cache_bytes
from .model import ModelSpec

__all__ = [
    "DSA_INDEX_TOPK_TOKENS",
    "DUO_RECENT_TOKENS",
    "DUO_RETRIEVAL_FRACTION_GQA",
    "DUO_SINK_TOKENS",
    "MOBA_BLOCK_TOKENS",
    "MOBA_TOP_K",
    "NSA_SETTINGS",
    "SEER_TOKEN_BUDGET",
    "NsaSettings",
    "SparseCache",
    "duo_attention_cache_bytes",
    "kv_reads_of_token",
    "moba_tokens_read",
    "nsa_tokens_read",
    "query_bytes_per_token",
    "query_reads_of_token",
    "token_budget_read",
    "trained_sparse_attention",
]

ArrayLike = Any

# ---------------------------------------------------------------- why the query is not cached


def kv_reads_of_token(position: ArrayLike, *, generated_tokens: ArrayLike) -> np.ndarray:
    """Decode steps that read the K and V of token p when N tokens are generated with a cache: N − p + 1.

    Token p's K and V are written at step p and read by step p and by each of the
    N − p later steps (every step attends to all tokens so far). 0 when p > N (not
    generated yet). The first token of N = 1,000 is read 1,000 times.

    >>> int(kv_reads_of_token(1, generated_tokens=1000))
    1000
    """
    p = np.asarray(checks.positive("token position", position), dtype=float)
    n = np.asarray(checks.positive("tokens", generated_tokens, allow_zero=True), dtype=float)
    return np.maximum(n - p + 1.0, 0.0)


def query_reads_of_token(position: ArrayLike, *, generated_tokens: ArrayLike) -> np.ndarray:
    """Decode steps that use the query of token p: 1 (its own step) when p ≤ N, else 0.

    Step p asks with q_p against k_1 … k_p; step p + 1 asks with its own q_{p+1}.
    No later step needs q_p, which is why an inference cache keeps K and V but not Q.
    """
    p = np.asarray(checks.positive("token position", position), dtype=float)
    n = np.asarray(checks.positive("tokens", generated_tokens, allow_zero=True), dtype=float)
    return np.where(p <= n, 1.0, 0.0)


def query_bytes_per_token(model: ModelSpec, *, bytes_per_value: float = 2.0) -> float:
    """Bytes one token's queries would take if they were cached, over all attention layers [bytes].

    Formula: n_q · d_head · b · L_attention, over the full, sliding and MLA layers (an
    MLA model's d_head is its query/key head, DeepSeek-V3's 128 + 64 RoPE = 192; linear
    layers have no attention query, 0). Llama 3.1 8B in FP16: 32 · 32 · 128 · 2 =
    262,144 bytes, twice its K+V of 131,072 (32 query heads against 8 KV heads).
    """
    b = float(checks.positive("bytes per value", bytes_per_value))
    attention_layers = sum(model.count(kind) for kind in ("full", "sliding", "mla"))
    return float(model.num_attention_heads * model.head_dim * attention_layers * b)


# ---------------------------------------------------------------- trained sparse attention

#: DuoAttention (Xiao et al. 2024, arXiv:2410.10819; mit-han-lab/duo-attention, scripts/longbench.sh):
#: streaming heads keep 64 "sink" tokens and the 256 most recent ones; on GQA models (Llama 3 8B)
#: half of the heads are made streaming heads (sparsity 0.5; 0.75 on the MHA Llama 2 7B).
DUO_SINK_TOKENS = 64
DUO_RECENT_TOKENS = 256
DUO_RETRIEVAL_FRACTION_GQA = 0.5
#: MoBA (Lu et al. 2025, arXiv:2502.13189; MoonshotAI/MoBA, examples/llama.py): blocks of 4,096
#: tokens, the top 12 per query (95.31 % sparsity at 1M tokens, as the paper says).
MOBA_BLOCK_TOKENS = 4096
MOBA_TOP_K = 12
#: SeerAttention-R (Gao et al. 2025, arXiv:2506.08889): near-lossless on AIME with a budget of
#: 4K tokens read per decode step, chosen by its learned gate block by block.
SEER_TOKEN_BUDGET = 4096
#: DeepSeek Sparse Attention (DeepSeek-V3.2-Exp, 2025): its trained "lightning indexer" picks the top
#: `index_topk` = 2,048 earlier tokens for each query (deepseek-ai/DeepSeek-V3.2-Exp, inference/model.py,
#: ``ModelArgs.index_topk``; the released config.json sets the same value).
DSA_INDEX_TOPK_TOKENS = 2048


@dataclass(frozen=True, slots=True, kw_only=True)
class NsaSettings:
    """NSA's three branches (Yuan et al. 2025, arXiv:2502.11089, §4.1), all in tokens.

    Compression summarises blocks of `compress_block` tokens every `compress_stride`
    tokens; selection reads the top `selected_blocks` blocks of `selection_block` tokens;
    the sliding branch reads the last `window` tokens.
    """

    compress_block: int = 32
    compress_stride: int = 16
    selection_block: int = 64
    selected_blocks: int = 16
    window: int = 512


NSA_SETTINGS = NsaSettings()


def nsa_tokens_read(context_tokens: ArrayLike, *, settings: NsaSettings = NSA_SETTINGS) -> np.ndarray:
    """Tokens' worth of K/V one NSA decode step reads at context s: s/d + min(s, n·l′ + w) [tokens].

    s/d compressed summaries (stride d = 16), plus the n = 16 selected blocks of
    l′ = 64 tokens and the w = 512-token window (1,536 tokens, never more than the
    context). The count NSA's paper gives for decoding (its Table 4): 8,192 → 2,048
    (4×) … 65,536 → 5,632 (11.6×).

    >>> float(nsa_tokens_read(65536))
    5632.0
    """
    s = np.asarray(checks.positive("context tokens", context_tokens, allow_zero=True), dtype=float)
    fine = settings.selected_blocks * settings.selection_block + settings.window
    return s / settings.compress_stride + np.minimum(s, fine)


def moba_tokens_read(
    context_tokens: ArrayLike, *, block_tokens: int = MOBA_BLOCK_TOKENS, top_k: int = MOBA_TOP_K
) -> np.ndarray:
    """Tokens one MoBA query reads at context s: min(s, k · B) [tokens] (k blocks of B tokens, its own included).

    A parameter-free gate scores each block by the query's dot product with the block's
    mean key and keeps the top k, as a mixture-of-experts router keeps its top experts.
    At 2^20 tokens: 12 · 4,096 / 1,048,576 = 4.69 % read, the paper's 95.31 % sparsity.
    """
    s = np.asarray(checks.positive("context tokens", context_tokens, allow_zero=True), dtype=float)
    return np.minimum(s, checks.whole("top-k blocks", top_k) * checks.whole("block size", block_tokens))


def token_budget_read(context_tokens: ArrayLike, *, budget_tokens: int = SEER_TOKEN_BUDGET) -> np.ndarray:
    """Tokens read per step by a method with a fixed token budget (SeerAttention-R): min(s, budget) [tokens]."""
    s = np.asarray(checks.positive("context tokens", context_tokens, allow_zero=True), dtype=float)
    return np.minimum(s, checks.whole("token budget", budget_tokens))


def duo_attention_cache_bytes(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    retrieval_fraction: float = DUO_RETRIEVAL_FRACTION_GQA,
    sink_tokens: int = DUO_SINK_TOKENS,
    recent_tokens: int = DUO_RECENT_TOKENS,
    bytes_per_value: float = 2.0,
) -> np.ndarray:
    """DuoAttention's cache for one sequence: r · KV(s) + (1 − r) · KV(min(s, sinks + recent)) [bytes].

    A fraction r of the KV heads (retrieval heads, found by optimising a gate per head
    on synthetic retrieval data) keep every token; the others (streaming heads) keep the
    first `sink_tokens` and the last `recent_tokens` (64 + 256). Each step reads what is
    stored, so the bytes read fall by the same factor. KV(s) = ``kv_cache_bytes``.
    """
    r = float(retrieval_fraction)
    if not 0.0 <= r <= 1.0:
        raise KvError("not_fraction", f"retrieval fraction must be between 0 and 1, got {r}", name="retrieval", value=r)
    s = np.asarray(checks.positive("context tokens", context_tokens, allow_zero=True), dtype=float)
    short = np.minimum(s, checks.whole("sink tokens", sink_tokens) + checks.whole("recent tokens", recent_tokens))
    full = kv_cache_bytes(model, context_tokens=s, bytes_per_value=bytes_per_value)
    streaming = kv_cache_bytes(model, context_tokens=short, bytes_per_value=bytes_per_value)
    return r * np.asarray(full) + (1.0 - r) * np.asarray(streaming)


@dataclass(frozen=True, slots=True, kw_only=True)
class SparseCache:
    """One method at one context: the cache it keeps in memory and what one decode step reads (bytes)."""

    name: str
    stored_bytes: float
    read_bytes: float


def trained_sparse_attention(
    model: ModelSpec, *, context_tokens: float, bytes_per_value: float = 2.0
) -> tuple[SparseCache, ...]:
    """Dense attention, DuoAttention, NSA, MoBA and SeerAttention-R on one sequence of s tokens, with their settings.

    stored: dense, NSA, MoBA and SeerAttention keep every token's K and V, KV(s) (NSA's
    compressed summaries, s/d more, are added: its selection branch may pick any block);
    DuoAttention stores :func:`duo_attention_cache_bytes`. read per step: KV(tokens read),
    with :func:`nsa_tokens_read`, :func:`moba_tokens_read`, :func:`token_budget_read`;
    DuoAttention reads what it stores. The model's own layer pattern is kept (a sliding
    layer reads at most its window either way).
    """
    s = float(checks.positive("context tokens", context_tokens))

    def kv(tokens: ArrayLike) -> float:
        return float(kv_cache_bytes(model, context_tokens=tokens, bytes_per_value=bytes_per_value))

    dense = kv(s)
    duo = float(duo_attention_cache_bytes(model, context_tokens=s, bytes_per_value=bytes_per_value))
    return (
        SparseCache(name="dense", stored_bytes=dense, read_bytes=dense),
        SparseCache(name="duo", stored_bytes=duo, read_bytes=duo),
        SparseCache(
            name="nsa", stored_bytes=kv(s + s / NSA_SETTINGS.compress_stride), read_bytes=kv(nsa_tokens_read(s))
        ),
        SparseCache(name="moba", stored_bytes=dense, read_bytes=kv(moba_tokens_read(s))),
        SparseCache(name="seer", stored_bytes=dense, read_bytes=kv(token_budget_read(s))),
    )
