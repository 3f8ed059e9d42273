"""What one GPU must hold: the weights, the KV cache beside them, and when the cache catches up.

The budget that leaves the KV pool is :mod:`kvcore.budget`; what the pool holds is
:mod:`kvcore.capacity`. This module is the demand side: weights + cache + overhead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .dtypes import BYTES_PER_VALUE, dtype_name, grouped_bytes_per_value
from .errors import KvError
from .kv import (
    context_tokens_at_kv_bytes,
    kv_cache_bytes,
    mha_equivalent_bytes_per_token,
    sequence_kv_bytes,
)
from .model import ModelSpec

__all__ = [
    "CHECKPOINT_FORMATS",
    "CheckpointWeights",
    "MemoryBreakdown",
    "break_even_context_tokens",
    "break_even_users",
    "checkpoint_format",
    "checkpoint_weights",
    "mha_cache_bytes",
    "model_weights_bytes",
    "routed_expert_params",
    "tensor_parallel_to_fit",
    "total_memory_bytes",
    "weights_bytes",
]

ArrayLike = Any


def weights_bytes(params: float, *, bytes_per_param: float = 2.0) -> float:
    """Bytes of the weights: parameters · bytes per parameter.

    For MoE models pass the TOTAL parameters: every expert must be resident,
    even though each token uses only a few. 70 B params in FP16 = 140 GB (seed 004).
    """
    checks.positive("parameters", params)
    checks.positive("bytes per parameter", bytes_per_param)
    return float(params) * bytes_per_param


def model_weights_bytes(model: ModelSpec, *, bytes_per_param: float = 2.0, tp: int = 1) -> float:
    """Weights of `model` on one of `tp` GPUs: total_params · b / tp."""
    if model.total_params is None:
        raise KvError("params_unknown", f"the parameter count of {model.name!r} is unknown", model=model.name)
    return weights_bytes(model.total_params, bytes_per_param=bytes_per_param) / checks.whole("tp", tp)


#: Bytes per parameter of the quantised part of a checkpoint, by format, and which part is quantised.
#: int4 is GPTQ/AWQ's layout: 4-bit values, an FP16 scale and a 4-bit zero point per group of 128
#: (0.5 + 2.5/128 bytes; AutoAWQ / GPTQ ``group_size=128``); int8 and fp8 (W8A8) keep one scale per
#: output channel or 128×128 block, under 0.1 %, counted as 1 byte. mxfp4 is gpt-oss's: only the
#: routed experts are MXFP4 (4.25 bits), attention, router and embeddings stay BF16 (the model card).
CHECKPOINT_FORMATS: dict[str, tuple[float, str]] = {
    "bf16": (2.0, "all"),
    "fp16": (2.0, "all"),
    "fp32": (4.0, "all"),
    "fp8": (1.0, "linear"),
    "int8": (1.0, "linear"),
    "int4": (grouped_bytes_per_value(4, group_size=128, scale_bytes=2.0, zero_point_bytes=0.5), "linear"),
    "mxfp4": (4.25 / 8, "experts"),
    "nf4": (BYTES_PER_VALUE["nf4"], "linear"),
}
#: How checkpoints name their format (data/vllm_logs headers, model cards) → a key of ``CHECKPOINT_FORMATS``.
CHECKPOINT_ALIASES = {
    "awq": "int4",
    "awq-int4": "int4",
    "gptq": "int4",
    "gptq-int4": "int4",
    "w4a16": "int4",
    "w8a8": "int8",
    "w8a8-int8": "int8",
    "w8a8-fp8": "fp8",
    "bnb-4bit": "nf4",
    "bitsandbytes": "nf4",
}
#: Bytes per parameter of what a quantised checkpoint keeps in 16 bits (embeddings, LM head, and the
#: non-expert layers of an experts-only format).
UNQUANTISED_BYTES = 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointWeights:
    """A checkpoint's weights on one GPU by component [bytes]; the parts sum to ``total_bytes``."""

    embeddings_bytes: float
    body_bytes: float
    experts_bytes: float
    weights_dtype: str

    @property
    def total_bytes(self) -> float:
        """embeddings (and LM head) + dense body + routed experts."""
        return self.embeddings_bytes + self.body_bytes + self.experts_bytes


