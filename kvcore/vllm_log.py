"""Read vLLM's start-up log and set its numbers beside kvcore's.

vLLM prints how much memory it left for the KV cache and what that buys. V1
(vllm/v1/worker/gpu_worker.py, vllm/v1/core/kv_cache_utils.py,
vllm/v1/worker/gpu_model_runner.py) prints "Available KV cache memory: X GiB",
"GPU KV cache size: N tokens", "Maximum concurrency for L tokens per request: X×"
and "Model loading took X GiB", and refuses to start with "To serve at least one
request with the model's max seq len (L), (X GiB KV cache is needed, ...". V0
(vllm/worker/worker.py, vllm/worker/model_runner.py, vllm/executor/*) prints
"Loading model weights took X GB", "kv_cache_size=X GiB" (or "the rest of the
memory reserved for KV Cache is X GiB"), "# GPU blocks: N, # CPU blocks: M", and
refuses with "The model's max seq len (L) is larger than the maximum number of
tokens that can be stored in KV cache (T)".

:func:`parse_vllm_log` never raises: whatever is pasted, it returns what it
recognised, line by line, and the non-empty lines it did not use. :func:`reconcile`
recomputes each number from the model (kvcore.capacity) and says whether they agree,
within the rounding vLLM printed them with; when the pool and tokens imply bytes per token
the model cannot store, it says so once (``Reconciliation.model_mismatch``) and no KV check
agrees. :func:`release_from_log` names the release (printed, or inferred from the format), and
:func:`startup_advice` prices every change (utilisation, max_model_len, FP8 KV, more GPUs) on one
budget, :func:`kvcore.vllm_startup.vllm_startup` for the log's release and flags. Everything is
bytes and tokens.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from . import capacity, checks
from .dtypes import bytes_per_value
from .errors import KvError
from .hardware import GpuSpec
from .kv import kv_bytes_per_token
from .log_lines import (
    INT_PATTERN,
    NUMBER_PATTERN,
    Check,
    CheckStatus,
    LogPattern,
    RecognisedLine,
    cannot_check,
    log_pattern,
    read_patterns,
)
from .memory import model_weights_bytes
from .model import ModelSpec
from .timing import tensor_parallel_sizes
from .vllm_pool import pp_partition
from .vllm_startup import VllmStartup, vllm_startup
from .vllm_versions import NEWEST_RELEASE, kv_cache_format, parse_release, vllm_release

__all__ = [
    "MAX_UTILIZATION",
    "VLLM_MARKERS",
    "Advice",
    "LogRelease",
    "ModelMismatch",
    "Reconciliation",
    "StartupAdvice",
    "VllmFlags",
    "VllmLog",
    "blocks_from_tokens",
    "log_body",
    "log_flags",
    "parse_vllm_log",
    "pipeline_from_ranks",
    "read_log_header",
    "read_vllm_flags",
    "reconcile",
    "release_from_log",
    "startup_advice",
]

EngineVersion = Literal["V0", "V1"]

_INT = INT_PATTERN
_NUM = NUMBER_PATTERN


@dataclass(frozen=True, slots=True, kw_only=True)
class VllmLog:
    """What a vLLM start-up log says about memory, in bytes and tokens (None: not printed).

    ``*_bytes`` fields were printed in GiB (2**30 bytes) and are converted once here;
    ``half_step`` gives, per field, half of the last printed digit in the field's
    unit (3.81 GiB → 0.005 GiB in bytes), the rounding a check must allow.
    Fields named ``error_*`` come from the message vLLM raises when one request of
    max_model_len does not fit. ``rank_kv_pools_bytes`` pairs each worker's rank with the
    "Available KV cache memory" it printed (the ``(VllmWorker rank=N …)`` prefix), first print
    of each rank: with pipeline parallelism every stage prints its own pool.
    """

    available_kv_cache_bytes: float | None = None
    gpu_kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens: int | None = None
    model_loading_bytes: float | None = None
    weights_bytes: float | None = None
    gpu_blocks: int | None = None
    cpu_blocks: int | None = None
    kv_cache_size_bytes: float | None = None
    total_gpu_memory_bytes: float | None = None
    gpu_memory_utilization: float | None = None
    block_size: int | None = None
    max_model_len: int | None = None
    kv_cache_dtype: str | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    enforce_eager: bool | None = None
    vllm_version: str | None = None
    error_max_model_len: int | None = None
    error_kv_cache_tokens: int | None = None
    error_needed_kv_cache_bytes: float | None = None
    error_available_kv_cache_bytes: float | None = None
    error_estimated_max_model_len: int | None = None
    no_kv_cache_memory_error: bool = False
    rank_kv_pools_bytes: tuple[tuple[int, float], ...] = ()
    version: EngineVersion | None = None
    recognised: tuple[RecognisedLine, ...] = ()
    ignored: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    truncated: bool = False
    half_step: Mapping[str, float] = field(default_factory=dict)

    @property
    def kv_pool_bytes(self) -> float | None:
        """The KV pool the log states, whichever line gave it (V1 available, V1 error, V0 size)."""
        for value in (self.available_kv_cache_bytes, self.error_available_kv_cache_bytes, self.kv_cache_size_bytes):
            if value is not None:
                return value
        return None

    def stage_kv_pools_bytes(self, tp: int) -> tuple[float, ...]:
        """Each pipeline stage's pool, first stage first: ranks r · tp … r · tp + tp − 1 are stage r [bytes].

        vLLM numbers its workers with the tensor-parallel rank innermost (vllm/distributed/
        parallel_state.py ``initialize_model_parallel``); a stage's ranks print the same pool, and
        the smallest of them is kept. Empty unless the log names ranks of two stages or more.
        """
        ranks = checks.whole("tensor parallel size", tp)
        pools: dict[int, float] = {}
        for rank, value in self.rank_kv_pools_bytes:
            stage = rank // ranks
            pools[stage] = min(value, pools.get(stage, value))
        if len(pools) < 2 or sorted(pools) != list(range(len(pools))):
            return ()
        return tuple(pools[stage] for stage in range(len(pools)))

    @property
    def requested_max_model_len(self) -> int | None:
        """The max_model_len this start-up asked for, from the error, the concurrency line or the config."""
        for value in (self.error_max_model_len, self.max_concurrency_tokens, self.max_model_len):
            if value is not None:
                return value
        return None


_Pattern = LogPattern
_pattern = log_pattern


# Each regex follows the format string of the vLLM file named beside it. Separators that
# a terminal may wrap are \s+, so a message broken over lines is still read.
_PATTERNS: tuple[_Pattern, ...] = (
    # vllm/v1/worker/gpu_worker.py: logger.info("Available KV cache memory: %.2f GiB", ...)
    # (newer: "%s GiB" with format_gib, sometimes followed by "(process-scoped)").
    _pattern(("available_kv_cache_bytes",), ("gib",), rf"Available KV cache memory:\s*{_NUM}\s*GiB"),
    # vllm/v1/core/kv_cache_utils.py: logger.info("GPU KV cache size: %s tokens", f"{num_tokens:,}")
    _pattern(("gpu_kv_cache_tokens",), ("int",), rf"GPU KV cache size:\s*{_INT}\s*tokens"),
    # kv_cache_utils.py (V1) and vllm/executor/executor_base.py (V0):
    # "Maximum concurrency for %s tokens per request: %.2fx"
    _pattern(
        ("max_concurrency_tokens", "max_concurrency"),
        ("int", "float"),
        rf"Maximum concurrency for\s+{_INT}\s+tokens per request:\s*{_NUM}\s*[x×]?",
    ),
    # vllm/v1/worker/gpu_model_runner.py and later vllm/worker/model_runner.py:
    # "Model loading took %.4f GiB and %.6f seconds" (value / GiB_bytes; a few releases wrote "GB").
    _pattern(("model_loading_bytes",), ("gib",), rf"Model loading took\s*{_NUM}\s*Gi?B"),
    # vllm/worker/model_runner.py (V0) and early gpu_model_runner.py (V1):
    # logger.info("Loading model weights took %.4f GB", self.model_memory_usage / float(2**30))
    # — the label says GB but the value is divided by 2**30: it is GiB.
    _pattern(("weights_bytes",), ("gib",), rf"Loading model weights took\s*{_NUM}\s*Gi?B"),
    # vllm/executor/*: logger.info("# GPU blocks: %d, # CPU blocks: %d", ...); later
    # executor_base.py prints the device name ("# cuda blocks"); early V1 kv_cache_utils.py
    # printed "# GPU blocks: %d" alone.
    _pattern(
        ("gpu_blocks", "cpu_blocks"),
        ("int", "int"),
        rf"(?<![\w=])(?:#\s*)?(?:GPU|CUDA|ROCm|XPU|NPU|HPU|TPU)\s+blocks:\s*{_INT}(?:,\s*(?:#\s*)?CPU\s+blocks:\s*{_INT})?",
        re.IGNORECASE,
    ),
    # vllm/worker/worker.py (v0.6): "Memory profiling results: ... kv_cache_size=%.2fGiB ..."
    _pattern(("kv_cache_size_bytes",), ("gib",), rf"\bkv_cache_size={_NUM}\s*GiB"),
    # vllm/worker/worker.py (v0.7–0.8): "... the rest of the memory reserved for KV Cache is %.2fGiB."
    _pattern(("kv_cache_size_bytes",), ("gib",), rf"the rest of the memory reserved for KV Cache is\s*{_NUM}\s*GiB"),
    # worker.py: "total_gpu_memory=%.2fGiB" (v0.6) and "total_gpu_memory (%.2fGiB)" (v0.7+).
    _pattern(("total_gpu_memory_bytes",), ("gib",), rf"\btotal_gpu_memory\s*[=(]\s*{_NUM}\s*GiB"),
    # worker.py "gpu_memory_utilization=%.2f" / "(%.2f)"; non-default args "'gpu_memory_utilization': 0.9";
    # the command line "--gpu-memory-utilization 0.9".
    _pattern(("gpu_memory_utilization",), ("float",), rf"gpu[_-]memory[_-]utilization['\"]?\s*[=:(]?\s*\(?\s*{_NUM}"),
    # Engine config (vllm/config.py __repr__ / non-default args / CLI): block_size, max_model_len,
    # kv_cache_dtype, tensor_parallel_size.
    _pattern(("block_size",), ("int",), r"(?<![\w-])-?-?block[_-]size['\"]?\s*[=:]?\s*(\d+)"),
    _pattern(
        ("max_model_len",),
        ("int",),
        r"(?:\bmax_seq_len=|max[_-]model[_-]len['\"]?\s*[=:]?\s*|Using max model len\s+)(\d+)",
    ),
    _pattern(("kv_cache_dtype",), ("str",), r"kv[_-]cache[_-]dtype['\"]?\s*[=:]?\s*['\"]?([A-Za-z][\w.]*)"),
    _pattern(("tensor_parallel_size",), ("int",), r"tensor[_-]parallel[_-]size['\"]?\s*[=:]?\s*(\d+)"),
    # The same sources: pipeline_parallel_size, max_num_seqs, max_num_batched_tokens ("None" is not read),
    # enforce_eager=True/False ('enforce_eager': True in the non-default args) and the bare --enforce-eager.
    _pattern(("pipeline_parallel_size",), ("int",), r"pipeline[_-]parallel[_-]size['\"]?\s*[=:]?\s*(\d+)"),
    _pattern(("max_num_seqs",), ("int",), r"max[_-]num[_-]seqs['\"]?\s*[=:]?\s*(\d+)"),
    _pattern(("max_num_batched_tokens",), ("int",), r"max[_-]num[_-]batched[_-]tokens['\"]?\s*[=:]?\s*(\d+)"),
    _pattern(("enforce_eager",), ("bool",), r"enforce[_-]eager['\"]?\s*[=:]\s*(True|False|true|false)\b"),
    _pattern(("enforce_eager",), ("flag",), r"(?<![\w-])-{2}enforce[_-]eager\b(?!['\"]?\s*[=:])"),
    # "Initializing an LLM engine (v0.5.4)", "vLLM API server version 0.10.2", the V1 banner "version 0.19.1".
    _pattern(
        ("vllm_version",),
        ("str",),
        r"(?:LLM engine \(v|vLLM API server version\s+|\bversion\s+)([01]\.\d+[\w.+\-]*)",
    ),
    # vllm/worker/worker.py raise_if_cache_size_invalid (V0): "The model's max seq len (%d) is larger
    # than the maximum number of tokens that can be stored in KV cache (%d)."
    _pattern(
        ("error_max_model_len", "error_kv_cache_tokens"),
        ("int", "int"),
        rf"max seq len \({_INT}\)\s+is\s+larger\s+than\s+the\s+maximum\s+number\s+of\s+tokens\s+that\s+can\s+be"
        rf"\s+stored\s+in\s+KV\s+cache\s+\({_INT}\)",
    ),
    # vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory (V1): "To serve at least one request
    # with the models's max seq len (%d), (%s GiB KV cache is needed, which is larger than the available
    # KV cache memory (%s GiB)."
    _pattern(
        ("error_max_model_len", "error_needed_kv_cache_bytes", "error_available_kv_cache_bytes"),
        ("int", "gib", "gib"),
        rf"max\s+seq\s+len\s+\({_INT}\),?\s*\(?\s*{_NUM}\s*GiB\s+KV\s+cache\s+is\s+needed,?\s+which\s+is\s+larger"
        rf"\s+than\s+the\s+available\s+KV\s+cache\s+memory\s+\(\s*{_NUM}\s*GiB\)",
    ),
    # Same function: "Based on the available memory, the estimated maximum model length is %d."
    _pattern(("error_estimated_max_model_len",), ("int",), rf"estimated\s+maximum\s+model\s+length\s+is\s+{_INT}"),
    # Same function (and V0 worker.py): "No available memory for the cache blocks."
    _pattern(("no_kv_cache_memory_error",), ("flag",), r"No available memory for the cache blocks"),
)

_V1_MARKERS = re.compile(
    r"Available KV cache memory|GPU KV cache size|KV cache is needed|V1 LLM engine|EngineCore|"
    r"kv_cache_utils\.py|gpu_worker\.py|gpu_model_runner\.py|^\s*(?:INFO\s.*)?#\s*GPU blocks:\s*\d+\s*$",
    re.MULTILINE,
)
_V0_MARKERS = re.compile(
    r"CPU blocks|Memory profiling results|the rest of the memory reserved for KV Cache|"
    r"can be stored in KV cache|executor_base\.py|gpu_executor\.py|llm_engine\.py|(?<!gpu_)model_runner\.py|"
    r"(?<![\w])worker\.py",
    re.IGNORECASE,
)
#: Lines only vLLM prints (either engine), for telling a vLLM paste from another engine's.
VLLM_MARKERS = re.compile(
    rf"(?:{_V1_MARKERS.pattern})|(?:{_V0_MARKERS.pattern})|\bvllm\b", re.IGNORECASE | re.MULTILINE
)


#: A worker's own pool line: "(VllmWorker rank=2 pid=…) INFO … Available KV cache memory: 11.33 GiB".
_RANK_POOL = re.compile(rf"\brank=(\d+)\b[^\n]*?Available KV cache memory:\s*({_NUM})\s*GiB")


def parse_vllm_log(text: str | bytes) -> VllmLog:
    """Read a vLLM start-up log: every number vLLM prints about its KV cache, and what was left over.

    Matches vLLM's own message formats (cited beside each regex) anywhere in a line,
    so log prefixes ("INFO 11-20 10:00:00 [kv_cache_utils.py:716]", "(VllmWorker
    rank=0 pid=123)") and colour codes do not matter; numbers may carry thousands
    separators and "x" or "×". GiB values become bytes (× 2**30). The first value of
    a field wins; a field printed again with another value is listed in ``conflicts``.
    Reads at most MAX_TEXT_CHARS characters and MAX_LINES lines (``truncated``).
    Never raises.

    >>> log = parse_vllm_log("INFO [kv_cache_utils.py:716] GPU KV cache size: 31,232 tokens")
    >>> log.gpu_kv_cache_tokens, log.version
    (31232, 'V1')
    """
    try:
        return _parse(text)
    except Exception:  # a last guard: the page must show something for any paste
        return VllmLog()


def _parse(text: str | bytes) -> VllmLog:
    reading = read_patterns(text, _PATTERNS)
    version: EngineVersion | None = None
    if _V1_MARKERS.search(reading.joined):
        version = "V1"
    elif _V0_MARKERS.search(reading.joined):
        version = "V0"
    ranks: dict[int, float] = {}
    for match in _RANK_POOL.finditer(reading.joined):
        ranks.setdefault(int(match.group(1)), float(match.group(2).replace(",", "")) * 2**30)
    return VllmLog(
        **reading.values,  # type: ignore[arg-type]
        rank_kv_pools_bytes=tuple(sorted(ranks.items())),
        version=version,
        recognised=reading.recognised,
        ignored=reading.ignored,
        conflicts=reading.conflicts,
        truncated=reading.truncated,
        half_step=reading.half_step,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Advice:
    """What the pool allows and what would fit the requested length (None: not enough in the log).

    ``missing_bytes`` = KV bytes one request of the requested length needs − the pool
    (0 when it fits). ``gpu_memory_utilization_to_fit`` = u + missing / total GPU
    memory (vLLM gives the KV cache total · u − weights − activations, so each extra
    0.01 of u adds 1 % of the card); above 1 it cannot fit by that knob alone.
    ``fp8_*`` repeat the figures with a one-byte KV cache (``--kv-cache-dtype fp8``).
    """

    requested_max_model_len: int | None
    num_blocks: int | None
    needed_bytes: float | None
    missing_bytes: float | None
    longest_context_tokens: int | None
    users_at_requested: float | None
    users_at_context: float | None
    gpu_memory_utilization_to_fit: float | None
    fp8_longest_context_tokens: int | None
    fp8_users_at_requested: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelMismatch:
    """A log whose pool and tokens cannot come from the model: the bytes per token they imply exclude it.

    vLLM cuts the pool into whole blocks, so pool / tokens lies in ((P − s) / (T + B'), (P + s) / T]
    for the printed pool P (± half its last digit s) and tokens T (B' = one block, more when vLLM
    printed int(concurrency · L)); ``low``/``high`` are that interval, ``implied`` = P / T, and
    ``model_bytes_per_token`` (kv_bytes_per_token at the KV dtype and tp assumed) lies outside it.
    """

    implied_bytes_per_token: float
    low: float
    high: float
    model_bytes_per_token: float
    kv_bytes_per_value: float
    tp: int

    @property
    def ratio(self) -> float:
        """implied ÷ the model's: 0.5 is an FP8 cache or tp = 2 read as BF16 on one GPU, 2 the reverse."""
        return self.implied_bytes_per_token / self.model_bytes_per_token


@dataclass(frozen=True, slots=True, kw_only=True)
class Reconciliation:
    """The checks, the advice and the settings kvcore assumed (bytes, tokens).

    ``model_mismatch`` is set when the log's pool and tokens cannot belong to the model at these
    settings; then no KV check says "agree" (they say "cannot_check", reason "model_mismatch").
    With pipeline parallelism (``pp`` stages) the figures are those of ``stage``, the one whose
    blocks the server kept; ``bytes_per_token`` is that stage's layers'.
    """

    checks: tuple[Check, ...]
    advice: Advice
    bytes_per_token: float
    block_bytes: float
    block_size: int
    kv_bytes_per_value: float
    tp: int
    model_mismatch: ModelMismatch | None = None
    pp: int = 1
    stage: int = 0

    def check(self, kind: str) -> Check | None:
        """The check of that kind, or None."""
        return next((item for item in self.checks if item.kind == kind), None)


def reconcile(
    log: VllmLog,
    model: ModelSpec,
    *,
    kv_bytes_per_value: float | None = None,
    block_size: int | None = None,
    tp: int | None = None,
    context_tokens: int | None = None,
    weights_bytes_per_param: float | None = None,
    pp: int | None = None,
) -> Reconciliation:
    """Recompute every number the log printed from `model`, and say which ones agree.

    kvcore's side: block bytes = block_size · kv_bytes_per_token(model, b, tp); blocks =
    floor(pool / block bytes) (vLLM ``get_num_blocks``); tokens = blocks · block_size,
    or int(concurrency · L) as vLLM ≥ 0.11 prints it; concurrency = blocks / blocks one
    request of L needs (``kvcore.capacity.max_concurrency``; V0 printed blocks · block_size / L,
    also accepted); the longest length = ``kvcore.capacity.estimated_max_model_len``.
    The implied bytes per token, pool / tokens, tells a wrong model, another KV dtype
    (FP8 halves it) or tensor parallelism (divides it by tp) apart from rounding.
    Unset settings come from the log (kv_cache_dtype, block_size, tensor_parallel_size),
    else BF16/FP16, 16 and 1; weights are checked at the model's released dtype unless
    `weights_bytes_per_param` says otherwise (1.0 for an INT8/FP8 checkpoint). `context_tokens`
    asks how many users fit at that length. Raises ValueError only for settings the caller passes.

    Pipeline parallelism (`pp`, else the log's pipeline_parallel_size, else read from the ranks'
    pools: ranks printing one pool in runs of equal length, :func:`pipeline_from_ranks`): each stage
    holds its layers (:func:`kvcore.vllm_pool.pp_partition`, current vLLM's cut) and prints its pool;
    the server keeps the fewest blocks, so the checks use the stage with the least pool per layer
    (the fullest stage when only one pool is printed).
    """
    value_bytes = kv_bytes_per_value if kv_bytes_per_value is not None else _log_kv_bytes_per_value(log)
    size = block_size if block_size is not None else (log.block_size or capacity.DEFAULT_BLOCK_SIZE)
    inferred = pipeline_from_ranks(log)
    ranks = tp if tp is not None else (log.tensor_parallel_size or (inferred[0] if inferred else 1))
    stages = pp if pp is not None else (log.pipeline_parallel_size or (inferred[1] if inferred else 1))
    try:
        per_token = kv_bytes_per_token(model, bytes_per_value=value_bytes, tp=ranks)
    except ValueError:
        if tp is not None or kv_bytes_per_value is not None:
            raise
        ranks = 1  # a tensor_parallel_size from the log that does not split this model's heads
        per_token = kv_bytes_per_token(model, bytes_per_value=value_bytes, tp=ranks)
    stage, stage_pool = 0, None
    if stages > 1 and model.num_hidden_layers >= stages:
        partition = pp_partition(model.num_hidden_layers, stages)
        pools = log.stage_kv_pools_bytes(ranks)
        if len(pools) == stages:
            stage = min(range(stages), key=lambda index: pools[index] / partition[index])
            stage_pool = (pools[stage], log.half_step.get("available_kv_cache_bytes", 0.0))
        else:
            stage = partition.index(max(partition))
        per_token *= partition[stage] / model.num_hidden_layers
    else:
        stages = 1
    size = max(int(size), 1)
    block = size * per_token
    context = _Context(
        log=log, model=model, block_size=size, tp=ranks, per_token=per_token, block_bytes=block,
        weights_bytes_per_param=weights_bytes_per_param, stage_pool=stage_pool,
    )  # fmt: skip
    if per_token <= 0:
        checks = tuple(
            Check(kind=kind, status="cannot_check", unit=unit, reason="model_has_no_per_token_cache")
            for kind, unit in _CHECK_UNITS
        )
        return Reconciliation(
            checks=checks, advice=_NO_ADVICE, bytes_per_token=0.0, block_bytes=0.0, block_size=size,
            kv_bytes_per_value=value_bytes, tp=ranks, pp=stages, stage=stage,
        )  # fmt: skip
    checks = tuple(_CHECKS[kind](context) for kind, _ in _CHECK_UNITS)
    mismatch = None
    span = None if _has_state_layers(model) else context.implied_bytes_per_token()
    if span is not None and not span[1] <= per_token <= span[2]:
        mismatch = ModelMismatch(
            implied_bytes_per_token=span[0], low=span[1], high=span[2], model_bytes_per_token=per_token,
            kv_bytes_per_value=value_bytes, tp=ranks,
        )  # fmt: skip
        checks = tuple(
            dataclasses.replace(check, status="cannot_check", reason="model_mismatch")
            if check.status == "agree" and check.kind != "weights_bytes"
            else check
            for check in checks
        )
    return Reconciliation(
        checks=checks,
        advice=_advice(context, value_bytes, context_tokens),
        bytes_per_token=per_token,
        block_bytes=block,
        block_size=size,
        kv_bytes_per_value=value_bytes,
        tp=ranks,
        model_mismatch=mismatch,
        pp=stages,
        stage=stage,
    )


def pipeline_from_ranks(log: VllmLog) -> tuple[int, int] | None:
    """(tp, pp) read from the workers' pool lines: ranks 0 … n − 1 whose pools come in pp runs of tp equal values.

    Ranks are numbered with the tensor-parallel rank innermost, and the ranks of one stage print the
    same pool (same layers, same weights); two stages or more print different pools. None when the
    lines do not show that pattern (one pool, a missing rank, runs of unequal length).

    >>> pipeline_from_ranks(VllmLog(rank_kv_pools_bytes=((0, 2.0), (1, 2.0), (2, 1.5), (3, 1.5))))
    (2, 2)
    """
    pools = dict(log.rank_kv_pools_bytes)
    if len(pools) < 2 or sorted(pools) != list(range(len(pools))):
        return None
    values = [pools[rank] for rank in range(len(pools))]
    run = next((index for index, value in enumerate(values) if value != values[0]), len(values))
    if run == len(values) or len(values) % run:
        return None
    groups = [values[start : start + run] for start in range(0, len(values), run)]
    if any(len(set(group)) != 1 for group in groups) or len({group[0] for group in groups}) < 2:
        return None
    return run, len(groups)


def _has_state_layers(model: ModelSpec) -> bool:
    """Whether the model keeps a per-request state (linear attention, Mamba) beside its KV cache."""
    return any(layer.kind == "linear" for layer in model.layers)


def _log_kv_bytes_per_value(log: VllmLog) -> float:
    """Bytes per KV value the log's kv_cache_dtype implies ('auto' or absent: 2, FP16/BF16)."""
    name = (log.kv_cache_dtype or "auto").lower()
    if name.startswith("fp8") or name.startswith("float8") or name in ("int8", "nvfp8"):
        return 1.0
    if name in ("fp4", "nvfp4", "int4"):
        return 0.5
    return 2.0


def blocks_from_tokens(tokens: int, *, block_size: int, max_model_len: int | None = None) -> int:
    """The KV blocks behind a printed "GPU KV cache size: N tokens", exactly.

    Before vLLM 0.20 N = blocks · block_size, so blocks = N / block_size. From 0.20 N =
    int(concurrency · L) with concurrency = blocks / ceil(L / block_size) (kv_cache_utils.py
    ``_report_kv_cache_config``); then blocks is the smallest b with int(b · L / ceil(L / b_s)) = N.
    A count neither way explains gives floor(N / block_size). Counting the blocks from the tokens,
    not from the pool's GiB, keeps them exact: "3.81 GiB" is a rounded figure.

    >>> blocks_from_tokens(42656, block_size=16), blocks_from_tokens(23641, block_size=16, max_model_len=29000)
    (2666, 1478)
    """
    size = max(int(block_size), 1)
    count = max(int(tokens), 0)
    if count % size == 0 or not max_model_len:
        return count // size
    per_request = math.ceil(max_model_len / size)
    blocks = math.ceil(count * per_request / max_model_len)
    for candidate in (blocks - 1, blocks, blocks + 1):
        if candidate >= 0 and int(candidate * max_model_len / per_request) == count:
            return candidate
    return count // size


@dataclass(frozen=True, slots=True, kw_only=True)
class _Context:
    log: VllmLog
    model: ModelSpec
    block_size: int
    tp: int
    per_token: float
    block_bytes: float
    weights_bytes_per_param: float | None = None
    stage_pool: tuple[float, float] | None = None

    def pool(self) -> tuple[float, float] | None:
        """(pool bytes, half step) from whichever line printed it (the compared stage's with pipeline stages)."""
        if self.stage_pool is not None:
            return self.stage_pool
        log = self.log
        for name in ("available_kv_cache_bytes", "error_available_kv_cache_bytes", "kv_cache_size_bytes"):
            value = getattr(log, name)
            if value is not None:
                return float(value), log.half_step.get(name, 0.0)
        return None

    def blocks_range(self) -> tuple[int, int, int] | None:
        """(low, middle, high) whole blocks the printed pool allows, given its rounding."""
        pool = self.pool()
        if pool is None:
            return None
        value, step = pool

        def blocks(num_bytes: float) -> int:
            return int(capacity.num_blocks(kv_pool_bytes=max(num_bytes, 0.0), block_bytes=self.block_bytes))

        return blocks(value - step), blocks(value), blocks(value + step)

    def concurrency(self, blocks: float, length: int) -> float:
        return float(
            capacity.max_concurrency(
                self.model, num_blocks=blocks, max_model_len=length, block_size=self.block_size, tp=self.tp
            )
        )

    def logged_blocks(self) -> int | None:
        """The blocks the log counts exactly: printed, else its tokens ÷ block size (``blocks_from_tokens``)."""
        if self.log.gpu_blocks is not None:
            return self.log.gpu_blocks
        if self.log.gpu_kv_cache_tokens is not None:
            length = self.log.max_concurrency_tokens or self.log.max_model_len
            return blocks_from_tokens(self.log.gpu_kv_cache_tokens, block_size=self.block_size, max_model_len=length)
        return None

    def known_blocks(self) -> tuple[int, int] | None:
        """(low, high) blocks the log states or implies: printed blocks or tokens, else the (rounded) pool."""
        blocks = self.logged_blocks()
        if blocks is not None:
            return blocks, blocks
        span = self.blocks_range()
        if span is not None:
            return span[0], span[2]
        return None

    def implied_bytes_per_token(self) -> tuple[float, float, float] | None:
        """(pool / tokens, lowest, highest) bytes per token the printed pool and tokens allow.

        Tokens: the printed "GPU KV cache size", else blocks · block_size, else the refusal's
        tokens. bytes/token ∈ ((P − s) / (T + B'), (P + s) / T]: the floor to whole blocks leaves
        less than one block (B' = block_size tokens) unused; when vLLM ≥ 0.20 printed
        int(concurrency · L) the tokens may fall short of blocks · block_size by up to
        (T + 1) · (ceil(L / b) · b / L − 1) more.
        """
        pool = self.pool()
        log = self.log
        tokens, printed = log.gpu_kv_cache_tokens, log.gpu_kv_cache_tokens is not None
        if tokens is None and log.gpu_blocks is not None:
            tokens = log.gpu_blocks * self.block_size
        for fallback in (log.error_kv_cache_tokens, log.error_estimated_max_model_len):
            if tokens is None and fallback is not None:
                tokens = fallback  # both are whole blocks · block_size for full attention
        if pool is None or not tokens or tokens <= 0 or pool[0] <= 0:
            return None
        value, step = pool
        slack = float(self.block_size)
        length = log.max_concurrency_tokens or log.max_model_len
        if printed and length:
            slack += (tokens + 1) * (math.ceil(length / self.block_size) * self.block_size / length - 1)
        return value / tokens, max(value - step, 0.0) / (tokens + slack), (value + step) / tokens


def _verdict(kind: str, unit: str, logged: float, expected: float, low: float, high: float) -> Check:
    status: CheckStatus = "agree" if low <= logged <= high else "differ"
    return Check(kind=kind, status=status, unit=unit, logged=logged, expected=expected, low=low, high=high)


def _check_gpu_blocks(c: _Context) -> Check:
    logged = c.log.gpu_blocks
    if logged is None:
        return cannot_check("gpu_blocks", "blocks", "not_in_log")
    span = c.blocks_range()
    if span is None:
        return cannot_check("gpu_blocks", "blocks", "no_kv_memory_line", logged)
    return _verdict("gpu_blocks", "blocks", logged, span[1], span[0], span[2])


def _check_tokens(c: _Context) -> Check:
    logged = c.log.gpu_kv_cache_tokens
    if logged is None:
        return cannot_check("gpu_kv_cache_tokens", "tokens", "not_in_log")
    if c.log.gpu_blocks is not None:
        candidates = [c.log.gpu_blocks]
    else:
        span = c.blocks_range()
        if span is None:
            return cannot_check("gpu_kv_cache_tokens", "tokens", "no_kv_memory_line", logged)
        candidates = list(span)
    # vLLM < 0.11 printed blocks · block_size; later int(concurrency · max_model_len).
    values = [blocks * c.block_size for blocks in candidates]
    length = c.log.max_concurrency_tokens or c.log.max_model_len
    if length:
        values += [int(c.concurrency(blocks, length) * length) for blocks in candidates]
    expected = candidates[len(candidates) // 2] * c.block_size
    return _verdict("gpu_kv_cache_tokens", "tokens", logged, expected, min(values), max(values))


def _check_bytes_per_token(c: _Context) -> Check:
    span = c.implied_bytes_per_token()
    if span is None:
        return cannot_check("bytes_per_token", "bytes_per_token", "needs_memory_and_tokens")
    if _has_state_layers(c.model):
        # vLLM pages linear-attention state and attention in one pool and prints num_blocks // groups ·
        # block size (kv_cache_utils.py): pool / tokens is not a per-token rate there.
        return cannot_check("bytes_per_token", "bytes_per_token", "hybrid_state_layers", span[0])
    implied, low, high = span
    # The model's figure must lie in [low, high]; as bounds on the implied figure: per_token · implied / high…/ low.
    return _verdict(
        "bytes_per_token", "bytes_per_token", implied, c.per_token, c.per_token * implied / high,
        c.per_token * implied / low if low > 0 else math.inf,
    )  # fmt: skip


def _check_concurrency(c: _Context) -> Check:
    logged, length = c.log.max_concurrency, c.log.max_concurrency_tokens
    if logged is None or not length:
        return cannot_check("max_concurrency", "requests", "not_in_log", logged)
    blocks = c.known_blocks()
    if blocks is None:
        return cannot_check("max_concurrency", "requests", "no_blocks_or_memory", logged)
    low_blocks, high_blocks = blocks
    values = [c.concurrency(b, length) for b in (low_blocks, high_blocks)]
    values += [b * c.block_size / length for b in (low_blocks, high_blocks)]  # V0 executor_base.py
    if c.log.gpu_kv_cache_tokens is not None:
        values.append(c.log.gpu_kv_cache_tokens / length)
    expected = c.concurrency((low_blocks + high_blocks) / 2, length)
    step = c.log.half_step.get("max_concurrency", 0.005)
    return _verdict("max_concurrency", "requests", logged, expected, min(values) - step, max(values) + step)


def _check_error_tokens(c: _Context) -> Check:
    logged = c.log.error_kv_cache_tokens
    if logged is None:
        return cannot_check("error_kv_cache_tokens", "tokens", "not_in_log")
    blocks = c.known_blocks() if c.log.gpu_blocks is not None else None
    span = (blocks[0], blocks[0], blocks[1]) if blocks else c.blocks_range()
    if span is None:
        return cannot_check("error_kv_cache_tokens", "tokens", "no_blocks_or_memory", logged)
    return _verdict(
        "error_kv_cache_tokens", "tokens", logged, span[1] * c.block_size, span[0] * c.block_size,
        span[2] * c.block_size,
    )  # fmt: skip


def _check_estimated_length(c: _Context) -> Check:
    logged = c.log.error_estimated_max_model_len
    if logged is None:
        return cannot_check("error_estimated_max_model_len", "tokens", "not_in_log")
    span = c.blocks_range()
    if span is None:
        return cannot_check("error_estimated_max_model_len", "tokens", "no_kv_memory_line", logged)
    lengths = [
        capacity.estimated_max_model_len(c.model, num_blocks=blocks, block_size=c.block_size, tp=c.tp)
        for blocks in span
    ]
    return _verdict("error_estimated_max_model_len", "tokens", logged, lengths[1], lengths[0], lengths[2])


def _check_needed_bytes(c: _Context) -> Check:
    logged, length = c.log.error_needed_kv_cache_bytes, c.log.error_max_model_len
    if logged is None or length is None:
        return cannot_check("error_needed_kv_cache_bytes", "bytes", "not_in_log", logged)
    expected = _needed_bytes(c, length)
    step = c.log.half_step.get("error_needed_kv_cache_bytes", 0.0)
    return _verdict("error_needed_kv_cache_bytes", "bytes", logged, expected, expected - step, expected + step)


def _check_weights(c: _Context) -> Check:
    logged = c.log.weights_bytes if c.log.weights_bytes is not None else c.log.model_loading_bytes
    if logged is None:
        return cannot_check("weights_bytes", "bytes", "not_in_log")
    try:
        per_param = c.weights_bytes_per_param or bytes_per_value(c.model.weights_dtype)
        expected = model_weights_bytes(c.model, bytes_per_param=per_param, tp=c.tp)
    except (ValueError, KeyError):
        return cannot_check("weights_bytes", "bytes", "model_parameters_unknown", logged)
    # The profiler also counts buffers (rotary tables, tied heads): allow 5 %.
    return _verdict("weights_bytes", "bytes", logged, expected, expected * 0.95, expected * 1.05)


_CHECKS: dict[str, Callable[[_Context], Check]] = {
    "gpu_blocks": _check_gpu_blocks,
    "gpu_kv_cache_tokens": _check_tokens,
    "bytes_per_token": _check_bytes_per_token,
    "max_concurrency": _check_concurrency,
    "error_kv_cache_tokens": _check_error_tokens,
    "error_estimated_max_model_len": _check_estimated_length,
    "error_needed_kv_cache_bytes": _check_needed_bytes,
    "weights_bytes": _check_weights,
}
_CHECK_UNITS: tuple[tuple[str, str], ...] = (
    ("gpu_blocks", "blocks"),
    ("gpu_kv_cache_tokens", "tokens"),
    ("bytes_per_token", "bytes_per_token"),
    ("max_concurrency", "requests"),
    ("error_kv_cache_tokens", "tokens"),
    ("error_estimated_max_model_len", "tokens"),
    ("error_needed_kv_cache_bytes", "bytes"),
    ("weights_bytes", "bytes"),
)


_NO_ADVICE = Advice(
    requested_max_model_len=None,
    num_blocks=None,
    needed_bytes=None,
    missing_bytes=None,
    longest_context_tokens=None,
    users_at_requested=None,
    users_at_context=None,
    gpu_memory_utilization_to_fit=None,
    fp8_longest_context_tokens=None,
    fp8_users_at_requested=None,
)


def _needed_bytes(c: _Context, length: int) -> float:
    """KV bytes one request of `length` tokens reserves: blocks it needs · block bytes."""
    need = capacity.request_blocks_needed(c.model, max_model_len=length, block_size=c.block_size, tp=c.tp)
    return float(np.ceil(need)) * c.block_bytes


def _advice(c: _Context, value_bytes: float, context_tokens: int | None) -> Advice:
    log, length = c.log, c.log.requested_max_model_len
    span = c.blocks_range()
    # The log's own count first (printed blocks, tokens ÷ block size), the rounded GiB only without one.
    blocks = c.logged_blocks()
    if blocks is None and span is not None:
        blocks = span[1]
    pool = c.pool()
    pool_bytes = pool[0] if pool else (blocks * c.block_bytes if blocks is not None else None)

    def longest(num_blocks: int) -> int:
        return capacity.estimated_max_model_len(c.model, num_blocks=num_blocks, block_size=c.block_size, tp=c.tp)

    needed = _needed_bytes(c, length) if length else None
    missing = max(needed - max(pool_bytes, 0.0), 0.0) if needed is not None and pool_bytes is not None else None
    util = None
    if missing is not None and log.gpu_memory_utilization is not None and log.total_gpu_memory_bytes:
        util = log.gpu_memory_utilization + missing / log.total_gpu_memory_bytes
    fp8_longest = fp8_users = None
    if pool_bytes is not None and value_bytes > 1.0:
        fp8_blocks = int(
            capacity.num_blocks(kv_pool_bytes=max(pool_bytes, 0.0), block_bytes=c.block_bytes / value_bytes)
        )
        fp8_longest = longest(fp8_blocks) or None
        fp8_users = c.concurrency(fp8_blocks, length) if length else None
    longest_tokens = longest(blocks) if blocks is not None else None
    return Advice(
        requested_max_model_len=length,
        num_blocks=blocks,
        needed_bytes=needed,
        missing_bytes=missing,
        # No block at all: no length fits, and "lower max_model_len to 0" is no advice.
        longest_context_tokens=longest_tokens if longest_tokens else None,
        users_at_requested=c.concurrency(blocks, length) if blocks is not None and length else None,
        users_at_context=c.concurrency(blocks, context_tokens) if blocks is not None and context_tokens else None,
        gpu_memory_utilization_to_fit=util,
        fp8_longest_context_tokens=fp8_longest,
        fp8_users_at_requested=fp8_users,
    )


# ---------------------------------------------------------------- the release a log's format belongs to


@dataclass(frozen=True, slots=True, kw_only=True)
class LogRelease:
    """The vLLM release a log was printed by: stated by its version line, or inferred from its format.

    ``release`` is the stated number, or a representative release of the era the format belongs
    to (``inferred``); ``evidence`` names what showed it (a stable code: "version_line",
    "profiling_results", "available_two_decimals", …) and ``line`` the line itself; ``engine`` is
    the engine the log shows (V0 lines, V1 lines), None when it shows neither.
    """

    release: str
    inferred: bool
    evidence: str
    engine: EngineVersion | None = None
    line: str = ""

    @property
    def era(self) -> str:
        """ "V0", "early V1" or "V1": the release's era (``kvcore.vllm_release``), or V0/early V1 as the log shows.

        A 0.8–0.9 log printed by V0 (the fallback for old GPUs, FP8 caches) is "V0"; a V1 log of a
        release before 0.8 (V1 was opt-in) is "early V1".
        """
        rules = vllm_release(self.release)
        if self.engine == "V0":
            return "V0"
        if self.engine == "V1" and rules.engine == "V0":
            return "early V1"
        return rules.era


# Each marker: (evidence code, representative release, engine, regex). Checked in order, newest
# formats first; sources: the releases' wheels as read for kvcore.vllm_versions (worker.py,
# gpu_worker.py, kv_cache_utils.py, gpu_model_runner.py; see the module docstrings there).
_ERA_MARKERS: tuple[tuple[str, str, EngineVersion, re.Pattern[str]], ...] = (
    # 0.28.0 on: one line "GPU KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx".
    ("one_line_tokens", "0.33.0", "V1", re.compile(r"GPU KV cache size:\s*[\d,]+\s*tokens,\s*Maximum concurrency")),
    # 0.20.0 on: "CUDA graph memory profiling is enabled (default since v0.21.0)" / "... is disabled (VLLM_...=0)".
    (
        "cuda_graphs_subtracted",
        "0.27.1",
        "V1",
        re.compile(r"CUDA graph memory profiling is (?:enabled \(default since|disabled \(VLLM_MEMORY)"),
    ),
    # 0.18.x–0.19.x: the estimate runs but is not subtracted ("In v0.19, CUDA graph memory profiling will be ...").
    (
        "cuda_graphs_estimated",
        "0.19.1",
        "V1",
        re.compile(
            r"In v0\.19, CUDA graph memory profiling|will become the default in v0\.19|Estimated CUDA graph memory"
        ),
    ),
    # 0.14.0 on: format_gib, round(x, 2) printed with %s: "12.3 GiB", "20 GiB", "Model loading took 18.55 GiB memory".
    (
        "rounded_gib",
        "0.27.1",
        "V1",
        re.compile(
            r"Available KV cache memory:\s*(?:\d+|\d+\.\d)\s*GiB|Model loading took\s*\d+(?:\.\d{1,2})?\s*GiB memory"
        ),
    ),
    # 0.12.0–0.13.0: "Model loading took %.4f GiB memory and %.6f seconds".
    ("model_loading_memory", "0.13.0", "V1", re.compile(r"Model loading took\s*\d+\.\d{4}\s*GiB memory")),
    # 0.9.x–0.11.0: "Available KV cache memory: %.2f GiB" beside "Model loading took %.4f GiB and %.6f seconds".
    (
        "available_and_model_loading",
        "0.10.2",
        "V1",
        re.compile(
            r"Available KV cache memory:\s*-?\d+\.\d\d\s*GiB(?=[\s\S]*Model loading took\s*\d+\.\d{4}\s*GiB and)"
            r"|Model loading took\s*\d+\.\d{4}\s*GiB and(?=[\s\S]*Available KV cache memory:\s*-?\d+\.\d\d\s*GiB)"
        ),
    ),
    # 0.9.0–0.13.0 ("%.2f"; later releases print two decimals only when the value has them).
    ("available_two_decimals", "0.13.0", "V1", re.compile(r"Available KV cache memory:\s*-?\d+\.\d\d\s*GiB")),
    # 0.9 on: the V1 refusal with the whole "Based on the available memory, the estimated maximum model length is N";
    # the free-memory refusal at start-up.
    (
        "refusal_estimated_length",
        "0.13.0",
        "V1",
        re.compile(r"estimated\s+maximum\s+model\s+length\s+is\s+\d|Free memory on device .{0,40}on startup"),
    ),
    # 0.8.0–0.8.5: V1 by default prints "GPU KV cache size: N tokens" and no "Available KV cache memory" line.
    ("tokens_without_available", "0.8.5", "V1", re.compile(r"GPU KV cache size:\s*[\d,]+\s*tokens")),
    # 0.8.3–0.8.5: the V1 refusal in GiB; 0.7.0–0.8.2 wrote "GB".
    ("refusal_gib", "0.8.5", "V1", re.compile(r"GiB\s+KV\s+cache\s+is\s+needed")),
    ("refusal_gb", "0.8.0", "V1", re.compile(r"GB\s+KV\s+cache\s+is\s+needed")),
    # 0.6.4: the one-line profiler with the "memory_usage_post_profile=%.2fGib" typo; 0.6.4.post1 fixed it.
    ("profiling_results_typo", "0.6.4", "V0", re.compile(r"Memory profiling results:.*\dGib\b")),
    ("profiling_results", "0.6.4.post1", "V0", re.compile(r"Memory profiling results:")),
    # 0.8.x V0 (the fallback) prints "Model loading took %.4f GB and" beside the three-line profiler.
    (
        "v0_model_loading",
        "0.8.5",
        "V0",
        re.compile(
            r"(?:Memory profiling takes|reserved for KV Cache is)[\s\S]*Model loading took|"
            r"Model loading took[\s\S]*(?:Memory profiling takes|reserved for KV Cache is)"
        ),
    ),
    # 0.7.0 on (V0): "# %s blocks: %d, # CPU blocks: %d" with the device name ("# cuda blocks").
    ("device_blocks", "0.7.3", "V0", re.compile(r"#\s*(?!GPU\b)[A-Za-z]+\s+blocks:\s*\d+,\s*#\s*CPU blocks")),
    # 0.6.5–0.6.6: the three-line profiler ("Memory profiling takes ...") beside "# GPU blocks: N, # CPU blocks: M".
    (
        "profiling_takes_gpu_blocks",
        "0.6.6.post1",
        "V0",
        re.compile(
            r"(?:Memory profiling takes|reserved for KV Cache is)[\s\S]*GPU blocks:\s*\d+,\s*#\s*CPU|"
            r"GPU blocks:\s*\d+,\s*#\s*CPU[\s\S]*(?:Memory profiling takes|reserved for KV Cache is)"
        ),
    ),
    ("profiling_takes", "0.7.3", "V0", re.compile(r"Memory profiling takes|the rest of the memory reserved for KV")),
    # 0.6.3–0.6.3.post1 (V0): "# GPU blocks: N, # CPU blocks: M" and, new in 0.6.3, "Maximum concurrency".
    (
        "gpu_cpu_blocks_concurrency",
        "0.6.3.post1",
        "V0",
        re.compile(r"GPU blocks:\s*\d+,\s*#\s*CPU blocks[\s\S]*Maximum concurrency"),
    ),
    ("gpu_cpu_blocks", "0.5.5", "V0", re.compile(r"GPU blocks:\s*\d+,\s*#\s*CPU blocks")),
    # Early V1 (0.6.4–0.7.3, opt-in): "# GPU blocks: %d" alone (v1/core/kv_cache_utils.py).
    ("gpu_blocks_alone", "0.7.3", "V1", re.compile(r"#\s*GPU blocks:\s*\d+\s*$", re.MULTILINE)),
)
_ENGINE_LINE = re.compile(r"Initializing an? (V0|V1) LLM engine")


def _log_text(log: VllmLog) -> str:
    """The cleaned lines of the paste that the parser kept (recognised, then ignored)."""
    return "\n".join([line.text for line in log.recognised] + list(log.ignored))


def release_from_log(log: VllmLog) -> LogRelease | None:
    """The vLLM release `log` was printed by: its version line, else the era its format belongs to.

    A printed version ("vLLM API server version 0.10.2", "Initializing a V1 LLM engine (v0.9.2)",
    the banner's "version 0.19.1") is taken as it is. Otherwise each release's own formats tell
    the era (``_ERA_MARKERS``, newest first): the one-line "Memory profiling results:" of 0.6.4.x
    (its "Gib" typo: 0.6.4 itself), the three-line "Memory profiling takes … reserved for KV Cache"
    of V0 0.6.5–0.8.x, "# cuda blocks" (V0 ≥ 0.7.0), "# GPU blocks: N, # CPU blocks: M" (V0 ≤ 0.6.x),
    "# GPU blocks: N" alone (early V1 ≤ 0.7.3), "GPU KV cache size" without "Available KV cache
    memory" (V1 0.8.x), "Available KV cache memory: %.2f GiB" (0.9–0.13; rounded without trailing
    zeros from 0.14), the CUDA-graph profiling lines (0.18 on), the one-line tokens and concurrency
    (0.28 on); the result is then a representative release of that era and ``inferred``. None when
    nothing in the log tells.

    >>> found = release_from_log(parse_vllm_log("Memory profiling results: total_gpu_memory=23.58GiB"))
    >>> found.release, found.inferred, found.evidence, found.era
    ('0.6.4.post1', True, 'profiling_results', 'V0')
    """
    text = _log_text(log)
    stated = _ENGINE_LINE.search(text)
    engine: EngineVersion | None = "V0" if stated and stated.group(1) == "V0" else ("V1" if stated else log.version)
    if log.vllm_version:
        try:
            parse_release(log.vllm_version)
        except KvError:
            pass
        else:
            line = next((item.text for item in log.recognised if "vllm_version" in item.fields), "")
            return LogRelease(
                release=log.vllm_version, inferred=False, evidence="version_line", engine=engine, line=line
            )
    for evidence, release, era_engine, pattern in _ERA_MARKERS:
        match = pattern.search(text)
        if match is not None:
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.start())
            line = text[start : end if end >= 0 else len(text)]
            return LogRelease(release=release, inferred=True, evidence=evidence, engine=era_engine, line=line)
    return None


# ---------------------------------------------------------------- the advice, from one estimated budget

#: The highest --gpu-memory-utilization the advice suggests: vLLM accepts up to 1, but the CUDA graphs,
#: the sampler's scratch and the driver need a little room outside the budget.
MAX_UTILIZATION = 0.98
#: The GPU counts the advice tries for more tensor parallelism.
_MORE_GPUS = (2, 4, 8)


def log_flags(log: VllmLog, text: str = "") -> VllmFlags:
    """The budget-shaping flags a start-up ran with: what the log prints, else a command line in `text`.

    The log's own lines win (the engine config, "non-default args", vLLM's profiler line);
    ``read_vllm_flags(text)`` fills what they do not say (a ``vllm serve …`` line or the ``# flags:``
    header of data/vllm_logs). The KV cache dtype is the log's name ("auto" when none).
    """
    command = read_vllm_flags(text) if text else VllmFlags()
    return VllmFlags(
        gpu_memory_utilization=log.gpu_memory_utilization or command.gpu_memory_utilization,
        max_model_len=log.requested_max_model_len or command.max_model_len,
        tensor_parallel_size=log.tensor_parallel_size or command.tensor_parallel_size,
        pipeline_parallel_size=log.pipeline_parallel_size or command.pipeline_parallel_size,
        max_num_batched_tokens=log.max_num_batched_tokens or command.max_num_batched_tokens,
        max_num_seqs=log.max_num_seqs or command.max_num_seqs,
        enforce_eager=bool(log.enforce_eager) if log.enforce_eager is not None else command.enforce_eager,
        kv_cache_dtype=log.kv_cache_dtype or command.kv_cache_dtype,
        block_size=log.block_size or command.block_size,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class StartupAdvice:
    """What vLLM would do with the log's settings on one GPU, and what would make it start (one budget).

    ``estimate`` is :func:`kvcore.vllm_startup.vllm_startup` for the log's release (``release``, or
    ``kvcore.NEWEST_RELEASE`` when the log does not tell: ``release`` None), the model, the GPU and
    the flags the log ran with; every other figure is the same call with one setting changed.
    ``utilization_to_fit``: the smallest --gpu-memory-utilization, in hundredths up to
    ``MAX_UTILIZATION``, at which the requested max_model_len starts (None: none does).
    ``longest_max_model_len``: the longest max_model_len that starts at the log's utilisation
    (None: not even one token). ``fp8_fits``: the same start-up with --kv-cache-dtype fp8 (None when
    the cache is already FP8). ``tp_to_fit``: the smallest tensor-parallel size of 2, 4, 8 that the
    model splits into (``kvcore.tensor_parallel_sizes``) and that starts (None: none does).
    """

    release: LogRelease | None
    estimate: VllmStartup
    flags: VllmFlags
    utilization: float
    max_model_len: int
    kv_dtype: str
    utilization_to_fit: float | None
    longest_max_model_len: int | None
    fp8: VllmStartup | None
    tp_to_fit: int | None
    tp_estimate: VllmStartup | None

    @property
    def fits(self) -> bool:
        """Whether the estimate starts with the log's settings."""
        return self.estimate.fits

    @property
    def fp8_fits(self) -> bool | None:
        """Whether an FP8 cache would start (None: the cache is already FP8)."""
        return None if self.fp8 is None else self.fp8.fits


def startup_advice(
    log: VllmLog,
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    flags: VllmFlags | None = None,
    release: LogRelease | None = None,
    kv_dtype: str | None = None,
    weights_dtype: str | None = None,
    max_model_len: int | None = None,
) -> StartupAdvice:
    """vLLM's start-up for the log's settings from the GPU alone, and the changes that would make it start.

    One budget, M · u − W − A − N − G (:func:`kvcore.vllm_startup.vllm_startup`), for the release
    :func:`release_from_log` names (or `release`), `model` on `gpu`, and the log's flags
    (:func:`log_flags`: utilisation, default 0.9; max_model_len, default the model's; tp, pp,
    batch limits, --enforce-eager, block size, KV dtype). `kv_dtype` and `weights_dtype` override
    the cache's and the checkpoint's format. Then, each by the same call:

    * utilisation to fit = min { u = k / 100 ≤ 0.98 : vllm_startup(u).fits } (the pool grows with u,
      every other term does not depend on it, so a bisection over k finds it);
    * longest max_model_len = max { L : vllm_startup(max_model_len=L).fits } (bisection; V0 profiles
      max(L, 2048) tokens, so the activation term shrinks with L too);
    * FP8 KV = vllm_startup(kv_dtype="fp8"); more GPUs = the first tp of (2, 4, 8) that fits.

    A log tensor-parallel size that does not split the model is read as 1. Raises KvError for
    settings vllm_startup refuses (an unknown checkpoint format, pp above the layers).
    """
    flags = flags or log_flags(log)
    release = release if release is not None else release_from_log(log)
    version = release.release if release is not None else NEWEST_RELEASE
    try:
        parse_release(version)
    except KvError:
        version = NEWEST_RELEASE
    u = flags.gpu_memory_utilization if flags.gpu_memory_utilization and 0 < flags.gpu_memory_utilization <= 1 else 0.9
    length = int(max_model_len or flags.max_model_len or model.max_position_embeddings)
    tp = flags.tensor_parallel_size if flags.tensor_parallel_size in tensor_parallel_sizes(model, max_gpus=64) else 1
    cache = kv_cache_format(kv_dtype or flags.kv_cache_dtype)

    def start(**changes: object) -> VllmStartup:
        settings: dict[str, object] = {
            "version": version,
            "utilization": u,
            "max_model_len": length,
            "max_num_batched_tokens": flags.max_num_batched_tokens,
            "max_num_seqs": flags.max_num_seqs,
            "kv_dtype": cache,
            "weights_dtype": weights_dtype,
            "enforce_eager": flags.enforce_eager,
            "block_size": flags.block_size,
            "tp": tp,
            "pp": flags.pipeline_parallel_size,
        }
        settings.update(changes)
        return vllm_startup(model, gpu, **settings)  # type: ignore[arg-type]

    estimate = start()
    utilization_to_fit = None
    if start(utilization=MAX_UTILIZATION).fits:
        low, high = 1, round(MAX_UTILIZATION * 100)  # high fits; find the smallest k that does
        while low < high:
            middle = (low + high) // 2
            if start(utilization=middle / 100).fits:
                high = middle
            else:
                low = middle + 1
        utilization_to_fit = high / 100
    longest = None
    if estimate.fits:
        longest = length
    elif start(max_model_len=1).fits:
        low, high = 1, length - 1  # low fits, length does not
        while low < high:
            middle = (low + high + 1) // 2
            if start(max_model_len=middle).fits:
                low = middle
            else:
                high = middle - 1
        longest = low
    fp8 = None if cache == "fp8" else start(kv_dtype="fp8")
    tp_to_fit, tp_estimate = None, None
    for size in _MORE_GPUS:
        if size <= tp or size not in tensor_parallel_sizes(model, max_gpus=size):
            continue
        candidate = start(tp=size)
        if candidate.fits:
            tp_to_fit, tp_estimate = size, candidate
            break
    return StartupAdvice(
        release=release,
        estimate=estimate,
        flags=flags,
        utilization=u,
        max_model_len=length,
        kv_dtype=cache,
        utilization_to_fit=utilization_to_fit,
        longest_max_model_len=longest,
        fp8=fp8,
        tp_to_fit=tp_to_fit,
        tp_estimate=tp_estimate,
    )


# ---------------------------------------------------------------- a log's header and the flags it ran with

_HEADER_LINE = re.compile(r"^#\s*([a-z][a-z0-9\-]*):\s?(.*)$")


def read_log_header(text: str) -> dict[str, str]:
    """The ``# key: value`` lines a log of data/vllm_logs opens with (source, vllm, model, gpu, flags, …).

    Stops at the first line that is not one; keys are lower case, values stripped. A repeated key
    keeps its first value.

    >>> read_log_header("# source: https://x\\n# gpu: rtx-3090\\nINFO …")
    {'source': 'https://x', 'gpu': 'rtx-3090'}
    """
    header: dict[str, str] = {}
    for line in str(text).splitlines():
        match = _HEADER_LINE.match(line.strip())
        if match is None:
            break
        header.setdefault(match.group(1), match.group(2).strip())
    return header


def log_body(text: str) -> str:
    """The log after its ``# key: value`` header (what :func:`read_log_header` reads is dropped).

    A header's notes may quote log lines of other runs; only the body is the start-up itself.

    >>> log_body("# source: https://x\\n# note: it printed 9.9 GiB before\\nINFO real line")
    'INFO real line'
    """
    lines = str(text).splitlines()
    start = next((index for index, line in enumerate(lines) if _HEADER_LINE.match(line.strip()) is None), len(lines))
    return "\n".join(lines[start:])


@dataclass(frozen=True, slots=True, kw_only=True)
class VllmFlags:
    """The engine arguments of a ``vllm serve`` command that shape the memory budget (None: not given)."""

    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    enforce_eager: bool = False
    kv_cache_dtype: str = "auto"
    block_size: int | None = None


#: vllm serve's spellings without their dashes (vllm/engine/arg_utils.py ``EngineArgs.add_cli_args``) →
#: VllmFlags fields; "tp" and "pp" are the one-dash short forms.
_FLAG_NAMES = {
    "gpu-memory-utilization": "gpu_memory_utilization",
    "max-model-len": "max_model_len",
    "tensor-parallel-size": "tensor_parallel_size",
    "tp": "tensor_parallel_size",
    "pipeline-parallel-size": "pipeline_parallel_size",
    "pp": "pipeline_parallel_size",
    "max-num-batched-tokens": "max_num_batched_tokens",
    "max-num-seqs": "max_num_seqs",
    "enforce-eager": "enforce_eager",
    "kv-cache-dtype": "kv_cache_dtype",
    "block-size": "block_size",
}


def read_vllm_flags(text: str) -> VllmFlags:
    """The budget-shaping flags of a ``vllm serve`` command line (``--flag value`` or ``--flag=value``).

    Underscores are read as dashes (``--max_model_len``); other flags are skipped; a value that is
    not a number where one is expected leaves the field unset. "1k"-style lengths are not vLLM's
    syntax before 0.11 and are read only as plain numbers here.

    >>> read_vllm_flags("vllm serve m --max-model-len 29000 --gpu-memory-utilization=0.9 -tp 2 --enforce-eager")
    VllmFlags(gpu_memory_utilization=0.9, max_model_len=29000, tensor_parallel_size=2, pipeline_parallel_size=1, \
max_num_batched_tokens=None, max_num_seqs=None, enforce_eager=True, kv_cache_dtype='auto', block_size=None)
    """
    values: dict[str, object] = {}
    tokens = str(text).split()
    for index, token in enumerate(tokens):
        name, _, inline = token.partition("=")
        if not name.startswith("-"):
            continue
        dashes = 2 if name.startswith("--") else 1
        bare = name[dashes:].replace("_", "-")
        field_name = _FLAG_NAMES.get(bare)
        if field_name is None or (dashes == 1) != (bare in ("tp", "pp")):
            continue
        if field_name == "enforce_eager":
            values[field_name] = True
            continue
        raw = inline or (tokens[index + 1] if index + 1 < len(tokens) else "")
        if field_name == "kv_cache_dtype":
            values[field_name] = raw.strip("'\"")
            continue
        try:
            number = float(raw)
        except ValueError:
            continue
        values[field_name] = number if field_name == "gpu_memory_utilization" else int(number)
    return VllmFlags(**values)  # type: ignore[arg-type]
