"""vLLM's view of the memory budget, and its start-up log, per GPU, given the terms.

The terms as each release estimates them from the GPU alone are :mod:`kvcore.vllm_startup`;
this module is the arithmetic after them, for one kind of layer.

vLLM V1 (vllm/v1/worker/gpu_worker.py ``determine_available_memory``) loads the
weights, runs one profiling forward pass of ``max_num_batched_tokens`` tokens, and
keeps for the KV cache what is left of ``total · gpu_memory_utilization``
(one :class:`kvcore.budget.MemoryBudget` with vLLM's terms, ``vllm_budget``):

    pool = M · u − W − A − N − G

M the GPU's memory, u gpu_memory_utilization, W the weights on this GPU, A the
activation peak of the profiling run, N non-torch memory (CUDA context, NCCL
buffers) and G the CUDA graphs (captured after profiling; recent vLLM subtracts
their estimate too). vllm/v1/core/kv_cache_utils.py then cuts the pool into
blocks and prints "GPU KV cache size: N tokens" and "Maximum concurrency for L
tokens per request: X×" (see :mod:`kvcore.capacity`).

Parallelism, as this module models it (every figure is per GPU):

* tensor parallelism (tp): each rank holds its share of the KV heads,
  max(n_kv // tp, 1), so heads are replicated when tp exceeds them; an MLA latent
  is replicated on every rank (both handled by ``kv_bytes_per_token(tp=...)``);
  weights are split tp ways.
* pipeline parallelism (pp): the layers are cut into stages as vLLM's
  ``get_pp_indices`` cuts them (:func:`pp_partition`); every stage keeps its own pool and
  every stage must hold every token of a sequence, so the stage with the fewest blocks sets
  the token count (``unify_kv_cache_configs``). Alone, this module takes the fullest stage
  (ceil(L / pp) layers, 1/pp of the weights); :func:`kvcore.vllm_startup.vllm_startup`
  budgets each stage apart (embeddings on the first, LM head and sampler on the last).
* context parallelism (cp): each rank holds 1/cp of every sequence's tokens, so a
  request of L tokens needs ceil(L / cp) tokens on a rank, and the server's token
  count is cp times one rank's (vLLM multiplies the logged size by the DCP/PCP
  world size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .budget import (
    ACTIVATION_PEAK,
    CUDA_GRAPHS,
    NON_TORCH,
    WEIGHTS,
    BudgetFields,
    BudgetTerm,
    MemoryBudget,
    kv_pool_bytes,
    memory_budget,
)
from .capacity import DEFAULT_BLOCK_SIZE, DEFAULT_MAX_NUM_BATCHED_TOKENS, pool_report, request_blocks_needed
from .errors import KvError
from .kv import kv_bytes_per_token
from .model import ModelSpec

__all__ = [
    "PoolLog",
    "activation_peak_bytes",
    "hidden_values",
    "pool_curve",
    "pool_log",
    "pool_log_for",
    "pool_tokens_curve",
    "pp_partition",
    "stage_bytes_per_token",
    "stage_layers",
    "startup_log_lines",
    "vllm_budget",
]

ArrayLike = Any

#: Activation bytes held at the profiling run's peak, per token, in units of hidden_size · bytes.
#: An estimate, not a vLLM constant: inside one decoder layer the residual stream and its
#: normed copy (2·h) live next to the MLP's gate, up and activated outputs (3·I), and
#: I ≈ 3.5·h in Llama-style models (Llama 3.1 8B: 14,336 / 4,096), so 2 + 3 · 3.5 ≈ 12.
ACTIVATION_FACTOR = 12.0


def hidden_values(model: ModelSpec) -> int:
    """The model's hidden size h (config.json ``hidden_size``), or heads · head_dim when it is missing."""
    return model.hidden_size or model.num_attention_heads * model.head_dim


def activation_peak_bytes(
    model: ModelSpec, *, max_num_batched_tokens: ArrayLike, bytes_per_value: float = 2.0
) -> np.ndarray:
    """Estimated activation peak of vLLM's profiling run: A ≈ T · h · b · 12 (bytes, per GPU).

    T = max_num_batched_tokens (the profile run's batch), h = hidden size, b = bytes per
    activation value, 12 = ``ACTIVATION_FACTOR``. An estimate: vLLM measures this peak
    (vllm/v1/worker/gpu_worker.py ``determine_available_memory``, "torch peak memory
    increase"); this formula only shows that it grows linearly with T. Not divided
    by tp (the residual stream is replicated on every rank).

    >>> from kvcore.model import uniform_model
    >>> round(float(activation_peak_bytes(uniform_model(num_hidden_layers=1, num_key_value_heads=1,
    ...     head_dim=64, num_attention_heads=64), max_num_batched_tokens=1024)) / 2**20)
    96
    """
    tokens = np.asarray(checks.positive("max_num_batched_tokens", max_num_batched_tokens), dtype=float)
    checks.positive("bytes per value", bytes_per_value)
    return tokens * hidden_values(model) * bytes_per_value * ACTIVATION_FACTOR