def routed_expert_params(model: ModelSpec) -> float:
    """Parameters of the routed experts, all MoE layers: (N_total − N_active) · E / (E − k) [count].

    E experts, k chosen per token: the total less the active parameters are the E − k experts a
    token skips, so one expert (summed over the layers) is (N_total − N_active) / (E − k). 0 for a
    dense model or one whose counts are unknown. Mixtral 8x7B: (46.7 − 12.9) · 8 / 6 = 45.07 B.
    """
    experts, chosen = model.num_experts, model.num_experts_per_tok
    total = model.total_params
    active = model.active_params if model.active_params is not None else total
    if total is None or active is None or not experts > chosen > 0 or total <= active:
        return 0.0
    return (float(total) - float(active)) * experts / (experts - chosen)


def checkpoint_format(name: str) -> str:
    """A checkpoint's format as ``CHECKPOINT_FORMATS`` keys it: "awq-int4" → "int4", "bfloat16" → "bf16".

    KvError ``unknown_checkpoint_format`` for a format this module cannot size.

    >>> checkpoint_format("GPTQ-Int4"), checkpoint_format("bnb-4bit")
    ('int4', 'nf4')
    """
    key = str(name).strip().lower()
    key = CHECKPOINT_ALIASES.get(key, key)
    if key not in CHECKPOINT_FORMATS:
        key = dtype_name(key) if key in BYTES_PER_VALUE or key in ("bfloat16", "float16", "half", "float32") else key
    if key not in CHECKPOINT_FORMATS:
        known = ", ".join([*CHECKPOINT_FORMATS, *CHECKPOINT_ALIASES])
        raise KvError(
            "unknown_checkpoint_format",
            f"unknown weights format {name!r}: use one of {known}",
            value=str(name),
            known=known,
        )
    return key


def checkpoint_weights(
    model: ModelSpec, *, weights_dtype: str | None = None, tp: int = 1, pp: int = 1
) -> CheckpointWeights:
    """Weights one GPU holds, counted by component, as a quantised checkpoint stores them [bytes].

    Parameters split into: the embedding table and the LM head, V · h each (one table when
    ``tie_word_embeddings``), always 16-bit (GPTQ, AWQ, compressed-tensors W8A8/FP8 and
    MXFP4 checkpoints all leave them unquantised); the routed experts,
    (N_total − N_active) · E / (E − k) for E experts and k per token; and the rest (attention,
    dense MLPs, shared experts, router, norms); with the expert width known, at most
    L · E · 3 · h · I_e. The format (``CHECKPOINT_FORMATS``) sets the
    bytes per parameter of the linear layers (int4, int8, fp8: body and experts) or only of
    the experts (mxfp4). Each GPU holds 1 / (tp · pp) of every part: vLLM shards the vocabulary
    (``VocabParallelEmbedding``, ``ParallelLMHead``) and every linear layer over tp, and
    spreads the layers over pp (the per-rank replicas of norms and routers are below 0.1 %).
    Without vocab_size (a model given by its numbers) every parameter takes the format's bytes.

    >>> from kvcore.data import load_models
    >>> models = load_models()
    >>> round(checkpoint_weights(models["llama-3.1-8b"]).total_bytes / 2**30, 2)
    14.96
    >>> w = checkpoint_weights(models["llama-3.1-8b"], weights_dtype="int4")
    >>> round(w.embeddings_bytes / 2**30, 2), round(w.total_bytes / 2**30, 2)
    (1.96, 5.33)
    """
    if model.total_params is None:
        raise KvError("params_unknown", f"the parameter count of {model.name!r} is unknown", model=model.name)
    fmt = checkpoint_format(weights_dtype or model.weights_dtype or "bf16")
    share = checks.whole("tensor parallel size", tp) * checks.whole("pipeline parallel size", pp)
    quantised, which = CHECKPOINT_FORMATS[fmt]
    unquantised = quantised if which == "all" else UNQUANTISED_BYTES
    total = float(model.total_params)
    tables = 0.0
    if model.vocab_size and model.hidden_size:
        tables = float(model.vocab_size * model.hidden_size * (1 if model.tie_word_embeddings else 2))
    experts = routed_expert_params(model)
    if experts and model.moe_intermediate_size and model.hidden_size:
        # A gated expert is 3 · h · I_e; all layers MoE is the most there can be. The smaller of the
        # two counts wins: model cards that leave the embedding out of "active" (gpt-oss) inflate the
        # first, models with dense first layers (DeepSeek) the second.
        widths = 3.0 * model.hidden_size * model.moe_intermediate_size * model.num_experts
        experts = min(experts, model.num_hidden_layers * widths)
    body = max(total - tables - experts, 0.0)
    body_bytes = body * (quantised if which in ("all", "linear") else unquantised)
    experts_bytes = experts * (quantised if which in ("all", "linear", "experts") else unquantised)
    table_bytes = tables * (quantised if which == "all" else UNQUANTISED_BYTES)
    if not tables and which != "all":
        body_bytes = body * quantised
    return CheckpointWeights(
        embeddings_bytes=table_bytes / share,
        body_bytes=body_bytes / share,
        experts_bytes=experts_bytes / share,
        weights_dtype=fmt,
    )


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """What one GPU holds; the parts sum to ``total_bytes`` (feeds a stacked bar)."""

    weights_bytes: float
    kv_cache_bytes: float
    overhead_bytes: float

    @property
    def total_bytes(self) -> float:
        """weights + KV cache + overhead."""
        return self.weights_bytes + self.kv_cache_bytes + self.overhead_bytes

    def fits(self, memory_bytes: float, utilization: float = 1.0) -> bool:
        """True if the total fits in memory_bytes · utilization."""
        return self.total_bytes <= memory_bytes * utilization


