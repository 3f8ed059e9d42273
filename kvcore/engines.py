"""One question, five engines: what each inference engine's start-up gives a model on a GPU.

vLLM, SGLang, llama.cpp, Ollama (which embeds llama.cpp) and TensorRT-LLM each size their KV
cache by their own rules (each engine's module cites the file, function and release it follows):

* vLLM (:mod:`kvcore.vllm_startup`): total memory · gpu_memory_utilization − weights − activation
  peak − non-torch memory (− CUDA graphs from 0.20), cut into blocks of 16 tokens (MLA 64/128);
* SGLang (:mod:`kvcore.sglang`): the free memory after the weights, minus total · (1 −
  mem_fraction_static), divided by the bytes of one token on every layer, floored to the page;
* llama.cpp (:mod:`kvcore.llamacpp`): no memory budget at all — n_ctx cells per layer (padded,
  per sequence when not unified), K and V rows in their own types; a sliding-window model gets a
  second, small cache for its sliding layers;
* Ollama (:mod:`kvcore.ollama`): llama.cpp's cache for its num_ctx × parallel, after a scheduler
  estimate that decides how many layers go on the GPU;
* TensorRT-LLM (:mod:`kvcore.trtllm`): free_gpu_memory_fraction of the memory free once the
  engine is loaded, in blocks of tokens_per_block.

Each engine's start-up object answers the same questions (:class:`EngineStartup`): the pool per GPU,
the tokens it holds, whether the engine starts, the budget terms behind it, the requests of a
length that fit at once, the lines the engine prints, and one JSON object. :func:`engine_startup`
is the one entry point the CLI (``python -m kvcore startup``) and the app call; :func:`detect_engine`
names the engine of a pasted log from lines only that engine prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .budget import BudgetTerm
from .errors import KvError
from .hardware import GpuSpec
from .log_lines import pasted_lines
from .model import ModelSpec
from .vllm_startup import VllmStartup, startup_lines, vllm_startup

__all__ = [
    "ENGINES",
    "ENGINE_NAMES",
    "EngineComparison",
    "EngineStartup",
    "VllmEngineStartup",
    "compare_engines",
    "detect_engine",
    "engine_startup",
]

#: The engines kvcore models, by the name the CLI's --engine takes.
ENGINES: tuple[str, ...] = ("vllm",)
#: How each engine spells its own name.
ENGINE_NAMES: Mapping[str, str] = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "llama.cpp": "llama.cpp",
    "ollama": "Ollama",
    "trtllm": "TensorRT-LLM",
}


class EngineStartup(Protocol):
    """What every engine's start-up object answers (bytes, tokens, requests)."""

    @property
    def engine(self) -> str: ...
    @property
    def release(self) -> str: ...
    @property
    def kv_pool_bytes(self) -> float: ...
    @property
    def tokens(self) -> int: ...
    @property
    def fits(self) -> bool: ...
    @property
    def terms(self) -> tuple[BudgetTerm, ...]: ...

    def max_concurrency(self, context_tokens: int) -> float: ...
    def lines(self) -> list[str]: ...
    def as_json(self) -> dict[str, object]: ...


@dataclass(frozen=True, slots=True)
class VllmEngineStartup:
    """vLLM's start-up (:class:`kvcore.vllm_startup.VllmStartup`) seen through :class:`EngineStartup`.

    ``tokens`` is the "GPU KV cache size" as the release prints it; ``max_concurrency(L)`` =
    tokens the blocks hold / L for a model whose every layer keeps every token (vLLM's own
    "Maximum concurrency" is this at L = max_model_len, with sliding and linear layers counted
    by their groups).
    """

    startup: VllmStartup

    @property
    def engine(self) -> str:
        return "vllm"

    @property
    def release(self) -> str:
        return self.startup.release.label

    @property
    def kv_pool_bytes(self) -> float:
        return max(self.startup.log.kv_pool_bytes, 0.0)

    @property
    def tokens(self) -> int:
        return self.startup.printed_tokens if self.startup.log.has_pool else 0

    @property
    def fits(self) -> bool:
        return self.startup.fits

    @property
    def terms(self) -> tuple[BudgetTerm, ...]:
        return tuple(self.startup.log.budget.terms)

    def max_concurrency(self, context_tokens: int) -> float:
        """Requests of `context_tokens` that fit at once: vLLM's concurrency at max_model_len, scaled to the length."""
        log = self.startup.log
        if not log.has_pool or context_tokens <= 0:
            return 0.0
        return float(log.max_concurrency * log.max_model_len / context_tokens)

    def lines(self) -> list[str]:
        return startup_lines(self.startup)

    def as_json(self) -> dict[str, object]:
        log, startup = self.startup.log, self.startup
        return {
            "engine": self.engine,
            "release": self.release,
            "vllm_version": startup.release.label,
            "vllm_era": startup.release.era,
            "kv_pool_bytes": self.kv_pool_bytes,
            "bytes_per_token": log.bytes_per_token,
            "block_size": log.block_size,
            "num_blocks": log.num_blocks,
            "tokens": self.tokens,
            "max_model_len": log.max_model_len,
            "max_concurrency": log.max_concurrency,
            "fits": self.fits,
            "estimated_max_model_len": log.estimated_max_model_len,
            "max_num_batched_tokens": startup.max_num_batched_tokens,
            "max_num_seqs": startup.max_num_seqs,
            "tp": log.tp,
            "pp": log.pp,
            "enforce_eager": startup.enforce_eager,
            "budget": log.budget.as_dict(),
            "budget_sources": {term.name: term.source for term in log.budget.terms},
        }


