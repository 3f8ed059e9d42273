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
from .llamacpp import llamacpp_startup, parse_llamacpp_log, reconcile_llamacpp
from .log_lines import Check, RecognisedLine, pasted_lines
from .memory import checkpoint_weights
from .model import ModelSpec
from .ollama import ollama_startup, parse_ollama_log, reconcile_ollama
from .sglang import parse_sglang_log, reconcile_sglang, sglang_startup
from .trtllm import parse_trtllm_log, reconcile_trtllm, trtllm_startup
from .vllm_log import parse_vllm_log, reconcile
from .vllm_startup import VllmStartup, startup_lines, vllm_startup

__all__ = [
    "CACHE_FORMATS",
    "ENGINES",
    "ENGINE_NAMES",
    "ENGINE_VENDORS",
    "MAX_SLOTS",
    "SLOT_ENGINES",
    "EngineComparison",
    "EngineLogReading",
    "EngineStartup",
    "VllmEngineStartup",
    "compare_engines",
    "detect_engine",
    "engine_runs_on",
    "engine_startup",
    "log_cache_settings",
    "read_engine_log",
    "reconcile_engine_log",
]

#: The engines kvcore models, by the name the CLI's --engine takes.
ENGINES: tuple[str, ...] = ("vllm", "sglang", "trtllm", "llama.cpp", "ollama")
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
        """M · (1 − u) held back, then vLLM's own terms: what the card's memory loses before the pool."""
        log = self.startup.log
        held = BudgetTerm(
            name="held_back",
            bytes=log.held_back_bytes,
            source=f"M · (1 − gpu_memory_utilization), u = {log.utilization:g}",
        )
        return (held, *log.budget.terms)

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


def _llamacpp(model: ModelSpec, gpu: GpuSpec | None, flags: Mapping[str, Any]) -> EngineStartup:
    return llamacpp_startup(model, gpu=gpu, **flags)


def _ollama(model: ModelSpec, gpu: GpuSpec | None, flags: Mapping[str, Any]) -> EngineStartup:
    return ollama_startup(model, gpu=gpu, **flags)


def _sglang(model: ModelSpec, gpu: GpuSpec | None, flags: Mapping[str, Any]) -> EngineStartup:
    return sglang_startup(model, gpu=gpu, **flags)


def _trtllm(model: ModelSpec, gpu: GpuSpec | None, flags: Mapping[str, Any]) -> EngineStartup:
    return trtllm_startup(model, gpu=gpu, **flags)


