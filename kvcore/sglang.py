"""SGLang's KV pool: how ``python -m sglang.launch_server`` sizes it, what it prints, and reading its log.

SGLang measures the GPU's free memory twice — before the weights load (``pre``, the minimum over
the tensor-parallel ranks) and after (``post``) — and keeps ``pre · (1 − mem_fraction_static)``
free for activations and CUDA graphs (sglang/srt/model_executor/model_runner.py,
``ModelRunner.profile_max_num_token``; read in releases 0.3.0, 0.3.6, 0.4.3, 0.4.4, 0.4.5, 0.4.6,
0.4.9, 0.5.1, 0.5.6, 0.5.12 and 0.5.23):

    rest   = post − pre · (1 − mem_fraction_static)                    [GB = 2**30 bytes]
    tokens = ⌊rest · 2**30 / cell⌋, cell = bytes of one token on every pooled layer, one GPU
    tokens = ⌊min(tokens, --max-total-tokens) / page_size⌋ · page_size

``cell`` is ``kv_heads/tp · head_dim · layers · 2 · b`` (at least one KV head per rank) for
MHA/GQA, ``(kv_lora_rank + qk_rope_head_dim) · layers · b`` for MLA (576 values per layer on
every rank for DeepSeek), and counts only the full-attention layers of a hybrid linear-attention
model (Qwen3-Next), whose mamba state pool first takes ``rest · r / (1 + r)`` (r =
``mamba_full_memory_ratio``, 0.9). A sliding-window model splits the tokens between a full pool and
a sliding pool at ``swa_full_tokens_ratio`` (0.8). Each layer's K and V buffers hold one padding
page more than the pool (``size + page_size`` rows from 0.4.6, ``size + 1`` before), so the
printed "K size" is a little more than tokens · per-token bytes. SGLang's "GB" is 2**30 bytes
(``get_available_gpu_memory`` divides by ``1 << 30``; memory_pool.py ``GB = 1024 * 1024 * 1024``).

Where the releases differ (:func:`sglang_release_rules`): the default ``mem_fraction_static``
(a table by TP size in 0.3.x–0.4.6, a reserve by GPU memory from 0.4.9, a reserve from the chunked
prefill size and CUDA graph batch size from 0.5.6), the padding row, and the printed lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from . import checks
from .budget import BudgetTerm
from .errors import KvError
from .hardware import GpuSpec
from .kv import kv_heads_per_gpu, state_bytes_per_sequence
from .log_lines import (
    NUMBER_PATTERN,
    Check,
    LogPattern,
    RecognisedLine,
    cannot_check,
    log_pattern,
    read_patterns,
    verdict,
)
from .model import ModelSpec
from .units import GiB, MiB
from .vllm_startup import loaded_weights_bytes

__all__ = [
    "DEFAULT_SGLANG_RELEASE",
    "SGLANG_KV_CACHE_DTYPES",
    "SGLANG_MARKERS",
    "SGLANG_RELEASES",
    "SglangLog",
    "SglangRules",
    "SglangStartup",
    "parse_sglang_log",
    "reconcile_sglang",
    "sglang_cell_bytes",
    "sglang_default_mem_fraction",
    "sglang_release_rules",
    "sglang_startup",
]

#: The releases whose rules were read from the wheel (``pip download sglang==X``); newest last.
SGLANG_RELEASES: tuple[str, ...] = ("0.3.6", "0.4.3", "0.4.4", "0.4.6", "0.4.9", "0.5.6")
DEFAULT_SGLANG_RELEASE = "0.5.6"

#: ``--kv-cache-dtype`` → (bytes per value, the torch dtype SGLang prints); "auto" is the model's dtype
#: (model_runner.py ``init_memory_pool``; fp8 is stored as uint8 but sized at one byte a value).
SGLANG_KV_CACHE_DTYPES: dict[str, tuple[float, str]] = {
    "auto": (2.0, "torch.bfloat16"),
    "bf16": (2.0, "torch.bfloat16"),
    "bfloat16": (2.0, "torch.bfloat16"),
    "fp8_e5m2": (1.0, "torch.float8_e5m2"),
    "fp8_e4m3": (1.0, "torch.float8_e4m3fn"),
}

#: What the card's driver, CUDA context and NCCL hold before SGLang measures ``pre`` (an estimate, used
#: only when no log gives "Load weight begin. avail mem"): one GPU, LFM2-700M on a 16 GB card
#: (sglang PR #16065: 15.99 GiB reported, 15.33 free) → 0.66 GiB; tensor parallel, Llama-70B-class TP8 on
#: H200s (sglang PR #11716: 139.81 GiB reported, 137.29 free, "Init torch distributed ends. mem
#: usage=2.01 GB") → 2.52 GiB.
STARTUP_OVERHEAD_BYTES = 0.66 * GiB
STARTUP_OVERHEAD_TP_BYTES = 2.52 * GiB
#: ``max_prefill_tokens`` default (server_args.py, every release read).
MAX_PREFILL_TOKENS = 16384
#: req_to_token rows are context_len + 4 int32 entries (model_runner.py ``extra_max_context_len = 4``).
REQ_TO_TOKEN_EXTRA = 4
#: Hybrid linear models: requests per mamba slot with the radix cache (model_runner.py, 0.5.6).
MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3

KvLine = Literal["none", "sizes", "tokens", "dtype"]
FractionRule = Literal["tp_0.3", "tp_0.4", "tp_or_13g", "reserve_gpu", "reserve_graph"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SglangRules:
    """The rules of one SGLang release (the newest release read at or below it).

    ``kv_line``: the allocation line — "none" (0.3.x prints none), "sizes" (0.4.3: "KV Cache is
    allocated. K size: X GB, V size: X GB."), "tokens" (0.4.4–0.5.12: with "#tokens: N, "), "dtype"
    (0.5.23: "dtype: torch.X, #tokens: N"); ``mla_line``: the MLA pool prints "KV size" (0.4.6 on; none
    before). ``pad_rows_page``: the K/V buffers hold size + page_size rows (0.4.4 on) rather than
    size + 1. ``usage_in_load_line``: "Load weight end" prints "mem usage" (0.4.4 on).
    ``scheduler_line``: "basic" (0.3.6), "chunked" (0.4.3–0.4.6: adds chunked_prefill_size), "avail"
    (0.4.9 on: adds available_gpu_mem). ``req_pool_extra``: the request pool holds max_num_reqs + 1
    (to 0.4.6) or max_num_reqs (0.4.9 on). ``fraction_rule``: see :func:`sglang_default_mem_fraction`.
    """

    release: str
    kv_line: KvLine
    pad_rows_page: bool
    usage_in_load_line: bool
    scheduler_line: Literal["basic", "chunked", "avail"]
    req_pool_extra: int
    fraction_rule: FractionRule
    hybrid_models: bool
    mla_line: bool = True


_RULES: dict[str, SglangRules] = {
    "0.3.6": SglangRules(
        release="0.3.6",
        kv_line="none",
        pad_rows_page=False,
        usage_in_load_line=False,
        scheduler_line="basic",
        req_pool_extra=1,
        fraction_rule="tp_0.3",
        hybrid_models=False,
        mla_line=False,
    ),
    "0.4.3": SglangRules(
        release="0.4.3",
        kv_line="sizes",
        pad_rows_page=False,
        usage_in_load_line=False,
        scheduler_line="chunked",
        req_pool_extra=1,
        fraction_rule="tp_0.4",
        hybrid_models=False,
        mla_line=False,
    ),
    "0.4.4": SglangRules(
        release="0.4.4",
        kv_line="tokens",
        pad_rows_page=True,
        usage_in_load_line=True,
        scheduler_line="chunked",
        req_pool_extra=1,
        fraction_rule="tp_0.4",
        hybrid_models=False,
        mla_line=False,
    ),
    "0.4.6": SglangRules(
        release="0.4.6",
        kv_line="tokens",
        pad_rows_page=True,
        usage_in_load_line=True,
        scheduler_line="chunked",
        req_pool_extra=1,
        fraction_rule="tp_or_13g",
        hybrid_models=False,
    ),
    "0.4.9": SglangRules(
        release="0.4.9",
        kv_line="tokens",
        pad_rows_page=True,
        usage_in_load_line=True,
        scheduler_line="avail",
        req_pool_extra=0,
        fraction_rule="reserve_gpu",
        hybrid_models=False,
    ),
    "0.5.6": SglangRules(
        release="0.5.6",
        kv_line="tokens",
        pad_rows_page=True,
        usage_in_load_line=True,
        scheduler_line="avail",
        req_pool_extra=0,
        fraction_rule="reserve_graph",
        hybrid_models=True,
    ),
}

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


def sglang_release_rules(release: str | None = None) -> SglangRules:
    """The rules of `release` ("0.4.10", "0.5.6.post2"): those of the newest release read at or below it.

    KvError ``sglang_unknown_release`` for text that is not a version or a release before 0.3.0.

    >>> sglang_release_rules("0.4.10").release, sglang_release_rules().release
    ('0.4.9', '0.5.6')
    """
    text = DEFAULT_SGLANG_RELEASE if release is None else str(release).strip()
    match = _VERSION.match(text)
    if not match or tuple(int(part) for part in match.groups()) < (0, 3, 0):
        raise KvError(
            "sglang_unknown_release",
            f"unknown SGLang release {release!r}: give a version from 0.3.0 on, e.g. {DEFAULT_SGLANG_RELEASE}",
            value=str(release),
            known=", ".join(SGLANG_RELEASES),
        )
    wanted = tuple(int(part) for part in match.groups())
    chosen = SGLANG_RELEASES[0]
    for name in SGLANG_RELEASES:
        if tuple(int(part) for part in name.split(".")) <= wanted:
            chosen = name
    return _RULES[chosen]


def _kv_dtype(kv_cache_dtype: str) -> tuple[float, str]:
    key = str(kv_cache_dtype).strip().lower()
    if key not in SGLANG_KV_CACHE_DTYPES:
        raise KvError(
            "sglang_unknown_kv_cache_dtype",
            f"unknown SGLang KV cache dtype {kv_cache_dtype!r}: use one of {', '.join(SGLANG_KV_CACHE_DTYPES)}",
            value=str(kv_cache_dtype),
            known=", ".join(SGLANG_KV_CACHE_DTYPES),
        )
    return SGLANG_KV_CACHE_DTYPES[key]


def _pool_layers(model: ModelSpec) -> tuple[int, int, int]:
    """(layers in the KV pool's cell size, full-attention layers, sliding layers): linear layers hold no KV."""
    full = model.count("full") + model.count("mla")
    sliding = model.count("sliding")
    return full + sliding, full, sliding


def sglang_cell_bytes(model: ModelSpec, *, tp: int = 1, bytes_per_value: float = 2.0) -> float:
    """Bytes of one token on every pooled layer of one GPU: SGLang's ``cell_size`` [bytes/token].

    MHA/GQA: max(n_kv // tp, 1) · head_dim · layers · 2 · b (K and V); MLA: (kv_lora_rank +
    qk_rope_head_dim) · layers · b on every rank; hybrid linear-attention models count only their
    full-attention layers (``len(full_attention_layer_ids)``). model_runner.py
    ``profile_max_num_token``, 0.5.6 (the same formula in 0.3.6–0.5.23).

    >>> from kvcore.data import load_models
    >>> models = load_models()
    >>> sglang_cell_bytes(models["llama-3.1-8b"]), sglang_cell_bytes(models["deepseek-v3"], tp=8)
    (131072.0, 70272.0)
    """
    checks.whole("tp", tp)
    if model.count("mla"):
        return float((model.kv_lora_rank + model.qk_rope_head_dim) * model.count("mla")) * bytes_per_value
    layers, _, _ = _pool_layers(model)
    return float(kv_heads_per_gpu(model.num_key_value_heads, tp) * model.head_dim * layers * 2) * bytes_per_value


def _gpu_defaults(rules: SglangRules, gpu_mem_mib: float | None, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) by GPU memory [MiB, as nvidia-smi reports it] (server_args.py)."""
    if rules.fraction_rule in ("tp_0.3", "tp_0.4", "tp_or_13g"):
        small = gpu_mem_mib is not None and gpu_mem_mib < 25000
        return (2048 if small else 8192), (4 if small else 160)
    if gpu_mem_mib is None:
        return 4096, 160
    if rules.fraction_rule == "reserve_gpu":
        chunk = 2048 if gpu_mem_mib < 35 * 1024 else 8192 if gpu_mem_mib < 160 * 1024 else 16384
        graph = (8 if tp < 4 else 80) if gpu_mem_mib < 35 * 1024 else 160
        return chunk, graph
    tiers = (
        (20 * 1024, 2048, 8, 8),
        (35 * 1024, 2048, 24, 80),
        (60 * 1024, 4096, 32, 160),
        (90 * 1024, 8192, 256, 512),
        (160 * 1024, 8192, 256, 512),
    )
    for limit, chunk, small_tp, large_tp in tiers:
        if gpu_mem_mib < limit:
            return chunk, small_tp if tp < 4 else large_tp
    return 16384, 512


def sglang_default_mem_fraction(
    release: str | None = None,
    *,
    gpu_mem_mib: float | None,
    tp: int = 1,
    chunked_prefill_size: int | None = None,
    cuda_graph_max_bs: int | None = None,
) -> float:
    """``--mem-fraction-static`` when not given, by release (server_args.py ``__post_init__``).

    * 0.3.6: by TP size, tp ≥ 16: 0.79, ≥ 8: 0.82, ≥ 4: 0.85, ≥ 2: 0.87, else 0.88;
    * 0.4.3: the same with 0.81 at tp ≥ 8;
    * 0.4.6: that table on cards of at most 81920 MiB, else (M − 13 · 1024) / M (M in MiB, unrounded);
    * 0.4.9 (to 0.5.1): round((M − R) / M, 3), R = (2.8 + tp/10) · 1024 below 35 GiB, (9.5 + tp/2) · 1024
      below 90 GiB, (12 + tp/2) · 1024 below 160 GiB, else 32 · 1024 MiB;
    * 0.5.6: R = 512 + max(chunked_prefill_size, 2048) · 1.5 + cuda_graph_max_bs · 2 + tp/8 · 1024, at
      least 10 · 1024 on cards above 60 GiB; round((M − R) / M, 3) (``_handle_gpu_memory_settings``).

    Multimodal models' extra reserve is not modelled. M = ``gpu_mem_mib``, nvidia-smi's memory.total.

    >>> sglang_default_mem_fraction("0.5.6", gpu_mem_mib=81559), sglang_default_mem_fraction("0.4.9", gpu_mem_mib=81559)
    (0.835, 0.874)
    >>> sglang_default_mem_fraction("0.4.3", gpu_mem_mib=None, tp=8)
    0.81
    """
    rules = sglang_release_rules(release)
    tp = checks.whole("tp", tp)
    table = {"tp_0.3": 0.82, "tp_0.4": 0.81, "tp_or_13g": 0.81}
    if rules.fraction_rule in table:
        if rules.fraction_rule == "tp_or_13g" and gpu_mem_mib is not None and gpu_mem_mib > 81920:
            return (gpu_mem_mib - 1024 * 13) / gpu_mem_mib
        if tp >= 16:
            return 0.79
        if tp >= 8:
            return table[rules.fraction_rule]
        return 0.85 if tp >= 4 else 0.87 if tp >= 2 else 0.88
    if gpu_mem_mib is None:
        return 0.88
    if rules.fraction_rule == "reserve_gpu":
        if gpu_mem_mib < 35 * 1024:
            reserved = (2.8 + tp / 10) * 1024
        elif gpu_mem_mib < 90 * 1024:
            reserved = (9.5 + tp / 2) * 1024
        elif gpu_mem_mib < 160 * 1024:
            reserved = (12 + tp / 2) * 1024
        else:
            reserved = 32 * 1024
        return round((gpu_mem_mib - reserved) / gpu_mem_mib, 3)
    chunk, graph = _gpu_defaults(rules, gpu_mem_mib, tp)
    chunk = chunk if chunked_prefill_size is None else chunked_prefill_size
    graph = graph if cuda_graph_max_bs is None else cuda_graph_max_bs
    reserved = 512.0
    reserved += max(chunk if chunk > 0 else MAX_PREFILL_TOKENS, 2048) * 1.5
    reserved += graph * 2
    reserved += tp / 8 * 1024
    if gpu_mem_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mem_mib - reserved) / gpu_mem_mib, 3)


_ARCHITECTURES: tuple[tuple[str, str], ...] = (
    ("llama", "LlamaForCausalLM"),
    ("codellama", "LlamaForCausalLM"),
    ("tinyllama", "LlamaForCausalLM"),
    ("mistral", "MistralForCausalLM"),
    ("mixtral", "MixtralForCausalLM"),
    ("qwen2", "Qwen2ForCausalLM"),
    ("qwen3-next", "Qwen3NextForCausalLM"),
    ("qwen3-30b-a3b", "Qwen3MoeForCausalLM"),
    ("qwen3-235b", "Qwen3MoeForCausalLM"),
    ("qwen3", "Qwen3ForCausalLM"),
    ("gemma-2-", "Gemma2ForCausalLM"),
    ("gemma-3-1b", "Gemma3ForCausalLM"),
    ("gemma-3", "Gemma3ForConditionalGeneration"),
    ("gemma", "GemmaForCausalLM"),
    ("deepseek-v2", "DeepseekV2ForCausalLM"),
    ("deepseek-v3", "DeepseekV3ForCausalLM"),
    ("kimi-k2", "DeepseekV3ForCausalLM"),
    ("gpt-oss", "GptOssForCausalLM"),
    ("phi-3", "Phi3ForCausalLM"),
    ("phi-4", "Phi3ForCausalLM"),
)


def _architecture(model: ModelSpec) -> str:
    key = model.id.lower()
    for prefix, name in _ARCHITECTURES:
        if key.startswith(prefix):
            return name
    return "ForCausalLM"


#: SGLang's own messages name its flags; kvcore's never do (tests/kvcore/test_errors.py), so the dashes are built.
_DASHES = "-" * 2


def _gb(num_bytes: float) -> str:
    """SGLang's ``f"{x / GB:.2f} GB"`` with GB = 2**30."""
    return f"{num_bytes / GiB:.2f} GB"


@dataclass(frozen=True, slots=True, kw_only=True)
class SglangStartup:
    """One SGLang start-up, per GPU: the memory it measured, the pool it sized and the lines it prints.

    ``pre_model_load_bytes`` / ``post_model_load_bytes``: the free memory before and after the weights
    (``weights_bytes`` apart); ``rest_bytes`` = post − pre · (1 − mem_fraction_static), what the KV
    pool (and a hybrid model's mamba pool) may take; ``profiled_tokens`` = ⌊rest / cell⌋ before the
    --max-total-tokens cap and the page flooring; ``tokens`` = max_total_num_tokens (the full-layer pool
    of a sliding-window model); ``swa_tokens`` the sliding pool's (0 without one); ``k_size_bytes`` /
    ``v_size_bytes`` the K and V buffers of every layer, padding page included (MLA: one latent buffer,
    ``k_size_bytes`` holds it and ``v_size_bytes`` is 0); ``mamba_cache_size`` the hybrid model's
    state slots.
    """

    engine: str = "sglang"
    release: str
    rules: SglangRules = field(repr=False)
    model_name: str
    architecture: str
    model_dtype: str
    tp: int
    page_size: int
    kv_cache_dtype: str
    kv_dtype_name: str
    mem_fraction_static: float
    gpu_mem_mib: float | None
    chunked_prefill_size: int
    max_prefill_tokens: int
    context_len: int
    pre_model_load_bytes: float | None
    post_model_load_bytes: float | None
    weights_bytes: float
    cell_bytes: float
    rest_bytes: float | None
    mamba_bytes: float
    mamba_cache_size: int
    profiled_tokens: int | None
    tokens: int
    swa_tokens: int
    full_layers: int
    swa_layers: int
    is_mla: bool
    k_size_bytes: float
    v_size_bytes: float
    swa_k_size_bytes: float
    swa_v_size_bytes: float
    req_to_token_bytes: float
    max_running_requests: int
    terms: tuple[BudgetTerm, ...] = ()
    sliding_window: int | None = None

    @property
    def fits(self) -> bool:
        """SGLang starts: the pool holds at least one token (else "Not enough memory")."""
        return self.tokens > 0

    @property
    def kv_pool_bytes(self) -> float:
        """K + V buffers of every pool on one GPU [bytes] (the allocation lines' sizes summed)."""
        return self.k_size_bytes + self.v_size_bytes + self.swa_k_size_bytes + self.swa_v_size_bytes

    @property
    def memory_pool_end_bytes(self) -> float | None:
        """An estimate of "Memory pool end. avail mem": post − KV buffers − mamba pool − req_to_token [bytes]."""
        if self.post_model_load_bytes is None:
            return None
        return self.post_model_load_bytes - self.kv_pool_bytes - self.mamba_bytes - self.req_to_token_bytes

    def max_concurrency(self, context_tokens: int) -> float:
        """Requests of `context_tokens` that fit at once: min(tokens / L, sliding pool / min(L, window),
        mamba slots, max_running_requests)."""
        length = checks.whole("context tokens", context_tokens)
        if not self.fits:
            return 0.0
        limits = [self.tokens / length, float(self.max_running_requests)]
        if self.swa_tokens and self.sliding_window:
            limits.append(self.swa_tokens / min(length, self.sliding_window))
        if self.mamba_cache_size:
            limits.append(float(self.mamba_cache_size))
        return min(limits)

    def lines(self) -> list[str]:
        """The lines SGLang prints for this start-up (rank 0, without the "[TP0]" prefix), in its format.

        "Load weight begin/end" (model_runner.py ``load_model``), "KV Cache is allocated" (memory_pool.py,
        one line per pool), "Memory pool end" (``init_memory_pool``; kvcore's estimate), the scheduler's
        "max_total_num_tokens=…" (scheduler.py ``__init__``), or the refusal when the pool is empty.
        """
        rules = self.rules
        out: list[str] = []
        if self.pre_model_load_bytes is not None:
            out.append(f"Load weight begin. avail mem={_gb(self.pre_model_load_bytes)}")
        if self.post_model_load_bytes is not None:
            end = f"Load weight end. type={self.architecture}, dtype={self.model_dtype}, "
            end += f"avail mem={_gb(self.post_model_load_bytes)}"
            if rules.usage_in_load_line and self.pre_model_load_bytes is not None:
                end += f", mem usage={_gb(self.pre_model_load_bytes - self.post_model_load_bytes)}."
            out.append(end)
        if not self.fits:
            message = f"Not enough memory. Please try to increase {_DASHES}mem-fraction-static."
            if rules.fraction_rule == "reserve_graph":
                message += f" Current value: self.server_args.mem_fraction_static={self.mem_fraction_static}"
            out.append(f"RuntimeError: {message}")
            return out
        if self.swa_tokens:
            out.append(self._kv_line(self.swa_tokens, self.swa_k_size_bytes, self.swa_v_size_bytes))
            out.append(self._kv_line(self.tokens, self.k_size_bytes, self.v_size_bytes))
            if rules.fraction_rule == "reserve_graph":  # the summary line is 0.5.6's (0.4.9 and 0.5.1 print none)
                usage = self.kv_pool_bytes / GiB
                out.append(f"SWAKVPool mem usage: {usage} GB, swa size: {self.swa_tokens}, full size: {self.tokens}")
        elif rules.kv_line != "none" and (rules.mla_line or not self.is_mla):
            out.append(self._kv_line(self.tokens, self.k_size_bytes, self.v_size_bytes))
        pool_end = self.memory_pool_end_bytes
        if pool_end is not None:
            out.append(f"Memory pool end. avail mem={_gb(pool_end)}")
        sched = f"max_total_num_tokens={self.tokens}, "
        if rules.scheduler_line != "basic":
            sched += f"chunked_prefill_size={self.chunked_prefill_size}, "
        sched += f"max_prefill_tokens={self.max_prefill_tokens}, max_running_requests={self.max_running_requests}, "
        sched += f"context_len={self.context_len}"
        if rules.scheduler_line == "avail" and pool_end is not None:
            sched += f", available_gpu_mem={_gb(pool_end)}"
        out.append(sched)
        return out

    def _kv_line(self, tokens: int, k_bytes: float, v_bytes: float) -> str:
        kind = self.rules.kv_line
        size = f"KV size: {_gb(k_bytes)}" if self.is_mla else f"K size: {_gb(k_bytes)}, V size: {_gb(v_bytes)}"
        if kind == "sizes":
            return f"KV Cache is allocated. {size}." if not self.is_mla else f"KV Cache is allocated. {size}"
        if kind == "dtype":
            return f"KV Cache is allocated. dtype: {self.kv_dtype_name}, #tokens: {tokens}, {size}"
        return f"KV Cache is allocated. #tokens: {tokens}, {size}"

    def as_json(self) -> dict[str, object]:
        """JSON-ready numbers: the issue's keys (max_total_num_tokens, k_size_bytes, v_size_bytes per GPU) and more."""
        return {
            "engine": self.engine,
            "release": self.release,
            "kv_pool_bytes": self.kv_pool_bytes,
            "tokens": self.tokens,
            "fits": self.fits,
            "max_total_num_tokens": self.tokens,
            "k_size_bytes": self.k_size_bytes,
            "v_size_bytes": self.v_size_bytes,
            "swa_max_total_num_tokens": self.swa_tokens,
            "swa_k_size_bytes": self.swa_k_size_bytes,
            "swa_v_size_bytes": self.swa_v_size_bytes,
            "full_layers": self.full_layers,
            "swa_layers": self.swa_layers,
            "cell_bytes": self.cell_bytes,
            "mem_fraction_static": self.mem_fraction_static,
            "pre_model_load_bytes": self.pre_model_load_bytes,
            "post_model_load_bytes": self.post_model_load_bytes,
            "weights_bytes": self.weights_bytes,
            "rest_bytes": self.rest_bytes,
            "profiled_tokens": self.profiled_tokens,
            "mamba_bytes": self.mamba_bytes,
            "max_mamba_cache_size": self.mamba_cache_size,
            "page_size": self.page_size,
            "tp": self.tp,
            "kv_cache_dtype": self.kv_cache_dtype,
            "chunked_prefill_size": self.chunked_prefill_size,
            "max_prefill_tokens": self.max_prefill_tokens,
            "max_running_requests": self.max_running_requests,
            "context_len": self.context_len,
            "gpu_mem_mib": self.gpu_mem_mib,
            "lines": self.lines(),
        }


def _kv_sizes(model: ModelSpec, tokens: int, layers: int, *, rows_extra: int, tp: int, b: float) -> tuple[float, float]:
    """K and V bytes of `layers` layers of `tokens` + `rows_extra` rows (memory_pool.py ``_create_buffers``)."""
    rows = tokens + rows_extra
    if model.count("mla"):
        return float(rows * layers * (model.kv_lora_rank + model.qk_rope_head_dim)) * b, 0.0
    per_row = kv_heads_per_gpu(model.num_key_value_heads, tp) * model.head_dim
    one = float(rows * layers * per_row) * b
    return one, one


def _max_num_reqs(tokens: int, context_len: int) -> int:
    """Request slots SGLang sizes its req_to_token pool for: min(max(⌊tokens / context · 512⌋, 2048), 4096)."""
    return min(max(int(tokens / context_len * 512), 2048), 4096)


def sglang_startup(
    model: ModelSpec,
    *,
    gpu: GpuSpec | None = None,
    tp: int = 1,
    mem_fraction_static: float | None = None,
    page_size: int = 1,
    kv_cache_dtype: str = "auto",
    max_total_tokens: int | None = None,
    context_length: int | None = None,
    chunked_prefill_size: int | None = None,
    cuda_graph_max_bs: int | None = None,
    max_running_requests: int | None = None,
    swa_full_tokens_ratio: float = 0.8,
    disable_hybrid_swa_memory: bool = False,
    mamba_full_memory_ratio: float = 0.9,
    mamba_ssm_bytes_per_value: float = 4.0,
    disable_radix_cache: bool = False,
    release: str | None = None,
    weights_bytes: float | None = None,
    pre_model_load_bytes: float | None = None,
    post_model_load_bytes: float | None = None,
) -> SglangStartup:
    """SGLang's KV pool for `model` on `gpu` (per GPU), as ``launch_server`` sizes it.

    pre = ``pre_model_load_bytes`` (the log's "Load weight begin. avail mem"), else the GPU's memory as
    torch reports it less the start-up overhead (:data:`STARTUP_OVERHEAD_BYTES`, an estimate);
    post = ``post_model_load_bytes``, else pre − weights (``weights_bytes``, else
    :func:`kvcore.vllm_startup.loaded_weights_bytes` — the same checkpoint loads the same bytes on both
    engines; SGLang also builds the rotary cos/sin cache). Then (model_runner.py, 0.5.6):
    rest = post − pre · (1 − f); a hybrid linear model's mamba pool takes rest · r / (1 + r) in whole
    slots first (``handle_max_mamba_cache``; the state counted at ``mamba_ssm_bytes_per_value`` bytes,
    SGLang's float32 SSM state — its conv state, about 4 % of Qwen3-Next's, is bf16); tokens = ⌊rest /
    cell⌋ (:func:`sglang_cell_bytes`), capped at ``max_total_tokens``, floored to ``page_size``; a model
    with sliding layers splits total = tokens · layers into full = ⌊total / (ratio · n_swa + n_full)⌋
    and swa = ⌊full · ratio⌋ (``set_num_token_hybrid``, from 0.4.9; page size 1) unless
    ``disable_hybrid_swa_memory`` (SGLang splits only the architectures it registers as hybrid SWA).
    K = V = (tokens + page) · layers · max(n_kv // tp, 1) · head_dim · b; MLA one buffer of (tokens + page) ·
    layers · 576 · b. With no GPU and no measured memory, ``max_total_tokens`` alone sizes the pool.

    KvError ``sglang_needs_gpu`` (no GPU, no memory and no max_total_tokens), ``sglang_unknown_release``,
    ``sglang_unknown_kv_cache_dtype``, ``sglang_hybrid_unsupported`` (a hybrid linear model before 0.5),
    ``sglang_bad_fraction``.

    >>> from kvcore.data import load_models
    >>> run = sglang_startup(load_models()["qwen3-14b"], tp=4, mem_fraction_static=0.8,
    ...                      pre_model_load_bytes=23.08 * 2**30, post_model_load_bytes=16.00 * 2**30)
    >>> run.tokens, run.lines()[2]
    (298424, 'KV Cache is allocated. #tokens: 298424, K size: 5.69 GB, V size: 5.69 GB')
    """
    rules = sglang_release_rules(release)
    tp = checks.whole("tp", tp)
    page = checks.whole("page_size", page_size)
    b, dtype_name = _kv_dtype(kv_cache_dtype)
    if model.count("linear") and not rules.hybrid_models:
        raise KvError(
            "sglang_hybrid_unsupported",
            f"{model.name} mixes linear-attention and attention layers; kvcore models SGLang's hybrid pool from "
            f"release 0.5.6 on, not {rules.release}",
            model=model.id,
            release=rules.release,
        )
    gpu_mem = gpu.reported_memory_bytes / MiB if gpu is not None else None
    chunk_default, _ = _gpu_defaults(rules, gpu_mem, tp)
    chunk = chunk_default if chunked_prefill_size is None else int(chunked_prefill_size)
    if mem_fraction_static is None:
        fraction = sglang_default_mem_fraction(
            rules.release,
            gpu_mem_mib=gpu_mem,
            tp=tp,
            chunked_prefill_size=chunked_prefill_size,
            cuda_graph_max_bs=cuda_graph_max_bs,
        )
    else:
        fraction = float(mem_fraction_static)
        if not 0.0 < fraction <= 1.0:
            raise KvError(
                "sglang_bad_fraction",
                f"mem_fraction_static must be in (0, 1], got {mem_fraction_static}",
                value=fraction,
            )
    context_len = int(context_length or model.max_position_embeddings or 0)
    if context_len <= 0:
        raise KvError(
            "sglang_context_unknown", f"the context length of {model.name} is unknown: give one", model=model.id
        )
    weights = float(weights_bytes) if weights_bytes is not None else loaded_weights_bytes(model, tp=tp)
    if pre_model_load_bytes is None and gpu is not None:
        overhead = STARTUP_OVERHEAD_TP_BYTES if tp > 1 else STARTUP_OVERHEAD_BYTES
        pre_model_load_bytes = gpu.reported_memory_bytes - overhead
    if post_model_load_bytes is None and pre_model_load_bytes is not None:
        post_model_load_bytes = pre_model_load_bytes - weights
    if pre_model_load_bytes is not None and post_model_load_bytes is not None and weights_bytes is None:
        weights = pre_model_load_bytes - post_model_load_bytes
    cell = sglang_cell_bytes(model, tp=tp, bytes_per_value=b)
    layers, full_layers, swa_layers = _pool_layers(model)
    terms: list[BudgetTerm] = []
    rest: float | None = None
    profiled: int | None = None
    mamba_bytes, mamba_slots = 0.0, 0
    if pre_model_load_bytes is not None and post_model_load_bytes is not None:
        held = pre_model_load_bytes * (1 - fraction)
        rest = post_model_load_bytes - held
        if gpu is not None:
            terms.append(
                BudgetTerm(
                    name="startup_overhead",
                    bytes=gpu.reported_memory_bytes - pre_model_load_bytes,
                    source="CUDA context and NCCL before SGLang measures its free memory (estimate unless logged)",
                )
            )
        terms.append(
            BudgetTerm(
                name="weights",
                bytes=pre_model_load_bytes - post_model_load_bytes,
                source='"Load weight end. … mem usage" (kvcore.vllm_startup.loaded_weights_bytes)',
            )
        )
        terms.append(
            BudgetTerm(
                name="held_back",
                bytes=held,
                source="pre · (1 − mem_fraction_static), model_runner.py profile_max_num_token",
            )
        )
        if model.count("linear"):
            per_slot = state_bytes_per_sequence(model, state_bytes_per_value=mamba_ssm_bytes_per_value, tp=tp)
            if disable_radix_cache or per_slot <= 0:
                mamba_slots = max_running_requests or 512
            else:
                raw = rest * mamba_full_memory_ratio / (1 + mamba_full_memory_ratio)
                mamba_slots = max(int(raw // per_slot), 0)
            mamba_bytes = mamba_slots * per_slot
            rest -= mamba_bytes
            terms.append(
                BudgetTerm(
                    name="mamba_state",
                    bytes=mamba_bytes,
                    source="handle_max_mamba_cache: rest · r / (1 + r) in whole slots",
                )
            )
        profiled = int(rest // cell)
        tokens = profiled if max_total_tokens is None else min(profiled, int(max_total_tokens))
    elif max_total_tokens is not None:
        tokens = int(max_total_tokens)
    else:
        raise KvError(
            "sglang_needs_gpu",
            "SGLang sizes its pool from the GPU's free memory: choose a GPU or give max_total_tokens",
            engine="sglang",
        )
    tokens = tokens // page * page if tokens > 0 else tokens
    swa_tokens = 0
    use_swa = (
        swa_layers > 0
        and full_layers > 0
        and not disable_hybrid_swa_memory
        and rules.fraction_rule in ("reserve_gpu", "reserve_graph")
    )
    if use_swa and tokens > 0:
        total = tokens * model.num_hidden_layers
        tokens = int(total / (swa_full_tokens_ratio * swa_layers + full_layers))
        swa_tokens = int(tokens * swa_full_tokens_ratio)
    rows_extra = page if rules.pad_rows_page and not use_swa else 1
    if tokens > 0:
        if use_swa:
            k, v = _kv_sizes(model, tokens, full_layers, rows_extra=1, tp=tp, b=b)
            swa_k, swa_v = _kv_sizes(model, swa_tokens, swa_layers, rows_extra=1, tp=tp, b=b)
        else:
            k, v = _kv_sizes(model, tokens, layers, rows_extra=rows_extra, tp=tp, b=b)
            swa_k = swa_v = 0.0
        slots = int(max_running_requests) if max_running_requests is not None else _max_num_reqs(tokens, context_len)
        if mamba_slots:
            ratio = 1 if disable_radix_cache else MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
            slots = min(slots, mamba_slots // ratio)
        pool_size = slots + rules.req_pool_extra
        running_cap = tokens // 2 if max_running_requests is None else int(max_running_requests)
        running = min(running_cap, pool_size)
        req_bytes = float(pool_size * (context_len + REQ_TO_TOKEN_EXTRA) * 4)
    else:
        k = v = swa_k = swa_v = req_bytes = 0.0
        running = 0
    windows = [layer.sliding_window for layer in model.layers if layer.kind == "sliding" and layer.sliding_window]
    return SglangStartup(
        release=rules.release,
        rules=rules,
        model_name=model.name,
        architecture=_architecture(model),
        model_dtype="torch.float16" if model.torch_dtype in ("float16", "fp16") else "torch.bfloat16",
        tp=tp,
        page_size=page,
        kv_cache_dtype=str(kv_cache_dtype),
        kv_dtype_name=dtype_name if kv_cache_dtype != "auto" or model.torch_dtype != "float16" else "torch.float16",
        mem_fraction_static=fraction,
        gpu_mem_mib=gpu_mem,
        chunked_prefill_size=chunk,
        max_prefill_tokens=MAX_PREFILL_TOKENS,
        context_len=context_len,
        pre_model_load_bytes=pre_model_load_bytes,
        post_model_load_bytes=post_model_load_bytes,
        weights_bytes=weights,
        cell_bytes=cell,
        rest_bytes=rest,
        mamba_bytes=mamba_bytes,
        mamba_cache_size=mamba_slots,
        profiled_tokens=profiled,
        tokens=max(tokens, 0),  # "Not enough memory": no pool (profiled_tokens keeps the negative count)
        swa_tokens=swa_tokens,
        full_layers=full_layers if use_swa else layers,
        swa_layers=swa_layers if use_swa else 0,
        is_mla=bool(model.count("mla")),
        k_size_bytes=k,
        v_size_bytes=v,
        swa_k_size_bytes=swa_k,
        swa_v_size_bytes=swa_v,
        req_to_token_bytes=req_bytes,
        max_running_requests=running,
        terms=tuple(terms),
        sliding_window=min(windows) if windows and use_swa else None,
    )


# --------------------------------------------------------------------------------------------------
# Reading a pasted SGLang log
# --------------------------------------------------------------------------------------------------

#: Lines only SGLang prints (model_runner.py, memory_pool.py, scheduler.py): a paste with them is SGLang's.
SGLANG_MARKERS: re.Pattern[str] = re.compile(
    r"KV Cache is allocated\.|Load weight (?:begin|end)\. |Memory pool end\. avail mem=|max_total_num_tokens=\d"
    r"|Init torch distributed ends\. mem usage=|Capture cuda graph (?:begin|end)\.|SWAKVPool mem usage:"
    r"|Mamba Cache is allocated\.|server_args=ServerArgs\(|The server is fired up and ready to roll"
)

_N = NUMBER_PATTERN
_I = r"(\d+)"
_PATTERNS: tuple[LogPattern, ...] = (
    # model_runner.py load_model (0.3.6–0.5.23).
    log_pattern(("load_begin_avail_bytes",), ("gib",), rf"Load weight begin\. avail mem={_N} GB"),
    log_pattern(
        ("model_type", "model_dtype", "quant", "load_end_avail_bytes", "weights_mem_usage_bytes"),
        ("str", "str", "str", "gib", "gib"),
        rf"Load weight end\.(?: elapsed=[\d.]+ s,)?(?: type=([A-Za-z0-9_]+),)?(?: dtype=([a-z0-9_.]+),)?"
        rf"(?: quant=([^,]+),)?(?: fmt=[^,]+,)? avail mem={_N} GB(?:, mem usage={_N} GB)?",
    ),
    # memory_pool.py KVCache._finalize_allocation_log and older per-pool lines.
    log_pattern(
        ("kv_dtype", "kv_tokens", "k_size_bytes", "v_size_bytes"),
        ("str", "int", "gib", "gib"),
        rf"KV Cache is allocated\. (?:dtype: ([a-z0-9_.]+), )?(?:#tokens: {_I}, )?K size: {_N} GB, V size: {_N} GB",
    ),
    log_pattern(
        ("kv_dtype", "kv_tokens", "kv_size_bytes"),
        ("str", "int", "gib"),
        rf"KV Cache is allocated\. (?:dtype: ([a-z0-9_.]+), )?(?:#tokens: {_I}, )?KV size: {_N} GB",
    ),
    log_pattern(
        ("swa_mem_usage_bytes", "swa_size", "swa_full_size"),
        ("gib", "int", "int"),
        rf"SWAKVPool mem usage: {_N}\d* GB, swa size: {_I}, full size: {_I}",
    ),
    log_pattern(
        ("max_mamba_cache_size", "conv_state_bytes", "ssm_state_bytes"),
        ("int", "gib", "gib"),
        rf"Mamba Cache is allocated\. max_mamba_cache_size: {_I}, conv_state size: {_N} ?GB, ssm_state size: {_N} ?GB",
    ),
    log_pattern(("memory_pool_end_avail_bytes",), ("gib",), rf"Memory pool end\. avail mem={_N} GB"),
    log_pattern(
        ("init_distributed_mem_usage_bytes",),
        ("gib",),
        rf"Init torch distributed ends\.(?: elapsed=[\d.]+ s,)? mem usage={_N} GB",
    ),
    # scheduler.py Scheduler.__init__.
    log_pattern(
        (
            "max_total_num_tokens",
            "chunked_prefill_size",
            "max_prefill_tokens",
            "max_running_requests",
            "context_len",
            "available_gpu_mem_bytes",
        ),
        ("int", "int", "int", "int", "int", "gib"),
        rf"max_total_num_tokens={_I}(?:, chunked_prefill_size=(-?\d+|None))?(?:, max_prefill_tokens={_I})?"
        rf"(?:, max_running_requests={_I})?(?:, context_len={_I})?(?:, available_gpu_mem={_N} GB)?",
    ),
    log_pattern(
        ("not_enough_memory",), ("flag",), r"Not enough memory\. Please try to increase -{2}mem-fraction-static"
    ),
    # server_args=ServerArgs(...) and the command line's own flags.
    log_pattern(("mem_fraction_static",), ("float",), rf"(?:mem_fraction_static=|-{{2}}mem-fraction-static[ =]){_N}"),
    log_pattern(
        ("tp_size",), ("int",), rf"(?:\btp_size=|-{{2}}tp-size[ =]|-{{2}}tp[ =]|-{{2}}tensor-parallel-size[ =]){_I}"
    ),
    log_pattern(("page_size",), ("int",), rf"(?:\bpage_size=|-{{2}}page-size[ =]){_I}"),
    log_pattern(("max_total_tokens",), ("int",), rf"(?:\bmax_total_tokens=|-{{2}}max-total-tokens[ =]){_I}"),
    log_pattern(("context_length",), ("int",), rf"(?:\bcontext_length=|-{{2}}context-length[ =]){_I}"),
    log_pattern(("kv_cache_dtype",), ("str",), r"(?:\bkv_cache_dtype='|-{2}kv-cache-dtype[ =])([a-z0-9_]+)"),
    log_pattern(
        ("max_running_requests_arg",),
        ("int",),
        rf"(?:\bmax_running_requests=(?=\d+, max_total_tokens=)|-{{2}}max-running-requests[ =]){_I}",
    ),
)

#: The free memory around the weights, per TP rank: SGLang profiles with the minimum over the ranks.
_RANK_AVAIL: dict[str, re.Pattern[str]] = {
    "load_begin_avail_bytes": re.compile(rf"^.*?\bTP(\d+)\b[^\n]*?Load weight begin\. avail mem={_N} GB", re.M),
    "load_end_avail_bytes": re.compile(rf"^.*?\bTP(\d+)\b[^\n]*?Load weight end\.[^\n]*? avail mem={_N} GB", re.M),
}


def _smallest_rank_value(regex: re.Pattern[str], text: str) -> float | None:
    """The smallest of each TP rank's first printed value [bytes]; None unless two or more ranks print it."""
    first: dict[str, float] = {}
    for match in regex.finditer(text):
        first.setdefault(match.group(1), float(match.group(2).replace(",", "")) * GiB)
    return min(first.values()) if len(first) > 1 else None


# The int kind of "chunked_prefill_size=None" must not raise: read_patterns converts with int(); guard it.
_SAFE_INT = re.compile(r"^-?\d+$")


@dataclass(frozen=True, slots=True, kw_only=True)
class SglangLog:
    """What an SGLang start-up log says, in bytes and tokens (None: not printed).

    ``*_bytes`` fields were printed in SGLang's "GB" (2**30 bytes) and converted once here;
    ``half_step`` gives half of each field's last printed digit in the same unit. ``kv_tokens``,
    ``k_size_bytes`` … are the first allocation line's (a sliding-window model prints one per pool:
    ``kv_lines`` has them all, (tokens or None, K or KV bytes, V bytes or None)). The flags the log
    reveals (server_args or the command line) are ``mem_fraction_static`` … ``max_running_requests_arg``.
    """

    load_begin_avail_bytes: float | None = None
    load_end_avail_bytes: float | None = None
    weights_mem_usage_bytes: float | None = None
    model_type: str | None = None
    model_dtype: str | None = None
    quant: str | None = None
    kv_dtype: str | None = None
    kv_tokens: int | None = None
    k_size_bytes: float | None = None
    v_size_bytes: float | None = None
    kv_size_bytes: float | None = None
    kv_lines: tuple[tuple[int | None, float, float | None], ...] = ()
    swa_mem_usage_bytes: float | None = None
    swa_size: int | None = None
    swa_full_size: int | None = None
    max_mamba_cache_size: int | None = None
    conv_state_bytes: float | None = None
    ssm_state_bytes: float | None = None
    memory_pool_end_avail_bytes: float | None = None
    init_distributed_mem_usage_bytes: float | None = None
    max_total_num_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int | None = None
    max_running_requests: int | None = None
    context_len: int | None = None
    available_gpu_mem_bytes: float | None = None
    not_enough_memory: bool = False
    mem_fraction_static: float | None = None
    tp_size: int | None = None
    page_size: int | None = None
    max_total_tokens: int | None = None
    context_length: int | None = None
    kv_cache_dtype: str | None = None
    max_running_requests_arg: int | None = None
    kv_line_format: KvLine | None = None
    recognised: tuple[RecognisedLine, ...] = ()
    ignored: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    truncated: bool = False
    half_step: dict[str, float] = field(default_factory=dict)

    @property
    def tokens(self) -> int | None:
        """The pool's tokens, from the scheduler line or the (full) allocation line."""
        if self.max_total_num_tokens is not None:
            return self.max_total_num_tokens
        if self.swa_full_size is not None:
            return self.swa_full_size
        return self.kv_tokens


def parse_sglang_log(text: str | bytes) -> SglangLog:
    """Read an SGLang start-up log: every number it prints about memory and its pool, and the flags it shows.

    Matches SGLang's own message formats (model_runner.py, memory_pool.py, scheduler.py, 0.3.6–0.5.23)
    anywhere in a line, so the "[2025-01-01 10:00:00 TP0]" prefixes and colour codes do not matter. "GB"
    values become bytes (× 2**30). The first value of a field wins; a field printed again with another
    value is listed in ``conflicts`` (TP ranks differ in their free memory). Except the free memory
    around the weights ("Load weight begin/end. … avail mem"): printed by several TP ranks, the smallest
    rank's first value is kept, because SGLang sizes every rank's pool from the minimum over the ranks
    (model_runner.py ``init_torch_distributed`` and ``profile_max_num_token`` call
    ``get_available_gpu_memory(…, distributed=True)``, an all-reduce MIN; read in 0.4.3–0.5.23).
    Never raises.

    >>> log = parse_sglang_log("[TP0] KV Cache is allocated. #tokens: 10000, KV size: 0.65 GB")
    >>> log.kv_tokens, round(log.kv_size_bytes / 2**30, 2), log.kv_line_format
    (10000, 0.65, 'tokens')
    """
    try:
        return _parse(text)
    except Exception:  # a last guard: the page must show something for any paste
        return SglangLog()


def _parse(text: str | bytes) -> SglangLog:
    reading = read_patterns(text, _PATTERNS)
    values = dict(reading.values)
    chunk = values.get("chunked_prefill_size")
    if chunk is not None and not (isinstance(chunk, int) or _SAFE_INT.match(str(chunk))):
        values.pop("chunked_prefill_size")
    for name, regex in _RANK_AVAIL.items():
        smallest = _smallest_rank_value(regex, reading.joined)
        if smallest is not None:
            values[name] = smallest
    kv_lines: list[tuple[int | None, float, float | None]] = []
    kv_format: KvLine | None = None
    for match in re.finditer(
        rf"KV Cache is allocated\. (dtype: [a-z0-9_.]+, )?(?:#tokens: {_I}, )?"
        rf"(?:K size: {_N} GB, V size: {_N} GB|KV size: {_N} GB)",
        reading.joined,
    ):
        tokens = int(match.group(2)) if match.group(2) else None
        entry: tuple[int | None, float, float | None]
        if match.group(3) is not None:
            entry = (tokens, float(match.group(3).replace(",", "")) * GiB, float(match.group(4).replace(",", "")) * GiB)
        else:
            entry = (tokens, float(match.group(5).replace(",", "")) * GiB, None)
        if entry not in kv_lines:
            kv_lines.append(entry)
        if kv_format is None:
            kv_format = "dtype" if match.group(1) else "tokens" if match.group(2) else "sizes"
    return SglangLog(
        **values,  # type: ignore[arg-type]
        kv_lines=tuple(kv_lines),
        kv_line_format=kv_format,
        recognised=reading.recognised,
        ignored=reading.ignored,
        conflicts=reading.conflicts,
        truncated=reading.truncated,
        half_step=dict(reading.half_step),
    )


# --------------------------------------------------------------------------------------------------
# Reconciling a log with kvcore
# --------------------------------------------------------------------------------------------------

_DTYPE_BYTES = {
    "torch.bfloat16": 2.0,
    "torch.float16": 2.0,
    "torch.float8_e5m2": 1.0,
    "torch.float8_e4m3fn": 1.0,
    "torch.float8_e4m3fnuz": 1.0,
    "torch.uint8": 1.0,
}


def reconcile_sglang(
    log: SglangLog,
    model: ModelSpec,
    *,
    tp: int | None = None,
    page_size: int | None = None,
    kv_cache_dtype: str | None = None,
    mem_fraction_static: float | None = None,
    max_total_tokens: int | None = None,
    context_length: int | None = None,
    max_running_requests: int | None = None,
    release: str | None = None,
) -> tuple[Check, ...]:
    """Every number of an SGLang log recomputed from the model and the settings, each a :class:`Check`.

    Settings come from the log where it prints them (server_args, command-line flags, the KV line's
    dtype), else from the arguments. The rows of a K/V buffer follow the log's line format ("#tokens"
    lines: tokens + page_size, the older "K size" line: tokens + 1) unless `release` is given.

    * ``k_size_bytes`` / ``v_size_bytes`` / ``kv_size_bytes``: (tokens + page) · layers · per-token values ·
      b, from the line's own #tokens (or the scheduler's) — inputs: the logged tokens;
    * ``max_total_num_tokens``: ⌊(post − pre · (1 − f)) / cell⌋ capped and floored — inputs: the logged
      "avail mem" after the weights and before them ("Load weight begin", or after + "mem usage"), whose
      printed rounding (± 0.005 GB each) gives the range; cannot_check without them or without f;
    * ``max_running_requests``: min(tokens // 2, min(max(⌊tokens / context_len · 512⌋, 2048), 4096) (+ 1
      to 0.4.6)); ``context_len``: --context-length or the model's max_position_embeddings;
      ``max_prefill_tokens``: 16384;
    * ``memory_pool_end_avail_bytes`` / ``available_gpu_mem_bytes``: cannot_check (SGLang allocates other
      buffers between the lines; kvcore only estimates them).
    """
    checks_out: list[Check] = []
    try:
        checks_out.extend(
            _reconcile(
                log,
                model,
                tp,
                page_size,
                kv_cache_dtype,
                mem_fraction_static,
                max_total_tokens,
                context_length,
                max_running_requests,
                release,
            )
        )
    except KvError as error:
        checks_out.append(cannot_check("settings", "", str(error), None))
    return tuple(checks_out)


def _reconcile(
    log: SglangLog,
    model: ModelSpec,
    tp_arg: int | None,
    page_arg: int | None,
    dtype_arg: str | None,
    fraction_arg: float | None,
    cap_arg: int | None,
    context_arg: int | None,
    running_arg: int | None,
    release: str | None,
) -> list[Check]:
    out: list[Check] = []
    tp = log.tp_size or tp_arg or 1
    page = log.page_size or page_arg or 1
    if log.kv_dtype is not None:
        b = _DTYPE_BYTES.get(log.kv_dtype, 2.0)
    else:
        b, _ = _kv_dtype(log.kv_cache_dtype or dtype_arg or "auto")
    if release is not None:
        rules = sglang_release_rules(release)
        rows_page = rules.pad_rows_page
        pool_extra = rules.req_pool_extra
    else:
        rows_page = log.kv_line_format != "sizes"
        pool_extra = 1 if log.available_gpu_mem_bytes is None and log.max_total_num_tokens is not None else 0
    layers, full_layers, swa_layers = _pool_layers(model)
    swa = log.swa_size is not None
    step = log.half_step

    # The allocation lines: K and V (or the MLA latent) from the tokens they print.
    for index, (line_tokens, first, second) in enumerate(log.kv_lines):
        tokens = line_tokens if line_tokens is not None else log.max_total_num_tokens
        suffix = "" if index == 0 else f"[{index}]"
        kind_k = "k_size_bytes" if second is not None else "kv_size_bytes"
        if tokens is None:
            out.append(cannot_check(kind_k + suffix, "bytes", "the log prints no #tokens for this pool", first))
            continue
        pool_layers = layers
        extra = page if rows_page else 1
        if swa:
            pool_layers = swa_layers if tokens == log.swa_size and index == 0 else full_layers
            extra = 1
        k, v = _kv_sizes(model, tokens, pool_layers, rows_extra=extra, tp=tp, b=b)
        half = 0.005 * GiB
        out.append(verdict(kind_k + suffix, "bytes", first, k, step.get(kind_k, half)))
        if second is not None:
            out.append(verdict("v_size_bytes" + suffix, "bytes", second, v, step.get("v_size_bytes", half)))

    # The pool's tokens from the free memory the log printed.
    logged_tokens = log.tokens
    fraction = log.mem_fraction_static if log.mem_fraction_static is not None else fraction_arg
    cap = log.max_total_tokens if log.max_total_tokens is not None else cap_arg
    post = log.load_end_avail_bytes
    if logged_tokens is not None:
        if model.count("linear"):
            out.append(
                cannot_check(
                    "max_total_num_tokens",
                    "tokens",
                    "the mamba state pool's slot size is approximated, so the token count is not exact",
                    logged_tokens,
                )
            )
        elif post is None:
            out.append(
                cannot_check(
                    "max_total_num_tokens",
                    "tokens",
                    "the log does not print the free memory after the weights (Load weight end)",
                    logged_tokens,
                )
            )
        elif fraction is None:
            out.append(
                cannot_check(
                    "max_total_num_tokens", "tokens", "mem_fraction_static is not in the log: give it", logged_tokens
                )
            )
        elif log.load_begin_avail_bytes is None and log.weights_mem_usage_bytes is None:
            out.append(
                cannot_check(
                    "max_total_num_tokens",
                    "tokens",
                    "the log does not print the free memory before the weights (Load weight begin or mem usage)",
                    logged_tokens,
                )
            )
        else:
            cell = sglang_cell_bytes(model, tp=tp, bytes_per_value=b)
            h_post = step.get("load_end_avail_bytes", 0.0)
            if log.load_begin_avail_bytes is not None:
                pre, h_pre = log.load_begin_avail_bytes, step.get("load_begin_avail_bytes", 0.0)
                rest = post - pre * (1 - fraction)
                spread = h_post + h_pre * (1 - fraction)
            else:
                usage = log.weights_mem_usage_bytes or 0.0
                h_use = step.get("weights_mem_usage_bytes", 0.0)
                rest = post * fraction - usage * (1 - fraction)
                spread = h_post * fraction + h_use * (1 - fraction)

            def pool(rest_bytes: float) -> int:
                tokens = int(rest_bytes // cell)
                if cap is not None:
                    tokens = min(tokens, int(cap))
                tokens = tokens // page * page
                if swa and tokens > 0:
                    tokens = int(tokens * model.num_hidden_layers / (0.8 * swa_layers + full_layers))
                return tokens

            low, high = pool(rest - spread), pool(rest + spread)
            out.append(
                verdict("max_total_num_tokens", "tokens", float(logged_tokens), (low + high) / 2, (high - low) / 2)
            )

    # The scheduler line.
    if log.max_running_requests is not None:
        running = log.max_running_requests_arg or running_arg
        if logged_tokens is None or log.context_len is None:
            out.append(
                cannot_check(
                    "max_running_requests",
                    "requests",
                    "needs the pool's tokens and context_len from the log",
                    log.max_running_requests,
                )
            )
        elif model.count("linear"):
            out.append(
                cannot_check(
                    "max_running_requests",
                    "requests",
                    "a hybrid model's request slots follow its mamba pool, approximated",
                    log.max_running_requests,
                )
            )
        else:
            slots = running if running is not None else _max_num_reqs(logged_tokens, log.context_len)
            cap_running = logged_tokens // 2 if running is None else running
            expected = min(cap_running, slots + pool_extra)
            out.append(verdict("max_running_requests", "requests", float(log.max_running_requests), float(expected)))
    if log.context_len is not None:
        expected_context = log.context_length or context_arg or model.max_position_embeddings
        if expected_context:
            out.append(verdict("context_len", "tokens", float(log.context_len), float(expected_context)))
    if log.max_prefill_tokens is not None:
        out.append(verdict("max_prefill_tokens", "tokens", float(log.max_prefill_tokens), float(MAX_PREFILL_TOKENS)))
    for name in ("memory_pool_end_avail_bytes", "available_gpu_mem_bytes"):
        value = getattr(log, name)
        if value is not None:
            out.append(
                cannot_check(
                    name,
                    "bytes",
                    "SGLang allocates other buffers (request pool, attention workspace, CUDA graphs) "
                    "between these lines; kvcore estimates them only",
                    value,
                )
            )
    if log.not_enough_memory and logged_tokens is None:
        out.append(cannot_check("not_enough_memory", "tokens", "SGLang refused: the pool holds no token", None))
    return out
