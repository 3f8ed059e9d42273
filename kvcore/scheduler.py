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
   (head-of-line blocking; no later request jumps the queue).

Preemption modes: ``recompute`` (the only one in vLLM V1) frees the victim's
blocks and resets its computed tokens to 0, so its prompt and every token it had
generated are prefilled again; ``swap`` (vLLM V0's ``PreemptionMode.SWAP``) copies
the blocks to CPU memory and back when the request is readmitted, at a transfer
cost per block, and keeps the computed tokens.

Simplifications, each on purpose:

* No prefix caching, speculative decoding, ``long_prefill_token_threshold`` or
  priority policy; every request ignores stop tokens and produces exactly its
  ``output_tokens`` (as benchmark clients ask with ``ignore_eos``).
* Swap: CPU swap space is unlimited, the transfer blocks the step that makes
  it, and a swapped request waits at the front of the single waiting queue (V0
  kept a separate swapped queue that it also served before new prompts).
* A step's time is a roofline of three parameters (see ``step_time_s``), not a
  kernel model; there is no CPU scheduling overhead and no pipelining of steps.
* Runs of identical decode steps (no arrival that could be admitted, no prompt,
  no finish, no preemption) are fast-forwarded in one vectorised move; the
  decisions are those of step-by-step simulation (``fast_forward=False``) and the
  times agree to float rounding (about 1e-13 s), and the
  timeline then has one row per run, whose ``steps`` column says how many.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from . import checks
from .hardware import GpuSpec
from .kv import kv_bytes_per_token
from .model import ModelSpec
from .vllm import DEFAULT_BLOCK_SIZE, DEFAULT_MAX_NUM_BATCHED_TOKENS, block_bytes, num_blocks

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
]

