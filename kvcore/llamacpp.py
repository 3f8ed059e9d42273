"""llama.cpp: how it sizes its KV cache, the lines it prints, and a reader for them.

llama.cpp allocates the whole KV cache when the context is created, from the context
length alone (no memory profiling, unlike vLLM or SGLang): per cached layer,
``cells × streams`` rows of K and of V, each row ``n_embd_k_gqa(il)`` (resp.
``n_embd_v_gqa(il)``) values stored in the cache type chosen for K (``-ctk``) and for V
(``-ctv``) apart. A quantised row is made of blocks of 32 values (``ggml_row_size``).

Sources read (llama.cpp vendored by the llama-cpp-python sdists, which pin one commit):
b11312 (0c1e57098, 2026-10-01, llama-cpp-python 0.3.36) — the newest modelled;
4227c9be (2025-08-14, PR #15321, llama-cpp-python 0.3.16); 7841fc72 (llama-cpp-python
0.3.8); b4094 (74d73dc8, 2024-11-15, llama-cpp-python 0.3.2); cfac111e (llama-cpp-python
0.2.90). Files: ``src/llama-context.cpp`` (``llama_context::llama_context``: n_ctx and
n_ctx_seq), ``src/llama-model.cpp`` (``llama_model::create_memory``: which cache class),
``src/llama-kv-cache.cpp`` (``llama_kv_cache::llama_kv_cache``: the tensors and the
``size =`` line), ``src/llama-kv-cache-iswa.cpp`` (the SWA pair), ``src/llama-hparams.cpp``
(``n_embd_k_gqa(il)``), ``ggml/src/ggml.c`` (``type_traits``: block size and bytes).

Where the rules changed, the build given (``build=``) selects them. Boundary builds
that are not a source read above are dated from the pull request that changed the rule
and marked "≈" in :data:`MODELLED_LLAMACPP_BUILDS` (llama.cpp tags ``bNNNN`` count commits
on master; b4094 = 2024-11-15, b4621 = 2025-02-05, b7079 = 2025-11-16, b9265 = 2026-05-25
are known from logs, the others interpolated).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import checks
from .budget import BudgetTerm
from .errors import KvError
from .hardware import GpuSpec
from .log_lines import (
    INT_PATTERN,
    NUMBER_PATTERN,
    Check,
    LogPattern,
    RecognisedLine,
    cannot_check,
    log_pattern,
    read_patterns,
    verdict,
)
from .memory import model_weights_bytes
from .model import ModelSpec
from .units import GiB, MiB

__all__ = [
    "GGUF_BITS_PER_WEIGHT",
    "LLAMACPP_CACHE_TYPES",
    "LLAMACPP_MARKERS",
    "MODELLED_LLAMACPP_BUILDS",
    "NEWEST_LLAMACPP_BUILD",
    "LlamaCppCache",
    "LlamaCppLog",
    "LlamaCppStartup",
    "LoggedLlamaCppCache",
    "gguf_weights_bytes",
    "llamacpp_cells",
    "llamacpp_layer_widths",
    "llamacpp_max_context",
    "llamacpp_memory_bytes",
    "llamacpp_required_bytes",
    "llamacpp_row_bytes",
    "llamacpp_startup",
    "llamacpp_startup_from_log",
    "metal_working_set_bytes",
    "parse_llamacpp_log",
    "reconcile_llamacpp",
]

#: Cache types llama.cpp accepts for ``-ctk``/``-ctv``: name → (bytes per block, values per block).
#: From ggml's ``type_traits`` (ggml/src/ggml.c, b11312) and the block structs of ggml-common.h:
#: q8_0 = fp16 scale + 32 int8 = 34 bytes; q4_0 = fp16 scale + 16 bytes of nibbles = 18;
#: q4_1 = scale + min + 16 = 20; q5_0 = scale + 4 high bits + 16 = 22; q5_1 = 24; iq4_nl = 18.
LLAMACPP_CACHE_TYPES: Mapping[str, tuple[int, int]] = MappingProxyType(
    {
        "f32": (4, 1),
        "f16": (2, 1),
        "bf16": (2, 1),
        "q8_0": (34, 32),
        "q4_0": (18, 32),
        "q4_1": (20, 32),
        "q5_0": (22, 32),
        "q5_1": (24, 32),
        "iq4_nl": (18, 32),
    }
)

#: The newest build whose source was read (llama-cpp-python 0.3.36 vendors b11312, 0c1e57098, 2026-10-01).
NEWEST_LLAMACPP_BUILD = 11312

# Rule boundaries (first build with the new rule). "≈": dated from the PR, see the module docstring.
_BUILD_INIT_FROM_MODEL = 4525  # ≈ PR #11213 (2025-01): llama_new_context_with_model → llama_init_from_model
_BUILD_KV_SIZE_LINE = (
    4400  # ≈ the 'llama_kv_cache_init: kv_size = …' line appears (absent at b4318, present in Jan 2025)
)
_BUILD_LLAMA_CONTEXT = (
    4880  # ≈ PR #12181 (2025-03-13): llama_context class; cache lines from 'init:' (seen at b4905, b5192)
)
_BUILD_UNIFIED_CLASS = 5269  # 'llama_kv_cache_unified: kv_size … padding = …' lines: seen at b5269, absent at b5192
_BUILD_MLA_LATENT = 5130  # ≈ PR #12801 (2025-04-15): MLA caches the latent, K 576 + V 512 values
_BUILD_ISWA = 5450  # ≈ PR #13194 (2025-05-20): llama_kv_cache_unified_iswa, "size = … cells" line
_BUILD_SWA_UBATCH = 5510  # ≈ PR #13833 (2025-05-27): the SWA cache holds n_swa + n_ubatch (was n_swa·n_seq + n_batch)
_BUILD_STREAMS = 5900  # ≈ PR #14363 (2025-07-16): one stream per sequence unless unified, "S/T seqs"
_BUILD_FA_AUTO = 6250  # ≈ PR #15434 (2025-08): -fa on|off|auto, auto by default
_BUILD_RENAMED = 6600  # ≈ (2025-09/10): llama_kv_cache_unified → llama_kv_cache, _iswa likewise
_BUILD_NO_PAD = 6850  # ≈ PR #16812 (2025-10-28): no KV size padding at all
_BUILD_PAD_256 = 6970  # ≈ PR #17046 (2025-11-06): n_ctx, n_ctx_seq and the SWA cache padded to 256
_BUILD_V_LESS_MLA = 7870  # ≈ PR #19067 (2026-01-24): MLA stores K only, V is a view of K

#: The builds whose rules are modelled, each with what changed there (the newest is the default).
MODELLED_LLAMACPP_BUILDS: Mapping[int, str] = MappingProxyType(
    {
        3600: "source read (llama-cpp-python 0.2.90): one unified cache, n_ctx padded to 256 with flash "
        "attention or 32 without (PR #7257, May 2024); every layer at n_ctx, sliding ones too; MLA models "
        "cache per-head K (n_head·192) and V (n_head·128); 'KV self size' line",
        4094: "source read (llama-cpp-python 0.3.2): same rules as 3600",
        4318: "seen in ggml-org/ci logs: same rules as 3600; no 'kv_size =' line yet",
        _BUILD_KV_SIZE_LINE: "≈ 'llama_kv_cache_init: kv_size = …' line appears (same sizes)",
        _BUILD_INIT_FROM_MODEL: "≈ the context constructor is renamed llama_init_from_model (same sizes)",
        4801: "seen in ggml-org/ci logs (ece9745b): llama_init_from_model lines, sizes as 3600",
        _BUILD_LLAMA_CONTEXT: "≈ PR #12181: llama_context class; cache lines printed by 'init:' (same sizes)",
        4905: "seen in logs: 'init: kv_size = …', 'llama_context: KV self size'; MLA still per-head",
        _BUILD_MLA_LATENT: "≈ PR #12801: MLA GGUFs cache the latent, K = kv_lora_rank + rope (576) and "
        "V = kv_lora_rank (512) values per token, one head",
        _BUILD_UNIFIED_CLASS: "seen in logs (b5269 and b5331; b5192 still prints 'init:'): llama_kv_cache_unified "
        "class, 'kv_size = …, padding = …' and 'llama_kv_cache_unified: KV self size' lines",
        _BUILD_ISWA: "≈ PR #13194: sliding-window models get a second, small cache: min(n_ctx, "
        "PAD(n_swa·n_seq + n_ubatch)); the swa_full option keeps it at n_ctx",
        _BUILD_SWA_UBATCH: "≈ PR #13833: the SWA cache reserves n_ubatch (not n_batch) beyond the window",
        5622: "seen in logs: 'llama_kv_cache_unified: size = … (N cells, L layers, S seqs)'",
        _BUILD_STREAMS: "≈ PR #14363: without a unified cache each of the -np sequences has its own "
        "stream of PAD(⌈n_ctx / n_seq⌉) cells; the SWA window counts once per stream",
        6170: "source read (4227c9be, llama-cpp-python 0.3.16): rules of the two rows above",
        6699: "seen in logs: llama_kv_cache / llama_kv_cache_iswa names, 'flash_attn = enabled'",
        _BUILD_FA_AUTO: "≈ PR #15434: flash attention 'auto' by default (on where the backend has it)",
        _BUILD_RENAMED: "≈ classes renamed llama_kv_cache / llama_kv_cache_iswa (same sizes)",
        _BUILD_NO_PAD: "≈ PR #16812: no padding of the cache size",
        _BUILD_PAD_256: "≈ PR #17046: n_ctx and n_ctx_seq padded to 256 with or without flash "
        "attention; the SWA cache PAD(min(n_ctx_seq, n_swa·(unified ? n_seq : 1) + n_ubatch), 256)",
        _BUILD_V_LESS_MLA: "≈ PR #19067: MLA caches K only (576 values), V is a view of K (V 0.00 MiB)",
        NEWEST_LLAMACPP_BUILD: "source read (0c1e57098, llama-cpp-python 0.3.36): rules of the rows above",
    }
)

#: Bits per weight of common GGUF file types, for the weights *estimate* of ``fits``
#: (llama.cpp's quantize tool table, tools/quantize/quantize.cpp: e.g. Q4_K_M 4.89 bpw on Llama 3 8B).
GGUF_BITS_PER_WEIGHT: Mapping[str, float] = MappingProxyType(
    {
        "F32": 32.0,
        "F16": 16.0,
        "BF16": 16.0,
        "Q8_0": 8.5,
        "Q6_K": 6.56,
        "Q5_K_M": 5.7,
        "Q5_0": 5.5,
        "Q4_K_M": 4.89,
        "Q4_K_S": 4.58,
        "Q4_0": 4.5,
        "IQ4_XS": 4.25,
        "Q3_K_M": 3.91,
        "Q2_K": 3.35,
    }
)


def _cache_type(name: str) -> str:
    key = str(name).strip().lower()
    if key not in LLAMACPP_CACHE_TYPES:
        known = ", ".join(LLAMACPP_CACHE_TYPES)
        raise KvError(
            "llamacpp_unknown_cache_type",
            f"unknown llama.cpp cache type {name!r}: use one of {known}",
            value=str(name),
            known=known,
        )
    return key


def llamacpp_row_bytes(cache_type: str, values: int) -> int:
    """Bytes of one cache row of `values` values: ggml_row_size = type_size · values / blck_size.

    ggml/src/ggml.c, ``ggml_row_size`` and ``type_traits`` (b11312). A quantised row must hold
    whole blocks of 32 values.

    >>> llamacpp_row_bytes("q8_0", 1024), llamacpp_row_bytes("f16", 1024)
    (1088, 2048)
    """
    key = _cache_type(cache_type)
    type_bytes, block = LLAMACPP_CACHE_TYPES[key]
    values = int(values)
    if values % block:
        raise KvError(
            "llamacpp_row_not_blocks",
            f"a {key} cache row holds blocks of {block} values; {values} values is not a whole number of blocks",
            cache_type=key,
            values=values,
            block=block,
        )
    return type_bytes * values // block


def _pad(value: Any, multiple: int) -> Any:
    """GGML_PAD(x, n): x rounded up to a multiple of n (an int, or elementwise an int64 array)."""
    return (value + multiple - 1) // multiple * multiple


@dataclass(frozen=True, slots=True, kw_only=True)
class _LayerWidth:
    kind: str  # "full" or "sliding" (which cache holds the layer)
    k_values: int
    v_values: int


def llamacpp_layer_widths(
    model: ModelSpec,
    *,
    build: int = NEWEST_LLAMACPP_BUILD,
    mla_gguf: bool = True,
    layer_kv_heads: Sequence[int] | None = None,
) -> tuple[tuple[str, int, int], ...]:
    """Per cached layer: (cache, n_embd_k_gqa(il), n_embd_v_gqa(il)) in values per token.

    Formula (src/llama-hparams.cpp, ``n_embd_k_gqa(il) = n_embd_head_k(il) · n_head_kv(il)``):
    full/sliding layers K = V = num_key_value_heads · head_dim (``layer_kv_heads`` gives
    per-layer KV head counts, as GGUFs of OpenELM or DeciLM carry; a layer with 0 heads caches
    nothing). Linear/recurrent layers have no KV rows (their state is the recurrent cache).
    MLA layers (DeepSeek V2/V3, Kimi K2), by build:

    * before ≈b5130 (PR #12801), or a GGUF converted without MLA keys (``mla_gguf=False``):
      per-head K = n_head · head_dim (192) and V = n_head · (head_dim − qk_rope_head_dim) (128);
    * from ≈b5130: K = kv_lora_rank + qk_rope_head_dim (576), V = kv_lora_rank (512), one head;
    * from ≈b7870 (PR #19067, current): K = 576, V none (a view of K).

    Sliding layers get their own cache only from ≈b5450 (iSWA); before, they count as full.
    """
    heads = list(layer_kv_heads) if layer_kv_heads is not None else None
    if heads is not None and len(heads) != model.num_hidden_layers:
        raise KvError(
            "llamacpp_layer_heads_length",
            f"layer_kv_heads lists {len(heads)} layers, the model has {model.num_hidden_layers}",
            given=len(heads),
            layers=model.num_hidden_layers,
        )
    widths: list[tuple[str, int, int]] = []
    for index, layer in enumerate(model.layers):
        if layer.kind == "linear":
            continue
        if layer.kind == "mla":
            latent = layer.kv_lora_rank + layer.qk_rope_head_dim
            if build < _BUILD_MLA_LATENT or not mla_gguf:
                k = model.num_attention_heads * model.head_dim
                v = model.num_attention_heads * (model.head_dim - layer.qk_rope_head_dim)
            elif build < _BUILD_V_LESS_MLA:
                k, v = latent, layer.kv_lora_rank
            else:
                k, v = latent, 0
            widths.append(("full", k, v))
            continue
        n_head_kv = heads[index] if heads is not None else layer.num_key_value_heads
        kind = "sliding" if layer.kind == "sliding" and build >= _BUILD_ISWA else "full"
        widths.append((kind, n_head_kv * layer.head_dim, n_head_kv * layer.head_dim))
    return tuple(widths)


def _padding(build: int, flash_attn: bool) -> int:
    """llama_kv_cache_unified::get_padding (b6170): 256 with flash attention, 32 without; 1 from ≈b6850."""
    if build >= _BUILD_NO_PAD:
        return 1
    return 256 if flash_attn else 32


def llamacpp_cells(
    ctx_size: int,
    *,
    parallel: int = 1,
    kv_unified: bool = False,
    flash_attn: bool = True,
    build: int = NEWEST_LLAMACPP_BUILD,
) -> tuple[int, int, int]:
    """(n_ctx, cells per stream, streams) for a context of `ctx_size` tokens and `parallel` sequences.

    * ≥ ≈b6970 (src/llama-context.cpp, ``llama_context::llama_context``, b11312):
      n_ctx = PAD(c, 256); unified: n_ctx_seq = n_ctx, 1 stream; otherwise
      n_ctx_seq = PAD(⌊n_ctx / np⌋, 256) per stream, np streams, n_ctx = n_ctx_seq · np.
    * ≈b6850–b6969 (PR #16812): the same without any padding.
    * ≈b5900–b6849 (src/llama-model.cpp, ``create_memory``, b6170): pad = 256 with flash
      attention, else 32; unified: PAD(c, pad); otherwise PAD(⌈c / np⌉, pad) per stream.
    * before ≈b5900: one cache shared by all sequences, PAD(c, pad) cells.

    >>> llamacpp_cells(1024, parallel=3)
    (1536, 512, 3)
    >>> llamacpp_cells(4000, flash_attn=False, build=4094)
    (4000, 4000, 1)
    """
    ctx = checks.whole("ctx_size", ctx_size)
    n_seq = checks.whole("parallel", parallel)
    n_ctx, per_seq, streams = _cells(ctx, n_seq, kv_unified=kv_unified, flash_attn=flash_attn, build=build)
    if per_seq == 0:
        raise KvError(
            "llamacpp_ctx_seq_zero",
            f"a context of {ctx} tokens split over {n_seq} sequences leaves none per sequence",
            ctx_size=ctx,
            parallel=n_seq,
        )
    return n_ctx, per_seq, streams


def _cells(ctx: Any, n_seq: int, *, kv_unified: bool, flash_attn: bool, build: int) -> tuple[Any, Any, int]:
    """:func:`llamacpp_cells`'s rules on checked inputs: `ctx` a whole number or an int64 array of them.

    Integer arithmetic only (GGML_PAD, floor and ceiling division), so an array gives, element
    by element, exactly the numbers one context gives. Cells per stream are 0 where the
    context leaves no cell per sequence (the caller raises).
    """
    if build >= _BUILD_NO_PAD:
        pad = 256 if build >= _BUILD_PAD_256 else 1
        n_ctx = _pad(ctx, pad)
        if kv_unified or build < _BUILD_STREAMS:
            return n_ctx, n_ctx, 1
        per_seq = _pad(n_ctx // n_seq, pad)
        return per_seq * n_seq, per_seq, n_seq
    pad = _padding(build, flash_attn)
    if kv_unified or build < _BUILD_STREAMS:
        n_ctx = _pad(ctx, pad)
        return n_ctx, n_ctx, 1
    per_seq = _pad(-(-ctx // n_seq), pad)
    return per_seq * n_seq, per_seq, n_seq


def _swa_cells(
    cells: Any, *, window: int, n_seq: int, unified: bool, ubatch: Any, batch: Any, swa_full: bool, fa: bool, build: int
) -> Any:
    """Cells per stream of the sliding-window cache (src/llama-kv-cache-iswa.cpp), for ints or int64 arrays.

    The window once per stream (n_seq times when unified, or before streams) plus one chunk:
    n_ubatch from ≈b5510 (PR #13833), n_batch before (PR #13194); capped by the full cache's
    cells and padded: PAD(min(cells, want), 256) from ≈b6970, unpadded ≈b6850–b6969,
    min(cells, PAD(want, pad)) before. ``swa_full`` keeps the full cache's cells.
    """
    if swa_full:
        return cells
    chunk = ubatch if build >= _BUILD_SWA_UBATCH else batch
    want = window * (n_seq if (unified or build < _BUILD_STREAMS) else 1) + chunk
    if build >= _BUILD_PAD_256:
        return _pad(np.minimum(cells, want), 256)
    if build >= _BUILD_NO_PAD:
        return np.minimum(cells, want)
    return np.minimum(cells, _pad(want, _padding(build, fa)))


@dataclass(frozen=True, slots=True, kw_only=True)
class LlamaCppCache:
    """One llama_kv_cache: its cells per stream, streams, layers and the bytes of K and V."""

    name: str  # "" for a plain cache, "non-SWA" or "SWA" for the two halves of an iSWA cache
    cells: int
    streams: int
    n_seq_max: int
    layers: int
    k_bytes: int
    v_bytes: int

    @property
    def kv_bytes(self) -> int:
        """K + V bytes of this cache."""
        return self.k_bytes + self.v_bytes


def _cache(
    name: str, widths: Sequence[tuple[str, int, int]], *, cells: int, streams: int, n_seq: int, k: str, v: str
) -> LlamaCppCache:
    """Bytes of one cache: Σ_layers cells · streams · row(K) and likewise V (ggml_nbytes of each 3-D tensor)."""
    rows = cells * streams
    return LlamaCppCache(
        name=name,
        cells=cells,
        streams=streams,
        n_seq_max=n_seq,
        layers=len(widths),
        k_bytes=sum(rows * llamacpp_row_bytes(k, kv) for _, kv, _ in widths),
        v_bytes=sum(rows * llamacpp_row_bytes(v, vv) for _, _, vv in widths),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class LlamaCppStartup:
    """What llama.cpp allocates for these settings, and the lines it prints about it.

    ``caches`` lists the KV caches in the order llama.cpp creates them (an iSWA model: the
    non-SWA cache, then the SWA one). ``recurrent_bytes`` is the llama_memory_recurrent state
    of linear/SSM layers (f32 r and s states, max(1, n_seq) cells), 0 for pure transformers.
    ``device_kv_bytes`` maps a backend buffer name ("CUDA0", "CPU") to the KV bytes it holds.
    ``weights_bytes`` and ``compute_bytes`` are *estimates* (see ``llamacpp_startup``).
    """

    engine: str = "llama.cpp"
    release: str
    build: int
    model_name: str
    ctx_size: int
    n_ctx: int
    n_ctx_seq: int
    parallel: int
    kv_unified: bool
    flash_attn: bool
    flash_attn_flag: bool | None
    swa_full: bool
    ubatch_size: int
    batch_size: int
    cache_type_k: str
    cache_type_v: str
    caches: tuple[LlamaCppCache, ...]
    recurrent_bytes: int
    recurrent_layers: int
    device_kv_bytes: tuple[tuple[str, int], ...]
    weights_bytes: float | None
    weights_estimated: bool
    compute_bytes: float
    memory_bytes: float | None
    gpu_name: str
    fits: bool
    terms: tuple[BudgetTerm, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def k_bytes(self) -> int:
        """K bytes of every cache together."""
        return sum(cache.k_bytes for cache in self.caches)

    @property
    def v_bytes(self) -> int:
        """V bytes of every cache together."""
        return sum(cache.v_bytes for cache in self.caches)

    @property
    def kv_bytes(self) -> int:
        """K + V bytes of every attention cache together (the recurrent state apart)."""
        return self.k_bytes + self.v_bytes

    @property
    def full_cache(self) -> LlamaCppCache:
        """The cache of the full-attention layers (the only one without iSWA)."""
        return self.caches[0]

    @property
    def swa_cache(self) -> LlamaCppCache | None:
        """The sliding-window cache of an iSWA model, else None."""
        return self.caches[1] if len(self.caches) > 1 else None

    @property
    def cells(self) -> int:
        """Cells per stream of the full-attention cache (the ``… cells`` printed)."""
        return self.full_cache.cells

    @property
    def tokens(self) -> int:
        """Tokens the cache holds in total: cells × streams of the full-attention cache."""
        return self.full_cache.cells * self.full_cache.streams

    @property
    def kv_pool_bytes(self) -> float:
        """KV bytes per GPU: what the GPUs hold (caches and recurrent state) ÷ GPUs; everything without a GPU."""
        on_gpus = [value for name, value in self.device_kv_bytes if name != "CPU"]
        if not on_gpus:
            return float(self.kv_bytes + self.recurrent_bytes)
        return float(sum(on_gpus)) / len(on_gpus)

    def max_concurrency(self, context_tokens: int) -> float:
        """Requests of `context_tokens` tokens that fit at once.

        Unified cache: cells ÷ context (the sequences share the cells). Otherwise each of the
        np streams serves one sequence: np when context ≤ cells per stream, else 0.
        """
        tokens = checks.whole("context_tokens", context_tokens)
        cache = self.full_cache
        if cache.streams == 1:
            return cache.cells / tokens
        return float(cache.streams) if tokens <= cache.cells else 0.0

    def lines(self) -> list[str]:
        """The lines llama.cpp prints about its KV cache, in the modelled build's format."""
        return _startup_lines(self)

    def as_json(self) -> dict[str, object]:
        """JSON-ready numbers (bytes, cells, tokens); see the module docstring for their sources."""
        swa = self.swa_cache
        return {
            "engine": self.engine,
            "release": self.release,
            "build": self.build,
            "model": self.model_name,
            "kv_pool_bytes": self.kv_pool_bytes,
            "tokens": self.tokens,
            "fits": self.fits,
            "ctx_size": self.ctx_size,
            "n_ctx": self.n_ctx,
            "n_ctx_seq": self.n_ctx_seq,
            "cells": self.cells,
            "streams": self.full_cache.streams,
            "n_seq_max": self.parallel,
            "kv_unified": self.kv_unified,
            "flash_attn": self.flash_attn,
            "swa_full": self.swa_full,
            "ubatch_size": self.ubatch_size,
            "cache_type_k": self.cache_type_k,
            "cache_type_v": self.cache_type_v,
            "k_bytes": self.k_bytes,
            "v_bytes": self.v_bytes,
            "kv_bytes": self.kv_bytes,
            "full_layers": self.full_cache.layers,
            "swa_layers": swa.layers if swa else 0,
            "swa_cells": swa.cells if swa else None,
            "swa_kv_bytes": swa.kv_bytes if swa else 0,
            "recurrent_bytes": self.recurrent_bytes,
            "recurrent_layers": self.recurrent_layers,
            "caches": [
                {
                    "name": cache.name,
                    "cells": cache.cells,
                    "streams": cache.streams,
                    "layers": cache.layers,
                    "k_bytes": cache.k_bytes,
                    "v_bytes": cache.v_bytes,
                }
                for cache in self.caches
            ],
            "device_kv_bytes": {name: value for name, value in self.device_kv_bytes},
            "weights_bytes": self.weights_bytes,
            "weights_estimated": self.weights_estimated,
            "compute_bytes_estimate": self.compute_bytes,
            "memory_bytes": self.memory_bytes,
            "gpu": self.gpu_name,
            "notes": list(self.notes),
        }


def _default_flash_attn(build: int) -> bool:
    """-fa default as the cache sees it: off before ≈b6250; then 'auto', which sizes the cache as 'on'.

    src/llama-context.cpp (b11312): ``cparams.flash_attn = flash_attn_type != DISABLED`` is set before
    ``create_memory``; 'auto' is resolved (and may turn flash attention off) only after the cache exists.
    """
    return build >= _BUILD_FA_AUTO


def _device_names(gpu: GpuSpec | None, count: int) -> list[str]:
    """Backend buffer names llama.cpp prints: CUDA0…, ROCm0…, Metal; CPU without a GPU."""
    if gpu is None:
        return ["CPU"]
    vendor = gpu.vendor.lower()
    if vendor == "apple":
        return ["Metal"]
    prefix = "ROCm" if vendor == "amd" else "CUDA"
    return [f"{prefix}{index}" for index in range(count)]


def gguf_weights_bytes(model: ModelSpec, gguf_type: str = "Q4_K_M") -> float:
    """Weights of a GGUF file of `model`, an ESTIMATE: total_params · bits per weight of `gguf_type` ÷ 8 [bytes].

    Bits per weight: :data:`GGUF_BITS_PER_WEIGHT` (llama.cpp's tools/quantize table, e.g. Q4_K_M 4.89,
    Q8_0 8.5, F16 16). A real file differs by a few per cent (its embeddings and output head keep
    their own types); pass the file's size where a start-up needs the exact figure.

    >>> from kvcore.data import load_models
    >>> round(gguf_weights_bytes(load_models()["llama-3.1-8b"], "Q8_0") / 2**30, 2)
    7.95
    """
    key = str(gguf_type).strip().upper()
    if key not in GGUF_BITS_PER_WEIGHT:
        known = ", ".join(GGUF_BITS_PER_WEIGHT)
        raise KvError(
            "llamacpp_unknown_gguf_type",
            f"unknown GGUF file type {gguf_type!r}: use one of {known}",
            value=str(gguf_type),
            known=known,
        )
    return model_weights_bytes(model, bytes_per_param=GGUF_BITS_PER_WEIGHT[key] / 8.0)


def _compute_estimate(model: ModelSpec, *, n_ctx: Any, ubatch: Any, flash_attn: bool) -> Any:
    """Compute buffer, a rough estimate [bytes]: logits n_ubatch · n_vocab · 4, plus the attention
    scores of one layer n_head · n_ubatch · n_ctx · 4 without flash attention, plus activations
    n_ubatch · hidden · 4 · 8. llama.cpp measures it by reserving the worst-case graph
    (``llama_context::graph_reserve``); this only gives its order of magnitude.
    """
    logits = ubatch * max(model.vocab_size, 32000) * 4.0
    scores = 0.0 if flash_attn else model.num_attention_heads * ubatch * n_ctx * 4.0
    activations = ubatch * max(model.hidden_size, model.num_attention_heads * model.head_dim) * 4.0 * 8
    return logits + scores + activations


def llamacpp_startup(
    model: ModelSpec,
    *,
    ctx_size: int = 4096,
    parallel: int = 1,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
    ubatch_size: int = 512,
    batch_size: int = 2048,
    flash_attn: bool | None = None,
    swa_full: bool = False,
    kv_unified: bool | None = None,
    build: int | None = None,
    gpu: GpuSpec | None = None,
    gpu_count: int = 1,
    n_gpu_layers: int | None = None,
    weights_bytes: float | None = None,
    mla_gguf: bool = True,
    layer_kv_heads: Sequence[int] | None = None,
    gguf_type: str = "Q4_K_M",
) -> LlamaCppStartup:
    """The KV caches llama.cpp allocates for `model` with these flags, and whether it all fits.

    Flags are llama-server's (``-c``, ``-np``, ``-ctk``, ``-ctv``, ``-ub``, ``-b``, ``-fa``,
    ``--swa-full``, ``-kvu``); ``build`` selects the rules (default: NEWEST_LLAMACPP_BUILD).
    ``flash_attn=None`` is the build's default (off before ≈b6250, then 'auto', which sizes the cache as on).
    ``kv_unified=None`` is the library default, false (llama_context_default_params); note
    that llama-server since ≈b7000 starts 4 unified slots when -np is not given.

    Per cache (src/llama-kv-cache.cpp, ``llama_kv_cache::llama_kv_cache``, b11312):
    bytes = Σ_layers cells · streams · (row(K) + row(V)), row = ggml_row_size(type, n_embd_gqa(il)).
    Cells: :func:`llamacpp_cells`. iSWA models (Gemma 2/3, gpt-oss; src/llama-kv-cache-iswa.cpp):
    full layers at n_ctx_seq; sliding layers at PAD(min(n_ctx_seq, n_swa · (unified ? np : 1) +
    n_ubatch), 256) from ≈b6970, min(n_ctx_seq, PAD(n_swa · (unified ? np : 1) + n_ubatch, pad))
    before; ``swa_full`` keeps them at n_ctx_seq. n_ubatch = min(ubatch, batch, n_ctx).
    Recurrent layers (Mamba, Qwen3-Next's Gated DeltaNet; src/llama-memory-recurrent.cpp):
    linear_state_values · 4 bytes (f32 r and s) per layer per cell, max(1, np) cells (b6170; b11312
    adds n_rs_seq checkpoint rows per cell and a P state for some models — not modelled).
    A quantised V cache needs flash attention (src/llama-context.cpp, llama_init_from_model).

    ``fits`` (only with a GPU): weights + KV + compute ≤ the GPUs' memory. Weights are
    `weights_bytes` if given, else an ESTIMATE: total_params · bits per weight of `gguf_type`;
    compute is an estimate too. Layers beyond `n_gpu_layers` keep their KV on the CPU.
    A flag given as None takes llama.cpp's default (a dispatcher may pass what the user left out).
    """
    build = NEWEST_LLAMACPP_BUILD if build is None else checks.whole("build", build)
    # A dispatcher may pass None for a flag the user left out: the engine's default then.
    ctx_size = 4096 if ctx_size is None else ctx_size
    parallel = 1 if parallel is None else parallel
    cache_type_k = "f16" if cache_type_k is None else cache_type_k
    cache_type_v = "f16" if cache_type_v is None else cache_type_v
    ubatch_size = 512 if ubatch_size is None else ubatch_size
    batch_size = 2048 if batch_size is None else batch_size
    gpu_count = 1 if gpu_count is None else gpu_count
    k_type, v_type = _cache_type(cache_type_k), _cache_type(cache_type_v)
    n_seq = checks.whole("parallel", parallel)
    devices = checks.whole("gpu_count", gpu_count)
    fa = _default_flash_attn(build) if flash_attn is None else bool(flash_attn)
    unified = bool(kv_unified) if kv_unified is not None else False
    notes: list[str] = []
    if LLAMACPP_CACHE_TYPES[v_type][1] > 1 and not fa:
        raise KvError(
            "llamacpp_quantized_v_needs_flash_attn",
            f"llama.cpp refuses a quantised V cache ({v_type}) without flash attention: "
            "'quantized V cache was requested, but this requires Flash Attention'",
            cache_type_v=v_type,
        )
    n_ctx, cells, streams = llamacpp_cells(ctx_size, parallel=n_seq, kv_unified=unified, flash_attn=fa, build=build)
    batch = min(checks.whole("batch_size", batch_size), n_ctx)
    ubatch = min(checks.whole("ubatch_size", ubatch_size), batch)
    widths = llamacpp_layer_widths(model, build=build, mla_gguf=mla_gguf, layer_kv_heads=layer_kv_heads)
    full = [w for w in widths if w[0] == "full"]
    sliding = [w for w in widths if w[0] == "sliding"]
    if not fa and build >= _BUILD_ISWA and len({w[2] for w in widths}) > 1:
        # [TAG_V_CACHE_VARIABLE]: without flash attention V is stored transposed, padded to the widest layer.
        widest = max(w[2] for w in widths)
        full = [(kind, k, widest) for kind, k, _ in full]
        sliding = [(kind, k, widest) for kind, k, _ in sliding]
        notes.append("V rows padded to the widest layer (different V widths, no flash attention)")
    caches: list[LlamaCppCache]
    if sliding:
        window = checks.whole("sliding_window", model.sliding_window or 0)
        swa_cells = int(
            _swa_cells(
                cells,
                window=window,
                n_seq=n_seq,
                unified=unified,
                ubatch=ubatch,
                batch=batch,
                swa_full=swa_full,
                fa=fa,
                build=build,
            )
        )
        caches = [
            _cache("non-SWA", full, cells=cells, streams=streams, n_seq=n_seq, k=k_type, v=v_type),
            _cache("SWA", sliding, cells=swa_cells, streams=streams, n_seq=n_seq, k=k_type, v=v_type),
        ]
    else:
        caches = [_cache("", full, cells=cells, streams=streams, n_seq=n_seq, k=k_type, v=v_type)]
    recurrent_layers = model.count("linear")
    recurrent_bytes = recurrent_layers * max(1, n_seq) * model.linear_state_values * 4

    names = _device_names(gpu, devices)
    layers_total = model.num_hidden_layers
    on_gpu = layers_total if n_gpu_layers is None else max(0, min(int(n_gpu_layers), layers_total))
    if gpu is None:
        on_gpu = 0
    device_kv = _split_by_device(model, widths, caches, recurrent_bytes, names, on_gpu, k_type, v_type)

    memory_bytes: float | None = None
    fits = True
    weights: float | None = None if weights_bytes is None else float(weights_bytes)
    estimated = False
    compute = _compute_estimate(model, n_ctx=cells, ubatch=ubatch, flash_attn=fa)
    terms: tuple[BudgetTerm, ...] = ()
    if gpu is not None:
        if weights is None:
            weights = gguf_weights_bytes(model, gguf_type) * on_gpu / max(layers_total, 1)
            estimated = True
            notes.append(f"weights estimated from the parameter count at {gguf_type} bits per weight")
        # What the backend offers: Metal's working set on Apple, the driver's total per card elsewhere.
        memory_bytes = llamacpp_memory_bytes(gpu, gpu_count=1 if gpu.vendor.lower() == "apple" else devices)
        kv_on_gpu = float(sum(value for name, value in device_kv if name != "CPU"))
        fits = weights + kv_on_gpu + compute * len([n for n in names if n != "CPU"]) <= memory_bytes
    return LlamaCppStartup(
        release=f"b{build}",
        build=build,
        model_name=model.name,
        ctx_size=int(ctx_size),
        n_ctx=n_ctx,
        n_ctx_seq=cells,
        parallel=n_seq,
        kv_unified=unified,
        flash_attn=fa,
        flash_attn_flag=flash_attn,
        swa_full=bool(swa_full),
        ubatch_size=ubatch,
        batch_size=batch,
        cache_type_k=k_type,
        cache_type_v=v_type,
        caches=tuple(caches),
        recurrent_bytes=recurrent_bytes,
        recurrent_layers=recurrent_layers,
        device_kv_bytes=tuple(device_kv),
        weights_bytes=weights,
        weights_estimated=estimated,
        compute_bytes=compute,
        memory_bytes=memory_bytes,
        gpu_name=gpu.name if gpu is not None else "",
        fits=fits,
        terms=terms,
        notes=tuple(notes),
    )


def metal_working_set_bytes(memory_bytes: float) -> float:
    """The GPU memory macOS lets Metal use on Apple silicon: recommendedMaxWorkingSetSize [bytes].

    llama.cpp's Metal backend reports it as the device's memory (ggml/src/ggml-metal,
    ``ggml_metal_device_get_memory``: total = recommendedMaxWorkingSetSize) and Ollama takes it as
    the GPU's total (discover/gpu_darwin.go, C.getRecommendedMaxVRAM). macOS gives 2/3 of the unified
    memory up to 32 GiB and 3/4 above (ggml-metal logs: 16 GiB → "recommendedMaxWorkingSetSize =
    10922.67 MB", 128 GiB → 103079.22 MB, 192 GiB → 154618.82 MB); ``sysctl iogpu.wired_limit_mb`` raises it.

    >>> round(metal_working_set_bytes(128 * 2**30) / 2**30, 1)
    96.0
    """
    return float(memory_bytes) * (2 / 3 if memory_bytes <= 32 * GiB else 3 / 4)


def llamacpp_memory_bytes(gpu: GpuSpec, *, gpu_count: int = 1) -> float:
    """The device memory llama.cpp can fill on `gpu_count` × `gpu` [bytes].

    Apple silicon: one Metal device holding Metal's working set (:func:`metal_working_set_bytes`),
    not the whole unified memory. Other GPUs: the total each driver reports (cudaMemGetInfo, as
    ``GpuSpec.reported_memory_bytes``) times `gpu_count`. Ollama reads the same figures
    (discover/gpu_darwin.go; its free memory). ``llamacpp_startup``'s ``fits`` compares with the
    nominal memory instead; a page that asks "does it fit on my machine" compares with this.

    >>> from kvcore.data import load_gpus
    >>> round(llamacpp_memory_bytes(load_gpus()["m4-max-128gb"]) / 2**30, 1)
    96.0
    """
    if gpu.vendor.lower() == "apple" or gpu.category == "apple":
        return metal_working_set_bytes(gpu.memory_bytes)
    return float(gpu.reported_memory_bytes) * checks.whole("gpu_count", gpu_count)


def llamacpp_required_bytes(
    model: ModelSpec,
    *,
    ctx_size: ArrayLike,
    parallel: int = 1,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
    flash_attn: bool | None = None,
    swa_full: bool = False,
    kv_unified: bool | None = None,
    ubatch_size: int = 512,
    batch_size: int = 2048,
    build: int | None = None,
    weights_bytes: float | None = None,
    gguf_type: str = "Q4_K_M",
) -> np.ndarray:
    """What one GPU must hold to run `model` entirely on it with ``-c ctx_size``, per ctx_size [bytes].

    required = W + KV + R + C, the sum ``llamacpp_startup``'s ``fits`` tests with every layer on
    one GPU: W the weights (`weights_bytes`, else :func:`gguf_weights_bytes` of `gguf_type`, an
    estimate), KV every cache's K and V (:func:`llamacpp_startup`'s ``kv_bytes``), R the recurrent
    state of linear layers, C the compute buffer (its rough estimate). The caches follow llama.cpp's
    rules at each ctx_size (cells padded, the sliding-window cache capped): each value equals
    what one start-up at that ctx_size gives, computed over the whole array at once (integer
    arithmetic for the cells and bytes); an array of ctx_size gives an array of the same shape.
    Never decreases with ctx_size.

    >>> from kvcore.data import load_models
    >>> need = llamacpp_required_bytes(load_models()["llama-3.1-8b"], ctx_size=[4096, 8192])
    >>> bool(need[1] > need[0])
    True
    """
    sizes = np.asarray(ctx_size, dtype=np.int64)
    weights = float(weights_bytes) if weights_bytes is not None else gguf_weights_bytes(model, gguf_type)
    if sizes.size == 0:
        return weights + np.zeros(sizes.shape)
    flat = sizes.ravel()
    settings: dict[str, Any] = {
        "parallel": parallel,
        "cache_type_k": cache_type_k,
        "cache_type_v": cache_type_v,
        "flash_attn": flash_attn,
        "swa_full": swa_full,
        "kv_unified": kv_unified,
        "ubatch_size": ubatch_size,
        "batch_size": batch_size,
        "build": build,
    }
    # One start-up checks every flag (raising what any context would) and gives what no context changes:
    # the flags as llama.cpp resolves them, each cache's bytes per row, the recurrent state.
    first = llamacpp_startup(model, ctx_size=int(flat[0]), **settings)
    n_seq, fa, unified = first.parallel, first.flash_attn, first.kv_unified
    n_ctx, cells, streams = _cells(flat, n_seq, kv_unified=unified, flash_attn=fa, build=first.build)
    invalid = (flat < 1) | (cells == 0)
    if invalid.any():
        # The first context llama.cpp would refuse, with the start-up's own error (not whole, no cell per sequence).
        llamacpp_startup(model, ctx_size=int(flat[np.argmax(invalid)]), **settings)
    batch = np.minimum(checks.whole("batch_size", 2048 if batch_size is None else batch_size), n_ctx)
    ubatch = np.minimum(checks.whole("ubatch_size", 512 if ubatch_size is None else ubatch_size), batch)
    # Every row of a cache holds the same layers: its bytes are rows × Σ_layers (row(K) + row(V)), exact integers.
    kv = np.zeros(flat.shape, dtype=np.int64)
    for cache in first.caches:
        row_bytes = cache.kv_bytes // (cache.cells * cache.streams)
        cache_cells = cells
        if cache.name == "SWA":
            cache_cells = _swa_cells(
                cells,
                window=checks.whole("sliding_window", model.sliding_window or 0),
                n_seq=n_seq,
                unified=unified,
                ubatch=ubatch,
                batch=batch,
                swa_full=swa_full,
                fa=fa,
                build=first.build,
            )
        kv = kv + cache_cells * streams * row_bytes
    compute = _compute_estimate(model, n_ctx=cells, ubatch=ubatch, flash_attn=fa)
    rest = ((kv + first.recurrent_bytes).astype(np.float64) + compute).reshape(sizes.shape)
    return weights + rest


def llamacpp_max_context(
    model: ModelSpec,
    *,
    gpu: GpuSpec,
    parallel: int = 1,
    cache_type_k: str = "f16",
    cache_type_v: str = "f16",
    flash_attn: bool | None = None,
    swa_full: bool = False,
    build: int | None = None,
    weights_bytes: float | None = None,
    gguf_type: str = "Q4_K_M",
    step_tokens: int = 256,
    max_tokens: int | None = None,
) -> int:
    """The longest context per slot (a multiple of `step_tokens`) llama.cpp runs wholly on `gpu`, 0 if none.

    A context n per slot is ``-c n·parallel -np parallel``; it fits when
    :func:`llamacpp_required_bytes` ≤ :func:`llamacpp_memory_bytes` (Metal's working set on Apple
    silicon, the reported memory elsewhere). Searched by bisection over the multiples of
    `step_tokens` up to the model's trained context (or `max_tokens`), every multiple's requirement
    computed at once: the requirement never decreases with the context. llama.cpp itself loads a
    longer context too, with layers left on the CPU (``-ngl``); this is the longest that keeps the
    GPU's speed.

    >>> from kvcore.data import load_gpus, load_models
    >>> llamacpp_max_context(load_models()["llama-3.1-8b"], gpu=load_gpus()["rtx-3060-12gb"]) > 8192
    True
    """
    step = checks.whole("step_tokens", step_tokens)
    slots = checks.whole("parallel", parallel)
    limit = int(max_tokens or model.max_position_embeddings or 131072) // step
    memory = llamacpp_memory_bytes(gpu)
    # Every multiple's requirement in one vectorised call (a few hundred contexts cost about one start-up).
    need = llamacpp_required_bytes(
        model,
        ctx_size=np.arange(1, limit + 1, dtype=np.int64) * step * slots,
        parallel=slots,
        cache_type_k=cache_type_k,
        cache_type_v=cache_type_v,
        flash_attn=flash_attn,
        swa_full=swa_full,
        build=build,
        weights_bytes=weights_bytes,
        gguf_type=gguf_type,
    )
    fits = need <= memory  # fits[k - 1]: the multiple k fits

    low, high = 0, limit  # low: the largest multiple known to fit (0: none); high: the largest one to try
    while low < high:
        middle = (low + high + 1) // 2
        if fits[middle - 1]:
            low = middle
        else:
            high = middle - 1
    return low * step


def _split_by_device(
    model: ModelSpec,
    widths: Sequence[tuple[str, int, int]],
    caches: Sequence[LlamaCppCache],
    recurrent_bytes: int,
    names: Sequence[str],
    on_gpu: int,
    k_type: str,
    v_type: str,
) -> list[tuple[str, int]]:
    """KV bytes per backend buffer: the last `on_gpu` layers on the GPUs, split evenly, the rest on the CPU.

    llama.cpp places layer il's KV on ``model.dev_layer(il)`` (llama-kv-cache.cpp); the layers go
    to the GPUs by ``--tensor-split`` (default: in proportion to free memory, taken equal here).
    """
    total = sum(cache.kv_bytes for cache in caches) + recurrent_bytes
    if names == ["CPU"] or on_gpu == 0:
        return [("CPU", total)]
    per_layer: list[int] = []
    cache_of = {"full": caches[0], "sliding": caches[-1]}
    attention = iter(widths)
    for layer in model.layers:
        if layer.kind == "linear":
            per_layer.append(recurrent_bytes // max(model.count("linear"), 1))
            continue
        kind, k, v = next(attention)
        cache = cache_of[kind]
        rows = cache.cells * cache.streams
        per_layer.append(rows * (llamacpp_row_bytes(k_type, k) + llamacpp_row_bytes(v_type, v)))
    first_gpu = len(per_layer) - on_gpu
    out: dict[str, int] = {}
    if first_gpu:
        out["CPU"] = sum(per_layer[:first_gpu])
    gpu_layers = per_layer[first_gpu:]
    count = len(names)
    for index, value in enumerate(gpu_layers):
        name = names[min(index * count // max(len(gpu_layers), 1), count - 1)]
        out[name] = out.get(name, 0) + value
    return sorted(out.items(), key=lambda item: (item[0] == "CPU", item[0]))


def _mib(value: float) -> float:
    return value / MiB


def _cache_prefix(build: int) -> str:
    return "llama_kv_cache" if build >= _BUILD_RENAMED else "llama_kv_cache_unified"


def _context_lines(startup: LlamaCppStartup, context: str) -> list[str]:
    """The context summary printed before the cache (llama_context::llama_context and its predecessors)."""
    build = startup.build
    if build < 4000:
        # src/llama.cpp, llama_new_context_with_model, b3579 (llama.cpp#9016's log)
        return [
            f"{context}: n_ctx      = {startup.n_ctx}",
            f"{context}: n_batch    = {startup.batch_size}",
            f"{context}: n_ubatch   = {startup.ubatch_size}",
            f"{context}: flash_attn = {int(startup.flash_attn)}",
        ]
    # n_ctx_seq is the name from ≈b6850 (PR #16812: cparams.n_ctx_seq); the wide alignment of b11312 (keys
    # padded to 21) is taken to start with ≈b7870 — a guess: no log between b6699 and b11312 was read.
    wide = build >= _BUILD_V_LESS_MLA

    def row(name: str, value: object) -> str:
        return f"{context}: {name:<{21 if wide else 13}} = {value}"

    if build >= _BUILD_FA_AUTO:
        flash = "auto" if startup.flash_attn_flag is None else ("enabled" if startup.flash_attn else "disabled")
    else:
        flash = str(int(startup.flash_attn))
    lines = [
        row("n_seq_max", startup.parallel),
        row("n_ctx", startup.n_ctx),
        row("n_ctx_seq" if build >= _BUILD_NO_PAD else "n_ctx_per_seq", startup.n_ctx_seq),
        row("n_batch", startup.batch_size),
        row("n_ubatch", startup.ubatch_size),
        row("flash_attn", flash),
    ]
    if build >= _BUILD_STREAMS:
        lines.append(row("kv_unified", "true" if startup.kv_unified else "false"))
    return lines


def _startup_lines(startup: LlamaCppStartup) -> list[str]:
    """The KV lines of the build modelled (format strings quoted from the sources read)."""
    build = startup.build
    lines: list[str] = []
    if build < _BUILD_ISWA:
        # The 'KV self size' era: llama_kv_cache_init (src/llama.cpp, b4094; src/llama-kv-cache.cpp, 0.3.8), then
        # 'init:' inside llama_context (b4905, b5192 logs), then llama_kv_cache_unified (May 2025 logs).
        if build < _BUILD_INIT_FROM_MODEL:
            context, cache_func = "llama_new_context_with_model", "llama_kv_cache_init"
        elif build < _BUILD_LLAMA_CONTEXT:
            context, cache_func = "llama_init_from_model", "llama_kv_cache_init"
        elif build < _BUILD_UNIFIED_CLASS:
            context, cache_func = "llama_context", "init"
        else:
            context, cache_func = "llama_context", "llama_kv_cache_unified"
        lines.extend(_context_lines(startup, context))
        cache = startup.full_cache
        offload = 1 if any(name != "CPU" for name, _ in startup.device_kv_bytes) else 0
        if build >= _BUILD_UNIFIED_CLASS:
            lines.append(
                f"{cache_func}: kv_size = {cache.cells}, type_k = '{startup.cache_type_k}', "
                f"type_v = '{startup.cache_type_v}', n_layer = {cache.layers}, can_shift = 1, "
                f"padding = {_padding(build, startup.flash_attn)}"
            )
        elif build >= _BUILD_KV_SIZE_LINE:
            lines.append(
                f"{cache_func}: kv_size = {cache.cells}, offload = {offload}, type_k = '{startup.cache_type_k}', "
                f"type_v = '{startup.cache_type_v}', n_layer = {cache.layers}, can_shift = 1"
            )
        for name, value in startup.device_kv_bytes:
            lines.append(f"{cache_func}: {name:>10} KV buffer size = {_mib(value):8.2f} MiB")
        # The 'KV self size' line is printed with __func__: llama_kv_cache_unified's constructor prints it itself
        # in its era (build 5331 log of ik_llama.cpp PR #394, ≈b5400 log of issue #437), the context before.
        owner = cache_func if build >= _BUILD_UNIFIED_CLASS else context
        lines.append(
            f"{owner}: KV self size  = {_mib(cache.kv_bytes):7.2f} MiB, K ({startup.cache_type_k}): "
            f"{_mib(cache.k_bytes):7.2f} MiB, V ({startup.cache_type_v}): {_mib(cache.v_bytes):7.2f} MiB"
        )
        return lines
    prefix = _cache_prefix(build)
    lines.extend(_context_lines(startup, "llama_context"))
    for index, cache in enumerate(startup.caches):
        if cache.name:
            label = "non-SWA" if cache.name == "non-SWA" else "    SWA"
            lines.append(f"{prefix}_iswa: creating {label} KV cache, size = {cache.cells} cells")
        if index == 0 or cache.name == "SWA":
            for name, value in _cache_devices(startup, cache):
                lines.append(f"{prefix}: {name:>10} KV buffer size = {_mib(value):8.2f} MiB")
        seqs = f"{cache.n_seq_max:2d}/{cache.streams}" if build >= _BUILD_STREAMS else f"{cache.n_seq_max:2d}"
        lines.append(
            f"{prefix}: size = {_mib(cache.kv_bytes):7.2f} MiB ({cache.cells:6d} cells, {cache.layers:3d} layers, "
            f"{seqs} seqs), K ({startup.cache_type_k}): {_mib(cache.k_bytes):7.2f} MiB, "
            f"V ({startup.cache_type_v}): {_mib(cache.v_bytes):7.2f} MiB"
        )
    return lines


def _cache_devices(startup: LlamaCppStartup, cache: LlamaCppCache) -> list[tuple[str, int]]:
    """One cache's bytes per device, in proportion to the device split of all caches together."""
    total = sum(value for _, value in startup.device_kv_bytes)
    if not total:
        return [(name, 0) for name, _ in startup.device_kv_bytes]
    if len(startup.device_kv_bytes) == 1:
        return [(startup.device_kv_bytes[0][0], cache.kv_bytes)]
    return [(name, round(cache.kv_bytes * value / total)) for name, value in startup.device_kv_bytes]


# ---------------------------------------------------------------------------------------------
# Reading a pasted log
# ---------------------------------------------------------------------------------------------

_MIB = NUMBER_PATTERN + r"\s*MiB"
#: The per-cache summary: "llama_kv_cache[_unified]: size = X MiB (N cells, L layers, S[/T] seqs),
#: K (t): X MiB, V (t): X MiB"
#: (llama-kv-cache.cpp, b11312 and b6170; "S seqs" without streams from ≈b5450).
_SIZE_LINE = re.compile(
    r"(llama_kv_cache(?:_unified)?):\s*size\s*=\s*" + _MIB + r"\s*\(\s*" + INT_PATTERN + r"\s*cells,\s*"
    r"(\d+)\s*layers,\s*(\d+)(?:\s*/\s*(\d+))?\s*seqs\),\s*K\s*\((\w+)\):\s*" + _MIB + r",\s*V\s*\((\w+)\):\s*" + _MIB
)
#: "…: KV self size  = X MiB, K (t): X MiB, V (t): X MiB" (llama.cpp before ≈b5450).
_SELF_LINE = re.compile(
    r"KV self size\s*=\s*" + _MIB + r",\s*K\s*\((\w+)\):\s*" + _MIB + r",\s*V\s*\((\w+)\):\s*" + _MIB
)
#: "<prefix>: CUDA0 KV buffer size = X MiB" (every build).
_BUFFER_LINE = re.compile(r"(llama_kv_cache\w*|\binit):\s*(\S+(?:\[[^\]]*\])?)\s+KV buffer size\s*=\s*" + _MIB)
_ISWA_LINE = re.compile(r"llama_kv_cache(?:_unified)?_iswa:\s*creating\s+(non-SWA|SWA)\s+KV cache,\s*size\s*=\s*(\d+)")

_PATTERNS: tuple[LogPattern, ...] = (
    log_pattern(("size_line",), ("flag",), _SIZE_LINE.pattern),
    log_pattern(("self_line",), ("flag",), _SELF_LINE.pattern),
    log_pattern(("buffer_line",), ("flag",), _BUFFER_LINE.pattern),
    log_pattern(("iswa_line",), ("flag",), _ISWA_LINE.pattern),
    log_pattern(
        ("kv_size", "type_k", "type_v", "n_layer"),
        ("int", "str", "str", "int"),
        r"kv_size\s*=\s*(\d+),.*?type_k\s*=\s*'(\w+)',\s*type_v\s*=\s*'(\w+)',\s*n_layer\s*=\s*(\d+)",
    ),
    log_pattern(
        ("n_ctx",),
        ("int",),
        r"(?:llama_context|llama_new_context_with_model|llama_init_from_model):\s*n_ctx\s*=\s*(\d+)",
    ),
    log_pattern(("n_ctx_seq",), ("int",), r":\s*n_ctx_(?:seq|per_seq)\s*=\s*(\d+)"),
    log_pattern(("n_seq_max",), ("int",), r":\s*n_seq_max\s*=\s*(\d+)"),
    log_pattern(
        ("n_batch",),
        ("int",),
        r"(?:llama_context|llama_new_context_with_model|llama_init_from_model):\s*n_batch\s*=\s*(\d+)",
    ),
    log_pattern(
        ("n_ubatch",),
        ("int",),
        r"(?:llama_context|llama_new_context_with_model|llama_init_from_model):\s*n_ubatch\s*=\s*(\d+)",
    ),
    log_pattern(("flash_attn",), ("str",), r":\s*flash_attn\s*=\s*(\w+)"),
    log_pattern(("kv_unified",), ("bool",), r":\s*kv_unified\s*=\s*(true|false)"),
    log_pattern(("swa_full",), ("flag",), r"using full-size SWA cache"),
    log_pattern(("build",), ("int",), r"(?:\bbuild(?:\s*[:=]\s*|=)|\bversion:\s*)(\d{3,6})\b"),
    log_pattern(("n_layer_meta",), ("int",), r"(?:print_info|llm_load_print_meta):\s*n_layer\s*=\s*(\d+)"),
    log_pattern(("n_head_kv",), ("int",), r"(?:print_info|llm_load_print_meta):\s*n_head_kv\s*=\s*(\d+)"),
    log_pattern(("n_swa",), ("int",), r"(?:print_info|llm_load_print_meta):\s*n_swa\s*=\s*(\d+)"),
    log_pattern(("n_embd_k_gqa",), ("int",), r"(?:print_info|llm_load_print_meta):\s*n_embd_k_gqa\s*=\s*(\d+)"),
    log_pattern(("n_embd_v_gqa",), ("int",), r"(?:print_info|llm_load_print_meta):\s*n_embd_v_gqa\s*=\s*(\d+)"),
    log_pattern(("model_name",), ("str",), r"general\.name\s+str\s*=\s*(.+?)\s*$", re.MULTILINE),
    log_pattern(
        ("refused_quantized_v",),
        ("flag",),
        r"quantized V cache (?:was requested, but this requires|requires) (?:Flash Attention|flash_attn)",
    ),
    log_pattern(
        ("recurrent_bytes", "recurrent_cells", "recurrent_layers"),
        ("mib", "int", "int"),
        r"llama_memory_recurrent:\s*size\s*=\s*" + _MIB + r"\s*\(\s*(\d+)\s*cells,\s*(\d+)\s*layers",
    ),
)

#: Lines only llama.cpp prints (Ollama embeds llama.cpp and prints them too): the KV cache summaries.
LLAMACPP_MARKERS: re.Pattern[str] = re.compile(
    r"llama_kv_cache(?:_unified)?(?:_iswa)?:\s*(?:size\s*=|creating|\S+\s+KV buffer size)"
    r"|llama_kv_cache_init:|\binit:\s*kv_size\s*=|KV self size\s*="
    r"|llama_(?:new_context_with_model|init_from_model|context):\s*n_ctx"
    r"|llama_memory_recurrent:\s*size\s*="
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedLlamaCppCache:
    """One printed cache summary ('size = …' or 'KV self size = …'); bytes from MiB, None when not printed."""

    prefix: str
    size_bytes: float
    cells: int | None
    layers: int | None
    n_seq_max: int | None
    streams: int | None
    type_k: str
    k_bytes: float
    type_v: str
    v_bytes: float
    half_step_bytes: float
    line: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LlamaCppLog:
    """What a llama.cpp start-up log says about its KV cache (None: not printed)."""

    caches: tuple[LoggedLlamaCppCache, ...] = ()
    buffers: tuple[tuple[str, float, float], ...] = ()  # (device, bytes, half step)
    iswa_cells: tuple[tuple[str, int], ...] = ()  # ("non-SWA" | "SWA", cells)
    kv_size: int | None = None
    type_k: str | None = None
    type_v: str | None = None
    n_layer: int | None = None
    n_ctx: int | None = None
    n_ctx_seq: int | None = None
    n_seq_max: int | None = None
    n_batch: int | None = None
    n_ubatch: int | None = None
    flash_attn: bool | None = None
    kv_unified: bool | None = None
    swa_full: bool = False
    build: int | None = None
    model_name: str | None = None
    n_layer_meta: int | None = None
    n_head_kv: int | None = None
    n_swa: int | None = None
    n_embd_k_gqa: int | None = None
    n_embd_v_gqa: int | None = None
    recurrent_bytes: float | None = None
    recurrent_cells: int | None = None
    recurrent_layers: int | None = None
    refused_quantized_v: bool = False
    format: str | None = None  # "kv_self", "unified", "unified_streams", "kv_cache"
    recognised: tuple[RecognisedLine, ...] = ()
    ignored: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    truncated: bool = False
    half_step: Mapping[str, float] = field(default_factory=dict)

    @property
    def kv_bytes(self) -> float | None:
        """Every printed cache together [bytes]."""
        return sum(cache.size_bytes for cache in self.caches) if self.caches else None


def parse_llamacpp_log(text: str | bytes) -> LlamaCppLog:
    """Read a llama.cpp start-up log: every KV cache line it printed, and the settings it shows.

    Reads the forms of every modelled build: 'llama_kv_cache: size = …', 'llama_kv_cache_unified:
    size = …', 'KV self size = …', '… KV buffer size = …', the iSWA 'creating … KV cache' lines,
    'llama_kv_cache_init: kv_size = …', the context's n_ctx / n_seq_max / flash_attn / kv_unified,
    and 'build: N'. MiB values become bytes (× 2**20), with half of the last printed digit.
    Never raises.

    >>> log = parse_llamacpp_log("llama_kv_cache: size =  512.00 MiB (  4096 cells,  32 layers,  1/1 seqs), "
    ...     "K (f16):  256.00 MiB, V (f16):  256.00 MiB")
    >>> log.caches[0].cells, log.caches[0].k_bytes / 2**20
    (4096, 256.0)
    """
    try:
        return _parse(text)
    except Exception:  # a last guard: the page must show something for any paste
        return LlamaCppLog()


def _number(raw: str) -> tuple[float, float]:
    plain = raw.replace(",", "")
    decimals = len(plain.partition(".")[2])
    return float(plain) * MiB, 0.5 * 10.0**-decimals * MiB


def _parse(text: str | bytes) -> LlamaCppLog:
    reading = read_patterns(text, _PATTERNS)
    joined = reading.joined
    caches: list[LoggedLlamaCppCache] = []
    for match in _SIZE_LINE.finditer(joined):
        size, step = _number(match.group(2))
        caches.append(
            LoggedLlamaCppCache(
                prefix=match.group(1),
                size_bytes=size,
                cells=int(match.group(3).replace(",", "")),
                layers=int(match.group(4)),
                n_seq_max=int(match.group(5)),
                streams=int(match.group(6)) if match.group(6) else None,
                type_k=match.group(7),
                k_bytes=_number(match.group(8))[0],
                type_v=match.group(9),
                v_bytes=_number(match.group(10))[0],
                half_step_bytes=step,
                line=match.group(0),
            )
        )
    for match in _SELF_LINE.finditer(joined):
        size, step = _number(match.group(1))
        caches.append(
            LoggedLlamaCppCache(
                prefix="KV self size",
                size_bytes=size,
                cells=None,
                layers=None,
                n_seq_max=None,
                streams=None,
                type_k=match.group(2),
                k_bytes=_number(match.group(3))[0],
                type_v=match.group(4),
                v_bytes=_number(match.group(5))[0],
                half_step_bytes=step,
                line=match.group(0),
            )
        )
    buffers = tuple((m.group(2), *_number(m.group(3))) for m in _BUFFER_LINE.finditer(joined))
    iswa = tuple((m.group(1), int(m.group(2))) for m in _ISWA_LINE.finditer(joined))
    values = dict(reading.values)
    fmt: str | None = None
    if caches:
        first = caches[0]
        if first.prefix == "KV self size":
            fmt = "kv_self"
        elif first.prefix == "llama_kv_cache":
            fmt = "kv_cache"
        else:
            fmt = "unified_streams" if first.streams is not None else "unified"
    flash = values.get("flash_attn")
    # 'auto' sizes the cache as enabled (llama-context.cpp: flash_attn = type != DISABLED before create_memory)
    flash_attn = None if flash is None else str(flash).lower() in ("1", "true", "enabled", "on", "auto")
    return LlamaCppLog(
        caches=tuple(caches),
        buffers=buffers,
        iswa_cells=iswa,
        kv_size=values.get("kv_size"),  # type: ignore[arg-type]
        type_k=values.get("type_k"),  # type: ignore[arg-type]
        type_v=values.get("type_v"),  # type: ignore[arg-type]
        n_layer=values.get("n_layer"),  # type: ignore[arg-type]
        n_ctx=values.get("n_ctx"),  # type: ignore[arg-type]
        n_ctx_seq=values.get("n_ctx_seq"),  # type: ignore[arg-type]
        n_seq_max=values.get("n_seq_max"),  # type: ignore[arg-type]
        n_batch=values.get("n_batch"),  # type: ignore[arg-type]
        n_ubatch=values.get("n_ubatch"),  # type: ignore[arg-type]
        flash_attn=flash_attn,
        kv_unified=values.get("kv_unified"),  # type: ignore[arg-type]
        swa_full=bool(values.get("swa_full", False)),
        build=values.get("build"),  # type: ignore[arg-type]
        model_name=values.get("model_name"),  # type: ignore[arg-type]
        n_layer_meta=values.get("n_layer_meta"),  # type: ignore[arg-type]
        n_head_kv=values.get("n_head_kv"),  # type: ignore[arg-type]
        n_swa=values.get("n_swa"),  # type: ignore[arg-type]
        n_embd_k_gqa=values.get("n_embd_k_gqa"),  # type: ignore[arg-type]
        n_embd_v_gqa=values.get("n_embd_v_gqa"),  # type: ignore[arg-type]
        recurrent_bytes=values.get("recurrent_bytes"),  # type: ignore[arg-type]
        recurrent_cells=values.get("recurrent_cells"),  # type: ignore[arg-type]
        recurrent_layers=values.get("recurrent_layers"),  # type: ignore[arg-type]
        refused_quantized_v=bool(values.get("refused_quantized_v", False)),
        format=fmt,
        recognised=reading.recognised,
        ignored=reading.ignored,
        conflicts=tuple(name for name in reading.conflicts if not name.endswith("_line")),
        truncated=reading.truncated,
        half_step=dict(reading.half_step),
    )


#: A build representative of each printed format, used when the log names no build.
_FORMAT_BUILD: Mapping[str, int] = MappingProxyType(
    {"kv_self": 4094, "unified": _BUILD_ISWA, "unified_streams": 6170, "kv_cache": NEWEST_LLAMACPP_BUILD}
)


def _per_head_mla_gguf(log: LlamaCppLog, model: ModelSpec) -> bool:
    """True when the log shows an MLA model's GGUF converted without the MLA keys (per-head K and V rows).

    llama.cpp sizes a K row by the GGUF's n_embd_k_gqa (src/llama-hparams.cpp, b11312): n_head · head_dim
    (128 · 192 = 24576 for DeepSeek V3) in a GGUF without the MLA keys, kv_lora_rank + rope (576) with them.
    Read from the printed 'n_embd_k_gqa' where the log has it, else from the first cache summary: its K
    bytes are cells · streams · layers · ggml_row_size(type_k, n_head · head_dim) only for per-head rows
    (LM Studio logs print the summary without the print_info lines: lmstudio-bug-tracker issue #1454).
    """
    if not model.count("mla"):
        return False
    per_head = model.num_attention_heads * model.head_dim
    if log.n_embd_k_gqa is not None:
        return log.n_embd_k_gqa == per_head
    first = log.caches[0] if log.caches else None
    if first is None or not first.cells or not first.layers or first.type_k not in LLAMACPP_CACHE_TYPES:
        return False
    if per_head % LLAMACPP_CACHE_TYPES[first.type_k][1]:
        return False
    rows = first.cells * (first.streams or 1) * first.layers
    return abs(first.k_bytes - rows * llamacpp_row_bytes(first.type_k, per_head)) <= first.half_step_bytes


def llamacpp_startup_from_log(
    log: LlamaCppLog,
    model: ModelSpec,
    *,
    ctx_size: int | None = None,
    parallel: int | None = None,
    cache_type_k: str | None = None,
    cache_type_v: str | None = None,
    ubatch_size: int | None = None,
    batch_size: int | None = None,
    flash_attn: bool | None = None,
    swa_full: bool | None = None,
    kv_unified: bool | None = None,
    build: int | None = None,
    gpu: GpuSpec | None = None,
    gpu_count: int | None = None,
    n_gpu_layers: int | None = None,
    weights_bytes: float | None = None,
    mla_gguf: bool | None = None,
    layer_kv_heads: Sequence[int] | None = None,
    gguf_type: str | None = None,
) -> LlamaCppStartup:
    """What :func:`llamacpp_startup` gives for `model` with the settings the log shows.

    Taken from the log where it prints them: n_ctx (else kv_size or the cells of the first
    'size =' line), n_seq_max, kv_unified (or streams = 1), flash_attn ('auto' sizes as on),
    n_batch, n_ubatch, --swa-full, the cache types and the build (else the format's era).
    A quantised V cache implies flash attention was on. An MLA model whose log shows the
    per-head K width (n_embd_k_gqa = n_head · head_dim) was converted without MLA keys
    (``mla_gguf=False``); so was one whose first cache summary holds per-head K rows
    (:func:`_per_head_mla_gguf`). Everything else comes from the keywords (those of llamacpp_startup; None: not given).
    """
    given: dict[str, object] = {
        "ctx_size": ctx_size,
        "parallel": parallel,
        "cache_type_k": cache_type_k,
        "cache_type_v": cache_type_v,
        "ubatch_size": ubatch_size,
        "batch_size": batch_size,
        "flash_attn": flash_attn,
        "swa_full": swa_full,
        "kv_unified": kv_unified,
        "build": build,
        "gpu": gpu,
        "gpu_count": gpu_count,
        "n_gpu_layers": n_gpu_layers,
        "weights_bytes": weights_bytes,
        "mla_gguf": mla_gguf,
        "layer_kv_heads": layer_kv_heads,
        "gguf_type": gguf_type,
    }
    options = {name: value for name, value in given.items() if value is not None}
    given_build = options.pop("build", None)
    rules = log.build or given_build or _FORMAT_BUILD.get(log.format or "", NEWEST_LLAMACPP_BUILD)
    first = log.caches[0] if log.caches else None
    given_ctx = options.pop("ctx_size", None)
    ctx = log.n_ctx or log.kv_size or (first.cells if first and first.cells else None) or given_ctx
    if ctx is None:
        raise KvError(
            "llamacpp_log_no_context",
            "the log prints no context size (n_ctx, kv_size or cells) and none was given",
        )
    if log.n_seq_max is not None:
        options["parallel"] = log.n_seq_max
    elif first is not None and first.n_seq_max:
        options["parallel"] = first.n_seq_max
    if log.kv_unified is not None:
        options["kv_unified"] = log.kv_unified
    elif first is not None and first.streams is not None:
        options["kv_unified"] = first.streams == 1
    if log.flash_attn is not None:
        options["flash_attn"] = log.flash_attn
    if log.n_ubatch is not None:
        options["ubatch_size"] = log.n_ubatch
    if log.n_batch is not None:
        options["batch_size"] = log.n_batch
    if log.swa_full:
        options["swa_full"] = True
    type_k = log.type_k or (first.type_k if first else None)
    type_v = log.type_v or (first.type_v if first else None)
    if type_k:
        options["cache_type_k"] = type_k
    if type_v:
        options["cache_type_v"] = type_v
    if "flash_attn" not in options and type_v and LLAMACPP_CACHE_TYPES.get(type_v, (0, 1))[1] > 1:
        options["flash_attn"] = True  # a quantised V cache started, so flash attention was on
    if _per_head_mla_gguf(log, model):
        options.setdefault("mla_gguf", False)
    return llamacpp_startup(model, ctx_size=int(str(ctx)), build=int(str(rules)), **options)  # type: ignore[arg-type]


def reconcile_llamacpp(
    log: LlamaCppLog,
    model: ModelSpec,
    *,
    ctx_size: int | None = None,
    parallel: int | None = None,
    cache_type_k: str | None = None,
    cache_type_v: str | None = None,
    ubatch_size: int | None = None,
    batch_size: int | None = None,
    flash_attn: bool | None = None,
    swa_full: bool | None = None,
    kv_unified: bool | None = None,
    build: int | None = None,
    gpu: GpuSpec | None = None,
    gpu_count: int | None = None,
    n_gpu_layers: int | None = None,
    weights_bytes: float | None = None,
    mla_gguf: bool | None = None,
    layer_kv_heads: Sequence[int] | None = None,
    gguf_type: str | None = None,
) -> tuple[Check, ...]:
    """Every KV number the log printed, recomputed by :func:`llamacpp_startup` from the model.

    The settings are those of :func:`llamacpp_startup_from_log` (the log's own, else
    the keywords). The printed n_ctx is already padded, so padding it again changes nothing.
    Checks: the model's shape as the GGUF gives it (n_layer, n_head_kv, n_embd_k_gqa, n_swa);
    n_ctx and kv_size; per printed cache its cells, layers, streams, size, K and V bytes (each
    within half of the printed 0.01 MiB); the iSWA cell counts; the sum of the 'KV buffer size'
    lines against every cache together; the recurrent state.
    """
    if not log.caches and not log.iswa_cells and log.kv_size is None and not log.buffers:
        return (cannot_check("kv_cache", "bytes", "the log prints no KV cache line"),)
    given: dict[str, object] = {
        "ctx_size": ctx_size,
        "parallel": parallel,
        "cache_type_k": cache_type_k,
        "cache_type_v": cache_type_v,
        "ubatch_size": ubatch_size,
        "batch_size": batch_size,
        "flash_attn": flash_attn,
        "swa_full": swa_full,
        "kv_unified": kv_unified,
        "build": build,
        "gpu": gpu,
        "gpu_count": gpu_count,
        "n_gpu_layers": n_gpu_layers,
        "weights_bytes": weights_bytes,
        "mla_gguf": mla_gguf,
        "layer_kv_heads": layer_kv_heads,
        "gguf_type": gguf_type,
    }
    options = {name: value for name, value in given.items() if value is not None}
    try:
        startup = llamacpp_startup_from_log(log, model, **options)  # type: ignore[arg-type]
    except KvError as error:
        return (cannot_check("kv_cache", "bytes", f"kvcore cannot size this cache: {error}"),)
    if _per_head_mla_gguf(log, model):
        options.setdefault("mla_gguf", False)
    checks_out: list[Check] = []
    # The model's shape as llama.cpp read it from the GGUF (print_info / llm_load_print_meta).
    if log.n_layer_meta is not None:
        checks_out.append(verdict("n_layer", "layers", log.n_layer_meta, model.num_hidden_layers))
    attention = [layer for layer in model.layers if layer.kind in ("full", "sliding")]
    if log.n_head_kv is not None and attention:
        checks_out.append(verdict("n_head_kv", "heads", log.n_head_kv, attention[0].num_key_value_heads))
    widths = llamacpp_layer_widths(model, build=startup.build, mla_gguf=bool(options.get("mla_gguf", True)))
    if log.n_embd_k_gqa is not None and widths:
        checks_out.append(verdict("n_embd_k_gqa", "values", log.n_embd_k_gqa, widths[0][1]))
    if log.n_swa is not None:
        window = float(model.sliding_window or 0) if model.count("sliding") else 0.0
        checks_out.append(verdict("n_swa", "tokens", log.n_swa, window))
    if log.kv_size is not None:
        checks_out.append(verdict("kv_size", "cells", log.kv_size, startup.cells))
    if log.n_ctx is not None:
        checks_out.append(verdict("n_ctx", "tokens", log.n_ctx, startup.n_ctx))
    names = {"non-SWA": 0, "SWA": 1}
    for name, cells in log.iswa_cells:
        index = names[name]
        if index < len(startup.caches):
            checks_out.append(
                verdict(f"iswa_{name.lower().replace('-', '_')}_cells", "cells", cells, startup.caches[index].cells)
            )
        else:
            checks_out.append(
                cannot_check(f"iswa_{name}_cells", "cells", "kvcore sees no sliding layers in this model", cells)
            )
    printed = [cache for cache in log.caches]
    if printed and printed[0].prefix == "KV self size":
        cache = printed[0]
        checks_out.extend(
            [
                verdict("kv_self_bytes", "bytes", cache.size_bytes, startup.kv_bytes, cache.half_step_bytes),
                verdict("k_bytes", "bytes", cache.k_bytes, startup.k_bytes, cache.half_step_bytes),
                verdict("v_bytes", "bytes", cache.v_bytes, startup.v_bytes, cache.half_step_bytes),
            ]
        )
    else:
        for index, cache in enumerate(printed):
            tag = "" if len(printed) == 1 else ("_swa" if index == 1 else "_full")
            if index >= len(startup.caches):
                checks_out.append(
                    cannot_check(f"cache{tag}_bytes", "bytes", "kvcore makes fewer caches", cache.size_bytes)
                )
                continue
            mine = startup.caches[index]
            if cache.cells is not None:
                checks_out.append(verdict(f"cells{tag}", "cells", cache.cells, mine.cells))
            if cache.layers is not None:
                checks_out.append(verdict(f"layers{tag}", "layers", cache.layers, mine.layers))
            if cache.streams is not None:
                checks_out.append(verdict(f"streams{tag}", "streams", cache.streams, mine.streams))
            step = cache.half_step_bytes
            checks_out.extend(
                [
                    verdict(f"size{tag}_bytes", "bytes", cache.size_bytes, mine.kv_bytes, step),
                    verdict(f"k{tag}_bytes", "bytes", cache.k_bytes, mine.k_bytes, step),
                    verdict(f"v{tag}_bytes", "bytes", cache.v_bytes, mine.v_bytes, step),
                ]
            )
    if log.buffers:
        logged = sum(value for _, value, _ in log.buffers)
        step = sum(half for _, _, half in log.buffers)
        expected = float(startup.kv_bytes)
        checks_out.append(verdict("kv_buffer_bytes", "bytes", logged, expected, step))
    if log.recurrent_bytes is not None:
        if model.linear_state_values:
            half = log.half_step.get("recurrent_bytes", 0.0)
            checks_out.append(verdict("recurrent_bytes", "bytes", log.recurrent_bytes, startup.recurrent_bytes, half))
        else:
            checks_out.append(
                cannot_check("recurrent_bytes", "bytes", "the model lists no recurrent state size", log.recurrent_bytes)
            )
    return tuple(checks_out)
