"""Ollama: how its scheduler sizes a model before loading it, and what the runner then allocates.

Ollama (github.com/ollama/ollama) runs models with llama.cpp ("llama engine"), with its own Go
runner on ggml ("Ollama engine", ``runner/ollamarunner``, ``kvcache/causal.go``) and, from 0.30.0,
by spawning upstream ``llama-server`` (``llm/llama_server.go``). Before it loads a model its
scheduler *estimates* the memory (``llm/memory.go`` ``EstimateGPULayers`` with ``fs/ggml/ggml.go``
``GraphSize``) to decide how many layers go on the GPU; the runner then allocates the cache the
engine really uses. The two differ, and this module computes both:

* the estimate counts the KV cache at 2 bytes per value for f16, **1 byte for q8_0 and 0.5 for
  q4_0** (``kvCacheBytesPerElement``), while ggml stores 34 bytes per 32 values for q8_0 and 18
  per 32 for q4_0 (6 % and 12.5 % more); it does not pad the context (llama.cpp pads to 256 with
  flash attention, 32 without); it sizes sliding-window layers only for Gemma 3 and gpt-oss;
* the compute graph is a per-architecture formula (``GraphSize``), not the buffer llama.cpp
  measures; every GPU also keeps ``MinimumMemory`` (457 MiB CUDA/ROCm, 512 MiB Metal) and one
  extra layer as a buffer, and ``OLLAMA_GPU_OVERHEAD`` bytes.

How the settings become the engine's (each rule names its release; :func:`ollama_release`):

* ``num_ctx`` is per request; the cache holds ``num_ctx × OLLAMA_NUM_PARALLEL`` tokens
  (``server/sched.go`` multiplied ``opts.NumCtx`` up to 0.11; from 0.12.0 ``llm/server.go``
  ``KvSize: opts.NumCtx * numParallel``; from 0.30.0 ``-c num_ctx·np -np np``);
* default ``num_ctx``: 2048 up to 0.6.6 (``OLLAMA_CONTEXT_LENGTH`` from 0.5.13), 4096 from 0.6.7,
  from 0.15.5 by total VRAM (``server/routes.go``: ≥ 47 GiB → 262144, ≥ 23 GiB → 32768, else 4096);
* default ``OLLAMA_NUM_PARALLEL``: automatic up to 0.9.x (try 4 — 2 from 0.6.7 — and fall back to
  1 when it does not fit, ``server/sched.go`` ``pickBestFullFitByLibrary``), 1 from 0.10.0;
* ``OLLAMA_KV_CACHE_TYPE`` (f16, q8_0, q4_0; from 0.5.0) is used only with flash attention
  (``llm/server.go``: "quantized kv cache requested but flash attention disabled");
* ``OLLAMA_FLASH_ATTENTION``: off unless set up to 0.12.3; from 0.12.4 on by default for the
  architectures ``fs/ggml/ggml.go`` ``FlashAttention()`` lists (gpt-oss, qwen3, gemma3 …); models
  whose K and V head sizes differ, embedding models and gemma2 never get it
  (``SupportsFlashAttention``); from 0.30.0 llama-server's ``--flash-attn auto``.

Sizes are printed with ``format.HumanBytes2`` (:func:`human_bytes2`): one decimal in GiB, MiB or
KiB, binary units. Everything here is in bytes and tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .budget import BudgetTerm
from .errors import KvError
from .hardware import GpuSpec
from .llamacpp import (
    LLAMACPP_CACHE_TYPES,
    LlamaCppLog,
    LlamaCppStartup,
    llamacpp_startup,
    metal_working_set_bytes,
    parse_llamacpp_log,
    reconcile_llamacpp,
)
from .log_lines import Check, RecognisedLine, cannot_check, log_pattern, read_patterns, verdict
from .memory import model_weights_bytes
from .model import ModelSpec
from .units import GiB, KiB, MiB

__all__ = [
    "OLLAMA_CACHE_TYPES",
    "OLLAMA_DEFAULT_RELEASE",
    "OLLAMA_MARKERS",
    "OLLAMA_RELEASES",
    "OllamaEstimate",
    "OllamaLog",
    "OllamaRelease",
    "OllamaStartup",
    "gguf_architecture",
    "human_bytes2",
    "ollama_cache_bytes_per_value",
    "ollama_engine_cache",
    "ollama_estimate",
    "ollama_estimate_bytes_per_value",
    "ollama_graph_bytes",
    "ollama_kv_estimate_bytes",
    "ollama_library",
    "ollama_max_context",
    "ollama_release",
    "ollama_required_bytes",
    "ollama_startup",
    "parse_ollama_log",
    "reconcile_ollama",
]

#: The releases whose rules differ (each a rule change named in the module docstring); the last is the default.
OLLAMA_RELEASES: tuple[str, ...] = (
    "0.3.10",
    "0.5.0",
    "0.5.12",
    "0.6.1",
    "0.6.7",
    "0.9.0",
    "0.10.0",
    "0.11.10",
    "0.12.4",
    "0.12.11",
    "0.15.5",
    "0.30.0",
    "0.33.0",
)
OLLAMA_DEFAULT_RELEASE = OLLAMA_RELEASES[-1]
#: OLLAMA_KV_CACHE_TYPE values Ollama accepts (fs/ggml/ggml.go SupportsKVCacheType, 0.5.0 onwards).
OLLAMA_CACHE_TYPES: tuple[str, ...] = ("f16", "q8_0", "q4_0")

#: CUDA/ROCm and Metal memory Ollama keeps free on every GPU (discover/gpu.go cudaMinimumMemory,
#: rocmMinimumMemory = 457 MiB; discover/gpu_darwin.go metalMinimumMemory = 512 MiB; 0.2 – 0.12).
_MINIMUM_MEMORY_BYTES = {"cuda": 457 * MiB, "rocm": 457 * MiB, "metal": 512 * MiB, "cpu": 0}
#: Ollama's default num_batch (api/types.go DefaultOptions NumBatch: 512).
_NUM_BATCH = 512
#: Average bits per weight of a Q4_K_M GGUF, Ollama's default tag (llama.cpp tools/quantize README:
#: Llama-3.1-8B Q4_K_M 4.58 GiB for 8.03 B parameters = 4.89 bits), used when no weights_bytes is given.
Q4_K_M_BITS_PER_WEIGHT = 4.89
#: Bits per weight of a Q6_K output head (the tensor Q4_K_M keeps at Q6_K: 210 bytes per 256 values).
_Q6_K_BITS_PER_WEIGHT = 210 * 8 / 256

_ENGINE_ARCHS: tuple[tuple[str, str], ...] = (
    # fs/ggml/ggml.go KV.OllamaEngineRequired, the release each architecture joined it.
    ("gemma3", "0.6.0"),
    ("mistral3", "0.6.5"),
    ("gptoss", "0.11.0"),
    ("qwen3", "0.12.0"),
    ("qwen3moe", "0.12.2"),
    ("deepseek2", "0.13.0"),
    ("qwen3next", "0.15.5"),
)
_FLASH_DEFAULT_ARCHS: tuple[tuple[str, str], ...] = (
    # fs/ggml/ggml.go GGML.FlashAttention(): the architectures flash attention is on for by default.
    ("gptoss", "0.12.4"),
    ("qwen3", "0.12.4"),
    ("qwen3moe", "0.12.4"),
    ("gemma3", "0.13.0"),
    ("mistral3", "0.13.0"),
    ("qwen3next", "0.15.5"),
)
#: The llama.cpp each release vendors: (first release, commit of Makefile.sync FETCH_HEAD, the
#: kvcore.llamacpp build whose rules that source follows, read from llama/llama.cpp/src at the tag:
#: 0.6.0 llama_kv_cache_get_padding and "KV self size"; 0.7.0 llama_kv_cache_unified without iSWA;
#: 0.11.10 unified-iswa with kv_unified and streams, no flash_attn_type; 0.12.11 llama_kv_cache and
#: flash_attn_type without n_ctx padding; 0.15.5 n_ctx = GGML_PAD(n_ctx, 256)). Before 0.5.12 the
#: llm/llama.cpp submodule (late 2024, the 4094 rules); from 0.30.0 the llama-server it ships (newest).
VENDORED_LLAMACPP: tuple[tuple[str, str, int], ...] = (
    ("0.2.0", "", 4094),
    ("0.5.12", "46e3556e01b824e52395fb050b29804b6cff2a7c", 4700),
    ("0.6.0", "d7cfe1ffe0f435d0048a6058d529daf76e072d9c", 4850),
    ("0.7.0", "de4c07f93783a1a96456a44dc16b9db538ee1618", 5350),
    ("0.11.10", "e54d41befcc1575f4c898c5ff4ef43970cead75f", 6170),
    ("0.12.11", "3cfa9c3f125763305b4226bc032f1954f08990dc", 6900),
    ("0.15.5", "ec98e2002", 7000),
)

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")


def _version(text: str) -> tuple[int, int, int]:
    match = _VERSION.match(str(text).strip())
    if match is None:
        raise KvError(
            "ollama_unknown_release",
            f"unknown Ollama release {text!r}: give a version such as 0.6.3 or 0.12.4",
            value=str(text),
            known=", ".join(OLLAMA_RELEASES),
        )
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class OllamaRelease:
    """One Ollama release and the rules it follows (each property names the file and the release it changed in)."""

    version: str
    parts: tuple[int, int, int]

    def at_least(self, version: str) -> bool:
        """True if this release is `version` or newer."""
        return self.parts >= _version(version)

    @property
    def default_num_ctx(self) -> int | None:
        """The num_ctx a request without one gets (None: chosen by VRAM, 0.15.5+).

        api/types.go NumCtx 2048 (0.5.13: envconfig OLLAMA_CONTEXT_LENGTH 2048); 4096 from 0.6.7;
        from 0.15.5 envconfig ContextLength 0 and server/routes.go picks 4096/32768/262144 by VRAM.
        """
        if self.at_least("0.15.5"):
            return None
        return 4096 if self.at_least("0.6.7") else 2048

    @property
    def default_num_parallel(self) -> int | None:
        """OLLAMA_NUM_PARALLEL's default (None: automatic, try :attr:`auto_parallel` then 1; envconfig, 0.10.0 → 1)."""
        return 1 if self.at_least("0.10.0") else None

    @property
    def auto_parallel(self) -> int:
        """Slots an automatic OLLAMA_NUM_PARALLEL tries first (server/sched.go defaultParallel: 4; 2 from 0.6.7)."""
        return 2 if self.at_least("0.6.7") else 4

    @property
    def cache_types(self) -> tuple[str, ...]:
        """OLLAMA_KV_CACHE_TYPE values this release knows (only f16 before 0.5.0, PR #6279)."""
        return OLLAMA_CACHE_TYPES if self.at_least("0.5.0") else ("f16",)

    @property
    def offload_message(self) -> str:
        """The estimate message: ``"offload to cuda"`` (llm/memory.go, to 0.5.11), else ``offload`` (server.go)."""
        return "offload" if self.at_least("0.5.12") else "offload to"

    @property
    def clamps_num_ctx(self) -> bool:
        """num_ctx is cut to the model's trained context (llm/server.go "requested context size too large", 0.10.0+)."""
        return self.at_least("0.10.0")

    @property
    def per_layer_kv(self) -> bool:
        """GraphSize returns a KV size per layer (sliding layers smaller; fs/ggml/ggml.go, 0.6.0+)."""
        return self.at_least("0.6.0")

    @property
    def llama_server(self) -> bool:
        """Every GGML model runs in upstream llama-server, no Ollama estimate lines (llm/llama_server.go, 0.30.0+)."""
        return self.at_least("0.30.0")

    @property
    def layout_for_llama_engine(self) -> bool:
        """The llama engine reports its estimate as device lines, no offload line (llm/server.go, 0.12.11+)."""
        return self.at_least("0.12.11")

    @property
    def layout_for_ollama_engine(self) -> bool:
        """The Ollama engine prints its real allocations as device lines (ml/backend.go BackendMemory.Log, 0.11.5+)."""
        return self.at_least("0.11.5")

    @property
    def llamacpp_commit(self) -> str:
        """The llama.cpp commit this release vendors (Makefile.sync FETCH_HEAD), '' before 0.5.12."""
        return next((sha for version, sha, _ in reversed(VENDORED_LLAMACPP) if self.at_least(version)), "")

    @property
    def llamacpp_build(self) -> int | None:
        """The kvcore.llamacpp build whose rules the vendored llama.cpp follows (None: the newest, 0.30.0+)."""
        if self.llama_server:
            return None
        return next(build for version, _, build in reversed(VENDORED_LLAMACPP) if self.at_least(version))

    @property
    def weights_print(self) -> str:
        """How the estimate prints its weights (llm/memory.go MemoryEstimate.LogValue).

        ``"with_kv"`` up to 0.6.0: total = Σ(block + KV/blocks), repeating = total − output;
        ``"blocks"`` 0.6.1 – 0.6.2: total = repeating = Σ blocks; ``"split"`` from 0.6.3:
        total = Σ blocks + output, repeating = Σ blocks. Nonrepeating is the output layer throughout.
        """
        if not self.at_least("0.6.1"):
            return "with_kv"
        return "split" if self.at_least("0.6.3") else "blocks"

    def ollama_engine(self, architecture: str) -> bool:
        """True if `architecture` runs on the Ollama engine in this release (fs/ggml/ggml.go OllamaEngineRequired)."""
        return not self.llama_server and any(
            arch == architecture and self.at_least(since) for arch, since in _ENGINE_ARCHS
        )

    def flash_attention_default(self, architecture: str) -> bool:
        """Flash attention when OLLAMA_FLASH_ATTENTION is unset (fs/ggml/ggml.go FlashAttention(), 0.12.4+)."""
        if self.llama_server:
            return True  # llama-server --flash-attn auto: on where the backend supports it
        return any(arch == architecture and self.at_least(since) for arch, since in _FLASH_DEFAULT_ARCHS)