#: engine → (model, gpu, its own keyword arguments) → its start-up.
_STARTUPS: Mapping[str, Callable[[ModelSpec, GpuSpec | None, Mapping[str, Any]], EngineStartup]] = {
    "vllm": _vllm,
    "sglang": _sglang,
    "trtllm": _trtllm,
    "llama.cpp": _llamacpp,
    "ollama": _ollama,
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


#: The GPU vendors each engine runs on (vLLM and SGLang: CUDA and ROCm; TensorRT-LLM: CUDA only;
#: llama.cpp and Ollama: CUDA, ROCm and Metal).
ENGINE_VENDORS: Mapping[str, frozenset[str]] = {
    "vllm": frozenset({"NVIDIA", "AMD"}),
    "sglang": frozenset({"NVIDIA", "AMD"}),
    "trtllm": frozenset({"NVIDIA"}),
    "llama.cpp": frozenset({"NVIDIA", "AMD", "Apple"}),
    "ollama": frozenset({"NVIDIA", "AMD", "Apple"}),
}


def engine_runs_on(engine: str, gpu: GpuSpec) -> bool:
    """Whether `engine` has a backend for `gpu`'s vendor (:data:`ENGINE_VENDORS`; a GPU of no vendor: yes)."""
    return not gpu.vendor or gpu.vendor in ENGINE_VENDORS.get(engine, frozenset())


#: Engines that size the cache from the context they are given: a row holds the most slots that fit.
SLOT_ENGINES: Mapping[str, tuple[str, str]] = {
    "llama.cpp": ("ctx_size", "parallel"),
    "ollama": ("num_ctx", "num_parallel"),
}
#: The most parallel slots the side-by-side view tries (llama-server's -np has no limit of its own).
MAX_SLOTS = 4096


def _most_slots(
    engine: str, model: ModelSpec, gpu: GpuSpec, flags: Mapping[str, Any], *, context_tokens: int
) -> dict[str, Any]:
    """`flags` with the most slots of `context_tokens` whose cache fits beside the weights (1 if none fits).

    llama.cpp: -c = slots · context, -np = slots (each slot holds context cells); Ollama: num_ctx =
    context, OLLAMA_NUM_PARALLEL = slots (it asks llama.cpp for num_ctx · parallel). Bisection on
    ``fits``, which grows monotonically with the slots.
    """
    context_key, slots_key = SLOT_ENGINES[engine]

    def with_slots(slots: int) -> dict[str, Any]:
        size = context_tokens * slots if engine == "llama.cpp" else context_tokens
        return {**flags, context_key: size, slots_key: slots}

    def fits(slots: int) -> bool:
        return engine_startup(engine, model, gpu=gpu, flags=with_slots(slots)).fits

    if not fits(1):
        return with_slots(1)
    low, high = 1, 2
    while high <= MAX_SLOTS and fits(high):
        low, high = high, high * 2
    high = min(high, MAX_SLOTS + 1)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return with_slots(low)


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineComparison:
    """One engine's row of the side-by-side view: its start-up at its defaults and what it holds.

    ``users`` = ⌊max_concurrency(context)⌋, requests of ``context_tokens`` served at once;
    ``flags`` the keyword arguments the engine ran with (its defaults but for the context,
    the GPUs and the cache format); ``runs_on_gpu`` False when the engine has no backend for
    this GPU's vendor (TensorRT-LLM off NVIDIA, the servers on Apple): its row is what it would do
    there, and ``users`` is 0.
    """

    engine: str
    startup: EngineStartup
    context_tokens: int
    users: int
    flags: Mapping[str, object]
    runs_on_gpu: bool = True


def _default_flags(
    engine: str, *, context_tokens: int, gpus: int, cache_bits: int, weights_bytes: float
) -> dict[str, Any]:
    """Each engine at its defaults, asked for `context_tokens` per request on `gpus` GPUs (tensor parallel).

    llama.cpp and Ollama get the same checkpoint as the servers (`weights_bytes`, the whole model:
    a 16-bit GGUF of a 16-bit checkpoint), so the rows differ by the engines' rules, not by the file.
    """
    cache = CACHE_FORMATS[cache_bits][engine]
    if engine == "vllm":
        return {"max_model_len": context_tokens, "tp": gpus, "kv_dtype": cache}
    if engine == "sglang":
        return {"context_length": context_tokens, "tp": gpus, "kv_cache_dtype": cache}
    if engine == "trtllm":
        return {"max_seq_len": context_tokens, "tp": gpus, "kv_cache_dtype": cache}
    if engine == "llama.cpp":  # K and V in the same type; -np slots of the context each
        return {"ctx_size": context_tokens, "parallel": 1, "cache_type_k": cache, "cache_type_v": cache,
                "gpu_count": gpus, "weights_bytes": weights_bytes}  # fmt: skip
    if engine == "ollama":
        return {"num_ctx": context_tokens, "num_parallel": 1, "kv_cache_type": cache, "gpu_count": gpus,
                "weights_bytes": weights_bytes}  # fmt: skip
    raise KvError("unknown_engine", f"unknown engine {engine!r}", name="engine", value=engine)


def compare_engines(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    context_tokens: int,
    gpus: int = 1,
    cache_bits: int = 16,
    engines: tuple[str, ...] | None = None,
    flags: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[EngineComparison, ...]:
    """Every engine at its own defaults on the same model and GPU(s): its pool, its tokens, its users.

    The server engines (vLLM, SGLang, TensorRT-LLM) size their pool from memory and serve as
    many requests of `context_tokens` as it holds; llama.cpp and Ollama size the cache from the
    context they are given, so their row is the most parallel slots of `context_tokens` whose
    cache still fits beside the weights (:func:`kvcore.llamacpp.llamacpp_startup`). `cache_bits`
    16 is each engine's default cache, 8 its one-byte format (:data:`CACHE_FORMATS`). `flags`
    maps an engine to its own keyword arguments, laid over those defaults (a student's settings).
    """
    if cache_bits not in CACHE_FORMATS:
        raise KvError(
            "unknown_cache_bits", f"cache_bits must be 16 or 8, got {cache_bits}", name="cache_bits", value=cache_bits
        )
    weights = checkpoint_weights(model).total_bytes
    rows = []
    for engine in engines or ENGINES:
        chosen = _default_flags(
            engine, context_tokens=context_tokens, gpus=gpus, cache_bits=cache_bits, weights_bytes=weights
        )
        chosen |= dict((flags or {}).get(engine, {}))
        if engine in SLOT_ENGINES and SLOT_ENGINES[engine][1] not in (flags or {}).get(engine, {}):
            chosen = _most_slots(engine, model, gpu, chosen, context_tokens=context_tokens)
        startup = engine_startup(engine, model, gpu=gpu, flags=chosen)
        runs = engine_runs_on(engine, gpu)
        users = math.floor(startup.max_concurrency(context_tokens) + 1e-9) if startup.fits and runs else 0
        rows.append(
            EngineComparison(
                engine=engine,
                startup=startup,
                context_tokens=context_tokens,
                users=users,
                flags=chosen,
                runs_on_gpu=runs,
            )
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
    from .llamacpp import LLAMACPP_MARKERS
    from .ollama import OLLAMA_MARKERS
    from .sglang import SGLANG_MARKERS
    from .trtllm import TRTLLM_MARKERS
    from .vllm_log import VLLM_MARKERS

    return {
        "vllm": VLLM_MARKERS,
        "sglang": SGLANG_MARKERS,
        "trtllm": TRTLLM_MARKERS,
        "llama.cpp": LLAMACPP_MARKERS,
        "ollama": OLLAMA_MARKERS,
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineLogReading:
    """A pasted start-up log read by its engine's reader: the engine, what it printed, the lines used.

    ``log`` is the engine's own record (:class:`kvcore.vllm_log.VllmLog`, :class:`kvcore.trtllm.TrtllmLog`,
    …); ``recognised`` the lines that gave a number, ``ignored`` the others, ``truncated`` whether the
    paste was cut at :data:`kvcore.log_lines.MAX_TEXT_CHARS`.
    """

    engine: str
    log: Any
    recognised: tuple[RecognisedLine, ...]
    ignored: tuple[str, ...]
    truncated: bool


#: engine → its log reader (never raises).
_READERS: Mapping[str, Callable[[str | bytes], Any]] = {
    "vllm": parse_vllm_log,
    "sglang": parse_sglang_log,
    "trtllm": parse_trtllm_log,
    "llama.cpp": parse_llamacpp_log,
    "ollama": parse_ollama_log,
}


def _vllm_checks(log: Any, model: ModelSpec, settings: Mapping[str, Any]) -> tuple[Check, ...]:
    return reconcile(log, model, **settings).checks


def _sglang_checks(log: Any, model: ModelSpec, settings: Mapping[str, Any]) -> tuple[Check, ...]:
    return reconcile_sglang(log, model, **settings)


def _llamacpp_checks(log: Any, model: ModelSpec, settings: Mapping[str, Any]) -> tuple[Check, ...]:
    return reconcile_llamacpp(log, model, **settings)


def _ollama_checks(log: Any, model: ModelSpec, settings: Mapping[str, Any]) -> tuple[Check, ...]:
    return reconcile_ollama(log, model, **settings)


def _trtllm_checks(log: Any, model: ModelSpec, settings: Mapping[str, Any]) -> tuple[Check, ...]:
    return reconcile_trtllm(log, model, **settings)


#: engine → (its log, the model, the settings its reconcile takes) → the checks.
_RECONCILERS: Mapping[str, Callable[[Any, ModelSpec, Mapping[str, Any]], tuple[Check, ...]]] = {
    "vllm": _vllm_checks,
    "sglang": _sglang_checks,
    "trtllm": _trtllm_checks,
    "llama.cpp": _llamacpp_checks,
    "ollama": _ollama_checks,
}


def read_engine_log(text: str | bytes, *, engine: str | None = None) -> EngineLogReading:
    """The paste read by `engine`'s reader, or by the reader of the engine :func:`detect_engine` finds (vLLM else).

    Never raises: every reader returns what it recognised and lists the rest.
    """
    name = engine if engine is not None and engine in _READERS else (detect_engine(text) or "vllm")
    log = _READERS[name](text)
    return EngineLogReading(
        engine=name, log=log, recognised=log.recognised, ignored=log.ignored, truncated=log.truncated
    )


def log_cache_settings(engine: str, cache_bits: int) -> dict[str, str]:
    """The settings that tell an engine's reconcile the KV cache format when its log does not print it.

    SGLang and TensorRT-LLM take ``kv_cache_dtype`` (:data:`CACHE_FORMATS`); vLLM's reader takes
    bytes per value itself, and llama.cpp prints its K and V types on every cache line.
    """
    if engine in ("sglang", "trtllm"):
        return {"kv_cache_dtype": CACHE_FORMATS[cache_bits][engine]}
    return {}


def reconcile_engine_log(
    reading: EngineLogReading, model: ModelSpec, *, settings: Mapping[str, Any] | None = None
) -> tuple[Check, ...]:
    """Every number the log printed, recomputed from `model` by that engine's rules (its ``reconcile_*``).

    `settings` are the keyword arguments of the engine's reconcile (tp, the cache format, …); what
    the log prints itself is taken from the log.
    """
    return _RECONCILERS[reading.engine](reading.log, model, settings or {})
