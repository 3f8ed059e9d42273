"""vLLM's start-up on one GPU from the GPU, the model and the flags alone, the way the chosen release builds it.

    pool = M · u − W − A − N − G        (per GPU, bytes)

M what torch reports (``GpuSpec.reported_memory_bytes``), u gpu_memory_utilization, W the weights as vLLM
lays them out (:func:`loaded_weights_bytes`), A the release's profiling peak
(:func:`profile_activation_bytes`), N its non-torch term (:func:`estimated_non_torch_bytes`), G the
CUDA graphs when the release subtracts them (:func:`cuda_graph_bytes`). The rules of each release are
:mod:`kvcore.vllm_versions`; the budget is one :class:`kvcore.budget.MemoryBudget`; the blocks follow
:mod:`kvcore.vllm_pool` (one kind of layer) or vLLM's groups (:func:`hybrid_pool_log`).
:func:`vllm_startup` puts it together; :func:`startup_lines` prints it as the release would.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import checks
from .budget import ACTIVATION_PEAK, CUDA_GRAPHS, NON_TORCH, WEIGHTS, BudgetTerm, MemoryBudget, memory_budget
from .capacity import DEFAULT_BLOCK_SIZE, DEFAULT_MAX_NUM_BATCHED_TOKENS, longest_fitting_length
from .dtypes import bytes_per_value
from .errors import KvError
from .hardware import GpuSpec
from .kv import layer_values_per_token
from .memory import checkpoint_weights
from .model import ModelSpec
from .units import GiB
from .vllm_pool import PoolLog, hidden_values, pool_log_for, pp_partition, stage_layers
from .vllm_versions import NEWEST_RELEASE, Entry, VllmRelease, batch_defaults, kv_cache_format, vllm_release

ArrayLike = Any

__all__ = [
    "CUDA_CONTEXT_BYTES",
    "CUDA_GRAPH_BYTES_PER_LAYER",
    "CUDA_GRAPH_REFERENCE_SIZES",
    "FLASHINFER_SAMPLER_BYTES_PER_LOGIT",
    "FUSED_MOE_CHUNK_TOKENS",
    "MXFP4_HIDDEN_ALIGN",
    "MXFP4_INTERMEDIATE_ALIGN",
    "NCCL_BYTES",
    "NCCL_NVSWITCH_BYTES",
    "NON_TORCH_GROWTH_BYTES",
    "NVSWITCH_GPUS",
    "SAMPLER_BYTES_PER_LOGIT",
    "V0_SWAP_SPACE_BYTES",
    "VllmStartup",
    "cuda_graph_bytes",
    "cuda_graph_capture_sizes",
    "estimated_non_torch_bytes",
    "forward_values_per_token",
    "hybrid_block_size",
    "hybrid_pool_log",
    "loaded_weights_bytes",
    "profile_activation_bytes",
    "rotary_cache_bytes",
    "startup_lines",
    "vllm_block_size",
    "vllm_startup",
]

#
# Every term of vLLM's budget estimated the way the chosen release measures it (kvcore.vllm_versions).
# The constants below are measurements: each names the logs it comes from (data/vllm_logs/, whose
# headers give the GPU, model, flags and release); tests/kvcore/test_vllm_startups.py reports the
# estimate's error on every log.

#: Non-torch memory on the whole device at start-up, one GPU (V0 0.6.4.x and early V1 count it): the CUDA
#: context, cuBLAS and the attention library's workspaces. Logs: RTX 3090 0.35 GiB (vLLM #10517),
#: RTX A6000 0.44 GiB (#10360), both "non_torch_memory" of vLLM 0.6.4.post1.
CUDA_CONTEXT_BYTES = 0.40 * GiB
#: Non-torch growth after the baseline snapshot, one GPU (V0 0.6.5+, V1 0.9+): V0 logs print 0.01–0.09 GiB
#: ("non_torch_memory takes …": T4 0.01 and 0.05, A100 0.09, RTX 4060 0.03).
NON_TORCH_GROWTH_BYTES = 0.05 * GiB
#: NCCL and custom all-reduce buffers per GPU when tp · pp > 1 and the release takes its baseline before
#: NCCL starts (V0, V1 before 0.11): 1.3 GiB on NVSwitch machines, where NCCL's NVLink SHARP buffers are
#: large (vLLM 0.10.2 log, 2 × H200: "1.38 GiB for non-torch memory"), 0.15 GiB elsewhere (two vLLM
#: 0.10.1.1 runs, 2 × A100 80GB, pool 0.13 GiB below the one-GPU runs once the activation is halved).
NCCL_BYTES = 0.15 * GiB
NCCL_NVSWITCH_BYTES = 1.3 * GiB
#: GPUs whose multi-GPU servers are NVSwitch systems (HGX/DGX) in data/gpus.csv.
NVSWITCH_GPUS = ("h100-sxm", "h200", "b200")
#: Bytes held per element of the logits while the profiling run samples them: the fp32 logits, a full
#: sort for top-k/top-p (values and int64 indices), the cumulative sum, probabilities and log-probabilities
#: (V0 vllm/model_executor/layers/sampler.py; V1 vllm/v1/sample/sampler.py with the dummy run's
#: top_k = vocab − 1, top_p = 0.9). Measured: 38.4–38.7 B in V0 logs (vLLM #13882, a T4 and an A100
#: run), and the V1 0.10.2 Qwen3-Next log's "5.58 GiB for peak activation" over 1,024 × 151,936 logits.
SAMPLER_BYTES_PER_LOGIT = 38.0
#: The same with FlashInfer's top-k/top-p sampler ("Using FlashInfer for top-p & top-k sampling" in the
#: log), which samples without sorting: 14 B, measured on the five vLLM 0.10.1.1 A100 runs.
FLASHINFER_SAMPLER_BYTES_PER_LOGIT = 14.0
#: Memory of the captured CUDA graphs per decoder layer on one GPU, for vLLM V1's 67 capture sizes (1, 2,
#: 4, 8 … 512): the median of the seven V1 captures in data/vllm_logs/ ("Graph capturing finished in N
#: secs, took X GiB" / "Estimated CUDA graph memory"), which range from 0.015 GiB a layer (Llama 3 70B,
#: 2 × L40S, 0.16.0) to 0.068 (Qwen3 8B, A100, 0.19.1): a rough figure, good to about ± 1 GiB.
CUDA_GRAPH_BYTES_PER_LAYER = 0.049 * GiB
#: The capture sizes that figure was measured at.
CUDA_GRAPH_REFERENCE_SIZES = 67
#: Tokens vLLM's fused MoE kernel processes at once (VLLM_FUSED_MOE_CHUNK_SIZE, 32,768 in fused_moe.py).
FUSED_MOE_CHUNK_TOKENS = 32768


def forward_values_per_token(model: ModelSpec, *, tp: int = 1) -> float:
    """Activation values alive per token at the peak of one decoder layer, on one GPU.

    3·h (the residual, the layer input and its normed copy) plus the largest block's working set:
    a dense gated MLP holds gate_up (2·I / tp) and its activated half (I / tp): 3·I / tp
    (vLLM ``MergedColumnParallelLinear`` + ``SiluAndMul``); a fused MoE layer holds, for each of
    its k experts per token, gate_up and the activated half (3·I_e / tp) and the expert's output
    (h): k · (3·I_e / tp + h) (vllm/model_executor/layers/fused_moe ``intermediate_cache1..3``);
    attention holds q, k, v and its output, (2·H + 2·K) · d / tp. Without MLP widths (a model
    given by its numbers) the MLP is taken as 3.5·h wide, Llama's ratio.
    """
    tp = checks.whole("tensor parallel size", tp)
    hidden = hidden_values(model)
    dense = model.intermediate_size or (0 if model.moe_intermediate_size else round(3.5 * hidden))
    blocks = [3.0 * dense / tp]
    if model.num_experts and model.moe_intermediate_size:
        k = model.num_experts_per_tok
        blocks.append(k * (3.0 * model.moe_intermediate_size / tp + hidden))
    heads, kv_heads = model.num_attention_heads, max(model.num_key_value_heads, 1)
    blocks.append((2.0 * heads + 2.0 * kv_heads) * model.head_dim / tp)
    return 3.0 * hidden + max(blocks)


def profile_activation_bytes(
    model: ModelSpec,
    *,
    release: VllmRelease,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    tp: int = 1,
    bytes_per_value: float = 2.0,
    flashinfer_sampler: bool = False,
    last_stage: bool = True,
) -> float:
    """The activation peak of the release's profiling run, one GPU [bytes]: max(forward, logits + sampler).

    forward = T · :func:`forward_values_per_token` · b over the T = max_num_batched_tokens dummy
    tokens (the MoE part at most ``FUSED_MOE_CHUNK_TOKENS`` at once); after the forward the hidden
    states (T · h · b) stay alive while the logits of R rows × vocabulary are sampled: R =
    min(T, max_num_seqs) rows at ``SAMPLER_BYTES_PER_LOGIT`` (``FLASHINFER_SAMPLER_BYTES_PER_LOGIT`` with
    FlashInfer's sampler, V1 only)
    (V0 ``ModelRunner.profile_run``; V1 ``_dummy_sampler_run`` from 0.8.0), or logits alone in the
    model dtype before V1 sampled (all T rows until 0.7.2, R rows in 0.7.3; none in 0.6.4's V1).
    The logits are gathered whole on every tensor-parallel rank; the MLP and attention are sharded.
    Only the last pipeline stage samples (`last_stage`; V1 ``profile_run`` samples
    ``if get_pp_group().is_last_rank``, V0 ``execute_model`` returns the intermediate tensors
    before the logits on the other stages): the others peak at the forward alone.
    """
    tokens = float(checks.whole("max_num_batched_tokens", max_num_batched_tokens))
    seqs = float(checks.whole("max_num_seqs", max_num_seqs))
    per_token = forward_values_per_token(model, tp=tp)
    forward = tokens * per_token * bytes_per_value
    if model.num_experts and tokens > FUSED_MOE_CHUNK_TOKENS:
        forward = min(
            forward,
            FUSED_MOE_CHUNK_TOKENS * per_token * bytes_per_value + tokens * 3 * hidden_values(model) * bytes_per_value,
        )
    if not last_stage:
        return forward
    vocab = float(model.vocab_size or 0)
    rows = min(tokens, seqs)
    if release.profile_sampler:
        flashinfer = flashinfer_sampler and release.engine == "V1"
        logits = rows * vocab * (FLASHINFER_SAMPLER_BYTES_PER_LOGIT if flashinfer else SAMPLER_BYTES_PER_LOGIT)
    elif release.profile_logit_rows == "tokens":
        logits = tokens * vocab * bytes_per_value
    elif release.profile_logit_rows == "seqs":
        logits = rows * vocab * bytes_per_value
    else:
        logits = 0.0
    held = tokens * hidden_values(model) * bytes_per_value
    return max(forward, held + logits)


def estimated_non_torch_bytes(release: VllmRelease, *, gpu: GpuSpec, tp: int = 1, pp: int = 1) -> float:
    """The release's non-torch term, one GPU [bytes].

    Whole device (V0 0.6.4.x, early V1): ``CUDA_CONTEXT_BYTES``; growth after the baseline (the others):
    ``NON_TORCH_GROWTH_BYTES``. Plus NCCL's buffers on a multi-GPU server when the baseline is taken
    before NCCL starts (V0 and V1 before 0.11.0), larger on NVSwitch systems (``NCCL_NVSWITCH_BYTES``).
    Memory other processes hold is never estimated: vLLM refuses to start when free memory is below
    total · u (V1 0.9 on), and V0 0.6.4.x / early V1 subtract it from the pool.
    """
    base = CUDA_CONTEXT_BYTES if release.non_torch == "device" else NON_TORCH_GROWTH_BYTES
    if tp * pp > 1 and not release.nccl_in_baseline:
        base += NCCL_NVSWITCH_BYTES if gpu.id in NVSWITCH_GPUS else NCCL_BYTES
    return base


def cuda_graph_capture_sizes(*, max_num_seqs: int, max_num_batched_tokens: int, release: VllmRelease) -> int:
    """How many batch sizes vLLM captures: [1, 2, 4] + multiples of 8 up to the largest.

    V0: up to min(max_num_seqs, 256) (``_BATCH_SIZES_TO_CAPTURE``); V1: up to
    min(2 · max_num_seqs, 512, max_num_batched_tokens) (``cuda_graph_sizes``, 0.10 on).
    """
    largest = min(max_num_seqs, 256) if release.engine == "V0" else min(2 * max_num_seqs, 512, max_num_batched_tokens)
    return sum(1 for size in (1, 2, 4) if size <= largest) + largest // 8


def cuda_graph_bytes(
    model: ModelSpec,
    *,
    release: VllmRelease,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    pp: int = 1,
    layers: int | None = None,
) -> float:
    """Estimated CUDA-graph memory, one GPU [bytes]: layers · ``CUDA_GRAPH_BYTES_PER_LAYER`` · sizes / 67.

    Layers: those on the GPU's pipeline stage (`layers`, default the fullest stage's); sizes:
    :func:`cuda_graph_capture_sizes`. The figure vLLM's ``profile_cudagraph_memory`` measures before
    cutting the pool (0.18.0 on; subtracted by default from 0.20.0, gpu_worker.py
    ``determine_available_memory``). An estimate from measured captures, not a formula of vLLM's:
    the kernels each model's graphs hold differ.
    """
    sizes = cuda_graph_capture_sizes(
        max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens, release=release
    )
    held = stage_layers(model.num_hidden_layers, pp) if layers is None else checks.whole("stage layers", layers)
    return held * CUDA_GRAPH_BYTES_PER_LAYER * sizes / CUDA_GRAPH_REFERENCE_SIZES


#: Alignment vLLM's MXFP4 MoE kernels pad the expert matrices to (Marlin and Triton backends, the ones
#: A100 and H100 use): hidden size to 256, the intermediate size of each tensor-parallel shard to 128
#: (vllm/model_executor/layers/fused_moe/oracle/mxfp4.py ``mxfp4_round_up_hidden_size_and_intermediate_size``).
MXFP4_HIDDEN_ALIGN = 256
MXFP4_INTERMEDIATE_ALIGN = 128


def loaded_weights_bytes(
    model: ModelSpec,
    *,
    weights_dtype: str | None = None,
    tp: int = 1,
    pp: int = 1,
    stage: int | None = None,
    partition: tuple[int, ...] | None = None,
) -> float:
    """What "Model loading took" measures, one GPU [bytes]: the checkpoint as vLLM lays it out.

    :func:`kvcore.memory.checkpoint_weights` (16-bit embeddings and LM head in a quantised
    checkpoint) + :func:`rotary_cache_bytes`; MXFP4 experts are padded to the kernels' alignment:
    experts · (⌈h⌉₂₅₆ / h) · (⌈I/tp⌉₁₂₈ / (I/tp)). gpt-oss-20b: 13.65 GiB (vLLM 0.19.0 log: 13.72);
    gpt-oss-120b on 4 GPUs: 17.1 GiB each (vLLM 0.10.1.1 log: 17.22).

    Without `stage`, 1 / pp of everything. With `stage` (0 … pp − 1) and the stage's layers
    (`partition`, default :func:`kvcore.vllm_pool.pp_partition`): that stage's layers' share
    ℓ_s / L of the decoder, one vocabulary table V · h / tp on the first stage (the embedding) and
    one on the last (the LM head, or, tied, the embedding copy the last stage builds to tie it to:
    vllm/model_executor/models/llama.py ``LlamaModel``/``LlamaForCausalLM``, deepseek_v2.py),
    and its own rotary table (every stage builds one). Dense first layers (DeepSeek) are counted
    as spread evenly.
    """
    if stage is not None:
        return _stage_weights_bytes(model, weights_dtype=weights_dtype, tp=tp, pp=pp, stage=stage, partition=partition)
    weights = checkpoint_weights(model, weights_dtype=weights_dtype, tp=tp, pp=pp)
    experts = weights.experts_bytes
    hidden, width = hidden_values(model), model.moe_intermediate_size
    if weights.weights_dtype == "mxfp4" and experts and width:
        shard = width / tp
        experts *= (math.ceil(hidden / MXFP4_HIDDEN_ALIGN) * MXFP4_HIDDEN_ALIGN / hidden) * (
            math.ceil(shard / MXFP4_INTERMEDIATE_ALIGN) * MXFP4_INTERMEDIATE_ALIGN / shard
        )
    return weights.embeddings_bytes + weights.body_bytes + experts + rotary_cache_bytes(model)


def _stage_weights_bytes(
    model: ModelSpec,
    *,
    weights_dtype: str | None,
    tp: int,
    pp: int,
    stage: int,
    partition: tuple[int, ...] | None,
) -> float:
    """One pipeline stage's weights on one GPU (:func:`loaded_weights_bytes` with a stage) [bytes]."""
    layers = pp_partition(model.num_hidden_layers, pp) if partition is None else partition
    stages = len(layers)
    index = checks.whole("pipeline stage", stage, minimum=0)
    if index >= stages:
        raise KvError(
            "above_maximum", f"pipeline stage must be at most {stages - 1}, got {index}", name="pipeline stage",
            maximum=stages - 1, value=index,
        )  # fmt: skip
    whole = loaded_weights_bytes(model, weights_dtype=weights_dtype, tp=tp)
    tables = checkpoint_weights(model, weights_dtype=weights_dtype, tp=tp).embeddings_bytes
    if stages == 1:
        return whole
    one_table = tables / (1 if model.tie_word_embeddings else 2)
    decoder = whole - tables - rotary_cache_bytes(model)
    held_tables = one_table * ((index == 0) + (index == stages - 1))
    return held_tables + decoder * layers[index] / model.num_hidden_layers + rotary_cache_bytes(model)


def rotary_cache_bytes(model: ModelSpec, *, bytes_per_value: float = 2.0) -> float:
    """The rotary embedding's cos/sin table vLLM builds at load: max_position · rotary_dim · b [bytes].

    ``RotaryEmbedding._compute_cos_sin_cache`` (vllm/model_executor/layers/rotary_embedding.py): one row
    of cos and sin halves per position, ``rotary_dim`` values (the head size; the RoPE part for MLA).
    "Model loading took" includes it: Llama 3.1 8B, 131,072 × 128 × 2 B = 32 MiB over its 14.96 GiB of
    weights = the 14.99 GiB of vLLM #10517's log.
    """
    rotary = model.qk_rope_head_dim or model.head_dim
    return float(model.max_position_embeddings) * rotary * bytes_per_value


def vllm_block_size(model: ModelSpec, *, gpu: GpuSpec, release: VllmRelease) -> int:
    """The block size the release's attention backend picks when --block-size is not given (tokens).

    16 (vllm/platforms/cuda.py), except MLA models on the backends that need more: FlashMLA on
    Hopper 64 (0.8.0 on), CUTLASS MLA on Blackwell 128 (vllm/platforms/cuda.py
    ``check_and_update_config``; ``get_preferred_block_size`` from 0.18.0).
    """
    if model.attention_type == "MLA" and release.version >= (0, 8, 0):
        if gpu.id.startswith(("h100", "h200")):
            return 64
        if gpu.id.startswith("b200"):
            return 128
    return DEFAULT_BLOCK_SIZE


def _attention_page_per_token(model: ModelSpec, *, bytes_per_value: float, tp: int) -> float:
    """Bytes one full-attention layer stores per token on one GPU: 2 · kv heads per rank · head_dim · b."""
    full = next(layer for layer in model.layers if layer.kind == "full")
    return float(layer_values_per_token(full, tp=tp)) * bytes_per_value


def _linear_state_page(model: ModelSpec, *, bytes_per_value: float, tp: int) -> float:
    """Bytes of one linear-attention (Gated DeltaNet / Mamba) layer's state for one request on one GPU."""
    return model.linear_state_values * bytes_per_value / tp


def hybrid_block_size(model: ModelSpec, *, bytes_per_value: float = 2.0, tp: int = 1) -> int:
    """The attention block size vLLM picks for a hybrid model: 16 · ⌈state page / (16 · attention page per token)⌉.

    vllm/model_executor/models/config.py ``HybridAttentionMambaModelConfig.verify_and_update_config``
    (0.10.2 on): every group's page must be the same size, so the attention block grows until one
    block of one layer is at least one layer's recurrent state; the state page is then padded up.
    Qwen3-Next 80B at tp 2: state 548,864 B, attention 1,024 B a token → 544-token blocks.

    >>> from kvcore.data import load_models
    >>> hybrid_block_size(load_models()["qwen3-next-80b-a3b"], tp=2)
    544
    """
    per_token = _attention_page_per_token(model, bytes_per_value=bytes_per_value, tp=tp)
    state = _linear_state_page(model, bytes_per_value=bytes_per_value, tp=tp)
    return 16 * max(math.ceil(state / (16 * per_token)), 1)


def hybrid_pool_log(
    model: ModelSpec,
    *,
    budget: MemoryBudget,
    max_model_len: int,
    block_size: int,
    bytes_per_value: float = 2.0,
    tp: int = 1,
    chunk_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
) -> PoolLog:
    """vLLM V1's pool for a model with several layer kinds: groups of one page size sharing one block pool.

    vllm/v1/core/kv_cache_utils.py (0.9 on; ``_get_kv_cache_config_uniform_page_size``,
    ``get_kv_cache_config_from_groups``): the layers of each kind are cut into groups of
    g = min(layers of any kind) layers (a short last group is padded); every page is P = block_size ·
    attention bytes per token (a linear state padded up to it); blocks = ⌊pool / (P · g)⌋, one block ID
    holding a page in each of g tensors. A request needs ⌈L / bs⌉ blocks in a full group,
    ⌈min(W − 1 + chunk, L) / bs⌉ + 1 in a sliding group (``SlidingWindowSpec``; chunk = the tokens in
    flight) and one in a linear group, so concurrency = blocks / Σ needs; "GPU KV cache size" =
    ⌊blocks / groups⌋ · block_size. vLLM 0.10.2, Qwen3-Next on 2 × H200: 44.59 GiB → 7,162 blocks of 544
    tokens, 973,760 tokens, 14.77× at 262,144 (its log).
    """
    counts = {kind: model.count(kind) for kind in ("full", "sliding", "linear") if model.count(kind)}
    group = min(counts.values())
    groups = {kind: math.ceil(n / group) for kind, n in counts.items()}
    window = next((layer.sliding_window or 0 for layer in model.layers if layer.kind == "sliding"), 0)
    per_token = _attention_page_per_token(model, bytes_per_value=bytes_per_value, tp=tp)
    page = block_size * per_token
    pool = budget.kv_pool_bytes
    num_blocks = int(max(pool, 0.0) // (page * group))
    length = checks.whole("max_model_len", max_model_len)

    def need(tokens: ArrayLike) -> np.ndarray:
        length = np.asarray(tokens, dtype=float)
        sliding = np.ceil(np.minimum(window - 1 + chunk_tokens, length) / block_size) + 1
        return (
            groups.get("full", 0) * np.ceil(length / block_size)
            + groups.get("sliding", 0) * sliding
            + groups.get("linear", 0)
        )

    needed = float(need(length))
    concurrency = num_blocks / needed
    longest = longest_fitting_length(lambda lengths: need(lengths) <= num_blocks)
    return PoolLog(
        budget=budget,
        bytes_per_token=per_token * group * sum(groups.values()),
        block_size=block_size,
        num_blocks=num_blocks,
        tokens=num_blocks // sum(groups.values()) * block_size,
        max_model_len=length,
        max_concurrency=concurrency,
        needed_bytes=needed * page * group,
        fits=concurrency >= 1.0 and pool > 0,
        estimated_max_model_len=longest,
        tp=tp,
        pp=1,
        cp=1,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class VllmStartup:
    """What one vLLM release does at start-up on one GPU type: its rules, the settings it picked, the pool.

    ``log`` is the budget and the blocks (:class:`PoolLog`); ``printed_tokens`` the "GPU KV cache size"
    as this release prints it (blocks · block_size before 0.20.0, int(concurrency · max_model_len)
    after); ``fits`` includes the null block the fit check keeps back from 0.29.0. ``stages`` holds
    every pipeline stage's budget and blocks when pp > 1 (``log`` is the one with the fewest blocks),
    ``stage_layers`` how many layers each holds.
    """

    release: VllmRelease
    log: PoolLog
    max_num_batched_tokens: int
    max_num_seqs: int
    block_size: int
    entry: Entry
    enforce_eager: bool
    stages: tuple[PoolLog, ...] = ()
    stage_layers: tuple[int, ...] = ()

    @property
    def tightest_stage(self) -> int:
        """The pipeline stage whose blocks the server keeps (0 without pipeline parallelism)."""
        return next((index for index, stage in enumerate(self.stages) if stage is self.log), 0)

    @property
    def fits(self) -> bool:
        """Whether the release starts: a positive pool that holds one request of max_model_len."""
        if not self.log.fits:
            return False
        if self.release.null_block_in_fit:
            return self.log.max_concurrency * (self.log.num_blocks - 1) / max(self.log.num_blocks, 1) >= 1.0
        return True

    @property
    def printed_tokens(self) -> int:
        """'GPU KV cache size: N tokens' as this release prints it."""
        if self.release.printed_tokens == "concurrency":
            return int(self.log.max_concurrency * self.log.max_model_len)
        return self.log.tokens


def _startup_budget(
    gpu: GpuSpec,
    *,
    utilization: float,
    weights: float,
    activation: float,
    non_torch: float,
    graphs: float,
    tokens: int,
    seqs: int,
    where: str,
    release: VllmRelease,
    enforce_eager: bool,
) -> MemoryBudget:
    """vLLM's four terms on one GPU as a :class:`kvcore.budget.MemoryBudget`, each naming its release."""
    graphs_source = (
        f"estimated CUDA graphs, subtracted since 0.20.0; {where}"
        if release.cuda_graphs_subtracted
        else f"not subtracted: captured after the pool ({where}{', enforce_eager' if enforce_eager else ''})"
    )
    non_torch_source = "whole device (CUDA context)" if release.non_torch == "device" else "growth after the baseline"
    return memory_budget(
        memory_bytes=gpu.reported_memory_bytes,
        utilization=utilization,
        terms=[
            BudgetTerm(
                name=WEIGHTS,
                bytes=weights,
                source=f"checkpoint by component + rotary table, / tp, this stage's layers and tables; {where}"
                if ", stage " in where
                else f"checkpoint by component + rotary table, / (tp · pp); {where}",
            ),
            BudgetTerm(
                name=ACTIVATION_PEAK,
                bytes=activation,
                source=f"profile run: {tokens} tokens over {min(tokens, seqs)} sequences, sampler; {where}",
            ),
            BudgetTerm(name=NON_TORCH, bytes=non_torch, source=f"{non_torch_source}; {where}"),
            BudgetTerm(name=CUDA_GRAPHS, bytes=graphs, source=graphs_source),
        ],
    )


def vllm_startup(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    version: str = NEWEST_RELEASE,
    utilization: float = 0.9,
    max_model_len: int | None = None,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    kv_dtype: str = "auto",
    weights_dtype: str | None = None,
    enforce_eager: bool = False,
    entry: Entry = "serve",
    block_size: int | None = None,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    flashinfer_sampler: bool | None = None,
    kv_cache_memory_bytes: float | Sequence[float] | None = None,
) -> VllmStartup:
    """vLLM's start-up on `gpu` from the GPU, model and flags alone: M · u − W − A − N − G, then the blocks.

    M = ``gpu.reported_memory_bytes`` (what torch reports), u = `utilization`; W =
    :func:`kvcore.memory.checkpoint_weights` (16-bit embeddings and LM head in a quantised
    checkpoint) + :func:`rotary_cache_bytes`, per GPU; A = :func:`profile_activation_bytes` over the
    release's defaults (:func:`kvcore.vllm_versions.batch_defaults`) unless given; N =
    :func:`estimated_non_torch_bytes`; G = :func:`cuda_graph_bytes` when the release subtracts it
    (V1 0.20.0 on, not under --enforce-eager). The blocks, tokens, concurrency and fit follow
    :func:`pool_log_for` with the backend's block size (:func:`vllm_block_size`) and the release's
    sliding-window reserve (twice max_num_batched_tokens under async scheduling, 0.26.0 on).
    `kv_dtype` "auto" stores the cache in the model's 16-bit dtype; `flashinfer_sampler` says whether
    the sampler is FlashInfer's (the log prints "Using FlashInfer for top-p & top-k sampling"); None
    takes the release's default (``VllmRelease.flashinfer_sampler``: on from 0.21.0 on Ampere and newer).
    `kv_cache_memory_bytes` gives the pool itself, as vLLM's ``--kv-cache-memory`` does (0.10.2 on:
    no profiling, u ignored) and as a logged "Available KV cache memory" does: only the blocks follow;
    a sequence gives each pipeline stage its own pool, as a log prints one per stage.

    With pipeline parallelism every stage is budgeted apart (its layers from
    :func:`kvcore.vllm_pool.pp_partition` by release, its weights from :func:`loaded_weights_bytes`
    with its stage, the sampler only on the last) and cut into its own blocks; the server keeps the
    fewest (vllm/v1/core/kv_cache_utils.py ``unify_kv_cache_configs``; V0's executor takes the
    minimum of the workers' ``determine_num_available_blocks``): ``log`` is that stage's,
    ``stages`` every stage's.
    """
    release = vllm_release(
        version,
        gpu=gpu,
        model=model,
        kv_dtype=kv_dtype,
        enforce_eager=enforce_eager,
        pp=pp,
        weights_dtype=weights_dtype,
    )
    length = int(max_model_len or model.max_position_embeddings)
    checks.whole("max_model_len", length)
    default_tokens, default_seqs = batch_defaults(release, gpu=gpu, entry=entry, max_model_len=length)
    tokens = int(max_num_batched_tokens or default_tokens)
    seqs = int(max_num_seqs or default_seqs)
    blocks = int(block_size or vllm_block_size(model, gpu=gpu, release=release))
    kv_format = kv_cache_format(kv_dtype)
    kv_bytes = 2.0 if kv_format == "auto" else bytes_per_value(kv_format)
    partition = pp_partition(model.num_hidden_layers, pp, remainder_on_last=release.pp_remainder_on_last)
    given = _given_pools(kv_cache_memory_bytes, stages=len(partition))
    non_torch = estimated_non_torch_bytes(release, gpu=gpu, tp=tp, pp=pp)
    where = f"vLLM {release.label} ({release.era})"

    def stage_budget(stage: int) -> MemoryBudget:
        if given is not None:
            return memory_budget(memory_bytes=max(given[stage], 1.0), utilization=1.0, terms=[])
        weights = loaded_weights_bytes(
            model, weights_dtype=weights_dtype, tp=tp, pp=pp, stage=stage if pp > 1 else None, partition=partition
        )
        activation = profile_activation_bytes(
            model,
            release=release,
            max_num_batched_tokens=tokens,
            max_num_seqs=seqs,
            tp=tp,
            flashinfer_sampler=release.flashinfer_sampler if flashinfer_sampler is None else flashinfer_sampler,
            last_stage=stage == len(partition) - 1,
        )
        graphs = (
            cuda_graph_bytes(
                model, release=release, max_num_seqs=seqs, max_num_batched_tokens=tokens, layers=partition[stage]
            )
            if release.cuda_graphs_subtracted
            else 0.0
        )
        return _startup_budget(
            gpu,
            utilization=utilization,
            weights=weights,
            activation=activation,
            non_torch=non_torch,
            graphs=graphs,
            tokens=tokens,
            seqs=seqs,
            where=where if pp == 1 else f"{where}, stage {stage + 1} of {pp}",
            release=release,
            enforce_eager=enforce_eager,
        )

    budget = stage_budget(0)
    kinds = {layer.kind for layer in model.layers}
    if "sliding" in kinds and (release.engine == "V0" or (release.version < (0, 9, 0) and len(kinds) > 1)):
        # V0 never shrinks a sliding layer's blocks (vllm/worker/cache_engine.py; its concurrency is
        # blocks · block_size / L), and V1 before 0.9 turns sliding layers into full ones when both kinds
        # exist (kv_cache_utils.py ``unify_hybrid_kv_cache_specs``, 0.8.3): each pays for the whole context.
        model = dataclasses.replace(model, layer_pattern=model.layer_pattern.replace("sliding", "full"))
        kinds = {layer.kind for layer in model.layers}
    linear = "linear" in kinds and release.version >= (0, 10, 2)
    # Several attention kinds get their own groups in V1 from 0.9 (0.8.3–0.8.5 turned sliding layers into
    # full ones); a linear state joins the pool from 0.10.2. One GPU per stage only: pp and cp keep the
    # single-kind arithmetic below.
    grouped = release.engine == "V1" and pp == 1 and cp == 1 and len(kinds - {"mla"}) > 1
    grouped = grouped and (linear or ("linear" not in kinds and release.version >= (0, 9, 0)))
    stages: tuple[PoolLog, ...] = ()
    if grouped:
        if linear:  # the attention block grows until its page holds a whole linear-attention state
            blocks = int(block_size or hybrid_block_size(model, bytes_per_value=kv_bytes, tp=tp))
        log = hybrid_pool_log(
            model,
            budget=budget,
            max_model_len=length,
            block_size=blocks,
            bytes_per_value=kv_bytes,
            tp=tp,
            chunk_tokens=tokens * release.in_flight_batches,
        )
    else:
        stages = tuple(
            pool_log_for(
                model,
                budget=budget if stage == 0 else stage_budget(stage),
                max_model_len=length,
                max_num_batched_tokens=tokens * release.in_flight_batches,
                block_size=blocks,
                bytes_per_value=kv_bytes,
                tp=tp,
                pp=pp,
                cp=cp,
                layers=layers,
            )
            for stage, layers in enumerate(partition)
        )
        log = min(stages, key=lambda stage_log: stage_log.num_blocks)
    return VllmStartup(
        release=release,
        log=log,
        max_num_batched_tokens=tokens,
        max_num_seqs=seqs,
        block_size=blocks,
        entry=entry,
        enforce_eager=enforce_eager,
        stages=stages if pp > 1 else (),
        stage_layers=partition if pp > 1 and stages else (),
    )


def _given_pools(pools: float | Sequence[float] | None, *, stages: int) -> tuple[float, ...] | None:
    """The pools handed in (``--kv-cache-memory`` or a log's), one per pipeline stage [bytes]."""
    if pools is None:
        return None
    values = [pools] * stages if isinstance(pools, (int, float)) else list(pools)
    if len(values) != stages:
        raise KvError(
            "above_maximum", f"KV pools must be one per pipeline stage ({stages}), got {len(values)}",
            name="KV pools", maximum=stages, value=len(values),
        )  # fmt: skip
    return tuple(float(checks.positive("KV pool", value, allow_zero=True)) for value in values)


#: V0's CPU swap space (``--swap-space``, 4 GiB by default): it sets the "# CPU blocks" count only.
V0_SWAP_SPACE_BYTES = 4 * GiB


def startup_lines(startup: VllmStartup) -> list[str]:
    """The memory lines the chosen release prints for this start-up, in that release's own format.

    V0 0.6.4.x: the one-line "Memory profiling results: …" and "# GPU blocks: N, # CPU blocks: M"
    (vllm/worker/worker.py, vllm/executor/gpu_executor.py); V0 0.6.5 on: "the current vLLM instance
    can use total_gpu_memory (…) x gpu_memory_utilization (…)" / "model weights take …" and, from
    0.7.0, "# cuda blocks"; V0's refusal "The model's max seq len (L) is larger than the maximum number
    of tokens that can be stored in KV cache (T)". V1: "GPU KV cache size" and "Maximum concurrency"
    (vllm/v1/core/kv_cache_utils.py; one line from 0.28.0), "Available KV cache memory" from 0.9
    (gpu_worker.py; rounded without trailing zeros from 0.14.0), the refusal of
    ``check_enough_kv_cache_memory``. Figures are kvcore's estimates.
    """
    log, release, v = startup.log, startup.release, startup.release.version
    gib = 2**30
    pool = log.kv_pool_bytes / gib
    if release.engine == "V0":
        cpu_blocks = int(V0_SWAP_SPACE_BYTES // (log.block_size * log.bytes_per_token))
        if v < (0, 6, 5):
            peak = (log.weights_bytes + log.activation_bytes) / gib
            initial = (log.weights_bytes + log.non_torch_bytes) / gib
            lines = [
                f"Memory profiling results: total_gpu_memory={log.memory_bytes / gib:.2f}GiB "
                f"initial_memory_usage={initial:.2f}GiB peak_torch_memory={peak:.2f}GiB "
                f"memory_usage_post_profile={initial:.2f}GiB non_torch_memory={log.non_torch_bytes / gib:.2f}GiB "
                f"kv_cache_size={pool:.2f}GiB gpu_memory_utilization={log.utilization:.2f}",
                f"# GPU blocks: {log.num_blocks}, # CPU blocks: {cpu_blocks}",
            ]
        else:
            usable = log.memory_bytes * log.utilization / gib
            device = "cuda" if v >= (0, 7, 0) else "GPU"
            lines = [
                f"the current vLLM instance can use total_gpu_memory ({log.memory_bytes / gib:.2f}GiB) x "
                f"gpu_memory_utilization ({log.utilization:.2f}) = {usable:.2f}GiB",
                f"model weights take {log.weights_bytes / gib:.2f}GiB; non_torch_memory takes "
                f"{log.non_torch_bytes / gib:.2f}GiB; PyTorch activation peak memory takes "
                f"{log.activation_bytes / gib:.2f}GiB; the rest of the memory reserved for KV Cache is {pool:.2f}GiB.",
                f"# {device} blocks: {log.num_blocks}, # CPU blocks: {cpu_blocks}",
            ]
        if not log.has_pool:
            return [
                *lines,
                "ValueError: No available memory for the cache blocks. Try increasing "
                "`gpu_memory_utilization` when initializing the engine.",
            ]
        lines.append(f"Maximum concurrency for {log.max_model_len} tokens per request: {log.max_concurrency:.2f}x")
        if not startup.fits:
            lines.append(
                f"ValueError: The model's max seq len ({log.max_model_len}) is larger than the maximum number of "
                f"tokens that can be stored in KV cache ({log.tokens}). Try increasing `gpu_memory_utilization` "
                "or decreasing `max_model_len` when initializing the engine."
            )
        return lines
    lines = []
    if v >= (0, 9, 0):
        shown = f"{round(pool, 2)}" if v >= (0, 14, 0) else f"{pool:.2f}"
        lines.append(f"Available KV cache memory: {shown} GiB")
    if not log.has_pool:
        return [
            *lines,
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine.",
        ]
    if not startup.fits:
        unit = "GiB" if v >= (0, 8, 3) else "GB"
        estimate = (
            f" Based on the available memory, the estimated maximum model length is {log.estimated_max_model_len}."
            if v >= (0, 9, 0)
            else (" Based on the available memory," if v >= (0, 8, 4) else "")
        )
        return [
            *lines,
            f"ValueError: To serve at least one request with the models's max seq len ({log.max_model_len}), "
            f"({log.needed_bytes / gib:.2f} {unit} KV cache is needed, which is larger than the available KV cache "
            f"memory ({pool:.2f} {unit}).{estimate} Try increasing `gpu_memory_utilization` or decreasing "
            "`max_model_len` when initializing the engine.",
        ]
    tokens = f"GPU KV cache size: {startup.printed_tokens:,} tokens"
    concurrency = f"Maximum concurrency for {log.max_model_len:,} tokens per request: {log.max_concurrency:.2f}x"
    if v < (0, 8, 0):
        return [*lines, f"# GPU blocks: {log.num_blocks}", concurrency]
    if v >= (0, 28, 0):
        return [*lines, f"{tokens}, {concurrency}"]
    return [*lines, tokens, concurrency]
