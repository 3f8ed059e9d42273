"""One setup of the comparison lesson (/compare) and what kvcore says of it, per GPU.

These live outside the lesson's file because a lesson file runs anew at every rerun: classes defined there
would be built again each time (a frozen, slotted dataclass costs about 0.7 ms to make), and a setup's
figures could not be kept between reruns. Every number comes from the kvcore calls /sizing and /decode_speed
make: a server's budget per GPU from the shared defaults (``kvcore.DEFAULT_ASSUMPTIONS``), tensor parallelism
splitting the weights and the KV heads over the GPUs, and the time per token at the datasheet bound
(``kvcore.DEFAULT_MFU``, ``kvcore.DEFAULT_MBU``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import kvcore
import ui

#: The server's view every figure here takes (the one /sizing starts from).
ASSUMPTIONS = kvcore.DEFAULT_ASSUMPTIONS
#: Setups whose figures are kept, per process (a class moving sliders revisits the same ones).
KEPT_SETUPS = 256


@dataclass(frozen=True, slots=True)
class Setup:
    """One side's choices, as its controls give them."""

    model: kvcore.ModelSpec
    gpu: kvcore.GpuSpec
    gpus: int
    weights_dtype: str
    kv_dtype: str
    context_tokens: int
    users: int


@dataclass(frozen=True, slots=True)
class Figures:
    """What kvcore says of one setup, per GPU (bytes, tokens, users, seconds)."""

    usage: kvcore.MemoryBreakdown
    usable_bytes: float
    room_bytes: float
    per_token_bytes: float
    longest_tokens: float
    limit_tokens: int
    users_that_fit: int
    tpot_s: float
    read_bytes: float

    @property
    def fits(self) -> bool:
        return self.usage.fits(self.usable_bytes)


@functools.lru_cache(maxsize=KEPT_SETUPS)
def measured(setup: Setup) -> Figures:
    """kvcore's figures for one setup: /sizing's budget per GPU and /decode_speed's time per token.

    Kept per setup (``KEPT_SETUPS``): a setup is frozen and its model and GPU are frozen specs, so it keys
    the cache as it is, and the figures it returns are frozen too.
    """
    model, tp = setup.model, setup.gpus
    kv_b = kvcore.bytes_per_value(setup.kv_dtype)
    weights_b = kvcore.bytes_per_value(setup.weights_dtype)
    weights = kvcore.model_weights_bytes(model, bytes_per_param=weights_b, tp=tp)
    steps = kvcore.sizing_steps(
        model,
        memory_bytes=setup.gpu.memory_bytes,
        utilization=ASSUMPTIONS.utilization,
        weights_bytes=weights,
        overhead_bytes=ASSUMPTIONS.overhead_bytes,
        concurrency=setup.users,
        bytes_per_value=kv_b,
        tp=tp,
    )
    cache = float(
        kvcore.kv_cache_bytes(
            model, context_tokens=setup.context_tokens, concurrency=setup.users, bytes_per_value=kv_b, tp=tp
        )
    )
    sequence = kvcore.sequence_kv_bytes(model, context_tokens=setup.context_tokens, bytes_per_value=kv_b, tp=tp)
    limit = ui.context_range(model)[1]
    longest = kvcore.max_context_tokens(
        model, kv_pool_bytes=steps.kv_pool_bytes, concurrency=setup.users, bytes_per_value=kv_b, tp=tp,
        limit_tokens=limit,
    )  # fmt: skip
    rates = kvcore.rates_for(
        setup.gpu, weights_dtype=setup.weights_dtype, mfu=kvcore.DEFAULT_MFU, mbu=kvcore.DEFAULT_MBU, gpus=tp
    )
    knobs = {"context_tokens": setup.context_tokens, "kv_bytes_per_value": kv_b, "weight_bytes_per_param": weights_b}
    read = kvcore.decode_bytes_per_step(model, batch=setup.users, gpus=tp, **knobs)
    return Figures(
        usage=kvcore.MemoryBreakdown(
            weights_bytes=weights, kv_cache_bytes=cache, overhead_bytes=ASSUMPTIONS.overhead_bytes
        ),
        usable_bytes=steps.usable_bytes,
        room_bytes=steps.kv_pool_bytes,
        per_token_bytes=steps.bytes_per_token,
        longest_tokens=float(longest),
        limit_tokens=limit,
        users_that_fit=int(kvcore.max_users(kv_pool_bytes=steps.kv_pool_bytes, sequence_bytes=sequence)),
        tpot_s=float(kvcore.tpot_s(model, batch=setup.users, rates=rates, **knobs)),
        read_bytes=float(read.total),
    )