def ollama_release(version: str | None = None) -> OllamaRelease:
    """The rules of Ollama `version` ("0.6.3", "v0.12.4"; None: :data:`OLLAMA_DEFAULT_RELEASE`).

    >>> ollama_release("0.6.3").default_num_ctx, ollama_release("0.9.0").default_num_parallel
    (2048, None)
    """
    text = OLLAMA_DEFAULT_RELEASE if version is None else str(version).strip().lstrip("v")
    parts = _version(text)
    if parts < (0, 2, 0):
        raise KvError(
            "ollama_release_unmodelled",
            f"Ollama {text} predates the estimate modelled here (0.2.0 and later)",
            value=text,
        )
    return OllamaRelease(version=text, parts=parts)


# ---------------------------------------------------------------------------------------------- formats


def human_bytes2(num_bytes: float) -> str:
    """Bytes as Ollama prints them: format/bytes.go HumanBytes2 (all releases).

    ≥ 1 GiB: ``"%.1f GiB"``; ≥ 1 MiB: ``"%.1f MiB"``; ≥ 1 KiB: ``"%.1f KiB"``; else ``"%d B"``.
    Go's %.1f rounds the exact binary value half to even, as Python's format does.

    >>> human_bytes2(1073741824), human_bytes2(419430400), human_bytes2(0)
    ('1.0 GiB', '400.0 MiB', '0 B')
    """
    value = int(num_bytes)
    if value >= GiB:
        return f"{value / GiB:.1f} GiB"
    if value >= MiB:
        return f"{value / MiB:.1f} MiB"
    if value >= KiB:
        return f"{value / KiB:.1f} KiB"
    return f"{value} B"


def _slog_value(text: str) -> str:
    """A value as Go's slog TextHandler writes it: quoted when empty or holding a space, '=' or '"'."""
    if text == "" or any(ch in text for ch in ' ="') or not text.isprintable():
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def _slog_list(items: list[str]) -> str:
    return _slog_value("[" + " ".join(items) + "]")


# ---------------------------------------------------------------------------------------------- architecture


_ARCH_BY_ID: tuple[tuple[str, str], ...] = (
    ("gpt-oss", "gptoss"),
    ("qwen3-next", "qwen3next"),
    ("gemma-3", "gemma3"),
    ("gemma-2", "gemma2"),
    ("gemma", "gemma"),
    ("phi-2", "phi2"),
    ("phi-", "phi3"),
    ("deepseek", "deepseek2"),
    ("kimi", "deepseek2"),
    ("qwen3", "qwen3"),
    ("qwen2", "qwen2"),
    ("falcon", "falcon"),
    ("gpt2", "gpt2"),
    ("starcoder2", "starcoder2"),
    ("llama", "llama"),
    ("codellama", "llama"),
    ("tinyllama", "llama"),
    ("mistral", "llama"),
    ("mixtral", "llama"),
)


def gguf_architecture(model: ModelSpec) -> str:
    """The GGUF ``general.architecture`` Ollama reads for `model` (llama, qwen2, gemma3, gptoss, …).

    From the model id (data/models.csv); Qwen3 MoE models are ``qwen3moe``; unknown ids give
    ``"unknown"`` (Ollama's default graph formula then applies).

    >>> from kvcore.data import load_models
    >>> gguf_architecture(load_models()["qwen3-30b-a3b"]), gguf_architecture(load_models()["mistral-7b-v0.3"])
    ('qwen3moe', 'llama')
    """
    name = model.id.lower()
    for prefix, arch in _ARCH_BY_ID:
        if name.startswith(prefix):
            return "qwen3moe" if arch == "qwen3" and model.is_moe else arch
    return "unknown"


def _arch(model: ModelSpec, architecture: str | None) -> str:
    return architecture or gguf_architecture(model)


# ---------------------------------------------------------------------------------------------- the estimate


def ollama_estimate_bytes_per_value(kv_cache_type: str) -> float:
    """Bytes per cached value in Ollama's estimate: f16 2, q8_0 1, q4_0 0.5 (fs/ggml/ggml.go kvCacheBytesPerElement).

    Not what ggml stores (:func:`ollama_cache_bytes_per_value`): q8_0 keeps a 2-byte scale per 32 values.
    """
    return {"q8_0": 1.0, "q4_0": 0.5, "f32": 4.0}.get(_cache_type(kv_cache_type), 2.0)


def ollama_cache_bytes_per_value(kv_cache_type: str) -> float:
    """Bytes per cached value ggml allocates: f16 2, q8_0 34/32, q4_0 18/32 (kvcore.llamacpp.LLAMACPP_CACHE_TYPES)."""
    type_bytes, block = LLAMACPP_CACHE_TYPES[_cache_type(kv_cache_type)]
    return type_bytes / block


def _cache_type(kv_cache_type: str) -> str:
    value = str(kv_cache_type or "f16").strip().lower()
    if value not in (*OLLAMA_CACHE_TYPES, "f32"):
        raise KvError(
            "ollama_unknown_cache_type",
            f"unknown OLLAMA_KV_CACHE_TYPE {kv_cache_type!r}: use one of {', '.join(OLLAMA_CACHE_TYPES)}",
            value=str(kv_cache_type),
            known=", ".join(OLLAMA_CACHE_TYPES),
        )
    return value


def _estimate_sliding(model: ModelSpec, arch: str, release: OllamaRelease) -> np.ndarray:
    """Layers the estimate sizes as sliding (GraphSize: gemma3 all but each 6th, 0.6.0+; gpt-oss even, 0.11.0+)."""
    index = np.arange(model.num_hidden_layers)
    if arch == "gemma3" and release.per_layer_kv:
        return (index + 1) % 6 != 0
    if arch == "gptoss" and release.at_least("0.11.0"):
        return index % 2 == 0
    return np.zeros(model.num_hidden_layers, dtype=bool)


def ollama_kv_estimate_bytes(
    model: ModelSpec,
    *,
    num_ctx: ArrayLike,
    num_parallel: int = 1,
    kv_cache_type: str = "f16",
    num_batch: int = _NUM_BATCH,
    architecture: str | None = None,
    release: str | None = None,
) -> np.ndarray:
    """The scheduler's KV estimate per layer [bytes]; shape (layers,) or (…, layers) for an array of num_ctx.

    fs/ggml/ggml.go GraphSize (0.5 – 0.29): context = num_ctx · parallel, and per layer
    ``uint64(float64(context · (key_length + value_length) · head_count_kv) · bytes_per_element)``
    with bytes_per_element 2 / 1 / 0.5 for f16 / q8_0 / q4_0 (:func:`ollama_estimate_bytes_per_value`).
    Gemma 3's sliding layers (all but every 6th, 0.6.0+) count parallel · sliding_window + batch
    tokens; gpt-oss's (the even layers, 0.11.0+) parallel · 4096 + batch (its SWAMemCache keeps 4096).
    batch = min(num_ctx, num_batch). MLA layers count kvcore's latent (Ollama reads per-head
    key/value lengths from the GGUF, which a ModelSpec does not carry); linear layers count 0.

    >>> from kvcore.data import load_models
    >>> int(ollama_kv_estimate_bytes(load_models()["llama-3.1-8b"], num_ctx=2048, num_parallel=4).sum() / 2**20)
    1024
    """
    rules = ollama_release(release)
    arch = _arch(model, architecture)
    ctx = np.asarray(num_ctx, dtype=np.int64)[..., None]
    parallel = int(num_parallel)
    batch = np.minimum(ctx, int(num_batch))
    bpe = ollama_estimate_bytes_per_value(kv_cache_type)
    values = np.array(
        [
            2 * layer.num_key_value_heads * layer.head_dim
            if layer.kind in ("full", "sliding")
            else (layer.kv_lora_rank + layer.qk_rope_head_dim if layer.kind == "mla" else 0)
            for layer in model.layers
        ],
        dtype=np.int64,
    )
    sliding = _estimate_sliding(model, arch, rules)
    window = 4096 if arch == "gptoss" else int(model.sliding_window or 0)
    tokens = np.where(sliding, parallel * window + batch, ctx * parallel)
    return np.floor((tokens * values).astype(np.float64) * bpe)