def total_memory_bytes(
    model: ModelSpec,
    *,
    context_tokens: ArrayLike,
    concurrency: ArrayLike = 1,
    kv_bytes_per_value: float = 2.0,
    weights_bytes_per_param: float = 2.0,
    overhead_bytes: float = 0.0,
    tp: int = 1,
) -> np.ndarray:
    """What one GPU must hold: weights + KV cache(s, B) + overhead, in bytes; with `tp`, one of tp GPUs.

    Formula: total_params · b_w / tp + B · sequence_kv_bytes(s, tp) + overhead (seed 000's
    sizing rule read the other way round). Under tensor parallelism every GPU holds 1/tp of
    the weights (``model_weights_bytes``), the cache of its own KV heads (max(n_kv // tp, 1):
    a head is replicated once tp exceeds the KV heads, and MLA's one latent is kept whole on
    every rank, ``kv.layer_values_per_token``), 1/tp of a linear layer's state, and its own
    overhead (the overhead is per GPU, never divided). Context and concurrency broadcast, so
    ``context[None, :]`` and ``users[:, None]`` give a users × context grid.

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128, total_params=8e9)
    >>> float(total_memory_bytes(m, context_tokens=131072, overhead_bytes=2**30)) / 2**30 - 16 - 1 == 16e9 / 2**30
    True
    >>> whole, half = (float(total_memory_bytes(m, context_tokens=131072, tp=tp)) for tp in (1, 2))
    >>> half * 2 == whole
    True
    """
    checks.positive("overhead", overhead_bytes, allow_zero=True)
    weights = model_weights_bytes(model, bytes_per_param=weights_bytes_per_param, tp=tp)
    cache = kv_cache_bytes(
        model, context_tokens=context_tokens, concurrency=concurrency, bytes_per_value=kv_bytes_per_value, tp=tp
    )
    return weights + cache + overhead_bytes


def tensor_parallel_to_fit(
    model: ModelSpec,
    *,
    sizes: Sequence[int],
    memory_bytes: float,
    context_tokens: float,
    concurrency: float = 1,
    kv_bytes_per_value: float = 2.0,
    weights_bytes_per_param: float = 2.0,
    overhead_bytes: float = 0.0,
) -> int | None:
    """The fewest GPUs among `sizes` (tensor-parallel sizes) on which each GPU's share fits: min tp with total(tp) ≤ M.

    total(tp) is ``total_memory_bytes(..., tp=tp)``: weights / tp + this GPU's KV cache + its own overhead,
    against one GPU's `memory_bytes` (the whole card, as ``total_memory_bytes`` counts it). None when no size
    fits. `sizes` are the splits the model accepts (``timing.tensor_parallel_sizes``: tp divides the query
    heads, and divides the KV heads or is a multiple of them). Unlike ``capacity.gpus_needed`` (bytes over
    cards, a floor), this counts what tensor parallelism replicates: each GPU's overhead, and a KV head or an
    MLA latent that cannot be split. Seed 002's Llama 3.1 70B in FP16 at 128k with 1 GiB of overhead on
    80 GiB H100s: 131.4 / 2 + 20 + 1 = 86.7 GiB does not fit on 2, 32.9 + 10 + 1 = 43.9 GiB does on 4.

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128, total_params=8e9)
    >>> tensor_parallel_to_fit(m, sizes=[1, 2, 4, 8], memory_bytes=20 * 2**30, context_tokens=131072)
    2
    """
    checks.positive("GPU memory", memory_bytes)
    for tp in sorted(sizes):
        total = total_memory_bytes(
            model,
            context_tokens=context_tokens,
            concurrency=concurrency,
            kv_bytes_per_value=kv_bytes_per_value,
            weights_bytes_per_param=weights_bytes_per_param,
            overhead_bytes=overhead_bytes,
            tp=tp,
        )
        if float(total) <= memory_bytes:
            return tp
    return None


