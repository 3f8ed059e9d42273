"""Continuous batching on a fixed KV block pool: a discrete-event simulation of vLLM's scheduler.

Requests arrive (a Poisson process), wait in a first-come-first-served queue, and
are admitted while the pool has free blocks of ``block_size`` tokens. Every step
the engine runs one forward pass over a batch that mixes prompt chunks (prefill)
and one new token for each running request (decode), then samples a token for
every request whose cache has caught up with its tokens. A request that needs a
new block when none is free preempts the NEWEST running request (possibly
itself), which goes back to the FRONT of the waiting queue. Finished requests
free their blocks at once.

The scheduling step follows vLLM V1 (vllm/v1/core/sched/scheduler.py,
``Scheduler.schedule``; Kwon et al. 2023, "Efficient Memory Management for Large
Language Model Serving with PagedAttention", §4.5):

1. RUNNING requests, oldest first, while the token budget
   (``max_num_batched_tokens``) lasts: each is given
   min(tokens − computed tokens, budget left) new tokens (1 for a decode, a chunk
   for a prompt: chunked prefill is always on, as in V1) and
   ceil((computed + new) / block_size) blocks in all. When the free blocks do not
   suffice, ``self.running.pop()`` is preempted, again and again, until they do
   or the request has preempted itself.
2. WAITING requests, only if nothing was preempted in this step, FCFS while the
   budget lasts and fewer than ``max_num_seqs`` run: the head gets a chunk of
   its prompt and the blocks for it; if they are not free, admission stops
   (head-of-line blocking; no later request jumps the queue). With
   ``reserve_full_prompt`` (vLLM's ``scheduler_reserve_full_isl``, on by default
   in V1 from 0.19) the head is admitted only when the free blocks hold ALL its
   tokens, not just the first chunk.

Preemption modes: ``recompute`` (the only one in vLLM V1) frees the victim's
blocks and resets its computed tokens to 0, so its prompt and every token it had
generated are prefilled again, except, with ``prefix_caching`` (V1's default),
the leading full blocks that are still in the prefix cache when it comes back;
``swap`` (vLLM V0 only: ``PreemptionMode.SWAP``) copies the blocks to CPU memory
and back when the request is readmitted, at a transfer cost per block, and keeps
the computed tokens. V0 swapped by default only sequence groups of more than one
sequence (``swap_only_multi_sequence``); ``--preemption-mode swap`` forced it for
all.

The prefix cache after a preemption (vllm/v1/core/block_pool.py, 0.33.0):
``BlockPool.free_blocks`` puts a freed block with a hash (a full block) at the END
of the free queue and one without (the partial last block) at the FRONT;
``get_new_blocks`` pops from the front and evicts the hash of what it takes. The
free queue is therefore: never-hashed blocks first, then hashed ones in the order
they were freed (LRU), a request's tail block before its head (``free`` frees in
reverse). Cached blocks count as free. When the preempted request is admitted
again, ``KVCacheManager.get_computed_blocks`` finds its leading full blocks whose
hashes survived (at most (tokens − 1) // block_size of them) and only the rest is
prefilled; those blocks leave the free queue (``BlockPool.touch``). The engine
keeps this as counts: the free blocks that never held a hash, a deque of runs of
hashed blocks in freed order (owner, count; owner −1 for a finished request,
whose blocks nobody will ask for again: prompts here share no prefix), and, per
waiting request, how many of its leading blocks are still cached.

How the code reads: ``simulate`` runs an ``_Engine``, whose state is the
scheduler's (``waiting``, ``running``, the pool's ``free_blocks``, the clock
``now_s``) plus one ``_RequestState``: every request's counters (vLLM's
``Request``) as named numpy arrays; while requests run, the counters a step
changes sit side by side in ``_RunningColumns``, in the order of ``running``, so
a whole batch updates in one operation without gathering by id. Each engine
step is one ``EngineCore.step`` (vllm/v1/engine/core.py): schedule
(``_schedule_running``, ``_schedule_waiting``, ``_preempt``), run the forward
pass (``_execute``), sample (``_sample``, vLLM's ``update_from_output``), free
the finished (``_finish``), let arrivals in (``_add_arrivals``, vLLM's
``add_request``).

Simplifications, each on purpose:

* Prefix caching only serves a request its own blocks again (the trace's prompts
  share no prefix); no speculative decoding, ``long_prefill_token_threshold``,
  watermark (0 by default from 0.24) or priority policy; every request ignores
  stop tokens and produces exactly its ``output_tokens`` (as benchmark clients
  ask with ``ignore_eos``).
* Swap: CPU swap space is unlimited, the transfer blocks the step that makes
  it, and a swapped request waits at the front of the single waiting queue (V0
  kept a separate swapped queue that it also served before new prompts). A
  request of ``sequences_per_request`` n > 1 (V0's ``SamplingParams.n``, beam
  search) only decides the preemption mode: its blocks and tokens are those of
  one sequence (the extra sequences' decode blocks are not modelled).
* A step's time is a roofline of three parameters (see ``step_time_s``), not a
  kernel model; there is no CPU scheduling overhead and no pipelining of steps.
* Runs of identical decode steps (no arrival that could be admitted, no prompt,
  no finish, no preemption) are fast-forwarded in one vectorised move; the
  decisions are those of step-by-step simulation (``fast_forward=False``) and the
  times agree to float rounding (about 1e-13 s), and the
  timeline then has one row per run, whose ``steps`` column says how many.

The lesson's scenarios (a right-sized pool, a too-small one) are course
material: :mod:`course.scheduler_presets`.
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

import kvcore  # block_bytes, num_blocks, kv_bytes_per_token: looked up at call time, wherever kvcore keeps them

from . import checks
from .capacity import DEFAULT_BLOCK_SIZE, DEFAULT_MAX_NUM_BATCHED_TOKENS
from .dtypes import bytes_per_value
from .errors import KvError
from .timing import TYPICAL_MBU, TYPICAL_MFU, phase_times, rates_for

if TYPE_CHECKING:
    from .hardware import GpuSpec
    from .model import ModelSpec
    from .vllm_versions import VllmRelease

__all__ = [
    "RequestOutcomes",
    "Requests",
    "ServerConfig",
    "SimulationResult",
    "SimulationSummary",
    "Timeline",
    "Workload",
    "blocks_for_no_preemption",
    "generate_requests",
    "server_from_model",
    "simulate",
    "step_time_s",
    "summarize",
    "vllm_rules",
]

ArrayLike = Any
PreemptionMode = Literal["recompute", "swap"]
LengthDistribution = Literal["lognormal", "uniform", "fixed"]
PREEMPTION_MODES: tuple[str, ...] = ("recompute", "swap")
LENGTH_DISTRIBUTIONS: tuple[str, ...] = ("lognormal", "uniform", "fixed")
#: vLLM's ``max_num_seqs`` default for ``vllm serve`` (vllm/engine/arg_utils.py).
DEFAULT_MAX_NUM_SEQS = 256


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """Who asks for what, and when: the inputs of ``generate_requests``.

    Arrivals are a Poisson process of ``arrival_rate_per_s`` (``math.inf``: all
    at t = 0, an offline batch). Lengths have the given mean and a spread that is
    the coefficient of variation (standard deviation ÷ mean); a prompt is clipped
    to [1, max_model_len − 1] and its output to [1, max_model_len − prompt], as
    vLLM rejects longer prompts and stops generation at max_model_len.
    ``sequences_per_request`` is every request's n (V0's ``SamplingParams.n``): it only
    decides V0's preemption mode (see ``ServerConfig.swap_only_multi_sequence``).
    """

    arrival_rate_per_s: float = 20.0
    num_requests: int = 1000
    prompt_mean_tokens: float = 512.0
    prompt_spread: float = 0.5
    output_mean_tokens: float = 256.0
    output_spread: float = 0.5
    distribution: LengthDistribution = "lognormal"
    max_model_len: int = 4096
    seed: int = 0
    sequences_per_request: int = 1

    def __post_init__(self) -> None:
        if self.arrival_rate_per_s != math.inf:
            checks.positive("arrival rate (requests/s)", self.arrival_rate_per_s)
        checks.whole("number of requests", self.num_requests)
        checks.positive("mean prompt length (tokens)", self.prompt_mean_tokens)
        checks.positive("mean output length (tokens)", self.output_mean_tokens)
        checks.positive("prompt spread", self.prompt_spread, allow_zero=True)
        checks.positive("output spread", self.output_spread, allow_zero=True)
        checks.whole("max model length (tokens)", self.max_model_len, minimum=2)
        checks.whole("seed", self.seed, minimum=0)
        checks.whole("sequences per request", self.sequences_per_request)
        if self.distribution not in LENGTH_DISTRIBUTIONS:
            raise KvError(
                "unknown_distribution",
                f"length distribution must be one of {', '.join(LENGTH_DISTRIBUTIONS)}, got {self.distribution!r}",
                value=str(self.distribution),
                known=LENGTH_DISTRIBUTIONS,
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class Requests:
    """A trace: arrival time (s, non-decreasing), prompt and output length (tokens) of each request.

    ``sequences_per_request``: each request's number of sequences n (a whole number ≥ 1, or one
    for all; default 1). Only V0's preemption rule reads it (``ServerConfig.swap_only_multi_sequence``).
    """

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    sequences_per_request: ArrayLike = 1

    def __post_init__(self) -> None:
        arrival = np.asarray(self.arrival_s, dtype=float)
        prompt = np.asarray(self.prompt_tokens)
        output = np.asarray(self.output_tokens)
        if not (arrival.ndim == prompt.ndim == output.ndim == 1) or not (arrival.size == prompt.size == output.size):
            raise KvError(
                "trace_shape",
                "arrival_s, prompt_tokens and output_tokens must be 1-D arrays of the same length, "
                f"got {arrival.shape}, {prompt.shape} and {output.shape}",
                shapes=(arrival.shape, prompt.shape, output.shape),
            )
        if arrival.size == 0:
            raise KvError("no_requests", "the trace is empty: give at least one request")
        checks.positive("arrival time (s)", arrival, allow_zero=True)
        if np.any(np.diff(arrival) < 0):
            raise KvError(
                "arrivals_unsorted", "arrival times must be sorted (non-decreasing): sort the trace by arrival_s"
            )
        try:
            sequences = np.broadcast_to(np.asarray(self.sequences_per_request), arrival.shape)
        except ValueError:
            raise KvError(
                "trace_shape",
                f"sequences_per_request must be one number or one per request, got shape "
                f"{np.shape(self.sequences_per_request)} for {arrival.size} requests",
                shapes=(arrival.shape, prompt.shape, output.shape),
            ) from None
        named = (("prompt length (tokens)", prompt), ("output length (tokens)", output))
        for name, values in (*named, ("sequences per request", sequences)):
            as_float = np.asarray(values, dtype=float) if values.dtype.kind in "iuf" else None
            if as_float is None or np.any(~np.isfinite(as_float) | (as_float < 1) | (as_float != np.round(as_float))):
                raise KvError("lengths_not_whole", f"every {name} must be a whole number ≥ 1", name=name)
        object.__setattr__(self, "arrival_s", arrival)
        object.__setattr__(self, "prompt_tokens", prompt.astype(np.int64))
        object.__setattr__(self, "output_tokens", output.astype(np.int64))
        object.__setattr__(self, "sequences_per_request", sequences.astype(np.int64))

    def __len__(self) -> int:
        return int(self.arrival_s.size)


def generate_requests(workload: Workload) -> Requests:
    """Draw a reproducible trace from `workload` with ``numpy.random.default_rng(seed)``.

    Arrivals: cumulative sums of exponential gaps of mean 1 / rate (a Poisson
    process). Lengths, for mean m and spread c (std ÷ mean): lognormal with
    σ² = ln(1 + c²), μ = ln m − σ²/2; uniform on m · [1 − √3·c, 1 + √3·c]; or
    fixed at m. Rounded to whole tokens, then clipped (see ``Workload``).

    >>> trace = generate_requests(Workload(num_requests=3, seed=1))
    >>> len(trace), bool(trace.arrival_s[0] > 0)
    (3, True)
    """
    rng = np.random.default_rng(workload.seed)
    n = workload.num_requests
    if workload.arrival_rate_per_s == math.inf:
        arrival = np.zeros(n)
    else:
        arrival = np.cumsum(rng.exponential(1.0 / workload.arrival_rate_per_s, size=n))
    prompt = _lengths(rng, workload.distribution, workload.prompt_mean_tokens, workload.prompt_spread, n)
    output = _lengths(rng, workload.distribution, workload.output_mean_tokens, workload.output_spread, n)
    prompt = np.clip(prompt, 1, workload.max_model_len - 1)
    output = np.clip(output, 1, workload.max_model_len - prompt)
    return Requests(
        arrival_s=arrival,
        prompt_tokens=prompt,
        output_tokens=output,
        sequences_per_request=workload.sequences_per_request,
    )


def _lengths(rng: np.random.Generator, distribution: str, mean: float, spread: float, n: int) -> np.ndarray:
    """Whole-token lengths of the given mean and coefficient of variation (before clipping)."""
    if distribution == "lognormal":
        sigma2 = math.log1p(spread**2)
        values = rng.lognormal(math.log(mean) - sigma2 / 2, math.sqrt(sigma2), size=n)
    elif distribution == "uniform":
        half_width = math.sqrt(3.0) * spread * mean
        values = rng.uniform(mean - half_width, mean + half_width, size=n)
    else:
        values = np.full(n, float(mean))
    return np.round(values).astype(np.int64)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """The engine: its block pool, its scheduler limits and what a step costs.

    Defaults for the step's cost are Llama 3.1 8B in BF16 on one H100 SXM
    (3.35 TB/s at 80 % MBU, 989 TFLOP/s at 50 % MFU; ``server_from_model`` derives
    them): reading the 16 GB of weights takes 6 ms, each cached token of
    131,072 B takes 49 ns, each processed token 2 · 8.0e9 FLOPs = 32 µs, and a
    2 MiB block crosses PCIe 4.0 (25 GB/s) in 84 µs.

    The scheduler's rules (each off by default, which is the model the golden cases
    of tests/kvcore/test_scheduler_golden.py recorded; ``vllm_rules`` sets them as a
    release does):

    * ``reserve_full_prompt`` — vLLM V1's ``scheduler_reserve_full_isl``
      (vllm/config/scheduler.py ``SchedulerConfig``, default True; present in 0.19.1,
      absent in 0.18.1): a waiting request is admitted only when the free blocks hold
      ceil(tokens / block_size) blocks, its whole sequence (prompt plus what it had
      generated before a preemption, ``request.num_tokens``), not only its first chunk
      (``KVCacheManager.allocate_slots(full_sequence_must_fit=...)`` in
      vllm/v1/core/kv_cache_manager.py, 0.33.0; ``can_fit_full_sequence`` in 0.19.1).
      Its prefix-cache hits count in that sum: touching a cached block takes it out of
      the free queue.
    * ``prefix_caching`` — V1's ``enable_prefix_caching`` (vllm/config/cache.py, default
      True): a preempted request's full blocks stay hashed in the pool and, when it comes
      back, those still cached are not prefilled again (module docstring).
    * ``swap_only_multi_sequence`` — V0's rule when no ``preemption_mode`` is given
      (vllm/core/scheduler.py ``Scheduler._preempt``, 0.6.6.post1): "We use recomputation
      by default since it incurs lower overhead than swapping. However, when the sequence
      group has multiple sequences (e.g., beam search), recomputation is not currently
      supported. In such a case, we use swapping instead." With ``preemption_mode="swap"``
      it swaps only requests of ``sequences_per_request`` > 1 and recomputes the others;
      without it, swap is forced for every request (V0's ``--preemption-mode swap``).

    Swap is vLLM V0's: V1 has no swap. It cannot be combined with ``reserve_full_prompt``
    or ``prefix_caching``, which model V1's scheduler and block pool (KvError
    ``swap_is_v0_only``).
    """

    num_blocks: int
    block_size: int = DEFAULT_BLOCK_SIZE
    max_num_seqs: int = DEFAULT_MAX_NUM_SEQS
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS
    weights_read_s: float = 6.0e-3
    kv_read_s_per_token: float = 4.9e-8
    compute_s_per_token: float = 3.2e-5
    swap_s_per_block: float = 8.4e-5
    preemption_mode: PreemptionMode = "recompute"
    reserve_full_prompt: bool = False
    prefix_caching: bool = False
    swap_only_multi_sequence: bool = False

    def __post_init__(self) -> None:
        checks.whole("number of blocks", self.num_blocks)
        checks.whole("block size (tokens)", self.block_size)
        checks.whole("max_num_seqs", self.max_num_seqs)
        checks.whole("max_num_batched_tokens", self.max_num_batched_tokens)
        checks.positive("weights read time per step (s)", self.weights_read_s, allow_zero=True)
        checks.positive("KV read time per token (s)", self.kv_read_s_per_token, allow_zero=True)
        checks.positive("compute time per token (s)", self.compute_s_per_token, allow_zero=True)
        checks.positive("swap time per block (s)", self.swap_s_per_block, allow_zero=True)
        if self.preemption_mode not in PREEMPTION_MODES:
            raise KvError(
                "unknown_preemption_mode",
                f"preemption mode must be 'recompute' or 'swap', got {self.preemption_mode!r}",
                value=str(self.preemption_mode),
                known=PREEMPTION_MODES,
            )
        v1_rules = [name for name in ("reserve_full_prompt", "prefix_caching") if getattr(self, name)]
        if self.preemption_mode == "swap" and v1_rules:
            raise KvError(
                "swap_is_v0_only",
                f"swap preemption is vLLM V0's (V1 only recomputes): it cannot run with V1's {', '.join(v1_rules)}",
                rules=tuple(v1_rules),
            )


def vllm_rules(server: ServerConfig, release: VllmRelease) -> ServerConfig:
    """`server` with the scheduler rules `release` applies by default (``kvcore.vllm_release``).

    V1 (0.8.0 on, or where ``vllm_release`` says so): recompute only, ``prefix_caching``
    on (V1's ``enable_prefix_caching`` default), ``reserve_full_prompt`` from 0.19.0
    (``scheduler_reserve_full_isl``, True by default; found in 0.19.1 and later, not in
    0.18.1). A swap server under a V1 release is refused (KvError ``swap_is_v0_only``):
    vllm/v1/core/sched/scheduler.py ``_preempt_request`` only frees the blocks and sets
    ``num_computed_tokens = 0``. V0: neither V1 rule; the preemption mode and
    ``swap_only_multi_sequence`` stay as given (V0's ``--preemption-mode``, or its
    default rule).

    >>> from kvcore.vllm_versions import vllm_release
    >>> server = vllm_rules(ServerConfig(num_blocks=100), vllm_release("0.33.0"))
    >>> server.reserve_full_prompt, server.prefix_caching, server.preemption_mode
    (True, True, 'recompute')
    """
    if release.engine == "V1":
        if server.preemption_mode == "swap":
            raise KvError(
                "swap_is_v0_only",
                f"swap preemption is vLLM V0's: vLLM {release.label} (V1) only recomputes",
                rules=("V1",),
            )
        return dataclasses.replace(
            server,
            reserve_full_prompt=release.version >= (0, 19, 0),
            prefix_caching=True,
            swap_only_multi_sequence=False,
        )
    return dataclasses.replace(server, reserve_full_prompt=False, prefix_caching=False)


@overload
def step_time_s(
    server: ServerConfig, *, scheduled_tokens: int, context_tokens: int, swapped_blocks: int = 0
) -> float: ...
@overload
def step_time_s(
    server: ServerConfig, *, scheduled_tokens: ArrayLike, context_tokens: ArrayLike, swapped_blocks: ArrayLike = 0
) -> np.ndarray: ...
def step_time_s(
    server: ServerConfig, *, scheduled_tokens: ArrayLike, context_tokens: ArrayLike, swapped_blocks: ArrayLike = 0
) -> np.ndarray | float:
    """Seconds one scheduler step takes: the longer of its reads and its compute, plus swaps.

    Formula (roofline, seed 004 and :mod:`kvcore.timing`):
    max(weights_read_s + kv_read_s_per_token · context, compute_s_per_token · tokens)
    + swap_s_per_block · blocks swapped, where context counts the cached tokens
    the batch's attention reads (each scheduled request's computed + new tokens).
    Python ints give a Python float (the simulator's one step: numpy's scalar arithmetic
    would cost more than the step's own scheduling), arrays an array; the same
    operations in the same order, so the same bits either way.

    >>> step_time_s(ServerConfig(num_blocks=1), scheduled_tokens=1, context_tokens=0)
    0.006
    """
    longer: Callable[[Any, Any], Any] = max
    if not (type(scheduled_tokens) is int and type(context_tokens) is int and type(swapped_blocks) is int):
        longer = np.maximum  # a Python int stays one: float · int rounds it as the array's conversion would
        scheduled_tokens, context_tokens, swapped_blocks = (
            count if type(count) is int else np.asarray(count, dtype=float)
            for count in (scheduled_tokens, context_tokens, swapped_blocks)
        )
    memory_s = server.weights_read_s + server.kv_read_s_per_token * context_tokens
    compute_s = server.compute_s_per_token * scheduled_tokens
    return longer(memory_s, compute_s) + server.swap_s_per_block * swapped_blocks


def blocks_for_no_preemption(
    *, max_num_seqs: int, max_request_tokens: ArrayLike, block_size: int = DEFAULT_BLOCK_SIZE
) -> int:
    """Blocks that hold `max_num_seqs` requests at full length at once: no preemption can happen.

    Formula: max_num_seqs · ceil(max(request tokens) / block_size). A request of
    prompt P and output O holds at most ceil((P + O − 1) / block_size) blocks (the
    last sampled token is never cached), and at most max_num_seqs run together.
    Pass ``prompt_tokens + output_tokens`` of a trace, or max_model_len.

    >>> blocks_for_no_preemption(max_num_seqs=4, max_request_tokens=[100, 1000])
    252
    """
    seqs = checks.whole("max_num_seqs", max_num_seqs)
    size = checks.whole("block size (tokens)", block_size)
    longest = np.asarray(max_request_tokens, dtype=float)
    checks.positive("request length (tokens)", longest)
    return seqs * math.ceil(float(longest.max()) / size)


def server_from_model(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    kv_pool_bytes: float,
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_num_seqs: int = DEFAULT_MAX_NUM_SEQS,
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS,
    kv_bytes_per_value: float = 2.0,
    weights_dtype: str | None = None,
    weight_bytes_per_param: float | None = None,
    mbu: float = TYPICAL_MBU,
    mfu: float = TYPICAL_MFU,
    swap_bytes_per_s: float = 25e9,
    preemption_mode: PreemptionMode = "recompute",
) -> ServerConfig:
    """A server for `model` on one `gpu` whose KV pool is `kv_pool_bytes`.

    num_blocks = floor(pool / (block_size · KV bytes per token)) (``kvcore.num_blocks``);
    the step costs are the two roofline terms of :func:`kvcore.timing.phase_times` on
    ``rates_for(gpu, weights_dtype)`` (the matmul peak of the weights' format: FP8 tensor
    cores for FP8 weights where the chip has them, else BF16):
    weights_read_s = active params · b_w / (bandwidth · MBU) [s];
    kv_read_s_per_token = KV bytes per token / (bandwidth · MBU) [s];
    compute_s_per_token = 2 · active params / (peak · MFU) [s] (attention FLOPs left out);
    swap_s_per_block = block bytes / swap bandwidth [s] (PCIe 4.0 x16 moves about 25 GB/s).
    `weights_dtype` defaults to the checkpoint's (``model.weights_dtype``), b_w to its bytes
    per value; MBU and MFU to ``TYPICAL_MBU`` and ``TYPICAL_MFU``. Every layer's cache grows
    with every token here, as for full attention: sliding-window and linear layers would
    need fewer blocks.
    """
    weights_format = weights_dtype or model.weights_dtype
    rates = rates_for(gpu, weights_dtype=weights_format, mfu=mfu, mbu=mbu)
    b_w = bytes_per_value(weights_format) if weight_bytes_per_param is None else weight_bytes_per_param
    checks.positive("swap bandwidth (bytes/s)", swap_bytes_per_s)
    if model.active_params is None:
        raise KvError(
            "params_unknown",
            f"the parameter count of {model.name!r} is unknown: the step time needs it",
            model=model.name,
        )
    per_block = kvcore.block_bytes(model, block_size=block_size, bytes_per_value=kv_bytes_per_value)
    blocks = int(kvcore.num_blocks(kv_pool_bytes=kv_pool_bytes, block_bytes=per_block))
    if blocks < 1:
        raise KvError(
            "pool_holds_no_block",
            f"a KV pool of {kv_pool_bytes:.0f} bytes holds no block of {per_block:.0f} bytes",
            kv_pool_bytes=kv_pool_bytes,
            block_bytes=per_block,
        )
    # One read of the active weights per step; one processed token (2 FLOPs per active parameter) and one cached token.
    weights = phase_times(0.0, model.active_params * b_w, rates=rates)
    per_token = phase_times(
        2.0 * model.active_params, kvcore.kv_bytes_per_token(model, bytes_per_value=kv_bytes_per_value), rates=rates
    )
    return ServerConfig(
        num_blocks=blocks,
        block_size=block_size,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        weights_read_s=float(weights.memory_s),
        kv_read_s_per_token=float(per_token.memory_s),
        compute_s_per_token=float(per_token.compute_s),
        swap_s_per_block=per_block / swap_bytes_per_s,
        preemption_mode=preemption_mode,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeline:
    """The engine over time: one row per step (or per fast-forwarded run of decode steps).

    ``time_s`` is when the row's last step ends; ``used_blocks`` the blocks held
    during that step (the most of the row: blocks only grow within a run, and the
    requests that finish free theirs after it); ``running``, ``waiting`` (swapped
    requests included) and ``swapped`` are counted after it; ``preemptions`` is
    cumulative; ``steps`` says how many steps the row covers and
    ``scheduled_tokens`` how many tokens they processed.
    """

    time_s: np.ndarray
    steps: np.ndarray
    used_blocks: np.ndarray
    running: np.ndarray
    waiting: np.ndarray
    swapped: np.ndarray
    preemptions: np.ndarray
    scheduled_tokens: np.ndarray


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestOutcomes:
    """What each request lived through, in trace order.

    ``itl_std_s`` and ``itl_max_s`` are the standard deviation and the largest of
    its inter-token gaps (the jitter a reader sees: a preemption shows as one long
    gap); NaN for a request of one output token. ``recomputed_tokens`` are tokens
    prefilled again after recompute preemptions, exactly: Σ over its preemptions of
    (tokens computed when preempted − tokens found in the prefix cache when it came
    back); ``SimulationResult.reused_tokens`` holds the second term.
    """

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    generated_tokens: np.ndarray
    preemptions: np.ndarray
    recomputed_tokens: np.ndarray
    itl_std_s: np.ndarray
    itl_max_s: np.ndarray

    @property
    def ttft_s(self) -> np.ndarray:
        """Time to first token: first token − arrival [s]."""
        return self.first_token_s - self.arrival_s

    @property
    def e2e_s(self) -> np.ndarray:
        """End-to-end latency: finish − arrival [s]."""
        return self.finish_s - self.arrival_s

    @property
    def tpot_s(self) -> np.ndarray:
        """Time per output token after the first: (finish − first token) / (generated − 1) [s]; NaN for one token.

        The definition of vLLM's benchmark_serving.py (the mean inter-token gap).
        """
        gaps = (self.generated_tokens - 1).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(gaps > 0, (self.finish_s - self.first_token_s) / gaps, np.nan)


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulationResult:
    """A finished simulation: the timeline, every request's outcome, and the pool it ran on.

    Per request, in trace order: ``reused_tokens``, the tokens its resumptions found in
    the prefix cache (``prefix_caching``; block_size · the leading full blocks still
    hashed, vLLM's ``get_computed_blocks``), so that computed-when-preempted =
    ``recomputed_tokens`` + ``reused_tokens`` summed over its preemptions; and
    ``swap_preemptions``, how many of its preemptions swapped (the rest recomputed).
    """

    timeline: Timeline
    requests: RequestOutcomes
    num_blocks: int
    block_size: int
    preemption_mode: str
    reused_tokens: np.ndarray
    swap_preemptions: np.ndarray


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulationSummary:
    """The figures a reader compares between runs (seconds, tokens, counts)."""

    preemptions: int
    p50_ttft_s: float
    p99_ttft_s: float
    mean_tpot_s: float
    p99_tpot_s: float
    mean_itl_std_s: float
    makespan_s: float
    output_tokens_per_s: float
    peak_used_blocks: int
    recomputed_tokens: int


def summarize(result: SimulationResult) -> SimulationSummary:
    """Totals and percentiles of a run: preemptions, TTFT p50/p99, TPOT mean/p99, jitter, throughput.

    Throughput = Σ generated tokens / (last finish − first arrival). TPOT and
    jitter are averaged over requests of two or more output tokens (NaN if none).
    """
    outcome = result.requests
    tpot = outcome.tpot_s
    multi = np.isfinite(tpot)
    makespan = float(outcome.finish_s.max() - outcome.arrival_s.min())
    return SimulationSummary(
        preemptions=int(outcome.preemptions.sum()),
        p50_ttft_s=float(np.percentile(outcome.ttft_s, 50)),
        p99_ttft_s=float(np.percentile(outcome.ttft_s, 99)),
        mean_tpot_s=float(tpot[multi].mean()) if multi.any() else math.nan,
        p99_tpot_s=float(np.percentile(tpot[multi], 99)) if multi.any() else math.nan,
        mean_itl_std_s=float(outcome.itl_std_s[multi].mean()) if multi.any() else math.nan,
        makespan_s=makespan,
        output_tokens_per_s=float(outcome.generated_tokens.sum()) / makespan if makespan > 0 else math.inf,
        peak_used_blocks=int(result.timeline.used_blocks.max()),
        recomputed_tokens=int(outcome.recomputed_tokens.sum()),
    )


def simulate(requests: Requests, server: ServerConfig, *, fast_forward: bool = True) -> SimulationResult:
    """Serve `requests` on `server` step by step until every request has finished.

    Algorithm: vLLM V1's ``schedule`` (module docstring) in a loop; time jumps to
    the next arrival when the engine is idle, and a step lasts ``step_time_s``.
    A request's tokens are its prompt plus what it generated; a step that brings
    its computed tokens level with its tokens samples one more token. Deterministic:
    the same inputs give the same result. Raises KvError (a ValueError) when one
    request at full length needs more blocks than the pool has (vLLM refuses to
    start then). The server's rules (``reserve_full_prompt``, ``prefix_caching``,
    ``swap_only_multi_sequence``: ``ServerConfig``) switch vLLM's admission gate,
    prefix-cache reuse after preemption and V0's swap rule on.

    >>> trace = Requests(arrival_s=[0.0], prompt_tokens=[20], output_tokens=[3])
    >>> result = simulate(trace, ServerConfig(num_blocks=2))
    >>> result.requests.generated_tokens.tolist(), result.timeline.used_blocks.tolist()
    ([3], [2, 2])
    """
    bs = server.block_size
    longest = int(((requests.prompt_tokens + requests.output_tokens - 1 + bs - 1) // bs).max())
    if longest > server.num_blocks:
        raise KvError(
            "request_exceeds_pool",
            f"the longest request needs {longest} blocks at full length but the pool has {server.num_blocks}: "
            "give more blocks or a shorter max_model_len (vLLM refuses to start in this case)",
            blocks_needed=longest,
            num_blocks=server.num_blocks,
        )
    return _Engine(requests, server).run(fast_forward=fast_forward)


# ---------------------------------------------------------------- the engine's state


@dataclass(slots=True)
class _RequestState:
    """Every request's counters, one int64 or float array per field, indexed by request id (trace order).

    The fields of vLLM's ``Request`` (vllm/v1/request.py) that scheduling reads, as
    columns so that a whole batch updates in one numpy operation:
    ``tokens`` = prompt + generated (``num_tokens``); ``computed`` = tokens whose K
    and V are in the cache (``num_computed_tokens``); ``generated``
    (``num_output_tokens``) of ``output_tokens`` to make; ``cpu_blocks`` swapped out to
    CPU memory (its blocks in the pool are not kept: a running request holds
    ceil(computed / block_size), ``_Engine``, a waiting one none); ``cached_blocks``, while it
    waits after a recompute preemption, its leading full blocks still hashed in the
    pool (prefix caching); ``sequences`` (n, V0's preemption rule). Then what it lived
    through: ``preemptions``, ``swaps`` (those by swap), ``recomputed_tokens`` and
    ``reused_tokens`` (prefix-cache hits on resumption), the times of its first and last token
    and of its finish (s, NaN until then), and its inter-token gaps as a sum, a
    sum of squares and a maximum (s, s², s).

    The counters a step changes (``_HOT_COUNTS``, ``_HOT_TIMES``) are the rows of one
    int64 matrix, ``hot``: the counts, then the times as float64 bit patterns (``hot_times``
    is their float64 view), then two rows that never change, ``output_tokens`` and the
    request's id; the named fields are views of its rows. While a request runs, its
    column of ``hot`` lives in ``_RunningColumns``: copied there, and back here when it
    leaves the running list, in one move. ``cpu_blocks`` and
    ``cached_blocks``, which only admission and preemption read one request at a time,
    are Python lists (a numpy scalar read costs more than a list's).
    """

    hot: np.ndarray
    hot_times: np.ndarray
    output_tokens: np.ndarray
    tokens: np.ndarray
    computed: np.ndarray
    generated: np.ndarray
    cpu_blocks: list[int]
    cached_blocks: list[int]
    sequences: np.ndarray
    preemptions: np.ndarray
    swaps: np.ndarray
    recomputed_tokens: np.ndarray
    reused_tokens: np.ndarray
    first_token_s: np.ndarray
    last_token_s: np.ndarray
    finish_s: np.ndarray
    gap_sum_s: np.ndarray
    gap_sq_sum_s: np.ndarray
    gap_max_s: np.ndarray

    @classmethod
    def arriving(cls, requests: Requests) -> _RequestState:
        """Every request before it arrives: its prompt, nothing computed, generated or held."""
        n = len(requests)
        hot = np.zeros((_COLUMN_ROWS, n), dtype=np.int64)
        hot_counts, hot_times = hot[: len(_HOT_COUNTS)], hot[len(_HOT_COUNTS) : _HOT_ROWS].view(np.float64)
        hot_counts[_TOKENS] = requests.prompt_tokens
        hot_times[[_FIRST, _LAST]] = np.nan
        hot[_OUTPUT], hot[_ID] = requests.output_tokens, np.arange(n)
        return cls(
            hot=hot,
            hot_times=hot_times,
            output_tokens=hot[_OUTPUT],
            sequences=requests.sequences_per_request,
            finish_s=np.full(n, np.nan),
            **dict(zip(_HOT_COUNTS, hot_counts, strict=True)),
            **dict(zip(_HOT_TIMES, hot_times, strict=True)),
            **{name: np.zeros(n, dtype=np.int64) for name in _COLD_COUNTS},
            cpu_blocks=[0] * n,
            cached_blocks=[0] * n,
        )

    def outcomes(self, requests: Requests) -> RequestOutcomes:
        """What each request lived through; jitter = √(mean of gap² − mean gap²) over its generated − 1 gaps."""
        gaps = (self.generated - 1).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_gap = self.gap_sum_s / gaps
            itl_std = np.sqrt(np.maximum(self.gap_sq_sum_s / gaps - mean_gap**2, 0.0))
        return RequestOutcomes(
            arrival_s=requests.arrival_s.copy(),
            prompt_tokens=requests.prompt_tokens.copy(),
            output_tokens=requests.output_tokens.copy(),
            first_token_s=self.first_token_s.copy(),
            finish_s=self.finish_s,
            generated_tokens=self.generated.copy(),
            preemptions=self.preemptions,
            recomputed_tokens=self.recomputed_tokens,
            itl_std_s=np.where(gaps > 0, itl_std, np.nan),
            itl_max_s=np.where(gaps > 0, self.gap_max_s, np.nan),
        )


#: The integer counters of ``_RequestState`` that a running request changes every step (first rows of ``hot``).
_HOT_COUNTS = ("tokens", "generated", "computed")
#: Its times that a step changes (rows of ``hot_times``).
_HOT_TIMES = ("first_token_s", "last_token_s", "gap_sum_s", "gap_sq_sum_s", "gap_max_s")
#: Its other integer counters, which start at zero.
_COLD_COUNTS = ("preemptions", "swaps", "recomputed_tokens", "reused_tokens")
#: Rows of ``_RequestState.hot``: the hot counters, then the hot times (as int64 bit patterns).
_HOT_ROWS = len(_HOT_COUNTS) + len(_HOT_TIMES)
#: Rows of ``_RequestState.hot`` and ``_RunningColumns.counts``: the hot counters, then (after the
#: times) each request's output length and id.
_TOKENS, _GENERATED, _COMPUTED = range(len(_HOT_COUNTS))
_OUTPUT, _ID = _HOT_ROWS, _HOT_ROWS + 1
_COLUMN_ROWS = _HOT_ROWS + 2
#: Rows of ``_RunningColumns.times``.
_FIRST, _LAST, _GAP_SUM, _GAP_SQ_SUM, _GAP_MAX = range(len(_HOT_TIMES))
#: The rows ``_TOKENS`` and ``_GENERATED`` as one view (a sampled token adds to both).
_TOKENS_AND_GENERATED = slice(_TOKENS, _GENERATED + 1)
#: The columns of a timeline row, in ``Timeline``'s order after ``time_s``.
_ROW = ("steps", "used_blocks", "running", "waiting", "swapped", "preemptions", "scheduled_tokens")


@dataclass(slots=True)
class _RunningColumns:
    """The running requests' hot counters side by side, oldest first: column i is ``_Engine.running[i]``.

    vLLM keeps them on each ``Request``; here the batch's counters are contiguous rows
    so that a step updates them with whole-row numpy operations, without gathering or
    scattering by request id. ``counts`` holds the rows of ``_RequestState.hot``
    (``_TOKENS`` … ``_COMPUTED``, the times, ``_OUTPUT``, ``_ID``); ``times`` is the
    float64 view of its time rows (``_FIRST`` … ``_GAP_MAX``);
    the first ``size`` columns are in use. A request's column is copied in when it is
    admitted and back when it leaves (preempted or finished), one move for all its rows.
    """

    counts: np.ndarray
    times: np.ndarray
    size: int = 0

    @classmethod
    def empty(cls, capacity: int) -> _RunningColumns:
        """Room for `capacity` running requests (``max_num_seqs``), none running."""
        counts = np.zeros((_COLUMN_ROWS, capacity), dtype=np.int64)
        return cls(counts=counts, times=counts[len(_HOT_COUNTS) : _HOT_ROWS].view(np.float64))

    def push(self, state: _RequestState, rid: int, *, computed: int) -> None:
        """Request `rid` joins the back of the running list: its counters become the last column.

        It is admitted with `computed` tokens (its scheduled ones included).
        """
        column, counts = self.size, self.counts
        counts[:, column] = state.hot[:, rid]
        counts[_COMPUTED, column] = computed
        self.size = column + 1

    def pop(self, state: _RequestState, rid: int) -> None:
        """The newest request, `rid`, leaves: its counters go back to `state`."""
        self.size -= 1
        state.hot[:, rid] = self.counts[:, self.size]

    def remove(self, state: _RequestState, leaving: list[int]) -> None:
        """The requests in columns `leaving` (ascending) leave; their counters go back to `state`.

        The others keep their order: the stretches between the gaps move left, one slice each.
        """
        counts = self.counts
        write = leaving[0]
        for column, end in zip(leaving, [*leaving[1:], self.size], strict=True):
            state.hot[:, counts[_ID, column]] = counts[:, column]
            stretch = end - column - 1
            counts[:, write : write + stretch] = counts[:, column + 1 : end]
            write += stretch
        self.size = write


@dataclass(slots=True)
class _Batch:
    """One step's schedule: vLLM's ``SchedulerOutput`` reduced to what the simulation needs.

    The scheduled requests are always the first ``size`` of the running list (running
    ones are scheduled oldest first, and admitted ones join its back only when every
    running one was); their tokens (``num_scheduled_tokens``) are already counted in
    their computed tokens, as vLLM's ``_update_after_schedule`` does. ``token_budget`` is
    what is left of ``max_num_batched_tokens``; ``swapped_blocks`` the blocks copied
    between GPU and CPU memory in this step; ``preempted`` is true once a request lost
    its blocks. ``partial`` is true when the last scheduled request got fewer tokens than
    it misses (the budget ran out on it): it samples nothing, every other one does.
    """

    token_budget: int
    size: int = 0
    swapped_blocks: int = 0
    preempted: bool = False
    partial: bool = False

    def add(self, tokens: int, requests: int = 1, *, missing: int = 0) -> None:
        """Schedule the next `requests` running requests with `tokens` tokens in all: they come out of the budget.

        `missing`: the tokens one request lacked; more than `tokens` makes the batch partial.
        """
        self.size += requests
        self.token_budget -= tokens
        self.partial = missing > tokens


def _count_within(amounts: np.ndarray, limit: int) -> int:
    """How many of the leading non-negative `amounts` fit in `limit` together: the largest i with Σ_{j < i} ≤ limit."""
    return int(np.add.accumulate(amounts).searchsorted(limit, side="right"))


def _all_decoding(tokens: np.ndarray, computed: np.ndarray, generated: np.ndarray) -> bool:
    """Whether every running request is decoding: one token to compute, at least one generated."""
    return bool(np.logical_and.reduce(tokens - computed == 1)) and bool(np.logical_and.reduce(generated > 0))


@dataclass(slots=True)
class _DecodeRun:
    """A run of identical decode steps (``_Engine._decode_run``) and what finding it already computed.

    ``step_times_s``: the times of at least its ``steps`` steps, if the arrival check
    computed them; ``blocks``: the blocks the running requests hold at the run's end (the
    blocks check computed them). ``finishes``: some request makes its last token in the
    run's last step (the run stopped at the first finish).
    """

    steps: int
    step_times_s: np.ndarray | None
    blocks: int
    finishes: bool


class _Engine:
    """vLLM's engine on a simulated clock: a pool of blocks, a waiting queue, a running list, the requests.

    ``waiting`` is a deque of request ids served from the front (FCFS; preempted
    requests go back to the front); ``running`` is oldest first, so ``pop()`` takes
    the newest, and ``columns`` holds the running requests' counters in that order.
    ``free_blocks`` is the pool's free count (vllm/v1/core/block_pool.py,
    ``get_num_free_blocks``: cached blocks included); with prefix caching,
    ``fresh_blocks`` of them hold no hash and ``cached_runs`` lists the hashed ones as
    runs ``[owner, count]`` in the order they were freed (the LRU order of the free
    queue; owner −1 for finished requests), ``run_of`` maps a waiting request to its run.
    ``preemptions`` and ``swapped`` (requests whose blocks are in CPU memory) are
    engine-wide counts; ``rows`` the timeline so far. ``computed_tokens`` is Σ computed
    over the running requests. A running request holds ceil(computed / block_size)
    blocks: its computed tokens only grow with the blocks for them (``_chunk``,
    ``_schedule_whole``, ``_fast_forward``) and leave with them (``_preempt``,
    ``_finish``), so num_blocks − free_blocks = Σ ceil(computed / block_size) over the
    running requests (cached blocks count as free). ``all_decoding`` is true when the
    last step scheduled and sampled every running request (so each has exactly one
    token to compute, has generated one and made it at ``now_s``); false says nothing.
    """

    def __init__(self, requests: Requests, server: ServerConfig) -> None:
        self.requests, self.server = requests, server
        self.num_requests, self.block_size = len(requests), server.block_size
        self.arrival_s: list[float] = requests.arrival_s.tolist()
        self.swap = server.preemption_mode == "swap"
        self.prefix_caching = server.prefix_caching
        self.state = _RequestState.arriving(requests)
        self.waiting: deque[int] = deque()
        self.running: list[int] = []
        self.columns = _RunningColumns.empty(min(server.max_num_seqs, self.num_requests))
        self.free_blocks = server.num_blocks
        self.fresh_blocks = server.num_blocks
        self.cached_runs: deque[list[int]] = deque()
        self.run_of: dict[int, list[int]] = {}
        self.now_s = 0.0
        self.next_arrival = 0
        self.finished = 0
        self.preemptions = 0
        self.swapped = 0
        self.computed_tokens = 0
        self.all_decoding = False
        self.rows: list[tuple[float, int, int, int, int, int, int, int]] = []

    def run(self, *, fast_forward: bool) -> SimulationResult:
        """Step until every request has finished; an idle engine jumps to the next arrival.

        Each step ends by letting in the requests that arrived during it (``_step``).
        """
        while self.finished < self.num_requests:
            if not self.running and not self.waiting:
                self.now_s = self.arrival_s[self.next_arrival]
                self._add_arrivals()
            self._step(fast_forward)
        return self._result()

    def _add_arrivals(self) -> None:
        """Requests that have arrived by now join the back of the waiting queue (vLLM's ``add_request``)."""
        arrival, n = self.arrival_s, self.num_requests
        while self.next_arrival < n and arrival[self.next_arrival] <= self.now_s:
            self.waiting.append(self.next_arrival)
            self.next_arrival += 1

    def _step(self, fast_forward: bool) -> None:
        """One timeline row: a fast-forwarded run of decode steps, or one scheduled step; then finish and admit.

        ``used_blocks`` is read during the step, before finished requests free theirs.
        """
        run = self._decode_run() if fast_forward and self.running else None
        previous_s = self.now_s if self.all_decoding else None  # every running request's last token came now
        if run:
            steps = run.steps
            scheduled_tokens, done = self._fast_forward(run, previous_s)
            self.all_decoding = True
        else:
            steps, running = 1, len(self.running)
            batch = self._schedule()
            scheduled_tokens = self.server.max_num_batched_tokens - batch.token_budget
            # with nobody admitted, the requests that sample are among those that ran before
            done = self._execute(batch, scheduled_tokens, previous_s if len(self.running) <= running else None)
            # every running request was scheduled and sampled: each has one token to compute
            self.all_decoding = batch.size == len(self.running) and not batch.partial
        used_blocks = self.server.num_blocks - self.free_blocks
        self._finish(done)
        self._add_arrivals()
        self.rows.append(
            (self.now_s, steps, used_blocks, len(self.running), len(self.waiting), self.swapped,
             self.preemptions, scheduled_tokens)
        )  # fmt: skip

    # ------------------------------------------------------------ scheduling (vLLM V1's Scheduler.schedule)

    def _schedule(self) -> _Batch:
        """vLLM V1's ``Scheduler.schedule``: the RUNNING requests first, then WAITING ones if nobody was preempted."""
        batch = _Batch(token_budget=self.server.max_num_batched_tokens)
        if self.running:
            self._schedule_running(batch)
        if not batch.preempted:
            self._schedule_waiting(batch)
        return batch

    def _schedule_running(self, batch: _Batch) -> None:
        """'First, schedule the RUNNING requests' (oldest first): their missing tokens, up to the budget.

        Request by request, each gets min(tokens − computed, budget left) tokens and
        their blocks; when the blocks are not free it preempts the newest running
        request, again and again (vLLM's ``allocate_slots`` loop). Scheduling stops
        when the budget is spent or a request had to preempt itself. Stretches of
        requests that fit whole are scheduled in one vectorised move
        (``_schedule_whole``): usually the whole batch. After a step that sampled every
        running request (``all_decoding``), each misses exactly one token. A running
        request holds ceil(computed / block_size) blocks (``_Engine``).
        """
        counts, decoding, bs = self.columns.counts, self.all_decoding, self.block_size
        index = 0
        while index < len(self.running) and batch.token_budget > 0:
            index += self._schedule_whole(index, batch, decoding=decoding)  # preemption only shortens running
            if index == len(self.running) or batch.token_budget == 0:
                return
            rid = self.running[index]
            tokens, _, computed = counts[: _COMPUTED + 1, index].tolist()
            count, blocks = self._chunk(tokens - computed, computed, (computed + bs - 1) // bs, batch.token_budget)
            if blocks > self.free_blocks and not self._make_room(rid, blocks, batch):
                return
            self._take(blocks)
            counts[_COMPUTED, index] += count
            self.computed_tokens += count
            batch.add(count, missing=tokens - computed)
            index += 1

    def _schedule_whole(self, start: int, batch: _Batch, *, decoding: bool) -> int:
        """Schedule the longest stretch of running requests from `start` whose missing tokens and new blocks all fit.

        Request i of the stretch fits when Σ_{j ≤ i} new_j ≤ budget and Σ_{j ≤ i} blocks_j
        ≤ free blocks (both sums only grow, so the requests that fit are a prefix):
        exactly what the one-by-one loop would give them. new = tokens − computed,
        blocks = ceil(tokens / block_size) − held, where a running request holds
        ceil(computed / block_size) (``_Engine``: from `start` = 0, all the blocks not
        free); returns the stretch's length. `decoding`: each of them misses one token
        (new = 1, tokens = computed + 1).
        """
        bs, counts, end = self.block_size, self.columns.counts, len(self.running)
        computed = counts[_COMPUTED, start:end]
        new: np.ndarray | None = None  # None: one token each
        if decoding:
            new_total, blocks = end - start, self._blocks_after(computed, 1)
        else:
            tokens = counts[_TOKENS, start:end]
            new = tokens - computed
            blocks = (tokens + (bs - 1)) // bs
            new_total = int(np.add.reduce(new))
        if start:
            held_total = int(np.add.reduce(self._blocks_after(computed, 0)))
        else:
            held_total = self.server.num_blocks - self.free_blocks
        need_total = int(np.add.reduce(blocks)) - held_total
        if new_total > batch.token_budget or need_total > self.free_blocks:
            need = blocks - self._blocks_after(computed, 0)
            within_budget = batch.token_budget if new is None else _count_within(new, batch.token_budget)
            fitting = min(within_budget, _count_within(need, self.free_blocks))
            if not fitting:
                return 0
            computed = computed[:fitting]
            new = None if new is None else new[:fitting]
            new_total = fitting if new is None else int(np.add.reduce(new))
            need_total = int(np.add.reduce(need[:fitting]))
        self._take(need_total)
        computed += 1 if new is None else new
        self.computed_tokens += new_total
        batch.add(new_total, computed.size)
        return computed.size

    def _schedule_waiting(self, batch: _Batch) -> None:
        """'Next, schedule the WAITING requests': FCFS while the budget lasts and fewer than max_num_seqs run.

        The head of the queue gets a chunk of its tokens and the blocks for it; when
        they are not free (or, with ``reserve_full_prompt``, not all its tokens' blocks:
        ``_fits``), admission stops (head-of-line blocking: no later request jumps the
        queue). A swapped-out request brings its blocks back (V0's ``_swap_in``) and
        keeps its computed tokens; a recomputed one takes back its blocks still in the
        prefix cache (``_resume_from_cache``).
        """
        s = self.state
        while self.waiting and batch.token_budget > 0 and len(self.running) < self.server.max_num_seqs:
            rid = self.waiting[0]
            missing, computed = self._missing_tokens(rid)
            count, blocks = self._chunk(missing, computed, 0, batch.token_budget)  # a waiting request holds none
            if not self._fits(missing + computed, blocks):
                return
            self.waiting.popleft()
            if s.cpu_blocks[rid]:
                batch.swapped_blocks += s.cpu_blocks[rid]
                s.cpu_blocks[rid] = 0
                self.swapped -= 1
            self._take(blocks - self._resume_from_cache(rid))  # allocate_slots: the others are new
            self.running.append(rid)
            self.columns.push(s, rid, computed=computed + count)
            self.computed_tokens += computed + count
            batch.add(count, missing=missing)

    def _fits(self, tokens: int, blocks: int) -> bool:
        """Whether a waiting request of `tokens` tokens may start with `blocks` blocks (``allocate_slots``).

        Its chunk's blocks must be free; with ``reserve_full_prompt`` also
        ceil(`tokens` / block_size), the blocks of its whole sequence (vLLM's
        ``full_sequence_must_fit``; prefix-cache hits count, as touching them empties
        their slot in the free queue).
        """
        if blocks > self.free_blocks:
            return False
        if not self.server.reserve_full_prompt:
            return True
        return (tokens + self.block_size - 1) // self.block_size <= self.free_blocks

    def _chunk(self, missing: int, computed: int, held: int, token_budget: int) -> tuple[int, int]:
        """Tokens a request gets this step and the blocks they take from the free pool.

        new = min(tokens − computed (`missing`), budget left); blocks = max(ceil((computed
        + new) / block_size) − blocks held, 0).
        """
        bs = self.block_size
        count = min(missing, token_budget)
        return count, max((computed + count + bs - 1) // bs - held, 0)

    def _missing_tokens(self, rid: int) -> tuple[int, int]:
        """Waiting request `rid`'s tokens still to compute, and those it starts from: (tokens − computed, computed).

        One coming back with h leading blocks in the prefix cache starts at computed =
        h · block_size (vLLM's ``get_computed_blocks``); its h blocks are among the ones
        ``_chunk`` counts as taken.
        """
        s = self.state
        computed = int(s.computed[rid]) + s.cached_blocks[rid] * self.block_size
        return int(s.tokens[rid]) - computed, computed

    def _take(self, blocks: int) -> None:
        """Take `blocks` blocks off the free queue (``BlockPool.get_new_blocks``, vllm/v1/core/block_pool.py).

        It pops from the front: blocks that hold no hash first, then hashed ones,
        least recently freed first, whose hashes are evicted (``_maybe_evict_cached_block``):
        a waiting request whose run shrinks by k keeps k fewer leading blocks.
        """
        self.free_blocks -= blocks
        if not self.prefix_caching or not blocks:
            return
        fresh = min(blocks, self.fresh_blocks)
        self.fresh_blocks -= fresh
        rest = blocks - fresh
        while rest:
            run = self.cached_runs[0]
            taken = min(rest, run[1])
            run[1] -= taken
            rest -= taken
            if run[0] >= 0:
                self.state.cached_blocks[run[0]] -= taken
            if not run[1]:
                self.cached_runs.popleft()
                if run[0] >= 0:
                    self.run_of.pop(run[0], None)

    def _give_back(self, owner: int, held: int, hashed: int) -> None:
        """Return `held` blocks to the free queue (``BlockPool.free_blocks``); `hashed` of them are full and cached.

        With prefix caching the hashed ones join the END of the queue as one run of
        `owner` (its leading blocks; −1: a finished request, merged with a finished run
        before it), the others its front; without, they are all plain free blocks.
        """
        self.free_blocks += held
        if not self.prefix_caching:
            return
        self.fresh_blocks += held - hashed
        if not hashed:
            return
        if owner < 0 and self.cached_runs and self.cached_runs[-1][0] < 0:
            self.cached_runs[-1][1] += hashed
            return
        run = [owner, hashed]
        self.cached_runs.append(run)
        if owner >= 0:
            self.run_of[owner] = run
            self.state.cached_blocks[owner] = hashed

    def _resume_from_cache(self, rid: int) -> int:
        """Admitted request `rid` takes back its leading blocks still cached; how many (``BlockPool.touch``).

        They leave the free queue and count among the blocks it is admitted with; their
        h · block_size tokens count as computed (``_missing_tokens``) and as reused, not
        recomputed (``recomputed_tokens`` had counted them at preemption).
        """
        s = self.state
        hit = s.cached_blocks[rid]
        run = self.run_of.pop(rid, None)
        if run is not None:
            run[1] = 0  # an emptied run: _take drops it when it reaches the front
        if not hit:
            return 0
        reused = hit * self.block_size
        s.cached_blocks[rid] = 0
        self.free_blocks -= hit
        s.recomputed_tokens[rid] -= reused
        s.reused_tokens[rid] += reused
        return hit

    def _make_room(self, rid: int, blocks: int, batch: _Batch) -> bool:
        """Preempt the newest running requests until `blocks` are free; False when `rid` itself was preempted."""
        while blocks > self.free_blocks:
            victim = self.running.pop()
            self.columns.pop(self.state, victim)
            self._preempt(victim, batch)
            if victim == rid:
                return False
        return True

    def _preempt(self, victim: int, batch: _Batch) -> None:
        """Free the victim's blocks and put it at the front of the waiting queue (vLLM V1's ``_preempt_request``).

        recompute (V1's ``_preempt_request``, vllm/v1/core/sched/scheduler.py 0.33.0;
        V0's ``_preempt_by_recompute``): its computed tokens drop to 0 and count as
        recomputed; with prefix caching its computed // block_size full blocks stay
        hashed in the free queue (``_give_back``). swap (V0's ``_preempt_by_swap``,
        vllm/core/scheduler.py 0.6.6.post1): its blocks are copied to CPU memory in
        this step and it keeps its computed tokens; under ``swap_only_multi_sequence``
        only a request of more than one sequence swaps, as V0's ``_preempt`` chose
        when no preemption mode was given.
        """
        s = self.state
        batch.preempted = True
        self.preemptions += 1
        s.preemptions[victim] += 1
        computed = int(s.computed[victim])
        self.computed_tokens -= computed
        held = (computed + self.block_size - 1) // self.block_size  # a running request's blocks (_Engine)
        if self.swap and (not self.server.swap_only_multi_sequence or s.sequences[victim] > 1):
            self._give_back(victim, held, 0)
            s.cpu_blocks[victim] = held
            s.swaps[victim] += 1
            batch.swapped_blocks += held
            self.swapped += 1
        else:
            self._give_back(victim, held, computed // self.block_size if self.prefix_caching else 0)
            s.recomputed_tokens[victim] += computed
            s.computed[victim] = 0
        self.waiting.appendleft(victim)

    # ------------------------------------------------------------ the forward pass, sampling, finishing

    def _execute(self, batch: _Batch, scheduled_tokens: int, previous_s: float | None) -> np.ndarray:
        """Run the batch: the clock advances by ``step_time_s``; a mask of the running requests that finished.

        The context is the batch's computed tokens, its new ones included
        (``computed_tokens`` when the batch is every running request). A step that only
        swaps (every scheduled request preempted itself) still pays for the copies.
        `previous_s`: when every scheduled request made its previous token, if all at once (``_sample``).
        """
        if batch.size:
            if batch.size == len(self.running):
                context = self.computed_tokens
            else:
                context = int(np.add.reduce(self.columns.counts[_COMPUTED, : batch.size]))
            self.now_s += step_time_s(
                self.server,
                scheduled_tokens=scheduled_tokens,
                context_tokens=context,
                swapped_blocks=batch.swapped_blocks,
            )
            return self._sample(batch.size - batch.partial, previous_s=previous_s)
        if batch.swapped_blocks:
            self.now_s += step_time_s(
                self.server, scheduled_tokens=0, context_tokens=0, swapped_blocks=batch.swapped_blocks
            )
        return np.zeros(0, dtype=bool)

    def _sample(self, sampled: int, *, previous_s: float | None = None) -> np.ndarray:
        """One token for each of the first `sampled` running requests (their cache caught up); who finished.

        vLLM's ``update_from_output``: a request mid-prompt (the batch's last, when the
        budget cut its chunk) samples nothing; the gap since its previous token joins its
        jitter record (sum, sum of squares, max). Returns a mask over the first `sampled`.
        A first token sets the first-token time and has no gap: its last token time is
        NaN and fmin(NaN, now) = now, so it adds now − now = 0 to a record that is still
        all zeros. `previous_s`: the caller knows that all of them made their previous
        token then (the step before sampled every running request): one gap for all.
        """
        now, counts, times = self.now_s, self.columns.counts, self.columns.times
        if previous_s is None:
            first, last = times[_FIRST, :sampled], times[_LAST, :sampled]
            np.fmin(first, now, out=first)
            gap = now - np.fmin(last, now)
        else:
            gap = now - previous_s
        gap_sum, gap_sq_sum = times[_GAP_SUM, :sampled], times[_GAP_SQ_SUM, :sampled]
        gap_max = times[_GAP_MAX, :sampled]
        gap_sum += gap
        gap_sq_sum += gap * gap
        np.maximum(gap_max, gap, out=gap_max)
        times[_LAST, :sampled].fill(now)
        tokens_and_generated = counts[_TOKENS_AND_GENERATED, :sampled]
        tokens_and_generated += 1
        return counts[_GENERATED, :sampled] == counts[_OUTPUT, :sampled]

    def _finish(self, done: np.ndarray | None) -> None:
        """Requests that made their last token leave the batch and free their blocks at once (``_free_request``).

        `done` is a mask over the first running requests (those the step scheduled); None: nobody finished.
        """
        if done is None:
            return
        leaving = done.nonzero()[0].tolist()
        if not leaving:
            return
        s, bs, now, held, hashed, computed_total = self.state, self.block_size, self.now_s, 0, 0, 0
        self.columns.remove(s, leaving)
        for column in reversed(leaving):
            rid = self.running.pop(column)
            s.finish_s[rid] = now
            computed = int(s.computed[rid])
            computed_total += computed
            held += (computed + bs - 1) // bs  # a running request's blocks (_Engine)
            hashed += computed // bs
        self.computed_tokens -= computed_total
        self._give_back(-1, held, hashed if self.prefix_caching else 0)
        self.finished += len(leaving)

    # ------------------------------------------------------------ fast-forwarding runs of identical decode steps

    def _decode_run(self) -> _DecodeRun | None:
        """The run of identical decode steps that can go from now without any scheduling decision (None: schedule).

        All of these must hold: every running request is decoding (one token to
        compute, one already generated) and the budget covers them all; the head of
        the waiting queue cannot be admitted (too many running, no budget left, or its
        blocks not free: free blocks only shrink during the run); the run ends at the
        first finish, before the blocks run out, and, when nobody waits, before the
        step that would see the next arrival. The checks that need no array come first
        (``all_decoding`` spares the per-request check after a plain decode step).
        """
        count, budget = len(self.running), self.server.max_num_batched_tokens
        if count > budget or self._head_can_be_admitted(budget - count):
            return None
        counts = self.columns.counts
        computed, generated = counts[_COMPUTED, :count], counts[_GENERATED, :count]
        if not self.all_decoding and not _all_decoding(counts[_TOKENS, :count], computed, generated):
            return None
        steps = until_finish = int(np.minimum.reduce(counts[_OUTPUT, :count] - generated))
        durations = None
        if steps > 1 and not self.waiting and self.next_arrival < self.num_requests:
            durations = self._decode_step_times_s(count, steps)
            steps = self._steps_before_next_arrival(durations)
        steps, blocks = self._steps_before_blocks_run_out(computed, steps)
        return _DecodeRun(steps, durations, blocks, steps == until_finish) if steps else None

    def _head_can_be_admitted(self, token_budget: int) -> bool:
        """Whether the head of the waiting queue would be scheduled now, beside the running decodes."""
        if not self.waiting or len(self.running) >= self.server.max_num_seqs or token_budget <= 0:
            return False
        head = self.waiting[0]
        missing, computed = self._missing_tokens(head)
        _, blocks = self._chunk(missing, computed, 0, token_budget)
        return self._fits(missing + computed, blocks)

    def _steps_before_blocks_run_out(self, computed: np.ndarray, steps: int) -> tuple[int, int]:
        """The most decode steps, up to `steps`, whose new blocks the free pool holds (bisection; 0: not even one).

        A running request holds ceil(computed / block_size) blocks (``_Engine``) and every
        block no running request holds is free (cached ones included), so k steps fit when
        Σ ceil((computed + k) / block_size) ≤ num_blocks. Also that sum for the steps found
        (0 with them).
        """
        pool = self.server.num_blocks

        def blocks(k: int) -> int:
            return int(np.add.reduce(self._blocks_after(computed, k)))

        total = blocks(steps)
        if total <= pool:
            return steps, total
        if steps == 1 or (total := blocks(1)) > pool:
            return 0, 0
        low, high = 1, steps  # blocks(low) = total ≤ pool < blocks(high)
        while high - low > 1:
            mid = (low + high) // 2
            if (mid_total := blocks(mid)) <= pool:
                low, total = mid, mid_total
            else:
                high = mid
        return low, total

    def _blocks_after(self, computed: np.ndarray, steps: int) -> np.ndarray:
        """Each running request's blocks after `steps` more tokens: ceil((computed + steps) / block_size)."""
        bs = self.block_size
        return (computed + (steps + bs - 1)) // bs

    def _steps_before_next_arrival(self, durations: np.ndarray) -> int:
        """The decode steps, of at most len(`durations`), that start before the next request arrives.

        Step j + 1 starts when step j ends: after the sum of the first j `durations`.
        """
        wait_s = self.arrival_s[self.next_arrival] - self.now_s
        return 1 + int(np.add.accumulate(durations[:-1]).searchsorted(wait_s, side="left"))

    def _decode_step_times_s(self, count: int, steps: int) -> np.ndarray:
        """``step_time_s`` of decode steps j = 1 … `steps` of a run of the `count` running requests.

        Step j schedules one token per request and reads Σ computed (``computed_tokens``)
        + j · `count` cached tokens (``step_time_s``, no swap).
        """
        start = self.computed_tokens
        context = np.arange(start + count, start + count * steps + 1, count, dtype=float)  # whole numbers: exact
        return step_time_s(self.server, scheduled_tokens=count, context_tokens=context)

    def _fast_forward(self, run: _DecodeRun, previous_s: float | None) -> tuple[int, np.ndarray | None]:
        """Run the decode steps of `run` at once: one token for every running request per step; (tokens, finished).

        Step j reads j more cached tokens per request than the run's start; the first
        gap of each request runs from its last token (`previous_s` for all, if the caller
        knows it: ``_sample``), the others are the step times. Its blocks grow to
        ceil(computed / block_size) (``_take_run_blocks``). The finished mask is None when
        nobody finishes. A run of one step is ``_decode_step``.
        """
        steps, count = run.steps, len(self.running)
        if steps == 1:
            return self._decode_step(run.blocks, previous_s)
        counts = self.columns.counts
        times = self.columns.times
        gap_sum, gap_sq_sum, gap_max = times[_GAP_SUM, :count], times[_GAP_SQ_SUM, :count], times[_GAP_MAX, :count]
        durations = self._decode_step_times_s(count, steps) if run.step_times_s is None else run.step_times_s[:steps]
        rest = durations[1:]
        first_gap = self.now_s + float(durations[0]) - (times[_LAST, :count] if previous_s is None else previous_s)
        gap_sum += first_gap + float(np.add.reduce(rest))
        gap_sq_sum += first_gap * first_gap + float(np.add.reduce(rest * rest))
        np.maximum(gap_max, np.maximum(first_gap, float(np.maximum.reduce(rest))), out=gap_max)
        self.now_s += float(np.add.reduce(durations))
        decoded = counts[: _COMPUTED + 1, :count]  # tokens, generated, computed
        decoded += steps
        self.computed_tokens += count * steps
        times[_LAST, :count].fill(self.now_s)
        self._take_run_blocks(run.blocks)
        return count * steps, counts[_GENERATED, :count] == counts[_OUTPUT, :count] if run.finishes else None

    def _decode_step(self, blocks: int, previous_s: float | None) -> tuple[int, np.ndarray]:
        """One decode step of every running request without the scheduler's loops; (tokens, finished mask).

        The operations of a scheduled step (``_schedule_whole``, ``_execute``,
        ``_sample``) for a batch of decodes only, so the same bits. `blocks`: what the
        running requests hold after it (``_take_run_blocks``).
        """
        count = len(self.running)
        computed = self.columns.counts[_COMPUTED, :count]
        computed += 1
        self.computed_tokens += count
        self.now_s += step_time_s(self.server, scheduled_tokens=count, context_tokens=self.computed_tokens)
        self._take_run_blocks(blocks)
        return count, self._sample(count, previous_s=previous_s)

    def _take_run_blocks(self, blocks: int) -> None:
        """The running requests grow to `blocks` blocks in all: the new ones leave the free pool.

        `blocks` is Σ ceil(computed / block_size) after their new tokens
        (``_steps_before_blocks_run_out`` counted it). They held all the pool's blocks
        that are not free (``_Engine``): the new ones are `blocks` minus those.
        """
        self._take(blocks - (self.server.num_blocks - self.free_blocks))

    # ------------------------------------------------------------ the result

    def _result(self) -> SimulationResult:
        """The timeline (one column per row field), every request's outcome, and the pool."""
        columns = list(zip(*self.rows, strict=True))
        integer = {name: np.asarray(column, dtype=np.int64) for name, column in zip(_ROW, columns[1:], strict=True)}
        return SimulationResult(
            timeline=Timeline(time_s=np.asarray(columns[0], dtype=float), **integer),
            requests=self.state.outcomes(self.requests),
            num_blocks=self.server.num_blocks,
            block_size=self.block_size,
            preemption_mode=self.server.preemption_mode,
            reused_tokens=self.state.reused_tokens,
            swap_preemptions=self.state.swaps,
        )