def _graph(
    arch: str,
    *,
    context: np.ndarray,
    batch: np.ndarray,
    parallel: int,
    embedding: int,
    heads: int,
    heads_kv: int,
    head_dim: int,
    vocab: int,
    kv_total: np.ndarray,
    flash_attention: bool,
    release: OllamaRelease,
) -> tuple[np.ndarray, np.ndarray] | None:
    """GraphSize's (partial, full) per context, in Go's unsigned integer arithmetic; None where it falls back."""
    b, c = batch.astype(np.int64), context.astype(np.int64)
    e, h, hkv, d, v = (np.int64(x) for x in (embedding, heads, heads_kv, head_dim, vocab))
    top = np.maximum
    if arch == "llama":
        full = top(4 * b * (1 + 4 * e + c * (1 + h)), 4 * b * (e + v))
        partial = 4 * b * e + top(
            4 * b * (1 + e + top(c, e)) + e * e * 9 // 16 + 4 * c * (b * h + d * hkv),
            4 * b * (e + v) + e * v * 105 // 128,
        )
        return partial, full
    if arch in ("gemma", "gemma2", "gemma3"):
        full = top(4 * b * (e + v), 4 * b * (2 + c + c * h + 2 * e + 2 * d * h))
        partial = top(
            4 * e * b + e * v * 105 // 128 + 4 * v * b,
            4 * b * (2 * e + 1 + 2 * d * h + c + c * h) + 4 * d * c * 8 + e * d * h * 9 // 16,
        )
        return partial, full
    if arch == "qwen2":
        full = top(4 * b * (e + v), 4 * b * (1 + 2 * e + c + c * h))
        partial = top(4 * b * (e + v) + e * v * 105 // 128, 4 * (b * (1 + 2 * e + c * (1 + h)) + e * (1 + c)))
        return partial, full
    if arch == "phi2":
        full = top(4 * b * (e + v), 4 * b * (1 + 4 * e + c + c * h))
        partial = top(4 * b * (2 * e + v) + e * v * 105 // 128, 4 * b * (2 + 3 * e + c + c * h))
        return partial, full
    if arch == "gptoss" and release.at_least("0.11.0"):
        gqa = h // np.maximum(hkv, np.int64(1))
        kv = kv_total.astype(np.int64)
        if release.at_least("0.11.8"):
            partial = 2 * gqa * kv // 6
            if flash_attention:
                # "rough estimate of graph size with flash attention on" (0.11.8+)
                partial = (4 * parallel + np.right_shift(c, 10) + 110) * MiB
            return partial, np.zeros_like(partial)
        full = 4 * gqa * kv // 6
        return full, full
    return None


def ollama_graph_bytes(
    model: ModelSpec,
    *,
    num_ctx: ArrayLike,
    num_parallel: int = 1,
    kv_cache_type: str = "f16",
    flash_attention: bool = False,
    num_batch: int = _NUM_BATCH,
    library: str = "cuda",
    gpu_count: int = 1,
    architecture: str | None = None,
    vocab_size: int | None = None,
    release: str | None = None,
) -> tuple[Any, Any]:
    """The scheduler's compute-graph estimate (partial, full offload) [bytes]: memory.graph.partial / .full.

    fs/ggml/ggml.go GraphSize (0.5 – 0.29), one formula per architecture with b = min(num_ctx,
    num_batch), c = num_ctx · parallel, e = hidden_size, h = heads, d = head_dim, v = vocabulary
    (the GGUF's token count), e.g. llama: full = max(4b(1 + 4e + c(1 + h)), 4b(e + v)). Where the
    architecture has none (qwen3, phi3, …) partial = ⌊heads / kv_heads⌋ · KV / 6 and full = partial
    (llm/memory.go). Metal: partial = full; several GPUs: full = partial. Integers for one num_ctx,
    arrays for an array of them.

    >>> from kvcore.data import load_models
    >>> [round(x / 2**20, 1) for x in ollama_graph_bytes(load_models()["llama-3.1-8b"], num_ctx=2048, num_parallel=4)]
    [677.5, 560.0]
    """
    rules = ollama_release(release)
    arch = _arch(model, architecture)
    ctx = np.asarray(num_ctx, dtype=np.int64)
    kv_total = ollama_kv_estimate_bytes(
        model,
        num_ctx=ctx,
        num_parallel=num_parallel,
        kv_cache_type=kv_cache_type,
        num_batch=num_batch,
        architecture=arch,
        release=rules.version,
    ).sum(axis=-1)
    kv_total = kv_total.astype(np.int64)
    graph = _graph(
        arch,
        context=ctx * int(num_parallel),
        batch=np.minimum(ctx, int(num_batch)),
        parallel=int(num_parallel),
        embedding=int(model.hidden_size),
        heads=model.num_attention_heads,
        heads_kv=model.num_key_value_heads,
        head_dim=model.head_dim,
        vocab=int(vocab_size if vocab_size is not None else _gguf_vocab(model, arch)),
        kv_total=kv_total,
        flash_attention=bool(flash_attention),
        release=rules,
    )
    zero = np.zeros_like(ctx)
    partial, full = graph if graph is not None else (zero, zero)
    partial = np.where(partial == 0, model.num_attention_heads // model.num_key_value_heads * kv_total // 6, partial)
    full = np.where(full == 0, partial, full)
    if library == "metal":
        partial = full
    elif gpu_count > 1:
        full = partial
    if ctx.ndim == 0:
        return int(partial), int(full)
    return partial, full


#: Token counts of Ollama's GGUFs where they differ from config.json's vocab_size (padded embedding
#: rows): Gemma 3's tokenizer has 262,144 tokens, its embedding 262,208 rows (PR #12000 and
#: issue #10061 logs: memory.graph.full = 4 · 512 · (e + 262144) bytes).
_GGUF_VOCAB = {"gemma3": 262144}


def _gguf_vocab(model: ModelSpec, arch: str) -> int:
    return _GGUF_VOCAB.get(arch, int(model.vocab_size))


@dataclass(frozen=True, slots=True, kw_only=True)
class OllamaEstimate:
    """What Ollama's scheduler predicts before loading (llm/memory.go EstimateGPULayers), in bytes.

    Field names follow the ``offload`` log line: ``layers_model`` (blocks + output), ``layers_offload``,
    ``split`` (layers per GPU), ``available_bytes`` (free memory per GPU), ``required_full_bytes``
    (everything, as if fully offloaded: memory.required.full), ``required_partial_bytes`` (what goes
    on the GPUs), ``kv_bytes``, ``allocations_bytes`` (per GPU), ``weights_*``, ``graph_*``,
    ``projector_*``, ``gpu_overhead_bytes``, ``minimum_memory_bytes`` (kept free on each GPU).
    """

    library: str
    layers_requested: int
    layers_model: int
    layers_offload: int
    split: tuple[int, ...]
    available_bytes: tuple[float, ...]
    gpu_overhead_bytes: float
    minimum_memory_bytes: float
    required_full_bytes: float
    required_partial_bytes: float
    kv_bytes: float
    allocations_bytes: tuple[float, ...]
    weights_total_bytes: float
    weights_repeating_bytes: float
    weights_nonrepeating_bytes: float
    graph_full_bytes: float
    graph_partial_bytes: float
    projector_weights_bytes: float = 0.0
    projector_graph_bytes: float = 0.0
    kv_layer_bytes: tuple[float, ...] = field(default=(), repr=False)

    @property
    def fully_offloaded(self) -> bool:
        """Every block and the output layer go on the GPU(s)."""
        return self.layers_offload >= self.layers_model


def _weights_split(model: ModelSpec, weights_bytes: float | None) -> tuple[float, float]:
    """(repeating blocks, output layer) bytes: the GGUF's blocks and output head (token embeddings excluded).

    weights_bytes is memory.weights.total (blocks + output); by default a Q4_K_M file: every
    parameter at 4.89 bits but the output head (vocab · hidden) at Q6_K's 6.5625 bits.
    """
    output = float(_gguf_vocab(model, gguf_architecture(model)) * model.hidden_size) * _Q6_K_BITS_PER_WEIGHT / 8
    if weights_bytes is None:
        total = model_weights_bytes(model, bytes_per_param=Q4_K_M_BITS_PER_WEIGHT / 8)
        embeddings = (
            0.0 if model.tie_word_embeddings else model.vocab_size * model.hidden_size * Q4_K_M_BITS_PER_WEIGHT / 8
        )
        return max(total - embeddings - output, 0.0), output
    total = float(weights_bytes)
    output = min(output, 0.5 * total)
    return total - output, output


def ollama_estimate(
    model: ModelSpec,
    *,
    gpu: GpuSpec | None = None,
    gpu_count: int = 1,
    num_ctx: int | None = None,
    num_parallel: int | None = None,
    kv_cache_type: str = "f16",
    flash_attention: bool | None = None,
    num_gpu: int = -1,
    weights_bytes: float | None = None,
    free_bytes: float | None = None,
    gpu_overhead_bytes: float = 0.0,
    projector_weights_bytes: float = 0.0,
    projector_graph_bytes: float = 0.0,
    num_batch: int = _NUM_BATCH,
    architecture: str | None = None,
    release: str | None = None,
) -> OllamaEstimate:
    """Ollama's scheduler estimate and layer placement for `model` on `gpu_count` × `gpu` [bytes].

    llm/memory.go EstimateGPULayers (0.5 – 0.12.10; 0.12.11 – 0.29 the same numbers in
    llm/server.go llamaServer.Load): each GPU must first hold OLLAMA_GPU_OVERHEAD + the larger
    graph + MinimumMemory + 2 layers, and gets MinimumMemory + one layer (blk.0 + its KV) as a
    buffer; blocks are placed last to first (first to last up to 0.6.0) round-robin while
    free > overhead + used + max(graph) + layer; then the output layer (and the Ollama engine's
    projector); then each GPU with layers adds the full graph if everything fits, else the partial.
    memory.required.partial = Σ allocations; memory.required.full = that + what did not fit.
    Layers are taken uniform (repeating ÷ blocks); a GGUF's layers differ a little (Q4_K_M keeps
    some layers at Q6_K), so a real log's split can differ by a layer.
    """
    rules = ollama_release(release)
    arch = _arch(model, architecture)
    settings = _settings(model, gpu, gpu_count, num_ctx, num_parallel, kv_cache_type, flash_attention, rules, arch)
    ctx, parallel, cache, fa = settings["num_ctx"], settings["num_parallel"], settings["kv_cache_type"], settings["fa"]
    library = ollama_library(gpu)
    kv = ollama_kv_estimate_bytes(
        model,
        num_ctx=ctx,
        num_parallel=parallel,
        kv_cache_type=cache,
        num_batch=num_batch,
        architecture=arch,
        release=rules.version,
    )
    partial_graph, full_graph = ollama_graph_bytes(
        model,
        num_ctx=ctx,
        num_parallel=parallel,
        kv_cache_type=cache,
        flash_attention=fa,
        num_batch=num_batch,
        library=library,
        gpu_count=gpu_count,
        architecture=arch,
        release=rules.version,
    )
    blocks_bytes, output_bytes = _weights_split(model, weights_bytes)
    layers = model.num_hidden_layers
    blk = blocks_bytes / layers
    engine_projector = rules.ollama_engine(arch)
    last_layer = output_bytes + (projector_weights_bytes + projector_graph_bytes if engine_projector else 0.0)
    gpu_zero = 0.0 if engine_projector else projector_weights_bytes + projector_graph_bytes
    minimum = float(_MINIMUM_MEMORY_BYTES[library])
    free = _free_bytes(gpu, free_bytes)
    n_gpus = 0 if gpu is None else int(gpu_count)
    graph_max = max(partial_graph, full_graph)
    allocations = [0.0] * n_gpus
    counts = [0] * n_gpus
    with_space: list[int] = []
    buffer_layer = blk + float(kv[0])
    for i in range(n_gpus):
        zero = gpu_zero if not with_space else 0.0
        if free < gpu_overhead_bytes + zero + graph_max + minimum + 2 * buffer_layer:
            continue
        with_space.append(i)
        allocations[i] += minimum + buffer_layer
    overflow = 0.0
    if with_space:
        allocations[with_space[0]] += gpu_zero
    else:
        overflow += gpu_zero
    placed = 0
    order = range(layers - 1, -1, -1) if rules.at_least("0.6.1") else range(layers)
    for i in order:
        size = blk + float(kv[i])
        if num_gpu >= 0 and placed >= num_gpu:
            overflow += size
            continue
        done = False
        while with_space and not done:
            j = len(with_space)
            g = with_space[i % j]
            if free > gpu_overhead_bytes + allocations[g] + graph_max + size:
                allocations[g] += size
                counts[g] += 1
                placed += 1
                done = True
            else:
                with_space.remove(g)
        if not done:
            overflow += size
    fully = placed >= layers
    if last_layer > 0:
        if num_gpu < 0 or placed < num_gpu:
            for j in range(len(with_space), 0, -1):
                g = with_space[placed % j]
                if free > gpu_overhead_bytes + allocations[g] + graph_max + last_layer:
                    allocations[g] += last_layer
                    counts[g] += 1
                    placed += 1
                    break
        if placed < layers + 1:
            fully = False
            overflow += last_layer
    graph = full_graph if fully else partial_graph
    for i in range(n_gpus):
        if counts[i] > 0:
            allocations[i] += graph
    required_partial = sum(allocations)
    if n_gpus == 0 or placed == 0:
        placed, allocations_out, required_partial = 0, tuple(allocations), 0.0
        required_full = sum(allocations) + overflow
    else:
        allocations_out = tuple(allocations)
        required_full = required_partial + overflow
    printed = {
        "with_kv": (blocks_bytes + float(kv.sum()), blocks_bytes + float(kv.sum()) - output_bytes),
        "blocks": (blocks_bytes, blocks_bytes),
        "split": (blocks_bytes + output_bytes, blocks_bytes),
    }[rules.weights_print]
    return OllamaEstimate(
        library=library,
        layers_requested=int(num_gpu),
        layers_model=layers + 1,
        layers_offload=placed,
        split=tuple(counts) if n_gpus > 1 else (),
        available_bytes=tuple([free] * n_gpus),
        gpu_overhead_bytes=float(gpu_overhead_bytes),
        minimum_memory_bytes=minimum,
        required_full_bytes=float(required_full),
        required_partial_bytes=float(required_partial),
        kv_bytes=float(kv.sum()),
        allocations_bytes=allocations_out,
        weights_total_bytes=printed[0],
        weights_repeating_bytes=printed[1],
        weights_nonrepeating_bytes=output_bytes,
        graph_full_bytes=float(full_graph),
        graph_partial_bytes=float(partial_graph),
        projector_weights_bytes=float(projector_weights_bytes),
        projector_graph_bytes=float(projector_graph_bytes),
        kv_layer_bytes=tuple(float(x) for x in kv),
    )


def ollama_library(gpu: GpuSpec | None) -> str:
    """The GPU library Ollama's estimate uses for `gpu`: "metal" (Apple silicon), "rocm" (AMD), "cuda", "cpu" (None).

    discover/gpu.go and gpu_darwin.go: the library names its MinimumMemory and graph rules go by
    (:func:`ollama_required_bytes` takes it as ``library``).
    """
    if gpu is None:
        return "cpu"
    vendor = gpu.vendor.lower()
    if vendor == "apple" or gpu.category == "apple":
        return "metal"
    return "rocm" if vendor == "amd" else "cuda"


def _free_bytes(gpu: GpuSpec | None, free_bytes: float | None) -> float:
    """Free memory Ollama sees on one GPU: given, else Metal's working set or the memory the driver reports."""
    if free_bytes is not None:
        return float(free_bytes)
    if gpu is None:
        return 0.0
    if ollama_library(gpu) == "metal":
        return metal_working_set_bytes(gpu.memory_bytes)
    return float(gpu.reported_memory_bytes)


def _settings(
    model: ModelSpec,
    gpu: GpuSpec | None,
    gpu_count: int,
    num_ctx: int | None,
    num_parallel: int | None,
    kv_cache_type: str,
    flash_attention: bool | None,
    rules: OllamaRelease,
    arch: str,
) -> dict[str, Any]:
    """The engine settings Ollama derives from its environment and the request (see the module docstring)."""
    requested = _cache_type(kv_cache_type)
    if requested not in rules.cache_types:
        raise KvError(
            "ollama_cache_type_unsupported",
            f"Ollama {rules.version} has no quantised KV cache (OLLAMA_KV_CACHE_TYPE came in 0.5.0)",
            value=requested,
            release=rules.version,
        )
    if num_ctx is None:
        num_ctx = rules.default_num_ctx or _vram_default_ctx(gpu, gpu_count)
    ctx = int(num_ctx)
    if ctx < 4:
        ctx = 4  # server/sched.go: opts.NumCtx < 4 → 4
    if rules.clamps_num_ctx and model.max_position_embeddings and ctx > model.max_position_embeddings:
        ctx = int(model.max_position_embeddings)  # "requested context size too large for model"
    parallel = int(num_parallel) if num_parallel is not None else (rules.default_num_parallel or rules.auto_parallel)
    if parallel < 1:
        raise KvError("not_positive", "OLLAMA_NUM_PARALLEL must be at least 1", name="num_parallel", value=parallel)
    # fs/ggml/ggml.go SupportsFlashAttention: K and V heads of one size (not MLA's 192/128), not gemma2 (0.12.0+);
    # discover: a GPU that has it (no GPU: the CPU runner, which Ollama gives no flash attention).
    fa_supported = (
        gpu is not None
        and all(layer.kind != "mla" for layer in model.layers)
        and not (arch == "gemma2" and rules.at_least("0.12.0"))
    )
    llama_auto = not rules.ollama_engine(arch) and rules.at_least("0.13.5")
    if flash_attention is None:
        # 0.13.5+: the llama engine (and 0.30+ llama-server) runs --flash-attn auto, on where supported, but a
        # quantised OLLAMA_KV_CACHE_TYPE needs OLLAMA_FLASH_ATTENTION set ("must be enabled to use a quantized …").
        fa = fa_supported and (llama_auto or rules.flash_attention_default(arch))
        cache = requested if fa and not llama_auto else "f16"
    else:
        fa = bool(flash_attention) and fa_supported
        cache = requested if fa else "f16"
    return {"num_ctx": ctx, "num_parallel": parallel, "kv_cache_type": cache, "fa": fa, "requested": requested}


def _vram_default_ctx(gpu: GpuSpec | None, gpu_count: int) -> int:
    """server/routes.go (0.15.5+): total VRAM − overhead ≥ 47 GiB → 262144, ≥ 23 GiB → 32768, else 4096."""
    total = 0.0 if gpu is None else _free_bytes(gpu, None) * gpu_count
    return 262144 if total >= 47 * GiB else 32768 if total >= 23 * GiB else 4096


# ---------------------------------------------------------------------------------------------- the allocation


def ollama_engine_cache(
    model: ModelSpec,
    *,
    num_ctx: int,
    num_parallel: int = 1,
    kv_cache_type: str = "f16",
    flash_attention: bool = True,
    num_batch: int = _NUM_BATCH,
    architecture: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The Ollama engine's cache: (cells, bytes) per layer, as kvcache/causal.go allocates it (0.6 – 0.29).

    runner/ollamarunner/cache.go NewInputCache → Causal.Init(maxSequences = parallel,
    capacity = num_ctx, maxBatch = num_batch): full layers ``roundUp(parallel · num_ctx, pad)`` cells;
    sliding layers (NewSWACache: window; gpt-oss NewSWAMemCache: 4096 tokens)
    ``roundUp(parallel · memory + batch, pad)`` unless memory > num_ctx; pad = 256 with flash
    attention, 32 without (ml/backend/ggml CacheConfig). Bytes = cells · kv_heads · (K + V head
    size) · ggml's bytes per value (34/32 for q8_0, 18/32 for q4_0).
    """
    arch = _arch(model, architecture)
    pad = 256 if flash_attention else 32
    parallel = int(num_parallel)
    ctx = int(num_ctx)
    memory = 4096 if arch == "gptoss" else int(model.sliding_window or 0)
    full_cells = _round_up(parallel * ctx, pad)
    swa_cells = full_cells if memory > ctx else _round_up(parallel * memory + int(num_batch), pad)
    cells = np.array(
        [swa_cells if layer.kind == "sliding" else full_cells if layer.kind == "full" else 0 for layer in model.layers],
        dtype=np.int64,
    )
    values = np.array([2 * layer.num_key_value_heads * layer.head_dim for layer in model.layers], dtype=np.int64)
    return cells, cells * values * ollama_cache_bytes_per_value(kv_cache_type)


def _round_up(value: int, step: int) -> int:
    return -(-int(value) // step) * step


# ---------------------------------------------------------------------------------------------- the start-up


@dataclass(frozen=True, slots=True, kw_only=True)
class OllamaStartup:
    """An Ollama start-up: the settings it derived, its scheduler estimate and the cache the runner allocates.

    ``kv_pool_bytes`` is the KV cache the runner allocates (on the GPUs and the CPU together);
    ``tokens`` the cells it holds (num_ctx · parallel, padded); ``estimate`` the scheduler's
    prediction (:func:`ollama_estimate`; None from 0.30.0, where llama-server fits the model);
    ``llamacpp`` the llama.cpp start-up of the llama engine (:func:`kvcore.llamacpp.llamacpp_startup`),
    None on the Ollama engine, whose cache is ``engine_cells``/``engine_layer_bytes``.
    """

    engine: str = "ollama"
    release: str
    model: ModelSpec = field(repr=False)
    gpu: GpuSpec | None = field(default=None, repr=False)
    gpu_count: int = 1
    num_ctx: int
    num_parallel: int
    kv_cache_type: str
    requested_kv_cache_type: str
    flash_attention: bool
    num_batch: int = _NUM_BATCH
    architecture: str
    runner: str
    kv_pool_bytes: float
    tokens: int
    fits: bool
    estimate: OllamaEstimate | None = None
    llamacpp: LlamaCppStartup | None = field(default=None, repr=False)
    engine_cells: tuple[int, ...] = field(default=(), repr=False)
    engine_layer_bytes: tuple[float, ...] = field(default=(), repr=False)
    terms: tuple[BudgetTerm, ...] = ()

    def max_concurrency(self, context_tokens: int) -> float:
        """Requests of `context_tokens` that fit at once: the parallel slots whose num_ctx holds them.

        Ollama gives each of OLLAMA_NUM_PARALLEL slots num_ctx tokens; a longer request is cut
        (context shift), so the answer is num_parallel if context_tokens ≤ num_ctx, else 0.
        """
        return float(self.num_parallel) if int(context_tokens) <= self.num_ctx else 0.0

    def lines(self) -> list[str]:
        """The lines Ollama prints for this start-up, from ``msg=`` on (the time/level/source prefix varies).

        Its own: the estimate (``offload to cuda`` up to 0.5.11, ``offload library=…`` to 0.12.10;
        llm/memory.go MemoryEstimate.LogValue), then the device lines (``model weights``, ``kv cache``,
        ``compute graph``, ``total memory``; ml/backend.go BackendMemory.Log, 0.11.5+ Ollama engine,
        0.12.11+ all); then the llama.cpp lines it relays (llama engine).
        """
        out: list[str] = []
        rules = ollama_release(self.release)
        engine_layout = rules.layout_for_ollama_engine if self.runner == "ollama" else rules.layout_for_llama_engine
        # The offload line: the llama engine up to 0.12.10 (llamaServer.Load); the Ollama engine up to 0.11.x,
        # which took that path unless OLLAMA_NEW_ESTIMATES=1 (0.11.5 – 0.11.x; the only path from 0.12.0).
        offload_line = not rules.layout_for_llama_engine if self.runner == "llama" else not rules.at_least("0.12.0")
        if self.estimate is not None and offload_line:
            out.append(_offload_line(self.estimate, rules))
        if self.estimate is not None and engine_layout:
            out.extend(self._device_lines())
        if self.llamacpp is not None:
            out.extend(self.llamacpp.lines())
        return out

    def _device_lines(self) -> list[str]:
        est = self.estimate
        assert est is not None
        device = {"cuda": "CUDA0", "rocm": "ROCm0", "metal": "Metal", "cpu": "CPU"}[est.library]
        layers = self.model.num_hidden_layers
        offloaded = min(est.layers_offload, layers)
        per_layer = np.asarray(self.engine_layer_bytes if self.runner == "ollama" else est.kv_layer_bytes)
        on_gpu = float(per_layer[layers - offloaded :].sum()) if offloaded else 0.0
        on_cpu = float(per_layer.sum()) - on_gpu
        blocks = est.weights_repeating_bytes  # the device lines come from 0.11.5 on: repeating = Σ blocks
        blk = blocks / layers
        gpu_weights = blk * offloaded + (est.weights_nonrepeating_bytes if est.fully_offloaded else 0.0)
        cpu_weights = blocks + est.weights_nonrepeating_bytes - gpu_weights
        graph = est.graph_full_bytes if est.fully_offloaded else est.graph_partial_bytes
        out = []
        total = 0.0
        for name, gpu_part, cpu_part in (
            ("model weights", gpu_weights, cpu_weights),
            ("kv cache", on_gpu, on_cpu),
            ("compute graph", graph if offloaded else 0.0, 0.0 if offloaded else graph),
        ):
            if device != "CPU" and gpu_part > 0:
                out.append(f'msg="{name}" device={device} size={_slog_value(human_bytes2(gpu_part))}')
                total += gpu_part
            if cpu_part > 0 or (device == "CPU" and gpu_part > 0):
                part = cpu_part + (gpu_part if device == "CPU" else 0.0)
                out.append(f'msg="{name}" device=CPU size={_slog_value(human_bytes2(part))}')
                total += part
        if total > 0:
            out.append(f'msg="total memory" size={_slog_value(human_bytes2(total))}')
        return out

    def as_json(self) -> dict[str, object]:
        """JSON-ready numbers: the issue's keys (cells, k_bytes, v_bytes, kv_bytes, swa_* …) and Ollama's estimate."""
        base: dict[str, object] = {}
        if self.llamacpp is not None:
            base.update(self.llamacpp.as_json())
        else:
            cells = np.asarray(self.engine_cells)
            layer_bytes = np.asarray(self.engine_layer_bytes)
            sliding = np.array([layer.kind == "sliding" for layer in self.model.layers])
            full_cells = [int(c) for c, s in zip(cells, sliding, strict=True) if not s and c]
            swa_cells = [int(c) for c, s in zip(cells, sliding, strict=True) if s and c]
            base.update(
                {
                    "cells": full_cells[0] if full_cells else (swa_cells[0] if swa_cells else 0),
                    "k_bytes": float(layer_bytes.sum()) / 2,
                    "v_bytes": float(layer_bytes.sum()) / 2,
                    "kv_bytes": float(layer_bytes.sum()),
                    "full_layers": int((~sliding).sum()),
                    "swa_layers": int(sliding.sum()),
                }
            )
            if swa_cells:
                base["swa_cells"] = swa_cells[0]
                base["swa_kv_bytes"] = float(layer_bytes[sliding].sum())
        est = self.estimate
        base.update(
            {
                "engine": self.engine,
                "release": self.release,
                "kv_pool_bytes": float(self.kv_pool_bytes),
                "tokens": int(self.tokens),
                "fits": bool(self.fits),
                "num_ctx": self.num_ctx,
                "num_parallel": self.num_parallel,
                "kv_cache_type": self.kv_cache_type,
                "requested_kv_cache_type": self.requested_kv_cache_type,
                "flash_attention": self.flash_attention,
                "architecture": self.architecture,
                "runner": self.runner,
                "llamacpp_commit": ollama_release(self.release).llamacpp_commit,
            }
        )
        if est is not None:
            base["estimate"] = {
                "library": est.library,
                "layers_model": est.layers_model,
                "layers_offload": est.layers_offload,
                "split": list(est.split),
                "available_bytes": list(est.available_bytes),
                "gpu_overhead_bytes": est.gpu_overhead_bytes,
                "minimum_memory_bytes": est.minimum_memory_bytes,
                "required_full_bytes": est.required_full_bytes,
                "required_partial_bytes": est.required_partial_bytes,
                "required_kv_bytes": est.kv_bytes,
                "allocations_bytes": list(est.allocations_bytes),
                "weights_total_bytes": est.weights_total_bytes,
                "weights_repeating_bytes": est.weights_repeating_bytes,
                "weights_nonrepeating_bytes": est.weights_nonrepeating_bytes,
                "graph_full_bytes": est.graph_full_bytes,
                "graph_partial_bytes": est.graph_partial_bytes,
            }
            base["estimate_vs_allocated_kv_bytes"] = float(self.kv_pool_bytes) - est.kv_bytes
        return base


def _offload_line(est: OllamaEstimate, rules: OllamaRelease) -> str:
    """llm/memory.go MemoryEstimate.LogValue as slog's text handler writes it (keys in Ollama's order)."""
    head = (
        f'msg="offload to {est.library}"'
        if rules.offload_message == "offload to"
        else f"msg=offload library={est.library}"
    )
    parts = [
        head,
        f"layers.requested={est.layers_requested}",
        f"layers.model={est.layers_model}",
        f"layers.offload={est.layers_offload}",
        f"layers.split={_slog_value(','.join(str(n) for n in est.split))}",
        f"memory.available={_slog_list([human_bytes2(x) for x in est.available_bytes])}",
    ]
    if rules.at_least("0.3.10"):
        parts.append(f"memory.gpu_overhead={_slog_value(human_bytes2(est.gpu_overhead_bytes))}")
    parts += [
        f"memory.required.full={_slog_value(human_bytes2(est.required_full_bytes))}",
        f"memory.required.partial={_slog_value(human_bytes2(est.required_partial_bytes))}",
        f"memory.required.kv={_slog_value(human_bytes2(est.kv_bytes))}",
        f"memory.required.allocations={_slog_list([human_bytes2(x) for x in est.allocations_bytes])}",
        f"memory.weights.total={_slog_value(human_bytes2(est.weights_total_bytes))}",
        f"memory.weights.repeating={_slog_value(human_bytes2(est.weights_repeating_bytes))}",
        f"memory.weights.nonrepeating={_slog_value(human_bytes2(est.weights_nonrepeating_bytes))}",
        f"memory.graph.full={_slog_value(human_bytes2(est.graph_full_bytes))}",
        f"memory.graph.partial={_slog_value(human_bytes2(est.graph_partial_bytes))}",
    ]
    if est.projector_weights_bytes > 0 and rules.at_least("0.4.0"):
        parts += [
            f"projector.weights={_slog_value(human_bytes2(est.projector_weights_bytes))}",
            f"projector.graph={_slog_value(human_bytes2(est.projector_graph_bytes))}",
        ]
    return " ".join(parts)


def ollama_startup(
    model: ModelSpec,
    *,
    num_ctx: int | None = None,
    num_parallel: int | None = None,
    kv_cache_type: str = "f16",
    flash_attention: bool | None = None,
    gpu: GpuSpec | None = None,
    gpu_count: int = 1,
    version: str | None = None,
    weights_bytes: float | None = None,
    num_gpu: int = -1,
    num_batch: int = _NUM_BATCH,
    free_bytes: float | None = None,
    gpu_overhead_bytes: float = 0.0,
    projector_weights_bytes: float = 0.0,
    projector_graph_bytes: float = 0.0,
    architecture: str | None = None,
    new_engine: bool | None = None,
) -> OllamaStartup:
    """What Ollama `version` does with `model` on `gpu_count` × `gpu`: settings, estimate, allocated cache.

    Settings (module docstring): num_ctx and OLLAMA_NUM_PARALLEL default by release; the cache type
    is honoured only with flash attention (else f16). num_gpu is the request's ``num_gpu`` option
    (-1: as many layers as fit). The runner: the Ollama engine for the architectures
    OllamaEngineRequired lists in that release (or all with ``new_engine=True``, OLLAMA_NEW_ENGINE),
    whose cache is :func:`ollama_engine_cache`; otherwise llama.cpp with ``--ctx-size num_ctx·parallel
    --parallel parallel --batch-size num_batch`` and the type for K and V
    (:func:`kvcore.llamacpp.llamacpp_startup`). ``fits``: no GPU → True (a CPU load); else the
    estimate offloads every layer (layers.offload = layers.model), as Ollama needs to load fully on the
    GPU. ``terms``: the estimate's parts that come off the GPU before the cache.
    """
    rules = ollama_release(version)
    arch = _arch(model, architecture)
    parallel_given = num_parallel
    settings = _settings(model, gpu, gpu_count, num_ctx, num_parallel, kv_cache_type, flash_attention, rules, arch)
    if parallel_given is None and rules.default_num_parallel is None and gpu is not None:
        # server/sched.go: an automatic OLLAMA_NUM_PARALLEL tries defaultParallel, then 1.
        first = _estimate(
            model,
            gpu,
            gpu_count,
            settings,
            weights_bytes,
            num_gpu,
            num_batch,
            free_bytes,
            gpu_overhead_bytes,
            (projector_weights_bytes, projector_graph_bytes),
            arch,
            rules,
        )
        if not first.fully_offloaded:
            settings = dict(settings, num_parallel=1)
    ctx, parallel, cache, fa = settings["num_ctx"], settings["num_parallel"], settings["kv_cache_type"], settings["fa"]
    estimate = None
    if not rules.llama_server:
        estimate = _estimate(
            model,
            gpu,
            gpu_count,
            settings,
            weights_bytes,
            num_gpu,
            num_batch,
            free_bytes,
            gpu_overhead_bytes,
            (projector_weights_bytes, projector_graph_bytes),
            arch,
            rules,
        )
    on_engine = rules.ollama_engine(arch) if new_engine is None else bool(new_engine) and not rules.llama_server
    on_engine = on_engine and all(layer.kind in ("full", "sliding") for layer in model.layers)
    llamacpp = None
    cells: np.ndarray = np.zeros(0, dtype=np.int64)
    layer_bytes: np.ndarray = np.zeros(0)
    if on_engine:
        cells, layer_bytes = ollama_engine_cache(
            model,
            num_ctx=ctx,
            num_parallel=parallel,
            kv_cache_type=cache,
            flash_attention=fa,
            num_batch=num_batch,
            architecture=arch,
        )
        kv_pool = float(layer_bytes.sum())
        tokens = int(cells.max()) if cells.size else 0
    else:
        llamacpp = llamacpp_startup(
            model,
            ctx_size=ctx * parallel,
            parallel=parallel,
            cache_type_k=cache,
            cache_type_v=cache,
            ubatch_size=num_batch,
            batch_size=num_batch * (parallel if rules.at_least("0.20.0") else 1),
            flash_attn=fa,
            build=rules.llamacpp_build,
            gpu=gpu,
            gpu_count=gpu_count,
            weights_bytes=weights_bytes,
        )
        kv_pool = float(llamacpp.kv_pool_bytes)
        tokens = int(llamacpp.tokens)
    if gpu is None:
        fits = True
    elif estimate is not None:
        fits = estimate.fully_offloaded
    else:
        fits = bool(llamacpp.fits) if llamacpp is not None else True
    terms: tuple[BudgetTerm, ...] = ()
    if estimate is not None and gpu is not None:
        terms = (
            BudgetTerm(
                name="minimum_memory",
                bytes=estimate.minimum_memory_bytes,
                source="discover/gpu.go MinimumMemory (457 MiB CUDA/ROCm, 512 MiB Metal), per GPU",
            ),
            BudgetTerm(name="gpu_overhead", bytes=estimate.gpu_overhead_bytes, source="envconfig OLLAMA_GPU_OVERHEAD"),
            BudgetTerm(
                name="weights",
                bytes=estimate.weights_total_bytes,
                source="llm/memory.go memory.weights.total (blocks + output layer)",
            ),
            BudgetTerm(
                name="graph",
                bytes=estimate.graph_full_bytes if estimate.fully_offloaded else estimate.graph_partial_bytes,
                source="fs/ggml/ggml.go GraphSize (memory.graph.full / .partial)",
            ),
            BudgetTerm(
                name="kv_estimate",
                bytes=estimate.kv_bytes,
                source="fs/ggml/ggml.go GraphSize KV (q8_0 counted as 1 byte, q4_0 as 0.5)",
            ),
        )
    return OllamaStartup(
        release=rules.version,
        model=model,
        gpu=gpu,
        gpu_count=int(gpu_count),
        num_ctx=ctx,
        num_parallel=parallel,
        kv_cache_type=cache,
        requested_kv_cache_type=settings["requested"],
        flash_attention=fa,
        num_batch=int(num_batch),
        architecture=arch,
        runner="ollama" if on_engine else ("llama-server" if rules.llama_server else "llama"),
        kv_pool_bytes=kv_pool,
        tokens=tokens,
        fits=fits,
        estimate=estimate,
        llamacpp=llamacpp,
        engine_cells=tuple(int(c) for c in cells),
        engine_layer_bytes=tuple(float(b) for b in layer_bytes),
        terms=terms,
    )


def _estimate(
    model: ModelSpec,
    gpu: GpuSpec | None,
    gpu_count: int,
    settings: Mapping[str, Any],
    weights_bytes: float | None,
    num_gpu: int,
    num_batch: int,
    free_bytes: float | None,
    gpu_overhead_bytes: float,
    projector: tuple[float, float],
    arch: str,
    rules: OllamaRelease,
) -> OllamaEstimate:
    return ollama_estimate(
        model,
        gpu=gpu,
        gpu_count=gpu_count,
        num_ctx=settings["num_ctx"],
        num_parallel=settings["num_parallel"],
        kv_cache_type=settings["requested"],
        flash_attention=settings["fa"],
        num_gpu=num_gpu,
        weights_bytes=weights_bytes,
        free_bytes=free_bytes,
        gpu_overhead_bytes=gpu_overhead_bytes,
        projector_weights_bytes=projector[0],
        projector_graph_bytes=projector[1],
        num_batch=num_batch,
        architecture=arch,
        release=rules.version,
    )


# ---------------------------------------------------------------------------------------------- what fits


def ollama_required_bytes(
    model: ModelSpec,
    *,
    num_ctx: ArrayLike,
    num_parallel: int = 1,
    kv_cache_type: str = "f16",
    flash_attention: bool = True,
    library: str = "cuda",
    weights_bytes: float | None = None,
    num_batch: int = _NUM_BATCH,
    architecture: str | None = None,
    release: str | None = None,
) -> np.ndarray:
    """What one GPU must have free for Ollama to offload everything, per num_ctx [bytes] (vectorised).

    llm/memory.go EstimateGPULayers on one GPU, the last placement's test (free > overhead + used +
    max(graph) + output): MinimumMemory + (blk.0 + KV₀) + Σ blocks + KV + output + max(graph partial,
    graph full), the KV and graph at each num_ctx (:func:`ollama_kv_estimate_bytes`,
    :func:`ollama_graph_bytes`). Add OLLAMA_GPU_OVERHEAD to compare with free memory. The cache
    type counts only with flash attention (as Ollama does).
    """
    rules = ollama_release(release)
    arch = _arch(model, architecture)
    cache = _cache_type(kv_cache_type) if flash_attention else "f16"
    ctx = np.asarray(num_ctx, dtype=np.int64)
    kv = ollama_kv_estimate_bytes(
        model,
        num_ctx=ctx,
        num_parallel=num_parallel,
        kv_cache_type=cache,
        num_batch=num_batch,
        architecture=arch,
        release=rules.version,
    )
    blocks, output = _weights_split(model, weights_bytes)
    partial, full = ollama_graph_bytes(
        model,
        num_ctx=ctx,
        num_parallel=num_parallel,
        kv_cache_type=cache,
        flash_attention=flash_attention,
        num_batch=num_batch,
        library=library,
        architecture=arch,
        release=rules.version,
    )
    graph = np.maximum(partial, full)
    minimum = float(_MINIMUM_MEMORY_BYTES.get(library, 0))
    layers = model.num_hidden_layers
    return minimum + blocks / layers + kv[..., 0] + blocks + kv.sum(axis=-1) + output + graph


def ollama_max_context(
    model: ModelSpec,
    *,
    gpu: GpuSpec,
    kv_cache_type: str = "f16",
    num_parallel: int = 1,
    weights_bytes: float | None = None,
    flash_attention: bool = True,
    gpu_overhead_bytes: float = 0.0,
    free_bytes: float | None = None,
    step_tokens: int = 1024,
    max_tokens: int | None = None,
    release: str | None = None,
) -> int:
    """The longest num_ctx (a multiple of `step_tokens`) Ollama still loads fully on `gpu`, 0 if none.

    Free memory: Metal's recommendedMaxWorkingSetSize on Apple silicon (:func:`metal_working_set_bytes`),
    else the memory the driver reports (or `free_bytes`). Fits when free > OLLAMA_GPU_OVERHEAD +
    :func:`ollama_required_bytes` — Ollama's own test, so a q8_0 cache counts 1 byte per value as its
    estimate does. Searched over every multiple of `step_tokens` up to the model's trained context
    (or `max_tokens`) in one vectorised evaluation.

    >>> from kvcore.data import load_gpus, load_models
    >>> ollama_max_context(load_models()["llama-3.1-8b"], gpu=load_gpus()["rtx-3060-12gb"]) > 8192
    True
    """
    limit = int(max_tokens or model.max_position_embeddings or 131072)
    grid = np.arange(int(step_tokens), limit + 1, int(step_tokens), dtype=np.int64)
    if grid.size == 0:
        return 0
    library = ollama_library(gpu)
    need = ollama_required_bytes(
        model,
        num_ctx=grid,
        num_parallel=num_parallel,
        kv_cache_type=kv_cache_type,
        flash_attention=flash_attention,
        library=library,
        weights_bytes=weights_bytes,
        release=release,
    )
    fits = _free_bytes(gpu, free_bytes) > gpu_overhead_bytes + need
    return int(grid[fits].max()) if fits.any() else 0


# ---------------------------------------------------------------------------------------------- the log reader

_SIZE = r'"?(\d+(?:\.\d+)?) (GiB|MiB|KiB|B)"?'
_UNIT = {"GiB": float(GiB), "MiB": float(MiB), "KiB": float(KiB), "B": 1.0}
_OFFLOAD = re.compile(r'msg=(?:"offload to (\w+)"|offload library=(\w+))(.*)$', re.MULTILINE)
_DEVICE = re.compile(r'msg="(model weights|kv cache|compute graph)" device=(\S+) size=' + _SIZE)
_TOTAL = re.compile(r'msg="total memory" size=' + _SIZE)
_LOAD_REQUEST = re.compile(r"msg=load request=\"\{([^}]*)\}\"")
_CMD = re.compile(r'msg="starting (?:llama server|runner|llama-server)" cmd="([^"]*)"')
_KEY = re.compile(r'([a-z_.]+)=("(?:[^"\\]|\\.)*"|\S+)')

#: Lines only Ollama prints (not the llama.cpp lines it relays): its estimate, its device summary,
#: the runner command, its load request, its server config and GPU discovery.
OLLAMA_MARKERS = re.compile(
    r'msg="offload to \w+"|msg=offload library=|msg="(?:model weights|kv cache|compute graph)" device=|'
    r'msg="total memory" size=|msg=load request=|msg="starting (?:llama server|runner|ollama engine|llama-server)"|'
    r'msg="inference compute"|msg="server config"|msg="system memory"|msg="enabling flash attention"|'
    r'msg="vram-based default context"|msg="kv cache type not supported by model"|'
    r'msg="quantized kv cache requested but flash attention disabled"|source=sched\.go:\d+'
)


@dataclass(frozen=True, slots=True, kw_only=True)
class OllamaLog:
    """What an Ollama server log says about memory, in bytes (None: not printed).

    From the estimate line (``memory.*``, ``layers.*``), the device lines (``*_by_device``: device →
    bytes), the runner command (``--ctx-size``, ``--parallel``, ``--kv-cache-type``, ``--flash-attn``)
    or the load request (``KvSize``, ``Parallel``, ``KvCacheType``, ``FlashAttention``, ``GPULayers``).
    ``llamacpp`` is kvcore.llamacpp's reading of the llama.cpp lines Ollama relays (None if absent).
    """

    library: str | None = None
    layers_requested: int | None = None
    layers_model: int | None = None
    layers_offload: int | None = None
    layers_split: tuple[int, ...] | None = None
    available_bytes: tuple[float, ...] | None = None
    gpu_overhead_bytes: float | None = None
    required_full_bytes: float | None = None
    required_partial_bytes: float | None = None
    required_kv_bytes: float | None = None
    allocations_bytes: tuple[float, ...] | None = None
    weights_total_bytes: float | None = None
    weights_repeating_bytes: float | None = None
    weights_nonrepeating_bytes: float | None = None
    graph_full_bytes: float | None = None
    graph_partial_bytes: float | None = None
    projector_weights_bytes: float | None = None
    projector_graph_bytes: float | None = None
    weights_by_device: Mapping[str, float] = field(default_factory=dict)
    kv_by_device: Mapping[str, float] = field(default_factory=dict)
    graph_by_device: Mapping[str, float] = field(default_factory=dict)
    total_memory_bytes: float | None = None
    kv_size: int | None = None
    ctx_size: int | None = None
    parallel: int | None = None
    batch_size: int | None = None
    kv_cache_type: str | None = None
    flash_attention: bool | None = None
    ollama_engine: bool | None = None
    gpu_layers: tuple[tuple[int, int], ...] | None = None
    llamacpp: LlamaCppLog | None = None
    recognised: tuple[RecognisedLine, ...] = ()
    ignored: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    truncated: bool = False
    half_step: Mapping[str, float] = field(default_factory=dict)

    @property
    def kv_pool_bytes(self) -> float | None:
        """The KV cache the log states: the device lines' sum (allocated or estimated), else the estimate."""
        if self.kv_by_device:
            return float(sum(self.kv_by_device.values()))
        return self.required_kv_bytes


def _size(number: str, unit: str) -> tuple[float, float]:
    value = float(number) * _UNIT[unit]
    decimals = len(number.partition(".")[2])
    return value, (0.5 * 10.0**-decimals * _UNIT[unit] if unit != "B" else 0.0)


def parse_ollama_log(text: str | bytes) -> OllamaLog:
    """Read an Ollama server log: its estimate line, device lines, runner command and load request.

    Matches Ollama's own message formats (llm/memory.go MemoryEstimate.LogValue, ml/backend.go
    BackendMemory.Log, llm/server.go) anywhere in a line, so journald prefixes, timestamps and
    colour codes do not matter, and an estimate line wrapped over several lines still reads. Sizes
    (format.HumanBytes2) become bytes with half a printed step in ``half_step``. The llama.cpp lines
    Ollama relays go to kvcore.llamacpp's reader when present. Never raises.

    >>> log = parse_ollama_log('msg=offload library=cuda layers.model=35 memory.required.kv="341.0 MiB"')
    >>> log.layers_model, log.required_kv_bytes / 2**20
    (35, 341.0)
    """
    try:
        return _parse(text)
    except Exception:  # a last guard: the page must show something for any paste
        return OllamaLog()


_OFFLOAD_FIELDS = {
    "layers.requested": ("layers_requested", "int"),
    "layers.model": ("layers_model", "int"),
    "layers.offload": ("layers_offload", "int"),
    "layers.split": ("layers_split", "ints"),
    "memory.available": ("available_bytes", "sizes"),
    "memory.gpu_overhead": ("gpu_overhead_bytes", "size"),
    "memory.required.full": ("required_full_bytes", "size"),
    "memory.required.partial": ("required_partial_bytes", "size"),
    "memory.required.kv": ("required_kv_bytes", "size"),
    "memory.required.allocations": ("allocations_bytes", "sizes"),
    "memory.weights.total": ("weights_total_bytes", "size"),
    "memory.weights.repeating": ("weights_repeating_bytes", "size"),
    "memory.weights.nonrepeating": ("weights_nonrepeating_bytes", "size"),
    "memory.graph.full": ("graph_full_bytes", "size"),
    "memory.graph.partial": ("graph_partial_bytes", "size"),
    "projector.weights": ("projector_weights_bytes", "size"),
    "projector.graph": ("projector_graph_bytes", "size"),
}
_SIZE_ONLY = re.compile(r"^(\d+(?:\.\d+)?) (GiB|MiB|KiB|B)$")


def _parse(text: str | bytes) -> OllamaLog:
    # read_patterns gives the cleaned, joined paste and the recognised lines; the patterns mark Ollama's lines.
    reading = read_patterns(text, _LINE_PATTERNS)
    joined = reading.joined
    values: dict[str, Any] = {}
    half: dict[str, float] = {}
    conflicts: list[str] = list(reading.conflicts)

    def put(name: str, value: Any, step: float | None = None) -> None:
        if name in values:
            if values[name] != value and name not in conflicts:
                conflicts.append(name)
            return
        values[name] = value
        if step is not None:
            half[name] = step

    # An estimate line may be wrapped over lines (issue #10061's quote): join until the next log record.
    for match in _OFFLOAD.finditer(_unwrapped(joined)):
        put("library", (match.group(1) or match.group(2)).lower())
        for key, raw in _KEY.findall(match.group(3)):
            if key not in _OFFLOAD_FIELDS:
                continue
            name, kind = _OFFLOAD_FIELDS[key]
            raw = raw.strip('"')
            if kind == "int":
                put(name, int(raw))
            elif kind == "ints":
                put(name, tuple(int(x) for x in re.findall(r"\d+", raw)))
            elif kind == "size":
                size = _SIZE_ONLY.match(raw)
                if size:
                    value, step = _size(size.group(1), size.group(2))
                    put(name, value, step)
            else:
                items = re.findall(r"(\d+(?:\.\d+)?) (GiB|MiB|KiB|B)", raw)
                sizes = [_size(n, u) for n, u in items]
                put(name, tuple(v for v, _ in sizes), max((s for _, s in sizes), default=0.0))
    by_device: dict[str, dict[str, float]] = {"model weights": {}, "kv cache": {}, "compute graph": {}}
    for match in _DEVICE.finditer(joined):
        value, step = _size(match.group(3), match.group(4))
        table = by_device[match.group(1)]
        table.setdefault(match.group(2), value)
        key = {"model weights": "weights_by_device", "kv cache": "kv_by_device", "compute graph": "graph_by_device"}
        half[f"{key[match.group(1)]}.{match.group(2)}"] = step
    for match in _TOTAL.finditer(joined):
        value, step = _size(match.group(1), match.group(2))
        put("total_memory_bytes", value, step)
    for match in _LOAD_REQUEST.finditer(joined):
        body = match.group(1)
        fields = dict(re.findall(r"(\w+):(\S*)", body))
        if "KvSize" in fields and fields["KvSize"].isdigit():
            put("kv_size", int(fields["KvSize"]))
        if fields.get("Parallel", "").isdigit():
            put("parallel", int(fields["Parallel"]))
        if fields.get("BatchSize", "").isdigit():
            put("batch_size", int(fields["BatchSize"]))
        if "KvCacheType" in fields:
            put("kv_cache_type", fields["KvCacheType"] or "f16")
        if "FlashAttention" in fields:
            put("flash_attention", fields["FlashAttention"].lower() in ("true", "enabled"))
        layers = re.findall(r"Layers:\d+\((\d+)\.\.(\d+)\)", body)
        if layers:
            put("gpu_layers", tuple((int(a), int(b)) for a, b in layers))
    for match in _CMD.finditer(joined):
        cmd = match.group(1)
        # the runner's flags by name, their dashes dropped (ctx-size, c, parallel, np, kv-cache-type, flash-attn, …)
        flag = dict(re.findall(r"(?:^|\s)-{1,2}([a-z][a-z-]*)(?:\s+([^-\s]\S*))?", cmd))
        for names, target in (
            (("ctx-size", "c"), "ctx_size"),
            (("parallel", "np"), "parallel"),
            (("batch-size", "b"), "batch_size"),
        ):
            for name in names:
                if flag.get(name, "").isdigit():
                    put(target, int(flag[name]))
        for name in ("kv-cache-type", "cache-type-k"):
            if flag.get(name):
                put("kv_cache_type", flag[name])
        if "flash-attn" in flag:
            put("flash_attention", flag["flash-attn"] in ("", "on"))
        put("ollama_engine", "ollama-engine" in flag)
    llamacpp = None
    if re.search(r"llama_kv_cache|llama_new_context|llama_context:", joined):
        llamacpp = parse_llamacpp_log(text)
    return OllamaLog(
        **{k: v for k, v in values.items() if v is not None},
        weights_by_device=by_device["model weights"],
        kv_by_device=by_device["kv cache"],
        graph_by_device=by_device["compute graph"],
        llamacpp=llamacpp,
        recognised=reading.recognised,
        ignored=reading.ignored,
        conflicts=tuple(conflicts),
        truncated=reading.truncated,
        half_step=half,
    )


_RECORD_START = re.compile(r"^(?:\S+ \d+ [\d:]+ \S+ \S+: )?(?:time=|level=|\[GIN\]|llama_|llm_|print_info|load_|ggml_)")


def _unwrapped(joined: str) -> str:
    """The paste with continuation lines (not starting a new log record) joined to the line before."""
    out: list[str] = []
    for line in joined.split("\n"):
        if out and line and not _RECORD_START.match(line) and "msg=" not in line and "=" in line:
            out[-1] = out[-1] + " " + line
        else:
            out.append(line)
    return "\n".join(out)


_LINE_PATTERNS = (
    log_pattern(("ollama_estimate",), ("flag",), r'msg=(?:"offload to \w+"|offload library=\w+)'),
    log_pattern(("ollama_estimate_part",), ("flag",), r'^\s*memory\.[a-z.]+="'),
    log_pattern(("ollama_device",), ("flag",), r'msg="(?:model weights|kv cache|compute graph)" device='),
    log_pattern(("ollama_total",), ("flag",), r'msg="total memory" size='),
    log_pattern(("ollama_load_request",), ("flag",), r"msg=load request="),
    log_pattern(("ollama_runner",), ("flag",), r'msg="starting (?:llama server|runner|llama-server)" cmd='),
)


# ---------------------------------------------------------------------------------------------- reconciliation


def _between(kind: str, unit: str, logged: float, low: float, high: float, half_step: float) -> Check:
    """Agree when logged lies in [low − half_step, high + half_step] (expected: the middle)."""
    mid = (low + high) / 2
    check = verdict(kind, unit, logged, mid, (high - low) / 2 + half_step)
    return check


def reconcile_ollama(
    log: OllamaLog,
    model: ModelSpec,
    *,
    num_ctx: int | None = None,
    num_parallel: int | None = None,
    kv_cache_type: str | None = None,
    flash_attention: bool | None = None,
    num_batch: int | None = None,
    release: str | None = None,
    architecture: str | None = None,
) -> tuple[Check, ...]:
    """Every number of an Ollama log recomputed by kvcore from the model and the settings.

    Settings come from the log where it prints them (the runner command's ``--ctx-size`` = num_ctx ·
    parallel, or the load request's ``KvSize``; ``--parallel``; ``--kv-cache-type``; flash
    attention), else the arguments. Checks, each within the printed rounding:

    * ``memory.required.kv`` = Σ :func:`ollama_kv_estimate_bytes`;
    * ``memory.graph.full`` / ``.partial`` = :func:`ollama_graph_bytes`;
    * ``memory.weights.total`` = repeating + nonrepeating;
    * ``layers.model`` = blocks + 1;
    * ``memory.required.full`` (one GPU) = MinimumMemory + a buffer layer (blk.0 taken as repeating ÷
      blocks, ± half of that) + weights + KV + projector + graph (full if layers.offload = layers.model);
    * ``memory.required.partial`` (one GPU) = full − what was not offloaded;
    * ``kv cache`` device lines: the Ollama engine's cache (:func:`ollama_engine_cache`) or, on the
      llama engine, the estimate, summed over the layers each device holds (load request GPULayers);
    * ``total memory`` = Σ device lines;
    * the relayed llama.cpp lines: kvcore.llamacpp's reconciliation.
    """
    rules = ollama_release(release)
    arch = _arch(model, architecture)
    parallel = log.parallel or num_parallel or 1
    if log.kv_size is not None:
        ctx = log.kv_size // parallel
    elif log.ctx_size is not None:
        ctx = log.ctx_size // parallel
    else:
        ctx = num_ctx or 0
    fa = log.flash_attention if log.flash_attention is not None else bool(flash_attention)
    cache = (log.kv_cache_type or kv_cache_type or "f16") if fa else "f16"
    batch = log.batch_size or num_batch or _NUM_BATCH
    checks: list[Check] = []
    if not ctx:
        reason = "the log prints no context size (the runner's ctx-size or KvSize) and no num_ctx was given"
        devices = float(sum(log.kv_by_device.values())) if log.kv_by_device else None
        for kind, logged in (("memory.required.kv", log.required_kv_bytes), ("kv cache", devices)):
            if logged is not None:
                checks.append(cannot_check(kind, "bytes", reason, logged))
        return tuple(checks) + _relayed_checks(log, model, rules, None, parallel, cache, fa)
    kv = ollama_kv_estimate_bytes(
        model,
        num_ctx=ctx,
        num_parallel=parallel,
        kv_cache_type=cache,
        num_batch=batch,
        architecture=arch,
        release=rules.version,
    )
    kv_total = float(kv.sum())
    half = log.half_step
    if log.required_kv_bytes is not None:
        checks.append(
            verdict("memory.required.kv", "bytes", log.required_kv_bytes, kv_total, half.get("required_kv_bytes", 0.0))
        )
    library = log.library or "cuda"
    gpus = len(log.available_bytes or ()) or 1
    partial_graph, full_graph = ollama_graph_bytes(
        model,
        num_ctx=ctx,
        num_parallel=parallel,
        kv_cache_type=cache,
        flash_attention=fa,
        num_batch=batch,
        library=library,
        gpu_count=gpus,
        architecture=arch,
        release=rules.version,
    )
    if log.graph_full_bytes is not None:
        checks.append(
            verdict("memory.graph.full", "bytes", log.graph_full_bytes, full_graph, half.get("graph_full_bytes", 0.0))
        )
    if log.graph_partial_bytes is not None:
        checks.append(
            verdict(
                "memory.graph.partial",
                "bytes",
                log.graph_partial_bytes,
                partial_graph,
                half.get("graph_partial_bytes", 0.0),
            )
        )
    if log.layers_model is not None:
        checks.append(verdict("layers.model", "layers", log.layers_model, model.num_hidden_layers + 1))
    rep, nonrep = log.weights_repeating_bytes, log.weights_nonrepeating_bytes
    if log.weights_total_bytes is not None and rep is not None and nonrep is not None:
        step = half.get("weights_repeating_bytes", 0.0) + half.get("weights_nonrepeating_bytes", 0.0)
        checks.append(
            verdict(
                "memory.weights.total",
                "bytes",
                log.weights_total_bytes,
                rep + nonrep,
                step + half.get("weights_total_bytes", 0.0),
            )
        )
    checks.extend(_required_checks(log, model, rules, arch, kv, partial_graph, full_graph, gpus))
    if log.kv_by_device:
        checks.extend(_device_checks(log, model, rules, arch, ctx, parallel, cache, fa, batch, kv))
    if log.total_memory_bytes is not None:
        parts = [*log.weights_by_device.items(), *log.kv_by_device.items(), *log.graph_by_device.items()]
        steps = sum(
            half.get(f"{name}.{device}", 0.0)
            for name, table in (
                ("weights_by_device", log.weights_by_device),
                ("kv_by_device", log.kv_by_device),
                ("graph_by_device", log.graph_by_device),
            )
            for device in table
        )
        checks.append(
            verdict(
                "total memory",
                "bytes",
                log.total_memory_bytes,
                sum(v for _, v in parts),
                steps + half.get("total_memory_bytes", 0.0),
            )
        )
    checks.extend(_relayed_checks(log, model, rules, ctx * parallel, parallel, cache, fa))
    return tuple(checks)


def _relayed_checks(
    log: OllamaLog,
    model: ModelSpec,
    rules: OllamaRelease,
    ctx_size: int | None,
    parallel: int,
    cache: str,
    fa: bool,
) -> tuple[Check, ...]:
    """The llama.cpp lines Ollama relays, reconciled by kvcore.llamacpp with the release's vendored build."""
    if log.llamacpp is None:
        return ()
    options: dict[str, Any] = {"parallel": parallel, "cache_type_k": cache, "cache_type_v": cache, "flash_attn": fa}
    if ctx_size:
        options["ctx_size"] = ctx_size
    try:
        return reconcile_llamacpp(log.llamacpp, model, build=rules.llamacpp_build, **options)
    except KvError as error:
        return (cannot_check("llama.cpp", "bytes", f"kvcore.llamacpp could not reconcile: {error}"),)


def _required_checks(
    log: OllamaLog,
    model: ModelSpec,
    rules: OllamaRelease,
    arch: str,
    kv: np.ndarray,
    partial_graph: float,
    full_graph: float,
    gpus: int,
) -> list[Check]:
    """memory.required.full / .partial from the logged weights, graph and split (llm/memory.go EstimateGPULayers).

    With S = Σ blocks (block + its KV), O = the output layer, P = the projector, G = the graph
    (full when everything is offloaded, else partial), n = the GPUs that got layers and
    L = S ÷ blocks: full = n · (MinimumMemory + blk.0 + KV₀ + G) + S + O + P, the buffer layer
    blk.0 + KV₀ taken in [0.75 L, 1.5 L] (a GGUF's first blocks are often a larger quant);
    partial = full − the blocks not offloaded (each L ± 10 %) − the output layer if it stayed on
    the CPU (with the Ollama engine's projector, which travels with it).
    """
    out: list[Check] = []
    full, part = log.required_full_bytes, log.required_partial_bytes
    if full is None and part is None:
        return out
    total, rep, nonrep = log.weights_total_bytes, log.weights_repeating_bytes, log.weights_nonrepeating_bytes
    if rep is None or nonrep is None or total is None or log.layers_model is None or log.layers_offload is None:
        for kind, value in (("memory.required.full", full), ("memory.required.partial", part)):
            if value is not None:
                out.append(cannot_check(kind, "bytes", "the estimate line lacks its weights or layers", value))
        return out
    half = log.half_step
    layers = model.num_hidden_layers
    kv_total = float(kv.sum())
    style = rules.weights_print
    if style == "with_kv":
        blocks_with_kv, s_step = total, half.get("weights_total_bytes", 0.0)
    else:
        blocks_with_kv, s_step = rep + kv_total, half.get("weights_repeating_bytes", 0.0)
    per_layer = blocks_with_kv / layers
    minimum = float(_MINIMUM_MEMORY_BYTES.get(log.library or "cuda", 0))
    projector = (log.projector_weights_bytes or 0.0) + (log.projector_graph_bytes or 0.0)
    fully = log.layers_offload >= log.layers_model
    graph = log.graph_full_bytes if fully else log.graph_partial_bytes
    graph = graph if graph is not None else (full_graph if fully else partial_graph)
    split = log.layers_split or ()
    n = (sum(1 for count in split if count > 0) if split else 1) if log.layers_offload > 0 else 0
    step = (
        s_step
        + half.get("weights_nonrepeating_bytes", 0.0)
        + n * half.get("graph_full_bytes" if fully else "graph_partial_bytes", 0.0)
        + half.get("projector_weights_bytes", 0.0)
        + half.get("projector_graph_bytes", 0.0)
    )
    base = n * (minimum + graph) + blocks_with_kv + nonrep + projector
    low, high = base + n * 0.75 * per_layer, base + n * 1.5 * per_layer
    if full is not None:
        out.append(
            _between("memory.required.full", "bytes", full, low, high, step + half.get("required_full_bytes", 0.0))
        )
    if part is not None:
        if log.layers_offload == 0:
            out.append(verdict("memory.required.partial", "bytes", part, 0.0, half.get("required_partial_bytes", 0.0)))
            return out
        missing = layers - min(log.layers_offload, layers)
        output_stays = log.layers_offload <= layers
        output = (nonrep + (projector if rules.ollama_engine(arch) else 0.0)) if output_stays else 0.0
        spread = 0.1 * missing * per_layer
        low_p = low - missing * per_layer - output - spread
        high_p = high - missing * per_layer - output + spread
        out.append(
            _between(
                "memory.required.partial", "bytes", part, low_p, high_p, step + half.get("required_partial_bytes", 0.0)
            )
        )
        if log.allocations_bytes is not None:
            step_a = sum(half.get("allocations_bytes", 0.0) for _ in log.allocations_bytes)
            out.append(
                verdict(
                    "memory.required.allocations",
                    "bytes",
                    float(sum(log.allocations_bytes)),
                    part,
                    step_a + half.get("required_partial_bytes", 0.0),
                )
            )
    return out


def _device_checks(
    log: OllamaLog,
    model: ModelSpec,
    rules: OllamaRelease,
    arch: str,
    ctx: int,
    parallel: int,
    cache: str,
    fa: bool,
    batch: int,
    kv: np.ndarray,
) -> list[Check]:
    """The ``kv cache`` device lines: each device's layers (load request GPULayers; else all on the GPU)."""
    on_engine = bool(log.ollama_engine) if log.ollama_engine is not None else rules.ollama_engine(arch)
    if on_engine:
        _, per_layer = ollama_engine_cache(
            model,
            num_ctx=ctx,
            num_parallel=parallel,
            kv_cache_type=cache,
            flash_attention=fa,
            num_batch=batch,
            architecture=arch,
        )
    else:
        per_layer = kv
    devices = [d for d in log.kv_by_device if d != "CPU"]
    ranges = log.gpu_layers or ()
    out: list[Check] = []
    assigned = np.zeros(model.num_hidden_layers, dtype=bool)
    if ranges and len(ranges) == len(devices):
        for device, (first, last) in zip(devices, ranges, strict=True):
            sl = slice(first, min(last, model.num_hidden_layers - 1) + 1)
            assigned[sl] = True
            out.append(
                verdict(
                    f"kv cache {device}",
                    "bytes",
                    log.kv_by_device[device],
                    float(per_layer[sl].sum()),
                    log.half_step.get(f"kv_by_device.{device}", 0.0),
                )
            )
        if "CPU" in log.kv_by_device:
            out.append(
                verdict(
                    "kv cache CPU",
                    "bytes",
                    log.kv_by_device["CPU"],
                    float(per_layer[~assigned].sum()),
                    log.half_step.get("kv_by_device.CPU", 0.0),
                )
            )
        return out
    if len(log.kv_by_device) == 1:
        device, value = next(iter(log.kv_by_device.items()))
        return [
            verdict(
                f"kv cache {device}",
                "bytes",
                value,
                float(per_layer.sum()),
                log.half_step.get(f"kv_by_device.{device}", 0.0),
            )
        ]
    total = float(sum(log.kv_by_device.values()))
    step = sum(log.half_step.get(f"kv_by_device.{d}", 0.0) for d in log.kv_by_device)
    return [verdict("kv cache", "bytes", total, float(per_layer.sum()), step)]