def vllm_budget(
    model: ModelSpec,
    *,
    memory_bytes: float,
    utilization: float,
    weights_bytes: float,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    non_torch_bytes: float = 0.0,
    cuda_graph_bytes: float = 0.0,
    activation_bytes_per_value: float = 2.0,
) -> MemoryBudget:
    """vLLM V1's view of one GPU's budget: M · u − W − A − N − G (``kvcore.budget.MemoryBudget``).

    `weights_bytes` is this GPU's share; A is ``activation_peak_bytes`` of the profiling run
    over `max_num_batched_tokens`; N and G as given (vllm/v1/worker/gpu_worker.py
    ``determine_available_memory``). A version-specific estimate of a term replaces it
    with ``MemoryBudget.with_term``.
    """
    activation = float(
        activation_peak_bytes(
            model, max_num_batched_tokens=max_num_batched_tokens, bytes_per_value=activation_bytes_per_value
        )
    )
    return memory_budget(
        memory_bytes=memory_bytes,
        utilization=utilization,
        terms=[
            BudgetTerm(name=WEIGHTS, bytes=float(weights_bytes), source="parameters · bytes per parameter / (tp · pp)"),
            BudgetTerm(
                name=ACTIVATION_PEAK,
                bytes=activation,
                source="estimate: max_num_batched_tokens · hidden_size · bytes · 12 (profile run)",
            ),
            BudgetTerm(name=NON_TORCH, bytes=float(non_torch_bytes), source="CUDA context, NCCL buffers (as given)"),
            BudgetTerm(name=CUDA_GRAPHS, bytes=float(cuda_graph_bytes), source="captured CUDA graphs (as given)"),
        ],
    )