def _vllm(model: ModelSpec, gpu: GpuSpec | None, flags: Mapping[str, Any]) -> EngineStartup:
    if gpu is None:
        raise KvError(
            "engine_needs_gpu", "vLLM sizes its pool from the GPU's memory: choose a GPU", engine=ENGINE_NAMES["vllm"]
        )
    return VllmEngineStartup(vllm_startup(model, gpu, **flags))


#: engine → (model, gpu, its own keyword arguments) → its start-up.
_STARTUPS: Mapping[str, Callable[[ModelSpec, GpuSpec | None, Mapping[str, Any]], EngineStartup]] = {
    "vllm": _vllm,
}


def engine_startup(
    engine: str, model: ModelSpec, *, gpu: GpuSpec | None = None, flags: Mapping[str, Any] | None = None
) -> EngineStartup:
    """The start-up of `engine` for `model` on `gpu`, with the engine's own keyword arguments.

    `flags` are the keyword arguments of the engine's function: :func:`kvcore.vllm_startup.vllm_startup` (version,
    utilization, max_model_len, kv_dtype, tp, …), :func:`kvcore.sglang.sglang_startup`,
    :func:`kvcore.llamacpp.llamacpp_startup`, :func:`kvcore.ollama.ollama_startup`,
    :func:`kvcore.trtllm.trtllm_startup`.

    >>> from kvcore.data import load_gpus, load_models
    >>> run = engine_startup("vllm", load_models()["llama-3.1-8b"], gpu=load_gpus()["rtx-3090"],
    ...                      flags={"version": "0.6.4.post1", "max_model_len": 20000})
    >>> run.engine, run.fits
    ('vllm', True)
    """
    if engine not in _STARTUPS:
        raise KvError(
            "unknown_engine", f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}", name="engine", value=engine
        )
    return _STARTUPS[engine](model, gpu, flags or {})


#: A cache width → each engine's name for it: 16 bits is every engine's default, 8 bits its one-byte format.
CACHE_FORMATS: Mapping[int, Mapping[str, str]] = {
    16: {"vllm": "auto", "sglang": "auto", "llama.cpp": "f16", "ollama": "f16", "trtllm": "auto"},
    8: {"vllm": "fp8", "sglang": "fp8_e5m2", "llama.cpp": "q8_0", "ollama": "q8_0", "trtllm": "fp8"},
}


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineComparison:
    """One engine's row of the side-by-side view: its start-up at its defaults and what it holds.

    ``users`` = ⌊max_concurrency(context)⌋, requests of ``context_tokens`` served at once;
    ``flags`` the keyword arguments the engine ran with (its defaults but for the context,
    the GPUs and the cache format).
    """

    engine: str
    startup: EngineStartup
    context_tokens: int
    users: int
    flags: Mapping[str, object]


def _default_flags(engine: str, *, context_tokens: int, gpus: int, cache_bits: int) -> dict[str, Any]:
    """Each engine at its defaults, asked for `context_tokens` per request on `gpus` GPUs (tensor parallel)."""
    cache = CACHE_FORMATS[cache_bits][engine]
    if engine == "vllm":
        return {"max_model_len": context_tokens, "tp": gpus, "kv_dtype": cache}
    raise KvError("unknown_engine", f"unknown engine {engine!r}", name="engine", value=engine)


def compare_engines(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    context_tokens: int,
    gpus: int = 1,
    cache_bits: int = 16,
    engines: tuple[str, ...] | None = None,
) -> tuple[EngineComparison, ...]:
    """Every engine at its own defaults on the same model and GPU(s): its pool, its tokens, its users.

    The server engines (vLLM, SGLang, TensorRT-LLM) size their pool from memory and serve as
    many requests of `context_tokens` as it holds; llama.cpp and Ollama size the cache from the
    context they are given, so their row is the most parallel slots of `context_tokens` whose
    cache still fits beside the weights (:func:`kvcore.llamacpp.llamacpp_startup`). `cache_bits`
    16 is each engine's default cache, 8 its one-byte format (:data:`CACHE_FORMATS`).
    """
    if cache_bits not in CACHE_FORMATS:
        raise KvError(
            "unknown_cache_bits", f"cache_bits must be 16 or 8, got {cache_bits}", name="cache_bits", value=cache_bits
        )
    rows = []
    for engine in engines or ENGINES:
        flags = _default_flags(engine, context_tokens=context_tokens, gpus=gpus, cache_bits=cache_bits)
        startup = engine_startup(engine, model, gpu=gpu, flags=flags)
        users = math.floor(startup.max_concurrency(context_tokens) + 1e-9) if startup.fits else 0
        rows.append(
            EngineComparison(engine=engine, startup=startup, context_tokens=context_tokens, users=users, flags=flags)
        )
    return tuple(rows)


def detect_engine(text: object) -> str | None:
    """The engine whose own lines a paste has most of (Ollama before llama.cpp, which it relays), or None.

    Each engine's module lists lines only that engine prints (``VLLM_MARKERS`` …); a paste is
    that engine's when it has more of them than of any other.
    """
    lines, _ = pasted_lines(text)
    counts = {name: sum(1 for line in lines if marker.search(line)) for name, marker in _markers().items()}
    if counts.get("ollama"):
        return "ollama"
    best = max(counts, key=lambda name: counts[name], default=None)
    return best if best is not None and counts[best] > 0 else None


def _markers() -> dict[str, Any]:
    from .vllm_log import VLLM_MARKERS

    return {"vllm": VLLM_MARKERS}
