"""Attention's own costs: recomputing K/V without a cache, and the n × n score matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import checks

ArrayLike = Any


def kv_projections_without_cache(generated_tokens: ArrayLike) -> np.ndarray:
    """K/V projections to generate N tokens when nothing is cached: N(N+1)/2.

    Step t recomputes K and V for all t tokens so far: 1 + 2 + … + N (course seed 002).
    """
    n = np.asarray(generated_tokens, dtype=float)
    checks.positive("tokens", n, allow_zero=True)
    return n * (n + 1) / 2


def kv_projections_with_cache(generated_tokens: ArrayLike) -> np.ndarray:
    """K/V projections to generate N tokens with a cache: N (one per new token)."""
    n = np.asarray(generated_tokens, dtype=float)
    checks.positive("tokens", n, allow_zero=True)
    return n


def projections_at_step(step: ArrayLike, *, cached: bool) -> np.ndarray:
    """K/V projections for the t-th token alone: t without a cache, 1 with one."""
    t = np.asarray(step, dtype=float)
    return np.ones_like(t) if cached else t


def attention_scores_bytes(
    tokens: ArrayLike, *, bytes_per_value: float = 2.0, heads: int = 1, layers: int = 1
) -> np.ndarray:
    """Bytes of a materialised n × n score matrix: n² · b · heads · layers.

    Standard attention writes it to HBM (and the softmax P of the same size);
    FlashAttention never does (Dao et al. 2022, arXiv:2205.14135, §3).
    """
    n = np.asarray(tokens, dtype=float)
    checks.positive("tokens", n, allow_zero=True)
    return n * n * bytes_per_value * heads * layers


def standard_attention_hbm_bytes(tokens: ArrayLike, *, head_dim: int, bytes_per_value: float = 2.0) -> np.ndarray:
    """HBM traffic of standard attention for one head: (4·n·d + 4·n²) · b.

    Algorithm 0 of the FlashAttention paper: read Q, K and write S; read S and
    write P; read P, V and write O.
    """
    n = np.asarray(tokens, dtype=float)
    return (4.0 * n * head_dim + 4.0 * n * n) * bytes_per_value


def flash_attention_hbm_bytes(
    tokens: ArrayLike, *, head_dim: int, bytes_per_value: float = 2.0, block_rows: int = 128
) -> np.ndarray:
    """HBM traffic of FlashAttention-2 for one head: (2·n·d + 2·n·d·⌈n/B_r⌉) · b + 4·n.

    Q is read and O written once; K and V are streamed once per block of B_r
    query rows; a float32 log-sum-exp per row is written (Dao 2023, FlashAttention-2, Alg. 1).
    """
    n = np.asarray(tokens, dtype=float)
    passes = np.ceil(n / checks.whole("block rows", block_rows))
    return (2.0 * n * head_dim + 2.0 * n * head_dim * passes) * bytes_per_value + 4.0 * n
