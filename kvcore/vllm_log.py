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
within the rounding vLLM printed them with. Everything is bytes and tokens.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from . import capacity
from .dtypes import bytes_per_value
from .kv import kv_bytes_per_token
from .memory import model_weights_bytes
from .model import ModelSpec
from .units import GiB

__all__ = [
    "Advice",
    "Check",
    "RecognisedLine",
    "Reconciliation",
    "VllmFlags",
    "VllmLog",
    "clean_log_line",
    "parse_vllm_log",
    "read_log_header",
    "read_vllm_flags",
    "reconcile",
]

#: What the parser reads at most; the rest is dropped and ``truncated`` is set.
MAX_TEXT_CHARS = 200_000
MAX_LINES = 5_000

CheckStatus = Literal["agree", "differ", "cannot_check"]
EngineVersion = Literal["V0", "V1"]

# A whole number with optional thousands separators ("31,232"); vLLM V1 prints f"{n:,}".
_INT = r"(\d{1,3}(?:,\d{3})+(?!\d)|\d+)"
# A decimal number, possibly negative (V0 prints a negative KV size when weights do not fit).
_NUM = r"(-?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?)"
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\^\[\[[0-9;]*[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True, kw_only=True)
class RecognisedLine:
    """One line of the paste that gave at least one field (1-based number, cleaned text)."""

    line_number: int
    text: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class VllmLog:
    """What a vLLM start-up log says about memory, in bytes and tokens (None: not printed).

    ``*_bytes`` fields were printed in GiB (2**30 bytes) and are converted once here;
    ``half_step`` gives, per field, half of the last printed digit in the field's
    unit (3.81 GiB → 0.005 GiB in bytes), the rounding a check must allow.
    Fields named ``error_*`` come from the message vLLM raises when one request of
    max_model_len does not fit.
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
    vllm_version: str | None = None
    error_max_model_len: int | None = None
    error_kv_cache_tokens: int | None = None
    error_needed_kv_cache_bytes: float | None = None
    error_available_kv_cache_bytes: float | None = None
    error_estimated_max_model_len: int | None = None
    no_kv_cache_memory_error: bool = False
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

    @property
    def requested_max_model_len(self) -> int | None:
        """The max_model_len this start-up asked for, from the error, the concurrency line or the config."""
        for value in (self.error_max_model_len, self.max_concurrency_tokens, self.max_model_len):
            if value is not None:
                return value
        return None


@dataclass(frozen=True, slots=True)
class _Pattern:
    fields: tuple[str, ...]
    kinds: tuple[str, ...]  # per group: "int", "gib", "float", "str", "flag"
    regex: re.Pattern[str]


def _pattern(fields: tuple[str, ...], kinds: tuple[str, ...], regex: str, flags: int = 0) -> _Pattern:
    return _Pattern(fields, kinds, re.compile(regex, flags))


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
    # "Initializing an LLM engine (v0.5.4)", "vLLM API server version 0.10.2", the V1 banner "version 0.19.1".
    _pattern(
        ("vllm_version",),
        ("str",),
        r"(?:LLM engine \(v|vLLM API server version\s+|\bversion\s+)(\d+\.\d+[\w.+\-]*)",
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


def clean_log_line(line: str) -> str:
    """A pasted line without colour codes and control characters, stripped ('\\x1b[32mINFO' → 'INFO')."""
    return _CONTROL.sub("", _ANSI.sub("", line)).strip()


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
    if isinstance(text, bytes | bytearray):
        text = bytes(text[: MAX_TEXT_CHARS * 4]).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        text = str(text)
    truncated = len(text) > MAX_TEXT_CHARS
    lines = text[:MAX_TEXT_CHARS].splitlines()
    if len(lines) > MAX_LINES:
        lines, truncated = lines[:MAX_LINES], True
    cleaned = [clean_log_line(line) for line in lines]
    joined = "\n".join(cleaned)
    starts, offset = [], 0
    for line in cleaned:
        starts.append(offset)
        offset += len(line) + 1

    values: dict[str, object] = {}
    half_step: dict[str, float] = {}
    conflicts: list[str] = []
    line_fields: dict[int, list[str]] = {}
    for pattern in _PATTERNS:
        for match in pattern.regex.finditer(joined):
            found = []
            for index, (name, kind) in enumerate(zip(pattern.fields, pattern.kinds, strict=True)):
                raw = match.group(index + 1) if pattern.regex.groups > index else None
                if kind != "flag" and raw is None:
                    continue
                value, step = _convert(raw, kind)
                if value is None:
                    continue
                found.append(name)
                if name not in values:
                    values[name] = value
                    if step is not None:
                        half_step[name] = step
                elif values[name] != value and name not in conflicts:
                    conflicts.append(name)
            if found:
                first = bisect.bisect_right(starts, match.start()) - 1
                last = bisect.bisect_right(starts, max(match.end() - 1, match.start())) - 1
                for number in range(first, last + 1):
                    bucket = line_fields.setdefault(number, [])
                    bucket.extend(name for name in found if name not in bucket)

    recognised = tuple(
        RecognisedLine(line_number=number + 1, text=cleaned[number], fields=tuple(line_fields[number]))
        for number in sorted(line_fields)
    )
    ignored = tuple(line for number, line in enumerate(cleaned) if line and number not in line_fields)
    version: EngineVersion | None = None
    if _V1_MARKERS.search(joined):
        version = "V1"
    elif _V0_MARKERS.search(joined):
        version = "V0"
    return VllmLog(
        **values,  # type: ignore[arg-type]
        version=version,
        recognised=recognised,
        ignored=ignored,
        conflicts=tuple(conflicts),
        truncated=truncated,
        half_step=half_step,
    )


def _convert(raw: str | None, kind: str) -> tuple[object | None, float | None]:
    """A matched string → (value in base units, half of its last printed digit in the same units)."""
    if kind == "flag":
        return True, None
    assert raw is not None
    if kind == "str":
        return raw, None
    plain = raw.replace(",", "")
    if kind == "int":
        return int(plain), 0.0
    number = float(plain)
    if not math.isfinite(number):
        return None, None
    decimals = len(plain.partition(".")[2])
    step = 0.5 * 10.0**-decimals
    if kind == "gib":
        return number * GiB, step * GiB
    return number, step


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """One logged number beside kvcore's: they agree when ``low ≤ logged ≤ high``.

    ``kind`` names the number (a field of :class:`VllmLog` or ``bytes_per_token``),
    ``unit`` its unit ("bytes", "tokens", "blocks", "requests", "bytes_per_token").
    ``low``/``high`` widen ``expected`` by the rounding vLLM printed with. When
    status is ``cannot_check``, ``reason`` says what was missing.
    """

    kind: str
    status: CheckStatus
    unit: str
    logged: float | None = None
    expected: float | None = None
    low: float | None = None
    high: float | None = None
    reason: str = ""

    @property
    def ratio(self) -> float | None:
        """logged ÷ expected (2.0: the log counts twice what kvcore does), None if either is missing or 0."""
        if self.logged is None or not self.expected:
            return None
        return self.logged / self.expected


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
class Reconciliation:
    """The checks, the advice and the settings kvcore assumed (bytes, tokens)."""

    checks: tuple[Check, ...]
    advice: Advice
    bytes_per_token: float
    block_bytes: float
    block_size: int
    kv_bytes_per_value: float
    tp: int

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
    """
    value_bytes = kv_bytes_per_value if kv_bytes_per_value is not None else _log_kv_bytes_per_value(log)
    size = block_size if block_size is not None else (log.block_size or capacity.DEFAULT_BLOCK_SIZE)
    ranks = tp if tp is not None else (log.tensor_parallel_size or 1)
    try:
        per_token = kv_bytes_per_token(model, bytes_per_value=value_bytes, tp=ranks)
    except ValueError:
        if tp is not None or kv_bytes_per_value is not None:
            raise
        ranks = 1  # a tensor_parallel_size from the log that does not split this model's heads
        per_token = kv_bytes_per_token(model, bytes_per_value=value_bytes, tp=ranks)
    size = max(int(size), 1)
    block = size * per_token
    context = _Context(
        log=log, model=model, block_size=size, tp=ranks, per_token=per_token, block_bytes=block,
        weights_bytes_per_param=weights_bytes_per_param,
    )  # fmt: skip
    if per_token <= 0:
        checks = tuple(
            Check(kind=kind, status="cannot_check", unit=unit, reason="model_has_no_per_token_cache")
            for kind, unit in _CHECK_UNITS
        )
        return Reconciliation(
            checks=checks, advice=_NO_ADVICE, bytes_per_token=0.0, block_bytes=0.0, block_size=size,
            kv_bytes_per_value=value_bytes, tp=ranks,
        )  # fmt: skip
    checks = tuple(_CHECKS[kind](context) for kind, _ in _CHECK_UNITS)
    return Reconciliation(
        checks=checks,
        advice=_advice(context, value_bytes, context_tokens),
        bytes_per_token=per_token,
        block_bytes=block,
        block_size=size,
        kv_bytes_per_value=value_bytes,
        tp=ranks,
    )


def _log_kv_bytes_per_value(log: VllmLog) -> float:
    """Bytes per KV value the log's kv_cache_dtype implies ('auto' or absent: 2, FP16/BF16)."""
    name = (log.kv_cache_dtype or "auto").lower()
    if name.startswith("fp8") or name.startswith("float8") or name in ("int8", "nvfp8"):
        return 1.0
    if name in ("fp4", "nvfp4", "int4"):
        return 0.5
    return 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class _Context:
    log: VllmLog
    model: ModelSpec
    block_size: int
    tp: int
    per_token: float
    block_bytes: float
    weights_bytes_per_param: float | None = None

    def pool(self) -> tuple[float, float] | None:
        """(pool bytes, half step) from whichever line printed it."""
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

    def known_blocks(self) -> tuple[int, int] | None:
        """(low, high) blocks the log states or implies: printed blocks, else the pool, else tokens."""
        if self.log.gpu_blocks is not None:
            return self.log.gpu_blocks, self.log.gpu_blocks
        span = self.blocks_range()
        if span is not None:
            return span[0], span[2]
        if self.log.gpu_kv_cache_tokens is not None:
            blocks = self.log.gpu_kv_cache_tokens // self.block_size
            return blocks, blocks
        return None


def _verdict(kind: str, unit: str, logged: float, expected: float, low: float, high: float) -> Check:
    status: CheckStatus = "agree" if low <= logged <= high else "differ"
    return Check(kind=kind, status=status, unit=unit, logged=logged, expected=expected, low=low, high=high)


def _missing(kind: str, unit: str, reason: str, logged: float | None = None) -> Check:
    return Check(kind=kind, status="cannot_check", unit=unit, logged=logged, reason=reason)


def _check_gpu_blocks(c: _Context) -> Check:
    logged = c.log.gpu_blocks
    if logged is None:
        return _missing("gpu_blocks", "blocks", "not_in_log")
    span = c.blocks_range()
    if span is None:
        return _missing("gpu_blocks", "blocks", "no_kv_memory_line", logged)
    return _verdict("gpu_blocks", "blocks", logged, span[1], span[0], span[2])


def _check_tokens(c: _Context) -> Check:
    logged = c.log.gpu_kv_cache_tokens
    if logged is None:
        return _missing("gpu_kv_cache_tokens", "tokens", "not_in_log")
    if c.log.gpu_blocks is not None:
        candidates = [c.log.gpu_blocks]
    else:
        span = c.blocks_range()
        if span is None:
            return _missing("gpu_kv_cache_tokens", "tokens", "no_kv_memory_line", logged)
        candidates = list(span)
    # vLLM < 0.11 printed blocks · block_size; later int(concurrency · max_model_len).
    values = [blocks * c.block_size for blocks in candidates]
    length = c.log.max_concurrency_tokens or c.log.max_model_len
    if length:
        values += [int(c.concurrency(blocks, length) * length) for blocks in candidates]
    expected = candidates[len(candidates) // 2] * c.block_size
    return _verdict("gpu_kv_cache_tokens", "tokens", logged, expected, min(values), max(values))


def _check_bytes_per_token(c: _Context) -> Check:
    pool = c.pool()
    tokens = c.log.gpu_kv_cache_tokens
    if tokens is None and c.log.gpu_blocks is not None:
        tokens = c.log.gpu_blocks * c.block_size
    for fallback in (c.log.error_kv_cache_tokens, c.log.error_estimated_max_model_len):
        if tokens is None and fallback is not None:
            tokens = fallback  # both are whole blocks · block_size for full attention
    if pool is None or not tokens or pool[0] <= 0:
        return _missing("bytes_per_token", "bytes_per_token", "needs_memory_and_tokens")
    value, step = pool
    implied = value / tokens
    # Rounding of the printed pool, plus up to one block the floor leaves unused.
    relative = step / value + c.block_size / tokens
    return _verdict(
        "bytes_per_token", "bytes_per_token", implied, c.per_token, c.per_token * (1 - relative),
        c.per_token * (1 + relative),
    )  # fmt: skip


def _check_concurrency(c: _Context) -> Check:
    logged, length = c.log.max_concurrency, c.log.max_concurrency_tokens
    if logged is None or not length:
        return _missing("max_concurrency", "requests", "not_in_log", logged)
    blocks = c.known_blocks()
    if blocks is None:
        return _missing("max_concurrency", "requests", "no_blocks_or_memory", logged)
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
        return _missing("error_kv_cache_tokens", "tokens", "not_in_log")
    blocks = c.known_blocks() if c.log.gpu_blocks is not None else None
    span = (blocks[0], blocks[0], blocks[1]) if blocks else c.blocks_range()
    if span is None:
        return _missing("error_kv_cache_tokens", "tokens", "no_blocks_or_memory", logged)
    return _verdict(
        "error_kv_cache_tokens", "tokens", logged, span[1] * c.block_size, span[0] * c.block_size,
        span[2] * c.block_size,
    )  # fmt: skip


def _check_estimated_length(c: _Context) -> Check:
    logged = c.log.error_estimated_max_model_len
    if logged is None:
        return _missing("error_estimated_max_model_len", "tokens", "not_in_log")
    span = c.blocks_range()
    if span is None:
        return _missing("error_estimated_max_model_len", "tokens", "no_kv_memory_line", logged)
    lengths = [
        capacity.estimated_max_model_len(c.model, num_blocks=blocks, block_size=c.block_size, tp=c.tp)
        for blocks in span
    ]
    return _verdict("error_estimated_max_model_len", "tokens", logged, lengths[1], lengths[0], lengths[2])


def _check_needed_bytes(c: _Context) -> Check:
    logged, length = c.log.error_needed_kv_cache_bytes, c.log.error_max_model_len
    if logged is None or length is None:
        return _missing("error_needed_kv_cache_bytes", "bytes", "not_in_log", logged)
    expected = _needed_bytes(c, length)
    step = c.log.half_step.get("error_needed_kv_cache_bytes", 0.0)
    return _verdict("error_needed_kv_cache_bytes", "bytes", logged, expected, expected - step, expected + step)


def _check_weights(c: _Context) -> Check:
    logged = c.log.weights_bytes if c.log.weights_bytes is not None else c.log.model_loading_bytes
    if logged is None:
        return _missing("weights_bytes", "bytes", "not_in_log")
    try:
        per_param = c.weights_bytes_per_param or bytes_per_value(c.model.weights_dtype)
        expected = model_weights_bytes(c.model, bytes_per_param=per_param, tp=c.tp)
    except (ValueError, KeyError):
        return _missing("weights_bytes", "bytes", "model_parameters_unknown", logged)
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
    blocks = log.gpu_blocks if log.gpu_blocks is not None else (span[1] if span else None)
    if blocks is None and log.gpu_kv_cache_tokens is not None:
        blocks = log.gpu_kv_cache_tokens // c.block_size
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
        fp8_longest = longest(fp8_blocks)
        fp8_users = c.concurrency(fp8_blocks, length) if length else None
    return Advice(
        requested_max_model_len=length,
        num_blocks=blocks,
        needed_bytes=needed,
        missing_bytes=missing,
        longest_context_tokens=longest(blocks) if blocks is not None else None,
        users_at_requested=c.concurrency(blocks, length) if blocks is not None and length else None,
        users_at_context=c.concurrency(blocks, context_tokens) if blocks is not None and context_tokens else None,
        gpu_memory_utilization_to_fit=util,
        fp8_longest_context_tokens=fp8_longest,
        fp8_users_at_requested=fp8_users,
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
