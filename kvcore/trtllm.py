"""TensorRT-LLM: how its KV cache manager sizes the paged pool, the lines it prints, and its log reader.

TensorRT-LLM keeps the KV cache in blocks of ``tokens_per_block`` tokens. One block holds, for
every layer of the pool, K and V (``kvFactor`` 2; MLA stores one latent, kvFactor 1) of
num_kv_heads / TP heads × head_dim values, so one token costs

    bytes_per_token = Σ_layers kvFactor · kv_heads_per_gpu · head_dim · bytes_per_value

(``BaseKVCacheManager::calculateCacheSizePerTokenForSingleWindowSize`` in
cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp). Two paths reach the pool:

* the C++ executor of a TensorRT engine (``backend="trt"``): ``calculateFreeMemBytes`` reads the
  memory free once the engine, its execution context and runtime buffers are loaded
  (cudaMemGetInfo + the pool's free bytes, printed as "available"), keeps
  ``free_gpu_memory_fraction`` of it (0.9 by default, ``KvCacheConfig::kDefaultGpuMemFraction``),
  and ``calculateMaxNumBlocks`` turns it into max_tokens = ⌊free · fraction / bytes_per_token⌋,
  capped by ``max_tokens_in_paged_kv_cache``, then ⌈max_tokens / tokens_per_block⌉ primary blocks;
  the host pool (``host_cache_size`` bytes) gets ⌊⌊host / bytes_per_token⌋ / tokens_per_block⌋
  secondary blocks;
* the PyTorch backend (``backend="pytorch"``, the default of ``trtllm-serve`` from 1.0):
  ``KvCacheCreator`` (tensorrt_llm/_torch/pyexecutor/_util.py) first builds a small cache for a
  profiling run, measures the peak (torch + non-torch), and keeps
  (total − peak + the profiling cache) · fraction ("Estimated max memory in KV cache");
  max_tokens = ⌊that / bytes_per_token⌋ is handed to the C++ manager, which rounds it up to whole
  blocks.

Every rank gets the same count (an MPI all-reduce MIN). The allocated bytes the engine prints
are blocks · tokens_per_block · bytes_per_token, the tokens blocks · tokens_per_block.

Releases modelled (``TRTLLM_RELEASES``): "0.13" (TensorRT engines, tokens_per_block 64 by
default, "Max KV cache pages per sequence"), "0.19" (tokens_per_block 32 by default, the
release of issue #4275's log) and "1.1" (the PyTorch backend, its profiling lines and the
"Max KV cache blocks per sequence: … [window size=…]" line). Per-window pools for variable
sliding windows (``max_attention_window`` with several sizes, 0.20+) are not modelled: every
layer counts at every token, as TensorRT-LLM does when one window is set (the default).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from . import checks
from .budget import BudgetTerm
from .dtypes import bytes_per_value, dtype_name
from .errors import KvError
from .hardware import GpuSpec
from .kv import kv_bytes_per_token
from .log_lines import (
    INT_PATTERN,
    NUMBER_PATTERN,
    Check,
    CheckStatus,
    RecognisedLine,
    cannot_check,
    log_pattern,
    read_patterns,
    verdict,
)
from .memory import checkpoint_weights
from .model import ModelSpec
from .units import GiB

__all__ = [
    "TRTLLM_DEFAULT_RELEASE",
    "TRTLLM_MARKERS",
    "TRTLLM_RELEASES",
    "TrtllmLog",
    "TrtllmStartup",
    "parse_trtllm_log",
    "reconcile_trtllm",
    "trtllm_bytes_per_token",
    "trtllm_cpp_max_tokens",
    "trtllm_default_tokens_per_block",
    "trtllm_startup",
]

#: The releases whose rules and line formats are modelled, oldest first.
TRTLLM_RELEASES: tuple[str, ...] = ("0.13", "0.19", "1.1")
TRTLLM_DEFAULT_RELEASE = "1.1"
Backend = Literal["pytorch", "trt"]

#: Lines only TensorRT-LLM prints (its C++ logger prefix, its Python logger prefix, its pool lines).
TRTLLM_MARKERS: re.Pattern[str] = re.compile(
    r"\[TensorRT-LLM\]\[(?:INFO|WARNING|ERROR|DEBUG)\]|\[TRT-LLM\]\s*(?:\[RANK \d+\]\s*)?\[[IWE]\]"
    r"|for max tokens in paged KV cache|Number of blocks in KV cache primary pool"
    r"|Estimated max memory in KV cache"
)

#: KvCacheConfig::kDefaultGpuMemFraction (cpp/include/tensorrt_llm/executor/executor.h), the same 0.9
#: as the LLM API's KvCacheConfig.free_gpu_memory_fraction (tensorrt_llm/llmapi/llm_args.py).
DEFAULT_FRACTION = 0.9
#: What the engine and its runtime take before the free memory is read, when no log gives it.
ASSUMED_TRT_RUNTIME_BYTES = 1.5 * GiB
#: Activation peak plus memory outside torch (CUDA context, NCCL, CUDA graphs) of the profiling run.
ASSUMED_TORCH_PROFILING_BYTES = 2.0 * GiB
_KV_DTYPES = {"auto", "fp16", "bf16", "fp8", "int8", "fp32"}


def trtllm_default_tokens_per_block(release: str = TRTLLM_DEFAULT_RELEASE, backend: Backend = "pytorch") -> int:
    """tokens_per_block when not given: 32 for the PyTorch backend and for engines built by 0.19+, 64 for 0.13.

    Sources: the LLM API's ``KvCacheConfig.tokens_per_block = 32`` (tensorrt_llm/llmapi/llm_args.py,
    1.x); the engine builder's ``PluginConfig._tokens_per_block`` (tensorrt_llm/plugin/plugin.py), 64 in
    the 0.12–0.13 file (where ``_use_paged_context_fmha`` still defaults to False) and 32 in later ones
    (with paged context FMHA on by default). The logs agree: "Number of tokens per block: 64." in 0.13
    (issue #2268's release; docs/source/reference/memory.md) and "32." in 0.19 (issue #4275's log,
    built without --tokens_per_block). Releases between 0.13 and 0.19 are not pinned here.
    """
    return 64 if backend == "trt" and _release(release) == "0.13" else 32


def trtllm_bytes_per_token(model: ModelSpec, *, kv_cache_dtype: str = "auto", tp: int = 1) -> int:
    """Bytes one token takes in TensorRT-LLM's pool on one GPU [bytes/token].

    Formula: Σ_layers kvFactor · kv_heads_per_gpu · head_dim · b, with kvFactor 2 (K and V) for
    full and sliding layers and 1 for MLA, whose one latent of kv_lora_rank + qk_rope_head_dim
    values (``CacheType::kSELFKONLY``, num_kv_heads 1) sits whole on every rank; linear-attention
    layers keep their state outside this pool. b is 2 for "auto" (the checkpoint's fp16/bf16), 1 for
    fp8/int8. Source: ``BaseKVCacheManager::calculateCacheSizePerTokenForSingleWindowSize`` and
    ``WindowBlockManager`` (``mKVFactor``), cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp (0.20);
    ``get_cache_size_per_token`` in tensorrt_llm/_torch/pyexecutor/resource_manager.py (1.1), which
    prints it as "kv size is …". Llama-3.1-8B in BF16: 32 · 2 · 8 · 128 · 2 = 131,072.

    >>> from kvcore.data import load_models
    >>> trtllm_bytes_per_token(load_models()["llama-3.1-8b"])
    131072
    """
    # The same per-layer values as every engine's (kvcore.kv.layer_values_per_token): linear layers add none.
    return round(kv_bytes_per_token(model, bytes_per_value=_kv_bytes_per_value(kv_cache_dtype), tp=tp))


@dataclass(frozen=True, slots=True, kw_only=True)
class TrtllmStartup:
    """One TensorRT-LLM start-up: the pool per GPU, its blocks, and the lines the engine prints.

    ``available_bytes`` is the memory the manager starts from: for the C++ path the free memory
    after the engine loaded ("available" in its line), for the PyTorch backend total − peak + the
    profiling cache. ``kv_memory_bytes`` is the share of it kept (× fraction), ``kv_pool_bytes``
    the bytes the blocks really take (printed as "Allocated … GiB").
    """

    engine: str = "trtllm"
    release: str
    backend: Backend
    tp: int
    kv_cache_dtype: str
    bytes_per_token: int
    tokens_per_block: int
    free_gpu_memory_fraction: float
    max_tokens_in_paged_kv_cache: int | None
    total_memory_bytes: float | None
    available_bytes: float
    kv_memory_bytes: float
    max_tokens: int
    primary_blocks: int
    secondary_blocks: int
    host_cache_size: int
    tokens: int
    kv_pool_bytes: float
    max_seq_len: int | None
    peak_memory_bytes: float | None
    profiling_kv_bytes: float
    fits: bool
    terms: tuple[BudgetTerm, ...] = field(default=())

    @property
    def num_blocks(self) -> int:
        """Primary (GPU) blocks."""
        return self.primary_blocks

    @property
    def allocated_bytes(self) -> float:
        """Bytes of the primary pool, what "[MemUsageChange] Allocated … GiB" prints."""
        return self.kv_pool_bytes

    def max_concurrency(self, context_tokens: int) -> float:
        """Requests of `context_tokens` that fit at once: primary_blocks ÷ ⌈context / tokens_per_block⌉.

        A sequence holds whole blocks (``KVCacheManager::getRemainingBlocksToCompletion``), never shared
        without block reuse.
        """
        context = checks.whole("context tokens", context_tokens)
        return self.primary_blocks / math.ceil(context / self.tokens_per_block)

    def lines(self) -> list[str]:
        """The start-up lines this release prints about the pool, in its own format and rounding.

        PyTorch backend (1.1.0rc3's log): the profiling estimate (_util.py ``_cal_max_memory`` and
        ``configure_kv_cache_capacity``), the C++ warning that both the fraction and max_tokens are set,
        the shortened attention window when max_seq_len does not fit, then ``KVCacheManager::allocatePools``.
        C++ path (0.13/0.19): ``calculateFreeMemBytes``, ``calculateMaxNumBlocks``, the pages per sequence
        of ``TrtGptModelInflightBatching`` when max_seq_len is known, then ``allocatePools``. Numbers are
        printed with %0.2f in GiB (2**30 bytes), as the engine does.
        """
        gib = float(GiB)
        out: list[str] = []
        if self.backend == "pytorch":
            fraction = _float32(self.free_gpu_memory_fraction)
            total = self.total_memory_bytes or 0.0
            out.append(
                "[TRT-LLM] [I] Peak memory during memory usage profiling (torch + non-torch): "
                f"{(self.peak_memory_bytes or 0.0) / gib:.2f} GiB, available KV cache memory when calculating max "
                f"tokens: {self.available_bytes * fraction / gib:.2f} GiB, fraction is set {fraction}, kv size is "
                f"{self.bytes_per_token}. device total memory {total / gib:.2f} GiB, , tmp kv_mem "
                f"{self.profiling_kv_bytes / gib:.2f} GiB"
            )
            out.append(f"[TRT-LLM] [I] Estimated max memory in KV cache : {self.kv_memory_bytes / gib:.2f} GiB")
            out.append(
                "[TRT-LLM] [W] Both free_gpu_memory_fraction and max_tokens are set (to "
                f"{fraction} and {self.max_tokens}, respectively). The smaller value will be used."
            )
            if self.max_seq_len and self.max_seq_len > self.tokens:
                out.append(
                    f"[TRT-LLM] [W] Attention window size {self.max_seq_len} exceeds upper bound {self.tokens} "
                    f"for available blocks. Reducing to {self.tokens}."
                )
        else:
            out.append(
                "[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: "
                f"{(self.total_memory_bytes or 0.0) / gib:.2f} GiB, available: {self.available_bytes / gib:.2f} GiB"
            )
            out.append(f"[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: {self.primary_blocks}")
            out.append(
                f"[TensorRT-LLM][INFO] Number of blocks in KV cache secondary pool: {self.secondary_blocks}, "
                "onboard blocks to primary memory before reuse: true"
            )
            if self.max_seq_len:
                pages = math.ceil(self.max_seq_len / self.tokens_per_block)
                out.append(f"[TensorRT-LLM][INFO] Max KV cache pages per sequence: {pages}")
        out.append(f"[TensorRT-LLM][INFO] Number of tokens per block: {self.tokens_per_block}.")
        out.append(
            f"[TensorRT-LLM][INFO] [MemUsageChange] Allocated {self.kv_pool_bytes / gib:.2f} GiB for max tokens "
            f"in paged KV cache ({self.tokens})."
        )
        return out

    def as_json(self) -> dict[str, object]:
        """The start-up as plain JSON values (bytes, tokens, blocks)."""
        return {
            "engine": self.engine,
            "release": self.release,
            "backend": self.backend,
            "tp": self.tp,
            "kv_cache_dtype": self.kv_cache_dtype,
            "bytes_per_token": self.bytes_per_token,
            "tokens_per_block": self.tokens_per_block,
            "free_gpu_memory_fraction": self.free_gpu_memory_fraction,
            "total_memory_bytes": self.total_memory_bytes,
            "available_bytes": self.available_bytes,
            "kv_memory_bytes": self.kv_memory_bytes,
            "max_tokens": self.max_tokens,
            "max_tokens_in_paged_kv_cache": self.tokens,
            "num_blocks": self.primary_blocks,
            "primary_blocks": self.primary_blocks,
            "secondary_blocks": self.secondary_blocks,
            "host_cache_size": self.host_cache_size,
            "allocated_bytes": self.kv_pool_bytes,
            "kv_pool_bytes": self.kv_pool_bytes,
            "tokens": self.tokens,
            "fits": self.fits,
            "terms": [{"name": t.name, "bytes": t.bytes, "source": t.source} for t in self.terms],
        }


def trtllm_startup(
    model: ModelSpec,
    *,
    gpu: GpuSpec | None = None,
    tp: int = 1,
    free_gpu_memory_fraction: float | None = None,
    tokens_per_block: int | None = None,
    max_tokens_in_paged_kv_cache: int | None = None,
    kv_cache_dtype: str = "auto",
    host_cache_size: int = 0,
    release: str | None = None,
    backend: Backend = "pytorch",
    weights_bytes: float | None = None,
    weights_dtype: str | None = None,
    free_memory_bytes: float | None = None,
    total_memory_bytes: float | None = None,
    peak_memory_bytes: float | None = None,
    max_seq_len: int | None = None,
    max_num_tokens: int = 8192,
) -> TrtllmStartup:
    """The pool TensorRT-LLM builds for `model` (per GPU), following the release's rules.

    C++ path (``backend="trt"``): available = free memory after the engine loaded (given as
    ``free_memory_bytes``, else total − weights − ``ASSUMED_TRT_RUNTIME_BYTES``);
    max_tokens = ⌊⌊available · fraction⌋ / bytes_per_token⌋, min with max_tokens_in_paged_kv_cache
    (only max_tokens when it is given without a fraction); blocks = ⌈max_tokens / tokens_per_block⌉
    (``calculateFreeMemBytes`` and ``calculateMaxNumBlocks``, kvCacheManager.cpp, 0.13–0.20).
    PyTorch backend: available = total − peak + profiling cache (``free_memory_bytes`` gives it
    directly; else peak = weights + ``ASSUMED_TORCH_PROFILING_BYTES``), kept · fraction,
    min with max_tokens · bytes_per_token; max_tokens = ⌊that / bytes_per_token⌋, then whole blocks
    (``KvCacheCreator._cal_max_memory`` and ``configure_kv_cache_capacity``, _util.py, 1.1).
    Bytes, tokens and blocks are per GPU; TP ranks agree on the smallest count.

    >>> from kvcore.data import load_models
    >>> run = trtllm_startup(load_models()["llama-3.1-8b"], backend="trt", release="0.19",
    ...                      free_memory_bytes=20 * 2**30)
    >>> run.primary_blocks, run.tokens, run.lines()[-1].split("] ")[-1]
    (4608, 147456, 'Allocated 18.00 GiB for max tokens in paged KV cache (147456).')
    """
    release = _release(release or TRTLLM_DEFAULT_RELEASE)
    if backend not in ("pytorch", "trt"):
        raise KvError("trtllm_unknown_backend", f"unknown backend {backend!r}: use 'pytorch' or 'trt'", value=backend)
    tp = checks.whole("tensor parallel size", tp)
    dtype = _kv_dtype(kv_cache_dtype)
    tpb = checks.whole("tokens per block", tokens_per_block or trtllm_default_tokens_per_block(release, backend))
    fraction_given = free_gpu_memory_fraction is not None
    fraction = DEFAULT_FRACTION if free_gpu_memory_fraction is None else float(free_gpu_memory_fraction)
    if not 0.0 < fraction < 1.0:
        raise KvError(
            "trtllm_bad_fraction",
            f"free_gpu_memory_fraction must be above 0 and below 1 (got {fraction}); TensorRT-LLM refuses 1.0",
            value=fraction,
        )
    cap = None if max_tokens_in_paged_kv_cache is None else checks.whole("max tokens", max_tokens_in_paged_kv_cache)
    host = int(checks.whole("host cache size", host_cache_size, minimum=0))
    bpt = trtllm_bytes_per_token(model, kv_cache_dtype=dtype, tp=tp)
    if bpt <= 0:
        raise KvError(
            "trtllm_no_kv_layers", f"{model.name!r} has no layer that TensorRT-LLM's KV pool holds", model=model.name
        )

    total = total_memory_bytes
    if total is None and gpu is not None:
        total = gpu.reported_memory_bytes
    terms: list[BudgetTerm] = []
    weights = 0.0
    if free_memory_bytes is None and total is not None:
        weights = (
            float(weights_bytes)
            if weights_bytes is not None
            else checkpoint_weights(model, weights_dtype=weights_dtype, tp=tp).total_bytes
        )
        terms.append(BudgetTerm(name="weights", bytes=weights, source="kvcore.memory.checkpoint_weights per GPU"))
    peak: float | None = peak_memory_bytes
    profiling_kv = 0.0
    if backend == "trt":
        if free_memory_bytes is not None:
            available = float(free_memory_bytes)
        elif total is not None:
            runtime = ASSUMED_TRT_RUNTIME_BYTES
            terms.append(
                BudgetTerm(
                    name="engine_runtime",
                    bytes=runtime,
                    source="assumed: execution context (activations), runtime buffers and decoder "
                    "([MemUsageChange] lines before the pool)",
                )
            )
            available = total - weights - runtime
        elif cap is not None and not fraction_given:
            available = math.inf
        else:
            raise _needs_memory()
        if math.isfinite(available):
            max_tokens = trtllm_cpp_max_tokens(available, fraction, bpt, release=release)
            kv_memory = _cpp_kept_bytes(available, fraction, release)
        else:
            max_tokens, kv_memory = 0, math.inf
        if cap is not None:
            # 0.13: a max_tokens given without a fraction replaces the memory rule; later the smaller wins.
            only_cap = release == "0.13" and not fraction_given
            max_tokens = cap if only_cap or not math.isfinite(available) else min(cap, max_tokens)
    else:
        seq = max_seq_len or model.max_position_embeddings or max_num_tokens
        max_seq_len = seq  # 1.x infers it from the model when not given ("using inferred value")
        profiling_kv = float(_profiling_tokens(seq, checks.whole("max_num_tokens", max_num_tokens), tpb) * bpt)
        if free_memory_bytes is not None:
            available = float(free_memory_bytes)
            if peak is None and total is not None:
                peak = total - available + profiling_kv
        elif total is not None:
            if peak is None:
                profiling = ASSUMED_TORCH_PROFILING_BYTES
                terms.append(
                    BudgetTerm(
                        name="profiling_peak",
                        bytes=profiling,
                        source="assumed: activation peak and memory outside torch during the profiling run",
                    )
                )
                peak = weights + profiling + profiling_kv
            available = total - peak + profiling_kv
        else:
            raise _needs_memory()
        kv_memory = available * _float32(fraction)
        if cap is not None:
            kv_memory = min(kv_memory, float(cap * bpt))
        max_tokens = int(max(kv_memory, 0.0) // bpt)
    available_finite = available if math.isfinite(available) else float(max_tokens * bpt)
    kv_finite = kv_memory if math.isfinite(kv_memory) else float(max_tokens * bpt)
    max_tokens = max(max_tokens, 0)
    blocks = math.ceil(max_tokens / tpb)
    secondary = max(0, (host // bpt) // tpb)
    tokens = blocks * tpb
    pool = float(tokens * bpt)
    terms.append(BudgetTerm(name="held_back", bytes=max(available_finite - kv_finite, 0.0), source="1 − fraction"))
    return TrtllmStartup(
        release=release,
        backend=backend,
        tp=tp,
        kv_cache_dtype=dtype,
        bytes_per_token=bpt,
        tokens_per_block=tpb,
        free_gpu_memory_fraction=fraction,
        max_tokens_in_paged_kv_cache=cap,
        total_memory_bytes=total,
        available_bytes=available_finite,
        kv_memory_bytes=kv_finite,
        max_tokens=max_tokens,
        primary_blocks=blocks,
        secondary_blocks=secondary,
        host_cache_size=host,
        tokens=tokens,
        kv_pool_bytes=pool,
        max_seq_len=max_seq_len,
        peak_memory_bytes=peak,
        profiling_kv_bytes=profiling_kv,
        fits=blocks > 0 and available_finite > 0,
        terms=tuple(terms),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TrtllmLog:
    """What a TensorRT-LLM start-up log prints about its KV cache (bytes, tokens, blocks; None: absent).

    ``*_bytes`` fields were printed in GiB. The PyTorch backend allocates the pool twice (a small
    one for the profiling run, then the real one): ``allocated_bytes`` and ``max_tokens_in_paged_kv_cache``
    are the last "[MemUsageChange] Allocated" line, ``estimation_*`` the first when there are two.
    """

    total_memory_bytes: float | None = None
    available_memory_bytes: float | None = None
    primary_blocks: int | None = None
    secondary_blocks: int | None = None
    onboard_blocks: bool | None = None
    max_pages_per_sequence: int | None = None
    window_size: int | None = None
    tokens_per_block: int | None = None
    allocated_bytes: float | None = None
    max_tokens_in_paged_kv_cache: int | None = None
    estimation_allocated_bytes: float | None = None
    estimation_tokens: int | None = None
    legacy_allocated_bytes: int | None = None
    legacy_tokens: int | None = None
    config_max_tokens: int | None = None
    final_max_tokens: int | None = None
    logged_fraction: float | None = None
    peak_memory_bytes: float | None = None
    available_kv_memory_bytes: float | None = None
    kv_size_per_token: int | None = None
    device_total_memory_bytes: float | None = None
    tmp_kv_memory_bytes: float | None = None
    estimated_max_memory_bytes: float | None = None
    weights_inside_torch_bytes: float | None = None
    engine_size_bytes: float | None = None
    execution_context_bytes: float | None = None
    runtime_buffers_bytes: float | None = None
    decoder_bytes: float | None = None
    max_seq_len: int | None = None
    max_attention_window: int | None = None
    max_num_sequences: int | None = None
    max_num_tokens: int | None = None
    max_batch_size: int | None = None
    pytorch_backend: bool = False
    trtllm_version: str | None = None
    recognised: tuple[RecognisedLine, ...] = ()
    ignored: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    truncated: bool = False
    half_step: dict[str, float] = field(default_factory=dict)


_G = r"\s*GiB"
_PATTERNS = (
    # cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, calculateFreeMemBytes (0.13–1.x)
    log_pattern(
        ("total_memory_bytes", "available_memory_bytes"),
        ("gib", "gib"),
        rf"Memory usage when calculating max tokens in paged kv cache:\s*total:\s*{NUMBER_PATTERN}{_G},"
        rf"\s*available:\s*{NUMBER_PATTERN}{_G}",
    ),
    # calculateMaxNumBlocks (0.13–0.19; 0.20+ adds " for windowSize N" at INFO, later DEBUG)
    log_pattern(
        ("primary_blocks",),
        ("int",),
        rf"Number of blocks in KV cache primary pool(?: for windowSize \d+)?:\s*{INT_PATTERN}",
    ),
    log_pattern(
        ("secondary_blocks", "onboard_blocks"),
        ("int", "bool"),
        rf"Number of blocks in KV cache secondary pool(?: for windowSize \d+)?:\s*{INT_PATTERN},"
        r"\s*onboard blocks to primary memory before reuse:\s*(true|false)",
    ),
    # trtGptModelInflightBatching.cpp (0.13–0.19)
    log_pattern(("max_pages_per_sequence",), ("int",), rf"Max KV cache pages per sequence:\s*{INT_PATTERN}"),
    # kvCacheManager.cpp BlockManager (1.x)
    log_pattern(
        ("max_pages_per_sequence", "window_size", "tokens_per_block", "primary_blocks", "secondary_blocks"),
        ("int", "int", "int", "int", "int"),
        rf"Max KV cache blocks per sequence:\s*{INT_PATTERN}\s*\[window size={INT_PATTERN}\],\s*tokens per "
        rf"block={INT_PATTERN},\s*primary blocks={INT_PATTERN}(?:,\s*secondary blocks={INT_PATTERN})?",
    ),
    # KVCacheManager::allocatePools
    log_pattern(("tokens_per_block",), ("int",), rf"Number of tokens per block:\s*{INT_PATTERN}"),
    # 0.5–0.8: "Allocate N bytes for k/v cache." and "Using N tokens in paged KV cache."
    log_pattern(("legacy_allocated_bytes",), ("int",), rf"Allocate\s+{INT_PATTERN}\s+bytes for k/v cache"),
    log_pattern(("legacy_tokens",), ("int",), rf"Using\s+{INT_PATTERN}\s+tokens in paged KV cache"),
    # tensorrt_llm/_torch/pyexecutor/_util.py (1.x)
    log_pattern(
        ("config_max_tokens",), ("int",), rf"max_tokens is set by kv_cache_config\.max_tokens:\s*{INT_PATTERN}"
    ),
    log_pattern(
        ("config_max_tokens",), ("int",), rf"Maximum kv-cache token overridden by configuration as '{INT_PATTERN}'"
    ),
    log_pattern(
        ("peak_memory_bytes", "available_kv_memory_bytes", "logged_fraction"),
        ("gib", "gib", "float"),
        rf"Peak memory during memory usage profiling \(torch \+ non-torch\):\s*{NUMBER_PATTERN}{_G},\s*available KV "
        rf"cache memory when calculating max tokens:\s*{NUMBER_PATTERN}{_G},\s*fraction is set\s*{NUMBER_PATTERN}",
    ),
    log_pattern(("kv_size_per_token",), ("int",), rf"kv size (?:per token )?is\s*{INT_PATTERN}"),
    log_pattern(("device_total_memory_bytes",), ("gib",), rf"device total memory\s*{NUMBER_PATTERN}{_G}"),
    log_pattern(
        ("tmp_kv_memory_bytes",),
        ("gib",),
        rf"(?:tmp kv_mem|temporary kv cache memory during profiling)\s*{NUMBER_PATTERN}{_G}",
    ),
    log_pattern(
        ("estimated_max_memory_bytes",), ("gib",), rf"Estimated max memory in KV cache\s*:\s*{NUMBER_PATTERN}{_G}"
    ),
    log_pattern(
        ("weights_inside_torch_bytes",),
        ("gib",),
        rf"Memory used after loading model weights \(inside torch\) in memory usage profiling:\s*{NUMBER_PATTERN}{_G}",
    ),
    log_pattern(("pytorch_backend",), ("flag",), r"Using LLM with PyTorch backend"),
    # cpp/tensorrt_llm/runtime/tllmRuntime.cpp and trtGptModelInflightBatching.cpp (0.12–0.19, TRT engines)
    log_pattern(("engine_size_bytes",), ("mib",), rf"Loaded engine size:\s*{NUMBER_PATTERN}\s*MiB"),
    log_pattern(
        ("execution_context_bytes",),
        ("mib",),
        rf"\[MemUsageChange\] Allocated\s*{NUMBER_PATTERN}\s*MiB for execution context memory",
    ),
    log_pattern(("max_seq_len",), ("int",), rf"TRTGptModel maxSequenceLen:\s*{INT_PATTERN}"),
    log_pattern(("max_attention_window",), ("int",), rf"TRTGptModel mMaxAttentionWindowSize:\s*{INT_PATTERN}"),
    log_pattern(("max_num_sequences",), ("int",), rf"TRTGptModel maxNumSequences:\s*{INT_PATTERN}"),
    # tensorrt_llm/_torch/pyexecutor/py_executor_creator.py (1.x)
    log_pattern(
        ("max_seq_len", "max_num_sequences", "max_num_tokens", "max_batch_size"),
        ("int", "int", "int", "int"),
        rf"max_seq_len={INT_PATTERN},\s*max_num_requests={INT_PATTERN},\s*max_num_tokens={INT_PATTERN}"
        rf"(?:,\s*max_batch_size={INT_PATTERN})?",
    ),
    log_pattern(
        ("trtllm_version",),
        ("str",),
        r"(?:TensorRT-LLM version:|Engine version)\s*([0-9][0-9A-Za-z.+\-]*)",
    ),
)
_ALLOCATED = re.compile(
    rf"Allocated\s*{NUMBER_PATTERN}{_G} for max tokens in paged KV cache\s*\({INT_PATTERN}\)", re.IGNORECASE
)
_BOTH = re.compile(
    rf"Both free_gpu_memory_fraction and max_tokens are set \(to\s*{NUMBER_PATTERN} and\s*{INT_PATTERN},"
)


#: MemoryCounters::bytesToString (cpp/tensorrt_llm/runtime/memoryCounters.cpp): units of 1024, so its
#: "MB" is 2**20 and its "GB" 2**30 bytes.
_COUNTER_UNITS = {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}
_COUNTER_LINE = re.compile(
    rf"\[MemUsageChange\] Allocated\s*{NUMBER_PATTERN}\s*(B|KB|MB|GB|TB) GPU memory for (runtime buffers|decoder)"
)


def _memory_counter_lines(joined: str) -> dict[str, tuple[float, float]]:
    """The runtime-buffer and decoder allocations, in bytes, with half of their last printed digit."""
    found: dict[str, tuple[float, float]] = {}
    for match in _COUNTER_LINE.finditer(joined):
        name = "runtime_buffers_bytes" if match.group(3) == "runtime buffers" else "decoder_bytes"
        if name in found:
            continue
        raw, scale = match.group(1).replace(",", ""), _COUNTER_UNITS[match.group(2)]
        decimals = len(raw.partition(".")[2])
        found[name] = (float(raw) * scale, 0.5 * 10.0**-decimals * scale)
    return found


def parse_trtllm_log(text: str | bytes) -> TrtllmLog:
    """Read a TensorRT-LLM start-up log: every number it prints about the paged KV cache.

    Matches the engine's own message formats (the source of each is beside its regex) anywhere in a
    line, across line wraps; GiB values become bytes. Never raises.

    >>> log = parse_trtllm_log("[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 631")
    >>> log.primary_blocks
    631
    """
    try:
        return _parse(text)
    except Exception:  # a last guard: the page must show something for any paste
        return TrtllmLog()


def _parse(text: str | bytes) -> TrtllmLog:
    reading = read_patterns(text, (*_PATTERNS, log_pattern(("_alloc",), ("flag",), _ALLOCATED.pattern, re.I)))
    values = {k: v for k, v in reading.values.items() if not k.startswith("_")}
    half = dict(reading.half_step)
    allocations = [
        (float(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")))
        for m in _ALLOCATED.finditer(reading.joined)
    ]
    both = [int(m.group(2).replace(",", "")) for m in _BOTH.finditer(reading.joined)]
    extra: dict[str, object] = {}
    if allocations:
        last_gib, last_tokens = allocations[-1]
        extra["allocated_bytes"] = last_gib * GiB
        extra["max_tokens_in_paged_kv_cache"] = last_tokens
        half["allocated_bytes"] = 0.005 * GiB
        if len(allocations) > 1:
            extra["estimation_allocated_bytes"] = allocations[0][0] * GiB
            extra["estimation_tokens"] = allocations[0][1]
    for name, match in _memory_counter_lines(reading.joined).items():
        extra[name], half[name] = match
    if both:
        extra["final_max_tokens"] = both[-1]
    # Printed again on purpose: per rank or window (block counts), and by the PyTorch backend's two passes
    # (the profiling pool, then the real one: max_seq_len, config_max_tokens). The last value is the pool's.
    repeated = ("primary_blocks", "secondary_blocks", "max_pages_per_sequence", "max_seq_len", "config_max_tokens")
    conflicts = tuple(name for name in reading.conflicts if name != "_alloc" and name not in repeated)
    for name in repeated:
        if name in reading.occurrences:
            values[name] = reading.occurrences[name][-1]
    return TrtllmLog(
        **values,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
        recognised=reading.recognised,
        ignored=reading.ignored,
        conflicts=conflicts,
        truncated=reading.truncated,
        half_step=half,
    )


def reconcile_trtllm(
    log: TrtllmLog,
    model: ModelSpec,
    *,
    tp: int = 1,
    kv_cache_dtype: str = "auto",
    tokens_per_block: int | None = None,
    free_gpu_memory_fraction: float | None = None,
    host_cache_size: int = 0,
    max_tokens_in_paged_kv_cache: int | None = None,
    max_seq_len: int | None = None,
    release: str | None = None,
) -> tuple[Check, ...]:
    """Every number the log printed, recomputed by kvcore from the model and the settings.

    Inputs taken from the log where it prints them: the free ("available") memory, the profiling
    peak, total and temporary cache, tokens_per_block, the fraction. Checks (kind = the log field):
    kv_size_per_token (bytes/token, exact); primary_blocks from available · fraction (the range the
    printed two decimals allow); secondary_blocks from host_cache_size; max_pages_per_sequence from
    max_seq_len; max_tokens_in_paged_kv_cache = blocks · tokens_per_block; allocated_bytes = tokens ·
    bytes_per_token (± 0.005 GiB); for the PyTorch backend available_kv_memory_bytes = (total − peak +
    tmp) · fraction, estimated_max_memory_bytes, final_max_tokens = ⌊memory / bytes_per_token⌋.
    """
    checks_: list[Check] = []
    half = log.half_step
    release = _release(release or _log_release(log.trtllm_version) or TRTLLM_DEFAULT_RELEASE)
    bpt = trtllm_bytes_per_token(model, kv_cache_dtype=kv_cache_dtype, tp=tp)
    tpb = log.tokens_per_block or tokens_per_block
    fraction = log.logged_fraction if log.logged_fraction is not None else free_gpu_memory_fraction
    if fraction is None:
        fraction = DEFAULT_FRACTION
    if log.kv_size_per_token is not None:
        checks_.append(verdict("kv_size_per_token", "bytes_per_token", log.kv_size_per_token, bpt))

    # C++ path: blocks from the free memory.
    if log.primary_blocks is not None and log.available_memory_bytes is not None and tpb:
        step = half.get("available_memory_bytes", 0.0)

        cap = max_tokens_in_paged_kv_cache if max_tokens_in_paged_kv_cache is not None else log.config_max_tokens

        def blocks(free: float) -> int:
            tokens = trtllm_cpp_max_tokens(free, fraction, bpt, release=release)
            if cap is not None:
                tokens = min(tokens, cap)
            return math.ceil(tokens / tpb)

        free = log.available_memory_bytes
        low, mid, high = blocks(free - step), blocks(free), blocks(free + step)
        status: CheckStatus = "agree" if low <= log.primary_blocks <= high else "differ"
        checks_.append(
            Check(
                kind="primary_blocks",
                status=status,
                unit="blocks",
                logged=float(log.primary_blocks),
                expected=float(mid),
                low=float(low),
                high=float(high),
            )
        )
    elif log.primary_blocks is not None:
        checks_.append(
            cannot_check("primary_blocks", "blocks", "the log does not print the free memory or the block size")
        )
    if log.secondary_blocks is not None and tpb:
        expected = (host_cache_size // bpt) // tpb
        checks_.append(verdict("secondary_blocks", "blocks", log.secondary_blocks, expected))
    if log.max_pages_per_sequence is not None:
        window = log.window_size or log.max_attention_window or max_seq_len or log.max_seq_len
        if window and tpb:
            checks_.append(
                verdict("max_pages_per_sequence", "blocks", log.max_pages_per_sequence, math.ceil(window / tpb))
            )
        else:
            checks_.append(
                cannot_check("max_pages_per_sequence", "blocks", "give max_seq_len (the engine's max sequence)")
            )

    # PyTorch backend: the profiling estimate.
    if log.available_kv_memory_bytes is not None:
        if log.device_total_memory_bytes is not None and log.peak_memory_bytes is not None:
            tmp = log.tmp_kv_memory_bytes or 0.0
            inputs = half.get("device_total_memory_bytes", 0.0) + half.get("peak_memory_bytes", 0.0)
            inputs += half.get("tmp_kv_memory_bytes", 0.0)
            expected_mem = (log.device_total_memory_bytes - log.peak_memory_bytes + tmp) * fraction
            step = inputs * fraction + half.get("available_kv_memory_bytes", 0.0)
            checks_.append(
                verdict("available_kv_memory_bytes", "bytes", log.available_kv_memory_bytes, expected_mem, step)
            )
        else:
            checks_.append(
                cannot_check("available_kv_memory_bytes", "bytes", "the log does not print the total and the peak")
            )
    if log.estimated_max_memory_bytes is not None and log.available_kv_memory_bytes is not None:
        expected_mem = log.available_kv_memory_bytes
        if max_tokens_in_paged_kv_cache is not None:
            expected_mem = min(expected_mem, float(max_tokens_in_paged_kv_cache * bpt))
        step = half.get("available_kv_memory_bytes", 0.0) + half.get("estimated_max_memory_bytes", 0.0)
        checks_.append(
            verdict("estimated_max_memory_bytes", "bytes", log.estimated_max_memory_bytes, expected_mem, step)
        )
    if log.final_max_tokens is not None and log.estimated_max_memory_bytes is not None:
        step = half.get("estimated_max_memory_bytes", 0.0)
        mem = log.estimated_max_memory_bytes
        low, high = int((mem - step) // bpt), int((mem + step) // bpt)
        final_status: CheckStatus = "agree" if low <= log.final_max_tokens <= high else "differ"
        checks_.append(
            Check(
                kind="final_max_tokens",
                status=final_status,
                unit="tokens",
                logged=float(log.final_max_tokens),
                expected=float(mem // bpt),
                low=float(low),
                high=float(high),
            )
        )

    # The pool itself.
    if log.max_tokens_in_paged_kv_cache is not None:
        requested = log.final_max_tokens or log.config_max_tokens
        if log.primary_blocks is not None and tpb:
            checks_.append(
                verdict(
                    "max_tokens_in_paged_kv_cache", "tokens", log.max_tokens_in_paged_kv_cache, log.primary_blocks * tpb
                )
            )
        elif requested is not None and tpb:
            expected_tokens = math.ceil(requested / tpb) * tpb
            checks_.append(
                verdict("max_tokens_in_paged_kv_cache", "tokens", log.max_tokens_in_paged_kv_cache, expected_tokens)
            )
        else:
            checks_.append(
                cannot_check(
                    "max_tokens_in_paged_kv_cache",
                    "tokens",
                    "the log prints neither the blocks nor the requested tokens",
                )
            )
        if log.allocated_bytes is not None:
            checks_.append(
                verdict(
                    "allocated_bytes",
                    "bytes",
                    log.allocated_bytes,
                    float(log.max_tokens_in_paged_kv_cache * bpt),
                    half.get("allocated_bytes", 0.005 * GiB),
                )
            )
    if log.estimation_allocated_bytes is not None and log.estimation_tokens is not None:
        checks_.append(
            verdict(
                "estimation_allocated_bytes",
                "bytes",
                log.estimation_allocated_bytes,
                float(log.estimation_tokens * bpt),
                0.005 * GiB,
            )
        )
    if log.tmp_kv_memory_bytes is not None and log.estimation_tokens is not None:
        checks_.append(
            verdict(
                "tmp_kv_memory_bytes",
                "bytes",
                log.tmp_kv_memory_bytes,
                float(log.estimation_tokens * bpt),
                half.get("tmp_kv_memory_bytes", 0.0),
            )
        )
    if log.legacy_allocated_bytes is not None and log.legacy_tokens is not None:
        checks_.append(
            Check(
                kind="legacy_allocated_bytes",
                status="cannot_check",
                unit="bytes",
                logged=float(log.legacy_allocated_bytes),
                reason="0.5–0.8 print the requested tokens, not the blocks: the block size is missing",
            )
        )
    return tuple(checks_)


def trtllm_cpp_max_tokens(
    free_bytes: float, fraction: float, bytes_per_token: int, *, release: str = TRTLLM_DEFAULT_RELEASE
) -> int:
    """Tokens the C++ manager fits in `free_bytes` · fraction (before max_tokens and the rounding to blocks).

    0.13 (``KVCacheManager::calculateMaxNumBlocks``): ⌊fraction · free / bytes_per_token⌋ in double, the
    fraction a float32. 0.19 and later (``calculateFreeMemBytes``): the kept bytes are
    ⌊free · fraction⌋ computed in float32 (size_t × float), then ⌊kept / bytes_per_token⌋ in double.
    The difference is below one token for any real pool; it is kept to follow the source.
    """
    release = _release(release)
    if release == "0.13":
        return max(int(_float32(fraction) * float(free_bytes) / bytes_per_token), 0)
    return max(int(_cpp_kept_bytes(free_bytes, fraction, release) / float(bytes_per_token)), 0)


def _cpp_kept_bytes(free_bytes: float, fraction: float, release: str) -> float:
    if release == "0.13":
        return _float32(fraction) * float(free_bytes)
    return float(math.floor(float(np.float32(np.float32(free_bytes) * np.float32(fraction)))))


def _profiling_tokens(max_seq_len: int, max_num_tokens: int, tokens_per_block: int) -> int:
    """Tokens of the profiling run's cache: dummy requests filling max_num_tokens, each in whole blocks.

    Requests of min(max_num_tokens, max_seq_len − 1) prompt tokens until max_num_tokens are used,
    each with 2 more tokens (the generated one and the overlap scheduler's), rounded up to blocks
    (``KvCacheCreator._create_dummy_context_requests`` and ``_get_token_num_for_estimation``,
    _util.py, 1.1). gpt-oss-120b with the defaults: ⌈8194 / 32⌉ · 32 = 8224, as its log prints.
    """
    length = max(min(max_num_tokens, max_seq_len - 1), 1)
    remaining, blocks = max_num_tokens, 0
    while remaining > 0:
        tokens = min(length, remaining)
        blocks += math.ceil((tokens + 2) / tokens_per_block)
        remaining -= tokens
    return blocks * tokens_per_block


def _float32(value: float) -> float:
    """The fraction as the C++ KvCacheConfig stores it (float32) and Python prints it (0.9 → 0.8999999761581421)."""
    return float(np.float32(value))


def _needs_memory() -> KvError:
    return KvError(
        "trtllm_needs_memory",
        "TensorRT-LLM sizes its pool from the memory left free once the model is loaded: choose a GPU "
        "or give the free memory",
    )


def _log_release(version: str | None) -> str | None:
    """The modelled release of a printed version ("0.13.0.dev2024082000" → "0.13"), None if unknown."""
    if not version:
        return None
    try:
        return _release(version)
    except KvError:
        return None


def _release(release: str) -> str:
    """The modelled release whose rules a version follows: the newest at or below it ("1.2.0rc6" → "1.1").

    0.10–0.12 print the same pool lines with the same rule as 0.13 (trtllm-bench's 0.12 log in
    benchmarks/cpp/README.md), so they map to "0.13"; older releases printed "Using N tokens in paged KV
    cache" and are not modelled.
    """
    parts = tuple(int(p) for p in re.findall(r"\d+", str(release))[:2])
    if len(parts) == 2:
        if (0, 10) <= parts < (0, 13):
            return "0.13"
        below = [r for r in TRTLLM_RELEASES if tuple(int(x) for x in r.split(".")) <= parts]
        if below:
            return below[-1]
    raise KvError(
        "trtllm_unknown_release",
        f"unknown TensorRT-LLM release {release!r}: use one of {', '.join(TRTLLM_RELEASES)} (or a later patch)",
        value=str(release),
        known=", ".join(TRTLLM_RELEASES),
    )


def _kv_dtype(name: str) -> str:
    key = str(name).strip().lower()
    if key == "auto":
        return "auto"
    try:
        key = dtype_name(key)
    except KvError:
        key = ""
    if key not in _KV_DTYPES:
        raise KvError(
            "trtllm_unknown_kv_dtype",
            f"unknown kv_cache_dtype {name!r}: use auto, fp16, bf16, fp8 or int8",
            value=str(name),
        )
    return key


def _kv_bytes_per_value(name: str) -> float:
    key = _kv_dtype(name)
    return 2.0 if key == "auto" else bytes_per_value(key)