def break_even_context_tokens(
    model: ModelSpec,
    *,
    weights_bytes: float,
    concurrency: ArrayLike = 1,
    bytes_per_value: float = 2.0,
    state_bytes_per_value: float = 2.0,
) -> np.ndarray:
    """Context per user at which the KV cache of `concurrency` users equals the weights (inf: never).

    This is seed 002's opening question ("why can a 30 GB model need 60 GB?"): past
    this context the cache alone weighs as much as the model. The cache of one
    sequence is piecewise linear in the context s:

        c + (g + w_rate) · s            while s ≤ window
        c + w_rate · window + g · s     after it

    g: bytes/token of full and MLA layers (they grow forever); w_rate: bytes/token of
    sliding layers (they stop at the window); c: the constant state of linear layers.
    Solving B · cache(s) = weights gives s in tokens (0 if the state alone is already
    as big; inf if only sliding and linear layers hold tokens and they stop short):
    ``kvcore.kv.context_tokens_at_kv_bytes``, the solver ``timing.crossover_context_tokens`` shares.
    For a model whose layers all attend to everything: weights / (B · bytes per token).

    >>> from kvcore.model import uniform_model
    >>> m = uniform_model(num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
    >>> float(break_even_context_tokens(m, weights_bytes=16 * 2**30))
    131072.0
    """
    checks.positive("weights", weights_bytes)
    checks.positive("concurrency", concurrency)
    checks.positive("bytes per value", bytes_per_value)
    return context_tokens_at_kv_bytes(
        model,
        kv_bytes=weights_bytes,
        batch=concurrency,
        bytes_per_value=bytes_per_value,
        state_bytes_per_value=state_bytes_per_value,
    )


def break_even_users(
    model: ModelSpec, *, weights_bytes: float, context_tokens: ArrayLike, bytes_per_value: float = 2.0
) -> np.ndarray:
    """Fewest users at `context_tokens` each whose KV cache reaches the weights: ceil(weights / sequence bytes).

    Useful where one user never gets there (a context cap, a sliding window).
    Qwen2.5-32B in INT8 (32.5 GB of weights) at 32,768 tokens, 8 GiB each: 4 users.
    """
    checks.positive("weights", weights_bytes)
    sequence = sequence_kv_bytes(model, context_tokens=context_tokens, bytes_per_value=bytes_per_value)
    checks.positive("KV cache of one sequence", sequence)
    return np.ceil(weights_bytes / sequence)


def mha_cache_bytes(
    model: ModelSpec, *, context_tokens: ArrayLike, concurrency: ArrayLike = 1, bytes_per_value: float = 2.0
) -> np.ndarray:
    """The cache if every query head kept its own K and V in every layer (classic MHA).

    Formula: 2 · L · n_heads · d_head · s · B · b. Seed 002's memory table uses this
    ("2 × layers × seq_len × d_model × bytes", d_model = n_heads · d_head) for Llama 3,
    whose GQA cache is 4× (8B) or 8× (70B) smaller. 2·32·4096·4096·2 = 2 GiB at 4k for 8B.
    """
    checks.positive("context tokens", context_tokens, allow_zero=True)
    checks.positive("concurrency", concurrency, allow_zero=True)
    per_token = mha_equivalent_bytes_per_token(model, bytes_per_value=bytes_per_value)
    return per_token * np.asarray(context_tokens, dtype=float) * np.asarray(concurrency, dtype=float)