ArrayLike = Any
PreemptionMode = Literal["recompute", "swap"]
LengthDistribution = Literal["lognormal", "uniform", "fixed"]
PREEMPTION_MODES: tuple[str, ...] = ("recompute", "swap")
LENGTH_DISTRIBUTIONS: tuple[str, ...] = ("lognormal", "uniform", "fixed")
PRESETS: tuple[str, ...] = ("right-sized", "too-small")
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
        if self.distribution not in LENGTH_DISTRIBUTIONS:
            raise ValueError(
                f"length distribution must be one of {', '.join(LENGTH_DISTRIBUTIONS)}, got {self.distribution!r}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class Requests:
    """A trace: arrival time (s, non-decreasing), prompt and output length (tokens) of each request."""

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray

    def __post_init__(self) -> None:
        arrival = np.asarray(self.arrival_s, dtype=float)
        prompt = np.asarray(self.prompt_tokens)
        output = np.asarray(self.output_tokens)
        if not (arrival.ndim == prompt.ndim == output.ndim == 1) or not (arrival.size == prompt.size == output.size):
            raise ValueError(
                "arrival_s, prompt_tokens and output_tokens must be 1-D arrays of the same length, "
                f"got {arrival.shape}, {prompt.shape} and {output.shape}"
            )
        if arrival.size == 0:
            raise ValueError("the trace is empty: give at least one request")
        checks.positive("arrival time (s)", arrival, allow_zero=True)
        if np.any(np.diff(arrival) < 0):
            raise ValueError("arrival times must be sorted (non-decreasing): sort the trace by arrival_s")
        for name, values in (("prompt length (tokens)", prompt), ("output length (tokens)", output)):
            as_float = np.asarray(values, dtype=float) if values.dtype.kind in "iuf" else None
            if as_float is None or np.any(~np.isfinite(as_float) | (as_float < 1) | (as_float != np.round(as_float))):
                raise ValueError(f"every {name} must be a whole number ≥ 1")
        object.__setattr__(self, "arrival_s", arrival)
        object.__setattr__(self, "prompt_tokens", prompt.astype(np.int64))
        object.__setattr__(self, "output_tokens", output.astype(np.int64))

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
    return Requests(arrival_s=arrival, prompt_tokens=prompt, output_tokens=output)


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
            raise ValueError(f"preemption mode must be 'recompute' or 'swap', got {self.preemption_mode!r}")


def step_time_s(
    server: ServerConfig, *, scheduled_tokens: ArrayLike, context_tokens: ArrayLike, swapped_blocks: ArrayLike = 0
) -> np.ndarray:
    """Seconds one scheduler step takes: the longer of its reads and its compute, plus swaps.

    Formula (roofline, seed 004 and :mod:`kvcore.speed`):
    max(weights_read_s + kv_read_s_per_token · context, compute_s_per_token · tokens)
    + swap_s_per_block · blocks swapped, where context counts the cached tokens
    the batch's attention reads (each scheduled request's computed + new tokens).

    >>> float(step_time_s(ServerConfig(num_blocks=1), scheduled_tokens=1, context_tokens=0))
    0.006
    """
    memory_s = server.weights_read_s + server.kv_read_s_per_token * np.asarray(context_tokens, dtype=float)
    compute_s = server.compute_s_per_token * np.asarray(scheduled_tokens, dtype=float)
    return np.maximum(memory_s, compute_s) + server.swap_s_per_block * np.asarray(swapped_blocks, dtype=float)


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
    weight_bytes_per_param: float = 2.0,
    mbu: float = 0.8,
    mfu: float = 0.5,
    swap_bytes_per_s: float = 25e9,
    preemption_mode: PreemptionMode = "recompute",
) -> ServerConfig:
    """A server for `model` on one `gpu` whose KV pool is `kv_pool_bytes`.

    num_blocks = floor(pool / (block_size · KV bytes per token)) (``vllm.num_blocks``);
    weights_read_s = active params · b_w / (bandwidth · MBU);
    kv_read_s_per_token = KV bytes per token / (bandwidth · MBU);
    compute_s_per_token = 2 · active params / (BF16 dense FLOP/s · MFU) (attention
    FLOPs left out); swap_s_per_block = block bytes / swap bandwidth (PCIe 4.0 x16
    moves about 25 GB/s). Every layer's cache grows with every token here, as
    for full attention: sliding-window and linear layers would need fewer blocks.
    """
    checks.fraction("MBU", mbu)
    checks.fraction("MFU", mfu)
    checks.positive("swap bandwidth (bytes/s)", swap_bytes_per_s)
    if model.active_params is None:
        raise ValueError(f"the parameter count of {model.name!r} is unknown: the step time needs it")
    per_block = block_bytes(model, block_size=block_size, bytes_per_value=kv_bytes_per_value)
    blocks = int(num_blocks(kv_pool_bytes=kv_pool_bytes, block_bytes=per_block))
    if blocks < 1:
        raise ValueError(f"a KV pool of {kv_pool_bytes:.0f} bytes holds no block of {per_block:.0f} bytes")
    bandwidth = gpu.bandwidth_bytes_per_s * mbu
    return ServerConfig(
        num_blocks=blocks,
        block_size=block_size,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        weights_read_s=model.active_params * weight_bytes_per_param / bandwidth,
        kv_read_s_per_token=kv_bytes_per_token(model, bytes_per_value=kv_bytes_per_value) / bandwidth,
        compute_s_per_token=2.0 * model.active_params / (gpu.bf16_dense_flop_per_s * mfu),
        swap_s_per_block=per_block / swap_bytes_per_s,
        preemption_mode=preemption_mode,
    )