def pp_partition(num_layers: int, pp: int = 1, *, remainder_on_last: bool = False) -> tuple[int, ...]:
    """Layers on each pipeline stage, first to last, as vLLM cuts them.

    vllm/distributed/utils.py ``get_pp_indices`` (read in the 0.6.4.post1, 0.7.3, 0.8.0, 0.9.2 and
    0.20.0 wheels): ⌊L / pp⌋ layers a stage, and the L mod pp left over go one each to the stages
    before the last, from the second-to-last backwards (0.8.0 on: the last stage holds the final
    norm and the LM head), or all to the last stage (`remainder_on_last`, before 0.8.0). The
    ``VLLM_PP_LAYER_PARTITION`` override is not modelled. KvError ``pp_exceeds_layers`` when a
    stage would be empty.

    >>> pp_partition(27, 2), pp_partition(61, 4), pp_partition(27, 4, remainder_on_last=True)
    ((14, 13), (15, 15, 16, 15), (6, 6, 6, 9))
    """
    layers = checks.whole("number of layers", num_layers)
    stages = checks.whole("pipeline parallel size", pp)
    if stages > layers:
        raise KvError(
            "pp_exceeds_layers",
            f"pipeline parallel size {stages} exceeds the {layers} layers",
            pp=stages,
            layers=layers,
        )
    partition = [layers // stages] * stages
    remaining = layers % stages
    if remainder_on_last:
        partition[-1] += remaining
    else:
        for offset in range(2, remaining + 2):
            partition[-offset] += 1
    return tuple(partition)


def stage_layers(num_layers: int, pp: int = 1) -> int:
    """Layers on the fullest pipeline stage of current vLLM: ceil(L / pp) (max of :func:`pp_partition`).

    >>> stage_layers(61, 4)
    16
    """
    return max(pp_partition(num_layers, pp))


def stage_bytes_per_token(
    model: ModelSpec, *, bytes_per_value: float = 2.0, tp: int = 1, pp: int = 1, layers: int | None = None
) -> float:
    """KV bytes per token on one GPU of a stage: bytes/token(tp) · stage layers / L.

    `layers` is the stage's layer count (default the fullest stage's, :func:`stage_layers`).
    Layers of different kinds (sliding, MLA, linear) are assumed spread evenly over the stages.
    """
    per_token = kv_bytes_per_token(model, bytes_per_value=bytes_per_value, tp=tp)
    held = stage_layers(model.num_hidden_layers, pp) if layers is None else checks.whole("stage layers", layers)
    return per_token * held / model.num_hidden_layers


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolLog(BudgetFields):
    """One GPU's budget and what vLLM logs at start-up.

    ``budget`` is vLLM's view of :class:`kvcore.budget.MemoryBudget`; its parts add up to
    ``memory_bytes``: held_back + weights + activation + non_torch + cuda_graph + kv_pool
    (kv_pool may be negative). Tokens, concurrency and the estimated maximum model length
    are the server's (context parallelism included). The budget's figures (memory, u, each
    term, the pool) read through :class:`kvcore.budget.BudgetFields`.
    """

    budget: MemoryBudget
    bytes_per_token: float
    block_size: int
    num_blocks: int
    tokens: int
    max_model_len: int
    max_concurrency: float
    needed_bytes: float
    fits: bool
    estimated_max_model_len: int
    tp: int
    pp: int
    cp: int

    @property
    def gpus(self) -> int:
        """GPUs in the server: tp · pp · cp."""
        return self.tp * self.pp * self.cp


def pool_log(
    model: ModelSpec,
    *,
    memory_bytes: float,
    utilization: float,
    weights_bytes: float,
    max_model_len: int,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    non_torch_bytes: float = 0.0,
    cuda_graph_bytes: float = 0.0,
    block_size: int = DEFAULT_BLOCK_SIZE,
    bytes_per_value: float = 2.0,
    activation_bytes_per_value: float = 2.0,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
) -> PoolLog:
    """The whole chain for one GPU: budget → pool → blocks → 'GPU KV cache size' → concurrency → fit.

    `weights_bytes` is the whole model's; each GPU holds weights / (tp · pp) (``vllm_budget``).
    The fullest stage's pool is cut into blocks of block_size · stage_bytes_per_token; tokens =
    blocks · block_size · cp; a request of L tokens needs ceil(L / cp) tokens per rank
    (``kvcore.capacity.pool_report``; vLLM ``kv_cache_utils.py``: ``get_num_blocks``,
    ``get_max_concurrency_for_kv_cache_config``, ``check_enough_kv_cache_memory``,
    ``estimate_max_model_len``).
    """
    return pool_log_for(
        model,
        budget=vllm_budget(
            model,
            memory_bytes=memory_bytes,
            utilization=utilization,
            weights_bytes=_per_gpu_weights(weights_bytes, tp=tp, pp=pp),
            max_num_batched_tokens=max_num_batched_tokens,
            non_torch_bytes=non_torch_bytes,
            cuda_graph_bytes=cuda_graph_bytes,
            activation_bytes_per_value=activation_bytes_per_value,
        ),
        max_model_len=max_model_len,
        max_num_batched_tokens=max_num_batched_tokens,
        block_size=block_size,
        bytes_per_value=bytes_per_value,
        tp=tp,
        pp=pp,
        cp=cp,
    )


def pool_log_for(
    model: ModelSpec,
    *,
    budget: MemoryBudget,
    max_model_len: int,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    block_size: int = DEFAULT_BLOCK_SIZE,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    layers: int | None = None,
) -> PoolLog:
    """What vLLM logs for any one-GPU `budget` (seed view or vLLM view): blocks, tokens, concurrency, fit.

    Formulas as in ``pool_log``: blocks = floor(max(pool, 0) / (block_size · stage bytes/token)),
    tokens = blocks · block_size · cp, concurrency = blocks / blocks one ceil(L / cp) request needs.
    `layers`: the layers of the stage this GPU serves (default the fullest stage's).
    """
    tp = checks.whole("tensor parallel size", tp)
    pp = checks.whole("pipeline parallel size", pp)
    cp = checks.whole("context parallel size", cp)
    length = checks.whole("max_model_len", max_model_len)
    block_size = checks.whole("block size", block_size)
    pool = budget.kv_pool_bytes
    per_token = stage_bytes_per_token(model, bytes_per_value=bytes_per_value, tp=tp, pp=pp, layers=layers)
    # kvcore.capacity counts blocks of the whole model's layers: scale the stage's pool up by L / stage layers.
    whole_model_pool = max(pool, 0.0) * kv_bytes_per_token(model, bytes_per_value=bytes_per_value, tp=tp) / per_token
    rank_length = math.ceil(length / cp)
    report = pool_report(
        model,
        kv_pool_bytes=whole_model_pool,
        max_model_len=rank_length,
        block_size=block_size,
        max_num_batched_tokens=max_num_batched_tokens,
        bytes_per_value=bytes_per_value,
        tp=tp,
    )
    need_blocks = float(
        request_blocks_needed(
            model,
            max_model_len=rank_length,
            block_size=block_size,
            max_num_batched_tokens=max_num_batched_tokens,
            tp=tp,
        )
    )
    return PoolLog(
        budget=budget,
        bytes_per_token=per_token,
        block_size=block_size,
        num_blocks=report.num_blocks,
        tokens=report.tokens * cp,
        max_model_len=length,
        max_concurrency=report.max_concurrency,
        needed_bytes=need_blocks * block_size * per_token,
        fits=report.fits and pool > 0,
        estimated_max_model_len=report.estimated_max_model_len * cp,
        tp=tp,
        pp=pp,
        cp=cp,
    )


def pool_curve(log: PoolLog, *, utilization: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Blocks and 'GPU KV cache size' tokens of `log`'s server at each gpu_memory_utilization u.

    The same terms and blocks as `log`, vectorised over u: pool(u) = M · u − Σ terms
    (``kvcore.budget.kv_pool_bytes``; the terms do not depend on u), blocks =
    floor(max(pool, 0) / (block_size · stage bytes/token)), tokens = blocks · block_size · cp.
    At u = log.utilization this is log.num_blocks and log.tokens.
    """
    pool = kv_pool_bytes(memory_bytes=log.memory_bytes, utilization=utilization, overhead_bytes=log.budget.taken_bytes)
    blocks = np.floor(np.maximum(pool, 0.0) / (log.block_size * log.bytes_per_token))
    return blocks, blocks * log.block_size * log.cp


def pool_tokens_curve(
    model: ModelSpec,
    *,
    memory_bytes: float,
    utilization: ArrayLike,
    weights_bytes: float,
    max_model_len: int = 1,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    non_torch_bytes: float = 0.0,
    cuda_graph_bytes: float = 0.0,
    block_size: int = DEFAULT_BLOCK_SIZE,
    bytes_per_value: float = 2.0,
    activation_bytes_per_value: float = 2.0,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Blocks and 'GPU KV cache size' tokens against an array of gpu_memory_utilization values.

    :func:`pool_curve` of :func:`pool_log` (the same keywords; bytes, tokens): pool(u) =
    M · u − Σ terms, blocks = floor(max(pool, 0) / (block_size · stage bytes/token)),
    tokens = blocks · block_size · cp (vLLM ``kv_cache_utils.py``). One chain, vectorised
    over u; the curve does not depend on max_model_len.
    """
    u = np.asarray(utilization, dtype=float)
    log = pool_log(
        model,
        memory_bytes=memory_bytes,
        utilization=float(np.max(u)),
        weights_bytes=weights_bytes,
        max_model_len=max_model_len,
        max_num_batched_tokens=max_num_batched_tokens,
        non_torch_bytes=non_torch_bytes,
        cuda_graph_bytes=cuda_graph_bytes,
        block_size=block_size,
        bytes_per_value=bytes_per_value,
        activation_bytes_per_value=activation_bytes_per_value,
        tp=tp,
        pp=pp,
        cp=cp,
    )
    return pool_curve(log, utilization=u)


def _per_gpu_weights(weights_bytes: float, *, tp: int, pp: int) -> float:
    """The whole model's weights over tp · pp GPUs."""
    tp = checks.whole("tensor parallel size", tp)
    pp = checks.whole("pipeline parallel size", pp)
    return float(checks.positive("weights", weights_bytes, allow_zero=True)) / (tp * pp)


def startup_log_lines(log: PoolLog) -> list[str]:
    """The lines vLLM V1 prints for this pool, formatted exactly as vLLM formats them.

    vllm/v1/worker/gpu_worker.py: "Available KV cache memory: %.2f GiB";
    vllm/v1/core/kv_cache_utils.py: "GPU KV cache size: %s tokens" (f"{n:,}") and
    "Maximum concurrency for %s tokens per request: %.2fx"; when one request does not fit,
    the ValueError of ``check_enough_kv_cache_memory``.
    """
    gib = 2**30
    if not log.has_pool:
        return [
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine."
        ]
    lines = [f"Available KV cache memory: {log.kv_pool_bytes / gib:.2f} GiB"]
    if not log.fits:
        return [
            *lines,
            f"ValueError: To serve at least one request with the models's max seq len ({log.max_model_len}), "
            f"({log.needed_bytes / gib:.2f} GiB KV cache is needed, which is larger than the available KV cache "
            f"memory ({log.kv_pool_bytes / gib:.2f} GiB). Based on the available memory, the estimated maximum "
            f"model length is {log.estimated_max_model_len}. Try increasing `gpu_memory_utilization` or "
            "decreasing `max_model_len` when initializing the engine.",
        ]
    return [
        *lines,
        f"GPU KV cache size: {log.tokens:,} tokens",
        f"Maximum concurrency for {log.max_model_len:,} tokens per request: {log.max_concurrency:.2f}x",
    ]