def preset(name: str) -> tuple[Workload, ServerConfig]:
    """A workload and a server to start from: 'right-sized' (no preemption) or 'too-small'.

    Both serve 1,000 lognormal requests (prompts 512 tokens, outputs 256 on
    average, spread 0.5) arriving at 20 per second, with max_num_seqs = 64.
    'right-sized' has ``blocks_for_no_preemption`` for the longest request of the
    trace (8,896 blocks); 'too-small' has 2,000 blocks (32,000 tokens): about what
    the ~42 requests in flight hold on average (1,785 blocks) but not at the
    peaks, so it preempts (327 times, seed 0) and the queue's TTFT grows to seconds.
    """
    workload = Workload()
    trace = generate_requests(workload)
    if name == "right-sized":
        blocks = blocks_for_no_preemption(max_num_seqs=64, max_request_tokens=trace.prompt_tokens + trace.output_tokens)
    elif name == "too-small":
        blocks = 2000
    else:
        raise ValueError(f"unknown preset {name!r}: use one of {', '.join(PRESETS)}")
    return workload, ServerConfig(num_blocks=blocks, max_num_seqs=64)


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
    prefilled again after recompute preemptions.
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
    """A finished simulation: the timeline, every request's outcome, and the pool it ran on."""

    timeline: Timeline
    requests: RequestOutcomes
    num_blocks: int
    block_size: int
    preemption_mode: str


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
    the same inputs give the same result. Raises ValueError when one request at
    full length needs more blocks than the pool has (vLLM refuses to start then).

    >>> trace = Requests(arrival_s=[0.0], prompt_tokens=[20], output_tokens=[3])
    >>> result = simulate(trace, ServerConfig(num_blocks=2))
    >>> result.requests.generated_tokens.tolist(), result.timeline.used_blocks.tolist()
    ([3], [2, 2])
    """
    n = len(requests)
    bs = server.block_size
    budget = server.max_num_batched_tokens
    swap = server.preemption_mode == "swap"
    arrival = requests.arrival_s
    output = requests.output_tokens
    longest = int(((requests.prompt_tokens + output - 1 + bs - 1) // bs).max())
    if longest > server.num_blocks:
        raise ValueError(
            f"the longest request needs {longest} blocks at full length but the pool has {server.num_blocks}: "
            "give more blocks or a shorter max_model_len (vLLM refuses to start in this case)"
        )

    tokens = requests.prompt_tokens.copy()  # prompt + generated
    computed = np.zeros(n, dtype=np.int64)  # tokens whose K and V are in the cache
    generated = np.zeros(n, dtype=np.int64)
    held = np.zeros(n, dtype=np.int64)  # blocks on the GPU
    cpu_blocks = np.zeros(n, dtype=np.int64)  # blocks swapped out to CPU memory
    preempted = np.zeros(n, dtype=np.int64)
    recomputed = np.zeros(n, dtype=np.int64)
    first_token = np.full(n, np.nan)
    last_token = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    gap_sum = np.zeros(n)
    gap_sq_sum = np.zeros(n)
    gap_max = np.zeros(n)

    waiting: deque[int] = deque()
    running: list[int] = []
    rows: list[tuple[float, int, int, int, int, int, int, int]] = []
    now = 0.0
    free = server.num_blocks
    next_arrival = 0
    finished = 0
    total_preemptions = 0
    swapped_count = 0

    while finished < n:
        while next_arrival < n and arrival[next_arrival] <= now:
            waiting.append(next_arrival)
            next_arrival += 1
        if not running and not waiting:
            now = float(arrival[next_arrival])
            continue

        ids = np.array(running, dtype=np.int64)
        steps = 1
        moved = 0
        if fast_forward and running:
            steps = _decode_run_length(
                ids, waiting, server, tokens, computed, generated, held, output, free, now, arrival, next_arrival
            )
        if steps > 1:
            # A run of identical decode steps: one token for every running request per step.
            context0 = int(computed[ids].sum())
            durations = step_time_s(
                server, scheduled_tokens=ids.size, context_tokens=context0 + ids.size * np.arange(1, steps + 1)
            )
            first_gap = now + float(durations[0]) - last_token[ids]
            rest = durations[1:]
            gap_sum[ids] += first_gap + float(rest.sum())
            gap_sq_sum[ids] += first_gap**2 + float((rest**2).sum())
            gap_max[ids] = np.maximum(np.maximum(gap_max[ids], first_gap), float(rest.max()))
            now += float(durations.sum())
            computed[ids] += steps
            tokens[ids] += steps
            generated[ids] += steps
            last_token[ids] = now
            need = np.maximum((computed[ids] + bs - 1) // bs - held[ids], 0)
            held[ids] += need
            free -= int(need.sum())
            scheduled_tokens = ids.size * steps
            done = ids[generated[ids] == output[ids]]
        else:
            sched_ids: list[int] = []
            sched_new: list[int] = []
            preempted_now = False
            left = budget
            if running:
                new = tokens[ids] - computed[ids]
                need = np.maximum((computed[ids] + new + bs - 1) // bs - held[ids], 0)
                if int(new.sum()) <= left and int(need.sum()) <= free:
                    held[ids] += need
                    free -= int(need.sum())
                    sched_ids, sched_new = running[:], new.tolist()
                    left -= int(new.sum())
                else:
                    index = 0
                    while index < len(running) and left > 0:
                        rid = running[index]
                        c = int(computed[rid])
                        count = min(int(tokens[rid]) - c, left)
                        blocks = max((c + count + bs - 1) // bs - int(held[rid]), 0)
                        while blocks > free:
                            victim = running.pop()
                            preempted_now = True
                            total_preemptions += 1
                            preempted[victim] += 1
                            free += int(held[victim])
                            if swap:
                                cpu_blocks[victim] = held[victim]
                                moved += int(held[victim])
                                swapped_count += 1
                            else:
                                recomputed[victim] += computed[victim]
                                computed[victim] = 0
                            held[victim] = 0
                            waiting.appendleft(victim)
                            if victim == rid:
                                break
                        else:
                            held[rid] += blocks
                            free -= blocks
                            sched_ids.append(rid)
                            sched_new.append(count)
                            left -= count
                            index += 1
                            continue
                        break
            if not preempted_now:
                while waiting and left > 0 and len(running) < server.max_num_seqs:
                    rid = waiting[0]
                    c = int(computed[rid])
                    count = min(int(tokens[rid]) - c, left)
                    blocks = (c + count + bs - 1) // bs
                    if blocks > free:
                        break
                    waiting.popleft()
                    if cpu_blocks[rid]:
                        moved += int(cpu_blocks[rid])
                        cpu_blocks[rid] = 0
                        swapped_count -= 1
                    held[rid] = blocks
                    free -= blocks
                    running.append(rid)
                    sched_ids.append(rid)
                    sched_new.append(count)
                    left -= count
            scheduled_tokens = budget - left
            done = np.empty(0, dtype=np.int64)
            if sched_ids:
                s_ids = np.array(sched_ids, dtype=np.int64)
                s_new = np.array(sched_new, dtype=np.int64)
                computed[s_ids] += s_new
                now += float(
                    step_time_s(
                        server,
                        scheduled_tokens=scheduled_tokens,
                        context_tokens=int(computed[s_ids].sum()),
                        swapped_blocks=moved,
                    )
                )
                sampled = s_ids[computed[s_ids] == tokens[s_ids]]
                later = sampled[generated[sampled] > 0]
                gap = now - last_token[later]
                gap_sum[later] += gap
                gap_sq_sum[later] += gap**2
                gap_max[later] = np.maximum(gap_max[later], gap)
                first_token[sampled[generated[sampled] == 0]] = now
                generated[sampled] += 1
                tokens[sampled] += 1
                last_token[sampled] = now
                done = sampled[generated[sampled] == output[sampled]]
            elif moved:
                now += float(step_time_s(server, scheduled_tokens=0, context_tokens=0, swapped_blocks=moved))

        used_blocks = server.num_blocks - free  # during the step, before finished requests free theirs
        if done.size:
            finish[done] = now
            free += int(held[done].sum())
            held[done] = 0
            finished += int(done.size)
            gone = set(done.tolist())
            running = [rid for rid in running if rid not in gone]
        while next_arrival < n and arrival[next_arrival] <= now:
            waiting.append(next_arrival)
            next_arrival += 1
        rows.append(
            (
                now,
                steps,
                used_blocks,
                len(running),
                len(waiting),
                swapped_count,
                total_preemptions,
                scheduled_tokens,
            )
        )

    columns = list(zip(*rows, strict=True))
    integer = [np.asarray(column, dtype=np.int64) for column in columns[1:]]
    timeline = Timeline(
        time_s=np.asarray(columns[0], dtype=float),
        steps=integer[0],
        used_blocks=integer[1],
        running=integer[2],
        waiting=integer[3],
        swapped=integer[4],
        preemptions=integer[5],
        scheduled_tokens=integer[6],
    )
    gaps = (generated - 1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_gap = gap_sum / gaps
        itl_std = np.sqrt(np.maximum(gap_sq_sum / gaps - mean_gap**2, 0.0))
    outcomes = RequestOutcomes(
        arrival_s=arrival.copy(),
        prompt_tokens=requests.prompt_tokens.copy(),
        output_tokens=output.copy(),
        first_token_s=first_token,
        finish_s=finish,
        generated_tokens=generated,
        preemptions=preempted,
        recomputed_tokens=recomputed,
        itl_std_s=np.where(gaps > 0, itl_std, np.nan),
        itl_max_s=np.where(gaps > 0, gap_max, np.nan),
    )
    return SimulationResult(
        timeline=timeline,
        requests=outcomes,
        num_blocks=server.num_blocks,
        block_size=bs,
        preemption_mode=server.preemption_mode,
    )


def _decode_run_length(
    ids: np.ndarray,
    waiting: deque[int],
    server: ServerConfig,
    tokens: np.ndarray,
    computed: np.ndarray,
    generated: np.ndarray,
    held: np.ndarray,
    output: np.ndarray,
    free: int,
    now: float,
    arrival: np.ndarray,
    next_arrival: int,
) -> int:
    """How many identical decode steps can run from now without any scheduling decision (1: step normally).

    All of these must hold: every running request is decoding (one token to
    compute, one already generated) and the budget covers them all; the head of
    the waiting queue cannot be admitted (too many running, no budget left, or its
    blocks not free: free blocks only shrink during the run); the run ends at the
    first finish, before the blocks run out, and, when nobody waits, before the
    step that would see the next arrival.
    """
    bs = server.block_size
    count = ids.size
    c = computed[ids]
    if count > server.max_num_batched_tokens or np.any(tokens[ids] - c != 1) or np.any(generated[ids] == 0):
        return 1
    steps = int((output[ids] - generated[ids]).min())
    if steps < 2:
        return 1
    left = server.max_num_batched_tokens - count
    if waiting and count < server.max_num_seqs and left > 0:
        head = waiting[0]
        head_computed = int(computed[head])
        head_count = min(int(tokens[head]) - head_computed, left)
        if (head_computed + head_count + bs - 1) // bs <= free:
            return 1
    h = held[ids]

    def blocks_needed(k: int) -> int:
        return int(np.maximum((c + k + bs - 1) // bs - h, 0).sum())

    if blocks_needed(1) > free:
        return 1
    if blocks_needed(steps) > free:
        low, high = 1, steps  # blocks_needed(low) fits, blocks_needed(high) does not
        while high - low > 1:
            mid = (low + high) // 2
            if blocks_needed(mid) <= free:
                low = mid
            else:
                high = mid
        steps = low
    if not waiting and next_arrival < arrival.size and steps > 1:
        durations = step_time_s(
            server, scheduled_tokens=count, context_tokens=int(c.sum()) + count * np.arange(1, steps)
        )
        # step j + 1 starts after j steps; it must start before the next arrival
        steps = 1 + int(np.searchsorted(np.cumsum(durations), float(arrival[next_arrival]) - now, side="left"))
    return steps
